/* html.c - the HTML report of one simulated step: summary, pipeline
 * timeline of the sampled ranks, step-time breakdown, memory per stage
 * against capacity and communication time per dimension, as one
 * self-contained file with inline SVG (no script, no network).
 *
 * The timeline is collected through the engine's trace callback at a fixed
 * resolution: each sampled rank has TL_BUCKETS time buckets holding the
 * seconds spent in each category; when the step outgrows them, neighbouring
 * buckets are summed pairwise and the bucket width doubles.  Memory is
 * rows x TL_BUCKETS x TL_NCAT doubles whatever the number of instructions.
 * A bucket is drawn in its dominant category, and runs of equal buckets
 * as one rectangle. */
#include "goodput.h"
#include "report.h"

#include "../config/keys.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

/* {========================================================== timeline */

/* ORDER TL: tl_names and tl_colors follow this order; the async streams
 * follow ORDER WL_STREAM (tl_category maps one onto the other). */
enum {
    /* main track; TL_COMM: blocking collectives and waits for a stream or a
     * non-pipeline receive; TL_BUBBLE: waits for a pipeline neighbour */
    TL_FWD = 0, TL_BWD, TL_RECOMP, TL_OPT, TL_COMM, TL_BUBBLE,
    TL_NMAIN,
    TL_S_TP = TL_NMAIN, TL_S_CP, TL_S_EP, TL_S_DP,           /* async streams */
    TL_NCAT
};

#define TL_BUCKETS 1600
#define TL_FIRST_WIDTH_S 1e-6

/* ORDER TL */
static const char *const tl_names[TL_NCAT] = {"forward", "backward", "recompute", "optimizer", "exposed comm",
                                              "pipeline bubble", "tp stream", "cp stream", "ep stream", "dp stream"};
static const char *const tl_colors[TL_NCAT] = /* ORDER TL */ {"#4e79a7", "#f28e2b", "#b07aa1", "#59a14f", "#e15759",
                                               "#c9c9c9", "#ff9d9a", "#edc948", "#76b7b2", "#9c755f"};

struct rpt_timeline {
    const cfg_strategy *s;
    int world;
    int *row_of;                       /* world-sized: row of a rank, -1 if not sampled */
    int nrows;
    int rank_of_row[RPT_TIMELINE_MAX_RANKS];
    double width_s;                    /* bucket width */
    double end_s;                      /* latest end seen */
    double *acc;                       /* [row][bucket][category] seconds */
};

rpt_timeline *rpt_timeline_new(const cfg_strategy *s, const bool *ranks)
{
    rpt_timeline *tl = sim_xcalloc(1, sizeof *tl);
    tl->s = s;
    tl->world = cfg_world_size(s);
    if (tl->world < 1) tl->world = 1;
    tl->row_of = sim_xcalloc((size_t)tl->world, sizeof *tl->row_of);
    for (int r = 0; r < tl->world; r++) {
        tl->row_of[r] = -1;
        if (ranks && ranks[r] && tl->nrows < RPT_TIMELINE_MAX_RANKS) {
            tl->row_of[r] = tl->nrows;
            tl->rank_of_row[tl->nrows++] = r;
        }
    }
    tl->width_s = TL_FIRST_WIDTH_S;
    tl->acc = sim_xcalloc((size_t)(tl->nrows > 0 ? tl->nrows : 1) * TL_BUCKETS * TL_NCAT, sizeof *tl->acc);
    return tl;
}

void rpt_timeline_free(rpt_timeline *tl)
{
    if (!tl) return;
    free(tl->row_of);
    free(tl->acc);
    free(tl);
}

