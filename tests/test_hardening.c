/* test_hardening.c - bad input that once got through, kept as regression
 * cases: error messages stay on one line whatever bytes the input holds
 * (keys, quoted text, --set items, command-line arguments, file names), a
 * derived head_dim stays within its bound, and a step too large for the
 * machine is refused up front by the engine (layer-step limit at its exact
 * boundary, address-space limit), counting the ranks it really simulates,
 * with a size estimate that agrees with the number of instructions the
 * simulator really runs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "cli/options.h"
#include "config/config.h"
#include "cost/cost.h"
#include "runner/runner.h"
#include "lib/check_run.h"

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

/* Loads the small model and strategy text with the items on dgx-a100 with
 * `devices` into c (checked); message in E. */
static sim_rc load_case(run_case *c, const char *const *items, int n, int devices)
{
    cfg_overrides ov = {n, items};
    memset(c, 0, sizeof *c);
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model(MODEL, "models/m.json", &ov, &c->model, &E);
    if (rc == SIM_OK) rc = cfg_load_platform("dgx-a100", &ov, devices, &c->platform, &E);
    if (rc == SIM_OK) rc = cfg_parse_strategy(STRATEGY, "strategies/s.json", &ov, &c->strategy, &E);
    if (rc == SIM_OK) rc = cfg_check(&c->model, &c->platform, &c->strategy, &E);
    return rc;
}

/* load_case, then the engine's replay check with `symmetry`. */
static sim_rc load_replay(const char *const *items, int n, int devices, eng_symmetry symmetry)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    sim_rc rc = load_case(c, items, n, devices);
    eng_options opt = {.symmetry = symmetry};
    if (rc == SIM_OK) rc = runner_check_replay(c, &opt, &E);
    free(c);
    return rc;
}

/* The footprint of the small case with the items, with `symmetry`. */
static eng_footprint footprint(const char *const *items, int n, int devices, eng_symmetry symmetry)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(load_case(c, items, n, devices) == SIM_OK, "%s", E.msg);
    cost_model *cost = cost_new(&c->platform, &E);
    ck_assert_ptr_nonnull(cost);
    wl_plan *plan = NULL;
    ck_assert_msg(wl_plan_new(&c->model, &c->platform, &c->strategy, cost, &plan, &E) == SIM_OK, "%s", E.msg);
    eng_options opt = {.symmetry = symmetry};
    eng_footprint fp;
    eng_replay_footprint(&c->platform, plan, &opt, &fp);
    wl_plan_free(plan);
    cost_free(cost);
    free(c);
    return fp;
}

/* 8 ranks x 65536 micro-batches x 128 layers = 2^26 layer steps: the
 * largest step accepted; one more layer is refused.  cfg_check, which
 * knows nothing of replaying, takes both. */
START_TEST(layer_step_limit_boundary)
{
    const char *at[] = {"model.layers=128", "pp=1", "tp_x=1", "dp=8", "global_batch=524288"};
    ck_assert_msg(load_replay(at, 5, 8, ENG_SYM_NONE) == SIM_OK, "%s", E.msg);
    const char *over[] = {"model.layers=129", "pp=1", "tp_x=1", "dp=8", "global_batch=524288"};
    ASSERT_ONE_LINE_ERROR(load_replay(over, 5, 8, ENG_SYM_NONE),
                          "strategies/s.json: .global_batch: 8 ranks x 65536 micro-batches x 129 layers per stage = "
                          "6.76e+07 layer steps to simulate");
    ck_assert_ptr_nonnull(strstr(E.msg, "more than the limit of 67108864"));
    run_case *c = calloc(1, sizeof *c);
    ck_assert_int_eq(load_case(c, over, 5, 8), SIM_OK);
    free(c);
    /* the shipped default (2048 ranks, TP 8, DP 16) with 72 layers per
     * stage at the limit of 65536 micro-batches: one rank per stage is
     * simulated, 16 x 65536 x 72 = 7.5e7 layer steps, days of simulation */
    const char *big[] = {"global_batch=1048576", "schedule=1f1b", "vpp=1", "model.layers=1152"};
    cfg_overrides ov = {4, big};
    c = calloc(1, sizeof *c);
    memset(&E, 0, sizeof E);
    ck_assert_int_eq(cfg_load_model("gpt-310b", &ov, &c->model, &E), SIM_OK);
    ck_assert_int_eq(cfg_load_platform("ascend-a3-2048", &ov, 0, &c->platform, &E), SIM_OK);
    ck_assert_int_eq(cfg_load_strategy("gpt-310b-a3-megatron", &ov, &c->strategy, &E), SIM_OK);
    ck_assert_int_eq(cfg_check(&c->model, &c->platform, &c->strategy, &E), SIM_OK);
    ck_assert_int_eq(runner_check_replay(c, NULL, &E), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, ".global_batch: 16 ranks simulated of 2048 devices x 65536 micro-batches x 72 layers "
                                "per stage"),
                  "%s", E.msg);
    free(c);
}
END_TEST

/* The layer steps count the ranks the engine simulates: 8 devices in TP
 * groups of 2 at 2^26 layer steps per simulated rank set (4 x 65536 x
 * 256) are accepted in lockstep (one class of all 8: 2^24) and refused
 * with every rank simulated. */
