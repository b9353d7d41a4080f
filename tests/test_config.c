/* test_config.c - the config module: shipped inputs, defaults, units,
 * every validation rule with its exact message, --set overrides,
 * HuggingFace configs and the JSON round trip. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "config/config.h"
#include "lib/check_run.h"

static sim_err E;

#define ITEMS(...) ((const char *[]){__VA_ARGS__}), (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *))

/* ------------------------------------------------------------ helpers */

static const char *data_dir(void)
{
    return cfg_data_dir();
}

static cfg_overrides ovr(const char **items, int n)
{
    cfg_overrides o = {n, items};
    return o;
}

/* Parse strategy text with --set items; returns the rc, message in E. */
static sim_rc strat(const char *json, cfg_strategy *s, const char **items, int n)
{
    cfg_overrides o = ovr(items, n);
    memset(&E, 0, sizeof E);
    return cfg_parse_strategy(json, "strategies/x.json", &o, s, &E);
}

static sim_rc model(const char *json, cfg_model *m, const char **items, int n)
{
    cfg_overrides o = ovr(items, n);
    memset(&E, 0, sizeof E);
    return cfg_parse_model(json, "models/m.json", &o, m, &E);
}

static sim_rc platform(const char *json, cfg_platform *p, int devices, const char **items, int n)
{
    cfg_overrides o = ovr(items, n);
    memset(&E, 0, sizeof E);
    return cfg_parse_platform(json, "platforms/p.json", &o, devices, p, &E);
}

#define EXPECT_ERR(call, expected)                                                                                     \
    do {                                                                                                               \
        sim_rc rc_ = (call);                                                                                           \
        ck_assert_int_eq(rc_, SIM_EINVAL);                                                                             \
        ck_assert_str_eq(E.msg, (expected));                                                                           \
    } while (0)

/* The exact message of a cfg_check failure: the format gets the strategy
 * path first. */
static void expect_check_msg(const char *fmt, const char *path, ...) __attribute__((format(printf, 1, 3)));

static void expect_check_msg(const char *fmt, const char *path, ...)
{
    char want[SIM_ERR_LEN * 2];
    int n = snprintf(want, sizeof want, "%s: ", path);
    va_list ap;
    va_start(ap, path);
    vsnprintf(want + n, sizeof want - (size_t)n, fmt, ap);
    va_end(ap);
    ck_assert_str_eq(E.msg, want);
}

static const char *MIN_MODEL =
    "{\"layers\": 4, \"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024, \"vocab\": 1000, \"seq_len\": 128}";

static const char *MIN_PLATFORM =
    "{\"devices\": 16,"
    " \"device\": {\"peak_tflops\": 100, \"hbm_GiB\": 32, \"hbm_TBps\": 1},"
    " \"node\": {\"devices\": 4},"
    " \"supernode\": {\"devices\": 8, \"fabric_GBps\": 100, \"latency_us\": 1},"
    " \"network\": {\"nic_GBps\": 10, \"latency_us\": 2},"
    " \"efficiency\": {\"gemm\": [[1e6, 0.1], [1e9, 0.5], [1e12, 0.8]], \"attention\": 0.5, \"memory\": 0.8,"
    " \"network\": 0.9, \"kernel_overhead_us\": 3, \"collective_step_us\": 5}}";

/* Load a shipped triple with overrides (strategy keys, model.*, platform.*)
 * and run cfg_check; the message is in E. */
typedef struct triple {
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
} triple;

static sim_rc load_check(triple *t, const char *mname, const char *pname, const char *sname, int devices,
                         const char **items, int n)
{
    cfg_overrides o = ovr(items, n);
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_load_model(mname, &o, &t->m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    rc = cfg_load_platform(pname, &o, devices, &t->p, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    rc = cfg_load_strategy(sname, &o, &t->s, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    return cfg_check(&t->m, &t->p, &t->s, &E);
}

/* GPT 310B on the Ascend platform: the shipped default. */
static sim_rc gpt(triple *t, int devices, const char **items, int n)
{
    return load_check(t, "gpt-310b", "ascend-a3-2048", "gpt-310b-a3-megatron", devices, items, n);
}

static sim_rc mixtral(triple *t, int devices, const char **items, int n)
{
    return load_check(t, "mixtral-8x22b", "ascend-a3-2048", "mixtral-8x22b-a3-megatron", devices, items, n);
}

/* The tree's text with every number exact (cJSON's own printing keeps 15
 * digits of a number that needs 17 when they agree within DBL_EPSILON). */
static char *json_text(void *tree)
{
    char *s = sim_json_print(tree, false);
    cJSON_Delete(tree);
    return s;
}

/* ------------------------------------------------------- shipped files */

static const char *const MODELS[] = {
    "gpt-310b",  "gpt3-175b",  "gpt-1.7b",    "gpt-3.6b",      "gpt-7.5b",         "gpt-18.4b",
    "gpt-39.1b", "gpt-76.1b",  "gpt-145.6b",  "gpt-310.1b",    "gpt-529.6b",       "gpt-1008b",
    "llama3-8b", "llama3-70b", "llama3-405b", "mixtral-8x22b", "deepseek-moe-16b",
};
#define NMODELS (int)(sizeof MODELS / sizeof MODELS[0])

static const char *const PLATFORMS[] = {"dgx-a100", "dgx-h100", "ascend-a3-2048"};

static const struct {
    const char *strategy, *model, *platform;
    int devices;
} PAIRS[] = {
    {"gpt-310b-a3-megatron", "gpt-310b", "ascend-a3-2048", 0},
    {"gpt3-175b-a100", "gpt3-175b", "dgx-a100", 0},
    {"llama3-405b-h100-16k", "llama3-405b", "dgx-h100", 16384},
    {"mixtral-8x22b-a3-megatron", "mixtral-8x22b", "ascend-a3-2048", 0},
    {"gpt-310b-a3-7d", "gpt-310b", "ascend-a3-2048", 0},
    {"mixtral-8x22b-a3-7d", "mixtral-8x22b", "ascend-a3-2048", 0},
};
#define NPAIRS (int)(sizeof PAIRS / sizeof PAIRS[0])

START_TEST(shipped_models_load)
{
    cfg_model m;
    for (int i = 0; i < NMODELS; i++) {
        sim_rc rc = cfg_load_model(MODELS[i], NULL, &m, &E);
        ck_assert_msg(rc == SIM_OK, "%s: %s", MODELS[i], E.msg);
        ck_assert_str_eq(m.name, MODELS[i]);
        ck_assert_msg(m.description[0] != '\0', "%s has no description", MODELS[i]);
        char want[CFG_PATH_LEN];
        snprintf(want, sizeof want, "%s/models/%s.json", data_dir(), MODELS[i]);
        ck_assert_str_eq(m.path, want);
        ck_assert_int_eq(m.hidden % m.heads, 0);
    }
}
END_TEST

START_TEST(shipped_platforms_load)
{
    cfg_platform p;
    for (int i = 0; i < 3; i++) {
        sim_rc rc = cfg_load_platform(PLATFORMS[i], NULL, 0, &p, &E);
        ck_assert_msg(rc == SIM_OK, "%s: %s", PLATFORMS[i], E.msg);
        ck_assert_str_eq(p.name, PLATFORMS[i]);
        ck_assert(p.description[0] != '\0');
        ck_assert_int_ge(p.gemm_efficiency.n, 3);
        ck_assert_int_eq(p.devices_per_supernode % p.devices_per_node, 0);
    }
}
END_TEST

START_TEST(etp_defaults_to_tp)
{
    triple t;
    const char *items[] = {"etp=0"};
    ck_assert_int_eq(load_check(&t, "mixtral-8x22b", "ascend-a3-2048", "mixtral-8x22b-a3-megatron", 0, items, 1),
                     SIM_OK);
    ck_assert_int_eq(t.s.etp, t.s.tp_x * t.s.tp_y);
    const char *two[] = {"etp=2"};
    ck_assert_int_eq(load_check(&t, "mixtral-8x22b", "ascend-a3-2048", "mixtral-8x22b-a3-megatron", 0, two, 1),
                     SIM_OK);
    ck_assert_int_eq(t.s.etp, 2);
}
END_TEST

START_TEST(shipped_strategies_check)
{
    for (int i = 0; i < NPAIRS; i++) {
        triple t;
        sim_rc rc = load_check(&t, PAIRS[i].model, PAIRS[i].platform, PAIRS[i].strategy, PAIRS[i].devices, NULL, 0);
        ck_assert_msg(rc == SIM_OK, "%s: %s", PAIRS[i].strategy, E.msg);
        ck_assert_str_eq(t.s.name, PAIRS[i].strategy);
        ck_assert(t.s.description[0] != '\0');
        ck_assert_int_eq(cfg_world_size(&t.s), t.p.devices);
        /* the rank digits multiply to the device count: ep takes none */
        int ranks = 1;
        for (int d = 0; d < CFG_NDIMS; d++) ranks *= cfg_dim_radix(&t.s, (cfg_dim)d);
        ck_assert_int_eq(ranks, t.p.devices);
        ck_assert_double_eq(cfg_usable_hbm_bytes(&t.p), t.p.hbm_bytes - t.p.hbm_reserved_bytes);
        int sum = 0;
        for (int st = 0; st < t.s.pp; st++) sum += cfg_stage_layer_total(&t.m, &t.s, st);
        ck_assert_int_eq(sum, t.m.layers);
    }
}
END_TEST

START_TEST(shipped_default_strategy_shape)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, NULL, 0), SIM_OK);
    ck_assert_int_eq(t.s.tp_x, 8);
    ck_assert_int_eq(t.s.pp, 16);
    ck_assert_int_eq(t.s.dp, 16);
    ck_assert_int_eq(t.s.vpp, 2);
    ck_assert_int_eq(t.s.schedule, CFG_SCHED_INTERLEAVED);
    ck_assert(t.s.sequence_parallel);
    ck_assert_int_eq(t.s.recompute, CFG_RECOMP_SELECTIVE);
    ck_assert_int_eq(t.s.zero, 1);
    ck_assert_int_eq(cfg_micro_batches(&t.s), 1024 / 16);
    ck_assert_int_eq(cfg_layers_per_stage(&t.m, &t.s), 96 / 16);
}
END_TEST

/* ----------------------------------------------------------- defaults */

START_TEST(strategy_defaults)
{
    cfg_strategy s;
    ck_assert_int_eq(strat("{\"global_batch\": 64}", &s, NULL, 0), SIM_OK);
    ck_assert_str_eq(s.name, "x");
    ck_assert_str_eq(s.path, "strategies/x.json");
    ck_assert_int_eq(s.dp, 0);
    ck_assert_int_eq(s.pp, 1);
    ck_assert_int_eq(s.tp_x, 1);
    ck_assert_int_eq(s.tp_y, 1);
    ck_assert_int_eq(s.cp_ring, 1);
    ck_assert_int_eq(s.cp_ulysses, 1);
    ck_assert_int_eq(s.ep, 1);
    ck_assert_int_eq(s.etp, 0); /* "as tp": resolved by cfg_check */
    ck_assert_int_eq(s.vpp, 1);
    ck_assert_int_eq(s.schedule, CFG_SCHED_1F1B);
    ck_assert_int_eq(s.micro_batch, 1);
    ck_assert_int_eq(s.global_batch, 64);
    ck_assert(!s.sequence_parallel);
    ck_assert_int_eq(s.recompute, CFG_RECOMP_NONE);
    ck_assert_int_eq(s.zero, 0);
    ck_assert(s.overlap_grad_reduce);
    ck_assert(s.overlap_param_gather);
    ck_assert(!s.overlap_tp_comm);
    ck_assert(s.overlap_cp_comm);
    ck_assert(!s.fuse_tpy_cp);
    for (int i = 0; i < CFG_NDIMS; i++) ck_assert_int_eq(s.order[i], i);
    ck_assert_double_eq(s.moe_capacity_factor, 0.0);
    char order[128];
    cfg_order_format(&s, order, sizeof order);
    ck_assert_str_eq(order, "tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp");
}
END_TEST

START_TEST(model_defaults)
{
    cfg_model m;
    ck_assert_int_eq(model(MIN_MODEL, &m, NULL, 0), SIM_OK);
    ck_assert_str_eq(m.name, "m");
    ck_assert_int_eq(m.kv_heads, m.heads);
    ck_assert_int_eq(m.head_dim, 256 / 8);
    ck_assert_int_eq(m.activation, CFG_ACT_GELU);
    ck_assert_int_eq(m.dtype_bytes, 2);
    ck_assert(!m.tied_embeddings);
    ck_assert_int_eq(m.moe.experts, 0);
    ck_assert_int_eq(m.moe.layer_freq, 1);
    ck_assert(!cfg_is_moe_layer(&m, 0));

    /* explicit head_dim need not be hidden/heads */
    ck_assert_int_eq(model(MIN_MODEL, &m, ITEMS("model.head_dim=64", "model.heads=6", "model.kv_heads=2")), SIM_OK);
    ck_assert_int_eq(m.head_dim, 64);
    ck_assert_int_eq(m.kv_heads, 2);

    /* shared experts default to the routed expert width */
    ck_assert_int_eq(model(MIN_MODEL, &m,
                           ITEMS("model.moe.experts=4", "model.moe.top_k=1", "model.moe.ffn_hidden=96",
                                 "model.moe.shared_experts=1")),
                     SIM_OK);
    ck_assert_int_eq(m.moe.shared_ffn_hidden, 96);
    ck_assert_int_eq(m.moe.layer_freq, 1);
    ck_assert_int_eq(m.moe.first_dense_layers, 0);
}
END_TEST

START_TEST(platform_defaults)
{
    cfg_platform p;
    ck_assert_int_eq(platform(MIN_PLATFORM, &p, 0, NULL, 0), SIM_OK);
    ck_assert_str_eq(p.name, "p");
    ck_assert_str_eq(p.device_name, "");
    ck_assert_double_eq(p.hbm_reserved_bytes, 0.0);
    ck_assert_double_eq(p.spine_latency_s, 0.0);
    ck_assert_double_eq(p.oversubscription, 1.0);
    ck_assert_int_eq(p.devices, 16);
    /* --devices replaces the count, and stands in for a missing one */
    ck_assert_int_eq(platform(MIN_PLATFORM, &p, 64, NULL, 0), SIM_OK);
    ck_assert_int_eq(p.devices, 64);
    const char *nodev =
        "{\"device\": {\"peak_tflops\": 1, \"hbm_GiB\": 1, \"hbm_TBps\": 1}, \"node\": {\"devices\": 1},"
        " \"supernode\": {\"devices\": 1, \"fabric_GBps\": 1, \"latency_us\": 1},"
        " \"network\": {\"nic_GBps\": 1, \"latency_us\": 1}, \"efficiency\": {\"gemm\": [[1, 0.1], [2, 0.2],"
        " [3, 0.3]], \"attention\": 1, \"memory\": 1, \"network\": 1, \"kernel_overhead_us\": 0,"
        " \"collective_step_us\": 0}}";
    ck_assert_int_eq(platform(nodev, &p, 32, NULL, 0), SIM_OK);
    ck_assert_int_eq(p.devices, 32);
    EXPECT_ERR(platform(nodev, &p, 0, NULL, 0),
               "platforms/p.json: .devices: required key is missing (or give --devices)");
}
END_TEST

/* -------------------------------------------------------------- units */

