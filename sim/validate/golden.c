/* golden.c - the regression suite: small stored scenarios
 * (results/golden/<name>.json) simulated again and compared metric by
 * metric with their stored results, or re-blessed.
 *
 * A scenario file holds its inputs (model, platform, strategy: names or
 * paths; devices; "set": --set items), optional tolerances and, under
 * "metrics", the stored results: every number and flag of the run's JSON
 * document (rpt_run_to_json) flattened to dotted keys, except the echo of
 * the inputs and the simulator's wall time and version.  A metric moved
 * when |now - stored| > tol * |stored| + 1e-12 (tol relative, default
 * 1e-6, "tolerance": {"default": t, "<key>": t, ...}).  A stored metric
 * that is no longer produced is a regression too; a new one is only
 * noted.  --bless rewrites "metrics" in place, so the version control diff
 * shows the numbers that changed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../report/report.h"
#include "../runner/runner.h"
#include "internal.h"

#define GOLDEN_DEFAULT_TOL 1e-6
#define GOLDEN_ABS_FLOOR 1e-12

struct val_golden {
    char path[CFG_PATH_LEN];
    char name[CFG_NAME_LEN];
    cJSON *root;               /* the file, kept for --bless */
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
    double tol_default;
};

static const char *const golden_keys[] = {"name", "description", "model", "platform", "strategy", "devices",
                                          "set", "tolerance", "metrics", NULL};

const char *val_golden_name(const val_golden *g)
{
    return g->name;
}

void val_golden_free(val_golden *g)
{
    if (!g) return;
    cJSON_Delete(g->root);
    free(g);
}

static sim_rc input_name(const cJSON *root, const char *key, const char *path, const char **out, sim_err *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!cJSON_IsString(it) || !it->valuestring[0])
        return sim_fail(err, SIM_EINVAL, "%s: .%s: expected a name from %s/ or a path", path, key,
                        strcmp(key, "model") == 0 ? "models" : strcmp(key, "platform") == 0 ? "platforms" : "strategies");
    *out = it->valuestring;
    return SIM_OK;
}

