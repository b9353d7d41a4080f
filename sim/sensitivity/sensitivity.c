/* sensitivity.c - each platform figure perturbed down and up, the step
 * estimated on every perturbed platform, the figures that move it most
 * simulated. */
#include "sensitivity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "../runner/runner.h"

/* The figures, as platform keys in the units of the file. */
/* SENS_TIERS: a field of every tier of network.tiers, the rest of the key
 * after "network.tiers." (a tier without it at its default). */
typedef enum { SENS_SCALE, SENS_CURVE, SENS_HALVE_DOUBLE, SENS_TIERS } sens_how;

#define TIERS_KEY "network.tiers"

static const struct {
    const char *key, *label;
    sens_how how;
} figures[] = {
    {"device.peak_tflops", "peak FLOP/s", SENS_SCALE},
    {"efficiency.gemm", "GEMM efficiency", SENS_CURVE},
    {"efficiency.gemm_fp8", "FP8 GEMM efficiency", SENS_CURVE},
    {"efficiency.grouped_gemm", "grouped GEMM efficiency", SENS_CURVE},
    {"efficiency.attention", "attention efficiency", SENS_SCALE},
    {"device.hbm_TBps", "HBM bandwidth", SENS_SCALE},
    {"supernode.fabric_GBps", "supernode fabric bandwidth", SENS_SCALE},
    {"supernode.latency_us", "supernode fabric latency", SENS_SCALE},
    {"network.nic_GBps", "NIC bandwidth", SENS_SCALE},
    {"network.latency_us", "NIC latency", SENS_SCALE},
    {"network.spine_latency_us", "spine latency", SENS_SCALE},
    {"network.oversubscription", "oversubscription", SENS_SCALE},
    {TIERS_KEY ".oversubscription", "oversubscription of every tier", SENS_TIERS},
    {TIERS_KEY ".latency_us", "latency of every tier", SENS_TIERS},
    {"supernode.devices", "supernode size", SENS_HALVE_DOUBLE},
    {"efficiency.network", "network efficiency", SENS_SCALE},
    {"efficiency.kernel_overhead_us", "kernel overhead", SENS_SCALE},
    {"efficiency.collective_step_us", "collective step latency", SENS_SCALE},
};
#define NFIGURES (int)(sizeof figures / sizeof figures[0])

static sens_how how_of(const char *key)
{
    for (int i = 0; i < NFIGURES; i++)
        if (strcmp(figures[i].key, key) == 0) return figures[i].how;
    return SENS_SCALE;
}

/* Efficiencies are fractions: a step up stops at 1. */
static bool is_fraction(const char *key)
{
    return strncmp(key, "efficiency.", 11) == 0 && strstr(key, "_us") == NULL;
}

/* The tiers of root with field (oversubscription, latency_us) times
 * factor in each, as the override of network.tiers into out; false with
 * why when no tier changes. */
static bool scale_tiers(const cJSON *root, const char *field, double factor, char *out, size_t cap, char *why,
                        size_t why_cap)
{
    const cJSON *tiers = cfg_json_at(root, TIERS_KEY);
    if (!cJSON_IsArray(tiers) || cJSON_GetArraySize(tiers) == 0) {
        snprintf(why, why_cap, "the platform has no %s", TIERS_KEY);
        return false;
    }
    bool over = strcmp(field, "oversubscription") == 0, changed = false;
    cJSON *c = cJSON_Duplicate(tiers, 1);
    cJSON *t;
    cJSON_ArrayForEach(t, c)
    {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, field);
        double x = cJSON_IsNumber(v) ? v->valuedouble : over ? 1.0 : 0.0, y = x * factor;
        if (over) y = fmax(1.0, y);
        if (y == x) continue;
        changed = true;
        cJSON_DeleteItemFromObjectCaseSensitive(t, field);
        cJSON_AddNumberToObject(t, field, y);
    }
    char *text = changed ? sim_json_print(c, false) : NULL;
    cJSON_Delete(c);
    bool ok = text && (size_t)snprintf(out, cap, "platform.%s=%s", TIERS_KEY, text) < cap;
    if (!changed)
        snprintf(why, why_cap, "every tier's %s is %s", field, over ? "at its bound (1)" : "0: a step of it changes nothing");
    else if (!ok)
        snprintf(why, why_cap, "the tiers are too long to override");
    cJSON_free(text);
    return ok;
}

