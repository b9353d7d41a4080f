/* schema.c - table-driven reading, checking and writing of config objects.
 *
 * A schema is an array of cfg_key rows (one per JSON key).  Reading walks
 * the JSON object against the rows: unknown keys (with a "did you mean"),
 * duplicate keys, types, integer-ness, bounds and required keys are checked,
 * absent keys get their default, and values are scaled to SI units.
 * Writing is the inverse, so that a written object reads back the same.
 * Every error is one line: "<origin>: <.json.path>: <what is wrong>". */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* ------------------------------------------------------------ the reader */

void cfg_reader_init(cfg_reader *r, const char *origin, sim_err *err)
{
    memset(r, 0, sizeof *r);
    r->origin = origin;
    r->err = err;
}

void cfg_reader_free(cfg_reader *r)
{
    if (!r) return;
    for (int i = 0; i < r->ntags; i++) {
        free(r->tags[i].origin);
        free(r->tags[i].path);
    }
    free(r->tags);
    r->tags = NULL;
    r->ntags = r->cap = 0;
}

void cfg_reader_tag(cfg_reader *r, const cJSON *node, const char *origin, const char *path)
{
    if (r->ntags == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->tags = sim_xrealloc(r->tags, (size_t)r->cap * sizeof *r->tags);
    }
    cfg_tag *t = &r->tags[r->ntags++];
    t->node = node;
    t->origin = origin ? sim_xstrdup(origin) : NULL;
    t->path = path ? sim_xstrdup(path) : NULL;
}

static const cfg_tag *find_tag(const cfg_reader *r, const cJSON *node)
{
    for (int i = r->ntags - 1; i >= 0; i--)
        if (r->tags[i].node == node) return &r->tags[i];
    return NULL;
}

/* Where a child node is reported: its origin and its JSON path.  path gets
 * parent_path + "." + key (or + "[i]" when key is NULL), unless a tag
 * renames it. */
static const char *locate(const cfg_reader *r, const cJSON *node, const char *origin, const char *parent_path,
                          const char *key, int index, char *path, size_t cap)
{
    const cfg_tag *t = find_tag(r, node);
    if (t && t->path)
        sim_strlcpy(path, t->path, cap);
    else if (key && strlen(key) > 80) /* its start and length: the path is never cut off */
        snprintf(path, cap, "%s.%.60s... (%zu characters)", parent_path, key, strlen(key));
    else if (key)
        snprintf(path, cap, "%s.%s", parent_path, key);
    else
        snprintf(path, cap, "%s[%d]", parent_path, index);
    return (t && t->origin) ? t->origin : origin;
}

