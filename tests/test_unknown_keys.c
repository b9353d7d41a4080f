/* test_unknown_keys.c - one unknown-key rule for every JSON input: a
 * strategy file (the schema tables), a study file, a published case and a
 * sweep record refuse a misspelt key with the same message, "ORIGIN:
 * .KEY: unknown key (did you mean 'X'?)", and a key far from every known
 * one with the list of the known keys. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "study/study.h"
#include "validate/validate.h"
#include "lib/check_run.h"

/* A file holding text, its path in path (the caller unlinks it). */
static void write_temp(const char *text, char path[64])
{
    snprintf(path, 64, "/tmp/heptasim-keys-XXXXXX");
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ck_assert(f);
    fputs(text, f);
    fclose(f);
}

/* err.msg is exactly "ORIGIN: " followed by tail. */
static void says(const sim_err *err, const char *origin, const char *tail)
{
    char want[SIM_ERR_LEN];
    snprintf(want, sizeof want, "%s: %s", origin, tail);
    ck_assert_str_eq(err->msg, want);
}

START_TEST(strategy_file)
{
    sim_err err = {{0}};
    cfg_strategy s;
    ck_assert_int_eq(cfg_parse_strategy("{\"global_batch\": 8, \"micro_bach\": 1}", "s.json", NULL, &s, &err),
                     SIM_EINVAL);
    says(&err, "s.json", ".micro_bach: unknown key (did you mean 'micro_batch'?)");
}
END_TEST

START_TEST(study_file)
{
    char path[64];
    write_temp("{\"name\": \"t\", \"models\": [\"gpt-1.7b\"], \"platforms\": [\"dgx-a100\"], \"seq_lens\": [1024], "
               "\"tokens_per_step\": 32768, \"seq_len\": [1]}",
               path);
    stdy_study *st = NULL;
    sim_err err = {{0}};
    ck_assert_int_eq(stdy_load(path, &st, &err), SIM_EINVAL);
    ck_assert(st == NULL);
    says(&err, path, ".seq_len: unknown key (did you mean 'seq_lens'?)");
    unlink(path);
}
END_TEST

START_TEST(published_case)
{
    char path[64];
    write_temp("{\"id\": \"x\", \"grup\": \"g\"}", path);
    val_case c;
    memset(&c, 0, sizeof c);
    sim_err err = {{0}};
    ck_assert_int_eq(val_case_load(path, NULL, &c, &err), SIM_EINVAL);
    says(&err, path, ".grup: unknown key (did you mean 'group'?)");
    unlink(path);
}
END_TEST

START_TEST(sweep_record)
{
    cJSON *o = cJSON_Parse("{\"index\": 1, \"zzzzzzzz\": 2}");
    ck_assert(o);
    srch_candidate c;
    sim_err err = {{0}};
    ck_assert_int_eq(srch_record_from_json(o, "r.jsonl: line 1", &c, &err), SIM_EINVAL);
    says(&err, "r.jsonl: line 1", ".zzzzzzzz: unknown key (known keys: index, space, inputs_id, megatron_style, "
                                  "strategy, estimate_step_time_s, estimate, simulated, final, step_time_s, "
                                  "approximate, mfu, tokens_per_s, breakdown, dimensions, memory, error)");
    cJSON_Delete(o);
}
END_TEST

START_TEST(duplicate_key)
{
    static const char *const known[] = {"a", "b", NULL};
    cJSON *o = cJSON_Parse("{\"a\": 1, \"b\": 2, \"a\": 3}");
    ck_assert(o);
    sim_err err = {{0}};
    ck_assert_int_eq(cfg_check_keys(o, known, "x.json", ".part", &err), SIM_EINVAL);
    says(&err, "x.json", ".part.a: duplicate key (keep one)");
    cJSON *good = cJSON_Parse("{\"b\": 2}");
    ck_assert_int_eq(cfg_check_keys(good, known, "x.json", "", &err), SIM_OK);
    cJSON_Delete(good);
    cJSON_Delete(o);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("unknown_keys");
    TCase *t = tcase_create("core");
    tcase_add_test(t, strategy_file);
    tcase_add_test(t, study_file);
    tcase_add_test(t, published_case);
    tcase_add_test(t, sweep_record);
    tcase_add_test(t, duplicate_key);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(suite());
}
