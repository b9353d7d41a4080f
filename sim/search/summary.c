/* summary.c - what sweep, compare and merge report: the text summaries and
 * the JSON summary documents.
 *
 * The text goes to a FILE (stdout for the command line); the documents are
 * cJSON trees the caller writes (rpt_write_json_doc).  Wall times appear in
 * the text and in the documents' "timing" object only, so the rest of a
 * document is the same on every run with the same inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

/* The platform's error band, on each step time and on a ratio of two. */
static void print_band(FILE *f, const cfg_band *b)
{
    if (!b) return;
    if (isfinite(b->error) && b->error > 0)
        fprintf(f, "error band: +-%.1f %% on each step time, MFU and tokens/s", 100 * b->error);
    else
        fprintf(f, "error band: unknown");
    if (b->pair_error > 0) fprintf(f, ", %.1f %% (rms) on a ratio of two", 100 * b->pair_error);
    fprintf(f, "; %s\n", b->reason);
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
    print_band(f, rq->band);
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
    print_band(f, rq->band);
    print_bests(f, q->platform, c->megatron, c->best);
    char verdict[256];
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

static cJSON *agreement_json(const srch_agreement *ag)
{
    cJSON *o = cJSON_CreateObject();
    rpt_json_add_num(o, "n", ag->n);
    rpt_json_add_num(o, "spearman", ag->spearman);
    rpt_json_add_num(o, "largest_gap", ag->largest_gap_index >= 0 ? ag->largest_gap : NAN);
    rpt_json_add_num(o, "largest_gap_index", ag->largest_gap_index);
    return o;
}

/* The records of rows appended to arr, alike ones marked (srch_fold_alike):
 * "alike" on a row that stands for others (how many, itself included),
 * "alike_of" (the index of that row) on each of the others. */
static cJSON *add_records(cJSON *arr, srch_candidate *const *rows, int n)
{
    int *same_as = sim_xcalloc((size_t)n + 1, sizeof *same_as), *alike = sim_xcalloc((size_t)n + 1, sizeof *alike);
    srch_fold_alike((const srch_candidate *const *)rows, n, same_as);
    for (int i = 0; i < n; i++) alike[same_as[i]]++;
    for (int i = 0; i < n; i++) {
        cJSON *r = srch_record_to_json(rows[i]);
        if (same_as[i] != i)
            rpt_json_add_num(r, "alike_of", rows[same_as[i]]->index);
        else if (alike[i] > 1)
            rpt_json_add_num(r, "alike", alike[i]);
        cJSON_AddItemToArray(arr, r);
    }
    free(same_as);
    free(alike);
    return arr;
}

static cJSON *records_json(srch_candidate *const *rows, int n)
{
    return add_records(cJSON_CreateArray(), rows, n);
}

/* The keys sweep and compare documents share, up to the ranking. */
static cJSON *session_json(const srch_sweep_request *rq, const srch_sweep *s, const char *command)
{
    const srch_request *q = &rq->search;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "command", command);
    cJSON_AddStringToObject(o, "model", q->model->name);
    cJSON_AddStringToObject(o, "platform", q->platform->name);
    rpt_json_add_num(o, "devices", q->platform->devices);
    cJSON_AddStringToObject(o, "space", srch_space_name(s->space));
    rpt_json_add_num(o, "global_batch", q->base.global_batch);
    rpt_json_add_num(o, "top", rq->top);
    if (rq->shard_count > 1) {
        char shard[48];
        snprintf(shard, sizeof shard, "%d/%d", rq->shard_index, rq->shard_count);
        cJSON_AddStringToObject(o, "shard", shard);
    }
    const srch_counts *k = &s->res->counts;
    cJSON *counts = cJSON_AddObjectToObject(o, "counts");
    rpt_json_add_num(counts, "rejected", (double)k->rejected);
    rpt_json_add_num(counts, "enumerated", (double)k->enumerated);
    rpt_json_add_num(counts, "pruned_memory", (double)k->pruned_memory);
    rpt_json_add_num(counts, "estimated", (double)k->estimated);
    rpt_json_add_num(counts, "estimated_megatron_style", (double)k->estimated_megatron);
    rpt_json_add_num(counts, "probes", (double)k->probes);
    rpt_json_add_num(counts, "selected", s->nchosen);
    rpt_json_add_num(counts, "simulated", s->ranking.simulated);
    rpt_json_add_num(counts, "failed", s->ranking.failed);
    rpt_json_add_num(counts, "resumed", s->resumed.resumed);
    rpt_json_add_num(counts, "borrowed", s->resumed.borrowed);
    cJSON *t = cJSON_AddObjectToObject(o, "timing");
    double search_s = s->res->seconds;
    rpt_json_add_num(t, "search_s", search_s);
    rpt_json_add_num(t, "per_candidate_us", k->enumerated > 0 ? 1e6 * search_s / (double)k->enumerated : 0.0);
    rpt_json_add_num(t, "search_processes", s->res->workers);
    cJSON_AddBoolToObject(t, "search_from_twin", s->res->from_twin);
    rpt_json_add_num(t, "simulate_s", s->simulate_s);
    rpt_json_add_num(t, "jobs", rq->jobs);
    return o;
}

