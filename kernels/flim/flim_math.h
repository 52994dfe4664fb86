/* Per-pixel math of the noniterative FLIM estimators, shared by the CPU twin and CUDA. */
#pragma once

#include <math.h>

#include "../fm_kernel.h"
#include "flim.h"

/* Conventions (every estimator here; no IRF, as the paper's noniterative methods assume):
 * the fit range [fit_start, fit_end) holds n bins of width dt; bin i (0-based inside the range)
 * is represented by its centre t_i = (i + 0.5) dt, t measured from the start of the range.
 * A mono-exponential decay then gives counts y_i = A exp(-t_i / tau) exactly, whether the
 * photons were integrated over each bin or not (integration only rescales A), so every
 * estimator below is exact on noise-free binned exponentials up to the stated method error.
 * AMPLITUDE is that A: the model at t = 0 in counts per bin.
 * Sums are in double: 256 bins of up to ~1e5 counts lose nothing, and the CPU and GPU then
 * agree to ~1e-12 relative except where a method is ill-conditioned. */

/* Largest fit range whose per-bin tables fit in CUDA constant memory (2 x 8 B x 2048 = 32 KB). */
#define FM_FLIM_CONST_BINS 2048

/* What one pixel's estimate needs besides its counts; built once per run (fm_flim_consts_init). */
typedef struct {
    int method;              /* fm_flim_method, direct ones only */
    int n;                   /* bins in the fit range */
    double dt;               /* bin width, ns */
    double omega;            /* harmonic angular frequency n * 2 pi / period, rad/ns */
    double cal_cos, cal_sin; /* calibration rotation times modulation factor */
    double x_d;              /* BCMM1: 1 / expm1(dt / tauD), see fm_flim_bcmm */
    double min_photons;
} fm_flim_consts;

/* Per-bin phasor weights cos(omega t_i), sin(omega t_i). */
typedef struct {
    double c, s;
} fm_flim_trig;

/* Simpson-rule coefficients of the cumulative integral, in units of dt (IEM):
 * [0..2] even k: S_k = S_{k-2} + (y_{k-2} + 4 y_{k-1} + y_k) / 3 (composite Simpson);
 * [3..5] odd k >= 3: S_k = S_{k-1} + (-y_{k-2} + 8 y_{k-1} + 5 y_k) / 12 (the last interval of
 *        the parabola through the last three samples, same O(dt^4) order as Simpson);
 * [6..8] k = 1: S_1 = (5 y_0 + 8 y_1 - y_2) / 12 (first interval of the first parabola). */
#define FM_FLIM_SIMPSON_INIT                                                                       \
    {                                                                                              \
        1.0 / 3.0, 4.0 / 3.0, 1.0 / 3.0, -1.0 / 12.0, 8.0 / 12.0, 5.0 / 12.0, 5.0 / 12.0,          \
            8.0 / 12.0, -1.0 / 12.0                                                                \
    }

/* Output slots the per-pixel functions fill (a subset of fm_flim_output, in that order). */
enum {
    FM_FLIM_V_TAU = 0,
    FM_FLIM_V_TAU_FAST,
    FM_FLIM_V_TAU_SLOW,
    FM_FLIM_V_FRACTION,
    FM_FLIM_V_AMPLITUDE,
    FM_FLIM_V_INTENSITY,
    FM_FLIM_V_TAU_AVG_AMP,
    FM_FLIM_V_TAU_AVG_INT,
    FM_FLIM_V_PHASOR_G,
    FM_FLIM_V_PHASOR_S,
    FM_FLIM_V_TAU_PHASE,
    FM_FLIM_V_TAU_MOD,
    FM_FLIM_V_COUNT,
};

