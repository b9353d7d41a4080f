/* cmd_search.c - `heptasim sweep` (search a strategy space and simulate the
 * best estimates), `heptasim compare` (best Megatron-style against best 7D)
 * and `heptasim merge` (join the JSONL files of sweep shards). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../report/report.h"
#include "../search/search.h"
#include "commands.h"

#define SWEEP_TOP 16        /* candidates simulated by default */
#define COMPARE_TOP 4       /* per space, for compare */
#define EXTRA_ESTIMATED 10  /* best estimates beyond the simulated ones, listed for context */
#define SHOW_ESTIMATED 5    /* of those, printed */

/* {======================================================== progress bar */

/* A one-line bar on stderr, drawn only when stderr is a terminal. */
typedef struct bar {
    bool on;
    const char *what;
    int last;
} bar;

static void bar_init(bar *b, const char *what)
{
    b->on = isatty(STDERR_FILENO) == 1;
    b->what = what;
    b->last = -1;
}

static void bar_show(bar *b, long long done, long long total)
{
    if (!b->on || total <= 0) return;
    int pct = (int)(100 * done / total);
    if (pct == b->last) return;
    b->last = pct;
    int fill = pct * 30 / 100;
    fprintf(stderr, "\r%-9s [%.*s%*s] %3d%% (%lld/%lld)", b->what, fill, "##############################", 30 - fill,
            "", pct, done, total);
    fflush(stderr);
}

static void bar_end(bar *b)
{
    if (b->on && b->last >= 0) fprintf(stderr, "\r\033[K");
    fflush(stderr);
    b->last = -1;
}

static void search_progress(void *ctx, long long done, long long total) { bar_show(ctx, done, total); }

/* }======================================================== progress bar */

/* One sweep or compare: inputs, the search result, the chosen candidates. */
typedef struct session {
    const cli_args *a;
    const char *cmd;
    cfg_model model;
    cfg_platform platform;
    cfg_strategy base;
    unsigned pinned;
    srch_space space;
    eng_options opt;              /* of the simulations: --symmetry */
    int top, jobs;
    srch_result *res;
    srch_candidate **chosen;      /* the candidates to simulate (this shard's), owned by res */
    int nchosen;
    int resumed, ignored_records;
    FILE *out;
    bar bar;
    int sim_done;
    sim_rc write_rc;
    sim_err write_err;
    double search_s, sim_s;
} session;

static int jobs_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Model, platform, base strategy, pinned keys and options. */
static sim_rc session_load(session *x, const cli_args *a, const char *cmd, int top_default, sim_err *err)
{
    memset(x, 0, sizeof *x);
    x->a = a;
    x->cmd = cmd;
    cfg_overrides ov = {a->nsets, a->sets};
    sim_rc rc = cli_load_model_platform(a, &x->model, &x->platform, err);
    if (rc != SIM_OK) return rc;
    if (a->strategy)
        rc = cfg_load_strategy(a->strategy, &ov, &x->base, err);
    else
        rc = cfg_parse_strategy("{\"name\": \"search\", \"global_batch\": 1024}", "the search's base strategy", &ov,
                                &x->base, err);
    if (rc != SIM_OK) return rc;
    if (a->global_batch > 0) x->base.global_batch = a->global_batch;
    for (int i = 0; i < a->nsets; i++) {
        const char *eq = strchr(a->sets[i], '=');
        char key[CFG_NAME_LEN];
        size_t len = eq ? (size_t)(eq - a->sets[i]) : strlen(a->sets[i]);
        if (len >= sizeof key) continue;
        memcpy(key, a->sets[i], len);
        key[len] = '\0';
        x->pinned |= srch_pin_of_key(key);
    }
    if ((x->pinned & srch_pin_of_key("dp")) && x->base.dp == 0) x->pinned &= ~srch_pin_of_key("dp"); /* dp=0: derived */
    x->space = a->space && strcmp(a->space, "megatron") == 0 ? SRCH_SPACE_MEGATRON : SRCH_SPACE_7D;
    x->opt.symmetry = cli_symmetry(a);
    x->top = a->top > 0 ? a->top : top_default;
    x->jobs = a->jobs > 0 ? a->jobs : jobs_default();
    if (a->resume && !a->out_path)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--resume' needs '--out FILE', the file of the sweep to carry on",
                        cmd);
    return SIM_OK;
}

