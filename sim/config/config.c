/* config.c - the three input formats (model, platform, strategy): their
 * schema tables, loading from files or text, and writing back as JSON.
 *
 * A load is: resolve the name to a file, read it, parse it with cJSON,
 * translate a HuggingFace config when it is one, apply the `--set`
 * overrides of its kind to the tree, read the tree through the schema
 * (types, bounds, defaults, SI units), derive the dependent defaults and
 * check the rules that tie the keys of one file together.  The rules that
 * tie the three files together are in check.c. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/json.h"
#include "config_int.h"

#ifndef HEPTASIM_DATADIR
#define HEPTASIM_DATADIR "."
#endif
#ifndef HEPTASIM_DATA_FROM_BIN
#define HEPTASIM_DATA_FROM_BIN "../share/heptasim"
#endif

_Static_assert(sizeof(cfg_schedule) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cfg_recompute) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cfg_activation) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cfg_window_kind) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cfg_dim) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cfg_attention) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cfg_moments) == sizeof(int), "enum fields are stored as int");

/* ------------------------------------------------------------- dtypes */

static const char *const dtype_names[] = {"bf16", "fp16", NULL};
static const int dtype_bytes[] = {2, 2};
_Static_assert(sizeof dtype_names / sizeof *dtype_names == sizeof dtype_bytes / sizeof *dtype_bytes + 1,
               "one size per dtype");

/* ----------------------------------------------------------- the schemas */

#define REQ CFG_KF_REQUIRED
#define DRV CFG_KF_DERIVED
#define OPEN CFG_KF_MIN_OPEN

#define MAXDIM CFG_MAX_DEVICES
#define MAXWIDTH CFG_MAX_WIDTH

static const cfg_key moe_rows[] = {
    ROW_INT("experts", cfg_model, moe.experts, 0, CFG_MAX_EXPERTS, 0, REQ),
    ROW_INT("top_k", cfg_model, moe.top_k, 1, CFG_MAX_EXPERTS, 0, REQ),
    ROW_INT("ffn_hidden", cfg_model, moe.ffn_hidden, 1, MAXWIDTH, 0, DRV),
    ROW_INT("shared_experts", cfg_model, moe.shared_experts, 0, CFG_MAX_EXPERTS, 0, 0),
    ROW_INT("shared_ffn_hidden", cfg_model, moe.shared_ffn_hidden, 0, MAXWIDTH, 0, 0),
    ROW_INT("first_dense_layers", cfg_model, moe.first_dense_layers, 0, CFG_MAX_LAYERS, 0, 0),
    ROW_INT("layer_freq", cfg_model, moe.layer_freq, 1, CFG_MAX_LAYERS, 1, 0),
    ROW_INT("groups", cfg_model, moe.groups, 0, CFG_MAX_EXPERTS, 0, 0),
    ROW_INT("group_top_k", cfg_model, moe.group_top_k, 0, CFG_MAX_EXPERTS, 0, 0),
    ROW_END,
};

static const cfg_key mla_rows[] = {
    ROW_INT("q_lora_rank", cfg_model, mla.q_lora_rank, 0, MAXWIDTH, 0, 0),
    ROW_INT("kv_lora_rank", cfg_model, mla.kv_lora_rank, 1, MAXWIDTH, 0, REQ),
    ROW_INT("qk_nope_head_dim", cfg_model, mla.qk_nope_head_dim, 0, CFG_MAX_HEAD_DIM, 0, REQ),
    ROW_INT("qk_rope_head_dim", cfg_model, mla.qk_rope_head_dim, 0, CFG_MAX_HEAD_DIM, 0, REQ),
    ROW_INT("v_head_dim", cfg_model, mla.v_head_dim, 1, CFG_MAX_HEAD_DIM, 0, REQ),
    ROW_END,
};

static const cfg_key window_rows[] = {
    ROW_INT("tokens", cfg_model, window.tokens, 1, MAXWIDTH, 0, REQ),
    ROW_INT("full_every", cfg_model, window.full_every, 0, CFG_MAX_LAYERS, 0, 0),
    ROW_ENUM("kind", cfg_model, window.kind, cfg_window_kind_names, NULL, "sliding"),
    ROW_END,
};

static const cfg_key model_rows[] = {
    ROW_STR("name", cfg_model, name, DRV),
    ROW_STR("description", cfg_model, description, 0),
    ROW_INT("layers", cfg_model, layers, 1, CFG_MAX_LAYERS, 0, REQ),
    ROW_INT("hidden", cfg_model, hidden, 1, CFG_MAX_HIDDEN, 0, REQ),
    ROW_INT("heads", cfg_model, heads, 1, CFG_MAX_HEADS, 0, REQ),
    ROW_INT("kv_heads", cfg_model, kv_heads, 1, CFG_MAX_HEADS, 0, DRV),
    ROW_INT("head_dim", cfg_model, head_dim, 1, CFG_MAX_HEAD_DIM, 0, DRV),
    ROW_INT("ffn_hidden", cfg_model, ffn_hidden, 1, MAXWIDTH, 0, REQ),
    ROW_INT("vocab", cfg_model, vocab, 1, MAXWIDTH, 0, REQ),
    ROW_INT("seq_len", cfg_model, seq_len, 1, MAXWIDTH, 0, REQ),
    ROW_ENUM("activation", cfg_model, activation, cfg_activation_names, NULL, "gelu"),
    ROW_ENUM("dtype", cfg_model, dtype_bytes, dtype_names, dtype_bytes, "bf16"),
    ROW_BOOL("tied_embeddings", cfg_model, tied_embeddings, 0),
    {.key = "moe", .type = CFG_K_OBJECT, .flags = CFG_KF_OMIT_ZERO, .offset = offsetof(cfg_model, moe.experts),
     .sub = moe_rows},
    {.key = "mla", .type = CFG_K_OBJECT, .flags = CFG_KF_OMIT_ZERO, .offset = offsetof(cfg_model, mla.kv_lora_rank),
     .sub = mla_rows},
    {.key = "attention_window", .type = CFG_K_OBJECT, .flags = CFG_KF_OMIT_ZERO,
     .offset = offsetof(cfg_model, window.tokens), .sub = window_rows},
    ROW_INT("mtp_layers", cfg_model, mtp_layers, 0, CFG_MAX_MTP_LAYERS, 0, CFG_KF_OMIT_ZERO),
    ROW_END,
};

/* The platform's figures take the physical ranges of sim_limits.h (the
 * CFG_*_MIN / _MAX of "platform values"): host speeds and link bandwidths
 * stay normal doubles, an op's time flops / (peak * efficiency) and bytes /
 * (bandwidth * efficiency) finite, and a transfer's wire bytes (bytes /
 * network efficiency, a C long for SimGrid) below 2^63 for transfers up to
 * the largest HBM (docs/inputs.md).  Units are the keys'. */
