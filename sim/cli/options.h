/* options.h - the option table shared by the subcommands. */
#ifndef HEPTASIM_CLI_OPTIONS_H
#define HEPTASIM_CLI_OPTIONS_H

#include <stdbool.h>

#include "../config/config.h"
#include "../engine/engine.h"

/* Everything a subcommand may be given on the command line. */
typedef struct cli_args {
    const char *model, *platform, *strategy;
    const char *sets[CLI_MAX_SETS];
    int nsets;
    int devices;                 /* --devices, 0 = the platform's */
    const char *json_path;       /* --json FILE|- */
    const char *csv_path;        /* --csv FILE|- */
    const char *dump_platform;   /* --dump-platform FILE */
    const char *comm_mode;       /* --comm-mode flows|steps */
    const char *symmetry;        /* --symmetry tp|dp|none */
    const char *simgrid[CLI_MAX_SIMGRID]; /* --cfg KEY:VALUE */
    int nsimgrid;
    const char *progress_path;   /* --progress FILE */
    bool quiet;
    bool help;
    /* search */
    const char *space;           /* --space megatron|7d */
    int top;                     /* --top K (0 = default) */
    int jobs;                    /* --jobs J (0 = number of cores) */
    const char *out_path;        /* --out FILE */
    bool resume;                 /* --resume */
    bool no_cache;               /* --no-cache: search again, keep nothing in the search cache */
    int budget_s;                /* --budget SECONDS: widen the top until the simulated best holds (0 = no) */
    const char *save_best;       /* --save-best FILE: the best strategy as a strategy file */
    const char *save_top;        /* --save-top DIR: each ranked row as a strategy file */
    bool list;                   /* --list: study cells, run nothing */
    const char *cells;           /* --cells PATTERNS: the study cells to run */
    int shard_index, shard_count;/* --shard I/N (count 0 = no sharding) */
    int global_batch;            /* --global-batch B (0 = the strategy's / model default) */
    int global_tokens;           /* --global-tokens T: the global batch in tokens (0 = none) */
    const char *megatron_cp;     /* --megatron-cp ring|a2a (NULL = ring) */
    /* sensitivity */
    double step;                 /* --step PCT as a fraction (0 = the default) */
    int simulate;                /* --simulate N */
    bool simulate_given;
    bool sens_search;            /* --search */
    /* views */
    const char *trace_path;      /* --trace FILE */
    const char *trace_ranks;     /* --trace-ranks LIST */
    const char *report_path;     /* --report FILE.html */
    /* validation */
    bool bless;                  /* --bless */
    bool full;                   /* --full: simulate every data-parallel replica */
    bool loo;                    /* --loo: leave-one-out evaluation of a calibration */
    const char *fit;             /* --fit LIST: calibration parameters */
    /* goodput */
    const char *reliability;     /* --reliability NAME|FILE */
    const char *interval;        /* --interval MINUTES */
    const char *tokens;          /* --tokens T */
    const char *days;            /* --days D */
    int seeds;                   /* --seeds N (0 = default) */
    int seed;                    /* --seed S */
    bool seed_given;
    bool no_stragglers;          /* --no-stragglers */
    bool goodput;                /* run --goodput */
    const char *objective;       /* --objective step|goodput (NULL: step) */
    const char *files[CLI_MAX_FILES]; /* positional arguments */
    int nfiles;
    int argc;                    /* the command line (study records it) */
    char *const *argv;
} cli_args;

/* Which options a subcommand takes (bit set of CLI_OPT_*). */
enum {
    CLI_OPT_INPUTS = 1 << 0,     /* -m -p -s --set --devices */
    CLI_OPT_JSON = 1 << 1,
    CLI_OPT_ENGINE = 1 << 2,     /* --dump-platform --comm-mode --symmetry --cfg */
    CLI_OPT_QUIET = 1 << 3,
    CLI_OPT_SEARCH = 1 << 4,     /* --top --out --resume --global-batch --global-tokens --save-best --save-top */
    CLI_OPT_JOBS = 1 << 5,       /* --jobs */
    CLI_OPT_TRACE = 1 << 6,      /* --trace --trace-ranks */
    CLI_OPT_REPORT = 1 << 7,     /* --report */
    CLI_OPT_FILES = 1 << 8,      /* positional FILE arguments */
    CLI_OPT_BLESS = 1 << 9,      /* --bless */
    CLI_OPT_OUT = 1 << 10,       /* --out FILE alone */
    CLI_OPT_FULL = 1 << 11,      /* --full */
    CLI_OPT_FIT = 1 << 12,       /* --fit --loo */
    CLI_OPT_CASES = 1 << 13,     /* -p --set alone: each case names its model, strategy and devices */
    CLI_OPT_SYMMETRY = 1 << 14,  /* --symmetry alone */
    CLI_OPT_SPACE = 1 << 15,     /* --space --shard: one space searched, in shards (sweep) */
    CLI_OPT_CSV = 1 << 16,       /* --csv */
    CLI_OPT_STUDY = 1 << 17,     /* --out DIR --resume --shard --list of a study */
    CLI_OPT_PROGRESS = 1 << 18,  /* --progress */
    CLI_OPT_SENS = 1 << 19,      /* --step --simulate --search */
    CLI_OPT_GOODPUT = 1 << 20,   /* --reliability --interval --tokens --days --seeds --seed --no-stragglers */
    CLI_OPT_RUN_GOODPUT = 1 << 21, /* --goodput (run) */
    CLI_OPT_OBJECTIVE = 1 << 22, /* --objective (sweep, compare) */
    CLI_OPT_BUDGET = 1 << 23     /* --budget (sweep) */
};

/* Parse argv[first..argc) into a. Returns SIM_OK, or SIM_EINVAL with a
 * one-line message in err naming the option and the fix. */
sim_rc cli_parse(int argc, char **argv, int first, unsigned accepted, const char *command, cli_args *a,
                 sim_err *err);

/* The ranks to simulate asked for with --symmetry (ENG_SYM_TP without it). */
eng_symmetry cli_symmetry(const cli_args *a);

/* The engine options of the command line (--comm-mode, --symmetry,
 * --dump-platform); the --cfg settings go to SimGrid through
 * cli_simgrid_options. */
eng_options cli_engine_options(const cli_args *a);
sim_rc cli_simgrid_options(const cli_args *a, sim_err *err);

/* Print the options a subcommand takes, one per line with its help. */
void cli_print_options(unsigned accepted);

#endif
