/* keys.c - the strategy keys: one table row per key (cfg_strategy_keys),
 * the rules its rows name, and the readers of the table (equality,
 * fingerprint, compact strings, values).
 *
 * A row is the key's schema entry (JSON name, type, bounds or enum names,
 * default, field) followed by what the rest of the simulator needs: flags
 * (equality, fingerprint, pin, checked), the search columns (position,
 * stage, the values tried, the rule every value must pass, what a pinned
 * value stands for, when the key matters) and the compact-string columns
 * (position and token).  keys.h describes the columns; the search reads
 * them in search/search.c and search/enumerate.c.
 *
 * The space a search tries (the values of each key): every factorisation
 * of the devices into tp_x, tp_y, cp_ulysses, cp_ring and pp, dp taking
 * the rest (the Megatron-style subspace: tp_y = cp_ulysses = 1 (cp_ulysses
 * too with Megatron-Core's all-to-all CP), TP inside a node, zero 0 or 1,
 * Megatron-Core's rank orders; docs/study.md lists its flags); ep a divisor of the experts and of the
 * tp x cp x dp ranks (with etp, it must divide them: cfg_check); etp = tp, or 1 for MoE models with TP; micro_batch a power of two
 * up to CFG_SEARCH_MAX_MICRO_BATCH that divides the sequences per replica;
 * schedule 1f1b, zb-h1, zb-v, dualpipe-v (not in the Megatron-style
 * subspace: Megatron-LM has neither), or interleaved with vpp a divisor
 * (2..CFG_SEARCH_MAX_VPP) of every stage's layers (GPipe is left out:
 * 1F1B's bubble with more activation memory); every recompute mode; zero 0..3; the switches both
 * ways; the distinct rank orders among four; the precision keys (fp8,
 * grad_reduce_in_bf16, optimizer_moments) at their default, and also at
 * the base strategy's value when it lowers the precision (never on their
 * own; fp8 only on a device with an FP8 peak); the base strategy's
 * attention kernel (not searched: FlashAttention is never worse).  A key
 * whose value changes
 * nothing in a strategy (its `matters` rule is false) takes its default
 * only, so that every candidate is a distinct strategy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_int.h"

/* {========================================================== enum names */

