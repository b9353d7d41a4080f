/* estimate.c - the analytic estimator: the step time of a strategy from
 * the workload's programs, without contention.
 *
 * Same cost model, workload and network rule as the simulator:
 *
 *  1. A probe: the workload generator's plan for the candidate with one
 *     micro-batch, one virtual stage and Lp layers per stage, one of each
 *     kind of layer the model has (wl_layer_kind: dense or MoE, full or
 *     windowed attention; Lp = 1, 2 or 4).  The programs of the
 *     first and last pipeline stage are walked once: compute instructions
 *     take their seconds; blocking collectives the uncontended time of the
 *     algorithm net runs on their group's layout (net_coll_s: the phases
 *     the engine plays as flows); collectives on the TP/CP/EP streams
 *     overlap until waited for.  This gives the time of one layer of each
 *     kind (forward, backward, recompute), of the embedding and of the head
 *     (with the multi-token prediction modules), and the exposed
 *     communication of each, by dimension.  Data-parallel traffic and
 *     pipeline transfers are left to step 2.
 *  2. A closed form per pipeline stage: per-micro-batch stage time C_s
 *     (its layers and edges), pipeline time m*max(C) + (sum(C) - max(C))/v
 *     + 2(pp*v - 1) hops (each the transfer between the slowest pair of
 *     neighbouring stages sampled, tier latencies included), ZeRO-3 gathers per layer,
 *     gradient reduction exposed beyond the stage's work (each layer's
 *     released when the stage's schedule order has its last weight
 *     gradients done, queued on one stream),
 *     parameter gathers, and the optimizer step (cost_optimizer_s).  The
 *     step is the latest stage end.  The schedules that run weight
 *     gradients apart (zb-h1, zb-v, dualpipe-v) have their own bubble
 *     (split_pipeline, the closed forms of docs/schedules.md) and are
 *     probed with the backward split.
 *
 * Probes depend on the strategy keys flagged CFG_KF_PROBE in the key table
 * (config/keys.c; the probe key is their fields, probe_key_same) and on
 * whether the schedule splits the backward, so the search, which varies
 * the other keys innermost, builds one probe per several candidates; the
 * last two are kept.  The stage rows and costs of step 2 are kept in the
 * same way for the keys flagged CFG_KF_STAGE_ROWS and CFG_KF_STAGE_COSTS.  Group layouts (net_layout_of) depend on the rank
 * layout alone and are cached too. */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../config/keys.h"
#include "../cost/cost.h"
#include "../model/model.h"
#include "../net/net.h"
#include "estimate.h"

/* What the walk accumulates: seconds on the main stream, and the part of
 * them spent waiting for communication, by dimension. */
typedef struct span {
    double total;
    double comm[WL_NDIMS];
    /* seconds of each plane (net_plane) that a data-parallel flow running
     * beside this traffic loses to it: each collective's time on the
     * plane times nf / (nf + 1), nf its flows out of the device there (one
     * per ring, one per peer of a pairwise exchange), as max-min sharing
     * splits a link between flows */
    double lost[2];
} span;

enum { NKINDS = WL_NKINDS };
enum { P_FWD = 0, P_BWD, P_REC, P_W, NPASSES };

/* The layout part of a probe key: rank digits, experts and order. */
typedef struct layout_key {
    int tp_x, tp_y, cp_ulysses, cp_ring, pp, dp, ep, etp, dp_shard;
    int order[CFG_NDIMS];
} layout_key;

typedef struct layout_geo {
    bool used;
    long long serial;   /* which layout it holds: the memo of data-parallel collectives keys on it */
    layout_key key;
    net_layout g[WL_NGROUPS]; /* of the slowest sampled instance of each group kind */
    int pp_a, pp_b; /* the slowest pair of pipeline neighbours sampled: over the NIC if some pair is,
                       with the longest route (tiers) */
} layout_geo;

#define GEO_CACHE 8

/* The memo of data-parallel collective times (dp_coll_s): the search asks
 * the same (layout, collective, bytes) for every zero stage and every
 * probe of a shape. */
#define COLL_MEMO 4096

typedef struct coll_memo {
    long long geo;      /* layout_geo.serial (0: empty) */
    int dims;           /* WL_G_DP, WL_G_EDP, WL_G_DPS or WL_G_DPR */
    int kind;
    double bytes, s, nic; /* seconds, and those of them on the NIC */
} coll_memo;

/* What a probe depends on: the strategy it was built for, of which the
 * fields of the keys flagged CFG_KF_PROBE (config/keys.c) count. */
typedef struct probe_key {
    cfg_strategy s;
    bool split_w;   /* the schedule runs weight gradients apart: the probe does too */
} probe_key;

typedef struct probe {
    span layer[NKINDS][NPASSES];   /* one layer of each kind */
    span embed[2], head[2];        /* forward, backward */
    double p2p_bytes;              /* activation between stages */
    const layout_geo *lg;
} probe;

/* A stage row (level_stages): one stage for a number of chunks per stage. */
typedef struct stage_row {
    double n[NKINDS];  /* layers of each kind */
    int chunks;        /* chunks holding layers (a layout's may hold none) */
    span f, b, w;      /* forward, backward + recompute, weight gradients run apart: one micro-batch, all
                          chunks, edges included */
} stage_row;

/* A stage cost (level_zero): one stage with the zero stage applied. */
typedef struct stage_cost {
    double F, B, W, zx, C;  /* forward, backward (+ ZeRO-3 exposure zx), weight gradients apart, their sum:
                               one micro-batch */
    double pair_hidden;  /* expert all-to-all one overlapped pair hides (DualPipe-V, paired 1F1B) */
    double hidden;       /* the same, all the stage's pairs of the step */
    double grad[2];      /* exposed gradient reduction: [0] not overlapped, [1] overlapped */
    double gather;       /* parameter all-gather after the optimizer (zero 1/2, not overlapped) */
    double startx;       /* exposed start-of-step gathers (zero 1/2, overlapped) */
    double opt;          /* optimizer step */
    double drain;        /* how much earlier than stage 0 the stage's pipeline work ends */
    double fill;         /* how much later than stage 0 it starts */
} stage_cost;

/* The schedule margin counts of every stage for one (schedule, pp,
 * chunks per stage, micro-batches): a search meets a few thousand, each
 * many times, a probe's candidates going through some of them in turn.
 * The cache is emptied when it would outgrow COUNTS_BUDGET bytes. */
#define COUNTS_CACHE 4096
#define COUNTS_BUDGET (64.0 * 1024 * 1024)

typedef struct counts_entry {
    int key[5];
    wl_margin_counts *stage; /* key[1] of them; NULL: empty */
    double bytes;            /* what they take */
} counts_entry;

static void counts_drop(counts_entry *c)
{
    if (!c->stage) return;
    for (int i = 0; i < c->key[1]; i++) wl_margin_counts_free(&c->stage[i]);
    free(c->stage);
    c->stage = NULL;
}

/* One gradient reduction on a stage's data-parallel stream: released
 * `before` seconds ahead of the end of the stage's pipeline work, taking
 * `s`. */
typedef struct grad_piece {
    double before, s, sw; /* sw: its time while the stage's own traffic shares the planes */
} grad_piece;

/* The byte ranges of the strategy fields of the keys with a flag (the
 * fields a probe, the stage rows or the stage costs depend on), found
 * once: a cache check compares them alone instead of a whole strategy. */
#define FIELD_RANGES 64

typedef struct field_set {
    int n;
    size_t off[FIELD_RANGES], len[FIELD_RANGES];
} field_set;

/* A plan with the model and strategy it points at. */
typedef struct plan_slot {
    wl_plan *plan;
    cfg_model model;
    cfg_strategy strategy;
} plan_slot;

