/* test_hardening.c - bad input that once got through, kept as regression
 * cases: error messages stay on one line whatever bytes the input holds
 * (keys, quoted text, --set items, command-line arguments, file names), a
 * derived head_dim stays within its bound, and a step too large for the
 * machine is refused up front (layer-step limit at its exact boundary,
 * address-space limit), with a size estimate that agrees with the number
 * of instructions the simulator really runs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/options.h"
#include "config/config.h"
#include "config/config_int.h"
#include "runner/runner.h"

static sim_err E;

static const char *const MODEL = "{\"name\": \"small\", \"layers\": 4, \"hidden\": 256, \"heads\": 8, "
                                 "\"ffn_hidden\": 1024, \"vocab\": 1000, \"seq_len\": 512}";
static const char *const STRATEGY = "{\"name\": \"small\", \"dp\": 0, \"pp\": 2, \"tp_x\": 2, \"global_batch\": 16, "
                                    "\"schedule\": \"1f1b\"}";

/* True when msg is one line of printable characters. */
static bool one_line(const char *msg)
{
    if (!msg[0]) return false;
    for (const char *c = msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) return false;
    return true;
}

#define ASSERT_ONE_LINE_ERROR(rc, prefix)                                                        \
    do {                                                                                         \
        ck_assert_int_eq((rc), SIM_EINVAL);                                                      \
        ck_assert_msg(one_line(E.msg), "not one line: [%s]", E.msg);                             \
        ck_assert_msg(strncmp(E.msg, (prefix), strlen(prefix)) == 0, "[%s] does not start with [%s]", E.msg, \
                      (prefix));                                                                 \
    } while (0)

/* Loads the small model and strategy text with the items, dgx-a100 with
 * `devices`, and cross-checks them; message in E. */
static sim_rc load_check(const char *model_json, const char *strategy_json, int devices, const char **items, int n,
                         cfg_strategy *s_out)
{
    cfg_overrides ov = {n, items};
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model(model_json, "models/m.json", &ov, &m, &E);
    if (rc == SIM_OK) rc = cfg_load_platform("dgx-a100", &ov, devices, &p, &E);
    if (rc == SIM_OK) rc = cfg_parse_strategy(strategy_json, "strategies/s.json", &ov, &s, &E);
    if (rc == SIM_OK) rc = cfg_check(&m, &p, &s, &E);
    if (rc == SIM_OK && s_out) *s_out = s;
    return rc;
}

/* ------------------------------------------------------- one-line messages */

/* Found by fuzzing: a JSON key holding a newline was echoed as is. */
START_TEST(key_with_newline)
{
    cfg_model m;
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model("{\"lay\\ners\": 4}", "models/m.json", NULL, &m, &E);
    ASSERT_ONE_LINE_ERROR(rc, "models/m.json: .lay?ers: unknown key");
}
END_TEST

/* Found by fuzzing: the quote of malformed JSON kept tabs and control bytes. */
START_TEST(malformed_quote_with_control_bytes)
{
    cfg_strategy s;
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_strategy("{\"name\": x\t\001\002}", "strategies/s.json", NULL, &s, &E);
    ASSERT_ONE_LINE_ERROR(rc, "strategies/s.json: malformed JSON near line 1: at 'x???}'");
}
END_TEST

START_TEST(set_item_with_newline)
{
    const char *items[] = {"tp_x\n=2"};
    ASSERT_ONE_LINE_ERROR(load_check(MODEL, STRATEGY, 8, items, 1, NULL), "--set tp_x?=2: .tp_x?: unknown key");
}
END_TEST

START_TEST(origin_with_newline)
{
    cfg_model m;
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model("{\"layers\": 0}", "models/a\nb.json", NULL, &m, &E);
    ASSERT_ONE_LINE_ERROR(rc, "models/a?b.json: .layers: expected an integer in [1, 16384], got 0");
}
END_TEST

