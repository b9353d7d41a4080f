/* model.c - model FLOPs and memory per rank of a transformer (parameter
 * counts and placement: placement.c).
 *
 * Everything here is a pure function of (model, strategy): no allocation, no
 * logging, no I/O.  The formulas come from:
 *
 *  [N21] Narayanan et al., "Efficient Large-Scale Language Model Training on
 *        GPU Clusters Using Megatron-LM", SC'21, appendix: FLOPs of a GEMM are
 *        2mnk, backward = 2x forward, model FLOPs per iteration
 *        72 B s L h^2 (1 + s/(6h) + V/(12 L h)) for non-causal attention.
 *  [K23] Korthikanti et al., "Reducing Activation Recomputation in Large
 *        Transformer Models", MLSys'23, section 4: activation bytes of one
 *        layer, sbh(34 + 5as/h), and its tensor/sequence parallel and
 *        recompute variants (Table 2).
 *  [R20] Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training
 *        Trillion Parameter Models", SC'20: optimizer state, gradient and
 *        parameter sharding over the data-parallel ranks (stages 1, 2, 3).
 *  [MDO] Megatron-LM distributed optimizer: bf16 weights + fp32 main grads +
 *        fp32 master weights and Adam moments = 18 bytes per parameter,
 *        6 + 12/d when the optimizer state is sharded over d ranks.  With
 *        --grad-reduce-in-bf16 the gradient buffer has the parameters'
 *        dtype (megatron/core/distributed: grad_dtype = param dtype unless
 *        grad_reduce_in_fp32), so main grads are kept and reduced in bf16;
 *        the precision-aware optimizer (--use-precision-aware-optimizer,
 *        --exp-avg-dtype/--exp-avg-sq-dtype bf16) keeps the moments in
 *        bf16 beside the fp32 master weights.
 *  [FA2] Dao, "FlashAttention-2", ICLR'24, and FlashAttention (NeurIPS'22):
 *        the forward saves Q, K, V, the output O and the softmax
 *        log-sum-exp of each query row (fp32); the backward recomputes the
 *        scores block by block, and the dropout mask from the RNG state.
 *  [TE]  NVIDIA Transformer Engine, pytorch/module/linear.py: under FP8 a
 *        linear layer saves its input cast to FP8 (1 byte, or its
 *        transpose) for the weight gradient, and caches the FP8 weight and
 *        its transpose (weight_fp8, weight_t_fp8) across micro-batches.
 *  [DSV2] DeepSeek-AI, "DeepSeek-V2", 2024, section 2.1: multi-head latent
 *        attention (its widths and weights: placement.c).
 *  [DSV3] DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, section 2.2:
 *        multi-token prediction, D modules on the last stage, module k
 *        running a projection of [hidden; embedding], one transformer
 *        block and the shared output head on every token.
 *
 * Notation used in the comments: s seq_len, b micro_batch, h hidden, a heads,
 * d head_dim, g kv_heads, q = a*d, kv = g*d, f ffn_hidden, V vocab, L layers,
 * E experts, k top_k, fe expert ffn, t = tp_x*tp_y, c = cp_ring*cp_ulysses,
 * D mtp_layers; q, k, v, o the attention's widths of mdl_attn. */
#include "internal.h"

#include <assert.h>
#include <string.h>

/* Megatron's default DP gradient bucket (40M, counted here as bytes). */
#define MDL_GRAD_BUCKET_BYTES 40e6
/* fp32: main grads, master weights, Adam moments [MDO]; the log-sum-exp
 * of a softmax row [FA2]; the copy of the logits for the loss. */
#define MDL_FP32_BYTES 4.0
/* bf16: main grads with grad_reduce_in_bf16, moments with bf16 moments. */
#define MDL_BF16_BYTES 2.0
/* fp32 copy of the logits for the loss. */
#define MDL_LOSS_BYTES_PER_LOGIT MDL_FP32_BYTES
/* Dropout masks are stored as one byte per element [K23]. */
#define MDL_MASK_BYTES 1.0