/* ORDER CFG_SCHEDULE */
static const char *const schedule_names[] = {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-v", "dualpipe-v", NULL};
_Static_assert(sizeof schedule_names / sizeof *schedule_names == CFG_NSCHEDULES + 1, "one name per schedule");
/* ORDER CFG_RECOMPUTE */
static const char *const recompute_names[] = {"none", "selective", "full", NULL};
_Static_assert(sizeof recompute_names / sizeof *recompute_names == CFG_NRECOMPUTES + 1, "one name per mode");
/* ORDER CFG_RECOMPUTE: the compact tokens of the modes */
static const char *const recompute_tokens[] = {"norc", "sel", "full"};
_Static_assert(sizeof recompute_tokens / sizeof *recompute_tokens == CFG_NRECOMPUTES, "one token per mode");
/* ORDER CFG_RECOMPUTE_MODULE */
static const char *const recompute_module_names[] = {"core_attn", "moe_act",   "layernorm",      "mla_up_proj",
                                                     "mlp",       "moe",       "shared_experts", NULL};
_Static_assert(sizeof recompute_module_names / sizeof *recompute_module_names == CFG_NRECOMPUTE_MODULES + 1,
               "one name per recompute module");
/* ORDER CFG_ATTENTION */
static const char *const attention_names[] = {"flash", "eager", NULL};
_Static_assert(sizeof attention_names / sizeof *attention_names == CFG_NATTENTIONS + 1, "one name per kernel");
/* ORDER CFG_MOMENTS */
static const char *const moments_names[] = {"fp32", "bf16", NULL};
_Static_assert(sizeof moments_names / sizeof *moments_names == CFG_NMOMENTS + 1, "one name per precision");
/* ORDER CFG_DISPATCHER */
static const char *const dispatcher_names[] = {"alltoall", "allgather", "flex", NULL};
_Static_assert(sizeof dispatcher_names / sizeof *dispatcher_names == CFG_NDISPATCHERS + 1, "one name per dispatcher");
/* ORDER CFG_FP8_RECIPE */
static const char *const fp8_recipe_names[] = {"delayed", "tensorwise", "blockwise", "mxfp8", NULL};
_Static_assert(sizeof fp8_recipe_names / sizeof *fp8_recipe_names == CFG_NFP8_RECIPES + 1, "one name per recipe");

const char *cfg_schedule_name(cfg_schedule s)
{
    return (unsigned)s < CFG_NSCHEDULES ? schedule_names[s] : "?";
}

const char *cfg_recompute_name(cfg_recompute r)
{
    return (unsigned)r < CFG_NRECOMPUTES ? recompute_names[r] : "?";
}

const char *cfg_dispatcher_name(cfg_dispatcher d)
{
    return (unsigned)d < CFG_NDISPATCHERS ? dispatcher_names[d] : "?";
}

const char *cfg_fp8_recipe_name(cfg_fp8_recipe r)
{
    return (unsigned)r < CFG_NFP8_RECIPES ? fp8_recipe_names[r] : "?";
}

int cfg_recompute_module_parse(const char *word, size_t len)
{
    for (int i = 0; i < CFG_NRECOMPUTE_MODULES; i++)
        if (strlen(recompute_module_names[i]) == len && strncmp(word, recompute_module_names[i], len) == 0) return i;
    return -1;
}

const char *cfg_recompute_module_suggest(const char *word)
{
    return cfg_suggest(word, recompute_module_names, CFG_NRECOMPUTE_MODULES);
}

unsigned cfg_recompute_modules(const cfg_strategy *s)
{
    if (s->recompute != CFG_RECOMP_SELECTIVE) return 0;
    if (!s->recompute_modules[0]) return 1u << CFG_RM_CORE_ATTN;
    unsigned bits = 0;
    for (const char *p = s->recompute_modules; *p;) {
        size_t len = strcspn(p, ", ");
        int i = cfg_recompute_module_parse(p, len);
        if (i >= 0) bits |= 1u << i;
        p += len;
        p += strspn(p, ", ");
    }
    return bits;
}

/* }========================================================== enum names */

/* {======================================================= named orders */

#define NORDERS 4

/* The rank orders a search tries, with their short names. */
static const struct {
    const char *name;
    cfg_dim order[CFG_NDIMS];
} named_orders[NORDERS] = {
    /* TP, then CP, EP, DP, PP outermost */
    {"default", {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_DP, CFG_DIM_PP}},
    /* data parallel inside context parallel */
    {"dp<cp", {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_EP, CFG_DIM_DP, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_PP}},
    /* expert groups strided over data-parallel replicas */
    {"ep-outer", {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_DP, CFG_DIM_EP, CFG_DIM_PP}},
    /* pipeline neighbours close, data parallel outermost */
    {"pp-inner", {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_PP, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_DP}},
};

#define SIGLEN (2 * CFG_NDIMS)

/* What an order decides for s: the sequence of rank digits larger than
 * one in the dense numbering, then, when the experts have groups of their
 * own (ep > 1 or etp other than tp), in the expert one (cfg_expert_radix).
 * Two orders with the same signature give the same rank layout and
 * groups. */
static void order_signature(const cfg_strategy *s, const cfg_dim *order, int sig[SIGLEN])
{
    int k = 0;
    bool experts = cfg_experts_folded(s);
    for (int i = 0; i < CFG_NDIMS; i++)
        if (cfg_dim_radix(s, order[i]) > 1) sig[k++] = (int)order[i];
    while (k < CFG_NDIMS) sig[k++] = -1;
    for (int i = 0; i < CFG_NDIMS && experts; i++)
        if (cfg_expert_radix(s, order[i]) > 1) sig[k++] = (int)order[i];
    while (k < SIGLEN) sig[k++] = -1;
}

/* The rank orders of Megatron-Core (parallel_state's `order`). */
static const cfg_dim megatron_orders[2][CFG_NDIMS] = {
    {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_DP, CFG_DIM_PP},
    {CFG_DIM_TP_X, CFG_DIM_TP_Y, CFG_DIM_CP_ULYSSES, CFG_DIM_CP_RING, CFG_DIM_EP, CFG_DIM_PP, CFG_DIM_DP},
};

bool cfg_order_megatron(const cfg_strategy *s, const cfg_dim *order)
{
    int sig[SIGLEN];
    order_signature(s, order, sig);
    for (int i = 0; i < 2; i++) {
        int ref[SIGLEN];
        order_signature(s, megatron_orders[i], ref);
        if (memcmp(ref, sig, sizeof sig) == 0) return true;
    }
    return false;
}

void cfg_order_name(const cfg_strategy *s, char *out, int cap)
{
    int sig[SIGLEN];
    order_signature(s, s->order, sig);
    for (int i = 0; i < NORDERS; i++) {
        int ref[SIGLEN];
        order_signature(s, named_orders[i].order, ref);
        if (memcmp(ref, sig, sizeof sig) == 0) {
            sim_strlcpy(out, named_orders[i].name, (size_t)cap);
            return;
        }
    }
    cfg_order_format(s, out, cap);
}

/* }======================================================= named orders */

/* {================================================ the rows' rules */

static bool has_data_parallel(const cfg_strategy *s) { return cfg_dp_group(s) > 1 || cfg_edp_group(s) > 1; }

/* Divisors of n in increasing order; returns the count (at most cap). */
static int divisors(int n, cfg_value *out, int cap)
{
    int k = 0;
    for (int d = 1; d <= n && k < cap; d++)
        if (n % d == 0) out[k++] = (cfg_value){.i = d};
    return k;
}

/* rank dimensions: every divisor of the devices left */
static int dims_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k, (void)s;
    return divisors(sp->room, out, CFG_MAX_CHOICES);
}

static bool tp_x_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    (void)s;
    const cfg_model *m = sp->model;
    int tx = v->i, node = sp->platform->devices_per_node;
    if (sp->megatron && (tx > node || node % tx != 0)) return false; /* TP inside a node */
    return m->heads % tx == 0 && m->hidden % tx == 0;
}

static bool tp_y_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    int t = s->tp_x * v->i;
    return (!sp->megatron || v->i == 1) && sp->model->hidden % t == 0 && sp->model->ffn_hidden % t == 0;
}

static bool cp_ulysses_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    return (!sp->megatron || sp->megatron_a2a_cp || v->i == 1) && sp->model->heads % (s->tp_x * v->i) == 0;
}

/* layers split evenly, or the base strategy's own uneven split or layout
 * (a layout fixes pp: cfg_check refuses the others) */
static bool pp_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    (void)s;
    bool own = cfg_uneven_stages(sp->base) || sp->base->pipeline_layout[0];
    return (sp->model->layers % v->i == 0 && !sp->base->pipeline_layout[0]) || (v->i == sp->base->pp && own);
}

/* dp: the devices the other dimensions leave */
static int dp_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k, (void)s;
    out[0] = (cfg_value){.i = sp->room};
    return 1;
}

static bool dp_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    (void)s;
    return v->i == sp->room;
}

/* ep: divisors of the experts that divide the tp x cp x dp ranks of a
 * stage, the expert groups being folded over them (cfg_check drops those
 * that do not fit the etp tried with them) */
