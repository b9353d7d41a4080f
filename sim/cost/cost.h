/* cost.h - how long one operation takes on one device.
 *
 * A roofline: time = max(flops / (peak * eff), bytes / (hbm_bw * mem_eff))
 * + a fixed kernel overhead, with the GEMM efficiency interpolated (GSL,
 * monotone Steffen spline on log10 FLOPs) from the platform's curve.
 * Communication is not here: net (net/net.h) owns the network rule. */
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

/* Fraction of the FP8 peak reached by one FP8 GEMM of `flops` FLOPs: the
 * platform's FP8 curve, or without one the GEMM curve at half the FLOPs (a
 * GEMM as small in time as a bf16 one of half its work is as far from
 * filling the device). */
double cost_gemm_fp8_efficiency(const cost_model *c, double flops);

/* C[m,n] = A[m,k] B[k,n] in dtype_bytes elements: 2mnk FLOPs at the peak
 * (bf16/fp16) times the curve's efficiency, or the time to move A, B and C
 * if longer. Seconds. */
double cost_gemm_s(const cost_model *c, double m, double n, double k, int dtype_bytes);

/* The same GEMM with FP8 operands and a bf16 output, at the FP8 peak and
 * the FP8 curve's efficiency.  Only for a platform with an FP8 peak
 * (cfg_check refuses fp8 otherwise). Seconds. */
double cost_gemm_fp8_s(const cost_model *c, double m, double n, double k);

/* The same FP8 GEMM with MXFP8 operands (one E8M0 scale per 32
 * elements) at the MXFP8 peak; only for a platform with one (cfg_check
 * refuses fp8_recipe mxfp8 otherwise). Seconds. */
double cost_gemm_mxfp8_s(const cost_model *c, double m, double n, double k);

/* The precision a GEMM runs in. */
typedef enum cost_gemm_type { COST_GEMM_BF16 = 0, COST_GEMM_FP8, COST_GEMM_MXFP8 } cost_gemm_type;

/* One GEMM C[m,n] = A[m,k] B[k,n] of `type` (bf16: dtype_bytes elements):
 * cost_gemm_s, cost_gemm_fp8_s or cost_gemm_mxfp8_s. Seconds. */
double cost_gemm_typed_s(const cost_model *c, cost_gemm_type type, double m, double n, double k, int dtype_bytes);

/* `groups` GEMMs of one shape C[m,n] = A[m,k] B[k,n] run as one grouped
 * GEMM (the local experts', Megatron's --moe-grouped-gemm): all their
 * FLOPs at the fraction of peak efficiency.grouped_gemm gives for one
 * GEMM's FLOPs (without that curve: the dense GEMM curve at one GEMM's
 * FLOPs, as if each ran alone; in FP8 the grouped curve at half the FLOPs,
 * or the FP8 curve), or the time to move every operand if longer, plus one
 * kernel overhead. Seconds; 0 for no groups. */
double cost_grouped_gemm_s(const cost_model *c, cost_gemm_type type, int groups, double m, double n, double k,
                           int dtype_bytes);

/* Flash-style attention core of `flops` FLOPs moving `bytes` bytes. */
double cost_attention_s(const cost_model *c, double flops, double bytes);

/* A memory-bound element-wise op (norm, activation, dropout, residual)
 * reading and writing `bytes` in total. */
double cost_elementwise_s(const cost_model *c, double bytes);

/* The time of an op of `seconds` run while a collective shares the device
 * (overlap_tp_comm: efficiency.overlap_compute_slowdown times as long). */
double cost_beside_comm_s(const cost_model *c, double seconds);

/* Adam step over `params` parameters held by the device, each moving
 * `bytes_per_param` through HBM (master weights, moments, grads, weights:
 * mdl_precision.step_bytes). Seconds. */
double cost_optimizer_s(const cost_model *c, double params, double bytes_per_param);

#endif
