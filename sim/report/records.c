/* records.c - sweep records: one as a JSON object and back, and the JSONL
 * files of them, with the one reader and the one appender.
 *
 * A sweep streams one record per finished simulation to its --out file
 * (one line each, flushed), so an interrupted sweep keeps what it finished
 * and `--resume` or `heptasim merge` can read it back.  Records hold only
 * deterministic values (no wall times), so shards merged and a single run
 * give the same ranking.  Analytic estimates and simulated results live in
 * separate keys: estimate_step_time_s / estimate vs step_time_s /
 * breakdown / dimensions, which only a simulated record has.
 *
 * The reader takes every line of the file, NULs or not: a line that is not
 * a JSON object (a torn write, a run of NULs after a crash, another file's
 * bytes) is skipped and counted, and the objects around it are handed on;
 * an object that is not a record is an error naming its line and key. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "../config/config.h"

/* {============================================================= a record */

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

void *rpt_record_to_json(const rpt_record *c)
{
    cJSON *o = cJSON_CreateObject();
    rpt_json_add_num(o, "index", c->index);
    cJSON_AddStringToObject(o, "space", c->space ? c->space : "?");
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
    cJSON_AddBoolToObject(o, "simulated", c->state == RPT_ROW_SIMULATED);
    cJSON_AddBoolToObject(o, "final", c->state == RPT_ROW_SIMULATED);
    if (c->state == RPT_ROW_SIMULATED) {
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
    if (c->state == RPT_ROW_FAILED) cJSON_AddStringToObject(o, "error", c->error);
    return o;
}

/* {============================================================= reading */

/* The names of the n rows of t as a message lists them: "\"a\" or \"b\"". */
static void quoted_names(const sim_enum_name *t, int n, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = '\0';
    for (int i = 0; i < n && at < cap; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int w = snprintf(out + at, cap - at, "%s\"%s\"", sep, t[i].name);
        if (w < 0) break;
        at += (size_t)w;
    }
}


/* The keys a record may hold (rpt_record_to_json writes no other). */
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

sim_rc rpt_record_from_json(const void *json, const char *origin, const sim_enum_name *spaces, int nspaces, rpt_record *out,
                            sim_err *err)
{
    const cJSON *o = json;
    rpt_record c;
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
    int space = cJSON_IsString(sp) ? sim_enum_value(spaces, nspaces, sp->valuestring) : -1;
    if (space < 0) {
        char names[128];
        quoted_names(spaces, nspaces, names, sizeof names);
        return sim_fail(err, SIM_EINVAL, "%s: 'space': expected %s", origin, names);
    }
    c.space = sim_enum_name_of(spaces, nspaces, space);
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
        c.state = RPT_ROW_SIMULATED;
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
        c.state = RPT_ROW_FAILED;
        sim_strlcpy(c.error, error->valuestring, sizeof c.error);
    }
    *out = c;
    return SIM_OK;
}

/* }============================================================= a record */

/* {============================================================= files */

/* Whether line[0..len) holds nothing but blanks. */
static bool blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') return false;
    return true;
}

/* Counts one skipped line of a read. */
static void skip_line(rpt_skipped *sk, int line)
{
    if (sk->lines++ == 0) sk->first_line = line;
}

/* Called with each JSON object of a records file (freed after the call)
 * and its origin ("a.jsonl: line 3"); anything but SIM_OK ends the read. */
typedef sim_rc (*object_fn)(void *ctx, const cJSON *object, const char *origin, sim_err *err);

static sim_rc read_objects(const char *path, object_fn each, void *ctx, rpt_skipped *skipped, sim_err *err)
{
    size_t len = 0;
    char *buf = NULL;
    rpt_skipped sk = {0, 0, 0};
    if (skipped) *skipped = sk;
    sim_rc rc = sim_read_file(path, CFG_MAX_RECORDS_BYTES, "a file of sweep records", &buf, &len, err);
    if (rc != SIM_OK) return rc;
    int line = 0;
    /* Every line of the whole buffer, NULs included: a crash may leave a
     * run of NULs or a torn line, and records appended after it count. */
    for (size_t at = 0; at < len && rc == SIM_OK;) {
        char *p = buf + at, *nl = memchr(p, '\n', len - at);
        size_t n_line = nl ? (size_t)(nl - p) : len - at;
        at += n_line + 1;
        line++;
        if (blank(p, n_line)) continue;
        if (!nl) { /* no newline: the write of this line was interrupted */
            sk.torn = 1;
            skip_line(&sk, line);
            break;
        }
        *nl = '\0';
        const char *end = NULL;
        cJSON *o = memchr(p, '\0', n_line) ? NULL : cJSON_ParseWithOpts(p, &end, true);
        if (!cJSON_IsObject(o)) { /* junk: a torn write, NULs, another file's bytes */
            cJSON_Delete(o);
            skip_line(&sk, line);
            continue;
        }
        char origin[CFG_PATH_LEN + 32];
        snprintf(origin, sizeof origin, "%s: line %d", path, line);
        rc = each(ctx, o, origin, err);
        cJSON_Delete(o);
    }
    free(buf);
    if (skipped) *skipped = sk;
    return rc;
}

void rpt_skipped_warn(FILE *f, const char *path, const rpt_skipped *sk)
{
    if (sk->lines == 0) return;
    fprintf(f, "heptasim: warning: %s: skipped %d unreadable line%s (first: line %d%s; an interrupted write or junk), "
            "read every record around them\n", path, sk->lines, sk->lines == 1 ? "" : "s", sk->first_line,
            sk->torn ? "; the last line is torn" : "");
}

/* What rpt_records_read hands each object on to. */
typedef struct record_sink {
    const sim_enum_name *spaces;
    int nspaces;
    rpt_record_fn each;
    void *ctx;
} record_sink;

static sim_rc decode_object(void *ctx, const cJSON *object, const char *origin, sim_err *err)
{
    const record_sink *sink = ctx;
    rpt_record r;
    sim_rc rc = rpt_record_from_json(object, origin, sink->spaces, sink->nspaces, &r, err);
    return rc == SIM_OK ? sink->each(sink->ctx, &r, origin, err) : rc;
}

sim_rc rpt_records_read(const char *path, const sim_enum_name *spaces, int nspaces, rpt_record_fn each, void *ctx,
                        rpt_skipped *skipped, sim_err *err)
{
    record_sink sink = {spaces, nspaces, each, ctx};
    return read_objects(path, decode_object, &sink, skipped, err);
}

sim_rc rpt_record_append(FILE *f, const char *path, const rpt_record *r, sim_err *err)
{
    cJSON *record = rpt_record_to_json(r);
    char *text = sim_json_print(record, false);
    cJSON_Delete(record);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: cannot format a sweep record (out of memory)", path);
    bool bad = fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0;
    int e = errno;
    cJSON_free(text);
    if (bad)
        return sim_fail(err, SIM_EIO, "%s: cannot write a sweep record: %s (check free space and permissions)", path,
                        strerror(e));
    return SIM_OK;
}

/* }============================================================= files */
