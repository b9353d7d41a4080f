/* goodput.c - the Monte Carlo of a training run: per-component Poisson
 * failures, periodic checkpoints, planned maintenance, stragglers. */
#include "goodput.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"

/* ORDER gp_cause */
static const char *const cause_names[] = {"lost_work", "restarts", "checkpoints", "maintenance", "stragglers"};

const char *gp_cause_name(gp_cause c) { return (c >= 0 && c < GP_NCAUSES) ? cause_names[c] : "?"; }

sim_rc gp_storage_check(const cfg_platform *p, sim_err *err)
{
    if (p->checkpoint_mode == 0)
        return sim_fail(err, SIM_EINVAL, "%s: .storage: missing (goodput needs the checkpoint storage: node_GBps, "
                        "aggregate_GBps; see docs/platforms.md)", (p->path[0] ? p->path : "platform"));
    if (p->checkpoint_mode == CFG_CKPT_ASYNC && !(p->snapshot_bytes_per_s > 0))
        return sim_fail(err, SIM_EINVAL, "%s: .storage.snapshot_GBps: required with checkpoint 'async' (the copy "
                        "of a device's state to host memory)", (p->path[0] ? p->path : "platform"));
    return SIM_OK;
}

sim_rc gp_checkpoint_of(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, gp_checkpoint *out,
                        sim_err *err)
{
    sim_rc rc = gp_storage_check(p, err);
    if (rc != SIM_OK) return rc;
    memset(out, 0, sizeof *out);
    int world = cfg_world_size(s), per_stage = world / s->pp;
    /* replicated state is written by one of its holders (distributed
     * checkpointing's fully parallel save): weights are replicated over
     * the data-parallel group below ZeRO-3 (over the HSDP replicas with
     * it), optimizer state over the group with ZeRO-0 only */
    double rw = s->zero < 3 ? cfg_dp_group(s) : cfg_dp_replicate(s);
    double ro = s->zero == 0 ? cfg_dp_group(s) : cfg_dp_replicate(s);
    double node_held = 0;
    for (int st = 0; st < s->pp; st++) {
        mdl_memory mem;
        mdl_rank_memory(m, s, st, &mem);
        double weights = mem.weights_bytes - mem.fp8_copies_bytes;
        double held = weights + mem.optimizer_bytes, share = weights / rw + mem.optimizer_bytes / ro;
        if (held > out->rank_bytes) out->rank_bytes = held;
        if (share > out->share_bytes) out->share_bytes = share;
        out->total_bytes += per_stage * share;
    }
    double dpn = p->devices_per_node < world ? p->devices_per_node : world;
    node_held = dpn * out->rank_bytes;
    double write = fmax(dpn * out->share_bytes / p->storage_node_bytes_per_s,
                        out->total_bytes / p->storage_aggregate_bytes_per_s);
    if (p->checkpoint_mode == CFG_CKPT_SYNC) {
        out->stall_s = out->persist_s = write;
    } else {
        out->stall_s = out->share_bytes / p->snapshot_bytes_per_s;
        out->persist_s = out->stall_s + write;
    }
    /* every rank reads what it holds; the storage serves replicated bytes once */
    out->read_s = fmax(node_held / p->storage_node_bytes_per_s, out->total_bytes / p->storage_aggregate_bytes_per_s);
    return SIM_OK;
}

/* {============================================================ one trial */

typedef struct trial {
    const gp_inputs *in;
    gsl_rng *rng;
    int n;
    double rate[CFG_MAX_REL_COMPONENTS], next[CFG_MAX_REL_COMPONENTS];
} trial;

static double draw(trial *t, int i, double from)
{
    return t->rate[i] > 0 ? from + gsl_ran_exponential(t->rng, 1.0 / t->rate[i]) : INFINITY;
}

static int first_failure(const trial *t)
{
    int best = -1;
    for (int i = 0; i < t->n; i++)
        if (t->rate[i] > 0 && (best < 0 || t->next[i] < t->next[best])) best = i;
    return best;
}

static double units_of(const gp_inputs *in, int kind)
{
    return kind == CFG_STRAGGLER_NODE ? (double)in->devices / (in->devices_per_node > 0 ? in->devices_per_node : 1)
                                      : (double)in->devices;
}

void gp_path_free(gp_path *p)
{
    if (!p) return;
    free(p->points);
    free(p->marks);
    memset(p, 0, sizeof *p);
}

static void path_point(gp_path *p, double t_s, double steps)
{
    if (!p) return;
    if (p->npoints == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 256;
        p->points = sim_xrealloc(p->points, (size_t)p->cap * sizeof *p->points);
    }
    p->points[p->npoints++] = (gp_point){t_s, steps};
}