static sim_rc fail_at(cfg_reader *r, const char *origin, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static sim_rc fail_at(cfg_reader *r, const char *origin, const char *path, const char *fmt, ...)
{
    char msg[SIM_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sim_fail(r->err, SIM_EINVAL, "%s: %s: %s", origin, path, msg);
}

/* ------------------------------------------------------------ formatting */

sim_rc cfg_one_line(sim_rc rc, sim_err *err)
{
    if (rc == SIM_OK || !err) return rc;
    for (char *c = err->msg; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    return rc;
}

void cfg_json_repr(const cJSON *node, char *buf, size_t cap)
{
    char *s = node ? cJSON_PrintUnformatted(node) : NULL;
    if (!s) {
        sim_strlcpy(buf, "nothing", cap);
        return;
    }
    if (strlen(s) > 40) memcpy(s + 37, "...", 4);
    sim_strlcpy(buf, s, cap);
    cJSON_free(s);
}

/* A bound as people write it: 131072, 0.5, 1e+20. */
static void fmt_num(double v, char *buf, size_t cap)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%g", v);
}

/* v rounded to 15 significant digits: undoes the noise of a unit division
 * (1.5e-6 / 1e-6 = 1.4999999999999998 -> 1.5). */
static double round15(double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.15g", v);
    return strtod(b, NULL);
}

/* ---------------------------------------------------------------- reading */

static const cfg_key *find_row(const cfg_key *rows, const char *key)
{
    for (const cfg_key *k = rows; k->key; k++)
        if (strcmp(k->key, key) == 0) return k;
    return NULL;
}

/* The one unknown-key message of every JSON input: "unknown key (did you
 * mean 'X'?)" when one of the n known keys is close, else the list. */
static void unknown_key_why(const char *key, const char *const *known, int n, char *out, size_t cap)
{
    const char *close = cfg_suggest(key, known, n);
    if (close) {
        snprintf(out, cap, "unknown key (did you mean '%s'?)", close);
        return;
    }
    char list[320] = "";
    size_t used = 0;
    for (int i = 0; i < n && used + strlen(known[i]) + 8 < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", known[i]);
    snprintf(out, cap, "unknown key (known keys: %s)", list);
}

static sim_rc unknown_key(cfg_reader *r, const cfg_key *rows, const char *key, const char *origin, const char *path)
{
    const char *cands[CFG_MAX_OBJECT_KEYS];
    int n = 0;
    for (const cfg_key *k = rows; k->key && n < CFG_MAX_OBJECT_KEYS; k++) cands[n++] = k->key;
    char why[400];
    unknown_key_why(key, cands, n, why, sizeof why);
    return fail_at(r, origin, path, "%s", why);
}

sim_rc cfg_check_keys(const void *obj, const char *const *known, const char *origin, const char *where, sim_err *err)
{
    const cJSON *o = obj;
    int n = 0;
    while (known[n]) n++;
    for (const cJSON *it = o->child; it; it = it->next) {
        char key[80];
        sim_strlcpy(key, it->string ? it->string : "", sizeof key);
        for (char *c = key; *c; c++) /* the key on one line, in UTF-8 */
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
        sim_utf8_scrub(key);
        bool ok = false;
        for (int i = 0; i < n && !ok; i++) ok = it->string && strcmp(it->string, known[i]) == 0;
        for (const cJSON *d = o->child; ok && d != it; d = d->next)
            if (strcmp(d->string, it->string) == 0)
                return sim_fail(err, SIM_EINVAL, "%s: %s.%s: duplicate key (keep one)", origin, where, key);
        if (ok) continue;
        char why[400];
        unknown_key_why(key, known, n, why, sizeof why);
        return sim_fail(err, SIM_EINVAL, "%s: %s.%s: %s", origin, where, key, why);
    }
    return SIM_OK;
}

static int enum_index(const cfg_key *row, const char *name)
{
    for (int i = 0; row->names[i]; i++)
        if (strcmp(row->names[i], name) == 0) return i;
    return -1;
}

static double scale_of(const cfg_key *row)
{
    return row->scale != 0 ? row->scale : 1.0;
}

/* The allowed range of a row as people write it: "[1, 16384]", "(0, 1]". */
static void fmt_range(const cfg_key *row, char *buf, size_t cap)
{
    char lo[40], hi[40];
    fmt_num(row->min, lo, sizeof lo);
    fmt_num(row->max, hi, sizeof hi);
    snprintf(buf, cap, "%s%s, %s]", (row->flags & CFG_KF_MIN_OPEN) ? "(" : "[", lo, hi);
}

/* "expected an integer in [1, 16384], got 0": the whole allowed range. */
static sim_rc check_bounds(cfg_reader *r, const cfg_key *row, double v, const char *what, const char *origin,
                           const char *path, const cJSON *node)
{
    bool open = row->flags & CFG_KF_MIN_OPEN;
    if ((open ? v > row->min : v >= row->min) && v <= row->max) return SIM_OK;
    char range[96], got[64];
    fmt_range(row, range, sizeof range);
    cfg_json_repr(node, got, sizeof got);
    return fail_at(r, origin, path, "expected %s in %s, got %s", what, range, got);
}

static sim_rc read_curve(cfg_reader *r, const cfg_key *row, const cJSON *node, cfg_curve *c, const char *origin,
                         const char *path)
{
    char got[64];
    if (!cJSON_IsArray(node)) {
        cfg_json_repr(node, got, sizeof got);
        return fail_at(r, origin, path, "expected an array of [flops, fraction] pairs, got %s", got);
    }
    int n = cJSON_GetArraySize(node);
    if (n < 3) return fail_at(r, origin, path, "expected at least 3 points, got %d", n);
    if (n > CFG_CURVE_MAX) return fail_at(r, origin, path, "expected at most %d points, got %d", CFG_CURVE_MAX, n);
    int i = 0;
    for (const cJSON *pt = node->child; pt; pt = pt->next, i++) {
        char ppath[CFG_PATH_LEN];
        const char *o = locate(r, pt, origin, path, NULL, i, ppath, sizeof ppath);
        const cJSON *x = cJSON_IsArray(pt) ? pt->child : NULL;
        const cJSON *y = x ? x->next : NULL;
        if (!x || !y || y->next || !cJSON_IsNumber(x) || !cJSON_IsNumber(y)) {
            cfg_json_repr(pt, got, sizeof got);
            return fail_at(r, o, ppath, "expected a [flops, fraction] pair of numbers, got %s", got);
        }
        char a[40], b[40];
        if (!(x->valuedouble > 0)) {
            cfg_json_repr(x, got, sizeof got);
            return fail_at(r, o, ppath, "flops must be > 0, got %s", got);
        }
        if (!isfinite(x->valuedouble))
            return fail_at(r, o, ppath, "flops %g is too large (use a finite number)", x->valuedouble);
        if (i > 0 && !(x->valuedouble > c->x[i - 1])) {
            fmt_num(x->valuedouble, a, sizeof a);
            fmt_num(c->x[i - 1], b, sizeof b);
            return fail_at(r, o, ppath,
                           "flops %s is not above the previous point's %s (sort the points by increasing flops)", a, b);
        }
        double v = y->valuedouble;
        bool open = row->flags & CFG_KF_MIN_OPEN;
        if ((open ? !(v > row->min) : !(v >= row->min)) || !(v <= row->max)) {
            char range[96];
            fmt_range(row, range, sizeof range);
            cfg_json_repr(y, got, sizeof got);
            return fail_at(r, o, ppath, "fraction must be in %s, got %s", range, got);
        }
        c->x[i] = x->valuedouble;
        c->y[i] = v;
    }
    c->n = n;
    return SIM_OK;
}

static sim_rc read_object(cfg_reader *r, const cfg_key *rows, const cJSON *obj, void *base, const char *origin,
                          const char *path);

/* A list of objects: each element read with the row's sub rows into its
 * own struct, the count stored. */
static sim_rc read_list(cfg_reader *r, const cfg_key *row, const cJSON *node, void *base, const char *origin,
                        const char *path)
{
    char got[64];
    if (!cJSON_IsArray(node)) {
        cfg_json_repr(node, got, sizeof got);
        return fail_at(r, origin, path, "expected an array of objects, got %s", got);
    }
    int n = cJSON_GetArraySize(node), i = 0;
    if (n > (int)row->max) return fail_at(r, origin, path, "expected at most %d entries, got %d", (int)row->max, n);
    char *first = (char *)base + row->offset;
    memset(first, 0, (size_t)row->max * row->size);
    for (const cJSON *e = node->child; e; e = e->next, i++) {
        char epath[CFG_PATH_LEN];
        const char *o = locate(r, e, origin, path, NULL, i, epath, sizeof epath);
        if (!cJSON_IsObject(e)) {
            cfg_json_repr(e, got, sizeof got);
            return fail_at(r, o, epath, "expected an object, got %s", got);
        }
        sim_rc rc = read_object(r, row->sub, e, first + (size_t)i * row->size, o, epath);
        if (rc) return rc;
    }
    *(int *)((char *)base + row->count) = n;
    return SIM_OK;
}

static sim_rc read_value(cfg_reader *r, const cfg_key *row, const cJSON *node, void *base, const char *origin,
                         const char *path)
{
    void *field = (char *)base + row->offset;
    char got[64];
#define GOT (cfg_json_repr(node, got, sizeof got), got)
    switch (row->type) {
    case CFG_K_INT: {
        if (!cJSON_IsNumber(node) || node->valuedouble != floor(node->valuedouble))
            return fail_at(r, origin, path, "expected an integer, got %s", GOT);
        sim_rc rc = check_bounds(r, row, node->valuedouble, "an integer", origin, path, node);
        if (rc) return rc;
        *(int *)field = (int)node->valuedouble;
        return SIM_OK;
    }
    case CFG_K_DOUBLE: {
        if (!cJSON_IsNumber(node)) return fail_at(r, origin, path, "expected a number, got %s", GOT);
        sim_rc rc = check_bounds(r, row, node->valuedouble, "a number", origin, path, node);
        if (rc) return rc;
        *(double *)field = node->valuedouble * scale_of(row);
        return SIM_OK;
    }
    case CFG_K_BOOL:
        if (!cJSON_IsBool(node)) return fail_at(r, origin, path, "expected true or false, got %s", GOT);
        *(bool *)field = cJSON_IsTrue(node);
        return SIM_OK;
    case CFG_K_STRING: {
        if (!cJSON_IsString(node)) return fail_at(r, origin, path, "expected a string, got %s", GOT);
        const char *s = node->valuestring;
        if (strlen(s) >= row->size)
            return fail_at(r, origin, path, "longer than %zu characters (shorten it)", row->size - 1);
        for (const char *c = s; *c; c++)
            if ((unsigned char)*c < 0x20) return fail_at(r, origin, path, "must be one line of text");
        sim_strlcpy(field, s, row->size);
        return SIM_OK;
    }
    case CFG_K_ENUM: {
        int i = cJSON_IsString(node) ? enum_index(row, node->valuestring) : -1;
        if (i < 0) {
            char list[160] = "";
            size_t used = 0;
            int n = 0;
            for (; row->names[n]; n++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"", n ? ", " : "", row->names[n]);
            const char *close = cJSON_IsString(node) ? cfg_suggest(node->valuestring, row->names, n) : NULL;
            if (close)
                return fail_at(r, origin, path, "expected one of %s, got %s (did you mean \"%s\"?)", list, GOT, close);
            return fail_at(r, origin, path, "expected one of %s, got %s", list, GOT);
        }
        *(int *)field = row->values ? row->values[i] : i;
        return SIM_OK;
    }
    case CFG_K_CURVE: return read_curve(r, row, node, field, origin, path);
    case CFG_K_ORDER: {
        char why[200];
        if (!cJSON_IsString(node))
            return fail_at(r, origin, path, "expected a string like \"%s\", got %s", row->def_str, GOT);
        if (!cfg_order_parse(node->valuestring, field, why, sizeof why)) return fail_at(r, origin, path, "%s", why);
        return SIM_OK;
    }
    case CFG_K_OBJECT:
        if (!cJSON_IsObject(node)) return fail_at(r, origin, path, "expected an object, got %s", GOT);
        return read_object(r, row->sub, node, base, origin, path);
    case CFG_K_LIST: return read_list(r, row, node, base, origin, path);
    }
    return fail_at(r, origin, path, "unsupported key type");
#undef GOT
}

void cfg_schema_default(const cfg_key *row, void *base)
{
    void *field = (char *)base + row->offset;
    switch (row->type) {
    case CFG_K_INT: *(int *)field = (int)row->def; break;
    case CFG_K_DOUBLE: *(double *)field = row->def * scale_of(row); break;
    case CFG_K_BOOL: *(bool *)field = row->def != 0; break;
    case CFG_K_STRING: sim_strlcpy(field, row->def_str ? row->def_str : "", row->size); break;
    case CFG_K_ENUM: {
        int i = enum_index(row, row->def_str);
        *(int *)field = row->values ? row->values[i] : i;
        break;
    }
    case CFG_K_ORDER: {
        char why[200];
        cfg_order_parse(row->def_str, field, why, sizeof why);
        break;
    }
    case CFG_K_CURVE: break;
    case CFG_K_LIST:
        memset(field, 0, (size_t)row->max * row->size);
        *(int *)((char *)base + row->count) = 0;
        break;
    case CFG_K_OBJECT:
        for (const cfg_key *k = row->sub; k->key; k++)
            if (!(k->flags & (CFG_KF_REQUIRED | CFG_KF_DERIVED))) cfg_schema_default(k, base);
        break;
    }
}

static sim_rc read_object(cfg_reader *r, const cfg_key *rows, const cJSON *obj, void *base, const char *origin,
                          const char *path)
{
    char cpath[CFG_PATH_LEN];
    /* keys the table does not know, and keys given twice */
    for (const cJSON *c = obj->child; c; c = c->next) {
        const char *o = locate(r, c, origin, path, c->string, 0, cpath, sizeof cpath);
        if (!find_row(rows, c->string)) return unknown_key(r, rows, c->string, o, cpath);
        for (const cJSON *d = obj->child; d != c; d = d->next)
            if (strcmp(d->string, c->string) == 0) return fail_at(r, o, cpath, "duplicate key (keep one)");
    }
    for (const cfg_key *k = rows; k->key; k++) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, k->key);
        if (!c) {
            if (k->flags & CFG_KF_REQUIRED) {
                snprintf(cpath, sizeof cpath, "%s.%s", path, k->key);
                return fail_at(r, origin, cpath, "required key is missing");
            }
            if (!(k->flags & CFG_KF_DERIVED)) cfg_schema_default(k, base);
            continue;
        }
        const char *o = locate(r, c, origin, path, k->key, 0, cpath, sizeof cpath);
        sim_rc rc = read_value(r, k, c, base, o, cpath);
        if (rc) return rc;
    }
    return SIM_OK;
}

sim_rc cfg_schema_read(cfg_reader *r, const cfg_key *rows, const cJSON *obj, void *base)
{
    if (!cJSON_IsObject(obj)) {
        char got[64];
        cfg_json_repr(obj, got, sizeof got);
        return sim_fail(r->err, SIM_EINVAL, "%s: expected a JSON object at the top level, got %s", r->origin, got);
    }
    return read_object(r, rows, obj, base, r->origin, "");
}

sim_rc cfg_schema_read_at(const cfg_key *rows, const void *obj, const char *origin, const char *path, void *base,
                          sim_err *err)
{
    cfg_reader r;
    cfg_reader_init(&r, origin, err);
    sim_rc rc = read_object(&r, rows, obj, base, origin, path);
    cfg_reader_free(&r);
    return cfg_one_line(rc, err);
}

/* ---------------------------------------------------------------- writing */

static void write_rows(const cfg_key *rows, const void *base, cJSON *obj, unsigned only);

static cJSON *write_value(const cfg_key *row, const void *base)
{
    const void *field = (const char *)base + row->offset;
    switch (row->type) {
    case CFG_K_INT:
        if ((row->flags & CFG_KF_OMIT_ZERO) && *(const int *)field == 0) return NULL;
        return cJSON_CreateNumber(*(const int *)field);
    case CFG_K_DOUBLE:
        if ((row->flags & CFG_KF_OMIT_ZERO) && *(const double *)field == 0) return NULL;
        return cJSON_CreateNumber(round15(*(const double *)field / scale_of(row)));
    case CFG_K_BOOL: return cJSON_CreateBool(*(const bool *)field);
    case CFG_K_STRING: return ((const char *)field)[0] ? cJSON_CreateString(field) : NULL;
    case CFG_K_ENUM: {
        int v = *(const int *)field;
        for (int i = 0; row->names[i]; i++)
            if ((row->values ? row->values[i] : i) == v) return cJSON_CreateString(row->names[i]);
        return cJSON_CreateNull();
    }
    case CFG_K_CURVE: {
        const cfg_curve *c = field;
        if ((row->flags & CFG_KF_OMIT_ZERO) && c->n == 0) return NULL;
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < c->n && i < CFG_CURVE_MAX; i++) {
            cJSON *pt = cJSON_CreateArray();
            cJSON_AddItemToArray(pt, cJSON_CreateNumber(c->x[i]));
            cJSON_AddItemToArray(pt, cJSON_CreateNumber(c->y[i]));
            cJSON_AddItemToArray(arr, pt);
        }
        return arr;
    }
    case CFG_K_ORDER: {
        const cfg_dim *d = field;
        char buf[128] = "";
        size_t used = 0;
        for (int i = 0; i < CFG_NDIMS; i++)
            used += (size_t)snprintf(buf + used, sizeof buf - used, "%s%s", i ? "-" : "", cfg_dim_name(d[i]));
        return cJSON_CreateString(buf);
    }
    case CFG_K_OBJECT: {
        if ((row->flags & CFG_KF_OMIT_ZERO) && *(const int *)field == 0) return NULL;
        cJSON *obj = cJSON_CreateObject();
        write_rows(row->sub, base, obj, 0);
        return obj;
    }
    case CFG_K_LIST: {
        int n = *(const int *)((const char *)base + row->count);
        if ((row->flags & CFG_KF_OMIT_ZERO) && n == 0) return NULL;
        cJSON *arr = cJSON_CreateArray();
        for (int i = 0; i < n && i < (int)row->max; i++) {
            cJSON *obj = cJSON_CreateObject();
            write_rows(row->sub, (const char *)field + (size_t)i * row->size, obj, 0);
            cJSON_AddItemToArray(arr, obj);
        }
        return arr;
    }
    }
    return NULL;
}

