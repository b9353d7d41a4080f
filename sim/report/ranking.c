/* ranking.c - the printed ranked table of a sweep, compare or merge: one
 * line per row the search hands over (alike candidates already folded
 * into one), its estimate and, only when it was simulated, its simulated
 * step time and MFU, then its memory and why it beats the next row. */
#include "report.h"

#include <string.h>

void rpt_print_ranking(FILE *out, const rpt_ranked_row *rows, int n)
{
    int w = 8;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(rows[i].strategy);
        if (len > w) w = len;
    }
    if (w > 72) w = 72;
    fprintf(out, "%4s  %8s  %-*s  %10s  %10s  %6s  %9s  %s\n", "rank", "index", w, "strategy", "estimate",
            "simulated", "MFU", "memory", "why it beats the next row");
    int ranked = 0;
    for (int i = 0; i < n; i++) {
        const rpt_ranked_row *r = &rows[i];
        char sim[32], mfu[16], rank[16];
        if (r->state == RPT_ROW_SIMULATED) {
            snprintf(sim, sizeof sim, "%.4f s", r->step_time_s);
            snprintf(mfu, sizeof mfu, "%.1f%%", 100.0 * r->mfu);
            snprintf(rank, sizeof rank, "%d", ++ranked);
        } else {
            snprintf(sim, sizeof sim, "%s", r->state == RPT_ROW_FAILED ? "failed" : "-");
            snprintf(mfu, sizeof mfu, "-");
            snprintf(rank, sizeof rank, "-");
        }
        fprintf(out, "%4s  %8d  %-*.*s  %8.4f s  %10s  %6s  %5.1f GiB  %s\n", rank, r->index, w, w, r->strategy,
                r->estimate_s, sim, mfu, r->peak_bytes / SIM_GIB, r->why);
    }
}
