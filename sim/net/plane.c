/* plane.c - where a device sits and what each network plane offers: the
 * supernode of a device, the plane between two devices, latency, bandwidth
 * and efficiency, and the time of one point-to-point transfer. */
#include "net.h"

int net_devices_per_supernode(const cfg_platform *p)
{
    int dps = p->devices_per_supernode > 0 ? p->devices_per_supernode : p->devices;
    return dps > 0 ? dps : 1;
}

int net_supernodes(const cfg_platform *p)
{
    int dps = net_devices_per_supernode(p);
    int n = (p->devices + dps - 1) / dps;
    return n > 0 ? n : 1;
}

int net_supernode_of(const cfg_platform *p, int device)
{
    return device / net_devices_per_supernode(p);
}

net_plane net_plane_between(const cfg_platform *p, int a, int b)
{
    return net_supernode_of(p, a) == net_supernode_of(p, b) ? NET_FABRIC : NET_NIC;
}

/* The generated platform (engine/platform.c) gives npu -> fab -> npu the
 * fabric latency and npu -> nic -> ... -> spine -> ... -> nic -> npu the NIC
 * latency plus the spine's. */
double net_latency_s(const cfg_platform *p, net_plane pl)
{
    return pl == NET_FABRIC ? p->fabric_latency_s : p->nic_latency_s + p->spine_latency_s;
}

double net_bytes_per_s(const cfg_platform *p, net_plane pl)
{
    return pl == NET_FABRIC ? p->fabric_bytes_per_s : p->nic_bytes_per_s;
}

double net_efficiency(const cfg_platform *p)
{
    return p->network_efficiency > 0 ? p->network_efficiency : 1.0;
}

double net_p2p_s(const cfg_platform *p, net_plane pl, double bytes)
{
    return net_latency_s(p, pl) + bytes / (net_bytes_per_s(p, pl) * net_efficiency(p));
}
