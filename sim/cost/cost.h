/* cost.h - how long one operation takes on one device.
 *
 * A roofline: time = max(flops / (peak * eff), bytes / (hbm_bw * mem_eff))
 * + a fixed kernel overhead, with the GEMM efficiency interpolated (GSL,
 * monotone Steffen spline on log10 FLOPs) from the platform's curve.
 * Collectives have an alpha-beta estimate here too; the engine simulates
 * them with contention, the estimate is for closed-form checks and the
 * analytic ranking of the search. */
#ifndef HEPTASIM_COST_H
#define HEPTASIM_COST_H

#include "../config/config.h"

typedef struct cost_model cost_model;

/* Build the cost model for a platform.  Returns NULL and fills err when the
 * efficiency curve cannot be interpolated.  Free with cost_free. */
cost_model *cost_new(const cfg_platform *p, sim_err *err);
void cost_free(cost_model *c);

const cfg_platform *cost_platform(const cost_model *c);

/* Fraction of peak reached by one GEMM of `flops` FLOPs (clamped to the
 * curve's ends). */
double cost_gemm_efficiency(const cost_model *c, double flops);

/* C[m,n] = A[m,k] B[k,n] in dtype_bytes elements: 2mnk FLOPs, reads and
 * writes 2-byte operands. Seconds. */
double cost_gemm_s(const cost_model *c, double m, double n, double k, int dtype_bytes);

/* Flash-style attention core of `flops` FLOPs moving `bytes` bytes. */
double cost_attention_s(const cost_model *c, double flops, double bytes);

/* A memory-bound element-wise op (norm, activation, dropout, residual)
 * reading and writing `bytes` in total. */
double cost_elementwise_s(const cost_model *c, double bytes);

/* Mixed-precision Adam step over `params` parameters held by the device
 * (reads and writes master weights, moments, grads, bf16 weights). */
double cost_optimizer_s(const cost_model *c, double params);

typedef enum cost_coll { COST_ALLREDUCE = 0, COST_ALLGATHER, COST_REDUCESCATTER, COST_ALLTOALL } cost_coll;

/* Ring (all-to-all: pairwise) algorithm time for n ranks on a buffer of
 * `bytes` per rank (AR: the buffer; AG: the gathered output; RS: the input;
 * A2A: one rank's whole send buffer), over links of `bytes_per_s` each way
 * and `latency_s` per step:  steps * (latency_s + step_s) + traffic / bw.
 * Network efficiency is applied to bytes_per_s. */
double cost_collective_s(const cost_model *c, cost_coll kind, int n, double bytes, double bytes_per_s,
                         double latency_s);

/* Bytes one rank sends in that algorithm (2(n-1)/n S for AR, (n-1)/n S otherwise). */
double cost_collective_bytes(cost_coll kind, int n, double bytes);

/* Algorithm steps (2(n-1) for AR ring, n-1 otherwise). */
int cost_collective_steps(cost_coll kind, int n);

#endif
