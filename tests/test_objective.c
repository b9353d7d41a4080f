/* test_objective.c - compare and sweep ranked by goodput
 * (srch_goodput_rank): a strategy with the faster step finishes later
 * when its checkpoint costs more, the bests are picked again, and the
 * reason names the cause from the goodput model's breakdown; the trials'
 * CSV rows and the progress band of the HTML report agree with the Monte
 * Carlo.
 *
 * The two candidates' step times are given (as the simulation would):
 * the ranking only reads them.  Both run 7.5B on 16 H100 (dp 8, tp 2);
 * ZeRO-0 holds the whole optimizer state on every rank, ZeRO-1 an eighth,
 * so after each failure the ZeRO-0 job reloads about 4x the bytes per node
 * from a slow storage (0.5 GB/s a node). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/reliability.h"
#include "goodput/goodput.h"
#include "lib/check_run.h"
#include "report/goodput.h"
#include "search/search.h"

/* 500 failures per 1000 days a device: 8 a day for 16 devices */
static const char *rel_text =
    "{\"components\": [{\"name\": \"gpu\", \"failures_per_1000_days\": 500, \"source\": \"test\"}],"
    " \"recovery\": {\"detection_min\": 1, \"restart_min\": 1, \"source\": \"test\"}}";
static const char *storage[] = {"platform.storage={\"node_GBps\": 0.5, \"aggregate_GBps\": 4}"};

static cfg_model model;
static cfg_platform platform;
static cfg_reliability rel;

