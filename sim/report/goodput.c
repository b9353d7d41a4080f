/* goodput.c (report) - the text summary and JSON document of a run over
 * days: ETTR, goodput, days, interruptions and the time lost by cause. */
#include "goodput.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "report.h"

static cJSON *num(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

static cJSON *stats(const gp_stats *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "mean", num(s->mean));
    cJSON_AddItemToObject(o, "p10", num(s->p10));
    cJSON_AddItemToObject(o, "p50", num(s->p50));
    cJSON_AddItemToObject(o, "p90", num(s->p90));
    return o;
}

void rpt_goodput_summary(FILE *f, const rpt_goodput *g)
{
    const gp_inputs *in = g->in;
    const gp_result *r = g->res;
    char a[32], b[32], c[32];
    fprintf(f, "goodput: %s on %s (%d devices), strategy %s, reliability %s, %d trials from seed %lu\n", g->model,
            g->platform, in->devices, g->strategy, in->rel->name, r->seeds, in->seed);
    fprintf(f, "  step %s simulated, %s tokens a step\n", sim_fmt_time(in->step_s, a, sizeof a),
            sim_fmt_count(in->tokens_per_step, b, sizeof b));
    fprintf(f, "  checkpoint %s (%s a rank written, %s held)\n", sim_fmt_bytes(in->ckpt.total_bytes, a, sizeof a),
            sim_fmt_bytes(in->ckpt.share_bytes, b, sizeof b), sim_fmt_bytes(in->ckpt.rank_bytes, c, sizeof c));
    fprintf(f, "    stall %s, on storage after %s, reload %s", sim_fmt_time(in->ckpt.stall_s, a, sizeof a),
            sim_fmt_time(in->ckpt.persist_s, b, sizeof b), sim_fmt_time(in->ckpt.read_s, c, sizeof c));
    fprintf(f, ", every %s of training\n", sim_fmt_time(in->interval_s, a, sizeof a));
    fprintf(f, "  ETTR %.2f %% (p10 %.2f, p50 %.2f, p90 %.2f)\n", 100 * r->ettr.mean, 100 * r->ettr.p10,
            100 * r->ettr.p50, 100 * r->ettr.p90);
    fprintf(f, "  goodput %s tokens/s of wall clock (p10 %s, p90 %s)\n",
            sim_fmt_count(r->goodput_tokens_per_s.mean, a, sizeof a),
            sim_fmt_count(r->goodput_tokens_per_s.p10, b, sizeof b),
            sim_fmt_count(r->goodput_tokens_per_s.p90, c, sizeof c));
    fprintf(f, "  days %.2f (p10 %.2f, p50 %.2f, p90 %.2f)%s\n", r->days.mean, r->days.p10, r->days.p50, r->days.p90,
            in->token_budget > 0 ? " to the token budget" : " (the horizon)");
    fprintf(f, "  interruptions %.1f unexpected (p10 %.0f, p90 %.0f) + %.1f planned; MTBF %s\n", r->interruptions.mean,
            r->interruptions.p10, r->interruptions.p90, r->planned_mean,
            sim_fmt_time(1.0 / r->failure_rate_per_s, a, sizeof a));
    fprintf(f, "  time lost (mean per run):");
    for (int k = 0; k < GP_NCAUSES; k++)
        fprintf(f, "%s %s %.2f h", k ? "," : "", gp_cause_name((gp_cause)k), r->lost_mean_s[k] / 3600);
    fprintf(f, "\n");
    if (in->stragglers_off && in->rel->nstragglers > 0)
        fprintf(f, "  stragglers: left out (--no-stragglers): the file's slow parts were not simulated\n");
    for (int i = 0; i < in->rel->nstragglers && !in->stragglers_off; i++)
        fprintf(f, "  straggler %s at %.0f %% speed: simulated step %s (+%.2f %%), in %.0f %% of the runs\n",
                cfg_rel_unit_name(in->rel->stragglers[i].kind == 1 ? CFG_REL_NODE : CFG_REL_DEVICE),
                100 * in->rel->stragglers[i].speed, sim_fmt_time(in->straggler_step_s[i], a, sizeof a),
                100 * (in->straggler_step_s[i] / in->step_s - 1), 100 * r->straggler_runs);
    fprintf(f, "  checkpoint interval: Young/Daly %s", sim_fmt_time(r->young_daly_s, a, sizeof a));
    if (g->best_interval_s > 0)
        fprintf(f, ", simulated optimum %s (ETTR %.2f %%)", sim_fmt_time(g->best_interval_s, b, sizeof b),
                100 * g->best_ettr);
    fprintf(f, "\n  causes:");
    for (int i = 0; i < in->rel->ncomponents; i++)
        if (r->by_component_mean[i] > 0) fprintf(f, " %s %.1f", in->rel->components[i].name, r->by_component_mean[i]);
    fprintf(f, "\n");
}

