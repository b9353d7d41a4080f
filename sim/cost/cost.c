/* cost.c - time of one operation on one device: roofline with interpolated
 * GEMM efficiency.
 *
 * Everything but cost_new/cost_free is a pure function of its arguments and
 * of the platform copy held by the cost model: no allocation, no logging.
 *
 * Sources:
 *  - roofline: S. Williams, A. Waterman, D. Patterson, "Roofline: an
 *    insightful visual performance model", CACM 52(4), 2009;
 *  - monotone interpolation: M. Steffen, "A simple method for monotonic
 *    interpolation in one dimension", A&A 239, 1990 (gsl_interp_steffen). */
#include "cost.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

/* A GEMM efficiency curve, ready to interpolate. */
typedef struct curve {
    gsl_interp *interp;           /* NULL when the curve has fewer than 2 points */
    int n;                        /* points of the curve */
    double log_x[CFG_CURVE_MAX];  /* log10(FLOPs), strictly increasing */
    double y[CFG_CURVE_MAX];      /* fraction of peak */
} curve;

struct cost_model {
    cfg_platform platform;        /* private copy: the caller's may go away */
    curve gemm;                   /* gemm_efficiency */
    curve gemm_fp8;               /* cfg_gemm_fp8_curve */
    curve grouped;                /* grouped_gemm_efficiency (n = 0: none) */
    curve grouped_fp8;            /* the same at CFG_FP8_GEMM_SHIFT times the FLOPs */
};


/* An FP8 GEMM's output is bf16 (its operands: SIM_FP8_BYTES). */
#define COST_FP8_OUT_BYTES 2.0

static const char *platform_origin(const cfg_platform *p)
{
    if (p->path[0]) return p->path;
    if (p->name[0]) return p->name;
    return "platform";
}

static sim_rc check_positive(const cfg_platform *p, const char *key, double v, sim_err *err)
{
    if (isfinite(v) && v > 0) return SIM_OK;
    return sim_fail(err, SIM_EINVAL, "%s: '%s': must be a positive number, got %g", platform_origin(p), key, v);
}

/* Check the curve ourselves so that GSL's error handler (which aborts by
 * default) is never reached with input it would refuse. */
static sim_rc check_curve(const cfg_platform *p, const cfg_curve *cv, const char *name, sim_err *err)
{
    const char *o = platform_origin(p);
    if (cv->n < 1 || cv->n > CFG_CURVE_MAX)
        return sim_fail(err, SIM_EINVAL, "%s: '%s': needs 1 to %d points, got %d", o, name, CFG_CURVE_MAX, cv->n);
    for (int i = 0; i < cv->n; i++) {
        if (!isfinite(cv->x[i]) || cv->x[i] <= 0)
            return sim_fail(err, SIM_EINVAL, "%s: '%s': point %d: FLOPs must be > 0, got %g", o, name, i, cv->x[i]);
        if (!isfinite(cv->y[i]) || cv->y[i] <= 0 || cv->y[i] > 1)
            return sim_fail(err, SIM_EINVAL, "%s: '%s': point %d: efficiency must be in (0, 1], got %g", o, name, i,
                            cv->y[i]);
        if (i > 0 && !(cv->x[i] > cv->x[i - 1]))
            return sim_fail(err, SIM_EINVAL, "%s: '%s': point %d: FLOPs must increase strictly (%g after %g)", o, name,
                            i, cv->x[i], cv->x[i - 1]);
    }
    return SIM_OK;
}

/* Fill *c from the checked curve cv: a Steffen spline on log10(FLOPs) for
 * 3 or more points, a straight line for 2, a constant for 1.  Returns
 * SIM_EINVAL with a message (c may then hold an interpolator to free). */
