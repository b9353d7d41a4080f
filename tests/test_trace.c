/* test_trace.c - the Chrome trace-event file: --trace-ranks lists, rank
 * coordinates against the workload's layout, and the file written during
 * a small simulated step (valid JSON, one process per traced rank, one
 * thread per stream, no overlapping slices on a track, slice times that
 * add up to the engine's own statistics). */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "report/report.h"
#include "runner/runner.h"
#include "lib/check_run.h"

/* ------------------------------------------------------------ fixtures */

static char *tmp_path(const char *suffix)
{
    return fx_tmp_path("trace", suffix);
}

static cJSON *read_json(const char *path)
{
    char *text = fx_slurp(path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    ck_assert_msg(root != NULL, "%s is not valid JSON", path);
    return root;
}

/* ------------------------------------------------------------ rank lists */

START_TEST(test_ranks_default_one_per_stage)
{
    static const char *const orders[] = {"order=tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp",
                                         "order=dp-tp_x-pp-tp_y-cp_ulysses-cp_ring-ep",
                                         "order=pp-dp-tp_x-tp_y-cp_ulysses-cp_ring-ep"};
    for (int k = 0; k < 3; k++) {
        run_case c;
        fx_small_case(&c, &orders[k], 1);
        int world = cfg_world_size(&c.strategy);
        bool *ranks = calloc((size_t)world, sizeof *ranks);
        sim_err err = {{0}};
        ck_assert_int_eq(rpt_trace_ranks(NULL, &c.strategy, ranks, &err), SIM_OK);
        int *per_stage = calloc((size_t)c.strategy.pp, sizeof *per_stage);
        int n = 0;
        for (int r = 0; r < world; r++) {
            if (!ranks[r]) continue;
            n++;
            int st = rpt_rank_stage(&c.strategy, r);
            per_stage[st]++;
            /* the first rank of its stage */
            for (int q = 0; q < r; q++) ck_assert_int_ne(rpt_rank_stage(&c.strategy, q), st);
        }
        ck_assert_int_eq(n, c.strategy.pp);
        for (int s = 0; s < c.strategy.pp; s++) ck_assert_int_eq(per_stage[s], 1);
        /* "" is the default too */
        bool *again = calloc((size_t)world, sizeof *again);
        ck_assert_int_eq(rpt_trace_ranks("", &c.strategy, again, &err), SIM_OK);
        ck_assert_mem_eq(ranks, again, (size_t)world * sizeof *ranks);
        free(again);
        free(per_stage);
        free(ranks);
    }
}
END_TEST

START_TEST(test_ranks_lists)
{
    run_case c;
    fx_small_case(&c, NULL, 0);
    int world = cfg_world_size(&c.strategy);
    ck_assert_int_eq(world, 16);
    bool ranks[16];
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_trace_ranks("0,5,8-11,15", &c.strategy, ranks, &err), SIM_OK);
    for (int r = 0; r < 16; r++) ck_assert_int_eq(ranks[r], r == 0 || r == 5 || (r >= 8 && r <= 11) || r == 15);
    ck_assert_int_eq(rpt_trace_ranks("all", &c.strategy, ranks, &err), SIM_OK);
    for (int r = 0; r < 16; r++) ck_assert(ranks[r]);
    ck_assert_int_eq(rpt_trace_ranks("3-3", &c.strategy, ranks, &err), SIM_OK);
    for (int r = 0; r < 16; r++) ck_assert_int_eq(ranks[r], r == 3);

    static const char *const bad[] = {"16", "0-16", "5-2", "x", "1,,2", "1,", "-3", "2-", "1 2", "all,3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err.msg[0] = '\0';
        ck_assert_msg(rpt_trace_ranks(bad[i], &c.strategy, ranks, &err) == SIM_EINVAL, "'%s' accepted", bad[i]);
        ck_assert_msg(strstr(err.msg, "--trace-ranks") != NULL, "message '%s'", err.msg);
        ck_assert_ptr_null(strchr(err.msg, '\n'));
    }
    rpt_trace_ranks("0-16", &c.strategy, ranks, &err);
    ck_assert_msg(strstr(err.msg, "0-15") != NULL, "message '%s' should give the valid range", err.msg);
}
END_TEST

