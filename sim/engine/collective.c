/* collective.c - collective algorithms as SimGrid flows, seen from one rank.
 *
 * Every member of a group runs the same sequence of collectives on that
 * group and stream, so comms are matched in FIFO order on mailboxes named
 * after (group kind, stream, src, dst); each mailbox is looked up once and
 * cached in the rank's view of the group.
 *
 * What runs is net's: the group's layout (net_layout_of: flat ring, or
 * intra and inter rings of a group spread evenly over supernodes) and the
 * phases of its algorithm (net_coll_phases: ring, hierarchical or pairwise).
 * This file plays each phase as flows.  Flow mode (default): a ring phase
 * is one flow to the ring successor with the whole traffic of the phase
 * (steps messages of S/n) and one from the predecessor; a pairwise phase is
 * n-1 flows of S/n.  A flow pays one route latency; the phase's other steps
 * are added after it (net_phase_tail_s).
 * Step mode: every step is its own pair of comms of S/n, followed by
 * collective_step_s.  Uncontended, both take net_phase_s.
 *
 * Reduced runs (symmetry.c) play some collectives one-sided: a rank sends
 * its flows and receives none.  A group inside the rank's lockstep TP group
 * sends every flow to the rank's mirror, whose flows load the same links as
 * the members' flows of the full run; DP and EDP, when only some replicas
 * are simulated, send each ring flow to the successor's real device. */
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/mutex.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/log.h>

XBT_LOG_EXTERNAL_CATEGORY(heptasim_engine);
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(heptasim_engine_coll, heptasim_engine, "heptasim collectives");

char eng_payload;

const sim_enum_name eng_comm_mode_names[] = {{ENG_FLOWS, "flows"}, {ENG_STEPS, "steps"}};
_Static_assert(sizeof eng_comm_mode_names / sizeof eng_comm_mode_names[0] == ENG_NCOMM_MODES, "a name per mode");

/* Returns the mailbox named by fmt (SimGrid owns it). Formats a string:
 * call when building caches, not per message. */
