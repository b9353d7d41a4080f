/* test_band.c - the error band of a platform follows its provenance, by
 * the rule docs/validation.md states: a calibrated file's mean held-out
 * error (else its rms error after the fit), a derived file's relative's
 * band, an uncalibrated file's nearest calibrated relative's error before
 * its fit (else the largest such error); changed efficiencies make a file
 * uncalibrated.  Checked on a directory made for it and on every shipped
 * platform; with the step-time ranks of a source (rank correlation, the
 * error of a ratio) against a naive reference. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "validate/validate.h"
#include "lib/check_run.h"
#include "lib/platform_dir.h"

static const char *const names[] = {"a.json", "b.json", "c.json", "d.json", "e.json", "f.json", NULL};

/* a: uncalibrated; b: a calibrated (held out 5 %, 30 % before); c: alone;
 * d: derived from b; e: b's hardware with its own attention, claiming
 * nothing; f: b refitted without a held-out record. */
static void make_dir(char *dir)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *full = TEST_FULL_PLATFORM;
    write_file(dir, "a.json", full);
    write_file(dir, "b.json",
               "{\"base\": \"a.json\", \"efficiency\": {\"attention\": 0.4},"
               " \"calibration\": {\"cases\": 4, \"rms_error_before\": 0.3, \"rms_error_after\": 0.03,"
               " \"held_out_error\": 0.05, \"sources\": \"src-one\", \"pair_error_before\": 0.2,"
               " \"pair_error_after\": 0.04}}");
    write_file(dir, "c.json", full);
    write_file(dir, "d.json",
               "{\"base\": \"b.json\", \"device\": {\"peak_tflops\": 120},"
               " \"provenance\": {\"derived_from\": \"b.json\", \"reason\": \"the same chip\"}}");
    write_file(dir, "e.json", "{\"base\": \"b.json\", \"efficiency\": {\"attention\": 0.45}}");
    write_file(dir, "f.json",
               "{\"base\": \"a.json\", \"efficiency\": {\"attention\": 0.42},"
               " \"calibration\": {\"cases\": 3, \"rms_error_before\": 0.45, \"rms_error_after\": 0.02,"
               " \"pair_error_before\": 0.25}}");
}

