/* summary.c - what sweep, compare and merge report, as the rows of
 * report's summaries (rpt_search_doc): report/search_text.c prints the text
 * summaries, report/search_json.c writes the JSON documents (cJSON trees the
 * caller writes with rpt_write_json_doc). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

#include "internal.h"

#define SHOW_ESTIMATED 5    /* next best estimates printed (the JSON has them all) */


/* The records of rows[0..n) as report's list, alike ones folded
 * (srch_fold_alike); free with list_free. */
static rpt_record_list list_of(srch_candidate *const *rows, int n)
{
    rpt_record *recs = sim_xcalloc((size_t)n + 1, sizeof *recs);
    int *same_as = sim_xcalloc((size_t)n + 1, sizeof *same_as);
    for (int i = 0; i < n; i++) srch_candidate_record(rows[i], &recs[i]);
    srch_fold_alike((const srch_candidate *const *)rows, n, same_as);
    return (rpt_record_list){recs, same_as, n};
}

static void list_free(rpt_record_list *l)
{
    free((void *)l->rows);
    free((void *)l->same_as);
}

/* The parts of a sweep's or compare's document up to the ranking. */
static rpt_search_doc session_doc(const srch_sweep_request *rq, const srch_sweep *s, const char *command)
{
    const srch_request *q = &rq->search;
    const srch_counts *k = &s->res->counts;
    rpt_search_doc d = {
        .command = command,
        .model = q->model->name,
        .platform = q->platform->name,
        .resolved_model = q->model,
        .resolved_platform = q->platform,
        .space = srch_space_name(s->space),
        .devices = q->platform->devices,
        .global_batch = q->base.global_batch,
        .top = rq->top,
        .shard_index = rq->shard_index,
        .shard_count = rq->shard_count,
        .counts = {k->rejected, k->enumerated, k->pruned_memory, k->estimated, k->estimated_megatron, k->probes,
                   s->nchosen, s->ranking.simulated, s->ranking.failed, s->resumed.resumed, s->resumed.borrowed, 0},
        .search_s = s->res->seconds,
        .simulate_s = s->simulate_s,
        .search_processes = s->res->workers,
        .jobs = rq->jobs,
        .search_from_twin = s->res->from_twin,
        .cache_path = s->cache_path[0] ? s->cache_path : NULL,
        .agreement = s->ranking.agreement,
        .budget = {rq->budget_s, s->rounds, rq->top, s->best_held},
        .ranking = list_of(s->ranking.rows, s->ranking.n),
        .out_path = rq->out_path,
        .twin_path = rq->twin_path,
        .best_estimates = s->selected,
        .ignored = s->resumed.ignored,
        .overrides = rq->overrides,
        .band = rq->band,
    };
    for (int i = 0; i < s->nchosen; i++) d.approximate += s->chosen[i]->state == SRCH_SIM_DONE && s->chosen[i]->approximate;
    return d;
}

/* The ranked table of rows[0..n) into the doc's table rows; free with free(). */
static rpt_ranked_row *table_of(srch_candidate *const *rows, int n, const cfg_platform *p, int *nrows)
{
    rpt_ranked_row *t;
    *nrows = srch_ranked_rows((const srch_candidate *const *)rows, n, p, &t);
    return t;
}

void srch_print_sweep(FILE *f, const srch_sweep_request *rq, const srch_sweep *s)
{
    const cfg_platform *p = rq->search.platform;
    rpt_search_doc d = session_doc(rq, s, "sweep");
    d.estimated_only = list_of(s->extra, s->nextra);
    rpt_ranked_row *table = table_of(s->ranking.rows, s->ranking.n, p, &d.ntable);
    rpt_ranked_row *next = table_of(s->extra, s->nextra < SHOW_ESTIMATED ? s->nextra : SHOW_ESTIMATED, p, &d.nnext);
    d.table = table;
    d.next_table = next;
    rpt_print_sweep(f, &d);
    free(table);
    free(next);
    list_free(&d.ranking);
    list_free(&d.estimated_only);
}

/* A compare's document: both bests' records in *megatron and *best. */
static rpt_search_doc compare_doc(const srch_sweep_request *rq, const srch_sweep *s, rpt_record *megatron,
                                  rpt_record *best)
{
    const srch_comparison *c = &s->cmp;
    rpt_search_doc d = session_doc(rq, s, "compare");
    if (c->megatron) srch_candidate_record(c->megatron, megatron);
    if (c->best) srch_candidate_record(c->best, best);
    d.megatron = c->megatron ? megatron : NULL;
    d.best = c->best ? best : NULL;
    d.speedup = c->speedup;
    d.speedup_exceeds_error = srch_speedup_sure(c);
    return d;
}

