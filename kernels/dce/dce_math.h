/* DCE per-voxel math written once for the CPU twin and CUDA: model tables, Fourier-domain
 * convolution, deterministic exp, cost; the Nelder-Mead state machine is in dce_nm.h. */
#pragma once

#include <math.h>

#include "dce.h"

/* Bit-identical results on both backends (Wang & Cao report identical convergence) need the same
 * roundings: nvcc would fuse a*b+c into one FMA, gcc for x86-64 does not (no FMA in the baseline
 * ISA), so on the device every product that feeds a sum goes through __dmul_rn, which is never
 * contracted. Division and sqrt are correctly rounded on both. Transcendentals use fm_dce_exp
 * below instead of libm/libdevice, whose last bits differ. */
#ifdef __CUDA_ARCH__
#define FM_DMUL(a, b) __dmul_rn((a), (b))
#else
#define FM_DMUL(a, b) ((a) * (b))
#endif

#define FM_DCE_MAX_GRID 2048 /* model grid points; FFT length <= 4096 (64 KiB of shared memory) */
#define FM_DCE_RATE_PER_S (1.0 / 6000.0) /* 1 ml/100g/min with tissue density 1 g/ml, in 1/s */

/* Tables shared by every voxel of a run; the CUDA path uploads the same arrays, so both
 * backends start from identical bits. Built on the host by fm_dce_plan_build (dce_plan.c). */
typedef struct {
    int n_times; /* frames */
    int n_grid;  /* M: uniform model grid points from the first frame time */
    int n_fft;   /* N: power of two >= 2M, so the linear convolution never wraps */
    int log2_fft;
    int n_pad;              /* power of two >= n_times: width of the cost's pairwise sum */
    double dt_s;            /* model grid step */
    double ca0, cp0;        /* Ca, Cp at the first grid point */
    const double *twiddle;  /* N complex e^{-2 pi i k / N}, interleaved re, im */
    const double *spectrum; /* N complex: DFT of (Ca - ca0) + i (Cp - cp0), zero-padded */
    const double *ca_grid;  /* M values Ca - ca0 on the grid */
    const double *cp_grid;  /* M values Cp - cp0 on the grid */
    const double *frame_w;  /* n_times: frame i lies at grid position frame_j[i] + frame_w[i] */
    const int *frame_j;
    double lower[FM_DCE_N_PARAMS], upper[FM_DCE_N_PARAMS];
    /* Start grid (dce_start.h), NULL with the fixed start: basis curves frame-major, then
     * their Gram terms, then the grid's kl and tau values. */
    const double *start_basis; /* n_times x FM_DCE_START_BASES */
    const double *start_gram;  /* FM_DCE_START_BASES squared norms, FM_DCE_START_POINTS a.p */
    const double *start_grid;  /* FM_DCE_START_NKL kl, FM_DCE_START_NTAU tau_a, as many tau_p,
                                  each inside its bounds */
} fm_dce_plan;

/* ---- deterministic exp (the same bits under gcc and nvcc) ---- */

/* exp(r) for |r| <= ln2/2: Taylor series to r^13 by Horner, truncation < 5e-18 relative.
 * Literal coefficients keep everything in registers on the device. */
FM_HD static inline double fm_dce_exp_reduced(double r)
{
    double p = 1.0 / 6227020800.0;
    p = FM_DMUL(p, r) + 1.0 / 479001600.0;
    p = FM_DMUL(p, r) + 1.0 / 39916800.0;
    p = FM_DMUL(p, r) + 1.0 / 3628800.0;
    p = FM_DMUL(p, r) + 1.0 / 362880.0;
    p = FM_DMUL(p, r) + 1.0 / 40320.0;
    p = FM_DMUL(p, r) + 1.0 / 5040.0;
    p = FM_DMUL(p, r) + 1.0 / 720.0;
    p = FM_DMUL(p, r) + 1.0 / 120.0;
    p = FM_DMUL(p, r) + 1.0 / 24.0;
    p = FM_DMUL(p, r) + 1.0 / 6.0;
    p = FM_DMUL(p, r) + 0.5;
    p = FM_DMUL(p, r) + 1.0;
    return FM_DMUL(p, r) + 1.0;
}