void *srch_sweep_to_json(const srch_sweep_request *rq, const srch_sweep *s)
{
    cJSON *o = session_json(rq, s, "sweep");
    cJSON_AddItemToObject(o, "agreement", agreement_json(&s->ranking.agreement));
    cJSON_AddItemToObject(o, "ranking", records_json(s->ranking.rows, s->ranking.n));
    cJSON_AddItemToObject(o, "estimated_only", records_json(s->extra, s->nextra));
    return o;
}

void *srch_compare_to_json(const srch_sweep_request *rq, const srch_sweep *s)
{
    const srch_comparison *c = &s->cmp;
    cJSON *o = session_json(rq, s, "compare");
    cJSON_AddItemToObject(o, "megatron", c->megatron ? srch_record_to_json(c->megatron) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "7d", c->best ? srch_record_to_json(c->best) : cJSON_CreateNull());
    rpt_json_add_num(o, "speedup", c->speedup);
    bool banded = c->band && c->band->pair_error > 0 && isfinite(c->speedup);
    cJSON_AddItemToObject(o, "speedup_error", banded ? cJSON_CreateNumber(c->band->pair_error) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "speedup_exceeds_error", banded ? cJSON_CreateBool(srch_speedup_sure(c)) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "agreement", agreement_json(&s->ranking.agreement));
    cJSON_AddItemToObject(o, "ranking", records_json(s->ranking.rows, s->ranking.n));
    return o;
}

void *srch_merge_to_json(const srch_merged *m, const char *const *paths, int npaths)
{
    const srch_ranking *r = &m->ranking;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "command", "merge");
    cJSON *files = cJSON_AddArrayToObject(o, "files");
    for (int f = 0; f < npaths; f++) cJSON_AddItemToArray(files, cJSON_CreateString(paths[f]));
    if (r->n > 0) cJSON_AddStringToObject(o, "space", srch_space_name(r->rows[0]->space));
    cJSON *counts = cJSON_AddObjectToObject(o, "counts");
    rpt_json_add_num(counts, "records", m->nrecords);
    rpt_json_add_num(counts, "candidates", r->n);
    rpt_json_add_num(counts, "simulated", r->simulated);
    rpt_json_add_num(counts, "failed", r->failed);
    cJSON_AddItemToObject(o, "agreement", agreement_json(&r->agreement));
    cJSON_AddItemToObject(o, "ranking", records_json(r->rows, r->n));
    return o;
}

void *srch_sweep_records_json(const srch_sweep *s)
{
    cJSON *rows = add_records(records_json(s->ranking.rows, s->ranking.n), s->extra, s->nextra);
    cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "step_time_s");
        if (!s->cmp.band || !cJSON_IsNumber(t)) continue;
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(row, "mfu"), *k = cJSON_GetObjectItemCaseSensitive(row, "tokens_per_s");
        cJSON_AddItemToObject(row, "accuracy", rpt_band_json(s->cmp.band, t->valuedouble, cJSON_IsNumber(m) ? m->valuedouble : NAN,
                                                             cJSON_IsNumber(k) ? k->valuedouble : NAN));
    }
    return rows;
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

