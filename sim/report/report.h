/* report.h - turn results into documents people and programs read:
 * derived metrics (MFU, HFU, tokens/s), the text summary and the JSON
 * document of a run (report.c, run_text.c), the CSV writer (csv.c), the
 * Chrome trace (trace.c, views.c), the HTML reports (html.c,
 * sweep_html.c, svg.c), the ranked table of a search (ranking.c), the
 * text and JSON summaries of sweep, compare and merge (search_text.c,
 * search_json.c), the tornado of heptasim sensitivity (sensitivity.c), a study's
 * study.csv, study.md and cell definitions (study.c), and sweep records:
 * one as JSON and back, and the JSONL files of them, read and appended
 * (records.c).  Other modules hand it rows (the plain structs below, or
 * cJSON objects); it includes no header of the modules that drive
 * simulations (search, study), which call it and map its rows to their
 * own structs.
 *
 * It takes const pointers and never frees what it did not allocate. */
#ifndef HEPTASIM_REPORT_H
#define HEPTASIM_REPORT_H

#include <stdio.h>

#include "../engine/engine.h"
#include "../estimate/estimate.h"
#include "../model/model.h"

typedef struct rpt_run {
    const cfg_model *model;
    const cfg_platform *platform;
    const cfg_strategy *strategy;
    const eng_result *sim;       /* NULL for a memory-only report */
    const est_result *est;       /* an analytic estimate instead of a simulation (sim NULL), or NULL */
    mdl_memory memory;           /* the peak rank */
    int memory_stage;            /* its pipeline stage */
    double wall_s;               /* simulator wall-clock time */
    cfg_overrides overrides;     /* the --set items the inputs were read with (n 0: none) */
    const cfg_band *band;        /* how far to trust its times (val_platform_band), or NULL */
    const struct rpt_goodput *goodput; /* run --goodput: the run over days on the step (report/goodput.h), or NULL */
} rpt_run;

/* A memory-only run of (m, p, s) (s checked): sim NULL, the memory of the
 * peak stage filled in (mdl_peak_memory). */
void rpt_run_init(rpt_run *run, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s);

/* The out-of-memory policy: a strategy is never simulated as if it fitted.
 * SIM_OK when the peak stage of run fits the usable HBM, else SIM_EOOM
 * with the one line naming the stage, both sizes and what to try. */
sim_rc rpt_check_fits(const rpt_run *run, sim_err *err);

/* Metrics derived from a run: of its simulation, else of its estimate
 * (times 0 with neither). */
typedef struct rpt_metrics {
    double step_time_s;
    double model_flops_per_step;
    double hardware_flops_per_step;
    double mfu;                  /* model FLOPs / (step time * devices * peak) */
    double hfu;
    double tokens_per_s;
    double tflops_per_device;    /* model FLOP/s per device, in TFLOP/s */
} rpt_metrics;

void rpt_metrics_compute(const rpt_run *run, rpt_metrics *out);

/* Human-readable summary of a simulated step; of an estimated one
 * (run->est set, sim NULL) with an ESTIMATE line, the estimate's step time
 * and breakdown, each marked as an estimate. */
void rpt_summary(FILE *out, const rpt_run *run);

/* Memory table for `heptasim memory`: one row per pipeline stage with its
 * memory by component, in-flight micro-batches and layer count; under the
 * first line, as rpt_summary, the --set items of ov (NULL: none) and the
 * calibrated preset shipped beside an uncalibrated one. */
void rpt_memory_summary(FILE *out, const cfg_model *m, const cfg_strategy *s, const cfg_platform *p,
                        const cfg_overrides *ov);

/* The strategy as reports name it: its name and its compact form
 * ("gpt-310b-a3-megatron + 2 overrides: dp16 pp16v2 tp8 ..."); s must have
 * passed cfg_check.  Writes at most cap bytes. */
void rpt_strategy_label(const cfg_strategy *s, char *out, int cap);

