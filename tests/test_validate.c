/* test_validate.c - published cases, the one-layer probe, data-parallel
 * reduction and calibration: case files read with clear errors, the
 * source's FLOP formula reproducing its own derived step time, probe
 * layer times equal to the closed form of the same instructions, one
 * simulated replica agreeing with all of them, a calibration that
 * recovers efficiencies used to make synthetic measurements, and cases
 * that need what heptasim does not model skipped with their reason. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "validate/validate.h"
#include "lib/check_run.h"
#include "lib/platform_dir.h"

static char *data_path(const char *rel)
{
    const char *dir = getenv("HEPTASIM_DATA");
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", dir && dir[0] ? dir : ".", rel);
    return buf;
}

/* Writes text to <fresh temporary directory>/case.json; returns the path
 * (static; remove it with drop()). */
static const char *temp_json(const char *text)
{
    static char path[64];
    char dir[] = "/tmp/heptasim-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/case.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void drop(const char *path)
{
    char dir[64];
    snprintf(dir, sizeof dir, "%s", path);
    unlink(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    rmdir(dir);
}

/* A reducible case: 4 layers of GPT 18.4B on 64 A100s, TP 8, 2 stages,
 * DP 4, gradients all-reduced after the backward pass. */
#define SMALL_CASE(overlap)                                                                                      \
    "{\"id\": \"small\", \"group\": \"test\", \"source\": \"test\", \"platform\": \"dgx-a100\", \"devices\": 64,"  \
    " \"model\": {\"layers\": 4, \"hidden\": 6144, \"heads\": 48, \"ffn_hidden\": 24576, \"vocab\": 51200,"        \
    " \"seq_len\": 2048, \"dtype\": \"fp16\"},"                                                                    \
    " \"strategy\": {\"dp\": 4, \"pp\": 2, \"tp_x\": 8, \"micro_batch\": 2, \"global_batch\": 32,"                 \
    " \"recompute\": \"full\", \"zero\": 0, \"overlap_grad_reduce\": " overlap "},"                               \
    " \"runs\": [{\"name\": \"step\", \"compare\": {\"step_time_s\": 1.0}}]}"

static void load(const char *path, val_case *c)
{
    sim_err err = {{0}};
    sim_rc rc = val_case_load(path, NULL, c, &err);
    ck_assert_msg(rc == SIM_OK, "%s", err.msg);
}

static void simulate(val_case *c, int n, bool full)
{
    sim_err err = {{0}};
    val_sim_opts o = {2, full, NULL, NULL};
    ck_assert_msg(val_simulate(c, n, &o, &err) == SIM_OK, "%s", err.msg);
    for (int i = 0; i < n; i++)
        for (int r = 0; r < c[i].nruns; r++)
            ck_assert_msg(c[i].runs[r].rc == SIM_OK, "%s/%s: %s", c[i].id, c[i].runs[r].name, c[i].runs[r].msg);
}

START_TEST(test_metric_names)
{
    for (int m = 0; m < VAL_NMETRICS; m++) ck_assert_int_eq(val_metric_of(val_metric_name((val_metric)m)), m);
    ck_assert_int_eq(val_metric_of("step_time"), -1);
    for (int p = 0; p < VAL_NPARAMS; p++) ck_assert_int_eq(val_param_of(val_param_name((val_param)p)), p);
}
END_TEST

/* The Narayanan cases publish TFLOP/s and a step time derived from it with
 * the paper's formula: our formula must give the same step time back. */
START_TEST(test_narayanan_formula_reproduces_derived_step)
{
    val_case *c = calloc(1, sizeof *c);
    load(data_path("results/published/narayanan21-table1-gpt-1.7b.json"), c);
    const val_run *r = &c->runs[0];
    ck_assert_int_eq(c->flops, VAL_FLOPS_NARAYANAN21);
    ck_assert(c->runs[0].cmp[0].derived);
    val_run tmp = *r;
    double flops = val_flops_per_step(c->flops, &r->model, r->strategy.global_batch);
    double step = flops / (137e12 * cfg_world_size(&r->strategy));
    ck_assert_double_eq_tol(step, r->cmp[0].measured, 1e-3 * r->cmp[0].measured);
    /* and the TFLOP/s we would report for that step time is the published one */
    (void)tmp;
    free(c);
}
END_TEST

START_TEST(test_case_errors_name_file_and_key)
{
    val_case *c = calloc(1, sizeof *c);
    sim_err err = {{0}};
    const char *p = temp_json("{\"id\": \"x\", \"group\": \"g\", \"source\": \"s\", \"colour\": 1}");
    ck_assert_int_eq(val_case_load(p, NULL, c, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, ".colour: unknown key"), "%s", err.msg);
    drop(p);

    p = temp_json("{\"id\": \"x\", \"group\": \"g\", \"source\": \"s\", \"platform\": \"dgx-a100\", \"devices\": 8,"
                  " \"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 1000,"
                  " \"seq_len\": 1024}, \"strategy\": {\"dp\": 8, \"global_batch\": 8},"
                  " \"runs\": [{\"name\": \"a\", \"compare\": {\"step_time\": 1}}]}");
    ck_assert_int_eq(val_case_load(p, NULL, c, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, ".runs[0].compare.step_time: unknown metric"), "%s", err.msg);
    drop(p);

    p = temp_json("{\"id\": \"x\", \"group\": \"g\", \"source\": \"s\", \"platform\": \"dgx-a100\", \"devices\": 8,"
                  " \"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 1000,"
                  " \"seq_len\": 1024}, \"strategy\": {\"dp\": 8, \"tp_x\": 3, \"global_batch\": 8},"
                  " \"runs\": [{\"name\": \"a\", \"compare\": {\"step_time_s\": 1}}]}");
    ck_assert_int_eq(val_case_load(p, NULL, c, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, p) && strstr(err.msg, "tp_x"), "%s", err.msg);
    drop(p);
    free(c);
}
END_TEST

/* A case of 8 devices with model dtype and extra case keys to fill in. */
#define TINY_CASE(dtype, extra_model, extra_case)                                                                  \
    "{\"id\": \"tiny\", \"group\": \"g\", \"source\": \"s\", \"platform\": \"dgx-h100\", \"devices\": 8," extra_case \
    " \"model\": {\"layers\": 2, \"hidden\": 1024, \"heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 1024,"            \
    " \"seq_len\": 1024, \"dtype\": \"" dtype "\"" extra_model "}, \"strategy\": {\"dp\": 8, \"global_batch\": 8},"  \
    " \"runs\": [{\"name\": \"a\", \"compare\": {\"step_time_s\": 1}}]}"

static sim_rc load_text(const char *text, val_case *c, sim_err *err)
{
    const char *p = temp_json(text);
    sim_rc rc = val_case_load(p, NULL, c, err);
    drop(p);
    return rc;
}

START_TEST(test_not_modelled_cases_are_skipped_with_reason)
{
    val_case *c = calloc(2, sizeof *c);
    sim_err err = {{0}};
    /* a listed feature: the model keeps keys heptasim does not know, and is not parsed */
    ck_assert_msg(load_text(TINY_CASE("bf16", ", \"attention\": \"mla\"", " \"not_modelled\": [\"MLA attention\"],"),
                            &c[0], &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(c[0].nruns, 0);
    ck_assert_str_eq(c[0].not_modelled, "MLA attention");
    /* fp8 and mxfp8: the precision of the GEMMs, run as a bf16 model with fp8 */
    ck_assert_msg(load_text(TINY_CASE("fp8", "", ""), &c[1], &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(c[1].nruns, 1);
    ck_assert_str_eq(c[1].not_modelled, "");
    ck_assert(c[1].runs[0].strategy.fp8);
    ck_assert_int_eq(c[1].runs[0].model.dtype_bytes, 2);
    ck_assert_int_eq(c[1].runs[0].strategy.fp8_recipe, CFG_FP8_DELAYED);
    /* mxfp8: fp8 with the MXFP8 recipe, refused on a device without MXFP8 (H100), run on a B200 */
    ck_assert_int_eq(load_text(TINY_CASE("mxfp8", "", ""), &c[1], &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, ".fp8_recipe: \"mxfp8\" needs MXFP8 tensor cores"), "%s", err.msg);
    char b200[2048];
    sim_strlcpy(b200, TINY_CASE("mxfp8", "", ""), sizeof b200);
    char *at = strstr(b200, "dgx-h100");
    memcpy(at, "hgx-b200", 8);
    ck_assert_msg(load_text(b200, &c[1], &err) == SIM_OK, "%s", err.msg);
    ck_assert(c[1].nruns == 1 && c[1].runs[0].strategy.fp8);
    ck_assert_int_eq(c[1].runs[0].strategy.fp8_recipe, CFG_FP8_MXFP8);
    ck_assert_msg(load_text(TINY_CASE("mxfp8", "", " \"not_modelled\": [\"MLA attention\"],"), &c[1], &err) == SIM_OK,
                  "%s", err.msg);
    ck_assert_str_eq(c[1].not_modelled, "MLA attention");
    ck_assert_int_eq(c[1].nruns, 0);
    /* bf16 stays bf16 */
    ck_assert_msg(load_text(TINY_CASE("bf16", "", ""), &c[1], &err) == SIM_OK, "%s", err.msg);
    ck_assert(!c[1].runs[0].strategy.fp8);
    /* cases are read whole: bad keys, strategies and metrics are errors */
    ck_assert_int_eq(load_text(TINY_CASE("fp8", ", \"kv_heads\": 3", ""), &c[1], &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "kv_heads"), "%s", err.msg);
    ck_assert_int_eq(load_text(TINY_CASE("bf16", "", " \"not_modelled\": [],"), &c[1], &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, ".not_modelled: expected a non-empty array"), "%s", err.msg);
    ck_assert_int_eq(load_text(TINY_CASE("bf16", "", " \"not_modelled\": [\"\"],"), &c[1], &err), SIM_EINVAL);
    const char *bad_metric = "{\"id\": \"x\", \"group\": \"g\", \"source\": \"s\", \"platform\": \"dgx-h100\","
                             " \"devices\": 8, \"not_modelled\": [\"f\"], \"model\": {}, \"strategy\": {},"
                             " \"runs\": [{\"name\": \"a\", \"compare\": {\"step\": 1}}]}";
    ck_assert_int_eq(load_text(bad_metric, &c[1], &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, ".runs[0].compare.step: unknown metric"), "%s", err.msg);

    /* statistics: counted apart, never as comparisons; the JSON names the reason */
    ck_assert_msg(load_text(TINY_CASE("bf16", "", ""), &c[1], &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(c[1].nruns, 1);
    ck_assert_str_eq(c[1].not_modelled, "");
    c[1].runs[0].cmp[0].error = 0.1;
    val_group_stats g[2];
    ck_assert_int_eq(val_group_stats_compute(c, 2, g, 2), 1);
    ck_assert_int_eq(g[0].n, 1);
    ck_assert_int_eq(g[0].skipped, 1);
    ck_assert_int_eq(g[0].failed, 0);
    ck_assert_double_eq_tol(g[0].mean_abs, 0.1, 1e-15);
    cJSON *doc = val_to_json(c, 2, g, 1);
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "cases"), 0);
    ck_assert_str_eq(cJSON_GetObjectItem(first, "not_modelled")->valuestring, "MLA attention");
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(first, "runs")), 0);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "groups"), 0), "skipped")->valueint,
                     1);
    cJSON_Delete(doc);
    free(c);
}
END_TEST