START_TEST(units_are_si)
{
    cfg_platform p;
    ck_assert_int_eq(cfg_load_platform("dgx-a100", NULL, 0, &p, &E), SIM_OK);
    ck_assert_double_eq_tol(p.peak_flops_per_s, 312 * 1e12, 1.0);
    ck_assert_double_eq(p.hbm_bytes, 80.0 * 1024 * 1024 * 1024);
    ck_assert_double_eq_tol(p.hbm_bytes_per_s, 2.0e12, 1.0);
    ck_assert_double_eq_tol(p.fabric_bytes_per_s, 300e9, 1e-3);
    ck_assert_double_eq_tol(p.nic_bytes_per_s, 25e9, 1e-3);
    ck_assert_double_eq_tol(p.fabric_latency_s, 1e-6, 1e-18);
    ck_assert_double_eq_tol(p.nic_latency_s, 2e-6, 1e-18);
    ck_assert_double_eq_tol(p.kernel_overhead_s, 4e-6, 1e-18);
    ck_assert_double_eq_tol(p.collective_step_s, 8e-6, 1e-18);
    ck_assert_int_eq(p.devices_per_node, 8);
    ck_assert_int_eq(p.devices_per_supernode, 8);
    ck_assert_int_eq(p.devices, 1024);
    for (int i = 1; i < p.gemm_efficiency.n; i++) ck_assert(p.gemm_efficiency.x[i] > p.gemm_efficiency.x[i - 1]);

    /* the same numbers through a small file: GiB is 2^30, us is 1e-6 */
    ck_assert_int_eq(platform(MIN_PLATFORM, &p, 0,
                              ITEMS("platform.device.hbm_reserved_GiB=0.5", "platform.network.spine_latency_us=1.5")),
                     SIM_OK);
    ck_assert_double_eq(p.hbm_bytes, 32.0 * SIM_GIB);
    ck_assert_double_eq(p.hbm_reserved_bytes, 0.5 * SIM_GIB);
    ck_assert_double_eq_tol(p.spine_latency_s, 1.5e-6, 1e-18);
    ck_assert_double_eq_tol(p.peak_flops_per_s, 1e14, 1e-2);
}
END_TEST

/* ------------------------------------------------ schema error messages */

START_TEST(strategy_value_errors)
{
    cfg_strategy s;
    EXPECT_ERR(strat("{\"global_batch\": 8, \"tp_x\": 0}", &s, NULL, 0),
               "strategies/x.json: .tp_x: expected an integer in [1, 131072], got 0");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"tp_x\": 2.5}", &s, NULL, 0),
               "strategies/x.json: .tp_x: expected an integer, got 2.5");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"tp_x\": \"8\"}", &s, NULL, 0),
               "strategies/x.json: .tp_x: expected an integer, got \"8\"");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"pp\": -2}", &s, NULL, 0),
               "strategies/x.json: .pp: expected an integer in [1, 131072], got -2");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"dp\": 1e9}", &s, NULL, 0),
               "strategies/x.json: .dp: expected an integer in [0, 131072], got 1000000000");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"zero\": 4}", &s, NULL, 0),
               "strategies/x.json: .zero: expected an integer in [0, 3], got 4");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"moe_capacity_factor\": -0.5}", &s, NULL, 0),
               "strategies/x.json: .moe_capacity_factor: expected a number in [0, 1000], got -0.5");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"sequence_parallel\": 1}", &s, NULL, 0),
               "strategies/x.json: .sequence_parallel: expected true or false, got 1");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"schedule\": \"1F1B\"}", &s, NULL, 0),
               "strategies/x.json: .schedule: expected one of \"gpipe\", \"1f1b\", \"interleaved\", \"zb-h1\", "
               "\"zb-v\", \"dualpipe-v\", got \"1F1B\" (did you mean \"1f1b\"?)");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"recompute\": \"some\"}", &s, NULL, 0),
               "strategies/x.json: .recompute: expected one of \"none\", \"selective\", \"full\", got \"some\"");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"recompute\": true}", &s, NULL, 0),
               "strategies/x.json: .recompute: expected one of \"none\", \"selective\", \"full\", got true");
    EXPECT_ERR(strat("{\"tp_x\": 8}", &s, NULL, 0), "strategies/x.json: .global_batch: required key is missing");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"name\": 3}", &s, NULL, 0),
               "strategies/x.json: .name: expected a string, got 3");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"description\": \"two\\nlines\"}", &s, NULL, 0),
               "strategies/x.json: .description: must be one line of text");
    char longname[200] = "{\"global_batch\": 8, \"name\": \"";
    for (int i = 0; i < 64; i++) strcat(longname, "n");
    strcat(longname, "\"}");
    EXPECT_ERR(strat(longname, &s, NULL, 0), "strategies/x.json: .name: longer than 63 characters (shorten it)");
}
END_TEST

START_TEST(unknown_and_duplicate_keys)
{
    cfg_strategy s;
    cfg_model m;
    EXPECT_ERR(model("{\"laers\": 4}", &m, NULL, 0), "models/m.json: .laers: unknown key (did you mean 'layers'?)");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"tpx\": 2}", &s, NULL, 0),
               "strategies/x.json: .tpx: unknown key (did you mean 'tp_x'?)");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"tp_x\": 2, \"tp_x\": 4}", &s, NULL, 0),
               "strategies/x.json: .tp_x: duplicate key (keep one)");
    /* no close name: the message lists the keys */
    ck_assert_int_eq(model("{\"zzzzzzzz\": 4}", &m, NULL, 0), SIM_EINVAL);
    const char *want = "models/m.json: .zzzzzzzz: unknown key (known keys: name, description, layers, hidden, heads,";
    ck_assert_msg(strncmp(E.msg, want, strlen(want)) == 0, "%s", E.msg);
    ck_assert_msg(strstr(E.msg, "moe, mla, attention_window, mtp_layers)") != NULL, "%s", E.msg);
    /* nested objects name the full path */
    cfg_platform p;
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.device.peak_tflop=3")),
               "--set platform.device.peak_tflop=3: .device.peak_tflop: unknown key (did you mean 'peak_tflops'?)");
    EXPECT_ERR(model("{\"layers\": 4, \"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024, \"vocab\": 1000,"
                     " \"seq_len\": 128, \"moe\": {\"experts\": 8, \"top_k\": 2, \"ffn_hidden\": 64, \"topk\": 1}}",
                     &m, NULL, 0),
               "models/m.json: .moe.topk: unknown key (did you mean 'top_k'?)");
}
END_TEST

START_TEST(model_errors)
{
    cfg_model m;
    EXPECT_ERR(
        model("{\"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024, \"vocab\": 1000, \"seq_len\": 128}", &m, NULL, 0),
        "models/m.json: .layers: required key is missing");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.layers=1e6")),
               "--set model.layers=1e6: .layers: expected an integer in [1, 16384], got 1000000");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.hidden=0")),
               "--set model.hidden=0: .hidden: expected an integer in [1, 1048576], got 0");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.kv_heads=3")),
               "models/m.json: .kv_heads: 3 does not divide heads=8 (use a divisor of 8)");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.kv_heads=16")),
               "models/m.json: .kv_heads: 16 does not divide heads=8 (use a divisor of 8)");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.heads=7")),
               "models/m.json: .heads: 7 does not divide hidden=256 (use a divisor of 256, or give head_dim)");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.activation=tanh")),
               "--set model.activation=tanh: .activation: expected one of \"gelu\", \"swiglu\", \"geglu\", \"relu\", "
               "\"squared-relu\", got \"tanh\"");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.dtype=fp32")),
               "--set model.dtype=fp32: .dtype: expected one of \"bf16\", \"fp16\", got \"fp32\"");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.moe.experts=8", "model.moe.top_k=9", "model.moe.ffn_hidden=64")),
               "models/m.json: .moe.top_k: 9 is more than moe.experts=8 (use at most 8)");
    EXPECT_ERR(model(MIN_MODEL, &m,
                     ITEMS("model.moe.experts=8", "model.moe.top_k=2", "model.moe.ffn_hidden=64",
                           "model.moe.first_dense_layers=4")),
               "models/m.json: .moe.first_dense_layers: 4 leaves no MoE layer among layers=4 (use less than 4)");
    /* experts without a width are as wide as the dense MLP */
    ck_assert_int_eq(model(MIN_MODEL, &m, ITEMS("model.moe.experts=8", "model.moe.top_k=2")), SIM_OK);
    ck_assert_int_eq(m.moe.ffn_hidden, m.ffn_hidden);
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.moe=4")), "--set model.moe=4: .moe: expected an object, got 4");
}
END_TEST

/* network.tiers: read into the struct in SI units, written back, and each
 * rule refused with its message. */
START_TEST(platform_tiers)
{
    cfg_platform p;
    ck_assert_int_eq(platform(MIN_PLATFORM, &p, 0, NULL, 0), SIM_OK);
    ck_assert_int_eq(p.ntiers, 0);
    ck_assert_msg(platform(MIN_PLATFORM, &p, 64,
                           ITEMS("platform.network.tiers=[{\"name\": \"leaf\", \"devices\": 16, \"rails\": true},"
                                 " {\"devices\": 32, \"oversubscription\": 2, \"latency_us\": 1.5}]"))
                      == SIM_OK,
                  "%s", E.msg);
    ck_assert_int_eq(p.ntiers, 2);
    ck_assert_str_eq(p.tiers[0].name, "leaf");
    ck_assert_int_eq(p.tiers[0].devices, 16);
    ck_assert(p.tiers[0].rails && !p.tiers[1].rails);
    ck_assert_double_eq(p.tiers[0].oversubscription, 1);
    ck_assert_double_eq(p.tiers[0].latency_s, 0);
    ck_assert_double_eq(p.tiers[1].oversubscription, 2);
    ck_assert_double_eq_tol(p.tiers[1].latency_s, 1.5e-6, 1e-18);
    cfg_platform q;
    char *text = json_text(cfg_platform_to_json(&p));
    ck_assert_msg(cfg_parse_platform(text, p.path, NULL, 0, &q, &E) == SIM_OK, "%s", E.msg);
    ck_assert_msg(memcmp(&p, &q, sizeof p) == 0, "%s", text);
    cJSON_free(text);
#define TIERS(json) ITEMS("platform.network.tiers=" json)
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"devices\": 12}]")),
               "platforms/p.json: .network.tiers[0].devices: 12 is not a multiple of supernode.devices=8 (a tier's "
               "domain holds whole supernodes: use a multiple of 8)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"devices\": 16}, {\"devices\": 24}]")),
               "platforms/p.json: .network.tiers[1].devices: 24 is not a multiple of the tier below's devices=16 (a "
               "tier's domain holds whole domains of the tier below: use a multiple of 16 above it)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"devices\": 16}, {\"devices\": 16}]")),
               "platforms/p.json: .network.tiers[1].devices: 16 is not a multiple of the tier below's devices=16 (a "
               "tier's domain holds whole domains of the tier below: use a multiple of 16 above it)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"devices\": 16}, {\"devices\": 32, \"rails\": true}]")),
               "platforms/p.json: .network.tiers[1].rails: only the first tier can be rail-optimised (remove it)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0,
                        ITEMS("platform.network.tiers=[{\"devices\": 16, \"rails\": true}]",
                              "platform.network.oversubscription=2")),
               "platforms/p.json: .network.oversubscription: a rail-optimised first tier takes each node's NICs one "
               "by one, with no supernode uplink to oversubscribe (give the leaf's in tiers[0].oversubscription)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"devices\": 16, \"oversubscription\": 0.5}]")),
               "--set platform.network.tiers=[{\"devices\": 16, \"oversubscription\": 0.5}]: "
               ".network.tiers[0].oversubscription: expected a number in [1, 1000], got 0.5");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"devices\": 16, \"latncy_us\": 1}]")),
               "--set platform.network.tiers=[{\"devices\": 16, \"latncy_us\": 1}]: .network.tiers[0].latncy_us: "
               "unknown key (did you mean 'latency_us'?)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[{\"name\": \"leaf\"}]")),
               "--set platform.network.tiers=[{\"name\": \"leaf\"}]: .network.tiers[0].devices: required key is "
               "missing");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("[16]")),
               "--set platform.network.tiers=[16]: .network.tiers[0]: expected an object, got 16");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, TIERS("{\"devices\": 16}")),
               "--set platform.network.tiers={\"devices\": 16}: .network.tiers: expected an array of objects, got "
               "{\"devices\":16}");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0,
                        TIERS("[{\"devices\": 8}, {\"devices\": 16}, {\"devices\": 32}, {\"devices\": 64}, "
                              "{\"devices\": 128}]")),
               "--set platform.network.tiers=[{\"devices\": 8}, {\"devices\": 16}, {\"devices\": 32}, {\"devices\": "
               "64}, {\"devices\": 128}]: .network.tiers: expected at most 4 entries, got 5");
#undef TIERS
}
END_TEST

START_TEST(platform_errors)
{
    cfg_platform p;
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.devices=1e9")),
               "--set platform.devices=1e9: .devices: expected an integer in [1, 131072], got 1000000000");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 200000, NULL, 0),
               "platforms/p.json: .devices: --devices 200000 is more than the limit of 131072 devices (use fewer)");
    EXPECT_ERR(platform("{\"devices\": 8}", &p, 0, NULL, 0), "platforms/p.json: .device: required key is missing");
    EXPECT_ERR(platform("{\"devices\": 8, \"device\": {\"hbm_GiB\": 1, \"hbm_TBps\": 1}}", &p, 0, NULL, 0),
               "platforms/p.json: .device.peak_tflops: required key is missing");
    EXPECT_ERR(platform("{\"devices\": 8, \"device\": 3}", &p, 0, NULL, 0),
               "platforms/p.json: .device: expected an object, got 3");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.device.peak_tflops=0")),
               "--set platform.device.peak_tflops=0: .device.peak_tflops: expected a number in [1e-06, 10000000], got 0");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.attention=1.5")),
               "--set platform.efficiency.attention=1.5: .efficiency.attention: expected a number in [0.0001, 1], got 1.5");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.memory=0")),
               "--set platform.efficiency.memory=0: .efficiency.memory: expected a number in [0.0001, 1], got 0");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.network.oversubscription=0.5")),
               "--set platform.network.oversubscription=0.5: .network.oversubscription: expected a number in [1, 1000], got "
               "0.5");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.supernode.devices=10")),
               "platforms/p.json: .supernode.devices: 10 is not a multiple of node.devices=4 (use a multiple of 4)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.device.hbm_reserved_GiB=32")),
               "platforms/p.json: .device.hbm_reserved_GiB: 32 is not less than hbm_GiB=32 (reserve less than the "
               "capacity)");
}
END_TEST

START_TEST(curve_errors)
{
    cfg_platform p;
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.gemm=[[1,0.5],[2,0.6]]")),
               "--set platform.efficiency.gemm=[[1,0.5],[2,0.6]]: .efficiency.gemm: expected at least 3 points, got "
               "2");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.gemm=[[1,0.5],[1e6,0.6],[1000,0.7]]")),
               "--set platform.efficiency.gemm=[[1,0.5],[1e6,0.6],[1000,0.7]]: .efficiency.gemm[2]: flops 1000 is not "
               "above the previous point's 1000000 (sort the points by increasing flops)");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.gemm=[[1,0.5],[2,1.2],[3,0.7]]")),
               "--set platform.efficiency.gemm=[[1,0.5],[2,1.2],[3,0.7]]: .efficiency.gemm[1]: fraction must be in [0.0001, "
               "1], got 1.2");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.gemm=[[1,0.5],[2,0.6],[3]]")),
               "--set platform.efficiency.gemm=[[1,0.5],[2,0.6],[3]]: .efficiency.gemm[2]: expected a [flops, "
               "fraction] pair of numbers, got [3]");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.gemm=[[0,0.5],[2,0.6],[3,0.7]]")),
               "--set platform.efficiency.gemm=[[0,0.5],[2,0.6],[3,0.7]]: .efficiency.gemm[0]: flops must be > 0, got "
               "0");
    EXPECT_ERR(platform(MIN_PLATFORM, &p, 0, ITEMS("platform.efficiency.gemm=0.8")),
               "--set platform.efficiency.gemm=0.8: .efficiency.gemm: expected an array of [flops, fraction] pairs, "
               "got 0.8");
    /* the curve from a file reads back point by point */
    ck_assert_int_eq(platform(MIN_PLATFORM, &p, 0, NULL, 0), SIM_OK);
    ck_assert_int_eq(p.gemm_efficiency.n, 3);
    ck_assert_double_eq(p.gemm_efficiency.x[1], 1e9);
    ck_assert_double_eq(p.gemm_efficiency.y[2], 0.8);
}
END_TEST

