/* compare.c - compare's choice of candidates and of its two bests: the
 * best estimates of the 7D space and of its Megatron-style part are
 * simulated together, and the fastest simulated of each is reported.
 *
 * A Megatron-style candidate is a 7D candidate too: when it is among the
 * best of the whole space it is simulated once, through res->best, and
 * the Megatron-style list gets its results afterwards. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

static bool in_best(const srch_result *res, int index)
{
    for (int j = 0; j < res->nbest; j++)
        if (res->best[j].index == index) return true;
    return false;
}

int srch_compare_union(srch_result *res, srch_candidate **out)
{
    int n = 0;
    for (int i = 0; i < res->nbest; i++) out[n++] = &res->best[i];
    for (int i = 0; i < res->nbest_megatron; i++)
        if (!in_best(res, res->best_megatron[i].index)) out[n++] = &res->best_megatron[i];
    return n;
}

/* The first simulated candidate of the n candidates *rows[i] in the
 * order of a ranking (srch_ranking_make: step time, ties by memory), or
 * NULL. */
static const srch_candidate *first_ranked(srch_candidate *const *rows, int n)
{
    srch_ranking r;
    srch_ranking_make(rows, n, &r);
    const srch_candidate *b = r.n > 0 && r.rows[0]->state == SRCH_SIM_DONE ? r.rows[0] : NULL;
    srch_ranking_free(&r);
    return b;
}

/* The one place the speedup is computed: Megatron-style step / best step.
 * The band is the session's to set (srch_sweep_request.band). */
static void set_speedup(srch_comparison *out)
{
    out->band = NULL;
    out->speedup = out->megatron && out->best && out->best->step_time_s > 0
                       ? out->megatron->step_time_s / out->best->step_time_s
                       : NAN;
}

void srch_compare_bests(srch_result *res, srch_candidate *const *chosen, int n, srch_comparison *out)
{
    srch_candidate **megs = sim_xcalloc((size_t)res->nbest_megatron + 1, sizeof *megs);
    for (int i = 0; i < res->nbest_megatron; i++) {
        for (int j = 0; j < res->nbest; j++)
            if (res->best[j].index == res->best_megatron[i].index) res->best_megatron[i] = res->best[j];
        megs[i] = &res->best_megatron[i];
    }
    out->megatron = first_ranked(megs, res->nbest_megatron);
    out->best = first_ranked(chosen, n);
    set_speedup(out);
    free(megs);
}

void srch_sweep_bests(srch_candidate *const *rows, int n, srch_comparison *out)
{
    srch_candidate **megs = sim_xcalloc((size_t)n + 1, sizeof *megs);
    int nm = 0;
    for (int i = 0; i < n; i++)
        if (rows[i]->megatron_style) megs[nm++] = rows[i];
    out->megatron = first_ranked(megs, nm);
    out->best = first_ranked(rows, n);
    set_speedup(out);
    free(megs);
}

bool srch_ratio_sure(const cfg_band *band, double speedup)
{
    return band && band->pair_error > 0 && isfinite(speedup) && speedup > 1 + CFG_SURE_SIGMAS * band->pair_error;
}

bool srch_speedup_sure(const srch_comparison *c)
{
    return srch_ratio_sure(c->band, c->speedup);
}

bool srch_speedup_text(const srch_comparison *c, char *out, int cap)
{
    if (!isfinite(c->speedup)) return false;
    int n;
    if (c->best == c->megatron || c->best->index == c->megatron->index)
        n = snprintf(out, (size_t)cap, "%.3fx; the best 7D strategy is Megatron-style", c->speedup);
    else if (srch_tie(c->megatron->step_time_s, c->best->step_time_s))
        n = snprintf(out, (size_t)cap, "%.3fx, a tie (within %g %%)", c->speedup, 100 * SRCH_TIE_REL);
    else
        n = snprintf(out, (size_t)cap, "%.3fx", c->speedup);
    if (c->band && c->band->pair_error > 0 && n >= 0 && n < cap)
        snprintf(out + n, (size_t)(cap - n), "; %s the model error on a speed-up (%d x %.1f %%, %s)",
                 srch_speedup_sure(c) ? "larger than" : "within", CFG_SURE_SIGMAS, 100 * c->band->pair_error,
                 c->band->kind);
    return true;
}

sim_rc srch_compare_check(const srch_comparison *c, sim_err *err)
{
    if (c->megatron && c->best) return SIM_OK;
    return sim_fail(err, SIM_EOOM,
                    "heptasim compare: no simulated %s strategy to compare (none fits, or every simulation failed; "
                    "try more devices or a smaller --global-batch)",
                    !c->megatron ? "Megatron-style" : "7D");
}
