/* workload.h - from (model, strategy, platform) to one program per rank.
 *
 * A plan holds what ranks share: the rank <-> 7D coordinate mapping, the
 * per-stage op templates (with their times from the cost model) and the
 * pipeline schedule of each stage.  A program is a cursor over one rank's
 * instruction stream, generated lazily one schedule step at a time, so memory
 * grows with ranks and not with instructions.  No SimGrid here. */
#ifndef HEPTASIM_WORKLOAD_H
#define HEPTASIM_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "../config/config.h"
#include "../cost/cost.h"
#include "../net/net.h"

typedef enum wl_op {
    WL_COMPUTE = 0, /* busy the device for `seconds` */
    WL_COLL,        /* collective over `group` on `stream` (0 = blocking) */
    WL_SEND,        /* point-to-point to `peer`, asynchronous (fire and forget) */
    WL_RECV,        /* point-to-point from `peer`, blocking */
    WL_WAIT         /* block until `stream` has completed `seq` operations */
} wl_op;

/* The collective kinds of net (ORDER WL_COLL there): a wl_coll is a net_coll. */
typedef enum wl_coll {
    WL_ALLREDUCE = NET_ALLREDUCE,
    WL_ALLGATHER = NET_ALLGATHER,
    WL_REDUCESCATTER = NET_REDUCESCATTER,
    WL_ALLTOALL = NET_ALLTOALL
} wl_coll;

/* Process groups a collective runs over.
 * ORDER WL_GROUP: the tables marked so follow this order; change them together. */
typedef enum wl_group {
    WL_G_TP = 0,   /* all tp_x*tp_y ranks of a layer replica (1D TP) */
    WL_G_TPX,      /* 2D TP: ranks differing in tp_x only */
    WL_G_TPY,      /* 2D TP: ranks differing in tp_y only */
    WL_G_CPR,      /* ring context parallel */
    WL_G_CPU,      /* Ulysses context parallel */
    WL_G_FUSED,    /* tp_y x cp_ulysses fused all-to-all group */
    WL_G_EP,       /* expert parallel: folded over the tp x cp x dp ranks of a stage (layout.c) */
    WL_G_EDP,      /* expert data parallel: ranks holding the same expert shard */
    WL_G_DP,       /* gradient reduction group: dp x cp_ring x cp_ulysses */
    WL_G_PP,       /* pipeline neighbours (p2p only) */
    WL_G_ETP,      /* expert tensor parallel: the etp ranks splitting one expert */
    WL_G_DPS,      /* HSDP shard group: cfg_dp_shard consecutive members of the DP group */
    WL_G_DPR,      /* HSDP replica group: the DP group's members at one place in their shard groups */
    WL_NGROUPS
} wl_group;

/* The dimension a group's traffic is accounted to in reports.
 * ORDER WL_DIM: the tables (and enums) marked so follow this order; change them together. */
typedef enum wl_dim { WL_DIM_TP = 0, WL_DIM_CP, WL_DIM_EP, WL_DIM_DP, WL_DIM_PP, WL_NDIMS } wl_dim;

/* Asynchronous streams (like CUDA streams); ops on one stream run in order.
 * ORDER WL_STREAM: the tables (and enums) marked so follow this order; change them together. */
typedef enum wl_stream { WL_S_MAIN = 0, WL_S_TP, WL_S_CP, WL_S_EP, WL_S_DP, WL_NSTREAMS } wl_stream;

/* ORDER WL_PHASE: the tables marked so follow this order; change them together. */
typedef enum wl_phase {
    WL_PH_FORWARD = 0,
    WL_PH_BACKWARD,    /* input gradients, and weight gradients unless the schedule runs them apart */
    WL_PH_RECOMPUTE,
    WL_PH_GRAD_SYNC,   /* DP gradient reduction and its waits */
    WL_PH_OPTIMIZER,   /* optimizer step and parameter gather */
    WL_PH_WGRAD,       /* weight gradients run apart from the backward (zero-bubble schedules' W) */
    WL_NPHASES
} wl_phase;

/* p2p channels: activations go forward, their gradients backward. */
typedef enum wl_tag { WL_TAG_FWD = 0, WL_TAG_BWD = 1 } wl_tag;