struct est_estimator {
    const cfg_model *m;
    const cfg_platform *p;
    cost_model *cost;
    mdl_params params;
    bool has[NKINDS];              /* kinds of the model's layers, its prediction modules' included */
    /* probe cache (two entries, the last two keys: the search varies probe
     * keys slowly, but the schedules it tries split W or not) */
    bool have_probe, have_spare;
    probe_key key, spare_key;
    probe pr, spare;
    layout_geo geos[GEO_CACHE];
    int geo_next;
    long long geo_serial;
    coll_memo *memo;               /* COLL_MEMO */
    long long probes;
    /* scratch */
    int *members;
    int *sn_count;                 /* net_supernodes ints, zero between uses */
    long long serial;              /* probes built: keys the level caches */
    /* the stage rows' cache (level_stages: for a chunk count) and the
     * stage costs' (level_zero: for a zero stage) */
    stage_row *rows;
    stage_cost *costs;
    int rows_cap;
    long long stages_serial, zero_serial;
    cfg_strategy rows_key;         /* the strategy the stage rows are of (its CFG_KF_STAGE_ROWS fields count) */
    cfg_strategy costs_key;        /* the strategy the stage costs are of (its CFG_KF_STAGE_COSTS fields count) */
    bool costs_ogr;                /* overlap_grad_reduce as the stage costs read it (ZeRO-3 only) */
    field_set probe_fields, rows_fields, costs_fields; /* costs_fields: overlap_grad_reduce apart */
    /* the last probe's plan of a schedule that splits W and of one that
     * does not (the search tries both in turn), each kept for the next
     * probe that differs from it in the rank order alone (the search
     * turns the order innermost of the other probe keys) */
    plan_slot plans[2];
    field_set plan_fields;         /* every strategy key but the order */
    double nlayers[NKINDS];        /* the model's layers of each kind (its prediction modules' apart) */
    double pipe, p2p, hops;
    grad_piece *pieces;            /* scratch of overlapped_grad_s */
    int pieces_cap;
    /* level_zero's schedule margins of each stage (stage_margins), kept for
     * the candidates that differ only in zero and the DP overlap switches */
    double *margins;
    int margins_cap, margins_schedule, margins_m, margins_flushes;
    bool margins_ok;
    /* the counts behind them (wl_schedule_margin_counts), remembered */
    counts_entry *counts;          /* COUNTS_CACHE */
    double counts_bytes;
    double *done_at[WL_NSTREAMS];
    int done_cap[WL_NSTREAMS];
};

/* {======================================================== collectives */

/* Layout of rank r's group g in plan (net_layout_of). */
static net_layout layout_of(est_estimator *e, const wl_plan *plan, int r, wl_group g)
{
    net_layout lo;
    int me = 0, n = wl_group_members(plan, r, g, e->members, &me);
    net_layout_of(e->p, e->members, n, me, e->sn_count, &lo);
    return lo;
}

/* A fixed yardstick to pick the slowest instance of a group. */
static double layout_weight(const est_estimator *e, const net_layout *lo)
{
    double s = 256.0 * 1024 * 1024;
    return net_coll_s(e->p, lo, NET_ALLREDUCE, s) + net_coll_s(e->p, lo, NET_ALLTOALL, s);
}

static layout_key layout_key_of(const cfg_strategy *s)
{
    layout_key k;
    memset(&k, 0, sizeof k);
    k.tp_x = s->tp_x;
    k.tp_y = s->tp_y;
    k.cp_ulysses = s->cp_ulysses;
    k.cp_ring = s->cp_ring;
    k.pp = s->pp;
    k.dp = s->dp;
    k.ep = s->ep;
    k.etp = s->etp;
    k.dp_shard = s->dp_shard;
    for (int i = 0; i < CFG_NDIMS; i++) k.order[i] = (int)s->order[i];
    return k;
}

/* The layout of every group of plan's rank layout: for each group kind, the
 * slowest instance among rank 0 and the ranks on either side of the first
 * and last two supernode boundaries (where groups may straddle). */
static const layout_geo *layout_geo_find(const est_estimator *e, const layout_key *key)
{
    for (int i = 0; i < GEO_CACHE; i++)
        if (e->geos[i].used && memcmp(&e->geos[i].key, key, sizeof *key) == 0) return &e->geos[i];
    return NULL;
}

static const layout_geo *layout_geo_get(est_estimator *e, const wl_plan *plan, const layout_key *key)
{
    const layout_geo *cached = layout_geo_find(e, key);
    if (cached) return cached;
    layout_geo *lg = &e->geos[e->geo_next];
    e->geo_next = (e->geo_next + 1) % GEO_CACHE;
    memset(lg, 0, sizeof *lg);
    lg->used = true;
    lg->serial = ++e->geo_serial;
    lg->key = *key;

    int world = wl_world(plan), dps = net_devices_per_supernode(e->p);
    int samples[9], ns = 0;
    samples[ns++] = 0;
    int nb = (world - 1) / dps; /* supernode boundaries inside the world */
    for (int b = 1; b <= nb; b++) {
        if (b > 2 && b < nb - 1) continue;
        samples[ns++] = b * dps - 1;
        samples[ns++] = b * dps;
    }
    for (int g = 0; g < WL_NGROUPS; g++) {
        if (g == WL_G_PP) continue;
        double worst = -1;
        for (int i = 0; i < ns; i++) {
            net_layout cur = layout_of(e, plan, samples[i], (wl_group)g);
            double w = cur.n > 1 ? layout_weight(e, &cur) : 0.0;
            if (w > worst) {
                worst = w;
                lg->g[g] = cur;
            }
        }
    }
    bool slow_nic = false;
    double slow_lat = -1;
    for (int i = 0; i < ns; i++) {
        int me = 0, n = wl_group_members(plan, samples[i], WL_G_PP, e->members, &me);
        for (int k = 0; k + 1 < n; k++) {
            int a = e->members[k], b = e->members[k + 1];
            bool nic = net_plane_between(e->p, a, b) == NET_NIC;
            double lat = net_route_latency_s(e->p, a, b);
            if ((nic && !slow_nic) || (nic == slow_nic && lat > slow_lat)) {
                slow_nic = nic;
                slow_lat = lat;
                lg->pp_a = a;
                lg->pp_b = b;
            }
        }
    }
    return lg;
}

/* }======================================================== collectives */

/* {============================================================== probes */

/* Bytes of the field of strategy row k. */
static size_t key_field_bytes(const cfg_key *k)
{
    switch (k->type) {
    case CFG_K_BOOL: return sizeof(bool);
    case CFG_K_DOUBLE: return sizeof(double);
    case CFG_K_ORDER: return sizeof(cfg_dim) * CFG_NDIMS;
    case CFG_K_STRING: return k->size;
    default: return sizeof(int);
    }
}

/* The fields of the strategy keys with one of flags (the key table's
 * CFG_KF_PROBE, CFG_KF_STAGE_ROWS, CFG_KF_STAGE_COSTS) as byte ranges,
 * adjacent ones joined, leaving out the field at offset `skip` (none:
 * (size_t)-1). */
static void field_set_of(unsigned flags, size_t skip, field_set *out)
{
    memset(out, 0, sizeof *out);
    for (const cfg_key *row = cfg_strategy_keys; row->key; row++) {
        if (!(row->flags & flags) || row->offset == skip) continue;
        size_t off = row->offset, len = key_field_bytes(row);
        if (out->n > 0 && out->off[out->n - 1] + out->len[out->n - 1] == off) {
            out->len[out->n - 1] += len;
            continue;
        }
        assert(out->n < FIELD_RANGES);
        out->off[out->n] = off;
        out->len[out->n++] = len;
    }
}

/* Whether a and b agree in the fields of f. */
static bool fields_same(const field_set *f, const cfg_strategy *a, const cfg_strategy *b)
{
    for (int i = 0; i < f->n; i++)
        if (memcmp((const char *)a + f->off[i], (const char *)b + f->off[i], f->len[i]) != 0) return false;
    return true;
}

static void span_add(span *a, const span *b, double times)
{
    a->total += times * b->total;
    for (int d = 0; d < WL_NDIMS; d++) a->comm[d] += times * b->comm[d];
    for (int pl = 0; pl < 2; pl++) a->lost[pl] += times * b->lost[pl];
}

/* What collective `kind` of `bytes` (its step seq, net_coll_step_phases)
 * on lo takes from a data-parallel ring flow sharing its planes, into
 * lost[plane] (span.lost): a ring phase occupies its ring's plane with one
 * flow; a pairwise phase the fabric with one flow per peer of my supernode
 * and the NIC with one per peer elsewhere, each for its bytes there. */
