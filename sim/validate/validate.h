/* validate.h - the simulator held against the outside world: published
 * measurements (validate), efficiencies fitted to them (calibrate), and
 * stored golden results (regress).
 *
 * A published case (results/published/<id>.json) is a model, a platform
 * name, a strategy, the measured figures as the source published them, and
 * one or more runs: a run may change strategy or model keys ("set") and
 * names the figures it is compared on ("compare": metric -> measured
 * value).  Cases marked "loose" (the source leaves settings unstated) are
 * reported apart and never used as calibration targets.  A case that needs
 * what heptasim does not model (its "not_modelled" list, or a model dtype
 * the cost model does not run, such as fp8) is loaded, kept with no runs,
 * and reported as skipped with the reason: never simulated as something
 * else.
 *
 * Files: cases.c (reading case files), measure.c (simulating the runs in
 * child processes, the one-layer probe, data-parallel reduction),
 * analytic.c (the closed-form surrogate used by the fit), stats.c (errors,
 * tables, JSON), fit.c (calibration with GSL nonlinear least squares),
 * calibration.c (its report, JSON and platform file), presets.c (the
 * uncalibrated presets against their calibrated relatives), band.c (the
 * error band of a platform, from its records and its relatives'), golden.c
 * (the regression suite).  stats.c also measures how simulated step times
 * keep the order and the ratios of the measured ones. */
#ifndef HEPTASIM_VALIDATE_H
#define HEPTASIM_VALIDATE_H

#include <stdbool.h>
#include <stdio.h>

#include "../config/config.h"

/* ------------------------------------------------------------ metrics */

/* What a run can be compared on.
 * ORDER VAL_METRIC: the tables marked so follow this order; change them together. */
typedef enum val_metric {
    VAL_STEP_TIME_S = 0,     /* seconds per training step */
    VAL_TFLOPS_PER_DEVICE,   /* the source's FLOPs per step (its formula) / (step * devices), TFLOP/s */
    VAL_MFU,                 /* heptasim's MFU (fraction) */
    VAL_LAYER_FORWARD_MS,    /* one transformer layer, forward, on rank 0, milliseconds */
    VAL_LAYER_BACKWARD_MS,   /* the same layer's backward, recompute included */
    VAL_LAYER_TOTAL_MS,      /* forward + backward */
    VAL_MEMORY_PEAK_GIB,     /* memory of the peak rank, GiB (analytic, no simulation) */
    VAL_NMETRICS
} val_metric;

/* JSON name of a metric ("step_time_s", ...); static. */
const char *val_metric_name(val_metric m);
/* Metric of a JSON name, or -1. */
int val_metric_of(const char *name);
/* Whether the metric needs the one-layer probe (layer_*). */
bool val_metric_is_layer(val_metric m);
/* A value in the unit people read (MFU in %, the rest as stored). */
double val_metric_display(val_metric m, double v);

/* FLOP conventions of the sources, for VAL_TFLOPS_PER_DEVICE.
 * ORDER VAL_FLOPS: the tables marked so follow this order; change them together. */
typedef enum val_flops {
    VAL_FLOPS_HEPTASIM = 0,  /* heptasim's model FLOPs (mdl_model_flops_per_step) */
    VAL_FLOPS_NARAYANAN21,   /* 96 B s l h^2 (1 + s/6h + V/16lh): recompute counted, full attention */
    VAL_FLOPS_MEGATRON_CORE  /* 12 B s l h^2 ((1 + g/a + s/h) + f/h + V/2lh), gated x2 on f */
} val_flops;

/* FLOPs of one step of model m with global batch B in convention f. */
double val_flops_per_step(val_flops f, const cfg_model *m, int global_batch);

/* --------------------------------------------------------------- cases */

/* One measured figure of a run and, once simulated, the simulator's. */
typedef struct val_compare {
    val_metric metric;
    double measured;
    bool derived;            /* computed by the source (or by us) from other figures */
    double simulated;        /* NAN until measured */
    double error;            /* (simulated - measured) / measured; NAN until measured */
} val_compare;

/* How a run was simulated. */
typedef enum val_method {
    VAL_NOT_RUN = 0,
    VAL_FULL,                /* every rank simulated */
    VAL_REDUCED_DP,          /* two data-parallel replicas simulated, the full gradient all-reduce in closed form */
    VAL_ANALYTIC             /* no simulation needed (memory only) */
} val_method;

