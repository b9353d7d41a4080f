/* layout.c - rank <-> 7D coordinates and process groups, and their sizes.
 *
 * A rank number is a mixed-radix number whose digits are the coordinates of
 * the dimensions in `order`, innermost (fastest varying) first, so the
 * innermost dimensions are neighbours and stay inside a node or supernode.
 * Expert parallel groups are cut out of the data space: the dp x cp_ring x
 * cp_ulysses ranks that share tp and pp coordinates, as Megatron does. */
#include <assert.h>

#include "internal.h"

void wl_layout_init(wl_layout *lo, const cfg_strategy *s)
{
    int stride = 1, nd = 0, pos_ep = 0, pos_dp = 0;
    for (int i = 0; i < CFG_NDIMS; i++) {
        cfg_dim d = s->order[i];
        lo->size[d] = cfg_dim_radix(s, d);
        lo->stride[d] = stride;
        stride *= lo->size[d];
        if (d == CFG_DIM_EP) pos_ep = i;
        if (d == CFG_DIM_DP) pos_dp = i;
        if (d == CFG_DIM_CP_ULYSSES || d == CFG_DIM_CP_RING || d == CFG_DIM_DP) lo->data_dims[nd++] = d;
    }
    lo->world = stride;
    lo->ep = cfg_ep(s);
    lo->tp = cfg_tp(s);
    lo->etp = cfg_etp(s);
    lo->ep_inner = pos_ep < pos_dp;
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
    case WL_G_EBLK: return cfg_expert_blocks(s);
    case WL_G_EDPD: return cfg_dp_group(s) / cfg_ep(s);
    case WL_G_DP: return cfg_dp_group(s);
    case WL_G_PP: return s->pp;
    default: return 1;
    }
}

void wl_layout_coords(const wl_layout *lo, int rank, int coords[CFG_NDIMS])
{
    for (int d = 0; d < CFG_NDIMS; d++) coords[d] = (rank / lo->stride[d]) % lo->size[d];
    /* The ep coordinate: the rank's index inside its EP group. */
    int j = 0, mul = 1;
    for (int i = 0; i < 3; i++) {
        cfg_dim d = lo->data_dims[i];
        j += coords[d] * mul;
        mul *= lo->size[d];
    }
    coords[CFG_DIM_EP] = lo->ep_inner ? j % lo->ep : j / (mul / lo->ep);
}

/* Index of a rank in the data space, and the rank with data index j and
 * the same tp/pp coordinates as `rank`. */
static int data_index(const wl_layout *lo, const int coords[CFG_NDIMS], int *space)
{
    int j = 0, mul = 1;
    for (int i = 0; i < 3; i++) {
        cfg_dim d = lo->data_dims[i];
        j += coords[d] * mul;
        mul *= lo->size[d];
    }
    *space = mul;
    return j;
}

static int rank_with_data_index(const wl_layout *lo, int rank, const int coords[CFG_NDIMS], int j)
{
    int r = rank;
    for (int i = 0; i < 3; i++) {
        cfg_dim d = lo->data_dims[i];
        int c = j % lo->size[d];
        j /= lo->size[d];
        r += (c - coords[d]) * lo->stride[d];
    }
    return r;
}

/* Index of a rank inside its TP group (tp_x fastest) and the rank offset
 * of TP index i from the group's first rank. */
static int tp_index(const wl_layout *lo, const int coords[CFG_NDIMS])
{
    return coords[CFG_DIM_TP_X] + lo->size[CFG_DIM_TP_X] * coords[CFG_DIM_TP_Y];
}

static int tp_offset(const wl_layout *lo, int i)
{
    int x = lo->size[CFG_DIM_TP_X];
    return (i % x) * lo->stride[CFG_DIM_TP_X] + (i / x) * lo->stride[CFG_DIM_TP_Y];
}

/* Rank offset, from a rank at TP index ti, of the rank of the same TP group
 * holding the same expert shard in ETP block b. */
static int block_offset(const wl_layout *lo, int ti, int b)
{
    return tp_offset(lo, b * lo->etp + ti % lo->etp) - tp_offset(lo, ti);
}

/* Members of the group in which the dimensions in `vary` change. */
static int members_varying(const wl_layout *lo, int rank, const int coords[CFG_NDIMS], const bool vary[CFG_NDIMS],
                           const cfg_dim *order, int *members, int *my_index)
{
    int base = rank, n = 1;
    for (int d = 0; d < CFG_NDIMS; d++)
        if (vary[d]) {
            base -= coords[d] * lo->stride[d];
            n *= lo->size[d];
        }
    for (int k = 0; k < n; k++) {
        int r = base, rest = k;
        for (int i = 0; i < CFG_NDIMS; i++) {
            cfg_dim d = order[i];
            if (!vary[d]) continue;
            r += (rest % lo->size[d]) * lo->stride[d];
            rest /= lo->size[d];
        }
        members[k] = r;
        if (r == rank) *my_index = k;
    }
    return n;
}

