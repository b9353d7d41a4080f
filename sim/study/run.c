/* run.c - a study run: each cell one srch_compare_run with its own records
 * file (cells/SLUG.jsonl, so an interrupted cell resumes as compare does)
 * and, once finished, its JSON summary (cells/SLUG.json), which holds the
 * cell's definition under "study_cell" (that object, and the bests read
 * back from a summary, are report/study.c's).  A rerun with resume skips a cell
 * whose summary holds the same definition; the shards of a study write
 * disjoint cells into one folder, and a last run with resume finds them all
 * finished and writes the table.  A run of some cells alone (their slugs'
 * patterns) with resume writes the table of every cell finished so far,
 * the others "not run".  A cell and its twin (the same cell under the
 * other CP baseline) share one search and the simulations they have in
 * common. */
#include <fnmatch.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The definition of a cell that its summary stores and a resume compares
 * (rpt_cell_def_json): the loaded model and platform, the batch, the
 * baseline and the search budget; without the slug and the baseline when
 * named is false. */
static cJSON *cell_json(const stdy_study *st, const stdy_cell *c, bool named)
{
    const char *sets[STDY_MAX_SETS];
    for (int i = 0; i < c->nsets; i++) sets[i] = c->sets[i];
    rpt_cell_def d = {named ? c->slug : NULL, &c->model, &c->platform, c->global_batch, &c->base, c->pinned,
                      named ? srch_baseline_name(c->baseline) : NULL, st->top, eng_symmetry_name(st->symmetry), sets,
                      c->nsets};
    return rpt_cell_def_json(&d);
}

/* The speed-up's error from the cell's band when its summary has none
 * (summaries written before the bands): the band is the platform's, not
 * the search's. */
static void speedup_band(const stdy_cell *c, rpt_speedup *s)
{
    if (s->exceeds >= 0 || c->band.pair_error <= 0 || !isfinite(s->ratio)) return;
    s->error = c->band.pair_error;
    s->exceeds = srch_ratio_sure(&c->band, s->ratio);
}

/* The summary of a finished cell, when it holds definition def: its row
 * filled, true.  False when there is none, or another definition. */
static bool finished(const char *path, const cJSON *def, stdy_row *row)
{
    rpt_record m, b;
    if (!rpt_cell_summary_read(path, def, srch_space_names, SRCH_NSPACES, &m, &row->has_megatron, &b, &row->has_best,
                               &row->speedup))
        return false;
    if (row->has_megatron) srch_candidate_from_record(&m, &row->megatron);
    if (row->has_best) srch_candidate_from_record(&b, &row->best);
    return true;
}

/* The cell of the study that differs from cell i in its baseline alone
 * (the same search, so its simulations are this cell's: srch_borrow), or
 * -1. */
static int twin_of(const stdy_study *st, int i)
{
    cJSON *mine = cell_json(st, &st->cells[i], false);
    int twin = -1;
    for (int j = 0; j < st->ncells && twin < 0; j++) {
        if (st->cells[j].baseline == st->cells[i].baseline) continue;
        cJSON *other = cell_json(st, &st->cells[j], false);
        if (cJSON_Compare(mine, other, true)) twin = j;
        cJSON_Delete(other);
    }
    cJSON_Delete(mine);
    return twin;
}

/* What a cell shares with its twin: the twin's records to borrow from,
 * the twin's search when it ran just before (taken over), and whether to
 * keep the twin's list for the twin to run next. */
typedef struct twin_share {
    const char *records;          /* NULL: no twin */
    srch_result *searched;        /* NULL: search */
    bool keep;
    srch_result *for_twin;        /* out (keep): the twin's search, srch_result_twin */
} twin_share;

