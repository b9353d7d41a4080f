/* symmetry.c - which ranks get an actor: one per class of alike ranks
 * (exact, the default), or per TP group when no larger class is found;
 * on request one data-parallel replica for all (approximate).
 *
 * Exact classes.  Ranks are alike when they run the same program (the
 * ranks of a pipeline stage do: programs are the stage's, with pipeline
 * peers at fixed rank offsets) and see the same network: the coarsest
 * partition of the ranks such that two ranks of one class have groups of
 * the same layout (sizes, spread over supernodes, rings) and, for every
 * kind of edge (successor and predecessor on each ring of a group,
 * pairwise partner of an all-to-all, pipeline peer at a given stage
 * offset) and every route class (eng_route_class: the plane, and the
 * tiers the route leaves that add latency or oversubscribed uplinks), as
 * many partners in each class.  Colour refinement (Weisfeiler-Leman)
 * computes it: start from (stage, layouts, compute and NIC speeds), split
 * classes by the multiset of (edge, route class, partner's class) until
 * none splits.  With shared supernode uplinks (oversubscription > 1) the
 * supernode is part of the starting colour: classes stay inside one.  The
 * domains of oversubscribed tiers are left out of it first: the classes
 * are taken when they spread evenly over those domains (spread_shares),
 * else the domains join the starting colour and classes stay inside one.
 *
 * Why one rank may stand for its class.  Under SimGrid's max-min sharing
 * (CM02, no correction factors) a flow's rate is set by progressive
 * filling over the links it crosses.  Take the partition of the flows of
 * the full step by (collective phase, sender's class, receiver's class,
 * plane) and of the links by (kind, direction, the class of its device):
 * a device's fabric and NIC links up carry the flows it sends, down the
 * flows it receives; pads and the links joining group zones never limit
 * a flow.  By induction on events, if every class has been in lockstep so
 * far, every member of a class starts the same flows at the same time; by
 * the partition's definition each link of a link class carries as many
 * flows of each flow class, so all links of a class fill up together and
 * all flows of a class get the same rate and end together: the members
 * stay in lockstep.  The reduced run keeps, per class, the links of its
 * simulated rank and, per flow class, the same number of flows on them:
 *
 *  - a flow to a member of the sender's own class goes to the sender's
 *    mirror for the route class the full step's flow takes, a host behind
 *    the device's fabric link ("mirror<i>") or behind its NIC link through
 *    a pad of its own ("nmirror<i>", "nmirror<i>r<c>"), which carries the
 *    rest of the class's latency: it crosses the device's link up and
 *    its link down, which in the full step carries as many such flows
 *    received (each member receives as many, and the class receives what
 *    it sends), at the route latency of that plane;
 *  - a flow to another class goes to that class's simulated rank, which
 *    receives it (it has as many such partners, the classes being of one
 *    size), on a route of the full step's route class: its own, or when
 *    the two simulated ranks share domains the full step's flows leave, a
 *    detour up and down their uplinks (eng_detour); refused otherwise;
 *  - a link shared by several devices carries one flow where the full
 *    step has one per member: a supernode's uplink, or an oversubscribed
 *    tier's (classes inside the supernode, the domain), gets 1/size of its
 *    bandwidth, or 1/(members per domain) when classes spread over the
 *    tier's domains; uplinks that are not oversubscribed and the links joining
 *    group zones, which in the full step carry no more than the NICs
 *    below them, are left unlimited when classes spread over them.
 *
 * Classes must have one size; the run must use flow mode (in step mode
 * the pairwise steps pair partners by index).  One size is what the
 * refinement gives wherever ranks are joined by rings and pipelines: a
 * ring's successor, and a pipeline peer at a stage offset, is one rank,
 * so when a member of class A has it in class B every member of A does
 * (an equitable partition), the map is one-to-one (|A| <= |B|), and the
 * inverse edge (predecessor, the opposite offset) maps B into A (|B| <=
 * |A|).  The TP rings, the data-parallel rings (dp x cp, which hold the
 * expert and Ulysses groups) and the pipeline peers join every rank of a
 * step to every other, so the classes of every step the workload makes
 * have one size, stragglers or not.  Classes of unequal sizes would need
 * all-to-all edges alone between them (each member of A with k partners
 * in B, each of B with k|A|/|B| in A); the reduction refuses them.  A
 * class of one rank (a slow device or NIC link starts as one) then makes
 * every class one rank: the refinement stops there and nothing is
 * reduced.  See docs/network.md for what this cannot reduce (detours a
 * layout cannot declare, flows of a class to itself through
 * oversubscribed uplinks, stragglers on rings).
 * Otherwise the TP groups are tried as before: TP groups of one size,
 * each inside one supernode, and every other group kind the programs use
 * made of simulated ranks only, on a network whose first tier is not
 * rail-optimised (net_rails: the members of a TP group then reach the
 * spine through different switches, and the links of one rail would
 * carry the simulated rank's flows only, undivided, while those above
 * carry everyone's), and without stragglers (the members of a TP group
 * may differ in speed).  Tier uplinks above the supernodes are shared links
 * like the supernode uplinks: all members of a TP group cross the same
 * ones.  Else the tp_x part of 2D TP groups, then their tp_y part; else
 * every rank gets an actor.  The argument for TP groups is the one above
 * with classes the TP groups.
 *
 * Replicas (ENG_SYM_DP) are alike but not interchangeable: they sit in
 * different places of the network.  The ranks reachable from rank 0
 * through every group but the data-parallel ones are simulated; DP and EDP
 * collectives are played one-sided (collective.c): a rank sends its ring
 * flow to its successor's real device and plays its unsimulated
 * predecessor's flow into it, and each supernode uplink gets, per
 * direction, the share of the full step's ring flows across it that the
 * reduced run plays (oversubscribed uplinks only: without oversubscription
 * the uplinks never limit and are left out, as in a full run).  Only
 * supernode uplinks get shares: on a network with tiers (net_tiers)
 * replicas are not reduced.  See docs/network.md. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <xbt/dynar.h>
#include <xbt/log.h>

XBT_LOG_EXTERNAL_CATEGORY(heptasim_engine);
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(heptasim_engine_sym, heptasim_engine, "heptasim classes of alike ranks");

/* ORDER: the names as --symmetry's help and messages list them. */
const sim_enum_name eng_symmetry_names[] = {{ENG_SYM_TP, "tp"}, {ENG_SYM_DP, "dp"}, {ENG_SYM_NONE, "none"}};
_Static_assert(sizeof eng_symmetry_names / sizeof eng_symmetry_names[0] == ENG_NSYMMETRIES, "a name per symmetry");

