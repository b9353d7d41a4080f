/* objective.c - what a sweep or compare ranks its simulated candidates by:
 * the step time (the ranking itself), or goodput: each simulated
 * candidate's run over days (sim/goodput) on its simulated step, with the
 * reliability file's slow steps simulated for it too, ranked by the mean
 * days to the token budget (or the mean goodput within the horizon), and
 * the bests of both spaces picked again by it. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../runner/runner.h"
#include "../report/goodput.h"
#include "internal.h"

/* ORDER srch_objective */
const sim_enum_name srch_objective_names[SRCH_NOBJECTIVES] = {
    {SRCH_OBJ_STEP, "step"},
    {SRCH_OBJ_GOODPUT, "goodput"},
};

void srch_goodput_free(srch_goodput *g)
{
    if (!g) return;
    free(g->rows);
    memset(g, 0, sizeof *g);
}

/* Better first: fewer mean days to the budget, else more goodput; then
 * the step-time ranking's order. */
static int cmp_rows(const void *pa, const void *pb)
{
    const srch_goodput_row *a = pa, *b = pb;
    double ka, kb;
    if (a->in.token_budget > 0) {
        ka = a->res.days.mean;
        kb = b->res.days.mean;
    } else {
        ka = -a->res.goodput_tokens_per_s.mean;
        kb = -b->res.goodput_tokens_per_s.mean;
    }
    if (ka != kb) return ka < kb ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

sim_rc srch_goodput_rank(const srch_sweep_request *rq, srch_sweep *s, const gp_options *o, srch_goodput *out,
                         sim_err *err)
{
    memset(out, 0, sizeof *out);
    out->best = out->megatron = -1;
    out->step_best = s->cmp.best;
    out->step_megatron = s->cmp.megatron;
    const cfg_model *m = rq->search.model;
    const cfg_platform *p = rq->search.platform;
    int n = 0, ns = gp_straggler_count(o);
    out->rows = sim_xcalloc((size_t)s->ranking.n + 1, sizeof *out->rows);
    for (int i = 0; i < s->ranking.n; i++) {
        const srch_candidate *c = s->ranking.rows[i];
        if (c->state != SRCH_SIM_DONE) continue;
        srch_goodput_row *r = &out->rows[n];
        r->c = c;
        r->rank = i;
        sim_rc rc = gp_inputs_make(o, m, p, &c->strategy, &r->in, err);
        if (rc != SIM_OK) return rc;
        r->in.step_s = c->step_time_s;
        n++;
    }
    out->n = n;
    sim_rc rc = SIM_OK;
    if (ns > 0 && n > 0) { /* every candidate's slow steps, simulated at once */
        run_case *cases = sim_xcalloc((size_t)n * (size_t)ns, sizeof *cases);
        run_case base = {0};
        base.model = *m;
        base.platform = *p;
        base.options = &rq->engine;
        for (int i = 0; i < n; i++) {
            base.strategy = out->rows[i].c->strategy;
            gp_straggler_cases(o, &base, &cases[(size_t)i * ns]);
        }
        rc = runner_simulate_all(cases, n * ns, rq->jobs, NULL, NULL, err);
        for (int i = 0; i < n * ns && rc == SIM_OK; i++) {
            if (cases[i].rc != SIM_OK) {
                rc = sim_fail(err, cases[i].rc, "%s with a slow part: %s", out->rows[i / ns].c->strategy.name,
                              cases[i].msg);
                break;
            }
            out->rows[i / ns].in.straggler_step_s[i % ns] = cases[i].result.step_time_s;
        }
        free(cases);
    }
    for (int i = 0; i < n && rc == SIM_OK; i++) rc = gp_run(&out->rows[i].in, &out->rows[i].res, err);
    if (rc != SIM_OK) return rc;
    qsort(out->rows, (size_t)n, sizeof *out->rows, cmp_rows);
    for (int i = 0; i < n; i++) {
        if (out->best < 0) out->best = i;
        if (out->megatron < 0 && out->rows[i].c->megatron_style) out->megatron = i;
    }
    /* the bests of the comparison are now the objective's */
    s->cmp.best = out->best >= 0 ? out->rows[out->best].c : NULL;
    s->cmp.megatron = out->megatron >= 0 ? out->rows[out->megatron].c : NULL;
    s->cmp.speedup = s->cmp.best && s->cmp.megatron ? s->cmp.megatron->step_time_s / s->cmp.best->step_time_s : NAN;
    return SIM_OK;
}

/* The report's view of g (sides and flags: arrays of g->n the caller
 * frees). */
static rpt_goodput_rank rank_of(const srch_sweep_request *rq, const srch_goodput *g, bool compare)
{
    rpt_goodput_side *sides = sim_xcalloc((size_t)g->n + 1, sizeof *sides);
    bool *mst = sim_xcalloc((size_t)g->n + 1, sizeof *mst);
    for (int i = 0; i < g->n; i++) {
        sides[i] = (rpt_goodput_side){g->rows[i].c->strategy.name, &g->rows[i].in, &g->rows[i].res};
        mst[i] = g->rows[i].c->megatron_style;
    }
    return (rpt_goodput_rank){.rows = sides, .megatron_style = mst, .n = g->n, .best = g->best,
                              .megatron = g->megatron,
                              .step_best = g->step_best ? g->step_best->strategy.name : NULL,
                              .step_megatron = g->step_megatron ? g->step_megatron->strategy.name : NULL,
                              .compare = compare, .top = rq->top};
}

static void rank_free(rpt_goodput_rank *r)
{
    free((void *)r->rows);
    free((void *)r->megatron_style);
}

void srch_print_goodput(FILE *f, const srch_sweep_request *rq, const srch_goodput *g, bool compare)
{
    rpt_goodput_rank r = rank_of(rq, g, compare);
    rpt_print_goodput_rank(f, &r);
    rank_free(&r);
}

void *srch_goodput_to_json(const srch_sweep_request *rq, const srch_goodput *g, bool compare)
{
    rpt_goodput_rank r = rank_of(rq, g, compare);
    void *o = rpt_goodput_rank_json(&r);
    rank_free(&r);
    return o;
}

void srch_goodput_add_records(void *records, const srch_goodput *g)
{
    cJSON *row;
    cJSON_ArrayForEach(row, (cJSON *)records)
    {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(row, "index");
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(row, "space");
        for (int i = 0; cJSON_IsNumber(idx) && cJSON_IsString(sp) && i < g->n; i++) {
            const srch_candidate *c = g->rows[i].c;
            if (c->index != idx->valueint || strcmp(srch_space_name(c->space), sp->valuestring) != 0) continue;
            rpt_goodput_side x = {c->strategy.name, &g->rows[i].in, &g->rows[i].res};
            cJSON_AddItemToObject(row, "goodput", rpt_goodput_record_json(&x));
            break;
        }
    }
}
