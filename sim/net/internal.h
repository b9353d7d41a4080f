/* internal.h - the collective algorithms of net, one file each (ring.c,
 * hier.c, pairwise.c), for the table in coll.c. */
#ifndef HEPTASIM_NET_INTERNAL_H
#define HEPTASIM_NET_INTERNAL_H

#include "net.h"

/* A row of the algorithm table: whether the algorithm runs collective
 * `kind` on a layout, and its phases there (into out, at most
 * NET_MAX_PHASES; returns their count).  Phases are only asked for a group
 * of two or more members and bytes > 0. */
typedef struct net_algorithm {
    const char *name;
    bool (*runs)(const net_layout *lo, net_coll kind);
    int (*phases)(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out);
} net_algorithm;

bool net_pairwise_runs(const net_layout *lo, net_coll kind);
int net_pairwise_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out);

bool net_hier_runs(const net_layout *lo, net_coll kind);
int net_hier_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out);

bool net_ring_runs(const net_layout *lo, net_coll kind);
int net_ring_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out);

/* The phase of `kind` over ring rk of lo, on that ring's plane. */
net_phase net_ring_on(const cfg_platform *p, const net_layout *lo, net_ring_kind rk, net_coll kind, double bytes);

#endif
