/* test_progress.c - the progress reporter and the engine's progress hook:
 * durations as people read them at each unit's edges, report lines in the
 * log as "label: text" (forced ones always, nothing once ended or never
 * begun), counts with and without the time left, and a replay with a
 * progress callback giving exactly the result of one without (the hook
 * only passes the instructions through).  No assertion on wall-clock
 * time: how many reports a run gets depends on the machine. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "lib/check_run.h"

static void duration_is(double s, const char *want)
{
    char buf[32];
    sim_duration(s, buf, sizeof buf);
    ck_assert_msg(strcmp(buf, want) == 0, "sim_duration(%g) = '%s', want '%s'", s, buf, want);
}

START_TEST(test_duration_units)
{
    duration_is(0, "0.0 s");
    duration_is(4.24, "4.2 s");
    duration_is(59.94, "59.9 s");
    duration_is(60, "1m00s");
    duration_is(187, "3m07s");
    duration_is(3599.4, "59m59s");
    duration_is(3600, "1h00m");
    duration_is(3 * 3600 + 125, "3h02m");
    duration_is(99 * 3600 + 1, "more than 99 h");
    duration_is(INFINITY, "more than 99 h");
    duration_is(NAN, "0.0 s");
    duration_is(-5, "0.0 s");
}
END_TEST

/* The log's text after the reports made by fn. */
static char *logged(void (*fn)(void))
{
    char *path = fx_tmp_path("progress", ".log");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    sim_progress_begin("heptasim test", false, f);
    ck_assert(sim_progress_on());
    fn();
    sim_progress_end();
    ck_assert(!sim_progress_on());
    fclose(f);
    char *text = fx_slurp(path);
    remove(path);
    free(path);
    return text;
}

static void forced_reports(void)
{
    sim_progress_report(true, "first %d", 1);
    sim_progress_report(true, "second");
}

static void counts(void)
{
    double t0 = sim_now_s();
    sim_progress_counts(true, "simulated", 0, 4, 2, t0);
    sim_progress_counts(true, "simulated", 2, 4, 2, t0);
    sim_progress_counts(true, "simulated", 4, 4, 0, t0);
}

START_TEST(test_report_lines)
{
    char *text = logged(forced_reports);
    ck_assert_str_eq(text, "heptasim test: first 1\nheptasim test: second\n");
    free(text);
    /* ended (or never begun): every call is a no-op */
    sim_progress_report(true, "dropped");
    sim_progress_counts(true, "simulated", 1, 2, 1, sim_now_s());
    sim_progress_clear();
    sim_progress_end();
}
END_TEST

START_TEST(test_counts_lines)
{
    char *text = logged(counts);
    size_t len = strlen(text);
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    ck_assert_msg(lines == 3 && text[len - 1] == '\n', "want three lines: %s", text);
    char *l1 = text, *l2 = strchr(l1, '\n') + 1, *l3 = strchr(l2, '\n') + 1;
    l2[-1] = l3[-1] = text[len - 1] = '\0';
    ck_assert_msg(strncmp(l1, "heptasim test: 0/4 simulated, 2 running, ", 41) == 0, "%s", l1);
    ck_assert_msg(strncmp(l2, "heptasim test: 2/4 simulated, 2 running, ", 41) == 0, "%s", l2);
    ck_assert_msg(strncmp(l3, "heptasim test: 4/4 simulated, 0 running, ", 41) == 0, "%s", l3);
    /* the time left only when some are done and some are not */
    ck_assert_ptr_null(strstr(l1, "left"));
    ck_assert_ptr_nonnull(strstr(l2, " left"));
    ck_assert_str_eq(l2 + strlen(l2) - 5, " left");
    ck_assert_ptr_null(strstr(l3, "left"));
    free(text);
}
END_TEST

/* A callback that reports nothing (it runs in the simulation's child). */
static void ignore_progress(void *ctx, double simulated_s)
{
    (void)ctx;
    (void)simulated_s;
}

START_TEST(test_hook_leaves_results)
{
    run_case c[2];
    fx_small_case(&c[0], NULL, 0);
    c[1] = c[0];
    eng_options plain = {0}, reported = {0};
    reported.progress = ignore_progress;
    c[0].options = &plain;
    c[1].options = &reported;
    sim_err err = {{0}};
    ck_assert_int_eq(runner_simulate_all(c, 2, 2, NULL, NULL, &err), SIM_OK);
    for (int i = 0; i < 2; i++) ck_assert_msg(c[i].rc == SIM_OK, "%s", c[i].msg);
    const eng_result *a = &c[0].result, *b = &c[1].result;
    ck_assert(a->step_time_s > 0);
    ck_assert(a->step_time_s == b->step_time_s);
    ck_assert_int_eq(a->critical_rank, b->critical_rank);
    ck_assert_int_eq(memcmp(&a->critical, &b->critical, sizeof a->critical), 0);
    ck_assert_int_eq(memcmp(a->bytes_total, b->bytes_total, sizeof a->bytes_total), 0);
    ck_assert_int_eq(a->instructions, b->instructions);
    ck_assert_int_eq(a->flows, b->flows);
    ck_assert_int_eq(a->ranks_simulated, b->ranks_simulated);
}
END_TEST

static Suite *progress_suite(void)
{
    Suite *s = suite_create("progress");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_duration_units);
    tcase_add_test(t, test_report_lines);
    tcase_add_test(t, test_counts_lines);
    tcase_add_test(t, test_hook_leaves_results);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(progress_suite());
}
