/* goodput_html.c - the HTML of a run over days: its summary table and the
 * progress plot (tokens kept against wall-clock days: mean, p10-p90 band,
 * the first trial's path and interruptions), for goodput --report and the
 * goodput section of run --goodput --report. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "goodput.h"
#include "report.h"
#include "svg.h"

/* {========================================================= HTML */

/* The progress plot: tokens kept against wall-clock days, the mean and
 * the p10-p90 band of the trials, the first trial's path with its
 * interruptions marked under the axis. */
static void progress_svg(FILE *f, const rpt_goodput *g)
{
    const gp_band *b = g->band;
    double left = 80, top = 30, pw = 760, ph = 280;
    double xmax_d = b->t_s[b->n - 1] / 86400, ymax = 0;
    for (int k = 0; k < b->n; k++) ymax = fmax(ymax, b->p90_tokens[k]);
    for (int i = 0; i < b->first.npoints; i++) ymax = fmax(ymax, b->first.points[i].steps * g->in->tokens_per_step);
    double xt[16], yt[16];
    int nx = rpt_nice_ticks(xmax_d, 10, xt), ny = rpt_nice_ticks(ymax, 7, yt);
    double xe = nx > 0 && xt[nx - 1] > 0 ? xt[nx - 1] : 1, ye = ny > 0 && yt[ny - 1] > 0 ? yt[ny - 1] : 1;
#define PX(d) (left + (d) / xe * pw)
#define PY(v) (top + ph - (v) / ye * ph)
    rpt_svg_open(f, left + pw + 30, top + ph + 80, "Tokens trained against wall-clock days");
    double lx = rpt_svg_legend(f, left, 16, "#a9c4e0", "p10-p90 of the trials");
    lx = rpt_svg_legend(f, lx, 16, "#4e79a7", "mean");
    lx = rpt_svg_legend(f, lx, 16, "#999999", "first trial");
    lx = rpt_svg_legend(f, lx, 16, "#e15759", "failure");
    rpt_svg_legend(f, lx, 16, "#59a14f", "planned stop");
    int n = b->n;
    double *xs = sim_xcalloc((size_t)(2 * n + 2), sizeof *xs), *ys = sim_xcalloc((size_t)(2 * n + 2), sizeof *ys);
    for (int k = 0; k < n; k++) {
        xs[k] = PX(b->t_s[k] / 86400);
        ys[k] = PY(b->p90_tokens[k]);
        xs[2 * n - 1 - k] = xs[k];
        ys[2 * n - 1 - k] = PY(b->p10_tokens[k]);
    }
    char tip[128];
    snprintf(tip, sizeof tip, "10th to 90th percentile of %d trials", b->trials);
    rpt_svg_polygon(f, xs, ys, 2 * n, "#a9c4e0", 0.8, tip);
    for (int k = 0; k < n; k++) ys[k] = PY(b->mean_tokens[k]);
    rpt_svg_polyline(f, xs, ys, n, "#4e79a7", 2);
    int np = b->first.npoints;
    double *fx = sim_xcalloc((size_t)(np > 0 ? np : 1), sizeof *fx), *fy = sim_xcalloc((size_t)(np > 0 ? np : 1), sizeof *fy);
    int kept = 0;
    for (int i = 0; i < np; i++) { /* points within 0.1 unit of the line through their neighbours go */
        double x = PX(b->first.points[i].t_s / 86400), y = PY(b->first.points[i].steps * g->in->tokens_per_step);
        if (kept >= 2) {
            double ax = fx[kept - 2], ay = fy[kept - 2], dx = x - ax, dy = y - ay, len = hypot(dx, dy);
            double off = len > 0 ? fabs(dx * (fy[kept - 1] - ay) - dy * (fx[kept - 1] - ax)) / len : 0;
            bool between = (fx[kept - 1] - ax) * dx + (fy[kept - 1] - ay) * dy >= 0;
            if (off < 0.1 && between) kept--;
        }
        fx[kept] = x;
        fy[kept++] = y;
    }
    rpt_svg_polyline(f, fx, fy, kept, "#999999", 1);
    double yb = top + ph;
    for (int i = 0; i < b->first.nmarks; i++) {
        double x = PX(b->first.marks[i].t_s / 86400);
        rpt_svg_line(f, x, yb + 2, x, yb + 10, b->first.marks[i].planned ? "#59a14f" : "#e15759", 1, NULL);
    }
    rpt_svg_line(f, left, yb, left + pw, yb, "#888", 1, NULL);
    rpt_svg_line(f, left, top, left, yb, "#888", 1, NULL);
    for (int t = 0; t < nx; t++) {
        char lab[32];
        snprintf(lab, sizeof lab, "%g", xt[t]);
        rpt_svg_line(f, PX(xt[t]), yb + 10, PX(xt[t]), yb + 14, "#888", 1, NULL);
        rpt_svg_text(f, PX(xt[t]), yb + 28, "middle", 11, "#444", lab);
    }
    for (int t = 0; t < ny; t++) {
        char lab[32];
        rpt_svg_line(f, left - 4, PY(yt[t]), left, PY(yt[t]), "#888", 1, NULL);
        rpt_svg_text(f, left - 6, PY(yt[t]) + 4, "end", 11, "#444", sim_fmt_count(yt[t], lab, sizeof lab));
    }
    rpt_svg_text(f, left + pw / 2, yb + 46, "middle", 11, "#444", "wall-clock days");
    rpt_svg_text(f, left, top - 4, "start", 11, "#444", "tokens trained (kept)");
    rpt_svg_close(f);
#undef PX
#undef PY
    free(xs);
    free(ys);
    free(fx);
    free(fy);
}

