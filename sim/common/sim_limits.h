/* sim_limits.h - every fixed size and upper bound of the simulator, one
 * line each.
 *
 * A limit is a number the code cannot exceed without a change: a buffer's
 * capacity, the largest value a key accepts, the most items a list holds.
 * Inputs beyond a limit are refused with a message that names it, never
 * cut silently.  Defaults, efficiencies and measured costs are not limits
 * and live beside the code that uses them.  Limits of sim/engine (options,
 * devices per SimGrid group) and of the estimator's caches are still
 * defined in their files. */
#ifndef HEPTASIM_SIM_LIMITS_H
#define HEPTASIM_SIM_LIMITS_H

/* ------------------------------------------------------------- messages */

#define SIM_ERR_LEN 512             /* one error line, terminator included */

/* --------------------------------------------------------------- inputs */

#define CFG_NAME_LEN 64             /* name of a model, platform, strategy or device */
#define CFG_TEXT_LEN 256            /* a description (also the compact strategy string) */
#define CFG_PATH_LEN 512            /* a file path, and a JSON path in messages */
#define CFG_MAX_FILE_BYTES (64L * 1024 * 1024) /* an input file */
#define CFG_MAX_OBJECT_KEYS 64      /* keys of one schema object (the "known keys" list) */
#define CFG_SET_MAX_DEPTH 8         /* parts of a dotted --set key (platform.device.peak_tflops: 3) */
#define CFG_SET_MAX_PART 64         /* characters of one part of a --set key, terminator included */
#define CFG_CURVE_MAX 16            /* points of an efficiency curve */

/* -------------------------------------------------------- model values */

#define CFG_MAX_LAYERS 16384        /* layers; also vpp, stage layer counts, MoE layer keys */
#define CFG_MAX_HIDDEN 1048576      /* hidden size */
#define CFG_MAX_WIDTH 16777216      /* FFN widths, vocabulary, sequence length, global batch, micro-batch (2^24) */
#define CFG_MAX_HEADS 65536         /* heads, kv_heads */
#define CFG_MAX_EXPERTS 65536       /* routed and shared experts, top_k */
#define CFG_MAX_HEAD_DIM 65536      /* head_dim, given or hidden / heads */

/* ------------------------------------------------------ strategy values */

#define CFG_MAX_DEVICES 131072      /* devices of a platform, and each parallel dimension */
#define CFG_MAX_MICRO_BATCHES 65536 /* micro-batches per step */

/* ------------------------------------------------------------- search */

#define CFG_MAX_CHOICES 256         /* values one key takes at one point of a search (a device
                                     * count <= CFG_MAX_DEVICES has at most 144 divisors) */
#define CFG_SEARCH_MAX_MICRO_BATCH 16 /* largest micro-batch a search tries */
#define CFG_SEARCH_MAX_VPP 8        /* largest vpp a search tries */
#define SRCH_MAX_LEVELS 32          /* searched strategy keys, and pinnable ones (bits of an unsigned) */

/* ------------------------------------------------------ command line */

#define CLI_MAX_SETS 256            /* --set items of one command */
#define CLI_MAX_FILES 1024          /* files given to one command (merge, validate) */
#define CLI_MAX_SIMGRID 8           /* --cfg items passed to SimGrid */

/* ------------------------------------------------------------ reports */

#define RPT_TIMELINE_MAX_RANKS 64   /* ranks sampled for the HTML report's timeline */

/* --------------------------------------------------------- validation */

#define VAL_ID_LEN 96               /* id of a published case */
#define VAL_TEXT_LEN 512            /* source, notes and hardware text of a case */
#define VAL_MAX_RUNS 16             /* runs of one published case */
#define VAL_MAX_ASSUMPTIONS 12      /* assumptions listed with one case */
#define VAL_GOLDEN_MAX_SET 64       /* "set" items of one golden result */

#endif