static const cfg_key device_rows[] = {
    ROW_STR("name", cfg_platform, device_name, 0),
    ROW_DBL("peak_tflops", cfg_platform, peak_flops_per_s, CFG_PEAK_TFLOPS_MIN, CFG_PEAK_TFLOPS_MAX, 0, 1e12, REQ),
    ROW_DBL("fp8_peak_tflops", cfg_platform, fp8_peak_flops_per_s, 0, CFG_PEAK_TFLOPS_MAX, 0, 1e12, CFG_KF_OMIT_ZERO),
    ROW_DBL("mxfp8_peak_tflops", cfg_platform, mxfp8_peak_flops_per_s, 0, CFG_PEAK_TFLOPS_MAX, 0, 1e12,
            CFG_KF_OMIT_ZERO),
    ROW_DBL("hbm_GiB", cfg_platform, hbm_bytes, CFG_HBM_GIB_MIN, CFG_HBM_GIB_MAX, 0, SIM_GIB, REQ),
    ROW_DBL("hbm_reserved_GiB", cfg_platform, hbm_reserved_bytes, 0, CFG_HBM_GIB_MAX, 0, SIM_GIB, 0),
    ROW_DBL("hbm_headroom", cfg_platform, hbm_headroom, 0, CFG_HBM_HEADROOM_MAX, 0, 1, CFG_KF_OMIT_ZERO),
    ROW_DBL("hbm_TBps", cfg_platform, hbm_bytes_per_s, CFG_HBM_TBPS_MIN, CFG_HBM_TBPS_MAX, 0, 1e12, REQ),
    ROW_END,
};

static const cfg_key node_rows[] = {
    ROW_INT("devices", cfg_platform, devices_per_node, 1, MAXDIM, 0, REQ),
    ROW_END,
};

static const cfg_key supernode_rows[] = {
    ROW_INT("devices", cfg_platform, devices_per_supernode, 1, MAXDIM, 0, REQ),
    ROW_DBL("fabric_GBps", cfg_platform, fabric_bytes_per_s, CFG_LINK_GBPS_MIN, CFG_FABRIC_GBPS_MAX, 0, 1e9, REQ),
    ROW_DBL("latency_us", cfg_platform, fabric_latency_s, 0, CFG_LATENCY_US_MAX, 0, 1e-6, REQ),
    ROW_END,
};

/* Rows of one tier: offsets into cfg_tier. */
static const cfg_key tier_rows[] = {
    ROW_STR("name", cfg_tier, name, 0),
    ROW_INT("devices", cfg_tier, devices, 1, MAXDIM, 0, REQ),
    ROW_DBL("oversubscription", cfg_tier, oversubscription, 1, CFG_OVERSUB_MAX, 1, 1, 0),
    ROW_DBL("latency_us", cfg_tier, latency_s, 0, CFG_LATENCY_US_MAX, 0, 1e-6, 0),
    ROW_BOOL("rails", cfg_tier, rails, 0),
    ROW_END,
};

static const cfg_key network_rows[] = {
    ROW_DBL("nic_GBps", cfg_platform, nic_bytes_per_s, CFG_LINK_GBPS_MIN, CFG_NIC_GBPS_MAX, 0, 1e9, REQ),
    ROW_DBL("latency_us", cfg_platform, nic_latency_s, 0, CFG_LATENCY_US_MAX, 0, 1e-6, REQ),
    ROW_DBL("spine_latency_us", cfg_platform, spine_latency_s, 0, CFG_LATENCY_US_MAX, 0, 1e-6, 0),
    ROW_DBL("oversubscription", cfg_platform, oversubscription, 1, CFG_OVERSUB_MAX, 1, 1, 0),
    {.key = "tiers", .type = CFG_K_LIST, .flags = CFG_KF_OMIT_ZERO, .offset = offsetof(cfg_platform, tiers),
     .size = sizeof(cfg_tier), .max = CFG_MAX_TIERS, .count = offsetof(cfg_platform, ntiers), .sub = tier_rows},
    ROW_END,
};

static const cfg_key efficiency_rows[] = {
    {.key = "gemm", .type = CFG_K_CURVE, .flags = REQ, .offset = offsetof(cfg_platform, gemm_efficiency),
     .min = CFG_EFFICIENCY_MIN, .max = 1},
    {.key = "gemm_fp8", .type = CFG_K_CURVE, .flags = CFG_KF_OMIT_ZERO,
     .offset = offsetof(cfg_platform, gemm_fp8_efficiency), .min = CFG_EFFICIENCY_MIN, .max = 1},
    {.key = "grouped_gemm", .type = CFG_K_CURVE, .flags = CFG_KF_OMIT_ZERO,
     .offset = offsetof(cfg_platform, grouped_gemm_efficiency), .min = CFG_EFFICIENCY_MIN, .max = 1},
    ROW_DBL("attention", cfg_platform, attention_efficiency, CFG_EFFICIENCY_MIN, 1, 0, 1, REQ),
    ROW_DBL("memory", cfg_platform, memory_efficiency, CFG_EFFICIENCY_MIN, 1, 0, 1, REQ),
    ROW_DBL("network", cfg_platform, network_efficiency, CFG_EFFICIENCY_MIN, 1, 0, 1, REQ),
    ROW_DBL("kernel_overhead_us", cfg_platform, kernel_overhead_s, 0, CFG_LATENCY_US_MAX, 0, 1e-6, REQ),
    ROW_DBL("collective_step_us", cfg_platform, collective_step_s, 0, CFG_LATENCY_US_MAX, 0, 1e-6, REQ),
    ROW_DBL("overlap_compute_slowdown", cfg_platform, overlap_compute_slowdown, 1, CFG_OVERLAP_SLOWDOWN_MAX, 1, 1, 0),
    ROW_END,
};

/* The fit record `heptasim calibrate --out` writes (val_write_calibrated). */
static const cfg_key calibration_rows[] = {
    ROW_INT("cases", cfg_platform, calibration.cases, 1, CFG_MAX_CASES, 0, REQ),
    ROW_DBL("rms_error_before", cfg_platform, calibration.rms_error_before, 0, CFG_MAX_RMS_ERROR, 0, 1, 0),
    ROW_DBL("rms_error_after", cfg_platform, calibration.rms_error_after, 0, CFG_MAX_RMS_ERROR, 0, 1, 0),
    ROW_STR("fitted", cfg_platform, calibration.fitted, 0),
    ROW_DBL("held_out_error", cfg_platform, calibration.held_out_error, 0, CFG_MAX_RMS_ERROR, 0, 1, CFG_KF_OMIT_ZERO),
    ROW_STR("sources", cfg_platform, calibration.sources, 0),
    ROW_DBL("pair_error_before", cfg_platform, calibration.pair_error_before, 0, CFG_MAX_RMS_ERROR, 0, 1,
            CFG_KF_OMIT_ZERO),
    ROW_DBL("pair_error_after", cfg_platform, calibration.pair_error_after, 0, CFG_MAX_RMS_ERROR, 0, 1,
            CFG_KF_OMIT_ZERO),
    ROW_END,
};

/* The derivation record of an uncalibrated file (cfg_provenance). */
static const cfg_key provenance_rows[] = {
    ROW_STR("derived_from", cfg_platform, provenance.derived_from, REQ),
    ROW_STR("reason", cfg_platform, provenance.reason, 0),
    ROW_END,
};

static const cfg_key straggler_rows[] = {
    ROW_ENUM("kind", cfg_straggler, kind, cfg_straggler_kind_names, NULL, "device"),
    ROW_INT("index", cfg_straggler, index, 0, MAXDIM, 0, REQ),
    ROW_DBL("speed", cfg_straggler, speed, CFG_STRAGGLER_SPEED_MIN, 1, 0, 1, REQ),
    ROW_END,
};

