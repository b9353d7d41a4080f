/* test_schedule.c - pipeline schedules: every stage's program runs each
 * pass once and in dependency order (no W before its B), transfers pair up,
 * activations in flight match the model's count, and on a uniform pipeline
 * the simulated bubble of each schedule matches its closed form, as does
 * the analytic estimate. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "cost/cost.h"
#include "model/model.h"
#include "runner/runner.h"
#include "estimate/estimate.h"
#include "workload/workload.h"
#include "workload/internal.h" /* the schedule orders (wl_schedule_new), white-box */
#include "lib/check_run.h"

static const cfg_schedule all_schedules[] = {CFG_SCHED_GPIPE, CFG_SCHED_1F1B,      CFG_SCHED_INTERLEAVED,
                                             CFG_SCHED_ZB_H1, CFG_SCHED_ZB_V, CFG_SCHED_DUALPIPE_V};
#define NSCHED ((int)(sizeof all_schedules / sizeof *all_schedules))

/* DGX H100 nodes made ideal: GEMMs at half of peak whatever their size,
 * no kernel overhead, memory traffic and transfers (nearly) free. */
static cfg_platform flat_platform(int devices)
{
    cfg_platform p;
    sim_err err = {{0}};
    ck_assert_msg(cfg_load_platform("dgx-h100", NULL, devices, &p, &err) == SIM_OK, "%s", err.msg);
    p.peak_flops_per_s = 1e15;
    p.hbm_bytes_per_s = 1e16;
    p.fabric_bytes_per_s = 1e15;
    p.nic_bytes_per_s = 1e14;
    p.fabric_latency_s = p.nic_latency_s = p.spine_latency_s = 0;
    for (int i = 0; i < p.gemm_efficiency.n; i++) p.gemm_efficiency.y[i] = 0.5;
    p.memory_efficiency = p.network_efficiency = 1;
    p.kernel_overhead_s = p.collective_step_s = 0;
    return p;
}

/* pp stages, m micro-batches of one sequence, schedule sch (vpp 2 when
 * interleaved). */
static cfg_strategy pipeline(int pp, int m, cfg_schedule sch)
{
    cfg_strategy s = fx_strategy(1, pp, 1, m);
    s.schedule = sch;
    s.vpp = sch == CFG_SCHED_INTERLEAVED ? 2 : 1;
    return s;
}

/* Whether (pp, m) is a case the schedule takes (as cfg_check rules). */
static bool takes(cfg_schedule sch, int pp, int m)
{
    if (sch == CFG_SCHED_INTERLEAVED) return pp > 1 && m % pp == 0;
    if (sch == CFG_SCHED_ZB_V) return pp > 1 && m >= 2 * pp - 1;
    if (sch == CFG_SCHED_DUALPIPE_V) return pp > 1 && m >= 2 * pp;
    return true;
}

typedef struct plan_fx {
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
    cost_model *c;
    wl_plan *plan;
} plan_fx;

static void plan_up(plan_fx *f, cfg_model m, cfg_strategy s)
{
    sim_err err = {{0}};
    f->m = m;
    f->s = s;
    f->p = flat_platform(cfg_world_size(&s));
    ck_assert_msg(cfg_check(&f->m, &f->p, &f->s, &err) == SIM_OK, "%s", err.msg);
    f->c = cost_new(&f->p, &err);
    ck_assert_ptr_nonnull(f->c);
    ck_assert_int_eq(wl_plan_new(&f->m, &f->p, &f->s, f->c, &f->plan, &err), SIM_OK);
}

static void plan_down(plan_fx *f)
{
    wl_plan_free(f->plan);
    cost_free(f->c);
}

/* Where each pass of each (micro-batch, layer) ran in a stage's program:
 * first and last instruction index of its computes, by pass. */
enum { PF = 0, PB, PW, NP };
typedef struct span {
    long first, last;
    int n;
} span;

/* A transfer: the other stage, the tag, the micro-batch. */
typedef struct xfer {
    int stage, tag, micro;
} xfer;

typedef struct walked {
    int layers, micro;
    span *at;          /* [micro][layer][pass] */
    xfer *sent, *got;  /* in program order */
    int nsent, ngot, cap;
} walked;

static span *at(walked *w, int micro, int layer, int pass)
{
    return &w->at[((size_t)micro * w->layers + layer) * NP + pass];
}

static int pass_of(const wl_instr *in)
{
    if (in->phase == WL_PH_FORWARD) return PF;
    if (in->phase == WL_PH_BACKWARD || in->phase == WL_PH_RECOMPUTE) return PB;
    if (in->phase == WL_PH_WGRAD) return PW;
    return -1;
}

static walked walk_stage(const plan_fx *f, int stage)
{
    walked w;
    memset(&w, 0, sizeof w);
    w.layers = f->m.layers;
    w.micro = cfg_micro_batches(&f->s);
    w.at = calloc((size_t)w.micro * w.layers * NP, sizeof *w.at);
    w.cap = 2 * w.micro * cfg_stage_chunks(&f->s);
    w.sent = calloc((size_t)w.cap, sizeof *w.sent);
    w.got = calloc((size_t)w.cap, sizeof *w.got);
    int rank = stage * wl_strategy_stride(&f->s, CFG_DIM_PP);
    wl_program *p = wl_program_new(f->plan, rank);
    wl_instr in;
    long k = 0;
    while (wl_program_next(p, &in)) {
        k++;
        if (in.op == WL_SEND || in.op == WL_RECV) {
            xfer x = {wl_stage(f->plan, in.peer), in.tag, in.micro};
            /* only interleaving wraps from the last stage to the first */
            ck_assert(abs(x.stage - stage) == 1 || f->s.schedule == CFG_SCHED_INTERLEAVED);
            int *n = in.op == WL_SEND ? &w.nsent : &w.ngot;
            ck_assert_int_lt(*n, w.cap);
            (in.op == WL_SEND ? w.sent : w.got)[(*n)++] = x;
            continue;
        }
        if (in.op != WL_COMPUTE || in.layer < 0 || in.micro < 0) continue;
        int ps = pass_of(&in);
        ck_assert_int_ge(ps, 0);
        span *sp = at(&w, in.micro, in.layer, ps);
        if (!sp->n) sp->first = k;
        sp->last = k;
        sp->n++;
    }
    wl_program_free(p);
    return w;
}

