/* study.c - a study: many compares (Megatron-style baseline against the 7D
 * space) over models, platforms, sequence lengths, HBM sizes, CP baselines
 * and sensitivity axes, read from one JSON file, run cell by cell into one
 * folder, resumable and shardable, and summed up in a Markdown table and
 * a CSV.
 *
 * Each cell is one srch_compare_run with its own records file
 * (cells/SLUG.jsonl, so an interrupted cell resumes as compare does) and,
 * once finished, its JSON summary (cells/SLUG.json), which holds the
 * cell's definition under "study_cell".  A rerun with resume skips a cell
 * whose summary holds the same definition; the shards of a study write
 * disjoint cells into one folder, and a last run with resume finds them all
 * finished and writes the table.  A run of some cells alone (their slugs'
 * patterns) with resume writes the table of every cell finished so far,
 * the others "not run".  docs/study.md describes the file. */
#define _DEFAULT_SOURCE /* mkdir */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "internal.h"

#define STUDY_TOP_DEFAULT 4     /* compare's default: the best 4 estimates of each space */
#define STUDY_FAST_GAIN 1.05    /* a speed-up the summary lists ("more than 5 %") */

/* {======================================================= reading the file */

/* The reader of one study file: its path and the error. */
typedef struct reader {
    const char *file;
    sim_err *err;
} reader;

static sim_rc bad(reader *r, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static sim_rc bad(reader *r, const char *key, const char *fmt, ...)
{
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return sim_fail(r->err, SIM_EINVAL, "%.300s: %.120s: %s", r->file, key, why);
}

/* Only the keys of `known` (NULL-ended) in object o, each once (the one
 * rule of every input, cfg_check_keys). */
static sim_rc known_keys(reader *r, const cJSON *o, const char *where, const char *const *known)
{
    return cfg_check_keys(o, known, r->file, where, r->err);
}

/* A whole number in [lo, hi] at key. */
static sim_rc whole(reader *r, const cJSON *v, const char *key, long long lo, long long hi, long long *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return bad(r, key, "must be a whole number in [%lld, %lld]", lo, hi);
    *out = (long long)v->valuedouble;
    return SIM_OK;
}

/* A finite number > 0 at key. */
static sim_rc positive(reader *r, const cJSON *v, const char *key, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0))
        return bad(r, key, "must be a number > 0");
    *out = v->valuedouble;
    return SIM_OK;
}

/* A non-empty array at key of the object o (required or not). */
static sim_rc array_at(reader *r, const cJSON *o, const char *name, const char *where, bool required,
                       const cJSON **out)
{
    char key[200];
    snprintf(key, sizeof key, "%s.%s", where, name);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, name);
    *out = NULL;
    if (!a && !required) return SIM_OK;
    if (!a) return bad(r, key, "missing (give a list)");
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1) return bad(r, key, "must be a non-empty list");
    if (cJSON_GetArraySize(a) > SRCH_STUDY_MAX_CELLS) return bad(r, key, "more than %d items", SRCH_STUDY_MAX_CELLS);
    *out = a;
    return SIM_OK;
}

/* A name or path (string) at key. */
static sim_rc name_at(reader *r, const cJSON *v, const char *key, char *out, size_t cap)
{
    if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= cap)
        return bad(r, key, "must be a name or path (at most %zu characters)", cap - 1);
    sim_strlcpy(out, v->valuestring, cap);
    return SIM_OK;
}

/* }======================================================= reading the file */

/* {=========================================================== the inputs */

/* One HBM size: a factor of the platform's hbm_GiB, or GiB. */
typedef struct hbm_spec {
    bool absolute;
    double v;
} hbm_spec;

#define MAX_LIST 64

/* One platform entry: name, device count (0: the platform's), HBM sizes. */
typedef struct plat_entry {
    char name[SIM_MAX_PATH + 1];
    int devices;
    hbm_spec hbm[MAX_LIST];
    int nhbm;
} plat_entry;

/* One sensitivity axis: a platform key and the values it takes (factors of
 * the platform's value, or values). */
typedef struct axis {
    char key[CFG_NAME_LEN * 2];
    bool factors;
    double v[MAX_LIST];
    int n;
} axis;

/* Everything the file says, before it is expanded into cells. */
typedef struct spec {
    char models[MAX_LIST][SIM_MAX_PATH + 1];
    int nmodels;
    plat_entry plats[MAX_LIST];
    int nplats;
    long long seqs[MAX_LIST];
    int nseqs;
    long long tokens;
    srch_baseline cps[2];
    int ncps;
    /* sensitivity */
    bool sens;
    plat_entry sens_plat;
    char sens_models[MAX_LIST][SIM_MAX_PATH + 1];
    int nsens_models;
    const char *sens_models_key; /* where they were given: ".sensitivity.models", else ".models" */
    long long sens_seqs[MAX_LIST];
    int nsens_seqs;
    axis axes[MAX_LIST];
    int naxes;
    /* base strategy keys of both sides, as "KEY=VALUE" */
    char strat[SRCH_STUDY_MAX_SETS - 3][CFG_NAME_LEN * 3];
    int nstrat;
} spec;

static sim_rc hbm_list(reader *r, const cJSON *a, const char *where, hbm_spec *out, int *n)
{
    static const char *const keys[] = {"GiB", NULL};
    *n = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200];
        snprintf(key, sizeof key, "%s[%d]", where, *n);
        if (*n == MAX_LIST) return bad(r, key, "more than %d HBM sizes", MAX_LIST);
        hbm_spec h = {false, 0};
        sim_rc rc;
        if (cJSON_IsObject(e)) {
            if ((rc = known_keys(r, e, key, keys)) != SIM_OK) return rc;
            char k2[220];
            snprintf(k2, sizeof k2, "%s.GiB", key);
            h.absolute = true;
            rc = positive(r, cJSON_GetObjectItemCaseSensitive(e, "GiB"), k2, &h.v);
        } else {
            rc = positive(r, e, key, &h.v);
            if (rc != SIM_OK) return bad(r, key, "must be a factor of the platform's HBM (> 0) or {\"GiB\": N}");
        }
        if (rc != SIM_OK) return rc;
        out[(*n)++] = h;
    }
    return SIM_OK;
}

/* A loader's message without the "heptasim: " it leads with on the command
 * line: in a study the file and the key lead instead. */
static const char *loader_says(const char *msg)
{
    static const char lead[] = "heptasim: ";
    return strncmp(msg, lead, sizeof lead - 1) == 0 ? msg + sizeof lead - 1 : msg;
}

