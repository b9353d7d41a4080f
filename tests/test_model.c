/* test_model.c - checks of the model module: parameter counts, model and
 * hardware FLOPs, activation memory (Korthikanti), ZeRO bytes per parameter,
 * pipeline in-flight micro-batches and sharding by TP, CP and EP.
 *
 * Each check compares the module with a second, independent computation: a
 * closed form from the papers, or the same quantity assembled from other
 * outputs of the module. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "model/model.h"
#include "lib/check_run.h"

/* |a - b| <= rel * |b|, with a message giving both. */
#define assert_rel(a, b, rel)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        ck_assert_msg(fabs(a_ - b_) <= (rel) * fabs(b_), "%s = %.17g, expected %s = %.17g", #a, a_, \
                      #b, b_);                                                                     \
    } while (0)

#define EXACT 1e-12

/* {=========================================================== fixtures */

static cfg_model dense_model(int layers, int hidden, int heads, int ffn, int vocab, int seq)
{
    return fx_dense_model(layers, hidden, heads, ffn, vocab, seq);
}

/* GPT-3 175B (Brown et al. 2020): tied embeddings, vocab 50257. */
static cfg_model gpt3_175b(void)
{
    cfg_model m = dense_model(96, 12288, 96, 4 * 12288, 50257, 2048);
    m.tied_embeddings = true;
    return m;
}

/* Llama 3.1 405B: GQA 8 KV heads, SwiGLU, untied. */
static cfg_model llama3_405b(void)
{
    cfg_model m = dense_model(126, 16384, 128, 53248, 128256, 8192);
    m.kv_heads = 8;
    m.activation = CFG_ACT_SWIGLU;
    return m;
}

/* Mixtral 8x22B: 8 experts, top-2, GQA, SwiGLU. */
static cfg_model mixtral_8x22b(void)
{
    cfg_model m = dense_model(56, 6144, 48, 16384, 32768, 4096);
    m.kv_heads = 8;
    m.head_dim = 128;
    m.activation = CFG_ACT_SWIGLU;
    m.moe.experts = 8;
    m.moe.top_k = 2;
    m.moe.ffn_hidden = 16384;
    m.moe.layer_freq = 1;
    return m;
}

/* The 22B model of Korthikanti et al. Table 3: a = 64, h = 6144, s = 2048. */
static cfg_model korthikanti_22b(void) { return dense_model(48, 6144, 64, 4 * 6144, 51200, 2048); }

static cfg_strategy base_strategy(void)
{
    cfg_strategy s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "test");
    s.dp = s.pp = s.tp_x = s.tp_y = s.cp_ring = s.cp_ulysses = 1;
    s.ep = s.etp = s.vpp = 1;
    s.schedule = CFG_SCHED_1F1B;
    s.micro_batch = 1;
    s.global_batch = 8;
    s.recompute = CFG_RECOMP_NONE;
    s.moe_capacity_factor = 0;
    return s;
}

static double rank_state_bytes(const mdl_memory *mm)
{
    return mm->weights_bytes + mm->grads_bytes + mm->optimizer_bytes;
}

/* }=========================================================== fixtures */

/* {============================================================ params */

START_TEST(test_params_gpt3)
{
    cfg_model m = gpt3_175b();
    mdl_params p;
    mdl_count_params(&m, &p);
    assert_rel(p.total, 174.6e9, 0.015);
    /* Closed form for MHA + GELU, f = 4h: 12h^2 + 2h per layer. */
    double h = m.hidden;
    double closed = m.layers * (12.0 * h * h + 2.0 * h) + (double)m.vocab * h + h;
    assert_rel(p.total, closed, EXACT);
    ck_assert(p.output == 0.0);
    assert_rel(p.active, p.total, EXACT);
    ck_assert(p.per_moe_layer == 0.0);
}
END_TEST

START_TEST(test_params_llama405b)
{
    cfg_model m = llama3_405b();
    mdl_params p;
    mdl_count_params(&m, &p);
    assert_rel(p.total, 405e9, 0.015);
    assert_rel(p.output, p.embedding, EXACT);
    assert_rel(p.total, p.embedding + p.output + m.hidden + m.layers * p.per_dense_layer, EXACT);
    /* SwiGLU has three h x f matrices. */
    assert_rel(p.per_dense_layer - p.attention, 3.0 * m.hidden * m.ffn_hidden, EXACT);
}
END_TEST

START_TEST(test_params_mixtral)
{
    cfg_model m = mixtral_8x22b();
    mdl_params p;
    mdl_count_params(&m, &p);
    assert_rel(p.total, 141e9, 0.015);
    assert_rel(p.active, 39e9, 0.015);
    assert_rel(p.expert, 3.0 * m.hidden * m.moe.ffn_hidden, EXACT);
    assert_rel(p.per_moe_layer, p.attention + (double)m.hidden * m.moe.experts + m.moe.experts * p.expert, EXACT);
    /* The inactive part is exactly the experts a token skips. */
    assert_rel(p.total - p.active, m.layers * (double)(m.moe.experts - m.moe.top_k) * p.expert, 1e-9);
}
END_TEST

START_TEST(test_params_moe_layout)
{
    /* DeepSeek-like: first dense layer, then MoE every 2nd layer, 2 shared
     * experts.  Layers 0..6: MoE at 1, 3, 5; dense at 0, 2, 4, 6. */
    cfg_model m = dense_model(7, 1024, 16, 4096, 1000, 512);
    m.activation = CFG_ACT_SWIGLU;
    fx_moe(&m, 16, 4, 512, 2, 768, 1, 2);
    mdl_params p;
    mdl_count_params(&m, &p);
    double h = m.hidden;
    double shared = 2.0 * 3.0 * h * 768;
    assert_rel(p.per_moe_layer, p.attention + h * 16 + 16 * p.expert + shared, EXACT);
    double edges = p.embedding + p.output + h;
    assert_rel(p.total, edges + 4 * p.per_dense_layer + 3 * p.per_moe_layer, EXACT);
    assert_rel(p.active, edges + 4 * p.per_dense_layer + 3 * (p.attention + h * 16 + 4 * p.expert + shared), EXACT);
}
END_TEST

START_TEST(test_params_gqa)
{
    cfg_model mha = llama3_405b();
    mha.kv_heads = mha.heads;
    cfg_model gqa = llama3_405b();
    mdl_params pm, pg;
    mdl_count_params(&mha, &pm);
    mdl_count_params(&gqa, &pg);
    ck_assert(pg.attention < pm.attention);
    /* K and V shrink from a*d to g*d columns each. */
    double d = gqa.head_dim;
    assert_rel(pm.attention - pg.attention, 2.0 * gqa.hidden * d * (gqa.heads - gqa.kv_heads), EXACT);
    /* MHA attention is 4h^2 + 2h. */
    double h = mha.hidden;
    assert_rel(pm.attention, 4.0 * h * h + 2.0 * h, EXACT);
}
END_TEST

/* }============================================================ params */

/* {============================================================= FLOPs */

START_TEST(test_flops_megatron_closed_form)
{
    /* GELU, f = 4h, g = a: Narayanan et al. with causal attention:
     * 72 B s L h^2 (1 + s/(12h) + V/(12 L h)). */
    cfg_model m = dense_model(40, 6144, 48, 4 * 6144, 51200, 2048);
    int B = 1024;
    double s = m.seq_len, L = m.layers, h = m.hidden, V = m.vocab;
    double mf = mdl_model_flops_per_step(&m, B);
    assert_rel(mf, 72.0 * B * s * L * h * h * (1.0 + s / (12.0 * h) + V / (12.0 * L * h)), EXACT);

    cfg_strategy st = base_strategy();
    st.global_batch = B;
    st.recompute = CFG_RECOMP_NONE;
    assert_rel(mdl_hardware_flops_per_step(&m, &st), mf, EXACT);

    /* Full recompute: a 4th forward of the layers, V/(16 L h) for logits. */
    st.recompute = CFG_RECOMP_FULL;
    double hfu_full = mdl_hardware_flops_per_step(&m, &st);
    assert_rel(hfu_full, 96.0 * B * s * L * h * h * (1.0 + s / (12.0 * h) + V / (16.0 * L * h)), EXACT);
    /* The published (non-causal) formula 96 B s L h^2 (1 + s/(6h) + ...)
     * exceeds it by the masked half of the scores in 4 passes: 8 B s^2 h L. */
    double narayanan = 96.0 * B * s * L * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * L * h));
    assert_rel(narayanan - hfu_full, 4.0 * 2.0 * B * s * s * h * L, 1e-9);

    /* Selective: only the core attention again, 2 s h per token per layer. */
    st.recompute = CFG_RECOMP_SELECTIVE;
    assert_rel(mdl_hardware_flops_per_step(&m, &st),
               72.0 * B * s * L * h * h * (1.0 + s / (9.0 * h) + V / (12.0 * L * h)), EXACT);
}
END_TEST