START_TEST(order_errors)
{
    cfg_strategy s;
    EXPECT_ERR(strat("{\"global_batch\": 8, \"order\": \"tp_x-tp_y-cp_ulysses-cp_ring-ep-dp\"}", &s, NULL, 0),
               "strategies/x.json: .order: 'pp' is missing (name each of tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp once)");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"order\": \"tp_x-tp_x-cp_ulysses-cp_ring-ep-dp-pp\"}", &s, NULL, 0),
               "strategies/x.json: .order: 'tp_x' appears twice (name each of tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp "
               "once)");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"order\": \"tpx-tp_y-cp_ulysses-cp_ring-ep-dp-pp\"}", &s, NULL, 0),
               "strategies/x.json: .order: unknown dimension 'tpx' (did you mean 'tp_x'?)");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"order\": \"tp_x--tp_y\"}", &s, NULL, 0),
               "strategies/x.json: .order: empty dimension name in \"tp_x--tp_y\"");
    EXPECT_ERR(strat("{\"global_batch\": 8, \"order\": 7}", &s, NULL, 0),
               "strategies/x.json: .order: expected a string like \"tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp\", got 7");
    /* a valid permutation */
    ck_assert_int_eq(strat("{\"global_batch\": 8, \"order\": \"tp_x-cp_ulysses-tp_y-cp_ring-dp-ep-pp\"}", &s, NULL, 0),
                     SIM_OK);
    ck_assert_int_eq(s.order[1], CFG_DIM_CP_ULYSSES);
    ck_assert_int_eq(s.order[2], CFG_DIM_TP_Y);
    ck_assert_int_eq(s.order[4], CFG_DIM_DP);
    char buf[128];
    cfg_order_format(&s, buf, sizeof buf);
    ck_assert_str_eq(buf, "tp_x-cp_ulysses-tp_y-cp_ring-dp-ep-pp");
}
END_TEST

START_TEST(malformed_json)
{
    cfg_strategy s;
    EXPECT_ERR(strat("{\n \"tp_x\": 8,\n \"pp\": ,\n}", &s, NULL, 0),
               "strategies/x.json: malformed JSON near line 3: at ','");
    EXPECT_ERR(strat("{\n\"tp_x\": 8\n\"pp\": 2}", &s, NULL, 0),
               "strategies/x.json: malformed JSON near line 3: at '\"pp\": 2}'");
    EXPECT_ERR(strat("{\"tp_x\": 8,", &s, NULL, 0),
               "strategies/x.json: malformed JSON near line 1: unexpected end of input");
    EXPECT_ERR(strat("", &s, NULL, 0), "strategies/x.json: malformed JSON near line 1: unexpected end of input");
    EXPECT_ERR(strat("[1, 2]", &s, NULL, 0), "strategies/x.json: expected a JSON object at the top level, got [1,2]");
    cfg_model m;
    EXPECT_ERR(model("{\"layers\": 4} trailing", &m, NULL, 0),
               "models/m.json: malformed JSON near line 1: at 'trailing'");
}
END_TEST

/* ---------------------------------------------------------- overrides */

START_TEST(overrides_apply)
{
    cfg_strategy s;
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", NULL, &s, &E), SIM_OK);
    ck_assert_int_eq(s.tp_x, 8);
    cfg_overrides o = ovr(ITEMS("tp_x=4", "schedule=gpipe", "recompute=\"full\"", "sequence_parallel=false",
                                "model.layers=2", "platform.devices=8", "strategy.pp=2", "pp=4"));
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", &o, &s, &E), SIM_OK);
    ck_assert_int_eq(s.tp_x, 4);
    ck_assert_int_eq(s.schedule, CFG_SCHED_GPIPE);
    ck_assert_int_eq(s.recompute, CFG_RECOMP_FULL);
    ck_assert(!s.sequence_parallel);
    ck_assert_int_eq(s.pp, 4); /* the later item wins */

    cfg_platform p;
    o = ovr(ITEMS("platform.device.peak_tflops=400", "platform.network.oversubscription=2", "tp_x=3"));
    ck_assert_int_eq(cfg_load_platform("ascend-a3-2048", &o, 0, &p, &E), SIM_OK);
    ck_assert_double_eq_tol(p.peak_flops_per_s, 4e14, 1.0);
    ck_assert_double_eq(p.oversubscription, 2.0);
    ck_assert_double_eq_tol(p.hbm_bytes_per_s, 1.6e12, 1.0); /* untouched */

    cfg_model m;
    o = ovr(ITEMS("model.seq_len=1024", "model.moe.top_k=1"));
    ck_assert_int_eq(cfg_load_model("mixtral-8x22b", &o, &m, &E), SIM_OK);
    ck_assert_int_eq(m.seq_len, 1024);
    ck_assert_int_eq(m.moe.top_k, 1);
    ck_assert_int_eq(m.moe.experts, 8);

    /* an override can create a nested object */
    o = ovr(ITEMS("model.moe.experts=16", "model.moe.top_k=2", "model.moe.ffn_hidden=4096"));
    ck_assert_int_eq(cfg_load_model("gpt-310b", &o, &m, &E), SIM_OK);
    ck_assert_int_eq(m.moe.experts, 16);
    ck_assert(cfg_is_moe_layer(&m, 0));
}
END_TEST

START_TEST(override_errors)
{
    cfg_strategy s;
    cfg_overrides o;
#define LOAD_S(...)                                                                                                    \
    (o = ovr(ITEMS(__VA_ARGS__)), memset(&E, 0, sizeof E), cfg_load_strategy("gpt-310b-a3-megatron", &o, &s, &E))
    EXPECT_ERR(LOAD_S("tp_x=abc"), "--set tp_x=abc: .tp_x: expected an integer, got \"abc\"");
    EXPECT_ERR(LOAD_S("tp_x=2.5"), "--set tp_x=2.5: .tp_x: expected an integer, got 2.5");
    EXPECT_ERR(LOAD_S("tp_x="), "--set tp_x=: .tp_x: expected an integer, got \"\"");
    EXPECT_ERR(LOAD_S("zero=5"), "--set zero=5: .zero: expected an integer in [0, 3], got 5");
    EXPECT_ERR(LOAD_S("tpx=8"), "--set tpx=8: .tpx: unknown key (did you mean 'tp_x'?)");
    EXPECT_ERR(LOAD_S("tp_x"), "--set tp_x: expected KEY=VALUE");
    EXPECT_ERR(LOAD_S("=3"), "--set =3: empty key (expected KEY=VALUE)");
    EXPECT_ERR(LOAD_S("model.=3"), "--set model.=3: empty name in the key (expected KEY=VALUE)");
    EXPECT_ERR(LOAD_S("model=3"), "--set model=3: expected model.KEY=VALUE");
    /* a malformed item of another kind is still an error */
    EXPECT_ERR(LOAD_S("model.layers"), "--set model.layers: expected KEY=VALUE");
    EXPECT_ERR(LOAD_S("tp_x.y=1"), "--set tp_x.y=1: .tp_x: not an object, so it has no key 'y'");
#undef LOAD_S
    cfg_model m;
    o = ovr(ITEMS("model.laers=3"));
    EXPECT_ERR(cfg_load_model("gpt-310b", &o, &m, &E),
               "--set model.laers=3: .laers: unknown key (did you mean 'layers'?)");
    o = ovr(ITEMS("model.moe.experts=8"));
    EXPECT_ERR(cfg_load_model("gpt-310b", &o, &m, &E),
               "--set model.moe.experts=8: .moe.top_k: required key is missing");
    cfg_platform p;
    o = ovr(ITEMS("platform.devce.peak_tflops=1"));
    EXPECT_ERR(cfg_load_platform("dgx-a100", &o, 0, &p, &E),
               "--set platform.devce.peak_tflops=1: .devce: unknown key (did you mean 'device'?)");
}
END_TEST

/* ------------------------------------------------------------ cfg_check */

START_TEST(check_world_size)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("dp=8")), SIM_EINVAL);
    expect_check_msg(".dp: world size dp*pp*tp_x*tp_y*cp_ring*cp_ulysses = 8*16*8*1*1*1 = 1024 does not equal the 2048 "
                     "devices of platform 'ascend-a3-2048' (change the strategy, set dp to 0 to derive it, or run on "
                     "1024 devices)",
                     t.s.path);
    /* dp = 0 is derived from the device count */
    ck_assert_int_eq(gpt(&t, 4096, ITEMS("dp=0", "global_batch=2048")), SIM_OK);
    ck_assert_int_eq(t.s.dp, 4096 / (16 * 8));
    ck_assert_int_eq(cfg_world_size(&t.s), 4096);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("dp=0", "pp=3")), SIM_EINVAL);
    expect_check_msg(".dp: cannot derive dp: pp*tp_x*tp_y*cp_ring*cp_ulysses = 3*8*1*1*1 = 24 does not divide the "
                     "2048 devices of platform 'ascend-a3-2048' (run on a multiple of 24 devices, or change the "
                     "strategy)",
                     t.s.path);
    ck_assert_int_eq(t.s.dp, 0); /* a failed check leaves the strategy alone */
}
END_TEST

START_TEST(check_heads_and_widths)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 16 * 16 * 6, ITEMS("tp_x=6")), SIM_EINVAL);
    expect_check_msg(".tp_x: 6 does not divide heads=128 (use a divisor of 128)", t.s.path);
    /* a value wrong on its own is named before the world size it also breaks */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("tp_x=3")), SIM_EINVAL);
    expect_check_msg(".tp_x: 3 does not divide heads=128 (use a divisor of 128)", t.s.path);
    ck_assert_int_eq(gpt(&t, 16 * 16 * 8 * 3, ITEMS("cp_ulysses=3")), SIM_EINVAL);
    expect_check_msg(".tp_x: tp_x*cp_ulysses = 8*3 = 24 does not divide heads=128 (use a divisor of 128)", t.s.path);
    ck_assert_int_eq(gpt(&t, 16 * 16 * 8 * 3, ITEMS("tp_y=3")), SIM_EINVAL);
    expect_check_msg(".tp_x: tp_x*tp_y = 8*3 = 24 does not divide hidden=16384 (use a divisor of 16384)", t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.ffn_hidden=65540")), SIM_EINVAL);
    expect_check_msg(".tp_x: 8 does not divide ffn_hidden=65540 (use a divisor of 65540)", t.s.path);
    /* a routed expert is split over the etp ranks (8 here, as tp_x) */
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("model.moe.ffn_hidden=16388")), SIM_EINVAL);
    expect_check_msg(".etp: 8 does not divide moe.ffn_hidden=16388 (use a divisor of 16388)", t.s.path);
    /* kv heads: a divisor of tp_x*cp_ulysses or a multiple of it */
    ck_assert_int_eq(
        load_check(&t, "gpt3-175b", "dgx-a100", "gpt3-175b-a100", 16 * 8 * 3, ITEMS("model.kv_heads=32", "tp_x=3")),
        SIM_EINVAL);
    expect_check_msg(".tp_x: 3 neither divides kv_heads=32 nor is a multiple of it (use a divisor or a multiple of 32)",
                     t.s.path);
    /* replication: 8 KV heads over 16 tensor ranks is fine */
    ck_assert_int_eq(load_check(&t, "llama3-70b", "dgx-h100", "gpt3-175b-a100", 16 * 8 * 16,
                                ITEMS("tp_x=16", "vpp=5", "global_batch=1024", "model.seq_len=2048")),
                     SIM_OK);
}
END_TEST

START_TEST(check_pipeline)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("vpp=4")), SIM_EINVAL);
    expect_check_msg(".pp: pp*vpp = 16*4 = 64 does not divide layers=96 (use a divisor of 96)", t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("schedule=1f1b")), SIM_EINVAL);
    expect_check_msg(".vpp: vpp=2 needs schedule \"interleaved\", got \"1f1b\" (set schedule to \"interleaved\" or vpp "
                     "to 1)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("pp=1", "dp=0")), SIM_EINVAL);
    expect_check_msg(".schedule: \"interleaved\" needs pp > 1, got pp=1 (use \"1f1b\")", t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("vpp=1")), SIM_EINVAL);
    expect_check_msg(".schedule: \"interleaved\" needs vpp > 1, got vpp=1 (set vpp to 2 or more, or use \"1f1b\")",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("global_batch=1040")), SIM_EINVAL);
    expect_check_msg(".global_batch: the interleaved schedule needs a number of micro-batches "
                     "global_batch/(dp*micro_batch) = 65 that is a multiple of pp=16 (change global_batch or "
                     "micro_batch)",
                     t.s.path);
    /* the same batch is fine for 1F1B */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("global_batch=1040", "schedule=1f1b", "vpp=1")), SIM_OK);
    ck_assert_int_eq(cfg_micro_batches(&t.s), 65);
}
END_TEST

/* The layer ranges of every (stage, chunk), walked in the pipeline's order
 * (global chunk j*pp + p), tile 0..layers-1 exactly once; with first/last
 * stage counts the middle stages share the rest equally, and without them
 * every chunk holds layers/(pp*v). */
