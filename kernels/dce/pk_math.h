/* Per-voxel math of the pharmacokinetic models, shared by the CPU twin and the CUDA kernel: the
 * exact convolution of a piecewise-linear input with exp(-k t), the delayed input, and each
 * model's tissue curve as a sum of such convolutions. Internal units: seconds, 1/s. */
#pragma once

#include <math.h>

#include "../fm_kernel.h"
#include "pk.h"

#define FM_PK_MAX_FIT 5 /* 2CXM's four parameters and the delay */

/* Loops over the fitted parameters run to FM_PK_MAX_FIT and stop at n_fit: unrolled on the GPU,
 * so that their arrays are registers, not local memory; the same operations either way. */
#ifdef __CUDA_ARCH__
#define FM_PK_UNROLL _Pragma("unroll")
#else
#define FM_PK_UNROLL
#endif
#define FM_PK_MAX_SETS (FM_PK_MAX_FIT + 1)

/* A model's tissue curve is C(t) = direct cp(t - delay) + sum_j a[j] (exp(-k[j] t) * cp)(t -
 * delay): every model of pk.h has this form with at most two exponentials (k = 0 is the integral).
 */
typedef struct {
    double direct, a[2], k[2], delay_s;
} fm_pk_coefs;

/* Weights of one step of the recursive convolution. With x = k dt, E = exp(-x), the input linear
 * from c0 at t_i to c1 at t_i + dt, f(t) = int_t0^t exp(-k (t - u)) c(u) du obeys exactly
 *   f(t_i + dt) = E f(t_i) + dt (g0(x) c0 + g1(x) c1),
 *   g0 = (1 - (1 + x) E) / x^2,  g1 = (x - 1 + E) / x^2
 * (integrate exp(-k (t - u)) times the linear segment; Flouri, Lesnic & Sourbron, MRM 76 (2016)
 * 998, use this recursion for piecewise-linear inputs: linear in the frame count, exact on any,
 * also non-uniform, frame times). Below x = 0.05 both g cancel badly: their Taylor series to x^6
 * (error < x^7 / 9! relative). k = 0 gives the trapezoid, the exact integral. */
typedef struct {
    double dt, e[2], w0[2], w1[2];
} fm_pk_weights;

FM_HD static inline void fm_pk_step_weights(double k, double dt, double *e, double *w0, double *w1)
{
    const double x = k * dt;
    double g0, g1;
    if (fabs(x) < 0.05) {
        g1 = 1.0 / 2 +
             x * (-1.0 / 6 +
                  x * (1.0 / 24 +
                       x * (-1.0 / 120 + x * (1.0 / 720 + x * (-1.0 / 5040 + x * (1.0 / 40320))))));
        g0 = 1.0 / 2 +
             x * (-1.0 / 3 +
                  x * (1.0 / 8 +
                       x * (-1.0 / 30 + x * (1.0 / 144 + x * (-1.0 / 840 + x * (1.0 / 5760))))));
        *e = exp(-x);
    } else {
        const double em1 = expm1(-x); /* E - 1 */
        *e = em1 + 1;
        g1 = (x + em1) / (x * x);
        g0 = (-em1 - x * (*e)) / (x * x);
    }
    *w0 = dt * g0;
    *w1 = dt * g1;
}

/* One frame step of the running first and second integrals of a sampled curve taken as linear
 * between frames (f0 at the start of the step, f1 at its end, dt long): exact for such a curve,
 * the first integral is the trapezoid. */
FM_HD static inline void fm_pk_integrate_step(double dt, double f0, double f1, double *i1,
                                              double *i2)
{
    *i2 += dt * (*i1 + dt * (2 * f0 + f1) / 6);
    *i1 += 0.5 * dt * (f0 + f1);
}

/* The input at time u by linear interpolation of the frames, held at the first and last frame
 * outside them. *seg walks forward: the queries of one curve must not decrease. */
FM_HD static inline double fm_pk_input_at(const double *times, const double *cp, int n, double u,
                                          int *seg)
{
    if (u <= times[0])
        return cp[0];
    if (u >= times[n - 1])
        return cp[n - 1];
    int s = *seg;
    while (s < n - 2 && times[s + 1] <= u)
        s++;
    *seg = s;
    const double w = (u - times[s]) / (times[s + 1] - times[s]);
    return cp[s] + w * (cp[s + 1] - cp[s]);
}

/* One curve being evaluated frame by frame: the delayed input of the previous frame and the two
 * convolutions, with the step weights of the last frame interval (kept while frames are
 * uniform: one exp per exponential for the whole curve). */
typedef struct {
    fm_pk_coefs c;
    fm_pk_weights w;
    double prev_cp, f[2];
    int seg;
} fm_pk_stream;

FM_HD static inline void fm_pk_stream_begin(fm_pk_stream *s, const fm_pk_coefs *c)
{
    s->c = *c;
    s->w.dt = -1;
    s->prev_cp = 0;
    s->f[0] = s->f[1] = 0;
    s->seg = 0;
}

