/* sweep_html.c - the HTML report of a strategy search (sweep, compare): the
 * candidates as a scatter of step time against peak memory with the
 * Pareto front, Megatron-style and 7D points in two colours, and the
 * ranked table.
 *
 * A candidate's time is its simulated step time when it was simulated,
 * else the analytic estimate; the two are drawn differently (filled and
 * hollow markers).  The Pareto front is taken over the candidates that fit
 * in memory: those no other fitting candidate beats on both time and
 * memory.  The ranking is the search's (the order of the candidates
 * given, as the text table prints them), fitting candidates first; a
 * candidate alike to another (its record has alike_of) is folded into
 * that one's row, so the same candidates always give the same file. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"
#include "../config/keys.h"
#include "svg.h"

#define MEGATRON_COLOR "#4e79a7"
#define SEVEN_D_COLOR "#f28e2b"

typedef struct cand {
    const cJSON *json;
    int index;
    const char *space;
    bool megatron;
    bool simulated;
    double estimate_s, step_s, time_s;  /* time_s: simulated if any, else estimate */
    double mfu;
    double peak_bytes, capacity_bytes;
    bool fits;
    bool pareto;
    int rank;                           /* 1-based place in the table */
    int order;                          /* position in the array given */
    int alike;                          /* candidates the row stands for (1: itself) */
    bool folded;                        /* alike to an earlier row: not drawn, not a row */
    char strategy[200];
} cand;

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : dflt;
}

