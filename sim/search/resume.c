/* resume.c - carry on an interrupted sweep: the results already in its
 * --out file go back to the candidates they belong to.
 *
 * The file is the sweep's own JSONL stream (candidate.c, report/records.c),
 * one record per finished simulation.  Its records must come from the same search (space
 * and inputs_id), or the file belongs to another sweep and is refused
 * rather than mixed in; a record of a candidate not chosen this time (a
 * smaller --top, another shard) is left in the file and counted.  A
 * record gives back its simulation alone: the estimate is this search's.
 * Only a final record (a simulation that succeeded) is taken: a failed or killed
 * simulation is simulated again. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Cuts a torn last line off path (an interrupted write) so that appended
 * records start on a line of their own. */
static sim_rc cut_torn_line(const char *path, sim_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) return SIM_OK;
    long keep = 0, pos = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF) {
        pos++;
        if (ch == '\n') keep = pos;
    }
    fclose(f);
    if (keep < pos && truncate(path, keep) != 0)
        return sim_fail(err, SIM_EIO, "%s: cannot cut the interrupted last line: %s (check permissions)", path,
                        strerror(errno));
    return SIM_OK;
}

static srch_candidate *chosen_of(srch_candidate *const *chosen, int n, int index)
{
    for (int k = 0; k < n; k++)
        if (chosen[k]->index == index) return chosen[k];
    return NULL;
}

sim_rc srch_resume(const char *path, const char *inputs_id, srch_space space, srch_candidate *const *chosen, int n,
                   srch_resumed *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (access(path, F_OK) != 0) return SIM_OK; /* nothing yet: a fresh start */
    srch_candidate *recs = NULL;
    int nrec = 0, cap = 0;
    sim_rc rc = srch_jsonl_read(path, &recs, &nrec, &cap, &out->skipped, err);
    if (rc == SIM_OK && out->skipped.torn) rc = cut_torn_line(path, err);
    for (int i = 0; i < nrec && rc == SIM_OK; i++) {
        const srch_candidate *r = &recs[i];
        srch_candidate *c = chosen_of(chosen, n, r->index);
        if (r->space != space || strcmp(r->inputs_id, inputs_id) != 0 ||
            (c && !cfg_strategy_same(&r->strategy, &c->strategy))) {
            rc = sim_fail(err, SIM_EINVAL,
                          "%s: candidate %d comes from another search (other model, platform, devices, space, --set "
                          "pins or global batch: inputs %s, this sweep %s); use another '--out' file",
                          path, r->index, r->inputs_id, inputs_id);
            break;
        }
        if (!c) {
            out->ignored++;
            continue;
        }
        if (r->state == SRCH_SIM_FAILED && c->state == SRCH_SIM_NONE) out->retried++; /* not final */
        if (r->state == SRCH_SIM_DONE && c->state != SRCH_SIM_DONE) {
            /* the simulation only: the estimate, memory and name are this
             * search's (the record's may be of an earlier estimator) */
            srch_take_simulation(c, r);
            out->resumed++;
        }
    }
    free(recs);
    return rc;
}

void srch_take_simulation(srch_candidate *c, const srch_candidate *r)
{
    c->state = r->state;
    c->step_time_s = r->step_time_s;
    c->mfu = r->mfu;
    c->tokens_per_s = r->tokens_per_s;
    c->compute_s = r->compute_s;
    c->bubble_s = r->bubble_s;
    c->optimizer_s = r->optimizer_s;
    memcpy(c->exposed_s, r->exposed_s, sizeof c->exposed_s);
    memcpy(c->comm_s, r->comm_s, sizeof c->comm_s);
    c->approximate = r->approximate;
    sim_strlcpy(c->error, r->error, sizeof c->error);
}

int srch_borrow(const char *path, const char *twin_id, srch_space space, srch_candidate *const *chosen, int n)
{
    if (!twin_id[0] || access(path, F_OK) != 0) return 0;
    srch_candidate *recs = NULL;
    int nrec = 0, cap = 0, taken = 0;
    rpt_skipped skipped;
    sim_err why = {{0}};
    memset(&skipped, 0, sizeof skipped);
    /* an unreadable twin only costs the simulations it would have saved */
    if (srch_jsonl_read(path, &recs, &nrec, &cap, &skipped, &why) == SIM_OK) {
        for (int i = 0; i < nrec; i++) {
            const srch_candidate *r = &recs[i];
            srch_candidate *c = chosen_of(chosen, n, r->index);
            if (!c || c->state == SRCH_SIM_DONE || r->state != SRCH_SIM_DONE || r->space != space ||
                strcmp(r->inputs_id, twin_id) != 0 || !cfg_strategy_same(&r->strategy, &c->strategy))
                continue;
            srch_take_simulation(c, r);
            taken++;
        }
    }
    free(recs);
    return taken;
}
