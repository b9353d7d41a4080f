/* cmd_run.c - `heptasim run` (simulate one step) and `heptasim memory`
 * (memory only, no simulation). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../report/report.h"
#include "../runner/runner.h"
#include "commands.h"

/* The summary (unless -q), --json and --report of run (tl may be NULL);
 * returns the first write error. */
static sim_rc write_views(const cli_args *a, const rpt_run *run, const rpt_timeline *tl, sim_err *err)
{
    if (!a->quiet && run->sim) rpt_summary(stdout, run);
    if (!a->quiet && !run->sim) rpt_memory_summary(stdout, run->model, run->strategy, run->platform);
    sim_rc rc = SIM_OK;
    if (a->json_path) rc = rpt_write_json(a->json_path, run, err);
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
        rpt_run_init(&run, &in.model, &in.platform, &in.strategy);
        rc = write_views(a, &run, NULL, &err);
    }
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}

/* Sets up what --trace, --trace-ranks and --report need: the trace file,
 * the timeline of the sampled ranks, and in *traced (world-sized, the
 * caller frees it; NULL when nothing is recorded) the ranks the engine
 * reports.  The report samples the --trace-ranks list (its first
 * RPT_TIMELINE_MAX_RANKS ranks), by default the first rank of each stage
 * (evenly spaced stages when there are more). */
static sim_rc views_open(const cli_args *a, const cfg_strategy *s, rpt_views *v, bool **traced, sim_err *err)
{
    *traced = NULL;
    if (!a->trace_path && !a->report_path) return SIM_OK;
    int world = cfg_world_size(s);
    bool *ranks = sim_xcalloc((size_t)world, sizeof *ranks);
    sim_rc rc = rpt_trace_ranks(a->trace_ranks, s, ranks, err);
    if (rc == SIM_OK && a->report_path) rc = sim_out_check(a->report_path, "HTML report", err);
    if (rc == SIM_OK && a->report_path) {
        bool *sample = ranks;
        if (!a->trace_ranks && s->pp > RPT_TIMELINE_MAX_RANKS) {
            /* One rank per stage is too many rows: thin out the stages. */
            bool *chosen = sim_xcalloc((size_t)s->pp, sizeof *chosen);
            for (int i = 0; i < RPT_TIMELINE_MAX_RANKS; i++)
                chosen[(long)i * (s->pp - 1) / (RPT_TIMELINE_MAX_RANKS - 1)] = true;
            sample = sim_xcalloc((size_t)world, sizeof *sample);
            for (int r = 0; r < world; r++) sample[r] = ranks[r] && chosen[rpt_rank_stage(s, r)];
            free(chosen);
        }
        v->timeline = rpt_timeline_new(s, sample);
        if (sample != ranks) free(sample);
    }
    if (rc == SIM_OK && a->trace_path) rc = rpt_trace_open(a->trace_path, s, &v->trace, err);
    if (rc != SIM_OK) {
        rpt_timeline_free(v->timeline);
        v->timeline = NULL;
        free(ranks);
        return rc;
    }
    *traced = ranks;
    return SIM_OK;
}

/* The engine options of the command line; the --cfg settings are handed
 * to SimGrid by register_simgrid. */
static eng_options engine_options(const cli_args *a)
{
    eng_options opt = {0};
    opt.comm_mode = a->comm_mode && strcmp(a->comm_mode, "steps") == 0 ? ENG_STEPS : ENG_FLOWS;
    opt.symmetry = cli_symmetry(a);
    opt.dump_xml_path = a->dump_platform;
    return opt;
}

static sim_rc register_simgrid(const cli_args *a, sim_err *err)
{
    sim_rc rc = SIM_OK;
    for (int i = 0; i < a->nsimgrid && rc == SIM_OK; i++) {
        char arg[256];
        snprintf(arg, sizeof arg, "--cfg=%s", a->simgrid[i]);
        rc = eng_simgrid_option(arg, err);
    }
    return rc;
}

/* Simulates c with opt and the views v, then writes the views of run; the
 * trace is closed whatever happened, so that a failed step still leaves a
 * readable trace of what it did. */
static sim_rc simulate(const cli_args *a, run_case *c, eng_options *opt, rpt_views *v, rpt_run *run, double t0,
                       sim_err *err)
{
    sim_rc rc = runner_simulate_here(c, opt);
    if (rc == SIM_OK) {
        run->sim = &c->result;
        if (opt->symmetry == ENG_SYM_DP && run->sim->replicas == 1)
            fprintf(stderr, "heptasim: --symmetry dp: the groups of strategy '%s' tie the data-parallel replicas "
                            "together; every replica was simulated\n", c->strategy.name);
        run->wall_s = sim_now_s() - t0;
        rc = write_views(a, run, v->timeline, err);
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
    eng_options opt = engine_options(a);
    rpt_run run;
    sim_rc rc = cli_load_inputs(a, true, &in, &err);
    if (rc == SIM_OK) {
        c->model = in.model;
        c->platform = in.platform;
        c->strategy = in.strategy;
        rc = runner_check_replay(c, &opt, &err);
    }
    if (rc == SIM_OK) {
        rpt_run_init(&run, &c->model, &c->platform, &c->strategy);
        rc = rpt_check_fits(&run, &err);
        sim_err ignored = {{0}};
        if (rc == SIM_EOOM) write_views(a, &run, NULL, &ignored); /* memory per stage against capacity */
    }
    if (rc == SIM_OK) rc = register_simgrid(a, &err);
    rpt_views views = {0};
    bool *traced = NULL;
    if (rc == SIM_OK) rc = views_open(a, &c->strategy, &views, &traced, &err);
    if (rc == SIM_OK && traced) {
        opt.trace = rpt_views_record;
        opt.trace_ctx = &views;
        opt.trace_rank = traced;
    }
    if (rc == SIM_OK) rc = simulate(a, c, &opt, &views, &run, t0, &err);
    rpt_timeline_free(views.timeline);
    free(traced);
    free(c);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
