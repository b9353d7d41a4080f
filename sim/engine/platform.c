/* platform.c - the SimGrid XML platform of a cfg_platform: two network planes
 * per device.
 *
 * Devices are numbered supernode by supernode. For device i of supernode k:
 * host "npu<i>" (speed = peak FLOP/s), a fabric link "fab<i>" to the router
 * "sn<k>-fab" (the scale-up fabric: UB or NVSwitch) and a NIC link "nic<i>"
 * followed by a pad link "pad<i>" to "sn<k>-gw" (the supernode's leaf of the
 * RDMA network).  Fabric and NIC links are SPLITDUPLEX with half the
 * device-to-device latency each, so npu -> fab -> npu costs
 * fabric_latency_s.  The pad (huge bandwidth, no latency, no sharing) makes
 * the NIC path one hop longer than the fabric path, so shortest-path routing
 * sends intra-supernode traffic over the fabric.  Each leaf reaches the
 * spine through an uplink "up<k>" of bandwidth (devices of k *
 * nic_bytes_per_s) / oversubscription and latency spine_latency_s / 2.
 * Inter-supernode routes are npu -> nic -> pad -> up<a> -> up<b> -> pad ->
 * nic -> npu, with latency nic_latency_s + spine_latency_s.  Without
 * oversubscription the uplinks and leaves are left out (they cannot limit
 * anything): NIC and pad lead to the spine, and the pads carry the spine
 * latency.
 *
 * Zones: supernodes are packed into group zones "g<j>" of about
 * ENG_GROUP_DEVICES devices (one supernode when supernodes are that big),
 * each with its own spine router "g<j>-spine"; the top zone joins the group
 * spines to the router "spine" (zone "core") by links "grp<j>" of huge
 * bandwidth, no latency and no sharing, so the split spine behaves as one.
 * SimGrid 3.32 seals a platform in O(zones x hosts) and finds a link by
 * name by walking the zones in order, which makes thousands of small
 * supernode zones (DGX nodes of 8) slow; a first zone "links" holds every
 * device link so that lookups stop there.
 *
 * Routing is DijkstraCache (shortest path in links, computed per source on
 * first use and cached): Floyd is O(n^3) when a zone is sealed, which is
 * minutes for a 768-device supernode.
 *
 * A platform with network tiers (leaf, spine, ... above the supernodes)
 * gets the tiered layout instead: see the "tiers" section below; without
 * tiers the XML is the one above, byte for byte. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/host.h>
#include <xbt/sysdep.h>

/* Bandwidth of the pad and group links: far above any device link. */
#define ENG_PAD_BYTES_PER_S 1e15

/* Devices per group zone (whole supernodes; at least one supernode). */
#define ENG_GROUP_DEVICES 512

/* One pass over SimGrid's host list: looking each device up by name walks
 * the zones' hosts, which made a run's set-up quadratic in the devices
 * (a third of a 131,072-device run). */
sg_host_t *eng_device_hosts(int devices)
{
    sg_host_t *out = sim_xcalloc((size_t)devices, sizeof *out);
    sg_host_t *all = sg_host_list();
    size_t n = sg_host_count();
    for (size_t k = 0; k < n; k++) {
        const char *name = sg_host_get_name(all[k]);
        char *end = NULL;
        if (strncmp(name, "npu", 3) != 0) continue;
        long d = strtol(name + 3, &end, 10);
        if (end != name + 3 && *end == '\0' && d >= 0 && d < devices) out[d] = all[k];
    }
    xbt_free(all);
    return out;
}

static sim_rc check_value(const cfg_platform *p, const char *key, double v, bool zero_ok, sim_err *err)
{
    if (isfinite(v) && (v > 0 || (zero_ok && v == 0))) return SIM_OK;
    return sim_fail(err, SIM_EINVAL, "%s: '%s': must be %s, got %g (fix the platform file)",
                    p->path[0] ? p->path : (p->name[0] ? p->name : "platform"), key,
                    zero_ok ? "a number >= 0" : "a positive number", v);
}

/* Returns SIM_OK when p can be turned into a platform, else SIM_EINVAL
 * with the offending key. */
