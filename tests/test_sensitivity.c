/* test_sensitivity.c - heptasim sensitivity: a figure the step does not use
 * moves it by nothing; an HBM-bound and a compute-bound toy move the
 * expected figure most; simulated and estimated changes agree in sign; a
 * curve and the tiers of a multi-tier fabric scale as stated. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixtures.h"
#include "sensitivity/sensitivity.h"

/* A one-supernode platform file of 8 devices (so no NIC traffic) with
 * peak TFLOP/s and HBM TB/s as given; its path in path. */
static void write_platform(char *path, size_t cap, double peak_tflops, double hbm_tbps)
{
    snprintf(path, cap, "/tmp/heptasim-test-sens-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"name\": \"toy\", \"devices\": 8,"
            " \"device\": {\"peak_tflops\": %g, \"hbm_GiB\": 80, \"hbm_TBps\": %g},"
            " \"node\": {\"devices\": 8}, \"supernode\": {\"devices\": 8, \"fabric_GBps\": 200, \"latency_us\": 2},"
            " \"network\": {\"nic_GBps\": 25, \"latency_us\": 3},"
            " \"efficiency\": {\"gemm\": [[1e8, 0.3], [1e10, 0.6], [1e11, 0.8]], \"attention\": 0.5, \"memory\": 0.8,"
            " \"network\": 0.8, \"kernel_overhead_us\": 5, \"collective_step_us\": 10}}",
            peak_tflops, hbm_tbps);
    fclose(f);
}

typedef struct toy {
    char path[256];
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
    sens_result r;
} toy;

static void run_toy(toy *t, double peak, double hbm, int dp, int tp, int simulate)
{
    write_platform(t->path, sizeof t->path, peak, hbm);
    sim_err err = {{0}};
    t->m = fx_dense_model(4, 1024, 16, 4096, 32000, 1024);
    ck_assert_msg(cfg_load_platform(t->path, NULL, 0, &t->p, &err) == SIM_OK, "%s", err.msg);
    t->s = fx_strategy(dp, 1, tp, 2);
    ck_assert_msg(cfg_check(&t->m, &t->p, &t->s, &err) == SIM_OK, "%s", err.msg);
    sens_request rq = {.model = &t->m, .platform = &t->p, .platform_name = t->path, .strategy = &t->s,
                       .step = 0.2, .simulate = simulate, .jobs = 2};
    ck_assert_msg(sens_run(&rq, &t->r, &err) == SIM_OK, "%s", err.msg);
    unlink(t->path);
}

static const rpt_sens_row *row_of(const sens_result *r, const char *key)
{
    for (int i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].key, key) == 0) return &r->rows[i];
    return NULL;
}

static int rank_of(const sens_result *r, const char *key)
{
    for (int i = 0; i < r->nrows; i++)
        if (strcmp(r->rows[i].key, key) == 0) return i;
    return -1;
}

START_TEST(unused_figure_moves_nothing)
{
    toy t;
    run_toy(&t, 300, 2, 2, 4, 0);
    /* one supernode holds every device: the NIC carries nothing */
    const char *unused[] = {"network.nic_GBps", "network.latency_us", "network.oversubscription"};
    for (int i = 0; i < 3; i++) {
        const rpt_sens_row *r = row_of(&t.r, unused[i]);
        ck_assert_ptr_nonnull(r);
        ck_assert_msg(r->swing == 0, "%s moved the step by %g", unused[i], r->swing);
        if (r->low.applicable) ck_assert(r->low.estimate_s == t.r.estimate_s);
        if (r->high.applicable) ck_assert(r->high.estimate_s == t.r.estimate_s);
    }
    /* spine latency is 0 in the file: not applicable, with the reason */
    const rpt_sens_row *sp = row_of(&t.r, "network.spine_latency_us");
    ck_assert(sp && !sp->low.applicable && strstr(sp->low.why, "is 0"));
    /* but the fabric carries TP: its bandwidth moves the step */
    ck_assert(row_of(&t.r, "supernode.fabric_GBps")->swing > 0);
    sens_result_free(&t.r);
}
END_TEST