/* Checkpoint storage: sync writes stop training, async ones only for the
 * snapshot to host memory. */
static const int checkpoint_mode_values[] = {CFG_CKPT_SYNC, CFG_CKPT_ASYNC};
static const cfg_key storage_rows[] = {
    /* no default on the row, so that a file without "storage" keeps 0
     * (and writes none); "storage" without it is sync (cfg_parse_platform) */
    {.key = "checkpoint", .type = CFG_K_ENUM, .flags = DRV, .offset = offsetof(cfg_platform, checkpoint_mode),
     .names = cfg_checkpoint_mode_names, .values = checkpoint_mode_values},
    ROW_DBL("node_GBps", cfg_platform, storage_node_bytes_per_s, 1e-3, CFG_NIC_GBPS_MAX, 0, 1e9, REQ),
    ROW_DBL("aggregate_GBps", cfg_platform, storage_aggregate_bytes_per_s, 1e-3, 1e9, 0, 1e9, REQ),
    ROW_DBL("snapshot_GBps", cfg_platform, snapshot_bytes_per_s, 0, CFG_NIC_GBPS_MAX, 0, 1e9, CFG_KF_OMIT_ZERO),
    ROW_END,
};

static const cfg_key platform_rows[] = {
    ROW_STR("name", cfg_platform, name, DRV),
    ROW_STR("description", cfg_platform, description, 0),
    ROW_INT("devices", cfg_platform, devices, 1, MAXDIM, 0, DRV),
    ROW_OBJ("device", cfg_platform, device_name, device_rows, REQ),
    ROW_OBJ("node", cfg_platform, devices_per_node, node_rows, REQ),
    ROW_OBJ("supernode", cfg_platform, devices_per_supernode, supernode_rows, REQ),
    ROW_OBJ("network", cfg_platform, nic_bytes_per_s, network_rows, REQ),
    ROW_OBJ("efficiency", cfg_platform, gemm_efficiency, efficiency_rows, REQ),
    {.key = "calibration", .type = CFG_K_OBJECT, .flags = CFG_KF_OMIT_ZERO,
     .offset = offsetof(cfg_platform, calibration.cases), .sub = calibration_rows},
    {.key = "stragglers", .type = CFG_K_LIST, .flags = CFG_KF_OMIT_ZERO, .offset = offsetof(cfg_platform, stragglers),
     .size = sizeof(cfg_straggler), .max = CFG_MAX_STRAGGLERS, .count = offsetof(cfg_platform, nstragglers),
     .sub = straggler_rows},
    ROW_OBJ("provenance", cfg_platform, provenance.derived_from, provenance_rows, CFG_KF_OMIT_ZERO),
    ROW_OBJ("storage", cfg_platform, checkpoint_mode, storage_rows, CFG_KF_OMIT_ZERO),
    ROW_END,
};

/* ------------------------------------------------------------- files */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The installed data directory: HEPTASIM_DATA_FROM_BIN taken from the
 * directory of the running executable, its leading "../" resolved (the
 * kernel's /proc/self/exe has no symbolic link or "..").  Writes "" when
 * the executable's path is unknown. */
static void installed_data_dir(char *out, size_t cap)
{
    char dir[CFG_PATH_LEN];
    out[0] = '\0';
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    if (n <= 0 || n >= (ssize_t)sizeof dir - 1) return;
    dir[n] = '\0';
    char *slash = strrchr(dir, '/');
    if (!slash) return;
    *slash = '\0'; /* the executable's directory; "" for the root */
    const char *rel = HEPTASIM_DATA_FROM_BIN;
    while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(dir, '/')) != NULL) {
        *slash = '\0';
        rel += 3;
    }
    int len = snprintf(out, cap, "%s/%s", dir, rel);
    if (len < 0 || (size_t)len >= cap) out[0] = '\0';
}

const char *cfg_data_dir(void)
{
    const char *env = getenv("HEPTASIM_DATA");
    if (env && env[0]) return env;
    static char installed[CFG_PATH_LEN];
    installed_data_dir(installed, sizeof installed);
    if (installed[0] && is_dir(installed)) return installed;
    if (is_dir(HEPTASIM_DATADIR) || !installed[0]) return HEPTASIM_DATADIR;
    return installed;
}

bool cfg_calibrated_preset(const cfg_platform *p, char *out, size_t cap)
{
    out[0] = '\0';
    char shipped[SIM_MAX_PATH + 64], calibrated[SIM_MAX_PATH + 64];
    snprintf(shipped, sizeof shipped, "%s/platforms/%s.json", cfg_data_dir(), p->name);
    snprintf(calibrated, sizeof calibrated, "%s/platforms/%s-calibrated.json", cfg_data_dir(), p->name);
    if (p->calibration.cases > 0 || strcmp(p->path, shipped) != 0 || !is_file(calibrated)) return false;
    snprintf(out, cap, "%s-calibrated", p->name);
    return true;
}

sim_rc cfg_data_check(sim_err *err)
{
    const char *env = getenv("HEPTASIM_DATA");
    if (env && env[0] && !is_dir(env))
        return sim_fail(err, SIM_EINVAL,
                        "heptasim: HEPTASIM_DATA '%s' is not a directory (unset it, or set it to a directory "
                        "holding models/, platforms/ and strategies/)",
                        env);
    return SIM_OK;
}

static const char *kind_singular(const char *kind)
{
    if (strcmp(kind, "models") == 0) return "model";
    if (strcmp(kind, "platforms") == 0) return "platform";
    if (strcmp(kind, "strategies") == 0) return "strategy";
    return kind;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* What a name that is not shipped may have meant, among the names of
 * kind's folder (the .json files of models/ ...): " (did you mean 'x'?)", with the
 * closest name (cfg_suggest), else with up to three names that start with
 * word or that word starts with ("qwen3-235b": "qwen3-235b-a22b"); "" when
 * none is close. */
static void name_hint(const char *kind, const char *word, char *out, size_t cap)
{
    enum { MAXNAMES = 256, NAMELEN = 96 };
    static char names[MAXNAMES][NAMELEN];
    const char *ptrs[MAXNAMES];
    int n = 0;
    out[0] = '\0';
    char dir[SIM_MAX_PATH + 64];
    snprintf(dir, sizeof dir, "%s/%s", cfg_data_dir(), kind);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) && n < MAXNAMES;) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || len - 5 >= NAMELEN || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        memcpy(names[n], e->d_name, len - 5);
        names[n][len - 5] = '\0';
        ptrs[n] = names[n];
        n++;
    }
    if (d) closedir(d);
    qsort(ptrs, (size_t)n, sizeof *ptrs, cmp_names); /* readdir's order is the file system's */
    const char *close = cfg_suggest(word, ptrs, n);
    if (close) {
        snprintf(out, cap, " (did you mean '%s'?)", close);
        return;
    }
    char list[3 * NAMELEN + 16] = "";
    int found = 0;
    size_t wlen = strlen(word);
    for (int i = 0; i < n && found < 3 && wlen >= 3; i++) {
        size_t len = strlen(ptrs[i]);
        if (strncmp(ptrs[i], word, wlen < len ? wlen : len) != 0) continue;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s'%s'", found ? " or " : "", ptrs[i]);
        found++;
    }
    if (found) snprintf(out, cap, " (did you mean %s?)", list);
}

