/* search.c - enumerate a strategy space, prune it by memory, estimate what
 * is left and keep the best candidates (srch_run).
 *
 * The loops nest so that what a check or a probe depends on changes as
 * rarely as possible: validity (cfg_check) is decided per dimension tuple,
 * experts, micro-batch, sequence parallel and schedule; memory per
 * recompute mode, schedule and zero stage; the workload probe per order,
 * fusion and CP overlap.  vpp, zero and the data-parallel overlap switches
 * vary innermost and reuse all three.  Candidates are numbered in that
 * order (their `index`), which is the same on every run with the same
 * inputs.  Only the best `keep` candidates are stored (two bounded heaps:
 * the whole space and its Megatron-style part), so memory does not grow
 * with the size of the space. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

int srch_cmp_estimate(const void *pa, const void *pb)
{
    const srch_candidate *a = pa, *b = pb;
    if (a->est.step_s < b->est.step_s) return -1;
    if (a->est.step_s > b->est.step_s) return 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int sim_class(const srch_candidate *c)
{
    return c->state == SRCH_SIM_DONE ? 0 : c->state == SRCH_SIM_FAILED ? 1 : 2;
}

int srch_cmp_simulated(const void *pa, const void *pb)
{
    const srch_candidate *a = pa, *b = pb;
    int ka = sim_class(a), kb = sim_class(b);
    if (ka != kb) return ka - kb;
    if (ka == 0) {
        if (a->step_time_s < b->step_time_s) return -1;
        if (a->step_time_s > b->step_time_s) return 1;
    }
    if (ka == 2) return srch_cmp_estimate(a, b);
    return (a->index > b->index) - (a->index < b->index);
}

/* {=============================================================== heaps */

/* The best `cap` candidates: a max-heap on (estimate, index), so the root
 * is the worst one kept. */
typedef struct heap {
    srch_candidate *a;
    int n, cap;
} heap;

static bool worse(double est_a, int idx_a, double est_b, int idx_b)
{
    return est_a > est_b || (est_a == est_b && idx_a > idx_b);
}

static void sift_down(heap *h, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, big = i;
        if (l < h->n && worse(h->a[l].est.step_s, h->a[l].index, h->a[big].est.step_s, h->a[big].index)) big = l;
        if (r < h->n && worse(h->a[r].est.step_s, h->a[r].index, h->a[big].est.step_s, h->a[big].index)) big = r;
        if (big == i) return;
        srch_candidate t = h->a[i];
        h->a[i] = h->a[big];
        h->a[big] = t;
        i = big;
    }
}

static void sift_up(heap *h, int i)
{
    while (i > 0) {
        int up = (i - 1) / 2;
        if (!worse(h->a[i].est.step_s, h->a[i].index, h->a[up].est.step_s, h->a[up].index)) return;
        srch_candidate t = h->a[i];
        h->a[i] = h->a[up];
        h->a[up] = t;
        i = up;
    }
}

/* Whether a candidate with this estimate and index would be kept. */
static bool heap_wants(const heap *h, double est, int index)
{
    return h->n < h->cap || worse(h->a[0].est.step_s, h->a[0].index, est, index);
}

static void heap_put(heap *h, const srch_candidate *c)
{
    if (h->n < h->cap) {
        h->a[h->n] = *c;
        sift_up(h, h->n++);
    } else {
        h->a[0] = *c;
        sift_down(h, 0);
    }
}

/* }=============================================================== heaps */

/* The state of one search, shared by the loops. */
typedef struct searcher {
    const srch_request *rq;
    srch_estimator *est;
    srch_result *res;
    heap all, meg;
    double capacity;
    int index;
} searcher;

/* Candidate s (complete, checked) with its peak memory: count, prune,
 * estimate and offer it to the heaps. */
static sim_rc visit(searcher *x, const cfg_strategy *s, double peak_bytes, sim_err *err)
{
    srch_counts *k = &x->res->counts;
    int index = x->index++;
    k->enumerated++;
    if (peak_bytes > x->capacity) {
        k->pruned_memory++;
        return SIM_OK;
    }
    srch_estimate est;
    sim_rc rc = srch_estimate_step(x->est, s, &est, err);
    if (rc != SIM_OK) return rc;
    k->estimated++;
    bool meg = srch_megatron_style(s, x->rq->platform);
    if (meg) k->estimated_megatron++;
    bool want_all = heap_wants(&x->all, est.step_s, index);
    bool want_meg = meg && heap_wants(&x->meg, est.step_s, index);
    if (!want_all && !want_meg) return SIM_OK;
    srch_candidate c;
    memset(&c, 0, sizeof c);
    c.index = index;
    c.space = x->rq->space;
    c.megatron_style = meg;
    c.strategy = *s; /* named in heap_finish: formatting costs more than estimating */
    c.peak_bytes = peak_bytes;
    c.capacity_bytes = x->capacity;
    c.est = est;
    if (want_all) heap_put(&x->all, &c);
    if (want_meg) heap_put(&x->meg, &c);
    return SIM_OK;
}

