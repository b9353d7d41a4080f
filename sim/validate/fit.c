/* fit.c - calibration: the platform's free efficiency parameters fitted to
 * published measurements by nonlinear least squares (GSL multifit_nlinear).
 *
 * Simulating the largest cases takes minutes, and a fit needs hundreds of
 * evaluations, so the fit runs on a surrogate and the simulator confirms
 * it (output space mapping):
 *
 *   1. simulate every case at the current parameters theta_k: S_j;
 *   2. for every compared figure j take the closed-form value A_j(theta)
 *      (val_analytic: same cost model and workload, no contention) and the
 *      ratio r_j = S_j / A_j(theta_k), which carries what only the
 *      simulation sees (contention, pipeline start-up, overlap);
 *   3. fit theta_{k+1} minimising sum_j ((r_j A_j(theta) - M_j) / M_j)^2
 *      (relative errors, M_j the measured value; trust-region
 *      Levenberg-Marquardt, finite-difference Jacobian);
 *   4. simulate at theta_{k+1}; stop when every S_j agrees with
 *      r_j A_j(theta_{k+1}) within `agree` of M_j, else go to 2.
 *
 * The errors reported are always those of the simulations at the final
 * parameters, never the surrogate's.  Parameter uncertainties come from
 * the Jacobian at the optimum: covariance (J^T J)^-1 scaled by the residual
 * variance chisq / (n - p), in the fit's internal coordinates (log scale
 * for positive quantities, logit for efficiencies), then carried to the
 * physical values by the derivative of the change of coordinates. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "../report/report.h"
#include "internal.h"

/* {========================================================== parameters */

static const char *const param_names[VAL_NPARAMS] = { /* ORDER VAL_PARAM */
    "gemm_scale", "gemm_tilt", "attention", "memory", "network", "kernel_overhead_us", "collective_step_us",
    "gemm_fp8_scale", "overlap_slowdown", "grouped_gemm_scale",
};

const char *val_param_name(val_param p)
{
    return (unsigned)p < VAL_NPARAMS ? param_names[p] : "?";
}

int val_param_of(const char *name)
{
    for (int i = 0; i < VAL_NPARAMS; i++)
        if (strcmp(name, param_names[i]) == 0) return i;
    return -1;
}

void val_params_of(const cfg_platform *base, double v[VAL_NPARAMS])
{
    v[VAL_P_GEMM_SCALE] = 1.0;
    v[VAL_P_GEMM_TILT] = 0.0;
    v[VAL_P_ATTENTION] = base->attention_efficiency;
    v[VAL_P_MEMORY] = base->memory_efficiency;
    v[VAL_P_NETWORK] = base->network_efficiency;
    v[VAL_P_KERNEL_US] = base->kernel_overhead_s * 1e6;
    v[VAL_P_COLL_STEP_US] = base->collective_step_s * 1e6;
    v[VAL_P_GEMM_FP8_SCALE] = 1.0;
    v[VAL_P_OVERLAP_SLOWDOWN] = base->overlap_compute_slowdown;
    v[VAL_P_GROUPED_GEMM_SCALE] = 1.0;
}

/* y_i * scale * (x_i / x_last)^tilt, within the efficiency bounds, never
 * falling as x grows (a larger GEMM is never less efficient). */
static void scale_curve(cfg_curve *c, double scale, double tilt)
{
    double pivot = c->n > 0 ? c->x[c->n - 1] : 1.0;
    for (int i = c->n - 1; i >= 0; i--) {
        double y = fmin(1.0, fmax(CFG_EFFICIENCY_MIN, c->y[i] * scale * pow(c->x[i] / pivot, tilt)));
        c->y[i] = i < c->n - 1 ? fmin(y, c->y[i + 1]) : y;
    }
}

