/* study.h - studies: compares of the Megatron-style baseline against the
 * 7D space over models, platforms, sequence lengths, HBM sizes, CP
 * baselines and sensitivity axes, read from one JSON file, run cell by cell
 * through the search (search/search.h) into one folder, resumable and
 * shardable, and summed up in a Markdown table and a CSV.
 *
 * Files: read.c (the study file, key by key), cells.c (the file expanded
 * into cells, each cell's inputs loaded), files.c (the folder: creating it,
 * copies of the inputs, command.txt), run.c (the cells run as compares,
 * resumed, sharded, a twin's search and simulations shared), explain.c
 * (what makes the 7D best faster), table.c (the rows of study.csv and
 * study.md, which report/study.c writes). */
#ifndef HEPTASIM_STUDY_H
#define HEPTASIM_STUDY_H

#include <stdbool.h>
#include <stdio.h>

#include "../search/search.h"

/* A study (docs/study.md): compares of the two spaces over
 * models, platforms, sequence lengths at a fixed number of tokens per step,
 * HBM sizes, CP baselines and sensitivity axes (one platform key changed at
 * a time), read from one JSON file and run cell by cell into one folder:
 * cells/SLUG.jsonl (records), cells/SLUG.json (compare's summary with the
 * cell's definition), cells/SLUG.html, study.md, study.csv, command.txt
 * and inputs/ (copies of the study, model and platform files). */

typedef struct stdy_cell {
    int index;                    /* position in the study */
    char slug[CFG_PATH_LEN / 2];  /* the file stem of its outputs */
    char model_name[SIM_MAX_PATH + 1], platform_name[SIM_MAX_PATH + 1]; /* as the study names them */
    int devices;                  /* the device count the study sets (0: the platform's) */
    int seq_len;
    long long global_batch;       /* tokens per step / seq_len */
    double hbm_gib;               /* device.hbm_GiB of the cell */
    srch_baseline baseline;
    char axis[CFG_NAME_LEN * 2];  /* sensitivity: the platform key ("" in the main grid) */
    double axis_value;            /* its value in the cell */
    double axis_factor;           /* the factor of the shipped value (0: a value was given) */
    char sets[STDY_MAX_SETS][CFG_NAME_LEN * 3]; /* the cell's --set items: model and platform keys,
                                   * then the study's strategy keys */
    int nsets;
    cfg_strategy base;            /* the search's base: srch_base_strategy with the strategy items */
    unsigned pinned;              /* the keys they pin (srch_pins_of_overrides) */
    cfg_model model;              /* loaded with the items */
    cfg_platform platform;
    cfg_band band;                /* how far to trust its step times (the caller's, val_platform_band;
                                   * zero: unknown) */
} stdy_cell;

typedef struct stdy_study {
    char name[CFG_NAME_LEN];      /* the folder name under results/studies/ */
    char description[CFG_TEXT_LEN];
    char path[CFG_PATH_LEN];      /* the study file */
    int top;                      /* compare's --top */
    eng_symmetry symmetry;        /* compare's --symmetry */
    stdy_cell *cells;       /* the main grid, then the sensitivity cells */
    int ncells, nmain;
} stdy_study;

/* Read and check the study file path, expand it into cells and load every
 * cell's model and platform.  SIM_EINVAL with one line naming the file,
 * the key and the fix; free *out with stdy_free. */
sim_rc stdy_load(const char *path, stdy_study **out, sim_err *err);
void stdy_free(stdy_study *st);

/* The compare command line that runs cell c alone (the same search, the
 * same simulations).  Writes at most cap bytes. */
void stdy_cell_command(const stdy_study *st, const stdy_cell *c, char *out, int cap);

typedef enum stdy_state {
    STDY_NOT_RUN = 0,       /* another shard's */
    STDY_RAN,
    STDY_SKIPPED,           /* finished by an earlier run (resume) */
    STDY_FAILED             /* error holds why; a resume runs it again */
} stdy_state;

typedef struct stdy_row {
    const stdy_cell *cell;
    stdy_state state;
    bool has_megatron, has_best;  /* a simulated best of the side exists */
    srch_candidate megatron, best;
    rpt_speedup speedup;          /* its ratio NaN without both */
    char reason[320];             /* srch_reason of the 7D best over the Megatron-style best */
    char keys[320];               /* the 7D best's keys the baseline lacks, in words */
    double wall_s;
    int simulated, borrowed;      /* the cell's simulations run, and taken from its twin's records */
    int resumed;                  /* taken from its own records (an earlier run) */
    bool search_from_twin;        /* its search was its twin's (srch_result_twin) */
    char error[SIM_ERR_LEN];
} stdy_row;

typedef struct stdy_result {
    stdy_row *rows;         /* one per cell, in the study's order */
    int nrows;
    int ran, skipped, failed;
    double wall_s;
} stdy_result;

/* Writes a finished cell's compare summary doc (a cJSON object) to
 * json_path and the HTML report of its session s titled title to
 * html_path. */
typedef sim_rc (*stdy_write_fn)(void *ctx, const char *json_path, const void *doc, const char *html_path,
                                      const srch_sweep *s, const char *title, sim_err *err);

typedef struct stdy_run_request {
    const stdy_study *study;
    const char *out_dir;          /* the study's folder (created) */
    const char *command;          /* the command line, for command.txt (NULL: none) */
    bool resume;                  /* skip finished cells, resume unfinished ones from their records */
    int shard_index, shard_count; /* this shard's cells: index i % count == index (count <= 1: all) */
    const char *cells;            /* the cells to run: comma-separated shell patterns of their slugs (NULL:
                                   * all); with resume, the others' finished summaries are read too */
    int jobs;                     /* search processes and simulations at once within a cell */
    stdy_write_fn write_cell;
    void *ctx;
    FILE *log;                    /* one line per cell (NULL: none) */
} stdy_run_request;

/* Run the study's cells (this shard's) into rq->out_dir.  A cell that fails
 * (a search error, failed simulations) is reported in its row and the next
 * one runs.  Returns SIM_OK; SIM_EIO for the folder; SIM_EINTR after a
 * signal (the finished cells kept).  Free *out with stdy_result_free
 * (also after a failure). */
sim_rc stdy_run(const stdy_run_request *rq, stdy_result *out, sim_err *err);

/* Whether slug matches one of the comma-separated shell patterns (fnmatch;
 * NULL matches every slug). */
bool stdy_cell_chosen(const char *patterns, const char *slug);
void stdy_result_free(stdy_result *r);

/* Fill row->reason and row->keys from its bests, on platform p. */
void stdy_explain(stdy_row *row, const cfg_platform *p);

/* study.md (rpt_write_study_markdown): the table of the main grid, the
 * sensitivity table, the cells where the 7D best is more than 5 % faster,
 * and each cell's breakdown. */
sim_rc stdy_write_markdown(const char *path, const stdy_study *st, const stdy_result *r,
                                 const char *command, sim_err *err);

/* The rows as a cJSON array (rpt_study_rows_json), for rpt_write_csv
 * with rpt_study_csv_columns. */
void *stdy_rows_json(const stdy_study *st, const stdy_result *r);

#endif