START_TEST(test_flops_twice_params)
{
    /* A GEMM costs 2 FLOPs per weight per token, so a layer's forward minus
     * its core attention (2 s q) is twice its matrix parameters. */
    cfg_model m = llama3_405b();
    mdl_params p;
    mdl_count_params(&m, &p);
    double core = 2.0 * m.seq_len * m.heads * m.head_dim;
    double tokens = 3.0;
    double norms = 2.0 * m.hidden;
    assert_rel(mdl_layer_forward_flops(&m, 0, tokens), tokens * (2.0 * (p.per_dense_layer - norms) + core), EXACT);

    cfg_model x = mixtral_8x22b();
    mdl_count_params(&x, &p);
    core = 2.0 * x.seq_len * x.heads * x.head_dim;
    norms = 2.0 * x.hidden;
    double touched = p.attention - norms + (double)x.hidden * x.moe.experts + x.moe.top_k * p.expert;
    assert_rel(mdl_layer_forward_flops(&x, 5, 1.0), 2.0 * touched + core, EXACT);
    /* Model FLOPs: 3 passes over all layers and the logits. */
    double per_token = x.layers * (2.0 * touched + core) + 2.0 * x.hidden * x.vocab;
    assert_rel(mdl_model_flops_per_step(&x, 16), 3.0 * 16 * x.seq_len * per_token, EXACT);
}
END_TEST

/* }============================================================= FLOPs */

/* {======================================================= activations */

/* The five rows of Korthikanti Table 2 (per layer), with t = 8: the
 * eager attention kernel, which stores the scores, as their runs did. */
START_TEST(test_korthikanti_table2)
{
    cfg_model m = korthikanti_22b();
    cfg_strategy st = base_strategy();
    st.attention_kernel = CFG_ATTN_EAGER;
    st.tp_x = 8;
    st.micro_batch = 4;
    double s = m.seq_len, b = st.micro_batch, h = m.hidden, a = m.heads, t = 8;
    double sbh = s * b * h;

    st.recompute = CFG_RECOMP_NONE;
    st.sequence_parallel = false;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), sbh * (10.0 + 24.0 / t + 5.0 * a * s / (h * t)), EXACT);

    st.sequence_parallel = true;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), sbh / t * (34.0 + 5.0 * a * s / h), EXACT);

    st.sequence_parallel = false;
    st.recompute = CFG_RECOMP_SELECTIVE;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), sbh * (10.0 + 24.0 / t), EXACT);

    st.sequence_parallel = true;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), sbh * 34.0 / t, EXACT);

    st.sequence_parallel = false;
    st.recompute = CFG_RECOMP_FULL;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), 2.0 * sbh, EXACT);
    st.sequence_parallel = true;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), 2.0 * sbh / t, EXACT);

    /* No parallelism: sbh (34 + 5as/h). */
    st = base_strategy();
    st.attention_kernel = CFG_ATTN_EAGER;
    st.micro_batch = 4;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), sbh * (34.0 + 5.0 * a * s / h), EXACT);

    /* 2D TP shards activations on sequence like SP: tp_x*tp_y = 8. */
    st.tp_x = 4;
    st.tp_y = 2;
    assert_rel(mdl_layer_activation_bytes(&m, &st, 0), sbh / t * (34.0 + 5.0 * a * s / h), EXACT);
}
END_TEST

START_TEST(test_flash_drops_the_scores)
{
    /* FlashAttention instead of the eager kernel: without recompute the
     * rank keeps the softmax log-sum-exp (4 bytes per query row and head)
     * instead of the scores, their dropout mask and dropout output
     * ((2e + 1) a sl s b); selective and full recompute store the same.
     * Per rank: sl = s/c, heads a/t, with every sharding. */
    cfg_model m = korthikanti_22b();
    cfg_recompute modes[] = {CFG_RECOMP_NONE, CFG_RECOMP_SELECTIVE, CFG_RECOMP_FULL};
    struct { int tp_x, tp_y, cp_ring, cp_ulysses; bool sp; } shapes[] = {
        {1, 1, 1, 1, false}, {8, 1, 1, 1, false}, {8, 1, 1, 1, true}, {4, 2, 2, 1, false}, {2, 1, 2, 2, true},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int i = 0; i < 3; i++) {
            cfg_strategy st = base_strategy();
            st.micro_batch = 2;
            st.tp_x = shapes[k].tp_x;
            st.tp_y = shapes[k].tp_y;
            st.cp_ring = shapes[k].cp_ring;
            st.cp_ulysses = shapes[k].cp_ulysses;
            st.sequence_parallel = shapes[k].sp;
            st.recompute = modes[i];
            cfg_strategy eager = st;
            eager.attention_kernel = CFG_ATTN_EAGER;
            double t = cfg_tp(&st), sl = (double)m.seq_len / cfg_cp(&st), b = st.micro_batch, a = m.heads;
            double want = 0.0;
            if (modes[i] == CFG_RECOMP_NONE) want = (5.0 * a * sl * m.seq_len * b - 4.0 * a * sl * b) / t;
            double diff = mdl_layer_activation_bytes(&m, &eager, 0) - mdl_layer_activation_bytes(&m, &st, 0);
            ck_assert_msg(fabs(diff - want) <= 1e-12 * fmax(want, 1.0), "shape %zu, mode %d: %.17g, expected %.17g",
                          k, i, diff, want);
            /* the full-recompute working layer follows the kernel */
            if (modes[i] == CFG_RECOMP_FULL) {
                mdl_memory me, mf;
                mdl_rank_memory(&m, &eager, 0, &me);
                mdl_rank_memory(&m, &st, 0, &mf);
                double one = (5.0 * a * sl * m.seq_len * b - 4.0 * a * sl * b) / t;
                assert_rel(me.activations_bytes - mf.activations_bytes, one, 1e-9);
            }
        }
}
END_TEST

START_TEST(test_fp8_saved_gemm_inputs)
{
    /* fp8 saves the inputs of the layer's GEMMs in FP8 (1 byte instead of
     * e = 2): the QKV and FC1 inputs (h each, replicated unless sequence
     * sharded), the output-projection input (q) and the FC2 input (f),
     * sharded by TP; FlashAttention then keeps its own bf16 output (q)
     * without recompute.  Full recompute keeps the bf16 layer input. */
    cfg_model m = llama3_405b();
    m.seq_len = 4096;
    cfg_recompute modes[] = {CFG_RECOMP_NONE, CFG_RECOMP_SELECTIVE, CFG_RECOMP_FULL};
    for (int kernel = 0; kernel <= 1; kernel++)
        for (int sp = 0; sp <= 1; sp++)
            for (int i = 0; i < 3; i++) {
                cfg_strategy st = base_strategy();
                st.tp_x = 8;
                st.micro_batch = 2;
                st.sequence_parallel = sp;
                st.recompute = modes[i];
                st.attention_kernel = kernel ? CFG_ATTN_EAGER : CFG_ATTN_FLASH;
                cfg_strategy f8 = st;
                f8.fp8 = true;
                double tok = (double)m.seq_len * st.micro_batch, t = 8, ts = sp ? 8 : 1, e = 2.0;
                double h = m.hidden, q = (double)m.heads * m.head_dim, f = m.ffn_hidden;
                double want = 0.0;
                if (modes[i] != CFG_RECOMP_FULL) want = tok * (e - 1.0) * (2.0 * h / ts + q / t + f / t);
                if (modes[i] == CFG_RECOMP_NONE && !kernel) want -= e * tok * q / t;
                double diff = mdl_layer_activation_bytes(&m, &st, 0) - mdl_layer_activation_bytes(&m, &f8, 0);
                ck_assert_msg(fabs(diff - want) <= 1e-12 * fmax(fabs(want), 1.0),
                              "kernel %d, sp %d, mode %d: %.17g, expected %.17g", kernel, sp, i, diff, want);
            }
}
END_TEST

/* The FP8 recipes' scales: each saved FP8 GEMM input (the elements of
 * test_fp8_saved_gemm_inputs) carries 4/128 bytes more with blockwise
 * (an fp32 scale per 128) and 1/32 with mxfp8 (a byte per 32) than with a
 * per-tensor scale (delayed, tensorwise: the same); the cached FP8
 * weights, in two layouts, 2 (1 + 4/16384) and 2 (1 + 1/32) bytes per
 * parameter instead of 2. */
START_TEST(test_fp8_recipe_scales)
{
    cfg_model m = llama3_405b();
    m.seq_len = 4096;
    cfg_strategy st = base_strategy();
    st.tp_x = 8;
    st.micro_batch = 2;
    st.sequence_parallel = true;
    st.fp8 = true;
    double tok = (double)m.seq_len * st.micro_batch, t = 8;
    double h = m.hidden, q = (double)m.heads * m.head_dim, f = m.ffn_hidden;
    double elems = tok * (2.0 * h / t + q / t + f / t);
    double act[CFG_NFP8_RECIPES], copy[CFG_NFP8_RECIPES];
    for (int r = 0; r < CFG_NFP8_RECIPES; r++) {
        st.fp8_recipe = (cfg_fp8_recipe)r;
        act[r] = mdl_layer_activation_bytes(&m, &st, 0);
        mdl_precision pr;
        mdl_precision_of(&m, &st, &pr);
        copy[r] = pr.fp8_copy_bytes;
    }
    ck_assert_double_eq(act[CFG_FP8_TENSORWISE], act[CFG_FP8_DELAYED]);
    ck_assert_double_eq_tol(act[CFG_FP8_BLOCKWISE] - act[CFG_FP8_DELAYED], elems * 4.0 / 128, 1e-6);
    ck_assert_double_eq_tol(act[CFG_FP8_MXFP8] - act[CFG_FP8_DELAYED], elems / 32, 1e-6);
    ck_assert_double_eq(copy[CFG_FP8_DELAYED], 2.0);
    ck_assert_double_eq(copy[CFG_FP8_TENSORWISE], 2.0);
    ck_assert_double_eq_tol(copy[CFG_FP8_BLOCKWISE], 2.0 * (1 + 4.0 / 16384), 1e-15);
    ck_assert_double_eq_tol(copy[CFG_FP8_MXFP8], 2.0 * (1 + 1.0 / 32), 1e-15);
}
END_TEST

