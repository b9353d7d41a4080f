/* config.h - model, platform and strategy descriptions: reading, defaults,
 * validation.
 *
 * Inputs are JSON files read with cJSON.  Each file is checked against a
 * schema table (one row per key: type, bounds, default, required); unknown
 * keys are errors.  `--set KEY=VALUE` overrides are applied to the JSON tree
 * before the schema check, so they obey the same rules.  All values in the
 * structs are in SI base units (bytes, seconds, FLOP/s, bytes/s) whatever the
 * unit of the JSON key.
 *
 * Every error is one line in sim_err that names the file, the JSON path and
 * the fix, e.g.
 *   strategies/x.json: .tp_x: 6 does not divide heads=64 (use a divisor of 64)
 * and the function returns SIM_EINVAL, also for a missing or unreadable
 * file (bad input: exit status 2).  A value that came from `--set` is
 * reported as "--set KEY=VALUE: .key: ...".
 *
 * Names: an object without "name" is named after its file stem
 * ("models/x.json" -> "x"; ".../llama-3-8b/config.json" -> "llama-3-8b"). */
#ifndef HEPTASIM_CONFIG_H
#define HEPTASIM_CONFIG_H

#include <stdbool.h>

#include "../common/common.h"

/* ---------------------------------------------------------------- model */

/* The MLP's activation.  Plain ones have two matrices (up, down): GELU,
 * ReLU, squared ReLU (Nemotron-4, Primer); gated ones three (gate, up,
 * down): SwiGLU, GeGLU (Gemma).  ORDER CFG_ACTIVATION: the tables marked so
 * follow this order; change them together. */
typedef enum cfg_activation {
    CFG_ACT_GELU = 0,
    CFG_ACT_SWIGLU,
    CFG_ACT_GEGLU,
    CFG_ACT_RELU,
    CFG_ACT_SQUARED_RELU,
    CFG_NACTIVATIONS
} cfg_activation;

typedef struct cfg_moe {
    int experts;            /* routed experts; 0 = dense model */
    int top_k;              /* experts per token */
    int ffn_hidden;         /* FFN width of one routed expert */
    int shared_experts;     /* always-active experts (DeepSeek style) */
    int shared_ffn_hidden;  /* FFN width of one shared expert */
    int first_dense_layers; /* the first k layers are dense */
    int layer_freq;         /* every layer_freq-th layer (after the dense ones) is MoE */
    int groups;             /* router groups (group-limited routing, DeepSeek-V2/V3's n_group); 0 or 1: none */
    int group_top_k;        /* groups a token's experts are chosen from (topk_group); 0: all of them */
} cfg_moe;

/* Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): the keys and
 * values of all heads come from one compressed latent of kv_lora_rank per
 * token, the queries from one of q_lora_rank; each head's query and key are
 * a part without rotary embedding (qk_nope_head_dim) and a rotary part
 * (qk_rope_head_dim), whose key is one head shared by all heads.  Off when
 * kv_lora_rank is 0; heads, kv_heads and head_dim then describe the
 * attention. */
typedef struct cfg_mla {
    int q_lora_rank;        /* 0 = queries projected from the hidden directly */
    int kv_lora_rank;       /* 0 = no MLA */
    int qk_nope_head_dim;
    int qk_rope_head_dim;
    int v_head_dim;
} cfg_mla;

/* Local attention: in the layers that use it, a query attends to at most
 * `tokens` keys: the `tokens` latest (sliding, Mistral, Gemma 2/3) or those
 * of its own block of `tokens` (chunked, Llama 4).  ORDER CFG_WINDOW:
 * cfg_window_kind_names in names.c. */
typedef enum cfg_window_kind { CFG_WINDOW_SLIDING = 0, CFG_WINDOW_CHUNKED, CFG_NWINDOW_KINDS } cfg_window_kind;

typedef struct cfg_window {
    int tokens;             /* 0 = every layer attends to its whole causal context */
    int full_every;         /* layer l (0-based) attends to the whole context when (l+1) % full_every == 0; 0 = none */
    cfg_window_kind kind;
} cfg_window;

typedef struct cfg_model {
    char name[CFG_NAME_LEN];
    char description[CFG_TEXT_LEN];
    char path[CFG_PATH_LEN]; /* file it came from, for messages */
    int layers;
    int hidden;
    int heads;
    int kv_heads;            /* = heads without GQA */
    int head_dim;            /* = hidden / heads unless given */
    int ffn_hidden;          /* dense MLP width */
    int vocab;
    int seq_len;
    cfg_activation activation;
    int dtype_bytes;         /* 2 for bf16/fp16 */
    bool tied_embeddings;
    cfg_moe moe;
    cfg_mla mla;
    cfg_window window;
    int mtp_layers;          /* multi-token prediction modules on the last stage (DeepSeek-V3) */
    bool seq_len_assumed;    /* a HuggingFace config without --set model.seq_len: seq_len is CFG_HF_SEQ_LEN */
} cfg_model;

/* --------------------------------------------------------------- platform */

/* A piecewise curve y(x), interpolated by the cost model (GSL).  Points are
 * sorted by strictly increasing x. */
typedef struct cfg_curve {
    int n;
    double x[CFG_CURVE_MAX];
    double y[CFG_CURVE_MAX];
} cfg_curve;

