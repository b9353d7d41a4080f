/* study.c - the tables of a study from the rows the study module hands
 * over (study/table.c): study.csv's rows and columns, and study.md, the
 * Markdown table: the main grid, the sensitivity cells, the cells where the
 * 7D best is more than 5 % faster, and each cell's breakdown side by side.
 * study.md is rendered from the rows of study.csv; each side's best is its
 * sweep record. */
#define _DEFAULT_SOURCE /* stat */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../config/keys.h"

#define FAST_GAIN 1.05 /* a speed-up the summary lists ("more than 5 %") */

/* {----------------------------------------------------------- the CSV */

/* A side's best: its record, or an empty object. */
static cJSON *best_json(const rpt_record *r)
{
    return r ? rpt_record_to_json(r) : cJSON_CreateObject();
}

void *rpt_study_rows_json(const rpt_study_row *rows, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const rpt_study_row *w = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "cell", w->cell);
        cJSON_AddStringToObject(o, "part", w->sensitivity ? "sensitivity" : "main");
        cJSON_AddStringToObject(o, "model", w->model);
        cJSON_AddStringToObject(o, "platform", w->platform);
        cJSON_AddNumberToObject(o, "devices", w->devices);
        cJSON_AddNumberToObject(o, "seq_len", w->seq_len);
        cJSON_AddNumberToObject(o, "global_batch", (double)w->global_batch);
        cJSON_AddNumberToObject(o, "hbm_GiB", w->hbm_gib);
        cJSON_AddStringToObject(o, "megatron_cp", w->megatron_cp);
        cJSON_AddStringToObject(o, "study_model", w->study_model);
        cJSON_AddStringToObject(o, "study_platform", w->study_platform);
        cJSON_AddStringToObject(o, "command", w->command);
        if (w->axis[0]) {
            cJSON_AddStringToObject(o, "axis", w->axis);
            cJSON_AddNumberToObject(o, "axis_value", w->axis_value);
            if (w->axis_factor > 0) cJSON_AddNumberToObject(o, "axis_factor", w->axis_factor);
        }
        cJSON_AddStringToObject(o, "state", w->state);
        bool done = w->reason != NULL;
        cJSON_AddItemToObject(o, "megatron", best_json(w->megatron));
        cJSON_AddItemToObject(o, "7d", best_json(w->best));
        if (done && isfinite(w->speedup.ratio)) cJSON_AddNumberToObject(o, "speedup", w->speedup.ratio);
        if (done && isfinite(w->speedup.error)) cJSON_AddNumberToObject(o, "speedup_error", w->speedup.error);
        if (done && w->speedup.exceeds >= 0) cJSON_AddBoolToObject(o, "speedup_exceeds_error", w->speedup.exceeds);
        if (done) cJSON_AddStringToObject(o, "reason", w->reason);
        if (done) cJSON_AddStringToObject(o, "seven_d_keys", w->seven_d_keys);
        if (w->error) cJSON_AddStringToObject(o, "error", w->error);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

#define BEST_COLUMNS(side)                                                                                            \
    side ".strategy.description", side ".index", side ".step_time_s", side ".mfu", side ".memory.peak_bytes",       \
        side ".breakdown.compute_s", side ".breakdown.bubble_s", side ".breakdown.optimizer_s",                       \
        side ".dimensions.tp.exposed_s", side ".dimensions.cp.exposed_s", side ".dimensions.ep.exposed_s",            \
        side ".dimensions.dp.exposed_s", side ".dimensions.pp.exposed_s"

const char *const rpt_study_csv_columns[] = {
    "cell", "part", "model", "platform", "devices", "seq_len", "global_batch", "hbm_GiB", "megatron_cp", "axis",
    "axis_factor", "axis_value", "state", BEST_COLUMNS("megatron"), BEST_COLUMNS("7d"), "speedup", "speedup_error",
    "speedup_exceeds_error", "reason",
    "seven_d_keys", "error", NULL};

/* }----------------------------------------------------------- the CSV */

/* {----------------------------------------------------------- the cells */

