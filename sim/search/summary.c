/* summary.c - what sweep, compare and merge report: the text summaries,
 * and the rows of their JSON summary documents, which report/search_json.c
 * writes.
 *
 * The text goes to a FILE (stdout for the command line); the documents are
 * cJSON trees the caller writes (rpt_write_json_doc).  Wall times appear in
 * the text and in the documents' "timing" object only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SHOW_ESTIMATED 5    /* next best estimates printed (the JSON has them all) */
#define COMPARE_COLUMN 28   /* least width of compare's Megatron-style column */

/* {================================================================ text */

/* "s" after a count that is not 1. */
static const char *plural(long long n)
{
    return n == 1 ? "" : "s";
}

static void print_search_lines(FILE *f, const srch_sweep *s)
{
    const srch_counts *k = &s->res->counts;
    double t = s->res->seconds;
    char a[32], b[32], c[32], d[32], e[32];
    if (s->res->from_twin) {
        fprintf(f,
                "search: %s strateg%s enumerated, %s pruned by memory, %s estimated: the search of the twin (the "
                "other Megatron-style baseline), not run again\n",
                sim_fmt_count((double)k->enumerated, a, sizeof a), k->enumerated == 1 ? "y" : "ies",
                sim_fmt_count((double)k->pruned_memory, c, sizeof c), sim_fmt_count((double)k->estimated, d, sizeof d));
        return;
    }
    fprintf(f,
            "search: %s strateg%s enumerated (%s combination%s rejected by the validity rules), %s pruned by "
            "memory, %s estimated in %.2f s by %d process%s (%.2f us per enumerated candidate, %s workload probe%s)\n",
            sim_fmt_count((double)k->enumerated, a, sizeof a), k->enumerated == 1 ? "y" : "ies",
            sim_fmt_count((double)k->rejected, b, sizeof b), plural(k->rejected),
            sim_fmt_count((double)k->pruned_memory, c, sizeof c), sim_fmt_count((double)k->estimated, d, sizeof d), t,
            s->res->workers, s->res->workers == 1 ? "" : "es", k->enumerated > 0 ? 1e6 * t / (double)k->enumerated : 0.0, sim_fmt_count((double)k->probes, e, sizeof e),
            plural(k->probes));
}

/* What the simulations took: " (2 resumed from b.jsonl, 1 borrowed from
 * twin.jsonl, 1 failed)", each part only when it is not 0; "" when none is. */