/* rpt_rank_coords agrees with the workload's layout (ep excepted: the
 * report does not give ranks an ep digit). */
START_TEST(test_coords_match_layout)
{
    static const char *const cases[][4] = {
        {"order=tp_x-tp_y-cp_ulysses-cp_ring-ep-dp-pp", "tp_x=2", "pp=4", "dp=2"},
        {"order=dp-tp_x-pp-tp_y-cp_ulysses-cp_ring-ep", "tp_x=2", "pp=2", "dp=4"},
        {"order=cp_ring-pp-tp_x-dp-tp_y-cp_ulysses-ep", "cp_ring=2", "pp=2", "dp=0"},
    };
    for (int k = 0; k < 3; k++) {
        const char *extra[4] = {cases[k][0], cases[k][1], cases[k][2], cases[k][3]};
        run_case c;
        fx_small_case(&c, extra, 4);
        sim_err err = {{0}};
        cost_model *cost = cost_new(&c.platform, &err);
        ck_assert_msg(cost != NULL, "%s", err.msg);
        wl_plan *plan = NULL;
        ck_assert_msg(wl_plan_new(&c.model, &c.platform, &c.strategy, cost, &plan, &err) == SIM_OK, "%s", err.msg);
        for (int r = 0; r < wl_world(plan); r++) {
            int a[CFG_NDIMS], b[CFG_NDIMS];
            rpt_rank_coords(&c.strategy, r, a);
            wl_coords(plan, r, b);
            for (int d = 0; d < CFG_NDIMS; d++)
                if (d != CFG_DIM_EP) ck_assert_int_eq(a[d], b[d]);
            ck_assert_int_eq(rpt_rank_stage(&c.strategy, r), wl_stage(plan, r));
        }
        wl_plan_free(plan);
        cost_free(cost);
    }
}
END_TEST

START_TEST(test_open_unwritable)
{
    run_case c;
    fx_small_case(&c, NULL, 0);
    rpt_trace *t = (rpt_trace *)&c; /* must be reset to NULL */
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_trace_open("/nonexistent-dir/trace.json", &c.strategy, &t, &err), SIM_EIO);
    ck_assert_ptr_null(t);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dir/trace.json"));
    ck_assert_int_eq(rpt_trace_close(NULL, NULL, &err), SIM_OK);
}
END_TEST

/* ------------------------------------------------------ a traced step */

typedef struct track {
    int pid, tid;
    int n, cap;
    long long *ts, *te; /* ns */
} track;

static track *track_get(track *tr, int *ntr, int pid, int tid)
{
    for (int i = 0; i < *ntr; i++)
        if (tr[i].pid == pid && tr[i].tid == tid) return &tr[i];
    track *t = &tr[(*ntr)++];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    return t;
}