/* Category of an instruction on stream, or -1 when it is not drawn. */
static int tl_category(const wl_instr *in, int stream)
{
    if (stream != WL_S_MAIN) return stream >= WL_S_TP && stream <= WL_S_DP ? TL_S_TP + (stream - WL_S_TP) : -1;
    switch ((wl_op)in->op) {
    case WL_COMPUTE:
        switch ((wl_phase)in->phase) {
        case WL_PH_FORWARD: return TL_FWD;
        case WL_PH_BACKWARD: case WL_PH_WGRAD: return TL_BWD;
        case WL_PH_RECOMPUTE: return TL_RECOMP;
        case WL_PH_OPTIMIZER: return TL_OPT;
        case WL_PH_GRAD_SYNC: case WL_NPHASES: return TL_COMM;
        }
        return TL_COMM;
    case WL_COLL: case WL_WAIT: return TL_COMM;
    case WL_RECV: return in->group == WL_G_PP ? TL_BUBBLE : TL_COMM;
    case WL_SEND: return -1;
    }
    return -1;
}

/* Halves the resolution: bucket b becomes buckets 2b and 2b+1. */
static void tl_coarsen(rpt_timeline *tl)
{
    for (int row = 0; row < tl->nrows; row++) {
        double *a = tl->acc + (size_t)row * TL_BUCKETS * TL_NCAT;
        for (int b = 0; b < TL_BUCKETS / 2; b++)
            for (int c = 0; c < TL_NCAT; c++) a[b * TL_NCAT + c] = a[2 * b * TL_NCAT + c] + a[(2 * b + 1) * TL_NCAT + c];
        memset(a + (TL_BUCKETS / 2) * TL_NCAT, 0, sizeof *a * (TL_BUCKETS / 2) * TL_NCAT);
    }
    tl->width_s *= 2;
}

void rpt_timeline_add(rpt_timeline *tl, int rank, const wl_instr *in, int stream, double start_s, double end_s)
{
    if (!tl || rank < 0 || rank >= tl->world || tl->row_of[rank] < 0) return;
    if (!isfinite(start_s) || !isfinite(end_s) || !(end_s > start_s) || start_s < 0) return;
    int cat = tl_category(in, stream);
    if (cat < 0) return;
    while (end_s > tl->width_s * TL_BUCKETS) tl_coarsen(tl);
    if (end_s > tl->end_s) tl->end_s = end_s;
    double *a = tl->acc + (size_t)tl->row_of[rank] * TL_BUCKETS * TL_NCAT;
    int b0 = (int)(start_s / tl->width_s), b1 = (int)(end_s / tl->width_s);
    if (b1 >= TL_BUCKETS) b1 = TL_BUCKETS - 1;
    for (int b = b0; b <= b1; b++) {
        double lo = fmax(start_s, b * tl->width_s), hi = fmin(end_s, (b + 1) * tl->width_s);
        if (hi > lo) a[b * TL_NCAT + cat] += hi - lo;
    }
}

/* Dominant category of bucket b of a row among [c0, c1), or -1 when less
 * than a third of the bucket is covered on the main track (a twentieth on
 * the stream lane, where short collectives would vanish otherwise). */
static int tl_dominant(const rpt_timeline *tl, int row, int b, int c0, int c1)
{
    double min_cover = c0 < TL_NMAIN ? tl->width_s / 3 : tl->width_s / 20;
    const double *a = tl->acc + ((size_t)row * TL_BUCKETS + (size_t)b) * TL_NCAT;
    double sum = 0, best = 0;
    int arg = -1;
    for (int c = c0; c < c1; c++) {
        sum += a[c];
        if (a[c] > best) {
            best = a[c];
            arg = c;
        }
    }
    return sum >= min_cover ? arg : -1;
}

/* Draws the runs of one lane of a row; a run's tooltip gives its span and
 * the share of each category in it. */
