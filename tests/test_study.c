/* test_study.c - the Megatron-style baseline (what Megatron-Core
 * configures: 1D TP in a node, the distributed optimizer, its two rank
 * orders, ring CP or also its all-to-all CP) and the study file: its cells
 * (the grid's product, global batch = tokens / seq_len, HBM and sensitivity
 * values from the platform file's) and its refusals. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "study/study.h"
#include "lib/check_run.h"

static const char *const TINY_MODEL = "{\"name\": \"tiny\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, "
                                      "\"ffn_hidden\": 4096, \"vocab\": 32000, \"seq_len\": 2048, "
                                      "\"activation\": \"gelu\", \"dtype\": \"bf16\"}";

static cfg_model model;
static cfg_platform platform;

/* tiny on 16 Ascend dies, 4 per node, one supernode */
static void load(void)
{
    sim_err err = {{0}};
    const char *items[] = {"platform.supernode.devices=16", "platform.node.devices=4"};
    cfg_overrides ov = {2, items};
    ck_assert_msg(cfg_parse_model(TINY_MODEL, "test model", NULL, &model, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("ascend-a3-2048", &ov, 16, &platform, &err) == SIM_OK, "%s", err.msg);
}

static cfg_strategy strategy(const char *json)
{
    sim_err err = {{0}};
    cfg_strategy s;
    ck_assert_msg(cfg_parse_strategy(json, "test strategy", NULL, &s, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&model, &platform, &s, &err) == SIM_OK, "%s: %s", json, err.msg);
    return s;
}

START_TEST(megatron_style_is_what_megatron_core_configures)
{
    load();
    const srch_baseline R = SRCH_BASELINE_RING, A = SRCH_BASELINE_A2A;
    cfg_strategy s = strategy("{\"dp\": 0, \"tp_x\": 4, \"global_batch\": 16, \"zero\": 1}");
    ck_assert(srch_megatron_style(&s, &platform, R));
    /* the distributed optimizer shards optimizer states only: ZeRO-2 and 3 are not Megatron-style */
    s = strategy("{\"dp\": 0, \"tp_x\": 4, \"global_batch\": 16, \"zero\": 2}");
    ck_assert(!srch_megatron_style(&s, &platform, R));
    s = strategy("{\"dp\": 0, \"tp_x\": 4, \"global_batch\": 16, \"zero\": 3}");
    ck_assert(!srch_megatron_style(&s, &platform, A));
    /* TP beyond a node (4 dies), 2D TP */
    s = strategy("{\"dp\": 0, \"tp_x\": 8, \"global_batch\": 16}");
    ck_assert(!srch_megatron_style(&s, &platform, A));
    s = strategy("{\"dp\": 0, \"tp_x\": 2, \"tp_y\": 2, \"global_batch\": 16}");
    ck_assert(!srch_megatron_style(&s, &platform, A));
    /* Ulysses: Megatron-Core's a2a CP only */
    s = strategy("{\"dp\": 0, \"tp_x\": 2, \"cp_ulysses\": 2, \"cp_ring\": 2, \"global_batch\": 16}");
    ck_assert(!srch_megatron_style(&s, &platform, R));
    ck_assert(srch_megatron_style(&s, &platform, A));
    /* rank orders: tp-cp-ep-dp-pp and tp-cp-ep-pp-dp; not data parallel inside CP */
    s = strategy("{\"dp\": 0, \"tp_x\": 2, \"cp_ring\": 2, \"global_batch\": 16, "
                 "\"order\": \"tp_x-tp_y-ep-dp-cp_ulysses-cp_ring-pp\"}");
    ck_assert(!srch_megatron_style(&s, &platform, A));
    s = strategy("{\"dp\": 0, \"tp_x\": 2, \"pp\": 2, \"global_batch\": 16, "
                 "\"order\": \"tp_x-tp_y-pp-cp_ulysses-cp_ring-ep-dp\"}");
    ck_assert(srch_megatron_style(&s, &platform, R)); /* no CP: Megatron's tp-pp-dp mapping */
    s = strategy("{\"dp\": 0, \"tp_x\": 2, \"pp\": 2, \"cp_ring\": 2, \"global_batch\": 16, "
                 "\"order\": \"tp_x-tp_y-pp-cp_ulysses-cp_ring-ep-dp\"}");
    ck_assert(!srch_megatron_style(&s, &platform, R)); /* pp inside CP: neither of Megatron's */
    /* zero bubble is not Megatron-LM's */
    s = strategy("{\"dp\": 0, \"pp\": 2, \"global_batch\": 16, \"schedule\": \"zb-h1\"}");
    ck_assert(!srch_megatron_style(&s, &platform, R));
}
END_TEST

/* The Megatron search of baseline b holds exactly the candidates the 7D
 * search labels Megatron-style for b. */
static void same_part(srch_baseline b, bool want_ulysses)
{
    load();
    sim_err err = {{0}};
    srch_request rq;
    memset(&rq, 0, sizeof rq);
    rq.model = &model;
    rq.platform = &platform;
    ck_assert(cfg_parse_strategy("{\"global_batch\": 32}", "base", NULL, &rq.base, &err) == SIM_OK);
    rq.baseline = b;
    rq.keep = 100000;
    rq.space = SRCH_SPACE_7D;
    srch_result *all = NULL, *meg = NULL;
    ck_assert_msg(srch_run(&rq, &all, &err) == SIM_OK, "%s", err.msg);
    rq.space = SRCH_SPACE_MEGATRON;
    ck_assert_msg(srch_run(&rq, &meg, &err) == SIM_OK, "%s", err.msg);
    ck_assert_int_eq(all->counts.estimated_megatron, meg->counts.estimated);
    bool ulysses = false;
    for (int i = 0; i < meg->nbest; i++) {
        ck_assert(srch_megatron_style(&meg->best[i].strategy, &platform, b));
        ck_assert_int_le(meg->best[i].strategy.zero, 1);
        ulysses = ulysses || meg->best[i].strategy.cp_ulysses > 1;
    }
    ck_assert(ulysses == want_ulysses);
    ck_assert_str_ne(all->inputs_id, meg->inputs_id);
    srch_result_free(all);
    srch_result_free(meg);
}

START_TEST(megatron_space_is_the_labelled_part_ring)
{
    same_part(SRCH_BASELINE_RING, false);
}
END_TEST

START_TEST(megatron_space_is_the_labelled_part_a2a)
{
    same_part(SRCH_BASELINE_A2A, true);
}
END_TEST

/* ------------------------------------------------------------- studies */

static char path[256];

static void write_study(const char *json)
{
    snprintf(path, sizeof path, "/tmp/heptasim-test-study-%ld.json", (long)getpid());
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(json, f);
    fclose(f);
}

START_TEST(study_cells_are_the_grid)
{
    write_study("{\"name\": \"t\", \"models\": [\"gpt-1.7b\", \"gpt-3.6b\"], "
                "\"platforms\": [{\"platform\": \"dgx-a100\", \"devices\": 16}, "
                "{\"platform\": \"dgx-h100\", \"devices\": 32, \"hbm\": [{\"GiB\": 40}]}], "
                "\"seq_lens\": [1024, 4096], \"tokens_per_step\": 65536, \"hbm\": [1, 0.25], "
                "\"megatron_cp\": [\"ring\", \"a2a\"], \"search\": {\"top\": 3, \"symmetry\": \"dp\"}, "
                "\"sensitivity\": {\"platform\": {\"platform\": \"dgx-h100\", \"devices\": 32}, \"seq_lens\": [4096], \"axes\": ["
                "{\"key\": \"network.nic_GBps\", \"factors\": [0.5, 2]}, "
                "{\"key\": \"supernode.devices\", \"values\": [16]}]}}");
    stdy_study *st = NULL;
    sim_err err = {{0}};
    ck_assert_msg(stdy_load(path, &st, &err) == SIM_OK, "%s", err.msg);
    /* 2 models x (2 HBM sizes + 1) x 2 sequence lengths x 2 baselines; 3 values x 2 models x 1 x 2 */
    ck_assert_int_eq(st->nmain, 2 * 3 * 2 * 2);
    ck_assert_int_eq(st->ncells, st->nmain + 3 * 2 * 1 * 2);
    ck_assert_int_eq(st->top, 3);
    ck_assert_int_eq(st->symmetry, ENG_SYM_DP);
    cfg_platform a100, h100;
    ck_assert(cfg_load_platform("dgx-a100", NULL, 0, &a100, &err) == SIM_OK);
    ck_assert(cfg_load_platform("dgx-h100", NULL, 0, &h100, &err) == SIM_OK);
    for (int i = 0; i < st->ncells; i++) {
        const stdy_cell *c = &st->cells[i];
        ck_assert_int_eq(c->global_batch * c->seq_len, 65536);
        ck_assert_int_eq(c->model.seq_len, c->seq_len);
        ck_assert_double_eq_tol(c->platform.hbm_bytes, c->hbm_gib * SIM_GIB, 1);
        for (int j = 0; j < i; j++) ck_assert_str_ne(c->slug, st->cells[j].slug);
        bool h = strcmp(c->platform_name, "dgx-h100") == 0;
        ck_assert_int_eq(c->platform.devices, h ? 32 : 16);
        if (i < st->nmain && !h) /* factors of the A100's HBM */
            ck_assert(fabs(c->platform.hbm_bytes - a100.hbm_bytes) < 1 ||
                      fabs(c->platform.hbm_bytes - 0.25 * a100.hbm_bytes) < 1);
        if (i < st->nmain && h) ck_assert_double_eq_tol(c->hbm_gib, 40, 1e-12);
        if (i >= st->nmain && strcmp(c->axis, "network.nic_GBps") == 0)
            ck_assert_double_eq_tol(c->platform.nic_bytes_per_s, c->axis_factor * h100.nic_bytes_per_s, 1);
        if (i >= st->nmain && strcmp(c->axis, "supernode.devices") == 0) {
            ck_assert_int_eq(c->platform.devices_per_supernode, 16);
            ck_assert_double_eq(c->axis_factor, 0);
        }
    }
    stdy_free(st);
    unlink(path);
}
END_TEST

/* A refused study file: SIM_EINVAL, one line naming the file and the key. */
static void refused(const char *json, const char *key)
{
    write_study(json);
    stdy_study *st = NULL;
    sim_err err = {{0}};
    ck_assert_int_eq(stdy_load(path, &st, &err), SIM_EINVAL);
    ck_assert_ptr_null(st);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, key), "%s", err.msg);
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    unlink(path);
}