static void coll_lost(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, int seq,
                      double lost[2])
{
    net_phase ph[NET_MAX_PHASES];
    int n = net_coll_step_phases(p, lo, kind, bytes, seq, ph);
    double eff = net_efficiency(p);
    for (int i = 0; i < n; i++) {
        if (ph[i].n <= 1) continue;
        if (ph[i].op == NET_ALLTOALL && lo->spans) {
            double nl = lo->local - 1, nr = lo->n - lo->local;
            if (nl > 0) lost[NET_FABRIC] += ph[i].local_bytes / (net_bytes_per_s(p, NET_FABRIC) * eff) * nl / (nl + 1);
            if (nr > 0) lost[NET_NIC] += ph[i].remote_bytes / (net_bytes_per_s(p, NET_NIC) * eff) * nr / (nr + 1);
        } else {
            double nf = ph[i].op == NET_ALLTOALL ? ph[i].n - 1 : 1;
            lost[lo->ring[ph[i].ring].plane] += net_phase_s(p, &ph[i]) * nf / (nf + 1);
        }
    }
}

/* Completion time of the seq-th op of a stream (seq counts from 1). */
static void stream_done(est_estimator *e, int st, uint32_t seq, double t)
{
    if ((int)seq >= e->done_cap[st]) {
        int cap = e->done_cap[st] ? 2 * e->done_cap[st] : 64;
        while (cap <= (int)seq) cap *= 2;
        e->done_at[st] = sim_xrealloc(e->done_at[st], (size_t)cap * sizeof(double));
        e->done_cap[st] = cap;
    }
    e->done_at[st][seq] = t;
}

/* Walk the program of `rank` (probe plan), adding each instruction's time on
 * the main stream into the probe's spans: take_layers for the layers,
 * take_edges for the embedding (before the first layer of the forward,
 * after the last of the backward) and the head (the other way round).
 * layers_seen[kind] counts the distinct layers of each kind walked. */
static void walk(est_estimator *e, const wl_plan *plan, const cfg_model *pm, int rank, probe *pr, bool take_layers,
                 bool take_edges, int layers_seen[NKINDS])
{
    wl_program *prog = wl_program_new(plan, rank);
    double now = 0.0, free_at[WL_NSTREAMS] = {0};
    uint32_t issued[WL_NSTREAMS] = {0};
    int stream_dim[WL_NSTREAMS] = {0};
    bool fwd_layer_seen = false, bwd_layer_seen = false;
    int last_fwd_layer = -1;
    wl_instr in;
    while (wl_program_next(prog, &in)) {
        if (in.op == WL_SEND) {
            if (in.group == WL_G_PP) pr->p2p_bytes = in.bytes;
            continue;
        }
        if (in.op == WL_RECV) continue;                        /* the pipeline is a closed form */
        if (in.phase == WL_PH_GRAD_SYNC || in.phase == WL_PH_OPTIMIZER) continue; /* closed form */
        if (in.op == WL_COLL && wl_instr_dim(&in) == WL_DIM_DP) continue; /* gradient and parameter syncs */
        if (in.op == WL_WAIT && in.stream == WL_S_DP) continue;
        if (in.stream >= WL_NSTREAMS) continue;

        double dt = 0.0, lost[2] = {0.0, 0.0};
        int dim = -1;
        if (in.op == WL_COLL && in.group < WL_NGROUPS)
            coll_lost(e->p, &pr->lg->g[in.group], (net_coll)in.coll, in.bytes, (int)in.seq, lost);
        if (in.op == WL_COMPUTE) {
            dt = in.seconds;
        } else if (in.op == WL_COLL && in.group < WL_NGROUPS) {
            double t = net_coll_step_s(e->p, &pr->lg->g[in.group], (net_coll)in.coll, in.bytes, (int)in.seq);
            if (in.stream == WL_S_MAIN) {
                dt = t;
                dim = (int)wl_instr_dim(&in);
            } else {
                /* asynchronous: the stream runs its ops in order, the main stream goes on */
                double start = fmax(now, free_at[in.stream]);
                free_at[in.stream] = start + t;
                stream_dim[in.stream] = (int)wl_instr_dim(&in);
                stream_done(e, in.stream, ++issued[in.stream], free_at[in.stream]);
            }
        } else if (in.op == WL_WAIT) {
            double t = free_at[in.stream];
            if (in.seq > 0 && in.seq <= issued[in.stream]) t = e->done_at[in.stream][in.seq];
            dt = fmax(0.0, t - now);
            dim = stream_dim[in.stream];
        }
        now += dt;

        span *sp = NULL;
        if (in.layer >= 0) {
            int kind = wl_layer_kind(pm, in.layer);
            if (in.phase == WL_PH_FORWARD) {
                fwd_layer_seen = true;
                if (in.layer != last_fwd_layer) {
                    last_fwd_layer = in.layer;
                    if (take_layers) layers_seen[kind]++;
                }
            }
            if (in.phase == WL_PH_BACKWARD) bwd_layer_seen = true;
            if (take_layers) {
                int pass = in.phase == WL_PH_FORWARD    ? P_FWD
                           : in.phase == WL_PH_BACKWARD ? P_BWD
                           : in.phase == WL_PH_WGRAD    ? P_W
                                                        : P_REC;
                sp = &pr->layer[kind][pass];
            }
        } else if (take_edges && in.phase == WL_PH_FORWARD) {
            sp = fwd_layer_seen ? &pr->head[0] : &pr->embed[0];
        } else if (take_edges && in.phase == WL_PH_BACKWARD) {
            sp = bwd_layer_seen ? &pr->embed[1] : &pr->head[1];
        } else if (take_edges && in.phase == WL_PH_WGRAD) {
            sp = &pr->head[1]; /* the logits' weight gradient: the only edge one run apart */
        }
        if (!sp) continue;
        sp->total += dt;
        if (dim >= 0) sp->comm[dim] += dt;
        for (int pl = 0; pl < 2; pl++) sp->lost[pl] += lost[pl];
    }
    wl_program_free(prog);
}

/* The plan of probe model pm and strategy ps: the last one of its kind of
 * schedule laid out anew when they differ from its own in the rank order
 * alone (wl_plan_reorder), else a new one. */
static sim_rc plan_ensure(est_estimator *e, const cfg_model *pm, const cfg_strategy *ps, const wl_plan **out,
                          sim_err *err)
{
    plan_slot *sl = &e->plans[wl_schedule_splits_w(ps)];
    if (sl->plan && memcmp(pm, &sl->model, sizeof *pm) == 0 && fields_same(&e->plan_fields, &sl->strategy, ps)) {
        sl->strategy = *ps; /* when the plan cannot take it, it is built anew below */
        if (wl_plan_reorder(sl->plan, &sl->strategy)) {
            *out = sl->plan;
            return SIM_OK;
        }
    }
    wl_plan_free(sl->plan);
    sl->plan = NULL;
    sl->model = *pm;
    sl->strategy = *ps;
    sim_rc rc = wl_plan_new(&sl->model, e->p, &sl->strategy, e->cost, &sl->plan, err);
    *out = sl->plan;
    return rc;
}

