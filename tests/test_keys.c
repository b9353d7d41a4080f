/* test_keys.c - the strategy key table (config/keys.h): every row is
 * consistent (schema default, search columns, pins, compact tokens), every
 * field of cfg_strategy has a row, and equality, fingerprint and compact
 * strings tell apart strategies that differ in one key. */
#include <check.h>
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/keys.h"
#include "model/model.h"
#include "search/search.h"
#include "lib/check_run.h"

/* ------------------------------------------------------------ fixtures */

static cfg_model moe;
static cfg_platform platform;

static void setup(void)
{
    sim_err err = {{0}};
    const char *json = "{\"name\": \"keys-moe\", \"layers\": 8, \"hidden\": 1024, \"heads\": 16, \"ffn_hidden\": 4096, "
                       "\"vocab\": 32000, \"seq_len\": 2048, \"moe\": {\"experts\": 4, \"top_k\": 2, "
                       "\"ffn_hidden\": 2048}}";
    ck_assert_msg(cfg_parse_model(json, "test model", NULL, &moe, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_load_platform("ascend-a3-2048", NULL, 16, &platform, &err) == SIM_OK, "%s", err.msg);
}

/* A checked strategy of the MoE model on 16 devices from JSON text. */
static cfg_strategy checked(const char *json)
{
    sim_err err = {{0}};
    cfg_strategy s;
    ck_assert_msg(cfg_parse_strategy(json, "test strategy", NULL, &s, &err) == SIM_OK, "%s", err.msg);
    ck_assert_msg(cfg_check(&moe, &platform, &s, &err) == SIM_OK, "%s: %s", json, err.msg);
    return s;
}

/* Two strategies between which every key matters somewhere: 1D TP with
 * sequence parallel, ring CP, data parallel, ZeRO-1 and experts; 2D TP
 * with Ulysses (fusion matters there). */
static void bases(cfg_strategy out[2])
{
    out[0] = checked("{\"dp\": 2, \"pp\": 2, \"tp_x\": 2, \"cp_ring\": 2, \"ep\": 2, \"zero\": 1, "
                     "\"global_batch\": 16}");
    out[1] = checked("{\"dp\": 2, \"pp\": 2, \"tp_x\": 1, \"tp_y\": 2, \"cp_ulysses\": 2, \"global_batch\": 16}");
}

static char *fingerprint(const cfg_strategy *s)
{
    cJSON *o = cfg_strategy_fingerprint_json(s);
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return text;
}

/* s with key k moved off its value: ints + 1, bools flipped, the next enum
 * name, the first two dimensions of the order swapped, doubles + 0.5,
 * strings lengthened. */
static cfg_strategy moved(const cfg_strategy *s, const cfg_key *k)
{
    cfg_strategy t = *s;
    char *field = (char *)&t + k->offset;
    switch (k->type) {
    case CFG_K_INT: *(int *)field += 1; break;
    case CFG_K_BOOL: *(bool *)field = !*(bool *)field; break;
    case CFG_K_ENUM: {
        int n = 0;
        while (k->names[n]) n++;
        *(int *)field = (*(int *)field + 1) % n;
        break;
    }
    case CFG_K_ORDER: {
        cfg_dim *d = (cfg_dim *)field, a = d[0];
        d[0] = d[1];
        d[1] = a;
        break;
    }
    case CFG_K_DOUBLE: *(double *)field += 0.5; break;
    case CFG_K_STRING: strncat(field, "x", k->size - strlen(field) - 1); break;
    default: ck_abort_msg("%s: unexpected type", k->key);
    }
    return t;
}

/* ------------------------------------------------------------- the rows */

START_TEST(rows_are_consistent)
{
    int positions[SRCH_MAX_LEVELS + 1] = {0}, tokens[CFG_MAX_OBJECT_KEYS + 1] = {0}, nrows = 0;
    cfg_stage last_stage = CFG_STAGE_NONE;
    for (int pos = 1; pos <= SRCH_MAX_LEVELS; pos++)
        for (const cfg_key *k = cfg_strategy_keys; k->key; k++)
            if (k->search == pos) {
                ck_assert_msg(k->stage >= last_stage, "%s: stage before the stage of an earlier position", k->key);
                last_stage = k->stage;
            }
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++, nrows++) {
        ck_assert_ptr_eq(cfg_strategy_key(k->key), k); /* names are unique */
        ck_assert_msg(k->offset < sizeof(cfg_strategy), "%s", k->key);
        if (k->search) {
            ck_assert_msg(k->search > 0 && k->search <= SRCH_MAX_LEVELS, "%s: search position", k->key);
            ck_assert_msg(positions[k->search]++ == 0, "%s: search position %d taken twice", k->key, k->search);
            ck_assert_msg(k->stage != CFG_STAGE_NONE && k->choices, "%s: searched without stage or choices", k->key);
            ck_assert_msg(srch_pin_of_key(k->key) != 0, "%s: searched but cannot be pinned", k->key);
            ck_assert_msg(k->flags & CFG_KF_SAME, "%s: searched but not compared", k->key);
            ck_assert_msg(k->type == CFG_K_INT || k->type == CFG_K_BOOL || k->type == CFG_K_ENUM ||
                              k->type == CFG_K_ORDER,
                          "%s: a searched key holds an int, bool, enum or order", k->key);
        } else {
            ck_assert_msg(k->stage == CFG_STAGE_NONE && !k->choices && !k->fits && !k->derive,
                          "%s: search rules without a search position", k->key);
        }
        if (k->flags & CFG_KF_CHECKED) ck_assert_msg(k->stage == CFG_STAGE_INNER, "%s: checked keys are inner", k->key);
        if (k->stage == CFG_STAGE_DIMS) ck_assert_msg(k->type == CFG_K_INT, "%s: a dimension is an int", k->key);
        if (k->flags & CFG_KF_FINGERPRINT) ck_assert_msg(k->flags & CFG_KF_SAME, "%s: in the fingerprint only", k->key);
        if (k->compact) {
            ck_assert_msg(k->compact > 0 && k->compact <= CFG_MAX_OBJECT_KEYS, "%s: compact position", k->key);
            ck_assert_msg(tokens[k->compact]++ == 0, "%s: compact position %d taken twice", k->key, k->compact);
            ck_assert_msg((k->token != NULL) != (k->format != NULL), "%s: a token or a format, not both", k->key);
        } else {
            ck_assert_msg(!k->token && !k->format, "%s: a token without a compact position", k->key);
        }
        if (k->with) {
            const cfg_key *w = NULL;
            for (const cfg_key *r = cfg_strategy_keys; r->key; r++)
                if (r->offset == k->with && r->type == CFG_K_INT) w = r;
            ck_assert_msg(w != NULL, "%s: its `with` field has no int row", k->key);
        }
        for (const cfg_key *r = cfg_strategy_keys; r != k; r++) {
            ck_assert_msg(r->offset != k->offset, "%s and %s: one field", r->key, k->key);
            if (k->token && r->token) ck_assert_msg(strcmp(k->token, r->token) != 0, "%s: token of %s", k->key, r->key);
        }
    }
    ck_assert_int_le(nrows, CFG_MAX_OBJECT_KEYS);
}
END_TEST