/* {===================================================== shape and strategy */

static int at_least_one(int v) { return v > 0 ? v : 1; }

/* Activations sharded on sequence between the TP ranks: Megatron's sequence
 * parallel, or 2D TP (split on sequence over tp_x, hidden over tp_y). */
static bool seq_sharded(const cfg_strategy *s) { return s->sequence_parallel || s->tp_y > 1; }

/* }===================================================== shape and strategy */

/* {============================================================ attention */

/* Returns the mean keys per query under the causal mask (mdl_attn_keys in
 * model.h): the area of the attended part of the s x s score matrix over
 * s, the diagonal counted half as the full mask's s/2 does. */
double mdl_attn_keys(const cfg_model *m, bool windowed)
{
    double s = m->seq_len, w = m->window.tokens;
    if (!windowed || !(w > 0) || w >= s) return 0.5 * s;
    if (m->window.kind == CFG_WINDOW_CHUNKED) {
        double full = (double)((long long)(s / w)), r = s - full * w;
        return (full * w * w + r * r) / (2.0 * s);
    }
    return w - w * w / (2.0 * s);
}

/* Returns 2*tokens*keys*(q + o) FLOPs: QK^T over the q-wide heads, PV over
 * the v-wide ones [N21, DSV2]. */
double mdl_core_attn_flops(const cfg_model *m, bool windowed, double tokens)
{
    mdl_attn w;
    mdl_attn_widths(m, mdl_model_kv_heads(m), &w);
    return 2.0 * tokens * mdl_attn_keys(m, windowed) * (w.q + w.o);
}

/* Keys whose scores one query holds for the backward [K23]: the whole
 * context s, or the window (its band, or its chunk) when shorter. */
static double score_keys(const cfg_model *m, int layer)
{
    double s = m->seq_len, w = m->window.tokens;
    return cfg_is_window_layer(m, layer) && w < s ? w : s;
}

/* }============================================================ attention */

/* {================================================================= FLOPs */

/* Causal core attention of layer `layer`, forward, per token. */
static double core_attn_token_flops(const cfg_model *m, int layer)
{
    return mdl_core_attn_flops(m, cfg_is_window_layer(m, layer), 1.0);
}

/* Forward FLOPs of one layer per token: every GEMM is 2 * (its parameters)
 * per token [N21]: QKV 2h(q + 2kv), output 2qh (MLA: its down-, up- and
 * output projections [DSV2]), MLP 2*(2 or 3)hf; MoE adds the router 2hE
 * and runs k routed experts plus the shared ones. */
static double layer_token_flops(const cfg_model *m, int layer)
{
    double h = m->hidden;
    double f = 2.0 * (mdl_attn_split_params(m, mdl_model_kv_heads(m)) + mdl_mla_down_params(m)) +
               core_attn_token_flops(m, layer);
    if (cfg_is_moe_layer(m, layer)) {
        const cfg_moe *mo = &m->moe;
        f += 2.0 * h * mo->experts;
        f += mo->top_k * 2.0 * mdl_mlp_params(m, mo->ffn_hidden);
        f += mo->shared_experts * 2.0 * mdl_mlp_params(m, mo->shared_ffn_hidden);
    } else {
        f += 2.0 * mdl_mlp_params(m, m->ffn_hidden);
    }
    return f;
}

/* Forward FLOPs per token that the selective recompute modules `rm`
 * (cfg_recompute_modules bits) run again in layer `layer`: core_attn its
 * core attention; mla_up_proj the two up-projections 2(q_in*q + kv_lora*
 * (a*nope + v)), q_in = q_lora or h; mlp a dense layer's MLP; moe a MoE
 * layer's router, routed and shared experts; shared_experts the shared
 * ones (not again with moe).  The norms and the activation (layernorm,
 * moe_act) have no GEMM and count nothing [N21: FLOPs are the GEMMs']. */
