/* session.c - a sweep or a compare from start to end: search, choose the
 * candidates to simulate, resume from the records file, simulate what is
 * left while streaming each record to the file, rank.
 *
 * The records file (--out) is appended to as each simulation finishes and
 * flushed per record, so an interrupted sweep keeps what it finished
 * (resume.c reads it back). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Each finished simulation: its record to the file, progress forward. */
typedef struct streaming {
    const srch_sweep_request *rq;
    FILE *out;
    int done, total;
    sim_rc rc;                    /* the first write error */
    sim_err err;
} streaming;

static void sim_done(void *ctx, srch_candidate *c)
{
    streaming *st = ctx;
    st->done++;
    if (st->out && st->rc == SIM_OK) st->rc = srch_jsonl_write(st->out, st->rq->out_path, c, &st->err);
    if (st->rq->sim_progress) st->rq->sim_progress(st->rq->sim_progress_ctx, st->done, st->total);
}

/* Resume, open the records file, simulate the chosen candidates not done
 * yet, rank them all. */
static sim_rc simulate(const srch_sweep_request *rq, srch_sweep *s, sim_err *err)
{
    sim_rc rc = SIM_OK;
    if (rq->resume && rq->out_path)
        rc = srch_resume(rq->out_path, s->res->inputs_id, s->space, s->chosen, s->nchosen, &s->resumed, err);
    if (rc != SIM_OK) return rc;
    streaming st = {rq, NULL, 0, 0, SIM_OK, {{0}}};
    if (rq->out_path) {
        st.out = fopen(rq->out_path, rq->resume ? "a" : "w");
        if (!st.out)
            return sim_fail(err, SIM_EIO, "%s: cannot write the sweep records: %s (check the directory exists)",
                            rq->out_path, strerror(errno));
    }
    srch_candidate **todo = sim_xcalloc((size_t)s->nchosen + 1, sizeof *todo);
    for (int i = 0; i < s->nchosen; i++)
        if (s->chosen[i]->state == SRCH_SIM_NONE) todo[st.total++] = s->chosen[i];
    double t0 = sim_now_s();
    if (rq->sim_progress) rq->sim_progress(rq->sim_progress_ctx, 0, st.total);
    rc = srch_simulate(todo, st.total, rq->search.model, rq->search.platform, rq->jobs, &rq->engine, sim_done, &st,
                       err);
    s->simulate_s = sim_now_s() - t0;
    free(todo);
    if (st.out && fclose(st.out) != 0 && st.rc == SIM_OK)
        st.rc = sim_fail(&st.err, SIM_EIO, "%s: cannot write a sweep record: %s (check free space and permissions)",
                         rq->out_path, strerror(errno));
    if (rc == SIM_OK && st.rc != SIM_OK) {
        *err = st.err;
        rc = st.rc;
    }
    if (rc == SIM_OK) srch_ranking_make(s->chosen, s->nchosen, &s->ranking);
    return rc;
}

/* The search of rq keeping `keep` per list. */
static sim_rc search(const srch_sweep_request *rq, srch_space space, int keep, srch_sweep *s, sim_err *err)
{
    memset(s, 0, sizeof *s);
    s->space = space;
    srch_request sr = rq->search;
    sr.space = space;
    sr.keep = keep;
    sr.replica_reduction = rq->engine.symmetry == ENG_SYM_DP;
    return srch_run(&sr, &s->res, err);
}

sim_rc srch_sweep_run(const srch_sweep_request *rq, srch_sweep *s, sim_err *err)
{
    sim_rc rc = search(rq, rq->search.space, rq->top + rq->extra, s, err);
    if (rc != SIM_OK) return rc;
    srch_result *res = s->res;
    if (res->nbest == 0)
        return sim_fail(err, SIM_EOOM,
                        "heptasim sweep: no strategy of the %s space fits on %s with %d devices (%lld enumerated, %lld "
                        "pruned by memory; try more devices, a smaller --global-batch or fewer --set pins)",
                        srch_space_name(s->space), rq->search.platform->name, rq->search.platform->devices,
                        res->counts.enumerated, res->counts.pruned_memory);
    s->selected = rq->top < res->nbest ? rq->top : res->nbest;
    s->chosen = sim_xcalloc((size_t)s->selected + 1, sizeof *s->chosen);
    s->nchosen = srch_shard(res, rq->top, rq->shard_index, rq->shard_count, s->chosen);
    s->nextra = res->nbest - s->selected;
    s->extra = sim_xcalloc((size_t)s->nextra + 1, sizeof *s->extra);
    for (int i = 0; i < s->nextra; i++) s->extra[i] = &res->best[s->selected + i];
    return simulate(rq, s, err);
}

sim_rc srch_compare_run(const srch_sweep_request *rq, srch_sweep *s, sim_err *err)
{
    sim_rc rc = search(rq, SRCH_SPACE_7D, rq->top, s, err);
    if (rc != SIM_OK) return rc;
    s->chosen = sim_xcalloc((size_t)(s->res->nbest + s->res->nbest_megatron) + 1, sizeof *s->chosen);
    s->nchosen = srch_compare_union(s->res, s->chosen);
    rc = simulate(rq, s, err);
    if (rc == SIM_OK) srch_compare_bests(s->res, s->chosen, s->nchosen, &s->cmp);
    return rc;
}

void srch_sweep_free(srch_sweep *s)
{
    srch_ranking_free(&s->ranking);
    free(s->chosen);
    free(s->extra);
    srch_result_free(s->res);
    memset(s, 0, sizeof *s);
}
