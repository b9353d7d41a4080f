/* cmd_search.c - `heptasim sweep` (search a strategy space and simulate the
 * best estimates), `heptasim compare` (best Megatron-style against best 7D)
 * and `heptasim merge` (join the JSONL files of sweep shards). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../report/report.h"
#include "../search/search.h"
#include "commands.h"

#define SWEEP_TOP 16        /* candidates simulated by default */
#define COMPARE_TOP 4       /* per space, for compare */
#define EXTRA_ESTIMATED 10  /* best estimates beyond the simulated ones, listed for context */

/* {======================================================== progress */

/* The search's progress (the simulations report theirs from the runner). */
static void search_progress(void *ctx, long long done, long long total)
{
    (void)ctx;
    if (total <= 0) return;
    char wall[32];
    sim_duration(sim_progress_wall_s(), wall, sizeof wall);
    sim_progress_report(done == total, "searched %lld/%lld (%lld %%), %s wall", done, total, 100 * done / total,
                        wall);
}

/* }======================================================== progress */

/* One sweep or compare: its inputs and the request made of the options. */
typedef struct session {
    const cli_args *a;
    cfg_model model;
    cfg_platform platform;
    cfg_band band;                /* the platform's (cli_platform_band) */
    srch_sweep_request rq;
    srch_objective objective;     /* --objective */
    cfg_reliability rel;          /* --objective goodput: the options of the run over days */
    gp_options gp;
    srch_goodput ranked;          /* and its ranking, after the sweep */
} session;

/* Model, platform, base strategy and the request the options make. */
static sim_rc session_load(session *x, const cli_args *a, const char *cmd, int top_default, sim_err *err)
{
    memset(x, 0, sizeof *x);
    x->a = a;
    srch_sweep_request *rq = &x->rq;
    cfg_overrides ov = {a->nsets, a->sets};
    sim_rc rc = cli_load_model_platform(a, &x->model, &x->platform, err);
    if (rc == SIM_OK) rc = cli_platform_band(&x->platform, &x->band, err);
    if (rc != SIM_OK) return rc;
    rq->band = &x->band;
    cfg_strategy *base = &rq->search.base;
    if (a->strategy)
        rc = srch_load_strategy(a->strategy, &ov, base, err);
    else
        rc = srch_base_strategy(&ov, "search", base, err);
    if (rc != SIM_OK) return rc;
    if (a->budget_s > 0 && a->shard_count > 1)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--budget' widens the whole top, not a shard's part (leave out "
                        "'--budget' or '--shard')", cmd);
    if (a->global_batch > 0 && a->global_tokens > 0)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--global-batch' and '--global-tokens' cannot be used together "
                        "(give the batch in sequences or in tokens)", cmd);
    if (a->global_tokens > 0 && a->global_tokens % x->model.seq_len != 0)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--global-tokens %d' is not a multiple of %s's seq_len %d (use a "
                        "multiple of %d)", cmd, a->global_tokens, x->model.name, x->model.seq_len, x->model.seq_len);
    if (a->global_tokens > 0) base->global_batch = a->global_tokens / x->model.seq_len;
    if (a->global_batch > 0) base->global_batch = a->global_batch;
    rq->search.model = &x->model;
    rq->search.platform = &x->platform;
    rq->search.pinned = srch_pins_of_overrides(&ov, base);
    int space = a->space ? sim_enum_value(srch_space_names, SRCH_NSPACES, a->space) : -1;
    int baseline = a->megatron_cp ? sim_enum_value(srch_baseline_names, SRCH_NBASELINES, a->megatron_cp) : -1;
    rq->search.space = space >= 0 ? (srch_space)space : SRCH_SPACE_7D;
    rq->search.baseline = baseline >= 0 ? (srch_baseline)baseline : SRCH_BASELINE_RING;
    rq->search.progress = search_progress;
    rq->overrides = ov;
    rq->engine.symmetry = cli_symmetry(a);
    rq->top = a->top > 0 ? a->top : top_default;
    rq->jobs = cli_jobs(a);
    rq->shard_index = a->shard_index;
    rq->shard_count = a->shard_count;
    rq->out_path = a->out_path;
    rq->resume = a->resume;
    rq->no_cache = a->no_cache;
    rq->budget_s = a->budget_s;
    rq->warn = stderr;
    if ((a->save_best || a->save_top) && a->shard_count > 1)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--%s' with '--shard': a shard sees part of the ranking (merge "
                        "the shards, then run -s ID@MERGED.jsonl)", cmd, a->save_best ? "save-best" : "save-top");
    if (a->resume && !a->out_path)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--resume' needs '--out FILE', the file of the sweep to carry on",
                        cmd);
    int objective = a->objective ? sim_enum_value(srch_objective_names, SRCH_NOBJECTIVES, a->objective) : -1;
    x->objective = objective >= 0 ? (srch_objective)objective : SRCH_OBJ_STEP;
    const char *given = cli_goodput_option_given(a);
    if (x->objective != SRCH_OBJ_GOODPUT && given)
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '%s' needs '--objective goodput' (the candidates ranked by "
                        "goodput)", cmd, given);
    if (x->objective == SRCH_OBJ_GOODPUT) {
        rc = cli_goodput_options(a, cmd, &x->rel, &x->gp, err);
        if (rc == SIM_OK) rc = gp_storage_check(&x->platform, err);
    }
    return rc;
}

