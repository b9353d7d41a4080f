/* calibration.c - a calibration as it is reported: the fitted parameters
 * with their uncertainty, warnings about parameters the data pushed to
 * their bounds, the errors before and after, the leave-one-out statistics,
 * the JSON document and the calibrated platform file. */
#define _DEFAULT_SOURCE /* realpath */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "internal.h"


/* {========================================================= statistics */

void val_loo_stats_compute(const double *loo, int n, val_loo_stats *out)
{
    memset(out, 0, sizeof *out);
    double sum = 0;
    for (int i = 0; loo && i < n; i++)
        if (isfinite(loo[i])) {
            sum += fabs(loo[i]);
            out->max_abs = fmax(out->max_abs, fabs(loo[i]));
            out->n++;
        }
    if (out->n) out->mean_abs = sum / out->n;
}

int val_targets_only(val_case *cases, int n, int *loose, int *not_modelled)
{
    int k = 0;
    *loose = *not_modelled = 0;
    for (int i = 0; i < n; i++) {
        if (cases[i].loose) {
            (*loose)++;
            continue;
        }
        if (cases[i].not_modelled[0]) {
            (*not_modelled)++;
            continue;
        }
        if (k != i) cases[k] = cases[i];
        k++;
    }
    return k;
}

/* Parameters the data pushed to the edge of their physical range: the fit
 * is then no longer a measurement of that efficiency.  Writes at most cap
 * notes and returns how many. */
static int bound_notes(const val_fit_result *res, char notes[][VAL_NOTE_LEN], int cap)
{
    int n = 0;
    for (int k = 0; k < VAL_NPARAMS && n < cap; k++) {
        if (!(res->free_mask & (1u << k))) continue;
        double v = res->value[k];
        if (!isfinite(res->sigma[k])) {
            snprintf(notes[n++], VAL_NOTE_LEN, "%s is not determined by these cases (no figure depends on it)",
                     val_param_name((val_param)k));
            continue;
        }
        bool eff = k == VAL_P_ATTENTION || k == VAL_P_MEMORY || k == VAL_P_NETWORK;
        if (eff && v > 0.995)
            snprintf(notes[n++], VAL_NOTE_LEN, "%s reached its bound (1): the data ask for more than the hardware gives",
                     val_param_name((val_param)k));
        else if (k == VAL_P_OVERLAP_SLOWDOWN && v < 1.001)
            snprintf(notes[n++], VAL_NOTE_LEN, "%s fell to 1: the data ask for no contention between a GEMM and "
                     "the collective beside it", val_param_name((val_param)k));
        else if ((k == VAL_P_KERNEL_US || k == VAL_P_COLL_STEP_US) && v < 1e-3)
            snprintf(notes[n++], VAL_NOTE_LEN, "%s fell to 0: the data ask for less than no overhead",
                     val_param_name((val_param)k));
    }
    const cfg_curve *cv = &res->platform.gemm_efficiency;
    for (int i = 0; i < cv->n && n < cap; i++)
        if (cv->y[i] >= 0.9999) {
            snprintf(notes[n++], VAL_NOTE_LEN, "the fitted GEMM efficiency reaches 1 (100%% of peak) at %.3g FLOPs",
                     cv->x[i]);
            break;
        }
    return n;
}

/* }========================================================= statistics */

/* {=============================================================== text */

static void print_params(FILE *f, const cfg_platform *base, const val_fit_result *res)
{
    double b[VAL_NPARAMS];
    val_params_of(base, b);
    fprintf(f, "%-20s %10s %10s %10s\n", "parameter", "base", "fitted", "+- 1 sigma");
    for (int k = 0; k < VAL_NPARAMS; k++) {
        if ((res->free_mask & (1u << k)) && isfinite(res->sigma[k]))
            fprintf(f, "%-20s %10.4g %10.4g %10.2g\n", val_param_name((val_param)k), b[k], res->value[k],
                    res->sigma[k]);
        else if (res->free_mask & (1u << k))
            fprintf(f, "%-20s %10.4g %10.4g %10s\n", val_param_name((val_param)k), b[k], res->value[k],
                    "undetermined");
        else
            fprintf(f, "%-20s %10.4g %10s %10s\n", val_param_name((val_param)k), b[k], "(fixed)", "");
    }
}

static void print_before_after(FILE *f, const val_case *before, const val_case *after, int n, const double *loo)
{
    fprintf(f, "%-38s %-26s %-18s %10s %10s %8s %10s %8s%s\n", "case", "run", "metric", "measured", "before",
            "error", "after", "error", loo ? "  held out" : "");
    for (int i = 0; i < n; i++)
        for (int r = 0; r < after[i].nruns; r++)
            for (int m = 0; m < after[i].runs[r].ncmp; m++) {
                const val_compare *b = &before[i].runs[r].cmp[m], *a = &after[i].runs[r].cmp[m];
                fprintf(f, "%-38.38s %-26.26s %-18s %10.4g %10.4g %+7.1f%% %10.4g %+7.1f%%", after[i].id,
                        after[i].runs[r].name, val_metric_name(a->metric), val_metric_display(a->metric, a->measured),
                        val_metric_display(b->metric, b->simulated), 100 * b->error,
                        val_metric_display(a->metric, a->simulated), 100 * a->error);
                if (loo && r == 0 && m == 0 && isfinite(loo[i])) fprintf(f, "  %+7.1f%%", 100 * loo[i]);
                fprintf(f, "\n");
            }
}

