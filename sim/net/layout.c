/* layout.c - how a group lies over the supernodes: whether it spans
 * several, whether it runs hierarchically, and the flat, intra and inter
 * rings seen from one member.
 *
 * A group spanning several supernodes with the same number L >= 2 of
 * members in each is hierarchical: a ring among my supernode's members
 * (intra), and a ring among the members with my local index, one per
 * supernode (inter).  Local indices count members in members order.  Any
 * other group has one flat ring in members order.  A ring's step latency
 * is that of its slowest edge: the fabric's, or the largest route latency
 * of its edges between supernodes (they differ with network tiers). */
#include "net.h"

static void ring_set(net_ring *rg, int n, int me, int succ, int pred, net_plane plane, double lat_s)
{
    rg->n = n;
    rg->me = me;
    rg->succ = succ;
    rg->pred = pred;
    rg->plane = plane;
    rg->lat_s = lat_s;
}

/* The latency a ring edge a -> b adds to lat (the largest so far) when it
 * leaves the supernode. */
static double edge_lat(const cfg_platform *p, int a, int b, double lat)
{
    if (net_plane_between(p, a, b) == NET_FABRIC) return lat;
    double l = net_route_latency_s(p, a, b);
    return l > lat ? l : lat;
}

/* The intra and inter rings of member me (local index ml) of a
 * hierarchical group of L members per supernode.  cnt is zero on entry and
 * on return. */
static void hier_rings(const cfg_platform *p, const int *m, int n, int me, int ml, int L, int *cnt,
                       net_layout *out)
{
    int dev = m[me], mysn = net_supernode_of(p, dev);
    int lsucc = dev, lpred = dev;
    int kpos = 0, kfirst = -1, klast = -1, kprev = -1, ksucc = -1, kpred = -1;
    double klat = 0;
    bool seen_me = false;
    for (int i = 0; i < n; i++) {
        int s = net_supernode_of(p, m[i]), loc = cnt[s]++;
        if (s == mysn) {
            if (loc == (ml + 1) % L) lsucc = m[i];
            if (loc == (ml + L - 1) % L) lpred = m[i];
        }
        if (loc != ml) continue;
        if (kprev >= 0) klat = edge_lat(p, kprev, m[i], klat);
        if (kfirst < 0) kfirst = m[i];
        klast = m[i];
        if (i == me) {
            seen_me = true;
            kpred = kprev;
        } else if (seen_me && ksucc < 0) {
            ksucc = m[i];
        }
        if (!seen_me) kpos++;
        kprev = m[i];
    }
    for (int i = 0; i < n; i++) cnt[net_supernode_of(p, m[i])] = 0;
    if (ksucc < 0) ksucc = kfirst;
    if (kpred < 0) kpred = klast;
    klat = edge_lat(p, klast, kfirst, klat);
    ring_set(&out->ring[NET_RING_INTRA], L, ml, lsucc, lpred, NET_FABRIC, p->fabric_latency_s);
    ring_set(&out->ring[NET_RING_INTER], n / L, kpos, ksucc, kpred, NET_NIC, klat);
}

void net_layout_of(const cfg_platform *p, const int *m, int n, int me, int *cnt, net_layout *out)
{
    int sn0 = net_supernode_of(p, m[0]), mysn = net_supernode_of(p, m[me]), maxc = 0, ml = 0;
    bool spans = false;
    for (int i = 0; i < n; i++) {
        int s = net_supernode_of(p, m[i]);
        spans = spans || s != sn0;
        if (i == me) ml = cnt[s];
        if (++cnt[s] > maxc) maxc = cnt[s];
    }
    bool even = true;
    for (int i = 0; i < n; i++)
        if (cnt[net_supernode_of(p, m[i])] != maxc) even = false;
    out->local = cnt[mysn];
    for (int i = 0; i < n; i++) cnt[net_supernode_of(p, m[i])] = 0;
    double flat = 0, remote = 0;
    for (int i = 0; spans && i < n; i++) {
        flat = edge_lat(p, m[i], m[(i + 1) % n], flat);
        remote = edge_lat(p, m[me], m[i], remote);
    }

    out->n = n;
    out->me = me;
    out->spans = spans;
    out->hier = spans && maxc >= 2 && even;
    out->L = maxc;
    out->K = maxc > 0 ? n / maxc : 1;
    out->remote_lat_s = remote;
    ring_set(&out->ring[NET_RING_FLAT], n, me, m[(me + 1) % n], m[(me + n - 1) % n], spans ? NET_NIC : NET_FABRIC,
             spans ? flat : p->fabric_latency_s);
    ring_set(&out->ring[NET_RING_INTRA], 1, 0, m[me], m[me], NET_FABRIC, p->fabric_latency_s);
    ring_set(&out->ring[NET_RING_INTER], 1, 0, m[me], m[me], NET_NIC, net_latency_s(p, NET_NIC));
    if (out->hier) hier_rings(p, m, n, me, ml, maxc, cnt, out);
}

