/* test_cost.c - the cost model: roofline bounds, efficiency interpolation
 * and clamping, construction errors. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "lib/check_run.h"

/* A device shaped like an A100: 312 TFLOP/s, 2 TB/s HBM. */
static void fill_platform(cfg_platform *p)
{
    memset(p, 0, sizeof *p);
    strcpy(p->name, "test-device");
    strcpy(p->path, "platforms/test.json");
    p->devices = 8;
    p->peak_flops_per_s = 312e12;
    p->hbm_bytes = 80e9;
    p->hbm_bytes_per_s = 2.0e12;
    p->attention_efficiency = 0.6;
    p->memory_efficiency = 0.8;
    p->network_efficiency = 0.9;
    p->kernel_overhead_s = 5e-6;
    p->collective_step_s = 2e-6;
    cfg_curve *cv = &p->gemm_efficiency;
    cv->n = 5;
    double x[] = {1e6, 1e8, 1e10, 1e12, 1e14};
    double y[] = {0.05, 0.20, 0.55, 0.75, 0.80};
    for (int i = 0; i < cv->n; i++) {
        cv->x[i] = x[i];
        cv->y[i] = y[i];
    }
}

static int rel_eq(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) + 1e-300;
}

START_TEST(test_free_null)
{
    cost_free(NULL);
    ck_assert(1);
}
END_TEST

START_TEST(test_curve_points_exact)
{
    cfg_platform p;
    fill_platform(&p);
    sim_err err = {{0}};
    cost_model *c = cost_new(&p, &err);
    ck_assert_msg(c != NULL, "cost_new failed: %s", err.msg);
    for (int i = 0; i < p.gemm_efficiency.n; i++)
        ck_assert_double_eq_tol(cost_gemm_efficiency(c, p.gemm_efficiency.x[i]), p.gemm_efficiency.y[i], 1e-12);
    cost_free(c);
}
END_TEST

START_TEST(test_curve_monotone_between_points)
{
    cfg_platform p;
    fill_platform(&p);
    cost_model *c = cost_new(&p, NULL);
    ck_assert_ptr_nonnull(c);
    const cfg_curve *cv = &p.gemm_efficiency;
    for (int i = 0; i + 1 < cv->n; i++) {
        double lo = log10(cv->x[i]), hi = log10(cv->x[i + 1]);
        double prev = cv->y[i];
        for (int j = 1; j < 50; j++) {
            double e = cost_gemm_efficiency(c, pow(10.0, lo + (hi - lo) * j / 50.0));
            ck_assert_msg(e >= prev - 1e-15, "not monotone in interval %d at sample %d: %g < %g", i, j, e, prev);
            ck_assert(e >= cv->y[i] && e <= cv->y[i + 1]);
            prev = e;
        }
    }
    cost_free(c);
}
END_TEST

/* A curve that rises then falls: no overshoot in any interval. */
START_TEST(test_curve_no_overshoot)
{
    cfg_platform p;
    fill_platform(&p);
    cfg_curve *cv = &p.gemm_efficiency;
    cv->n = 4;
    double x[] = {1e8, 1e9, 1e10, 1e11};
    double y[] = {0.2, 0.7, 0.72, 0.4};
    memcpy(cv->x, x, sizeof x);
    memcpy(cv->y, y, sizeof y);
    cost_model *c = cost_new(&p, NULL);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i + 1 < cv->n; i++) {
        double lo = log10(cv->x[i]), hi = log10(cv->x[i + 1]);
        double ymin = fmin(cv->y[i], cv->y[i + 1]), ymax = fmax(cv->y[i], cv->y[i + 1]);
        for (int j = 1; j < 40; j++) {
            double e = cost_gemm_efficiency(c, pow(10.0, lo + (hi - lo) * j / 40.0));
            ck_assert_msg(e >= ymin - 1e-15 && e <= ymax + 1e-15, "overshoot in interval %d: %g", i, e);
        }
    }
    cost_free(c);
}
END_TEST

START_TEST(test_curve_clamped)
{
    cfg_platform p;
    fill_platform(&p);
    cost_model *c = cost_new(&p, NULL);
    const cfg_curve *cv = &p.gemm_efficiency;
    ck_assert_double_eq(cost_gemm_efficiency(c, cv->x[0] / 1000.0), cv->y[0]);
    ck_assert_double_eq(cost_gemm_efficiency(c, 0.0), cv->y[0]);
    ck_assert_double_eq(cost_gemm_efficiency(c, cv->x[cv->n - 1] * 1e6), cv->y[cv->n - 1]);
    cost_free(c);
}
END_TEST

