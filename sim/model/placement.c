/* placement.c - parameter counts of a transformer, and which of them one
 * rank holds: how each part is split over tensor, expert and expert-tensor
 * parallel ranks or replicated, and which data-parallel group reduces its
 * gradients.  Memory, the workload's gradient and parameter traffic and
 * the estimator all take their parameters from here.
 *
 * Sources:
 *  [N21] Narayanan et al., SC'21 (see model.c): the counts.
 *  [MLM] Megatron-LM (megatron/core): VocabParallelEmbedding and the
 *        vocab-parallel output layer, column/row-parallel linears split
 *        over the TP group; norms and the MoE router (TopKRouter) hold
 *        whole vectors on every TP rank; shared experts are TP-split like
 *        the dense MLP; routed experts are split over EP x ETP and reduce
 *        over the expert-data-parallel group; with tied embeddings and
 *        pp > 1 the last stage keeps a copy of the word embedding
 *        (shared_embedding_or_output_weight).
 *  [MS2D] MindSpeed tp-2d (LayerNorm2D, RMSNorm2D): with tp_y > 1 a norm's
 *        weight is split over tp_y, like the hidden it scales, and
 *        replicated over tp_x; TopKRouter2D keeps the whole router.
 *  [DSV2] DeepSeek-AI, "DeepSeek-V2", 2024, section 2.1 (multi-head latent
 *        attention): W^DQ (h x q_lora), W^UQ and W^QR (q_lora x a*(nope +
 *        rope)), W^DKV and W^KR (h x (kv_lora + rope)), W^UK and W^UV
 *        (kv_lora x a*(nope + v)), W^O (a*v x h), RMS norms of the two
 *        latents.  Megatron's MLASelfAttention splits the up-projections
 *        and the output projection over TP by heads and holds the
 *        down-projections whole on every TP rank (parallel_mode
 *        "duplicated"), with their norms.
 *  [DSV3] DeepSeek-AI, "DeepSeek-V3 Technical Report", 2024, section 2.2
 *        (multi-token prediction): module k has two RMS norms, a projection
 *        M_k (2h x h) of [norm(h); norm(embedding)] and one transformer
 *        block, and shares the embedding and output head with the main
 *        model; DeepSeek counts it apart (671 B main + 14 B with the shared
 *        embedding and head, README_WEIGHTS.md), and the output head's final
 *        norm is the module's own (shared_head.norm).
 *
 * Not modelled (small): Megatron all-reduces the replicated norm, router
 * and MLA down-projection gradients over TP once per step when activations
 * are sequence sharded (finalize_model_grads; over tp_x with 2D TP), and with tied
 * embeddings and pp > 1 all-reduces the two embedding copies' gradients
 * between the first and the last stage.  The copy is held and reduced over
 * DP on the last stage like any other parameter. */
#include <assert.h>
#include <string.h>

#include "internal.h"

/* {================================================================ counts */

/* The attention weights split over TP by heads, with g KV heads: Q, K, V
 * and output projections h*q + h*k + h*v + o*h (= h*q + 2*h*g*d + q*h);
 * with MLA [DSV2] the up-projections q_lora*q (h*q without query
 * compression), kv_lora*(k_nope + v), and the output o*h. */
double mdl_attn_split_params(const cfg_model *m, double kv_heads)
{
    mdl_attn w;
    mdl_attn_widths(m, kv_heads, &w);
    double h = m->hidden;
    if (!cfg_is_mla(m)) return h * w.q + h * w.k + h * w.v + w.o * h;
    double nope = (double)m->heads * m->mla.qk_nope_head_dim;
    double q_in = w.q_lora > 0 ? w.q_lora : h;
    return q_in * w.q + w.kv_lora * (nope + w.v) + w.o * h;
}

/* MLA's down-projections [DSV2]: h*q_lora (none without query
 * compression) and h*(kv_lora + rope), the rotary key's included. */
