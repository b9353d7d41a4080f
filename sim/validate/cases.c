/* cases.c - published cases: reading results/published/<id>.json into
 * checked model, platform and strategy per run, metric names, and the
 * sources' FLOP conventions.
 *
 * A case file keeps the source's own figures ("measured", verbatim) beside
 * what heptasim compares ("runs[].compare"), and lists every setting the
 * source did not state under "assumptions".  A case that needs a feature
 * heptasim does not model names it under "not_modelled" (its model and
 * strategy are then kept as the source states them, unchecked); it is
 * loaded with no runs and reported as skipped.  A model dtype that is the
 * precision of the GEMMs ("fp8", "mxfp8") runs as a bf16 model with the
 * strategy key fp8 (and "mxfp8" with fp8_recipe mxfp8). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "../model/model.h"
#include "internal.h"

/* {========================================================== metrics */

static const char *const metric_names[VAL_NMETRICS] = { /* ORDER VAL_METRIC */
    "step_time_s", "tflops_per_device", "mfu", "layer_forward_ms", "layer_backward_ms", "layer_total_ms",
    "memory_peak_gib",
};

/* Returns the JSON name of m, "?" when out of range (static string). */
const char *val_metric_name(val_metric m)
{
    return (unsigned)m < VAL_NMETRICS ? metric_names[m] : "?";
}

/* Returns the metric called name, or -1. */
int val_metric_of(const char *name)
{
    for (int i = 0; i < VAL_NMETRICS; i++)
        if (strcmp(name, metric_names[i]) == 0) return i;
    return -1;
}

bool val_metric_is_layer(val_metric m)
{
    return m == VAL_LAYER_FORWARD_MS || m == VAL_LAYER_BACKWARD_MS || m == VAL_LAYER_TOTAL_MS;
}

/* Values are stored in the metric's unit already; MFU is shown in %. */
double val_metric_display(val_metric m, double v)
{
    return m == VAL_MFU ? 100.0 * v : v;
}

/* FLOPs per step in the source's convention.  [N21] is Narayanan et al.,
 * SC'21, eq. 3 with activation recomputation (4 passes, full attention);
 * Megatron-Core's is training.py num_floating_point_operations (r0.8):
 * 3 passes, full (non-causal) attention, GQA, gated MLP doubled, logits. */
double val_flops_per_step(val_flops f, const cfg_model *m, int global_batch)
{
    double B = global_batch, s = m->seq_len, l = m->layers, h = m->hidden, V = m->vocab;
    if (f == VAL_FLOPS_NARAYANAN21) return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
    if (f == VAL_FLOPS_MEGATRON_CORE) {
        double a = m->heads, g = m->kv_heads > 0 ? m->kv_heads : m->heads;
        double d = m->head_dim > 0 ? m->head_dim : h / a;
        double ffn = m->ffn_hidden, routed = 1.0;
        if (m->moe.experts > 0) {
            ffn = m->moe.ffn_hidden;
            routed = m->moe.top_k;
        }
        double gated = cfg_mlp_gated(m) ? 2.0 : 1.0;
        return 12.0 * B * s * l * h * h *
               ((1.0 + g / a + s / h) * (a * d / h) + ffn / h * routed * gated + V / (2.0 * l * h));
    }
    return mdl_model_flops_per_step(m, global_batch);
}

static const char *const flops_names[] = {"heptasim", "narayanan21", "megatron-core", NULL}; /* ORDER VAL_FLOPS */

/* }========================================================== */

/* {========================================================== JSON helpers */

sim_rc val_read_json(const char *path, cJSON **out, sim_err *err)
{
    char *buf = NULL;
    sim_rc rc = sim_read_text(path, CFG_MAX_FILE_BYTES, "a JSON file", &buf, err);
    if (rc != SIM_OK) return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(buf, &end, true);
    if (!root) {
        long line = 1;
        for (const char *p = buf; end && p < end; p++) line += *p == '\n';
        free(buf);
        return sim_fail(err, SIM_EINVAL, "%s: line %ld: not valid JSON (fix the syntax)", path, line);
    }
    free(buf);
    *out = root;
    return SIM_OK;
}

