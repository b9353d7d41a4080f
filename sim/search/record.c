/* record.c - a candidate as one JSON record, and JSONL files of records.
 *
 * A sweep streams one record per finished simulation to its --out file
 * (one line each, flushed), so an interrupted sweep keeps what it finished
 * and `--resume` or `heptasim merge` can read it back.  Records hold only
 * deterministic values (no wall times), so shards merged and a single run
 * give the same ranking.  Analytic estimates and simulated results live in
 * separate keys: estimate_step_time_s / estimate vs step_time_s /
 * breakdown / dimensions, which only a simulated record has. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "internal.h"

static void add_num(cJSON *o, const char *key, double v)
{
    cJSON_AddNumberToObject(o, key, isfinite(v) ? v : 0.0);
}

static cJSON *dims_json(const double *exposed, const double *comm)
{
    cJSON *o = cJSON_CreateObject();
    for (int d = 0; d < WL_NDIMS; d++) {
        cJSON *dim = cJSON_CreateObject();
        add_num(dim, "exposed_s", exposed[d]);
        if (comm) add_num(dim, "comm_s", comm[d]);
        cJSON_AddItemToObject(o, wl_dim_name((wl_dim)d), dim);
    }
    return o;
}

void *srch_record_to_json(const srch_candidate *c)
{
    cJSON *o = cJSON_CreateObject();
    add_num(o, "index", c->index);
    cJSON_AddStringToObject(o, "space", srch_space_name(c->space));
    cJSON_AddStringToObject(o, "inputs_id", c->inputs_id);
    cJSON_AddBoolToObject(o, "megatron_style", c->megatron_style);
    cJSON *s = cfg_strategy_to_json(&c->strategy);
    cJSON_AddItemToObject(o, "strategy", s ? s : cJSON_CreateNull());
    add_num(o, "estimate_step_time_s", c->est.step_s);
    cJSON *est = cJSON_CreateObject();
    add_num(est, "compute_s", c->est.compute_s);
    add_num(est, "bubble_s", c->est.bubble_s);
    add_num(est, "optimizer_s", c->est.optimizer_s);
    add_num(est, "critical_stage", c->est.critical_stage);
    cJSON_AddItemToObject(est, "dimensions", dims_json(c->est.exposed_s, NULL));
    cJSON_AddItemToObject(o, "estimate", est);
    cJSON_AddBoolToObject(o, "simulated", c->state == SRCH_SIM_DONE);
    if (c->state == SRCH_SIM_DONE) {
        add_num(o, "step_time_s", c->step_time_s);
        if (c->approximate) cJSON_AddBoolToObject(o, "approximate", true);
        add_num(o, "mfu", c->mfu);
        add_num(o, "tokens_per_s", c->tokens_per_s);
        cJSON *b = cJSON_CreateObject();
        add_num(b, "compute_s", c->compute_s);
        add_num(b, "bubble_s", c->bubble_s);
        add_num(b, "optimizer_s", c->optimizer_s);
        cJSON_AddItemToObject(o, "breakdown", b);
        cJSON_AddItemToObject(o, "dimensions", dims_json(c->exposed_s, c->comm_s));
    }
    cJSON *mem = cJSON_CreateObject();
    add_num(mem, "peak_bytes", c->peak_bytes);
    add_num(mem, "capacity_bytes", c->capacity_bytes);
    cJSON_AddBoolToObject(mem, "fits", c->peak_bytes <= c->capacity_bytes);
    cJSON_AddItemToObject(o, "memory", mem);
    if (c->state == SRCH_SIM_FAILED) cJSON_AddStringToObject(o, "error", c->error);
    return o;
}

/* {============================================================= reading */

/* A number at key of o into *out; SIM_EINVAL naming the key when missing. */
static sim_rc get_num(const cJSON *o, const char *key, const char *origin, double *out, sim_err *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return sim_fail(err, SIM_EINVAL, "%s: '%s': expected a number (is this a heptasim sweep record?)", origin, key);
    *out = v->valuedouble;
    return SIM_OK;
}

static sim_rc get_dims(const cJSON *o, const char *origin, double *exposed, double *comm, sim_err *err)
{
    for (int d = 0; d < WL_NDIMS; d++) {
        const cJSON *dim = cJSON_GetObjectItemCaseSensitive(o, wl_dim_name((wl_dim)d));
        char where[SIM_ERR_LEN];
        snprintf(where, sizeof where, "%s: dimensions.%s", origin, wl_dim_name((wl_dim)d));
        sim_rc rc = get_num(dim, "exposed_s", where, &exposed[d], err);
        if (rc == SIM_OK && comm) rc = get_num(dim, "comm_s", where, &comm[d], err);
        if (rc != SIM_OK) return rc;
    }
    return SIM_OK;
}

