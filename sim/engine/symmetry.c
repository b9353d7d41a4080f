/* symmetry.c - lockstep TP groups: one actor per tensor-parallel group.
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
 * use made of simulated ranks only.  Otherwise every rank gets an actor. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/log.h>

XBT_LOG_EXTERNAL_CATEGORY(heptasim_engine);
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(heptasim_engine_sym, heptasim_engine, "heptasim lockstep TP groups");

/* Assigns every rank to the first member of its TP group (rep) and lists
 * the groups one after another in mates; returns the group size, or 0 when
 * the groups cannot be reduced. m is world ints of scratch. */
static int tp_groups(eng_sim *sim, int *rep, int *mates, int *m)
{
    const eng_workload *w = sim->w;
    int world = sim->world, t = 0, nm = 0;
    for (int i = 0; i < world; i++) rep[i] = -1;
    for (int i = 0; i < world; i++) {
        if (rep[i] >= 0) continue;
        int me = -1, k = w->group_members(w->ctx, i, WL_G_TP, m, &me);
        if (k < 2 || k > world || (t && k != t) || me < 0 || me >= k || m[me] != i) return 0;
        t = k;
        int sn = eng_supernode_of(sim->p, i);
        mates[nm++] = i;
        for (int j = 0; j < k; j++) {
            int x = m[j];
            if (x < i || x >= world || rep[x] >= 0 || eng_supernode_of(sim->p, x) != sn) return 0;
            rep[x] = i;
            if (x != i) mates[nm++] = x;
        }
    }
    return nm == world ? t : 0;
}

/* Returns whether every group the programs use is, for each simulated
 * rank, either inside its TP group or made of simulated ranks only. */
static bool groups_reducible(eng_sim *sim, const int *rep, int *m)
{
    const eng_workload *w = sim->w;
    for (int r = 0; r < sim->world; r++) {
        if (rep[r] != r) continue;
        for (int g = 0; g < WL_NGROUPS; g++) {
            if (g == WL_G_TP || !(w->groups_used & 1u << g)) continue;
            int me = -1, k = w->group_members(w->ctx, r, (wl_group)g, m, &me);
            if (k < 1 || k > sim->world) return false;
            bool inside = true, simulated = true;
            for (int j = 0; j < k; j++) {
                if (m[j] < 0 || m[j] >= sim->world) return false;
                inside = inside && rep[m[j]] == r;
                simulated = simulated && rep[m[j]] == m[j];
            }
            if (!inside && !simulated) {
                XBT_DEBUG("rank %d: group %s mixes TP groups: every rank is simulated", r, wl_group_name((wl_group)g));
                return false;
            }
        }
    }
    return true;
}

void eng_symmetry_plan(eng_sim *sim)
{
    sim->lockstep = 1;
    if (sim->opt.symmetry != ENG_SYM_TP || !sim->w->tp_lockstep || sim->world < 2) return;
    size_t n = (size_t)sim->world;
    int *rep = sim_xcalloc(n, sizeof *rep), *mates = sim_xcalloc(n, sizeof *mates), *m = sim_xcalloc(n, sizeof *m);
    int t = tp_groups(sim, rep, mates, m);
    if (t > 1 && groups_reducible(sim, rep, m)) {
        sim->lockstep = t;
        sim->rep = rep;
        sim->mates = mates;
        rep = mates = NULL;
    }
    free(rep);
    free(mates);
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

void eng_mirror_start(eng_rank *r)
{
    char name[32];
    snprintf(name, sizeof name, "mirror%d", r->rank);
    r->mirror = sg_mailbox_by_name(name);
    r->mirror_host = sg_host_by_name(name);
    sg_actor_t a = sg_actor_init(name, r->mirror_host);
    sg_actor_set_data(a, r);
    sg_actor_start(a, mirror_main, 0, NULL);
}

void eng_symmetry_spread(eng_sim *sim)
{
    if (sim->lockstep <= 1) return;
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
