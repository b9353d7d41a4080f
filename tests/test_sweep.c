/* test_sweep.c - the parts of a sweep around the search: which candidates
 * a shard simulates, resuming from a records file (torn line, results
 * taken back, records of other candidates or searches), merging the files
 * of shards (one record per candidate, simulated ones first, refusals),
 * compare's union of the two spaces' bests and its choice of both bests,
 * and the ranking with its counts. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "search/search.h"
#include "lib/check_run.h"

/* ------------------------------------------------------------ fixtures */

static const char *const TINY_MODEL = "{\"name\": \"tiny\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, "
                                      "\"ffn_hidden\": 4096, \"vocab\": 32000, \"seq_len\": 2048, "
                                      "\"activation\": \"gelu\", \"dtype\": \"bf16\"}";

static cfg_model model;
static cfg_platform platform;

/* The best `keep` candidates of the 7D space of the tiny model on 8
 * Ascend dies, global batch 16 (free with srch_result_free). */
static srch_result *search(int keep)
{
    sim_err err = {{0}};
    const char *items[] = {"platform.supernode.devices=8", "platform.node.devices=4"};
    cfg_overrides ov = {2, items};
    ck_assert_msg(cfg_parse_model(TINY_MODEL, "test model", NULL, &model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("ascend-a3-2048", &ov, 8, &platform, &err) == SIM_OK, "%s", err.msg);
    srch_request rq;
    memset(&rq, 0, sizeof rq);
    rq.model = &model;
    rq.platform = &platform;
    ck_assert_msg(cfg_parse_strategy("{\"global_batch\": 16}", "base", NULL, &rq.base, &err) == SIM_OK, "%s",
                  err.msg);
    rq.space = SRCH_SPACE_7D;
    rq.keep = keep;
    srch_result *r = NULL;
    ck_assert_msg(srch_run(&rq, &r, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_ge(r->nbest, keep);
    return r;
}

/* Gives c a simulation: step time t (failed when t < 0). */
static void simulated(srch_candidate *c, double t)
{
    c->state = t < 0 ? SRCH_SIM_FAILED : SRCH_SIM_DONE;
    c->step_time_s = t < 0 ? 0 : t;
    c->mfu = t < 0 ? 0 : 0.5 / t;
    if (t < 0) strcpy(c->error, "simulation deadlocked");
}

/* Writes the n candidates as a JSONL file at a new path (caller frees). */
static char *records_file(const srch_candidate *const *c, int n)
{
    char *path = fx_tmp_path("sweep", ".jsonl");
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    sim_err err = {{0}};
    for (int i = 0; i < n; i++) ck_assert_msg(srch_jsonl_write(f, path, c[i], &err) == SIM_OK, "%s", err.msg);
    fclose(f);
    return path;
}

/* -------------------------------------------------------------- shards */

/* Shards split the top in estimate order, modulo their count: together
 * they hold each of the top once, and nothing else. */
START_TEST(shards_split_the_top)
{
    srch_result *r = search(12);
    srch_candidate *out[12];
    for (int count = 1; count <= 4; count++) {
        int seen[12] = {0}, total = 0;
        for (int index = 0; index < count; index++) {
            int n = srch_shard(r, 10, index, count, out);
            ck_assert_int_eq(n, (10 - index + count - 1) / count);
            for (int i = 0; i < n; i++) {
                int pos = (int)(out[i] - r->best);
                ck_assert_int_eq(pos, index + i * count); /* in estimate order */
                ck_assert_int_lt(pos, 10);
                seen[pos]++;
            }
            total += n;
        }
        ck_assert_int_eq(total, 10);
        for (int i = 0; i < 10; i++) ck_assert_int_eq(seen[i], 1);
    }
    /* no sharding takes the whole top; a top beyond the list takes the list */
    ck_assert_int_eq(srch_shard(r, 10, 0, 0, out), 10);
    ck_assert_int_eq(srch_shard(r, 100, 0, 1, out), r->nbest < 12 ? r->nbest : 12);
    srch_result_free(r);
}
END_TEST

/* -------------------------------------------------------------- resume */

START_TEST(resume_takes_back_finished_simulations)
{
    srch_result *r = search(6);
    srch_candidate done[6];
    memcpy(done, r->best, sizeof done);
    simulated(&done[0], 2.0);
    simulated(&done[1], -1);
    simulated(&done[3], 9.0);
    simulated(&done[5], 3.0); /* not chosen this time */
    const srch_candidate *recs[] = {&done[0], &done[1], &done[2], &done[3], &done[5]};
    char *path = records_file(recs, 5);
    FILE *f = fopen(path, "a");
    fputs("{\"index\": 3, \"spa", f); /* an interrupted write */
    fclose(f);

    srch_candidate *chosen[4] = {&r->best[0], &r->best[1], &r->best[2], &r->best[3]};
    simulated(&r->best[3], 4.0); /* simulated already: its own result stays */
    srch_resumed rs;
    sim_err err = {{0}};
    ck_assert_msg(srch_resume(path, r->inputs_id, SRCH_SPACE_7D, chosen, 4, &rs, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(rs.resumed, 1); /* the simulated one; an estimate gives nothing */
    ck_assert_int_eq(rs.retried, 1); /* a failure is not final: simulated again */
    ck_assert_int_eq(rs.ignored, 1); /* the candidate of position 5 */
    ck_assert_int_eq(rs.skipped.torn, 1);
    ck_assert_int_eq(r->best[0].state, SRCH_SIM_DONE);
    ck_assert_double_eq(r->best[0].step_time_s, 2.0);
    ck_assert_int_eq(r->best[1].state, SRCH_SIM_NONE);
    ck_assert_int_eq(r->best[2].state, SRCH_SIM_NONE);
    ck_assert_double_eq(r->best[3].step_time_s, 4.0);
    ck_assert_str_eq(r->best[0].strategy.name, done[0].strategy.name); /* the search's name kept */
    /* the torn line is cut off: the file ends with the last whole record */
    char *text = fx_slurp(path);
    size_t len = strlen(text);
    ck_assert(len > 0 && text[len - 1] == '\n');
    ck_assert_ptr_null(strstr(text, "\"spa\n"));
    ck_assert_ptr_null(strstr(text, "{\"index\": 3"));
    free(text);

    /* records of another search are refused, naming the file */
    char other[17];
    snprintf(other, sizeof other, "%s", r->inputs_id);
    other[0] = other[0] == '0' ? '1' : '0';
    ck_assert_int_eq(srch_resume(path, other, SRCH_SPACE_7D, chosen, 4, &rs, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "comes from another search"), "%s", err.msg);
    ck_assert_int_eq(srch_resume(path, r->inputs_id, SRCH_SPACE_MEGATRON, chosen, 4, &rs, &err), SIM_EINVAL);
    /* so is a record of a chosen index with another strategy */
    chosen[0]->strategy.zero = chosen[0]->strategy.zero == 3 ? 2 : 3;
    ck_assert_int_eq(srch_resume(path, r->inputs_id, SRCH_SPACE_7D, chosen, 4, &rs, &err), SIM_EINVAL);
    /* no file yet: a fresh start */
    unlink(path);
    ck_assert_int_eq(srch_resume(path, r->inputs_id, SRCH_SPACE_7D, chosen, 4, &rs, &err), SIM_OK);
    ck_assert_int_eq(rs.resumed + rs.ignored, 0);
    free(path);
    srch_result_free(r);
}
END_TEST

/* --------------------------------------------------------------- merge */

START_TEST(merge_keeps_one_record_per_candidate)
{
    srch_result *r = search(4);
    srch_candidate c[4];
    memcpy(c, r->best, sizeof c);
    srch_candidate c1_done = c[1];
    simulated(&c1_done, 1.5);
    simulated(&c[2], 1.0);
    simulated(&c[3], -1);
    /* shard A: 0 and 1 (estimate only); shard B: 1 (simulated), 2, 3 */
    const srch_candidate *a[] = {&c[0], &c[1]}, *b[] = {&c1_done, &c[2], &c[3]};
    char *pa = records_file(a, 2), *pb = records_file(b, 3);
    const char *paths[] = {pa, pb, pa};
    srch_merged m;
    sim_err err = {{0}};
    ck_assert_msg(srch_merge(paths, 3, &m, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(m.nrecords, 7);
    const srch_ranking *k = &m.ranking;
    ck_assert_int_eq(k->n, 4);
    ck_assert_int_eq(k->simulated, 2);
    ck_assert_int_eq(k->failed, 1);
    /* simulated by step time, then the failed one, then the estimate */
    ck_assert_int_eq(k->rows[0]->index, c[2].index);
    ck_assert_int_eq(k->rows[1]->index, c[1].index);
    ck_assert_int_eq(k->rows[1]->state, SRCH_SIM_DONE); /* B's simulated record over A's estimate */
    ck_assert_int_eq(k->rows[2]->index, c[3].index);
    ck_assert_int_eq(k->rows[3]->index, c[0].index);
    ck_assert_int_eq(k->agreement.n, 2);
    /* the same files in another order rank the same */
    const char *again[] = {pb, pa};
    srch_merged m2;
    ck_assert_int_eq(srch_merge(again, 2, &m2, &err), SIM_OK);
    ck_assert_int_eq(m2.ranking.n, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(m2.ranking.rows[i]->index, k->rows[i]->index);
        ck_assert_int_eq(m2.ranking.rows[i]->state, k->rows[i]->state);
    }
    srch_merged_free(&m2);
    srch_merged_free(&m);

    /* a candidate whose strategy differs between files is refused */
    srch_candidate changed = c[0];
    changed.strategy.zero = changed.strategy.zero == 3 ? 2 : 3;
    const srch_candidate *x[] = {&changed};
    char *px = records_file(x, 1);
    const char *mixed[] = {pa, px};
    ck_assert_int_eq(srch_merge(mixed, 2, &m, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "differs between") && strstr(err.msg, pa) && strstr(err.msg, px), "%s", err.msg);
    srch_merged_free(&m);
    /* and so are records of another search */
    srch_candidate foreign = c[0];
    foreign.inputs_id[0] = foreign.inputs_id[0] == '0' ? '1' : '0';
    const srch_candidate *y[] = {&foreign};
    char *py = records_file(y, 1);
    const char *other[] = {pb, py};
    ck_assert_int_eq(srch_merge(other, 2, &m, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "different searches") && strstr(err.msg, py), "%s", err.msg);
    srch_merged_free(&m);
    /* a missing file names itself */
    unlink(py);
    ck_assert_int_eq(srch_merge(other, 2, &m, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, py) != NULL, "%s", err.msg);
    srch_merged_free(&m);
    unlink(pa);
    unlink(pb);
    unlink(px);
    free(pa);
    free(pb);
    free(px);
    free(py);
    srch_result_free(r);
}
END_TEST

/* ------------------------------------------------------------- compare */

/* A result by hand: best holds indices b[0..nb), best_megatron m[0..nm). */
static srch_result *result_of(const int *b, int nb, const int *m, int nm)
{
    srch_result *r = calloc(1, sizeof *r);
    r->best = calloc((size_t)nb + 1, sizeof *r->best);
    r->best_megatron = calloc((size_t)nm + 1, sizeof *r->best_megatron);
    for (int i = 0; i < nb; i++) r->best[i].index = b[i];
    for (int i = 0; i < nm; i++) {
        r->best_megatron[i].index = m[i];
        r->best_megatron[i].megatron_style = true;
    }
    r->nbest = nb;
    r->nbest_megatron = nm;
    return r;
}

START_TEST(compare_simulates_each_candidate_once)
{
    const int b[] = {7, 3, 9, 1}, m[] = {3, 12, 1, 20};
    srch_result *r = result_of(b, 4, m, 4);
    srch_candidate *u[8];
    int n = srch_compare_union(r, u);
    ck_assert_int_eq(n, 6); /* 3 and 1 are in both lists */
    const int want[] = {7, 3, 9, 1, 12, 20};
    for (int i = 0; i < n; i++) ck_assert_int_eq(u[i]->index, want[i]);
    ck_assert_ptr_eq(u[1], &r->best[1]);          /* the shared ones through the 7D list */
    ck_assert_ptr_eq(u[4], &r->best_megatron[1]); /* the others of the Megatron-style list */

    /* simulated: 3 is the fastest Megatron-style (through best), 9 the fastest */
    simulated(u[0], 2.0);
    simulated(u[1], 1.5);
    simulated(u[2], 1.2);
    simulated(u[3], -1);
    simulated(u[4], 1.8);
    simulated(u[5], 1.6);
    srch_comparison c;
    srch_compare_bests(r, u, n, &c);
    ck_assert_int_eq(r->best_megatron[0].state, SRCH_SIM_DONE); /* results given to the duplicates */
    ck_assert_int_eq(r->best_megatron[2].state, SRCH_SIM_FAILED);
    ck_assert_int_eq(c.megatron->index, 3);
    ck_assert_int_eq(c.best->index, 9);
    ck_assert_double_eq_tol(c.speedup, 1.5 / 1.2, 1e-15);
    sim_err err = {{0}};
    ck_assert_int_eq(srch_compare_check(&c, &err), SIM_OK);
    srch_result_free(r);

    /* no Megatron-style strategy simulated: no speedup, and compare says so */
    const int only[] = {5};
    r = result_of(only, 1, NULL, 0);
    n = srch_compare_union(r, u);
    ck_assert_int_eq(n, 1);
    simulated(u[0], 1.0);
    srch_compare_bests(r, u, n, &c);
    ck_assert_ptr_null(c.megatron);
    ck_assert_int_eq(c.best->index, 5);
    ck_assert(isnan(c.speedup));
    ck_assert_int_eq(srch_compare_check(&c, &err), SIM_EOOM);
    ck_assert_msg(strstr(err.msg, "no simulated Megatron-style strategy to compare") != NULL, "%s", err.msg);
    srch_result_free(r);
}
END_TEST

/* ------------------------------------------------------------- ranking */

START_TEST(ranking_counts_and_orders)
{
    srch_candidate c[5];
    memset(c, 0, sizeof c);
    srch_candidate *p[5];
    for (int i = 0; i < 5; i++) {
        c[i].index = i;
        c[i].est.step_s = 1.0 + i;
        p[i] = &c[i];
    }
    simulated(&c[0], 3.0);
    simulated(&c[1], -1);
    simulated(&c[3], 1.0);
    srch_ranking k;
    srch_ranking_make(p, 5, &k);
    ck_assert_int_eq(k.n, 5);
    ck_assert_int_eq(k.simulated, 2);
    ck_assert_int_eq(k.failed, 1);
    const int want[] = {3, 0, 1, 2, 4};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(k.rows[i]->index, want[i]);
    ck_assert_int_eq(k.agreement.n, 2);
    ck_assert_ptr_eq(p[0], &c[0]); /* the input order is the caller's */
    srch_ranking_free(&k);
    ck_assert_ptr_null(k.rows);
    srch_ranking_make(p, 0, &k);
    ck_assert_int_eq(k.n, 0);
    srch_ranking_free(&k);
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *t = tcase_create("sweep");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, shards_split_the_top);
    tcase_add_test(t, resume_takes_back_finished_simulations);
    tcase_add_test(t, merge_keeps_one_record_per_candidate);
    tcase_add_test(t, compare_simulates_each_candidate_once);
    tcase_add_test(t, ranking_counts_and_orders);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(sweep_suite());
}
