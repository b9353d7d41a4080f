/* ring.c - the ring algorithm: one ring over all members in members order
 * (AR: reduce-scatter then all-gather round the ring, 2(n-1) steps; AG and
 * RS: n-1 steps), and the single-ring rule every phase is built from. */
#include "internal.h"

int net_coll_steps(net_coll kind, int n)
{
    if (n <= 1) return 0;
    return kind == NET_ALLREDUCE ? 2 * (n - 1) : n - 1;
}

double net_coll_sent_bytes(net_coll kind, int n, double bytes)
{
    if (n <= 1) return 0.0;
    double share = (double)(n - 1) / (double)n * bytes;
    return kind == NET_ALLREDUCE ? 2.0 * share : share;
}

net_phase net_ring_phase(net_coll kind, int n, double bytes, double lat_s, double bytes_per_s)
{
    net_phase ph = {0};
    ph.op = kind;
    ph.ring = NET_RING_FLAT;
    ph.n = n;
    ph.bytes = bytes;
    ph.steps = net_coll_steps(kind, n);
    ph.chunk_bytes = n > 1 ? bytes / n : 0.0;
    ph.sent_bytes = net_coll_sent_bytes(kind, n, bytes);
    ph.lat_s = lat_s;
    ph.bytes_per_s = bytes_per_s;
    return ph;
}

net_phase net_ring_on(const cfg_platform *p, const net_layout *lo, net_ring_kind rk, net_coll kind, double bytes)
{
    const net_ring *rg = &lo->ring[rk];
    net_phase ph = net_ring_phase(kind, rg->n, bytes, rg->lat_s, net_bytes_per_s(p, rg->plane));
    ph.ring = rk;
    return ph;
}

bool net_ring_runs(const net_layout *lo, net_coll kind)
{
    (void)lo;
    return kind != NET_ALLTOALL;
}

/* A flat ring that spans supernodes runs at the pace of its NIC edges. */
int net_ring_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out)
{
    out[0] = net_ring_on(p, lo, NET_RING_FLAT, kind, bytes);
    return 1;
}
