/* test_search.c - the design-space search: the space (validity, distinct
 * candidates, Megatron-style subspace, pins), memory pruning, the analytic
 * estimate (against the program's op times and against the simulator),
 * ranking order and determinism, records and JSONL files, agreement
 * figures and reasons. */
#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/runner.h"
#include "search/search.h"
#include "lib/check_run.h"

/* ------------------------------------------------------------ fixtures */

static const char *const TINY_MODEL = "{\"name\": \"tiny\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, "
                                      "\"ffn_hidden\": 4096, \"vocab\": 32000, \"seq_len\": 2048, "
                                      "\"activation\": \"gelu\", \"dtype\": \"bf16\"}";
static const char *const TINY_MOE = "{\"name\": \"tiny-moe\", \"layers\": 4, \"hidden\": 1024, \"heads\": 16, "
                                    "\"kv_heads\": 4, \"ffn_hidden\": 2048, \"vocab\": 32000, \"seq_len\": 2048, "
                                    "\"activation\": \"swiglu\", \"dtype\": \"bf16\", "
                                    "\"moe\": {\"experts\": 4, \"top_k\": 2, \"ffn_hidden\": 2048, "
                                    "\"first_dense_layers\": 1}}";

static cfg_model model;
static cfg_platform platform;

/* The shipped Ascend platform cut to `devices` dies, `per_supernode` per
 * supernode and `hbm_gib` of HBM. */
