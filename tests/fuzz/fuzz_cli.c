/* fuzz_cli.c - libFuzzer harness for the command-line option parser
 * (cli_parse) on its own, for every set of options a command may take.
 *
 * Input: two bytes pick the options accepted (a bit set of CLI_OPT_*, so
 * that every command's set and every mix of them is reached), the rest is
 * a list of arguments separated by NUL bytes.  Properties, beyond those of
 * fuzz.h (SIM_OK or SIM_EINVAL, one printable line starting with
 * "heptasim fuzz: ", never cut off by the error buffer whatever the length
 * of the arguments): what a success leaves in cli_args is in range.  The
 * whole-number options are within the bounds the table gives them (0 = not
 * given), the shard is 0 <= I < N <= CLI_MAX_SHARDS, every value that
 * names a file is non-empty and at most SIM_MAX_PATH characters, every
 * --set item is KEY=VALUE and every --cfg item KEY:VALUE, only options of
 * the accepted groups are taken, and cross traffic only with --symmetry
 * none. */
#include "cli/options.h"
#include "fuzz.h"

#define MAX_ARGS 128

static void check_path(const char *what, const char *p)
{
    if (!p) return;
    if (!p[0]) fz_violation("an option that names a file was left empty", what);
    if (strlen(p) > SIM_MAX_PATH) fz_violation("a file name longer than SIM_MAX_PATH was taken", what);
}

static void check_count(const char *what, int v, int max)
{
    if (v != 0 && (v < 1 || v > max)) fz_violation("a whole-number option is out of its range", what);
}

static void check_args(const cli_args *a, unsigned accepted)
{
    check_count("--devices", a->devices, CFG_MAX_DEVICES);
    check_count("--top", a->top, CLI_MAX_TOP);
    check_count("--jobs", a->jobs, CLI_MAX_JOBS);
    check_count("--global-batch", a->global_batch, CFG_MAX_WIDTH);
    if (a->shard_count != 0 &&
        (a->shard_count < 1 || a->shard_count > CLI_MAX_SHARDS || a->shard_index < 0 || a->shard_index >= a->shard_count))
        fz_violation("the shard is out of range", "--shard");
    const char *paths[] = {a->model, a->platform, a->strategy, a->json_path, a->dump_platform,
                           a->out_path, a->trace_path, a->report_path};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) check_path("a file option", paths[i]);
    for (int i = 0; i < a->nfiles; i++) check_path("a file argument", a->files[i]);
    for (int i = 0; i < a->nsets; i++)
        if (!strchr(a->sets[i], '=') || a->sets[i][0] == '=') fz_violation("a --set item is not KEY=VALUE", a->sets[i]);
    for (int i = 0; i < a->nsimgrid; i++)
        if (!strchr(a->simgrid[i], ':') || a->simgrid[i][0] == ':')
            fz_violation("a --cfg item is not KEY:VALUE", a->simgrid[i]);
    if (a->nsets > CLI_MAX_SETS || a->nsimgrid > CLI_MAX_SIMGRID || a->nfiles > CLI_MAX_FILES)
        fz_violation("a repeatable option overflowed its table", "");
    if (!(accepted & (CLI_OPT_INPUTS | CLI_OPT_CASES)) && (a->platform || a->nsets))
        fz_violation("an option of a group not accepted was taken", "-p/--set");
    if (!(accepted & CLI_OPT_INPUTS) && (a->model || a->strategy || a->devices))
        fz_violation("an option of a group not accepted was taken", "-m/-s/--devices");
    if (!(accepted & CLI_OPT_ENGINE) && (a->nsimgrid || a->dump_platform || a->comm_mode))
        fz_violation("an option of a group not accepted was taken", "--cfg/--dump-platform/--comm-mode");
    if (!(accepted & CLI_OPT_FILES) && a->nfiles) fz_violation("a positional argument was taken", "");
    const char *cross = NULL; /* the last network/crosstraffic value decides */
    for (int i = 0; i < a->nsimgrid; i++)
        if (strncmp(a->simgrid[i], "network/crosstraffic:", 21) == 0) cross = a->simgrid[i] + 21;
    bool on = cross && (!strcmp(cross, "yes") || !strcmp(cross, "true") || !strcmp(cross, "on") || !strcmp(cross, "1"));
    if (on && (!a->symmetry || strcmp(a->symmetry, "none") != 0))
        fz_violation("cross traffic was taken with a reduced replay", cross);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    unsigned accepted = ((unsigned)data[0] | (unsigned)data[1] << 8) & 0x7fff;
    char *buf;
    char *argv[MAX_ARGS + 3] = {"heptasim", "fuzz"};
    int argc = fz_args(data + 2, size - 2, argv, 2, MAX_ARGS + 2, &buf);

    static cli_args a;
    memset(&a, 0, sizeof a);
    sim_err err = {{0}};
    static const char *const prefixes[] = {"heptasim fuzz: "};
    sim_rc rc = cli_parse(argc, argv, 2, accepted, "fuzz", &a, &err);
    fz_check_err(rc, &err, prefixes, 1);
    if (rc == SIM_OK) check_args(&a, accepted);
    free(buf);
    return 0;
}