/* The strategy in the words of the summary's strategy line ("dp 16 x pp 16
 * x tp 8 (1D, SP) | vpp 2 interleaved | mb 1, gb 1024 (64 micro-batches) |
 * ..."), leaving out what does nothing for s (s checked).  Writes at most
 * cap bytes, cut short when longer. */
void rpt_strategy_text(const cfg_strategy *s, char *out, size_t cap);

/* The run as a JSON document with the contract's keys (rpt_write_json_doc,
 * "JSON result").  An estimated run has "estimate": true, step_time_s,
 * mfu, hfu, tokens_per_s and a breakdown of the estimate, and no
 * simulator object. */
sim_rc rpt_write_json(const char *path, const rpt_run *run, sim_err *err);

/* The "accuracy" object of a result (docs/outputs.md): band b's kind,
 * relative_error, speedup_error, calibrated_relative and reason, and the
 * [low, high] ranges it gives step_time_s, mfu and tokens_per_s.  A new
 * cJSON object the caller deletes. */
void *rpt_band_json(const cfg_band *b, double step_time_s, double mfu, double tokens_per_s);

/* The one writer of JSON documents: doc (a cJSON tree; void* keeps cJSON.h
 * out of this header) pretty printed, ending in a newline, to path ("-" is
 * stdout) through a sim_out, so a failure leaves no truncated file and an
 * earlier one intact.  what names the document in messages ("JSON
 * summary").  Returns SIM_OK, SIM_ENOMEM, or SIM_EIO naming the path (or
 * stdout).  doc stays the caller's. */
sim_rc rpt_write_json_doc(const char *path, const void *doc, const char *what, sim_err *err);

/* The --set items of ov as every document names them: "KEY=VALUE" in
 * the order given, comma-separated into out ("" with none; cut at cap);
 * and as a cJSON array of those strings (void*: no cJSON.h here). */
void rpt_overrides_text(const cfg_overrides *ov, char *out, size_t cap);
void *rpt_overrides_json(const cfg_overrides *ov);

/* The one rule for a number of a JSON document: v at key of the cJSON
 * object obj (void*: no cJSON.h here), null when v is not finite (NaN, an
 * infinity), which JSON cannot hold. */
void rpt_json_add_num(void *obj, const char *key, double v);

/* The compact form of the strategy object of a record (a cJSON object;
 * cfg_strategy_compact: "dp16 pp16v2 tp8 sp mb1 sel z1") into out (sweep_html.c);
 * an object that is not a whole strategy gives its description, if any. */
void rpt_record_strategy_text(const void *strategy, char *out, size_t cap);

/* ------------------------------------------------- ranking (ranking.c) */

typedef enum rpt_row_state {
    RPT_ROW_ESTIMATED = 0,  /* not simulated: the estimate is all there is */
    RPT_ROW_SIMULATED,
    RPT_ROW_FAILED          /* the simulation failed: why holds the reason */
} rpt_row_state;

/* One row of a ranked table, as the search hands it over. */
typedef struct rpt_ranked_row {
    int index;                    /* the candidate's place in the enumeration */
    char strategy[300];           /* its compact form, "(+2 alike)" when it stands for alike ones */
    rpt_row_state state;
    double estimate_s;            /* the analytic estimate of the step */
    double step_time_s, mfu;      /* simulated (RPT_ROW_SIMULATED) */
    double peak_bytes;            /* memory of the peak stage */
    char why[SIM_ERR_LEN + 64];   /* why it beats the next row, or the failure */
} rpt_ranked_row;

/* The ranked table on out: a header, then the n rows in their order, the
 * simulated ones ranked 1, 2, ... (the others "-"); the strategy column as
 * wide as its longest entry, at most 72 characters. */
void rpt_print_ranking(FILE *out, const rpt_ranked_row *rows, int n);

/* ------------------------------------------------- records (records.c) */

/* What a read of a JSONL file of records skipped: lines that are not a
 * JSON object (a torn write, a run of NULs after a crash, junk). */
typedef struct rpt_skipped {
    int lines;                    /* lines skipped */
    int first_line;               /* the first of them, 1-based (0: none) */
    int torn;                     /* 1: the last line has no newline (an interrupted write), one of lines */
} rpt_skipped;