static void load(const char *model_json, int devices, int per_supernode, double hbm_gib)
{
    sim_err err = {{0}};
    char sn[64], hbm[64], node[64];
    snprintf(sn, sizeof sn, "platform.supernode.devices=%d", per_supernode);
    snprintf(hbm, sizeof hbm, "platform.device.hbm_GiB=%g", hbm_gib);
    snprintf(node, sizeof node, "platform.node.devices=%d", per_supernode < 4 ? per_supernode : 4);
    const char *items[] = {sn, hbm, node};
    cfg_overrides ov = {3, items};
    ck_assert_msg(cfg_parse_model(model_json, "test model", NULL, &model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("ascend-a3-2048", &ov, devices, &platform, &err) == SIM_OK, "%s", err.msg);
}

static void request(srch_request *rq, srch_space space, int keep, int global_batch)
{
    sim_err err = {{0}};
    memset(rq, 0, sizeof *rq);
    rq->model = &model;
    rq->platform = &platform;
    char json[128];
    snprintf(json, sizeof json, "{\"global_batch\": %d}", global_batch);
    ck_assert_msg(cfg_parse_strategy(json, "base", NULL, &rq->base, &err) == SIM_OK, "%s", err.msg);
    rq->space = space;
    rq->keep = keep;
}

static srch_result *run_search(const srch_request *rq)
{
    sim_err err = {{0}};
    srch_result *r = NULL;
    ck_assert_msg(srch_run(rq, &r, &err) == SIM_OK, "%s", err.msg);
    return r;
}

/* A checked strategy from JSON text. */
static void strategy(const char *json, cfg_strategy *s)
{
    sim_err err = {{0}};
    ck_assert_msg(cfg_parse_strategy(json, "test strategy", NULL, s, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&model, &platform, s, &err) == SIM_OK, "%s", err.msg);
}

/* ------------------------------------------------------------ the space */

/* Every key of a strategy as text (its fingerprint: every key but the
 * names), to find duplicates by sorting. */
static char *strategy_key(const cfg_strategy *s)
{
    cJSON *o = cfg_strategy_fingerprint_json(s);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

static int cmp_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

START_TEST(every_candidate_is_valid_and_distinct)
{
    load(TINY_MODEL, 8, 8, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 100000, 16);
    srch_result *r = run_search(&rq);
    ck_assert_int_gt(r->nbest, 100);
    ck_assert_int_eq(r->nbest, (int)r->counts.estimated); /* keep covers the whole space */
    ck_assert_int_eq(r->counts.enumerated, r->counts.pruned_memory + r->counts.estimated);
    for (int i = 0; i < r->nbest; i++) {
        cfg_strategy s = r->best[i].strategy;
        sim_err err = {{0}};
        ck_assert_msg(cfg_check(&model, &platform, &s, &err) == SIM_OK, "candidate %d: %s", r->best[i].index,
                      err.msg);
        ck_assert_int_eq(cfg_world_size(&s), 8);
        ck_assert(r->best[i].peak_bytes <= r->best[i].capacity_bytes);
        if (i > 0) ck_assert_int_lt(srch_cmp_estimate(&r->best[i - 1], &r->best[i]), 0); /* distinct indices */
    }
    char **keys = calloc((size_t)r->nbest, sizeof *keys);
    for (int i = 0; i < r->nbest; i++) keys[i] = strategy_key(&r->best[i].strategy);
    qsort(keys, (size_t)r->nbest, sizeof *keys, cmp_text);
    for (int i = 1; i < r->nbest; i++) ck_assert_msg(strcmp(keys[i - 1], keys[i]) != 0, "duplicate: %s", keys[i]);
    /* and every candidate has its own compact name */
    for (int i = 0; i < r->nbest; i++) {
        free(keys[i]);
        keys[i] = strdup(r->best[i].strategy.description);
    }
    qsort(keys, (size_t)r->nbest, sizeof *keys, cmp_text);
    for (int i = 1; i < r->nbest; i++) ck_assert_msg(strcmp(keys[i - 1], keys[i]) != 0, "two named %s", keys[i]);
    for (int i = 0; i < r->nbest; i++) free(keys[i]);
    free(keys);
    srch_result_free(r);
}
END_TEST

START_TEST(space_covers_every_dimension)
{
    load(TINY_MODEL, 16, 16, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 1000000, 32);
    srch_result *r = run_search(&rq);
    bool seen_tpy = false, seen_uly = false, seen_ring = false, seen_fuse = false, seen_vpp = false;
    bool seen_zero3 = false, seen_full = false, seen_order = false, seen_mb = false;
    for (int i = 0; i < r->nbest; i++) {
        const cfg_strategy *s = &r->best[i].strategy;
        seen_tpy |= s->tp_y > 1;
        seen_uly |= s->cp_ulysses > 1;
        seen_ring |= s->cp_ring > 1;
        seen_fuse |= s->fuse_tpy_cp;
        seen_vpp |= s->schedule == CFG_SCHED_INTERLEAVED;
        seen_zero3 |= s->zero == 3;
        seen_full |= s->recompute == CFG_RECOMP_FULL;
        seen_order |= s->order[2] != CFG_DIM_CP_ULYSSES;
        seen_mb |= s->micro_batch > 1;
    }
    ck_assert(seen_tpy && seen_uly && seen_ring && seen_fuse && seen_vpp);
    ck_assert(seen_zero3 && seen_full && seen_order && seen_mb);
    srch_result_free(r);
}
END_TEST

/* The Megatron-style rule is one table: a strategy breaks none of its
 * clauses exactly when it is Megatron-style, each broken clause is named,
 * and the subspace's text lists every clause. */
START_TEST(megatron_rule_breaches_match_the_predicate)
{
    load(TINY_MODEL, 16, 16, 64);
    static const struct {
        const char *json, *breaches; /* under the ring baseline */
    } cases[] = {
        {"{\"dp\": 4, \"tp_x\": 4, \"global_batch\": 16}", ""},
        {"{\"dp\": 4, \"tp_x\": 2, \"tp_y\": 2, \"global_batch\": 16}", "2D TP (tp_y 2)"},
        {"{\"dp\": 4, \"tp_x\": 2, \"cp_ulysses\": 2, \"global_batch\": 16}", "Ulysses CP (cp_ulysses 2)"},
        {"{\"dp\": 4, \"tp_x\": 4, \"zero\": 3, \"global_batch\": 16}", "ZeRO-3"},
        {"{\"dp\": 2, \"pp\": 2, \"tp_x\": 4, \"schedule\": \"zb-h1\", \"global_batch\": 16}", "schedule zb-h1"},
        {"{\"dp\": 2, \"tp_x\": 8, \"global_batch\": 16}", "TP beyond a node (tp 8)"},
        {"{\"dp\": 4, \"tp_x\": 4, \"order\": \"dp-tp_x-tp_y-cp_ulysses-cp_ring-ep-pp\", \"global_batch\": 16}",
         "rank order "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cfg_strategy s;
        strategy(cases[i].json, &s);
        char why[256];
        srch_megatron_breaches(&s, &platform, SRCH_BASELINE_RING, why, sizeof why);
        ck_assert_msg(strncmp(why, cases[i].breaches, strlen(cases[i].breaches)) == 0 &&
                          (cases[i].breaches[0] != '\0') == (why[0] != '\0'),
                      "%s: '%s'", cases[i].json, why);
        ck_assert_int_eq(srch_megatron_style(&s, &platform, SRCH_BASELINE_RING), why[0] == '\0');
        /* all-to-all CP is the a2a baseline's own */
        srch_megatron_breaches(&s, &platform, SRCH_BASELINE_A2A, why, sizeof why);
        ck_assert_int_eq(srch_megatron_style(&s, &platform, SRCH_BASELINE_A2A), why[0] == '\0');
        ck_assert_ptr_null(strstr(why, "Ulysses CP"));
    }
    ck_assert_str_eq(srch_baseline_text(SRCH_BASELINE_RING),
                     "tp_y 1, cp_ulysses 1, no fusion, zero <= 1, Megatron-LM's schedules, TP inside a node, "
                     "Megatron-Core's rank orders");
    ck_assert_ptr_nonnull(strstr(srch_baseline_text(SRCH_BASELINE_A2A), "ring and all-to-all CP"));
}
END_TEST

/* Each name table of the command line's enums names every value once,
 * and reading a name back gives its value. */
START_TEST(enum_name_tables_round_trip)
{
    static const struct {
        const sim_enum_name *t;
        int n;
        const char *listed;
    } tables[] = {
        {srch_space_names, SRCH_NSPACES, "'megatron' or '7d'"},
        {srch_baseline_names, SRCH_NBASELINES, "'ring' or 'a2a'"},
        {eng_symmetry_names, ENG_NSYMMETRIES, "'tp', 'dp' or 'none'"},
        {eng_comm_mode_names, ENG_NCOMM_MODES, "'flows' or 'steps'"},
    };
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        for (int v = 0; v < tables[i].n; v++) {
            const char *name = sim_enum_name_of(tables[i].t, tables[i].n, v);
            ck_assert_str_ne(name, "?");
            ck_assert_int_eq(sim_enum_value(tables[i].t, tables[i].n, name), v);
        }
        ck_assert_str_eq(sim_enum_name_of(tables[i].t, tables[i].n, tables[i].n), "?");
        ck_assert_int_eq(sim_enum_value(tables[i].t, tables[i].n, "no-such-name"), -1);
        char text[96];
        sim_enum_names_text(tables[i].t, tables[i].n, true, text, sizeof text);
        ck_assert_str_eq(text, tables[i].listed);
    }
    char bar[32];
    sim_enum_names_text(eng_symmetry_names, ENG_NSYMMETRIES, false, bar, sizeof bar);
    ck_assert_str_eq(bar, "tp|dp|none");
    ck_assert_str_eq(srch_space_name(SRCH_SPACE_7D), "7d");
    ck_assert_str_eq(eng_symmetry_name(ENG_SYM_NONE), "none");
}
END_TEST

START_TEST(megatron_space_is_the_megatron_style_part)
{
    load(TINY_MODEL, 16, 16, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 8, 32);
    srch_result *all = run_search(&rq);
    request(&rq, SRCH_SPACE_MEGATRON, 100000, 32);
    srch_result *meg = run_search(&rq);
    ck_assert_int_gt(meg->counts.estimated, 0);
    ck_assert_int_eq(all->counts.estimated_megatron, meg->counts.estimated);
    ck_assert_int_lt(meg->counts.enumerated, all->counts.enumerated);
    for (int i = 0; i < meg->nbest; i++) {
        const cfg_strategy *s = &meg->best[i].strategy;
        ck_assert(meg->best[i].megatron_style);
        ck_assert(srch_megatron_style(s, &platform, SRCH_BASELINE_RING));
        ck_assert_int_eq(s->tp_y, 1);
        ck_assert_int_eq(s->cp_ulysses, 1);
        ck_assert(!s->fuse_tpy_cp);
        ck_assert_int_le(s->tp_x, platform.devices_per_node);
    }
    /* the best Megatron-style estimate of the 7D search is the Megatron search's best */
    ck_assert_int_gt(all->nbest_megatron, 0);
    ck_assert(cfg_strategy_same(&all->best_megatron[0].strategy, &meg->best[0].strategy));
    ck_assert_double_eq(all->best_megatron[0].est.step_s, meg->best[0].est.step_s);
    ck_assert(all->best[0].est.step_s <= meg->best[0].est.step_s);
    srch_result_free(all);
    srch_result_free(meg);
}
END_TEST

START_TEST(pins_hold_keys_fixed)
{
    load(TINY_MODEL, 16, 16, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 100000, 32);
    rq.base.tp_x = 2;
    rq.base.recompute = CFG_RECOMP_FULL;
    rq.pinned = srch_pin_of_key("tp_x") | srch_pin_of_key("recompute");
    ck_assert_uint_eq(srch_pin_of_key("global_batch"), 0);
    ck_assert_uint_eq(srch_pin_of_key("vpp"), srch_pin_of_key("schedule"));
    srch_result *r = run_search(&rq);
    ck_assert_int_gt(r->nbest, 0);
    for (int i = 0; i < r->nbest; i++) {
        ck_assert_int_eq(r->best[i].strategy.tp_x, 2);
        ck_assert_int_eq(r->best[i].strategy.recompute, CFG_RECOMP_FULL);
    }
    srch_result_free(r);
}
END_TEST

START_TEST(precision_keys_only_as_the_base_allows)
{
    /* A search never lowers the precision on its own: with the default base
     * no candidate has fp8, bf16 gradients or bf16 moments.  A base that
     * sets them allows them: each is then tried both ways (twice the
     * candidates per key); a pin holds it; fp8 needs an FP8 peak. */
    load(TINY_MODEL, 8, 8, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 100000, 16);
    srch_result *r = run_search(&rq);
    long long n0 = r->counts.enumerated;
    for (int i = 0; i < r->nbest; i++) {
        const cfg_strategy *c = &r->best[i].strategy;
        ck_assert(!c->fp8 && !c->grad_reduce_in_bf16 && c->optimizer_moments == CFG_MOMENTS_FP32);
        ck_assert(c->attention_kernel == CFG_ATTN_FLASH);
    }
    srch_result_free(r);

    /* fp8 allowed on a device without an FP8 peak: refused, with the key */
    rq.base.fp8 = true;
    sim_err err = {{0}};
    ck_assert_int_eq(srch_run(&rq, &r, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, ".fp8: platform 'ascend-a3-2048' has no FP8 peak"), "%s", err.msg);

    platform.fp8_peak_flops_per_s = 2 * platform.peak_flops_per_s;
    r = run_search(&rq);
    ck_assert_int_eq(r->counts.enumerated, 2 * n0);
    int with = 0;
    for (int i = 0; i < r->nbest; i++) with += r->best[i].strategy.fp8;
    ck_assert(with > 0 && with < r->nbest);
    srch_result_free(r);

    rq.base.optimizer_moments = CFG_MOMENTS_BF16;
    rq.base.grad_reduce_in_bf16 = true;
    r = run_search(&rq);
    ck_assert_int_eq(r->counts.enumerated, 8 * n0);
    srch_result_free(r);

    rq.pinned = srch_pin_of_key("fp8") | srch_pin_of_key("optimizer_moments") | srch_pin_of_key("grad_reduce_in_bf16");
    r = run_search(&rq);
    ck_assert_int_eq(r->counts.enumerated, n0);
    for (int i = 0; i < r->nbest; i++) {
        const cfg_strategy *c = &r->best[i].strategy;
        ck_assert(c->fp8 && c->grad_reduce_in_bf16 && c->optimizer_moments == CFG_MOMENTS_BF16);
    }
    srch_result_free(r);
}
END_TEST

START_TEST(moe_space_has_experts)
{
    load(TINY_MOE, 8, 8, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 100000, 16);
    srch_result *r = run_search(&rq);
    bool ep = false, etp1 = false;
    for (int i = 0; i < r->nbest; i++) {
        const cfg_strategy *s = &r->best[i].strategy;
        ep |= s->ep > 1;
        etp1 |= s->etp == 1 && s->tp_x * s->tp_y > 1;
        ck_assert_int_eq(4 % s->ep, 0);
        ck_assert(isfinite(r->best[i].est.step_s) && r->best[i].est.step_s > 0);
    }
    ck_assert(ep && etp1);
    srch_result_free(r);
}
END_TEST

/* ------------------------------------------------------------- memory */

START_TEST(memory_prunes_what_does_not_fit)
{
    load(TINY_MODEL, 8, 8, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 100000, 16);
    srch_result *roomy = run_search(&rq);
    load(TINY_MODEL, 8, 8, 3.5); /* 1.5 GiB usable */
    srch_result *tight = run_search(&rq);
    ck_assert_int_eq(roomy->counts.enumerated, tight->counts.enumerated);
    ck_assert_int_gt(tight->counts.pruned_memory, roomy->counts.pruned_memory);
    ck_assert_int_gt(tight->nbest, 0);
    for (int i = 0; i < tight->nbest; i++) {
        mdl_memory mm;
        mdl_peak_memory(&model, &tight->best[i].strategy, &mm);
        ck_assert(mm.total_bytes <= platform.hbm_bytes - platform.hbm_reserved_bytes);
        ck_assert_double_eq(mm.total_bytes, tight->best[i].peak_bytes);
    }
    load(TINY_MODEL, 8, 8, 2.05); /* nothing fits in 0.05 GiB */
    srch_result *none = run_search(&rq);
    ck_assert_int_eq(none->nbest, 0);
    ck_assert_int_eq(none->counts.estimated, 0);
    ck_assert_int_eq(none->counts.pruned_memory, none->counts.enumerated);
    srch_result_free(roomy);
    srch_result_free(tight);
    srch_result_free(none);
}
END_TEST

/* ----------------------------------------------------------- estimate */

START_TEST(one_device_estimate_is_the_sum_of_op_times)
{
    load(TINY_MODEL, 1, 1, 64);
    cfg_strategy s;
    strategy("{\"global_batch\": 4, \"micro_batch\": 1, \"recompute\": \"selective\"}", &s);
    sim_err err = {{0}};
    est_estimator *e = est_new(&model, &platform, &err);
    ck_assert_ptr_nonnull(e);
    est_result est;
    ck_assert_int_eq(est_step(e, &s, &est, &err), SIM_OK);
    cost_model *c = cost_new(&platform, &err);
    wl_plan *plan = NULL;
    ck_assert_int_eq(wl_plan_new(&model, &platform, &s, c, &plan, &err), SIM_OK);
    double phases[WL_NPHASES], sum = wl_rank_compute_s(plan, 0, phases);
    ck_assert_msg(fabs(est.step_s - sum) <= 1e-9 * sum, "estimate %.12g s, op times %.12g s", est.step_s, sum);
    ck_assert_msg(fabs(est.optimizer_s - phases[WL_PH_OPTIMIZER]) <= 1e-9 * sum, "optimizer %.12g vs %.12g",
                  est.optimizer_s, phases[WL_PH_OPTIMIZER]);
    ck_assert_double_eq_tol(est.bubble_s, 0.0, 1e-12);
    for (int d = 0; d < WL_NDIMS; d++) ck_assert_double_eq_tol(est.exposed_s[d], 0.0, 1e-12);
    wl_plan_free(plan);
    cost_free(c);
    est_free(e);
}
END_TEST

START_TEST(pipeline_fill_is_pp_minus_one_stages)
{
    /* a small vocabulary: the first and last stages weigh about as much as the others */
    load("{\"name\": \"tiny-vocab\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"ffn_hidden\": 4096, "
         "\"vocab\": 1024, \"seq_len\": 2048, \"activation\": \"gelu\", \"dtype\": \"bf16\"}",
         4, 4, 64);
    sim_err err = {{0}};
    est_estimator *e = est_new(&model, &platform, &err);
    cfg_strategy a, b, c;
    strategy("{\"pp\": 4, \"global_batch\": 8}", &a);
    strategy("{\"pp\": 4, \"global_batch\": 32}", &b);
    strategy("{\"pp\": 4, \"global_batch\": 8, \"vpp\": 2, \"schedule\": \"interleaved\"}", &c);
    est_result ea, eb, ec;
    ck_assert_int_eq(est_step(e, &a, &ea, &err), SIM_OK);
    ck_assert_int_eq(est_step(e, &b, &eb, &err), SIM_OK);
    ck_assert_int_eq(est_step(e, &c, &ec, &err), SIM_OK);
    /* each micro-batch adds the slowest stage's time; the rest is the fill
     * and drain: pp - 1 stage times (a little less, the stages differ a little) */
    double per_micro = (eb.step_s - ea.step_s) / 24, fill = ea.step_s - 8 * per_micro;
    ck_assert_double_gt(per_micro, 0.0);
    ck_assert_msg(fill > 2.5 * per_micro && fill < 3.2 * per_micro, "fill %g s, stage %g s", fill, per_micro);
    ck_assert_double_gt(ea.bubble_s, 0.0);
    /* interleaving two chunks halves the fill */
    double fill_c = ec.step_s - 8 * per_micro;
    ck_assert_msg(fill_c < 0.75 * fill, "interleaved fill %g s, 1f1b %g s", fill_c, fill);
    ck_assert_double_lt(ec.bubble_s, ea.bubble_s);
    est_free(e);
}
END_TEST

/* MLA, an MTP module, MoE after a dense layer, a sliding window on every
 * other layer: all four kinds of layer, and a head with a layer in it. */
static const char *const TINY_MLA = "{\"name\": \"tiny-mla\", \"layers\": 6, \"hidden\": 1024, \"heads\": 16, "
                                   "\"ffn_hidden\": 2048, \"vocab\": 32000, \"seq_len\": 4096, "
                                   "\"activation\": \"swiglu\", \"moe\": {\"experts\": 4, \"top_k\": 2, "
                                   "\"ffn_hidden\": 1024, \"first_dense_layers\": 1}, "
                                   "\"mla\": {\"q_lora_rank\": 256, \"kv_lora_rank\": 128, \"qk_nope_head_dim\": 64, "
                                   "\"qk_rope_head_dim\": 32, \"v_head_dim\": 64}, \"mtp_layers\": 1, "
                                   "\"attention_window\": {\"tokens\": 1024, \"full_every\": 2}}";

/* The estimate tracks the simulator (no contention in either: one group per
 * kind, inside one supernode). */
static void estimate_vs_model(const char *model_json, const char *json, int devices, double tol)
{
    load(model_json, devices, devices, 64);
    cfg_strategy s;
    strategy(json, &s);
    sim_err err = {{0}};
    est_estimator *e = est_new(&model, &platform, &err);
    est_result est;
    ck_assert_int_eq(est_step(e, &s, &est, &err), SIM_OK);
    est_free(e);
    run_case *c = calloc(1, sizeof *c);
    c->model = model;
    c->platform = platform;
    c->strategy = s;
    ck_assert_int_eq(runner_simulate_here(c, NULL), SIM_OK);
    double sim = c->result.step_time_s;
    free(c);
    ck_assert_msg(fabs(est.step_s - sim) <= tol * sim, "%s: estimate %.6f s, simulated %.6f s", json, est.step_s, sim);
}

static void estimate_vs_simulation(const char *json, int devices, double tol)
{
    estimate_vs_model(TINY_MODEL, json, devices, tol);
}

START_TEST(estimate_tracks_pipeline_simulation)
{
    estimate_vs_simulation("{\"pp\": 2, \"tp_x\": 2, \"sequence_parallel\": true, \"global_batch\": 8, "
                           "\"vpp\": 2, \"schedule\": \"interleaved\"}",
                           4, 0.05);
}
END_TEST

START_TEST(estimate_tracks_data_parallel_simulation)
{
    estimate_vs_simulation("{\"dp\": 4, \"zero\": 1, \"global_batch\": 8}", 4, 0.05);
}
END_TEST

/* HSDP: zero 3 in shard groups of 4, the gradient shards all-reduced
 * across the 2 replicas. */
START_TEST(estimate_tracks_hybrid_sharding_simulation)
{
    estimate_vs_simulation("{\"dp\": 8, \"zero\": 3, \"dp_shard\": 4, \"global_batch\": 16}", 8, 0.05);
}
END_TEST

/* Every kind of layer, the MTP module in the last stage's head (one
 * simulation per test: SimGrid runs one per process). */
START_TEST(estimate_tracks_layer_kinds)
{
    estimate_vs_model(TINY_MLA,
                      "{\"pp\": 2, \"tp_x\": 2, \"dp\": 2, \"ep\": 2, \"sequence_parallel\": true, "
                      "\"global_batch\": 8, \"zero\": 1}",
                      8, 0.05);
}
END_TEST

START_TEST(estimate_tracks_layer_kinds_pipeline)
{
    estimate_vs_model(TINY_MLA, "{\"pp\": 3, \"global_batch\": 6}", 3, 0.05);
}
END_TEST

/* ------------------------------------------------------------ ranking */

START_TEST(ranking_is_sorted_and_deterministic)
{
    load(TINY_MODEL, 16, 8, 16);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 50, 32);
    srch_result *a = run_search(&rq), *b = run_search(&rq);
    ck_assert_int_eq(a->nbest, 50);
    ck_assert_str_eq(a->inputs_id, b->inputs_id);
    ck_assert_int_eq(strlen(a->inputs_id), 16);
    for (int i = 0; i < a->nbest; i++) {
        ck_assert_int_eq(a->best[i].index, b->best[i].index);
        ck_assert_double_eq(a->best[i].est.step_s, b->best[i].est.step_s);
        ck_assert_str_eq(a->best[i].inputs_id, a->inputs_id);
        if (i > 0) ck_assert_int_lt(srch_cmp_estimate(&a->best[i - 1], &a->best[i]), 0);
    }
    /* the kept ones are the best of the whole space */
    request(&rq, SRCH_SPACE_7D, 1000000, 32);
    srch_result *all = run_search(&rq);
    for (int i = 0; i < a->nbest; i++) ck_assert_int_eq(all->best[i].index, a->best[i].index);
    ck_assert_str_eq(all->inputs_id, a->inputs_id);
    /* another global batch is another search */
    request(&rq, SRCH_SPACE_7D, 50, 64);
    srch_result *other = run_search(&rq);
    ck_assert_str_ne(other->inputs_id, a->inputs_id);
    srch_result_free(a);
    srch_result_free(b);
    srch_result_free(all);
    srch_result_free(other);
}
END_TEST

/* The 7D searches of one space under the two Megatron-style baselines are
 * twins: each names the other's inputs_id, and they hold the same
 * candidates under the same indices (only the Megatron-style flags
 * differ), so a simulation of one is the other's.  The Megatron space has
 * no twin. */
START_TEST(baselines_are_twins_of_one_search)
{
    load(TINY_MODEL, 16, 8, 16);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 1000000, 32);
    srch_result *ring = run_search(&rq);
    rq.baseline = SRCH_BASELINE_A2A;
    srch_result *a2a = run_search(&rq);
    ck_assert_str_ne(ring->inputs_id, a2a->inputs_id);
    ck_assert_str_eq(ring->twin_id, a2a->inputs_id);
    ck_assert_str_eq(a2a->twin_id, ring->inputs_id);
    ck_assert_int_eq(ring->nbest, a2a->nbest);
    int flags_differ = 0;
    for (int i = 0; i < ring->nbest; i++) {
        ck_assert_int_eq(ring->best[i].index, a2a->best[i].index);
        ck_assert(cfg_strategy_same(&ring->best[i].strategy, &a2a->best[i].strategy));
        flags_differ += ring->best[i].megatron_style != a2a->best[i].megatron_style;
    }
    ck_assert_int_gt(flags_differ, 0); /* Ulysses is Megatron-style with a2a only */
    /* a borrowed simulation goes to the candidate of the same index and
     * strategy, and only its simulation: the twin's identity stays out */
    srch_candidate rec = ring->best[3];
    rec.state = SRCH_SIM_DONE;
    rec.step_time_s = 1.25;
    rec.megatron_style = !a2a->best[3].megatron_style;
    char path[] = "/tmp/heptasim-twin-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    sim_err err = {{0}};
    ck_assert_msg(srch_jsonl_write(f, path, &rec, &err) == SIM_OK, "%s", err.msg);
    rec.index = ring->best[4].index; /* the index of another strategy: not taken */
    ck_assert_msg(srch_jsonl_write(f, path, &rec, &err) == SIM_OK, "%s", err.msg);
    fclose(f);
    srch_candidate *chosen[] = {&a2a->best[3], &a2a->best[4]};
    bool flag = a2a->best[3].megatron_style;
    ck_assert_int_eq(srch_borrow(path, a2a->twin_id, SRCH_SPACE_7D, chosen, 2), 1);
    ck_assert_int_eq(a2a->best[3].state, SRCH_SIM_DONE);
    ck_assert_double_eq(a2a->best[3].step_time_s, 1.25);
    ck_assert_int_eq(a2a->best[3].megatron_style, flag);
    ck_assert_str_eq(a2a->best[3].inputs_id, a2a->inputs_id);
    ck_assert_int_eq(a2a->best[4].state, SRCH_SIM_NONE);
    /* records of another search are passed over */
    a2a->best[3].state = SRCH_SIM_NONE;
    ck_assert_int_eq(srch_borrow(path, a2a->inputs_id, SRCH_SPACE_7D, chosen, 2), 0);
    ck_assert_int_eq(srch_borrow("/nonexistent/twin.jsonl", a2a->twin_id, SRCH_SPACE_7D, chosen, 2), 0);
    unlink(path);
    request(&rq, SRCH_SPACE_MEGATRON, 10, 32);
    srch_result *meg = run_search(&rq);
    ck_assert_str_eq(meg->twin_id, "");
    srch_result_free(meg);
    srch_result_free(ring);
    srch_result_free(a2a);
}
END_TEST