double mdl_mla_down_params(const cfg_model *m)
{
    if (!cfg_is_mla(m)) return 0.0;
    mdl_attn w;
    mdl_attn_widths(m, m->heads, &w);
    return m->hidden * (w.q_lora + w.kv_lora + w.rope);
}

/* One layer's attention, whole: its projections, MLA's latent norms and
 * the layer's two norms. */
static double attention_params(const cfg_model *m)
{
    return mdl_attn_split_params(m, mdl_model_kv_heads(m)) + mdl_mla_down_params(m) + mdl_mla_norm_params(m) +
           2.0 * m->hidden;
}

/* A multi-token prediction module besides its layer [DSV3]: the
 * projection 2h*h and three norms (of the hidden, of the embedding, and
 * the final one before the shared output head). */
static double mtp_extra_params(const cfg_model *m) { return 2.0 * m->hidden * m->hidden + 3.0 * m->hidden; }

/* The two per-layer norms (one vector of h each). */
static double layer_norm_params(const cfg_model *m) { return 2.0 * m->hidden; }

/* Counts after Narayanan et al. [N21] generalised: attention
 * h*q + 2*h*kv + q*h + 2h (norms), or MLA's projections and latent norms
 * [DSV2]; MLP 2hf (plain) or 3hf (gated), biases ignored; MoE layer =
 * attention + router h*E + E routed experts + shared experts; embedding
 * V*h, output V*h unless tied, final norm h.  `active` counts the top-k
 * routed experts instead of all of them.  The multi-token prediction
 * modules (their layers numbered from L on) are counted apart [DSV3].
 * Fills *out with parameter counts (not bytes). */
void mdl_count_params(const cfg_model *m, mdl_params *out)
{
    memset(out, 0, sizeof *out);
    const cfg_moe *mo = &m->moe;
    double h = m->hidden;

    out->embedding = (double)m->vocab * h;
    out->output = m->tied_embeddings ? 0.0 : (double)m->vocab * h;
    out->attention = attention_params(m);
    out->per_dense_layer = out->attention + mdl_mlp_params(m, m->ffn_hidden);

    double moe_active = 0.0;
    if (mo->experts > 0) {
        double shared = mo->shared_experts * mdl_mlp_params(m, mo->shared_ffn_hidden);
        double router = h * mo->experts;
        out->expert = mdl_mlp_params(m, mo->ffn_hidden);
        out->per_moe_layer = out->attention + router + mo->experts * out->expert + shared;
        moe_active = out->attention + router + mo->top_k * out->expert + shared;
    }

    double edges = out->embedding + out->output + h;
    out->total = edges;
    out->active = edges;
    out->active_matmul = out->active - (m->tied_embeddings ? 0.0 : out->embedding);
    for (int l = 0; l < m->layers + m->mtp_layers; l++) {
        bool moe = cfg_is_moe_layer(m, l);
        double all = moe ? out->per_moe_layer : out->per_dense_layer, touched = moe ? moe_active : all;
        if (l < m->layers) {
            out->total += all;
            out->active += touched;
            out->active_matmul += touched;
        } else {
            out->mtp += all + mtp_extra_params(m);
            out->mtp_active += touched + mtp_extra_params(m);
        }
    }
}

/* }================================================================ counts */

/* {============================================================= placement */

/* ORDER MDL_PART: one row per mdl_part: its name, the group its gradients
 * reduce over, whether fp8 runs its GEMMs in FP8 (Transformer Engine's
 * linear layers; mla_down's two small norms are counted with it). */
