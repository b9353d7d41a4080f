/* explain.c - what makes a cell's 7D best faster than its Megatron-style
 * best: the component it saves most on (srch_reason) and the keys it uses
 * that the baseline lacks. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Appends ", text" (or text) to out. */
static void add_word(char *out, size_t cap, const char *text)
{
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s%s", n ? ", " : "", text);
}

void stdy_explain(stdy_row *row, const cfg_platform *p)
{
    row->reason[0] = row->keys[0] = '\0';
    if (!row->has_best || !row->has_megatron) {
        snprintf(row->reason, sizeof row->reason, "%s", !row->has_best ? "no 7D strategy fits or was simulated"
                                                                         : "no Megatron-style strategy fits or was "
                                                                           "simulated");
        return;
    }
    const srch_candidate *b = &row->best, *m = &row->megatron;
    if (b->index == m->index) {
        snprintf(row->reason, sizeof row->reason, "the best 7D strategy is Megatron-style");
        return;
    }
    srch_reason(b, m, p, row->reason, sizeof row->reason);
    /* the keys of the 7D best that the baseline has not */
    const cfg_strategy *s = &b->strategy;
    char w[96];
    if (s->tp_y > 1) {
        snprintf(w, sizeof w, "2D TP (tp_y %d)", s->tp_y);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->cp_ulysses > 1 && row->cell->baseline != SRCH_BASELINE_A2A) {
        snprintf(w, sizeof w, "Ulysses CP (cp_ulysses %d)", s->cp_ulysses);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->fuse_tpy_cp) add_word(row->keys, sizeof row->keys, "tp_y-Ulysses fusion");
    if (s->zero > 1) {
        snprintf(w, sizeof w, "ZeRO-%d", s->zero);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->schedule > CFG_SCHED_INTERLEAVED) {
        snprintf(w, sizeof w, "schedule %s", cfg_schedule_name(s->schedule));
        add_word(row->keys, sizeof row->keys, w);
    }
    if (s->tp_x * s->tp_y > p->devices_per_node) {
        snprintf(w, sizeof w, "TP beyond a node (tp %d)", s->tp_x * s->tp_y);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (!cfg_order_megatron(s, s->order)) {
        char o[64];
        cfg_order_name(s, o, sizeof o);
        snprintf(w, sizeof w, "rank order %s", o);
        add_word(row->keys, sizeof row->keys, w);
    }
    if (!row->keys[0] && b->megatron_style) snprintf(row->keys, sizeof row->keys, "none (Megatron-style too)");
}