static void walked_free(walked *w)
{
    free(w->at);
    free(w->sent);
    free(w->got);
}

/* The micro-batches stage a sends to stage b on tag t and those b receives
 * from a on t are the same, in the same order (the engine pairs them first
 * in, first out). */
static void check_transfers(const walked *w, int a, int b, int t)
{
    int i = 0, j = 0;
    for (;;) {
        while (i < w[a].nsent && (w[a].sent[i].stage != b || w[a].sent[i].tag != t)) i++;
        while (j < w[b].ngot && (w[b].got[j].stage != a || w[b].got[j].tag != t)) j++;
        if (i == w[a].nsent || j == w[b].ngot) break;
        ck_assert_int_eq(w[a].sent[i].micro, w[b].got[j].micro);
        i++;
        j++;
    }
    ck_assert_msg(i == w[a].nsent && j == w[b].ngot, "stage %d -> %d tag %d: sends and receives differ", a, b, t);
}

/* The stage holding layer l, and whether l and l + 1 are in one chunk run
 * on the same stage (a transfer-free step of the pipeline). */
static int stage_of_layer(const plan_fx *f, int l)
{
    return mdl_layer_stage(&f->m, &f->s, l);
}

START_TEST(test_orders_respect_dependencies)
{
    /* Every stage runs each (micro-batch, layer) it holds once forward and
     * once backward, and once W exactly when the schedule splits the
     * backward; the forward of a layer follows the forward of the layer
     * before it and precedes its backward, which follows the backward of
     * the layer after it, and no W runs before its B.  Each transfer is
     * received by the stage it is sent to, micro-batches in the same
     * order. */
    int pps[] = {1, 2, 4, 8};
    for (int si = 0; si < NSCHED; si++)
        for (int pi = 0; pi < 4; pi++) {
            int pp = pps[pi];
            int ms[] = {1, 3, pp, 2 * pp - 1, 2 * pp, 2 * pp + 3, 3 * pp};
            for (int mi = 0; mi < 7; mi++) {
                cfg_schedule sch = all_schedules[si];
                int m = ms[mi];
                if (!takes(sch, pp, m)) continue;
                plan_fx f;
                plan_up(&f, fx_dense_model(16, 512, 8, 2048, 64, 128), pipeline(pp, m, sch));
                bool split = sch == CFG_SCHED_ZB_H1 || sch == CFG_SCHED_ZB_V || sch == CFG_SCHED_DUALPIPE_V;
                walked *w = calloc((size_t)pp, sizeof *w);
                for (int st = 0; st < pp; st++) w[st] = walk_stage(&f, st);
                for (int st = 0; st < pp; st++)
                    for (int mb = 0; mb < m; mb++)
                        for (int l = 0; l < f.m.layers; l++) {
                            bool mine = stage_of_layer(&f, l) == st;
                            span *F = at(&w[st], mb, l, PF), *B = at(&w[st], mb, l, PB), *W = at(&w[st], mb, l, PW);
                            ck_assert_msg((F->n > 0) == mine && (B->n > 0) == mine,
                                          "%s pp=%d m=%d stage %d: layer %d micro %d", cfg_schedule_name(sch), pp, m,
                                          st, l, mb);
                            ck_assert_int_eq(W->n > 0, mine && split);
                            if (!mine) continue;
                            ck_assert_int_lt(F->last, B->first);
                            if (split) ck_assert_msg(B->last < W->first, "%s: a W before its B",
                                                     cfg_schedule_name(sch));
                            if (l + 1 < f.m.layers && stage_of_layer(&f, l + 1) == st) {
                                ck_assert_int_lt(F->last, at(&w[st], mb, l + 1, PF)->first);
                                ck_assert_int_lt(at(&w[st], mb, l + 1, PB)->last, B->first);
                            }
                        }
                for (int a = 0; a < pp; a++)
                    for (int b = 0; b < pp; b++)
                        for (int t = 0; t < 2; t++)
                            if (a != b) check_transfers(w, a, b, t);
                for (int st = 0; st < pp; st++) walked_free(&w[st]);
                free(w);
                plan_down(&f);
            }
        }
}
END_TEST

/* Peak number of (micro-batch, chunk) pairs a stage's program holds: from
 * the pair's first forward compute to the last compute of its backward and
 * W passes. */
static int program_inflight(const plan_fx *f, int stage)
{
    int v = cfg_stage_chunks(&f->s), m = cfg_micro_batches(&f->s), L = f->m.layers;
    int *chunk_of = calloc((size_t)L, sizeof *chunk_of);
    for (int c = 0; c < v; c++) {
        int first, n = cfg_stage_layers(&f->m, &f->s, stage, c, &first);
        for (int l = first; l < first + n; l++) chunk_of[l] = c;
    }
    long *release = calloc((size_t)m * v, sizeof *release);
    bool *held = calloc((size_t)m * v, sizeof *held);
    int rank = stage * wl_strategy_stride(&f->s, CFG_DIM_PP);
    wl_instr in;
    for (int round = 0; round < 2; round++) {
        wl_program *p = wl_program_new(f->plan, rank);
        long k = 0;
        int now = 0, peak = 0;
        while (wl_program_next(p, &in)) {
            k++;
            if (in.op != WL_COMPUTE || in.layer < 0 || in.micro < 0) continue;
            int id = in.micro * v + chunk_of[in.layer];
            if (round == 0) {
                if (in.phase != WL_PH_FORWARD) release[id] = k;
                continue;
            }
            if (in.phase == WL_PH_FORWARD && !held[id]) {
                held[id] = true;
                if (++now > peak) peak = now;
            }
            if (k == release[id]) now--;
        }
        wl_program_free(p);
        if (round == 1) {
            free(chunk_of);
            free(release);
            free(held);
            return peak;
        }
    }
    return -1;
}