sim_rc val_golden_load(const char *path, val_golden **out, sim_err *err)
{
    cJSON *root = NULL;
    sim_rc rc = val_read_json(path, &root, err);
    if (rc != SIM_OK) return rc;
    val_golden *g = sim_xcalloc(1, sizeof *g);
    g->root = root;
    sim_strlcpy(g->path, path, sizeof g->path);
    g->tol_default = GOLDEN_DEFAULT_TOL;
    if (!cJSON_IsObject(root)) rc = sim_fail(err, SIM_EINVAL, "%s: expected a JSON object", path);
    if (rc == SIM_OK) rc = cfg_check_keys(root, golden_keys, path, "", err);

    const char *model = NULL, *platform = NULL, *strategy = NULL;
    if (rc == SIM_OK) rc = input_name(root, "model", path, &model, err);
    if (rc == SIM_OK) rc = input_name(root, "platform", path, &platform, err);
    if (rc == SIM_OK) rc = input_name(root, "strategy", path, &strategy, err);

    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (rc == SIM_OK && name && !cJSON_IsString(name)) rc = sim_fail(err, SIM_EINVAL, "%s: .name: expected a string", path);
    if (rc == SIM_OK) {
        if (name) {
            sim_strlcpy(g->name, name->valuestring, sizeof g->name);
        } else {
            const char *base = strrchr(path, '/');
            sim_strlcpy(g->name, base ? base + 1 : path, sizeof g->name);
            char *dot = strstr(g->name, ".json");
            if (dot) *dot = '\0';
        }
    }

    int devices = 0;
    const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "devices");
    if (rc == SIM_OK && dev) {
        if (!cJSON_IsNumber(dev) || dev->valuedouble < 1 || dev->valuedouble != floor(dev->valuedouble) ||
            dev->valuedouble > CFG_MAX_DEVICES)
            rc = sim_fail(err, SIM_EINVAL, "%s: .devices: expected a whole number in [1, %d]", path, CFG_MAX_DEVICES);
        else
            devices = (int)dev->valuedouble;
    }

    const char *items[VAL_GOLDEN_MAX_SET];
    int nitems = 0;
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(root, "set");
    if (rc == SIM_OK && set) {
        const cJSON *it;
        if (!cJSON_IsArray(set)) rc = sim_fail(err, SIM_EINVAL, "%s: .set: expected an array of \"KEY=VALUE\"", path);
        cJSON_ArrayForEach(it, set)
        {
            if (rc != SIM_OK) break;
            if (!cJSON_IsString(it) || !strchr(it->valuestring, '=') || it->valuestring[0] == '=')
                rc = sim_fail(err, SIM_EINVAL, "%s: .set[%d]: expected \"KEY=VALUE\" (as for --set)", path, nitems);
            else if (nitems == VAL_GOLDEN_MAX_SET)
                rc = sim_fail(err, SIM_EINVAL, "%s: .set: at most %d items", path, VAL_GOLDEN_MAX_SET);
            else
                items[nitems++] = it->valuestring;
        }
    }

    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(root, "tolerance");
    if (rc == SIM_OK && tol) {
        if (!cJSON_IsObject(tol))
            rc = sim_fail(err, SIM_EINVAL, "%s: .tolerance: expected an object of metric: relative tolerance", path);
        for (const cJSON *it = tol ? tol->child : NULL; rc == SIM_OK && it; it = it->next) {
            if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0))
                rc = sim_fail(err, SIM_EINVAL, "%s: .tolerance.%s: expected a relative tolerance >= 0", path,
                              it->string);
            else if (strcmp(it->string, "default") == 0)
                g->tol_default = it->valuedouble;
        }
    }
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(root, "metrics");
    if (rc == SIM_OK && metrics && !cJSON_IsObject(metrics))
        rc = sim_fail(err, SIM_EINVAL, "%s: .metrics: expected an object (written by 'heptasim regress --bless')", path);
    for (const cJSON *it = metrics ? metrics->child : NULL; rc == SIM_OK && it; it = it->next) {
        if (!(cJSON_IsNumber(it) && isfinite(it->valuedouble)) && !cJSON_IsBool(it)) {
            char *got = cJSON_PrintUnformatted(it);
            rc = sim_fail(err, SIM_EINVAL,
                          "%s: .metrics.%s: expected a number or true/false, got %.40s (re-bless with 'heptasim "
                          "regress --bless %s')",
                          path, it->string, got ? got : "?", path);
            cJSON_free(got);
        }
        for (const cJSON *d = metrics->child; rc == SIM_OK && d != it; d = d->next)
            if (strcmp(d->string, it->string) == 0)
                rc = sim_fail(err, SIM_EINVAL, "%s: .metrics.%s: duplicate key (keep one)", path, it->string);
    }

    cfg_overrides ov = {nitems, items};
    if (rc == SIM_OK) rc = cfg_load_model(model, &ov, &g->m, err);
    if (rc == SIM_OK) rc = cfg_load_platform(platform, &ov, devices, &g->p, err);
    if (rc == SIM_OK) rc = cfg_load_strategy(strategy, &ov, &g->s, err);
    if (rc == SIM_OK) rc = cfg_check(&g->m, &g->p, &g->s, err);
    if (rc != SIM_OK) {
        val_golden_free(g);
        return rc;
    }
    *out = g;
    return SIM_OK;
}

/* {========================================================== metrics */

typedef struct metric {
    char key[96];
    double v;
    bool is_bool;
} metric;

typedef struct metric_list {
    metric *a;
    int n, cap;
} metric_list;

static void push(metric_list *l, const char *key, double v, bool is_bool)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->a = sim_xrealloc(l->a, (size_t)l->cap * sizeof *l->a);
    }
    metric *m = &l->a[l->n++];
    sim_strlcpy(m->key, key, sizeof m->key);
    m->v = v;
    m->is_bool = is_bool;
}

/* Inputs echoed back and what changes from run to run are not results. */
static bool excluded(const char *key)
{
    return strcmp(key, "strategy") == 0 || strcmp(key, "model") == 0 || strcmp(key, "platform") == 0 ||
           strcmp(key, "simulator.wall_s") == 0 || strcmp(key, "simulator.version") == 0;
}

static void flatten(const cJSON *node, const char *prefix, metric_list *out)
{
    for (const cJSON *it = node->child; it; it = it->next) {
        char key[96];
        snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", it->string ? it->string : "?");
        if (excluded(key)) continue;
        if (cJSON_IsObject(it))
            flatten(it, key, out);
        else if (cJSON_IsNumber(it))
            push(out, key, it->valuedouble, false);
        else if (cJSON_IsBool(it))
            push(out, key, cJSON_IsTrue(it) ? 1.0 : 0.0, true);
    }
}

static double tolerance_of(const val_golden *g, const char *key)
{
    const cJSON *tol = cJSON_GetObjectItemCaseSensitive(g->root, "tolerance");
    const cJSON *it = tol ? cJSON_GetObjectItemCaseSensitive(tol, key) : NULL;
    return cJSON_IsNumber(it) ? it->valuedouble : g->tol_default;
}

