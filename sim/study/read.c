/* read.c - a study file read key by key: the helpers that refuse a value
 * with one line naming the file and the key, and the inputs (models,
 * platforms with their device counts and HBM sizes, sequence lengths,
 * tokens per step, CP baselines, search budget, sensitivity axes, strategy
 * keys) before they are expanded into cells.  Unknown keys follow the one
 * rule of every input (cfg_check_keys). */
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "../config/keys.h"
#include "internal.h"

/* {======================================================= reading the file */

sim_rc stdy_bad(stdy_reader *r, const char *key, const char *fmt, ...)
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
static sim_rc known_keys(stdy_reader *r, const cJSON *o, const char *where, const char *const *known)
{
    return cfg_check_keys(o, known, r->file, where, r->err);
}

/* A whole number in [lo, hi] at key. */
static sim_rc whole(stdy_reader *r, const cJSON *v, const char *key, long long lo, long long hi, long long *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble != floor(v->valuedouble) ||
        v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return stdy_bad(r, key, "must be a whole number in [%lld, %lld]", lo, hi);
    *out = (long long)v->valuedouble;
    return SIM_OK;
}

/* A finite number > 0 at key. */
static sim_rc positive(stdy_reader *r, const cJSON *v, const char *key, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || !(v->valuedouble > 0))
        return stdy_bad(r, key, "must be a number > 0");
    *out = v->valuedouble;
    return SIM_OK;
}

/* A non-empty array at key of the object o (required or not). */
static sim_rc array_at(stdy_reader *r, const cJSON *o, const char *name, const char *where, bool required,
                       const cJSON **out)
{
    char key[200];
    snprintf(key, sizeof key, "%s.%s", where, name);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, name);
    *out = NULL;
    if (!a && !required) return SIM_OK;
    if (!a) return stdy_bad(r, key, "missing (give a list)");
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1) return stdy_bad(r, key, "must be a non-empty list");
    if (cJSON_GetArraySize(a) > STDY_MAX_CELLS) return stdy_bad(r, key, "more than %d items", STDY_MAX_CELLS);
    *out = a;
    return SIM_OK;
}

/* A name or path (string) at key. */
static sim_rc name_at(stdy_reader *r, const cJSON *v, const char *key, char *out, size_t cap)
{
    if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= cap)
        return stdy_bad(r, key, "must be a name or path (at most %zu characters)", cap - 1);
    sim_strlcpy(out, v->valuestring, cap);
    return SIM_OK;
}

/* }======================================================= reading the file */

/* {=========================================================== the inputs */

static sim_rc hbm_list(stdy_reader *r, const cJSON *a, const char *where, stdy_hbm_spec *out, int *n)
{
    static const char *const keys[] = {"GiB", NULL};
    *n = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200];
        snprintf(key, sizeof key, "%s[%d]", where, *n);
        if (*n == STDY_MAX_LIST) return stdy_bad(r, key, "more than %d HBM sizes", STDY_MAX_LIST);
        stdy_hbm_spec h = {false, 0};
        sim_rc rc;
        if (cJSON_IsObject(e)) {
            if ((rc = known_keys(r, e, key, keys)) != SIM_OK) return rc;
            char k2[220];
            snprintf(k2, sizeof k2, "%s.GiB", key);
            h.absolute = true;
            rc = positive(r, cJSON_GetObjectItemCaseSensitive(e, "GiB"), k2, &h.v);
        } else {
            rc = positive(r, e, key, &h.v);
            if (rc != SIM_OK) return stdy_bad(r, key, "must be a factor of the platform's HBM (> 0) or {\"GiB\": N}");
        }
        if (rc != SIM_OK) return rc;
        out[(*n)++] = h;
    }
    return SIM_OK;
}

const char *stdy_loader_says(const char *msg)
{
    static const char lead[] = "heptasim: ";
    return strncmp(msg, lead, sizeof lead - 1) == 0 ? msg + sizeof lead - 1 : msg;
}

