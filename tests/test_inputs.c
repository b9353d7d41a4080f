/* test_inputs.c - what heptasim accepts as input: the text check (no NUL
 * byte, valid UTF-8) against a naive reference decoder over every string
 * of up to three bytes; the bounded reader on every kind of path (a file
 * at its size cap and one byte over, a directory, a FIFO, a character
 * device, a loop of symbolic links, a dangling one, a missing file, a name
 * too long); the physical ranges of the platform figures (each range read
 * from its own refusal, taken at both ends, refused just outside, wide
 * enough for real devices from the 1990s to today's, and a platform at
 * the extreme corners simulates to a finite step time); the ranges of the
 * command-line options and of --cfg; HuggingFace duplicates, names and
 * Gemma. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/options.h"
#include "config/config.h"
#include "model/model.h"
#include "runner/runner.h"
#include "lib/check_run.h"

static sim_err E;

/* ---------------------------------------------------------- text check */

/* The naive reference: a sequence of k bytes is valid when it is the
 * shortest UTF-8 encoding of a code point that is not a surrogate and at
 * most U+10FFFF, found by decoding its bits and encoding them again. */
static int ref_encode(unsigned cp, unsigned char *out)
{
    if (cp < 0x80) return out[0] = (unsigned char)cp, 1;
    if (cp < 0x800) return out[0] = (unsigned char)(0xC0 | cp >> 6), out[1] = (unsigned char)(0x80 | (cp & 0x3F)), 2;
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Length of the valid sequence at s, 0 when none (k bytes tried in turn). */
static int ref_sequence(const unsigned char *s, size_t n)
{
    static const unsigned char lead_mask[5] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    for (int k = 1; k <= 4 && (size_t)k <= n; k++) {
        unsigned cp = s[0] & lead_mask[k];
        for (int i = 1; i < k; i++) cp = cp << 6 | (s[i] & 0x3F);
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) continue;
        unsigned char enc[4];
        if (ref_encode(cp, enc) == k && memcmp(enc, s, (size_t)k) == 0) return k;
    }
    return 0;
}

static size_t ref_check(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        int k = ref_sequence(s + i, n - i);
        if (k == 0) return i;
        i += (size_t)k;
    }
    return n;
}

START_TEST(text_check_matches_reference)
{
    unsigned char s[4];
    long checked = 0;
    for (int n = 1; n <= 3; n++) {
        long total = 1L << (8 * n);
        for (long v = 0; v < total; v++) {
            for (int i = 0; i < n; i++) s[i] = (unsigned char)(v >> (8 * i));
            size_t got = sim_text_check((const char *)s, (size_t)n, NULL, NULL);
            size_t want = ref_check(s, (size_t)n);
            if (got != want)
                ck_abort_msg("%d bytes %02x %02x %02x: bad byte at %zu, reference %zu", n, s[0], n > 1 ? s[1] : 0,
                             n > 2 ? s[2] : 0, got, want);
            checked++;
        }
    }
    /* four bytes: every code point's encoding, and every lead byte with
     * every second byte */
    for (unsigned cp = 1; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        int k = ref_encode(cp, s);
        ck_assert_uint_eq(sim_text_check((const char *)s, (size_t)k, NULL, NULL), (size_t)k);
    }
    for (int lead = 0xF0; lead <= 0xFF; lead++)
        for (int b = 0; b < 256; b++) {
            unsigned char t[4] = {(unsigned char)lead, (unsigned char)b, 0x80, 0x80};
            ck_assert_uint_eq(sim_text_check((const char *)t, 4, NULL, NULL), ref_check(t, 4));
        }
    ck_assert_int_eq(checked, 256 + 65536 + 16777216);
}
END_TEST

START_TEST(text_check_position)
{
    int line = 0;
    const char *why = NULL;
    const char text[] = "{\"a\": 1,\n \"b\": \"\xc3\xa9\"}\n\0{}";
    size_t n = sizeof text - 1;
    ck_assert_uint_eq(sim_text_check(text, n, &line, &why), n - 3);
    ck_assert_int_eq(line, 3);
    ck_assert_str_eq(why, "a NUL byte");
    const char bad[] = "ok\nok\n\xe2\x82";
    ck_assert_uint_eq(sim_text_check(bad, sizeof bad - 1, &line, &why), 6);
    ck_assert_int_eq(line, 3);
    ck_assert_str_eq(why, "invalid UTF-8");
    char scrub[] = "a\xff\xc3\xa9\xed\xa0\x80z";
    sim_utf8_scrub(scrub);
    ck_assert_str_eq(scrub, "a?\xc3\xa9???z");
}
END_TEST

