/* test_html.c - the HTML reports: the run report of a small simulated step
 * (sections, balanced tags, self-contained, one memory bar per stage, the
 * timeline rows), the memory-only report of a strategy that does not fit,
 * the timeline's coarsening, and the sweep report (Pareto marks checked
 * against a naive dominance test, ranking order, bad input). */
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

/* ------------------------------------------------------------ utilities */

static char *tmp_path(const char *suffix)
{
    return fx_tmp_path("html", suffix);
}


static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* Checks that every element is closed in order (void element: meta;
 * comments and <!DOCTYPE> skipped).  Returns NULL or a static message. */
static const char *unbalanced(const char *text)
{
    static char msg[160];
    char stack[64][16];
    int depth = 0;
    for (const char *p = strchr(text, '<'); p; p = strchr(p + 1, '<')) {
        if (p[1] == '!') continue;
        bool closing = p[1] == '/';
        const char *q = p + 1 + closing;
        char name[16];
        size_t n = 0;
        while ((q[n] >= 'a' && q[n] <= 'z') || (q[n] >= '0' && q[n] <= '9')) n++;
        if (n == 0 || n >= sizeof name) {
            snprintf(msg, sizeof msg, "bad tag at offset %ld", (long)(p - text));
            return msg;
        }
        memcpy(name, q, n);
        name[n] = '\0';
        const char *end = strchr(q, '>');
        if (!end) return "unterminated tag";
        if (closing) {
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0) {
                snprintf(msg, sizeof msg, "</%s> closes <%s> at offset %ld", name, depth ? stack[depth - 1] : "",
                         (long)(p - text));
                return msg;
            }
            depth--;
        } else if (end[-1] != '/' && strcmp(name, "meta") != 0) {
            if (depth == 64) return "nesting too deep";
            strcpy(stack[depth++], name);
        }
    }
    if (depth) {
        snprintf(msg, sizeof msg, "<%s> never closed", stack[depth - 1]);
        return msg;
    }
    return NULL;
}

/* Checks a report is one self-contained file: no script, no external
 * resource; the only URL is the SVG namespace. */