/* Cody-Waite reduction x = k ln2 + r with a split ln2 whose high part has trailing zero bits,
 * so k * LN2_HI is exact; then ldexp, exact on both backends. About 1 ulp. */
FM_HD static inline double fm_dce_exp(double x)
{
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    if (x < -745.0)
        return 0.0;
    if (x > 709.0)
        return HUGE_VAL;
    double k = floor(FM_DMUL(x, 1.4426950408889634074) + 0.5);
    double r = (x - FM_DMUL(k, LN2_HI)) - FM_DMUL(k, LN2_LO);
    return ldexp(fm_dce_exp_reduced(r), (int)k);
}

/* Powers and geometric sums at once: (E^n, G_n) with G_n = sum_{m<n} E^m, by binary powering
 * with (E^a, G_a) + (E^b, G_b) = (E^a E^b, G_a + E^a G_b). Every term is >= 0, so G_n has no
 * cancellation for any kl (expm1-based closed forms need care as kl dt -> 0; here kl = 0 gives
 * G_n = n exactly), relative error ~ 2 log2(n) ulp, and no division or transcendental: one
 * evaluation needs e^{-kl dt} alone, each frame a few products. */
FM_HD static inline void fm_dce_geo_pow(double e, int n, double *en, double *gn)
{
    double pe = 1.0, pg = 0.0; /* (E^0, G_0) */
    double be = e, bg = 1.0;   /* (E^1, G_1), squared per bit */
    while (n > 0) {
        if (n & 1) {
            pg = pg + FM_DMUL(pe, bg);
            pe = FM_DMUL(pe, be);
        }
        n >>= 1;
        if (n > 0) {
            bg = bg + FM_DMUL(be, bg);
            be = FM_DMUL(be, be);
        }
    }
    *en = pe;
    *gn = pg;
}

/* ---- one cost evaluation ---- */

/* Everything one parameter vector fixes, computed identically by every thread that needs it. */
typedef struct {
    double theta[FM_DCE_N_PARAMS]; /* clamped into the bounds */
    double penalty;                /* cost factor, > 1 outside the bounds (see eval_setup) */
    double ka, kp;                 /* 1/s */
    double x;                      /* kl dt, dimensionless */
    double e1, e_m;                /* E = e^{-x} and E^M (fm_dce_geo_pow) */
    double h0;                     /* the kernel's DFT at k = 0: G_M = sum_{j<M} E^j */
    double u0;                     /* ka ca0 + kp cp0: the input's constant part */
    int sa, sp;                    /* delays in whole grid steps */
    double fa, fp;                 /* and the remaining fraction of a step */
} fm_dce_eval;

/* Bounds: the model sees theta clamped into [lower, upper]. Clamping alone leaves the cost flat
 * outside, where the simplex can wander and collapse (a delay stuck below 0 s, say), so a point
 * outside costs its clamped cost times 1 + sum |theta - clamped| / (upper - lower): never better
 * than its projection, and worse the further out, which steers Nelder-Mead back inside. */
FM_HD static inline void fm_dce_eval_bounds(const fm_dce_plan *p, const double *theta,
                                            fm_dce_eval *e)
{
    e->penalty = 1.0;
    for (int i = 0; i < FM_DCE_N_PARAMS; i++) {
        double v = theta[i];
        v = v < p->lower[i] ? p->lower[i] : v;
        v = v > p->upper[i] ? p->upper[i] : v;
        e->theta[i] = v;
        if (v != theta[i])
            e->penalty += fabs(theta[i] - v) / (p->upper[i] - p->lower[i]);
    }
    e->ka = e->theta[FM_DCE_KA] * FM_DCE_RATE_PER_S;
    e->kp = e->theta[FM_DCE_KP] * FM_DCE_RATE_PER_S;
    e->x = FM_DMUL(e->theta[FM_DCE_KL] * FM_DCE_RATE_PER_S, p->dt_s);
    e->u0 = FM_DMUL(e->ka, p->ca0) + FM_DMUL(e->kp, p->cp0);
    double da = e->theta[FM_DCE_TAU_A] / p->dt_s, dp = e->theta[FM_DCE_TAU_P] / p->dt_s;
    e->sa = (int)floor(da);
    e->fa = da - e->sa;
    e->sp = (int)floor(dp);
    e->fp = dp - e->sp;
}

