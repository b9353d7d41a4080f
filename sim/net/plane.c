/* plane.c - where a device sits and what each network plane offers: the
 * supernode and the tier domains of a device, the plane and the route
 * latency between two devices, bandwidth and efficiency, and the time of
 * one point-to-point transfer. */
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

int net_tiers(const cfg_platform *p)
{
    return p->ntiers;
}

bool net_rails(const cfg_platform *p)
{
    return p->ntiers > 0 && p->tiers[0].rails && p->devices_per_node > 1;
}

/* Switches per domain of tier t: node.devices with rails, else 1. */
static int rails_of(const cfg_platform *p, int t)
{
    return t == 0 && net_rails(p) ? p->devices_per_node : 1;
}

int net_tier_domains(const cfg_platform *p, int t)
{
    int per = p->tiers[t].devices;
    return (p->devices + per - 1) / per * rails_of(p, t);
}

int net_tier_domain_of(const cfg_platform *p, int t, int device)
{
    int r = rails_of(p, t);
    return device / p->tiers[t].devices * r + device % r;
}

int net_tier_domain_devices(const cfg_platform *p, int t, int dom)
{
    int r = rails_of(p, t), per = p->tiers[t].devices, first = dom / r * per;
    int n = p->devices - first < per ? p->devices - first : per; /* devices of the (last, partial) block */
    int k = dom % r;
    return n > k ? (n - k + r - 1) / r : 0;
}

int net_route_tiers(const cfg_platform *p, int a, int b)
{
    int t = 0;
    while (t < p->ntiers && net_tier_domain_of(p, t, a) != net_tier_domain_of(p, t, b)) t++;
    return t;
}

double net_route_latency_s(const cfg_platform *p, int a, int b)
{
    if (net_plane_between(p, a, b) == NET_FABRIC) return p->fabric_latency_s;
    double s = p->nic_latency_s + p->spine_latency_s;
    for (int t = 0, n = net_route_tiers(p, a, b); t < n; t++) s += p->tiers[t].latency_s;
    return s;
}

double net_p2p_between_s(const cfg_platform *p, int a, int b, double bytes)
{
    net_plane pl = net_plane_between(p, a, b);
    return net_route_latency_s(p, a, b) + bytes / (net_bytes_per_s(p, pl) * net_efficiency(p));
}