START_TEST(defaults_parse_and_round_trip)
{
    sim_err err = {{0}};
    cfg_strategy s, back;
    ck_assert_msg(cfg_parse_strategy("{\"global_batch\": 8}", "test", NULL, &s, &err) == SIM_OK, "%s", err.msg);
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (k->type != CFG_K_INT && k->type != CFG_K_BOOL && k->type != CFG_K_ENUM && k->type != CFG_K_ORDER) continue;
        if (k->flags & (CFG_KF_REQUIRED | CFG_KF_DERIVED)) continue;
        cfg_value got, def;
        cfg_key_get(k, &s, &got);
        cfg_key_default(k, &def);
        ck_assert_msg(cfg_value_same(k, &got, &def), "%s: the schema's default is not cfg_key_default", k->key);
        cfg_strategy t = s;
        cfg_key_set(k, &t, &def);
        ck_assert_msg(cfg_strategy_same(&s, &t), "%s: set changes what get read", k->key);
    }
    cJSON *o = cfg_strategy_to_json(&s);
    char *text = cJSON_PrintUnformatted(o);
    ck_assert_msg(cfg_parse_strategy(text, "written", NULL, &back, &err) == SIM_OK, "%s", err.msg);
    ck_assert(cfg_strategy_same(&s, &back));
    cJSON_free(text);
    cJSON_Delete(o);
}
END_TEST

