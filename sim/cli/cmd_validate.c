/* cmd_validate.c - `heptasim validate`, `heptasim calibrate` and
 * `heptasim regress`: the simulator against published measurements, the
 * platform's efficiencies fitted to them, and the golden scenarios. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../validate/validate.h"
#include "commands.h"

#define PUBLISHED_DIR "results/published"
#define GOLDEN_DIR "results/golden"

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
    sim_progress_clear(); /* the runner draws its counts again */
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

/* The JSON document tree to path, then the tree deleted. */
static sim_rc write_json(const char *path, void *tree, sim_err *err)
{
    sim_rc rc = rpt_write_json_doc(path, tree, "JSON result", err);
    cJSON_Delete(tree);
    return rc;
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
    val_sim_opts so = {cli_jobs(a), a->full, a->quiet ? NULL : progress, &done};
    if (!a->quiet)
        fprintf(stderr, "heptasim validate: %d cases, %d runs, %d at a time\n", n, count_runs(cases, n, false),
                so.jobs);
    rc = val_simulate(cases, n, &so, &err);
    if (rc != SIM_OK) {
        free(cases);
        return cli_fail(rc, &err);
    }
    val_group_stats g[64], gm[64];
    int ng = val_group_stats_compute(cases, n, g, 64), ngm = val_moe_group_stats(cases, n, gm, 64);
    char dir[CFG_PATH_LEN];
    snprintf(dir, sizeof dir, "%s/platforms", cfg_data_dir());
    val_preset_gap gaps[VAL_MAX_PRESETS];
    int ngaps = val_preset_gaps(dir, gaps, VAL_MAX_PRESETS, &err);
    val_preset_band *bands = sim_xcalloc(VAL_MAX_PRESETS, sizeof *bands);
    int nbands = ngaps < 0 ? -1 : val_preset_bands(dir, bands, VAL_MAX_PRESETS, &err);
    if (nbands < 0) {
        free(bands);
        free(cases);
        return cli_fail(SIM_EINVAL, &err);
    }
    if (!to_stdout && !(a->csv_path && strcmp(a->csv_path, "-") == 0)) {
        val_print_table(stdout, cases, n);
        printf("\n");
        val_print_groups(stdout, g, ng);
        printf("\n");
        if (ngm > 0) {
            printf("mixture-of-experts cases alone:\n");
            val_print_groups(stdout, gm, ngm);
            printf("\n");
        }
        val_print_preset_gaps(stdout, gaps, ngaps);
        printf("\n");
        val_print_preset_bands(stdout, bands, nbands);
    }
    if (a->json_path) {
        cJSON *root = val_to_json(cases, n, g, ng);
        cJSON_AddItemToObject(root, "moe_groups", val_groups_json(gm, ngm));
        cJSON_AddItemToObject(root, "presets", val_preset_gaps_json(gaps, ngaps));
        cJSON_AddItemToObject(root, "bands", val_preset_bands_json(bands, nbands));
        rc = write_json(a->json_path, root, &err);
    }
    if (rc == SIM_OK && a->csv_path) {
        cJSON *rows = val_comparisons_json(cases, n);
        rc = rpt_write_csv(a->csv_path, rows, val_csv_columns, "CSV table", &err);
        cJSON_Delete(rows);
    }
    int failed = count_runs(cases, n, true);
    free(bands);
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

/* What calibrate fits and how, from the options. */
static val_fit_opts fit_opts(const cli_args *a, unsigned mask, int *done)
{
    val_fit_opts fo;
    memset(&fo, 0, sizeof fo);
    fo.free_mask = mask;
    fo.max_passes = 4;
    fo.agree = 0.005;
    fo.loo = a->loo;
    fo.sim = (val_sim_opts){cli_jobs(a), a->full, NULL, done};
    fo.log = a->quiet ? NULL : stderr;
    return fo;
}

/* The report, --out's platform file and --json of a calibration. */
static sim_rc calibration_outputs(const cli_args *a, const val_calibration *cal, sim_err *err)
{
    FILE *out = a->json_path && strcmp(a->json_path, "-") == 0 ? stderr : stdout;
    val_print_calibration(out, cal);
    sim_rc rc = SIM_OK;
    if (a->out_path) {
        rc = val_write_calibrated(a->out_path, cal, err);
        if (rc == SIM_OK) fprintf(out, "wrote %s\n", a->out_path);
    } else {
        fprintf(out, "(give --out FILE to write the calibrated platform)\n");
    }
    if (rc == SIM_OK && a->json_path) rc = write_json(a->json_path, val_calibration_to_json(cal, a->out_path), err);
    return rc;
}

int cmd_calibrate(const cli_args *a)
{
    sim_err err = {{0}};
    unsigned mask = 0;
    val_case *cases = NULL;
    int n = 0, loose = 0, skipped = 0, done = 0;
    sim_rc rc = parse_fit(a->fit, &mask, &err);
    if (rc == SIM_OK) rc = load_cases(a, &cases, &n, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    n = val_targets_only(cases, n, &loose, &skipped);
    if (!a->quiet && loose && n > 0) fprintf(stderr, "heptasim calibrate: leaving out %d loose case(s)\n", loose);
    if (!a->quiet && skipped && n > 0)
        fprintf(stderr, "heptasim calibrate: leaving out %d case(s) not modelled\n", skipped);
    if (n == 0) {
        free(cases);
        fprintf(stderr, "heptasim calibrate: no case to fit (loose cases are never calibration targets, nor cases "
                        "not modelled)\n");
        return 2;
    }
    val_fit_opts fo = fit_opts(a, mask, &done);
    val_calibration cal = {.base = cases[0].runs[0].platform, .after = cases, .n = n};
    val_case *before = sim_xcalloc((size_t)n, sizeof *before);
    double *loo = a->loo ? sim_xcalloc((size_t)n, sizeof *loo) : NULL;
    cal.before = before;
    cal.loo = loo;
    if (!a->quiet)
        fprintf(stderr,
                "heptasim calibrate: %d cases on %s; least squares on the closed-form model of each case scaled by "
                "its simulated/closed-form ratio, re-simulated after each fit until both agree within %.1f%%\n",
                n, cal.base.name, 100 * fo.agree);
    rc = val_calibrate(cases, n, &fo, before, &cal.fit, loo, &err);
    if (rc == SIM_OK) rc = calibration_outputs(a, &cal, &err);
    free(loo);
    free(before);
    free(cases);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
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
        val_regress_opts o = {cli_jobs(a), a->bless, a->quiet, to_stdout ? stderr : stdout};
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