static sim_rc session_search(session *x, srch_space space, int keep, sim_err *err)
{
    srch_request rq;
    memset(&rq, 0, sizeof rq);
    rq.model = &x->model;
    rq.platform = &x->platform;
    rq.base = x->base;
    rq.pinned = x->pinned;
    rq.space = space;
    rq.keep = keep;
    rq.replica_reduction = x->opt.symmetry == ENG_SYM_DP;
    bar_init(&x->bar, "search");
    rq.progress = search_progress;
    rq.progress_ctx = &x->bar;
    sim_rc rc = srch_run(&rq, &x->res, err);
    bar_end(&x->bar);
    if (rc == SIM_OK) x->search_s = x->res->seconds;
    return rc;
}

static void session_free(session *x)
{
    if (x->out) fclose(x->out);
    free(x->chosen);
    srch_result_free(x->res);
}

/* {=============================================================== resume */

/* Cut a torn last line off path (an interrupted write) so that appended
 * records start on a line of their own. */
static sim_rc cut_torn_line(const char *path, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return SIM_OK;
    long keep = 0, pos = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF) {
        pos++;
        if (ch == '\n') keep = pos;
    }
    fclose(f);
    if (keep < pos && truncate(path, keep) != 0)
        return sim_fail(err, SIM_EIO, "%s: cannot cut the interrupted last line: %s (check permissions)", path,
                        strerror(errno));
    return SIM_OK;
}

/* Take the results already in the --out file for the chosen candidates. */
static sim_rc session_resume(session *x, sim_err *err)
{
    const char *path = x->a->out_path;
    if (access(path, F_OK) != 0) return SIM_OK; /* nothing yet: a fresh start */
    srch_candidate *recs = NULL;
    int n = 0, cap = 0, torn = 0;
    sim_rc rc = srch_jsonl_read(path, &recs, &n, &cap, &torn, err);
    if (rc == SIM_OK && torn) rc = cut_torn_line(path, err);
    const char *id = x->res->inputs_id;
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        srch_candidate *r = &recs[i];
        srch_candidate *c = NULL;
        for (int k = 0; k < x->nchosen && !c; k++)
            if (x->chosen[k]->index == r->index) c = x->chosen[k];
        if (r->space != x->space || strcmp(r->inputs_id, id) != 0 || (c && !cfg_strategy_same(&r->strategy, &c->strategy))) {
            rc = sim_fail(err, SIM_EINVAL,
                          "%s: candidate %d comes from another search (other model, platform, devices, space, --set "
                          "pins or global batch: inputs %s, this sweep %s); use another '--out' file",
                          path, r->index, r->inputs_id, id);
            break;
        }
        if (!c) {
            x->ignored_records++;
            continue;
        }
        if (r->state != SRCH_SIM_NONE && c->state == SRCH_SIM_NONE) {
            srch_candidate keep = *c;
            *c = *r;
            c->strategy = keep.strategy;
            x->resumed++;
        }
    }
    free(recs);
    return rc;
}

/* }=============================================================== resume */

/* {=========================================================== simulation */

/* Each finished simulation: its record to --out, the bar forward. */
typedef struct sim_progress {
    session *x;
    int total;
} sim_progress;

static void sim_done(void *ctx, srch_candidate *c)
{
    sim_progress *sp = ctx;
    session *x = sp->x;
    x->sim_done++;
    if (x->out && x->write_rc == SIM_OK) x->write_rc = srch_jsonl_write(x->out, x->a->out_path, c, &x->write_err);
    bar_show(&x->bar, x->sim_done, sp->total);
}