static sim_rc curve_init(curve *c, const cfg_platform *p, const cfg_curve *cv, const char *name, sim_err *err)
{
    c->n = cv->n;
    for (int i = 0; i < c->n; i++) {
        c->log_x[i] = log10(cv->x[i]);
        c->y[i] = cv->y[i];
    }
    /* log10 may merge two distinct but extremely close x values. */
    for (int i = 1; i < c->n; i++)
        if (!(c->log_x[i] > c->log_x[i - 1]))
            return sim_fail(err, SIM_EINVAL, "%s: '%s': points %d and %d are too close (%g, %g)", platform_origin(p),
                            name, i - 1, i, cv->x[i - 1], cv->x[i]);
    if (c->n < 2) return SIM_OK;
    const gsl_interp_type *type = c->n >= 3 ? gsl_interp_steffen : gsl_interp_linear;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    c->interp = gsl_interp_alloc(type, (size_t)c->n);
    int rc = c->interp ? gsl_interp_init(c->interp, c->log_x, c->y, (size_t)c->n) : GSL_ENOMEM;
    gsl_set_error_handler(old);
    if (rc != GSL_SUCCESS)
        return sim_fail(err, SIM_EINVAL, "%s: '%s': GSL cannot interpolate the curve (%s)", platform_origin(p), name,
                        gsl_strerror(rc));
    return SIM_OK;
}

/* The curve's value at `flops`; values outside it (and flops <= 0) take
 * the nearest end point. */
static double curve_at(const curve *c, double flops)
{
    if (c->n == 1 || !(flops > 0)) return c->y[0];
    double lx = log10(flops);
    if (lx <= c->log_x[0]) return c->y[0];
    if (lx >= c->log_x[c->n - 1]) return c->y[c->n - 1];
    /* No accelerator: evaluation stays free of side effects (binary search). */
    return gsl_interp_eval(c->interp, c->log_x, c->y, lx, NULL);
}

/* Returns a new cost model (free with cost_free), or NULL with a one-line
 * message in err when the platform's efficiencies or its GEMM curve are
 * unusable.  Copies *p: the caller keeps ownership of p.  A curve of 3 or
 * more points is a Steffen spline on log10(FLOPs); 2 points are joined by a
 * straight line (all a monotone spline can be), 1 point is a constant. */
cost_model *cost_new(const cfg_platform *p, sim_err *err)
{
    if (!p) {
        sim_fail(err, SIM_EINVAL, "cost model: no platform given");
        return NULL;
    }
    if (check_positive(p, "peak_flops_per_s", p->peak_flops_per_s, err) != SIM_OK ||
        check_positive(p, "hbm_bytes_per_s", p->hbm_bytes_per_s, err) != SIM_OK ||
        check_positive(p, "memory_efficiency", p->memory_efficiency, err) != SIM_OK ||
        check_positive(p, "attention_efficiency", p->attention_efficiency, err) != SIM_OK ||
        check_positive(p, "network_efficiency", p->network_efficiency, err) != SIM_OK ||
        check_curve(p, &p->gemm_efficiency, "gemm_efficiency", err) != SIM_OK ||
        (p->gemm_fp8_efficiency.n > 0 &&
         check_curve(p, &p->gemm_fp8_efficiency, "gemm_fp8_efficiency", err) != SIM_OK))
        return NULL;
    if (!(p->fp8_peak_flops_per_s >= 0) || !isfinite(p->fp8_peak_flops_per_s)) {
        sim_fail(err, SIM_EINVAL, "%s: 'fp8_peak_flops_per_s': must be 0 (no FP8) or a positive number, got %g",
                 platform_origin(p), p->fp8_peak_flops_per_s);
        return NULL;
    }

    if (p->mxfp8_peak_flops_per_s < 0 || !isfinite(p->mxfp8_peak_flops_per_s)) {
        sim_fail(err, SIM_EINVAL, "%s: 'mxfp8_peak_flops_per_s': must be 0 (no MXFP8) or a positive number, got %g",
                 platform_origin(p), p->mxfp8_peak_flops_per_s);
        return NULL;
    }
    if (p->grouped_gemm_efficiency.n > 0 &&
        check_curve(p, &p->grouped_gemm_efficiency, "grouped_gemm_efficiency", err) != SIM_OK)
        return NULL;

    cfg_curve fp8, grouped_fp8 = p->grouped_gemm_efficiency;
    cfg_gemm_fp8_curve(p, &fp8);
    for (int i = 0; i < grouped_fp8.n; i++) grouped_fp8.x[i] *= CFG_FP8_GEMM_SHIFT;
    const char *fp8_name = p->gemm_fp8_efficiency.n > 0 ? "gemm_fp8_efficiency" : "gemm_efficiency";
    cost_model *c = sim_xcalloc(1, sizeof *c);
    c->platform = *p;
    if (curve_init(&c->gemm, p, &p->gemm_efficiency, "gemm_efficiency", err) != SIM_OK ||
        curve_init(&c->gemm_fp8, p, &fp8, fp8_name, err) != SIM_OK ||
        (grouped_fp8.n > 0 &&
         (curve_init(&c->grouped, p, &p->grouped_gemm_efficiency, "grouped_gemm_efficiency", err) != SIM_OK ||
          curve_init(&c->grouped_fp8, p, &grouped_fp8, "grouped_gemm_efficiency", err) != SIM_OK))) {
        cost_free(c);
        return NULL;
    }
    return c;
}