/* ------------------------------------------------------------- reader */

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/heptasim-inputs-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* Reads path with a cap of max bytes; returns rc, message in E. */
static sim_rc read_at(const char *path, size_t max)
{
    char *text = NULL;
    size_t len = 0;
    memset(&E, 0, sizeof E);
    sim_rc rc = sim_read_file(path, max, "a test file", &text, &len, &E);
    if (rc == SIM_OK) {
        ck_assert_uint_eq(strlen(text) <= len, 1);
        ck_assert_uint_le(len, max);
    }
    free(text);
    return rc;
}

static void expect_read_error(const char *path, const char *tail)
{
    ck_assert_int_eq(read_at(path, 1024), SIM_EINVAL);
    ck_assert_msg(strstr(E.msg, tail) != NULL, "[%s] does not say [%s]", E.msg, tail);
}

START_TEST(reader_paths)
{
    make_dir();
    char p[256];
    /* a file at the cap loads; one byte more does not */
    snprintf(p, sizeof p, "%s/ten", dir);
    FILE *f = fopen(p, "w");
    fputs("0123456789", f);
    fclose(f);
    ck_assert_int_eq(read_at(p, 10), SIM_OK);
    ck_assert_int_eq(read_at(p, 9), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(E.msg, "ten: larger than 9 bytes, not a test file"));
    expect_read_error(dir, "is a directory, not a file heptasim can read");
    snprintf(p, sizeof p, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(p, 0600), 0);
    expect_read_error(p, "fifo: is a FIFO (named pipe), not a file heptasim can read"); /* and returns at once */
    expect_read_error("/dev/zero", "/dev/zero: is a character device");
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/loop-a", dir);
    snprintf(b, sizeof b, "%s/loop-b", dir);
    ck_assert_int_eq(symlink(b, a), 0);
    ck_assert_int_eq(symlink(a, b), 0);
    expect_read_error(a, "loop-a: cannot read the file: too many levels of symbolic links");
    snprintf(p, sizeof p, "%s/dangling", dir);
    ck_assert_int_eq(symlink("/nonexistent/file", p), 0);
    expect_read_error(p, "dangling: cannot read the file: a symbolic link to a file that does not exist");
    snprintf(p, sizeof p, "%s/missing", dir);
    expect_read_error(p, "missing: cannot read the file: no such file");
    char *longp = calloc(1, 5001);
    memset(longp, 'a', 5000);
    expect_read_error(longp, "a file name of 5000 characters is longer than the 511 heptasim takes");
    ck_assert_ptr_null(strstr(E.msg, "aaaa"));
    free(longp);
    /* text: NUL bytes and invalid UTF-8 say where */
    snprintf(p, sizeof p, "%s/nul.json", dir);
    f = fopen(p, "w");
    fwrite("{}\n{\0}", 1, 6, f);
    fclose(f);
    char *text = NULL;
    ck_assert_int_eq(sim_read_text(p, 1024, "a JSON file", &text, &E), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(E.msg, "nul.json: line 2: a NUL byte at byte 5"));
    remove_dir();
}
END_TEST

/* The config loaders refuse the same paths, naming them, and a model file
 * holding an object, a NUL byte and more JSON. */
START_TEST(loaders_refuse_bad_paths)
{
    cfg_model m;
    memset(&E, 0, sizeof E);
    ck_assert_int_eq(cfg_load_model("/dev/zero", NULL, &m, &E), SIM_EINVAL);
    ck_assert_str_eq(E.msg, "/dev/zero: is a character device, not a file heptasim can read (give a regular file)");
    make_dir();
    char p[256];
    snprintf(p, sizeof p, "%s/m.json", dir);
    FILE *f = fopen(p, "w");
    const char obj[] = "{\"layers\": 4, \"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024, \"vocab\": 1000, "
                       "\"seq_len\": 512}";
    fwrite(obj, 1, sizeof obj, f); /* with its NUL */
    fputs("{\"layers\": 8}", f);
    fclose(f);
    ck_assert_int_eq(cfg_load_model(p, NULL, &m, &E), SIM_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "m.json: line 1: a NUL byte at byte %zu", sizeof obj);
    ck_assert_msg(strstr(E.msg, want), "%s", E.msg);
    f = fopen(p, "w");
    fputs("{\"name\": \"caf\xe9\", \"layers\": 4, \"hidden\": 256, \"heads\": 8, \"ffn_hidden\": 1024, \"vocab\": 1000, "
          "\"seq_len\": 512}",
          f);
    fclose(f);
    ck_assert_int_eq(cfg_load_model(p, NULL, &m, &E), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(E.msg, "m.json: line 1: invalid UTF-8 at byte 14"));
    remove_dir();
}
END_TEST