const char *eng_symmetry_name(eng_symmetry sym)
{
    return sim_enum_name_of(eng_symmetry_names, ENG_NSYMMETRIES, (int)sym);
}

/* The groups that span data-parallel replicas. */
static bool data_parallel(int g)
{
    return g == WL_G_DP || g == WL_G_EDP;
}

bool eng_group_reduced(const eng_sim *sim, wl_group g)
{
    return sim->replicas > 1 && data_parallel(g);
}

/* Replica reduction: the ranks reachable from rank 0 through every group
 * kind the programs use but the data-parallel ones are simulated.  In every DP group
 * (n members, dp x cp in rank order) they must be the same R members: the
 * first R, each standing for members i + R, i + 2R... (cp inside dp in
 * the rank order), or every (n/R)-th, each standing for the n/R - 1
 * after it (dp inside cp).  Sets rep and returns n / R, or 0 when the
 * simulated set is of neither shape.  m: world ints of scratch. */
static int replica_groups(eng_sim *sim, int *rep, int *m)
{
    const eng_workload *w = sim->w;
    int world = sim->world, nq = 1, R = 0, f = 0;
    int *queue = sim_xcalloc((size_t)world, sizeof *queue);
    bool *in = sim_xcalloc((size_t)world, sizeof *in);
    in[0] = true;
    for (int h = 0; h < nq; h++)
        for (int g = 0; g < WL_NGROUPS; g++) {
            if (data_parallel(g) || !(w->groups_used & 1u << g)) continue;
            int me = -1, k = w->progs.group_members(w->progs.ctx, queue[h], (wl_group)g, m, &me);
            for (int j = 0; j < k && j < world; j++)
                if (m[j] >= 0 && m[j] < world && !in[m[j]]) {
                    in[m[j]] = true;
                    queue[nq++] = m[j];
                }
        }
    for (int i = 0; i < world; i++) rep[i] = -1;
    bool ok = true;
    for (int h = 0; h < nq && ok; h++) {
        int me = -1, k = w->progs.group_members(w->progs.ctx, queue[h], WL_G_DP, m, &me), c = 0;
        if (k < 1 || k > world) break;
        for (int j = 0; j < k; j++) c += in[m[j]];
        if (R == 0) R = c;
        ok = c == R && k % R == 0;
        int per = ok ? k / R : 1;
        bool prefix = ok, strided = ok;
        for (int j = 0; j < k && ok; j++) {
            prefix = prefix && in[m[j]] == (j < R);
            strided = strided && in[m[j]] == (j % per == 0);
        }
        ok = ok && (prefix || strided);
        for (int j = 0; j < k && ok; j++) rep[m[j]] = prefix ? m[j % R] : m[j - j % per];
        f = ok ? per : 0;
    }
    for (int i = 0; i < world && ok; i++) ok = rep[i] >= 0 && rep[rep[i]] == rep[i];
    free(queue);
    free(in);
    return ok && (long long)nq * f == world ? f : 0;
}

/* Lockstep TP groups among the simulated ranks (rep[i] == i): sets cls[i]
 * to the first member of i's TP group (-1 for ranks not simulated) and
 * returns the group size, or 0 when the groups cannot stand for each other. */
static int tp_groups(eng_sim *sim, wl_group kind, const int *rep, int *cls, int *m)
{
    const eng_workload *w = sim->w;
    int world = sim->world, t = 0;
    for (int i = 0; i < world; i++) cls[i] = -1;
    for (int i = 0; i < world; i++) {
        if (rep[i] != i || cls[i] >= 0) continue;
        int me = -1, k = w->progs.group_members(w->progs.ctx, i, kind, m, &me);
        if (k < 2 || k > world || (t && k != t) || me < 0 || me >= k || m[me] != i) return 0;
        t = k;
        int sn = net_supernode_of(sim->p, i);
        for (int j = 0; j < k; j++) {
            int x = m[j];
            if (x < i || x >= world || rep[x] != x || cls[x] >= 0 || net_supernode_of(sim->p, x) != sn) return 0;
            cls[x] = i;
        }
    }
    return t;
}

/* Returns whether every group the programs use (but the one-sided ones) is,
 * for each TP group's simulated rank, either inside its TP group or made of
 * simulated ranks only. */
static bool groups_reducible(eng_sim *sim, wl_group kind, const int *cls, int *m)
{
    const eng_workload *w = sim->w;
    for (int r = 0; r < sim->world; r++) {
        if (cls[r] != r) continue;
        for (int g = 0; g < WL_NGROUPS; g++) {
            if (g == (int)kind || !(w->groups_used & 1u << g) || eng_group_reduced(sim, (wl_group)g)) continue;
            int me = -1, k = w->progs.group_members(w->progs.ctx, r, (wl_group)g, m, &me);
            if (k < 1 || k > sim->world) return false;
            bool inside = true, simulated = true;
            for (int j = 0; j < k; j++) {
                if (m[j] < 0 || m[j] >= sim->world) return false;
                inside = inside && cls[m[j]] == r;
                simulated = simulated && cls[m[j]] == m[j];
            }
            if (!inside && !simulated) {
                XBT_DEBUG("rank %d: group %s mixes TP groups: every rank is simulated", r, wl_group_name((wl_group)g));
                return false;
            }
        }
    }
    return true;
}

/* Lists the ranks by the rank standing for them, that one first, into
 * mates; false unless every simulated rank stands for exactly n ranks. */
