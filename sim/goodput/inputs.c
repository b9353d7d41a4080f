/* inputs.c - the inputs of a run over days from a command's options: the
 * checkpoint from the memory model, the job's size and tokens, and the
 * cases of the slow steps the reliability file's stragglers need. */
#include <gsl/gsl_rng.h>
#include <string.h>

#include "../runner/runner.h"
#include "goodput.h"

sim_rc gp_inputs_make(const gp_options *o, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s,
                      gp_inputs *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    sim_rc rc = gp_checkpoint_of(m, p, s, &out->ckpt, err);
    if (rc != SIM_OK) return rc;
    out->rel = o->rel;
    out->devices = cfg_world_size(s);
    out->devices_per_node = p->devices_per_node;
    out->stragglers_off = o->stragglers_off;
    out->tokens_per_step = (double)s->global_batch * m->seq_len;
    out->interval_s = o->interval_s;
    out->token_budget = o->token_budget;
    out->horizon_s = o->horizon_s;
    out->seeds = o->seeds;
    out->seed = o->seed;
    return SIM_OK;
}

int gp_straggler_count(const gp_options *o)
{
    return o->stragglers_off ? 0 : o->rel->nstragglers;
}

void gp_straggler_cases(const gp_options *o, const run_case *base, run_case *out)
{
    int n = gp_straggler_count(o);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, o->seed);
    for (int i = 0; i < n; i++) {
        const cfg_rel_straggler *r = &o->rel->stragglers[i];
        run_case *c = &out[i];
        memset(c, 0, sizeof *c);
        c->model = base->model;
        c->platform = base->platform;
        c->strategy = base->strategy;
        c->options = base->options;
        cfg_platform *p = &c->platform;
        int units = r->kind == CFG_STRAGGLER_NODE ? p->devices / p->devices_per_node : p->devices;
        p->nstragglers = 1;
        p->stragglers[0].kind = r->kind;
        p->stragglers[0].index = (int)gsl_rng_uniform_int(rng, (unsigned long)(units > 0 ? units : 1));
        p->stragglers[0].speed = r->speed;
    }
    gsl_rng_free(rng);
}