sg_mailbox_t eng_mailbox(const char *fmt, ...)
{
    char name[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    return sg_mailbox_by_name(name);
}

/* Returns the simulated size of a transfer of `bytes` payload bytes:
 * bytes / network efficiency, rounded, at least 0.  SimGrid takes a
 * size as a long: a larger one fails the run (never a silent cap; the
 * platform's ranges keep transfers up to the largest HBM below it). */
long eng_wire_bytes(eng_sim *sim, double bytes)
{
    double b = bytes / sim->eff;
    if (!(b > 0)) return 0;
    if (!(b < 9.0e18)) {
        eng_fail(sim,
                 "a transfer of %.3g bytes at network efficiency %g is %.3g bytes on the wire, more than SimGrid "
                 "represents (9e18; raise platform.efficiency.network or shrink the step)",
                 bytes, sim->eff, b);
        return 0;
    }
    return (long)llround(b);
}

/* The simulated rank standing for rank x (x itself in a full run). */
static int stand_in(const eng_sim *sim, int x)
{
    return sim->rep ? sim->rep[x] : x;
}

/* Where r's flows to member y go when y's class is r's: the mirror behind
 * r's link of the plane the full step's flow takes, at its route's class;
 * NULL after recording a failure when the platform has no such mirror. */
static sg_mailbox_t mirror_of(eng_rank *r, int y, sg_host_t *host)
{
    int c = eng_route_class(r->sim->p, r->rank, y);
    sg_mailbox_t mb = c == 0 ? r->mirror : r->nmirror[c];
    if (host) *host = c == 0 ? r->mirror_host : r->nmirror_host[c];
    if (!mb) eng_fail(r->sim, "rank %d: no mirror of route class %d for its flow to rank %d", r->rank, c, y);
    return mb;
}

/* Ring k of v: my flow goes to my successor's simulated rank, or to my
 * mirror when that is me (the successor is in my class); I receive from
 * my predecessor's simulated rank unless that is me.  In a full run these
 * are the successor and the predecessor. */
static void ring_mailboxes(eng_rank *r, eng_view *v, net_ring_kind k)
{
    const net_ring *nr = &v->lo.ring[k];
    if (nr->n <= 1) return;
    int rank = r->rank, succ = stand_in(r->sim, nr->succ), pred = stand_in(r->sim, nr->pred);
    if (succ == rank)
        mirror_of(r, nr->succ, &v->ring[k].to);
    else
        v->ring[k].out = eng_mailbox("c%d.%d:%d>%d", (int)v->g, v->stream, rank, succ);
    if (pred != rank) v->ring[k].in = eng_mailbox("c%d.%d:%d>%d", (int)v->g, v->stream, pred, rank);
}

/* Rings of a reduced view: my flow goes to my successor's device, and the
 * flow I receive comes from my predecessor's device; when the predecessor
 * is simulated, it sends that flow itself. */
static void ring_target(const eng_sim *sim, eng_view *v, net_ring_kind k)
{
    const net_ring *nr = &v->lo.ring[k];
    if (nr->n <= 1) return;
    v->ring[k].to = sim->hosts[nr->succ];
    v->ring[k].from = sim->rep[nr->pred] == nr->pred ? NULL : sim->hosts[nr->pred];
}

/* The actor of a reduced view that plays the incoming flows: waits for a
 * request, sends it from the predecessor's device, reports it done. */
static void inflow_main(int argc, char *argv[])
{
    (void)argc;
    (void)argv;
    eng_view *v = sg_actor_self_get_data();
    sg_actor_daemonize(sg_actor_self());
    sg_mutex_lock(v->mu);
    for (;;) {
        while (!v->inflow_ring) sg_cond_wait(v->cv, v->mu);
        const eng_ring *rg = v->inflow_ring;
        sg_mutex_unlock(v->mu);
        sg_host_sendto(rg->from, v->me_host, v->inflow_wire);
        sg_mutex_lock(v->mu);
        v->inflow_ring = NULL;
        sg_cond_notify_all(v->cv);
    }
}

/* Asks v's inflow actor to play ring rg's incoming flow of `wire` bytes. */
static void inflow_post(eng_view *v, const eng_ring *rg, double wire)
{
    sg_mutex_lock(v->mu);
    v->inflow_ring = rg;
    v->inflow_wire = wire;
    sg_cond_notify_all(v->cv);
    sg_mutex_unlock(v->mu);
}

static void inflow_wait(eng_view *v)
{
    sg_mutex_lock(v->mu);
    while (v->inflow_ring) sg_cond_wait(v->cv, v->mu);
    sg_mutex_unlock(v->mu);
}

/* Starts v's inflow actor when one of its rings has an unsimulated
 * predecessor. */
static void inflow_start(eng_rank *r, eng_view *v)
{
    bool any = false;
    for (int k = 0; k < NET_NRINGS; k++) any = any || v->ring[k].from;
    if (!any) return;
    v->mu = sg_mutex_init();
    v->cv = sg_cond_init();
    v->me_host = r->host;
    char name[48];
    snprintf(name, sizeof name, "rank%d.in%d.%d", r->rank, (int)v->g, v->stream);
    sg_actor_t a = sg_actor_init(name, r->host);
    sg_actor_set_data(a, v);
    sg_actor_start(a, inflow_main, 0, NULL);
}

/* Fetches the members of (r, g) into sim->scratch; returns the size, or 0
 * after recording a failure when the workload's answer is unusable. */
static int fetch_members(eng_rank *r, wl_group g, int *me)
{
    eng_sim *sim = r->sim;
    int n = sim->w->progs.group_members(sim->w->progs.ctx, r->rank, g, sim->scratch, me);
    if (n < 1 || n > sim->world || *me < 0 || *me >= n || sim->scratch[*me] != r->rank) {
        eng_fail(sim, "rank %d: group %s: invalid members (size %d, index %d)", r->rank, wl_group_name(g), n, *me);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (sim->scratch[i] < 0 || sim->scratch[i] >= sim->world) {
            eng_fail(sim, "rank %d: group %s: member %d is rank %d, outside [0, %d)", r->rank, wl_group_name(g), i,
                     sim->scratch[i], sim->world);
            return 0;
        }
    return n;
}

/* Returns the view of (r, g, stream), built on first use (the caller does
 * not free it: eng_rank_release does), or NULL after a recorded failure. */
eng_view *eng_view_get(eng_rank *r, wl_group g, int stream)
{
    eng_view *v = r->views[g][stream];
    if (v) return v;
    eng_sim *sim = r->sim;
    int me = 0, n = fetch_members(r, g, &me);
    if (n == 0) return NULL;

    v = sim_xcalloc(1, sizeof *v);
    v->g = g;
    v->stream = stream;
    const int *m = sim->scratch;
    net_layout_of(sim->p, m, n, me, sim->sn_count, &v->lo);
    v->reduced = eng_group_reduced(sim, g);
    if (v->reduced) {
        /* most members are not simulated: my flows go to the real devices */
        for (int k = 0; k < NET_NRINGS; k++) ring_target(sim, v, (net_ring_kind)k);
        inflow_start(r, v);
    } else if (v->lo.hier) {
        ring_mailboxes(r, v, NET_RING_INTRA);
        ring_mailboxes(r, v, NET_RING_INTER);
    } else {
        ring_mailboxes(r, v, NET_RING_FLAT);
    }
    v->comm_cap = 2;
    v->comms = sim_xcalloc(2, sizeof *v->comms);
    v->bufs = sim_xcalloc(2, sizeof *v->bufs);
    r->views[g][stream] = v;
    return v;
}

void eng_view_free(eng_view *v)
{
    if (!v) return;
    for (int i = v->waited; i < v->npending; i++) sg_comm_unref(v->comms[i]);
    free(v->members);
    free(v->a2a_out);
    free(v->a2a_in);
    free(v->comms);
    free(v->bufs);
    if (v->cv) sg_cond_destroy(v->cv);
    if (v->mu) sg_mutex_destroy(v->mu);
    free(v);
}

/* Makes room for cap in-flight comms in v. */
static void comms_reserve(eng_view *v, int cap)
{
    if (v->comm_cap >= cap) return;
    free(v->comms);
    free(v->bufs);
    v->comm_cap = cap;
    v->comms = sim_xcalloc((size_t)cap, sizeof *v->comms);
    v->bufs = sim_xcalloc((size_t)cap, sizeof *v->bufs);
}

/* Builds the all-to-all mailboxes of v on first use: to each member's
 * simulated rank, or to my mirror of the plane when that is me; from each
 * member's simulated rank unless that is me (NULL).  False on failure. */
static bool a2a_prepare(eng_rank *r, eng_view *v)
{
    if (v->members) return true;
    int me = 0, n = fetch_members(r, v->g, &me);
    if (n == 0) return false;
    if (n != v->lo.n || me != v->lo.me) {
        eng_fail(r->sim, "rank %d: group %s: members changed during the run", r->rank, wl_group_name(v->g));
        return false;
    }
    v->members = sim_xcalloc((size_t)n, sizeof *v->members);
    v->a2a_out = sim_xcalloc((size_t)n, sizeof *v->a2a_out);
    v->a2a_in = sim_xcalloc((size_t)n, sizeof *v->a2a_in);
    /* Copy the members out of the shared scratch before creating mailboxes:
     * creating one is a simcall, which lets other actors run and reuse it. */
    for (int i = 0; i < n; i++) v->members[i] = r->sim->scratch[i];
    for (int i = 0; i < n; i++) {
        if (i == me) continue;
        int y = stand_in(r->sim, v->members[i]);
        if (y == r->rank) {
            v->a2a_out[i] = mirror_of(r, v->members[i], NULL);
            if (!v->a2a_out[i]) return false;
            continue;
        }
        v->a2a_out[i] = eng_mailbox("c%d.%d:%d>%d", (int)v->g, v->stream, r->rank, y);
        v->a2a_in[i] = eng_mailbox("c%d.%d:%d>%d", (int)v->g, v->stream, y, r->rank);
    }
    comms_reserve(v, 2 * n);
    return true;
}

/* Waits for the n comms just posted in v->comms.  sg_comm_wait takes over
 * the reference of the comm it waits for; the ones not yet waited for stay
 * counted in v so that a killed actor's comms can be released. */
static void wait_all(eng_view *v, int n)
{
    v->npending = n;
    for (int i = 0; i < n; i++) {
        v->waited = i + 1;
        sg_comm_wait(v->comms[i]);
    }
    v->npending = v->waited = 0;
}

static void pause_s(double s)
{
    if (s > 0) sg_actor_sleep_for(s);
}

/* Ends a phase with its latency tail: slept now, or added to *tail when
 * the caller takes it over (the last phase of a blocking collective). */
static void phase_tail(double s, double *tail)
{
    if (tail)
        *tail += s;
    else
        pause_s(s);
}

/* One exchange on a ring: send `bytes` to the successor, receive from the
 * predecessor, wait for both. */
static void ring_exchange(eng_rank *r, eng_view *v, const eng_ring *rg, double bytes)
{
    long wire = eng_wire_bytes(r->sim, bytes);
    r->flows++;
    if (rg->to && !rg->in) { /* one-sided: my flow; my predecessor's is played by the inflow actor, or stood for */
        if (rg->from) inflow_post(v, rg, (double)wire);
        sg_host_sendto(r->host, rg->to, (double)wire);
        if (rg->from) {
            inflow_wait(v);
            r->flows++;
        }
        return;
    }
    int c = 0;
    if (rg->in) v->comms[c++] = sg_mailbox_get_async(rg->in, &v->bufs[0]);
    if (rg->to)
        sg_host_sendto(r->host, rg->to, (double)wire);
    else
        v->comms[c++] = sg_mailbox_put_async(rg->out, ENG_PAYLOAD, wire);
    wait_all(v, c);
}

/* One pairwise all-to-all edge: post the send to member `to` and the
 * receive from member `from` at v->comms[c]; returns the comms posted. */
static int a2a_post(eng_rank *r, eng_view *v, int c, int to, int from, long wire)
{
    (void)r;
    v->comms[c] = sg_mailbox_put_async(v->a2a_out[to], ENG_PAYLOAD, wire);
    if (!v->a2a_in[from]) return 1; /* from my class: its flow is my mirror's */
    v->comms[c + 1] = sg_mailbox_get_async(v->a2a_in[from], &v->bufs[c]);
    return 2;
}

/* Ring phase ph on ring rg of v.  Returns the bytes this rank sent. */
static double ring_phase(eng_rank *r, eng_view *v, const eng_ring *rg, const net_phase *ph, double *tail)
{
    if (ph->n <= 1) return 0.0;
    int steps = ph->steps;
    double chunk = ph->chunk_bytes;
    double step_s = r->sim->p->collective_step_s;
    if (r->sim->opt.comm_mode == ENG_STEPS) {
        for (int s = 0; s < steps; s++) {
            ring_exchange(r, v, rg, chunk);
            if (s < steps - 1)
                pause_s(step_s);
            else
                phase_tail(step_s, tail);
        }
    } else {
        ring_exchange(r, v, rg, steps * chunk);
        phase_tail(net_phase_tail_s(r->sim->p, ph), tail);
    }
    return steps * chunk;
}

/* Pairwise all-to-all phase ph (chunk_bytes to each other member).
 * Returns the bytes this rank sent. */
static double all_to_all(eng_rank *r, eng_view *v, const net_phase *ph, double *tail)
{
    int n = v->lo.n, me = v->lo.me;
    if (v->reduced) {
        eng_fail(r->sim, "rank %d: all-to-all on %s: not possible with one data-parallel replica simulated", r->rank,
                 wl_group_name(v->g));
        return 0.0;
    }
    if (n <= 1 || !a2a_prepare(r, v)) return 0.0;
    double chunk = ph->chunk_bytes;
    long wire = eng_wire_bytes(r->sim, chunk);
    double step_s = r->sim->p->collective_step_s;
    int steps = ph->steps;
    if (r->sim->opt.comm_mode == ENG_STEPS) {
        for (int s = 1; s < n; s++) {
            int posted = a2a_post(r, v, 0, (me + s) % n, (me + n - s) % n, wire);
            r->flows++;
            wait_all(v, posted);
            if (s < n - 1)
                pause_s(step_s);
            else
                phase_tail(step_s, tail);
        }
    } else {
        int c = 0;
        for (int s = 1; s < n; s++) c += a2a_post(r, v, c, (me + s) % n, (me + n - s) % n, wire);
        r->flows += n - 1;
        wait_all(v, c);
        phase_tail(net_phase_tail_s(r->sim->p, ph), tail);
    }
    return steps * chunk;
}

/* Runs collective `in` of rank r on `stream` until its flows completed for
 * r.  The latency of the algorithm's last steps is slept when tail is NULL;
 * otherwise it is returned in *tail, not yet simulated, so that the rank
 * actor can fold it into its next local activity. */
void eng_coll_run(eng_rank *r, int stream, const wl_instr *in, double *tail)
{
    if (tail) *tail = 0.0;
    eng_view *v = eng_view_get(r, (wl_group)in->group, stream);
    if (!v || v->lo.n <= 1) return;
    net_coll k = (net_coll)in->coll;
    net_phase ph[NET_MAX_PHASES];
    int nph = net_coll_step_phases(r->sim->p, &v->lo, k, in->bytes, (int)in->seq, ph);
    double sent = 0.0;
    for (int i = 0; i < nph; i++) {
        double *t = i == nph - 1 ? tail : NULL; /* the last phase's latency may be taken over */
        if (ph[i].op == NET_ALLTOALL)
            sent += all_to_all(r, v, &ph[i], t);
        else
            sent += ring_phase(r, v, &v->ring[ph[i].ring], &ph[i], t);
    }
    r->st.bytes_sent[wl_instr_dim(in)] += sent;
    XBT_DEBUG("rank %d: %s on %s (n=%d, %s) of %g bytes done", r->rank, wl_coll_name((wl_coll)k), wl_group_name(v->g),
              v->lo.n, net_algo_name(net_algo_of(&v->lo, k)), in->bytes);
}
