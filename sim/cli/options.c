/* options.c - the option table and its parser.
 *
 * Options are rows of a table (name, short name, argument, group, help), so
 * that the usage text and the parser cannot disagree. */
#define _DEFAULT_SOURCE /* realpath */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../search/search.h"

typedef enum opt_id {
    O_MODEL, O_PLATFORM, O_STRATEGY, O_SET, O_DEVICES, O_JSON, O_CSV, O_DUMP, O_COMM, O_SYMMETRY, O_SIMGRID, O_QUIET, O_HELP,
    O_SPACE, O_MEGATRON_CP, O_TOP, O_JOBS, O_OUT, O_RESUME, O_SHARD, O_GLOBAL_BATCH, O_TRACE, O_TRACE_RANKS, O_REPORT, O_BLESS,
    O_FULL, O_LOO, O_FIT, O_LIST, O_CELLS, O_PROGRESS, O_SAVE_BEST, O_SAVE_TOP, O_GLOBAL_TOKENS, O_STEP, O_SIMULATE, O_SENS_SEARCH,
    O_RELIABILITY, O_INTERVAL, O_TOKENS, O_DAYS, O_SEEDS, O_SEED, O_NO_STRAGGLERS, O_GOODPUT, O_OBJECTIVE, O_NO_CACHE, O_BUDGET
} opt_id;

typedef struct opt_row {
    opt_id id;
    const char *name;   /* long name without "--" */
    char short_name;    /* 0 when none */
    const char *arg;    /* argument name, NULL for a flag or a choice of names */
    unsigned group;     /* CLI_OPT_* that enables it; 0 = always */
    const char *help;
    int min, max;       /* a whole-number option: its range (max 0: not a number) */
    bool path;          /* the value names a file: at most SIM_MAX_PATH characters */
    const sim_enum_name *names; /* the value is one of these names (its enum's table) */
    int nnames;
} opt_row;

#define COUNT(lo, hi) .min = lo, .max = hi
#define PATH .path = true
#define PLAIN .path = false /* neither a number nor a file */
#define NAMES(table, n) .names = table, .nnames = n