static void write_rows(const cfg_key *rows, const void *base, cJSON *obj, unsigned only)
{
    for (const cfg_key *k = rows; k->key; k++) {
        cJSON *v = (!only || (k->flags & only)) ? write_value(k, base) : NULL;
        if (v) cJSON_AddItemToObject(obj, k->key, v);
    }
}

cJSON *cfg_schema_write(const cfg_key *rows, const void *base)
{
    return cfg_schema_write_only(rows, base, 0);
}

cJSON *cfg_schema_write_only(const cfg_key *rows, const void *base, unsigned only)
{
    cJSON *obj = cJSON_CreateObject();
    write_rows(rows, base, obj, only);
    return obj;
}

/* -------------------------------------------------------------- overrides */

/* Split "a.b.c" into at most `max` parts of at most `len` characters.
 * Returns the count, or -1 for an empty part, -2 for too many or too long. */
static int split_key(const char *key, size_t keylen, char parts[][CFG_SET_MAX_PART], int max)
{
    int n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= keylen; i++) {
        if (i < keylen && key[i] != '.') continue;
        size_t len = i - start;
        if (len == 0) return -1;
        if (n == max || len >= CFG_SET_MAX_PART) return -2;
        memcpy(parts[n], key + start, len);
        parts[n][len] = '\0';
        n++;
        start = i + 1;
    }
    return n;
}

