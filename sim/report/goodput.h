/* goodput.h (report) - the documents of `heptasim goodput`: the text
 * summary and the JSON document of a run over days (gp_result). */
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
} rpt_goodput;

/* The text summary on f. */
void rpt_goodput_summary(FILE *f, const rpt_goodput *g);
/* The JSON document to path ("-": stdout). */
sim_rc rpt_write_goodput_json(const char *path, const rpt_goodput *g, sim_err *err);

#endif