START_TEST(test_precision_bytes_per_param)
{
    /* The components per parameter, by the precision keys, ZeRO 0 and 1
     * over d = 8: fp8 adds an FP8 weight and its transpose (2 bytes) for
     * each layer GEMM weight (not norms, router, embedding, output);
     * grad_reduce_in_bf16 keeps main grads in 2 bytes instead of 4; bf16
     * moments make the optimizer 4 + 2 + 2 = 8 bytes instead of 12; the
     * Adam step moves grad + 2 (master + moments) + weight. */
    cfg_model models[2] = {gpt3_175b(), mixtral_8x22b()};
    for (int k = 0; k < 2; k++) {
        cfg_model m = models[k];
        m.layers = 4;
        for (int zero = 0; zero <= 1; zero++) {
            cfg_strategy st = base_strategy();
            st.dp = 8;
            st.global_batch = 64;
            st.zero = zero;
            mdl_memory base, low;
            mdl_rank_memory(&m, &st, 0, &base);
            cfg_strategy lo = st;
            lo.fp8 = lo.grad_reduce_in_bf16 = true;
            lo.optimizer_moments = CFG_MOMENTS_BF16;
            mdl_rank_memory(&m, &lo, 0, &low);
            double gemm = 0.0;
            for (int l = 0; l < m.layers; l++) {
                mdl_held held;
                mdl_layer_held(&m, &st, cfg_is_moe_layer(&m, l), &held);
                gemm += held.params[MDL_PART_ATTENTION] + held.params[MDL_PART_MLP] +
                        held.params[MDL_PART_SHARED] + held.params[MDL_PART_EXPERTS];
            }
            double d = zero >= 1 ? 8.0 : 1.0;
            assert_rel(low.params, base.params, EXACT);
            assert_rel(low.weights_bytes - base.weights_bytes, 2.0 * gemm, EXACT);
            assert_rel(low.grads_bytes, 2.0 * base.params, EXACT);
            assert_rel(base.grads_bytes, 4.0 * base.params, EXACT);
            assert_rel(low.optimizer_bytes, 8.0 * base.params / d, EXACT);
            assert_rel(base.optimizer_bytes, 12.0 * base.params / d, EXACT);
        }
    }
    cfg_model m = gpt3_175b();
    cfg_strategy st = base_strategy();
    mdl_precision pr;
    mdl_precision_of(&m, &st, &pr);
    assert_rel(pr.step_bytes, 4.0 * 4 + 3 * 4 + 2, EXACT); /* read grad, master, m, v; write master, m, v, weight */
    st.optimizer_moments = CFG_MOMENTS_BF16;
    mdl_precision_of(&m, &st, &pr);
    assert_rel(pr.step_bytes, 4.0 + 2 * (4 + 2 + 2) + 2, EXACT);
    st.grad_reduce_in_bf16 = true;
    mdl_precision_of(&m, &st, &pr);
    assert_rel(pr.step_bytes, 2.0 + 2 * (4 + 2 + 2) + 2, EXACT);
}
END_TEST

START_TEST(test_activations_generalised)
{
    /* GQA: K and V (2 bytes each) shrink from a*d to g*d per token. */
    cfg_model mha = llama3_405b();
    mha.kv_heads = mha.heads;
    cfg_model gqa = llama3_405b();
    cfg_strategy st = base_strategy();
    st.tp_x = 8;
    st.micro_batch = 2;
    double sb = (double)gqa.seq_len * st.micro_batch, d = gqa.head_dim;
    double diff = mdl_layer_activation_bytes(&mha, &st, 0) - mdl_layer_activation_bytes(&gqa, &st, 0);
    assert_rel(diff, 2.0 * 2.0 * sb * d * (gqa.heads - gqa.kv_heads) / 8.0, 1e-9);

    /* SwiGLU keeps gate, up and product (3 x 2sbf) where GELU keeps 2 x 2sbf. */
    cfg_model gelu = gqa;
    gelu.activation = CFG_ACT_GELU;
    diff = mdl_layer_activation_bytes(&gqa, &st, 0) - mdl_layer_activation_bytes(&gelu, &st, 0);
    assert_rel(diff, 2.0 * sb * gqa.ffn_hidden / 8.0, 1e-9);
}
END_TEST

START_TEST(test_activations_moe)
{
    /* A MoE layer = the same layer with no MLP + routed tokens
     * k * cf * s * b, each with its dispatched input 2h and the expert's
     * SwiGLU intermediates 3 * 2 * fe / etp. */
    cfg_model moe = mixtral_8x22b();
    cfg_model bare = moe;
    bare.moe.experts = 0;
    bare.ffn_hidden = 0;
    cfg_strategy st = base_strategy();
    st.micro_batch = 2;
    st.moe_capacity_factor = 1.25;
    st.moe_pad_expert_input_to_capacity = true; /* every expert runs its capacity */
    st.recompute = CFG_RECOMP_SELECTIVE;
    double sb = (double)moe.seq_len * st.micro_batch;
    double routed_tokens = moe.moe.top_k * 1.25 * sb;
    double extra = mdl_layer_activation_bytes(&moe, &st, 0) - mdl_layer_activation_bytes(&bare, &st, 0);
    assert_rel(extra, routed_tokens * (2.0 * moe.hidden + 6.0 * moe.moe.ffn_hidden), 1e-9);

    /* etp = 2 without sequence sharding: intermediates halve, inputs stay. */
    st.etp = 2;
    extra = mdl_layer_activation_bytes(&moe, &st, 0) - mdl_layer_activation_bytes(&bare, &st, 0);
    assert_rel(extra, routed_tokens * (2.0 * moe.hidden + 3.0 * moe.moe.ffn_hidden), 1e-9);
}
END_TEST

/* Activation bytes of layer l with selective recompute of `modules`. */
static double act_with(const cfg_model *m, cfg_strategy st, const char *modules, int l)
{
    st.recompute = CFG_RECOMP_SELECTIVE;
    snprintf(st.recompute_modules, sizeof st.recompute_modules, "%s", modules);
    return mdl_layer_activation_bytes(m, &st, l);
}

static double hfu_with(const cfg_model *m, cfg_strategy st, const char *modules)
{
    st.recompute = CFG_RECOMP_SELECTIVE;
    snprintf(st.recompute_modules, sizeof st.recompute_modules, "%s", modules);
    return mdl_hardware_flops_per_step(m, &st);
}

