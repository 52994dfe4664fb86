/* Per-pixel math of the iterative FLIM fits (LSM, MLE, GA), written once for the CPU twin and the
 * CUDA kernels: decay model with IRF convolution, Jacobian, Levenberg-Marquardt step, Poisson
 * deviance, non-negative linear amplitudes and small dense solves (Wu et al. 2016, sec. 2.2). */
#pragma once

#include <math.h>
#include <stddef.h>

#include "flim_impl.h"

/* nvcc: inline everything, so that the thread kernels' template constants (model order,
 * background, cost, IRF) reach every loop and the per-pixel state stays in registers. */
#ifdef __CUDACC__
#define FM_FIT_HD FM_HD __attribute__((always_inline))
#else
#define FM_FIT_HD FM_HD
#endif

#define FM_FIT_MAXP 5         /* A, fD, tauF, tauD, b */
#define FM_FIT_NH 15          /* packed upper triangle of a 5 x 5 matrix */
#define FM_FIT_TAU_MIN 0.01   /* ns: the brief's lower bound, keeps exp(-t/tau) finite */
#define FM_FIT_TAU_MAX 1000.0 /* ns: far beyond any TCSPC window */

enum { FM_ROLE_AMP = 0, FM_ROLE_FRAC, FM_ROLE_TAU, FM_ROLE_BG };

/* Everything a pixel fit needs from the job, flattened so that it travels to the device. */
typedef struct {
    int fit_start, fit_end; /* bins [start, end); the IRF recursion runs from bin 0 */
    int model;              /* 1 mono, 2 bi */
    int fit_bg;
    int mle;      /* 0: Neyman-weighted least squares; 1: Poisson deviance (Fisher scoring) */
    int n_params; /* LM parameters per pixel: 2 or 4, + 1 with background */
    int n_lin;    /* GA linear amplitudes per pixel: model (+ 1 with background) */
    int has_irf;
    int max_iter;
    double dt, tol, min_photons;
    double tau0[2]; /* start: mono [0]; bi tauF = [0], tauD = [1] */
    double f0;
} fm_fit_setup;

/* Normal-equation sums of one evaluation: J^T W J (packed), J^T W r, the cost and sum(model). */
typedef struct {
    double h[FM_FIT_NH], g[FM_FIT_MAXP], cost, msum;
} fm_fit_sums;
#define FM_FIT_NSUM (FM_FIT_NH + FM_FIT_MAXP + 2)

/* Levenberg-Marquardt state: the accepted point with its sums and the next point to try. */
typedef struct {
    double p[FM_FIT_MAXP], trial[FM_FIT_MAXP], h[FM_FIT_NH], g[FM_FIT_MAXP];
    double cost, lambda;
    int n, iter, done, converged, have;
    unsigned char role[FM_FIT_MAXP];
} fm_lm_state;

/* One pixel's answer; p is [A, tau, b] (mono) or [A, fD, tauF, tauD, b] (bi) for every method. */
typedef struct {
    double p[FM_FIT_MAXP];
    double cost, chi2, photons;
    int iter, converged, fitted, used;
} fm_fit_result;

FM_FIT_HD static inline int fm_fit_hidx(int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return a * FM_FIT_MAXP - a * (a - 1) / 2 + (b - a);
}

FM_FIT_HD static inline void fm_fit_sums_zero(fm_fit_sums *s)
{
    for (int k = 0; k < FM_FIT_NH; k++)
        s->h[k] = 0;
    for (int k = 0; k < FM_FIT_MAXP; k++)
        s->g[k] = 0;
    s->cost = s->msum = 0;
}

/* Lifetime of basis component 0 (tauD, or the mono tau) and 1 (tauF) from LM parameters. */
FM_FIT_HD static inline void fm_fit_taus(const fm_fit_setup *su, const double *p, double *tau0,
                                         double *tau1)
{
    *tau0 = su->model == 1 ? p[1] : p[3];
    *tau1 = su->model == 1 ? p[1] : p[2];
}

