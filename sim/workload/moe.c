/* moe.c - the token dispatch of a MoE layer as the frameworks run it: the
 * traffic of each dispatcher, and the routing and permutation passes
 * around it.  layer.c emits the ops; docs/model.md ("MoE dispatch") has
 * the derivation.
 *
 * Dispatchers (Megatron-Core's --moe-token-dispatcher-type):
 *   alltoall   the rank permutes its tokens into one copy per routed
 *              expert and all-to-alls them over EP; the copies for a
 *              rank's experts arrive sorted by source and are sorted by
 *              expert when the rank holds several (a second pass).  The
 *              combine mirrors it.
 *   allgather  every rank all-gathers the EP group's tokens and their
 *              routing (the map, 1 byte, and the fp32 probabilities per
 *              token and expert) and picks those routed to its experts;
 *              the combine reduce-scatters the partial outputs.
 *   flex       DeepEP / HybridEP's fused all-to-all: a token goes once to
 *              each EP rank it has an expert on, and across the network
 *              once to each NVLink domain (then forwarded inside it); the
 *              receiving rank permutes into expert order.  Sent as one
 *              pairwise all-to-all whose buffer is tok * R rows, R the
 *              EP ranks a token reaches inside one domain, or the domains
 *              it reaches when the group spans several: the NIC then
 *              carries tok * R * (K - 1)/K rows, the remote domains'
 *              share, as DeepEP's RDMA phase does; the NVLink part moves
 *              the same chunk per peer (a simplification).
 * The rank is costed as the busiest expert rank (cfg_expert_load): the
 * bytes scale by the load. */
#include <stdlib.h>

#include "../model/model.h"
#include "internal.h"

/* Routing bytes per token and expert: the logits (e), the fp32 scores
 * written and read back by top-k (4 + 4), the routing map (1). */
#define ROUTER_FP32_PASSES 2.0
#define ROUTING_MAP_BYTES 1.0
#define PROBS_BYTES 4.0

/* The NVLink domains (supernodes) rank 0's EP group spans, every domain
 * holding as many of its members (EP groups are alike). */
static int ep_domains(const wl_plan *plan)
{
    int n = wl_group_size(plan->s, WL_G_EP);
    if (n <= 1) return 1;
    int *members = sim_xcalloc((size_t)plan->layout.world, sizeof *members), me = 0, domains = 0;
    wl_layout_members(&plan->layout, 0, WL_G_EP, members, &me);
    for (int i = 0; i < n; i++) {
        int sn = net_supernode_of(plan->p, members[i]), seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = net_supernode_of(plan->p, members[j]) == sn;
        domains += !seen;
    }
    free(members);
    return domains;
}

void wl_moe_dispatch_of(const wl_plan *plan, double tok, double copies, double dtype, wl_moe_dispatch *out)
{
    const cfg_model *m = plan->m;
    const cfg_strategy *s = plan->s;
    double h = m->hidden, E = m->moe.experts, load = cfg_expert_load(s);
    int ep = wl_group_size(s, WL_G_EP), local = m->moe.experts / (ep > 0 ? ep : 1);
    *out = (wl_moe_dispatch){.dispatch = WL_ALLTOALL, .combine = WL_ALLTOALL, .domains = 1, .reached = 1};
    out->router_bytes = tok * E * (dtype + ROUTER_FP32_PASSES * PROBS_BYTES + ROUTING_MAP_BYTES);
    switch (s->moe_dispatcher) {
    case CFG_DISPATCH_ALLGATHER:
        out->dispatch = WL_ALLGATHER;
        out->combine = WL_REDUCESCATTER;
        out->bytes = ep * tok * h * dtype; /* the gathered tokens of the EP group */
        out->meta_bytes = ep * tok * E * (ROUTING_MAP_BYTES + PROBS_BYTES);
        out->permute_bytes = 2.0 * copies * h * dtype; /* gather the rows routed here, write them in order */
        break;
    case CFG_DISPATCH_FLEX: {
        int domains = ep_domains(plan);
        out->domains = domains;
        out->reached = mdl_moe_slices_reached(m, domains > 1 ? domains : ep);
        double rows = tok * out->reached * load;
        out->bytes = rows * h * dtype;
        out->permute_bytes = (rows + copies) * h * dtype;
        break;
    }
    default:
        out->bytes = copies * h * dtype;
        out->permute_first = true;
        /* tokens into copies; then, with several local experts, the arrived chunks sorted by expert */
        out->permute_bytes = (tok + copies) * h * dtype + (local > 1 ? 2.0 * copies * h * dtype : 0.0);
        break;
    }
}