/* fm_flim_output index of each slot (maps the method does not define stay NaN). */
#define FM_FLIM_V_TO_OUT_INIT                                                                      \
    {                                                                                              \
        FM_FLIM_OUT_TAU, FM_FLIM_OUT_TAU_FAST, FM_FLIM_OUT_TAU_SLOW, FM_FLIM_OUT_FRACTION,         \
            FM_FLIM_OUT_AMPLITUDE, FM_FLIM_OUT_INTENSITY, FM_FLIM_OUT_TAU_AVG_AMP,                 \
            FM_FLIM_OUT_TAU_AVG_INT, FM_FLIM_OUT_PHASOR_G, FM_FLIM_OUT_PHASOR_S,                   \
            FM_FLIM_OUT_TAU_PHASE, FM_FLIM_OUT_TAU_MOD                                             \
    }

/* A from a partial sum: sum_{i<m} A exp(-t_i/tau) = A exp(-dt/2tau) (1 - r^m) / (1 - r),
 * r = exp(-dt/tau); expm1 keeps it exact for dt << tau. */
FM_HD static inline double fm_flim_amp_from_sum(double sum, int m, double dt, double tau)
{
    const double x = dt / tau;
    return sum * exp(0.5 * x) * expm1(-x) / expm1(-(double)m * x);
}

/* Mono-exponential fill of the slots every mono method shares. */
FM_HD static inline void fm_flim_mono_out(double tau, double amp, float *v)
{
    v[FM_FLIM_V_TAU] = (float)tau;
    v[FM_FLIM_V_AMPLITUDE] = (float)amp;
    v[FM_FLIM_V_TAU_AVG_AMP] = (float)tau;
    v[FM_FLIM_V_TAU_AVG_INT] = (float)tau;
}

/* IEM (the paper's integral equation method, after Fu and Li): for y(t) = A exp(-t/tau),
 * integral_{t_0}^{t_k} y = tau (y(t_0) - y(t_k)), so y_k = c - S_k / tau with S_k the cumulative
 * Simpson integral. tau is the slope of an ordinary least-squares line of y_k on S_k with free
 * intercept c = y(t_0). The regressor is S_k (smooth, its noise averages over many bins), not
 * y_k: regressing the other way attenuates the slope by the Poisson noise of single bins.
 * Method error: Simpson's O((dt/tau)^4), ~1e-5 relative at dt/tau = 0.2. */
FM_HD static inline void fm_flim_iem(const fm_flim_consts *k, const float *y, size_t stride,
                                     const double *simpson, double total, float *v)
{
    double y0 = y[0], y1 = 0, y2 = 0; /* y_{k-2}, y_{k-1}, y_k */
    double s_even = 0, s = 0;         /* S_{k-1} of the last even k, and S_k */
    double ss = 0, ssq = 0, sy = 0;   /* sum S, sum S^2, sum S y (k = 0 adds nothing but y0) */
    const double dt = k->dt;
    if (k->n >= 2)
        y1 = y[stride];
    if (k->n >= 3) {
        /* k = 1 looks one sample ahead, so it is done once y_2 is known. */
        y2 = y[2 * stride];
        s = dt * (simpson[6] * y0 + simpson[7] * y1 + simpson[8] * y2);
        ss += s;
        ssq += s * s;
        sy += s * y1;
    }
    double a = y0, b = y1; /* y_{k-2}, y_{k-1} for k = 2 */
    for (int i = 2; i < k->n; i++) {
        const double c = y[(size_t)i * stride];
        if ((i & 1) == 0) {
            s_even += dt * (simpson[0] * a + simpson[1] * b + simpson[2] * c);
            s = s_even;
        } else {
            s = s_even + dt * (simpson[3] * a + simpson[4] * b + simpson[5] * c);
        }
        ss += s;
        ssq += s * s;
        sy += s * c;
        a = b;
        b = c;
    }
    const double n = k->n;
    const double sxx = ssq - ss * ss / n, sxy = sy - ss * total / n;
    const double slope = sxy / sxx; /* -1 / tau */
    if (!(slope < 0.0) || !isfinite(slope))
        return;
    const double tau = -1.0 / slope;
    const double intercept = (total - slope * ss) / n; /* y(t_0), t_0 = dt / 2 */
    fm_flim_mono_out(tau, intercept * exp(0.5 * dt / tau), v);
}

