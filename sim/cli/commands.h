/* commands.h - the subcommands, one file each, and what they share. */
#ifndef HEPTASIM_CLI_COMMANDS_H
#define HEPTASIM_CLI_COMMANDS_H

#include "../engine/engine.h"
#include "../report/goodput.h"
#include "../report/report.h"
#include "../runner/runner.h"
#include "../search/search.h"
#include "options.h"

/* The shipped default: dense 310B on 2,048 Ascend dies, Megatron-style. */
#define DEFAULT_MODEL "gpt-310b"
#define DEFAULT_PLATFORM "ascend-a3-2048"
#define DEFAULT_STRATEGY "gpt-310b-a3-megatron"

typedef struct cli_inputs {
    cfg_model model;
    cfg_platform platform;
    cfg_strategy strategy;
} cli_inputs;

/* Whether a command without -s derives its strategy: when -m, -p or
 * --devices leaves the shipped default inputs (whose strategy is
 * DEFAULT_STRATEGY). */
bool cli_derives_strategy(const cli_args *a);

/* Load the model, platform and strategy named by -m/-p/-s with --set and
 * --devices applied: with no -s, DEFAULT_STRATEGY for the shipped default
 * inputs, else the strategy srch_default_strategy derives (checked).  With
 * check, also cross-check them (cfg_check). */
sim_rc cli_load_inputs(const cli_args *a, bool check, cli_inputs *in, sim_err *err);

/* rpt_run_init, with the --set items of a named in the run's documents. */
void cli_run_init(rpt_run *run, const cli_args *a, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s);
sim_rc cli_load_model_platform(const cli_args *a, cfg_model *m, cfg_platform *p, sim_err *err);

/* The error band of platform p, against the shipped platforms
 * (val_platform_band). */
sim_rc cli_platform_band(const cfg_platform *p, cfg_band *out, sim_err *err);

/* Simulations at once: --jobs, else the number of cores. */
int cli_jobs(const cli_args *a);

/* Where a command's text summary goes: stderr when its JSON or CSV goes to
 * stdout (--json -, --csv -), so that stdout holds that alone; else
 * stdout.  Both to stdout is refused (cli_check_streams). */
FILE *cli_summary_stream(const cli_args *a);

/* SIM_EINVAL when --json - and --csv - would share stdout. */
sim_rc cli_check_streams(const cli_args *a, const char *command, sim_err *err);

/* Print err on stderr and return the exit status for rc. */
int cli_fail(sim_rc rc, const sim_err *err);

/* Each returns the process exit status. */
/* The HTML report of a finished sweep or compare session s (the search's
 * counts, both bests and the speedup in its head). */
sim_rc cli_write_search_report(const char *path, const srch_sweep *s, const char *title, sim_err *err);

/* {================================ the goodput options (cmd_goodput.c) */

#define DEFAULT_RELIABILITY "llama3-16k"
#define CLI_GOODPUT_BAND_POINTS 200  /* times of the HTML progress plot */
#define CLI_GOODPUT_BAND_TRIALS 1000 /* trials of its band, at most */

/* The first goodput option a gives ("--reliability"), NULL when none
 * (refused without run --goodput or --objective goodput). */
const char *cli_goodput_option_given(const cli_args *a);
/* The goodput options of a (goodput's defaults) into *o, the reliability
 * file loaded into *rel (o->rel).  SIM_EINVAL with one line naming the
 * option, or the reliability file's error. */
sim_rc cli_goodput_options(const cli_args *a, const char *cmd, cfg_reliability *rel, gp_options *o, sim_err *err);
/* Simulates the slow steps of o's stragglers on base's inputs (jobs at a
 * time, in child processes) into in->straggler_step_s; nothing without
 * stragglers.  The first failed simulation's error. */
sim_rc cli_goodput_simulate(const gp_options *o, const run_case *base, int jobs, gp_inputs *in, sim_err *err);
/* The run over days of g (steps set) and its document (names of in),
 * with the simulated optimum of the checkpoint interval. */
sim_rc cli_goodput_doc(const gp_inputs *g, gp_result *res, rpt_goodput *doc, const cli_inputs *in, sim_err *err);

/* }================================ the goodput options */

int cmd_run(const cli_args *a);
int cmd_memory(const cli_args *a);
int cmd_estimate(const cli_args *a);
int cmd_sweep(const cli_args *a);
int cmd_compare(const cli_args *a);
int cmd_merge(const cli_args *a);
int cmd_sensitivity(const cli_args *a);
int cmd_study(const cli_args *a);
int cmd_validate(const cli_args *a);
int cmd_calibrate(const cli_args *a);
int cmd_regress(const cli_args *a);
int cmd_goodput(const cli_args *a);

#endif
