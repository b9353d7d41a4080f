/* goodput.c (report) - the documents of a run over days: the text
 * summary, the JSON document, the CSV of the trials, why one strategy
 * finishes before another, and a search's ranking by goodput (the HTML
 * report is goodput_html.c's). */
#include "goodput.h"

#include <cjson/cJSON.h>
#include <math.h>

#include <stdlib.h>
#include <string.h>

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
    if (in->approximate)
        fprintf(f, "  APPROXIMATE: the steps were simulated with --symmetry dp (one data-parallel replica, each actor at "
                   "the speed of the slowest rank it stands for)\n");
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

void *rpt_goodput_to_json(const rpt_goodput *g)
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
    cJSON_AddBoolToObject(d, "approximate", in->approximate);
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
    return d;
}

sim_rc rpt_write_run_goodput_json(const char *path, const rpt_run *run, sim_err *err)
{
    cJSON *root = rpt_run_to_json(run);
    if (run->goodput) cJSON_AddItemToObject(root, "goodput", rpt_goodput_to_json(run->goodput));
    sim_rc rc = rpt_write_json_doc(path, root, "JSON result", err);
    cJSON_Delete(root);
    return rc;
}

sim_rc rpt_write_goodput_json(const char *path, const rpt_goodput *g, sim_err *err)
{
    cJSON *d = rpt_goodput_to_json(g);
    sim_rc rc = rpt_write_json_doc(path, d, "JSON goodput", err);
    cJSON_Delete(d);
    return rc;
}

/* {========================================================= CSV */

const char *const rpt_goodput_csv_columns[] = {
    "seed", "days", "ettr", "tokens", "goodput_tokens_per_s", "interruptions", "planned_interruptions",
    "checkpoints", "step_time_s", "lost_s.lost_work", "lost_s.restarts", "lost_s.checkpoints", "lost_s.maintenance",
    "lost_s.stragglers", NULL};

void *rpt_goodput_trials_json(const rpt_goodput *g)
{
    cJSON *rows = cJSON_CreateArray();
    for (int i = 0; g->trials && i < g->res->seeds; i++) {
        const gp_trial *t = &g->trials[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "seed", (double)(g->in->seed + (unsigned long)i));
        cJSON_AddItemToObject(o, "days", num(t->wall_s / 86400));
        cJSON_AddItemToObject(o, "ettr", num(t->ettr));
        cJSON_AddItemToObject(o, "tokens", num(t->tokens));
        cJSON_AddItemToObject(o, "goodput_tokens_per_s", num(t->wall_s > 0 ? t->tokens / t->wall_s : 0));
        cJSON_AddNumberToObject(o, "interruptions", t->interruptions);
        cJSON_AddNumberToObject(o, "planned_interruptions", t->planned);
        cJSON_AddNumberToObject(o, "checkpoints", t->checkpoints);
        cJSON_AddItemToObject(o, "step_time_s", num(t->step_s));
        cJSON *lost = cJSON_AddObjectToObject(o, "lost_s");
        for (int k = 0; k < GP_NCAUSES; k++) cJSON_AddItemToObject(lost, gp_cause_name((gp_cause)k), num(t->lost_s[k]));
        cJSON_AddItemToArray(rows, o);
    }
    return rows;
}

/* }========================================================= CSV */

/* {========================================================= why */

static double days_of(const rpt_goodput_side *x) { return x->res->days.mean; }

/* The share of the wall clock lost to cause k, mean per run. */
static double lost_share(const rpt_goodput_side *x, int k)
{
    double wall = x->res->days.mean * 86400;
    return wall > 0 ? x->res->lost_mean_s[k] / wall : 0;
}

/* The largest relative excess of a simulated slow step over the step. */
static double slow_excess(const rpt_goodput_side *x)
{
    double e = 0;
    for (int i = 0; i < x->in->rel->nstragglers; i++) e = fmax(e, x->in->straggler_step_s[i] / x->in->step_s - 1);
    return e;
}

static bool differ(double a, double b) { return a > 1.05 * b || b > 1.05 * a; }

/* What makes cause k cost the slower-finishing side l more than w, in
 * words ("its checkpoint reload is 2.1x longer (40 s vs 19 s)"). */