static bool flag(const cJSON *o, const char *key, bool dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

void rpt_record_strategy_text(const void *strategy, char *out, size_t cap)
{
    const cJSON *st = strategy;
    out[0] = '\0';
    if (!cJSON_IsObject(st)) return;
    char *text = sim_json_print(st, false);
    cfg_strategy s;
    sim_err quiet;
    if (text && cfg_parse_strategy(text, "record", NULL, &s, &quiet) == SIM_OK) {
        cfg_strategy_compact(&s, out, (int)cap);
    } else {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(st, "description");
        if (cJSON_IsString(d)) sim_strlcpy(out, d->valuestring, cap);
    }
    cJSON_free(text);
}

/* The ranking: fitting candidates first, each in the order given. */
static int cmp_rank(const void *pa, const void *pb)
{
    const cand *a = *(const cand *const *)pa, *b = *(const cand *const *)pb;
    if (a->fits != b->fits) return a->fits ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

static int cmp_by_rank(const void *pa, const void *pb)
{
    const cand *a = *(const cand *const *)pa, *b = *(const cand *const *)pb;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_memory(const void *pa, const void *pb)
{
    const cand *a = *(const cand *const *)pa, *b = *(const cand *const *)pb;
    if (a->peak_bytes != b->peak_bytes) return a->peak_bytes < b->peak_bytes ? -1 : 1;
    if (a->time_s != b->time_s) return a->time_s < b->time_s ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Marks the Pareto front among fitting candidates with a known time; fills
 * front (capacity n) in increasing memory and returns its length. */
static int pareto(cand **by_mem, int n, cand **front)
{
    int nf = 0;
    double best = INFINITY;
    for (int i = 0; i < n; i++) {
        cand *c = by_mem[i];
        if (!c->fits || !(c->time_s > 0)) continue;
        if (c->time_s < best) {
            c->pareto = true;
            front[nf++] = c;
            best = c->time_s;
        }
    }
    return nf;
}

static void marker(FILE *f, double x, double y, const cand *c, const char *tip)
{
    const char *color = c->megatron ? MEGATRON_COLOR : SEVEN_D_COLOR;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"%s>", x, y,
            c->simulated ? color : "#ffffff", color, c->fits ? "" : " opacity=\"0.4\"");
    fputs("<title>", f);
    rpt_html_escape(f, tip);
    fputs("</title></circle>\n", f);
}

static void scatter_svg(FILE *f, cand **all, int n, cand **front, int nf)
{
    const double left = 80, top = 40, plot_w = 1000, plot_h = 380, w = left + plot_w + 60, h = top + plot_h + 60;
    double mem_hi = 0, cap = 0, t_lo = INFINITY, t_hi = 0;
    for (int i = 0; i < n; i++) {
        mem_hi = fmax(mem_hi, all[i]->peak_bytes);
        cap = fmax(cap, all[i]->capacity_bytes);
        if (all[i]->time_s > 0) {
            t_lo = fmin(t_lo, all[i]->time_s);
            t_hi = fmax(t_hi, all[i]->time_s);
        }
    }
    mem_hi = fmax(mem_hi, cap);
    if (!(t_hi > 0)) t_lo = 0, t_hi = 1;
    double xt[12], yt[12];
    int nx = rpt_nice_ticks(mem_hi * 1.03 / SIM_GIB, 9, xt);
    double pad = (t_hi - t_lo) * 0.05;
    if (!(pad > 0)) pad = t_hi * 0.05;
    int ny = rpt_nice_range(fmax(0, t_lo - pad), t_hi + pad, 8, yt);
    double x1 = xt[nx - 1] * SIM_GIB, y0 = yt[0], y1 = yt[ny - 1];
    if (!(x1 > 0)) x1 = 1;
    if (!(y1 > y0)) y1 = y0 + 1;
#define PX(b) (left + (b) / x1 * plot_w)
#define PY(t) (top + plot_h - ((t) - y0) / (y1 - y0) * plot_h)

    rpt_svg_open(f, w, h, "Step time against peak memory per device");
    double lx = left;
    lx = rpt_svg_legend(f, lx, 16, MEGATRON_COLOR, "Megatron-style");
    lx = rpt_svg_legend(f, lx, 16, SEVEN_D_COLOR, "7D") + 16;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"12\" r=\"5\" fill=\"#888\" stroke=\"#888\" stroke-width=\"2\"/>\n", lx + 6);
    rpt_svg_text(f, lx + 16, 16, "start", 12, "#333", "simulated");
    lx += 100;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"12\" r=\"5\" fill=\"#fff\" stroke=\"#888\" stroke-width=\"2\"/>\n", lx + 6);
    rpt_svg_text(f, lx + 16, 16, "start", 12, "#333", "estimate only");
    lx += 130;
    rpt_svg_line(f, lx, 12, lx + 18, 12, "#222", 1.5, NULL);
    rpt_svg_text(f, lx + 24, 16, "start", 12, "#333", "Pareto front");
    lx += 120;
    rpt_svg_line(f, lx, 12, lx + 18, 12, "#c00", 1.5, "6 4");
    rpt_svg_text(f, lx + 24, 16, "start", 12, "#333", "memory capacity (faded: does not fit)");

    char lab[64];
    for (int i = 0; i < nx; i++) {
        double x = PX(xt[i] * SIM_GIB);
        rpt_svg_line(f, x, top, x, top + plot_h, "#eeeeee", 1, NULL);
        snprintf(lab, sizeof lab, "%g", xt[i]);
        rpt_svg_text(f, x, top + plot_h + 16, "middle", 11, "#444", lab);
    }
    char ylab[12][32];
    rpt_time_tick_labels(yt, ny, ylab);
    for (int i = 0; i < ny; i++) {
        double y = PY(yt[i]);
        rpt_svg_line(f, left, y, left + plot_w, y, "#eeeeee", 1, NULL);
        rpt_svg_text(f, left - 6, y + 4, "end", 11, "#444", ylab[i]);
    }
    rpt_svg_text(f, left + plot_w / 2, top + plot_h + 38, "middle", 12, "#444", "peak memory per device (GiB)");
    fprintf(f, "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\" fill=\"#444\" "
               "transform=\"rotate(-90 16 %.1f)\">step time</text>\n",
            top + plot_h / 2, top + plot_h / 2);
    rpt_svg_line(f, left, top + plot_h, left + plot_w, top + plot_h, "#888", 1, NULL);
    rpt_svg_line(f, left, top, left, top + plot_h, "#888", 1, NULL);
    if (cap > 0) {
        rpt_svg_line(f, PX(cap), top, PX(cap), top + plot_h, "#c00", 1.5, "6 4");
        char b[32];
        snprintf(lab, sizeof lab, "capacity %s", sim_fmt_bytes(cap, b, sizeof b));
        rpt_svg_text(f, PX(cap) - 4, top + 12, "end", 11, "#c00", lab);
    }
    if (nf > 0) {
        /* Staircase: each front point holds until the next, cheaper in time. */
        fputs("<polyline fill=\"none\" stroke=\"#222\" stroke-width=\"1.5\" points=\"", f);
        for (int i = 0; i < nf; i++) {
            if (i > 0) fprintf(f, "%.1f,%.1f ", PX(front[i]->peak_bytes), PY(front[i - 1]->time_s));
            fprintf(f, "%.1f,%.1f ", PX(front[i]->peak_bytes), PY(front[i]->time_s));
        }
        fputs("\"/>\n", f);
    }
    char tip[460], t1[32], b1[32];
    for (int i = n - 1; i >= 0; i--) { /* the best drawn last, on top */
        const cand *c = all[i];
        if (!(c->time_s > 0)) continue;
        char alike[32] = "";
        if (c->alike > 1) snprintf(alike, sizeof alike, " (+%d alike)", c->alike - 1);
        snprintf(tip, sizeof tip, "#%d (candidate %d, %s): %s %s, %s, MFU %.1f %%%s - %s%s", c->rank, c->index,
                 c->space, c->simulated ? "simulated" : "estimated", sim_fmt_time(c->time_s, t1, sizeof t1),
                 sim_fmt_bytes(c->peak_bytes, b1, sizeof b1), 100 * c->mfu, c->fits ? "" : ", does not fit",
                 c->strategy, alike);
        double x = PX(c->peak_bytes), y = PY(c->time_s);
        if (c->pareto) fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"none\" stroke=\"#222\"/>\n", x, y);
        marker(f, x, y, c, tip);
    }
    /* Rank labels of the front and the first three, placed so that none
     * overlaps another: points that share a place share one label. */
    const cand **lab_c = sim_xcalloc((size_t)n + 1, sizeof *lab_c);
    double (*boxes)[4] = sim_xcalloc((size_t)n + 1, sizeof *boxes);
    int nl = 0, nb = 0;
    {
        for (int i = 0; i < n; i++)
            if (all[i]->time_s > 0 && (all[i]->pareto || (all[i]->rank <= 3 && all[i]->fits))) lab_c[nl++] = all[i];
        qsort(lab_c, (size_t)nl, sizeof *lab_c, cmp_by_rank);
        bool *done = sim_xcalloc((size_t)nl + 1, sizeof *done);
        for (int i = 0; i < nl; i++) {
            if (done[i]) continue;
            double x = PX(lab_c[i]->peak_bytes), y = PY(lab_c[i]->time_s);
            char text[64];
            int len = snprintf(text, sizeof text, "#%d", lab_c[i]->rank);
            for (int j = i + 1; j < nl; j++) {
                if (done[j] || fabs(PX(lab_c[j]->peak_bytes) - x) > 4 || fabs(PY(lab_c[j]->time_s) - y) > 4) continue;
                done[j] = true;
                if (len < (int)sizeof text - 8) len += snprintf(text + len, sizeof text - (size_t)len, " #%d", lab_c[j]->rank);
            }
            double wtext = 6.5 * (double)strlen(text), htext = 12;
            /* right above, right below, left above, left below */
            static const double dx[4] = {10, 10, -10, -10}, dy[4] = {-8, 16, -8, 16};
            int k = 0;
            for (int t = 0; t < 4; t++) {
                double bx = dx[t] > 0 ? x + dx[t] : x + dx[t] - wtext, by = y + dy[t] - htext + 2;
                bool clash = false;
                for (int b = 0; b < nb && !clash; b++)
                    clash = bx < boxes[b][2] && boxes[b][0] < bx + wtext && by < boxes[b][3] && boxes[b][1] < by + htext;
                if (!clash) {
                    k = t;
                    break;
                }
            }
            double bx = dx[k] > 0 ? x + dx[k] : x + dx[k] - wtext, by = y + dy[k] - htext + 2;
            boxes[nb][0] = bx;
            boxes[nb][1] = by;
            boxes[nb][2] = bx + wtext;
            boxes[nb][3] = by + htext;
            nb++;
            rpt_svg_text(f, x + dx[k], y + dy[k], dx[k] > 0 ? "start" : "end", 11, "#222", text);
        }
        free(done);
    }
    free(lab_c);
    free(boxes);
#undef PX
#undef PY
    rpt_svg_close(f);
}