START_TEST(test_inflight_matches_model)
{
    /* The model's in-flight count of each schedule (mdl_inflight_chunks:
     * 1F1B p - s; ZB-H1 p on every stage; ZB-V 2p chunks; DualPipe-V 2p + 1
     * chunks) is what the programs hold at their peak. */
    int pps[] = {2, 4, 8};
    for (int si = 0; si < NSCHED; si++)
        for (int pi = 0; pi < 3; pi++) {
            int pp = pps[pi];
            int ms[] = {2, 2 * pp, 2 * pp + 3, 4 * pp};
            for (int mi = 0; mi < 4; mi++) {
                cfg_schedule sch = all_schedules[si];
                if (!takes(sch, pp, ms[mi])) continue;
                plan_fx f;
                plan_up(&f, fx_dense_model(16, 512, 8, 2048, 64, 128), pipeline(pp, ms[mi], sch));
                for (int st = 0; st < pp; st++)
                    ck_assert_msg(program_inflight(&f, st) == mdl_inflight_chunks(&f.s, st),
                                  "%s pp=%d m=%d stage %d: programs hold %d, the model counts %d",
                                  cfg_schedule_name(sch), pp, ms[mi], st, program_inflight(&f, st),
                                  mdl_inflight_chunks(&f.s, st));
                plan_down(&f);
            }
        }
}
END_TEST

START_TEST(test_v_placement)
{
    /* In a V, stage s holds global chunks s and 2p - 1 - s of the 2p
     * chunks: 16 layers on 4 stages, 2 per chunk. */
    cfg_model m = fx_dense_model(16, 512, 8, 2048, 64, 128);
    cfg_strategy s = pipeline(4, 8, CFG_SCHED_ZB_V);
    ck_assert_int_eq(cfg_stage_chunks(&s), 2);
    for (int st = 0; st < 4; st++) {
        int first;
        ck_assert_int_eq(cfg_stage_layers(&m, &s, st, 0, &first), 2);
        ck_assert_int_eq(first, 2 * st);
        ck_assert_int_eq(cfg_stage_layers(&m, &s, st, 1, &first), 2);
        ck_assert_int_eq(first, 2 * (7 - st));
        for (int c = 0; c < 2; c++) {
            int g = cfg_global_chunk(&s, st, c), back;
            ck_assert_int_eq(cfg_chunk_stage(&s, g, &back), st);
            ck_assert_int_eq(back, c);
        }
    }
    const int stage_of[16] = {0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0};
    for (int l = 0; l < 16; l++) ck_assert_int_eq(mdl_layer_stage(&m, &s, l), stage_of[l]);

    /* the last chunk, with the final norm, the output layer and the loss, is
     * on stage 0: its parameters, its logits buffer and its compute */
    ck_assert_int_eq(cfg_head_stage(&s), 0);
    mdl_held first, last;
    mdl_edge_held(&m, &s, 0, &first);
    mdl_edge_held(&m, &s, 3, &last);
    ck_assert_double_eq(first.params[MDL_PART_OUTPUT], (double)m.vocab * m.hidden);
    ck_assert_double_eq(first.params[MDL_PART_EMBEDDING], (double)m.vocab * m.hidden);
    ck_assert_double_eq(last.params[MDL_PART_OUTPUT] + last.params[MDL_PART_NORMS], 0);
    cfg_model tied = m;
    tied.tied_embeddings = true; /* embedding and output on one stage: no copy */
    mdl_edge_held(&tied, &s, 0, &first);
    ck_assert_double_eq(first.params[MDL_PART_OUTPUT], 0);
    mdl_memory m0, m3;
    mdl_rank_memory(&m, &s, 0, &m0);
    mdl_rank_memory(&m, &s, 3, &m3);
    ck_assert_double_gt(m0.buffers_bytes, m3.buffers_bytes);
    plan_fx f;
    plan_up(&f, m, s);
    for (int st = 0; st < 4; st++) {
        int logits = 0;
        wl_program *p = wl_program_new(f.plan, st);
        wl_instr in;
        while (wl_program_next(p, &in)) logits += in.op == WL_COMPUTE && !strcmp(wl_label_name(in.label), "logits");
        wl_program_free(p);
        ck_assert_int_eq(logits > 0, st == 0);
    }
    plan_down(&f);
    /* tied: the shared weight's gradient is complete after the head's last
     * W, which comes after the embedding's last backward: one sync, then
     * (over 2 data-parallel replicas) */
    cfg_strategy s2 = fx_strategy(2, 4, 1, 8);
    s2.schedule = CFG_SCHED_ZB_V;
    plan_up(&f, tied, s2);
    long k = 0, last_w = -1, edge_sync = -1;
    int edge_syncs = 0;
    wl_program *p = wl_program_new(f.plan, 0);
    wl_instr in;
    while (wl_program_next(p, &in)) {
        k++;
        if (in.op == WL_COMPUTE && in.phase == WL_PH_WGRAD && !strcmp(wl_label_name(in.label), "logits")) last_w = k;
        if (in.op == WL_COLL && in.phase == WL_PH_GRAD_SYNC && in.layer < 0) {
            edge_sync = k;
            edge_syncs++;
        }
    }
    wl_program_free(p);
    plan_down(&f);
    ck_assert_int_eq(edge_syncs, 1);
    ck_assert_int_gt(edge_sync, last_w);
}
END_TEST

/* The uniform pipeline of the bubble checks: 8 stages of 2 layers, 16
 * micro-batches of 32 sequences of 32 tokens, a 16-word vocabulary (the
 * embedding and the head cost next to nothing), no tensor or data
 * parallel: with the flat platform F, B and W of a stage take the same
 * time to a few parts in a thousand (all GEMMs run at the same
 * efficiency; core attention, whose backward costs more, is small at
 * this sequence length). */
enum { UP = 8, UM = 16 };

static cfg_strategy uniform_strategy(cfg_schedule sch)
{
    cfg_strategy s = fx_strategy(1, UP, 1, UM * 32);
    s.micro_batch = 32;
    s.schedule = sch;
    return s;
}

static cfg_model uniform_model(void)
{
    return fx_dense_model(2 * UP, 4096, 32, 16384, 16, 32);
}