static void driver(const rpt_goodput_side *l, const rpt_goodput_side *w, int k, char *out, size_t cap)
{
    const gp_checkpoint *cl = &l->in->ckpt, *cw = &w->in->ckpt;
    char a[32], b[32];
    double fl = l->res->failure_rate_per_s, fw = w->res->failure_rate_per_s;
    bool fails = (k == GP_RESTARTS || k == GP_LOST_WORK) && differ(fl, fw) && fl > fw;
    if (fails) {
        snprintf(out, cap, "it fails %.2fx as often (MTBF %s vs %s, %d devices vs %d)", fl / fw,
                 sim_fmt_time(1 / fl, a, sizeof a), sim_fmt_time(1 / fw, b, sizeof b), l->in->devices, w->in->devices);
    } else if (k == GP_CHECKPOINTS && differ(cl->stall_s, cw->stall_s)) {
        snprintf(out, cap, "its checkpoint stall is %.2fx as long (%s vs %s, %s a rank written vs %s)",
                 cl->stall_s / cw->stall_s, sim_fmt_time(cl->stall_s, a, sizeof a), sim_fmt_time(cw->stall_s, b, sizeof b),
                 sim_fmt_bytes(cl->share_bytes, (char[32]){0}, 32), sim_fmt_bytes(cw->share_bytes, (char[32]){0}, 32));
    } else if ((k == GP_RESTARTS || k == GP_MAINTENANCE) && differ(cl->read_s, cw->read_s)) {
        snprintf(out, cap, "its checkpoint reload is %.2fx as long (%s vs %s, %s a rank held vs %s)",
                 cl->read_s / cw->read_s, sim_fmt_time(cl->read_s, a, sizeof a), sim_fmt_time(cw->read_s, b, sizeof b),
                 sim_fmt_bytes(cl->rank_bytes, (char[32]){0}, 32), sim_fmt_bytes(cw->rank_bytes, (char[32]){0}, 32));
    } else if (k == GP_LOST_WORK && differ(cl->persist_s, cw->persist_s)) {
        snprintf(out, cap, "its checkpoint reaches storage %.2fx as late (%s vs %s)", cl->persist_s / cw->persist_s,
                 sim_fmt_time(cl->persist_s, a, sizeof a), sim_fmt_time(cw->persist_s, b, sizeof b));
    } else if (k == GP_STRAGGLERS && !l->in->stragglers_off) {
        snprintf(out, cap, "its step with a slow part is %.1f %% longer vs %.1f %%", 100 * slow_excess(l),
                 100 * slow_excess(w));
    } else {
        snprintf(out, cap, "its %s cost more", gp_cause_name((gp_cause)k));
    }
}

int rpt_goodput_why(const rpt_goodput_side *a, const rpt_goodput_side *b, char *out, size_t cap)
{
    bool budget = a->in->token_budget > 0;
    /* the first: fewer days to the budget, or more tokens in the horizon */
    int first = budget ? (days_of(b) < days_of(a)) : (b->res->goodput_tokens_per_s.mean > a->res->goodput_tokens_per_s.mean);
    const rpt_goodput_side *w = first ? b : a, *l = first ? a : b;
    char head[256], ga[32], gb[32];
    double ka = budget ? days_of(a) : a->res->goodput_tokens_per_s.mean;
    double kb = budget ? days_of(b) : b->res->goodput_tokens_per_s.mean;
    if (fabs(ka - kb) <= GP_TIE_REL * fmin(ka, kb)) {
        if (budget)
            snprintf(out, cap, "%s and %s finish together: %.2f and %.2f days to the token budget (within %.1f %%)",
                     a->name, b->name, ka, kb, 100 * GP_TIE_REL);
        else
            snprintf(out, cap, "%s and %s train alike in the horizon: %s and %s tokens/s (within %.1f %%)", a->name,
                     b->name, sim_fmt_count(ka, ga, sizeof ga), sim_fmt_count(kb, gb, sizeof gb), 100 * GP_TIE_REL);
        return first;
    }
    if (budget)
        snprintf(head, sizeof head, "%s finishes first: %.2f days to the token budget vs %.2f for %s", w->name,
                 days_of(w), days_of(l), l->name);
    else
        snprintf(head, sizeof head, "%s trains more in the horizon: %s tokens/s of wall clock vs %s for %s", w->name,
                 sim_fmt_count(w->res->goodput_tokens_per_s.mean, ga, sizeof ga),
                 sim_fmt_count(l->res->goodput_tokens_per_s.mean, gb, sizeof gb), l->name);
    double sw = w->in->step_s, sl = l->in->step_s;
    if (!(sl < sw)) {
        snprintf(out, cap, "%s (ETTR %.2f %% vs %.2f %%; its step is %s)", head, 100 * w->res->ettr.mean,
                 100 * l->res->ettr.mean, sw < sl ? "the faster" : "as fast");
        return first;
    }
    int worst = 0;
    double gap = -INFINITY;
    for (int k = 0; k < GP_NCAUSES; k++) {
        double d = lost_share(l, k) - lost_share(w, k);
        if (d > gap) gap = d, worst = k;
    }
    char why[256], cause[32];
    driver(l, w, worst, why, sizeof why);
    snprintf(cause, sizeof cause, "%s", gp_cause_name((gp_cause)worst));
    for (char *c = cause; *c; c++)
        if (*c == '_') *c = ' ';
    snprintf(out, cap, "%s: %s's step is %.1f %% faster but %s: %.1f %% of the time lost to %s vs %.1f %%", head,
             l->name, 100 * (1 - sl / sw), why, 100 * lost_share(l, worst), cause, 100 * lost_share(w, worst));
    return first;
}

