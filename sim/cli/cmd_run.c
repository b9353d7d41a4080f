/* cmd_run.c - `heptasim run` (simulate one step; with --goodput also the
 * run over days on it) and `heptasim memory` (memory only, no
 * simulation). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"
#include "../runner/runner.h"
#include "commands.h"

/* The summary (unless -q), --json and --report of run (tl may be NULL);
 * returns the first write error. */
static sim_rc write_views(const cli_args *a, const rpt_run *run, const rpt_timeline *tl, sim_err *err)
{
    FILE *f = cli_summary_stream(a);
    if (!a->quiet && run->sim) rpt_summary(f, run);
    if (!a->quiet && run->goodput) rpt_goodput_summary(f, run->goodput);
    if (!a->quiet && !run->sim) rpt_memory_summary(f, run->model, run->strategy, run->platform, &run->overrides);
    sim_rc rc = SIM_OK;
    if (a->json_path)
        rc = run->goodput ? rpt_write_run_goodput_json(a->json_path, run, err) : rpt_write_json(a->json_path, run, err);
    if (rc == SIM_OK && a->report_path) rc = rpt_write_run_html(a->report_path, run, tl, err);
    return rc;
}

int cmd_memory(const cli_args *a)
{
    sim_err err = {{0}};
    cli_inputs in;
    sim_rc rc = cli_load_inputs(a, true, &in, &err);
    rpt_run run;
    if (rc == SIM_OK) {
        cli_run_init(&run, a, &in.model, &in.platform, &in.strategy);
        rc = write_views(a, &run, NULL, &err);
        if (rc == SIM_OK && a->csv_path) {
            void *rows = rpt_memory_stages_json(&in.model, &in.strategy, &in.platform);
            rpt_rows_add_overrides(rows, &run.overrides);
            rc = rpt_write_csv(a->csv_path, rows, rpt_memory_csv_columns, "CSV table", &err);
            cJSON_Delete(rows);
        }
        if (rc == SIM_OK) rc = rpt_check_fits(&run, &err); /* as run: a strategy that does not fit is exit 1 */
    }
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}

int cmd_estimate(const cli_args *a)
{
    sim_err err = {{0}};
    cli_inputs in;
    sim_rc rc = cli_load_inputs(a, true, &in, &err);
    est_result est = {0};
    rpt_run run;
    cfg_band band;
    if (rc == SIM_OK) {
        est_estimator *e = est_new(&in.model, &in.platform, &err);
        rc = e ? est_step(e, &in.strategy, &est, &err) : SIM_EINVAL;
        est_free(e);
    }
    if (rc == SIM_OK) rc = cli_platform_band(&in.platform, &band, &err);
    if (rc == SIM_OK) {
        cli_run_init(&run, a, &in.model, &in.platform, &in.strategy);
        run.est = &est;
        run.band = &band;
        if (!a->quiet) rpt_summary(cli_summary_stream(a), &run);
        if (a->json_path) rc = rpt_write_json(a->json_path, &run, &err);
        if (rc == SIM_OK) rc = rpt_check_fits(&run, &err);
    }
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}


/* {======================================================== progress */

/* The replay's progress: the simulated clock against the analytic
 * estimate of the step, the wall time, and what is left at this pace. */
static void run_progress(void *ctx, double simulated_s)
{
    const double *expected_s = ctx;
    double wall_s = sim_progress_wall_s();
    char wall[32], left[32];
    sim_duration(wall_s, wall, sizeof wall);
    if (!(simulated_s > 0)) {
        sim_progress_report(false, "simulated 0 s of about %.3f s (0 %%), %s wall", *expected_s, wall);
    } else if (simulated_s < *expected_s) {
        sim_duration(wall_s / simulated_s * (*expected_s - simulated_s), left, sizeof left);
        sim_progress_report(false, "simulated %.3f s of about %.3f s (%.0f %%), %s wall, about %s left", simulated_s,
                            *expected_s, 100 * simulated_s / *expected_s, wall, left);
    } else {
        sim_progress_report(false, "simulated %.3f s, past the estimate of %.3f s, %s wall", simulated_s, *expected_s,
                            wall);
    }
}

/* With the reporter on, asks the engine for progress reports against the
 * analytic estimate of c's step (kept in *expected_s); without an estimate,
 * none. */
static void progress_options(const run_case *c, eng_options *opt, double *expected_s)
{
    if (!sim_progress_on()) return;
    sim_err ignored = {{0}};
    est_result est = {0};
    est_estimator *e = est_new(&c->model, &c->platform, &ignored);
    sim_rc rc = e ? est_step(e, &c->strategy, &est, &ignored) : SIM_EINVAL;
    est_free(e);
    if (rc != SIM_OK || !(est.step_s > 0)) return;
    *expected_s = est.step_s;
    opt->progress = run_progress;
    opt->progress_ctx = expected_s;
}

/* }======================================================== progress */

/* {======================================================== goodput */

/* run --goodput: the options, the inputs (checkpoint) and the straggler
 * steps before the step itself, then the run over days on it. */
typedef struct run_goodput {
    bool on;
    cfg_reliability rel;
    gp_options o;
    gp_inputs in;
    gp_result res;
    gp_band band;
    rpt_goodput doc;
} run_goodput;

/* Checks the goodput options of a and, with --goodput, loads them and
 * simulates the slow steps (in child processes, before this process
 * simulates the step). */