/* One sweep record: a candidate of a search as the search hands it over
 * (search maps its candidates to and from these). */
typedef struct rpt_record {
    int index;                    /* the candidate's place in the enumeration of its space */
    const char *space;            /* the name of that space (static: a row of the search's name table) */
    char inputs_id[17];           /* 16 hex digits: the fingerprint of the search's inputs */
    bool megatron_style;
    cfg_strategy strategy;        /* checked */
    est_result est;               /* the analytic estimate */
    rpt_row_state state;
    bool approximate;             /* simulated with one data-parallel replica for all */
    double step_time_s, mfu, tokens_per_s;    /* simulated (RPT_ROW_SIMULATED) */
    double compute_s, bubble_s, optimizer_s;  /* simulated, critical rank */
    double exposed_s[WL_NDIMS];   /* simulated, critical rank, by dimension */
    double comm_s[WL_NDIMS];      /* simulated: time collectives of the dimension were in flight */
    double peak_bytes;            /* memory of the peak stage */
    double capacity_bytes;        /* HBM minus the reserved part */
    char error[SIM_ERR_LEN];      /* RPT_ROW_FAILED: why */
} rpt_record;

/* The record as a JSON object (a cJSON tree the caller deletes): the keys
 * of docs/outputs.md, figures through rpt_json_add_num. */
void *rpt_record_to_json(const rpt_record *r);

/* The record in json (a cJSON object) into *out, strictly: every key
 * known, every figure finite and in range, space one of the nspaces names
 * of spaces (out->space points at it), the strategy read and checked as a
 * strategy file is.  SIM_EINVAL naming origin and the key otherwise. */
sim_rc rpt_record_from_json(const void *json, const char *origin, const sim_enum_name *spaces, int nspaces,
                            rpt_record *out, sim_err *err);

/* Called with each record of a records file and its origin ("a.jsonl:
 * line 3"); anything but SIM_OK ends the read with that error. */
typedef sim_rc (*rpt_record_fn)(void *ctx, const rpt_record *r, const char *origin, sim_err *err);

/* The one reader of a JSONL file of sweep records: every line of the
 * file, NULs or not; a line that is not a JSON object is skipped and
 * counted in *skipped (when not NULL), and so is a last line without its
 * newline; every other line is decoded (rpt_record_from_json, with the
 * space names) and goes to each, in file order.  Returns SIM_EINVAL (a
 * missing or unreadable file, too large, a line that is not a record),
 * each's error, or SIM_OK. */
sim_rc rpt_records_read(const char *path, const sim_enum_name *spaces, int nspaces, rpt_record_fn each, void *ctx,
                        rpt_skipped *skipped, sim_err *err);

/* -------------------- search summaries (search_json.c, search_text.c) */

/* Records in ranked order, alike ones folded by the search's rule:
 * same_as[i] is the position of the row rows[i] is alike to (i itself
 * when none). */
typedef struct rpt_record_list {
    const rpt_record *rows;
    const int *same_as;
    int n;
} rpt_record_list;

/* The agreement of the estimate with the simulation over a ranking. */
typedef struct rpt_agreement {
    int n;                        /* simulated candidates */
    double spearman;              /* rank correlation (NaN: undefined) */
    double largest_gap;           /* largest relative gap of estimate and simulation */
    int largest_gap_index;        /* its candidate (-1: none) */
    double mean_error;            /* mean of (estimate - simulated) / simulated (n >= 1) */
    double min_error, max_error;  /* its range */
    int best_estimate_rank;       /* the simulated best's place in the estimate's order of the
                                   * candidates (1: the estimate's best too; 0: none simulated) */
    int best_index;               /* that candidate (-1: none) */
} rpt_agreement;

/* A sweep's widening with --budget. */
typedef struct rpt_budget {
    double seconds;               /* the budget (0: none asked) */
    int rounds;                   /* rounds of top more simulated */
    int top;                      /* candidates a round adds */
    bool best_held;               /* the last round left the simulated best as it was */
} rpt_budget;