static const opt_row options[] = {
    {O_MODEL, "model", 'm', "MODEL", CLI_OPT_INPUTS, "model: a name from models/ or a path (also a HuggingFace config.json)",
     PATH},
    {O_PLATFORM, "platform", 'p', "PLATFORM", CLI_OPT_INPUTS | CLI_OPT_CASES, "platform: a name from platforms/ or a path",
     PATH},
    {O_STRATEGY, "strategy", 's', "STRATEGY", CLI_OPT_INPUTS,
     "strategy: a name from strategies/, a path, a compact form as sweep prints it ('dp64 pp2 tp4 sp mb1 sel z1') or "
     "a sweep candidate ID@RECORDS (7d-6@sweep.jsonl)", PATH},
    {O_SET, "set", 0, "KEY=VALUE", CLI_OPT_INPUTS | CLI_OPT_CASES,
     "override a strategy key, or model.KEY / platform.KEY (repeatable)", PLAIN},
    {O_DEVICES, "devices", 0, "N", CLI_OPT_INPUTS, "number of devices of the platform", COUNT(1, CFG_MAX_DEVICES)},
    {O_JSON, "json", 0, "FILE|-", CLI_OPT_JSON, "write the result as JSON to FILE (- for stdout)", PATH},
    {O_CSV, "csv", 0, "FILE|-", CLI_OPT_CSV,
     "write a CSV table to FILE (- for stdout): one row per candidate, case comparison, stage or trial", PATH},
    {O_DUMP, "dump-platform", 0, "FILE", CLI_OPT_ENGINE, "also write the generated SimGrid platform XML to FILE", PATH},
    {O_COMM, "comm-mode", 0, NULL, CLI_OPT_ENGINE,
     "collectives as one flow per ring edge (default) or step by step", NAMES(eng_comm_mode_names, ENG_NCOMM_MODES)},
    {O_SYMMETRY, "symmetry", 0, NULL, CLI_OPT_ENGINE | CLI_OPT_SYMMETRY,
     "tp (default): one actor per class of alike ranks (exact); dp: also one data-parallel replica for all "
     "(approximate); none: one actor per rank", NAMES(eng_symmetry_names, ENG_NSYMMETRIES)},
    {O_SIMGRID, "cfg", 0, "KEY:VALUE", CLI_OPT_ENGINE, "a SimGrid setting, e.g. network/optim:Lazy (repeatable)", PLAIN},
    {O_SPACE, "space", 0, NULL, CLI_OPT_SPACE, "strategy space to search (default 7d)",
     NAMES(srch_space_names, SRCH_NSPACES)},
    {O_MEGATRON_CP, "megatron-cp", 0, NULL, CLI_OPT_SEARCH,
     "CP of the Megatron-style baseline: ring (default) or a2a (also Megatron-Core's all-to-all CP)",
     NAMES(srch_baseline_names, SRCH_NBASELINES)},
    {O_TOP, "top", 0, "K", CLI_OPT_SEARCH, "simulate the K best analytic candidates (sweep: K distinct ones, alike ones folded)", COUNT(1, CLI_MAX_TOP)},
    {O_GLOBAL_BATCH, "global-batch", 0, "B", CLI_OPT_SEARCH, "global batch in sequences",
     COUNT(1, CFG_MAX_WIDTH)},
    {O_GLOBAL_TOKENS, "global-tokens", 0, "T", CLI_OPT_SEARCH,
     "global batch in tokens: T / seq_len sequences (T a multiple of the model's seq_len)", COUNT(1, INT_MAX)},
    {O_OUT, "out", 0, "FILE", CLI_OPT_SEARCH | CLI_OPT_OUT, "write results to FILE", PATH},
    {O_RESUME, "resume", 0, NULL, CLI_OPT_SEARCH, "carry on an interrupted sweep from its --out file", PLAIN},
    {O_BUDGET, "budget", 0, "SECONDS", CLI_OPT_BUDGET,
     "after the top K, simulate K more of the best estimates at a time until the simulated best holds for a round, "
     "within SECONDS of simulation", COUNT(1, CLI_MAX_BUDGET_S)},
    {O_NO_CACHE, "no-cache", 0, NULL, CLI_OPT_SEARCH,
     "search again instead of reusing the search cache of the same inputs, and keep nothing there", PLAIN},
    {O_SAVE_BEST, "save-best", 0, "FILE", CLI_OPT_SEARCH,
     "write the best simulated strategy as a strategy file (for run -s FILE)", PATH},
    {O_SAVE_TOP, "save-top", 0, "DIR", CLI_OPT_SEARCH,
     "write each row of the ranked table as a strategy file DIR/NN-ID.json (DIR created when missing)", PATH},
    {O_SHARD, "shard", 0, "I/N", CLI_OPT_SPACE, "run the I-th of N deterministic shards of the candidates", PLAIN},
    {O_OUT, "out", 0, "DIR", CLI_OPT_STUDY, "write the study's folder to DIR (default results/studies/NAME)", PATH},
    {O_RESUME, "resume", 0, NULL, CLI_OPT_STUDY, "skip the cells a run into the same folder finished", PLAIN},
    {O_SHARD, "shard", 0, "I/N", CLI_OPT_STUDY, "run the I-th of N shares of the cells (then --resume writes the table)",
     PLAIN},
    {O_LIST, "list", 0, NULL, CLI_OPT_STUDY, "print each cell and the compare command it stands for; run nothing",
     PLAIN},
    {O_CELLS, "cells", 0, "PATTERNS", CLI_OPT_STUDY,
     "run only the cells whose names match a comma-separated shell pattern ('*s32768*'); with --resume the table "
     "shows every cell finished so far", PLAIN},
    {O_STEP, "step", 0, "PCT", CLI_OPT_SENS,
     "perturb each platform figure PCT per cent down and up (default 20; above 0, at most 90)", PLAIN},
    {O_SIMULATE, "simulate", 0, "N", CLI_OPT_SENS,
     "simulate the N figures that move the estimate most (default 4; 0: estimate only)", COUNT(0, 64)},
    {O_SENS_SEARCH, "search", 0, NULL, CLI_OPT_SENS,
     "also search the best strategy by estimate again on both ends of each simulated figure", PLAIN},
    {O_JOBS, "jobs", 'j', "J", CLI_OPT_JOBS, "processes at once: simulations, and a search's share (default: number of cores)",
     COUNT(1, CLI_MAX_JOBS)},
    {O_TRACE, "trace", 0, "FILE", CLI_OPT_TRACE, "write a Chrome trace-event file (Perfetto)", PATH},
    {O_TRACE_RANKS, "trace-ranks", 0, "LIST", CLI_OPT_TRACE,
     "ranks to trace: 0,5,8-15 or all (default: one per stage)", PLAIN},
    {O_REPORT, "report", 0, "FILE", CLI_OPT_REPORT, "write a self-contained HTML report", PATH},
    {O_BLESS, "bless", 0, NULL, CLI_OPT_BLESS, "store the current results as the new golden results", PLAIN},
    {O_FULL, "full", 0, NULL, CLI_OPT_FULL, "simulate every data-parallel replica (no reduction to two)", PLAIN},
    {O_FIT, "fit", 0, "LIST", CLI_OPT_FIT, "parameters to fit, comma-separated (default gemm_scale,attention)", PLAIN},
    {O_LOO, "loo", 0, NULL, CLI_OPT_FIT, "also fit without each case in turn and report its held-out error", PLAIN},
    {O_PROGRESS, "progress", 0, "FILE", CLI_OPT_PROGRESS,
     "also write progress lines to FILE (stderr shows them when a terminal, unless -q)", PATH},
    {O_GOODPUT, "goodput", 0, NULL, CLI_OPT_RUN_GOODPUT,
     "also run the goodput model on the simulated step (days, ETTR, time lost by cause; the goodput options below)",
     PLAIN},
    {O_OBJECTIVE, "objective", 0, NULL, CLI_OPT_OBJECTIVE,
     "rank the simulated candidates by step time (default) or by goodput: days to --tokens, else tokens trained "
     "in --days (the goodput options below)", NAMES(srch_objective_names, SRCH_NOBJECTIVES)},
    {O_RELIABILITY, "reliability", 'r', "RELIABILITY", CLI_OPT_GOODPUT,
     "reliability model: a name from reliability/ or a path (default llama3-16k)", PATH},
    {O_INTERVAL, "interval", 0, "MINUTES", CLI_OPT_GOODPUT, "training between checkpoints (default 10)", PLAIN},
    {O_TOKENS, "tokens", 0, "T", CLI_OPT_GOODPUT, "run until T tokens are trained (15.6e12)", PLAIN},
    {O_DAYS, "days", 0, "D", CLI_OPT_GOODPUT, "run for D days of wall clock (default 54 without --tokens)", PLAIN},
    {O_SEEDS, "seeds", 0, "N", CLI_OPT_GOODPUT, "Monte Carlo trials (default 100)", COUNT(1, 100000)},
    {O_SEED, "seed", 0, "S", CLI_OPT_GOODPUT, "seed of the first trial (default 1)", COUNT(0, INT_MAX)},
    {O_NO_STRAGGLERS, "no-stragglers", 0, NULL, CLI_OPT_GOODPUT,
     "leave the reliability file's stragglers out (no slow-step simulation; flagged in the output)", PLAIN},
    {O_QUIET, "quiet", 'q', NULL, CLI_OPT_QUIET, "do not print the summary", PLAIN},
    {O_HELP, "help", 'h', NULL, 0, "show this help", PLAIN},
};
#define NOPTIONS (int)(sizeof options / sizeof options[0])

