/* measure.c - simulating the runs of published cases: one child process
 * per run (runner_simulate_all), the one-layer probe read from a trace of
 * rank 0, and data-parallel reduction.
 *
 * Reduction: when a run's data-parallel replicas share no link but in the
 * gradient all-reduce, and that all-reduce runs after the backward pass
 * (val_reducible), two replicas are simulated instead of dp (global batch
 * scaled to keep the micro-batches per replica), with one rank per
 * pipeline stage traced.  Two, not one: their all-reduce then loads every
 * NIC with one ring flow each way, as dp replicas do, so pipeline
 * transfers still in flight when a stage starts its all-reduce share the
 * NIC as in the full run.  Each stage ends at the start of its gradient
 * sync in the simulation plus the closed-form time of the full run's
 * gradient sync and optimizer step on that stage (val_tail_s: the
 * uncontended ring over the NICs, which the engine reproduces exactly);
 * the step is the latest stage end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../net/net.h"
#include "../report/report.h"
#include "../runner/runner.h"
#include "internal.h"

/* Replicas kept in a reduced simulation. */
#ifndef VAL_REPLICAS_KEPT
#define VAL_REPLICAS_KEPT 2
#endif

/* What a traced child sends back. */
typedef struct stage_mark {
    double busy_end_s;   /* start of the first gradient-sync or optimizer instruction on the main stream */
    double end_s;        /* end of the rank's last main-stream instruction */
} stage_mark;

typedef struct reply {
    double fwd0, fwd1, bwd0, bwd1;   /* the probe layer's first start and last end, by direction */
    int nstages;
    stage_mark mark[];
} reply;

typedef struct job {
    val_case *c;
    val_run *r;
    bool layer;          /* time the probe layer on rank 0 */
    bool reduced;        /* two data-parallel replicas */
    int *slot;           /* simulated world: the stage of a traced stage representative, else -1 */
    bool *traced;
    double *tail;        /* reduced: closed-form gradient sync + optimizer per stage */
    eng_options opt;
    reply *rep;
    size_t rep_bytes;
} job;

/* Runs in the child: folds each traced instruction into the reply. */
static void on_instr(void *ctx, int rank, const wl_instr *in, int stream, double t0, double t1)
{
    job *j = ctx;
    reply *rp = j->rep;
    if (stream != WL_S_MAIN) return;
    if (j->layer && rank == 0 && in->layer == j->r->probe_layer && in->micro <= 0) {
        if (in->phase == WL_PH_FORWARD) {
            rp->fwd0 = fmin(rp->fwd0, t0);
            rp->fwd1 = fmax(rp->fwd1, t1);
        } else if (in->phase == WL_PH_BACKWARD || in->phase == WL_PH_RECOMPUTE) {
            rp->bwd0 = fmin(rp->bwd0, t0);
            rp->bwd1 = fmax(rp->bwd1, t1);
        }
    }
    int s = j->slot ? j->slot[rank] : -1;
    if (s >= 0) {
        stage_mark *m = &rp->mark[s];
        if ((in->phase == WL_PH_GRAD_SYNC || in->phase == WL_PH_OPTIMIZER) && m->busy_end_s < 0) m->busy_end_s = t0;
        m->end_s = fmax(m->end_s, t1);
    }
}

bool val_reducible(const val_run *r, char *why, int cap)
{
    const cfg_strategy *s = &r->strategy;
    const cfg_platform *p = &r->platform;
    const char *no = NULL;
    int inner = cfg_tp(s) * cfg_cp(s);
    int dps = net_devices_per_supernode(p);
    bool outer = (s->order[CFG_NDIMS - 1] == CFG_DIM_DP && s->order[CFG_NDIMS - 2] == CFG_DIM_PP) ||
                 (s->order[CFG_NDIMS - 1] == CFG_DIM_PP && s->order[CFG_NDIMS - 2] == CFG_DIM_DP);
    if (s->dp <= 1)
        no = "dp is 1";
    else if (s->overlap_grad_reduce)
        no = "the gradient reduction overlaps the backward pass";
    else if (s->zero != 0)
        no = "ZeRO shards the optimizer over the replicas";
    else if (r->model.moe.experts > 0 || s->ep > 1)
        no = "experts are sharded over the replicas";
    else if (inner % dps != 0)
        no = "a supernode holds ranks of several replicas";
    else if (!outer)
        no = "dp and pp are not the outermost dimensions of the rank order";
    else if (p->oversubscription > 1)
        no = "the network is oversubscribed";
    else if (net_tiers(p) > 0)
        no = "the network has tiers above the supernodes";
    if (why && cap > 0) sim_strlcpy(why, no ? no : "", (size_t)cap);
    return no == NULL;
}