void val_params_apply(const cfg_platform *base, const double v[VAL_NPARAMS], cfg_platform *out)
{
    *out = *base;
    scale_curve(&out->gemm_efficiency, v[VAL_P_GEMM_SCALE], v[VAL_P_GEMM_TILT]);
    out->attention_efficiency = fmin(1.0, fmax(CFG_EFFICIENCY_MIN, v[VAL_P_ATTENTION]));
    out->memory_efficiency = fmin(1.0, fmax(CFG_EFFICIENCY_MIN, v[VAL_P_MEMORY]));
    out->network_efficiency = fmin(1.0, fmax(CFG_EFFICIENCY_MIN, v[VAL_P_NETWORK]));
    out->kernel_overhead_s = fmax(0.0, v[VAL_P_KERNEL_US]) * 1e-6;
    out->collective_step_s = fmax(0.0, v[VAL_P_COLL_STEP_US]) * 1e-6;
    out->overlap_compute_slowdown = fmin(CFG_OVERLAP_SLOWDOWN_MAX, fmax(1.0, v[VAL_P_OVERLAP_SLOWDOWN]));
    /* the FP8 curve gets one of its own only when it is scaled: else it
     * stays derived from the (fitted) GEMM curve */
    if (v[VAL_P_GEMM_FP8_SCALE] != 1.0) {
        cfg_curve fp8;
        cfg_gemm_fp8_curve(out, &fp8);
        scale_curve(&fp8, v[VAL_P_GEMM_FP8_SCALE], 0.0);
        out->gemm_fp8_efficiency = fp8;
    }
    /* likewise the grouped-GEMM curve (the experts' GEMMs of an MoE layer):
     * scaled, it is the platform's own or else the fitted GEMM curve, so a
     * model without experts never depends on it */
    if (v[VAL_P_GROUPED_GEMM_SCALE] != 1.0) {
        if (out->grouped_gemm_efficiency.n == 0) out->grouped_gemm_efficiency = out->gemm_efficiency;
        scale_curve(&out->grouped_gemm_efficiency, v[VAL_P_GROUPED_GEMM_SCALE], 0.0);
    }
}

/* Internal coordinates: log for scales and times, logit for efficiencies,
 * log(v - 1) for the slowdown (>= 1), the tilt itself.  Efficiencies are
 * kept inside (0, 1). */
static bool is_fraction(int k)
{
    return k == VAL_P_ATTENTION || k == VAL_P_MEMORY || k == VAL_P_NETWORK;
}

static double to_internal(int k, double v)
{
    if (k == VAL_P_GEMM_TILT) return v;
    if (k == VAL_P_OVERLAP_SLOWDOWN) return log(fmax(v - 1.0, 1e-3));
    if (is_fraction(k)) {
        v = fmin(fmax(v, 1e-6), 1.0 - 1e-6);
        return log(v / (1.0 - v));
    }
    return log(fmax(v, 1e-3));
}

static double to_physical(int k, double x)
{
    if (k == VAL_P_GEMM_TILT) return x;
    if (k == VAL_P_OVERLAP_SLOWDOWN) return 1.0 + exp(x);
    if (is_fraction(k)) return 1.0 / (1.0 + exp(-x));
    return exp(x);
}

/* d(physical)/d(internal) at x. */
static double slope(int k, double x)
{
    if (k == VAL_P_GEMM_TILT) return 1.0;
    if (is_fraction(k)) {
        double e = to_physical(k, x);
        return e * (1.0 - e);
    }
    return exp(x);
}

/* }========================================================== */

/* {========================================================== residuals */

/* One compared figure used by the fit. */
typedef struct row {
    int ci, ri, mi;        /* case, run, comparison */
    double ratio;          /* simulated / surrogate at the last simulation */
    const cfg_platform *base; /* the run's platform before calibration */
} row;

typedef struct fit_ctx {
    val_case *cases;
    row *rows;
    int nrows;
    const bool *skip_case; /* cases left out of this fit (NULL: none) */
    double base[VAL_NPARAMS];
    int free_idx[VAL_NPARAMS];
    int nfree;
    sim_rc rc;             /* first surrogate failure */
    sim_err err;
    double *values;        /* scratch: per row, the surrogate value */
} fit_ctx;

static void params_from_x(const fit_ctx *f, const gsl_vector *x, double v[VAL_NPARAMS])
{
    memcpy(v, f->base, sizeof f->base);
    for (int i = 0; i < f->nfree; i++) v[f->free_idx[i]] = to_physical(f->free_idx[i], gsl_vector_get(x, (size_t)i));
}

/* Surrogate value of every row at parameters v; false when one fails
 * (f->rc and f->err then hold the first failure). */
