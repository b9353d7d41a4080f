/* layer.c - the op templates of one transformer layer on one rank, and of
 * the first and last stage's extras (embedding, logits and loss).
 *
 * Shapes follow Megatron's layout for 1D tensor parallel (column-parallel
 * QKV and FC1, row-parallel projection and FC2): without sequence
 * parallel each block ends with an all-reduce over TP; with it, an
 * all-gather before each block and a reduce-scatter after it, mirrored in
 * backward (Korthikanti et al., MLSys'23, section 4.2.2).  Context parallel
 * shards the sequence: Ulysses re-shards heads <-> sequence with an
 * all-to-all around core attention; ring attention gathers K and V blocks
 * round the ring, overlapped with blockwise attention.  Experts: router,
 * dispatch all-to-all over EP, the local experts' GEMMs on the routed
 * tokens, combine all-to-all.  Backward GEMMs cost twice the forward
 * (input and weight gradients); flash-attention backward 2.5x. */
#include "../model/model.h"
#include "internal.h"

#define ATTN_BWD_FACTOR 2.5

/* Emits into one op list with the layer's shapes at hand. */
typedef struct emitter {
    const wl_plan *plan;
    wl_ops *ops;
    uint8_t phase;
    double dtype;   /* bytes per activation element */
} emitter;

static void emit_compute(emitter *e, int label, double seconds)
{
    wl_instr in = {0};
    in.op = WL_COMPUTE;
    in.phase = e->phase;
    in.label = (uint16_t)label;
    in.layer = -1;
    in.micro = -1;
    in.peer = -1;
    in.seconds = seconds;
    wl_ops_push(e->ops, &in);
}

static int group_size(const cfg_strategy *s, wl_group g)
{
    switch (g) {
    case WL_G_TP: return s->tp_x * s->tp_y;
    case WL_G_TPX: return s->tp_x;
    case WL_G_TPY: return s->tp_y;
    case WL_G_CPR: return s->cp_ring;
    case WL_G_CPU: return s->cp_ulysses;
    case WL_G_FUSED: return s->tp_y * s->cp_ulysses;
    case WL_G_EP: return s->ep;
    case WL_G_EDP: return s->dp * s->cp_ring * s->cp_ulysses / s->ep;
    case WL_G_DP: return s->dp * s->cp_ring * s->cp_ulysses;
    case WL_G_PP: return s->pp;
    default: return 1;
    }
}

/* A collective on `stream` (WL_S_MAIN = blocking); skipped for a group of one. */
static void emit_coll(emitter *e, int label, wl_coll kind, wl_group g, double bytes, wl_stream stream)
{
    if (group_size(e->plan->s, g) <= 1 || bytes <= 0) return;
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
    wl_ops_push(e->ops, &in);
}

/* Wait for the last op issued on `stream`; the program fills in seq. */
static void emit_wait(emitter *e, wl_stream stream)
{
    wl_instr in = {0};
    in.op = WL_WAIT;
    in.stream = (uint8_t)stream;
    in.phase = e->phase;
    in.label = WL_L_WAIT;
    in.layer = -1;
    in.micro = -1;
    in.peer = -1;
    in.seq = 0; /* 0 = "everything issued so far on the stream" */
    wl_ops_push(e->ops, &in);
}

static void emit_gemm(emitter *e, int label, double m, double n, double k, bool backward)
{
    const cost_model *c = e->plan->c;
    int db = e->plan->m->dtype_bytes;
    double t = cost_gemm_s(c, m, n, k, db);
    if (backward) t = cost_gemm_s(c, m, k, n, db) + cost_gemm_s(c, k, n, m, db); /* dgrad + wgrad */
    emit_compute(e, label, t);
}

static void emit_elementwise(emitter *e, int label, double bytes, bool backward)
{
    emit_compute(e, label, cost_elementwise_s(e->plan->c, backward ? 2 * bytes : bytes));
}

/* Shapes of the layer on this rank. */
typedef struct shape {
    double tok;      /* tokens of the rank's sequence shard in one micro-batch: b*s/cp */
    double tok_sp;   /* tokens held between blocks: tok/tp with SP, else tok */
    double h, q, kv; /* hidden, a*d/tp, 2*g*d/tp (K and V), per rank */
    double t;        /* tp */
    bool sp;
} shape;

