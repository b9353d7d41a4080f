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

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

struct cost_model {
    cfg_platform platform;        /* private copy: the caller's may go away */
    gsl_interp *interp;           /* NULL when the curve has fewer than 2 points */
    int n;                        /* points of the curve */
    double log_x[CFG_CURVE_MAX];  /* log10(FLOPs), strictly increasing */
    double y[CFG_CURVE_MAX];      /* fraction of peak */
};

/* Adam in mixed precision, per parameter: read fp32 grad, master, m, v
 * (16 B), write master, m, v (12 B) and the bf16 weight (2 B). */
#define COST_ADAM_BYTES_PER_PARAM 30.0

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
static sim_rc check_curve(const cfg_platform *p, sim_err *err)
{
    const cfg_curve *cv = &p->gemm_efficiency;
    const char *o = platform_origin(p);
    if (cv->n < 1 || cv->n > CFG_CURVE_MAX)
        return sim_fail(err, SIM_EINVAL, "%s: 'gemm_efficiency': needs 1 to %d points, got %d", o, CFG_CURVE_MAX,
                        cv->n);
    for (int i = 0; i < cv->n; i++) {
        if (!isfinite(cv->x[i]) || cv->x[i] <= 0)
            return sim_fail(err, SIM_EINVAL, "%s: 'gemm_efficiency': point %d: FLOPs must be > 0, got %g", o, i,
                            cv->x[i]);
        if (!isfinite(cv->y[i]) || cv->y[i] <= 0 || cv->y[i] > 1)
            return sim_fail(err, SIM_EINVAL,
                            "%s: 'gemm_efficiency': point %d: efficiency must be in (0, 1], got %g", o, i, cv->y[i]);
        if (i > 0 && !(cv->x[i] > cv->x[i - 1]))
            return sim_fail(err, SIM_EINVAL,
                            "%s: 'gemm_efficiency': point %d: FLOPs must increase strictly (%g after %g)", o, i,
                            cv->x[i], cv->x[i - 1]);
    }
    return SIM_OK;
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
        check_curve(p, err) != SIM_OK)
        return NULL;

    cost_model *c = sim_xcalloc(1, sizeof *c);
    c->platform = *p;
    c->n = p->gemm_efficiency.n;
    for (int i = 0; i < c->n; i++) {
        c->log_x[i] = log10(p->gemm_efficiency.x[i]);
        c->y[i] = p->gemm_efficiency.y[i];
    }
    /* log10 may merge two distinct but extremely close x values. */
    for (int i = 1; i < c->n; i++) {
        if (!(c->log_x[i] > c->log_x[i - 1])) {
            sim_fail(err, SIM_EINVAL, "%s: 'gemm_efficiency': points %d and %d are too close (%g, %g)",
                     platform_origin(p), i - 1, i, p->gemm_efficiency.x[i - 1], p->gemm_efficiency.x[i]);
            free(c);
            return NULL;
        }
    }
    if (c->n >= 2) {
        const gsl_interp_type *type = c->n >= 3 ? gsl_interp_steffen : gsl_interp_linear;
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        c->interp = gsl_interp_alloc(type, (size_t)c->n);
        int rc = c->interp ? gsl_interp_init(c->interp, c->log_x, c->y, (size_t)c->n) : GSL_ENOMEM;
        gsl_set_error_handler(old);
        if (rc != GSL_SUCCESS) {
            sim_fail(err, SIM_EINVAL, "%s: 'gemm_efficiency': GSL cannot interpolate the curve (%s)",
                     platform_origin(p), gsl_strerror(rc));
            cost_free(c);
            return NULL;
        }
    }
    return c;
}

/* Releases c and its interpolator. NULL is a no-op. */
void cost_free(cost_model *c)
{
    if (!c) return;
    if (c->interp) gsl_interp_free(c->interp);
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
    if (c->n == 1 || !(flops > 0)) return c->y[0];
    double lx = log10(flops);
    if (lx <= c->log_x[0]) return c->y[0];
    if (lx >= c->log_x[c->n - 1]) return c->y[c->n - 1];
    /* No accelerator: evaluation stays free of side effects (binary search). */
    return gsl_interp_eval(c->interp, c->log_x, c->y, lx, NULL);
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

/* Seconds for one Adam step over `params` parameters (30 bytes each). */
double cost_optimizer_s(const cost_model *c, double params)
{
    return memory_s(c, params * COST_ADAM_BYTES_PER_PARAM) + c->platform.kernel_overhead_s;
}
