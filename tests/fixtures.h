/* fixtures.h - what the Check suites build by hand: a dense GELU model, a
 * strategy of dp x pp x tp with every other dimension 1, a two-plane
 * platform, temporary file names and whole files read back.  Static, so
 * each suite gets its own copy. */
#ifndef HEPTASIM_TESTS_FIXTURES_H
#define HEPTASIM_TESTS_FIXTURES_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "runner/runner.h"

/* A dense GELU transformer, MHA, bf16; head_dim = hidden / heads. */
static inline cfg_model fx_dense_model(int layers, int hidden, int heads, int ffn, int vocab, int seq)
{
    cfg_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "test-dense");
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = heads;
    m.head_dim = hidden / heads;
    m.ffn_hidden = ffn;
    m.vocab = vocab;
    m.seq_len = seq;
    m.activation = CFG_ACT_GELU;
    m.dtype_bytes = 2;
    m.moe.layer_freq = 1;
    return m;
}

/* Makes m a mixture of experts: `experts` routed experts of width ffn,
 * top_k of them per token, `shared` shared experts of width shared_ffn;
 * the first `first_dense` layers dense, then every freq-th layer MoE. */
static inline void fx_moe(cfg_model *m, int experts, int top_k, int ffn, int shared, int shared_ffn, int first_dense,
                          int freq)
{
    m->moe.experts = experts;
    m->moe.top_k = top_k;
    m->moe.ffn_hidden = ffn;
    m->moe.shared_experts = shared;
    m->moe.shared_ffn_hidden = shared_ffn;
    m->moe.first_dense_layers = first_dense;
    m->moe.layer_freq = freq;
}

/* dp x pp x tp_x, 1F1B, micro-batches of 1, `per_replica` sequences per
 * data-parallel replica, overlapped gradient reduction, default order. */
static inline cfg_strategy fx_strategy(int dp, int pp, int tp, int per_replica)
{
    cfg_strategy s;
    memset(&s, 0, sizeof s);
    strcpy(s.name, "test");
    s.dp = dp;
    s.pp = pp;
    s.tp_x = tp;
    s.tp_y = s.cp_ring = s.cp_ulysses = s.ep = s.etp = s.vpp = 1;
    s.schedule = CFG_SCHED_1F1B;
    s.micro_batch = 1;
    s.global_batch = dp * per_replica;
    s.overlap_grad_reduce = true;
    s.moe_capacity_factor = 0;
    s.moe_load_imbalance = 1;
    const cfg_dim order[CFG_NDIMS] = {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING,
                                      CFG_DIM_EP,   CFG_DIM_DP,   CFG_DIM_PP};
    memcpy(s.order, order, sizeof order);
    return s;
}

/* gpt-7.5b cut to 4 layers on 16 H100s with the Megatron strategy file (TP 2,
 * PP 4, DP 2, 1F1B, 16 sequences) and the extra --set items; fails the test
 * on any error. */
static inline void fx_small_case(run_case *c, const char *const *extra, int nextra)
{
    const char *sets[32] = {"model.layers=4", "tp_x=2", "pp=4", "dp=2", "vpp=1", "schedule=1f1b",
                            "global_batch=16", "micro_batch=1"};
    int n = 8;
    for (int i = 0; i < nextra && n < 32; i++) sets[n++] = extra[i];
    cfg_overrides ov = {n, sets};
    sim_err err = {{0}};
    memset(c, 0, sizeof *c);
    ck_assert_msg(cfg_load_model("gpt-7.5b", &ov, &c->model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("dgx-h100", &ov, 16, &c->platform, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_strategy("gpt-310b-a3-megatron", &ov, &c->strategy, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&c->model, &c->platform, &c->strategy, &err) == SIM_OK, "%s", err.msg);
}

/* A two-plane platform of `devices` in supernodes of `per_supernode`:
 * fabric 100 GB/s and 2 us, NIC 25 GB/s and 6 us plus 2 us of spine,
 * network efficiency 0.8, 1 us per collective step; 100 TFLOP/s devices. */
static inline cfg_platform fx_two_plane_platform(int devices, int per_supernode)
{
    cfg_platform p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "test-two-plane");
    p.devices = devices;
    p.peak_flops_per_s = 100e12;
    p.hbm_bytes = 64 * SIM_GIB;
    p.hbm_bytes_per_s = 1.6e12;
    p.devices_per_node = per_supernode;
    p.devices_per_supernode = per_supernode;
    p.fabric_bytes_per_s = 100e9;
    p.fabric_latency_s = 2e-6;
    p.nic_bytes_per_s = 25e9;
    p.nic_latency_s = 6e-6;
    p.spine_latency_s = 2e-6;
    p.oversubscription = 1;
    p.gemm_efficiency.n = 2;
    p.gemm_efficiency.x[0] = 1e9;
    p.gemm_efficiency.y[0] = 0.5;
    p.gemm_efficiency.x[1] = 1e12;
    p.gemm_efficiency.y[1] = 0.8;
    p.attention_efficiency = 0.5;
    p.memory_efficiency = 0.8;
    p.network_efficiency = 0.8;
    p.kernel_overhead_s = 1e-6;
    p.collective_step_s = 1e-6;
    p.overlap_compute_slowdown = 1;
    return p;
}

/* A new path /tmp/heptasim_test_<tag>_<pid>_<n><suffix> (the caller frees it). */
static inline char *fx_tmp_path(const char *tag, const char *suffix)
{
    static int seq;
    char *p = malloc(256);
    ck_assert_ptr_nonnull(p);
    snprintf(p, 256, "/tmp/heptasim_test_%s_%d_%d%s", tag, (int)getpid(), seq++, suffix);
    return p;
}

/* The whole file at path, NUL-terminated (the caller frees it). */
static inline char *fx_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq((long)fread(text, 1, (size_t)n, f), n);
    text[n] = '\0';
    fclose(f);
    return text;
}

#endif