static bool list_mates(const eng_sim *sim, const int *rep, int n, int *mates)
{
    int world = sim->world, slot = 0;
    int *base = sim_xcalloc((size_t)world, sizeof *base), *count = sim_xcalloc((size_t)world, sizeof *count);
    bool ok = true;
    for (int i = 0; i < world && ok; i++)
        if (rep[i] == i) {
            ok = slot + n <= world;
            base[i] = slot;
            count[i] = 1;
            if (ok) mates[slot] = i;
            slot += n;
        }
    for (int i = 0; i < world && ok; i++) {
        if (rep[i] == i) continue;
        ok = count[rep[i]] < n;
        if (ok) mates[base[rep[i]] + count[rep[i]]++] = i;
    }
    for (int i = 0; i < world && ok; i++) ok = rep[i] != i || count[i] == n;
    free(base);
    free(count);
    return ok && slot == world;
}

/* Counts edge x -> y of a reduced group's ring on the uplinks it crosses:
 * in the full step, and when the reduced run plays it (x is simulated, or
 * y is and plays its unsimulated predecessor's flow). */
static void count_edge(const eng_sim *sim, int x, int y, double *full_up, double *full_down, double *play_up,
                       double *play_down)
{
    int a = net_supernode_of(sim->p, x), b = net_supernode_of(sim->p, y);
    if (a == b) return;
    full_up[a]++;
    full_down[b]++;
    if (sim->rep[x] == x || sim->rep[y] == y) {
        play_up[a]++;
        play_down[b]++;
    }
}

/* Replica-reduced runs: the flows the reduced run plays on a supernode's
 * uplink, per direction, stand for all the flows of the data-parallel
 * rings that cross it in the full step; the link gets that share of its
 * bandwidth (1/lockstep where no ring crosses).  m: world ints of scratch. */
static void uplink_shares(eng_sim *sim, int *m)
{
    const eng_workload *w = sim->w;
    size_t nsn = (size_t)sim->nsn;
    double *full_up = sim_xcalloc(nsn, sizeof(double)), *full_down = sim_xcalloc(nsn, sizeof(double));
    double *play_up = sim_xcalloc(nsn, sizeof(double)), *play_down = sim_xcalloc(nsn, sizeof(double));
    /* each group once, from the first of its members met, every member's
     * layout at once (net_layout_all): listing every member's group and
     * laying it out per member would take world x group size and more */
    bool *done = sim_xcalloc((size_t)sim->world, sizeof *done);
    net_layout *all = sim_xcalloc((size_t)sim->world, sizeof *all);
    int *scratch = sim_xcalloc(4 * (size_t)sim->world, sizeof *scratch);
    for (int g = 0; g < WL_NGROUPS; g++) {
        if (!eng_group_reduced(sim, (wl_group)g) || !(w->groups_used & 1u << g)) continue;
        memset(done, 0, (size_t)sim->world * sizeof *done);
        for (int x = 0; x < sim->world; x++) {
            if (done[x]) continue;
            int me = -1, n = w->progs.group_members(w->progs.ctx, x, (wl_group)g, m, &me);
            bool valid = n >= 1 && n <= sim->world;
            for (int i = 0; valid && i < n; i++) valid = m[i] >= 0 && m[i] < sim->world;
            if (!valid) continue;
            for (int i = 0; i < n; i++) done[m[i]] = true;
            if (n < 2) continue;
            net_layout_all(sim->p, m, n, sim->sn_count, scratch, all);
            for (int i = 0; i < n; i++) {
                /* member i's flow crosses supernodes on the flat ring, or on the inter ring of a hierarchical one */
                int succ = all[i].ring[all[i].hier ? NET_RING_INTER : NET_RING_FLAT].succ;
                count_edge(sim, m[i], succ, full_up, full_down, play_up, play_down);
            }
        }
    }
    free(done);
    free(all);
    free(scratch);
    sim->up_share = full_up;
    sim->down_share = full_down;
    for (size_t k = 0; k < nsn; k++) {
        full_up[k] = full_up[k] > 0 && play_up[k] > 0 ? play_up[k] / full_up[k] : 1.0 / sim->lockstep;
        full_down[k] = full_down[k] > 0 && play_down[k] > 0 ? play_down[k] / full_down[k] : 1.0 / sim->lockstep;
    }
    free(play_up);
    free(play_down);
}

/* {=========================================================== exact classes */

/* Edge labels of the rank graph (label * ENG_ROUTE_CLASSES + the route's
 * class): per group kind, the successor and predecessor on each ring of
 * its layout and its pairwise partners; then the pipeline's other stages
 * by offset. */
enum { EDGE_PAIR = 2 * NET_NRINGS, EDGE_KINDS = 2 * NET_NRINGS + 1 };
#define LAYOUT_KEYS (9 + 2 * (NET_NRINGS + 1)) /* per group kind: a member's layout, see layout_key */
#define MAX_REFINE_ROUNDS 1024    /* colour refinement rounds before giving up (a ring of n with one odd rank takes n/2) */
#define MAX_EDGES (1LL << 25)     /* edges of the rank graph before giving up */

/* The rank graph: per rank its edges (label << 32 | neighbour), CSR. */
typedef struct rgraph {
    int world;
    int *off, *len;
    uint64_t *e;
    long long n, cap;
    int *fill;                    /* per rank: edges added so far (building) */
} rgraph;

/* The ordering of ranks by (colour, signature), for qsort. */
static const uint64_t *cmp_sig;
static const int *cmp_off, *cmp_len, *cmp_col;

static int u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int sig_diff(int x, int y)
{
    if (cmp_col[x] != cmp_col[y]) return cmp_col[x] < cmp_col[y] ? -1 : 1;
    if (cmp_len[x] != cmp_len[y]) return cmp_len[x] < cmp_len[y] ? -1 : 1;
    const uint64_t *a = cmp_sig + cmp_off[x], *b = cmp_sig + cmp_off[y];
    for (int k = 0; k < cmp_len[x]; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}

static int sig_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b, c = sig_diff(x, y);
    return c ? c : (x > y) - (x < y);
}

/* Sorts idx by (col, signature) and gives each rank the index of its
 * signature among the distinct ones, in order, into out; returns how
 * many there are. */
static int recolour(int world, const uint64_t *sig, const int *off, const int *len, const int *col, int *idx,
                    int *out)
{
    cmp_sig = sig;
    cmp_off = off;
    cmp_len = len;
    cmp_col = col;
    for (int i = 0; i < world; i++) idx[i] = i;
    qsort(idx, (size_t)world, sizeof *idx, sig_cmp);
    int c = 0;
    for (int i = 0; i < world; i++) {
        if (i > 0 && sig_diff(idx[i - 1], idx[i]) != 0) c++;
        out[idx[i]] = c;
    }
    return world > 0 ? c + 1 : 0;
}

