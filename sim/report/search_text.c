/* search_text.c - the text summaries of sweep, compare and merge, from the
 * rows the search hands over (rpt_search_doc): what was searched, simulated
 * and resumed, the ranked tables, compare's two bests side by side and the
 * agreement of the estimate with the simulation.  Wall times appear here
 * and in the documents' "timing" object only. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "../config/keys.h"

#define COMPARE_COLUMN 28   /* least width of compare's Megatron-style column */

/* "s" after a count that is not 1. */
static const char *plural(long long n)
{
    return n == 1 ? "" : "s";
}

static void print_search_lines(FILE *f, const rpt_search_doc *d)
{
    char sets[2 * CFG_TEXT_LEN];
    rpt_overrides_text(&d->overrides, sets, sizeof sets);
    if (sets[0]) fprintf(f, "overrides: %s\n", sets);
    const rpt_search_counts *k = &d->counts;
    double t = d->search_s;
    char a[32], b[32], c[32], e[32], g[32];
    if (d->search_from_twin) {
        fprintf(f,
                "search: %s strateg%s enumerated, %s pruned by memory, %s estimated: the search of the twin (the "
                "other Megatron-style baseline), not run again\n",
                sim_fmt_count((double)k->enumerated, a, sizeof a), k->enumerated == 1 ? "y" : "ies",
                sim_fmt_count((double)k->pruned_memory, c, sizeof c), sim_fmt_count((double)k->estimated, e, sizeof e));
        return;
    }
    if (d->cache_path) {
        fprintf(f,
                "search: %s strateg%s enumerated (%s combination%s rejected by the validity rules), %s pruned by "
                "memory, %s estimated: reused from the search cache %s (the same inputs; --no-cache searches again)\n",
                sim_fmt_count((double)k->enumerated, a, sizeof a), k->enumerated == 1 ? "y" : "ies",
                sim_fmt_count((double)k->rejected, b, sizeof b), plural(k->rejected),
                sim_fmt_count((double)k->pruned_memory, c, sizeof c), sim_fmt_count((double)k->estimated, e, sizeof e),
                d->cache_path);
        return;
    }
    fprintf(f,
            "search: %s strateg%s enumerated (%s combination%s rejected by the validity rules), %s pruned by "
            "memory, %s estimated in %.2f s by %d process%s (%.2f us per enumerated candidate, %s workload probe%s)\n",
            sim_fmt_count((double)k->enumerated, a, sizeof a), k->enumerated == 1 ? "y" : "ies",
            sim_fmt_count((double)k->rejected, b, sizeof b), plural(k->rejected),
            sim_fmt_count((double)k->pruned_memory, c, sizeof c), sim_fmt_count((double)k->estimated, e, sizeof e), t,
            d->search_processes, d->search_processes == 1 ? "" : "es",
            k->enumerated > 0 ? 1e6 * t / (double)k->enumerated : 0.0, sim_fmt_count((double)k->probes, g, sizeof g),
            plural(k->probes));
}

/* What the simulations took: " (2 resumed from b.jsonl, 1 borrowed from
 * twin.jsonl, 1 failed)", each part only when it is not 0; "" when none is. */
static void sim_notes(char *out, size_t cap, const rpt_search_doc *d)
{
    char r[SIM_MAX_PATH + 48] = "", b[SIM_MAX_PATH + 48] = "", x[32] = "";
    const char *from = d->out_path;
    if (d->counts.resumed > 0)
        snprintf(r, sizeof r, "%d resumed%s%.*s", d->counts.resumed, from ? " from " : "", SIM_MAX_PATH,
                 from ? from : "");
    if (d->counts.borrowed > 0 && d->twin_path)
        snprintf(b, sizeof b, "%d borrowed from %.*s", d->counts.borrowed, SIM_MAX_PATH, d->twin_path);
    if (d->counts.failed > 0) snprintf(x, sizeof x, "%d failed", d->counts.failed);
    if (!r[0] && !b[0] && !x[0]) {
        out[0] = '\0';
        return;
    }
    snprintf(out, cap, " (%s%s%s%s%s)", r, r[0] && (b[0] || x[0]) ? ", " : "", b, b[0] && x[0] ? ", " : "", x);
}

/* The estimate's error over the simulated candidates, and where the
 * simulated best stood in the estimate's order. */
static void print_trust(FILE *f, const rpt_agreement *ag)
{
    if (ag->n < 1 || ag->best_index < 0) return;
    fprintf(f,
            "estimate - simulation: mean %+.1f%%, from %+.1f%% to %+.1f%% over the %d simulated; the simulated best "
            "(candidate %d) is %d%s by estimate\n",
            100.0 * ag->mean_error, 100.0 * ag->min_error, 100.0 * ag->max_error, ag->n, ag->best_index,
            ag->best_estimate_rank,
            ag->best_estimate_rank % 10 == 1 && ag->best_estimate_rank % 100 != 11   ? "st"
            : ag->best_estimate_rank % 10 == 2 && ag->best_estimate_rank % 100 != 12 ? "nd"
            : ag->best_estimate_rank % 10 == 3 && ag->best_estimate_rank % 100 != 13 ? "rd"
                                                                                     : "th");
}

static void print_agreement(FILE *f, const rpt_agreement *ag)
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
    print_trust(f, ag);
}