static void assert_self_contained(const char *html)
{
    ck_assert_ptr_null(strstr(html, "<script"));
    ck_assert_ptr_null(strstr(html, "<link"));
    ck_assert_ptr_null(strstr(html, " src="));
    ck_assert_ptr_null(strstr(html, " href="));
    ck_assert_ptr_null(strstr(html, "@import"));
    ck_assert_int_eq(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}


static void fill_run(rpt_run *run, const run_case *c)
{
    memset(run, 0, sizeof *run);
    run->model = &c->model;
    run->platform = &c->platform;
    run->strategy = &c->strategy;
    run->memory_stage = mdl_peak_memory(&c->model, &c->strategy, &run->memory);
}

/* ------------------------------------------------------------ run report */

START_TEST(test_run_report)
{
    run_case *c = calloc(1, sizeof *c);
    fx_small_case(c, NULL, 0);
    int world = cfg_world_size(&c->strategy);
    bool *ranks = calloc((size_t)world, sizeof *ranks);
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_trace_ranks(NULL, &c->strategy, ranks, &err), SIM_OK);
    rpt_views views = {0};
    views.timeline = rpt_timeline_new(&c->strategy, ranks);
    eng_options opt = {0};
    opt.trace = rpt_views_record;
    opt.trace_ctx = &views;
    opt.trace_rank = ranks;
    ck_assert_msg(runner_simulate_here(c, &opt) == SIM_OK, "%s", c->msg);
    rpt_run run;
    fill_run(&run, c);
    run.sim = &c->result;

    char *path = tmp_path(".html"), *path2 = tmp_path(".html");
    ck_assert_int_eq(rpt_write_run_html(path, &run, views.timeline, &err), SIM_OK);
    ck_assert_int_eq(rpt_write_run_html(path2, &run, views.timeline, &err), SIM_OK);
    char *html = fx_slurp(path), *html2 = fx_slurp(path2);
    ck_assert_str_eq(html, html2); /* deterministic */
    ck_assert_int_eq(strncmp(html, "<!DOCTYPE html>", 15), 0);
    const char *why = unbalanced(html);
    ck_assert_msg(why == NULL, "%s", why);
    assert_self_contained(html);
    static const char *const sections[] = {"id=\"summary\"", "id=\"timeline\"", "id=\"breakdown\"", "id=\"memory\"",
                                           "id=\"communication\""};
    for (int i = 0; i < 5; i++) ck_assert_msg(strstr(html, sections[i]) != NULL, "no %s", sections[i]);
    ck_assert_int_eq(count(html, "<svg "), 4);

    /* a memory bar (every component) per stage */
    char want[96];
    for (int k = 0; k < c->strategy.pp; k++) {
        snprintf(want, sizeof want, "<title>stage %d weights: ", k);
        ck_assert_msg(strstr(html, want) != NULL, "no memory bar for stage %d", k);
        snprintf(want, sizeof want, "<title>stage %d activations: ", k);
        ck_assert_msg(strstr(html, want) != NULL, "no activations of stage %d", k);
    }
    ck_assert_ptr_nonnull(strstr(html, "capacity "));
    /* a timeline row per sampled rank, with forward and backward work */
    for (int r = 0; r < world; r++) {
        if (!ranks[r]) continue;
        snprintf(want, sizeof want, "<title>rank %d: forward, ", r);
        ck_assert_msg(strstr(html, want) != NULL, "rank %d has no forward slice", r);
        snprintf(want, sizeof want, "<title>rank %d: backward, ", r);
        ck_assert_msg(strstr(html, want) != NULL, "rank %d has no backward slice", r);
        snprintf(want, sizeof want, "rank %d</text>", r);
        ck_assert_msg(strstr(html, want) != NULL, "rank %d has no row label", r);
    }
    /* later stages wait for the first micro-batch: a bubble on the last */
    snprintf(want, sizeof want, "<title>rank %d: pipeline bubble, 0 s to ",
             (c->strategy.pp - 1) * (world / c->strategy.pp));
    ck_assert_msg(strstr(html, want) != NULL, "the last stage does not start with a bubble");

    unlink(path);
    unlink(path2);
    free(html);
    free(html2);
    free(path);
    free(path2);
    rpt_timeline_free(views.timeline);
    free(ranks);
    free(c);
}
END_TEST

START_TEST(test_memory_only_report)
{
    run_case c;
    const char *extra[] = {"model.layers=40", "recompute=none", "zero=0", "model.seq_len=16384", "pp=2", "dp=4"};
    fx_small_case(&c, extra, 6);
    rpt_run run;
    fill_run(&run, &c);
    ck_assert_msg(run.memory.total_bytes > cfg_usable_hbm_bytes(&c.platform), "the case should not fit");
    char *path = tmp_path(".html");
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_write_run_html(path, &run, NULL, &err), SIM_OK);
    char *html = fx_slurp(path);
    const char *why = unbalanced(html);
    ck_assert_msg(why == NULL, "%s", why);
    assert_self_contained(html);
    ck_assert_ptr_nonnull(strstr(html, "id=\"memory\""));
    ck_assert_ptr_null(strstr(html, "id=\"timeline\""));
    ck_assert_ptr_null(strstr(html, "id=\"breakdown\""));
    ck_assert_ptr_nonnull(strstr(html, "DOES NOT FIT"));
    ck_assert_int_eq(count(html, "<svg "), 1);
    unlink(path);
    free(html);
    free(path);
    ck_assert_int_eq(rpt_write_run_html("/nonexistent-dir/r.html", &run, NULL, &err), SIM_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dir/r.html"));
}
END_TEST

/* Ten one-second slices alternating forward and backward on one rank,
 * added in small pieces so the timeline coarsens many times, come out as
 * ten runs that start where the slices do (to one bucket). */