static void drop_dir(const char *dir)
{
    for (int i = 0; names[i]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

static cfg_band band_of(const char *dir, const char *name, const char *set)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const char *items[] = {set};
    cfg_overrides ov = {set ? 1 : 0, items};
    sim_err err = {{0}};
    cfg_platform p;
    ck_assert_msg(cfg_load_platform(path, &ov, 0, &p, &err) == SIM_OK, "%s", err.msg);
    cfg_band b;
    ck_assert_msg(val_platform_band(&p, dir, &b, &err) == SIM_OK, "%s", err.msg);
    return b;
}

START_TEST(test_band_follows_provenance)
{
    char dir[] = "/tmp/heptasim-band-XXXXXX";
    make_dir(dir);
    cfg_band b = band_of(dir, "b.json", NULL);
    ck_assert_str_eq(b.kind, "calibrated");
    ck_assert_double_eq(b.error, 0.05);
    ck_assert_double_eq(b.pair_error, 0.04); /* a speed-up: the pair error after the fit */
    ck_assert_str_eq(b.relative, "b");
    ck_assert_ptr_nonnull(strstr(b.reason, "calibrated on src-one (4 cases): mean error of each case held out"));
    b = band_of(dir, "f.json", NULL); /* no held-out record: the fit's own error, and the fix */
    ck_assert_str_eq(b.kind, "calibrated");
    ck_assert_double_eq(b.error, 0.02);
    ck_assert_ptr_nonnull(strstr(b.reason, "refit with calibrate --loo"));
    b = band_of(dir, "d.json", NULL);
    ck_assert_str_eq(b.kind, "derived");
    ck_assert_double_eq(b.error, 0.05);
    ck_assert_double_eq(b.pair_error, 0.04);
    ck_assert_str_eq(b.relative, "b");
    ck_assert_ptr_nonnull(strstr(b.reason, "derived from b, calibrated on src-one"));
    b = band_of(dir, "a.json", NULL); /* nearest relative b (one step), not f (same distance, later name) */
    ck_assert_str_eq(b.kind, "uncalibrated");
    ck_assert_double_eq(b.error, 0.3);
    ck_assert_double_eq(b.pair_error, 0.2); /* before the fit */
    ck_assert_str_eq(b.relative, "b");
    b = band_of(dir, "e.json", NULL); /* on b's chain, with efficiencies of its own */
    ck_assert_str_eq(b.kind, "uncalibrated");
    ck_assert_double_eq(b.error, 0.3);
    b = band_of(dir, "c.json", NULL); /* no relative: the largest error before a fit */
    ck_assert_str_eq(b.kind, "uncalibrated");
    ck_assert_double_eq(b.error, 0.45);
    ck_assert_double_eq(b.pair_error, 0.25);
    ck_assert_str_eq(b.relative, "f");
    ck_assert_ptr_nonnull(strstr(b.reason, "no calibrated relative"));
    /* an efficiency changed on the command line: no longer the fit */
    b = band_of(dir, "b.json", "platform.efficiency.attention=0.6");
    ck_assert_str_eq(b.kind, "uncalibrated");
    ck_assert_double_eq(b.error, 0.3);
    ck_assert_ptr_nonnull(strstr(b.reason, "efficiencies changed from b's"));
    b = band_of(dir, "d.json", "platform.efficiency.network=0.95");
    ck_assert_str_eq(b.kind, "uncalibrated");
    /* a figure that is not an efficiency keeps the band */
    b = band_of(dir, "b.json", "platform.network.nic_GBps=20");
    ck_assert_str_eq(b.kind, "calibrated");
    drop_dir(dir);
}
END_TEST

/* Refusals of a bad provenance record: one line naming the file and key. */
START_TEST(test_bad_provenance_refused)
{
    char dir[] = "/tmp/heptasim-band-XXXXXX";
    make_dir(dir);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"base\": \"b.json\", \"provenance\": {\"derived_from\": \"c.json\"}}",
         ".provenance.derived_from: 'c.json' is not calibrated"},
        {"{\"base\": \"a.json\", \"provenance\": {\"derived_from\": \"a.json\"}}",
         ".provenance.derived_from: 'a.json' is not calibrated"},
        {"{\"base\": \"b.json\", \"provenance\": {\"derived_from\": \"nowhere.json\"}}",
         ".provenance.derived_from: platform 'nowhere.json' not found"},
        {"{\"base\": \"b.json\", \"provenance\": {\"reason\": \"x\"}}", ".provenance.derived_from"},
        {"{\"base\": \"b.json\", \"provenance\": {\"derived_from\": \"b.json\", \"why\": 1}}",
         ".provenance.why: unknown key"},
        {"{\"base\": \"b.json\", \"provenance\": {\"derived_from\": \"b.json\"}, \"calibration\": {\"cases\": 2}}",
         ".provenance: a calibrated file (with .calibration) is its own source"},
        {"{\"base\": \"b.json\", \"efficiency\": {\"attention\": 0.45}, \"provenance\": {\"derived_from\": \"b.json\"}}",
         ".provenance.derived_from: the file's efficiencies differ from those of 'b.json'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(dir, "e.json", bad[i].text);
        char path[256];
        snprintf(path, sizeof path, "%s/e.json", dir);
        cfg_platform p;
        sim_err err = {{0}};
        ck_assert_int_eq(cfg_load_platform(path, NULL, 0, &p, &err), SIM_EINVAL);
        ck_assert_msg(strstr(err.msg, "e.json: ") && strstr(err.msg, bad[i].msg), "case %zu: %s", i, err.msg);
        ck_assert_ptr_null(strchr(err.msg, '\n'));
    }
    drop_dir(dir);
}
END_TEST

/* A derived platform written out as resolved JSON (no .base, its
 * relative's efficiencies spelled out) loads again, still derived; the
 * same file with one efficiency changed is refused. */