static int ep_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k;
    int experts = sp->model->moe.experts;
    if (experts <= 0) {
        out[0] = (cfg_value){.i = 1};
        return 1;
    }
    cfg_value all[CFG_MAX_CHOICES];
    int n = divisors(experts, all, CFG_MAX_CHOICES), data = cfg_dp_group(s) * cfg_tp(s), j = 0;
    for (int i = 0; i < n; i++)
        if (data % all[i].i == 0) out[j++] = all[i];
    return j;
}

/* etp: experts split like the dense layers (Megatron's default), or whole on each TP rank */
static int etp_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k;
    int tp = cfg_tp(s);
    out[0] = (cfg_value){.i = tp};
    if (sp->model->moe.experts <= 0 || tp == 1) return 1;
    out[1] = (cfg_value){.i = 1};
    return 2;
}

/* etp 0 stands for the TP size */
static void etp_derive(const cfg_strategy *s, cfg_value *v)
{
    if (v->i <= 0) v->i = cfg_tp(s);
}

/* micro_batch: powers of two that divide the sequences of one replica */
static int micro_batch_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k;
    int per_rank = sp->base->global_batch / (s->dp > 0 ? s->dp : 1), n = 0;
    for (int b = 1; b <= CFG_SEARCH_MAX_MICRO_BATCH && b <= per_rank; b *= 2)
        if (per_rank % b == 0) out[n++] = (cfg_value){.i = b};
    if (n == 0) out[n++] = (cfg_value){.i = 1}; /* cfg_check names the batch rule */
    return n;
}

/* A bool: the default, then the other value when the key matters. */
static int switch_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)sp;
    out[0] = (cfg_value){.i = k->def != 0};
    if (!cfg_key_matters(k, s)) return 1;
    out[1] = (cfg_value){.i = k->def == 0};
    return 2;
}

/* A precision key (fp8, grad_reduce_in_bf16, optimizer_moments), which
 * trades accuracy for speed or memory: a search never lowers it on its
 * own.  It tries the default, then the base strategy's value when that
 * differs (the strategy allows it); `--set` pins one value. */
static int opt_in_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    cfg_key_default(k, &out[0]);
    cfg_value b;
    cfg_key_get(k, sp->base, &b);
    if (cfg_value_same(k, &out[0], &b) || !cfg_key_matters(k, s)) return 1;
    out[1] = b;
    return 2;
}

/* fp8 on a device with an FP8 peak only */
static bool fp8_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    (void)s;
    return v->i == 0 || sp->platform->fp8_peak_flops_per_s > 0;
}

/* sequence_parallel: on first (with 1D TP, Megatron runs it on) */
static int sequence_parallel_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)sp;
    if (!cfg_key_matters(k, s)) {
        out[0] = (cfg_value){.i = 0};
        return 1;
    }
    out[0] = (cfg_value){.i = 1};
    out[1] = (cfg_value){.i = 0};
    return 2;
}

/* An int or an enum: every value from min to max (every name) when the
 * key matters, else the default. */
static int every_choice(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)sp;
    if (!cfg_key_matters(k, s)) {
        cfg_key_default(k, &out[0]);
        return 1;
    }
    int n = 0;
    if (k->type == CFG_K_ENUM)
        for (; k->names[n] && n < CFG_MAX_CHOICES; n++) out[n] = (cfg_value){.i = k->values ? k->values[n] : n};
    else
        for (int v = (int)k->min; v <= (int)k->max && n < CFG_MAX_CHOICES; v++) out[n++] = (cfg_value){.i = v};
    return n;
}

/* schedule (with its vpp): 1f1b, then interleaved with every vpp that
 * divides the layers of every stage */
static int schedule_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k;
    const cfg_model *m = sp->model;
    if (s->pipeline_layout[0]) { /* the layout fixes the virtual stages */
        out[0] = (cfg_value){.i = (int)sp->base->schedule, .with = sp->base->vpp};
        return 1;
    }
    out[0] = (cfg_value){.i = CFG_SCHED_1F1B, .with = 1};
    if (s->pp < 2) return 1;
    int n = 1;
    /* zero bubble and DualPipe-V (cfg_check drops the V ones where the layers or micro-batches do not fit) */
    for (int z = CFG_SCHED_ZB_H1; z <= CFG_SCHED_DUALPIPE_V && !sp->megatron; z++)
        out[n++] = (cfg_value){.i = z, .with = 1};
    if (!cfg_uneven_stages(s)) {
        int per_stage = m->layers / s->pp;
        for (int v = 2; v <= CFG_SEARCH_MAX_VPP && v <= per_stage; v++)
            if (per_stage % v == 0) out[n++] = (cfg_value){.i = CFG_SCHED_INTERLEAVED, .with = v};
        return n;
    }
    /* uneven: v divides the first, a middle and the last stage's layers */
    cfg_strategy one = *s;
    one.schedule = CFG_SCHED_1F1B;
    one.vpp = 1;
    int layers[3] = {cfg_stage_layer_total(m, &one, 0), cfg_stage_layer_total(m, &one, s->pp / 2),
                     cfg_stage_layer_total(m, &one, s->pp - 1)};
    for (int v = 2; v <= CFG_SEARCH_MAX_VPP; v++) {
        bool fits = true;
        for (int i = 0; i < 3; i++) fits = fits && layers[i] >= v && layers[i] % v == 0;
        if (fits) out[n++] = (cfg_value){.i = CFG_SCHED_INTERLEAVED, .with = v};
    }
    return n;
}

/* order: the named orders that give s distinct rank layouts */
static int order_choices(const cfg_key *k, const cfg_space *sp, const cfg_strategy *s, cfg_value *out)
{
    (void)k, (void)sp;
    int sigs[NORDERS][SIGLEN], n = 0;
    for (int i = 0; i < NORDERS; i++) {
        int sig[SIGLEN];
        order_signature(s, named_orders[i].order, sig);
        bool seen = false;
        for (int j = 0; j < n && !seen; j++) seen = memcmp(sigs[j], sig, sizeof sig) == 0;
        if (seen) continue;
        memcpy(sigs[n], sig, sizeof sig);
        memset(&out[n], 0, sizeof out[n]);
        memcpy(out[n].order, named_orders[i].order, sizeof out[n].order);
        n++;
    }
    return n;
}

