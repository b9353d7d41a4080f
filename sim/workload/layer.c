/* layer.c - the op templates of one transformer layer on one rank, and of
 * the first and last stage's extras (embedding, logits and loss); the
 * kinds of layer (dense or MoE, full or windowed attention).
 *
 * Shapes follow Megatron's layout for 1D tensor parallel (column-parallel
 * QKV and FC1, row-parallel projection and FC2): without sequence
 * parallel each block ends with an all-reduce over TP; with it, an
 * all-gather before each block and a reduce-scatter after it, mirrored in
 * backward (Korthikanti et al., MLSys'23, section 4.2.2).  Context parallel
 * shards the sequence: Ulysses re-shards heads <-> sequence with an
 * all-to-all around core attention; ring attention gathers K and V blocks
 * round the ring, overlapped with blockwise attention.  Experts: router,
 * permutation and dispatch over EP by the strategy's dispatcher (moe.c),
 * the local experts' grouped GEMMs on the routed tokens, combine and
 * unpermutation.  Backward GEMMs cost twice the forward
 * (input and weight gradients); flash-attention backward 2.5x.  With fp8
 * the linear layers' GEMMs (QKV or MLA projections, output projection,
 * MLP, shared and routed experts, the prediction modules' projection:
 * forward, input and weight gradients) run in FP8, as Transformer Engine
 * runs them, and the sequence-parallel all-gathers of their inputs carry
 * FP8; core attention, router and logits stay in bf16.  The eager
 * attention kernel computes the whole score square and passes the scores
 * through HBM (see attention_core_s).
 *
 * Multi-head latent attention (DeepSeek-V2), as Megatron's
 * MLASelfAttention runs it: the down-projections are held whole by every
 * TP rank and run on its own tokens (the sequence shard with SP), the
 * latents are gathered for the column-parallel up-projections (one
 * all-gather of q_lora + kv_lora + rope per token instead of the hidden),
 * core attention runs on the rank's heads, the output projection is
 * row-parallel.  The multi-token prediction modules (DeepSeek-V3) run on
 * the last stage after the head: embedding look-up, two norms, the
 * column-parallel projection of [hidden; embedding] with its output
 * gathered over TP, one layer of its kind, the final norm, the shared
 * output layer and the loss again.
 *
 * When the schedule runs the weight gradients apart
 * (wl_schedule_splits_w), each backward GEMM's weight-gradient GEMM goes
 * to a list of its own (phase WL_PH_WGRAD) and the backward keeps the
 * input-gradient one; otherwise both stay one compute, as before. */
#include "../model/model.h"
#include "internal.h"

#define ATTN_BWD_FACTOR 2.5
/* The eager kernel's backward: the two GEMMs' input gradients, twice the
 * forward (the scores are stored, not recomputed as FlashAttention does). */
#define EAGER_BWD_FACTOR 2.0
/* Bytes per score element the eager kernel moves through HBM.  Forward:
 * the scores GEMM writes them (e), the fused scale-mask-softmax reads and
 * writes them (2e), dropout reads them and writes its output and mask
 * (2e + 1), the context GEMM reads the output (e): 6e + 1.  Backward: the
 * output gradient written (e), dropout's backward reads it with the mask
 * and writes (2e + 1), the softmax backward reads it with the
 * probabilities and writes (3e), the two GEMMs read the score gradient
 * (2e) and the value gradient reads the dropout output (e): 10e + 1. */
#define EAGER_FWD_E 6.0
#define EAGER_BWD_E 10.0
#define EAGER_MASK_BYTES 1.0

/* Emits into one op list with the layer's shapes at hand. */
typedef struct emitter {
    const wl_plan *plan;
    wl_ops *ops;
    uint8_t phase;
    double dtype;   /* bytes per activation element */
    wl_ops *wgrad;  /* backward: where weight-gradient GEMMs go when run apart, NULL to keep them in ops */
    uint32_t issued[WL_NSTREAMS]; /* asynchronous ops emitted so far, per stream */
} emitter;

static void push_compute(wl_ops *ops, int phase, int label, double seconds)
{
    wl_instr in = {0};
    in.op = WL_COMPUTE;
    in.phase = (uint8_t)phase;
    in.label = (uint16_t)label;
    in.layer = -1;
    in.micro = -1;
    in.peer = -1;
    in.seconds = seconds;
    wl_ops_push(ops, &in);
}

static void emit_compute(emitter *e, int label, double seconds)
{
    push_compute(e->ops, e->phase, label, seconds);
}

/* A backward GEMM's time: input and weight gradients together, or the
 * input gradient here and the weight gradient in e->wgrad. */
static void emit_backward_gemm(emitter *e, int label, double dgrad_s, double wgrad_s)
{
    if (!e->wgrad) {
        emit_compute(e, label, dgrad_s + wgrad_s);
        return;
    }
    emit_compute(e, label, dgrad_s);
    push_compute(e->wgrad, WL_PH_WGRAD, label, wgrad_s);
}

int wl_layer_kind(const cfg_model *m, int layer)
{
    return (cfg_is_moe_layer(m, layer) ? WL_KIND_MOE : 0) | (cfg_is_window_layer(m, layer) ? WL_KIND_WINDOW : 0);
}

bool wl_kind_possible(const cfg_model *m, int kind)
{
    return (!(kind & WL_KIND_MOE) || m->moe.experts > 0) && (!(kind & WL_KIND_WINDOW) || m->window.tokens > 0);
}

/* A collective on `stream` (WL_S_MAIN = blocking); skipped for a group of one. */
static void emit_phase(void *ctx, const wl_instr *phase)
{
    emitter *e = ctx;
    if (phase->stream != WL_S_MAIN && phase->stream < WL_NSTREAMS) e->issued[phase->stream]++;
    wl_ops_push(e->ops, phase);
}

/* A collective, in the phases it runs as (wl_coll_phases: nothing for a
 * group of one). */