/* Progress reports of a search: how many, and the last one's counts. */
typedef struct progress_seen {
    int calls;
    long long last_done, last_total, max_done;
} progress_seen;

static void note_progress(void *ctx, long long done, long long total)
{
    progress_seen *p = ctx;
    p->calls++;
    ck_assert_int_le(done, total);
    if (done > p->max_done) p->max_done = done;
    p->last_done = done;
    p->last_total = total;
}

static void same_list(const srch_candidate *a, const srch_candidate *b, int n)
{
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(a[i].index, b[i].index);
        ck_assert_double_eq(a[i].est.step_s, b[i].est.step_s);
        ck_assert_double_eq(a[i].peak_bytes, b[i].peak_bytes);
        ck_assert_int_eq(a[i].megatron_style, b[i].megatron_style);
        ck_assert_str_eq(a[i].strategy.description, b[i].strategy.description);
        ck_assert_str_eq(a[i].inputs_id, b[i].inputs_id);
        ck_assert(memcmp(&a[i].est, &b[i].est, sizeof a[i].est) == 0);
    }
}

/* A search that keeps its twin's list gives the twin's result without
 * enumerating again: srch_result_twin equals srch_run under the other
 * baseline (counts, lists, flags, fingerprints), either way round, alone
 * and shared out among workers, and carries no simulation over. */
