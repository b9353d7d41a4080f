/* test_net.c - the network rule: supernodes and planes, group layouts
 * (flat, hierarchical, uneven) against a naive construction, the algorithm
 * table, and each algorithm's phases and time against closed forms written
 * out here. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "net/net.h"
#include "lib/check_run.h"

static cfg_platform platform(int devices, int per_supernode)
{
    return fx_two_plane_platform(devices, per_supernode);
}

static int rel_eq(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) + 1e-300;
}

#define ASSERT_REL(got, want, tol)                                                                                  \
    ck_assert_msg(rel_eq((got), (want), (tol)), "%s = %.12g, want %.12g", #got, (double)(got), (double)(want))

/* Ring time written out: steps (alpha + step) + sent / (B eff), with
 * AR 2(n-1) steps of S/n, the others n-1. */
static double ring_closed(const cfg_platform *p, net_coll k, int n, double S, double B, double alpha)
{
    if (n <= 1) return 0.0;
    double steps = k == NET_ALLREDUCE ? 2.0 * (n - 1) : n - 1.0;
    return steps * (alpha + p->collective_step_s) + steps * (S / n) / (B * p->network_efficiency);
}

static const double LAT_IN = 2e-6, LAT_OUT = 8e-6, FAB = 100e9, NIC = 25e9;

/* Layout of members m[0..n) for member me, with a check that the scratch
 * is left zeroed. */
static net_layout layout(const cfg_platform *p, const int *m, int n, int me)
{
    int cnt[64] = {0};
    ck_assert_int_le(net_supernodes(p), 64);
    net_layout lo;
    net_layout_of(p, m, n, me, cnt, &lo);
    for (int i = 0; i < 64; i++) ck_assert_int_eq(cnt[i], 0);
    return lo;
}

/* {========================================================== devices */

START_TEST(test_supernodes_and_planes)
{
    cfg_platform p = platform(10, 4);
    ck_assert_int_eq(net_devices_per_supernode(&p), 4);
    ck_assert_int_eq(net_supernodes(&p), 3); /* the last one holds 2 */
    ck_assert_int_eq(net_supernode_of(&p, 3), 0);
    ck_assert_int_eq(net_supernode_of(&p, 4), 1);
    ck_assert_int_eq(net_supernode_of(&p, 9), 2);
    ck_assert_int_eq(net_plane_between(&p, 0, 3), NET_FABRIC);
    ck_assert_int_eq(net_plane_between(&p, 3, 4), NET_NIC);
    /* no supernode size: one supernode of every device */
    p.devices_per_supernode = 0;
    ck_assert_int_eq(net_devices_per_supernode(&p), 10);
    ck_assert_int_eq(net_supernodes(&p), 1);
    ck_assert_int_eq(net_supernode_of(&p, 9), 0);
    ck_assert_int_eq(net_plane_between(&p, 0, 9), NET_FABRIC);

    p = platform(8, 4);
    ck_assert_double_eq(net_latency_s(&p, NET_FABRIC), p.fabric_latency_s);
    ck_assert_double_eq(net_latency_s(&p, NET_NIC), p.nic_latency_s + p.spine_latency_s);
    ck_assert_double_eq(net_bytes_per_s(&p, NET_FABRIC), p.fabric_bytes_per_s);
    ck_assert_double_eq(net_bytes_per_s(&p, NET_NIC), p.nic_bytes_per_s);
    ck_assert_double_eq(net_efficiency(&p), 0.8);
    ASSERT_REL(net_p2p_s(&p, NET_NIC, 1e8), LAT_OUT + 1e8 / (NIC * 0.8), 1e-15);
    ASSERT_REL(net_p2p_s(&p, NET_FABRIC, 1e8), LAT_IN + 1e8 / (FAB * 0.8), 1e-15);
    p.network_efficiency = 0;
    ck_assert_double_eq(net_efficiency(&p), 1.0);
}
END_TEST

/* }========================================================== */

/* {========================================================== layouts */

/* Naive rings of member me: the intra ring lists my supernode's members in
 * members order; the inter ring lists, in members order, the members whose
 * rank among their supernode's members equals mine. */