START_TEST(test_bubbles_closed_form)
{
    /* T_F, T_B, T_W: the forward, input-gradient and weight-gradient time of
     * one micro-batch on a middle stage, from its program's computes. */
    plan_fx f;
    plan_up(&f, uniform_model(), uniform_strategy(CFG_SCHED_ZB_H1));
    double ph[WL_NPHASES];
    wl_rank_compute_s(f.plan, 3 * wl_strategy_stride(&f.s, CFG_DIM_PP), ph);
    double TF = ph[WL_PH_FORWARD] / UM, TB = ph[WL_PH_BACKWARD] / UM, TW = ph[WL_PH_WGRAD] / UM;
    plan_down(&f);
    ck_assert_double_eq_tol(TF / TW, 1.0, 0.01);
    ck_assert_double_eq_tol(TB / TW, 1.0, 0.01);

    const cfg_schedule sched[4] = {CFG_SCHED_1F1B, CFG_SCHED_ZB_H1, CFG_SCHED_ZB_V, CFG_SCHED_DUALPIPE_V};
    run_case cases[4];
    sim_err err = {{0}};
    for (int i = 0; i < 4; i++) {
        memset(&cases[i], 0, sizeof cases[i]);
        cases[i].model = uniform_model();
        cases[i].platform = flat_platform(UP);
        cases[i].strategy = uniform_strategy(sched[i]);
        ck_assert_msg(cfg_check(&cases[i].model, &cases[i].platform, &cases[i].strategy, &err) == SIM_OK, "%s",
                      err.msg);
    }
    ck_assert_int_eq(runner_simulate_all(cases, 4, 2, NULL, NULL, &err), SIM_OK);
    double bubble[4];
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(cases[i].rc == SIM_OK, "%s", cases[i].msg);
        bubble[i] = cases[i].result.critical.bubble_s;
        /* the analytic estimate closes the same schedule */
        est_estimator *est = est_new(&cases[i].model, &cases[i].platform, &err);
        ck_assert_ptr_nonnull(est);
        est_result e;
        ck_assert_int_eq(est_step(est, &cases[i].strategy, &e, &err), SIM_OK);
        double sim_s = cases[i].result.step_time_s;
        ck_assert_msg(fabs(e.step_s - sim_s) <= 0.001 * sim_s, "%s: estimate %.6g s, simulated %.6g s",
                      cfg_schedule_name(sched[i]), e.step_s, sim_s);
        ck_assert_msg(fabs(e.bubble_s - bubble[i]) <= 0.02 * bubble[i], "%s: estimated bubble %.6g s, simulated %.6g s",
                      cfg_schedule_name(sched[i]), e.bubble_s, bubble[i]);
        est_free(est);
    }

    /* Closed forms, p stages, one chunk per stage of times T_F, T_B, T_W
     * (a V's chunks take half of each):
     *  1F1B (Narayanan et al. SC'21; Qi et al. ICLR'24 Table 3):
     *    (p-1)(T_F + T_B + T_W), (p-1)/m of the ideal m(T_F + T_B + T_W);
     *  ZB-H1 (Qi et al. ICLR'24 section 2.1 and Table 3): (p-1)(T_F + T_B - T_W),
     *    a third of 1F1B's when the three are equal;
     *  ZB-V (same paper, README of sail-sg/zero-bubble-pipeline-parallelism:
     *    no bubble within each stage's busy span when T_F = T_B = T_W): a
     *    step that starts all stages together keeps the fill of the V, the
     *    last stage waits for p-1 chunk forwards: (p-1) T_F / 2;
     *  DualPipe-V (DeepSeek-V3 report Table 2, README of deepseek-ai/DualPipe):
     *    (PP/2 - 1)(F&B + B - 3W) with PP = 2p chunks of F = T_F/2, full
     *    backward B = (T_B + T_W)/2, W = T_W/2, and F&B = F + B without
     *    communication to hide: (p-1)(T_F + 2 T_B - T_W)/2, ZB-H1's when the
     *    three are equal. */
    double p1 = UP - 1;
    double closed[4] = {p1 * (TF + TB + TW), p1 * (TF + TB - TW), p1 * TF / 2, p1 * (TF + 2 * TB - TW) / 2};
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabs(bubble[i] - closed[i]) <= 0.02 * closed[i], "%s: bubble %.6g s, closed form %.6g s",
                      cfg_schedule_name(sched[i]), bubble[i], closed[i]);
    /* 1F1B's bubble is (p-1)/m of the ideal step */
    double ideal = UM * (TF + TB + TW);
    ck_assert_double_eq_tol(bubble[0] / ideal, p1 / UM, 0.02 * p1 / UM);
    /* ZB-H1: a third of 1F1B's; the W passes fill exactly the 2(p-1) T_W of
     * 1F1B's bubble they can */
    ck_assert_double_eq_tol(bubble[1] / bubble[0], 1.0 / 3, 0.02 / 3);
    ck_assert_double_eq_tol(bubble[0] - bubble[1], 2 * p1 * TW, 0.02 * 2 * p1 * TW);
    /* ZB-V less still; DualPipe-V, with nothing to overlap, as ZB-H1 */
    ck_assert_double_lt(bubble[2], 0.6 * bubble[1]);
    ck_assert_double_lt(bubble[3], bubble[0]);
    ck_assert_double_eq_tol(bubble[3], bubble[1], 0.02 * bubble[1]);
}
END_TEST

START_TEST(test_dualpipe_overlaps_expert_all_to_all)
{
    /* DualPipe-V's overlapped pairs run each expert all-to-all on the EP
     * stream while the other micro-batch computes (its steps outside the
     * pairs keep them blocking); the other schedules keep them blocking. */
    for (int k = 0; k < 2; k++) {
        cfg_model m = fx_dense_model(8, 512, 8, 2048, 64, 128);
        fx_moe(&m, 4, 2, 1024, 0, 0, 0, 1);
        cfg_strategy s = fx_strategy(2, 2, 1, 8);
        s.ep = 2;
        s.schedule = k ? CFG_SCHED_DUALPIPE_V : CFG_SCHED_ZB_V;
        plan_fx f;
        plan_up(&f, m, s);
        /* each all-to-all on the EP stream: its micro-batch, and whether a
         * compute of another one ran before it was waited for */
        enum { MAXA2A = 4096 };
        static int micro_of[MAXA2A];
        static bool covered[MAXA2A];
        int issued = 0, done = 0, hidden = 0;
        wl_program *p = wl_program_new(f.plan, 0);
        wl_instr in;
        while (wl_program_next(p, &in)) {
            if (in.op == WL_COLL && in.group == WL_G_EP) {
                ck_assert(in.stream == WL_S_MAIN || (k && in.stream == WL_S_EP));
                if (in.stream == WL_S_EP) {
                    ck_assert_int_lt(issued, MAXA2A);
                    micro_of[issued] = in.micro;
                    covered[issued++] = false;
                }
            } else if (in.op == WL_COMPUTE) {
                for (int i = done; i < issued; i++) covered[i] |= in.micro != micro_of[i];
            } else if (in.op == WL_WAIT && in.stream == WL_S_EP) {
                for (; done < (int)in.seq; done++) hidden += covered[done];
            }
        }
        ck_assert_int_eq(done, issued);
        wl_program_free(p);
        plan_down(&f);
        if (!k) {
            ck_assert_int_eq(issued, 0);
            continue;
        }
        ck_assert_int_gt(issued, 0);
        ck_assert_int_eq(hidden, issued);
    }
}
END_TEST