void *rpt_cell_def_json(const rpt_cell_def *d)
{
    cfg_model m = *d->model;
    m.description[0] = m.path[0] = '\0';
    cfg_platform p = *d->platform;
    p.description[0] = p.path[0] = '\0';
    cfg_platform_drop_band_records(&p);
    cJSON *o = cJSON_CreateObject();
    if (d->slug) cJSON_AddStringToObject(o, "slug", d->slug);
    cJSON_AddItemToObject(o, "model", cfg_model_to_json(&m));
    cJSON_AddItemToObject(o, "platform", cfg_platform_to_json(&p));
    cJSON_AddNumberToObject(o, "global_batch", (double)d->global_batch);
    cJSON_AddItemToObject(o, "base", cfg_strategy_fingerprint_json(d->base));
    cJSON_AddNumberToObject(o, "pinned", d->pinned);
    if (d->megatron_cp) cJSON_AddStringToObject(o, "megatron_cp", d->megatron_cp);
    cJSON_AddNumberToObject(o, "top", d->top);
    cJSON_AddStringToObject(o, "symmetry", d->symmetry);
    cJSON *sets = cJSON_AddArrayToObject(o, "set");
    for (int i = 0; i < d->nsets; i++) cJSON_AddItemToArray(sets, cJSON_CreateString(d->sets[i]));
    return o;
}

sim_rc rpt_compare_doc_bests(const void *doc, const char *origin, const sim_enum_name *spaces, int nspaces,
                             rpt_record *megatron, bool *has_megatron, rpt_record *best, bool *has_best,
                             rpt_speedup *speedup, sim_err *err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "megatron"), *b = cJSON_GetObjectItemCaseSensitive(doc, "7d");
    sim_rc rc = SIM_OK;
    *has_megatron = m && cJSON_IsObject(m);
    *has_best = b && cJSON_IsObject(b);
    if (*has_megatron) rc = rpt_record_from_json(m, origin, spaces, nspaces, megatron, err);
    if (rc == SIM_OK && *has_best) rc = rpt_record_from_json(b, origin, spaces, nspaces, best, err);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "speedup"),
                *e = cJSON_GetObjectItemCaseSensitive(doc, "speedup_error"),
                *x = cJSON_GetObjectItemCaseSensitive(doc, "speedup_exceeds_error");
    speedup->ratio = cJSON_IsNumber(s) ? s->valuedouble : NAN;
    speedup->error = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    speedup->exceeds = cJSON_IsBool(x) ? cJSON_IsTrue(x) : -1;
    return rc;
}

bool rpt_cell_summary_read(const char *path, const void *def, const sim_enum_name *spaces, int nspaces,
                           rpt_record *megatron, bool *has_megatron, rpt_record *best, bool *has_best,
                           rpt_speedup *speedup)
{
    char *text = NULL;
    sim_err quiet;
    struct stat sb;
    if (stat(path, &sb) != 0 || sim_read_text(path, CFG_MAX_RECORDS_BYTES, "cell summary", &text, &quiet) != SIM_OK)
        return false;
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *have = doc ? cJSON_GetObjectItemCaseSensitive(doc, "study_cell") : NULL;
    bool same = have && cJSON_Compare(have, def, 1) &&
                rpt_compare_doc_bests(doc, path, spaces, nspaces, megatron, has_megatron, best, has_best, speedup,
                                      &quiet) == SIM_OK;
    cJSON_Delete(doc);
    return same;
}

/* }----------------------------------------------------------- the cells */

static double num(const cJSON *o, const char *path)
{
    const cJSON *v = cfg_json_at(o, path);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* A side's best: its record, or NULL when the side has none. */
static const cJSON *best_of(const cJSON *row, const char *side)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(row, side);
    return cJSON_IsObject(b) && b->child ? b : NULL;
}

static bool has_results(const cJSON *row)
{
    return strcmp(text(row, "state"), "done") == 0;
}

static void md_strategy(FILE *f, const cJSON *best)
{
    if (!best) {
        fprintf(f, " none fits | - | - | - |");
        return;
    }
    char s[CFG_TEXT_LEN];
    rpt_record_strategy_text(cJSON_GetObjectItemCaseSensitive(best, "strategy"), s, sizeof s);
    fprintf(f, " `%s` | %.3f | %.1f%% | %.1f |", s, num(best, "step_time_s"), 100 * num(best, "mfu"),
            num(best, "memory.peak_bytes") / SIM_GIB);
}

/* The speed-up, and whether it is larger than the band of a ratio on the
 * platform allows (CFG_SURE_SIGMAS x its error). */
static void md_speedup(FILE *f, const cJSON *row)
{
    double speedup = num(row, "speedup"), error = num(row, "speedup_error");
    const cJSON *sure = cJSON_GetObjectItemCaseSensitive(row, "speedup_exceeds_error");
    if (!isfinite(speedup))
        fprintf(f, " - |");
    else if (!isfinite(error) || !cJSON_IsBool(sure))
        fprintf(f, " %.3fx |", speedup);
    else
        fprintf(f, " %.3fx, %s +-%.1f %% |", speedup, cJSON_IsTrue(sure) ? "beyond" : "within",
                100 * CFG_SURE_SIGMAS * error);
}

