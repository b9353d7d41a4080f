/* cmd_validate.c - placeholder until validation lands. */
#include <stdio.h>

#include "commands.h"

static int unavailable(const char *name)
{
    fprintf(stderr, "heptasim: '%s' is not available in this build\n", name);
    return 1;
}

int cmd_validate(const cli_args *a) { (void)a; return unavailable("validate"); }
int cmd_calibrate(const cli_args *a) { (void)a; return unavailable("calibrate"); }
int cmd_regress(const cli_args *a) { (void)a; return unavailable("regress"); }
