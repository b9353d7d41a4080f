/* sweep.c - simulate chosen candidates (one child process each, through
 * the runner), rank them (ties by memory), how well the estimate agrees
 * with the simulation, and why one candidate beats another. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "../runner/runner.h"
#include "internal.h"

/* {========================================================== simulation */

typedef struct bridge {
    srch_done_fn done;
    void *ctx;
} bridge;

/* Fill the candidate behind a finished case (in the parent). */
static void case_done(run_case *rc, void *ctx)
{
    bridge *b = ctx;
    srch_candidate *c = rc->user;
    if (rc->rc == SIM_OK) {
        const eng_result *r = &rc->result;
        const eng_rank_stats *st = &r->critical;
        double t = r->step_time_s, devices = cfg_world_size(&c->strategy);
        c->state = SRCH_SIM_DONE;
        c->step_time_s = t;
        c->approximate = r->replicas > 1;
        c->mfu = c->tokens_per_s = 0.0;
        if (t > 0 && isfinite(t)) {
            double flops = mdl_model_flops_per_step(&rc->model, c->strategy.global_batch);
            c->mfu = flops / (t * devices * rc->platform.peak_flops_per_s);
            c->tokens_per_s = (double)c->strategy.global_batch * rc->model.seq_len / t;
        }
        c->optimizer_s = st->compute_by_phase_s[WL_PH_OPTIMIZER];
        c->compute_s = st->compute_s - c->optimizer_s;
        c->bubble_s = st->bubble_s;
        for (int d = 0; d < WL_NDIMS; d++) {
            c->exposed_s[d] = st->exposed_comm_s[d];
            c->comm_s[d] = st->comm_s[d];
        }
        c->error[0] = '\0';
    } else {
        c->state = SRCH_SIM_FAILED;
        sim_strlcpy(c->error, rc->msg[0] ? rc->msg : sim_strerror(rc->rc), sizeof c->error);
    }
    if (b->done) b->done(b->ctx, c);
}

sim_rc srch_simulate(srch_candidate **cands, int n, const cfg_model *m, const cfg_platform *p, int jobs,
                     const eng_options *opt, srch_done_fn done, void *ctx, sim_err *err)
{
    if (n <= 0) return SIM_OK;
    run_case *cases = sim_xcalloc((size_t)n, sizeof *cases);
    for (int i = 0; i < n; i++) {
        cases[i].model = *m;
        cases[i].platform = *p;
        cases[i].strategy = cands[i]->strategy;
        cases[i].user = cands[i];
        cases[i].options = opt;
    }
    bridge b = {done, ctx};
    sim_rc rc = runner_simulate_all(cases, n, jobs, case_done, &b, err);
    free(cases);
    return rc;
}

/* }========================================================== simulation */

void srch_agreement_compute(const srch_candidate *c, int n, srch_agreement *out)
{
    memset(out, 0, sizeof *out);
    out->spearman = NAN;
    out->largest_gap_index = -1;
    double *est = sim_xcalloc((size_t)n + 1, sizeof *est), *sim = sim_xcalloc((size_t)n + 1, sizeof *sim);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].state != SRCH_SIM_DONE || !(c[i].step_time_s > 0)) continue;
        est[k] = c[i].est.step_s;
        sim[k] = c[i].step_time_s;
        double gap = fabs(est[k] - sim[k]) / sim[k];
        if (out->largest_gap_index < 0 || gap > out->largest_gap) {
            out->largest_gap = gap;
            out->largest_gap_index = c[i].index;
        }
        k++;
    }
    out->n = k;
    out->best_index = -1;
    const srch_candidate *best = NULL;
    for (int i = 0; i < n; i++) {
        if (c[i].state != SRCH_SIM_DONE || !(c[i].step_time_s > 0)) continue;
        double e = (c[i].est.step_s - c[i].step_time_s) / c[i].step_time_s;
        out->mean_error += e / k;
        if (!best || e < out->min_error) out->min_error = e;
        if (!best || e > out->max_error) out->max_error = e;
        if (!best || srch_cmp_simulated(&c[i], best) < 0) best = &c[i];
    }
    if (best) { /* its place among these candidates by estimate */
        out->best_index = best->index;
        out->best_estimate_rank = 1;
        for (int i = 0; i < n; i++)
            if (&c[i] != best && srch_cmp_estimate(&c[i], best) < 0) out->best_estimate_rank++;
    }
    if (k >= 2) {
        double *work = sim_xcalloc(2 * (size_t)k, sizeof *work);
        out->spearman = gsl_stats_spearman(est, 1, sim, 1, (size_t)k, work);
        free(work);
    }
    free(est);
    free(sim);
}