static double recompute_token_flops(const cfg_model *m, unsigned rm, int layer)
{
    double f = 0.0, h = m->hidden;
    const cfg_moe *mo = &m->moe;
    bool moe = cfg_is_moe_layer(m, layer);
    if (rm >> CFG_RM_CORE_ATTN & 1u) f += core_attn_token_flops(m, layer);
    if ((rm >> CFG_RM_MLA_UP_PROJ & 1u) && cfg_is_mla(m)) {
        const cfg_mla *x = &m->mla;
        double q_in = x->q_lora_rank > 0 ? x->q_lora_rank : h;
        f += 2.0 * (q_in * m->heads * ((double)x->qk_nope_head_dim + x->qk_rope_head_dim) +
                    (double)x->kv_lora_rank * m->heads * ((double)x->qk_nope_head_dim + x->v_head_dim));
    }
    if ((rm >> CFG_RM_MLP & 1u) && !moe) f += 2.0 * mdl_mlp_params(m, m->ffn_hidden);
    double shared = mo->shared_experts * 2.0 * mdl_mlp_params(m, mo->shared_ffn_hidden);
    if ((rm >> CFG_RM_MOE & 1u) && moe)
        f += 2.0 * h * mo->experts + mo->top_k * 2.0 * mdl_mlp_params(m, mo->ffn_hidden) + shared;
    else if ((rm >> CFG_RM_SHARED_EXPERTS & 1u) && moe)
        f += shared;
    return f;
}

/* Returns tokens * forward FLOPs per token of layer `layer` (context
 * m->seq_len).  FLOPs. */
double mdl_layer_forward_flops(const cfg_model *m, int layer, double tokens)
{
    return tokens * layer_token_flops(m, layer);
}

/* Forward FLOPs per token of all layers plus the logits (2hV) [N21], and
 * of each multi-token prediction module: its projection 2*2h*h, its layer
 * and the shared output head's logits again [DSV3]. */
static double forward_token_flops(const cfg_model *m, double *layers_only)
{
    double sum = 0.0, h = m->hidden, logits = 2.0 * h * m->vocab;
    for (int l = 0; l < m->layers; l++) sum += layer_token_flops(m, l);
    if (layers_only) *layers_only = sum;
    double mtp = 0.0;
    for (int k = 0; k < m->mtp_layers; k++) mtp += 2.0 * 2.0 * h * h + layer_token_flops(m, m->layers + k) + logits;
    return sum + logits + mtp;
}

/* Returns 3 * tokens * (forward FLOPs per token), tokens =
 * global_batch * seq_len: backward costs twice the forward [N21].  For GELU,
 * f = 4h, g = a this is 72 B s L h^2 (1 + s/(12h) + V/(12 L h)).  FLOPs. */
double mdl_model_flops_per_step(const cfg_model *m, int global_batch)
{
    double tokens = (double)global_batch * m->seq_len;
    return 3.0 * tokens * forward_token_flops(m, NULL);
}

/* Returns model FLOPs plus the recomputed forward: every layer's forward
 * with full recompute, the core attention forward with selective
 * recompute [K23 section 5], or with recompute_modules the GEMMs of each
 * module once more (recompute_token_flops) (the main model's layers: the
 * multi-token prediction modules are not recomputed).  FLOPs. */
double mdl_hardware_flops_per_step(const cfg_model *m, const cfg_strategy *s)
{
    double tokens = (double)s->global_batch * m->seq_len;
    double layers = 0.0;
    double fwd = forward_token_flops(m, &layers);
    double again = 0.0;
    if (s->recompute == CFG_RECOMP_FULL)
        again = layers;
    else
        for (int l = 0; l < m->layers; l++) again += recompute_token_flops(m, cfg_recompute_modules(s), l);
    return tokens * (3.0 * fwd + again);
}

/* }================================================================= FLOPs */

/* {=========================================================== activations */