START_TEST(twin_result_is_the_twin_search)
{
    load(TINY_MOE, 8, 4, 16);
    for (int b = 0; b < 2; b++)
        for (int jobs = 1; jobs <= 3; jobs += 2) {
            srch_request rq;
            request(&rq, SRCH_SPACE_7D, 7, 8);
            rq.jobs = jobs;
            rq.baseline = b ? SRCH_BASELINE_A2A : SRCH_BASELINE_RING;
            srch_request other = rq;
            other.baseline = b ? SRCH_BASELINE_RING : SRCH_BASELINE_A2A;
            srch_result *alone = run_search(&other);
            ck_assert_ptr_null(srch_result_twin(alone, &platform)); /* kept no twin list */
            rq.twin_too = true;
            srch_result *first = run_search(&rq);
            ck_assert(first->twin_kept);
            first->best[0].state = SRCH_SIM_DONE; /* simulated in its own compare */
            srch_result *twin = srch_result_twin(first, &platform);
            ck_assert(twin->from_twin);
            ck_assert_int_eq(twin->baseline, other.baseline);
            ck_assert_int_eq(twin->counts.estimated_megatron, alone->counts.estimated_megatron);
            ck_assert_int_ne(twin->counts.estimated_megatron, first->counts.estimated_megatron);
            ck_assert_int_eq(twin->counts.enumerated, alone->counts.enumerated);
            ck_assert_int_eq(twin->counts.probes, alone->counts.probes);
            ck_assert_str_eq(twin->inputs_id, alone->inputs_id);
            ck_assert_str_eq(twin->twin_id, alone->twin_id);
            ck_assert_int_eq(twin->nbest, alone->nbest);
            ck_assert_int_eq(twin->nbest_megatron, alone->nbest_megatron);
            same_list(twin->best, alone->best, alone->nbest);
            same_list(twin->best_megatron, alone->best_megatron, alone->nbest_megatron);
            ck_assert_int_eq(twin->best[0].state, SRCH_SIM_NONE);
            /* and back: the twin of the twin is the first search */
            srch_result *back = srch_result_twin(twin, &platform);
            ck_assert_str_eq(back->inputs_id, first->inputs_id);
            same_list(back->best_megatron, first->best_megatron, first->nbest_megatron);
            srch_result_free(back);
            srch_result_free(twin);
            srch_result_free(first);
            srch_result_free(alone);
        }
}
END_TEST