/* Build the probe of s into e->pr. */
static sim_rc probe_build(est_estimator *e, const cfg_strategy *s, sim_err *err)
{
    const cfg_model *m = e->m;
    cfg_model pm = *m;
    /* Layers 0..lp-1 (stage 0) of the probe model are one of each kind:
     * dense before MoE, windowed and full attention alternating. */
    bool with[2][2] = {{false, false}, {false, false}}; /* [bit][set]: some layer has the bit set or not */
    for (int k = 0; k < NKINDS; k++) {
        if (!e->has[k]) continue;
        with[0][(k & WL_KIND_MOE) != 0] = true;
        with[1][(k & WL_KIND_WINDOW) != 0] = true;
    }
    bool moe_mixed = with[0][0] && with[0][1], win_mixed = with[1][0] && with[1][1], any_win = with[1][1];
    int lp = (moe_mixed ? 2 : 1) * (win_mixed ? 2 : 1);
    if (m->moe.experts > 0) {
        pm.moe.layer_freq = 1;
        pm.moe.first_dense_layers = moe_mixed ? lp / 2 : 0;
    }
    if (!any_win) pm.window.tokens = 0;
    pm.window.full_every = win_mixed ? 2 : 0;
    pm.layers = s->pp * lp;
    cfg_strategy ps = *s;
    ps.vpp = 1;
    ps.schedule = wl_schedule_splits_w(s) ? CFG_SCHED_ZB_H1 : CFG_SCHED_1F1B;
    ps.first_stage_layers = ps.last_stage_layers = 0; /* Lp layers on every stage */
    ps.pipeline_layout[0] = '\0';
    ps.global_batch = s->dp * s->micro_batch;
    ps.pipeline_flushes = 0; /* the probe's one micro-batch */
    ps.zero = 0;
    ps.overlap_grad_reduce = false;
    ps.overlap_param_gather = false;

    const wl_plan *plan = NULL;
    sim_rc rc = plan_ensure(e, &pm, &ps, &plan, err);
    if (rc != SIM_OK) return rc;
    const cfg_model *plan_model = wl_model(plan);
    probe *pr = &e->pr;
    memset(pr, 0, sizeof *pr);
    layout_key lk = layout_key_of(s);
    pr->lg = layout_geo_get(e, plan, &lk);

    /* ranks of stage 0 and of the last stage: rank 0's pipeline group */
    int me = 0, n = wl_group_members(plan, 0, WL_G_PP, e->members, &me);
    int first = e->members[0], last = e->members[n - 1];
    int seen[NKINDS] = {0}, unused[NKINDS] = {0};
    walk(e, plan, plan_model, first, pr, true, true, seen);
    if (last != first) {
        span keep_embed[2] = {pr->embed[0], pr->embed[1]};
        memset(pr->head, 0, sizeof pr->head);
        walk(e, plan, plan_model, last, pr, false, true, unused);
        pr->embed[0] = keep_embed[0];
        pr->embed[1] = keep_embed[1];
    }
    for (int k = 0; k < NKINDS; k++) {
        if (seen[k] <= 1) continue;
        for (int ps2 = 0; ps2 < NPASSES; ps2++) {
            span *sp = &pr->layer[k][ps2];
            sp->total /= seen[k];
            for (int d = 0; d < WL_NDIMS; d++) sp->comm[d] /= seen[k];
            for (int pl = 0; pl < 2; pl++) sp->lost[pl] /= seen[k];
        }
    }
    /* The head holds the prediction modules' layers of the probe model's
     * kinds: swap in the model's (their forward, and backward without
     * recompute). */
    for (int k = 0; k < m->mtp_layers; k++) {
        int kp = wl_layer_kind(&pm, pm.layers + k), km = wl_layer_kind(m, m->layers + k);
        span_add(&pr->head[0], &pr->layer[km][P_FWD], 1);
        span_add(&pr->head[0], &pr->layer[kp][P_FWD], -1);
        span_add(&pr->head[1], &pr->layer[km][P_BWD], 1);
        span_add(&pr->head[1], &pr->layer[kp][P_BWD], -1);
    }
    e->probes++;
    return SIM_OK;
}

/* }============================================================== probes */

est_estimator *est_new(const cfg_model *m, const cfg_platform *p, sim_err *err)
{
    if (p && p->nstragglers > 0) {
        sim_fail(err, SIM_EINVAL,
                 "%s: .stragglers: the analytic estimate (estimate, sweep, compare, a run without -s) does not model "
                 "stragglers (simulate a strategy with 'heptasim run -s', or remove them)", p->path[0] ? p->path : p->name);
        return NULL;
    }
    cost_model *cost = cost_new(p, err);
    if (!cost) return NULL;
    est_estimator *e = sim_xcalloc(1, sizeof *e);
    e->m = m;
    e->p = p;
    e->cost = cost;
    mdl_count_params(m, &e->params);
    for (int l = 0; l < m->layers + m->mtp_layers; l++) e->has[wl_layer_kind(m, l)] = true;
    e->members = sim_xcalloc((size_t)p->devices, sizeof *e->members);
    e->sn_count = sim_xcalloc((size_t)net_supernodes(p), sizeof *e->sn_count);
    e->memo = sim_xcalloc(COLL_MEMO, sizeof *e->memo);
    field_set_of(CFG_KF_PROBE, (size_t)-1, &e->probe_fields);
    field_set_of(CFG_KF_STAGE_ROWS, (size_t)-1, &e->rows_fields);
    field_set_of(CFG_KF_STAGE_COSTS, offsetof(cfg_strategy, overlap_grad_reduce), &e->costs_fields);
    field_set_of(CFG_KF_SAME, offsetof(cfg_strategy, order), &e->plan_fields);
    for (int l = 0; l < m->layers; l++) e->nlayers[wl_layer_kind(m, l)] += 1;
    return e;
}

void est_free(est_estimator *e)
{
    if (!e) return;
    cost_free(e->cost);
    for (int i = 0; i < 2; i++) wl_plan_free(e->plans[i].plan);
    free(e->members);
    free(e->sn_count);
    free(e->memo);
    free(e->rows);
    free(e->costs);
    free(e->pieces);
    free(e->margins);
    for (int i = 0; e->counts && i < COUNTS_CACHE; i++) counts_drop(&e->counts[i]);
    free(e->counts);
    for (int i = 0; i < WL_NSTREAMS; i++) free(e->done_at[i]);
    free(e);
}

long long est_probes(const est_estimator *e) { return e ? e->probes : 0; }

/* {========================================================= closed form */

/* Parameters one rank holds for a layer of each kind (mdl_layer_held):
 * replicated over the DP group, and routed experts over the
 * expert-data-parallel group. */
static void layer_params(const est_estimator *e, const cfg_strategy *s, int kind, double *dp, double *edp)
{
    mdl_held h;
    mdl_layer_held(e->m, s, kind & WL_KIND_MOE, &h);
    *dp = mdl_held_params(&h, MDL_SYNC_DP);
    *edp = mdl_held_params(&h, MDL_SYNC_EDP);
}

static void rows_reserve(est_estimator *e, int pp)
{
    if (e->rows_cap >= pp) return;
    e->rows_cap = pp;
    e->rows = sim_xrealloc(e->rows, (size_t)pp * sizeof *e->rows);
    e->costs = sim_xrealloc(e->costs, (size_t)pp * sizeof *e->costs);
}

/* The stage rows: layers and per-micro-batch spans of each stage for v chunks per
 * stage (the layer ranges of cfg_stage_layers). */
static void level_stages(est_estimator *e, const cfg_strategy *s, int v)
{
    const cfg_model *m = e->m;
    const probe *pr = &e->pr;
    int pp = s->pp, head = cfg_head_stage(s);
    rows_reserve(e, pp);
    e->margins_ok = false;
    for (int st = 0; st < pp; st++) {
        stage_row *r = &e->rows[st];
        memset(r, 0, sizeof *r);
        for (int j = 0; j < v; j++) {
            int first, n = cfg_stage_layers(m, s, st, j, &first);
            r->chunks += n > 0;
            for (int l = first; l < first + n; l++) r->n[wl_layer_kind(m, l)] += 1;
        }
    }
    for (int st = 0; st < pp; st++) {
        stage_row *r = &e->rows[st];
        for (int k = 0; k < NKINDS; k++) {
            span_add(&r->f, &pr->layer[k][P_FWD], r->n[k]);
            for (int ps = P_BWD; ps <= P_REC; ps++) span_add(&r->b, &pr->layer[k][ps], r->n[k]);
            span_add(&r->w, &pr->layer[k][P_W], r->n[k]);
        }
        if (st == 0) {
            span_add(&r->f, &pr->embed[0], 1);
            span_add(&r->b, &pr->embed[1], 1);
        }
        if (st == head) {
            span_add(&r->f, &pr->head[0], 1);
            span_add(&r->b, &pr->head[1], 1);
        }
    }
}

/* The lowest kind of layer stage row r holds (dense before MoE, full
 * before windowed; 0 when it holds none): the kind of the layer whose
 * gather a stage cannot hide. */
static int kind_lowest(const stage_row *r)
{
    for (int k = 0; k < NKINDS; k++)
        if (r->n[k] > 0) return k;
    return 0;
}

