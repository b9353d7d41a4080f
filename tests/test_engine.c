/* test_engine.c - the SimGrid replay engine: generated platform and its
 * routes, collectives against net's closed forms, flow vs step mode,
 * contention, overlap through streams, point-to-point pipelines, deadlock
 * reporting, and a whole step of a workload plan.
 *
 * SimGrid runs one simulation per process: every simulation here runs in a
 * child process of its own (sim_fork), which sends the result back through
 * a pipe, so that one test can compare several simulations. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixtures.h"
#include "cost/cost.h"
#include "net/net.h"
#include "engine/engine.h"
#include "estimate/estimate.h"
#include "model/model.h"
#include "workload/workload.h"
#include "lib/check_run.h"

/* {========================================================== fixtures */

static cfg_platform platform(int devices, int per_supernode)
{
    return fx_two_plane_platform(devices, per_supernode);
}

#define TW_MAXW 2048 /* ranks */
#define TW_MAXR 16   /* groups of a kind, members of a group */
#define TW_MAXP 32   /* ranks with a program */
#define TW_MAXI 64   /* instructions of a rank */

/* A hand-written workload: instruction lists for up to TW_MAXP ranks (the
 * others have empty programs), groups given as explicit member lists (a
 * rank outside every group of a kind is alone). */
typedef struct tw {
    int world;
    int slot[TW_MAXW];  /* 1 + index into ins, 0: empty program */
    int nslots;
    int n[TW_MAXP];
    wl_instr ins[TW_MAXP][TW_MAXI];
    int ngroups[WL_NGROUPS];
    int gsize[WL_NGROUPS][TW_MAXR];
    int gmem[WL_NGROUPS][TW_MAXR][TW_MAXR];
} tw;

typedef struct tw_prog {
    const tw *w;
    int rank, i;
} tw_prog;

static void *tw_new(void *ctx, int rank)
{
    tw_prog *p = calloc(1, sizeof *p);
    p->w = ctx;
    p->rank = rank;
    return p;
}

static bool tw_next(void *prog, wl_instr *out)
{
    tw_prog *p = prog;
    int k = p->w->slot[p->rank] - 1;
    if (k < 0 || p->i >= p->w->n[k]) return false;
    *out = p->w->ins[k][p->i++];
    return true;
}

static void tw_free(void *prog)
{
    free(prog);
}

static int tw_members(void *ctx, int rank, wl_group g, int *members, int *my_index)
{
    const tw *w = ctx;
    for (int k = 0; k < w->ngroups[g]; k++)
        for (int i = 0; i < w->gsize[g][k]; i++)
            if (w->gmem[g][k][i] == rank) {
                memcpy(members, w->gmem[g][k], (size_t)w->gsize[g][k] * sizeof *members);
                *my_index = i;
                return w->gsize[g][k];
            }
    members[0] = rank;
    *my_index = 0;
    return 1;
}

static void tw_init(tw *w, int world)
{
    ck_assert_int_le(world, TW_MAXW);
    memset(w, 0, sizeof *w);
    w->world = world;
}

static void tw_group(tw *w, wl_group g, int n, const int *members)
{
    int k = w->ngroups[g]++;
    w->gsize[g][k] = n;
    memcpy(w->gmem[g][k], members, (size_t)n * sizeof *members);
}

static wl_instr *tw_push(tw *w, int rank, wl_op op)
{
    if (!w->slot[rank]) {
        ck_assert_int_lt(w->nslots, TW_MAXP);
        w->slot[rank] = ++w->nslots;
    }
    int k = w->slot[rank] - 1;
    ck_assert_int_lt(w->n[k], TW_MAXI);
    wl_instr *in = &w->ins[k][w->n[k]++];
    memset(in, 0, sizeof *in);
    in->op = op;
    in->layer = in->micro = -1;
    return in;
}

static void tw_compute(tw *w, int rank, double s, wl_phase ph)
{
    wl_instr *in = tw_push(w, rank, WL_COMPUTE);
    in->seconds = s;
    in->phase = ph;
}

static void tw_coll(tw *w, int rank, wl_coll k, wl_group g, int stream, double bytes)
{
    wl_instr *in = tw_push(w, rank, WL_COLL);
    in->coll = k;
    in->group = g;
    in->stream = stream;
    in->bytes = bytes;
}

/* The same collective on every member of a group. */
static void tw_coll_all(tw *w, int n, const int *members, wl_coll k, wl_group g, int stream, double bytes)
{
    for (int i = 0; i < n; i++) tw_coll(w, members[i], k, g, stream, bytes);
}

static void tw_wait(tw *w, int rank, int stream, unsigned seq)
{
    wl_instr *in = tw_push(w, rank, WL_WAIT);
    in->stream = stream;
    in->seq = seq;
}

static void tw_p2p(tw *w, int rank, wl_op op, int peer, double bytes, wl_tag tag)
{
    wl_instr *in = tw_push(w, rank, op);
    in->group = WL_G_PP;
    in->peer = peer;
    in->bytes = bytes;
    in->tag = tag;
}

static eng_workload tw_workload(tw *w)
{
    eng_workload ew = {{w->world, w, tw_new, tw_next, tw_free, tw_members}, false, 0, NULL, NULL, false, 0, 0};
    return ew;
}

/* What a child simulation sends back. */
typedef struct outcome {
    sim_rc rc;
    eng_result res;
    sim_err err;
    int traced;          /* trace events seen */
    int traced_async;    /* of which on a stream */
    int trace_bad;       /* events with end < start or a wrong stream */
} outcome;

static void count_trace(void *ctx, int rank, const wl_instr *in, int stream, double start_s, double end_s)
{
    outcome *o = ctx;
    (void)rank;
    o->traced++;
    if (stream != WL_S_MAIN) o->traced_async++;
    bool async_coll = in->op == WL_COLL && in->stream != WL_S_MAIN;
    if (end_s < start_s || (async_coll ? stream != in->stream : stream != WL_S_MAIN)) o->trace_bad++;
}

/* Runs eng_run_workload (or eng_run when plan is set) in a child process
 * and returns what it produced. */
static outcome sim_fork(const cfg_platform *p, tw *w, const wl_plan *plan, const eng_options *opt)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        outcome o;
        memset(&o, 0, sizeof o);
        eng_options local;
        memset(&local, 0, sizeof local);
        if (opt) local = *opt;
        if (local.trace) local.trace_ctx = &o;
        if (plan) {
            o.rc = eng_run(p, plan, &local, &o.res, &o.err);
        } else {
            eng_workload ew = tw_workload(w);
            o.rc = eng_run_workload(p, &ew, &local, &o.res, &o.err);
        }
        ssize_t k = write(fd[1], &o, sizeof o);
        _exit(k == (ssize_t)sizeof o ? 0 : 3);
    }
    close(fd[1]);
    outcome o;
    memset(&o, 0, sizeof o);
    size_t got = 0;
    while (got < sizeof o) {
        ssize_t k = read(fd[0], (char *)&o + got, sizeof o - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "simulation child crashed (status %d)", status);
    ck_assert_uint_eq(got, sizeof o);
    return o;
}

static int cmp_words(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the space-separated words of s in place (route links as a set). */
static void sort_words(char *s)
{
    char copy[256], *w[32], *save = NULL;
    int n = 0;
    sim_strlcpy(copy, s, sizeof copy);
    for (char *t = strtok_r(copy, " ", &save); t && n < 32; t = strtok_r(NULL, " ", &save)) w[n++] = t;
    qsort(w, (size_t)n, sizeof *w, cmp_words);
    s[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (i) strcat(s, " ");
        strcat(s, w[i]);
    }
}

/* eng_routes in a child process. */
static void route_fork(const cfg_platform *p, int n, const int *src, const int *dst, eng_route *out)
{
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fd[0]);
        sim_err err = {{0}};
        sim_rc rc = eng_routes(p, n, src, dst, out, &err);
        ssize_t k = rc == SIM_OK ? write(fd[1], out, (size_t)n * sizeof *out) : -1;
        _exit(k == (ssize_t)((size_t)n * sizeof *out) ? 0 : 3);
    }
    close(fd[1]);
    size_t got = 0, want = (size_t)n * sizeof *out;
    while (got < want) {
        ssize_t k = read(fd[0], (char *)out + got, want - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "route child failed (status %d)", status);
    ck_assert_uint_eq(got, want);
}

static outcome sim_ok(const cfg_platform *p, tw *w, const eng_options *opt)
{
    outcome o = sim_fork(p, w, NULL, opt);
    ck_assert_msg(o.rc == SIM_OK, "simulation failed: %s", o.err.msg);
    return o;
}

static void assert_rel(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: got %.9g, want %.9g (tolerance %g)", what, got, want,
                  tol);
}

/* Alpha-beta time of a ring collective written out here, independently of
 * the cost module: steps * (latency + step) + sent / (bw * efficiency). */
