/* test_workload.c - rank layout, process groups, pipeline schedules and the
 * per-rank programs, checked against closed forms. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "cost/cost.h"
#include "model/model.h"
#include "workload/workload.h"
#include "lib/check_run.h"

static cfg_model model_gpt(void)
{
    return fx_dense_model(8, 1024, 16, 4096, 32000, 1024);
}

static cfg_platform platform(int devices)
{
    cfg_platform p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "p");
    p.devices = devices;
    p.peak_flops_per_s = 312e12;
    p.hbm_bytes = 80 * SIM_GIB;
    p.hbm_bytes_per_s = 2e12;
    p.devices_per_node = 8;
    p.devices_per_supernode = 8;
    p.fabric_bytes_per_s = 300e9;
    p.fabric_latency_s = 2e-6;
    p.nic_bytes_per_s = 25e9;
    p.nic_latency_s = 4e-6;
    p.spine_latency_s = 1e-6;
    p.oversubscription = 1;
    p.gemm_efficiency.n = 3;
    double x[] = {1e8, 1e10, 1e12}, y[] = {0.3, 0.6, 0.8};
    for (int i = 0; i < 3; i++) {
        p.gemm_efficiency.x[i] = x[i];
        p.gemm_efficiency.y[i] = y[i];
    }
    p.attention_efficiency = 0.5;
    p.memory_efficiency = 0.8;
    p.network_efficiency = 1;
    p.kernel_overhead_s = 2e-6;
    p.collective_step_s = 5e-6;
    return p;
}

static cfg_strategy strategy(int dp, int pp, int tp)
{
    return fx_strategy(dp, pp, tp, 8);
}

typedef struct fixture {
    cfg_model m;
    cfg_platform p;
    cfg_strategy s;
    cost_model *c;
    wl_plan *plan;
} fixture;

static void setup_on(fixture *f, cfg_model m, cfg_strategy s, cfg_platform p)
{
    sim_err err;
    f->m = m;
    f->s = s;
    f->p = p;
    f->c = cost_new(&f->p, &err);
    ck_assert_ptr_nonnull(f->c);
    ck_assert_int_eq(wl_plan_new(&f->m, &f->p, &f->s, f->c, &f->plan, &err), SIM_OK);
}

static void setup(fixture *f, cfg_model m, cfg_strategy s)
{
    setup_on(f, m, s, platform(cfg_world_size(&s)));
}

static void teardown(fixture *f)
{
    wl_plan_free(f->plan);
    cost_free(f->c);
}

/* Totals of one rank's program. */
typedef struct totals {
    double coll_bytes[WL_NGROUPS][4]; /* by group and collective kind */
    double grad_bytes[WL_NGROUPS];    /* DP gradient reduction, by the group each phase runs on */
    double edp_grad_bytes[WL_NGROUPS]; /* the same for the expert gradients */
    double gather_bytes;              /* DP parameter gathers */
    int colls[WL_NGROUPS];
    int sends, recvs, waits, computes;
    double compute_s;
} totals;

static totals walk(const wl_plan *plan, int rank)
{
    totals t;
    memset(&t, 0, sizeof t);
    wl_program *p = wl_program_new(plan, rank);
    wl_instr in;
    while (wl_program_next(p, &in)) {
        switch (in.op) {
        case WL_COMPUTE: t.computes++; t.compute_s += in.seconds; break;
        case WL_COLL: {
            /* 1D TP runs on the tp_x group: count the TP dimension as one */
            int g = wl_group_dim((wl_group)in.group) == WL_DIM_TP ? WL_G_TP : in.group;
            t.colls[g]++;
            t.coll_bytes[g][in.coll] += in.bytes;
            const char *label = wl_label_name(in.label);
            if (!strcmp(label, "dp_grad_sync")) t.grad_bytes[in.group] += in.bytes;
            if (!strcmp(label, "edp_grad_sync")) t.edp_grad_bytes[in.group] += in.bytes;
            if (!strcmp(label, "dp_param_gather")) t.gather_bytes += in.bytes;
            break;
        }
        case WL_SEND: t.sends++; break;
        case WL_RECV: t.recvs++; break;
        case WL_WAIT: t.waits++; break;
        }
    }
    wl_program_free(p);
    return t;
}

START_TEST(test_layout_default_order)
{
    fixture f;
    setup(&f, model_gpt(), strategy(2, 2, 4)); /* 16 ranks: tp innermost, then dp, then pp */
    int members[16], me, coords[CFG_NDIMS];
    wl_coords(f.plan, 13, coords);
    ck_assert_int_eq(coords[CFG_DIM_TP_X], 1);
    ck_assert_int_eq(coords[CFG_DIM_DP], 1);
    ck_assert_int_eq(coords[CFG_DIM_PP], 1);
    ck_assert_int_eq(wl_group_members(f.plan, 13, WL_G_TP, members, &me), 4);
    ck_assert_int_eq(members[0], 12);
    ck_assert_int_eq(members[3], 15);
    ck_assert_int_eq(me, 1);
    ck_assert_int_eq(wl_group_members(f.plan, 13, WL_G_DP, members, &me), 2);
    ck_assert_int_eq(members[0], 9);
    ck_assert_int_eq(members[1], 13);
    ck_assert_int_eq(wl_group_members(f.plan, 13, WL_G_PP, members, &me), 2);
    ck_assert_int_eq(members[0], 5);
    ck_assert_int_eq(wl_stage(f.plan, 13), 1);
    ck_assert_int_eq(wl_group_id(f.plan, 13, WL_G_TP), 12);
    teardown(&f);
}
END_TEST

START_TEST(test_layout_order_changes_neighbours)
{
    fixture f;
    cfg_strategy s = strategy(2, 1, 4);
    /* dp innermost: a TP group is now strided by 2 */
    const cfg_dim order[CFG_NDIMS] = {CFG_DIM_DP, CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES,
                                      CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_PP};
    memcpy(s.order, order, sizeof order);
    setup(&f, model_gpt(), s);
    int members[8], me;
    ck_assert_int_eq(wl_group_members(f.plan, 0, WL_G_TP, members, &me), 4);
    for (int i = 0; i < 4; i++) ck_assert_int_eq(members[i], 2 * i);
    ck_assert_int_eq(wl_group_members(f.plan, 0, WL_G_DP, members, &me), 2);
    ck_assert_int_eq(members[1], 1);
    teardown(&f);
}
END_TEST

START_TEST(test_groups_partition_world)
{
    /* Every group of every kind contains its rank, and the groups of one
     * kind partition the world (each rank in exactly one). */
    fixture f;
    cfg_model m = model_gpt();
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.ffn_hidden = 1024;
    m.moe.layer_freq = 1;
    cfg_strategy s = strategy(4, 2, 2);
    s.ep = 2;
    setup(&f, m, s);
    int world = wl_world(f.plan), members[64], me;
    for (int g = 0; g < WL_NGROUPS; g++) {
        int *count = calloc((size_t)world, sizeof *count);
        for (int r = 0; r < world; r++) {
            int n = wl_group_members(f.plan, r, (wl_group)g, members, &me);
            ck_assert_int_eq(members[me], r);
            if (wl_group_id(f.plan, r, (wl_group)g) == r)
                for (int i = 0; i < n; i++) count[members[i]]++;
        }
        for (int r = 0; r < world; r++) ck_assert_msg(count[r] == 1, "group %s rank %d in %d groups",
                                                      wl_group_name((wl_group)g), r, count[r]);
        free(count);
    }
    ck_assert_int_eq(wl_group_members(f.plan, 0, WL_G_EP, members, &me), 2);
    /* etp = 1: every rank holds whole experts; expert DP = 2*4/(2*1) = 4 */
    ck_assert_int_eq(wl_group_members(f.plan, 0, WL_G_EDP, members, &me), 4);
    ck_assert_int_eq(wl_group_members(f.plan, 0, WL_G_ETP, members, &me), 1);
    teardown(&f);
}
END_TEST

/* The members of group g of rank r equal want[0..n-1]. */
static void expect_members(const fixture *f, int r, wl_group g, const int *want, int n)
{
    int members[64], me = -1;
    ck_assert_int_eq(wl_group_members(f->plan, r, g, members, &me), n);
    for (int i = 0; i < n; i++)
        ck_assert_msg(members[i] == want[i], "rank %d, group %s: member %d is %d, expected %d", r,
                      wl_group_name(g), i, members[i], want[i]);
    ck_assert_int_eq(members[me], r);
}