static void print_groups(FILE *f, const char *title, const val_case *cases, int n)
{
    val_group_stats g[VAL_MAX_GROUPS];
    int ng = val_group_stats_compute(cases, n, g, VAL_MAX_GROUPS);
    fprintf(f, "%s:\n", title);
    val_print_groups(f, g, ng);
}

void val_print_calibration(FILE *f, const val_calibration *c)
{
    const val_fit_result *res = &c->fit;
    fprintf(f, "calibrated %s on %d cases: %d simulation passes, %s (largest gap %.2f%%)\n\n", c->base.name, c->n,
            res->passes, res->converged ? "simulation agrees with the fit" : "stopped before agreement",
            100 * res->disagreement);
    print_params(f, &c->base, res);
    char notes[VAL_MAX_NOTES][VAL_NOTE_LEN];
    int nn = bound_notes(res, notes, VAL_MAX_NOTES);
    for (int i = 0; i < nn; i++) fprintf(f, "warning: %s\n", notes[i]);
    fprintf(f, "\nrms relative error: %.2f%% before, %.2f%% after (%d degrees of freedom)\n\n", 100 * res->rms_before,
            100 * res->rms_after, res->dof);
    print_before_after(f, c->before, c->after, c->n, c->loo);
    fprintf(f, "\n");
    print_groups(f, "before", c->before, c->n);
    print_groups(f, "after", c->after, c->n);
    val_loo_stats ls;
    val_loo_stats_compute(c->loo, c->n, &ls);
    if (ls.n)
        fprintf(f, "leave-one-out (each case fitted without itself, then simulated): mean |err| %.1f%%, max |err| "
                   "%.1f%% over %d cases\n",
                100 * ls.mean_abs, 100 * ls.max_abs, ls.n);
}

/* }=============================================================== text */

/* {=============================================================== JSON */

static cJSON *validation_json(const val_case *cases, int n)
{
    val_group_stats g[VAL_MAX_GROUPS];
    int ng = val_group_stats_compute(cases, n, g, VAL_MAX_GROUPS);
    return val_to_json(cases, n, g, ng);
}

static cJSON *number_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

void *val_calibration_to_json(const val_calibration *c, const char *platform_file)
{
    const val_fit_result *res = &c->fit;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "method",
                            "GSL multifit_nlinear (trust region, Levenberg-Marquardt) on relative errors of the "
                            "closed-form per-case model scaled by each case's simulated/closed-form ratio; "
                            "re-simulated after each fit until both agree");
    double b[VAL_NPARAMS];
    val_params_of(&c->base, b);
    cJSON *ps = cJSON_AddArrayToObject(root, "parameters");
    for (int k = 0; k < VAL_NPARAMS; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", val_param_name((val_param)k));
        cJSON_AddNumberToObject(o, "base", b[k]);
        bool fitted = res->free_mask & (1u << k);
        cJSON_AddBoolToObject(o, "fitted", fitted);
        cJSON_AddNumberToObject(o, "value", fitted ? res->value[k] : b[k]);
        if (fitted) cJSON_AddItemToObject(o, "sigma", number_or_null(res->sigma[k]));
        cJSON_AddItemToArray(ps, o);
    }
    char notes[VAL_MAX_NOTES][VAL_NOTE_LEN];
    int nn = bound_notes(res, notes, VAL_MAX_NOTES);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (int i = 0; i < nn; i++) cJSON_AddItemToArray(w, cJSON_CreateString(notes[i]));
    cJSON_AddNumberToObject(root, "passes", res->passes);
    cJSON_AddBoolToObject(root, "converged", res->converged);
    cJSON_AddNumberToObject(root, "largest_gap", res->disagreement);
    cJSON_AddNumberToObject(root, "rms_error_before", res->rms_before);
    cJSON_AddNumberToObject(root, "rms_error_after", res->rms_after);
    cJSON_AddNumberToObject(root, "dof", res->dof);
    if (platform_file) cJSON_AddStringToObject(root, "platform_file", platform_file);
    cJSON_AddItemToObject(root, "platform", cfg_platform_to_json(&res->platform));
    cJSON_AddItemToObject(root, "before", validation_json(c->before, c->n));
    cJSON_AddItemToObject(root, "after", validation_json(c->after, c->n));
    if (c->loo) {
        cJSON *l = cJSON_AddArrayToObject(root, "leave_one_out");
        for (int i = 0; i < c->n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", c->after[i].id);
            cJSON_AddItemToObject(o, "held_out_max_error", number_or_null(c->loo[i]));
            cJSON_AddItemToArray(l, o);
        }
    }
    return root;
}