/* }========================================================== */

typedef struct regress_ctx {
    val_golden **g;
    metric_list *now;
    const val_regress_opts *o;
} regress_ctx;

static void on_done(run_case *c, void *ctx)
{
    regress_ctx *rc = ctx;
    int i = (int)(long)c->user;
    if (c->rc != SIM_OK) return;
    rpt_run run;
    memset(&run, 0, sizeof run);
    run.model = &c->model;
    run.platform = &c->platform;
    run.strategy = &c->strategy;
    run.sim = &c->result;
    run.memory_stage = mdl_peak_memory(&c->model, &c->strategy, &run.memory);
    run.wall_s = 0.0;
    cJSON *doc = rpt_run_to_json(&run);
    flatten(doc, "", &rc->now[i]);
    cJSON_Delete(doc);
    (void)rc->g;
}

/* True when key is one of the metrics l holds. */
static bool has_metric(const metric_list *l, const char *key)
{
    for (int k = 0; k < l->n; k++)
        if (strcmp(l->a[k].key, key) == 0) return true;
    return false;
}

/* Every stored metric and every tolerance is about a metric the run gives:
 * an unknown name ("fast") is a mistake in the file, not a moved metric.
 * Checked on the scenarios that simulated. */
static sim_rc known_names(val_golden **g, int n, const run_case *cases, const metric_list *now, sim_err *err)
{
    for (int i = 0; i < n; i++) {
        if (cases[i].rc != SIM_OK) continue;
        static const char *const parts[] = {"metrics", "tolerance"};
        for (int p = 0; p < 2; p++) {
            const cJSON *obj = cJSON_GetObjectItemCaseSensitive(g[i]->root, parts[p]);
            for (const cJSON *it = obj ? obj->child : NULL; it; it = it->next) {
                if (p == 1 && strcmp(it->string, "default") == 0) continue;
                if (has_metric(&now[i], it->string)) continue;
                return sim_fail(err, SIM_EINVAL,
                                "%s: .%s.%s: not a metric of a run (the numbers and flags of 'heptasim run --json', "
                                "e.g. step_time_s, memory.peak_bytes); fix the name, or re-bless with 'heptasim "
                                "regress --bless %s'",
                                g[i]->path, parts[p], it->string, g[i]->path);
            }
        }
    }
    return SIM_OK;
}

static cJSON *number_json(double v, bool is_bool)
{
    return is_bool ? cJSON_CreateBool(v != 0.0) : cJSON_CreateNumber(v);
}