void val_run_compare(val_run *r)
{
    for (int i = 0; i < r->ncmp; i++) {
        val_compare *c = &r->cmp[i];
        c->simulated = r->rc == SIM_OK ? r->value[c->metric] : NAN;
        c->error = isfinite(c->simulated) ? (c->simulated - c->measured) / c->measured : NAN;
    }
}

static bool needs_sim(const val_run *r)
{
    for (int i = 0; i < r->ncmp; i++)
        if (r->cmp[i].metric != VAL_MEMORY_PEAK_GIB) return true;
    return false;
}

static bool needs_layer(const val_run *r)
{
    for (int i = 0; i < r->ncmp; i++)
        if (val_metric_is_layer(r->cmp[i].metric)) return true;
    return false;
}

/* Prepares job j and its runner case rc. */
static sim_rc job_init(job *j, run_case *rc, val_case *c, val_run *r, bool full, sim_err *err)
{
    memset(j, 0, sizeof *j);
    memset(rc, 0, sizeof *rc);
    j->c = c;
    j->r = r;
    j->layer = needs_layer(r);
    j->reduced = !full && !j->layer && val_reducible(r, NULL, 0);
    rc->model = r->model;
    rc->platform = r->platform;
    rc->strategy = r->strategy;
    rc->user = j;
    int stages = 0;
    if (j->reduced) {
        int keep = r->strategy.dp < VAL_REPLICAS_KEPT ? r->strategy.dp : VAL_REPLICAS_KEPT;
        rc->strategy.dp = keep;
        rc->strategy.global_batch = r->strategy.global_batch / r->strategy.dp * keep;
        rc->platform.devices = cfg_world_size(&rc->strategy);
        sim_rc e = cfg_check(&rc->model, &rc->platform, &rc->strategy, err);
        if (e != SIM_OK) return e;
        stages = r->strategy.pp;
        j->tail = sim_xcalloc((size_t)stages, sizeof *j->tail);
        e = val_tail_s(&r->model, &r->platform, &r->strategy, j->tail, err);
        if (e != SIM_OK) return e;
    }
    if (!j->layer && !j->reduced) return SIM_OK;

    int world = cfg_world_size(&rc->strategy);
    j->rep_bytes = sizeof(reply) + (size_t)stages * sizeof(stage_mark);
    j->rep = sim_xcalloc(1, j->rep_bytes);
    j->rep->fwd0 = j->rep->bwd0 = INFINITY;
    j->rep->fwd1 = j->rep->bwd1 = -INFINITY;
    j->rep->nstages = stages;
    j->traced = sim_xcalloc((size_t)world, sizeof *j->traced);
    if (j->layer) j->traced[0] = true;
    if (stages > 0) {
        j->slot = sim_xcalloc((size_t)world, sizeof *j->slot);
        for (int i = 0; i < stages; i++) {
            j->rep->mark[i].busy_end_s = -1.0;
            j->rep->mark[i].end_s = 0.0;
        }
        for (int rank = world - 1; rank >= 0; rank--) j->slot[rank] = -1;
        bool *have = sim_xcalloc((size_t)stages, sizeof *have);
        for (int rank = 0; rank < world; rank++) {
            int st = rpt_rank_stage(&rc->strategy, rank);
            if (st < 0 || st >= stages || have[st]) continue;
            have[st] = true;
            j->slot[rank] = st;
            j->traced[rank] = true;
        }
        free(have);
    }
    j->opt.trace = on_instr;
    j->opt.trace_ctx = j;
    j->opt.trace_rank = j->traced;
    rc->options = &j->opt;
    rc->reply = j->rep;
    rc->reply_bytes = j->rep_bytes;
    return SIM_OK;
}