bool sens_override(const cfg_platform *p, const char *key, double factor, char *out, size_t cap, double *value,
                   char *why, size_t why_cap)
{
    cJSON *root = cfg_platform_to_json(p);
    if (how_of(key) == SENS_TIERS) {
        bool ok = scale_tiers(root, key + strlen(TIERS_KEY "."), factor, out, cap, why, why_cap);
        *value = factor;
        cJSON_Delete(root);
        return ok;
    }
    const cJSON *v = cfg_json_at(root, key);
    bool ok = false;
    if (!v) {
        snprintf(why, why_cap, "the platform has no %s", key);
    } else if (how_of(key) == SENS_CURVE && cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0) {
        cJSON *c = cJSON_Duplicate(v, 1);
        const cJSON *pt;
        cJSON_ArrayForEach(pt, c)
        {
            cJSON *y = cJSON_GetArrayItem(pt, 1);
            if (cJSON_IsNumber(y)) cJSON_SetNumberValue(y, fmin(1.0, y->valuedouble * factor));
        }
        char *text = sim_json_print(c, false);
        cJSON_Delete(c);
        ok = text && (size_t)snprintf(out, cap, "platform.%s=%s", key, text) < cap;
        if (!ok) snprintf(why, why_cap, "the curve %s is too long to override", key);
        cJSON_free(text);
        *value = factor;
    } else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        double y = x * factor;
        if (how_of(key) == SENS_HALVE_DOUBLE) y = round(y);
        if (is_fraction(key)) y = fmin(1.0, y);
        if (strcmp(key, "network.oversubscription") == 0) y = fmax(1.0, y);
        char num[SIM_NUMBER_TEXT];
        sim_number_text(y, num);
        if (x == 0)
            snprintf(why, why_cap, "%s is 0: a step of it changes nothing", key);
        else if (y == x)
            snprintf(why, why_cap, "%s is at its bound (%g)", key, x);
        else
            ok = (size_t)snprintf(out, cap, "platform.%s=%s", key, num) < cap;
        *value = y;
    } else {
        snprintf(why, why_cap, "%s is not a number", key);
    }
    cJSON_Delete(root);
    return ok;
}

/* One perturbed point: its platform loaded through the overrides, the
 * strategy checked on it, the step estimated. */
static void perturb(const sens_request *rq, const char *key, double factor, rpt_sens_point *pt, cfg_platform *pp,
                    cfg_strategy *ps)
{
    char set[2048];
    memset(pt, 0, sizeof *pt);
    if (!sens_override(rq->platform, key, factor, set, sizeof set, &pt->value, pt->why, sizeof pt->why)) return;
    const char **items = sim_xcalloc((size_t)rq->ov.n + 1, sizeof *items);
    for (int i = 0; i < rq->ov.n; i++) items[i] = rq->ov.items[i];
    items[rq->ov.n] = set;
    cfg_overrides ov = {rq->ov.n + 1, items};
    sim_err err = {{0}};
    sim_rc rc = cfg_load_platform(rq->platform_name, &ov, rq->devices, pp, &err);
    free(items);
    *ps = *rq->strategy;
    if (rc == SIM_OK) rc = cfg_check(rq->model, pp, ps, &err);
    est_result est = {0};
    if (rc == SIM_OK) {
        est_estimator *e = est_new(rq->model, pp, &err);
        rc = e ? est_step(e, ps, &est, &err) : SIM_EINVAL;
        est_free(e);
    }
    if (rc != SIM_OK) {
        sim_strlcpy(pt->why, err.msg, sizeof pt->why);
        return;
    }
    pt->applicable = true;
    pt->estimate_s = est.step_s;
}