/* Clamping and scalars (fm_dce_eval_bounds), then E = e^{-x} (the evaluation's one
 * transcendental), and E^M and h0 = G_M, the k = 0 term of the paper's closed form
 * (1 - E^M) / (1 - E), as a sum of positive terms (M when kl = 0). */
FM_HD static inline void fm_dce_eval_setup(const fm_dce_plan *p, const double *theta,
                                           fm_dce_eval *e)
{
    fm_dce_eval_bounds(p, theta, e);
    e->e1 = fm_dce_exp(-e->x);
    fm_dce_geo_pow(e->e1, p->n_grid, &e->e_m, &e->h0);
}

FM_HD static inline int fm_dce_bitrev(int k, int log2n)
{
#ifdef __CUDA_ARCH__
    return (int)(__brev((unsigned)k) >> (32 - log2n)); /* the same integer, one instruction */
#else
    int r = 0;
    for (int b = 0; b < log2n; b++) {
        r = (r << 1) | (k & 1);
        k >>= 1;
    }
    return r;
#endif
}

/* Analytic DFT of the kernel e^{-kl t} sampled on the grid and truncated to j < M (zeros up to
 * N): H(k) = sum_{j<M} E^j w^{jk} = (1 - E^M w^{Mk}) / (1 - E w^k), the paper's closed form, for
 * k >= 1 with the twiddles c = w^k and m = w^{Mk mod N}; H(0) = h0 (fm_dce_eval_setup).
 * Truncating at M (instead of the full N samples) is what makes the zero-padded product a linear,
 * not circular, convolution for every output j < M. */
FM_HD static inline void fm_dce_kernel_dft(const fm_dce_eval *e, double cr, double ci, double mr,
                                           double mi, double *hr, double *hi)
{
    const double ar = 1.0 - FM_DMUL(e->e_m, mr), ai = -FM_DMUL(e->e_m, mi);
    const double br = 1.0 - FM_DMUL(e->e1, cr), bi = -FM_DMUL(e->e1, ci);
    const double inv = 1.0 / (FM_DMUL(br, br) + FM_DMUL(bi, bi));
    *hr = FM_DMUL(FM_DMUL(ar, br) + FM_DMUL(ai, bi), inv);
    *hi = FM_DMUL(FM_DMUL(ai, br) - FM_DMUL(ar, bi), inv);
}

/* Z = S H at k, and Z = S conj(H) at N - k (H is Hermitian: the kernel is real). */
FM_HD static inline void fm_dce_zmul(double sr, double si, double hr, double hi, double *zr,
                                     double *zi)
{
    *zr = FM_DMUL(sr, hr) - FM_DMUL(si, hi);
    *zi = FM_DMUL(sr, hi) + FM_DMUL(si, hr);
}

FM_HD static inline void fm_dce_zmul_conj(double tr, double ti, double hr, double hi, double *zr,
                                          double *zi)
{
    *zr = FM_DMUL(tr, hr) + FM_DMUL(ti, hi);
    *zi = FM_DMUL(ti, hr) - FM_DMUL(tr, hi);
}

/* H(k) for 1 <= k <= N/2 from the plan's twiddle table. */
FM_HD static inline void fm_dce_kernel_dft_at(const fm_dce_plan *p, const fm_dce_eval *e, int k,
                                              double *hr, double *hi)
{
    const int km = (p->n_grid * k) & (p->n_fft - 1); /* M k mod N: N is a power of two */
    fm_dce_kernel_dft(e, p->twiddle[2 * k], p->twiddle[2 * k + 1], p->twiddle[2 * km],
                      p->twiddle[2 * km + 1], hr, hi);
}

/* Fills the product spectrum Z = S H at k and, by Hermitian symmetry of H, S conj(H) at N - k,
 * both in bit-reversed order for the in-place inverse FFT. k runs over 0..N/2. */