const void *cfg_json_at(const void *root, const char *dotted)
{
    char parts[CFG_SET_MAX_DEPTH][CFG_SET_MAX_PART];
    int n = split_key(dotted, strlen(dotted), parts, CFG_SET_MAX_DEPTH);
    const cJSON *v = root;
    for (int i = 0; i < n && v; i++) v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, parts[i]) : NULL;
    return n > 0 ? v : NULL;
}

/* Forget the tags of a subtree about to be freed, so that a node later
 * allocated at the same address is not mistaken for it. */
static void untag_tree(cfg_reader *r, const cJSON *node)
{
    for (const cJSON *c = node->child; c; c = c->next) untag_tree(r, c);
    for (int i = 0; i < r->ntags; i++)
        if (r->tags[i].node == node) r->tags[i].node = NULL;
}

/* "--set ITEM" as messages name it: whole up to SET_SHOWN characters,
 * else its start and its length, so that the reason after it is never cut
 * off; bytes that are not UTF-8 become '?'. */
#define SET_SHOWN 160
static void set_origin(const char *item, char *out, size_t cap)
{
    size_t n = strlen(item);
    if (n <= SET_SHOWN)
        snprintf(out, cap, "--set %s", item);
    else
        snprintf(out, cap, "--set %.*s... (%zu characters)", SET_SHOWN - 40, item, n);
    sim_utf8_scrub(out);
}

