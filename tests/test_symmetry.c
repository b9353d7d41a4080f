/* test_symmetry.c - every reduction the engine takes by itself is exact:
 * small cases of every 7D kind (ZeRO 0-3 with and without overlap, the
 * pipeline schedules, 1D and 2D TP, ring and Ulysses CP, experts with and
 * without ETP, the fused tp_y x CP group, data parallel hierarchical over
 * supernodes with and without shared uplinks) give, with the default
 * symmetry, the figures of the run with one actor per rank to 1e-9, and
 * say what one simulated rank stood for. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "lib/check_run.h"

/* Loads MODEL on PLATFORM of `devices` with STRATEGY and the --set items
 * sets[0..n), checked; fails the test on any error. */
static void load(run_case *c, const char *model, const char *platform, int devices, const char *strategy,
                 const char *const *sets, int n)
{
    cfg_overrides ov = {n, sets};
    sim_err err = {{0}};
    memset(c, 0, sizeof *c);
    ck_assert_msg(cfg_load_model(model, &ov, &c->model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform(platform, &ov, devices, &c->platform, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_strategy(strategy, &ov, &c->strategy, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&c->model, &c->platform, &c->strategy, &err) == SIM_OK, "%s", err.msg);
}

static void assert_close(double a, double b, const char *what, const char *name)
{
    double scale = fmax(fabs(a), fabs(b));
    ck_assert_msg(fabs(a - b) <= 1e-9 * scale + 1e-15, "%s: %s: %.15g with the reduction, %.15g without", name, what, a,
                  b);
}

/* The step time of the last case check_exact simulated. */
static double last_step_s;

/* Simulates c with the default symmetry and with one actor per rank and
 * checks that they agree in every figure; returns the ranks one simulated
 * rank stood for. */
static int check_exact(const char *name, run_case *c)
{
    static eng_options none, exact;
    none.symmetry = ENG_SYM_NONE;
    exact.symmetry = ENG_SYM_TP;
    run_case two[2] = {*c, *c};
    two[0].options = &exact;
    two[1].options = &none;
    sim_err err = {{0}};
    ck_assert_int_eq(runner_simulate_all(two, 2, 2, NULL, NULL, &err), SIM_OK);
    ck_assert_msg(two[0].rc == SIM_OK && two[1].rc == SIM_OK, "%s: %s %s", name, two[0].msg, two[1].msg);
    const eng_result *a = &two[0].result, *b = &two[1].result;
    int world = cfg_world_size(&c->strategy);
    ck_assert_int_eq(b->ranks_simulated, world);
    ck_assert_int_eq(b->lockstep, 1);
    ck_assert_int_eq(a->replicas, 1);
    ck_assert_int_eq(a->ranks_simulated * a->lockstep, world);
    ck_assert_msg(a->lockstep == 1 || a->lockstep_dims != 0, "%s: classes of %d with no coordinate named", name,
                  a->lockstep);
    ck_assert_int_eq(a->instructions * a->lockstep, b->instructions);
    assert_close(a->step_time_s, b->step_time_s, "step time", name);
    last_step_s = b->step_time_s;
    assert_close(a->critical.finish_s, b->critical.finish_s, "critical finish", name);
    assert_close(a->critical.compute_s, b->critical.compute_s, "compute", name);
    assert_close(a->critical.bubble_s + b->step_time_s, b->critical.bubble_s + b->step_time_s, "bubble", name);
    for (int d = 0; d < WL_NDIMS; d++) {
        char what[64];
        snprintf(what, sizeof what, "exposed %s", wl_dim_name((wl_dim)d));
        assert_close(a->critical.exposed_comm_s[d] + b->step_time_s, b->critical.exposed_comm_s[d] + b->step_time_s,
                     what, name);
        snprintf(what, sizeof what, "%s in flight", wl_dim_name((wl_dim)d));
        assert_close(a->critical.comm_s[d] + b->step_time_s, b->critical.comm_s[d] + b->step_time_s, what, name);
        snprintf(what, sizeof what, "%s bytes", wl_dim_name((wl_dim)d));
        assert_close(a->bytes_total[d], b->bytes_total[d], what, name);
    }
    return a->lockstep;
}

/* gpt-7.5b on `devices` H100s with the Megatron strategy file and the
 * items sets[0..n). */
static int h100(const char *name, int devices, const char *const *sets, int n)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    load(c, "gpt-7.5b", "dgx-h100", devices, "gpt-310b-a3-megatron", sets, n);
    int k = check_exact(name, c);
    free(c);
    return k;
}

/* A dense case: gpt-7.5b cut to 4 layers on 16 H100s, TP 2, PP 4, DP 2,
 * with the extra items. */
static int dense(const char *name, const char *const *extra, int nextra)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    fx_small_case(c, extra, nextra);
    int k = check_exact(name, c);
    free(c);
    return k;
}