FM_HD static inline void fm_dce_fill(const fm_dce_plan *p, const fm_dce_eval *e, int k, double *z)
{
    const int N = p->n_fft;
    double hr = e->h0, hi = 0.0;
    if (k > 0)
        fm_dce_kernel_dft_at(p, e, k, &hr, &hi);
    const int d = fm_dce_bitrev(k, p->log2_fft);
    fm_dce_zmul(p->spectrum[2 * k], p->spectrum[2 * k + 1], hr, hi, &z[2 * d], &z[2 * d + 1]);
    if (k > 0 && k < N / 2) {
        const int k2 = N - k, d2 = fm_dce_bitrev(k2, p->log2_fft);
        fm_dce_zmul_conj(p->spectrum[2 * k2], p->spectrum[2 * k2 + 1], hr, hi, &z[2 * d2],
                         &z[2 * d2 + 1]);
    }
}

/* Butterfly b (0..N/2-1) of the radix-2 decimation-in-time stage whose pairs are `half` apart,
 * on bit-reversed input. inverse: conjugate twiddles (no 1/N; the caller scales by a power of
 * two, which is exact). The CPU twin runs the butterflies of a stage in a loop, the GPU block one
 * per thread; each butterfly's arithmetic is the same. */
/* The butterfly's arithmetic on values in registers: (u, x) -> (u + w x, u - w x). Every FFT
 * layout (the CPU's stage loop, the GPU block's one butterfly per thread, the GPU warp's two
 * stages per pass) goes through this one expression, which is what keeps them bit-identical. */
FM_HD static inline void fm_dce_bfly(double *ur, double *ui, double *xr, double *xi, double wr,
                                     double wi)
{
    const double tr = FM_DMUL(wr, *xr) - FM_DMUL(wi, *xi);
    const double ti = FM_DMUL(wr, *xi) + FM_DMUL(wi, *xr);
    const double u_r = *ur, u_i = *ui;
    *xr = u_r - tr;
    *xi = u_i - ti;
    *ur = u_r + tr;
    *ui = u_i + ti;
}

/* The sum half of fm_dce_bfly alone, u + w x, with the same operations: the last inverse stage
 * needs only outputs j < N/2 (the model grid, M <= N/2), so the GPU skips the difference half. */
FM_HD static inline void fm_dce_bfly_sum(double ur, double ui, double xr, double xi, double wr,
                                         double wi, double *yr, double *yi)
{
    const double tr = FM_DMUL(wr, xr) - FM_DMUL(wi, xi);
    const double ti = FM_DMUL(wr, xi) + FM_DMUL(wi, xr);
    *yr = ur + tr;
    *yi = ui + ti;
}

FM_HD static inline void fm_dce_butterfly(double *z, const double *tw, int n, int half, int b,
                                          int inverse)
{
    const int pos = b & (half - 1);
    const int i = (b - pos) * 2 + pos, j = i + half;
    const int t = pos * (n / (2 * half));
    const double wr = tw[2 * t], wi = inverse ? -tw[2 * t + 1] : tw[2 * t + 1];
    double ur = z[2 * i], ui = z[2 * i + 1], xr = z[2 * j], xi = z[2 * j + 1];
    fm_dce_bfly(&ur, &ui, &xr, &xi, wr, wi);
    z[2 * i] = ur;
    z[2 * i + 1] = ui;
    z[2 * j] = xr;
    z[2 * j + 1] = xi;
}

/* Sequential forward or inverse FFT with the same butterflies (host: input spectra, tests). */
static inline void fm_dce_fft_serial(double *z, const double *tw, int n, int log2n, int inverse)
{
    for (int k = 0; k < n; k++) {
        int r = fm_dce_bitrev(k, log2n);
        if (r > k) {
            double a = z[2 * k], b = z[2 * k + 1];
            z[2 * k] = z[2 * r];
            z[2 * k + 1] = z[2 * r + 1];
            z[2 * r] = a;
            z[2 * r + 1] = b;
        }
    }
    for (int half = 1; half < n; half *= 2)
        for (int b = 0; b < n / 2; b++)
            fm_dce_butterfly(z, tw, n, half, b, inverse);
}

