/* enumerate.c - the strategy space: the values each key takes, the
 * distinct rank orders, the Megatron-style subspace and compact names.
 *
 * The 7D space: every factorisation of the device count into tp_x, tp_y,
 * cp_ulysses, cp_ring, pp (dp derived by cfg_check); ep a divisor of the
 * experts (MoE), etp = tp or 1; micro_batch a power of two up to 16;
 * schedule 1f1b, or interleaved with vpp a divisor (2..8) of the layers of
 * every stage; recompute none | selective | full; zero 0..3; sequence_parallel;
 * the overlap switches that change the workload; fuse_tpy_cp; and up to
 * four rank orders.  GPipe is left out: it has 1F1B's bubble with more
 * activation memory.  overlap_tp_comm changes nothing in the workload, so
 * it keeps the base value.  The Megatron-style space is the subspace tp_y
 * = 1, cp_ulysses = 1, TP inside a node, no fusion.
 *
 * Layers are split evenly over the stages, except that a base strategy with
 * first_stage_layers / last_stage_layers keeps that split for its own pp
 * (the candidates of other pp values split evenly). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_MICRO_BATCH 16
#define MAX_VPP 8

const char *srch_space_name(srch_space sp)
{
    return sp == SRCH_SPACE_MEGATRON ? "megatron" : "7d";
}

unsigned srch_pin_of_key(const char *key)
{
    static const struct {
        const char *key;
        unsigned pin;
    } rows[] = {
        {"dp", SRCH_PIN_DP},
        {"pp", SRCH_PIN_PP},
        {"tp_x", SRCH_PIN_TP_X},
        {"tp_y", SRCH_PIN_TP_Y},
        {"cp_ring", SRCH_PIN_CP_RING},
        {"cp_ulysses", SRCH_PIN_CP_ULYSSES},
        {"ep", SRCH_PIN_EP},
        {"etp", SRCH_PIN_ETP},
        {"vpp", SRCH_PIN_SCHEDULE},
        {"schedule", SRCH_PIN_SCHEDULE},
        {"micro_batch", SRCH_PIN_MICRO_BATCH},
        {"sequence_parallel", SRCH_PIN_SP},
        {"recompute", SRCH_PIN_RECOMPUTE},
        {"zero", SRCH_PIN_ZERO},
        {"overlap_grad_reduce", SRCH_PIN_OVERLAP_GRAD},
        {"overlap_param_gather", SRCH_PIN_OVERLAP_PARAM},
        {"overlap_cp_comm", SRCH_PIN_OVERLAP_CP},
        {"fuse_tpy_cp", SRCH_PIN_FUSE},
        {"order", SRCH_PIN_ORDER},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(rows[i].key, key) == 0) return rows[i].pin;
    return 0;
}

static bool pinned(const srch_request *rq, unsigned pin) { return (rq->pinned & pin) != 0; }

/* Divisors of n in increasing order; returns the count (at most cap). */
static int divisors(int n, int *out, int cap)
{
    int k = 0;
    for (int d = 1; d <= n && k < cap; d++)
        if (n % d == 0) out[k++] = d;
    return k;
}

/* {======================================================= dimension tuples */

/* Values of one dimension: the base value when pinned, else every divisor
 * of `room` (devices not yet used by the other dimensions). */
static int dim_values(const srch_request *rq, unsigned pin, int base, int room, int *out)
{
    if (pinned(rq, pin)) {
        if (base < 1 || room % base != 0) return 0;
        out[0] = base;
        return 1;
    }
    return divisors(room, out, 4096);
}