static void md_row(FILE *f, const cJSON *row, bool axis)
{
    fprintf(f, "| %s | %s (%.0f) | %dK | %.0f | %.4g | %s |", text(row, "study_model"), text(row, "study_platform"),
            num(row, "devices"), (int)num(row, "seq_len") / 1024, num(row, "global_batch"), num(row, "hbm_GiB"),
            text(row, "megatron_cp"));
    if (axis) {
        if (num(row, "axis_factor") > 0)
            fprintf(f, " %s x%.3g (%.6g) |", text(row, "axis"), num(row, "axis_factor"), num(row, "axis_value"));
        else
            fprintf(f, " %s = %.6g |", text(row, "axis"), num(row, "axis_value"));
    }
    if (!has_results(row)) {
        fprintf(f, " %s | | | | | | | | | |\n", text(row, "state"));
        return;
    }
    md_strategy(f, best_of(row, "megatron"));
    md_strategy(f, best_of(row, "7d"));
    md_speedup(f, row);
    const char *keys = text(row, "seven_d_keys");
    fprintf(f, " %s%s%s |\n", text(row, "reason"), keys[0] ? "; 7D keys: " : "", keys);
}

static void md_breakdown(FILE *f, const cJSON *row)
{
    const cJSON *c[2] = {best_of(row, "megatron"), best_of(row, "7d")};
    fprintf(f, "\n### %s\n\n", text(row, "cell"));
    fprintf(f, "`%s`\n\n| | Megatron-style best | 7D best |\n|---|---|---|\n", text(row, "command"));
    char s[2][CFG_TEXT_LEN];
    for (int k = 0; k < 2; k++) {
        if (c[k])
            rpt_record_strategy_text(cJSON_GetObjectItemCaseSensitive(c[k], "strategy"), s[k], sizeof s[k]);
        else
            sim_strlcpy(s[k], "none fits", sizeof s[k]);
    }
    fprintf(f, "| strategy | `%s` | `%s` |\n", s[0], s[1]);
#define ROW(label, fmt, ...)                                                                                          \
    do {                                                                                                              \
        fprintf(f, "| %s |", label);                                                                                  \
        for (int k = 0; k < 2; k++) {                                                                                 \
            if (c[k])                                                                                                 \
                fprintf(f, " " fmt " |", __VA_ARGS__);                                                                \
            else                                                                                                      \
                fprintf(f, " - |");                                                                                   \
        }                                                                                                             \
        fprintf(f, "\n");                                                                                             \
    } while (0)
    ROW("step time (simulated)", "%.4f s", num(c[k], "step_time_s"));
    ROW("MFU", "%.1f %%", 100 * num(c[k], "mfu"));
    ROW("memory, peak stage", "%.1f GiB", num(c[k], "memory.peak_bytes") / SIM_GIB);
    ROW("memory, usable", "%.1f GiB", num(c[k], "memory.capacity_bytes") / SIM_GIB);
    ROW("compute (critical rank)", "%.4f s", num(c[k], "breakdown.compute_s"));
    ROW("pipeline bubble", "%.4f s", num(c[k], "breakdown.bubble_s"));
    ROW("optimizer", "%.4f s", num(c[k], "breakdown.optimizer_s"));
    static const char *const labels[WL_NDIMS] = {"TP", "CP", "EP", "DP", "PP"};
    for (int d = 0; d < WL_NDIMS; d++) {
        char label[48], exposed[48], comm[48];
        snprintf(label, sizeof label, "%s comm exposed (in flight)", labels[d]);
        snprintf(exposed, sizeof exposed, "dimensions.%s.exposed_s", wl_dim_name((wl_dim)d));
        snprintf(comm, sizeof comm, "dimensions.%s.comm_s", wl_dim_name((wl_dim)d));
        ROW(label, "%.4f s (%.4f s)", num(c[k], exposed), num(c[k], comm));
    }
#undef ROW
}

