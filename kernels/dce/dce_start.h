/* DCE fit start from the voxel's own curve: the best point of a coarse grid over the nonlinear
 * parameters (kl, tau_a, tau_p), with the linear ones (ka, kp) solved there by nonnegative least
 * squares. Written once for the CPU twin and both CUDA layouts; included by dce_math.h. */
#pragma once

/* Why: from the paper's fixed start (10, 80, 200, 2, 3) Nelder-Mead spends most of its iterations
 * walking towards the voxel's minimum. The model is linear in ka and kp, so for fixed kl, tau_a,
 * tau_p the best ka, kp come from a 2 x 2 system: Cl = ka A + kp P with A the model curve for
 * ka = 1, kp = 0 and P for ka = 0, kp = 1. A depends on (kl, tau_a) only and P on (kl, tau_p), so
 * 2 x 7 x 7 basis curves (built once per run) and their Gram terms cover the 343 grid points; per
 * voxel the work is 98 dot products with its curve and 343 small solves, a few cost evaluations'
 * worth. On the bench workload (CPU twin) this cut the mean Nelder-Mead iterations by a third and
 * the CNR-100 ka bias from -1.8 % to -0.1 % (tests/accuracy/test-dce-accuracy.c). */
#define FM_DCE_START_NKL 7
#define FM_DCE_START_NTAU 7
#define FM_DCE_START_HALF (FM_DCE_START_NKL * FM_DCE_START_NTAU) /* A curves, then as many P */
#define FM_DCE_START_BASES (2 * FM_DCE_START_HALF)
#define FM_DCE_START_POINTS (FM_DCE_START_HALF * FM_DCE_START_NTAU)
/* ka and kp start at least here (ml/100g/min): Nelder-Mead's first simplex steps a coordinate by
 * 5 % of itself, but a zero only by 0.00025, too small to find its way out. */
#define FM_DCE_START_MIN_RATE 1.0

/* Dot product of basis curve b with the voxel's curve c, frames in order (the same bits on every
 * backend, whichever thread computes it). */
FM_HD static inline double fm_dce_start_dot(const fm_dce_plan *p, const double *c, int b)
{
    double s = 0;
    for (int i = 0; i < p->n_times; i++)
        s += FM_DMUL(p->start_basis[i * FM_DCE_START_BASES + b], c[i]);
    return s;
}

/* Grid point g = (kl index x NTAU + tau_a index) x NTAU + tau_p index uses basis curves ia (its
 * A: kl, tau_a) and ip (its P: kl, tau_p). */
FM_HD static inline void fm_dce_start_bases(int g, int *ia, int *ip)
{
    *ia = g / FM_DCE_START_NTAU;
    *ip = FM_DCE_START_HALF + *ia / FM_DCE_START_NTAU * FM_DCE_START_NTAU + g % FM_DCE_START_NTAU;
}

/* Grid point g: ka, kp >= 0 minimising
 * |c - ka A - kp P|^2 given the voxel's dot products, and the cost drop they give,
 * ka A.c + kp P.c (the larger, the better the point). */
FM_HD static inline double fm_dce_start_gain(const fm_dce_plan *p, const double *dots, int g,
                                             double *ka, double *kp)
{
    int ia, ip;
    fm_dce_start_bases(g, &ia, &ip);
    const double aa = p->start_gram[ia], pp = p->start_gram[ip];
    const double ap = p->start_gram[FM_DCE_START_BASES + g], ac = dots[ia], pc = dots[ip];
    const double det = FM_DMUL(aa, pp) - FM_DMUL(ap, ap);
    double x = -1, y = -1;
    if (det > 0) {
        x = (FM_DMUL(ac, pp) - FM_DMUL(pc, ap)) / det;
        y = (FM_DMUL(pc, aa) - FM_DMUL(ac, ap)) / det;
    }
    if (!(x >= 0 && y >= 0)) { /* the optimum lies on a face: one rate alone */
        const double xa = aa > 0 && ac > 0 ? ac / aa : 0.0;
        const double yp = pp > 0 && pc > 0 ? pc / pp : 0.0;
        const int a_only = FM_DMUL(xa, ac) >= FM_DMUL(yp, pc);
        x = a_only ? xa : 0.0;
        y = a_only ? 0.0 : yp;
    }
    *ka = x;
    *kp = y;
    return FM_DMUL(x, ac) + FM_DMUL(y, pc);
}

/* The start vector of grid point g, inside the bounds. */
FM_HD static inline void fm_dce_start_point(const fm_dce_plan *p, const double *dots, int g,
                                            double *x0)
{
    double ka, kp;
    fm_dce_start_gain(p, dots, g, &ka, &kp);
    const int ia = g / FM_DCE_START_NTAU;
    x0[FM_DCE_KA] = ka > FM_DCE_START_MIN_RATE ? ka : FM_DCE_START_MIN_RATE;
    x0[FM_DCE_KP] = kp > FM_DCE_START_MIN_RATE ? kp : FM_DCE_START_MIN_RATE;
    x0[FM_DCE_KL] = p->start_grid[ia / FM_DCE_START_NTAU];
    x0[FM_DCE_TAU_A] = p->start_grid[FM_DCE_START_NKL + ia % FM_DCE_START_NTAU];
    x0[FM_DCE_TAU_P] = p->start_grid[FM_DCE_START_NKL + FM_DCE_START_NTAU + g % FM_DCE_START_NTAU];
    for (int i = FM_DCE_KA; i <= FM_DCE_KP; i++)
        x0[i] = fm_dce_record_param(x0[i], p->lower[i], p->upper[i]);
}

/* The whole start on one thread (CPU twin, tests): dots holds FM_DCE_START_BASES doubles of
 * scratch. The first grid point of the largest gain wins, as the GPU's reduction picks it. */
FM_HD static inline void fm_dce_start(const fm_dce_plan *p, const double *c, double *dots,
                                      double *x0)
{
    for (int b = 0; b < FM_DCE_START_BASES; b++)
        dots[b] = fm_dce_start_dot(p, c, b);
    int best = 0;
    double best_gain = -HUGE_VAL;
    for (int g = 0; g < FM_DCE_START_POINTS; g++) {
        double ka, kp;
        const double gain = fm_dce_start_gain(p, dots, g, &ka, &kp);
        if (gain > best_gain) {
            best_gain = gain;
            best = g;
        }
    }
    fm_dce_start_point(p, dots, best, x0);
}
