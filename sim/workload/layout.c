/* layout.c - rank <-> 7D coordinates and process groups, and their sizes.
 *
 * A rank number is a mixed-radix number whose digits are the coordinates of
 * the dimensions in `order`, innermost (fastest varying) first, so the
 * innermost dimensions are neighbours and stay inside a node or supernode.
 * The expert layers number the same ranks a second way, as Megatron-Core's
 * expert rank generator does: the same order with etp in tp_x's slot, ep
 * in its own, the expert data-parallel size in dp's and pp in its own (tp_y
 * and CP take no digit; cfg_expert_radix).  The EP, ETP and expert DP
 * groups are the ranks that differ in one of those digits: folded over the
 * tp x cp x dp ranks of a stage, across TP ranks, nodes or both. */
#include <assert.h>

#include "internal.h"

/* Sizes and strides of a numbering whose slot d has radix radix(s, d). */
static int numbering(const cfg_strategy *s, int (*radix)(const cfg_strategy *, cfg_dim), int size[CFG_NDIMS],
                     int stride[CFG_NDIMS])
{
    int n = 1;
    for (int i = 0; i < CFG_NDIMS; i++) {
        cfg_dim d = s->order[i];
        size[d] = radix(s, d);
        stride[d] = n;
        n *= size[d];
    }
    return n;
}

void wl_layout_init(wl_layout *lo, const cfg_strategy *s)
{
    lo->world = numbering(s, cfg_dim_radix, lo->size, lo->stride);
    numbering(s, cfg_expert_radix, lo->esize, lo->estride);
    lo->folded = cfg_experts_folded(s);
}

int wl_group_size(const cfg_strategy *s, wl_group g)
{
    assert((unsigned)g < WL_NGROUPS);
    switch (g) {
    case WL_G_TP: return cfg_tp(s);
    case WL_G_TPX: return s->tp_x;
    case WL_G_TPY: return s->tp_y;
    case WL_G_CPR: return s->cp_ring;
    case WL_G_CPU: return s->cp_ulysses;
    case WL_G_FUSED: return s->tp_y * s->cp_ulysses;
    case WL_G_EP: return cfg_ep(s);
    case WL_G_EDP: return cfg_edp_group(s);
    case WL_G_ETP: return cfg_etp(s);
    case WL_G_DP: return cfg_dp_group(s);
    case WL_G_PP: return s->pp;
    default: return 1;
    }
}

void wl_layout_coords(const wl_layout *lo, int rank, int coords[CFG_NDIMS])
{
    for (int d = 0; d < CFG_NDIMS; d++) coords[d] = (rank / lo->stride[d]) % lo->size[d];
    /* The ep coordinate: the rank's index inside its EP group. */
    coords[CFG_DIM_EP] = (rank / lo->estride[CFG_DIM_EP]) % lo->esize[CFG_DIM_EP];
}

/* Members of the group of `rank` in which the digits in `vary` of the
 * numbering (size, stride) change, innermost digit fastest. */
static int members_varying(const int size[CFG_NDIMS], const int stride[CFG_NDIMS], int rank,
                           const bool vary[CFG_NDIMS], int *members, int *my_index)
{
    cfg_dim order[CFG_NDIMS];
    int base = rank, n = 1, k = 0;
    for (int d = 0; d < CFG_NDIMS; d++)
        if (vary[d] && size[d] > 1) {
            base -= (rank / stride[d]) % size[d] * stride[d];
            n *= size[d];
            int j = k++;
            for (; j > 0 && stride[order[j - 1]] > stride[d]; j--) order[j] = order[j - 1];
            order[j] = (cfg_dim)d;
        }
    for (int m = 0; m < n; m++) {
        int r = base, rest = m;
        for (int i = 0; i < k; i++) {
            cfg_dim d = order[i];
            r += (rest % size[d]) * stride[d];
            rest /= size[d];
        }
        members[m] = r;
        if (r == rank) *my_index = m;
    }
    return n;
}

