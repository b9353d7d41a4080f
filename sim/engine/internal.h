/* internal.h - the engine's private state, shared by its files: platform.c
 * (XML generation), collective.c (collective algorithms as flows), actors.c
 * (rank and stream actors), symmetry.c (which ranks get an actor),
 * progress.c (reports of how far a replay has come),
 * footprint.c (what a replay costs, and the refusal of one too large),
 * log.c (the log categories, eng_fail) and run.c (SimGrid set-up, the
 * replay's checks, results).
 *
 * Everything an actor needs lives in one eng_sim owned by eng_run_workload,
 * not on actor stacks: SimGrid kills blocked actors when the simulation
 * deadlocks, and whatever they owned must still be freed afterwards. */
#ifndef HEPTASIM_ENGINE_INTERNAL_H
#define HEPTASIM_ENGINE_INTERNAL_H

#include <stdint.h>

#include <simgrid/forward.h>

#include "../net/net.h"
#include "engine.h"

/* Route classes (eng_route_class): 0 the fabric, 1 + k a NIC route that
 * leaves k tiers that matter. */
#define ENG_ROUTE_CLASSES (CFG_MAX_TIERS + 2)

/* The SimGrid side of one ring of a view; the ring itself (size, position,
 * successor, predecessor, plane) is in the view's net_layout. */
typedef struct eng_ring {
    sg_host_t to;       /* where my flow goes when not to a mailbox: my mirror, or in a reduced view the successor's device */
    sg_host_t from;     /* reduced views: the predecessor's device when it is not simulated */
    sg_mailbox_t out;   /* me -> succ */
    sg_mailbox_t in;    /* pred -> me */
} eng_ring;

/* A rank's view of one of its groups, for one stream: the group's layout
 * from net, the rings' mailboxes or targets.  Built on first use. */
typedef struct eng_view {
    wl_group g;
    int stream;
    net_layout lo;      /* members, supernodes, flat/intra/inter rings (net_layout_of) */
    bool reduced;       /* DP or EDP of a replica-reduced run: flows to the real members */
    eng_ring ring[NET_NRINGS]; /* indexed by net_ring_kind */
    int *members;       /* all-to-all only: the members (n), built lazily */
    sg_mailbox_t *a2a_out, *a2a_in; /* all-to-all only: me -> members[i], members[i] -> me */
    sg_comm_t *comms;   /* scratch for in-flight comms (2n for all-to-all, else 2) */
    int npending;       /* comms[waited..npending) are posted and still ours: */
    int waited;         /* released by eng_view_free if the actor was killed */
    void **bufs;        /* scratch receive slots */
    int comm_cap;
    /* reduced views: an actor plays the flow of my unsimulated predecessor */
    sg_mutex_t mu;
    sg_cond_t cv;
    const eng_ring *inflow_ring; /* the ring of the requested flow, NULL when done */
    double inflow_wire;
    sg_host_t me_host;
} eng_view;

struct eng_rank;

/* An asynchronous stream of one rank: a FIFO of collectives run in order
 * by its own actor. seq numbers count submitted ops from 1. */
typedef struct eng_stream {
    struct eng_rank *rank;
    int id;
    sg_mutex_t mu;
    sg_cond_t cv;
    wl_instr *q;        /* ring buffer of pending ops, head is running */
    int head, count, cap;
    uint32_t submitted, completed;
    bool closing;       /* the rank's program ended: exit when empty */
    bool exited;
} eng_stream;

/* A mailbox of point-to-point traffic (src -> dst, group, tag). */
typedef struct eng_p2p {
    int src, dst;
    int key;            /* group << 8 | tag */
    sg_mailbox_t mb;
} eng_p2p;

typedef struct eng_rank {
    int rank;
    struct eng_sim *sim;
    sg_host_t host;
    bool traced;                        /* it, or a rank it stands for, is traced */
    const int *mates;                   /* reduced runs: the ranks it stands for (itself first) */
    int nmates;
    sg_mailbox_t mirror;                /* lockstep: the sink of its class's fabric flows, */
    sg_host_t mirror_host;              /* on this host (behind its fabric link) */
    sg_mailbox_t nmirror[ENG_ROUTE_CLASSES]; /* exact classes: the sink of its class's NIC flows of */
    sg_host_t nmirror_host[ENG_ROUTE_CLASSES]; /* each route class, on this host (behind its NIC link) */
    void *prog;                         /* the workload's program cursor */
    eng_view *views[WL_NGROUPS][WL_NSTREAMS];
    eng_stream *streams[WL_NSTREAMS];
    eng_p2p *p2p;                       /* p2p mailbox cache */
    int np2p, p2p_cap;
    eng_rank_stats st;
    long long instructions;             /* executed by this rank (streams included) */
    long long flows;                    /* comms it started */
    long long pc;                       /* instructions read from its program */
    wl_instr cur;                       /* the instruction the rank actor is on */
    double speed;                       /* its device's compute speed, a fraction of peak (stragglers) */
    double debt_s;                      /* local time not yet simulated: computes and
                                           collective latency tails (see actors.c) */
    bool started, draining, done;
} eng_rank;