/* The cell's compare, its summary and report written through the hook. */
static sim_rc run_cell(const stdy_run_request *rq, const stdy_cell *c, const char *records,
                       twin_share *tw, const char *json_path, const char *html_path, const cJSON *def,
                       stdy_row *row, sim_err *err)
{
    srch_sweep_request q;
    memset(&q, 0, sizeof q);
    q.search.base = c->base;
    q.search.pinned = c->pinned;
    q.search.model = &c->model;
    q.search.platform = &c->platform;
    q.search.space = SRCH_SPACE_7D;
    q.search.baseline = c->baseline;
    q.top = rq->study->top;
    q.jobs = rq->jobs > 0 ? rq->jobs : 1;
    q.engine.symmetry = rq->study->symmetry;
    q.band = c->band.error > 0 || c->band.pair_error > 0 ? &c->band : NULL;
    q.out_path = records;
    q.resume = rq->resume;
    q.twin_path = tw->records;
    q.searched = tw->searched;
    tw->searched = NULL; /* the compare's now */
    q.search.twin_too = tw->keep;
    srch_sweep s;
    memset(&s, 0, sizeof s);
    double t0 = sim_now_s();
    sim_rc rc = srch_compare_run(&q, &s, err);
    if (rc == SIM_OK) rc = srch_sweep_failures(&q, &s, "study", err);
    row->wall_s = sim_now_s() - t0;
    row->borrowed = s.resumed.borrowed;
    row->resumed = s.resumed.resumed;
    row->search_from_twin = s.res && s.res->from_twin;
    if (tw->keep && s.res && rc != SIM_EINTR) tw->for_twin = srch_result_twin(s.res, &c->platform);
    row->simulated = s.ranking.simulated - s.resumed.resumed - s.resumed.borrowed;
    if (rc == SIM_OK) {
        cJSON *doc = srch_compare_to_json(&q, &s);
        cJSON_AddItemToObject(doc, "study_cell", cJSON_Duplicate(def, 1));
        char title[512], base[256];
        srch_sweep_title(&q, true, base, sizeof base);
        char ax[160] = "";
        if (c->axis[0]) snprintf(ax, sizeof ax, ", %s = %.6g", c->axis, c->axis_value);
        snprintf(title, sizeof title, "%s, sequence %d, %lld sequences, HBM %.4g GiB, %s CP baseline%s", base,
                 c->seq_len, c->global_batch, c->hbm_gib, srch_baseline_name(c->baseline), ax);
        rc = rq->write_cell(rq->ctx, json_path, doc, html_path, &s, title, err);
        if (rc == SIM_OK) {
            rpt_record m, b;
            rc = rpt_compare_doc_bests(doc, json_path, srch_space_names, SRCH_NSPACES, &m, &row->has_megatron, &b,
                                       &row->has_best, &row->speedup, err);
            if (rc == SIM_OK && row->has_megatron) srch_candidate_from_record(&m, &row->megatron);
            if (rc == SIM_OK && row->has_best) srch_candidate_from_record(&b, &row->best);
            speedup_band(c, &row->speedup);
        }
        cJSON_Delete(doc);
    }
    srch_sweep_free(&s);
    return rc;
}

bool stdy_cell_chosen(const char *patterns, const char *slug)
{
    if (!patterns) return true;
    for (const char *p = patterns; *p;) {
        size_t n = strcspn(p, ",");
        char one[SIM_ERR_LEN];
        if (n > 0 && n < sizeof one) {
            memcpy(one, p, n);
            one[n] = '\0';
            if (fnmatch(one, slug, 0) == 0) return true;
        }
        p += n;
        if (*p == ',') p++;
    }
    return false;
}