static bool takes_value(const opt_row *o)
{
    return o->arg || o->names;
}

/* What the option's value is, for the help and messages: its argument
 * name, or its names joined ("tp|dp|none"). */
static const char *arg_of(const opt_row *o, char *buf, size_t cap)
{
    if (o->arg) return o->arg;
    sim_enum_names_text(o->names, o->nnames, false, buf, cap);
    return buf;
}

static const opt_row *find_long(const char *name, size_t len, unsigned accepted)
{
    for (int i = 0; i < NOPTIONS; i++) {
        const opt_row *o = &options[i];
        if ((o->group == 0 || (o->group & accepted)) && strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    }
    return NULL;
}

static const opt_row *find_short(char c, unsigned accepted)
{
    for (int i = 0; i < NOPTIONS; i++) {
        const opt_row *o = &options[i];
        if ((o->group == 0 || (o->group & accepted)) && o->short_name == c) return o;
    }
    return NULL;
}

/* An argument as messages quote it: whole when short, else its start and
 * its length ("aaaa... (5000 characters)"), so that the reason that
 * follows is never cut off. */
static const char *quoted(const char *text, char *buf, size_t cap)
{
    size_t n = strlen(text);
    if (n <= 80) return text;
    snprintf(buf, cap, "%.60s... (%zu characters)", text, n);
    return buf;
}

/* A whole number in the option's range. */
static sim_rc parse_count(const char *command, const opt_row *o, const char *text, int *out, sim_err *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || *text == '\0' || *end != '\0' || v < o->min || v > o->max) {
        char q[112];
        return sim_fail(err, SIM_EINVAL, "heptasim %s: option '--%s' expects a whole number in [%d, %d], got '%s'",
                        command, o->name, o->min, o->max, quoted(text, q, sizeof q));
    }
    *out = (int)v;
    return SIM_OK;
}