static void naive_rings(const cfg_platform *p, const int *m, int n, int me, net_ring *intra, net_ring *inter)
{
    int loc[64], in[64], ac[64], ni = 0, na = 0;
    for (int i = 0; i < n; i++) {
        loc[i] = 0;
        for (int j = 0; j < i; j++) loc[i] += net_supernode_of(p, m[j]) == net_supernode_of(p, m[i]);
    }
    for (int i = 0; i < n; i++) {
        if (net_supernode_of(p, m[i]) == net_supernode_of(p, m[me])) in[ni++] = i;
        if (loc[i] == loc[me]) ac[na++] = i;
    }
    for (int k = 0; k < ni; k++)
        if (in[k] == me) *intra = (net_ring){ni, k, m[in[(k + 1) % ni]], m[in[(k + ni - 1) % ni]], NET_FABRIC, 0};
    for (int k = 0; k < na; k++)
        if (ac[k] == me) *inter = (net_ring){na, k, m[ac[(k + 1) % na]], m[ac[(k + na - 1) % na]], NET_NIC, 0};
}

static void assert_ring(const net_ring *got, const net_ring *want)
{
    ck_assert_int_eq(got->n, want->n);
    ck_assert_int_eq(got->me, want->me);
    ck_assert_int_eq(got->succ, want->succ);
    ck_assert_int_eq(got->pred, want->pred);
    ck_assert_int_eq(got->plane, want->plane);
}

START_TEST(test_layout_inside_one_supernode)
{
    cfg_platform p = platform(16, 4);
    const int m[4] = {4, 5, 6, 7};
    net_layout lo = layout(&p, m, 4, 2);
    ck_assert(!lo.spans);
    ck_assert(!lo.hier);
    ck_assert_int_eq(lo.local, 4);
    assert_ring(&lo.ring[NET_RING_FLAT], &(net_ring){4, 2, 7, 5, NET_FABRIC, 0});
    ck_assert_int_eq(lo.ring[NET_RING_INTRA].n, 1);
    ck_assert_int_eq(lo.ring[NET_RING_INTER].n, 1);
    ck_assert_int_eq(net_algo_of(&lo, NET_ALLREDUCE), NET_ALGO_RING);
    ck_assert_int_eq(net_algo_of(&lo, NET_ALLTOALL), NET_ALGO_PAIRWISE);
}
END_TEST