START_TEST(stage_layer_ranges)
{
    static const struct {
        int layers, pp, vpp, first, last;
    } cases[] = {
        {126, 16, 1, 7, 7}, {10, 4, 1, 1, 3}, {12, 4, 2, 2, 2}, {96, 16, 2, 0, 0}, {96, 16, 1, 0, 0},
        {10, 4, 1, 4, 0},   {10, 3, 1, 0, 4}, {8, 2, 1, 3, 5},  {24, 4, 3, 3, 9},  {7, 1, 1, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfg_model m;
        memset(&m, 0, sizeof m);
        m.layers = cases[i].layers;
        cfg_strategy s;
        memset(&s, 0, sizeof s);
        s.pp = cases[i].pp;
        s.vpp = cases[i].vpp;
        s.schedule = s.vpp > 1 ? CFG_SCHED_INTERLEAVED : CFG_SCHED_1F1B;
        s.first_stage_layers = cases[i].first;
        s.last_stage_layers = cases[i].last;
        int v = cfg_stage_chunks(&s), next = 0, most = 0;
        ck_assert_int_eq(v, s.vpp);
        for (int j = 0; j < v; j++)
            for (int p = 0; p < s.pp; p++) {
                int first = -1, n = cfg_stage_layers(&m, &s, p, j, &first);
                ck_assert_msg(first == next, "case %zu stage %d chunk %d starts at %d, want %d", i, p, j, first, next);
                ck_assert_int_ge(n, 1);
                next += n;
            }
        ck_assert_msg(next == m.layers, "case %zu covers %d of %d layers", i, next, m.layers);
        int middle = -1, sum = 0;
        for (int p = 0; p < s.pp; p++) {
            int n = cfg_stage_layer_total(&m, &s, p);
            sum += n;
            if (n > most) most = n;
            if (p == 0 && s.first_stage_layers > 0) {
                ck_assert_int_eq(n, s.first_stage_layers);
            } else if (p == s.pp - 1 && s.last_stage_layers > 0) {
                ck_assert_int_eq(n, s.last_stage_layers);
            } else {
                if (middle < 0) middle = n;
                ck_assert_int_eq(n, middle);
                if (!cfg_uneven_stages(&s)) ck_assert_int_eq(n, m.layers / s.pp);
            }
            for (int j = 0; j < v; j++) ck_assert_int_eq(cfg_stage_layers(&m, &s, p, j, NULL) * v, n);
        }
        ck_assert_int_eq(sum, m.layers);
        ck_assert_int_eq(cfg_layers_per_stage(&m, &s), most);
        ck_assert_int_eq(cfg_uneven_stages(&s), cases[i].first > 0 || cases[i].last > 0);
    }
}
END_TEST

/* The layer counts a layout string gives each virtual stage, and its
 * first layer, against the list written out by hand. */
static void expect_layout(const char *layout, int pp, int vpp, const int *want, int n)
{
    cfg_model m;
    memset(&m, 0, sizeof m);
    cfg_strategy s;
    memset(&s, 0, sizeof s);
    s.pp = pp;
    s.vpp = vpp;
    s.schedule = vpp > 1 ? CFG_SCHED_INTERLEAVED : CFG_SCHED_1F1B;
    sim_strlcpy(s.pipeline_layout, layout, sizeof s.pipeline_layout);
    ck_assert_int_eq(pp * vpp, n);
    int next = 0, most = 0;
    for (int g = 0; g < n; g++) {
        int chunk, stage = cfg_chunk_stage(&s, g, &chunk), first = -1;
        ck_assert_msg(cfg_stage_layers(&m, &s, stage, chunk, &first) == want[g] && first == next,
                      "%s: virtual stage %d: %d layers from %d, want %d from %d", layout, g,
                      cfg_stage_layers(&m, &s, stage, chunk, NULL), first, want[g], next);
        next += want[g];
    }
    for (int p = 0; p < pp; p++) {
        int total = 0;
        for (int j = 0; j < vpp; j++) total += want[j * pp + p];
        ck_assert_int_eq(cfg_stage_layer_total(&m, &s, p), total);
        if (total > most) most = total;
    }
    ck_assert_int_eq(cfg_layers_per_stage(&m, &s), most);
}

START_TEST(pipeline_layout_ranges)
{
    /* Megatron-Bridge's DeepSeek-V3 recipe for (pp 8, vpp 2): 4 layers with
     * the embedding, 14 x 4, 1 with the MTP layer and the loss */
    int ds[16];
    for (int g = 0; g < 16; g++) ds[g] = g == 15 ? 1 : 4;
    expect_layout("Et*4|(t*4|)*14,tmL", 8, 2, ds, 16);
    /* the same on pp 4 x vpp 4: stage 3 holds 4 + 4 + 4 + 1 */
    expect_layout("Et*4|(t*4|)*14,tmL", 4, 4, ds, 16);
    /* Megatron-Core's documented example without its separate MTP stage:
     * "Et*3|(tt|)*29,m|L" on pp 16 x vpp 2 becomes 3, 29 x 2, 1 + m + L */
    int mc[32] = {3};
    for (int g = 1; g < 30; g++) mc[g] = 2;
    mc[30] = 1;
    mc[31] = 1;
    expect_layout("Et*3|(tt|)*29,t|tmL", 16, 2, mc, 32);
    /* Qwen3-235B-A22B's 94 layers on pp 8 x vpp 4: the layout equal to
     * Megatron's account_for_{embedding,loss}_in_pipeline_split */
    int qw[32];
    for (int g = 0; g < 32; g++) qw[g] = g == 0 || g == 31 ? 2 : 3;
    expect_layout("Et*2|(t*3|)*30,t*2L", 8, 4, qw, 32);
    cfg_model q;
    memset(&q, 0, sizeof q);
    q.layers = 94;
    cfg_strategy acc;
    memset(&acc, 0, sizeof acc);
    acc.pp = 8;
    acc.vpp = 4;
    acc.schedule = CFG_SCHED_INTERLEAVED;
    acc.account_for_embedding_in_pipeline_split = acc.account_for_loss_in_pipeline_split = true;
    for (int g = 0; g < 32; g++) {
        int chunk, stage = cfg_chunk_stage(&acc, g, &chunk);
        ck_assert_int_eq(cfg_stage_layers(&q, &acc, stage, chunk, NULL), qw[g]);
    }
    /* commas, repeats of '|' and single characters */
    expect_layout("E,ttt|t*2|t,t|tL", 4, 1, (int[]){3, 2, 2, 1}, 4);
    expect_layout("Et|(t|)*2,tL", 2, 2, (int[]){1, 1, 1, 1}, 4);
}
END_TEST

START_TEST(check_pipeline_layout)
{
    triple t;
    /* mixtral-8x22b (56 layers) on pp 4 */
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("pipeline_layout=\"Et*14|(t*14|)*2,t*14L\"")), SIM_OK);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 0), 14);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("pipeline_layout=\"Et*15|t*13|t*14|t*14L\"")), SIM_OK);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 0), 15);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 1), 13);
    /* pp 4 x vpp 2, uneven chunks: 7+6+7+7 | 7+7+7+8 */
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("vpp=2", "schedule=\"interleaved\"", "global_batch=1024",
                                          "pipeline_layout=\"Et*7|t*6|t*7|t*7|t*7|t*7|t*7|t*8L\"")),
                     SIM_OK);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 1), 13);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 3), 15);
    int first;
    ck_assert_int_eq(cfg_stage_layers(&t.m, &t.s, 3, 1, &first), 8);
    ck_assert_int_eq(first, 48);

    /* every rule, with its message: {mtp_layers override, layout or other key, message} */
    static const struct {
        const char *extra, *set, *msg;
    } bad[] = {
        {NULL, "pipeline_layout=\"Et*14|(t*14|)*2,t*14\"",
         ".pipeline_layout: the loss ('L') must appear once, in the last virtual stage (got 0, none; put one L last)"},
        {NULL, "pipeline_layout=\"t*14|E(t*14|)*2,t*14L\"",
         ".pipeline_layout: the embedding ('E') must appear once, in the first virtual stage (got 1, elsewhere; put "
         "one E first)"},
        {NULL, "pipeline_layout=\"Et*14|t*14|t*28L\"",
         ".pipeline_layout: 3 virtual stages, but pp*vpp = 4*1 = 4 (give 4 stages separated by '|')"},
        {NULL, "pipeline_layout=\"(Et*7|t*7|)*4,L\"",
         ".pipeline_layout: 9 virtual stages, but pp*vpp = 4*1 = 4 (give 4 stages separated by '|')"},
        {NULL, "pipeline_layout=\"Et*14|(t*14|)*2,t*13L\"",
         ".pipeline_layout: 55 transformer layers ('t'), but model 'mixtral-8x22b' has layers=56 (place each layer "
         "once)"},
        {NULL, "pipeline_layout=\"Et*14|(t*14|)*2,t*14mL\"",
         ".pipeline_layout: 1 MTP layers ('m'), but model 'mixtral-8x22b' has mtp_layers=0 (place each once, with "
         "the loss)"},
        {"model.mtp_layers=1", "pipeline_layout=\"Et*14|t*14|t*14m|t*14L\"",
         ".pipeline_layout: MTP layers ('m') on a virtual stage without the loss are not modelled (heptasim runs "
         "them with the output layer; put them in the last virtual stage)"},
        {"first_stage_layers=14", "pipeline_layout=\"Et*14|(t*14|)*2,t*14L\"",
         ".pipeline_layout: a layout places every layer itself and is not combined with first_stage_layers (unset "
         "first_stage_layers, or the layout)"},
        {NULL, "pipeline_layout=\"Et*14|(t*14|*2,t*14L\"",
         ".pipeline_layout: \"Et*14|(t*14|*2,t*14L\": '(' at offset 6 is not closed (write the virtual stages as "
         "runs of E, t, m and L separated by '|', e.g. \"Et*4|(t*4|)*14,tmL\")"},
        {NULL, "pipeline_layout=\"Et*14|d*14|t*14|t*14L\"",
         ".pipeline_layout: \"Et*14|d*14|t*14|t*14L\": unknown character 'd' (the layers are E, t, m and L, '|' ends "
         "a virtual stage) (write the virtual stages as runs of E, t, m and L separated by '|', e.g. "
         "\"Et*4|(t*4|)*14,tmL\")"},
        {NULL, "pipeline_layout=\"(t*1048576)*2\"",
         ".pipeline_layout: \"(t*1048576)*2\": it expands to more than 1048576 characters (write the virtual stages "
         "as runs of E, t, m and L separated by '|', e.g. \"Et*4|(t*4|)*14,tmL\")"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *items[2] = {bad[i].set, bad[i].extra};
        ck_assert_int_eq(mixtral(&t, 0, items, bad[i].extra ? 2 : 1), SIM_EINVAL);
        expect_check_msg("%s", t.s.path, bad[i].msg);
    }
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("pipeline_layout=\"Et*14|(t*14|)2,t*14L\"")), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, "the group at offset 6 has no repeat count"), "%s", E.msg);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("pipeline_layout=\"Et*14|((t*14|)*2),t*14L\"")), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, "nested groups at offset 7"), "%s", E.msg);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("pipeline_layout=\"Et*|t*14|t*14|t*14L\"")), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, "a '*' is not followed by a count"), "%s", E.msg);
}
END_TEST

/* first_stage_layers / last_stage_layers: schema bounds, every cross rule
 * with its exact message, --set, and the JSON written only when set. */
START_TEST(check_uneven_stages)
{
    cfg_strategy s;
    EXPECT_ERR(strat("{\"global_batch\": 8, \"first_stage_layers\": -1}", &s, NULL, 0),
               "strategies/x.json: .first_stage_layers: expected an integer in [0, 16384], got -1");
    EXPECT_ERR(strat("{\"global_batch\": 8}", &s, ITEMS("last_stage_layers=2.5")),
               "--set last_stage_layers=2.5: .last_stage_layers: expected an integer, got 2.5");

    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("pp=1", "dp=0", "schedule=1f1b", "vpp=1", "first_stage_layers=5")), SIM_EINVAL);
    expect_check_msg(".first_stage_layers: first_stage_layers=5 needs pp > 1, got pp=1 (set first_stage_layers to 0, "
                     "or use 2 or more pipeline stages)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("schedule=1f1b", "vpp=1", "first_stage_layers=5")), SIM_EINVAL);
    expect_check_msg(".first_stage_layers: first_stage_layers=5 leaves 91 of layers=96, which the other 15 stages "
                     "cannot share evenly (leave them a multiple of 15 layers)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("schedule=1f1b", "vpp=1", "first_stage_layers=50", "last_stage_layers=40")),
                     SIM_EINVAL);
    expect_check_msg(".first_stage_layers: first_stage_layers + last_stage_layers = 50+40 = 90 leaves 6 of layers=96 "
                     "for the other 14 stages, fewer than one each (leave them at least 14 layers)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("schedule=1f1b", "vpp=1", "last_stage_layers=97")), SIM_EINVAL);
    expect_check_msg(".last_stage_layers: last_stage_layers=97 leaves -1 of layers=96 for the other 15 stages, fewer "
                     "than one each (leave them at least 15 layers)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0,
                         ITEMS("pp=2", "dp=0", "schedule=1f1b", "vpp=1", "first_stage_layers=40",
                               "last_stage_layers=40")),
                     SIM_EINVAL);
    expect_check_msg(".last_stage_layers: first_stage_layers + last_stage_layers = 40+40 = 80, but with pp=2 the two "
                     "stages hold all layers=96 (make them add up to 96)",
                     t.s.path);
    /* interleaved (vpp 2): every stage's layers are cut into vpp chunks */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("first_stage_layers=5", "last_stage_layers=7")), SIM_EINVAL);
    expect_check_msg(".first_stage_layers: 5 is not a multiple of vpp=2 (each stage's layers are cut into vpp model "
                     "chunks; use a multiple of 2)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("first_stage_layers=4", "last_stage_layers=8", "vpp=4")), SIM_EINVAL);
    expect_check_msg(".vpp: 4 does not divide the 6 layers each of the other 14 stages holds (use a divisor of 6, or "
                     "change first_stage_layers or last_stage_layers)",
                     t.s.path);

    /* valid: 4 + 14 x 6 + 8 = 96, in chunks of 2, 3 and 4 layers */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("first_stage_layers=4", "last_stage_layers=8")), SIM_OK);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 0), 4);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 7), 6);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 15), 8);
    ck_assert_int_eq(cfg_layers_per_stage(&t.m, &t.s), 8);
    cJSON *j = cfg_strategy_to_json(&t.s);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(j, "first_stage_layers")->valueint, 4);
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(j, "last_stage_layers")->valueint, 8);
    cJSON_Delete(j);
    /* only the first stage given: the other 15 share 90 */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("schedule=1f1b", "vpp=1", "first_stage_layers=6")), SIM_OK);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 15), 6);
    /* even: the keys are not written */
    ck_assert_int_eq(gpt(&t, 0, NULL, 0), SIM_OK);
    j = cfg_strategy_to_json(&t.s);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "first_stage_layers"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "last_stage_layers"));
    cJSON_Delete(j);

    /* the shipped Llama 3 405B run: 7 + 14 x 8 + 7 on 16,384 H100s */
    ck_assert_int_eq(load_check(&t, "llama3-405b", "dgx-h100", "llama3-405b-h100-16k", 16384, NULL, 0), SIM_OK);
    ck_assert_int_eq(t.s.pp, 16);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 0), 7);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 1), 8);
    ck_assert_int_eq(cfg_stage_layer_total(&t.m, &t.s, 15), 7);
}
END_TEST

START_TEST(check_batch)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("global_batch=1000")), SIM_EINVAL);
    expect_check_msg(".global_batch: 1000 is not a multiple of dp*micro_batch = 16*1 = 16 (use a multiple of 16)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("global_batch=1024", "micro_batch=3")), SIM_EINVAL);
    expect_check_msg(".global_batch: 1024 is not a multiple of dp*micro_batch = 16*3 = 48 (use a multiple of 48)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("global_batch=1048592", "schedule=1f1b", "vpp=1")), SIM_EINVAL);
    expect_check_msg(".global_batch: 65537 micro-batches per step is more than the limit of 65536 (raise micro_batch "
                     "or lower global_batch)",
                     t.s.path);
    /* 65536 micro-batches is allowed (on 16 ranks in 2 stages, a step small
     * enough to simulate) */
    ck_assert_int_eq(gpt(&t, 16, ITEMS("global_batch=65536", "schedule=1f1b", "vpp=1", "pp=2", "dp=1")), SIM_OK);
    ck_assert_int_eq(cfg_micro_batches(&t.s), 65536);
}
END_TEST

START_TEST(check_sequence)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.seq_len=2052")), SIM_EINVAL);
    expect_check_msg(".tp_x: seq_len=2052 of model 'gpt-310b' is not a multiple of the sequence split tp_x*tp_y = "
                     "8*1 = 8 (use a seq_len that is a multiple of 8, or split the sequence less)",
                     t.s.path);
    /* without sequence parallel (and tp_y = 1) the TP ranks hold the whole sequence */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.seq_len=2052", "sequence_parallel=false")), SIM_OK);
    /* ring attention balances causal work with 2*cp_ring chunks */
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.seq_len=2056", "cp_ring=2", "pp=8")), SIM_EINVAL);
    expect_check_msg(".cp_ring: seq_len=2056 of model 'gpt-310b' is not a multiple of the sequence split "
                     "tp_x*tp_y*2*cp_ring = 8*1*4 = 32 (use a seq_len that is a multiple of 32, or split the sequence "
                     "less)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.seq_len=2049", "sequence_parallel=false", "tp_x=4", "cp_ulysses=2")),
                     SIM_EINVAL);
    expect_check_msg(".cp_ulysses: seq_len=2049 of model 'gpt-310b' is not a multiple of the sequence split "
                     "cp_ulysses=2 (use a seq_len that is a multiple of 2, or split the sequence less)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.seq_len=2052", "tp_x=4", "tp_y=2", "sequence_parallel=false")),
                     SIM_EINVAL);
    expect_check_msg(".tp_y: seq_len=2052 of model 'gpt-310b' is not a multiple of the sequence split tp_x*tp_y = "
                     "4*2 = 8 (use a seq_len that is a multiple of 8, or split the sequence less)",
                     t.s.path);
}
END_TEST