/* }=============================================================== JSON */

/* What a calibrated file writes as its "base" (config.h): the name of a
 * shipped preset, the file name of a base beside it, else the base's
 * absolute path.  Writes "" when the base file cannot be found. */
static void base_reference(const char *out_path, const char *base_path, char *ref, size_t cap)
{
    ref[0] = '\0';
    char rb[PATH_MAX], shipped[PATH_MAX], dir[CFG_PATH_LEN + 16], rdir[PATH_MAX];
    if (!base_path[0] || !realpath(base_path, rb)) return;
    char *slash = strrchr(rb, '/');
    snprintf(dir, sizeof dir, "%s/platforms", cfg_data_dir());
    size_t len = strlen(slash + 1);
    bool json = len > 5 && strcmp(slash + 1 + len - 5, ".json") == 0;
    *slash = '\0';
    if (json && realpath(dir, shipped) && strcmp(rb, shipped) == 0) {
        snprintf(ref, cap, "%.*s", (int)(len - 5), slash + 1); /* a shipped name */
        return;
    }
    sim_strlcpy(dir, out_path, sizeof dir);
    char *os = strrchr(dir, '/');
    if (os) *os = '\0';
    if (json && realpath(os ? dir : ".", rdir) && strcmp(rb, rdir) == 0) {
        sim_strlcpy(ref, slash + 1, cap); /* beside the calibrated file */
        return;
    }
    *slash = '/';
    sim_strlcpy(ref, rb, cap);
}

sim_rc val_write_calibrated(const char *path, const val_calibration *c, sim_err *err)
{
    const cfg_platform *base = &c->base;
    char desc[CFG_TEXT_LEN];
    snprintf(desc, sizeof desc,
             "%.60s with efficiencies fitted by heptasim calibrate to %d published cases (rms error %.1f%% -> "
             "%.1f%%); physical figures unchanged",
             base->name, c->n, 100 * c->fit.rms_before, 100 * c->fit.rms_after);
    cfg_platform out = c->fit.platform, orig;
    snprintf(out.name, sizeof out.name, "%.40s-calibrated", base->name);
    cfg_calibration *rec = &out.calibration;
    memset(rec, 0, sizeof *rec);
    rec->cases = c->n;
    rec->rms_error_before = c->fit.rms_before;
    rec->rms_error_after = c->fit.rms_after;
    val_loo_stats ls;
    val_loo_stats_compute(c->loo, c->n, &ls);
    rec->held_out_error = ls.n ? ls.mean_abs : 0;
    val_step_rank before, after;
    val_step_ranks(c->before, c->n, NULL, false, &before);
    val_step_ranks(c->after, c->n, NULL, false, &after);
    rec->pair_error_before = isfinite(before.pair_error) ? before.pair_error : 0;
    rec->pair_error_after = isfinite(after.pair_error) ? after.pair_error : 0;
    size_t have = 0;
    for (int i = 0; i < c->n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = strcmp(c->after[j].group, c->after[i].group) == 0;
        if (!seen && have < sizeof rec->sources)
            have += (size_t)snprintf(rec->sources + have, sizeof rec->sources - have, "%s%s", have ? "," : "",
                                     c->after[i].group);
    }
    memset(&out.provenance, 0, sizeof out.provenance); /* a calibrated file is its own source */
    size_t used = 0;
    for (int k = 0; k < VAL_NPARAMS; k++)
        if (c->fit.free_mask & (1u << k) && used < sizeof rec->fitted)
            used += (size_t)snprintf(rec->fitted + used, sizeof rec->fitted - used, "%s%s", used ? "," : "",
                                     val_param_name((val_param)k));
    /* the base platform file as it is (its own device count, not the
     * first case's): the calibrated file names it and keeps what differs */
    sim_err ignored = {{0}};
    char ref[CFG_PATH_LEN];
    base_reference(path, base->path, ref, sizeof ref);
    if (!ref[0] || cfg_load_platform(base->path, NULL, 0, &orig, &ignored) != SIM_OK)
        return val_write_platform(path, &out, desc, err);
    out.devices = orig.devices;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "name", out.name);
    cJSON_AddStringToObject(root, "description", desc);
    cJSON_AddStringToObject(root, "base", ref);
    cJSON *over = cfg_platform_over(&out, &orig);
    while (over->child) {
        cJSON *k = cJSON_DetachItemViaPointer(over, over->child);
        cJSON_AddItemToArray(root, k); /* keeps its key */
    }
    cJSON_Delete(over);
    cJSON *all = cfg_platform_to_json(&out);
    cJSON_AddItemToObject(root, "calibration", cJSON_DetachItemFromObjectCaseSensitive(all, "calibration"));
    cJSON_Delete(all);
    sim_rc rc = rpt_write_json_doc(path, root, "calibrated platform", err);
    cJSON_Delete(root);
    return rc;
}
