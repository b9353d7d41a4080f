/* net.h - the one network rule: where a device sits, which plane a group's
 * traffic takes, how a group is laid out in rings, which algorithm each
 * collective runs, the phases of that algorithm and their uncontended time.
 *
 * Pure: no SimGrid, no allocation, no logging; callers pass scratch.  Units
 * are in the names: seconds (_s), bytes (_bytes), bytes per second
 * (_bytes_per_s).  Devices are numbered supernode by supernode and rank i
 * runs on device i; every device passed in is in [0, p->devices).
 *
 * The engine runs the phases net gives as SimGrid flows (and so adds
 * contention); the estimator and validation add up the same phases' closed
 * forms.  On an idle network the two agree by construction.  See
 * docs/network.md. */
#ifndef HEPTASIM_NET_H
#define HEPTASIM_NET_H

#include <stdbool.h>

#include "../config/config.h"

/* Collective kinds.  ORDER WL_COLL: workload.h gives wl_coll these values. */
typedef enum net_coll { NET_ALLREDUCE = 0, NET_ALLGATHER, NET_REDUCESCATTER, NET_ALLTOALL, NET_NCOLLS } net_coll;

/* The two network planes of a device: the supernode fabric (UB, NVLink) to
 * its supernode, the RDMA NIC (through leaf and spine) to everything else. */
typedef enum net_plane { NET_FABRIC = 0, NET_NIC } net_plane;

/* {======================================================= devices, planes */

/* Devices per supernode: the platform's, or all devices when it gives none
 * (the one place for that rule). */
int net_devices_per_supernode(const cfg_platform *p);
/* Supernodes of the platform: ceil(devices / devices per supernode). */
int net_supernodes(const cfg_platform *p);
/* The supernode of a device, in [0, net_supernodes). */
int net_supernode_of(const cfg_platform *p, int device);
/* The plane traffic from device a to device b takes. */
net_plane net_plane_between(const cfg_platform *p, int a, int b);

/* Route latency of one transfer on a plane, seconds: fabric_latency_s, or
 * nic_latency_s + spine_latency_s (the NIC route that leaves no tier; see
 * net_route_latency_s for a given pair). */
double net_latency_s(const cfg_platform *p, net_plane pl);

/* Tiers of switches above the supernodes (cfg_tier, docs/network.md): a
 * device sits in one domain of each tier; a route between two supernodes
 * leaves the domains of every tier below the first whose domain holds
 * both, and pays those tiers' latencies. */
int net_tiers(const cfg_platform *p);
/* True when the first tier is rail-optimised (and nodes have more than one
 * device): the devices of one node reach different switches. */
bool net_rails(const cfg_platform *p);
/* Domains of tier t: ceil(devices / tier devices), times node.devices
 * with rails (one switch per node-local index). */
int net_tier_domains(const cfg_platform *p, int t);
/* The domain of tier t holding device d: d / tier devices, or with rails
 * (d / tier devices) * node.devices + d's node-local index. */
int net_tier_domain_of(const cfg_platform *p, int t, int device);
/* Devices in domain dom of tier t. */
int net_tier_domain_devices(const cfg_platform *p, int t, int dom);
/* Tiers the route from device a to device b leaves: 0 when one domain of
 * the first tier holds both (always without tiers), net_tiers when only
 * the core joins them. */
int net_route_tiers(const cfg_platform *p, int a, int b);
/* Latency of the route from a to b: fabric_latency_s inside a supernode,
 * else nic_latency_s + spine_latency_s + the latency_s of each tier it
 * leaves.  These are the latencies of the engine's routes. */
double net_route_latency_s(const cfg_platform *p, int a, int b);
/* Per-device bandwidth of a plane, each direction, before efficiency. */
double net_bytes_per_s(const cfg_platform *p, net_plane pl);
/* Fraction of link bandwidth transfers reach: network_efficiency (1 when
 * the platform gives none).  A transfer of b bytes takes b / efficiency on
 * the wire. */
double net_efficiency(const cfg_platform *p);
/* Uncontended point-to-point transfer of `bytes` on a plane: latency +
 * bytes / (bandwidth * efficiency). */
double net_p2p_s(const cfg_platform *p, net_plane pl, double bytes);
/* The same from device a to device b: net_route_latency_s + bytes /
 * (bandwidth of their plane * efficiency). */
double net_p2p_between_s(const cfg_platform *p, int a, int b, double bytes);

/* }======================================================= */

/* {======================================================= layouts */

/* The rings a group may run on.  ORDER NET_RING. */
typedef enum net_ring_kind {
    NET_RING_FLAT = 0,  /* all members, in members order */
    NET_RING_INTRA,     /* hierarchical: the members in my supernode */
    NET_RING_INTER,     /* hierarchical: the members with my local index, one per supernode */
    NET_NRINGS
} net_ring_kind;

/* One ring seen from one member. */
typedef struct net_ring {
    int n;              /* members on the ring (1: nothing to send) */
    int me;             /* my position on it */
    int succ, pred;     /* devices of my successor and predecessor */
    net_plane plane;    /* the plane its slowest edge takes */
    double lat_s;       /* latency of one step: fabric_latency_s on the fabric, else the largest
                         * net_route_latency_s of its edges between supernodes */
} net_ring;