/* A double as two ints (its bits): equal keys, equal values. */
static void bits_key(double v, int *k)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    k[0] = (int)(uint32_t)(b >> 32);
    k[1] = (int)(uint32_t)b;
}

/* The layout of a member as LAYOUT_KEYS ints: what its collectives' phases
 * depend on besides the bytes (sizes, spread, rings, and the step
 * latencies, which differ between rings with network tiers). */
static void layout_key(const net_layout *lo, int *k)
{
    k[0] = lo->n;
    k[1] = lo->spans;
    k[2] = lo->hier;
    k[3] = lo->L;
    k[4] = lo->K;
    k[5] = lo->local;
    for (int r = 0; r < NET_NRINGS; r++) {
        k[6 + r] = lo->ring[r].n;
        bits_key(lo->ring[r].lat_s, k + 9 + 2 * r);
    }
    bits_key(lo->remote_lat_s, k + 9 + 2 * NET_NRINGS);
}

/* Whether tier t changes what a flow leaving its domains meets. */
static bool tier_matters(const cfg_platform *p, int t)
{
    return p->tiers[t].latency_s > 0 || p->tiers[t].oversubscription > 1;
}

int eng_route_class(const cfg_platform *p, int a, int b)
{
    if (net_plane_between(p, a, b) == NET_FABRIC) return 0;
    int k = 0;
    for (int t = 0, n = net_route_tiers(p, a, b); t < n; t++)
        if (tier_matters(p, t)) k = t + 1;
    return 1 + k;
}

static int edge_label(const eng_sim *sim, int g, int kind, int a, int b)
{
    return (g * EDGE_KINDS + kind) * ENG_ROUTE_CLASSES + eng_route_class(sim->p, a, b);
}

/* Adds, in pass 0, one to rank x's edge count; in pass 1 the edge. */
static void edge_put(rgraph *gr, int pass, int x, int label, int y)
{
    if (pass == 0) {
        gr->len[x]++;
        return;
    }
    gr->e[gr->off[x] + gr->fill[x]++] = (uint64_t)(uint32_t)label << 32 | (uint32_t)y;
}

/* The pipeline edges (pass 0 counts, pass 1 stores): from each rank to
 * every other stage's rank of its pipeline, labelled by the stage offset.
 * False when the pipelines are not usable. */
static bool pipeline_edges(eng_sim *sim, rgraph *gr, int pass, int *m)
{
    const eng_workload *w = sim->w;
    for (int x = 0; x < sim->world; x++) {
        int me = -1, n = w->progs.group_members(w->progs.ctx, x, WL_G_PP, m, &me);
        if (n < 1 || n > sim->world || me < 0 || me >= n || m[me] != x) return false;
        for (int j = 0; j < n; j++) {
            if (j == me) continue;
            if (m[j] < 0 || m[j] >= sim->world) return false;
            edge_put(gr, pass, x, edge_label(sim, WL_NGROUPS, j - me + n, x, m[j]), m[j]);
        }
    }
    return true;
}

/* The edges of the groups of kind g (pass 0 counts, pass 1 stores) and,
 * in pass 0, the layout keys of their members at key[rank * nkey + slot].
 * False when the groups are not usable (a member list that is not the
 * same from every member). */
static bool group_edges_with(eng_sim *sim, rgraph *gr, int pass, int g, bool ring, bool pair, int *key, int nkey,
                             int slot, int *m, int *seen, net_layout *all, int *scratch)
{
    const eng_workload *w = sim->w;
    int world = sim->world;
    /* each group once, from the first of its members met: listing every
     * member's group would take world x group size */
    bool *done = sim_xcalloc((size_t)world, sizeof *done);
    for (int x = 0; x < world; x++) {
        if (done[x]) continue;
        int me = -1, n = w->progs.group_members(w->progs.ctx, x, (wl_group)g, m, &me);
        bool usable = n >= 1 && n <= world && me >= 0 && me < n && m[me] == x;
        for (int i = 0; usable && i < n; i++) usable = m[i] >= 0 && m[i] < world && !done[m[i]];
        if (!usable) {
            free(done);
            return false;
        }
        for (int i = 0; i < n; i++) done[m[i]] = true;
        net_layout_all(sim->p, m, n, sim->sn_count, scratch, all);
        for (int i = 0; i < n; i++) {
            int d = m[i];
            seen[d]++;
            const net_layout lo = all[i];
            if (pass == 0) layout_key(&lo, key + (size_t)d * nkey + slot);
            if (ring)
                for (int k = 0; k < NET_NRINGS; k++) {
                    const net_ring *rg = &lo.ring[k];
                    if (rg->n <= 1 || (k == NET_RING_FLAT) == lo.hier) continue;
                    edge_put(gr, pass, d, edge_label(sim, g, 2 * k, d, rg->succ), rg->succ);
                    edge_put(gr, pass, d, edge_label(sim, g, 2 * k + 1, rg->pred, d), rg->pred);
                }
            if (pair)
                for (int j = 0; j < n; j++)
                    if (j != i) edge_put(gr, pass, d, edge_label(sim, g, EDGE_PAIR, d, m[j]), m[j]);
        }
    }
    free(done);
    return true;
}

static bool group_edges(eng_sim *sim, rgraph *gr, int pass, int g, bool ring, bool pair, int *key, int nkey, int slot,
                        int *m, int *seen)
{
    net_layout *all = sim_xcalloc((size_t)sim->world, sizeof *all);
    int *scratch = sim_xcalloc(4 * (size_t)sim->world, sizeof *scratch);
    bool ok = group_edges_with(sim, gr, pass, g, ring, pair, key, nkey, slot, m, seen, all, scratch);
    free(all);
    free(scratch);
    return ok;
}

/* Whether one of the ncls colours col[0..world) is held by one rank
 * alone; count: ncls ints of scratch. */
static bool lone_colour(int world, const int *col, int ncls, int *count)
{
    memset(count, 0, (size_t)ncls * sizeof *count);
    for (int i = 0; i < world; i++) count[col[i]]++;
    for (int c = 0; c < ncls; c++)
        if (count[c] == 1) return true;
    return false;
}