START_TEST(test_short_curves)
{
    cfg_platform p;
    fill_platform(&p);
    p.gemm_efficiency.n = 1;
    cost_model *c = cost_new(&p, NULL);
    ck_assert_ptr_nonnull(c);
    ck_assert_double_eq(cost_gemm_efficiency(c, 1e3), p.gemm_efficiency.y[0]);
    ck_assert_double_eq(cost_gemm_efficiency(c, 1e15), p.gemm_efficiency.y[0]);
    cost_free(c);

    p.gemm_efficiency.n = 2; /* (1e6, 0.05) .. (1e8, 0.20): midpoint in log is the mean */
    c = cost_new(&p, NULL);
    ck_assert_ptr_nonnull(c);
    ck_assert_double_eq_tol(cost_gemm_efficiency(c, 1e7), 0.125, 1e-12);
    cost_free(c);
}
END_TEST

START_TEST(test_bad_curve_refused)
{
    cfg_platform p;
    fill_platform(&p);
    sim_err err = {{0}};
    p.gemm_efficiency.x[2] = p.gemm_efficiency.x[1]; /* not strictly increasing */
    ck_assert_ptr_null(cost_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "platforms/test.json"));
    ck_assert_ptr_nonnull(strstr(err.msg, "gemm_efficiency"));

    fill_platform(&p);
    p.gemm_efficiency.n = 0;
    err.msg[0] = '\0';
    ck_assert_ptr_null(cost_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "gemm_efficiency"));

    fill_platform(&p);
    p.gemm_efficiency.y[3] = 0.0;
    ck_assert_ptr_null(cost_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "point 3"));

    fill_platform(&p);
    p.peak_flops_per_s = 0;
    ck_assert_ptr_null(cost_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "peak_flops_per_s"));
}
END_TEST

START_TEST(test_platform_copied)
{
    cfg_platform p;
    fill_platform(&p);
    cost_model *c = cost_new(&p, NULL);
    double before = cost_gemm_s(c, 4096, 4096, 4096, 2);
    p.peak_flops_per_s = 1.0; /* the caller's struct changes after cost_new */
    p.gemm_efficiency.y[2] = 0.01;
    ck_assert_double_eq(cost_gemm_s(c, 4096, 4096, 4096, 2), before);
    ck_assert_double_eq(cost_platform(c)->peak_flops_per_s, 312e12);
    cost_free(c);
}
END_TEST

/* Large square GEMM: the compute term is the larger one. */
START_TEST(test_gemm_compute_bound)
{
    cfg_platform p;
    fill_platform(&p);
    cost_model *c = cost_new(&p, NULL);
    double m = 8192, n = 8192, k = 8192;
    double flops = 2 * m * n * k;
    double compute = flops / (p.peak_flops_per_s * cost_gemm_efficiency(c, flops));
    double memory = (m * k + k * n + m * n) * 2 / (p.hbm_bytes_per_s * p.memory_efficiency);
    ck_assert(compute > memory);
    double t = cost_gemm_s(c, m, n, k, 2);
    ck_assert(rel_eq(t, compute + p.kernel_overhead_s, 1e-12));
    /* efficiency is below the curve's top, so slower than the ideal peak */
    ck_assert(t > flops / p.peak_flops_per_s);
    cost_free(c);
}
END_TEST

/* A matrix-vector product (m = 1): the bytes term is the larger one. */
START_TEST(test_gemm_memory_bound)
{
    cfg_platform p;
    fill_platform(&p);
    cost_model *c = cost_new(&p, NULL);
    double m = 1, n = 8192, k = 8192;
    double flops = 2 * m * n * k;
    double compute = flops / (p.peak_flops_per_s * cost_gemm_efficiency(c, flops));
    double bytes = (m * k + k * n + m * n) * 4; /* fp32 operands */
    double memory = bytes / (p.hbm_bytes_per_s * p.memory_efficiency);
    ck_assert(memory > compute);
    ck_assert(rel_eq(cost_gemm_s(c, m, n, k, 4), memory + p.kernel_overhead_s, 1e-12));
    /* twice the element size doubles the memory-bound time (without overhead) */
    double t2 = cost_gemm_s(c, m, n, k, 2) - p.kernel_overhead_s;
    double t4 = cost_gemm_s(c, m, n, k, 4) - p.kernel_overhead_s;
    ck_assert(rel_eq(t4, 2 * t2, 1e-9));
    cost_free(c);
}
END_TEST