START_TEST(test_recompute_modules)
{
    /* Megatron-Core's --recompute-modules, each against a hand count:
     * Mixtral's shape with layer 0 dense, 2 shared experts of 4096 and
     * MLA widths; TP 4 with sequence parallel, etp 2; bf16 (e = g = 2
     * bytes); SwiGLU: 3 matrices, intermediates 2e + g = 6 bytes per
     * element.  B = s * b tokens. */
    cfg_model m = mixtral_8x22b();
    m.moe.first_dense_layers = 1;
    m.moe.shared_experts = 2;
    m.moe.shared_ffn_hidden = 4096;
    m.mla = (cfg_mla){.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64,
                      .v_head_dim = 128};
    cfg_strategy st = base_strategy();
    st.tp_x = 4;
    st.sequence_parallel = true;
    st.ep = 2;
    st.etp = 2;
    st.micro_batch = 2;
    double B = (double)m.seq_len * st.micro_batch, t = 4, h = m.hidden, e = 2;
    double a = m.heads, q = a * (128 + 64), k = q, v = a * 128;
    double rtok = m.moe.top_k * B * 2 / t; /* routed copies on the rank: its own and its etp peer's */
    const int dense = 0, moe = 1;

    /* "" is core_attn, Megatron's default */
    assert_rel(act_with(&m, st, "", moe), act_with(&m, st, "core_attn", moe), EXACT);
    double base_d = act_with(&m, st, "core_attn", dense), base_m = act_with(&m, st, "core_attn", moe);
    /* layernorm: the two norms' outputs, 2eBh / t with SP */
    assert_rel(base_d - act_with(&m, st, "core_attn,layernorm", dense), 2 * e * B * h / t, EXACT);
    /* mla_up_proj: Q, K, V, e*B*(q + k + v) / t */
    assert_rel(base_m - act_with(&m, st, "core_attn mla_up_proj", moe), e * B * (q + k + v) / t, EXACT);
    /* mlp: a dense layer's FC1 output and product, 6 B f / t; nothing in a MoE layer */
    assert_rel(base_d - act_with(&m, st, "core_attn,mlp", dense), 6 * B * m.ffn_hidden / t, EXACT);
    assert_rel(act_with(&m, st, "core_attn,mlp", moe), base_m, EXACT);
    /* moe_act: the routed experts' product (FC2 input), e per element of fe/etp */
    assert_rel(base_m - act_with(&m, st, "core_attn,moe_act", moe), rtok * e * m.moe.ffn_hidden / 2, EXACT);
    /* shared_experts: 6 B * 2 * 4096 / t */
    assert_rel(base_m - act_with(&m, st, "core_attn,shared_experts", moe), 6 * B * 2 * 4096 / t, EXACT);
    /* moe: every routed copy (input 2h, intermediates 6 fe/etp) and the shared experts */
    assert_rel(base_m - act_with(&m, st, "core_attn,moe", moe),
               rtok * (e * h + 6 * m.moe.ffn_hidden / 2) + 6 * B * 2 * 4096 / t, EXACT);
    /* all at once: the sum (moe holds moe_act and shared_experts) */
    assert_rel(base_m - act_with(&m, st, "core_attn,layernorm,mla_up_proj,moe,moe_act,shared_experts", moe),
               2 * e * B * h / t + e * B * (q + k + v) / t + rtok * (e * h + 6 * m.moe.ffn_hidden / 2) +
                   6 * B * 2 * 4096 / t,
               EXACT);
    /* without core_attn the core attention's log-sum-exp (4 bytes per query row and head) stays */
    assert_rel(act_with(&m, st, "layernorm", moe) - act_with(&m, st, "core_attn,layernorm", moe), 4 * a * B / t,
               EXACT);

    /* HFU: the recomputed GEMMs once more per token; MFU's model FLOPs do not change */
    double tokens = (double)st.global_batch * m.seq_len, L = m.layers, Lm = L - 1;
    double core = hfu_with(&m, st, "core_attn") - hfu_with(&m, st, "layernorm");
    assert_rel(core, tokens * L * mdl_core_attn_flops(&m, false, 1.0), EXACT);
    assert_rel(hfu_with(&m, st, "layernorm,moe_act"), hfu_with(&m, st, "mlp") - tokens * 2 * 3 * h * m.ffn_hidden,
               EXACT);
    assert_rel(hfu_with(&m, st, "mla_up_proj") - hfu_with(&m, st, "layernorm"),
               tokens * L * 2 * (1536.0 * q + 512.0 * a * (128 + 128)), EXACT);
    double shared = 2 * 2 * 3 * h * 4096;
    assert_rel(hfu_with(&m, st, "shared_experts") - hfu_with(&m, st, "layernorm"), tokens * Lm * shared, EXACT);
    assert_rel(hfu_with(&m, st, "moe,shared_experts") - hfu_with(&m, st, "layernorm"),
               tokens * Lm * (2 * h * 8 + 2 * 2 * 3 * h * m.moe.ffn_hidden + shared), EXACT);
    cfg_strategy none = st;
    none.recompute = CFG_RECOMP_NONE;
    assert_rel(hfu_with(&m, st, "layernorm,moe_act"), mdl_hardware_flops_per_step(&m, &none), EXACT);
    assert_rel(mdl_hardware_flops_per_step(&m, &none), mdl_model_flops_per_step(&m, st.global_batch), EXACT);
    /* with recompute none the module list does nothing */
    double plain = mdl_layer_activation_bytes(&m, &none, moe);
    snprintf(none.recompute_modules, sizeof none.recompute_modules, "moe");
    assert_rel(mdl_layer_activation_bytes(&m, &none, moe), plain, EXACT);
    ck_assert_uint_eq(cfg_recompute_modules(&none), 0);
    ck_assert(plain > base_m);
}
END_TEST

START_TEST(test_cp_halves_activations)
{
    cfg_model m = llama3_405b();
    cfg_recompute modes[] = {CFG_RECOMP_NONE, CFG_RECOMP_SELECTIVE, CFG_RECOMP_FULL};
    for (int i = 0; i < 3; i++) {
        cfg_strategy one = base_strategy();
        one.tp_x = 8;
        one.sequence_parallel = true;
        one.pp = 2;
        one.recompute = modes[i];
        cfg_strategy two = one;
        two.cp_ring = 2;
        assert_rel(mdl_layer_activation_bytes(&m, &two, 3), mdl_layer_activation_bytes(&m, &one, 3) / 2.0, EXACT);
        cfg_strategy uly = one;
        uly.cp_ulysses = 2;
        assert_rel(mdl_layer_activation_bytes(&m, &uly, 3), mdl_layer_activation_bytes(&m, &one, 3) / 2.0, EXACT);
        mdl_memory m1, m2;
        mdl_rank_memory(&m, &one, 0, &m1);
        mdl_rank_memory(&m, &two, 0, &m2);
        assert_rel(m2.activations_bytes, m1.activations_bytes / 2.0, EXACT);
        /* CP ranks hold the same weights. */
        assert_rel(m2.weights_bytes, m1.weights_bytes, EXACT);
    }
}
END_TEST

/* }======================================================= activations */

/* {============================================================ memory */

START_TEST(test_bytes_per_param_zero)
{
    cfg_model m = gpt3_175b();
    m.layers = 8;
    cfg_strategy st = base_strategy();
    st.dp = 8;
    st.global_batch = 64;
    mdl_memory mm;

    st.zero = 0;
    mdl_rank_memory(&m, &st, 0, &mm);
    assert_rel(rank_state_bytes(&mm) / mm.params, 18.0, EXACT);
    assert_rel(mm.weights_bytes / mm.params, 2.0, EXACT);

    st.zero = 1;
    mdl_rank_memory(&m, &st, 0, &mm);
    assert_rel(rank_state_bytes(&mm) / mm.params, 6.0 + 12.0 / 8, EXACT);

    st.zero = 2;
    mdl_rank_memory(&m, &st, 0, &mm);
    assert_rel(rank_state_bytes(&mm) / mm.params, 2.0 + 16.0 / 8, EXACT);

    st.zero = 3;
    mdl_rank_memory(&m, &st, 0, &mm);
    assert_rel(rank_state_bytes(&mm) / mm.params, 18.0 / 8, EXACT);

    /* CP ranks join the optimizer sharding: D = dp * cp. */
    st.zero = 1;
    st.cp_ring = 2;
    mdl_rank_memory(&m, &st, 0, &mm);
    assert_rel(rank_state_bytes(&mm) / mm.params, 6.0 + 12.0 / 16, EXACT);
}
END_TEST

START_TEST(test_inflight_schedules)
{
    cfg_model m = korthikanti_22b();
    m.layers = 16;
    cfg_strategy st = base_strategy();
    st.pp = 4;
    st.global_batch = 8; /* m = 8 micro-batches */
    mdl_memory mm;

    st.schedule = CFG_SCHED_1F1B;
    mdl_rank_memory(&m, &st, 0, &mm);
    ck_assert_int_eq(mm.inflight_microbatches, 4);
    mdl_rank_memory(&m, &st, 3, &mm);
    ck_assert_int_eq(mm.inflight_microbatches, 1);
    assert_rel(mm.activations_bytes, 4 * mdl_layer_activation_bytes(&m, &st, 12), EXACT);
    st.global_batch = 2; /* fewer micro-batches than stages */
    ck_assert_int_eq(mdl_inflight_chunks(&st, 0), 2);

    st.global_batch = 8;
    st.schedule = CFG_SCHED_GPIPE;
    for (int p = 0; p < 4; p++) {
        mdl_rank_memory(&m, &st, p, &mm);
        ck_assert_int_eq(mm.inflight_microbatches, 8);
        assert_rel(mm.activations_bytes, 8 * 4 * mdl_layer_activation_bytes(&m, &st, 4 * p), EXACT);
    }

    /* Interleaved, P = 4, v = 2: chunks of 2 layers; stage 0 holds
     * 3*2 + 1*4 + 1 = 11 chunks, the last stage 0*2 + 4 + 1 = 5. */
    st.schedule = CFG_SCHED_INTERLEAVED;
    st.vpp = 2;
    int expect[4] = {11, 9, 7, 5};
    double per_layer = mdl_layer_activation_bytes(&m, &st, 0);
    for (int p = 0; p < 4; p++) {
        ck_assert_int_eq(mdl_inflight_chunks(&st, p), expect[p]);
        mdl_rank_memory(&m, &st, p, &mm);
        assert_rel(mm.activations_bytes, expect[p] * 2 * per_layer, EXACT);
        ck_assert_int_eq(mm.inflight_microbatches, (expect[p] + 1) / 2);
    }
    st.global_batch = 2; /* capped at m * v */
    ck_assert_int_eq(mdl_inflight_chunks(&st, 0), 4);
}
END_TEST

