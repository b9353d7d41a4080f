/* derived.c - what a strategy implies: the group sizes and products, the
 * micro-batch count, usable memory, a device's speed among stragglers,
 * where the layers sit on the pipeline,
 * and which layers are MoE or windowed.  One function per quantity; every
 * module calls these rather than spelling the arithmetic again.  It calls
 * no other file of the module but pipeline_layout.c, itself a leaf. */
#include <math.h>
#include <string.h>

#include "config_int.h"

/* ------------------------------------------------------------ products */

int cfg_world_size(const cfg_strategy *s)
{
    return s->dp * s->pp * cfg_tp(s) * cfg_cp(s);
}

int cfg_tp(const cfg_strategy *s)
{
    return s->tp_x * s->tp_y;
}

int cfg_cp(const cfg_strategy *s)
{
    return s->cp_ring * s->cp_ulysses;
}

int cfg_dp_group(const cfg_strategy *s)
{
    return s->dp * cfg_cp(s);
}

int cfg_dp_shard(const cfg_strategy *s)
{
    return s->dp_shard > 0 ? s->dp_shard : cfg_dp_group(s);
}

int cfg_dp_replicate(const cfg_strategy *s)
{
    return cfg_dp_group(s) / cfg_dp_shard(s);
}

int cfg_ep(const cfg_strategy *s)
{
    return s->ep > 0 ? s->ep : 1;
}

int cfg_etp(const cfg_strategy *s)
{
    return s->etp > 0 ? s->etp : cfg_tp(s);
}

int cfg_edp_group(const cfg_strategy *s)
{
    return cfg_dp_group(s) * cfg_tp(s) / (cfg_ep(s) * cfg_etp(s));
}

double cfg_expert_load(const cfg_strategy *s)
{
    double cf = s->moe_capacity_factor, imb = s->moe_load_imbalance > 0 ? s->moe_load_imbalance : 1.0;
    if (!(cf > 0)) return imb;
    return s->moe_pad_expert_input_to_capacity ? cf : fmin(imb, cf);
}

double cfg_expert_dropped(const cfg_strategy *s)
{
    double cf = s->moe_capacity_factor, imb = s->moe_load_imbalance > 0 ? s->moe_load_imbalance : 1.0;
    return cf > 0 && imb > cf ? 1.0 - cf / imb : 0.0;
}

int cfg_micro_batches(const cfg_strategy *s)
{
    int per = s->dp * s->micro_batch;
    return per > 0 ? s->global_batch / per : 0;
}

int cfg_flush_micro_batches(const cfg_strategy *s)
{
    return cfg_micro_batches(s) / (s->pipeline_flushes > 1 ? s->pipeline_flushes : 1);
}

double cfg_usable_hbm_bytes(const cfg_platform *p)
{
    return (p->hbm_bytes - p->hbm_reserved_bytes) * (1 - p->hbm_headroom);
}

double cfg_device_speed(const cfg_platform *p, int d)
{
    double f = 1.0;
    int node = p->devices_per_node > 0 ? d / p->devices_per_node : d;
    for (int i = 0; i < p->nstragglers; i++) {
        const cfg_straggler *s = &p->stragglers[i];
        if ((s->kind == CFG_STRAGGLER_DEVICE && s->index == d) || (s->kind == CFG_STRAGGLER_NODE && s->index == node))
            f *= s->speed;
    }
    return f;
}

double cfg_nic_speed(const cfg_platform *p, int d)
{
    double f = 1.0;
    for (int i = 0; i < p->nstragglers; i++)
        if (p->stragglers[i].kind == CFG_STRAGGLER_LINK && p->stragglers[i].index == d) f *= p->stragglers[i].speed;
    return f;
}

void cfg_gemm_fp8_curve(const cfg_platform *p, cfg_curve *out)
{
    if (p->gemm_fp8_efficiency.n > 0) {
        *out = p->gemm_fp8_efficiency;
        return;
    }
    *out = p->gemm_efficiency;
    for (int i = 0; i < out->n; i++) out->x[i] *= CFG_FP8_GEMM_SHIFT;
}

