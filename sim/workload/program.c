/* program.c - one rank's instruction stream, generated lazily.
 *
 * The stream is cut into segments: a prologue (parameter all-gathers that
 * overlap the first forwards), one segment per pipeline step of the stage's
 * schedule, and an epilogue (gradient sync, optimizer, parameter gather).
 * Only the current segment is held in memory: a few hundred instructions. */
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "internal.h"

/* The layers of one model chunk of the rank's stage (cfg_stage_layers). */
typedef struct chunk_layers {
    int first;  /* global index of its first layer */
    int count;  /* its layers */
    int local;  /* index of its first layer among the stage's layers */
} chunk_layers;

struct wl_program {
    const wl_plan *plan;
    int rank, stage, pp, vchunks;
    chunk_layers *chunk;         /* per model chunk of the stage */
    int prev, next;              /* pipeline peers (wrapping for interleaving), -1 when none */
    int segment;                 /* -1 prologue, 0..nsteps-1 steps, nsteps epilogue */
    wl_ops buf;
    int pos;
    uint32_t issued[WL_NSTREAMS];
    uint32_t *gather_seq;        /* per layer of the stage: DP stream count to wait for, 0 = none */
    bool *chunk_seen;            /* per chunk: its first forward has run */
    int *bwd_done;               /* per chunk: backward steps done */
    double act_bytes;            /* p2p message between stages */
    double dp_params, edp_params;        /* this rank's parameters per sync group */
    double pending_dp, pending_edp;      /* gradients not yet synchronised (no overlap) */
};

static bool param_gather_overlapped(const cfg_strategy *s)
{
    return (s->zero == 1 || s->zero == 2) && s->overlap_param_gather;
}

/* Append one instruction, resolving stream sequence numbers. */
static void put(wl_program *p, wl_instr in, int layer, int micro)
{
    if (in.layer < 0) in.layer = layer;
    if (in.micro < 0) in.micro = micro;
    if (in.op == WL_COLL && in.stream != WL_S_MAIN) p->issued[in.stream]++;
    if (in.op == WL_WAIT && in.seq == 0) in.seq = p->issued[in.stream];
    wl_ops_push(&p->buf, &in);
}

static void put_ops(wl_program *p, const wl_ops *ops, int layer, int micro)
{
    for (int i = 0; i < ops->n; i++) put(p, ops->a[i], layer, micro);
}

static wl_instr make(wl_op op, wl_phase ph, int label)
{
    wl_instr in = {0};
    in.op = (uint8_t)op;
    in.phase = (uint8_t)ph;
    in.label = (uint16_t)label;
    in.layer = -1;
    in.micro = -1;
    in.peer = -1;
    return in;
}

static void put_phase(void *ctx, const wl_instr *phase)
{
    put(ctx, *phase, -1, -1);
}

static void put_coll(wl_program *p, wl_phase ph, int label, wl_coll kind, wl_group g, double bytes, wl_stream st,
                     int layer)
{
    wl_instr in = make(WL_COLL, ph, label); /* wl_coll_phases drops groups of one */
    in.coll = (uint8_t)kind;
    in.group = (uint8_t)g;
    in.stream = (uint8_t)st;
    in.bytes = bytes;
    in.layer = layer;
    wl_coll_phases(p->plan->s, &in, put_phase, p);
}

/* An activation (forward) or its gradient (backward) to or from a pipeline
 * neighbour. */
static void put_p2p(wl_program *p, wl_op op, bool backward, int micro)
{
    wl_instr in = make(op, backward ? WL_PH_BACKWARD : WL_PH_FORWARD, backward ? WL_L_PP_GRAD : WL_L_PP_ACT);
    in.group = WL_G_PP;
    in.peer = (op == WL_SEND) == backward ? p->prev : p->next;
    in.tag = backward ? WL_TAG_BWD : WL_TAG_FWD;
    in.bytes = p->act_bytes;
    put(p, in, -1, micro);
}

static const wl_layer_ops *layer_ops(const wl_plan *plan, int layer)
{
    return &plan->layer[wl_layer_kind(plan->m, layer)];
}

/* Gradient reduction of one layer's (or edge's) parameters. */
static void grad_sync(wl_program *p, double dp_params, double edp_params, int layer)
{
    const cfg_strategy *s = p->plan->s;
    if (!s->overlap_grad_reduce) {
        p->pending_dp += dp_params;
        p->pending_edp += edp_params;
        return;
    }
    wl_coll kind = s->zero >= 1 ? WL_REDUCESCATTER : WL_ALLREDUCE;
    double gb = MDL_GRAD_BYTES_PER_PARAM;
    put_coll(p, WL_PH_GRAD_SYNC, WL_L_DP_GRAD, kind, WL_G_DP, dp_params * gb, WL_S_DP, layer);
    put_coll(p, WL_PH_GRAD_SYNC, WL_L_EDP_GRAD, kind, WL_G_EDP, edp_params * gb, WL_S_DP, layer);
}

/* ZeRO-3: gather one layer's parameters on the DP stream; returns the
 * stream count to wait for. */
