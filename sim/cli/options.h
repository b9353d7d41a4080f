/* options.h - the option table shared by the subcommands. */
#ifndef HEPTASIM_CLI_OPTIONS_H
#define HEPTASIM_CLI_OPTIONS_H

#include <stdbool.h>

#include "../config/config.h"

#define CLI_MAX_SETS 256

/* Everything a subcommand may be given on the command line. */
typedef struct cli_args {
    const char *model, *platform, *strategy;
    const char *sets[CLI_MAX_SETS];
    int nsets;
    int devices;                 /* --devices, 0 = the platform's */
    const char *json_path;       /* --json FILE|- */
    const char *dump_platform;   /* --dump-platform FILE */
    const char *comm_mode;       /* --comm-mode flows|steps */
    bool quiet;
    bool help;
} cli_args;

/* Which options a subcommand takes (bit set of CLI_OPT_*). */
enum {
    CLI_OPT_INPUTS = 1 << 0,     /* -m -p -s --set --devices */
    CLI_OPT_JSON = 1 << 1,
    CLI_OPT_ENGINE = 1 << 2,     /* --dump-platform --comm-mode */
    CLI_OPT_QUIET = 1 << 3
};

/* Parse argv[first..argc) into a. Returns SIM_OK, or SIM_EINVAL with a
 * one-line message in err naming the option and the fix. */
sim_rc cli_parse(int argc, char **argv, int first, unsigned accepted, const char *command, cli_args *a,
                 sim_err *err);

/* Print the options a subcommand takes, one per line with its help. */
void cli_print_options(unsigned accepted);

#endif