/* Releases c and its interpolators. NULL is a no-op. */
void cost_free(cost_model *c)
{
    if (!c) return;
    if (c->gemm.interp) gsl_interp_free(c->gemm.interp);
    if (c->gemm_fp8.interp) gsl_interp_free(c->gemm_fp8.interp);
    if (c->grouped.interp) gsl_interp_free(c->grouped.interp);
    if (c->grouped_fp8.interp) gsl_interp_free(c->grouped_fp8.interp);
    free(c);
}

/* The cost model's copy of the platform; owned by c, valid until cost_free. */
const cfg_platform *cost_platform(const cost_model *c)
{
    return &c->platform;
}

/* Fraction of peak (dimensionless) for one GEMM of `flops` FLOPs; values
 * outside the curve (and flops <= 0) take the nearest end point. */
double cost_gemm_efficiency(const cost_model *c, double flops)
{
    return curve_at(&c->gemm, flops);
}

/* The same for an FP8 GEMM, as a fraction of the FP8 peak. */
double cost_gemm_fp8_efficiency(const cost_model *c, double flops)
{
    return curve_at(&c->gemm_fp8, flops);
}

/* Seconds to stream `bytes` through HBM at the reachable bandwidth. */
static double memory_s(const cost_model *c, double bytes)
{
    return bytes / (c->platform.hbm_bytes_per_s * c->platform.memory_efficiency);
}

/* Seconds for C[m,n] = A[m,k] B[k,n]: the larger of the compute time at the
 * interpolated efficiency and the time to move A, B and C, plus the kernel
 * overhead. */
double cost_gemm_s(const cost_model *c, double m, double n, double k, int dtype_bytes)
{
    double flops = 2.0 * m * n * k;
    double bytes = (m * k + k * n + m * n) * (double)dtype_bytes;
    double compute = flops > 0 ? flops / (c->platform.peak_flops_per_s * cost_gemm_efficiency(c, flops)) : 0.0;
    return fmax(compute, memory_s(c, bytes)) + c->platform.kernel_overhead_s;
}

/* An FP8 GEMM at `peak` (FP8 or MXFP8) and the FP8 curve's efficiency,
 * one byte per operand element and a bf16 output. */
static double fp8_gemm_s(const cost_model *c, double peak, double m, double n, double k)
{
    double flops = 2.0 * m * n * k;
    double bytes = (m * k + k * n) * SIM_FP8_BYTES + m * n * COST_FP8_OUT_BYTES;
    double eff = cost_gemm_fp8_efficiency(c, flops);
    double compute = flops > 0 ? flops / (peak * eff) : 0.0;
    return fmax(compute, memory_s(c, bytes)) + c->platform.kernel_overhead_s;
}

/* The same GEMM in FP8.  The platform must have an FP8 peak (asserted). */
double cost_gemm_fp8_s(const cost_model *c, double m, double n, double k)
{
    assert(c->platform.fp8_peak_flops_per_s > 0);
    return fp8_gemm_s(c, c->platform.fp8_peak_flops_per_s, m, n, k);
}