/* Bytes of one layer for one micro-batch on one rank [K23 section 4],
 * generalised.  With e = activation bytes (2), sl = s/c and B = sl*b, and
 * g = the bytes of a saved GEMM input (e; with fp8 the recipe's FP8 element
 * and its scales, mdl_saved_gemm_input_bytes [TE]):
 *   replicated over TP unless sequence sharded:
 *     attention input gBh, attention dropout mask Bh, MLP input gBh,
 *     MLP dropout mask Bh, two norm inputs 2eBh          -> 10 sbh
 *   MLA only [DSV2], replicated unless sequence sharded (the
 *   down-projections run on the rank's tokens):
 *     the latents e*B*(q_lora + kv_lora + rope) and their normed
 *     copies, inputs of the up-projections, e*B*(q_lora + kv_lora)
 *   sharded by TP (heads or ffn columns):
 *     Q eBq, K eBk, V eBv, output-projection input gBo     -> 8 sbh / t
 *     GELU input eBf and output gBf, or SwiGLU gate and up
 *     2eBf and product gBf                                  -> 16 sbh / t
 *   core attention, by kernel, dropped by selective recompute (which
 *   recomputes it from Q, K and V):
 *     eager: the softmax output, its dropout mask and the dropout output,
 *       (2e+1)*a*sl*s'*b, with s' = s, or the window when shorter
 *       (score_keys)                                        -> 5as^2b / t
 *     flash: the log-sum-exp of each query row 4*a*sl*b [FA2], and with
 *       fp8 its own output eBo (the projection keeps an FP8 copy; in
 *       bf16 the two are one tensor)                        -> 4asb / t
 * so GELU, f = 4h, g = a, eager gives Korthikanti's
 * sbh(10 + 24/t + 5as/(ht)), and /t throughout with sequence parallel.
 * CP splits the sequence: all terms shrink by c (the scores of sl queries
 * span all s keys).  A MoE layer replaces the MLP columns by the shared
 * experts' and adds the routed tokens (k * capacity factor per token,
 * times the load imbalance on the busiest EP rank, cfg_expert_load):
 * each keeps its dispatched input gh and the expert MLP's intermediates
 * ((1 or 2)e + g)*fe / etp.  Full recompute keeps the layer input eBh only
 * (/t with sequence parallel), whatever the kernel.
 *
 * Selective recompute drops what its modules (cfg_recompute_modules,
 * Megatron-Core's --recompute-modules) produce again in the backward,
 * keeping their inputs: core_attn the core attention's own (above);
 * layernorm the two norms' outputs, the saved inputs of QKV (MLA: its
 * down-projection) and of the MLP or router, 2gBh; mla_up_proj Q, K and V,
 * e*B*(q + k + v) / t; mlp a dense layer's MLP intermediates; moe a MoE
 * layer's routed tokens and shared experts' intermediates; moe_act the
 * routed experts' activation output (their FC2 input), g*fe/etp per routed
 * token; shared_experts the shared experts' intermediates. */
