/* trace.c - the Chrome trace-event file of a simulated step (Perfetto,
 * chrome://tracing), written while the simulation runs.
 *
 * Layout of the file: {"traceEvents":[ ...one event per line... ],
 * "displayTimeUnit":"ms","otherData":{...}}.  Each traced rank is a process
 * (pid = rank + 1, named "rank R (stage S, dp D, tp T)"), each stream a
 * thread of it (tid = stream + 1: main compute track, then the tp, cp, ep
 * and dp communication streams).  An instruction that took time is a
 * complete event ("ph":"X", microseconds with nanosecond resolution);
 * sends, which take no time on the sender, are instant events.  Every event
 * is built and printed with cJSON and written at once, so memory does not
 * grow with the number of events.  Times are rounded to whole nanoseconds
 * and a start that rounds to before the end of the previous slice of its
 * track by at most 1 ns is moved to that end, so the slices of one track
 * never overlap. */
#include "report.h"

#include "../config/keys.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

struct rpt_trace {
    sim_out out;               /* the file, renamed into place when closed */
    FILE *f;                   /* out.f */
    char *buf;                 /* stdio buffer */
    const cfg_strategy *s;
    int world;
    unsigned char *seen;       /* per rank: bit 0 process named, bit 1+k stream k named */
    long long *last_end_ns;    /* per rank and stream: end of the last slice */
    long long events;
    bool failed;
    int err_no;
};

/* ------------------------------------------------------------ coordinates */

/* Fills coords[d] with the digit of dimension d of rank (ep: 0), in the
 * workload's rank numbering. */
void rpt_rank_coords(const cfg_strategy *s, int rank, int coords[CFG_NDIMS])
{
    wl_strategy_coords(s, rank, coords);
    coords[CFG_DIM_EP] = 0;
}

/* Parses a non-negative decimal integer at *p, advancing *p; -1 if none. */
static long parse_rank(const char **p)
{
    const char *q = *p;
    if (*q < '0' || *q > '9') return -1;
    long v = 0;
    while (*q >= '0' && *q <= '9') {
        v = v * 10 + (*q - '0');
        if (v > 100000000L) return -1;
        q++;
    }
    *p = q;
    return v;
}

/* Fills the world-sized ranks array from list (see report.h).  Returns
 * SIM_OK, or SIM_EINVAL naming the bad item and the valid range. */
sim_rc rpt_trace_ranks(const char *list, const cfg_strategy *s, bool *ranks, sim_err *err)
{
    int world = cfg_world_size(s);
    for (int r = 0; r < world; r++) ranks[r] = false;
    if (!list || !*list) {
        long stride = wl_strategy_stride(s, CFG_DIM_PP);
        for (int k = 0; k < s->pp; k++)
            if (k * stride < world) ranks[k * stride] = true;
        return SIM_OK;
    }
    if (strcmp(list, "all") == 0) {
        for (int r = 0; r < world; r++) ranks[r] = true;
        return SIM_OK;
    }
    const char *p = list;
    for (;;) {
        const char *item = p;
        long a = parse_rank(&p), b = a;
        if (a >= 0 && *p == '-') {
            p++;
            b = parse_rank(&p);
        }
        if (a < 0 || b < 0 || (*p != ',' && *p != '\0')) {
            size_t n = strcspn(item, ",");
            return sim_fail(err, SIM_EINVAL,
                            "--trace-ranks: '%.*s' is not a rank or a range (write e.g. 0,5,8-15 or all)", (int)n,
                            item);
        }
        if (b < a || b >= world)
            return sim_fail(err, SIM_EINVAL, "--trace-ranks: '%.*s' is outside the ranks 0-%d of this strategy",
                            (int)(p - item), item, world - 1);
        for (long r = a; r <= b; r++) ranks[r] = true;
        if (*p == '\0') break;
        p++;
    }
    return SIM_OK;
}

/* ------------------------------------------------------------------ names */

