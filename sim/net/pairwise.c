/* pairwise.c - the pairwise all-to-all: n-1 exchanges of bytes/n with every
 * other member, all in flight at once.  Chunks to members of my supernode
 * share my fabric link, the others my NIC: the phase takes as long as the
 * busier of the two, at the latency of my slowest route to a member
 * elsewhere per step once it leaves the supernode. */
#include <math.h>

#include "internal.h"

bool net_pairwise_runs(const net_layout *lo, net_coll kind)
{
    (void)lo;
    return kind == NET_ALLTOALL;
}

int net_pairwise_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, net_phase *out)
{
    int n = lo->n;
    double fab = net_bytes_per_s(p, NET_FABRIC), nic = net_bytes_per_s(p, NET_NIC);
    double chunk = bytes / n;
    double local = (lo->local - 1) * chunk, remote = (n - lo->local) * chunk;
    if (!lo->spans) {
        out[0] = net_ring_phase(kind, n, bytes, net_latency_s(p, NET_FABRIC), fab);
    } else {
        double wire = fmax(local / fab, remote / nic);
        double sent = (n - 1) * chunk;
        out[0] = net_ring_phase(kind, n, bytes, lo->remote_lat_s, wire > 0 ? sent / wire : nic);
    }
    out[0].local_bytes = local;
    out[0].remote_bytes = remote;
    return 1;
}