static double layer_act_bytes(const cfg_model *m, const cfg_strategy *s, int layer, cfg_recompute mode)
{
    double e = mdl_dtype_bytes(m), mk = MDL_MASK_BYTES, g = mdl_saved_gemm_input_bytes(m, s);
    double t = cfg_tp(s), c = cfg_cp(s);
    double t_seq = seq_sharded(s) ? t : 1.0;
    double h = m->hidden;
    mdl_attn w;
    mdl_attn_widths(m, mdl_model_kv_heads(m), &w);
    double tok = (double)m->seq_len / c * at_least_one(s->micro_batch); /* sl * b */
    double mlp = (mdl_mlp_matrices(m) - 1.0) * e + g; /* per element of an MLP's width */

    if (mode == CFG_RECOMP_FULL) return e * tok * h / t_seq;
    unsigned rm = mode == CFG_RECOMP_SELECTIVE ? cfg_recompute_modules(s) : 0;
#define AGAIN(x) ((rm >> (x)) & 1u)

    double replicated = tok * h * ((AGAIN(CFG_RM_LAYERNORM) ? 0.0 : 2.0 * g) + mk + mk + 2.0 * e);
    replicated += tok * (e * (w.q_lora + w.kv_lora + w.rope) + g * (w.q_lora + w.kv_lora));
    double sharded = tok * ((AGAIN(CFG_RM_MLA_UP_PROJ) ? 0.0 : e * (w.q + w.k + w.v)) + g * w.o);
    double routed = 0.0;
    if (cfg_is_moe_layer(m, layer)) {
        const cfg_moe *mo = &m->moe;
        double cf = cfg_expert_load(s);
        double etp = at_least_one(s->etp);
        /* Tokens reaching this rank's experts: its own routed tokens, and
         * with sequence sharding those its etp peers gather to it. */
        double rtok = mo->top_k * cf * tok * (seq_sharded(s) ? etp / t : 1.0);
        double kept = AGAIN(CFG_RM_MOE_ACT) ? mlp - g : mlp;
        if (!AGAIN(CFG_RM_MOE)) routed = rtok * (g * h + kept * mo->ffn_hidden / etp);
        if (!AGAIN(CFG_RM_MOE) && !AGAIN(CFG_RM_SHARED_EXPERTS))
            sharded += mo->shared_experts * mlp * tok * mo->shared_ffn_hidden;
    } else if (!AGAIN(CFG_RM_MLP)) {
        sharded += mlp * tok * m->ffn_hidden;
    }
    double core = 0.0;
    if (mode == CFG_RECOMP_NONE || (mode == CFG_RECOMP_SELECTIVE && !AGAIN(CFG_RM_CORE_ATTN))) {
        if (s->attention_kernel == CFG_ATTN_EAGER)
            core = (2.0 * e + mk) * m->heads * tok * score_keys(m, layer);
        else
            core = MDL_FP32_BYTES * m->heads * tok + (s->fp8 ? e * tok * w.o : 0.0);
    }

#undef AGAIN
    return replicated / t_seq + sharded / t + core / t + routed;
}

/* Bytes a multi-token prediction module stores for one micro-batch on
 * one rank besides its layer's [DSV3]: the embedding of the shifted
 * tokens and the main model's hidden (the inputs of its two norms), their
 * normed concatenation (2h, the projection's input: g bytes, 1 with fp8)
 * and the input of its final norm, (3e + 2g)Bh, split on sequence like the
 * layer inputs.  The module's layer is not recomputed
 * (mdl_hardware_flops_per_step). */
static double mtp_act_bytes(const cfg_model *m, const cfg_strategy *s)
{
    double e = mdl_dtype_bytes(m), g = mdl_saved_gemm_input_bytes(m, s), t_seq = seq_sharded(s) ? cfg_tp(s) : 1.0;
    double tok = (double)m->seq_len / cfg_cp(s) * at_least_one(s->micro_batch);
    double sum = 0.0;
    for (int k = 0; k < m->mtp_layers; k++)
        sum += (3.0 * e + 2.0 * g) * tok * m->hidden / t_seq + layer_act_bytes(m, s, m->layers + k, CFG_RECOMP_NONE);
    return sum;
}

/* Returns the activation bytes one rank stores for `layer` and one
 * micro-batch, with the strategy's TP/SP/CP sharding and recompute mode
 * (see layer_act_bytes).  Bytes. */
double mdl_layer_activation_bytes(const cfg_model *m, const cfg_strategy *s, int layer)
{
    return layer_act_bytes(m, s, layer, s->recompute);
}

/* }=========================================================== activations */

/* {============================================================== pipeline */

/* Returns the stage (0-based) holding global layer `layer`: the stage one
 * of whose chunks' layer ranges (cfg_stage_layers) holds it. */
int mdl_layer_stage(const cfg_model *m, const cfg_strategy *s, int layer)
{
    int pp = at_least_one(s->pp), v = cfg_stage_chunks(s);
    for (int j = 0; j < v; j++)
        for (int p = 0; p < pp; p++) {
            int first, n = cfg_stage_layers(m, s, p, j, &first);
            if (layer >= first && layer < first + n) return p;
        }
    return pp - 1;
}