/* Interleaved 1F1B, pp 2, vpp 2, 2 micro-batches: stage 0 warms up with
 * all four forwards (F0 F0 F1 F1), then B1 B1 B0 B0. Chunk 1's first
 * forward follows two chunk-0 forwards; after its last backward come the
 * two chunk-0 backwards, in the cool-down; chunk 0 ends the stage. */
START_TEST(test_margin_counts_by_hand)
{
    cfg_strategy s = fx_strategy(1, 2, 1, 2);
    s.schedule = CFG_SCHED_INTERLEAVED;
    s.vpp = 2;
    wl_margin_counts mc;
    wl_schedule_margin_counts(&s, 0, &mc);
    enum { R = 2 * WL_NPASSES };
    ck_assert_int_eq(mc.chunks, 2);
    ck_assert_int_eq(mc.cool_steps, 4);
    int want_before1[R] = {[WL_PASS_F] = 2}, want_after1[R] = {[WL_PASS_B] = 2}, zero[R] = {0};
    ck_assert_mem_eq(&mc.before_f[0 * R], zero, sizeof zero);
    ck_assert_mem_eq(&mc.before_f[1 * R], want_before1, sizeof want_before1);
    ck_assert_mem_eq(&mc.after_b[1 * R], want_after1, sizeof want_after1);
    ck_assert_mem_eq(&mc.after_w[1 * R], want_after1, sizeof want_after1);
    ck_assert_mem_eq(&mc.after_b[0 * R], zero, sizeof zero);
    ck_assert_int_eq(mc.cool_b[1], 2);
    ck_assert_int_eq(mc.cool_w[0], 0);
    wl_margin_counts_free(&mc);

    /* ZB-H1, pp 2, 2 micro-batches, stage 0: F F B W B W (p - s - 1 = 1
     * forward, then F B, then B W, then the last W): the weight gradients
     * end the stage, its last backward is followed by one W */
    s = fx_strategy(1, 2, 1, 2);
    s.schedule = CFG_SCHED_ZB_H1;
    wl_schedule_margin_counts(&s, 0, &mc);
    int want_w[WL_NPASSES] = {[WL_PASS_W] = 1}, none[WL_NPASSES] = {0};
    ck_assert_mem_eq(mc.after_b, want_w, sizeof want_w);
    ck_assert_mem_eq(mc.after_w, none, sizeof none);
    wl_margin_counts_free(&mc);
}
END_TEST

/* Overlapped DP traffic at the step's edges, as the estimate places it in
 * the schedule's order (wl_schedule_margin_counts): each layer's gradient
 * reduction starts when its last weight gradients are done, so with
 * interleaved chunks the first chunks' reductions run beside the later
 * chunks' cool-down; ZeRO-1's parameter gathers run beside the first
 * forwards.  dp 2 over a slow fabric, pp 4, 16 layers: a stage's
 * reductions take about a quarter of the step.  The estimate's exposed DP
 * time is within 4 % of the step of the simulation's for every schedule
 * (with the window of one micro-batch's backward it was 5-12 % too high
 * with interleaved chunks and DualPipe-V); its step within 6 % (it
 * leaves out contention, here with the pipeline transfers). */
START_TEST(test_overlapped_dp_in_schedule_order)
{
    const struct {
        cfg_schedule sch;
        int vpp, zero;
    } cases[] = {{CFG_SCHED_1F1B, 1, 0},        {CFG_SCHED_INTERLEAVED, 2, 0}, {CFG_SCHED_INTERLEAVED, 4, 0},
                 {CFG_SCHED_INTERLEAVED, 4, 1}, {CFG_SCHED_ZB_H1, 1, 0},       {CFG_SCHED_ZB_V, 1, 0},
                 {CFG_SCHED_DUALPIPE_V, 1, 1}};
    enum { N = sizeof cases / sizeof cases[0] };
    run_case rc[N];
    sim_err err = {{0}};
    for (int i = 0; i < N; i++) {
        memset(&rc[i], 0, sizeof rc[i]);
        rc[i].model = fx_dense_model(16, 2048, 16, 8192, 16, 512);
        rc[i].platform = flat_platform(8);
        rc[i].platform.fabric_bytes_per_s = 1e11;
        cfg_strategy s = fx_strategy(2, 4, 1, 16);
        s.schedule = cases[i].sch;
        s.vpp = cases[i].vpp;
        s.zero = cases[i].zero;
        s.overlap_param_gather = cases[i].zero > 0;
        rc[i].strategy = s;
        ck_assert_msg(cfg_check(&rc[i].model, &rc[i].platform, &rc[i].strategy, &err) == SIM_OK, "%s", err.msg);
    }
    ck_assert_int_eq(runner_simulate_all(rc, N, 2, NULL, NULL, &err), SIM_OK);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(rc[i].rc == SIM_OK, "%s", rc[i].msg);
        est_estimator *est = est_new(&rc[i].model, &rc[i].platform, &err);
        ck_assert_ptr_nonnull(est);
        est_result e;
        ck_assert_int_eq(est_step(est, &rc[i].strategy, &e, &err), SIM_OK);
        est_free(est);
        const eng_result *r = &rc[i].result;
        double sim_dp = r->critical.exposed_comm_s[WL_DIM_DP], step = r->step_time_s;
        const char *name = cfg_schedule_name(cases[i].sch);
        if (getenv("HEPTASIM_TEST_VERBOSE"))
            fprintf(stderr,
                    "%s vpp %d zero %d: step %.6g est %.6g | dp %.6g est %.6g | in flight %.6g | bubble %.6g est "
                    "%.6g | pp %.6g est %.6g\n",
                    name, cases[i].vpp, cases[i].zero, step, e.step_s, sim_dp, e.exposed_s[WL_DIM_DP],
                    r->critical.comm_s[WL_DIM_DP], r->critical.bubble_s, e.bubble_s,
                    r->critical.exposed_comm_s[WL_DIM_PP], e.exposed_s[WL_DIM_PP]);
        ck_assert_msg(fabs(e.exposed_s[WL_DIM_DP] - sim_dp) <= 0.04 * step, "%s vpp %d: estimated DP %.6g s, simulated %.6g s",
                      name, cases[i].vpp, e.exposed_s[WL_DIM_DP], sim_dp);
        ck_assert_msg(fabs(e.step_s - step) <= 0.06 * step, "%s vpp %d: estimate %.6g s, simulated %.6g s", name,
                      cases[i].vpp, e.step_s, step);
    }
}
END_TEST

