/* moe.c - where one token's routed experts land: how many EP ranks or
 * NVLink domains its top_k copies reach, with and without group-limited
 * routing.  The dispatchers' traffic (workload/moe.c) follows from it.
 *
 * Balanced routing: a token's top_k experts are a uniform draw without
 * replacement from the experts it may use.  With group-limited routing
 * (DeepSeek-V2 section 2.2.2's device-limited routing, DeepSeek-V3 section
 * 2.1.2's node-limited routing; Megatron's --moe-router-num-groups G and
 * --moe-router-group-topk M) the E experts form G equal groups of
 * consecutive experts, the token first picks M groups (uniformly, when
 * balanced) and then its top_k experts among their M*E/G experts.
 *
 * A slice of S consecutive experts (an EP rank's E/ep, a domain's) touches
 * t groups with c = S/t of its experts in each (exact when slices and
 * groups nest, the mean otherwise).  With j of those groups picked, the
 * draw of k among the pool of P = M*E/G misses the slice's j*c experts
 * with probability prod_{i<k} (P - j*c - i) / (P - i); j is
 * hypergeometric, C(t, j) C(G - t, M - j) / C(G, M).  Without groups,
 * G = M = 1 and the slice misses with C(E - S, k) / C(E, k). */
#include <math.h>

#include "internal.h"

/* C(n, k) for n, k >= 0 (0 when k > n), as a double. */
static double choose(double n, double k)
{
    if (k < 0 || k > n) return 0.0;
    return exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1));
}

/* P(k draws without replacement from a pool of `pool` miss `avoid` of its items). */
static double miss_all(double pool, double avoid, int k)
{
    double p = 1.0;
    for (int i = 0; i < k && p > 0; i++) {
        double f = (pool - avoid - i) / (pool - i);
        p *= f > 0 ? f : 0.0;
    }
    return p;
}

double mdl_moe_slices_reached(const cfg_model *m, int parts)
{
    const cfg_moe *mo = &m->moe;
    if (mo->experts <= 0 || mo->top_k <= 0) return 0.0;
    if (parts <= 1) return 1.0;
    double E = mo->experts, slice = E / parts;
    int G = mo->groups > 1 ? mo->groups : 1;
    int M = G > 1 && mo->group_top_k > 0 ? mo->group_top_k : G;
    double gsz = E / G, pool = M * gsz;
    int t = slice > gsz ? (int)ceil(slice / gsz - 1e-9) : 1;
    if (t > G) t = G;
    double c = slice / t, miss = 0.0;
    for (int j = 0; j <= t && j <= M; j++) {
        double h = choose(t, j) * choose(G - t, M - j) / choose(G, M);
        if (h > 0) miss += h * miss_all(pool, j * c, mo->top_k);
    }
    return parts * (1.0 - miss);
}