/* Shared out among worker processes, a search finds what it finds alone:
 * the same counts, lists, indices and fingerprint, for any number of
 * workers (more than there are tuples too), dense and MoE. */
START_TEST(workers_give_the_search_alone_result)
{
    const char *models[] = {TINY_MODEL, TINY_MOE};
    for (int m = 0; m < 2; m++) {
        load(models[m], 8, 4, 16);
        for (int keep = 7; keep <= 100000; keep *= 120) {
            srch_request rq;
            request(&rq, SRCH_SPACE_7D, keep, 8);
            srch_result *alone = run_search(&rq);
            ck_assert_int_gt(alone->counts.estimated, 1000); /* dimension tuples enough to share out */
            ck_assert_int_eq(alone->workers, 1);
            int jobs[] = {3, 1000};
            for (int j = 0; j < 2; j++) {
                progress_seen seen = {0};
                rq.jobs = jobs[j];
                rq.progress = note_progress;
                rq.progress_ctx = &seen;
                srch_result *shared = run_search(&rq);
                ck_assert_int_gt(shared->workers, 1);
                ck_assert_int_le(shared->workers, jobs[j]);
                ck_assert(memcmp(&alone->counts, &shared->counts, sizeof alone->counts) == 0);
                ck_assert_str_eq(alone->inputs_id, shared->inputs_id);
                ck_assert_int_eq(alone->nbest, shared->nbest);
                ck_assert_int_eq(alone->nbest_megatron, shared->nbest_megatron);
                same_list(alone->best, shared->best, alone->nbest);
                same_list(alone->best_megatron, shared->best_megatron, alone->nbest_megatron);
                ck_assert_int_ge(seen.calls, 1); /* at least the final report */
                ck_assert_int_eq(seen.last_done, seen.last_total);
                ck_assert_int_eq(seen.max_done, seen.last_total);
                srch_result_free(shared);
            }
            srch_result_free(alone);
        }
    }
}
END_TEST

