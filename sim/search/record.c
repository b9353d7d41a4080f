/* record.c - a candidate as one JSON record, and back (the files of records
 * are read and written by report/records.c).
 *
 * A sweep streams one record per finished simulation to its --out file
 * (one line each, flushed), so an interrupted sweep keeps what it finished
 * and `--resume` or `heptasim merge` can read it back.  Records hold only
 * deterministic values (no wall times), so shards merged and a single run
 * give the same ranking.  Analytic estimates and simulated results live in
 * separate keys: estimate_step_time_s / estimate vs step_time_s /
 * breakdown / dimensions, which only a simulated record has. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "internal.h"

static cJSON *dims_json(const double *exposed, const double *comm)
{
    cJSON *o = cJSON_CreateObject();
    for (int d = 0; d < WL_NDIMS; d++) {
        cJSON *dim = cJSON_CreateObject();
        rpt_json_add_num(dim, "exposed_s", exposed[d]);
        if (comm) rpt_json_add_num(dim, "comm_s", comm[d]);
        cJSON_AddItemToObject(o, wl_dim_name((wl_dim)d), dim);
    }
    return o;
}

void *srch_record_to_json(const srch_candidate *c)
{
    cJSON *o = cJSON_CreateObject();
    rpt_json_add_num(o, "index", c->index);
    cJSON_AddStringToObject(o, "space", srch_space_name(c->space));
    cJSON_AddStringToObject(o, "inputs_id", c->inputs_id);
    cJSON_AddBoolToObject(o, "megatron_style", c->megatron_style);
    cJSON *s = cfg_strategy_to_json(&c->strategy);
    cJSON_AddItemToObject(o, "strategy", s ? s : cJSON_CreateNull());
    rpt_json_add_num(o, "estimate_step_time_s", c->est.step_s);
    cJSON *est = cJSON_CreateObject();
    rpt_json_add_num(est, "compute_s", c->est.compute_s);
    rpt_json_add_num(est, "bubble_s", c->est.bubble_s);
    rpt_json_add_num(est, "optimizer_s", c->est.optimizer_s);
    rpt_json_add_num(est, "critical_stage", c->est.critical_stage);
    cJSON_AddItemToObject(est, "dimensions", dims_json(c->est.exposed_s, NULL));
    cJSON_AddItemToObject(o, "estimate", est);
    cJSON_AddBoolToObject(o, "simulated", c->state == SRCH_SIM_DONE);
    cJSON_AddBoolToObject(o, "final", c->state == SRCH_SIM_DONE);
    if (c->state == SRCH_SIM_DONE) {
        rpt_json_add_num(o, "step_time_s", c->step_time_s);
        if (c->approximate) cJSON_AddBoolToObject(o, "approximate", true);
        rpt_json_add_num(o, "mfu", c->mfu);
        rpt_json_add_num(o, "tokens_per_s", c->tokens_per_s);
        cJSON *b = cJSON_CreateObject();
        rpt_json_add_num(b, "compute_s", c->compute_s);
        rpt_json_add_num(b, "bubble_s", c->bubble_s);
        rpt_json_add_num(b, "optimizer_s", c->optimizer_s);
        cJSON_AddItemToObject(o, "breakdown", b);
        cJSON_AddItemToObject(o, "dimensions", dims_json(c->exposed_s, c->comm_s));
    }
    cJSON *mem = cJSON_CreateObject();
    rpt_json_add_num(mem, "peak_bytes", c->peak_bytes);
    rpt_json_add_num(mem, "capacity_bytes", c->capacity_bytes);
    cJSON_AddBoolToObject(mem, "fits", c->peak_bytes <= c->capacity_bytes);
    cJSON_AddItemToObject(o, "memory", mem);
    if (c->state == SRCH_SIM_FAILED) cJSON_AddStringToObject(o, "error", c->error);
    return o;
}

/* {============================================================= reading */

/* The keys a record may hold (srch_record_to_json writes no other). */
static const char *const record_keys[] = {
    "index", "space", "inputs_id", "megatron_style", "strategy", "estimate_step_time_s", "estimate", "simulated",
    "final", "step_time_s", "approximate", "mfu", "tokens_per_s", "breakdown", "dimensions", "memory", "error", NULL};

/* What a figure of a record may be: >= 0, or > 0. */
typedef enum bound { NONNEG, POSITIVE } bound;

