/* One voxel's fit, shared by the CPU twin and the CUDA kernel: the start (pk_start.h), then a
 * bounded Levenberg-Marquardt (Marquardt's diagonal scaling; a parameter on a bound that the
 * gradient pushes outward is held there for the step, the others projected into the bounds), then
 * the record of every output. */
#pragma once

#include "pk_start.h"

/* Marquardt's damping: starts at 1e-3, /10 after a step that lowers the cost, x10 after one
 * that does not; past FM_PK_LAMBDA_MAX no step lowers the cost: a minimum to rounding. */
#define FM_PK_LAMBDA_MAX 1e12

/* Steps of the fit of x (n_fit values) to curve c from damping *lambda after *it cost
 * evaluations, until the fit is done (*done = 1: the tolerance stopped it, or no step can lower
 * the cost any more) or *it reaches it_stop; returns the cost at x. The state between calls is
 * x, *lambda and *it alone: at the top of every step the cost, J^T J and J^T r are those of x,
 * so a later call resumes exactly where this one stopped (the CUDA kernel fits in rounds of
 * growing it_stop so that a warp's voxels that finish early do not wait for its slowest). */
FM_HD static inline double fm_pk_lm_steps(const fm_pk_plan *p, const float *c, int stride,
                                          double *x, double *lambda_io, int *it_io, int it_stop,
                                          int *done_out)
{
    const int nf = p->n_fit;
    double a[FM_PK_MAX_FIT * FM_PK_MAX_FIT], g[FM_PK_MAX_FIT];
    double ss = fm_pk_pass(p, x, c, stride, 1, a, g), lambda = *lambda_io;
    int it = *it_io, done = 0;
    while (!done && it < it_stop) {
        if (!(ss > 0)) { /* an exact fit */
            done = 1;
            break;
        }
        /* Free parameters: not held on a bound by the descent direction g. */
        int free_[FM_PK_MAX_FIT], nfree = 0;
        for (int j = 0; j < nf; j++)
            if (!((x[j] <= p->lower[j] && g[j] <= 0) || (x[j] >= p->upper[j] && g[j] >= 0)))
                free_[nfree++] = j;
        if (nfree == 0) {
            done = 1;
            break;
        }
        double dmax = 0;
        for (int j = 0; j < nf; j++)
            dmax = fmax(dmax, a[j * FM_PK_MAX_FIT + j]);
        double m[FM_PK_MAX_FIT * FM_PK_MAX_FIT], b[FM_PK_MAX_FIT], step[FM_PK_MAX_FIT];
        for (int r = 0; r < nfree; r++) {
            const int jr = free_[r];
            b[r] = g[jr];
            for (int k = 0; k < r; k++)
                m[r * FM_PK_MAX_FIT + k] = a[jr * FM_PK_MAX_FIT + free_[k]];
            const double d = a[jr * FM_PK_MAX_FIT + jr] + 1e-12 * dmax + 1e-300;
            m[r * FM_PK_MAX_FIT + r] = d * (1 + lambda);
        }
        if (!fm_pk_solve_spd(m, b, nfree, step)) {
            lambda *= 10;
            if (lambda > FM_PK_LAMBDA_MAX)
                done = 1;
            continue;
        }
        double xn[FM_PK_MAX_FIT];
        int moved = 0;
        for (int j = 0; j < nf; j++)
            xn[j] = x[j];
        for (int r = 0; r < nfree; r++) {
            const int j = free_[r];
            xn[j] = fm_pk_clamp(x[j] + step[r], p->lower[j], p->upper[j]);
            moved |= xn[j] != x[j];
        }
        if (!moved) {
            done = 1;
            break;
        }
        const double ssn = fm_pk_pass(p, xn, c, stride, 0, NULL, NULL);
        it++;
        if (ssn < ss) {
            const double drop = ss - ssn;
            for (int j = 0; j < nf; j++)
                x[j] = xn[j];
            if (drop <= p->tolerance * ss) {
                ss = ssn;
                done = 1;
                break;
            }
            lambda = fmax(lambda / 10, 1e-12);
            ss = fm_pk_pass(p, x, c, stride, 1, a, g);
        } else {
            lambda *= 10;
            if (lambda > FM_PK_LAMBDA_MAX)
                done = 1;
        }
    }
    *lambda_io = lambda;
    *it_io = it;
    *done_out = done;
    return ss;
}