static shape layer_shape(const wl_plan *plan)
{
    const cfg_model *m = plan->m;
    const cfg_strategy *s = plan->s;
    shape sh;
    sh.t = cfg_tp(s);
    sh.sp = s->sequence_parallel || s->tp_y > 1;
    sh.tok = (double)s->micro_batch * m->seq_len / cfg_cp(s);
    sh.tok_sp = sh.sp ? sh.tok / sh.t : sh.tok;
    sh.h = m->hidden;
    sh.q = (double)m->heads * m->head_dim / sh.t;
    /* KV heads are replicated when tp exceeds them. */
    double kv_heads = (double)m->kv_heads / sh.t;
    if (kv_heads < 1) kv_heads = 1;
    sh.kv = 2.0 * kv_heads * m->head_dim;
    return sh;
}

/* Gather before a column-parallel block (SP only). */
static void block_entry(emitter *e, const shape *sh, bool backward)
{
    if (sh->sp) emit_coll(e, WL_L_TP_AG, WL_ALLGATHER, WL_G_TP, sh->tok * sh->h * e->dtype, WL_S_MAIN);
    (void)backward;
}

/* Reduce after a row-parallel block (forward) or after the column-parallel
 * input gradient (backward). */
static void block_exit(emitter *e, const shape *sh)
{
    double bytes = sh->tok * sh->h * e->dtype;
    if (sh->sp)
        emit_coll(e, WL_L_TP_RS, WL_REDUCESCATTER, WL_G_TP, bytes, WL_S_MAIN);
    else
        emit_coll(e, WL_L_TP_AR, WL_ALLREDUCE, WL_G_TP, bytes, WL_S_MAIN);
}

static void attention_core(emitter *e, const shape *sh, bool backward)
{
    const cfg_model *m = e->plan->m;
    const cfg_strategy *s = e->plan->s;
    /* Causal attention of the rank's queries against the whole context:
     * scores and context GEMMs, half of the square for the mask. */
    double flops = 4.0 * sh->tok * m->seq_len * sh->q * 0.5;
    double bytes = sh->tok * (2 * sh->q + sh->kv) * e->dtype;
    if (backward) {
        flops *= ATTN_BWD_FACTOR;
        bytes *= 2;
    }
    double t = cost_attention_s(e->plan->c, flops, bytes);
    if (s->cp_ring > 1) {
        /* K,V blocks go round the ring (gradients come back in backward). */
        double kv_block = sh->tok * sh->kv * e->dtype;
        wl_stream st = s->overlap_cp_comm ? WL_S_CP : WL_S_MAIN;
        emit_coll(e, WL_L_CP_KV, WL_ALLGATHER, WL_G_CPR, kv_block * s->cp_ring, st);
        if (backward) emit_coll(e, WL_L_CP_KV, WL_REDUCESCATTER, WL_G_CPR, kv_block * s->cp_ring, st);
        emit_compute(e, WL_L_ATTN, t);
        if (st != WL_S_MAIN) emit_wait(e, st);
    } else {
        emit_compute(e, WL_L_ATTN, t);
    }
}

static void ulysses_a2a(emitter *e, const shape *sh, double width)
{
    if (e->plan->s->cp_ulysses > 1)
        emit_coll(e, WL_L_CP_A2A, WL_ALLTOALL, WL_G_CPU, sh->tok * width * e->dtype, WL_S_MAIN);
}

/* Attention block, forward or backward (ops in execution order). */
static void attention_block(emitter *e, const shape *sh, bool bwd)
{
    double norm_bytes = sh->tok_sp * sh->h * e->dtype * 2;
    if (!bwd) {
        emit_elementwise(e, WL_L_NORM, norm_bytes, false);
        block_entry(e, sh, false);
        emit_gemm(e, WL_L_QKV, sh->tok, sh->q + sh->kv, sh->h, false);
        ulysses_a2a(e, sh, sh->q + sh->kv);
        attention_core(e, sh, false);
        ulysses_a2a(e, sh, sh->q);
        emit_gemm(e, WL_L_PROJ, sh->tok, sh->h, sh->q, false);
        block_exit(e, sh);
        emit_elementwise(e, WL_L_RESIDUAL, sh->tok_sp * sh->h * e->dtype * 3, false);
    } else {
        emit_elementwise(e, WL_L_RESIDUAL, sh->tok_sp * sh->h * e->dtype * 3, true);
        block_entry(e, sh, true); /* gather the output gradient */
        emit_gemm(e, WL_L_PROJ, sh->tok, sh->h, sh->q, true);
        ulysses_a2a(e, sh, sh->q);
        attention_core(e, sh, true);
        ulysses_a2a(e, sh, sh->q + sh->kv);
        block_entry(e, sh, true); /* gather the input again for the weight gradient */
        emit_gemm(e, WL_L_QKV, sh->tok, sh->q + sh->kv, sh->h, true);
        block_exit(e, sh);
        emit_elementwise(e, WL_L_NORM, norm_bytes, true);
    }
}