START_TEST(test_attention_elementwise_optimizer)
{
    cfg_platform p;
    fill_platform(&p);
    cost_model *c = cost_new(&p, NULL);
    double hbm = p.hbm_bytes_per_s * p.memory_efficiency;

    /* compute-bound attention */
    double f = 1e13, b = 1e8;
    ck_assert(rel_eq(cost_attention_s(c, f, b), f / (p.peak_flops_per_s * 0.6) + p.kernel_overhead_s, 1e-12));
    /* memory-bound attention */
    f = 1e9, b = 1e10;
    ck_assert(rel_eq(cost_attention_s(c, f, b), b / hbm + p.kernel_overhead_s, 1e-12));

    ck_assert(rel_eq(cost_elementwise_s(c, 3.2e9), 3.2e9 / hbm + p.kernel_overhead_s, 1e-12));
    ck_assert_double_eq(cost_elementwise_s(c, 0), p.kernel_overhead_s);

    /* Adam: the bytes per parameter the caller gives, through HBM */
    double params = 1.5e9;
    for (double per = 20; per <= 30; per += 5)
        ck_assert(rel_eq(cost_optimizer_s(c, params, per), params * per / hbm + p.kernel_overhead_s, 1e-12));
    cost_free(c);
}
END_TEST

/* An FP8 GEMM: the FP8 peak at the FP8 curve's efficiency when compute
 * bound, one byte per operand element and a bf16 output when memory
 * bound; without an FP8 curve the GEMM curve's at half the FLOPs. */
/* A grouped GEMM of G experts: G times one GEMM's FLOPs at the efficiency
 * of one (the dense curve without a grouped curve, the grouped curve when
 * the platform gives one; in FP8 that curve at half the FLOPs), one kernel
 * overhead for all; memory bound when the experts' tokens are few. */
START_TEST(test_grouped_gemm)
{
    cfg_platform p;
    fill_platform(&p);
    p.fp8_peak_flops_per_s = 2 * p.peak_flops_per_s;
    cost_model *c = cost_new(&p, NULL);
    double m = 512, n = 4096, k = 2048, one = 2 * m * n * k;
    double want = 16 * one / (p.peak_flops_per_s * cost_gemm_efficiency(c, one)) + p.kernel_overhead_s;
    ck_assert(rel_eq(cost_grouped_gemm_s(c, COST_GEMM_BF16, 16, m, n, k, 2), want, 1e-12));
    ck_assert_double_eq(cost_grouped_gemm_s(c, COST_GEMM_BF16, 0, m, n, k, 2), 0);
    /* one expert: the GEMM itself */
    ck_assert(rel_eq(cost_grouped_gemm_s(c, COST_GEMM_BF16, 1, m, n, k, 2), cost_gemm_s(c, m, n, k, 2), 1e-12));
    cost_free(c);

    p.grouped_gemm_efficiency = (cfg_curve){.n = 2, .x = {1e9, 1e11}, .y = {0.2, 0.4}};
    c = cost_new(&p, NULL);
    double big = 1e12 / (2 * n * k); /* one expert's GEMM past the curve's end: 0.4 */
    ck_assert(rel_eq(cost_grouped_gemm_s(c, COST_GEMM_BF16, 8, big, n, k, 2),
                     8 * 1e12 / (p.peak_flops_per_s * 0.4) + p.kernel_overhead_s, 1e-12));
    double mid = 1e11 / (2 * n * k); /* FP8: the curve at half the FLOPs, 0.5e11: between the points */
    double eff = 0.2 + 0.2 * (log10(0.5e11) - 9) / 2;
    ck_assert(rel_eq(cost_grouped_gemm_s(c, COST_GEMM_FP8, 4, mid, n, k, 2),
                     4 * 1e11 / (p.fp8_peak_flops_per_s * eff) + p.kernel_overhead_s, 1e-9));
    /* memory bound: two tokens per expert move the weights */
    double w = 16 * (2 * k + k * n + 2 * n) * 2 / (p.hbm_bytes_per_s * p.memory_efficiency);
    ck_assert(rel_eq(cost_grouped_gemm_s(c, COST_GEMM_BF16, 16, 2, n, k, 2), w + p.kernel_overhead_s, 1e-12));
    cost_free(c);
}
END_TEST