/* Resume, open --out, simulate the chosen candidates not done yet. */
static sim_rc session_simulate(session *x, sim_err *err)
{
    sim_rc rc = SIM_OK;
    if (x->a->resume) rc = session_resume(x, err);
    if (rc != SIM_OK) return rc;
    if (x->a->out_path) {
        x->out = fopen(x->a->out_path, x->a->resume ? "a" : "w");
        if (!x->out)
            return sim_fail(err, SIM_EIO, "%s: cannot write the sweep records: %s (check the directory exists)",
                            x->a->out_path, strerror(errno));
    }
    srch_candidate **todo = sim_xcalloc((size_t)x->nchosen + 1, sizeof *todo);
    int n = 0;
    for (int i = 0; i < x->nchosen; i++)
        if (x->chosen[i]->state == SRCH_SIM_NONE) todo[n++] = x->chosen[i];
    double t0 = sim_now_s();
    bar_init(&x->bar, "simulate");
    sim_progress sp = {x, n};
    bar_show(&x->bar, 0, n);
    rc = srch_simulate(todo, n, &x->model, &x->platform, x->jobs, &x->opt, sim_done, &sp, err);
    bar_end(&x->bar);
    x->sim_s = sim_now_s() - t0;
    free(todo);
    if (rc == SIM_OK && x->write_rc != SIM_OK) {
        *err = x->write_err;
        rc = x->write_rc;
    }
    return rc;
}

/* Says so when some simulated step times come from --symmetry dp. */
static void print_approximate(const session *x)
{
    int n = 0;
    for (int i = 0; i < x->nchosen; i++) n += x->chosen[i]->state == SRCH_SIM_DONE && x->chosen[i]->approximate;
    if (n > 0)
        printf("APPROXIMATE: %d simulated step time%s with one data-parallel replica for all (--symmetry dp)\n", n,
               n == 1 ? "" : "s");
}

/* }=========================================================== simulation */

/* {================================================================ JSON */

static void add_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *counts_json(const srch_counts *k)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "rejected", (double)k->rejected);
    add_num(o, "enumerated", (double)k->enumerated);
    add_num(o, "pruned_memory", (double)k->pruned_memory);
    add_num(o, "estimated", (double)k->estimated);
    add_num(o, "estimated_megatron_style", (double)k->estimated_megatron);
    add_num(o, "probes", (double)k->probes);
    return o;
}

static cJSON *agreement_json(const srch_agreement *ag)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "n", ag->n);
    add_num(o, "spearman", ag->spearman);
    add_num(o, "largest_gap", ag->largest_gap_index >= 0 ? ag->largest_gap : NAN);
    add_num(o, "largest_gap_index", ag->largest_gap_index);
    return o;
}

static cJSON *records_json(srch_candidate *const *rows, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, srch_record_to_json(rows[i]));
    return arr;
}

static sim_rc write_json_doc(const char *path, cJSON *doc, sim_err *err)
{
    char *text = cJSON_Print(doc);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: cannot format the JSON summary (out of memory)", path);
    bool to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    bool bad = !f;
    int e = errno;
    if (f) {
        bad = fputs(text, f) == EOF || fputc('\n', f) == EOF;
        if (to_stdout)
            bad = fflush(f) != 0 || bad;
        else
            bad = fclose(f) != 0 || bad;
        e = errno;
    }
    cJSON_free(text);
    if (bad)
        return sim_fail(err, SIM_EIO, "%s: cannot write the JSON summary: %s (check the directory and permissions)",
                        path, strerror(e));
    return SIM_OK;
}

static cJSON *header_json(const session *x, const char *command)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "command", command);
    cJSON_AddStringToObject(o, "model", x->model.name);
    cJSON_AddStringToObject(o, "platform", x->platform.name);
    add_num(o, "devices", x->platform.devices);
    cJSON_AddStringToObject(o, "space", srch_space_name(x->space));
    add_num(o, "global_batch", x->base.global_batch);
    add_num(o, "top", x->top);
    return o;
}

static cJSON *timing_json(const session *x)
{
    cJSON *t = cJSON_CreateObject();
    add_num(t, "search_s", x->search_s);
    add_num(t, "per_candidate_us",
            x->res->counts.enumerated > 0 ? 1e6 * x->search_s / (double)x->res->counts.enumerated : 0.0);
    add_num(t, "simulate_s", x->sim_s);
    add_num(t, "jobs", x->jobs);
    return t;
}

/* }================================================================ JSON */

/* {=============================================================== text */

static void print_search_lines(FILE *f, const session *x)
{
    const srch_counts *k = &x->res->counts;
    fprintf(f,
            "search: %lld strategies enumerated (%lld combinations rejected by the validity rules), %lld pruned by "
            "memory, %lld estimated in %.2f s (%.2f us per enumerated candidate, %lld workload probes)\n",
            k->enumerated, k->rejected, k->pruned_memory, k->estimated, x->search_s,
            k->enumerated > 0 ? 1e6 * x->search_s / (double)k->enumerated : 0.0, k->probes);
}