/* --objective goodput: the simulated candidates ranked by goodput, the
 * bests picked again (nothing for the step-time objective). */
static sim_rc rank_objective(session *x, srch_sweep *s, sim_err *err)
{
    if (x->objective != SRCH_OBJ_GOODPUT) return SIM_OK;
    return srch_goodput_rank(&x->rq, s, &x->gp, &x->ranked, err);
}

/* --json and --report of a sweep or compare. */
static sim_rc write_outputs(const session *x, const srch_sweep *s, bool compare, sim_err *err)
{
    const cli_args *a = x->a;
    sim_rc rc = SIM_OK;
    bool gp = x->objective == SRCH_OBJ_GOODPUT;
    if (a->json_path) {
        cJSON *doc = compare ? srch_compare_to_json(&x->rq, s) : srch_sweep_to_json(&x->rq, s);
        cJSON_AddStringToObject(doc, "objective", srch_objective_names[x->objective].name);
        if (gp) cJSON_AddItemToObject(doc, "goodput", srch_goodput_to_json(&x->rq, &x->ranked, compare));
        rc = rpt_write_json_doc(a->json_path, doc, "JSON summary", err);
        cJSON_Delete(doc);
    }
    if (rc == SIM_OK && a->csv_path) {
        cJSON *all = srch_sweep_records_json(s);
        rpt_rows_add_overrides(all, &x->rq.overrides);
        const char *columns[160];
        int n = 0;
        for (const char *const *c = rpt_record_csv_columns(); *c && n < 120; c++) columns[n++] = *c;
        for (const char *const *c = rpt_goodput_record_columns; gp && *c && n < 159; c++) columns[n++] = *c;
        columns[n] = NULL;
        if (gp) srch_goodput_add_records(all, &x->ranked);
        rc = rpt_write_csv(a->csv_path, all, columns, "CSV table", err);
        cJSON_Delete(all);
    }
    if (rc == SIM_OK && a->save_best && s->cmp.best) rc = srch_save_strategy(a->save_best, s->cmp.best, err);
    int saved;
    if (rc == SIM_OK && a->save_top) rc = srch_save_top(a->save_top, &s->ranking, &saved, err);
    if (rc == SIM_OK && a->report_path) {
        char title[CFG_TEXT_LEN + 256];
        srch_sweep_title(&x->rq, compare, title, sizeof title);
        rc = cli_write_search_report(a->report_path, s, title, err);
    }
    return rc;
}

sim_rc cli_write_search_report(const char *path, const srch_sweep *s, const char *title, sim_err *err)
{
    cJSON *all = srch_sweep_records_json(s);
    char speedup[256];
    const srch_counts *k = &s->res->counts;
    rpt_sweep_head head = {.title = title,
                           .has_counts = true,
                           .enumerated = k->enumerated,
                           .rejected = k->rejected,
                           .pruned_memory = k->pruned_memory,
                           .estimated = k->estimated,
                           .simulated = s->ranking.simulated,
                           .failed = s->ranking.failed,
                           .megatron_index = s->cmp.megatron ? s->cmp.megatron->index : -1,
                           .best_index = s->cmp.best ? s->cmp.best->index : -1,
                           .speedup = srch_speedup_text(&s->cmp, speedup, sizeof speedup) ? speedup : NULL};
    sim_rc rc = rpt_write_sweep_html(path, all, &head, err);
    cJSON_Delete(all);
    return rc;
}

