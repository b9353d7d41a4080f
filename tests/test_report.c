/* test_report.c - derived metrics, the JSON document (keys, types, values,
 * determinism, memory-only form, write errors), the text summaries, a sweep
 * record read back with the caller's space names, and a study's rows. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/keys.h"
#include "report/report.h"
#include "lib/check_run.h"

/* ------------------------------------------------------------ fixtures */

static cfg_model model;
static cfg_platform platform;
static cfg_strategy strategy;
static eng_result sim;
static rpt_run run;

static void fill_model(cfg_model *m)
{
    memset(m, 0, sizeof *m);
    strcpy(m->name, "gpt-tiny");
    m->layers = 8;
    m->hidden = 1024;
    m->heads = 16;
    m->kv_heads = 16;
    m->head_dim = 64;
    m->ffn_hidden = 4096;
    m->vocab = 32000;
    m->seq_len = 2048;
    m->activation = CFG_ACT_GELU;
    m->dtype_bytes = 2;
}

static void fill_platform(cfg_platform *p)
{
    memset(p, 0, sizeof *p);
    strcpy(p->name, "dgx-test");
    p->devices = 16;
    strcpy(p->device_name, "a100");
    p->peak_flops_per_s = 312e12;
    p->hbm_bytes = 80.0 * SIM_GIB;
    p->hbm_reserved_bytes = 4.0 * SIM_GIB;
    p->hbm_bytes_per_s = 2e12;
    p->devices_per_node = 8;
    p->devices_per_supernode = 8;
    p->fabric_bytes_per_s = 300e9;
    p->nic_bytes_per_s = 25e9;
    p->oversubscription = 1;
    p->gemm_efficiency.n = 2;
    p->gemm_efficiency.x[0] = 1e9;
    p->gemm_efficiency.y[0] = 0.5;
    p->gemm_efficiency.x[1] = 1e12;
    p->gemm_efficiency.y[1] = 0.8;
    p->attention_efficiency = 0.6;
    p->memory_efficiency = 0.8;
    p->network_efficiency = 0.9;
}

static void fill_strategy(cfg_strategy *s)
{
    static const cfg_dim order[CFG_NDIMS] = {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING,
                                             CFG_DIM_EP,   CFG_DIM_DP,   CFG_DIM_PP};
    memset(s, 0, sizeof *s);
    strcpy(s->name, "tiny-megatron");
    s->dp = 2;
    s->pp = 2;
    s->tp_x = 4;
    s->tp_y = 1;
    s->cp_ring = 1;
    s->cp_ulysses = 1;
    s->ep = 1;
    s->etp = 1;
    s->vpp = 1;
    s->schedule = CFG_SCHED_1F1B;
    s->micro_batch = 1;
    s->global_batch = 64;
    s->sequence_parallel = true;
    s->recompute = CFG_RECOMP_SELECTIVE;
    s->zero = 1;
    s->overlap_grad_reduce = true;
    memcpy(s->order, order, sizeof order);
    s->moe_capacity_factor = 0;
}

/* A step of 2 s whose critical rank is 13 (stage 1 with the default order:
 * 13 / (tp 4 * dp 2) = 1). */
static void fill_sim(eng_result *r)
{
    memset(r, 0, sizeof *r);
    r->step_time_s = 2.0;
    r->critical_rank = 13;
    r->critical.rank = 13;
    r->critical.finish_s = 2.0;
    r->critical.compute_s = 1.5;
    r->critical.compute_by_phase_s[WL_PH_FORWARD] = 0.45;
    r->critical.compute_by_phase_s[WL_PH_BACKWARD] = 0.9;
    r->critical.compute_by_phase_s[WL_PH_OPTIMIZER] = 0.15;
    r->critical.exposed_comm_s[WL_DIM_TP] = 0.25;
    r->critical.exposed_comm_s[WL_DIM_DP] = 0.05;
    r->critical.bubble_s = 0.2;
    for (int d = 0; d < WL_NDIMS; d++) {
        r->critical.comm_s[d] = 0.1 * (d + 1);
        r->critical.bytes_sent[d] = 1e9 * (d + 1);
        r->bytes_total[d] = 16e9 * (d + 1);
    }
    r->instructions = 1234567;
    r->flows = 2345678;
}