/* Model Cl at grid point j from the inverse-transformed product y (unscaled: re = N (Ca' * h),
 * im = N (Cp' * h), read as yr[j ys] and yi[j ys]: interleaved on the CPU, split on the GPU). By
 * linearity the delayed input ka Ca(t - tau_a) + kp Cp(t - tau_p), with Ca = ca0 + Ca' and linear
 * interpolation between grid points, convolves to shifted copies of Ca' * h plus the constant's
 * geometric sum, so the spectra never depend on the delays. Trapezoid rule:
 * Cl_j = dt (sum_{m<=j} u_m E^{j-m} - u_j / 2 - u_0 E^j / 2), with ej = E^j and geo = G_{j+1} =
 * sum_{m<=j} E^m from the caller (fm_dce_geo_pow). Delays >= 0 keep the shifted indices at or
 * below j, inside the linear part of the convolution. */
FM_HD static inline double fm_dce_grid_value(const fm_dce_plan *p, const fm_dce_eval *e,
                                             const double *yr, const double *yi, int ys, int j,
                                             double ej, double geo)
{
    const double inv_n = 1.0 / (double)p->n_fft; /* a power of two: scaling is exact */
    const int ja = j - e->sa, jp = j - e->sp;
    const double ya0 = ja >= 0 ? FM_DMUL(yr[ys * ja], inv_n) : 0.0;
    const double ya1 = ja >= 1 ? FM_DMUL(yr[ys * (ja - 1)], inv_n) : 0.0;
    const double yp0 = jp >= 0 ? FM_DMUL(yi[ys * jp], inv_n) : 0.0;
    const double yp1 = jp >= 1 ? FM_DMUL(yi[ys * (jp - 1)], inv_n) : 0.0;
    const double ca0 = ja >= 0 ? p->ca_grid[ja] : 0.0, ca1 = ja >= 1 ? p->ca_grid[ja - 1] : 0.0;
    const double cp0 = jp >= 0 ? p->cp_grid[jp] : 0.0, cp1 = jp >= 1 ? p->cp_grid[jp - 1] : 0.0;
    const double ra = FM_DMUL(1.0 - e->fa, ya0) + FM_DMUL(e->fa, ya1);
    const double rp = FM_DMUL(1.0 - e->fp, yp0) + FM_DMUL(e->fp, yp1);
    const double ua = p->ca0 + (FM_DMUL(1.0 - e->fa, ca0) + FM_DMUL(e->fa, ca1));
    const double up = p->cp0 + (FM_DMUL(1.0 - e->fp, cp0) + FM_DMUL(e->fp, cp1));
    const double r = FM_DMUL(e->u0, geo) + (FM_DMUL(e->ka, ra) + FM_DMUL(e->kp, rp));
    const double u = FM_DMUL(e->ka, ua) + FM_DMUL(e->kp, up);
    return FM_DMUL(p->dt_s, r - FM_DMUL(0.5, u) - FM_DMUL(0.5, FM_DMUL(e->u0, ej)));
}

/* Model at frame i: linear interpolation between grid points (exact grid hit when w = 0). One
 * powering gives E^j and G_j; grid point j + 1 follows with one product and one sum. */
FM_HD static inline double fm_dce_frame_value(const fm_dce_plan *p, const fm_dce_eval *e,
                                              const double *yr, const double *yi, int ys, int i)
{
    const int j = p->frame_j[i];
    const double w = p->frame_w[i];
    double ej, gj;
    fm_dce_geo_pow(e->e1, j, &ej, &gj);
    const double geo = gj + ej; /* G_{j+1} */
    const double c0 = fm_dce_grid_value(p, e, yr, yi, ys, j, ej, geo);
    if (w == 0.0)
        return c0;
    const double ej1 = FM_DMUL(ej, e->e1);
    const double c1 = fm_dce_grid_value(p, e, yr, yi, ys, j + 1, ej1, geo + ej1);
    return FM_DMUL(1.0 - w, c0) + FM_DMUL(w, c1);
}

/* Squared residual of frame i (the paper's eq. 3 term), 0 for the padding up to n_pad. */
FM_HD static inline double fm_dce_residual2(const fm_dce_plan *p, const fm_dce_eval *e,
                                            const double *yr, const double *yi, int ys,
                                            const double *tissue, int i)
{
    if (i >= p->n_times)
        return 0.0;
    const double r = fm_dce_frame_value(p, e, yr, yi, ys, i) - tissue[i];
    return FM_DMUL(r, r);
}