/* The SimGrid settings --cfg takes, and what their values may be.  SimGrid
 * aborts the process on an unknown key or a bad value, and values it takes
 * can still hang a run (a bandwidth factor of 1e299) or make it
 * meaningless (a time precision of 1e200 s): numbers are held to ranges
 * that keep every run finite and about as fast as with the defaults
 * (both ends simulated on a small step; docs/inputs.md). */
typedef enum { SG_ENUM, SG_BOOL, SG_RANGE } sg_kind;
static const struct {
    const char *key;
    sg_kind kind;
    const char *values; /* SG_ENUM: '|'-separated */
    double min, max;    /* SG_RANGE */
    bool zero_ok;       /* SG_RANGE: 0 is also taken (it turns the feature off) */
} simgrid_settings[] = {
    {"network/optim", SG_ENUM, "Full|Lazy", 0, 0, false},
    {"network/maxmin-selective-update", SG_BOOL, NULL, 0, 0, false},
    /* bytes in flight of a TCP window; 0 (heptasim's) = no window limit */
    {"network/TCP-gamma", SG_RANGE, NULL, 1024, 1e12, true},
    /* multipliers of every latency and bandwidth (heptasim: 1) */
    {"network/latency-factor", SG_RANGE, NULL, 1e-3, 1e3, false},
    {"network/bandwidth-factor", SG_RANGE, NULL, 1e-3, 1e3, false},
    {"network/crosstraffic", SG_BOOL, NULL, 0, 0, false},
    {"network/weight-S", SG_RANGE, NULL, 0, 1e6, false},
    /* relative precision of the sharing solver (SimGrid: 1e-5) and the
     * time precision in seconds (SimGrid: 1e-9); coarser ones change step
     * times by more than the calibration error */
    {"maxmin/precision", SG_RANGE, NULL, 1e-15, 1e-2, false},
    {"surf/precision", SG_RANGE, NULL, 1e-15, 1e-6, false},
};
#define NSETTINGS (int)(sizeof simgrid_settings / sizeof simgrid_settings[0])

static bool enum_has(const char *values, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = values; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return true;
        if (!bar) break;
        p = bar + 1;
    }
    return false;
}

#define SG_TRUE "yes|true|on|1"
#define SG_FALSE "no|false|off|0"

