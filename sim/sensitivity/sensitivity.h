/* sensitivity.h - how much each platform figure moves the step time: every
 * figure perturbed down and up by a step, one at a time, through the
 * platform overrides (--set platform.KEY=VALUE), estimated analytically,
 * the figures that move it most simulated (docs/sensitivity.md). */
#ifndef HEPTASIM_SENSITIVITY_H
#define HEPTASIM_SENSITIVITY_H

#include "../report/report.h"
#include "../search/search.h"

typedef struct sens_request {
    const cfg_model *model;
    const cfg_platform *platform; /* loaded from platform_name with ov and devices */
    const char *platform_name;    /* the name or path it was loaded from */
    cfg_overrides ov;             /* the --set items it was loaded with */
    int devices;                  /* --devices (0: the platform's) */
    const cfg_strategy *strategy; /* checked on platform */
    double step;                  /* relative step, in (0, SENS_STEP_MAX] */
    int simulate;                 /* figures to simulate, the first of the order (0: none) */
    int jobs;                     /* simulations at once */
    bool search;                  /* search the best strategy again on both ends of the simulated rows */
} sens_request;

#define SENS_STEP_MAX 0.9

typedef struct sens_result {
    rpt_sens_row *rows;           /* in decreasing swing of the estimate, then table order */
    int nrows;
    double estimate_s;
    bool simulated;
    double simulated_s;
    bool searched;
    srch_space space;             /* searched: the Megatron-style space for a Megatron-style strategy, else 7D */
    char best[CFG_TEXT_LEN];      /* searched: the best by estimate on the platform itself */
    double best_estimate_s;
    int failed;                   /* simulations that failed (their points not simulated) */
    char first_failure[SIM_ERR_LEN];
} sens_result;

/* Perturb, estimate, order and simulate.  SIM_OK and *out (free with
 * sens_result_free); the estimator's error on the base platform; SIM_EINTR
 * when stopped by a signal. */
sim_rc sens_run(const sens_request *rq, sens_result *out, sim_err *err);
void sens_result_free(sens_result *r);

/* The --set item that puts figure key of p (JSON units: cfg_platform_to_json)
 * at factor times its value (a curve: every point's efficiency times
 * factor, at most 1; an integer: rounded).  False with the reason in why
 * when p has no such figure or it is 0. Exposed for the tests. */
bool sens_override(const cfg_platform *p, const char *key, double factor, char *out, size_t cap, double *value,
                   char *why, size_t why_cap);

#endif
