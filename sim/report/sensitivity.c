/* sensitivity.c - the documents of heptasim sensitivity: the tornado table
 * in text, the JSON document and CSV rows, and the HTML report with its
 * tornado chart (svg.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "report.h"
#include "svg.h"

/* The relative change of a point's time against base (NaN when none). */
static double change(bool have, double t, double base)
{
    return have && base > 0 ? t / base - 1.0 : NAN;
}

static double est_change(const rpt_sens_doc *d, const rpt_sens_point *p)
{
    return change(p->applicable, p->estimate_s, d->estimate_s);
}

static double sim_change(const rpt_sens_doc *d, const rpt_sens_point *p)
{
    return change(p->applicable && p->simulated && d->simulated, p->simulated_s, d->simulated_s);
}

/* "+12.3 %", "-0.0 %", "n/a" or "-" (not simulated). */
static const char *pct(double v, bool applicable, char *buf, size_t cap)
{
    if (!applicable) snprintf(buf, cap, "n/a");
    else if (!isfinite(v)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%+.1f %%", 100 * v);
    return buf;
}

/* The value of a point in the key's unit: "x0.80" for a curve. */
static const char *value_text(const rpt_sens_row *r, const rpt_sens_point *p, char *buf, size_t cap)
{
    if (r->curve || r->tiers) snprintf(buf, cap, "x%.2f", p->value);
    else snprintf(buf, cap, "%g", p->value);
    return buf;
}

/* A row's own value: its number, or what it scales ("curve", "tiers"). */
static const char *row_value_text(const rpt_sens_row *r, char *buf, size_t cap)
{
    if (r->curve || r->tiers) snprintf(buf, cap, "%s", r->curve ? "curve" : "tiers");
    else snprintf(buf, cap, "%g", r->value);
    return buf;
}

static void print_search(FILE *f, const rpt_sens_doc *d);

void rpt_sens_print(FILE *f, const rpt_sens_doc *d)
{
    char t1[32], t2[32];
    fprintf(f, "sensitivity of %s on %s (%d devices), strategy %s: each figure %.0f %% down and up\n",
            d->model->name, d->platform->name, d->platform->devices, d->strategy->name, 100 * d->step);
    fprintf(f, "step time %s estimated", sim_fmt_time(d->estimate_s, t1, sizeof t1));
    if (d->simulated) fprintf(f, ", %s simulated", sim_fmt_time(d->simulated_s, t2, sizeof t2));
    if (d->band) fprintf(f, " (band +-%.1f %%, %s)", 100 * d->band->error, d->band->kind);
    fputs("\nsorted by the larger change of the estimate; the supernode size is halved and doubled\n\n", f);
    fprintf(f, "%-34s %10s %10s %10s  %9s %9s  %9s %9s\n", "figure (platform key)", "value", "low", "high",
            "est. low", "est. high", "sim. low", "sim. high");
    for (int i = 0; i < d->nrows; i++) {
        const rpt_sens_row *r = &d->rows[i];
        char name[96], v[32], lo[32], hi[32], a[4][32];
        snprintf(name, sizeof name, "%s", r->key);
        row_value_text(r, v, sizeof v);
        fprintf(f, "%-34s %10s %10s %10s  %9s %9s  %9s %9s\n", name, v,
                r->low.applicable ? value_text(r, &r->low, lo, sizeof lo) : "n/a",
                r->high.applicable ? value_text(r, &r->high, hi, sizeof hi) : "n/a",
                pct(est_change(d, &r->low), r->low.applicable, a[0], 32),
                pct(est_change(d, &r->high), r->high.applicable, a[1], 32),
                pct(sim_change(d, &r->low), r->low.applicable, a[2], 32),
                pct(sim_change(d, &r->high), r->high.applicable, a[3], 32));
    }
    for (int i = 0; i < d->nrows; i++) {
        const rpt_sens_row *r = &d->rows[i];
        if (!r->low.applicable) fprintf(f, "  %s low: n/a: %s\n", r->key, r->low.why);
        if (!r->high.applicable) fprintf(f, "  %s high: n/a: %s\n", r->key, r->high.why);
    }
    print_search(f, d);
}

/* The robustness lines: the best strategy on the platform itself, then
 * whether each searched end keeps it. */
static void print_search(FILE *f, const rpt_sens_doc *d)
{
    if (!d->search_space) return;
    fprintf(f, "\nbest %s strategy by estimate: %s (%.4f s); on the perturbed platforms:\n", d->search_space,
            d->best ? d->best : "-", d->best_estimate_s);
    for (int i = 0; i < d->nrows; i++) {
        const rpt_sens_row *r = &d->rows[i];
        const rpt_sens_point *pts[2] = {&r->low, &r->high};
        for (int k = 0; k < 2; k++) {
            if (!pts[k]->searched) continue;
            bool same = d->best && strcmp(pts[k]->best, d->best) == 0;
            fprintf(f, "  %-34s %-5s %s%s (%.4f s)\n", r->key, k ? "high" : "low", same ? "same: " : "changes to ",
                    pts[k]->best, pts[k]->best_estimate_s);
        }
    }
}

static cJSON *point_json(const rpt_sens_doc *d, const rpt_sens_point *p)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "applicable", p->applicable);
    if (!p->applicable) {
        cJSON_AddStringToObject(o, "reason", p->why);
        return o;
    }
    rpt_json_add_num(o, "value", p->value);
    rpt_json_add_num(o, "estimate_s", p->estimate_s);
    rpt_json_add_num(o, "estimate_change", est_change(d, p));
    cJSON_AddBoolToObject(o, "simulated", p->simulated);
    if (p->simulated) {
        rpt_json_add_num(o, "step_time_s", p->simulated_s);
        rpt_json_add_num(o, "step_time_change", sim_change(d, p));
    }
    if (p->searched) {
        cJSON *b = cJSON_AddObjectToObject(o, "best");
        cJSON_AddStringToObject(b, "strategy", p->best);
        rpt_json_add_num(b, "estimate_s", p->best_estimate_s);
        cJSON_AddBoolToObject(b, "changed", !d->best || strcmp(p->best, d->best) != 0);
    }
    return o;
}