START_TEST(test_timeline_coarsening)
{
    run_case c;
    fx_small_case(&c, NULL, 0);
    int world = cfg_world_size(&c.strategy);
    bool *ranks = calloc((size_t)world, sizeof *ranks);
    ranks[5] = true;
    rpt_timeline *tl = rpt_timeline_new(&c.strategy, ranks);
    wl_instr in = {0};
    in.op = WL_COMPUTE;
    in.layer = in.micro = -1;
    for (int k = 0; k < 10000; k++) {
        double t0 = k * 1e-3;
        in.phase = (k / 1000) % 2 ? WL_PH_BACKWARD : WL_PH_FORWARD;
        rpt_timeline_add(tl, 5, &in, WL_S_MAIN, t0, t0 + 1e-3);
        rpt_timeline_add(tl, 4, &in, WL_S_MAIN, t0, t0 + 1e-3); /* not sampled: ignored */
    }
    eng_result res = {0};
    res.step_time_s = 10.0;
    rpt_run run;
    fill_run(&run, &c);
    run.sim = &res;
    char *path = tmp_path(".html");
    sim_err err = {{0}};
    ck_assert_int_eq(rpt_write_run_html(path, &run, tl, &err), SIM_OK);
    char *html = fx_slurp(path);
    ck_assert_int_eq(count(html, "<title>rank 5: forward, "), 5);
    ck_assert_int_eq(count(html, "<title>rank 5: backward, "), 5);
    ck_assert_int_eq(count(html, "<title>rank 4: "), 0);
    /* each run starts within one bucket (10 s / 1600 < 8.2 ms) of its slice */
    int runs = 0;
    for (const char *p = strstr(html, "<title>rank 5: "); p; p = strstr(p + 1, "<title>rank 5: ")) {
        const char *t = strstr(p, ", ") + 2;
        double v = atof(t);
        if (strstr(t, " ms") == strchr(t, ' ')) v *= 1e-3;
        ck_assert_msg(fabs(v - runs) < 0.0082 + 1e-9 || (runs == 0 && v == 0), "run %d starts at %g s", runs, v);
        runs++;
    }
    ck_assert_int_eq(runs, 10);
    unlink(path);
    free(html);
    free(path);
    rpt_timeline_free(tl);
    free(ranks);
}
END_TEST

/* ------------------------------------------------------------ sweep */

static unsigned lcg(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xffff;
}

/* A deterministic pseudo-random set of n candidates. */
static cJSON *make_candidates(int n, double cap)
{
    unsigned seed = 7;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        bool meg = lcg(&seed) % 2;
        bool sim = lcg(&seed) % 3 != 0;
        double est = 1.0 + lcg(&seed) / 65536.0 * 2.0;
        double peak = cap * (0.3 + lcg(&seed) / 65536.0 * 0.9);
        cJSON_AddNumberToObject(o, "index", i);
        cJSON_AddStringToObject(o, "space", meg ? "megatron" : "7d");
        cJSON_AddBoolToObject(o, "megatron_style", meg);
        cJSON *st = cJSON_AddObjectToObject(o, "strategy");
        cJSON_AddNumberToObject(st, "dp", 1 << (i % 5));
        cJSON_AddNumberToObject(st, "pp", 4);
        cJSON_AddNumberToObject(st, "tp_x", 8);
        cJSON_AddNumberToObject(st, "tp_y", meg ? 1 : 2);
        cJSON_AddStringToObject(st, "schedule", "1f1b");
        cJSON_AddStringToObject(st, "recompute", "selective");
        cJSON_AddNumberToObject(st, "global_batch", 64);
        cJSON_AddNumberToObject(o, "estimate_step_time_s", est);
        cJSON_AddBoolToObject(o, "simulated", sim);
        if (sim) cJSON_AddNumberToObject(o, "step_time_s", est * (0.9 + lcg(&seed) / 65536.0 * 0.3));
        cJSON_AddNumberToObject(o, "mfu", 0.4 / est);
        cJSON *mem = cJSON_AddObjectToObject(o, "memory");
        cJSON_AddNumberToObject(mem, "peak_bytes", peak);
        cJSON_AddNumberToObject(mem, "capacity_bytes", cap);
        cJSON_AddBoolToObject(mem, "fits", peak <= cap);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static double cand_time(const cJSON *o)
{
    const cJSON *s = cJSON_GetObjectItem(o, "step_time_s");
    return cJSON_IsTrue(cJSON_GetObjectItem(o, "simulated")) && s ? s->valuedouble
                                                                   : cJSON_GetObjectItem(o, "estimate_step_time_s")->valuedouble;
}

static double cand_mem(const cJSON *o)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(o, "memory"), "peak_bytes")->valuedouble;
}