START_TEST(test_written_derived_platform_loads_again)
{
    char dir[] = "/tmp/heptasim-band-XXXXXX";
    make_dir(dir);
    char path[256];
    snprintf(path, sizeof path, "%s/d.json", dir);
    cfg_platform p, again;
    sim_err err = {{0}};
    ck_assert_int_eq(cfg_load_platform(path, NULL, 0, &p, &err), SIM_OK);
    cJSON *doc = cfg_platform_to_json(&p);
    char *text = cJSON_PrintUnformatted(doc);
    snprintf(path, sizeof path, "%s/written.json", dir);
    ck_assert_msg(cfg_parse_platform(text, path, NULL, 0, &again, &err) == SIM_OK, "%s", err.msg);
    ck_assert_str_eq(again.provenance.derived_from, "b.json");
    cJSON_free(text);
    cJSON *eff = cJSON_GetObjectItemCaseSensitive(doc, "efficiency");
    cJSON_ReplaceItemInObjectCaseSensitive(eff, "attention", cJSON_CreateNumber(0.41));
    text = cJSON_PrintUnformatted(doc);
    ck_assert_int_eq(cfg_parse_platform(text, path, NULL, 0, &again, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "efficiencies differ from those of 'b.json'"));
    cJSON_free(text);
    cJSON_Delete(doc);
    drop_dir(dir);
}
END_TEST

static const char *data_dir(void)
{
    const char *d = getenv("HEPTASIM_DATA");
    return d && d[0] ? d : ".";
}

/* Every shipped platform: calibrated files carry a held-out record and
 * are banded by it; derived files by their relative's; the others by the
 * error before the fit of the relative validate names for them. */
START_TEST(test_shipped_bands)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/platforms", data_dir());
    val_preset_gap g[VAL_MAX_PRESETS];
    sim_err err = {{0}};
    int ng = val_preset_gaps(dir, g, VAL_MAX_PRESETS, &err);
    ck_assert_msg(ng > 0, "%s", err.msg);
    char **paths = NULL;
    int np = 0;
    ck_assert_int_eq(val_list_dir(dir, &paths, &np, &err), SIM_OK);
    int seen[3] = {0};
    for (int i = 0; i < np; i++) {
        cfg_platform p;
        cfg_band b;
        ck_assert_msg(cfg_load_platform(paths[i], NULL, 0, &p, &err) == SIM_OK, "%s", err.msg);
        ck_assert_msg(val_platform_band(&p, dir, &b, &err) == SIM_OK, "%s", err.msg);
        ck_assert_msg(b.error > 0 && b.error < 1, "%s: band %g", p.name, b.error);
        if (p.calibration.cases > 0) {
            ck_assert_msg(p.calibration.held_out_error > 0 && p.calibration.sources[0], "%s: no held-out record",
                          p.name);
            ck_assert_str_eq(b.kind, "calibrated");
            ck_assert_double_eq(b.error, p.calibration.held_out_error);
            seen[0]++;
        } else if (p.provenance.derived_from[0]) {
            cfg_platform r;
            ck_assert_int_eq(cfg_load_platform(p.provenance.derived_path, NULL, 0, &r, &err), SIM_OK);
            ck_assert_str_eq(b.kind, "derived");
            ck_assert_str_eq(b.relative, r.name);
            ck_assert_double_eq(b.error, r.calibration.held_out_error);
            seen[1]++;
        } else {
            ck_assert_str_eq(b.kind, "uncalibrated");
            int k = 0;
            while (k < ng && strcmp(g[k].name, p.name) != 0) k++;
            ck_assert_msg(k < ng && g[k].relative[0], "%s: no calibrated relative", p.name);
            ck_assert_str_eq(b.relative, g[k].relative);
            cfg_platform r;
            ck_assert_int_eq(cfg_load_platform(g[k].relative, NULL, 0, &r, &err), SIM_OK);
            ck_assert_double_eq(b.error, r.calibration.rms_error_before);
            /* never tighter than a calibrated band */
            ck_assert_msg(b.error > r.calibration.held_out_error, "%s", p.name);
            seen[2]++;
        }
    }
    val_free_paths(paths, np);
    ck_assert(seen[0] >= 4 && seen[1] >= 1 && seen[2] >= 1);
}
END_TEST

/* The records only the band reads stay out of fingerprints: dropped, a
 * calibrated file writes the keys it wrote before they existed. */