typedef struct wl_instr {
    uint8_t op;        /* wl_op */
    uint8_t coll;      /* wl_coll, for WL_COLL */
    uint8_t group;     /* wl_group, for WL_COLL; WL_G_PP for SEND/RECV */
    uint8_t stream;    /* wl_stream: WL_COLL (0 = blocking), WL_WAIT */
    uint8_t phase;     /* wl_phase */
    uint8_t tag;       /* wl_tag, for SEND/RECV */
    uint16_t label;    /* wl_label_name(label): "qkv", "attn", "tp_ar", ... */
    int32_t layer;     /* global layer index, -1 when none */
    int32_t micro;     /* micro-batch index, -1 when none */
    int32_t peer;      /* SEND/RECV: the other rank */
    uint32_t seq;      /* WAIT: number of ops of `stream` that must be complete (in the op
                        * templates of internal.h: how many of the stream's latest ops may
                        * still run, 0 = none; the program resolves it).  COLL: 0 = the
                        * whole collective, k >= 1 = only its ring step k (a ring exchange,
                        * net_coll_step_phases) */
    double seconds;    /* COMPUTE */
    double bytes;      /* COLL: buffer size per rank (see net_phase.bytes); SEND/RECV: message */
} wl_instr;

/* The kinds of layer whose op templates differ: a dense or MoE MLP, full
 * or windowed attention (cfg_is_moe_layer, cfg_is_window_layer).  A kind is
 * WL_KIND_MOE and WL_KIND_WINDOW or-ed. */
enum { WL_KIND_MOE = 1, WL_KIND_WINDOW = 2, WL_NKINDS = 4 };

/* Returns the kind of layer `layer` (the multi-token prediction modules'
 * layers numbered from m->layers on). */
int wl_layer_kind(const cfg_model *m, int layer);

/* True when the model can have layers of kind `kind`: MoE needs experts, a
 * window needs attention_window. */
bool wl_kind_possible(const cfg_model *m, int kind);

typedef struct wl_plan wl_plan;
typedef struct wl_program wl_program;

/* Build the shared plan. The strategy must have passed cfg_check. Returns
 * SIM_OK and *out (free with wl_plan_free), or an error in err. The plan
 * keeps pointers to m, p, s and c: they must outlive it. */
sim_rc wl_plan_new(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, const cost_model *c,
                   wl_plan **out, sim_err *err);
void wl_plan_free(wl_plan *plan);

/* Lays plan's ranks out anew by s, which differs from the plan's strategy
 * in the rank order alone and takes its place (s must outlive the plan),
 * keeping the op templates: they do not depend on where the ranks are,
 * except the flex dispatcher's, whose bytes follow the EP group's spread
 * over supernodes.  Returns false, changing nothing, in that case. */
bool wl_plan_reorder(wl_plan *plan, const cfg_strategy *s);

int wl_world(const wl_plan *plan);
const cfg_strategy *wl_strategy(const wl_plan *plan);
const cfg_model *wl_model(const wl_plan *plan);

/* Coordinates of a rank, indexed by cfg_dim (the ep coordinate is the
 * rank's index inside its EP group). */
void wl_coords(const wl_plan *plan, int rank, int coords[CFG_NDIMS]);
int wl_stage(const wl_plan *plan, int rank);

/* The same numbering from the strategy alone, without a plan (reports,
 * traces): coordinates of a rank, and the rank offset of one step along
 * dimension d (the stride of its digit; ep takes no digit). */
void wl_strategy_coords(const cfg_strategy *s, int rank, int coords[CFG_NDIMS]);
int wl_strategy_stride(const cfg_strategy *s, cfg_dim d);

/* Members in one group of kind g, from the strategy alone (the one rule
 * for group sizes: an unresolved ep or etp of 0 counts as 1 and the TP
 * size, as cfg_check resolves them). */
int wl_group_size(const cfg_strategy *s, wl_group g);
/* HSDP: zero 3 with shard groups smaller than the DP group; the dense
 * parameters gather and their gradients reduce-scatter over WL_G_DPS, and
 * the gradient shards all-reduce over WL_G_DPR. */
bool wl_hybrid_sharded(const cfg_strategy *s);
wl_group wl_param_group(const cfg_strategy *s); /* the group sharding the dense parameters: DPS or DP */

/* Members of `rank`'s group g, in ring order, written into members (capacity
 * >= wl_world); *my_index gets rank's position. Returns the group size. */