/* No IRF: exp(-t/tau) at the bin centre t from the fit start, and its tau derivative. */
FM_FIT_HD static inline void fm_fit_basis_direct(const fm_fit_setup *su, int bin, double tau,
                                                 double *e, double *d)
{
    double t = (bin - su->fit_start + 0.5) * su->dt;
    *e = exp(-t / tau);
    *d = *e * t / (tau * tau);
}

/* IRF convolution for bin-integrated data. The data are a continuous convolution of the IRF with
 * the decay, integrated over each bin; the IRF is known only as bin contents irf_j. Taking each
 * IRF bin as uniform over its width, the counts of bin i from IRF bin j are (per unit amplitude
 * of the decay density, divided by dt so that A keeps the meaning "counts per bin at t = 0"):
 *   j < i: irf_j k q^(i-1-j),  k = (tau (1 - q) / dt)^2        (box * exponential * box)
 *   j = i: irf_i d,            d = (x - (1 - q)) / x^2, x = dt / tau  (the same bin, ~1/2)
 * with q = exp(-dt/tau). Sampling the exponential instead (c_i = sum_j irf_j q^(i-j), weight 1 on
 * the same bin) shifts the model by about half a bin and biases tau by +1 to +3 % on photon
 * data. Recursion: s_i = q s_{i-1} + irf_i, so bin i is d irf_i + k s_{i-1}; tau derivatives
 * follow the same recursion, g_i = q g_{i-1} + q' s_{i-1}, q' = q dt / tau^2. */
typedef struct {
    double q, dq, k, dk, d, dd; /* per-tau constants and their tau derivatives */
    double s, g;                /* running sum_j irf_j q^(i-j) and its tau derivative */
    double e, de;               /* model of the bin just stepped and its tau derivative */
} fm_irf_rec;

FM_FIT_HD static inline void fm_irf_rec_init(fm_irf_rec *r, double tau, double dt)
{
    const double x = dt / tau;
    double xu; /* x - (1 - q) = x + expm1(-x), by its series where it cancels */
    if (x < 0.05)
        xu = x * x * (0.5 - x * (1.0 / 6 - x * (1.0 / 24 - x * (1.0 / 120 - x / 720))));
    else
        xu = x + expm1(-x);
    const double u = x - xu, q = 1 - u, ratio = u / x;
    r->q = q;
    r->dq = q * dt / (tau * tau);
    r->k = ratio * ratio;
    /* dk/dtau = 2 ratio dratio/dx dx/dtau, dratio/dx = (q x - u) / x^2, dx/dtau = -x / tau */
    r->dk = -2 * ratio * (xu - x * u) / (x * tau);
    r->d = xu / (x * x);
    /* dd/dx = (u x - 2 (x - u)) / x^3 */
    r->dd = -(u * x - 2 * xu) / (x * x * tau);
    r->s = r->g = r->e = r->de = 0;
}

FM_FIT_HD static inline void fm_irf_rec_step(fm_irf_rec *r, double irf_i)
{
    r->e = r->d * irf_i + r->k * r->s;
    r->de = r->dd * irf_i + r->dk * r->s + r->k * r->g;
    r->g = r->q * r->g + r->dq * r->s;
    r->s = r->q * r->s + irf_i;
}

/* Basis over the fit range (n_fit values each) for the given lifetimes, by the same operations as
 * the serial evaluation: used by GA and by the block-per-pixel kernel with an IRF. */
FM_FIT_HD static inline void fm_fit_basis_fill(const fm_fit_setup *su, const double *irf,
                                               double tau0, double tau1, double *e0, double *d0,
                                               double *e1, double *d1)
{
    const int s = su->fit_start;
    if (su->has_irf) {
        fm_irf_rec r0, r1;
        fm_irf_rec_init(&r0, tau0, su->dt);
        fm_irf_rec_init(&r1, tau1, su->dt);
        for (int i = 0; i < su->fit_end; i++) {
            fm_irf_rec_step(&r0, irf[i]);
            if (su->model == 2)
                fm_irf_rec_step(&r1, irf[i]);
            if (i >= s) {
                e0[i - s] = r0.e;
                d0[i - s] = r0.de;
                e1[i - s] = r1.e;
                d1[i - s] = r1.de;
            }
        }
    } else {
        for (int i = s; i < su->fit_end; i++) {
            fm_fit_basis_direct(su, i, tau0, &e0[i - s], &d0[i - s]);
            if (su->model == 2)
                fm_fit_basis_direct(su, i, tau1, &e1[i - s], &d1[i - s]);
            else
                e1[i - s] = d1[i - s] = 0;
        }
    }
}