static void setup(void)
{
    fill_model(&model);
    fill_platform(&platform);
    fill_strategy(&strategy);
    fill_sim(&sim);
    memset(&run, 0, sizeof run);
    run.model = &model;
    run.platform = &platform;
    run.strategy = &strategy;
    run.sim = &sim;
    run.memory_stage = mdl_peak_memory(&model, &strategy, &run.memory);
    run.wall_s = 3.25;
}

static char *capture_summary(const rpt_run *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    rpt_summary(f, r);
    fclose(f);
    return buf;
}

static cJSON *json_of(const rpt_run *r)
{
    cJSON *tree = rpt_run_to_json(r);
    char *text = cJSON_Print(tree);
    cJSON_Delete(tree);
    cJSON *back = cJSON_Parse(text);
    cJSON_free(text);
    ck_assert_msg(back != NULL, "the JSON document does not parse back");
    return back;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsNumber(it), "key '%s' missing or not a number", key);
    return it->valuedouble;
}

static const cJSON *obj(const cJSON *o, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsObject(it), "key '%s' missing or not an object", key);
    return it;
}

static int rel_eq(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* cJSON prints 15 significant digits when they read back within one
 * DBL_EPSILON (relative) of the value: compare within a few of those. */
static int near(double a, double b)
{
    return rel_eq(a, b, 4e-16);
}

/* ------------------------------------------------------------- metrics */

START_TEST(test_metrics_arithmetic)
{
    rpt_metrics mt;
    rpt_metrics_compute(&run, &mt);
    double F = mdl_model_flops_per_step(&model, strategy.global_batch);
    double H = mdl_hardware_flops_per_step(&model, &strategy);
    ck_assert(F > 0 && H >= F);
    ck_assert_double_eq(mt.step_time_s, 2.0);
    ck_assert_double_eq(mt.model_flops_per_step, F);
    ck_assert_double_eq(mt.hardware_flops_per_step, H);
    /* 16 devices of 312 TFLOP/s for 2 s */
    ck_assert(rel_eq(mt.mfu, F / (2.0 * 16 * 312e12), 1e-12));
    ck_assert(rel_eq(mt.hfu, H / (2.0 * 16 * 312e12), 1e-12));
    /* 64 sequences of 2048 tokens in 2 s */
    ck_assert_double_eq_tol(mt.tokens_per_s, 65536.0, 1e-9);
    /* TFLOP/s per device, and its link to MFU: mfu * peak / 1e12 */
    ck_assert(rel_eq(mt.tflops_per_device, F / 2.0 / 16 / 1e12, 1e-12));
    ck_assert(rel_eq(mt.tflops_per_device, mt.mfu * 312.0, 1e-12));
    /* doubling the step time halves every rate */
    sim.step_time_s = 4.0;
    rpt_metrics slow;
    rpt_metrics_compute(&run, &slow);
    ck_assert(rel_eq(slow.mfu, mt.mfu / 2, 1e-12));
    ck_assert(rel_eq(slow.tokens_per_s, mt.tokens_per_s / 2, 1e-12));
}
END_TEST

START_TEST(test_metrics_zero_step)
{
    sim.step_time_s = 0.0;
    rpt_metrics mt;
    rpt_metrics_compute(&run, &mt);
    ck_assert_double_eq(mt.mfu, 0.0);
    ck_assert_double_eq(mt.tokens_per_s, 0.0);
    ck_assert(mt.model_flops_per_step > 0);
}
END_TEST

START_TEST(test_breakdown_and_stage)
{
    rpt_breakdown b;
    rpt_breakdown_compute(&run, &b);
    ck_assert_double_eq_tol(b.compute_s, 1.5 - 0.15, 1e-12);
    ck_assert_double_eq_tol(b.optimizer_s, 0.15, 1e-12);
    ck_assert_double_eq_tol(b.exposed_comm_s, 0.30, 1e-12);
    ck_assert_double_eq_tol(b.bubble_s, 0.2, 1e-12);
    ck_assert_double_eq_tol(b.other_s, 2.0 - (1.35 + 0.30 + 0.2 + 0.15), 1e-12);
    ck_assert_int_eq(b.critical_rank, 13);
    ck_assert_int_eq(b.critical_stage, 1);

    /* pp innermost: the stage is the rank modulo pp */
    strategy.order[0] = CFG_DIM_PP;
    strategy.order[6] = CFG_DIM_TP_X;
    for (int r = 0; r < 16; r++) ck_assert_int_eq(rpt_rank_stage(&strategy, r), r % 2);
    /* default order: pp outermost */
    fill_strategy(&strategy);
    for (int r = 0; r < 16; r++) ck_assert_int_eq(rpt_rank_stage(&strategy, r), r / 8);
}
END_TEST

/* ---------------------------------------------------------------- JSON */

START_TEST(test_json_contract)
{
    cJSON *j = json_of(&run);
    rpt_metrics mt;
    rpt_metrics_compute(&run, &mt);

    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "model")), "gpt-tiny");
    ck_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "platform")), "dgx-test");
    ck_assert(near(num(j, "devices"), 16));
    ck_assert(near(num(j, "step_time_s"), 2.0));
    ck_assert(near(num(j, "mfu"), mt.mfu));
    ck_assert(near(num(j, "hfu"), mt.hfu));
    ck_assert(near(num(j, "tokens_per_s"), mt.tokens_per_s));
    ck_assert(near(num(j, "tflops_per_device"), mt.tflops_per_device));
    ck_assert(near(num(j, "model_flops_per_step"), mdl_model_flops_per_step(&model, 64)));
    ck_assert(near(num(j, "hardware_flops_per_step"), mdl_hardware_flops_per_step(&model, &strategy)));

    /* the strategy is the config module's resolved object, unchanged */
    cJSON *want = cfg_strategy_to_json(&strategy);
    ck_assert(cJSON_Compare(obj(j, "strategy"), want, true));
    cJSON_Delete(want);

    const cJSON *mem = obj(j, "memory");
    ck_assert(near(num(mem, "peak_bytes"), run.memory.total_bytes));
    ck_assert(near(num(mem, "capacity_bytes"), 76.0 * SIM_GIB));
    ck_assert(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(mem, "fits")));
    ck_assert_int_eq(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mem, "fits")),
                     run.memory.total_bytes <= 76.0 * SIM_GIB);
    ck_assert(near(num(mem, "stage"), run.memory_stage));
    ck_assert(near(num(mem, "weights_bytes"), run.memory.weights_bytes));
    ck_assert(near(num(mem, "grads_bytes"), run.memory.grads_bytes));
    ck_assert(near(num(mem, "optimizer_bytes"), run.memory.optimizer_bytes));
    ck_assert(near(num(mem, "activations_bytes"), run.memory.activations_bytes));
    ck_assert(near(num(mem, "buffers_bytes"), run.memory.buffers_bytes));
    ck_assert(near(num(mem, "inflight_microbatches"), run.memory.inflight_microbatches));

    const cJSON *bd = obj(j, "breakdown");
    ck_assert_double_eq_tol(num(bd, "compute_s"), 1.35, 1e-12);
    ck_assert_double_eq_tol(num(bd, "exposed_comm_s"), 0.30, 1e-12);
    ck_assert_double_eq_tol(num(bd, "bubble_s"), 0.2, 1e-12);
    ck_assert_double_eq_tol(num(bd, "optimizer_s"), 0.15, 1e-12);
    ck_assert(near(num(bd, "critical_rank"), 13));

    const cJSON *dims = obj(j, "dimensions");
    const char *names[WL_NDIMS] = {"tp", "cp", "ep", "dp", "pp"};
    double exposed_sum = 0;
    for (int d = 0; d < WL_NDIMS; d++) {
        const cJSON *dj = obj(dims, names[d]);
        ck_assert(near(num(dj, "exposed_s"), sim.critical.exposed_comm_s[d]));
        ck_assert(near(num(dj, "comm_s"), sim.critical.comm_s[d]));
        ck_assert(near(num(dj, "bytes_sent"), sim.critical.bytes_sent[d]));
        ck_assert(near(num(dj, "bytes_total"), sim.bytes_total[d]));
        exposed_sum += num(dj, "exposed_s");
    }
    ck_assert_double_eq_tol(exposed_sum, num(bd, "exposed_comm_s"), 1e-12);

    const cJSON *sj = obj(j, "simulator");
    ck_assert(near(num(sj, "wall_s"), 3.25));
    ck_assert(near(num(sj, "instructions"), 1234567));
    ck_assert(near(num(sj, "flows"), 2345678));
    const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sj, "version"));
    ck_assert_ptr_nonnull(version);