START_TEST(test_data_parallel_zero)
{
    static const char *const cases[][3] = {
        {"zero=0", "overlap_grad_reduce=false", NULL},
        {"zero=0", "overlap_grad_reduce=true", NULL},
        {"zero=1", "overlap_grad_reduce=false", "overlap_param_gather=false"},
        {"zero=1", "overlap_grad_reduce=true", "overlap_param_gather=true"},
        {"zero=2", "overlap_grad_reduce=true", "overlap_param_gather=true"},
        {"zero=3", "overlap_grad_reduce=false", NULL},
        {"zero=3", "overlap_grad_reduce=true", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int n = cases[i][2] ? 3 : 2;
        char name[128];
        snprintf(name, sizeof name, "%s %s%s%s", cases[i][0], cases[i][1], n == 3 ? " " : "", n == 3 ? cases[i][2] : "");
        /* TP 2 x DP 2 of a stage in one 8-GPU node: one rank per stage */
        ck_assert_int_eq(dense(name, cases[i], n), 4);
    }
}
END_TEST

START_TEST(test_pipeline_schedules)
{
    static const char *const cases[][3] = {
        {"schedule=1f1b", "vpp=1", "pp=4"},
        {"schedule=interleaved", "vpp=2", "pp=2"},
        {"schedule=zb-h1", "vpp=1", "pp=4"},
        {"schedule=zb-v", "vpp=1", "pp=2"},
        {"schedule=dualpipe-v", "vpp=1", "pp=2"},
        {"schedule=gpipe", "vpp=1", "pp=4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *sets[] = {cases[i][0], cases[i][1], cases[i][2], "dp=0"};
        ck_assert_int_ge(dense(cases[i][0], sets, 4), 2);
    }
}
END_TEST

START_TEST(test_tensor_parallel)
{
    /* 1D with SP and overlapped ring exchanges; 2D (all-to-alls inside TP) */
    const char *one[] = {"tp_x=4", "pp=2", "dp=2", "sequence_parallel=true", "overlap_tp_comm=true"};
    ck_assert_int_ge(dense("1D TP", one, 5), 4);
    const char *two[] = {"tp_x=2", "tp_y=2", "pp=2", "dp=2", "sequence_parallel=true"};
    ck_assert_int_ge(dense("2D TP", two, 5), 4);
    /* TP straddling two 8-GPU nodes: its flows cross the NICs (NIC mirror) */
    const char *sets[] = {"model.layers=2", "tp_x=16", "pp=1", "dp=1", "vpp=1", "schedule=1f1b", "global_batch=4",
                          "micro_batch=1", "sequence_parallel=true"};
    ck_assert_int_eq(h100("TP 16 over two nodes", 16, sets, 9), 16);
}
END_TEST

START_TEST(test_context_parallel)
{
    const char *ring[] = {"tp_x=2", "cp_ring=2", "pp=2", "dp=2", "model.seq_len=8192"};
    ck_assert_int_ge(dense("ring CP", ring, 5), 2);
    const char *uly[] = {"tp_x=2", "cp_ulysses=2", "pp=2", "dp=2", "model.seq_len=8192"};
    ck_assert_int_ge(dense("Ulysses CP", uly, 5), 2);
    /* data parallel inside context parallel in the rank order */
    const char *order[] = {"tp_x=2", "cp_ring=2", "pp=2", "dp=2", "model.seq_len=8192",
                           "order=tp_x-tp_y-ep-dp-cp_ulysses-cp_ring-pp"};
    ck_assert_int_ge(dense("CP outside DP", order, 6), 2);
    /* the tp_y x Ulysses fused group */
    const char *fused[] = {"tp_x=2", "tp_y=2", "cp_ulysses=2", "fuse_tpy_cp=true", "pp=2", "dp=1", "model.seq_len=8192",
                           "sequence_parallel=true"};
    ck_assert_int_ge(dense("fused tp_y x CP", fused, 8), 2);
}
END_TEST

/* mixtral-8x22b cut to 2 layers on 32 dies of a two-plane platform of
 * supernodes of `per_sn`: TP 2, PP 2, DP 8, EP 4 with the extra items. */
static int moe(const char *name, int per_sn, const char *const *extra, int nextra)
{
    const char *sets[16] = {"model.layers=2", "model.seq_len=2048", "tp_x=2", "pp=2", "dp=8", "ep=4", "vpp=1",
                            "schedule=1f1b", "global_batch=16", "micro_batch=1", NULL};
    char sn[64], node[64];
    snprintf(sn, sizeof sn, "platform.supernode.devices=%d", per_sn);
    snprintf(node, sizeof node, "platform.node.devices=%d", per_sn < 16 ? per_sn : 16);
    int n = 10;
    sets[n++] = sn;
    sets[n++] = node;
    for (int i = 0; i < nextra && n < 16; i++) sets[n++] = extra[i];
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    load(c, "mixtral-8x22b", "ascend-a3-2048", 32, "mixtral-8x22b-a3-megatron", sets, n);
    int k = check_exact(name, c);
    free(c);
    return k;
}

START_TEST(test_experts)
{
    const char *etp1[] = {"etp=1"};
    ck_assert_int_ge(moe("EP 4 etp 1, one supernode", 32, etp1, 1), 2);
    const char *etp2[] = {"etp=2"};
    ck_assert_int_ge(moe("EP 4 etp 2, one supernode", 32, etp2, 1), 2);
    /* experts over supernodes of 8: the all-to-all crosses the NICs */
    ck_assert_int_ge(moe("EP 4 etp 1, supernodes of 8", 8, etp1, 1), 2);
    ck_assert_int_ge(moe("EP 4 etp 2, supernodes of 4", 4, etp2, 1), 2);
}
END_TEST

START_TEST(test_hierarchical_data_parallel)
{
    /* DP 8 with 4 replicas per 8-GPU node: hierarchical over two nodes */
    const char *flat[] = {"tp_x=2", "pp=1", "dp=8", "global_batch=16"};
    ck_assert_int_eq(dense("DP over two nodes", flat, 4), 16);
    /* with shared uplinks: classes stay inside a supernode (TP 2 x 4 replicas) */
    const char *over[] = {"tp_x=2", "pp=1", "dp=8", "global_batch=16", "platform.network.oversubscription=4"};
    ck_assert_int_eq(dense("DP over two nodes, uplinks 4:1", over, 5), 8);
    /* stages straddling supernodes (uneven): fewer alike ranks, still exact */
    const char *uneven[] = {"model.layers=4", "vpp=1", "schedule=1f1b", "micro_batch=1", "tp_x=2", "pp=2", "dp=3",
                            "global_batch=12"};
    ck_assert_int_ge(h100("stages straddling nodes", 12, uneven, 8), 2);
}
END_TEST

/* {========================================================== tiers */

/* A network of tiers above the nodes of 8, innermost first: devices per
 * domain, oversubscription of its uplink, latency in microseconds, rails. */
typedef struct tier_spec {
    int devices;
    double over, lat_us;
    bool rails;
} tier_spec;

/* MODEL on `devices` H100s in nodes of 8 with tiers ts[0..nt) and the items
 * sets[0..n) (the Megatron strategy file); returns the ranks one simulated
 * rank stood for, after checking the figures against every rank's. */
static int tiered(const char *name, const char *model, int devices, const tier_spec *ts, int nt,
                  const char *const *sets, int n)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    load(c, model, "dgx-h100", devices, "gpt-310b-a3-megatron", sets, n);
    c->platform.ntiers = nt;
    for (int t = 0; t < nt; t++)
        c->platform.tiers[t] = (cfg_tier){.devices = ts[t].devices, .oversubscription = ts[t].over,
                                          .latency_s = ts[t].lat_us * 1e-6, .rails = ts[t].rails};
    sim_err err = {{0}};
    ck_assert_msg(cfg_check(&c->model, &c->platform, &c->strategy, &err) == SIM_OK, "%s", err.msg);
    int k = check_exact(name, c);
    free(c);
    return k;
}

/* gpt-7.5b cut to 4 layers, TP 8 in a node, PP 2, DP `dp` with the extra
 * items: the layout of Llama 3 on a SuperPOD, small. */
#define DENSE_ON_TIERS(dp)                                                                                           \
    "model.layers=4", "vpp=1", "schedule=1f1b", "micro_batch=1", "tp_x=8", "pp=2", "dp=" #dp,                      \
        "global_batch=" #dp "0", "sequence_parallel=true"

START_TEST(test_rails_two_tiers)
{
    /* SuperPOD-like: rail-optimised leaves of 32, a spine of 64, no tier
     * latency, 1:1: the data-parallel rings cross the spine at unit
     * boundaries at no cost, every stage is one class */
    const tier_spec pod[] = {{32, 1, 0, true}, {64, 1, 0, false}};
    const char *sets[] = {DENSE_ON_TIERS(8)};
    ck_assert_int_eq(tiered("rails, two tiers", "gpt-7.5b", 128, pod, 2, sets, 9), 64);
    /* tier latencies: a stage per unit, the pipeline transfers leave it
     * and pay the leaf's latency, every stage still one class */
    const tier_spec slow[] = {{64, 1, 0.3, true}, {128, 1, 0.5, false}};
    ck_assert_int_eq(tiered("rails, two tiers with latencies", "gpt-7.5b", 128, slow, 2, sets, 9), 64);
    /* ... and rings whose edges leave units of 32 at a cost: the classes
     * are the ranks at one place of the ring in every unit (8 rails x 2
     * units); the simulated ranks all sit in one unit, and the ring edge
     * that leaves it in the full step takes a detour up and down the
     * unit's uplink */
    const tier_spec cross[] = {{32, 1, 0.3, true}, {64, 1, 0.5, false}};
    ck_assert_int_eq(tiered("rails, rings leaving units at a cost", "gpt-7.5b", 128, cross, 2, sets, 9), 16);
    /* without rails, an oversubscribed spine (2:1 above units of 32):
     * classes stay inside one unit */
    const tier_spec over[] = {{32, 2, 0.3, false}, {64, 1, 0.5, false}};
    ck_assert_int_ge(tiered("two tiers, 2:1 above the leaves", "gpt-7.5b", 128, over, 2, sets, 9), 2);
}
END_TEST

START_TEST(test_rails_three_tiers_oversubscribed)
{
    /* three tiers, 2:1 above the rail-optimised leaves, 1:1 above: the
     * data-parallel rings of 8 stay in one leaf, a class per stage spread
     * over its 8 rail switches, one member on each: their uplinks carry
     * one flow per class, as the simulated ranks' rail's does */
    const tier_spec three[] = {{64, 2, 0, true}, {128, 1, 0.2, false}, {256, 1, 0.4, false}};
    const char *sets[] = {DENSE_ON_TIERS(8)};
    ck_assert_int_eq(tiered("rails, three tiers, 2:1 leaves", "gpt-7.5b", 128, three, 3, sets, 9), 64);
    /* rings through 2:1 leaf uplinks (the layout of Llama 3 at DP 128 on
     * the three-tier SuperPOD, small): a class per stage and place of the
     * ring in a leaf (even or odd), spread over every leaf and rail with
     * one member on each rail switch; the edge leaving a leaf takes a
     * detour up and down the simulated ranks' leaf uplink */
    const tier_spec small[] = {{16, 2, 0, true}, {64, 1, 0.2, false}, {128, 2, 0.4, false}};
    ck_assert_int_eq(tiered("rails, three tiers, rings over 2:1 leaves", "gpt-7.5b", 128, small, 3, sets, 9), 32);
    /* the same with leaf uplinks so thin that they limit the ring and
     * pipeline flows crossing them: still exact, and slower than 1:1 */
    const tier_spec thin[] = {{16, 16, 0, true}, {64, 1, 0.2, false}, {128, 2, 0.4, false}};
    ck_assert_int_eq(tiered("rails, three tiers, rings over 16:1 leaves", "gpt-7.5b", 128, thin, 3, sets, 9), 32);
    double thin_s = last_step_s;
    const tier_spec wide[] = {{16, 1, 0, true}, {64, 1, 0.2, false}, {128, 2, 0.4, false}};
    ck_assert_int_ge(tiered("rails, three tiers, rings over 1:1 leaves", "gpt-7.5b", 128, wide, 3, sets, 9), 32);
    ck_assert_msg(thin_s > last_step_s * 1.01, "16:1 leaves: %.9g s, 1:1: %.9g s", thin_s, last_step_s);
    /* 2:1 above the spine, three tiers, no rails */
    const tier_spec spine[] = {{32, 1, 0, false}, {64, 2, 0, false}, {128, 1, 0, false}};
    ck_assert_int_ge(tiered("three tiers, 2:1 spine", "gpt-7.5b", 256, spine, 3,
                            (const char *const[]){DENSE_ON_TIERS(16)}, 9),
                     2);
}
END_TEST

START_TEST(test_experts_and_tp_on_tiers)
{
    /* an expert all-to-all across rails and leaves (EP 8 over nodes, one
     * expert rank per node), 1:1 and 2:1 leaves */
    const char *moe[] = {"model.layers=2", "model.seq_len=2048", "tp_x=2", "pp=2", "dp=8", "ep=8", "vpp=1",
                         "schedule=1f1b", "global_batch=16", "micro_batch=1", "etp=1"};
    const tier_spec pod[] = {{16, 1, 0.2, true}, {32, 1, 0, false}};
    ck_assert_int_ge(tiered("experts over rails", "mixtral-8x22b", 32, pod, 2, moe, 11), 2);
    /* leaves of one node, 2:1: the all-to-all across nodes shares the
     * leaf uplinks, classes inside one node */
    const tier_spec over[] = {{8, 2, 0.2, false}, {32, 1, 0, false}};
    ck_assert_int_ge(tiered("experts over 2:1 leaves", "mixtral-8x22b", 32, over, 2, moe, 11), 2);
    /* TP 16 over two nodes of one rail-optimised leaf: the class's own
     * flows cross the NICs, on routes between rails that leave the leaf
     * (a NIC mirror at the latency of that route) */
    const char *tp[] = {"model.layers=2", "tp_x=16", "pp=1", "dp=2", "vpp=1", "schedule=1f1b", "global_batch=4",
                        "micro_batch=1", "sequence_parallel=true"};
    const tier_spec lat[] = {{16, 1, 0.4, true}, {32, 1, 0, false}};
    ck_assert_int_eq(tiered("TP 16 over rails", "gpt-7.5b", 32, lat, 2, tp, 9), 32);
}
END_TEST

/* }========================================================== */

/* {========================================================== stragglers */

/* Simulates c (default symmetry) into *out; fails the test on an error. */
static void simulate(run_case *c, eng_result *out)
{
    sim_err err = {{0}};
    ck_assert_int_eq(runner_simulate_all(c, 1, 1, NULL, NULL, &err), SIM_OK);
    ck_assert_msg(c->rc == SIM_OK, "%s", c->msg);
    *out = c->result;
}

/* A slow node: its ranks form classes of their own, still exact. */
START_TEST(test_straggler_node_exact)
{
    const char *sets[] = {"model.layers=4", "vpp=1", "schedule=1f1b", "micro_batch=1", "tp_x=8", "pp=2", "dp=1",
                          "global_batch=8", "platform.stragglers=[{\"kind\": \"node\", \"index\": 0, \"speed\": 0.8}]"};
    /* the slow node is stage 0, the other stage 1: one rank per stage */
    ck_assert_int_eq(h100("a node at 80 %", 16, sets, 9), 8);
    /* a slow NIC link: its rank alone, every figure as with one actor per rank */
    const char *link[] = {"model.layers=4", "vpp=1", "schedule=1f1b", "micro_batch=1", "tp_x=8", "pp=2", "dp=1",
                          "global_batch=8", "platform.stragglers=[{\"kind\": \"link\", \"index\": 9, \"speed\": 0.5}]"};
    ck_assert_int_eq(h100("a NIC link at 50 %", 16, link, 9), 1);
    /* a slow node of TP 2 on a data-parallel ring of 130: the places of the
     * ring are told apart by their distance to it, 65 refinement rounds;
     * one class per TP group */
    const char *ring[] = {"model.layers=1", "vpp=1", "schedule=1f1b", "micro_batch=1", "tp_x=2", "pp=1", "dp=130",
                          "global_batch=130", "platform.node.devices=2", "platform.supernode.devices=2",
                          "platform.stragglers=[{\"kind\": \"node\", \"index\": 0, \"speed\": 0.8}]"};
    ck_assert_int_eq(h100("a node at 80 % on a ring of 130", 260, ring, 11), 2);
}
END_TEST

/* One slow part of each kind on each kind of fabric (tiers as in
 * tiered; nt 0: the plain leaf-spine of dgx-h100), Llama 3's layout on a
 * SuperPOD, small (TP 8 in a node, PP 2, DP 8 on 128 GPUs): every figure
 * with the default symmetry as with one actor per rank.  A slow node is
 * a TP group: its members stay alike, and the classes are the TP groups
 * (8 ranks each).  A slow GPU or NIC link is a class of one rank: classes
 * joined by ring and pipeline edges have one size (docs/network.md), so
 * every rank is simulated, never a class standing for unlike ranks.
 * Each slow part lengthens the step (the link at 10 %: at 50 % it does
 * not limit its flows under 4:1 supernode uplinks, which leave each NIC
 * flow of a node of 8 a quarter of a NIC). */
static void stragglers_on(const char *fabric, const tier_spec *ts, int nt, const char *extra)
{
    static const struct {
        const char *what, *set;
        int lockstep;
    } slow[] = {
        {"node 0 at 80 %", "platform.stragglers=[{\"kind\": \"node\", \"index\": 0, \"speed\": 0.8}]", 8},
        {"GPU 5 at 80 %", "platform.stragglers=[{\"kind\": \"device\", \"index\": 5, \"speed\": 0.8}]", 1},
        {"NIC link 13 at 10 %", "platform.stragglers=[{\"kind\": \"link\", \"index\": 13, \"speed\": 0.1}]", 1},
    };
    const char *uniform[] = {DENSE_ON_TIERS(8), extra};
    ck_assert_int_ge(tiered(fabric, "gpt-7.5b", 128, ts, nt, uniform, extra ? 10 : 9), 8);
    double uniform_s = last_step_s;
    for (size_t i = 0; i < sizeof slow / sizeof *slow; i++) {
        const char *sets[] = {DENSE_ON_TIERS(8), slow[i].set, extra};
        char name[160];
        snprintf(name, sizeof name, "%s, %s", fabric, slow[i].what);
        ck_assert_int_eq(tiered(name, "gpt-7.5b", 128, ts, nt, sets, extra ? 11 : 10), slow[i].lockstep);
        /* the slow part is on the critical path: a longer step */
        ck_assert_msg(last_step_s > uniform_s, "%s: %.12g s, uniform %.12g s", name, last_step_s, uniform_s);
    }
}

START_TEST(test_straggler_fabrics)
{
    stragglers_on("plain leaf-spine", NULL, 0, NULL);
    stragglers_on("supernode uplinks 4:1", NULL, 0, "platform.network.oversubscription=4");
    const tier_spec pod[] = {{32, 1, 0, true}, {64, 1, 0, false}};
    stragglers_on("rails, two tiers", pod, 2, NULL);
    const tier_spec cross[] = {{32, 1, 0.3, true}, {64, 1, 0.5, false}};
    stragglers_on("rails, two tiers with latencies", cross, 2, NULL);
    const tier_spec three[] = {{16, 2, 0, true}, {64, 1, 0.2, false}, {128, 2, 0.4, false}};
    stragglers_on("rails, three tiers, rings over 2:1 leaves", three, 3, NULL);
    const tier_spec over[] = {{32, 2, 0.3, false}, {64, 1, 0.5, false}};
    stragglers_on("two tiers, 2:1 above the leaves", over, 2, NULL);
}
END_TEST

/* One GPU at 80 % in TP 2 x DP 2 without overlap: every collective waits
 * for it, so its computes and its optimizer step are all on the critical
 * path, and the step is longer by (1 / 0.8 - 1) x their time in the
 * uniform run, communication unchanged. */
START_TEST(test_straggler_critical_path)
{
    const char *base[] = {"model.layers=4", "vpp=1", "schedule=1f1b", "micro_batch=1", "tp_x=2", "pp=1", "dp=2",
                          "global_batch=8", "overlap_grad_reduce=false", "overlap_param_gather=false",
                          "platform.stragglers=[{\"kind\": \"device\", \"index\": 0, \"speed\": 0.8}]"};
    run_case *c = calloc(2, sizeof *c);
    ck_assert_ptr_nonnull(c);
    load(&c[0], "gpt-7.5b", "dgx-h100", 4, "gpt-310b-a3-megatron", base, 10);
    load(&c[1], "gpt-7.5b", "dgx-h100", 4, "gpt-310b-a3-megatron", base, 11);
    ck_assert_int_eq(c[1].platform.nstragglers, 1);
    eng_result uniform, slow;
    simulate(&c[0], &uniform);
    simulate(&c[1], &slow);
    double local = uniform.critical.compute_s; /* the optimizer step included */
    ck_assert(local > 0.5 * uniform.step_time_s);
    assert_close(slow.step_time_s - uniform.step_time_s, (1 / 0.8 - 1) * local, "step time added", "one GPU at 80 %");
    for (int d = 0; d < WL_NDIMS; d++)
        assert_close(slow.critical.exposed_comm_s[d] + uniform.step_time_s,
                     uniform.critical.exposed_comm_s[d] + uniform.step_time_s, "exposed comm", "one GPU at 80 %");
    /* and with one actor per rank, the same figures */
    ck_assert_int_eq(check_exact("one GPU at 80 %", &c[1]), 1);
    free(c);
}
END_TEST

/* One GPU at 80 % in the stage that does not pace the pipeline: GPipe
 * over 2 stages of one GPU each (4 layers, 4 micro-batches, no
 * recompute), the GPU of stage 0 slow.  Stage 1 also runs the loss head
 * and stays the slower stage at 80 %, so it paces the forwards and the
 * backwards; the critical path is stage 0's first forward, stage 1's 4
 * forwards and 4 backwards, the transfers between them, stage 0's last
 * backward and its optimizer step.  Of stage 0's computes one forward,
 * one backward and the optimizer step lie on it, and the step is longer
 * by (1 / 0.8 - 1) x (their time in the uniform run): a quarter of stage
 * 0's compute besides the optimizer, plus its optimizer step, times
 * 0.25.  The other forwards and backwards of stage 0 hide behind stage 1. */
START_TEST(test_straggler_pipeline_critical_path)
{
    const char *base[] = {"model.layers=4", "vpp=1", "schedule=gpipe", "micro_batch=1", "tp_x=1", "pp=2", "dp=1",
                          "global_batch=4", "recompute=none", "overlap_grad_reduce=false",
                          "overlap_param_gather=false",
                          "platform.stragglers=[{\"kind\": \"device\", \"index\": 0, \"speed\": 0.8}]"};
    run_case *c = calloc(2, sizeof *c);
    ck_assert_ptr_nonnull(c);
    load(&c[0], "gpt-7.5b", "dgx-h100", 2, "gpt-310b-a3-megatron", base, 11);
    load(&c[1], "gpt-7.5b", "dgx-h100", 2, "gpt-310b-a3-megatron", base, 12);
    eng_result uniform, slow;
    simulate(&c[0], &uniform);
    simulate(&c[1], &slow);
    /* stage 0 is the uniform run's critical rank (it ends with its optimizer step) */
    ck_assert_int_eq(uniform.critical_rank, 0);
    double opt = uniform.critical.compute_by_phase_s[WL_PH_OPTIMIZER];
    double per_micro = (uniform.critical.compute_s - opt) / 4; /* one forward and one backward */
    ck_assert(opt > 0 && per_micro > 0);
    double added = (1 / 0.8 - 1) * (per_micro + opt);
    assert_close(slow.step_time_s - uniform.step_time_s, added, "step time added", "stage 0 GPU at 80 %");
    /* much less than all of stage 0's compute slowed: the rest is hidden */
    ck_assert(added < 0.5 * (1 / 0.8 - 1) * uniform.critical.compute_s);
    ck_assert_int_eq(check_exact("stage 0 GPU at 80 %", &c[1]), 1);
    free(c);
}
END_TEST

/* }========================================================== */

int main(void)
{
    Suite *s = suite_create("symmetry");
    TCase *tc = tcase_create("exact");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_data_parallel_zero);
    tcase_add_test(tc, test_pipeline_schedules);
    tcase_add_test(tc, test_tensor_parallel);
    tcase_add_test(tc, test_context_parallel);
    tcase_add_test(tc, test_experts);
    tcase_add_test(tc, test_hierarchical_data_parallel);
    tcase_add_test(tc, test_rails_two_tiers);
    tcase_add_test(tc, test_rails_three_tiers_oversubscribed);
    tcase_add_test(tc, test_experts_and_tp_on_tiers);
    tcase_add_test(tc, test_straggler_node_exact);
    tcase_add_test(tc, test_straggler_fabrics);
    tcase_add_test(tc, test_straggler_critical_path);
    tcase_add_test(tc, test_straggler_pipeline_critical_path);
    suite_add_tcase(s, tc);
    return check_run(s);
}
