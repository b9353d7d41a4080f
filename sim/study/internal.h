/* internal.h - the study module's private parts, shared by its files: the
 * reader of a study file, what the file says before it is expanded into
 * cells, and the folder helpers. */
#ifndef HEPTASIM_STUDY_INTERNAL_H
#define HEPTASIM_STUDY_INTERNAL_H

#include <cjson/cJSON.h>

#include "study.h"

#define STDY_TOP_DEFAULT 4     /* compare's default: the best 4 estimates of each space */

/* {======================================================= reading (read.c) */

/* The reader of one study file: its path and the error. */
typedef struct stdy_reader {
    const char *file;
    sim_err *err;
} stdy_reader;

/* SIM_EINVAL with "FILE: KEY: why" in r->err. */
sim_rc stdy_bad(stdy_reader *r, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A loader's message without the "heptasim: " it leads with on the command
 * line: in a study the file and the key lead instead. */
const char *stdy_loader_says(const char *msg);

/* The JSON of platform file `name` (the caller deletes it), its path in
 * path; NULL, refused at `key`, when it cannot be read. */
cJSON *stdy_platform_json(stdy_reader *r, const char *name, const char *key, char path[CFG_PATH_LEN]);

/* One HBM size: a factor of the platform's hbm_GiB, or GiB. */
typedef struct stdy_hbm_spec {
    bool absolute;
    double v;
} stdy_hbm_spec;

#define STDY_MAX_LIST 64

/* One platform entry: name, device count (0: the platform's), HBM sizes. */
typedef struct stdy_plat_entry {
    char name[SIM_MAX_PATH + 1];
    int devices;
    stdy_hbm_spec hbm[STDY_MAX_LIST];
    int nhbm;
} stdy_plat_entry;

/* One sensitivity axis: a platform key and the values it takes (factors of
 * the platform's value, or values). */
typedef struct stdy_axis {
    char key[CFG_NAME_LEN * 2];
    bool factors;
    double v[STDY_MAX_LIST];
    int n;
} stdy_axis;

/* Everything the file says, before it is expanded into cells. */
typedef struct stdy_spec {
    char models[STDY_MAX_LIST][SIM_MAX_PATH + 1];
    int nmodels;
    stdy_plat_entry plats[STDY_MAX_LIST];
    int nplats;
    long long seqs[STDY_MAX_LIST];
    int nseqs;
    long long tokens;
    srch_baseline cps[2];
    int ncps;
    /* sensitivity */
    bool sens;
    stdy_plat_entry sens_plat;
    char sens_models[STDY_MAX_LIST][SIM_MAX_PATH + 1];
    int nsens_models;
    const char *sens_models_key; /* where they were given: ".sensitivity.models", else ".models" */
    long long sens_seqs[STDY_MAX_LIST];
    int nsens_seqs;
    stdy_axis axes[STDY_MAX_LIST];
    int naxes;
    /* base strategy keys of both sides, as "KEY=VALUE" */
    char strat[STDY_MAX_SETS - 3][CFG_NAME_LEN * 3];
    int nstrat;
} stdy_spec;

/* Read the study file's root object into st (name, description, search)
 * and sp (the rest).  SIM_EINVAL with one line naming the key. */
sim_rc stdy_spec_of(stdy_reader *r, const cJSON *root, stdy_study *st, stdy_spec *sp);

/* }======================================================= reading (read.c) */

/* Expand sp into the cells of st, each cell's model and platform loaded
 * (cells.c).  SIM_EINVAL with one line naming the key. */
sim_rc stdy_cells_of(stdy_reader *r, stdy_study *st, const stdy_spec *sp);

/* The file stem of a name or path: "models/x.json" -> "x" (cells.c). */
void stdy_stem(const char *name, char *out, size_t cap);

/* {======================================================== folder (files.c) */

/* path = dir/name (SIM_EINVAL when too long). */
sim_rc stdy_join(char *out, size_t cap, const char *dir, const char *name, sim_err *err);

/* Create dir and its parents (SIM_EIO naming it when it cannot be, or is
 * not a folder). */
sim_rc stdy_mkdir_p(const char *dir, sim_err *err);

/* inputs/: the study file, and every model and platform file it reads. */
sim_rc stdy_copy_inputs(const stdy_study *st, const char *dir, sim_err *err);

/* command.txt: the command line that regenerates the study. */
sim_rc stdy_write_command(const char *dir, const char *command, sim_err *err);

/* }======================================================== folder (files.c) */

#endif
