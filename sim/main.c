/* main.c - heptasim's entry point: hand the command line to the CLI. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
