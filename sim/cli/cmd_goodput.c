/* cmd_goodput.c - `heptasim goodput`: simulate the step (and the step
 * with each of the reliability file's slow parts), then the run over days
 * on it (sim/goodput), and write its summary, JSON, CSV and HTML; and the
 * goodput options run --goodput, sweep and compare share. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../goodput/goodput.h"
#include "../report/goodput.h"
#include "../runner/runner.h"
#include "commands.h"

/* A positive finite number from option text, or SIM_EINVAL naming it. */
static sim_rc positive(const char *cmd, const char *opt, const char *text, double *out, sim_err *err)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || !end || *end || !isfinite(v) || !(v > 0))
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--%s %s': expected a number above 0", cmd, opt, text);
    *out = v;
    return SIM_OK;
}

const char *cli_goodput_option_given(const cli_args *a)
{
    if (a->reliability) return "--reliability";
    if (a->interval) return "--interval";
    if (a->tokens) return "--tokens";
    if (a->days) return "--days";
    if (a->seeds > 0) return "--seeds";
    if (a->seed_given) return "--seed";
    if (a->no_stragglers) return "--no-stragglers";
    return NULL;
}

sim_rc cli_goodput_options(const cli_args *a, const char *cmd, cfg_reliability *rel, gp_options *o, sim_err *err)
{
    memset(o, 0, sizeof *o);
    o->rel = rel;
    o->interval_s = 600;
    o->horizon_s = 54 * 86400.0;
    o->seeds = a->seeds > 0 ? a->seeds : 100;
    o->seed = a->seed_given ? (unsigned long)a->seed : 1;
    o->stragglers_off = a->no_stragglers;
    double v;
    sim_rc rc = SIM_OK;
    if (a->interval) rc = positive(cmd, "interval", a->interval, &v, err), o->interval_s = v * 60;
    if (rc == SIM_OK && a->tokens) rc = positive(cmd, "tokens", a->tokens, &o->token_budget, err);
    if (rc == SIM_OK && a->days) rc = positive(cmd, "days", a->days, &v, err), o->horizon_s = v * 86400;
    if (rc == SIM_OK && a->tokens && a->days)
        rc = sim_fail(err, SIM_EINVAL, "heptasim %s: '--tokens' and '--days' cannot be used together", cmd);
    if (rc == SIM_OK) rc = cfg_load_reliability(a->reliability ? a->reliability : DEFAULT_RELIABILITY, rel, err);
    return rc;
}

/* The simulated slow steps (gp_straggler_cases, simulated) into in: the
 * first failure's line, else SIM_OK. */
static sim_rc straggler_results(const run_case *cases, int n, gp_inputs *in, sim_err *err)
{
    for (int i = 0; i < n; i++) {
        if (cases[i].rc != SIM_OK) {
            sim_strlcpy(err->msg, cases[i].msg, sizeof err->msg);
            return cases[i].rc;
        }
        in->straggler_step_s[i] = cases[i].result.step_time_s;
        in->approximate = in->approximate || eng_result_approximate(&cases[i].result);
    }
    return SIM_OK;
}

sim_rc cli_goodput_simulate(const gp_options *o, const run_case *base, int jobs, gp_inputs *in, sim_err *err)
{
    int n = gp_straggler_count(o);
    if (n == 0) return SIM_OK;
    run_case *cases = sim_xcalloc((size_t)n, sizeof *cases);
    gp_straggler_cases(o, base, cases);
    sim_rc rc = runner_simulate_all(cases, n, jobs, NULL, NULL, err);
    if (rc == SIM_OK) rc = straggler_results(cases, n, in, err);
    free(cases);
    return rc;
}