sim_rc cfg_resolve(const char *kind, const char *name_or_path, char *out, int cap, sim_err *err)
{
    const char *what = kind_singular(kind);
    if (!name_or_path || !name_or_path[0]) return sim_fail(err, SIM_EINVAL, "heptasim: empty %s name", what);
    if (cap <= 0) return sim_fail(err, SIM_EINVAL, "heptasim: no room for the %s path", what);
    size_t room = (size_t)cap - 1 < SIM_MAX_PATH ? (size_t)cap - 1 : SIM_MAX_PATH;
    size_t n = strlen(name_or_path);
    if (n > room)
        return sim_fail(err, SIM_EINVAL,
                        "heptasim: %s name of %zu characters is longer than the %zu heptasim takes (use a shorter "
                        "path, or a symbolic link to the file)",
                        what, n, room);

    char cand[SIM_MAX_PATH * 2 + 64];
    struct stat st;
    int found = stat(name_or_path, &st) == 0;
    int missing = !found && (errno == ENOENT || errno == ENOTDIR) && lstat(name_or_path, &st) != 0;
    if (found && S_ISDIR(st.st_mode)) {
        /* a directory holding a HuggingFace config.json */
        snprintf(cand, sizeof cand, "%s/config.json", name_or_path);
        if (!is_file(cand))
            return sim_fail(err, SIM_EINVAL, "heptasim: %s '%s' is a directory without config.json (give a file)",
                            what, name_or_path);
    } else if (!missing) {
        /* Something is there (a file, a FIFO, a device, a loop of symbolic
         * links, a dangling one, a directory we may not search): the
         * reader says precisely what is wrong with it. */
        snprintf(cand, sizeof cand, "%s", name_or_path);
    } else if (strchr(name_or_path, '/')) {
        return sim_fail(err, SIM_EINVAL, "heptasim: %s '%s' not found (tried '%s')", what, name_or_path,
                        name_or_path);
    } else {
        bool has_ext = n > 5 && strcmp(name_or_path + n - 5, ".json") == 0;
        snprintf(cand, sizeof cand, "%s/%s/%s%s", cfg_data_dir(), kind, name_or_path, has_ext ? "" : ".json");
        if (!is_file(cand)) {
            char hint[400];
            name_hint(kind, name_or_path, hint, sizeof hint);
            return sim_fail(err, SIM_EINVAL, "heptasim: %s '%s' not found (tried '%s', '%s')%s", what, name_or_path,
                            name_or_path, cand, hint);
        }
    }
    if (strlen(cand) > room)
        return sim_fail(err, SIM_EINVAL,
                        "heptasim: %s path of %zu characters is longer than the %zu heptasim takes (use a shorter "
                        "path, or set HEPTASIM_DATA to a shorter directory)",
                        what, strlen(cand), room);
    sim_strlcpy(out, cand, (size_t)cap);
    return SIM_OK;
}

/* Read a whole config file into a NUL-terminated string the caller frees:
 * at most CFG_MAX_FILE_BYTES of UTF-8 text without NUL bytes.  Unreadable
 * files are bad input (SIM_EINVAL), as the exit status 2 says. */
static sim_rc read_file(const char *path, char **out, sim_err *err)
{
    return sim_read_text(path, CFG_MAX_FILE_BYTES, "a config file", out, err);
}

/* Parse JSON text; on failure say where, with a short quote of the text. */
static cJSON *parse_text(const char *text, const char *origin, sim_err *err)
{
    if (!text) {
        sim_fail(err, SIM_EINVAL, "%s: no JSON text", origin);
        return NULL;
    }
    int line;
    const char *why;
    size_t len = strlen(text), bad = sim_text_check(text, len, &line, &why);
    if (bad < len) {
        sim_fail(err, SIM_EINVAL, "%s: line %d: %s at byte %zu (JSON input is UTF-8 text only)", origin, line, why,
                 bad + 1);
        return NULL;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (root) return root;
    if (!end || end < text) end = text;
    line = 1;
    for (const char *p = text; p < end && *p; p++)
        if (*p == '\n') line++;
    while (*end == ' ' || *end == '\t') end++;
    if (*end == '\0' || *end == '\n' || *end == '\r') {
        sim_fail(err, SIM_EINVAL, "%s: malformed JSON near line %d: unexpected end of %s", origin, line,
                 *end ? "line" : "input");
        return NULL;
    }
    char quote[32];
    size_t n = 0;
    while (end[n] && end[n] != '\n' && end[n] != '\r' && n < 24) n++;
    memcpy(quote, end, n);
    quote[n] = '\0';
    sim_fail(err, SIM_EINVAL, "%s: malformed JSON near line %d: at '%s'", origin, line, quote);
    return NULL;
}

/* The default name of an object: the file stem ("models/x.json" -> "x");
 * for a HuggingFace ".../llama-3-8b/config.json", the directory name. */
static void name_from_origin(const char *origin, char *out, size_t cap)
{
    const char *base = strrchr(origin, '/');
    base = base ? base + 1 : origin;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0) len -= 5;
    if (len == 6 && strncmp(base, "config", 6) == 0 && base > origin) {
        const char *dir_end = base - 1; /* the '/' */
        const char *dir = dir_end;
        while (dir > origin && dir[-1] != '/') dir--;
        if (dir_end > dir && !(dir_end - dir == 1 && dir[0] == '.')) {
            base = dir;
            len = (size_t)(dir_end - dir);
        }
    }
    if (len >= cap) len = cap - 1;
    memcpy(out, base, len);
    out[len] = '\0';
    sim_utf8_scrub(out); /* a file name may hold any byte; the name goes into JSON */
}

void cfg_default_name(const char *origin, char *out, size_t cap)
{
    name_from_origin(origin, out, cap);
}

/* ----------------------------------------------------------------- model */

/* A model dtype of "fp8" is refused by the schema (the weights and
 * activations are bf16 or fp16); the message then says where FP8 is. */
static void fp8_dtype_hint(const cJSON *root, sim_err *err)
{
    const cJSON *dt = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "dtype") : NULL;
    if (!err || !cJSON_IsString(dt) || !strstr(dt->valuestring, "fp8") || !strstr(err->msg, ".dtype")) return;
    size_t used = strlen(err->msg);
    snprintf(err->msg + used, sizeof err->msg - used, "; FP8 GEMMs are the strategy key fp8 (--set fp8=true)");
}

/* Defaults that depend on other keys; messages name the keys as k does. */
static sim_rc model_derive(cfg_model *m, const char *origin, const cfg_model_names *k, sim_err *err)
{
    if (!m->name[0]) name_from_origin(origin, m->name, sizeof m->name);
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->head_dim == 0) {
        if (m->hidden % m->heads != 0)
            return sim_fail(err, SIM_EINVAL, "%s: %s: %d does not divide %s=%d (use a divisor of %d, or give %s)",
                            origin, k->heads, m->heads, k->hidden + 1, m->hidden, m->hidden, k->head_dim + 1);
        m->head_dim = m->hidden / m->heads;
        if (m->head_dim > CFG_MAX_HEAD_DIM)
            return sim_fail(err, SIM_EINVAL,
                            "%s: %s: %s/%s = %d/%d = %d is more than the largest %s %d (use more heads, or give %s)",
                            origin, k->heads, k->hidden + 1, k->heads + 1, m->hidden, m->heads, m->head_dim,
                            k->head_dim + 1, CFG_MAX_HEAD_DIM, k->head_dim + 1);
    }
    if (m->moe.experts == 0) {
        memset(&m->moe, 0, sizeof m->moe);
        m->moe.layer_freq = 1;
    } else {
        if (m->moe.ffn_hidden == 0) m->moe.ffn_hidden = m->ffn_hidden; /* experts as wide as the dense MLP */
        if (m->moe.shared_experts > 0 && m->moe.shared_ffn_hidden == 0) m->moe.shared_ffn_hidden = m->moe.ffn_hidden;
    }
    return SIM_OK;
}

