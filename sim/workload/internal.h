/* internal.h - the workload module's private structures, shared by its
 * files (layout.c, layer.c, moe.c, ops.c, schedule.c, program.c, plan.c). */
#ifndef HEPTASIM_WORKLOAD_INTERNAL_H
#define HEPTASIM_WORKLOAD_INTERNAL_H

#include "workload.h"

/* A growable array of instructions (op templates and program segments). */
typedef struct wl_ops {
    wl_instr *a;
    int n, cap;
} wl_ops;

/* ops.c */
void wl_ops_push(wl_ops *ops, const wl_instr *in);
void wl_ops_append(wl_ops *dst, const wl_ops *src);
void wl_ops_free(wl_ops *ops);

/* Labels of instructions: indexes into a static name table.
 * ORDER WL_LABEL: the tables marked so follow this order; change them together. */
enum {
    WL_L_NONE = 0,
    WL_L_EMBED, WL_L_NORM, WL_L_QKV, WL_L_ATTN, WL_L_PROJ, WL_L_RESIDUAL, WL_L_FC1, WL_L_ACT, WL_L_FC2,
    WL_L_QKV_DOWN, WL_L_MTP_PROJ, WL_L_FP8_CAST,
    WL_L_ROUTER, WL_L_PERMUTE, WL_L_UNPERMUTE, WL_L_EXPERTS, WL_L_SHARED, WL_L_LOGITS, WL_L_LOSS,
    WL_L_TP_AG, WL_L_TP_RS, WL_L_TP_AR, WL_L_TP_A2A, WL_L_CP_KV, WL_L_CP_A2A, WL_L_EP_DISPATCH, WL_L_EP_COMBINE,
    WL_L_DP_GRAD, WL_L_DP_PARAM, WL_L_EDP_GRAD, WL_L_EDP_PARAM, WL_L_PP_ACT, WL_L_PP_GRAD,
    WL_L_OPTIMIZER, WL_L_WAIT,
    WL_NLABELS
};

/* Rank layout: sizes and strides of each slot of `order` in the dense
 * layers' numbering of the ranks (cfg_dim_radix: ep has size 1) and in the
 * expert layers' (cfg_expert_radix: etp in tp_x's slot, ep, expert DP in
 * dp's, pp). */
typedef struct wl_layout {
    int world;
    int size[CFG_NDIMS];
    int stride[CFG_NDIMS];
    int esize[CFG_NDIMS];
    int estride[CFG_NDIMS];
    bool folded;            /* cfg_experts_folded: else ETP is TP and expert DP is DP */
    int dp_shard;           /* cfg_dp_shard: the HSDP shard groups' size */
} wl_layout;

void wl_layout_init(wl_layout *lo, const cfg_strategy *s);
void wl_layout_coords(const wl_layout *lo, int rank, int coords[CFG_NDIMS]);
int wl_layout_members(const wl_layout *lo, int rank, wl_group g, int *members, int *my_index);

/* One pipeline step. */
typedef struct wl_step {
    uint8_t pass;    /* wl_pass */
    uint8_t chunk;   /* model chunk of the stage (cfg_stage_layers) */
    uint8_t split;   /* WL_PASS_B: its weight gradients run as a later WL_PASS_W step */
    uint8_t paired;  /* WL_PASS_F: overlapped with the next step, a backward that is not split (DualPipe, paired 1F1B) */
    int32_t micro;
} wl_step;

/* The order of steps of pipeline stage `stage`; *n gets the count. The
 * caller frees the array. */
wl_step *wl_schedule_new(const cfg_strategy *s, int stage, int *n);

/* Op templates of one layer kind (wl_layer_kind), with times filled in. */
typedef struct wl_layer_ops {
    wl_ops fwd;        /* forward */
    wl_ops bwd;        /* backward, without recompute (input gradients only when the plan splits W) */
    wl_ops wgrad;      /* weight-gradient GEMMs when the plan splits W, else empty */
    wl_ops recompute;  /* what runs again before bwd (empty without recompute) */
    double params_dp;  /* parameters this rank holds that sync over WL_G_DP */
    double params_edp; /* expert parameters that sync over WL_G_EDP */
} wl_layer_ops;