#ifdef HEPTASIM_VERSION
    ck_assert_str_eq(version, HEPTASIM_VERSION);
#else
    ck_assert_str_eq(version, "0.1.0");
#endif
    cJSON_Delete(j);
}
END_TEST

START_TEST(test_json_memory_only)
{
    run.sim = NULL;
    cJSON *j = json_of(&run);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "step_time_s"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "mfu"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "breakdown"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "dimensions"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "simulator"));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "model")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "platform")));
    obj(j, "strategy");
    ck_assert_double_eq(num(j, "devices"), 16);
    ck_assert_double_eq(num(obj(j, "memory"), "peak_bytes"), run.memory.total_bytes);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(j, "strategy_name")->valuestring, run.strategy->name);
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "strategy_compact")));
    ck_assert_double_eq(num(j, "seq_len"), run.model->seq_len);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(j, "seq_len_assumed")));
    ck_assert_double_eq(num(j, "micro_batches"),
                        run.strategy->global_batch / (run.strategy->dp * run.strategy->micro_batch));
    mdl_params par;
    mdl_count_params(run.model, &par);
    ck_assert_double_eq(num(obj(j, "parameters"), "total"), par.total);
    ck_assert_double_eq(num(obj(j, "parameters"), "active"), par.active);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "overrides")), 0);
    ck_assert_double_eq(num(obj(j, "resolved_model"), "layers"), run.model->layers);
    ck_assert_double_eq(num(obj(obj(j, "resolved_platform"), "device"), "hbm_TBps"), run.platform->hbm_bytes_per_s / 1e12);
    ck_assert_int_eq(cJSON_GetArraySize(j), 14);
    cJSON_Delete(j);
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