int srch_dims_list(const srch_request *rq, srch_dims **out)
{
    const cfg_model *m = rq->model;
    const cfg_platform *p = rq->platform;
    const cfg_strategy *b = &rq->base;
    bool meg = rq->space == SRCH_SPACE_MEGATRON;
    int W = p->devices, n = 0, cap = 64;
    srch_dims *list = sim_xcalloc((size_t)cap, sizeof *list);
    int *vx = sim_xcalloc(4096, sizeof(int)), *vy = sim_xcalloc(4096, sizeof(int));
    int *vu = sim_xcalloc(4096, sizeof(int)), *vr = sim_xcalloc(4096, sizeof(int));
    int *vp = sim_xcalloc(4096, sizeof(int));
    int nx = dim_values(rq, SRCH_PIN_TP_X, b->tp_x, W, vx);
    for (int ix = 0; ix < nx; ix++) {
        int tx = vx[ix];
        if (meg && (tx > p->devices_per_node || p->devices_per_node % tx != 0)) continue;
        if (m->heads % tx != 0 || m->hidden % tx != 0) continue;
        int ny = meg ? 1 : dim_values(rq, SRCH_PIN_TP_Y, b->tp_y, W / tx, vy);
        if (meg) {
            if (pinned(rq, SRCH_PIN_TP_Y) && b->tp_y != 1) ny = 0;
            vy[0] = 1;
        }
        for (int iy = 0; iy < ny; iy++) {
            int ty = vy[iy];
            if (m->hidden % (tx * ty) != 0 || m->ffn_hidden % (tx * ty) != 0) continue;
            int nu = meg ? 1 : dim_values(rq, SRCH_PIN_CP_ULYSSES, b->cp_ulysses, W / (tx * ty), vu);
            if (meg) {
                if (pinned(rq, SRCH_PIN_CP_ULYSSES) && b->cp_ulysses != 1) nu = 0;
                vu[0] = 1;
            }
            for (int iu = 0; iu < nu; iu++) {
                int cu = vu[iu];
                if (m->heads % (tx * cu) != 0) continue;
                int room = W / (tx * ty * cu);
                int nr = dim_values(rq, SRCH_PIN_CP_RING, b->cp_ring, room, vr);
                for (int ir = 0; ir < nr; ir++) {
                    int cr = vr[ir];
                    int np = dim_values(rq, SRCH_PIN_PP, b->pp, room / cr, vp);
                    for (int ip = 0; ip < np; ip++) {
                        int pp = vp[ip];
                        if (m->layers % pp != 0 && !(pp == b->pp && cfg_uneven_stages(b))) continue;
                        int dp = room / (cr * pp);
                        if (pinned(rq, SRCH_PIN_DP) && b->dp != dp) continue;
                        if (n == cap) {
                            cap *= 2;
                            list = sim_xrealloc(list, (size_t)cap * sizeof *list);
                        }
                        list[n++] = (srch_dims){tx, ty, cu, cr, pp, dp};
                    }
                }
            }
        }
    }
    free(vx);
    free(vy);
    free(vu);
    free(vr);
    free(vp);
    *out = list;
    return n;
}

/* }======================================================= dimension tuples */

/* {========================================================== other keys */

int srch_dp_group(const cfg_strategy *s) { return s->dp * s->cp_ring * s->cp_ulysses; }

int srch_edp_group(const cfg_strategy *s)
{
    int ep = s->ep > 0 ? s->ep : 1, tp = s->tp_x * s->tp_y, etp = s->etp > 0 ? s->etp : tp;
    return srch_dp_group(s) / ep * (tp / etp);
}

int srch_ep_choices(const srch_request *rq, const cfg_strategy *s, int *out)
{
    const cfg_model *m = rq->model;
    if (pinned(rq, SRCH_PIN_EP)) {
        out[0] = rq->base.ep;
        return 1;
    }
    if (m->moe.experts <= 0) {
        out[0] = 1;
        return 1;
    }
    int all[SRCH_MAX_CHOICES], n = divisors(m->moe.experts, all, SRCH_MAX_CHOICES), k = 0;
    int data = srch_dp_group(s);
    for (int i = 0; i < n; i++)
        if (data % all[i] == 0) out[k++] = all[i]; /* cfg_check: ep divides dp*cp */
    return k;
}