/* A group laid out over the supernodes, seen from member `me`. */
typedef struct net_layout {
    int n, me;          /* members, my index among them */
    bool spans;         /* members in more than one supernode */
    bool hier;          /* spans, with the same count L >= 2 in every supernode it touches */
    int L;              /* the largest member count of one supernode */
    int K;              /* n / L: supernodes of a hierarchical group */
    int local;          /* members in my supernode, me included */
    double remote_lat_s; /* the largest net_route_latency_s from me to a member elsewhere (0: none) */
    net_ring ring[NET_NRINGS]; /* INTRA and INTER: n = 1 unless hier */
} net_layout;

/* Lays out group members[0..n) (devices, n >= 1) for member me.  The flat
 * ring follows the members order; a hierarchical group also gets an intra
 * ring (my supernode's members in members order) and an inter ring (the
 * members with my local index, in members order).  sn_count: scratch of
 * net_supernodes(p) ints, zero on entry and on return. */
void net_layout_of(const cfg_platform *p, const int *members, int n, int me, int *sn_count, net_layout *out);
/* The layouts of every member of the group at once, out[i] for member i
 * (what net_layout_of gives each), in O(n) rather than O(n^2).
 * scratch: 4n ints; sn_count as above. */
void net_layout_all(const cfg_platform *p, const int *members, int n, int *sn_count, int *scratch, net_layout *out);

/* }======================================================= */

/* {======================================================= algorithms */

/* Collective algorithms, one row each in coll.c.  ORDER NET_ALGO. */
typedef enum net_algo {
    NET_ALGO_PAIRWISE = 0, /* all-to-all: n-1 pairwise exchanges */
    NET_ALGO_HIER,         /* AR: intra RS, inter AR of S/L, intra AG; AG: inter, intra; RS: intra, inter */
    NET_ALGO_RING,         /* one ring over all members */
    NET_NALGOS
} net_algo;


/* One phase of an algorithm, seen from one member: a ring running `op`
 * (all-reduce, all-gather, reduce-scatter), or, for op NET_ALLTOALL, a
 * pairwise exchange with every other member.  Its uncontended time is
 * steps * (lat_s + collective_step_s) + sent_bytes / (bytes_per_s * efficiency). */
typedef struct net_phase {
    net_coll op;
    net_ring_kind ring;   /* the layout's ring it runs on (pairwise: FLAT, the whole group) */
    int n;                /* members taking part */
    double bytes;         /* buffer per rank: AR the buffer, AG the gathered output, RS the input, A2A the send buffer */
    int steps;            /* algorithm steps: 2(n-1) for AR, n-1 otherwise */
    double chunk_bytes;   /* one step's message: bytes / n */
    double sent_bytes;    /* bytes one member sends: 2(n-1)/n bytes for AR, (n-1)/n bytes otherwise */
    double lat_s;         /* latency of one step: the route latency of the plane it crosses */
    double bytes_per_s;   /* the rate its traffic moves at, before efficiency */
    double local_bytes;   /* pairwise: sent to the other members of my supernode (fabric) */
    double remote_bytes;  /* pairwise: sent to members elsewhere (NIC) */
} net_phase;

/* The algorithm collective `kind` runs on layout lo. */
net_algo net_algo_of(const net_layout *lo, net_coll kind);
/* Short name of an algorithm ("ring", "hier", "pairwise"). */
const char *net_algo_name(net_algo a);

/* The phases collective `kind` of `bytes` per rank runs on layout lo, in
 * order, into out; returns their count (0: nothing to do, for a group of
 * one or no bytes). */
int net_coll_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes,
                    net_phase out[NET_MAX_PHASES]);

/* Uncontended seconds of one phase (0 for n <= 1; +inf when it has traffic
 * and no bandwidth). */
double net_phase_s(const cfg_platform *p, const net_phase *ph);
/* The part of net_phase_s one flow carrying the whole phase's traffic does
 * not pay itself (it pays one route latency and the bytes): the other
 * steps' latency and every step's collective_step_s,
 * (steps - 1) * lat_s + steps * collective_step_s. */
double net_phase_tail_s(const cfg_platform *p, const net_phase *ph);
/* Uncontended seconds of collective `kind` on lo: the sum of its phases. */
double net_coll_s(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes);

/* Step `step` (1-based) of collective `kind` run as a ring exchange, one
 * ring step at a time beside the computation it feeds (overlap_tp_comm;
 * step 0: the whole collective).  An all-gather or reduce-scatter that
 * runs as one ring phase has its n - 1 steps: each is that phase with one
 * step, sending one chunk (bytes / n), and a step beyond them has no
 * phase.  Any other collective (an all-reduce, or a group spread over
 * supernodes whose algorithm has several phases) has no ring to exchange
 * on: step 1 is all of it, later steps nothing.  Returns the phases'
 * count, as net_coll_phases. */
int net_coll_step_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, int step,
                         net_phase out[NET_MAX_PHASES]);
/* Uncontended seconds of that step: the sum of its phases. */
double net_coll_step_s(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, int step);

/* The single-ring rule every phase is built from (Thakur, Rabenseifner,
 * Gropp, IJHPCA 2005): steps and bytes one member sends for n members
 * (0 when n <= 1), and the phase of `kind` over n members whose every edge
 * has lat_s and bytes_per_s (ring NET_RING_FLAT, no local/remote split). */
int net_coll_steps(net_coll kind, int n);
double net_coll_sent_bytes(net_coll kind, int n, double bytes);
net_phase net_ring_phase(net_coll kind, int n, double bytes, double lat_s, double bytes_per_s);

/* }======================================================= */

#endif