/* The coarsest partition of the ranks into classes that the argument of
 * the banner makes exact, as class[] (a colour per rank); returns the
 * number of classes, or 0 when none can be computed (no stage
 * information, unusable groups, too large a graph, no fixpoint).  With
 * spread, classes may spread over the domains of oversubscribed tiers
 * (exact_plan then checks that they spread evenly, spread_shares).
 * Refinement only splits classes, and the reduction takes classes of one
 * size: once a colour is held by one rank (a straggler's, from the
 * start) every class would have to be one rank, and the refinement stops
 * there, returning world (nothing to reduce; class[] is then the colour
 * reached, not a fixpoint). */
static int rank_classes(eng_sim *sim, int *cls, rgraph *out, bool spread)
{
    const eng_workload *w = sim->w;
    const cfg_strategy *s = w->strategy;
    int world = sim->world, pp = s->pp > 0 ? s->pp : 1;
    int *stage = sim_xcalloc((size_t)world, sizeof *stage);
    for (int i = 0; i < world; i++) {
        int c[CFG_NDIMS];
        wl_strategy_coords(s, i, c);
        stage[i] = c[CFG_DIM_PP];
        if (stage[i] < 0 || stage[i] >= pp) {
            free(stage);
            return 0;
        }
    }
    unsigned ring = w->ring_groups & ~(1u << WL_G_PP), pair = w->alltoall_groups & ~(1u << WL_G_PP);
    bool ok = true, p2p = (w->groups_used & 1u << WL_G_PP) != 0;
    int nused = 0;
    for (int g = 0; g < WL_NGROUPS; g++) nused += ((ring | pair) >> g & 1u) != 0;
    int ntiers = net_tiers(sim->p), nkey = 6 + ntiers + LAYOUT_KEYS * nused;
    rgraph gr = {world, sim_xcalloc((size_t)world, sizeof(int)), sim_xcalloc((size_t)world, sizeof(int)), NULL, 0, 0,
                 sim_xcalloc((size_t)world, sizeof(int))};
    int *key = sim_xcalloc((size_t)world * (size_t)nkey, sizeof *key);
    int *m = sim_xcalloc((size_t)world, sizeof *m), *seen = sim_xcalloc((size_t)world, sizeof *seen);
    /* shared uplinks carry the flows of a supernode, or of a domain of an
     * oversubscribed tier: classes stay inside one (or, spread, evenly over
     * several) */
    bool uplinks = sim->p->oversubscription > 1;
    for (int i = 0; i < world; i++) {
        int *k = key + (size_t)i * nkey;
        k[0] = stage[i];
        k[1] = uplinks ? net_supernode_of(sim->p, i) : 0;
        for (int t = 0; t < ntiers; t++)
            k[2 + t] = sim->p->tiers[t].oversubscription > 1 && !spread ? net_tier_domain_of(sim->p, t, i) : 0;
        /* stragglers: a slow device or NIC link in a class of its own */
        bits_key(cfg_device_speed(sim->p, i), k + 2 + ntiers);
        bits_key(cfg_nic_speed(sim->p, i), k + 4 + ntiers);
    }
    /* pass 0 counts the edges (and keys the layouts), pass 1 stores them */
    for (int pass = 0; pass < 2 && ok; pass++) {
        int slot = 6 + ntiers;
        for (int g = 0; g < WL_NGROUPS && ok; g++) {
            bool r = ring >> g & 1u, q = pair >> g & 1u;
            if (!r && !q) continue;
            memset(seen, 0, (size_t)world * sizeof *seen);
            ok = group_edges(sim, &gr, pass, g, r, q, key, nkey, slot, m, seen);
            for (int i = 0; i < world && ok; i++) ok = seen[i] == 1;
            slot += LAYOUT_KEYS;
        }
        if (p2p) ok = ok && pipeline_edges(sim, &gr, pass, m);
        if (pass == 0 && ok) {
            long long total = 0;
            for (int i = 0; i < world; i++) {
                gr.off[i] = (int)total;
                total += gr.len[i];
            }
            ok = total < MAX_EDGES;
            if (ok) gr.e = sim_xcalloc((size_t)total + 1, sizeof *gr.e);
            gr.n = total;
        }
    }
    free(stage);
    free(seen);
    int ncls = 0;
    if (ok) {
        /* colour refinement (Weisfeiler-Leman): start from the stage and the
         * layouts, split by the multiset of (edge label, neighbour colour)
         * until no class splits: an equitable partition */
        int *col = sim_xcalloc((size_t)world, sizeof *col), *idx = m, *klen = sim_xcalloc((size_t)world, sizeof *klen);
        int *koff = sim_xcalloc((size_t)world, sizeof *koff), *zero = sim_xcalloc((size_t)world, sizeof *zero);
        uint64_t *k64 = sim_xcalloc((size_t)world * (size_t)nkey, sizeof *k64);
        for (int i = 0; i < world; i++) {
            klen[i] = nkey;
            koff[i] = i * nkey;
            for (int j = 0; j < nkey; j++) k64[(size_t)i * nkey + j] = (uint64_t)(uint32_t)key[(size_t)i * nkey + j];
        }
        ncls = recolour(world, k64, koff, klen, zero, idx, col);
        free(k64);
        free(klen);
        free(koff);
        uint64_t *sig = sim_xcalloc((size_t)gr.n + 1, sizeof *sig);
        int round = 0;
        bool lone = lone_colour(world, col, ncls, zero);
        for (; round < MAX_REFINE_ROUNDS && !lone; round++) {
            for (int i = 0; i < world; i++) {
                uint64_t *a = sig + gr.off[i];
                const uint64_t *e = gr.e + gr.off[i];
                for (int k = 0; k < gr.len[i]; k++) a[k] = (e[k] >> 32) << 32 | (uint32_t)col[(uint32_t)e[k]];
                qsort(a, (size_t)gr.len[i], sizeof *a, u64_cmp);
            }
            int n = recolour(world, sig, gr.off, gr.len, col, idx, cls);
            memcpy(col, cls, (size_t)world * sizeof *col);
            if (n == ncls) break;
            ncls = n;
            lone = lone_colour(world, col, ncls, zero);
        }
        if (lone) {
            memcpy(cls, col, (size_t)world * sizeof *cls);
            XBT_DEBUG("a class of one rank after %d refinement rounds: classes of one size are single ranks", round);
            ncls = world;
        } else if (round == MAX_REFINE_ROUNDS) {
            ncls = 0;
        }
        free(zero);
        free(sig);
        free(col);
        XBT_DEBUG("%d classes after %d refinement rounds", ncls, round);
    }
    free(gr.fill);
    gr.fill = NULL;
    *out = gr;
    free(key);
    free(m);
    return ncls;
}