/* }========================================================= why */


/* {========================================================= ranking */

static void print_row(FILE *f, int i, const rpt_goodput_side *x, bool megatron)
{
    char st[32];
    const gp_result *r = x->res;
    fprintf(f, "  %-4d %-14s%s %10s %8.2f %6.2f-%-6.2f %7.2f %%  %10s ", i + 1, x->name, megatron ? "*" : " ",
            sim_fmt_time(x->in->step_s, st, sizeof st), r->days.mean, r->days.p10, r->days.p90, 100 * r->ettr.mean,
            sim_fmt_count(r->goodput_tokens_per_s.mean, (char[32]){0}, 32));
    for (int k = 0; k < GP_NCAUSES; k++) fprintf(f, " %6.2f", 100 * lost_share(x, k));
    fputc('\n', f);
}

void rpt_print_goodput_rank(FILE *f, const rpt_goodput_rank *r)
{
    if (r->n < 1) {
        fprintf(f, "\nby goodput: no simulated candidate to rank\n");
        return;
    }
    const gp_inputs *in = r->rows[0].in;
    char a[32], b[32];
    fprintf(f, "\nranked by goodput: the %d simulated candidates (the top %d by estimate%s; the others are not "
               "ranked by goodput)\n",
            r->n, r->top, r->compare ? " of each space" : "");
    fprintf(f, "  %d trials from seed %lu, reliability %s, a checkpoint every %s of training, ", in->seeds, in->seed,
            in->rel->name, sim_fmt_time(in->interval_s, a, sizeof a));
    if (in->token_budget > 0) fprintf(f, "to %s tokens\n", sim_fmt_count(in->token_budget, b, sizeof b));
    else fprintf(f, "for %.2f days (no --tokens: ranked by goodput in the horizon)\n", in->horizon_s / 86400);
    if (in->stragglers_off && in->rel->nstragglers > 0)
        fprintf(f, "  stragglers: left out (--no-stragglers): the file's slow parts were not simulated\n");
    else if (in->rel->nstragglers > 0)
        fprintf(f, "  each candidate's step with the file's slow parts simulated (%d row%s)\n", in->rel->nstragglers,
                in->rel->nstragglers > 1 ? "s" : "");
    fprintf(f, "  %-4s %-15s %10s %8s %13s %9s  %10s  %% of the wall clock lost to:\n", "rank", "candidate", "step",
            "days", "p10-p90", "ETTR", "tokens/s");
    fprintf(f, "  %-4s %-15s %10s %8s %13s %9s  %10s ", "", "", "", "", "", "", "");
    for (int k = 0; k < GP_NCAUSES; k++) {
        char h[16];
        snprintf(h, sizeof h, "%.6s", gp_cause_name((gp_cause)k));
        fprintf(f, " %6s", h);
    }
    fputc('\n', f);
    for (int i = 0; i < r->n; i++) print_row(f, i, &r->rows[i], r->megatron_style[i]);
    fprintf(f, "  (* Megatron-style)\n");
    if (r->compare && r->best >= 0 && r->megatron >= 0) {
        const rpt_goodput_side *x = &r->rows[r->best], *m = &r->rows[r->megatron];
        fprintf(f, "best 7D by goodput: %s; best Megatron-style by goodput: %s\n", x->name, m->name);
        if (r->step_best && strcmp(r->step_best, x->name) != 0)
            fprintf(f, "  (by step time the best 7D is %s)\n", r->step_best);
        if (r->step_megatron && strcmp(r->step_megatron, m->name) != 0)
            fprintf(f, "  (by step time the best Megatron-style is %s)\n", r->step_megatron);
        if (r->best != r->megatron) {
            char why[768];
            rpt_goodput_why(m, x, why, sizeof why);
            fprintf(f, "  %s\n", why);
        } else {
            fprintf(f, "  the best by goodput is Megatron-style\n");
        }
    } else if (r->best >= 0) {
        fprintf(f, "best by goodput: %s", r->rows[r->best].name);
        if (r->step_best && strcmp(r->step_best, r->rows[r->best].name) != 0) {
            char why[768];
            int k = 0;
            while (k < r->n && strcmp(r->rows[k].name, r->step_best) != 0) k++;
            fprintf(f, " (by step time: %s)\n", r->step_best);
            if (k < r->n) {
                rpt_goodput_why(&r->rows[k], &r->rows[r->best], why, sizeof why);
                fprintf(f, "  %s\n", why);
            }
        } else {
            fputc('\n', f);
        }
    }
}