#define OK_PART "\"name\": \"t\", \"models\": [\"gpt-1.7b\"], \"platforms\": [\"dgx-a100\"], "

START_TEST(study_refusals)
{
    refused("{" OK_PART "\"seq_lens\": [1000], \"tokens_per_step\": 4096}", ".tokens_per_step: 4096 is not a multiple");
    refused("{" OK_PART "\"seq_lens\": [1024]}", ".tokens_per_step: missing");
    refused("{" OK_PART "\"seq_lens\": [], \"tokens_per_step\": 4096}", ".seq_lens: must be a non-empty list");
    refused("{" OK_PART "\"seq_lens\": [1.5], \"tokens_per_step\": 4096}", ".seq_lens[0]: must be a whole number");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"search\": {\"top\": 0}}", ".search.top");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"search\": {\"symmetry\": \"x\"}}",
            ".search.symmetry");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"megatron_cp\": [\"ring\", \"ring\"]}",
            ".megatron_cp[1]");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"hbm\": [{\"TiB\": 1}]}", ".hbm[0].TiB");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"sensitivity\": {\"platform\": "
            "\"dgx-a100\", \"axes\": [{\"key\": \"network.nic_GBps\"}]}}",
            ".sensitivity.axes[0]: give either");
    /* a value the platform refuses, named with the study's key and the platform's message */
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"sensitivity\": {\"platform\": "
            "\"dgx-a100\", \"axes\": [{\"key\": \"supernode.devices\", \"values\": [0.5]}]}}",
            ".sensitivity.axes[0]");
    refused("{" OK_PART "\"seq_lens\": [1024, 1024], \"tokens_per_step\": 4096}", "twice");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"strategy\": {\"zero\": 9}}",
            ".strategy: --set zero=9");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"strategy\": {\"no_such\": 1}}",
            ".strategy.no_such");
    /* a missing input named at the key that lists it, in the loader's words */
    refused("{\"name\": \"t\", \"models\": [\"gpt-1.7b\", \"no-such-model\"], \"platforms\": [\"dgx-a100\"], "
            "\"seq_lens\": [1024], \"tokens_per_step\": 4096}",
            ".models[1]: model 'no-such-model' not found");
    refused("{\"name\": \"t\", \"models\": [\"gpt-1.7b\"], \"platforms\": [\"dgx-a100\", {\"platform\": \"no-such\"}], "
            "\"seq_lens\": [1024], \"tokens_per_step\": 4096}",
            ".platforms[1].platform: platform 'no-such' not found");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"sensitivity\": {\"platform\": "
            "\"no-such\", \"axes\": [{\"key\": \"network.nic_GBps\", \"factors\": [2]}]}}",
            ".sensitivity.platform: platform 'no-such' not found");
    refused("{" OK_PART "\"seq_lens\": [1024], \"tokens_per_step\": 4096, \"sensitivity\": {\"platform\": "
            "\"dgx-a100\", \"models\": [\"gpt-1.7b\", \"no-such\"], \"axes\": [{\"key\": \"network.nic_GBps\", "
            "\"factors\": [2]}]}}",
            ".sensitivity.models[1]: model 'no-such' not found");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("study");
    TCase *t = tcase_create("study");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, megatron_style_is_what_megatron_core_configures);
    tcase_add_test(t, megatron_space_is_the_labelled_part_ring);
    tcase_add_test(t, megatron_space_is_the_labelled_part_a2a);
    tcase_add_test(t, study_cells_are_the_grid);
    tcase_add_test(t, study_refusals);
    suite_add_tcase(s, t);
    return check_run(s);
}
