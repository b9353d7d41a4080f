/* cmd_validate.c - `heptasim validate`, `heptasim calibrate` and
 * `heptasim regress`: the simulator against published measurements, the
 * platform's efficiencies fitted to them, and the golden scenarios. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../validate/validate.h"
#include "commands.h"

#define PUBLISHED_DIR "results/published"
#define GOLDEN_DIR "results/golden"

static int default_jobs(const cli_args *a)
{
    if (a->jobs > 0) return a->jobs;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The case files named on the command line, or every file of dir. */
static sim_rc case_paths(const cli_args *a, const char *dir, char ***paths, int *n, sim_err *err)
{
    if (a->nfiles > 0) {
        char **list = sim_xcalloc((size_t)a->nfiles, sizeof *list);
        for (int i = 0; i < a->nfiles; i++) list[i] = sim_xstrdup(a->files[i]);
        *paths = list;
        *n = a->nfiles;
        return SIM_OK;
    }
    char full[CFG_PATH_LEN];
    snprintf(full, sizeof full, "%s/%s", cfg_data_dir(), dir);
    return val_list_dir(full, paths, n, err);
}

static sim_rc load_cases(const cli_args *a, val_case **out, int *n, sim_err *err)
{
    char **paths = NULL;
    int np = 0;
    sim_rc rc = case_paths(a, PUBLISHED_DIR, &paths, &np, err);
    if (rc != SIM_OK) return rc;
    val_case *cases = sim_xcalloc((size_t)np, sizeof *cases);
    val_load_opts o = {{a->nsets, a->sets}, a->platform};
    for (int i = 0; i < np && rc == SIM_OK; i++) rc = val_case_load(paths[i], &o, &cases[i], err);
    val_free_paths(paths, np);
    if (rc != SIM_OK) {
        free(cases);
        return rc;
    }
    *out = cases;
    *n = np;
    return SIM_OK;
}

static void progress(void *ctx, const val_case *c, const val_run *r)
{
    int *done = ctx;
    (*done)++;
    if (r->rc != SIM_OK)
        fprintf(stderr, "  [%d] %s/%s: failed: %s\n", *done, c->id, r->name, r->msg);
    else if (r->method == VAL_ANALYTIC)
        fprintf(stderr, "  [%d] %s/%s: analytic\n", *done, c->id, r->name);
    else
        fprintf(stderr, "  [%d] %s/%s: step %.4g s (%s, simulated in %.1f s)\n", *done, c->id, r->name,
                r->value[VAL_STEP_TIME_S], r->method == VAL_REDUCED_DP ? "two replicas" : "full", r->wall_s);
}

static int count_runs(const val_case *cases, int n, bool failed_only)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < cases[i].nruns; j++) k += !failed_only || cases[i].runs[j].rc != SIM_OK;
    return k;
}

static sim_rc write_json(const char *path, void *tree, sim_err *err)
{
    char *text = cJSON_Print(tree);
    cJSON_Delete(tree);
    if (!text) return sim_fail(err, SIM_ENOMEM, "heptasim: cannot format the JSON output");
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        cJSON_free(text);
        return sim_fail(err, SIM_EIO, "%s: cannot write the file (check the directory exists)", path);
    }
    bool ok = fputs(text, f) >= 0 && fputc('\n', f) != EOF;
    cJSON_free(text);
    ok = (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
    return ok ? SIM_OK : sim_fail(err, SIM_EIO, "%s: cannot write the file", path);
}

