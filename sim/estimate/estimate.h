/* estimate.h - the analytic estimator: a second replayer of the workload's
 * programs beside the engine, without contention and without SimGrid,
 * microseconds per candidate.  The search ranks candidates with it;
 * validation takes its step time as the closed form of a run.
 *
 * It walks a one-micro-batch probe program of the workload generator for
 * the per-layer times (compute from the cost model, collectives and
 * point-to-point transfers from net, the engine's own network rule), then
 * closes the pipeline, data-parallel and optimizer phases in closed form.
 * An estimate is never reported as a simulated result. */
#ifndef HEPTASIM_ESTIMATE_H
#define HEPTASIM_ESTIMATE_H

#include "../config/config.h"
#include "../workload/workload.h"

/* Analytic estimate of one step, seconds.  Exposed communication is what the
 * critical stage's main stream waits for, by dimension (wl_dim). */
typedef struct est_result {
    double step_s;
    double compute_s;             /* compute of the critical stage, recompute included, optimizer not */
    double bubble_s;              /* pipeline fill and drain */
    double optimizer_s;
    double exposed_s[WL_NDIMS];   /* tp, cp, ep, dp, pp */
    int critical_stage;
} est_result;

typedef struct est_estimator est_estimator;

/* An estimator for one model and platform (both must outlive it).  Returns
 * NULL and fills err when the platform's cost model cannot be built.  Free
 * with est_free (NULL is a no-op). */
est_estimator *est_new(const cfg_model *m, const cfg_platform *p, sim_err *err);
void est_free(est_estimator *e);

/* Estimate the step of s (which must have passed cfg_check).  Probes of the
 * workload are cached between calls whose strategies differ only in keys
 * without CFG_KF_PROBE (config/keys.h: vpp, schedule, the stage layer
 * counts, zero, the DP overlap switches, grad_reduce_in_bf16 and
 * optimizer_moments).  Returns SIM_OK or the workload's error. */
sim_rc est_step(est_estimator *e, const cfg_strategy *s, est_result *out, sim_err *err);

/* A lower bound of est_step's step time of s, in *floor_s: the work of
 * every layer and edge of the probe of s (built or taken from the cache as
 * est_step does) shared evenly by the pipeline stages, which no schedule,
 * zero stage or overlap switch brings below (DualPipe-V: less the expert
 * all-to-all its overlapped pairs may hide).  est_step of s gives at least
 * this.  A search skips the closed form of a candidate whose bound is
 * already worse than every candidate it keeps.  Returns what est_step
 * would for the probe. */
sim_rc est_floor(est_estimator *e, const cfg_strategy *s, double *floor_s, sim_err *err);

/* Probes built so far (each is one workload plan and program walk). */
long long est_probes(const est_estimator *e);

/* {=================================================== replay */

/* The contention-free replay (replay.c): every rank's program played with
 * the engine's semantics (streams, waits, sends, receives, the phases net
 * gives each collective played as the engine's flows), each flow alone on
 * its links.  Where no two flows share a link at the same time in the
 * engine, the step time is the engine's (to rounding); elsewhere it is a
 * lower bound of it.  Slower than est_step (it walks every instruction of
 * every rank), far faster than the engine. */

/* What one rank did, seconds (as the engine's eng_rank_stats). */
typedef struct est_rank_stats {
    int rank;
    double finish_s;
    double compute_s;
    double compute_by_phase_s[WL_NPHASES];
    double exposed_comm_s[WL_NDIMS];   /* main stream blocked on comm of that dim (not PP receives) */
    double bubble_s;                   /* main stream blocked in pipeline receives */
    double comm_s[WL_NDIMS];           /* time collectives of that dim were in flight */
} est_rank_stats;

typedef struct est_replay_result {
    double step_s;                     /* the last rank's finish */
    int critical_rank;
    est_rank_stats critical;
    long long instructions;            /* program instructions replayed */
} est_replay_result;

/* Replays one step of w on p into *res.  SIM_OK, or SIM_EINVAL with one
 * line naming the first rank and instruction when the programs are
 * invalid or do not match (a collective some members never join, a
 * receive without its send: a deadlock of the engine). */
sim_rc est_replay_programs(const cfg_platform *p, const wl_programs *w, est_replay_result *res, sim_err *err);
/* The same for plan's programs and groups. */
sim_rc est_replay(const cfg_platform *p, const wl_plan *plan, est_replay_result *res, sim_err *err);

/* }=================================================== */

#endif