static const char *const phase_names[] = {"fwd", "bwd", "recomp", "grad", "opt", "wgrad"}; /* ORDER WL_PHASE */
_Static_assert(sizeof phase_names / sizeof *phase_names == WL_NPHASES, "one name per phase");
static const char *const stream_names[] = {"main (compute)", "tp stream", "cp stream", "ep stream",
                                           "dp stream"}; /* ORDER WL_STREAM */
_Static_assert(sizeof stream_names / sizeof *stream_names == WL_NSTREAMS, "one name per stream");
static const char *const stream_keys[] = {"main", "tp", "cp", "ep", "dp"}; /* ORDER WL_STREAM */
_Static_assert(sizeof stream_keys / sizeof *stream_keys == WL_NSTREAMS, "one key per stream");

static const char *phase_short(int ph)
{
    return ph >= 0 && ph < WL_NPHASES ? phase_names[ph] : "?";
}

static const char *stream_name(int stream)
{
    return stream >= 0 && stream < WL_NSTREAMS ? stream_names[stream] : "stream";
}

static const char *stream_key(int stream)
{
    return stream >= 0 && stream < WL_NSTREAMS ? stream_keys[stream] : "?";
}

/* Writes the slice name of in into out: "fc1 L12 mb3 fwd",
 * "recv pp_activation mb3 fwd", "wait tp L12 mb3 bwd". */
static void slice_name(const wl_instr *in, char *out, size_t cap)
{
    int n;
    if (in->op == WL_WAIT)
        n = snprintf(out, cap, "wait %s", stream_key(in->stream));
    else if (in->op == WL_RECV)
        n = snprintf(out, cap, "recv %s", wl_label_name(in->label));
    else if (in->op == WL_SEND)
        n = snprintf(out, cap, "send %s", wl_label_name(in->label));
    else
        n = snprintf(out, cap, "%s", wl_label_name(in->label));
    if (n < 0 || (size_t)n >= cap) return;
    if (in->layer >= 0) n += snprintf(out + n, cap - (size_t)n, " L%d", (int)in->layer);
    if ((size_t)n >= cap) return;
    if (in->micro >= 0) n += snprintf(out + n, cap - (size_t)n, " mb%d", (int)in->micro);
    if ((size_t)n >= cap) return;
    snprintf(out + n, cap - (size_t)n, " %s", phase_short(in->phase));
}

/* Category of a slice: compute, comm, bubble (pipeline receive), wait. */
static const char *slice_cat(const wl_instr *in)
{
    switch ((wl_op)in->op) {
    case WL_COMPUTE: return "compute";
    case WL_COLL: return "comm";
    case WL_SEND: return "p2p";
    case WL_RECV: return in->group == WL_G_PP ? "bubble" : "wait";
    case WL_WAIT: return "wait";
    }
    return "?";
}

/* ------------------------------------------------------------------ output */

/* Prints ev unformatted as the next element of traceEvents and deletes it. */
static void emit(rpt_trace *t, cJSON *ev)
{
    /* cJSON's own printing: times in whole nanoseconds have few enough
     * digits to print exactly, and sim_json_print's copy would slow a
     * trace of millions of events by half */
    char *text = cJSON_PrintUnformatted(ev);
    cJSON_Delete(ev);
    if (!text) {
        t->failed = true;
        t->err_no = ENOMEM;
        return;
    }
    if (fputs(t->events ? ",\n" : "\n", t->f) == EOF || fputs(text, t->f) == EOF) {
        if (!t->failed) t->err_no = errno;
        t->failed = true;
    }
    t->events++;
    cJSON_free(text);
}

static cJSON *meta(int pid, int tid, const char *what)
{
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", what);
    cJSON_AddStringToObject(ev, "ph", "M");
    cJSON_AddNumberToObject(ev, "pid", pid);
    cJSON_AddNumberToObject(ev, "tid", tid);
    cJSON_AddItemToObject(ev, "args", cJSON_CreateObject());
    return ev;
}