/* zero: the Megatron-style subspace has Megatron-Core's distributed
 * optimizer (optimizer states sharded, gradients reduce-scattered but kept
 * whole in the grad buffer: zero 1), not ZeRO-2/3 */
static bool zero_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    (void)s;
    return !sp->megatron || v->i <= 1;
}

/* order: the expert numbering on the dense one's stages (cfg_check); the
 * Megatron-style subspace has Megatron-Core's two rank orders */
static bool order_fits(const cfg_space *sp, const cfg_strategy *s, const cfg_value *v)
{
    cfg_strategy o = *s;
    memcpy(o.order, v->order, sizeof o.order);
    if (o.etp <= 0) o.etp = cfg_tp(&o);
    return cfg_expert_stages_match(&o) && (!sp->megatron || cfg_order_megatron(s, v->order));
}

/* when a key matters */
static bool pipelined(const cfg_strategy *s) { return s->pp > 1; }
static bool one_d_tp(const cfg_strategy *s) { return s->tp_y == 1 && s->tp_x > 1; }
static bool two_d_tp_and_ulysses(const cfg_strategy *s) { return s->tp_y > 1 && s->cp_ulysses > 1; }
static bool ring_cp(const cfg_strategy *s) { return s->cp_ring > 1; }
static bool selective(const cfg_strategy *s) { return s->recompute == CFG_RECOMP_SELECTIVE; }
static bool sharded_data_parallel(const cfg_strategy *s) { return has_data_parallel(s) && (s->zero == 1 || s->zero == 2); }

/* compact tokens */
static void tp_token(const cfg_strategy *s, char *out, size_t cap)
{
    if (s->tp_y > 1)
        snprintf(out, cap, "tp%dx%d", s->tp_x, s->tp_y);
    else
        snprintf(out, cap, "tp%d", s->tp_x);
}

static void schedule_token(const cfg_strategy *s, char *out, size_t cap)
{
    if (s->schedule == CFG_SCHED_INTERLEAVED)
        snprintf(out, cap, "v%d", s->vpp);
    else if (s->schedule == CFG_SCHED_1F1B)
        out[0] = '\0';
    else
        snprintf(out, cap, "-%s", cfg_schedule_name(s->schedule)); /* pp8-gpipe, pp8-zb-v */
}

static void flushes_token(const cfg_strategy *s, char *out, size_t cap)
{
    if (s->pp > 1 && s->pipeline_flushes > 0) /* flush1 written: 1 and the default 0 are two strategies */
        snprintf(out, cap, "flush%d", s->pipeline_flushes);
    else
        out[0] = '\0';
}

static void etp_token(const cfg_strategy *s, char *out, size_t cap)
{
    if (s->etp > 0 && s->etp != cfg_tp(s))
        snprintf(out, cap, "etp%d", s->etp);
    else
        out[0] = '\0';
}

static void recompute_token(const cfg_strategy *s, char *out, size_t cap)
{
    sim_strlcpy(out, (unsigned)s->recompute < 3 ? recompute_tokens[s->recompute] : "?", cap);
}

static void attention_token(const cfg_strategy *s, char *out, size_t cap)
{
    sim_strlcpy(out, s->attention_kernel == CFG_ATTN_EAGER ? "eager" : "", cap);
}

static void dispatcher_token(const cfg_strategy *s, char *out, size_t cap)
{
    static const char *const tokens[] = {"", "ag-dispatch", "flex-dispatch"}; /* ORDER CFG_DISPATCHER */
    _Static_assert(sizeof tokens / sizeof *tokens == CFG_NDISPATCHERS, "one token per dispatcher");
    sim_strlcpy(out, (unsigned)s->moe_dispatcher < CFG_NDISPATCHERS ? tokens[s->moe_dispatcher] : "?", cap);
}

/* the recipe when it is not the default (beside fp8; read only with it) */
static void fp8_recipe_token(const cfg_strategy *s, char *out, size_t cap)
{
    sim_strlcpy(out, s->fp8_recipe != CFG_FP8_DELAYED ? cfg_fp8_recipe_name(s->fp8_recipe) : "", cap);
}

static void moments_token(const cfg_strategy *s, char *out, size_t cap)
{
    sim_strlcpy(out, s->optimizer_moments == CFG_MOMENTS_BF16 ? "bf16-adam" : "", cap);
}

static void order_token(const cfg_strategy *s, char *out, size_t cap)
{
    cfg_order_name(s, out, (int)cap);
    if (strcmp(out, "default") == 0) out[0] = '\0';
}

/* The readers of the tokens the format functions above write. */

/* A whole number of at most 9 digits at the start of text into *out;
 * returns the digits taken (0: none). */
static int read_count(const char *text, int *out)
{
    int n = 0, v = 0;
    while (text[n] >= '0' && text[n] <= '9' && n < 9) v = v * 10 + (text[n++] - '0');
    if (text[n] >= '0' && text[n] <= '9') return 0; /* too long to be a count */
    *out = v;
    return n;
}

/* the literal prefix, then a count ("tp" 8) */
static int read_prefixed(const char *word, const char *prefix, int *out)
{
    size_t len = strlen(prefix);
    if (strncmp(word, prefix, len) != 0) return 0;
    int n = read_count(word + len, out);
    return n ? (int)len + n : 0;
}

static int tp_parse(const char *word, cfg_strategy *s)
{
    int x, y = 1, n = read_prefixed(word, "tp", &x);
    if (n && word[n] == 'x') {
        int m = read_count(word + n + 1, &y);
        if (m) n += 1 + m;
    }
    if (n) s->tp_x = x, s->tp_y = y;
    return n;
}