/* The pipeline time, transfers aside, of the schedules that run W apart,
 * with each stage's forward F_s, backward B_s and weight gradients W_s of
 * one micro-batch (all its chunks): the busiest stage's m (F + B + W) plus
 * the bubble of the schedule's closed form (docs/schedules.md) over the
 * other stages: ZB-H1 (F + B - W) each; ZB-V F/2 each (the V's fill);
 * DualPipe-V (F + 2B - W)/2 each, less what an overlapped pair hides.
 * DualPipe-V's pairs (2m - 3p + s + 1 on stage s, one fewer on the last)
 * hide each micro-batch's expert all-to-all behind the other's compute, as
 * far as that compute goes; that comes off the stage's work. */
static double split_pipeline(est_estimator *e, const cfg_strategy *s, double nmicro)
{
    int pp = s->pp, crit = 0;
    double most = -1, bubble = 0.0;
    for (int st = 0; st < pp; st++) {
        const stage_row *r = &e->rows[st];
        stage_cost *c = &e->costs[st];
        if (s->schedule == CFG_SCHED_DUALPIPE_V) {
            double ef = r->f.comm[WL_DIM_EP] / 2, eb = (r->b.comm[WL_DIM_EP] + r->w.comm[WL_DIM_EP]) / 2;
            double af = r->f.total / 2 - ef, ab = (r->b.total + r->w.total) / 2 - eb;
            double pairs = 2.0 * nmicro - 3.0 * pp + st + 1 - (st == pp - 1);
            c->pair_hidden = fmin(ef, ab) + fmin(eb, af);
            c->hidden = pairs > 0 ? pairs * c->pair_hidden : 0.0;
        }
        double work = nmicro * c->C - c->hidden;
        if (work > most) {
            most = work;
            crit = st;
        }
    }
    for (int st = 0; st < pp; st++) {
        if (st == crit) continue;
        const stage_cost *c = &e->costs[st];
        switch (s->schedule) {
        case CFG_SCHED_ZB_H1: bubble += c->F + c->B - c->W; break;
        case CFG_SCHED_ZB_V: bubble += c->F / 2; break;
        default: bubble += (c->F + 2 * c->B - c->W) / 2 - c->pair_hidden; break;
        }
    }
    return most + fmax(0.0, bubble);
}

/* The busiest stage's work, m micro-batches of C_s each, in the k runs of
 * mf micro-batches; with the paired 1F1B of overlap_ep_comm
 * (cfg_ep_overlap_1f1b, sim/workload/schedule.c) less what its steady
 * pairs hide: stage s runs mf*v - w_s pairs of chunk passes per run, w_s
 * its warm-up forwards (one more than 1F1B's, at most mf*v), each hiding
 * one pass's expert all-to-all behind the other's compute as far as that
 * compute goes, as DualPipe-V's pairs do in split_pipeline.  cmax is the
 * largest C_s. */
static double paired_work(est_estimator *e, const cfg_strategy *s, double mf, double k, double cmax)
{
    double nmicro = mf * k;
    if (!cfg_ep_overlap_1f1b(s)) return nmicro * cmax;
    int pp = s->pp, v = cfg_stage_chunks(s);
    double most = 0.0;
    for (int st = 0; st < pp; st++) {
        const stage_row *r = &e->rows[st];
        stage_cost *c = &e->costs[st];
        double total = mf * v, warm = v > 1 ? (pp - st - 1) * 2.0 + (v - 1.0) * pp + 1 : pp - st;
        double ef = r->f.comm[WL_DIM_EP] / v, eb = (r->b.comm[WL_DIM_EP] + r->w.comm[WL_DIM_EP]) / v;
        double af = r->f.total / v - ef, ab = (r->b.total + r->w.total) / v - eb;
        double pairs = total - fmin(warm, total);
        c->pair_hidden = fmin(ef, ab) + fmin(eb, af);
        c->hidden = k * pairs * c->pair_hidden;
        most = fmax(most, nmicro * c->C - c->hidden);
    }
    return most;
}

/* net_coll_s of data-parallel group g (WL_G_DP, WL_G_EDP, WL_G_DPS or WL_G_DPR) of layout lg, remembered. */
static double memo_coll_s(est_estimator *e, const layout_geo *lg, int g, net_coll kind, double bytes, double *nic)
{
    uint64_t bits;
    memcpy(&bits, &bytes, sizeof bits);
    uint64_t h = (bits ^ (bits >> 31)) * 0x9E3779B97F4A7C15ULL;
    h ^= ((uint64_t)lg->serial * 64 + (uint64_t)g * 8 + (uint64_t)kind) * 0xC2B2AE3D27D4EB4FULL;
    coll_memo *m = &e->memo[(h >> 20) % COLL_MEMO];
    if (m->geo != lg->serial || m->dims != g || m->kind != (int)kind || m->bytes != bytes) {
        m->geo = lg->serial;
        m->dims = g;
        m->kind = (int)kind;
        m->bytes = bytes;
        net_phase ph[NET_MAX_PHASES];
        int n = net_coll_phases(e->p, &lg->g[g], kind, bytes, ph);
        m->s = m->nic = 0.0;
        for (int i = 0; i < n; i++) {
            double t = net_phase_s(e->p, &ph[i]);
            m->s += t;
            if (lg->g[g].ring[ph[i].ring].plane == NET_NIC) m->nic += t;
        }
    }
    if (nic) *nic += m->nic;
    return m->s;
}

/* A data-parallel collective of the dense parameters' `dense` bytes over
 * DP and of the experts' `expert` bytes over expert DP; with HSDP the
 * dense gathers and reduce-scatters run in the shard group, and the
 * reduced shard all-reduces across the replicas (as the programs do). */
static double dp_coll_nic_s(est_estimator *e, const cfg_strategy *s, const layout_geo *lg, net_coll kind, double dense,
                            double expert, double *nic)
{
    double t = memo_coll_s(e, lg, WL_G_EDP, kind, expert, nic);
    if (!wl_hybrid_sharded(s)) return t + memo_coll_s(e, lg, WL_G_DP, kind, dense, nic);
    t += memo_coll_s(e, lg, WL_G_DPS, kind, dense, nic);
    if (kind == NET_REDUCESCATTER) t += memo_coll_s(e, lg, WL_G_DPR, NET_ALLREDUCE, dense / cfg_dp_shard(s), nic);
    return t;
}

static double dp_coll_s(est_estimator *e, const cfg_strategy *s, const layout_geo *lg, net_coll kind, double dense,
                        double expert)
{
    return dp_coll_nic_s(e, s, lg, kind, dense, expert, NULL);
}

/* The time of a data-parallel collective of t seconds, nic of them on the
 * NIC, while its stage's own traffic leaves each plane the share rate[plane]
 * of its time (stage_rates). */
static double stretched_s(double t, double nic, const double rate[2])
{
    return (t - nic) / rate[NET_FABRIC] + nic / rate[NET_NIC];
}

/* How far a collective of t seconds alone, tw beside a window of w
 * seconds of other traffic, runs past that window: what is left of it
 * at the window's end runs alone. */
static double beyond_s(double t, double tw, double w)
{
    return tw <= w || tw <= 0.0 ? 0.0 : (1.0 - w / tw) * t;
}

/* The spans of one layer's passes. */
typedef struct probe_span_set {
    const span *f, *b, *r, *w;
} probe_span_set;

/* The share of each plane's time a data-parallel flow gets beside the
 * work of stage cost c of row r: what the stage's traffic of one
 * micro-batch (span.lost) leaves of its time, at least 5 %. */
static void stage_rates(const stage_row *r, const stage_cost *c, double rate[2])
{
    for (int pl = 0; pl < 2; pl++) {
        double lost = r->f.lost[pl] + r->b.lost[pl] + r->w.lost[pl];
        rate[pl] = c->C > 0 ? fmax(0.05, 1.0 - lost / c->C) : 1.0;
    }
}

static void piece_add(est_estimator *e, int *n, double before, double s, double sw)
{
    if (*n == e->pieces_cap) {
        e->pieces_cap = e->pieces_cap ? 2 * e->pieces_cap : 64;
        e->pieces = sim_xrealloc(e->pieces, (size_t)e->pieces_cap * sizeof *e->pieces);
    }
    e->pieces[(*n)++] = (grad_piece){before, s, sw};
}