/* Fits x (n_fit values, the start on entry) to curve c; returns the cost, *iterations (cost
 * evaluations after the start) and *converged (the tolerance stopped it, or no step can lower
 * the cost any more). */
FM_HD static inline double fm_pk_levenberg_marquardt(const fm_pk_plan *p, const float *c,
                                                     int stride, double *x, int *iterations,
                                                     int *converged)
{
    double lambda = 1e-3;
    *iterations = 0;
    return fm_pk_lm_steps(p, c, stride, x, &lambda, iterations, p->max_iterations, converged);
}

FM_HD static inline int fm_pk_curve_finite(const float *c, int stride, int n)
{
    for (int i = 0; i < n; i++) {
        const float v = c[(long)i * stride];
        if (!(v == v) || v - v != 0) /* NaN or +-inf */
            return 0;
    }
    return 1;
}

/* Fills rec (FM_PK_OUT_COUNT values) from the fit's end point x, cost ss, cost evaluations and
 * convergence, for curve c (c[i * stride], n_times values). */
FM_HD static inline void fm_pk_record(const fm_pk_plan *p, const float *c, int stride,
                                      const double *x, double ss, int iterations, int converged,
                                      double *rec)
{
    const int nt = p->n_times;
    double theta[FM_PK_N_PARAMS];
    fm_pk_theta_of(p, x, theta);
    double mean = 0, sstot = 0;
    for (int i = 0; i < nt; i++)
        mean += c[(long)i * stride];
    mean /= nt;
    for (int i = 0; i < nt; i++) {
        const double d = c[(long)i * stride] - mean;
        sstot += d * d;
    }
    rec[FM_PK_OUT_KTRANS] = theta[FM_PK_KTRANS];
    rec[FM_PK_OUT_VE] = theta[FM_PK_VE];
    rec[FM_PK_OUT_VP] = theta[FM_PK_VP];
    rec[FM_PK_OUT_FP] = theta[FM_PK_FP];
    rec[FM_PK_OUT_PS] = p->model == FM_PK_PATLAK ? theta[FM_PK_KTRANS] : theta[FM_PK_PS];
    rec[FM_PK_OUT_KEP] = p->model == FM_PK_2CXM ? theta[FM_PK_PS] / theta[FM_PK_VE]
                                                : theta[FM_PK_KTRANS] / theta[FM_PK_VE];
    rec[FM_PK_OUT_DELAY] = theta[FM_PK_DELAY];
    rec[FM_PK_OUT_RMSE] = sqrt(ss / nt);
    rec[FM_PK_OUT_R2] = sstot > 0 ? 1 - ss / sstot : NAN;
    /* AIC for least squares with Gaussian noise (Akaike 1974; Burnham & Anderson's n ln(RSS/n)
     * + 2k), k the fitted parameters; a floor keeps an exact fit finite. */
    rec[FM_PK_OUT_AIC] = nt * log(fmax(ss, 1e-300) / nt) + 2 * p->n_fit;
    rec[FM_PK_OUT_CONVERGED] = converged;
    rec[FM_PK_OUT_ITERATIONS] = iterations;
}

/* Fits curve c (c[i * stride], n_times values) and fills rec (FM_PK_OUT_COUNT values; NaN for a
 * curve that is not finite). */
FM_HD static inline void fm_pk_fit_voxel(const fm_pk_plan *p, const float *c, int stride,
                                         double *rec)
{
    const int nt = p->n_times;
    if (!fm_pk_curve_finite(c, stride, nt)) {
        for (int o = 0; o < FM_PK_OUT_COUNT; o++)
            rec[o] = NAN;
        return;
    }
    double x[FM_PK_MAX_FIT];
    int iterations = 0, converged = 0;
    fm_pk_start(p, c, stride, x);
    const double ss = fm_pk_levenberg_marquardt(p, c, stride, x, &iterations, &converged);
    fm_pk_record(p, c, stride, x, ss, iterations, converged, rec);
}