/* Found by fuzzing: an unknown option holding a control byte. */
START_TEST(argument_with_newline)
{
    static cli_args a;
    char *argv[] = {"heptasim", "run", "--fr\nob", NULL};
    memset(&a, 0, sizeof a);
    memset(&E, 0, sizeof E);
    sim_rc rc = cli_parse(3, argv, 2, CLI_OPT_INPUTS, "run", &a, &E);
    ASSERT_ONE_LINE_ERROR(rc, "heptasim run: unknown option '--fr?ob'");
    char *argv2[] = {"heptasim", "run", "--devices", "1\t2", NULL};
    rc = cli_parse(4, argv2, 2, CLI_OPT_INPUTS, "run", &a, &E);
    ASSERT_ONE_LINE_ERROR(rc, "heptasim run: option '--devices' expects a whole number in [1, 131072], got '1?2'");
}
END_TEST

/* ------------------------------------------------------------- head_dim */

/* Found by fuzzing: hidden/heads above the head_dim bound loaded, and was
 * then refused by cfg_check as ".head_dim", a key not in the file. */
START_TEST(derived_head_dim_bound)
{
    cfg_model m;
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model("{\"layers\": 4, \"hidden\": 131072, \"heads\": 1, \"ffn_hidden\": 1024, "
                                "\"vocab\": 1000, \"seq_len\": 512}",
                                "models/m.json", NULL, &m, &E);
    ASSERT_ONE_LINE_ERROR(rc, "models/m.json: .heads: hidden/heads = 131072/1 = 131072 is more than the largest "
                              "head_dim 65536");
    /* at the bound it loads, and passes the cross checks' schema again */
    const char *items[] = {"model.hidden=65536", "model.heads=1", "tp_x=1", "pp=1"};
    ck_assert_msg(load_check(MODEL, STRATEGY, 8, items, 4, NULL) == SIM_OK, "%s", E.msg);
}
END_TEST

/* Found by fuzzing: 1e999 (infinite) FLOPs in the GEMM curve loaded, and
 * the cost model then refused the platform. */
START_TEST(infinite_curve_point)
{
    const char *items[] = {"platform.efficiency.gemm=[[1,0.1],[10,0.2],[1e999,0.3]]"};
    cfg_overrides ov = {1, items};
    cfg_platform p;
    memset(&E, 0, sizeof E);
    ASSERT_ONE_LINE_ERROR(cfg_load_platform("dgx-a100", &ov, 8, &p, &E),
                          "--set platform.efficiency.gemm=[[1,0.1],[10,0.2],[1e999,0.3]]: .efficiency.gemm[2]: flops "
                          "inf is too large (use a finite number)");
}
END_TEST

/* ------------------------------------------------------- simulation size */

/* 8 ranks x 65536 micro-batches x 128 layers = 2^26 layer steps: the
 * largest step accepted; one more layer is refused. */
START_TEST(layer_step_limit_boundary)
{
    const char *at[] = {"model.layers=128", "pp=1", "tp_x=1", "dp=8", "global_batch=524288"};
    ck_assert_msg(load_check(MODEL, STRATEGY, 8, at, 5, NULL) == SIM_OK, "%s", E.msg);
    const char *over[] = {"model.layers=129", "pp=1", "tp_x=1", "dp=8", "global_batch=524288"};
    ASSERT_ONE_LINE_ERROR(load_check(MODEL, STRATEGY, 8, over, 5, NULL),
                          "strategies/s.json: .global_batch: 8 ranks x 65536 micro-batches x 129 layers per stage = "
                          "6.76e+07 layer steps to simulate");
    ck_assert_ptr_nonnull(strstr(E.msg, "more than the limit of 67108864"));
    /* the shipped default (2048 ranks, 6 layers per stage) at the limit of
     * 65536 micro-batches: 8e8 layer steps, days of simulation */
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
    const char *big[] = {"global_batch=1048576", "schedule=1f1b", "vpp=1"};
    cfg_overrides ov = {3, big};
    memset(&E, 0, sizeof E);
    ck_assert_int_eq(cfg_load_model("gpt-310b", &ov, &m, &E), SIM_OK);
    ck_assert_int_eq(cfg_load_platform("ascend-a3-2048", &ov, 0, &p, &E), SIM_OK);
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", &ov, &s, &E), SIM_OK);
    ck_assert_int_eq(cfg_check(&m, &p, &s, &E), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, ".global_batch: 2048 ranks x 65536 micro-batches x 6 layers per stage"), "%s", E.msg);
}
END_TEST