static void replace_item(cJSON *obj, const char *key, const cJSON *value)
{
    cJSON *copy = cJSON_Duplicate(value, true);
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, copy);
    else
        cJSON_AddItemToObject(obj, key, copy);
}

sim_rc val_apply_set(const cJSON *set, cJSON *model, cJSON *strategy, const char *origin, const char *where,
                     sim_err *err)
{
    if (!set) return SIM_OK;
    if (!cJSON_IsObject(set))
        return sim_fail(err, SIM_EINVAL, "%s: %s: expected an object of strategy keys (and \"model.KEY\")", origin,
                        where);
    for (const cJSON *it = set->child; it; it = it->next) {
        if (strncmp(it->string, "model.", 6) == 0) {
            if (!it->string[6])
                return sim_fail(err, SIM_EINVAL, "%s: %s.%s: name a model key after 'model.'", origin, where,
                                it->string);
            replace_item(model, it->string + 6, it);
        } else {
            replace_item(strategy, it->string, it);
        }
    }
    return SIM_OK;
}

/* }========================================================== */

/* {========================================================== case files */

static const char *const case_keys[] = {"id", "group", "source", "hardware", "notes", "loose", "not_modelled",
                                        "platform", "devices", "flops_formula", "targets", "assumptions",
                                        "model", "strategy", "measured", "runs", NULL};
static const char *const run_keys[] = {"name", "set", "compare", "derived", "probe_layer", NULL};
static const char *const target_keys[] = {"mean_abs_error", "max_abs_error", NULL};

/* Copies text into out[cap], or refuses text that does not fit (a cut
 * text would be written out cut). */
static sim_rc copy_text(char *out, size_t cap, const char *text, const char *origin, const char *where,
                        const char *key, sim_err *err)
{
    size_t n = strlen(text);
    if (n >= cap)
        return sim_fail(err, SIM_EINVAL, "%s: %s%s%s: %zu characters, more than the %zu it can hold (shorten it)",
                        origin, where, key[0] ? "." : "", key, n, cap - 1);
    memcpy(out, text, n + 1);
    return SIM_OK;
}

static sim_rc get_string(const cJSON *obj, const char *key, bool required, char *out, size_t cap,
                         const char *origin, const char *where, sim_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (required) return sim_fail(err, SIM_EINVAL, "%s: %s.%s: required key is missing", origin, where, key);
        out[0] = '\0';
        return SIM_OK;
    }
    if (!cJSON_IsString(it) || !it->valuestring[0])
        return sim_fail(err, SIM_EINVAL, "%s: %s.%s: expected a non-empty string", origin, where, key);
    return copy_text(out, cap, it->valuestring, origin, where, key, err);
}

static sim_rc get_number(const cJSON *obj, const char *key, double lo, double hi, double def, double *out,
                         const char *origin, const char *where, sim_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        *out = def;
        return SIM_OK;
    }
    if (!cJSON_IsNumber(it) || !(it->valuedouble >= lo && it->valuedouble <= hi))
        return sim_fail(err, SIM_EINVAL, "%s: %s.%s: expected a number in [%g, %g]", origin, where, key, lo, hi);
    *out = it->valuedouble;
    return SIM_OK;
}

/* Model dtypes a source may state that are the precision of the GEMMs, not
 * of the model: a case with one runs its model in bf16 with the strategy
 * key `key` set to true (before the runs' own "set"). */
static const struct {
    const char *dtype;
    const char *key;
    const char *recipe; /* the strategy's fp8_recipe, NULL: its own (default delayed) */
} gemm_dtypes[] = {
    {"fp8", "fp8", NULL},      /* Transformer Engine FP8, per-tensor scaling (the sources do not say which) */
    {"mxfp8", "fp8", "mxfp8"}, /* MXFP8 block scaling: the MXFP8 peak, its scales (1 byte per 32) counted */
};

/* Appends reason to out[cap] ("; " between reasons); false, changing
 * nothing, when it does not fit. */
static bool append_reason(char *out, size_t cap, const char *reason)
{
    size_t used = strlen(out), sep = used ? 2 : 0;
    if (used + sep + strlen(reason) >= cap) return false;
    snprintf(out + used, cap - used, "%s%s", sep ? "; " : "", reason);
    return true;
}