static void emit_coll_step(emitter *e, int label, wl_coll kind, wl_group g, double bytes, wl_stream stream,
                           int step)
{
    wl_instr in = {0};
    in.op = WL_COLL;
    in.coll = (uint8_t)kind;
    in.group = (uint8_t)g;
    in.stream = (uint8_t)stream;
    in.phase = e->phase;
    in.label = (uint16_t)label;
    in.layer = -1;
    in.micro = -1;
    in.peer = -1;
    in.bytes = bytes;
    in.seq = (uint32_t)step;
    wl_coll_phases(e->plan->s, &in, emit_phase, e);
}

static void emit_coll(emitter *e, int label, wl_coll kind, wl_group g, double bytes, wl_stream stream)
{
    emit_coll_step(e, label, kind, g, bytes, stream, 0);
}

/* Ring step `step` of a TP collective on the TP stream (net_coll_step_phases). */
static void emit_ring_step(emitter *e, int label, wl_coll kind, wl_group g, double bytes, int step)
{
    emit_coll_step(e, label, kind, g, bytes, WL_S_TP, step);
}

/* Wait until op number `mark` (counted by e->issued) of `stream` is done;
 * the template's seq says how many later ops may still run (0: wait for
 * everything issued so far), the program turns it into the stream's count. */
static void emit_wait_for(emitter *e, wl_stream stream, uint32_t mark)
{
    wl_instr in = {0};
    in.op = WL_WAIT;
    in.stream = (uint8_t)stream;
    in.phase = e->phase;
    in.label = WL_L_WAIT;
    in.layer = -1;
    in.micro = -1;
    in.peer = -1;
    in.seq = e->issued[stream] - mark;
    wl_ops_push(e->ops, &in);
}

/* Wait for the last op issued on `stream`. */
static void emit_wait(emitter *e, wl_stream stream)
{
    emit_wait_for(e, stream, e->issued[stream]);
}

/* An FP8 GEMM's operand cast [TE]: a memory-bound pass that reads
 * `elements` in the activation dtype (twice with current scaling: its
 * amax first) and writes them in FP8 in both layouts (the weight or input
 * gradient GEMM takes the other one) with the recipe's scales: e + 2
 * bytes each with per-tensor scales (mdl_fp8_cast_bytes).  Transformer
 * Engine fuses some of them into the norm before the GEMM; they are all
 * counted here. */
static void emit_fp8_cast(emitter *e, double elements)
{
    double bytes = elements * mdl_fp8_cast_bytes(e->plan->s, e->dtype);
    emit_compute(e, WL_L_FP8_CAST, cost_elementwise_s(e->plan->c, bytes));
}

/* The precision a linear layer's GEMMs run in: bf16, or with fp8 FP8 at
 * the recipe's peak (MXFP8's own with fp8_recipe mxfp8). */
static cost_gemm_type linear_gemm_type(const cfg_strategy *s, bool fp8)
{
    if (!fp8) return COST_GEMM_BF16;
    return s->fp8_recipe == CFG_FP8_MXFP8 ? COST_GEMM_MXFP8 : COST_GEMM_FP8;
}

/* Seconds of one GEMM C[m,n] = A[m,k] B[k,n], in FP8 when fp8. */
static double gemm_time_s(const wl_plan *plan, double m, double n, double k, bool fp8)
{
    return cost_gemm_typed_s(plan->c, linear_gemm_type(plan->s, fp8), m, n, k, plan->m->dtype_bytes);
}

/* A GEMM, or in backward its input and weight gradients; fp8: a linear
 * layer's GEMM, in FP8 when the strategy says so. */
static void emit_gemm(emitter *e, int label, double m, double n, double k, bool backward, bool fp8)
{
    bool f8 = fp8 && e->plan->s->fp8;
    if (backward) { /* dgrad dX = dY W^T, wgrad dW = X^T dY */
        emit_backward_gemm(e, label, gemm_time_s(e->plan, m, k, n, f8), gemm_time_s(e->plan, k, n, m, f8));
        return;
    }
    emit_compute(e, label, gemm_time_s(e->plan, m, n, k, f8));
}

static void emit_elementwise(emitter *e, int label, double bytes, bool backward)
{
    emit_compute(e, label, cost_elementwise_s(e->plan->c, backward ? 2 * bytes : bytes));
}

/* Shapes of the layer on this rank. */
typedef struct shape {
    double tok;      /* tokens of the rank's sequence shard in one micro-batch: b*s/cp */
    double tok_sp;   /* tokens held between blocks: tok/tp when sequence-sharded, else tok */
    double h;        /* hidden */
    mdl_attn w;      /* attention widths, all heads (K, V replicated when tp_x > kv_heads) */
    double qkv;      /* width of Q, K and V together: w.q + w.k + w.v */
    bool mla;        /* multi-head latent attention */
    bool windowed;   /* the layer attends through the model's window */
    double x, y, t;  /* tp_x, tp_y, tp_x*tp_y */
    bool sp;         /* activations sharded between blocks (SP, or 2D TP) */
} shape;

static shape layer_shape(const wl_plan *plan, bool windowed)
{
    const cfg_model *m = plan->m;
    const cfg_strategy *s = plan->s;
    shape sh;
    sh.x = s->tp_x;
    sh.y = s->tp_y;
    sh.t = sh.x * sh.y;
    sh.sp = s->sequence_parallel || s->tp_y > 1;
    sh.tok = (double)s->micro_batch * m->seq_len / cfg_cp(s);
    sh.tok_sp = sh.sp ? sh.tok / sh.t : sh.tok;
    sh.h = m->hidden;
    mdl_attn_widths(m, mdl_kv_heads_tp(m, s), &sh.w);
    sh.qkv = sh.w.q + sh.w.k + sh.w.v;
    sh.mla = cfg_is_mla(m);
    sh.windowed = windowed;
    return sh;
}

static void tp_gather(emitter *e, wl_group g, double bytes)
{
    emit_coll(e, WL_L_TP_AG, WL_ALLGATHER, g, bytes, WL_S_MAIN);
}

