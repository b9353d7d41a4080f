/* test_output.c - output files written whole or not at all: sim_out and
 * the JSON document writer.  A complete write replaces the file (mode of
 * a plain fopen, no temporary left); a write that fails (a missing
 * directory, a file-size limit hit in the middle, stdout on /dev/full)
 * returns SIM_EIO naming the file or stdout and leaves an earlier file as
 * it was; a path that is not a regular file is written in place; the trace
 * writer, which streams, obeys the same rule.  Every number of a JSON
 * document reads back as the double written. */
#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "fixtures.h"
#include "report/report.h"
#include "lib/check_run.h"

/* A new empty directory (caller removes it and frees the path). */
static char *tmp_dir(void)
{
    char *dir = fx_tmp_path("output", "");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    return dir;
}

/* Files in dir, "." and ".." aside. */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static char *path_in(const char *dir, const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* A document of about `bytes` bytes once printed. */
static cJSON *document(size_t bytes)
{
    char *text = malloc(bytes + 1);
    memset(text, 'x', bytes);
    text[bytes] = '\0';
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "payload", text);
    free(text);
    return doc;
}

/* Writes over path fail beyond `bytes` bytes (EFBIG, not a signal). */
static void limit_file_size(rlim_t bytes)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {bytes, bytes};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

START_TEST(complete_write_replaces_the_file)
{
    char *dir = tmp_dir(), *path = path_in(dir, "a.json");
    sim_err err = {{0}};
    cJSON *doc = document(10);
    ck_assert_msg(rpt_write_json_doc(path, doc, "JSON summary", &err) == SIM_OK, "%s", err.msg);
    char *text = fx_slurp(path), *want = cJSON_Print(doc);
    ck_assert_uint_eq(strlen(text), strlen(want) + 1);
    ck_assert(strncmp(text, want, strlen(want)) == 0 && text[strlen(want)] == '\n');
    free(text);
    cJSON_free(want);
    ck_assert_int_eq(files_in(dir), 1); /* no temporary left */
    mode_t mask = umask(0);
    umask(mask);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0666 & ~mask);
    /* again, over the first */
    cJSON_Delete(doc);
    doc = document(20);
    ck_assert_int_eq(rpt_write_json_doc(path, doc, "JSON summary", &err), SIM_OK);
    text = fx_slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "xxxxxxxxxxxxxxxxxxxx"));
    free(text);
    ck_assert_int_eq(files_in(dir), 1);
    cJSON_Delete(doc);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}
END_TEST

START_TEST(missing_directory_creates_nothing)
{
    char *dir = tmp_dir(), *path = path_in(dir, "no-such-dir/a.json");
    sim_err err = {{0}};
    cJSON *doc = document(10);
    ck_assert_int_eq(rpt_write_json_doc(path, doc, "JSON summary", &err), SIM_EIO);
    char want[512];
    snprintf(want, sizeof want, "%s: cannot write the JSON summary: No such file or directory", path);
    ck_assert_msg(strncmp(err.msg, want, strlen(want)) == 0, "%s", err.msg);
    ck_assert_int_eq(sim_out_check(path, "JSON summary", &err), SIM_EIO);
    ck_assert_int_eq(sim_out_check(dir, "JSON summary", &err), SIM_EIO); /* a directory is not a file */
    char *ok = path_in(dir, "b.json");
    ck_assert_int_eq(sim_out_check(ok, "JSON summary", &err), SIM_OK);
    ck_assert_int_eq(files_in(dir), 0); /* checking creates nothing */
    cJSON_Delete(doc);
    rmdir(dir);
    free(ok);
    free(path);
    free(dir);
}
END_TEST

/* A write that fails half way (the file-size limit) leaves the earlier
 * file whole and no temporary. */
START_TEST(failed_write_keeps_the_earlier_file)
{
    char *dir = tmp_dir(), *path = path_in(dir, "a.json");
    sim_err err = {{0}};
    cJSON *small = document(10), *big = document(1 << 20);
    ck_assert_int_eq(rpt_write_json_doc(path, small, "JSON summary", &err), SIM_OK);
    char *before = fx_slurp(path);
    limit_file_size(64 * 1024);
    ck_assert_int_eq(rpt_write_json_doc(path, big, "JSON summary", &err), SIM_EIO);
    ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0 && strstr(err.msg, "cannot write the JSON summary"), "%s",
                  err.msg);
    char *after = fx_slurp(path);
    ck_assert_str_eq(after, before);
    ck_assert_int_eq(files_in(dir), 1);
    /* a discarded file leaves the earlier one too */
    sim_out o;
    ck_assert_int_eq(sim_out_open(&o, path, "trace", &err), SIM_OK);
    fputs("half a document", o.f);
    ck_assert_int_eq(files_in(dir), 2);
    sim_out_discard(&o);
    free(after);
    after = fx_slurp(path);
    ck_assert_str_eq(after, before);
    ck_assert_int_eq(files_in(dir), 1);
    cJSON_Delete(small);
    cJSON_Delete(big);
    free(before);
    free(after);
    unlink(path);
    rmdir(dir);
    free(path);
    free(dir);
}
END_TEST