/* What `heptasim calibrate` fitted a platform file's efficiencies to: its
 * "calibration" key (cases = 0: the file is not calibrated).  Never
 * inherited through "base": it describes the file that holds it. */
typedef struct cfg_calibration {
    int cases;                 /* published cases fitted */
    double rms_error_before;   /* relative error over them with the base's efficiencies */
    double rms_error_after;    /* and with the fitted ones */
    char fitted[CFG_NAME_LEN]; /* the fitted parameters, "gemm_scale,attention" */
    double held_out_error;     /* mean |error| of each case simulated at a fit made without it (--loo); 0: unknown */
    char sources[CFG_NAME_LEN];/* the groups of the fitted cases, "nemo-2407-h100,automodel-h100" */
    double pair_error_before;  /* rms error of the ratio of two simulated step times of the cases, base's */
    double pair_error_after;   /* efficiencies and fitted ones (val_step_rank); 0: unknown */
} cfg_calibration;

/* Where the efficiencies of an uncalibrated file come from: its
 * "provenance" key.  derived_from names a calibrated file of the file's own
 * base chain whose efficiencies it keeps (checked when the file is read;
 * derived_path is that file).  Never inherited through "base". */
typedef struct cfg_provenance {
    char derived_from[CFG_NAME_LEN];  /* as written: a shipped name or a path relative to the file */
    char reason[CFG_TEXT_LEN];        /* why the relative's efficiencies stand for this hardware */
    char derived_path[CFG_PATH_LEN];  /* the file it names */
} cfg_provenance;

/* One tier of switches above the supernodes (network.tiers[i]): the
 * devices under one switch of the tier (its domain: whole supernodes; the
 * domains of a tier are whole domains of the tier below), the
 * oversubscription of the domain's uplinks to the next tier (above the
 * last, one core joins every domain) and the latency a route adds when it
 * leaves the domain.  A rail-optimised first tier (rails) has one switch
 * per node-local device index in each domain: NIC k of every node of the
 * domain on switch k.  docs/network.md. */
typedef struct cfg_tier {
    char name[CFG_NAME_LEN / 2];   /* "leaf", "spine", for messages and the XML */
    int devices;                   /* devices of one domain */
    double oversubscription;       /* >= 1: the domain's uplink = its NICs / oversubscription */
    double latency_s;              /* added to a route that leaves the domain */
    bool rails;                    /* first tier only: a switch per node-local index */
} cfg_tier;

/* A part of the platform slower than the others (stragglers): a device
 * (its computes take 1/speed as long), every device of a node, or the NIC
 * link of a device (its bandwidth, both ways, times speed).  ORDER
 * CFG_STRAGGLER: cfg_straggler_kind_names in names.c. */
typedef enum cfg_straggler_kind {
    CFG_STRAGGLER_DEVICE = 0,
    CFG_STRAGGLER_NODE,
    CFG_STRAGGLER_LINK,
    CFG_NSTRAGGLER_KINDS
} cfg_straggler_kind;
typedef struct cfg_straggler {
    int kind;                      /* cfg_straggler_kind */
    int index;                     /* the device, node or device of the link, from 0 */
    double speed;                  /* fraction of the others' speed, (0, 1] */
} cfg_straggler;

/* How a checkpoint stops training: for the whole write to storage
 * (sync), or only for a copy to host memory, written to storage behind
 * the training (async, in-memory).  ORDER CFG_CHECKPOINT:
 * cfg_checkpoint_mode_names in names.c (from 1: 0 means no storage). */
typedef enum cfg_checkpoint_mode { CFG_CKPT_SYNC = 1, CFG_CKPT_ASYNC, CFG_CKPT_END } cfg_checkpoint_mode;