/* The kind an override item of key length keylen applies to ("model",
 * "platform", "strategy") and, in *key, where its key starts; NULL for a
 * bare kind ("model=x"). */
static const char *override_kind(const char *item, size_t keylen, const char **key)
{
    static const char *const kinds[] = {"model", "platform", "strategy"};
    const char *kind = "strategy";
    *key = item;
    for (int i = 0; i < 3; i++) {
        size_t kl = strlen(kinds[i]);
        if (keylen == kl && strncmp(item, kinds[i], kl) == 0) return NULL;
        if (keylen > kl && strncmp(item, kinds[i], kl) == 0 && item[kl] == '.') {
            kind = kinds[i];
            *key = item + kl + 1;
        }
    }
    return kind;
}

int cfg_overrides_count(const cfg_overrides *ov, const char *kind, const char *except_key)
{
    int n = 0;
    for (int i = 0; ov && i < ov->n; i++) {
        const char *item = ov->items ? ov->items[i] : NULL;
        const char *eq = item ? strchr(item, '=') : NULL;
        if (!eq) continue;
        const char *key;
        const char *k = override_kind(item, (size_t)(eq - item), &key);
        if (!k || strcmp(k, kind) != 0) continue;
        if (except_key && (size_t)(eq - key) == strlen(except_key) && strncmp(key, except_key, strlen(except_key)) == 0)
            continue;
        n++;
    }
    return n;
}