START_TEST(test_layout_expert_fold)
{
    /* Megatron-Core's expert rank generator, counted by hand: the same
     * order string numbers the ranks with etp, ep and expert DP in the
     * slots of tp, ep and dp (cp takes no digit). */
    cfg_model m = model_gpt();
    fx_moe(&m, 8, 2, 1024, 0, 0, 0, 1);
    fixture f;

    /* 16 ranks, tp 2, dp 8, ep 4, etp 1: expert DP = 16/4 = 4.  Expert
     * digits: ep stride 1, expert DP stride 4, so EP 4 spans two TP
     * groups. */
    cfg_strategy s = strategy(8, 1, 2);
    s.ep = 4;
    s.etp = 1;
    setup(&f, m, s);
    expect_members(&f, 5, WL_G_TP, (int[]){4, 5}, 2);
    expect_members(&f, 5, WL_G_DP, (int[]){1, 3, 5, 7, 9, 11, 13, 15}, 8);
    expect_members(&f, 5, WL_G_EP, (int[]){4, 5, 6, 7}, 4);
    expect_members(&f, 5, WL_G_EDP, (int[]){1, 5, 9, 13}, 4);
    expect_members(&f, 5, WL_G_ETP, (int[]){5}, 1);
    int c[CFG_NDIMS];
    wl_coords(f.plan, 5, c);
    ck_assert_int_eq(c[CFG_DIM_EP], 1);
    teardown(&f);

    /* tp 2, dp 4, pp 2, ep 2, etp 2: expert DP = 8/4 = 2; in stage 1
     * (ranks 8..15), rank 11 has etp 1, ep 1, expert DP 0 */
    s = strategy(4, 2, 2);
    s.ep = 2;
    s.etp = 2;
    setup(&f, m, s);
    expect_members(&f, 11, WL_G_ETP, (int[]){10, 11}, 2);
    expect_members(&f, 11, WL_G_EP, (int[]){9, 11}, 2);
    expect_members(&f, 11, WL_G_EDP, (int[]){11, 15}, 2);
    expect_members(&f, 11, WL_G_PP, (int[]){3, 11}, 2);
    teardown(&f);

    /* Megatron's other order, tp-cp-ep-pp-dp, with expert DP = dp: tp 2,
     * etp 1, ep 2, pp 2, dp 4.  Dense: tp stride 1, pp 2, dp 4; expert: ep
     * stride 1, pp 2, expert DP 4: EP is the TP group, the stages agree. */
    s = strategy(4, 2, 2);
    s.ep = 2;
    s.etp = 1;
    const cfg_dim pp_dp[CFG_NDIMS] = {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING,
                                      CFG_DIM_EP,   CFG_DIM_PP,   CFG_DIM_DP};
    memcpy(s.order, pp_dp, sizeof pp_dp);
    setup(&f, m, s);
    expect_members(&f, 6, WL_G_PP, (int[]){4, 6}, 2);
    expect_members(&f, 6, WL_G_EP, (int[]){6, 7}, 2);
    expect_members(&f, 6, WL_G_EDP, (int[]){2, 6, 10, 14}, 4);
    teardown(&f);

    /* dp before ep (EP strided over expert DP): tp 1, dp 4, ep 2, etp 1:
     * expert DP 2 stride 1, ep stride 2 */
    s = strategy(4, 1, 1);
    s.ep = 2;
    const cfg_dim dp_ep[CFG_NDIMS] = {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING,
                                      CFG_DIM_DP,   CFG_DIM_EP,   CFG_DIM_PP};
    memcpy(s.order, dp_ep, sizeof dp_ep);
    setup(&f, m, s);
    expect_members(&f, 3, WL_G_EP, (int[]){1, 3}, 2);
    expect_members(&f, 3, WL_G_EDP, (int[]){2, 3}, 2);
    teardown(&f);

    /* ring CP 2 x dp 2 with ep 4 (EP over the CP ranks too, cp taking no
     * expert digit): tp 1, 4 ranks, one EP group of all */
    s = strategy(2, 1, 1);
    s.cp_ring = 2;
    s.ep = 4;
    setup(&f, m, s);
    expect_members(&f, 2, WL_G_EP, (int[]){0, 1, 2, 3}, 4);
    expect_members(&f, 2, WL_G_EDP, (int[]){2}, 1);
    expect_members(&f, 2, WL_G_DP, (int[]){0, 1, 2, 3}, 4);
    teardown(&f);

    /* ep 1 and etp = tp: the expert layers replicate as the dense ones */
    s = strategy(2, 1, 2);
    s.etp = 2;
    s.cp_ring = 2;
    setup(&f, m, s);
    expect_members(&f, 5, WL_G_EDP, (int[]){1, 3, 5, 7}, 4);
    expect_members(&f, 5, WL_G_ETP, (int[]){4, 5}, 2);
    teardown(&f);
}
END_TEST

START_TEST(test_groups_agree_between_members)
{
    /* Every member of a group sees the same member list in the same order
     * (collectives match messages by position), for a 7D strategy with
     * every dimension > 1 and a fused group. */
    fixture f;
    cfg_model m = model_gpt();
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.ffn_hidden = 1024;
    m.moe.layer_freq = 1;
    cfg_strategy s = strategy(2, 2, 2);
    s.tp_y = 2;
    s.cp_ulysses = 2;
    s.cp_ring = 2;
    s.ep = 4;
    s.etp = 2;
    s.fuse_tpy_cp = true;
    s.sequence_parallel = true;
    setup(&f, m, s);
    int world = wl_world(f.plan), a[256], b[256], me, me2;
    ck_assert_int_eq(world, 64);
    for (int g = 0; g < WL_NGROUPS; g++)
        for (int r = 0; r < world; r++) {
            int n = wl_group_members(f.plan, r, (wl_group)g, a, &me);
            for (int i = 0; i < n; i++) {
                int n2 = wl_group_members(f.plan, a[i], (wl_group)g, b, &me2);
                ck_assert_int_eq(n2, n);
                ck_assert_int_eq(me2, i);
                for (int k = 0; k < n; k++)
                    ck_assert_msg(a[k] == b[k], "group %s: rank %d and %d disagree", wl_group_name((wl_group)g), r,
                                  a[i]);
            }
        }
    teardown(&f);
}
END_TEST

START_TEST(test_schedule_1f1b_counts)
{
    /* Each stage runs every micro-batch once forward and once backward;
     * 1F1B stage s starts with pp - s - 1 forwards before its first backward. */
    fixture f;
    setup(&f, model_gpt(), strategy(1, 4, 1));
    for (int st = 0; st < 4; st++) {
        totals t = walk(f.plan, st);
        int m = 8;
        ck_assert_int_eq(t.recvs, (st > 0 ? m : 0) + (st < 3 ? m : 0));
        ck_assert_int_eq(t.sends, t.recvs);
    }
    teardown(&f);
}
END_TEST

START_TEST(test_schedule_interleaved_complete)
{
    fixture f;
    cfg_strategy s = strategy(1, 2, 1);
    s.schedule = CFG_SCHED_INTERLEAVED;
    s.vpp = 2;
    setup(&f, model_gpt(), s);
    /* Every (micro, layer) of the stage appears once in forward and once in
     * backward, and the forward comes first. */
    for (int rank = 0; rank < 2; rank++) {
        int seen_f[8][8] = {{0}}, seen_b[8][8] = {{0}};
        wl_program *p = wl_program_new(f.plan, rank);
        wl_instr in;
        while (wl_program_next(p, &in)) {
            if (in.op != WL_COMPUTE || in.layer < 0 || in.micro < 0) continue;
            if (in.phase == WL_PH_FORWARD) seen_f[in.micro][in.layer] = 1;
            if (in.phase == WL_PH_BACKWARD) {
                ck_assert_int_eq(seen_f[in.micro][in.layer], 1);
                seen_b[in.micro][in.layer] = 1;
            }
        }
        wl_program_free(p);
        int layers = 0;
        for (int l = 0; l < 8; l++) {
            /* stage r holds layers of chunks (c*pp + r) */
            bool mine = ((l / 2) % 2) == rank;
            layers += mine;
            for (int mb = 0; mb < 8; mb++) {
                ck_assert_int_eq(seen_f[mb][l], mine);
                ck_assert_int_eq(seen_b[mb][l], mine);
            }
        }
        ck_assert_int_eq(layers, 4);
    }
    teardown(&f);
}
END_TEST

START_TEST(test_tp_bytes_closed_form)
{
    /* 1D TP without SP: per layer and micro-batch, 2 all-reduces forward and
     * 2 backward of b*s*h*2 bytes (Korthikanti et al. section 4.2.2). With
     * SP: the same bytes as all-gathers and reduce-scatters. */
    for (int sp = 0; sp <= 1; sp++) {
        fixture f;
        cfg_strategy s = strategy(1, 1, 4);
        s.sequence_parallel = sp;
        setup(&f, model_gpt(), s);
        totals t = walk(f.plan, 0);
        double per = 1.0 * 1024 * 1024 * 2; /* b*s*h*2 */
        int m = 8, L = 8;
        if (!sp) {
            /* + embedding all-reduce fwd, head's dgrad all-reduce bwd */
            ck_assert_double_eq_tol(t.coll_bytes[WL_G_TP][WL_ALLREDUCE] - 1024.0 * 4 * 3 * m,
                                    per * (4.0 * L + 2) * m, 1);
            ck_assert_double_eq(t.coll_bytes[WL_G_TP][WL_ALLGATHER], 0);
        } else {
            ck_assert_double_eq_tol(t.coll_bytes[WL_G_TP][WL_REDUCESCATTER], per * (4.0 * L + 2) * m, 1);
            ck_assert_double_eq_tol(t.coll_bytes[WL_G_TP][WL_ALLGATHER], per * (6.0 * L + 2) * m, 1);
        }
        teardown(&f);
    }
}
END_TEST

START_TEST(test_no_tp_no_tp_traffic)
{
    fixture f;
    setup(&f, model_gpt(), strategy(2, 1, 1));
    totals t = walk(f.plan, 0);
    ck_assert_int_eq(t.colls[WL_G_TP], 0);
    ck_assert_int_gt(t.colls[WL_G_DP], 0);
    teardown(&f);
}
END_TEST