static sim_rc check_platform(const cfg_platform *p, sim_err *err)
{
    const char *o = p->path[0] ? p->path : (p->name[0] ? p->name : "platform");
    if (p->devices < 1)
        return sim_fail(err, SIM_EINVAL, "%s: 'devices': must be at least 1, got %d", o, p->devices);
    if (p->devices_per_supernode < 1)
        return sim_fail(err, SIM_EINVAL, "%s: 'devices_per_supernode': must be at least 1, got %d", o,
                        p->devices_per_supernode);
    sim_rc rc = check_value(p, "peak_flops_per_s", p->peak_flops_per_s, false, err);
    if (rc == SIM_OK) rc = check_value(p, "fabric_bytes_per_s", p->fabric_bytes_per_s, false, err);
    if (rc == SIM_OK) rc = check_value(p, "nic_bytes_per_s", p->nic_bytes_per_s, false, err);
    if (rc == SIM_OK) rc = check_value(p, "fabric_latency_s", p->fabric_latency_s, true, err);
    if (rc == SIM_OK) rc = check_value(p, "nic_latency_s", p->nic_latency_s, true, err);
    if (rc == SIM_OK) rc = check_value(p, "spine_latency_s", p->spine_latency_s, true, err);
    if (rc == SIM_OK && !(isfinite(p->oversubscription) && p->oversubscription >= 1))
        rc = sim_fail(err, SIM_EINVAL, "%s: 'oversubscription': must be >= 1, got %g", o, p->oversubscription);
    return rc;
}

static void emit_link(FILE *out, const char *id, int i, double bw, double lat, const char *policy)
{
    fprintf(out, "   <link id=\"%s%d\" bandwidth=\"%.15gBps\" latency=\"%.15gs\" sharing_policy=\"%s\"/>\n", id, i,
            bw, lat, policy);
}

/* What a reduced run changes in the platform (see symmetry.c). */
typedef struct mirrors {
    const int *rep;  /* world ints, NULL: no mirrors */
    int world;
    int stand_for;   /* shared links carry 1/stand_for of the devices' flows */
    const double *up_share, *down_share; /* per supernode, or NULL */
    bool uplinks;    /* false: devices' NIC links reach the group spine directly */
    bool fabric;     /* mirror hosts behind the fabric link */
    unsigned nic;    /* ENG_MIRROR_NIC(c) bits: mirror hosts behind the NIC link, per route class */
    bool open_spine; /* links between group zones unlimited */
    bool only_simulated; /* the devices of unsimulated ranks left out */
    const eng_tier_reduction *tiers; /* NULL: tier uplinks shared as stand_for says, no detours */
} mirrors;

static bool simulated(const mirrors *mr, int i)
{
    return !mr->rep || (i < mr->world && mr->rep[i] == i);
}

/* Whether device i is in the platform: every device, or in a reduced run
 * whose flows touch only simulated ranks' devices, those alone (a
 * 131,072-device platform of which 16 devices are used then loads in
 * milliseconds, not seconds: SimGrid checks each new host's name against
 * every host before it). */
static bool kept(const mirrors *mr, int i)
{
    return !mr->only_simulated || simulated(mr, i);
}

/* Whether devices [first, last) hold a kept one. */
static bool kept_any(const mirrors *mr, int first, int last)
{
    for (int i = first; i < last; i++)
        if (kept(mr, i)) return true;
    return false;
}

/* Device i's two routes: fabric link up to its supernode's switch, NIC and
 * pad up to its leaf (or straight to the spine of group zone j). */
static void emit_device_routes(const cfg_platform *p, const mirrors *mr, FILE *out, int j, int i)
{
    int k = i / p->devices_per_supernode;
    char gw[32];
    if (mr->uplinks)
        snprintf(gw, sizeof gw, "sn%d-gw", k);
    else
        snprintf(gw, sizeof gw, "g%d-spine", j);
    fprintf(out, "   <route src=\"npu%d\" dst=\"sn%d-fab\"><link_ctn id=\"fab%d\" direction=\"UP\"/></route>\n", i, k, i);
    fprintf(out,
            "   <route src=\"npu%d\" dst=\"%s\"><link_ctn id=\"nic%d\" direction=\"UP\"/><link_ctn id=\"pad%d\"/></route>\n",
            i, gw, i, i);
}

/* The hosts of devices [first, last), their mirrors and the mirrors'
 * routes.  Mirror routes come first, then (the caller's) the simulated
 * ranks' devices: SimGrid finds the hop from a router to the next node by
 * scanning the router's edges in the order the routes were declared, and
 * the flows of a reduced run go to mirrors and simulated ranks (a tenth of
 * the run time). */