/* Model value of a bin at parameters p from its basis values (weights of the second LSM pass). */
FM_FIT_HD static inline double fm_fit_model_value(const fm_fit_setup *su, const double *p,
                                                  double e0, double e1)
{
    double m = su->model == 1 ? p[0] * e0 : p[0] * (p[1] * e0 + (1 - p[1]) * e1);
    return su->fit_bg ? m + p[su->model == 1 ? 2 : 4] : m;
}

/* One bin's model, Jacobian row and weighted contributions. LSM: weights 1/max(wref,1), where
 * wref is the count (Neyman, first pass) or the first pass's model (second pass): Neyman weights
 * correlate with the noise and bias tau low by ~7 % at 2000 photons, weights from a fitted
 * model do not (the reweighting that Laurence & Chromy 2010 discuss).
 * MLE: Fisher scoring on the Poisson likelihood (Laurence & Chromy 2010): the score is
 * sum (y - m)/m J and the information sum J J^T / m, i.e. least squares with weights 1/m
 * re-evaluated at each point; the cost is the deviance 2 sum [m - y + y ln(y/m)]. */
FM_FIT_HD static inline void fm_fit_accumulate(const fm_fit_setup *su, const double *p, double e0,
                                               double d0, double e1, double d1, double y,
                                               double wref, fm_fit_sums *s)
{
    double J[FM_FIT_MAXP], m, w;
    int nb;
    if (su->model == 1) {
        J[0] = e0;
        J[1] = p[0] * d0;
        m = p[0] * e0;
        nb = 2;
    } else {
        double f = p[1], shape = f * e0 + (1 - f) * e1;
        J[0] = shape;
        J[1] = p[0] * (e0 - e1);
        J[2] = p[0] * (1 - f) * d1;
        J[3] = p[0] * f * d0;
        m = p[0] * shape;
        nb = 4;
    }
    if (su->fit_bg) {
        J[nb] = 1;
        m += p[nb];
    }
    s->msum += m;
    const double r = y - m;
    if (!su->mle) {
        w = 1.0 / (wref > 1 ? wref : 1.0);
        s->cost += w * r * r;
    } else if (m > 0) {
        w = 1.0 / m;
        s->cost += 2 * (m - y + (y > 0 ? y * log(y / m) : 0.0));
    } else {
        w = 0; /* an empty bin where the model is zero (before the IRF starts) costs nothing */
        if (y > 0)
            s->cost = HUGE_VAL; /* a zero model under counts: impossible, reject */
    }
    const int n = su->n_params;
    for (int a = 0; a < n; a++) {
        const double wa = w * J[a];
        s->g[a] += wa * r;
        for (int b = a; b < n; b++)
            s->h[fm_fit_hidx(a, b)] += wa * J[b];
    }
}

/* Sums of one pixel at parameters p, bins in order (the CPU twin and thread-per-pixel); pw, when
 * not NULL, gives the parameters whose model weights the second LSM pass. */