/* The floor of the estimate (est_floor) only skips work: a search that
 * estimates every candidate in full keeps the same counts, lists, indices
 * and fingerprint, dense and MoE, for a short list (where the floor cuts
 * most) and a long one; and the floor does skip candidates, so this
 * compares two different paths. */
START_TEST(estimate_floor_changes_no_result)
{
    const char *models[] = {TINY_MODEL, TINY_MOE};
    for (int m = 0; m < 2; m++) {
        load(models[m], 8, 4, 16);
        for (int keep = 1; keep <= 1000; keep *= 40) {
            srch_request rq;
            request(&rq, SRCH_SPACE_7D, keep, 8);
            srch_result *floored = run_search(&rq);
            rq.no_floor = true;
            srch_result *full = run_search(&rq);
            ck_assert_int_gt(floored->floored, 0);
            ck_assert_int_eq(full->floored, 0);
            ck_assert(memcmp(&full->counts, &floored->counts, sizeof full->counts) == 0);
            ck_assert_str_eq(full->inputs_id, floored->inputs_id);
            ck_assert_int_eq(full->nbest, floored->nbest);
            ck_assert_int_eq(full->nbest_megatron, floored->nbest_megatron);
            same_list(full->best, floored->best, full->nbest);
            same_list(full->best_megatron, floored->best_megatron, full->nbest_megatron);
            for (int i = 0; i < full->nbest; i++)
                ck_assert(memcmp(&full->best[i].est, &floored->best[i].est, sizeof full->best[i].est) == 0);
            srch_result_free(full);
            srch_result_free(floored);
        }
    }
}
END_TEST

/* est_floor is below est_step for every kept candidate of a search, dense
 * and MoE, every schedule among them (DualPipe-V's hidden all-to-all
 * included). */
START_TEST(estimate_floor_is_below_the_estimate)
{
    const char *models[] = {TINY_MODEL, TINY_MOE};
    for (int m = 0; m < 2; m++) {
        load(models[m], 8, 4, 16);
        srch_request rq;
        request(&rq, SRCH_SPACE_7D, 20000, 8);
        srch_result *r = run_search(&rq);
        sim_err err = {{0}};
        est_estimator *e = est_new(&model, &platform, &err);
        ck_assert_ptr_nonnull(e);
        bool schedules[CFG_NSCHEDULES] = {false};
        int tight = 0;
        for (int i = 0; i < r->nbest; i++) {
            const cfg_strategy *s = &r->best[i].strategy;
            double floor_s = 0;
            est_result est;
            ck_assert_int_eq(est_floor(e, s, &floor_s, &err), SIM_OK);
            ck_assert_int_eq(est_step(e, s, &est, &err), SIM_OK);
            ck_assert(floor_s > 0);
            ck_assert(floor_s <= est.step_s);
            ck_assert(est.step_s == r->best[i].est.step_s);
            if (floor_s > 0.5 * est.step_s) tight++;
            schedules[s->schedule] = true;
        }
        ck_assert(schedules[CFG_SCHED_1F1B] && schedules[CFG_SCHED_INTERLEAVED] && schedules[CFG_SCHED_DUALPIPE_V]);
        ck_assert_int_gt(tight, 0); /* a floor of some use */
        est_free(e);
        srch_result_free(r);
    }
}
END_TEST

/* The estimate's rule for overlapped data-parallel traffic beside a
 * stage's own collectives (estimate.c: a data-parallel flow gets 1/(nf + 1)
 * of a plane an nf-flow collective uses, docs/estimate.md): on a case
 * whose gradient reductions share the NICs with the expert all-to-alls,
 * the contention-free replay of the same programs (each flow alone on its
 * links, what the estimate was before the rule) is far below the engine,
 * and the estimate with the rule is close to it. */
static void contended(const char *json, int devices, int per_supernode, double *est_s, double *free_s, double *sim_s)
{
    load(TINY_MOE, devices, per_supernode, 64);
    cfg_strategy s;
    strategy(json, &s);
    sim_err err = {{0}};
    est_estimator *e = est_new(&model, &platform, &err);
    est_result est;
    ck_assert_int_eq(est_step(e, &s, &est, &err), SIM_OK);
    est_free(e);
    cost_model *c = cost_new(&platform, &err);
    wl_plan *plan = NULL;
    ck_assert_int_eq(wl_plan_new(&model, &platform, &s, c, &plan, &err), SIM_OK);
    est_replay_result rr;
    ck_assert_int_eq(est_replay(&platform, plan, &rr, &err), SIM_OK);
    wl_plan_free(plan);
    cost_free(c);
    run_case *rc = calloc(1, sizeof *rc);
    rc->model = model;
    rc->platform = platform;
    rc->strategy = s;
    ck_assert_int_eq(runner_simulate_here(rc, NULL), SIM_OK);
    *sim_s = rc->result.step_time_s;
    free(rc);
    *est_s = est.step_s;
    *free_s = rr.step_s;
}

START_TEST(estimate_counts_data_parallel_contention)
{
    /* one device per supernode: every collective on the NIC; ZeRO 1's
     * gradient reduce-scatters (overlapped) run beside the expert
     * all-to-alls of the backward, one flow per peer */
    const char *json = "{\"dp\": 8, \"ep\": 4, \"zero\": 1, \"global_batch\": 8}";
    double est, free_s, sim;
    contended(json, 8, 1, &est, &free_s, &sim);
    char line[400];
    snprintf(line, sizeof line, "%s: estimate %.6f s, contention-free replay %.6f s, simulated %.6f s", json, est,
             free_s, sim);
    /* measured: the replay 7.6 % below the engine, the estimate 1.9 % */
    ck_assert_msg(free_s < 0.94 * sim, "contention matters here: %s", line);
    ck_assert_msg(fabs(est - sim) <= 0.03 * sim, "the estimate within 3 %%: %s", line);
    ck_assert_msg(est - free_s > 0.6 * (sim - free_s), "the rule recovers most of the contention: %s", line);
}
END_TEST

