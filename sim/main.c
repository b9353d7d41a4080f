/* main.c - heptasim's entry point: check the data directory, then hand
 * the command line to the CLI. */
#include "cli/cli.h"
#include "cli/commands.h"

int main(int argc, char **argv)
{
    sim_err err;
    sim_rc rc = cfg_data_check(&err);
    if (rc != SIM_OK) return cli_fail(rc, &err);
    return cli_main(argc, argv);
}
