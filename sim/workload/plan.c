/* plan.c - the shared part of all ranks' programs: layout, op templates,
 * schedules; and the small accessors and name tables of the module. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

sim_rc wl_plan_new(const cfg_model *m, const cfg_platform *p, const cfg_strategy *s, const cost_model *c,
                   wl_plan **out, sim_err *err)
{
    if (cfg_world_size(s) != p->devices)
        return sim_fail(err, SIM_EINVAL, "%s: strategy needs %d devices, platform '%s' has %d", s->path,
                        cfg_world_size(s), p->name, p->devices);
    wl_plan *plan = sim_xcalloc(1, sizeof *plan);
    plan->m = m;
    plan->p = p;
    plan->s = s;
    plan->c = c;
    wl_layout_init(&plan->layout, s);
    plan->micro_batches = cfg_micro_batches(s);
    plan->split_w = wl_schedule_splits_w(s);
    for (int k = 0; k < WL_NKINDS; k++)
        if (wl_kind_possible(m, k)) wl_layer_ops_build(plan, k, &plan->layer[k]);
    wl_edge_ops_build(plan, &plan->edge);
    plan->schedule = sim_xcalloc((size_t)s->pp, sizeof *plan->schedule);
    plan->schedule_len = sim_xcalloc((size_t)s->pp, sizeof *plan->schedule_len);
    for (int st = 0; st < s->pp; st++) plan->schedule[st] = wl_schedule_new(s, st, &plan->schedule_len[st]);
    *out = plan;
    return SIM_OK;
}

void wl_plan_free(wl_plan *plan)
{
    if (!plan) return;
    for (int k = 0; k < WL_NKINDS; k++) wl_layer_ops_free(&plan->layer[k]);
    wl_edge_ops_free(&plan->edge);
    if (plan->schedule)
        for (int st = 0; st < plan->s->pp; st++) free(plan->schedule[st]);
    free(plan->schedule);
    free(plan->schedule_len);
    free(plan);
}

bool wl_plan_reorder(wl_plan *plan, const cfg_strategy *s)
{
    if (plan->m->moe.experts > 0 && s->moe_dispatcher == CFG_DISPATCH_FLEX) return false;
    plan->s = s;
    wl_layout_init(&plan->layout, s);
    return true;
}

int wl_world(const wl_plan *plan) { return plan->layout.world; }
const cfg_strategy *wl_strategy(const wl_plan *plan) { return plan->s; }
const cfg_model *wl_model(const wl_plan *plan) { return plan->m; }

void wl_coords(const wl_plan *plan, int rank, int coords[CFG_NDIMS])
{
    wl_layout_coords(&plan->layout, rank, coords);
}

int wl_stage(const wl_plan *plan, int rank)
{
    return (rank / plan->layout.stride[CFG_DIM_PP]) % plan->layout.size[CFG_DIM_PP];
}

int wl_group_members(const wl_plan *plan, int rank, wl_group g, int *members, int *my_index)
{
    return wl_layout_members(&plan->layout, rank, g, members, my_index);
}

/* The group kinds of collectives, as two masks: [0] ring collectives
 * (all-reduce, all-gather, reduce-scatter), [1] all-to-alls. */
static void add_group(void *ctx, const wl_instr *phase)
{
    unsigned *mask = ctx;
    mask[phase->coll == WL_ALLTOALL] |= 1u << phase->group;
}

static void ops_groups(const wl_ops *ops, unsigned mask[2])
{
    for (int i = 0; i < ops->n; i++)
        if (ops->a[i].op == WL_COLL) add_group(mask, &ops->a[i]);
}

void wl_groups_by_kind(const wl_plan *plan, unsigned *ring, unsigned *alltoall)
{
    const wl_edge_ops *e = &plan->edge;
    /* the program adds the gradient and parameter syncs */
    unsigned mask[2] = {1u << WL_G_DP, 0};
    if (wl_hybrid_sharded(plan->s)) mask[0] |= 1u << WL_G_DPS | 1u << WL_G_DPR;
    bool edp = e->head_params_edp > 0;
    for (int k = 0; k < WL_NKINDS; k++) {
        edp = edp || plan->layer[k].params_edp > 0;
        ops_groups(&plan->layer[k].fwd, mask);
        ops_groups(&plan->layer[k].bwd, mask);
        ops_groups(&plan->layer[k].recompute, mask);
    }
    if (edp) {
        wl_instr sync = {.op = WL_COLL, .coll = WL_ALLREDUCE, .group = WL_G_EDP, .bytes = 1};
        wl_coll_phases(plan->s, &sync, add_group, mask);
    }
    ops_groups(&e->embed_fwd, mask);
    ops_groups(&e->embed_bwd, mask);
    ops_groups(&e->head_fwd, mask);
    ops_groups(&e->head_bwd, mask);
    *ring = mask[0];
    *alltoall = mask[1];
}