static void emit_hosts(const cfg_platform *p, const mirrors *mr, FILE *out, int j, int first, int last)
{
    int dps = p->devices_per_supernode;
    for (int i = first; i < last; i++)
        if (kept(mr, i)) fprintf(out, "   <host id=\"npu%d\" speed=\"%.15gf\"/>\n", i, p->peak_flops_per_s);
    for (int i = first; i < last; i++)
        if (mr->rep && mr->fabric && simulated(mr, i)) fprintf(out, "   <host id=\"mirror%d\" speed=\"1f\"/>\n", i);
    for (int i = first; i < last; i++)
        for (int c = 1; c < ENG_ROUTE_CLASSES; c++)
            if (mr->rep && (mr->nic & ENG_MIRROR_NIC(c)) && simulated(mr, i)) {
                char name[32];
                eng_mirror_name(name, sizeof name, "nmirror", i, c);
                fprintf(out, "   <host id=\"%s\" speed=\"1f\"/>\n", name);
            }
    for (int i = first; i < last; i++)
        if (mr->rep && mr->fabric && simulated(mr, i))
            fprintf(out,
                    "   <route src=\"sn%d-fab\" dst=\"mirror%d\" symmetrical=\"NO\">"
                    "<link_ctn id=\"fab%d\" direction=\"DOWN\"/></route>\n",
                    i / dps, i, i);
    /* a NIC mirror is reached from where the device's NIC route ends
     * (group zone j's spine, or with tiers its first-tier switch) through
     * a pad of its own and the device's NIC link down: a flow to it
     * crosses the links and pays the latency of the routes of its class,
     * and no shared uplink (exact classes use it only without supernode
     * uplinks, see symmetry.c) */
    for (int i = first; i < last; i++)
        for (int c = 1; c < ENG_ROUTE_CLASSES; c++) {
            if (!mr->rep || !(mr->nic & ENG_MIRROR_NIC(c)) || !simulated(mr, i)) continue;
            char name[32], pad[32], from[32];
            eng_mirror_name(name, sizeof name, "nmirror", i, c);
            eng_mirror_name(pad, sizeof pad, "npad", i, c);
            if (p->ntiers > 0)
                snprintf(from, sizeof from, "t0-%d", net_tier_domain_of(p, 0, i));
            else
                snprintf(from, sizeof from, "g%d-spine", j);
            fprintf(out,
                    "   <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s\"/>"
                    "<link_ctn id=\"nic%d\" direction=\"DOWN\"/></route>\n",
                    from, name, pad, i);
        }
}

void eng_mirror_name(char *out, size_t cap, const char *kind, int rank, int c)
{
    if (c > 1)
        snprintf(out, cap, "%s%dr%d", kind, rank, c);
    else
        snprintf(out, cap, "%s%d", kind, rank);
}

/* The pads of device i's NIC mirrors (simulated ranks only): the latency
 * that, after its NIC route up, makes a route of class c: the spine's
 * second half (none behind supernode uplinks, which carry it) and the
 * latency of the tiers such a route leaves. */
static void emit_mirror_pads(const cfg_platform *p, const mirrors *mr, FILE *out, int i)
{
    for (int c = 1; c < ENG_ROUTE_CLASSES; c++) {
        if (!mr->rep || !(mr->nic & ENG_MIRROR_NIC(c)) || !simulated(mr, i)) continue;
        double lat = mr->uplinks ? 0.0 : p->spine_latency_s / 2;
        for (int t = 0; t < c - 1; t++) lat += p->tiers[t].latency_s;
        char pad[32];
        eng_mirror_name(pad, sizeof pad, "npad", i, c);
        fprintf(out, "   <link id=\"%s\" bandwidth=\"%.15gBps\" latency=\"%.15gs\" sharing_policy=\"FATPIPE\"/>\n",
                pad, ENG_PAD_BYTES_PER_S, lat);
    }
}

/* Supernodes [k0, k1) in group zone j. */
static void emit_group(const cfg_platform *p, const mirrors *mr, FILE *out, int j, int k0, int k1)
{
    int dps = p->devices_per_supernode;
    fprintf(out, "  <zone id=\"g%d\" routing=\"DijkstraCache\">\n   <router id=\"g%d-spine\"/>\n", j, j);
    for (int k = k0; k < k1; k++)
        if (kept_any(mr, k * dps, (k + 1) * dps)) fprintf(out, "   <router id=\"sn%d-fab\"/>\n", k);
    for (int k = k0; k < k1 && mr->uplinks; k++)
        if (kept_any(mr, k * dps, (k + 1) * dps)) fprintf(out, "   <router id=\"sn%d-gw\"/>\n", k);
    int first = k0 * dps, last = k1 * dps < p->devices ? k1 * dps : p->devices;
    emit_hosts(p, mr, out, j, first, last);
    for (int i = first; i < last; i++)
        if (simulated(mr, i)) emit_device_routes(p, mr, out, j, i);
    for (int i = first; i < last; i++)
        if (!simulated(mr, i) && kept(mr, i)) emit_device_routes(p, mr, out, j, i);
    for (int k = k0; k < k1 && mr->uplinks; k++)
        if (!kept_any(mr, k * dps, (k + 1) * dps))
            continue;
        else if (mr->up_share)
            fprintf(out,
                    "   <route src=\"sn%d-gw\" dst=\"g%d-spine\" symmetrical=\"NO\"><link_ctn id=\"up%d\"/></route>\n"
                    "   <route src=\"g%d-spine\" dst=\"sn%d-gw\" symmetrical=\"NO\"><link_ctn id=\"down%d\"/></route>\n",
                    k, j, k, j, k, k);
        else
            fprintf(out,
                    "   <route src=\"sn%d-gw\" dst=\"g%d-spine\"><link_ctn id=\"up%d\" direction=\"UP\"/></route>\n", k,
                    j, k);
    fputs("  </zone>\n", out);
}