/* A placement case: the model kind and the strategy's dimensions. */
typedef struct place_case {
    const char *what;
    bool moe, tied;
    int kv_heads;                       /* 0: as many as heads */
    int dp, pp, tp_x, tp_y, cp_ring, cp_ulysses, ep, etp, vpp;
    bool sp;
    bool mla;                           /* multi-head latent attention and one MTP module */
} place_case;

/* Small MLA widths for 16 heads: q_lora 256, kv_lora 128, nope 64, rope 32, v 64. */
static void small_mla(cfg_model *m)
{
    m->mla = (cfg_mla){.q_lora_rank = 256, .kv_lora_rank = 128, .qk_nope_head_dim = 64, .qk_rope_head_dim = 32,
                       .v_head_dim = 64};
}

static cfg_model place_model(const place_case *pc)
{
    cfg_model m = fx_dense_model(pc->vpp > 1 ? 8 : 4, 1024, 16, 4096, 32000, 1024);
    m.tied_embeddings = pc->tied;
    if (pc->kv_heads) m.kv_heads = pc->kv_heads;
    if (pc->moe) fx_moe(&m, 4, 2, 1024, 1, 2048, 1, 1); /* layer 0 dense, the others MoE, a shared expert */
    if (pc->mla) {
        small_mla(&m);
        m.mtp_layers = 1;
    }
    return m;
}

static cfg_strategy place_strategy(const place_case *pc, int zero, bool overlap)
{
    cfg_strategy s = fx_strategy(pc->dp, pc->pp, pc->tp_x, pc->pp > 1 ? 4 : 2);
    s.tp_y = pc->tp_y;
    s.cp_ring = pc->cp_ring;
    s.cp_ulysses = pc->cp_ulysses;
    s.ep = pc->ep;
    s.etp = pc->etp;
    s.sequence_parallel = pc->sp;
    if (pc->vpp > 1) {
        s.schedule = CFG_SCHED_INTERLEAVED;
        s.vpp = pc->vpp;
    }
    s.zero = zero;
    s.overlap_grad_reduce = overlap;
    return s;
}

static int group_size(const wl_plan *plan, int rank, wl_group g)
{
    int *members = malloc((size_t)wl_world(plan) * sizeof *members), me;
    ck_assert_ptr_nonnull(members);
    int n = wl_group_members(plan, rank, g, members, &me);
    free(members);
    return n;
}

/* The expert gradients run as one collective over the expert data-parallel
 * group, whatever the expert layout folds it over. */
static void edp_phase_bytes(const wl_plan *plan, int rank, double S, double out[WL_NGROUPS])
{
    memset(out, 0, WL_NGROUPS * sizeof *out);
    if (group_size(plan, rank, WL_G_EDP) > 1) out[WL_G_EDP] = S;
}