/* The row of gemm_dtypes a case's model dtype stands for, or -1. */
static int gemm_dtype_row(const cJSON *root)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "model"), "dtype");
    for (size_t i = 0; cJSON_IsString(dt) && i < sizeof gemm_dtypes / sizeof *gemm_dtypes; i++)
        if (strcmp(dt->valuestring, gemm_dtypes[i].dtype) == 0) return (int)i;
    return -1;
}

/* c->not_modelled from the case's "not_modelled" list.  *listed: the list
 * names something (the model and strategy are then left unparsed). */
static sim_rc load_not_modelled(const cJSON *root, val_case *c, bool *listed, sim_err *err)
{
    c->not_modelled[0] = '\0';
    *listed = false;
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "not_modelled");
    if (!nm) return SIM_OK;
    const cJSON *it = cJSON_IsArray(nm) ? nm->child : NULL;
    if (!it)
        return sim_fail(err, SIM_EINVAL, "%s: .not_modelled: expected a non-empty array of the features the case "
                        "needs (strings)", c->path);
    for (; it; it = it->next) {
        if (!cJSON_IsString(it) || !it->valuestring[0])
            return sim_fail(err, SIM_EINVAL, "%s: .not_modelled: expected a non-empty array of the features the "
                            "case needs (strings)", c->path);
        if (!append_reason(c->not_modelled, sizeof c->not_modelled, it->valuestring))
            return sim_fail(err, SIM_EINVAL, "%s: .not_modelled: the features take more than the %zu characters a "
                            "case can hold (shorten them)", c->path, sizeof c->not_modelled - 1);
    }
    *listed = true;
    return SIM_OK;
}

/* The platform of a case: its own name, or the -p platform when that one
 * is the same device. */
static sim_rc case_platform(const char *name, int devices, const val_load_opts *o, cfg_platform *out,
                            sim_err *err)
{
    sim_rc rc = cfg_load_platform(name, &o->ov, devices, out, err);
    if (rc != SIM_OK || !o->platform) return rc;
    cfg_platform alt;
    rc = cfg_load_platform(o->platform, &o->ov, devices, &alt, err);
    if (rc != SIM_OK) return rc;
    if (strcmp(alt.device_name, out->device_name) == 0) *out = alt;
    return SIM_OK;
}

/* The run's name, "compare" and "derived" into r (cleared first); *layer
 * tells whether a layer metric is compared. */
static sim_rc load_compare(val_run *r, const cJSON *jr, const char *origin, const char *where, bool *layer,
                           sim_err *err)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < VAL_NMETRICS; i++) r->value[i] = NAN;
    r->rc = SIM_OK;
    *layer = false;
    if (!cJSON_IsObject(jr)) return sim_fail(err, SIM_EINVAL, "%s: %s: expected an object", origin, where);
    sim_rc rc = cfg_check_keys(jr, run_keys, origin, where, err);
    if (rc == SIM_OK) rc = get_string(jr, "name", true, r->name, sizeof r->name, origin, where, err);
    if (rc != SIM_OK) return rc;
    const cJSON *cmp = cJSON_GetObjectItemCaseSensitive(jr, "compare");
    if (!cJSON_IsObject(cmp) || !cmp->child)
        return sim_fail(err, SIM_EINVAL, "%s: %s.compare: expected an object of metric: measured value", origin,
                        where);
    for (const cJSON *it = cmp->child; it; it = it->next) {
        int m = val_metric_of(it->string);
        if (m < 0) {
            char list[256] = "";
            size_t used = 0;
            for (int i = 0; i < VAL_NMETRICS; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", metric_names[i]);
            return sim_fail(err, SIM_EINVAL, "%s: %s.compare.%s: unknown metric (metrics: %s)", origin, where,
                            it->string, list);
        }
        if (!cJSON_IsNumber(it) || !(it->valuedouble > 0))
            return sim_fail(err, SIM_EINVAL, "%s: %s.compare.%s: expected a measured value > 0", origin, where,
                            it->string);
        for (int i = 0; i < r->ncmp; i++)
            if (r->cmp[i].metric == (val_metric)m)
                return sim_fail(err, SIM_EINVAL, "%s: %s.compare.%s: given twice", origin, where, it->string);
        val_compare *v = &r->cmp[r->ncmp++];
        v->metric = (val_metric)m;
        v->measured = it->valuedouble;
        v->simulated = v->error = NAN;
        *layer = *layer || val_metric_is_layer((val_metric)m);
    }
    const cJSON *der = cJSON_GetObjectItemCaseSensitive(jr, "derived");
    if (der) {
        if (!cJSON_IsArray(der))
            return sim_fail(err, SIM_EINVAL, "%s: %s.derived: expected an array of metric names", origin, where);
        const cJSON *it;
        cJSON_ArrayForEach(it, der)
        {
            int m = cJSON_IsString(it) ? val_metric_of(it->valuestring) : -1;
            int found = -1;
            for (int i = 0; i < r->ncmp; i++)
                if ((int)r->cmp[i].metric == m) found = i;
            if (found < 0)
                return sim_fail(err, SIM_EINVAL, "%s: %s.derived: every entry must name a compared metric", origin,
                                where);
            r->cmp[found].derived = true;
        }
    }
    return SIM_OK;
}