static void tp_reduce(emitter *e, wl_group g, double bytes, bool sharded)
{
    if (sharded)
        emit_coll(e, WL_L_TP_RS, WL_REDUCESCATTER, g, bytes, WL_S_MAIN);
    else
        emit_coll(e, WL_L_TP_AR, WL_ALLREDUCE, g, bytes, WL_S_MAIN);
}

/* Seconds of one of a linear layer's GEMMs (in FP8 with fp8). */
static double gemm_s(const emitter *e, double m, double n, double k)
{
    return gemm_time_s(e->plan, m, n, k, e->plan->s->fp8);
}

/* A GEMM (chunk) of `seconds` alone; `beside`: a TP collective runs on the
 * device meanwhile (cost_beside_comm_s). */
static void emit_gemm_beside(emitter *e, int label, double seconds, bool beside)
{
    emit_compute(e, label, beside ? cost_beside_comm_s(e->plan->c, seconds) : seconds);
}

static int group_size(const emitter *e, wl_group g)
{
    return wl_group_size(e->plan->s, g);
}

/* Forward of a linear layer with overlap_tp_comm and sharded activations
 * (Transformer Engine's userbuffers ring exchange, MindSpeed's MC2 / CoC):
 * the GEMM is split on its tokens into n chunks, n the size of the group
 * the all-gather (else the reduce-scatter) runs on.  The all-gather
 * starts on the rank's own shard and brings the next one ring step at a
 * time on the TP stream, step i while the GEMM computes chunk i; the
 * reduce-scatter sends chunk i's partial sums on step i while the GEMM
 * computes chunk i+1.  What shows is whatever of each step outlasts the
 * GEMM chunk beside it (docs/model.md, "TP overlap"); a GEMM chunk with a
 * step beside it takes cost_beside_comm_s. */
static void linear_fwd_overlapped(emitter *e, int label, double tok, double N, double K, wl_group gin,
                                  double in_bytes, wl_group gout, double out_bytes)
{
    bool ag = group_size(e, gin) > 1, rs = group_size(e, gout) > 1;
    int n = ag ? group_size(e, gin) : rs ? group_size(e, gout) : 1;
    int nrs = rs ? group_size(e, gout) : 1;
    double g = gemm_s(e, tok / n, N, K);
    uint32_t mark = 0;
    for (int i = 0; i < n; i++) {
        bool step_ag = ag && i + 1 < n, step_rs = rs && i > 0 && i < nrs;
        if (ag && i > 0) emit_wait_for(e, WL_S_TP, mark);
        if (step_ag) {
            emit_ring_step(e, WL_L_TP_AG, WL_ALLGATHER, gin, in_bytes, i + 1);
            mark = e->issued[WL_S_TP];
        }
        emit_gemm_beside(e, label, g, step_ag || step_rs);
        if (rs && i + 1 < nrs) emit_ring_step(e, WL_L_TP_RS, WL_REDUCESCATTER, gout, out_bytes, i + 1);
    }
    for (int k = n + 1; k < nrs; k++) emit_ring_step(e, WL_L_TP_RS, WL_REDUCESCATTER, gout, out_bytes, k);
    if (rs) emit_wait(e, WL_S_TP);
}

/* Backward of a linear layer with sharded activations and its TP
 * collectives overlapped: the input's all-gather for the weight gradient
 * (wgrad) in bulk beside the input-gradient (dgrad) GEMM, and the input
 * gradient's reduce-scatter in bulk beside the wgrad GEMM (Megatron's
 * asynchronous backward, overlap_tp_backward; Transformer Engine's bulk
 * overlap).  `ring`: the output gradient's all-gather as a ring exchange
 * beside the chunks of the dgrad GEMM, as in forward (overlap_tp_comm);
 * else it blocks before the GEMM. */
static void linear_bwd_overlapped(emitter *e, int label, double tok, double N, double K, wl_group gin,
                                  double in_bytes, wl_group gout, double out_bytes, bool ring)
{
    bool ago = group_size(e, gout) > 1, agi = group_size(e, gin) > 1;
    if (ago && !ring) {
        tp_gather(e, gout, out_bytes);
        ago = false;
    }
    int n = ago ? group_size(e, gout) : 1;
    double dg = gemm_s(e, tok / n, K, N), wg = gemm_s(e, K, N, tok);
    uint32_t mark = 0;
    for (int i = 0; i < n; i++) {
        bool step = ago && i + 1 < n;
        if (ago && i > 0) emit_wait_for(e, WL_S_TP, mark);
        if (step) {
            emit_ring_step(e, WL_L_TP_AG, WL_ALLGATHER, gout, out_bytes, i + 1);
            mark = e->issued[WL_S_TP];
        }
        if (agi && i + 1 == n) emit_coll(e, WL_L_TP_AG, WL_ALLGATHER, gin, in_bytes, WL_S_TP);
        emit_gemm_beside(e, label, dg, step || agi);
    }
    if (agi) emit_wait(e, WL_S_TP);
    if (e->wgrad) { /* the weight gradient runs apart, later: nothing to hide the reduce-scatter behind */
        if (agi) emit_coll(e, WL_L_TP_RS, WL_REDUCESCATTER, gin, in_bytes, WL_S_MAIN);
        push_compute(e->wgrad, WL_PH_WGRAD, label, wg);
        return;
    }
    if (agi) emit_coll(e, WL_L_TP_RS, WL_REDUCESCATTER, gin, in_bytes, WL_S_TP);
    emit_gemm_beside(e, label, wg, agi);
    if (agi) emit_wait(e, WL_S_TP);
}

/* A linear layer Y[tok, N] = X[tok, K] W[K, N] and its tensor-parallel
 * collectives.  2D layout (MindSpeed tp-2d): the first GEMM of a block
 * gathers its input over tp_x and reduce-scatters its output over tp_y;
 * the second swaps the roles.  With tp_y = 1 this is Megatron's 1D TP with
 * sequence parallel (first = column-parallel, second = row-parallel);
 * without SP the 1D case all-reduces the row-parallel GEMM's output (N
 * wide) in forward and the column-parallel GEMM's input gradient (K wide)
 * in backward. */
