/* candidate.c - a candidate as the record report writes (report/records.c:
 * the JSON object, the JSONL files), and back: the search's fields mapped
 * to and from the row report knows. */
#include <string.h>

#include "internal.h"

/* The simulation states as report names them, in srch_sim_state order. */
static const rpt_row_state row_states[] = {RPT_ROW_ESTIMATED, RPT_ROW_SIMULATED, RPT_ROW_FAILED};
_Static_assert(sizeof row_states / sizeof *row_states == SRCH_SIM_FAILED + 1, "one row state per simulation state");

/* The fields a candidate and its record share, under the same names and
 * types (copied whole: arrays and strings too). */
#define SHARED_FIELDS(X)                                                                                              \
    X(index) X(inputs_id) X(megatron_style) X(strategy) X(est) X(approximate) X(step_time_s) X(mfu) X(tokens_per_s)   \
    X(compute_s) X(bubble_s) X(optimizer_s) X(exposed_s) X(comm_s) X(peak_bytes) X(capacity_bytes) X(error)
#define COPY_FIELD(f)                                                                                                 \
    _Static_assert(sizeof to->f == sizeof from->f, "the same field");                                                \
    memcpy(&to->f, &from->f, sizeof to->f);

void srch_candidate_record(const srch_candidate *from, rpt_record *to)
{
    memset(to, 0, sizeof *to);
    SHARED_FIELDS(COPY_FIELD)
    to->space = srch_space_name(from->space);
    to->state = row_states[from->state];
}

void srch_candidate_from_record(const rpt_record *from, srch_candidate *to)
{
    memset(to, 0, sizeof *to);
    SHARED_FIELDS(COPY_FIELD)
    to->space = (srch_space)sim_enum_value(srch_space_names, SRCH_NSPACES, from->space);
    to->state = from->state == RPT_ROW_SIMULATED ? SRCH_SIM_DONE
                : from->state == RPT_ROW_FAILED  ? SRCH_SIM_FAILED
                                                 : SRCH_SIM_NONE;
}

void *srch_record_to_json(const srch_candidate *c)
{
    rpt_record r;
    srch_candidate_record(c, &r);
    return rpt_record_to_json(&r);
}

sim_rc srch_record_from_json(const void *json, const char *origin, srch_candidate *out, sim_err *err)
{
    rpt_record r;
    sim_rc rc = rpt_record_from_json(json, origin, srch_space_names, SRCH_NSPACES, &r, err);
    if (rc == SIM_OK) srch_candidate_from_record(&r, out);
    return rc;
}

/* Where srch_jsonl_read puts the records it reads. */
typedef struct record_sink {
    srch_candidate **arr;
    int *n, *cap;
} record_sink;

static sim_rc add_record(void *ctx, const rpt_record *r, const char *origin, sim_err *err)
{
    (void)origin;
    (void)err;
    record_sink *sink = ctx;
    if (*sink->n == *sink->cap) {
        *sink->cap = *sink->cap ? 2 * *sink->cap : 64;
        *sink->arr = sim_xrealloc(*sink->arr, (size_t)*sink->cap * sizeof **sink->arr);
    }
    srch_candidate_from_record(r, &(*sink->arr)[(*sink->n)++]);
    return SIM_OK;
}

sim_rc srch_jsonl_read(const char *path, srch_candidate **arr, int *n, int *cap, rpt_skipped *skipped, sim_err *err)
{
    record_sink sink = {arr, n, cap};
    return rpt_records_read(path, srch_space_names, SRCH_NSPACES, add_record, &sink, skipped, err);
}

sim_rc srch_jsonl_write(FILE *f, const char *path, const srch_candidate *c, sim_err *err)
{
    rpt_record r;
    srch_candidate_record(c, &r);
    return rpt_record_append(f, path, &r, err);
}