static void tl_lane(FILE *f, const rpt_timeline *tl, int row, int c0, int c1, double x0, double y, double h,
                    double px_per_s, int nb)
{
    char tip[400], t0[32], t1[32];
    int b = 0;
    while (b < nb) {
        int cat = tl_dominant(tl, row, b, c0, c1), e = b + 1;
        while (e < nb && tl_dominant(tl, row, e, c0, c1) == cat) e++;
        if (cat >= 0) {
            double s0 = b * tl->width_s, s1 = e * tl->width_s, sum[TL_NCAT] = {0}, total = 0;
            for (int k = b; k < e; k++)
                for (int c = c0; c < c1; c++) sum[c] += tl->acc[((size_t)row * TL_BUCKETS + (size_t)k) * TL_NCAT + c];
            for (int c = c0; c < c1; c++) total += sum[c];
            int n = snprintf(tip, sizeof tip, "rank %d: %s, %s to %s", tl->rank_of_row[row], tl_names[cat],
                             sim_fmt_time(s0, t0, sizeof t0), sim_fmt_time(s1, t1, sizeof t1));
            const char *sep = " (";
            for (int c = c0; c < c1 && total > 0; c++) {
                if (sum[c] < 0.01 * total || n < 0 || (size_t)n >= sizeof tip) continue;
                n += snprintf(tip + n, sizeof tip - (size_t)n, "%s%s %.0f %%", sep, tl_names[c], 100 * sum[c] / total);
                sep = ", ";
            }
            if (*sep == ',' && n > 0 && (size_t)n < sizeof tip) snprintf(tip + n, sizeof tip - (size_t)n, ")");
            rpt_svg_rect(f, x0 + s0 * px_per_s, y, (s1 - s0) * px_per_s, h, tl_colors[cat], tip);
        }
        b = e;
    }
}

static void timeline_svg(FILE *f, const rpt_timeline *tl, double step_s)
{
    const double left = 150, plot_w = 980, right = 30, top = 34, main_h = 16, async_h = 6, row_h = 30;
    double span = fmax(step_s, tl->end_s);
    if (!(span > 0)) span = tl->width_s;
    double w = left + plot_w + right, h = top + tl->nrows * row_h + 40;
    double px_per_s = plot_w / span;
    int nb = (int)ceil(span / tl->width_s);
    if (nb > TL_BUCKETS) nb = TL_BUCKETS;

    rpt_svg_open(f, w, h, "Pipeline timeline of the sampled ranks");
    double x = left;
    for (int c = 0; c < TL_NCAT; c++) x = rpt_svg_legend(f, x, 16, tl_colors[c], tl_names[c]);

    double ticks[12];
    int nt = rpt_nice_ticks(span, 9, ticks);
    char tick_lab[12][32];
    rpt_time_tick_labels(ticks, nt, tick_lab);
    double ybot = top + tl->nrows * row_h;
    for (int i = 0; i < nt; i++) {
        if (ticks[i] > span * (1 + 1e-9)) break;
        double tx = left + ticks[i] * px_per_s;
        rpt_svg_line(f, tx, top - 4, tx, ybot, "#e4e4e4", 1, NULL);
        rpt_svg_text(f, tx, ybot + 16, "middle", 11, "#444", tick_lab[i]);
    }
    rpt_svg_text(f, left + plot_w / 2, ybot + 34, "middle", 12, "#444", "simulated time in the step");

    for (int row = 0; row < tl->nrows; row++) {
        int rank = tl->rank_of_row[row];
        double y = top + row * row_h;
        char name[64];
        snprintf(name, sizeof name, "stage %d \xc2\xb7 rank %d", rpt_rank_stage(tl->s, rank), rank);
        rpt_svg_text(f, left - 8, y + 13, "end", 12, "#222", name);
        rpt_svg_rect(f, left, y, plot_w, main_h, "#f6f6f6", NULL);
        tl_lane(f, tl, row, 0, TL_NMAIN, left, y, main_h, px_per_s, nb);
        tl_lane(f, tl, row, TL_NMAIN, TL_NCAT, left, y + main_h + 1, async_h, px_per_s, nb);
    }
    rpt_svg_line(f, left, ybot, left + plot_w, ybot, "#888", 1, NULL);
    rpt_svg_close(f);
}

/* }========================================================== */

/* {========================================================== figures */

