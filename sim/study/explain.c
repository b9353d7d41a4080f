/* explain.c - what makes a cell's 7D best faster than its Megatron-style
 * best: the component it saves most on (srch_reason) and the clauses of
 * the baseline's rule it breaks (srch_megatron_breaches). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void stdy_explain(stdy_row *row, const cfg_platform *p)
{
    row->reason[0] = row->keys[0] = '\0';
    if (!row->has_best || !row->has_megatron) {
        snprintf(row->reason, sizeof row->reason, "%s", !row->has_best ? "no 7D strategy fits or was simulated"
                                                                         : "no Megatron-style strategy fits or was "
                                                                           "simulated");
        return;
    }
    const srch_candidate *b = &row->best, *m = &row->megatron;
    if (b->index == m->index) {
        snprintf(row->reason, sizeof row->reason, "the best 7D strategy is Megatron-style");
        return;
    }
    srch_reason(b, m, p, row->reason, sizeof row->reason);
    /* the clauses of the baseline's rule the 7D best breaks */
    srch_megatron_breaches(&b->strategy, p, row->cell->baseline, row->keys, sizeof row->keys);
    if (!row->keys[0] && b->megatron_style) snprintf(row->keys, sizeof row->keys, "none (Megatron-style too)");
}