FM_FIT_HD static inline void fm_fit_eval_serial(const fm_fit_setup *su, const float *y,
                                                size_t stride, const double *irf, const double *p,
                                                const double *pw, fm_fit_sums *s)
{
    double tau0, tau1, w0 = 1, w1 = 1;
    fm_fit_taus(su, p, &tau0, &tau1);
    if (pw)
        fm_fit_taus(su, pw, &w0, &w1);
    fm_fit_sums_zero(s);
    if (su->has_irf) {
        fm_irf_rec r0, r1, q0, q1;
        fm_irf_rec_init(&r0, tau0, su->dt);
        fm_irf_rec_init(&r1, tau1, su->dt);
        fm_irf_rec_init(&q0, w0, su->dt);
        fm_irf_rec_init(&q1, w1, su->dt);
        for (int i = 0; i < su->fit_end; i++) {
            fm_irf_rec_step(&r0, irf[i]);
            if (su->model == 2)
                fm_irf_rec_step(&r1, irf[i]);
            if (pw) {
                fm_irf_rec_step(&q0, irf[i]);
                if (su->model == 2)
                    fm_irf_rec_step(&q1, irf[i]);
            }
            if (i >= su->fit_start) {
                const double v = (double)y[(size_t)i * stride];
                fm_fit_accumulate(su, p, r0.e, r0.de, r1.e, r1.de, v,
                                  pw ? fm_fit_model_value(su, pw, q0.e, q1.e) : v, s);
            }
        }
    } else { /* exp(-t/tau) by recursion over bins: one exp per lifetime per evaluation */
        const double t0 = 0.5 * su->dt;
        const double q0 = exp(-su->dt / tau0), q1 = exp(-su->dt / tau1);
        const double qw0 = exp(-su->dt / w0), qw1 = exp(-su->dt / w1);
        const double it0 = 1 / (tau0 * tau0), it1 = 1 / (tau1 * tau1);
        double e0 = exp(-t0 / tau0), e1 = su->model == 2 ? exp(-t0 / tau1) : 0;
        double f0 = pw ? exp(-t0 / w0) : 0, f1 = pw && su->model == 2 ? exp(-t0 / w1) : 0;
        for (int i = su->fit_start; i < su->fit_end; i++) {
            const double t = (i - su->fit_start + 0.5) * su->dt;
            const double v = (double)y[(size_t)i * stride];
            const double wref = pw ? fm_fit_model_value(su, pw, f0, f1) : v;
            fm_fit_accumulate(su, p, e0, e0 * t * it0, e1, e1 * t * it1, v, wref, s);
            e0 *= q0;
            e1 *= q1;
            f0 *= qw0;
            f1 *= qw1;
        }
    }
}

/* Cholesky solve of a small SPD system (n <= 5, row-major a overwritten); 0 when not SPD. */
FM_FIT_HD static inline int fm_fit_cholesky(int n, double *a, double *x)
{
    for (int j = 0; j < n; j++) {
        double s = a[j * n + j];
        for (int k = 0; k < j; k++)
            s -= a[j * n + k] * a[j * n + k];
        if (!(s > 0))
            return 0;
        s = sqrt(s);
        a[j * n + j] = s;
        for (int i = j + 1; i < n; i++) {
            double t = a[i * n + j];
            for (int k = 0; k < j; k++)
                t -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = t / s;
        }
    }
    for (int i = 0; i < n; i++) {
        double t = x[i];
        for (int k = 0; k < i; k++)
            t -= a[i * n + k] * x[k];
        x[i] = t / a[i * n + i];
    }
    for (int i = n - 1; i >= 0; i--) {
        double t = x[i];
        for (int k = i + 1; k < n; k++)
            t -= a[k * n + i] * x[k];
        x[i] = t / a[i * n + i];
    }
    return 1;
}

FM_FIT_HD static inline double fm_fit_clamp(int role, double v)
{
    switch (role) {
    case FM_ROLE_FRAC:
        return v < 0 ? 0 : (v > 1 ? 1 : v);
    case FM_ROLE_TAU:
        return v < FM_FIT_TAU_MIN ? FM_FIT_TAU_MIN : (v > FM_FIT_TAU_MAX ? FM_FIT_TAU_MAX : v);
    default: /* amplitudes and background are photon counts */
        return v < 0 ? 0 : v;
    }
}

FM_FIT_HD static inline void fm_lm_init(fm_lm_state *s, int n, const unsigned char *role,
                                        const double *p0)
{
    s->n = n;
    for (int k = 0; k < FM_FIT_MAXP; k++) {
        s->p[k] = s->trial[k] = k < n ? p0[k] : 0;
        s->role[k] = k < n ? role[k] : (unsigned char)FM_ROLE_AMP;
        s->g[k] = 0;
    }
    for (int k = 0; k < FM_FIT_NH; k++)
        s->h[k] = 0;
    s->cost = HUGE_VAL;
    s->lambda = 1e-3;
    s->iter = s->done = s->converged = s->have = 0;
}

