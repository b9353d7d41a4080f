/* model.h - what a transformer costs, independently of any machine:
 * parameter counts, model FLOPs per step, and memory per rank.
 *
 * Pure functions: no allocation, no logging, no I/O.  Each formula cites its
 * source in model.c.  Units are in the names: _flops (FLOPs, not FLOP/s),
 * _bytes. */
#ifndef HEPTASIM_MODEL_H
#define HEPTASIM_MODEL_H

#include "../config/config.h"

typedef struct mdl_params {
    double embedding;        /* input embedding, vocab*hidden */
    double output;           /* output projection (0 when tied) */
    double per_dense_layer;  /* attention + dense MLP + norms */
    double per_moe_layer;    /* attention + router + all routed and shared experts + norms */
    double attention;        /* attention block of one layer (QKV with GQA, output proj, norm) */
    double expert;           /* one routed expert's MLP */
    double total;            /* every parameter of the model */
    double active;           /* parameters one token touches (top-k experts) */
} mdl_params;

void mdl_count_params(const cfg_model *m, mdl_params *out);

/* Model FLOPs of one training step (forward + backward = 3x forward,
 * causal attention counted as in Megatron's formula, logits included,
 * recompute excluded): the numerator of MFU. */
double mdl_model_flops_per_step(const cfg_model *m, int global_batch);

/* Same with recomputation counted (forward done again for the recomputed
 * part): the numerator of HFU. */
double mdl_hardware_flops_per_step(const cfg_model *m, const cfg_strategy *s);

/* Forward FLOPs of one layer for `tokens` tokens of one sequence-length
 * context (all heads, all experts a token is routed to). */
double mdl_layer_forward_flops(const cfg_model *m, int layer, double tokens);

/* Memory of one rank, by component. */
typedef struct mdl_memory {
    double weights_bytes;       /* bf16 parameters held by the rank */
    double grads_bytes;         /* gradients (fp32 main grads or bf16, as Megatron) */
    double optimizer_bytes;     /* fp32 master weights + Adam moments (sharded by ZeRO >= 1) */
    double activations_bytes;   /* stored activations of the in-flight micro-batches */
    double buffers_bytes;       /* logits, communication buffers, workspace */
    double total_bytes;         /* sum of the above */
    int inflight_microbatches;  /* micro-batches whose activations are held at the peak */
    double params;              /* parameters held by the rank (after TP/PP/EP sharding) */
} mdl_memory;

/* Memory of a rank on pipeline stage `stage` (0-based): the weights and
 * activations of the stage's own layers (cfg_stage_layers, so a first or
 * last stage with fewer layers holds less), the embedding on the first
 * stage, the output layer and logits on the last.  The rank's other
 * coordinates do not change its memory. */
void mdl_rank_memory(const cfg_model *m, const cfg_strategy *s, int stage, mdl_memory *out);

/* The stage with the largest total; fills out with its memory, returns the stage. */
int mdl_peak_memory(const cfg_model *m, const cfg_strategy *s, mdl_memory *out);

/* Korthikanti et al. (MLSys'23) activation bytes of one transformer layer
 * for one micro-batch, for the layer's shape (s, b, h, a, t), with or
 * without sequence parallel and with the recompute mode.  Exposed for tests
 * and for the memory command. */
double mdl_layer_activation_bytes(const cfg_model *m, const cfg_strategy *s, int layer);

/* Returns the pipeline stage (0-based) that holds global layer `layer`,
 * by the placement of cfg_stage_layers (even: pp*v equal chunks, chunk i
 * on stage i % pp; or the first/last stage's own layer count). */
int mdl_layer_stage(const cfg_model *m, const cfg_strategy *s, int layer);

/* Returns how many (micro-batch, model chunk) pairs have their activations
 * stored on stage `stage` at its peak: gpipe m; 1f1b min(pp - stage, m);
 * interleaved min((pp - stage - 1)*2 + (vpp - 1)*pp + 1, m*vpp).  Without
 * interleaving a stage is one chunk, so this is a count of micro-batches;
 * mdl_memory.inflight_microbatches is this divided by vpp, rounded up. */
int mdl_inflight_chunks(const cfg_strategy *s, int stage);

/* Parameters held by one rank of stage `stage` after TP, EP and PP
 * sharding (before ZeRO): *dense_params are replicated over the
 * dp*cp_ring*cp_ulysses ranks, *expert_params (routed experts) over the
 * expert-data-parallel ranks.  Counts, not bytes. */
void mdl_stage_params(const cfg_model *m, const cfg_strategy *s, int stage, double *dense_params,
                      double *expert_params);

#endif