sim_rc rpt_write_goodput_json(const char *path, const rpt_goodput *g, sim_err *err)
{
    const gp_inputs *in = g->in;
    const gp_result *r = g->res;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "model", g->model);
    cJSON_AddStringToObject(d, "platform", g->platform);
    cJSON_AddStringToObject(d, "strategy", g->strategy);
    cJSON_AddStringToObject(d, "reliability", in->rel->name);
    cJSON_AddNumberToObject(d, "devices", in->devices);
    cJSON_AddNumberToObject(d, "seeds", r->seeds);
    cJSON_AddNumberToObject(d, "seed", (double)in->seed);
    cJSON_AddItemToObject(d, "step_time_s", num(in->step_s));
    cJSON_AddItemToObject(d, "tokens_per_step", num(in->tokens_per_step));
    cJSON_AddItemToObject(d, "token_budget", in->token_budget > 0 ? num(in->token_budget) : cJSON_CreateNull());
    cJSON_AddItemToObject(d, "horizon_s", in->token_budget > 0 ? cJSON_CreateNull() : num(in->horizon_s));
    cJSON *ck = cJSON_AddObjectToObject(d, "checkpoint");
    cJSON_AddItemToObject(ck, "total_bytes", num(in->ckpt.total_bytes));
    cJSON_AddItemToObject(ck, "rank_written_bytes", num(in->ckpt.share_bytes));
    cJSON_AddItemToObject(ck, "rank_held_bytes", num(in->ckpt.rank_bytes));
    cJSON_AddItemToObject(ck, "stall_s", num(in->ckpt.stall_s));
    cJSON_AddItemToObject(ck, "persist_s", num(in->ckpt.persist_s));
    cJSON_AddItemToObject(ck, "read_s", num(in->ckpt.read_s));
    cJSON_AddItemToObject(ck, "interval_s", num(in->interval_s));
    cJSON_AddItemToObject(ck, "young_daly_s", num(r->young_daly_s));
    cJSON_AddItemToObject(ck, "simulated_optimum_s", g->best_interval_s > 0 ? num(g->best_interval_s) : cJSON_CreateNull());
    cJSON_AddItemToObject(d, "ettr", stats(&r->ettr));
    cJSON_AddItemToObject(d, "goodput_tokens_per_s", stats(&r->goodput_tokens_per_s));
    cJSON_AddItemToObject(d, "days", stats(&r->days));
    cJSON_AddItemToObject(d, "interruptions", stats(&r->interruptions));
    cJSON_AddItemToObject(d, "planned_interruptions", num(r->planned_mean));
    cJSON_AddItemToObject(d, "mtbf_s", num(1.0 / r->failure_rate_per_s));
    cJSON *lost = cJSON_AddObjectToObject(d, "lost_s");
    for (int k = 0; k < GP_NCAUSES; k++) cJSON_AddItemToObject(lost, gp_cause_name((gp_cause)k), num(r->lost_mean_s[k]));
    cJSON *by = cJSON_AddObjectToObject(d, "interruptions_by_cause");
    for (int i = 0; i < in->rel->ncomponents; i++)
        cJSON_AddItemToObject(by, in->rel->components[i].name, num(r->by_component_mean[i]));
    cJSON *st = cJSON_AddArrayToObject(d, "stragglers");
    for (int i = 0; i < in->rel->nstragglers; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "speed", in->rel->stragglers[i].speed);
        cJSON_AddBoolToObject(o, "simulated", !in->stragglers_off);
        cJSON_AddItemToObject(o, "step_time_s", in->stragglers_off ? cJSON_CreateNull() : num(in->straggler_step_s[i]));
        cJSON_AddItemToArray(st, o);
    }
    cJSON_AddItemToObject(d, "straggler_run_fraction", num(r->straggler_runs));
    sim_rc rc = rpt_write_json_doc(path, d, "JSON goodput", err);
    cJSON_Delete(d);
    return rc;
}