typedef struct rpt_search_counts {
    long long rejected, enumerated, pruned_memory, estimated, estimated_megatron, probes;
    int selected, simulated, failed, resumed, borrowed;
    int records;                  /* merge: records read */
} rpt_search_counts;

/* What a summary document of sweep, compare or merge holds, as the search
 * hands it over (the parts a command does not have left 0 or NULL). */
typedef struct rpt_search_doc {
    const char *command;          /* "sweep", "compare", "merge" */
    const char *model, *platform, *space;
    const cfg_model *resolved_model;       /* sweep, compare: as searched, after the overrides (NULL: merge) */
    const cfg_platform *resolved_platform;
    int devices, global_batch, top;
    rpt_budget budget;            /* sweep */
    int shard_index, shard_count; /* shard_count <= 1: no shard */
    rpt_search_counts counts;
    double search_s, simulate_s;  /* wall times (the "timing" object) */
    int search_processes, jobs;
    bool search_from_twin;
    const char *cache_path;       /* the search cache file the search was taken from (NULL: searched) */
    const rpt_record *megatron, *best; /* compare: both bests (NULL: none) */
    double speedup;               /* compare */
    const char *const *files;     /* merge: the files read */
    int nfiles;
    rpt_agreement agreement;
    rpt_record_list ranking;
    rpt_record_list estimated_only; /* sweep: the next best estimates */
    /* what the text summaries say besides */
    const char *baseline_text;    /* compare: what counts as Megatron-style */
    const char *out_path, *twin_path; /* the records file and the twin's (NULL: none) */
    int best_estimates;           /* sweep: the best estimates the shards share */
    int approximate;              /* simulated with one data-parallel replica for all */
    int ignored;                  /* records of other candidates left in out_path */
    const char *speedup_text;     /* compare: the speedup in words (NULL: none) */
    const cfg_band *band;         /* the platform's error band (NULL: none) */
    bool speedup_exceeds_error;   /* compare with a band: the speedup is above 2 x its pair error (srch_speedup_sure) */
    double usable_hbm_bytes;      /* compare: of a device */
    const rpt_ranked_row *table;  /* the ranked table's rows */
    int ntable;
    const rpt_ranked_row *next_table; /* sweep: the rows of the first next best estimates */
    int nnext;
    cfg_overrides overrides;      /* the --set items of model, platform and base strategy (n 0: none) */
} rpt_search_doc;

/* The JSON summaries (cJSON trees the caller deletes): command, inputs,
 * counts, timing, agreement, ranking, and estimated_only (sweep), both
 * bests and the speedup (compare), files and counts (merge). */
void *rpt_sweep_doc_json(const rpt_search_doc *d);
void *rpt_compare_doc_json(const rpt_search_doc *d);
void *rpt_merge_doc_json(const rpt_search_doc *d);

/* The text summaries (search_text.c) on f: what was searched, simulated
 * and resumed, the ranked table (and the next best estimates, or both
 * bests side by side), the agreement of the estimate with the simulation. */
void rpt_print_sweep(FILE *f, const rpt_search_doc *d);
void rpt_print_compare(FILE *f, const rpt_search_doc *d);
void rpt_print_merge(FILE *f, const rpt_search_doc *d);

/* The records of a, then of b (may be NULL), as one cJSON array with
 * alike and alike_of marked (rpt_write_sweep_html's candidates). */
void *rpt_records_json(const rpt_record_list *a, const rpt_record_list *b);

/* ------------------------------------------------ studies (study.c) */

/* One cell of a study as the study hands it over: a row of study.csv and
 * of study.md.  The strings are the study's, valid for the call. */
/* A compare's speed-up with the platform's error on a ratio of two step
 * times (cfg_band.pair_error), as its summary stores them. */
typedef struct rpt_speedup {
    double ratio;                 /* the Megatron-style step over the 7D step; NaN without both */
    double error;                 /* the rms error of that ratio; NaN: unknown */
    int exceeds;                  /* 1: larger than the error allows (srch_speedup_sure), 0: within, -1: unknown */
} rpt_speedup;