/* Run `index` of the case: its comparisons, and its model and strategy
 * parsed and checked on the platform.  gemm (-1: none): the row of
 * gemm_dtypes of the model's dtype, that of its GEMMs, run as bf16 with
 * the row's strategy key true (and its recipe). */
static sim_rc load_run(val_case *c, const cJSON *root, const cJSON *jr, int index, const val_load_opts *o,
                       const cfg_platform *platform, int gemm, sim_err *err)
{
    const char *origin = c->path;
    char where[64];
    snprintf(where, sizeof where, ".runs[%d]", index);
    val_run *r = &c->runs[index];
    bool layer = false;
    sim_rc rc = load_compare(r, jr, origin, where, &layer, err);
    if (rc != SIM_OK) return rc;

    /* model and strategy: the case's, with the run's "set" */
    cJSON *model = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, "model"), true);
    cJSON *strategy = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(root, "strategy"), true);
    if (gemm >= 0) {
        cJSON_ReplaceItemInObjectCaseSensitive(model, "dtype", cJSON_CreateString("bf16"));
        cJSON_DeleteItemFromObjectCaseSensitive(strategy, gemm_dtypes[gemm].key);
        cJSON_AddBoolToObject(strategy, gemm_dtypes[gemm].key, true);
        if (gemm_dtypes[gemm].recipe) {
            cJSON_DeleteItemFromObjectCaseSensitive(strategy, "fp8_recipe");
            cJSON_AddStringToObject(strategy, "fp8_recipe", gemm_dtypes[gemm].recipe);
        }
    }
    char swhere[80];
    snprintf(swhere, sizeof swhere, "%s.set", where);
    rc = val_apply_set(cJSON_GetObjectItemCaseSensitive(jr, "set"), model, strategy, origin, swhere, err);
    char *mtext = rc == SIM_OK ? sim_json_print(model, false) : NULL;
    char *stext = rc == SIM_OK ? sim_json_print(strategy, false) : NULL;
    cJSON_Delete(model);
    cJSON_Delete(strategy);
    char morigin[CFG_PATH_LEN + 64], sorigin[CFG_PATH_LEN + 64];
    snprintf(morigin, sizeof morigin, "%s: model of run '%s'", origin, r->name);
    snprintf(sorigin, sizeof sorigin, "%s: strategy of run '%s'", origin, r->name);
    if (rc == SIM_OK) rc = cfg_parse_model(mtext, morigin, &o->ov, &r->model, err);
    if (rc == SIM_OK) rc = cfg_parse_strategy(stext, sorigin, &o->ov, &r->strategy, err);
    cJSON_free(mtext);
    cJSON_free(stext);
    if (rc != SIM_OK) return rc;
    sim_strlcpy(r->model.name, c->id, sizeof r->model.name);
    snprintf(r->strategy.name, sizeof r->strategy.name, "%.40s/%.20s", c->id, r->name);
    r->platform = *platform;
    rc = cfg_check(&r->model, &r->platform, &r->strategy, err);
    if (rc != SIM_OK) return rc;

    double pl = -1;
    rc = get_number(jr, "probe_layer", 0, r->model.layers - 1, -1, &pl, origin, where, err);
    if (rc != SIM_OK) return rc;
    r->probe_layer = pl >= 0 ? (int)pl : r->model.layers / 2;
    if (layer && r->strategy.pp * (r->strategy.schedule == CFG_SCHED_INTERLEAVED ? r->strategy.vpp : 1) != 1)
        return sim_fail(err, SIM_EINVAL, "%s: %s: layer metrics need pp = 1 (one stage holds the timed layer)",
                        origin, where);
    return SIM_OK;
}