/* {========================================================= tiers */

/* The tiered layout (net_tiers > 0; docs/network.md).  Group zone j holds
 * domain j of tier tau, the largest tier whose domains have at most
 * ENG_GROUP_DEVICES devices (else the first tier), with the switches of
 * tiers 0..tau inside it: router "t<t>-<d>" for domain d of tier t (with
 * rails, one per switch: d counts (domain, rail) pairs, net_tier_domain_of).
 * A device's NIC and pad lead to its supernode's gateway when supernode
 * uplinks exist, else straight to its first-tier switch; the gateway's
 * uplink up<k> leads there.  Each switch reaches the switch of the next
 * tier's domain holding it through its uplink "u<t>-<d>" (bandwidth: its
 * devices' NICs / the tier's oversubscription, latency half the tier's),
 * and tier tau's reach the group's router "g<j>-spine", which a link of no
 * cost ("grp<j>") joins to the zone of the next tier's switch ("z<t>-<d>",
 * one router) or, above the last tier, to the core ("spine").  So a route
 * that leaves the domains of tiers 0..n-1 crosses their uplinks once up
 * and once down and costs nic_latency_s + spine_latency_s + their
 * latencies, as net_route_latency_s says.  With rails a device's fabric
 * route gets a second, free link and its NIC route a third: shortest paths
 * count links, and a route through another device of the node (fabric,
 * then its NIC on the other rail) would otherwise tie with the one through
 * the spine. */

/* The tier whose domains are the group zones. */
static int group_tier(const cfg_platform *p)
{
    int tau = 0;
    for (int t = 0; t < p->ntiers; t++)
        if (p->tiers[t].devices <= ENG_GROUP_DEVICES) tau = t;
    return tau;
}

/* A device of domain d of tier t (its first). */
static int domain_device(const cfg_platform *p, int t, int d)
{
    int r = t == 0 && net_rails(p) ? p->devices_per_node : 1;
    return d / r * p->tiers[t].devices + d % r;
}

/* The router above domain d of tier t: the next tier's switch, or the
 * group's router when t is the group tier. */
static void parent_router(const cfg_platform *p, int t, int d, int tau, char *out, size_t cap)
{
    int dev = domain_device(p, t, d);
    if (t == tau)
        snprintf(out, cap, "g%d-spine", dev / p->tiers[tau].devices);
    else
        snprintf(out, cap, "t%d-%d", t + 1, net_tier_domain_of(p, t + 1, dev));
}

/* Whether domain d of tier t has devices in [first, last) (then all of
 * them: domains of tiers up to the group's nest in the group). */
static bool domain_in(const cfg_platform *p, int t, int d, int first, int last)
{
    int dev = domain_device(p, t, d);
    return net_tier_domain_devices(p, t, d) > 0 && dev >= first && dev < last;
}

static void emit_tier_links(const cfg_platform *p, const mirrors *mr, FILE *out)
{
    for (int t = 0; t < p->ntiers; t++)
        for (int d = 0; d < net_tier_domains(p, t); d++) {
            int n = net_tier_domain_devices(p, t, d);
            if (n == 0) continue;
            char id[32];
            snprintf(id, sizeof id, "u%d-", t);
            /* an uplink that is not oversubscribed never limits a flow: its
             * flows leave or enter by its devices' NICs, which carry no more
             * than it does.  It gets twice that: a link full exactly when
             * its NICs are would leave the order of equal-time events to
             * rounding.  (Not the pads' 1e15 B/s, nor FATPIPE: SimGrid
             * 3.32's selective update then lets flows through a link that
             * many devices share go unlimited.)  In a reduced run the
             * simulated ranks gathered under one domain are at most its
             * devices, whose NICs still bound them */
            int share = mr->tiers && mr->tiers->share[t] > 0 ? mr->tiers->share[t] : mr->stand_for;
            double bw = p->tiers[t].oversubscription > 1
                            ? n * p->nic_bytes_per_s / p->tiers[t].oversubscription / share
                            : 2 * n * p->nic_bytes_per_s;
            emit_link(out, id, d, bw, p->tiers[t].latency_s / 2, "SPLITDUPLEX");
        }
    if (net_rails(p))
        for (int i = 0; i < p->devices; i++) {
            if (!kept(mr, i)) continue;
            emit_link(out, "fpad", i, ENG_PAD_BYTES_PER_S, 0.0, "FATPIPE");
            emit_link(out, "rpad", i, ENG_PAD_BYTES_PER_S, 0.0, "FATPIPE");
        }
}