START_TEST(layer_steps_count_simulated_ranks)
{
    const char *items[] = {"model.layers=256", "pp=1", "tp_x=2", "dp=4", "global_batch=262144"};
    ck_assert_msg(load_replay(items, 5, 8, ENG_SYM_TP) == SIM_OK, "%s", E.msg);
    ASSERT_ONE_LINE_ERROR(load_replay(items, 5, 8, ENG_SYM_NONE),
                          "strategies/s.json: .global_batch: 8 ranks x 65536 micro-batches x 256 layers per stage");
    eng_footprint tp = footprint(items, 5, 8, ENG_SYM_TP), none = footprint(items, 5, 8, ENG_SYM_NONE);
    ck_assert_int_eq(tp.devices, 8);
    ck_assert_int_eq(tp.ranks_simulated, 1);
    ck_assert_int_eq(tp.lockstep, 8);
    ck_assert_int_eq(none.ranks_simulated, 8);
    ck_assert_int_eq(tp.layer_steps, 1LL * 65536 * 256);
    ck_assert_int_eq(none.layer_steps, 8 * tp.layer_steps);
    /* one data-parallel replica for all: the two ranks of one TP group */
    eng_footprint dp = footprint(items, 5, 8, ENG_SYM_DP);
    ck_assert_int_eq(dp.ranks_simulated, 1);
    ck_assert_int_eq(dp.replicas, 4);
    /* every device in the platform costs its host (reduced to classes:
     * the simulated ranks' devices alone); every simulated rank its actors */
    double host = ENG_DEVICE_RESIDENT_BYTES, base = ENG_BASE_RESIDENT_BYTES;
    ck_assert_double_eq_tol(none.resident_bytes, base + 8 * (host + ENG_RANK_RESIDENT_BYTES), 1e-6);
    ck_assert_double_eq_tol(tp.resident_bytes, base + host + ENG_RANK_RESIDENT_BYTES + ENG_MIRROR_RESIDENT_BYTES, 1e-6);
    ck_assert_double_eq_tol(dp.resident_bytes, base + 8 * host + ENG_RANK_RESIDENT_BYTES + ENG_MIRROR_RESIDENT_BYTES,
                            1e-6);
}
END_TEST

/* 131072 ranks with every rank simulated need about 37 GiB of address
 * space: refused under a 16 GiB ulimit -v (or, on a small machine, for lack
 * of memory), not attempted.  One rank for all (TP 8 and DP over the NICs
 * are alike everywhere) needs the platform's hosts alone. */
START_TEST(address_space_limit)
{
#if defined(__SANITIZE_ADDRESS__)
    return; /* AddressSanitizer's shadow memory needs more than the limit */
#endif
    const char *items[] = {"tp_x=8", "pp=1", "dp=0", "global_batch=16384"};
    eng_footprint tp = footprint(items, 4, 131072, ENG_SYM_TP), none = footprint(items, 4, 131072, ENG_SYM_NONE);
    ck_assert_int_eq(tp.ranks_simulated, 1);
    ck_assert(none.address_bytes > 16.0 * SIM_GIB && tp.address_bytes < 16.0 * SIM_GIB);
    struct rlimit rl = {16ULL << 30, 16ULL << 30};
    struct rlimit old;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < rl.rlim_max) rl.rlim_cur = rl.rlim_max = old.rlim_max;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
    char prefix[CFG_PATH_LEN + 80];
    snprintf(prefix, sizeof prefix, "%s/platforms/dgx-a100.json: .devices: simulating 131072 devices needs about ",
             cfg_data_dir());
    ASSERT_ONE_LINE_ERROR(load_replay(items, 4, 131072, ENG_SYM_NONE), prefix);
    /* 8 devices are fine under the same limit */
    ck_assert_msg(load_replay(NULL, 0, 8, ENG_SYM_NONE) == SIM_OK, "%s", E.msg);
}
END_TEST

/* The refusal counts layer steps and names ~ENG_INSTR_PER_LAYER_STEP
 * instructions each: the simulator's own count must agree within 2x, and
 * the footprint's simulated ranks are the engine's. */
static void check_estimate(const char **items, int n, int devices)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    ck_assert_msg(load_case(c, items, n, devices) == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(runner_simulate_here(c, NULL), SIM_OK);
    eng_footprint fp = footprint(items, n, devices, ENG_SYM_TP);
    ck_assert_int_eq(fp.ranks_simulated, c->result.ranks_simulated);
    ck_assert_int_eq(fp.lockstep, c->result.lockstep);
    double per = (double)c->result.instructions / (double)fp.layer_steps;
    ck_assert_msg(per >= ENG_INSTR_PER_LAYER_STEP / 2.0 && per <= ENG_INSTR_PER_LAYER_STEP * 2.0,
                  "%.1f instructions per layer step, estimate %d", per, ENG_INSTR_PER_LAYER_STEP);
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
    tcase_add_test(tc, layer_steps_count_simulated_ranks);
    tcase_add_test(tc, address_space_limit);
    tcase_add_test(tc, estimate_dense);
    tcase_add_test(tc, estimate_context_parallel);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(hardening_suite());
}