int cmd_sweep(const cli_args *a)
{
    sim_err err = {{0}};
    session x;
    srch_sweep s = {0};
    sim_rc rc = session_load(&x, a, "sweep", SWEEP_TOP, &err);
    x.rq.extra = EXTRA_ESTIMATED;
    if (rc == SIM_OK) rc = srch_sweep_run(&x.rq, &s, &err);
    sim_progress_clear();
    if (rc != SIM_EINVAL && a->out_path) rpt_skipped_warn(stderr, a->out_path, &s.resumed.skipped);
    if (rc == SIM_OK) rc = rank_objective(&x, &s, &err);
    if (rc == SIM_OK && !a->quiet) srch_print_sweep(cli_summary_stream(a), &x.rq, &s);
    if (rc == SIM_OK && !a->quiet && x.objective == SRCH_OBJ_GOODPUT)
        srch_print_goodput(cli_summary_stream(a), &x.rq, &x.ranked, false);
    if (rc == SIM_OK) rc = write_outputs(&x, &s, false, &err);
    if (rc == SIM_OK) rc = srch_sweep_failures(&x.rq, &s, "sweep", &err);
    srch_goodput_free(&x.ranked);
    srch_sweep_free(&s);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}

int cmd_compare(const cli_args *a)
{
    sim_err err = {{0}};
    session x;
    srch_sweep s = {0};
    sim_rc rc = session_load(&x, a, "compare", COMPARE_TOP, &err);
    if (rc == SIM_OK) rc = srch_compare_run(&x.rq, &s, &err);
    sim_progress_clear();
    if (rc != SIM_EINVAL && a->out_path) rpt_skipped_warn(stderr, a->out_path, &s.resumed.skipped);
    if (rc == SIM_OK) rc = rank_objective(&x, &s, &err);
    if (rc == SIM_OK && !a->quiet) srch_print_compare(cli_summary_stream(a), &x.rq, &s);
    if (rc == SIM_OK && !a->quiet && x.objective == SRCH_OBJ_GOODPUT)
        srch_print_goodput(cli_summary_stream(a), &x.rq, &x.ranked, true);
    if (rc == SIM_OK) rc = write_outputs(&x, &s, true, &err);
    if (rc == SIM_OK) rc = srch_compare_check(&s.cmp, &err);
    if (rc == SIM_OK) rc = srch_sweep_failures(&x.rq, &s, "compare", &err);
    srch_goodput_free(&x.ranked);
    srch_sweep_free(&s);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}

/* Every merged record, in ranked order, to path. */
static sim_rc write_records(const char *path, const srch_ranking *r, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "merged records", err);
    for (int i = 0; i < r->n && rc == SIM_OK; i++) rc = srch_jsonl_write(o.f, path, r->rows[i], err);
    if (rc == SIM_OK) return sim_out_commit(&o, err);
    sim_out_discard(&o);
    return rc;
}

int cmd_merge(const cli_args *a)
{
    sim_err err = {{0}};
    if (a->nfiles < 1) {
        fprintf(stderr, "heptasim merge: give the JSONL files of the sweep shards, e.g. heptasim merge shard-*.jsonl\n");
        return 2;
    }
    srch_merged m;
    sim_rc rc = srch_merge(a->files, a->nfiles, &m, &err);
    if (rc == SIM_OK && m.skipped_path) rpt_skipped_warn(stderr, m.skipped_path, &m.skipped);
    if (rc == SIM_OK && !a->quiet) srch_print_merge(cli_summary_stream(a), &m, a->nfiles);
    if (rc == SIM_OK && a->out_path) rc = write_records(a->out_path, &m.ranking, &err);
    if (rc == SIM_OK && a->json_path) {
        cJSON *doc = srch_merge_to_json(&m, a->files, a->nfiles);
        rc = rpt_write_json_doc(a->json_path, doc, "JSON summary", &err);
        cJSON_Delete(doc);
    }
    srch_merged_free(&m);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