/* The uplink of domain d of tier t in a route (upwards), into buf. */
static const char *uplink_ctn(const cfg_platform *p, int t, int d, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "<link_ctn id=\"u%d-%d\" direction=\"UP\"/>", t, d);
    return buf;
}

/* Device i's routes in the tiered layout. */
static void emit_tiered_device_routes(const cfg_platform *p, const mirrors *mr, FILE *out, int i)
{
    int k = i / p->devices_per_supernode;
    char first[32];
    if (mr->uplinks)
        snprintf(first, sizeof first, "sn%d-gw", k);
    else
        snprintf(first, sizeof first, "t0-%d", net_tier_domain_of(p, 0, i));
    if (net_rails(p)) {
        fprintf(out,
                "   <route src=\"npu%d\" dst=\"sn%d-fab\"><link_ctn id=\"fab%d\" direction=\"UP\"/>"
                "<link_ctn id=\"fpad%d\"/></route>\n",
                i, k, i, i);
        fprintf(out,
                "   <route src=\"npu%d\" dst=\"%s\"><link_ctn id=\"nic%d\" direction=\"UP\"/><link_ctn id=\"pad%d\"/>"
                "<link_ctn id=\"rpad%d\"/></route>\n",
                i, first, i, i, i);
        return;
    }
    fprintf(out, "   <route src=\"npu%d\" dst=\"sn%d-fab\"><link_ctn id=\"fab%d\" direction=\"UP\"/></route>\n", i, k, i);
    fprintf(out,
            "   <route src=\"npu%d\" dst=\"%s\"><link_ctn id=\"nic%d\" direction=\"UP\"/><link_ctn id=\"pad%d\"/></route>\n",
            i, first, i, i);
}

/* Links of a device's NIC route in the tiered layout (NIC, pad, and with
 * rails the third, free one). */
static int nic_route_links(const cfg_platform *p)
{
    return net_rails(p) ? 3 : 2;
}

/* The links of the natural route between the NIC planes of devices a and b
 * in one zone: each one's NIC route, and the uplinks of the tiers it
 * leaves, up and down. */
static int natural_links(const cfg_platform *p, int a, int b)
{
    return 2 * nic_route_links(p) + 2 * net_route_tiers(p, a, b);
}

/* Links of a detour of route class c before its filler: the two NICs, one
 * pad with the spine's latency, the uplinks of tiers 0..c-2 up and down. */
static int detour_links(int c)
{
    return 3 + 2 * (c - 1);
}

bool eng_detour_fits(const cfg_platform *p, int a, int b, int c)
{
    if (p->ntiers == 0 || p->oversubscription > 1 || c < 1) return false;
    int G = p->tiers[group_tier(p)].devices;
    if (a / G != b / G || net_plane_between(p, a, b) == NET_FABRIC) return false;
    int filler = natural_links(p, a, b) - 1 - detour_links(c);
    return filler >= 0 && filler <= ENG_DETOUR_FILLERS;
}

/* The detours from devices [first, last).  SimGrid takes the route of the
 * fewest links between two hosts: a detour has one link fewer than the
 * natural route between its devices (free filler links make up the
 * count), so it is taken for that pair; a route of another pair through
 * it (to its first device, then the detour) is longer than that pair's
 * own, which goes up and down fewer NIC routes (symmetry.c). */
static void emit_detours(const cfg_platform *p, const mirrors *mr, FILE *out, int first, int last)
{
    for (int k = 0; mr->tiers && k < mr->tiers->ndetours; k++) {
        const eng_detour *d = &mr->tiers->detour[k];
        if (d->from < first || d->from >= last) continue;
        int c = d->route_class, filler = natural_links(p, d->from, d->to) - 1 - detour_links(c);
        fprintf(out, "   <route src=\"npu%d\" dst=\"npu%d\" symmetrical=\"NO\"><link_ctn id=\"nic%d\" direction=\"UP\"/>",
                d->from, d->to, d->from);
        for (int t = 0; t <= c - 2; t++)
            fprintf(out, "<link_ctn id=\"u%d-%d\" direction=\"UP\"/>", t, net_tier_domain_of(p, t, d->from));
        for (int t = c - 2; t >= 0; t--)
            fprintf(out, "<link_ctn id=\"u%d-%d\" direction=\"DOWN\"/>", t, net_tier_domain_of(p, t, d->to));
        fputs("<link_ctn id=\"dpad0\"/>", out);
        for (int f = 0; f < filler; f++) fprintf(out, "<link_ctn id=\"dfill%d\"/>", f);
        fprintf(out, "<link_ctn id=\"nic%d\" direction=\"DOWN\"/></route>\n", d->to);
    }
}

