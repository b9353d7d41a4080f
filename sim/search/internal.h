/* internal.h - the search module's private helpers, shared by its files
 * (enumerate.c, estimate.c, search.c, record.c, sweep.c, table.c). */
#ifndef HEPTASIM_SEARCH_INTERNAL_H
#define HEPTASIM_SEARCH_INTERNAL_H

#include "search.h"

/* The sizes of the rank dimensions of one candidate layout. */
typedef struct srch_dims {
    int tp_x, tp_y, cp_ulysses, cp_ring, pp, dp;
} srch_dims;

/* A pipeline schedule choice. */
typedef struct srch_sched {
    cfg_schedule schedule;
    int vpp;
} srch_sched;

#define SRCH_MAX_CHOICES 64
#define SRCH_NORDERS 4

/* Every dimension tuple of the space whose product is the device count and
 * that passes the cheap shape rules (layers, heads, hidden); cfg_check has
 * the last word.  *out is allocated (caller frees); returns the count. */
int srch_dims_list(const srch_request *rq, srch_dims **out);

/* Values a key takes for the given (partial) strategy s; each writes at
 * most SRCH_MAX_CHOICES values and returns how many.  A pinned key takes
 * only the base value.  A key whose value changes nothing in s (zero with a
 * data-parallel group of one, sequence_parallel without 1D TP, ...) takes
 * only its default, so that every candidate is a distinct strategy. */
int srch_ep_choices(const srch_request *rq, const cfg_strategy *s, int *out);
int srch_etp_choices(const srch_request *rq, const cfg_strategy *s, int *out);
int srch_mb_choices(const srch_request *rq, const cfg_strategy *s, int *out);
int srch_sp_choices(const srch_request *rq, const cfg_strategy *s, bool *out);
int srch_sched_choices(const srch_request *rq, const cfg_strategy *s, srch_sched *out);
int srch_recompute_choices(const srch_request *rq, cfg_recompute *out);
int srch_fuse_choices(const srch_request *rq, const cfg_strategy *s, bool *out);
int srch_overlap_cp_choices(const srch_request *rq, const cfg_strategy *s, bool *out);
int srch_zero_choices(const srch_request *rq, const cfg_strategy *s, int *out);
int srch_overlap_grad_choices(const srch_request *rq, const cfg_strategy *s, bool *out);
int srch_overlap_param_choices(const srch_request *rq, const cfg_strategy *s, bool *out);

/* Distinct rank orders for s (orders that place every dimension larger
 * than one identically are the same strategy): writes up to SRCH_NORDERS
 * orders and returns how many. */
int srch_order_choices(const srch_request *rq, const cfg_strategy *s, cfg_dim out[][CFG_NDIMS]);

/* Data-parallel group sizes of s: dense (dp*cp) and expert
 * (dp*cp/ep * tp/etp). */
int srch_dp_group(const cfg_strategy *s);
int srch_edp_group(const cfg_strategy *s);

/* Short name of a rank order ("default", "dp<cp", "ep-outer", "pp-inner",
 * or the order itself), written into out. */
void srch_order_name(const cfg_strategy *s, char *out, int cap);

#endif