static void setup(void)
{
    sim_err err = {{0}};
    cfg_overrides ov = {1, storage};
    ck_assert_msg(cfg_load_model("gpt-7.5b", NULL, &model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("dgx-h100", &ov, 16, &platform, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_parse_reliability(rel_text, "reliability/test.json", &rel, &err) == SIM_OK, "%s", err.msg);
}

static void candidate(const char *compact, double step_s, bool megatron, srch_candidate *c)
{
    sim_err err = {{0}};
    memset(c, 0, sizeof *c);
    ck_assert_msg(srch_load_strategy(compact, NULL, &c->strategy, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&model, &platform, &c->strategy, &err) == SIM_OK, "%s", err.msg);
    snprintf(c->strategy.name, sizeof c->strategy.name, "%s", megatron ? "megatron-1" : "7d-2");
    c->megatron_style = megatron;
    c->index = megatron ? 1 : 2;
    c->state = SRCH_SIM_DONE;
    c->step_time_s = step_s;
}

static gp_options options(void)
{
    return (gp_options){.rel = &rel, .interval_s = 600, .token_budget = 4e11, .seeds = 200, .seed = 1};
}

/* Ranked by step time, the ZeRO-0 candidate (3 % faster) is first; by
 * goodput it reaches the token budget later: its restarts cost more of the
 * wall clock than the 3 % it gains, and the reason says so with the
 * figures of the model. */
START_TEST(faster_step_finishes_later)
{
    sim_err err = {{0}};
    srch_candidate fast, slow;
    candidate("dp8 tp2 sp mb1 norc z0", 0.97, true, &fast);
    candidate("dp8 tp2 sp mb1 norc z1", 1.00, false, &slow);
    srch_candidate *rows[2] = {&fast, &slow}; /* the step-time ranking */
    srch_sweep s = {0};
    s.ranking.rows = rows;
    s.ranking.n = 2;
    s.cmp.best = &fast;
    s.cmp.megatron = &fast;
    srch_sweep_request rq = {0};
    rq.search.model = &model;
    rq.search.platform = &platform;
    rq.top = 1;
    rq.jobs = 1;
    gp_options o = options();
    srch_goodput g;
    ck_assert_msg(srch_goodput_rank(&rq, &s, &o, &g, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(g.n, 2);
    const srch_goodput_row *first = &g.rows[0], *second = &g.rows[1];
    ck_assert(first->c == &slow && second->c == &fast);
    ck_assert_msg(second->res.days.mean > first->res.days.mean, "%g vs %g days", second->res.days.mean,
                  first->res.days.mean);
    /* the bests are the objective's now, the step-time ones kept */
    ck_assert(s.cmp.best == &slow && s.cmp.megatron == &fast && g.step_best == &fast);
    ck_assert(fabs(s.cmp.speedup - 0.97) < 1e-12);
    /* the cause: the reload of what a rank holds */
    const gp_checkpoint *cf = &second->in.ckpt, *cs = &first->in.ckpt;
    ck_assert(cf->rank_bytes > 3 * cs->rank_bytes && cf->read_s > 3 * cs->read_s);
    ck_assert(fabs(cf->total_bytes - cs->total_bytes) < 1e-6 * cs->total_bytes); /* the same checkpoint, written once */
    double wall_f = second->res.days.mean * 86400, wall_s = first->res.days.mean * 86400;
    double rf = second->res.lost_mean_s[GP_RESTARTS] / wall_f, rs = first->res.lost_mean_s[GP_RESTARTS] / wall_s;
    ck_assert_msg(rf - rs > 0.03, "restarts %g vs %g of the wall clock", rf, rs);
    /* the reason, as compare prints it */
    rpt_goodput_side a = {fast.strategy.name, &second->in, &second->res};
    rpt_goodput_side b = {slow.strategy.name, &first->in, &first->res};
    char why[768], want[256];
    ck_assert_int_eq(rpt_goodput_why(&a, &b, why, sizeof why), 1);
    snprintf(want, sizeof want, "7d-2 finishes first: %.2f days to the token budget vs %.2f for megatron-1",
             first->res.days.mean, second->res.days.mean);
    ck_assert_msg(strncmp(why, want, strlen(want)) == 0, "%s", why);
    snprintf(want, sizeof want, "megatron-1's step is %.1f %% faster but its checkpoint reload is %.2fx as long",
             100 * (1 - 0.97 / 1.00), cf->read_s / cs->read_s);
    ck_assert_msg(strstr(why, want) != NULL, "%s\nwant: %s", why, want);
    snprintf(want, sizeof want, "%.1f %% of the time lost to restarts vs %.1f %%", 100 * rf, 100 * rs);
    ck_assert_msg(strstr(why, want) != NULL, "%s\nwant: %s", why, want);
    srch_goodput_free(&g);
}
END_TEST

/* Two candidates with the same step and checkpoint: the same seeds give
 * the same days, a tie; the step-time order stays and the reason says
 * they finish together. */
START_TEST(equal_steps_tie)
{
    sim_err err = {{0}};
    srch_candidate x, y;
    candidate("dp8 tp2 sp mb1 norc z1", 1.0, true, &x);
    candidate("dp8 tp2 sp mb1 norc z1", 1.0, false, &y);
    srch_candidate *rows[2] = {&x, &y};
    srch_sweep s = {0};
    s.ranking.rows = rows;
    s.ranking.n = 2;
    srch_sweep_request rq = {0};
    rq.search.model = &model;
    rq.search.platform = &platform;
    gp_options o = options();
    srch_goodput g;
    ck_assert_msg(srch_goodput_rank(&rq, &s, &o, &g, &err) == SIM_OK, "%s", err.msg);
    ck_assert(g.rows[0].c == &x); /* the same days: the step-time order stays */
    rpt_goodput_side a = {"a", &g.rows[0].in, &g.rows[0].res}, b = {"b", &g.rows[1].in, &g.rows[1].res};
    char why[512];
    rpt_goodput_why(&a, &b, why, sizeof why);
    ck_assert_msg(strstr(why, "a and b finish together") == why, "%s", why);
    srch_goodput_free(&g);
}
END_TEST

/* The CSV's trials are the Monte Carlo's; the progress band starts at 0,
 * ends with every trial at the budget (whole steps), p10 <= p90 and the
 * mean within [0, budget], and the first trial's path marks each of its interruptions. */
START_TEST(trials_and_band)
{
    sim_err err = {{0}};
    srch_candidate c;
    candidate("dp8 tp2 sp mb1 norc z1", 1.0, true, &c);
    gp_options o = options();
    o.seeds = 50;
    gp_inputs in;
    ck_assert_msg(gp_inputs_make(&o, &model, &platform, &c.strategy, &in, &err) == SIM_OK, "%s", err.msg);
    in.step_s = 1.0;
    gp_result r;
    gp_trial tr[50];
    ck_assert(gp_run_trials(&in, &r, tr, &err) == SIM_OK);
    double ettr = 0;
    for (int i = 0; i < 50; i++) ettr += tr[i].ettr / 50;
    ck_assert(fabs(ettr - r.ettr.mean) < 1e-12);
    gp_band b;
    ck_assert_msg(gp_progress_band(&in, 100, 1000, &b, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(b.trials, 50);
    double target = ceil(in.token_budget / in.tokens_per_step) * in.tokens_per_step;
    ck_assert(b.mean_tokens[0] == 0 && b.t_s[0] == 0);
    ck_assert(fabs(b.t_s[99] - r.days.p90 * 86400) <= fabs(r.days.p90 - r.days.p10) * 86400 + 86400);
    ck_assert(b.p10_tokens[99] == target && b.p90_tokens[99] == target);
    for (int k = 0; k < 100; k++) /* (a skewed spread can put the mean outside p10-p90) */
        ck_assert(b.p10_tokens[k] <= b.p90_tokens[k] && b.mean_tokens[k] >= 0 && b.mean_tokens[k] <= target);
    ck_assert_int_eq(b.first.nmarks, tr[0].interruptions + tr[0].planned);
    ck_assert(tr[0].interruptions > 0);
    ck_assert(b.first.points[b.first.npoints - 1].steps * in.tokens_per_step == target);
    gp_band_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("objective");
    TCase *tc = tcase_create("objective");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, faster_step_finishes_later);
    tcase_add_test(tc, equal_steps_tie);
    tcase_add_test(tc, trials_and_band);
    suite_add_tcase(s, tc);
    return check_run(s);
}
