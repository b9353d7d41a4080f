/* cmd_run.c - `heptasim run` (simulate one step) and `heptasim memory`
 * (memory only, no simulation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    sim_rc rc = cli_load_inputs(a, true, &in, &err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    rpt_run run;
    memory_run(&in, &run);
    if (!a->quiet) rpt_memory_summary(stdout, &in.model, &in.strategy, &in.platform);
    if (a->json_path && (rc = rpt_write_json(a->json_path, &run, &err)) != SIM_OK) return cli_fail(rc, &err);
    return 0;
}

int cmd_run(const cli_args *a)
{
    sim_err err = {{0}};
    double t0 = cli_now_s();
    if (a->trace_path || a->report_path) {
        fprintf(stderr, "heptasim run: '--trace' and '--report' are not available in this build\n");
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
    if (run.memory.total_bytes > rpt_capacity_bytes(&in.platform)) {
        /* Never simulate a strategy as if it fitted. */
        if (!a->quiet) rpt_memory_summary(stdout, &in.model, &in.strategy, &in.platform);
        if (a->json_path) rpt_write_json(a->json_path, &run, &err);
        fprintf(stderr,
                "heptasim: strategy '%s' does not fit: stage %d needs %.1f GiB per device, %s has %.1f GiB usable "
                "(try more recompute, a higher zero stage, or more tp/pp)\n",
                in.strategy.name, run.memory_stage, run.memory.total_bytes / SIM_GIB, in.platform.name,
                rpt_capacity_bytes(&in.platform) / SIM_GIB);
        free(c);
        return sim_exit_status(SIM_EOOM);
    }

    c->model = in.model;
    c->platform = in.platform;
    c->strategy = in.strategy;
    eng_options opt = {0};
    opt.comm_mode = a->comm_mode && strcmp(a->comm_mode, "steps") == 0 ? ENG_STEPS : ENG_FLOWS;
    opt.dump_xml_path = a->dump_platform;
    rc = runner_simulate_here(c, &opt);
    if (rc == SIM_OK) {
        run.sim = &c->result;
        run.wall_s = cli_now_s() - t0;
        if (!a->quiet) rpt_summary(stdout, &run);
        if (a->json_path) rc = rpt_write_json(a->json_path, &run, &err);
    } else {
        sim_strlcpy(err.msg, c->msg, sizeof err.msg);
    }
    free(c);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