/* The margin counts of s's stages, from the cache or made. */
static const wl_margin_counts *counts_get(est_estimator *e, const cfg_strategy *s)
{
    int key[5] = {(int)s->schedule, s->pp, cfg_stage_chunks(s), cfg_micro_batches(s), cfg_flush_micro_batches(s)};
    uint64_t h = 0;
    for (int i = 0; i < 5; i++) h = (h ^ (uint64_t)(unsigned)key[i]) * 0x9E3779B97F4A7C15ULL;
    if (!e->counts) e->counts = sim_xcalloc(COUNTS_CACHE, sizeof *e->counts);
    counts_entry *c = &e->counts[(h >> 40) % COUNTS_CACHE];
    if (c->stage && memcmp(c->key, key, sizeof key) == 0) return c->stage;
    wl_margin_counts *made = sim_xcalloc((size_t)s->pp, sizeof *made);
    double bytes = 0.0;
    for (int i = 0; i < s->pp; i++) {
        wl_schedule_margin_counts(s, i, &made[i]);
        bytes += (double)made[i].bytes;
    }
    if (c->stage) e->counts_bytes -= c->bytes;
    counts_drop(c);
    if (e->counts_bytes + bytes > COUNTS_BUDGET) {
        for (int i = 0; i < COUNTS_CACHE; i++) counts_drop(&e->counts[i]);
        e->counts_bytes = 0.0;
    }
    memcpy(c->key, key, sizeof key);
    c->stage = made;
    c->bytes = bytes;
    e->counts_bytes += bytes;
    return c->stage;
}

/* Seconds of one layer of kind k in a pipeline step's pass (wl_pass):
 * its forward, its backward with recompute, or its weight gradients. */
static double layer_pass_s(const probe *pr, int k, int pass)
{
    if (pass == WL_PASS_F) return pr->layer[k][P_FWD].total;
    if (pass == WL_PASS_B) return pr->layer[k][P_BWD].total + pr->layer[k][P_REC].total;
    return pr->layer[k][P_W].total;
}

/* Stage st's slice of e->margins: the seconds of each step of its chunks
 * (one micro-batch: step_s[chunk * WL_NPASSES + pass]), then first_f,
 * after_b and after_w: the seconds of the steps wl_schedule_margin_counts
 * counts, v each. */
static double *margins_of(const est_estimator *e, int st, int v)
{
    return e->margins + (size_t)st * v * (WL_NPASSES + 3);
}

/* Fills stage st's margins (margins_of): its steps' seconds (its layers,
 * the embedding before global chunk 0, the head after the last) and its
 * chunks' margins in its schedule order, cool_idle its cool-down's idle
 * time. */
static void stage_margins(est_estimator *e, const cfg_strategy *s, int st, double cool_idle)
{
    const cfg_model *m = e->m;
    const probe *pr = &e->pr;
    int v = cfg_stage_chunks(s), last = s->pp * v - 1;
    int need = s->pp * v * (WL_NPASSES + 3);
    if (need > e->margins_cap) {
        e->margins_cap = need;
        e->margins = sim_xrealloc(e->margins, (size_t)need * sizeof *e->margins);
    }
    double *step_s = margins_of(e, st, v);
    for (int c = 0; c < v; c++) {
        int first, n = cfg_stage_layers(m, s, st, c, &first), g = cfg_global_chunk(s, st, c);
        double *t = &step_s[c * WL_NPASSES];
        t[WL_PASS_F] = t[WL_PASS_B] = t[WL_PASS_W] = 0.0;
        for (int l = first; l < first + n; l++) {
            int k = wl_layer_kind(m, l);
            for (int ps = 0; ps < WL_NPASSES; ps++) t[ps] += layer_pass_s(pr, k, ps);
        }
        if (g == 0) {
            t[WL_PASS_F] += pr->embed[0].total;
            t[WL_PASS_B] += pr->embed[1].total;
        }
        if (g == last) {
            t[WL_PASS_F] += pr->head[0].total;
            t[WL_PASS_B] += pr->head[1].total;
        }
    }
    const wl_margin_counts *mc = &counts_get(e, s)[st];
    double idle = mc->cool_steps > 0 ? cool_idle / mc->cool_steps : 0.0;
    double *first_f = step_s + v * WL_NPASSES, *after_b = first_f + v, *after_w = after_b + v;
    int row = v * WL_NPASSES;
    for (int j = 0; j < v; j++) {
        double f = 0, b = mc->cool_b[j] * idle, w = mc->cool_w[j] * idle;
        for (int i = 0; i < row; i++) {
            f += mc->before_f[j * row + i] * step_s[i];
            b += mc->after_b[j * row + i] * step_s[i];
            w += mc->after_w[j * row + i] * step_s[i];
        }
        first_f[j] = f;
        after_b[j] = b;
        after_w[j] = w;
    }
}

/* Overlapped gradient reduction of stage st (zero 0 to 2) beyond the end
 * of its pipeline work, as the programs issue it: each layer's reduction
 * (gs by kind, over DP and expert DP on the one data-parallel stream)
 * when the step producing its weight gradients for the last micro-batch
 * ends that layer, the head's after the head's part of that step, the
 * embedding's after the chunk's last backward; the stream plays them in
 * the order they are released.  Needs stage_margins. */
static double overlapped_grad_s(est_estimator *e, const cfg_strategy *s, int st, const double *gs, const double *gsw,
                                double embed_s, double embed_sw, double head_s, double head_sw)
{
    const cfg_model *m = e->m;
    const probe *pr = &e->pr;
    int v = cfg_stage_chunks(s), last = s->pp * v - 1;
    int pass = wl_schedule_splits_w(s) ? WL_PASS_W : WL_PASS_B;
    const double *step_s = margins_of(e, st, v), *after_b = step_s + v * (WL_NPASSES + 1), *after_w = after_b + v;
    int np = 0;
    /* the last chunks finish first in every schedule: the pieces come
     * nearly in release order */
    for (int c = v - 1; c >= 0; c--) {
        int first, n = cfg_stage_layers(m, s, st, c, &first), g = cfg_global_chunk(s, st, c);
        /* from the end of the step that produces the chunk's weight gradients */
        double left = after_w[c] + step_s[c * WL_NPASSES + pass];
        if (g == last && pass == WL_PASS_B) left -= pr->head[1].total;
        if (g == last && head_s > 0) piece_add(e, &np, left, head_s, head_sw);
        for (int l = first + n - 1; l >= first; l--) {
            int k = wl_layer_kind(m, l);
            left -= layer_pass_s(pr, k, pass);
            piece_add(e, &np, left, gs[k], gsw[k]);
        }
        if (g == 0 && embed_s > 0) piece_add(e, &np, after_b[c], embed_s, embed_sw);
    }
    grad_piece *pc = e->pieces;
    for (int i = 1; i < np; i++) /* release order: the earliest (largest before) first */
        for (int j = i; j > 0 && pc[j - 1].before < pc[j].before; j--) {
            grad_piece x = pc[j];
            pc[j] = pc[j - 1];
            pc[j - 1] = x;
        }
    /* before the end of the stage's work (t < 0) a piece runs beside the
     * stage's own traffic and takes sw; what is left of it at the end runs
     * alone */
    double t = -INFINITY;
    for (int i = 0; i < np; i++) {
        const grad_piece *q = &e->pieces[i];
        double start = fmax(t, -q->before);
        if (start >= 0.0 || q->sw <= 0.0)
            t = start + q->s;
        else if (q->sw <= -start)
            t = start + q->sw;
        else
            t = (1.0 + start / q->sw) * q->s;
    }
    return np > 0 ? fmax(0.0, t) : 0.0;
}

/* Zero 1/2 with the parameter gather overlapped: how much the gathers the
 * programs issue at the start of the step (each layer's, ag by kind, in
 * chunk and layer order on the data-parallel stream) delay stage st's
 * first forward of a layer beyond when it would run (the stage's start,
 * c->fill, plus its work before that forward).  Needs stage_margins. */