static void rgraph_release(rgraph *gr)
{
    free(gr->off);
    free(gr->len);
    free(gr->e);
    free(gr->fill);
}

/* Whether a route of class c leaves the domains of an oversubscribed tier. */
static bool leaves_shared_tier(const cfg_platform *p, int c)
{
    for (int t = 0; t <= c - 2 && t < p->ntiers; t++)
        if (p->tiers[t].oversubscription > 1) return true;
    return false;
}

/* Classes spread over the domains of oversubscribed tiers (rank_classes
 * with spread): true when, for every such tier t, every class has the same
 * number share[t] of members in each domain it meets, and the classes met
 * in a domain have their simulated ranks in one domain that meets the same
 * classes.  The uplinks of domains meeting the same classes then carry as
 * many flows of each flow class (share[t] per class and edge leaving the
 * domain), and the simulated ranks' domain's uplink with 1/share[t] of its
 * bandwidth stands for them. */
static bool spread_shares(const eng_sim *sim, const int *cls, const int *first, int *share)
{
    const cfg_platform *p = sim->p;
    int world = sim->world;
    uint64_t *key = sim_xcalloc((size_t)world, sizeof *key);
    bool ok = true;
    for (int t = 0; t < p->ntiers && ok; t++) {
        if (p->tiers[t].oversubscription <= 1) continue;
        int ndom = net_tier_domains(p, t);
        int *home = sim_xcalloc((size_t)ndom, sizeof *home), *met = sim_xcalloc((size_t)ndom, sizeof *met);
        for (int d = 0; d < ndom; d++) home[d] = -1;
        for (int i = 0; i < world; i++)
            key[i] = (uint64_t)(uint32_t)cls[i] << 32 | (uint32_t)net_tier_domain_of(p, t, i);
        qsort(key, (size_t)world, sizeof *key, u64_cmp);
        share[t] = 0;
        for (int i = 0, j; i < world && ok; i = j) {
            for (j = i; j < world && key[j] == key[i]; j++) continue;
            int d = (int)(uint32_t)key[i], h = net_tier_domain_of(p, t, first[key[i] >> 32]);
            if (!share[t]) share[t] = j - i;
            ok = share[t] == j - i && (home[d] < 0 || home[d] == h);
            home[d] = h;
            met[d]++;
        }
        for (int d = 0; d < ndom && ok; d++) ok = met[d] == 0 || (home[home[d]] == home[d] && met[home[d]] == met[d]);
        free(home);
        free(met);
    }
    free(key);
    return ok;
}

/* The flows of the simulated ranks to other classes' simulated ranks, as
 * (from, to, route class) triples edge[0..n): each ordered pair must take
 * one route class.  Returns the pairs whose route in the reduced run has
 * a lower class than the full step's flows (their devices share domains
 * the flows leave) as detours (*out, owned by the caller), or -1 when a
 * pair takes two classes, takes a higher one, or cannot be detoured (no
 * tiers, supernode uplinks, two zones of the layout). */
static int detours_of(const eng_sim *sim, uint64_t *edge, int n, eng_detour **out)
{
    const cfg_platform *p = sim->p;
    *out = NULL;
    qsort(edge, (size_t)n, sizeof *edge, u64_cmp);
    int nd = 0;
    eng_detour *d = NULL;
    for (int i = 0, j; i < n; i = j) {
        uint64_t pair = edge[i] / ENG_ROUTE_CLASSES;
        for (j = i; j < n && edge[j] == edge[i]; j++) continue;
        int a = (int)(pair >> 32), b = (int)(uint32_t)pair, c = (int)(edge[i] % ENG_ROUTE_CLASSES);
        bool two = j < n && edge[j] / ENG_ROUTE_CLASSES == pair;
        int have = eng_route_class(p, a, b);
        if (have == c && !two) continue;
        if (two || have > c || !eng_detour_fits(p, a, b, c)) {
            free(d);
            return -1;
        }
        d = sim_xrealloc(d, (size_t)(nd + 1) * sizeof *d);
        d[nd++] = (eng_detour){a, b, c};
    }
    *out = d;
    return nd;
}

/* The exact classes (rank_classes with spread or not) as sim's reduction:
 * one simulated rank (the smallest) per class; true when taken.  Refused
 * unless every class has the same size, lies in one supernode when
 * supernode uplinks are shared, spreads evenly over the domains of
 * oversubscribed tiers (spread_shares), sends no flow to its own class
 * through an oversubscribed tier's uplinks (its mirrors bypass them), and
 * every flow of a simulated rank to another class's simulated rank takes
 * the route class its full-step flows take, on its own or by a detour. */