void srch_print_compare(FILE *f, const srch_sweep_request *rq, const srch_sweep *s)
{
    rpt_record megatron, best;
    rpt_search_doc d = compare_doc(rq, s, &megatron, &best);
    d.baseline_text = srch_baseline_text(rq->search.baseline);
    char verdict[256];
    d.speedup_text = srch_speedup_text(&s->cmp, verdict, sizeof verdict) ? verdict : NULL;
    d.usable_hbm_bytes = cfg_usable_hbm_bytes(rq->search.platform);
    rpt_ranked_row *table = table_of(s->ranking.rows, s->ranking.n, rq->search.platform, &d.ntable);
    d.table = table;
    rpt_print_compare(f, &d);
    free(table);
    list_free(&d.ranking);
}

void *srch_sweep_to_json(const srch_sweep_request *rq, const srch_sweep *s)
{
    rpt_search_doc d = session_doc(rq, s, "sweep");
    d.estimated_only = list_of(s->extra, s->nextra);
    void *doc = rpt_sweep_doc_json(&d);
    list_free(&d.ranking);
    list_free(&d.estimated_only);
    return doc;
}

void *srch_compare_to_json(const srch_sweep_request *rq, const srch_sweep *s)
{
    rpt_record megatron, best;
    rpt_search_doc d = compare_doc(rq, s, &megatron, &best);
    void *doc = rpt_compare_doc_json(&d);
    list_free(&d.ranking);
    return doc;
}

static rpt_search_doc merge_doc(const srch_merged *m, const char *const *paths, int npaths)
{
    const srch_ranking *r = &m->ranking;
    rpt_search_doc d = {
        .command = "merge",
        .files = paths,
        .nfiles = npaths,
        .counts = {.records = m->nrecords, .simulated = r->simulated, .failed = r->failed},
        .agreement = r->agreement,
        .ranking = list_of(r->rows, r->n),
    };
    return d;
}

void *srch_merge_to_json(const srch_merged *m, const char *const *paths, int npaths)
{
    rpt_search_doc d = merge_doc(m, paths, npaths);
    void *doc = rpt_merge_doc_json(&d);
    list_free(&d.ranking);
    return doc;
}

void srch_print_merge(FILE *f, const srch_merged *m, int nfiles)
{
    rpt_search_doc d = merge_doc(m, NULL, nfiles);
    rpt_ranked_row *table = table_of(m->ranking.rows, m->ranking.n, NULL, &d.ntable);
    d.table = table;
    rpt_print_merge(f, &d);
    free(table);
    list_free(&d.ranking);
}

void *srch_sweep_records_json(const srch_sweep *s)
{
    rpt_record_list a = list_of(s->ranking.rows, s->ranking.n), b = list_of(s->extra, s->nextra);
    cJSON *rows = rpt_records_json(&a, &b);
    list_free(&a);
    list_free(&b);
    cJSON *row;
    cJSON_ArrayForEach(row, rows)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "step_time_s");
        if (!s->cmp.band || !cJSON_IsNumber(t)) continue;
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(row, "mfu"), *k = cJSON_GetObjectItemCaseSensitive(row, "tokens_per_s");
        cJSON_AddItemToObject(row, "accuracy", rpt_band_json(s->cmp.band, t->valuedouble, cJSON_IsNumber(m) ? m->valuedouble : NAN,
                                                             cJSON_IsNumber(k) ? k->valuedouble : NAN));
    }
    return rows;
}

void srch_sweep_title(const srch_sweep_request *rq, bool compare, char *out, int cap)
{
    const srch_request *q = &rq->search;
    char sets[CFG_TEXT_LEN], with[CFG_TEXT_LEN + 16] = "";
    rpt_overrides_text(&rq->overrides, sets, sizeof sets);
    if (sets[0]) snprintf(with, sizeof with, ", with %s", sets);
    if (compare)
        snprintf(out, (size_t)cap, "%s on %s (%d devices%s): Megatron-style vs 7D", q->model->name, q->platform->name,
                 q->platform->devices, with);
    else
        snprintf(out, (size_t)cap, "%s on %s (%d devices%s): %s sweep", q->model->name, q->platform->name,
                 q->platform->devices, with, srch_space_name(q->space));
}


