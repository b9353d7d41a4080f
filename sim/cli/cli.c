/* cli.c - heptasim's command table and dispatch: usage, --version, and
 * each subcommand's options parsed from one option table. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../search/search.h"
#include "commands.h"

#ifndef HEPTASIM_VERSION
#define HEPTASIM_VERSION "0.1.0"
#endif

typedef struct command {
    const char *name;
    unsigned options;
    const char *args;     /* positional arguments, for the usage line */
    const char *summary;
    int (*run)(const cli_args *a);
} command;

#define INPUTS (CLI_OPT_INPUTS | CLI_OPT_QUIET)
#define PROGRESS CLI_OPT_PROGRESS

static const command commands[] = {
    {"run", INPUTS | PROGRESS | CLI_OPT_JSON | CLI_OPT_ENGINE | CLI_OPT_TRACE | CLI_OPT_REPORT | CLI_OPT_RUN_GOODPUT | CLI_OPT_GOODPUT | CLI_OPT_JOBS, "",
     "simulate one training step and print step time, MFU, memory and where the time goes", cmd_run},
    {"memory", INPUTS | CLI_OPT_JSON | CLI_OPT_CSV, "", "memory per device for every pipeline stage, without simulating",
     cmd_memory},
    {"estimate", INPUTS | CLI_OPT_JSON, "",
     "the analytic estimate of one step (time, breakdown, memory), instantly, without simulating", cmd_estimate},
    {"sweep", INPUTS | PROGRESS | CLI_OPT_SEARCH | CLI_OPT_BUDGET | CLI_OPT_SPACE | CLI_OPT_CSV | CLI_OPT_JOBS | CLI_OPT_JSON | CLI_OPT_REPORT | CLI_OPT_SYMMETRY | CLI_OPT_OBJECTIVE | CLI_OPT_GOODPUT, "",
     "search the strategy space: prune by memory, rank analytically, simulate the best", cmd_sweep},
    {"compare", INPUTS | PROGRESS | CLI_OPT_SEARCH | CLI_OPT_CSV | CLI_OPT_JOBS | CLI_OPT_JSON | CLI_OPT_REPORT | CLI_OPT_SYMMETRY | CLI_OPT_OBJECTIVE | CLI_OPT_GOODPUT, "",
     "the best Megatron-style strategy against the best 7D strategy", cmd_compare},
    {"sensitivity", INPUTS | PROGRESS | CLI_OPT_SENS | CLI_OPT_JSON | CLI_OPT_CSV | CLI_OPT_JOBS | CLI_OPT_REPORT, "",
     "perturb each platform figure down and up and report the change of the step time (a tornado)",
     cmd_sensitivity},
    {"goodput", INPUTS | PROGRESS | CLI_OPT_JSON | CLI_OPT_CSV | CLI_OPT_REPORT | CLI_OPT_JOBS | CLI_OPT_GOODPUT |
                    CLI_OPT_ENGINE, "",
     "a training run over days on the simulated step: failures, restarts, checkpoints, stragglers (ETTR, goodput)",
     cmd_goodput},
    {"merge", CLI_OPT_FILES | CLI_OPT_JSON | CLI_OPT_QUIET | CLI_OPT_OUT, " FILE.jsonl...",
     "join the shards of a sweep into one ranking", cmd_merge},
    {"study", PROGRESS | CLI_OPT_FILES | CLI_OPT_STUDY | CLI_OPT_JOBS | CLI_OPT_QUIET, " STUDY.json",
     "run the compares of a study file into one folder: a Markdown table, a CSV, the HTML reports", cmd_study},
    {"validate", PROGRESS | CLI_OPT_FILES | CLI_OPT_JSON | CLI_OPT_CSV | CLI_OPT_JOBS | CLI_OPT_QUIET | CLI_OPT_CASES | CLI_OPT_FULL,
     " [CASES.json...]",
     "simulate published measurements and report the error", cmd_validate},
    {"calibrate",
     PROGRESS | CLI_OPT_FILES | CLI_OPT_JSON | CLI_OPT_JOBS | CLI_OPT_QUIET | CLI_OPT_CASES | CLI_OPT_OUT |
         CLI_OPT_FULL | CLI_OPT_FIT,
     " [CASES.json...]", "fit the platform's efficiency parameters to published measurements", cmd_calibrate},
    {"regress", PROGRESS | CLI_OPT_FILES | CLI_OPT_JSON | CLI_OPT_JOBS | CLI_OPT_QUIET | CLI_OPT_BLESS, " [SUITE...]",
     "compare the golden scenarios with the current model (--bless to store new ones)", cmd_regress},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

/* The usage text on f: stdout when asked for (--help), stderr when the
 * command is missing (a usage error). */
static void usage(FILE *f)
{
    fputs("usage: heptasim COMMAND [options]\n\n"
          "Simulates one training step of a large transformer on an accelerator cluster.\n\ncommands:\n",
          f);
    for (int i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'heptasim COMMAND --help' lists a command's options; 'heptasim --version' prints the version.\n"
          "With no options, run simulates the shipped default: " DEFAULT_MODEL " on " DEFAULT_PLATFORM
          " with strategy " DEFAULT_STRATEGY ".\n",
          f);
}

static void command_help(const command *c)
{
    printf("usage: heptasim %s [options]%s\n\n%s.\n\n", c->name, c->args, c->summary);
    cli_print_options(c->options);
    if (!(c->options & CLI_OPT_INPUTS)) return;
    printf("\nMODEL and PLATFORM default to %s and %s.\n", DEFAULT_MODEL, DEFAULT_PLATFORM);
    if (c->options & CLI_OPT_SEARCH)
        printf("Without -s the search starts from a generic base strategy (global batch %d sequences, every "
               "other key searched or at its default).\n",
               SRCH_BASE_GLOBAL_BATCH);
    else
        printf("Without -s the strategy is %s for the default model and platform; with -m, -p or --devices it is "
               "derived: the best Megatron-style strategy by the analytic estimate (--set keys held).\n",
               DEFAULT_STRATEGY);
}

/* Runs command c with a: with its progress reporter on (sim_progress_*)
 * when the command takes --progress and either stderr is a terminal and
 * -q is not given, or --progress names a log. */
static int run_command(const command *c, const cli_args *a)
{
    FILE *log = NULL;
    sim_err err;
    if (a->progress_path && strcmp(a->progress_path, "-") == 0)
        return cli_fail(sim_fail(&err, SIM_EINVAL, "heptasim %s: '--progress -': progress never goes to stdout (name "
                                 "a file)", c->name), &err);
    if (a->progress_path && !(log = fopen(a->progress_path, "w")))
        return cli_fail(sim_fail(&err, SIM_EIO, "%s: cannot write the progress log: %s (check the directory exists "
                                 "and is writable)", a->progress_path, strerror(errno)), &err);
    char label[64];
    snprintf(label, sizeof label, "heptasim %s", c->name);
    if (c->options & CLI_OPT_PROGRESS) sim_progress_begin(label, !a->quiet && isatty(STDERR_FILENO) == 1, log);
    int status = c->run(a);
    sim_progress_end();
    if (log && fclose(log) != 0 && status == 0)
        status = cli_fail(sim_fail(&err, SIM_EIO, "%s: cannot write the progress log: %s (check free space and "
                                   "permissions)", a->progress_path, strerror(errno)), &err);
    return status;
}

int cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("heptasim %s\n", HEPTASIM_VERSION);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++) {
        const command *c = &commands[i];
        if (strcmp(argv[1], c->name) != 0) continue;
        cli_args *a = sim_xcalloc(1, sizeof *a); /* large (positional arguments): not on the stack */
        sim_err err = {{0}};
        a->argc = argc;
        a->argv = argv;
        sim_rc rc = cli_parse(argc, argv, 2, c->options, c->name, a, &err);
        if (rc == SIM_OK) rc = cli_check_streams(a, c->name, &err);
        int status = 0;
        if (rc != SIM_OK)
            status = cli_fail(rc, &err);
        else if (a->help)
            command_help(c);
        else
            status = run_command(c, a);
        free(a);
        return status;
    }
    sim_err err;
    return cli_fail(sim_fail(&err, SIM_EINVAL, "heptasim: unknown command '%s' (see 'heptasim --help')", argv[1]),
                    &err);
}
