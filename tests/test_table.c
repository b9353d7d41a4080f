/* test_table.c - the ranked table of a search: ties (step times within
 * SRCH_TIE_REL) ranked by peak memory, the reasons (a tie says so, the key
 * named is the one whose change explains the gain), alike candidates folded
 * into one row, and the bests and speedup taken from the ranking. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "lib/check_run.h"

static cfg_model model;
static cfg_platform platform;

static void load(void)
{
    sim_err err = {{0}};
    const char *items[] = {"model.layers=8"};
    cfg_overrides ov = {1, items};
    ck_assert_msg(cfg_load_model("gpt-1.7b", &ov, &model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("dgx-a100", NULL, 16, &platform, &err) == SIM_OK, "%s", err.msg);
}

/* A simulated candidate of strategy json with step t, a compute time of
 * 1 s (the test sets the part that differs) and memory mem_gib. */
static void candidate(srch_candidate *c, int index, const char *json, double t, double mem_gib)
{
    sim_err err = {{0}};
    memset(c, 0, sizeof *c);
    ck_assert_msg(cfg_parse_strategy(json, "test strategy", NULL, &c->strategy, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&model, &platform, &c->strategy, &err) == SIM_OK, "%s: %s", json, err.msg);
    c->index = index;
    c->state = SRCH_SIM_DONE;
    c->step_time_s = c->est.step_s = t;
    c->compute_s = c->est.compute_s = 1.0;
    c->peak_bytes = mem_gib * SIM_GIB;
}

/* A strategy of 16 devices: global batch 32, micro-batch 1, dp 16 unless
 * more sets it, and the keys of more. */
static void strategy_json(char *out, size_t cap, const char *more)
{
    snprintf(out, cap, "{\"global_batch\": 32, \"micro_batch\": 1%s%s%s}", strstr(more, "\"dp\"") ? "" : ", \"dp\": 16",
             more[0] ? ", " : "", more);
}

START_TEST(tie_is_relative_with_a_floor)
{
    ck_assert(srch_tie(1.0, 1.0 + 0.9 * SRCH_TIE_REL));
    ck_assert(!srch_tie(1.0, 1.0 + 1.1 * SRCH_TIE_REL));
    ck_assert(srch_tie(1e-4, 1e-4 + 0.9 * SRCH_TIE_ABS_S)); /* below the floor */
    ck_assert(!srch_tie(1e-4, 1e-4 + 1.1 * SRCH_TIE_ABS_S));
    ck_assert(srch_tie(2.0, 2.0));
}
END_TEST

/* Three candidates within a tie of each other: ranked by memory, not
 * index, and not by a step time 1e-4 faster; the fourth, 1 % slower, last. */
START_TEST(ties_rank_by_memory)
{
    load();
    char j[256];
    strategy_json(j, sizeof j, "");
    srch_candidate c[4];
    candidate(&c[0], 1, j, 1.0, 30);
    candidate(&c[1], 2, j, 1.0001, 10);
    candidate(&c[2], 3, j, 1.0 + 1e-15, 20);
    candidate(&c[3], 0, j, 1.01, 5);
    srch_candidate *rows[4] = {&c[0], &c[1], &c[2], &c[3]};
    srch_ranking r;
    srch_ranking_make(rows, 4, &r);
    ck_assert_int_eq(r.rows[0]->index, 2);
    ck_assert_int_eq(r.rows[1]->index, 3);
    ck_assert_int_eq(r.rows[2]->index, 1);
    ck_assert_int_eq(r.rows[3]->index, 0);
    srch_ranking_free(&r);

    /* the estimate order: rounding noise is no difference, memory decides */
    c[0].est.step_s = 1.0;
    c[2].est.step_s = 1.0 + 1e-15;
    ck_assert_int_gt(srch_cmp_estimate(&c[0], &c[2]), 0);
    c[2].est.step_s = 1.0 + 1e-6;
    ck_assert_int_lt(srch_cmp_estimate(&c[0], &c[2]), 0);
}
END_TEST

/* The bests come from the ranking, so the best is the first row. */
START_TEST(bests_follow_the_ranking)
{
    load();
    char j[256];
    strategy_json(j, sizeof j, "");
    srch_candidate c[3];
    candidate(&c[0], 5, j, 1.0, 30);
    candidate(&c[1], 6, j, 1.0002, 10);
    candidate(&c[2], 7, j, 1.2, 10);
    c[0].megatron_style = c[2].megatron_style = true;
    srch_candidate *rows[3] = {&c[0], &c[1], &c[2]};
    srch_comparison cmp;
    srch_sweep_bests(rows, 3, &cmp);
    ck_assert_int_eq(cmp.best->index, 6);
    ck_assert_int_eq(cmp.megatron->index, 5);
    ck_assert_double_eq_tol(cmp.speedup, 1.0 / 1.0002, 1e-12);
    char text[96];
    ck_assert(srch_speedup_text(&cmp, text, sizeof text));
    ck_assert_msg(strstr(text, "a tie (within 0.1 %)") != NULL, "%s", text);
    c[0].step_time_s = 1.1;
    srch_sweep_bests(rows, 3, &cmp);
    ck_assert(srch_speedup_text(&cmp, text, sizeof text));
    ck_assert_str_eq(text, "1.100x");
    cmp.speedup = NAN;
    ck_assert(!srch_speedup_text(&cmp, text, sizeof text));
}
END_TEST

