/* goodput.h - a training run over days on one simulated step: failures,
 * restarts, checkpoints, planned maintenance and stragglers as seeded
 * random processes (GSL), Monte Carlo over seeds.  docs/goodput.md.
 *
 * Times are seconds of wall clock, sizes bytes.  The step times are
 * inputs: the caller simulates them (the runner, with the slow-step cases
 * of gp_straggler_cases), this module never estimates a step.
 *
 * Files: goodput.c (the checkpoint, a trial, the Monte Carlo, the
 * interval search, the progress band), inputs.c (the inputs of a run
 * from a command's options, the slow-step cases). */
#ifndef HEPTASIM_GOODPUT_H
#define HEPTASIM_GOODPUT_H

#include "../config/reliability.h"

#define GP_MAX_SEEDS 100000

/* A checkpoint of the strategy's state, from the memory model. */
typedef struct gp_checkpoint {
    double rank_bytes;   /* weights (no FP8 copies) + optimizer state the largest rank holds */
    double share_bytes;  /* of those, what the rank writes: replicated state is written once */
    double total_bytes;  /* the whole checkpoint: every rank's share */
    double stall_s;      /* training stopped per checkpoint: the write (sync) or the snapshot (async) */
    double persist_s;    /* from the stop to the checkpoint on storage */
    double read_s;       /* reloading it after a restart */
} gp_checkpoint;

/* SIM_OK when p has the storage a checkpoint needs, else SIM_EINVAL with
 * the line gp_checkpoint_of gives (so a search can refuse before it runs). */
sim_rc gp_storage_check(const cfg_platform *p, sim_err *err);

/* The checkpoint of (m, p, s) on p's storage.  SIM_EINVAL with one line
 * when p has no "storage", or async without snapshot_GBps. */
sim_rc gp_checkpoint_of(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, gp_checkpoint *out,
                        sim_err *err);

/* What time is lost to, in the run's accounting (wall = useful + all). */
typedef enum gp_cause {
    GP_LOST_WORK = 0,    /* training since the last checkpoint, redone after a failure */
    GP_RESTARTS,         /* detection, restart and reload after a failure */
    GP_CHECKPOINTS,      /* training stopped for checkpoints */
    GP_MAINTENANCE,      /* planned stops: downtime, restart and reload */
    GP_STRAGGLERS,       /* the slow step's extra time over the uniform step */
    GP_NCAUSES
} gp_cause;
const char *gp_cause_name(gp_cause c);

typedef struct gp_inputs {
    const cfg_reliability *rel;
    int devices, devices_per_node;
    double step_s;                                    /* the uniform step */
    double straggler_step_s[CFG_MAX_REL_STRAGGLERS];  /* the step with one slow part of row i (simulated) */
    bool stragglers_off;                              /* leave the reliability file's stragglers out (flagged) */
    bool approximate;                                 /* a step simulated approximately (--symmetry dp) */
    double tokens_per_step;
    gp_checkpoint ckpt;
    double interval_s;       /* training between checkpoints (whole steps, at least one) */
    double token_budget;     /* > 0: run until these tokens are trained */
    double horizon_s;        /* else: run for this wall clock */
    int seeds;
    unsigned long seed;      /* trial i uses seed + i */
} gp_inputs;

/* One trial (one seed). */
typedef struct gp_trial {
    double wall_s, useful_s, tokens, ettr;
    int interruptions, planned, checkpoints;
    int by_component[CFG_MAX_REL_COMPONENTS];
    double lost_s[GP_NCAUSES];
    double step_s;           /* the step of the run, with its stragglers */
} gp_trial;

typedef struct gp_stats { double mean, p10, p50, p90; } gp_stats;

typedef struct gp_result {
    int seeds;
    gp_stats ettr, days, interruptions, goodput_tokens_per_s;
    double planned_mean;
    double by_component_mean[CFG_MAX_REL_COMPONENTS];
    double lost_mean_s[GP_NCAUSES];
    double failure_rate_per_s;   /* every component's, for this job */
    double young_daly_s;         /* sqrt(2 stall MTBF) */
    double straggler_runs;       /* fraction of the trials with a slow part */
} gp_result;