/* The JSON of platform file `name` (the caller deletes it), its path in
 * path; NULL, refused at `key`, when it cannot be read. */
static cJSON *platform_json(reader *r, const char *name, const char *key, char path[CFG_PATH_LEN])
{
    sim_err why = {{0}};
    cJSON *root = cfg_platform_file_json(name, path, &why);
    if (!root) bad(r, key, "%s", loader_says(why.msg));
    return root;
}

/* Platform file `name` can be read: refused at `key` when not. */
static sim_rc platform_found(reader *r, const char *name, const char *key)
{
    char path[CFG_PATH_LEN];
    cJSON *root = platform_json(r, name, key, path);
    cJSON_Delete(root);
    return root ? SIM_OK : SIM_EINVAL;
}

/* A platform entry: "name", or {"platform": name, "devices": N, "hbm": [...]}. */
static sim_rc plat_of(reader *r, const cJSON *e, const char *key, const hbm_spec *hbm, int nhbm, plat_entry *out)
{
    static const char *const keys[] = {"platform", "devices", "hbm", NULL};
    memset(out, 0, sizeof *out);
    memcpy(out->hbm, hbm, (size_t)nhbm * sizeof *hbm);
    out->nhbm = nhbm;
    sim_rc rc;
    if (cJSON_IsString(e)) {
        rc = name_at(r, e, key, out->name, sizeof out->name);
        return rc ? rc : platform_found(r, out->name, key);
    }
    if (!cJSON_IsObject(e)) return bad(r, key, "must be a platform name or {\"platform\": NAME, \"devices\": N}");
    rc = known_keys(r, e, key, keys);
    char k2[240];
    snprintf(k2, sizeof k2, "%s.platform", key);
    if (rc == SIM_OK) rc = name_at(r, cJSON_GetObjectItemCaseSensitive(e, "platform"), k2, out->name, sizeof out->name);
    if (rc == SIM_OK) rc = platform_found(r, out->name, k2);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "devices");
    if (rc == SIM_OK && d) {
        long long v;
        snprintf(k2, sizeof k2, "%s.devices", key);
        rc = whole(r, d, k2, 1, CFG_MAX_DEVICES, &v);
        out->devices = (int)v;
    }
    const cJSON *h = NULL;
    snprintf(k2, sizeof k2, "%s", key);
    if (rc == SIM_OK) rc = array_at(r, e, "hbm", k2, false, &h);
    snprintf(k2, sizeof k2, "%s.hbm", key);
    if (rc == SIM_OK && h) rc = hbm_list(r, h, k2, out->hbm, &out->nhbm);
    return rc;
}

static sim_rc names_list(reader *r, const cJSON *a, const char *where, char (*out)[SIM_MAX_PATH + 1], int *n)
{
    *n = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200];
        snprintf(key, sizeof key, "%s[%d]", where, *n);
        if (*n == MAX_LIST) return bad(r, key, "more than %d items", MAX_LIST);
        sim_rc rc = name_at(r, e, key, out[*n], sizeof out[*n]);
        if (rc != SIM_OK) return rc;
        (*n)++;
    }
    return SIM_OK;
}

static sim_rc seq_list(reader *r, const cJSON *a, const char *where, long long *out, int *n)
{
    *n = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200];
        snprintf(key, sizeof key, "%s[%d]", where, *n);
        if (*n == MAX_LIST) return bad(r, key, "more than %d items", MAX_LIST);
        sim_rc rc = whole(r, e, key, 1, CFG_MAX_WIDTH, &out[*n]);
        if (rc != SIM_OK) return rc;
        (*n)++;
    }
    return SIM_OK;
}

static sim_rc axes_list(reader *r, const cJSON *a, spec *sp)
{
    static const char *const keys[] = {"key", "factors", "values", NULL};
    sp->naxes = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200], k2[240];
        snprintf(key, sizeof key, ".sensitivity.axes[%d]", sp->naxes);
        if (sp->naxes == MAX_LIST) return bad(r, key, "more than %d axes", MAX_LIST);
        if (!cJSON_IsObject(e))
            return bad(r, key, "must be {\"key\": PLATFORM_KEY, \"factors\": [...]} or {\"key\": ..., \"values\": [...]}");
        sim_rc rc = known_keys(r, e, key, keys);
        if (rc != SIM_OK) return rc;
        axis *x = &sp->axes[sp->naxes];
        memset(x, 0, sizeof *x);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
        snprintf(k2, sizeof k2, "%s.key", key);
        if (!cJSON_IsString(k) || !k->valuestring[0] || strlen(k->valuestring) >= sizeof x->key ||
            strspn(k->valuestring, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") !=
                strlen(k->valuestring))
            return bad(r, k2, "must be a platform key such as \"supernode.fabric_GBps\"");
        sim_strlcpy(x->key, k->valuestring, sizeof x->key);
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "factors"), *v = cJSON_GetObjectItemCaseSensitive(e, "values");
        if (!!f == !!v) return bad(r, key, "give either \"factors\" or \"values\"");
        x->factors = f != NULL;
        const cJSON *list = NULL;
        rc = array_at(r, e, f ? "factors" : "values", key, true, &list);
        for (const cJSON *c = list ? list->child : NULL; c && rc == SIM_OK; c = c->next) {
            snprintf(k2, sizeof k2, "%s.%s[%d]", key, f ? "factors" : "values", x->n);
            if (x->n == MAX_LIST) return bad(r, k2, "more than %d values", MAX_LIST);
            rc = positive(r, c, k2, &x->v[x->n++]);
        }
        if (rc != SIM_OK) return rc;
        sp->naxes++;
    }
    return SIM_OK;
}