START_TEST(check_experts)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("ep=2")), SIM_EINVAL);
    expect_check_msg(".ep: ep=2 needs an MoE model, and model 'gpt-310b' is dense (set ep to 1)", t.s.path);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("ep=3")), SIM_EINVAL);
    expect_check_msg(".ep: 3 does not divide moe.experts=8 (use a divisor of 8)", t.s.path);
    /* the expert groups fold over the tp x cp x dp = 8 x 64 ranks of a stage */
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("ep=128", "model.moe.experts=128")), SIM_EINVAL);
    expect_check_msg(".ep: ep*etp = 128*8 = 1024 does not divide tp_x*tp_y*cp_ring*cp_ulysses*dp = 8*1*1*1*64 = 512, "
                     "the ranks of a pipeline stage the expert groups are folded over (make ep*etp a divisor of 512)",
                     t.s.path);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("ep=128", "etp=1", "model.moe.experts=128")), SIM_OK);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("ep=8")), SIM_OK);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("etp=3")), SIM_EINVAL);
    expect_check_msg(".etp: 3 does not divide moe.ffn_hidden=16384 (use a divisor of 16384)", t.s.path);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("etp=16", "ep=1")), SIM_OK); /* etp above tp: 16 x 32 expert DP */
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("etp=4", "ep=4")), SIM_OK);
    /* Megatron-Core's pipeline check: with pp before dp, expert dp must be dp */
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("ep=8", "order=\"tp_x-tp_y-cp_ulysses-cp_ring-ep-pp-dp\"")), SIM_EINVAL);
    expect_check_msg(".order: \"tp_x-tp_y-cp_ulysses-cp_ring-ep-pp-dp\" numbers the expert ranks (etp 8, ep 8, expert "
                     "dp 8) over other pipeline stages than the dense ranks (Megatron-Core needs pp last in the order, "
                     "or expert dp = dp = 64; put pp last)",
                     t.s.path);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("ep=8", "etp=1", "order=\"tp_x-tp_y-cp_ulysses-cp_ring-ep-pp-dp\"")),
                     SIM_OK);
}
END_TEST

START_TEST(check_fusion_and_7d)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("fuse_tpy_cp=true")), SIM_EINVAL);
    expect_check_msg(".fuse_tpy_cp: needs tp_y > 1 and cp_ulysses > 1, got tp_y=1 and cp_ulysses=1 (set fuse_tpy_cp "
                     "to false)",
                     t.s.path);
    /* a full 7D strategy with dp derived: 2048 / (8*4*2*2*2) = 8 */
    ck_assert_int_eq(gpt(&t, 0,
                         ITEMS("dp=0", "pp=8", "tp_x=4", "tp_y=2", "cp_ulysses=2", "cp_ring=2", "fuse_tpy_cp=true",
                               "order=\"tp_y-cp_ulysses-tp_x-cp_ring-ep-dp-pp\"")),
                     SIM_OK);
    ck_assert_int_eq(t.s.dp, 8);
    ck_assert_int_eq(cfg_world_size(&t.s), 2048);
    ck_assert_int_eq(cfg_tp(&t.s), 8);
    ck_assert_int_eq(cfg_cp(&t.s), 4);
    ck_assert_int_eq(cfg_micro_batches(&t.s), 1024 / 8);
}
END_TEST

/* The embedding and the loss counted as layers (Megatron's
 * account_for_*_in_pipeline_split): Llama 3.1 405B's 126 layers on PP 8 x
 * VPP 8 are (126 + 2) / 64 = 2 places per virtual stage, the first virtual
 * stage (chunk 0 of stage 0) and the last (chunk 7 of stage 7) one layer
 * each; the ranges follow each other in global chunk order and cover all
 * 126 layers once.  With the embedding alone, 127 places do not divide. */
START_TEST(check_embedding_and_loss_as_layers)
{
    cfg_model m;
    memset(&m, 0, sizeof m);
    m.layers = 126;
    cfg_strategy s;
    memset(&s, 0, sizeof s);
    s.pp = 8;
    s.vpp = 8;
    s.schedule = CFG_SCHED_INTERLEAVED;
    s.account_for_embedding_in_pipeline_split = s.account_for_loss_in_pipeline_split = true;
    int next = 0, total = 0;
    for (int g = 0; g < 64; g++) {
        int chunk, stage = cfg_chunk_stage(&s, g, &chunk), first;
        int n = cfg_stage_layers(&m, &s, stage, chunk, &first);
        ck_assert_int_eq(n, g == 0 || g == 63 ? 1 : 2);
        ck_assert_int_eq(first, next);
        next += n;
        total += n;
    }
    ck_assert_int_eq(total, m.layers);
    for (int st = 0; st < 8; st++) ck_assert_int_eq(cfg_stage_layer_total(&m, &s, st), st == 0 || st == 7 ? 15 : 16);

    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("model.layers=126", "pp=8", "vpp=8", "account_for_embedding_in_pipeline_split=true")),
                     SIM_EINVAL);
    expect_check_msg(".account_for_embedding_in_pipeline_split: layers=126 plus the 1 counted as layers = 127, which 64 "
                     "model chunks (pp*chunks per stage) do not divide (use a pp and vpp whose product divides 127)",
                     t.s.path);
}
END_TEST

/* HSDP's rules, one case each: zero 3 only, a divisor of dp x cp (gpt's
 * strategy has dp 16, zero 1), dense models only. */
START_TEST(check_dp_shard)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, ITEMS("dp_shard=4")), SIM_EINVAL);
    expect_check_msg(".dp_shard: hybrid sharding shards the parameters as zero 3 does, got zero 1 (set zero to 3, or "
                     "leave dp_shard out)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("zero=3", "dp_shard=3")), SIM_EINVAL);
    expect_check_msg(".dp_shard: 3 does not divide the data-parallel group dp x cp = 16 (use a divisor of 16)",
                     t.s.path);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("zero=3", "dp_shard=4")), SIM_OK);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("zero=3", "dp_shard=2")), SIM_EINVAL);
    expect_check_msg(".dp_shard: hybrid sharding of the routed experts over expert data parallel is not modelled, and "
                     "model '%s' has experts (leave dp_shard out)",
                     t.s.path, t.m.name);
}
END_TEST

/* The MoE keys' rules, one case each (gpt is dense, its strategy interleaved). */
START_TEST(check_moe_keys)
{
    triple t;
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("overlap_ep_comm=true")), SIM_EINVAL);
    expect_check_msg(".overlap_ep_comm: the expert all-to-all behind another micro-batch's compute is modelled with "
                     "schedule \"interleaved\", \"dualpipe-v\", or \"1f1b\" at pp 1 (Megatron-Core wants virtual "
                     "stages with pp > 1), got \"1f1b\" at pp 4 (use one of those, or set overlap_ep_comm to false)",
                     t.s.path);
    const char *paired_bad[][2] = {{"recompute=full", "recompute \"full\""},
                                   {"recompute_modules=moe", "recompute of the module \"moe\""},
                                   {"moe_dispatcher=allgather", "moe_dispatcher \"allgather\""}};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(mixtral(&t, 0, ITEMS("overlap_ep_comm=true", "schedule=interleaved", "vpp=2", "ep=8",
                                              "etp=1", paired_bad[i][0])),
                         SIM_EINVAL);
        expect_check_msg(".overlap_ep_comm: Megatron-Core's paired 1F1B does not run with %s (drop it, or set "
                         "overlap_ep_comm to false)",
                         t.s.path, paired_bad[i][1]);
    }
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("overlap_ep_comm=true", "schedule=interleaved", "vpp=2", "ep=8", "etp=1")),
                     SIM_OK);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("overlap_shared_experts=true")), SIM_EINVAL);
    expect_check_msg(".overlap_shared_experts: model '%s' has no shared experts (set overlap_shared_experts to "
                     "false)",
                     t.s.path, t.m.name);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("moe_load_imbalance=1.5")), SIM_EINVAL);
    expect_check_msg(".moe_load_imbalance: 1.5 needs an MoE model, and model '%s' is dense (set it to 1)", t.s.path,
                     t.m.name);
    ck_assert_int_eq(gpt(&t, 0, ITEMS("moe_load_imbalance=1")), SIM_OK);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("moe_pad_expert_input_to_capacity=true")), SIM_EINVAL);
    expect_check_msg(".moe_pad_expert_input_to_capacity: pads to a capacity, and moe_capacity_factor gives none (give "
                     "moe_capacity_factor, or set the padding to false)",
                     t.s.path);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("moe_dispatcher=\"flex\"", "etp=2")), SIM_EINVAL);
    expect_check_msg(".moe_dispatcher: \"flex\" (DeepEP, HybridEP) runs the experts whole on each rank, got etp 2 "
                     "(set etp to 1, or use \"alltoall\")",
                     t.s.path);
    ck_assert_int_eq(mixtral(&t, 0, ITEMS("moe_dispatcher=\"flex\"", "etp=1")), SIM_OK);
    /* MXFP8 needs Blackwell: the Ascend platform has no FP8 at all, an H100 no MXFP8 */
    ck_assert_int_eq(load_check(&t, "mixtral-8x22b", "dgx-h100", "mixtral-8x22b-a3-megatron", 2048,
                                ITEMS("fp8=true", "fp8_recipe=\"mxfp8\"")),
                     SIM_EINVAL);
    expect_check_msg(".fp8_recipe: \"mxfp8\" needs MXFP8 tensor cores (Blackwell), and platform 'dgx-h100' has no "
                     "device.mxfp8_peak_tflops in %s (use \"blockwise\" or \"tensorwise\", or give the device its "
                     "MXFP8 peak)",
                     t.s.path, t.p.path);
    ck_assert_int_eq(load_check(&t, "mixtral-8x22b", "hgx-b200", "mixtral-8x22b-a3-megatron", 2048,
                                ITEMS("fp8=true", "fp8_recipe=\"mxfp8\"")),
                     SIM_OK);
}
END_TEST

/* Capacity: dropless takes the imbalance; a capacity c keeps min(imbalance,
 * c) on the busiest rank and drops the rest, 1 - c / imbalance of its
 * copies; padding runs c whatever the load. */
START_TEST(check_expert_capacity)
{
    cfg_strategy s = {.moe_load_imbalance = 1.5};
    ck_assert_double_eq(cfg_expert_load(&s), 1.5);
    ck_assert_double_eq(cfg_expert_dropped(&s), 0);
    s.moe_capacity_factor = 1.25;
    ck_assert_double_eq(cfg_expert_load(&s), 1.25);
    ck_assert_double_eq_tol(cfg_expert_dropped(&s), 1 - 1.25 / 1.5, 1e-15);
    s.moe_load_imbalance = 1;
    ck_assert_double_eq(cfg_expert_load(&s), 1);
    ck_assert_double_eq(cfg_expert_dropped(&s), 0);
    s.moe_pad_expert_input_to_capacity = true;
    ck_assert_double_eq(cfg_expert_load(&s), 1.25);
}
END_TEST

START_TEST(check_structs_built_in_memory)
{
    triple t;
    ck_assert_int_eq(gpt(&t, 0, NULL, 0), SIM_OK);
    cfg_strategy s = t.s;
    s.zero = 5;
    ck_assert_int_eq(cfg_check(&t.m, &t.p, &s, &E), SIM_EINVAL);
    expect_check_msg(".zero: expected an integer in [0, 3], got 5", s.path);
    s = t.s;
    s.order[6] = CFG_DIM_DP;
    ck_assert_int_eq(cfg_check(&t.m, &t.p, &s, &E), SIM_EINVAL);
    expect_check_msg(".order: 'dp' appears twice (name each of tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp once)", s.path);
    s = t.s;
    s.pp = 0;
    ck_assert_int_eq(cfg_check(&t.m, &t.p, &s, &E), SIM_EINVAL);
    expect_check_msg(".pp: expected an integer in [1, 131072], got 0", s.path);
    s = t.s;
    s.moe_capacity_factor = -0.5;
    ck_assert_int_eq(cfg_check(&t.m, &t.p, &s, &E), SIM_EINVAL);
    expect_check_msg(".moe_capacity_factor: expected a number in [0, 1000], got -0.5", s.path);

    cfg_platform p = t.p;
    p.devices = 200000;
    ck_assert_int_eq(cfg_check(&t.m, &p, &t.s, &E), SIM_EINVAL);
    expect_check_msg(".devices: expected an integer in [1, 131072], got 200000", p.path);
    p = t.p;
    p.attention_efficiency = 1.5;
    ck_assert_int_eq(cfg_check(&t.m, &p, &t.s, &E), SIM_EINVAL);
    expect_check_msg(".efficiency.attention: expected a number in [0.0001, 1], got 1.5", p.path);
    p = t.p;
    p.gemm_efficiency.x[2] = p.gemm_efficiency.x[1];
    ck_assert_int_eq(cfg_check(&t.m, &p, &t.s, &E), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, ".efficiency.gemm[2]: flops") != NULL, "%s", E.msg);
    p = t.p;
    p.devices_per_node = 10;
    ck_assert_int_eq(cfg_check(&t.m, &p, &t.s, &E), SIM_EINVAL);
    expect_check_msg(".supernode.devices: 768 is not a multiple of node.devices=10 (use a multiple of 10)", p.path);

    cfg_model m = t.m;
    m.kv_heads = 0;
    ck_assert_int_eq(cfg_check(&m, &t.p, &t.s, &E), SIM_EINVAL);
    expect_check_msg(".kv_heads: expected an integer in [1, 65536], got 0", m.path);
}
END_TEST