unsigned wl_groups_used(const wl_plan *plan)
{
    unsigned ring, alltoall;
    wl_groups_by_kind(plan, &ring, &alltoall);
    /* and the pipeline's p2p */
    return ring | alltoall | 1u << WL_G_PP;
}

int wl_group_id(const wl_plan *plan, int rank, wl_group g)
{
    int n, me, *members = sim_xcalloc((size_t)plan->layout.world, sizeof *members);
    n = wl_layout_members(&plan->layout, rank, g, members, &me);
    int id = members[0];
    for (int i = 1; i < n; i++)
        if (members[i] < id) id = members[i];
    free(members);
    return id;
}

wl_dim wl_group_dim(wl_group g)
{
    switch (g) {
    case WL_G_TP: case WL_G_TPX: case WL_G_TPY: case WL_G_ETP: return WL_DIM_TP;
    case WL_G_CPR: case WL_G_CPU: case WL_G_FUSED: return WL_DIM_CP;
    case WL_G_EP: return WL_DIM_EP;
    case WL_G_EDP: case WL_G_DP: case WL_G_DPS: case WL_G_DPR: return WL_DIM_DP;
    case WL_G_PP: default: return WL_DIM_PP;
    }
}

wl_dim wl_instr_dim(const wl_instr *in)
{
    switch (in->label) {
    case WL_L_DP_GRAD: case WL_L_DP_PARAM: case WL_L_EDP_GRAD: case WL_L_EDP_PARAM: return WL_DIM_DP;
    default: return wl_group_dim((wl_group)in->group);
    }
}

const char *wl_group_name(wl_group g)
{
    static const char *const names[] = {/* ORDER WL_GROUP */ "tp", "tp_x", "tp_y", "cp_ring", "cp_ulysses",
                                        "tp_y+cp_ulysses", "ep", "edp", "dp", "pp", "etp",
                                        "dp_shard", "dp_replicate"};
    _Static_assert(sizeof names / sizeof names[0] == WL_NGROUPS, "one name per group");
    return (unsigned)g < WL_NGROUPS ? names[g] : "?";
}

const char *wl_dim_name(wl_dim d)
{
    static const char *const names[] = {"tp", "cp", "ep", "dp", "pp"}; /* ORDER WL_DIM */
    _Static_assert(sizeof names / sizeof names[0] == WL_NDIMS, "one name per dimension");
    return (unsigned)d < WL_NDIMS ? names[d] : "?";
}

const char *wl_label_name(int label)
{
    static const char *names[WL_NLABELS] = { /* ORDER WL_LABEL */
        "", "embedding", "norm", "qkv", "attention", "proj", "residual", "fc1", "activation", "fc2",
        "qkv_down", "mtp_proj", "fp8_cast",
        "router", "permute", "unpermute", "experts", "shared_experts", "logits", "loss",
        "tp_allgather", "tp_reducescatter", "tp_allreduce", "tp_alltoall", "cp_kv_ring", "cp_alltoall", "ep_dispatch", "ep_combine",
        "dp_grad_sync", "dp_param_gather", "edp_grad_sync", "edp_param_gather", "pp_activation", "pp_gradient",
        "optimizer", "wait"};
    return label >= 0 && label < WL_NLABELS ? names[label] : "?";
}

const char *wl_phase_name(wl_phase ph)
{
    static const char *names[WL_NPHASES] = {"forward",   "backward",  "recompute",
                                            "grad_sync", "optimizer", "wgrad"}; /* ORDER WL_PHASE */
    return (unsigned)ph < WL_NPHASES ? names[ph] : "?";
}

const char *wl_coll_name(wl_coll c)
{
    static const char *names[] = {"allreduce", "allgather", "reducescatter", "alltoall"}; /* ORDER WL_COLL */
    return (unsigned)c < 4 ? names[c] : "?";
}