static sim_rc sensitivity_of(reader *r, const cJSON *o, const hbm_spec *hbm1, spec *sp)
{
    static const char *const keys[] = {"platform", "hbm", "models", "seq_lens", "axes", NULL};
    const char *w = ".sensitivity";
    if (!cJSON_IsObject(o)) return bad(r, w, "must be an object with \"platform\" and \"axes\"");
    sim_rc rc = known_keys(r, o, w, keys);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "platform");
    if (rc == SIM_OK && !p) return bad(r, ".sensitivity.platform", "missing (the platform whose keys vary)");
    if (rc == SIM_OK) rc = plat_of(r, p, ".sensitivity.platform", hbm1, 1, &sp->sens_plat);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "hbm");
    if (rc == SIM_OK && h) {
        cJSON *one = cJSON_CreateArray();
        cJSON_AddItemToArray(one, cJSON_Duplicate(h, 1));
        rc = hbm_list(r, one, ".sensitivity.hbm", sp->sens_plat.hbm, &sp->sens_plat.nhbm);
        cJSON_Delete(one);
    }
    sp->sens_plat.nhbm = 1; /* one HBM size: the sensitivity's, else the platform entry's first */
    const cJSON *a = NULL;
    if (rc == SIM_OK) rc = array_at(r, o, "models", w, false, &a);
    if (rc == SIM_OK && a) rc = names_list(r, a, ".sensitivity.models", sp->sens_models, &sp->nsens_models);
    if (rc == SIM_OK) rc = array_at(r, o, "seq_lens", w, false, &a);
    if (rc == SIM_OK && a) rc = seq_list(r, a, ".sensitivity.seq_lens", sp->sens_seqs, &sp->nsens_seqs);
    if (rc == SIM_OK) rc = array_at(r, o, "axes", w, true, &a);
    if (rc == SIM_OK) rc = axes_list(r, a, sp);
    sp->sens = true;
    return rc;
}

static sim_rc search_of(reader *r, const cJSON *o, srch_study *st)
{
    static const char *const keys[] = {"top", "symmetry", NULL};
    st->top = STUDY_TOP_DEFAULT;
    st->symmetry = ENG_SYM_TP;
    if (!o) return SIM_OK;
    if (!cJSON_IsObject(o)) return bad(r, ".search", "must be an object with \"top\" and \"symmetry\"");
    sim_rc rc = known_keys(r, o, ".search", keys);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "top");
    long long v;
    if (rc == SIM_OK && t && (rc = whole(r, t, ".search.top", 1, CLI_MAX_TOP, &v)) == SIM_OK) st->top = (int)v;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "symmetry");
    if (rc == SIM_OK && s) {
        const char *n = cJSON_IsString(s) ? s->valuestring : "";
        if (strcmp(n, "tp") == 0)
            st->symmetry = ENG_SYM_TP;
        else if (strcmp(n, "dp") == 0)
            st->symmetry = ENG_SYM_DP;
        else if (strcmp(n, "none") == 0)
            st->symmetry = ENG_SYM_NONE;
        else
            return bad(r, ".search.symmetry", "must be \"tp\", \"dp\" or \"none\" (as compare's --symmetry)");
    }
    return rc;
}

/* "strategy": {KEY: VALUE}: base strategy keys of every cell (compare's --set KEY=VALUE). */
static sim_rc strategy_of(reader *r, const cJSON *o, spec *sp)
{
    if (!o) return SIM_OK;
    if (!cJSON_IsObject(o)) return bad(r, ".strategy", "must be an object of strategy keys, e.g. {\"overlap_tp_backward\": true}");
    for (const cJSON *c = o->child; c; c = c->next) {
        char key[200];
        snprintf(key, sizeof key, ".strategy.%.60s", c->string);
        if (sp->nstrat == (int)(sizeof sp->strat / sizeof sp->strat[0]))
            return bad(r, key, "more than %d strategy keys", (int)(sizeof sp->strat / sizeof sp->strat[0]));
        if (!cfg_strategy_key(c->string) || strcmp(c->string, "global_batch") == 0 || strcmp(c->string, "name") == 0)
            return bad(r, key, "not a strategy key a study can set (global_batch comes from tokens_per_step)");
        char *v = cJSON_IsString(c) ? NULL : sim_json_print(c, false);
        const char *text = cJSON_IsString(c) ? c->valuestring : v;
        int n = snprintf(sp->strat[sp->nstrat], sizeof sp->strat[0], "%s=%s", c->string, text ? text : "");
        cJSON_free(v);
        if (n >= (int)sizeof sp->strat[0] || (!cJSON_IsString(c) && !cJSON_IsNumber(c) && !cJSON_IsBool(c)))
            return bad(r, key, "must be a number, true/false or a short string");
        sp->nstrat++;
    }
    const char *items[SRCH_STUDY_MAX_SETS];
    for (int i = 0; i < sp->nstrat; i++) items[i] = sp->strat[i];
    cfg_overrides ov = {sp->nstrat, items};
    cfg_strategy base;
    sim_err why = {{0}};
    if (srch_base_strategy(&ov, "study", &base, &why) != SIM_OK) return bad(r, ".strategy", "%s", why.msg);
    return SIM_OK;
}