/* A route of a reduced run that leaves tier domains its two devices share:
 * from the device of rank `from` up through the uplinks of its domains of
 * tiers 0..route_class-2 and down the same tier's uplink and the ones
 * below to the device of rank `to`, as the full step's flows of that class
 * do (exact classes spread over the domains of an oversubscribed tier,
 * symmetry.c). */
typedef struct eng_detour {
    int from, to, route_class;
} eng_detour;

/* What a reduced run changes on a network with tiers (eng_platform_xml_for). */
typedef struct eng_tier_reduction {
    int share[CFG_MAX_TIERS];           /* members of a class per domain: an uplink carries 1/share of its bandwidth */
    const eng_detour *detour;           /* routes between simulated ranks that leave shared domains */
    int ndetours;
} eng_tier_reduction;

typedef struct eng_sim {
    const cfg_platform *p;
    const eng_workload *w;
    eng_options opt;
    int world;
    int nsn;                            /* supernodes (net_supernodes) */
    double eff;                         /* network efficiency, in (0, 1] (net_efficiency) */
    int lockstep;                       /* ranks one actor stands for exactly (1: none) */
    unsigned lockstep_dims;             /* bits 1u << cfg_dim: the coordinates that differ inside a class */
    unsigned mirrors;                   /* ENG_MIRROR_* bits: the mirror hosts the platform needs */
    int replicas;                       /* DP replicas one actor stands for (1: none) */
    bool slowest_mate;                  /* approximate (--symmetry dp with slow devices): an actor runs
                                         * at the speed of the slowest rank it stands for */
    int *rep;                           /* reduced runs: world ints, the simulated rank of each rank */
    int *mates;                         /* reduced runs: world ints, ranks grouped by rep */
    double *up_share, *down_share;      /* replica-reduced runs: nsn bandwidth shares of the uplinks */
    eng_tier_reduction tiers;           /* exact classes on a network with tiers (share 0: lockstep) */
    eng_detour *detours;                /* the routes of tiers.detour, owned */
    eng_rank *ranks;
    sg_host_t *hosts;                   /* world hosts, by device (eng_device_hosts) */
    int *scratch;                       /* world ints: group members */
    int *sn_count;                      /* nsn ints, kept at zero between uses (net_layout_of) */
    bool failed;                        /* an invalid program was met */
    char fail_msg[SIM_ERR_LEN];
} eng_sim;

/* Mirror hosts of a reduced run (eng_platform_xml_for): behind the fabric
 * link of each simulated rank, behind its NIC link, and whether the links
 * joining group zones are left unlimited (classes spread over supernodes:
 * the simulated ranks' flows no longer share them as the full step's do,
 * and in the full step they never limit a flow).  ENG_ONLY_SIMULATED: no
 * flow touches an unsimulated rank's device (no replica reduction), whose
 * host and links are then left out of the platform. */
enum { ENG_MIRROR_FABRIC = 1u, ENG_MIRROR_OPEN_SPINE = 4u, ENG_ONLY_SIMULATED = 8u };
/* The NIC mirror of route class c (1 <= c < ENG_ROUTE_CLASSES): behind the
 * NIC link, at the latency of that class's routes. */
#define ENG_MIRROR_NIC(c) (16u << (c))
#define ENG_MIRROR_NIC_ANY (((16u << ENG_ROUTE_CLASSES) - 1u) & ~31u)

/* symmetry.c: the class of the route from device a to device b: 0 on the
 * fabric, else 1 + the tiers it leaves, up to the last that changes what
 * its flows meet (a latency, or oversubscribed uplinks).  Routes of one
 * class have one latency and cross the same kinds of limiting links. */
int eng_route_class(const cfg_platform *p, int a, int b);
/* platform.c: the name of rank's mirror host of route class c into out:
 * "<kind><rank>", or "<kind><rank>r<c>" for c > 1. */
void eng_mirror_name(char *out, size_t cap, const char *kind, int rank, int c);

/* platform.c: the hosts of devices [0, devices) of the loaded platform,
 * indexed by device (NULL for one it lacks); the caller frees the array. */
sg_host_t *eng_device_hosts(int devices);

/* platform.c: the XML of p as eng_platform_xml, for a reduced run when
 * rep is not NULL: with mirrors (ENG_MIRROR_* bits), a host "mirror<i>"
 * behind the fabric link of every simulated rank i (rep[i] == i, i <
 * world), hosts "nmirror<i>" (route class 1) and "nmirror<i>r<c>" behind its
 * NIC link; the links shared by
 * several devices get 1/stand_for of their bandwidth, or with up_share and
 * down_share (not NULL), supernode k's uplink becomes two links, one per
 * direction, with those shares of its bandwidth (see symmetry.c); with
 * tiers (not NULL) tier t's uplinks get 1/tiers->share[t] of theirs (0:
 * stand_for) and the detours are declared as routes. */