START_TEST(test_gemm_fp8)
{
    cfg_platform p;
    fill_platform(&p);
    p.fp8_peak_flops_per_s = 2 * p.peak_flops_per_s;
    cost_model *c = cost_new(&p, NULL);
    double m = 8192, n = 8192, k = 8192, flops = 2 * m * n * k;
    /* without an FP8 curve: the GEMM curve at half the FLOPs */
    for (double f = 1e5; f < 1e15; f *= 3.7)
        ck_assert(rel_eq(cost_gemm_fp8_efficiency(c, f), cost_gemm_efficiency(c, f / 2), 1e-12));
    double bf16 = cost_gemm_s(c, m, n, k, 2) - p.kernel_overhead_s;
    double fp8 = cost_gemm_fp8_s(c, m, n, k) - p.kernel_overhead_s;
    ck_assert(rel_eq(bf16 / fp8, 2.0 * cost_gemm_efficiency(c, flops / 2) / cost_gemm_efficiency(c, flops), 1e-12));
    ck_assert(bf16 / fp8 > 1.0 && bf16 / fp8 < 2.0);
    cost_free(c);

    /* an FP8 curve of its own: the ratio is that of peak x efficiency */
    cfg_curve *cv = &p.gemm_fp8_efficiency;
    cv->n = 3;
    double x[] = {1e8, 1e10, 1e12}, y[] = {0.1, 0.4, 0.6};
    for (int i = 0; i < cv->n; i++) cv->x[i] = x[i], cv->y[i] = y[i];
    c = cost_new(&p, NULL);
    double big = 2e12; /* past the FP8 curve's end: 0.6 of the FP8 peak */
    double mm = big / (2 * n * k);
    fp8 = cost_gemm_fp8_s(c, mm, n, k) - p.kernel_overhead_s;
    bf16 = cost_gemm_s(c, mm, n, k, 2) - p.kernel_overhead_s;
    double want = (p.fp8_peak_flops_per_s * 0.6) / (p.peak_flops_per_s * cost_gemm_efficiency(c, big));
    ck_assert(rel_eq(bf16 / fp8, want, 1e-12));
    ck_assert(rel_eq(fp8, big / (p.fp8_peak_flops_per_s * 0.6), 1e-12));

    /* memory bound (m = 1): A and B in FP8, C in bf16 */
    double hbm = p.hbm_bytes_per_s * p.memory_efficiency;
    double bytes = (1 * k + k * n) * 1.0 + 1 * n * 2.0;
    ck_assert(rel_eq(cost_gemm_fp8_s(c, 1, n, k), bytes / hbm + p.kernel_overhead_s, 1e-12));
    cost_free(c);

    /* a bad FP8 curve is named */
    cv->y[1] = 1.5;
    sim_err err = {{0}};
    ck_assert_ptr_null(cost_new(&p, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "gemm_fp8_efficiency"));
}
END_TEST

static Suite *cost_suite(void)
{
    Suite *s = suite_create("cost");
    TCase *tc = tcase_create("interpolation");
    tcase_add_test(tc, test_free_null);
    tcase_add_test(tc, test_curve_points_exact);
    tcase_add_test(tc, test_curve_monotone_between_points);
    tcase_add_test(tc, test_curve_no_overshoot);
    tcase_add_test(tc, test_curve_clamped);
    tcase_add_test(tc, test_short_curves);
    tcase_add_test(tc, test_bad_curve_refused);
    tcase_add_test(tc, test_platform_copied);
    suite_add_tcase(s, tc);
    tc = tcase_create("roofline");
    tcase_add_test(tc, test_gemm_compute_bound);
    tcase_add_test(tc, test_gemm_memory_bound);
    tcase_add_test(tc, test_attention_elementwise_optimizer);
    tcase_add_test(tc, test_gemm_fp8);
    tcase_add_test(tc, test_grouped_gemm);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(cost_suite());
}