int srch_etp_choices(const srch_request *rq, const cfg_strategy *s, int *out)
{
    int tp = s->tp_x * s->tp_y;
    if (pinned(rq, SRCH_PIN_ETP)) {
        out[0] = rq->base.etp > 0 ? rq->base.etp : tp;
        return 1;
    }
    out[0] = tp; /* experts split like the dense layers (Megatron's default) */
    if (rq->model->moe.experts > 0 && tp > 1) {
        out[1] = 1; /* whole experts on each TP rank */
        return 2;
    }
    return 1;
}

int srch_mb_choices(const srch_request *rq, const cfg_strategy *s, int *out)
{
    if (pinned(rq, SRCH_PIN_MICRO_BATCH)) {
        out[0] = rq->base.micro_batch;
        return 1;
    }
    int per_rank = rq->base.global_batch / (s->dp > 0 ? s->dp : 1), k = 0;
    for (int b = 1; b <= MAX_MICRO_BATCH && b <= per_rank; b *= 2)
        if (per_rank % b == 0) out[k++] = b;
    if (k == 0) out[k++] = 1; /* cfg_check names the batch rule */
    return k;
}

int srch_sp_choices(const srch_request *rq, const cfg_strategy *s, bool *out)
{
    if (pinned(rq, SRCH_PIN_SP)) {
        out[0] = rq->base.sequence_parallel;
        return 1;
    }
    if (s->tp_y == 1 && s->tp_x > 1) {
        out[0] = true;
        out[1] = false;
        return 2;
    }
    out[0] = false; /* no 1D TP: sequence parallel changes nothing */
    return 1;
}

int srch_sched_choices(const srch_request *rq, const cfg_strategy *s, srch_sched *out)
{
    if (pinned(rq, SRCH_PIN_SCHEDULE)) {
        out[0] = (srch_sched){rq->base.schedule, rq->base.vpp};
        return 1;
    }
    out[0] = (srch_sched){CFG_SCHED_1F1B, 1};
    if (s->pp < 2) return 1;
    int k = 1;
    if (!cfg_uneven_stages(s)) {
        int per_stage = rq->model->layers / s->pp;
        for (int v = 2; v <= MAX_VPP && v <= per_stage; v++)
            if (per_stage % v == 0) out[k++] = (srch_sched){CFG_SCHED_INTERLEAVED, v};
        return k;
    }
    /* uneven: v divides the first, a middle and the last stage's layers */
    cfg_strategy one = *s;
    one.schedule = CFG_SCHED_1F1B;
    one.vpp = 1;
    int n[3] = {cfg_stage_layer_total(rq->model, &one, 0), cfg_stage_layer_total(rq->model, &one, s->pp / 2),
                cfg_stage_layer_total(rq->model, &one, s->pp - 1)};
    for (int v = 2; v <= MAX_VPP; v++) {
        bool fits = true;
        for (int i = 0; i < 3; i++) fits = fits && n[i] >= v && n[i] % v == 0;
        if (fits) out[k++] = (srch_sched){CFG_SCHED_INTERLEAVED, v};
    }
    return k;
}

int srch_recompute_choices(const srch_request *rq, cfg_recompute *out)
{
    if (pinned(rq, SRCH_PIN_RECOMPUTE)) {
        out[0] = rq->base.recompute;
        return 1;
    }
    out[0] = CFG_RECOMP_NONE;
    out[1] = CFG_RECOMP_SELECTIVE;
    out[2] = CFG_RECOMP_FULL;
    return 3;
}

int srch_fuse_choices(const srch_request *rq, const cfg_strategy *s, bool *out)
{
    if (pinned(rq, SRCH_PIN_FUSE)) {
        out[0] = rq->base.fuse_tpy_cp;
        return 1;
    }
    out[0] = false;
    if (rq->space == SRCH_SPACE_7D && s->tp_y > 1 && s->cp_ulysses > 1) {
        out[1] = true;
        return 2;
    }
    return 1;
}