/* Group zone j of the tiered layout: devices [first, last). */
static void emit_tiered_group(const cfg_platform *p, const mirrors *mr, FILE *out, int j, int first, int last, int tau)
{
    int dps = p->devices_per_supernode;
    fprintf(out, "  <zone id=\"g%d\" routing=\"DijkstraCache\">\n   <router id=\"g%d-spine\"/>\n", j, j);
    for (int t = 0; t <= tau; t++)
        for (int d = 0; d < net_tier_domains(p, t); d++)
            if (domain_in(p, t, d, first, last)) fprintf(out, "   <router id=\"t%d-%d\"/>\n", t, d);
    for (int k = first / dps; k * dps < last; k++)
        if (kept_any(mr, k * dps, (k + 1) * dps)) fprintf(out, "   <router id=\"sn%d-fab\"/>\n", k);
    for (int k = first / dps; k * dps < last && mr->uplinks; k++)
        if (kept_any(mr, k * dps, (k + 1) * dps)) fprintf(out, "   <router id=\"sn%d-gw\"/>\n", k);
    emit_hosts(p, mr, out, j, first, last);
    for (int i = first; i < last; i++)
        if (simulated(mr, i)) emit_tiered_device_routes(p, mr, out, i);
    for (int i = first; i < last; i++)
        if (!simulated(mr, i) && kept(mr, i)) emit_tiered_device_routes(p, mr, out, i);
    emit_detours(p, mr, out, first, last);
    for (int k = first / dps; k * dps < last && mr->uplinks; k++)
        if (kept_any(mr, k * dps, (k + 1) * dps))
            fprintf(out, "   <route src=\"sn%d-gw\" dst=\"t0-%d\"><link_ctn id=\"up%d\" direction=\"UP\"/></route>\n", k,
                net_tier_domain_of(p, 0, k * dps), k);
    for (int t = 0; t <= tau; t++)
        for (int d = 0; d < net_tier_domains(p, t); d++) {
            if (!domain_in(p, t, d, first, last)) continue;
            char up[32], ctn[64];
            parent_router(p, t, d, tau, up, sizeof up);
            fprintf(out, "   <route src=\"t%d-%d\" dst=\"%s\">%s</route>\n", t, d, up, uplink_ctn(p, t, d, ctn, sizeof ctn));
        }
    fputs("  </zone>\n", out);
}

/* The zones above the groups: a zone per switch of tiers tau+1.., the
 * core, and the routes between them. */
static void emit_tiered_top(const cfg_platform *p, FILE *out, int ngroups, int tau)
{
    for (int t = tau + 1; t < p->ntiers; t++)
        for (int d = 0; d < net_tier_domains(p, t); d++)
            fprintf(out, "  <zone id=\"z%d-%d\" routing=\"Full\"><router id=\"t%d-%d\"/></zone>\n", t, d, t, d);
    fputs("  <zone id=\"core\" routing=\"Full\"><router id=\"spine\"/></zone>\n", out);
    for (int j = 0; j < ngroups; j++)
        fprintf(out, "  <link id=\"grp%d\" bandwidth=\"%.15gBps\" latency=\"0s\" sharing_policy=\"FATPIPE\"/>\n", j,
                ENG_PAD_BYTES_PER_S);
    for (int j = 0; j < ngroups; j++) {
        int dev = j * p->tiers[tau].devices;
        if (tau + 1 < p->ntiers) {
            int d = net_tier_domain_of(p, tau + 1, dev);
            fprintf(out,
                    "  <zoneRoute src=\"g%d\" dst=\"z%d-%d\" gw_src=\"g%d-spine\" gw_dst=\"t%d-%d\">"
                    "<link_ctn id=\"grp%d\"/></zoneRoute>\n",
                    j, tau + 1, d, j, tau + 1, d, j);
        } else {
            fprintf(out,
                    "  <zoneRoute src=\"g%d\" dst=\"core\" gw_src=\"g%d-spine\" gw_dst=\"spine\">"
                    "<link_ctn id=\"grp%d\"/></zoneRoute>\n",
                    j, j, j);
        }
    }
    for (int t = tau + 1; t < p->ntiers; t++)
        for (int d = 0; d < net_tier_domains(p, t); d++) {
            int dev = domain_device(p, t, d);
            char ctn[64];
            if (t + 1 < p->ntiers) {
                int up = net_tier_domain_of(p, t + 1, dev);
                fprintf(out,
                        "  <zoneRoute src=\"z%d-%d\" dst=\"z%d-%d\" gw_src=\"t%d-%d\" gw_dst=\"t%d-%d\">%s</zoneRoute>\n",
                        t, d, t + 1, up, t, d, t + 1, up, uplink_ctn(p, t, d, ctn, sizeof ctn));
            } else {
                fprintf(out, "  <zoneRoute src=\"z%d-%d\" dst=\"core\" gw_src=\"t%d-%d\" gw_dst=\"spine\">%s</zoneRoute>\n",
                        t, d, t, d, uplink_ctn(p, t, d, ctn, sizeof ctn));
            }
        }
}