static bool surrogate(fit_ctx *f, const double v[VAL_NPARAMS], double *out)
{
    int last_c = -1, last_r = -1;
    double a[VAL_NMETRICS];
    for (int j = 0; j < f->nrows; j++) {
        const row *w = &f->rows[j];
        if (w->ci != last_c || w->ri != last_r) {
            const val_case *c = &f->cases[w->ci];
            const val_run *r = &c->runs[w->ri];
            cfg_platform p;
            val_params_apply(w->base, v, &p);
            sim_err err = {{0}};
            sim_rc rc = val_analytic(c, r, &p, a, &err);
            if (rc != SIM_OK) {
                if (f->rc == SIM_OK) {
                    f->rc = rc;
                    f->err = err;
                }
                return false;
            }
            last_c = w->ci;
            last_r = w->ri;
        }
        out[j] = a[f->cases[w->ci].runs[w->ri].cmp[w->mi].metric];
    }
    return true;
}

static int resid_f(const gsl_vector *x, void *params, gsl_vector *fx)
{
    fit_ctx *f = params;
    double v[VAL_NPARAMS];
    params_from_x(f, x, v);
    if (!surrogate(f, v, f->values)) return GSL_EDOM;
    for (int j = 0; j < f->nrows; j++) {
        const row *w = &f->rows[j];
        double meas = f->cases[w->ci].runs[w->ri].cmp[w->mi].measured;
        double r = (f->skip_case && f->skip_case[w->ci]) ? 0.0 : (w->ratio * f->values[j] - meas) / meas;
        gsl_vector_set(fx, (size_t)j, isfinite(r) ? r : 1e3);
    }
    return GSL_SUCCESS;
}

typedef struct fit_out {
    double value[VAL_NPARAMS];
    double sigma[VAL_NPARAMS];
    int iterations;
    double chisq;
    int dof;
} fit_out;

/* One least-squares fit from start[], with f's rows and ratios. */
static sim_rc fit_once(fit_ctx *f, const double start[VAL_NPARAMS], fit_out *out, sim_err *err)
{
    size_t n = (size_t)f->nrows, p = (size_t)f->nfree;
    int used = 0;
    for (int j = 0; j < f->nrows; j++) used += !(f->skip_case && f->skip_case[f->rows[j].ci]);
    if ((int)p > used)
        return sim_fail(err, SIM_EINVAL,
                        "heptasim calibrate: %d parameters to fit but only %d measured figures (use fewer --fit "
                        "parameters or more cases)",
                        (int)p, used);
    memcpy(f->base, start, sizeof f->base);
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    fp.trs = gsl_multifit_nlinear_trs_lm;
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = resid_f;
    fdf.df = NULL; /* finite differences */
    fdf.fvv = NULL;
    fdf.n = n;
    fdf.p = p;
    fdf.params = f;
    gsl_vector *x = gsl_vector_alloc(p);
    for (size_t i = 0; i < p; i++) gsl_vector_set(x, i, to_internal(f->free_idx[i], start[f->free_idx[i]]));
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, n, p);
    f->rc = SIM_OK;
    int info = 0;
    int status = gsl_multifit_nlinear_init(x, &fdf, w);
    if (status == GSL_SUCCESS) status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, w);
    sim_rc rc = SIM_OK;
    if (f->rc != SIM_OK) {
        *err = f->err;
        rc = f->rc;
    } else if (status != GSL_SUCCESS && status != GSL_EMAXITER) {
        rc = sim_fail(err, SIM_EINTERNAL, "heptasim calibrate: the least-squares fit failed: %s", gsl_strerror(status));
    }
    if (rc == SIM_OK) {
        const gsl_vector *xs = gsl_multifit_nlinear_position(w);
        const gsl_vector *fx = gsl_multifit_nlinear_residual(w);
        gsl_matrix *J = gsl_multifit_nlinear_jac(w);
        gsl_matrix *cov = gsl_matrix_alloc(p, p);
        gsl_multifit_nlinear_covar(J, 0.0, cov);
        double chisq = 0;
        gsl_blas_ddot(fx, fx, &chisq);
        int dof = used - (int)p;
        double s2 = dof > 0 ? chisq / dof : 1.0;
        memcpy(out->value, start, sizeof out->value);
        memset(out->sigma, 0, sizeof out->sigma);
        double jmax = 0.0;
        for (size_t i = 0; i < p; i++) {
            gsl_vector_view col = gsl_matrix_column(J, i);
            jmax = fmax(jmax, gsl_blas_dnrm2(&col.vector));
        }
        for (size_t i = 0; i < p; i++) {
            int k = f->free_idx[i];
            double xi = gsl_vector_get(xs, i);
            gsl_vector_view col = gsl_matrix_column(J, i);
            out->value[k] = to_physical(k, xi);
            /* a parameter the residuals do not depend on is not measured by them */
            if (!(gsl_blas_dnrm2(&col.vector) > 1e-9 * jmax))
                out->sigma[k] = NAN;
            else
                out->sigma[k] = fabs(slope(k, xi)) * sqrt(fmax(0.0, gsl_matrix_get(cov, i, i) * s2));
        }
        out->iterations = (int)gsl_multifit_nlinear_niter(w);
        out->chisq = chisq;
        out->dof = dof;
        gsl_matrix_free(cov);
    }
    gsl_multifit_nlinear_free(w);
    gsl_set_error_handler(old);
    gsl_vector_free(x);
    return rc;
}

