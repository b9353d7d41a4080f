/* internal.h - the model module's shape helpers, shared by its files:
 * model.c (FLOPs, activations, memory) and placement.c (parameter counts
 * and which of them a rank holds).
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

/* Width of the query projection (a*d) and of K or V (g*d). */
static inline double mdl_q_width(const cfg_model *m) { return m->heads * mdl_head_dim(m); }
static inline double mdl_kv_width(const cfg_model *m)
{
    int g = m->kv_heads > 0 ? m->kv_heads : m->heads;
    return g * mdl_head_dim(m);
}

/* Number of weight matrices of one MLP (up and down; a gated MLP adds the gate). */
static inline double mdl_mlp_matrices(const cfg_model *m) { return cfg_mlp_gated(m) ? 3.0 : 2.0; }

/* Weights of one MLP of width ffn (no biases). */
static inline double mdl_mlp_params(const cfg_model *m, double ffn) { return mdl_mlp_matrices(m) * m->hidden * ffn; }

#endif