/* The same GEMM in MXFP8.  The platform must have an MXFP8 peak (asserted). */
double cost_gemm_mxfp8_s(const cost_model *c, double m, double n, double k)
{
    assert(c->platform.mxfp8_peak_flops_per_s > 0);
    return fp8_gemm_s(c, c->platform.mxfp8_peak_flops_per_s, m, n, k);
}

double cost_gemm_typed_s(const cost_model *c, cost_gemm_type type, double m, double n, double k, int dtype_bytes)
{
    switch (type) {
    case COST_GEMM_FP8: return cost_gemm_fp8_s(c, m, n, k);
    case COST_GEMM_MXFP8: return cost_gemm_mxfp8_s(c, m, n, k);
    default: return cost_gemm_s(c, m, n, k, dtype_bytes);
    }
}

/* Seconds of `groups` same-shape GEMMs run as one kernel: the FLOPs of
 * all at the grouped efficiency of one (the platform's grouped curve, or
 * the dense or FP8 curve at one GEMM's FLOPs), or the time to move all
 * their operands, plus one kernel overhead. */
double cost_grouped_gemm_s(const cost_model *c, cost_gemm_type type, int groups, double m, double n, double k,
                           int dtype_bytes)
{
    if (groups <= 0) return 0.0;
    const cfg_platform *p = &c->platform;
    double one = 2.0 * m * n * k, flops = groups * one, peak = p->peak_flops_per_s, eff, bytes;
    if (type == COST_GEMM_BF16) {
        eff = c->grouped.n > 0 ? curve_at(&c->grouped, one) : cost_gemm_efficiency(c, one);
        bytes = (m * k + k * n + m * n) * (double)dtype_bytes;
    } else {
        assert(type == COST_GEMM_FP8 ? p->fp8_peak_flops_per_s > 0 : p->mxfp8_peak_flops_per_s > 0);
        peak = type == COST_GEMM_FP8 ? p->fp8_peak_flops_per_s : p->mxfp8_peak_flops_per_s;
        eff = c->grouped.n > 0 ? curve_at(&c->grouped_fp8, one) : cost_gemm_fp8_efficiency(c, one);
        bytes = (m * k + k * n) * SIM_FP8_BYTES + m * n * COST_FP8_OUT_BYTES;
    }
    double compute = flops > 0 ? flops / (peak * eff) : 0.0;
    return fmax(compute, memory_s(c, groups * bytes)) + p->kernel_overhead_s;
}

/* Seconds for a flash-attention core: roofline at the platform's attention
 * efficiency, plus the kernel overhead. */
double cost_attention_s(const cost_model *c, double flops, double bytes)
{
    double compute = flops / (c->platform.peak_flops_per_s * c->platform.attention_efficiency);
    return fmax(compute, memory_s(c, bytes)) + c->platform.kernel_overhead_s;
}

/* Seconds for a memory-bound op moving `bytes` (reads + writes). */
double cost_elementwise_s(const cost_model *c, double bytes)
{
    return memory_s(c, bytes) + c->platform.kernel_overhead_s;
}

/* Seconds an op of `seconds` alone takes beside a TP collective: the
 * platform's overlap_compute_slowdown times as long (the collective's
 * kernels take SMs / AI cores and HBM bandwidth from it).  A slowdown
 * below 1 reads as 1: platform files are checked to [1, 10], and a
 * platform built in code leaves 0 for "unset". */
double cost_beside_comm_s(const cost_model *c, double seconds)
{
    double f = c->platform.overlap_compute_slowdown;
    return f > 1 ? seconds * f : seconds;
}

/* Seconds for one Adam step over `params` parameters moving
 * `bytes_per_param` each through HBM. */
double cost_optimizer_s(const cost_model *c, double params, double bytes_per_param)
{
    return memory_s(c, params * bytes_per_param) + c->platform.kernel_overhead_s;
}