sim_rc cfg_parse_model(const char *json, const char *origin, const cfg_overrides *ov, cfg_model *out, sim_err *err)
{
    cJSON *root = parse_text(json, origin, err);
    if (!root) return cfg_one_line(SIM_EINVAL, err);
    cfg_reader r;
    cfg_reader_init(&r, origin, err);
    sim_rc rc = SIM_OK;
    cfg_model_names names = cfg_native_names;
    bool hf = cJSON_IsObject(root) && cfg_hf_detect(root);
    if (hf) {
        cJSON *native = NULL;
        rc = cfg_hf_convert(&r, root, &native, &names);
        cJSON_Delete(root);
        root = native;
    }
    cfg_model m;
    memset(&m, 0, sizeof m);
    if (!rc && cJSON_IsObject(root)) rc = cfg_overrides_apply(&r, ov, "model", root);
    if (!rc) rc = cfg_schema_read(&r, model_rows, root, &m);
    if (rc) fp8_dtype_hint(root, err);
    cJSON_Delete(root);
    cfg_reader_free(&r);
    if (!rc) rc = model_derive(&m, origin, &names, err);
    sim_strlcpy(m.path, origin, sizeof m.path);
    if (!rc) rc = cfg_model_sanity_as(&m, &names, err);
    m.seq_len_assumed = hf && cfg_overrides_count(ov, "model", NULL) == cfg_overrides_count(ov, "model", "seq_len");
    if (!rc) *out = m;
    return cfg_one_line(rc, err);
}

sim_rc cfg_load_model(const char *name_or_path, const cfg_overrides *ov, cfg_model *out, sim_err *err)
{
    char path[CFG_PATH_LEN];
    char *text = NULL;
    sim_rc rc = cfg_resolve("models", name_or_path, path, sizeof path, err);
    if (!rc) rc = read_file(path, &text, err);
    if (!rc) rc = cfg_parse_model(text, path, ov, out, err);
    free(text);
    return cfg_one_line(rc, err);
}

/* -------------------------------------------------------------- platform */

/* {========================================================= bases */

/* The files of a chain of bases, the platform's own first, with their
 * device and inode when known (a cycle is found by file, whatever the
 * spelling of the path). */
typedef struct base_chain {
    int n;
    char path[CFG_MAX_BASES + 1][CFG_PATH_LEN];
    dev_t dev[CFG_MAX_BASES + 1];
    ino_t ino[CFG_MAX_BASES + 1];
    bool known[CFG_MAX_BASES + 1];
} base_chain;

static void chain_add(base_chain *ch, const char *path)
{
    struct stat st;
    int k = ch->n++;
    sim_strlcpy(ch->path[k], path, sizeof ch->path[k]);
    ch->known[k] = stat(path, &st) == 0;
    ch->dev[k] = ch->known[k] ? st.st_dev : 0;
    ch->ino[k] = ch->known[k] ? st.st_ino : 0;
}

/* The link of the chain that is file `path`, or -1. */
static int chain_find(const base_chain *ch, const char *path)
{
    struct stat st;
    bool known = stat(path, &st) == 0;
    for (int k = 0; k < ch->n; k++)
        if (known ? ch->known[k] && ch->dev[k] == st.st_dev && ch->ino[k] == st.st_ino : strcmp(ch->path[k], path) == 0)
            return k;
    return -1;
}

/* Keys a platform file never inherits from its base. */
static bool own_key(const char *key)
{
    return strcmp(key, "name") == 0 || strcmp(key, "description") == 0 || strcmp(key, "calibration") == 0 ||
           strcmp(key, "provenance") == 0;
}

/* The platform file that value v of key `key` (".base",
 * ".provenance.derived_from") of file `from` names: a shipped name, or a
 * path relative to from (config.h). */
static sim_rc named_platform_file(const char *from, const char *key, const char *v, char *out, size_t cap,
                                  sim_err *err)
{
    size_t n = strlen(v);
    bool is_path = strchr(v, '/') || (n > 5 && strcmp(v + n - 5, ".json") == 0);
    const char *slash = strrchr(from, '/');
    char cand[SIM_MAX_PATH * 2 + 64];
    if (!is_path)
        snprintf(cand, sizeof cand, "%s/platforms/%.*s.json", cfg_data_dir(), SIM_MAX_PATH, v);
    else if (v[0] == '/' || !slash)
        snprintf(cand, sizeof cand, "%.*s", SIM_MAX_PATH, v);
    else
        snprintf(cand, sizeof cand, "%.*s/%.*s", (int)(slash - from), from, SIM_MAX_PATH, v);
    if (strlen(cand) >= cap || strlen(cand) > SIM_MAX_PATH)
        return sim_fail(err, SIM_EINVAL, "%s: %s: the path of '%.60s' is longer than the %d characters heptasim takes "
                        "(use a shorter path)", from, key, v, SIM_MAX_PATH);
    if (!is_file(cand))
        return sim_fail(err, SIM_EINVAL,
                        "%s: %s: platform '%.60s' not found (tried '%.200s'; name a shipped platform, or give a "
                        "path relative to this file)",
                        from, key, v, cand);
    sim_strlcpy(out, cand, cap);
    return SIM_OK;
}

/* The file the "base" value `node` of file `from` names. */
static sim_rc base_file(const char *from, const cJSON *node, char *out, size_t cap, sim_err *err)
{
    char got[64];
    if (!cJSON_IsString(node) || !node->valuestring[0]) {
        cfg_json_repr(node, got, sizeof got);
        return sim_fail(err, SIM_EINVAL,
                        "%s: .base: expected the name of a shipped platform or a path relative to this file, got %s",
                        from, got);
    }
    return named_platform_file(from, ".base", node->valuestring, out, cap, err);
}

/* Lays the base object src (of file src_origin) under dst: a key of src
 * that dst lacks moves to dst, tagged with src's file for messages (r may
 * be NULL); where both hold an object, the two merge so one level down;
 * any other value of dst stays whole.  At the top, the file's own keys
 * (own_key) are not taken. */
static void merge_under(cfg_reader *r, cJSON *dst, cJSON *src, const char *src_origin, bool top)
{
    cJSON *b = src->child;
    while (b) {
        cJSON *next = b->next;
        if (b->string && !(top && own_key(b->string))) {
            cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, b->string);
            if (!d) {
                cJSON_DetachItemViaPointer(src, b);
                cJSON_AddItemToObject(dst, b->string, b);
                if (r) cfg_reader_tag(r, b, src_origin, NULL);
            } else if (cJSON_IsObject(d) && cJSON_IsObject(b)) {
                merge_under(r, d, b, src_origin, false);
            }
        }
        b = next;
    }
}

