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

/* The fastest simulated of the n candidates *rows[i], or NULL. */
static const srch_candidate *fastest(const srch_candidate *const *rows, int n)
{
    const srch_candidate *b = NULL;
    for (int i = 0; i < n; i++)
        if (rows[i]->state == SRCH_SIM_DONE && (!b || srch_cmp_simulated(rows[i], b) < 0)) b = rows[i];
    return b;
}

void srch_compare_bests(srch_result *res, srch_candidate *const *chosen, int n, srch_comparison *out)
{
    const srch_candidate **megs = sim_xcalloc((size_t)res->nbest_megatron + 1, sizeof *megs);
    for (int i = 0; i < res->nbest_megatron; i++) {
        for (int j = 0; j < res->nbest; j++)
            if (res->best[j].index == res->best_megatron[i].index) res->best_megatron[i] = res->best[j];
        megs[i] = &res->best_megatron[i];
    }
    out->megatron = fastest(megs, res->nbest_megatron);
    out->best = fastest((const srch_candidate *const *)chosen, n);
    out->speedup = out->megatron && out->best && out->best->step_time_s > 0
                       ? out->megatron->step_time_s / out->best->step_time_s
                       : NAN;
    free(megs);
}

sim_rc srch_compare_check(const srch_comparison *c, sim_err *err)
{
    if (c->megatron && c->best) return SIM_OK;
    return sim_fail(err, SIM_EOOM,
                    "heptasim compare: no simulated %s strategy to compare (none fits, or every simulation failed; "
                    "try more devices or a smaller --global-batch)",
                    !c->megatron ? "Megatron-style" : "7D");
}