static sim_rc load_case(const cJSON *root, const val_load_opts *o, val_case *c, sim_err *err)
{
    const char *origin = c->path;
    if (!cJSON_IsObject(root)) return sim_fail(err, SIM_EINVAL, "%s: expected a JSON object", origin);
    sim_rc rc = cfg_check_keys(root, case_keys, origin, "", err);
    if (rc == SIM_OK) rc = get_string(root, "id", true, c->id, sizeof c->id, origin, "", err);
    if (rc == SIM_OK) rc = get_string(root, "group", true, c->group, sizeof c->group, origin, "", err);
    if (rc == SIM_OK) rc = get_string(root, "source", true, c->source, sizeof c->source, origin, "", err);
    if (rc == SIM_OK) rc = get_string(root, "hardware", false, c->hardware, sizeof c->hardware, origin, "", err);
    if (rc != SIM_OK) return rc;

    const cJSON *loose = cJSON_GetObjectItemCaseSensitive(root, "loose");
    if (loose && !cJSON_IsBool(loose))
        return sim_fail(err, SIM_EINVAL, "%s: .loose: expected true or false", origin);
    c->loose = cJSON_IsTrue(loose);

    char flops[32];
    rc = get_string(root, "flops_formula", false, flops, sizeof flops, origin, "", err);
    if (rc != SIM_OK) return rc;
    c->flops = VAL_FLOPS_HEPTASIM;
    if (flops[0]) {
        int k = -1;
        for (int i = 0; flops_names[i]; i++)
            if (strcmp(flops, flops_names[i]) == 0) k = i;
        if (k < 0)
            return sim_fail(err, SIM_EINVAL, "%s: .flops_formula: '%s' is not one of heptasim, narayanan21, "
                            "megatron-core", origin, flops);
        c->flops = (val_flops)k;
    }

    const cJSON *tg = cJSON_GetObjectItemCaseSensitive(root, "targets");
    if (tg) {
        if (!cJSON_IsObject(tg)) return sim_fail(err, SIM_EINVAL, "%s: .targets: expected an object", origin);
        rc = cfg_check_keys(tg, target_keys, origin, ".targets", err);
        if (rc == SIM_OK)
            rc = get_number(tg, "mean_abs_error", 0, 10, 0, &c->target_mean_abs, origin, ".targets", err);
        if (rc == SIM_OK) rc = get_number(tg, "max_abs_error", 0, 10, 0, &c->target_max_abs, origin, ".targets", err);
        if (rc != SIM_OK) return rc;
    }

    const cJSON *as = cJSON_GetObjectItemCaseSensitive(root, "assumptions");
    if (as) {
        if (!cJSON_IsArray(as))
            return sim_fail(err, SIM_EINVAL, "%s: .assumptions: expected an array of strings", origin);
        const cJSON *it;
        cJSON_ArrayForEach(it, as)
        {
            if (!cJSON_IsString(it))
                return sim_fail(err, SIM_EINVAL, "%s: .assumptions: expected an array of strings", origin);
            if (c->nassumptions == VAL_MAX_ASSUMPTIONS)
                return sim_fail(err, SIM_EINVAL, "%s: .assumptions: at most %d entries", origin,
                                VAL_MAX_ASSUMPTIONS);
            char where[32];
            snprintf(where, sizeof where, ".assumptions[%d]", c->nassumptions);
            rc = copy_text(c->assumptions[c->nassumptions++], VAL_TEXT_LEN, it->valuestring, origin, where, "", err);
            if (rc != SIM_OK) return rc;
        }
    }

    bool listed = false;
    rc = load_not_modelled(root, c, &listed, err);
    if (rc != SIM_OK) return rc;

    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "model")))
        return sim_fail(err, SIM_EINVAL, "%s: .model: expected a model object (the keys of a models/ file)", origin);
    if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "strategy")))
        return sim_fail(err, SIM_EINVAL, "%s: .strategy: expected a strategy object (the keys of a strategies/ file)",
                        origin);

    char pname[CFG_PATH_LEN];
    double devices = 0;
    rc = get_string(root, "platform", true, pname, sizeof pname, origin, "", err);
    if (rc == SIM_OK) rc = get_number(root, "devices", 1, 131072, 0, &devices, origin, "", err);
    if (rc != SIM_OK) return rc;
    if (devices != floor(devices))
        return sim_fail(err, SIM_EINVAL, "%s: .devices: expected a whole number", origin);
    cfg_platform platform;
    rc = case_platform(pname, (int)devices, o, &platform, err);
    if (rc != SIM_OK) return rc;

    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
    int nruns = cJSON_IsArray(runs) ? cJSON_GetArraySize(runs) : 0;
    if (nruns < 1 || nruns > VAL_MAX_RUNS)
        return sim_fail(err, SIM_EINVAL, "%s: .runs: expected an array of 1 to %d runs", origin, VAL_MAX_RUNS);
    for (int i = 0; i < nruns && rc == SIM_OK; i++) {
        const cJSON *jr = cJSON_GetArrayItem(runs, i);
        if (listed) {
            char where[64];
            bool layer;
            snprintf(where, sizeof where, ".runs[%d]", i);
            rc = load_compare(&c->runs[i], jr, origin, where, &layer, err);
        } else {
            rc = load_run(c, root, jr, i, o, &platform, gemm_dtype_row(root), err);
        }
        c->nruns = i + 1;
        for (int j = 0; j < i && rc == SIM_OK; j++)
            if (strcmp(c->runs[j].name, c->runs[i].name) == 0)
                rc = sim_fail(err, SIM_EINVAL, "%s: .runs[%d].name: '%s' is used twice", origin, i, c->runs[i].name);
    }
    /* skipped: nothing to simulate, whatever the runs would compare */
    if (rc == SIM_OK && c->not_modelled[0]) c->nruns = 0;
    return rc;
}

