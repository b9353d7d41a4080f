/* table.c - the rows of a sweep's ranked table: candidates that are alike
 * (the same strategy in effect) folded into one row, and why each row
 * beats the next, handed to report/ranking.c to print. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Whether x and y agree to SRCH_SAME_REL of scale. */
static bool same(double x, double y, double scale)
{
    return fabs(x - y) <= SRCH_SAME_REL * scale;
}

bool srch_alike(const srch_candidate *a, const srch_candidate *b)
{
    bool sa = a->state == SRCH_SIM_DONE, sb = b->state == SRCH_SIM_DONE;
    if (sa != sb || a->state == SRCH_SIM_FAILED || b->state == SRCH_SIM_FAILED) return false;
    double ta = sa ? a->step_time_s : a->est.step_s, tb = sb ? b->step_time_s : b->est.step_s;
    double scale = fmax(ta, tb);
    if (!same(ta, tb, scale) || !same(a->peak_bytes, b->peak_bytes, fmax(a->peak_bytes, b->peak_bytes))) return false;
    if (sa) {
        if (!same(a->compute_s, b->compute_s, scale) || !same(a->bubble_s, b->bubble_s, scale) ||
            !same(a->optimizer_s, b->optimizer_s, scale))
            return false;
        /* the traffic hidden behind compute may differ (ring CP 2 with
         * twice the micro-batch of dp alone): it costs neither anything */
        for (int d = 0; d < WL_NDIMS; d++)
            if (!same(a->exposed_s[d], b->exposed_s[d], scale)) return false;
        return true;
    }
    if (!same(a->est.compute_s, b->est.compute_s, scale) || !same(a->est.bubble_s, b->est.bubble_s, scale) ||
        !same(a->est.optimizer_s, b->est.optimizer_s, scale))
        return false;
    for (int d = 0; d < WL_NDIMS; d++)
        if (!same(a->est.exposed_s[d], b->est.exposed_s[d], scale)) return false;
    /* An estimate has no traffic figure (hidden traffic costs it nothing):
     * the keys that set how much goes where must be the same. */
    static const char *const traffic_keys[] = {"dp", "pp", "tp_x", "tp_y", "cp_ring", "cp_ulysses", "ep", "etp",
                                               "micro_batch", "sequence_parallel", "fuse_tpy_cp", "zero", "order",
                                               NULL};
    for (int i = 0; traffic_keys[i]; i++) {
        const cfg_key *k = cfg_strategy_key(traffic_keys[i]);
        char va[96], vb[96];
        if (!k) continue;
        cfg_key_text(k, &a->strategy, va, sizeof va);
        cfg_key_text(k, &b->strategy, vb, sizeof vb);
        if (strcmp(va, vb) != 0) return false;
    }
    return true;
}

void srch_fold_alike(const srch_candidate *const *rows, int n, int *same_as)
{
    for (int i = 0; i < n; i++) {
        same_as[i] = i;
        const srch_candidate *c = rows[i];
        double t = c->state == SRCH_SIM_DONE ? c->step_time_s : c->est.step_s;
        for (int j = i - 1; j >= 0; j--) {
            const srch_candidate *o = rows[j];
            if (!srch_tie(o->state == SRCH_SIM_DONE ? o->step_time_s : o->est.step_s, t)) break;
            if (same_as[j] == j && srch_alike(o, c)) same_as[i] = j;
        }
    }
}

/* The strategy column of row i: its compact form, and how many alike rows
 * it stands for. */
static void row_name(const srch_candidate *c, int alike, char *out, size_t cap)
{
    char name[256];
    cfg_strategy_compact(&c->strategy, name, sizeof name);
    if (alike > 1)
        snprintf(out, cap, "%s (+%d alike)", name, alike - 1);
    else
        snprintf(out, cap, "%s", name);
}

int srch_ranked_rows(const srch_candidate *const *rows, int n, const cfg_platform *p, rpt_ranked_row **out)
{
    int *same_as = sim_xcalloc((size_t)n + 1, sizeof *same_as), *alike = sim_xcalloc((size_t)n + 1, sizeof *alike);
    rpt_ranked_row *table = sim_xcalloc((size_t)n + 1, sizeof *table);
    srch_fold_alike(rows, n, same_as);
    for (int i = 0; i < n; i++) alike[same_as[i]]++;
    int nrows = 0;
    for (int i = 0; i < n; i++) {
        if (same_as[i] != i) continue;
        const srch_candidate *c = rows[i];
        int next = i + 1;
        while (next < n && same_as[next] != next) next++;
        rpt_ranked_row *r = &table[nrows++];
        r->index = c->index;
        row_name(c, alike[i], r->strategy, sizeof r->strategy);
        r->state = c->state == SRCH_SIM_DONE ? RPT_ROW_SIMULATED : c->state == SRCH_SIM_FAILED ? RPT_ROW_FAILED
                                                                                              : RPT_ROW_ESTIMATED;
        r->estimate_s = c->est.step_s;
        r->step_time_s = c->step_time_s;
        r->mfu = c->mfu;
        r->peak_bytes = c->peak_bytes;
        if (c->state == SRCH_SIM_FAILED)
            snprintf(r->why, sizeof r->why, "%s", c->error);
        else if (next < n && rows[next]->state != SRCH_SIM_FAILED)
            srch_reason(c, rows[next], p, r->why, sizeof r->why);
    }
    free(same_as);
    free(alike);
    *out = table;
    return nrows;
}

void srch_print_table(FILE *out, const srch_candidate *const *rows, int n, const cfg_platform *p)
{
    rpt_ranked_row *table;
    int nrows = srch_ranked_rows(rows, n, p, &table);
    rpt_print_ranking(out, table, nrows);
    free(table);
}