static int schedule_parse(const char *word, cfg_strategy *s)
{
    int v, n = read_prefixed(word, "v", &v);
    if (n) {
        s->schedule = CFG_SCHED_INTERLEAVED;
        s->vpp = v;
        return n;
    }
    if (word[0] != '-') return 0;
    for (int i = 0; schedule_names[i]; i++) { /* interleaved is written vN */
        size_t len = strlen(schedule_names[i]);
        if (i != CFG_SCHED_INTERLEAVED && strncmp(word + 1, schedule_names[i], len) == 0 && word[1 + len] == '\0') {
            s->schedule = (cfg_schedule)i;
            s->vpp = 1;
            return 1 + (int)len;
        }
    }
    return 0;
}

static int flushes_parse(const char *word, cfg_strategy *s)
{
    int v, n = read_prefixed(word, "flush", &v);
    if (n) s->pipeline_flushes = v;
    return n;
}

static int etp_parse(const char *word, cfg_strategy *s)
{
    int v, n = read_prefixed(word, "etp", &v);
    if (n) s->etp = v;
    return n;
}

/* a named order, or the order itself ("tp_x-tp_y-...") */
static int order_parse(const char *word, cfg_strategy *s)
{
    for (int i = 0; i < NORDERS; i++)
        if (strcmp(word, named_orders[i].name) == 0) {
            memcpy(s->order, named_orders[i].order, sizeof s->order);
            return (int)strlen(word);
        }
    char why[200];
    return cfg_order_parse(word, s->order, why, sizeof why) ? (int)strlen(word) : 0;
}

/* }================================================ the rows' rules */

/* {========================================================= the table */

#define MAXDIM CFG_MAX_DEVICES
#define S_INT(k, f, lo, hi, d) .key = k, .type = CFG_K_INT, .offset = offsetof(cfg_strategy, f), .min = lo, .max = hi, .def = d
#define S_DBL(k, f, lo, hi, d) .key = k, .type = CFG_K_DOUBLE, .offset = offsetof(cfg_strategy, f), .min = lo, .max = hi, .def = d
#define S_BOOL(k, f, d) .key = k, .type = CFG_K_BOOL, .offset = offsetof(cfg_strategy, f), .def = d
#define S_ENUM(k, f, nm, d) .key = k, .type = CFG_K_ENUM, .offset = offsetof(cfg_strategy, f), .names = nm, .def_str = d
#define S_STR(k, f) .key = k, .type = CFG_K_STRING, .offset = offsetof(cfg_strategy, f), .size = sizeof(((cfg_strategy *)0)->f)
#define S_ORDER(k, f, d) .key = k, .type = CFG_K_ORDER, .offset = offsetof(cfg_strategy, f), .def_str = d

#define SAME (CFG_KF_SAME | CFG_KF_FINGERPRINT)
#define PIN CFG_KF_PIN
#define ALWAYS CFG_KF_TOKEN_ALWAYS
#define NOMEM CFG_KF_NO_MEMORY
#define PROBE CFG_KF_PROBE
#define ROWS CFG_KF_STAGE_ROWS
#define COSTS CFG_KF_STAGE_COSTS
#define DIMS .stage = CFG_STAGE_DIMS
#define SHAPE .stage = CFG_STAGE_SHAPE
#define INNER .stage = CFG_STAGE_INNER

/* One row per key.  Columns after the schema entry: flags; search position,
 * stage and rules; compact position and token. */