static void linear(emitter *e, const shape *sh, int label, double K, double N, bool second, bool bwd)
{
    double db = e->dtype;
    wl_group gin = second ? WL_G_TPY : WL_G_TPX, gout = second ? WL_G_TPX : WL_G_TPY;
    double din = second ? sh->x : sh->y, dout = second ? sh->y : sh->x; /* K and N splits */
    double in_bytes = sh->tok * K / din * db, out_bytes = sh->tok * N / dout * db;
    /* with fp8 the input is cast before it is gathered [TE linear.py] */
    double gathered = e->plan->s->fp8 ? sh->tok * K / din * mdl_saved_gemm_input_bytes(e->plan->m, e->plan->s)
                                      : in_bytes;
    if (!sh->sp) { /* 1D TP without sequence parallel */
        gin = gout = WL_G_TP;
        din = second ? sh->t : 1;
        dout = second ? 1 : sh->t;
    }
    bool fp8 = e->plan->s->fp8, full = e->plan->s->overlap_tp_comm;
    bool backward = bwd && (full || e->plan->s->overlap_tp_backward);
    if (sh->sp && !bwd && full) {
        if (fp8) emit_fp8_cast(e, sh->tok * K / din / wl_group_size(e->plan->s, gin));
        linear_fwd_overlapped(e, label, sh->tok, N / dout, K / din, gin, gathered, gout, out_bytes);
        return;
    }
    if (sh->sp && backward) {
        if (fp8) emit_fp8_cast(e, sh->tok * N / dout); /* the output gradient */
        linear_bwd_overlapped(e, label, sh->tok, N / dout, K / din, gin, in_bytes, gout, out_bytes, full);
        return;
    }
    if (backward && !second && sh->t > 1 && !e->wgrad) {
        /* without SP: the input gradient's all-reduce behind the wgrad GEMM
         * (bulk); the forward all-reduce after the row-parallel GEMM stays
         * exposed */
        if (fp8) emit_fp8_cast(e, sh->tok * N / dout);
        emit_compute(e, label, gemm_s(e, sh->tok, K / din, N / dout));
        emit_coll(e, WL_L_TP_AR, WL_ALLREDUCE, WL_G_TP, sh->tok * K * db, WL_S_TP);
        emit_gemm_beside(e, label, gemm_s(e, K / din, N / dout, sh->tok), true);
        emit_wait(e, WL_S_TP);
        return;
    }
    if (!bwd) {
        /* the rank's part of the input is cast, then gathered */
        if (fp8) emit_fp8_cast(e, sh->tok * K / din / (sh->sp ? wl_group_size(e->plan->s, gin) : 1));
        if (sh->sp) tp_gather(e, gin, gathered);
        emit_gemm(e, label, sh->tok, N / dout, K / din, false, true);
        if (sh->sp)
            tp_reduce(e, gout, out_bytes, true);
        else if (second)
            tp_reduce(e, WL_G_TP, sh->tok * N * db, false);
    } else {
        if (sh->sp) {
            tp_gather(e, gout, out_bytes); /* the output gradient */
            tp_gather(e, gin, gathered);   /* the input again, for the weight gradient */
        }
        if (fp8) emit_fp8_cast(e, sh->tok * N / dout); /* the output gradient */
        emit_gemm(e, label, sh->tok, N / dout, K / din, true, true);
        if (sh->sp)
            tp_reduce(e, gin, in_bytes, true);
        else if (!second)
            tp_reduce(e, WL_G_TP, sh->tok * K * db, false);
    }
}

/* Norm statistics of a hidden split over tp_y are all-reduced (2D only). */
static void norm(emitter *e, const shape *sh, bool bwd)
{
    emit_elementwise(e, WL_L_NORM, sh->tok_sp * sh->h * e->dtype * 2, bwd);
    if (sh->y > 1) emit_coll(e, WL_L_TP_AR, WL_ALLREDUCE, WL_G_TPY, sh->tok_sp * sh->y * 2 * 4, WL_S_MAIN);
}

static void residual(emitter *e, const shape *sh, bool bwd)
{
    emit_elementwise(e, WL_L_RESIDUAL, sh->tok_sp * sh->h * e->dtype * 3, bwd);
}

/* Seconds of core attention on the rank's queries and heads, reading Q,
 * K, V and writing the context; backward ATTN_BWD_FACTOR (eager:
 * EAGER_BWD_FACTOR) times the FLOPs and twice the bytes.  FlashAttention:
 * causal against the whole context or the window (mdl_core_attn_flops).
 * Eager: the scores and context GEMMs over the whole square of the rank's
 * queries by the s keys (the mask, or the window, is applied to computed
 * scores), and the score tensors through HBM (EAGER_*). */
static double attention_core_s(const wl_plan *plan, const shape *sh, double dtype, bool backward)
{
    const cfg_model *m = plan->m;
    bool eager = plan->s->attention_kernel == CFG_ATTN_EAGER;
    double square = sh->tok * m->seq_len * m->heads / sh->t; /* score elements of the rank's heads */
    double flops = eager ? 2.0 * sh->tok * m->seq_len * (sh->w.q + sh->w.o) / sh->t
                         : mdl_core_attn_flops(m, sh->windowed, sh->tok) / sh->t;
    double bytes = sh->tok * (sh->qkv + sh->w.o) / sh->t * dtype;
    if (backward) {
        flops *= eager ? EAGER_BWD_FACTOR : ATTN_BWD_FACTOR;
        bytes *= 2;
    }
    double t = cost_attention_s(plan->c, flops, bytes);
    if (eager) {
        double per_score = (backward ? EAGER_BWD_E : EAGER_FWD_E) * dtype + EAGER_MASK_BYTES;
        t += cost_elementwise_s(plan->c, square * per_score);
    }
    return t;
}