/* Row a before row b: the larger swing first. */
static int cmp_swing(const rpt_sens_row *x, const rpt_sens_row *y)
{
    if (x->swing != y->swing) return x->swing > y->swing ? -1 : 1;
    return 0;
}

/* The largest |relative change| of a row's estimates. */
static double swing_of(const rpt_sens_row *r, double base)
{
    double s = 0;
    if (r->low.applicable) s = fmax(s, fabs(r->low.estimate_s / base - 1));
    if (r->high.applicable) s = fmax(s, fabs(r->high.estimate_s / base - 1));
    return s;
}

/* The best strategy by estimate of rq's space on platform p (keep 1, the
 * strategy's global batch): its compact form into best and its estimate.
 * False when the search fails or keeps nothing (best says why). */
static bool best_on(const sens_request *rq, srch_space space, const cfg_platform *p, char *best, size_t cap,
                    double *est_s)
{
    srch_request q;
    memset(&q, 0, sizeof q);
    sim_err err = {{0}};
    if (srch_base_strategy(&rq->ov, "search", &q.base, &err) != SIM_OK) {
        sim_strlcpy(best, err.msg, cap);
        return false;
    }
    q.base.global_batch = rq->strategy->global_batch;
    q.model = rq->model;
    q.platform = p;
    q.pinned = srch_pins_of_overrides(&rq->ov, &q.base);
    q.space = space;
    q.keep = 1;
    q.jobs = rq->jobs;
    srch_result *res = NULL;
    if (srch_run(&q, &res, &err) != SIM_OK) {
        sim_strlcpy(best, err.msg, cap);
        return false;
    }
    bool ok = res->nbest > 0;
    if (ok) {
        cfg_strategy_compact(&res->best[0].strategy, best, cap);
        *est_s = res->best[0].est.step_s;
    } else {
        snprintf(best, cap, "no strategy fits");
    }
    srch_result_free(res);
    return ok;
}

/* What a simulated case stands for: its row and end (-1: the base). */
typedef struct sim_tag {
    int row, end;
} sim_tag;