static void summary_table(FILE *f, const rpt_run *run)
{
    char a[64], b[64], line[768];
    const cfg_strategy *s = run->strategy;
    fputs("<table class=\"kv\">\n", f);
#define ROW(k, v)                                                                                                      \
    do {                                                                                                               \
        fputs("<tr><td>", f);                                                                                          \
        rpt_html_escape(f, k);                                                                                         \
        fputs("</td><td class=\"l\">", f);                                                                             \
        rpt_html_escape(f, v);                                                                                         \
        fputs("</td></tr>\n", f);                                                                                      \
    } while (0)
    snprintf(line, sizeof line, "%s (%d layers, hidden %d, seq %d)", run->model->name, run->model->layers,
             run->model->hidden, run->model->seq_len);
    ROW("model", line);
    snprintf(line, sizeof line, "%s, %d devices (%s)", run->platform->name, rpt_devices(run),
             run->platform->device_name);
    ROW("platform", line);
    rpt_overrides_text(&run->overrides, line, sizeof line);
    if (line[0]) ROW("overrides", line);
    char words[512];
    rpt_strategy_text(s, words, sizeof words);
    snprintf(line, sizeof line, "%.200s: %.500s", s->name, words);
    ROW("strategy", line);
    if (cfg_uneven_stages(s)) {
        int pp = s->pp;
        snprintf(line, sizeof line, "first stage %d, middle stages %d each, last stage %d",
                 cfg_stage_layer_total(run->model, s, 0), pp > 2 ? cfg_stage_layer_total(run->model, s, 1) : 0,
                 cfg_stage_layer_total(run->model, s, pp - 1));
        ROW("layers per stage", line);
    }
    if (run->sim) {
        rpt_metrics mt;
        rpt_metrics_compute(run, &mt);
        ROW("step time", sim_fmt_time(mt.step_time_s, a, sizeof a));
        snprintf(line, sizeof line, "%.1f %% (HFU %.1f %%), %.1f TFLOP/s per device, %.0f tokens/s", 100 * mt.mfu,
                 100 * mt.hfu, mt.tflops_per_device, mt.tokens_per_s);
        ROW("MFU", line);
        if (run->band) {
            if (isfinite(run->band->error) && run->band->error > 0)
                snprintf(line, sizeof line, "+-%.1f %% (step time %.2f - %.2f s): %s", 100 * run->band->error,
                         mt.step_time_s * (1 - run->band->error), mt.step_time_s * (1 + run->band->error),
                         run->band->reason);
            else
                snprintf(line, sizeof line, "unknown: %s", run->band->reason);
            ROW("error band", line);
        }
    }
    double cap = cfg_usable_hbm_bytes(run->platform);
    snprintf(line, sizeof line, "%s of %s usable (stage %d) %s", sim_fmt_bytes(run->memory.total_bytes, a, sizeof a),
             sim_fmt_bytes(cap, b, sizeof b), run->memory_stage,
             run->memory.total_bytes <= cap ? "- fits" : "- DOES NOT FIT (not simulated)");
    ROW("peak memory", line);
    if (run->sim) {
        char how[160];
        rpt_lockstep_text(run->sim, how, sizeof how);
        snprintf(line, sizeof line, "%lld instructions, %lld flows, %.2f s of wall time; %d of %d ranks simulated%s%s%s",
                 run->sim->instructions, run->sim->flows, run->wall_s, run->sim->ranks_simulated,
                 run->sim->ranks_simulated * run->sim->lockstep * run->sim->replicas, how[0] ? ", " : "", how,
                 run->sim->replicas > 1 ? " (APPROXIMATE: one data-parallel replica for all)" : "");
        ROW("simulator", line);
    }
#undef ROW
    fputs("</table>\n", f);
}