typedef struct rpt_study_row {
    const char *cell;             /* its slug */
    bool sensitivity;             /* a cell of the sensitivity part, not of the main grid */
    const char *model, *platform; /* the names of the cell's model and platform */
    int devices, seq_len;
    long long global_batch;
    double hbm_gib;
    const char *megatron_cp;      /* the baseline's name */
    const char *study_model, *study_platform; /* the stems of the files the study names */
    const char *command;          /* the compare that reruns the cell */
    const char *axis;             /* sensitivity: the platform key ("" in the main grid) */
    double axis_value, axis_factor; /* its value; the factor of the shipped value (0: none) */
    const char *state;            /* "not run", "done", "failed" */
    const rpt_record *megatron, *best; /* done: the two bests (NULL: the side has none) */
    rpt_speedup speedup;          /* done */
    const char *reason, *seven_d_keys; /* done */
    const char *error;            /* failed */
} rpt_study_row;

/* What study.md says above and in its tables. */
typedef struct rpt_study_doc {
    const char *name, *description;
    const char *command;          /* the one that regenerates it (NULL: none) */
    int top;
    const char *symmetry;         /* the engine's: "tp", "dp", "none" */
    const rpt_study_row *rows;    /* in the study's order: main grid, then sensitivity */
    int nrows;
} rpt_study_doc;

/* The rows as a cJSON array (the caller deletes it) of objects with the
 * keys of rpt_study_csv_columns, each best a sweep record (an empty object
 * when there is none), for rpt_write_csv. */
void *rpt_study_rows_json(const rpt_study_row *rows, int n);
extern const char *const rpt_study_csv_columns[];

/* study.md: the main grid, the sensitivity cells, the fast cells and each
 * cell's breakdown.  Written through a sim_out.  SIM_OK or SIM_EIO naming
 * the path. */
sim_rc rpt_write_study_markdown(const char *path, const rpt_study_doc *d, sim_err *err);

/* What defines a study cell, as its summary stores it under "study_cell"
 * and a resume compares it. */
typedef struct rpt_cell_def {
    const char *slug;             /* NULL: left out */
    const cfg_model *model;       /* loaded; description and path left out of the definition */
    const cfg_platform *platform; /* the same */
    long long global_batch;
    const cfg_strategy *base;     /* its fingerprint (cfg_strategy_fingerprint_json) */
    unsigned pinned;
    const char *megatron_cp;      /* the baseline's name (NULL: left out) */
    int top;
    const char *symmetry;
    const char *const *sets;      /* the --set items */
    int nsets;
} rpt_cell_def;

/* The definition as a cJSON object the caller deletes. */
void *rpt_cell_def_json(const rpt_cell_def *d);

/* The bests of a compare summary (rpt_compare_doc_json; a cJSON object):
 * whether each side has one (*has_megatron, *has_best), the records read
 * back strictly (rpt_record_from_json with the space names) and the
 * speedup with its error (NaN and -1 when missing: summaries written
 * before the error bands have none).  SIM_EINVAL naming origin for a bad
 * record. */
sim_rc rpt_compare_doc_bests(const void *doc, const char *origin, const sim_enum_name *spaces, int nspaces,
                             rpt_record *megatron, bool *has_megatron, rpt_record *best, bool *has_best,
                             rpt_speedup *speedup, sim_err *err);

/* A study cell's summary file at path read back, when it is there, holds
 * definition def (a cJSON object, rpt_cell_def_json) under "study_cell"
 * and its bests read (rpt_compare_doc_bests): true.  False otherwise. */
bool rpt_cell_summary_read(const char *path, const void *def, const sim_enum_name *spaces, int nspaces,
                           rpt_record *megatron, bool *has_megatron, rpt_record *best, bool *has_best,
                           rpt_speedup *speedup);

/* One warning line on f for what a read skipped (nothing when none). */
void rpt_skipped_warn(FILE *f, const char *path, const rpt_skipped *sk);

/* Append the record as one JSON line to f and flush it.  Returns SIM_EIO
 * naming path on a write error, SIM_ENOMEM. */