START_TEST(test_json_file_deterministic)
{
    char dir[] = "/tmp/heptasim-report-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char a[64], b[64];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_write_json(a, &run, &err), SIM_OK);
    ck_assert_int_eq(rpt_write_json(b, &run, &err), SIM_OK);
    char *ta = slurp(a), *tb = slurp(b);
    ck_assert_str_eq(ta, tb);
    ck_assert(strlen(ta) > 0 && ta[strlen(ta) - 1] == '\n');
    cJSON *j = cJSON_Parse(ta);
    ck_assert_ptr_nonnull(j);
    ck_assert_double_eq(num(j, "step_time_s"), 2.0);
    /* key order is fixed: model first, simulator last */
    ck_assert_str_eq(j->child->string, "model");
    const cJSON *last = j->child;
    while (last->next) last = last->next;
    ck_assert_str_eq(last->string, "simulator");
    cJSON_Delete(j);
    free(ta);
    free(tb);
    unlink(a);
    unlink(b);
    rmdir(dir);
}
END_TEST

START_TEST(test_json_unwritable)
{
    const char *path = "/nonexistent-heptasim-dir/sub/result.json";
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_write_json(path, &run, &err), SIM_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* ---------------------------------------------------------------- text */

START_TEST(test_summary_fits)
{
    ck_assert(run.memory.total_bytes < 76.0 * SIM_GIB);
    char *text = capture_summary(&run);
    ck_assert_ptr_nonnull(strstr(text, "gpt-tiny on dgx-test (16 devices)"));
    ck_assert_ptr_nonnull(strstr(text, "tiny-megatron"));
    ck_assert_ptr_nonnull(strstr(text, "-> fits"));
    ck_assert_ptr_null(strstr(text, "does NOT fit"));
    ck_assert_ptr_nonnull(strstr(text, "tokens/s 65,536"));
    ck_assert_ptr_nonnull(strstr(text, "critical rank 13, stage 1"));
    ck_assert_ptr_nonnull(strstr(text, "1,234,567 instructions"));
    ck_assert_ptr_nonnull(strstr(text, "2,345,678 flows"));
    ck_assert_ptr_nonnull(strstr(text, "tp 4 (1D, SP)"));
    /* compute 1.35 + comm 0.30 + bubble 0.2 + optimizer 0.15 = 2.0: no remainder */
    ck_assert_ptr_null(strstr(text, "other"));
    free(text);

    /* a step longer than its parts shows the remainder */
    sim.step_time_s = 2.5;
    text = capture_summary(&run);
    ck_assert_ptr_nonnull(strstr(text, "other"));
    free(text);
}
END_TEST

START_TEST(test_summary_oom)
{
    /* usable memory: half of what the peak rank needs */
    platform.hbm_reserved_bytes = 1.0 * SIM_GIB;
    platform.hbm_bytes = platform.hbm_reserved_bytes + run.memory.total_bytes / 2;
    char want[128];
    snprintf(want, sizeof want, "does NOT fit: needs %.1f GiB, device has %.1f GiB usable",
             run.memory.total_bytes / SIM_GIB, run.memory.total_bytes / 2 / SIM_GIB);
    char *text = capture_summary(&run);
    ck_assert_msg(strstr(text, want) != NULL, "no '%s' in:\n%s", want, text);
    free(text);

    run.sim = NULL; /* memory-only summary says it too, and has no time lines */
    text = capture_summary(&run);
    ck_assert_ptr_nonnull(strstr(text, "does NOT fit"));
    ck_assert_ptr_null(strstr(text, "step time"));
    free(text);

    cJSON *j = json_of(&run);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(obj(j, "memory"), "fits")));
    cJSON_Delete(j);
}
END_TEST