static void attention_core(emitter *e, const shape *sh, bool backward)
{
    const cfg_strategy *s = e->plan->s;
    double t = attention_core_s(e->plan, sh, e->dtype, backward);
    if (s->cp_ring > 1) {
        /* K,V blocks go round the ring, overlapped with blockwise attention
         * (their gradients come back round it in backward; a window does
         * not shorten the ring). */
        double kv_block = sh->tok * (sh->w.k + sh->w.v) / sh->t * e->dtype;
        wl_stream st = s->overlap_cp_comm ? WL_S_CP : WL_S_MAIN;
        emit_coll(e, WL_L_CP_KV, WL_ALLGATHER, WL_G_CPR, kv_block * s->cp_ring, st);
        if (backward) emit_coll(e, WL_L_CP_KV, WL_REDUCESCATTER, WL_G_CPR, kv_block * s->cp_ring, st);
        emit_compute(e, WL_L_ATTN, t);
        if (st != WL_S_MAIN) emit_wait(e, st);
    } else {
        emit_compute(e, WL_L_ATTN, t);
    }
}

/* Re-shard sequence <-> heads around core attention: over tp_y (2D TP:
 * the sequence is split over tp_y after the QKV reduce-scatter) and over
 * the Ulysses group; one all-to-all over both when fused. */
static void heads_a2a(emitter *e, const shape *sh, double width)
{
    const cfg_strategy *s = e->plan->s;
    double bytes = sh->tok / sh->y * width / sh->x * e->dtype;
    if (s->fuse_tpy_cp) {
        emit_coll(e, WL_L_CP_A2A, WL_ALLTOALL, WL_G_FUSED, bytes, WL_S_MAIN);
        return;
    }
    emit_coll(e, WL_L_TP_A2A, WL_ALLTOALL, WL_G_TPY, bytes, WL_S_MAIN);
    emit_coll(e, WL_L_CP_A2A, WL_ALLTOALL, WL_G_CPU, bytes, WL_S_MAIN);
}

/* MLA's query and key/value projections (1D TP; cfg_check refuses
 * tp_y > 1): the down-projections on the rank's tokens with the whole
 * weights, the latents' norms, then the column-parallel up-projections,
 * whose SP all-gather carries the latents (q_lora, kv_lora), and the
 * shared rotary key gathered beside them.  Without query compression the
 * queries come from the hidden like MHA's. */
static void mla_qkv(emitter *e, const shape *sh, bool bwd)
{
    const mdl_attn *w = &sh->w;
    const cfg_model *m = e->plan->m;
    double down = w->q_lora + w->kv_lora + w->rope, latents = w->q_lora + w->kv_lora;
    double q_in = w->q_lora > 0 ? w->q_lora : sh->h;
    double kv_up = (double)m->heads * m->mla.qk_nope_head_dim + w->v;
    double rope_bytes = sh->tok * w->rope * e->dtype;
    if (!bwd) {
        if (e->plan->s->fp8) emit_fp8_cast(e, sh->tok_sp * sh->h);
        emit_gemm(e, WL_L_QKV_DOWN, sh->tok_sp, down, sh->h, false, true);
        emit_elementwise(e, WL_L_NORM, sh->tok_sp * latents * e->dtype * 2, false);
        if (sh->sp) tp_gather(e, WL_G_TP, rope_bytes);
        linear(e, sh, WL_L_QKV, q_in, w->q, false, false);
        linear(e, sh, WL_L_QKV, w->kv_lora, kv_up, false, false);
    } else {
        linear(e, sh, WL_L_QKV, w->kv_lora, kv_up, false, true);
        linear(e, sh, WL_L_QKV, q_in, w->q, false, true);
        if (sh->sp) tp_reduce(e, WL_G_TP, rope_bytes, true);
        emit_elementwise(e, WL_L_NORM, sh->tok_sp * latents * e->dtype * 2, true);
        if (e->plan->s->fp8) emit_fp8_cast(e, sh->tok_sp * down);
        emit_gemm(e, WL_L_QKV_DOWN, sh->tok_sp, down, sh->h, true, true);
    }
}

/* Attention block, forward or backward (ops in execution order). */
static void attention_block(emitter *e, const shape *sh, bool bwd)
{
    if (!bwd) {
        norm(e, sh, false);
        if (sh->mla)
            mla_qkv(e, sh, false);
        else
            linear(e, sh, WL_L_QKV, sh->h, sh->qkv, false, false);
        heads_a2a(e, sh, sh->qkv);
        attention_core(e, sh, false);
        heads_a2a(e, sh, sh->w.o);
        linear(e, sh, WL_L_PROJ, sh->w.o, sh->h, true, false);
        residual(e, sh, false);
    } else {
        residual(e, sh, true);
        linear(e, sh, WL_L_PROJ, sh->w.o, sh->h, true, true);
        heads_a2a(e, sh, sh->w.o);
        attention_core(e, sh, true);
        heads_a2a(e, sh, sh->qkv);
        if (sh->mla)
            mla_qkv(e, sh, true);
        else
            linear(e, sh, WL_L_QKV, sh->h, sh->qkv, false, true);
        norm(e, sh, true);
    }
}

static void dense_mlp(emitter *e, const shape *sh, bool bwd)
{
    const cfg_model *m = e->plan->m;
    double f = m->ffn_hidden;
    double up = cfg_mlp_gated(m) ? 2 * f : f;
    double act_bytes = sh->tok * f / sh->t * e->dtype * (cfg_mlp_gated(m) ? 3 : 2);
    if (!bwd) {
        norm(e, sh, false);
        linear(e, sh, WL_L_FC1, sh->h, up, false, false);
        emit_elementwise(e, WL_L_ACT, act_bytes, false);
        linear(e, sh, WL_L_FC2, f, sh->h, true, false);
        residual(e, sh, false);
    } else {
        residual(e, sh, true);
        linear(e, sh, WL_L_FC2, f, sh->h, true, true);
        emit_elementwise(e, WL_L_ACT, act_bytes, true);
        linear(e, sh, WL_L_FC1, sh->h, up, false, true);
        norm(e, sh, true);
    }
}