typedef struct cfg_platform {
    char name[CFG_NAME_LEN];
    char description[CFG_TEXT_LEN];
    char path[CFG_PATH_LEN];
    int devices;                   /* total devices (ranks) */

    /* one device */
    char device_name[CFG_NAME_LEN];
    double peak_flops_per_s;       /* dense bf16/fp16: the peak MFU divides by */
    double fp8_peak_flops_per_s;   /* dense FP8 GEMMs; 0: the device has no FP8 (fp8 is refused) */
    double mxfp8_peak_flops_per_s; /* dense MXFP8 GEMMs (Blackwell); 0: no MXFP8 (fp8_recipe mxfp8 is refused) */
    double hbm_bytes;              /* capacity */
    double hbm_reserved_bytes;     /* not usable by the model (runtime, fragmentation) */
    double hbm_headroom;           /* the fraction of the rest kept free in every fit test (a planner's
                                    * margin for allocator peaks); 0: none */
    double hbm_bytes_per_s;

    /* topology */
    int devices_per_node;          /* a server: "TP inside a node" */
    int devices_per_supernode;     /* the scale-up fabric domain (NVLink / UB) */
    double fabric_bytes_per_s;     /* per device, each direction */
    double fabric_latency_s;       /* device to device inside a supernode */
    double nic_bytes_per_s;        /* per device RDMA NIC, each direction */
    double nic_latency_s;          /* device to device across supernodes, without spine */
    double spine_latency_s;        /* added by the leaf-spine fabric */
    double oversubscription;       /* >= 1: supernode uplink = NICs / oversubscription */
    int ntiers;                    /* tiers of switches above the supernodes; 0: one spine joins them */
    cfg_tier tiers[CFG_MAX_TIERS]; /* innermost first */
    /* checkpoint storage ("storage"; docs/platforms.md): checkpoint 0 when
     * the file has none */
    int checkpoint_mode;           /* cfg_checkpoint_mode; 0: no storage given */
    double storage_node_bytes_per_s;      /* one node's write (and read) bandwidth to the storage */
    double storage_aggregate_bytes_per_s; /* the whole storage system's */
    double snapshot_bytes_per_s;   /* async: one device's copy of its state to host memory */
    int nstragglers;               /* stragglers: 0 for a uniform platform */
    cfg_straggler stragglers[CFG_MAX_STRAGGLERS];

    /* efficiencies (dimensionless fractions of peak) */
    cfg_curve gemm_efficiency;     /* x = FLOPs of one GEMM, y = fraction of peak */
    cfg_curve gemm_fp8_efficiency; /* the same for FP8 GEMMs, fraction of the FP8 peak; n = 0: gemm_efficiency
                                    * at twice the FLOPs (cost.h) */
    cfg_curve grouped_gemm_efficiency; /* x = FLOPs of one expert's GEMM in a grouped GEMM, y = fraction of peak of
                                        * the whole grouped GEMM; n = 0: gemm_efficiency at one expert's FLOPs */
    double attention_efficiency;   /* flash attention core, fraction of peak */
    double memory_efficiency;      /* fraction of HBM bandwidth reached by element-wise ops */
    double network_efficiency;     /* fraction of link bandwidth reached by collectives */
    double kernel_overhead_s;      /* fixed cost added to each op */
    double collective_step_s;      /* software latency of one collective algorithm step */
    double overlap_compute_slowdown; /* >= 1: a GEMM chunk run beside a TP collective takes this
                                      * times its time (overlap_tp_comm; 1 = no contention) */

    cfg_calibration calibration;   /* the file's own fit record; cases = 0 when uncalibrated */
    cfg_provenance provenance;     /* the file's own; derived_from empty when not derived */
} cfg_platform;

/* Whether a and b have the same efficiency figures (every key of the
 * "efficiency" object, curves point by point). */
bool cfg_same_efficiencies(const cfg_platform *a, const cfg_platform *b);

/* Clears in p what only the error band reads (cfg_band): the
 * calibration record's held_out_error, sources and pair errors, and the
 * provenance.  They change no simulated figure, so fingerprints of what a
 * result depends on leave them out (a search's inputs id, a study cell's
 * definition), and fingerprints made before they existed still hold. */
void cfg_platform_drop_band_records(cfg_platform *p);

/* How far to trust the results on a platform: the expected relative error
 * of a step time (so of MFU and tokens/s), its kind and its reason.
 * Computed from the platform's calibration and provenance records by
 * val_platform_band (docs/validation.md); plain data for the reports. */
typedef struct cfg_band {
    double error;                  /* +- relative error, 0.072 = +-7.2 % */
    double pair_error;             /* rms error of the ratio of two step times on it (a speed-up); 0: unknown */
    char kind[16];                 /* "calibrated", "derived", "uncalibrated" */
    char relative[CFG_NAME_LEN];   /* the calibrated platform the figure is measured on ("": none) */
    char reason[CFG_TEXT_LEN];     /* one line: what the figure is and where it was measured */
} cfg_band;

/* A speed-up is larger than the model's errors explain when it exceeds
 * 1 + CFG_SURE_SIGMAS x pair_error. */
#define CFG_SURE_SIGMAS 2

/* --------------------------------------------------------------- strategy */

/* ORDER CFG_SCHEDULE, ORDER CFG_RECOMPUTE, ORDER CFG_ATTENTION, ORDER
 * CFG_MOMENTS: the tables marked so follow these orders; change them
 * together. */
typedef enum cfg_schedule {
    CFG_SCHED_GPIPE = 0,
    CFG_SCHED_1F1B,
    CFG_SCHED_INTERLEAVED,
    CFG_SCHED_ZB_H1,       /* zero bubble, 1F1B memory (Qi et al., ICLR'24) */
    CFG_SCHED_ZB_V,        /* zero bubble, two chunks per stage in a V (same paper) */
    CFG_SCHED_DUALPIPE_V,  /* DeepSeek-V3's DualPipe cut in half: a V, F and B of two micro-batches overlapped */
    CFG_NSCHEDULES
} cfg_schedule;
typedef enum cfg_recompute { CFG_RECOMP_NONE = 0, CFG_RECOMP_SELECTIVE, CFG_RECOMP_FULL, CFG_NRECOMPUTES } cfg_recompute;
/* The modules selective recompute runs again (Megatron-Core's
 * --recompute-modules), as bits of cfg_recompute_modules.  ORDER
 * CFG_RECOMPUTE_MODULE: recompute_module_names in keys.c follows it. */
