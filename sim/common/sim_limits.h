/* sim_limits.h - every fixed size and upper bound of the simulator, one
 * line each.
 *
 * A limit is a number the code cannot exceed without a change: a buffer's
 * capacity, the largest value a key accepts, the most items a list holds.
 * Inputs beyond a limit are refused with a message that names it, never
 * cut silently.  Defaults, efficiencies and measured costs are not limits
 * and live beside the code that uses them, as do the sizes the code tunes
 * for speed without refusing anything: caches (the estimator's) and the
 * points where a search for a shortcut gives up and takes the long way
 * (the engine's classes of alike ranks). */
#ifndef HEPTASIM_SIM_LIMITS_H
#define HEPTASIM_SIM_LIMITS_H

/* ------------------------------------------------------------- messages */

#define SIM_ERR_LEN 1024            /* one error line, terminator included: room to quote a file
                                     * name of SIM_MAX_PATH characters whole, with the reason */

/* --------------------------------------------------------------- inputs */

#define CFG_NAME_LEN 64             /* name of a model, platform, strategy or device */
#define CFG_TEXT_LEN 256            /* a description (also the compact strategy string) */
#define CFG_PATH_LEN 512            /* a file path, and a JSON path in messages */
#define SIM_MAX_PATH (CFG_PATH_LEN - 1) /* characters of a file name heptasim takes; longer
                                     * ones are refused with their length */
#define CFG_MAX_FILE_BYTES (64L * 1024 * 1024) /* a JSON input file (model, platform, strategy,
                                     * validation case, golden scenario) */
#define CFG_MAX_RECORDS_BYTES (1024L * 1024 * 1024) /* a file of sweep records (~500,000) */
#define CFG_MAX_OBJECT_KEYS 64      /* keys of one schema object (the "known keys" list) */
#define CFG_SET_MAX_DEPTH 8         /* parts of a dotted --set key (platform.device.peak_tflops: 3) */
#define CFG_SET_MAX_PART 64         /* characters of one part of a --set key, terminator included */
#define CFG_CURVE_MAX 16            /* points of an efficiency curve */
#define CFG_MAX_TIERS 4             /* network tiers above the supernode (leaf, spine, ...) */
#define CFG_MAX_STRAGGLERS 16       /* slow devices, nodes or NIC links of a platform (stragglers) */
#define CFG_STRAGGLER_SPEED_MIN 0.01 /* a straggler's speed, a fraction of the others' (up to 1) */
#define CFG_MAX_BASES 8             /* platform files a platform inherits from through "base" */

/* -------------------------------------------------------- model values */

#define CFG_MAX_LAYERS 16384        /* layers; also vpp, stage layer counts, MoE layer keys */
#define CFG_LAYOUT_LEN 512          /* a pipeline layout string, terminator included */
#define CFG_LAYOUT_MAX_ATOMS 1048576 /* characters a pipeline layout string expands to */
#define CFG_MAX_HIDDEN 1048576      /* hidden size */
#define CFG_MAX_WIDTH 16777216      /* FFN widths, vocabulary, sequence length, global batch, micro-batch (2^24) */
#define CFG_MAX_HEADS 65536         /* heads, kv_heads */
#define CFG_MAX_EXPERTS 65536       /* routed and shared experts, top_k */
#define CFG_MAX_HEAD_DIM 65536      /* head_dim, given or hidden / heads; MLA's per-head widths */
#define CFG_MAX_MTP_LAYERS 16       /* multi-token prediction modules */

/* ------------------------------------------------------ platform values */

/* The physical range of each platform figure, in the key's unit: every
 * device from the 1990s to far beyond today, and every time and size
 * SimGrid is given finite and representable (docs/inputs.md says why). */
