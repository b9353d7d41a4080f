/* goodput.h (report) - the documents of a run over days (gp_result): the
 * text summary, the JSON document, the CSV of the trials, the HTML report
 * with its progress plot, and why one strategy finishes first. */
#ifndef HEPTASIM_REPORT_GOODPUT_H
#define HEPTASIM_REPORT_GOODPUT_H

#include <stdio.h>

#include "../goodput/goodput.h"

/* What a goodput document shows besides the Monte Carlo's result. */
typedef struct rpt_goodput {
    const char *model, *platform, *strategy;  /* names */
    const gp_inputs *in;
    const gp_result *res;
    double best_interval_s, best_ettr;        /* the simulated optimum (0: not searched) */
    double straggler_index[CFG_MAX_REL_STRAGGLERS]; /* the part each straggler step slowed */
    const gp_trial *trials;                   /* res->seeds trials, for the CSV (NULL: none) */
    const gp_band *band;                      /* the progress plot of the HTML (NULL: none) */
} rpt_goodput;

/* The text summary on f. */
void rpt_goodput_summary(FILE *f, const rpt_goodput *g);
/* The JSON document, as a cJSON object the caller deletes (void*: no
 * cJSON.h here); and written to path ("-": stdout).  run --json holds the
 * same object under "goodput". */
void *rpt_goodput_to_json(const rpt_goodput *g);
sim_rc rpt_write_goodput_json(const char *path, const rpt_goodput *g, sim_err *err);
/* run --goodput --json: the run's document (rpt_write_json) with
 * run->goodput's under "goodput" (none when it is NULL). */
struct rpt_run;
sim_rc rpt_write_run_goodput_json(const char *path, const struct rpt_run *run, sim_err *err);

/* One row per trial (g->trials) as a cJSON array for rpt_write_csv with
 * rpt_goodput_csv_columns (docs/outputs.md). */
void *rpt_goodput_trials_json(const rpt_goodput *g);
extern const char *const rpt_goodput_csv_columns[];

/* The HTML section of the run over days (a summary table, the progress
 * plot when g->band is set), for run's report too; and the whole report
 * of goodput --report to path. */
void rpt_goodput_html_section(FILE *f, const rpt_goodput *g);
sim_rc rpt_write_goodput_html(const char *path, const rpt_goodput *g, sim_err *err);

/* Days (or goodput) within this fraction of each other are a tie: the
 * Monte Carlo's mean over 100 seeds moves by more between seed sets. */
#define GP_TIE_REL 1e-3

/* One strategy of a comparison by goodput. */
typedef struct rpt_goodput_side {
    const char *name;
    const gp_inputs *in;
    const gp_result *res;
} rpt_goodput_side;

/* Which of a and b finishes first (fewer mean days to the token budget;
 * without a budget, more goodput in the horizon), in one line to out:
 * the days or goodput of both and, when the other has the faster step,
 * why it finishes later: the cause whose share of the wall clock differs
 * most between them (gp_cause), and the figure of the model behind it
 * (failure rate, checkpoint stall, reload, persist time).  Returns 0 when
 * a is first, 1 when b. */
int rpt_goodput_why(const rpt_goodput_side *a, const rpt_goodput_side *b, char *out, size_t cap);

/* A sweep's or compare's simulated candidates ranked by goodput, as the
 * search hands them over. */
typedef struct rpt_goodput_rank {
    const rpt_goodput_side *rows; /* best first */
    const bool *megatron_style;   /* per row */
    int n;
    int best, megatron;           /* rows of the bests by goodput (-1: none) */
    const char *step_best, *step_megatron; /* names of the bests by step time (NULL: none) */
    bool compare;                 /* compare: both bests and why one finishes first */
    int top;                      /* candidates simulated (of each space, for compare) */
} rpt_goodput_rank;

/* Its text block: what was ranked and how, the table (step, days, ETTR,
 * goodput, share of the wall clock lost by cause), the bests and, for
 * compare, rpt_goodput_why of the two. */
void rpt_print_goodput_rank(FILE *f, const rpt_goodput_rank *r);
/* Its JSON object (compare's and sweep's "goodput" key; void*: cJSON). */
void *rpt_goodput_rank_json(const rpt_goodput_rank *r);
/* A record row's goodput columns (docs/outputs.md): the "goodput" object
 * rpt_goodput_record_json adds to a record row, and its CSV columns. */
void *rpt_goodput_record_json(const rpt_goodput_side *x);
extern const char *const rpt_goodput_record_columns[];

#endif