static int cmp_ll2(const void *a, const void *b)
{
    const long long *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Simulates the case with the given traced ranks (NULL: all) into a trace
 * file and returns its parsed tree; *res gets the engine's result. */
static cJSON *traced_step(run_case *c, bool *ranks, eng_result *res)
{
    char *path = tmp_path(".json");
    sim_err err = {{0}};
    rpt_views views = {0};
    ck_assert_int_eq(rpt_trace_open(path, &c->strategy, &views.trace, &err), SIM_OK);
    eng_options opt = {0};
    opt.trace = rpt_views_record;
    opt.trace_ctx = &views;
    opt.trace_rank = ranks;
    ck_assert_msg(runner_simulate_here(c, &opt) == SIM_OK, "%s", c->msg);
    *res = c->result;
    rpt_run run = {0};
    run.model = &c->model;
    run.platform = &c->platform;
    run.strategy = &c->strategy;
    run.sim = &c->result;
    ck_assert_int_eq(rpt_trace_close(views.trace, &run, &err), SIM_OK);
    cJSON *root = read_json(path);
    unlink(path);
    free(path);
    return root;
}

START_TEST(test_trace_all_ranks)
{
    run_case *c = calloc(1, sizeof *c);
    const char *extra[] = {"overlap_grad_reduce=true"};
    fx_small_case(c, extra, 1);
    int world = cfg_world_size(&c->strategy);
    eng_result res;
    cJSON *root = traced_step(c, NULL, &res);

    cJSON *evs = cJSON_GetObjectItem(root, "traceEvents");
    ck_assert(cJSON_IsArray(evs));
    ck_assert_str_eq(cJSON_GetObjectItem(root, "displayTimeUnit")->valuestring, "ms");
    cJSON *other = cJSON_GetObjectItem(root, "otherData");
    ck_assert_double_eq(cJSON_GetObjectItem(other, "step_time_s")->valuedouble, res.step_time_s);
    ck_assert_int_eq(cJSON_GetObjectItem(other, "events")->valueint, cJSON_GetArraySize(evs));

    bool *named = calloc((size_t)world, sizeof *named);
    bool *main_named = calloc((size_t)world, sizeof *main_named);
    int ntr = 0;
    track *tr = calloc((size_t)world * WL_NSTREAMS, sizeof *tr);
    double crit_compute = 0, crit_bubble = 0, crit_exposed = 0, crit_opt = 0;
    int crit_pid = res.critical_rank + 1, nslices = 0, ncomm_stream = 0;
    double last_end = 0;
    cJSON *ev;
    cJSON_ArrayForEach(ev, evs)
    {
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        const char *name = cJSON_GetObjectItem(ev, "name")->valuestring;
        int pid = cJSON_GetObjectItem(ev, "pid")->valueint, tid = cJSON_GetObjectItem(ev, "tid")->valueint;
        ck_assert_int_ge(pid, 1);
        ck_assert_int_le(pid, world);
        if (strcmp(ph, "M") == 0) {
            cJSON *args = cJSON_GetObjectItem(ev, "args");
            if (strcmp(name, "process_name") == 0) {
                char want[64];
                int r = pid - 1;
                snprintf(want, sizeof want, "rank %d (stage %d, dp ", r, rpt_rank_stage(&c->strategy, r));
                ck_assert_msg(strncmp(cJSON_GetObjectItem(args, "name")->valuestring, want, strlen(want)) == 0,
                              "process %d named '%s'", pid, cJSON_GetObjectItem(args, "name")->valuestring);
                ck_assert(!named[r]);
                named[r] = true;
            } else if (strcmp(name, "thread_name") == 0) {
                const char *tn = cJSON_GetObjectItem(args, "name")->valuestring;
                if (tid == 1) {
                    ck_assert_str_eq(tn, "main (compute)");
                    main_named[pid - 1] = true;
                } else {
                    ck_assert_msg(strstr(tn, " stream") != NULL, "thread '%s'", tn);
                }
            }
            continue;
        }
        double ts = cJSON_GetObjectItem(ev, "ts")->valuedouble;
        ck_assert(ts >= 0);
        if (strcmp(ph, "i") == 0) continue;
        ck_assert_str_eq(ph, "X");
        double dur = cJSON_GetObjectItem(ev, "dur")->valuedouble;
        ck_assert_msg(dur > 0, "slice '%s' has no duration", name);
        last_end = fmax(last_end, (ts + dur) * 1e-6);
        nslices++;
        track *t = track_get(tr, &ntr, pid, tid);
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 256;
            t->ts = realloc(t->ts, (size_t)t->cap * 2 * sizeof *t->ts);
        }
        t->ts[2 * t->n] = llround(ts * 1e3);
        t->ts[2 * t->n + 1] = llround((ts + dur) * 1e3);
        t->n++;

        const char *cat = cJSON_GetObjectItem(ev, "cat")->valuestring;
        cJSON *args = cJSON_GetObjectItem(ev, "args");
        if (strcmp(cat, "comm") == 0) {
            ck_assert(cJSON_GetObjectItem(args, "bytes")->valuedouble > 0);
            ck_assert(cJSON_IsString(cJSON_GetObjectItem(args, "group")));
            ck_assert(cJSON_IsString(cJSON_GetObjectItem(args, "collective")));
            if (tid > 1) ncomm_stream++;
        }
        /* names carry phase, and layer / micro-batch when they have one */
        cJSON *layer = cJSON_GetObjectItem(args, "layer"), *mb = cJSON_GetObjectItem(args, "micro_batch");
        char part[32];
        if (layer) {
            snprintf(part, sizeof part, " L%d ", layer->valueint);
            ck_assert_msg(strstr(name, part) != NULL, "slice '%s' lacks '%s'", name, part);
        }
        if (mb) {
            snprintf(part, sizeof part, " mb%d", mb->valueint);
            ck_assert_msg(strstr(name, part) != NULL, "slice '%s' lacks '%s'", name, part);
        }
        if (pid == crit_pid && tid == 1) {
            const char *phase = cJSON_GetObjectItem(args, "phase")->valuestring;
            if (strcmp(cat, "compute") == 0 && strcmp(phase, "optimizer") == 0)
                crit_opt += dur * 1e-6;
            else if (strcmp(cat, "compute") == 0)
                crit_compute += dur * 1e-6;
            else if (strcmp(cat, "bubble") == 0)
                crit_bubble += dur * 1e-6;
            else
                crit_exposed += dur * 1e-6;
        }
    }
    for (int r = 0; r < world; r++) {
        ck_assert_msg(named[r], "rank %d has no process", r);
        ck_assert_msg(main_named[r], "rank %d has no main track", r);
    }
    ck_assert_int_gt(ncomm_stream, 0); /* gradient reduction overlapped on the dp stream */

    /* No two slices of one track overlap. */
    for (int i = 0; i < ntr; i++) {
        track *t = &tr[i];
        qsort(t->ts, (size_t)t->n, 2 * sizeof *t->ts, cmp_ll2);
        for (int k = 1; k < t->n; k++)
            ck_assert_msg(t->ts[2 * k] >= t->ts[2 * k - 1], "pid %d tid %d: slice at %lld ns starts before %lld ns",
                          t->pid, t->tid, t->ts[2 * k], t->ts[2 * k - 1]);
        free(t->ts);
    }

    /* Slices add up to the engine's statistics of the critical rank (each
     * slice is rounded to the nanosecond). */
    double tol = nslices * 2e-9 + 1e-9;
    const eng_rank_stats *st = &res.critical;
    double exposed = 0;
    for (int d = 0; d < WL_NDIMS; d++) exposed += st->exposed_comm_s[d];
    ck_assert_double_eq_tol(crit_compute, st->compute_s - st->compute_by_phase_s[WL_PH_OPTIMIZER], tol);
    ck_assert_double_eq_tol(crit_opt, st->compute_by_phase_s[WL_PH_OPTIMIZER], tol);
    ck_assert_double_eq_tol(crit_bubble, st->bubble_s, tol);
    ck_assert_double_eq_tol(crit_exposed, exposed, tol);
    ck_assert(crit_compute > 0 && crit_bubble > 0);
    ck_assert(last_end <= res.step_time_s + 1e-9);
    ck_assert(last_end >= res.step_time_s - 1e-9); /* the critical rank ends the step */

    free(tr);
    free(named);
    free(main_named);
    cJSON_Delete(root);
    free(c);
}
END_TEST