/* Nelder-Mead state machine (fm_nm_*): its own file, included here because it needs FM_DMUL. */
#include "dce_nm.h"

/* ---- per-voxel stopping tolerance ---- */

/* The paper's rule stops on max - min of the vertex costs < 1e-8, an absolute number in its own
 * (unstated) concentration units. The cost is a sum of squares of the curve, so it scales with
 * the square of the units: for curves in mM (liver peaks ~0.35) 1e-8 stops ka 20 % short of the
 * optimum on noise-free data, and for curves in uM it would never stop. RELATIVE scales the
 * tolerance by the voxel's data energy sum(Cl^2) / n_times, which makes the rule unit-free;
 * ABSOLUTE is the paper's rule as written. Sequential sum: the same bits on both backends. */
FM_HD static inline double fm_dce_voxel_tolerance(int mode, double tolerance, const double *tissue,
                                                  int n)
{
    if (mode == FM_DCE_TOL_ABSOLUTE)
        return tolerance;
    double e = 0;
    for (int i = 0; i < n; i++)
        e += FM_DMUL(tissue[i], tissue[i]);
    e /= n;
    return e > 0 ? FM_DMUL(tolerance, e) : tolerance; /* an all-zero curve: absolute */
}

/* ---- per-voxel outputs ---- */

/* Mean and total sum of squares of a tissue curve, sequential so both backends agree. */
FM_HD static inline double fm_dce_sstot(const double *tissue, int n)
{
    double mean = 0, ss = 0;
    for (int i = 0; i < n; i++)
        mean += tissue[i];
    mean /= n;
    for (int i = 0; i < n; i++) {
        const double d = tissue[i] - mean;
        ss += FM_DMUL(d, d);
    }
    return ss;
}

/* A parameter of the record: the best vertex's coordinate clamped into its bounds [lo, hi]. */
FM_HD static inline double fm_dce_record_param(double v, double lo, double hi)
{
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

/* RMSE, R^2, iterations and the converged flag of the record from the best cost f_best. */
FM_HD static inline void fm_dce_record_fit(const fm_dce_plan *p, double f_best, int iterations,
                                           int converged, const double *tissue, double *rec)
{
    const double ss = fm_dce_sstot(tissue, p->n_times);
    rec[FM_DCE_OUT_RMSE] = sqrt(f_best / p->n_times);
    rec[FM_DCE_OUT_R2] = ss > 0 ? 1.0 - f_best / ss : NAN;
    rec[FM_DCE_OUT_ITERATIONS] = iterations;
    rec[FM_DCE_OUT_CONVERGED] = converged;
}

/* Writes the voxel's record (FM_DCE_OUT_COUNT values): clamped best vertex, RMSE, R^2,
 * iterations and the converged flag. */
FM_HD static inline void fm_dce_record(const fm_dce_plan *p, const fm_nm_state *s,
                                       const double *tissue, double *rec)
{
    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        rec[i] = fm_dce_record_param(s->v[0][i], p->lower[i], p->upper[i]);
    fm_dce_record_fit(p, s->fv[0], s->iterations, s->converged, tissue, rec);
}

/* A voxel whose curve holds NaN or inf is not fitted: NaN maps, 0 iterations, not converged. */
FM_HD static inline int fm_dce_curve_finite(const double *tissue, int n)
{
    for (int i = 0; i < n; i++)
        if (!(fabs(tissue[i]) <= 1.7976931348623157e308))
            return 0;
    return 1;
}

FM_HD static inline void fm_dce_record_invalid(double *rec)
{
    for (int o = 0; o < FM_DCE_OUT_ITERATIONS; o++)
        rec[o] = NAN;
    rec[FM_DCE_OUT_ITERATIONS] = 0;
    rec[FM_DCE_OUT_CONVERGED] = 0;
}

/* The data-driven start (fm_dce_start_*): its own file; it needs the plan, FM_DMUL and
 * fm_dce_record_param. */
#include "dce_start.h"
