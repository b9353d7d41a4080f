/* analytic.c - closed-form values of a run, from the same cost model and
 * workload as the simulation but without SimGrid: the surrogate the
 * calibration fits on, and the closed-form gradient sync of runs simulated
 * with fewer data-parallel replicas.
 *
 * Collectives take the uncontended time of the algorithm net runs on their
 * group's layout (net_coll_s), the one the engine plays as flows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/cost.h"
#include "../estimate/estimate.h"
#include "../model/model.h"
#include "../net/net.h"
#include "../workload/workload.h"
#include "internal.h"

/* {========================================================== walks */

typedef struct walker {
    const cfg_platform *p;
    cost_model *cost;
    wl_plan *plan;
    int *members, *count;  /* scratch: wl_world ints, net_supernodes ints (zero) */
} walker;

static void walker_free(walker *w)
{
    wl_plan_free(w->plan);
    cost_free(w->cost);
    free(w->members);
    free(w->count);
    memset(w, 0, sizeof *w);
}

/* Cost model and plan of (m, p, s); p must outlive the walker. */
static sim_rc walker_init(walker *w, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, sim_err *err)
{
    memset(w, 0, sizeof *w);
    w->p = p;
    w->cost = cost_new(p, err);
    if (!w->cost) return SIM_EINVAL;
    sim_rc rc = wl_plan_new(m, p, s, w->cost, &w->plan, err);
    if (rc != SIM_OK) {
        walker_free(w);
        return rc;
    }
    int world = wl_world(w->plan);
    w->members = sim_xcalloc((size_t)world, sizeof *w->members);
    w->count = sim_xcalloc((size_t)net_supernodes(p), sizeof *w->count);
    return SIM_OK;
}

/* Seconds of one main-stream instruction when nothing waits: compute, or a
 * blocking collective (net's time on its group's layout); asynchronous
 * ones, sends and receives cost 0 here. */
static double instr_s(const walker *w, int rank, const wl_instr *in)
{
    if (in->op == WL_COMPUTE) return in->seconds;
    if (in->op != WL_COLL || in->stream != WL_S_MAIN) return 0.0;
    int me = 0, n = wl_group_members(w->plan, rank, (wl_group)in->group, w->members, &me);
    net_layout lo;
    net_layout_of(w->p, w->members, n, me, w->count, &lo);
    return net_coll_s(w->p, &lo, (net_coll)in->coll, in->bytes);
}

sim_rc val_tail_s(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, double *tail, sim_err *err)
{
    walker w;
    sim_rc rc = walker_init(&w, m, p, s, err);
    if (rc != SIM_OK) return rc;
    int world = wl_world(w.plan);
    for (int st = 0; st < s->pp; st++) tail[st] = -1.0;
    for (int rank = 0; rank < world; rank++) {
        int st = wl_stage(w.plan, rank);
        if (tail[st] >= 0) continue;
        double t = 0.0;
        wl_program *prog = wl_program_new(w.plan, rank);
        wl_instr in;
        while (wl_program_next(prog, &in))
            if (in.phase == WL_PH_GRAD_SYNC || in.phase == WL_PH_OPTIMIZER) t += instr_s(&w, rank, &in);
        wl_program_free(prog);
        tail[st] = t;
    }
    walker_free(&w);
    return SIM_OK;
}

/* Forward and backward (recompute included) seconds of layer L of rank 0's
 * first micro-batch. */
static sim_rc layer_times(const val_run *r, const cfg_platform *p, double *fwd, double *bwd, sim_err *err)
{
    walker w;
    sim_rc rc = walker_init(&w, &r->model, p, &r->strategy, err);
    if (rc != SIM_OK) return rc;
    *fwd = *bwd = 0.0;
    wl_program *prog = wl_program_new(w.plan, 0);
    wl_instr in;
    while (wl_program_next(prog, &in)) {
        if (in.layer != r->probe_layer || in.micro > 0) continue;
        double t = instr_s(&w, 0, &in);
        if (in.phase == WL_PH_FORWARD)
            *fwd += t;
        else if (in.phase == WL_PH_BACKWARD || in.phase == WL_PH_RECOMPUTE)
            *bwd += t;
    }
    wl_program_free(prog);
    walker_free(&w);
    return SIM_OK;
}

/* }========================================================== */

void val_step_metrics(const val_case *c, val_run *r, double step_time_s)
{
    int world = cfg_world_size(&r->strategy);
    r->value[VAL_STEP_TIME_S] = step_time_s;
    double f = val_flops_per_step(c->flops, &r->model, r->strategy.global_batch);
    r->value[VAL_TFLOPS_PER_DEVICE] = f / (step_time_s * world) / 1e12;
    r->value[VAL_MFU] =
        mdl_model_flops_per_step(&r->model, r->strategy.global_batch) / (step_time_s * world * r->platform.peak_flops_per_s);
}

bool val_run_fits(const val_run *r)
{
    double cap = cfg_usable_hbm_bytes(&r->platform) / SIM_GIB;
    return !(val_memory_gib(r) > cap);
}

double val_memory_gib(const val_run *r)
{
    mdl_memory mem;
    mdl_peak_memory(&r->model, &r->strategy, &mem);
    return mem.total_bytes / SIM_GIB;
}

sim_rc val_analytic(const val_case *c, const val_run *r, const cfg_platform *p, double *out, sim_err *err)
{
    for (int i = 0; i < VAL_NMETRICS; i++) out[i] = NAN;
    bool layer = false, step = false;
    for (int i = 0; i < r->ncmp; i++) {
        val_metric m = r->cmp[i].metric;
        if (val_metric_is_layer(m)) layer = true;
        if (m == VAL_STEP_TIME_S || m == VAL_TFLOPS_PER_DEVICE || m == VAL_MFU) step = true;
    }
    out[VAL_MEMORY_PEAK_GIB] = val_memory_gib(r);
    if (layer) {
        double f = 0, b = 0;
        sim_rc rc = layer_times(r, p, &f, &b, err);
        if (rc != SIM_OK) return rc;
        out[VAL_LAYER_FORWARD_MS] = f * 1e3;
        out[VAL_LAYER_BACKWARD_MS] = b * 1e3;
        out[VAL_LAYER_TOTAL_MS] = (f + b) * 1e3;
    }
    if (step) {
        est_estimator *e = est_new(&r->model, p, err);
        if (!e) return SIM_EINVAL;
        est_result est;
        sim_rc rc = est_step(e, &r->strategy, &est, err);
        est_free(e);
        if (rc != SIM_OK) return rc;
        val_run tmp = *r;
        val_step_metrics(c, &tmp, est.step_s);
        out[VAL_STEP_TIME_S] = tmp.value[VAL_STEP_TIME_S];
        out[VAL_TFLOPS_PER_DEVICE] = tmp.value[VAL_TFLOPS_PER_DEVICE];
        out[VAL_MFU] = tmp.value[VAL_MFU];
    }
    return SIM_OK;
}
