/* shard.c - which of the best estimates a shard of a sweep simulates.
 *
 * Positions in the estimate order modulo the shard count: the split needs
 * nothing but the search's result, which is the same for every shard of
 * the same inputs, and gives each shard a share of the best and of the
 * worse candidates alike. */
#include "internal.h"

int srch_shard(srch_result *res, int top, int index, int count, srch_candidate **out)
{
    int k = top < res->nbest ? top : res->nbest, n = 0;
    for (int i = 0; i < k; i++)
        if (count <= 1 || i % count == index) out[n++] = &res->best[i];
    return n;
}