/* pp stages, m micro-batches per replica, 2 replicas, experts spread over
 * both (ep 2), schedule sch with vpp v, and Megatron-Core's paired 1F1B
 * (overlap_ep_comm) when `pairs`. */
static cfg_strategy paired(int pp, int v, int m, bool pairs)
{
    cfg_strategy s = fx_strategy(2, pp, 1, m);
    s.ep = 2;
    s.schedule = v > 1 ? CFG_SCHED_INTERLEAVED : CFG_SCHED_1F1B;
    s.vpp = v;
    s.overlap_ep_comm = pairs;
    return s;
}

static cfg_model small_moe(void)
{
    cfg_model m = fx_dense_model(16, 512, 8, 2048, 64, 128);
    fx_moe(&m, 4, 2, 1024, 0, 0, 0, 1);
    return m;
}

START_TEST(test_paired_1f1b_steady_only)
{
    /* Megatron-Core's combined 1F1B (pipeline_parallel/combined_1f1b.py):
     * one more warm-up forward than interleaved 1F1B's (pp - s - 1)*2 +
     * (v - 1)*pp, or than pp 1's none; then every steady forward paired with
     * the backward after it, whose own forward ran in an earlier step; the
     * cool-down unpaired.  At pp 1: F, m - 1 times (F & B), B.  Off, or with
     * ep 1, the order is 1F1B's, unpaired. */
    const int cfgs[][3] = {{2, 2, 4}, {4, 2, 8}, {4, 4, 12}, {2, 2, 2}, {1, 1, 5}, {1, 1, 1}};
    for (size_t ci = 0; ci < sizeof cfgs / sizeof *cfgs; ci++) {
        int pp = cfgs[ci][0], v = cfgs[ci][1], m = cfgs[ci][2], total = m * v;
        for (int st = 0; st < pp; st++) {
            cfg_strategy s = paired(pp, v, m, true), off = paired(pp, v, m, false), one = s;
            one.ep = 1;
            int n, noff, none;
            wl_step *o = wl_schedule_new(&s, st, &n);
            wl_step *b = wl_schedule_new(&off, st, &noff);
            wl_step *e = wl_schedule_new(&one, st, &none);
            ck_assert_int_eq(n, 2 * total);
            ck_assert_int_eq(noff, n);
            ck_assert_int_eq(none, n);
            ck_assert_mem_eq(e, b, (size_t)n * sizeof *b);
            for (int i = 0; i < n; i++) ck_assert(!b[i].paired);
            int warm = (v > 1 ? (pp - st - 1) * 2 + (v - 1) * pp : pp - st - 1) + 1;
            if (warm > total) warm = total;
            int i = 0, npairs = 0;
            for (; i < warm; i++) ck_assert(o[i].pass == WL_PASS_F && !o[i].paired);
            for (; i < n && o[i].pass == WL_PASS_F; i += 2) {
                ck_assert_msg(o[i].paired, "pp %d v %d m %d stage %d step %d: a steady forward unpaired", pp, v, m,
                              st, i);
                ck_assert_int_eq(o[i + 1].pass, WL_PASS_B);
                ck_assert(!o[i + 1].split);
                int own = -1; /* the step that ran the backward's forward */
                for (int j = 0; j < i; j++)
                    if (o[j].pass == WL_PASS_F && o[j].chunk == o[i + 1].chunk && o[j].micro == o[i + 1].micro)
                        own = j;
                ck_assert_int_ge(own, 0);
                npairs++;
            }
            ck_assert_int_eq(npairs, total - warm);
            for (; i < n; i++) ck_assert(o[i].pass == WL_PASS_B && !o[i].paired);
            if (pp == 1 && m > 1) ck_assert_int_eq(npairs, m - 1);
            free(o);
            free(b);
            free(e);
        }
    }
}
END_TEST