static void breakdown_svg(FILE *f, const rpt_run *run)
{
    rpt_breakdown bd;
    rpt_breakdown_compute(run, &bd);
    double step = run->sim->step_time_s;
    const char *names[5] = {"compute", "exposed comm", "pipeline bubble", "optimizer", "other"};
    const char *colors[5] = {"#4e79a7", "#e15759", "#c9c9c9", "#59a14f", "#eeeeee"};
    double v[5] = {bd.compute_s, bd.exposed_comm_s, bd.bubble_s, bd.optimizer_s,
                   bd.other_s > 1e-6 * step ? bd.other_s : 0}; /* rounding noise is 0 */
    double total = 0;
    for (int i = 0; i < 5; i++) total += v[i];
    if (total < step) total = step;
    const double left = 150, plot_w = 980, w = left + plot_w + 30, h = 92;
    rpt_svg_open(f, w, h, "Step-time breakdown of the critical rank");
    char lab[96], t[32];
    snprintf(lab, sizeof lab, "rank %d (stage %d)", bd.critical_rank, bd.critical_stage);
    rpt_svg_text(f, left - 8, 40, "end", 12, "#222", lab);
    double x = left;
    for (int i = 0; i < 5; i++) {
        if (!(v[i] > 0) || !(total > 0)) continue;
        double wi = v[i] / total * plot_w;
        snprintf(lab, sizeof lab, "%s: %s (%.1f %%)", names[i], sim_fmt_time(v[i], t, sizeof t), 100 * v[i] / total);
        rpt_svg_rect(f, x, 22, wi, 28, colors[i], lab);
        if (wi > 60) {
            snprintf(lab, sizeof lab, "%.0f %%", 100 * v[i] / total);
            rpt_svg_text(f, x + wi / 2, 41, "middle", 12, i == 1 || i == 0 || i == 3 ? "#fff" : "#222", lab);
        }
        x += wi;
    }
    x = left;
    for (int i = 0; i < 5; i++) {
        snprintf(lab, sizeof lab, "%s %s", names[i], sim_fmt_time(v[i], t, sizeof t));
        x = rpt_svg_legend(f, x, 78, colors[i], lab);
    }
    rpt_svg_close(f);
}

static void memory_svg(FILE *f, const rpt_run *run)
{
    const cfg_strategy *s = run->strategy;
    int pp = s->pp > 0 ? s->pp : 1;
    double cap = cfg_usable_hbm_bytes(run->platform), hi = cap;
    mdl_memory *mem = sim_xcalloc((size_t)pp, sizeof *mem);
    for (int k = 0; k < pp; k++) {
        mdl_rank_memory(run->model, s, k, &mem[k]);
        if (mem[k].total_bytes > hi) hi = mem[k].total_bytes;
    }
    const char *names[5] = {"weights", "gradients", "optimizer state", "activations", "buffers"};
    const char *colors[5] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#bab0ac"};
    const double left = 70, plot_w = 1060, top = 34, plot_h = 260, w = left + plot_w + 50, h = top + plot_h + 50;
    double ticks[12];
    int nt = rpt_nice_ticks(hi * 1.04 / SIM_GIB, 8, ticks);
    double ymax = ticks[nt - 1] * SIM_GIB;
    if (!(ymax > 0)) ymax = 1;
    rpt_svg_open(f, w, h, "Memory per device by pipeline stage, against capacity");
    double x = left;
    for (int i = 0; i < 5; i++) x = rpt_svg_legend(f, x, 16, colors[i], names[i]);
    rpt_svg_line(f, x, 12, x + 18, 12, "#000", 1.5, "6 4");
    rpt_svg_text(f, x + 24, 16, "start", 12, "#333", "usable capacity");
    char lab[160], b1[32];
    for (int i = 0; i < nt; i++) {
        double y = top + plot_h - ticks[i] * SIM_GIB / ymax * plot_h;
        rpt_svg_line(f, left, y, left + plot_w, y, "#eeeeee", 1, NULL);
        snprintf(lab, sizeof lab, "%g GiB", ticks[i]);
        rpt_svg_text(f, left - 6, y + 4, "end", 11, "#444", lab);
    }
    double slot = plot_w / pp, bw = fmin(70, slot * 0.7);
    int every = pp > 32 ? (pp + 31) / 32 : 1;
    for (int k = 0; k < pp; k++) {
        double v[5] = {mem[k].weights_bytes, mem[k].grads_bytes, mem[k].optimizer_bytes, mem[k].activations_bytes,
                       mem[k].buffers_bytes};
        double bx = left + k * slot + (slot - bw) / 2, y = top + plot_h;
        for (int i = 0; i < 5; i++) {
            double hh = v[i] / ymax * plot_h;
            snprintf(lab, sizeof lab, "stage %d %s: %s", k, names[i], sim_fmt_bytes(v[i], b1, sizeof b1));
            rpt_svg_rect(f, bx, y - hh, bw, hh, colors[i], lab);
            y -= hh;
        }
        if (k % every == 0) {
            snprintf(lab, sizeof lab, "%d", k);
            rpt_svg_text(f, bx + bw / 2, top + plot_h + 16, "middle", 11, "#444", lab);
        }
        if (pp <= 16) {
            rpt_svg_text(f, bx + bw / 2, y - 4, "middle", 11, mem[k].total_bytes > cap ? "#c00" : "#333",
                         sim_fmt_bytes(mem[k].total_bytes, b1, sizeof b1));
        }
    }
    double yc = top + plot_h - cap / ymax * plot_h;
    rpt_svg_line(f, left, yc, left + plot_w, yc, "#000", 1.5, "6 4");
    snprintf(lab, sizeof lab, "capacity %s", sim_fmt_bytes(cap, b1, sizeof b1));
    rpt_svg_text(f, left + plot_w, yc - 5, "end", 11, "#000", lab);
    rpt_svg_line(f, left, top + plot_h, left + plot_w, top + plot_h, "#888", 1, NULL);
    rpt_svg_text(f, left + plot_w / 2, top + plot_h + 36, "middle", 12, "#444", "pipeline stage");
    rpt_svg_close(f);
    free(mem);
}