static void sim_notes(char *out, size_t cap, const srch_sweep_request *rq, const srch_sweep *s)
{
    char r[SIM_MAX_PATH + 48] = "", b[SIM_MAX_PATH + 48] = "", x[32] = "";
    const char *from = rq->out_path;
    if (s->resumed.resumed > 0)
        snprintf(r, sizeof r, "%d resumed%s%.*s", s->resumed.resumed, from ? " from " : "", SIM_MAX_PATH,
                 from ? from : "");
    if (s->resumed.borrowed > 0 && rq->twin_path)
        snprintf(b, sizeof b, "%d borrowed from %.*s", s->resumed.borrowed, SIM_MAX_PATH, rq->twin_path);
    if (s->ranking.failed > 0) snprintf(x, sizeof x, "%d failed", s->ranking.failed);
    if (!r[0] && !b[0] && !x[0]) {
        out[0] = '\0';
        return;
    }
    snprintf(out, cap, " (%s%s%s%s%s)", r, r[0] && (b[0] || x[0]) ? ", " : "", b, b[0] && x[0] ? ", " : "", x);
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

/* Says so when some simulated step times come from --symmetry dp. */
static void print_approximate(FILE *f, const srch_sweep *s)
{
    int n = 0;
    for (int i = 0; i < s->nchosen; i++) n += s->chosen[i]->state == SRCH_SIM_DONE && s->chosen[i]->approximate;
    if (n > 0)
        fprintf(f, "APPROXIMATE: %d simulated step time%s with one data-parallel replica for all (--symmetry dp)\n",
                n, plural(n));
}

/* The last lines of the sweep and compare summaries. */
static void print_closing(FILE *f, const srch_sweep_request *rq, const srch_sweep *s)
{
    print_agreement(f, &s->ranking.agreement);
    if (s->resumed.ignored)
        fprintf(f, "%s: %d record%s of other candidates left as %s\n", rq->out_path, s->resumed.ignored,
                plural(s->resumed.ignored), s->resumed.ignored == 1 ? "it is" : "they are");
    fflush(f);
}

static void print_table(FILE *f, srch_candidate *const *rows, int n, const cfg_platform *p)
{
    srch_print_table(f, (const srch_candidate *const *)rows, n, p);
}

void srch_print_sweep(FILE *f, const srch_sweep_request *rq, const srch_sweep *s)
{
    const srch_request *q = &rq->search;
    fprintf(f, "heptasim sweep: %s on %s (%d devices), %s space, global batch %d\n", q->model->name,
            q->platform->name, q->platform->devices, srch_space_name(s->space), q->base.global_batch);
    print_search_lines(f, s);
    char shard[48] = "";
    if (rq->shard_count > 1) snprintf(shard, sizeof shard, ", shard %d/%d", rq->shard_index, rq->shard_count);
    char notes[2 * SIM_MAX_PATH + 160];
    sim_notes(notes, sizeof notes, rq, s);
    fprintf(f, "simulated: %d of the %d best estimate%s%s%s in %.1f s with %d job%s\n", s->ranking.simulated,
            s->selected, plural(s->selected), shard, notes, s->simulate_s, rq->jobs, plural(rq->jobs));
    print_approximate(f, s);
    fprintf(f, "\n");
    print_table(f, s->ranking.rows, s->ranking.n, q->platform);
    if (s->nextra > 0) {
        fprintf(f, "\nnext best by estimate (not simulated):\n");
        print_table(f, s->extra, s->nextra < SHOW_ESTIMATED ? s->nextra : SHOW_ESTIMATED, q->platform);
    }
    fprintf(f, "\n");
    print_closing(f, rq, s);
}

/* One row of compare's two columns: label, then fmt of vm and vs, or "-"
 * for a missing candidate. */
static void compare_row(FILE *f, int width, const char *label, const srch_candidate *m, const srch_candidate *s,
                        const char *fmt, double vm, double vs)
{
    char a[64] = "-", b[64] = "-";
    if (m) snprintf(a, sizeof a, fmt, vm);
    if (s) snprintf(b, sizeof b, fmt, vs);
    fprintf(f, "  %-34s %-*s %s\n", label, width, a, b);
}

static void print_bests(FILE *f, const cfg_platform *p, const srch_candidate *m, const srch_candidate *s)
{
    char nm[256] = "-", ns[256] = "-";
    if (m) cfg_strategy_compact(&m->strategy, nm, sizeof nm);
    if (s) cfg_strategy_compact(&s->strategy, ns, sizeof ns);
    int w = (int)strlen(nm) + 2 > COMPARE_COLUMN ? (int)strlen(nm) + 2 : COMPARE_COLUMN;
    double usable_gib = cfg_usable_hbm_bytes(p) / SIM_GIB;
    fprintf(f, "\n  %-34s %-*s %s\n", "", w, "Megatron-style best", "7D best");
    fprintf(f, "  %-34s %-*s %s\n", "strategy", w, nm, ns);
    compare_row(f, w, "candidate", m, s, "%.0f", m ? m->index : 0, s ? s->index : 0);
    compare_row(f, w, "step time (simulated)", m, s, "%.4f s", m ? m->step_time_s : 0, s ? s->step_time_s : 0);
    compare_row(f, w, "step time (estimate)", m, s, "%.4f s", m ? m->est.step_s : 0, s ? s->est.step_s : 0);
    compare_row(f, w, "MFU", m, s, "%.1f%%", m ? 100 * m->mfu : 0, s ? 100 * s->mfu : 0);
    char tm[32] = "-", ts[32] = "-";
    if (m) sim_fmt_count(m->tokens_per_s, tm, sizeof tm);
    if (s) sim_fmt_count(s->tokens_per_s, ts, sizeof ts);
    fprintf(f, "  %-34s %-*s %s\n", "tokens/s", w, tm, ts);
    compare_row(f, w, "memory, peak stage (GiB)", m, s, "%.1f", m ? m->peak_bytes / SIM_GIB : 0,
                s ? s->peak_bytes / SIM_GIB : 0);
    compare_row(f, w, "memory, usable (GiB)", m, s, "%.1f", usable_gib, usable_gib);
    compare_row(f, w, "compute (critical rank)", m, s, "%.4f s", m ? m->compute_s : 0, s ? s->compute_s : 0);
    compare_row(f, w, "pipeline bubble", m, s, "%.4f s", m ? m->bubble_s : 0, s ? s->bubble_s : 0);
    compare_row(f, w, "optimizer", m, s, "%.4f s", m ? m->optimizer_s : 0, s ? s->optimizer_s : 0);
    static const char *const dims[WL_NDIMS] = {"TP", "CP", "EP", "DP", "PP"};
    for (int d = 0; d < WL_NDIMS; d++) {
        char label[64], a[64] = "-", b[64] = "-";
        snprintf(label, sizeof label, "%s comm exposed (in flight)", dims[d]);
        if (m) snprintf(a, sizeof a, "%.4f s (%.4f s)", m->exposed_s[d], m->comm_s[d]);
        if (s) snprintf(b, sizeof b, "%.4f s (%.4f s)", s->exposed_s[d], s->comm_s[d]);
        fprintf(f, "  %-34s %-*s %s\n", label, w, a, b);
    }
}

void srch_print_compare(FILE *f, const srch_sweep_request *rq, const srch_sweep *s)
{
    const srch_request *q = &rq->search;
    const srch_comparison *c = &s->cmp;
    fprintf(f, "heptasim compare: %s on %s (%d devices), global batch %d\n", q->model->name, q->platform->name,
            q->platform->devices, q->base.global_batch);
    print_search_lines(f, s);
    char nm[32];
    fprintf(f, "Megatron-style (%s): %s of the estimated\n", srch_baseline_text(q->baseline),
            sim_fmt_count((double)s->res->counts.estimated_megatron, nm, sizeof nm));
    char notes[2 * SIM_MAX_PATH + 160];
    sim_notes(notes, sizeof notes, rq, s);
    fprintf(f, "simulated: the %d best estimate%s of each space, %d candidate%s%s in %.1f s with %d job%s\n", rq->top,
            plural(rq->top), s->nchosen, plural(s->nchosen), notes, s->simulate_s, rq->jobs, plural(rq->jobs));
    print_approximate(f, s);
    print_bests(f, q->platform, c->megatron, c->best);
    char verdict[96];
    if (srch_speedup_text(c, verdict, sizeof verdict))
        fprintf(f, "\nspeedup of the best 7D strategy over the best Megatron-style one (simulated): %s\n", verdict);
    fprintf(f, "\n");
    print_table(f, s->ranking.rows, s->ranking.n, q->platform);
    fprintf(f, "\n");
    print_closing(f, rq, s);
}

void srch_print_merge(FILE *f, const srch_merged *m, int nfiles)
{
    const srch_ranking *r = &m->ranking;
    char x[32] = "";
    if (r->failed > 0) snprintf(x, sizeof x, ", %d failed", r->failed);
    fprintf(f, "heptasim merge: %d record%s from %d file%s (%d candidate%s: %d simulated%s)\n\n", m->nrecords,
            plural(m->nrecords), nfiles, plural(nfiles), r->n, plural(r->n), r->simulated, x);
    print_table(f, r->rows, r->n, NULL);
    fprintf(f, "\n");
    print_agreement(f, &r->agreement);
    fflush(f);
}

/* }================================================================ text */

/* {================================================================ JSON */

/* The records of rows[0..n) as report's list, alike ones folded
 * (srch_fold_alike); free with list_free. */
static rpt_record_list list_of(srch_candidate *const *rows, int n)
{
    rpt_record *recs = sim_xcalloc((size_t)n + 1, sizeof *recs);
    int *same_as = sim_xcalloc((size_t)n + 1, sizeof *same_as);
    for (int i = 0; i < n; i++) srch_candidate_record(rows[i], &recs[i]);
    srch_fold_alike((const srch_candidate *const *)rows, n, same_as);
    return (rpt_record_list){recs, same_as, n};
}

static void list_free(rpt_record_list *l)
{
    free((void *)l->rows);
    free((void *)l->same_as);
}

/* The parts of a sweep's or compare's document up to the ranking. */
static rpt_search_doc session_doc(const srch_sweep_request *rq, const srch_sweep *s, const char *command)
{
    const srch_request *q = &rq->search;
    const srch_counts *k = &s->res->counts;
    rpt_search_doc d = {
        .command = command,
        .model = q->model->name,
        .platform = q->platform->name,
        .space = srch_space_name(s->space),
        .devices = q->platform->devices,
        .global_batch = q->base.global_batch,
        .top = rq->top,
        .shard_index = rq->shard_index,
        .shard_count = rq->shard_count,
        .counts = {k->rejected, k->enumerated, k->pruned_memory, k->estimated, k->estimated_megatron, k->probes,
                   s->nchosen, s->ranking.simulated, s->ranking.failed, s->resumed.resumed, s->resumed.borrowed, 0},
        .search_s = s->res->seconds,
        .simulate_s = s->simulate_s,
        .search_processes = s->res->workers,
        .jobs = rq->jobs,
        .search_from_twin = s->res->from_twin,
        .agreement = s->ranking.agreement,
        .ranking = list_of(s->ranking.rows, s->ranking.n),
    };
    return d;
}

void *srch_sweep_to_json(const srch_sweep_request *rq, const srch_sweep *s)
{
    rpt_search_doc d = session_doc(rq, s, "sweep");
    d.estimated_only = list_of(s->extra, s->nextra);
    void *doc = rpt_sweep_doc_json(&d);
    list_free(&d.ranking);
    list_free(&d.estimated_only);
    return doc;
}

void *srch_compare_to_json(const srch_sweep_request *rq, const srch_sweep *s)
{
    const srch_comparison *c = &s->cmp;
    rpt_search_doc d = session_doc(rq, s, "compare");
    rpt_record megatron, best;
    if (c->megatron) srch_candidate_record(c->megatron, &megatron);
    if (c->best) srch_candidate_record(c->best, &best);
    d.megatron = c->megatron ? &megatron : NULL;
    d.best = c->best ? &best : NULL;
    d.speedup = c->speedup;
    void *doc = rpt_compare_doc_json(&d);
    list_free(&d.ranking);
    return doc;
}

void *srch_merge_to_json(const srch_merged *m, const char *const *paths, int npaths)
{
    const srch_ranking *r = &m->ranking;
    rpt_search_doc d = {
        .command = "merge",
        .files = paths,
        .nfiles = npaths,
        .counts = {.records = m->nrecords, .simulated = r->simulated, .failed = r->failed},
        .agreement = r->agreement,
        .ranking = list_of(r->rows, r->n),
    };
    void *doc = rpt_merge_doc_json(&d);
    list_free(&d.ranking);
    return doc;
}

void *srch_sweep_records_json(const srch_sweep *s)
{
    rpt_record_list a = list_of(s->ranking.rows, s->ranking.n), b = list_of(s->extra, s->nextra);
    void *doc = rpt_records_json(&a, &b);
    list_free(&a);
    list_free(&b);
    return doc;
}

void srch_sweep_title(const srch_sweep_request *rq, bool compare, char *out, int cap)
{
    const srch_request *q = &rq->search;
    if (compare)
        snprintf(out, (size_t)cap, "%s on %s (%d devices): Megatron-style vs 7D", q->model->name, q->platform->name,
                 q->platform->devices);
    else
        snprintf(out, (size_t)cap, "%s on %s (%d devices): %s sweep", q->model->name, q->platform->name,
                 q->platform->devices, srch_space_name(q->space));
}

/* }================================================================ JSON */