/* A finite number within b at key of o into *out; SIM_EINVAL naming the
 * key when missing, not finite or out of bounds. */
static sim_rc get_num(const cJSON *o, const char *key, const char *origin, bound b, double *out, sim_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return sim_fail(err, SIM_EINVAL, "%s: '%s': expected a number (is this a heptasim sweep record?)", origin, key);
    double x = v->valuedouble;
    if (!isfinite(x) || x < 0 || (b == POSITIVE && x == 0))
        return sim_fail(err, SIM_EINVAL, "%s: '%s': %g is not a figure heptasim writes (expected a finite number %s 0; "
                        "the file was edited or comes from elsewhere)", origin, key, x, b == POSITIVE ? ">" : ">=");
    *out = x;
    return SIM_OK;
}

static sim_rc get_dims(const cJSON *o, const char *origin, double *exposed, double *comm, sim_err *err)
{
    for (int d = 0; d < WL_NDIMS; d++) {
        const cJSON *dim = cJSON_GetObjectItemCaseSensitive(o, wl_dim_name((wl_dim)d));
        char where[SIM_ERR_LEN];
        snprintf(where, sizeof where, "%s: dimensions.%s", origin, wl_dim_name((wl_dim)d));
        sim_rc rc = get_num(dim, "exposed_s", where, NONNEG, &exposed[d], err);
        if (rc == SIM_OK && comm) rc = get_num(dim, "comm_s", where, NONNEG, &comm[d], err);
        if (rc != SIM_OK) return rc;
    }
    return SIM_OK;
}

