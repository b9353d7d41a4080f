/* coll.c - the table of collective algorithms: which one a collective runs
 * on a layout, its phases, and its uncontended time as the sum of theirs.
 *
 * Like SimGrid SMPI's table of named collective algorithms, one row per
 * algorithm, one file each.  Rows are tried in order; the first that runs
 * the collective on the layout gives its phases.  The engine plays those
 * phases as flows, the estimator and validation add up net_phase_s. */
#include <assert.h>
#include <math.h>

#include "internal.h"

/* ORDER NET_ALGO */
static const net_algorithm algorithms[NET_NALGOS] = {
    [NET_ALGO_PAIRWISE] = {"pairwise", net_pairwise_runs, net_pairwise_phases},
    [NET_ALGO_HIER] = {"hier", net_hier_runs, net_hier_phases},
    [NET_ALGO_RING] = {"ring", net_ring_runs, net_ring_phases},
};

net_algo net_algo_of(const net_layout *lo, net_coll kind)
{
    for (int a = 0; a < NET_NALGOS; a++)
        if (algorithms[a].runs(lo, kind)) return (net_algo)a;
    return NET_ALGO_RING;
}

const char *net_algo_name(net_algo a)
{
    return (int)a >= 0 && (int)a < NET_NALGOS ? algorithms[a].name : "?";
}

int net_coll_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes,
                    net_phase out[NET_MAX_PHASES])
{
    if (lo->n <= 1 || !(bytes > 0) || (int)kind < 0 || (int)kind >= NET_NCOLLS) return 0;
    net_algo a = net_algo_of(lo, kind);
    assert(algorithms[a].phases); /* a row for every NET_ALGO */
    return algorithms[a].phases(p, lo, kind, bytes, out);
}

int net_coll_step_phases(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, int step,
                         net_phase out[NET_MAX_PHASES])
{
    if (step <= 0) return net_coll_phases(p, lo, kind, bytes, out);
    int n = net_coll_phases(p, lo, kind, bytes, out);
    if (n == 1 && (kind == NET_ALLGATHER || kind == NET_REDUCESCATTER) && out[0].op == kind) {
        if (step > out[0].steps) return 0;
        out[0].steps = 1;
        out[0].sent_bytes = out[0].chunk_bytes;
        return 1;
    }
    return step == 1 ? n : 0; /* no ring to exchange on: all of it at the first step */
}

double net_coll_step_s(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes, int step)
{
    net_phase ph[NET_MAX_PHASES];
    int n = net_coll_step_phases(p, lo, kind, bytes, step, ph);
    double t = 0.0;
    for (int i = 0; i < n; i++) t += net_phase_s(p, &ph[i]);
    return t;
}

double net_phase_s(const cfg_platform *p, const net_phase *ph)
{
    if (ph->n <= 1) return 0.0;
    double wire = 0.0;
    if (ph->sent_bytes > 0)
        wire = ph->bytes_per_s > 0 ? ph->sent_bytes / (ph->bytes_per_s * net_efficiency(p)) : HUGE_VAL;
    return ph->steps * (ph->lat_s + p->collective_step_s) + wire;
}

double net_phase_tail_s(const cfg_platform *p, const net_phase *ph)
{
    if (ph->n <= 1) return 0.0;
    return (ph->steps - 1) * ph->lat_s + ph->steps * p->collective_step_s;
}

double net_coll_s(const cfg_platform *p, const net_layout *lo, net_coll kind, double bytes)
{
    net_phase ph[NET_MAX_PHASES];
    int n = net_coll_phases(p, lo, kind, bytes, ph);
    double t = 0.0;
    for (int i = 0; i < n; i++) t += net_phase_s(p, &ph[i]);
    return t;
}