/* 131072 ranks need about 40 GiB of address space: refused under a 16 GiB
 * ulimit -v (or, on a small machine, for lack of memory), not attempted. */
START_TEST(address_space_limit)
{
#if defined(__SANITIZE_ADDRESS__)
    return; /* AddressSanitizer's shadow memory needs more than the limit */
#endif
    struct rlimit rl = {16ULL << 30, 16ULL << 30};
    struct rlimit old;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < rl.rlim_max) rl.rlim_cur = rl.rlim_max = old.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
    const char *items[] = {"tp_x=8", "pp=1", "dp=0", "global_batch=16384"};
    char prefix[CFG_PATH_LEN + 80];
    snprintf(prefix, sizeof prefix, "%s/platforms/dgx-a100.json: .devices: simulating 131072 devices needs about ",
             cfg_data_dir());
    ASSERT_ONE_LINE_ERROR(load_check(MODEL, STRATEGY, 131072, items, 4, NULL), prefix);
    /* 8 devices are fine under the same limit */
    ck_assert_msg(load_check(MODEL, STRATEGY, 8, NULL, 0, NULL) == SIM_OK, "%s", E.msg);
}
END_TEST

/* The refusal counts layer steps and names ~CFG_INSTR_PER_LAYER_STEP
 * instructions each: the simulator's own count must agree within 2x. */
static void check_estimate(const char **items, int n, int devices)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    cfg_overrides ov = {n, items};
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model(MODEL, "models/m.json", &ov, &c->model, &E);
    if (rc == SIM_OK) rc = cfg_load_platform("dgx-a100", &ov, devices, &c->platform, &E);
    if (rc == SIM_OK) rc = cfg_parse_strategy(STRATEGY, "strategies/s.json", &ov, &c->strategy, &E);
    if (rc == SIM_OK) rc = cfg_check(&c->model, &c->platform, &c->strategy, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(runner_simulate_here(c, NULL), SIM_OK);
    double steps = (double)devices * cfg_micro_batches(&c->strategy) * cfg_layers_per_stage(&c->model, &c->strategy);
    /* instructions of every rank, also those a lockstep run stood for */
    double per = (double)c->result.instructions * c->result.lockstep / steps;
    ck_assert_msg(per >= CFG_INSTR_PER_LAYER_STEP / 2.0 && per <= CFG_INSTR_PER_LAYER_STEP * 2.0,
                  "%.1f instructions per layer step, estimate %d", per, CFG_INSTR_PER_LAYER_STEP);
    free(c);
}

START_TEST(estimate_dense)
{
    const char *items[] = {"global_batch=8"}; /* 8 devices: tp 2, pp 2, dp 2, 4 micro-batches */
    check_estimate(items, 1, 8);
}
END_TEST

START_TEST(estimate_context_parallel)
{
    const char *items[] = {"global_batch=8", "cp_ring=2", "tp_x=1", "sequence_parallel=true"};
    check_estimate(items, 4, 8);
}
END_TEST

static Suite *hardening_suite(void)
{
    Suite *s = suite_create("hardening");
    TCase *tc = tcase_create("one_line");
    tcase_add_test(tc, key_with_newline);
    tcase_add_test(tc, malformed_quote_with_control_bytes);
    tcase_add_test(tc, set_item_with_newline);
    tcase_add_test(tc, origin_with_newline);
    tcase_add_test(tc, argument_with_newline);
    tcase_add_test(tc, derived_head_dim_bound);
    tcase_add_test(tc, infinite_curve_point);
    suite_add_tcase(s, tc);

    tc = tcase_create("size");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, layer_step_limit_boundary);
    tcase_add_test(tc, address_space_limit);
    tcase_add_test(tc, estimate_dense);
    tcase_add_test(tc, estimate_context_parallel);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(hardening_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