/* Every member of struct cfg_strategy (config.h) is a row, named like its
 * JSON key; only `path` (where it was read from) is not an input. */
START_TEST(every_field_has_a_row)
{
    char path[CFG_PATH_LEN + 32];
    snprintf(path, sizeof path, "%s/sim/config/config.h", cfg_data_dir());
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *p = strstr(text, "typedef struct cfg_strategy {"), *end = p ? strstr(p, "} cfg_strategy;") : NULL;
    ck_assert(p && end);
    p = strchr(p, '{') + 1;
    *end = '\0';
    for (char *c = strstr(p, "/*"); c; c = strstr(c, "/*")) { /* comments out */
        char *e = strstr(c, "*/");
        ck_assert(e);
        memset(c, ' ', (size_t)(e + 2 - c));
    }
    int members = 0;
    for (char *decl = strtok(p, ";"); decl; decl = strtok(NULL, ";")) {
        while (isspace((unsigned char)*decl)) decl++;
        if (!*decl) continue;
        while (*decl && !isspace((unsigned char)*decl)) decl++; /* the type */
        for (char *name = strtok_r(decl, ",", &decl); name; name = strtok_r(NULL, ",", &decl)) {
            while (isspace((unsigned char)*name) || *name == '*') name++;
            size_t len = 0;
            while (isalnum((unsigned char)name[len]) || name[len] == '_') len++;
            name[len] = '\0';
            members++;
            if (strcmp(name, "path") == 0) continue;
            ck_assert_msg(cfg_strategy_key(name) != NULL, "cfg_strategy.%s has no row in cfg_strategy_keys", name);
        }
        decl = NULL;
    }
    int rows = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) rows++;
    ck_assert_int_eq(members, rows + 1);
}
END_TEST

/* ------------------------------------------- equality and fingerprints */

START_TEST(one_key_apart_is_another_strategy)
{
    cfg_strategy b[2];
    bases(b);
    char *fb = fingerprint(&b[0]);
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        cfg_strategy t = moved(&b[0], k);
        char *ft = fingerprint(&t);
        /* every input but the names takes part in both */
        if (k->type != CFG_K_STRING)
            ck_assert_msg((k->flags & CFG_KF_SAME) && (k->flags & CFG_KF_FINGERPRINT),
                          "%s: not compared, or not in the fingerprint", k->key);
        bool same = cfg_strategy_same(&b[0], &t), same_print = strcmp(fb, ft) == 0;
        ck_assert_msg(same == !(k->flags & CFG_KF_SAME), "%s: cfg_strategy_same says %d", k->key, same);
        ck_assert_msg(same_print == !(k->flags & CFG_KF_FINGERPRINT), "%s: fingerprint same %d", k->key, same_print);
        if (k->with) { /* the field carried along counts too */
            cfg_strategy w = b[0];
            *(int *)((char *)&w + k->with) += 1;
            ck_assert_msg(!cfg_strategy_same(&b[0], &w), "%s: its `with` field is not compared", k->key);
        }
        free(ft);
    }
    free(fb);
}
END_TEST