/* Names rank's process and its stream's thread on first use. */
static void name_tracks(rpt_trace *t, int rank, int stream)
{
    int pid = rank + 1, tid = stream + 1;
    unsigned char bit = (unsigned char)(1u << (stream + 1));
    if (!(t->seen[rank] & 1u)) {
        int c[CFG_NDIMS];
        rpt_rank_coords(t->s, rank, c);
        char name[160];
        int n = snprintf(name, sizeof name, "rank %d (stage %d, dp %d, tp %d", rank, c[CFG_DIM_PP], c[CFG_DIM_DP],
                         c[CFG_DIM_TP_X] + t->s->tp_x * c[CFG_DIM_TP_Y]);
        if (cfg_cp(t->s) > 1 && n > 0 && (size_t)n < sizeof name)
            n += snprintf(name + n, sizeof name - (size_t)n, ", cp %d",
                          c[CFG_DIM_CP_ULYSSES] + t->s->cp_ulysses * c[CFG_DIM_CP_RING]);
        if (n > 0 && (size_t)n < sizeof name) snprintf(name + n, sizeof name - (size_t)n, ")");
        cJSON *ev = meta(pid, 0, "process_name");
        cJSON_AddStringToObject(cJSON_GetObjectItem(ev, "args"), "name", name);
        emit(t, ev);
        ev = meta(pid, 0, "process_sort_index");
        cJSON_AddNumberToObject(cJSON_GetObjectItem(ev, "args"), "sort_index", rank);
        emit(t, ev);
        t->seen[rank] |= 1u;
    }
    if (!(t->seen[rank] & bit)) {
        cJSON *ev = meta(pid, tid, "thread_name");
        cJSON_AddStringToObject(cJSON_GetObjectItem(ev, "args"), "name", stream_name(stream));
        emit(t, ev);
        ev = meta(pid, tid, "thread_sort_index");
        cJSON_AddNumberToObject(cJSON_GetObjectItem(ev, "args"), "sort_index", stream);
        emit(t, ev);
        t->seen[rank] |= bit;
    }
}

/* Creates the file and writes the opening of the document. */
sim_rc rpt_trace_open(const char *path, const cfg_strategy *s, rpt_trace **out, sim_err *err)
{
    *out = NULL;
    sim_out o;
    sim_rc rc = sim_out_open(&o, path, "trace", err);
    if (rc != SIM_OK) return rc;
    rpt_trace *t = sim_xcalloc(1, sizeof *t);
    t->out = o;
    FILE *f = t->f = o.f;
    t->buf = sim_xcalloc(1, 1 << 20);
    if (f != stdout) setvbuf(f, t->buf, _IOFBF, 1 << 20);
    t->s = s;
    t->world = cfg_world_size(s);
    if (t->world < 1) t->world = 1;
    t->seen = sim_xcalloc((size_t)t->world, 1);
    t->last_end_ns = sim_xcalloc((size_t)t->world * WL_NSTREAMS, sizeof *t->last_end_ns);
    if (fputs("{\"traceEvents\":[", f) == EOF) {
        t->failed = true;
        t->err_no = errno;
    }
    *out = t;
    return SIM_OK;
}