static void table_html(FILE *f, cand **ranked, int n)
{
    fputs("<table>\n<tr><th>#</th><th>candidate</th><th class=\"l\">space</th><th class=\"l\">strategy</th>"
          "<th>estimate</th><th>simulated</th><th>MFU</th><th>peak memory</th><th>fits</th><th>Pareto</th></tr>\n",
          f);
    char a[32];
    for (int i = 0; i < n; i++) {
        const cand *c = ranked[i];
        fprintf(f, "<tr%s><td>%d</td><td>%d</td><td class=\"l\"><span style=\"color:%s\">&#9679;</span> ",
                !c->fits ? " class=\"oom\"" : (i == 0 ? " class=\"best\"" : ""), c->rank, c->index,
                c->megatron ? MEGATRON_COLOR : SEVEN_D_COLOR);
        rpt_html_escape(f, c->space);
        fputs("</td><td class=\"l\">", f);
        rpt_html_escape(f, c->strategy);
        if (c->alike > 1) fprintf(f, " (+%d alike)", c->alike - 1);
        fputs("</td><td>", f);
        rpt_html_escape(f, c->estimate_s > 0 ? sim_fmt_time(c->estimate_s, a, sizeof a) : "-");
        fputs("</td><td>", f);
        rpt_html_escape(f, c->simulated ? sim_fmt_time(c->step_s, a, sizeof a) : "-");
        fputs("</td><td>", f);
        if (c->mfu > 0)
            fprintf(f, "%.1f %%", 100 * c->mfu);
        else
            fputs("-", f);
        fputs("</td><td>", f);
        rpt_html_escape(f, sim_fmt_bytes(c->peak_bytes, a, sizeof a));
        fprintf(f, "</td><td>%s</td><td>%s</td></tr>\n", c->fits ? "yes" : "no", c->pareto ? "&#10003;" : "");
    }
    fputs("</table>\n", f);
}