START_TEST(test_layer_stage_placement)
{
    cfg_model m = korthikanti_22b();
    m.layers = 8;
    cfg_strategy st = base_strategy();
    st.pp = 2;
    int plain[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    for (int l = 0; l < 8; l++) ck_assert_int_eq(mdl_layer_stage(&m, &st, l), plain[l]);
    st.schedule = CFG_SCHED_INTERLEAVED;
    st.vpp = 2;
    int inter[8] = {0, 0, 1, 1, 0, 0, 1, 1};
    for (int l = 0; l < 8; l++) ck_assert_int_eq(mdl_layer_stage(&m, &st, l), inter[l]);
}
END_TEST

START_TEST(test_full_recompute_working_set)
{
    cfg_model m = korthikanti_22b();
    m.layers = 8;
    cfg_strategy st = base_strategy();
    st.pp = 2;
    st.tp_x = 8;
    st.micro_batch = 2;
    st.recompute = CFG_RECOMP_NONE;
    double none = mdl_layer_activation_bytes(&m, &st, 0);
    st.recompute = CFG_RECOMP_FULL;
    mdl_memory mm;
    mdl_rank_memory(&m, &st, 0, &mm);
    double input = 2.0 * m.seq_len * st.micro_batch * m.hidden;
    assert_rel(mm.activations_bytes, 2 * 4 * input + none, EXACT);
}
END_TEST

START_TEST(test_tp_halves_sharded)
{
    /* Dense untied model on one stage: everything but the norms (2h per
     * layer, h final) is split over TP, embedding and output included. */
    cfg_model m = llama3_405b();
    m.layers = 4;
    double replicated = m.layers * 2.0 * m.hidden + m.hidden;
    double prev = -1;
    for (int t = 1; t <= 8; t *= 2) {
        cfg_strategy st = base_strategy();
        st.tp_x = t;
        mdl_memory mm;
        mdl_rank_memory(&m, &st, 0, &mm);
        double sharded = mm.params - replicated;
        if (prev > 0) assert_rel(sharded, prev / 2.0, EXACT);
        prev = sharded;
        mdl_params p;
        mdl_count_params(&m, &p);
        assert_rel(sharded * t, p.total - replicated, EXACT);
    }
    /* 2D TP shards weights over tp_x * tp_y, and the norms over tp_y: a
     * rank scales its slice of the hidden (MindSpeed's 2D norms). */
    cfg_strategy a = base_strategy(), b = base_strategy();
    a.tp_x = 8;
    b.tp_x = 4;
    b.tp_y = 2;
    mdl_memory ma, mb;
    mdl_rank_memory(&m, &a, 0, &ma);
    mdl_rank_memory(&m, &b, 0, &mb);
    assert_rel(mb.params, ma.params - replicated / 2.0, EXACT);
    /* With sequence parallel every activation halves with TP. */
    a.sequence_parallel = true;
    cfg_strategy a2 = a;
    a2.tp_x = 16;
    assert_rel(mdl_layer_activation_bytes(&m, &a2, 0), mdl_layer_activation_bytes(&m, &a, 0) / 2.0, EXACT);
}
END_TEST

START_TEST(test_ep_halves_experts)
{
    cfg_model m = mixtral_8x22b();
    mdl_params p;
    mdl_count_params(&m, &p);
    cfg_strategy one = base_strategy();
    one.pp = 4;
    one.dp = 4;
    one.global_batch = 32;
    cfg_strategy two = one;
    two.ep = 2;
    double d1, e1, d2, e2;
    mdl_stage_params(&m, &one, 1, &d1, &e1);
    mdl_stage_params(&m, &two, 1, &d2, &e2);
    int layers = m.layers / 4;
    assert_rel(e1, layers * m.moe.experts * p.expert, EXACT);
    assert_rel(e2, e1 / 2.0, EXACT);
    assert_rel(d2, d1, EXACT);
    mdl_memory m1, m2;
    mdl_rank_memory(&m, &one, 1, &m1);
    mdl_rank_memory(&m, &two, 1, &m2);
    assert_rel(m1.weights_bytes - m2.weights_bytes, 2.0 * e1 / 2.0, EXACT);

    /* Expert TP splits each expert; TP splits the rest except the norms and
     * the router, which Megatron replicates. */
    cfg_strategy et = one;
    et.tp_x = 2;
    et.etp = 2;
    double d3, e3;
    mdl_stage_params(&m, &et, 1, &d3, &e3);
    assert_rel(e3, e1 / 2.0, EXACT);
    double replicated = layers * (2.0 * m.hidden + (double)m.hidden * m.moe.experts);
    assert_rel(2.0 * (d3 - replicated), d1 - replicated, EXACT);

    /* Distributed optimizer: experts shard over dp/ep ranks, the rest over dp. */
    two.zero = 1;
    mdl_rank_memory(&m, &two, 1, &m2);
    assert_rel(m2.optimizer_bytes, 12.0 * (d2 / 4.0 + e2 / 2.0), EXACT);

    /* Folded over TP (Megatron-Core's MoE parallel folding): tp 2, etp 1,
     * ep 8 over the 2 x 4 ranks of a stage: each rank holds 8/8 = 1 whole
     * expert, and expert DP = 2*4/(8*1) = 1 shards nothing; the dense part
     * shards over dp 4.  Hand count of the distributed optimizer's bytes:
     * weights 2, grads 4 per held parameter, master + moments 12 / its
     * group. */
    cfg_strategy fold = one;
    fold.tp_x = 2;
    fold.ep = 8;
    fold.etp = 1;
    fold.zero = 1;
    ck_assert_int_eq(cfg_edp_group(&fold), 1);
    double df, ef;
    mdl_stage_params(&m, &fold, 1, &df, &ef);
    assert_rel(ef, layers * 1.0 * p.expert, EXACT);
    assert_rel(df, d3, EXACT); /* the dense layers split over tp 2 as before */
    mdl_memory mf;
    mdl_rank_memory(&m, &fold, 1, &mf);
    assert_rel(mf.weights_bytes, 2.0 * (df + ef), EXACT);
    assert_rel(mf.grads_bytes, 4.0 * (df + ef), EXACT);
    assert_rel(mf.optimizer_bytes, 12.0 * (df / 4.0 + ef / 1.0), EXACT);
    /* ep 2 with etp 1: 4 experts per rank, expert DP 2*4/2 = 4 */
    fold.ep = 2;
    ck_assert_int_eq(cfg_edp_group(&fold), 4);
    mdl_stage_params(&m, &fold, 1, &df, &ef);
    assert_rel(ef, layers * 4.0 * p.expert, EXACT);
    mdl_rank_memory(&m, &fold, 1, &mf);
    assert_rel(mf.optimizer_bytes, 12.0 * (df / 4.0 + ef / 4.0), EXACT);
}
END_TEST

START_TEST(test_placement_parts)
{
    /* Each part of a layer, as one rank holds it, times the ranks it is
     * split over gives the part's count: attention, MLP and shared experts
     * over t = tp_x*tp_y, norms over tp_y, the router over none, routed
     * experts over ep*etp.  Only the routed experts reduce over expert DP. */
    cfg_model m = mixtral_8x22b();
    m.moe.shared_experts = 2;
    m.moe.shared_ffn_hidden = 4096;
    cfg_strategy s = base_strategy();
    s.tp_x = 4;
    s.tp_y = 2;
    s.ep = 4;
    s.etp = 2;
    double h = m.hidden, q = m.heads * 128.0, kv = m.kv_heads * 128.0, t = 8;
    mdl_held d, e;
    mdl_layer_held(&m, &s, false, &d);
    mdl_layer_held(&m, &s, true, &e);
    assert_rel(d.params[MDL_PART_ATTENTION] * t, 2 * h * q + 2 * h * kv, EXACT);
    assert_rel(d.params[MDL_PART_NORMS] * 2, 2 * h, EXACT);
    assert_rel(d.params[MDL_PART_MLP] * t, 3 * h * m.ffn_hidden, EXACT);
    ck_assert(d.params[MDL_PART_ROUTER] == 0 && d.params[MDL_PART_EXPERTS] == 0 && d.params[MDL_PART_SHARED] == 0);
    ck_assert(e.params[MDL_PART_MLP] == 0);
    assert_rel(e.params[MDL_PART_ATTENTION], d.params[MDL_PART_ATTENTION], EXACT);
    assert_rel(e.params[MDL_PART_NORMS], d.params[MDL_PART_NORMS], EXACT);
    assert_rel(e.params[MDL_PART_ROUTER], h * m.moe.experts, EXACT);
    assert_rel(e.params[MDL_PART_SHARED] * t, 2 * 3 * h * 4096, EXACT);
    assert_rel(e.params[MDL_PART_EXPERTS] * 4 * 2, m.moe.experts * 3 * h * m.moe.ffn_hidden, EXACT);
    assert_rel(mdl_held_params(&e, MDL_SYNC_EDP), e.params[MDL_PART_EXPERTS], EXACT);
    double all = 0;
    for (int p = 0; p < MDL_NPARTS; p++) {
        all += e.params[p];
        ck_assert(mdl_part_sync((mdl_part)p) == (p == MDL_PART_EXPERTS ? MDL_SYNC_EDP : MDL_SYNC_DP));
    }
    assert_rel(mdl_held_params(&e, MDL_SYNC_DP) + mdl_held_params(&e, MDL_SYNC_EDP), all, EXACT);

    /* tp_x = 16 > 8 KV heads: each rank holds one whole KV head. */
    s.tp_x = 16;
    s.tp_y = 1;
    ck_assert_int_eq(mdl_kv_heads_tp(&m, &s), 16);
    mdl_layer_held(&m, &s, false, &d);
    assert_rel(d.params[MDL_PART_ATTENTION], (2 * h * q) / 16 + 2 * h * 128.0, EXACT);
    assert_rel(d.params[MDL_PART_NORMS], 2 * h, EXACT);
}
END_TEST

START_TEST(test_embedding_placement)
{
    cfg_model m = gpt3_175b(); /* tied */
    m.layers = 8;
    cfg_strategy st = base_strategy();
    st.pp = 4;
    st.tp_x = 2;
    double vh = (double)m.vocab * m.hidden / 2.0;
    double d0, d1, d3, e;
    mdl_stage_params(&m, &st, 0, &d0, &e);
    mdl_stage_params(&m, &st, 1, &d1, &e);
    mdl_stage_params(&m, &st, 3, &d3, &e);
    assert_rel(d0 - d1, vh, EXACT);
    /* Tied with pp > 1: the last stage keeps its own copy, plus the final norm. */
    assert_rel(d3 - d1, vh + m.hidden, EXACT);
    /* Tied on one stage: a single copy. */
    st.pp = 1;
    mdl_stage_params(&m, &st, 0, &d0, &e);
    mdl_params p;
    mdl_count_params(&m, &p);
    double norms = m.layers * 2.0 * m.hidden + m.hidden;
    assert_rel(d0, (p.total - norms) / 2.0 + norms, EXACT);
}
END_TEST

START_TEST(test_buffers_and_peak)
{
    cfg_model m = llama3_405b();
    m.layers = 8;
    cfg_strategy st = base_strategy();
    st.pp = 4;
    st.tp_x = 8;
    st.micro_batch = 1;
    mdl_memory first, last;
    mdl_rank_memory(&m, &st, 0, &first);
    mdl_rank_memory(&m, &st, 3, &last);
    /* dp*cp = 1: no gradient bucket; logits (2 + 4 bytes) only on the last stage. */
    ck_assert(first.buffers_bytes == 0.0);
    assert_rel(last.buffers_bytes, (double)m.seq_len * m.vocab / 8.0 * 6.0, EXACT);

    st.dp = 2;
    st.global_batch = 16;
    st.zero = 3;
    mdl_rank_memory(&m, &st, 1, &first);
    double d, e;
    mdl_stage_params(&m, &st, 1, &d, &e);
    /* Middle stage: 40 MB bucket + one gathered layer (half the stage's two). */
    assert_rel(first.buffers_bytes, 40e6 + 2.0 * d / 2.0, EXACT);

    int best = mdl_peak_memory(&m, &st, &first);
    ck_assert(best >= 0 && best < 4);
    for (int p = 0; p < 4; p++) {
        mdl_rank_memory(&m, &st, p, &last);
        ck_assert(last.total_bytes <= first.total_bytes);
        assert_rel(last.total_bytes, rank_state_bytes(&last) + last.activations_bytes + last.buffers_bytes, EXACT);
    }
    mdl_rank_memory(&m, &st, best, &last);
    assert_rel(last.total_bytes, first.total_bytes, EXACT);
}
END_TEST

/* A first or last stage with one layer fewer holds exactly one layer's
 * share less: its held parameters (weights 2, grads 4 and ZeRO-1-sharded
 * Adam 12/dp bytes each) and that layer's activations for each in-flight
 * micro-batch; the embedding stays on the first stage, the logits on the
 * last.  The layer placement follows the same ranges. */
START_TEST(test_uneven_stage_memory)
{
    cfg_model m = llama3_405b();
    cfg_strategy a = base_strategy();
    a.pp = 16;
    a.tp_x = 8;
    a.dp = 2;
    a.zero = 1;
    a.global_batch = 64;
    a.sequence_parallel = true;
    a.recompute = CFG_RECOMP_SELECTIVE;
    a.first_stage_layers = 7;
    a.last_stage_layers = 7;
    cfg_strategy b = a, c = a; /* one more layer on the first (b) or the last (c) stage */
    b.first_stage_layers = 8;
    b.last_stage_layers = 6;
    c.first_stage_layers = 6;
    c.last_stage_layers = 8;

    mdl_params pa;
    mdl_count_params(&m, &pa);
    double norms = 2.0 * m.hidden, t = a.tp_x, dpc = a.dp;
    double layer = norms + (pa.per_dense_layer - norms) / t; /* held by one rank */
    double state = layer * (2.0 + 4.0 + 12.0 / dpc);
    double act = mdl_layer_activation_bytes(&m, &a, 0);

    mdl_memory ma, mb;
    mdl_rank_memory(&m, &a, 0, &ma);
    mdl_rank_memory(&m, &b, 0, &mb);
    int in0 = mdl_inflight_chunks(&a, 0);
    ck_assert_int_eq(in0, 16);
    assert_rel(mb.params - ma.params, layer, EXACT);
    assert_rel(rank_state_bytes(&mb) - rank_state_bytes(&ma), state, EXACT);
    assert_rel(mb.activations_bytes - ma.activations_bytes, in0 * act, EXACT);
    assert_rel(mb.total_bytes - ma.total_bytes, state + in0 * act, EXACT);
    ck_assert(mb.buffers_bytes == ma.buffers_bytes);

    mdl_memory mc;
    mdl_rank_memory(&m, &a, 15, &ma);
    mdl_rank_memory(&m, &c, 15, &mc);
    int in15 = mdl_inflight_chunks(&a, 15);
    ck_assert_int_eq(in15, 1);
    assert_rel(mc.total_bytes - ma.total_bytes, state + in15 * act, EXACT);
    ck_assert(mc.buffers_bytes == ma.buffers_bytes);

    /* middle stages hold 8 layers in a, b and c alike */
    mdl_rank_memory(&m, &a, 7, &ma);
    mdl_rank_memory(&m, &b, 7, &mb);
    assert_rel(mb.total_bytes, ma.total_bytes, EXACT);
    /* b's first stage and b's second hold 8 layers each: they differ by the embedding */
    double d0, d1, e;
    mdl_stage_params(&m, &b, 0, &d0, &e);
    mdl_stage_params(&m, &b, 1, &d1, &e);
    assert_rel(d0 - d1, (double)m.vocab * m.hidden / t, EXACT);

    /* placement: every layer is on the stage whose range holds it */
    cfg_strategy iv = a;
    iv.schedule = CFG_SCHED_INTERLEAVED;
    iv.vpp = 2;
    iv.first_stage_layers = 6; /* 6 + 14 x 8 + 8, in chunks of 3, 4 and 4 */
    iv.last_stage_layers = 8;
    const cfg_strategy *cases[2] = {&a, &iv};
    for (int k = 0; k < 2; k++) {
        int seen = 0;
        for (int p = 0; p < 16; p++)
            for (int j = 0; j < cfg_stage_chunks(cases[k]); j++) {
                int first, n = cfg_stage_layers(&m, cases[k], p, j, &first);
                for (int l = first; l < first + n; l++, seen++) ck_assert_int_eq(mdl_layer_stage(&m, cases[k], l), p);
            }
        ck_assert_int_eq(seen, m.layers);
    }
}
END_TEST

/* }============================================================ memory */


/* {============================================ MLA, MTP, activations, windows */

/* DeepSeek-V3 in the shape of its config.json (deepseek-ai/DeepSeek-V3,
 * copied in models/hf/deepseek-v3): 61 layers of hidden 7168, the first 3
 * dense (SwiGLU 18432), then 256 routed experts of 2048, top-8, and one
 * shared; MLA with 128 heads, q_lora 1536, kv_lora 512, nope 128, rope 64,
 * v 128; vocab 129280 untied; one MTP module. */
static cfg_model deepseek_v3(int seq)
{
    cfg_model m = dense_model(61, 7168, 128, 18432, 129280, seq);
    m.activation = CFG_ACT_SWIGLU;
    fx_moe(&m, 256, 8, 2048, 1, 2048, 3, 1);
    m.mla = (cfg_mla){.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128, .qk_rope_head_dim = 64,
                      .v_head_dim = 128};
    m.mtp_layers = 1;
    return m;
}

/* The matrices of one DeepSeek-V3 attention block, by hand (DeepSeek-V2
 * section 2.1): W^DQ h x q_lora; W^UQ and W^QR q_lora x a(nope + rope);
 * W^DKV and W^KR h x (kv_lora + rope); W^UK and W^UV kv_lora x a(nope + v);
 * W^O a*v x h.  *norms gets the latent norms q_lora + kv_lora. */
typedef struct mla_hand {
    double dq, uq, dkv, ukv, o, latent_norms;
} mla_hand;

static mla_hand deepseek_v3_attention(void)
{
    double h = 7168, a = 128, ql = 1536, kvl = 512, nope = 128, rope = 64, v = 128;
    return (mla_hand){h * ql, ql * a * (nope + rope), h * (kvl + rope), kvl * a * (nope + v), a * v * h, ql + kvl};
}

START_TEST(test_mla_params_deepseek_v3)
{
    cfg_model m = deepseek_v3(4096);
    mdl_params p;
    mdl_count_params(&m, &p);
    mla_hand w = deepseek_v3_attention();
    double h = 7168, V = 129280;
    double attn = w.dq + w.uq + w.dkv + w.ukv + w.o + w.latent_norms + 2 * h;
    double expert = 3 * h * 2048, router = h * 256;
    double dense_layer = attn + 3 * h * 18432, moe_layer = attn + router + 256 * expert + expert;
    double edges = V * h + V * h + h;
    assert_rel(p.attention, attn, EXACT);
    assert_rel(p.per_dense_layer, dense_layer, EXACT);
    assert_rel(p.per_moe_layer, moe_layer, EXACT);
    assert_rel(p.total, 3 * dense_layer + 58 * moe_layer + edges, EXACT);
    assert_rel(p.active, 3 * dense_layer + 58 * (attn + router + 9 * expert) + edges, EXACT);
    assert_rel(p.active_matmul, p.active - V * h, EXACT);
    /* the MTP module apart: its MoE layer, the projection 2h x h, three norms */
    assert_rel(p.mtp, moe_layer + 2 * h * h + 3 * h, EXACT);
    assert_rel(p.mtp_active, attn + router + 9 * expert + 2 * h * h + 3 * h, EXACT);
    /* DeepSeek's figures (README_WEIGHTS.md of the release): 671 B main
     * model, 36.6 B activated including the 0.9 B output head, an MTP
     * module of 11.5 B unique parameters (its transformer layer) */
    assert_rel(p.total, 671e9, 0.005);
    assert_rel(p.active_matmul, 36.6e9, 0.005);
    assert_rel(moe_layer, 11.5e9, 0.005);

    /* TP 8: the up-projections and W^O split by heads, the
     * down-projections and latent norms whole on every rank */
    cfg_strategy st = base_strategy();
    st.tp_x = 8;
    mdl_held held;
    mdl_layer_held(&m, &st, true, &held);
    assert_rel(held.params[MDL_PART_ATTENTION], (w.uq + w.ukv + w.o) / 8, EXACT);
    assert_rel(held.params[MDL_PART_MLA_DOWN], w.dq + w.dkv + w.latent_norms, EXACT);
    /* without query compression the queries come from the hidden, h x a(nope + rope) */
    cfg_model lite = m;
    lite.mla.q_lora_rank = 0;
    mdl_count_params(&lite, &p);
    assert_rel(p.attention, h * 128 * 192 + w.dkv + w.ukv + w.o + 512 + 2 * h, EXACT);
}
END_TEST

START_TEST(test_mla_flops_deepseek_v3)
{
    mla_hand w = deepseek_v3_attention();
    double h = 7168, a = 128, V = 129280;
    double expert = 3 * h * 2048, router = h * 256;
    double matrices = w.dq + w.uq + w.dkv + w.ukv + w.o;
    for (int seq = 4096; seq <= 131072; seq *= 8) {
        cfg_model m = deepseek_v3(seq);
        double s = seq;
        /* causal core attention: scores over a(nope + rope), context over
         * a*v, s/2 keys per query */
        double core = 2.0 * (s / 2) * a * ((128 + 64) + 128);
        assert_rel(mdl_core_attn_flops(&m, false, 1.0), core, EXACT);
        double moe_fwd = 2 * matrices + core + 2 * router + 2 * 9 * expert;
        double dense_fwd = 2 * matrices + core + 2 * 3 * h * 18432;
        assert_rel(mdl_layer_forward_flops(&m, 0, 1.0), dense_fwd, EXACT);
        assert_rel(mdl_layer_forward_flops(&m, 10, 1.0), moe_fwd, EXACT);
        /* a step: 3 passes over the 61 layers, the logits, and the MTP
         * module (projection 2*2h*h, its layer, the logits again) */
        double main = 3 * dense_fwd + 58 * moe_fwd + 2 * h * V;
        double mtp = 2 * 2 * h * h + moe_fwd + 2 * h * V;
        assert_rel(mdl_model_flops_per_step(&m, 2), 3.0 * 2 * s * (main + mtp), EXACT);

        /* what the same config cost as 128-head MHA of head_dim 56 (MLA
         * ignored): 5 % low at 4K, 33 % at 32K (and more beyond) */
        cfg_model mha = m;
        memset(&mha.mla, 0, sizeof mha.mla);
        mha.mtp_layers = m.mtp_layers = 0;
        double low = 1 - mdl_model_flops_per_step(&mha, 1) / mdl_model_flops_per_step(&m, 1);
        if (seq == 4096) ck_assert_msg(low > 0.04 && low < 0.06, "%g", low);
        if (seq == 32768) ck_assert_msg(low > 0.32 && low < 0.34, "%g", low);
    }
}
END_TEST

START_TEST(test_activation_matrices)
{
    /* Plain activations keep two matrices (up, down) and store the MLP's
     * input and output of the activation, 2 tensors of f; gated ones a
     * third matrix (the gate) and a third tensor [K23 generalised]. */
    static const struct {
        cfg_activation act;
        const char *name;
        int matrices;
    } rows[] = {{CFG_ACT_GELU, "gelu", 2},   {CFG_ACT_RELU, "relu", 2},     {CFG_ACT_SQUARED_RELU, "squared-relu", 2},
                {CFG_ACT_GEGLU, "geglu", 3}, {CFG_ACT_SWIGLU, "swiglu", 3}};
    cfg_strategy st = base_strategy();
    st.micro_batch = 2;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cfg_model m = dense_model(4, 1024, 16, 2816, 32000, 2048);
        m.activation = rows[i].act;
        ck_assert_str_eq(cfg_activation_name(m.activation), rows[i].name);
        ck_assert(cfg_mlp_gated(&m) == (rows[i].matrices == 3));
        double h = m.hidden, f = m.ffn_hidden, sb = (double)m.seq_len * st.micro_batch;
        mdl_params p;
        mdl_count_params(&m, &p);
        assert_rel(p.per_dense_layer - p.attention, rows[i].matrices * h * f, EXACT);
        double core = mdl_core_attn_flops(&m, false, 1.0), attn = 4.0 * h * h;
        assert_rel(mdl_layer_forward_flops(&m, 0, 1.0), 2 * attn + core + 2.0 * rows[i].matrices * h * f, EXACT);
        /* against the same layer without its MLP's tensors (f = 0) */
        cfg_model none = m;
        none.ffn_hidden = 0;
        double mlp_bytes = mdl_layer_activation_bytes(&m, &st, 0) - mdl_layer_activation_bytes(&none, &st, 0);
        assert_rel(mlp_bytes, rows[i].matrices * 2.0 * sb * f, EXACT);
        /* routed and shared experts follow the model's activation */
        fx_moe(&m, 8, 2, 512, 1, 768, 0, 1);
        mdl_count_params(&m, &p);
        assert_rel(p.expert, rows[i].matrices * h * 512, EXACT);
        assert_rel(p.per_moe_layer - p.attention - h * 8, 8 * p.expert + rows[i].matrices * h * 768, EXACT);
    }
}
END_TEST

