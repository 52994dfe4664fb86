/* Deterministic arithmetic of the FLIM fits: products that never fuse into FMAs, and exp and log
 * written out, so that the CPU twin and the CUDA kernels round every operation alike. */
#pragma once

#include <math.h>

#include "../fm_kernel.h"

/* Bit-identical results on both backends need the same roundings (as in kernels/dce/dce_math.h):
 * nvcc contracts a * b + c into one FMA, even across statements, while gcc for x86-64 has no
 * FMA in the baseline ISA. So every product whose result feeds a sum is written FM_FIT_MUL,
 * which is __dmul_rn on the device (never contracted). Division and sqrt are correctly rounded
 * on both; exp and log below replace libm/libdevice, whose last bits differ. */
#ifdef __CUDA_ARCH__
#define FM_FIT_MUL(a, b) __dmul_rn((a), (b))
#else
#define FM_FIT_MUL(a, b) ((a) * (b))
#endif

/* Full unrolling of the small loops over parameters (n <= 5, a template constant in the
 * kernels), so that the LM state and the dense solves stay in registers, not local memory. */
#ifdef __CUDA_ARCH__
#define FM_FIT_UNROLL _Pragma("unroll")
#else
#define FM_FIT_UNROLL
#endif

/* Horner's rule p -> (...((p x + c[0]) x + c[1]) ...) x + c[n - 1], each product unfused
 * (FM_FIT_MUL): the one polynomial loop of exp, log and expm1. */
FM_HD static inline double fm_fit_horner(double p, double x, const double *c, int n)
{
    FM_FIT_UNROLL
    for (int i = 0; i < n; i++)
        p = FM_FIT_MUL(p, x) + c[i];
    return p;
}

/* The Taylor tail shared by exp and expm1: p -> (...((p x + 1/11!) x + 1/10!) ... + 1/2) x + 1. */
FM_HD static inline double fm_fit_exp_horner(double p, double x)
{
    static const double c[] = {1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
                               1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,    1.0 / 24.0,
                               1.0 / 6.0,        0.5,             1.0};
    return fm_fit_horner(p, x, c, (int)(sizeof c / sizeof c[0]));
}

/* exp(x): Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, with a split ln2 whose high part has
 * trailing zero bits (k * LN2_HI exact); Taylor series of e^r to r^12 by Horner (truncation
 * < 2e-16 relative), then an exact scaling by 2^k. About 1 ulp. */
FM_HD static inline double fm_fit_exp(double x)
{
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    if (!(x > -745.0))
        return x != x ? x : 0.0;
    if (x > 709.0)
        return HUGE_VAL;
    const double k = floor(FM_FIT_MUL(x, 1.4426950408889634074) + 0.5);
    const double r = (x - FM_FIT_MUL(k, LN2_HI)) - FM_FIT_MUL(k, LN2_LO);
    const double p = FM_FIT_MUL(fm_fit_exp_horner(1.0 / 479001600.0, r), r) + 1.0;
    return ldexp(p, (int)k);
}

/* log(x) for finite x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)) (frexp is exact), then
 * log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, by its series to s^23 (truncation
 * < 1e-18); e ln2 added with the split ln2. About 1 ulp away from log's zero at x = 1. */
FM_HD static inline double fm_fit_log(double x)
{
    const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;
    if (!(x > 0))
        return x == 0 ? -HUGE_VAL : NAN;
    if (x == HUGE_VAL)
        return x;
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m = m + m;
        e--;
    }
    const double s = (m - 1.0) / (m + 1.0), z = FM_FIT_MUL(s, s);
    static const double c[] = {1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                               1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
    const double p = fm_fit_horner(1.0 / 23, z, c, (int)(sizeof c / sizeof c[0]));
    const double log_m = FM_FIT_MUL(FM_FIT_MUL(2.0, s), FM_FIT_MUL(p, z)) + (s + s);
    return FM_FIT_MUL((double)e, LN2_HI) + (FM_FIT_MUL((double)e, LN2_LO) + log_m);
}

/* expm1(x) without cancellation near 0 (the IRF constants at dt << tau): x (1 + x/2 + ... +
 * x^16/17!) for |x| < 0.5 (truncation < 1e-19 relative), exp(x) - 1 beyond. */
FM_HD static inline double fm_fit_expm1(double x)
{
    if (fabs(x) < 0.5) {
        static const double c[] = {1.0 / 20922789888000.0, 1.0 / 1307674368000.0,
                                   1.0 / 87178291200.0, 1.0 / 6227020800.0, 1.0 / 479001600.0};
        const double p =
            fm_fit_horner(1.0 / 355687428096000.0, x, c, (int)(sizeof c / sizeof c[0]));
        return FM_FIT_MUL(x, fm_fit_exp_horner(p, x));
    }
    return fm_fit_exp(x) - 1.0;
}