typedef struct val_run {
    char name[64];
    cfg_model model;
    cfg_platform platform;
    cfg_strategy strategy;   /* checked */
    int probe_layer;         /* layer timed for layer_* metrics (global index) */
    val_compare cmp[VAL_NMETRICS];
    int ncmp;
    /* outcome */
    val_method method;
    int replicas;            /* data-parallel replicas simulated */
    sim_rc rc;
    char msg[SIM_ERR_LEN];
    double value[VAL_NMETRICS];  /* simulated value of every metric computed, NAN otherwise */
    double dp_closed_form_s; /* reduced runs: the closed-form gradient sync + optimizer tail of the critical stage */
    double wall_s;           /* simulator wall time */
} val_run;

typedef struct val_case {
    char path[CFG_PATH_LEN];
    char id[VAL_ID_LEN];
    char group[VAL_ID_LEN];  /* the source, short ("narayanan21-table1") */
    char source[VAL_TEXT_LEN];
    char hardware[CFG_NAME_LEN];
    bool loose;
    char not_modelled[VAL_TEXT_LEN]; /* why the case is skipped ("" = it is simulated); then nruns = 0 */
    val_flops flops;
    double target_mean_abs;  /* the group's targets on |error| (0: none) */
    double target_max_abs;
    int nassumptions;
    char assumptions[VAL_MAX_ASSUMPTIONS][VAL_TEXT_LEN];
    val_run runs[VAL_MAX_RUNS];
    int nruns;
} val_case;

/* How cases are loaded. */
typedef struct val_load_opts {
    cfg_overrides ov;            /* --set items applied on top of every run (after the case's own) */
    const char *platform;        /* -p: replaces the platform of cases on the same device (device.name) */
} val_load_opts;

/* Read one case file into *out (overwritten).  Returns SIM_OK, or
 * SIM_EINVAL with a message naming the file and key. */
sim_rc val_case_load(const char *path, const val_load_opts *o, val_case *out, sim_err *err);

/* The case files of a directory (its .json files, sorted by name) into a
 * new array of paths (free each and the array).  Returns SIM_EINVAL when
 * the directory cannot be read or holds none. */
sim_rc val_list_dir(const char *dir, char ***paths, int *n, sim_err *err);
void val_free_paths(char **paths, int n);

/* ---------------------------------------------------------- simulation */

typedef struct val_sim_opts {
    int jobs;                    /* simulations at once */
    bool full;                   /* never reduce data parallelism */
    void (*progress)(void *ctx, const val_case *c, const val_run *r);
    void *progress_ctx;
} val_sim_opts;

/* Whether run r may be simulated with two data-parallel replicas: the
 * gradient all-reduce comes after the backward pass (no overlap, ZeRO 0,
 * dense model), every supernode holds ranks of one replica only (TP x CP a
 * multiple of the supernode size, dp and pp the outermost dimensions) and
 * the network is not oversubscribed, so replicas share no link except in
 * the all-reduce, which then runs uncontended on the NICs.  why (may be
 * NULL) gets the first condition that fails. */
bool val_reducible(const val_run *r, char *why, int cap);

/* Simulate every run of the n cases (runner_simulate_all, jobs at a time)
 * and fill value[], cmp[].simulated and cmp[].error.  A run that fails
 * keeps rc and msg; the call still returns SIM_OK unless no child process
 * could be started. */
sim_rc val_simulate(val_case *cases, int n, const val_sim_opts *o, sim_err *err);

/* Fill the comparisons of a run from its value[] (errors). */
void val_run_compare(val_run *r);

/* ------------------------------------------------------------ surrogate */

/* The closed-form value of every compared metric of run r (of case c) as if simulated
 * on platform p (same cost model and workload, no contention: layer metrics
 * sum the probe layer's instructions with net's collective times, step
 * metrics use the analytic estimator).  Writes out[VAL_NMETRICS]
 * (NAN where not computed).  Returns SIM_OK or the error of the cost model
 * or workload. */
sim_rc val_analytic(const val_case *c, const val_run *r, const cfg_platform *p, double *out, sim_err *err);

/* ---------------------------------------------------------------- stats */

/* How well simulated step times keep the order and the ratios of the
 * measured ones, over a set of comparisons (stats.c). */