typedef enum cfg_recompute_module {
    CFG_RM_CORE_ATTN = 0, /* core attention, from Q, K, V */
    CFG_RM_MOE_ACT,       /* the routed experts' activation function */
    CFG_RM_LAYERNORM,     /* the two norms before attention and MLP */
    CFG_RM_MLA_UP_PROJ,   /* MLA's up-projections, from the latents */
    CFG_RM_MLP,           /* a dense layer's MLP */
    CFG_RM_MOE,           /* a MoE layer's router, dispatch, experts, combine, shared experts */
    CFG_RM_SHARED_EXPERTS,/* the shared experts */
    CFG_NRECOMPUTE_MODULES
} cfg_recompute_module;
/* The core attention kernel: FlashAttention (keeps Q, K, V, the output and
 * the softmax statistics) or eager (stores the s x s scores). */
typedef enum cfg_attention { CFG_ATTN_FLASH = 0, CFG_ATTN_EAGER, CFG_NATTENTIONS } cfg_attention;
/* The Adam moments' precision (Megatron's precision-aware optimizer). */
typedef enum cfg_moments { CFG_MOMENTS_FP32 = 0, CFG_MOMENTS_BF16, CFG_NMOMENTS } cfg_moments;
/* How routed tokens reach their experts (Megatron's
 * --moe-token-dispatcher-type): an all-to-all of one copy per routed
 * expert; an all-gather of every token of the EP group (reduce-scatter
 * back); or flex, DeepEP / HybridEP's fused all-to-all, which sends a
 * token once per rank and once per NVLink domain it reaches.  ORDER
 * CFG_DISPATCHER: dispatcher_names in keys.c. */
typedef enum cfg_dispatcher {
    CFG_DISPATCH_ALLTOALL = 0,
    CFG_DISPATCH_ALLGATHER,
    CFG_DISPATCH_FLEX,
    CFG_NDISPATCHERS
} cfg_dispatcher;
/* Transformer Engine's FP8 recipes (Megatron's --fp8-recipe): one scale
 * per tensor from the amax history (delayed) or from the tensor itself
 * (tensorwise, "current scaling"), one fp32 scale per 128 elements
 * (blockwise, DeepSeek-V3's), one E8M0 scale per 32 elements (mxfp8,
 * Blackwell).  ORDER CFG_FP8_RECIPE: fp8_recipe_names in keys.c and the
 * recipe table of model/fp8.c. */
typedef enum cfg_fp8_recipe {
    CFG_FP8_DELAYED = 0,
    CFG_FP8_TENSORWISE,
    CFG_FP8_BLOCKWISE,
    CFG_FP8_MXFP8,
    CFG_NFP8_RECIPES
} cfg_fp8_recipe;

/* The parallel dimensions, as they appear in `order` (innermost first).
 * ORDER CFG_DIM: the tables marked so follow this order; change them together. */
typedef enum cfg_dim {
    CFG_DIM_TP_X = 0,
    CFG_DIM_TP_Y,
    CFG_DIM_CP_ULYSSES,
    CFG_DIM_CP_RING,
    CFG_DIM_EP,
    CFG_DIM_DP,
    CFG_DIM_PP,
    CFG_NDIMS
} cfg_dim;

typedef struct cfg_strategy {
    char name[CFG_NAME_LEN];
    char description[CFG_TEXT_LEN];
    char path[CFG_PATH_LEN];
    int dp, pp, tp_x, tp_y, cp_ring, cp_ulysses;
    int ep, etp;                   /* expert parallel, expert tensor parallel */
    int vpp;                       /* virtual stages per pipeline rank */
    int first_stage_layers;        /* layers of pipeline stage 0; 0 = even split */
    int last_stage_layers;         /* layers of the last pipeline stage; 0 = even split */
    bool account_for_embedding_in_pipeline_split; /* the embedding counts as one layer of the first chunk */
    bool account_for_loss_in_pipeline_split;      /* the loss counts as one layer of the last chunk */
    char pipeline_layout[CFG_LAYOUT_LEN];         /* Megatron's layout string; "" = none */
    cfg_schedule schedule;
    int pipeline_flushes;          /* the schedule runs this many times per step, one per accumulation step; 0 = 1 */
    int micro_batch;               /* sequences per micro-batch */
    int global_batch;              /* sequences per step */
    bool sequence_parallel;
    cfg_recompute recompute;
    char recompute_modules[CFG_NAME_LEN * 2]; /* selective: the modules, "core_attn,moe_act"; "" = core_attn */
    int zero;                      /* 0..3 */
    int dp_shard;                  /* HSDP (zero 3): ranks of a parameter shard group; 0 = the whole DP group */
    bool overlap_grad_reduce;
    bool overlap_param_gather;
    bool overlap_tp_comm;
    bool overlap_tp_backward;      /* backward TP collectives beside the GEMMs (implied by overlap_tp_comm) */
    bool overlap_cp_comm;
    bool fuse_tpy_cp;
    cfg_dim order[CFG_NDIMS];      /* innermost first */
    double moe_capacity_factor;    /* most tokens an expert takes relative to a perfect balance; 0: no limit (dropless) */
    bool moe_pad_expert_input_to_capacity; /* every expert runs its capacity, padded when it got fewer */
    cfg_dispatcher moe_dispatcher; /* how tokens reach their experts */
    double moe_load_imbalance;     /* tokens the busiest EP rank receives relative to the mean (>= 1) */
    bool overlap_shared_experts;   /* the shared experts compute while the expert all-to-alls are in flight */
    bool overlap_ep_comm;          /* one micro-batch's expert all-to-all behind another's compute */
    cfg_attention attention_kernel;
    bool fp8;                      /* the layers' GEMMs in FP8 (Transformer Engine) */
    cfg_fp8_recipe fp8_recipe;     /* how FP8 tensors are scaled, with fp8 */
    bool grad_reduce_in_bf16;      /* main grads kept and reduced in bf16 (Megatron --grad-reduce-in-bf16) */
    cfg_moments optimizer_moments; /* Adam moments in fp32 or bf16 */
} cfg_strategy;