static bool cand_fits(const cJSON *o)
{
    return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "memory"), "fits"));
}

/* Whether candidate a goes before b in a naive ranking: fitting ones
 * first, then by time, memory and index. */
static bool ranks_before(const cJSON *a, const cJSON *b)
{
    if (cand_fits(a) != cand_fits(b)) return cand_fits(a);
    if (cand_time(a) != cand_time(b)) return cand_time(a) < cand_time(b);
    if (cand_mem(a) != cand_mem(b)) return cand_mem(a) < cand_mem(b);
    return cJSON_GetObjectItem(a, "index")->valueint < cJSON_GetObjectItem(b, "index")->valueint;
}

/* A copy of arr in that ranking, as a search hands its candidates over. */
static cJSON *ranked_copy(const cJSON *arr)
{
    int n = cJSON_GetArraySize(arr);
    bool *taken = calloc((size_t)n, sizeof *taken);
    cJSON *out = cJSON_CreateArray();
    for (int k = 0; k < n; k++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && (best < 0 || ranks_before(cJSON_GetArrayItem(arr, i), cJSON_GetArrayItem(arr, best))))
                best = i;
        taken[best] = true;
        cJSON_AddItemToArray(out, cJSON_Duplicate(cJSON_GetArrayItem(arr, best), true));
    }
    free(taken);
    return out;
}