const cfg_key cfg_strategy_keys[] = {
    {S_STR("name", name), .flags = CFG_KF_DERIVED},
    {S_STR("description", description)},
    {S_INT("dp", dp, 0, MAXDIM, 0), .flags = SAME | PIN | ALWAYS | PROBE,
     .search = 6, DIMS, .choices = dp_choices, .fits = dp_fits, .compact = 1, .token = "dp%d"},
    {S_INT("pp", pp, 1, MAXDIM, 1), .flags = SAME | PIN | ALWAYS | PROBE,
     .search = 5, DIMS, .choices = dims_choices, .fits = pp_fits, .compact = 2, .token = "pp%d"},
    {S_INT("tp_x", tp_x, 1, MAXDIM, 1), .flags = SAME | PIN | PROBE,
     .search = 1, DIMS, .choices = dims_choices, .fits = tp_x_fits, .compact = 6, .format = tp_token, .parse = tp_parse},
    {S_INT("tp_y", tp_y, 1, MAXDIM, 1), .flags = SAME | PIN | PROBE, /* token: tp_x's */
     .search = 2, DIMS, .choices = dims_choices, .fits = tp_y_fits},
    {S_INT("cp_ring", cp_ring, 1, MAXDIM, 1), .flags = SAME | PIN | PROBE,
     .search = 4, DIMS, .choices = dims_choices, .compact = 8, .token = "ring%d"},
    {S_INT("cp_ulysses", cp_ulysses, 1, MAXDIM, 1), .flags = SAME | PIN | PROBE,
     .search = 3, DIMS, .choices = dims_choices, .fits = cp_ulysses_fits, .compact = 9, .token = "uly%d"},
    {S_INT("ep", ep, 1, MAXDIM, 1), .flags = SAME | PIN | PROBE,
     .search = 7, SHAPE, .choices = ep_choices, .compact = 11, .token = "ep%d"},
    {S_INT("etp", etp, 0, MAXDIM, 0), .flags = SAME | PIN | PROBE,
     .search = 8, SHAPE, .choices = etp_choices, .derive = etp_derive, .compact = 12, .format = etp_token, .parse = etp_parse},
    {S_INT("vpp", vpp, 1, CFG_MAX_LAYERS, 1), .flags = SAME | PIN | ROWS, .pin_as = "schedule"}, /* searched, token: schedule's */
    {S_INT("first_stage_layers", first_stage_layers, 0, CFG_MAX_LAYERS, 0), .flags = SAME | CFG_KF_OMIT_ZERO | ROWS,
     .matters = pipelined, .compact = 3, .token = "first%d"},
    {S_INT("last_stage_layers", last_stage_layers, 0, CFG_MAX_LAYERS, 0), .flags = SAME | CFG_KF_OMIT_ZERO | ROWS,
     .matters = pipelined, .compact = 4, .token = "last%d"},
    {S_BOOL("account_for_embedding_in_pipeline_split", account_for_embedding_in_pipeline_split, 0), .flags = SAME | ROWS,
     .matters = pipelined},
    {S_BOOL("account_for_loss_in_pipeline_split", account_for_loss_in_pipeline_split, 0), .flags = SAME | ROWS,
     .matters = pipelined},
    {S_STR("pipeline_layout", pipeline_layout), .flags = SAME | ROWS, .matters = pipelined},
    {S_ENUM("schedule", schedule, schedule_names, "1f1b"), .with = offsetof(cfg_strategy, vpp),
     .flags = SAME | PIN | CFG_KF_CHECKED | CFG_KF_TOKEN_JOINED | ROWS | COSTS,
     .search = 15, INNER, .choices = schedule_choices, .compact = 5, .format = schedule_token, .parse = schedule_parse},
    {S_INT("pipeline_flushes", pipeline_flushes, 0, CFG_MAX_MICRO_BATCHES, 0), .flags = SAME | CFG_KF_OMIT_ZERO | COSTS,
     .matters = pipelined, .compact = 26, .format = flushes_token, .parse = flushes_parse},
    {S_INT("micro_batch", micro_batch, 1, CFG_MAX_WIDTH, 1), .flags = SAME | PIN | ALWAYS | PROBE,
     .search = 9, SHAPE, .choices = micro_batch_choices, .compact = 13, .token = "mb%d"},
    {S_INT("global_batch", global_batch, 1, CFG_MAX_WIDTH, 0), .flags = SAME | CFG_KF_REQUIRED | PROBE},
    {S_BOOL("sequence_parallel", sequence_parallel, 0), .flags = SAME | PIN | PROBE,
     .search = 10, SHAPE, .choices = sequence_parallel_choices, .matters = one_d_tp, .compact = 7, .token = "sp"},
    {S_ENUM("recompute", recompute, recompute_names, "none"), .flags = SAME | PIN | PROBE,
     .search = 11, INNER, .choices = every_choice, .compact = 14, .format = recompute_token},
    {S_STR("recompute_modules", recompute_modules), .flags = SAME | PROBE, .matters = selective},
    {S_INT("zero", zero, 0, 3, 0), .flags = SAME | PIN | ALWAYS | COSTS,
     .search = 16, INNER, .choices = every_choice, .fits = zero_fits, .matters = has_data_parallel, .compact = 15, .token = "z%d"},
    {S_INT("dp_shard", dp_shard, 0, MAXDIM, 0), .flags = SAME | CFG_KF_OMIT_ZERO | PROBE | COSTS, /* never searched */
     .matters = has_data_parallel, .compact = 27, .token = "shard%d"}, /* nonzero with zero 3 only (cfg_check) */
    {S_BOOL("overlap_grad_reduce", overlap_grad_reduce, 1), .flags = SAME | PIN | NOMEM | COSTS,
     .search = 17, INNER, .choices = switch_choices, .matters = has_data_parallel, .compact = 16, .token = "no-ovl-grad"},
    {S_BOOL("overlap_param_gather", overlap_param_gather, 1), .flags = SAME | PIN | NOMEM,
     .search = 18, INNER, .choices = switch_choices, .matters = sharded_data_parallel, .compact = 17,
     .token = "no-ovl-param"},
    {S_BOOL("overlap_tp_comm", overlap_tp_comm, 0), .flags = SAME | NOMEM | PROBE}, /* TP collectives beside the GEMMs */
    {S_BOOL("overlap_tp_backward", overlap_tp_backward, 0), .flags = SAME | NOMEM | PROBE}, /* the backward's only */
    {S_BOOL("overlap_cp_comm", overlap_cp_comm, 1), .flags = SAME | PIN | NOMEM | PROBE,
     .search = 13, INNER, .choices = switch_choices, .matters = ring_cp, .compact = 18, .token = "no-ovl-cp"},
    {S_BOOL("fuse_tpy_cp", fuse_tpy_cp, 0), .flags = SAME | PIN | CFG_KF_CHECKED | NOMEM | PROBE,
     .search = 12, INNER, .choices = switch_choices, .matters = two_d_tp_and_ulysses, .compact = 10, .token = "fused"},
    {S_ORDER("order", order, CFG_DEFAULT_ORDER), .flags = SAME | PIN | NOMEM | PROBE,
     .search = 14, INNER, .choices = order_choices, .fits = order_fits, .compact = 19, .format = order_token, .parse = order_parse},
    {S_DBL("moe_capacity_factor", moe_capacity_factor, 0, 1000, 0), .flags = SAME | PROBE},
    {S_BOOL("moe_pad_expert_input_to_capacity", moe_pad_expert_input_to_capacity, 0), .flags = SAME | PROBE},
    {S_ENUM("moe_dispatcher", moe_dispatcher, dispatcher_names, "alltoall"), .flags = SAME | PROBE, /* never searched */
     .compact = 24, .format = dispatcher_token},
    {S_DBL("moe_load_imbalance", moe_load_imbalance, 1, 1000, 1), .flags = SAME | PROBE},
    {S_BOOL("overlap_shared_experts", overlap_shared_experts, 0), .flags = SAME | PROBE},
    {S_BOOL("overlap_ep_comm", overlap_ep_comm, 0), .flags = SAME | COSTS}, /* dualpipe-v's pairs, or the paired 1F1B (its pipeline time) */
    {S_ENUM("attention_kernel", attention_kernel, attention_names, "flash"), .flags = SAME | PROBE, /* never searched */
     .compact = 20, .format = attention_token},
    {S_BOOL("fp8", fp8, 0), .flags = SAME | PIN | PROBE,
     .search = 19, INNER, .choices = opt_in_choices, .fits = fp8_fits, .compact = 21, .token = "fp8"},
    {S_ENUM("fp8_recipe", fp8_recipe, fp8_recipe_names, "delayed"), .flags = SAME | PROBE, /* never searched */
     .compact = 25, .format = fp8_recipe_token},
    {S_BOOL("grad_reduce_in_bf16", grad_reduce_in_bf16, 0), .flags = SAME | PIN | COSTS,
     .search = 20, INNER, .choices = opt_in_choices, .compact = 22, .token = "bf16-grad"},
    {S_ENUM("optimizer_moments", optimizer_moments, moments_names, "fp32"), .flags = SAME | PIN | COSTS,
     .search = 21, INNER, .choices = opt_in_choices, .compact = 23, .format = moments_token},
    ROW_END,
};

