/* schedule.c - the order of forward, backward and weight-gradient steps of
 * a pipeline stage.
 *
 * With p = pp stages, m micro-batches, stage s (0-based), F forward, B
 * backward (input gradients; with the weight gradients too unless split)
 * and W the weight gradients of a split B:
 *
 * GPipe: all forwards, then all backwards.  1F1B (PipeDream-Flush, Narayanan
 * et al. SC'21): p - s - 1 warm-up forwards, then one forward one
 * backward, then the remaining backwards.  Interleaved 1F1B (same paper,
 * Megatron's schedule): the stage holds vpp model chunks; virtual
 * micro-batch k runs chunk (k / pp) % vpp of micro-batch
 * (k / (pp*vpp))*pp + k % pp, with (pp - stage - 1)*2 + (vpp - 1)*pp warm-up
 * forwards.  Requires micro-batches % pp == 0 (checked by the config).
 *
 * Paired 1F1B (Megatron-Core's --overlap-moe-expert-parallel-comm,
 * pipeline_parallel/combined_1f1b.py, cfg_ep_overlap_1f1b): interleaved
 * 1F1B, or 1F1B at pp 1, with one more warm-up forward, so that the forward
 * and the backward of each steady step belong to different micro-batches;
 * each steady forward is then paired (F & B) with the backward after it,
 * the two run together and each one's expert all-to-all hides behind the
 * other's compute.  Warm-up and cool-down stay unpaired.  At pp 1 this is
 * F, then m - 1 times (F & B), then B.
 *
 * ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24, section
 * 2.1): 1F1B's order with every B split and its W delayed so that every
 * stage holds p micro-batches, as 1F1B's first does: p - s - 1 forwards;
 * s times F B; then F B W while forwards remain; then B W; then the s
 * remaining W.  The W fill the cool-down that 1F1B leaves idle.
 *
 * The V schedules hold two chunks per stage: chunk 0 is global chunk s,
 * chunk 1 global chunk 2p - 1 - s (cfg_stage_layers), so the forward runs
 * down the stages and back up, and the last stage passes its chunk 0's
 * output to its chunk 1 without a transfer.  Below F0, B1, ... name a
 * pass and a chunk; each chunk's passes run its micro-batches in order.
 *
 * ZB-V (same paper, its memory-efficient V schedule; the order of the
 * authors' handcrafted ZB-V for T_F = T_B = T_W): 2(p - s) - 1 F0; s times F1 F0; p - s
 * times F1 B1 W1; then while forwards remain F0 (if any left) B0 W0 F1 B1
 * W1; then s times B0 B1 and p - s times B0 W0 with their W kept back
 * (the W0 of the oldest kept-back B0); then the remaining W1 and W0.
 * Needs m >= 2p - 1.
 *
 * DualPipeV (DeepSeek-V3 technical report's DualPipe, cut in half: the
 * V-shape order of deepseek-ai/DualPipe, after Sea AI Lab's "cut-in-half"):
 * with a queue of kept-back W (oldest first), 2(p - s - 1) F0; s + 1 times
 * F0 F1; p - s - 1 times B1 (kept back) W F1; m - 2p + s + 1 times
 * (F0 & B1) (F1 & B0), where & overlaps the forward of one micro-batch
 * with the full backward of another (on the last stage the first pair runs
 * F0 then B1 apart); p - s - 1 times B1 (F1 & B0); s + 1 times B1 B0, whose
 * W are kept back from the middle one on; p - s - 1 times W B0 (kept
 * back); s + 1 times W.  Needs m >= 2p. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A stage's order as it is built. */
typedef struct order {
    wl_step *a;
    int n;
    int f[2], b[2];        /* forwards and backwards issued per chunk */
    int *kept[2];          /* per chunk: micro-batches of split B whose W is still to run, oldest first */
    int kept_head[2], kept_n[2];
    uint8_t *fifo;         /* chunks of the kept-back B, oldest first, for order_w_oldest */
    int fifo_head, fifo_n;
} order;

static void order_init(order *o, int m, int chunks)
{
    o->a = sim_xcalloc((size_t)m * chunks * 3, sizeof *o->a);
    for (int c = 0; c < 2; c++) o->kept[c] = sim_xcalloc((size_t)m, sizeof *o->kept[c]);
    o->fifo = sim_xcalloc((size_t)m * 2, sizeof *o->fifo);
}

static wl_step *order_done(order *o, int *n)
{
    for (int c = 0; c < 2; c++) free(o->kept[c]);
    free(o->fifo);
    *n = o->n;
    return o->a;
}

static void order_f(order *o, int chunk, bool paired)
{
    o->a[o->n++] = (wl_step){WL_PASS_F, (uint8_t)chunk, 0, paired, o->f[chunk]++};
}

/* A backward of `chunk`; split keeps its W back for order_w_* . */
static void order_b(order *o, int chunk, bool split)
{
    int micro = o->b[chunk]++;
    o->a[o->n++] = (wl_step){WL_PASS_B, (uint8_t)chunk, split, 0, micro};
    if (!split) return;
    o->kept[chunk][o->kept_n[chunk]++] = micro;
    o->fifo[o->fifo_n++] = (uint8_t)chunk;
}