/* Returns the (micro-batch, model chunk) pairs whose activations stage
 * `stage` holds at its peak, with m micro-batches, P = pp, v = vpp: a
 * pair is held from its forward to the end of its backward, or of its
 * weight-gradient pass (W) where the schedule runs W apart:
 * gpipe m; 1f1b min(P - stage, m); interleaved (Megatron's warm-up plus the
 * first steady forward) min((P - stage - 1)*2 + (v - 1)*P + 1, m*v);
 * zb-h1 min(P, m) on every stage (its W passes wait until every stage
 * holds as many as 1F1B's first); zb-v min(2P, 2m) chunks of half a stage
 * (the same bytes as 1F1B's first stage); dualpipe-v min(2P + 1, 2m)
 * chunks (DualPipe's table: PP + 1 with PP = 2P virtual stages: the
 * forward of an overlapped forward-backward pair stores its activations
 * before the backward frees its own).  The paired 1F1B of overlap_ep_comm
 * (cfg_ep_overlap_1f1b) holds one more: its extra warm-up forward.  With
 * gpipe, 1f1b and zb-h1 a stage
 * is one chunk, so this counts micro-batches.  The counts are those of the
 * orders of sim/workload/schedule.c, checked against them by the tests. */
int mdl_inflight_chunks(const cfg_strategy *s, int stage)
{
    int P = at_least_one(s->pp), nmicro = at_least_one(cfg_flush_micro_batches(s)), v = cfg_stage_chunks(s);
    int n;
    if (s->schedule == CFG_SCHED_GPIPE) {
        n = nmicro;
    } else if (s->schedule == CFG_SCHED_ZB_H1) {
        n = P < nmicro ? P : nmicro;
    } else if (s->schedule == CFG_SCHED_ZB_V || s->schedule == CFG_SCHED_DUALPIPE_V) {
        n = 2 * P + (s->schedule == CFG_SCHED_DUALPIPE_V);
        if (n > 2 * nmicro) n = 2 * nmicro;
    } else if (v > 1) {
        n = (P - stage - 1) * 2 + (v - 1) * P + 1 + cfg_ep_overlap_1f1b(s);
        if (n > nmicro * v) n = nmicro * v;
    } else {
        n = P - stage + cfg_ep_overlap_1f1b(s);
        if (n > nmicro) n = nmicro;
    }
    return n < 1 ? 1 : n;
}

/* }============================================================== pipeline */

/* {================================================================ memory */

/* Returns the sum of h's parts that fp8 runs in FP8 and whose gradients
 * reduce over g. */
static double fp8_params(const mdl_held *h, mdl_sync g)
{
    double sum = 0.0;
    for (int p = 0; p < MDL_NPARTS; p++)
        if (mdl_part_fp8((mdl_part)p) && mdl_part_sync((mdl_part)p) == g) sum += h->params[p];
    return sum;
}

/* What one rank needs for the transformer layers of its stage besides
 * their parameters (mdl_stage_params). */
typedef struct stage_sums {
    double largest_layer;   /* held parameters of the largest layer */
    double act_per_micro;   /* activation bytes of one micro-batch, all chunks */
    double act_full_layer;  /* largest layer's activations without recompute */
    double fp8_dense;       /* held GEMM weights fp8 runs in FP8, reduced over DP */
    double fp8_expert;      /* the same, routed experts (over expert DP) */
} stage_sums;

/* What stage_sum reads of one layer.  A layer's figures depend on it
 * through its kind alone (MoE or dense, windowed or full attention), so
 * each kind's are computed once a call. */
typedef struct layer_sums {
    double held, fp8_dense, fp8_expert, act, act_full;
} layer_sums;

typedef struct kind_memo {
    bool done[2][2];
    layer_sums v[2][2]; /* [moe][windowed] */
} kind_memo;

