/* enumerate.c - the strategy space as the search reads it from the
 * strategy key table (config/keys.h): the pin of each key, the levels of
 * the enumeration, and the Megatron-style subspace.
 *
 * The values each key takes, when, and the rules they pass are columns of
 * the key's row (config/keys.c); search.c turns the levels. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ORDER: as --space's help and messages list them. */
const sim_enum_name srch_space_names[] = {{SRCH_SPACE_MEGATRON, "megatron"}, {SRCH_SPACE_7D, "7d"}};
_Static_assert(sizeof srch_space_names / sizeof srch_space_names[0] == SRCH_NSPACES, "a name per space");

const char *srch_space_name(srch_space sp)
{
    return sim_enum_name_of(srch_space_names, SRCH_NSPACES, (int)sp);
}

unsigned srch_pin_of(const cfg_key *k)
{
    if (!k || !(k->flags & CFG_KF_PIN)) return 0;
    if (k->pin_as) return srch_pin_of(cfg_strategy_key(k->pin_as));
    unsigned bit = 0;
    for (const cfg_key *r = cfg_strategy_keys; r != k; r++)
        if ((r->flags & CFG_KF_PIN) && !r->pin_as) bit++;
    assert(bit < 32); /* srch_request.pinned has a bit per pinnable key */
    return bit < 32 ? 1u << bit : 0;
}

unsigned srch_pin_of_key(const char *key)
{
    return srch_pin_of(cfg_strategy_key(key));
}

static int cmp_search(const void *pa, const void *pb)
{
    const cfg_key *a = *(const cfg_key *const *)pa, *b = *(const cfg_key *const *)pb;
    return (a->search > b->search) - (a->search < b->search);
}

int srch_levels(const cfg_key *out[SRCH_MAX_LEVELS])
{
    int n = 0;
    for (const cfg_key *k = cfg_strategy_keys; k->key; k++)
        if (k->search > 0 && n < SRCH_MAX_LEVELS) out[n++] = k;
    qsort(out, (size_t)n, sizeof *out, cmp_search);
    return n;
}



const sim_enum_name srch_baseline_names[] = {{SRCH_BASELINE_RING, "ring"}, {SRCH_BASELINE_A2A, "a2a"}};
_Static_assert(sizeof srch_baseline_names / sizeof srch_baseline_names[0] == SRCH_NBASELINES, "a name per baseline");

const char *srch_baseline_name(srch_baseline b)
{
    return sim_enum_name_of(srch_baseline_names, SRCH_NBASELINES, (int)b);
}

/* {=================================================== the Megatron-style rule */

/* The Megatron-style subspace, one clause a row (ORDER SRCH_BASELINE for
 * the phrases): whether s keeps the clause under baseline b on platform p,
 * the clause in a few words under each baseline (srch_baseline_text), and
 * the words that name a strategy that breaks it (srch_megatron_breaches).
 * srch_megatron_style is every clause at once. */
typedef struct megatron_clause {
    const char *phrase[SRCH_NBASELINES];
    bool (*keeps)(const cfg_strategy *s, const cfg_platform *p, srch_baseline b);
    void (*breach)(const cfg_strategy *s, char *out, size_t cap);
} megatron_clause;

static bool one_d_tp(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)p, (void)b;
    return s->tp_y == 1;
}

static void two_d_tp(const cfg_strategy *s, char *out, size_t cap)
{
    snprintf(out, cap, "2D TP (tp_y %d)", s->tp_y);
}

static bool baseline_cp(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)p;
    return s->cp_ulysses == 1 || b == SRCH_BASELINE_A2A;
}

static void ulysses_cp(const cfg_strategy *s, char *out, size_t cap)
{
    snprintf(out, cap, "Ulysses CP (cp_ulysses %d)", s->cp_ulysses);
}

static bool unfused(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)p, (void)b;
    return !s->fuse_tpy_cp;
}

static void fused(const cfg_strategy *s, char *out, size_t cap)
{
    (void)s;
    snprintf(out, cap, "tp_y-Ulysses fusion");
}

/* the distributed optimizer shards optimizer states only */
static bool distributed_optimizer(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)p, (void)b;
    return s->zero <= 1;
}

static void sharded_zero(const cfg_strategy *s, char *out, size_t cap)
{
    snprintf(out, cap, "ZeRO-%d", s->zero);
}

