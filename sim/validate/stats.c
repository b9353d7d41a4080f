/* stats.c - errors against published measurements: statistics per source,
 * the printed tables and the JSON document of `heptasim validate`. */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *method_name(val_method m)
{
    switch (m) {
    case VAL_FULL: return "full";
    case VAL_REDUCED_DP: return "reduced-dp";
    case VAL_ANALYTIC: return "analytic";
    default: return "not-run";
    }
}

void val_step_ranks(const val_case *cases, int n, const char *group, bool loose, val_step_rank *out)
{
    int cap = 0;
    for (int i = 0; i < n; i++) cap += cases[i].nruns * VAL_NMETRICS;
    double *meas = sim_xcalloc(3 * (size_t)cap + 1, sizeof *meas), *simd = meas + cap, *err = simd + cap;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const val_case *c = &cases[i];
        if (group && (strcmp(c->group, group) != 0 || c->loose != loose)) continue;
        if (!group && c->loose) continue;
        for (int r = 0; r < c->nruns; r++)
            for (int m = 0; m < c->runs[r].ncmp; m++) {
                const val_compare *v = &c->runs[r].cmp[m];
                if (v->metric != VAL_STEP_TIME_S || !isfinite(v->error) || k == cap) continue;
                meas[k] = v->measured;
                simd[k] = v->simulated;
                err[k++] = v->error;
            }
    }
    out->n = k;
    out->rank_correlation = out->pair_error = NAN;
    if (k >= 3) {
        double *work = sim_xcalloc(2 * (size_t)k, sizeof *work);
        out->rank_correlation = gsl_stats_spearman(meas, 1, simd, 1, (size_t)k, work);
        free(work);
    }
    double sum = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            if (i != j) {
                double e = (1 + err[i]) / (1 + err[j]) - 1;
                sum += e * e;
            }
    if (k >= 2) out->pair_error = sqrt(sum / ((double)k * (k - 1)));
    free(meas);
}

int val_group_stats_compute(const val_case *cases, int n, val_group_stats *out, int cap)
{
    int ng = 0;
    for (int i = 0; i < n; i++) {
        const val_case *c = &cases[i];
        int g = -1;
        for (int k = 0; k < ng; k++)
            if (strcmp(out[k].group, c->group) == 0 && out[k].loose == c->loose) g = k;
        if (g < 0) {
            if (ng == cap) continue;
            g = ng++;
            memset(&out[g], 0, sizeof out[g]);
            sim_strlcpy(out[g].group, c->group, sizeof out[g].group);
            out[g].loose = c->loose;
            out[g].max_abs = -1.0;
        }
        val_group_stats *s = &out[g];
        s->skipped += c->not_modelled[0] != '\0';
        if (c->target_mean_abs > 0) s->target_mean_abs = c->target_mean_abs;
        if (c->target_max_abs > 0) s->target_max_abs = c->target_max_abs;
        for (int k = 0; k < c->nruns; k++) {
            const val_run *r = &c->runs[k];
            for (int m = 0; m < r->ncmp; m++) {
                const val_compare *v = &r->cmp[m];
                if (!isfinite(v->error)) {
                    s->failed++;
                    continue;
                }
                double a = fabs(v->error);
                s->n++;
                s->mean_abs += a;
                s->mean_signed += v->error;
                if (a > s->max_abs) {
                    s->max_abs = a;
                    snprintf(s->worst, sizeof s->worst, "%s/%s %s", c->id, r->name, val_metric_name(v->metric));
                }
            }
        }
    }
    for (int g = 0; g < ng; g++) {
        val_group_stats *s = &out[g];
        if (s->n > 0) {
            s->mean_abs /= s->n;
            s->mean_signed /= s->n;
        } else {
            s->mean_abs = s->mean_signed = s->max_abs = NAN;
        }
        s->target_met = s->n > 0 && s->failed == 0 &&
                        (s->target_mean_abs <= 0 || s->mean_abs <= s->target_mean_abs) &&
                        (s->target_max_abs <= 0 || s->max_abs <= s->target_max_abs);        val_step_ranks(cases, n, s->group, s->loose, &s->steps);
    }
    return ng;
}

bool val_case_moe(const val_case *c)
{
    for (int k = 0; k < c->nruns; k++)
        if (c->runs[k].model.moe.experts > 0) return true;
    return false;
}

int val_moe_group_stats(const val_case *cases, int n, val_group_stats *out, int cap)
{
    val_case *moe = sim_xcalloc((size_t)(n > 0 ? n : 1), sizeof *moe);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (val_case_moe(&cases[i])) moe[m++] = cases[i];
    int ng = m > 0 ? val_group_stats_compute(moe, m, out, cap) : 0;
    free(moe);
    return ng;
}

static void print_value(FILE *f, val_metric m, double v)
{
    if (!isfinite(v))
        fprintf(f, " %11s", "-");
    else
        fprintf(f, " %11.4g", val_metric_display(m, v));
}

