/* Per-window speckle statistics shared by the CPU twin and the CUDA kernels (one definition). */
#pragma once

#include <math.h>

#include "../fm_kernel.h"

/* Window sums -> K = sigma/<I> and SFI = 1/(2 T K^2), T in s (Yang et al. 2011).
 * s1 = sum of I, s2 = sum of I^2 over n samples; the sample variance uses n - 1.
 * The variance is written as (n*s2 - s1^2) / (n (n-1)): for a spatial window over 16-bit data
 * both products are integers below 2^53, hence exact in double, so a constant image gives K = 0
 * exactly; beyond that (long spatio-temporal windows) both products of a constant image are
 * the same real number rounded once, so they still cancel exactly.
 * Rules: mean <= 0 -> K and SFI NaN; K == 0 -> SFI NaN. Returns 1 when SFI is NaN. */
FM_HD static inline int fm_lsi_window_stats(double s1, double s2, double n, double exposure_s,
                                            float *contrast, float *sfi)
{
    if (!(s1 > 0.0) || !(n > 1.0)) {
        *contrast = NAN;
        *sfi = NAN;
        return 1;
    }
    double spread = n * s2 - s1 * s1; /* n (n-1) var */
    if (!(spread > 0.0))
        spread = 0.0; /* tiny negatives are rounding of float sums */
    /* K^2 = var / mean^2 = spread * n / ((n-1) s1^2): the cancellation-prone part (spread) is
     * done above in double; what is left is well conditioned, so one double division and then
     * correctly rounded float sqrt and reciprocal (cheap on the GPU) keep K and SFI within
     * ~2e-7 relative of the float64 truth. */
    double k2 = spread * n / ((n - 1.0) * s1 * s1);
    if (k2 == 0.0) {
        *contrast = 0.0f;
        *sfi = NAN;
        return 1;
    }
    if (k2 > 1e30 || k2 < 1e-30) { /* outside float's comfortable range: stay in double */
        *contrast = (float)sqrt(k2);
        *sfi = (float)(1.0 / (2.0 * exposure_s * k2));
        return 0;
    }
    const float k2f = (float)k2;
    *contrast = sqrtf(k2f);
    *sfi = 1.0f / ((float)(2.0 * exposure_s) * k2f);
    return 0;
}