/* A switch that only matters when `relevant`: both values, else true. */
static int switch_choices(const srch_request *rq, unsigned pin, bool base, bool relevant, bool *out)
{
    if (pinned(rq, pin)) {
        out[0] = base;
        return 1;
    }
    out[0] = true;
    if (!relevant) return 1;
    out[1] = false;
    return 2;
}

int srch_overlap_cp_choices(const srch_request *rq, const cfg_strategy *s, bool *out)
{
    return switch_choices(rq, SRCH_PIN_OVERLAP_CP, rq->base.overlap_cp_comm, s->cp_ring > 1, out);
}

static bool has_data_parallel(const cfg_strategy *s) { return srch_dp_group(s) > 1 || srch_edp_group(s) > 1; }

int srch_zero_choices(const srch_request *rq, const cfg_strategy *s, int *out)
{
    if (pinned(rq, SRCH_PIN_ZERO)) {
        out[0] = rq->base.zero;
        return 1;
    }
    out[0] = 0;
    if (!has_data_parallel(s)) return 1; /* nothing to shard */
    for (int z = 1; z <= 3; z++) out[z] = z;
    return 4;
}

int srch_overlap_grad_choices(const srch_request *rq, const cfg_strategy *s, bool *out)
{
    return switch_choices(rq, SRCH_PIN_OVERLAP_GRAD, rq->base.overlap_grad_reduce, has_data_parallel(s), out);
}

int srch_overlap_param_choices(const srch_request *rq, const cfg_strategy *s, bool *out)
{
    bool relevant = has_data_parallel(s) && (s->zero == 1 || s->zero == 2);
    return switch_choices(rq, SRCH_PIN_OVERLAP_PARAM, rq->base.overlap_param_gather, relevant, out);
}

/* }========================================================== other keys */

/* {============================================================== orders */

static const cfg_dim order_table[SRCH_NORDERS][CFG_NDIMS] = {
    /* default: TP, then CP, EP, DP, PP outermost */
    {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_DP, CFG_DIM_PP},
    /* dp<cp: data parallel inside context parallel */
    {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_EP, CFG_DIM_DP, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_PP},
    /* ep-outer: expert groups strided over data-parallel replicas */
    {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_DP, CFG_DIM_EP, CFG_DIM_PP},
    /* pp-inner: pipeline neighbours close, data parallel outermost */
    {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_PP, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_DP},
};
static const char *const order_names[SRCH_NORDERS] = {"default", "dp<cp", "ep-outer", "pp-inner"};

/* What an order decides for s: the sequence of rank digits larger than
 * one, and (with ep > 1) whether EP groups come before DP.  Two orders with
 * the same signature give the same rank layout and groups. */
static void order_signature(const cfg_strategy *s, const cfg_dim *order, int sig[CFG_NDIMS + 1])
{
    int k = 0, pos_ep = 0, pos_dp = 0;
    for (int i = 0; i < CFG_NDIMS; i++) {
        cfg_dim d = order[i];
        if (d == CFG_DIM_EP) pos_ep = i;
        if (d == CFG_DIM_DP) pos_dp = i;
        if (cfg_dim_radix(s, d) > 1) sig[k++] = (int)d;
    }
    while (k < CFG_NDIMS) sig[k++] = -1;
    sig[CFG_NDIMS] = s->ep > 1 ? (pos_ep < pos_dp) : -1;
}

