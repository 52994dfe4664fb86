/* IRF convolution of the iterative FLIM fits: the per-bin recursion of the bin-integrated model
 * and the basis over the fit range. Included by flim_fit_math.h, which defines the types and
 * helpers it uses. */
#pragma once

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
        xu = M_(M_(x, x), 0.5 - M_(x, 1.0 / 6 - M_(x, 1.0 / 24 - M_(x, 1.0 / 120 - x / 720))));
    else
        xu = x + fm_fit_expm1(-x);
    const double u = x - xu, q = 1 - u, ratio = u / x;
    r->q = q;
    r->dq = M_(q, dt) / M_(tau, tau);
    r->k = M_(ratio, ratio);
    /* dk/dtau = 2 ratio dratio/dx dx/dtau, dratio/dx = (q x - u) / x^2, dx/dtau = -x / tau */
    r->dk = M_(-2 * ratio, xu - M_(x, u)) / M_(x, tau);
    r->d = xu / M_(x, x);
    /* dd/dx = (u x - 2 (x - u)) / x^3 */
    r->dd = -(M_(u, x) - 2 * xu) / M_(M_(x, x), tau);
    r->s = r->g = r->e = r->de = 0;
}

FM_FIT_HD static inline void fm_irf_rec_step(fm_irf_rec *r, double irf_i)
{
    r->e = M_(r->d, irf_i) + M_(r->k, r->s);
    r->de = M_(r->dd, irf_i) + M_(r->dk, r->s) + M_(r->k, r->g);
    r->g = M_(r->q, r->g) + M_(r->dq, r->s);
    r->s = M_(r->q, r->s) + irf_i;
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
