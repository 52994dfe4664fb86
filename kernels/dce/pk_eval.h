/* Per-voxel passes over the frames, shared by the CPU twin and the CUDA kernel: the cost of a
 * parameter vector, and the cost with the Gauss-Newton normal equations (forward-difference
 * Jacobian, all curves streamed side by side: no per-frame storage); a small SPD solver. */
#pragma once

#include "pk_impl.h"

/* The full theta (FM_PK_N_PARAMS, user units) of fitted vector x. */
FM_HD static inline void fm_pk_theta_of(const fm_pk_plan *p, const double *x, double *theta)
{
    for (int i = 0; i < FM_PK_N_PARAMS; i++)
        theta[i] = p->fixed[i];
    for (int j = 0; j < p->n_fit; j++)
        theta[p->slot[j]] = x[j];
}

/* The difference step of fitted parameter j at x: 1e-6 of its range, backwards at the upper
 * bound so that the model is never evaluated outside it. */
FM_HD static inline double fm_pk_diff_step(const fm_pk_plan *p, const double *x, int j)
{
    const double h = 1e-6 * (p->upper[j] - p->lower[j]);
    return x[j] + h > p->upper[j] ? -h : h;
}

/* Sum of squared residuals at x; with jac, also A = J^T J (lower triangle, n_fit x n_fit row
 * major in FM_PK_MAX_FIT columns) and g = J^T r (r = data - model). c[i * stride]: the curve.
 * The difference curves of the parameters other than the delay share the model's delayed
 * input. */
FM_HD static inline double fm_pk_pass(const fm_pk_plan *p, const double *x, const float *c,
                                      int stride, int jac, double *a, double *g)
{
    fm_pk_stream s[FM_PK_MAX_SETS];
    double inv_h[FM_PK_MAX_FIT], aa[FM_PK_MAX_FIT * FM_PK_MAX_FIT], gg[FM_PK_MAX_FIT];
    int own_input[FM_PK_MAX_FIT];
    const int nf = p->n_fit, sets = jac ? nf + 1 : 1;
    double theta[FM_PK_N_PARAMS];
    fm_pk_coefs co;
    fm_pk_theta_of(p, x, theta);
    fm_pk_coefs_of(p->model, theta, &co);
    fm_pk_stream_begin(&s[0], &co);
    FM_PK_UNROLL
    for (int j = 0; j < FM_PK_MAX_FIT; j++) {
        if (j + 1 >= sets)
            break;
        const double h = fm_pk_diff_step(p, x, j);
        const int slot = p->slot[j];
        const double keep = theta[slot];
        theta[slot] = keep + h;
        inv_h[j] = 1 / ((keep + h) - keep); /* the step as represented */
        fm_pk_coefs_of(p->model, theta, &co);
        fm_pk_stream_begin(&s[j + 1], &co);
        own_input[j] = co.delay_s != s[0].c.delay_s;
        theta[slot] = keep;
        gg[j] = 0;
        FM_PK_UNROLL
        for (int k = 0; k < FM_PK_MAX_FIT; k++) {
            if (k > j)
                break;
            aa[j * FM_PK_MAX_FIT + k] = 0;
        }
    }
    double ss = 0;
    for (int i = 0; i < p->n_times; i++) {
        const double cpd =
            fm_pk_input_at(p->times, p->cp, p->n_times, p->times[i] - s[0].c.delay_s, &s[0].seg);
        const double m0 = fm_pk_stream_step(&s[0], p->times, cpd, i);
        const double r = (double)c[(long)i * stride] - m0;
        ss += r * r;
        if (!jac)
            continue;
        double d[FM_PK_MAX_FIT];
        FM_PK_UNROLL
        for (int j = 0; j < FM_PK_MAX_FIT; j++) {
            if (j >= nf)
                break;
            const double cj = own_input[j]
                                  ? fm_pk_input_at(p->times, p->cp, p->n_times,
                                                   p->times[i] - s[j + 1].c.delay_s, &s[j + 1].seg)
                                  : cpd;
            d[j] = (fm_pk_stream_step(&s[j + 1], p->times, cj, i) - m0) * inv_h[j];
            gg[j] += d[j] * r;
            FM_PK_UNROLL
            for (int k = 0; k < FM_PK_MAX_FIT; k++) {
                if (k > j)
                    break;
                aa[j * FM_PK_MAX_FIT + k] += d[j] * d[k];
            }
        }
    }
    if (jac) {
        FM_PK_UNROLL
        for (int j = 0; j < FM_PK_MAX_FIT; j++) {
            if (j >= nf)
                break;
            g[j] = gg[j];
            FM_PK_UNROLL
            for (int k = 0; k < FM_PK_MAX_FIT; k++) {
                if (k > j)
                    break;
                a[j * FM_PK_MAX_FIT + k] = aa[j * FM_PK_MAX_FIT + k];
            }
        }
    }
    return ss;
}

/* Solves m y = b for symmetric positive definite m (lower triangle used, n <= FM_PK_MAX_FIT, row
 * stride FM_PK_MAX_FIT) by Cholesky; m is overwritten. Returns 0 when m is not positive definite.
 */
FM_HD static inline int fm_pk_solve_spd(double *m, const double *b, int n, double *y)
{
    for (int j = 0; j < n; j++) {
        double d = m[j * FM_PK_MAX_FIT + j];
        for (int k = 0; k < j; k++)
            d -= m[j * FM_PK_MAX_FIT + k] * m[j * FM_PK_MAX_FIT + k];
        if (!(d > 0))
            return 0;
        d = sqrt(d);
        m[j * FM_PK_MAX_FIT + j] = d;
        for (int i = j + 1; i < n; i++) {
            double v = m[i * FM_PK_MAX_FIT + j];
            for (int k = 0; k < j; k++)
                v -= m[i * FM_PK_MAX_FIT + k] * m[j * FM_PK_MAX_FIT + k];
            m[i * FM_PK_MAX_FIT + j] = v / d;
        }
    }
    for (int i = 0; i < n; i++) {
        double v = b[i];
        for (int k = 0; k < i; k++)
            v -= m[i * FM_PK_MAX_FIT + k] * y[k];
        y[i] = v / m[i * FM_PK_MAX_FIT + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double v = y[i];
        for (int k = i + 1; k < n; k++)
            v -= m[k * FM_PK_MAX_FIT + i] * y[k];
        y[i] = v / m[i * FM_PK_MAX_FIT + i];
    }
    return 1;
}

FM_HD static inline double fm_pk_clamp(double v, double lo, double hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}