START_TEST(test_memory_table)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rpt_memory_summary(f, &model, &strategy, &platform, NULL);
    fclose(f);
    /* one row per stage, each with the stage's own total */
    for (int st = 0; st < strategy.pp; st++) {
        mdl_memory mm;
        mdl_rank_memory(&model, &strategy, st, &mm);
        char row[64];
        snprintf(row, sizeof row, "\n%5d %9.2f", st, mm.weights_bytes / SIM_GIB);
        ck_assert_msg(strstr(buf, row) != NULL, "no row for stage %d", st);
    }
    ck_assert_ptr_nonnull(strstr(buf, "-> fits"));
    free(buf);

    mdl_memory peak;
    mdl_peak_memory(&model, &strategy, &peak);
    platform.hbm_reserved_bytes = 1.0 * SIM_GIB;
    platform.hbm_bytes = platform.hbm_reserved_bytes + 0.9 * peak.total_bytes;
    buf = NULL;
    f = open_memstream(&buf, &len);
    rpt_memory_summary(f, &model, &strategy, &platform, NULL);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "does NOT fit: needs"));
    free(buf);
}
END_TEST

/* ------------------------------------------------------------- records */

/* A simulated record of the fixture's strategy in the space named "a". */
static void fill_record(rpt_record *r, const sim_enum_name *spaces)
{
    memset(r, 0, sizeof *r);
    r->index = 7;
    r->space = spaces[0].name;
    strcpy(r->inputs_id, "0123456789abcdef");
    sim_err err = {{0}};
    const char *json = "{\"name\": \"t\", \"tp_x\": 2, \"dp\": 8, \"global_batch\": 64}";
    ck_assert_msg(cfg_parse_strategy(json, "t.json", NULL, &r->strategy, &err) == SIM_OK, "%s", err.msg);
    r->strategy.path[0] = '\0';
    r->est.step_s = 1.5;
    r->est.compute_s = 1.0;
    r->state = RPT_ROW_SIMULATED;
    r->step_time_s = 1.25;
    r->mfu = 0.4;
    r->tokens_per_s = 1e5;
    r->compute_s = 0.9;
    for (int d = 0; d < WL_NDIMS; d++) r->exposed_s[d] = r->comm_s[d] = 0.01 * (d + 1);
    r->peak_bytes = 30e9;
    r->capacity_bytes = 76e9;
}