void *rpt_sens_rows_json(const rpt_sens_doc *d)
{
    cJSON *rows = cJSON_CreateArray();
    for (int i = 0; i < d->nrows; i++) {
        const rpt_sens_row *r = &d->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", i + 1);
        cJSON_AddStringToObject(o, "key", r->key);
        cJSON_AddStringToObject(o, "label", r->label);
        cJSON_AddBoolToObject(o, "curve", r->curve);
        cJSON_AddBoolToObject(o, "tiers", r->tiers);
        rpt_json_add_num(o, "value", r->value);
        rpt_json_add_num(o, "swing", r->swing);
        cJSON_AddItemToObject(o, "low", point_json(d, &r->low));
        cJSON_AddItemToObject(o, "high", point_json(d, &r->high));
        cJSON_AddItemToArray(rows, o);
    }
    return rows;
}

const char *const rpt_sens_csv_columns[] = {
    "rank", "key", "label", "curve", "tiers", "value", "swing",
    "low.applicable", "low.value", "low.estimate_s", "low.estimate_change", "low.simulated", "low.step_time_s",
    "low.step_time_change", "low.best.changed", "low.best.strategy", "low.reason",
    "high.applicable", "high.value", "high.estimate_s", "high.estimate_change", "high.simulated",
    "high.step_time_s", "high.step_time_change", "high.best.changed", "high.best.strategy", "high.reason", NULL,
};