static sim_rc spec_of(reader *r, const cJSON *root, srch_study *st, spec *sp)
{
    static const char *const keys[] = {"name",     "description", "models",      "platforms", "seq_lens",
                                       "tokens_per_step", "hbm",  "megatron_cp", "search",    "sensitivity",
                                       "strategy", NULL};
    if (!cJSON_IsObject(root)) return bad(r, ".", "a study file is one JSON object (see docs/study.md)");
    sim_rc rc = known_keys(r, root, "", keys);
    if (rc != SIM_OK) return rc;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(n) || !n->valuestring[0] || strlen(n->valuestring) >= sizeof st->name ||
        strspn(n->valuestring, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
            strlen(n->valuestring) ||
        n->valuestring[0] == '.')
        return bad(r, ".name", "must be the study's folder name: letters, digits, '.', '_' and '-', at most %d",
                   (int)sizeof st->name - 1);
    sim_strlcpy(st->name, n->valuestring, sizeof st->name);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (d && (!cJSON_IsString(d) || strlen(d->valuestring) >= sizeof st->description))
        return bad(r, ".description", "must be a string of at most %d characters", (int)sizeof st->description - 1);
    if (d) sim_strlcpy(st->description, d->valuestring, sizeof st->description);

    const cJSON *a = NULL;
    hbm_spec hbm[MAX_LIST] = {{false, 1.0}};
    int nhbm = 1;
    if ((rc = array_at(r, root, "hbm", "", false, &a)) != SIM_OK) return rc;
    if (a && (rc = hbm_list(r, a, ".hbm", hbm, &nhbm)) != SIM_OK) return rc;
    if ((rc = array_at(r, root, "models", "", true, &a)) != SIM_OK) return rc;
    if ((rc = names_list(r, a, ".models", sp->models, &sp->nmodels)) != SIM_OK) return rc;
    if ((rc = array_at(r, root, "platforms", "", true, &a)) != SIM_OK) return rc;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[64];
        snprintf(key, sizeof key, ".platforms[%d]", sp->nplats);
        if (sp->nplats == MAX_LIST) return bad(r, key, "more than %d platforms", MAX_LIST);
        if ((rc = plat_of(r, e, key, hbm, nhbm, &sp->plats[sp->nplats])) != SIM_OK) return rc;
        sp->nplats++;
    }
    if ((rc = array_at(r, root, "seq_lens", "", true, &a)) != SIM_OK) return rc;
    if ((rc = seq_list(r, a, ".seq_lens", sp->seqs, &sp->nseqs)) != SIM_OK) return rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tokens_per_step");
    if (!t) return bad(r, ".tokens_per_step", "missing (tokens of one step; the global batch is tokens / seq_len)");
    if ((rc = whole(r, t, ".tokens_per_step", 1, 1LL << 50, &sp->tokens)) != SIM_OK) return rc;
    sp->ncps = 1;
    sp->cps[0] = SRCH_BASELINE_RING;
    if ((rc = array_at(r, root, "megatron_cp", "", false, &a)) != SIM_OK) return rc;
    if (a) {
        sp->ncps = 0;
        for (const cJSON *e = a->child; e; e = e->next) {
            char key[64];
            snprintf(key, sizeof key, ".megatron_cp[%d]", sp->ncps);
            const char *v = cJSON_IsString(e) ? e->valuestring : "";
            srch_baseline b = strcmp(v, "a2a") == 0 ? SRCH_BASELINE_A2A : SRCH_BASELINE_RING;
            if ((strcmp(v, "ring") != 0 && strcmp(v, "a2a") != 0) || sp->ncps == 2 ||
                (sp->ncps == 1 && sp->cps[0] == b))
                return bad(r, key, "must be \"ring\" or \"a2a\", each at most once (as compare's --megatron-cp)");
            sp->cps[sp->ncps++] = b;
        }
    }
    if ((rc = search_of(r, cJSON_GetObjectItemCaseSensitive(root, "search"), st)) != SIM_OK) return rc;
    if ((rc = strategy_of(r, cJSON_GetObjectItemCaseSensitive(root, "strategy"), sp)) != SIM_OK) return rc;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sensitivity");
    if (s && (rc = sensitivity_of(r, s, hbm, sp)) != SIM_OK) return rc;
    sp->sens_models_key = ".sensitivity.models";
    if (sp->sens && sp->nsens_models == 0) {
        memcpy(sp->sens_models, sp->models, sizeof sp->models);
        sp->nsens_models = sp->nmodels;
        sp->sens_models_key = ".models";
    }
    if (sp->sens && sp->nsens_seqs == 0) {
        memcpy(sp->sens_seqs, sp->seqs, sizeof sp->seqs);
        sp->nsens_seqs = sp->nseqs;
    }
    return SIM_OK;
}

/* }=========================================================== the inputs */

/* {============================================================ the cells */

/* The number at the dotted key of platform `name`'s JSON file, its bases'
 * keys included. */
static sim_rc platform_number(reader *r, const char *name, const char *dotted, const char *key, double *out)
{
    char path[CFG_PATH_LEN];
    cJSON *root = platform_json(r, name, key, path);
    if (!root) return SIM_EINVAL;
    const cJSON *v = cfg_json_at(root, dotted);
    bool ok = v && cJSON_IsNumber(v) && isfinite(v->valuedouble);
    if (ok) *out = v->valuedouble;
    cJSON_Delete(root);
    if (!ok)
        return bad(r, key, "%s: '%s' is not a number of the platform file %s (a factor needs its value; give \"values\")",
                   name, dotted, path);
    return SIM_OK;
}

/* The file stem of a name or path: "models/x.json" -> "x". */
static void stem(const char *name, char *out, size_t cap)
{
    const char *b = strrchr(name, '/');
    sim_strlcpy(out, b ? b + 1 : name, cap);
    size_t n = strlen(out);
    if (n > 5 && strcmp(out + n - 5, ".json") == 0) out[n - 5] = '\0';
}

/* Letters, digits, '.', '_', '-', '=' kept; the rest '_'. */
static void slug_clean(char *s)
{
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-=", *s)) *s = '_';
}

/* What a cell varies, before it is loaded. */
typedef struct cell_def {
    const char *model;
    const char *model_key; /* where the file names it, as ".models[0]" */
    const plat_entry *plat;
    const hbm_spec *hbm;
    long long seq;
    srch_baseline cp;
    const axis *ax;   /* NULL: a cell of the main grid */
    double ax_value;  /* the factor or value of ax */
} cell_def;