static cJSON *read_json_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    ck_assert_uint_lt(n, sizeof buf - 1);
    buf[n] = '\0';
    cJSON *root = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(root);
    return root;
}

/* Every shipped case loads; it is skipped exactly when its file lists
 * features not modelled (read here from the file itself), a case in fp8 or
 * mxfp8 runs with the fp8 key, and every case that runs compares
 * something. */
START_TEST(test_every_published_case_loads)
{
    char **paths = NULL;
    int n = 0;
    sim_err err = {{0}};
    ck_assert_msg(val_list_dir(data_path("results/published"), &paths, &n, &err) == SIM_OK, "%s", err.msg);
    val_case *c = calloc(1, sizeof *c);
    int skipped = 0, fp8 = 0;
    for (int i = 0; i < n; i++) {
        sim_rc rc = val_case_load(paths[i], NULL, c, &err);
        ck_assert_msg(rc == SIM_OK, "%s", err.msg);
        cJSON *root = read_json_file(paths[i]);
        const cJSON *dt = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "model"), "dtype");
        bool is_fp8 = cJSON_IsString(dt) && strstr(dt->valuestring, "fp8");
        bool skip = cJSON_GetObjectItem(root, "not_modelled") != NULL;
        cJSON_Delete(root);
        ck_assert_msg(skip == (c->not_modelled[0] != '\0'), "%s: skipped '%s'", paths[i], c->not_modelled);
        ck_assert_msg(skip ? c->nruns == 0 : c->nruns > 0, "%s: %d runs", paths[i], c->nruns);
        for (int r = 0; r < c->nruns; r++) {
            ck_assert_int_gt(c->runs[r].ncmp, 0);
            ck_assert_msg(c->runs[r].strategy.fp8 == is_fp8, "%s: fp8 %d", paths[i], c->runs[r].strategy.fp8);
        }
        skipped += skip;
        fp8 += is_fp8 && !skip;
    }
    ck_assert_int_gt(skipped, 0);
    ck_assert_int_gt(fp8, 0);
    ck_assert_int_gt(n - skipped, 0);
    val_free_paths(paths, n);
    free(c);
}
END_TEST