START_TEST(test_sweep_report)
{
    const int n = 60;
    double cap = 60 * SIM_GIB;
    cJSON *arr = make_candidates(n, cap), *ranked = ranked_copy(arr);
    char *path = tmp_path(".html");
    sim_err err = {{0}};
    rpt_sweep_head head = {.title = "sweep <test>", .megatron_index = -1, .best_index = -1};
    ck_assert_int_eq(rpt_write_sweep_html(path, ranked, &head, &err), SIM_OK);
    char *html = fx_slurp(path);
    const char *why = unbalanced(html);
    ck_assert_msg(why == NULL, "%s", why);
    assert_self_contained(html);
    ck_assert_ptr_nonnull(strstr(html, "<h1>sweep &lt;test&gt;</h1>"));
    ck_assert_ptr_nonnull(strstr(html, "id=\"scatter\""));
    ck_assert_ptr_nonnull(strstr(html, "id=\"ranking\""));
    ck_assert_ptr_nonnull(strstr(html, "<polyline")); /* the front */
    /* one marker with a tooltip per candidate */
    ck_assert_int_eq(count(html, "<circle cx=") - count(html, "r=\"9\" fill=\"none\"") - 2, n);

    /* The table: rank, candidate index, ..., fits, Pareto mark. */
    bool *seen = calloc((size_t)n, sizeof *seen);
    int rows = 0, last_rank = 0, nfront = 0;
    double last_time = 0;
    bool fits_done = false;
    const char *p = strstr(html, "<th>Pareto</th></tr>");
    ck_assert_ptr_nonnull(p);
    for (p = strstr(p, "<tr"); p; p = strstr(p + 1, "<tr")) {
        const char *td = strstr(p, "<td>");
        int rank = atoi(td + 4);
        int idx = atoi(strstr(td + 4, "<td>") + 4);
        const char *end = strstr(p, "</tr>");
        ck_assert_int_eq(rank, last_rank + 1);
        /* the rows in the order given */
        ck_assert_int_eq(idx, cJSON_GetObjectItem(cJSON_GetArrayItem(ranked, rank - 1), "index")->valueint);
        last_rank = rank;
        ck_assert(idx >= 0 && idx < n && !seen[idx]);
        seen[idx] = true;
        const cJSON *o = cJSON_GetArrayItem(arr, idx);
        double t = cand_time(o), m = cand_mem(o);
        /* fitting candidates first, each group by time */
        if (!cand_fits(o)) {
            if (!fits_done) last_time = 0;
            fits_done = true;
        } else {
            ck_assert(!fits_done);
        }
        ck_assert(t >= last_time);
        last_time = t;
        /* the Pareto mark matches a naive dominance test over fitting candidates */
        bool dominated = !cand_fits(o);
        for (int j = 0; j < n && !dominated; j++) {
            const cJSON *q = cJSON_GetArrayItem(arr, j);
            if (j == idx || !cand_fits(q)) continue;
            double tq = cand_time(q), mq = cand_mem(q);
            if ((tq <= t && mq <= m && (tq < t || mq < m)) || (tq == t && mq == m && j < idx)) dominated = true;
        }
        /* the strategy in its compact form */
        char compact[64];
        snprintf(compact, sizeof compact, "<td class=\"l\">dp%d pp4 tp8%s mb1 sel z0</td>", 1 << (idx % 5),
                 cJSON_IsTrue(cJSON_GetObjectItem(o, "megatron_style")) ? "" : "x2");
        const char *name = strstr(p, compact);
        ck_assert_msg(name && name < end, "candidate %d: no %s in its row", idx, compact);
        char *mark = strstr(p, "&#10003;");
        bool marked = mark && mark < end;
        ck_assert_msg(marked == !dominated, "candidate %d: Pareto mark %d, dominated %d", idx, marked, dominated);
        nfront += marked;
        rows++;
    }
    ck_assert_int_eq(rows, n);
    ck_assert_int_gt(nfront, 1);
    free(seen);
    unlink(path);
    free(html);

    /* Same input, same bytes. */
    char *path2 = tmp_path(".html");
    ck_assert_int_eq(rpt_write_sweep_html(path, ranked, &head, &err), SIM_OK);
    ck_assert_int_eq(rpt_write_sweep_html(path2, ranked, &head, &err), SIM_OK);
    char *a = fx_slurp(path), *b = fx_slurp(path2);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    unlink(path);
    unlink(path2);
    free(path2);

    /* Bad input and unwritable files. */
    cJSON *obj = cJSON_CreateObject();
    ck_assert_int_eq(rpt_write_sweep_html(path, obj, NULL, &err), SIM_EINVAL);
    ck_assert_int_eq(rpt_write_sweep_html("/nonexistent-dir/s.html", arr, NULL, &err), SIM_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent-dir/s.html"));
    ck_assert_int_eq(access(path, F_OK), -1);
    cJSON_Delete(obj);

    /* An empty search still gives a page. */
    cJSON *empty = cJSON_CreateArray();
    ck_assert_int_eq(rpt_write_sweep_html(path, empty, NULL, &err), SIM_OK);
    html = fx_slurp(path);
    ck_assert_msg(unbalanced(html) == NULL, "%s", unbalanced(html));
    ck_assert_ptr_nonnull(strstr(html, "0 candidates"));
    free(html);
    unlink(path);
    cJSON_Delete(empty);
    free(path);
    cJSON_Delete(arr);
    cJSON_Delete(ranked);
}
END_TEST

/* Equal step times, ranked by the search with the candidate of less
 * memory first: the table keeps that order, only it of the two is on the
 * front (a slower one with even less memory is too), and the head names
 * both bests and prints the speedup as given. */
START_TEST(test_sweep_ties)
{
    const double t[3] = {1.0, 1.0, 2.0}, m[3] = {20 * SIM_GIB, 30 * SIM_GIB, 10 * SIM_GIB};
    const int index[3] = {1, 0, 2};
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < 3; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", index[i]);
        cJSON_AddBoolToObject(o, "megatron_style", index[i] == 0);
        cJSON_AddNumberToObject(o, "estimate_step_time_s", t[i]);
        cJSON_AddBoolToObject(o, "simulated", false);
        cJSON *mem = cJSON_AddObjectToObject(o, "memory");
        cJSON_AddNumberToObject(mem, "peak_bytes", m[i]);
        cJSON_AddNumberToObject(mem, "capacity_bytes", 64 * SIM_GIB);
        cJSON_AddItemToArray(arr, o);
    }
    char *path = tmp_path(".html");
    sim_err err = {{0}};
    rpt_sweep_head head = {.megatron_index = 0, .best_index = 1, .speedup = "1.000x, a tie (within 0.1 %)"};
    ck_assert_int_eq(rpt_write_sweep_html(path, arr, &head, &err), SIM_OK);
    char *html = fx_slurp(path);
    const char *p = strstr(html, "<th>Pareto</th></tr>");
    ck_assert_ptr_nonnull(p);
    int order[3], marked[3], k = 0;
    for (p = strstr(p, "<tr"); p && k < 3; p = strstr(p + 1, "<tr"), k++) {
        const char *td = strstr(p, "<td>");
        order[k] = atoi(strstr(td + 4, "<td>") + 4);
        const char *mark = strstr(p, "&#10003;");
        marked[k] = mark && mark < strstr(p, "</tr>");
    }
    ck_assert_int_eq(k, 3);
    ck_assert_int_eq(order[0], 1);
    ck_assert_int_eq(order[1], 0);
    ck_assert_int_eq(order[2], 2);
    ck_assert(marked[0] && !marked[1] && marked[2]);
    ck_assert_ptr_nonnull(strstr(html, "Best Megatron-style: #2 (candidate 0)"));
    ck_assert_ptr_nonnull(strstr(html, "Best 7D: #1 (candidate 1)"));
    ck_assert_ptr_nonnull(strstr(html, "(simulated): 1.000x, a tie (within 0.1 %)."));
    ck_assert_ptr_null(strstr(html, "faster"));
    unlink(path);
    free(path);
    free(html);
    cJSON_Delete(arr);
}
END_TEST