/* }========================================================== */

/* {========================================================== passes */

static void apply_all(val_case *cases, int n, const bool *use, const double v[VAL_NPARAMS],
                      const cfg_platform *const *bases)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int r = 0; r < cases[i].nruns; r++, k++)
            if (use[i]) val_params_apply(bases[k], v, &cases[i].runs[r].platform);
}

/* Refresh every row's ratio from the simulated value and the surrogate at
 * v; returns the largest |simulated - predicted| / measured, where
 * predicted used the previous ratios. */
static double refresh(fit_ctx *f, const double v[VAL_NPARAMS], bool *ok, int *worst_row)
{
    double worst = 0.0;
    if (worst_row) *worst_row = -1;
    *ok = surrogate(f, v, f->values);
    if (!*ok) return INFINITY;
    for (int j = 0; j < f->nrows; j++) {
        row *w = &f->rows[j];
        const val_compare *c = &f->cases[w->ci].runs[w->ri].cmp[w->mi];
        double a = f->values[j];
        if (!isfinite(c->simulated) || !(a > 0)) {
            *ok = false;
            return INFINITY;
        }
        double gap = fabs(c->simulated - w->ratio * a) / c->measured;
        if (gap > worst) {
            worst = gap;
            if (worst_row) *worst_row = j;
        }
        w->ratio = c->simulated / a;
    }
    return worst;
}

static double rms_error(const fit_ctx *f)
{
    double s = 0;
    int k = 0;
    for (int j = 0; j < f->nrows; j++) {
        const row *w = &f->rows[j];
        double e = f->cases[w->ci].runs[w->ri].cmp[w->mi].error;
        if (!isfinite(e)) continue;
        s += e * e;
        k++;
    }
    return k ? sqrt(s / k) : NAN;
}

static sim_rc first_failure(const val_case *cases, int n, const bool *use, sim_err *err)
{
    for (int i = 0; i < n; i++)
        for (int r = 0; use[i] && r < cases[i].nruns; r++)
            if (cases[i].runs[r].rc != SIM_OK)
                return sim_fail(err, SIM_EINTERNAL, "heptasim calibrate: %s/%s did not simulate: %s", cases[i].id,
                                cases[i].runs[r].name, cases[i].runs[r].msg);
    return SIM_OK;
}

static bool same_efficiencies(const cfg_platform *a, const cfg_platform *b)
{
    if (strcmp(a->device_name, b->device_name) != 0) return false;
    if (a->gemm_efficiency.n != b->gemm_efficiency.n) return false;
    for (int i = 0; i < a->gemm_efficiency.n; i++)
        if (a->gemm_efficiency.x[i] != b->gemm_efficiency.x[i] || a->gemm_efficiency.y[i] != b->gemm_efficiency.y[i])
            return false;
    return a->attention_efficiency == b->attention_efficiency && a->memory_efficiency == b->memory_efficiency &&
           a->network_efficiency == b->network_efficiency && a->kernel_overhead_s == b->kernel_overhead_s &&
           a->collective_step_s == b->collective_step_s;
}