static sim_rc cell_add(reader *r, srch_study *st, const spec *sp, const cell_def *d, const char *key)
{
    if (st->ncells == SRCH_STUDY_MAX_CELLS) return bad(r, key, "more than %d cells", SRCH_STUDY_MAX_CELLS);
    if (sp->tokens % d->seq != 0)
        return bad(r, ".tokens_per_step", "%lld is not a multiple of the sequence length %lld (give tokens per step "
                   "that every sequence length divides)", sp->tokens, d->seq);
    srch_study_cell *c = &st->cells[st->ncells];
    memset(c, 0, sizeof *c);
    c->index = st->ncells;
    sim_strlcpy(c->model_name, d->model, sizeof c->model_name);
    sim_strlcpy(c->platform_name, d->plat->name, sizeof c->platform_name);
    c->devices = d->plat->devices;
    c->seq_len = (int)d->seq;
    c->global_batch = sp->tokens / d->seq;
    c->baseline = d->cp;
    if (c->global_batch > CFG_MAX_WIDTH)
        return bad(r, ".tokens_per_step", "%lld tokens at sequence length %lld are %lld sequences, more than %d",
                   sp->tokens, d->seq, c->global_batch, CFG_MAX_WIDTH);
    double hbm_gib = d->hbm->v;
    if (!d->hbm->absolute) {
        double shipped;
        sim_rc rc = platform_number(r, d->plat->name, "device.hbm_GiB", key, &shipped);
        if (rc != SIM_OK) return rc;
        hbm_gib = shipped * d->hbm->v;
    }
    c->hbm_gib = hbm_gib;
    snprintf(c->sets[c->nsets++], sizeof c->sets[0], "model.seq_len=%lld", d->seq);
    snprintf(c->sets[c->nsets++], sizeof c->sets[0], "platform.device.hbm_GiB=%.10g", hbm_gib);
    if (d->ax) {
        double v = d->ax_value;
        if (d->ax->factors) {
            double base;
            sim_rc rc = platform_number(r, d->plat->name, d->ax->key, key, &base);
            if (rc != SIM_OK) return rc;
            v = base * d->ax_value;
        }
        sim_strlcpy(c->axis, d->ax->key, sizeof c->axis);
        c->axis_value = v;
        c->axis_factor = d->ax->factors ? d->ax_value : 0;
        snprintf(c->sets[c->nsets++], sizeof c->sets[0], "platform.%s=%.10g", d->ax->key, v);
    }
    for (int i = 0; i < sp->nstrat; i++) sim_strlcpy(c->sets[c->nsets++], sp->strat[i], sizeof c->sets[0]);
    char m[CFG_NAME_LEN], p[CFG_NAME_LEN], dev[24] = "", ax[160] = "";
    stem(d->model, m, sizeof m);
    stem(d->plat->name, p, sizeof p);
    if (c->devices) snprintf(dev, sizeof dev, "-d%d", c->devices);
    if (d->ax) snprintf(ax, sizeof ax, "_%s=%.6g", d->ax->key, c->axis_value);
    snprintf(c->slug, sizeof c->slug, "%s_%s%s_s%d_hbm%.4g_%s%s", m, p, dev, c->seq_len, hbm_gib,
             srch_baseline_name(c->baseline), ax);
    slug_clean(c->slug);
    for (int i = 0; i < st->ncells; i++)
        if (strcmp(st->cells[i].slug, c->slug) == 0)
            return bad(r, key, "the study holds the cell %s twice (list each model, platform, sequence length, HBM "
                       "size and value once)", c->slug);
    /* every input loaded now: a bad model, platform or value is refused before anything runs */
    const char *items[SRCH_STUDY_MAX_SETS];
    for (int i = 0; i < c->nsets; i++) items[i] = c->sets[i];
    cfg_overrides ov = {c->nsets, items};
    sim_err why = {{0}};
    if (cfg_load_model(c->model_name, &ov, &c->model, &why) != SIM_OK)
        return bad(r, d->model_key, "%s", loader_says(why.msg));
    if (cfg_load_platform(c->platform_name, &ov, c->devices, &c->platform, &why) != SIM_OK)
        return bad(r, key, "%s", loader_says(why.msg));
    if (srch_base_strategy(&ov, "study", &c->base, &why) != SIM_OK)
        return bad(r, ".strategy", "%s", loader_says(why.msg));
    c->base.global_batch = (int)c->global_batch;
    c->pinned = srch_pins_of_overrides(&ov, &c->base);
    st->ncells++;
    return SIM_OK;
}

static sim_rc cells_of(reader *r, srch_study *st, const spec *sp)
{
    int cap = sp->nmodels * sp->nplats * MAX_LIST * sp->nseqs * sp->ncps;
    if (sp->sens)
        for (int a = 0; a < sp->naxes; a++) cap += sp->axes[a].n * sp->nsens_models * sp->nsens_seqs * sp->ncps;
    if (cap > SRCH_STUDY_MAX_CELLS) cap = SRCH_STUDY_MAX_CELLS;
    st->cells = sim_xcalloc((size_t)cap + 1, sizeof *st->cells);
    sim_rc rc = SIM_OK;
    for (int m = 0; m < sp->nmodels && rc == SIM_OK; m++)
        for (int p = 0; p < sp->nplats && rc == SIM_OK; p++)
            for (int h = 0; h < sp->plats[p].nhbm && rc == SIM_OK; h++)
                for (int s = 0; s < sp->nseqs && rc == SIM_OK; s++)
                    for (int c = 0; c < sp->ncps && rc == SIM_OK; c++) {
                        char key[64], mkey[64];
                        snprintf(key, sizeof key, ".platforms[%d]", p);
                        snprintf(mkey, sizeof mkey, ".models[%d]", m);
                        cell_def d = {sp->models[m], mkey, &sp->plats[p], &sp->plats[p].hbm[h], sp->seqs[s], sp->cps[c],
                                      NULL, 0};
                        rc = cell_add(r, st, sp, &d, key);
                    }
    st->nmain = st->ncells;
    for (int a = 0; sp->sens && a < sp->naxes && rc == SIM_OK; a++)
        for (int v = 0; v < sp->axes[a].n && rc == SIM_OK; v++)
            for (int m = 0; m < sp->nsens_models && rc == SIM_OK; m++)
                for (int s = 0; s < sp->nsens_seqs && rc == SIM_OK; s++)
                    for (int c = 0; c < sp->ncps && rc == SIM_OK; c++) {
                        char key[64], mkey[64];
                        snprintf(key, sizeof key, ".sensitivity.axes[%d]", a);
                        snprintf(mkey, sizeof mkey, "%s[%d]", sp->sens_models_key, m);
                        cell_def d = {sp->sens_models[m], mkey, &sp->sens_plat, &sp->sens_plat.hbm[0], sp->sens_seqs[s],
                                      sp->cps[c], &sp->axes[a], sp->axes[a].v[v]};
                        rc = cell_add(r, st, sp, &d, key);
                    }
    return rc;
}

sim_rc srch_study_load(const char *path, srch_study **out, sim_err *err)
{
    *out = NULL;
    reader r = {path, err};
    char *text = NULL;
    sim_rc rc = sim_read_text(path, CFG_MAX_FILE_BYTES, "study file", &text, err);
    if (rc != SIM_OK) return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        int line = 1;
        for (const char *c = text; end && c < end; c++) line += *c == '\n';
        free(text);
        return sim_fail(err, SIM_EINVAL, "%.300s: line %d: not valid JSON (a study file is one JSON object; see "
                        "docs/study.md)", path, line);
    }
    free(text);
    srch_study *st = sim_xcalloc(1, sizeof *st);
    sim_strlcpy(st->path, path, sizeof st->path);
    spec *sp = sim_xcalloc(1, sizeof *sp);
    rc = spec_of(&r, root, st, sp);
    if (rc == SIM_OK) rc = cells_of(&r, st, sp);
    free(sp);
    cJSON_Delete(root);
    if (rc != SIM_OK) {
        srch_study_free(st);
        return rc;
    }
    *out = st;
    return SIM_OK;
}

void srch_study_free(srch_study *st)
{
    if (!st) return;
    free(st->cells);
    free(st);
}

