/* table.c - the rows of a study's tables, one per cell: its definition,
 * state, both bests as sweep records, speed-up and reason; study.csv's
 * columns of them, and the document report/study.c renders as study.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* {----------------------------------------------------------- the CSV */

/* A side's best: its record (srch_record_to_json), or an empty object. */
static cJSON *best_json(bool has, const srch_candidate *c)
{
    return has ? srch_record_to_json(c) : cJSON_CreateObject();
}

void *stdy_rows_json(const stdy_study *st, const stdy_result *r)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < st->ncells; i++) {
        const stdy_row *w = &r->rows[i];
        const stdy_cell *c = w->cell;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "cell", c->slug);
        cJSON_AddStringToObject(o, "part", i < st->nmain ? "main" : "sensitivity");
        cJSON_AddStringToObject(o, "model", c->model.name);
        cJSON_AddStringToObject(o, "platform", c->platform.name);
        cJSON_AddNumberToObject(o, "devices", c->platform.devices);
        cJSON_AddNumberToObject(o, "seq_len", c->seq_len);
        cJSON_AddNumberToObject(o, "global_batch", (double)c->global_batch);
        cJSON_AddNumberToObject(o, "hbm_GiB", c->hbm_gib);
        cJSON_AddStringToObject(o, "megatron_cp", srch_baseline_name(c->baseline));
        char stem[CFG_NAME_LEN], command[2048];
        stdy_stem(c->model_name, stem, sizeof stem);
        cJSON_AddStringToObject(o, "study_model", stem);
        stdy_stem(c->platform_name, stem, sizeof stem);
        cJSON_AddStringToObject(o, "study_platform", stem);
        stdy_cell_command(st, c, command, sizeof command);
        cJSON_AddStringToObject(o, "command", command);
        if (c->axis[0]) {
            cJSON_AddStringToObject(o, "axis", c->axis);
            cJSON_AddNumberToObject(o, "axis_value", c->axis_value);
            if (c->axis_factor > 0) cJSON_AddNumberToObject(o, "axis_factor", c->axis_factor);
        }
        static const char *const states[] = {"not run", "done", "done", "failed"}; /* ORDER stdy_state */
        cJSON_AddStringToObject(o, "state", states[w->state]);
        bool ok = w->state == STDY_RAN || w->state == STDY_SKIPPED;
        cJSON_AddItemToObject(o, "megatron", best_json(ok && w->has_megatron, &w->megatron));
        cJSON_AddItemToObject(o, "7d", best_json(ok && w->has_best, &w->best));
        if (ok && isfinite(w->speedup)) cJSON_AddNumberToObject(o, "speedup", w->speedup);
        if (ok) cJSON_AddStringToObject(o, "reason", w->reason);
        if (ok) cJSON_AddStringToObject(o, "seven_d_keys", w->keys);
        if (w->state == STDY_FAILED) cJSON_AddStringToObject(o, "error", w->error);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

#define BEST_COLUMNS(side)                                                                                            \
    side ".strategy.description", side ".index", side ".step_time_s", side ".mfu", side ".memory.peak_bytes",       \
        side ".breakdown.compute_s", side ".breakdown.bubble_s", side ".breakdown.optimizer_s",                       \
        side ".dimensions.tp.exposed_s", side ".dimensions.cp.exposed_s", side ".dimensions.ep.exposed_s",            \
        side ".dimensions.dp.exposed_s", side ".dimensions.pp.exposed_s"

const char *const stdy_csv_columns[] = {
    "cell", "part", "model", "platform", "devices", "seq_len", "global_batch", "hbm_GiB", "megatron_cp", "axis",
    "axis_factor", "axis_value", "state", BEST_COLUMNS("megatron"), BEST_COLUMNS("7d"), "speedup", "reason",
    "seven_d_keys", "error", NULL};

/* }----------------------------------------------------------- the CSV */

sim_rc stdy_write_markdown(const char *path, const stdy_study *st, const stdy_result *r, const char *command,
                           sim_err *err)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "name", st->name);
    cJSON_AddStringToObject(doc, "description", st->description);
    if (command) cJSON_AddStringToObject(doc, "command", command);
    cJSON_AddNumberToObject(doc, "top", st->top);
    cJSON_AddStringToObject(doc, "symmetry", eng_symmetry_name(st->symmetry));
    cJSON_AddItemToObject(doc, "cells", stdy_rows_json(st, r));
    sim_rc rc = rpt_write_study_markdown(path, doc, err);
    cJSON_Delete(doc);
    return rc;
}
