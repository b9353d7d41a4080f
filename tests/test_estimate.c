/* test_estimate.c - the contention-free replay against the engine: on
 * programs of every 7D kind where no two flows share a link at the same
 * time, est_replay and eng_run (with and without TP symmetry) give the
 * same step time to 1e-9, because both play net's phases; and the replay
 * refuses programs that do not match instead of hanging. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost/cost.h"
#include "config/keys.h"
#include "estimate/estimate.h"
#include "fixtures.h"
#include "runner/runner.h"
#include "workload/workload.h"
#include "lib/check_run.h"

/* 4 layers, hidden 1024, 16 heads, seq 1024: small steps that simulate in
 * milliseconds. */
static cfg_model small_model(void)
{
    return fx_dense_model(4, 1024, 16, 4096, 32000, 1024);
}

/* The replay's step time of (m, p, s), checked first. */
static double replay_step(const cfg_model *m, const cfg_platform *p, cfg_strategy *s, est_replay_result *res)
{
    sim_err err = {{0}};
    ck_assert_msg(cfg_check(m, p, s, &err) == SIM_OK, "%s", err.msg);
    cost_model *c = cost_new(p, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    wl_plan *plan = NULL;
    ck_assert_msg(wl_plan_new(m, p, s, c, &plan, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(est_replay(p, plan, res, &err) == SIM_OK, "%s", err.msg);
    wl_plan_free(plan);
    cost_free(c);
    return res->step_s;
}

/* Simulates (m, p, s) with symmetry TP and none (child processes) and
 * returns the larger relative gap between them and the replay; perturb
 * (seconds) is added to the replay's time, to see the check fail. */
static double replay_gap(const char *what, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s0,
                         double perturb)
{
    est_replay_result rr;
    cfg_strategy sc = *s0;
    double rep = replay_step(m, p, &sc, &rr) + perturb;
    eng_options opt[2];
    memset(opt, 0, sizeof opt);
    opt[0].symmetry = ENG_SYM_TP;
    opt[1].symmetry = ENG_SYM_NONE;
    run_case c[2];
    for (int i = 0; i < 2; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].model = *m;
        c[i].platform = *p;
        c[i].strategy = sc;
        c[i].options = &opt[i];
    }
    sim_err err = {{0}};
    ck_assert_msg(runner_simulate_all(c, 2, 2, NULL, NULL, &err) == SIM_OK, "%s", err.msg);
    double worst = 0.0, fast = NAN;
    if (getenv("HEPTASIM_TEST_VERBOSE")) {
        est_estimator *e = est_new(m, p, &err);
        est_result er;
        if (e && est_step(e, &sc, &er, &err) == SIM_OK) fast = er.step_s;
        est_free(e);
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_msg(c[i].rc == SIM_OK, "%s: %s", what, c[i].msg);
        double eng = c[i].result.step_time_s, gap = fabs(rep - eng) / eng;
        if (getenv("HEPTASIM_TEST_VERBOSE"))
            fprintf(stderr, "| %s | %s | %.6f | %.6f | %.1e | %.6f | %+.2f%% |\n", what, i ? "none" : "tp", eng * 1e3,
                    rep * 1e3, gap, fast * 1e3, 100 * (fast - eng) / eng);
        if (!(gap <= worst)) worst = gap;
    }
    return worst;
}

/* The replay's step minus the engine's (symmetry tp), relative, and the
 * engine's step into *eng_s. */
static double replay_gap_signed(const char *what, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s0,
                                double *eng_s)
{
    est_replay_result rr;
    cfg_strategy sc = *s0;
    double rep = replay_step(m, p, &sc, &rr);
    run_case c;
    memset(&c, 0, sizeof c);
    c.model = *m;
    c.platform = *p;
    c.strategy = sc;
    sim_err err = {{0}};
    ck_assert_msg(runner_simulate_all(&c, 1, 1, NULL, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(c.rc == SIM_OK, "%s: %s", what, c.msg);
    *eng_s = c.result.step_time_s;
    double gap = (rep - *eng_s) / *eng_s;
    if (getenv("HEPTASIM_TEST_VERBOSE")) {
        est_estimator *e = est_new(m, p, &err);
        est_result er = {0};
        double fast = e && est_step(e, &sc, &er, &err) == SIM_OK ? er.step_s : NAN;
        est_free(e);
        fprintf(stderr, "| %s | tp | %.6f | %.6f | %+.1e | %.6f | %+.2f%% |\n", what, *eng_s * 1e3, rep * 1e3, gap,
                fast * 1e3, 100 * (fast - *eng_s) / *eng_s);
    }
    return gap;
}

/* The replay equals the engine to 1e-9 on (m, p, s). */

static void check_equal(const char *what, const cfg_model *m, const cfg_platform *p, const cfg_strategy *s,
                        double perturb)
{
    double gap = replay_gap(what, m, p, s, perturb);
    ck_assert_msg(gap <= 1e-9, "%s: replay and engine differ by %.3g of the step", what, gap);
}

/* {========================================================== kinds */

/* 8 devices in one supernode unless said otherwise. */
static cfg_platform plat(int devices, int per_supernode)
{
    cfg_platform p = fx_two_plane_platform(devices, per_supernode);
    p.gemm_efficiency.n = 3; /* the cost model wants three points */
    p.gemm_efficiency.x[1] = 1e11;
    p.gemm_efficiency.y[1] = 0.7;
    p.gemm_efficiency.x[2] = 1e12;
    p.gemm_efficiency.y[2] = 0.8;
    return p;
}

static cfg_strategy strat(int dp, int pp, int tp)
{
    cfg_strategy s = fx_strategy(dp, pp, tp, 2);
    s.overlap_grad_reduce = false;
    return s;
}

START_TEST(test_dp_alone)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(4, 1, 1);
    check_equal("dp 4", &m, &p, &s, 0);
    s.overlap_grad_reduce = true; /* one stream of reductions, beside compute only */
    check_equal("dp 4, overlapped", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_pp_alone)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = fx_strategy(1, 4, 1, 8);
    check_equal("pp 4, 1f1b, 8 micro-batches", &m, &p, &s, 0);
    m.layers = 8;
    s.schedule = CFG_SCHED_INTERLEAVED;
    s.vpp = 2;
    check_equal("pp 4, interleaved vpp 2, 8 micro-batches", &m, &p, &s, 0);
    s.schedule = CFG_SCHED_GPIPE;
    s.vpp = 1;
    check_equal("pp 4, gpipe, 8 micro-batches", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_tp_1d)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(1, 1, 4);
    check_equal("tp_x 4", &m, &p, &s, 0);
    s.sequence_parallel = true;
    check_equal("tp_x 4, sequence parallel", &m, &p, &s, 0);
    s.overlap_tp_comm = true;
    p.overlap_compute_slowdown = 1.2;
    check_equal("tp_x 4, sequence parallel, TP overlap", &m, &p, &s, 0);
    s.sequence_parallel = false;
    check_equal("tp_x 4, TP overlap", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_tp_2d)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(1, 1, 2);
    s.tp_y = 2;
    check_equal("tp_x 2 x tp_y 2", &m, &p, &s, 0);
    s.overlap_tp_comm = true;
    check_equal("tp_x 2 x tp_y 2, TP overlap", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_cp_ring)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(1, 1, 1);
    s.cp_ring = 4;
    check_equal("cp_ring 4", &m, &p, &s, 0);
    s.overlap_cp_comm = true;
    check_equal("cp_ring 4, overlapped", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_cp_ulysses_and_fused)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(1, 1, 1);
    s.cp_ulysses = 4;
    check_equal("cp_ulysses 4", &m, &p, &s, 0);
    s.cp_ulysses = 2;
    s.tp_y = 2;
    s.fuse_tpy_cp = true;
    check_equal("tp_y 2 fused with cp_ulysses 2", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_ep)
{
    cfg_model m = small_model();
    fx_moe(&m, 8, 2, 1024, 0, 0, 0, 1);
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(4, 1, 1);
    s.ep = 4;
    check_equal("ep 4 (MoE) over dp 4", &m, &p, &s, 0);
}
END_TEST

START_TEST(test_zero)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    for (int z = 0; z <= 3; z++) {
        cfg_strategy s = strat(4, 1, 1);
        s.zero = z;
        char what[32];
        snprintf(what, sizeof what, "dp 4, zero %d", z);
        check_equal(what, &m, &p, &s, 0);
    }
}
END_TEST

/* HSDP over two supernodes of 4: shard groups of 4 inside each (the
 * gathers and reduce-scatters on the fabric), replica pairs across them
 * (the all-reduces on the NIC plane), with and without the overlapped
 * reduction; dp_shard 8, the whole DP group, simulates zero 3's step to
 * the last bit. */
START_TEST(test_hsdp)
{
    cfg_model m = small_model();
    cfg_platform p = plat(8, 4);
    for (int overlap = 0; overlap <= 1; overlap++) {
        cfg_strategy s = strat(8, 1, 1);
        s.zero = 3;
        s.dp_shard = 4;
        s.overlap_grad_reduce = overlap;
        check_equal(overlap ? "hsdp 4 x 2, overlapped" : "hsdp 4 x 2", &m, &p, &s, 0);
    }
    run_case c[2];
    memset(c, 0, sizeof c);
    for (int i = 0; i < 2; i++) {
        c[i].model = m;
        c[i].platform = p;
        c[i].strategy = strat(8, 1, 1);
        c[i].strategy.zero = 3;
        c[i].strategy.dp_shard = i ? 8 : 0;
    }
    sim_err err = {{0}};
    ck_assert_msg(runner_simulate_all(c, 2, 2, NULL, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(c[0].rc == SIM_OK && c[1].rc == SIM_OK, "%s %s", c[0].msg, c[1].msg);
    ck_assert(c[0].result.step_time_s > 0 && c[1].result.step_time_s == c[0].result.step_time_s);
}
END_TEST

START_TEST(test_hier_dp)
{
    cfg_model m = small_model();
    cfg_platform p = plat(8, 4); /* two supernodes of 4: intra, inter, intra */
    cfg_strategy s = strat(8, 1, 1);
    check_equal("dp 8 over two supernodes", &m, &p, &s, 0);
}
END_TEST

/* Networks with tiers above the supernodes (leaves of 8 devices, spines
 * of 16, a core above; 1:1, so no two flows share a link's bandwidth),
 * with and without rails: rings whose edges leave different tiers, and
 * pipeline transfers between leaves and spines, are the engine's to 1e-9
 * (TP symmetry on the tiers' uplinks, refused with rails). */
START_TEST(test_tiers)
{
    cfg_model m = small_model();
    for (int rails = 0; rails < 2; rails++) {
        cfg_platform p = plat(32, 4);
        p.ntiers = 2;
        p.tiers[0] = (cfg_tier){.devices = 8, .oversubscription = 1, .latency_s = 0.5e-6, .rails = rails};
        p.tiers[1] = (cfg_tier){.devices = 16, .oversubscription = 1, .latency_s = 0.7e-6};
        if (rails) p.devices_per_node = 2;
        char what[64];
        cfg_strategy s = strat(32, 1, 1);
        snprintf(what, sizeof what, "dp 32 over 8 supernodes, 2 tiers%s", rails ? ", rails" : "");
        check_equal(what, &m, &p, &s, 0);
        s = strat(8, 4, 1);
        snprintf(what, sizeof what, "dp 8 pp 4 over 2 tiers%s", rails ? ", rails" : "");
        check_equal(what, &m, &p, &s, 0);
        s = strat(4, 4, 2);
        snprintf(what, sizeof what, "tp 2 dp 4 pp 4 over 2 tiers%s", rails ? ", rails" : "");
        check_equal(what, &m, &p, &s, 0);
    }
}
END_TEST

/* Where flows share links (TP 2 x PP 4 x DP 2 with overlapped gradient
 * reduction on 16 H100s: reductions beside pipeline transfers), the
 * engine is slower: contention only lengthens flows, and every time of
 * the replay is a max and sum of flow times.  The replay is a lower bound. */
START_TEST(test_contended_is_a_lower_bound)
{
    run_case c;
    fx_small_case(&c, NULL, 0);
    double eng = 0;
    double gap = replay_gap_signed("tp2 pp4 dp2, gpt-7.5b/4 on dgx-h100", &c.model, &c.platform, &c.strategy, &eng);
    ck_assert_msg(gap <= 1e-9, "the replay is %.3g above the engine", gap);
}
END_TEST

START_TEST(test_check_can_fail)
{
    cfg_model m = small_model();
    cfg_platform p = plat(4, 4);
    cfg_strategy s = strat(4, 1, 1);
    est_replay_result rr;
    cfg_strategy sc = s;
    double t = replay_step(&m, &p, &sc, &rr);
    /* the replay off by 1e-8 of the step fails the 1e-9 check */
    ck_assert(replay_gap("perturbed", &m, &p, &s, 1e-8 * t) > 1e-9);
}
END_TEST

/* A pipeline transfer between stages in different leaves pays the leaf
 * tier's latency, as the engine's route does: with stages of 4 devices in
 * supernodes of 4 and leaves of 8, the hop from stage 1 to stage 2 leaves
 * a leaf, so each of the 2(pp - 1) hops costs the tier's latency more. */
START_TEST(test_pipeline_hop_pays_tier_latency)
{
    cfg_model m = small_model();
    cfg_strategy s = strat(1, 4, 4);
    double pp_s[2];
    for (int t = 0; t < 2; t++) {
        cfg_platform p = plat(16, 4);
        p.ntiers = 2;
        p.tiers[0] = (cfg_tier){.devices = 8, .oversubscription = 1, .latency_s = t ? 1e-5 : 0};
        p.tiers[1] = (cfg_tier){.devices = 16, .oversubscription = 1, .latency_s = 0};
        sim_err err = {{0}};
        cfg_strategy sc = s;
        ck_assert_msg(cfg_check(&m, &p, &sc, &err) == SIM_OK, "%s", err.msg);
        est_estimator *e = est_new(&m, &p, &err);
        ck_assert_msg(e != NULL, "%s", err.msg);
        est_result r;
        ck_assert_msg(est_step(e, &sc, &r, &err) == SIM_OK, "%s", err.msg);
        pp_s[t] = r.exposed_s[WL_DIM_PP];
        est_free(e);
    }
    ck_assert_double_eq_tol(pp_s[1] - pp_s[0], 2 * (4 - 1) * 1e-5, 1e-12);
}
END_TEST

/* The probe key reads the key table: a change of a CFG_KF_PROBE key
 * builds a new probe, a change of any other key reuses the last one, and
 * either way the estimate is a fresh estimator's (so the stage rows and
 * costs kept for the CFG_KF_STAGE_ROWS and CFG_KF_STAGE_COSTS keys are
 * rebuilt when those change). */
START_TEST(test_probe_key_from_table)
{
    cfg_model m = small_model();
    cfg_platform p = plat(8, 8);
    sim_err err = {{0}};
    est_estimator *e = est_new(&m, &p, &err);
    ck_assert_msg(e != NULL, "%s", err.msg);
    cfg_strategy base = fx_strategy(2, 2, 2, 4);
    base.schedule = CFG_SCHED_1F1B;
    ck_assert_msg(cfg_check(&m, &p, &base, &err) == SIM_OK, "%s", err.msg);
    est_result r;
    long long n = 0;
    struct {
        const char *key;
        int value;
    } sets[] = {{"zero", 1},         {"overlap_grad_reduce", 0}, {"overlap_param_gather", 0},
                {"schedule", CFG_SCHED_GPIPE}, {"sequence_parallel", 1}, {"recompute", 2},
                {"overlap_tp_comm", 1}, {"global_batch", 16}, {"first_stage_layers", 1},
                {"grad_reduce_in_bf16", 1}, {"optimizer_moments", CFG_MOMENTS_BF16}};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        const cfg_key *k = cfg_strategy_key(sets[i].key);
        ck_assert_ptr_nonnull(k);
        const char *item = sets[i].key;
        cfg_strategy s = base;
        cfg_value v;
        cfg_key_get(k, &s, &v);
        v.i = sets[i].value;
        cfg_key_set(k, &s, &v);
        ck_assert_msg(cfg_check(&m, &p, &s, &err) == SIM_OK, "%s: %s", item, err.msg);
        ck_assert(est_step(e, &base, &r, &err) == SIM_OK);
        n = est_probes(e);
        ck_assert(est_step(e, &s, &r, &err) == SIM_OK);
        long long built = est_probes(e) - n;
        /* a cached probe gives what a fresh estimator gives */
        est_estimator *fresh = est_new(&m, &p, &err);
        est_result rf;
        ck_assert(est_step(fresh, &s, &rf, &err) == SIM_OK);
        est_free(fresh);
        ck_assert_msg(r.step_s == rf.step_s, "%s: %.12g s from the cache, %.12g s fresh", item, r.step_s, rf.step_s);
        ck_assert_msg(built == ((k->flags & CFG_KF_PROBE) ? 1 : 0), "%s: %lld probes built", item, built);
    }
    est_free(e);
}
END_TEST

/* }========================================================== */

/* {========================================================== programs */

/* Hand-written programs: rank r's instructions are prog[r][0..len[r]). */
typedef struct hw {
    int world;
    int len[4];
    wl_instr prog[4][4];
} hw;

typedef struct hw_cursor {
    const hw *w;
    int rank, pc;
} hw_cursor;

static void *hw_new(void *ctx, int rank)
{
    hw_cursor *c = calloc(1, sizeof *c);
    c->w = ctx;
    c->rank = rank;
    return c;
}

static bool hw_next(void *prog, wl_instr *out)
{
    hw_cursor *c = prog;
    if (c->pc >= c->w->len[c->rank]) return false;
    *out = c->w->prog[c->rank][c->pc++];
    return true;
}

static void hw_free(void *prog) { free(prog); }

static int hw_members(void *ctx, int rank, wl_group g, int *members, int *my_index)
{
    const hw *w = ctx;
    (void)g;
    for (int i = 0; i < w->world; i++) members[i] = i;
    *my_index = rank;
    return w->world;
}

static wl_instr coll(wl_coll k, double bytes)
{
    wl_instr in = {0};
    in.op = WL_COLL;
    in.coll = k;
    in.group = WL_G_DP;
    in.bytes = bytes;
    in.layer = in.micro = -1;
    return in;
}

static wl_instr compute(double s)
{
    wl_instr in = {0};
    in.op = WL_COMPUTE;
    in.seconds = s;
    in.layer = in.micro = -1;
    return in;
}

static wl_instr p2p(wl_op op, int peer, double bytes)
{
    wl_instr in = {0};
    in.op = op;
    in.group = WL_G_PP;
    in.peer = peer;
    in.bytes = bytes;
    in.layer = in.micro = -1;
    return in;
}

START_TEST(test_hand_written_closed_forms)
{
    cfg_platform p = plat(4, 4);
    sim_err err = {{0}};
    wl_programs w = {4, NULL, hw_new, hw_next, hw_free, hw_members};
    /* ranks start a ring all-reduce at 1, 2, 3, 4 ms: its flows start when
     * neighbours have both started; rank 3 starts last */
    hw h = {.world = 4};
    for (int r = 0; r < 4; r++) {
        h.len[r] = 2;
        h.prog[r][0] = compute(1e-3 * (r + 1));
        h.prog[r][1] = coll(WL_ALLREDUCE, 64e6);
    }
    w.ctx = &h;
    est_replay_result res;
    ck_assert_msg(est_replay_programs(&p, &w, &res, &err) == SIM_OK, "%s", err.msg);
    net_phase ph = net_ring_phase(NET_ALLREDUCE, 4, 64e6, p.fabric_latency_s, p.fabric_bytes_per_s);
    double flow = net_p2p_s(&p, NET_FABRIC, ph.steps * ph.chunk_bytes), tail = net_phase_tail_s(&p, &ph);
    ck_assert_double_eq_tol(flow + tail, net_phase_s(&p, &ph), 1e-15);
    ck_assert_double_eq_tol(res.step_s, 4e-3 + flow + tail, 1e-15);

    /* a receive waits for its send's arrival: send at 2 ms from rank 0 */
    hw q = {.world = 2};
    q.len[0] = 2;
    q.prog[0][0] = compute(2e-3);
    q.prog[0][1] = p2p(WL_SEND, 1, 1e6);
    q.len[1] = 2;
    q.prog[1][0] = p2p(WL_RECV, 0, 1e6);
    q.prog[1][1] = compute(1e-3);
    w.world = 2;
    w.ctx = &q;
    ck_assert_msg(est_replay_programs(&p, &w, &res, &err) == SIM_OK, "%s", err.msg);
    ck_assert_double_eq_tol(res.step_s, 3e-3 + net_p2p_s(&p, NET_FABRIC, 1e6), 1e-15);
    ck_assert_double_eq_tol(res.critical.bubble_s, 2e-3 + net_p2p_s(&p, NET_FABRIC, 1e6), 1e-15);
}
END_TEST

START_TEST(test_mismatch_is_an_error)
{
    cfg_platform p = plat(4, 4);
    sim_err err = {{0}};
    /* rank 1 never joins the all-reduce */
    hw h = {.world = 2};
    h.len[0] = 1;
    h.prog[0][0] = coll(WL_ALLREDUCE, 1e6);
    h.len[1] = 1;
    h.prog[1][0] = compute(1e-3);
    wl_programs w = {2, &h, hw_new, hw_next, hw_free, hw_members};
    est_replay_result res;
    ck_assert_int_eq(est_replay_programs(&p, &w, &res, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "deadlocked") && strstr(err.msg, "rank 0"), "%s", err.msg);
    /* a receive without its send */
    h.prog[0][0] = p2p(WL_RECV, 1, 1e6);
    ck_assert_int_eq(est_replay_programs(&p, &w, &res, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "recv from rank 1"), "%s", err.msg);
    /* a wait for an op never started */
    h.prog[0][0] = (wl_instr){.op = WL_WAIT, .stream = WL_S_DP, .seq = 1};
    ck_assert_int_eq(est_replay_programs(&p, &w, &res, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "only 0 were started"), "%s", err.msg);
}
END_TEST

/* }========================================================== */

static Suite *estimate_suite(void)
{
    Suite *s = suite_create("estimate");
    TCase *tk = tcase_create("replay_vs_engine");
    tcase_set_timeout(tk, 120);
    tcase_add_test(tk, test_dp_alone);
    tcase_add_test(tk, test_pp_alone);
    tcase_add_test(tk, test_tp_1d);
    tcase_add_test(tk, test_tp_2d);
    tcase_add_test(tk, test_cp_ring);
    tcase_add_test(tk, test_cp_ulysses_and_fused);
    tcase_add_test(tk, test_ep);
    tcase_add_test(tk, test_zero);
    tcase_add_test(tk, test_hier_dp);
    tcase_add_test(tk, test_hsdp);
    tcase_add_test(tk, test_tiers);
    tcase_add_test(tk, test_pipeline_hop_pays_tier_latency);
    tcase_add_test(tk, test_contended_is_a_lower_bound);
    tcase_add_test(tk, test_check_can_fail);
    suite_add_tcase(s, tk);
    TCase *tq = tcase_create("probe_key");
    tcase_add_test(tq, test_probe_key_from_table);
    suite_add_tcase(s, tq);
    TCase *th = tcase_create("programs");
    tcase_add_test(th, test_hand_written_closed_forms);
    tcase_add_test(th, test_mismatch_is_an_error);
    suite_add_tcase(s, th);
    return s;
}

int main(void)
{
    return check_run(estimate_suite());
}