/* Routed and shared experts. Tokens are split over the TP ranks before
 * routing (each routes tok/tp of them): the router GEMM and its top-k
 * pass, the token dispatch of the strategy's dispatcher (wl_moe_dispatch_of:
 * an all-to-all of the routed copies, an all-gather of the EP group's
 * tokens, or DeepEP's deduplicated all-to-all) with the permutation into
 * expert order before or after it; with etp > 1 an expert is split over
 * etp ranks, which gather each other's tokens for it and reduce-scatter
 * the result (Megatron's dispatchers with expert tensor parallel).  The
 * local experts run as one grouped GEMM per projection
 * (cost_grouped_gemm_s).  The rank is costed as the busiest EP rank, whose
 * experts receive top_k * cfg_expert_load copies per token routed
 * (capacity and load imbalance): every rank waits for it in the combine,
 * and with symmetric programs its dispatch bytes stand for the busiest
 * rank's.
 *
 * overlap_shared_experts (Megatron's --moe-shared-expert-overlap): the
 * dispatch and the combine run on the EP stream while the shared experts'
 * first and second linear compute; the expert GEMMs wait for the dispatch,
 * the residual for the combine.  Each all-to-all then costs
 * max(A2A, shared linear) instead of their sum.  Backward mirrors it. */
static void moe_mlp(emitter *e, const shape *sh, bool bwd)
{
    const cfg_model *m = e->plan->m;
    const cfg_strategy *s = e->plan->s;
    const cfg_moe *moe = &m->moe;
    int db = m->dtype_bytes;
    bool f8 = s->fp8;
    double tok = sh->tok / sh->t;
    double routed = tok * moe->top_k * cfg_expert_load(s); /* copies the busiest rank's experts receive */
    double local_tok = routed * s->etp;                     /* copies its expert shards compute */
    int local = moe->experts / s->ep;
    double per_expert = local_tok / local;
    double fe = (double)moe->ffn_hidden / s->etp;
    double up = cfg_mlp_gated(m) ? 2 * fe : fe;
    wl_moe_dispatch d;
    wl_moe_dispatch_of(e->plan, tok, routed, db, &d);
    double act_bytes = local_tok * fe * db * (cfg_mlp_gated(m) ? 3 : 2);
    double experts_s = 0, experts_w_s = 0;
    const cost_model *c = e->plan->c;
    cost_gemm_type gt = linear_gemm_type(s, f8);
    /* the grouped GEMMs: forward up and down; backward their input and weight gradients */
    if (!bwd) {
        experts_s = cost_grouped_gemm_s(c, gt, local, per_expert, up, sh->h, db) +
                    cost_grouped_gemm_s(c, gt, local, per_expert, sh->h, fe, db);
    } else {
        double dgrad = cost_grouped_gemm_s(c, gt, local, per_expert, sh->h, up, db) +
                       cost_grouped_gemm_s(c, gt, local, per_expert, fe, sh->h, db);
        double wgrad = cost_grouped_gemm_s(c, gt, local, sh->h, up, per_expert, db) +
                       cost_grouped_gemm_s(c, gt, local, fe, sh->h, per_expert, db);
        experts_s = e->wgrad ? dgrad : dgrad + wgrad;
        experts_w_s = e->wgrad ? wgrad : 0.0;
    }
    bool shared = moe->shared_experts > 0;
    double sf = (double)moe->shared_experts * moe->shared_ffn_hidden;
    double sup = cfg_mlp_gated(m) ? 2 * sf : sf;
    bool overlap = shared && s->overlap_shared_experts && wl_group_size(s, WL_G_EP) > 1;
    wl_stream st = overlap ? WL_S_EP : WL_S_MAIN;
    /* the shared linear that runs under each all-to-all: forward FC1 then
     * FC2, backward FC2's gradient then FC1's */
    bool first_second = bwd, then_second = !bwd;
    double first_k = bwd ? sf : sh->h, first_n = bwd ? sh->h : sup;
    double then_k = bwd ? sh->h : sf, then_n = bwd ? sup : sh->h;
    /* forward: dispatch, then combine; backward: the gradients' combine first */
    wl_coll in_kind = d.dispatch, out_kind = d.combine; /* a reduce-scatter's gradient is an all-gather */
    int in_label = bwd ? WL_L_EP_COMBINE : WL_L_EP_DISPATCH, out_label = bwd ? WL_L_EP_DISPATCH : WL_L_EP_COMBINE;
    double permute_s = cost_elementwise_s(c, d.permute_bytes);

    norm(e, sh, bwd);
    /* A hidden split over tp_y is gathered before routing (2D TP). */
    if (sh->y > 1) tp_gather(e, WL_G_TPY, tok * sh->y * sh->h * db);
    emit_gemm(e, WL_L_ROUTER, tok, moe->experts, sh->h, bwd, false);
    emit_elementwise(e, WL_L_ROUTER, d.router_bytes, bwd);
    if (d.permute_first) emit_compute(e, bwd ? WL_L_UNPERMUTE : WL_L_PERMUTE, permute_s);
    if (d.meta_bytes > 0 && !bwd) emit_coll(e, in_label, WL_ALLGATHER, WL_G_EP, d.meta_bytes, WL_S_MAIN);
    emit_coll(e, in_label, in_kind, WL_G_EP, d.bytes, st);
    if (overlap) {
        linear(e, sh, WL_L_SHARED, first_k, first_n, first_second, bwd);
        emit_wait(e, st);
    }
    if (!d.permute_first) emit_compute(e, bwd ? WL_L_UNPERMUTE : WL_L_PERMUTE, permute_s);
    emit_coll(e, WL_L_TP_AG, WL_ALLGATHER, WL_G_ETP, routed * sh->h * db * s->etp, WL_S_MAIN);
    /* the experts' FP8 operands: FC1 and FC2 inputs, or their output gradients */
    if (f8) emit_fp8_cast(e, local_tok * (bwd ? up + sh->h : sh->h + fe));
    emit_compute(e, WL_L_EXPERTS, experts_s);
    if (bwd && e->wgrad) push_compute(e->wgrad, WL_PH_WGRAD, WL_L_EXPERTS, experts_w_s);
    emit_elementwise(e, WL_L_ACT, act_bytes, bwd);
    emit_coll(e, WL_L_TP_RS, WL_REDUCESCATTER, WL_G_ETP, routed * sh->h * db * s->etp, WL_S_MAIN);
    if (!d.permute_first) emit_compute(e, bwd ? WL_L_PERMUTE : WL_L_UNPERMUTE, permute_s);
    emit_coll(e, out_label, out_kind, WL_G_EP, d.bytes, st);
    if (overlap) {
        linear(e, sh, WL_L_SHARED, then_k, then_n, then_second, bwd);
        emit_wait(e, st);
    } else if (shared) {
        linear(e, sh, WL_L_SHARED, sh->h, sup, false, bwd);
        linear(e, sh, WL_L_SHARED, sf, sh->h, true, bwd);
    }
    if (d.permute_first) emit_compute(e, bwd ? WL_L_PERMUTE : WL_L_UNPERMUTE, permute_s);
    if (sh->y > 1) tp_reduce(e, WL_G_TPY, tok * sh->y * sh->h * db, true);
    residual(e, sh, bwd);
}