static void print_agreement(FILE *f, const srch_agreement *ag)
{
    if (ag->n < 2) {
        fprintf(f, "agreement of the estimate with the simulation: needs at least 2 simulated candidates (%d)\n",
                ag->n);
        return;
    }
    char sp[32];
    if (isfinite(ag->spearman))
        snprintf(sp, sizeof sp, "%.3f", ag->spearman);
    else
        snprintf(sp, sizeof sp, "undefined (all equal)");
    fprintf(f,
            "agreement of the estimate with the simulation (%d simulated): Spearman rank correlation %s, largest "
            "gap %.1f%% (candidate %d)\n",
            ag->n, sp, 100.0 * ag->largest_gap, ag->largest_gap_index);
}

/* The last lines of the sweep and compare summaries. */
static void print_closing(const session *x, const srch_agreement *ag)
{
    print_agreement(stdout, ag);
    if (x->ignored_records)
        printf("%s: %d records of other candidates left as they are\n", x->a->out_path, x->ignored_records);
    fflush(stdout);
}

/* The chosen candidates in simulated order, and the agreement on them. */
static srch_candidate **ranked_copy(srch_candidate *const *rows, int n)
{
    srch_candidate **r = sim_xcalloc((size_t)n + 1, sizeof *r);
    memcpy(r, rows, (size_t)n * sizeof *r);
    /* sort pointers by the simulated order */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && srch_cmp_simulated(r[j], r[j - 1]) < 0; j--) {
            srch_candidate *t = r[j];
            r[j] = r[j - 1];
            r[j - 1] = t;
        }
    return r;
}

static void agreement_of(srch_candidate *const *rows, int n, srch_agreement *ag)
{
    srch_candidate *flat = sim_xcalloc((size_t)n + 1, sizeof *flat);
    for (int i = 0; i < n; i++) flat[i] = *rows[i];
    srch_agreement_compute(flat, n, ag);
    free(flat);
}

static int count_state(srch_candidate *const *rows, int n, srch_sim_state st)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += rows[i]->state == st;
    return k;
}

/* }=============================================================== text */

/* {================================================================ sweep */