sim_rc stdy_run(const stdy_run_request *rq, stdy_result *out, sim_err *err)
{
    const stdy_study *st = rq->study;
    memset(out, 0, sizeof *out);
    out->rows = sim_xcalloc((size_t)st->ncells + 1, sizeof *out->rows);
    out->nrows = st->ncells;
    char cells[CFG_PATH_LEN];
    sim_rc rc = stdy_mkdir_p(rq->out_dir, err);
    if (rc == SIM_OK) rc = stdy_join(cells, sizeof cells, rq->out_dir, "cells", err);
    if (rc == SIM_OK) rc = stdy_mkdir_p(cells, err);
    if (rc == SIM_OK) rc = stdy_copy_inputs(st, rq->out_dir, err);
    if (rc == SIM_OK && rq->command) rc = stdy_write_command(rq->out_dir, rq->command, err);
    double t0 = sim_now_s();
    int mine = 0;
    bool *chosen = sim_xcalloc((size_t)st->ncells + 1, sizeof *chosen);
    for (int i = 0; i < st->ncells; i++) {
        chosen[i] = (rq->shard_count <= 1 || i % rq->shard_count == rq->shard_index) &&
                    stdy_cell_chosen(rq->cells, st->cells[i].slug);
        mine += chosen[i];
    }
    int done = 0;
    srch_result *pending = NULL; /* the search of the cell pending_for, run by its twin */
    int pending_for = -1;
    for (int i = 0; i < st->ncells && rc == SIM_OK; i++) {
        const stdy_cell *c = &st->cells[i];
        stdy_row *row = &out->rows[i];
        row->cell = c;
        twin_share tw = {NULL, pending_for == i ? pending : NULL, false, NULL};
        if (pending_for == i) pending = NULL;
        if (!chosen[i] && !(rq->cells && rq->resume)) {
            srch_result_free(tw.searched);
            continue; /* another shard's, or not named */
        }
        char stemp[CFG_PATH_LEN + 8], records[CFG_PATH_LEN], json[CFG_PATH_LEN], html[CFG_PATH_LEN];
        char twin[CFG_PATH_LEN] = "";
        snprintf(stemp, sizeof stemp, "%s.jsonl", c->slug);
        rc = stdy_join(records, sizeof records, cells, stemp, err);
        int t = chosen[i] ? twin_of(st, i) : -1;
        if (t >= 0) snprintf(stemp, sizeof stemp, "%s.jsonl", st->cells[t].slug);
        if (rc == SIM_OK && t >= 0) rc = stdy_join(twin, sizeof twin, cells, stemp, err);
        snprintf(stemp, sizeof stemp, "%s.json", c->slug);
        if (rc == SIM_OK) rc = stdy_join(json, sizeof json, cells, stemp, err);
        snprintf(stemp, sizeof stemp, "%s.html", c->slug);
        if (rc == SIM_OK) rc = stdy_join(html, sizeof html, cells, stemp, err);
        if (rc != SIM_OK) {
            srch_result_free(tw.searched);
            break;
        }
        tw.records = t >= 0 ? twin : NULL;
        tw.keep = t > i && chosen[t]; /* the twin runs next: search for it too */
        cJSON *def = cell_json(st, c, true);
        done += chosen[i];
        /* a cell not named is in the table if it finished earlier */
        if ((rq->resume || !chosen[i]) && finished(json, def, row)) {
            speedup_band(c, &row->speedup);
            row->state = STDY_SKIPPED;
            out->skipped++;
            if (chosen[i] && rq->log)
                fprintf(rq->log, "study: [%d/%d] %s: finished earlier, skipped\n", done, mine, c->slug);
        } else if (chosen[i]) {
            if (rq->log) {
                fprintf(rq->log, "study: [%d/%d] %s ...\n", done, mine, c->slug);
                fflush(rq->log);
            }
            sim_err why = {{0}};
            sim_rc crc = run_cell(rq, c, records, &tw, json, html, def, row, &why);
            pending = tw.for_twin;
            pending_for = pending ? t : -1;
            if (crc == SIM_EINTR || crc == SIM_ENOMEM) {
                rc = crc;
                *err = why;
            } else if (crc != SIM_OK) {
                row->state = STDY_FAILED;
                sim_strlcpy(row->error, why.msg, sizeof row->error);
                out->failed++;
                if (rq->log) fprintf(rq->log, "study: [%d/%d] %s: failed: %s\n", done, mine, c->slug, why.msg);
            } else {
                row->state = STDY_RAN;
                out->ran++;
                char took[160] = "", kept[40] = "", lent[48] = "";
                if (row->resumed > 0) snprintf(kept, sizeof kept, ", %d from its records", row->resumed);
                if (row->borrowed > 0 || row->search_from_twin)
                    snprintf(lent, sizeof lent, ", %d borrowed from the %s twin", row->borrowed,
                             srch_baseline_name(st->cells[t].baseline));
                if (kept[0] || lent[0])
                    snprintf(took, sizeof took, " (%s%d simulated%s%s)", row->search_from_twin ? "its twin's search, " : "",
                             row->simulated, kept, lent);
                if (rq->log)
                    fprintf(rq->log, "study: [%d/%d] %s: speed-up %.3fx in %.0f s%s\n", done, mine, c->slug,
                            row->speedup.ratio, row->wall_s, took);
            }
        }
        srch_result_free(tw.searched); /* the cell did not run: its twin's search is not needed */
        cJSON_Delete(def);
        if (rq->log) fflush(rq->log);
        if (row->state == STDY_RAN || row->state == STDY_SKIPPED) {
            row->reason[0] = row->keys[0] = '\0';
            stdy_explain(row, &c->platform);
        }
    }
    srch_result_free(pending);
    free(chosen);
    out->wall_s = sim_now_s() - t0;
    return rc;
}

void stdy_result_free(stdy_result *r)
{
    if (!r) return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}