sim_rc srch_record_from_json(const void *json, const char *origin, srch_candidate *out, sim_err *err)
{
    const cJSON *o = json;
    srch_candidate c;
    memset(&c, 0, sizeof c);
    if (!cJSON_IsObject(o)) return sim_fail(err, SIM_EINVAL, "%s: expected a JSON object (a sweep record)", origin);
    double v = 0;
    sim_rc rc = get_num(o, "index", origin, &v, err);
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
    if (!cJSON_IsString(id) || strlen(id->valuestring) != 16)
        return sim_fail(err, SIM_EINVAL, "%s: 'inputs_id': expected 16 hex digits (is this a heptasim sweep record?)",
                        origin);
    sim_strlcpy(c.inputs_id, id->valuestring, sizeof c.inputs_id);

    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "strategy");
    if (!cJSON_IsObject(st)) return sim_fail(err, SIM_EINVAL, "%s: 'strategy': expected an object", origin);
    char *text = cJSON_PrintUnformatted(st);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: out of memory", origin);
    char where[SIM_ERR_LEN];
    snprintf(where, sizeof where, "%s: strategy", origin);
    rc = cfg_parse_strategy(text, where, NULL, &c.strategy, err);
    cJSON_free(text);
    if (rc != SIM_OK) return rc;
    c.strategy.path[0] = '\0';

    if ((rc = get_num(o, "estimate_step_time_s", origin, &c.est.step_s, err))) return rc;
    const cJSON *est = cJSON_GetObjectItemCaseSensitive(o, "estimate");
    snprintf(where, sizeof where, "%s: estimate", origin);
    double stage = 0;
    if ((rc = get_num(est, "compute_s", where, &c.est.compute_s, err)) ||
        (rc = get_num(est, "bubble_s", where, &c.est.bubble_s, err)) ||
        (rc = get_num(est, "optimizer_s", where, &c.est.optimizer_s, err)) ||
        (rc = get_num(est, "critical_stage", where, &stage, err)) ||
        (rc = get_dims(cJSON_GetObjectItemCaseSensitive(est, "dimensions"), where, c.est.exposed_s, NULL, err)))
        return rc;
    c.est.critical_stage = (int)stage;

    const cJSON *mem = cJSON_GetObjectItemCaseSensitive(o, "memory");
    snprintf(where, sizeof where, "%s: memory", origin);
    if ((rc = get_num(mem, "peak_bytes", where, &c.peak_bytes, err)) ||
        (rc = get_num(mem, "capacity_bytes", where, &c.capacity_bytes, err)))
        return rc;

    const cJSON *error = cJSON_GetObjectItemCaseSensitive(o, "error");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "simulated"))) {
        c.state = SRCH_SIM_DONE;
        c.approximate = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "approximate"));
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "breakdown");
        snprintf(where, sizeof where, "%s: breakdown", origin);
        if ((rc = get_num(o, "step_time_s", origin, &c.step_time_s, err)) ||
            (rc = get_num(o, "mfu", origin, &c.mfu, err)) ||
            (rc = get_num(o, "tokens_per_s", origin, &c.tokens_per_s, err)) ||
            (rc = get_num(b, "compute_s", where, &c.compute_s, err)) ||
            (rc = get_num(b, "bubble_s", where, &c.bubble_s, err)) ||
            (rc = get_num(b, "optimizer_s", where, &c.optimizer_s, err)) ||
            (rc = get_dims(cJSON_GetObjectItemCaseSensitive(o, "dimensions"), origin, c.exposed_s, c.comm_s, err)))
            return rc;
    } else if (cJSON_IsString(error)) {
        c.state = SRCH_SIM_FAILED;
        sim_strlcpy(c.error, error->valuestring, sizeof c.error);
    }
    *out = c;
    return SIM_OK;
}

sim_rc srch_jsonl_read(const char *path, srch_candidate **arr, int *n, int *cap, int *torn, sim_err *err)
{
    size_t len = 0;
    char *buf = NULL;
    sim_rc read_rc = sim_read_file(path, CFG_MAX_RECORDS_BYTES, "a file of sweep records", &buf, &len, err);
    if (read_rc != SIM_OK) return read_rc;
    if (torn) *torn = 0;
    sim_rc rc = SIM_OK;
    int line = 0;
    char *p = buf;
    while (rc == SIM_OK && *p) {
        char *nl = strchr(p, '\n');
        line++;
        if (!nl) {
            /* no newline: the write of this line was interrupted */
            if (torn) *torn = 1;
            break;
        }
        *nl = '\0';
        char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\r') q++;
        if (*q) {
            char origin[CFG_PATH_LEN + 32];
            snprintf(origin, sizeof origin, "%s: line %d", path, line);
            cJSON *o = cJSON_Parse(q);
            if (!o) {
                rc = sim_fail(err, SIM_EINVAL, "%s: not valid JSON (expected one sweep record per line)", origin);
                break;
            }
            if (*n == *cap) {
                *cap = *cap ? 2 * *cap : 64;
                *arr = sim_xrealloc(*arr, (size_t)*cap * sizeof **arr);
            }
            rc = srch_record_from_json(o, origin, &(*arr)[*n], err);
            cJSON_Delete(o);
            if (rc == SIM_OK) (*n)++;
        }
        p = nl + 1;
    }
    free(buf);
    return rc;
}

sim_rc srch_jsonl_write(FILE *f, const char *path, const srch_candidate *c, sim_err *err)
{
    cJSON *o = srch_record_to_json(c);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: cannot format a sweep record (out of memory)", path);
    bool bad = fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0;
    int e = errno;
    cJSON_free(text);
    if (bad)
        return sim_fail(err, SIM_EIO, "%s: cannot write a sweep record: %s (check free space and permissions)", path,
                        strerror(e));
    return SIM_OK;
}

/* }============================================================= reading */