/* Memory of the peak stage, computed once per (schedule, zero) of the
 * current recompute mode. */
typedef struct mem_table {
    double v[SRCH_MAX_CHOICES][4];
} mem_table;

static double peak_of(mem_table *t, int j, const cfg_model *m, const cfg_strategy *s)
{
    double *slot = &t->v[j][s->zero & 3];
    if (isnan(*slot)) {
        mdl_memory mm;
        mdl_peak_memory(m, s, &mm);
        *slot = mm.total_bytes;
    }
    return *slot;
}

/* Everything below a (dims, ep, etp, micro_batch, sp) choice. */
static sim_rc expand(searcher *x, cfg_strategy *s, sim_err *err)
{
    const srch_request *rq = x->rq;
    const cfg_model *m = rq->model;
    const cfg_platform *p = rq->platform;
    srch_sched sch[SRCH_MAX_CHOICES];
    bool valid[SRCH_MAX_CHOICES];
    int nsch = srch_sched_choices(rq, s, sch), nvalid = 0, first_valid = -1;
    int dp = s->dp;
    for (int j = 0; j < nsch; j++) {
        cfg_strategy c = *s;
        c.schedule = sch[j].schedule;
        c.vpp = sch[j].vpp;
        c.fuse_tpy_cp = false;
        if (!(rq->pinned & SRCH_PIN_DP)) c.dp = 0; /* derived by cfg_check */
        sim_err quiet;
        valid[j] = cfg_check(m, p, &c, &quiet) == SIM_OK && c.dp == dp;
        if (valid[j]) {
            nvalid++;
            if (first_valid < 0) first_valid = j;
        } else {
            x->res->counts.rejected++;
        }
    }
    if (nvalid == 0) return SIM_OK;

    bool fuses[2];
    int nfuse = srch_fuse_choices(rq, s, fuses);
    for (int f = 0; f < nfuse; f++) {
        if (!fuses[f]) continue;
        cfg_strategy c = *s;
        c.schedule = sch[first_valid].schedule;
        c.vpp = sch[first_valid].vpp;
        c.fuse_tpy_cp = true;
        sim_err quiet;
        if (cfg_check(m, p, &c, &quiet) != SIM_OK) {
            x->res->counts.rejected++;
            fuses[f] = fuses[--nfuse]; /* drop it */
            f--;
        }
    }

    cfg_recompute rcs[3];
    int nrc = srch_recompute_choices(rq, rcs);
    for (int r = 0; r < nrc; r++) {
        s->recompute = rcs[r];
        mem_table mt;
        for (int j = 0; j < SRCH_MAX_CHOICES; j++)
            for (int z = 0; z < 4; z++) mt.v[j][z] = NAN;
        for (int f = 0; f < nfuse; f++) {
            s->fuse_tpy_cp = fuses[f];
            bool ocp[2];
            int nocp = srch_overlap_cp_choices(rq, s, ocp);
            for (int oc = 0; oc < nocp; oc++) {
                s->overlap_cp_comm = ocp[oc];
                cfg_dim orders[SRCH_NORDERS][CFG_NDIMS];
                int nord = srch_order_choices(rq, s, orders);
                for (int o = 0; o < nord; o++) {
                    memcpy(s->order, orders[o], sizeof s->order);
                    for (int j = 0; j < nsch; j++) {
                        if (!valid[j]) continue;
                        s->schedule = sch[j].schedule;
                        s->vpp = sch[j].vpp;
                        int zs[4], nz = srch_zero_choices(rq, s, zs);
                        for (int zi = 0; zi < nz; zi++) {
                            s->zero = zs[zi];
                            double peak = peak_of(&mt, j, m, s);
                            bool og[2], op[2];
                            int nog = srch_overlap_grad_choices(rq, s, og);
                            int nop = srch_overlap_param_choices(rq, s, op);
                            for (int a = 0; a < nog; a++) {
                                s->overlap_grad_reduce = og[a];
                                for (int b = 0; b < nop; b++) {
                                    s->overlap_param_gather = op[b];
                                    sim_rc rc = visit(x, s, peak, err);
                                    if (rc != SIM_OK) return rc;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    return SIM_OK;
}

/* FNV-1a, 64 bits, of the text. */
static uint64_t fnv1a(uint64_t h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The fingerprint of what fixes the candidates and their indices: the
 * inputs, and the enumeration's counts, which change with the rules of the
 * space too (a newer simulator may number candidates differently). */
static void inputs_id(const srch_request *rq, const srch_counts *k, char out[17])
{
    uint64_t h = 1469598103934665603ULL;
    cfg_strategy base = rq->base;
    base.name[0] = base.description[0] = base.path[0] = '\0';
    cfg_model model = *rq->model;
    model.description[0] = model.path[0] = '\0';
    cfg_platform platform = *rq->platform;
    platform.description[0] = platform.path[0] = '\0';
    void *trees[3] = {cfg_model_to_json(&model), cfg_platform_to_json(&platform), cfg_strategy_to_json(&base)};
    for (int i = 0; i < 3; i++) {
        char *text = trees[i] ? cJSON_PrintUnformatted(trees[i]) : NULL;
        h = fnv1a(h, text ? text : "?");
        cJSON_free(text);
        cJSON_Delete(trees[i]);
    }
    char tail[128];
    snprintf(tail, sizeof tail, "|%u|%s|%lld|%lld|%lld%s", rq->pinned, srch_space_name(rq->space), k->rejected,
             k->enumerated, k->pruned_memory, rq->replica_reduction ? "|dp" : "");
    h = fnv1a(h, tail);
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void heap_finish(heap *h, srch_candidate **out, int *n, const char *id)
{
    qsort(h->a, (size_t)h->n, sizeof *h->a, srch_cmp_estimate);
    for (int i = 0; i < h->n; i++) {
        cfg_strategy *s = &h->a[i].strategy;
        snprintf(s->name, sizeof s->name, "%s-%d", srch_space_name(h->a[i].space), h->a[i].index);
        srch_strategy_compact(s, s->description, sizeof s->description);
        s->path[0] = '\0';
        sim_strlcpy(h->a[i].inputs_id, id, sizeof h->a[i].inputs_id);
    }
    *out = h->a;
    *n = h->n;
    h->a = NULL;
}

sim_rc srch_run(const srch_request *rq, srch_result **out, sim_err *err)
{
    if (rq->keep < 1) return sim_fail(err, SIM_EINVAL, "heptasim: search: keep must be >= 1");
    if (rq->base.global_batch < 1)
        return sim_fail(err, SIM_EINVAL, "heptasim: search: global batch must be >= 1 (use --global-batch B)");
    double t0 = sim_now_s();
    searcher x;
    memset(&x, 0, sizeof x);
    x.rq = rq;
    x.est = srch_estimator_new(rq->model, rq->platform, err);
    if (!x.est) return SIM_EINVAL;
    x.res = sim_xcalloc(1, sizeof *x.res);
    x.all.cap = x.meg.cap = rq->keep;
    x.all.a = sim_xcalloc((size_t)rq->keep, sizeof *x.all.a);
    x.meg.a = sim_xcalloc((size_t)rq->keep, sizeof *x.meg.a);
    x.capacity = cfg_usable_hbm_bytes(rq->platform);

    srch_dims *dims = NULL;
    int ndims = srch_dims_list(rq, &dims);
    sim_rc rc = SIM_OK;
    for (int i = 0; i < ndims && rc == SIM_OK; i++) {
        if (rq->progress) rq->progress(rq->progress_ctx, i, ndims);
        cfg_strategy s = rq->base;
        s.tp_x = dims[i].tp_x;
        s.tp_y = dims[i].tp_y;
        s.cp_ulysses = dims[i].cp_ulysses;
        s.cp_ring = dims[i].cp_ring;
        s.pp = dims[i].pp;
        s.dp = dims[i].dp;
        if (s.pp != rq->base.pp) s.first_stage_layers = s.last_stage_layers = 0; /* even split */
        int eps[SRCH_MAX_CHOICES], nep = srch_ep_choices(rq, &s, eps);
        for (int a = 0; a < nep && rc == SIM_OK; a++) {
            s.ep = eps[a];
            int etps[2], netp = srch_etp_choices(rq, &s, etps);
            for (int b = 0; b < netp && rc == SIM_OK; b++) {
                s.etp = etps[b];
                int mbs[SRCH_MAX_CHOICES], nmb = srch_mb_choices(rq, &s, mbs);
                for (int c = 0; c < nmb && rc == SIM_OK; c++) {
                    s.micro_batch = mbs[c];
                    bool sps[2];
                    int nsp = srch_sp_choices(rq, &s, sps);
                    for (int d = 0; d < nsp && rc == SIM_OK; d++) {
                        s.sequence_parallel = sps[d];
                        rc = expand(&x, &s, err);
                    }
                }
            }
        }
    }
    if (rq->progress && rc == SIM_OK) rq->progress(rq->progress_ctx, ndims, ndims);
    free(dims);
    x.res->counts.probes = srch_estimator_probes(x.est);
    srch_estimator_free(x.est);
    if (rc != SIM_OK) {
        free(x.all.a);
        free(x.meg.a);
        free(x.res);
        return rc;
    }
    inputs_id(rq, &x.res->counts, x.res->inputs_id);
    heap_finish(&x.all, &x.res->best, &x.res->nbest, x.res->inputs_id);
    heap_finish(&x.meg, &x.res->best_megatron, &x.res->nbest_megatron, x.res->inputs_id);
    x.res->seconds = sim_now_s() - t0;
    *out = x.res;
    return SIM_OK;
}

void srch_result_free(srch_result *r)
{
    if (!r) return;
    free(r->best);
    free(r->best_megatron);
    free(r);
}