/* Follows the "base" keys from root, the object of file `origin`: each
 * base is read and laid under root, then its own base followed, so that
 * root ends with every inherited key and without "base".  ch gets the
 * chain's files.  r (may be NULL) tags the inherited nodes. */
static sim_rc resolve_bases(cfg_reader *r, cJSON *root, const char *origin, base_chain *ch, sim_err *err)
{
    ch->n = 0;
    chain_add(ch, origin);
    cJSON *link = cJSON_DetachItemFromObjectCaseSensitive(root, "base");
    sim_rc rc = SIM_OK;
    while (link && rc == SIM_OK) {
        const char *from = ch->path[ch->n - 1];
        char path[CFG_PATH_LEN];
        char *text = NULL;
        cJSON *base = NULL;
        rc = base_file(from, link, path, sizeof path, err);
        int k = rc ? -1 : chain_find(ch, path);
        if (rc == SIM_OK && k >= 0)
            rc = sim_fail(err, SIM_EINVAL,
                          "%s: .base: '%s' leads back to %s, which this chain of bases holds (a cycle: remove one "
                          "of the bases)",
                          from, link->valuestring, ch->path[k]);
        if (rc == SIM_OK && ch->n > CFG_MAX_BASES)
            rc = sim_fail(err, SIM_EINVAL,
                          "%s: .base: more than %d bases in one chain, from %s (name a base nearer the top)", from,
                          CFG_MAX_BASES, ch->path[0]);
        if (rc == SIM_OK) rc = read_file(path, &text, err);
        if (rc == SIM_OK && !(base = parse_text(text, path, err))) rc = SIM_EINVAL;
        if (rc == SIM_OK && !cJSON_IsObject(base))
            rc = sim_fail(err, SIM_EINVAL, "%s: expected a JSON object at the top level (a platform to inherit from)",
                          path);
        free(text);
        cJSON_Delete(link);
        link = NULL;
        if (rc == SIM_OK) {
            chain_add(ch, path);
            link = cJSON_DetachItemFromObjectCaseSensitive(base, "base");
            merge_under(r, root, base, ch->path[ch->n - 1], true);
        }
        cJSON_Delete(base);
    }
    cJSON_Delete(link);
    return rc;
}

/* The tree of platform file name_or_path (its path in path) with its
 * bases laid under it, into *out (NULL on failure), the chain's files in
 * ch. */
static sim_rc platform_file_tree(const char *name_or_path, char path[CFG_PATH_LEN], base_chain *ch, cJSON **out,
                                 sim_err *err)
{
    char *text = NULL;
    cJSON *root = NULL;
    sim_rc rc = cfg_resolve("platforms", name_or_path, path, CFG_PATH_LEN, err);
    if (rc == SIM_OK) rc = read_file(path, &text, err);
    if (rc == SIM_OK && !(root = parse_text(text, path, err))) rc = SIM_EINVAL;
    free(text);
    if (rc == SIM_OK && cJSON_IsObject(root)) rc = resolve_bases(NULL, root, path, ch, err);
    if (rc != SIM_OK) {
        cJSON_Delete(root);
        root = NULL;
    }
    *out = root;
    return rc;
}

sim_rc cfg_platform_chain(const char *name_or_path, char (*out)[CFG_PATH_LEN], int cap, int *n, sim_err *err)
{
    char path[CFG_PATH_LEN];
    cJSON *root;
    *n = 0;
    base_chain *ch = sim_xcalloc(1, sizeof *ch);
    sim_rc rc = platform_file_tree(name_or_path, path, ch, &root, err);
    for (int k = 0; rc == SIM_OK && k < ch->n && k < cap; k++) sim_strlcpy(out[k], ch->path[k], sizeof out[k]);
    if (rc == SIM_OK) *n = ch->n < cap ? ch->n : cap;
    free(ch);
    cJSON_Delete(root);
    return cfg_one_line(rc, err);
}

void *cfg_platform_file_json(const char *name_or_path, char path[CFG_PATH_LEN], sim_err *err)
{
    cJSON *root;
    base_chain *ch = sim_xcalloc(1, sizeof *ch);
    cfg_one_line(platform_file_tree(name_or_path, path, ch, &root, err), err);
    free(ch);
    return root;
}

/* Removes from over every key whose value equals under's (numbers
 * exactly); objects are compared key by key.  Returns true when over is
 * left empty. */
static bool drop_same(cJSON *over, const cJSON *under)
{
    cJSON *c = over->child;
    while (c) {
        cJSON *next = c->next;
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(under, c->string);
        bool same = false;
        if (u && cJSON_IsObject(c) && cJSON_IsObject(u))
            same = drop_same(c, u);
        else if (u && cJSON_IsNumber(c) && cJSON_IsNumber(u))
            same = c->valuedouble == u->valuedouble;
        else if (u && !cJSON_IsNumber(c) && !cJSON_IsArray(c))
            same = cJSON_Compare(c, u, true);
        else if (u && cJSON_IsArray(c) && cJSON_IsArray(u)) {
            char *a = sim_json_print(c, false), *b = sim_json_print(u, false);
            same = a && b && strcmp(a, b) == 0; /* numbers printed so that they read back the same */
            cJSON_free(a);
            cJSON_free(b);
        }
        if (same) cJSON_Delete(cJSON_DetachItemViaPointer(over, c));
        c = next;
    }
    return over->child == NULL;
}

void *cfg_platform_over(const cfg_platform *p, const cfg_platform *base)
{
    cJSON *over = cfg_platform_to_json(p), *under = cfg_platform_to_json(base);
    for (const cfg_key *k = platform_rows; k->key; k++)
        if (own_key(k->key)) cJSON_DeleteItemFromObjectCaseSensitive(over, k->key);
    drop_same(over, under);
    cJSON_Delete(under);
    return over;
}

bool cfg_same_efficiencies(const cfg_platform *a, const cfg_platform *b)
{
    cJSON *x = cfg_schema_write(efficiency_rows, a), *y = cfg_schema_write(efficiency_rows, b);
    bool same = x && y && cJSON_Compare(x, y, true);
    cJSON_Delete(x);
    cJSON_Delete(y);
    return same;
}

/* Whether an item of ov sets a key of the platform's efficiency object. */
static bool sets_efficiency(const cfg_overrides *ov)
{
    static const char prefix[] = "platform.efficiency";
    for (int i = 0; ov && i < ov->n; i++)
        if (strncmp(ov->items[i], prefix, sizeof prefix - 1) == 0 &&
            (ov->items[i][sizeof prefix - 1] == '.' || ov->items[i][sizeof prefix - 1] == '='))
            return true;
    return false;
}

/* The provenance record of p, read from file origin (ov: the overrides
 * applied): derived_from must name a calibrated file whose efficiencies the
 * file keeps, through .base or written out (so a resolved platform written
 * as JSON loads again); an override may change them (the band says so),
 * and a calibrated file derives from nothing. */