sim_rc eng_platform_xml_for(const cfg_platform *p, const int *rep, int world, unsigned mirrors, int stand_for,
                            const double *up_share, const double *down_share, const eng_tier_reduction *tiers,
                            FILE *out, sim_err *err);
/* platform.c: whether a detour of route class c from device a to device
 * b can be declared: a network with tiers and no supernode uplinks, a and
 * b in one zone of its layout, over the NIC plane, and a route of class c
 * with fewer links than their natural route (at most ENG_DETOUR_FILLERS
 * fewer, made up by free links). */
bool eng_detour_fits(const cfg_platform *p, int a, int b, int c);
#define ENG_DETOUR_FILLERS (2 * CFG_MAX_TIERS + 4)

/* run.c: the simulation's state before SimGrid: p, w, opt, sizes and
 * scratch, and which ranks get an actor (eng_symmetry_plan); ranks is left
 * NULL.  eng_sim_release frees what it holds. */
void eng_sim_init(eng_sim *sim, const cfg_platform *p, const eng_workload *w, const eng_options *opt);
void eng_sim_release(eng_sim *sim);
/* run.c: the workload of plan's programs and groups. */
void eng_plan_workload(const wl_plan *plan, eng_workload *w);

/* footprint.c: the replay footprint of sim (after eng_sim_init), and the
 * refusal of one too large for this machine (see eng_replay_check; m and
 * s may be NULL when fp has no layer steps). */
void eng_footprint_of(const eng_sim *sim, eng_footprint *out);
sim_rc eng_footprint_check(const eng_footprint *fp, const cfg_platform *p, const cfg_model *m,
                           const cfg_strategy *s, sim_err *err);

/* symmetry.c: decide which ranks get an actor: sets sim->lockstep,
 * replicas, rep and mates when opt and workload allow it (sim->world, p, w
 * set). */
void eng_symmetry_plan(eng_sim *sim);
/* symmetry.c: whether collectives of kind g are played one-sided, to the
 * members' devices, because the run simulates only some replicas. */
bool eng_group_reduced(const eng_sim *sim, wl_group g);
/* symmetry.c: gives each simulated rank the ranks it stands for (traced
 * when one of them is) and starts the mirror actors; before the ranks'
 * actors, once the platform is loaded and the ranks have their hosts. */
void eng_symmetry_start(eng_sim *sim);
/* symmetry.c: from r's actor, once the platform is sealed: records a
 * failure unless SimGrid routes each of r's detours as declared. */
void eng_detours_check(eng_rank *r);
/* symmetry.c: after the run, give every rank the statistics of the rank
 * that stood for it. */
void eng_symmetry_spread(eng_sim *sim);
/* symmetry.c: hand instruction `in` of r to the trace for r and every
 * traced rank it stands for. */
void eng_trace(eng_rank *r, const wl_instr *in, int stream, double t0, double t1);

/* progress.c: the workload w as the actors are to see it: *w, with its
 * instruction fetches reporting the replay's progress when opt asks for
 * it (opt may be NULL). */
void eng_progress_wrap(const eng_workload *w, const eng_options *opt, eng_workload *out);

/* collective.c: the view of (rank, group, stream), built on first use;
 * NULL after recording a failure in r->sim when the group is invalid. */
eng_view *eng_view_get(eng_rank *r, wl_group g, int stream);
void eng_view_free(eng_view *v);

/* collective.c: run collective `in` of rank r on `stream` (blocks the
 * calling actor until its flows are done).  tail NULL: the algorithm's
 * remaining latency is slept too; else it is returned in *tail (seconds)
 * for the caller to simulate.  Adds to bytes_sent and flow counts. */
void eng_coll_run(eng_rank *r, int stream, const wl_instr *in, double *tail);

/* collective.c: a mailbox by name, formatted (not for the hot path). */
sg_mailbox_t eng_mailbox(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* actors.c: start the actor of rank r (before simgrid_run). */
void eng_rank_start(eng_rank *r);
/* actors.c: free what a rank owns (streams, views, mailbox cache, program). */
void eng_rank_release(eng_rank *r);

/* log.c: record the first invalid-program failure (later ones are dropped). */
void eng_fail(eng_sim *sim, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The payload of every comm: the simulation moves sizes, not data, and
 * SimGrid refuses NULL payloads. Never freed, never written. */
extern char eng_payload;
#define ENG_PAYLOAD ((void *)&eng_payload)

/* Bytes on the wire of a transfer of `bytes`: the network reaches only a
 * fraction eff of the link bandwidth, so it takes as long as bytes/eff.
 * A size SimGrid cannot represent records a failure in sim (eng_fail). */
long eng_wire_bytes(eng_sim *sim, double bytes);

#endif