/* The probe reads the layer from a trace of rank 0; inside one node the
 * TP collectives are uncontended, so the simulated times must equal the
 * closed-form sum of the same instructions. */
START_TEST(test_layer_probe_matches_closed_form)
{
    val_case *c = calloc(1, sizeof *c);
    load(data_path("results/published/korthikanti23-table4-22b-layer.json"), c);
    simulate(c, 1, false);
    for (int r = 0; r < c->nruns; r++) {
        const val_run *run = &c->runs[r];
        double a[VAL_NMETRICS];
        sim_err err = {{0}};
        ck_assert_msg(val_analytic(c, run, &run->platform, a, &err) == SIM_OK, "%s", err.msg);
        for (int m = VAL_LAYER_FORWARD_MS; m <= VAL_LAYER_TOTAL_MS; m++) {
            ck_assert_msg(run->value[m] > 0, "%s: %s not simulated", run->name, val_metric_name((val_metric)m));
            ck_assert_msg(fabs(run->value[m] - a[m]) <= 0.01 * a[m], "%s %s: simulated %g ms, closed form %g ms",
                          run->name, val_metric_name((val_metric)m), run->value[m], a[m]);
        }
        ck_assert_int_eq(run->method, VAL_FULL);
    }
    /* recompute makes the backward longer, never the forward */
    ck_assert(c->runs[2].value[VAL_LAYER_BACKWARD_MS] > c->runs[0].value[VAL_LAYER_BACKWARD_MS]);
    ck_assert_double_eq_tol(c->runs[2].value[VAL_LAYER_FORWARD_MS], c->runs[0].value[VAL_LAYER_FORWARD_MS], 1e-9);
    free(c);
}
END_TEST

