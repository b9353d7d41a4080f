/* actors.c - the rank actors that replay programs, and the stream actors
 * that run their asynchronous collectives.
 *
 * A rank actor reads its program one instruction at a time: COMPUTE busies
 * its host (consecutive computes in one execution, see settle), a blocking
 * COLL runs inline, an asynchronous COLL goes to the FIFO of its stream
 * actor (created on first use), WAIT blocks on the stream's condition until
 * enough ops completed, SEND is an eager detached put and RECV a blocking
 * get.  Point-to-point mailboxes have the receiving
 * rank as permanent receiver, so a send starts when it is issued and a
 * receive posted later finds the data already there (or in flight).  The
 * pipeline and ring-CP neighbours' mailboxes are claimed before any program
 * starts; a mailbox of any other peer is claimed at its first receive. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>
#include <xbt/log.h>

XBT_LOG_EXTERNAL_CATEGORY(heptasim_engine);
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(heptasim_engine_actors, heptasim_engine, "heptasim rank and stream actors");

/* {========================================================== p2p */

/* Returns the mailbox of (src -> dst, group, tag) from r's cache, creating
 * it on first use; `claim` makes the calling actor its permanent receiver. */
static sg_mailbox_t p2p_mailbox(eng_rank *r, int src, int dst, int g, int tag, bool claim)
{
    for (int i = 0; i < r->np2p; i++) {
        eng_p2p *e = &r->p2p[i];
        if (e->src == src && e->dst == dst && e->key == (g << 8 | tag)) return e->mb;
    }
    if (r->np2p == r->p2p_cap) {
        r->p2p_cap = r->p2p_cap ? 2 * r->p2p_cap : 8;
        r->p2p = sim_xrealloc(r->p2p, (size_t)r->p2p_cap * sizeof *r->p2p);
    }
    char name[64];
    snprintf(name, sizeof name, "p%d>%d.%d.%d", src, dst, g, tag);
    if (claim) sg_mailbox_set_receiver(name);
    eng_p2p *e = &r->p2p[r->np2p++];
    e->src = src;
    e->dst = dst;
    e->key = g << 8 | tag;
    e->mb = sg_mailbox_by_name(name);
    return e->mb;
}

/* Claims the incoming mailboxes from r's ring neighbours in group g. */
static void p2p_claim_neighbours(eng_rank *r, wl_group g)
{
    eng_sim *sim = r->sim;
    int me = -1;
    int n = sim->w->progs.group_members(sim->w->progs.ctx, r->rank, g, sim->scratch, &me);
    if (n < 2 || n > sim->world || me < 0 || me >= n) return;
    int peers[2] = {sim->scratch[(me + n - 1) % n], sim->scratch[(me + 1) % n]};
    for (int i = 0; i < 2; i++) {
        if (sim->rep && peers[i] >= 0 && peers[i] < sim->world) peers[i] = sim->rep[peers[i]];
        if (peers[i] < 0 || peers[i] >= sim->world || peers[i] == r->rank || (i == 1 && peers[1] == peers[0]))
            continue;
        p2p_mailbox(r, peers[i], r->rank, g, WL_TAG_FWD, true);
        p2p_mailbox(r, peers[i], r->rank, g, WL_TAG_BWD, true);
    }
}

/* }========================================================== */

/* {========================================================== streams */

static void stream_main(int argc, char *argv[])
{
    (void)argc;
    (void)argv;
    eng_stream *s = sg_actor_self_get_data();
    eng_rank *r = s->rank;
    sg_mutex_lock(s->mu);
    for (;;) {
        while (s->count == 0 && !s->closing) sg_cond_wait(s->cv, s->mu);
        if (s->count == 0) break;
        wl_instr in = s->q[s->head];
        sg_mutex_unlock(s->mu);

        double t0 = simgrid_get_clock();
        eng_coll_run(r, s->id, &in, NULL);
        double t1 = simgrid_get_clock();
        r->st.comm_s[wl_instr_dim(&in)] += t1 - t0;
        if (r->traced) eng_trace(r, &in, s->id, t0, t1);

        sg_mutex_lock(s->mu);
        s->head = (s->head + 1) % s->cap;
        s->count--;
        s->completed++;
        sg_cond_notify_all(s->cv);
    }
    s->exited = true;
    sg_mutex_unlock(s->mu);
}

/* Returns stream `id` of r, starting its actor on first use. */
static eng_stream *stream_get(eng_rank *r, int id)
{
    eng_stream *s = r->streams[id];
    if (s) return s;
    s = sim_xcalloc(1, sizeof *s);
    s->rank = r;
    s->id = id;
    s->mu = sg_mutex_init();
    s->cv = sg_cond_init();
    s->cap = 16;
    s->q = sim_xcalloc((size_t)s->cap, sizeof *s->q);
    r->streams[id] = s;

    char name[48];
    snprintf(name, sizeof name, "rank%d.s%d", r->rank, id);
    sg_actor_t a = sg_actor_init(name, r->host);
    sg_actor_set_data(a, s);
    sg_actor_start(a, stream_main, 0, NULL);
    return s;
}