static sim_rc apply_one(cfg_reader *r, const char *item, const char *kind, cJSON *root)
{
    char origin[SET_SHOWN + 64];
    set_origin(item, origin, sizeof origin);
    size_t item_len = strlen(item);
    if (sim_text_check(item, item_len, NULL, NULL) < item_len)
        return sim_fail(r->err, SIM_EINVAL, "%s: not valid UTF-8 text (the values go into JSON and HTML)", origin);
    const char *eq = strchr(item, '=');
    if (!eq) return sim_fail(r->err, SIM_EINVAL, "%s: expected KEY=VALUE", origin);
    size_t keylen = (size_t)(eq - item);
    if (keylen == 0) return sim_fail(r->err, SIM_EINVAL, "%s: empty key (expected KEY=VALUE)", origin);

    const char *key = item;
    const char *item_kind = override_kind(item, keylen, &key);
    if (!item_kind) return sim_fail(r->err, SIM_EINVAL, "%s: expected %.*s.KEY=VALUE", origin, (int)keylen, item);
    char parts[CFG_SET_MAX_DEPTH][CFG_SET_MAX_PART];
    int n = split_key(key, (size_t)(eq - key), parts, CFG_SET_MAX_DEPTH);
    if (n == -1) return sim_fail(r->err, SIM_EINVAL, "%s: empty name in the key (expected KEY=VALUE)", origin);
    if (n < 0) return sim_fail(r->err, SIM_EINVAL, "%s: key too long or too deep", origin);
    if (strcmp(item_kind, kind) != 0) return SIM_OK;

    char path[CFG_PATH_LEN] = "";
    size_t used = 0;
    cJSON *cur = root;
    for (int i = 0; i < n - 1; i++) {
        used += (size_t)snprintf(path + used, sizeof path - used, ".%s", parts[i]);
        if (used >= sizeof path) used = sizeof path - 1;
        cJSON *child = cJSON_GetObjectItemCaseSensitive(cur, parts[i]);
        if (!child) {
            child = cJSON_CreateObject();
            cJSON_AddItemToObject(cur, parts[i], child);
            cfg_reader_tag(r, child, origin, NULL);
        } else if (!cJSON_IsObject(child)) {
            return sim_fail(r->err, SIM_EINVAL, "%s: %s: not an object, so it has no key '%s'", origin, path,
                            parts[i + 1]);
        }
        cur = child;
    }
    const char *text = eq + 1;
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithOpts(text, &end, 1);
    if (!v) v = cJSON_CreateString(text);
    cJSON *old = cJSON_GetObjectItemCaseSensitive(cur, parts[n - 1]);
    if (old) {
        untag_tree(r, old);
        cJSON_ReplaceItemInObjectCaseSensitive(cur, parts[n - 1], v);
    } else
        cJSON_AddItemToObject(cur, parts[n - 1], v);
    cfg_reader_tag(r, v, origin, NULL);
    return SIM_OK;
}

sim_rc cfg_overrides_apply(cfg_reader *r, const cfg_overrides *ov, const char *kind, cJSON *root)
{
    if (!ov) return SIM_OK;
    for (int i = 0; i < ov->n; i++) {
        if (!ov->items || !ov->items[i]) continue;
        sim_rc rc = apply_one(r, ov->items[i], kind, root);
        if (rc) return rc;
    }
    return SIM_OK;
}