static double ring_formula(const cfg_platform *p, wl_coll k, int n, double S, double bw, double lat)
{
    if (n <= 1) return 0;
    int steps = k == WL_ALLREDUCE ? 2 * (n - 1) : n - 1;
    double sent = (k == WL_ALLREDUCE ? 2.0 : 1.0) * (n - 1) / n * S;
    return steps * (lat + p->collective_step_s) + sent / (bw * p->network_efficiency);
}

/* net's phase of one ring (pairwise for A2A) of n members on links of bw
 * and lat per step, and its time. */
static double alpha_beta(const cfg_platform *p, net_coll k, int n, double S, double bw, double lat)
{
    net_phase ph = net_ring_phase(k, n, S, lat, bw);
    return net_phase_s(p, &ph);
}

/* net's closed form of collective k over group m[0..n): the slowest
 * member's (the step ends when the last member is done). */
static double net_time(const cfg_platform *p, net_coll k, const int *m, int n, double S)
{
    int cnt[64] = {0};
    ck_assert_int_le(net_supernodes(p), 64);
    double worst = 0.0;
    for (int me = 0; me < n; me++) {
        net_layout lo;
        net_layout_of(p, m, n, me, cnt, &lo);
        worst = fmax(worst, net_coll_s(p, &lo, k, S));
    }
    return worst;
}

static const int SN0[4] = {0, 1, 2, 3};
static const int ALL8[8] = {0, 1, 2, 3, 4, 5, 6, 7};

/* }========================================================== */

/* {========================================================== platform */

START_TEST(test_xml_layout)
{
    cfg_platform p = platform(10, 4);
    p.oversubscription = 2;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_err err = {{0}};
    ck_assert_int_eq(eng_platform_xml(&p, f, &err), SIM_OK);
    fclose(f);
    int hosts = 0;
    for (const char *s = buf; (s = strstr(s, "<host id=\"npu")); s++) hosts++;
    ck_assert_int_eq(hosts, 10);
    ck_assert_ptr_nonnull(strstr(buf, "<router id=\"sn2-fab\""));
    ck_assert_ptr_null(strstr(buf, "<router id=\"sn3-fab\""));
    ck_assert_ptr_nonnull(strstr(buf, "<host id=\"npu9\""));
    /* the partial last supernode has 2 devices: its uplink carries 2 NICs */
    double up0 = 0, up2 = 0;
    const char *s0 = strstr(buf, "<link id=\"up0\" bandwidth=\"");
    const char *s2 = strstr(buf, "<link id=\"up2\" bandwidth=\"");
    ck_assert_ptr_nonnull(s0);
    ck_assert_ptr_nonnull(s2);
    ck_assert_int_eq(sscanf(s0 + strlen("<link id=\"up0\" bandwidth=\""), "%lf", &up0), 1);
    ck_assert_int_eq(sscanf(s2 + strlen("<link id=\"up2\" bandwidth=\""), "%lf", &up2), 1);
    assert_rel(up0, 4 * p.nic_bytes_per_s / p.oversubscription, 1e-12, "uplink of a full supernode");
    assert_rel(up2, 2 * p.nic_bytes_per_s / p.oversubscription, 1e-12, "uplink of the partial supernode");
    free(buf);
}
END_TEST

START_TEST(test_xml_rejects_bad_platform)
{
    cfg_platform p = platform(8, 4);
    p.devices_per_supernode = 0;
    sim_err err = {{0}};
    FILE *f = fopen("/dev/null", "w");
    ck_assert_int_eq(eng_platform_xml(&p, f, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "devices_per_supernode"));
    p = platform(8, 4);
    p.oversubscription = 0.5;
    ck_assert_int_eq(eng_platform_xml(&p, f, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "oversubscription"));
    fclose(f);
}
END_TEST

START_TEST(test_routes_two_planes)
{
    cfg_platform p = platform(10, 4);
    int src[] = {0, 3, 1, 0, 6};
    int dst[] = {1, 2, 5, 9, 4};
    eng_route r[5];
    route_fork(&p, 5, src, dst, r);
    for (int i = 0; i < 5; i++) sort_words(r[i].links);
    /* inside a supernode: the fabric only */
    ck_assert_str_eq(r[0].links, "fab0_UP fab1_DOWN");
    ck_assert_str_eq(r[1].links, "fab2_DOWN fab3_UP");
    assert_rel(r[0].latency_s, p.fabric_latency_s, 1e-9, "intra latency");
    assert_rel(r[0].bandwidth_bytes_per_s, p.fabric_bytes_per_s, 1e-9, "intra bandwidth");
    ck_assert_str_eq(r[4].links, "fab4_DOWN fab6_UP");
    /* across supernodes without oversubscription: NIC to NIC, the uplinks
     * (which cannot limit anything) left out, the spine latency kept */
    ck_assert_str_eq(r[2].links, "nic1_UP nic5_DOWN pad1 pad5");
    ck_assert_str_eq(r[3].links, "nic0_UP nic9_DOWN pad0 pad9");
    assert_rel(r[2].latency_s, p.nic_latency_s + p.spine_latency_s, 1e-9, "inter latency");
    assert_rel(r[2].bandwidth_bytes_per_s, p.nic_bytes_per_s, 1e-9, "inter bandwidth");
    ck_assert_ptr_null(strstr(r[2].links, "fab"));
    /* oversubscribed: through the uplinks */
    p.oversubscription = 2;
    route_fork(&p, 5, src, dst, r);
    for (int i = 0; i < 5; i++) sort_words(r[i].links);
    ck_assert_str_eq(r[0].links, "fab0_UP fab1_DOWN");
    ck_assert_str_eq(r[2].links, "nic1_UP nic5_DOWN pad1 pad5 up0_UP up1_DOWN");
    ck_assert_str_eq(r[3].links, "nic0_UP nic9_DOWN pad0 pad9 up0_UP up2_DOWN");
    assert_rel(r[2].latency_s, p.nic_latency_s + p.spine_latency_s, 1e-9, "inter latency, uplinks");
    assert_rel(r[2].bandwidth_bytes_per_s, p.nic_bytes_per_s, 1e-9, "inter bandwidth, uplinks");
}
END_TEST

START_TEST(test_routes_across_zones)
{
    /* supernodes of 600 devices: one zone each, joined at the spine */
    cfg_platform p = platform(1500, 600);
    p.oversubscription = 1.5;
    int src[] = {0, 0, 1499, 601};
    int dst[] = {599, 600, 1200, 1450};
    eng_route r[4];
    route_fork(&p, 4, src, dst, r);
    for (int i = 0; i < 4; i++) sort_words(r[i].links);
    ck_assert_str_eq(r[0].links, "fab0_UP fab599_DOWN");
    ck_assert_str_eq(r[1].links, "grp0_UP grp1_DOWN nic0_UP nic600_DOWN pad0 pad600 up0_UP up1_DOWN");
    ck_assert_str_eq(r[2].links, "fab1200_DOWN fab1499_UP");
    ck_assert_str_eq(r[3].links, "grp1_UP grp2_DOWN nic1450_DOWN nic601_UP pad1450 pad601 up1_UP up2_DOWN");
    assert_rel(r[1].latency_s, p.nic_latency_s + p.spine_latency_s, 1e-9, "inter-zone latency");
    assert_rel(r[1].bandwidth_bytes_per_s, p.nic_bytes_per_s, 1e-9, "inter-zone bandwidth");
    assert_rel(r[0].latency_s, p.fabric_latency_s, 1e-9, "intra latency");
}
END_TEST

/* }========================================================== */

/* {========================================================== tiers */

/* Two tiers above supernodes of 4: leaves of 16 devices, spines of 32
 * (oversubscribed 2:1 towards the core), each with its own latency. */
static cfg_platform tiered(int devices, bool rails)
{
    cfg_platform p = platform(devices, 4);
    p.ntiers = 2;
    p.tiers[0] = (cfg_tier){.name = "leaf", .devices = 16, .oversubscription = 1, .latency_s = 0.5e-6,
                            .rails = rails};
    p.tiers[1] = (cfg_tier){.name = "spine", .devices = 32, .oversubscription = 2, .latency_s = 0.7e-6};
    if (rails) p.devices_per_node = 2; /* two rails: NIC k of every node of a leaf on switch k */
    return p;
}

/* Every route's latency is net's, and each crosses the fabric or its NICs
 * at their bandwidth (no uplink is thinner than one NIC). */