/* ---------------------------------------------------------- HuggingFace */

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/heptasim-cfg-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Write text to tmpdir/<dir>/config.json; path gets the file. */
static void write_hf(const char *dir, const char *text, char *path, size_t cap)
{
    char d[128];
    snprintf(d, sizeof d, "%s/%s", tmpdir, dir);
    mkdir(d, 0700);
    snprintf(path, cap, "%s/config.json", d);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void remove_hf(const char *dir)
{
    char p[160];
    snprintf(p, sizeof p, "%s/%s/config.json", tmpdir, dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/%s", tmpdir, dir);
    rmdir(p);
}

/* ------------------------------------------------------------ bases */

/* Write text to tmpdir/<name>; path gets the file. */
static void write_tmp(const char *name, const char *text, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static const char *BASE_PLATFORM =
    "{\"name\": \"b\", \"description\": \"the base\", \"devices\": 16,"
    " \"device\": {\"name\": \"X\", \"peak_tflops\": 100, \"hbm_GiB\": 32, \"hbm_TBps\": 1},"
    " \"node\": {\"devices\": 4}, \"supernode\": {\"devices\": 8, \"fabric_GBps\": 100, \"latency_us\": 1},"
    " \"network\": {\"nic_GBps\": 10, \"latency_us\": 2},"
    " \"efficiency\": {\"gemm\": [[1e6, 0.1], [1e9, 0.5], [1e12, 0.8], [1e13, 0.9]], \"attention\": 0.5,"
    " \"memory\": 0.7, \"network\": 0.8, \"kernel_overhead_us\": 3, \"collective_step_us\": 5},"
    " \"calibration\": {\"cases\": 3, \"rms_error_before\": 0.2, \"rms_error_after\": 0.1}}";

/* Objects merge key by key, anything else the file gives replaces the
 * base's whole (a curve of fewer points is not padded with the base's);
 * name, description and calibration are the file's; chains and shipped
 * names resolve. */
START_TEST(platform_bases_merge)
{
    make_tmpdir();
    char b[160], c[160], g[160], s[160];
    write_tmp("b.json", BASE_PLATFORM, b, sizeof b);
    write_tmp("c.json",
              "{\"base\": \"./b.json\", \"device\": {\"hbm_GiB\": 64},"
              " \"efficiency\": {\"gemm\": [[1e6, 0.2], [1e9, 0.6], [1e12, 0.9]], \"attention\": 0.6}}",
              c, sizeof c);
    mkdir(strcat(strcpy(s, tmpdir), "/sub"), 0700);
    write_tmp("sub/g.json", "{\"base\": \"../c.json\", \"devices\": 8, \"network\": {\"oversubscription\": 2}}", g,
              sizeof g);
    cfg_platform pb, pg;
    ck_assert_msg(cfg_load_platform(b, NULL, 0, &pb, &E) == SIM_OK, "%s", E.msg);
    ck_assert_msg(cfg_load_platform(g, NULL, 0, &pg, &E) == SIM_OK, "%s", E.msg);
    ck_assert_str_eq(pg.name, "g");
    ck_assert_str_eq(pg.description, "");
    ck_assert_int_eq(pg.calibration.cases, 0);
    ck_assert_int_eq(pb.calibration.cases, 3);
    ck_assert_int_eq(pg.devices, 8);
    ck_assert_double_eq(pg.oversubscription, 2);
    ck_assert_double_eq(pg.nic_bytes_per_s, pb.nic_bytes_per_s);           /* network merged key by key */
    ck_assert_double_eq(pg.hbm_bytes, 64 * SIM_GIB);                        /* from c */
    ck_assert_double_eq(pg.peak_flops_per_s, pb.peak_flops_per_s);         /* device merged key by key */
    ck_assert_str_eq(pg.device_name, "X");
    ck_assert_int_eq(pg.gemm_efficiency.n, 3);                              /* the curve replaced whole */
    ck_assert_double_eq(pg.gemm_efficiency.y[2], 0.9);
    ck_assert_double_eq(pg.attention_efficiency, 0.6);
    ck_assert_double_eq(pg.memory_efficiency, pb.memory_efficiency);       /* efficiency inherited per key */
    ck_assert_double_eq(pg.collective_step_s, pb.collective_step_s);
    char chain[CFG_MAX_BASES + 1][CFG_PATH_LEN];
    int n = 0;
    ck_assert_msg(cfg_platform_chain(g, chain, CFG_MAX_BASES + 1, &n, &E) == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(chain[0], g);
    ck_assert(strstr(chain[1], "/sub/../c.json") != NULL);
    ck_assert(strstr(chain[2], "/./b.json") != NULL);

    /* a shipped name: everything but the file's own keys is the preset's */
    char h[160];
    write_tmp("h.json", "{\"base\": \"dgx-h100\"}", h, sizeof h);
    cfg_platform ph, ref;
    ck_assert_msg(cfg_load_platform(h, NULL, 0, &ph, &E) == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(cfg_load_platform("dgx-h100", NULL, 0, &ref, &E), SIM_OK);
    ck_assert_str_eq(ph.name, "h");
    memcpy(ph.name, ref.name, sizeof ph.name);
    memcpy(ph.description, ref.description, sizeof ph.description);
    memcpy(ph.path, ref.path, sizeof ph.path);
    ck_assert(memcmp(&ph, &ref, sizeof ph) == 0);
    /* --set applies to the merged tree */
    const char *items[] = {"platform.efficiency.memory=0.5"};
    cfg_overrides o = {1, items};
    ck_assert_int_eq(cfg_load_platform(g, &o, 0, &pg, &E), SIM_OK);
    ck_assert_double_eq(pg.memory_efficiency, 0.5);
    ck_assert_double_eq(pg.attention_efficiency, 0.6);
    unlink(b), unlink(c), unlink(g), unlink(h), rmdir(s), rmdir(tmpdir);
}
END_TEST

START_TEST(platform_bases_errors)
{
    make_tmpdir();
    char a[160], b[160], c[160], want[1024];
    write_tmp("a.json", "{\"base\": \"b.json\"}", a, sizeof a);
    write_tmp("b.json", "{\"base\": \"a.json\"}", b, sizeof b);
    cfg_platform p;
    snprintf(want, sizeof want,
             "%s: .base: 'a.json' leads back to %s, which this chain of bases holds (a cycle: remove one of the "
             "bases)",
             b, a);
    EXPECT_ERR(cfg_load_platform(a, NULL, 0, &p, &E), want);
    write_tmp("a.json", "{\"base\": \"a.json\"}", a, sizeof a);
    snprintf(want, sizeof want,
             "%s: .base: 'a.json' leads back to %s, which this chain of bases holds (a cycle: remove one of the "
             "bases)",
             a, a);
    EXPECT_ERR(cfg_load_platform(a, NULL, 0, &p, &E), want);
    write_tmp("a.json", "{\"base\": \"no-such-preset\"}", a, sizeof a);
    snprintf(want, sizeof want,
             "%s: .base: platform 'no-such-preset' not found (tried '%s/platforms/no-such-preset.json'; name a "
             "shipped platform, or give a path relative to this file)",
             a, data_dir());
    EXPECT_ERR(cfg_load_platform(a, NULL, 0, &p, &E), want);
    write_tmp("a.json", "{\"base\": [\"dgx-h100\"]}", a, sizeof a);
    snprintf(want, sizeof want,
             "%s: .base: expected the name of a shipped platform or a path relative to this file, got [\"dgx-h100\"]",
             a);
    EXPECT_ERR(cfg_load_platform(a, NULL, 0, &p, &E), want);
    /* a value inherited from a base is reported in the base's file */
    write_tmp("b.json", "{\"base\": \"dgx-h100\", \"efficiency\": {\"memory\": 1.5}}", b, sizeof b);
    write_tmp("a.json", "{\"base\": \"b.json\"}", a, sizeof a);
    snprintf(want, sizeof want, "%s: .efficiency.memory: expected a number in [0.0001, 1], got 1.5", b);
    EXPECT_ERR(cfg_load_platform(a, NULL, 0, &p, &E), want);
    /* a chain longer than CFG_MAX_BASES */
    char names[CFG_MAX_BASES + 2][160];
    for (int i = 0; i <= CFG_MAX_BASES + 1; i++) {
        char nm[32], text[64];
        snprintf(nm, sizeof nm, "l%d.json", i);
        snprintf(text, sizeof text, i <= CFG_MAX_BASES ? "{\"base\": \"l%d.json\"}" : "{\"base\": \"dgx-h100\"}", i + 1);
        write_tmp(nm, text, names[i], sizeof names[i]);
    }
    snprintf(want, sizeof want, "%s: .base: more than %d bases in one chain, from %s (name a base nearer the top)",
             names[CFG_MAX_BASES], CFG_MAX_BASES, names[0]);
    EXPECT_ERR(cfg_load_platform(names[0], NULL, 0, &p, &E), want);
    ck_assert_int_eq(cfg_load_platform(names[2], NULL, 0, &p, &E), SIM_OK); /* CFG_MAX_BASES bases: fine */
    for (int i = 0; i <= CFG_MAX_BASES + 1; i++) unlink(names[i]);
    write_tmp("c.json", "{\"base\": \"b.json\", \"efficiency\": {\"memory\": 0.5}}", c, sizeof c);
    ck_assert_int_eq(cfg_load_platform(c, NULL, 0, &p, &E), SIM_OK); /* the file's value replaces the bad one */
    unlink(a), unlink(b), unlink(c), rmdir(tmpdir);
}
END_TEST

/* Each shipped preset with a base: the base's resolved figures with the
 * file's keys laid over them (a naive merge of the written JSON), and a
 * calibrated preset differs from its base in efficiencies only, keeping
 * the base's GEMM sizes. */
static void naive_merge(cJSON *dst, const cJSON *over)
{
    for (const cJSON *c = over->child; c; c = c->next) {
        cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, c->string);
        if (d && cJSON_IsObject(d) && cJSON_IsObject(c))
            naive_merge(d, c);
        else if (d)
            cJSON_ReplaceItemInObjectCaseSensitive(dst, c->string, cJSON_Duplicate(c, 1));
        else
            cJSON_AddItemToObject(dst, c->string, cJSON_Duplicate(c, 1));
    }
}

START_TEST(shipped_bases_resolve)
{
    static const char *const derived[] = {"dgx-h200", "hgx-b200", "gb200-nvl72", "ascend-910b", "dgx-a100-calibrated",
                                          "dgx-h100-calibrated", "hgx-b200-calibrated", "ascend-910b-calibrated",
                                          "dgx-h100-superpod"};
    for (size_t i = 0; i < sizeof derived / sizeof *derived; i++) {
        char path[CFG_PATH_LEN], *text = NULL;
        ck_assert_int_eq(cfg_resolve("platforms", derived[i], path, sizeof path, &E), SIM_OK);
        ck_assert_int_eq(sim_read_text(path, CFG_MAX_FILE_BYTES, "a platform", &text, &E), SIM_OK);
        cJSON *own = cJSON_Parse(text);
        free(text);
        const cJSON *bn = cJSON_GetObjectItemCaseSensitive(own, "base");
        ck_assert_msg(cJSON_IsString(bn), "%s names no base", derived[i]);
        cfg_platform base, p, q;
        ck_assert_int_eq(cfg_load_platform(bn->valuestring, NULL, 0, &base, &E), SIM_OK);
        ck_assert_msg(cfg_load_platform(derived[i], NULL, 0, &p, &E) == SIM_OK, "%s", E.msg);
        cJSON *tree = cfg_platform_to_json(&base);
        cJSON_DeleteItemFromObjectCaseSensitive(tree, "description");
        cJSON_DeleteItemFromObjectCaseSensitive(tree, "calibration");
        cJSON_DeleteItemFromObjectCaseSensitive(own, "base");
        naive_merge(tree, own);
        char *merged = json_text(tree);
        ck_assert_msg(cfg_parse_platform(merged, path, NULL, 0, &q, &E) == SIM_OK, "%s: %s", derived[i], E.msg);
        ck_assert_msg(memcmp(&p, &q, sizeof p) == 0, "%s: %s", derived[i], merged);
        cJSON_free(merged);
        if (strstr(derived[i], "-calibrated")) {
            ck_assert_int_gt(p.calibration.cases, 0);
            for (const cJSON *k = own->child; k; k = k->next)
                ck_assert_msg(strcmp(k->string, "name") == 0 || strcmp(k->string, "description") == 0 ||
                                  strcmp(k->string, "efficiency") == 0 || strcmp(k->string, "calibration") == 0,
                              "%s: .%s: a calibration changes efficiencies only", derived[i], k->string);
            ck_assert_int_eq(p.gemm_efficiency.n, base.gemm_efficiency.n);
            for (int j = 0; j < p.gemm_efficiency.n; j++)
                ck_assert_double_eq(p.gemm_efficiency.x[j], base.gemm_efficiency.x[j]);
        } else {
            ck_assert_int_eq(p.calibration.cases, 0);
        }
        cJSON_Delete(own);
    }
}
END_TEST

static const char *HF_LLAMA =
    "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"num_hidden_layers\": 4,"
    " \"hidden_size\": 256, \"num_attention_heads\": 8, \"num_key_value_heads\": 2, \"intermediate_size\": 688,"
    " \"vocab_size\": 32000, \"hidden_act\": \"silu\", \"tie_word_embeddings\": true, \"torch_dtype\": \"bfloat16\","
    " \"rope_theta\": 500000.0, \"max_position_embeddings\": 8192, \"rope_scaling\": null, \"head_dim\": null}";

START_TEST(hf_llama)
{
    make_tmpdir();
    char path[256];
    write_hf("tiny-llama", HF_LLAMA, path, sizeof path);
    cfg_model m;
    sim_rc rc = cfg_load_model(path, NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_str_eq(m.name, "tiny-llama");
    ck_assert_int_eq(m.layers, 4);
    ck_assert_int_eq(m.hidden, 256);
    ck_assert_int_eq(m.heads, 8);
    ck_assert_int_eq(m.kv_heads, 2);
    ck_assert_int_eq(m.head_dim, 32);
    ck_assert_int_eq(m.ffn_hidden, 688);
    ck_assert_int_eq(m.vocab, 32000);
    ck_assert_int_eq(m.seq_len, 4096);
    ck_assert_int_eq(m.activation, CFG_ACT_SWIGLU);
    ck_assert(m.tied_embeddings);
    ck_assert_int_eq(m.moe.experts, 0);
    ck_assert_ptr_nonnull(strstr(m.description, "llama"));

    /* a directory holding config.json resolves to it; --set uses heptasim names */
    char dir[160];
    snprintf(dir, sizeof dir, "%s/tiny-llama", tmpdir);
    cfg_overrides o = ovr(ITEMS("model.seq_len=8192", "model.activation=gelu"));
    ck_assert_int_eq(cfg_load_model(dir, &o, &m, &E), SIM_OK);
    ck_assert_int_eq(m.seq_len, 8192);
    ck_assert_int_eq(m.activation, CFG_ACT_GELU);

    /* bad values are reported under their HuggingFace names */
    cfg_model bad;
    char *text = strdup(HF_LLAMA);
    memcpy(strstr(text, "\"num_hidden_layers\": 4"), "\"num_hidden_layers\": 0", 22);
    EXPECT_ERR(cfg_parse_model(text, "hf/config.json", NULL, &bad, &E),
               "hf/config.json: .num_hidden_layers: expected an integer in [1, 16384], got 0");
    free(text);
    EXPECT_ERR(cfg_parse_model("{\"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"intermediate_size\": 8,"
                               " \"vocab_size\": 10}",
                               "hf/config.json", NULL, &bad, &E),
               "hf/config.json: .hidden_size: required key is missing");
    EXPECT_ERR(cfg_parse_model("{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"num_attention_heads\": 2,"
                               " \"intermediate_size\": 8, \"vocab_size\": 10, \"hidden_act\": \"tanh\"}",
                               "hf/config.json", NULL, &bad, &E),
               "hf/config.json: .hidden_act: unsupported activation \"tanh\" (expected silu, gelu, relu or relu2)");
    EXPECT_ERR(cfg_parse_model("{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"num_attention_heads\": 2,"
                               " \"num_key_value_heads\": 3, \"intermediate_size\": 8, \"vocab_size\": 10}",
                               "hf/config.json", NULL, &bad, &E),
               "hf/config.json: .num_key_value_heads: 3 does not divide num_attention_heads=2 (use a divisor of 2)");
    EXPECT_ERR(cfg_parse_model("{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"num_attention_heads\": 2,"
                               " \"intermediate_size\": 8, \"vocab_size\": 10, \"tie_word_embeddings\": 1}",
                               "hf/config.json", NULL, &bad, &E),
               "hf/config.json: .tie_word_embeddings: expected true or false, got 1");
    remove_hf("tiny-llama");
    rmdir(tmpdir);
}
END_TEST

START_TEST(hf_mixtral)
{
    make_tmpdir();
    char path[256];
    write_hf(
        "tiny-mixtral",
        "{\"model_type\": \"mixtral\", \"num_hidden_layers\": 4, \"hidden_size\": 512, \"num_attention_heads\": 8,"
        " \"num_key_value_heads\": 2, \"intermediate_size\": 1024, \"vocab_size\": 32768, \"hidden_act\": \"silu\","
        " \"num_local_experts\": 8, \"num_experts_per_tok\": 2, \"router_aux_loss_coef\": 0.001,"
        " \"tie_word_embeddings\": false, \"torch_dtype\": \"float16\"}",
        path, sizeof path);
    cfg_model m;
    sim_rc rc = cfg_load_model(path, NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_str_eq(m.name, "tiny-mixtral");
    ck_assert_int_eq(m.moe.experts, 8);
    ck_assert_int_eq(m.moe.top_k, 2);
    ck_assert_int_eq(m.moe.ffn_hidden, 1024); /* Mixtral experts are intermediate_size wide */
    ck_assert_int_eq(m.ffn_hidden, 1024);
    ck_assert_int_eq(m.moe.shared_experts, 0);
    ck_assert_int_eq(m.moe.first_dense_layers, 0);
    ck_assert_int_eq(m.moe.layer_freq, 1);
    ck_assert_int_eq(m.dtype_bytes, 2);
    ck_assert(!m.tied_embeddings);
    for (int l = 0; l < m.layers; l++) ck_assert(cfg_is_moe_layer(&m, l));
    remove_hf("tiny-mixtral");

    /* an MoE config needs num_experts_per_tok */
    EXPECT_ERR(cfg_parse_model("{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"num_attention_heads\": 2,"
                               " \"intermediate_size\": 8, \"vocab_size\": 10, \"num_local_experts\": 4}",
                               "hf/config.json", NULL, &m, &E),
               "hf/config.json: .num_experts_per_tok: required key is missing (num_local_experts is set)");
    EXPECT_ERR(cfg_parse_model("{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"num_attention_heads\": 2,"
                               " \"intermediate_size\": 8, \"vocab_size\": 10, \"num_local_experts\": 4,"
                               " \"num_experts_per_tok\": 5}",
                               "hf/config.json", NULL, &m, &E),
               "hf/config.json: .num_experts_per_tok: 5 is more than num_local_experts=4 (use at most 4)");
    rmdir(tmpdir);
}
END_TEST


/* The HF keys of a small model, inside {} (or a text_config). */
#define HF_BASE                                                                                                        \
    "\"num_hidden_layers\": 6, \"hidden_size\": 256, \"num_attention_heads\": 8, \"num_key_value_heads\": 2,"         \
    " \"intermediate_size\": 512, \"vocab_size\": 1000"

START_TEST(hf_architectures)
{
    cfg_model m;
    char path[1024];
    /* DeepSeek-V3's own config.json: MLA, the MTP module, the MoE shape */
    snprintf(path, sizeof path, "%s/models/hf/deepseek-v3/config.json", data_dir());
    sim_rc rc = cfg_load_model(path, NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_str_eq(m.name, "deepseek-v3");
    ck_assert(cfg_is_mla(&m));
    ck_assert_int_eq(m.mla.q_lora_rank, 1536);
    ck_assert_int_eq(m.mla.kv_lora_rank, 512);
    ck_assert_int_eq(m.mla.qk_nope_head_dim, 128);
    ck_assert_int_eq(m.mla.qk_rope_head_dim, 64);
    ck_assert_int_eq(m.mla.v_head_dim, 128);
    ck_assert_int_eq(m.mtp_layers, 1);
    ck_assert_int_eq(m.moe.experts, 256);
    ck_assert_int_eq(m.moe.shared_ffn_hidden, 2048);
    ck_assert_int_eq(m.window.tokens, 0);
    /* no query compression: q_lora_rank null */
    rc = cfg_parse_model("{\"num_hidden_layers\": 6, \"hidden_size\": 256, \"num_attention_heads\": 8,"
                         " \"num_key_value_heads\": 8, \"intermediate_size\": 512, \"vocab_size\": 1000,"
                         " \"kv_lora_rank\": 64, \"q_lora_rank\": null, \"qk_nope_head_dim\": 32,"
                         " \"qk_rope_head_dim\": 16, \"v_head_dim\": 32}",
                         "v2-lite/config.json", NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert(cfg_is_mla(&m) && m.mla.q_lora_rank == 0);
    EXPECT_ERR(cfg_parse_model("{" HF_BASE ", \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"v_head_dim\": 32}",
                               "hf/config.json", NULL, &m, &E),
               "hf/config.json: .qk_rope_head_dim: required key is missing (kv_lora_rank is set)");
    EXPECT_ERR(cfg_parse_model("{" HF_BASE ", \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32,"
                               " \"qk_rope_head_dim\": 16, \"v_head_dim\": 32}",
                               "hf/config.json", NULL, &m, &E),
               "hf/config.json: .num_key_value_heads: 2, but multi-head latent attention has one key/value head per "
               "query head (set num_key_value_heads to num_attention_heads=8 or leave it out)");

    /* Nemotron: relu2 is squared ReLU */
    rc = cfg_parse_model("{" HF_BASE ", \"model_type\": \"nemotron\", \"hidden_act\": \"relu2\"}", "n/config.json",
                         NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(m.activation, CFG_ACT_SQUARED_RELU);

    /* Llama 4: the language model in text_config; dense layers
     * intermediate_size_mlp wide, experts intermediate_size with one
     * shared; MoE every other layer; chunked attention on 3 layers of 4 */
    const char *llama4 =
        "{\"architectures\": [\"Llama4ForConditionalGeneration\"], \"model_type\": \"llama4\","
        " \"torch_dtype\": \"float16\", \"vision_config\": {\"hidden_size\": 88, \"num_hidden_layers\": 2},"
        " \"text_config\": {\"model_type\": \"llama4_text\", \"num_hidden_layers\": 8, \"hidden_size\": 256,"
        " \"num_attention_heads\": 8, \"num_key_value_heads\": 2, \"head_dim\": 32, \"intermediate_size\": 128,"
        " \"intermediate_size_mlp\": 512, \"num_local_experts\": 4, \"num_experts_per_tok\": 1,"
        " \"interleave_moe_layer_step\": 2, \"attention_chunk_size\": 64, \"vocab_size\": 1000,"
        " \"hidden_act\": \"silu\", \"no_rope_layers\": []}}";
    rc = cfg_parse_model(llama4, "llama4/config.json", NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(m.layers, 8);
    ck_assert_int_eq(m.ffn_hidden, 512);
    ck_assert_int_eq(m.moe.ffn_hidden, 128);
    ck_assert_int_eq(m.moe.shared_experts, 1);
    ck_assert_int_eq(m.moe.shared_ffn_hidden, 128);
    ck_assert_int_eq(m.dtype_bytes, 2);
    for (int l = 0; l < 8; l++) {
        ck_assert(cfg_is_moe_layer(&m, l) == (l % 2 == 1));
        ck_assert(cfg_is_window_layer(&m, l) == ((l + 1) % 4 != 0));
    }
    ck_assert_int_eq(m.window.kind, CFG_WINDOW_CHUNKED);
    ck_assert_int_eq(m.window.tokens, 64);
    /* its keys are reported under text_config */
    char *text = strdup(llama4);
    memcpy(strstr(text, "\"hidden_size\": 256"), "\"hidden_size\": -25", 18);
    EXPECT_ERR(cfg_parse_model(text, "llama4/config.json", NULL, &m, &E),
               "llama4/config.json: .text_config.hidden_size: expected an integer in [1, 1048576], got -25");
    free(text);
    text = strdup(llama4);
    memcpy(strstr(text, "\"num_key_value_heads\": 2"), "\"num_key_value_heads\": 3", 24);
    EXPECT_ERR(cfg_parse_model(text, "llama4/config.json", NULL, &m, &E),
               "llama4/config.json: .text_config.num_key_value_heads: 3 does not divide "
               "text_config.num_attention_heads=8 (use a divisor of 8)");
    free(text);

    /* Gemma 3: a sliding window on 5 layers of 6 */
    rc = cfg_parse_model("{\"model_type\": \"gemma3\", \"text_config\": {\"model_type\": \"gemma3_text\", " HF_BASE
                         ", \"sliding_window\": 128, \"sliding_window_pattern\": 6, \"head_dim\": 32}}",
                         "g/config.json", NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert(m.window.tokens == 128 && m.window.full_every == 6 && m.window.kind == CFG_WINDOW_SLIDING);
    /* Mistral: every layer; Qwen: only with use_sliding_window, not in part */
    rc = cfg_parse_model("{" HF_BASE ", \"sliding_window\": 4096}", "mistral/config.json", NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert(m.window.tokens == 4096 && m.window.full_every == 0);
    for (int l = 0; l < m.layers; l++) ck_assert(cfg_is_window_layer(&m, l));
    rc = cfg_parse_model("{" HF_BASE ", \"sliding_window\": 4096, \"use_sliding_window\": false}", "q/config.json",
                         NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK && m.window.tokens == 0, "%s", E.msg);
    EXPECT_ERR(cfg_parse_model("{" HF_BASE ", \"sliding_window\": 64, \"use_sliding_window\": true,"
                               " \"max_window_layers\": 3}",
                               "q/config.json", NULL, &m, &E),
               "q/config.json: .max_window_layers: 3 full layers before windowed ones are not modelled (heptasim "
               "models all layers windowed, or every n-th layer full)");
    /* transformers' layer_types: every 3rd layer full */
    rc = cfg_parse_model("{" HF_BASE ", \"sliding_window\": 64, \"layer_types\": [\"sliding_attention\","
                         " \"sliding_attention\", \"full_attention\", \"sliding_attention\", \"sliding_attention\","
                         " \"full_attention\"]}",
                         "lt/config.json", NULL, &m, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert(m.window.tokens == 64 && m.window.full_every == 3);
    EXPECT_ERR(cfg_parse_model("{" HF_BASE ", \"sliding_window\": 64, \"layer_types\": [\"full_attention\","
                               " \"sliding_attention\", \"full_attention\", \"sliding_attention\","
                               " \"sliding_attention\", \"full_attention\"]}",
                               "lt/config.json", NULL, &m, &E),
               "lt/config.json: .layer_types: this order of full and windowed layers is not modelled (heptasim "
               "models all layers windowed, or every n-th layer full and the others windowed)");
    EXPECT_ERR(cfg_parse_model("{" HF_BASE ", \"layer_types\": [\"linear_attention\", \"full_attention\","
                               " \"full_attention\", \"full_attention\", \"full_attention\", \"full_attention\"]}",
                               "lt/config.json", NULL, &m, &E),
               "lt/config.json: .layer_types[0]: \"linear_attention\" is not modelled (heptasim models "
               "\"full_attention\", \"sliding_attention\" and \"chunked_attention\")");
}
END_TEST

START_TEST(native_architectures)
{
    cfg_model m, back;
    /* a Mixtral without moe.ffn_hidden: experts as wide as the dense MLP */
    const char *mixtral = "{\"layers\": 4, \"hidden\": 256, \"heads\": 8, \"kv_heads\": 2, \"ffn_hidden\": 1024,"
                          " \"vocab\": 1000, \"seq_len\": 128, \"activation\": \"swiglu\","
                          " \"moe\": {\"experts\": 8, \"top_k\": 2}}";
    ck_assert_msg(model(mixtral, &m, NULL, 0) == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(m.moe.ffn_hidden, 1024);
    /* the shipped squared-ReLU model and Mixtral load */
    ck_assert_msg(cfg_load_model("nemotron-4-340b", NULL, &m, &E) == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(m.activation, CFG_ACT_SQUARED_RELU);
    ck_assert_msg(cfg_load_model("mixtral-8x22b", NULL, &m, &E) == SIM_OK, "%s", E.msg);

    /* mla, attention_window and mtp_layers read back as written */
    const char *all = "{\"name\": \"x\", \"layers\": 4, \"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024,"
                      " \"vocab\": 1000, \"seq_len\": 128, \"activation\": \"squared-relu\","
                      " \"mla\": {\"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, \"qk_rope_head_dim\": 16,"
                      " \"v_head_dim\": 32},"
                      " \"attention_window\": {\"tokens\": 32, \"full_every\": 2, \"kind\": \"chunked\"},"
                      " \"mtp_layers\": 2}";
    ck_assert_msg(model(all, &m, NULL, 0) == SIM_OK, "%s", E.msg);
    ck_assert(m.mla.q_lora_rank == 0 && m.mla.kv_lora_rank == 64 && m.window.kind == CFG_WINDOW_CHUNKED);
    cJSON *tree = cfg_model_to_json(&m);
    char *json = cJSON_PrintUnformatted(tree);
    ck_assert_msg(model(json, &back, NULL, 0) == SIM_OK, "%s", E.msg);
    ck_assert(memcmp(&m.mla, &back.mla, sizeof m.mla) == 0);
    ck_assert(memcmp(&m.window, &back.window, sizeof m.window) == 0);
    ck_assert_int_eq(back.mtp_layers, 2);
    ck_assert_int_eq(back.activation, CFG_ACT_SQUARED_RELU);
    cJSON_free(json);
    cJSON_Delete(tree);
    /* the block's keys are checked like any other */
    EXPECT_ERR(model("{\"layers\": 4, \"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024, \"vocab\": 1000,"
                     " \"seq_len\": 128, \"mla\": {\"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32,"
                     " \"v_head_dim\": 32}}",
                     &m, NULL, 0),
               "models/m.json: .mla.qk_rope_head_dim: required key is missing");
    EXPECT_ERR(model(MIN_MODEL, &m, ITEMS("model.attention_window.tokens=64", "model.attention_window.kind=banded")),
               "--set model.attention_window.kind=banded: .attention_window.kind: expected one of \"sliding\", "
               "\"chunked\", got \"banded\"");

    /* 2D TP of MLA is refused by name */
    triple t;
    const char *items[] = {"model.mla.kv_lora_rank=64", "model.mla.qk_nope_head_dim=32",
                           "model.mla.qk_rope_head_dim=16", "model.mla.v_head_dim=32", "tp_y=2", "tp_x=2", "dp=0",
                           "pp=4", "vpp=1", "schedule=1f1b"};
    ck_assert_int_eq(load_check(&t, "gpt-7.5b", "dgx-h100", "gpt-310b-a3-megatron", 64, items, 10), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, ".tp_y: 2, but 2D tensor parallel of multi-head latent attention (model 'gpt-7.5b') is "
                                "not modelled (use tp_y 1)") != NULL,
                  "%s", E.msg);
}
END_TEST

START_TEST(hf_deepseek_matches_shipped)
{
    /* DeepSeekMoE 16B's config.json describes the same model as models/deepseek-moe-16b.json */
    const char *hf = "{\"model_type\": \"deepseek\", \"num_hidden_layers\": 28, \"hidden_size\": 2048,"
                     " \"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"intermediate_size\": 10944,"
                     " \"moe_intermediate_size\": 1408, \"n_routed_experts\": 64, \"num_experts_per_tok\": 6,"
                     " \"n_shared_experts\": 2, \"first_k_dense_replace\": 1, \"moe_layer_freq\": 1,"
                     " \"vocab_size\": 102400, \"hidden_act\": \"silu\", \"tie_word_embeddings\": false,"
                     " \"torch_dtype\": \"bfloat16\", \"scoring_func\": \"softmax\"}";
    cfg_model a, b;
    sim_rc rc = cfg_parse_model(hf, "deepseek-moe-16b/config.json", NULL, &a, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(cfg_load_model("deepseek-moe-16b", NULL, &b, &E), SIM_OK);
    ck_assert_str_eq(a.name, "deepseek-moe-16b");
    ck_assert_int_eq(a.moe.shared_experts, 2);
    ck_assert_int_eq(a.moe.shared_ffn_hidden, 1408);
    ck_assert(!cfg_is_moe_layer(&a, 0));
    ck_assert(cfg_is_moe_layer(&a, 1));
    ck_assert(cfg_is_moe_layer(&a, 27));
    memcpy(a.description, b.description, sizeof a.description);
    memcpy(a.path, b.path, sizeof a.path);
    ck_assert(a.seq_len_assumed && !b.seq_len_assumed); /* the HuggingFace file gives no sequence length */
    a.seq_len_assumed = false;
    ck_assert(memcmp(&a, &b, sizeof a) == 0);

    /* Qwen-style: one shared expert of its own width, sparse step */
    const char *qwen = "{\"model_type\": \"qwen2_moe\", \"num_hidden_layers\": 24, \"hidden_size\": 2048,"
                       " \"num_attention_heads\": 16, \"num_key_value_heads\": 16, \"intermediate_size\": 5632,"
                       " \"moe_intermediate_size\": 1408, \"num_experts\": 60, \"num_experts_per_tok\": 4,"
                       " \"shared_expert_intermediate_size\": 5632, \"decoder_sparse_step\": 2,"
                       " \"vocab_size\": 151936, \"hidden_act\": \"silu\"}";
    rc = cfg_parse_model(qwen, "qwen.json", NULL, &a, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(a.moe.experts, 60);
    ck_assert_int_eq(a.moe.ffn_hidden, 1408);
    ck_assert_int_eq(a.moe.shared_experts, 1);
    ck_assert_int_eq(a.moe.shared_ffn_hidden, 5632);
    ck_assert_int_eq(a.moe.layer_freq, 2);
    ck_assert(cfg_is_moe_layer(&a, 0));
    ck_assert(!cfg_is_moe_layer(&a, 1));
    ck_assert(cfg_is_moe_layer(&a, 2));
}
END_TEST

/* ------------------------------------------------------------ to_json */

/* An overridden strategy is named as such; a name set with --set wins; an
 * imported HuggingFace config says its sequence length was assumed unless
 * --set model.seq_len gives it. */
START_TEST(override_names)
{
    cfg_strategy s;
    cfg_overrides o = ovr(ITEMS("tp_x=4", "model.layers=8", "pp=2"));
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", &o, &s, &E), SIM_OK);
    ck_assert_str_eq(s.name, "gpt-310b-a3-megatron + 2 overrides");
    ck_assert_str_eq(s.description, "");
    o = ovr(ITEMS("tp_x=4"));
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", &o, &s, &E), SIM_OK);
    ck_assert_str_eq(s.name, "gpt-310b-a3-megatron + 1 override");
    o = ovr(ITEMS("tp_x=4", "name=mine"));
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", &o, &s, &E), SIM_OK);
    ck_assert_str_eq(s.name, "mine");
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", NULL, &s, &E), SIM_OK);
    ck_assert_str_eq(s.name, "gpt-310b-a3-megatron");
    ck_assert_str_ne(s.description, "");
    ck_assert_int_eq(cfg_overrides_count(&o, "strategy", NULL), 2);
    ck_assert_int_eq(cfg_overrides_count(&o, "strategy", "name"), 1);
    ck_assert_int_eq(cfg_overrides_count(&o, "model", NULL), 0);

    const char *hf = "{\"num_hidden_layers\": 2, \"hidden_size\": 256, \"num_attention_heads\": 8,"
                     " \"intermediate_size\": 512, \"vocab_size\": 1000, \"hidden_act\": \"silu\"}";
    cfg_model m;
    ck_assert_int_eq(cfg_parse_model(hf, "x/config.json", NULL, &m, &E), SIM_OK);
    ck_assert(m.seq_len_assumed);
    o = ovr(ITEMS("model.layers=4"));
    ck_assert_int_eq(cfg_parse_model(hf, "x/config.json", &o, &m, &E), SIM_OK);
    ck_assert(m.seq_len_assumed);
    o = ovr(ITEMS("model.seq_len=8192"));
    ck_assert_int_eq(cfg_parse_model(hf, "x/config.json", &o, &m, &E), SIM_OK);
    ck_assert(!m.seq_len_assumed);
    ck_assert_int_eq(m.seq_len, 8192);
    ck_assert_int_eq(cfg_load_model("llama3-70b", NULL, &m, &E), SIM_OK);
    ck_assert(!m.seq_len_assumed);
}
END_TEST

START_TEST(json_round_trip)
{
    for (int i = 0; i < NMODELS; i++) {
        cfg_model a, b;
        ck_assert_int_eq(cfg_load_model(MODELS[i], NULL, &a, &E), SIM_OK);
        char *text = json_text(cfg_model_to_json(&a));
        sim_rc rc = cfg_parse_model(text, a.path, NULL, &b, &E);
        ck_assert_msg(rc == SIM_OK, "%s: %s", MODELS[i], E.msg);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: %s", MODELS[i], text);
        cJSON_free(text);
    }
    for (int i = 0; i < 3; i++) {
        cfg_platform a, b;
        ck_assert_int_eq(cfg_load_platform(PLATFORMS[i], NULL, 4096, &a, &E), SIM_OK);
        char *text = json_text(cfg_platform_to_json(&a));
        sim_rc rc = cfg_parse_platform(text, a.path, NULL, 0, &b, &E);
        ck_assert_msg(rc == SIM_OK, "%s: %s", PLATFORMS[i], E.msg);
        ck_assert_int_eq(b.devices, 4096);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: %s", PLATFORMS[i], text);
        cJSON_free(text);
    }
    for (int i = 0; i < NPAIRS; i++) {
        triple t;
        ck_assert_int_eq(load_check(&t, PAIRS[i].model, PAIRS[i].platform, PAIRS[i].strategy, PAIRS[i].devices,
                                    ITEMS("order=tp_x-cp_ring-tp_y-cp_ulysses-ep-dp-pp")),
                         SIM_OK);
        cfg_strategy b;
        char *text = json_text(cfg_strategy_to_json(&t.s));
        sim_rc rc = cfg_parse_strategy(text, t.s.path, NULL, &b, &E);
        ck_assert_msg(rc == SIM_OK, "%s: %s", PAIRS[i].strategy, E.msg);
        ck_assert_msg(memcmp(&t.s, &b, sizeof b) == 0, "%s: %s", PAIRS[i].strategy, text);
        cJSON_free(text);
    }
}
END_TEST

START_TEST(json_keys_and_units)
{
    cfg_platform p;
    ck_assert_int_eq(cfg_load_platform("dgx-a100", NULL, 0, &p, &E), SIM_OK);
    cJSON *j = cfg_platform_to_json(&p);
    cJSON *dev = cJSON_GetObjectItemCaseSensitive(j, "device");
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(dev, "peak_tflops")->valuedouble, 312);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(dev, "hbm_GiB")->valuedouble, 80);
    cJSON *net = cJSON_GetObjectItemCaseSensitive(j, "network");
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(net, "latency_us")->valuedouble, 2);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(net, "nic_GBps")->valuedouble, 25);
    cJSON_Delete(j);

    cfg_model m;
    ck_assert_int_eq(cfg_load_model("gpt-310b", NULL, &m, &E), SIM_OK);
    j = cfg_model_to_json(&m);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "moe")); /* dense: no moe object */
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "activation")->valuestring, "gelu");
    ck_assert_int_eq(cJSON_GetObjectItemCaseSensitive(j, "kv_heads")->valueint, 128);
    cJSON_Delete(j);

    cfg_strategy s;
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", NULL, &s, &E), SIM_OK);
    j = cfg_strategy_to_json(&s);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "schedule")->valuestring, "interleaved");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "recompute")->valuestring, "selective");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "order")->valuestring,
                     "tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "sequence_parallel")));
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring, "gpt-310b-a3-megatron");
    cJSON_Delete(j);
}
END_TEST

/* ------------------------------------------------------- files, names */

START_TEST(resolve_names)
{
    char out[CFG_PATH_LEN], want[CFG_PATH_LEN];
    ck_assert_int_eq(cfg_resolve("models", "gpt-310b", out, sizeof out, &E), SIM_OK);
    snprintf(want, sizeof want, "%s/models/gpt-310b.json", data_dir());
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(cfg_resolve("strategies", want, out, sizeof out, &E), SIM_OK);
    ck_assert_str_eq(out, want);
}
END_TEST

START_TEST(resolve_errors)
{
    char out[CFG_PATH_LEN], want[SIM_ERR_LEN];
    snprintf(want, sizeof want, "heptasim: model 'nope' not found (tried 'nope', '%s/models/nope.json')", data_dir());
    EXPECT_ERR(cfg_resolve("models", "nope", out, sizeof out, &E), want);
    EXPECT_ERR(cfg_resolve("strategies", "no/such.json", out, sizeof out, &E),
               "heptasim: strategy 'no/such.json' not found (tried 'no/such.json')");
    cfg_platform p;
    snprintf(want, sizeof want, "heptasim: platform 'nope' not found (tried 'nope', '%s/platforms/nope.json')",
             data_dir());
    EXPECT_ERR(cfg_load_platform("nope", NULL, 0, &p, &E), want);
}
END_TEST

START_TEST(unreadable_file)
{
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/locked.json", tmpdir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"global_batch\": 8}", f);
    fclose(f);
    chmod(path, 0);
    cfg_strategy s;
    char want[SIM_ERR_LEN];
    if (geteuid() == 0) {
        /* root reads anything: the file loads */
        ck_assert_int_eq(cfg_load_strategy(path, NULL, &s, &E), SIM_OK);
        ck_assert_int_eq(s.global_batch, 8);
    } else {
        snprintf(want, sizeof want, "%s: cannot read the file: Permission denied", path);
        EXPECT_ERR(cfg_load_strategy(path, NULL, &s, &E), want);
    }
    unlink(path);
    rmdir(tmpdir);
}
END_TEST

START_TEST(enum_names_and_helpers)
{
    ck_assert_str_eq(cfg_schedule_name(CFG_SCHED_GPIPE), "gpipe");
    ck_assert_str_eq(cfg_schedule_name(CFG_SCHED_1F1B), "1f1b");
    ck_assert_str_eq(cfg_schedule_name(CFG_SCHED_INTERLEAVED), "interleaved");
    ck_assert_str_eq(cfg_recompute_name(CFG_RECOMP_SELECTIVE), "selective");
    ck_assert_str_eq(cfg_recompute_name(CFG_RECOMP_FULL), "full");
    ck_assert_str_eq(cfg_activation_name(CFG_ACT_SWIGLU), "swiglu");
    ck_assert_str_eq(cfg_dim_name(CFG_DIM_CP_ULYSSES), "cp_ulysses");
    ck_assert_str_eq(cfg_dim_name(CFG_DIM_PP), "pp");

    /* every layer of a dense model is dense; MoE placement follows the keys */
    cfg_model m;
    ck_assert_int_eq(
        model(MIN_MODEL, &m,
              ITEMS("model.layers=8", "model.moe.experts=4", "model.moe.top_k=1", "model.moe.ffn_hidden=64",
                    "model.moe.first_dense_layers=1", "model.moe.layer_freq=2")),
        SIM_OK);
    int moe_layers = 0;
    for (int l = 0; l < m.layers; l++) {
        bool want = l >= 1 && (l - 1) % 2 == 0;
        ck_assert_int_eq(cfg_is_moe_layer(&m, l), want);
        moe_layers += cfg_is_moe_layer(&m, l);
    }
    ck_assert_int_eq(moe_layers, 4);

    /* data dir follows HEPTASIM_DATA */
    char *saved = getenv("HEPTASIM_DATA") ? strdup(getenv("HEPTASIM_DATA")) : NULL;
    setenv("HEPTASIM_DATA", "/some/where", 1);
    ck_assert_str_eq(cfg_data_dir(), "/some/where");
    if (saved) {
        setenv("HEPTASIM_DATA", saved, 1);
        free(saved);
    } else {
        unsetenv("HEPTASIM_DATA");
    }
}
END_TEST

/* ------------------------------------------------------------- suite */

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("shipped");
    tcase_add_test(tc, shipped_models_load);
    tcase_add_test(tc, shipped_platforms_load);
    tcase_add_test(tc, shipped_strategies_check);
    tcase_add_test(tc, etp_defaults_to_tp);
    tcase_add_test(tc, shipped_default_strategy_shape);
    suite_add_tcase(s, tc);

    tc = tcase_create("defaults_units");
    tcase_add_test(tc, strategy_defaults);
    tcase_add_test(tc, model_defaults);
    tcase_add_test(tc, platform_defaults);
    tcase_add_test(tc, units_are_si);
    suite_add_tcase(s, tc);

    tc = tcase_create("schema_errors");
    tcase_add_test(tc, strategy_value_errors);
    tcase_add_test(tc, unknown_and_duplicate_keys);
    tcase_add_test(tc, model_errors);
    tcase_add_test(tc, platform_errors);
    tcase_add_test(tc, curve_errors);
    tcase_add_test(tc, order_errors);
    tcase_add_test(tc, malformed_json);
    suite_add_tcase(s, tc);

    tc = tcase_create("overrides");
    tcase_add_test(tc, overrides_apply);
    tcase_add_test(tc, override_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("check");
    tcase_add_test(tc, check_world_size);
    tcase_add_test(tc, check_heads_and_widths);
    tcase_add_test(tc, check_pipeline);
    tcase_add_test(tc, stage_layer_ranges);
    tcase_add_test(tc, pipeline_layout_ranges);
    tcase_add_test(tc, check_pipeline_layout);
    tcase_add_test(tc, check_uneven_stages);
    tcase_add_test(tc, check_batch);
    tcase_add_test(tc, check_sequence);
    tcase_add_test(tc, check_experts);
    tcase_add_test(tc, check_fusion_and_7d);
    tcase_add_test(tc, check_moe_keys);
    tcase_add_test(tc, check_dp_shard);
    tcase_add_test(tc, check_expert_capacity);
    tcase_add_test(tc, check_embedding_and_loss_as_layers);
    tcase_add_test(tc, check_structs_built_in_memory);
    suite_add_tcase(s, tc);

    tc = tcase_create("huggingface");
    tcase_add_test(tc, hf_llama);
    tcase_add_test(tc, hf_mixtral);
    tcase_add_test(tc, hf_deepseek_matches_shipped);
    tcase_add_test(tc, hf_architectures);
    tcase_add_test(tc, native_architectures);
    suite_add_tcase(s, tc);

    tc = tcase_create("json_files");
    tcase_add_test(tc, json_round_trip);
    tcase_add_test(tc, override_names);
    tcase_add_test(tc, json_keys_and_units);
    tcase_add_test(tc, resolve_names);
    tcase_add_test(tc, resolve_errors);
    tcase_add_test(tc, platform_bases_merge);
    tcase_add_test(tc, platform_tiers);
    tcase_add_test(tc, platform_bases_errors);
    tcase_add_test(tc, shipped_bases_resolve);
    tcase_add_test(tc, unreadable_file);
    tcase_add_test(tc, enum_names_and_helpers);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(config_suite());
}