/* Checks one --cfg KEY:VALUE; SIM_EINVAL with the accepted keys or values. */
static sim_rc check_simgrid_setting(const char *command, const char *arg, sim_err *err)
{
    const char *colon = strchr(arg, ':');
    size_t klen = colon ? (size_t)(colon - arg) : 0;
    const char *v = colon ? colon + 1 : "";
    char q[112];
    for (int i = 0; i < NSETTINGS; i++) {
        if (strlen(simgrid_settings[i].key) != klen || strncmp(simgrid_settings[i].key, arg, klen) != 0) continue;
        char *end = NULL;
        double x = strtod(v, &end);
        bool number = *v && end && *end == '\0' && isfinite(x);
        switch (simgrid_settings[i].kind) {
        case SG_ENUM:
            if (enum_has(simgrid_settings[i].values, v)) return SIM_OK;
            return sim_fail(err, SIM_EINVAL, "heptasim %s: '--cfg %s': the value must be one of %s", command,
                            quoted(arg, q, sizeof q), simgrid_settings[i].values);
        case SG_BOOL:
            if (enum_has(SG_TRUE, v) || enum_has(SG_FALSE, v)) return SIM_OK;
            return sim_fail(err, SIM_EINVAL, "heptasim %s: '--cfg %s': the value must be yes or no", command,
                            quoted(arg, q, sizeof q));
        case SG_RANGE:
            if (number && ((x >= simgrid_settings[i].min && x <= simgrid_settings[i].max) ||
                           (simgrid_settings[i].zero_ok && x == 0)))
                return SIM_OK;
            return sim_fail(err, SIM_EINVAL, "heptasim %s: '--cfg %s': the value must be a number in [%g, %g]%s",
                            command, quoted(arg, q, sizeof q), simgrid_settings[i].min, simgrid_settings[i].max,
                            simgrid_settings[i].zero_ok ? ", or 0 (off)" : "");
        }
    }
    char keys[512] = "";
    for (int i = 0; i < NSETTINGS; i++) {
        size_t used = strlen(keys);
        snprintf(keys + used, sizeof keys - used, "%s%s", i ? ", " : "", simgrid_settings[i].key);
    }
    return sim_fail(err, SIM_EINVAL, "heptasim %s: '--cfg %s': not a setting heptasim passes to SimGrid (use one of %s)",
                    command, quoted(arg, q, sizeof q), keys);
}

/* True when the settings turn network/crosstraffic on (the last one wins). */
static bool crosstraffic_on(const cli_args *a)
{
    static const char key[] = "network/crosstraffic:";
    bool on = false;
    for (int i = 0; i < a->nsimgrid; i++)
        if (strncmp(a->simgrid[i], key, sizeof key - 1) == 0) on = enum_has(SG_TRUE, a->simgrid[i] + sizeof key - 1);
    return on;
}

/* I/N of --shard: 0 <= I < N <= CLI_MAX_SHARDS. */
static sim_rc parse_shard(const char *command, const char *val, cli_args *a, sim_err *err)
{
    char *slash = NULL, *end = NULL;
    errno = 0;
    long long i = strtoll(val, &slash, 10);
    long long n = (slash != val && *slash == '/') ? strtoll(slash + 1, &end, 10) : -1;
    bool digits = val[0] >= '0' && val[0] <= '9' && slash && slash[0] == '/' && slash[1] >= '0' && slash[1] <= '9';
    if (errno || !digits || !end || *end != '\0' || n < 1 || n > CLI_MAX_SHARDS || i < 0 || i >= n) {
        char q[112];
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--shard' takes I/N with 0 <= I < N <= %d, got '%s'", command,
                        CLI_MAX_SHARDS, quoted(val, q, sizeof q));
    }
    a->shard_index = (int)i;
    a->shard_count = (int)n;
    return SIM_OK;
}

/* PCT of --step: a number of per cent (a trailing '%' allowed) in
 * (0, 90]. */
static sim_rc parse_step(const char *command, const char *val, cli_args *a, sim_err *err)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(val, &end);
    if (end && *end == '%') end++;
    if (errno || end == val || !end || *end != '\0' || !isfinite(v) || !(v > 0) || v > 90) {
        char q[112];
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--step' takes a per cent above 0 and at most 90 (e.g. "
                        "--step 20), got '%s'", command, quoted(val, q, sizeof q));
    }
    a->step = v / 100;
    return SIM_OK;
}