START_TEST(simulated_order_puts_failures_last)
{
    srch_candidate c[4];
    memset(c, 0, sizeof c);
    for (int i = 0; i < 4; i++) c[i].index = 10 - i;
    c[0].state = SRCH_SIM_DONE;
    c[0].step_time_s = 2.0;
    c[1].state = SRCH_SIM_FAILED;
    c[2].state = SRCH_SIM_DONE;
    c[2].step_time_s = 1.0;
    c[3].state = SRCH_SIM_NONE;
    qsort(c, 4, sizeof c[0], srch_cmp_simulated);
    ck_assert_int_eq(c[0].index, 8);
    ck_assert_int_eq(c[1].index, 10);
    ck_assert_int_eq(c[2].index, 9);
    ck_assert_int_eq(c[3].index, 7);
}
END_TEST

/* ------------------------------------------------------------- records */

static srch_candidate sample(void)
{
    load(TINY_MODEL, 16, 8, 64);
    srch_request rq;
    request(&rq, SRCH_SPACE_7D, 4, 32);
    srch_result *r = run_search(&rq);
    srch_candidate c = r->best[2];
    srch_result_free(r);
    c.state = SRCH_SIM_DONE;
    c.step_time_s = 1.25;
    c.mfu = 0.4;
    c.tokens_per_s = 52428.8;
    c.compute_s = 1.0;
    c.bubble_s = 0.125;
    c.optimizer_s = 0.0625;
    for (int d = 0; d < WL_NDIMS; d++) {
        c.exposed_s[d] = 0.01 * (d + 1);
        c.comm_s[d] = 0.1 * (d + 1);
    }
    return c;
}

START_TEST(record_round_trip)
{
    srch_candidate c = sample();
    cJSON *o = srch_record_to_json(&c);
    static const char *const keys[] = {"index", "space", "megatron_style", "strategy", "estimate_step_time_s",
                                       "simulated", "step_time_s", "mfu", "tokens_per_s", "memory", "dimensions",
                                       "inputs_id"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(cJSON_HasObjectItem(o, keys[i]), "missing key %s", keys[i]);
    ck_assert(cJSON_HasObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "dimensions"), "tp"), "comm_s"));
    ck_assert(!cJSON_HasObjectItem(o, "error"));
    srch_candidate back;
    sim_err err = {{0}};
    ck_assert_msg(srch_record_from_json(o, "record", &back, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(back.index, c.index);
    ck_assert(cfg_strategy_same(&back.strategy, &c.strategy));
    ck_assert_double_eq(back.est.step_s, c.est.step_s);
    ck_assert_double_eq(back.step_time_s, c.step_time_s);
    ck_assert_double_eq(back.exposed_s[WL_DIM_DP], c.exposed_s[WL_DIM_DP]);
    ck_assert_double_eq(back.peak_bytes, c.peak_bytes);
    ck_assert_str_eq(back.inputs_id, c.inputs_id);
    ck_assert_int_eq(back.state, SRCH_SIM_DONE);

    /* an estimate is never a simulated result */
    c.state = SRCH_SIM_NONE;
    cJSON *e = srch_record_to_json(&c);
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(e, "simulated")));
    ck_assert(!cJSON_HasObjectItem(e, "step_time_s"));
    ck_assert(!cJSON_HasObjectItem(e, "mfu"));
    ck_assert(!cJSON_HasObjectItem(e, "dimensions"));

    /* a failed simulation keeps its reason */
    c.state = SRCH_SIM_FAILED;
    strcpy(c.error, "simulation deadlocked");
    cJSON *f = srch_record_to_json(&c);
    ck_assert_str_eq(cJSON_GetObjectItem(f, "error")->valuestring, "simulation deadlocked");
    ck_assert_int_eq(srch_record_from_json(f, "record", &back, &err), SIM_OK);
    ck_assert_int_eq(back.state, SRCH_SIM_FAILED);

    /* a record without its estimate is refused, naming the key */
    cJSON_DeleteItemFromObject(o, "estimate_step_time_s");
    ck_assert_int_eq(srch_record_from_json(o, "a.jsonl: line 3", &back, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "a.jsonl: line 3") && strstr(err.msg, "estimate_step_time_s"), "%s", err.msg);
    cJSON_Delete(o);
    cJSON_Delete(e);
    cJSON_Delete(f);
}
END_TEST