static uint32_t gather_layer(wl_program *p, int layer, wl_phase ph)
{
    const wl_layer_ops *lo = layer_ops(p->plan, layer);
    put_coll(p, ph, WL_L_DP_PARAM, WL_ALLGATHER, WL_G_DP, lo->params_dp * 2, WL_S_DP, layer);
    put_coll(p, ph, WL_L_EDP_PARAM, WL_ALLGATHER, WL_G_EDP, lo->params_edp * 2, WL_S_DP, layer);
    return p->issued[WL_S_DP];
}

static void wait_dp(wl_program *p, uint32_t seq, wl_phase ph, int layer, int micro)
{
    if (!seq) return;
    wl_instr w = make(WL_WAIT, ph, WL_L_WAIT);
    w.stream = WL_S_DP;
    w.seq = seq;
    put(p, w, layer, micro);
}

/* The layers of a chunk, forward or backward, with ZeRO-3's parameter
 * gathers prefetched one layer ahead. */
static void run_layers(wl_program *p, int chunk, int micro, bool bwd, bool final_micro)
{
    const wl_plan *plan = p->plan;
    const cfg_strategy *s = plan->s;
    int lpc = p->chunk[chunk].count, first = p->chunk[chunk].first;
    bool zero3 = s->zero == 3;
    wl_phase ph = bwd ? WL_PH_BACKWARD : WL_PH_FORWARD;
    uint32_t next_seq = 0;
    for (int k = 0; k < lpc; k++) {
        int i = bwd ? lpc - 1 - k : k, layer = first + i;
        const wl_layer_ops *lo = layer_ops(plan, layer);
        uint32_t seq = 0;
        if (zero3) {
            seq = k == 0 ? gather_layer(p, layer, ph) : next_seq;
            if (k + 1 < lpc) next_seq = gather_layer(p, first + (bwd ? i - 1 : i + 1), ph);
        } else if (!bwd && !p->chunk_seen[chunk]) {
            seq = p->gather_seq[p->chunk[chunk].local + i];
        }
        wait_dp(p, seq, ph, layer, micro);
        if (!bwd) {
            put_ops(p, &lo->fwd, layer, micro);
            continue;
        }
        put_ops(p, &lo->recompute, layer, micro);
        put_ops(p, &lo->bwd, layer, micro);
        if (final_micro || zero3) grad_sync(p, lo->params_dp, lo->params_edp, layer);
    }
}

static void prologue(wl_program *p)
{
    const wl_plan *plan = p->plan;
    if (!param_gather_overlapped(plan->s)) return;
    for (int c = 0; c < p->vchunks; c++)
        for (int i = 0; i < p->chunk[c].count; i++) {
            int layer = p->chunk[c].first + i;
            const wl_layer_ops *lo = layer_ops(plan, layer);
            put_coll(p, WL_PH_OPTIMIZER, WL_L_DP_PARAM, WL_ALLGATHER, WL_G_DP, lo->params_dp * 2, WL_S_DP, layer);
            put_coll(p, WL_PH_OPTIMIZER, WL_L_EDP_PARAM, WL_ALLGATHER, WL_G_EDP, lo->params_edp * 2, WL_S_DP, layer);
            p->gather_seq[p->chunk[c].local + i] = p->issued[WL_S_DP];
        }
}

static void forward_step(wl_program *p, int chunk, int micro)
{
    const wl_plan *plan = p->plan;
    bool first = p->stage == 0 && chunk == 0;
    bool last = p->stage == p->pp - 1 && chunk == p->vchunks - 1;
    if (!first) {
        put_p2p(p, WL_RECV, false, micro);
    } else {
        put_ops(p, &plan->edge.embed_fwd, -1, micro);
    }
    run_layers(p, chunk, micro, false, false);
    p->chunk_seen[chunk] = true;
    if (last) {
        put_ops(p, &plan->edge.head_fwd, -1, micro);
    } else {
        put_p2p(p, WL_SEND, false, micro);
    }
}

static void backward_step(wl_program *p, int chunk, int micro)
{
    const wl_plan *plan = p->plan;
    bool first = p->stage == 0 && chunk == 0;
    bool last = p->stage == p->pp - 1 && chunk == p->vchunks - 1;
    bool final_micro = ++p->bwd_done[chunk] == plan->micro_batches;
    if (last) {
        put_ops(p, &plan->edge.head_bwd, -1, micro);
        if (final_micro) grad_sync(p, plan->edge.head_params, plan->edge.head_params_edp, -1);
    } else {
        put_p2p(p, WL_RECV, true, micro);
    }
    run_layers(p, chunk, micro, true, final_micro);
    if (first) {
        put_ops(p, &plan->edge.embed_bwd, -1, micro);
        if (final_micro) grad_sync(p, plan->edge.embed_params, 0, -1);
    } else {
        put_p2p(p, WL_SEND, true, micro);
    }
}