/* "-" is stdout: a write error there names stdout. */
START_TEST(stdout_write_error_is_reported)
{
    int full = open("/dev/full", O_WRONLY);
    if (full < 0) return; /* no /dev/full here */
    fflush(stdout);
    ck_assert_int_ge(dup2(full, STDOUT_FILENO), 0);
    close(full);
    sim_err err = {{0}};
    cJSON *doc = document(100);
    ck_assert_int_eq(rpt_write_json_doc("-", doc, "JSON result", &err), SIM_EIO);
    ck_assert_msg(strncmp(err.msg, "stdout: cannot write the JSON result: No space left on device",
                          strlen("stdout: cannot write the JSON result: No space left on device")) == 0,
                  "%s", err.msg);
    cJSON_Delete(doc);
}
END_TEST

/* /dev/null is written in place: it stays a device. */
START_TEST(non_regular_file_written_in_place)
{
    sim_err err = {{0}};
    cJSON *doc = document(100);
    ck_assert_int_eq(rpt_write_json_doc("/dev/null", doc, "JSON result", &err), SIM_OK);
    struct stat st;
    ck_assert_int_eq(stat("/dev/null", &st), 0);
    ck_assert(S_ISCHR(st.st_mode));
    ck_assert_int_eq(sim_out_check("/dev/null", "JSON result", &err), SIM_OK);
    cJSON_Delete(doc);
}
END_TEST

/* The trace streams events while the step runs; one that fails half way
 * leaves no file at all. */
START_TEST(failed_trace_leaves_no_file)
{
    char *dir = tmp_dir(), *path = path_in(dir, "t.json");
    cfg_strategy s = fx_strategy(2, 1, 1, 1);
    sim_err err = {{0}};
    rpt_trace *t = NULL;
    ck_assert_int_eq(rpt_trace_open(path, &s, &t, &err), SIM_OK);
    wl_instr in;
    memset(&in, 0, sizeof in);
    in.op = WL_COMPUTE;
    in.layer = in.micro = -1;
    limit_file_size(64 * 1024);
    for (int i = 0; i < 20000; i++) rpt_trace_add(t, i % 2, &in, 0, i * 1e-3, i * 1e-3 + 5e-4);
    ck_assert_int_eq(rpt_trace_close(t, NULL, &err), SIM_EIO);
    ck_assert_msg(strstr(err.msg, "cannot write the trace") != NULL, "%s", err.msg);
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(files_in(dir), 0);
    rmdir(dir);
    free(path);
    free(dir);
}
END_TEST

/* Doubles spread over twenty decades, of which cJSON's own printing gives
 * back some an ulp off: sim_json_print gives every one back exactly, in
 * cJSON's layout, and writes integers and non-finite values as cJSON does. */
START_TEST(json_numbers_read_back_exactly)
{
    cJSON *a = cJSON_CreateArray();
    unsigned x = 12345;
    for (int i = 0; i < 20000; i++) {
        x = x * 1103515245u + 12345u;
        double d = (double)(x >> 8) / (1u << 24) * pow(10.0, i % 20 - 10);
        cJSON_AddItemToArray(a, cJSON_CreateNumber(i % 2 ? d : -d));
    }
    cJSON_AddItemToArray(a, cJSON_CreateNumber(54621137088.0));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(3));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(NAN));
    int n = cJSON_GetArraySize(a), lossy = 0;
    char *theirs = cJSON_PrintUnformatted(a);
    cJSON *back = cJSON_Parse(theirs);
    for (const cJSON *u = a->child, *v = back->child; u->next; u = u->next, v = v->next)
        lossy += v->valuedouble != u->valuedouble;
    ck_assert_int_gt(lossy, 0); /* the flaw is there to mend */
    cJSON_Delete(back);
    for (int formatted = 0; formatted < 2; formatted++) {
        char *ours = sim_json_print(a, formatted);
        ck_assert_ptr_nonnull(ours);
        back = cJSON_Parse(ours);
        ck_assert_int_eq(cJSON_GetArraySize(back), n);
        const cJSON *u = a->child, *v = back->child;
        for (; u->next; u = u->next, v = v->next)
            ck_assert_msg(v->valuedouble == u->valuedouble, "%.17g read back as %.17g", u->valuedouble,
                          v->valuedouble);
        ck_assert(cJSON_IsNull(v));
        ck_assert_ptr_nonnull(strstr(ours, "54621137088"));
        cJSON_Delete(back);
        cJSON_free(ours);
    }
    cJSON_free(theirs);
    cJSON_Delete(a);
    /* a tree whose numbers cJSON prints exactly is printed as cJSON prints it */
    cJSON *o = cJSON_Parse("{\"a\": [1, 0.5, 2.25e-7], \"b\": {\"c\": \"x\", \"d\": true, \"e\": null}}");
    for (int formatted = 0; formatted < 2; formatted++) {
        char *ours = sim_json_print(o, formatted), *plain = formatted ? cJSON_Print(o) : cJSON_PrintUnformatted(o);
        ck_assert_str_eq(ours, plain);
        cJSON_free(ours);
        cJSON_free(plain);
    }
    cJSON_Delete(o);
    ck_assert_ptr_null(sim_json_print(NULL, false));
}
END_TEST

static Suite *output_suite(void)
{
    Suite *s = suite_create("output");
    TCase *t = tcase_create("output");
    tcase_add_test(t, complete_write_replaces_the_file);
    tcase_add_test(t, missing_directory_creates_nothing);
    tcase_add_test(t, failed_write_keeps_the_earlier_file);
    tcase_add_test(t, stdout_write_error_is_reported);
    tcase_add_test(t, non_regular_file_written_in_place);
    tcase_add_test(t, failed_trace_leaves_no_file);
    tcase_add_test(t, json_numbers_read_back_exactly);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return check_run(output_suite());
}