/* Two simulated replicas plus the closed-form all-reduce of all of them
 * give the step of the full run. */
START_TEST(test_reduced_matches_full)
{
    val_case *c = calloc(2, sizeof *c);
    const char *p = temp_json(SMALL_CASE("false"));
    load(p, &c[0]);
    load(p, &c[1]);
    drop(p);
    char why[128];
    ck_assert_msg(val_reducible(&c[0].runs[0], why, sizeof why), "%s", why);
    simulate(&c[0], 1, false);
    simulate(&c[1], 1, true);
    ck_assert_int_eq(c[0].runs[0].method, VAL_REDUCED_DP);
    ck_assert_int_eq(c[0].runs[0].replicas, 2);
    ck_assert_int_lt(c[0].runs[0].replicas, c[0].runs[0].strategy.dp);
    ck_assert_int_eq(c[1].runs[0].method, VAL_FULL);
    double red = c[0].runs[0].value[VAL_STEP_TIME_S], full = c[1].runs[0].value[VAL_STEP_TIME_S];
    ck_assert_msg(c[0].runs[0].dp_closed_form_s > 0, "no closed-form gradient sync");
    ck_assert_msg(fabs(red - full) <= 1e-9 * full, "two replicas %.9g s, all replicas %.9g s", red, full);
    free(c);
}
END_TEST