/* ---------------------------------------------------------------- loading */

/* `--set KEY=VALUE` overrides.  KEY is a strategy key ("tp_x"), or
 * "model.KEY" / "platform.KEY" (dotted for nested keys:
 * "platform.device.peak_tflops").  VALUE is JSON when it parses as JSON
 * (numbers, true/false, quoted strings), otherwise a bare string. */
typedef struct cfg_overrides {
    int n;
    const char *const *items;      /* "KEY=VALUE", not owned */
} cfg_overrides;

/* How many items of ov apply to kind ("model", "platform", "strategy"),
 * leaving out those that set the key except_key (NULL: none). */
int cfg_overrides_count(const cfg_overrides *ov, const char *kind, const char *except_key);

/* The data directory: models/, platforms/, strategies/ (where names
 * without a path are looked up) and results/published, results/golden.
 * This is the one place that finds it, in this order:
 *   1. $HEPTASIM_DATA, when set and not empty;
 *   2. the installed data beside the running executable (/proc/self/exe),
 *      <prefix>/share/heptasim for <prefix>/bin/heptasim, when it exists;
 *   3. the source tree the build was configured from (an uninstalled
 *      build), when it exists; else 2, so "not found" messages name the
 *      installed location.
 * Returns $HEPTASIM_DATA itself or a static string; never NULL. */
const char *cfg_data_dir(void);

/* The shipped calibrated preset of an uncalibrated shipped one: for p
 * read from platforms/NAME.json of the data directory with no fit record
 * of its own, "NAME-calibrated" when platforms/NAME-calibrated.json is
 * there.  Writes it to out and returns true; false (out "") otherwise. */
bool cfg_calibrated_preset(const cfg_platform *p, char *out, size_t cap);

/* SIM_EINVAL with one line when $HEPTASIM_DATA is set but is not a
 * directory; checked once before any command runs. */
sim_rc cfg_data_check(sim_err *err);

/* The name of an object read from file `origin` without "name": its file
 * stem ("platforms/x.json" -> "x"; ".../llama-3-8b/config.json" ->
 * "llama-3-8b"). */
void cfg_default_name(const char *origin, char *out, size_t cap);

/* Resolve "NAME" or a path into a readable file path: an existing path is
 * used as is, else <data>/<kind>/<NAME>.json (kind: "models", "platforms",
 * "strategies").  Returns SIM_EINVAL with a message listing what was tried. */
sim_rc cfg_resolve(const char *kind, const char *name_or_path, char *out, int cap, sim_err *err);

/* Load, override and validate one file into *out (written only on
 * success).  ov may be NULL; each loader applies only the items of its kind
 * but rejects a malformed item of any kind.  The model loader also accepts
 * a HuggingFace config.json (recognised by "num_hidden_layers"; seq_len is
 * then 4096 unless overridden), or a directory holding one.
 * devices_override > 0 replaces the platform's device count (--devices) and
 * stands in for a missing "devices". */
sim_rc cfg_load_model(const char *name_or_path, const cfg_overrides *ov, cfg_model *out, sim_err *err);
sim_rc cfg_load_platform(const char *name_or_path, const cfg_overrides *ov, int devices_override,
                         cfg_platform *out, sim_err *err);

/* Platform bases.  A platform file may name a "base": a shipped platform
 * ("dgx-h100": <data>/platforms/dgx-h100.json) or, when the value holds a
 * '/' or ends in ".json", a file path relative to the file's directory (or
 * absolute).  The file's keys are laid over the base's before anything is
 * checked: where both give an object, the objects merge key by key (an
 * "efficiency" block the file leaves out, or any key of it, is the
 * base's); anything else the file gives (a number, a string, an array such
 * as an efficiency curve) replaces the base's whole.  "name",
 * "description" and "calibration" are the file's own, never inherited.  A
 * base may have a base, up to CFG_MAX_BASES; a chain that comes back to a
 * file it holds, a missing base or a base that is not a string is refused
 * with one line naming the file holding the key.  `--set` applies to the
 * merged tree.  See docs/platforms.md. */

/* The chain of platform files name_or_path inherits from: out[0] gets its
 * own path, out[1] its base's, and so on (at most cap, cap >= 1;
 * CFG_MAX_BASES + 1 holds every chain).  *n gets their count.  Reads only
 * the "base" keys (the files need not be valid platforms on their own).
 * Returns SIM_EINVAL with the loader's message on a bad chain. */
sim_rc cfg_platform_chain(const char *name_or_path, char (*out)[CFG_PATH_LEN], int cap, int *n, sim_err *err);

/* The JSON of platform file name_or_path as the loader reads it: its own
 * keys with those of its bases laid under them, in the file's units (a
 * cJSON object; free with cJSON_Delete), and its path in path.  NULL with
 * the error when the file or a base cannot be read. */