void val_print_table(FILE *f, const val_case *cases, int n)
{
    fprintf(f, "%-38s %-26s %-18s %11s %11s %8s  %s\n", "case", "run", "metric", "measured", "simulated", "error",
            "simulated as");
    for (int i = 0; i < n; i++) {
        const val_case *c = &cases[i];
        if (c->not_modelled[0]) fprintf(f, "%-38.38s skipped, not modelled: %s\n", c->id, c->not_modelled);
        for (int k = 0; k < c->nruns; k++) {
            const val_run *r = &c->runs[k];
            for (int m = 0; m < r->ncmp; m++) {
                const val_compare *v = &r->cmp[m];
                char metric[40];
                snprintf(metric, sizeof metric, "%s%s", val_metric_name(v->metric), v->derived ? "*" : "");
                fprintf(f, "%-38.38s %-26.26s %-18s", c->id, r->name, metric);
                print_value(f, v->metric, v->measured);
                print_value(f, v->metric, v->simulated);
                if (isfinite(v->error))
                    fprintf(f, " %+7.1f%%", 100.0 * v->error);
                else
                    fprintf(f, " %8s", "failed");
                int world = cfg_world_size(&r->strategy);
                if (!val_run_fits(r)) fprintf(f, "  [does not fit in memory: %.1f GiB]", r->value[VAL_MEMORY_PEAK_GIB]);
                if (r->method == VAL_REDUCED_DP)
                    fprintf(f, "  %d of %d replicas, %d devices%s\n", r->replicas, r->strategy.dp,
                            world / r->strategy.dp * r->replicas, c->loose ? ", loose" : "");
                else if (r->method == VAL_ANALYTIC)
                    fprintf(f, "  analytic%s\n", c->loose ? ", loose" : "");
                else
                    fprintf(f, "  full, %d devices%s\n", world, c->loose ? ", loose" : "");
            }
            if (r->rc != SIM_OK) fprintf(f, "  error: %s\n", r->msg);
        }
    }
    fprintf(f, "(* derived by the source from other figures; error = (simulated - measured) / measured)\n");
}

void val_print_groups(FILE *f, const val_group_stats *g, int ng)
{
    fprintf(f, "%-34s %4s %11s %10s %9s  %s\n", "source", "n", "mean |err|", "max |err|", "bias", "target");
    for (int i = 0; i < ng; i++) {
        const val_group_stats *s = &g[i];
        char name[VAL_ID_LEN + 16];
        snprintf(name, sizeof name, "%s%s", s->group, s->loose ? " (loose)" : "");
        fprintf(f, "%-34.34s %4d", name, s->n);
        if (s->n > 0)
            fprintf(f, " %10.1f%% %9.1f%% %+8.1f%%", 100 * s->mean_abs, 100 * s->max_abs, 100 * s->mean_signed);
        else
            fprintf(f, " %11s %10s %9s", "-", "-", "-");
        bool all_skipped = s->n == 0 && s->failed == 0 && s->skipped > 0;
        if (all_skipped) {
            fprintf(f, "  skipped");
        } else if (s->target_mean_abs > 0 || s->target_max_abs > 0) {
            fprintf(f, "  ");
            if (s->target_mean_abs > 0) fprintf(f, "mean <= %.0f%% ", 100 * s->target_mean_abs);
            if (s->target_max_abs > 0) fprintf(f, "max <= %.0f%% ", 100 * s->target_max_abs);
            fprintf(f, "%s", s->target_met ? "met" : "missed");
        } else {
            fprintf(f, "  %s", s->loose ? "none (settings not published)" : "none");
        }
        if (s->failed) fprintf(f, " (%d failed)", s->failed);
        if (s->skipped)
            fprintf(f, " (%d case%s not modelled%s)", s->skipped, s->skipped > 1 ? "s" : "", all_skipped ? "" : ", skipped");
        fprintf(f, "\n");
        if (s->n > 0 && s->worst[0]) fprintf(f, "%-34s      worst: %s\n", "", s->worst);
        if (isfinite(s->steps.rank_correlation))
            fprintf(f, "%-34s      step times: rank correlation %.3f over %d, ratio of two: rms error %.1f%%\n", "",
                    s->steps.rank_correlation, s->steps.n, 100 * s->steps.pair_error);
    }
}