static sim_rc check_provenance(cfg_platform *p, const char *origin, const cfg_overrides *ov, sim_err *err)
{
    cfg_provenance *pv = &p->provenance;
    if (!pv->derived_from[0]) return SIM_OK;
    if (p->calibration.cases > 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .provenance: a calibrated file (with .calibration) is its own source; remove .provenance",
                        origin);
    char path[CFG_PATH_LEN];
    sim_rc rc = named_platform_file(origin, ".provenance.derived_from", pv->derived_from, path, sizeof path, err);
    if (rc) return rc;
    cfg_platform rel;
    rc = cfg_load_platform(path, NULL, 0, &rel, err);
    if (rc) return rc;
    if (rel.calibration.cases == 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .provenance.derived_from: '%.60s' is not calibrated (it has no .calibration record; name "
                        "a calibrated file, or remove .provenance)",
                        origin, pv->derived_from);
    if (!sets_efficiency(ov) && !cfg_same_efficiencies(p, &rel))
        return sim_fail(err, SIM_EINVAL,
                        "%s: .provenance.derived_from: the file's efficiencies differ from those of '%.60s' (a derived "
                        "file keeps its relative's: remove its efficiency keys, or .provenance)",
                        origin, pv->derived_from);
    sim_strlcpy(pv->derived_path, path, sizeof pv->derived_path);
    return SIM_OK;
}

/* }========================================================= bases */

void cfg_platform_drop_band_records(cfg_platform *p)
{
    cfg_calibration *k = &p->calibration;
    k->held_out_error = k->pair_error_before = k->pair_error_after = 0;
    k->sources[0] = '\0';
    memset(&p->provenance, 0, sizeof p->provenance);
}

sim_rc cfg_parse_platform(const char *json, const char *origin, const cfg_overrides *ov, int devices_override,
                          cfg_platform *out, sim_err *err)
{
    cJSON *root = parse_text(json, origin, err);
    if (!root) return cfg_one_line(SIM_EINVAL, err);
    cfg_reader r;
    cfg_reader_init(&r, origin, err);
    cfg_platform p;
    memset(&p, 0, sizeof p);
    sim_rc rc = SIM_OK;
    base_chain *ch = sim_xcalloc(1, sizeof *ch);
    if (cJSON_IsObject(root)) rc = resolve_bases(&r, root, origin, ch, err);
    if (!rc && cJSON_IsObject(root)) rc = cfg_overrides_apply(&r, ov, "platform", root);
    if (!rc) rc = cfg_schema_read(&r, platform_rows, root, &p);
    if (!rc) rc = check_provenance(&p, origin, ov, err);
    if (!rc && p.storage_node_bytes_per_s > 0 && p.checkpoint_mode == 0) p.checkpoint_mode = CFG_CKPT_SYNC;
    free(ch);
    cJSON_Delete(root);
    cfg_reader_free(&r);
    if (rc) return cfg_one_line(rc, err);
    if (devices_override > CFG_MAX_DEVICES)
        return cfg_one_line(sim_fail(err, SIM_EINVAL,
                                     "%s: .devices: --devices %d is more than the limit of %d devices (use fewer)",
                                     origin, devices_override, CFG_MAX_DEVICES),
                            err);
    if (devices_override > 0) p.devices = devices_override;
    if (p.devices == 0)
        return cfg_one_line(
            sim_fail(err, SIM_EINVAL, "%s: .devices: required key is missing (or give --devices)", origin), err);
    if (!p.name[0]) name_from_origin(origin, p.name, sizeof p.name);
    sim_strlcpy(p.path, origin, sizeof p.path);
    rc = cfg_platform_sanity(&p, err);
    if (!rc) *out = p;
    return cfg_one_line(rc, err);
}

sim_rc cfg_load_platform(const char *name_or_path, const cfg_overrides *ov, int devices_override,
                         cfg_platform *out, sim_err *err)
{
    char path[CFG_PATH_LEN];
    char *text = NULL;
    sim_rc rc = cfg_resolve("platforms", name_or_path, path, sizeof path, err);
    if (!rc) rc = read_file(path, &text, err);
    if (!rc) rc = cfg_parse_platform(text, path, ov, devices_override, out, err);
    free(text);
    return cfg_one_line(rc, err);
}

/* -------------------------------------------------------------- strategy */

sim_rc cfg_parse_strategy(const char *json, const char *origin, const cfg_overrides *ov, cfg_strategy *out,
                          sim_err *err)
{
    cJSON *root = parse_text(json, origin, err);
    if (!root) return cfg_one_line(SIM_EINVAL, err);
    cfg_reader r;
    cfg_reader_init(&r, origin, err);
    cfg_strategy s;
    memset(&s, 0, sizeof s);
    sim_rc rc = SIM_OK;
    if (cJSON_IsObject(root)) rc = cfg_overrides_apply(&r, ov, "strategy", root);
    if (!rc) rc = cfg_schema_read(&r, cfg_strategy_keys, root, &s);
    cJSON_Delete(root);
    cfg_reader_free(&r);
    if (rc) return cfg_one_line(rc, err);
    if (!s.name[0]) name_from_origin(origin, s.name, sizeof s.name);
    /* An overridden strategy is not the file's any more: its name says so
     * (unless --set name=... names it). */
    int changed = cfg_overrides_count(ov, "strategy", "name");
    if (changed > 0 && cfg_overrides_count(ov, "strategy", NULL) == changed) {
        char named[CFG_NAME_LEN + 32];
        snprintf(named, sizeof named, "%.40s + %d override%s", s.name, changed, changed == 1 ? "" : "s");
        sim_strlcpy(s.name, named, sizeof s.name);
        memset(s.description, 0, sizeof s.description); /* the file's words describe the file's strategy */
    }
    sim_strlcpy(s.path, origin, sizeof s.path);
    *out = s;
    return SIM_OK;
}

sim_rc cfg_load_strategy(const char *name_or_path, const cfg_overrides *ov, cfg_strategy *out, sim_err *err)
{
    char path[CFG_PATH_LEN];
    char *text = NULL;
    sim_rc rc = cfg_resolve("strategies", name_or_path, path, sizeof path, err);
    if (!rc) rc = read_file(path, &text, err);
    if (!rc) rc = cfg_parse_strategy(text, path, ov, out, err);
    free(text);
    return cfg_one_line(rc, err);
}

/* ------------------------------------------------------------ to JSON */

void *cfg_model_to_json(const cfg_model *m)
{
    return cfg_schema_write(model_rows, m);
}

void *cfg_platform_to_json(const cfg_platform *p)
{
    return cfg_schema_write(platform_rows, p);
}

void *cfg_strategy_to_json(const cfg_strategy *s)
{
    return cfg_schema_write(cfg_strategy_keys, s);
}

/* ---------------------------------------------- rules within one model */

const cfg_model_names cfg_native_names = {
    ".layers", ".hidden", ".heads", ".kv_heads", ".head_dim",
    ".moe.experts", ".moe.top_k", ".moe.first_dense_layers", ".moe.shared_experts", ".moe.shared_ffn_hidden",
    ".moe.groups", ".moe.group_top_k",
};

/* Group-limited routing (Megatron's --moe-router-num-groups and
 * --moe-router-group-topk): the experts fall into equal groups, and a
 * token's top_k experts come from its group_top_k best groups. */
static sim_rc check_router_groups(const cfg_model *m, const cfg_model_names *k, sim_err *err)
{
    const char *f = cfg_origin(m->path, "model");
    int g = m->moe.groups, gk = m->moe.group_top_k;
    if (g <= 1) {
        if (gk > 1)
            return sim_fail(err, SIM_EINVAL, "%s: %s: %d needs router groups (give %s, or leave %s out)", f,
                            k->group_top_k, gk, k->groups + 1, k->group_top_k + 1);
        return SIM_OK;
    }
    if (m->moe.experts % g != 0)
        return sim_fail(err, SIM_EINVAL, "%s: %s: %d does not divide %s=%d (use a divisor of %d)", f, k->groups, g,
                        k->experts + 1, m->moe.experts, m->moe.experts);
    if (gk > g)
        return sim_fail(err, SIM_EINVAL, "%s: %s: %d is more than %s=%d (use at most %d)", f, k->group_top_k, gk,
                        k->groups + 1, g, g);
    if (gk > 0 && (long long)gk * (m->moe.experts / g) < m->moe.top_k)
        return sim_fail(err, SIM_EINVAL, "%s: %s: %d groups of %d experts hold fewer than %s=%d (choose more groups)",
                        f, k->group_top_k, gk, m->moe.experts / g, k->top_k + 1, m->moe.top_k);
    return SIM_OK;
}

sim_rc cfg_model_sanity_as(const cfg_model *m, const cfg_model_names *k, sim_err *err)
{
    const char *f = cfg_origin(m->path, "model");
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
        return sim_fail(err, SIM_EINVAL, "%s: %s: %d does not divide %s=%d (use a divisor of %d)", f, k->kv_heads,
                        m->kv_heads, k->heads + 1, m->heads, m->heads);
    if (cfg_is_mla(m)) {
        if (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim < 1)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .mla.qk_nope_head_dim: qk_nope_head_dim + qk_rope_head_dim is 0 (give the query and "
                            "key heads a width of at least 1)",
                            f);
        if (m->kv_heads != m->heads)
            return sim_fail(err, SIM_EINVAL,
                            "%s: %s: %d, but multi-head latent attention has one key/value head per query head (set "
                            "%s to %s=%d or leave it out)",
                            f, k->kv_heads, m->kv_heads, k->kv_heads + 1, k->heads + 1, m->heads);
    }
    if (m->moe.experts > 0) {
        if (m->moe.top_k > m->moe.experts)
            return sim_fail(err, SIM_EINVAL, "%s: %s: %d is more than %s=%d (use at most %d)", f, k->top_k,
                            m->moe.top_k, k->experts + 1, m->moe.experts, m->moe.experts);
        if (m->moe.first_dense_layers >= m->layers)
            return sim_fail(err, SIM_EINVAL, "%s: %s: %d leaves no MoE layer among %s=%d (use less than %d)", f,
                            k->first_dense_layers, m->moe.first_dense_layers, k->layers + 1, m->layers, m->layers);
        if (m->moe.shared_experts > 0 && m->moe.shared_ffn_hidden <= 0)
            return sim_fail(err, SIM_EINVAL, "%s: %s: must be >= 1 when %s=%d", f, k->shared_ffn_hidden,
                            k->shared_experts + 1, m->moe.shared_experts);
        return check_router_groups(m, k, err);
    }
    return SIM_OK;
}

sim_rc cfg_model_sanity(const cfg_model *m, sim_err *err)
{
    return cfg_model_sanity_as(m, &cfg_native_names, err);
}

/* ------------------------------------------- rules within one platform */

sim_rc cfg_platform_sanity(const cfg_platform *p, sim_err *err)
{
    const char *f = cfg_origin(p->path, "platform");
    if (p->devices_per_supernode % p->devices_per_node != 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .supernode.devices: %d is not a multiple of node.devices=%d (use a multiple of %d)", f,
                        p->devices_per_supernode, p->devices_per_node, p->devices_per_node);
    if (p->hbm_reserved_bytes >= p->hbm_bytes)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .device.hbm_reserved_GiB: %g is not less than hbm_GiB=%g (reserve less than the capacity)",
                        f, p->hbm_reserved_bytes / SIM_GIB, p->hbm_bytes / SIM_GIB);
    for (int t = 0; t < p->ntiers; t++) {
        const cfg_tier *tr = &p->tiers[t];
        int below = t > 0 ? p->tiers[t - 1].devices : p->devices_per_supernode;
        if (tr->devices % below != 0 || tr->devices <= (t > 0 ? below : 0))
            return sim_fail(err, SIM_EINVAL,
                            "%s: .network.tiers[%d].devices: %d is not a multiple of %s=%d (a tier's domain holds "
                            "whole %s: use a multiple of %d%s)",
                            f, t, tr->devices, t > 0 ? "the tier below's devices" : "supernode.devices", below,
                            t > 0 ? "domains of the tier below" : "supernodes", below, t > 0 ? " above it" : "");
        if (tr->rails && t > 0)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .network.tiers[%d].rails: only the first tier can be rail-optimised (remove it)", f, t);
    }
    for (int i = 0; i < p->nstragglers; i++) {
        const cfg_straggler *s = &p->stragglers[i];
        int nodes = (p->devices + p->devices_per_node - 1) / p->devices_per_node;
        int limit = s->kind == CFG_STRAGGLER_NODE ? nodes : p->devices;
        if (s->index >= limit)
            return sim_fail(err, SIM_EINVAL,
                            "%s: .stragglers[%d].index: %d is not a %s of the platform's %d (use 0 to %d)", f, i,
                            s->index, s->kind == CFG_STRAGGLER_NODE ? "node" : "device", limit, limit - 1);
    }
    if (p->ntiers > 0 && p->tiers[0].rails && p->oversubscription > 1)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .network.oversubscription: a rail-optimised first tier takes each node's NICs one by one, "
                        "with no supernode uplink to oversubscribe (give the leaf's in tiers[0].oversubscription)",
                        f);
    double fp8 = p->fp8_peak_flops_per_s / 1e12;
    if (fp8 > 0 && fp8 < CFG_PEAK_TFLOPS_MIN)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .device.fp8_peak_tflops: %g is below the smallest peak %g (give 0 for a device without FP8)",
                        f, fp8, CFG_PEAK_TFLOPS_MIN);
    return SIM_OK;
}