static double overlapped_gather_s(est_estimator *e, const cfg_strategy *s, int st, const double *ag, double fill)
{
    const cfg_model *m = e->m;
    const probe *pr = &e->pr;
    int v = cfg_stage_chunks(s);
    const double *first_f = margins_of(e, st, v) + v * WL_NPASSES;
    double done = 0.0, late = 0.0;
    for (int c = 0; c < v; c++) {
        int first, n = cfg_stage_layers(m, s, st, c, &first);
        double at = fill + first_f[c] + (cfg_global_chunk(s, st, c) == 0 ? pr->embed[0].total : 0.0);
        for (int l = first; l < first + n; l++) {
            int k = wl_layer_kind(m, l);
            done += ag[k];
            late = fmax(late, done - at);
            at += layer_pass_s(pr, k, WL_PASS_F);
        }
    }
    return late;
}

/* The stage costs: with the zero stage: ZeRO-3 gathers, the pipeline time, and each
 * stage's tail (gradient reduction with and without overlap, optimizer,
 * parameter gathers). */
static void level_zero(est_estimator *e, const cfg_strategy *s, int v)
{
    const cfg_model *m = e->m;
    const cfg_platform *p = e->p;
    const probe *pr = &e->pr;
    const layout_geo *lg = pr->lg;
    int pp = s->pp, z = s->zero;
    double nmicro = cfg_micro_batches(s);

    if (e->margins_schedule != (int)s->schedule || e->margins_m != cfg_micro_batches(s) ||
        e->margins_flushes != cfg_flush_micro_batches(s))
        e->margins_ok = false;
    e->margins_schedule = (int)s->schedule;
    e->margins_m = cfg_micro_batches(s);
    e->margins_flushes = cfg_flush_micro_batches(s);

    double pdp[NKINDS], pedp[NKINDS], ag[NKINDS], rs[NKINDS], gs[NKINDS], zf[NKINDS], zb[NKINDS];
    double agn[NKINDS], gsn[NKINDS], rsn[NKINDS]; /* the NIC's part of ag, gs and rs */
    net_coll gkind = z >= 1 ? NET_REDUCESCATTER : NET_ALLREDUCE;
    mdl_precision prec;
    mdl_precision_of(m, s, &prec);
    double gb = prec.grad_bytes;
    for (int k = 0; k < NKINDS; k++) {
        layer_params(e, s, k, &pdp[k], &pedp[k]);
        agn[k] = gsn[k] = rsn[k] = 0.0;
        ag[k] = dp_coll_nic_s(e, s, lg, NET_ALLGATHER, pdp[k] * 2, pedp[k] * 2, &agn[k]);
        rs[k] = dp_coll_nic_s(e, s, lg, NET_REDUCESCATTER, pdp[k] * gb, pedp[k] * gb, &rsn[k]);
        gs[k] = dp_coll_nic_s(e, s, lg, gkind, pdp[k] * gb, pedp[k] * gb, &gsn[k]);
        zf[k] = zb[k] = 0.0;
        if (z == 3) {
            /* gathered one layer ahead on the DP stream: exposed beyond the layer's compute */
            double fwd = pr->layer[k][P_FWD].total;
            double bwd = pr->layer[k][P_BWD].total + pr->layer[k][P_REC].total + pr->layer[k][P_W].total;
            const probe_span_set ls = {&pr->layer[k][P_FWD], &pr->layer[k][P_BWD], &pr->layer[k][P_REC],
                                       &pr->layer[k][P_W]};
            double rf[2], rb[2], lb[2];
            for (int pl = 0; pl < 2; pl++) {
                rf[pl] = fwd > 0 ? fmax(0.05, 1.0 - ls.f->lost[pl] / fwd) : 1.0;
                lb[pl] = ls.b->lost[pl] + ls.r->lost[pl] + ls.w->lost[pl];
                rb[pl] = bwd > 0 ? fmax(0.05, 1.0 - lb[pl] / bwd) : 1.0;
            }
            double zr = s->overlap_grad_reduce ? rs[k] : 0.0, zrn = s->overlap_grad_reduce ? rsn[k] : 0.0;
            zf[k] = beyond_s(ag[k], stretched_s(ag[k], agn[k], rf), fwd);
            zb[k] = beyond_s(ag[k] + zr, stretched_s(ag[k] + zr, agn[k] + zrn, rb), bwd);
        }
    }

    e->p2p = 0.0;
    if (pp > 1) e->p2p = net_p2p_between_s(p, lg->pp_a, lg->pp_b, pr->p2p_bytes);
    /* transfers on the way down and back up; a V turns on its last stage
     * without one */
    e->hops = pp <= 1 ? 0.0 : cfg_v_schedule(s) ? 4.0 * (pp - 1) : 2.0 * (pp * v - 1);

    double cmax = 0, csum = 0;
    for (int st = 0; st < pp; st++) {
        const stage_row *r = &e->rows[st];
        stage_cost *c = &e->costs[st];
        double zx = 0.0;
        if (z == 3) {
            /* the first layer of each chunk also waits for its own gather */
            for (int k = 0; k < NKINDS; k++) zx += r->n[k] * (zf[k] + zb[k]);
            zx += r->chunks * 2.0 * ag[kind_lowest(r)];
        }
        c->zx = zx;
        c->F = r->f.total;
        c->B = r->b.total + zx;
        c->W = r->w.total;
        c->C = c->F + c->B + c->W;
        c->hidden = c->pair_hidden = 0.0;
        csum += c->C;
        if (c->C > cmax) cmax = c->C;
    }
    /* each of the pipeline_flushes runs of the schedule fills and drains
     * the pipeline: k times the bubble and the hops */
    double mf = cfg_flush_micro_batches(s), k = nmicro / mf;
    if (wl_schedule_splits_w(s))
        e->pipe = k * (split_pipeline(e, s, mf) + e->hops * e->p2p);
    else
        e->pipe = paired_work(e, s, mf, k, cmax) + k * ((csum - cmax) / v + e->hops * e->p2p);

    /* when each stage starts (fill) and how much earlier than stage 0 its
     * pipeline work ends (drain) */
    double drain = 0.0, fill = 0.0;
    for (int st = 0; st < pp; st++) {
        stage_cost *c = &e->costs[st];
        c->fill = fill;
        c->drain = drain;
        drain += c->B / v + e->p2p;
        fill += c->F / v + e->p2p;
    }
    if (wl_schedule_splits_w(s)) {
        /* ZB-H1's and DualPipe-V's W fill the cool-down: every stage ends
         * together; in ZB-V stage s ends the p - 1 - s chunk forwards of the
         * V's fill before the last one */
        drain = 0.0;
        for (int st = pp - 1; st >= 0; st--) {
            e->costs[st].drain = drain;
            if (s->schedule == CFG_SCHED_ZB_V) drain += e->costs[st].F / 2 + e->p2p;
        }
    }

    double ddp = wl_group_size(s, wl_param_group(s)), dedp = wl_group_size(s, WL_G_EDP);
    for (int st = 0; st < pp; st++) {
        const stage_row *r = &e->rows[st];
        stage_cost *c = &e->costs[st];
        double sdp = 0, sedp = 0, rate[2], gsw[NKINDS], agw[NKINDS];
        stage_rates(r, c, rate);
        for (int k = 0; k < NKINDS; k++) {
            gsw[k] = stretched_s(gs[k], gsn[k], rate);
            agw[k] = stretched_s(ag[k], agn[k], rate);
        }
        for (int k = 0; k < NKINDS; k++) {
            sdp += r->n[k] * pdp[k];
            sedp += r->n[k] * pedp[k];
        }
        /* the edges: embedding, head and the prediction modules (whose
         * routed experts reduce over expert DP) */
        mdl_held eh;
        mdl_edge_held(m, s, st, &eh);
        double edge = mdl_held_params(&eh, MDL_SYNC_DP), edge_edp = mdl_held_params(&eh, MDL_SYNC_EDP);
        if (z == 3) {
            /* per layer and micro-batch when overlapped (in zx); else the
             * gradients of every micro-batch pile up for one reduction */
            c->grad[1] = dp_coll_s(e, s, lg, NET_REDUCESCATTER, edge * gb, edge_edp * gb);
            c->grad[0] =
                dp_coll_s(e, s, lg, NET_REDUCESCATTER, (nmicro * sdp + edge) * gb, (nmicro * sedp + edge_edp) * gb);
        } else {
            /* the schedule places each layer's last weight gradients and
             * the stage's idle cool-down (the same for zero 0 to 2) */
            if (!e->margins_ok)
                stage_margins(e, s, st, fmax(0.0, e->pipe - c->drain - (nmicro * c->C - c->hidden) - c->fill));
            /* the embedding syncs apart, unless tied to a head on its own
             * stage under a split schedule (it then waits for the head's W) */
            double embed = st == 0 ? eh.params[MDL_PART_EMBEDDING] : 0.0;
            if (m->tied_embeddings && cfg_head_stage(s) == 0 && wl_schedule_splits_w(s)) embed = 0.0;
            double embed_n = 0.0, head_n = 0.0;
            double embed_s = embed > 0 ? dp_coll_nic_s(e, s, lg, gkind, embed * gb, 0.0, &embed_n) : 0.0;
            double head_s = edge > embed || edge_edp > 0
                                ? dp_coll_nic_s(e, s, lg, gkind, (edge - embed) * gb, edge_edp * gb, &head_n)
                                : 0.0;
            c->grad[1] = overlapped_grad_s(e, s, st, gs, gsw, embed_s, stretched_s(embed_s, embed_n, rate), head_s,
                                           stretched_s(head_s, head_n, rate));
            c->grad[0] = dp_coll_s(e, s, lg, gkind, (sdp + edge) * gb, (sedp + edge_edp) * gb);
        }
        sedp += edge_edp;
        double held = z >= 1 ? (sdp + edge) / ddp + sedp / dedp : sdp + edge + sedp;
        c->opt = cost_optimizer_s(e->cost, held, prec.step_bytes);
        c->gather = c->startx = 0.0;
        if (z == 1 || z == 2) {
            c->gather = dp_coll_s(e, s, lg, NET_ALLGATHER, (sdp + edge) * 2, sedp * 2);
            /* overlapped: gathered at the start, layer by layer, while the
             * first forwards run */
            c->startx = overlapped_gather_s(e, s, st, agw, c->fill);
        }
    }
    if (z < 3) e->margins_ok = true;
}