static void check_tier_routes(const cfg_platform *p, int stride_a, int stride_b)
{
    enum { N = 256 };
    int src[N] = {0}, dst[N] = {0}, n = 0;
    for (int a = 0; a < p->devices && n < N; a += stride_a)
        for (int b = (a + 1) % p->devices; n < N && b < p->devices; b += stride_b) {
            if (b == a) continue;
            src[n] = a;
            dst[n++] = b;
        }
    eng_route r[N];
    route_fork(p, n, src, dst, r);
    for (int i = 0; i < n; i++) {
        char what[320];
        snprintf(what, sizeof what, "route %d -> %d (%.256s)", src[i], dst[i], r[i].links);
        assert_rel(r[i].latency_s, net_route_latency_s(p, src[i], dst[i]), 1e-9, what);
        net_plane pl = net_plane_between(p, src[i], dst[i]);
        assert_rel(r[i].bandwidth_bytes_per_s, net_bytes_per_s(p, pl), 1e-9, what);
        ck_assert_msg((pl == NET_FABRIC) == (strstr(r[i].links, "nic") == NULL), "%s: plane", what);
    }
}

START_TEST(test_routes_tiers)
{
    cfg_platform p = tiered(64, false);
    check_tier_routes(&p, 3, 5);
    int src[] = {0, 0, 0, 0}, dst[] = {4, 16, 32, 3};
    eng_route r[4];
    route_fork(&p, 4, src, dst, r);
    for (int i = 0; i < 4; i++) sort_words(r[i].links);
    ck_assert_str_eq(r[0].links, "nic0_UP nic4_DOWN pad0 pad4");                                  /* one leaf */
    ck_assert_str_eq(r[1].links, "nic0_UP nic16_DOWN pad0 pad16 u0-0_UP u0-1_DOWN");              /* one spine */
    ck_assert_str_eq(r[2].links, "grp0 grp1 nic0_UP nic32_DOWN pad0 pad32 u0-0_UP u0-2_DOWN u1-0_UP u1-1_DOWN");
    ck_assert_str_eq(r[3].links, "fab0_UP fab3_DOWN");
    ck_assert_double_eq(net_route_latency_s(&p, 0, 32),
                        p.nic_latency_s + p.spine_latency_s + p.tiers[0].latency_s + p.tiers[1].latency_s);
    /* supernode uplinks below the leaves */
    p.oversubscription = 2;
    check_tier_routes(&p, 7, 3);
    /* rails: a route between rails leaves the leaf, one within a rail does not */
    cfg_platform q = tiered(64, true);
    check_tier_routes(&q, 3, 5);
    int s2[] = {0, 0, 1}, d2[] = {4, 5, 2};
    route_fork(&q, 3, s2, d2, r);
    for (int i = 0; i < 3; i++) sort_words(r[i].links);
    ck_assert_str_eq(r[0].links, "nic0_UP nic4_DOWN pad0 pad4 rpad0 rpad4");                       /* rail 0 */
    ck_assert_str_eq(r[1].links, "nic0_UP nic5_DOWN pad0 pad5 rpad0 rpad5 u0-0_UP u0-1_DOWN");      /* rail 0 -> 1 */
    ck_assert_str_eq(r[2].links, "fab1_UP fab2_DOWN fpad1 fpad2");                                  /* one supernode */
    /* zones of switches above the group zones (groups of 512 devices) */
    cfg_platform big = platform(4096, 8);
    big.ntiers = 3;
    big.tiers[0] = (cfg_tier){.devices = 256, .oversubscription = 1, .latency_s = 0.3e-6, .rails = true};
    big.tiers[1] = (cfg_tier){.devices = 1024, .oversubscription = 2, .latency_s = 0.5e-6};
    big.tiers[2] = (cfg_tier){.devices = 2048, .oversubscription = 3, .latency_s = 0.9e-6};
    big.devices_per_node = 8;
    check_tier_routes(&big, 301, 257);
}
END_TEST

/* A collective across tiers on an idle network takes net's closed form:
 * flat rings whose edges leave different tiers (the slowest edge sets
 * the step latency), a hierarchical all-reduce whose inter ring crosses
 * the spines, and pairwise all-to-alls whose routes all have one latency
 * (with routes of several, the engine's nearer chunks start first and the
 * phase ends up to their latency spread earlier: docs/network.md). */
START_TEST(test_tiers_collectives_take_net_closed_form)
{
    static const int flat[4] = {0, 16, 32, 48}, hier[8] = {0, 1, 16, 17, 32, 33, 48, 49}, a2a[4] = {0, 4, 8, 12}, a2a_core[2] = {4, 36};
    const struct {
        const int *m;
        int n;
        wl_coll k;
    } cases[] = {{flat, 4, WL_ALLREDUCE}, {flat, 4, WL_ALLGATHER}, {hier, 8, WL_ALLREDUCE},
                 {a2a, 4, WL_ALLTOALL},   {a2a_core, 2, WL_ALLTOALL}};
    for (int rails = 0; rails < 2; rails++) {
        cfg_platform p = tiered(64, rails);
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            double S = 64e6;
            tw w;
            tw_init(&w, 64);
            tw_group(&w, WL_G_DP, cases[c].n, cases[c].m);
            tw_coll_all(&w, cases[c].n, cases[c].m, cases[c].k, WL_G_DP, WL_S_MAIN, S);
            outcome o = sim_ok(&p, &w, NULL);
            char what[64];
            snprintf(what, sizeof what, "case %zu%s", c, rails ? ", rails" : "");
            assert_rel(o.res.step_time_s, net_time(&p, (net_coll)cases[c].k, cases[c].m, cases[c].n, S), 1e-9, what);
        }
    }
    /* the flat ring's step latency is that of its slowest edge, through the core */
    cfg_platform p = tiered(64, false);
    double lat = p.nic_latency_s + p.spine_latency_s + p.tiers[0].latency_s + p.tiers[1].latency_s;
    assert_rel(net_time(&p, NET_ALLREDUCE, flat, 4, 64e6), alpha_beta(&p, NET_ALLREDUCE, 4, 64e6, p.nic_bytes_per_s, lat),
               1e-12, "flat ring across the core");
}
END_TEST

/* Sixteen pairs cross from one spine to the other at once: with the
 * spines' uplinks 4:1 oversubscribed, 16 NICs share 4 NICs' worth, and
 * each pair's all-reduce moves its bytes at a quarter of the NIC's rate;
 * the leaves (1:1) never limit. */
START_TEST(test_tier_oversubscription_slows_by_ratio)
{
    double S = 128e6;
    tw w;
    tw_init(&w, 32);
    for (int r = 0; r < 16; r++) {
        const int pair[2] = {r, r + 16};
        tw_group(&w, WL_G_DP, 2, pair);
        tw_coll_all(&w, 2, pair, WL_ALLREDUCE, WL_G_DP, WL_S_MAIN, S);
    }
    cfg_platform p = platform(32, 4);
    p.ntiers = 2;
    p.tiers[0] = (cfg_tier){.devices = 8, .oversubscription = 1, .latency_s = 0.5e-6};
    p.tiers[1] = (cfg_tier){.devices = 16, .oversubscription = 1, .latency_s = 0.7e-6};
    double lat = net_route_latency_s(&p, 0, 16);
    assert_rel(lat, p.nic_latency_s + p.spine_latency_s + 1.2e-6, 1e-12, "route through the core");
    outcome a = sim_ok(&p, &w, NULL);
    assert_rel(a.res.step_time_s, alpha_beta(&p, NET_ALLREDUCE, 2, S, p.nic_bytes_per_s, lat), 1e-9,
               "1:1 tiers: no contention");
    p.tiers[1].oversubscription = 4;
    outcome b = sim_ok(&p, &w, NULL);
    assert_rel(b.res.step_time_s, alpha_beta(&p, NET_ALLREDUCE, 2, S, p.nic_bytes_per_s / 4, lat), 1e-9,
               "4:1 spine uplinks shared by 16 flows");
    double fixed = alpha_beta(&p, NET_ALLREDUCE, 2, 0, p.nic_bytes_per_s, lat); /* latencies alone */
    assert_rel((b.res.step_time_s - fixed) / (a.res.step_time_s - fixed), 4, 1e-9, "bytes take 4x as long");
    /* the same oversubscription at the leaves, whose uplinks carry 8 of the flows */
    p.tiers[1].oversubscription = 1;
    p.tiers[0].oversubscription = 4;
    outcome c = sim_ok(&p, &w, NULL);
    assert_rel(c.res.step_time_s, alpha_beta(&p, NET_ALLREDUCE, 2, S, p.nic_bytes_per_s * 2 / 8, lat), 1e-9,
               "4:1 leaf uplinks (2 NICs' worth) shared by 8 flows");
}
END_TEST

/* }========================================================== */

/* {========================================================== collectives */