START_TEST(test_grad_sync_moves_held_params)
{
    /* For every layer kind and stage, the gradients a rank's program
     * reduces over DP and over expert DP are the parameters the memory
     * model says the rank holds (mdl_rank_memory, by sync group:
     * mdl_stage_params) times the gradient bytes: once per step; with
     * ZeRO-3 the layers' once per micro-batch (each backward
     * reduce-scatters them), the edges' once.  With ZeRO 1 and 2 the
     * parameters are gathered back, 2 bytes each. */
    static const place_case cases[] = {
        {"dense, TP 2, SP", false, false, 0, 2, 1, 2, 1, 1, 1, 1, 2, 1, true, false},
        {"dense, tied, one stage", false, true, 0, 2, 1, 2, 1, 1, 1, 1, 2, 1, false, false},
        {"dense, tied, 2 stages (copy)", false, true, 0, 2, 2, 2, 1, 1, 1, 1, 2, 1, true, false},
        {"dense, tied, 4 stages interleaved", false, true, 0, 2, 4, 1, 1, 1, 1, 1, 1, 2, false, false},
        {"dense, 2D TP and ring CP", false, false, 0, 2, 1, 2, 2, 2, 1, 1, 4, 1, false, false},
        {"dense, KV replicated over TP, Ulysses", false, false, 2, 2, 1, 4, 1, 1, 2, 1, 4, 1, true, false},
        {"MoE, EP 2, etp 1 < tp", true, false, 0, 4, 2, 2, 1, 1, 1, 2, 1, 1, true, false},
        {"MoE, EP 2, etp = tp, tied", true, true, 0, 4, 1, 2, 1, 1, 1, 2, 2, 1, false, false},
        {"MoE, EP over dp x cp, expert DP of the TP blocks only", true, false, 0, 2, 1, 2, 1, 2, 1, 4, 1, 1, true,
         false},
        {"MLA + MTP, MoE, EP 2, 2 stages (embedding copy)", true, false, 0, 2, 2, 2, 1, 1, 1, 2, 2, 1, true, true},
        {"MLA + MTP, dense, tied, one stage, Ulysses, no SP", false, true, 0, 2, 1, 2, 1, 1, 2, 1, 2, 1, false, true},
        {"MLA + MTP, MoE, etp 1 < tp, ring CP", true, false, 0, 2, 1, 2, 1, 2, 1, 4, 1, 1, true, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int zero = 0; zero <= 3; zero++)
            for (int overlap = 0; overlap <= 1; overlap++) {
                const place_case *pc = &cases[k];
                fixture f;
                setup(&f, place_model(pc), place_strategy(pc, zero, overlap));
                const cfg_model *m = &f.m;
                const cfg_strategy *s = &f.s;
                mdl_precision prec;
                mdl_precision_of(m, s, &prec);
                double gb = prec.grad_bytes, per_layer = zero == 3 ? cfg_micro_batches(s) : 1;
                ck_assert_double_eq(gb, 4.0); /* fp32 main grads by default [MDO] */
                for (int rank = 0; rank < wl_world(f.plan); rank++) {
                    int stage = wl_stage(f.plan, rank);
                    mdl_memory mm;
                    mdl_rank_memory(m, s, stage, &mm);
                    double dense, expert;
                    mdl_stage_params(m, s, stage, &dense, &expert);
                    ck_assert_double_eq_tol(dense + expert, mm.params, mm.params * 1e-12);
                    if (zero < 2) ck_assert_double_eq_tol(mm.grads_bytes, gb * mm.params, mm.grads_bytes * 1e-12);
                    mdl_held edge;
                    mdl_edge_held(m, s, stage, &edge);
                    /* the edges (the MTP module's routed experts too) reduce once */
                    double edges = mdl_held_params(&edge, MDL_SYNC_DP);
                    double edges_edp = mdl_held_params(&edge, MDL_SYNC_EDP);
                    double want_dp = gb * (per_layer * (dense - edges) + edges);
                    double want_edp[WL_NGROUPS];
                    edp_phase_bytes(f.plan, rank, gb * (per_layer * (expert - edges_edp) + edges_edp), want_edp);

                    totals got = walk(f.plan, rank);
                    for (int g = 0; g < WL_NGROUPS; g++) {
                        double want = g == WL_G_DP ? want_dp : 0.0;
                        ck_assert_msg(fabs(got.grad_bytes[g] - want) <= 1e-9 * want_dp,
                                      "%s, zero %d, overlap %d, rank %d: DP gradients on %s: %.17g bytes, "
                                      "expected %.17g",
                                      pc->what, zero, overlap, rank, wl_group_name((wl_group)g), got.grad_bytes[g], want);
                        ck_assert_msg(fabs(got.edp_grad_bytes[g] - want_edp[g]) <= 1e-9 * want_dp,
                                      "%s, zero %d, overlap %d, rank %d: expert gradients on %s: %.17g bytes, "
                                      "expected %.17g",
                                      pc->what, zero, overlap, rank, wl_group_name((wl_group)g), got.edp_grad_bytes[g],
                                      want_edp[g]);
                    }
                    if (zero == 1 || zero == 2)
                        ck_assert_msg(fabs(got.gather_bytes - m->dtype_bytes * dense) <= 1e-9 * dense,
                                      "%s, zero %d, rank %d: DP parameter gathers %.17g bytes, expected %.17g",
                                      pc->what, zero, rank, got.gather_bytes, m->dtype_bytes * dense);
                }
                teardown(&f);
            }
}
END_TEST

START_TEST(test_bf16_grad_reduce_halves_dp_bytes)
{
    /* grad_reduce_in_bf16: every gradient reduction of the program moves
     * half the bytes (2 instead of 4 per parameter), on every group, with
     * every ZeRO stage; parameter gathers and everything else unchanged;
     * main grads in memory halve too (Megatron keeps them in the buffer's
     * bf16). */
    static const place_case cases[] = {
        {"dense, TP 2, SP, 2 stages", false, false, 0, 2, 2, 2, 1, 1, 1, 1, 2, 1, true, false},
        {"MoE, EP 2, etp 1 < tp", true, false, 0, 4, 2, 2, 1, 1, 1, 2, 1, 1, true, false},
        {"dense, 2D TP and ring CP", false, false, 0, 2, 1, 2, 2, 2, 1, 1, 4, 1, false, false},
        {"MLA and a prediction module, TP 2, SP", false, false, 0, 2, 1, 2, 1, 1, 1, 1, 2, 1, true, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int zero = 0; zero <= 3; zero++) {
            totals t[2];
            mdl_memory mm[2];
            fixture f[2];
            for (int bf16 = 0; bf16 <= 1; bf16++) {
                cfg_strategy s = place_strategy(&cases[k], zero, zero % 2 == 0);
                s.grad_reduce_in_bf16 = bf16;
                setup(&f[bf16], place_model(&cases[k]), s);
            }
            for (int rank = 0; rank < wl_world(f[0].plan); rank++) {
                for (int bf16 = 0; bf16 <= 1; bf16++) {
                    t[bf16] = walk(f[bf16].plan, rank);
                    mdl_rank_memory(&f[bf16].m, &f[bf16].s, wl_stage(f[bf16].plan, rank), &mm[bf16]);
                }
                double moved = 0;
                for (int g = 0; g < WL_NGROUPS; g++) {
                    ck_assert(fabs(t[1].grad_bytes[g] - t[0].grad_bytes[g] / 2) <= 1e-9 * t[0].grad_bytes[g]);
                    ck_assert(fabs(t[1].edp_grad_bytes[g] - t[0].edp_grad_bytes[g] / 2) <=
                              1e-9 * t[0].edp_grad_bytes[g]);
                    moved += t[0].grad_bytes[g] + t[0].edp_grad_bytes[g];
                }
                if (f[0].s.dp * f[0].s.cp_ring > 1) ck_assert(moved > 0); /* the case has DP traffic */
                ck_assert_double_eq(t[1].gather_bytes, t[0].gather_bytes);
                ck_assert(fabs(mm[1].grads_bytes - mm[0].grads_bytes / 2) <= 1e-9 * mm[0].grads_bytes);
                ck_assert_double_eq(mm[1].weights_bytes, mm[0].weights_bytes);
                ck_assert_double_eq(mm[1].optimizer_bytes, mm[0].optimizer_bytes);
            }
            teardown(&f[0]);
            teardown(&f[1]);
        }
}
END_TEST

/* Seconds and counts of one rank's compute ops, by label name. */
typedef struct by_label {
    double s[64];
    int n[64];
} by_label;

static void compute_by_label(const wl_plan *plan, int rank, by_label *out)
{
    memset(out, 0, sizeof *out);
    wl_program *p = wl_program_new(plan, rank);
    wl_instr in;
    while (wl_program_next(p, &in))
        if (in.op == WL_COMPUTE && in.label < 64) {
            out->s[in.label] += in.seconds;
            out->n[in.label]++;
        }
    wl_program_free(p);
}

static int label_of(const char *name)
{
    for (int l = 0; l < 64; l++)
        if (!strcmp(wl_label_name(l), name)) return l;
    ck_abort_msg("no label %s", name);
    return -1;
}

/* The compute seconds by label of rank 0 of strategy s on platform(1)
 * with a GEMM curve of (1e6, 0.3), (1e8, 0.6), (1e9, 0.8), FP8 at twice the
 * peak (own: with its own FP8 curve of 0.5) and MXFP8 at four times. */
static void fp8_times(const cfg_model *m, const cfg_strategy *s, bool own, by_label *out)
{
    cfg_platform p = platform(1);
    double x[] = {1e6, 1e8, 1e9}, y[] = {0.3, 0.6, 0.8};
    for (int i = 0; i < 3; i++) p.gemm_efficiency.x[i] = x[i], p.gemm_efficiency.y[i] = y[i];
    p.fp8_peak_flops_per_s = 2 * p.peak_flops_per_s;
    p.mxfp8_peak_flops_per_s = 4 * p.peak_flops_per_s;
    if (own) p.gemm_fp8_efficiency = (cfg_curve){.n = 1, .x = {1e9}, .y = {0.5}};
    sim_err err;
    cost_model *c = cost_new(&p, &err);
    ck_assert_ptr_nonnull(c);
    wl_plan *plan;
    ck_assert_msg(wl_plan_new(m, &p, s, c, &plan, &err) == SIM_OK, "%s", err.msg);
    compute_by_label(plan, 0, out);
    wl_plan_free(plan);
    cost_free(c);
}

START_TEST(test_fp8_gemms_by_the_peaks_ratio)
{
    /* A GEMM-bound layer: every linear layer's GEMM (forward, input and
     * weight gradients) is compute bound at the top of the curves, so with
     * fp8 each takes (peak x efficiency) / (FP8 peak x FP8 efficiency) of
     * its bf16 time: 1/2 with the derived FP8 curve (the GEMM curve at
     * twice the FLOPs) and an FP8 peak twice the peak; 0.8 / (2 x 0.5) with
     * an FP8 curve of its own at 0.5.  FP8 casts appear only with fp8, one
     * per GEMM input in forward and per output gradient in backward, e + 2
     * bytes per element; every other op keeps its time. */
    cfg_model m = fx_dense_model(2, 2048, 16, 8192, 32000, 1024);
    for (int own = 0; own <= 1; own++) {
        by_label t[2];
        for (int f8 = 0; f8 <= 1; f8++) {
            cfg_strategy s = strategy(1, 1, 1);
            s.global_batch = 2;
            s.fp8 = f8;
            fp8_times(&m, &s, own, &t[f8]);
        }
        double ratio = own ? 0.8 / (2 * 0.5) : 0.5, ovh = platform(1).kernel_overhead_s;
        const char *gemms[] = {"qkv", "proj", "fc1", "fc2"};
        for (int g = 0; g < 4; g++) {
            int l = label_of(gemms[g]);
            ck_assert_int_eq(t[0].n[l], t[1].n[l]);
            ck_assert_int_gt(t[0].n[l], 0);
            /* half the ops are forward (one GEMM), half backward (two: input and weight gradients) */
            double gemm_ops = 1.5 * t[0].n[l];
            double b = t[0].s[l] - gemm_ops * ovh, f = t[1].s[l] - gemm_ops * ovh;
            ck_assert_msg(fabs(f / b - ratio) <= 1e-9, "%s: fp8/bf16 = %.12g, expected %.12g", gemms[g], f / b, ratio);
        }
        int cast = label_of("fp8_cast");
        ck_assert_int_eq(t[0].n[cast], 0);
        ck_assert_int_eq(t[1].n[cast], 2 * m.layers * 4 * cfg_micro_batches(&(cfg_strategy){.global_batch = 2,
                                                                                            .dp = 1, .micro_batch = 1}));
        /* per micro-batch and layer: forward the inputs of QKV (h), projection (q = h), FC1 (h), FC2 (f);
         * backward the output gradients of QKV (3h), projection (h), FC1 (f), FC2 (h) */
        double tok = m.seq_len, h = m.hidden, f = m.ffn_hidden, e = 2.0, hbm = 2e12 * 0.8;
        double elems = tok * (h + h + h + f) + tok * (3 * h + h + f + h);
        double want = 2 * m.layers * (elems * (e + 2) / hbm) + t[1].n[cast] * ovh;
        ck_assert_msg(fabs(t[1].s[cast] - want) <= 1e-9 * want, "casts %.12g s, expected %.12g", t[1].s[cast], want);
        const char *same[] = {"attention", "norm", "residual", "activation", "embedding", "logits", "loss"};
        for (int k = 0; k < 7; k++) {
            int l = label_of(same[k]);
            ck_assert_msg(t[1].s[l] == t[0].s[l], "%s changed with fp8", same[k]);
        }
    }
}
END_TEST

START_TEST(test_tied_embedding_syncs_once)
{
    /* Tied embeddings on one stage: one copy, so V*h/t fewer gradients
     * reduced over DP than untied; with pp > 1 the last stage reduces its
     * copy, as the untied output layer. */
    for (int pp = 1; pp <= 2; pp++) {
        double dp_bytes[2];
        for (int tied = 0; tied <= 1; tied++) {
            place_case pc = {"", false, tied, 0, 2, pp, 2, 1, 1, 1, 1, 2, 1, true, false};
            fixture f;
            setup(&f, place_model(&pc), place_strategy(&pc, 1, true));
            int last = (pp - 1) * wl_strategy_stride(&f.s, CFG_DIM_PP);
            dp_bytes[tied] = walk(f.plan, last).grad_bytes[WL_G_DP];
            teardown(&f);
        }
        double vh = 32000.0 * 1024 / 2 * 4.0, fewer = dp_bytes[0] - dp_bytes[1]; /* fp32 grads */
        ck_assert_double_eq_tol(fewer, pp == 1 ? vh : 0.0, 1e-3);
    }
}
END_TEST

/* The FP8 recipes on one GEMM-bound layer: every linear layer's GEMM runs
 * at the FP8 peak (delayed, tensorwise, blockwise: the delayed time) or at
 * the MXFP8 peak (mxfp8: here twice the FP8 peak, so half the time at the
 * top of the curve); each cast moves its recipe's bytes per element:
 * e + 2 (delayed), 2e + 2 (tensorwise: the amax pass reads the tensor
 * again), e + 2 (1 + 1/32) (blockwise: an fp32 scale per 128; mxfp8: a
 * byte per 32), both layouts written. */
START_TEST(test_fp8_recipes_gemms_and_casts)
{
    cfg_model m = fx_dense_model(2, 2048, 16, 8192, 32000, 1024);
    by_label t[CFG_NFP8_RECIPES];
    for (int r = 0; r < CFG_NFP8_RECIPES; r++) {
        cfg_strategy s = strategy(1, 1, 1);
        s.global_batch = 2;
        s.fp8 = true;
        s.fp8_recipe = (cfg_fp8_recipe)r;
        fp8_times(&m, &s, false, &t[r]);
    }
    double ovh = platform(1).kernel_overhead_s, e = 2.0, hbm = 2e12 * 0.8;
    const char *gemms[] = {"qkv", "proj", "fc1", "fc2"};
    for (int r = 0; r < CFG_NFP8_RECIPES; r++) {
        double ratio = r == CFG_FP8_MXFP8 ? 0.5 : 1.0;
        for (int g = 0; g < 4; g++) {
            int l = label_of(gemms[g]);
            double gemm_ops = 1.5 * t[0].n[l];
            double d = t[0].s[l] - gemm_ops * ovh, x = t[r].s[l] - gemm_ops * ovh;
            ck_assert_msg(fabs(x / d - ratio) <= 1e-9, "%s %s: %.12g of delayed, expected %.12g",
                          cfg_fp8_recipe_name((cfg_fp8_recipe)r), gemms[g], x / d, ratio);
        }
        double per_elem[] = {e + 2, 2 * e + 2, e + 2 * (1 + 4.0 / 128), e + 2 * (1 + 1.0 / 32)}; /* ORDER CFG_FP8_RECIPE */
        int cast = label_of("fp8_cast");
        double tok = m.seq_len, h = m.hidden, f = m.ffn_hidden;
        double elems = tok * (h + h + h + f) + tok * (3 * h + h + f + h);
        double want = 2 * m.layers * (elems * per_elem[r] / hbm) + t[r].n[cast] * ovh;
        ck_assert_msg(fabs(t[r].s[cast] - want) <= 1e-9 * want, "%s casts %.12g s, expected %.12g",
                      cfg_fp8_recipe_name((cfg_fp8_recipe)r), t[r].s[cast], want);
    }
}
END_TEST

START_TEST(test_recompute_adds_forward_time)
{
    fixture f1, f2, f3;
    cfg_strategy s = strategy(1, 1, 1);
    setup(&f1, model_gpt(), s);
    s.recompute = CFG_RECOMP_SELECTIVE;
    setup(&f2, model_gpt(), s);
    s.recompute = CFG_RECOMP_FULL;
    setup(&f3, model_gpt(), s);
    double ph1[WL_NPHASES], ph2[WL_NPHASES], ph3[WL_NPHASES];
    double t1 = wl_rank_compute_s(f1.plan, 0, ph1);
    double t2 = wl_rank_compute_s(f2.plan, 0, ph2);
    double t3 = wl_rank_compute_s(f3.plan, 0, ph3);
    ck_assert_double_eq(ph1[WL_PH_RECOMPUTE], 0);
    ck_assert(t1 < t2 && t2 < t3);
    /* full recompute redoes every layer's forward (not embedding/logits) */
    ck_assert(ph3[WL_PH_RECOMPUTE] < ph3[WL_PH_FORWARD]);
    ck_assert(ph3[WL_PH_RECOMPUTE] > 0.7 * ph3[WL_PH_FORWARD]);
    teardown(&f1);
    teardown(&f2);
    teardown(&f3);
}
END_TEST

/* Collectives rank 0 runs on group g in the recompute phase. */
static int recompute_colls(const wl_plan *plan, wl_group g)
{
    wl_program *p = wl_program_new(plan, 0);
    wl_instr in;
    int n = 0;
    while (wl_program_next(p, &in)) n += in.op == WL_COLL && in.group == g && in.phase == WL_PH_RECOMPUTE;
    wl_program_free(p);
    return n;
}

START_TEST(test_recompute_modules_ops)
{
    /* recompute_modules: "moe" runs each MoE layer's block again before its
     * backward, dispatch and combine included (2 all-to-alls per layer and
     * micro-batch); "core_attn" (the default) and "moe_act" repeat no
     * collective; each module adds recompute time */
    cfg_strategy s = strategy(2, 1, 1);
    s.ep = 2;
    s.recompute = CFG_RECOMP_SELECTIVE;
    const char *mods[] = {"", "core_attn,moe_act", "core_attn,moe"};
    cfg_model m = model_gpt();
    fx_moe(&m, 8, 2, 1024, 0, 2048, 0, 1);
    double rec[3];
    for (int i = 0; i < 3; i++) {
        fixture f;
        sim_strlcpy(s.recompute_modules, mods[i], sizeof s.recompute_modules);
        setup(&f, m, s);
        int want = i == 2 ? 2 * f.m.layers * cfg_micro_batches(&s) : 0;
        ck_assert_int_eq(recompute_colls(f.plan, WL_G_EP), want);
        double ph[WL_NPHASES];
        wl_rank_compute_s(f.plan, 0, ph);
        rec[i] = ph[WL_PH_RECOMPUTE];
        teardown(&f);
    }
    ck_assert(rec[0] > 0 && rec[0] < rec[1] && rec[1] < rec[2]);
}
END_TEST

START_TEST(test_overlap_uses_stream_and_waits)
{
    fixture f;
    cfg_strategy s = strategy(2, 1, 1);
    s.zero = 1;
    s.overlap_param_gather = true;
    setup(&f, model_gpt(), s);
    wl_program *p = wl_program_new(f.plan, 0);
    wl_instr in;
    unsigned issued = 0, last_wait = 0;
    while (wl_program_next(p, &in)) {
        if (in.op == WL_COLL && in.stream == WL_S_DP) issued++;
        if (in.op == WL_WAIT) {
            ck_assert_uint_le(in.seq, issued);
            last_wait = in.seq;
        }
    }
    wl_program_free(p);
    ck_assert_uint_gt(issued, 0);
    ck_assert_uint_eq(last_wait, issued); /* the final wait covers every gradient */
    teardown(&f);
}
END_TEST

/* Bytes of the collectives of layer 0, micro-batch 0, forward, on rank 0,
 * by group and kind. */
typedef struct layer_bytes {
    double b[WL_NGROUPS][4];
} layer_bytes;

static layer_bytes forward_layer_bytes(const wl_plan *plan, int layer)
{
    layer_bytes lb;
    memset(&lb, 0, sizeof lb);
    wl_program *p = wl_program_new(plan, 0);
    wl_instr in;
    while (wl_program_next(p, &in))
        if (in.op == WL_COLL && in.layer == layer && in.micro == 0 && in.phase == WL_PH_FORWARD)
            lb.b[in.group][in.coll] += in.bytes;
    wl_program_free(p);
    return lb;
}

START_TEST(test_2d_tp_bytes_closed_form)
{
    /* tp_x = 2, tp_y = 2: the first GEMM of a block gathers over tp_x
     * (tok * K / tp_y) and reduce-scatters over tp_y (tok * N / tp_x), the
     * second the other way round; heads re-shard over tp_y around attention;
     * norm statistics are all-reduced over tp_y. */
    fixture f;
    cfg_strategy s = strategy(1, 1, 2);
    s.tp_y = 2;
    s.sequence_parallel = true;
    cfg_model m = model_gpt();
    setup(&f, m, s);
    layer_bytes lb = forward_layer_bytes(f.plan, 0);
    double tok = 1024, h = 1024, q = 1024, qkv = 3 * 1024.0, ff = 4096, X = 2, Y = 2, db = 2;
    double ag_x = tok * h / Y * db * 2;                 /* before QKV and FC1 */
    double rs_y = tok * qkv / X * db + tok * ff / X * db; /* after QKV and FC1 */
    double ag_y = tok * q / X * db + tok * ff / X * db;   /* before proj and FC2 */
    double rs_x = tok * h / Y * db * 2;                 /* after proj and FC2 */
    double a2a = tok / Y * qkv / X * db + tok / Y * q / X * db;
    double norm = 2 * (tok / (X * Y)) * Y * 2 * 4;
    ck_assert_double_eq_tol(lb.b[WL_G_TPX][WL_ALLGATHER], ag_x, 1e-6);
    ck_assert_double_eq_tol(lb.b[WL_G_TPY][WL_REDUCESCATTER], rs_y, 1e-6);
    ck_assert_double_eq_tol(lb.b[WL_G_TPY][WL_ALLGATHER], ag_y, 1e-6);
    ck_assert_double_eq_tol(lb.b[WL_G_TPX][WL_REDUCESCATTER], rs_x, 1e-6);
    ck_assert_double_eq_tol(lb.b[WL_G_TPY][WL_ALLTOALL], a2a, 1e-6);
    ck_assert_double_eq_tol(lb.b[WL_G_TPY][WL_ALLREDUCE], norm, 1e-6);
    ck_assert_double_eq(lb.b[WL_G_TP][WL_ALLREDUCE], 0);
    teardown(&f);
}
END_TEST

START_TEST(test_2d_tp_with_tpy_1_is_1d_sp)
{
    /* tp_y = 1 gives 1D TP with SP exactly: same ops, same times, the TP
     * collectives on the tp_x group (which is then the whole TP group). */
    fixture a, b;
    cfg_strategy s = strategy(1, 1, 4);
    s.sequence_parallel = true;
    setup(&a, model_gpt(), s);
    totals ta = walk(a.plan, 0);
    layer_bytes la = forward_layer_bytes(a.plan, 0);
    double tok = 1024, h = 1024, db = 2;
    ck_assert_double_eq_tol(la.b[WL_G_TPX][WL_ALLGATHER], 2 * tok * h * db, 1e-6);
    ck_assert_double_eq_tol(la.b[WL_G_TPX][WL_REDUCESCATTER], 2 * tok * h * db, 1e-6);
    ck_assert_int_eq(la.b[WL_G_TPY][WL_ALLTOALL], 0);
    /* the same strategy with tp_x and tp_y swapped roles is not 1D: more ops */
    s.tp_x = 2;
    s.tp_y = 2;
    setup(&b, model_gpt(), s);
    totals tb = walk(b.plan, 0);
    ck_assert_int_gt(tb.colls[WL_G_TP], ta.colls[WL_G_TP]);
    /* same per-rank GEMM FLOPs: compute within 25% (GEMM shapes differ) */
    ck_assert_double_eq_tol(tb.compute_s / ta.compute_s, 1.0, 0.25);
    teardown(&a);
    teardown(&b);
}
END_TEST

START_TEST(test_cp_bytes_closed_form)
{
    /* Ring: K and V blocks of every ring member gathered once per layer
     * forward (cp_ring * tok * 2 * kv_heads * d / tp * 2 bytes). Ulysses: an
     * all-to-all of Q,K,V and one of the output. */
    fixture fr, fu;
    cfg_strategy s = strategy(1, 1, 2);
    s.sequence_parallel = true;
    s.cp_ring = 2;
    setup(&fr, model_gpt(), s);
    layer_bytes lr = forward_layer_bytes(fr.plan, 0);
    double tok = 1024.0 / 2, db = 2, kv = 2 * 1024.0, q = 1024, t = 2;
    ck_assert_double_eq_tol(lr.b[WL_G_CPR][WL_ALLGATHER], 2 * tok * kv / t * db, 1e-6);
    ck_assert_double_eq(lr.b[WL_G_CPU][WL_ALLTOALL], 0);
    s.cp_ring = 1;
    s.cp_ulysses = 2;
    setup(&fu, model_gpt(), s);
    layer_bytes lu = forward_layer_bytes(fu.plan, 0);
    ck_assert_double_eq_tol(lu.b[WL_G_CPU][WL_ALLTOALL], tok * (q + kv) / t * db + tok * q / t * db, 1e-6);
    ck_assert_double_eq(lu.b[WL_G_CPR][WL_ALLGATHER], 0);
    teardown(&fr);
    teardown(&fu);
}
END_TEST

START_TEST(test_fusion_merges_all_to_alls)
{
    fixture f;
    cfg_strategy s = strategy(1, 1, 2);
    s.tp_y = 2;
    s.cp_ulysses = 2;
    s.fuse_tpy_cp = true;
    setup(&f, model_gpt(), s);
    layer_bytes lb = forward_layer_bytes(f.plan, 0);
    ck_assert_double_gt(lb.b[WL_G_FUSED][WL_ALLTOALL], 0);
    ck_assert_double_eq(lb.b[WL_G_TPY][WL_ALLTOALL], 0);
    ck_assert_double_eq(lb.b[WL_G_CPU][WL_ALLTOALL], 0);
    int members[64], me;
    ck_assert_int_eq(wl_group_members(f.plan, 0, WL_G_FUSED, members, &me), 4);
    teardown(&f);
}
END_TEST

START_TEST(test_ep_bytes_closed_form)
{
    /* Dispatch and combine: each an all-to-all of the rank's routed copies,
     * tok/tp * top_k * capacity * hidden * 2 bytes; ep = 1 has none. */
    cfg_model m = model_gpt();
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.ffn_hidden = 1024;
    m.moe.layer_freq = 1;
    cfg_strategy s = strategy(4, 1, 2);
    s.sequence_parallel = true;
    s.ep = 4;
    s.etp = 1;
    s.moe_capacity_factor = 1.25;
    s.moe_pad_expert_input_to_capacity = true;
    fixture f, g;
    setup(&f, m, s);
    layer_bytes lb = forward_layer_bytes(f.plan, 0);
    double routed = 1024.0 / 2 * 2 * 1.25;
    ck_assert_double_eq_tol(lb.b[WL_G_EP][WL_ALLTOALL], 2 * routed * 1024 * 2, 1e-6);
    ck_assert_double_eq(lb.b[WL_G_ETP][WL_ALLGATHER], 0);
    s.ep = 1;
    setup(&g, m, s);
    layer_bytes lg = forward_layer_bytes(g.plan, 0);
    ck_assert_double_eq(lg.b[WL_G_EP][WL_ALLTOALL], 0);
    teardown(&f);
    teardown(&g);
}
END_TEST

/* platform(), but a GEMM or an attention of F FLOPs takes exactly
 * F / (peak / 2): flat efficiency, no kernel overhead, memory for free. */
static cfg_platform flat_platform(int devices)
{
    cfg_platform p = platform(devices);
    for (int i = 0; i < p.gemm_efficiency.n; i++) p.gemm_efficiency.y[i] = 0.5;
    p.attention_efficiency = 0.5;
    p.hbm_bytes_per_s = 1e30;
    p.kernel_overhead_s = 0;
    return p;
}

/* Forward FLOPs of one micro-batch on one rank, as its program's compute
 * seconds on flat_platform say: per layer (layer_flops[l], l < nlayers),
 * the edges' (layer -1) and the core attention's (label "attention"). */
static void forward_flops(const wl_plan *plan, int rank, double *layer_flops, int nlayers, double *edge_flops,
                          double *attention_flops)
{
    double per_s = 312e12 * 0.5;
    memset(layer_flops, 0, (size_t)nlayers * sizeof *layer_flops);
    *edge_flops = *attention_flops = 0;
    wl_program *p = wl_program_new(plan, rank);
    wl_instr in;
    while (wl_program_next(p, &in)) {
        if (in.op != WL_COMPUTE || in.phase != WL_PH_FORWARD || in.micro != 0) continue;
        if (in.layer >= 0) {
            ck_assert_int_lt(in.layer, nlayers);
            layer_flops[in.layer] += in.seconds * per_s;
        } else {
            *edge_flops += in.seconds * per_s;
        }
        if (!strcmp(wl_label_name(in.label), "attention") && in.layer == 0) *attention_flops += in.seconds * per_s;
    }
    wl_program_free(p);
}

START_TEST(test_layer_gemms_are_model_flops)
{
    /* On one device, the forward GEMMs and attention a layer's ops run are
     * the model's FLOPs of that layer (mdl_layer_forward_flops), for every
     * attention (MHA, GQA, MLA with and without query compression), every
     * activation, windowed and full layers, dense and MoE; the edges are
     * the logits, and with MTP the module's projection, layer and logits. */
    for (int k = 0; k < 6; k++) {
        cfg_model m = fx_dense_model(6, 1024, 16, 4096, 32000, 2048);
        m.activation = CFG_ACT_SWIGLU;
        fx_moe(&m, 4, 2, 1024, 1, 2048, 2, 2);
        if (k == 0 || k == 1) {
            small_mla(&m);
            if (k == 1) m.mla.q_lora_rank = 0;
            m.mtp_layers = 1;
        }
        if (k == 2) m.kv_heads = 4, m.activation = CFG_ACT_SQUARED_RELU;
        if (k == 3) m.activation = CFG_ACT_GEGLU, m.window = (cfg_window){1000, 3, CFG_WINDOW_SLIDING};
        if (k == 4) m.activation = CFG_ACT_RELU, m.window = (cfg_window){512, 0, CFG_WINDOW_CHUNKED};
        if (k == 5) m.activation = CFG_ACT_GELU, m.moe.experts = 0;
        fixture f;
        cfg_strategy s = strategy(1, 1, 1);
        f.m = m;
        f.s = s;
        f.p = flat_platform(1);
        sim_err err;
        f.c = cost_new(&f.p, &err);
        ck_assert_ptr_nonnull(f.c);
        ck_assert_int_eq(wl_plan_new(&f.m, &f.p, &f.s, f.c, &f.plan, &err), SIM_OK);
        double tok = m.seq_len, got[6], edges, attention;
        forward_flops(f.plan, 0, got, 6, &edges, &attention);
        for (int l = 0; l < 6; l++) {
            double want = mdl_layer_forward_flops(&m, l, tok);
            ck_assert_msg(fabs(got[l] - want) <= 1e-9 * want, "case %d, layer %d: %.17g FLOPs, expected %.17g", k, l,
                          got[l], want);
        }
        double logits = 2.0 * tok * m.hidden * m.vocab;
        double want = logits;
        for (int d = 0; d < m.mtp_layers; d++)
            want += 2.0 * tok * 2 * m.hidden * m.hidden + mdl_layer_forward_flops(&m, m.layers + d, tok) + logits;
        ck_assert_msg(fabs(edges - want) <= 1e-9 * want, "case %d: edges %.17g FLOPs, expected %.17g", k, edges, want);
        teardown(&f);
    }

    /* Attention at 32K with DeepSeek-V3's MLA heads: 128 heads, scores over
     * nope 128 + rope 64, values 128; causal: s/2 keys per query */
    cfg_model m = fx_dense_model(1, 1024, 128, 4096, 32000, 32768);
    m.mla = (cfg_mla){.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64,
                      .v_head_dim = 128};
    fixture f;
    f.m = m;
    f.s = strategy(1, 1, 1);
    f.p = flat_platform(1);
    sim_err err;
    f.c = cost_new(&f.p, &err);
    ck_assert_int_eq(wl_plan_new(&f.m, &f.p, &f.s, f.c, &f.plan, &err), SIM_OK);
    double layer, edges, attention, s = 32768;
    forward_flops(f.plan, 0, &layer, 1, &edges, &attention);
    double want = 2.0 * s * (s / 2) * 128 * ((128 + 64) + 128);
    ck_assert_msg(fabs(attention - want) <= 1e-9 * want, "%.17g, expected %.17g", attention, want);
    teardown(&f);
}
END_TEST

START_TEST(test_doubling_dimensions_divides_compute)
{
    /* Doubling tp or cp roughly halves a rank's compute (GEMM efficiency
     * moves a little with the shapes); doubling dp with the global batch
     * leaves it unchanged. */
    fixture a, b, c, d;
    cfg_strategy s = strategy(1, 1, 2);
    s.sequence_parallel = true;
    setup(&a, model_gpt(), s);
    s.tp_x = 4;
    setup(&b, model_gpt(), s);
    s.tp_x = 2;
    s.cp_ring = 2;
    setup(&c, model_gpt(), s);
    s.cp_ring = 1;
    s.dp = 2;
    s.global_batch = 16; /* same micro-batches per replica */
    setup(&d, model_gpt(), s);
    double ta = wl_rank_compute_s(a.plan, 0, NULL), tb = wl_rank_compute_s(b.plan, 0, NULL);
    double tc = wl_rank_compute_s(c.plan, 0, NULL), td = wl_rank_compute_s(d.plan, 0, NULL);
    ck_assert(tb < ta && tb > 0.45 * ta && tb < 0.65 * ta);
    ck_assert(tc < ta && tc > 0.45 * ta && tc < 0.65 * ta);
    ck_assert_double_eq_tol(td / ta, 1.0, 0.01);
    teardown(&a);
    teardown(&b);
    teardown(&c);
    teardown(&d);
}
END_TEST

/* Forward compute of the transformer layers in one rank's program: the
 * seconds, and which layers ran (seen[l] counts their compute ops). */
static double layer_forward_s(const wl_plan *plan, int rank, int *seen, int nlayers)
{
    double sum = 0;
    wl_program *p = wl_program_new(plan, rank);
    wl_instr in;
    while (wl_program_next(p, &in)) {
        if (in.op != WL_COMPUTE || in.phase != WL_PH_FORWARD || in.layer < 0) continue;
        ck_assert_int_lt(in.layer, nlayers);
        sum += in.seconds;
        seen[in.layer]++;
    }
    wl_program_free(p);
    return sum;
}

/* Uneven stages (first_stage_layers / last_stage_layers): each stage's
 * program runs the forward of exactly its own layers (cfg_stage_layers),
 * its layer compute is proportional to its layer count, and the layers'
 * compute summed over the stages equals the even split's. */
START_TEST(test_uneven_stage_programs)
{
    for (int k = 0; k < 3; k++) {
        cfg_model m = model_gpt();
        cfg_strategy s = strategy(1, 4, 1);
        if (k == 0) { /* 1 + 3 + 3 + 3 */
            m.layers = 10;
            s.first_stage_layers = 1;
        } else if (k == 2) { /* a layout, interleaved: chunks 3 2 2 2 | 2 2 2 1 */
            m.layers = 16;
            s.schedule = CFG_SCHED_INTERLEAVED;
            s.vpp = 2;
            sim_strlcpy(s.pipeline_layout, "Et*3|(tt|)*6,tL", sizeof s.pipeline_layout);
        } else { /* interleaved: 2 + 4 + 4 + 2 in chunks of 1, 2, 2, 1 */
            m.layers = 12;
            s.schedule = CFG_SCHED_INTERLEAVED;
            s.vpp = 2;
            s.first_stage_layers = s.last_stage_layers = 2;
        }
        fixture f;
        setup(&f, m, s);
        int seen_all[16] = {0};
        double per_layer = 0, total = 0;
        for (int st = 0; st < s.pp; st++) {
            int seen[16] = {0};
            int rank = st * wl_strategy_stride(&s, CFG_DIM_PP);
            ck_assert_int_eq(wl_stage(f.plan, rank), st);
            double t = layer_forward_s(f.plan, rank, seen, m.layers);
            int n = cfg_stage_layer_total(&m, &s, st);
            total += t;
            /* the program's layers are the stage's ranges, each once per micro-batch */
            int in_range = 0;
            for (int j = 0; j < cfg_stage_chunks(&s); j++) {
                int first, cnt = cfg_stage_layers(&m, &s, st, j, &first);
                for (int l = first; l < first + cnt; l++, in_range++) ck_assert(seen[l] > 0);
            }
            ck_assert_int_eq(in_range, n);
            int ran = 0;
            for (int l = 0; l < m.layers; l++) {
                if (seen[l]) ran++;
                seen_all[l] += seen[l];
            }
            ck_assert_int_eq(ran, n);
            /* forward time proportional to the layer count */
            if (st == 0)
                per_layer = t / n;
            else
                ck_assert_double_eq_tol(t / n, per_layer, per_layer * 1e-12);
        }
        /* every layer on exactly one stage: the same forward ops, every micro-batch */
        ck_assert_int_eq(seen_all[0] % cfg_micro_batches(&s), 0);
        for (int l = 0; l < m.layers; l++) ck_assert_int_eq(seen_all[l], seen_all[0]);
        teardown(&f);

        /* the same model split evenly over 2 stages: same layer compute in all */
        cfg_strategy e = strategy(1, 2, 1);
        fixture g;
        setup(&g, m, e);
        double even = 0;
        for (int st = 0; st < 2; st++) {
            int seen[16] = {0};
            even += layer_forward_s(g.plan, st * wl_strategy_stride(&e, CFG_DIM_PP), seen, m.layers);
        }
        ck_assert_double_eq_tol(total, even, even * 1e-12);
        teardown(&g);
    }
}
END_TEST

/* Seconds of layer 0's forward, micro-batch 0, on rank 0, replayed naively:
 * computes and blocking collectives (bytes * s_per_byte) one after the other,
 * an async collective starts at once and ends s_per_byte * bytes later on its
 * stream, a wait blocks until everything issued on its stream is done.
 * label_s (if not NULL) sums the compute seconds of one label. */
static double naive_layer_fwd_s(const wl_plan *plan, double s_per_byte, const char *label, double *label_s,
                                double *ep_bytes)
{
    double now = 0, free_at[WL_NSTREAMS] = {0};
    if (label_s) *label_s = 0;
    if (ep_bytes) *ep_bytes = 0;
    wl_program *p = wl_program_new(plan, 0);
    wl_instr in;
    while (wl_program_next(p, &in)) {
        if (in.layer != 0 || in.micro != 0 || in.phase != WL_PH_FORWARD) continue;
        if (in.op == WL_COMPUTE) {
            now += in.seconds;
            if (label_s && !strcmp(wl_label_name(in.label), label)) *label_s += in.seconds;
        } else if (in.op == WL_COLL) {
            double t = in.bytes * s_per_byte;
            if (ep_bytes && in.group == WL_G_EP) *ep_bytes += in.bytes;
            if (in.stream == WL_S_MAIN) {
                now += t;
            } else {
                free_at[in.stream] = fmax(now, free_at[in.stream]) + t;
            }
        } else if (in.op == WL_WAIT && in.stream != WL_S_MAIN) {
            now = fmax(now, free_at[in.stream]);
        }
    }
    wl_program_free(p);
    return now;
}

/* setup() on flat_platform. */
static void setup_flat(fixture *f, cfg_model m, cfg_strategy s)
{
    setup_on(f, m, s, flat_platform(cfg_world_size(&s)));
}

static cfg_model moe_model(int shared)
{
    cfg_model m = model_gpt();
    fx_moe(&m, 8, 2, 1024, shared, 2048, 0, 1);
    return m;
}

/* moe_load_imbalance 1.5: the busiest EP rank's expert GEMMs (flat
 * platform: FLOPs / (peak/2), closed form) and its dispatch and combine
 * bytes are 1.5 times the balanced ones. */
START_TEST(test_moe_imbalance_scales_busiest_rank)
{
    cfg_model m = moe_model(0);
    cfg_strategy s = strategy(4, 1, 1);
    s.ep = 4;
    double experts_s[2], ep_bytes[2], other_s[2];
    for (int k = 0; k < 2; k++) {
        s.moe_load_imbalance = k ? 1.5 : 1.0;
        fixture f;
        setup_flat(&f, m, s);
        double all = naive_layer_fwd_s(f.plan, 0, "experts", &experts_s[k], &ep_bytes[k]);
        other_s[k] = all - experts_s[k];
        teardown(&f);
    }
    /* 2 local experts, each on tok * top_k * load / local copies: up (h -> f)
     * and down (f -> h) GEMMs, 2 FLOPs per multiply-add; gelu (2 matrices) */
    double tok = 1024, h = 1024, fe = 1024, load = 1.5;
    double flops = 2 * (tok * 2 * load) * h * fe * 2;
    ck_assert_double_eq_tol(experts_s[1], flops / (312e12 * 0.5), flops / (312e12 * 0.5) * 1e-9);
    ck_assert_double_eq_tol(experts_s[1], 1.5 * experts_s[0], experts_s[0] * 1e-9);
    ck_assert_double_eq_tol(ep_bytes[1], 1.5 * ep_bytes[0], ep_bytes[0] * 1e-12);
    ck_assert_double_eq_tol(ep_bytes[1], 2 * tok * 2 * load * h * 2, 1e-6);
    /* the router and the attention block do not move (memory is free on the flat platform) */
    ck_assert_double_eq_tol(other_s[1], other_s[0], other_s[0] * 1e-12);
}
END_TEST

/* overlap_shared_experts: the dispatch and combine go on the EP stream
 * while the shared expert's first and second linear compute, so the layer's
 * forward is shorter by min(A2A, shared linear) for each all-to-all, with
 * the all-to-all shorter (small s_per_byte) or longer than the linear. */
/* C(n, 2), for the closed forms of the dispatchers. */
static double pairs(double n) { return n * (n - 1) / 2; }

/* The dispatchers' bytes, layer 0, forward, 8 experts top-2 over ep 4
 * (tok = 1024 tokens per rank, h = 1024, bf16):
 *   alltoall   dispatch and combine of the routed copies, 2 tok k h e;
 *   allgather  the EP group's tokens gathered (4 tok h e) with their
 *              routing map and fp32 probabilities (4 tok E (1 + 4)), the
 *              partial outputs reduce-scattered (4 tok h e);
 *   flex       tok R h e each way, R the EP ranks a token reaches inside
 *              one domain, 4 (1 - C(6,2)/C(8,2)), or the domains across
 *              two (2 ranks each), 2 (1 - C(4,2)/C(8,2)); with 2 router
 *              groups of 4 experts, one picked per token: one domain. */
START_TEST(test_dispatchers_bytes_closed_form)
{
    cfg_model m = moe_model(0);
    cfg_strategy s = strategy(4, 1, 1);
    s.ep = 4;
    s.etp = 1;
    double tok = 1024, h = 1024, e = 2, E = 8, k = 2;
    fixture f;
    for (int d = 0; d < 3; d++) {
        s.moe_dispatcher = (cfg_dispatcher)d;
        setup(&f, m, s);
        layer_bytes lb = forward_layer_bytes(f.plan, 0);
        if (d == CFG_DISPATCH_ALLTOALL) {
            ck_assert_double_eq_tol(lb.b[WL_G_EP][WL_ALLTOALL], 2 * tok * k * h * e, 1e-6);
        } else if (d == CFG_DISPATCH_ALLGATHER) {
            ck_assert_double_eq(lb.b[WL_G_EP][WL_ALLTOALL], 0);
            ck_assert_double_eq_tol(lb.b[WL_G_EP][WL_ALLGATHER], 4 * tok * h * e + 4 * tok * E * 5, 1e-6);
            ck_assert_double_eq_tol(lb.b[WL_G_EP][WL_REDUCESCATTER], 4 * tok * h * e, 1e-6);
        } else {
            double R = 4 * (1 - pairs(6) / pairs(8));
            ck_assert_double_eq_tol(lb.b[WL_G_EP][WL_ALLTOALL], 2 * tok * R * h * e, 1e-6);
        }
        teardown(&f);
    }
    s.moe_dispatcher = CFG_DISPATCH_FLEX;
    setup_on(&f, m, s, fx_two_plane_platform(4, 2));
    double K = 2 * (1 - pairs(4) / pairs(8));
    ck_assert_double_eq_tol(forward_layer_bytes(f.plan, 0).b[WL_G_EP][WL_ALLTOALL], 2 * tok * K * h * e, 1e-6);
    teardown(&f);
    m.moe.groups = 2;
    m.moe.group_top_k = 1;
    setup_on(&f, m, s, fx_two_plane_platform(4, 2));
    ck_assert_double_eq_tol(forward_layer_bytes(f.plan, 0).b[WL_G_EP][WL_ALLTOALL], 2 * tok * 1 * h * e, 1e-6);
    teardown(&f);
}
END_TEST

/* The local experts run as one grouped GEMM per projection: on the flat
 * platform with a grouped curve of 0.25 (half the dense 0.5), the
 * experts' forward takes twice its FLOPs / (peak / 2); the permutation
 * (alltoall, two local experts) moves (tok + c) h e before the dispatch and
 * 2 c h e after it, c = tok k the routed copies, the unpermutation as
 * much; the router's pass tok E (e + 9) bytes after its GEMM (memory bound
 * here). */
START_TEST(test_grouped_gemm_and_permutation)
{
    cfg_model m = moe_model(0);
    cfg_strategy s = strategy(4, 1, 1);
    s.ep = 4;
    cfg_platform p = flat_platform(4);
    p.grouped_gemm_efficiency = (cfg_curve){.n = 1, .x = {1e9}, .y = {0.25}};
    p.hbm_bytes_per_s = 1e12;
    p.memory_efficiency = 1;
    fixture f;
    setup_on(&f, m, s, p);
    const char *labels[] = {"experts", "permute", "unpermute", "router"};
    double secs[4];
    for (int i = 0; i < 4; i++) naive_layer_fwd_s(f.plan, 0, labels[i], &secs[i], NULL);
    double experts_s = secs[0], permute_s = secs[1], unpermute_s = secs[2], router_s = secs[3];
    double tok = 1024, h = 1024, fe = 1024, c = tok * 2, e = 2, E = 8;
    double flops = 2 * c * h * fe * 2;
    ck_assert_double_eq_tol(experts_s, flops / (312e12 * 0.25), flops / (312e12 * 0.25) * 1e-9);
    double perm = ((tok + c) * h * e + 2 * c * h * e) / 1e12;
    ck_assert_double_eq_tol(permute_s, perm, perm * 1e-9);
    ck_assert_double_eq_tol(unpermute_s, perm, perm * 1e-9);
    double router_gemm = fmax(2 * tok * E * h / (312e12 * 0.5), (tok * h + h * E + tok * E) * e / 1e12);
    ck_assert_double_eq_tol(router_s - router_gemm, tok * E * (e + 9) / 1e12, 1e-15);
    teardown(&f);
}
END_TEST

START_TEST(test_shared_expert_overlap_hides_min)
{
    cfg_model m = moe_model(1);
    cfg_strategy s = strategy(4, 1, 1);
    s.ep = 4;
    fixture off, on;
    setup_flat(&off, m, s);
    s.overlap_shared_experts = true;
    setup_flat(&on, m, s);
    double rates[] = {1e-15, 1e-9};
    for (int r = 0; r < 2; r++) {
        double shared_s, ep_bytes, dummy;
        double t_off = naive_layer_fwd_s(off.plan, rates[r], "shared_experts", &shared_s, &ep_bytes);
        double t_on = naive_layer_fwd_s(on.plan, rates[r], "shared_experts", &dummy, NULL);
        ck_assert_double_eq_tol(dummy, shared_s, 1e-18);
        /* the two linears of the shared expert: h -> f then f -> h, same FLOPs (flat platform) */
        double a2a = ep_bytes / 2 * rates[r], lin = shared_s / 2;
        double hidden = 2 * fmin(a2a, lin);
        ck_assert_double_gt(hidden, 0);
        ck_assert_double_eq_tol(t_off - t_on, hidden, hidden * 1e-9);
    }
    teardown(&off);
    teardown(&on);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("workload");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_layout_default_order);
    tcase_add_test(tc, test_layout_order_changes_neighbours);
    tcase_add_test(tc, test_groups_partition_world);
    tcase_add_test(tc, test_layout_expert_fold);
    tcase_add_test(tc, test_recompute_modules_ops);
    tcase_add_test(tc, test_groups_agree_between_members);
    tcase_add_test(tc, test_schedule_1f1b_counts);
    tcase_add_test(tc, test_schedule_interleaved_complete);
    tcase_add_test(tc, test_tp_bytes_closed_form);
    tcase_add_test(tc, test_no_tp_no_tp_traffic);
    tcase_add_test(tc, test_grad_sync_moves_held_params);
    tcase_add_test(tc, test_tied_embedding_syncs_once);
    tcase_add_test(tc, test_bf16_grad_reduce_halves_dp_bytes);
    tcase_add_test(tc, test_fp8_gemms_by_the_peaks_ratio);
    tcase_add_test(tc, test_recompute_adds_forward_time);
    tcase_add_test(tc, test_overlap_uses_stream_and_waits);
    tcase_add_test(tc, test_2d_tp_bytes_closed_form);
    tcase_add_test(tc, test_2d_tp_with_tpy_1_is_1d_sp);
    tcase_add_test(tc, test_cp_bytes_closed_form);
    tcase_add_test(tc, test_fusion_merges_all_to_alls);
    tcase_add_test(tc, test_ep_bytes_closed_form);
    tcase_add_test(tc, test_doubling_dimensions_divides_compute);
    tcase_add_test(tc, test_layer_gemms_are_model_flops);
    tcase_add_test(tc, test_uneven_stage_programs);
    tcase_add_test(tc, test_moe_imbalance_scales_busiest_rank);
    tcase_add_test(tc, test_shared_expert_overlap_hides_min);
    tcase_add_test(tc, test_fp8_recipes_gemms_and_casts);
    tcase_add_test(tc, test_dispatchers_bytes_closed_form);
    tcase_add_test(tc, test_grouped_gemm_and_permutation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