/* CMM: the centre of mass m = sum t_i y_i / sum y_i of y_i = A exp(-t_i/tau), i < n, is exactly
 *   m(tau) = dt/2 + dt / expm1(dt/tau) - T / expm1(T/tau),   T = n dt
 * (geometric sums; as dt -> 0 the first two terms become tau, the continuous finite-window
 * correction m = tau - T / (e^{T/tau} - 1)). m rises monotonically from dt/2 to T/2 and is
 * concave in tau, so Newton from tau = m (below the root) climbs to it without overshoot. */
FM_HD static inline double fm_flim_h(double a, double tau) /* a / expm1(a / tau) */
{
    return a / expm1(a / tau);
}

FM_HD static inline double fm_flim_dh(double a, double tau) /* d/dtau of fm_flim_h */
{
    const double x = a / tau;
    if (x > 700.0)
        return 0.0;
    return x * x / (expm1(x) * -expm1(-x));
}

FM_HD static inline double fm_flim_cmm_tau(double m, int n, double dt)
{
    const double T = n * dt;
    if (!(m > 0.5 * dt) || !(m < 0.5 * T * (1.0 - 1e-9)))
        return NAN;
    double tau = m;
    for (int it = 0; it < 60; it++) {
        const double f = 0.5 * dt + fm_flim_h(dt, tau) - fm_flim_h(T, tau) - m;
        const double d = fm_flim_dh(dt, tau) - fm_flim_dh(T, tau);
        if (!(d > 0.0))
            break;
        const double step = -f / d;
        tau += step;
        if (!(fabs(step) > 1e-13 * tau))
            break;
    }
    return tau > 0.0 && isfinite(tau) ? tau : NAN;
}

FM_HD static inline void fm_flim_cmm(const fm_flim_consts *k, const float *y, size_t stride,
                                     float *v)
{
    double s0 = 0, s1 = 0;
    for (int i = 0; i < k->n; i++) {
        const double c = y[(size_t)i * stride];
        s0 += c;
        s1 += (i + 0.5) * c;
    }
    const double tau = fm_flim_cmm_tau(s1 / s0 * k->dt, k->n, k->dt);
    if (isnan(tau))
        return;
    fm_flim_mono_out(tau, fm_flim_amp_from_sum(s0, k->n, k->dt, tau), v);
}

/* RLD, two equal adjacent gates of h = n/2 bins (an odd last bin is left out):
 * D0/D1 = exp(h dt / tau) exactly for binned exponentials, so tau = h dt / ln(D0 / D1)
 * (Ballew and Demas 1989, as used in the paper). NaN when D1 = 0 or D1 >= D0. */
FM_HD static inline void fm_flim_rld(const fm_flim_consts *k, const float *y, size_t stride,
                                     float *v)
{
    const int h = k->n / 2;
    double d0 = 0, d1 = 0;
    for (int i = 0; i < h; i++)
        d0 += y[(size_t)i * stride];
    for (int i = h; i < 2 * h; i++)
        d1 += y[(size_t)i * stride];
    if (!(d1 > 0.0) || !(d1 < d0))
        return;
    const double tau = h * k->dt / log(d0 / d1);
    fm_flim_mono_out(tau, fm_flim_amp_from_sum(d0, h, k->dt, tau), v);
}