static void path_mark(gp_path *p, double t_s, bool planned)
{
    if (!p) return;
    if (p->nmarks == p->mcap) {
        p->mcap = p->mcap ? 2 * p->mcap : 64;
        p->marks = sim_xrealloc(p->marks, (size_t)p->mcap * sizeof *p->marks);
    }
    p->marks[p->nmarks++] = (gp_mark){t_s, planned};
}

sim_rc gp_trial_run(const gp_inputs *in, unsigned long seed, gp_trial *out, sim_err *err)
{
    return gp_trial_path(in, seed, out, NULL, err);
}

sim_rc gp_trial_path(const gp_inputs *in, unsigned long seed, gp_trial *out, gp_path *path, sim_err *err)
{
    const cfg_reliability *rel = in->rel;
    if (!(in->step_s > 0) || !(in->tokens_per_step > 0))
        return sim_fail(err, SIM_EINVAL, "goodput: the step time and tokens per step must be positive");
    if (!(in->token_budget > 0) && !(in->horizon_s > 0))
        return sim_fail(err, SIM_EINVAL, "goodput: give a token budget or a wall-clock horizon");
    trial t = {.in = in, .n = rel->ncomponents};
    t.rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(t.rng, seed);
    memset(out, 0, sizeof *out);
    /* stragglers: the slow parts present in this run (Poisson count per
     * row); the step waits for the slowest, simulated with one of them */
    double step = in->step_s;
    for (int r = 0; r < rel->nstragglers && !in->stragglers_off; r++) {
        const cfg_rel_straggler *sr = &rel->stragglers[r];
        unsigned k = gsl_ran_poisson(t.rng, sr->per_1000 / 1000.0 * units_of(in, sr->kind));
        if (k == 0) continue;
        if (!(in->straggler_step_s[r] > 0)) {
            gsl_rng_free(t.rng);
            return sim_fail(err, SIM_EINVAL, "%s: .stragglers[%d]: no simulated step with this slow part (simulate "
                            "it, or leave stragglers out)", rel->path, r);
        }
        if (in->straggler_step_s[r] > step) step = in->straggler_step_s[r];
    }
    out->step_s = step;
    for (int i = 0; i < t.n; i++) {
        t.rate[i] = cfg_rel_component_rate(&rel->components[i], in->devices, in->devices_per_node);
        t.next[i] = draw(&t, i, 0);
    }
    const gp_checkpoint *c = &in->ckpt;
    double recover = rel->detection_s + rel->restart_s + c->read_s;
    double k_interval = fmax(1.0, round(in->interval_s / step));
    double target = in->token_budget > 0 ? ceil(in->token_budget / in->tokens_per_step) : INFINITY;
    double horizon = in->token_budget > 0 ? INFINITY : in->horizon_s;
    double next_maint = rel->maintenance_interval_s > 0 ? rel->maintenance_interval_s : INFINITY;
    double now = 0, cur = 0, done = 0, pending = -1, pending_at = INFINITY;
    path_point(path, 0, 0);
    while (now < horizon && cur < target) {
        double k = fmin(k_interval, target - cur);
        double train_end = now + k * step, seg_end = train_end + c->stall_s;
        int f = first_failure(&t);
        double tf = f >= 0 ? t.next[f] : INFINITY;
        double ev = fmin(tf, next_maint);
        if (pending >= 0 && pending_at <= fmin(ev, seg_end)) {
            done = pending;
            pending = -1;
        }
        if (ev < seg_end && ev < horizon) {
            if (tf <= next_maint) { /* a failure: back to the last checkpoint on storage */
                if (tf > train_end) path_point(path, train_end, cur + k);
                path_point(path, tf, cur + fmin(k, (tf - now) / step));
                cur = done;
                pending = -1;
                now = tf;
                path_point(path, tf, cur);
                for (;;) { /* failures during the recovery start it again */
                    path_mark(path, now, false);
                    out->interruptions++;
                    out->by_component[f]++;
                    out->lost_s[GP_RESTARTS] += recover;
                    t.next[f] = draw(&t, f, now);
                    double up = now + recover;
                    f = first_failure(&t);
                    if (f < 0 || t.next[f] >= up) {
                        now = up;
                        path_point(path, now, cur);
                        break;
                    }
                    out->lost_s[GP_RESTARTS] -= up - t.next[f];
                    now = t.next[f];
                }
            } else { /* planned: checkpoint what is done, stop, restart */
                double m = fmin(k, floor((next_maint - now) / step));
                cur += m;
                done = cur;
                pending = -1;
                double stop = now + m * step;
                out->lost_s[GP_CHECKPOINTS] += c->persist_s;
                double down = rel->maintenance_downtime_s + rel->restart_s + c->read_s;
                out->lost_s[GP_MAINTENANCE] += down;
                out->planned++;
                path_point(path, stop, cur);
                path_mark(path, fmax(stop, next_maint), true);
                now = fmax(stop, next_maint) + c->persist_s + down;
                path_point(path, now, cur);
                while (next_maint <= now) next_maint += rel->maintenance_interval_s;
                /* the components do not fail while the job is down for maintenance */
                for (int i = 0; i < t.n; i++)
                    if (t.next[i] < now) t.next[i] = draw(&t, i, now);
            }
            continue;
        }
        if (seg_end >= horizon) { /* the horizon ends the run inside this segment */
            double m = fmin(k, floor((horizon - now) / step));
            cur += m;
            path_point(path, now + m * step, cur);
            now = horizon;
            path_point(path, now, cur);
            break;
        }
        cur += k;
        now = seg_end;
        path_point(path, train_end, cur);
        path_point(path, seg_end, cur);
        out->checkpoints++;
        out->lost_s[GP_CHECKPOINTS] += c->stall_s;
        pending = cur;
        pending_at = train_end + c->persist_s;
    }
    gsl_rng_free(t.rng);
    out->wall_s = now;
    out->tokens = cur * in->tokens_per_step;
    out->useful_s = cur * in->step_s;
    out->lost_s[GP_STRAGGLERS] = cur * (step - in->step_s);
    double other = 0;
    for (int i = GP_RESTARTS; i < GP_NCAUSES; i++) other += out->lost_s[i];
    out->lost_s[GP_LOST_WORK] = fmax(0.0, out->wall_s - out->useful_s - other);
    out->ettr = out->wall_s > 0 ? out->useful_s / out->wall_s : 0;
    return SIM_OK;
}

