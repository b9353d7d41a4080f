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
    double attention;        /* attention block of one layer (QKV with GQA, or MLA's projections; output proj, norms) */
    double expert;           /* one routed expert's MLP */
    double total;            /* every parameter of the main model (the multi-token prediction modules apart) */
    double active;           /* parameters one token touches (top-k experts), the embedding table included */
    double active_matmul;    /* of which it multiplies by: active without the input embedding (a look-up), the
                              * output layer kept (with tied embeddings the table is both: kept) */
    double mtp;              /* the multi-token prediction modules' own parameters (their embedding and output
                              * layer are the main model's) */
    double mtp_active;       /* of which one token touches */
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
 * context (all heads, all experts a token is routed to).  Layers from
 * m->layers on are the multi-token prediction modules' (their projection
 * and logits not included). */
double mdl_layer_forward_flops(const cfg_model *m, int layer, double tokens);

/* {============================================================ attention */

/* The widths of one layer's attention, all heads together (elements per
 * token): MHA/GQA with a heads of head_dim d and g key/value heads; or
 * multi-head latent attention (cfg_mla) with a query/key head of
 * qk = qk_nope + qk_rope and a value head of v, keys and values per head
 * after their up-projection. */
typedef struct mdl_attn {
    double q;        /* queries: a*d, or a*qk */
    double k;        /* keys: g*d, or a*qk */
    double v;        /* values: g*d, or a*v */
    double o;        /* the context, input of the output projection: a*d, or a*v */
    double q_lora;   /* MLA: the compressed query (0: queries projected from the hidden) */
    double kv_lora;  /* MLA: the compressed key/value latent (0 without MLA) */
    double rope;     /* MLA: the rotary key, one head shared by all heads */
} mdl_attn;

/* Fills *out for `kv_heads` key/value heads (the model's, or as many as a
 * TP group holds: mdl_kv_heads_tp); MLA ignores kv_heads. */
void mdl_attn_widths(const cfg_model *m, double kv_heads, mdl_attn *out);

/* Returns the keys one query attends to, averaged over the sequence, with
 * the causal mask: s/2 for full attention; through a sliding window of W
 * keys W - W^2/(2s) (the band of width W under the diagonal); through
 * chunks of C tokens (floor(s/C)*C^2 + r^2)/(2s), r = s mod C; s/2 when the
 * window is not shorter than s.  `windowed`: the layer uses the model's
 * window (cfg_is_window_layer). */
double mdl_attn_keys(const cfg_model *m, bool windowed);

/* Returns the forward FLOPs of core attention (scores QK^T and context PV)
 * for `tokens` queries, all heads: 2*tokens*keys*(q + o) [N21 with the
 * causal mask and the window]. */
double mdl_core_attn_flops(const cfg_model *m, bool windowed, double tokens);

/* }============================================================ attention */

/* Bytes per parameter, by the precision keys [MDO, TE in model.c]. */
typedef struct mdl_precision {
    double weight_bytes;    /* the model dtype (bf16/fp16): 2 */
    double fp8_copy_bytes;  /* fp8: Transformer Engine's FP8 weight and its transpose, 1 + 1, for the
                             * layers' GEMM weights only (mdl_part_fp8); else 0 */
    double grad_bytes;      /* main grads: fp32 4, or 2 with grad_reduce_in_bf16; the data-parallel
                             * gradient reduction moves as many per parameter */
    double optimizer_bytes; /* fp32 master weight and two Adam moments: 4 + 4 + 4, or 4 + 2 + 2 with bf16 moments */
    double step_bytes;      /* HBM traffic of one Adam step: read grad, master, moments; write master,
                             * moments and the weight (30 in fp32) */
} mdl_precision;

void mdl_precision_of(const cfg_model *m, const cfg_strategy *s, mdl_precision *out);

/* What an FP8 recipe (cfg_fp8_recipe) keeps per element of a GEMM operand
 * (fp8.c). */
typedef struct mdl_fp8_recipe {
    double act_bytes;    /* an activation or gradient element in FP8 with its share of the scales */
    double weight_bytes; /* a weight element in FP8 with its share of the scales */
    double layouts;      /* quantized layouts kept of each operand (rowwise and columnwise: 2) */
    bool amax_pass;      /* the cast first reads the tensor for its amax (current scaling) */
} mdl_fp8_recipe;

/* The row of recipe r (an unknown value reads as delayed). */
const mdl_fp8_recipe *mdl_fp8_recipe_of(cfg_fp8_recipe r);
/* Bytes per element of a linear layer's saved input: the model dtype, or
 * with fp8 the recipe's act_bytes. */
double mdl_saved_gemm_input_bytes(const cfg_model *m, const cfg_strategy *s);
/* HBM bytes per element of one FP8 operand cast from `dtype_bytes`
 * elements: read (twice with an amax pass), write each layout with its
 * scales. */
double mdl_fp8_cast_bytes(const cfg_strategy *s, double dtype_bytes);

/* {================================================================ MoE */

/* Expected number of `parts` equal, consecutive slices of the routed
 * experts (EP ranks, or the NVLink domains an EP group spans) that one
 * token's top_k experts fall into, the routing balanced, with the model's
 * group-limited routing (moe.groups, moe.group_top_k: the experts chosen
 * among the group_top_k chosen groups): parts * (1 - P(a slice gets no
 * expert)) (moe.c).  1 for parts <= 1; 0 for a dense model. */
double mdl_moe_slices_reached(const cfg_model *m, int parts);