/* Keys per query the naive way: query i (0-based) attends to the keys
 * from max(0, i + 1/2 - W) up to i + 1/2 (the diagonal counted half, as
 * the causal s/2), or to those of its own chunk of C; averaged. */
static double naive_keys(int s, int w, bool chunked)
{
    double sum = 0;
    for (int i = 0; i < s; i++) {
        double pos = i + 0.5;
        if (w <= 0)
            sum += pos;
        else if (chunked)
            sum += pos - (double)(i / w) * w;
        else
            sum += pos < w ? pos : w;
    }
    return sum / s;
}

START_TEST(test_window_bounds_attention)
{
    cfg_model m = dense_model(12, 1024, 16, 4096, 32000, 8192);
    double s = m.seq_len;
    assert_rel(mdl_attn_keys(&m, false), naive_keys(8192, 0, false), EXACT);
    for (int k = 0; k < 2; k++)
        for (int w = 1000; w <= 16384; w *= 2) {
            m.window = (cfg_window){.tokens = w, .full_every = 0, .kind = k ? CFG_WINDOW_CHUNKED : CFG_WINDOW_SLIDING};
            double keys = mdl_attn_keys(&m, true);
            assert_rel(keys, naive_keys(8192, w < s ? w : 0, k), 1e-12);
            ck_assert(keys <= s / 2 && keys <= w);
            /* the full layers of a windowed model do not change */
            assert_rel(mdl_attn_keys(&m, false), s / 2, EXACT);
        }
    /* Gemma 3: a window of 1024 on 5 layers of 6; the 6th, 12th full */
    m.window = (cfg_window){.tokens = 1024, .full_every = 6, .kind = CFG_WINDOW_SLIDING};
    for (int l = 0; l < m.layers; l++) ck_assert(cfg_is_window_layer(&m, l) == ((l + 1) % 6 != 0));
    cfg_model full = m;
    full.window.tokens = 0;
    double core_full = mdl_core_attn_flops(&full, false, 1.0), core_win = mdl_core_attn_flops(&m, true, 1.0);
    assert_rel(core_win, core_full * (1024 - 1024.0 * 1024 / (2 * s)) / (s / 2), EXACT);
    assert_rel(mdl_layer_forward_flops(&full, 0, 1.0) - mdl_layer_forward_flops(&m, 0, 1.0), core_full - core_win,
               1e-9);
    assert_rel(mdl_layer_forward_flops(&m, 5, 1.0), mdl_layer_forward_flops(&full, 5, 1.0), EXACT);
    double per_token = 0;
    for (int l = 0; l < m.layers; l++) per_token += mdl_layer_forward_flops(&m, l, 1.0);
    per_token += 2.0 * m.hidden * m.vocab;
    assert_rel(mdl_model_flops_per_step(&m, 4), 3.0 * 4 * s * per_token, EXACT);
    /* the eager kernel's score memory of a windowed layer spans the window, not s */
    cfg_strategy st = base_strategy();
    st.attention_kernel = CFG_ATTN_EAGER;
    double diff = mdl_layer_activation_bytes(&full, &st, 0) - mdl_layer_activation_bytes(&m, &st, 0);
    assert_rel(diff, (2 * 2.0 + 1) * m.heads * s * (s - 1024), EXACT);
    assert_rel(mdl_layer_activation_bytes(&m, &st, 5), mdl_layer_activation_bytes(&full, &st, 5), EXACT);
}
END_TEST