/* }============================================================ one trial */

static void stats_of(double *v, int n, gp_stats *s)
{
    gsl_sort(v, 1, (size_t)n);
    s->mean = gsl_stats_mean(v, 1, (size_t)n);
    s->p10 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.1);
    s->p50 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.5);
    s->p90 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)n, 0.9);
}

sim_rc gp_run(const gp_inputs *in, gp_result *out, sim_err *err)
{
    return gp_run_trials(in, out, NULL, err);
}

sim_rc gp_run_trials(const gp_inputs *in, gp_result *out, gp_trial *trials, sim_err *err)
{
    int n = in->seeds;
    if (n < 1 || n > GP_MAX_SEEDS)
        return sim_fail(err, SIM_EINVAL, "goodput: --seeds %d: give 1 to %d trials", n, GP_MAX_SEEDS);
    memset(out, 0, sizeof *out);
    out->seeds = n;
    double *ettr = sim_xcalloc((size_t)n, sizeof *ettr), *days = sim_xcalloc((size_t)n, sizeof *days);
    double *intr = sim_xcalloc((size_t)n, sizeof *intr), *gput = sim_xcalloc((size_t)n, sizeof *gput);
    sim_rc rc = SIM_OK;
    int slow = 0;
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        gp_trial tr;
        rc = gp_trial_run(in, in->seed + (unsigned long)i, &tr, err);
        if (rc != SIM_OK) break;
        if (trials) trials[i] = tr;
        ettr[i] = tr.ettr;
        days[i] = tr.wall_s / 86400.0;
        intr[i] = tr.interruptions;
        gput[i] = tr.wall_s > 0 ? tr.tokens / tr.wall_s : 0;
        out->planned_mean += tr.planned / (double)n;
        for (int k = 0; k < in->rel->ncomponents; k++) out->by_component_mean[k] += tr.by_component[k] / (double)n;
        for (int k = 0; k < GP_NCAUSES; k++) out->lost_mean_s[k] += tr.lost_s[k] / n;
        if (tr.step_s > in->step_s) slow++;
    }
    if (rc == SIM_OK) {
        stats_of(ettr, n, &out->ettr);
        stats_of(days, n, &out->days);
        stats_of(intr, n, &out->interruptions);
        stats_of(gput, n, &out->goodput_tokens_per_s);
        for (int k = 0; k < in->rel->ncomponents; k++)
            out->failure_rate_per_s +=
                cfg_rel_component_rate(&in->rel->components[k], in->devices, in->devices_per_node);
        out->young_daly_s =
            out->failure_rate_per_s > 0 ? sqrt(2.0 * in->ckpt.stall_s / out->failure_rate_per_s) : INFINITY;
        out->straggler_runs = (double)slow / n;
    }
    free(ettr);
    free(days);
    free(intr);
    free(gput);
    return rc;
}

