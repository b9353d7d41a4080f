/* enumerate.c - the strategy space as the search reads it from the
 * strategy key table (config/keys.h): the pin of each key, the levels of
 * the enumeration, and the Megatron-style subspace.
 *
 * The values each key takes, when, and the rules they pass are columns of
 * the key's row (config/keys.c); search.c turns the levels. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *srch_space_name(srch_space sp)
{
    return sp == SRCH_SPACE_MEGATRON ? "megatron" : "7d";
}

unsigned srch_pin_of(const cfg_key *k)
{
    if (!k || !(k->flags & CFG_KF_PIN)) return 0;
    if (k->pin_as) return srch_pin_of(cfg_strategy_key(k->pin_as));
    unsigned bit = 0;
    for (const cfg_key *r = cfg_strategy_keys; r != k; r++)
        if ((r->flags & CFG_KF_PIN) && !r->pin_as) bit++;
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



const char *srch_baseline_name(srch_baseline b)
{
    return b == SRCH_BASELINE_A2A ? "a2a" : "ring";
}

const char *srch_baseline_text(srch_baseline b)
{
    return b == SRCH_BASELINE_A2A
               ? "tp_y 1, ring and all-to-all CP, TP inside a node, no fusion, zero <= 1, Megatron-Core's rank orders"
               : "tp_y 1, cp_ulysses 1, TP inside a node, no fusion, zero <= 1, Megatron-Core's rank orders";
}

bool srch_megatron_style(const cfg_strategy *s, const cfg_platform *p, srch_baseline b)
{
    if (s->tp_y != 1 || s->fuse_tpy_cp) return false;
    if (s->cp_ulysses != 1 && b != SRCH_BASELINE_A2A) return false;
    if (s->schedule > CFG_SCHED_INTERLEAVED) return false; /* zero bubble and DualPipe are not Megatron-LM's */
    if (s->zero > 1) return false; /* the distributed optimizer shards optimizer states only */
    if (s->tp_x > p->devices_per_node || p->devices_per_node % s->tp_x != 0) return false;
    return cfg_order_megatron(s, s->order); /* TP innermost, so its group stays in a node */
}