static void dense_mlp(emitter *e, const shape *sh, bool bwd)
{
    const cfg_model *m = e->plan->m;
    double f = m->ffn_hidden / sh->t;
    double up = m->activation == CFG_ACT_SWIGLU ? 2 * f : f;
    double act_bytes = sh->tok * f * e->dtype * (m->activation == CFG_ACT_SWIGLU ? 3 : 2);
    if (!bwd) {
        emit_elementwise(e, WL_L_NORM, sh->tok_sp * sh->h * e->dtype * 2, false);
        block_entry(e, sh, false);
        emit_gemm(e, WL_L_FC1, sh->tok, up, sh->h, false);
        emit_elementwise(e, WL_L_ACT, act_bytes, false);
        emit_gemm(e, WL_L_FC2, sh->tok, sh->h, f, false);
        block_exit(e, sh);
        emit_elementwise(e, WL_L_RESIDUAL, sh->tok_sp * sh->h * e->dtype * 3, false);
    } else {
        emit_elementwise(e, WL_L_RESIDUAL, sh->tok_sp * sh->h * e->dtype * 3, true);
        block_entry(e, sh, true);
        emit_gemm(e, WL_L_FC2, sh->tok, sh->h, f, true);
        emit_elementwise(e, WL_L_ACT, act_bytes, true);
        block_entry(e, sh, true);
        emit_gemm(e, WL_L_FC1, sh->tok, up, sh->h, true);
        block_exit(e, sh);
        emit_elementwise(e, WL_L_NORM, sh->tok_sp * sh->h * e->dtype * 2, true);
    }
}

/* Routed and shared experts. Tokens are split over TP ranks (sequence
 * parallel style) before routing; each EP rank's experts receive, on
 * balance, top_k * capacity_factor tokens per token it routes. */