START_TEST(test_layout_straddling_evenly)
{
    cfg_platform p = platform(16, 4);
    /* in rank order, and strided (data parallel inside the supernode index) */
    const int block[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int strided[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    const int *cases[2] = {block, strided};
    for (int c = 0; c < 2; c++)
        for (int me = 0; me < 8; me++) {
            net_layout lo = layout(&p, cases[c], 8, me);
            ck_assert(lo.spans);
            ck_assert(lo.hier);
            ck_assert_int_eq(lo.L, 4);
            ck_assert_int_eq(lo.K, 2);
            ck_assert_int_eq(lo.local, 4);
            assert_ring(&lo.ring[NET_RING_FLAT],
                        &(net_ring){8, me, cases[c][(me + 1) % 8], cases[c][(me + 7) % 8], NET_NIC, 0});
            net_ring intra, inter;
            naive_rings(&p, cases[c], 8, me, &intra, &inter);
            assert_ring(&lo.ring[NET_RING_INTRA], &intra);
            assert_ring(&lo.ring[NET_RING_INTER], &inter);
            ck_assert_int_eq(net_algo_of(&lo, NET_ALLREDUCE), NET_ALGO_HIER);
            ck_assert_int_eq(net_algo_of(&lo, NET_ALLTOALL), NET_ALGO_PAIRWISE);
        }
    /* member 5 of the block group: intra 4 5 6 7, inter 1 5 */
    net_layout lo = layout(&p, block, 8, 5);
    assert_ring(&lo.ring[NET_RING_INTRA], &(net_ring){4, 1, 6, 4, NET_FABRIC, 0});
    assert_ring(&lo.ring[NET_RING_INTER], &(net_ring){2, 1, 1, 1, NET_NIC, 0});
    /* three supernodes of two, out of order */
    const int three[6] = {9, 0, 8, 1, 4, 5};
    for (int me = 0; me < 6; me++) {
        lo = layout(&p, three, 6, me);
        ck_assert(lo.hier);
        ck_assert_int_eq(lo.L, 2);
        ck_assert_int_eq(lo.K, 3);
        net_ring intra, inter;
        naive_rings(&p, three, 6, me, &intra, &inter);
        assert_ring(&lo.ring[NET_RING_INTRA], &intra);
        assert_ring(&lo.ring[NET_RING_INTER], &inter);
    }
}
END_TEST

START_TEST(test_layout_straddling_unevenly)
{
    cfg_platform p = platform(16, 4);
    /* 3 members in one supernode, 2 in the other: one flat ring over the NICs */
    const int uneven[5] = {0, 1, 2, 4, 5};
    net_layout lo = layout(&p, uneven, 5, 3);
    ck_assert(lo.spans);
    ck_assert(!lo.hier);
    ck_assert_int_eq(lo.local, 2);
    assert_ring(&lo.ring[NET_RING_FLAT], &(net_ring){5, 3, 5, 2, NET_NIC, 0});
    ck_assert_int_eq(lo.ring[NET_RING_INTRA].n, 1);
    ck_assert_int_eq(net_algo_of(&lo, NET_ALLREDUCE), NET_ALGO_RING);
    /* one member per supernode: flat as well */
    const int spread[4] = {0, 4, 8, 12};
    lo = layout(&p, spread, 4, 0);
    ck_assert(lo.spans);
    ck_assert(!lo.hier);
    ck_assert_int_eq(lo.L, 1);
    ck_assert_int_eq(lo.local, 1);
    ck_assert_int_eq(net_algo_of(&lo, NET_ALLGATHER), NET_ALGO_RING);
    /* a group of one */
    const int one[1] = {7};
    lo = layout(&p, one, 1, 0);
    ck_assert(!lo.spans);
    assert_ring(&lo.ring[NET_RING_FLAT], &(net_ring){1, 0, 7, 7, NET_FABRIC, 0});
}
END_TEST

/* }========================================================== */

/* {========================================================== algorithms */

/* net_layout_all gives every member what net_layout_of gives it, on flat,
 * even (strided and interleaved) and uneven groups. */
START_TEST(test_layout_all_is_layout_of_each)
{
    cfg_platform p = platform(48, 4);
    int groups[][12] = {
        {0, 1, 2, 3},                                   /* one supernode */
        {0, 4, 8, 12, 16, 20},                          /* one per supernode */
        {0, 1, 4, 5, 8, 9},                             /* two per supernode */
        {5, 1, 9, 4, 0, 8, 13, 12},                     /* two per supernode, interleaved order */
        {0, 1, 2, 4, 8, 9},                             /* uneven */
        {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8},         /* whole supernodes, reversed inside */
    };
    int sizes[] = {4, 6, 6, 8, 6, 12};
    for (int g = 0; g < 6; g++) {
        int n = sizes[g], cnt[64] = {0}, scratch[4 * 12];
        net_layout all[12];
        net_layout_all(&p, groups[g], n, cnt, scratch, all);
        for (int i = 0; i < 64; i++) ck_assert_int_eq(cnt[i], 0);
        for (int me = 0; me < n; me++) {
            net_layout one = layout(&p, groups[g], n, me);
            ck_assert_int_eq(all[me].n, one.n);
            ck_assert_int_eq(all[me].me, one.me);
            ck_assert_int_eq(all[me].spans, one.spans);
            ck_assert_int_eq(all[me].hier, one.hier);
            ck_assert_int_eq(all[me].L, one.L);
            ck_assert_int_eq(all[me].K, one.K);
            ck_assert_int_eq(all[me].local, one.local);
            ck_assert(all[me].remote_lat_s == one.remote_lat_s);
            for (int k = 0; k < NET_NRINGS; k++) {
                ck_assert_msg(all[me].ring[k].n == one.ring[k].n && all[me].ring[k].me == one.ring[k].me &&
                                  all[me].ring[k].succ == one.ring[k].succ && all[me].ring[k].pred == one.ring[k].pred &&
                                  all[me].ring[k].plane == one.ring[k].plane &&
                                  all[me].ring[k].lat_s == one.ring[k].lat_s,
                              "group %d member %d ring %d", g, me, k);
            }
        }
    }
}
END_TEST

START_TEST(test_ring_closed_forms)
{
    cfg_platform p = platform(16, 4);
    const double S = 256e6, B = 50e9, alpha = 3e-6;
    const double eff_bw = B * p.network_efficiency;
    for (int n = 2; n <= 64; n++) {
        for (int k = 0; k < NET_NCOLLS; k++) {
            net_phase ph = net_ring_phase((net_coll)k, n, S, alpha, B);
            int steps = k == NET_ALLREDUCE ? 2 * (n - 1) : n - 1;
            ck_assert_int_eq(ph.steps, steps);
            ck_assert_int_eq(net_coll_steps((net_coll)k, n), steps);
            ASSERT_REL(ph.chunk_bytes, S / n, 1e-15);
            /* the engine sends steps messages of one chunk: the same bytes */
            ASSERT_REL(ph.sent_bytes, steps * ph.chunk_bytes, 1e-14);
            ASSERT_REL(ph.sent_bytes, (k == NET_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n * S, 1e-14);
            /* alpha-beta, step by step: each step costs alpha + chunk/beta */
            double sum = 0;
            for (int s = 0; s < steps; s++) sum += alpha + p.collective_step_s + (S / n) / eff_bw;
            ASSERT_REL(net_phase_s(&p, &ph), sum, 1e-9);
            ASSERT_REL(net_phase_s(&p, &ph), ring_closed(&p, (net_coll)k, n, S, B, alpha), 1e-12);
            /* one flow of the whole traffic pays a route latency and the bytes; the tail the rest */
            ASSERT_REL(net_phase_tail_s(&p, &ph) + alpha + ph.sent_bytes / eff_bw, net_phase_s(&p, &ph), 1e-12);
        }
        /* AR = RS + AG, in steps and bytes */
        ck_assert_int_eq(net_coll_steps(NET_ALLREDUCE, n),
                         net_coll_steps(NET_REDUCESCATTER, n) + net_coll_steps(NET_ALLGATHER, n));
        ASSERT_REL(net_coll_sent_bytes(NET_ALLREDUCE, n, S),
                   net_coll_sent_bytes(NET_REDUCESCATTER, n, S) + net_coll_sent_bytes(NET_ALLGATHER, n, S), 1e-14);
    }
    /* large n: the all-reduce bandwidth term tends to 2S/B */
    net_phase big = net_ring_phase(NET_ALLREDUCE, 100000, S, 0.0, B);
    ASSERT_REL(net_phase_s(&p, &big) - 2 * (100000 - 1) * p.collective_step_s, 2 * S / eff_bw, 1e-4);
    /* no bytes still pays every step's latency; one member costs nothing */
    net_phase empty = net_ring_phase(NET_ALLREDUCE, 4, 0, 1e-5, B);
    ASSERT_REL(net_phase_s(&p, &empty), 6 * (1e-5 + p.collective_step_s), 1e-12);
    for (int k = 0; k < NET_NCOLLS; k++) {
        net_phase one = net_ring_phase((net_coll)k, 1, S, alpha, B);
        ck_assert_double_eq(net_phase_s(&p, &one), 0.0);
        ck_assert_double_eq(net_coll_sent_bytes((net_coll)k, 1, S), 0.0);
        ck_assert_int_eq(net_coll_steps((net_coll)k, 1), 0);
    }
    /* traffic without bandwidth never completes */
    net_phase stuck = net_ring_phase(NET_ALLGATHER, 4, S, alpha, 0);
    ck_assert(isinf(net_phase_s(&p, &stuck)));
}
END_TEST

START_TEST(test_flat_ring_time)
{
    cfg_platform p = platform(16, 4);
    const double S = 64e6;
    const int inside[4] = {0, 1, 2, 3}, uneven[5] = {0, 1, 2, 4, 5};
    net_layout a = layout(&p, inside, 4, 0), b = layout(&p, uneven, 5, 0);
    for (int k = 0; k < NET_ALLTOALL; k++) {
        net_phase ph[NET_MAX_PHASES];
        ck_assert_int_eq(net_coll_phases(&p, &a, (net_coll)k, S, ph), 1);
        ck_assert_int_eq(ph[0].ring, NET_RING_FLAT);
        ck_assert_int_eq(ph[0].op, k);
        ASSERT_REL(net_coll_s(&p, &a, (net_coll)k, S), ring_closed(&p, (net_coll)k, 4, S, FAB, LAT_IN), 1e-12);
        /* a flat ring across supernodes goes at the NIC's pace */
        ASSERT_REL(net_coll_s(&p, &b, (net_coll)k, S), ring_closed(&p, (net_coll)k, 5, S, NIC, LAT_OUT), 1e-12);
    }
    /* nothing to do: no bytes, or a group of one */
    net_phase ph[NET_MAX_PHASES];
    ck_assert_int_eq(net_coll_phases(&p, &a, NET_ALLREDUCE, 0.0, ph), 0);
    ck_assert_double_eq(net_coll_s(&p, &a, NET_ALLREDUCE, 0.0), 0.0);
    const int one[1] = {3};
    net_layout c = layout(&p, one, 1, 0);
    ck_assert_int_eq(net_coll_phases(&p, &c, NET_ALLTOALL, S, ph), 0);
}
END_TEST

START_TEST(test_hierarchical_is_the_sum_of_its_phases)
{
    cfg_platform p = platform(16, 4);
    const double S = 256e6;
    const int m[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    net_layout lo = layout(&p, m, 8, 0);
    net_phase ph[NET_MAX_PHASES];

    /* AR = intra RS of S + inter AR of S/4 + intra AG of S */
    ck_assert_int_eq(net_coll_phases(&p, &lo, NET_ALLREDUCE, S, ph), 3);
    ck_assert_int_eq(ph[0].op, NET_REDUCESCATTER);
    ck_assert_int_eq(ph[0].ring, NET_RING_INTRA);
    ck_assert_int_eq(ph[1].op, NET_ALLREDUCE);
    ck_assert_int_eq(ph[1].ring, NET_RING_INTER);
    ck_assert_int_eq(ph[1].n, 2);
    ASSERT_REL(ph[1].bytes, S / 4, 1e-15);
    ck_assert_int_eq(ph[2].op, NET_ALLGATHER);
    ck_assert_int_eq(ph[2].ring, NET_RING_INTRA);
    double ar = ring_closed(&p, NET_REDUCESCATTER, 4, S, FAB, LAT_IN) +
                ring_closed(&p, NET_ALLREDUCE, 2, S / 4, NIC, LAT_OUT) +
                ring_closed(&p, NET_ALLGATHER, 4, S, FAB, LAT_IN);
    ASSERT_REL(net_coll_s(&p, &lo, NET_ALLREDUCE, S), ar, 1e-12);
    double sum = 0;
    for (int i = 0; i < 3; i++) sum += net_phase_s(&p, &ph[i]);
    ck_assert_double_eq(net_coll_s(&p, &lo, NET_ALLREDUCE, S), sum);
    /* a flat ring would push 2*7/8 S through the NICs */
    ck_assert(ar < 0.5 * ring_closed(&p, NET_ALLREDUCE, 8, S, NIC, LAT_OUT));

    /* AG = inter AG of S/4, then intra AG; RS = intra RS, then inter RS of S/4 */
    ck_assert_int_eq(net_coll_phases(&p, &lo, NET_ALLGATHER, S, ph), 2);
    ck_assert_int_eq(ph[0].ring, NET_RING_INTER);
    ck_assert_int_eq(ph[1].ring, NET_RING_INTRA);
    ASSERT_REL(net_coll_s(&p, &lo, NET_ALLGATHER, S),
               ring_closed(&p, NET_ALLGATHER, 2, S / 4, NIC, LAT_OUT) + ring_closed(&p, NET_ALLGATHER, 4, S, FAB, LAT_IN),
               1e-12);
    ck_assert_int_eq(net_coll_phases(&p, &lo, NET_REDUCESCATTER, S, ph), 2);
    ck_assert_int_eq(ph[0].ring, NET_RING_INTRA);
    ck_assert_int_eq(ph[1].ring, NET_RING_INTER);
    ASSERT_REL(net_coll_s(&p, &lo, NET_REDUCESCATTER, S),
               ring_closed(&p, NET_REDUCESCATTER, 4, S, FAB, LAT_IN) +
                   ring_closed(&p, NET_REDUCESCATTER, 2, S / 4, NIC, LAT_OUT),
               1e-12);
    /* each member sends what one flat ring over all members would: 2(n-1)/n S */
    double sent = 0;
    ck_assert_int_eq(net_coll_phases(&p, &lo, NET_ALLREDUCE, S, ph), 3);
    for (int i = 0; i < 3; i++) sent += ph[i].sent_bytes;
    ASSERT_REL(sent, net_coll_sent_bytes(NET_ALLREDUCE, 8, S), 1e-14);
}
END_TEST

START_TEST(test_all_to_all_local_remote_split)
{
    cfg_platform p = platform(16, 4);
    const double S = 60e6;
    /* six members, three in each of two supernodes */
    const int m[6] = {0, 1, 2, 4, 5, 6};
    net_layout lo = layout(&p, m, 6, 1);
    ck_assert_int_eq(lo.local, 3);
    net_phase ph[NET_MAX_PHASES];
    ck_assert_int_eq(net_coll_phases(&p, &lo, NET_ALLTOALL, S, ph), 1);
    ck_assert_int_eq(ph[0].op, NET_ALLTOALL);
    ck_assert_int_eq(ph[0].steps, 5);
    ASSERT_REL(ph[0].local_bytes, 2 * S / 6, 1e-15);
    ASSERT_REL(ph[0].remote_bytes, 3 * S / 6, 1e-15);
    ASSERT_REL(ph[0].local_bytes + ph[0].remote_bytes, ph[0].sent_bytes, 1e-14);
    /* the fabric chunks and the NIC chunks go at once; the NIC ones take longer */
    double want = 5 * (LAT_OUT + p.collective_step_s) +
                  fmax(2 * S / 6 / FAB, 3 * S / 6 / NIC) / p.network_efficiency;
    ASSERT_REL(net_coll_s(&p, &lo, NET_ALLTOALL, S), want, 1e-12);
    /* a very slow fabric makes the local chunks the bottleneck */
    p.fabric_bytes_per_s = 1e9;
    want = 5 * (LAT_OUT + p.collective_step_s) + fmax(2 * S / 6 / 1e9, 3 * S / 6 / NIC) / p.network_efficiency;
    ASSERT_REL(net_coll_s(&p, &lo, NET_ALLTOALL, S), want, 1e-12);
    /* inside one supernode: n-1 steps on the fabric */
    p = platform(16, 4);
    const int in[4] = {8, 9, 10, 11};
    net_layout a = layout(&p, in, 4, 3);
    ASSERT_REL(net_coll_s(&p, &a, NET_ALLTOALL, S), ring_closed(&p, NET_ALLTOALL, 4, S, FAB, LAT_IN), 1e-12);
    ck_assert_int_eq(net_coll_phases(&p, &a, NET_ALLTOALL, S, ph), 1);
    ck_assert_double_eq(ph[0].remote_bytes, 0.0);
    /* one member per supernode: every chunk over the NIC */
    const int spread[4] = {0, 4, 8, 12};
    net_layout b = layout(&p, spread, 4, 2);
    ASSERT_REL(net_coll_s(&p, &b, NET_ALLTOALL, S), ring_closed(&p, NET_ALLTOALL, 4, S, NIC, LAT_OUT), 1e-12);
}
END_TEST

START_TEST(test_algorithm_table)
{
    const char *seen[NET_NALGOS];
    for (int a = 0; a < NET_NALGOS; a++) {
        seen[a] = net_algo_name((net_algo)a);
        ck_assert_str_ne(seen[a], "?");
        for (int b = 0; b < a; b++) ck_assert_str_ne(seen[a], seen[b]);
    }
    ck_assert_str_eq(net_algo_name(NET_NALGOS), "?");
    ck_assert_str_eq(net_algo_name(NET_ALGO_HIER), "hier");
}
END_TEST

/* }========================================================== */

static Suite *net_suite(void)
{
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("devices");
    tcase_add_test(tc, test_supernodes_and_planes);
    suite_add_tcase(s, tc);
    tc = tcase_create("layouts");
    tcase_add_test(tc, test_layout_inside_one_supernode);
    tcase_add_test(tc, test_layout_straddling_evenly);
    tcase_add_test(tc, test_layout_straddling_unevenly);
    tcase_add_test(tc, test_layout_all_is_layout_of_each);
    suite_add_tcase(s, tc);
    tc = tcase_create("algorithms");
    tcase_add_test(tc, test_ring_closed_forms);
    tcase_add_test(tc, test_flat_ring_time);
    tcase_add_test(tc, test_hierarchical_is_the_sum_of_its_phases);
    tcase_add_test(tc, test_all_to_all_local_remote_split);
    tcase_add_test(tc, test_algorithm_table);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(net_suite());
}