void *rpt_sens_json(const rpt_sens_doc *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", d->model->name);
    cJSON_AddStringToObject(o, "platform", d->platform->name);
    cJSON_AddStringToObject(o, "strategy", d->strategy->name);
    cJSON_AddNumberToObject(o, "devices", d->platform->devices);
    rpt_json_add_num(o, "step", d->step);
    rpt_json_add_num(o, "estimate_s", d->estimate_s);
    if (d->simulated) rpt_json_add_num(o, "step_time_s", d->simulated_s);
    if (d->band)
        cJSON_AddItemToObject(o, "accuracy", rpt_band_json(d->band, d->simulated ? d->simulated_s : d->estimate_s,
                                                           NAN, NAN));
    if (d->search_space) {
        cJSON *b = cJSON_AddObjectToObject(o, "search");
        cJSON_AddStringToObject(b, "space", d->search_space);
        cJSON_AddStringToObject(b, "best", d->best ? d->best : "");
        rpt_json_add_num(b, "estimate_s", d->best_estimate_s);
    }
    cJSON_AddItemToObject(o, "figures", rpt_sens_rows_json(d));
    cJSON *sim = cJSON_AddObjectToObject(o, "simulator");
    rpt_json_add_num(sim, "wall_s", d->wall_s);
    return o;
}

/* {========================================================== HTML */

/* The change a row's bar shows: simulated when both ends are, else the
 * estimate. */
static double shown(const rpt_sens_doc *d, const rpt_sens_point *p, bool *is_sim)
{
    double s = sim_change(d, p);
    *is_sim = isfinite(s);
    return *is_sim ? s : (p->applicable ? est_change(d, p) : 0.0);
}

static void tornado_svg(FILE *f, const rpt_sens_doc *d)
{
    double span = 0.01;
    for (int i = 0; i < d->nrows; i++) {
        bool s;
        span = fmax(span, fabs(shown(d, &d->rows[i].low, &s)));
        span = fmax(span, fabs(shown(d, &d->rows[i].high, &s)));
    }
    double ticks[8];
    int nt = rpt_nice_ticks(100 * span, 6, ticks);
    double lim = nt > 0 ? ticks[nt - 1] / 100 : span;
    const double label_w = 260, plot_w = 560, row_h = 22, top = 30;
    double h = top + row_h * d->nrows + 40, mid = label_w + plot_w / 2;
    rpt_svg_open(f, label_w + plot_w + 20, h, "Change of the step time per platform figure");
    double lx = rpt_svg_legend(f, label_w, 16, "#4e79a7", "figure down");
    lx = rpt_svg_legend(f, lx, 16, "#e15759", "figure up");
    rpt_svg_text(f, lx, 16, "start", 11, "#555", "(pale: estimate only)");
    for (int i = 0; i < d->nrows; i++) {
        const rpt_sens_row *r = &d->rows[i];
        double y = top + row_h * i;
        rpt_svg_text(f, label_w - 6, y + row_h * 0.65, "end", 12, "#222", r->label);
        const rpt_sens_point *pts[2] = {&r->low, &r->high};
        const char *fills[2][2] = {{"#a9c4e0", "#4e79a7"}, {"#f2aaab", "#e15759"}};
        for (int k = 0; k < 2; k++) {
            if (!pts[k]->applicable) continue;
            bool s;
            double c = shown(d, pts[k], &s);
            double x = mid + fmin(0, c) / lim * plot_w / 2, w = fabs(c) / lim * plot_w / 2;
            char tip[160], vt[32];
            snprintf(tip, sizeof tip, "%s %s (%s): %+.2f %% %s", r->key, k ? "up" : "down",
                     value_text(r, pts[k], vt, sizeof vt), 100 * c, s ? "simulated" : "estimated");
            rpt_svg_rect(f, x, y + 3 + k * (row_h - 6) / 2, fmax(w, 0.5), (row_h - 6) / 2, fills[k][s], tip);
        }
    }
    double yb = top + row_h * d->nrows;
    rpt_svg_line(f, mid, top - 4, mid, yb, "#333", 1, NULL);
    rpt_svg_line(f, label_w, yb, label_w + plot_w, yb, "#888", 1, NULL);
    for (int t = 0; t < nt; t++) {
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            if (t == 0 && sgn > 0) continue;
            double x = mid + sgn * ticks[t] / 100 / lim * plot_w / 2;
            char lab[32];
            snprintf(lab, sizeof lab, "%+g %%", sgn * ticks[t]);
            if (t == 0) snprintf(lab, sizeof lab, "0");
            rpt_svg_line(f, x, yb, x, yb + 4, "#888", 1, NULL);
            rpt_svg_text(f, x, yb + 16, "middle", 11, "#444", lab);
        }
    }
    rpt_svg_text(f, mid, yb + 32, "middle", 11, "#444", "change of the step time");
    rpt_svg_close(f);
}