START_TEST(test_ring_allreduce_matches_net)
{
    cfg_platform p = platform(8, 4);
    double S = 256e6;
    tw w;
    tw_init(&w, 8);
    tw_group(&w, WL_G_TP, 4, SN0);
    tw_coll_all(&w, 4, SN0, WL_ALLREDUCE, WL_G_TP, WL_S_MAIN, S);
    outcome o = sim_ok(&p, &w, NULL);
    double formula = ring_formula(&p, WL_ALLREDUCE, 4, S, p.fabric_bytes_per_s, p.fabric_latency_s);
    double closed = net_time(&p, NET_ALLREDUCE, SN0, 4, S);
    assert_rel(closed, formula, 1e-9, "net_coll_s vs the formula");
    /* uncontended, the flows take net's closed form (to the rounding of
     * wire bytes to whole bytes) */
    assert_rel(o.res.step_time_s, closed, 1e-9, "simulated ring all-reduce");
    assert_rel(o.res.critical.exposed_comm_s[WL_DIM_TP], o.res.step_time_s, 1e-6, "blocking AR is exposed");
    assert_rel(o.res.critical.comm_s[WL_DIM_TP], o.res.step_time_s, 1e-6, "AR in flight");
    assert_rel(o.res.bytes_total[WL_DIM_TP], 4 * net_coll_sent_bytes(NET_ALLREDUCE, 4, S), 1e-12, "bytes");
    ck_assert_int_eq(o.res.flows, 4);
    ck_assert_int_eq(o.res.instructions, 4);
}
END_TEST

START_TEST(test_small_allreduce_is_latency_bound)
{
    cfg_platform p = platform(8, 4);
    double S = 1024;
    tw w;
    tw_init(&w, 8);
    tw_group(&w, WL_G_TP, 4, SN0);
    tw_coll_all(&w, 4, SN0, WL_ALLREDUCE, WL_G_TP, WL_S_MAIN, S);
    outcome o = sim_ok(&p, &w, NULL);
    double formula = ring_formula(&p, WL_ALLREDUCE, 4, S, p.fabric_bytes_per_s, p.fabric_latency_s);
    assert_rel(o.res.step_time_s, formula, 0.01, "latency-bound ring all-reduce");
    ck_assert(o.res.step_time_s > 6 * (p.fabric_latency_s + p.collective_step_s));
}
END_TEST

START_TEST(test_allgather_reducescatter_alltoall)
{
    cfg_platform p = platform(8, 4);
    double S = 128e6;
    wl_coll kinds[3] = {WL_ALLGATHER, WL_REDUCESCATTER, WL_ALLTOALL};
    net_coll ckinds[3] = {NET_ALLGATHER, NET_REDUCESCATTER, NET_ALLTOALL};
    for (int k = 0; k < 3; k++) {
        tw w;
        tw_init(&w, 4);
        tw_group(&w, WL_G_CPU, 4, SN0);
        tw_coll_all(&w, 4, SN0, kinds[k], WL_G_CPU, WL_S_MAIN, S);
        outcome o = sim_ok(&p, &w, NULL);
        double want = alpha_beta(&p, ckinds[k], 4, S, p.fabric_bytes_per_s, p.fabric_latency_s);
        assert_rel(o.res.step_time_s, want, 0.01, wl_coll_name(kinds[k]));
        assert_rel(o.res.bytes_total[WL_DIM_CP], 4 * net_coll_sent_bytes(ckinds[k], 4, S), 1e-12, "bytes");
    }
}
END_TEST

START_TEST(test_flow_mode_agrees_with_step_mode)
{
    cfg_platform p = platform(8, 4);
    eng_options steps;
    memset(&steps, 0, sizeof steps);
    steps.comm_mode = ENG_STEPS;
    struct {
        wl_coll k;
        int n;
        const int *m;
        double S;
    } cases[] = {
        {WL_ALLREDUCE, 4, SN0, 64e6},
        {WL_ALLREDUCE, 8, ALL8, 64e6}, /* hierarchical */
        {WL_ALLGATHER, 8, ALL8, 64e6},
        {WL_REDUCESCATTER, 8, ALL8, 64e6},
        {WL_ALLTOALL, 4, SN0, 64e6}, /* pairwise steps = concurrent flows only on one plane */
        {WL_ALLREDUCE, 4, SN0, 64e3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tw w;
        tw_init(&w, 8);
        tw_group(&w, WL_G_DP, cases[c].n, cases[c].m);
        tw_coll_all(&w, cases[c].n, cases[c].m, cases[c].k, WL_G_DP, WL_S_MAIN, cases[c].S);
        outcome flow = sim_ok(&p, &w, NULL);
        outcome step = sim_ok(&p, &w, &steps);
        ck_assert(step.res.flows >= flow.res.flows);
        assert_rel(flow.res.step_time_s, step.res.step_time_s, 0.03, wl_coll_name(cases[c].k));
        assert_rel(flow.res.bytes_total[WL_DIM_DP], step.res.bytes_total[WL_DIM_DP], 1e-9, "same traffic");
    }
}
END_TEST

START_TEST(test_contention_slows_concurrent_allreduces)
{
    cfg_platform p = platform(8, 4);
    double S = 256e6;
    tw one, two;
    tw_init(&one, 4);
    tw_init(&two, 4);
    tw_group(&one, WL_G_TP, 4, SN0);
    tw_group(&two, WL_G_TP, 4, SN0);
    tw_group(&two, WL_G_DP, 4, SN0);
    for (int r = 0; r < 4; r++) {
        tw_coll(&one, r, WL_ALLREDUCE, WL_G_TP, WL_S_TP, S);
        tw_wait(&one, r, WL_S_TP, 1);
        tw_coll(&two, r, WL_ALLREDUCE, WL_G_TP, WL_S_TP, S);
        tw_coll(&two, r, WL_ALLREDUCE, WL_G_DP, WL_S_DP, S);
        tw_wait(&two, r, WL_S_TP, 1);
        tw_wait(&two, r, WL_S_DP, 1);
    }
    outcome a = sim_ok(&p, &one, NULL);
    outcome b = sim_ok(&p, &two, NULL);
    /* the two rings share every fabric link: twice the traffic per link */
    ck_assert_msg(b.res.step_time_s > 1.8 * a.res.step_time_s, "concurrent %g vs alone %g", b.res.step_time_s,
                  a.res.step_time_s);
    assert_rel(b.res.step_time_s, 2 * a.res.step_time_s, 0.05, "bandwidth halves");
    /* both streams were in flight the whole time */
    assert_rel(b.res.critical.comm_s[WL_DIM_TP], b.res.step_time_s, 0.01, "TP in flight");
    assert_rel(b.res.critical.comm_s[WL_DIM_DP], b.res.step_time_s, 0.01, "DP in flight");
}
END_TEST

START_TEST(test_across_supernodes_nic_governs)
{
    cfg_platform p = platform(8, 4);
    double S = 256e6;
    const int pair[2] = {1, 5};
    tw w;
    tw_init(&w, 8);
    tw_group(&w, WL_G_DP, 2, pair);
    tw_coll_all(&w, 2, pair, WL_ALLREDUCE, WL_G_DP, WL_S_MAIN, S);
    outcome o = sim_ok(&p, &w, NULL);
    double lat = p.nic_latency_s + p.spine_latency_s;
    double want = alpha_beta(&p, NET_ALLREDUCE, 2, S, p.nic_bytes_per_s, lat);
    assert_rel(o.res.step_time_s, want, 0.01, "ring over the NICs");
    double fabric = alpha_beta(&p, NET_ALLREDUCE, 2, S, p.fabric_bytes_per_s, p.fabric_latency_s);
    ck_assert(o.res.step_time_s > 3 * fabric);
}
END_TEST

START_TEST(test_oversubscribed_uplinks_are_shared)
{
    /* four pairs cross between the two supernodes at once */
    double S = 128e6;
    tw w;
    tw_init(&w, 8);
    for (int r = 0; r < 4; r++) {
        const int pair[2] = {r, r + 4};
        tw_group(&w, WL_G_DP, 2, pair);
        tw_coll_all(&w, 2, pair, WL_ALLREDUCE, WL_G_DP, WL_S_MAIN, S);
    }
    double lat = 6e-6 + 2e-6;
    cfg_platform full = platform(8, 4);
    outcome a = sim_ok(&full, &w, NULL);
    assert_rel(a.res.step_time_s, alpha_beta(&full, NET_ALLREDUCE, 2, S, full.nic_bytes_per_s, lat), 0.01,
               "uplinks of 4 NICs: no contention");
    cfg_platform over = platform(8, 4);
    over.oversubscription = 4; /* each uplink carries one NIC's worth */
    outcome b = sim_ok(&over, &w, NULL);
    assert_rel(b.res.step_time_s, alpha_beta(&over, NET_ALLREDUCE, 2, S, over.nic_bytes_per_s / 4, lat), 0.01,
               "4:1 oversubscribed uplinks shared by 4 flows");
}
END_TEST

START_TEST(test_hierarchical_allreduce)
{
    cfg_platform p = platform(8, 4);
    double S = 256e6;
    tw w;
    tw_init(&w, 8);
    tw_group(&w, WL_G_DP, 8, ALL8);
    tw_coll_all(&w, 8, ALL8, WL_ALLREDUCE, WL_G_DP, WL_S_MAIN, S);
    outcome o = sim_ok(&p, &w, NULL);
    double inter_lat = p.nic_latency_s + p.spine_latency_s;
    double want = alpha_beta(&p, NET_REDUCESCATTER, 4, S, p.fabric_bytes_per_s, p.fabric_latency_s) +
                  alpha_beta(&p, NET_ALLREDUCE, 2, S / 4, p.nic_bytes_per_s, inter_lat) +
                  alpha_beta(&p, NET_ALLGATHER, 4, S, p.fabric_bytes_per_s, p.fabric_latency_s);
    assert_rel(net_time(&p, NET_ALLREDUCE, ALL8, 8, S), want, 1e-12, "net: intra RS + inter AR + intra AG");
    assert_rel(o.res.step_time_s, want, 1e-9, "simulated intra RS + inter AR + intra AG");
    /* a flat ring would push 2*7/8 S through the slow NIC edges */
    double flat = alpha_beta(&p, NET_ALLREDUCE, 8, S, p.nic_bytes_per_s, inter_lat);
    ck_assert(o.res.step_time_s < 0.5 * flat);
}
END_TEST

START_TEST(test_one_member_per_supernode_is_flat)
{
    cfg_platform p = platform(16, 4);
    double S = 64e6;
    const int m[4] = {0, 4, 8, 12};
    tw w;
    tw_init(&w, 16);
    tw_group(&w, WL_G_DP, 4, m);
    tw_coll_all(&w, 4, m, WL_ALLGATHER, WL_G_DP, WL_S_MAIN, S);
    outcome o = sim_ok(&p, &w, NULL);
    double want = alpha_beta(&p, NET_ALLGATHER, 4, S, p.nic_bytes_per_s, p.nic_latency_s + p.spine_latency_s);
    assert_rel(o.res.step_time_s, want, 0.01, "flat ring across supernodes");
}
END_TEST

/* Every algorithm of net's table on every kind of layout: alone on the
 * network, the simulated collective takes net's closed form. */
START_TEST(test_idle_collectives_take_net_closed_form)
{
    static const int one_sn[4] = {0, 1, 2, 3}, spread[4] = {0, 4, 8, 12}, uneven[5] = {0, 1, 2, 4, 5};
    struct {
        const char *what;
        const int *m;
        int n;
        net_algo ring_algo;
    } groups[] = {
        {"one supernode", one_sn, 4, NET_ALGO_RING},
        {"two supernodes of 4", ALL8, 8, NET_ALGO_HIER},
        {"one member per supernode", spread, 4, NET_ALGO_RING},
        {"3 + 2 members", uneven, 5, NET_ALGO_RING},
    };
    const wl_coll kinds[4] = {WL_ALLREDUCE, WL_ALLGATHER, WL_REDUCESCATTER, WL_ALLTOALL};
    cfg_platform p = platform(16, 4);
    const double S = 96e6; /* whole wire bytes for every chunk size here */
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        int cnt[64] = {0};
        net_layout lo;
        net_layout_of(&p, groups[g].m, groups[g].n, 0, cnt, &lo);
        ck_assert_int_eq(net_algo_of(&lo, NET_ALLREDUCE), groups[g].ring_algo);
        for (int k = 0; k < 4; k++) {
            tw w;
            tw_init(&w, 16);
            tw_group(&w, WL_G_DP, groups[g].n, groups[g].m);
            tw_coll_all(&w, groups[g].n, groups[g].m, kinds[k], WL_G_DP, WL_S_MAIN, S);
            outcome o = sim_ok(&p, &w, NULL);
            double want = net_time(&p, (net_coll)kinds[k], groups[g].m, groups[g].n, S);
            ck_assert_msg(fabs(o.res.step_time_s - want) <= 1e-9 * want, "%s, %s: simulated %.12g s, net %.12g s",
                          groups[g].what, wl_coll_name(kinds[k]), o.res.step_time_s, want);
        }
    }
    /* A pairwise phase whose fabric chunks outlast its NIC chunks: the flows
     * end one fabric route latency after their bytes, net charges the NIC
     * latency of the phase (docs/network.md). */
    p.fabric_bytes_per_s = 10e9;
    tw w;
    tw_init(&w, 16);
    tw_group(&w, WL_G_DP, 8, ALL8);
    tw_coll_all(&w, 8, ALL8, WL_ALLTOALL, WL_G_DP, WL_S_MAIN, S);
    outcome o = sim_ok(&p, &w, NULL);
    double want = net_time(&p, NET_ALLTOALL, ALL8, 8, S);
    double gap = net_latency_s(&p, NET_NIC) - net_latency_s(&p, NET_FABRIC);
    ck_assert_msg(fabs(o.res.step_time_s - (want - gap)) <= 1e-9 * want, "slow fabric: simulated %.12g s, net %.12g s",
                  o.res.step_time_s, want);
}
END_TEST