/* Writes the event of one completed instruction (see the banner). */
void rpt_trace_add(rpt_trace *t, int rank, const wl_instr *in, int stream, double start_s, double end_s)
{
    if (!t || rank < 0 || rank >= t->world || stream < 0 || stream >= WL_NSTREAMS) return;
    if (!isfinite(start_s) || !isfinite(end_s)) return;
    long long a = llround(start_s * 1e9), b = llround(end_s * 1e9);
    bool instant = in->op == WL_SEND;
    if (!instant && b <= a) return; /* took no time: nothing to show */
    long long *last = &t->last_end_ns[(size_t)rank * WL_NSTREAMS + (size_t)stream];
    if (!instant) {
        if (a < *last && *last - a <= 1) a = *last;
        if (b <= a) return;
        *last = b;
    }
    name_tracks(t, rank, stream);

    char name[96];
    slice_name(in, name, sizeof name);
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "name", name);
    cJSON_AddStringToObject(ev, "cat", slice_cat(in));
    cJSON_AddStringToObject(ev, "ph", instant ? "i" : "X");
    cJSON_AddNumberToObject(ev, "ts", (double)a / 1e3);
    if (instant)
        cJSON_AddStringToObject(ev, "s", "t");
    else
        cJSON_AddNumberToObject(ev, "dur", (double)(b - a) / 1e3);
    cJSON_AddNumberToObject(ev, "pid", rank + 1);
    cJSON_AddNumberToObject(ev, "tid", stream + 1);
    cJSON *args = cJSON_AddObjectToObject(ev, "args");
    cJSON_AddStringToObject(args, "phase", wl_phase_name((wl_phase)in->phase));
    if (in->layer >= 0) cJSON_AddNumberToObject(args, "layer", in->layer);
    if (in->micro >= 0) cJSON_AddNumberToObject(args, "micro_batch", in->micro);
    switch ((wl_op)in->op) {
    case WL_COMPUTE: break;
    case WL_COLL:
        cJSON_AddNumberToObject(args, "bytes", in->bytes);
        cJSON_AddStringToObject(args, "group", wl_group_name((wl_group)in->group));
        cJSON_AddStringToObject(args, "collective", wl_coll_name((wl_coll)in->coll));
        cJSON_AddStringToObject(args, "dim", wl_dim_name(wl_instr_dim(in)));
        break;
    case WL_SEND:
    case WL_RECV:
        cJSON_AddNumberToObject(args, "bytes", in->bytes);
        cJSON_AddStringToObject(args, "group", wl_group_name((wl_group)in->group));
        cJSON_AddNumberToObject(args, "peer", in->peer);
        break;
    case WL_WAIT:
        cJSON_AddStringToObject(args, "stream", stream_key(in->stream));
        cJSON_AddNumberToObject(args, "ops", in->seq);
        break;
    }
    emit(t, ev);
}

/* Closes the document; see report.h. */
sim_rc rpt_trace_close(rpt_trace *t, const rpt_run *run, sim_err *err)
{
    if (!t) return SIM_OK;
    cJSON *other = cJSON_CreateObject();
    cJSON_AddStringToObject(other, "generator", "heptasim");
    cJSON_AddStringToObject(other, "version", rpt_version());
    if (run) {
        if (run->model) cJSON_AddStringToObject(other, "model", run->model->name);
        if (run->platform) cJSON_AddStringToObject(other, "platform", run->platform->name);
        cJSON_AddItemToObject(other, "overrides", rpt_overrides_json(&run->overrides));
        if (run->strategy) {
            char compact[CFG_TEXT_LEN];
            cfg_strategy_compact(run->strategy, compact, sizeof compact);
            cJSON_AddStringToObject(other, "strategy", run->strategy->name);
            cJSON_AddStringToObject(other, "strategy_compact", compact);
        }
        if (run->sim) cJSON_AddNumberToObject(other, "step_time_s", run->sim->step_time_s);
    }
    cJSON_AddNumberToObject(other, "events", (double)t->events);
    char *text = cJSON_PrintUnformatted(other);
    cJSON_Delete(other);
    if (!text || fprintf(t->f, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":%s}\n", text) < 0) {
        if (!t->failed) t->err_no = text ? errno : ENOMEM;
        t->failed = true;
    }
    cJSON_free(text);
    sim_rc rc = SIM_OK;
    if (t->failed) {
        rc = sim_fail(err, SIM_EIO, "%s: cannot write the trace: %s (check free space and permissions)",
                      t->out.path, strerror(t->err_no));
        sim_out_discard(&t->out);
    } else {
        rc = sim_out_commit(&t->out, err);
    }
    free(t->buf);
    free(t->seen);
    free(t->last_end_ns);
    free(t);
    return rc;
}