START_TEST(test_mtp_on_last_stage)
{
    /* The MTP module's parameters sit on the last stage with a copy of
     * the embedding when pp > 1 (untied); its activations and its logits
     * come on top of the last stage's. */
    cfg_model m = deepseek_v3(4096);
    m.layers = 8;
    m.moe.experts = 16;
    mdl_params p;
    mdl_count_params(&m, &p);
    double vh = (double)m.vocab * m.hidden;
    for (int pp = 1; pp <= 2; pp++) {
        cfg_strategy st = base_strategy();
        st.pp = pp;
        st.recompute = CFG_RECOMP_SELECTIVE;
        mdl_held last, first;
        mdl_edge_held(&m, &st, pp - 1, &last);
        mdl_edge_held(&m, &st, 0, &first);
        double held = mdl_held_params(&last, MDL_SYNC_DP) + mdl_held_params(&last, MDL_SYNC_EDP);
        double main_edges = (pp == 1 ? vh : 0) + vh + m.hidden;
        assert_rel(held, main_edges + p.mtp + (pp > 1 ? vh : 0), EXACT);
        if (pp > 1) assert_rel(first.params[MDL_PART_EMBEDDING], vh, EXACT);

        cfg_model plain = m;
        plain.mtp_layers = 0;
        mdl_memory a, b;
        mdl_rank_memory(&m, &st, pp - 1, &a);
        mdl_rank_memory(&plain, &st, pp - 1, &b);
        assert_rel(a.params - b.params, p.mtp + (pp > 1 ? vh : 0), EXACT);
        double tok = (double)m.seq_len * st.micro_batch, e = 2;
        cfg_strategy none = st;
        none.recompute = CFG_RECOMP_NONE;
        double module = 5 * e * tok * m.hidden + mdl_layer_activation_bytes(&m, &none, m.layers);
        assert_rel(a.activations_bytes - b.activations_bytes, a.inflight_microbatches * module, 1e-9);
        double logits = tok * m.vocab * (2 + 4);
        assert_rel(a.buffers_bytes - b.buffers_bytes, logits, 1e-9);
        /* the other stages do not change */
        if (pp > 1) {
            mdl_rank_memory(&m, &st, 0, &a);
            mdl_rank_memory(&plain, &st, 0, &b);
            assert_rel(a.total_bytes, b.total_bytes, EXACT);
        }
    }
}
END_TEST

