/* replay.c - the contention-free replayer: every rank's program played
 * with the engine's semantics, without SimGrid and without contention.
 *
 * Each rank has a main clock.  COMPUTE adds its seconds.  A COLL on the
 * main stream blocks the rank; one on an asynchronous stream joins that
 * stream's FIFO, whose head starts at max(submitted, previous op done).
 * WAIT blocks until the stream completed `seq` ops; the end of a program
 * waits for every stream.  SEND is fire and forget: the message arrives
 * net_p2p_s after it is sent; RECV (the k-th on its (src, dst, group, tag)
 * channel matches the k-th send) ends at max(posted, arrival).
 *
 * A collective is played when the last member of its group posts it on
 * that stream (one is pending per group and stream at a time: a member
 * posts the next only after the last completed).  Its phases are net's
 * (net_coll_phases), played as the engine plays them in flow mode
 * (engine/collective.c): on a ring phase, member i's flow to its successor
 * starts when both have started the phase, carries the phase's traffic
 * (steps x chunk) in net_p2p_between_s (its route), and the phase ends
 * for i when that flow and its predecessor's flow into i are done, plus
 * net_phase_tail_s (the other steps' latency and collective_step_s); on a
 * pairwise phase, i's flows to the members of its supernode share its
 * fabric link and its flows to the others its NIC, each set ending after
 * that plane's route latency and bytes.  A flow is alone on its links: two
 * flows sharing a link at the same time are where the engine's times and
 * these part.
 *
 * Ranks advance from a ready list until they block; a rank is put back on
 * it when what it waits for completes.  When the list runs dry with ranks
 * unfinished, the programs do not match (deadlock): an error.  Memory is
 * per rank and per group, never per instruction: programs are lazy, and
 * only pending collectives, queued stream ops and messages in flight are
 * held. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cost/cost.h"
#include "../net/net.h"
#include "estimate.h"

/* {========================================================== state */

/* An op of an asynchronous stream, queued until it completes. */
typedef struct rp_op {
    wl_instr in;
    double submit_s;
} rp_op;

typedef struct rp_stream {
    rp_op *q;                 /* ring buffer: q[head] is the running (or next) op */
    int head, count, cap;
    bool posted;              /* the head op joined its collective */
    double free_s;            /* when the last completed op ended */
    uint32_t submitted, completed;
    double start_s;           /* the head op's start */
    /* completed ops not yet waited for: done_s[k] of op done_seq0 + k */
    double *done_s;
    int ndone, done_cap;
    uint32_t done_seq0;
} rp_stream;

/* Messages sent on one channel and not yet received. */
typedef struct rp_chan {
    int src, dst, key;        /* key: group << 8 | tag */
    double *arrive_s;         /* FIFO of arrival times */
    int head, count, cap;
} rp_chan;

typedef enum rp_block { RB_RUN = 0, RB_COLL, RB_RECV, RB_WAIT, RB_DONE } rp_block;

/* A rank's view of one group: its layout and the group's id (its lowest
 * member), built on first use. */
typedef struct rp_view {
    bool have;
    int gid;
    net_layout lo;
} rp_view;

typedef struct rp_rank {
    void *prog;
    double now_s;
    rp_block block;
    wl_instr cur;             /* the instruction it is blocked on */
    double block_s;           /* when it blocked */
    int wait_stream;          /* RB_WAIT: the stream and op it waits for, */
    uint32_t wait_seq;
    wl_dim wait_dim;          /* and the dimension that wait is accounted to */
    int drain;                /* past its last instruction: the next stream to wait for (0: not yet) */
    bool queued;
    long long pc;
    rp_stream st[WL_NSTREAMS];
    rp_view views[WL_NGROUPS];
    rp_chan *chans;
    int nchans, chans_cap;
    est_rank_stats stats;
} rp_rank;

/* A collective waiting for its members, on (group kind, stream, group id). */
typedef struct rp_pending {
    int n, arrived;
    double *start_s;          /* by member index */
    wl_instr *in;             /* each member's instruction */
} rp_pending;