sim_rc rpt_write_sens_html(const char *path, const rpt_sens_doc *d, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "HTML report", err);
    if (rc != SIM_OK) return rc;
    FILE *f = o.f;
    char title[256], t1[32], t2[32];
    snprintf(title, sizeof title, "heptasim sensitivity: %s on %s, strategy %s", d->model->name, d->platform->name,
             d->strategy->name);
    rpt_html_begin(f, title);
    fprintf(f, "<p class=\"sub\">Each platform figure %.0f %% down and up (the supernode size halved and doubled), "
               "one at a time; step time %s estimated",
            100 * d->step, sim_fmt_time(d->estimate_s, t1, sizeof t1));
    if (d->simulated) fprintf(f, ", %s simulated", sim_fmt_time(d->simulated_s, t2, sizeof t2));
    fputs(".</p>\n<h2 id=\"tornado\">Tornado</h2>\n", f);
    tornado_svg(f, d);
    fputs("<h2 id=\"table\">Figures</h2>\n<table>\n<tr><th>figure</th><th>key</th><th>value</th><th>low</th>"
          "<th>high</th><th>est. low</th><th>est. high</th><th>sim. low</th><th>sim. high</th></tr>\n",
          f);
    for (int i = 0; i < d->nrows; i++) {
        const rpt_sens_row *r = &d->rows[i];
        char v[32], lo[32], hi[32], a[4][32];
        row_value_text(r, v, sizeof v);
        const char *cells[9] = {r->label, r->key, v,
                                r->low.applicable ? value_text(r, &r->low, lo, sizeof lo) : "n/a",
                                r->high.applicable ? value_text(r, &r->high, hi, sizeof hi) : "n/a",
                                pct(est_change(d, &r->low), r->low.applicable, a[0], 32),
                                pct(est_change(d, &r->high), r->high.applicable, a[1], 32),
                                pct(sim_change(d, &r->low), r->low.applicable, a[2], 32),
                                pct(sim_change(d, &r->high), r->high.applicable, a[3], 32)};
        fputs("<tr>", f);
        for (int k = 0; k < 9; k++) {
            fputs("<td>", f);
            rpt_html_escape(f, cells[k]);
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    if (d->search_space) {
        fputs("<h2 id=\"robustness\">Best strategy on the perturbed platforms</h2>\n<p class=\"note\">", f);
        fprintf(f, "The best %s strategy by estimate on the platform itself: ", d->search_space);
        rpt_html_escape(f, d->best ? d->best : "-");
        fputs(".</p>\n<table>\n<tr><th>key</th><th>end</th><th>best</th><th>changed</th></tr>\n", f);
        for (int i = 0; i < d->nrows; i++) {
            const rpt_sens_point *pts[2] = {&d->rows[i].low, &d->rows[i].high};
            for (int k = 0; k < 2; k++) {
                if (!pts[k]->searched) continue;
                fputs("<tr><td>", f);
                rpt_html_escape(f, d->rows[i].key);
                fprintf(f, "</td><td>%s</td><td>", k ? "high" : "low");
                rpt_html_escape(f, pts[k]->best);
                fprintf(f, "</td><td>%s</td></tr>\n", d->best && strcmp(pts[k]->best, d->best) == 0 ? "no" : "yes");
            }
        }
        fputs("</table>\n", f);
    }
    rpt_html_end(f);
    return sim_out_commit(&o, err);
}

/* }========================================================== */