void *cfg_platform_file_json(const char *name_or_path, char path[CFG_PATH_LEN], sim_err *err);

/* The value at a dotted key ("supernode.fabric_GBps") of a JSON object
 * (a cJSON tree, as cfg_platform_file_json's), split as --set splits its
 * keys; NULL when a part is missing, not an object or the key is
 * malformed. */
const void *cfg_json_at(const void *root, const char *dotted);

/* The inverse of the merge: the keys of p whose values differ from base's
 * (objects compared key by key, anything else whole, numbers exactly), as
 * a cJSON object (caller deletes; void* as cfg_platform_to_json) without
 * the file's own keys.  A file holding these keys and "base" naming base's
 * file resolves to p's figures. */
void *cfg_platform_over(const cfg_platform *p, const cfg_platform *base);
sim_rc cfg_load_strategy(const char *name_or_path, const cfg_overrides *ov, cfg_strategy *out, sim_err *err);

/* Same as the loaders, from JSON text (tests, search).  `origin` names the
 * text in messages. */
sim_rc cfg_parse_model(const char *json, const char *origin, const cfg_overrides *ov, cfg_model *out, sim_err *err);
sim_rc cfg_parse_platform(const char *json, const char *origin, const cfg_overrides *ov, int devices_override,
                          cfg_platform *out, sim_err *err);
sim_rc cfg_parse_strategy(const char *json, const char *origin, const cfg_overrides *ov, cfg_strategy *out,
                          sim_err *err);

/* The one rule for the keys of a JSON object (obj: a cJSON object; void*
 * keeps cJSON.h out of this header) that another reader checks by hand
 * (study files, published cases, golden results, sweep records): every key
 * is one of known (NULL-ended) and none appears twice.  SIM_OK, or
 * SIM_EINVAL with the one message of every input, as the schema tables
 * give it: "ORIGIN: WHERE.KEY: unknown key (did you mean 'X'?)" or
 * "(known keys: ...)", "ORIGIN: WHERE.KEY: duplicate key (keep one)". */
sim_rc cfg_check_keys(const void *obj, const char *const *known, const char *origin, const char *where, sim_err *err);

/* Check the three together (products equal the device count, divisibility
 * of heads, experts, batch and sequence, the layers' split over the
 * pipeline stages (see cfg_stage_layers), schedule, limits of 131072
 * devices and 65536 micro-batches per step): any step the model can
 * describe.  Whether replaying it fits this machine is the engine's
 * question (eng_replay_check).  The structs are first checked against
 * their schemas again, so structs built in memory get the same messages as
 * files.  A strategy with dp = 0 gets dp derived from the device count here
 * (s is changed only on success).  Messages name the strategy file and
 * key. */
sim_rc cfg_check(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err);

/* cfg_check in two parts, for a caller that checks many strategies on one
 * model and platform (the search): the model's and the platform's own
 * checks once, then each strategy's (cfg_check = both). */
sim_rc cfg_check_inputs(const cfg_model *m, const cfg_platform *p, sim_err *err);
sim_rc cfg_check_strategy(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err);
/* cfg_check_strategy without checking each value against its key's row
 * (type and range), for values the rows' own choices gave (the search's
 * enumeration): the rules that join them only. */
sim_rc cfg_check_strategy_rules(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, sim_err *err);

/* True when the MLP is gated (SwiGLU, GeGLU): a gate matrix besides up and
 * down, and the gate's activations stored too.  Inline, so that the pure
 * modules link without this one. */
static inline bool cfg_mlp_gated(const cfg_model *m)
{
    return m->activation == CFG_ACT_SWIGLU || m->activation == CFG_ACT_GEGLU;
}

/* True when the model's attention is multi-head latent attention. */
static inline bool cfg_is_mla(const cfg_model *m) { return m->mla.kv_lora_rank > 0; }

/* The rule of the precision keys that needs the platform: fp8 needs an FP8
 * peak.  Part of cfg_check; a search checks its base strategy with it. */
sim_rc cfg_check_precision(const cfg_platform *p, const cfg_strategy *s, sim_err *err);

/* What a strategy implies (derived.c): one function per quantity, which
 * every module calls rather than multiplying the fields again. */
int cfg_world_size(const cfg_strategy *s);          /* dp*pp*tp_x*tp_y*cp_ring*cp_ulysses */
int cfg_tp(const cfg_strategy *s);                  /* tp_x*tp_y */
int cfg_cp(const cfg_strategy *s);                  /* cp_ring*cp_ulysses */
int cfg_micro_batches(const cfg_strategy *s);       /* global_batch / (dp * micro_batch) */
int cfg_flush_micro_batches(const cfg_strategy *s); /* the micro-batches of one pipeline flush: those / pipeline_flushes */
double cfg_usable_hbm_bytes(const cfg_platform *p); /* (hbm_bytes - hbm_reserved_bytes) x (1 - hbm_headroom) */
/* The compute speed of device d, a fraction of the platform's peak (the
 * product of the stragglers naming it or its node; 1 on a uniform
 * platform), and the bandwidth factor of its NIC link. */
double cfg_device_speed(const cfg_platform *p, int d);
double cfg_nic_speed(const cfg_platform *p, int d);