static cJSON *number_or_null(double v)
{
    return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

static cJSON *run_json(const val_run *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", r->name);
    cJSON_AddStringToObject(o, "simulated_as", method_name(r->method));
    cJSON_AddNumberToObject(o, "devices", cfg_world_size(&r->strategy));
    if (r->method == VAL_REDUCED_DP) {
        cJSON_AddNumberToObject(o, "replicas_simulated", r->replicas);
        cJSON_AddNumberToObject(o, "closed_form_tail_s", r->dp_closed_form_s);
    }
    cJSON_AddStringToObject(o, "platform", r->platform.name);
    cJSON_AddBoolToObject(o, "memory_fits", val_run_fits(r));
    cJSON_AddItemToObject(o, "strategy", cfg_strategy_to_json(&r->strategy));
    if (r->rc != SIM_OK) cJSON_AddStringToObject(o, "error", r->msg);
    cJSON *sim = cJSON_AddObjectToObject(o, "simulated");
    for (int m = 0; m < VAL_NMETRICS; m++)
        if (isfinite(r->value[m])) cJSON_AddNumberToObject(sim, val_metric_name((val_metric)m), r->value[m]);
    cJSON *cmp = cJSON_AddArrayToObject(o, "compare");
    for (int i = 0; i < r->ncmp; i++) {
        const val_compare *v = &r->cmp[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "metric", val_metric_name(v->metric));
        cJSON_AddNumberToObject(e, "measured", v->measured);
        cJSON_AddBoolToObject(e, "derived", v->derived);
        cJSON_AddItemToObject(e, "simulated", number_or_null(v->simulated));
        cJSON_AddItemToObject(e, "error", number_or_null(v->error));
        cJSON_AddItemToArray(cmp, e);
    }
    cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
    return o;
}

void *val_to_json(const val_case *cases, int n, const val_group_stats *g, int ng)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *arr = cJSON_AddArrayToObject(root, "cases");
    for (int i = 0; i < n; i++) {
        const val_case *c = &cases[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", c->id);
        cJSON_AddStringToObject(o, "group", c->group);
        cJSON_AddStringToObject(o, "file", c->path);
        cJSON_AddStringToObject(o, "source", c->source);
        cJSON_AddBoolToObject(o, "loose", c->loose);
        if (c->not_modelled[0]) cJSON_AddStringToObject(o, "not_modelled", c->not_modelled);
        cJSON *as = cJSON_AddArrayToObject(o, "assumptions");
        for (int k = 0; k < c->nassumptions; k++) cJSON_AddItemToArray(as, cJSON_CreateString(c->assumptions[k]));
        cJSON *runs = cJSON_AddArrayToObject(o, "runs");
        for (int k = 0; k < c->nruns; k++) cJSON_AddItemToArray(runs, run_json(&c->runs[k]));
        cJSON_AddItemToArray(arr, o);
    }
    cJSON_AddItemToObject(root, "groups", val_groups_json(g, ng));
    return root;
}

void *val_groups_json(const val_group_stats *g, int ng)
{
    cJSON *groups = cJSON_CreateArray();
    for (int i = 0; i < ng; i++) {
        const val_group_stats *s = &g[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "group", s->group);
        cJSON_AddBoolToObject(o, "loose", s->loose);
        cJSON_AddNumberToObject(o, "n", s->n);
        cJSON_AddNumberToObject(o, "failed", s->failed);
        cJSON_AddNumberToObject(o, "skipped", s->skipped);
        cJSON_AddItemToObject(o, "mean_abs_error", number_or_null(s->mean_abs));
        cJSON_AddItemToObject(o, "max_abs_error", number_or_null(s->max_abs));
        cJSON_AddItemToObject(o, "mean_error", number_or_null(s->mean_signed));
        cJSON_AddNumberToObject(o, "step_times", s->steps.n);
        cJSON_AddItemToObject(o, "rank_correlation", number_or_null(s->steps.rank_correlation));
        cJSON_AddItemToObject(o, "pair_error", number_or_null(s->steps.pair_error));
        if (s->worst[0]) cJSON_AddStringToObject(o, "worst", s->worst);
        if (s->target_mean_abs > 0 || s->target_max_abs > 0) {
            cJSON *t = cJSON_AddObjectToObject(o, "targets");
            if (s->target_mean_abs > 0) cJSON_AddNumberToObject(t, "mean_abs_error", s->target_mean_abs);
            if (s->target_max_abs > 0) cJSON_AddNumberToObject(t, "max_abs_error", s->target_max_abs);
            cJSON_AddBoolToObject(t, "met", s->target_met);
        }
        cJSON_AddItemToArray(groups, o);
    }
    return groups;
}

const char *const val_csv_columns[] = {"group", "case", "run", "platform", "devices", "metric", "measured",
                                       "derived", "simulated", "error", "failure", NULL};

void *val_comparisons_json(const val_case *cases, int n)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const val_case *c = &cases[i];
        for (int k = 0; k < c->nruns; k++) {
            const val_run *r = &c->runs[k];
            for (int j = 0; j < (r->rc == SIM_OK ? r->ncmp : 1); j++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "group", c->group);
                cJSON_AddStringToObject(o, "case", c->id);
                cJSON_AddStringToObject(o, "run", r->name);
                cJSON_AddStringToObject(o, "platform", r->platform.name);
                cJSON_AddNumberToObject(o, "devices", r->platform.devices);
                if (r->rc != SIM_OK) {
                    cJSON_AddStringToObject(o, "failure", r->msg);
                } else {
                    const val_compare *v = &r->cmp[j];
                    cJSON_AddStringToObject(o, "metric", val_metric_name(v->metric));
                    cJSON_AddNumberToObject(o, "measured", v->measured);
                    cJSON_AddBoolToObject(o, "derived", v->derived);
                    cJSON_AddItemToObject(o, "simulated", number_or_null(v->simulated));
                    cJSON_AddItemToObject(o, "error", number_or_null(v->error));
                }
                cJSON_AddItemToArray(arr, o);
            }
        }
    }
    return arr;
}