int srch_order_choices(const srch_request *rq, const cfg_strategy *s, cfg_dim out[][CFG_NDIMS])
{
    if (pinned(rq, SRCH_PIN_ORDER)) {
        memcpy(out[0], rq->base.order, sizeof out[0]);
        return 1;
    }
    int sigs[SRCH_NORDERS][CFG_NDIMS + 1], n = 0;
    for (int i = 0; i < SRCH_NORDERS; i++) {
        int sig[CFG_NDIMS + 1];
        order_signature(s, order_table[i], sig);
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = memcmp(sigs[j], sig, sizeof sig) == 0;
        if (seen) continue;
        memcpy(sigs[n], sig, sizeof sig);
        memcpy(out[n], order_table[i], sizeof out[n]);
        n++;
    }
    return n;
}

void srch_order_name(const cfg_strategy *s, char *out, int cap)
{
    int sig[CFG_NDIMS + 1];
    order_signature(s, s->order, sig);
    for (int i = 0; i < SRCH_NORDERS; i++) {
        int ref[CFG_NDIMS + 1];
        order_signature(s, order_table[i], ref);
        if (memcmp(ref, sig, sizeof sig) == 0) {
            sim_strlcpy(out, order_names[i], (size_t)cap);
            return;
        }
    }
    cfg_order_format(s, out, cap);
}

/* }============================================================== orders */

bool srch_megatron_style(const cfg_strategy *s, const cfg_platform *p)
{
    if (s->tp_y != 1 || s->cp_ulysses != 1 || s->fuse_tpy_cp) return false;
    if (s->tp_x > p->devices_per_node || p->devices_per_node % s->tp_x != 0) return false;
    if (s->tp_x == 1) return true;
    /* TP must be the innermost rank digit for its group to stay in a node */
    for (int i = 0; i < CFG_NDIMS; i++) {
        cfg_dim d = s->order[i];
        if (d == CFG_DIM_TP_X) return true;
        if (cfg_dim_radix(s, d) > 1) return false;
    }
    return false;
}

void srch_strategy_compact(const cfg_strategy *s, char *out, int cap)
{
    char buf[256], order[96];
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + n, n < sizeof buf ? sizeof buf - n : 0, __VA_ARGS__)
    PUT("dp%d pp%d", s->dp, s->pp);
    if (cfg_uneven_stages(s) && s->first_stage_layers > 0) PUT(" first%d", s->first_stage_layers);
    if (cfg_uneven_stages(s) && s->last_stage_layers > 0) PUT(" last%d", s->last_stage_layers);
    if (s->schedule == CFG_SCHED_INTERLEAVED) PUT("v%d", s->vpp);
    if (s->schedule == CFG_SCHED_GPIPE) PUT("-gpipe");
    if (s->tp_y > 1)
        PUT(" tp%dx%d", s->tp_x, s->tp_y);
    else
        PUT(" tp%d%s", s->tp_x, s->sequence_parallel && s->tp_x > 1 ? " sp" : "");
    if (s->cp_ring > 1) PUT(" ring%d", s->cp_ring);
    if (s->cp_ulysses > 1) PUT(" uly%d", s->cp_ulysses);
    if (s->fuse_tpy_cp) PUT(" fused");
    if (s->ep > 1) PUT(" ep%d", s->ep);
    if (s->etp > 0 && s->etp != s->tp_x * s->tp_y) PUT(" etp%d", s->etp);
    PUT(" mb%d", s->micro_batch);
    PUT(" %s", s->recompute == CFG_RECOMP_NONE ? "norc" : s->recompute == CFG_RECOMP_SELECTIVE ? "sel" : "full");
    PUT(" z%d", s->zero);
    if (!s->overlap_grad_reduce && has_data_parallel(s)) PUT(" no-ovl-grad");
    if (!s->overlap_param_gather && has_data_parallel(s) && (s->zero == 1 || s->zero == 2)) PUT(" no-ovl-param");
    if (!s->overlap_cp_comm && s->cp_ring > 1) PUT(" no-ovl-cp");
    srch_order_name(s, order, sizeof order);
    if (strcmp(order, "default") != 0) PUT(" %s", order);
#undef PUT
    sim_strlcpy(out, buf, (size_t)cap);
}