static const layer_sums *layer_sums_of(const cfg_model *m, const cfg_strategy *s, int l, kind_memo *memo)
{
    bool moe = cfg_is_moe_layer(m, l), win = cfg_is_window_layer(m, l);
    layer_sums *o = &memo->v[moe][win];
    if (memo->done[moe][win]) return o;
    mdl_held h;
    mdl_layer_held(m, s, moe, &h);
    o->held = mdl_held_params(&h, MDL_SYNC_DP) + mdl_held_params(&h, MDL_SYNC_EDP);
    o->fp8_dense = fp8_params(&h, MDL_SYNC_DP);
    o->fp8_expert = fp8_params(&h, MDL_SYNC_EDP);
    o->act = layer_act_bytes(m, s, l, s->recompute);
    o->act_full = layer_act_bytes(m, s, l, CFG_RECOMP_NONE);
    memo->done[moe][win] = true;
    return o;
}

static void stage_sum(const cfg_model *m, const cfg_strategy *s, int stage, stage_sums *out)
{
    memset(out, 0, sizeof *out);
    int v = cfg_stage_chunks(s);
    if (stage == cfg_head_stage(s)) out->act_per_micro += mtp_act_bytes(m, s);
    kind_memo memo = {0};
    for (int j = 0; j < v; j++) {
        int first, n = cfg_stage_layers(m, s, stage, j, &first);
        for (int l = first; l < first + n; l++) {
            const layer_sums *ls = layer_sums_of(m, s, l, &memo);
            if (ls->held > out->largest_layer) out->largest_layer = ls->held;
            out->fp8_dense += ls->fp8_dense;
            out->fp8_expert += ls->fp8_expert;
            out->act_per_micro += ls->act;
            if (ls->act_full > out->act_full_layer) out->act_full_layer = ls->act_full;
        }
    }
}

/* Fills *out with the bytes per parameter of the strategy's precision:
 * weights in the model dtype, with fp8 an FP8 weight and its transpose
 * (their scales too: mdl_fp8_recipe_of) [TE]; main grads fp32, or in the model dtype with grad_reduce_in_bf16
 * [MDO]; fp32 master weights and two moments (fp32 or bf16).  One Adam step
 * reads the grad, the master and the moments and writes the master, the
 * moments and the weight (30 bytes with fp32 grads and moments, 22 with
 * bf16 moments, 20 with bf16 grads too). */
void mdl_precision_of(const cfg_model *m, const cfg_strategy *s, mdl_precision *out)
{
    double w = mdl_dtype_bytes(m);
    double moment = s->optimizer_moments == CFG_MOMENTS_BF16 ? MDL_BF16_BYTES : MDL_FP32_BYTES;
    out->weight_bytes = w;
    const mdl_fp8_recipe *r = mdl_fp8_recipe_of(s->fp8_recipe);
    out->fp8_copy_bytes = s->fp8 ? r->layouts * r->weight_bytes : 0.0;
    out->grad_bytes = s->grad_reduce_in_bf16 ? w : MDL_FP32_BYTES;
    out->optimizer_bytes = MDL_FP32_BYTES + 2.0 * moment;
    out->step_bytes = out->grad_bytes + 2.0 * out->optimizer_bytes + w;
}

/* Fills *out with the memory (bytes) of one rank of stage `stage`, 0-based
 * and below pp (asserted):
 *  - the parameters of mdl_stage_params (placement.c);
 *  - per parameter the bytes of mdl_precision_of: by default weights
 *    dtype_bytes, fp32 main grads 4, Adam 12 [MDO]; with fp8, 2 more for
 *    each layer GEMM weight (its FP8 copies, sharded with the weights);
 *    ZeRO stage z shards the optimizer (z >= 1), the grads (z >= 2)
 *    and the weights (z >= 3) over D ranks [R20]: D = dp*c for non-expert
 *    parameters (CP ranks hold the same weights), D = dp*c*t/(ep*etp) for
 *    routed experts (Megatron's expert data parallel; dp*c/ep when etp = t);
 *    with HSDP (dp_shard) D = dp_shard for the non-expert parameters;
 *  - activations: in-flight chunks times the stage's per-micro-batch bytes
 *    per chunk (the head's stage's multi-token prediction modules counted
 *    in its bytes, mtp_act_bytes), plus one layer without recompute (by
 *    the attention kernel) as the working set of full recompute [K23];
 *  - buffers: bf16 + fp32 logits s*b*V/(t*c) on the head's stage
 *    (cfg_head_stage: the last, or the first in a V), once more for each
 *    multi-token prediction module (its loss), the largest
 *    gathered layer (or embedding, or output layer) with ZeRO-3, one 40 MB
 *    DP gradient bucket when dp*c > 1. */