/* The W of the oldest kept-back B of `chunk` (order_w_chunk does not
 * consume the shared queue: a schedule uses one kind or the other). */
static void order_w_chunk(order *o, int chunk)
{
    assert(o->kept_head[chunk] < o->kept_n[chunk]);
    int micro = o->kept[chunk][o->kept_head[chunk]++];
    o->a[o->n++] = (wl_step){WL_PASS_W, (uint8_t)chunk, 0, 0, micro};
}

/* The W of the oldest kept-back B of any chunk. */
static void order_w_oldest(order *o)
{
    assert(o->fifo_head < o->fifo_n);
    order_w_chunk(o, o->fifo[o->fifo_head++]);
}

static wl_step virtual_step(const cfg_strategy *s, int k, bool backward)
{
    int pp = s->pp, v = s->vpp;
    wl_step st = {0};
    int chunk = (k / pp) % v;
    st.pass = backward ? WL_PASS_B : WL_PASS_F;
    st.chunk = (uint8_t)(backward ? v - 1 - chunk : chunk);
    st.micro = (k / (pp * v)) * pp + k % pp;
    return st;
}

/* GPipe, 1F1B and interleaved 1F1B. */
static void one_f_one_b(const cfg_strategy *s, int stage, int m, order *o)
{
    int v = s->schedule == CFG_SCHED_INTERLEAVED ? s->vpp : 1;
    int total = m * v;
    if (s->schedule == CFG_SCHED_GPIPE) {
        for (int i = 0; i < m; i++) order_f(o, 0, false);
        for (int i = 0; i < m; i++) order_b(o, 0, false);
        return;
    }
    int warmup;
    bool pairs = cfg_ep_overlap_1f1b(s);
    if (s->schedule == CFG_SCHED_INTERLEAVED)
        warmup = (s->pp - stage - 1) * 2 + (v - 1) * s->pp;
    else
        warmup = s->pp - stage - 1;
    warmup += pairs; /* the paired F and B then belong to different micro-batches */
    if (warmup > total) warmup = total;

    cfg_strategy one = *s;
    one.vpp = v;
    int f = 0, b = 0;
    for (; f < warmup; f++) o->a[o->n++] = virtual_step(&one, f, false);
    while (f < total) {
        wl_step st = virtual_step(&one, f++, false);
        st.paired = pairs;
        o->a[o->n++] = st;
        o->a[o->n++] = virtual_step(&one, b++, true);
    }
    while (b < total) o->a[o->n++] = virtual_step(&one, b++, true);
}

static void zb_h1(int p, int s, int m, order *o)
{
    int warmup = p - s - 1 < m ? p - s - 1 : m;
    for (int i = 0; i < warmup; i++) order_f(o, 0, false);
    for (int i = 0; i < s && o->f[0] < m; i++) {
        order_f(o, 0, false);
        order_b(o, 0, true);
    }
    while (o->f[0] < m) {
        order_f(o, 0, false);
        order_b(o, 0, true);
        order_w_oldest(o);
    }
    while (o->b[0] < m) {
        order_b(o, 0, true);
        order_w_oldest(o);
    }
    while (o->fifo_head < o->fifo_n) order_w_oldest(o);
}

static void zb_v(int p, int s, int m, order *o)
{
    for (int i = 0; i < 2 * (p - s) - 1; i++) order_f(o, 0, false);
    for (int i = 0; i < s; i++) {
        order_f(o, 1, false);
        order_f(o, 0, false);
    }
    for (int i = 0; i < p - s; i++) {
        order_f(o, 1, false);
        order_b(o, 1, true);
        order_w_chunk(o, 1);
    }
    while (o->f[1] < o->f[0] || o->f[0] < m) {
        if (o->f[0] < m) order_f(o, 0, false);
        order_b(o, 0, true);
        order_w_chunk(o, 0);
        order_f(o, 1, false);
        order_b(o, 1, true);
        order_w_chunk(o, 1);
    }
    for (int i = 0; i < s; i++) {
        order_b(o, 0, true);
        order_b(o, 1, true);
    }
    for (int i = 0; i < p - s; i++) {
        order_b(o, 0, true);
        order_w_chunk(o, 0);
    }
    for (int c = 1; c >= 0; c--)
        while (o->kept_head[c] < o->kept_n[c]) order_w_chunk(o, c);
}