int cfg_dim_radix(const cfg_strategy *s, cfg_dim d)
{
    switch (d) {
    case CFG_DIM_TP_X: return s->tp_x;
    case CFG_DIM_TP_Y: return s->tp_y;
    case CFG_DIM_CP_ULYSSES: return s->cp_ulysses;
    case CFG_DIM_CP_RING: return s->cp_ring;
    case CFG_DIM_EP: return 1;
    case CFG_DIM_DP: return s->dp;
    case CFG_DIM_PP: return s->pp;
    case CFG_NDIMS: break;
    }
    return 1;
}

int cfg_expert_radix(const cfg_strategy *s, cfg_dim d)
{
    switch (d) {
    case CFG_DIM_TP_X: return cfg_etp(s);
    case CFG_DIM_EP: return cfg_ep(s);
    case CFG_DIM_DP: return cfg_edp_group(s);
    case CFG_DIM_PP: return s->pp;
    default: return 1;
    }
}

/* The product of the radices of the slots before d in `order`: d's stride
 * in the dense numbering, or with expert in the expert one. */
static int radix_below(const cfg_strategy *s, cfg_dim d, bool expert)
{
    int below = 1;
    for (int i = 0; i < CFG_NDIMS && s->order[i] != d; i++)
        below *= expert ? cfg_expert_radix(s, s->order[i]) : cfg_dim_radix(s, s->order[i]);
    return below;
}

bool cfg_experts_folded(const cfg_strategy *s)
{
    return cfg_ep(s) > 1 || cfg_etp(s) != cfg_tp(s);
}

bool cfg_expert_stages_match(const cfg_strategy *s)
{
    return !cfg_experts_folded(s) || s->pp <= 1 ||
           radix_below(s, CFG_DIM_PP, false) == radix_below(s, CFG_DIM_PP, true);
}

/* ------------------------------------------------- layers on the pipeline */

int cfg_stage_chunks(const cfg_strategy *s)
{
    if (cfg_v_schedule(s)) return 2;
    return s->schedule == CFG_SCHED_INTERLEAVED && s->vpp > 1 ? s->vpp : 1;
}

bool cfg_v_schedule(const cfg_strategy *s)
{
    return s->schedule == CFG_SCHED_ZB_V || s->schedule == CFG_SCHED_DUALPIPE_V;
}

bool cfg_uneven_stages(const cfg_strategy *s)
{
    return s->pp > 1 && (s->first_stage_layers > 0 || s->last_stage_layers > 0);
}

/* Layers of each stage without an explicit count (uneven split only):
 * what first_stage_layers and last_stage_layers leave, shared evenly. */
static int middle_share(const cfg_model *m, const cfg_strategy *s)
{
    int fixed = (s->first_stage_layers > 0) + (s->last_stage_layers > 0);
    int others = s->pp - fixed;
    int rest = m->layers - s->first_stage_layers - s->last_stage_layers;
    return others > 0 && rest > 0 ? rest / others : 0;
}

/* Layers of stage p with the uneven split. */
static int uneven_count(const cfg_strategy *s, int share, int p)
{
    if (p == 0 && s->first_stage_layers > 0) return s->first_stage_layers;
    if (p == s->pp - 1 && s->last_stage_layers > 0) return s->last_stage_layers;
    return share;
}

/* The decoder layers before virtual stage `want` and in it. */
typedef struct layout_span {
    int want, start, count;
} layout_span;

static void span_visit(void *ctx, int index, const cfg_layout_stage *st)
{
    layout_span *sp = ctx;
    if (index < sp->want) sp->start += st->decoders;
    if (index == sp->want) sp->count = st->decoders;
}

