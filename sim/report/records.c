/* records.c - JSONL files of sweep records: the one reader and the one
 * appender.  The reader takes every line of the file, NULs or not: a line
 * that is not a JSON object (a torn write, a run of NULs after a crash,
 * another file's bytes) is skipped and counted, and the objects around it
 * are handed on, so that an interrupted sweep keeps what it finished.
 * What a record holds is its writer's (search/record.c); here only lines. */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/json.h"

/* Whether line[0..len) holds nothing but blanks. */
static bool blank(const char *line, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r') return false;
    return true;
}

/* Counts one skipped line of a read. */
static void skip_line(rpt_skipped *sk, int line)
{
    if (sk->lines++ == 0) sk->first_line = line;
}

sim_rc rpt_jsonl_read(const char *path, rpt_record_fn each, void *ctx, rpt_skipped *skipped, sim_err *err)
{
    size_t len = 0;
    char *buf = NULL;
    rpt_skipped sk = {0, 0, 0};
    if (skipped) *skipped = sk;
    sim_rc rc = sim_read_file(path, CFG_MAX_RECORDS_BYTES, "a file of sweep records", &buf, &len, err);
    if (rc != SIM_OK) return rc;
    int line = 0;
    /* Every line of the whole buffer, NULs included: a crash may leave a
     * run of NULs or a torn line, and records appended after it count. */
    for (size_t at = 0; at < len && rc == SIM_OK;) {
        char *p = buf + at, *nl = memchr(p, '\n', len - at);
        size_t n_line = nl ? (size_t)(nl - p) : len - at;
        at += n_line + 1;
        line++;
        if (blank(p, n_line)) continue;
        if (!nl) { /* no newline: the write of this line was interrupted */
            sk.torn = 1;
            skip_line(&sk, line);
            break;
        }
        *nl = '\0';
        const char *end = NULL;
        cJSON *o = memchr(p, '\0', n_line) ? NULL : cJSON_ParseWithOpts(p, &end, true);
        if (!cJSON_IsObject(o)) { /* junk: a torn write, NULs, another file's bytes */
            cJSON_Delete(o);
            skip_line(&sk, line);
            continue;
        }
        char origin[CFG_PATH_LEN + 32];
        snprintf(origin, sizeof origin, "%s: line %d", path, line);
        rc = each(ctx, o, origin, err);
        cJSON_Delete(o);
    }
    free(buf);
    if (skipped) *skipped = sk;
    return rc;
}

void rpt_skipped_warn(FILE *f, const char *path, const rpt_skipped *sk)
{
    if (sk->lines == 0) return;
    fprintf(f, "heptasim: warning: %s: skipped %d unreadable line%s (first: line %d%s; an interrupted write or junk), "
            "read every record around them\n", path, sk->lines, sk->lines == 1 ? "" : "s", sk->first_line,
            sk->torn ? "; the last line is torn" : "");
}

sim_rc rpt_jsonl_append(FILE *f, const char *path, const void *record, sim_err *err)
{
    char *text = sim_json_print(record, false);
    if (!text) return sim_fail(err, SIM_ENOMEM, "%s: cannot format a sweep record (out of memory)", path);
    bool bad = fputs(text, f) == EOF || fputc('\n', f) == EOF || fflush(f) != 0;
    int e = errno;
    cJSON_free(text);
    if (bad)
        return sim_fail(err, SIM_EIO, "%s: cannot write a sweep record: %s (check free space and permissions)", path,
                        strerror(e));
    return SIM_OK;
}
