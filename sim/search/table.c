/* table.c - the ranked table of a sweep: one row per candidate with its
 * estimate and, only when it was simulated, its simulated step time, MFU,
 * memory and why it beats the next row. */
#include <string.h>

#include "internal.h"

void srch_print_table(FILE *out, const srch_candidate *const *rows, int n, const cfg_platform *p)
{
    int w = 8;
    char name[256];
    for (int i = 0; i < n; i++) {
        cfg_strategy_compact(&rows[i]->strategy, name, sizeof name);
        int len = (int)strlen(name);
        if (len > w) w = len;
    }
    if (w > 72) w = 72;
    fprintf(out, "%4s  %8s  %-*s  %10s  %10s  %6s  %9s  %s\n", "rank", "index", w, "strategy", "estimate",
            "simulated", "MFU", "memory", "why it beats the next row");
    for (int i = 0; i < n; i++) {
        const srch_candidate *c = rows[i];
        char sim[32], mfu[16], why[SIM_ERR_LEN + 64] = "";
        cfg_strategy_compact(&c->strategy, name, sizeof name);
        if (c->state == SRCH_SIM_DONE) {
            snprintf(sim, sizeof sim, "%.4f s", c->step_time_s);
            snprintf(mfu, sizeof mfu, "%.1f%%", 100.0 * c->mfu);
        } else {
            snprintf(sim, sizeof sim, "%s", c->state == SRCH_SIM_FAILED ? "failed" : "-");
            snprintf(mfu, sizeof mfu, "-");
        }
        if (c->state == SRCH_SIM_FAILED)
            snprintf(why, sizeof why, "%s", c->error);
        else if (i + 1 < n && rows[i + 1]->state != SRCH_SIM_FAILED)
            srch_reason(c, rows[i + 1], p, why, sizeof why);
        char rank[16];
        if (c->state == SRCH_SIM_DONE)
            snprintf(rank, sizeof rank, "%d", i + 1);
        else
            snprintf(rank, sizeof rank, "-");
        fprintf(out, "%4s  %8d  %-*.*s  %8.4f s  %10s  %6s  %5.1f GiB  %s\n", rank, c->index, w, w, name,
                c->est.step_s, sim, mfu, c->peak_bytes / SIM_GIB, why);
    }
}