/* }========================================================= the table */

/* {======================================================== the readers */

const cfg_key *cfg_strategy_key(const char *key)
{
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++)
        if (strcmp(k->key, key) == 0) return k;
    return NULL;
}

void cfg_key_get(const cfg_key *k, const cfg_strategy *s, cfg_value *v)
{
    const char *field = (const char *)s + k->offset;
    memset(v, 0, sizeof *v);
    if (k->type == CFG_K_BOOL)
        v->i = *(const bool *)field;
    else if (k->type == CFG_K_ORDER)
        memcpy(v->order, field, sizeof v->order);
    else
        v->i = *(const int *)field;
    if (k->with) v->with = *(const int *)((const char *)s + k->with);
}

void cfg_key_set(const cfg_key *k, cfg_strategy *s, const cfg_value *v)
{
    char *field = (char *)s + k->offset;
    if (k->type == CFG_K_BOOL)
        *(bool *)field = v->i != 0;
    else if (k->type == CFG_K_ORDER)
        memcpy(field, v->order, sizeof v->order);
    else
        *(int *)field = v->i;
    if (k->with) *(int *)((char *)s + k->with) = v->with;
}

void cfg_key_default(const cfg_key *k, cfg_value *v)
{
    memset(v, 0, sizeof *v);
    if (k->type == CFG_K_ORDER) {
        char why[200];
        cfg_order_parse(k->def_str, v->order, why, sizeof why);
    } else if (k->type == CFG_K_ENUM) {
        for (int i = 0; k->names[i]; i++)
            if (strcmp(k->names[i], k->def_str) == 0) v->i = k->values ? k->values[i] : i;
    } else {
        v->i = k->type == CFG_K_BOOL ? k->def != 0 : (int)k->def;
    }
    for (const cfg_key *r = cfg_strategy_keys; k->with && r->key; r++)
        if (r->offset == k->with) v->with = (int)r->def;
}

bool cfg_value_same(const cfg_key *k, const cfg_value *a, const cfg_value *b)
{
    if (k->type == CFG_K_ORDER) return memcmp(a->order, b->order, sizeof a->order) == 0;
    return a->i == b->i && a->with == b->with;
}

void cfg_key_text(const cfg_key *k, const cfg_strategy *s, char *out, int cap)
{
    const char *field = (const char *)s + k->offset;
    switch (k->type) {
    case CFG_K_INT: snprintf(out, (size_t)cap, "%d", *(const int *)field); break;
    case CFG_K_DOUBLE: snprintf(out, (size_t)cap, "%g", *(const double *)field); break;
    case CFG_K_BOOL: snprintf(out, (size_t)cap, "%s", *(const bool *)field ? "on" : "off"); break;
    case CFG_K_STRING: snprintf(out, (size_t)cap, "%s", field); break;
    case CFG_K_ENUM: {
        int v = *(const int *)field, i = 0;
        while (k->names[i] && (k->values ? k->values[i] : i) != v) i++;
        snprintf(out, (size_t)cap, "%s", k->names[i] ? k->names[i] : "?");
        break;
    }
    case CFG_K_ORDER: cfg_order_name(s, out, cap); break;
    default: snprintf(out, (size_t)cap, "?"); break;
    }
}

bool cfg_key_matters(const cfg_key *k, const cfg_strategy *s)
{
    return !k->matters || k->matters(s);
}

bool cfg_strategy_same(const cfg_strategy *a, const cfg_strategy *b)
{
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (!(k->flags & CFG_KF_SAME)) continue;
        const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;
        bool same;
        switch (k->type) {
        case CFG_K_DOUBLE: same = *(const double *)fa == *(const double *)fb; break;
        case CFG_K_STRING: same = strcmp(fa, fb) == 0; break;
        default: {
            cfg_value va, vb;
            cfg_key_get(k, a, &va);
            cfg_key_get(k, b, &vb);
            same = cfg_value_same(k, &va, &vb);
        }
        }
        if (!same) return false;
    }
    return true;
}

void *cfg_strategy_fingerprint_json(const cfg_strategy *s)
{
    return cfg_schema_write_only(cfg_strategy_keys, s, CFG_KF_FINGERPRINT);
}