static void moe_mlp(emitter *e, const shape *sh, bool bwd)
{
    const cfg_model *m = e->plan->m;
    const cfg_strategy *s = e->plan->s;
    const cfg_moe *moe = &m->moe;
    double tok = sh->tok / sh->t;
    double routed = tok * moe->top_k * s->moe_capacity_factor;
    int local = moe->experts / s->ep;
    double per_expert = routed / local;
    double fe = (double)moe->ffn_hidden / s->etp;
    double up = m->activation == CFG_ACT_SWIGLU ? 2 * fe : fe;
    double a2a = routed * sh->h * e->dtype;
    double act_bytes = routed * fe * e->dtype * (m->activation == CFG_ACT_SWIGLU ? 3 : 2);
    double sf = (double)moe->shared_experts * moe->shared_ffn_hidden / sh->t;
    double sup = m->activation == CFG_ACT_SWIGLU ? 2 * sf : sf;
    const cost_model *c = e->plan->c;
    int db = m->dtype_bytes;
    double experts_s = 0;
    if (!bwd)
        experts_s = local * (cost_gemm_s(c, per_expert, up, sh->h, db) + cost_gemm_s(c, per_expert, sh->h, fe, db));
    else
        experts_s = local * (cost_gemm_s(c, per_expert, sh->h, up, db) + cost_gemm_s(c, sh->h, up, per_expert, db) +
                             cost_gemm_s(c, per_expert, fe, sh->h, db) + cost_gemm_s(c, fe, sh->h, per_expert, db));

    emit_elementwise(e, WL_L_NORM, sh->tok_sp * sh->h * e->dtype * 2, bwd);
    emit_gemm(e, WL_L_ROUTER, tok, moe->experts, sh->h, bwd);
    emit_coll(e, bwd ? WL_L_EP_COMBINE : WL_L_EP_DISPATCH, WL_ALLTOALL, WL_G_EP, a2a, WL_S_MAIN);
    emit_compute(e, WL_L_EXPERTS, experts_s);
    emit_elementwise(e, WL_L_ACT, act_bytes, bwd);
    emit_coll(e, bwd ? WL_L_EP_DISPATCH : WL_L_EP_COMBINE, WL_ALLTOALL, WL_G_EP, a2a, WL_S_MAIN);
    if (sf > 0) {
        emit_gemm(e, WL_L_SHARED, tok, sup, sh->h, bwd);
        emit_gemm(e, WL_L_SHARED, tok, sh->h, sf, bwd);
    }
    emit_elementwise(e, WL_L_RESIDUAL, sh->tok_sp * sh->h * e->dtype * 3, bwd);
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

void wl_layer_ops_build(const wl_plan *plan, bool moe, wl_layer_ops *out)
{
    const cfg_model *m = plan->m;
    const cfg_strategy *s = plan->s;
    shape sh = layer_shape(plan);
    emitter e = {plan, &out->fwd, WL_PH_FORWARD, m->dtype_bytes};
    layer_pass(&e, &sh, moe, false);
    e.ops = &out->bwd;
    e.phase = WL_PH_BACKWARD;
    layer_pass(&e, &sh, moe, true);

    e.ops = &out->recompute;
    e.phase = WL_PH_RECOMPUTE;
    if (s->recompute == CFG_RECOMP_FULL) {
        layer_pass(&e, &sh, moe, false);
        for (int i = 0; i < out->recompute.n; i++) out->recompute.a[i].phase = WL_PH_RECOMPUTE;
    } else if (s->recompute == CFG_RECOMP_SELECTIVE) {
        /* Only the core attention runs again (its comms are not repeated). */
        double flops = 4.0 * sh.tok * m->seq_len * sh.q * 0.5;
        double bytes = sh.tok * (2 * sh.q + sh.kv) * e.dtype;
        emit_compute(&e, WL_L_ATTN, cost_attention_s(plan->c, flops, bytes));
    }

    mdl_params pa;
    mdl_count_params(m, &pa);
    double t = cfg_tp(s);
    if (moe) {
        double experts = (double)m->moe.experts * pa.expert;
        out->params_dp = (pa.per_moe_layer - experts) / t;
        out->params_edp = experts / s->ep / s->etp;
    } else {
        out->params_dp = pa.per_dense_layer / t;
        out->params_edp = 0;
    }
}

void wl_edge_ops_build(const wl_plan *plan, wl_edge_ops *out)
{
    const cfg_model *m = plan->m;
    shape sh = layer_shape(plan);
    double db = m->dtype_bytes;
    double vocab = m->vocab / sh.t;
    emitter e = {plan, &out->embed_fwd, WL_PH_FORWARD, db};

    /* Vocab-parallel embedding: look-up, then reduce the partial rows. */
    emit_elementwise(&e, WL_L_EMBED, sh.tok * sh.h * db * 2, false);
    block_exit(&e, &sh);
    e.ops = &out->embed_bwd;
    e.phase = WL_PH_BACKWARD;
    block_entry(&e, &sh, true);
    emit_elementwise(&e, WL_L_EMBED, sh.tok * sh.h * db * 2, true);

    /* Final norm, logits over the vocab shard, cross-entropy (its small
     * max/sum all-reduces over TP merged into one). */
    e.ops = &out->head_fwd;
    e.phase = WL_PH_FORWARD;
    emit_elementwise(&e, WL_L_NORM, sh.tok_sp * sh.h * db * 2, false);
    block_entry(&e, &sh, false);
    emit_gemm(&e, WL_L_LOGITS, sh.tok, vocab, sh.h, false);
    emit_elementwise(&e, WL_L_LOSS, sh.tok * vocab * (db + 4) * 2, false);
    emit_coll(&e, WL_L_TP_AR, WL_ALLREDUCE, WL_G_TP, sh.tok * 4 * 3, WL_S_MAIN);
    e.ops = &out->head_bwd;
    e.phase = WL_PH_BACKWARD;
    emit_elementwise(&e, WL_L_LOSS, sh.tok * vocab * (db + 4) * 2, true);
    emit_gemm(&e, WL_L_LOGITS, sh.tok, vocab, sh.h, true);
    block_exit(&e, &sh);
    emit_elementwise(&e, WL_L_NORM, sh.tok_sp * sh.h * db * 2, true);

    out->embed_params = (double)m->vocab * m->hidden / sh.t;
    out->head_params = (double)m->vocab * m->hidden / sh.t + m->hidden;
}

void wl_layer_ops_free(wl_layer_ops *ops)
{
    wl_ops_free(&ops->fwd);
    wl_ops_free(&ops->bwd);
    wl_ops_free(&ops->recompute);
}

void wl_edge_ops_free(wl_edge_ops *ops)
{
    wl_ops_free(&ops->embed_fwd);
    wl_ops_free(&ops->embed_bwd);
    wl_ops_free(&ops->head_fwd);
    wl_ops_free(&ops->head_bwd);
}