static sim_rc apply(const char *command, const opt_row *o, const char *val, cli_args *a, sim_err *err)
{
    char q[112];
    if (o->names && sim_enum_value(o->names, o->nnames, val) < 0) {
        char names[96], hint[96] = "";
        sim_enum_names_text(o->names, o->nnames, true, names, sizeof names);
        const char *cands[16];
        int nc = o->nnames < 16 ? o->nnames : 16;
        for (int i = 0; i < nc; i++) cands[i] = o->names[i].name;
        const char *close = cfg_suggest(val, cands, nc);
        if (close) snprintf(hint, sizeof hint, " (did you mean '%s'?)", close);
        return sim_fail(err, SIM_EINVAL, "heptasim %s: '--%s' takes %s, got '%s'%s", command, o->name, names,
                        quoted(val, q, sizeof q), hint);
    }
    switch (o->id) {
    case O_MODEL: a->model = val; break;
    case O_PLATFORM: a->platform = val; break;
    case O_STRATEGY: a->strategy = val; break;
    case O_SET:
        if (a->nsets == CLI_MAX_SETS)
            return sim_fail(err, SIM_EINVAL, "heptasim %s: too many '--set' options (at most %d)", command,
                            CLI_MAX_SETS);
        if (!strchr(val, '=') || val[0] == '=')
            return sim_fail(err, SIM_EINVAL, "heptasim %s: '--set %s' must be KEY=VALUE, e.g. --set tp_x=4", command,
                            quoted(val, q, sizeof q));
        a->sets[a->nsets++] = val;
        break;
    case O_DEVICES: return parse_count(command, o, val, &a->devices, err);
    case O_JSON: a->json_path = val; break;
    case O_CSV: a->csv_path = val; break;
    case O_DUMP: a->dump_platform = val; break;
    case O_COMM: a->comm_mode = val; break;
    case O_SYMMETRY: a->symmetry = val; break;
    case O_SIMGRID:
        if (a->nsimgrid == CLI_MAX_SIMGRID)
            return sim_fail(err, SIM_EINVAL, "heptasim %s: too many '--cfg' options (at most %d)", command,
                            CLI_MAX_SIMGRID);
        if (!strchr(val, ':') || val[0] == ':')
            return sim_fail(err, SIM_EINVAL, "heptasim %s: '--cfg %s' must be KEY:VALUE, e.g. --cfg network/optim:Lazy",
                            command, quoted(val, q, sizeof q));
        if (check_simgrid_setting(command, val, err) != SIM_OK) return SIM_EINVAL;
        a->simgrid[a->nsimgrid++] = val;
        break;
    case O_SPACE: a->space = val; break;
    case O_MEGATRON_CP: a->megatron_cp = val; break;
    case O_TOP: return parse_count(command, o, val, &a->top, err);
    case O_JOBS: return parse_count(command, o, val, &a->jobs, err);
    case O_GLOBAL_BATCH: return parse_count(command, o, val, &a->global_batch, err);
    case O_GLOBAL_TOKENS: return parse_count(command, o, val, &a->global_tokens, err);
    case O_STEP: return parse_step(command, val, a, err);
    case O_SIMULATE:
        a->simulate_given = true;
        return parse_count(command, o, val, &a->simulate, err);
    case O_SENS_SEARCH: a->sens_search = true; break;
    case O_OUT: a->out_path = val; break;
    case O_RESUME: a->resume = true; break;
    case O_NO_CACHE: a->no_cache = true; break;
    case O_BUDGET: return parse_count(command, o, val, &a->budget_s, err);
    case O_SAVE_BEST: a->save_best = val; break;
    case O_SAVE_TOP: a->save_top = val; break;
    case O_SHARD: return parse_shard(command, val, a, err);
    case O_RELIABILITY: a->reliability = val; break;
    case O_INTERVAL: a->interval = val; break;
    case O_TOKENS: a->tokens = val; break;
    case O_DAYS: a->days = val; break;
    case O_SEEDS: return parse_count(command, o, val, &a->seeds, err);
    case O_SEED: a->seed_given = true; return parse_count(command, o, val, &a->seed, err);
    case O_NO_STRAGGLERS: a->no_stragglers = true; break;
    case O_GOODPUT: a->goodput = true; break;
    case O_OBJECTIVE: a->objective = val; break;
    case O_TRACE: a->trace_path = val; break;
    case O_TRACE_RANKS: a->trace_ranks = val; break;
    case O_REPORT: a->report_path = val; break;
    case O_BLESS: a->bless = true; break;
    case O_FULL: a->full = true; break;
    case O_LOO: a->loo = true; break;
    case O_FIT: a->fit = val; break;
    case O_LIST: a->list = true; break;
    case O_CELLS: a->cells = val; break;
    case O_PROGRESS: a->progress_path = val; break;
    case O_QUIET: a->quiet = true; break;
    case O_HELP: a->help = true; break;
    }
    return SIM_OK;
}

/* A file name longer than heptasim takes, refused with its length. */
static sim_rc long_path(const char *command, const char *what, const char *val, sim_err *err)
{
    return sim_fail(err, SIM_EINVAL,
                    "heptasim %s: %s: a file name of %zu characters is longer than the %d heptasim takes (use a "
                    "shorter path, or a symbolic link)",
                    command, what, strlen(val), SIM_MAX_PATH);
}