/* ---------------------------------------------------- physical ranges */

/* A platform figure, with values of real devices it must accept. */
typedef struct figure {
    const char *key;
    double real[2]; /* a 1990s part and a 2024 one */
} figure;

static const figure figures[] = {
    {"device.peak_tflops", {6e-5, 2250}},         /* Pentium 60 MHz; B200 dense BF16 */
    {"device.hbm_GiB", {0.004, 178.8}},           /* a 4 MiB card; B200 */
    {"device.hbm_reserved_GiB", {0, 8}},
    {"device.hbm_TBps", {5e-4, 8}},               /* 500 MB/s; B200 */
    {"supernode.fabric_GBps", {1.25e-3, 1800}},   /* 10 Mbit/s Ethernet; NVLink 5 */
    {"supernode.latency_us", {0, 1000}},
    {"network.nic_GBps", {1.25e-3, 100}},         /* 10 Mbit/s; 800 Gbit/s */
    {"network.latency_us", {0.5, 1000}},
    {"network.spine_latency_us", {0, 1000}},
    {"network.oversubscription", {1, 16}},
    {"efficiency.attention", {0.01, 1}},
    {"efficiency.memory", {0.01, 1}},
    {"efficiency.network", {0.01, 1}},
    {"efficiency.kernel_overhead_us", {0, 100}},
    {"efficiency.collective_step_us", {0, 100}},
};
#define NFIGURES (int)(sizeof figures / sizeof figures[0])

/* Loads dgx-a100 (8 devices) with platform.KEY=VALUE; message in E. */
static sim_rc with_value(const char *key, double v, cfg_platform *p)
{
    char item[128];
    snprintf(item, sizeof item, "platform.%s=%.17g", key, v);
    const char *items[] = {item, "platform.device.hbm_reserved_GiB=0"};
    int n = strcmp(key, "device.hbm_reserved_GiB") == 0 ? 1 : 2;
    if (strcmp(key, "device.hbm_GiB") == 0) n = 2; /* reserved must stay below the capacity */
    cfg_overrides ov = {n, n == 2 ? (const char *[]){items[1], items[0]} : items};
    cfg_platform tmp;
    memset(&E, 0, sizeof E);
    return cfg_load_platform("dgx-a100", &ov, 8, p ? p : &tmp, &E);
}

/* The range of key, read from the message refusing an absurd value. */
static void range_of(const char *key, double *lo, double *hi)
{
    ck_assert_int_eq(with_value(key, -1e300, NULL), SIM_EINVAL);
    const char *in = strstr(E.msg, "expected a number in [");
    ck_assert_msg(in != NULL, "%s", E.msg);
    ck_assert_int_eq(sscanf(in, "expected a number in [%lf, %lf]", lo, hi), 2);
}