cJSON *stdy_platform_json(stdy_reader *r, const char *name, const char *key, char path[CFG_PATH_LEN])
{
    sim_err why = {{0}};
    cJSON *root = cfg_platform_file_json(name, path, &why);
    if (!root) stdy_bad(r, key, "%s", stdy_loader_says(why.msg));
    return root;
}

/* Platform file `name` can be read: refused at `key` when not. */
static sim_rc platform_found(stdy_reader *r, const char *name, const char *key)
{
    char path[CFG_PATH_LEN];
    cJSON *root = stdy_platform_json(r, name, key, path);
    cJSON_Delete(root);
    return root ? SIM_OK : SIM_EINVAL;
}

/* A platform entry: "name", or {"platform": name, "devices": N, "hbm": [...]}. */
static sim_rc plat_of(stdy_reader *r, const cJSON *e, const char *key, const stdy_hbm_spec *hbm, int nhbm, stdy_plat_entry *out)
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
    if (!cJSON_IsObject(e)) return stdy_bad(r, key, "must be a platform name or {\"platform\": NAME, \"devices\": N}");
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

static sim_rc names_list(stdy_reader *r, const cJSON *a, const char *where, char (*out)[SIM_MAX_PATH + 1], int *n)
{
    *n = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200];
        snprintf(key, sizeof key, "%s[%d]", where, *n);
        if (*n == STDY_MAX_LIST) return stdy_bad(r, key, "more than %d items", STDY_MAX_LIST);
        sim_rc rc = name_at(r, e, key, out[*n], sizeof out[*n]);
        if (rc != SIM_OK) return rc;
        (*n)++;
    }
    return SIM_OK;
}

static sim_rc seq_list(stdy_reader *r, const cJSON *a, const char *where, long long *out, int *n)
{
    *n = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200];
        snprintf(key, sizeof key, "%s[%d]", where, *n);
        if (*n == STDY_MAX_LIST) return stdy_bad(r, key, "more than %d items", STDY_MAX_LIST);
        sim_rc rc = whole(r, e, key, 1, CFG_MAX_WIDTH, &out[*n]);
        if (rc != SIM_OK) return rc;
        (*n)++;
    }
    return SIM_OK;
}

static sim_rc axes_list(stdy_reader *r, const cJSON *a, stdy_spec *sp)
{
    static const char *const keys[] = {"key", "factors", "values", NULL};
    sp->naxes = 0;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[200], k2[240];
        snprintf(key, sizeof key, ".sensitivity.axes[%d]", sp->naxes);
        if (sp->naxes == STDY_MAX_LIST) return stdy_bad(r, key, "more than %d axes", STDY_MAX_LIST);
        if (!cJSON_IsObject(e))
            return stdy_bad(r, key, "must be {\"key\": PLATFORM_KEY, \"factors\": [...]} or {\"key\": ..., \"values\": [...]}");
        sim_rc rc = known_keys(r, e, key, keys);
        if (rc != SIM_OK) return rc;
        stdy_axis *x = &sp->axes[sp->naxes];
        memset(x, 0, sizeof *x);
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
        snprintf(k2, sizeof k2, "%s.key", key);
        if (!cJSON_IsString(k) || !k->valuestring[0] || strlen(k->valuestring) >= sizeof x->key ||
            strspn(k->valuestring, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") !=
                strlen(k->valuestring))
            return stdy_bad(r, k2, "must be a platform key such as \"supernode.fabric_GBps\"");
        sim_strlcpy(x->key, k->valuestring, sizeof x->key);
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(e, "factors"), *v = cJSON_GetObjectItemCaseSensitive(e, "values");
        if (!!f == !!v) return stdy_bad(r, key, "give either \"factors\" or \"values\"");
        x->factors = f != NULL;
        const cJSON *list = NULL;
        rc = array_at(r, e, f ? "factors" : "values", key, true, &list);
        for (const cJSON *c = list ? list->child : NULL; c && rc == SIM_OK; c = c->next) {
            snprintf(k2, sizeof k2, "%s.%s[%d]", key, f ? "factors" : "values", x->n);
            if (x->n == STDY_MAX_LIST) return stdy_bad(r, k2, "more than %d values", STDY_MAX_LIST);
            rc = positive(r, c, k2, &x->v[x->n++]);
        }
        if (rc != SIM_OK) return rc;
        sp->naxes++;
    }
    return SIM_OK;
}