/* zero bubble and DualPipe are not Megatron-LM's */
static bool megatron_schedule(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)p, (void)b;
    return s->schedule <= CFG_SCHED_INTERLEAVED;
}

static void other_schedule(const cfg_strategy *s, char *out, size_t cap)
{
    snprintf(out, cap, "schedule %s", cfg_schedule_name(s->schedule));
}

/* the whole TP group on one node: tp divides the node's devices */
static bool tp_in_node(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)b;
    int tp = cfg_tp(s);
    return tp <= p->devices_per_node && p->devices_per_node % tp == 0;
}

static void tp_across_nodes(const cfg_strategy *s, char *out, size_t cap)
{
    snprintf(out, cap, "TP beyond a node (tp %d)", cfg_tp(s));
}

/* TP innermost, so its group stays in a node */
static bool megatron_order(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    (void)p, (void)b;
    return cfg_order_megatron(s, s->order);
}

static void other_order(const cfg_strategy *s, char *out, size_t cap)
{
    char o[64];
    cfg_order_name(s, o, sizeof o);
    snprintf(out, cap, "rank order %s", o);
}

static const megatron_clause megatron_rule[] = {
    {{"tp_y 1", "tp_y 1"}, one_d_tp, two_d_tp},
    {{"cp_ulysses 1", "ring and all-to-all CP"}, baseline_cp, ulysses_cp},
    {{"no fusion", "no fusion"}, unfused, fused},
    {{"zero <= 1", "zero <= 1"}, distributed_optimizer, sharded_zero},
    {{"Megatron-LM's schedules", "Megatron-LM's schedules"}, megatron_schedule, other_schedule},
    {{"TP inside a node", "TP inside a node"}, tp_in_node, tp_across_nodes},
    {{"Megatron-Core's rank orders", "Megatron-Core's rank orders"}, megatron_order, other_order},
};
#define NCLAUSES (int)(sizeof megatron_rule / sizeof megatron_rule[0])

const char *srch_baseline_text(srch_baseline b)
{
    static char text[SRCH_NBASELINES][256];
    assert((unsigned)b < SRCH_NBASELINES);
    if (!text[b][0])
        for (int i = 0; i < NCLAUSES; i++) sim_list_add(text[b], sizeof text[b], megatron_rule[i].phrase[b]);
    return text[b];
}

bool srch_megatron_style(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    for (int i = 0; i < NCLAUSES; i++)
        if (!megatron_rule[i].keeps(s, p, b)) return false;
    return true;
}

void srch_megatron_breaches(const cfg_strategy *s, const cfg_platform *p, srch_baseline b, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < NCLAUSES; i++)
        if (!megatron_rule[i].keeps(s, p, b)) {
            char words[96];
            megatron_rule[i].breach(s, words, sizeof words);
            sim_list_add(out, cap, words);
        }
}

/* }=================================================== the Megatron-style rule */

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void srch_device_limits(const cfg_model *m, int devices, int global_batch, char *out, size_t cap)
{
    const struct {
        const char *dim, *what;
        int n;
    } bound[] = {{"dp", "the global batch", global_batch}, {"tp_x", "heads", m->heads}, {"ep", "experts", m->moe.experts}};
    char list[256] = "";
    for (size_t i = 0; i < sizeof bound / sizeof bound[0]; i++) {
        int g = bound[i].n > 0 ? gcd(devices, bound[i].n) : 0;
        if (g == 0 || g >= devices || g >= bound[i].n) continue;
        char item[96];
        if (i == 0)
            snprintf(item, sizeof item, "%s to %d (a divisor of %s %d)", bound[i].dim, g, bound[i].what, bound[i].n);
        else
            snprintf(item, sizeof item, "%s to %d (a divisor of the %d %s)", bound[i].dim, g, bound[i].n, bound[i].what);
        sim_list_add(list, sizeof list, item);
    }
    out[0] = '\0';
    if (!list[0]) return;
    char factors[96] = "";
    int rest = devices;
    for (int p = 2; rest > 1; p++) {
        int e = 0;
        while (rest % p == 0) rest /= p, e++;
        if (e == 0) continue;
        char power[32];
        if (e > 1)
            snprintf(power, sizeof power, "%d^%d", p, e);
        else
            snprintf(power, sizeof power, "%d", p);
        size_t used = strlen(factors);
        snprintf(factors + used, sizeof factors - used, "%s%s", used ? " x " : "", power);
    }
    snprintf(out, cap, "%d = %s limits %s", devices, factors, list);
}