#define CFG_PEAK_TFLOPS_MIN 1e-6    /* 1 MFLOP/s: a 1990s CPU core */
#define CFG_PEAK_TFLOPS_MAX 1e7     /* 10 EFLOP/s: ~4000x a 2024 GPU */
#define CFG_HBM_GIB_MIN 1e-4        /* 100 KiB */
#define CFG_HBM_GIB_MAX 1e5         /* 100 TiB: ~500x a 2024 GPU */
#define CFG_HBM_HEADROOM_MAX 0.9    /* device.hbm_headroom: keep at most 90 % of the usable HBM free */
#define CFG_HBM_TBPS_MIN 1e-6       /* 1 MB/s */
#define CFG_HBM_TBPS_MAX 1e4        /* 10 PB/s: ~1000x a 2024 GPU */
#define CFG_LINK_GBPS_MIN 1e-4      /* 100 kB/s: below 10 Mbit/s Ethernet */
#define CFG_FABRIC_GBPS_MAX 1e6     /* 1 PB/s per device: ~500x NVLink 5 */
#define CFG_NIC_GBPS_MAX 1e5        /* 100 TB/s per device, below the engine's pad links (1 PB/s) */
#define CFG_LATENCY_US_MAX 1e6      /* 1 s, also per kernel and per collective step */
#define CFG_OVERSUB_MAX 1000        /* uplinks 1000x thinner than the NICs below them */
#define CFG_MAX_CASES 100000        /* published cases a calibration record counts */
#define CFG_MAX_RMS_ERROR 1000      /* a calibration record's relative rms errors */
#define CFG_OVERLAP_SLOWDOWN_MAX 10 /* a GEMM beside a TP collective at most 10x slower */
#define CFG_EFFICIENCY_MIN 1e-4     /* 0.01 % of peak or of link bandwidth: efficiencies in [this, 1] */

/* ------------------------------------------------------ strategy values */

#define CFG_MAX_DEVICES 131072      /* devices of a platform, and each parallel dimension */
#define CFG_MAX_MICRO_BATCHES 65536 /* micro-batches per step */

/* --------------------------------------------------------------- replay */

#define ENG_MAX_LAYER_STEPS (1LL << 26) /* layer steps of a replayed step (simulated ranks x
                                     * micro-batches x layers per stage): ~2^31 instructions */
#define ENG_MAX_OPTIONS 16          /* --cfg and --log settings handed to SimGrid */
#define NET_MAX_PHASES 3            /* phases of one collective algorithm (hierarchical: intra, inter, intra) */

/* ------------------------------------------------------------- search */

#define CFG_MAX_CHOICES 256         /* values one key takes at one point of a search (a device
                                     * count <= CFG_MAX_DEVICES has at most 144 divisors) */
#define CFG_SEARCH_MAX_MICRO_BATCH 16 /* largest micro-batch a search tries */
#define CFG_SEARCH_MAX_VPP 8        /* largest vpp a search tries */
#define SRCH_MAX_LEVELS 32          /* searched strategy keys, and pinnable ones (bits of an unsigned) */
#define STDY_MAX_CELLS 4096         /* cells of one study */
#define STDY_MAX_SETS 16            /* --set items of a cell: seq_len, hbm_GiB, one sensitivity key, strategy keys */

/* ------------------------------------------------------ command line */

#define CLI_MAX_SETS 256            /* --set items of one command */
#define CLI_MAX_FILES 1024          /* files given to one command (merge, validate) */
#define CLI_MAX_SIMGRID 8           /* --cfg items passed to SimGrid */
#define CLI_MAX_TOP 10000           /* --top: candidates simulated, each one a child process */
#define CLI_MAX_BUDGET_S 604800     /* --budget: a week of simulation */
#define CLI_MAX_JOBS 1024           /* --jobs: simulations at once */
#define CLI_MAX_SHARDS 65536        /* --shard I/N: N */

/* ------------------------------------------------------------ reports */

#define RPT_TIMELINE_MAX_RANKS 64   /* ranks sampled for the HTML report's timeline */

/* --------------------------------------------------------- validation */

#define VAL_ID_LEN 96               /* id of a published case */
#define VAL_TEXT_LEN 2048           /* source, hardware and each assumption of a case, its NUL included */
#define VAL_MAX_RUNS 16             /* runs of one published case */
#define VAL_MAX_ASSUMPTIONS 12      /* assumptions listed with one case */
#define VAL_GOLDEN_MAX_SET 64       /* "set" items of one golden result */
#define VAL_MAX_PRESETS 256         /* platform presets validate compares with their calibrated relatives */
#define VAL_NOTE_LEN 160            /* one note under a calibration (a parameter at its bound) */
#define VAL_MAX_NOTES 8             /* notes under one calibration */
#define VAL_MAX_GROUPS 64           /* groups (device, framework) a calibration's error table shows */

#endif