void net_layout_all(const cfg_platform *p, const int *m, int n, int *cnt, int *scratch, net_layout *out)
{
    int *loc = scratch, *by_sn = scratch + n, *kcount = scratch + 2 * n, *by_loc = scratch + 3 * n;
    int sn0 = net_supernode_of(p, m[0]), maxc = 0, other = -1;
    bool spans = false;
    for (int i = 0; i < n; i++) {
        int s = net_supernode_of(p, m[i]);
        if (s != sn0 && other < 0) other = i;
        spans = spans || s != sn0;
        loc[i] = cnt[s]++;
        if (cnt[s] > maxc) maxc = cnt[s];
    }
    double flat = 0;
    for (int i = 0; spans && i < n; i++) flat = edge_lat(p, m[i], m[(i + 1) % n], flat);
    /* without tiers every route between supernodes has one latency */
    double remote_any = spans ? edge_lat(p, m[0], m[other], 0) : 0;
    bool even = true;
    for (int i = 0; i < n; i++) {
        int c = cnt[net_supernode_of(p, m[i])];
        if (c != maxc) even = false;
        net_layout *o = &out[i];
        o->n = n;
        o->me = i;
        o->spans = spans;
        o->L = maxc;
        o->K = maxc > 0 ? n / maxc : 1;
        o->local = c;
        double remote = 0;
        if (spans && net_tiers(p) == 0)
            remote = c < n ? remote_any : 0;
        else
            for (int j = 0; spans && j < n; j++) remote = edge_lat(p, m[i], m[j], remote);
        o->remote_lat_s = remote;
        ring_set(&o->ring[NET_RING_FLAT], n, i, m[(i + 1) % n], m[(i + n - 1) % n], spans ? NET_NIC : NET_FABRIC,
                 spans ? flat : p->fabric_latency_s);
        ring_set(&o->ring[NET_RING_INTRA], 1, 0, m[i], m[i], NET_FABRIC, p->fabric_latency_s);
        ring_set(&o->ring[NET_RING_INTER], 1, 0, m[i], m[i], NET_NIC, net_latency_s(p, NET_NIC));
    }
    for (int i = 0; i < n; i++) cnt[net_supernode_of(p, m[i])] = 0;
    bool hier = spans && maxc >= 2 && even;
    for (int i = 0; i < n; i++) out[i].hier = hier;
    if (!hier) return;
    /* hier: supernodes numbered by first appearance (cnt holds number + 1),
     * by_sn[ord * L + loc] and by_loc[loc * K + kpos] the members' indices */
    int L = maxc, K = n / maxc, next = 0;
    for (int i = 0; i < L; i++) kcount[i] = 0;
    for (int i = 0; i < n; i++) {
        int s = net_supernode_of(p, m[i]);
        if (loc[i] == 0) cnt[s] = ++next;
        by_sn[(cnt[s] - 1) * L + loc[i]] = i;
        int kpos = kcount[loc[i]]++;
        by_loc[loc[i] * K + kpos] = i;
        out[i].ring[NET_RING_INTER].me = kpos;
    }
    /* the inter ring of local index l: its slowest edge, wrap included */
    for (int l = 0; l < L; l++) {
        double klat = 0;
        for (int k = 0; k < K; k++) klat = edge_lat(p, m[by_loc[l * K + k]], m[by_loc[l * K + (k + 1) % K]], klat);
        kcount[l] = 0;
        for (int k = 0; k < K; k++) out[by_loc[l * K + k]].ring[NET_RING_INTER].lat_s = klat;
    }
    for (int i = 0; i < n; i++) {
        int base = (cnt[net_supernode_of(p, m[i])] - 1) * L, ml = loc[i], kpos = out[i].ring[NET_RING_INTER].me;
        double klat = out[i].ring[NET_RING_INTER].lat_s;
        ring_set(&out[i].ring[NET_RING_INTRA], L, ml, m[by_sn[base + (ml + 1) % L]], m[by_sn[base + (ml + L - 1) % L]],
                 NET_FABRIC, p->fabric_latency_s);
        ring_set(&out[i].ring[NET_RING_INTER], K, kpos, m[by_loc[ml * K + (kpos + 1) % K]],
                 m[by_loc[ml * K + (kpos + K - 1) % K]], NET_NIC, klat);
    }
    for (int i = 0; i < n; i++) cnt[net_supernode_of(p, m[i])] = 0;
}