/* The curve's value at frame i (frames are fed in order 0, 1, ...) from its delayed input cpd at
 * that frame (fm_pk_stream_next, or a curve of the same delay). The delayed input is sampled at
 * the frame times and taken as linear between them, the same input the start tables use. */
FM_HD static inline double fm_pk_stream_step(fm_pk_stream *s, const double *times, double cpd,
                                             int i)
{
    if (i > 0) {
        const double dt = times[i] - times[i - 1];
        if (dt != s->w.dt) {
            s->w.dt = dt;
            for (int j = 0; j < 2; j++)
                fm_pk_step_weights(s->c.k[j], dt, &s->w.e[j], &s->w.w0[j], &s->w.w1[j]);
        }
        for (int j = 0; j < 2; j++)
            s->f[j] = s->w.e[j] * s->f[j] + s->w.w0[j] * s->prev_cp + s->w.w1[j] * cpd;
    }
    s->prev_cp = cpd;
    return s->c.direct * cpd + s->c.a[0] * s->f[0] + s->c.a[1] * s->f[1];
}

FM_HD static inline double fm_pk_stream_next(fm_pk_stream *s, const double *times, const double *cp,
                                             int n, int i)
{
    return fm_pk_stream_step(s, times,
                             fm_pk_input_at(times, cp, n, times[i] - s->c.delay_s, &s->seg), i);
}

/* Floors that keep the models' rates finite at the bounds (ve = 0, vp = 0, Fp = PS = 0): far
 * below any measurable value. */
#define FM_PK_VOLUME_FLOOR 1e-6
#define FM_PK_FLOW_FLOOR 1e-9 /* 1/s */

/* theta (FM_PK_N_PARAMS, user units: 1/min, ml/100ml/min, fractions, s) -> coefficients in 1/s.
 *  Tofts (Tofts et al., JMRI 10 (1999) 223, eq. 1): C = Ktrans exp(-kep t) * cp, kep = Ktrans/ve.
 *  Extended Tofts (ibid., eq. 2): + vp cp.
 *  Patlak (Patlak et al., J Cereb Blood Flow Metab 3 (1983) 1): C = vp cp + Ktrans int cp.
 *  2CXM (Sourbron & Buckley, Phys Med Biol 57 (2012) R1, section 4.3): with Kb = Fp/vp,
 *   Kp = (Fp + PS)/vp, Ke = PS/ve, the impulse response is Fp (Ap exp(-sp t) + An exp(-sn t)),
 *   sp,n = (Kp + Ke +- sqrt((Kp + Ke)^2 - 4 Kb Ke)) / 2, Ap = (sp - s)/(sp - sn), An = 1 - Ap,
 *   s = Ke + PS/vp (their eigenvalue form, written so that PS = 0 and sn = 0 stay finite).
 *  2CUM (ibid., section 4.2): the 2CXM with Ke = 0: sp = Kp, sn = 0. */
FM_HD static inline void fm_pk_coefs_of(fm_pk_model model, const double *theta, fm_pk_coefs *c)
{
    c->direct = 0;
    c->a[0] = c->a[1] = 0;
    c->k[0] = c->k[1] = 0;
    c->delay_s = theta[FM_PK_DELAY];
    const double ktrans = theta[FM_PK_KTRANS] / 60;
    switch (model) {
    case FM_PK_EXTENDED_TOFTS:
        c->direct = theta[FM_PK_VP];
        /* fall through */
    case FM_PK_TOFTS:
        c->a[0] = ktrans;
        c->k[0] = ktrans / fmax(theta[FM_PK_VE], FM_PK_VOLUME_FLOOR);
        break;
    case FM_PK_PATLAK:
        c->direct = theta[FM_PK_VP];
        c->a[0] = ktrans;
        break;
    case FM_PK_2CXM:
    case FM_PK_2CUM: {
        const double fp = fmax(theta[FM_PK_FP] / 6000, FM_PK_FLOW_FLOOR);
        const double ps = fmax(theta[FM_PK_PS] / 60, 0.0);
        const double vp = fmax(theta[FM_PK_VP], FM_PK_VOLUME_FLOOR);
        const double ke = model == FM_PK_2CXM ? ps / fmax(theta[FM_PK_VE], FM_PK_VOLUME_FLOOR) : 0;
        const double kb = fp / vp, s = ke + ps / vp, sum = kb + s;
        const double sp = 0.5 * (sum + sqrt(fmax(sum * sum - 4 * kb * ke, 0.0)));
        const double sn = kb * ke / sp; /* the product of the roots: no cancellation */
        c->k[0] = sp;
        c->k[1] = sn;
        c->a[0] = fp * (sp - s) / (sp - sn);
        c->a[1] = fp * (s - sn) / (sp - sn);
        break;
    }
    default:
        break;
    }
}

/* The model's curve at the n frame times (host and device: tests, tables, overlays). */
FM_HD static inline void fm_pk_curve(const fm_pk_coefs *c, const double *times, const double *cp,
                                     int n, double *curve)
{
    fm_pk_stream s;
    fm_pk_stream_begin(&s, c);
    for (int i = 0; i < n; i++)
        curve[i] = fm_pk_stream_next(&s, times, cp, n, i);
}