/* ----------------------------------------------------- compact strings */

/* A searched or printed key changes the compact string whenever it takes
 * another of its values where it matters: every candidate of a search has
 * its own name. */
/* The values a search tries of k for s (none for a key it does not
 * search), from a base strategy that allows the lower precisions, which a
 * search tries only then. */
static int search_values(const cfg_key *k, const cfg_strategy *s, cfg_value *v)
{
    if (!k->choices) return 0;
    cfg_strategy allow = *s;
    allow.fp8 = allow.grad_reduce_in_bf16 = true;
    allow.optimizer_moments = CFG_MOMENTS_BF16;
    cfg_space sp = {.model = &moe, .platform = &platform, .base = &allow, .room = platform.devices};
    return k->choices(k, &sp, s, v);
}

START_TEST(compact_names_tell_values_apart)
{
    cfg_strategy b[2];
    bases(b);
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (!k->search && !k->compact) continue;
        int changes = 0;
        for (int i = 0; i < 2; i++) {
            if (!cfg_key_matters(k, &b[i])) continue;
            char c0[CFG_TEXT_LEN], c1[CFG_TEXT_LEN];
            cfg_strategy_compact(&b[i], c0, sizeof c0);
            cfg_value now, v[CFG_MAX_CHOICES];
            cfg_key_get(k, &b[i], &now);
            int n = search_values(k, &b[i], v);
            if (!k->choices) v[n++] = (cfg_value){.i = now.i + 1};
            for (int j = 0; j < n; j++) {
                if (cfg_value_same(k, &v[j], &now)) continue;
                cfg_strategy t = b[i];
                cfg_key_set(k, &t, &v[j]);
                cfg_strategy_compact(&t, c1, sizeof c1);
                ck_assert_msg(strcmp(c0, c1) != 0, "%s: \"%s\" for another value", k->key, c0);
                changes++;
            }
        }
        ck_assert_msg(changes > 0, "%s: never shown in the compact string", k->key);
    }
}
END_TEST

START_TEST(compact_names_by_hand)
{
    cfg_strategy b[2];
    bases(b);
    char c[CFG_TEXT_LEN];
    cfg_strategy_compact(&b[0], c, sizeof c);
    ck_assert_str_eq(c, "dp2 pp2 tp2 ring2 ep2 mb1 norc z1");
    b[0].sequence_parallel = true;
    b[0].schedule = CFG_SCHED_INTERLEAVED;
    b[0].vpp = 2;
    b[0].overlap_grad_reduce = false;
    cfg_strategy_compact(&b[0], c, sizeof c);
    ck_assert_str_eq(c, "dp2 pp2v2 tp2 sp ring2 ep2 mb1 norc z1 no-ovl-grad");
    b[1].fuse_tpy_cp = true;
    b[1].recompute = CFG_RECOMP_SELECTIVE;
    cfg_strategy_compact(&b[1], c, sizeof c);
    ck_assert_str_eq(c, "dp2 pp2 tp1x2 uly2 fused mb1 sel z0");
}
END_TEST

/* The value of k in s as a search means it (a pinned value that stands
 * for another, etp 0 = tp, is that one). */
static cfg_value meant(const cfg_key *k, const cfg_strategy *s)
{
    cfg_value v;
    cfg_key_get(k, s, &v);
    if (k->derive) k->derive(s, &v);
    return v;
}

/* Every value a search tries of every key, or the next one, printed and
 * read back: the same compact string, and every key that matters at its
 * value (those that do not at their default, which is what the string
 * says of them). */