/* Marquardt's damped step (H + lambda diag H) delta = g. A parameter whose Jacobian column
 * vanishes (tau of a component clamped to zero amplitude) is frozen instead of making the
 * system singular. */
FM_FIT_HD static inline int fm_lm_solve(const fm_lm_state *s, double *delta)
{
    const int n = s->n;
    double a[FM_FIT_MAXP * FM_FIT_MAXP], maxd = 0;
    for (int i = 0; i < n; i++)
        maxd = fmax(maxd, s->h[fm_fit_hidx(i, i)]);
    for (int i = 0; i < n; i++) {
        const double d = s->h[fm_fit_hidx(i, i)];
        const int frozen = !(d > 1e-14 * maxd);
        for (int j = 0; j < n; j++) {
            const int frozen_j = !(s->h[fm_fit_hidx(j, j)] > 1e-14 * maxd);
            a[i * n + j] = (frozen || frozen_j) ? 0.0 : s->h[fm_fit_hidx(i, j)];
        }
        a[i * n + i] = frozen ? 1.0 : d * (1 + s->lambda);
        delta[i] = frozen ? 0.0 : s->g[i];
    }
    return fm_fit_cholesky(n, a, delta);
}

/* Takes the sums evaluated at s->trial and decides: accept (lambda / 10) or reject (lambda x 10);
 * stops when an accepted step lowers the cost by less than tol relative, when no step can lower
 * it any more, or after max_iter proposals (not converged). Otherwise sets the next trial. */
FM_FIT_HD static inline void fm_lm_update(fm_lm_state *s, const fm_fit_sums *sum, double tol,
                                          int max_iter)
{
    const int accept = isfinite(sum->cost) && (!s->have || sum->cost < s->cost);
    if (!s->have && !accept) {
        s->done = 1;
        return;
    }
    if (accept) {
        const double old = s->cost;
        const int had = s->have;
        for (int k = 0; k < FM_FIT_MAXP; k++) {
            s->p[k] = s->trial[k];
            s->g[k] = sum->g[k];
        }
        for (int k = 0; k < FM_FIT_NH; k++)
            s->h[k] = sum->h[k];
        s->cost = sum->cost;
        s->have = 1;
        if (had)
            s->lambda = fmax(s->lambda * 0.1, 1e-12);
        if (s->cost <= 0 || (had && old - s->cost <= tol * s->cost)) {
            s->done = s->converged = 1;
            return;
        }
    } else {
        s->lambda *= 10;
        if (s->lambda > 1e12) { /* no step lowers the cost at this precision: a minimum */
            s->done = s->converged = 1;
            return;
        }
    }
    if (s->iter >= max_iter) {
        s->done = 1;
        return;
    }
    s->iter++;
    double delta[FM_FIT_MAXP];
    int ok = 0;
    for (int tries = 0; tries < 8 && !ok; tries++) {
        ok = fm_lm_solve(s, delta);
        if (!ok)
            s->lambda *= 10;
    }
    int moved = 0;
    for (int k = 0; k < s->n; k++) {
        s->trial[k] = fm_fit_clamp(s->role[k], s->p[k] + (ok ? delta[k] : 0.0));
        moved |= s->trial[k] != s->p[k];
    }
    if (!moved) /* the step is stopped by the bounds (or nothing to solve): done */
        s->done = s->converged = 1;
}

/* Start point with A = 1 (the caller rescales A to the photon count) and its parameter roles. */
FM_FIT_HD static inline void fm_fit_start(const fm_fit_setup *su, double *p, unsigned char *role)
{
    int nb;
    p[0] = 1;
    role[0] = FM_ROLE_AMP;
    if (su->model == 1) {
        p[1] = su->tau0[0];
        role[1] = FM_ROLE_TAU;
        nb = 2;
    } else {
        p[1] = su->f0;
        p[2] = su->tau0[0];
        p[3] = su->tau0[1];
        role[1] = FM_ROLE_FRAC;
        role[2] = role[3] = FM_ROLE_TAU;
        nb = 4;
    }
    if (su->fit_bg) {
        p[nb] = 0;
        role[nb] = FM_ROLE_BG;
    }
}