int wl_group_members(const wl_plan *plan, int rank, wl_group g, int *members, int *my_index);

/* The group kinds the plan's programs run collectives or p2p on, as a
 * mask of bits 1u << wl_group. */
unsigned wl_groups_used(const wl_plan *plan);
/* The group kinds the programs run collectives on, by algorithm family:
 * ring collectives (all-reduce, all-gather, reduce-scatter) into *ring,
 * all-to-alls into *alltoall (masks of bits 1u << wl_group). */
void wl_groups_by_kind(const wl_plan *plan, unsigned *ring, unsigned *alltoall);

/* A stable id of rank's group g (equal for all its members, distinct
 * between groups of the same kind). */
int wl_group_id(const wl_plan *plan, int rank, wl_group g);

wl_dim wl_group_dim(wl_group g);
/* The dimension an instruction's traffic is accounted to: its group's, but
 * data parallel for gradient and parameter syncs whatever group a phase of
 * them runs on. */
wl_dim wl_instr_dim(const wl_instr *in);
const char *wl_group_name(wl_group g);
const char *wl_dim_name(wl_dim d);
const char *wl_label_name(int label);
const char *wl_phase_name(wl_phase ph);
const char *wl_coll_name(wl_coll c);

/* A step's programs as callbacks, so that the engine and the replayer also
 * run hand-written programs (tests).  Rank i runs on device i. */
typedef struct wl_programs {
    int world;
    void *ctx;
    void *(*program_new)(void *ctx, int rank);
    bool (*program_next)(void *prog, wl_instr *out);
    void (*program_free)(void *prog);
    int (*group_members)(void *ctx, int rank, wl_group g, int *members, int *my_index);
} wl_programs;

/* The callbacks of plan's programs and groups (ctx is the plan). */
wl_programs wl_plan_programs(const wl_plan *plan);

/* SIM_OK when w has every callback and its ranks fit on p's devices, else
 * SIM_EINVAL with one line; `who` names the caller ("engine", "replay"). */
sim_rc wl_programs_check(const wl_programs *w, const cfg_platform *p, const char *who, sim_err *err);

/* One rank's instruction stream. Free with wl_program_free. */
wl_program *wl_program_new(const wl_plan *plan, int rank);
void wl_program_free(wl_program *prog);
/* Next instruction into *out; false at the end of the step. */
bool wl_program_next(wl_program *prog, wl_instr *out);

/* True when the schedule runs weight gradients apart from the backward
 * (zb-h1, zb-v, dualpipe-v): the programs then run them as phase
 * WL_PH_WGRAD, in steps of their own or after each layer's backward. */
bool wl_schedule_splits_w(const cfg_strategy *s);

/* The pass a pipeline step runs on its (micro-batch, model chunk). */
typedef enum wl_pass {
    WL_PASS_F = 0,  /* forward */
    WL_PASS_B,      /* backward: input gradients, and the weight gradients unless split */
    WL_PASS_W,      /* the weight gradients of an earlier split backward */
    WL_NPASSES
} wl_pass;

/* What decides the margins of each chunk j of a stage in its schedule's
 * order: the steps before its first forward (before_f), after its last
 * backward (after_b) and after its last step producing its weight
 * gradients (after_w: a W, or a backward not split), counted by chunk and
 * pass (row j, entry c * WL_NPASSES + pass, chunks * WL_NPASSES per row);
 * how many of the after_b (cool_b[j]) and after_w (cool_w[j]) steps come
 * after the stage's last forward, and how many steps do (cool_steps: the
 * cool-down).  Free with wl_margin_counts_free. */
typedef struct wl_margin_counts {
    int chunks;
    int *before_f, *after_b, *after_w;
    int *cool_b, *cool_w;
    int cool_steps;
    size_t bytes; /* what the counts take */
} wl_margin_counts;

void wl_schedule_margin_counts(const cfg_strategy *s, int stage, wl_margin_counts *out);
void wl_margin_counts_free(wl_margin_counts *mc);

/* Sum of the COMPUTE seconds of a rank's program, by phase (ph array of
 * WL_NPHASES); returns the total. Walks the program: for checks and the
 * analytic estimate, not for the hot path. */
double wl_rank_compute_s(const wl_plan *plan, int rank, double *by_phase);

#endif
