/* hier.c - the hierarchical ring of a group spread evenly over supernodes
 * (L >= 2 members in each of K supernodes): the bulk of the traffic stays
 * on the fabric, the NICs carry a 1/L shard.
 *   AR = intra RS of S, inter AR of S/L, intra AG of S
 *   AG = inter AG of S/L, intra AG of S
 *   RS = intra RS of S, inter RS of S/L
 * Each member sends less over its NIC than in a flat ring, in fewer steps. */
#include "internal.h"

bool net_hier_runs(const net_layout *lo, net_coll kind)
{
    return lo->hier && kind != NET_ALLTOALL;
}

int net_hier_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out)
{
    double shard = bytes / lo->ring[NET_RING_INTRA].n;
    switch (kind) {
    case NET_ALLREDUCE:
        out[0] = net_ring_on(p, lo, NET_RING_INTRA, NET_REDUCESCATTER, bytes);
        out[1] = net_ring_on(p, lo, NET_RING_INTER, NET_ALLREDUCE, shard);
        out[2] = net_ring_on(p, lo, NET_RING_INTRA, NET_ALLGATHER, bytes);
        return 3;
    case NET_ALLGATHER:
        out[0] = net_ring_on(p, lo, NET_RING_INTER, NET_ALLGATHER, shard);
        out[1] = net_ring_on(p, lo, NET_RING_INTRA, NET_ALLGATHER, bytes);
        return 2;
    case NET_REDUCESCATTER:
        out[0] = net_ring_on(p, lo, NET_RING_INTRA, NET_REDUCESCATTER, bytes);
        out[1] = net_ring_on(p, lo, NET_RING_INTER, NET_REDUCESCATTER, shard);
        return 2;
    default: return 0;
    }
}