START_TEST(platform_ranges)
{
    for (int i = 0; i < NFIGURES; i++) {
        const figure *f = &figures[i];
        double lo, hi;
        range_of(f->key, &lo, &hi);
        ck_assert_msg(lo < hi, "%s: [%g, %g]", f->key, lo, hi);
        ck_assert_msg(with_value(f->key, lo, NULL) == SIM_OK, "%s=%g: %s", f->key, lo, E.msg);
        if (strcmp(f->key, "device.hbm_reserved_GiB") != 0) /* the reserved part stays below the capacity */
            ck_assert_msg(with_value(f->key, hi, NULL) == SIM_OK, "%s=%g: %s", f->key, hi, E.msg);
        double below = lo > 0 ? lo * (1 - 1e-9) : -1e-9, above = hi * (1 + 1e-9);
        ck_assert_int_eq(with_value(f->key, below, NULL), SIM_EINVAL);
        ck_assert_msg(strstr(E.msg, f->key) && strstr(E.msg, "expected a number in ["), "%s", E.msg);
        ck_assert_int_eq(with_value(f->key, above, NULL), SIM_EINVAL);
        for (int k = 0; k < 2; k++)
            ck_assert_msg(f->real[k] >= lo && f->real[k] <= hi, "%s: a real %g is outside [%g, %g]", f->key,
                          f->real[k], lo, hi);
        /* the smallest value allowed keeps 100x margin below the 1990s part
         * (an efficiency, a latency or an overhead may be as small as 0) */
        if (f->real[0] > 0 && strncmp(f->key, "efficiency.", 11) != 0 && strcmp(f->key, "network.oversubscription"))
            ck_assert_msg(lo <= f->real[0] / 10, "%s: %g leaves no margin below %g", f->key, lo, f->real[0]);
    }
    /* the GEMM curve's fractions share the efficiencies' range */
    double lo, hi;
    range_of("efficiency.attention", &lo, &hi);
    const char *items[] = {"platform.efficiency.gemm=[[1,0.00001],[10,0.2],[100,0.3]]"};
    cfg_overrides ov = {1, items};
    cfg_platform p;
    ck_assert_int_eq(cfg_load_platform("dgx-a100", &ov, 8, &p, &E), SIM_EINVAL);
    char want[64];
    snprintf(want, sizeof want, "fraction must be in [%g, %g], got 1e-05", lo, hi);
    ck_assert_msg(strstr(E.msg, want), "%s", E.msg);
}
END_TEST

/* A platform at the corners of the ranges, slowest and fastest, simulates
 * the small step to a finite, positive time: no value accepted gives
 * SimGrid a time or a size it cannot take. */
