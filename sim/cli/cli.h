/* cli.h - the command line: subcommands, options, exit statuses. */
#ifndef HEPTASIM_CLI_H
#define HEPTASIM_CLI_H

/* Run heptasim with its arguments; returns the process exit status
 * (0 ok, 2 bad input, 1 anything else). */
int cli_main(int argc, char **argv);

#endif
