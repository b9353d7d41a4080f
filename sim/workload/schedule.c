/* schedule.c - the order of forward and backward steps of a pipeline stage.
 *
 * GPipe: all forwards, then all backwards.  1F1B (PipeDream-Flush, Narayanan
 * et al. SC'21): pp - stage - 1 warm-up forwards, then one forward one
 * backward, then the remaining backwards.  Interleaved 1F1B (same paper,
 * Megatron's schedule): the stage holds vpp model chunks; virtual
 * micro-batch k runs chunk (k / pp) % vpp of micro-batch
 * (k / (pp*vpp))*pp + k % pp, with (pp - stage - 1)*2 + (vpp - 1)*pp warm-up
 * forwards.  Requires micro-batches % pp == 0 (checked by the config). */
#include <stdlib.h>

#include "internal.h"

static wl_step virtual_step(const cfg_strategy *s, int k, bool backward)
{
    int pp = s->pp, v = s->vpp;
    wl_step st;
    int chunk = (k / pp) % v;
    st.backward = backward;
    st.chunk = (uint8_t)(backward ? v - 1 - chunk : chunk);
    st.micro = (k / (pp * v)) * pp + k % pp;
    return st;
}

wl_step *wl_schedule_new(const cfg_strategy *s, int stage, int *n)
{
    int m = s->global_batch / (s->dp * s->micro_batch);
    int v = s->schedule == CFG_SCHED_INTERLEAVED ? s->vpp : 1;
    int total = m * v;
    wl_step *steps = sim_xcalloc((size_t)total * 2, sizeof *steps);
    int k = 0;

    if (s->schedule == CFG_SCHED_GPIPE) {
        for (int i = 0; i < m; i++) steps[k++] = (wl_step){0, 0, i};
        for (int i = 0; i < m; i++) steps[k++] = (wl_step){1, 0, i};
        *n = k;
        return steps;
    }
    int warmup;
    if (s->schedule == CFG_SCHED_INTERLEAVED)
        warmup = (s->pp - stage - 1) * 2 + (v - 1) * s->pp;
    else
        warmup = s->pp - stage - 1;
    if (warmup > total) warmup = total;

    cfg_strategy one = *s;
    one.vpp = v;
    int f = 0, b = 0;
    for (; f < warmup; f++) steps[k++] = virtual_step(&one, f, false);
    while (f < total) {
        steps[k++] = virtual_step(&one, f++, false);
        steps[k++] = virtual_step(&one, b++, true);
    }
    while (b < total) steps[k++] = virtual_step(&one, b++, true);
    *n = k;
    return steps;
}