/* The texts of the SVG <text> elements whose opening tag holds attr,
 * with their x and y; returns how many (at most cap). */
static int texts_with(const char *html, const char *attr, char (*text)[64], double *x, double *y, int cap)
{
    int n = 0;
    for (const char *p = strstr(html, "<text x=\""); p && n < cap; p = strstr(p + 1, "<text x=\"")) {
        const char *gt = strchr(p, '>');
        const char *a = strstr(p, attr);
        if (!gt || !a || a > gt) continue;
        x[n] = atof(p + strlen("<text x=\""));
        y[n] = atof(strstr(p, "y=\"") + 3);
        const char *end = strstr(gt, "</text>");
        int len = (int)(end - gt - 1);
        snprintf(text[n], 64, "%.*s", len < 63 ? len : 63, gt + 1);
        n++;
    }
    return n;
}

/* Step times 50 us apart around 3.44 s: every y-axis label differs; three
 * candidates at one point share one rank label, and no two rank labels
 * overlap; a candidate alike to another is no row of its own, the other's
 * row counts it; the head counts the whole search. */
START_TEST(test_sweep_labels_and_ticks)
{
    cJSON *arr = cJSON_CreateArray();
    const int n = 7;
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", 100 + i);
        cJSON_AddBoolToObject(o, "megatron_style", i % 2);
        double t = i < 3 ? 3.44 : 3.44 + 5e-5 * i, mem = (i < 3 ? 40 : 40 - i) * SIM_GIB;
        cJSON_AddNumberToObject(o, "estimate_step_time_s", t);
        cJSON_AddBoolToObject(o, "simulated", true);
        cJSON_AddNumberToObject(o, "step_time_s", t);
        if (i == 0) cJSON_AddNumberToObject(o, "alike", 2);
        if (i == 6) cJSON_AddNumberToObject(o, "alike_of", 100);
        cJSON *memo = cJSON_AddObjectToObject(o, "memory");
        cJSON_AddNumberToObject(memo, "peak_bytes", mem);
        cJSON_AddNumberToObject(memo, "capacity_bytes", 80 * SIM_GIB);
        cJSON_AddItemToArray(arr, o);
    }
    char *path = tmp_path(".html");
    sim_err err = {{0}};
    rpt_sweep_head head = {.has_counts = true, .enumerated = 1820688, .rejected = 196, .pruned_memory = 1132853,
                           .estimated = 687835, .simulated = 7, .megatron_index = -1, .best_index = -1};
    ck_assert_int_eq(rpt_write_sweep_html(path, arr, &head, &err), SIM_OK);
    char *html = fx_slurp(path);
    ck_assert_msg(unbalanced(html) == NULL, "%s", unbalanced(html));
    ck_assert_ptr_nonnull(strstr(html, "1,820,688 strategies enumerated (196 combinations rejected"));
    ck_assert_ptr_nonnull(strstr(html, "1,132,853 pruned by memory, 687,835 estimated, 7 simulated"));
    ck_assert_ptr_nonnull(strstr(html, "1 alike candidate folded"));

    char text[64][64];
    double x[64], y[64];
    int ny = texts_with(html, "text-anchor=\"end\" font-size=\"11\" fill=\"#444\"", text, x, y, 64);
    int axis = 0;
    for (int i = 0; i < ny; i++) {
        if (x[i] != x[0]) continue; /* the y axis: one column of labels */
        axis++;
        for (int j = 0; j < i; j++)
            ck_assert_msg(x[j] != x[i] || strcmp(text[i], text[j]) != 0, "y axis label '%s' twice", text[i]);
    }
    ck_assert_int_ge(axis, 3);

    int nl = texts_with(html, "fill=\"#222\">#", text, x, y, 64);
    bool shared = false;
    for (int i = 0; i < nl; i++) {
        shared = shared || strcmp(text[i], "#1 #2 #3") == 0;
        double wi = 6.5 * (double)strlen(text[i]);
        for (int j = 0; j < i; j++) {
            double wj = 6.5 * (double)strlen(text[j]);
            /* the boxes of labels anchored at their start or end: compare both spans generously */
            bool xo = fabs(x[i] - x[j]) < fmax(wi, wj), yo = fabs(y[i] - y[j]) < 12;
            ck_assert_msg(!(xo && yo), "labels '%s' and '%s' overlap", text[i], text[j]);
        }
    }
    ck_assert_msg(shared, "no shared label for the three candidates at one point");

    int rows = count(strstr(html, "<th>Pareto</th></tr>"), "<tr");
    ck_assert_int_eq(rows, n - 1);
    ck_assert_ptr_nonnull(strstr(html, " (+1 alike)</td>"));
    unlink(path);
    free(path);
    free(html);
    cJSON_Delete(arr);
}
END_TEST

static Suite *html_suite(void)
{
    Suite *s = suite_create("html");
    TCase *tc = tcase_create("run");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_run_report);
    tcase_add_test(tc, test_memory_only_report);
    tcase_add_test(tc, test_timeline_coarsening);
    suite_add_tcase(s, tc);
    tc = tcase_create("sweep");
    tcase_add_test(tc, test_sweep_report);
    tcase_add_test(tc, test_sweep_ties);
    tcase_add_test(tc, test_sweep_labels_and_ticks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(html_suite());
}
