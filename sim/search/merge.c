/* merge.c - the shards of one sweep joined into one ranking.
 *
 * Shards of a sweep split the same list of candidates (shard.c), so their
 * records fit together: one record per candidate, in simulated order, is
 * the ranking a single run gives.  Files of different searches are refused
 * instead of mixed: records carry the search's space and inputs_id. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The first record of rows[0..n) for candidate index, or -1. */
static int find_row(srch_candidate *const *rows, int n, int index)
{
    for (int j = 0; j < n; j++)
        if (rows[j]->index == index) return j;
    return -1;
}

/* One row per candidate of m->records (file_of[i]: the file of record i). */
static sim_rc dedup(srch_merged *m, const char *const *paths, const int *file_of, srch_candidate **rows, int *nrows,
                    sim_err *err)
{
    const srch_candidate *recs = m->records, *first = m->records;
    int n = 0;
    for (int i = 0; i < m->nrecords; i++) {
        const srch_candidate *r = &recs[i];
        if (r->space != first->space || strcmp(r->inputs_id, first->inputs_id) != 0)
            return sim_fail(err, SIM_EINVAL,
                            "heptasim merge: %s and %s hold records of different searches (%s space, inputs %s vs %s "
                            "space, inputs %s); merge the shards of one sweep",
                            paths[file_of[0]], paths[file_of[i]], srch_space_name(first->space), first->inputs_id,
                            srch_space_name(r->space), r->inputs_id);
        int dup = find_row(rows, n, r->index);
        if (dup < 0) {
            rows[n++] = &m->records[i];
            continue;
        }
        if (!cfg_strategy_same(&rows[dup]->strategy, &r->strategy))
            return sim_fail(err, SIM_EINVAL,
                            "heptasim merge: candidate %d differs between %s and %s (the files come from different "
                            "sweeps)",
                            r->index, paths[file_of[rows[dup] - recs]], paths[file_of[i]]);
        if (r->state != SRCH_SIM_NONE && rows[dup]->state != SRCH_SIM_DONE &&
            (r->state == SRCH_SIM_DONE || rows[dup]->state == SRCH_SIM_NONE))
            rows[dup] = &m->records[i]; /* a final record beats a failed one, which beats an estimate */
    }
    *nrows = n;
    return SIM_OK;
}

sim_rc srch_merge(const char *const *paths, int npaths, srch_merged *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    int cap = 0;
    int *file_of = NULL;
    sim_rc rc = SIM_OK;
    for (int f = 0; f < npaths && rc == SIM_OK; f++) {
        int before = out->nrecords;
        rpt_skipped sk;
        rc = srch_jsonl_read(paths[f], &out->records, &out->nrecords, &cap, &sk, err);
        if (sk.lines > 0 && !out->skipped_path) {
            out->skipped_path = paths[f];
            out->skipped.first_line = sk.first_line;
        }
        out->skipped.lines += sk.lines;
        out->skipped.torn |= sk.torn;
        if (rc == SIM_OK && out->nrecords == before && sk.lines > 0)
            rc = sim_fail(err, SIM_EINVAL, "%s: line %d: not valid JSON, and no line of the file is a sweep record "
                          "(expected one record per line, as 'heptasim sweep --out' writes)", paths[f], sk.first_line);
        file_of = sim_xrealloc(file_of, (size_t)(cap > 0 ? cap : 1) * sizeof *file_of);
        for (int i = before; i < out->nrecords; i++) file_of[i] = f;
    }
    srch_candidate **rows = sim_xcalloc((size_t)out->nrecords + 1, sizeof *rows);
    int nrows = 0;
    if (rc == SIM_OK) rc = dedup(out, paths, file_of, rows, &nrows, err);
    if (rc == SIM_OK) srch_ranking_make(rows, nrows, &out->ranking);
    free(rows);
    free(file_of);
    return rc;
}

void srch_merged_free(srch_merged *m)
{
    srch_ranking_free(&m->ranking);
    free(m->records);
    memset(m, 0, sizeof *m);
}
