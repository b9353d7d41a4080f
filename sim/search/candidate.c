/* candidate.c - a candidate as the record report writes (report/records.c:
 * the JSON object, the JSONL files), and back: the search's fields mapped
 * to and from the row report knows. */
#include <string.h>

#include "internal.h"

/* The simulation states as report names them, in srch_sim_state order. */
static const rpt_row_state row_states[] = {RPT_ROW_ESTIMATED, RPT_ROW_SIMULATED, RPT_ROW_FAILED};
_Static_assert(sizeof row_states / sizeof *row_states == SRCH_SIM_FAILED + 1, "one row state per simulation state");

void srch_candidate_record(const srch_candidate *c, rpt_record *r)
{
    memset(r, 0, sizeof *r);
    r->index = c->index;
    r->space = srch_space_name(c->space);
    memcpy(r->inputs_id, c->inputs_id, sizeof r->inputs_id);
    r->megatron_style = c->megatron_style;
    r->strategy = c->strategy;
    r->est = c->est;
    r->state = row_states[c->state];
    r->approximate = c->approximate;
    r->step_time_s = c->step_time_s;
    r->mfu = c->mfu;
    r->tokens_per_s = c->tokens_per_s;
    r->compute_s = c->compute_s;
    r->bubble_s = c->bubble_s;
    r->optimizer_s = c->optimizer_s;
    memcpy(r->exposed_s, c->exposed_s, sizeof r->exposed_s);
    memcpy(r->comm_s, c->comm_s, sizeof r->comm_s);
    r->peak_bytes = c->peak_bytes;
    r->capacity_bytes = c->capacity_bytes;
    memcpy(r->error, c->error, sizeof r->error);
}

void srch_candidate_from_record(const rpt_record *r, srch_candidate *c)
{
    memset(c, 0, sizeof *c);
    c->index = r->index;
    c->space = (srch_space)sim_enum_value(srch_space_names, SRCH_NSPACES, r->space);
    memcpy(c->inputs_id, r->inputs_id, sizeof c->inputs_id);
    c->megatron_style = r->megatron_style;
    c->strategy = r->strategy;
    c->est = r->est;
    c->state = r->state == RPT_ROW_SIMULATED ? SRCH_SIM_DONE : r->state == RPT_ROW_FAILED ? SRCH_SIM_FAILED
                                                                                            : SRCH_SIM_NONE;
    c->approximate = r->approximate;
    c->step_time_s = r->step_time_s;
    c->mfu = r->mfu;
    c->tokens_per_s = r->tokens_per_s;
    c->compute_s = r->compute_s;
    c->bubble_s = r->bubble_s;
    c->optimizer_s = r->optimizer_s;
    memcpy(c->exposed_s, r->exposed_s, sizeof c->exposed_s);
    memcpy(c->comm_s, r->comm_s, sizeof c->comm_s);
    c->peak_bytes = r->peak_bytes;
    c->capacity_bytes = r->capacity_bytes;
    memcpy(c->error, r->error, sizeof c->error);
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