void cfg_strategy_compact(const cfg_strategy *s, char *out, int cap)
{
    enum { TOKEN = 64 };
    char tok[CFG_MAX_OBJECT_KEYS + 1][TOKEN], buf[256];
    unsigned joined[CFG_MAX_OBJECT_KEYS + 1];
    int last = 0;
    for (int pos = 0; pos <= CFG_MAX_OBJECT_KEYS; pos++) tok[pos][0] = '\0';
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        int pos = k->compact;
        if (pos <= 0 || pos > CFG_MAX_OBJECT_KEYS) continue;
        if (pos > last) last = pos;
        joined[pos] = k->flags & CFG_KF_TOKEN_JOINED;
        if (k->format) {
            k->format(s, tok[pos], TOKEN);
            continue;
        }
        cfg_value v, d;
        cfg_key_get(k, s, &v);
        cfg_key_default(k, &d);
        if (!(k->flags & CFG_KF_TOKEN_ALWAYS) && (cfg_value_same(k, &v, &d) || !cfg_key_matters(k, s))) continue;
        if (k->type == CFG_K_BOOL)
            sim_strlcpy(tok[pos], k->token, TOKEN);
        else
            snprintf(tok[pos], TOKEN, k->token, v.i);
    }
    size_t n = 0;
    for (int pos = 1; pos <= last; pos++) {
        size_t len = strlen(tok[pos]);
        if (len == 0) continue;
        if (n > 0 && !joined[pos] && n + 1 < sizeof buf) buf[n++] = ' ';
        if (n + len >= sizeof buf) len = sizeof buf - 1 - n;
        memcpy(buf + n, tok[pos], len);
        n += len;
    }
    buf[n] = '\0';
    sim_strlcpy(out, buf, (size_t)cap);
}

/* The characters at the start of word that k's token takes, its value
 * set in *s; 0 when word does not start with k's token. */
static int read_token(const cfg_key *k, const char *word, cfg_strategy *s)
{
    enum { TOKEN = 64 };
    if (k->parse) return k->parse(word, s);
    cfg_value v;
    if (k->format) { /* an enum: the longest of its names' tokens */
        int best = 0;
        for (int i = 0; k->type == CFG_K_ENUM && k->names[i]; i++) {
            cfg_strategy t = *s;
            char tok[TOKEN];
            v = (cfg_value){.i = k->values ? k->values[i] : i};
            cfg_key_set(k, &t, &v);
            k->format(&t, tok, TOKEN);
            int len = (int)strlen(tok);
            if (len > best && strncmp(word, tok, (size_t)len) == 0) best = len, *s = t;
        }
        return best;
    }
    if (k->type == CFG_K_BOOL) { /* the word of the value that is not the default */
        size_t len = strlen(k->token);
        if (strncmp(word, k->token, len) != 0) return 0;
        v = (cfg_value){.i = k->def == 0};
        cfg_key_set(k, s, &v);
        return (int)len;
    }
    const char *fmt = strstr(k->token, "%d"); /* "dp%d": a prefix, then the count */
    char prefix[TOKEN];
    if (!fmt || fmt[2] != '\0' || fmt - k->token >= TOKEN) return 0;
    memcpy(prefix, k->token, (size_t)(fmt - k->token));
    prefix[fmt - k->token] = '\0';
    memset(&v, 0, sizeof v);
    int n = read_prefixed(word, prefix, &v.i);
    if (n) cfg_key_set(k, s, &v);
    return n;
}

/* Reads one word: the token of a row that is not joined, then the joined
 * token that follows it, if any.  Marks the rows read in given[]. */
static bool read_word(const char *word, cfg_strategy *s, bool given[CFG_MAX_OBJECT_KEYS + 1], const char **twice)
{
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++) {
        if (k->compact <= 0 || (k->flags & CFG_KF_TOKEN_JOINED)) continue;
        cfg_strategy t = *s;
        int n = read_token(k, word, &t);
        if (n == 0) continue;
        const cfg_key *joined = NULL;
        for (const cfg_key *j = cfg_strategy_keys; word[n] && j->key && !joined; j++) {
            if (j->compact <= 0 || !(j->flags & CFG_KF_TOKEN_JOINED)) continue;
            int m = read_token(j, word + n, &t);
            if (m > 0 && word[n + m] == '\0') joined = j;
        }
        if (word[n] && !joined) continue;
        if (given[k->compact] || (joined && given[joined->compact])) {
            *twice = given[k->compact] ? k->key : joined->key;
            return false;
        }
        given[k->compact] = true;
        if (joined) given[joined->compact] = true;
        *s = t;
        return true;
    }
    return false;
}

sim_rc cfg_strategy_read_compact(const char *text, const char *origin, cfg_strategy *s, sim_err *err)
{
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++)
        if (k->search > 0 || k->compact > 0) {
            cfg_value d;
            cfg_key_default(k, &d);
            cfg_key_set(k, s, &d);
        }
    bool given[CFG_MAX_OBJECT_KEYS + 1] = {false};
    int words = 0;
    for (const char *c = text; *c;) {
        while (*c == ' ' || *c == '\t') c++;
        size_t len = strcspn(c, " \t");
        if (len == 0) break;
        char word[64];
        const char *twice = NULL;
        if (len >= sizeof word || (memcpy(word, c, len), word[len] = '\0', !read_word(word, s, given, &twice))) {
            if (twice)
                return sim_fail(err, SIM_EINVAL, "%s: '%s' sets %s a second time (give each key once)", origin,
                                word, twice);
            return sim_fail(err, SIM_EINVAL, "%s: '%.*s' is not a token of a compact strategy (write one as sweep "
                            "prints it, e.g. 'dp8 pp2v2 tp4 sp ep8 mb1 sel z1')", origin, len > 40 ? 40 : (int)len, c);
        }
        words++;
        c += len;
    }
    if (words == 0)
        return sim_fail(err, SIM_EINVAL, "%s: an empty compact strategy (write one as sweep prints it, e.g. 'dp8 "
                        "pp2v2 tp4 sp ep8 mb1 sel z1')", origin);
    return SIM_OK;
}

/* }======================================================== the readers */