START_TEST(test_shipped_models_published)
{
    /* Each shipped model against its published size.  `step` is the
     * rounding of the published figure: 0 for a precise one (then within
     * 0.5 %), else the figure is ours rounded to that step. */
    static const struct {
        const char *name;
        double total, total_step, active, active_step;
        bool matmul; /* the active count without the input embedding (DeepSeek's way) */
    } rows[] = {
        /* README_WEIGHTS.md: 671 B main model, 36.6 B activated */
        {"deepseek-v3", 671e9, 0, 36.6e9, 0, true},
        /* model card: 235 B total, 22 B activated (the name's A22B) */
        {"qwen3-235b-a22b", 235e9, 0, 22e9, 1e9, false},
        /* model card: 400 B total, 17 B activated */
        {"llama4-maverick", 400e9, 0, 17e9, 1e9, false},
        /* Gemma 3 report Table 1: 1,416 M embedding + 25,600 M non-embedding (the vision tower apart) */
        {"gemma-3-27b", 27.016e9, 0, 27.016e9, 0, false},
        /* Nemotron-4 340B report: 9.4 B embedding + 331.6 B non-embedding */
        {"nemotron-4-340b", 341.0e9, 0, 341.0e9, 0, false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        cfg_model m;
        sim_err err = {{0}};
        ck_assert_msg(cfg_load_model(rows[i].name, NULL, &m, &err) == SIM_OK, "%s", err.msg);
        mdl_params p;
        mdl_count_params(&m, &p);
        double active = rows[i].matmul ? p.active_matmul : p.active;
        if (rows[i].total_step == 0)
            assert_rel(p.total, rows[i].total, 0.005);
        else
            ck_assert_msg(fabs(p.total - rows[i].total) <= rows[i].total_step / 2, "%s: %g", rows[i].name, p.total);
        if (rows[i].active_step == 0)
            assert_rel(active, rows[i].active, 0.005);
        else
            ck_assert_msg(fabs(active - rows[i].active) <= rows[i].active_step / 2, "%s: active %g", rows[i].name,
                          active);
    }
    /* the HuggingFace config of DeepSeek-V3 is the shipped model */
    cfg_model hf, native;
    sim_err err = {{0}};
    char path[1024];
    snprintf(path, sizeof path, "%s/models/hf/deepseek-v3/config.json", cfg_data_dir());
    ck_assert_msg(cfg_load_model(path, NULL, &hf, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_model("deepseek-v3", NULL, &native, &err) == SIM_OK, "%s", err.msg);
    mdl_params a, b;
    mdl_count_params(&hf, &a);
    mdl_count_params(&native, &b);
    assert_rel(a.total, b.total, EXACT);
    assert_rel(a.active, b.active, EXACT);
    assert_rel(a.mtp, b.mtp, EXACT);
    assert_rel(mdl_model_flops_per_step(&hf, 8), mdl_model_flops_per_step(&native, 8), EXACT);
}
END_TEST

/* }============================================ MLA, MTP, activations, windows */

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("params");
    tcase_add_test(tc, test_params_gpt3);
    tcase_add_test(tc, test_params_llama405b);
    tcase_add_test(tc, test_params_mixtral);
    tcase_add_test(tc, test_params_moe_layout);
    tcase_add_test(tc, test_params_gqa);
    suite_add_tcase(s, tc);

    tc = tcase_create("flops");
    tcase_add_test(tc, test_flops_megatron_closed_form);
    tcase_add_test(tc, test_flops_twice_params);
    suite_add_tcase(s, tc);

    tc = tcase_create("activations");
    tcase_add_test(tc, test_korthikanti_table2);
    tcase_add_test(tc, test_flash_drops_the_scores);
    tcase_add_test(tc, test_fp8_saved_gemm_inputs);
    tcase_add_test(tc, test_fp8_recipe_scales);
    tcase_add_test(tc, test_activations_generalised);
    tcase_add_test(tc, test_activations_moe);
    tcase_add_test(tc, test_recompute_modules);
    tcase_add_test(tc, test_cp_halves_activations);
    suite_add_tcase(s, tc);

    tc = tcase_create("memory");
    tcase_add_test(tc, test_bytes_per_param_zero);
    tcase_add_test(tc, test_precision_bytes_per_param);
    tcase_add_test(tc, test_inflight_schedules);
    tcase_add_test(tc, test_layer_stage_placement);
    tcase_add_test(tc, test_full_recompute_working_set);
    tcase_add_test(tc, test_tp_halves_sharded);
    tcase_add_test(tc, test_ep_halves_experts);
    tcase_add_test(tc, test_placement_parts);
    tcase_add_test(tc, test_embedding_placement);
    tcase_add_test(tc, test_buffers_and_peak);
    tcase_add_test(tc, test_uneven_stage_memory);
    suite_add_tcase(s, tc);

    tc = tcase_create("architectures");
    tcase_add_test(tc, test_mla_params_deepseek_v3);
    tcase_add_test(tc, test_mla_flops_deepseek_v3);
    tcase_add_test(tc, test_activation_matrices);
    tcase_add_test(tc, test_window_bounds_attention);
    tcase_add_test(tc, test_mtp_on_last_stage);
    tcase_add_test(tc, test_shipped_models_published);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(model_suite());
}