void srch_study_cell_command(const srch_study *st, const srch_study_cell *c, char *out, int cap)
{
    int n = snprintf(out, (size_t)cap, "heptasim compare -m %s -p %s", c->model_name, c->platform_name);
    if (c->devices && n < cap) n += snprintf(out + n, (size_t)(cap - n), " --devices %d", c->devices);
    for (int i = 0; i < c->nsets && n < cap; i++) n += snprintf(out + n, (size_t)(cap - n), " --set %s", c->sets[i]);
    if (n < cap)
        snprintf(out + n, (size_t)(cap - n), " --global-batch %lld --top %d --symmetry %s --megatron-cp %s",
                 c->global_batch, st->top,
                 st->symmetry == ENG_SYM_DP ? "dp" : st->symmetry == ENG_SYM_NONE ? "none" : "tp",
                 srch_baseline_name(c->baseline));
}

/* }============================================================ the cells */

/* {============================================================= running */

/* The definition of a cell that its summary stores and a resume compares:
 * the loaded model and platform (descriptions and paths left out), the
 * batch, the baseline and the search budget. */
static cJSON *cell_json(const srch_study *st, const srch_study_cell *c)
{
    cfg_model m = c->model;
    m.description[0] = m.path[0] = '\0';
    cfg_platform p = c->platform;
    p.description[0] = p.path[0] = '\0';
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "slug", c->slug);
    cJSON_AddItemToObject(o, "model", cfg_model_to_json(&m));
    cJSON_AddItemToObject(o, "platform", cfg_platform_to_json(&p));
    cJSON_AddNumberToObject(o, "global_batch", (double)c->global_batch);
    cJSON_AddItemToObject(o, "base", cfg_strategy_fingerprint_json(&c->base));
    cJSON_AddNumberToObject(o, "pinned", c->pinned);
    cJSON_AddStringToObject(o, "megatron_cp", srch_baseline_name(c->baseline));
    cJSON_AddNumberToObject(o, "top", st->top);
    cJSON_AddStringToObject(o, "symmetry", st->symmetry == ENG_SYM_DP ? "dp" : st->symmetry == ENG_SYM_NONE ? "none" : "tp");
    cJSON *sets = cJSON_AddArrayToObject(o, "set");
    for (int i = 0; i < c->nsets; i++) cJSON_AddItemToArray(sets, cJSON_CreateString(c->sets[i]));
    return o;
}

/* path = dir/name (SIM_EINVAL when too long). */
static sim_rc join(char *out, size_t cap, const char *dir, const char *name, sim_err *err)
{
    if ((size_t)snprintf(out, cap, "%s/%s", dir, name) >= cap)
        return sim_fail(err, SIM_EINVAL, "heptasim study: %s/%s: path too long (use a shorter --out)", dir, name);
    return SIM_OK;
}

static sim_rc mkdir_p(const char *dir, sim_err *err)
{
    char buf[CFG_PATH_LEN];
    sim_strlcpy(buf, dir, sizeof buf);
    for (char *p = buf + 1;; p++) {
        bool last = *p == '\0';
        if (*p == '/' || last) {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return sim_fail(err, SIM_EIO, "heptasim study: cannot create the folder %s: %s (check --out)", buf,
                                strerror(errno));
            if (last) break;
            *p = '/';
        }
    }
    struct stat s;
    if (stat(dir, &s) != 0 || !S_ISDIR(s.st_mode))
        return sim_fail(err, SIM_EIO, "heptasim study: %s is not a folder (give another --out)", dir);
    return SIM_OK;
}

/* A copy of file src at dst. */
static sim_rc copy_file(const char *src, const char *dst, sim_err *err)
{
    char *buf = NULL;
    size_t len = 0;
    sim_rc rc = sim_read_file(src, CFG_MAX_FILE_BYTES, "input file", &buf, &len, err);
    sim_out o;
    if (rc == SIM_OK) rc = sim_out_open(&o, dst, "copy of an input", err);
    if (rc == SIM_OK) {
        if (fwrite(buf, 1, len, o.f) != len) {
            sim_out_discard(&o);
            rc = sim_fail(err, SIM_EIO, "%s: cannot write the copy of %s", dst, src);
        } else {
            rc = sim_out_commit(&o, err);
        }
    }
    free(buf);
    return rc;
}

/* inputs/: the study file, and every model and platform file it reads. */
static sim_rc copy_inputs(const srch_study *st, const char *dir, sim_err *err)
{
    char in[CFG_PATH_LEN], path[CFG_PATH_LEN], name[CFG_NAME_LEN + 8];
    sim_rc rc = join(in, sizeof in, dir, "inputs", err);
    if (rc == SIM_OK) rc = mkdir_p(in, err);
    if (rc == SIM_OK) rc = join(path, sizeof path, in, "study.json", err);
    if (rc == SIM_OK) rc = copy_file(st->path, path, err);
    for (int i = 0; i < st->ncells && rc == SIM_OK; i++) {
        const char *files[2] = {st->cells[i].model.path, st->cells[i].platform.path};
        const char *kinds[2] = {"model-", "platform-"};
        for (int k = 0; k < 2 && rc == SIM_OK; k++) {
            if (!files[k][0]) continue;
            char s[CFG_NAME_LEN];
            stem(files[k], s, sizeof s);
            snprintf(name, sizeof name, "%s%s.json", kinds[k], s);
            rc = join(path, sizeof path, in, name, err);
            struct stat sb;
            if (rc == SIM_OK && stat(path, &sb) != 0) rc = copy_file(files[k], path, err);
        }
    }
    return rc;
}

static sim_rc write_command(const char *dir, const char *command, sim_err *err)
{
    char path[CFG_PATH_LEN];
    sim_rc rc = join(path, sizeof path, dir, "command.txt", err);
    sim_out o;
    if (rc == SIM_OK) rc = sim_out_open(&o, path, "study command", err);
    if (rc != SIM_OK) return rc;
    fprintf(o.f, "%s\n", command);
    return sim_out_commit(&o, err);
}

/* A row's two bests and speed-up from a compare summary document. */
static sim_rc row_from_doc(const cJSON *doc, const char *origin, srch_study_row *row, sim_err *err)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "megatron"), *b = cJSON_GetObjectItemCaseSensitive(doc, "7d");
    sim_rc rc = SIM_OK;
    row->has_megatron = m && cJSON_IsObject(m);
    row->has_best = b && cJSON_IsObject(b);
    if (row->has_megatron) rc = srch_record_from_json(m, origin, &row->megatron, err);
    if (rc == SIM_OK && row->has_best) rc = srch_record_from_json(b, origin, &row->best, err);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "speedup");
    row->speedup = cJSON_IsNumber(s) ? s->valuedouble : NAN;
    return rc;
}

/* The summary of a finished cell, when it holds definition def: its row
 * filled, true.  False when there is none, or another definition. */