/* }========================================================== */

/* {========================================================== programs */

START_TEST(test_single_rank_computes_sum)
{
    cfg_platform p = platform(1, 4);
    tw w;
    tw_init(&w, 1);
    double secs[] = {0.5, 0.25, 1e-3, 3.75e-5, 0.125};
    wl_phase ph[] = {WL_PH_FORWARD, WL_PH_BACKWARD, WL_PH_RECOMPUTE, WL_PH_BACKWARD, WL_PH_OPTIMIZER};
    double sum = 0, bwd = 0;
    for (int i = 0; i < 5; i++) {
        tw_compute(&w, 0, secs[i], ph[i]);
        sum += secs[i];
        if (ph[i] == WL_PH_BACKWARD) bwd += secs[i];
    }
    outcome o = sim_ok(&p, &w, NULL);
    assert_rel(o.res.step_time_s, sum, 1e-9, "step time");
    assert_rel(o.res.critical.compute_s, sum, 1e-9, "compute");
    assert_rel(o.res.critical.compute_by_phase_s[WL_PH_BACKWARD], bwd, 1e-9, "backward");
    assert_rel(o.res.critical.compute_by_phase_s[WL_PH_OPTIMIZER], 0.125, 1e-9, "optimizer");
    ck_assert_int_eq(o.res.critical_rank, 0);
    ck_assert_int_eq(o.res.instructions, 5);
    ck_assert_int_eq(o.res.flows, 0);
}
END_TEST

START_TEST(test_stream_overlaps_compute)
{
    cfg_platform p = platform(8, 4);
    double S = 256e6;
    double tc = alpha_beta(&p, NET_ALLREDUCE, 4, S, p.fabric_bytes_per_s, p.fabric_latency_s);
    double factors[2] = {2.0, 0.5}; /* compute longer, then shorter than the comm */
    for (int f = 0; f < 2; f++) {
        double tp = factors[f] * tc;
        tw w;
        tw_init(&w, 4);
        tw_group(&w, WL_G_TP, 4, SN0);
        for (int r = 0; r < 4; r++) {
            tw_coll(&w, r, WL_ALLREDUCE, WL_G_TP, WL_S_TP, S);
            tw_compute(&w, r, tp, WL_PH_FORWARD);
            tw_wait(&w, r, WL_S_TP, 1);
        }
        outcome o = sim_ok(&p, &w, NULL);
        assert_rel(o.res.step_time_s, fmax(tc, tp), 0.01, "overlap: max, not sum");
        assert_rel(o.res.critical.comm_s[WL_DIM_TP], tc, 0.01, "comm in flight");
        double exposed = fmax(0, tc - tp);
        ck_assert_msg(fabs(o.res.critical.exposed_comm_s[WL_DIM_TP] - exposed) <= 0.01 * tc, "exposed %g, want %g",
                      o.res.critical.exposed_comm_s[WL_DIM_TP], exposed);
    }
}
END_TEST

START_TEST(test_unwaited_stream_is_drained)
{
    cfg_platform p = platform(8, 4);
    double S = 256e6;
    double tc = alpha_beta(&p, NET_ALLREDUCE, 4, S, p.fabric_bytes_per_s, p.fabric_latency_s);
    tw w;
    tw_init(&w, 4);
    tw_group(&w, WL_G_DP, 4, SN0);
    for (int r = 0; r < 4; r++) {
        tw_coll(&w, r, WL_ALLREDUCE, WL_G_DP, WL_S_DP, S);
        tw_coll(&w, r, WL_ALLREDUCE, WL_G_DP, WL_S_DP, S);
        tw_compute(&w, r, tc / 4, WL_PH_BACKWARD);
    }
    outcome o = sim_ok(&p, &w, NULL);
    /* the step ends when the stream's two ops are done, one after the other */
    assert_rel(o.res.step_time_s, 2 * tc, 0.01, "stream ops run in order");
    assert_rel(o.res.critical.exposed_comm_s[WL_DIM_DP], 2 * tc - tc / 4, 0.01, "drain is exposed");
}
END_TEST