static void dualpipe_v(int p, int s, int m, order *o)
{
    for (int i = 0; i < 2 * (p - s - 1); i++) order_f(o, 0, false);
    for (int i = 0; i < s + 1; i++) {
        order_f(o, 0, false);
        order_f(o, 1, false);
    }
    for (int i = 0; i < p - s - 1; i++) {
        order_b(o, 1, true);
        order_w_oldest(o);
        order_f(o, 1, false);
    }
    for (int i = 0; i < m - 2 * p + s + 1; i++) {
        bool apart = i == 0 && s == p - 1; /* the turn of the V: F0 feeds this stage's own B1 */
        order_f(o, 0, !apart);
        order_b(o, 1, false);
        order_f(o, 1, true);
        order_b(o, 0, false);
    }
    for (int i = 0; i < p - s - 1; i++) {
        order_b(o, 1, false);
        order_f(o, 1, true);
        order_b(o, 0, false);
    }
    bool split = false;
    for (int i = 0; i < s + 1; i++) {
        if (i == (s + 1) / 2 && s % 2 == 1) split = true;
        order_b(o, 1, split);
        if (i == (s + 1) / 2 && s % 2 == 0) split = true;
        order_b(o, 0, split);
    }
    for (int i = 0; i < p - s - 1; i++) {
        order_w_oldest(o);
        order_b(o, 0, true);
    }
    while (o->fifo_head < o->fifo_n) order_w_oldest(o);
}

bool wl_schedule_splits_w(const cfg_strategy *s)
{
    return s->schedule == CFG_SCHED_ZB_H1 || s->schedule == CFG_SCHED_ZB_V || s->schedule == CFG_SCHED_DUALPIPE_V;
}

/* With pipeline_flushes k > 1 (torchtitan's and NeMo AutoModel's
 * pipeline per gradient-accumulation step) the schedule of m/k
 * micro-batches runs k times, each filled and drained before the next:
 * flush f holds micro-batches f*m/k .. (f+1)*m/k - 1. */
wl_step *wl_schedule_new(const cfg_strategy *s, int stage, int *n)
{
    int m = cfg_flush_micro_batches(s), flushes = cfg_micro_batches(s) / (m > 0 ? m : 1), one;
    order o = {0};
    order_init(&o, m, cfg_stage_chunks(s));
    switch (s->schedule) {
    case CFG_SCHED_ZB_H1: zb_h1(s->pp, stage, m, &o); break;
    case CFG_SCHED_ZB_V: zb_v(s->pp, stage, m, &o); break;
    case CFG_SCHED_DUALPIPE_V: dualpipe_v(s->pp, stage, m, &o); break;
    default: one_f_one_b(s, stage, m, &o); break;
    }
    wl_step *first = order_done(&o, &one);
    *n = one;
    if (flushes <= 1) return first;
    wl_step *all = sim_xcalloc((size_t)one * (size_t)flushes, sizeof *all);
    for (int f = 0; f < flushes; f++)
        for (int i = 0; i < one; i++) {
            all[f * one + i] = first[i];
            all[f * one + i].micro += f * m;
        }
    free(first);
    *n = one * flushes;
    return all;
}

void wl_schedule_margin_counts(const cfg_strategy *s, int stage, wl_margin_counts *out)
{
    int n, v = cfg_stage_chunks(s), row = v * WL_NPASSES;
    wl_step *o = wl_schedule_new(s, stage, &n);
    out->chunks = v;
    out->bytes = (size_t)(3 * v * row + 2 * v) * sizeof(int);
    out->before_f = sim_xcalloc(1, out->bytes);
    out->after_b = out->before_f + v * row;
    out->after_w = out->after_b + v * row;
    out->cool_b = out->after_w + v * row;
    out->cool_w = out->cool_b + v;
    int last_f = -1;
    for (int i = 0; i < n; i++)
        if (o[i].pass == WL_PASS_F) last_f = i;
    out->cool_steps = n - 1 - last_f;

    /* running counts by (chunk, pass) of the steps passed so far, copied
     * into a chunk's row when its first forward (or last backward or
     * weight-gradient step, walking back) is met */
    int *run = sim_xcalloc((size_t)row, sizeof *run);
    bool *seen = sim_xcalloc((size_t)(3 * v), sizeof *seen);
    for (int i = 0; i < n; i++) {
        const wl_step *st = &o[i];
        if (st->pass == WL_PASS_F && !seen[st->chunk]) {
            seen[st->chunk] = true;
            memcpy(&out->before_f[st->chunk * row], run, (size_t)row * sizeof *run);
        }
        run[st->chunk * WL_NPASSES + st->pass]++;
    }
    memset(run, 0, (size_t)row * sizeof *run);
    int cool = 0;
    for (int i = n - 1; i >= 0; i--) {
        const wl_step *st = &o[i];
        int c = st->chunk;
        bool wgrads = st->pass == WL_PASS_W || (st->pass == WL_PASS_B && !st->split);
        if (st->pass == WL_PASS_B && !seen[v + c]) {
            seen[v + c] = true;
            memcpy(&out->after_b[c * row], run, (size_t)row * sizeof *run);
            out->cool_b[c] = cool;
        }
        if (wgrads && !seen[2 * v + c]) {
            seen[2 * v + c] = true;
            memcpy(&out->after_w[c * row], run, (size_t)row * sizeof *run);
            out->cool_w[c] = cool;
        }
        run[c * WL_NPASSES + st->pass]++;
        cool += i > last_f;
    }
    free(seen);
    free(run);
    free(o);
}

void wl_margin_counts_free(wl_margin_counts *mc)
{
    free(mc->before_f);
    memset(mc, 0, sizeof *mc);
}
