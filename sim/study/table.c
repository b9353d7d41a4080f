/* table.c - the tables of a study: study.md (the main grid, the
 * sensitivity cells, the cells where the 7D best is more than 5 % faster,
 * each cell's breakdown) and the rows and columns of study.csv. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void md_strategy(FILE *f, bool has, const srch_candidate *c)
{
    if (!has) {
        fprintf(f, " none fits | - | - | - |");
        return;
    }
    char s[CFG_TEXT_LEN];
    cfg_strategy_compact(&c->strategy, s, sizeof s);
    fprintf(f, " `%s` | %.3f | %.1f%% | %.1f |", s, c->step_time_s, 100 * c->mfu, c->peak_bytes / SIM_GIB);
}

static void md_row(FILE *f, const stdy_row *r, bool stdy_axis)
{
    const stdy_cell *c = r->cell;
    char m[CFG_NAME_LEN], p[CFG_NAME_LEN];
    stdy_stem(c->model_name, m, sizeof m);
    stdy_stem(c->platform_name, p, sizeof p);
    fprintf(f, "| %s | %s (%d) | %dK | %lld | %.4g | %s |", m, p, c->platform.devices, c->seq_len / 1024,
            c->global_batch, c->hbm_gib, srch_baseline_name(c->baseline));
    if (stdy_axis) {
        if (c->axis_factor > 0)
            fprintf(f, " %s x%.3g (%.6g) |", c->axis, c->axis_factor, c->axis_value);
        else
            fprintf(f, " %s = %.6g |", c->axis, c->axis_value);
    }
    if (r->state != STDY_RAN && r->state != STDY_SKIPPED) {
        fprintf(f, " %s | | | | | | | | | |\n", r->state == STDY_FAILED ? "failed" : "not run");
        return;
    }
    md_strategy(f, r->has_megatron, &r->megatron);
    md_strategy(f, r->has_best, &r->best);
    if (isfinite(r->speedup))
        fprintf(f, " %.3fx |", r->speedup);
    else
        fprintf(f, " - |");
    fprintf(f, " %s%s%s |\n", r->reason, r->keys[0] ? "; 7D keys: " : "", r->keys);
}

static const char *const dims[WL_NDIMS] = {"TP", "CP", "EP", "DP", "PP"};

static void md_breakdown(FILE *f, const stdy_study *st, const stdy_row *r)
{
    const srch_candidate *c[2] = {r->has_megatron ? &r->megatron : NULL, r->has_best ? &r->best : NULL};
    fprintf(f, "\n### %s\n\n", r->cell->slug);
    char cmd[2048];
    stdy_cell_command(st, r->cell, cmd, sizeof cmd);
    fprintf(f, "`%s`\n\n| | Megatron-style best | 7D best |\n|---|---|---|\n", cmd);
    char s[2][CFG_TEXT_LEN];
    for (int k = 0; k < 2; k++) {
        if (c[k])
            cfg_strategy_compact(&c[k]->strategy, s[k], sizeof s[k]);
        else
            sim_strlcpy(s[k], "none fits", sizeof s[k]);
    }
    fprintf(f, "| strategy | `%s` | `%s` |\n", s[0], s[1]);
#define ROW(label, fmt, ...)                                                                                          \
    do {                                                                                                              \
        fprintf(f, "| %s |", label);                                                                                  \
        for (int k = 0; k < 2; k++) {                                                                                 \
            if (c[k])                                                                                                 \
                fprintf(f, " " fmt " |", __VA_ARGS__);                                                                     \
            else                                                                                                      \
                fprintf(f, " - |");                                                                                   \
        }                                                                                                             \
        fprintf(f, "\n");                                                                                             \
    } while (0)
    ROW("step time (simulated)", "%.4f s", c[k]->step_time_s);
    ROW("MFU", "%.1f %%", 100 * c[k]->mfu);
    ROW("memory, peak stage", "%.1f GiB", c[k]->peak_bytes / SIM_GIB);
    ROW("memory, usable", "%.1f GiB", c[k]->capacity_bytes / SIM_GIB);
    ROW("compute (critical rank)", "%.4f s", c[k]->compute_s);
    ROW("pipeline bubble", "%.4f s", c[k]->bubble_s);
    ROW("optimizer", "%.4f s", c[k]->optimizer_s);
    for (int d = 0; d < WL_NDIMS; d++) {
        char label[48];
        snprintf(label, sizeof label, "%s comm exposed (in flight)", dims[d]);
        ROW(label, "%.4f s (%.4f s)", c[k]->exposed_s[d], c[k]->comm_s[d]);
    }
#undef ROW
}

sim_rc stdy_write_markdown(const char *path, const stdy_study *st, const stdy_result *r,
                                 const char *command, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "study table", err);
    if (rc != SIM_OK) return rc;
    FILE *f = o.f;
    fprintf(f, "# Study %s\n\n", st->name);
    if (st->description[0]) fprintf(f, "%s\n\n", st->description);
    if (command) fprintf(f, "Regenerate with `%s` (inputs/ holds a copy of the study file, models and platforms).\n\n",
                         command);
    fprintf(f,
            "Each cell is one `heptasim compare`: the best %d estimates of the 7D space and of its Megatron-style "
            "part simulated (symmetry %s), the fastest of each side reported. Step times in seconds; memory is the "
            "peak stage's, in GiB; the speed-up is the Megatron-style step over the 7D step. The last column names "
            "the component the 7D best saves most on and the keys behind it, then the keys the baseline lacks.\n\n",
            st->top, st->symmetry == ENG_SYM_DP ? "dp: one data-parallel replica stands for all" :
                     st->symmetry == ENG_SYM_NONE ? "none" : "tp");
    static const char head[] = " Megatron-style best | step | MFU | GiB | 7D best | step | MFU | GiB | speed-up | what "
                               "makes the difference |\n";
    fprintf(f, "| model | platform (devices) | seq | batch | HBM GiB | baseline CP |%s", head);
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < st->nmain; i++) md_row(f, &r->rows[i], false);
    if (st->ncells > st->nmain) {
        fprintf(f, "\n## Sensitivity\n\nOne platform key changed at a time.\n\n");
        fprintf(f, "| model | platform (devices) | seq | batch | HBM GiB | baseline CP | key |%s", head);
        fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int i = st->nmain; i < st->ncells; i++) md_row(f, &r->rows[i], true);
    }
    int fast = 0, have = 0;
    for (int i = 0; i < st->ncells; i++) {
        have += r->rows[i].state == STDY_RAN || r->rows[i].state == STDY_SKIPPED;
        fast += isfinite(r->rows[i].speedup) && r->rows[i].speedup > STDY_FAST_GAIN;
    }
    fprintf(f, "\n## Where the 7D best is more than 5 %% faster\n\n");
    if (fast == 0) fprintf(f, "In none of the %d cells with results.\n", have);
    for (int i = 0; i < st->ncells; i++) {
        const stdy_row *w = &r->rows[i];
        if (isfinite(w->speedup) && w->speedup > STDY_FAST_GAIN)
            fprintf(f, "- %s: %.3fx (%s%s%s)\n", w->cell->slug, w->speedup, w->reason, w->keys[0] ? "; " : "",
                    w->keys);
    }
    fprintf(f, "\n## Breakdown per cell\n");
    for (int i = 0; i < st->ncells; i++)
        if (r->rows[i].state == STDY_RAN || r->rows[i].state == STDY_SKIPPED) md_breakdown(f, st, &r->rows[i]);
    return sim_out_commit(&o, err);
}

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