/* --------------------------------------------------- in-memory structs */

static sim_rc revalidate(const cfg_key *rows, const void *obj, const char *origin, void *scratch, sim_err *err)
{
    cJSON *tree = cfg_schema_write(rows, obj);
    cfg_reader r;
    cfg_reader_init(&r, origin, err);
    sim_rc rc = cfg_schema_read(&r, rows, tree, scratch);
    cfg_reader_free(&r);
    cJSON_Delete(tree);
    return rc;
}

sim_rc cfg_model_revalidate(const cfg_model *m, sim_err *err)
{
    cfg_model tmp;
    memset(&tmp, 0, sizeof tmp);
    return revalidate(model_rows, m, cfg_origin(m->path, "model"), &tmp, err);
}

sim_rc cfg_platform_revalidate(const cfg_platform *p, sim_err *err)
{
    cfg_platform tmp;
    memset(&tmp, 0, sizeof tmp);
    return revalidate(platform_rows, p, cfg_origin(p->path, "platform"), &tmp, err);
}

sim_rc cfg_strategy_revalidate(const cfg_strategy *s, sim_err *err)
{
    cfg_strategy tmp;
    memset(&tmp, 0, sizeof tmp);
    return revalidate(cfg_strategy_keys, s, cfg_origin(s->path, "strategy"), &tmp, err);
}

cJSON *cfg_parse_json(const char *text, const char *origin, sim_err *err)
{
    return parse_text(text, origin, err);
}