/* The whole tiered platform (the layout above). */
static sim_rc tiered_xml(const cfg_platform *p, const mirrors *mr, FILE *out, sim_err *err)
{
    int dps = p->devices_per_supernode, nsn = (p->devices + dps - 1) / dps;
    int tau = group_tier(p), G = p->tiers[tau].devices, ngroups = (p->devices + G - 1) / G;
    fputs("<?xml version=\"1.0\"?>\n"
          "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n",
          out);
    fprintf(out, "<!-- %s: %d devices, %d supernode(s) of up to %d, %d tier(s)%s, %d zone(s) -->\n",
            p->name[0] ? p->name : "platform", p->devices, nsn, dps, p->ntiers, net_rails(p) ? " (rails)" : "", ngroups);
    fputs("<platform version=\"4.1\">\n <zone id=\"world\" routing=\"DijkstraCache\">\n", out);
    fputs("  <zone id=\"links\" routing=\"Full\">\n", out);
    for (int i = 0; i < p->devices; i++) {
        if (!kept(mr, i)) continue;
        emit_link(out, "fab", i, p->fabric_bytes_per_s, p->fabric_latency_s / 2, "SPLITDUPLEX");
        emit_link(out, "nic", i, p->nic_bytes_per_s * cfg_nic_speed(p, i), p->nic_latency_s / 2, "SPLITDUPLEX");
        emit_link(out, "pad", i, ENG_PAD_BYTES_PER_S, mr->uplinks ? 0.0 : p->spine_latency_s / 2, "FATPIPE");
        emit_mirror_pads(p, mr, out, i);
    }
    for (int k = 0; k < nsn && mr->uplinks; k++) {
        int n = (k + 1) * dps <= p->devices ? dps : p->devices - k * dps;
        if (!kept_any(mr, k * dps, k * dps + n)) continue;
        emit_link(out, "up", k, n * p->nic_bytes_per_s / p->oversubscription / mr->stand_for, p->spine_latency_s / 2,
                  "SPLITDUPLEX");
    }
    emit_tier_links(p, mr, out);
    if (mr->tiers && mr->tiers->ndetours > 0) {
        /* the detours' pad (the two pads of a NIC route's latency) and filler */
        emit_link(out, "dpad", 0, ENG_PAD_BYTES_PER_S, p->spine_latency_s, "FATPIPE");
        for (int f = 0; f < ENG_DETOUR_FILLERS; f++) emit_link(out, "dfill", f, ENG_PAD_BYTES_PER_S, 0.0, "FATPIPE");
    }
    fputs("  </zone>\n", out);
    for (int j = 0; j < ngroups; j++)
        emit_tiered_group(p, mr, out, j, j * G, (j + 1) * G < p->devices ? (j + 1) * G : p->devices, tau);
    emit_tiered_top(p, out, ngroups, tau);
    fputs(" </zone>\n</platform>\n", out);
    if (fflush(out) != 0 || ferror(out))
        return sim_fail(err, SIM_EIO, "platform XML: write failed (check disk space and permissions)");
    return SIM_OK;
}

/* }========================================================= tiers */

/* Writes the XML platform of p to out. Returns SIM_OK, SIM_EINVAL when p has
 * a value the layout cannot use, SIM_EIO when writing fails. The caller
 * keeps out open. */
sim_rc eng_platform_xml(const cfg_platform *p, FILE *out, sim_err *err)
{
    return eng_platform_xml_for(p, NULL, 0, 0, 1, NULL, NULL, NULL, out, err);
}