void mdl_rank_memory(const cfg_model *m, const cfg_strategy *s, int stage, mdl_memory *out)
{
    memset(out, 0, sizeof *out);
    int v = cfg_stage_chunks(s);
    assert(stage >= 0 && stage < at_least_one(s->pp));

    stage_sums ss;
    stage_sum(m, s, stage, &ss);
    double dense, expert;
    mdl_stage_params(m, s, stage, &dense, &expert);
    mdl_held edge;
    mdl_edge_held(m, s, stage, &edge);
    double largest = ss.largest_layer;
    if (edge.params[MDL_PART_EMBEDDING] > largest) largest = edge.params[MDL_PART_EMBEDDING];
    if (edge.params[MDL_PART_OUTPUT] > largest) largest = edge.params[MDL_PART_OUTPUT];

    double t = cfg_tp(s), c = cfg_cp(s), dpc = at_least_one(s->dp) * c;
    double dp_expert = dpc * t / (at_least_one(s->ep) * (double)at_least_one(s->etp));
    if (dp_expert < 1.0) dp_expert = 1.0;
    double shard = s->dp_shard > 0 ? cfg_dp_shard(s) : dpc; /* HSDP: the shard group only */
    double full = dense + expert;
    double sharded = dense / shard + expert / dp_expert;
    double fp8 = s->zero >= 3 ? ss.fp8_dense / shard + ss.fp8_expert / dp_expert : ss.fp8_dense + ss.fp8_expert;
    mdl_precision pr;
    mdl_precision_of(m, s, &pr);
    double wb = pr.weight_bytes;

    out->params = full;
    out->fp8_copies_bytes = pr.fp8_copy_bytes * fp8;
    out->weights_bytes = wb * (s->zero >= 3 ? sharded : full) + out->fp8_copies_bytes;
    out->grads_bytes = pr.grad_bytes * (s->zero >= 2 ? sharded : full);
    out->optimizer_bytes = pr.optimizer_bytes * (s->zero >= 1 ? sharded : full);

    int chunks = mdl_inflight_chunks(s, stage);
    out->activations_bytes = chunks * ss.act_per_micro / v;
    out->inflight_microbatches = (chunks + v - 1) / v;
    if (s->recompute == CFG_RECOMP_FULL) out->activations_bytes += ss.act_full_layer;

    double buffers = 0.0;
    if (stage == cfg_head_stage(s)) {
        double logits = (double)m->seq_len * at_least_one(s->micro_batch) * m->vocab / (t * c);
        buffers += (1.0 + m->mtp_layers) * logits * (wb + MDL_LOSS_BYTES_PER_LOGIT);
    }
    if (s->zero >= 3) buffers += wb * largest;
    if (dpc > 1) buffers += MDL_GRAD_BUCKET_BYTES;
    out->buffers_bytes = buffers;

    out->total_bytes = out->weights_bytes + out->grads_bytes + out->optimizer_bytes + out->activations_bytes +
                       out->buffers_bytes;
}

/* Returns the stage with the largest total (the first one on a tie) and
 * fills out with its memory. */
int mdl_peak_memory(const cfg_model *m, const cfg_strategy *s, mdl_memory *out)
{
    int pp = at_least_one(s->pp), best = 0;
    mdl_rank_memory(m, s, 0, out);
    for (int p = 1; p < pp; p++) {
        mdl_memory cur;
        mdl_rank_memory(m, s, p, &cur);
        if (cur.total_bytes > out->total_bytes) {
            *out = cur;
            best = p;
        }
    }
    return best;
}

/* }================================================================ memory */