/* Says so when some simulated step times come from --symmetry dp. */
static void print_approximate(FILE *f, const rpt_search_doc *d)
{
    if (d->approximate > 0)
        fprintf(f, "APPROXIMATE: %d simulated step time%s with one data-parallel replica for all (--symmetry dp)\n",
                d->approximate, plural(d->approximate));
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

/* The last lines of the sweep and compare summaries. */
static void print_closing(FILE *f, const rpt_search_doc *d)
{
    print_agreement(f, &d->agreement);
    const rpt_budget *b = &d->budget;
    if (b->seconds > 0)
        fprintf(f, "budget %.0f s: %d round%s of %d more simulated; %s\n", b->seconds, b->rounds, plural(b->rounds),
                b->top,
                b->best_held ? "the simulated best held for the last round"
                             : "the simulated best changed in the last round it had (the budget or the kept "
                               "estimates ran out): a wider search may still find a better one");
    if (d->ignored)
        fprintf(f, "%s: %d record%s of other candidates left as %s\n", d->out_path, d->ignored, plural(d->ignored),
                d->ignored == 1 ? "it is" : "they are");
    fflush(f);
}

void rpt_print_sweep(FILE *f, const rpt_search_doc *d)
{
    fprintf(f, "heptasim sweep: %s on %s (%d devices), %s space, global batch %d\n", d->model, d->platform,
            d->devices, d->space, d->global_batch);
    print_search_lines(f, d);
    char shard[48] = "";
    if (d->shard_count > 1) snprintf(shard, sizeof shard, ", shard %d/%d", d->shard_index, d->shard_count);
    char notes[2 * SIM_MAX_PATH + 160];
    sim_notes(notes, sizeof notes, d);
    fprintf(f, "simulated: %d of the %d best estimate%s%s%s in %.1f s with %d job%s\n", d->counts.simulated,
            d->best_estimates, plural(d->best_estimates), shard, notes, d->simulate_s, d->jobs, plural(d->jobs));
    print_approximate(f, d);
    print_band(f, d->band);
    fprintf(f, "\n");
    rpt_print_ranking(f, d->table, d->ntable);
    if (d->estimated_only.n > 0) {
        fprintf(f, "\nnext best by estimate (not simulated):\n");
        rpt_print_ranking(f, d->next_table, d->nnext);
    }
    fprintf(f, "\n");
    print_closing(f, d);
}

/* One row of compare's two columns: label, then fmt of vm and vs, or "-"
 * for a missing candidate. */
static void compare_row(FILE *f, int width, const char *label, const rpt_record *m, const rpt_record *s,
                        const char *fmt, double vm, double vs)
{
    char a[64] = "-", b[64] = "-";
    if (m) snprintf(a, sizeof a, fmt, vm);
    if (s) snprintf(b, sizeof b, fmt, vs);
    fprintf(f, "  %-34s %-*s %s\n", label, width, a, b);
}

static void print_bests(FILE *f, double usable_hbm_bytes, const rpt_record *m, const rpt_record *s)
{
    char nm[256] = "-", ns[256] = "-";
    if (m) cfg_strategy_compact(&m->strategy, nm, sizeof nm);
    if (s) cfg_strategy_compact(&s->strategy, ns, sizeof ns);
    int w = (int)strlen(nm) + 2 > COMPARE_COLUMN ? (int)strlen(nm) + 2 : COMPARE_COLUMN;
    double usable_gib = usable_hbm_bytes / SIM_GIB;
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

void rpt_print_compare(FILE *f, const rpt_search_doc *d)
{
    fprintf(f, "heptasim compare: %s on %s (%d devices), global batch %d\n", d->model, d->platform, d->devices,
            d->global_batch);
    print_search_lines(f, d);
    char nm[32];
    fprintf(f, "Megatron-style (%s): %s of the estimated\n", d->baseline_text,
            sim_fmt_count((double)d->counts.estimated_megatron, nm, sizeof nm));
    char notes[2 * SIM_MAX_PATH + 160];
    sim_notes(notes, sizeof notes, d);
    fprintf(f, "simulated: the %d best estimate%s of each space, %d candidate%s%s in %.1f s with %d job%s\n", d->top,
            plural(d->top), d->counts.selected, plural(d->counts.selected), notes, d->simulate_s, d->jobs,
            plural(d->jobs));
    print_approximate(f, d);
    print_band(f, d->band);
    print_bests(f, d->usable_hbm_bytes, d->megatron, d->best);
    if (d->speedup_text)
        fprintf(f, "\nspeedup of the best 7D strategy over the best Megatron-style one (simulated): %s\n",
                d->speedup_text);
    fprintf(f, "\n");
    rpt_print_ranking(f, d->table, d->ntable);
    fprintf(f, "\n");
    print_closing(f, d);
}

void rpt_print_merge(FILE *f, const rpt_search_doc *d)
{
    char x[32] = "";
    if (d->counts.failed > 0) snprintf(x, sizeof x, ", %d failed", d->counts.failed);
    fprintf(f, "heptasim merge: %d record%s from %d file%s (%d candidate%s: %d simulated%s)\n\n", d->counts.records,
            plural(d->counts.records), d->nfiles, plural(d->nfiles), d->ranking.n, plural(d->ranking.n),
            d->counts.simulated, x);
    rpt_print_ranking(f, d->table, d->ntable);
    fprintf(f, "\n");
    print_agreement(f, &d->agreement);
    fflush(f);
}