int cfg_stage_layers(const cfg_model *m, const cfg_strategy *s, int stage, int chunk, int *first)
{
    int pp = s->pp > 0 ? s->pp : 1, v = cfg_stage_chunks(s);
    int start, count;
    int emb = s->account_for_embedding_in_pipeline_split, loss = s->account_for_loss_in_pipeline_split;
    if (s->pipeline_layout[0]) {
        layout_span sp = {.want = cfg_global_chunk(s, stage, chunk)};
        char why[SIM_ERR_LEN];
        cfg_layout_walk(s->pipeline_layout, span_visit, &sp, why, sizeof why);
        start = sp.start;
        count = sp.count;
    } else if (!cfg_uneven_stages(s) && (emb || loss)) {
        int n = pp * v, c = cfg_global_chunk(s, stage, chunk), per = (m->layers + emb + loss) / n;
        start = c * per - (c > 0 ? emb : 0);
        count = per - (c == 0 ? emb : 0) - (c == n - 1 ? loss : 0);
        if (count < 0) count = 0;
    } else if (!cfg_uneven_stages(s)) {
        long long n = (long long)pp * v, c = cfg_global_chunk(s, stage, chunk);
        start = (int)(c * m->layers / n);
        count = (int)((c + 1) * m->layers / n) - start;
    } else {
        int share = middle_share(m, s);
        int c0 = uneven_count(s, share, 0) / v, cmid = share / v, clast = uneven_count(s, share, pp - 1) / v;
        int pass = c0 + (pp - 2) * cmid + clast; /* layers of one round of chunks over all stages */
        start = chunk * pass + (stage > 0 ? c0 + (stage - 1) * cmid : 0);
        count = uneven_count(s, share, stage) / v;
    }
    if (first) *first = start;
    return count;
}

int cfg_global_chunk(const cfg_strategy *s, int stage, int chunk)
{
    int pp = s->pp > 0 ? s->pp : 1;
    if (cfg_v_schedule(s)) return chunk == 0 ? stage : 2 * pp - 1 - stage; /* down the stages and back up */
    return chunk * pp + stage;
}

int cfg_chunk_stage(const cfg_strategy *s, int g, int *chunk)
{
    int pp = s->pp > 0 ? s->pp : 1;
    int c = g / pp, stage = g % pp;
    if (cfg_v_schedule(s) && c == 1) stage = pp - 1 - stage;
    if (chunk) *chunk = c;
    return stage;
}

int cfg_head_stage(const cfg_strategy *s)
{
    int pp = s->pp > 0 ? s->pp : 1;
    return cfg_chunk_stage(s, pp * cfg_stage_chunks(s) - 1, NULL);
}

int cfg_stage_layer_total(const cfg_model *m, const cfg_strategy *s, int stage)
{
    int n = 0, v = cfg_stage_chunks(s);
    for (int j = 0; j < v; j++) n += cfg_stage_layers(m, s, stage, j, NULL);
    return n;
}

int cfg_layers_per_stage(const cfg_model *m, const cfg_strategy *s)
{
    if (s->pp <= 0) return 0;
    if (s->pipeline_layout[0]) {
        int most = 0;
        for (int p = 0; p < s->pp; p++) {
            int n = cfg_stage_layer_total(m, s, p);
            if (n > most) most = n;
        }
        return most;
    }
    if (!cfg_uneven_stages(s)) return m->layers / s->pp;
    int share = middle_share(m, s), most = share;
    if (s->first_stage_layers > most) most = s->first_stage_layers;
    if (s->last_stage_layers > most) most = s->last_stage_layers;
    return most;
}

bool cfg_is_moe_layer(const cfg_model *m, int layer)
{
    if (m->moe.experts <= 0 || layer < m->moe.first_dense_layers) return false;
    int freq = m->moe.layer_freq > 0 ? m->moe.layer_freq : 1;
    return (layer - m->moe.first_dense_layers) % freq == 0;
}

bool cfg_is_window_layer(const cfg_model *m, int layer)
{
    if (m->window.tokens <= 0) return false;
    return m->window.full_every <= 0 || (layer + 1) % m->window.full_every != 0;
}