sim_rc sens_run(const sens_request *rq, sens_result *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    est_result base = {0};
    est_estimator *e = est_new(rq->model, rq->platform, err);
    sim_rc rc = e ? est_step(e, rq->strategy, &base, err) : SIM_EINVAL;
    est_free(e);
    if (rc != SIM_OK) return rc;
    out->estimate_s = base.step_s;
    /* Each row's perturbed platforms and strategies, kept for the
     * simulations: [2 * row + end]. */
    cfg_platform *plats = sim_xcalloc(2 * NFIGURES, sizeof *plats);
    cfg_strategy *strats = sim_xcalloc(2 * NFIGURES, sizeof *strats);
    out->rows = sim_xcalloc(NFIGURES, sizeof *out->rows);
    for (int i = 0; i < NFIGURES; i++) {
        cJSON *root = cfg_platform_to_json(rq->platform);
        bool tiers = figures[i].how == SENS_TIERS;
        const cJSON *at = cfg_json_at(root, tiers ? TIERS_KEY : figures[i].key);
        bool present = at && (!tiers || cJSON_GetArraySize(at) > 0);
        cJSON_Delete(root);
        if (!present) continue; /* an optional curve, or tiers, the platform has not */
        rpt_sens_row *r = &out->rows[out->nrows];
        r->key = figures[i].key;
        r->label = figures[i].label;
        r->curve = figures[i].how == SENS_CURVE;
        r->tiers = tiers;
        double lo = figures[i].how == SENS_HALVE_DOUBLE ? 0.5 : 1 - rq->step;
        double hi = figures[i].how == SENS_HALVE_DOUBLE ? 2.0 : 1 + rq->step;
        char why[64];
        char dummy[2048];
        r->value = 1;
        if (!r->curve && !r->tiers)
            sens_override(rq->platform, r->key, 1.0, dummy, sizeof dummy, &r->value, why, sizeof why);
        perturb(rq, r->key, lo, &r->low, &plats[2 * out->nrows], &strats[2 * out->nrows]);
        perturb(rq, r->key, hi, &r->high, &plats[2 * out->nrows + 1], &strats[2 * out->nrows + 1]);
        r->swing = swing_of(r, base.step_s);
        out->nrows++;
    }
    /* simulations: the base and both ends of the first rq->simulate rows */
    rc = SIM_OK;
    if (rq->simulate > 0) {
        /* rows sorted in place with their platforms */
        int n = out->nrows;
        int *idx = sim_xcalloc((size_t)n + 1, sizeof *idx);
        for (int i = 0; i < n; i++) idx[i] = i;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (cmp_swing(&out->rows[idx[j]], &out->rows[idx[i]]) < 0 ||
                    (out->rows[idx[j]].swing == out->rows[idx[i]].swing && idx[j] < idx[i])) {
                    int t = idx[i];
                    idx[i] = idx[j];
                    idx[j] = t;
                }
        int ns = rq->simulate < n ? rq->simulate : n;
        run_case *cases = sim_xcalloc((size_t)(2 * ns + 1), sizeof *cases);
        sim_tag *tags = sim_xcalloc((size_t)(2 * ns + 1), sizeof *tags);
        int nc = 0;
        cases[nc].model = *rq->model;
        cases[nc].platform = *rq->platform;
        cases[nc].strategy = *rq->strategy;
        tags[nc++] = (sim_tag){-1, 0};
        for (int i = 0; i < ns; i++) {
            int r = idx[i];
            for (int end = 0; end < 2; end++) {
                rpt_sens_point *pt = end ? &out->rows[r].high : &out->rows[r].low;
                if (!pt->applicable) continue;
                cases[nc].model = *rq->model;
                cases[nc].platform = plats[2 * r + end];
                cases[nc].strategy = strats[2 * r + end];
                tags[nc++] = (sim_tag){r, end};
            }
        }
        for (int i = 0; i < nc; i++) cases[i].user = &tags[i];
        rc = runner_simulate_all(cases, nc, rq->jobs, NULL, NULL, err);
        for (int i = 0; rc == SIM_OK && i < nc; i++) {
            if (cases[i].rc != SIM_OK) {
                if (out->failed++ == 0) sim_strlcpy(out->first_failure, cases[i].msg, sizeof out->first_failure);
                continue;
            }
            if (tags[i].row < 0) {
                out->simulated = true;
                out->simulated_s = cases[i].result.step_time_s;
            } else {
                rpt_sens_point *pt = tags[i].end ? &out->rows[tags[i].row].high : &out->rows[tags[i].row].low;
                pt->simulated = true;
                pt->simulated_s = cases[i].result.step_time_s;
            }
        }
        if (rc == SIM_OK && rq->search) {
            out->space = srch_megatron_style(rq->strategy, rq->platform, SRCH_BASELINE_RING) ? SRCH_SPACE_MEGATRON
                                                                                           : SRCH_SPACE_7D;
            out->searched = best_on(rq, out->space, rq->platform, out->best, sizeof out->best, &out->best_estimate_s);
            for (int i = 0; out->searched && i < ns; i++)
                for (int end = 0; end < 2; end++) {
                    int r = idx[i];
                    rpt_sens_point *pt = end ? &out->rows[r].high : &out->rows[r].low;
                    if (!pt->applicable) continue;
                    pt->searched = best_on(rq, out->space, &plats[2 * r + end], pt->best, sizeof pt->best,
                                           &pt->best_estimate_s);
                }
        }
        free(cases);
        free(tags);
        free(idx);
    }
    free(plats);
    free(strats);
    /* the rows in their order: by swing, ties in table order */
    int n = out->nrows;
    for (int i = 1; i < n; i++) { /* insertion sort: stable */
        rpt_sens_row t = out->rows[i];
        int j = i - 1;
        while (j >= 0 && out->rows[j].swing < t.swing) {
            out->rows[j + 1] = out->rows[j];
            j--;
        }
        out->rows[j + 1] = t;
    }
    if (rc != SIM_OK) sens_result_free(out);
    return rc;
}

void sens_result_free(sens_result *r)
{
    if (!r) return;
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}