sim_rc rpt_record_append(FILE *f, const char *path, const rpt_record *r, sim_err *err);

/* The one CSV writer (csv.c): a header line of the columns, then one line
 * per object of rows (a cJSON array; void* keeps cJSON.h out of this
 * header) holding the value at each column's dotted key path
 * ("memory.peak_bytes"): numbers in full precision, true/false, strings
 * quoted when they hold a comma, a quote or a line end, empty when missing.
 * Written through a sim_out (no partial file); what names the document in
 * messages.  columns ends with NULL.  SIM_OK or SIM_EIO naming the path. */
sim_rc rpt_write_csv(const char *path, const void *rows, const char *const *columns, const char *what, sim_err *err);

/* The columns of a CSV of sweep records (sweep, compare; NULL-ended,
 * static): index, space, megatron_style, then strategy.KEY for every row of
 * the strategy key table in its order (config/keys.h), then the figures,
 * memory, the ranking's alike and alike_of, and error. */
const char *const *rpt_record_csv_columns(void);

/* Gives every object of the cJSON array rows an "overrides" string, the
 * --set items of ov (rpt_overrides_text: "" with none), the last column of
 * the record and memory CSV tables. */
void rpt_rows_add_overrides(void *rows, const cfg_overrides *ov);

/* The memory of a rank of every pipeline stage (s checked) as a cJSON
 * array the caller deletes, one object per stage with the keys of
 * rpt_memory_csv_columns but the last, overrides (rpt_rows_add_overrides;
 * sizes in bytes). */
void *rpt_memory_stages_json(const cfg_model *m, const cfg_strategy *s, const cfg_platform *p);
extern const char *const rpt_memory_csv_columns[];

/* The same document as a cJSON tree the caller deletes (void* keeps cJSON.h
 * out of this header). */
void *rpt_run_to_json(const rpt_run *run);

/* Time breakdown of the critical rank, in seconds.  compute_s excludes the
 * optimizer phase, which is optimizer_s; exposed_comm_s sums the exposed
 * time of every dimension; other_s = step time - the four others (what no
 * category explains, may be slightly negative).  All 0 when sim is NULL. */
typedef struct rpt_breakdown {
    double compute_s;
    double exposed_comm_s;
    double bubble_s;
    double optimizer_s;
    double other_s;
    int critical_rank;
    int critical_stage;
} rpt_breakdown;

void rpt_breakdown_compute(const rpt_run *run, rpt_breakdown *out);

/* Devices of the run: the strategy's world size, else the platform's count. */
int rpt_devices(const rpt_run *run);

/* Pipeline stage of `rank`: its pp digit in the mixed-radix numbering of the
 * strategy's order (innermost first; ep takes no digit, as it is carved out
 * of dp x cp). */
int rpt_rank_stage(const cfg_strategy *s, int rank);

/* JSON key of a report dimension: "tp", "cp", "ep", "dp", "pp" (static). */
const char *rpt_dim_key(int d);
/* What one simulated rank stood for in sim, for the summary and the HTML
 * report: "one per TP group of 8 (exact)", "one per class of 128 alike
 * ranks, differing in tp_x, dp (exact)", or "" when every rank had an
 * actor. */
void rpt_lockstep_text(const eng_result *sim, char *out, size_t cap);

/* Simulator version string (static). */
const char *rpt_version(void);

/* {========================================================== views */

/* Coordinates of `rank` in the mixed-radix numbering of the strategy's
 * order, indexed by cfg_dim (the ep entry is always 0: ep takes no digit). */
void rpt_rank_coords(const cfg_strategy *s, int rank, int coords[CFG_NDIMS]);

/* The ranks to trace, from a --trace-ranks list: "all", or comma separated
 * ranks and inclusive ranges ("0,5,8-15"); NULL or "" is the default, the
 * first rank of each pipeline stage.  Fills the world-sized array ranks.
 * Returns SIM_EINVAL with a message naming the bad item. */
sim_rc rpt_trace_ranks(const char *list, const cfg_strategy *s, bool *ranks, sim_err *err);

