/* cli.c - heptasim's subcommands: run (simulate one step) and memory
 * (memory only, no simulation).  Each reads the three inputs, checks them
 * together and hands them down the pipeline: model/cost -> workload ->
 * engine -> report. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../cost/cost.h"
#include "../engine/engine.h"
#include "../model/model.h"
#include "../report/report.h"
#include "options.h"

#ifndef HEPTASIM_VERSION
#define HEPTASIM_VERSION "0.1.0"
#endif

/* The shipped default: dense 310B on 2,048 Ascend dies, Megatron-style. */
#define DEFAULT_MODEL "gpt-310b"
#define DEFAULT_PLATFORM "ascend-a3-2048"
#define DEFAULT_STRATEGY "gpt-310b-a3-megatron"

typedef struct inputs {
    cfg_model model;
    cfg_platform platform;
    cfg_strategy strategy;
} inputs;

typedef struct command {
    const char *name;
    unsigned options;
    const char *summary;
    int (*run)(const cli_args *a);
} command;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(sim_rc rc, const sim_err *err)
{
    fprintf(stderr, "%s\n", err->msg);
    return sim_exit_status(rc);
}

/* Load and cross-check the three inputs named on the command line. */
static sim_rc load_inputs(const cli_args *a, inputs *in, sim_err *err)
{
    cfg_overrides ov = {a->nsets, a->sets};
    sim_rc rc = cfg_load_model(a->model ? a->model : DEFAULT_MODEL, &ov, &in->model, err);
    if (rc == SIM_OK)
        rc = cfg_load_platform(a->platform ? a->platform : DEFAULT_PLATFORM, &ov, a->devices, &in->platform, err);
    if (rc == SIM_OK) rc = cfg_load_strategy(a->strategy ? a->strategy : DEFAULT_STRATEGY, &ov, &in->strategy, err);
    if (rc == SIM_OK) rc = cfg_check(&in->model, &in->platform, &in->strategy, err);
    return rc;
}

static double usable_bytes(const cfg_platform *p)
{
    return p->hbm_bytes - p->hbm_reserved_bytes;
}

static int cmd_memory(const cli_args *a)
{
    sim_err err = {{0}};
    inputs in;
    sim_rc rc = load_inputs(a, &in, &err);
    if (rc != SIM_OK) return fail(rc, &err);
    rpt_run run;
    memset(&run, 0, sizeof run);
    run.model = &in.model;
    run.platform = &in.platform;
    run.strategy = &in.strategy;
    run.memory_stage = mdl_peak_memory(&in.model, &in.strategy, &run.memory);
    if (!a->quiet) rpt_memory_summary(stdout, &in.model, &in.strategy, &in.platform);
    if (a->json_path && (rc = rpt_write_json(a->json_path, &run, &err)) != SIM_OK) return fail(rc, &err);
    return 0;
}

static int cmd_run(const cli_args *a)
{
    sim_err err = {{0}};
    inputs in;
    double t0 = now_s();
    sim_rc rc = load_inputs(a, &in, &err);
    if (rc != SIM_OK) return fail(rc, &err);

    rpt_run run;
    memset(&run, 0, sizeof run);
    run.model = &in.model;
    run.platform = &in.platform;
    run.strategy = &in.strategy;
    run.memory_stage = mdl_peak_memory(&in.model, &in.strategy, &run.memory);
    if (run.memory.total_bytes > usable_bytes(&in.platform)) {
        /* Never simulate a strategy as if it fitted. */
        if (!a->quiet) rpt_memory_summary(stdout, &in.model, &in.strategy, &in.platform);
        if (a->json_path) rpt_write_json(a->json_path, &run, &err);
        fprintf(stderr,
                "heptasim: strategy '%s' does not fit: stage %d needs %.1f GiB per device, %s has %.1f GiB usable "
                "(try more recompute, a higher zero stage, or more tp/pp)\n",
                in.strategy.name, run.memory_stage, run.memory.total_bytes / SIM_GIB, in.platform.name,
                usable_bytes(&in.platform) / SIM_GIB);
        return sim_exit_status(SIM_EOOM);
    }

    cost_model *cost = cost_new(&in.platform, &err);
    if (!cost) return fail(SIM_EINVAL, &err);
    wl_plan *plan = NULL;
    rc = wl_plan_new(&in.model, &in.platform, &in.strategy, cost, &plan, &err);
    eng_result res;
    memset(&res, 0, sizeof res);
    if (rc == SIM_OK) {
        eng_options opt = {0};
        opt.comm_mode = a->comm_mode && strcmp(a->comm_mode, "steps") == 0 ? ENG_STEPS : ENG_FLOWS;
        opt.dump_xml_path = a->dump_platform;
        rc = eng_run(&in.platform, plan, &opt, &res, &err);
    }
    if (rc == SIM_OK) {
        run.sim = &res;
        run.wall_s = now_s() - t0;
        if (!a->quiet) rpt_summary(stdout, &run);
        if (a->json_path) rc = rpt_write_json(a->json_path, &run, &err);
    }
    wl_plan_free(plan);
    cost_free(cost);
    return rc == SIM_OK ? 0 : fail(rc, &err);
}

static const command commands[] = {
    {"run", CLI_OPT_INPUTS | CLI_OPT_JSON | CLI_OPT_ENGINE | CLI_OPT_QUIET,
     "simulate one training step and print step time, MFU, memory and where the time goes", cmd_run},
    {"memory", CLI_OPT_INPUTS | CLI_OPT_JSON | CLI_OPT_QUIET,
     "memory per device for every pipeline stage, without simulating", cmd_memory},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static void usage(void)
{
    puts("usage: heptasim COMMAND [options]\n\n"
         "Simulates one training step of a large transformer on an accelerator cluster.\n\ncommands:");
    for (int i = 0; i < NCOMMANDS; i++) printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    puts("\n'heptasim COMMAND --help' lists a command's options; 'heptasim --version' prints the version.\n"
         "With no options, run simulates the shipped default: " DEFAULT_MODEL " on " DEFAULT_PLATFORM
         " with strategy " DEFAULT_STRATEGY ".");
}

static void command_help(const command *c)
{
    printf("usage: heptasim %s [options]\n\n%s.\n\n", c->name, c->summary);
    cli_print_options(c->options);
    printf("\nMODEL, PLATFORM and STRATEGY default to %s, %s and %s.\n", DEFAULT_MODEL, DEFAULT_PLATFORM,
           DEFAULT_STRATEGY);
}

int cli_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage();
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("heptasim %s\n", HEPTASIM_VERSION);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        if (strcmp(argv[1], c->name) != 0) continue;
        cli_args a;
        memset(&a, 0, sizeof a);
        sim_err err = {{0}};
        sim_rc rc = cli_parse(argc, argv, 2, c->options, c->name, &a, &err);
        if (rc != SIM_OK) return fail(rc, &err);
        if (a.help) {
            command_help(c);
            return 0;
        }
        return c->run(&a);
    }
    fprintf(stderr, "heptasim: unknown command '%s' (see 'heptasim --help')\n", argv[1]);
    return 2;
}