START_TEST(test_paired_1f1b_programs)
{
    /* The programs of the paired 1F1B run each pass once in dependency
     * order and their transfers pair up; they hold one more chunk at the
     * peak than 1F1B (mdl_inflight_chunks counts it); every expert
     * all-to-all on the EP stream belongs to a pair and is waited for after
     * a compute of the other micro-batch; those outside the pairs stay
     * blocking. */
    const int cfgs[][3] = {{2, 2, 4}, {4, 2, 8}, {1, 1, 4}};
    for (size_t ci = 0; ci < sizeof cfgs / sizeof *cfgs; ci++) {
        int pp = cfgs[ci][0], v = cfgs[ci][1], m = cfgs[ci][2];
        plan_fx f, g;
        plan_up(&f, small_moe(), paired(pp, v, m, true));
        plan_up(&g, small_moe(), paired(pp, v, m, false));
        walked *w = calloc((size_t)pp, sizeof *w);
        for (int st = 0; st < pp; st++) w[st] = walk_stage(&f, st);
        for (int st = 0; st < pp; st++) {
            ck_assert_int_eq(program_inflight(&f, st), mdl_inflight_chunks(&f.s, st));
            ck_assert_int_eq(program_inflight(&f, st), program_inflight(&g, st) + 1 > m * v ? m * v
                                                                                            : program_inflight(&g, st) + 1);
            for (int mb = 0; mb < m; mb++)
                for (int l = 0; l < f.m.layers; l++) {
                    if (stage_of_layer(&f, l) != st) continue;
                    span *F = at(&w[st], mb, l, PF), *B = at(&w[st], mb, l, PB);
                    ck_assert(F->n > 0 && B->n > 0);
                    ck_assert_int_lt(F->last, B->first);
                    if (l + 1 < f.m.layers && stage_of_layer(&f, l + 1) == st) {
                        ck_assert_int_lt(F->last, at(&w[st], mb, l + 1, PF)->first);
                        ck_assert_int_lt(at(&w[st], mb, l + 1, PB)->last, B->first);
                    }
                }
        }
        for (int a = 0; a < pp; a++)
            for (int b = 0; b < pp; b++)
                for (int t = 0; t < 2; t++)
                    if (a != b) check_transfers(w, a, b, t);
        for (int st = 0; st < pp; st++) walked_free(&w[st]);
        free(w);

        enum { MAXA2A = 8192 };
        static int micro_of[MAXA2A];
        static bool covered[MAXA2A];
        for (int st = 0; st < pp; st++) {
            int issued = 0, done = 0, hidden = 0, blocking = 0;
            wl_program *p = wl_program_new(f.plan, st * wl_strategy_stride(&f.s, CFG_DIM_PP));
            wl_instr in;
            while (wl_program_next(p, &in)) {
                if (in.op == WL_COLL && in.group == WL_G_EP) {
                    if (in.stream == WL_S_MAIN) {
                        blocking++;
                        continue;
                    }
                    ck_assert_int_eq(in.stream, WL_S_EP);
                    ck_assert_int_lt(issued, MAXA2A);
                    micro_of[issued] = in.micro;
                    covered[issued++] = false;
                } else if (in.op == WL_COMPUTE) {
                    for (int i = done; i < issued; i++) covered[i] |= in.micro != micro_of[i];
                } else if (in.op == WL_WAIT && in.stream == WL_S_EP) {
                    for (; done < (int)in.seq; done++) hidden += covered[done];
                }
            }
            wl_program_free(p);
            ck_assert_int_eq(done, issued);
            /* two all-to-alls per MoE layer and pass: the pairs' on the EP
             * stream, the warm-up's and cool-down's blocking */
            int layers = cfg_stage_layer_total(&f.m, &f.s, st), pairs = 0, n;
            wl_step *o = wl_schedule_new(&f.s, st, &n);
            for (int i = 0; i < n; i++) pairs += o[i].paired;
            free(o);
            int per_chunk = 2 * layers / v;
            ck_assert_int_eq(issued, 2 * pairs * per_chunk);
            ck_assert_int_eq(blocking, (2 * m * v - 2 * pairs) * per_chunk);
            ck_assert_int_gt(issued, 0);
            /* the last all-to-all of a pair's second thread has nothing
             * left to hide behind once the first thread has ended */
            ck_assert_int_ge(hidden, issued - 2 * pairs);
        }
        plan_down(&f);
        plan_down(&g);
    }
}
END_TEST

START_TEST(test_paired_1f1b_hides_ep_comm)
{
    /* With the expert all-to-all made slow (a fabric of 100 GB/s), the
     * paired 1F1B's step is shorter than 1F1B's, by at most the EP
     * communication 1F1B exposes; the analytic estimate follows both within
     * 10 % and ranks them the same way.  With ep 1 overlap_ep_comm changes
     * nothing: the same step, exactly, and the same estimate. */
    enum { N = 6 };
    const int cfgs[3][3] = {{2, 2, 8}, {1, 1, 8}, {2, 2, 8}};
    run_case rc[N];
    sim_err err = {{0}};
    for (int i = 0; i < N; i++) {
        const int *c = cfgs[i / 2];
        memset(&rc[i], 0, sizeof rc[i]);
        rc[i].model = small_moe();
        rc[i].strategy = paired(c[0], c[1], c[2], i % 2 == 1);
        if (i >= 4) rc[i].strategy.ep = 1;
        rc[i].platform = flat_platform(cfg_world_size(&rc[i].strategy));
        rc[i].platform.fabric_bytes_per_s = 1e11;
        rc[i].platform.fabric_latency_s = 2e-6;
        ck_assert_msg(cfg_check(&rc[i].model, &rc[i].platform, &rc[i].strategy, &err) == SIM_OK, "%s", err.msg);
    }
    ck_assert_int_eq(runner_simulate_all(rc, N, 2, NULL, NULL, &err), SIM_OK);
    double est[N];
    for (int i = 0; i < N; i++) {
        ck_assert_msg(rc[i].rc == SIM_OK, "%s", rc[i].msg);
        est_estimator *e = est_new(&rc[i].model, &rc[i].platform, &err);
        ck_assert_ptr_nonnull(e);
        est_result r;
        ck_assert_int_eq(est_step(e, &rc[i].strategy, &r, &err), SIM_OK);
        est_free(e);
        est[i] = r.step_s;
        if (getenv("HEPTASIM_TEST_VERBOSE"))
            fprintf(stderr, "case %d: step %.6g est %.6g ep exposed %.6g est %.6g\n", i, rc[i].result.step_time_s,
                    est[i], rc[i].result.critical.exposed_comm_s[WL_DIM_EP], r.exposed_s[WL_DIM_EP]);
        double sim = rc[i].result.step_time_s;
        ck_assert_msg(fabs(est[i] - sim) <= 0.10 * sim, "case %d: estimate %.6g s, simulated %.6g s", i, est[i], sim);
    }
    for (int k = 0; k < 2; k++) {
        const eng_result *off = &rc[2 * k].result, *on = &rc[2 * k + 1].result;
        double ep_off = off->critical.exposed_comm_s[WL_DIM_EP];
        ck_assert_double_gt(ep_off, 0.2 * off->step_time_s); /* the all-to-all matters */
        ck_assert_double_lt(on->step_time_s, off->step_time_s - 0.05 * ep_off);
        ck_assert_double_le(off->step_time_s - on->step_time_s, ep_off);
        ck_assert_double_lt(on->critical.exposed_comm_s[WL_DIM_EP], ep_off);
        ck_assert_double_lt(est[2 * k + 1], est[2 * k]);
    }
    ck_assert_double_eq(rc[4].result.step_time_s, rc[5].result.step_time_s);
    ck_assert_double_eq(est[4], est[5]);
}
END_TEST