static void epilogue(wl_program *p)
{
    const wl_plan *plan = p->plan;
    const cfg_strategy *s = plan->s;
    wl_coll kind = s->zero >= 1 ? WL_REDUCESCATTER : WL_ALLREDUCE;
    if (s->overlap_grad_reduce) {
        if (p->issued[WL_S_DP]) {
            wl_instr w = make(WL_WAIT, WL_PH_GRAD_SYNC, WL_L_WAIT);
            w.stream = WL_S_DP;
            put(p, w, -1, -1);
        }
    } else {
        double gb = MDL_GRAD_BYTES_PER_PARAM;
        put_coll(p, WL_PH_GRAD_SYNC, WL_L_DP_GRAD, kind, WL_G_DP, p->pending_dp * gb, WL_S_MAIN, -1);
        put_coll(p, WL_PH_GRAD_SYNC, WL_L_EDP_GRAD, kind, WL_G_EDP, p->pending_edp * gb, WL_S_MAIN, -1);
    }
    double ddp = wl_group_size(s, WL_G_DP), dedp = wl_group_size(s, WL_G_EDP);
    double held = s->zero >= 1 ? p->dp_params / ddp + p->edp_params / dedp : p->dp_params + p->edp_params;
    wl_instr opt = make(WL_COMPUTE, WL_PH_OPTIMIZER, WL_L_OPTIMIZER);
    opt.seconds = cost_optimizer_s(plan->c, held);
    put(p, opt, -1, -1);
    if ((s->zero == 1 || s->zero == 2) && !param_gather_overlapped(s)) {
        put_coll(p, WL_PH_OPTIMIZER, WL_L_DP_PARAM, WL_ALLGATHER, WL_G_DP, p->dp_params * 2, WL_S_MAIN, -1);
        put_coll(p, WL_PH_OPTIMIZER, WL_L_EDP_PARAM, WL_ALLGATHER, WL_G_EDP, p->edp_params * 2, WL_S_MAIN, -1);
    }
}

wl_program *wl_program_new(const wl_plan *plan, int rank)
{
    const cfg_strategy *s = plan->s;
    const cfg_model *m = plan->m;
    wl_program *p = sim_xcalloc(1, sizeof *p);
    p->plan = plan;
    p->rank = rank;
    p->pp = s->pp;
    p->vchunks = cfg_stage_chunks(s);
    p->stage = wl_stage(plan, rank);
    int stride = plan->layout.stride[CFG_DIM_PP];
    if (s->pp > 1) {
        p->prev = rank + (((p->stage + s->pp - 1) % s->pp) - p->stage) * stride;
        p->next = rank + (((p->stage + 1) % s->pp) - p->stage) * stride;
    } else {
        p->prev = p->next = -1;
    }
    p->segment = -1;
    p->chunk = sim_xcalloc((size_t)p->vchunks, sizeof *p->chunk);
    int nlocal = 0;
    for (int c = 0; c < p->vchunks; c++) {
        p->chunk[c].count = cfg_stage_layers(m, s, p->stage, c, &p->chunk[c].first);
        p->chunk[c].local = nlocal;
        nlocal += p->chunk[c].count;
    }
    p->gather_seq = sim_xcalloc((size_t)nlocal, sizeof *p->gather_seq);
    p->chunk_seen = sim_xcalloc((size_t)p->vchunks, sizeof *p->chunk_seen);
    p->bwd_done = sim_xcalloc((size_t)p->vchunks, sizeof *p->bwd_done);
    double act = (double)s->micro_batch * m->seq_len / cfg_cp(s) * m->hidden * m->dtype_bytes;
    if (s->sequence_parallel || s->tp_y > 1) act /= cfg_tp(s);
    p->act_bytes = act;
    mdl_stage_params(m, s, p->stage, &p->dp_params, &p->edp_params);
    return p;
}

void wl_program_free(wl_program *p)
{
    if (!p) return;
    wl_ops_free(&p->buf);
    free(p->chunk);
    free(p->gather_seq);
    free(p->chunk_seen);
    free(p->bwd_done);
    free(p);
}

bool wl_program_next(wl_program *p, wl_instr *out)
{
    const wl_plan *plan = p->plan;
    int nsteps = plan->schedule_len[p->stage];
    while (p->pos >= p->buf.n) {
        if (p->segment > nsteps) return false;
        p->buf.n = 0;
        p->pos = 0;
        if (p->segment < 0) {
            prologue(p);
        } else if (p->segment < nsteps) {
            const wl_step *st = &plan->schedule[p->stage][p->segment];
            if (st->backward)
                backward_step(p, st->chunk, st->micro);
            else
                forward_step(p, st->chunk, st->micro);
        } else {
            epilogue(p);
        }
        p->segment++;
    }
    *out = p->buf.a[p->pos++];
    return true;
}

double wl_rank_compute_s(const wl_plan *plan, int rank, double *by_phase)
{
    double total = 0;
    if (by_phase) memset(by_phase, 0, WL_NPHASES * sizeof *by_phase);
    wl_program *p = wl_program_new(plan, rank);
    wl_instr in;
    while (wl_program_next(p, &in)) {
        if (in.op != WL_COMPUTE) continue;
        total += in.seconds;
        if (by_phase) by_phase[in.phase] += in.seconds;
    }
    wl_program_free(p);
    return total;
}
