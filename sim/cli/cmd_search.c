/* cmd_search.c - placeholder until the search lands. */
#include <stdio.h>

#include "commands.h"

static int unavailable(const char *name)
{
    fprintf(stderr, "heptasim: '%s' is not available in this build\n", name);
    return 1;
}

int cmd_sweep(const cli_args *a) { (void)a; return unavailable("sweep"); }
int cmd_compare(const cli_args *a) { (void)a; return unavailable("compare"); }
int cmd_merge(const cli_args *a) { (void)a; return unavailable("merge"); }
