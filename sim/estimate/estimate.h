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
 * workload are cached between calls whose strategies differ only in vpp,
 * schedule, zero and the DP overlap switches.  Returns SIM_OK or the
 * workload's error. */
sim_rc est_step(est_estimator *e, const cfg_strategy *s, est_result *out, sim_err *err);

/* Probes built so far (each is one workload plan and program walk). */
long long est_probes(const est_estimator *e);

#endif