FM_FIT_HD static inline void fm_fit_result_skip(fm_fit_result *res, double photons, int used)
{
    for (int k = 0; k < FM_FIT_MAXP; k++)
        res->p[k] = NAN;
    res->cost = res->chi2 = NAN;
    res->photons = photons;
    res->iter = res->converged = res->fitted = 0;
    res->used = used;
}

/* LSM or MLE of one pixel, bins in order; y[i * stride] is bin i. LSM runs twice: Neyman
 * weights, then weights from that fit's model (fixed during the pass, so the cost is consistent);
 * the second pass starts at the optimum and takes a few iterations. */
FM_FIT_HD static inline void fm_fit_pixel(const fm_fit_setup *su, const float *y, size_t stride,
                                          const double *irf, int used, fm_fit_result *res)
{
    double photons = 0, p[FM_FIT_MAXP], pw[FM_FIT_MAXP];
    unsigned char role[FM_FIT_MAXP];
    fm_fit_sums s;
    fm_lm_state st;
    int iter = 0;
    for (int i = su->fit_start; i < su->fit_end; i++)
        photons += y[(size_t)i * stride];
    fm_fit_result_skip(res, photons, used);
    if (!used || !(photons > 0) || photons < su->min_photons)
        return;
    fm_fit_start(su, p, role);
    fm_fit_eval_serial(su, y, stride, irf, p, NULL, &s);
    if (!(s.msum > 0))
        return;
    p[0] = photons / s.msum;
    for (int pass = 0; pass < (su->mle ? 1 : 2); pass++) {
        fm_lm_init(&st, su->n_params, role, p);
        while (!st.done) {
            fm_fit_eval_serial(su, y, stride, irf, st.trial, pass ? pw : NULL, &s);
            fm_lm_update(&st, &s, su->tol, su->max_iter);
        }
        if (!st.have)
            return;
        iter += st.iter;
        for (int k = 0; k < FM_FIT_MAXP; k++)
            p[k] = pw[k] = st.p[k];
    }
    for (int k = 0; k < FM_FIT_MAXP; k++)
        res->p[k] = st.p[k];
    res->cost = st.cost;
    const int dof = su->fit_end - su->fit_start - su->n_params;
    res->chi2 = st.cost / (dof > 0 ? dof : 1);
    res->iter = iter;
    res->converged = st.converged;
    res->fitted = 1;
}

#include "flim_ga_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Host helpers shared by the CPU twin and the CUDA path (flim_fit_cpu.c). */
void fm_fit_setup_from(const fm_flim_job *job, fm_fit_setup *su);
/* The IRF as doubles (n_bins values), or NULL without one; caller frees. */
double *fm_fit_irf_double(const fm_flim_job *job);
/* GA: pixels of each segment, CSR (offsets has n_segments + 1 entries); caller frees both. */
int fm_fit_segments(const fm_flim_job *job, int **offsets, int **pixels);
/* Copies bins [0, n_bins_copy) of pixels order[k0..k1) (or k0..k1 when order is NULL) into dst,
 * bin-major with k1 - k0 columns, and their mask bytes (1 without a mask). OpenMP. */
void fm_fit_gather(const fm_flim_job *job, const int *order, long k0, long k1, int n_bins_copy,
                   float *dst, unsigned char *mask_dst);
/* Writes results of pixels order[k0..k1) to the output maps. */
void fm_fit_scatter(const fm_flim_job *job, const fm_fit_setup *su, const int *order, long k0,
                    long k1, const fm_fit_result *res);
/* GA: NaN maps, 0 iterations, not converged for pixels outside every segment. */
void fm_fit_mark_unsegmented(const fm_flim_job *job, const fm_fit_setup *su);

#ifdef __cplusplus
}
#endif