sim_rc val_case_load(const char *path, const val_load_opts *o, val_case *out, sim_err *err)
{
    val_load_opts none = {{0, NULL}, NULL};
    if (!o) o = &none;
    memset(out, 0, sizeof *out);
    sim_strlcpy(out->path, path, sizeof out->path);
    cJSON *root = NULL;
    sim_rc rc = val_read_json(path, &root, err);
    if (rc != SIM_OK) return rc;
    rc = load_case(root, o, out, err);
    cJSON_Delete(root);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

sim_rc val_list_dir(const char *dir, char ***paths, int *n, sim_err *err)
{
    DIR *d = opendir(dir);
    if (!d) return sim_fail(err, SIM_EINVAL, "%s: cannot read the directory: %s", dir, strerror(errno));
    char **list = NULL;
    int cnt = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.') continue;
        if (cnt == cap) {
            cap = cap ? 2 * cap : 32;
            list = sim_xrealloc(list, (size_t)cap * sizeof *list);
        }
        size_t need = strlen(dir) + len + 2;
        list[cnt] = sim_xcalloc(1, need);
        snprintf(list[cnt], need, "%s/%s", dir, e->d_name);
        cnt++;
    }
    closedir(d);
    if (cnt == 0) {
        free(list);
        return sim_fail(err, SIM_EINVAL, "%s: no .json files in the directory", dir);
    }
    qsort(list, (size_t)cnt, sizeof *list, cmp_str);
    *paths = list;
    *n = cnt;
    return SIM_OK;
}

void val_free_paths(char **paths, int n)
{
    if (!paths) return;
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

/* }========================================================== */
