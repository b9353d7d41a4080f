/* cmd_goodput.c - `heptasim goodput`: simulate the step (and the step
 * with each of the reliability file's slow parts), then the run over days
 * on it (sim/goodput), and write its summary and JSON. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../goodput/goodput.h"
#include "../report/goodput.h"
#include "../runner/runner.h"
#include "commands.h"

#define DEFAULT_RELIABILITY "llama3-16k"

/* A positive finite number from option text, or SIM_EINVAL naming it. */
static sim_rc positive(const char *opt, const char *text, double *out, sim_err *err)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (!*text || !end || *end || !isfinite(v) || !(v > 0))
        return sim_fail(err, SIM_EINVAL, "heptasim goodput: '--%s %s': expected a number above 0", opt, text);
    *out = v;
    return SIM_OK;
}

/* The platform of c with one slow part of straggler row r, at an index
 * drawn from the seed. */
static void slow_platform(run_case *c, const cfg_rel_straggler *r, gsl_rng *rng)
{
    cfg_platform *p = &c->platform;
    int units = r->kind == CFG_STRAGGLER_NODE ? p->devices / p->devices_per_node : p->devices;
    p->nstragglers = 1;
    p->stragglers[0].kind = r->kind;
    p->stragglers[0].index = (int)gsl_rng_uniform_int(rng, (unsigned long)(units > 0 ? units : 1));
    p->stragglers[0].speed = r->speed;
}

int cmd_goodput(const cli_args *a)
{
    sim_err err = {{0}};
    cli_inputs in;
    cfg_reliability *rel = sim_xcalloc(1, sizeof *rel);
    gp_inputs g = {0};
    g.interval_s = 600;
    g.horizon_s = 54 * 86400.0;
    g.seeds = a->seeds > 0 ? a->seeds : 100;
    g.seed = a->seed_given ? (unsigned long)a->seed : 1;
    g.stragglers_off = a->no_stragglers;
    double v;
    sim_rc rc = SIM_OK;
    if (a->interval) rc = positive("interval", a->interval, &v, &err), g.interval_s = v * 60;
    if (rc == SIM_OK && a->tokens) rc = positive("tokens", a->tokens, &g.token_budget, &err);
    if (rc == SIM_OK && a->days) rc = positive("days", a->days, &v, &err), g.horizon_s = v * 86400;
    if (rc == SIM_OK && a->tokens && a->days)
        rc = sim_fail(&err, SIM_EINVAL, "heptasim goodput: '--tokens' and '--days' cannot be used together");
    if (rc == SIM_OK) rc = cfg_load_reliability(a->reliability ? a->reliability : DEFAULT_RELIABILITY, rel, &err);
    if (rc == SIM_OK) rc = cli_load_inputs(a, true, &in, &err);
    if (rc == SIM_OK) rc = gp_checkpoint_of(&in.model, &in.platform, &in.strategy, &g.ckpt, &err);
    rpt_run run;
    if (rc == SIM_OK) {
        cli_run_init(&run, a, &in.model, &in.platform, &in.strategy);
        rc = rpt_check_fits(&run, &err);
    }
    int ncases = 1 + (g.stragglers_off ? 0 : rel->nstragglers);
    run_case *cases = sim_xcalloc((size_t)ncases, sizeof *cases);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, g.seed);
    for (int i = 0; i < ncases && rc == SIM_OK; i++) {
        cases[i].model = in.model;
        cases[i].platform = in.platform;
        cases[i].strategy = in.strategy;
        if (i > 0) slow_platform(&cases[i], &rel->stragglers[i - 1], rng);
    }
    gsl_rng_free(rng);
    if (rc == SIM_OK) rc = runner_check_replay(&cases[0], NULL, &err);
    if (rc == SIM_OK) rc = runner_simulate_all(cases, ncases, cli_jobs(a), NULL, NULL, &err);
    for (int i = 0; i < ncases && rc == SIM_OK; i++)
        if (cases[i].rc != SIM_OK) {
            rc = cases[i].rc;
            sim_strlcpy(err.msg, cases[i].msg, sizeof err.msg);
        }
    gp_result res;
    rpt_goodput doc = {0};
    if (rc == SIM_OK) {
        g.rel = rel;
        g.devices = cfg_world_size(&in.strategy);
        g.devices_per_node = in.platform.devices_per_node;
        g.step_s = cases[0].result.step_time_s;
        for (int i = 1; i < ncases; i++) g.straggler_step_s[i - 1] = cases[i].result.step_time_s;
        g.tokens_per_step = (double)in.strategy.global_batch * in.model.seq_len;
        rc = gp_run(&g, &res, &err);
    }
    if (rc == SIM_OK) {
        doc = (rpt_goodput){.model = in.model.name, .platform = in.platform.name, .strategy = in.strategy.name,
                            .in = &g, .res = &res};
        if (isfinite(res.young_daly_s) && res.young_daly_s > g.step_s)
            rc = gp_best_interval(&g, res.young_daly_s / 4, res.young_daly_s * 4, 17, &doc.best_interval_s,
                                  &doc.best_ettr, &err);
    }
    if (rc == SIM_OK && !a->quiet) rpt_goodput_summary(cli_summary_stream(a), &doc);
    if (rc == SIM_OK && a->json_path) rc = rpt_write_goodput_json(a->json_path, &doc, &err);
    free(cases);
    free(rel);
    return rc == SIM_OK ? 0 : cli_fail(rc, &err);
}