START_TEST(test_pipeline_send_recv)
{
    cfg_platform p = platform(8, 4);
    const int pp[2] = {0, 1};
    int M = 4;
    double f = 1e-3, B = 20e6;
    tw w;
    tw_init(&w, 2);
    tw_group(&w, WL_G_PP, 2, pp);
    for (int m = 0; m < M; m++) {
        tw_compute(&w, 0, f, WL_PH_FORWARD);
        tw_p2p(&w, 0, WL_SEND, 1, B, WL_TAG_FWD);
        tw_p2p(&w, 1, WL_RECV, 0, B, WL_TAG_FWD);
        tw_compute(&w, 1, f, WL_PH_FORWARD);
    }
    outcome o = sim_ok(&p, &w, NULL);
    /* sends are eager: only the first receive waits */
    double t = p.fabric_latency_s + B / (p.fabric_bytes_per_s * p.network_efficiency);
    ck_assert(t < f);
    assert_rel(o.res.step_time_s, (M + 1) * f + t, 1e-4, "pipeline of 2 stages");
    ck_assert_int_eq(o.res.critical_rank, 1);
    assert_rel(o.res.critical.bubble_s, f + t, 1e-3, "bubble of the second stage");
    ck_assert(o.res.critical.exposed_comm_s[WL_DIM_PP] == 0);
    assert_rel(o.res.bytes_total[WL_DIM_PP], M * B, 1e-12, "pp bytes");
    ck_assert_int_eq(o.res.flows, M);
}
END_TEST

START_TEST(test_pipeline_round_trip)
{
    /* forward to the next stage and the gradient back, twice */
    cfg_platform p = platform(8, 4);
    const int pp[2] = {2, 6}; /* across supernodes */
    double f = 1e-3, B = 8e6;
    tw w;
    tw_init(&w, 8);
    tw_group(&w, WL_G_PP, 2, pp);
    for (int m = 0; m < 2; m++) {
        tw_compute(&w, 2, f, WL_PH_FORWARD);
        tw_p2p(&w, 2, WL_SEND, 6, B, WL_TAG_FWD);
        tw_p2p(&w, 6, WL_RECV, 2, B, WL_TAG_FWD);
        tw_compute(&w, 6, 2 * f, WL_PH_BACKWARD);
        tw_p2p(&w, 6, WL_SEND, 2, B, WL_TAG_BWD);
    }
    for (int m = 0; m < 2; m++) {
        tw_p2p(&w, 2, WL_RECV, 6, B, WL_TAG_BWD);
        tw_compute(&w, 2, 2 * f, WL_PH_BACKWARD);
    }
    outcome o = sim_ok(&p, &w, NULL);
    double t = p.nic_latency_s + p.spine_latency_s + B / (p.nic_bytes_per_s * p.network_efficiency);
    /* stage 1 gets the first activation at f + t and sends its first
     * gradient at 3f + t; stage 0, idle since 2f, has it at 3f + 2t, then
     * runs two backwards of 2f (the second gradient lands at 5f + 2t) */
    assert_rel(o.res.step_time_s, 7 * f + 2 * t, 1e-4, "round trip");
    assert_rel(o.res.critical.bubble_s, f + 2 * t, 1e-3, "stage 0 waits for its first gradient");
    ck_assert_int_eq(o.res.critical_rank, 2);
}
END_TEST

START_TEST(test_pipeline_across_zones)
{
    /* the same pipeline between supernodes of 600 devices (one zone each) */
    cfg_platform p = platform(1200, 600);
    const int pp[2] = {5, 605};
    int M = 4;
    double f = 1e-3, B = 8e6;
    tw w;
    tw_init(&w, 1200);
    tw_group(&w, WL_G_PP, 2, pp);
    for (int m = 0; m < M; m++) {
        tw_compute(&w, 5, f, WL_PH_FORWARD);
        tw_p2p(&w, 5, WL_SEND, 605, B, WL_TAG_FWD);
        tw_p2p(&w, 605, WL_RECV, 5, B, WL_TAG_FWD);
        tw_compute(&w, 605, f, WL_PH_FORWARD);
    }
    outcome o = sim_ok(&p, &w, NULL);
    double t = p.nic_latency_s + p.spine_latency_s + B / (p.nic_bytes_per_s * p.network_efficiency);
    assert_rel(o.res.step_time_s, (M + 1) * f + t, 1e-4, "pipeline across zones");
}
END_TEST

/* Many independent pipelines between two zones, sends staggered in time:
 * nothing is shared that could slow a transfer, so every message takes
 * exactly latency + size / NIC bandwidth. */
static void staggered_pipelines(const char *simgrid_option)
{
    cfg_platform p = platform(1200, 600);
    int npipes = 12;
    double B = 8e6;
    tw w;
    tw_init(&w, 1200);
    for (int i = 0; i < npipes; i++) {
        const int pp[2] = {i, 600 + i};
        tw_group(&w, WL_G_PP, 2, pp);
        for (int m = 0; m < 3; m++) {
            tw_compute(&w, i, 1e-4 * (i + 1) + 1e-3 * m, WL_PH_FORWARD);
            tw_p2p(&w, i, WL_SEND, 600 + i, B * (1 + 0.1 * i), WL_TAG_FWD);
            tw_p2p(&w, 600 + i, WL_RECV, i, 0, WL_TAG_FWD);
        }
        tw_compute(&w, 600 + i, 1e-5, WL_PH_FORWARD);
    }
    sim_err err = {{0}};
    if (simgrid_option) ck_assert_int_eq(eng_simgrid_option(simgrid_option, &err), SIM_OK);
    eng_options opt;
    memset(&opt, 0, sizeof opt);
    opt.trace = count_trace;
    outcome o = sim_ok(&p, &w, &opt);
    /* the last pipeline sends last: its last message decides the step */
    int i = npipes - 1;
    double sent = 1e-4 * (i + 1) * 3 + 1e-3 * 3;
    double t = p.nic_latency_s + p.spine_latency_s + B * (1 + 0.1 * i) / (p.nic_bytes_per_s * p.network_efficiency);
    assert_rel(o.res.step_time_s, sent + t + 1e-5, 1e-6, "independent transfers between zones");
}

START_TEST(test_transfers_between_zones_are_exact)
{
    staggered_pipelines(NULL);
}
END_TEST

START_TEST(test_deadlock_is_reported)
{
    cfg_platform p = platform(8, 4);
    const int pp[2] = {0, 1};
    tw w;
    tw_init(&w, 3);
    tw_group(&w, WL_G_PP, 2, pp);
    tw_compute(&w, 0, 1e-3, WL_PH_FORWARD);
    tw_p2p(&w, 0, WL_RECV, 1, 1e6, WL_TAG_BWD); /* nobody sends it */
    tw_compute(&w, 1, 2e-3, WL_PH_FORWARD);
    tw_compute(&w, 2, 1e-3, WL_PH_FORWARD);
    tw_wait(&w, 2, WL_S_TP, 0);
    outcome o = sim_fork(&p, &w, NULL, NULL);
    ck_assert_int_eq(o.rc, SIM_EINTERNAL);
    ck_assert_msg(strstr(o.err.msg, "deadlocked") != NULL, "message: %s", o.err.msg);
    ck_assert_msg(strstr(o.err.msg, "1 rank did not finish") != NULL, "message: %s", o.err.msg);
    ck_assert_msg(strstr(o.err.msg, "rank 0 at instruction 2") != NULL, "message: %s", o.err.msg);
}
END_TEST

START_TEST(test_collective_deadlock_is_reported)
{
    /* rank 3 never joins the all-reduce of its group */
    cfg_platform p = platform(8, 4);
    tw w;
    tw_init(&w, 4);
    tw_group(&w, WL_G_TP, 4, SN0);
    tw_coll_all(&w, 3, SN0, WL_ALLREDUCE, WL_G_TP, WL_S_TP, 1e6);
    for (int r = 0; r < 3; r++) tw_wait(&w, r, WL_S_TP, 1);
    tw_compute(&w, 3, 1e-3, WL_PH_FORWARD);
    outcome o = sim_fork(&p, &w, NULL, NULL);
    ck_assert_int_eq(o.rc, SIM_EINTERNAL);
    /* in flow mode a rank is done once its own two flows are: rank 1's
     * neighbours 0 and 2 both joined, so only 0 and 2 wait for rank 3 */
    ck_assert_msg(strstr(o.err.msg, "2 ranks did not finish (first: rank 0 at instruction 2, wait") != NULL,
                  "message: %s", o.err.msg);
}
END_TEST

START_TEST(test_invalid_programs_fail_cleanly)
{
    cfg_platform p = platform(8, 4);
    tw w;
    tw_init(&w, 2);
    tw_p2p(&w, 0, WL_SEND, 7, 1e3, WL_TAG_FWD); /* rank 7 does not exist */
    outcome o = sim_fork(&p, &w, NULL, NULL);
    ck_assert_int_eq(o.rc, SIM_EINTERNAL);
    ck_assert_msg(strstr(o.err.msg, "peer 7") != NULL, "message: %s", o.err.msg);

    tw_init(&w, 2);
    tw_wait(&w, 1, WL_S_DP, 2); /* nothing was started on that stream */
    o = sim_fork(&p, &w, NULL, NULL);
    ck_assert_int_eq(o.rc, SIM_EINTERNAL);
    ck_assert_msg(strstr(o.err.msg, "stream 4") != NULL, "message: %s", o.err.msg);

    tw_init(&w, 9); /* more ranks than devices */
    o = sim_fork(&p, &w, NULL, NULL);
    ck_assert_int_eq(o.rc, SIM_EINVAL);
    ck_assert_msg(strstr(o.err.msg, "devices") != NULL, "message: %s", o.err.msg);
}
END_TEST