START_TEST(test_trace_default_sample)
{
    run_case *c = calloc(1, sizeof *c);
    fx_small_case(c, NULL, 0);
    int world = cfg_world_size(&c->strategy);
    bool *ranks = calloc((size_t)world, sizeof *ranks);
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_trace_ranks(NULL, &c->strategy, ranks, &err), SIM_OK);
    eng_result res;
    cJSON *root = traced_step(c, ranks, &res);
    int procs = 0;
    cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "traceEvents"))
    {
        int pid = cJSON_GetObjectItem(ev, "pid")->valueint;
        ck_assert_msg(ranks[pid - 1], "rank %d was not asked for", pid - 1);
        if (strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, "process_name") == 0) procs++;
    }
    ck_assert_int_eq(procs, c->strategy.pp);
    cJSON_Delete(root);
    free(ranks);
    free(c);
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("ranks");
    tcase_add_test(tc, test_ranks_default_one_per_stage);
    tcase_add_test(tc, test_ranks_lists);
    tcase_add_test(tc, test_coords_match_layout);
    tcase_add_test(tc, test_open_unwritable);
    suite_add_tcase(s, tc);
    tc = tcase_create("file");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_trace_all_ranks);
    tcase_add_test(tc, test_trace_default_sample);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(trace_suite());
}