/* A Chrome trace-event file (Perfetto, chrome://tracing) written as the
 * simulation runs: one process per traced rank, one thread per stream,
 * one complete event per instruction that took time.  Memory stays
 * bounded: events go to the file as they come. */
typedef struct rpt_trace rpt_trace;

/* Starts the trace (a sim_out: the file appears at path when closed) and
 * writes its header. s must outlive the trace.  Returns SIM_OK and *out, or
 * SIM_EIO with a message. */
sim_rc rpt_trace_open(const char *path, const cfg_strategy *s, rpt_trace **out, sim_err *err);

/* One completed instruction of a traced rank (times in simulated seconds). */
void rpt_trace_add(rpt_trace *t, int rank, const wl_instr *in, int stream, double start_s, double end_s);

/* Ends the file (run, when not NULL, adds the step time and names to its
 * metadata), moves it to its path and frees t, also on failure.  Returns
 * SIM_EIO with a message if any write failed; the file is then not
 * written.  rpt_trace_close(NULL, ...) returns SIM_OK. */
sim_rc rpt_trace_close(rpt_trace *t, const rpt_run *run, sim_err *err);

/* The pipeline timeline of a few sampled ranks for the HTML report, kept
 * at a fixed resolution (time per category in at most a few thousand
 * buckets per rank, coarsened as the step grows), so memory is bounded by
 * the number of sampled ranks. */
typedef struct rpt_timeline rpt_timeline;

/* Samples the ranks set in the world-sized array ranks, at most
 * RPT_TIMELINE_MAX_RANKS of them (the first ones).  Free with
 * rpt_timeline_free (NULL is fine). s must outlive the timeline. */
rpt_timeline *rpt_timeline_new(const cfg_strategy *s, const bool *ranks);
void rpt_timeline_add(rpt_timeline *tl, int rank, const wl_instr *in, int stream, double start_s, double end_s);
void rpt_timeline_free(rpt_timeline *tl);

/* What the engine's trace callback feeds (views.c); any part may be NULL. */
typedef struct rpt_views {
    rpt_trace *trace;
    rpt_timeline *timeline;
    bool *ranks;                 /* world-sized: the ranks the engine reports (eng_options.trace_rank) */
} rpt_views;

/* Opens the views asked for (each path may be NULL; with neither, v stays
 * empty): ranks from the --trace-ranks list (rpt_trace_ranks), the
 * report's timeline, which samples them (at most RPT_TIMELINE_MAX_RANKS;
 * by default the first rank of each stage, of evenly spaced stages when
 * there are more), after checking report_path can be written so that a
 * long simulation does not end in a write error, and the trace file.
 * Returns SIM_OK, or SIM_EINVAL (the list) or SIM_EIO with nothing left
 * open. */
sim_rc rpt_views_open(rpt_views *v, const cfg_strategy *s, const char *trace_path, const char *trace_ranks,
                      const char *report_path, sim_err *err);

/* Frees the timeline and the ranks (the trace is closed with
 * rpt_trace_close, which reports its write errors). */
void rpt_views_free(rpt_views *v);

/* An eng_trace_fn: ctx is an rpt_views. */
void rpt_views_record(void *ctx, int rank, const wl_instr *in, int stream, double start_s, double end_s);

/* The HTML report of one run: a self-contained file (inline SVG and CSS, no
 * script, no network) with the summary, the pipeline timeline of tl (may be
 * NULL), the step-time breakdown, memory per stage against capacity and the
 * communication time per dimension.  With run->sim NULL (a strategy that
 * does not fit) only the summary and the memory figure.  Returns SIM_EIO
 * with a message if the file cannot be written. */
sim_rc rpt_write_run_html(const char *path, const rpt_run *run, const rpt_timeline *tl, sim_err *err);

/* }========================================================== */

/* What a sweep/compare report says above its figure (any part may be
 * missing). */
typedef struct rpt_sweep_head {
    const char *title;            /* NULL: "heptasim strategy search" */
    bool has_counts;              /* the counts of the whole search below are set */
    long long enumerated, rejected, pruned_memory, estimated, simulated, failed;
    int megatron_index, best_index; /* candidate indices of the best Megatron-style and 7D candidates (-1: none) */
    const char *speedup;          /* the speedup as compare prints it (srch_speedup_text), or NULL */
} rpt_sweep_head;