START_TEST(compact_strings_read_back)
{
    cfg_strategy b[2];
    bases(b);
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (!k->search && !k->compact) continue; /* vpp: the schedule's values carry it */
        int read = 0;
        for (int i = 0; i < 2; i++) {
            cfg_value now, v[CFG_MAX_CHOICES + 1];
            cfg_key_get(k, &b[i], &now);
            int n = search_values(k, &b[i], v);
            v[n++] = (cfg_value){.i = now.i + 1, .with = now.with + 1, .order = {0}};
            if (k->type == CFG_K_ORDER) n--; /* its choices are every order it has a name for */
            for (int j = 0; j < n; j++) {
                cfg_strategy t = b[i];
                cfg_key_set(k, &t, &v[j]);
                char c1[CFG_TEXT_LEN], c2[CFG_TEXT_LEN];
                cfg_strategy_compact(&t, c1, sizeof c1);
                cfg_strategy r = b[i];
                r.tp_x = r.dp = 7; /* overwritten: every token key is read or reset */
                sim_err err = {{0}};
                ck_assert_msg(cfg_strategy_read_compact(c1, "test", &r, &err) == SIM_OK, "%s: '%s': %s", k->key, c1,
                              err.msg);
                cfg_strategy_compact(&r, c2, sizeof c2);
                ck_assert_msg(strcmp(c1, c2) == 0, "%s: '%s' read back as '%s'", k->key, c1, c2);
                for (const cfg_key *o = cfg_strategy_keys; o->key; o++) {
                    if (!o->search && !o->compact && !o->pin_as) continue;
                    cfg_value want = meant(o, &t), got = meant(o, &r);
                    if (!cfg_key_matters(o, &t)) cfg_key_default(o, &want);
                    if (!cfg_key_matters(o, &t) && o->derive) o->derive(&r, &want);
                    ck_assert_msg(cfg_value_same(o, &want, &got), "%s: '%s': %s read as %d (%d)", k->key, c1, o->key,
                                  got.i, want.i);
                }
                ck_assert_int_eq(r.global_batch, b[i].global_batch); /* no token: the base's */
                read++;
            }
        }
        ck_assert_msg(read > 0, "%s: never read back", k->key);
    }
}
END_TEST

START_TEST(compact_strings_by_hand)
{
    cfg_strategy s = {0};
    sim_err err = {{0}};
    ck_assert(cfg_strategy_read_compact("dp512 pp4-zb-v tp2x2 sp uly2 ep16 etp1 mb2 full z3 no-ovl-grad dp<cp", "t",
                                        &s, &err) == SIM_OK);
    ck_assert_int_eq(s.dp, 512);
    ck_assert_int_eq(s.pp, 4);
    ck_assert_int_eq(s.schedule, CFG_SCHED_ZB_V);
    ck_assert_int_eq(s.tp_x, 2);
    ck_assert_int_eq(s.tp_y, 2);
    ck_assert(s.sequence_parallel);
    ck_assert_int_eq(s.cp_ulysses, 2);
    ck_assert_int_eq(s.ep, 16);
    ck_assert_int_eq(s.etp, 1);
    ck_assert_int_eq(s.micro_batch, 2);
    ck_assert_int_eq(s.recompute, CFG_RECOMP_FULL);
    ck_assert_int_eq(s.zero, 3);
    ck_assert(!s.overlap_grad_reduce);
    ck_assert(s.overlap_param_gather);
    ck_assert_int_eq(s.order[2], CFG_DIM_EP);
    ck_assert(cfg_strategy_read_compact("pp8v3 dp2", "t", &s, &err) == SIM_OK);
    ck_assert_int_eq(s.schedule, CFG_SCHED_INTERLEAVED);
    ck_assert_int_eq(s.vpp, 3);
    ck_assert_int_eq(s.tp_x, 1); /* reset: not named */
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"dp8 tp2 foo", "t: 'foo' is not a token of a compact strategy"},
        {"dp8 dp4", "t: 'dp4' sets dp a second time"},
        {"dp8 pp2v2 pp2", "t: 'pp2' sets pp a second time"},
        {"dp8 tp2x", "t: 'tp2x' is not a token"},
        {"dp12345678901", "t: 'dp12345678901' is not a token"},
        {"dp8 pp2-interleaved", "t: 'pp2-interleaved' is not a token"},
        {"  ", "t: an empty compact strategy"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(cfg_strategy_read_compact(bad[i].text, "t", &s, &err) == SIM_EINVAL, "%s", bad[i].text);
        ck_assert_msg(strncmp(err.msg, bad[i].msg, strlen(bad[i].msg)) == 0, "%s: %s", bad[i].text, err.msg);
    }
}
END_TEST