void srch_ranking_make(srch_candidate *const *cands, int n, srch_ranking *out)
{
    memset(out, 0, sizeof *out);
    srch_candidate **r = sim_xcalloc((size_t)n + 1, sizeof *r);
    memcpy(r, cands, (size_t)n * sizeof *r);
    /* insertion sort of the pointers: stable, and n is small */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && srch_cmp_simulated(r[j], r[j - 1]) < 0; j--) {
            srch_candidate *t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
    int done = 0;
    while (done < n && r[done]->state == SRCH_SIM_DONE) done++;
    srch_order_ties(r, done, true);
    srch_candidate *flat = sim_xcalloc((size_t)n + 1, sizeof *flat);
    for (int i = 0; i < n; i++) {
        flat[i] = *r[i];
        out->simulated += r[i]->state == SRCH_SIM_DONE;
        out->failed += r[i]->state == SRCH_SIM_FAILED;
    }
    srch_agreement_compute(flat, n, &out->agreement);
    free(flat);
    out->rows = r;
    out->n = n;
}

bool srch_tie(double a_s, double b_s)
{
    double d = fabs(a_s - b_s), lo = fmin(a_s, b_s);
    return d <= SRCH_TIE_ABS_S || d <= SRCH_TIE_REL * lo;
}

/* Peak memory, then index: the order inside a group of ties. */
static bool before_in_tie(const srch_candidate *a, const srch_candidate *b)
{
    if (a->peak_bytes != b->peak_bytes) return a->peak_bytes < b->peak_bytes;
    return a->index < b->index;
}

void srch_order_ties(srch_candidate **rows, int n, bool simulated)
{
    for (int g = 0; g < n;) {
        double lead = simulated ? rows[g]->step_time_s : rows[g]->est.step_s;
        int end = g + 1;
        while (end < n && srch_tie(lead, simulated ? rows[end]->step_time_s : rows[end]->est.step_s)) end++;
        for (int i = g + 1; i < end; i++) /* insertion sort of the group */
            for (int j = i; j > g && before_in_tie(rows[j], rows[j - 1]); j--) {
                srch_candidate *t = rows[j];
                rows[j] = rows[j - 1];
                rows[j - 1] = t;
            }
        g = end;
    }
}