int wl_layout_members(const wl_layout *lo, int rank, wl_group g, int *members, int *my_index)
{
    bool vary[CFG_NDIMS] = {false}, expert = false;
    *my_index = 0;
    if (!lo->folded && (g == WL_G_ETP || g == WL_G_EDP)) g = g == WL_G_ETP ? WL_G_TP : WL_G_DP;
    switch (g) {
    case WL_G_TP: vary[CFG_DIM_TP_X] = vary[CFG_DIM_TP_Y] = true; break;
    case WL_G_TPX: vary[CFG_DIM_TP_X] = true; break;
    case WL_G_TPY: vary[CFG_DIM_TP_Y] = true; break;
    case WL_G_CPR: vary[CFG_DIM_CP_RING] = true; break;
    case WL_G_CPU: vary[CFG_DIM_CP_ULYSSES] = true; break;
    case WL_G_FUSED: vary[CFG_DIM_TP_Y] = vary[CFG_DIM_CP_ULYSSES] = true; break;
    case WL_G_DP: vary[CFG_DIM_DP] = vary[CFG_DIM_CP_RING] = vary[CFG_DIM_CP_ULYSSES] = true; break;
    case WL_G_PP: vary[CFG_DIM_PP] = true; break;
    case WL_G_EP: vary[CFG_DIM_EP] = expert = true; break;
    case WL_G_ETP: vary[CFG_DIM_TP_X] = expert = true; break;
    case WL_G_EDP: vary[CFG_DIM_DP] = expert = true; break;
    default: break;
    }
    return expert ? members_varying(lo->esize, lo->estride, rank, vary, members, my_index)
                  : members_varying(lo->size, lo->stride, rank, vary, members, my_index);
}

static void coll_phase(const cfg_strategy *s, const wl_instr *in, wl_coll kind, wl_group g, double bytes,
                       wl_phase_sink sink, void *ctx)
{
    wl_instr ph = *in;
    ph.coll = (uint8_t)kind;
    ph.group = (uint8_t)g;
    ph.bytes = bytes;
    wl_coll_phases(s, &ph, sink, ctx);
}

void wl_coll_phases(const cfg_strategy *s, const wl_instr *in, wl_phase_sink sink, void *ctx)
{
    wl_group g = (wl_group)in->group, inner = WL_G_TPX, across = WL_G_TPY;
    wl_coll kind = (wl_coll)in->coll;
    double S = in->bytes;
    int parts = s->tp_x;
    if (wl_group_size(s, g) <= 1 || !(S > 0)) return;
    if (kind == WL_ALLTOALL || g != WL_G_TP || s->tp_x == 1 || s->tp_y == 1) {
        sink(ctx, in);
        return;
    }
    switch (kind) {
    case WL_ALLREDUCE:
        coll_phase(s, in, WL_REDUCESCATTER, inner, S, sink, ctx);
        coll_phase(s, in, WL_ALLREDUCE, across, S / parts, sink, ctx);
        coll_phase(s, in, WL_ALLGATHER, inner, S, sink, ctx);
        break;
    case WL_ALLGATHER:
        coll_phase(s, in, WL_ALLGATHER, across, S / parts, sink, ctx);
        coll_phase(s, in, WL_ALLGATHER, inner, S, sink, ctx);
        break;
    case WL_REDUCESCATTER:
        coll_phase(s, in, WL_REDUCESCATTER, inner, S, sink, ctx);
        coll_phase(s, in, WL_REDUCESCATTER, across, S / parts, sink, ctx);
        break;
    case WL_ALLTOALL: break;
    }
}

void wl_strategy_coords(const cfg_strategy *s, int rank, int coords[CFG_NDIMS])
{
    wl_layout lo;
    wl_layout_init(&lo, s);
    wl_layout_coords(&lo, rank, coords);
}

int wl_strategy_stride(const cfg_strategy *s, cfg_dim d)
{
    wl_layout lo;
    wl_layout_init(&lo, s);
    return lo.stride[d];
}