START_TEST(bound_toys_move_their_figure)
{
    toy t;
    /* compute-bound: a slow device with a very fast HBM */
    run_toy(&t, 5, 1000, 8, 1, 0);
    ck_assert_msg(rank_of(&t.r, "device.peak_tflops") < rank_of(&t.r, "device.hbm_TBps"), "compute-bound: %s first",
                  t.r.rows[0].key);
    ck_assert(strcmp(t.r.rows[0].key, "device.peak_tflops") == 0 || strcmp(t.r.rows[0].key, "efficiency.gemm") == 0);
    /* lower peak: slower step */
    ck_assert(row_of(&t.r, "device.peak_tflops")->low.estimate_s > t.r.estimate_s);
    sens_result_free(&t.r);
    /* HBM-bound: a fast device with a slow HBM */
    run_toy(&t, 10000, 0.01, 8, 1, 0);
    ck_assert_msg(strcmp(t.r.rows[0].key, "device.hbm_TBps") == 0, "HBM-bound: %s first", t.r.rows[0].key);
    ck_assert(row_of(&t.r, "device.hbm_TBps")->low.estimate_s > t.r.estimate_s);
    sens_result_free(&t.r);
}
END_TEST

START_TEST(simulated_agrees_in_sign)
{
    toy t;
    run_toy(&t, 300, 2, 2, 4, 3);
    ck_assert(t.r.simulated && t.r.simulated_s > 0);
    int checked = 0;
    for (int i = 0; i < 3 && i < t.r.nrows; i++) {
        const rpt_sens_point *pts[2] = {&t.r.rows[i].low, &t.r.rows[i].high};
        for (int k = 0; k < 2; k++) {
            if (!pts[k]->applicable) continue;
            ck_assert_msg(pts[k]->simulated, "%s not simulated", t.r.rows[i].key);
            double de = pts[k]->estimate_s - t.r.estimate_s, ds = pts[k]->simulated_s - t.r.simulated_s;
            if (fabs(de) < 1e-3 * t.r.estimate_s) continue; /* too small to carry a sign */
            ck_assert_msg(de * ds > 0, "%s: estimate %+g s, simulation %+g s", t.r.rows[i].key, de, ds);
            checked++;
        }
    }
    ck_assert_int_ge(checked, 4);
    /* rows past the simulated ones are estimated only */
    if (t.r.nrows > 3) ck_assert(!t.r.rows[3].low.simulated && !t.r.rows[3].high.simulated);
    sens_result_free(&t.r);
}
END_TEST

START_TEST(curve_override_scales_points)
{
    toy t;
    write_platform(t.path, sizeof t.path, 300, 2);
    sim_err err = {{0}};
    ck_assert_int_eq(cfg_load_platform(t.path, NULL, 0, &t.p, &err), SIM_OK);
    unlink(t.path);
    char set[512], why[128];
    double v = 0;
    ck_assert(sens_override(&t.p, "efficiency.gemm", 2.0, set, sizeof set, &v, why, sizeof why));
    /* 0.3 x 2 = 0.6; 0.6 x 2 and 0.8 x 2 stop at 1 */
    ck_assert_msg(strstr(set, "platform.efficiency.gemm=") == set && strstr(set, ",0.6]") &&
                      strstr(set, "[10000000000,1]") && strstr(set, "[100000000000,1]"), "%s", set);
    ck_assert(sens_override(&t.p, "supernode.devices", 0.5, set, sizeof set, &v, why, sizeof why));
    ck_assert_str_eq(set, "platform.supernode.devices=4");
    ck_assert(!sens_override(&t.p, "efficiency.gemm_fp8", 0.8, set, sizeof set, &v, why, sizeof why));
}
END_TEST

/* A field of every tier scales in each (a tier without it at its
 * default), the oversubscription stopping at 1, and the platform loads
 * through the override with those figures; a platform without tiers has
 * no such figure. */