START_TEST(reasons_say_tie_below_the_threshold)
{
    load();
    char ja[256], jb[256], why[256];
    strategy_json(ja, sizeof ja, "\"zero\": 2");
    strategy_json(jb, sizeof jb, "\"zero\": 1");
    srch_candidate a, b;
    candidate(&a, 1, ja, 1.0, 10);
    candidate(&b, 2, jb, 1.0 + 1e-15, 10);
    b.bubble_s = 1e-15; /* noise in a component */
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_str_eq(why, "tie");
    /* a tie with less memory says so and names the key */
    b.peak_bytes = 20 * SIM_GIB;
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "tie; less memory") == why && strstr(why, "zero 2 vs 1"), "%s", why);
    /* above the threshold the component is named */
    b.step_time_s = 1.01;
    b.bubble_s = 0.01;
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "less bubble (10 ms)") == why, "%s", why);
}
END_TEST

/* The key named is the one whose change explains the gain: the next row
 * turned CP overlap off, and a larger ring would not explain less CP comm. */
START_TEST(reasons_name_the_key_behind_the_gain)
{
    load();
    char ja[256], jb[256], why[256];
    strategy_json(ja, sizeof ja, "\"dp\": 4, \"cp_ring\": 4, \"overlap_cp_comm\": true");
    strategy_json(jb, sizeof jb, "\"dp\": 8, \"cp_ring\": 2, \"overlap_cp_comm\": false");
    srch_candidate a, b;
    candidate(&a, 1, ja, 1.0, 10);
    candidate(&b, 2, jb, 1.1, 10);
    b.exposed_s[WL_DIM_CP] = 0.1;
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "less CP comm") && strstr(why, "overlap_cp_comm on vs off"), "%s", why);
    /* with overlap on in both, the smaller ring explains it */
    strategy_json(ja, sizeof ja, "\"dp\": 8, \"cp_ring\": 2");
    strategy_json(jb, sizeof jb, "\"dp\": 4, \"cp_ring\": 4");
    candidate(&a, 1, ja, 1.0, 10);
    candidate(&b, 2, jb, 1.1, 10);
    b.exposed_s[WL_DIM_CP] = 0.1;
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "cp_ring 2 vs 4"), "%s", why);
    /* less compute from recomputing less, not from the ring that also differs */
    strategy_json(ja, sizeof ja, "\"dp\": 8, \"cp_ring\": 2, \"recompute\": \"none\"");
    strategy_json(jb, sizeof jb, "\"recompute\": \"selective\"");
    candidate(&a, 1, ja, 1.0, 10);
    candidate(&b, 2, jb, 1.1, 10);
    b.compute_s = 1.1;
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "less compute") && strstr(why, "recompute none vs selective"), "%s", why);
}
END_TEST

/* Candidates alike in every figure fold into the first of them, also when
 * their hidden traffic differs; one that differs in memory, or in one
 * dimension's exposed time, does not. */
START_TEST(alike_candidates_fold)
{
    load();
    char ja[256], jb[256];
    strategy_json(ja, sizeof ja, "\"overlap_param_gather\": true");
    strategy_json(jb, sizeof jb, "\"overlap_param_gather\": false");
    srch_candidate c[4];
    candidate(&c[0], 1, ja, 1.0, 10);
    candidate(&c[1], 2, jb, 1.0, 10);
    candidate(&c[2], 3, jb, 1.0, 11);
    candidate(&c[3], 4, jb, 1.0, 10);
    c[3].exposed_s[WL_DIM_DP] = 0.01;
    ck_assert(srch_alike(&c[0], &c[1]));
    srch_candidate hidden = c[1];
    hidden.comm_s[WL_DIM_CP] = 0.2; /* a ring's traffic behind the attention */
    ck_assert(srch_alike(&c[0], &hidden));
    ck_assert(!srch_alike(&c[0], &c[2]));
    ck_assert(!srch_alike(&c[0], &c[3]));
    const srch_candidate *rows[4] = {&c[0], &c[1], &c[2], &c[3]};
    int same_as[4];
    srch_fold_alike(rows, 4, same_as);
    ck_assert_int_eq(same_as[0], 0);
    ck_assert_int_eq(same_as[1], 0);
    ck_assert_int_eq(same_as[2], 2);
    ck_assert_int_eq(same_as[3], 3);
    /* estimates: alike figures are not enough when the keys that set the
     * traffic differ (a ring whose traffic the estimate hides) */
    char jr[256];
    strategy_json(jr, sizeof jr, "\"dp\": 8, \"cp_ring\": 2");
    srch_candidate e[3];
    candidate(&e[0], 1, ja, 1.0, 10);
    candidate(&e[1], 2, jb, 1.0, 10);
    candidate(&e[2], 3, jr, 1.0, 10);
    for (int i = 0; i < 3; i++) e[i].state = SRCH_SIM_NONE;
    ck_assert(srch_alike(&e[0], &e[1]));
    ck_assert(!srch_alike(&e[0], &e[2]));
    ck_assert(!srch_alike(&e[0], &c[1])); /* an estimate and a simulation */

    /* the table prints one row for the two, saying so */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    srch_print_table(f, rows, 4, &platform);
    fclose(f);
    int lines = 0;
    for (char *p = buf; (p = strchr(p, '\n')); p++) lines++;
    ck_assert_int_eq(lines, 1 + 3);
    ck_assert_msg(strstr(buf, "(+1 alike)") != NULL, "%s", buf);
    free(buf);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("table");
    TCase *t = tcase_create("table");
    tcase_add_test(t, tie_is_relative_with_a_floor);
    tcase_add_test(t, ties_rank_by_memory);
    tcase_add_test(t, bests_follow_the_ranking);
    tcase_add_test(t, reasons_say_tie_below_the_threshold);
    tcase_add_test(t, reasons_name_the_key_behind_the_gain);
    tcase_add_test(t, alike_candidates_fold);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(suite());
}
