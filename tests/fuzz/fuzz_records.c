/* fuzz_records.c - libFuzzer harness for the JSONL reader of sweep records
 * (srch_jsonl_read) and merge (srch_merge).
 *
 * The input is written to a file and read back.  Properties: the read and
 * the merge return SIM_OK or SIM_EINVAL with one printable line naming the
 * file; every record read holds finite, positive figures; the skipped
 * count never exceeds the lines; a merge of the file with itself ranks one
 * row per candidate; records written back (srch_jsonl_write) read again to
 * as many records with no line skipped. */
#include <math.h>
#include <unistd.h>

#include "fuzz.h"
#include "search/search.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    snprintf(path, sizeof path, "/tmp/fuzz_records.%ld.jsonl", (long)getpid());
    return 0;
}

static void check_records(const srch_candidate *r, int n)
{
    for (int i = 0; i < n; i++) {
        const srch_candidate *c = &r[i];
        if (!(c->est.step_s > 0) || !isfinite(c->est.step_s) || !(c->peak_bytes > 0) || !isfinite(c->peak_bytes) ||
            !(c->capacity_bytes > 0) || !isfinite(c->capacity_bytes) || c->index < 0)
            fz_violation("a record with a figure heptasim never writes was accepted", "");
        if (c->state == SRCH_SIM_DONE && (!(c->step_time_s > 0) || !isfinite(c->step_time_s) || !(c->mfu >= 0)))
            fz_violation("a simulated record with a bad step time was accepted", "");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    fwrite(data, 1, size, f);
    fclose(f);
    const char *prefixes[] = {path, "heptasim merge: "};
    int lines = 0;
    for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
    srch_candidate *arr = NULL;
    int n = 0, cap = 0;
    rpt_skipped sk;
    sim_err err = {{0}};
    sim_rc rc = srch_jsonl_read(path, &arr, &n, &cap, &sk, &err);
    if (rc != SIM_OK) fz_check_err(rc, &err, prefixes, 2);
    if (sk.lines > lines + 1) fz_violation("more lines skipped than the file holds", "");
    if (rc == SIM_OK) {
        check_records(arr, n);
        /* written back, the records read again whole */
        FILE *w = fopen(path, "wb");
        if (!w) abort();
        for (int i = 0; i < n; i++)
            if (srch_jsonl_write(w, path, &arr[i], &err) != SIM_OK) fz_violation("a record cannot be written", err.msg);
        fclose(w);
        srch_candidate *again = NULL;
        int n2 = 0, cap2 = 0;
        rpt_skipped sk2;
        if (srch_jsonl_read(path, &again, &n2, &cap2, &sk2, &err) != SIM_OK)
            fz_violation("records written back do not read again", err.msg);
        if (n2 != n || sk2.lines != 0) fz_violation("records written back read to another count", "");
        free(again);
        /* merged with itself: one row per candidate */
        const char *paths[2] = {path, path};
        srch_merged m;
        rc = srch_merge(paths, 2, &m, &err);
        if (rc != SIM_OK) fz_check_err(rc, &err, prefixes, 2);
        else if (m.ranking.n > n || (n > 0 && m.ranking.n < 1)) fz_violation("merge ranked another count", "");
        srch_merged_free(&m);
    }
    free(arr);
    unlink(path);
    return 0;
}
