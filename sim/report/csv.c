/* csv.c - the one CSV writer: rows of a JSON array as lines, one column per
 * dotted key path, through a sim_out (no partial file). */
#include "report.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "../config/keys.h"

/* The item at a dotted path ("memory.peak_bytes") of o, or NULL. */
static const cJSON *at_path(const cJSON *o, const char *path)
{
    char key[128];
    while (o && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key) return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (dot ? 1 : 0);
    }
    return o;
}

/* One field, quoted (RFC 4180) when it holds a comma, a quote or a line end. */
static void field(FILE *f, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (const char *c = text; *c; c++) {
        if (*c == '"') fputc('"', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

static void value(FILE *f, const cJSON *v)
{
    if (cJSON_IsString(v))
        field(f, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "true" : "false", f);
    else if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        char buf[SIM_NUMBER_TEXT];
        sim_number_text(v->valuedouble, buf);
        fputs(buf, f);
    }
    /* missing, null, an object or an array: an empty field */
}

sim_rc rpt_write_csv(const char *path, const void *rows, const char *const *columns, const char *what, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, what, err);
    if (rc != SIM_OK) return rc;
    for (int c = 0; columns[c]; c++) {
        if (c) fputc(',', o.f);
        field(o.f, columns[c]);
    }
    fputc('\n', o.f);
    const cJSON *row;
    cJSON_ArrayForEach(row, (const cJSON *)rows)
    {
        for (int c = 0; columns[c]; c++) {
            if (c) fputc(',', o.f);
            value(o.f, at_path(row, columns[c]));
        }
        fputc('\n', o.f);
    }
    return sim_out_commit(&o, err);
}

/* The columns of a record around its strategy's: first the candidate, then
 * its figures, then the ranking's (alike, alike_of), a failure's and the
 * inputs' overrides (rpt_rows_add_overrides). */
static const char *const record_head[] = {"index", "space", "megatron_style", NULL};
static const char *const record_tail[] = {"estimate_step_time_s", "simulated", "step_time_s", "mfu", "tokens_per_s",
                                          "accuracy.relative_error", "accuracy.kind", "memory.peak_bytes", "memory.capacity_bytes", "memory.fits", "alike",
                                          "alike_of", "error", "overrides", NULL};

#define RECORD_MAX_COLUMNS 96
#define RECORD_PATH_LEN 64

const char *const *rpt_record_csv_columns(void)
{
    static const char *columns[RECORD_MAX_COLUMNS + 1];
    static char strategy_paths[RECORD_MAX_COLUMNS][RECORD_PATH_LEN];
    if (columns[0]) return columns;
    int n = 0;
    for (int i = 0; record_head[i]; i++) columns[n++] = record_head[i];
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        assert(n < RECORD_MAX_COLUMNS && strlen(k->key) + sizeof "strategy." <= RECORD_PATH_LEN);
        snprintf(strategy_paths[n], RECORD_PATH_LEN, "strategy.%s", k->key);
        columns[n] = strategy_paths[n];
        n++;
    }
    for (int i = 0; record_tail[i]; i++) {
        assert(n < RECORD_MAX_COLUMNS);
        columns[n++] = record_tail[i];
    }
    columns[n] = NULL;
    return columns;
}

void rpt_rows_add_overrides(void *rows, const cfg_overrides *ov)
{
    char text[2 * CFG_TEXT_LEN];
    rpt_overrides_text(ov, text, sizeof text);
    cJSON *row;
    cJSON_ArrayForEach(row, (cJSON *)rows)
    {
        if (cJSON_IsObject(row)) cJSON_AddStringToObject(row, "overrides", text);
    }
}