/* Appends collective `in` to stream `id` of r; returns at once. */
static void stream_submit(eng_rank *r, int id, const wl_instr *in)
{
    eng_stream *s = stream_get(r, id);
    sg_mutex_lock(s->mu);
    if (s->count == s->cap) {
        int cap = 2 * s->cap;
        wl_instr *q = sim_xcalloc((size_t)cap, sizeof *q);
        for (int i = 0; i < s->count; i++) q[i] = s->q[(s->head + i) % s->cap];
        free(s->q);
        s->q = q;
        s->cap = cap;
        s->head = 0;
    }
    s->q[(s->head + s->count) % s->cap] = *in;
    s->count++;
    s->submitted++;
    sg_cond_notify_all(s->cv);
    sg_mutex_unlock(s->mu);
}

/* Blocks r's actor until stream `id` completed `seq` ops (all submitted ops
 * when drain); the time blocked is exposed communication of the dimension
 * of op number seq.  Returns false after recording a failure when seq ops
 * were never submitted. */
static bool stream_wait(eng_rank *r, int id, uint32_t seq, bool drain)
{
    eng_stream *s = r->streams[id];
    uint32_t submitted = s ? s->submitted : 0;
    if (drain) seq = submitted;
    if (seq == 0) return true;
    if (seq > submitted) {
        eng_fail(r->sim, "rank %d: instruction %lld waits for %u ops of stream %d, but only %u were started", r->rank,
                 r->pc, seq, id, submitted);
        return false;
    }
    if (s->completed >= seq) return true;
    const wl_instr *op = &s->q[(s->head + (int)(seq - s->completed - 1)) % s->cap];
    wl_dim dim = wl_instr_dim(op);
    double t0 = simgrid_get_clock();
    sg_mutex_lock(s->mu);
    while (s->completed < seq) sg_cond_wait(s->cv, s->mu);
    sg_mutex_unlock(s->mu);
    r->st.exposed_comm_s[dim] += simgrid_get_clock() - t0;
    return true;
}

static void stream_close(eng_stream *s)
{
    sg_mutex_lock(s->mu);
    s->closing = true;
    sg_cond_notify_all(s->cv);
    sg_mutex_unlock(s->mu);
}

static void stream_free(eng_stream *s)
{
    if (!s) return;
    sg_cond_destroy(s->cv);
    sg_mutex_destroy(s->mu);
    free(s->q);
    free(s);
}

/* }========================================================== */

/* {========================================================== rank actor */

/* The rank actor's local timeline.  A device runs one rank and nothing
 * else computes on it, so a compute of s seconds always takes s: computes,
 * and the latency tail that ends a blocking collective, only add to a debt
 * that is simulated in one activity when the rank next interacts with
 * others (collective, send, receive, wait, end of program).  Timestamps and
 * statistics are those of simulating each instruction on its own. */
static void settle(eng_rank *r)
{
    /* A sleep, not an execution: it takes the same time and costs SimGrid
     * no sharing variable (about 30 % of the run time). */
    if (r->debt_s > 0) sg_actor_sleep_for(r->debt_s);
    r->debt_s = 0;
}

/* Runs one instruction of r's program on its actor; false after a
 * recorded failure. */
