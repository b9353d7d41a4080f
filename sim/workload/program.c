/* program.c - one rank's instruction stream, generated lazily.
 *
 * The stream is cut into segments: a prologue (parameter all-gathers that
 * overlap the first forwards), one segment per pipeline step of the stage's
 * schedule (two for an overlapped pair), and an epilogue (gradient sync,
 * optimizer, parameter gather).  Only the current segment is held in
 * memory: a few hundred instructions.
 *
 * A step receives its input (activation or gradient) from the stage that
 * holds the previous global chunk, runs its body, and sends its output on;
 * where that stage is its own (the turn of a V) nothing is sent.  Weight
 * gradients are produced by a backward that is not split, or by the W
 * step of a split one: the gradient sync of a layer follows the last of
 * them.  An overlapped pair (DualPipe's F&B, or a steady step of the paired
 * 1F1B of schedule.c) receives both inputs, runs the
 * two bodies as two threads that take turns at each expert all-to-all (run
 * on the EP stream while the other thread computes), then sends both
 * outputs. */
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
    int stride;                  /* rank offset of one pipeline stage */
    int segment;                 /* -1 prologue, 0..nsteps-1 steps, nsteps epilogue */
    wl_ops buf;
    int pos;
    uint32_t issued[WL_NSTREAMS];
    uint32_t *gather_seq;        /* per layer of the stage: DP stream count to wait for, 0 = none */
    bool *chunk_seen;            /* per chunk: its first forward has run */
    int *bwd_done;               /* per chunk: backward steps done */
    int *wgt_done;               /* per chunk: steps that produced weight gradients */
    wl_ops pair;                 /* the two bodies of an overlapped pair, before they are merged */
    uint32_t *renum[WL_NSTREAMS];  /* merge scratch: new sequence numbers of the pair's async ops */
    int renum_cap[WL_NSTREAMS];
    double act_bytes;            /* p2p message between stages */
    double dp_params, edp_params;        /* this rank's parameters per sync group */
    double pending_dp, pending_edp;      /* gradients not yet synchronised (no overlap) */
    mdl_precision prec;                  /* bytes per parameter: gradients reduced, optimizer step */
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

/* Append op templates; a template's WAIT counts back from the stream's
 * latest op (its seq: how many of the latest it may leave running). */