/* Sweep/compare report: one self-contained HTML file (inline SVG, no
 * network) with the head's lines (what was searched, both bests and the
 * speedup; head may be NULL), a scatter of step time (simulated when
 * present, else the estimate, drawn differently) against peak memory, the
 * Pareto front, Megatron-style and 7D points in two colours, and the ranked
 * table.  candidates is a cJSON array (void* keeps cJSON.h out of this
 * header), in ranked order (the table keeps it, fitting candidates first),
 * of objects with keys index, space, megatron_style (bool), strategy
 * (object), estimate_step_time_s, simulated (bool), step_time_s (when
 * simulated), mfu, memory {peak_bytes, capacity_bytes, fits}, dimensions,
 * alike (how many candidates the row stands for) and alike_of (the index
 * of the row a candidate is folded into: no row, no marker of its own);
 * missing keys are drawn as unknown.  Returns SIM_EIO with a message if
 * the file cannot be written, SIM_EINVAL if candidates is not an array. */
sim_rc rpt_write_sweep_html(const char *path, const void *candidates, const rpt_sweep_head *head, sim_err *err);

/* {========================================================== sensitivity */

/* One perturbed value of a platform figure (heptasim sensitivity). */
typedef struct rpt_sens_point {
    bool applicable;              /* the platform loaded with it and the strategy passed its checks */
    char why[SIM_ERR_LEN];        /* not applicable: the reason */
    double value;                 /* the figure's value in its key's unit (a curve: its scale factor) */
    double estimate_s;            /* the analytic estimate of the step */
    bool simulated;
    double simulated_s;           /* simulated: the engine's step time */
    bool searched;                /* the best strategy searched again on this point's platform */
    char best[CFG_TEXT_LEN];      /* searched: its best by estimate, compact form */
    double best_estimate_s;       /* its estimate */
} rpt_sens_point;

/* One figure, perturbed down (low) and up (high). */
typedef struct rpt_sens_row {
    const char *key;              /* the platform key ("device.hbm_TBps"), static */
    const char *label;            /* "HBM bandwidth", static */
    bool curve;                   /* an efficiency curve: value is a scale factor of every point */
    bool tiers;                   /* a field of every tier of network.tiers: value is its scale factor */
    double value;                 /* the platform's value in the key's unit (a curve: 1) */
    rpt_sens_point low, high;
    double swing;                 /* largest |relative change| of the estimate, for the order */
} rpt_sens_row;

/* The sensitivity document: the base step, the rows in decreasing swing. */
typedef struct rpt_sens_doc {
    const cfg_model *model;
    const cfg_platform *platform;
    const cfg_strategy *strategy;
    const cfg_band *band;         /* may be NULL */
    double step;                  /* the relative step, 0.2 = -20 % / +20 % */
    double estimate_s;            /* the base step's estimate */
    bool simulated;
    double simulated_s;           /* the base step simulated */
    const rpt_sens_row *rows;
    int nrows;
    const char *search_space;     /* the space searched again (NULL: no search) */
    const char *best;             /* the best by estimate on the platform itself, compact form */
    double best_estimate_s;
    double wall_s;
} rpt_sens_doc;

/* The tornado table on f. */
void rpt_sens_print(FILE *f, const rpt_sens_doc *d);
/* The document as a cJSON object (caller deletes); the rows as a cJSON
 * array for rpt_write_csv with rpt_sens_csv_columns. */
void *rpt_sens_json(const rpt_sens_doc *d);
void *rpt_sens_rows_json(const rpt_sens_doc *d);
extern const char *const rpt_sens_csv_columns[];
/* The HTML report: the base step, a tornado chart and the table.  SIM_EIO
 * naming the path when it cannot be written. */
sim_rc rpt_write_sens_html(const char *path, const rpt_sens_doc *d, sim_err *err);

/* }========================================================== */

#endif