int cmd_sweep(const cli_args *a)
{
    sim_err err = {{0}};
    session x;
    sim_rc rc = session_load(&x, a, "sweep", SWEEP_TOP, &err);
    if (rc == SIM_OK) rc = session_search(&x, x.space, x.top + EXTRA_ESTIMATED, &err);
    if (rc != SIM_OK) {
        session_free(&x);
        return cli_fail(rc, &err);
    }
    srch_result *res = x.res;
    if (res->nbest == 0) {
        fprintf(stderr,
                "heptasim sweep: no strategy of the %s space fits on %s with %d devices (%lld enumerated, %lld pruned "
                "by memory; try more devices, a smaller --global-batch or fewer --set pins)\n",
                srch_space_name(x.space), x.platform.name, x.platform.devices, res->counts.enumerated,
                res->counts.pruned_memory);
        session_free(&x);
        return 1;
    }
    int k = x.top < res->nbest ? x.top : res->nbest;
    /* the shard: positions in the estimate order, modulo N */
    x.chosen = sim_xcalloc((size_t)k + 1, sizeof *x.chosen);
    for (int i = 0; i < k; i++)
        if (a->shard_count <= 1 || i % a->shard_count == a->shard_index) x.chosen[x.nchosen++] = &res->best[i];

    rc = session_simulate(&x, &err);
    if (rc != SIM_OK) {
        session_free(&x);
        return cli_fail(rc, &err);
    }
    srch_candidate **ranked = ranked_copy(x.chosen, x.nchosen);
    srch_agreement ag;
    agreement_of(ranked, x.nchosen, &ag);
    int nextra = res->nbest - k;
    srch_candidate **extra = sim_xcalloc((size_t)nextra + 1, sizeof *extra);
    for (int i = 0; i < nextra; i++) extra[i] = &res->best[k + i];
    int done = count_state(ranked, x.nchosen, SRCH_SIM_DONE), failed = count_state(ranked, x.nchosen, SRCH_SIM_FAILED);

    if (!a->quiet) {
        printf("heptasim sweep: %s on %s (%d devices), %s space, global batch %d\n", x.model.name, x.platform.name,
               x.platform.devices, srch_space_name(x.space), x.base.global_batch);
        print_search_lines(stdout, &x);
        char shard[48] = "";
        if (a->shard_count > 1) snprintf(shard, sizeof shard, ", shard %d/%d", a->shard_index, a->shard_count);
        printf("simulated: %d of the %d best estimates%s (%d resumed from %s, %d failed) in %.1f s with %d jobs\n",
               done, k, shard, x.resumed, a->out_path ? a->out_path : "-", failed, x.sim_s, x.jobs);
        print_approximate(&x);
        printf("\n");
        srch_print_table(stdout, (const srch_candidate *const *)ranked, x.nchosen, &x.platform);
        if (nextra > 0) {
            printf("\nnext best by estimate (not simulated):\n");
            srch_print_table(stdout, (const srch_candidate *const *)extra,
                             nextra < SHOW_ESTIMATED ? nextra : SHOW_ESTIMATED, &x.platform);
        }
        printf("\n");
        print_closing(&x, &ag);
    }

    if (a->json_path || a->report_path) {
        cJSON *doc = header_json(&x, "sweep");
        if (a->shard_count > 1) {
            char shard[48];
            snprintf(shard, sizeof shard, "%d/%d", a->shard_index, a->shard_count);
            cJSON_AddStringToObject(doc, "shard", shard);
        }
        cJSON *counts = counts_json(&res->counts);
        add_num(counts, "selected", x.nchosen);
        add_num(counts, "simulated", done);
        add_num(counts, "failed", failed);
        add_num(counts, "resumed", x.resumed);
        cJSON_AddItemToObject(doc, "counts", counts);
        cJSON_AddItemToObject(doc, "timing", timing_json(&x));
        cJSON_AddItemToObject(doc, "agreement", agreement_json(&ag));
        cJSON_AddItemToObject(doc, "ranking", records_json(ranked, x.nchosen));
        cJSON_AddItemToObject(doc, "estimated_only", records_json(extra, nextra));
        if (a->json_path) rc = write_json_doc(a->json_path, doc, &err);
        if (rc == SIM_OK && a->report_path) {
            cJSON *all = records_json(ranked, x.nchosen);
            for (int i = 0; i < nextra; i++) cJSON_AddItemToArray(all, srch_record_to_json(extra[i]));
            char title[256];
            snprintf(title, sizeof title, "%s on %s (%d devices): %s sweep", x.model.name, x.platform.name,
                     x.platform.devices, srch_space_name(x.space));
            rc = rpt_write_sweep_html(a->report_path, all, title, &err);
            cJSON_Delete(all);
        }
        cJSON_Delete(doc);
    }
    free(ranked);
    free(extra);
    session_free(&x);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}

/* }================================================================ sweep */

/* {============================================================== compare */

static srch_candidate *best_simulated(srch_candidate *const *rows, int n)
{
    srch_candidate *b = NULL;
    for (int i = 0; i < n; i++)
        if (rows[i]->state == SRCH_SIM_DONE && (!b || srch_cmp_simulated(rows[i], b) < 0)) b = rows[i];
    return b;
}

static int compare_width = 28; /* of the Megatron-style column */

static void compare_row_text(const char *label, const srch_candidate *m, const srch_candidate *s, const char *fmt,
                             double vm, double vs)
{
    char a[64] = "-", b[64] = "-";
    if (m) snprintf(a, sizeof a, fmt, vm);
    if (s) snprintf(b, sizeof b, fmt, vs);
    printf("  %-34s %-*s %s\n", label, compare_width, a, b);
}