sim_rc cli_goodput_doc(const gp_inputs *g, gp_result *res, rpt_goodput *doc, const cli_inputs *in, sim_err *err)
{
    sim_rc rc = gp_run(g, res, err);
    if (rc != SIM_OK) return rc;
    *doc = (rpt_goodput){.model = in->model.name, .platform = in->platform.name, .strategy = in->strategy.name,
                         .in = g, .res = res};
    if (isfinite(res->young_daly_s) && res->young_daly_s > g->step_s)
        rc = gp_best_interval(g, res->young_daly_s / 4, res->young_daly_s * 4, 17, &doc->best_interval_s,
                              &doc->best_ettr, err);
    return rc;
}

int cmd_goodput(const cli_args *a)
{
    sim_err err = {{0}};
    cli_inputs in;
    cfg_reliability *rel = sim_xcalloc(1, sizeof *rel);
    gp_options o;
    gp_inputs g = {0};
    sim_rc rc = cli_goodput_options(a, "goodput", rel, &o, &err);
    if (rc == SIM_OK) rc = cli_check_streams(a, "goodput", &err);
    if (rc == SIM_OK) rc = cli_load_inputs(a, true, &in, &err);
    if (rc == SIM_OK) rc = gp_inputs_make(&o, &in.model, &in.platform, &in.strategy, &g, &err);
    rpt_run run;
    if (rc == SIM_OK) {
        cli_run_init(&run, a, &in.model, &in.platform, &in.strategy);
        rc = rpt_check_fits(&run, &err);
    }
    /* the step and its slow variants, simulated at once */
    int ncases = 1 + gp_straggler_count(&o);
    run_case *c = sim_xcalloc((size_t)ncases, sizeof *c);
    eng_options opt = cli_engine_options(a), slow = opt;
    slow.dump_xml_path = NULL; /* the slow steps dump no platform */
    if (rc == SIM_OK) rc = cli_simgrid_options(a, &err);
    if (rc == SIM_OK) {
        c->model = in.model;
        c->platform = in.platform;
        c->strategy = in.strategy;
        c->options = &slow;
        gp_straggler_cases(&o, c, c + 1);
        c->options = &opt;
        rc = runner_check_replay(c, &opt, &err);
    }
    if (rc == SIM_OK) rc = runner_simulate_all(c, ncases, cli_jobs(a), NULL, NULL, &err);
    if (rc == SIM_OK && c->rc != SIM_OK) {
        rc = c->rc;
        sim_strlcpy(err.msg, c->msg, sizeof err.msg);
    }
    if (rc == SIM_OK) {
        g.approximate = eng_result_approximate(&c->result);
        rc = straggler_results(c + 1, ncases - 1, &g, &err);
    }
    gp_result res;
    rpt_goodput doc = {0};
    gp_trial *trials = NULL;
    gp_band band = {0};
    if (rc == SIM_OK) {
        g.step_s = c->result.step_time_s;
        rc = cli_goodput_doc(&g, &res, &doc, &in, &err);
    }
    if (rc == SIM_OK && a->csv_path) {
        trials = sim_xcalloc((size_t)g.seeds, sizeof *trials);
        rc = gp_run_trials(&g, &res, trials, &err);
        doc.trials = trials;
    }
    if (rc == SIM_OK && a->report_path) {
        rc = gp_progress_band(&g, CLI_GOODPUT_BAND_POINTS, CLI_GOODPUT_BAND_TRIALS, &band, &err);
        doc.band = &band;
    }
    if (rc == SIM_OK && !a->quiet) rpt_goodput_summary(cli_summary_stream(a), &doc);
    if (rc == SIM_OK && a->json_path) rc = rpt_write_goodput_json(a->json_path, &doc, &err);
    if (rc == SIM_OK && a->csv_path) {
        cJSON *rows = rpt_goodput_trials_json(&doc);
        rc = rpt_write_csv(a->csv_path, rows, rpt_goodput_csv_columns, "CSV table", &err);
        cJSON_Delete(rows);
    }
    if (rc == SIM_OK && a->report_path) rc = rpt_write_goodput_html(a->report_path, &doc, &err);
    gp_band_free(&band);
    free(trials);
    free(c);
    free(rel);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