START_TEST(jsonl_files)
{
    srch_candidate c = sample();
    char path[] = "/tmp/test_search_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    sim_err err = {{0}};
    ck_assert_int_eq(srch_jsonl_write(f, path, &c, &err), SIM_OK);
    c.index += 1;
    ck_assert_int_eq(srch_jsonl_write(f, path, &c, &err), SIM_OK);
    fputs("{\"index\": 3, \"spa", f); /* an interrupted write */
    fclose(f);
    srch_candidate *arr = NULL;
    int n = 0, cap = 0;
    rpt_skipped torn;
    ck_assert_msg(srch_jsonl_read(path, &arr, &n, &cap, &torn, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(torn.torn, 1);
    ck_assert_int_eq(torn.lines, 1);
    ck_assert_int_eq(arr[1].index, c.index);

    f = fopen(path, "w");
    fputs("{\"index\": 1}\n", f);
    fclose(f);
    n = 0;
    ck_assert_int_eq(srch_jsonl_read(path, &arr, &n, &cap, &torn, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "line 1") != NULL, "%s", err.msg);

    /* junk, a run of NULs and a torn line are skipped, and the records
     * after them are read */
    f = fopen(path, "w");
    fputs("\n\nnot json\n", f);
    fwrite("\0\0\0\0\n", 1, 5, f);
    fputs("{\"index\": 3, \"spa\n", f);
    c.index = 7;
    ck_assert_int_eq(srch_jsonl_write(f, path, &c, &err), SIM_OK);
    fwrite("\0\0\0", 1, 3, f);
    fclose(f);
    n = 0;
    ck_assert_msg(srch_jsonl_read(path, &arr, &n, &cap, &torn, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(arr[0].index, 7);
    ck_assert_int_eq(torn.lines, 4);
    ck_assert_int_eq(torn.first_line, 3);
    ck_assert_int_eq(torn.torn, 1);

    /* a record with a figure heptasim never writes is refused, naming it */
    cJSON *o = srch_record_to_json(&c);
    cJSON_ReplaceItemInObject(o, "step_time_s", cJSON_CreateNumber(-5));
    char *text = cJSON_PrintUnformatted(o);
    f = fopen(path, "w");
    fprintf(f, "%s\n", text);
    fclose(f);
    cJSON_free(text);
    cJSON_Delete(o);
    n = 0;
    ck_assert_int_eq(srch_jsonl_read(path, &arr, &n, &cap, &torn, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "line 1") && strstr(err.msg, "step_time_s"), "%s", err.msg);
    unlink(path);
    ck_assert_int_eq(srch_jsonl_read(path, &arr, &n, &cap, &torn, &err), SIM_EINVAL);
    free(arr);
}
END_TEST

/* ---------------------------------------------------------- agreement */

START_TEST(agreement_figures)
{
    srch_candidate c[5];
    memset(c, 0, sizeof c);
    for (int i = 0; i < 5; i++) {
        c[i].index = i;
        c[i].state = SRCH_SIM_DONE;
        c[i].est.step_s = 1.0 + i;
        c[i].step_time_s = 1.1 * (1.0 + i);
    }
    srch_agreement ag;
    srch_agreement_compute(c, 5, &ag);
    ck_assert_int_eq(ag.n, 5);
    ck_assert_double_eq_tol(ag.spearman, 1.0, 1e-12);
    ck_assert_double_eq_tol(ag.largest_gap, 0.1 / 1.1, 1e-12);
    for (int i = 0; i < 5; i++) c[i].step_time_s = 10.0 - i; /* reversed */
    c[4].step_time_s = 2.0;
    c[3].state = SRCH_SIM_NONE; /* not simulated: left out */
    srch_agreement_compute(c, 5, &ag);
    ck_assert_int_eq(ag.n, 4);
    ck_assert_double_eq_tol(ag.spearman, -1.0, 1e-12);
    ck_assert_int_eq(ag.largest_gap_index, 4); /* |5 - 2| / 2 */
    ck_assert_double_eq_tol(ag.largest_gap, 1.5, 1e-12);
    /* estimate - simulation over the four: 1/10 - 1, 2/9 - 1, 3/8 - 1, 5/2 - 1 */
    double errs[4] = {1.0 / 10 - 1, 2.0 / 9 - 1, 3.0 / 8 - 1, 5.0 / 2 - 1};
    ck_assert_double_eq_tol(ag.mean_error, (errs[0] + errs[1] + errs[2] + errs[3]) / 4, 1e-12);
    ck_assert_double_eq_tol(ag.min_error, errs[0], 1e-12);
    ck_assert_double_eq_tol(ag.max_error, errs[3], 1e-12);
    /* the simulated best (2 s) is candidate 4, the last of the five by estimate */
    ck_assert_int_eq(ag.best_index, 4);
    ck_assert_int_eq(ag.best_estimate_rank, 5);
    c[4].est.step_s = 0.5; /* now first by estimate too */
    srch_agreement_compute(c, 5, &ag);
    ck_assert_int_eq(ag.best_estimate_rank, 1);
    srch_agreement_compute(c, 1, &ag);
    ck_assert(isnan(ag.spearman));
}
END_TEST

START_TEST(reasons_name_the_component_and_the_key)
{
    srch_candidate a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    load(TINY_MODEL, 16, 16, 64);
    strategy("{\"pp\": 4, \"dp\": 4, \"global_batch\": 32}", &a.strategy);
    strategy("{\"pp\": 8, \"dp\": 2, \"global_batch\": 32}", &b.strategy);
    a.state = b.state = SRCH_SIM_DONE;
    a.compute_s = b.compute_s = 1.0;
    a.bubble_s = 0.1;
    b.bubble_s = 0.5;
    a.exposed_s[WL_DIM_DP] = 0.05;
    a.step_time_s = 1.15;
    b.step_time_s = 1.5;
    char why[256];
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "less bubble") && strstr(why, "pp 4 vs 8"), "%s", why);

    /* estimates when either is not simulated */
    b.state = SRCH_SIM_NONE;
    a.est.exposed_s[WL_DIM_TP] = 0.1;
    b.est.exposed_s[WL_DIM_TP] = 0.3;
    a.est.step_s = 1.1;
    b.est.step_s = 1.3;
    strategy("{\"tp_x\": 4, \"dp\": 4, \"global_batch\": 32}", &a.strategy);
    strategy("{\"tp_x\": 8, \"dp\": 2, \"global_batch\": 32}", &b.strategy);
    srch_reason(&a, &b, &platform, why, sizeof why);
    ck_assert_msg(strstr(why, "less TP comm") && strstr(why, "TP inside node, tp 4 vs 8"), "%s", why);

    char name[256];
    strategy("{\"pp\": 4, \"dp\": 4, \"vpp\": 2, \"schedule\": \"interleaved\", \"global_batch\": 32, "
             "\"zero\": 3}",
             &a.strategy);
    cfg_strategy_compact(&a.strategy, name, sizeof name);
    ck_assert_msg(strstr(name, "pp4v2") && strstr(name, "dp4") && strstr(name, "z3"), "%s", name);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("search");
    TCase *t = tcase_create("space");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, every_candidate_is_valid_and_distinct);
    tcase_add_test(t, space_covers_every_dimension);
    tcase_add_test(t, megatron_space_is_the_megatron_style_part);
    tcase_add_test(t, pins_hold_keys_fixed);
    tcase_add_test(t, precision_keys_only_as_the_base_allows);
    tcase_add_test(t, moe_space_has_experts);
    tcase_add_test(t, memory_prunes_what_does_not_fit);
    suite_add_tcase(s, t);
    t = tcase_create("estimate");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, one_device_estimate_is_the_sum_of_op_times);
    tcase_add_test(t, pipeline_fill_is_pp_minus_one_stages);
    tcase_add_test(t, estimate_tracks_pipeline_simulation);
    tcase_add_test(t, estimate_tracks_data_parallel_simulation);
    tcase_add_test(t, estimate_tracks_hybrid_sharding_simulation);
    tcase_add_test(t, estimate_tracks_layer_kinds);
    tcase_add_test(t, estimate_tracks_layer_kinds_pipeline);
    tcase_add_test(t, estimate_counts_data_parallel_contention);
    suite_add_tcase(s, t);
    t = tcase_create("ranking");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, ranking_is_sorted_and_deterministic);
    tcase_add_test(t, workers_give_the_search_alone_result);
    tcase_add_test(t, estimate_floor_changes_no_result);
    tcase_add_test(t, estimate_floor_is_below_the_estimate);
    tcase_add_test(t, baselines_are_twins_of_one_search);
    tcase_add_test(t, twin_result_is_the_twin_search);
    tcase_add_test(t, simulated_order_puts_failures_last);
    tcase_add_test(t, record_round_trip);
    tcase_add_test(t, jsonl_files);
    tcase_add_test(t, agreement_figures);
    tcase_add_test(t, reasons_name_the_component_and_the_key);
    tcase_add_test(t, megatron_rule_breaches_match_the_predicate);
    tcase_add_test(t, enum_name_tables_round_trip);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(suite());
}