static bool finished(const char *path, const cJSON *def, srch_study_row *row)
{
    char *text = NULL;
    sim_err quiet;
    struct stat sb;
    if (stat(path, &sb) != 0 || sim_read_text(path, CFG_MAX_RECORDS_BYTES, "cell summary", &text, &quiet) != SIM_OK)
        return false;
    cJSON *doc = cJSON_Parse(text);
    free(text);
    const cJSON *have = doc ? cJSON_GetObjectItemCaseSensitive(doc, "study_cell") : NULL;
    bool same = have && cJSON_Compare(have, def, 1) && row_from_doc(doc, path, row, &quiet) == SIM_OK;
    cJSON_Delete(doc);
    return same;
}

/* Cell c's definition without what names its baseline. */
static cJSON *cell_json_but_baseline(const srch_study *st, const srch_study_cell *c)
{
    cJSON *o = cell_json(st, c);
    cJSON_DeleteItemFromObjectCaseSensitive(o, "slug");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "megatron_cp");
    return o;
}

/* The cell of the study that differs from cell i in its baseline alone
 * (the same search, so its simulations are this cell's: srch_borrow), or
 * -1. */
static int twin_of(const srch_study *st, int i)
{
    cJSON *mine = cell_json_but_baseline(st, &st->cells[i]);
    int twin = -1;
    for (int j = 0; j < st->ncells && twin < 0; j++) {
        if (st->cells[j].baseline == st->cells[i].baseline) continue;
        cJSON *other = cell_json_but_baseline(st, &st->cells[j]);
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
static sim_rc run_cell(const srch_study_run_request *rq, const srch_study_cell *c, const char *records,
                       twin_share *tw, const char *json_path, const char *html_path, const cJSON *def,
                       srch_study_row *row, sim_err *err)
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
        if (rc == SIM_OK) rc = row_from_doc(doc, json_path, row, err);
        cJSON_Delete(doc);
    }
    srch_sweep_free(&s);
    return rc;
}

bool srch_study_cell_chosen(const char *patterns, const char *slug)
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

sim_rc srch_study_run(const srch_study_run_request *rq, srch_study_result *out, sim_err *err)
{
    const srch_study *st = rq->study;
    memset(out, 0, sizeof *out);
    out->rows = sim_xcalloc((size_t)st->ncells + 1, sizeof *out->rows);
    out->nrows = st->ncells;
    char cells[CFG_PATH_LEN];
    sim_rc rc = mkdir_p(rq->out_dir, err);
    if (rc == SIM_OK) rc = join(cells, sizeof cells, rq->out_dir, "cells", err);
    if (rc == SIM_OK) rc = mkdir_p(cells, err);
    if (rc == SIM_OK) rc = copy_inputs(st, rq->out_dir, err);
    if (rc == SIM_OK && rq->command) rc = write_command(rq->out_dir, rq->command, err);
    double t0 = sim_now_s();
    int mine = 0;
    bool *chosen = sim_xcalloc((size_t)st->ncells + 1, sizeof *chosen);
    for (int i = 0; i < st->ncells; i++) {
        chosen[i] = (rq->shard_count <= 1 || i % rq->shard_count == rq->shard_index) &&
                    srch_study_cell_chosen(rq->cells, st->cells[i].slug);
        mine += chosen[i];
    }
    int done = 0;
    srch_result *pending = NULL; /* the search of the cell pending_for, run by its twin */
    int pending_for = -1;
    for (int i = 0; i < st->ncells && rc == SIM_OK; i++) {
        const srch_study_cell *c = &st->cells[i];
        srch_study_row *row = &out->rows[i];
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
        rc = join(records, sizeof records, cells, stemp, err);
        int t = chosen[i] ? twin_of(st, i) : -1;
        if (t >= 0) snprintf(stemp, sizeof stemp, "%s.jsonl", st->cells[t].slug);
        if (rc == SIM_OK && t >= 0) rc = join(twin, sizeof twin, cells, stemp, err);
        snprintf(stemp, sizeof stemp, "%s.json", c->slug);
        if (rc == SIM_OK) rc = join(json, sizeof json, cells, stemp, err);
        snprintf(stemp, sizeof stemp, "%s.html", c->slug);
        if (rc == SIM_OK) rc = join(html, sizeof html, cells, stemp, err);
        if (rc != SIM_OK) {
            srch_result_free(tw.searched);
            break;
        }
        tw.records = t >= 0 ? twin : NULL;
        tw.keep = t > i && chosen[t]; /* the twin runs next: search for it too */
        cJSON *def = cell_json(st, c);
        done += chosen[i];
        /* a cell not named is in the table if it finished earlier */
        if ((rq->resume || !chosen[i]) && finished(json, def, row)) {
            row->state = SRCH_STUDY_SKIPPED;
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
                row->state = SRCH_STUDY_FAILED;
                sim_strlcpy(row->error, why.msg, sizeof row->error);
                out->failed++;
                if (rq->log) fprintf(rq->log, "study: [%d/%d] %s: failed: %s\n", done, mine, c->slug, why.msg);
            } else {
                row->state = SRCH_STUDY_RAN;
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
                            row->speedup, row->wall_s, took);
            }
        }
        srch_result_free(tw.searched); /* the cell did not run: its twin's search is not needed */
        cJSON_Delete(def);
        if (rq->log) fflush(rq->log);
        if (row->state == SRCH_STUDY_RAN || row->state == SRCH_STUDY_SKIPPED) {
            row->reason[0] = row->keys[0] = '\0';
            srch_study_explain(row, &c->platform);
        }
    }
    srch_result_free(pending);
    free(chosen);
    out->wall_s = sim_now_s() - t0;
    return rc;
}

void srch_study_result_free(srch_study_result *r)
{
    if (!r) return;
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* }============================================================= running */

/* {========================================================== explaining */

/* Appends ", text" (or text) to out. */
static void add_word(char *out, size_t cap, const char *text)
{
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s%s", n ? ", " : "", text);
}