int wl_layout_members(const wl_layout *lo, int rank, wl_group g, int *members, int *my_index)
{
    int coords[CFG_NDIMS];
    wl_layout_coords(lo, rank, coords);
    *my_index = 0;

    if (g == WL_G_EBLK) {
        int blocks = lo->tp / lo->etp, ti = tp_index(lo, coords);
        for (int b = 0; b < blocks; b++) {
            members[b] = rank + block_offset(lo, ti, b);
            if (members[b] == rank) *my_index = b;
        }
        return blocks;
    }
    if (g == WL_G_EP || g == WL_G_EDP || g == WL_G_EDPD) {
        int space, j = data_index(lo, coords, &space);
        int ep = lo->ep, outer = space / ep;
        /* EP member index e and group index q of data index j. */
        int e = lo->ep_inner ? j % ep : j / outer;
        int q = lo->ep_inner ? j / ep : j % outer;
        int n = g == WL_G_EP ? ep : outer; /* EDPD: the data part of EDP */
        for (int k = 0; k < n; k++) {
            int ek = g == WL_G_EP ? k : e, qk = g == WL_G_EP ? q : k;
            int jk = lo->ep_inner ? qk * ep + ek : ek * outer + qk;
            members[k] = rank_with_data_index(lo, rank, coords, jk);
        }
        if (g == WL_G_EDP && lo->tp / lo->etp > 1) {
            /* Ranks of the TP group that hold the same expert shard (same
             * index inside their ETP block) hold the same weights too. */
            int blocks = lo->tp / lo->etp, ti = tp_index(lo, coords);
            for (int b = blocks - 1; b >= 0; b--)
                for (int k = 0; k < n; k++) members[b * n + k] = members[k] + block_offset(lo, ti, b);
            n *= blocks;
        }
        for (int k = 0; k < n; k++)
            if (members[k] == rank) *my_index = k;
        return n;
    }
    if (g == WL_G_ETP) {
        int ti = tp_index(lo, coords), first = ti - ti % lo->etp;
        for (int k = 0; k < lo->etp; k++) {
            members[k] = rank + tp_offset(lo, first + k) - tp_offset(lo, ti);
            if (members[k] == rank) *my_index = k;
        }
        return lo->etp;
    }

    bool vary[CFG_NDIMS] = {false};
    switch (g) {
    case WL_G_TP: vary[CFG_DIM_TP_X] = vary[CFG_DIM_TP_Y] = true; break;
    case WL_G_TPX: vary[CFG_DIM_TP_X] = true; break;
    case WL_G_TPY: vary[CFG_DIM_TP_Y] = true; break;
    case WL_G_CPR: vary[CFG_DIM_CP_RING] = true; break;
    case WL_G_CPU: vary[CFG_DIM_CP_ULYSSES] = true; break;
    case WL_G_FUSED: vary[CFG_DIM_TP_Y] = vary[CFG_DIM_CP_ULYSSES] = true; break;
    case WL_G_DP: vary[CFG_DIM_DP] = vary[CFG_DIM_CP_RING] = vary[CFG_DIM_CP_ULYSSES] = true; break;
    case WL_G_PP: vary[CFG_DIM_PP] = true; break;
    default: break;
    }
    cfg_dim order[CFG_NDIMS];
    /* Ring order follows the rank order: innermost varying dimension first. */
    int k = 0;
    for (int i = 0; i < CFG_NDIMS; i++) order[k++] = (cfg_dim)i;
    /* sort dims by stride so the innermost varies fastest */
    for (int i = 1; i < CFG_NDIMS; i++)
        for (int j = i; j > 0 && lo->stride[order[j]] < lo->stride[order[j - 1]]; j--) {
            cfg_dim t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    return members_varying(lo, rank, coords, vary, order, members, my_index);
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
    wl_group g = (wl_group)in->group, inner, across;
    wl_coll kind = (wl_coll)in->coll;
    double S = in->bytes;
    int parts;
    if (wl_group_size(s, g) <= 1 || !(S > 0)) return;
    if (kind != WL_ALLTOALL && g == WL_G_TP && s->tp_x > 1 && s->tp_y > 1) {
        inner = WL_G_TPX;
        across = WL_G_TPY;
        parts = s->tp_x;
    } else if (kind != WL_ALLTOALL && g == WL_G_EDP && cfg_expert_blocks(s) > 1) {
        inner = cfg_etp(s) == 1 ? WL_G_TP : WL_G_EBLK; /* etp 1: the whole TP group, 2D-split again */
        across = WL_G_EDPD;
        parts = cfg_expert_blocks(s);
    } else {
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