static bool exact_plan_with(eng_sim *sim, bool spread)
{
    const eng_workload *w = sim->w;
    int world = sim->world;
    int *cls = sim_xcalloc((size_t)world, sizeof *cls);
    rgraph gr = {0};
    int ncls = rank_classes(sim, cls, &gr, spread);
    if (ncls < 1 || ncls == world || world % ncls != 0) {
        rgraph_release(&gr);
        free(cls);
        return false;
    }
    int s = world / ncls;
    int *rep = sim_xcalloc((size_t)world, sizeof *rep), *first = sim_xcalloc((size_t)ncls, sizeof *first);
    int *count = sim_xcalloc((size_t)ncls, sizeof *count);
    for (int c = 0; c < ncls; c++) first[c] = -1;
    for (int i = 0; i < world; i++) {
        if (first[cls[i]] < 0) first[cls[i]] = i;
        rep[i] = first[cls[i]];
        count[cls[i]]++;
    }
    bool ok = true, uplinks = sim->p->oversubscription > 1;
    unsigned mirrors = 0, dims = 0;
    for (int c = 0; c < ncls && ok; c++) ok = count[c] == s;
    for (int i = 0; i < world && ok; i++) {
        bool apart = net_supernode_of(sim->p, i) != net_supernode_of(sim->p, rep[i]);
        ok = !(apart && uplinks);
        if (apart) mirrors |= ENG_MIRROR_OPEN_SPINE;
        int a[CFG_NDIMS], b[CFG_NDIMS];
        wl_strategy_coords(w->strategy, i, a);
        wl_strategy_coords(w->strategy, rep[i], b);
        for (int d = 0; d < CFG_NDIMS; d++)
            if (a[d] != b[d]) dims |= 1u << d;
    }
    eng_tier_reduction tiers = {{0}, NULL, 0};
    for (int t = 0; t < net_tiers(sim->p); t++) tiers.share[t] = s;
    if (spread) ok = ok && spread_shares(sim, cls, first, tiers.share);
    free(first);
    free(count);
    free(cls);
    /* the flows of the simulated ranks: to their own class (a mirror of the
     * route's class), or to another's simulated rank on a route of the
     * class of the full step's: the same plane, latency and limiting links */
    uint64_t *edge = sim_xcalloc((size_t)gr.n + 1, sizeof *edge);
    int nedge = 0;
    for (int r = 0; r < world && ok; r++) {
        if (rep[r] != r) continue;
        for (int k = 0; k < gr.len[r] && ok; k++) {
            uint64_t e = gr.e[gr.off[r] + k];
            int y = (int)(uint32_t)e, c = (int)((e >> 32) % ENG_ROUTE_CLASSES);
            if (rep[y] == r) {
                mirrors |= c == 0 ? ENG_MIRROR_FABRIC : ENG_MIRROR_NIC(c);
                ok = !leaves_shared_tier(sim->p, c);
            } else {
                /* a predecessor edge is a flow from the partner's class */
                uint64_t q = (e >> 32) / ENG_ROUTE_CLASSES;
                bool from = q < (uint64_t)WL_NGROUPS * EDGE_KINDS && q % EDGE_KINDS < EDGE_PAIR && q % 2 == 1;
                int a = from ? rep[y] : r, b = from ? r : rep[y];
                edge[nedge++] = ((uint64_t)(uint32_t)a << 32 | (uint32_t)b) * ENG_ROUTE_CLASSES + (uint64_t)c;
            }
        }
    }
    rgraph_release(&gr);
    eng_detour *detour = NULL;
    int nd = ok ? detours_of(sim, edge, nedge, &detour) : -1;
    free(edge);
    ok = ok && nd >= 0;
    int *mates = sim_xcalloc((size_t)world, sizeof *mates);
    ok = ok && list_mates(sim, rep, s, mates);
    if (!ok) {
        XBT_DEBUG("%d exact classes of %d ranks refused%s", ncls, s, spread ? " (spread over tier domains)" : "");
        free(rep);
        free(mates);
        free(detour);
        return false;
    }
    sim->lockstep = s;
    sim->lockstep_dims = dims;
    sim->mirrors = mirrors;
    sim->rep = rep;
    sim->mates = mates;
    sim->detours = detour;
    sim->tiers = tiers;
    sim->tiers.detour = detour;
    sim->tiers.ndetours = nd;
    XBT_DEBUG("%d exact classes of %d ranks, %d detours%s", ncls, s, nd, spread ? " (spread over tier domains)" : "");
    return true;
}

/* The exact classes: spread over the domains of oversubscribed tiers when
 * that is exact (coarser), else inside one domain of each. */
static bool exact_plan(eng_sim *sim)
{
    const eng_workload *w = sim->w;
    if (!w->stage_programs || !w->strategy || sim->opt.comm_mode != ENG_FLOWS) return false;
    bool shared = false;
    for (int t = 0; t < net_tiers(sim->p); t++) shared = shared || sim->p->tiers[t].oversubscription > 1;
    return (shared && exact_plan_with(sim, true)) || exact_plan_with(sim, false);
}

/* }=========================================================== */

/* Whether a NIC link of p is slow (a straggler of kind link). */
static bool slow_links(const cfg_platform *p)
{
    for (int i = 0; i < p->nstragglers; i++)
        if (p->stragglers[i].kind == CFG_STRAGGLER_LINK) return true;
    return false;
}

void eng_symmetry_plan(eng_sim *sim)
{
    sim->slowest_mate = false;
    sim->lockstep = sim->replicas = 1;
    sim->lockstep_dims = sim->mirrors = 0;
    if (sim->opt.symmetry == ENG_SYM_NONE || sim->world < 2) return;
    if (sim->opt.symmetry == ENG_SYM_TP && exact_plan(sim)) return;
    /* replicas are not reduced on a network with tiers: the exact classes */
    if (sim->opt.symmetry == ENG_SYM_DP && net_tiers(sim->p) > 0 && exact_plan(sim)) return;
    /* TP groups and replicas stand for ranks that may not be alike: with
     * stragglers (exact classes tell the slow ones apart) only on request,
     * approximately (slow devices and nodes, not links: see
     * eng_symmetry_start) */
    bool slow = sim->p->nstragglers > 0;
    if (!sim->w->tp_lockstep || net_rails(sim->p)) return;
    if (slow && (sim->opt.symmetry != ENG_SYM_DP || slow_links(sim->p))) return;
    size_t n = (size_t)sim->world;
    int *rep = sim_xcalloc(n, sizeof *rep), *cls = sim_xcalloc(n, sizeof *cls), *m = sim_xcalloc(n, sizeof *m);
    for (int i = 0; i < sim->world; i++) rep[i] = i;
    if (sim->opt.symmetry == ENG_SYM_DP && net_tiers(sim->p) == 0) {
        int f = replica_groups(sim, rep, m);
        if (f > 1)
            sim->replicas = f;
        else
            for (int i = 0; i < sim->world; i++) rep[i] = i;
    }
    /* the whole TP group if it can, else its tp_x or tp_y part (2D TP) */
    static const wl_group kinds[] = {WL_G_TP, WL_G_TPX, WL_G_TPY};
    for (int k = 0; k < 3 && sim->lockstep == 1; k++) {
        int t = tp_groups(sim, kinds[k], rep, cls, m);
        if (t > 1 && groups_reducible(sim, kinds[k], cls, m)) {
            sim->lockstep = t;
            sim->lockstep_dims = kinds[k] == WL_G_TPX   ? 1u << CFG_DIM_TP_X
                                 : kinds[k] == WL_G_TPY ? 1u << CFG_DIM_TP_Y
                                                        : 1u << CFG_DIM_TP_X | 1u << CFG_DIM_TP_Y;
            sim->mirrors = ENG_MIRROR_FABRIC;
            for (int i = 0; i < sim->world; i++) rep[i] = cls[rep[i]];
        }
    }
    int stand_for = sim->lockstep * sim->replicas;
    if (stand_for > 1 && list_mates(sim, rep, stand_for, cls)) {
        sim->slowest_mate = slow;
        sim->rep = rep;
        sim->mates = cls;
        rep = cls = NULL;
        /* without oversubscription an uplink never limits a flow: every
         * flow through it leaves or enters by a NIC of its supernode,
         * which caps it, in the reduced run as in the full step; a share
         * of it would also throttle the flows of the other groups (expert
         * all-to-all, pipeline hops) that cross it, played unreduced */
        if (sim->replicas > 1 && sim->p->oversubscription > 1) uplink_shares(sim, m);
    } else {
        sim->lockstep = sim->replicas = 1;
        sim->lockstep_dims = sim->mirrors = 0;
    }
    free(rep);
    free(cls);
    free(m);
}