/* ------------------------------------------------------ search columns */

START_TEST(pins_are_one_bit_per_key)
{
    unsigned seen = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        unsigned bit = srch_pin_of_key(k->key);
        ck_assert_msg(((bit != 0) == ((k->flags & CFG_KF_PIN) != 0)), "%s: pin %#x", k->key, bit);
        if (!bit) continue;
        ck_assert_msg((bit & (bit - 1)) == 0, "%s: one bit", k->key);
        if (k->pin_as) {
            ck_assert_uint_eq(bit, srch_pin_of_key(k->pin_as));
        } else {
            ck_assert_msg(!(seen & bit), "%s: bit %#x taken twice", k->key, bit);
            seen |= bit;
        }
    }
    ck_assert_uint_eq(srch_pin_of_key("vpp"), srch_pin_of_key("schedule"));
    ck_assert_uint_eq(srch_pin_of_key("global_batch"), 0);
    ck_assert_uint_eq(srch_pin_of_key("no_such_key"), 0);
}
END_TEST

/* A key whose value changes nothing in a strategy is tried at one value;
 * a key the memory model ignores (CFG_KF_NO_MEMORY) leaves the peak memory
 * alone, as the search assumes when it reuses it. */
START_TEST(search_columns_hold)
{
    cfg_strategy b[2];
    bases(b);
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (!k->choices) continue;
        for (int i = 0; i < 2; i++) {
            cfg_space sp = {.model = &moe, .platform = &platform, .base = &b[i], .room = platform.devices};
            cfg_value v[CFG_MAX_CHOICES];
            int n = k->choices(k, &sp, &b[i], v);
            ck_assert_msg(n >= 1 && n <= CFG_MAX_CHOICES, "%s: %d choices", k->key, n);
            if (!cfg_key_matters(k, &b[i])) ck_assert_msg(n == 1, "%s: %d choices where it does not matter", k->key, n);
            for (int j = 0; j < n; j++)
                for (int l = 0; l < j; l++)
                    ck_assert_msg(!cfg_value_same(k, &v[j], &v[l]), "%s: choice %d twice", k->key, j);
            if (!(k->flags & CFG_KF_NO_MEMORY)) continue;
            mdl_memory m0, m1;
            mdl_peak_memory(&moe, &b[i], &m0);
            for (int j = 0; j < n; j++) {
                cfg_strategy t = b[i];
                cfg_key_set(k, &t, &v[j]);
                mdl_peak_memory(&moe, &t, &m1);
                ck_assert_msg(m1.total_bytes == m0.total_bytes, "%s: the memory moves with it", k->key);
            }
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("keys");
    TCase *t = tcase_create("table");
    tcase_add_checked_fixture(t, setup, NULL);
    tcase_add_test(t, rows_are_consistent);
    tcase_add_test(t, defaults_parse_and_round_trip);
    tcase_add_test(t, every_field_has_a_row);
    tcase_add_test(t, one_key_apart_is_another_strategy);
    tcase_add_test(t, compact_names_tell_values_apart);
    tcase_add_test(t, compact_names_by_hand);
    tcase_add_test(t, compact_strings_read_back);
    tcase_add_test(t, compact_strings_by_hand);
    tcase_add_test(t, pins_are_one_bit_per_key);
    tcase_add_test(t, search_columns_hold);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(suite());
}