/* The forward ops selective recompute runs again before a layer's backward,
 * module by module (cfg_recompute_modules; the memory each frees is in
 * model.c): core_attn the core attention (its comms are not repeated: Q, K
 * and V are at hand); layernorm the two norms; mla_up_proj MLA's two
 * up-projections with their TP gathers; mlp a dense layer's FC1,
 * activation and FC2; moe a MoE layer's whole MLP block, all-to-alls
 * included; moe_act the routed experts' activation; shared_experts the
 * shared experts' two linears. */
static void recompute_modules(emitter *e, const shape *sh, bool moe)
{
    const cfg_model *m = e->plan->m;
    unsigned rm = cfg_recompute_modules(e->plan->s);
    if (rm >> CFG_RM_LAYERNORM & 1u) {
        norm(e, sh, false);
        norm(e, sh, false);
    }
    if ((rm >> CFG_RM_MLA_UP_PROJ & 1u) && sh->mla) {
        double q_in = sh->w.q_lora > 0 ? sh->w.q_lora : sh->h;
        linear(e, sh, WL_L_QKV, q_in, sh->w.q, false, false);
        linear(e, sh, WL_L_QKV, sh->w.kv_lora, (double)m->heads * m->mla.qk_nope_head_dim + sh->w.v, false, false);
    }
    if (rm >> CFG_RM_CORE_ATTN & 1u) emit_compute(e, WL_L_ATTN, attention_core_s(e->plan, sh, e->dtype, false));
    if ((rm >> CFG_RM_MLP & 1u) && !moe) {
        double f = m->ffn_hidden;
        linear(e, sh, WL_L_FC1, sh->h, cfg_mlp_gated(m) ? 2 * f : f, false, false);
        emit_elementwise(e, WL_L_ACT, sh->tok * f / sh->t * e->dtype * (cfg_mlp_gated(m) ? 3 : 2), false);
        linear(e, sh, WL_L_FC2, f, sh->h, true, false);
    }
    if (!moe) return;
    if (rm >> CFG_RM_MOE & 1u) {
        moe_mlp(e, sh, false);
        return;
    }
    const cfg_strategy *s = e->plan->s;
    const cfg_moe *mo = &m->moe;
    if (rm >> CFG_RM_MOE_ACT & 1u) {
        double fe = (double)mo->ffn_hidden / s->etp;
        double local_tok = sh->tok / sh->t * mo->top_k * cfg_expert_load(s) * s->etp;
        emit_elementwise(e, WL_L_ACT, local_tok * fe * e->dtype * (cfg_mlp_gated(m) ? 3 : 2), false);
    }
    if ((rm >> CFG_RM_SHARED_EXPERTS & 1u) && mo->shared_experts > 0) {
        double sf = (double)mo->shared_experts * mo->shared_ffn_hidden;
        linear(e, sh, WL_L_SHARED, sh->h, cfg_mlp_gated(m) ? 2 * sf : sf, false, false);
        linear(e, sh, WL_L_SHARED, sf, sh->h, true, false);
    }
}

static void layer_pass(emitter *e, const shape *sh, bool moe, bool bwd)
{
    if (!bwd) {
        attention_block(e, sh, false);
        if (moe) moe_mlp(e, sh, false); else dense_mlp(e, sh, false);
    } else {
        if (moe) moe_mlp(e, sh, true); else dense_mlp(e, sh, true);
        attention_block(e, sh, true);
    }
}

void wl_layer_ops_build(const wl_plan *plan, int kind, wl_layer_ops *out)
{
    const cfg_model *m = plan->m;
    const cfg_strategy *s = plan->s;
    bool moe = kind & WL_KIND_MOE;
    shape sh = layer_shape(plan, kind & WL_KIND_WINDOW);
    emitter e = {.plan = plan, .ops = &out->fwd, .phase = WL_PH_FORWARD, .dtype = m->dtype_bytes};
    layer_pass(&e, &sh, moe, false);
    e.ops = &out->bwd;
    e.phase = WL_PH_BACKWARD;
    e.wgrad = plan->split_w ? &out->wgrad : NULL;
    layer_pass(&e, &sh, moe, true);
    e.wgrad = NULL;

    e.ops = &out->recompute;
    e.phase = WL_PH_RECOMPUTE;
    if (s->recompute == CFG_RECOMP_FULL)
        layer_pass(&e, &sh, moe, false);
    else if (s->recompute == CFG_RECOMP_SELECTIVE)
        recompute_modules(&e, &sh, moe);
    for (int i = 0; i < out->recompute.n; i++) out->recompute.a[i].phase = WL_PH_RECOMPUTE;

    mdl_held held;
    mdl_layer_held(m, s, moe, &held);
    out->params_dp = mdl_held_params(&held, MDL_SYNC_DP);
    out->params_edp = mdl_held_params(&held, MDL_SYNC_EDP);
}