/* {============================================ outputs naming one file */

/* path with its directory resolved (realpath) into a new string; path
 * itself when the directory cannot be resolved. */
static char *canonical(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? sim_xstrdup(path) : sim_xstrdup(".");
    if (slash) dir[slash == path ? 1 : slash - path] = '\0';
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real) return sim_xstrdup(path);
    size_t cap = strlen(real) + strlen(base) + 2;
    char *out = sim_xcalloc(1, cap);
    snprintf(out, cap, "%s/%s", real, base);
    free(real);
    return out;
}

/* Whether two output paths name one file: the same device and inode when
 * both exist, else the same resolved directory and name; stdout ("-")
 * twice.  Outputs to a device (/dev/null) never clash. */
static bool same_output(const char *a, const char *b)
{
    if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0) return strcmp(a, b) == 0; /* stdout twice: interleaved */
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if ((ea && !S_ISREG(sa.st_mode)) || (eb && !S_ISREG(sb.st_mode))) return false;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb) return false;
    char *ca = canonical(a), *cb = canonical(b);
    bool same = strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    return same;
}

/* SIM_EINVAL naming both options when two outputs of a name one file. */
static sim_rc distinct_outputs(const char *command, const cli_args *a, sim_err *err)
{
    const struct { const char *option, *path; } outs[] = {
        {"--json", a->json_path},   {"--trace", a->trace_path}, {"--report", a->report_path},
        {"--out", a->out_path},     {"--dump-platform", a->dump_platform}, {"--progress", a->progress_path},
    };
    int n = (int)(sizeof outs / sizeof outs[0]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && outs[i].path; j++) {
            if (!outs[j].path || !same_output(outs[i].path, outs[j].path)) continue;
            char qa[112], qb[112];
            return sim_fail(err, SIM_EINVAL,
                            "heptasim %s: '%s %s' and '%s %s' name one file (one output would destroy the other); "
                            "give each its own file", command, outs[i].option, quoted(outs[i].path, qa, sizeof qa),
                            outs[j].option, quoted(outs[j].path, qb, sizeof qb));
        }
    return SIM_OK;
}

/* }============================================ outputs naming one file */