static void job_free(job *j)
{
    free(j->slot);
    free(j->traced);
    free(j->tail);
    free(j->rep);
}

typedef struct sim_ctx {
    const val_sim_opts *o;
} sim_ctx;

/* In the parent, as each child finishes: the run's values from the
 * simulation (and the closed-form tail when reduced). */
static void on_done(run_case *rc, void *ctx)
{
    sim_ctx *sc = ctx;
    job *j = rc->user;
    val_run *r = j->r;
    r->rc = rc->rc;
    r->wall_s = rc->wall_s;
    r->method = j->reduced ? VAL_REDUCED_DP : VAL_FULL;
    r->replicas = j->reduced ? rc->strategy.dp : r->strategy.dp;
    if (rc->rc != SIM_OK) {
        sim_strlcpy(r->msg, rc->msg, sizeof r->msg);
    } else {
        double step = rc->result.step_time_s;
        if (j->reduced) {
            double latest = 0.0;
            for (int s = 0; s < j->rep->nstages; s++) {
                const stage_mark *m = &j->rep->mark[s];
                double busy = m->busy_end_s >= 0 ? m->busy_end_s : m->end_s;
                double end = busy + j->tail[s];
                if (end > latest) {
                    latest = end;
                    r->dp_closed_form_s = j->tail[s];
                }
            }
            step = latest;
        }
        val_step_metrics(j->c, r, step);
        if (j->layer) {
            const reply *rp = j->rep;
            if (!(rp->fwd1 >= rp->fwd0) || !(rp->bwd1 >= rp->bwd0)) {
                r->rc = SIM_EINTERNAL;
                snprintf(r->msg, sizeof r->msg, "%.200s: run '%s': layer %d was not seen on rank 0 (check probe_layer)",
                         j->c->path, r->name, r->probe_layer);
            } else {
                r->value[VAL_LAYER_FORWARD_MS] = (rp->fwd1 - rp->fwd0) * 1e3;
                r->value[VAL_LAYER_BACKWARD_MS] = (rp->bwd1 - rp->bwd0) * 1e3;
                r->value[VAL_LAYER_TOTAL_MS] = r->value[VAL_LAYER_FORWARD_MS] + r->value[VAL_LAYER_BACKWARD_MS];
            }
        }
    }
    val_run_compare(r);
    if (sc->o->progress) sc->o->progress(sc->o->progress_ctx, j->c, r);
}

sim_rc val_simulate(val_case *cases, int n, const val_sim_opts *o, sim_err *err)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += cases[i].nruns;
    job *jobs = sim_xcalloc((size_t)(total ? total : 1), sizeof *jobs);
    run_case *rcs = sim_xcalloc((size_t)(total ? total : 1), sizeof *rcs);
    int nj = 0;
    sim_rc rc = SIM_OK;
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        val_case *c = &cases[i];
        for (int k = 0; k < c->nruns && rc == SIM_OK; k++) {
            val_run *r = &c->runs[k];
            r->rc = SIM_OK;
            r->msg[0] = '\0';
            r->dp_closed_form_s = 0.0;
            for (int m = 0; m < VAL_NMETRICS; m++) r->value[m] = NAN;
            r->value[VAL_MEMORY_PEAK_GIB] = val_memory_gib(r);
            if (!needs_sim(r)) {
                r->method = VAL_ANALYTIC;
                r->replicas = 0;
                val_run_compare(r);
                if (o->progress) o->progress(o->progress_ctx, c, r);
                continue;
            }
            rc = job_init(&jobs[nj], &rcs[nj], c, r, o->full, err);
            nj++;
        }
    }
    if (rc == SIM_OK && nj > 0) {
        sim_ctx sc = {o};
        rc = runner_simulate_all(rcs, nj, o->jobs > 0 ? o->jobs : 1, on_done, &sc, err);
    }
    for (int i = 0; i < nj; i++) job_free(&jobs[i]);
    free(jobs);
    free(rcs);
    return rc;
}