START_TEST(test_trace_and_dump)
{
    cfg_platform p = platform(8, 4);
    tw w;
    tw_init(&w, 4);
    tw_group(&w, WL_G_TP, 4, SN0);
    for (int r = 0; r < 4; r++) {
        tw_coll(&w, r, WL_ALLREDUCE, WL_G_TP, WL_S_TP, 1e6);
        tw_compute(&w, r, 1e-3, WL_PH_FORWARD);
        tw_coll(&w, r, WL_ALLGATHER, WL_G_TP, WL_S_MAIN, 1e6);
        tw_wait(&w, r, WL_S_TP, 1);
    }
    bool only[4] = {false, true, false, false};
    char path[] = "/tmp/heptasim-test-dump-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    eng_options opt;
    memset(&opt, 0, sizeof opt);
    opt.trace = count_trace;
    opt.trace_rank = only;
    opt.dump_xml_path = path;
    outcome o = sim_ok(&p, &w, &opt);
    ck_assert_int_eq(o.traced, 4); /* rank 1's four instructions */
    ck_assert_int_eq(o.traced_async, 1);
    ck_assert_int_eq(o.trace_bad, 0);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    int hosts = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "<host id=\"npu")) hosts++;
    fclose(f);
    unlink(path);
    ck_assert_int_eq(hosts, 8);
}
END_TEST

START_TEST(test_simgrid_options)
{
    sim_err err = {{0}};
    ck_assert_int_eq(eng_simgrid_option("network/model:LV08", &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "--cfg="));
    ck_assert_int_eq(eng_simgrid_option("--cfg=", &err), SIM_EINVAL);

    cfg_platform p = platform(8, 4);
    double S = 256e6;
    tw w;
    tw_init(&w, 4);
    tw_group(&w, WL_G_TP, 4, SN0);
    tw_coll_all(&w, 4, SN0, WL_ALLREDUCE, WL_G_TP, WL_S_MAIN, S);
    outcome plain = sim_ok(&p, &w, NULL);
    /* a TCP window caps every flow at gamma / (2 * route latency), here
     * 64 KiB / 4 us = 16 GB/s, far below the fabric's 80 GB/s */
    ck_assert_int_eq(eng_simgrid_option("--cfg=network/TCP-gamma:65536", &err), SIM_OK);
    outcome capped = sim_ok(&p, &w, NULL);
    ck_assert_msg(capped.res.step_time_s > 4 * plain.res.step_time_s, "capped %g vs %g", capped.res.step_time_s,
                  plain.res.step_time_s);
}
END_TEST

/* }========================================================== */

/* {========================================================== a plan */

static cfg_model tiny_model(void)
{
    return fx_dense_model(4, 512, 8, 2048, 8000, 512);
}

static cfg_strategy tiny_strategy(int dp, int pp, int tp)
{
    return fx_strategy(dp, pp, tp, 4);
}