/* Without a curve of its own, an FP8 GEMM of CFG_FP8_GEMM_SHIFT * F FLOPs
 * reaches the fraction of the FP8 peak a bf16 GEMM of F FLOPs reaches of
 * the bf16 peak: at twice the peak the two take the same time, so a GEMM
 * too small to fill the device gains nothing from FP8 and a large one
 * nearly 2x. */
#define CFG_FP8_GEMM_SHIFT 2.0
/* The FP8 GEMM efficiency curve p runs with: its own gemm_fp8_efficiency,
 * else gemm_efficiency's points at CFG_FP8_GEMM_SHIFT times the FLOPs. */
void cfg_gemm_fp8_curve(const cfg_platform *p, cfg_curve *out);
/* The radix of dimension d in the rank numbering of the dense layers (a
 * rank is a mixed-radix number over `order`): its size, but 1 for ep, which
 * takes no digit there. */
int cfg_dim_radix(const cfg_strategy *s, cfg_dim d);
/* The radix of slot d of `order` in the expert layers' numbering of the
 * same ranks (Megatron-Core's expert rank generator: the same order string
 * with tp = etp, cp = 1, ep, dp = expert data parallel, pp): etp in tp_x's
 * slot, 1 in tp_y's and the CP slots, ep, cfg_edp_group in dp's, pp.  The
 * expert groups are folded over the tp x cp x dp ranks of a stage whatever
 * the dense layout. */
int cfg_expert_radix(const cfg_strategy *s, cfg_dim d);
/* True when the experts have groups of their own: ep > 1, or etp other
 * than tp_x*tp_y (etp 0 reads as tp_x*tp_y).  Otherwise the expert layers
 * are split and replicated as the dense ones (ETP = TP, expert DP = DP) and
 * the expert numbering is not used. */
bool cfg_experts_folded(const cfg_strategy *s);
/* True when the experts are not folded, or the expert numbering puts every
 * rank on the pipeline stage the dense one does (pp has one stride in
 * both), as Megatron-Core asserts: pp last in the order, or the expert
 * data-parallel size equal to dp. */
bool cfg_expert_stages_match(const cfg_strategy *s);
int cfg_dp_group(const cfg_strategy *s);            /* dense data-parallel group: dp*cp_ring*cp_ulysses */
int cfg_dp_shard(const cfg_strategy *s);            /* ranks sharding the dense parameters: dp_shard, or the DP group */
int cfg_dp_replicate(const cfg_strategy *s);        /* HSDP replicas of a shard: cfg_dp_group / cfg_dp_shard */
int cfg_ep(const cfg_strategy *s);                  /* expert parallel size: ep, 1 when unset (0) */
int cfg_etp(const cfg_strategy *s);                 /* expert tensor parallel size: etp, tp when unset (0) */
int cfg_edp_group(const cfg_strategy *s);           /* expert data-parallel group: dp*cp*tp/(ep*etp) */
/* Routed copies the busiest EP rank's experts receive, relative to top_k
 * per token routed (a perfect balance): moe_load_imbalance without a
 * capacity (moe_capacity_factor 0, dropless); with capacity c the busiest
 * keeps min(imbalance, c) and drops the rest, and with padding every
 * expert runs c.  Every rank waits for the busiest in the combine, so its
 * expert compute, all-to-all bytes and expert activations set the step. */
double cfg_expert_load(const cfg_strategy *s);
/* The fraction of the busiest EP rank's routed copies its experts drop:
 * 1 - capacity / imbalance when the imbalance is above the capacity, else
 * 0 (dropless: 0). */
double cfg_expert_dropped(const cfg_strategy *s);
/* Returns the most layers a pipeline stage holds: layers / pp when they
 * are split evenly, else the largest of the stages' counts
 * (cfg_stage_layers). */
int cfg_layers_per_stage(const cfg_model *m, const cfg_strategy *s);
bool cfg_is_moe_layer(const cfg_model *m, int layer);
/* True when layer `layer` (0-based; the multi-token prediction modules'
 * layers are numbered from `layers` on) attends through the window. */
bool cfg_is_window_layer(const cfg_model *m, int layer);

/* Where the layers sit on the pipeline, the one rule every module uses.
 *
 * Pipeline stage p (0-based, below pp) holds n_p layers: with
 * first_stage_layers = F > 0, n_0 = F; with last_stage_layers = L > 0,
 * n_{pp-1} = L; the other stages share the remaining layers evenly (as
 * Megatron's --decoder-first/last-pipeline-num-layers).  With neither set,
 * the layers are cut into pp*v equal chunks (v = cfg_stage_chunks; chunk
 * c holds layers [c*layers/(pp*v), (c+1)*layers/(pp*v)) ), or with
 * account_for_embedding_in_pipeline_split (E = 1) and/or
 * account_for_loss_in_pipeline_split (L = 1) (Megatron's flags) each
 * chunk holds (layers + E + L)/(pp*v) places, the embedding taking one of
 * the first chunk's and the loss one of the last's.  Each stage
 * holds v model chunks of n_p / v layers; chunk j of stage p is global
 * chunk j*pp + p (Megatron's interleaved placement), except with the V
 * schedules (zb-v, dualpipe-v: two chunks, no uneven split), where chunk 0
 * of stage p is global chunk p and chunk 1 is global chunk 2*pp - 1 - p, so
 * that the model runs down the stages and back up.  Global chunks hold
 * consecutive layers in order, so the ranges of all (stage, chunk) pairs
 * cover 0..layers-1 once.
 * This holds for strategies that pass cfg_check; for others the ranges may
 * leave layers out, overlap or run past the last layer (counts are never
 * negative). */