/* The first row of ranked (n) with the candidate index, or NULL. */
static const cand *row_of(cand *const *ranked, int n, int index)
{
    for (int i = 0; i < n; i++)
        if (ranked[i]->index == index) return ranked[i];
    return NULL;
}

/* The lines above the figure: what was searched (the whole search when the
 * head has its counts, else the candidates given) and the two bests with
 * the speedup as compare prints it. */
static void headline(FILE *f, const rpt_sweep_head *h, cand *const *ranked, int n, int given)
{
    char a[32], b[32], c[32], d[32];
    int nsim = 0, nfit = 0;
    for (int i = 0; i < n; i++) {
        nsim += ranked[i]->simulated;
        nfit += ranked[i]->fits;
    }
    fputs("<p class=\"sub\">", f);
    if (h && h->has_counts) {
        fprintf(f, "%s strateg%s enumerated (%s combination%s rejected by the validity rules), %s pruned by memory, %s "
                   "estimated",
                sim_fmt_count((double)h->enumerated, a, sizeof a), h->enumerated == 1 ? "y" : "ies",
                sim_fmt_count((double)h->rejected, b, sizeof b), h->rejected == 1 ? "" : "s",
                sim_fmt_count((double)h->pruned_memory, c, sizeof c), sim_fmt_count((double)h->estimated, d, sizeof d));
        fprintf(f, ", %lld simulated", h->simulated);
        if (h->failed > 0) fprintf(f, " (%lld failed)", h->failed);
        if (nsim == n)
            fprintf(f, "; the table shows the %d best, all simulated", n);
        else
            fprintf(f, "; the table shows the %d best (%d simulated, the others ranked by the analytic estimate)", n,
                    nsim);
    } else {
        fprintf(f, "%d candidate%s, %d fit in memory, %d simulated (the others ranked by the analytic estimate)", n,
                n == 1 ? "" : "s", nfit, nsim);
    }
    if (given > n) fprintf(f, "; %d alike candidate%s folded into their rows", given - n, given - n == 1 ? "" : "s");
    fputs(".</p>\n", f);
    if (!h) return;
    const cand *m = h->megatron_index >= 0 ? row_of(ranked, n, h->megatron_index) : NULL;
    const cand *s = h->best_index >= 0 ? row_of(ranked, n, h->best_index) : NULL;
    if (!m && !s) return;
    char t0[32], t1[32];
    fputs("<p>", f);
    if (m) fprintf(f, "Best Megatron-style: #%d (candidate %d), %s. ", m->rank, m->index, sim_fmt_time(m->time_s, t0, sizeof t0));
    if (s) fprintf(f, "Best 7D: #%d (candidate %d), %s. ", s->rank, s->index, sim_fmt_time(s->time_s, t1, sizeof t1));
    if (h->speedup) {
        fputs("Speedup of the best 7D strategy over the best Megatron-style one (simulated): ", f);
        rpt_html_escape(f, h->speedup);
        fputc('.', f);
    }
    fputs("</p>\n", f);
}