/* Phasor at harmonic n: g = sum y cos(w t_i) / sum y, s = sum y sin(w t_i) / sum y,
 * w = n 2 pi / period; the calibration rotates (g, s) by cal_phase and scales it by
 * cal_modulation (Digman et al. 2008). For a continuous decay tau_phase = s / (g w) and
 * tau_mod = sqrt(1 / (g^2 + s^2) - 1) / w. Histogrammed data are sampled at bin centres, and for
 * a periodic exponential y_i ~ r^i (r = e^{-dt/tau}, theta = w dt) the phasor is exactly
 *   z = g + i s = e^{i theta/2} (1 - r) / (1 - r e^{i theta})        (geometric series),
 * off the continuous relations by O(w dt^2 / tau) (3e-3 in tau at 0.5 ns, 256 x 0.1 ns bins).
 * So both lifetimes invert this exact relation instead, which reduces to the formulas above as
 * dt -> 0: the phase arg z - theta/2 = atan(r sin theta / (1 - r cos theta)) gives
 *   r = t / (sin theta + t cos theta),  t = tan(arg z - theta/2);
 * the modulation m = |z| gives m^2 (1 - 2 r cos theta + r^2) = (1 - r)^2, whose roots are r and
 * 1/r: r = 2 / (B + sqrt(B^2 - 4)), B = 2 (1 - m^2 cos theta) / (1 - m^2). tau = -dt / ln r.
 * TAU = tau_phase. */
FM_HD static inline void fm_flim_phasor(const fm_flim_consts *k, const float *y, size_t stride,
                                        const fm_flim_trig *trig, double total, float *v)
{
    double sc = 0, ss = 0;
    for (int i = 0; i < k->n; i++) {
        const double c = y[(size_t)i * stride];
        sc += c * trig[i].c;
        ss += c * trig[i].s;
    }
    const double g0 = sc / total, s0 = ss / total;
    const double g = g0 * k->cal_cos - s0 * k->cal_sin, s = g0 * k->cal_sin + s0 * k->cal_cos;
    v[FM_FLIM_V_PHASOR_G] = (float)g;
    v[FM_FLIM_V_PHASOR_S] = (float)s;
    const double theta = k->omega * k->dt, ct = cos(theta), st = sin(theta);
    const double psi = atan2(s, g) - 0.5 * theta;
    if (psi > 0.0 && psi < 0.5 * M_PI) {
        const double t = tan(psi), r = t / (st + t * ct);
        if (r > 0.0 && r < 1.0) {
            v[FM_FLIM_V_TAU] = (float)(-k->dt / log(r));
            v[FM_FLIM_V_TAU_PHASE] = v[FM_FLIM_V_TAU];
        }
    }
    const double m2 = g * g + s * s;
    if (m2 > 0.0 && m2 < 1.0) {
        const double B = 2.0 * (1.0 - m2 * ct) / (1.0 - m2);
        if (B > 2.0) {
            const double r = 2.0 / (B + sqrt((B - 2.0) * (B + 2.0)));
            v[FM_FLIM_V_TAU_MOD] = (float)(-k->dt / log(r));
        }
    }
}

/* BCMM, bi-exponential centre of mass (Li, Yu, Chen, Opt. Lett. 40(3) 336, 2015): lifetimes and
 * fraction from the decay's amplitude (first bin) and its low moments, no iteration over data.
 * Derivation for the binned model used here: component j gives y_i = V_j r_j^i (V_j its count in
 * bin 0, r_j = exp(-dt/tau_j)). With x_j = r_j / (1 - r_j) = 1 / expm1(dt/tau_j), the complete
 * (infinite-window) factorial moments are geometric-series identities:
 *   G0 = sum y_i = sum_j V_j (1 + x_j),  G1 = sum i y_i = sum_j V_j x_j (1 + x_j),
 *   G2 = sum C(i,2) y_i = sum_j V_j x_j^2 (1 + x_j),
 * so with P0 = y_0, P1 = G0 - P0, P2 = G1 - P1, P3 = G2 - P2 one gets the power sums
 *   P_k = sum_j V_j x_j^k        (k = 0..3).
 * (As dt -> 0, x_j -> tau_j / dt: P1 = M0/dt, P2 ~ M1/dt^2, P3 ~ M2/(2 dt^3) with M the
 * continuous moments, i.e. the paper's equations: integral = A (fD tauD + (1-fD) tauF), first
 * moment = A (fD tauD^2 + (1-fD) tauF^2), second = 2 A (fD tauD^3 + (1-fD) tauF^3).)
 * BCMM1 (x_D known): Q_k = P_{k+1} - x_D P_k = V_F x_F^k (x_F - x_D), so x_F = Q1 / Q0, using
 *   y_0, the photon count and the first moment.
 * BCMM2: x_D, x_F are the roots of x^2 = p x + q with P2 = p P1 + q P0, P3 = p P2 + q P1
 *   (two-point Prony), using also the second moment.
 * Finite window T = n dt: the measured sums stop at i = n. The missing tails follow from the
 * current estimate, sum_{i>=n} C(i,k) V r^i = V r^n (1+x) sum_{j<=k} C(n,k-j) x^j, and are added
 * back before solving again (fixed point; it contracts by about the tail fraction r_D^n, so a
 * few passes suffice while the slow decay is mostly inside the window).
 * Amplitudes: A w_j = V_j exp(dt / 2 tau_j) (model at t = 0), fD = A w_D / A. */