static double corner_step_s(bool slow)
{
    run_case *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    const char *items[32];
    char buf[NFIGURES][128];
    int n = 0;
    for (int i = 0; i < NFIGURES; i++) {
        double lo, hi;
        range_of(figures[i].key, &lo, &hi);
        const char *k = figures[i].key;
        bool is_time = strstr(k, "latency") || strstr(k, "overhead") || strstr(k, "step_us") || strstr(k, "oversub");
        double v = (slow == is_time) ? hi : lo; /* slow: small rates, large times */
        if (strcmp(k, "device.hbm_reserved_GiB") == 0) v = 0;
        if (strcmp(k, "device.hbm_GiB") == 0) v = hi;
        snprintf(buf[i], sizeof buf[i], "platform.%s=%.17g", k, v);
        items[n++] = buf[i];
    }
    static char gemm[160];
    double lo, hi;
    range_of("efficiency.attention", &lo, &hi);
    snprintf(gemm, sizeof gemm, "platform.efficiency.gemm=[[1,%.17g],[10,%.17g],[100,%.17g]]", slow ? lo : hi,
             slow ? lo : hi, slow ? lo : hi);
    items[n++] = gemm;
    items[n++] = "global_batch=4";
    cfg_overrides ov = {n, items};
    memset(&E, 0, sizeof E);
    sim_rc rc = cfg_parse_model("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"ffn_hidden\": 256, \"vocab\": 100, "
                                "\"seq_len\": 64}",
                                "models/m.json", &ov, &c->model, &E);
    if (rc == SIM_OK) rc = cfg_load_platform("dgx-a100", &ov, 16, &c->platform, &E);
    if (rc == SIM_OK)
        rc = cfg_parse_strategy("{\"dp\": 0, \"pp\": 2, \"tp_x\": 2, \"global_batch\": 4}", "strategies/s.json", &ov,
                                &c->strategy, &E);
    if (rc == SIM_OK) rc = cfg_check(&c->model, &c->platform, &c->strategy, &E);
    ck_assert_msg(rc == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(runner_simulate_all(c, 1, 1, NULL, NULL, &E), SIM_OK);
    ck_assert_msg(c->rc == SIM_OK, "%s", c->msg);
    double t = c->result.step_time_s;
    free(c);
    return t;
}

START_TEST(platform_corners_simulate)
{
    double slow = corner_step_s(true), fast = corner_step_s(false);
    ck_assert_msg(isfinite(slow) && slow > 0 && isfinite(fast) && fast > 0, "slow %g s, fast %g s", slow, fast);
    ck_assert_double_gt(slow, fast);
}
END_TEST

/* ------------------------------------------------------ command line */

static sim_rc parse(unsigned accepted, const char *a1, const char *a2, const char *a3)
{
    static cli_args a;
    char *argv[] = {"heptasim", "cmd", (char *)a1, (char *)a2, (char *)a3, NULL};
    int argc = 2 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
    memset(&a, 0, sizeof a);
    memset(&E, 0, sizeof E);
    return cli_parse(argc, argv, 2, accepted, "cmd", &a, &E);
}

START_TEST(option_ranges)
{
    static const struct {
        const char *opt;
        long max;
    } counts[] = {{"--devices", CFG_MAX_DEVICES}, {"--top", CLI_MAX_TOP}, {"--jobs", CLI_MAX_JOBS},
                  {"--global-batch", CFG_MAX_WIDTH}};
    unsigned all = ~0u;
    char v[32], want[160];
    for (int i = 0; i < 4; i++) {
        snprintf(v, sizeof v, "%ld", counts[i].max);
        ck_assert_msg(parse(all, counts[i].opt, v, NULL) == SIM_OK, "%s", E.msg);
        ck_assert_int_eq(parse(all, counts[i].opt, "1", NULL), SIM_OK);
        snprintf(want, sizeof want, "heptasim cmd: option '%s' expects a whole number in [1, %ld], got '", counts[i].opt,
                 counts[i].max);
        const char *bad[] = {"0", "2147483647", "-1", "1e3", "", "99999999999999999999999"};
        snprintf(v, sizeof v, "%ld", counts[i].max + 1);
        ck_assert_int_eq(parse(all, counts[i].opt, v, NULL), SIM_EINVAL);
        ck_assert_msg(strncmp(E.msg, want, strlen(want)) == 0, "[%s]", E.msg);
        for (int k = 0; k < 6; k++) {
            ck_assert_int_eq(parse(all, counts[i].opt, bad[k], NULL), SIM_EINVAL);
            ck_assert_msg(strstr(E.msg, counts[i].opt), "[%s]", E.msg);
        }
    }
    /* the schema's bound of global_batch is the option's */
    cfg_strategy s;
    char item[64];
    snprintf(item, sizeof item, "{\"global_batch\": %d}", CFG_MAX_WIDTH + 1);
    ck_assert_int_eq(cfg_parse_strategy(item, "s.json", NULL, &s, &E), SIM_EINVAL);
    snprintf(item, sizeof item, "{\"global_batch\": %d}", CFG_MAX_WIDTH);
    ck_assert_int_eq(cfg_parse_strategy(item, "s.json", NULL, &s, &E), SIM_OK);
    /* shards, empty values, long names */
    ck_assert_int_eq(parse(all, "--shard", "3/4", NULL), SIM_OK);
    const char *shards[] = {"4/4", "-1/4", "1/0", "1/99999999999", "1/2x", "/2", "1/", "+1/2"};
    for (int k = 0; k < 8; k++) ck_assert_int_eq(parse(all, "--shard", shards[k], NULL), SIM_EINVAL);
    ck_assert_int_eq(parse(all, "--json", "", NULL), SIM_EINVAL);
    ck_assert_str_eq(E.msg, "heptasim cmd: option '--json' needs a value (FILE|-), got an empty one");
    ck_assert_int_eq(parse(all, "--json=", NULL, NULL), SIM_EINVAL);
    char *longp = calloc(1, 5001);
    memset(longp, 'x', 5000);
    ck_assert_int_eq(parse(all, "--out", longp, NULL), SIM_EINVAL);
    ck_assert_str_eq(E.msg, "heptasim cmd: option '--out': a file name of 5000 characters is longer than the 511 "
                            "heptasim takes (use a shorter path, or a symbolic link)");
    ck_assert_int_eq(parse(all, longp, NULL, NULL), SIM_EINVAL); /* a positional file */
    ck_assert_ptr_nonnull(strstr(E.msg, "a file name of 5000 characters"));
    /* found by fuzzing: an empty positional argument was taken as a file */
    ck_assert_int_eq(parse(all, "", NULL, NULL), SIM_EINVAL);
    ck_assert_str_eq(E.msg, "heptasim cmd: an empty file argument (name a file)");
    free(longp);
}
END_TEST

START_TEST(simgrid_settings)
{
    unsigned eng = CLI_OPT_ENGINE;
    const char *ok[] = {"network/bandwidth-factor:0.001", "network/bandwidth-factor:1000", "surf/precision:1e-9",
                        "maxmin/precision:1e-5", "network/TCP-gamma:0", "network/TCP-gamma:4194304",
                        "network/optim:Lazy"};
    for (int i = 0; i < 7; i++) ck_assert_msg(parse(eng, "--cfg", ok[i], NULL) == SIM_OK, "%s: %s", ok[i], E.msg);
    const char *bad[] = {"network/bandwidth-factor:1e299", "network/bandwidth-factor:1e-299", "surf/precision:1e200",
                         "surf/precision:1e-300", "network/latency-factor:1e299", "network/TCP-gamma:1e-300",
                         "maxmin/precision:inf", "network/weight-S:-1"};
    for (int i = 0; i < 8; i++) {
        ck_assert_msg(parse(eng, "--cfg", bad[i], NULL) == SIM_EINVAL, "%s accepted", bad[i]);
        ck_assert_msg(strstr(E.msg, "the value must be a number in ["), "%s", E.msg);
    }
    ck_assert_int_eq(parse(eng, "--cfg", "network/crosstraffic:yes", NULL), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(E.msg, "'--cfg network/crosstraffic:yes' needs '--symmetry none'"));
    ck_assert_int_eq(parse(eng, "--cfg", "network/crosstraffic:yes", "--symmetry=none"), SIM_OK);
    ck_assert_int_eq(parse(eng, "--symmetry=dp", "--cfg", "network/crosstraffic:on"), SIM_EINVAL);
    ck_assert_int_eq(parse(eng, "--cfg", "network/crosstraffic:no", NULL), SIM_OK);
}
END_TEST

/* -------------------------------------------------------- HuggingFace */

static sim_rc hf(const char *json, cfg_model *m)
{
    memset(&E, 0, sizeof E);
    return cfg_parse_model(json, "hf/config.json", NULL, m, &E);
}

START_TEST(hf_duplicates_and_names)
{
    cfg_model m;
    ck_assert_int_eq(hf("{\"num_hidden_layers\": 4, \"hidden_size\": 256, \"num_attention_heads\": 8, "
                        "\"intermediate_size\": 1024, \"vocab_size\": 1000, \"hidden_size\": 512}",
                        &m),
                     SIM_EINVAL);
    ck_assert_str_eq(E.msg, "hf/config.json: .hidden_size: duplicate key (transformers would silently take the last "
                            "one; keep one)");
    ck_assert_int_eq(hf("{\"num_hidden_layers\": 4, \"hidden_size\": 256, \"num_attention_heads\": 7, "
                        "\"intermediate_size\": 1024, \"vocab_size\": 1000}",
                        &m),
                     SIM_EINVAL);
    ck_assert_str_eq(E.msg, "hf/config.json: .num_attention_heads: 7 does not divide hidden_size=256 (use a divisor "
                            "of 256, or give head_dim)");
    ck_assert_int_eq(hf("{\"num_hidden_layers\": 4, \"hidden_size\": 256, \"num_attention_heads\": 8, "
                        "\"intermediate_size\": 1024, \"vocab_size\": 1000, \"n_routed_experts\": 4, "
                        "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 128, \"first_k_dense_replace\": 4}",
                        &m),
                     SIM_EINVAL);
    ck_assert_str_eq(E.msg, "hf/config.json: .first_k_dense_replace: 4 leaves no MoE layer among "
                            "num_hidden_layers=4 (use less than 4)");
}
END_TEST

/* gemma-7b as published: gelu, untied key absent.  Its MLP is GeGLU and its
 * embeddings tied (GemmaConfig's default), so it has
 * V h + L (2 h q + 2 h kv + 3 h f + 2 h) + h parameters. */
START_TEST(hf_gemma)
{
    char path[CFG_PATH_LEN];
    snprintf(path, sizeof path, "%s/tests/hf/gemma-7b/config.json", cfg_data_dir());
    cfg_model m;
    memset(&E, 0, sizeof E);
    ck_assert_msg(cfg_load_model(path, NULL, &m, &E) == SIM_OK, "%s", E.msg);
    ck_assert_int_eq(m.activation, CFG_ACT_GEGLU);
    ck_assert(cfg_mlp_gated(&m));
    ck_assert(m.tied_embeddings);
    mdl_params p;
    mdl_count_params(&m, &p);
    double h = 3072, q = 16 * 256, kv = 16 * 256, f = 24576, V = 256000, L = 28;
    double want = V * h + L * (2 * h * q + 2 * h * kv + 3 * h * f + 2 * h) + h;
    ck_assert_msg(fabs(p.total - want) <= 1e-9 * want, "%.0f parameters, want %.0f", p.total, want);
    ck_assert_msg(p.total > 8.53e9 && p.total < 8.54e9, "%.4g", p.total);
    ck_assert_str_eq(cfg_activation_name(m.activation), "geglu");
    /* an explicit tie_word_embeddings still decides; another family's gelu
     * is not gated */
    ck_assert_int_eq(hf("{\"model_type\": \"gemma\", \"num_hidden_layers\": 2, \"hidden_size\": 256, "
                        "\"num_attention_heads\": 8, \"intermediate_size\": 1024, \"vocab_size\": 1000, "
                        "\"tie_word_embeddings\": false}",
                        &m),
                     SIM_OK);
    ck_assert(!m.tied_embeddings);
    ck_assert_int_eq(m.activation, CFG_ACT_GEGLU);
    ck_assert_int_eq(hf("{\"model_type\": \"gpt_neox\", \"num_hidden_layers\": 2, \"hidden_size\": 256, "
                        "\"num_attention_heads\": 8, \"intermediate_size\": 1024, \"vocab_size\": 1000, "
                        "\"hidden_act\": \"gelu\"}",
                        &m),
                     SIM_OK);
    ck_assert_int_eq(m.activation, CFG_ACT_GELU);
    ck_assert(!m.tied_embeddings);
}
END_TEST

/* The fixture tests/hf/NAME/config.json loaded into *m. */
static void load_hf_fixture(const char *name, cfg_model *m)
{
    char path[CFG_PATH_LEN];
    snprintf(path, sizeof path, "%s/tests/hf/%s/config.json", cfg_data_dir(), name);
    memset(&E, 0, sizeof E);
    ck_assert_msg(cfg_load_model(path, NULL, m, &E) == SIM_OK, "%s: %s", name, E.msg);
}

/* P(k draws from a pool of n miss a of its items), the naive product. */
static double naive_miss(double n, double a, int k)
{
    double p = 1;
    for (int i = 0; i < k; i++) p *= (n - a - i) / (n - i);
    return p;
}

/* The MoE shape a fixture must give: experts, top_k, router groups and
 * groups per token, shared experts and their width. */
static void expect_moe(const cfg_model *m, int experts, int top_k, int groups, int group_top_k, int shared,
                       int shared_ffn)
{
    const cfg_moe *o = &m->moe;
    ck_assert_msg(o->experts == experts && o->top_k == top_k && o->groups == groups && o->group_top_k == group_top_k &&
                      o->shared_experts == shared && o->shared_ffn_hidden == shared_ffn,
                  "%s: experts %d top_k %d groups %d/%d shared %d x %d", m->name, o->experts, o->top_k, o->groups,
                  o->group_top_k, o->shared_experts, o->shared_ffn_hidden);
}

/* The MoE keys the HuggingFace MoE models publish, from small copies of
 * their config.json: DeepSeek-V3's groups, dense first layers and shared
 * expert; gpt-oss's alternating sliding window and its top-k key; Llama
 * 4's interleaved MoE layers and chunked attention; Qwen3's sparse step. */
START_TEST(hf_moe_keys)
{
    cfg_model m;
    load_hf_fixture("deepseek-v3-small", &m);
    expect_moe(&m, 32, 8, 8, 4, 1, 128);
    ck_assert(!cfg_is_moe_layer(&m, 1) && cfg_is_moe_layer(&m, 2) && cfg_is_moe_layer(&m, 5));
    ck_assert(cfg_is_mla(&m) && m.mtp_layers == 1);
    /* node-limited: 8 domains of one group (4 experts) each; a token picks
     * 4 groups, then 8 of their 16 experts */
    double miss = 0.5 + 0.5 * naive_miss(16, 4, 8);
    ck_assert_double_eq_tol(mdl_moe_slices_reached(&m, 8), 8 * (1 - miss), 1e-12);
    ck_assert(mdl_moe_slices_reached(&m, 8) <= 4);
    cfg_model free_routing = m;
    free_routing.moe.groups = free_routing.moe.group_top_k = 0;
    ck_assert_double_eq_tol(mdl_moe_slices_reached(&free_routing, 8), 8 * (1 - naive_miss(32, 4, 8)), 1e-12);
    /* a group made of two EP ranks' experts (16 ranks of 2): the rank is picked with its group */
    ck_assert_double_eq_tol(mdl_moe_slices_reached(&m, 16), 16 * (1 - (0.5 + 0.5 * naive_miss(16, 2, 8))), 1e-12);

    load_hf_fixture("gpt-oss-small", &m);
    expect_moe(&m, 16, 4, 0, 0, 0, 0);
    ck_assert(m.moe.ffn_hidden == 256 && m.window.tokens == 128 && m.window.full_every == 2);
    ck_assert(cfg_is_window_layer(&m, 0) && !cfg_is_window_layer(&m, 1));
    ck_assert_msg(strstr(m.description, "not modelled: attention biases, attention sinks"), "%s", m.description);
    /* the windowed layers' core attention: W - W^2 / 2s keys per query */
    double s = m.seq_len, W = 128;
    ck_assert_double_eq_tol(mdl_core_attn_flops(&m, true, s), 2 * s * (W - W * W / (2 * s)) * (8 * 32 + 8 * 32), 1e-3);
    ck_assert_double_eq_tol(mdl_core_attn_flops(&m, false, s), 2 * s * (s / 2) * (8 * 32 + 8 * 32), 1e-3);

    load_hf_fixture("llama4-small", &m);
    expect_moe(&m, 16, 1, 0, 0, 1, 128);
    ck_assert(m.ffn_hidden == 512 && m.moe.ffn_hidden == 128);
    ck_assert(!cfg_is_moe_layer(&m, 0) && cfg_is_moe_layer(&m, 1) && !cfg_is_moe_layer(&m, 2) &&
              cfg_is_moe_layer(&m, 7));
    ck_assert(m.window.kind == CFG_WINDOW_CHUNKED && m.window.full_every == 4);
    ck_assert(cfg_is_window_layer(&m, 2) && !cfg_is_window_layer(&m, 3));

    load_hf_fixture("qwen3-moe-small", &m);
    expect_moe(&m, 32, 8, 0, 0, 0, 0);
    ck_assert(cfg_is_moe_layer(&m, 0) && cfg_is_moe_layer(&m, 3));
    ck_assert_int_eq(m.window.tokens, 0);

    /* group rules, named as the file names them */
    const char *base = "{\"num_hidden_layers\": 2, \"hidden_size\": 256, \"num_attention_heads\": 8, "
                       "\"intermediate_size\": 1024, \"vocab_size\": 1000, \"n_routed_experts\": 32, "
                       "\"num_experts_per_tok\": 8, \"moe_intermediate_size\": 64, ";
    static const struct {
        int groups, top;
        const char *msg;
    } bad[] = {
        {5, 2, "hf/config.json: .n_group: 5 does not divide n_routed_experts=32 (use a divisor of 32)"},
        {8, 9, "hf/config.json: .topk_group: 9 is more than n_group=8 (use at most 8)"},
        {8, 1, "hf/config.json: .topk_group: 1 groups of 4 experts hold fewer than num_experts_per_tok=8 (choose "
               "more groups)"},
    };
    for (int i = 0; i < 3; i++) {
        char json[512];
        snprintf(json, sizeof json, "%s\"n_group\": %d, \"topk_group\": %d}", base, bad[i].groups, bad[i].top);
        ck_assert_int_eq(hf(json, &m), SIM_EINVAL);
        ck_assert_str_eq(E.msg, bad[i].msg);
    }
}
END_TEST

static Suite *inputs_suite(void)
{
    Suite *s = suite_create("inputs");
    TCase *tc = tcase_create("text");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, text_check_matches_reference);
    tcase_add_test(tc, text_check_position);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_test(tc, reader_paths);
    tcase_add_test(tc, loaders_refuse_bad_paths);
    suite_add_tcase(s, tc);
    tc = tcase_create("ranges");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, platform_ranges);
    tcase_add_test(tc, platform_corners_simulate);
    tcase_add_test(tc, option_ranges);
    tcase_add_test(tc, simgrid_settings);
    suite_add_tcase(s, tc);
    tc = tcase_create("huggingface");
    tcase_add_test(tc, hf_duplicates_and_names);
    tcase_add_test(tc, hf_gemma);
    tcase_add_test(tc, hf_moe_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(inputs_suite());
}