START_TEST(test_overlapped_grads_not_reduced)
{
    val_case *c = calloc(1, sizeof *c);
    const char *p = temp_json(SMALL_CASE("true"));
    load(p, c);
    drop(p);
    char why[128];
    ck_assert(!val_reducible(&c->runs[0], why, sizeof why));
    ck_assert_msg(strstr(why, "overlaps"), "%s", why);
    free(c);
}
END_TEST

START_TEST(test_params_apply)
{
    cfg_platform base, out;
    sim_err err = {{0}};
    ck_assert_msg(cfg_load_platform("dgx-a100", NULL, 8, &base, &err) == SIM_OK, "%s", err.msg);
    double v[VAL_NPARAMS];
    val_params_of(&base, v);
    val_params_apply(&base, v, &out);
    ck_assert(memcmp(&out.gemm_efficiency, &base.gemm_efficiency, sizeof out.gemm_efficiency) == 0);
    ck_assert_double_eq(out.attention_efficiency, base.attention_efficiency);
    v[VAL_P_GEMM_TILT] = 0.05;
    v[VAL_P_GEMM_SCALE] = 2.0;
    val_params_apply(&base, v, &out);
    int n = base.gemm_efficiency.n;
    for (int i = 0; i < n; i++) {
        ck_assert(out.gemm_efficiency.y[i] <= 1.0);
        ck_assert_double_eq(out.gemm_efficiency.x[i], base.gemm_efficiency.x[i]);
    }
    /* the tilt leaves the largest point alone and lowers the others relative to it */
    ck_assert_double_eq(out.gemm_efficiency.y[n - 1], fmin(1.0, 2.0 * base.gemm_efficiency.y[n - 1]));
    ck_assert(out.gemm_efficiency.y[0] < 2.0 * base.gemm_efficiency.y[0]);
    /* a negative tilt never makes a larger GEMM less efficient than a smaller one */
    v[VAL_P_GEMM_SCALE] = 0.8;
    v[VAL_P_GEMM_TILT] = -0.3;
    val_params_apply(&base, v, &out);
    for (int i = 1; i < n; i++) ck_assert(out.gemm_efficiency.y[i] >= out.gemm_efficiency.y[i - 1]);
    ck_assert_double_eq(out.gemm_efficiency.y[n - 1], 0.8 * base.gemm_efficiency.y[n - 1]);
    ck_assert(out.gemm_efficiency.y[0] > 0.8 * base.gemm_efficiency.y[0]);
    /* physical figures are never touched */
    ck_assert_double_eq(out.peak_flops_per_s, base.peak_flops_per_s);
    ck_assert_double_eq(out.fabric_bytes_per_s, base.fabric_bytes_per_s);
    /* no grouped-GEMM curve unless its scale moves; then the fitted GEMM
     * curve times the scale, the dense curve itself untouched */
    ck_assert_int_eq(out.grouped_gemm_efficiency.n, 0);
    val_params_of(&base, v);
    v[VAL_P_GEMM_SCALE] = 0.9;
    v[VAL_P_GROUPED_GEMM_SCALE] = 0.5;
    val_params_apply(&base, v, &out);
    ck_assert_int_eq(out.grouped_gemm_efficiency.n, n);
    for (int i = 0; i < n; i++) {
        ck_assert_double_eq(out.grouped_gemm_efficiency.x[i], base.gemm_efficiency.x[i]);
        ck_assert_double_eq_tol(out.gemm_efficiency.y[i], 0.9 * base.gemm_efficiency.y[i], 1e-12);
        ck_assert_double_eq_tol(out.grouped_gemm_efficiency.y[i],
                                fmax(CFG_EFFICIENCY_MIN, 0.5 * out.gemm_efficiency.y[i]), 1e-12);
    }
    /* a platform's own grouped curve is scaled instead */
    cfg_platform own = base;
    own.grouped_gemm_efficiency.n = 2;
    own.grouped_gemm_efficiency.x[0] = 1e9;
    own.grouped_gemm_efficiency.y[0] = 0.2;
    own.grouped_gemm_efficiency.x[1] = 1e12;
    own.grouped_gemm_efficiency.y[1] = 0.6;
    val_params_apply(&own, v, &out);
    ck_assert_int_eq(out.grouped_gemm_efficiency.n, 2);
    ck_assert_double_eq_tol(out.grouped_gemm_efficiency.y[0], 0.1, 1e-12);
    ck_assert_double_eq_tol(out.grouped_gemm_efficiency.y[1], 0.3, 1e-12);
}
END_TEST