static sim_rc sensitivity_of(stdy_reader *r, const cJSON *o, const stdy_hbm_spec *hbm1, stdy_spec *sp)
{
    static const char *const keys[] = {"platform", "hbm", "models", "seq_lens", "axes", NULL};
    const char *w = ".sensitivity";
    if (!cJSON_IsObject(o)) return stdy_bad(r, w, "must be an object with \"platform\" and \"axes\"");
    sim_rc rc = known_keys(r, o, w, keys);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "platform");
    if (rc == SIM_OK && !p) return stdy_bad(r, ".sensitivity.platform", "missing (the platform whose keys vary)");
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

/* What "search" sets: compare's --top and --symmetry (a name of
 * eng_symmetry_names). */
typedef struct search_opts {
    int top;
    char symmetry[16];
} search_opts;

static const cfg_key search_rows[] = {
    {.key = "top", .type = CFG_K_INT, .offset = offsetof(search_opts, top), .min = 1, .max = CLI_MAX_TOP,
     .def = STDY_TOP_DEFAULT},
    {.key = "symmetry", .type = CFG_K_STRING, .offset = offsetof(search_opts, symmetry),
     .size = sizeof(((search_opts *)0)->symmetry), .def_str = "tp"},
    {.key = NULL},
};

/* "search": {"top": N, "symmetry": "tp" | "dp" | "none"}, read with the
 * config reader's schema rows. */
static sim_rc search_of(stdy_reader *r, const cJSON *o, stdy_study *st)
{
    st->top = STDY_TOP_DEFAULT;
    st->symmetry = ENG_SYM_TP;
    if (!o) return SIM_OK;
    if (!cJSON_IsObject(o)) return stdy_bad(r, ".search", "must be an object with \"top\" and \"symmetry\"");
    search_opts opts;
    memset(&opts, 0, sizeof opts);
    sim_rc rc = cfg_schema_read_at(search_rows, o, r->file, ".search", &opts, r->err);
    if (rc != SIM_OK) return rc;
    int sym = sim_enum_value(eng_symmetry_names, ENG_NSYMMETRIES, opts.symmetry);
    if (sym < 0) {
        char names[64];
        sim_enum_names_text(eng_symmetry_names, ENG_NSYMMETRIES, true, names, sizeof names);
        return stdy_bad(r, ".search.symmetry", "must be %s (as compare's --symmetry)", names);
    }
    st->top = opts.top;
    st->symmetry = (eng_symmetry)sym;
    return SIM_OK;
}

/* "strategy": {KEY: VALUE}: base strategy keys of every cell (compare's --set KEY=VALUE). */
static sim_rc strategy_of(stdy_reader *r, const cJSON *o, stdy_spec *sp)
{
    if (!o) return SIM_OK;
    if (!cJSON_IsObject(o)) return stdy_bad(r, ".strategy", "must be an object of strategy keys, e.g. {\"overlap_tp_backward\": true}");
    for (const cJSON *c = o->child; c; c = c->next) {
        char key[200];
        snprintf(key, sizeof key, ".strategy.%.60s", c->string);
        if (sp->nstrat == (int)(sizeof sp->strat / sizeof sp->strat[0]))
            return stdy_bad(r, key, "more than %d strategy keys", (int)(sizeof sp->strat / sizeof sp->strat[0]));
        if (!cfg_strategy_key(c->string) || strcmp(c->string, "global_batch") == 0 || strcmp(c->string, "name") == 0)
            return stdy_bad(r, key, "not a strategy key a study can set (global_batch comes from tokens_per_step)");
        char *v = cJSON_IsString(c) ? NULL : sim_json_print(c, false);
        const char *text = cJSON_IsString(c) ? c->valuestring : v;
        int n = snprintf(sp->strat[sp->nstrat], sizeof sp->strat[0], "%s=%s", c->string, text ? text : "");
        cJSON_free(v);
        if (n >= (int)sizeof sp->strat[0] || (!cJSON_IsString(c) && !cJSON_IsNumber(c) && !cJSON_IsBool(c)))
            return stdy_bad(r, key, "must be a number, true/false or a short string");
        sp->nstrat++;
    }
    const char *items[STDY_MAX_SETS];
    for (int i = 0; i < sp->nstrat; i++) items[i] = sp->strat[i];
    cfg_overrides ov = {sp->nstrat, items};
    cfg_strategy base;
    sim_err why = {{0}};
    if (srch_base_strategy(&ov, "study", &base, &why) != SIM_OK) return stdy_bad(r, ".strategy", "%s", why.msg);
    return SIM_OK;
}