typedef struct val_step_rank {
    int n;                       /* step-time comparisons with a value */
    double rank_correlation;     /* Spearman's rho of simulated vs measured (NAN: fewer than 3) */
    double pair_error;           /* rms over ordered pairs of the error of the simulated ratio of two step
                                  * times, (1 + e_i) / (1 + e_j) - 1 (NAN: fewer than 2) */
} val_step_rank;

/* val_step_rank over the step times of the cases of group (with that
 * loose flag), or of every non-loose case when group is NULL. */
void val_step_ranks(const val_case *cases, int n, const char *group, bool loose, val_step_rank *out);

typedef struct val_group_stats {
    char group[VAL_ID_LEN];
    bool loose;
    int n;                       /* comparisons with a value */
    int failed;                  /* comparisons whose run failed */
    int skipped;                 /* cases not modelled (not simulated, no comparison) */
    double mean_abs, max_abs, mean_signed;
    char worst[VAL_ID_LEN + 64]; /* "case/run metric" of the largest |error| */
    double target_mean_abs, target_max_abs;
    bool target_met;             /* false also when some run failed */
    val_step_rank steps;         /* how its step times hold their order and ratios */
} val_group_stats;

/* Statistics per group (targets and loose cases apart), in the order groups
 * first appear.  Returns how many were written (at most cap). */
int val_group_stats_compute(const val_case *cases, int n, val_group_stats *out, int cap);

/* Whether a case simulates a mixture-of-experts model (one of its runs). */
bool val_case_moe(const val_case *c);

/* val_group_stats_compute over the mixture-of-experts cases alone (the
 * figures of a source's MoE runs, apart from its dense ones; skipped cases,
 * which load no model, are not counted). */
int val_moe_group_stats(const val_case *cases, int n, val_group_stats *out, int cap);

/* The groups as a cJSON array (the "groups" of val_to_json). */
void *val_groups_json(const val_group_stats *g, int ng);

/* The per-comparison table and the per-group summary. */
void val_print_table(FILE *f, const val_case *cases, int n);
void val_print_groups(FILE *f, const val_group_stats *g, int ng);

/* The whole validation as a cJSON tree the caller deletes (void*: no
 * cJSON.h here). */
void *val_to_json(const val_case *cases, int n, const val_group_stats *g, int ng);

/* Every comparison of the cases as a flat cJSON array the caller deletes,
 * one object per (case, run, metric) with the keys of val_csv_columns
 * (NULL-ended); a run that failed has one object with its error. */
void *val_comparisons_json(const val_case *cases, int n);
extern const char *const val_csv_columns[];

/* ----------------------------------------------------------- calibration */

/* The free efficiency parameters of a platform.
 * ORDER VAL_PARAM: the tables marked so follow this order; change them together. */
typedef enum val_param {
    VAL_P_GEMM_SCALE = 0,    /* multiplies the GEMM efficiency curve */
    VAL_P_GEMM_TILT,         /* tilts it about its largest point: y_i * (x_i / x_last)^tilt (> 0: small GEMMs slower) */
    VAL_P_ATTENTION,         /* attention efficiency */
    VAL_P_MEMORY,            /* element-wise (HBM) efficiency */
    VAL_P_NETWORK,           /* network efficiency */
    VAL_P_KERNEL_US,         /* kernel overhead, microseconds */
    VAL_P_COLL_STEP_US,      /* collective step latency, microseconds */
    VAL_P_GEMM_FP8_SCALE,    /* multiplies the FP8 GEMM curve (its own, else the one derived from the GEMM curve) */
    VAL_P_OVERLAP_SLOWDOWN,  /* overlap_compute_slowdown: a GEMM beside a TP collective, times its time (>= 1) */
    VAL_P_GROUPED_GEMM_SCALE, /* multiplies the grouped-GEMM curve (its own, else the fitted GEMM curve) */
    VAL_NPARAMS
} val_param;

const char *val_param_name(val_param p);
int val_param_of(const char *name);

/* Parameter values of a base platform: (1, 0, attention, memory, network,
 * kernel_us, step_us). */
void val_params_of(const cfg_platform *base, double v[VAL_NPARAMS]);
/* The platform base with parameters v applied: GEMM efficiencies
 * y_i * scale * (x_i / x_last)^tilt, the other efficiencies and times
 * replaced; efficiencies are capped at 1. */