static bool is_hex16(const char *s)
{
    int i = 0;
    for (; s[i]; i++)
        if (i >= 16 || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return false;
    return i == 16;
}

sim_rc srch_record_from_json(const void *json, const char *origin, srch_candidate *out, sim_err *err)
{
    const cJSON *o = json;
    srch_candidate c;
    memset(&c, 0, sizeof c);
    if (!cJSON_IsObject(o)) return sim_fail(err, SIM_EINVAL, "%s: expected a JSON object (a sweep record)", origin);
    sim_rc rc = cfg_check_keys(o, record_keys, origin, "", err);
    if (rc != SIM_OK) return rc;
    double v = 0;
    rc = get_num(o, "index", origin, NONNEG, &v, err);
    if (rc != SIM_OK) return rc;
    if (v < 0 || v > 2147483647.0 || v != floor(v))
        return sim_fail(err, SIM_EINVAL, "%s: 'index': expected a whole number >= 0, got %g", origin, v);
    c.index = (int)v;
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "space");
    if (!cJSON_IsString(sp) || (strcmp(sp->valuestring, "7d") != 0 && strcmp(sp->valuestring, "megatron") != 0))
        return sim_fail(err, SIM_EINVAL, "%s: 'space': expected \"7d\" or \"megatron\"", origin);
    c.space = strcmp(sp->valuestring, "megatron") == 0 ? SRCH_SPACE_MEGATRON : SRCH_SPACE_7D;
    c.megatron_style = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "megatron_style"));
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "inputs_id");
    if (!cJSON_IsString(id) || !is_hex16(id->valuestring))
        return sim_fail(err, SIM_EINVAL, "%s: 'inputs_id': expected 16 hex digits (is this a heptasim sweep record?)",
                        origin);
    sim_strlcpy(c.inputs_id, id->valuestring, sizeof c.inputs_id);

    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "strategy");
    if (!cJSON_IsObject(st)) return sim_fail(err, SIM_EINVAL, "%s: 'strategy': expected an object", origin);
    char *text = sim_json_print(st, false);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: out of memory", origin);
    char where[SIM_ERR_LEN];
    snprintf(where, sizeof where, "%s: strategy", origin);
    rc = cfg_parse_strategy(text, where, NULL, &c.strategy, err);
    cJSON_free(text);
    if (rc != SIM_OK) return rc;
    c.strategy.path[0] = '\0';

    if ((rc = get_num(o, "estimate_step_time_s", origin, POSITIVE, &c.est.step_s, err))) return rc;
    const cJSON *est = cJSON_GetObjectItemCaseSensitive(o, "estimate");
    snprintf(where, sizeof where, "%s: estimate", origin);
    double stage = 0;
    if ((rc = get_num(est, "compute_s", where, NONNEG, &c.est.compute_s, err)) ||
        (rc = get_num(est, "bubble_s", where, NONNEG, &c.est.bubble_s, err)) ||
        (rc = get_num(est, "optimizer_s", where, NONNEG, &c.est.optimizer_s, err)) ||
        (rc = get_num(est, "critical_stage", where, NONNEG, &stage, err)) ||
        (rc = get_dims(cJSON_GetObjectItemCaseSensitive(est, "dimensions"), where, c.est.exposed_s, NULL, err)))
        return rc;
    if (stage != floor(stage) || stage > CFG_MAX_WIDTH)
        return sim_fail(err, SIM_EINVAL, "%s: 'critical_stage': expected a stage number, got %g", where, stage);
    c.est.critical_stage = (int)stage;

    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(o, "memory");
    snprintf(where, sizeof where, "%s: memory", origin);
    if ((rc = get_num(mem, "peak_bytes", where, POSITIVE, &c.peak_bytes, err)) ||
        (rc = get_num(mem, "capacity_bytes", where, POSITIVE, &c.capacity_bytes, err)))
        return rc;

    const cJSON *error = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *simulated = cJSON_GetObjectItemCaseSensitive(o, "simulated");
    const cJSON *final = cJSON_GetObjectItemCaseSensitive(o, "final");
    if (!cJSON_IsBool(simulated))
        return sim_fail(err, SIM_EINVAL, "%s: 'simulated': expected true or false", origin);
    /* a record is final when simulated; a failure is retried (no "final": an older file) */
    if (final && (!cJSON_IsBool(final) || cJSON_IsTrue(final) != cJSON_IsTrue(simulated)))
        return sim_fail(err, SIM_EINVAL, "%s: 'final': expected %s (a record is final when simulated)", origin,
                        cJSON_IsTrue(simulated) ? "true" : "false");
    if (cJSON_IsTrue(simulated)) {
        c.state = SRCH_SIM_DONE;
        c.approximate = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "approximate"));
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "breakdown");
        snprintf(where, sizeof where, "%s: breakdown", origin);
        if ((rc = get_num(o, "step_time_s", origin, POSITIVE, &c.step_time_s, err)) ||
            (rc = get_num(o, "mfu", origin, NONNEG, &c.mfu, err)) ||
            (rc = get_num(o, "tokens_per_s", origin, NONNEG, &c.tokens_per_s, err)) ||
            (rc = get_num(b, "compute_s", where, NONNEG, &c.compute_s, err)) ||
            (rc = get_num(b, "bubble_s", where, NONNEG, &c.bubble_s, err)) ||
            (rc = get_num(b, "optimizer_s", where, NONNEG, &c.optimizer_s, err)) ||
            (rc = get_dims(cJSON_GetObjectItemCaseSensitive(o, "dimensions"), origin, c.exposed_s, c.comm_s, err)))
            return rc;
    } else if (cJSON_IsString(error)) {
        c.state = SRCH_SIM_FAILED;
        sim_strlcpy(c.error, error->valuestring, sizeof c.error);
    }
    *out = c;
    return SIM_OK;
}

/* Where srch_jsonl_read puts the records it decodes. */
typedef struct record_sink {
    srch_candidate **arr;
    int *n, *cap;
} record_sink;

static sim_rc decode_record(void *ctx, const void *record, const char *origin, sim_err *err)
{
    record_sink *sink = ctx;
    if (*sink->n == *sink->cap) {
        *sink->cap = *sink->cap ? 2 * *sink->cap : 64;
        *sink->arr = sim_xrealloc(*sink->arr, (size_t)*sink->cap * sizeof **sink->arr);
    }
    sim_rc rc = srch_record_from_json(record, origin, &(*sink->arr)[*sink->n], err);
    if (rc == SIM_OK) (*sink->n)++;
    return rc;
}

sim_rc srch_jsonl_read(const char *path, srch_candidate **arr, int *n, int *cap, rpt_skipped *skipped, sim_err *err)
{
    record_sink sink = {arr, n, cap};
    return rpt_jsonl_read(path, decode_record, &sink, skipped, err);
}

sim_rc srch_jsonl_write(FILE *f, const char *path, const srch_candidate *c, sim_err *err)
{
    cJSON *o = srch_record_to_json(c);
    sim_rc rc = rpt_jsonl_append(f, path, o, err);
    cJSON_Delete(o);
    return rc;
}

/* }============================================================= reading */