void srch_study_explain(srch_study_row *row, const cfg_platform *p)
{
    row->reason[0] = row->keys[0] = '\0';
    if (!row->has_best || !row->has_megatron) {
        snprintf(row->reason, sizeof row->reason, "%s", !row->has_best ? "no 7D strategy fits or was simulated"
                                                                         : "no Megatron-style strategy fits or was "
                                                                           "simulated");
        return;
    }
    const srch_candidate *b = &row->best, *m = &row->megatron;
    if (b->index == m->index) {
        snprintf(row->reason, sizeof row->reason, "the best 7D strategy is Megatron-style");
        return;
    }
    srch_reason(b, m, p, row->reason, sizeof row->reason);
    /* the keys of the 7D best that the baseline has not */
    const cfg_strategy *s = &b->strategy;
    char w[96];
    if (s->tp_y > 1) {
        snprintf(w, sizeof w, "2D TP (tp_y %d)", s->tp_y);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->cp_ulysses > 1 && row->cell->baseline != SRCH_BASELINE_A2A) {
        snprintf(w, sizeof w, "Ulysses CP (cp_ulysses %d)", s->cp_ulysses);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->fuse_tpy_cp) add_word(row->keys, sizeof row->keys, "tp_y-Ulysses fusion");
    if (s->zero > 1) {
        snprintf(w, sizeof w, "ZeRO-%d", s->zero);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->schedule > CFG_SCHED_INTERLEAVED) {
        snprintf(w, sizeof w, "schedule %s", cfg_schedule_name(s->schedule));
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->tp_x * s->tp_y > p->devices_per_node) {
        snprintf(w, sizeof w, "TP beyond a node (tp %d)", s->tp_x * s->tp_y);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (!cfg_order_megatron(s, s->order)) {
        char o[64];
        cfg_order_name(s, o, sizeof o);
        snprintf(w, sizeof w, "rank order %s", o);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (!row->keys[0] && b->megatron_style) snprintf(row->keys, sizeof row->keys, "none (Megatron-style too)");
}

/* }========================================================== explaining */

/* {============================================================ the table */

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

static void md_row(FILE *f, const srch_study_row *r, bool axis)
{
    const srch_study_cell *c = r->cell;
    char m[CFG_NAME_LEN], p[CFG_NAME_LEN];
    stem(c->model_name, m, sizeof m);
    stem(c->platform_name, p, sizeof p);
    fprintf(f, "| %s | %s (%d) | %dK | %lld | %.4g | %s |", m, p, c->platform.devices, c->seq_len / 1024,
            c->global_batch, c->hbm_gib, srch_baseline_name(c->baseline));
    if (axis) {
        if (c->axis_factor > 0)
            fprintf(f, " %s x%.3g (%.6g) |", c->axis, c->axis_factor, c->axis_value);
        else
            fprintf(f, " %s = %.6g |", c->axis, c->axis_value);
    }
    if (r->state != SRCH_STUDY_RAN && r->state != SRCH_STUDY_SKIPPED) {
        fprintf(f, " %s | | | | | | | | | |\n", r->state == SRCH_STUDY_FAILED ? "failed" : "not run");
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

static void md_breakdown(FILE *f, const srch_study *st, const srch_study_row *r)
{
    const srch_candidate *c[2] = {r->has_megatron ? &r->megatron : NULL, r->has_best ? &r->best : NULL};
    fprintf(f, "\n### %s\n\n", r->cell->slug);
    char cmd[2048];
    srch_study_cell_command(st, r->cell, cmd, sizeof cmd);
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

sim_rc srch_study_write_markdown(const char *path, const srch_study *st, const srch_study_result *r,
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
        have += r->rows[i].state == SRCH_STUDY_RAN || r->rows[i].state == SRCH_STUDY_SKIPPED;
        fast += isfinite(r->rows[i].speedup) && r->rows[i].speedup > STUDY_FAST_GAIN;
    }
    fprintf(f, "\n## Where the 7D best is more than 5 %% faster\n\n");
    if (fast == 0) fprintf(f, "In none of the %d cells with results.\n", have);
    for (int i = 0; i < st->ncells; i++) {
        const srch_study_row *w = &r->rows[i];
        if (isfinite(w->speedup) && w->speedup > STUDY_FAST_GAIN)
            fprintf(f, "- %s: %.3fx (%s%s%s)\n", w->cell->slug, w->speedup, w->reason, w->keys[0] ? "; " : "",
                    w->keys);
    }
    fprintf(f, "\n## Breakdown per cell\n");
    for (int i = 0; i < st->ncells; i++)
        if (r->rows[i].state == SRCH_STUDY_RAN || r->rows[i].state == SRCH_STUDY_SKIPPED) md_breakdown(f, st, &r->rows[i]);
    return sim_out_commit(&o, err);
}

/* {----------------------------------------------------------- the CSV */

/* A side's best: its record (srch_record_to_json), or an empty object. */
static cJSON *best_json(bool has, const srch_candidate *c)
{
    return has ? srch_record_to_json(c) : cJSON_CreateObject();
}

void *srch_study_rows_json(const srch_study *st, const srch_study_result *r)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < st->ncells; i++) {
        const srch_study_row *w = &r->rows[i];
        const srch_study_cell *c = w->cell;
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
        static const char *const states[] = {"not run", "done", "done", "failed"}; /* ORDER srch_study_state */
        cJSON_AddStringToObject(o, "state", states[w->state]);
        bool ok = w->state == SRCH_STUDY_RAN || w->state == SRCH_STUDY_SKIPPED;
        cJSON_AddItemToObject(o, "megatron", best_json(ok && w->has_megatron, &w->megatron));
        cJSON_AddItemToObject(o, "7d", best_json(ok && w->has_best, &w->best));
        if (ok && isfinite(w->speedup)) cJSON_AddNumberToObject(o, "speedup", w->speedup);
        if (ok) cJSON_AddStringToObject(o, "reason", w->reason);
        if (ok) cJSON_AddStringToObject(o, "seven_d_keys", w->keys);
        if (w->state == SRCH_STUDY_FAILED) cJSON_AddStringToObject(o, "error", w->error);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

#define BEST_COLUMNS(side)                                                                                            \
    side ".strategy.description", side ".index", side ".step_time_s", side ".mfu", side ".memory.peak_bytes",       \
        side ".breakdown.compute_s", side ".breakdown.bubble_s", side ".breakdown.optimizer_s",                       \
        side ".dimensions.tp.exposed_s", side ".dimensions.cp.exposed_s", side ".dimensions.ep.exposed_s",            \
        side ".dimensions.dp.exposed_s", side ".dimensions.pp.exposed_s"

const char *const srch_study_csv_columns[] = {
    "cell", "part", "model", "platform", "devices", "seq_len", "global_batch", "hbm_GiB", "megatron_cp", "axis",
    "axis_factor", "axis_value", "state", BEST_COLUMNS("megatron"), BEST_COLUMNS("7d"), "speedup", "reason",
    "seven_d_keys", "error", NULL};

/* }----------------------------------------------------------- the CSV */

/* }============================================================ the table */