START_TEST(test_band_records_left_out_of_fingerprints)
{
    char dir[] = "/tmp/heptasim-band-XXXXXX";
    make_dir(dir);
    char path[256];
    snprintf(path, sizeof path, "%s/b.json", dir);
    cfg_platform p;
    sim_err err = {{0}};
    ck_assert_int_eq(cfg_load_platform(path, NULL, 0, &p, &err), SIM_OK);
    cfg_platform_drop_band_records(&p);
    cJSON *j = cfg_platform_to_json(&p), *k = cJSON_GetObjectItemCaseSensitive(j, "calibration");
    ck_assert_ptr_nonnull(k);
    ck_assert_int_eq(cJSON_GetArraySize(k), 3); /* cases, rms_error_before, rms_error_after */
    cJSON_Delete(j);
    snprintf(path, sizeof path, "%s/d.json", dir);
    ck_assert_int_eq(cfg_load_platform(path, NULL, 0, &p, &err), SIM_OK);
    cfg_platform_drop_band_records(&p);
    j = cfg_platform_to_json(&p);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "provenance"));
    cJSON_Delete(j);
    drop_dir(dir);
}
END_TEST

/* Step-time ranks of a source against a naive reference: Spearman's rho of
 * (measured, simulated) and the rms of every pair's ratio error. */
START_TEST(test_step_ranks)
{
    enum { N = 5 };
    static const double measured[N] = {1, 2, 3, 4, 5}, error[N] = {0.1, -0.05, 0.2, 0.0, -0.1};
    val_case *cs = calloc(N + 1, sizeof *cs);
    ck_assert_ptr_nonnull(cs);
    for (int i = 0; i <= N; i++) {
        sim_strlcpy(cs[i].group, i < N ? "g" : "other", sizeof cs[i].group);
        cs[i].nruns = 1;
        cs[i].runs[0].ncmp = 2;
        val_compare *c = cs[i].runs[0].cmp;
        c[0] = (val_compare){VAL_STEP_TIME_S, i < N ? measured[i] : 9, false, 0, i < N ? error[i] : 0.5};
        c[0].simulated = c[0].measured * (1 + c[0].error);
        c[1] = (val_compare){VAL_MFU, 0.5, false, 0.9, 0.8}; /* not a step time: left out */
    }
    val_step_rank r;
    val_step_ranks(cs, N + 1, "g", false, &r);
    ck_assert_int_eq(r.n, N);
    /* simulated 1.1, 1.9, 3.6, 4, 4.5: the order of the measured ones */
    ck_assert_double_eq_tol(r.rank_correlation, 1.0, 1e-12);
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            if (i != j) sum += pow((1 + error[i]) / (1 + error[j]) - 1, 2);
    ck_assert_double_eq_tol(r.pair_error, sqrt(sum / (N * (N - 1))), 1e-12);
    /* a swapped pair lowers rho by the rank formula 1 - 6 sum d^2 / (n (n^2 - 1)) */
    cs[0].runs[0].cmp[0].simulated = 2.5;
    val_step_ranks(cs, N + 1, "g", false, &r);
    ck_assert_double_eq_tol(r.rank_correlation, 1 - 6.0 * 2 / (N * (N * N - 1)), 1e-12);
    /* every non-loose case: six step times */
    val_step_ranks(cs, N + 1, NULL, false, &r);
    ck_assert_int_eq(r.n, N + 1);
    /* fewer than three: no rho; fewer than two: no pair error */
    val_step_ranks(cs + N, 1, "other", false, &r);
    ck_assert_int_eq(r.n, 1);
    ck_assert(isnan(r.rank_correlation) && isnan(r.pair_error));
    free(cs);
}
END_TEST

static Suite *band_suite(void)
{
    Suite *s = suite_create("band");
    TCase *tc = tcase_create("band");
    tcase_add_test(tc, test_band_follows_provenance);
    tcase_add_test(tc, test_bad_provenance_refused);
    tcase_add_test(tc, test_written_derived_platform_loads_again);
    tcase_add_test(tc, test_shipped_bands);
    tcase_add_test(tc, test_band_records_left_out_of_fingerprints);
    tcase_add_test(tc, test_step_ranks);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(band_suite());
}