/* }================================================================ MoE */

/* Memory of one rank, by component. */
typedef struct mdl_memory {
    double weights_bytes;       /* parameters held by the rank (model dtype), and with fp8 their FP8 copies */
    double fp8_copies_bytes;    /* of weights_bytes: the FP8 copies (0 without fp8) */
    double grads_bytes;         /* main grads (fp32, or bf16 with grad_reduce_in_bf16) */
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
 * stage, the output layer and logits on the head's (cfg_head_stage: the
 * last, or the first in a V).  The rank's other
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
 * on stage i % pp, or down and back up the stages in a V with zb-v and
 * dualpipe-v; or the first/last stage's own layer count). */
int mdl_layer_stage(const cfg_model *m, const cfg_strategy *s, int layer);

/* Returns how many (micro-batch, model chunk) pairs have their activations
 * stored on stage `stage` at its peak: gpipe m; 1f1b min(pp - stage, m);
 * interleaved min((pp - stage - 1)*2 + (vpp - 1)*pp + 1, m*vpp); zb-h1
 * min(pp, m); zb-v min(2pp, 2m); dualpipe-v min(2pp + 1, 2m).  With one
 * chunk per stage this is a count of micro-batches;
 * mdl_memory.inflight_microbatches is this divided by the chunks per stage
 * (cfg_stage_chunks), rounded up. */
int mdl_inflight_chunks(const cfg_strategy *s, int stage);

/* {============================================ which parameters a rank holds */

/* The parts of a layer or of a stage's edges, each with one placement
 * (placement.c).  t = tp_x*tp_y.  ORDER MDL_PART: the rows of part_rows
 * in placement.c. */
typedef enum mdl_part {
    MDL_PART_ATTENTION = 0, /* Q, K, V (MLA: their up-projections), output projection: split over t (KV heads
                             * replicated up to tp_x) */
    MDL_PART_MLA_DOWN,      /* MLA: the query and key/value down-projections and their norms: replicated over t */
    MDL_PART_NORMS,         /* a layer's two norms or the final norm: split over tp_y, replicated over tp_x */
    MDL_PART_MLP,           /* dense MLP: split over t */
    MDL_PART_ROUTER,        /* MoE router: replicated over t */
    MDL_PART_SHARED,        /* shared experts: split over t */
    MDL_PART_EXPERTS,       /* routed experts: split over ep*etp */
    MDL_PART_EMBEDDING,     /* word embedding, first stage: vocab-parallel over t */
    MDL_PART_OUTPUT,        /* output layer, head's stage: vocab-parallel over t (tied, not on stage 0: the copy) */
    MDL_PART_MTP_PROJ,      /* multi-token prediction, head's stage: each module's projection of [embedding; hidden]
                             * (2h x h), split over t */
    MDL_NPARTS
} mdl_part;

/* The data-parallel group a part's gradients are reduced over, and over
 * which ZeRO shards its optimizer state, gradients and weights. */
typedef enum mdl_sync {
    MDL_SYNC_DP = 0,  /* the dp*cp_ring*cp_ulysses ranks with the same tp and pp coordinates */
    MDL_SYNC_EDP,     /* expert data parallel: the dp*cp_ring*cp_ulysses*t/(ep*etp) ranks with the same expert shard */
    MDL_NSYNCS
} mdl_sync;

/* Parameters (counts) one rank holds, by part. */
typedef struct mdl_held {
    double params[MDL_NPARTS];
} mdl_held;

mdl_sync mdl_part_sync(mdl_part part);
const char *mdl_part_name(mdl_part part);
/* Whether the part's weights feed the GEMMs fp8 runs in FP8 (attention
 * projections, MLA down-projections, dense MLP, shared and routed experts,
 * the prediction modules' projection); norms, router, embedding and output
 * layer stay in the model dtype, as with Transformer Engine under
 * Megatron. */
bool mdl_part_fp8(mdl_part part);

/* Returns the KV heads of one layer over its TP group: kv_heads, or tp_x
 * when tp_x > kv_heads (each TP rank holds a whole head, replicated). */
int mdl_kv_heads_tp(const cfg_model *m, const cfg_strategy *s);

/* One layer of the kind (moe or dense), as held by one rank. */
void mdl_layer_held(const cfg_model *m, const cfg_strategy *s, bool moe, mdl_held *out);

/* The edges one rank of pipeline stage `stage` holds: the embedding on
 * stage 0, the final norm and the output layer on the head's stage
 * (cfg_head_stage: the last, or stage 0 in a V; with tied embeddings: no
 * output layer when that is stage 0, a copy of the embedding otherwise).
 * The head's stage also holds the multi-token prediction modules: each
 * one's layer (its parts as mdl_layer_held's), projection and three norms,
 * and, off stage 0 with untied embeddings, a copy of the embedding
 * (Megatron builds one on the stage that runs them). */
void mdl_edge_held(const cfg_model *m, const cfg_strategy *s, int stage, mdl_held *out);

/* Returns the sum of the parts of h whose gradients reduce over g. */
double mdl_held_params(const mdl_held *h, mdl_sync g);

/* Parameters held by one rank of stage `stage`, its layers and edges
 * (before ZeRO): *dense_params reduce over MDL_SYNC_DP, *expert_params
 * (routed experts) over MDL_SYNC_EDP.  Counts, not bytes. */
void mdl_stage_params(const cfg_model *m, const cfg_strategy *s, int stage, double *dense_params,
                      double *expert_params);

/* }============================================ which parameters a rank holds */

#endif