static sim_rc goodput_prepare(const cli_args *a, const run_case *c, run_goodput *g, sim_err *err)
{
    const char *given = cli_goodput_option_given(a);
    if (!a->goodput && given)
        return sim_fail(err, SIM_EINVAL, "heptasim run: '%s' needs '--goodput' (the run over days on the step)",
                        given);
    if (!a->goodput) return SIM_OK;
    g->on = true;
    sim_rc rc = cli_goodput_options(a, "run", &g->rel, &g->o, err);
    if (rc == SIM_OK) rc = gp_inputs_make(&g->o, &c->model, &c->platform, &c->strategy, &g->in, err);
    if (rc == SIM_OK) rc = cli_goodput_simulate(&g->o, c, cli_jobs(a), &g->in, err);
    return rc;
}

/* After the step: the run over days on it, for the views of run. */
static sim_rc goodput_finish(const cli_args *a, const run_case *c, run_goodput *g, rpt_run *run, sim_err *err)
{
    if (!g->on) return SIM_OK;
    g->in.step_s = c->result.step_time_s;
    cli_inputs names = {.model = c->model, .platform = c->platform, .strategy = c->strategy};
    sim_rc rc = cli_goodput_doc(&g->in, &g->res, &g->doc, &names, err);
    if (rc == SIM_OK && a->report_path) {
        rc = gp_progress_band(&g->in, CLI_GOODPUT_BAND_POINTS, CLI_GOODPUT_BAND_TRIALS, &g->band, err);
        g->doc.band = &g->band;
    }
    g->doc.model = c->model.name; /* names into c, which outlives the views */
    g->doc.platform = c->platform.name;
    g->doc.strategy = c->strategy.name;
    if (rc == SIM_OK) run->goodput = &g->doc;
    return rc;
}

/* }======================================================== goodput */

/* Simulates c with opt and the views v, then writes the views of run; the
 * trace is closed whatever happened, so that a failed step still leaves a
 * readable trace of what it did. */
static sim_rc simulate(const cli_args *a, run_case *c, eng_options *opt, rpt_views *v, rpt_run *run,
                       run_goodput *g, double t0, sim_err *err)
{
    sim_rc rc = runner_simulate_here(c, opt);
    if (rc == SIM_OK) {
        char wall[32];
        sim_duration(sim_progress_wall_s(), wall, sizeof wall);
        sim_progress_report(true, "simulated %.3f s in %s wall, done", c->result.step_time_s, wall);
    }
    sim_progress_clear();
    if (rc == SIM_OK) {
        run->sim = &c->result;
        if (opt->symmetry == ENG_SYM_DP && run->sim->replicas == 1)
            fprintf(stderr, "heptasim: --symmetry dp: the groups of strategy '%s' tie the data-parallel replicas "
                            "together; every replica was simulated\n", c->strategy.name);
        rc = goodput_finish(a, c, g, run, err);
        run->wall_s = sim_now_s() - t0;
        if (rc == SIM_OK) rc = write_views(a, run, v->timeline, err);
    } else {
        sim_strlcpy(err->msg, c->msg, sizeof err->msg);
    }
    sim_err terr = {{0}};
    sim_rc trc = rpt_trace_close(v->trace, run->sim ? run : NULL, &terr);
    if (rc == SIM_OK && trc != SIM_OK) {
        rc = trc;
        *err = terr;
    }
    return rc;
}

int cmd_run(const cli_args *a)
{
    sim_err err = {{0}};
    double t0 = sim_now_s();
    if (a->trace_ranks && !a->trace_path && !a->report_path) {
        fprintf(stderr, "heptasim run: '--trace-ranks' needs '--trace FILE' or '--report FILE.html'\n");
        return 2;
    }
    run_case *c = sim_xcalloc(1, sizeof *c);
    cli_inputs in;
    eng_options opt = cli_engine_options(a);
    rpt_run run;
    cfg_band band;
    sim_rc rc = cli_load_inputs(a, true, &in, &err);
    if (rc == SIM_OK) rc = cli_platform_band(&in.platform, &band, &err);
    if (rc == SIM_OK) {
        c->model = in.model;
        c->platform = in.platform;
        c->strategy = in.strategy;
        rc = runner_check_replay(c, &opt, &err);
    }
    if (rc == SIM_OK) {
        cli_run_init(&run, a, &c->model, &c->platform, &c->strategy);
        run.band = &band;
        rc = rpt_check_fits(&run, &err);
        sim_err ignored = {{0}};
        if (rc == SIM_EOOM) write_views(a, &run, NULL, &ignored); /* memory per stage against capacity */
    }
    if (rc == SIM_OK) rc = cli_simgrid_options(a, &err);
    run_goodput *g = sim_xcalloc(1, sizeof *g);
    if (rc == SIM_OK) {
        eng_options slow = opt; /* the slow steps dump no platform */
        slow.dump_xml_path = NULL;
        c->options = &slow;
        rc = goodput_prepare(a, c, g, &err);
        c->options = NULL;
    }
    rpt_views views = {0};
    if (rc == SIM_OK) rc = rpt_views_open(&views, &c->strategy, a->trace_path, a->trace_ranks, a->report_path, &err);
    if (rc == SIM_OK && views.ranks) {
        opt.trace = rpt_views_record;
        opt.trace_ctx = &views;
        opt.trace_rank = views.ranks;
    }
    double expected_s = 0;
    if (rc == SIM_OK) progress_options(c, &opt, &expected_s);
    if (rc == SIM_OK) rc = simulate(a, c, &opt, &views, &run, g, t0, &err);
    rpt_views_free(&views);
    gp_band_free(&g->band);
    free(g);
    free(c);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