/* Whether key k stands for the probe of s. */
static bool probe_key_same(const est_estimator *e, const probe_key *k, const cfg_strategy *s)
{
    return k->split_w == wl_schedule_splits_w(s) && fields_same(&e->probe_fields, &k->s, s);
}

/* Make e->pr the probe of s: the one held, the other of the last two, or a
 * new one. */
static sim_rc probe_ensure(est_estimator *e, const cfg_strategy *s, sim_err *err)
{
    /* checked strategies only: the micro-batch count is whole */
    assert(s->dp > 0 && s->micro_batch > 0 && s->global_batch % (s->dp * s->micro_batch) == 0);
    if (e->have_probe && probe_key_same(e, &e->key, s)) return SIM_OK;
    layout_key lk = layout_key_of(s);
    if (e->have_spare && probe_key_same(e, &e->spare_key, s) && layout_geo_find(e, &lk) == e->spare.lg) {
        /* the other of the last two probes (its layout still cached) */
        probe pr = e->pr;
        e->pr = e->spare;
        e->spare = pr;
        probe_key k = e->spare_key;
        e->spare_key = e->key;
        e->key = k;
    } else {
        if (e->have_probe) {
            e->spare = e->pr;
            e->spare_key = e->key;
            e->have_spare = true;
        }
        e->have_probe = false;
        sim_rc rc = probe_build(e, s, err);
        if (rc != SIM_OK) return rc;
        e->key.s = *s;
        e->key.split_w = wl_schedule_splits_w(s);
    }
    e->have_probe = true;
    e->serial++;
    e->stages_serial = e->zero_serial = -1;
    return SIM_OK;
}

/* The seconds of one micro-batch of probe pr over every layer and edge of
 * the model, and of them its expert all-to-all. */
static void probe_sums(const est_estimator *e, const probe *pr, double *total, double *ep)
{
    double t = 0.0, a = 0.0;
    for (int k = 0; k < NKINDS; k++)
        for (int ps = 0; ps < NPASSES; ps++) {
            t += e->nlayers[k] * pr->layer[k][ps].total;
            a += e->nlayers[k] * pr->layer[k][ps].comm[WL_DIM_EP];
        }
    const span *edges[4] = {&pr->embed[0], &pr->embed[1], &pr->head[0], &pr->head[1]};
    for (int i = 0; i < 4; i++) {
        t += edges[i]->total;
        a += edges[i]->comm[WL_DIM_EP];
    }
    *total = t;
    *ep = a;
}

sim_rc est_floor(est_estimator *e, const cfg_strategy *s, double *floor_s, sim_err *err)
{
    sim_rc rc = probe_ensure(e, s, err);
    if (rc != SIM_OK) return rc;
    /* Every layer, the embedding and the head once over the stages:
     * sum(C) (level_stages), of which the busiest stage has at least
     * 1/pp; DualPipe-V's overlapped pairs hide at most each micro-batch's
     * expert all-to-all (split_pipeline: 2m pairs at most, each hiding
     * at most half of it twice). */
    double total, ep;
    probe_sums(e, &e->pr, &total, &ep);
    double work = s->schedule == CFG_SCHED_DUALPIPE_V ? total - ep : total;
    /* a little under, for the rounding of sums added in another order */
    *floor_s = fmax(0.0, cfg_micro_batches(s) * (work - 1e-9 * total) / s->pp * (1.0 - 1e-6));
    return SIM_OK;
}

sim_rc est_step(est_estimator *e, const cfg_strategy *s, est_result *out, sim_err *err)
{
    sim_rc prc = probe_ensure(e, s, err);
    if (prc != SIM_OK) return prc;
    int v = cfg_stage_chunks(s);
    int z = s->zero;
    bool og = s->overlap_grad_reduce, op = s->overlap_param_gather;
    /* the stage rows and costs are kept while the fields of the keys
     * flagged for them stay the same (the key table says which) */
    if (e->stages_serial != e->serial || !fields_same(&e->rows_fields, s, &e->rows_key)) {
        level_stages(e, s, v);
        e->stages_serial = e->serial;
        e->rows_key = *s;
        e->zero_serial = -1;
    }
    bool costs_ogr = z == 3 && og; /* the costs read it for ZeRO-3's per-layer gathers only */
    if (e->zero_serial != e->serial || costs_ogr != e->costs_ogr || !fields_same(&e->costs_fields, s, &e->costs_key)) {
        level_zero(e, s, v);
        e->zero_serial = e->serial;
        e->costs_key = *s;
        e->costs_ogr = costs_ogr;
    }

    /* Last, the overlap switches pick each stage's tail. */
    int pp = s->pp, crit = 0;
    double best = -1, start = 0.0;
    bool gathers_early = (z == 1 || z == 2) && op;
    bool gathers_late = (z == 1 || z == 2) && !op;
    for (int st = 0; st < pp; st++) {
        const stage_cost *c = &e->costs[st];
        double end = e->pipe - c->drain + c->grad[og ? 1 : 0] + c->opt + (gathers_late ? c->gather : 0.0);
        if (end > best) {
            best = end;
            crit = st;
        }
        if (gathers_early && c->startx > start) start = c->startx;
    }

    memset(out, 0, sizeof *out);
    const stage_row *r = &e->rows[crit];
    const stage_cost *c = &e->costs[crit];
    double nmicro = cfg_micro_batches(s);
    out->step_s = best + start;
    out->critical_stage = crit;
    out->optimizer_s = c->opt;
    double comm = 0;
    for (int d = 0; d < WL_NDIMS; d++) {
        out->exposed_s[d] = nmicro * (r->f.comm[d] + r->b.comm[d] + r->w.comm[d]);
        comm += r->f.comm[d] + r->b.comm[d] + r->w.comm[d];
    }
    out->exposed_s[WL_DIM_EP] -= c->hidden;
    out->compute_s = nmicro * (r->f.total + r->b.total + r->w.total - comm);
    double tail_dp = c->grad[og ? 1 : 0] + (gathers_late ? c->gather : 0.0);
    out->exposed_s[WL_DIM_DP] += nmicro * c->zx + tail_dp + start;
    out->exposed_s[WL_DIM_PP] = e->hops * e->p2p;
    out->bubble_s = fmax(0.0, best - c->opt - tail_dp - (nmicro * c->C - c->hidden) - e->hops * e->p2p);
    return SIM_OK;
}

/* }========================================================= closed form */