void val_params_apply(const cfg_platform *base, const double v[VAL_NPARAMS], cfg_platform *out);

typedef struct val_fit_opts {
    unsigned free_mask;          /* bit i: parameter i is fitted */
    int max_passes;              /* simulate-and-refit passes (>= 1) */
    double agree;                /* stop when simulation and surrogate agree within this (relative) */
    bool loo;                    /* leave-one-case-out evaluation afterwards */
    val_sim_opts sim;
    FILE *log;                   /* progress lines (NULL: quiet) */
} val_fit_opts;

typedef struct val_fit_result {
    double value[VAL_NPARAMS];   /* fitted values (fixed ones: the base's) */
    double sigma[VAL_NPARAMS];   /* one standard deviation (0 for fixed ones) */
    unsigned free_mask;
    int passes;                  /* simulation passes done */
    int iterations;              /* GSL iterations of the last fit */
    double rms_before, rms_after;/* rms relative error of the targets, simulated */
    double chisq;                /* sum of squared relative residuals of the last fit (surrogate) */
    int dof;                     /* residuals - free parameters */
    bool converged;              /* simulation agreed with the surrogate */
    double disagreement;         /* largest |sim - surrogate| / measured at the last pass */
    cfg_platform platform;       /* the calibrated platform */
} val_fit_result;

/* Calibrate: simulate the cases on their base platform, fit the free
 * parameters to the non-loose comparisons by nonlinear least squares on
 * relative errors (gsl_multifit_nlinear, trust region Levenberg-Marquardt)
 * using the surrogate scaled by each run's simulated/surrogate ratio,
 * re-simulate at the fit and refit with the new ratios until both agree or
 * max_passes.  On return every run holds its simulation at the final
 * parameters, and `before` (n cases, may be NULL) a copy of the cases as
 * first simulated.  All cases must share one base platform device.  With
 * loo, loo_error[i] (n entries, may be NULL otherwise) gets case i's
 * largest |error| when fitted without it and simulated (NAN for cases not
 * used).  Returns SIM_OK, SIM_EINVAL (nothing to fit, mixed devices) or a
 * fit/simulation error. */
sim_rc val_calibrate(val_case *cases, int n, const val_fit_opts *o, val_case *before, val_fit_result *res,
                     double *loo_error, sim_err *err);

/* Write a platform as a platform file (the schema's keys), with a
 * description.  Returns SIM_EIO with a message when it cannot. */
sim_rc val_write_platform(const char *path, const cfg_platform *p, const char *description, sim_err *err);

/* Keeps the cases that are calibration targets (neither loose nor not
 * modelled) at the front of cases, in order; *loose and *not_modelled get
 * how many were left out.  Returns how many are kept (calibration.c). */
int val_targets_only(val_case *cases, int n, int *loose, int *not_modelled);

/* Leave-one-out errors summarised: over the finite entries of loo (n of
 * them; NULL: none), how many, their mean and their largest |error|. */
typedef struct val_loo_stats {
    int n;
    double mean_abs, max_abs;
} val_loo_stats;

void val_loo_stats_compute(const double *loo, int n, val_loo_stats *out);

/* A finished calibration, as it is reported (the arrays stay the
 * caller's). */
typedef struct val_calibration {
    cfg_platform base;            /* the platform the cases ran on first */
    val_fit_result fit;
    const val_case *before;       /* the n cases as first simulated */
    const val_case *after;        /* the n cases simulated at the fit */
    int n;
    const double *loo;            /* leave-one-out errors (n), NULL without */
} val_calibration;

/* The report: fit summary, parameters with their sigma, warnings about
 * parameters at their bounds (or undetermined), rms errors, the per-case
 * table before and after (and held out), group statistics before and
 * after, the leave-one-out summary. */
void val_print_calibration(FILE *f, const val_calibration *c);

/* The same as a cJSON tree the caller deletes (platform_file, when not
 * NULL, names the calibrated platform file written). */
void *val_calibration_to_json(const val_calibration *c, const char *platform_file);

/* The calibrated platform file: the fitted platform named
 * "<base>-calibrated", with the base platform file's own device count and
 * a description of the fit (val_write_platform). */
sim_rc val_write_calibrated(const char *path, const val_calibration *c, sim_err *err);