static void print_compare(const session *x, const srch_candidate *m, const srch_candidate *s)
{
    char nm[256] = "-", ns[256] = "-";
    if (m) cfg_strategy_compact(&m->strategy, nm, sizeof nm);
    if (s) cfg_strategy_compact(&s->strategy, ns, sizeof ns);
    compare_width = (int)strlen(nm) + 2 > 28 ? (int)strlen(nm) + 2 : 28;
    printf("\n  %-34s %-*s %s\n", "", compare_width, "Megatron-style best", "7D best");
    printf("  %-34s %-*s %s\n", "strategy", compare_width, nm, ns);
    compare_row_text("candidate", m, s, "%.0f", m ? m->index : 0, s ? s->index : 0);
    compare_row_text("step time (simulated)", m, s, "%.4f s", m ? m->step_time_s : 0, s ? s->step_time_s : 0);
    compare_row_text("step time (estimate)", m, s, "%.4f s", m ? m->est.step_s : 0, s ? s->est.step_s : 0);
    compare_row_text("MFU", m, s, "%.1f%%", m ? 100 * m->mfu : 0, s ? 100 * s->mfu : 0);
    compare_row_text("tokens/s", m, s, "%.0f", m ? m->tokens_per_s : 0, s ? s->tokens_per_s : 0);
    compare_row_text("memory, peak stage (GiB)", m, s, "%.1f", m ? m->peak_bytes / SIM_GIB : 0,
                     s ? s->peak_bytes / SIM_GIB : 0);
    compare_row_text("memory, usable (GiB)", m, s, "%.1f", cfg_usable_hbm_bytes(&x->platform) / SIM_GIB,
                     cfg_usable_hbm_bytes(&x->platform) / SIM_GIB);
    compare_row_text("compute (critical rank)", m, s, "%.4f s", m ? m->compute_s : 0, s ? s->compute_s : 0);
    compare_row_text("pipeline bubble", m, s, "%.4f s", m ? m->bubble_s : 0, s ? s->bubble_s : 0);
    compare_row_text("optimizer", m, s, "%.4f s", m ? m->optimizer_s : 0, s ? s->optimizer_s : 0);
    static const char *const dims[WL_NDIMS] = {"TP", "CP", "EP", "DP", "PP"};
    for (int d = 0; d < WL_NDIMS; d++) {
        char label[64], a[64] = "-", b[64] = "-";
        snprintf(label, sizeof label, "%s comm exposed (in flight)", dims[d]);
        if (m) snprintf(a, sizeof a, "%.4f s (%.4f s)", m->exposed_s[d], m->comm_s[d]);
        if (s) snprintf(b, sizeof b, "%.4f s (%.4f s)", s->exposed_s[d], s->comm_s[d]);
        printf("  %-34s %-*s %s\n", label, compare_width, a, b);
    }
}