/* The mirror's actor: the permanent receiver of its mailbox, so that flows
 * start when sent; it only drains them.  A daemon: it ends with the ranks. */
static void mirror_main(int argc, char *argv[])
{
    (void)argc;
    (void)argv;
    sg_mailbox_t mb = sg_actor_self_get_data();
    sg_mailbox_set_receiver(sg_mailbox_get_name(mb));
    sg_actor_daemonize(sg_actor_self());
    for (;;) sg_mailbox_get(mb);
}

/* Starts the mirror actor "<kind><rank>" (route class c > 1:
 * "<kind><rank>r<c>") of r on the host of that name; returns its mailbox
 * and host. */
static sg_mailbox_t mirror_start(eng_rank *r, const char *kind, int c, sg_host_t *host)
{
    char name[32];
    eng_mirror_name(name, sizeof name, kind, r->rank, c);
    sg_mailbox_t mb = sg_mailbox_by_name(name);
    *host = sg_host_by_name(name);
    sg_actor_t a = sg_actor_init(name, *host);
    sg_actor_set_data(a, mb);
    sg_actor_start(a, mirror_main, 0, NULL);
    return mb;
}

void eng_symmetry_start(eng_sim *sim)
{
    if (!sim->rep) return;
    int stand_for = sim->lockstep * sim->replicas;
    for (int c = 0; c < sim->world; c += stand_for) {
        eng_rank *r = &sim->ranks[sim->mates[c]];
        r->mates = &sim->mates[c];
        r->nmates = stand_for;
        /* approximate: its TP group (which waits for its slowest member at
         * every TP collective) and its replicas (which wait for the slowest
         * at the gradient reduction) as slow as the slowest of them */
        for (int k = 1; k < r->nmates && sim->slowest_mate; k++)
            if (sim->ranks[r->mates[k]].speed < r->speed) r->speed = sim->ranks[r->mates[k]].speed;
        for (int k = 1; k < r->nmates; k++) r->traced = r->traced || sim->ranks[r->mates[k]].traced;
        if (sim->mirrors & ENG_MIRROR_FABRIC) r->mirror = mirror_start(r, "mirror", 0, &r->mirror_host);
        for (int k = 1; k < ENG_ROUTE_CLASSES; k++)
            if (sim->mirrors & ENG_MIRROR_NIC(k)) r->nmirror[k] = mirror_start(r, "nmirror", k, &r->nmirror_host[k]);
    }
    XBT_DEBUG("%d of %d ranks simulated", sim->world / stand_for, sim->world);
}

void eng_detours_check(eng_rank *r)
{
    eng_sim *sim = r->sim;
    sg_link_t pad = NULL;
    xbt_dynar_t links = NULL;
    for (int k = 0; k < sim->tiers.ndetours && !sim->failed; k++) {
        const eng_detour *d = &sim->tiers.detour[k];
        if (d->from != r->rank) continue;
        if (!links) {
            links = xbt_dynar_new(sizeof(sg_link_t), NULL);
            pad = sg_link_by_name("dpad0");
        }
        xbt_dynar_reset(links);
        sg_host_get_route(sim->hosts[d->from], sim->hosts[d->to], links);
        bool taken = false;
        for (unsigned long i = 0; i < xbt_dynar_length(links) && !taken; i++)
            taken = xbt_dynar_get_as(links, i, sg_link_t) == pad;
        if (!taken) eng_fail(sim, "rank %d: the route to rank %d is not its detour of route class %d", d->from, d->to,
                             d->route_class);
    }
    if (links) xbt_dynar_free(&links);
}

void eng_symmetry_spread(eng_sim *sim)
{
    if (!sim->rep) return;
    for (int k = 0; k < sim->world; k++) {
        const eng_rank *r = &sim->ranks[sim->rep[k]];
        eng_rank *o = &sim->ranks[k];
        if (o == r) continue;
        o->st = r->st;
        o->st.rank = k;
        o->started = r->started;
        o->draining = r->draining;
        o->done = r->done;
        o->pc = r->pc;
        o->cur = r->cur;
    }
}

void eng_trace(eng_rank *r, const wl_instr *in, int stream, double t0, double t1)
{
    const eng_options *o = &r->sim->opt;
    if (!r->mates) {
        o->trace(o->trace_ctx, r->rank, in, stream, t0, t1);
        return;
    }
    for (int i = 0; i < r->nmates; i++) {
        int k = r->mates[i];
        if (o->trace_rank && !o->trace_rank[k]) continue;
        wl_instr mine = *in;
        /* p2p partners sit at the same offset from the partner's group */
        if (in->op == WL_SEND || in->op == WL_RECV) mine.peer += k - r->rank;
        o->trace(o->trace_ctx, k, &mine, stream, t0, t1);
    }
}