START_TEST(test_loss_only_virtual_stage)
{
    /* A layout whose last virtual stage holds only the MTP layer and the
     * loss ("mL"), as Megatron-Core's DeepSeek-V3 H100 layout
     * "Et|(tt|)*30mL" does: each stage's program runs its layers, the
     * head-only chunk computes exactly the head (output layer, MTP and
     * loss) once per micro-batch and pass, the transfers pair up; the
     * stage's memory holds the head's parameters and no layer's; the
     * layers' compute summed over the stages is that of the layout that
     * puts the head with the last layers ("Et|tt|tt|tmL" over the same
     * pp 2 x vpp 2); and the estimate follows the simulated step. */
    cfg_model m = fx_dense_model(5, 512, 8, 2048, 64, 128);
    m.mtp_layers = 1;
    const char *lay[2] = {"Et|tt|tt|mL", "Et|tt|tt|tmL"};
    cfg_model m6 = m;
    m6.layers = 6;
    cfg_model models[2] = {m, m6};
    double layer_s[2] = {0, 0}, head_s[2] = {0, 0};
    run_case rc[2];
    sim_err err = {{0}};
    for (int k = 0; k < 2; k++) {
        cfg_strategy s = pipeline(2, 4, CFG_SCHED_INTERLEAVED);
        sim_strlcpy(s.pipeline_layout, lay[k], sizeof s.pipeline_layout);
        plan_fx f;
        plan_up(&f, models[k], s);
        int first;
        ck_assert_int_eq(cfg_stage_layers(&f.m, &f.s, 1, 1, &first), k); /* virtual stage 3: 0 or 1 layer */
        walked w[2] = {walk_stage(&f, 0), walk_stage(&f, 1)};
        for (int a = 0; a < 2; a++)
            for (int t = 0; t < 2; t++) check_transfers(w, a, 1 - a, t);
        walked_free(&w[0]);
        walked_free(&w[1]);
        for (int st = 0; st < 2; st++) {
            wl_program *p = wl_program_new(f.plan, st * wl_strategy_stride(&f.s, CFG_DIM_PP));
            wl_instr in;
            while (wl_program_next(p, &in)) {
                if (in.op != WL_COMPUTE || in.micro < 0) continue;
                if (in.layer >= 0 && in.layer < 5) layer_s[k] += in.seconds;
                if (in.layer < 0 && st == 1) head_s[k] += in.seconds;
            }
            wl_program_free(p);
        }
        /* the head-only stage's memory: the head's parameters besides its
         * layers' (none in chunk 1 of the "mL" layout) */
        mdl_memory mem;
        mdl_rank_memory(&f.m, &f.s, 1, &mem);
        mdl_held eh;
        mdl_edge_held(&f.m, &f.s, 1, &eh);
        double edge = mdl_held_params(&eh, MDL_SYNC_DP) + mdl_held_params(&eh, MDL_SYNC_EDP), layers = 0;
        for (int c = 0; c < 2; c++) {
            int n = cfg_stage_layers(&f.m, &f.s, 1, c, &first);
            for (int l = first; l < first + n; l++) {
                mdl_held h;
                mdl_layer_held(&f.m, &f.s, cfg_is_moe_layer(&f.m, l), &h);
                layers += mdl_held_params(&h, MDL_SYNC_DP) + mdl_held_params(&h, MDL_SYNC_EDP);
            }
        }
        ck_assert_double_eq_tol(mem.params, edge + layers, 1e-9 * mem.params);
        if (k == 0) ck_assert_double_eq_tol(mem.params, edge + 2 * layers / 2, 1e-9 * mem.params);
        memset(&rc[k], 0, sizeof rc[k]);
        rc[k].model = f.m;
        rc[k].platform = f.p;
        rc[k].strategy = f.s;
        plan_down(&f);
    }
    /* layers 0-4 and the head run the same compute in both layouts */
    ck_assert_double_eq_tol(layer_s[0], layer_s[1], 1e-9 * layer_s[1]);
    ck_assert_double_eq_tol(head_s[0], head_s[1], 1e-9 * head_s[1]);
    ck_assert_int_eq(runner_simulate_all(rc, 2, 2, NULL, NULL, &err), SIM_OK);
    for (int k = 0; k < 2; k++) {
        ck_assert_msg(rc[k].rc == SIM_OK, "%s", rc[k].msg);
        est_estimator *e = est_new(&rc[k].model, &rc[k].platform, &err);
        ck_assert_ptr_nonnull(e);
        est_result r;
        ck_assert_int_eq(est_step(e, &rc[k].strategy, &r, &err), SIM_OK);
        est_free(e);
        double sim = rc[k].result.step_time_s;
        ck_assert_msg(fabs(r.step_s - sim) <= 0.06 * sim, "%s: estimate %.6g s, simulated %.6g s", lay[k], r.step_s,
                      sim);
    }
    /* one layer fewer on the last stage (5 of 6): no longer a step */
    ck_assert_double_lt(rc[0].result.step_time_s, rc[1].result.step_time_s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_orders_respect_dependencies);
    tcase_add_test(tc, test_inflight_matches_model);
    tcase_add_test(tc, test_v_placement);
    tcase_add_test(tc, test_bubbles_closed_form);
    tcase_add_test(tc, test_dualpipe_overlaps_expert_all_to_all);
    tcase_add_test(tc, test_margin_counts_by_hand);
    tcase_add_test(tc, test_overlapped_dp_in_schedule_order);
    tcase_add_test(tc, test_paired_1f1b_steady_only);
    tcase_add_test(tc, test_paired_1f1b_programs);
    tcase_add_test(tc, test_paired_1f1b_hides_ep_comm);
    tcase_add_test(tc, test_loss_only_virtual_stage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