static const struct part_row {
    const char *name;
    mdl_sync sync;
    bool fp8;
} part_rows[] = {
    {"attention", MDL_SYNC_DP, true},       {"mla_down", MDL_SYNC_DP, true},   {"norms", MDL_SYNC_DP, false},
    {"mlp", MDL_SYNC_DP, true},             {"router", MDL_SYNC_DP, false},    {"shared_experts", MDL_SYNC_DP, true},
    {"experts", MDL_SYNC_EDP, true},        {"embedding", MDL_SYNC_DP, false}, {"output", MDL_SYNC_DP, false},
    {"mtp_projection", MDL_SYNC_DP, true},
};
_Static_assert(sizeof part_rows / sizeof part_rows[0] == MDL_NPARTS, "one row per part");

mdl_sync mdl_part_sync(mdl_part part)
{
    assert((unsigned)part < MDL_NPARTS);
    return part_rows[part].sync;
}

bool mdl_part_fp8(mdl_part part) { return (unsigned)part < MDL_NPARTS && part_rows[part].fp8; }

const char *mdl_part_name(mdl_part part) { return (unsigned)part < MDL_NPARTS ? part_rows[part].name : "?"; }

/* Widths of mdl_attn: MHA/GQA q = a*d, k = v = g*d, o = a*d; MLA [DSV2]
 * q = k = a*(nope + rope), v = o = a*v_head. */
void mdl_attn_widths(const cfg_model *m, double kv_heads, mdl_attn *out)
{
    memset(out, 0, sizeof *out);
    double a = m->heads;
    if (!cfg_is_mla(m)) {
        double d = mdl_head_dim(m);
        out->q = out->o = a * d;
        out->k = out->v = kv_heads * d;
        return;
    }
    const cfg_mla *x = &m->mla;
    out->q = out->k = a * ((double)x->qk_nope_head_dim + x->qk_rope_head_dim);
    out->v = out->o = a * x->v_head_dim;
    out->q_lora = x->q_lora_rank;
    out->kv_lora = x->kv_lora_rank;
    out->rope = x->qk_rope_head_dim;
}

/* Returns g, or tp_x when tp_x > g: a TP rank needs at least one whole KV
 * head, so KV heads are replicated over tp_x / g ranks. */
int mdl_kv_heads_tp(const cfg_model *m, const cfg_strategy *s)
{
    int g = (int)mdl_model_kv_heads(m);
    return s->tp_x > g ? s->tp_x : g;
}

static double tp_y_of(const cfg_strategy *s) { return s->tp_y > 0 ? s->tp_y : 1; }

/* Fills *out with the parameters one rank holds of one layer of the kind
 * (moe or dense), t = tp_x*tp_y [MLM, MS2D, DSV2]:
 *   attention (h*q + 2*h*kv' + q*h) / t, kv' = mdl_kv_heads_tp * d, or
 *   MLA's up-projections and output projection / t;
 *   MLA's down-projections and latent norms whole;
 *   norms 2h / tp_y;
 *   dense: MLP (2 or 3)*h*f / t;
 *   MoE:   router h*E whole; shared experts (2 or 3)*h*fs*n_s / t;
 *          routed experts E*(2 or 3)*h*fe / (ep*etp).
 * Counts, not bytes. */
void mdl_layer_held(const cfg_model *m, const cfg_strategy *s, bool moe, mdl_held *out)
{
    memset(out, 0, sizeof *out);
    double t = cfg_tp(s);
    out->params[MDL_PART_ATTENTION] = mdl_attn_split_params(m, mdl_kv_heads_tp(m, s)) / t;
    out->params[MDL_PART_MLA_DOWN] = mdl_mla_down_params(m) + mdl_mla_norm_params(m);
    out->params[MDL_PART_NORMS] = layer_norm_params(m) / tp_y_of(s);
    if (!moe) {
        out->params[MDL_PART_MLP] = mdl_mlp_params(m, m->ffn_hidden) / t;
        return;
    }
    const cfg_moe *mo = &m->moe;
    double ep = s->ep > 0 ? s->ep : 1, etp = s->etp > 0 ? s->etp : 1;
    out->params[MDL_PART_ROUTER] = (double)m->hidden * mo->experts;
    out->params[MDL_PART_SHARED] = mo->shared_experts * mdl_mlp_params(m, mo->shared_ffn_hidden) / t;
    out->params[MDL_PART_EXPERTS] = mo->experts * mdl_mlp_params(m, mo->ffn_hidden) / (ep * etp);
}