FM_HD static inline double fm_flim_tail(double v, double x, int n, int order)
{
    const double rn = exp(-(double)n * log1p(1.0 / x)), base = v * rn * (1.0 + x);
    const double nn = n;
    if (order == 0)
        return base;
    if (order == 1)
        return base * (nn + x);
    return base * (0.5 * nn * (nn - 1.0) + nn * x + x * x);
}

FM_HD static inline void fm_flim_bcmm(const fm_flim_consts *k, const float *y, size_t stride,
                                      float *v)
{
    double f0 = 0, f1 = 0, f2 = 0;
    for (int i = 0; i < k->n; i++) {
        const double c = y[(size_t)i * stride], di = i;
        f0 += c;
        f1 += di * c;
        f2 += 0.5 * di * (di - 1.0) * c;
    }
    const double p0 = y[0];
    double t0 = 0, t1 = 0, t2 = 0; /* tails added to f0, f1, f2 */
    double xd = 0, xf = 0, vd = 0, vf = 0;
    const int known = k->method == FM_FLIM_BCMM1;
    for (int pass = 0; pass < 40; pass++) {
        const double p1 = f0 + t0 - p0, p2 = f1 + t1 - p1, p3 = f2 + t2 - p2;
        if (known) {
            xd = k->x_d;
            const double q0 = p1 - xd * p0, q1 = p2 - xd * p1;
            xf = q1 / q0;
            vf = q0 / (xf - xd);
            vd = p0 - vf;
        } else {
            const double det = p1 * p1 - p0 * p2;
            const double pp = (p1 * p2 - p0 * p3) / det, qq = (p1 * p3 - p2 * p2) / det;
            const double disc = pp * pp + 4.0 * qq;
            if (!(disc > 0.0))
                return;
            /* Roots without cancellation: the larger by the formula, the other from the
             * product -q. */
            const double big = 0.5 * (pp + (pp >= 0 ? 1.0 : -1.0) * sqrt(disc));
            const double other = -qq / big;
            xd = big > other ? big : other;
            xf = big > other ? other : big;
            vd = (p1 - xf * p0) / (xd - xf);
            vf = p0 - vd;
        }
        if (!(xf > 0.0) || !(xd > xf) || !(vd >= 0.0) || !(vf > 0.0) || !isfinite(xd))
            return;
        const double n0 = fm_flim_tail(vd, xd, k->n, 0) + fm_flim_tail(vf, xf, k->n, 0);
        const double n1 = fm_flim_tail(vd, xd, k->n, 1) + fm_flim_tail(vf, xf, k->n, 1);
        const double n2 = fm_flim_tail(vd, xd, k->n, 2) + fm_flim_tail(vf, xf, k->n, 2);
        const int done = fabs(n2 - t2) <= 1e-13 * (f2 + n2) && fabs(n0 - t0) <= 1e-13 * f0;
        t0 = n0;
        t1 = n1;
        t2 = n2;
        if (done)
            break;
    }
    const double tau_d = k->dt / log1p(1.0 / xd), tau_f = k->dt / log1p(1.0 / xf);
    const double ad = vd * exp(0.5 * k->dt / tau_d), af = vf * exp(0.5 * k->dt / tau_f);
    const double amp = ad + af, fd = ad / amp;
    const double mean = fd * tau_d + (1.0 - fd) * tau_f;
    if (!isfinite(mean) || !(amp > 0.0))
        return;
    v[FM_FLIM_V_TAU] = (float)mean;
    v[FM_FLIM_V_TAU_FAST] = (float)tau_f;
    v[FM_FLIM_V_TAU_SLOW] = (float)tau_d;
    v[FM_FLIM_V_FRACTION] = (float)fd;
    v[FM_FLIM_V_AMPLITUDE] = (float)amp;
    v[FM_FLIM_V_TAU_AVG_AMP] = (float)mean;
    v[FM_FLIM_V_TAU_AVG_INT] = (float)((fd * tau_d * tau_d + (1.0 - fd) * tau_f * tau_f) / mean);
}