sim_rc gp_best_interval(const gp_inputs *in, double lo_s, double hi_s, int n, double *best_s, double *ettr,
                        sim_err *err)
{
    if (n < 3 || !(lo_s > 0) || !(hi_s > lo_s))
        return sim_fail(err, SIM_EINVAL, "goodput: the interval search needs 3 or more points in a range");
    double *x = sim_xcalloc((size_t)n, sizeof *x), *y = sim_xcalloc((size_t)n, sizeof *y);
    sim_rc rc = SIM_OK;
    int best = 0;
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        gp_inputs g = *in;
        x[i] = log(lo_s) + (log(hi_s) - log(lo_s)) * i / (n - 1);
        g.interval_s = exp(x[i]);
        gp_result r;
        rc = gp_run(&g, &r, err);
        y[i] = r.ettr.mean;
        if (rc == SIM_OK && y[i] > y[best]) best = i;
    }
    if (rc == SIM_OK) {
        double bx = x[best];
        if (best > 0 && best < n - 1) { /* the vertex of the parabola through the three points */
            double x0 = x[best - 1], x1 = x[best], x2 = x[best + 1], y0 = y[best - 1], y1 = y[best], y2 = y[best + 1];
            double d = (x0 - x1) * (x0 - x2) * (x1 - x2);
            double a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / d;
            double b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / d;
            if (a < 0) bx = fmin(x2, fmax(x0, -b / (2 * a)));
        }
        *best_s = exp(bx);
        *ettr = y[best];
    }
    free(x);
    free(y);
    return rc;
}

/* {============================================================ progress */

/* The steps of path p at each of the n ascending times t (linear between
 * its points; after a drop at one instant, the value after it; after its
 * last point, the last value). */
static void sample_path(const gp_path *p, const double *t, int n, double *out)
{
    int j = 0;
    for (int i = 0; i < n; i++) {
        while (j + 1 < p->npoints && p->points[j + 1].t_s <= t[i]) j++;
        if (j + 1 >= p->npoints) {
            out[i] = p->npoints ? p->points[p->npoints - 1].steps : 0;
            continue;
        }
        const gp_point *a = &p->points[j], *b = &p->points[j + 1];
        double w = b->t_s > a->t_s ? (t[i] - a->t_s) / (b->t_s - a->t_s) : 1;
        out[i] = a->steps + w * (b->steps - a->steps);
    }
}

void gp_band_free(gp_band *b)
{
    if (!b) return;
    free(b->t_s);
    free(b->mean_tokens);
    free(b->p10_tokens);
    free(b->p90_tokens);
    gp_path_free(&b->first);
    memset(b, 0, sizeof *b);
}

sim_rc gp_progress_band(const gp_inputs *in, int npoints, int max_trials, gp_band *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    if (npoints < 2 || max_trials < 1)
        return sim_fail(err, SIM_EINVAL, "goodput: the progress band needs 2 or more points and a trial");
    int n = in->seeds < max_trials ? in->seeds : max_trials;
    if (n < 1) return sim_fail(err, SIM_EINVAL, "goodput: --seeds %d: give 1 to %d trials", in->seeds, GP_MAX_SEEDS);
    double end = 0;
    sim_rc rc = SIM_OK;
    for (int i = 0; i < n && rc == SIM_OK; i++) { /* the longest run fixes the time axis */
        gp_trial tr;
        rc = gp_trial_run(in, in->seed + (unsigned long)i, &tr, err);
        if (rc == SIM_OK && tr.wall_s > end) end = tr.wall_s;
    }
    if (rc != SIM_OK) return rc;
    out->n = npoints;
    out->trials = n;
    out->t_s = sim_xcalloc((size_t)npoints, sizeof *out->t_s);
    out->mean_tokens = sim_xcalloc((size_t)npoints, sizeof *out->mean_tokens);
    out->p10_tokens = sim_xcalloc((size_t)npoints, sizeof *out->p10_tokens);
    out->p90_tokens = sim_xcalloc((size_t)npoints, sizeof *out->p90_tokens);
    for (int k = 0; k < npoints; k++) out->t_s[k] = end * k / (npoints - 1);
    double *v = sim_xcalloc((size_t)npoints * (size_t)n, sizeof *v); /* v[k * n + i]: trial i at time k */
    double *row = sim_xcalloc((size_t)npoints, sizeof *row);
    for (int i = 0; i < n && rc == SIM_OK; i++) {
        gp_trial tr;
        gp_path p = {0};
        rc = gp_trial_path(in, in->seed + (unsigned long)i, &tr, &p, err);
        if (rc == SIM_OK) {
            sample_path(&p, out->t_s, npoints, row);
            for (int k = 0; k < npoints; k++) v[(size_t)k * n + i] = row[k] * in->tokens_per_step;
        }
        if (i == 0) out->first = p;
        else gp_path_free(&p);
    }
    for (int k = 0; k < npoints && rc == SIM_OK; k++) {
        gp_stats s;
        stats_of(v + (size_t)k * n, n, &s);
        out->mean_tokens[k] = s.mean;
        out->p10_tokens[k] = s.p10;
        out->p90_tokens[k] = s.p90;
    }
    free(v);
    free(row);
    if (rc != SIM_OK) gp_band_free(out);
    return rc;
}

/* }============================================================ progress */
