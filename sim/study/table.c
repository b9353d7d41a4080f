/* table.c - the rows of a study's tables, one per cell (its definition,
 * state, both bests, speed-up and reason), handed to report/study.c,
 * which writes study.csv and study.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A cell's row and the text and records it points into. */
typedef struct cell_row {
    char model_stem[CFG_NAME_LEN], platform_stem[CFG_NAME_LEN], command[2048];
    rpt_record megatron, best;
} cell_row;

/* What report calls the states (ORDER stdy_state). */
static const char *const state_names[] = {"not run", "done", "done", "failed"};
_Static_assert(sizeof state_names / sizeof *state_names == STDY_FAILED + 1, "one name per state");

/* The rows of the study's cells into rows, their storage in keep. */
static void fill_rows(const stdy_study *st, const stdy_result *r, rpt_study_row *rows, cell_row *keep)
{
    for (int i = 0; i < st->ncells; i++) {
        const stdy_row *w = &r->rows[i];
        const stdy_cell *c = w->cell;
        cell_row *k = &keep[i];
        stdy_stem(c->model_name, k->model_stem, sizeof k->model_stem);
        stdy_stem(c->platform_name, k->platform_stem, sizeof k->platform_stem);
        stdy_cell_command(st, c, k->command, sizeof k->command);
        bool ok = w->state == STDY_RAN || w->state == STDY_SKIPPED;
        if (ok && w->has_megatron) srch_candidate_record(&w->megatron, &k->megatron);
        if (ok && w->has_best) srch_candidate_record(&w->best, &k->best);
        rows[i] = (rpt_study_row){
            .cell = c->slug,
            .sensitivity = i >= st->nmain,
            .model = c->model.name,
            .platform = c->platform.name,
            .devices = c->platform.devices,
            .seq_len = c->seq_len,
            .global_batch = c->global_batch,
            .hbm_gib = c->hbm_gib,
            .megatron_cp = srch_baseline_name(c->baseline),
            .study_model = k->model_stem,
            .study_platform = k->platform_stem,
            .command = k->command,
            .axis = c->axis,
            .axis_value = c->axis_value,
            .axis_factor = c->axis_factor,
            .state = state_names[w->state],
            .megatron = ok && w->has_megatron ? &k->megatron : NULL,
            .best = ok && w->has_best ? &k->best : NULL,
            .speedup = w->speedup,
            .reason = ok ? w->reason : NULL,
            .seven_d_keys = ok ? w->keys : NULL,
            .error = w->state == STDY_FAILED ? w->error : NULL,
        };
    }
}

/* The rows of the study, to free with free(*keep) and free(return). */
static rpt_study_row *study_rows(const stdy_study *st, const stdy_result *r, cell_row **keep)
{
    rpt_study_row *rows = sim_xcalloc((size_t)st->ncells + 1, sizeof *rows);
    *keep = sim_xcalloc((size_t)st->ncells + 1, sizeof **keep);
    fill_rows(st, r, rows, *keep);
    return rows;
}

void *stdy_rows_json(const stdy_study *st, const stdy_result *r)
{
    cell_row *keep;
    rpt_study_row *rows = study_rows(st, r, &keep);
    void *arr = rpt_study_rows_json(rows, st->ncells);
    free(rows);
    free(keep);
    return arr;
}

sim_rc stdy_write_markdown(const char *path, const stdy_study *st, const stdy_result *r, const char *command,
                           sim_err *err)
{
    cell_row *keep;
    rpt_study_row *rows = study_rows(st, r, &keep);
    rpt_study_doc d = {st->name, st->description, command, st->top, eng_symmetry_name(st->symmetry), rows,
                       st->ncells};
    sim_rc rc = rpt_write_study_markdown(path, &d, err);
    free(rows);
    free(keep);
    return rc;
}