/* Returns v: vpp with the interleaved schedule, 2 with the V schedules
 * (cfg_v_schedule), 1 otherwise. */
int cfg_stage_chunks(const cfg_strategy *s);

/* True for the schedules that place two chunks per stage in a V (zb-v,
 * dualpipe-v). */
bool cfg_v_schedule(const cfg_strategy *s);

/* True when overlap_ep_comm pairs the steady phase of a 1F1B schedule
 * (Megatron-Core's combined 1F1B): interleaved 1F1B, or 1F1B without a
 * pipeline, with experts spread over ep > 1 ranks.  DualPipe-V pairs its
 * passes by itself.  With ep 1 there is no expert all-to-all to hide and
 * the schedule is left as it is. */
static inline bool cfg_ep_overlap_1f1b(const cfg_strategy *s)
{
    return s->overlap_ep_comm && s->ep > 1 &&
           (s->schedule == CFG_SCHED_INTERLEAVED || (s->schedule == CFG_SCHED_1F1B && s->pp == 1));
}

/* Returns the number of layers of model chunk `chunk` (0 <= chunk < v) of
 * pipeline stage `stage` (0 <= stage < pp) and sets *first (may be NULL) to
 * the global index of its first layer. */
int cfg_stage_layers(const cfg_model *m, const cfg_strategy *s, int stage, int chunk, int *first);

/* Returns the global chunk (its place along the model, 0..pp*v-1) of
 * chunk `chunk` of stage `stage`: chunk*pp + stage, or in a V stage for
 * chunk 0 and 2*pp - 1 - stage for chunk 1. */
int cfg_global_chunk(const cfg_strategy *s, int stage, int chunk);

/* Returns the stage holding global chunk g (0 <= g < pp*v) and sets
 * *chunk (may be NULL) to its chunk on that stage. */
int cfg_chunk_stage(const cfg_strategy *s, int g, int *chunk);

/* Returns the stage holding the model's last chunk, with the final norm,
 * the output layer and the loss: pp - 1, or 0 in a V. */
int cfg_head_stage(const cfg_strategy *s);

/* Returns the layers stage `stage` holds, all its chunks together. */
int cfg_stage_layer_total(const cfg_model *m, const cfg_strategy *s, int stage);

/* True when first_stage_layers or last_stage_layers is set (pp > 1). */
bool cfg_uneven_stages(const cfg_strategy *s);

/* Pipeline layouts (pipeline_layout, Megatron-Core's
 * --pipeline-model-parallel-layout; pipeline_layout.c has the grammar).
 * With a layout, global chunk g holds the decoder layers ('t') of the
 * layout's virtual stage g, in order; cfg_check makes sure the layout has
 * pp*vpp stages, the embedding in the first, the loss and the MTP layers
 * in the last and at least one decoder layer in each. */
typedef struct cfg_layout_stage {
    int decoders, mtp;      /* 't' and 'm' */
    int embedding, loss;    /* 'E' and 'L' */
} cfg_layout_stage;
typedef void (*cfg_layout_visit)(void *ctx, int index, const cfg_layout_stage *st);
/* Calls visit for each virtual stage of text in order; returns their
 * count, or -1 with one phrase in why (syntax, unknown character, a count
 * or an expansion above CFG_LAYOUT_MAX_ATOMS). */
int cfg_layout_walk(const char *text, cfg_layout_visit visit, void *ctx, char *why, size_t cap);

/* Names for enums, as written in JSON ("1f1b", "selective", "tp_x"). */
const char *cfg_schedule_name(cfg_schedule s);
const char *cfg_recompute_name(cfg_recompute r);
const char *cfg_dispatcher_name(cfg_dispatcher d);
const char *cfg_fp8_recipe_name(cfg_fp8_recipe r);

/* The modules s recomputes, a bit (1u << cfg_recompute_module) each: with
 * recompute "selective", those of recompute_modules (core_attn when
 * empty); none otherwise (full recompute runs whole layers).  Names that
 * are not modules are skipped (cfg_check refuses them). */
unsigned cfg_recompute_modules(const cfg_strategy *s);
const char *cfg_activation_name(cfg_activation a);
const char *cfg_window_kind_name(cfg_window_kind k);
const char *cfg_dim_name(cfg_dim d);
/* Write the order as "tp_x-tp_y-...". */
void cfg_order_format(const cfg_strategy *s, char *out, int cap);

/* The resolved objects as cJSON (for --json output and golden files). The
 * caller owns the returned tree (cJSON_Delete). Declared as void* so that
 * this header does not need cJSON.h. */
void *cfg_strategy_to_json(const cfg_strategy *s);
void *cfg_model_to_json(const cfg_model *m);
void *cfg_platform_to_json(const cfg_platform *p);

/* The candidate closest to word (ignoring case; at most 1 edit for words
 * shorter than 6 characters, 2 otherwise), or NULL when none is close
 * (names.c; also the command line's "did you mean"). */
const char *cfg_suggest(const char *word, const char *const *cands, int n);

#endif