static void put_ops(wl_program *p, const wl_ops *ops, int layer, int micro)
{
    for (int i = 0; i < ops->n; i++) {
        wl_instr in = ops->a[i];
        if (in.op == WL_WAIT && in.seq > 0 && in.stream < WL_NSTREAMS) in.seq = p->issued[in.stream] - in.seq;
        put(p, in, layer, micro);
    }
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

/* The rank of my pipeline holding global chunk g, or -1 when g is outside
 * the model or on my own stage (nothing to transfer). */
static int chunk_peer(const wl_program *p, int g)
{
    if (g < 0 || g >= p->pp * p->vchunks) return -1;
    int st = cfg_chunk_stage(p->plan->s, g, NULL);
    return st == p->stage ? -1 : p->rank + (st - p->stage) * p->stride;
}

static int global_chunk(const wl_program *p, int chunk)
{
    return cfg_global_chunk(p->plan->s, p->stage, chunk);
}

/* An activation (forward) or its gradient (backward) to or from the rank
 * holding global chunk g (nothing when it is this stage's). */
static void put_p2p(wl_program *p, wl_op op, bool backward, int g, int micro)
{
    int peer = chunk_peer(p, g);
    if (peer < 0) return;
    wl_instr in = make(op, backward ? WL_PH_BACKWARD : WL_PH_FORWARD, backward ? WL_L_PP_GRAD : WL_L_PP_ACT);
    in.group = WL_G_PP;
    in.peer = peer;
    in.tag = backward ? WL_TAG_BWD : WL_TAG_FWD;
    in.bytes = p->act_bytes;
    put(p, in, -1, micro);
}

static const wl_layer_ops *layer_ops(const wl_plan *plan, int layer)
{
    return &plan->layer[wl_layer_kind(plan->m, layer)];
}

/* The reduction of `bytes` of dense gradients over DP; with HSDP a
 * reduce-scatter in the shard group, then an all-reduce of the shard
 * across the replicas. */
static void put_dense_grad(wl_program *p, wl_coll kind, double bytes, wl_stream st, int layer)
{
    const cfg_strategy *s = p->plan->s;
    if (!wl_hybrid_sharded(s)) {
        put_coll(p, WL_PH_GRAD_SYNC, WL_L_DP_GRAD, kind, WL_G_DP, bytes, st, layer);
        return;
    }
    put_coll(p, WL_PH_GRAD_SYNC, WL_L_DP_GRAD, WL_REDUCESCATTER, WL_G_DPS, bytes, st, layer);
    put_coll(p, WL_PH_GRAD_SYNC, WL_L_DP_GRAD, WL_ALLREDUCE, WL_G_DPR, bytes / cfg_dp_shard(s), st, layer);
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
    double gb = p->prec.grad_bytes;
    put_dense_grad(p, kind, dp_params * gb, WL_S_DP, layer);
    put_coll(p, WL_PH_GRAD_SYNC, WL_L_EDP_GRAD, kind, WL_G_EDP, edp_params * gb, WL_S_DP, layer);
}

/* ZeRO-3: gather one layer's parameters on the DP stream; returns the
 * stream count to wait for. */
static uint32_t gather_layer(wl_program *p, int layer, wl_phase ph)
{
    const wl_layer_ops *lo = layer_ops(p->plan, layer);
    put_coll(p, ph, WL_L_DP_PARAM, WL_ALLGATHER, wl_param_group(p->plan->s), lo->params_dp * 2, WL_S_DP, layer);
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

/* The layers of a chunk for one pass, with ZeRO-3's parameter gathers
 * prefetched one layer ahead (the weight-gradient pass needs no weights).
 * wgrads: the pass produces the layers' weight gradients (a backward that
 * is not split, or a W); final: for the last time this step. */
static void run_layers(wl_program *p, int chunk, int micro, wl_pass pass, bool wgrads, bool final)
{
    const wl_plan *plan = p->plan;
    const cfg_strategy *s = plan->s;
    int lpc = p->chunk[chunk].count, first = p->chunk[chunk].first;
    bool zero3 = s->zero == 3, bwd = pass != WL_PASS_F, gather = zero3 && pass != WL_PASS_W;
    wl_phase ph = pass == WL_PASS_F ? WL_PH_FORWARD : pass == WL_PASS_B ? WL_PH_BACKWARD : WL_PH_WGRAD;
    uint32_t next_seq = 0;
    for (int k = 0; k < lpc; k++) {
        int i = bwd ? lpc - 1 - k : k, layer = first + i;
        const wl_layer_ops *lo = layer_ops(plan, layer);
        uint32_t seq = 0;
        if (gather) {
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
        if (pass == WL_PASS_B) {
            put_ops(p, &lo->recompute, layer, micro);
            put_ops(p, &lo->bwd, layer, micro);
        }
        if (!wgrads) continue;
        put_ops(p, &lo->wgrad, layer, micro); /* empty unless the plan splits W */
        if (final || zero3) grad_sync(p, lo->params_dp, lo->params_edp, layer);
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

/* The receive of a step's input and the send of its output: activations
 * flow to the next global chunk, their gradients back to the previous. */
static void step_recv(wl_program *p, const wl_step *st)
{
    int g = global_chunk(p, st->chunk);
    if (st->pass == WL_PASS_F) put_p2p(p, WL_RECV, false, g - 1, st->micro);
    if (st->pass == WL_PASS_B) put_p2p(p, WL_RECV, true, g + 1, st->micro);
}

static void step_send(wl_program *p, const wl_step *st)
{
    int g = global_chunk(p, st->chunk);
    if (st->pass == WL_PASS_F) put_p2p(p, WL_SEND, false, g + 1, st->micro);
    if (st->pass == WL_PASS_B) put_p2p(p, WL_SEND, true, g - 1, st->micro);
}

/* The compute and collectives of a step: the layers of its chunk, with the
 * embedding before the model's first chunk and the head after its last. */
static void step_body(wl_program *p, const wl_step *st)
{
    const wl_plan *plan = p->plan;
    const wl_edge_ops *e = &plan->edge;
    int c = st->chunk, micro = st->micro, g = global_chunk(p, c);
    bool first = g == 0, last = g == p->pp * p->vchunks - 1;
    int m = plan->micro_batches;
    if (st->pass == WL_PASS_F) {
        if (first) put_ops(p, &e->embed_fwd, -1, micro);
        run_layers(p, c, micro, WL_PASS_F, false, false);
        p->chunk_seen[c] = true;
        if (last) put_ops(p, &e->head_fwd, -1, micro);
        return;
    }
    bool wgrads = st->pass == WL_PASS_W || !st->split;
    bool final_b = st->pass == WL_PASS_B && ++p->bwd_done[c] == m;
    bool final_w = wgrads && ++p->wgt_done[c] == m;
    if (last) {
        if (st->pass == WL_PASS_B) put_ops(p, &e->head_bwd, -1, micro);
        if (wgrads) put_ops(p, &e->head_wgrad, -1, micro);
        if (final_w)
            grad_sync(p, e->head_params + (e->embed_syncs_with_head ? e->embed_params : 0), e->head_params_edp, -1);
    }
    run_layers(p, c, micro, (wl_pass)st->pass, wgrads, final_w);
    if (first && st->pass == WL_PASS_B) { /* the embedding's gradient comes with its backward */
        put_ops(p, &e->embed_bwd, -1, micro);
        if (final_b && !e->embed_syncs_with_head) grad_sync(p, e->embed_params, 0, -1);
    }
}

static void run_step(wl_program *p, const wl_step *st)
{
    step_recv(p, st);
    step_body(p, st);
    step_send(p, st);
}

/* The new sequence number of the pair's async op `old` on stream st
 * (numbered first, 1-based); grows the table. */
static uint32_t *renum_slot(wl_program *p, int st, uint32_t first, uint32_t old)
{
    int i = (int)(old - first);
    if (i >= p->renum_cap[st]) {
        int cap = p->renum_cap[st] ? 2 * p->renum_cap[st] : 64;
        while (cap <= i) cap *= 2;
        p->renum[st] = sim_xrealloc(p->renum[st], (size_t)cap * sizeof *p->renum[st]);
        p->renum_cap[st] = cap;
    }
    return &p->renum[st][i];
}

static void put_ep_wait(wl_program *p, uint32_t seq, const wl_instr *like)
{
    wl_instr w = make(WL_WAIT, (wl_phase)like->phase, WL_L_WAIT);
    w.stream = WL_S_EP;
    w.seq = seq;
    w.layer = like->layer;
    w.micro = like->micro;
    wl_ops_push(&p->buf, &w);
}

/* Appends the two bodies a[0..na) and b[0..nb) (built one after the other
 * from stream counts base, b starting at mid) as two threads: a runs until
 * its first expert all-to-all, which starts on the EP stream, then b runs
 * until its own, and so on; a thread waits for its all-to-all before it
 * goes on.  Async ops are renumbered in the merged order, and each wait
 * keeps waiting for the op of its own thread it waited for. */
static void merge_pair(wl_program *p, const wl_instr *a, int na, const wl_instr *b, int nb,
                       const uint32_t base[WL_NSTREAMS], const uint32_t mid[WL_NSTREAMS])
{
    const wl_instr *th[2] = {a, b};
    int n[2] = {na, nb}, pos[2] = {0, 0}, cur = 0;
    uint32_t own[2][WL_NSTREAMS] = {{0}}, pending[2] = {0, 0};
    memcpy(p->issued, base, sizeof p->issued);
    while (pos[0] < n[0] || pos[1] < n[1]) {
        if (pos[cur] >= n[cur]) cur ^= 1;
        wl_instr in = th[cur][pos[cur]++];
        if (pending[cur]) {
            put_ep_wait(p, pending[cur], &in);
            pending[cur] = 0;
        }
        int st = in.stream;
        if (in.op == WL_COLL && st == WL_S_MAIN && in.group == WL_G_EP) {
            in.stream = WL_S_EP;
            wl_ops_push(&p->buf, &in);
            pending[cur] = ++p->issued[WL_S_EP];
            if (pos[cur ^ 1] < n[cur ^ 1]) cur ^= 1;
            continue;
        }
        if (in.op == WL_COLL && st != WL_S_MAIN) {
            uint32_t old = (cur ? mid[st] : base[st]) + ++own[cur][st];
            *renum_slot(p, st, base[st] + 1, old) = ++p->issued[st];
        } else if (in.op == WL_WAIT && st != WL_S_MAIN && in.seq > base[st]) {
            /* b's "everything so far" counted a's ops, which b does not need */
            if (cur == 1 && in.seq <= mid[st])
                in.seq = base[st];
            else
                in.seq = *renum_slot(p, st, base[st] + 1, in.seq);
        }
        wl_ops_push(&p->buf, &in);
    }
    for (int t = 0; t < 2; t++)
        if (pending[t]) put_ep_wait(p, pending[t], &th[t][n[t] - 1]);
}

/* The overlapped forward and backward of two micro-batches (DualPipe's
 * F&B, paired 1F1B's steady steps). */
static void run_pair(wl_program *p, const wl_step *f, const wl_step *b)
{
    step_recv(p, f);
    step_recv(p, b);
    uint32_t base[WL_NSTREAMS], mid[WL_NSTREAMS];
    int start = p->buf.n;
    memcpy(base, p->issued, sizeof base);
    step_body(p, f);
    int na = p->buf.n - start;
    memcpy(mid, p->issued, sizeof mid);
    step_body(p, b);
    p->pair.n = 0;
    for (int i = start; i < p->buf.n; i++) wl_ops_push(&p->pair, &p->buf.a[i]);
    p->buf.n = start;
    merge_pair(p, p->pair.a, na, p->pair.a + na, p->pair.n - na, base, mid);
    step_send(p, f);
    step_send(p, b);
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
        double gb = p->prec.grad_bytes;
        put_dense_grad(p, kind, p->pending_dp * gb, WL_S_MAIN, -1);
        put_coll(p, WL_PH_GRAD_SYNC, WL_L_EDP_GRAD, kind, WL_G_EDP, p->pending_edp * gb, WL_S_MAIN, -1);
    }
    double ddp = wl_group_size(s, wl_param_group(s)), dedp = wl_group_size(s, WL_G_EDP);
    double held = s->zero >= 1 ? p->dp_params / ddp + p->edp_params / dedp : p->dp_params + p->edp_params;
    wl_instr opt = make(WL_COMPUTE, WL_PH_OPTIMIZER, WL_L_OPTIMIZER);
    opt.seconds = cost_optimizer_s(plan->c, held, p->prec.step_bytes);
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
    p->stride = plan->layout.stride[CFG_DIM_PP];
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
    p->wgt_done = sim_xcalloc((size_t)p->vchunks, sizeof *p->wgt_done);
    double act = (double)s->micro_batch * m->seq_len / cfg_cp(s) * m->hidden * m->dtype_bytes;
    if (s->sequence_parallel || s->tp_y > 1) act /= cfg_tp(s);
    p->act_bytes = act;
    mdl_stage_params(m, s, p->stage, &p->dp_params, &p->edp_params);
    mdl_precision_of(m, s, &p->prec);
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
    free(p->wgt_done);
    wl_ops_free(&p->pair);
    for (int st = 0; st < WL_NSTREAMS; st++) free(p->renum[st]);
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
            if (st->paired && p->segment + 1 < nsteps) {
                run_pair(p, st, st + 1);
                p->segment++;
            } else {
                run_step(p, st);
            }
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
