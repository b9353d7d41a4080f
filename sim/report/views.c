/* views.c - the views of a simulated run: which ranks are traced, the
 * report timeline's sample of them, the trace file, and the engine's trace
 * callback that feeds both. */
#include "report.h"

#include <stdlib.h>

/* The ranks of the timeline: the traced ones, and by default (no list)
 * one rank per stage of at most RPT_TIMELINE_MAX_RANKS evenly spaced
 * stages.  A new array, or ranks itself when it needs no thinning. */
static bool *timeline_sample(const cfg_strategy *s, const bool *ranks, bool listed)
{
    if (listed || s->pp <= RPT_TIMELINE_MAX_RANKS) return (bool *)ranks;
    int world = cfg_world_size(s);
    bool *chosen = sim_xcalloc((size_t)s->pp, sizeof *chosen);
    for (int i = 0; i < RPT_TIMELINE_MAX_RANKS; i++)
        chosen[(long)i * (s->pp - 1) / (RPT_TIMELINE_MAX_RANKS - 1)] = true;
    bool *sample = sim_xcalloc((size_t)world, sizeof *sample);
    for (int r = 0; r < world; r++) sample[r] = ranks[r] && chosen[rpt_rank_stage(s, r)];
    free(chosen);
    return sample;
}

sim_rc rpt_views_open(rpt_views *v, const cfg_strategy *s, const char *trace_path, const char *trace_ranks,
                      const char *report_path, sim_err *err)
{
    *v = (rpt_views){0};
    if (!trace_path && !report_path) return SIM_OK;
    bool *ranks = sim_xcalloc((size_t)cfg_world_size(s), sizeof *ranks);
    sim_rc rc = rpt_trace_ranks(trace_ranks, s, ranks, err);
    if (rc == SIM_OK && report_path) rc = sim_out_check(report_path, "HTML report", err);
    if (rc == SIM_OK && report_path) {
        bool *sample = timeline_sample(s, ranks, trace_ranks != NULL);
        v->timeline = rpt_timeline_new(s, sample);
        if (sample != ranks) free(sample);
    }
    if (rc == SIM_OK && trace_path) rc = rpt_trace_open(trace_path, s, &v->trace, err);
    v->ranks = ranks;
    if (rc != SIM_OK) rpt_views_free(v);
    return rc;
}

void rpt_views_free(rpt_views *v)
{
    rpt_timeline_free(v->timeline);
    free(v->ranks);
    v->timeline = NULL;
    v->ranks = NULL;
}

/* Feeds one completed instruction to the trace file and the timeline. */
void rpt_views_record(void *ctx, int rank, const wl_instr *in, int stream, double start_s, double end_s)
{
    rpt_views *v = ctx;
    if (v->trace) rpt_trace_add(v->trace, rank, in, stream, start_s, end_s);
    if (v->timeline) rpt_timeline_add(v->timeline, rank, in, stream, start_s, end_s);
}