/* Vocab-parallel embedding over the whole TP group: look-up, then reduce
 * the partial rows (scattered on sequence when sharded). */
static void embedding(emitter *e, const shape *sh, bool bwd)
{
    double rows = sh->tok * sh->h * e->dtype;
    if (!bwd) {
        emit_elementwise(e, WL_L_EMBED, rows * 2, false);
        tp_reduce(e, WL_G_TP, rows, sh->sp);
    } else {
        if (sh->sp) tp_gather(e, WL_G_TP, rows);
        emit_elementwise(e, WL_L_EMBED, rows * 2, true);
    }
}

/* Final norm, logits over the vocab shard, cross-entropy (its small
 * max/sum all-reduces over TP merged into one). */
static void head(emitter *e, const shape *sh, bool bwd)
{
    const cfg_model *m = e->plan->m;
    double db = e->dtype, vocab = m->vocab / sh->t, rows = sh->tok * sh->h * db;
    if (!bwd) {
        norm(e, sh, false);
        if (sh->sp) tp_gather(e, WL_G_TP, rows);
        emit_gemm(e, WL_L_LOGITS, sh->tok, vocab, sh->h, false, false);
        emit_elementwise(e, WL_L_LOSS, sh->tok * vocab * (db + 4) * 2, false);
        emit_coll(e, WL_L_TP_AR, WL_ALLREDUCE, WL_G_TP, sh->tok * 4 * 3, WL_S_MAIN);
    } else {
        emit_elementwise(e, WL_L_LOSS, sh->tok * vocab * (db + 4) * 2, true);
        emit_gemm(e, WL_L_LOGITS, sh->tok, vocab, sh->h, true, false);
        tp_reduce(e, WL_G_TP, rows, sh->sp);
        norm(e, sh, true);
    }
}

/* Multi-token prediction module k before its layer, forward: the shifted
 * tokens' embedding, the norms of it and of the hidden, and the
 * column-parallel projection of the pair (2h -> h) with its output
 * gathered over TP (Megatron's eh_proj); backward mirrored. */
static void mtp_entry(emitter *e, const shape *sh, bool bwd)
{
    double rows = sh->tok * sh->h * e->dtype;
    if (!bwd) {
        embedding(e, sh, false);
        norm(e, sh, false);
        norm(e, sh, false);
        linear(e, sh, WL_L_MTP_PROJ, 2 * sh->h, sh->h, false, false);
        tp_gather(e, WL_G_TP, rows);
    } else {
        tp_gather(e, WL_G_TP, rows);
        linear(e, sh, WL_L_MTP_PROJ, 2 * sh->h, sh->h, false, true);
        norm(e, sh, true);
        norm(e, sh, true);
        embedding(e, sh, true);
    }
}

/* The edges' ops; needs the plan's layer templates (the modules' layers
 * are copies of them). */
void wl_edge_ops_build(const wl_plan *plan, wl_edge_ops *out)
{
    const cfg_model *m = plan->m;
    shape sh = layer_shape(plan, false);
    emitter e = {.plan = plan, .ops = &out->embed_fwd, .phase = WL_PH_FORWARD, .dtype = m->dtype_bytes};
    embedding(&e, &sh, false);
    e.ops = &out->embed_bwd;
    e.phase = WL_PH_BACKWARD;
    embedding(&e, &sh, true);

    e.ops = &out->head_fwd;
    e.phase = WL_PH_FORWARD;
    head(&e, &sh, false);
    for (int k = 0; k < m->mtp_layers; k++) {
        mtp_entry(&e, &sh, false);
        wl_ops_append(&out->head_fwd, &plan->layer[wl_layer_kind(m, m->layers + k)].fwd);
        head(&e, &sh, false);
    }
    e.ops = &out->head_bwd;
    e.phase = WL_PH_BACKWARD;
    e.wgrad = plan->split_w ? &out->head_wgrad : NULL;
    for (int k = m->mtp_layers - 1; k >= 0; k--) {
        const wl_layer_ops *lo = &plan->layer[wl_layer_kind(m, m->layers + k)];
        head(&e, &sh, true);
        wl_ops_append(&out->head_bwd, &lo->bwd);
        wl_ops_append(&out->head_wgrad, &lo->wgrad); /* empty unless the plan splits W */
        mtp_entry(&e, &sh, true);
    }
    head(&e, &sh, true);
    e.wgrad = NULL;

    /* The embedding's gradient is complete after the embedding's backward
     * (with tied embeddings and one stage, after the head's too); the final
     * norm's, the output layer's and the prediction modules' (with their
     * copy of the embedding off stage 0) after the head's.  A tied
     * embedding on the head's stage (one stage, or a V) whose head runs
     * its weight gradient apart is complete only after that W: it syncs
     * with the head's. */
    mdl_held first, last;
    int head = cfg_head_stage(plan->s);
    mdl_edge_held(m, plan->s, 0, &first);
    mdl_edge_held(m, plan->s, head, &last);
    out->embed_params = first.params[MDL_PART_EMBEDDING];
    out->head_params = mdl_held_params(&last, MDL_SYNC_DP) - (head == 0 ? out->embed_params : 0.0);
    out->head_params_edp = mdl_held_params(&last, MDL_SYNC_EDP);
    out->embed_syncs_with_head = m->tied_embeddings && head == 0 && plan->split_w;
}

void wl_layer_ops_free(wl_layer_ops *ops)
{
    wl_ops_free(&ops->fwd);
    wl_ops_free(&ops->bwd);
    wl_ops_free(&ops->wgrad);
    wl_ops_free(&ops->recompute);
}

void wl_edge_ops_free(wl_edge_ops *ops)
{
    wl_ops_free(&ops->embed_fwd);
    wl_ops_free(&ops->embed_bwd);
    wl_ops_free(&ops->head_fwd);
    wl_ops_free(&ops->head_bwd);
    wl_ops_free(&ops->head_wgrad);
}