/* Fills *out with the edge parameters a rank of pipeline stage `stage`
 * holds [MLM]: the word embedding V*h/t on stage 0; the final norm h/tp_y
 * and the output layer V*h/t on the stage of the last chunk
 * (cfg_head_stage: the last stage, or stage 0 in a V).  With tied
 * embeddings the output layer is the embedding: nothing more when both are
 * on stage 0 (pp = 1, or a V), Megatron's copy of it otherwise.  Each
 * multi-token prediction module [DSV3] adds to the head's stage its layer
 * (the parts of mdl_layer_held for layer L + k), its projection 2h*h/t and
 * three norms 3h/tp_y; they need the embedding there, so off stage 0 with
 * untied embeddings that stage holds a copy of it too (tied, the output
 * layer's copy is it). */
void mdl_edge_held(const cfg_model *m, const cfg_strategy *s, int stage, mdl_held *out)
{
    memset(out, 0, sizeof *out);
    double vh = (double)m->vocab * m->hidden / cfg_tp(s);
    int head = cfg_head_stage(s);
    if (stage == 0) out->params[MDL_PART_EMBEDDING] = vh;
    if (stage != head) return;
    out->params[MDL_PART_NORMS] = m->hidden / tp_y_of(s);
    if (!m->tied_embeddings || head != 0) out->params[MDL_PART_OUTPUT] = vh;
    for (int k = 0; k < m->mtp_layers; k++) {
        mdl_held layer;
        mdl_layer_held(m, s, cfg_is_moe_layer(m, m->layers + k), &layer);
        for (int p = 0; p < MDL_NPARTS; p++) out->params[p] += layer.params[p];
        out->params[MDL_PART_MTP_PROJ] += 2.0 * m->hidden * m->hidden / cfg_tp(s);
        out->params[MDL_PART_NORMS] += 3.0 * m->hidden / tp_y_of(s);
    }
    if (m->mtp_layers > 0 && head != 0 && !m->tied_embeddings) out->params[MDL_PART_EMBEDDING] = vh;
}

/* Returns the sum of h's parts whose gradients reduce over g. */
double mdl_held_params(const mdl_held *h, mdl_sync g)
{
    double sum = 0.0;
    for (int p = 0; p < MDL_NPARTS; p++)
        if (part_rows[p].sync == g) sum += h->params[p];
    return sum;
}

/* Fills the parameters one rank of stage `stage` holds, its layers
 * (cfg_stage_layers, all chunks) and edges together, by the group their
 * gradients reduce over. */
void mdl_stage_params(const cfg_model *m, const cfg_strategy *s, int stage, double *dense_params,
                      double *expert_params)
{
    mdl_held h;
    mdl_edge_held(m, s, stage, &h);
    double d = mdl_held_params(&h, MDL_SYNC_DP), e = mdl_held_params(&h, MDL_SYNC_EDP);
    double kind[2][2]; /* [moe][the group]: a layer's, alike for every layer of its kind */
    for (int moe = 0; moe < 2; moe++) {
        mdl_layer_held(m, s, moe, &h);
        kind[moe][0] = mdl_held_params(&h, MDL_SYNC_DP);
        kind[moe][1] = mdl_held_params(&h, MDL_SYNC_EDP);
    }
    for (int j = 0; j < cfg_stage_chunks(s); j++) {
        int first, n = cfg_stage_layers(m, s, stage, j, &first);
        for (int l = first; l < first + n; l++) {
            bool moe = cfg_is_moe_layer(m, l);
            d += kind[moe][0];
            e += kind[moe][1];
        }
    }
    *dense_params = d;
    *expert_params = e;
}

/* }============================================================= placement */