typedef struct rp_sim {
    const cfg_platform *p;
    const wl_programs *w;
    int world;
    rp_rank *ranks;
    rp_pending **pend[WL_NGROUPS][WL_NSTREAMS]; /* world slots each, allocated on first use */
    int *ready, nready;
    int running;                                 /* the rank advancing now (-1: none) */
    int *members, *group, *index_of, *sn_count;  /* scratch: world, world, world (-1), net_supernodes */
    net_phase *ph;                               /* scratch: world x NET_MAX_PHASES */
    double *t0, *t1;                             /* scratch: world, phase starts and ends by member */
    int *post_rank, *post_stream, nposts;        /* stream heads to post */
    int posts_cap;
    bool failed;
    char msg[SIM_ERR_LEN];
    long long instructions;
} rp_sim;

static void rp_fail(rp_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void rp_fail(rp_sim *s, const char *fmt, ...)
{
    if (s->failed) return;
    s->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
}

static void make_ready(rp_sim *s, int rank)
{
    rp_rank *r = &s->ranks[rank];
    if (r->queued || r->block == RB_DONE || rank == s->running) return;
    r->queued = true;
    s->ready[s->nready++] = rank;
}

/* }========================================================== */

/* {========================================================== groups */

/* Fetches rank's members of g into s->members; returns n, or 0 after a
 * recorded failure. */
static int fetch_members(rp_sim *s, int rank, wl_group g, int *me)
{
    int n = s->w->group_members(s->w->ctx, rank, g, s->members, me);
    if (n < 1 || n > s->world || *me < 0 || *me >= n || s->members[*me] != rank) {
        rp_fail(s, "rank %d: group %s: invalid members (size %d, index %d)", rank, wl_group_name(g), n, *me);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (s->members[i] < 0 || s->members[i] >= s->world) {
            rp_fail(s, "rank %d: group %s: member %d is rank %d, outside [0, %d)", rank, wl_group_name(g), i,
                    s->members[i], s->world);
            return 0;
        }
    return n;
}

static rp_view *view_get(rp_sim *s, int rank, wl_group g)
{
    rp_view *v = &s->ranks[rank].views[g];
    if (v->have) return v;
    int me = 0, n = fetch_members(s, rank, g, &me);
    if (n == 0) return NULL;
    v->gid = s->members[0];
    for (int i = 1; i < n; i++)
        if (s->members[i] < v->gid) v->gid = s->members[i];
    net_layout_of(s->p, s->members, n, me, s->sn_count, &v->lo);
    v->have = true;
    return v;
}

/* Uncontended time of one flow of `bytes` from device a to device b. */
static double flow_s(const rp_sim *s, int a, int b, double bytes)
{
    return net_p2p_between_s(s->p, a, b, bytes);
}

/* Plays the collective of the n members s->group[0..n) (s->index_of
 * set), each with its own instruction, from their starts in s->t0; their
 * ends go to s->t0.  Returns false after a recorded failure. */
static bool play(rp_sim *s, const rp_pending *pd, int n, wl_group g)
{
    const cfg_platform *p = s->p;
    int nph = 0;
    for (int i = 0; i < n; i++) {
        int r = s->group[i];
        net_phase *ph = &s->ph[(size_t)i * NET_MAX_PHASES];
        int m = net_coll_step_phases(p, &s->ranks[r].views[g].lo, (net_coll)pd->in[i].coll, pd->in[i].bytes,
                                     (int)pd->in[i].seq, ph);
        if (i == 0) nph = m;
        bool same = m == nph;
        for (int k = 0; k < m && same; k++) same = ph[k].op == s->ph[k].op && ph[k].n == s->ph[k].n;
        if (!same) {
            rp_fail(s, "rank %d: %s on %s does not match rank %d's", r, wl_coll_name((wl_coll)pd->in[i].coll),
                    wl_group_name(g), s->group[0]);
            return false;
        }
    }
    for (int k = 0; k < nph; k++) {
        for (int i = 0; i < n; i++) {
            int r = s->group[i];
            const net_phase *f = &s->ph[(size_t)i * NET_MAX_PHASES + k];
            double end = s->t0[i];
            if (f->n > 1 && f->op == NET_ALLTOALL) {
                /* flows to and from every other member, each once both
                 * started; mine share my fabric link (local) or my NIC
                 * (remote), and so do each member's */
                for (int j = 0; j < n; j++) {
                    if (j == i) continue;
                    int q = s->group[j];
                    const net_phase *fq = &s->ph[(size_t)j * NET_MAX_PHASES + k];
                    bool near = net_plane_between(p, r, q) == NET_FABRIC;
                    double mine = near ? f->local_bytes : f->remote_bytes;
                    double theirs = near ? fq->local_bytes : fq->remote_bytes;
                    double both = fmax(s->t0[i], s->t0[j]);
                    end = fmax(end, both + fmax(flow_s(s, r, q, mine), flow_s(s, q, r, theirs)));
                }
                end += net_phase_tail_s(p, f);
            } else if (f->n > 1) {
                /* my flow to my successor and my predecessor's to me, each
                 * once both started, with the whole phase's traffic */
                const net_ring *rg = &s->ranks[r].views[g].lo.ring[f->ring];
                int si = s->index_of[rg->succ], pi = s->index_of[rg->pred];
                if (si < 0 || pi < 0) {
                    rp_fail(s, "rank %d: group %s: a ring neighbour is not a member", r, wl_group_name(g));
                    return false;
                }
                const net_phase *fp = &s->ph[(size_t)pi * NET_MAX_PHASES + k];
                double out = fmax(s->t0[i], s->t0[si]) + flow_s(s, r, rg->succ, f->steps * f->chunk_bytes);
                double in = fmax(s->t0[pi], s->t0[i]) + flow_s(s, rg->pred, r, fp->steps * fp->chunk_bytes);
                end = fmax(out, in) + net_phase_tail_s(p, f);
            }
            s->t1[i] = end;
        }
        memcpy(s->t0, s->t1, (size_t)n * sizeof *s->t0);
    }
    return true;
}

static void stream_done_push(rp_stream *st, double t)
{
    if (st->ndone == 0) st->done_seq0 = st->completed;
    if (st->ndone == st->done_cap) {
        st->done_cap = st->done_cap ? 2 * st->done_cap : 8;
        st->done_s = sim_xrealloc(st->done_s, (size_t)st->done_cap * sizeof *st->done_s);
    }
    st->done_s[st->ndone++] = t;
}

static void post_push(rp_sim *s, int rank, int stream)
{
    if (s->nposts == s->posts_cap) {
        s->posts_cap = s->posts_cap ? 2 * s->posts_cap : 64;
        s->post_rank = sim_xrealloc(s->post_rank, (size_t)s->posts_cap * sizeof *s->post_rank);
        s->post_stream = sim_xrealloc(s->post_stream, (size_t)s->posts_cap * sizeof *s->post_stream);
    }
    s->post_rank[s->nposts] = rank;
    s->post_stream[s->nposts++] = stream;
}

/* Member `rank`'s op on `stream` ended at end_s (started at start_s). */
static void op_done(rp_sim *s, int rank, int stream, const wl_instr *in, double start_s, double end_s)
{
    rp_rank *r = &s->ranks[rank];
    wl_dim dim = wl_instr_dim(in);
    r->stats.comm_s[dim] += end_s - start_s;
    if (stream == WL_S_MAIN) {
        r->stats.exposed_comm_s[dim] += end_s - start_s;
        r->now_s = end_s;
        r->block = RB_RUN;
        make_ready(s, rank);
        return;
    }
    rp_stream *st = &r->st[stream];
    st->head = (st->head + 1) % st->cap;
    st->count--;
    st->posted = false;
    st->free_s = end_s;
    stream_done_push(st, end_s);
    st->completed++;
    if (st->count > 0) post_push(s, rank, stream);
    if (r->block == RB_WAIT && r->wait_stream == stream && st->completed >= r->wait_seq) make_ready(s, rank);
}

/* Rank joins collective `in` on `stream` at start_s; the last member to
 * join plays it for all. */
static void coll_post(rp_sim *s, int rank, int stream, const wl_instr *in, double start_s)
{
    wl_group g = (wl_group)in->group;
    rp_view *v = view_get(s, rank, g);
    if (!v) return;
    int n = v->lo.n;
    net_phase mine[NET_MAX_PHASES];
    if (net_coll_step_phases(s->p, &v->lo, (net_coll)in->coll, in->bytes, (int)in->seq, mine) == 0) {
        /* nothing to send (a group of one, no bytes): the engine does not
         * meet the other members either */
        op_done(s, rank, stream, in, start_s, start_s);
        return;
    }
    if (!s->pend[g][stream]) s->pend[g][stream] = sim_xcalloc((size_t)s->world, sizeof(rp_pending *));
    rp_pending **slot = &s->pend[g][stream][v->gid];
    if (!*slot) {
        rp_pending *pd = sim_xcalloc(1, sizeof *pd);
        pd->n = n;
        pd->start_s = sim_xcalloc((size_t)n, sizeof *pd->start_s);
        pd->in = sim_xcalloc((size_t)n, sizeof *pd->in);
        for (int i = 0; i < n; i++) pd->start_s[i] = -1.0;
        *slot = pd;
    }
    rp_pending *pd = *slot;
    int me = v->lo.me;
    if (pd->n != n || pd->start_s[me] >= 0) {
        rp_fail(s, "rank %d: %s on %s, stream %d: its group disagrees with its members' (size %d, %d)", rank,
                wl_coll_name((wl_coll)in->coll), wl_group_name(g), stream, n, pd->n);
        return;
    }
    pd->start_s[me] = start_s;
    pd->in[me] = *in;
    if (++pd->arrived < n) return;

    *slot = NULL;
    int mi = 0;
    bool ok = fetch_members(s, rank, g, &mi) == n;
    if (ok) memcpy(s->group, s->members, (size_t)n * sizeof *s->group);
    for (int i = 0; i < n && ok; i++) {
        ok = view_get(s, s->group[i], g) != NULL && s->ranks[s->group[i]].views[g].lo.n == n;
        s->t0[i] = pd->start_s[i];
    }
    if (!ok && !s->failed) rp_fail(s, "rank %d: group %s: members disagree on the group", rank, wl_group_name(g));
    for (int i = 0; i < n && ok; i++) s->index_of[s->group[i]] = i;
    if (ok) ok = play(s, pd, n, g);
    for (int i = 0; i < n; i++) s->index_of[s->group[i]] = -1;
    for (int i = 0; i < n && ok; i++) op_done(s, s->group[i], stream, &pd->in[i], pd->start_s[i], s->t0[i]);
    free(pd->start_s);
    free(pd->in);
    free(pd);
}

/* Posts the head op of rank's stream once its start is known. */
static void stream_post_head(rp_sim *s, int rank, int stream)
{
    rp_stream *st = &s->ranks[rank].st[stream];
    if (st->posted || st->count == 0) return;
    st->posted = true;
    const rp_op *op = &st->q[st->head];
    st->start_s = fmax(op->submit_s, st->free_s);
    coll_post(s, rank, stream, &op->in, st->start_s);
}

static void posts_run(rp_sim *s)
{
    while (s->nposts > 0 && !s->failed) {
        s->nposts--;
        stream_post_head(s, s->post_rank[s->nposts], s->post_stream[s->nposts]);
    }
}

static void stream_submit(rp_sim *s, int rank, const wl_instr *in)
{
    rp_stream *st = &s->ranks[rank].st[in->stream];
    if (st->count == st->cap) {
        int cap = st->cap ? 2 * st->cap : 16;
        rp_op *q = sim_xcalloc((size_t)cap, sizeof *q);
        for (int i = 0; i < st->count; i++) q[i] = st->q[(st->head + i) % st->cap];
        free(st->q);
        st->q = q;
        st->cap = cap;
        st->head = 0;
    }
    st->q[(st->head + st->count) % st->cap] = (rp_op){*in, s->ranks[rank].now_s};
    st->count++;
    st->submitted++;
    if (st->count == 1) post_push(s, rank, in->stream);
}

/* When op `seq` of a stream ended, if it did (completed >= seq); forgets
 * the ops before it: a rank waits for a stream's ops in order, and one
 * waited for earlier ended before the rank's clock. */
static double stream_done_at(rp_stream *st, uint32_t seq, double now_s)
{
    if (st->ndone == 0 || seq <= st->done_seq0) return now_s;
    uint32_t k = seq - st->done_seq0 - 1;
    double t = st->done_s[k];
    int keep = st->ndone - (int)k - 1;
    memmove(st->done_s, st->done_s + k + 1, (size_t)keep * sizeof *st->done_s);
    st->ndone = keep;
    st->done_seq0 = seq;
    return fmax(t, now_s);
}

/* }========================================================== */

/* {========================================================== p2p */

static rp_chan *chan_get(rp_rank *r, int src, int dst, int key)
{
    for (int i = 0; i < r->nchans; i++)
        if (r->chans[i].src == src && r->chans[i].dst == dst && r->chans[i].key == key) return &r->chans[i];
    if (r->nchans == r->chans_cap) {
        r->chans_cap = r->chans_cap ? 2 * r->chans_cap : 4;
        r->chans = sim_xrealloc(r->chans, (size_t)r->chans_cap * sizeof *r->chans);
    }
    rp_chan *c = &r->chans[r->nchans++];
    memset(c, 0, sizeof *c);
    c->src = src;
    c->dst = dst;
    c->key = key;
    return c;
}

static void chan_push(rp_chan *c, double t)
{
    if (c->count == c->cap) {
        int cap = c->cap ? 2 * c->cap : 4;
        double *a = sim_xcalloc((size_t)cap, sizeof *a);
        for (int i = 0; i < c->count; i++) a[i] = c->arrive_s[(c->head + i) % c->cap];
        free(c->arrive_s);
        c->arrive_s = a;
        c->cap = cap;
        c->head = 0;
    }
    c->arrive_s[(c->head + c->count) % c->cap] = t;
    c->count++;
}

/* }========================================================== */

/* {========================================================== ranks */

/* Block rank r on WAIT of `stream` for `seq` ops (drain: all submitted);
 * returns true when it can go on at once (its clock moved past the op). */
static bool wait_for(rp_sim *s, int rank, int stream, uint32_t seq, bool drain)
{
    rp_rank *r = &s->ranks[rank];
    rp_stream *st = &r->st[stream];
    if (drain) seq = st->submitted;
    if (seq == 0) return true;
    if (seq > st->submitted) {
        rp_fail(s, "rank %d: instruction %lld waits for %u ops of stream %d, but only %u were started", rank, r->pc,
                seq, stream, st->submitted);
        return false;
    }
    if (st->completed >= seq) {
        r->now_s = stream_done_at(st, seq, r->now_s);
        return true;
    }
    r->block = RB_WAIT;
    r->wait_stream = stream;
    r->wait_seq = seq;
    r->wait_dim = wl_instr_dim(&st->q[(st->head + (int)(seq - st->completed - 1)) % st->cap].in);
    r->block_s = r->now_s;
    return false;
}

/* Resumes a rank woken from RB_WAIT or RB_RECV; false while it must still
 * wait. */
static bool resume(rp_sim *s, int rank)
{
    rp_rank *r = &s->ranks[rank];
    if (r->block == RB_WAIT) {
        rp_stream *st = &r->st[r->wait_stream];
        if (st->completed < r->wait_seq) return false;
        r->now_s = stream_done_at(st, r->wait_seq, r->now_s);
        r->stats.exposed_comm_s[r->wait_dim] += r->now_s - r->block_s;
        r->block = RB_RUN;
        return true;
    }
    if (r->block == RB_RECV) {
        rp_chan *c = chan_get(r, r->cur.peer, rank, r->cur.group << 8 | r->cur.tag);
        if (c->count == 0) return false;
        double t = fmax(r->now_s, c->arrive_s[c->head]);
        c->head = (c->head + 1) % c->cap;
        c->count--;
        if (r->cur.group == WL_G_PP)
            r->stats.bubble_s += t - r->now_s;
        else
            r->stats.exposed_comm_s[wl_instr_dim(&r->cur)] += t - r->now_s;
        r->now_s = t;
        r->block = RB_RUN;
        return true;
    }
    return r->block == RB_RUN;
}

/* Runs instruction `in` of rank; false when the rank blocked or failed. */
static bool step(rp_sim *s, int rank, const wl_instr *in)
{
    rp_rank *r = &s->ranks[rank];
    switch ((wl_op)in->op) {
    case WL_COMPUTE: {
        double t = in->seconds > 0 ? in->seconds : 0.0;
        r->now_s += t;
        r->stats.compute_s += t;
        if (in->phase < WL_NPHASES) r->stats.compute_by_phase_s[in->phase] += t;
        return true;
    }
    case WL_COLL:
        if (in->group >= WL_NGROUPS || in->coll > WL_ALLTOALL || in->stream >= WL_NSTREAMS) {
            rp_fail(s, "rank %d: instruction %lld: invalid collective (group %d, kind %d, stream %d)", rank, r->pc,
                    in->group, in->coll, in->stream);
            return false;
        }
        if (in->stream != WL_S_MAIN) {
            stream_submit(s, rank, in);
            posts_run(s);
            return !s->failed;
        }
        r->block = RB_COLL;
        r->cur = *in;
        coll_post(s, rank, WL_S_MAIN, in, r->now_s);
        posts_run(s);
        if (s->failed) return false;
        return r->block == RB_RUN; /* the last member: done already */
    case WL_SEND:
    case WL_RECV:
        if (in->peer < 0 || in->peer >= s->world || in->peer == rank || in->group >= WL_NGROUPS) {
            rp_fail(s, "rank %d: instruction %lld: invalid %s peer %d (world %d)", rank, r->pc,
                    in->op == WL_SEND ? "send" : "recv", in->peer, s->world);
            return false;
        }
        if (in->op == WL_SEND) {
            rp_rank *d = &s->ranks[in->peer];
            chan_push(chan_get(d, rank, in->peer, in->group << 8 | in->tag),
                      r->now_s + flow_s(s, rank, in->peer, in->bytes > 0 ? in->bytes : 0.0));
            make_ready(s, in->peer);
            return true;
        }
        r->block = RB_RECV;
        r->cur = *in;
        return resume(s, rank);
    case WL_WAIT:
        if (in->stream >= WL_NSTREAMS) {
            rp_fail(s, "rank %d: instruction %lld: wait on invalid stream %d", rank, r->pc, in->stream);
            return false;
        }
        if (in->stream == WL_S_MAIN || in->seq == 0) return true;
        return wait_for(s, rank, in->stream, in->seq, false);
    default:
        rp_fail(s, "rank %d: instruction %lld: unknown op %d", rank, r->pc, in->op);
        return false;
    }
}

/* Advances rank until it blocks, fails or finishes. */
static void advance(rp_sim *s, int rank)
{
    rp_rank *r = &s->ranks[rank];
    if (r->block != RB_RUN && !resume(s, rank)) return;
    while (!s->failed && r->prog) {
        wl_instr in;
        if (!s->w->program_next(r->prog, &in)) {
            s->w->program_free(r->prog);
            r->prog = NULL;
            r->drain = 1;
            break;
        }
        r->pc++;
        s->instructions++;
        if (!step(s, rank, &in)) return;
    }
    /* past its last instruction: wait for every stream, in order */
    while (!s->failed && r->drain < WL_NSTREAMS)
        if (!wait_for(s, rank, r->drain++, 0, true)) return;
    if (s->failed) return;
    r->stats.finish_s = r->now_s;
    r->block = RB_DONE;
}

/* }========================================================== */

/* {========================================================== run */

static void rank_release(const rp_sim *s, rp_rank *r)
{
    if (r->prog) s->w->program_free(r->prog);
    for (int i = 0; i < WL_NSTREAMS; i++) {
        free(r->st[i].q);
        free(r->st[i].done_s);
    }
    for (int i = 0; i < r->nchans; i++) free(r->chans[i].arrive_s);
    free(r->chans);
}

static void sim_release(rp_sim *s)
{
    for (int i = 0; s->ranks && i < s->world; i++) rank_release(s, &s->ranks[i]);
    for (int g = 0; g < WL_NGROUPS; g++)
        for (int st = 0; st < WL_NSTREAMS; st++) {
            if (!s->pend[g][st]) continue;
            for (int i = 0; i < s->world; i++)
                if (s->pend[g][st][i]) {
                    free(s->pend[g][st][i]->start_s);
                    free(s->pend[g][st][i]->in);
                    free(s->pend[g][st][i]);
                }
            free(s->pend[g][st]);
        }
    free(s->ranks);
    free(s->ready);
    free(s->members);
    free(s->group);
    free(s->index_of);
    free(s->sn_count);
    free(s->ph);
    free(s->t0);
    free(s->t1);
    free(s->post_rank);
    free(s->post_stream);
}

/* What an unfinished rank is blocked on, for the deadlock message. */
static void describe(const rp_sim *s, int rank, char *out, size_t cap)
{
    const rp_rank *r = &s->ranks[rank];
    const wl_instr *in = &r->cur;
    if (r->drain > 0 || r->block == RB_WAIT)
        snprintf(out, cap, "rank %d at instruction %lld waits for %u ops of stream %d", rank, r->pc, r->wait_seq,
                 r->wait_stream);
    else if (r->block == RB_RECV)
        snprintf(out, cap, "rank %d at instruction %lld, recv from rank %d", rank, r->pc, in->peer);
    else
        snprintf(out, cap, "rank %d at instruction %lld, %s on %s", rank, r->pc, wl_coll_name((wl_coll)in->coll),
                 wl_group_name((wl_group)in->group));
}

sim_rc est_replay_programs(const cfg_platform *p, const wl_programs *w, est_replay_result *res, sim_err *err)
{
    if (!p || !w || !res) return sim_fail(err, SIM_EINVAL, "replay: missing platform, programs or result");
    if (p->nstragglers > 0)
        return sim_fail(err, SIM_EINVAL,
                        "%s: .stragglers: the contention-free replay does not model stragglers (simulate with "
                        "'heptasim run -s', or remove them)", p->path[0] ? p->path : p->name);
    sim_rc rc = wl_programs_check(w, p, "replay", err);
    if (rc != SIM_OK) return rc;
    rp_sim s;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.w = w;
    s.world = w->world;
    s.running = -1;
    size_t nw = (size_t)s.world;
    s.ranks = sim_xcalloc(nw, sizeof *s.ranks);
    s.ready = sim_xcalloc(nw, sizeof *s.ready);
    s.members = sim_xcalloc(nw, sizeof *s.members);
    s.group = sim_xcalloc(nw, sizeof *s.group);
    s.index_of = sim_xcalloc(nw, sizeof *s.index_of);
    s.sn_count = sim_xcalloc((size_t)net_supernodes(p), sizeof *s.sn_count);
    s.ph = sim_xcalloc(nw * NET_MAX_PHASES, sizeof *s.ph);
    s.t0 = sim_xcalloc(nw, sizeof *s.t0);
    s.t1 = sim_xcalloc(nw, sizeof *s.t1);
    for (int i = 0; i < s.world; i++) s.index_of[i] = -1;
    for (int i = 0; i < s.world && !s.failed; i++) {
        s.ranks[i].stats.rank = i;
        s.ranks[i].prog = w->program_new(w->ctx, i);
        if (!s.ranks[i].prog) rp_fail(&s, "rank %d: the workload has no program for it", i);
    }
    for (int i = s.world - 1; i >= 0; i--) make_ready(&s, i);
    while (s.nready > 0 && !s.failed) {
        int rank = s.ready[--s.nready];
        s.ranks[rank].queued = false;
        s.running = rank;
        advance(&s, rank);
        s.running = -1;
    }

    rc = SIM_OK;
    int stuck = 0, first = -1;
    for (int i = 0; i < s.world && !s.failed; i++)
        if (s.ranks[i].block != RB_DONE) {
            if (first < 0) first = i;
            stuck++;
        }
    if (s.failed) {
        rc = sim_fail(err, SIM_EINVAL, "replay failed: %s", s.msg);
    } else if (stuck > 0) {
        char where[256];
        describe(&s, first, where, sizeof where);
        rc = sim_fail(err, SIM_EINVAL, "replay deadlocked: %d rank%s did not finish (first: %s)", stuck,
                      stuck == 1 ? "" : "s", where);
    } else {
        memset(res, 0, sizeof *res);
        int crit = 0;
        for (int i = 0; i < s.world; i++)
            if (s.ranks[i].stats.finish_s > s.ranks[crit].stats.finish_s) crit = i;
        res->step_s = s.ranks[crit].stats.finish_s;
        res->critical_rank = crit;
        res->critical = s.ranks[crit].stats;
        res->instructions = s.instructions;
    }
    sim_release(&s);
    return rc;
}

sim_rc est_replay(const cfg_platform *p, const wl_plan *plan, est_replay_result *res, sim_err *err)
{
    if (!plan) return sim_fail(err, SIM_EINVAL, "replay: no workload plan");
    wl_programs w = wl_plan_programs(plan);
    return est_replay_programs(p, &w, res, err);
}

/* }========================================================== */