void srch_ranking_free(srch_ranking *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* {============================================================= reasons */

/* C_TP..C_PP: ORDER WL_DIM (components() adds the dimension to C_TP) */
enum { C_COMPUTE = 0, C_BUBBLE, C_OPTIMIZER, C_TP, C_CP, C_EP, C_DP, C_PP, NCOMP };
static const char *const comp_names[NCOMP] = {"compute", "bubble", "optimizer", "TP comm",
                                              "CP comm", "EP comm", "DP comm", "PP comm"};

/* Components of a candidate's step, simulated or estimated. */
static void components(const srch_candidate *c, bool simulated, double out[NCOMP])
{
    const double *ex = simulated ? c->exposed_s : c->est.exposed_s;
    out[C_COMPUTE] = simulated ? c->compute_s : c->est.compute_s;
    out[C_BUBBLE] = simulated ? c->bubble_s : c->est.bubble_s;
    out[C_OPTIMIZER] = simulated ? c->optimizer_s : c->est.optimizer_s;
    for (int d = 0; d < WL_NDIMS; d++) out[C_TP + d] = ex[d];
}

/* What the reasons name: strategy keys, and three derived figures (the
 * vpp in effect, the micro-batches, tp), as "key value" text.  A searched
 * key that is not a knob is named by its table row when no knob differs.
 * ORDER KNOB: knob_names follows this order, which is also the order in
 * which a key is named when none of a component's keys differs. */
typedef enum knob {
    K_PP, K_SCHED, K_VPP, K_MB, K_MICROS, K_DP, K_TP, K_TPY, K_SP, K_RING, K_ULY, K_FUSE, K_OVL_CP, K_EP, K_ETP,
    K_ZERO, K_OVL_GRAD, K_OVL_PARAM, K_RECOMP, K_ORDER, NKNOBS
} knob;

/* ORDER KNOB: the strategy keys' names (micro-batches and tp: derived) */
static const char *const knob_names[NKNOBS] = {
    "pp", "schedule", "vpp", "micro_batch", "micro-batches", "dp", "tp", "tp_y", "sequence_parallel", "cp_ring",
    "cp_ulysses", "fuse_tpy_cp", "overlap_cp_comm", "ep", "etp", "zero", "overlap_grad_reduce",
    "overlap_param_gather", "recompute", "order"};

static const cfg_key *knob_row(knob k)
{
    return k == K_VPP || k == K_MICROS || k == K_TP ? NULL : cfg_strategy_key(knob_names[k]);
}

static void knob_text(const cfg_strategy *s, knob k, char *out, int cap)
{
    switch (k) {
    case K_VPP: snprintf(out, (size_t)cap, "%d", s->schedule == CFG_SCHED_INTERLEAVED ? s->vpp : 1); break;
    case K_MICROS: snprintf(out, (size_t)cap, "%d", cfg_micro_batches(s)); break;
    case K_TP: snprintf(out, (size_t)cap, "%d", cfg_tp(s)); break;
    default: {
        const cfg_key *row = (unsigned)k < NKNOBS ? knob_row(k) : NULL;
        if (row)
            cfg_key_text(row, s, out, cap);
        else
            out[0] = '\0';
    }
    }
}

/* The value of a knob as a number (bools 0/1, enums their value; the
 * order 0), for the direction of a change. */
static double knob_value(const cfg_strategy *s, knob k)
{
    switch (k) {
    case K_VPP: return s->schedule == CFG_SCHED_INTERLEAVED ? s->vpp : 1;
    case K_MICROS: return cfg_micro_batches(s);
    case K_TP: return cfg_tp(s);
    case K_ORDER: return 0;
    default: {
        const cfg_key *row = knob_row(k);
        cfg_value v = {0};
        if (row) cfg_key_get(row, s, &v);
        return v.i;
    }
    }
}

/* Whether the knob differs between a and b in a way that changes anything:
 * its text differs and it matters for one of them.  va and vb get the
 * texts. */
static bool knob_differs(const cfg_strategy *a, const cfg_strategy *b, knob k, char *va, char *vb, int cap)
{
    knob_text(a, k, va, cap);
    knob_text(b, k, vb, cap);
    if (strcmp(va, vb) == 0) return false;
    const cfg_key *row = knob_row(k);
    return !row || cfg_key_matters(row, a) || cfg_key_matters(row, b);
}

/* A key that explains a component, and the direction of the change that
 * lowers it: +1 when a larger value in the faster strategy explains the
 * gain, -1 a smaller one, 0 any change. */
typedef struct because {
    knob k;
    int dir;
} because;

#define NBECAUSE 10
#define END {NKNOBS, 0}

/* The keys that explain each component, most telling first (NCOMP: peak
 * memory, for ties). */
static const because explain[NCOMP + 1][NBECAUSE] = {
    [C_COMPUTE] = {{K_RECOMP, -1}, {K_TP, 1}, {K_MB, 1}, {K_SP, 1}, {K_ETP, 1}, END},
    [C_BUBBLE] = {{K_PP, -1}, {K_SCHED, 0}, {K_VPP, 1}, {K_MICROS, 1}, {K_MB, -1}, END},
    [C_OPTIMIZER] = {{K_ZERO, 1}, {K_DP, 1}, {K_TP, 1}, {K_PP, 1}, END},
    [C_TP] = {{K_TP, -1}, {K_TPY, 0}, {K_SP, 0}, {K_ORDER, 0}, {K_MB, 0}, END},
    [C_CP] = {{K_OVL_CP, 1}, {K_RING, -1}, {K_ULY, -1}, {K_FUSE, 1}, {K_ORDER, 0}, END},
    [C_EP] = {{K_EP, 0}, {K_ETP, 0}, {K_ORDER, 0}, END},
    [C_DP] = {{K_OVL_GRAD, 1}, {K_OVL_PARAM, 1}, {K_TP, 1}, {K_PP, 1}, {K_ZERO, -1}, {K_DP, 0}, {K_ORDER, 0}, END},
    [C_PP] = {{K_PP, -1}, {K_VPP, -1}, {K_ORDER, 0}, END},
    [NCOMP] = {{K_ZERO, 1}, {K_RECOMP, 1}, {K_MB, -1}, {K_TP, 1}, {K_PP, 1}, {K_RING, 1}, {K_ULY, 1}, {K_SP, 1},
               {K_SCHED, 0}, END},
};

static bool tp_in_node(const cfg_strategy *s, const cfg_platform *p)
{
    int t = cfg_tp(s);
    return p && t <= p->devices_per_node && p->devices_per_node % t == 0;
}

/* ": key va vs vb" for the key that explains component comp of a's gain
 * over b: the first of the component's keys that changed in the direction
 * that lowers it, else the first that changed at all, else the first knob
 * that differs, else the first searched key that differs; "" when none
 * does. */
static void explain_key(const cfg_strategy *a, const cfg_strategy *b, int comp, const cfg_platform *p, char *out,
                        int cap)
{
    char va[96], vb[96];
    out[0] = '\0';
    knob found = NKNOBS;
    for (int pass = 0; pass < 2 && found == NKNOBS; pass++)
        for (int i = 0; i < NBECAUSE && explain[comp][i].k != NKNOBS && found == NKNOBS; i++) {
            because e = explain[comp][i];
            if (!knob_differs(a, b, e.k, va, vb, sizeof va)) continue;
            double d = knob_value(a, e.k) - knob_value(b, e.k);
            if (pass == 1 || e.dir == 0 || d * e.dir > 0) found = e.k;
        }
    for (int k = 0; k < NKNOBS && found == NKNOBS; k++)
        if (knob_differs(a, b, (knob)k, va, vb, sizeof va)) found = (knob)k;
    if (found != NKNOBS) {
        knob_text(a, found, va, sizeof va);
        knob_text(b, found, vb, sizeof vb);
        if (found == K_TP && tp_in_node(a, p) && !tp_in_node(b, p))
            snprintf(out, (size_t)cap, ": TP inside node, tp %.90s vs %.90s", va, vb);
        else
            snprintf(out, (size_t)cap, ": %s %.90s vs %.90s", knob_names[found], va, vb);
        return;
    }
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) { /* a searched key without a knob */
        if (!k->search) continue;
        cfg_key_text(k, a, va, sizeof va);
        cfg_key_text(k, b, vb, sizeof vb);
        if (strcmp(va, vb) != 0) {
            snprintf(out, (size_t)cap, ": %s %.90s vs %.90s", k->key, va, vb);
            return;
        }
    }
}

void srch_reason(const srch_candidate *a, const srch_candidate *b, const cfg_platform *p, char *out, int cap)
{
    bool simulated = a->state == SRCH_SIM_DONE && b->state == SRCH_SIM_DONE;
    char what[256];
    if (srch_tie(simulated ? a->step_time_s : a->est.step_s, simulated ? b->step_time_s : b->est.step_s)) {
        if (b->peak_bytes - a->peak_bytes > SRCH_TIE_REL * b->peak_bytes) {
            explain_key(&a->strategy, &b->strategy, NCOMP, p, what, sizeof what);
            char ma[32], mb[32];
            snprintf(out, (size_t)cap, "tie; less memory (%s vs %s)%.200s", sim_fmt_bytes(a->peak_bytes, ma, sizeof ma),
                     sim_fmt_bytes(b->peak_bytes, mb, sizeof mb), what);
        } else {
            snprintf(out, (size_t)cap, "tie");
        }
        return;
    }
    double ca[NCOMP], cb[NCOMP];
    components(a, simulated, ca);
    components(b, simulated, cb);
    int best = -1;
    double gain = 0.0;
    for (int k = 0; k < NCOMP; k++)
        if (cb[k] - ca[k] > gain) {
            gain = cb[k] - ca[k];
            best = k;
        }
    if (best < 0) {
        snprintf(out, (size_t)cap, "about even");
        return;
    }
    explain_key(&a->strategy, &b->strategy, best, p, what, sizeof what);
    char g[32];
    snprintf(out, (size_t)cap, "less %s (%s)%.200s", comp_names[best], sim_fmt_time(gain, g, sizeof g), what);
}

/* }============================================================= reasons */