sim_rc val_calibrate(val_case *cases, int n, const val_fit_opts *o, val_case *before, val_fit_result *res,
                     double *loo_error, sim_err *err)
{
    memset(res, 0, sizeof *res);
    bool *use = sim_xcalloc((size_t)(n ? n : 1), sizeof *use);
    const cfg_platform *first = NULL;
    int nruns = 0, nrows = 0, first_k = 0;
    sim_rc rc = SIM_OK;
    for (int i = 0; i < n; i++) {
        int k0 = nruns;
        nruns += cases[i].nruns;
        if (cases[i].loose) continue;
        use[i] = true;
        for (int r = 0; r < cases[i].nruns; r++) {
            const cfg_platform *p = &cases[i].runs[r].platform;
            if (!first) {
                first = p;
                first_k = k0 + r;
            }
            if (!same_efficiencies(first, p) && rc == SIM_OK)
                rc = sim_fail(err, SIM_EINVAL,
                              "heptasim calibrate: %s uses platform '%s' (%s), unlike '%s' (%s): calibrate one "
                              "platform at a time (name the case files)",
                              cases[i].path, p->name, p->device_name, first->name, first->device_name);
            nrows += cases[i].runs[r].ncmp;
        }
    }
    if (rc == SIM_OK && nrows == 0)
        rc = sim_fail(err, SIM_EINVAL,
                      "heptasim calibrate: no measured figure to fit (loose cases are never calibration targets)");
    if (rc != SIM_OK) {
        free(use);
        return rc;
    }

    /* the base platform of every run, kept while parameters change */
    cfg_platform *base = sim_xcalloc((size_t)nruns, sizeof *base);
    const cfg_platform **bases = sim_xcalloc((size_t)nruns, sizeof *bases);
    for (int i = 0, k = 0; i < n; i++)
        for (int r = 0; r < cases[i].nruns; r++, k++) {
            base[k] = cases[i].runs[r].platform;
            bases[k] = &base[k];
        }

    fit_ctx f;
    memset(&f, 0, sizeof f);
    f.cases = cases;
    f.rows = sim_xcalloc((size_t)nrows, sizeof *f.rows);
    f.values = sim_xcalloc((size_t)nrows, sizeof *f.values);
    for (int i = 0, k = 0; i < n; i++)
        for (int r = 0; r < cases[i].nruns; r++, k++)
            for (int m = 0; use[i] && m < cases[i].runs[r].ncmp; m++) f.rows[f.nrows++] = (row){i, r, m, 1.0, bases[k]};
    for (int k = 0; k < VAL_NPARAMS; k++)
        if (o->free_mask & (1u << k)) f.free_idx[f.nfree++] = k;
    if (f.nfree == 0) rc = sim_fail(err, SIM_EINVAL, "heptasim calibrate: no parameter to fit (see --fit)");

    double v[VAL_NPARAMS];
    val_params_of(first, v);
    res->free_mask = o->free_mask;

    /* pass 1: the base platform */
    bool *sim_use = sim_xcalloc((size_t)(n ? n : 1), sizeof *sim_use);
    val_case *sub = NULL;
    if (rc == SIM_OK) {
        if (o->log) fprintf(o->log, "pass 1: simulating %d cases on the base platform\n", n);
        rc = val_simulate(cases, n, &o->sim, err);
        if (rc == SIM_OK) rc = first_failure(cases, n, use, err);
        if (rc == SIM_OK && before) memcpy(before, cases, (size_t)n * sizeof *before);
        res->rms_before = rms_error(&f);
        res->passes = 1;
    }
    bool ok = true;
    if (rc == SIM_OK) {
        refresh(&f, v, &ok, NULL);
        if (!ok) rc = f.rc != SIM_OK ? (*err = f.err, f.rc)
                                     : sim_fail(err, SIM_EINTERNAL, "heptasim calibrate: the closed-form model "
                                                "gave no value for some figure");
    }
    fit_out fo;
    memset(&fo, 0, sizeof fo);
    while (rc == SIM_OK) {
        rc = fit_once(&f, v, &fo, err);
        if (rc != SIM_OK) break;
        memcpy(v, fo.value, sizeof v);
        if (o->log) {
            fprintf(o->log, "pass %d: fit in %d iterations, rms error %.2f%% (closed form x simulated ratio):",
                    res->passes, fo.iterations, 100.0 * sqrt(fo.chisq / f.nrows));
            for (int i = 0; i < f.nfree; i++) fprintf(o->log, " %s %.4g", param_names[f.free_idx[i]], v[f.free_idx[i]]);
            fprintf(o->log, "\n");
        }
        apply_all(cases, n, use, v, bases);
        res->passes++;
        if (o->log) fprintf(o->log, "pass %d: simulating at the fitted parameters\n", res->passes);
        rc = val_simulate(cases, n, &o->sim, err);
        if (rc == SIM_OK) rc = first_failure(cases, n, use, err);
        if (rc != SIM_OK) break;
        int wr = -1;
        res->disagreement = refresh(&f, v, &ok, &wr);
        if (!ok) {
            rc = f.rc != SIM_OK ? (*err = f.err, f.rc)
                                : sim_fail(err, SIM_EINTERNAL, "heptasim calibrate: no closed-form value at the fit");
            break;
        }
        if (o->log && wr >= 0) {
            const row *w = &f.rows[wr];
            fprintf(o->log, "pass %d: simulation vs prediction: largest gap %.2f%% of the measured value (%s/%s %s)\n",
                    res->passes, 100.0 * res->disagreement, cases[w->ci].id, cases[w->ci].runs[w->ri].name,
                    val_metric_name(cases[w->ci].runs[w->ri].cmp[w->mi].metric));
        }
        if (res->disagreement <= o->agree) {
            res->converged = true;
            break;
        }
        if (res->passes >= o->max_passes) break;
    }
    if (rc == SIM_OK) {
        memcpy(res->value, v, sizeof v);
        memcpy(res->sigma, fo.sigma, sizeof fo.sigma);
        res->iterations = fo.iterations;
        res->chisq = fo.chisq;
        res->dof = fo.dof;
        res->rms_after = rms_error(&f);
        val_params_apply(bases[first_k], v, &res->platform);
    }

    /* leave one case out: fit without it (ratios of the last pass), then
     * simulate it at that fit */
    if (rc == SIM_OK && o->loo && loo_error) {
        for (int i = 0; i < n; i++) loo_error[i] = NAN;
        sub = sim_xcalloc((size_t)n, sizeof *sub);
        bool *skip = sim_xcalloc((size_t)n, sizeof *skip);
        int ns = 0;
        int *which = sim_xcalloc((size_t)n, sizeof *which);
        for (int i = 0; i < n && rc == SIM_OK; i++) {
            if (!use[i]) continue;
            memset(skip, 0, (size_t)n * sizeof *skip);
            skip[i] = true;
            f.skip_case = skip;
            int left = 0;
            for (int j = 0; j < f.nrows; j++) left += f.rows[j].ci != i;
            if (left < f.nfree) {
                f.skip_case = NULL;
                if (o->log)
                    fprintf(o->log, "leave out %s: not possible (%d figures left for %d parameters)\n", cases[i].id,
                            left, f.nfree);
                continue;
            }
            fit_out lo;
            rc = fit_once(&f, res->value, &lo, err);
            f.skip_case = NULL;
            if (rc != SIM_OK) break;
            sub[ns] = cases[i];
            int k0 = 0;
            for (int c = 0; c < i; c++) k0 += cases[c].nruns;
            for (int r = 0; r < sub[ns].nruns; r++) val_params_apply(bases[k0 + r], lo.value, &sub[ns].runs[r].platform);
            which[ns++] = i;
            if (o->log) {
                fprintf(o->log, "leave out %s:", cases[i].id);
                for (int k = 0; k < f.nfree; k++)
                    fprintf(o->log, " %s %.4g", param_names[f.free_idx[k]], lo.value[f.free_idx[k]]);
                fprintf(o->log, "\n");
            }
        }
        if (rc == SIM_OK) {
            if (o->log) fprintf(o->log, "leave-one-out: simulating %d held-out cases\n", ns);
            rc = val_simulate(sub, ns, &o->sim, err);
        }
        for (int s = 0; rc == SIM_OK && s < ns; s++) {
            double worst = 0;
            bool any = false;
            for (int r = 0; r < sub[s].nruns; r++)
                for (int m = 0; m < sub[s].runs[r].ncmp; m++) {
                    double e = sub[s].runs[r].cmp[m].error;
                    if (!isfinite(e)) continue;
                    any = true;
                    if (fabs(e) > fabs(worst)) worst = e;
                }
            loo_error[which[s]] = any ? worst : NAN;
        }
        free(skip);
        free(which);
    }
    free(sub);
    free(sim_use);
    free(f.rows);
    free(f.values);
    free(base);
    free(bases);
    free(use);
    return rc;
}

/* }========================================================== */

sim_rc val_write_platform(const char *path, const cfg_platform *p, const char *description, sim_err *err)
{
    cJSON *root = cfg_platform_to_json(p);
    if (!root) return sim_fail(err, SIM_ENOMEM, "%s: cannot build the platform JSON", path);
    if (description) {
        if (cJSON_GetObjectItemCaseSensitive(root, "description"))
            cJSON_ReplaceItemInObjectCaseSensitive(root, "description", cJSON_CreateString(description));
        else
            cJSON_AddStringToObject(root, "description", description);
    }
    sim_rc rc = rpt_write_json_doc(path, root, "calibrated platform", err);
    cJSON_Delete(root);
    return rc;
}