/* Stage extras: embedding (first stage) and logits + loss (the head's
 * stage, cfg_head_stage), the multi-token prediction modules counted in
 * the head. */
typedef struct wl_edge_ops {
    wl_ops embed_fwd, embed_bwd, head_fwd, head_bwd;
    wl_ops head_wgrad;  /* the logits' (and modules') weight gradients when the plan splits W (else in head_bwd) */
    bool embed_syncs_with_head;       /* a tied embedding's gradient syncs after the head's W */
    double embed_params, head_params; /* parameters whose gradients sync over WL_G_DP */
    double head_params_edp;           /* the modules' routed experts, over WL_G_EDP */
} wl_edge_ops;

/* Receives the phases of a collective (wl_coll_phases). */
typedef void (*wl_phase_sink)(void *ctx, const wl_instr *phase);

/* Hands collective `in` to sink as the collectives it runs as: over a
 * whole 2D TP group, its tp_x and tp_y parts; over an expert data-parallel
 * group with etp < tp, the TP blocks holding the same expert shard and the
 * group's data part.  Two-level rings: all-reduce = reduce-scatter inside,
 * all-reduce of the shard across, all-gather inside; all-gather = across
 * then inside; reduce-scatter = inside then across.  Each rank sends the
 * bytes of one ring over all members, in fewer steps.  Anything else is
 * handed over as it is; groups of one member give nothing. */
void wl_coll_phases(const cfg_strategy *s, const wl_instr *in, wl_phase_sink sink, void *ctx);

/* The traffic and memory passes of one MoE layer's token dispatch on one
 * rank, for one micro-batch (moe.c; docs/model.md, "MoE dispatch"). */
typedef struct wl_moe_dispatch {
    wl_coll dispatch, combine;  /* ALLTOALL both, or ALLGATHER and REDUCESCATTER (allgather dispatcher) */
    double bytes;               /* the dispatch's and the combine's buffer per rank (net_phase.bytes) */
    double meta_bytes;          /* allgather: the routing map and probabilities gathered with the tokens */
    bool permute_first;         /* the copies are made before the dispatch (alltoall), else after it */
    double permute_bytes;       /* HBM bytes of the permutation into expert order; the unpermutation's too */
    double router_bytes;        /* HBM bytes of the routing: scores, top-k, normalised probabilities */
    double domains;             /* NVLink domains the EP group spans (1: inside one) */
    double reached;             /* flex: domains (or, inside one, EP ranks) a token reaches */
} wl_moe_dispatch;

/* The dispatch of `tok` tokens routed by this rank, whose busiest expert
 * rank receives `copies` routed copies (tok * top_k * cfg_expert_load),
 * `dtype` bytes per element. */
void wl_moe_dispatch_of(const wl_plan *plan, double tok, double copies, double dtype, wl_moe_dispatch *out);

void wl_layer_ops_build(const wl_plan *plan, int kind, wl_layer_ops *out);
void wl_edge_ops_build(const wl_plan *plan, wl_edge_ops *out);
void wl_layer_ops_free(wl_layer_ops *ops);
void wl_edge_ops_free(wl_edge_ops *ops);

struct wl_plan {
    const cfg_model *m;
    const cfg_platform *p;
    const cfg_strategy *s;
    const cost_model *c;
    wl_layout layout;
    int micro_batches;
    bool split_w;           /* wl_schedule_splits_w */
    wl_layer_ops layer[WL_NKINDS]; /* by wl_layer_kind; built for the possible kinds */
    wl_edge_ops edge;
    wl_step **schedule;     /* per stage */
    int *schedule_len;      /* per stage */
};

#endif