sim_rc eng_platform_xml_for(const cfg_platform *p, const int *rep, int world, unsigned with_mirrors, int stand_for,
                            const double *up_share, const double *down_share, const eng_tier_reduction *tiers,
                            FILE *out, sim_err *err)
{
    mirrors mr = {rep, world, stand_for > 1 ? stand_for : 1, NULL, NULL, true,
                  (with_mirrors & ENG_MIRROR_FABRIC) != 0, with_mirrors & ENG_MIRROR_NIC_ANY,
                  (with_mirrors & ENG_MIRROR_OPEN_SPINE) != 0, rep && (with_mirrors & ENG_ONLY_SIMULATED) != 0,
                  rep && p->ntiers > 0 ? tiers : NULL};
    if (up_share && down_share) {
        mr.up_share = up_share;
        mr.down_share = down_share;
    }
    /* Without oversubscription an uplink carries at most what its devices'
     * NICs do: it never limits a flow, and leaving it out of the routes
     * saves SimGrid a sharing constraint crossed by every flow between
     * supernodes (the spine latency moves to the pad links). */
    mr.uplinks = p->oversubscription > 1 || mr.up_share;
    sim_rc rc = check_platform(p, err);
    if (rc != SIM_OK) return rc;
    if (p->ntiers > 0 && mr.up_share)
        return sim_fail(err, SIM_EINVAL, "%s: network.tiers: a replica-reduced run cannot share tier uplinks (run with "
                        "--symmetry tp or none)", p->path[0] ? p->path : p->name);
    if (p->ntiers > 0 && mr.nic && mr.uplinks)
        return sim_fail(err, SIM_EINTERNAL, "platform XML: NIC mirrors behind shared supernode uplinks");
    if (p->ntiers > 0) return tiered_xml(p, &mr, out, err);
    int dps = p->devices_per_supernode;
    int nsn = (p->devices + dps - 1) / dps;

    fputs("<?xml version=\"1.0\"?>\n"
          "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n",
          out);
    int spg = ENG_GROUP_DEVICES / dps > 1 ? ENG_GROUP_DEVICES / dps : 1; /* supernodes per group */
    int ngroups = (nsn + spg - 1) / spg;
    fprintf(out, "<!-- %s: %d devices, %d supernode(s) of up to %d, %d zone(s) -->\n",
            p->name[0] ? p->name : "platform", p->devices, nsn, dps, ngroups);
    fputs("<platform version=\"4.1\">\n <zone id=\"world\" routing=\"DijkstraCache\">\n", out);
    fputs("  <zone id=\"links\" routing=\"Full\">\n", out);
    for (int i = 0; i < p->devices; i++) {
        if (!kept(&mr, i)) continue;
        emit_link(out, "fab", i, p->fabric_bytes_per_s, p->fabric_latency_s / 2, "SPLITDUPLEX");
        emit_link(out, "nic", i, p->nic_bytes_per_s * cfg_nic_speed(p, i), p->nic_latency_s / 2, "SPLITDUPLEX");
        emit_link(out, "pad", i, ENG_PAD_BYTES_PER_S, mr.uplinks ? 0.0 : p->spine_latency_s / 2, "FATPIPE");
        emit_mirror_pads(p, &mr, out, i);
    }
    for (int k = 0; k < nsn && mr.uplinks; k++) {
        int n = (k + 1) * dps <= p->devices ? dps : p->devices - k * dps;
        if (!kept_any(&mr, k * dps, k * dps + n)) continue;
        double bw = n * p->nic_bytes_per_s / p->oversubscription;
        if (mr.up_share) {
            emit_link(out, "up", k, bw * mr.up_share[k], p->spine_latency_s / 2, "SHARED");
            emit_link(out, "down", k, bw * mr.down_share[k], p->spine_latency_s / 2, "SHARED");
        } else {
            emit_link(out, "up", k, bw / mr.stand_for, p->spine_latency_s / 2, "SPLITDUPLEX");
        }
    }
    fputs("  </zone>\n", out);
    for (int j = 0; j < ngroups; j++)
        if (kept_any(&mr, j * spg * dps, (j + 1) * spg * dps))
            emit_group(p, &mr, out, j, j * spg, (j + 1) * spg < nsn ? (j + 1) * spg : nsn);
    fputs("  <zone id=\"core\" routing=\"Full\"><router id=\"spine\"/></zone>\n", out);
    for (int j = 0; j < ngroups; j++) {
        /* all the group's uplinks together: never the bottleneck */
        int first = j * spg * dps, last = (j + 1) * spg * dps < p->devices ? (j + 1) * spg * dps : p->devices;
        if (!kept_any(&mr, first, last)) continue;
        double bw = mr.open_spine ? ENG_PAD_BYTES_PER_S
                                  : (last - first) * p->nic_bytes_per_s / p->oversubscription / mr.stand_for;
        fprintf(out, "  <link id=\"grp%d\" bandwidth=\"%.15gBps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                j, bw);
    }
    for (int j = 0; j < ngroups; j++)
        if (kept_any(&mr, j * spg * dps, (j + 1) * spg * dps))
            fprintf(out,
                    "  <zoneRoute src=\"g%d\" dst=\"core\" gw_src=\"g%d-spine\" gw_dst=\"spine\">"
                    "<link_ctn id=\"grp%d\" direction=\"UP\"/></zoneRoute>\n",
                    j, j, j);
    fputs(" </zone>\n</platform>\n", out);
    if (fflush(out) != 0 || ferror(out))
        return sim_fail(err, SIM_EIO, "platform XML: write failed (check disk space and permissions)");
    return SIM_OK;
}