/* -------------------------------------------------------------- presets */

/* The figures an uncalibrated preset is compared on (presets.c).
 * ORDER VAL_GAP: gap_names in presets.c. */
typedef enum val_gap {
    VAL_GAP_GEMM = 0,      /* GEMM efficiency at the curve's largest GEMM */
    VAL_GAP_GEMM_FP8,      /* the FP8 curve's (cfg_gemm_fp8_curve) at its largest; none without an FP8 peak */
    VAL_GAP_ATTENTION,
    VAL_GAP_MEMORY,
    VAL_GAP_NETWORK,
    VAL_GAP_KERNEL_US,
    VAL_GAP_COLL_STEP_US,
    VAL_GAP_OVERLAP_SLOWDOWN,
    VAL_NGAPS
} val_gap;

/* JSON name of a compared figure ("gemm", ...); static. */
const char *val_gap_name(val_gap g);

/* An uncalibrated preset against its nearest calibrated relative: the
 * calibrated platform (a file with a calibration record) whose base chain
 * meets the preset's in the fewest steps from both ends. */
typedef struct val_preset_gap {
    char name[CFG_NAME_LEN];
    char relative[CFG_NAME_LEN]; /* "": no calibrated platform shares its chain */
    char via[CFG_NAME_LEN];      /* the file both chains hold (its stem) */
    int distance;                /* steps along the two chains to it; -1 without a relative */
    double ratio[VAL_NGAPS];     /* preset's figure / relative's (NAN: none, or without a relative) */
} val_preset_gap;

/* Every uncalibrated preset of the platform directory dir (sorted by file
 * name) into out (at most cap).  Returns their count, or -1 with the
 * message of a preset that does not load. */
int val_preset_gaps(const char *dir, val_preset_gap *out, int cap, sim_err *err);
/* The table: one line per preset, the ratios as "1.02x". */
void val_print_preset_gaps(FILE *f, const val_preset_gap *g, int n);
/* The same as a cJSON array the caller deletes. */
void *val_preset_gaps_json(const val_preset_gap *g, int n);

/* ---------------------------------------------------------------- bands */

/* How far to trust results on platform p (loaded from its file, with any
 * --set): its error band by the rule of band.c (docs/validation.md),
 * against the platform files of dir for an uncalibrated p.  Returns SIM_OK,
 * or the message of a platform file that does not load. */
sim_rc val_platform_band(const cfg_platform *p, const char *dir, cfg_band *out, sim_err *err);

/* The band of every platform file of dir (sorted by file name). */
typedef struct val_preset_band {
    char name[CFG_NAME_LEN];
    cfg_band band;
} val_preset_band;

/* Into out (at most cap); returns their count, or -1 with the message of
 * a file that does not load. */
int val_preset_bands(const char *dir, val_preset_band *out, int cap, sim_err *err);
/* The table validate prints: platform, kind, band, ratio error, relative. */
void val_print_preset_bands(FILE *f, const val_preset_band *b, int n);
/* The same as a cJSON array the caller deletes. */
void *val_preset_bands_json(const val_preset_band *b, int n);

/* -------------------------------------------------------------- regress */

/* One golden scenario (results/golden/<name>.json): inputs and the stored
 * metrics with their tolerances. */
typedef struct val_golden val_golden;

/* Read a scenario file; *out is freed with val_golden_free.  Returns
 * SIM_EINVAL with a message naming the file and key. */
sim_rc val_golden_load(const char *path, val_golden **out, sim_err *err);
void val_golden_free(val_golden *g);
const char *val_golden_name(const val_golden *g);

typedef struct val_regress_opts {
    int jobs;
    bool bless;                  /* rewrite the stored metrics instead of comparing */
    bool quiet;
    FILE *out;                   /* the report (NULL: stdout) */
} val_regress_opts;

/* Simulate the n scenarios and compare each stored metric within its
 * tolerance (or, with bless, store the new values in the files).  *moved
 * gets the number of metrics outside their tolerance (0 with bless);
 * *json (may be NULL) a cJSON tree of the comparison the caller deletes.
 * Returns SIM_OK when every scenario ran (and was written, with bless). */
sim_rc val_regress(val_golden **g, int n, const val_regress_opts *o, int *moved, void **json, sim_err *err);

#endif