static bool step(eng_rank *r, const wl_instr *in)
{
    eng_sim *sim = r->sim;
    if (in->op == WL_COMPUTE) {
        double s = in->seconds > 0 ? in->seconds / r->speed : 0.0; /* a straggler's speed < 1 */
        double t0 = simgrid_get_clock() + r->debt_s;
        r->debt_s += s;
        r->st.compute_s += s;
        if (in->phase < WL_NPHASES) r->st.compute_by_phase_s[in->phase] += s;
        if (r->traced) eng_trace(r, in, WL_S_MAIN, t0, t0 + s);
        return true;
    }
    if (in->op == WL_WAIT && (in->stream == WL_S_MAIN || in->seq == 0)) {
        double t0 = simgrid_get_clock() + r->debt_s;
        if (r->traced) eng_trace(r, in, WL_S_MAIN, t0, t0);
        return true;
    }
    settle(r);
    double t0 = simgrid_get_clock(), tail = 0.0;
    switch ((wl_op)in->op) {
    case WL_COLL:
        if (in->group >= WL_NGROUPS || in->coll > WL_ALLTOALL || in->stream >= WL_NSTREAMS) {
            eng_fail(sim, "rank %d: instruction %lld: invalid collective (group %d, kind %d, stream %d)", r->rank,
                     r->pc, in->group, in->coll, in->stream);
            return false;
        }
        if (in->stream != WL_S_MAIN) {
            stream_submit(r, in->stream, in); /* traced by the stream when done */
            return true;
        }
        eng_coll_run(r, WL_S_MAIN, in, &tail);
        r->debt_s += tail;
        break;
    case WL_SEND:
    case WL_RECV: {
        /* in a reduced run, the peer's class is played by its simulated rank */
        int peer = in->peer >= 0 && in->peer < sim->world && sim->rep ? sim->rep[in->peer] : in->peer;
        if (in->peer < 0 || in->peer >= sim->world || in->peer == r->rank || in->group >= WL_NGROUPS ||
            peer == r->rank) {
            eng_fail(sim, "rank %d: instruction %lld: invalid %s peer %d (world %d)", r->rank, r->pc,
                     in->op == WL_SEND ? "send" : "recv", in->peer, sim->world);
            return false;
        }
        if (in->op == WL_SEND) {
            sg_mailbox_t mb = p2p_mailbox(r, r->rank, peer, in->group, in->tag, false);
            /* detached from the start: a started comm cannot be detached */
            sg_comm_detach(sg_mailbox_put_init(mb, ENG_PAYLOAD, eng_wire_bytes(sim, in->bytes)), NULL);
            r->flows++;
            r->st.bytes_sent[wl_instr_dim(in)] += in->bytes > 0 ? in->bytes : 0;
        } else {
            sg_mailbox_t mb = p2p_mailbox(r, peer, r->rank, in->group, in->tag, true);
            sg_mailbox_get(mb);
        }
        break;
    }
    case WL_WAIT:
        if (in->stream >= WL_NSTREAMS) {
            eng_fail(sim, "rank %d: instruction %lld: wait on invalid stream %d", r->rank, r->pc, in->stream);
            return false;
        }
        if (!stream_wait(r, in->stream, in->seq, false)) return false;
        break;
    default:
        eng_fail(sim, "rank %d: instruction %lld: unknown op %d", r->rank, r->pc, in->op);
        return false;
    }

    double t1 = simgrid_get_clock() + tail, dt = t1 - t0;
    if (in->op == WL_COLL) {
        wl_dim dim = wl_instr_dim(in);
        r->st.exposed_comm_s[dim] += dt;
        r->st.comm_s[dim] += dt;
    } else if (in->op == WL_RECV) {
        if (in->group == WL_G_PP)
            r->st.bubble_s += dt;
        else
            r->st.exposed_comm_s[wl_instr_dim(in)] += dt;
    }
    if (r->traced) eng_trace(r, in, WL_S_MAIN, t0, t1);
    return true;
}

static void rank_main(int argc, char *argv[])
{
    (void)argc;
    (void)argv;
    eng_rank *r = sg_actor_self_get_data();
    eng_sim *sim = r->sim;
    r->started = true;
    p2p_claim_neighbours(r, WL_G_PP);
    p2p_claim_neighbours(r, WL_G_CPR);
    /* Let every rank claim its mailboxes before any rank sends. */
    sg_actor_yield();
    eng_detours_check(r);

    r->prog = sim->w->progs.program_new(sim->w->progs.ctx, r->rank);
    if (!r->prog) {
        eng_fail(sim, "rank %d: the workload has no program for it", r->rank);
        return;
    }
    while (!sim->failed && sim->w->progs.program_next(r->prog, &r->cur)) {
        r->pc++;
        r->instructions++;
        if (!step(r, &r->cur)) return;
    }
    if (sim->failed) return;
    sim->w->progs.program_free(r->prog);
    r->prog = NULL;
    settle(r);
    r->draining = true;
    for (int id = 1; id < WL_NSTREAMS; id++)
        if (r->streams[id]) stream_wait(r, id, 0, true);
    for (int id = 1; id < WL_NSTREAMS; id++)
        if (r->streams[id]) stream_close(r->streams[id]);
    r->st.finish_s = simgrid_get_clock();
    r->done = true;
}

/* Creates the actor of rank r on its host; runs when the simulation does. */
void eng_rank_start(eng_rank *r)
{
    char name[32];
    snprintf(name, sizeof name, "rank%d", r->rank);
    sg_actor_t a = sg_actor_init(name, r->host);
    sg_actor_set_data(a, r);
    sg_actor_start(a, rank_main, 0, NULL);
}

/* Frees everything r owns; r itself belongs to the eng_sim. */
void eng_rank_release(eng_rank *r)
{
    for (int id = 0; id < WL_NSTREAMS; id++) {
        stream_free(r->streams[id]);
        r->streams[id] = NULL;
    }
    for (int g = 0; g < WL_NGROUPS; g++)
        for (int id = 0; id < WL_NSTREAMS; id++) {
            eng_view_free(r->views[g][id]);
            r->views[g][id] = NULL;
        }
    free(r->p2p);
    r->p2p = NULL;
    if (r->prog) r->sim->w->progs.program_free(r->prog);
    r->prog = NULL;
}

/* }========================================================== */