sim_rc stdy_spec_of(stdy_reader *r, const cJSON *root, stdy_study *st, stdy_spec *sp)
{
    static const char *const keys[] = {"name",     "description", "models",      "platforms", "seq_lens",
                                       "tokens_per_step", "hbm",  "megatron_cp", "search",    "sensitivity",
                                       "strategy", NULL};
    if (!cJSON_IsObject(root)) return stdy_bad(r, ".", "a study file is one JSON object (see docs/study.md)");
    sim_rc rc = known_keys(r, root, "", keys);
    if (rc != SIM_OK) return rc;
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(n) || !n->valuestring[0] || strlen(n->valuestring) >= sizeof st->name ||
        strspn(n->valuestring, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
            strlen(n->valuestring) ||
        n->valuestring[0] == '.')
        return stdy_bad(r, ".name", "must be the study's folder name: letters, digits, '.', '_' and '-', at most %d",
                   (int)sizeof st->name - 1);
    sim_strlcpy(st->name, n->valuestring, sizeof st->name);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (d && (!cJSON_IsString(d) || strlen(d->valuestring) >= sizeof st->description))
        return stdy_bad(r, ".description", "must be a string of at most %d characters", (int)sizeof st->description - 1);
    if (d) sim_strlcpy(st->description, d->valuestring, sizeof st->description);

    const cJSON *a = NULL;
    stdy_hbm_spec hbm[STDY_MAX_LIST] = {{false, 1.0}};
    int nhbm = 1;
    if ((rc = array_at(r, root, "hbm", "", false, &a)) != SIM_OK) return rc;
    if (a && (rc = hbm_list(r, a, ".hbm", hbm, &nhbm)) != SIM_OK) return rc;
    if ((rc = array_at(r, root, "models", "", true, &a)) != SIM_OK) return rc;
    if ((rc = names_list(r, a, ".models", sp->models, &sp->nmodels)) != SIM_OK) return rc;
    if ((rc = array_at(r, root, "platforms", "", true, &a)) != SIM_OK) return rc;
    for (const cJSON *e = a->child; e; e = e->next) {
        char key[64];
        snprintf(key, sizeof key, ".platforms[%d]", sp->nplats);
        if (sp->nplats == STDY_MAX_LIST) return stdy_bad(r, key, "more than %d platforms", STDY_MAX_LIST);
        if ((rc = plat_of(r, e, key, hbm, nhbm, &sp->plats[sp->nplats])) != SIM_OK) return rc;
        sp->nplats++;
    }
    if ((rc = array_at(r, root, "seq_lens", "", true, &a)) != SIM_OK) return rc;
    if ((rc = seq_list(r, a, ".seq_lens", sp->seqs, &sp->nseqs)) != SIM_OK) return rc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tokens_per_step");
    if (!t) return stdy_bad(r, ".tokens_per_step", "missing (tokens of one step; the global batch is tokens / seq_len)");
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
            int b = sim_enum_value(srch_baseline_names, SRCH_NBASELINES, v);
            if (b < 0 || sp->ncps == 2 || (sp->ncps == 1 && (int)sp->cps[0] == b))
                return stdy_bad(r, key, "must be \"ring\" or \"a2a\", each at most once (as compare's --megatron-cp)");
            sp->cps[sp->ncps++] = (srch_baseline)b;
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