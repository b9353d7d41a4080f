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
 * minutes for a 768-device supernode. */
#include "internal.h"

#include <math.h>
#include <stdio.h>

#include <simgrid/host.h>

/* Bandwidth of the pad and group links: far above any device link. */
#define ENG_PAD_BYTES_PER_S 1e15

/* Devices per group zone (whole supernodes; at least one supernode). */
#define ENG_GROUP_DEVICES 512

sg_host_t eng_device(int device)
{
    char name[32];
    snprintf(name, sizeof name, "npu%d", device);
    return sg_host_by_name(name);
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
} mirrors;

static bool simulated(const mirrors *mr, int i)
{
    return !mr->rep || (i < mr->world && mr->rep[i] == i);
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

/* Supernodes [k0, k1) in group zone j. */
static void emit_group(const cfg_platform *p, const mirrors *mr, FILE *out, int j, int k0, int k1)
{
    int dps = p->devices_per_supernode;
    fprintf(out, "  <zone id=\"g%d\" routing=\"DijkstraCache\">\n   <router id=\"g%d-spine\"/>\n", j, j);
    for (int k = k0; k < k1; k++) fprintf(out, "   <router id=\"sn%d-fab\"/>\n", k);
    for (int k = k0; k < k1 && mr->uplinks; k++) fprintf(out, "   <router id=\"sn%d-gw\"/>\n", k);
    int first = k0 * dps, last = k1 * dps < p->devices ? k1 * dps : p->devices;
    for (int i = first; i < last; i++) fprintf(out, "   <host id=\"npu%d\" speed=\"%.15gf\"/>\n", i, p->peak_flops_per_s);
    for (int i = first; i < last; i++)
        if (mr->rep && simulated(mr, i)) fprintf(out, "   <host id=\"mirror%d\" speed=\"1f\"/>\n", i);
    /* Mirror routes first, then the simulated ranks' devices: SimGrid finds
     * the hop from a router to the next node by scanning the router's edges
     * in the order the routes were declared, and the flows of a reduced run
     * go to mirrors and simulated ranks (a tenth of the run time). */
    for (int i = first; i < last; i++)
        if (mr->rep && simulated(mr, i))
            fprintf(out,
                    "   <route src=\"sn%d-fab\" dst=\"mirror%d\" symmetrical=\"NO\">"
                    "<link_ctn id=\"fab%d\" direction=\"DOWN\"/></route>\n",
                    i / dps, i, i);
    for (int i = first; i < last; i++)
        if (simulated(mr, i)) emit_device_routes(p, mr, out, j, i);
    for (int i = first; i < last; i++)
        if (!simulated(mr, i)) emit_device_routes(p, mr, out, j, i);
    for (int k = k0; k < k1 && mr->uplinks; k++)
        if (mr->up_share)
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

/* Writes the XML platform of p to out. Returns SIM_OK, SIM_EINVAL when p has
 * a value the layout cannot use, SIM_EIO when writing fails. The caller
 * keeps out open. */
sim_rc eng_platform_xml(const cfg_platform *p, FILE *out, sim_err *err)
{
    return eng_platform_xml_for(p, NULL, 0, false, 1, NULL, NULL, out, err);
}

sim_rc eng_platform_xml_for(const cfg_platform *p, const int *rep, int world, bool with_mirrors, int stand_for,
                            const double *up_share, const double *down_share, FILE *out, sim_err *err)
{
    mirrors mr = {with_mirrors ? rep : NULL, world, stand_for > 1 ? stand_for : 1, NULL, NULL, true};
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
        emit_link(out, "fab", i, p->fabric_bytes_per_s, p->fabric_latency_s / 2, "SPLITDUPLEX");
        emit_link(out, "nic", i, p->nic_bytes_per_s, p->nic_latency_s / 2, "SPLITDUPLEX");
        emit_link(out, "pad", i, ENG_PAD_BYTES_PER_S, mr.uplinks ? 0.0 : p->spine_latency_s / 2, "FATPIPE");
    }
    for (int k = 0; k < nsn && mr.uplinks; k++) {
        int n = (k + 1) * dps <= p->devices ? dps : p->devices - k * dps;
        double bw = n * p->nic_bytes_per_s / p->oversubscription;
        if (mr.up_share) {
            emit_link(out, "up", k, bw * mr.up_share[k], p->spine_latency_s / 2, "SHARED");
            emit_link(out, "down", k, bw * mr.down_share[k], p->spine_latency_s / 2, "SHARED");
        } else {
            emit_link(out, "up", k, bw / mr.stand_for, p->spine_latency_s / 2, "SPLITDUPLEX");
        }
    }
    fputs("  </zone>\n", out);
    for (int j = 0; j < ngroups; j++) emit_group(p, &mr, out, j, j * spg, (j + 1) * spg < nsn ? (j + 1) * spg : nsn);
    fputs("  <zone id=\"core\" routing=\"Full\"><router id=\"spine\"/></zone>\n", out);
    for (int j = 0; j < ngroups; j++) {
        /* all the group's uplinks together: never the bottleneck */
        int first = j * spg * dps, last = (j + 1) * spg * dps < p->devices ? (j + 1) * spg * dps : p->devices;
        fprintf(out, "  <link id=\"grp%d\" bandwidth=\"%.15gBps\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n",
                j, (last - first) * p->nic_bytes_per_s / p->oversubscription / mr.stand_for);
    }
    for (int j = 0; j < ngroups; j++)
        fprintf(out,
                "  <zoneRoute src=\"g%d\" dst=\"core\" gw_src=\"g%d-spine\" gw_dst=\"spine\">"
                "<link_ctn id=\"grp%d\" direction=\"UP\"/></zoneRoute>\n",
                j, j, j);
    fputs(" </zone>\n</platform>\n", out);
    if (fflush(out) != 0 || ferror(out))
        return sim_fail(err, SIM_EIO, "platform XML: write failed (check disk space and permissions)");
    return SIM_OK;
}