START_TEST(tier_override_scales_every_tier)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/heptasim-test-sens-tiers-%d.json", (int)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"name\": \"tiered\", \"devices\": 64,"
          " \"device\": {\"peak_tflops\": 300, \"hbm_GiB\": 80, \"hbm_TBps\": 2},"
          " \"node\": {\"devices\": 8}, \"supernode\": {\"devices\": 8, \"fabric_GBps\": 200, \"latency_us\": 2},"
          " \"network\": {\"nic_GBps\": 25, \"latency_us\": 3, \"tiers\": [{\"devices\": 16, \"oversubscription\": 2,"
          " \"latency_us\": 1}, {\"devices\": 64}]},"
          " \"efficiency\": {\"gemm\": [[1e8, 0.3], [1e10, 0.6], [1e11, 0.8]], \"attention\": 0.5, \"memory\": 0.8,"
          " \"network\": 0.8, \"kernel_overhead_us\": 5, \"collective_step_us\": 10}}",
          f);
    fclose(f);
    sim_err err = {{0}};
    cfg_platform p, q;
    ck_assert_msg(cfg_load_platform(path, NULL, 0, &p, &err) == SIM_OK, "%s", err.msg);
    char set[1024], why[128];
    double v = 0;
    const char *items[1] = {set};
    cfg_overrides ov = {1, items};
    ck_assert_msg(sens_override(&p, "network.tiers.oversubscription", 1.5, set, sizeof set, &v, why, sizeof why),
                  "%s", why);
    ck_assert(strstr(set, "platform.network.tiers=") == set);
    ck_assert_msg(cfg_load_platform(path, &ov, 0, &q, &err) == SIM_OK, "%s: %s", set, err.msg);
    ck_assert_int_eq(q.ntiers, 2);
    ck_assert_double_eq_tol(q.tiers[0].oversubscription, 3.0, 1e-12);
    ck_assert_double_eq_tol(q.tiers[1].oversubscription, 1.5, 1e-12);
    ck_assert_double_eq_tol(q.tiers[0].latency_s, p.tiers[0].latency_s, 1e-18);
    ck_assert(sens_override(&p, "network.tiers.oversubscription", 0.5, set, sizeof set, &v, why, sizeof why));
    ck_assert_msg(cfg_load_platform(path, &ov, 0, &q, &err) == SIM_OK, "%s: %s", set, err.msg);
    ck_assert_double_eq_tol(q.tiers[0].oversubscription, 1.0, 1e-12);
    ck_assert_double_eq_tol(q.tiers[1].oversubscription, 1.0, 1e-12);
    ck_assert(sens_override(&p, "network.tiers.latency_us", 2.0, set, sizeof set, &v, why, sizeof why));
    ck_assert_msg(cfg_load_platform(path, &ov, 0, &q, &err) == SIM_OK, "%s: %s", set, err.msg);
    ck_assert_double_eq_tol(q.tiers[0].latency_s, 2e-6, 1e-18);
    ck_assert_double_eq_tol(q.tiers[1].latency_s, 0.0, 1e-18);
    unlink(path);

    toy t;
    write_platform(t.path, sizeof t.path, 300, 2);
    ck_assert_int_eq(cfg_load_platform(t.path, NULL, 0, &t.p, &err), SIM_OK);
    unlink(t.path);
    ck_assert(!sens_override(&t.p, "network.tiers.oversubscription", 1.5, set, sizeof set, &v, why, sizeof why));
    ck_assert_msg(strstr(why, "no network.tiers"), "%s", why);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sensitivity");
    TCase *tc = tcase_create("sensitivity");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, unused_figure_moves_nothing);
    tcase_add_test(tc, bound_toys_move_their_figure);
    tcase_add_test(tc, simulated_agrees_in_sign);
    tcase_add_test(tc, curve_override_scales_points);
    tcase_add_test(tc, tier_override_scales_every_tier);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