static sim_rc write_markdown(const char *path, const cJSON *study, sim_err *err)
{
    const cJSON *doc = study, *cells = cJSON_GetObjectItemCaseSensitive(doc, "cells"), *row;
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "study table", err);
    if (rc != SIM_OK) return rc;
    FILE *f = o.f;
    fprintf(f, "# Study %s\n\n", text(doc, "name"));
    if (text(doc, "description")[0]) fprintf(f, "%s\n\n", text(doc, "description"));
    if (text(doc, "command")[0])
        fprintf(f, "Regenerate with `%s` (inputs/ holds a copy of the study file, models and platforms).\n\n",
                text(doc, "command"));
    const char *symmetry = text(doc, "symmetry");
    fprintf(f,
            "Each cell is one `heptasim compare`: the best %.0f estimates of the 7D space and of its Megatron-style "
            "part simulated (symmetry %s), the fastest of each side reported. Step times in seconds; memory is the "
            "peak stage's, in GiB; the speed-up is the Megatron-style step over the 7D step, \"beyond +-x %%\" when "
            "it exceeds 1 + x, x being %d times the platform's rms error on a ratio of two step times, \"within "
            "+-x %%\" when not. The last column names the component the 7D best saves most on and the keys "
            "behind it, then the keys the baseline lacks.\n\n",
            num(doc, "top"), strcmp(symmetry, "dp") == 0 ? "dp: one data-parallel replica stands for all" : symmetry,
            CFG_SURE_SIGMAS);
    static const char head[] = " Megatron-style best | step | MFU | GiB | 7D best | step | MFU | GiB | speed-up | what "
                               "makes the difference |\n";
    fprintf(f, "| model | platform (devices) | seq | batch | HBM GiB | baseline CP |%s", head);
    fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    bool sensitivity = false;
    cJSON_ArrayForEach(row, cells)
    {
        bool axis = strcmp(text(row, "part"), "sensitivity") == 0;
        if (axis && !sensitivity) {
            sensitivity = true;
            fprintf(f, "\n## Sensitivity\n\nOne platform key changed at a time.\n\n");
            fprintf(f, "| model | platform (devices) | seq | batch | HBM GiB | baseline CP | key |%s", head);
            fprintf(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        }
        md_row(f, row, axis);
    }
    int fast = 0, have = 0, banded = 0, beyond = 0;
    cJSON_ArrayForEach(row, cells)
    {
        have += has_results(row);
        fast += num(row, "speedup") > FAST_GAIN;
        const cJSON *sure = cJSON_GetObjectItemCaseSensitive(row, "speedup_exceeds_error");
        banded += has_results(row) && cJSON_IsBool(sure);
        beyond += has_results(row) && cJSON_IsTrue(sure);
    }
    fprintf(f, "\n## Against the model's error\n\n");
    if (banded == 0)
        fprintf(f, "No cell carries an error on its speed-up (no platform of the study has a band on a ratio).\n");
    else
        fprintf(f, "%d of the %d cells with an error band have a speed-up beyond it; in the other %d the 7D "
                   "advantage is within what the model's errors explain.\n",
                beyond, banded, banded - beyond);
    fprintf(f, "\n## Where the 7D best is more than 5 %% faster\n\n");
    if (fast == 0) fprintf(f, "In none of the %d cells with results.\n", have);
    cJSON_ArrayForEach(row, cells)
    {
        const char *keys = text(row, "seven_d_keys");
        const cJSON *sure = cJSON_GetObjectItemCaseSensitive(row, "speedup_exceeds_error");
        if (num(row, "speedup") > FAST_GAIN)
            fprintf(f, "- %s: %.3fx%s (%s%s%s)\n", text(row, "cell"), num(row, "speedup"),
                    !cJSON_IsBool(sure) ? "" : cJSON_IsTrue(sure) ? ", beyond the band" : ", within the band",
                    text(row, "reason"), keys[0] ? "; " : "", keys);
    }
    fprintf(f, "\n## Breakdown per cell\n");
    cJSON_ArrayForEach(row, cells)
        if (has_results(row)) md_breakdown(f, row);
    return sim_out_commit(&o, err);
}

sim_rc rpt_write_study_markdown(const char *path, const rpt_study_doc *d, sim_err *err)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "name", d->name);
    cJSON_AddStringToObject(doc, "description", d->description);
    if (d->command) cJSON_AddStringToObject(doc, "command", d->command);
    cJSON_AddNumberToObject(doc, "top", d->top);
    cJSON_AddStringToObject(doc, "symmetry", d->symmetry);
    cJSON_AddItemToObject(doc, "cells", rpt_study_rows_json(d->rows, d->nrows));
    sim_rc rc = write_markdown(path, doc, err);
    cJSON_Delete(doc);
    return rc;
}