START_TEST(test_plan_single_device_is_sum_of_ops)
{
    cfg_model m = tiny_model();
    cfg_platform p = platform(1, 4);
    cfg_strategy s = tiny_strategy(1, 1, 1);
    sim_err err = {{0}};
    cost_model *c = cost_new(&p, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    wl_plan *plan = NULL;
    ck_assert_msg(wl_plan_new(&m, &p, &s, c, &plan, &err) == SIM_OK, "%s", err.msg);
    double by_phase[WL_NPHASES] = {0};
    double total = wl_rank_compute_s(plan, 0, by_phase);
    ck_assert(total > 0);
    outcome o = sim_fork(&p, NULL, plan, NULL);
    ck_assert_msg(o.rc == SIM_OK, "%s", o.err.msg);
    assert_rel(o.res.step_time_s, total, 1e-6, "1 device: the sum of its op times");
    for (int ph = 0; ph < WL_NPHASES; ph++)
        ck_assert_msg(fabs(o.res.critical.compute_by_phase_s[ph] - by_phase[ph]) <= 1e-6 * total,
                      "phase %s: %g vs %g", wl_phase_name((wl_phase)ph), o.res.critical.compute_by_phase_s[ph],
                      by_phase[ph]);
    wl_plan_free(plan);
    cost_free(c);
}
END_TEST

START_TEST(test_plan_parallel_step_runs)
{
    cfg_model m = tiny_model();
    cfg_platform p = platform(8, 4);
    cfg_strategy s = tiny_strategy(2, 2, 2);
    sim_err err = {{0}};
    cost_model *c = cost_new(&p, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    wl_plan *plan = NULL;
    ck_assert_msg(wl_plan_new(&m, &p, &s, c, &plan, &err) == SIM_OK, "%s", err.msg);
    eng_options opt;
    memset(&opt, 0, sizeof opt);
    opt.trace = count_trace;
    outcome o = sim_fork(&p, NULL, plan, &opt);
    ck_assert_msg(o.rc == SIM_OK, "%s", o.err.msg);
    double crit_compute = wl_rank_compute_s(plan, o.res.critical_rank, NULL);
    ck_assert(o.res.step_time_s >= crit_compute * (1 - 1e-9));
    assert_rel(o.res.critical.compute_s, crit_compute, 1e-6, "critical rank computes its program");
    ck_assert(o.res.bytes_total[WL_DIM_TP] > 0);
    ck_assert(o.res.bytes_total[WL_DIM_PP] > 0);
    ck_assert(o.res.bytes_total[WL_DIM_DP] > 0);
    ck_assert(o.res.critical.bubble_s > 0);
    /* a stage (TP 2 x DP 2) in lockstep: one simulated rank traces for its class */
    ck_assert_int_eq(o.res.lockstep, 4);
    ck_assert_int_eq(o.res.ranks_simulated, 2);
    ck_assert_int_eq(o.traced, (int)o.res.instructions * o.res.lockstep);
    ck_assert_int_eq(o.trace_bad, 0);
    wl_plan_free(plan);
    cost_free(c);
}
END_TEST

/* Runs the plan of (m, p, s) with and without lockstep TP groups and checks
 * that they agree to rounding, in every figure of the result. */
static void check_lockstep_exact(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, int lockstep)
{
    sim_err err = {{0}};
    cost_model *c = cost_new(p, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    wl_plan *plan = NULL;
    ck_assert_msg(wl_plan_new(m, p, s, c, &plan, &err) == SIM_OK, "%s", err.msg);
    eng_options every;
    memset(&every, 0, sizeof every);
    every.symmetry = ENG_SYM_NONE;
    outcome a = sim_fork(p, NULL, plan, NULL), b = sim_fork(p, NULL, plan, &every);
    ck_assert_msg(a.rc == SIM_OK && b.rc == SIM_OK, "%s %s", a.err.msg, b.err.msg);
    ck_assert_int_eq(a.res.lockstep, lockstep);
    ck_assert_int_eq(b.res.lockstep, 1);
    ck_assert_int_eq(b.res.ranks_simulated, wl_world(plan));
    ck_assert_int_eq(a.res.ranks_simulated * lockstep, wl_world(plan));
    ck_assert_int_eq(a.res.instructions * lockstep, b.res.instructions);
    ck_assert_int_eq(a.res.critical_rank, b.res.critical_rank);
    const double tol = 1e-12;
    assert_rel(a.res.step_time_s, b.res.step_time_s, tol, "step time");
    assert_rel(a.res.critical.compute_s, b.res.critical.compute_s, tol, "compute");
    ck_assert(fabs(a.res.critical.bubble_s - b.res.critical.bubble_s) <= tol * b.res.step_time_s);
    for (int d = 0; d < WL_NDIMS; d++) {
        double scale = b.res.step_time_s;
        ck_assert_msg(fabs(a.res.critical.exposed_comm_s[d] - b.res.critical.exposed_comm_s[d]) <= tol * scale,
                      "exposed %s: %.12g vs %.12g", wl_dim_name((wl_dim)d), a.res.critical.exposed_comm_s[d],
                      b.res.critical.exposed_comm_s[d]);
        ck_assert(fabs(a.res.critical.comm_s[d] - b.res.critical.comm_s[d]) <= tol * scale);
        assert_rel(a.res.bytes_total[d], b.res.bytes_total[d], tol, wl_dim_name((wl_dim)d));
    }
    wl_plan_free(plan);
    cost_free(c);
}

START_TEST(test_plan_lockstep_is_exact)
{
    cfg_model m = tiny_model();
    /* DP hierarchical over two supernodes, uplinks the bottleneck */
    cfg_platform p = platform(16, 4);
    p.oversubscription = 4;
    cfg_strategy s = tiny_strategy(4, 2, 2);
    check_lockstep_exact(&m, &p, &s, 4); /* TP 2 x the 2 replicas of a supernode */
    /* ZeRO-3 gathers on the DP stream next to TP traffic on the same links */
    p = platform(16, 8);
    s = tiny_strategy(4, 1, 4);
    s.zero = 3;
    s.sequence_parallel = true;
    check_lockstep_exact(&m, &p, &s, 16); /* the whole stage, over two supernodes */
    /* 2D TP: all-to-alls inside the group, through the mirror */
    s = tiny_strategy(2, 2, 2);
    s.tp_y = 2;
    s.sequence_parallel = true;
    check_lockstep_exact(&m, &p, &s, 8); /* a stage fills a supernode */
}
END_TEST

/* }========================================================== */

/* One layer on TP t with sequence parallel.  With overlap_tp_comm its ten
 * SP collectives (6 all-gathers, 4 reduce-scatters of tok*h*2 bytes) hide
 * beside the GEMMs: a ring exchange in t chunks leaves (t-1)*max(0, step -
 * chunk') exposed, a bulk one max(0, collective - GEMM'), a GEMM beside a
 * collective taking overlap_compute_slowdown times its time (').  With
 * overlap_tp_backward only the two bulk pairs of the backward hide; the
 * forward's four and the backward's two output-gradient all-gathers block.
 * The embedding's and head's TP collectives stay blocking: the exposed TP
 * of the run without overlap, less the layer collectives that hide, plus
 * those closed forms.  The estimator agrees. */
static double beside(const cost_model *c, double m, double n, double k)
{
    return cost_beside_comm_s(c, cost_gemm_s(c, m, n, k, 2));
}

static void tp_overlap_case(int t, double slowdown, int seq)
{
    const double h = 1024, f = 4096;
    cfg_model m = fx_dense_model(1, (int)h, 8, (int)f, 8000, seq);
    cfg_platform p = platform(t, t);
    p.overlap_compute_slowdown = slowdown;
    cfg_strategy s = fx_strategy(1, 1, t, 1);
    s.sequence_parallel = true;
    sim_err err = {{0}};
    cost_model *c = cost_new(&p, &err);
    ck_assert_msg(c != NULL, "%s", err.msg);
    double exposed[3], est_tp[3] = {0};
    for (int ov = 0; ov < 3; ov++) { /* none, overlap_tp_comm, overlap_tp_backward */
        s.overlap_tp_comm = ov == 1;
        s.overlap_tp_backward = ov == 2;
        wl_plan *plan = NULL;
        ck_assert_msg(wl_plan_new(&m, &p, &s, c, &plan, &err) == SIM_OK, "%s", err.msg);
        outcome o = sim_fork(&p, NULL, plan, NULL);
        ck_assert_msg(o.rc == SIM_OK, "%s", o.err.msg);
        exposed[ov] = o.res.critical.exposed_comm_s[WL_DIM_TP];
        wl_plan_free(plan);
        est_estimator *e = est_new(&m, &p, &err);
        est_result r;
        ck_assert_msg(est_step(e, &s, &r, &err) == SIM_OK, "%s", err.msg);
        est_tp[ov] = r.exposed_s[WL_DIM_TP];
        est_free(e);
    }
    int members[64], sn[64] = {0};
    for (int i = 0; i < t; i++) members[i] = i;
    net_layout lo;
    net_layout_of(&p, members, t, 0, sn, &lo);
    double tok = seq, B = tok * h * 2;
    double AG = net_coll_s(&p, &lo, NET_ALLGATHER, B), RS = net_coll_s(&p, &lo, NET_REDUCESCATTER, B);
    double sag = net_coll_step_s(&p, &lo, NET_ALLGATHER, B, 1), srs = net_coll_step_s(&p, &lo, NET_REDUCESCATTER, B, 1);
    ck_assert(sag > 0 && srs > 0 && net_coll_step_s(&p, &lo, NET_ALLGATHER, B, t) == 0);
    double ring = t - 1, q = tok / t;
    double fwd = ring * (fmax(0, sag - beside(c, q, 3 * h / t, h)) + fmax(0, srs - beside(c, q, h, h / t)) +
                         fmax(0, sag - beside(c, q, f / t, h)) + fmax(0, srs - beside(c, q, h, f / t)));
    /* backward: row-parallel dgrad chunks beside the output gradient's
     * ring steps; column-parallel dgrad beside the input's gather, wgrad
     * beside the input gradient's reduce-scatter */
    double bulk = fmax(0, AG - beside(c, tok, h, f / t)) + fmax(0, RS - beside(c, h, f / t, tok)) +
                  fmax(0, AG - beside(c, tok, h, 3 * h / t)) + fmax(0, RS - beside(c, h, 3 * h / t, tok));
    double bwd = ring * (fmax(0, sag - beside(c, q, f / t, h)) + fmax(0, sag - beside(c, q, h / t, h))) + bulk;
    double want = exposed[0] - 6 * AG - 4 * RS + fwd + bwd;
    ck_assert_msg(exposed[1] < exposed[0], "overlap hides: %g vs %g", exposed[1], exposed[0]);
    assert_rel(exposed[1], want, 1e-6, "exposed TP with overlap: the closed form");
    assert_rel(exposed[2], exposed[0] - 2 * AG - 2 * RS + bulk, 1e-6, "exposed TP, backward overlap: the closed form");
    ck_assert_msg(exposed[1] < exposed[2] && exposed[2] < exposed[0], "backward overlap hides part: %g %g %g",
                  exposed[0], exposed[2], exposed[1]);
    for (int ov = 0; ov < 3; ov++) assert_rel(est_tp[ov], exposed[ov], 1e-6, "estimator: the engine's exposed TP");
    cost_free(c);
}

START_TEST(test_tp_overlap_closed_form)
{
    tp_overlap_case(4, 1.0, 2048);  /* comm-bound steps beside the small GEMM chunks */
    tp_overlap_case(4, 1.3, 8192);  /* GEMM-bound, a slowdown */
    tp_overlap_case(2, 1.1, 4096);
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tp = tcase_create("platform");
    tcase_add_test(tp, test_xml_layout);
    tcase_add_test(tp, test_xml_rejects_bad_platform);
    tcase_add_test(tp, test_routes_two_planes);
    tcase_add_test(tp, test_routes_across_zones);
    tcase_add_test(tp, test_routes_tiers);
    suite_add_tcase(s, tp);

    TCase *tc = tcase_create("collectives");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ring_allreduce_matches_net);
    tcase_add_test(tc, test_idle_collectives_take_net_closed_form);
    tcase_add_test(tc, test_small_allreduce_is_latency_bound);
    tcase_add_test(tc, test_allgather_reducescatter_alltoall);
    tcase_add_test(tc, test_flow_mode_agrees_with_step_mode);
    tcase_add_test(tc, test_contention_slows_concurrent_allreduces);
    tcase_add_test(tc, test_across_supernodes_nic_governs);
    tcase_add_test(tc, test_oversubscribed_uplinks_are_shared);
    tcase_add_test(tc, test_hierarchical_allreduce);
    tcase_add_test(tc, test_one_member_per_supernode_is_flat);
    tcase_add_test(tc, test_tiers_collectives_take_net_closed_form);
    tcase_add_test(tc, test_tier_oversubscription_slows_by_ratio);
    suite_add_tcase(s, tc);

    TCase *tg = tcase_create("programs");
    tcase_set_timeout(tg, 120);
    tcase_add_test(tg, test_single_rank_computes_sum);
    tcase_add_test(tg, test_stream_overlaps_compute);
    tcase_add_test(tg, test_unwaited_stream_is_drained);
    tcase_add_test(tg, test_pipeline_send_recv);
    tcase_add_test(tg, test_pipeline_round_trip);
    tcase_add_test(tg, test_pipeline_across_zones);
    tcase_add_test(tg, test_transfers_between_zones_are_exact);
    tcase_add_test(tg, test_deadlock_is_reported);
    tcase_add_test(tg, test_collective_deadlock_is_reported);
    tcase_add_test(tg, test_invalid_programs_fail_cleanly);
    tcase_add_test(tg, test_trace_and_dump);
    tcase_add_test(tg, test_simgrid_options);
    suite_add_tcase(s, tg);

    TCase *tl = tcase_create("plan");
    tcase_set_timeout(tl, 120);
    tcase_add_test(tl, test_plan_single_device_is_sum_of_ops);
    tcase_add_test(tl, test_plan_parallel_step_runs);
    tcase_add_test(tl, test_plan_lockstep_is_exact);
    tcase_add_test(tl, test_tp_overlap_closed_form);
    suite_add_tcase(s, tl);
    return s;
}

int main(void)
{
    return check_run(engine_suite());
}