/* The space names are the caller's: report knows none of its own. */
START_TEST(test_record_round_trip_with_given_spaces)
{
    static const sim_enum_name spaces[] = {{0, "a"}, {1, "b"}};
    rpt_record r, back;
    fill_record(&r, spaces);
    cJSON *o = rpt_record_to_json(&r);
    sim_err err = {{0}};
    ck_assert_msg(rpt_record_from_json(o, "r.jsonl: line 1", spaces, 2, &back, &err) == SIM_OK, "%s", err.msg);
    ck_assert_ptr_eq(back.space, spaces[0].name);
    ck_assert_int_eq(back.index, 7);
    ck_assert_int_eq(back.state, RPT_ROW_SIMULATED);
    ck_assert(near(back.step_time_s, 1.25) && near(back.est.step_s, 1.5) && near(back.comm_s[WL_NDIMS - 1], 0.05));
    ck_assert_str_eq(back.inputs_id, r.inputs_id);
    ck_assert(cfg_strategy_same(&back.strategy, &r.strategy) && back.strategy.tp_x == 2);

    static const sim_enum_name others[] = {{0, "x"}, {1, "y"}};
    ck_assert_int_eq(rpt_record_from_json(o, "r.jsonl: line 1", others, 2, &back, &err), SIM_EINVAL);
    ck_assert_str_eq(err.msg, "r.jsonl: line 1: 'space': expected \"x\" or \"y\"");
    cJSON_Delete(o);
}
END_TEST

/* A failed cell of the sensitivity part: its error, no reason, empty bests. */
START_TEST(test_study_rows_failed_cell)
{
    rpt_study_row w = {.cell = "c1", .sensitivity = true, .model = "m", .platform = "p", .devices = 16,
                       .seq_len = 1024, .global_batch = 32, .hbm_gib = 40, .megatron_cp = "ring",
                       .study_model = "m", .study_platform = "p", .command = "heptasim compare", .axis = "k",
                       .axis_value = 12.5, .axis_factor = 0.5, .state = "failed", .speedup = {NAN, NAN, -1},
                       .error = "it broke"};
    cJSON *arr = rpt_study_rows_json(&w, 1);
    const cJSON *o = cJSON_GetArrayItem(arr, 0);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "part")->valuestring, "sensitivity");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "error")->valuestring, "it broke");
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "reason"));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(o, "speedup"));
    ck_assert_ptr_null(obj(o, "megatron")->child);
    ck_assert(near(num(o, "axis_factor"), 0.5));
    cJSON_Delete(arr);
}
END_TEST

static Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("metrics");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_metrics_arithmetic);
    tcase_add_test(tc, test_metrics_zero_step);
    tcase_add_test(tc, test_breakdown_and_stage);
    suite_add_tcase(s, tc);
    tc = tcase_create("json");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_json_contract);
    tcase_add_test(tc, test_json_memory_only);
    tcase_add_test(tc, test_json_file_deterministic);
    tcase_add_test(tc, test_json_unwritable);
    suite_add_tcase(s, tc);
    tc = tcase_create("text");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_summary_fits);
    tcase_add_test(tc, test_summary_oom);
    tcase_add_test(tc, test_memory_table);
    suite_add_tcase(s, tc);
    tc = tcase_create("records");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, test_record_round_trip_with_given_spaces);
    tcase_add_test(tc, test_study_rows_failed_cell);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(report_suite());
}