static void dimensions_svg(FILE *f, const rpt_run *run)
{
    const eng_rank_stats *st = &run->sim->critical;
    double hi = 0;
    for (int d = 0; d < WL_NDIMS; d++) hi = fmax(hi, fmax(st->comm_s[d], st->exposed_comm_s[d]));
    const double left = 150, plot_w = 700, top = 30, bar_h = 22, gap = 12, w = left + plot_w + 310;
    double h = top + WL_NDIMS * (bar_h + gap) + 30;
    rpt_svg_open(f, w, h, "Communication time per dimension, critical rank");
    double x = rpt_svg_legend(f, left, 16, "#a0cbe8", "in flight (overlapped or not)");
    rpt_svg_legend(f, x, 16, "#e15759", "exposed (the rank waited)");
    char lab[200], t1[32], t2[32], b1[32], b2[32];
    double ticks[12];
    int nt = rpt_nice_ticks(hi, 7, ticks);
    char tick_lab[12][32];
    rpt_time_tick_labels(ticks, nt, tick_lab);
    double xmax = ticks[nt - 1] > 0 ? ticks[nt - 1] : 1;
    double ybot = top + WL_NDIMS * (bar_h + gap);
    for (int i = 0; i < nt; i++) {
        double tx = left + ticks[i] / xmax * plot_w;
        rpt_svg_line(f, tx, top - 4, tx, ybot, "#eeeeee", 1, NULL);
        rpt_svg_text(f, tx, ybot + 14, "middle", 11, "#444", tick_lab[i]);
    }
    for (int d = 0; d < WL_NDIMS; d++) {
        double y = top + d * (bar_h + gap);
        rpt_svg_text(f, left - 8, y + 15, "end", 12, "#222", rpt_dim_key(d));
        snprintf(lab, sizeof lab, "%s in flight %s", rpt_dim_key(d), sim_fmt_time(st->comm_s[d], t1, sizeof t1));
        rpt_svg_rect(f, left, y, st->comm_s[d] / xmax * plot_w, bar_h, "#a0cbe8", lab);
        snprintf(lab, sizeof lab, "%s exposed %s", rpt_dim_key(d), sim_fmt_time(st->exposed_comm_s[d], t1, sizeof t1));
        rpt_svg_rect(f, left, y + bar_h * 0.3, st->exposed_comm_s[d] / xmax * plot_w, bar_h * 0.4, "#e15759", lab);
        snprintf(lab, sizeof lab, "%s / %s exposed, %s sent (all ranks %s)",
                 sim_fmt_time(st->comm_s[d], t1, sizeof t1), sim_fmt_time(st->exposed_comm_s[d], t2, sizeof t2),
                 sim_fmt_bytes(st->bytes_sent[d], b1, sizeof b1), sim_fmt_bytes(run->sim->bytes_total[d], b2, sizeof b2));
        rpt_svg_text(f, left + plot_w + 10, y + 15, "start", 11, "#333", lab);
    }
    rpt_svg_line(f, left, ybot, left + plot_w, ybot, "#888", 1, NULL);
    rpt_svg_close(f);
}

