/* ops.c - an op list: the growable array of instructions that layer
 * templates, edges and schedules are built in. */
#include <stdlib.h>

#include "internal.h"

void wl_ops_push(wl_ops *ops, const wl_instr *in)
{
    if (ops->n == ops->cap) {
        ops->cap = ops->cap ? 2 * ops->cap : 32;
        ops->a = sim_xrealloc(ops->a, (size_t)ops->cap * sizeof *ops->a);
    }
    ops->a[ops->n++] = *in;
}

void wl_ops_append(wl_ops *dst, const wl_ops *src)
{
    for (int i = 0; i < src->n; i++) wl_ops_push(dst, &src->a[i]);
}

void wl_ops_free(wl_ops *ops)
{
    free(ops->a);
    ops->a = NULL;
    ops->n = ops->cap = 0;
}