void *rpt_goodput_record_json(const rpt_goodput_side *x)
{
    const gp_result *r = x->res;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "days", num(r->days.mean));
    cJSON_AddItemToObject(o, "days_p10", num(r->days.p10));
    cJSON_AddItemToObject(o, "days_p90", num(r->days.p90));
    cJSON_AddItemToObject(o, "ettr", num(r->ettr.mean));
    cJSON_AddItemToObject(o, "tokens_per_s", num(r->goodput_tokens_per_s.mean));
    cJSON_AddItemToObject(o, "interruptions", num(r->interruptions.mean));
    cJSON_AddItemToObject(o, "checkpoint_bytes", num(x->in->ckpt.total_bytes));
    cJSON_AddItemToObject(o, "checkpoint_stall_s", num(x->in->ckpt.stall_s));
    cJSON_AddItemToObject(o, "checkpoint_read_s", num(x->in->ckpt.read_s));
    cJSON *lost = cJSON_AddObjectToObject(o, "lost_s");
    for (int k = 0; k < GP_NCAUSES; k++) cJSON_AddItemToObject(lost, gp_cause_name((gp_cause)k), num(r->lost_mean_s[k]));
    return o;
}

const char *const rpt_goodput_record_columns[] = {
    "goodput.days", "goodput.days_p10", "goodput.days_p90", "goodput.ettr", "goodput.tokens_per_s",
    "goodput.interruptions", "goodput.checkpoint_bytes", "goodput.checkpoint_stall_s", "goodput.checkpoint_read_s",
    "goodput.lost_s.lost_work", "goodput.lost_s.restarts", "goodput.lost_s.checkpoints", "goodput.lost_s.maintenance",
    "goodput.lost_s.stragglers", NULL};

void *rpt_goodput_rank_json(const rpt_goodput_rank *r)
{
    cJSON *o = cJSON_CreateObject();
    const gp_inputs *in = r->n > 0 ? r->rows[0].in : NULL;
    cJSON_AddStringToObject(o, "objective", "goodput");
    cJSON_AddStringToObject(o, "ranked", "simulated");
    if (in) {
        cJSON_AddStringToObject(o, "reliability", in->rel->name);
        cJSON_AddNumberToObject(o, "seeds", in->seeds);
        cJSON_AddNumberToObject(o, "seed", (double)in->seed);
        cJSON_AddItemToObject(o, "interval_s", num(in->interval_s));
        cJSON_AddItemToObject(o, "token_budget", in->token_budget > 0 ? num(in->token_budget) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "horizon_s", in->token_budget > 0 ? cJSON_CreateNull() : num(in->horizon_s));
        cJSON_AddBoolToObject(o, "stragglers_simulated", !in->stragglers_off && in->rel->nstragglers > 0);
    }
    cJSON *rows = cJSON_AddArrayToObject(o, "ranking");
    for (int i = 0; i < r->n; i++) {
        cJSON *row = rpt_goodput_record_json(&r->rows[i]);
        cJSON_AddStringToObject(row, "id", r->rows[i].name);
        cJSON_AddBoolToObject(row, "megatron_style", r->megatron_style[i]);
        cJSON_AddItemToObject(row, "step_time_s", num(r->rows[i].in->step_s));
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToObject(o, "best", r->best >= 0 ? cJSON_CreateString(r->rows[r->best].name) : cJSON_CreateNull());
    if (r->compare) {
        cJSON_AddItemToObject(o, "megatron",
                              r->megatron >= 0 ? cJSON_CreateString(r->rows[r->megatron].name) : cJSON_CreateNull());
        if (r->best >= 0 && r->megatron >= 0 && r->best != r->megatron) {
            char why[768];
            rpt_goodput_why(&r->rows[r->megatron], &r->rows[r->best], why, sizeof why);
            cJSON_AddStringToObject(o, "why", why);
        }
    }
    cJSON_AddItemToObject(o, "step_best", r->step_best ? cJSON_CreateString(r->step_best) : cJSON_CreateNull());
    return o;
}

/* }========================================================= ranking */