/* One pixel of any direct method: v[FM_FLIM_V_COUNT] comes back filled, NaN where undefined.
 * y points at the pixel's first fit bin, later bins stride floats apart. valid = 0 skips it
 * (mask). Returns 1 when the pixel has no lifetime (TAU NaN), 0 otherwise. */
FM_HD static inline int fm_flim_direct_pixel(const fm_flim_consts *k, const float *y, size_t stride,
                                             int valid, const double *simpson,
                                             const fm_flim_trig *trig, float *v)
{
    for (int j = 0; j < FM_FLIM_V_COUNT; j++)
        v[j] = NAN;
    if (!valid)
        return 1;
    double total = 0;
    for (int i = 0; i < k->n; i++)
        total += y[(size_t)i * stride];
    if (!(total > 0.0) || total < k->min_photons)
        return 1;
    v[FM_FLIM_V_INTENSITY] = (float)total;
    switch (k->method) {
    case FM_FLIM_IEM:
        fm_flim_iem(k, y, stride, simpson, total, v);
        break;
    case FM_FLIM_CMM:
        fm_flim_cmm(k, y, stride, v);
        break;
    case FM_FLIM_RLD:
        fm_flim_rld(k, y, stride, v);
        break;
    case FM_FLIM_PHASOR:
        fm_flim_phasor(k, y, stride, trig, total, v);
        break;
    case FM_FLIM_BCMM1:
    case FM_FLIM_BCMM2:
        fm_flim_bcmm(k, y, stride, v);
        break;
    default:
        break;
    }
    return isnan(v[FM_FLIM_V_TAU]);
}

/* Run constants from params (host only; flim.c validated them). trig gets n entries. */
static inline void fm_flim_consts_init(fm_flim_consts *k, fm_flim_method method,
                                       const fm_flim_params *p)
{
    const double period = p->period_ns > 0 ? p->period_ns : p->n_bins * p->bin_width_ns;
    k->method = (int)method;
    k->n = p->fit_end - p->fit_start;
    k->dt = p->bin_width_ns;
    k->omega = p->harmonic * 2.0 * M_PI / period;
    k->cal_cos = p->cal_modulation * cos(p->cal_phase_rad);
    k->cal_sin = p->cal_modulation * sin(p->cal_phase_rad);
    k->x_d = p->tau_d_ns > 0 ? 1.0 / expm1(p->bin_width_ns / p->tau_d_ns) : NAN;
    k->min_photons = p->min_photons;
}

static inline void fm_flim_trig_init(const fm_flim_consts *k, fm_flim_trig *trig)
{
    for (int i = 0; i < k->n; i++) {
        const double phase = k->omega * (i + 0.5) * k->dt;
        trig[i].c = cos(phase);
        trig[i].s = sin(phase);
    }
}