int cmd_compare(const cli_args *a)
{
    sim_err err = {{0}};
    session x;
    sim_rc rc = session_load(&x, a, "compare", COMPARE_TOP, &err);
    if (rc == SIM_OK && a->shard_count > 1)
        rc = sim_fail(&err, SIM_EINVAL, "heptasim compare: '--shard' is for sweep (run 'heptasim sweep --space "
                                        "megatron' and '--space 7d' in shards, then merge)");
    if (rc == SIM_OK && a->space)
        rc = sim_fail(&err, SIM_EINVAL, "heptasim compare: '--space' is for sweep (compare searches both spaces)");
    x.space = SRCH_SPACE_7D;
    if (rc == SIM_OK) rc = session_search(&x, SRCH_SPACE_7D, x.top, &err);
    if (rc != SIM_OK) {
        session_free(&x);
        return cli_fail(rc, &err);
    }
    srch_result *res = x.res;
    /* the best estimates of each space, each candidate once */
    x.chosen = sim_xcalloc((size_t)(res->nbest + res->nbest_megatron) + 1, sizeof *x.chosen);
    for (int i = 0; i < res->nbest; i++) x.chosen[x.nchosen++] = &res->best[i];
    for (int i = 0; i < res->nbest_megatron; i++) {
        bool dup = false;
        for (int j = 0; j < res->nbest && !dup; j++) dup = res->best[j].index == res->best_megatron[i].index;
        if (!dup) x.chosen[x.nchosen++] = &res->best_megatron[i];
    }
    rc = session_simulate(&x, &err);
    if (rc != SIM_OK) {
        session_free(&x);
        return cli_fail(rc, &err);
    }
    /* a candidate present in both lists was simulated through the first */
    for (int i = 0; i < res->nbest_megatron; i++)
        for (int j = 0; j < res->nbest; j++)
            if (res->best[j].index == res->best_megatron[i].index) res->best_megatron[i] = res->best[j];
    srch_candidate **megs = sim_xcalloc((size_t)res->nbest_megatron + 1, sizeof *megs);
    for (int i = 0; i < res->nbest_megatron; i++) megs[i] = &res->best_megatron[i];
    srch_candidate *bm = best_simulated(megs, res->nbest_megatron);
    srch_candidate *b7 = best_simulated(x.chosen, x.nchosen); /* the Megatron-style ones are 7D too */
    double speedup = bm && b7 && b7->step_time_s > 0 ? bm->step_time_s / b7->step_time_s : NAN;
    srch_candidate **ranked = ranked_copy(x.chosen, x.nchosen);
    srch_agreement ag;
    agreement_of(ranked, x.nchosen, &ag);

    if (!a->quiet) {
        printf("heptasim compare: %s on %s (%d devices), global batch %d\n", x.model.name, x.platform.name,
               x.platform.devices, x.base.global_batch);
        print_search_lines(stdout, &x);
        printf("Megatron-style (tp_y 1, cp_ulysses 1, TP inside a node, no fusion): %lld of the estimated\n",
               res->counts.estimated_megatron);
        printf("simulated: the %d best estimates of each space, %d candidates (%d resumed, %d failed) in %.1f s with "
               "%d jobs\n",
               x.top, x.nchosen, x.resumed, count_state(x.chosen, x.nchosen, SRCH_SIM_FAILED), x.sim_s, x.jobs);
        print_approximate(&x);
        print_compare(&x, bm, b7);
        if (isfinite(speedup))
            printf("\nspeedup of the best 7D strategy over the best Megatron-style one: %.3fx (simulated)%s\n",
                   speedup, b7->index == bm->index ? "; the best 7D strategy is Megatron-style" : "");
        printf("\n");
        srch_print_table(stdout, (const srch_candidate *const *)ranked, x.nchosen, &x.platform);
        printf("\n");
        print_closing(&x, &ag);
    }
    if (a->json_path || a->report_path) {
        cJSON *doc = header_json(&x, "compare");
        cJSON *counts = counts_json(&res->counts);
        add_num(counts, "selected", x.nchosen);
        add_num(counts, "simulated", count_state(x.chosen, x.nchosen, SRCH_SIM_DONE));
        add_num(counts, "failed", count_state(x.chosen, x.nchosen, SRCH_SIM_FAILED));
        add_num(counts, "resumed", x.resumed);
        cJSON_AddItemToObject(doc, "counts", counts);
        cJSON_AddItemToObject(doc, "timing", timing_json(&x));
        cJSON_AddItemToObject(doc, "megatron", bm ? srch_record_to_json(bm) : cJSON_CreateNull());
        cJSON_AddItemToObject(doc, "7d", b7 ? srch_record_to_json(b7) : cJSON_CreateNull());
        add_num(doc, "speedup", speedup);
        cJSON_AddItemToObject(doc, "agreement", agreement_json(&ag));
        cJSON_AddItemToObject(doc, "ranking", records_json(ranked, x.nchosen));
        if (a->json_path) rc = write_json_doc(a->json_path, doc, &err);
        if (rc == SIM_OK && a->report_path) {
            cJSON *all = records_json(ranked, x.nchosen);
            char title[256];
            snprintf(title, sizeof title, "%s on %s (%d devices): Megatron-style vs 7D", x.model.name,
                     x.platform.name, x.platform.devices);
            rc = rpt_write_sweep_html(a->report_path, all, title, &err);
            cJSON_Delete(all);
        }
        cJSON_Delete(doc);
    }
    int status = rc == SIM_OK ? 0 : cli_fail(rc, &err);
    if (status == 0 && (!bm || !b7)) {
        fprintf(stderr, "heptasim compare: no simulated %s strategy to compare (none fits, or every simulation "
                        "failed; try more devices or a smaller --global-batch)\n",
                !bm ? "Megatron-style" : "7D");
        status = 1;
    }
    free(megs);
    free(ranked);
    session_free(&x);
    return status;
}

/* }============================================================== compare */

/* {================================================================ merge */

