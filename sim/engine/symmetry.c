/* symmetry.c - which ranks get an actor: one per tensor-parallel group
 * (exact, the default), and on request one data-parallel replica for all
 * (approximate).
 *
 * The members of a TP group run the same program, on devices with the same
 * links, with partners that differ only in their tp coordinates: renumbering
 * the tp coordinates maps the whole step onto itself, so under max-min
 * sharing the members' flows get the same rates and every member finishes
 * each instruction at the same time.  The engine therefore runs only the
 * first member of each group (its "simulated rank"), which stands for the
 * others:
 *
 *  - a collective inside the group (TP and its tp_x, tp_y and ETP parts)
 *    sends each of its flows from the device to the device's "mirror", a
 *    host reached back through the same device's fabric link: the flow loads
 *    the device's own links up and down exactly as the ring or all-to-all
 *    edges of the full run do;
 *  - a group whose members are all simulated ranks (DP, PP, CP, EP: they
 *    share the tp coordinates) runs between them as in the full run;
 *  - a link shared by several devices (a supernode's uplink to the spine)
 *    carries one flow where the full run has one per member, so its
 *    bandwidth is divided by the group size: each flow keeps its max-min
 *    share.
 *
 * The reduction is used only where this argument holds: TP groups of one
 * size, each inside one supernode, and every other group kind the programs
 * use made of simulated ranks only, on a network whose first tier is not
 * rail-optimised (net_rails: the members of a TP group then reach the
 * spine through different switches, and the links of one rail would carry
 * the simulated rank's flows only, undivided, while those above carry
 * everyone's).  Tier uplinks above the supernodes are shared links like
 * the supernode uplinks: all members of a TP group cross the same ones.  Otherwise it is tried on the tp_x part
 * of 2D TP groups, then on their tp_y part; else every rank gets an actor.
 *
 * Replicas (ENG_SYM_DP) are alike but not interchangeable: they sit in
 * different places of the network.  The ranks reachable from rank 0
 * through every group but the data-parallel ones are simulated; DP and EDP
 * collectives are played one-sided (collective.c): a rank sends its ring
 * flow to its successor's real device and plays its unsimulated
 * predecessor's flow into it, and each supernode uplink gets, per
 * direction, the share of the full step's ring flows across it that the
 * reduced run plays.  Only supernode uplinks get shares: on a network with
 * tiers (net_tiers) replicas are not reduced. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/log.h>

XBT_LOG_EXTERNAL_CATEGORY(heptasim_engine);
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(heptasim_engine_sym, heptasim_engine, "heptasim lockstep TP groups");

/* The groups that span data-parallel replicas. */
static bool data_parallel(int g)
{
    return g == WL_G_DP || g == WL_G_EDP || g == WL_G_EDPD;
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
    for (int g = 0; g < WL_NGROUPS; g++) {
        if (!eng_group_reduced(sim, (wl_group)g) || !(w->groups_used & 1u << g)) continue;
        for (int x = 0; x < sim->world; x++) {
            int me = -1, n = w->progs.group_members(w->progs.ctx, x, (wl_group)g, m, &me);
            if (n < 2 || n > sim->world || m[0] != x) continue; /* each group once, from its first member */
            for (int i = 0; i < n; i++) {
                /* member i's flow crosses supernodes on the flat ring, or on the inter ring of a hierarchical one */
                net_layout lo;
                net_layout_of(sim->p, m, n, i, sim->sn_count, &lo);
                int succ = lo.ring[lo.hier ? NET_RING_INTER : NET_RING_FLAT].succ;
                count_edge(sim, m[i], succ, full_up, full_down, play_up, play_down);
            }
        }
    }
    sim->up_share = full_up;
    sim->down_share = full_down;
    for (size_t k = 0; k < nsn; k++) {
        full_up[k] = full_up[k] > 0 && play_up[k] > 0 ? play_up[k] / full_up[k] : 1.0 / sim->lockstep;
        full_down[k] = full_down[k] > 0 && play_down[k] > 0 ? play_down[k] / full_down[k] : 1.0 / sim->lockstep;
    }
    free(play_up);
    free(play_down);
}

void eng_symmetry_plan(eng_sim *sim)
{
    sim->lockstep = sim->replicas = 1;
    if (sim->opt.symmetry == ENG_SYM_NONE || !sim->w->tp_lockstep || sim->world < 2 || net_rails(sim->p)) return;
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
            for (int i = 0; i < sim->world; i++) rep[i] = cls[rep[i]];
        }
    }
    int stand_for = sim->lockstep * sim->replicas;
    if (stand_for > 1 && list_mates(sim, rep, stand_for, cls)) {
        sim->rep = rep;
        sim->mates = cls;
        rep = cls = NULL;
        if (sim->replicas > 1) uplink_shares(sim, m);
    } else {
        sim->lockstep = sim->replicas = 1;
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
    eng_rank *r = sg_actor_self_get_data();
    char name[32];
    snprintf(name, sizeof name, "mirror%d", r->rank);
    sg_mailbox_set_receiver(name);
    sg_actor_daemonize(sg_actor_self());
    for (;;) sg_mailbox_get(r->mirror);
}

static void mirror_start(eng_rank *r)
{
    char name[32];
    snprintf(name, sizeof name, "mirror%d", r->rank);
    r->mirror = sg_mailbox_by_name(name);
    r->mirror_host = sg_host_by_name(name);
    sg_actor_t a = sg_actor_init(name, r->mirror_host);
    sg_actor_set_data(a, r);
    sg_actor_start(a, mirror_main, 0, NULL);
}

void eng_symmetry_start(eng_sim *sim)
{
    if (!sim->rep) return;
    int stand_for = sim->lockstep * sim->replicas;
    for (int c = 0; c < sim->world; c += stand_for) {
        eng_rank *r = &sim->ranks[sim->mates[c]];
        r->mates = &sim->mates[c];
        r->nmates = stand_for;
        for (int k = 1; k < r->nmates; k++) r->traced = r->traced || sim->ranks[r->mates[k]].traced;
        if (sim->lockstep > 1) mirror_start(r);
    }
    XBT_DEBUG("%d of %d ranks simulated", sim->world / stand_for, sim->world);
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