/* }========================================================== */

/* Writes the run report (see report.h). */
sim_rc rpt_write_run_html(const char *path, const rpt_run *run, const rpt_timeline *tl, sim_err *err)
{
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "HTML report", err);
    if (rc != SIM_OK) return rc;
    FILE *f = o.f;
    char title[256];
    snprintf(title, sizeof title, "heptasim: %s on %s, strategy %s", run->model->name, run->platform->name,
             run->strategy->name);
    rpt_html_begin(f, title);
    /* The subtitle from the resolved inputs; a strategy file's own words
     * after it (an overridden strategy has none: cfg_parse_strategy). */
    char label[CFG_NAME_LEN + CFG_TEXT_LEN + 8], sub[sizeof label + 3 * CFG_NAME_LEN + 96];
    rpt_strategy_label(run->strategy, label, sizeof label);
    snprintf(sub, sizeof sub, "%s on %d %s devices (%s), strategy %s", run->model->name, rpt_devices(run),
             run->platform->device_name, run->platform->name, label);
    fputs("<p class=\"sub\">", f);
    rpt_html_escape(f, sub);
    fputs("</p>\n", f);
    char compact[CFG_TEXT_LEN];
    cfg_strategy_compact(run->strategy, compact, sizeof compact);
    if (run->strategy->description[0] && strcmp(run->strategy->description, compact) != 0) {
        fputs("<p class=\"sub\">", f);
        rpt_html_escape(f, run->strategy->description);
        fputs("</p>\n", f);
    }
    fputs("<h2 id=\"summary\">Summary</h2>\n", f);
    summary_table(f, run);
    if (run->sim) {
        fputs("<h2 id=\"timeline\">Pipeline timeline</h2>\n", f);
        if (tl && tl->nrows > 0) {
            fputs("<p class=\"note\">Sampled ranks, one row each: the main track (what the device does) and below "
                  "it the asynchronous communication streams.  Each time bucket shows its dominant activity, so "
                  "collectives shorter than a bucket show in the breakdown below rather than here; hover a slice "
                  "for its span and mix, or open the trace file for every instruction.</p>\n",
                  f);
            timeline_svg(f, tl, run->sim->step_time_s);
        } else {
            fputs("<p class=\"note\">No rank was sampled.</p>\n", f);
        }
        fputs("<h2 id=\"breakdown\">Step-time breakdown</h2>\n", f);
        breakdown_svg(f, run);
    }
    fputs("<h2 id=\"memory\">Memory per stage</h2>\n", f);
    fputs("<p class=\"note\">Per device, at the peak of each pipeline stage, against the usable HBM.</p>\n", f);
    memory_svg(f, run);
    if (run->sim) {
        fputs("<h2 id=\"communication\">Communication per dimension</h2>\n", f);
        fputs("<p class=\"note\">Critical rank: time collectives of each dimension were in flight, the part the rank "
              "waited for, and the bytes it sent.</p>\n",
              f);
        dimensions_svg(f, run);
    }
    if (run->goodput) rpt_goodput_html_section(f, run->goodput);
    rpt_html_end(f);
    return sim_out_commit(&o, err);
}