int cmd_merge(const cli_args *a)
{
    sim_err err = {{0}};
    if (a->nfiles < 1) {
        fprintf(stderr, "heptasim merge: give the JSONL files of the sweep shards, e.g. heptasim merge shard-*.jsonl\n");
        return 2;
    }
    srch_candidate *recs = NULL;
    int n = 0, cap = 0;
    int *file_of = NULL;
    sim_rc rc = SIM_OK;
    for (int f = 0; f < a->nfiles && rc == SIM_OK; f++) {
        int before = n;
        rc = srch_jsonl_read(a->files[f], &recs, &n, &cap, NULL, &err);
        file_of = sim_xrealloc(file_of, (size_t)(cap > 0 ? cap : 1) * sizeof *file_of);
        for (int i = before; i < n; i++) file_of[i] = f;
    }
    /* one record per candidate: duplicates must agree on the strategy */
    srch_candidate **rows = sim_xcalloc((size_t)n + 1, sizeof *rows);
    int nrows = 0;
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        if (recs[i].space != recs[0].space || strcmp(recs[i].inputs_id, recs[0].inputs_id) != 0) {
            rc = sim_fail(&err, SIM_EINVAL,
                          "heptasim merge: %s and %s hold records of different searches (%s space, inputs %s vs %s "
                          "space, inputs %s); merge the shards of one sweep",
                          a->files[file_of[0]], a->files[file_of[i]], srch_space_name(recs[0].space),
                          recs[0].inputs_id, srch_space_name(recs[i].space), recs[i].inputs_id);
            break;
        }
        int dup = -1;
        for (int j = 0; j < nrows && dup < 0; j++)
            if (rows[j]->index == recs[i].index) dup = j;
        if (dup < 0) {
            rows[nrows++] = &recs[i];
            continue;
        }
        if (!cfg_strategy_same(&rows[dup]->strategy, &recs[i].strategy)) {
            rc = sim_fail(&err, SIM_EINVAL,
                          "heptasim merge: candidate %d differs between %s and %s (the files come from different "
                          "sweeps)",
                          recs[i].index, a->files[file_of[rows[dup] - recs]], a->files[file_of[i]]);
            break;
        }
        if (rows[dup]->state == SRCH_SIM_NONE && recs[i].state != SRCH_SIM_NONE) rows[dup] = &recs[i];
    }
    if (rc != SIM_OK) {
        free(rows);
        free(recs);
        free(file_of);
        return cli_fail(rc, &err);
    }
    srch_candidate **ranked = ranked_copy(rows, nrows);
    srch_agreement ag;
    agreement_of(ranked, nrows, &ag);
    int done = count_state(ranked, nrows, SRCH_SIM_DONE), failed = count_state(ranked, nrows, SRCH_SIM_FAILED);
    if (!a->quiet) {
        printf("heptasim merge: %d records from %d files (%d candidates: %d simulated, %d failed)\n\n", n, a->nfiles,
               nrows, done, failed);
        srch_print_table(stdout, (const srch_candidate *const *)ranked, nrows, NULL);
        printf("\n");
        print_agreement(stdout, &ag);
        fflush(stdout);
    }
    if (a->out_path) {
        FILE *f = fopen(a->out_path, "w");
        if (!f)
            rc = sim_fail(&err, SIM_EIO, "%s: cannot write the merged records: %s (check the directory exists)",
                          a->out_path, strerror(errno));
        for (int i = 0; i < nrows && rc == SIM_OK; i++) rc = srch_jsonl_write(f, a->out_path, ranked[i], &err);
        if (f && fclose(f) != 0 && rc == SIM_OK)
            rc = sim_fail(&err, SIM_EIO, "%s: cannot write the merged records: %s", a->out_path, strerror(errno));
    }
    if (rc == SIM_OK && a->json_path) {
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "command", "merge");
        cJSON *files = cJSON_CreateArray();
        for (int f = 0; f < a->nfiles; f++) cJSON_AddItemToArray(files, cJSON_CreateString(a->files[f]));
        cJSON_AddItemToObject(doc, "files", files);
        if (nrows > 0) cJSON_AddStringToObject(doc, "space", srch_space_name(ranked[0]->space));
        cJSON *counts = cJSON_CreateObject();
        add_num(counts, "records", n);
        add_num(counts, "candidates", nrows);
        add_num(counts, "simulated", done);
        add_num(counts, "failed", failed);
        cJSON_AddItemToObject(doc, "counts", counts);
        cJSON_AddItemToObject(doc, "agreement", agreement_json(&ag));
        cJSON_AddItemToObject(doc, "ranking", records_json(ranked, nrows));
        rc = write_json_doc(a->json_path, doc, &err);
        cJSON_Delete(doc);
    }
    free(ranked);
    free(rows);
    free(recs);
    free(file_of);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}

/* }================================================================ merge */