int cmd_validate(const cli_args *a)
{
    sim_err err = {{0}};
    val_case *cases = NULL;
    int n = 0;
    sim_rc rc = load_cases(a, &cases, &n, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    bool to_stdout = a->json_path && strcmp(a->json_path, "-") == 0;
    int done = 0;
    val_sim_opts so = {default_jobs(a), a->full, a->quiet ? NULL : progress, &done};
    if (!a->quiet)
        fprintf(stderr, "heptasim validate: %d cases, %d runs, %d at a time\n", n, count_runs(cases, n, false),
                so.jobs);
    rc = val_simulate(cases, n, &so, &err);
    if (rc != SIM_OK) {
        free(cases);
        return cli_fail(rc, &err);
    }
    val_group_stats g[64];
    int ng = val_group_stats_compute(cases, n, g, 64);
    if (!to_stdout) {
        val_print_table(stdout, cases, n);
        printf("\n");
        val_print_groups(stdout, g, ng);
    }
    if (a->json_path) rc = write_json(a->json_path, val_to_json(cases, n, g, ng), &err);
    int failed = count_runs(cases, n, true);
    free(cases);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    if (failed) {
        fprintf(stderr, "heptasim validate: %d run(s) failed to simulate (see the errors above)\n", failed);
        return 1;
    }
    return 0;
}

/* --fit LIST into a bit set of val_param. */
static sim_rc parse_fit(const char *list, unsigned *mask, sim_err *err)
{
    *mask = 0;
    if (!list) {
        *mask = 1u << VAL_P_GEMM_SCALE | 1u << VAL_P_ATTENTION;
        return SIM_OK;
    }
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char name[64];
        if (len == 0 || len >= sizeof name)
            return sim_fail(err, SIM_EINVAL, "heptasim calibrate: '--fit %s': empty or overlong name", list);
        memcpy(name, p, len);
        name[len] = '\0';
        int k = val_param_of(name);
        if (k < 0) {
            char known[256] = "";
            size_t used = 0;
            for (int i = 0; i < VAL_NPARAMS; i++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "",
                                         val_param_name((val_param)i));
            return sim_fail(err, SIM_EINVAL, "heptasim calibrate: '--fit': unknown parameter '%s' (parameters: %s)",
                            name, known);
        }
        *mask |= 1u << k;
        p += len + (comma ? 1 : 0);
    }
    return SIM_OK;
}

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

/* Parameters the data pushed to the edge of their physical range: the fit
 * is then no longer a measurement of that efficiency. */
static int bound_notes(const val_fit_result *res, char notes[][160], int cap)
{
    int n = 0;
    for (int k = 0; k < VAL_NPARAMS && n < cap; k++) {
        if (!(res->free_mask & (1u << k))) continue;
        double v = res->value[k];
        if (!isfinite(res->sigma[k])) {
            snprintf(notes[n++], 160, "%s is not determined by these cases (no figure depends on it)",
                     val_param_name((val_param)k));
            continue;
        }
        bool eff = k == VAL_P_ATTENTION || k == VAL_P_MEMORY || k == VAL_P_NETWORK;
        if (eff && v > 0.995)
            snprintf(notes[n++], 160, "%s reached its bound (1): the data ask for more than the hardware gives",
                     val_param_name((val_param)k));
        else if ((k == VAL_P_KERNEL_US || k == VAL_P_COLL_STEP_US) && v < 1e-3)
            snprintf(notes[n++], 160, "%s fell to 0: the data ask for less than no overhead",
                     val_param_name((val_param)k));
    }
    const cfg_curve *cv = &res->platform.gemm_efficiency;
    for (int i = 0; i < cv->n && n < cap; i++)
        if (cv->y[i] >= 0.9999) {
            snprintf(notes[n++], 160, "the fitted GEMM efficiency reaches 1 (100%% of peak) at %.3g FLOPs", cv->x[i]);
            break;
        }
    return n;
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

static cJSON *calibration_json(const cfg_platform *base, const val_fit_result *res, const val_case *before,
                               const val_case *after, int n, const double *loo, const char *out_path)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "method",
                            "GSL multifit_nlinear (trust region, Levenberg-Marquardt) on relative errors of the "
                            "closed-form per-case model scaled by each case's simulated/closed-form ratio; "
                            "re-simulated after each fit until both agree");
    double b[VAL_NPARAMS];
    val_params_of(base, b);
    cJSON *ps = cJSON_AddArrayToObject(root, "parameters");
    for (int k = 0; k < VAL_NPARAMS; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", val_param_name((val_param)k));
        cJSON_AddNumberToObject(o, "base", b[k]);
        bool fitted = res->free_mask & (1u << k);
        cJSON_AddBoolToObject(o, "fitted", fitted);
        cJSON_AddNumberToObject(o, "value", fitted ? res->value[k] : b[k]);
        if (fitted) cJSON_AddItemToObject(o, "sigma", isfinite(res->sigma[k]) ? cJSON_CreateNumber(res->sigma[k]) : cJSON_CreateNull());
        cJSON_AddItemToArray(ps, o);
    }
    char notes[8][160];
    int nn = bound_notes(res, notes, 8);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (int i = 0; i < nn; i++) cJSON_AddItemToArray(w, cJSON_CreateString(notes[i]));
    cJSON_AddNumberToObject(root, "passes", res->passes);
    cJSON_AddBoolToObject(root, "converged", res->converged);
    cJSON_AddNumberToObject(root, "largest_gap", res->disagreement);
    cJSON_AddNumberToObject(root, "rms_error_before", res->rms_before);
    cJSON_AddNumberToObject(root, "rms_error_after", res->rms_after);
    cJSON_AddNumberToObject(root, "dof", res->dof);
    if (out_path) cJSON_AddStringToObject(root, "platform_file", out_path);
    cJSON_AddItemToObject(root, "platform", cfg_platform_to_json(&res->platform));
    val_group_stats g[64];
    int ng = val_group_stats_compute(before, n, g, 64);
    cJSON_AddItemToObject(root, "before", val_to_json(before, n, g, ng));
    ng = val_group_stats_compute(after, n, g, 64);
    cJSON_AddItemToObject(root, "after", val_to_json(after, n, g, ng));
    if (loo) {
        cJSON *l = cJSON_AddArrayToObject(root, "leave_one_out");
        for (int i = 0; i < n; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "id", after[i].id);
            cJSON_AddItemToObject(o, "held_out_max_error", isfinite(loo[i]) ? cJSON_CreateNumber(loo[i]) : cJSON_CreateNull());
            cJSON_AddItemToArray(l, o);
        }
    }
    return root;
}