/* Simulates one trial with seed. */
sim_rc gp_trial_run(const gp_inputs *in, unsigned long seed, gp_trial *out, sim_err *err);
/* Monte Carlo over in->seeds trials. */
sim_rc gp_run(const gp_inputs *in, gp_result *out, sim_err *err);
/* The same, also filling trials[i] (capacity in->seeds) with trial i
 * (seed in->seed + i) when trials is not NULL. */
sim_rc gp_run_trials(const gp_inputs *in, gp_result *out, gp_trial *trials, sim_err *err);

/* {============================================= progress over the run */

/* The steps kept at a wall-clock time: they grow while training, stay
 * flat during checkpoints and recoveries, and fall back to the last
 * checkpoint on storage at a failure (two points at one time). */
typedef struct gp_point { double t_s, steps; } gp_point;
typedef struct gp_mark { double t_s; bool planned; } gp_mark; /* an interruption */
typedef struct gp_path {
    gp_point *points;
    int npoints, cap;
    gp_mark *marks;
    int nmarks, mcap;
} gp_path;
void gp_path_free(gp_path *p);   /* NULL or a zeroed path: nothing */

/* One trial as gp_trial_run, also recording its progress into *path (a
 * zeroed path the caller frees) when path is not NULL. */
sim_rc gp_trial_path(const gp_inputs *in, unsigned long seed, gp_trial *out, gp_path *path, sim_err *err);

/* Tokens trained against wall clock over the trials: at n evenly spaced
 * times from 0 to the longest trial's end, the mean and the 10th and
 * 90th percentiles of the tokens kept, over the first min(seeds,
 * max_trials) trials; first is the path of the first trial (seed
 * in->seed), with its interruptions. */
typedef struct gp_band {
    int n, trials;
    double *t_s, *mean_tokens, *p10_tokens, *p90_tokens;
    gp_path first;
} gp_band;
sim_rc gp_progress_band(const gp_inputs *in, int npoints, int max_trials, gp_band *out, sim_err *err);
void gp_band_free(gp_band *b);

/* }============================================= progress over the run */

/* {============================================= the inputs of a run */

/* What a command asks of the run over days, besides model, platform and
 * strategy (goodput, run --goodput, compare and sweep --objective goodput
 * share it). */
typedef struct gp_options {
    const cfg_reliability *rel;
    double interval_s;       /* training between checkpoints */
    double token_budget;     /* > 0: run to these tokens */
    double horizon_s;        /* else: this wall clock */
    int seeds;
    unsigned long seed;
    bool stragglers_off;
} gp_options;

/* The inputs of the run of strategy s (checked) of m on p with options o:
 * the checkpoint (gp_checkpoint_of), devices, tokens per step; the steps
 * are the caller's to set (step_s, straggler_step_s).  gp_checkpoint_of's
 * errors. */
sim_rc gp_inputs_make(const gp_options *o, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s,
                      gp_inputs *out, sim_err *err);

/* The number of slow-step cases the run needs: the file's straggler rows,
 * 0 with stragglers_off. */
int gp_straggler_count(const gp_options *o);

/* The cases of those slow steps (runner.h's run_case, capacity
 * gp_straggler_count): each a copy of base (model, platform, strategy)
 * whose platform gets one slow part of the row's kind and speed, at an
 * index drawn from o->seed (the same for every strategy of one seed).
 * Simulated, their step times are the inputs' straggler_step_s. */
struct run_case;
void gp_straggler_cases(const gp_options *o, const struct run_case *base, struct run_case *out);

/* }============================================= the inputs of a run */
/* The checkpoint interval with the highest mean ETTR, searched over a
 * geometric grid of n intervals from lo_s to hi_s with the same seeds
 * (common random numbers), refined by a parabola through the best point
 * and its neighbours (in log interval).  *ettr gets the best mean ETTR. */
sim_rc gp_best_interval(const gp_inputs *in, double lo_s, double hi_s, int n, double *best_s, double *ettr,
                        sim_err *err);

#endif
