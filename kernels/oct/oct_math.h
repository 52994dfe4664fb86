/* Per-sample SD-OCT math shared by the CPU twin and the CUDA kernels (one definition each). */
#pragma once

#include <math.h>

#include "../fm_kernel.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* The paper's eq. 2 kernel (Li, Shi, Zhang 2011): the band-limited (trigonometric) interpolation
 * weight of a sample at distance delta pixels, for N samples:
 * C(delta) = 1/(N+1) (1 + 2 sum_{j=1}^{N/2} cos(2 pi j delta / N)). The sum is a Dirichlet
 * kernel, so it is evaluated in closed form, sin(pi (N+1) delta / N) / ((N+1) sin(pi delta / N))
 * (the plain sum costs N/2 cosines per coefficient: half a second per 2048 x 21 table), with the
 * limit cos(a delta) / cos(b delta) where sin(pi delta / N) vanishes. Evaluated in float64 once
 * per calibration into a table; the kernel test checks it against the plain sum. */
FM_HD static inline double fm_oct_tdi_coefficient(double delta, int n)
{
    const double a = M_PI * (n + 1.0) / n, b = M_PI / n;
    const double den = sin(b * delta);
    if (fabs(den) < 1e-12)
        return cos(a * delta) / cos(b * delta);
    return sin(a * delta) / ((n + 1.0) * den);
}

/* Spectral window weight of source pixel i of n (applied before resampling, i.e. in pixels). */
FM_HD static inline double fm_oct_window_weight(int window, double gaussian_sigma, int i, int n)
{
    if (window == 1) /* FM_OCT_WINDOW_HANN */
        return 0.5 - 0.5 * cos(2.0 * M_PI * i / (n - 1));
    if (window == 2) { /* FM_OCT_WINDOW_GAUSSIAN, sigma as a fraction of n */
        const double u = (i - 0.5 * (n - 1)) / (gaussian_sigma * n);
        return exp(-0.5 * u * u);
    }
    return 1.0;
}

/* Background subtraction and window of one sample: the same float expression on both sides. */
FM_HD static inline float fm_oct_prepare(float raw, float background, float weight)
{
    return (raw - background) * weight;
}

/* TDI output point: sum over the L taps of the staged samples x[t] and coefficients
 * c[t * stride] (stride 1 in the CPU table, the tile width in the GPU's shared memory). The
 * summation order is the same on both backends, so they agree to float rounding. */
FM_HD static inline float fm_oct_tdi_point(const float *x, const float *c, int stride, int taps)
{
    float acc = 0.0f;
    for (int t = 0; t < taps; t++)
        acc += x[t] * c[t * stride];
    return acc;
}

/* Linear interpolation between x[i] and x[i+1] (i and frac come from the host table). */
FM_HD static inline float fm_oct_linear(const float *x, int i, float frac)
{
    return x[i] + frac * (x[i + 1] - x[i]);
}

/* Catmull-Rom cubic through x[i-1..i+2]; indices are clamped to the A-line at its ends. */
FM_HD static inline float fm_oct_cubic(const float *x, int n, int i, float t)
{
    const float p0 = x[i > 0 ? i - 1 : 0], p1 = x[i];
    const float p2 = x[i + 1 < n ? i + 1 : n - 1], p3 = x[i + 2 < n ? i + 2 : n - 1];
    const float a = -0.5f * p0 + 1.5f * p1 - 1.5f * p2 + 0.5f * p3;
    const float b = p0 - 2.5f * p1 + 2.0f * p2 - 0.5f * p3;
    const float c = -0.5f * p0 + 0.5f * p2;
    return ((a * t + b) * t + c) * t + p1;
}

/* Dispersion phase at output point m of n: a2 (k-k0)^2 + a3 (k-k0)^3, k normalised to -1..1. */
FM_HD static inline double fm_oct_dispersion_phase(double a2, double a3, int m, int n)
{
    const double u = 2.0 * m / (n - 1) - 1.0;
    return a2 * u * u + a3 * u * u * u;
}

/* Magnitude in dB: 20 log10 |X| = 10 log10 |X|^2; the tiny offset keeps an exact zero finite. */
FM_HD static inline float fm_oct_db(float re, float im)
{
    return 10.0f * log10f(re * re + im * im + 1e-30f);
}

/* 10^(dB/10) = exp(dB * ln(10)/10): exp costs a third of pow. */
#define FM_OCT_DB_TO_LN 0.23025850929940458
FM_HD static inline double fm_oct_power(float db)
{
    return exp(db * FM_OCT_DB_TO_LN);
}

/* En-face: an A-line's mean power over its depth bins, in dB. A mean of power, not of dB: a mean
 * of dB is a geometric mean that lets the dark noise between layers dominate. Both backends add
 * the bins into FM_OCT_ENFACE_LANES interleaved partial sums (bin first + l + 32 j into sum l)
 * and fold them in halves, a warp's shuffle order, so that they add in the same order. */
#define FM_OCT_ENFACE_LANES 32
FM_HD static inline float fm_oct_enface_db(double power_sum, int bins)
{
    return (float)(10.0 * log10(power_sum / bins + 1e-30));
}