/* Writes the sweep report (see report.h). */
sim_rc rpt_write_sweep_html(const char *path, const void *candidates, const rpt_sweep_head *head, sim_err *err)
{
    const cJSON *arr = candidates;
    if (!cJSON_IsArray(arr))
        return sim_fail(err, SIM_EINVAL, "%s: the sweep report needs an array of candidates", path);
    int given = cJSON_GetArraySize(arr), n = 0;
    cand *cs = sim_xcalloc((size_t)(given > 0 ? given : 1), sizeof *cs);
    cand **ranked = sim_xcalloc((size_t)(given > 0 ? given : 1), sizeof *ranked);
    cand **by_mem = sim_xcalloc((size_t)(given > 0 ? given : 1), sizeof *by_mem);
    cand **front = sim_xcalloc((size_t)(given > 0 ? given : 1), sizeof *front);
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, arr)
    {
        cand *c = &cs[i];
        c->json = o;
        c->order = i;
        c->index = (int)num(o, "index", i);
        c->folded = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "alike_of"));
        c->alike = (int)num(o, "alike", 1);
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "space");
        c->megatron = flag(o, "megatron_style", false);
        c->space = cJSON_IsString(sp) ? sp->valuestring : "?"; /* the row names its space */
        c->simulated = flag(o, "simulated", false) && num(o, "step_time_s", 0) > 0;
        c->estimate_s = num(o, "estimate_step_time_s", 0);
        c->step_s = num(o, "step_time_s", 0);
        c->time_s = c->simulated ? c->step_s : c->estimate_s;
        c->mfu = num(o, "mfu", 0);
        const cJSON *mem = cJSON_GetObjectItemCaseSensitive(o, "memory");
        c->peak_bytes = num(mem, "peak_bytes", 0);
        c->capacity_bytes = num(mem, "capacity_bytes", 0);
        c->fits = flag(mem, "fits", c->capacity_bytes <= 0 || c->peak_bytes <= c->capacity_bytes);
        rpt_record_strategy_text(cJSON_GetObjectItemCaseSensitive(o, "strategy"), c->strategy, sizeof c->strategy);
        const cJSON *dims = cJSON_GetObjectItemCaseSensitive(o, "dimensions");
        if (cJSON_IsString(dims) && strlen(c->strategy) + strlen(dims->valuestring) + 4 < sizeof c->strategy) {
            memmove(c->strategy + strlen(dims->valuestring) + 3, c->strategy, strlen(c->strategy) + 1);
            memcpy(c->strategy, dims->valuestring, strlen(dims->valuestring));
            memcpy(c->strategy + strlen(dims->valuestring), " | ", 3);
        }
        if (!c->folded) {
            ranked[n] = by_mem[n] = c;
            n++;
        }
        i++;
    }
    /* Candidates of one search share model, batch and devices: MFU is
     * inversely proportional to step time, so a simulated candidate gives
     * the estimated ones theirs. */
    const cand *ref = NULL;
    for (i = 0; i < given && !ref; i++)
        if (cs[i].simulated && cs[i].mfu > 0) ref = &cs[i];
    for (i = 0; i < given && ref; i++)
        if (!cs[i].simulated && cs[i].estimate_s > 0) cs[i].mfu = ref->mfu * ref->step_s / cs[i].estimate_s;
    qsort(ranked, (size_t)n, sizeof *ranked, cmp_rank);
    for (i = 0; i < n; i++) ranked[i]->rank = i + 1;
    qsort(by_mem, (size_t)n, sizeof *by_mem, cmp_memory);
    int nf = pareto(by_mem, n, front);

    sim_out out;
    sim_rc rc = sim_out_open(&out, path, "HTML report", err);
    if (rc != SIM_OK) goto done;
    FILE *f = out.f;
    rpt_html_begin(f, head && head->title && *head->title ? head->title : "heptasim strategy search");
    headline(f, head, ranked, n, given);
    fputs("<h2 id=\"scatter\">Step time against memory</h2>\n", f);
    if (n > 0)
        scatter_svg(f, by_mem, n, front, nf);
    else
        fputs("<p class=\"note\">No candidate.</p>\n", f);
    fputs("<h2 id=\"ranking\">Ranking</h2>\n", f);
    fputs("<p class=\"note\">The search's ranking: simulated candidates by simulated step time, then the next best by "
          "estimate; step times within 0.1 % are a tie, ranked by peak memory; candidates alike in every figure are "
          "one row (\"+N alike\"). Candidates that do not fit come last.</p>\n",
          f);
    table_html(f, ranked, n);
    rpt_html_end(f);
    rc = sim_out_commit(&out, err);
done:
    free(cs);
    free(ranked);
    free(by_mem);
    free(front);
    return rc;
}