void rpt_goodput_html_section(FILE *f, const rpt_goodput *g)
{
    const gp_inputs *in = g->in;
    const gp_result *r = g->res;
    char a[32], b[32];
    fputs("<h2 id=\"goodput\">Goodput: the run over days</h2>\n<p class=\"note\">", f);
    fprintf(f, "%d trials from seed %lu, reliability ", r->seeds, in->seed);
    rpt_html_escape(f, in->rel->name);
    fprintf(f, ", a checkpoint every %s of training; ", sim_fmt_time(in->interval_s, a, sizeof a));
    if (in->token_budget > 0) fprintf(f, "to a budget of %s tokens.", sim_fmt_count(in->token_budget, b, sizeof b));
    else fprintf(f, "a horizon of %.2f days.", in->horizon_s / 86400);
    if (in->stragglers_off && in->rel->nstragglers > 0)
        fputs(" Stragglers left out (--no-stragglers): the file's slow parts were not simulated.", f);
    fputs("</p>\n<table class=\"kv\">\n", f);
    fprintf(f, "<tr><td>ETTR</td><td>%.2f %% (p10 %.2f, p90 %.2f)</td></tr>\n", 100 * r->ettr.mean,
            100 * r->ettr.p10, 100 * r->ettr.p90);
    fprintf(f, "<tr><td>goodput</td><td>%s tokens/s (p10 %s, p90 %s)</td></tr>\n",
            sim_fmt_count(r->goodput_tokens_per_s.mean, a, sizeof a),
            sim_fmt_count(r->goodput_tokens_per_s.p10, b, sizeof b),
            sim_fmt_count(r->goodput_tokens_per_s.p90, (char[32]){0}, 32));
    fprintf(f, "<tr><td>days</td><td>%.2f (p10 %.2f, p90 %.2f)</td></tr>\n", r->days.mean, r->days.p10, r->days.p90);
    fprintf(f, "<tr><td>interruptions</td><td>%.1f unexpected + %.1f planned; MTBF %s</td></tr>\n",
            r->interruptions.mean, r->planned_mean, sim_fmt_time(1.0 / r->failure_rate_per_s, a, sizeof a));
    fprintf(f, "<tr><td>checkpoint</td><td>%s; stall %s, reload %s</td></tr>\n",
            sim_fmt_bytes(in->ckpt.total_bytes, a, sizeof a), sim_fmt_time(in->ckpt.stall_s, b, sizeof b),
            sim_fmt_time(in->ckpt.read_s, (char[32]){0}, 32));
    for (int k = 0; k < GP_NCAUSES; k++)
        fprintf(f, "<tr><td>lost to %s</td><td>%.2f h a run</td></tr>\n", gp_cause_name((gp_cause)k),
                r->lost_mean_s[k] / 3600);
    fputs("</table>\n", f);
    if (g->band && g->band->n >= 2) {
        fputs("<h3 id=\"progress\">Progress</h3>\n<p class=\"note\">Tokens kept against wall-clock days: the mean "
              "and the 10th-90th percentile band over the trials; the grey path is the first trial, falling back "
              "to its last checkpoint at each failure; ticks under the axis mark its interruptions.",
              f);
        if (g->band->trials < r->seeds) fprintf(f, " The band is of the first %d trials.", g->band->trials);
        fputs("</p>\n", f);
        progress_svg(f, g);
    }
}

sim_rc rpt_write_goodput_html(const char *path, const rpt_goodput *g, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "HTML report", err);
    if (rc != SIM_OK) return rc;
    FILE *f = o.f;
    char title[512], t[32];
    snprintf(title, sizeof title, "heptasim goodput: %s on %s, strategy %s", g->model, g->platform, g->strategy);
    rpt_html_begin(f, title);
    fprintf(f, "<p class=\"sub\">%d devices, step %s simulated, %s tokens a step.</p>\n", g->in->devices,
            sim_fmt_time(g->in->step_s, t, sizeof t), sim_fmt_count(g->in->tokens_per_step, (char[32]){0}, 32));
    rpt_goodput_html_section(f, g);
    rpt_html_end(f);
    return sim_out_commit(&o, err);
}

/* }========================================================= HTML */
