/* internal.h - the model module's shape helpers, shared by its files:
 * model.c (FLOPs, activations, memory), placement.c (parameter counts
 * and which of them a rank holds), fp8.c (the FP8 recipes' bytes) and
 * moe.c (where a token's experts land).
 *
 * Notation as in model.c: h hidden, d head_dim, a heads, g kv_heads,
 * q = a*d, kv = g*d, f an MLP's width. */
#ifndef HEPTASIM_MODEL_INTERNAL_H
#define HEPTASIM_MODEL_INTERNAL_H

#include "model.h"

static inline double mdl_dtype_bytes(const cfg_model *m) { return m->dtype_bytes > 0 ? m->dtype_bytes : 2.0; }

static inline double mdl_head_dim(const cfg_model *m)
{
    if (m->head_dim > 0) return m->head_dim;
    return (double)m->hidden / (m->heads > 0 ? m->heads : 1);
}

/* The model's key/value heads (heads without GQA). */
static inline double mdl_model_kv_heads(const cfg_model *m) { return m->kv_heads > 0 ? m->kv_heads : m->heads; }

/* Weights of one layer's attention projections with `kv_heads` key/value
 * heads, no norms, no biases (placement.c): those split over the TP ranks
 * (mdl_attn_split_params: Q, K, V, or MLA's up-projections, and the output
 * projection) and MLA's down-projections, which every TP rank holds whole. */
double mdl_attn_split_params(const cfg_model *m, double kv_heads);
double mdl_mla_down_params(const cfg_model *m);

/* MLA's norms of the compressed query and key/value (0 without MLA). */
static inline double mdl_mla_norm_params(const cfg_model *m)
{
    return cfg_is_mla(m) ? (double)m->mla.q_lora_rank + m->mla.kv_lora_rank : 0.0;
}

/* Number of weight matrices of one MLP (up and down; a gated MLP adds the gate). */
static inline double mdl_mlp_matrices(const cfg_model *m) { return cfg_mlp_gated(m) ? 3.0 : 2.0; }

/* Weights of one MLP of width ffn (no biases). */
static inline double mdl_mlp_params(const cfg_model *m, double ffn) { return mdl_mlp_matrices(m) * m->hidden * ffn; }

#endif
