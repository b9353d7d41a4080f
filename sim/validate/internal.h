/* internal.h - what the validation files share and nobody else needs. */
#ifndef HEPTASIM_VALIDATE_INTERNAL_H
#define HEPTASIM_VALIDATE_INTERNAL_H

#include <cjson/cJSON.h>

#include "../cost/cost.h"
#include "../workload/workload.h"
#include "validate.h"

/* Read a JSON file into a cJSON tree the caller deletes.  Returns SIM_EINVAL
 * ("<path>: cannot read ...", "<path>: not JSON near ...") on failure. */
sim_rc val_read_json(const char *path, cJSON **out, sim_err *err);

/* Apply --set style items to JSON objects before they are parsed: not
 * used for --set itself (the config loaders do that), but for a run's or
 * a scenario's "set" object: keys "model.K" go into model, the others into
 * strategy (both duplicated from the originals by the caller). */
sim_rc val_apply_set(const cJSON *set, cJSON *model, cJSON *strategy, const char *origin, const char *where,
                     sim_err *err);

/* Closed-form seconds of the gradient-sync and optimizer phases of one rank
 * of every pipeline stage of (m, p, s): tail[s->pp]. */
sim_rc val_tail_s(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, double *tail, sim_err *err);

/* Peak memory of a run's ranks, GiB (mdl_peak_memory), and whether it
 * fits in the device's usable memory (HBM minus the reserved part). */
double val_memory_gib(const val_run *r);
bool val_run_fits(const val_run *r);

/* Set a run's step metrics from its step time: step time, TFLOP/s in the
 * case's FLOP convention, MFU. */
void val_step_metrics(const val_case *c, val_run *r, double step_time_s);

/* A platform file as the preset comparisons read it: the platform and
 * the real paths of its chain of bases, its own file first (presets.c). */
typedef struct val_preset {
    cfg_platform p;
    int nchain;
    char chain[CFG_MAX_BASES + 1][CFG_PATH_LEN];
} val_preset;

/* Read platform file path (with the overrides ov, may be NULL) into *out. */
sim_rc val_preset_read(const char *path, const cfg_overrides *ov, val_preset *out, sim_err *err);
/* Every platform file of dir, sorted by file name, into *out (the caller
 * frees it).  Returns their count, or -1 with the message of a file that
 * does not load. */
int val_presets_read(const char *dir, val_preset **out, sim_err *err);
/* The calibrated file of all[0..n) whose chain meets me's in the fewest
 * steps from both ends (ties: by name): its index, the steps into
 * *distance and the shared file's index in me's chain into *via; -1 (and
 * *distance -1) when none shares a file with me's chain. */
int val_nearest_calibrated(const val_preset *me, const val_preset *all, int n, int *distance, int *via);

#endif