sim_rc val_regress(val_golden **g, int n, const val_regress_opts *o, int *moved, void **json, sim_err *err)
{
    FILE *out = o->out ? o->out : stdout;
    *moved = 0;
    if (json) *json = NULL;
    run_case *cases = sim_xcalloc((size_t)(n ? n : 1), sizeof *cases);
    metric_list *now = sim_xcalloc((size_t)(n ? n : 1), sizeof *now);
    for (int i = 0; i < n; i++) {
        cases[i].model = g[i]->m;
        cases[i].platform = g[i]->p;
        cases[i].strategy = g[i]->s;
        cases[i].user = (void *)(long)i;
    }
    regress_ctx ctx = {g, now, o};
    sim_rc rc = runner_simulate_all(cases, n, o->jobs > 0 ? o->jobs : 1, on_done, &ctx, err);
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "scenarios");
    int failed = 0, compared = 0, fresh = 0;
    if (rc == SIM_OK && !o->bless) rc = known_names(g, n, cases, now, err);
    if (rc == SIM_OK && !o->bless)
        fprintf(out, "%-28s %-34s %14s %14s %10s %9s\n", "scenario", "metric", "stored", "now", "change", "tolerance");
    for (int i = 0; rc == SIM_OK && i < n; i++) {
        cJSON *sj = cJSON_CreateObject();
        cJSON_AddStringToObject(sj, "name", g[i]->name);
        cJSON_AddStringToObject(sj, "file", g[i]->path);
        cJSON_AddItemToArray(arr, sj);
        if (cases[i].rc != SIM_OK) {
            failed++;
            fprintf(out, "%-28.28s simulation failed: %s\n", g[i]->name, cases[i].msg);
            cJSON_AddStringToObject(sj, "error", cases[i].msg);
            continue;
        }
        if (o->bless) {
            cJSON *m = cJSON_CreateObject();
            for (int k = 0; k < now[i].n; k++)
                cJSON_AddItemToObject(m, now[i].a[k].key, number_json(now[i].a[k].v, now[i].a[k].is_bool));
            if (cJSON_GetObjectItemCaseSensitive(g[i]->root, "metrics"))
                cJSON_ReplaceItemInObjectCaseSensitive(g[i]->root, "metrics", m);
            else
                cJSON_AddItemToObject(g[i]->root, "metrics", m);
            rc = rpt_write_json_doc(g[i]->path, g[i]->root, "golden results", err);
            if (rc == SIM_OK && !o->quiet) fprintf(out, "blessed %s: %d metrics written to %s\n", g[i]->name, now[i].n, g[i]->path);
            cJSON_AddNumberToObject(sj, "metrics", now[i].n);
            continue;
        }
        const cJSON *stored = cJSON_GetObjectItemCaseSensitive(g[i]->root, "metrics");
        cJSON *mv = cJSON_AddArrayToObject(sj, "moved");
        int here = 0;
        if (!stored) {
            fprintf(out, "%-28.28s no stored metrics: run 'heptasim regress --bless %s' to store them\n", g[i]->name,
                    g[i]->path);
            (*moved)++;
            cJSON_AddStringToObject(sj, "error", "no stored metrics");
            continue;
        }
        for (const cJSON *it = stored->child; it; it = it->next) {
            const metric *cur = NULL;
            for (int k = 0; k < now[i].n; k++)
                if (strcmp(now[i].a[k].key, it->string) == 0) cur = &now[i].a[k];
            double was = cJSON_IsBool(it) ? (cJSON_IsTrue(it) ? 1.0 : 0.0) : it->valuedouble;
            double tol = tolerance_of(g[i], it->string);
            compared++;
            bool bad;
            if (!cur)
                bad = true;
            else if (cur->is_bool || cJSON_IsBool(it))
                bad = cur->v != was;
            else
                bad = !(fabs(cur->v - was) <= tol * fabs(was) + GOLDEN_ABS_FLOOR);
            if (!bad) continue;
            here++;
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "metric", it->string);
            cJSON_AddItemToObject(e, "stored", number_json(was, cJSON_IsBool(it)));
            if (cur) {
                cJSON_AddItemToObject(e, "now", number_json(cur->v, cur->is_bool));
                if (was != 0 && !cur->is_bool) cJSON_AddNumberToObject(e, "change", (cur->v - was) / fabs(was));
            } else {
                cJSON_AddNullToObject(e, "now");
            }
            cJSON_AddNumberToObject(e, "tolerance", tol);
            cJSON_AddItemToArray(mv, e);
            if (!cur) {
                fprintf(out, "%-28.28s %-34.34s %14.6g %14s %10s %9.2g\n", g[i]->name, it->string, was, "missing", "",
                        tol);
            } else if (was != 0 && !cur->is_bool) {
                fprintf(out, "%-28.28s %-34.34s %14.6g %14.6g %+9.3g%% %9.2g\n", g[i]->name, it->string, was, cur->v,
                        100.0 * (cur->v - was) / fabs(was), tol);
            } else {
                fprintf(out, "%-28.28s %-34.34s %14.6g %14.6g %10s %9.2g\n", g[i]->name, it->string, was, cur->v, "",
                        tol);
            }
        }
        for (int k = 0; k < now[i].n; k++)
            if (!cJSON_GetObjectItemCaseSensitive(stored, now[i].a[k].key)) {
                fresh++;
                if (!o->quiet)
                    fprintf(out, "%-28.28s %-34.34s %14s %14.6g %10s (new: not stored yet)\n", g[i]->name,
                            now[i].a[k].key, "-", now[i].a[k].v, "");
            }
        *moved += here;
        cJSON_AddNumberToObject(sj, "compared", (double)cJSON_GetArraySize(stored));
        cJSON_AddNumberToObject(sj, "moved_count", here);
    }
    if (rc == SIM_OK && !o->bless) {
        fprintf(out, "%d scenarios, %d stored metrics: %d moved beyond tolerance", n, compared, *moved);
        if (failed) fprintf(out, ", %d scenarios failed to simulate", failed);
        if (fresh) fprintf(out, ", %d new metrics not stored yet", fresh);
        fprintf(out, "\n");
    }
    cJSON_AddNumberToObject(root, "moved", *moved);
    cJSON_AddNumberToObject(root, "failed", failed);
    if (rc == SIM_OK && failed)
        rc = sim_fail(err, SIM_EINTERNAL, "heptasim regress: %d scenario(s) failed to simulate", failed);
    if (json && rc == SIM_OK)
        *json = root;
    else
        cJSON_Delete(root);
    for (int i = 0; i < n; i++) free(now[i].a);
    free(now);
    free(cases);
    return rc;
}
