/* cmd_run.c - `heptasim run` (simulate one step) and `heptasim memory`
 * (memory only, no simulation). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/model.h"
#include "../report/report.h"
#include "../runner/runner.h"
#include "commands.h"

static void memory_run(const cli_inputs *in, rpt_run *run)
{
    memset(run, 0, sizeof *run);
    run->model = &in->model;
    run->platform = &in->platform;
    run->strategy = &in->strategy;
    run->memory_stage = mdl_peak_memory(&in->model, &in->strategy, &run->memory);
}

int cmd_memory(const cli_args *a)
{
    sim_err err = {{0}};
    cli_inputs in;
    sim_rc rc = cli_load_inputs(a, false, &in, &err);
    if (rc == SIM_OK) rc = cfg_check_no_replay(&in.model, &in.platform, &in.strategy, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    rpt_run run;
    memory_run(&in, &run);
    if (!a->quiet) rpt_memory_summary(stdout, &in.model, &in.strategy, &in.platform);
    if (a->json_path && (rc = rpt_write_json(a->json_path, &run, &err)) != SIM_OK) return cli_fail(rc, &err);
    return 0;
}

/* Returns SIM_EIO with the report's message when `path` cannot be
 * created or replaced, so that a long simulation does not end in a write
 * error; nothing is created. */
static sim_rc check_writable(const char *path, sim_err *err)
{
    char dir[CFG_PATH_LEN];
    sim_strlcpy(dir, path, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (!slash)
        sim_strlcpy(dir, ".", sizeof dir);
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    bool exists = access(path, F_OK) == 0;
    if ((exists && access(path, W_OK) != 0) || (!exists && access(dir, W_OK | X_OK) != 0))
        return sim_fail(err, SIM_EIO,
                        "%s: cannot write the HTML report: %s (check the directory exists and is writable)", path,
                        strerror(errno));
    return SIM_OK;
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
    if (rc == SIM_OK && a->report_path) rc = check_writable(a->report_path, err);
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
    sim_rc rc = cli_load_inputs(a, true, &in, &err);
    if (rc != SIM_OK) {
        free(c);
        return cli_fail(rc, &err);
    }
    rpt_run run;
    memory_run(&in, &run);
    if (run.memory.total_bytes > cfg_usable_hbm_bytes(&in.platform)) {
        /* Never simulate a strategy as if it fitted. */
        if (!a->quiet) rpt_memory_summary(stdout, &in.model, &in.strategy, &in.platform);
        if (a->json_path) rpt_write_json(a->json_path, &run, &err);
        /* The report still shows memory per stage against capacity. */
        if (a->report_path) rpt_write_run_html(a->report_path, &run, NULL, &err);
        fprintf(stderr,
                "heptasim: strategy '%s' does not fit: stage %d needs %.1f GiB per device, %s has %.1f GiB usable "
                "(try more recompute, a higher zero stage, or more tp/pp)\n",
                in.strategy.name, run.memory_stage, run.memory.total_bytes / SIM_GIB, in.platform.name,
                cfg_usable_hbm_bytes(&in.platform) / SIM_GIB);
        free(c);
        return sim_exit_status(SIM_EOOM);
    }

    c->model = in.model;
    c->platform = in.platform;
    c->strategy = in.strategy;
    eng_options opt = {0};
    opt.comm_mode = a->comm_mode && strcmp(a->comm_mode, "steps") == 0 ? ENG_STEPS : ENG_FLOWS;
    opt.symmetry = cli_symmetry(a);
    opt.dump_xml_path = a->dump_platform;
    for (int i = 0; i < a->nsimgrid && rc == SIM_OK; i++) {
        char arg[256];
        snprintf(arg, sizeof arg, "--cfg=%s", a->simgrid[i]);
        rc = eng_simgrid_option(arg, &err);
    }
    if (rc != SIM_OK) {
        free(c);
        return cli_fail(rc, &err);
    }
    rpt_views views = {0};
    bool *traced = NULL;
    rc = views_open(a, &c->strategy, &views, &traced, &err);
    if (rc != SIM_OK) {
        free(c);
        return cli_fail(rc, &err);
    }
    if (traced) {
        opt.trace = rpt_views_record;
        opt.trace_ctx = &views;
        opt.trace_rank = traced;
    }
    rc = runner_simulate_here(c, &opt);
    if (rc == SIM_OK) {
        run.sim = &c->result;
        if (opt.symmetry == ENG_SYM_DP && run.sim->replicas == 1)
            fprintf(stderr, "heptasim: --symmetry dp: the groups of strategy '%s' tie the data-parallel replicas "
                            "together; every replica was simulated\n", c->strategy.name);
        run.wall_s = sim_now_s() - t0;
        if (!a->quiet) rpt_summary(stdout, &run);
        if (a->json_path) rc = rpt_write_json(a->json_path, &run, &err);
        if (rc == SIM_OK && a->report_path) rc = rpt_write_run_html(a->report_path, &run, views.timeline, &err);
    } else {
        sim_strlcpy(err.msg, c->msg, sizeof err.msg);
    }
    /* A failed step still leaves a readable trace of what happened. */
    sim_err terr = {{0}};
    sim_rc trc = rpt_trace_close(views.trace, run.sim ? &run : NULL, &terr);
    if (rc == SIM_OK && trc != SIM_OK) {
        rc = trc;
        err = terr;
    }
    rpt_timeline_free(views.timeline);
    free(traced);
    free(c);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