int cmd_calibrate(const cli_args *a)
{
    sim_err err = {{0}};
    unsigned mask = 0;
    sim_rc rc = parse_fit(a->fit, &mask, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    val_case *all = NULL;
    int nall = 0;
    rc = load_cases(a, &all, &nall, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    /* loose and not-modelled cases are never targets */
    int n = 0, loose = 0, skipped = 0;
    val_case *cases = sim_xcalloc((size_t)nall, sizeof *cases);
    for (int i = 0; i < nall; i++) {
        if (all[i].loose)
            loose++;
        else if (all[i].not_modelled[0])
            skipped++;
        else
            cases[n++] = all[i];
    }
    free(all);
    bool to_stdout = a->json_path && strcmp(a->json_path, "-") == 0;
    FILE *out = to_stdout ? stderr : stdout;
    if (!a->quiet && loose && n > 0) fprintf(stderr, "heptasim calibrate: leaving out %d loose case(s)\n", loose);
    if (!a->quiet && skipped && n > 0)
        fprintf(stderr, "heptasim calibrate: leaving out %d case(s) not modelled\n", skipped);
    if (n == 0) {
        free(cases);
        fprintf(stderr, "heptasim calibrate: no case to fit (loose cases are never calibration targets, nor cases "
                        "not modelled)\n");
        return 2;
    }
    cfg_platform base = cases[0].runs[0].platform;
    val_case *before = sim_xcalloc((size_t)n, sizeof *before);
    double *loo = a->loo ? sim_xcalloc((size_t)n, sizeof *loo) : NULL;
    int done = 0;
    val_fit_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.free_mask = mask;
    fo.max_passes = 4;
    fo.agree = 0.005;
    fo.loo = a->loo;
    fo.sim = (val_sim_opts){default_jobs(a), a->full, NULL, &done};
    fo.log = a->quiet ? NULL : stderr;
    if (!a->quiet)
        fprintf(stderr,
                "heptasim calibrate: %d cases on %s; least squares on the closed-form model of each case scaled by "
                "its simulated/closed-form ratio, re-simulated after each fit until both agree within %.1f%%\n",
                n, base.name, 100 * fo.agree);
    val_fit_result res;
    rc = val_calibrate(cases, n, &fo, before, &res, loo, &err);
    if (rc == SIM_OK) {
        fprintf(out, "calibrated %s on %d cases: %d simulation passes, %s (largest gap %.2f%%)\n\n", base.name, n,
                res.passes, res.converged ? "simulation agrees with the fit" : "stopped before agreement",
                100 * res.disagreement);
        print_params(out, &base, &res);
        char notes[8][160];
        int nn = bound_notes(&res, notes, 8);
        for (int i = 0; i < nn; i++) fprintf(out, "warning: %s\n", notes[i]);
        fprintf(out, "\nrms relative error: %.2f%% before, %.2f%% after (%d degrees of freedom)\n\n",
                100 * res.rms_before, 100 * res.rms_after, res.dof);
        print_before_after(out, before, cases, n, loo);
        val_group_stats g[64];
        int ng = val_group_stats_compute(before, n, g, 64);
        fprintf(out, "\nbefore:\n");
        val_print_groups(out, g, ng);
        ng = val_group_stats_compute(cases, n, g, 64);
        fprintf(out, "after:\n");
        val_print_groups(out, g, ng);
        if (loo) {
            double s = 0, mx = 0;
            int k = 0;
            for (int i = 0; i < n; i++)
                if (isfinite(loo[i])) {
                    s += fabs(loo[i]);
                    mx = fmax(mx, fabs(loo[i]));
                    k++;
                }
            if (k)
                fprintf(out, "leave-one-out (each case fitted without itself, then simulated): mean |err| %.1f%%, "
                             "max |err| %.1f%% over %d cases\n",
                        100 * s / k, 100 * mx, k);
        }
        if (a->out_path) {
            char desc[CFG_TEXT_LEN];
            snprintf(desc, sizeof desc,
                     "%.60s with efficiencies fitted by heptasim calibrate to %d published cases (rms error %.1f%% "
                     "-> %.1f%%); physical figures unchanged",
                     base.name, n, 100 * res.rms_before, 100 * res.rms_after);
            cfg_platform outp = res.platform, orig;
            snprintf(outp.name, sizeof outp.name, "%.40s-calibrated", base.name);
            /* the platform file's own device count, not the first case's */
            sim_err ignored = {{0}};
            if (base.path[0] && cfg_load_platform(base.path, NULL, 0, &orig, &ignored) == SIM_OK)
                outp.devices = orig.devices;
            rc = val_write_platform(a->out_path, &outp, desc, &err);
            if (rc == SIM_OK) fprintf(out, "wrote %s\n", a->out_path);
        } else {
            fprintf(out, "(give --out FILE to write the calibrated platform)\n");
        }
        if (rc == SIM_OK && a->json_path)
            rc = write_json(a->json_path, calibration_json(&base, &res, before, cases, n, loo, a->out_path), &err);
    }
    free(loo);
    free(before);
    free(cases);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    return 0;
}

int cmd_regress(const cli_args *a)
{
    sim_err err = {{0}};
    char **paths = NULL;
    int n = 0;
    sim_rc rc = case_paths(a, GOLDEN_DIR, &paths, &n, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    val_golden **g = sim_xcalloc((size_t)n, sizeof *g);
    for (int i = 0; i < n && rc == SIM_OK; i++) rc = val_golden_load(paths[i], &g[i], &err);
    val_free_paths(paths, n);
    bool to_stdout = a->json_path && strcmp(a->json_path, "-") == 0;
    int moved = 0;
    void *json = NULL;
    if (rc == SIM_OK) {
        val_regress_opts o = {default_jobs(a), a->bless, a->quiet, to_stdout ? stderr : stdout};
        rc = val_regress(g, n, &o, &moved, a->json_path ? &json : NULL, &err);
    }
    if (rc == SIM_OK && json) rc = write_json(a->json_path, json, &err);
    for (int i = 0; i < n; i++) val_golden_free(g[i]);
    free(g);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    if (moved > 0) {
        fprintf(stderr,
                "heptasim regress: %d metric(s) moved beyond tolerance; if the change is intended, run "
                "'heptasim regress --bless' and commit the updated results/golden files\n",
                moved);
        return 1;
    }
    return 0;
}