/* Measurements made by the simulator itself at known efficiencies must
 * lead the fit back to those efficiencies. */
/* The uncalibrated presets of a directory against their nearest
 * calibrated relatives: a's calibrated child b is a's; d (based on b,
 * itself uncalibrated) is b's, one step away; e (based on a) meets b at a,
 * two steps; c shares no chain with a calibrated file.  Ratios are the
 * preset's figure over the relative's. */
START_TEST(test_preset_gaps)
{
    char dir[] = "/tmp/heptasim-presets-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *full = TEST_FULL_PLATFORM;
    write_file(dir, "a.json", full);
    write_file(dir, "b.json",
               "{\"base\": \"a.json\", \"efficiency\": {\"gemm\": [[1e6, 0.1], [1e9, 0.4], [1e12, 0.64]],"
               " \"attention\": 0.4, \"kernel_overhead_us\": 6}, \"calibration\": {\"cases\": 2}}");
    write_file(dir, "c.json", full);
    write_file(dir, "d.json", "{\"base\": \"b.json\", \"efficiency\": {\"network\": 0.45}}");
    write_file(dir, "e.json", "{\"base\": \"a.json\", \"device\": {\"hbm_GiB\": 64}}");
    val_preset_gap g[8];
    sim_err err = {{0}};
    int n = val_preset_gaps(dir, g, 8, &err);
    ck_assert_msg(n == 4, "%d presets: %s", n, err.msg);
    ck_assert_str_eq(g[0].name, "a");
    ck_assert_str_eq(g[0].relative, "b");
    ck_assert_str_eq(g[0].via, "a");
    ck_assert_int_eq(g[0].distance, 1);
    ck_assert_double_eq_tol(g[0].ratio[VAL_GAP_GEMM], 0.8 / 0.64, 1e-12);
    ck_assert_double_eq_tol(g[0].ratio[VAL_GAP_ATTENTION], 0.5 / 0.4, 1e-12);
    ck_assert_double_eq(g[0].ratio[VAL_GAP_MEMORY], 1);
    ck_assert_double_eq_tol(g[0].ratio[VAL_GAP_KERNEL_US], 0.5, 1e-12);
    ck_assert_double_eq(g[0].ratio[VAL_GAP_COLL_STEP_US], 1); /* 0 over 0 */
    ck_assert_str_eq(g[1].name, "c");
    ck_assert_str_eq(g[1].relative, "");
    ck_assert_int_eq(g[1].distance, -1);
    ck_assert(isnan(g[1].ratio[VAL_GAP_GEMM]));
    ck_assert_str_eq(g[2].name, "d");
    ck_assert_str_eq(g[2].relative, "b");
    ck_assert_str_eq(g[2].via, "b");
    ck_assert_int_eq(g[2].distance, 1);
    ck_assert_double_eq_tol(g[2].ratio[VAL_GAP_NETWORK], 0.5, 1e-12);
    ck_assert_double_eq(g[2].ratio[VAL_GAP_ATTENTION], 1);
    ck_assert_str_eq(g[3].name, "e");
    ck_assert_str_eq(g[3].relative, "b");
    ck_assert_str_eq(g[3].via, "a");
    ck_assert_int_eq(g[3].distance, 2);
    /* the table names them, and says so when there is no relative */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    val_print_preset_gaps(f, g, n);
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "\nc                      uncalibrated: no calibrated platform shares its base chain\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\na                      b                        a                    1.25x         -     1.25x     1.00x"));
    free(buf);
    /* a preset that does not load is the error */
    write_file(dir, "f.json", "{\"base\": \"nowhere.json\"}");
    ck_assert_int_eq(val_preset_gaps(dir, g, 8, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "f.json: .base: platform 'nowhere.json' not found"));
    const char *names[] = {"a.json", "b.json", "c.json", "d.json", "e.json", "f.json"};
    for (int i = 0; i < 6; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

START_TEST(test_calibrate_recovers_known_efficiencies)
{
    val_case *c = calloc(2, sizeof *c), *before = calloc(2, sizeof *before);
    load(data_path("results/published/korthikanti23-table4-22b-layer.json"), &c[0]);
    const char *p = temp_json(SMALL_CASE("false"));
    load(p, &c[1]);
    drop(p);

    double truth[VAL_NPARAMS];
    val_params_of(&c[0].runs[0].platform, truth);
    truth[VAL_P_GEMM_SCALE] = 0.9;
    truth[VAL_P_ATTENTION] = 0.3;
    cfg_platform base[2][VAL_MAX_RUNS];
    for (int i = 0; i < 2; i++)
        for (int r = 0; r < c[i].nruns; r++) {
            base[i][r] = c[i].runs[r].platform;
            val_params_apply(&base[i][r], truth, &c[i].runs[r].platform);
        }
    simulate(c, 2, false);
    for (int i = 0; i < 2; i++)
        for (int r = 0; r < c[i].nruns; r++) {
            val_run *run = &c[i].runs[r];
            for (int m = 0; m < run->ncmp; m++) run->cmp[m].measured = run->value[run->cmp[m].metric];
            run->platform = base[i][r];
        }

    val_fit_opts o;
    memset(&o, 0, sizeof o);
    o.free_mask = 1u << VAL_P_GEMM_SCALE | 1u << VAL_P_ATTENTION;
    o.max_passes = 4;
    o.agree = 0.002;
    o.sim = (val_sim_opts){2, false, NULL, NULL};
    val_fit_result res;
    sim_err err = {{0}};
    ck_assert_msg(val_calibrate(c, 2, &o, before, &res, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(res.rms_before > 0.02, "the base platform should be off (rms %g)", res.rms_before);
    ck_assert_msg(res.rms_after < 0.005, "rms error after the fit %g", res.rms_after);
    ck_assert(res.converged);
    ck_assert_msg(fabs(res.value[VAL_P_GEMM_SCALE] - 0.9) < 0.02 * 0.9, "gemm_scale %g", res.value[VAL_P_GEMM_SCALE]);
    ck_assert_msg(fabs(res.value[VAL_P_ATTENTION] - 0.3) < 0.02 * 0.3, "attention %g", res.value[VAL_P_ATTENTION]);
    ck_assert(res.sigma[VAL_P_ATTENTION] >= 0 && res.sigma[VAL_P_ATTENTION] < 0.05);
    ck_assert_double_eq(res.platform.peak_flops_per_s, base[0][0].peak_flops_per_s);
    ck_assert_double_eq(res.platform.nic_bytes_per_s, base[0][0].nic_bytes_per_s);
    free(c);
    free(before);
}
END_TEST

static Suite *validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("cases");
    tcase_add_test(tc, test_metric_names);
    tcase_add_test(tc, test_narayanan_formula_reproduces_derived_step);
    tcase_add_test(tc, test_case_errors_name_file_and_key);
    tcase_add_test(tc, test_params_apply);
    tcase_add_test(tc, test_preset_gaps);
    tcase_add_test(tc, test_overlapped_grads_not_reduced);
    tcase_add_test(tc, test_not_modelled_cases_are_skipped_with_reason);
    tcase_add_test(tc, test_every_published_case_loads);
    suite_add_tcase(s, tc);
    tc = tcase_create("simulated");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_layer_probe_matches_closed_form);
    tcase_add_test(tc, test_reduced_matches_full);
    tcase_add_test(tc, test_calibrate_recovers_known_efficiencies);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(validate_suite());
}