static sim_rc parse_args(int argc, char **argv, int first, unsigned accepted, const char *command, cli_args *a,
                         sim_err *err)
{
    char q[112];
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        const opt_row *o = NULL;
        const char *val = NULL;
        if (strncmp(arg, "--", 2) == 0 && arg[2]) {
            const char *name = arg + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            o = find_long(name, len, accepted);
            if (!o && find_long(name, len, ~0u))
                return sim_fail(err, SIM_EINVAL, "heptasim %s: option '--%.*s' does not apply to this command (see "
                                "'heptasim %s --help')", command, (int)len, name, command);
            if (!o)
                return sim_fail(err, SIM_EINVAL, "heptasim %s: unknown option '--%s' (see 'heptasim %s --help')",
                                command, quoted(len > 80 ? name : arg + 2, q, sizeof q), command);
            if (eq) {
                if (!takes_value(o))
                    return sim_fail(err, SIM_EINVAL, "heptasim %s: option '--%s' takes no value", command, o->name);
                val = eq + 1;
            }
        } else if (arg[0] == '-' && arg[1] && !arg[2]) {
            o = find_short(arg[1], accepted);
            if (!o && find_short(arg[1], ~0u))
                return sim_fail(err, SIM_EINVAL,
                                "heptasim %s: option '%s' does not apply to this command (see 'heptasim %s --help')",
                                command, arg, command);
            if (!o)
                return sim_fail(err, SIM_EINVAL, "heptasim %s: unknown option '%s' (see 'heptasim %s --help')",
                                command, arg, command);
        } else if (accepted & CLI_OPT_FILES) {
            if (a->nfiles == CLI_MAX_FILES)
                return sim_fail(err, SIM_EINVAL, "heptasim %s: too many files (at most %d)", command, CLI_MAX_FILES);
            if (!arg[0]) return sim_fail(err, SIM_EINVAL, "heptasim %s: an empty file argument (name a file)", command);
            if (strlen(arg) > SIM_MAX_PATH) return long_path(command, "a file argument", arg, err);
            a->files[a->nfiles++] = arg;
            continue;
        } else {
            return sim_fail(err, SIM_EINVAL, "heptasim %s: unexpected argument '%s' (see 'heptasim %s --help')",
                            command, quoted(arg, q, sizeof q), command);
        }
        char metavar[64];
        if (takes_value(o) && !val) {
            if (i + 1 >= argc)
                return sim_fail(err, SIM_EINVAL, "heptasim %s: option '%s' needs a value (%s)", command, arg,
                                arg_of(o, metavar, sizeof metavar));
            val = argv[++i];
        }
        if (takes_value(o) && !val[0])
            return sim_fail(err, SIM_EINVAL, "heptasim %s: option '--%s' needs a value (%s), got an empty one",
                            command, o->name, arg_of(o, metavar, sizeof metavar));
        if (o->path && strlen(val) > SIM_MAX_PATH) {
            char what[48];
            snprintf(what, sizeof what, "option '--%s'", o->name);
            return long_path(command, what, val, err);
        }
        sim_rc rc = apply(command, o, val, a, err);
        if (rc != SIM_OK) return rc;
    }
    sim_rc rc = distinct_outputs(command, a, err);
    if (rc != SIM_OK) return rc;
    /* Cross traffic sends each flow's acknowledgements back over the
     * reverse route; the reduced replays route the flows to mirrors one way
     * only, and SimGrid then waits for ever. */
    if (crosstraffic_on(a) && cli_symmetry(a) != ENG_SYM_NONE)
        return sim_fail(err, SIM_EINVAL,
                        "heptasim %s: '--cfg network/crosstraffic:yes' needs '--symmetry %s' (the reduced replay "
                        "of --symmetry %s sends flows one way only, which SimGrid's cross traffic cannot model)",
                        command, eng_symmetry_name(ENG_SYM_NONE), eng_symmetry_name(cli_symmetry(a)));
    return SIM_OK;
}

eng_symmetry cli_symmetry(const cli_args *a)
{
    int sym = a->symmetry ? sim_enum_value(eng_symmetry_names, ENG_NSYMMETRIES, a->symmetry) : -1;
    return sym >= 0 ? (eng_symmetry)sym : ENG_SYM_TP;
}

eng_options cli_engine_options(const cli_args *a)
{
    eng_options opt = {0};
    int mode = a->comm_mode ? sim_enum_value(eng_comm_mode_names, ENG_NCOMM_MODES, a->comm_mode) : -1;
    opt.comm_mode = mode >= 0 ? (eng_comm_mode)mode : ENG_FLOWS;
    opt.symmetry = cli_symmetry(a);
    opt.dump_xml_path = a->dump_platform;
    return opt;
}

sim_rc cli_simgrid_options(const cli_args *a, sim_err *err)
{
    sim_rc rc = SIM_OK;
    for (int i = 0; i < a->nsimgrid && rc == SIM_OK; i++) {
        char arg[256];
        snprintf(arg, sizeof arg, "--cfg=%s", a->simgrid[i]);
        rc = eng_simgrid_option(arg, err);
    }
    return rc;
}

sim_rc cli_parse(int argc, char **argv, int first, unsigned accepted, const char *command, cli_args *a,
                 sim_err *err)
{
    sim_rc rc = parse_args(argc, argv, first, accepted, command, a, err);
    /* An argument may hold any byte: keep the message on one line. */
    if (rc != SIM_OK && err)
        for (char *c = err->msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    return rc;
}

void cli_print_options(unsigned accepted)
{
    puts("options:");
    for (int i = 0; i < NOPTIONS; i++) {
        const opt_row *o = &options[i];
        if (o->group && !(o->group & accepted)) continue;
        char left[96], metavar[64];
        const char *value = takes_value(o) ? arg_of(o, metavar, sizeof metavar) : NULL;
        if (o->short_name)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, value ? " " : "", value ? value : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, value ? " " : "", value ? value : "");
        if (o->max > 0)
            printf("  %-28s %s (%d to %d)\n", left, o->help, o->min, o->max);
        else
            printf("  %-28s %s\n", left, o->help);
    }
}
