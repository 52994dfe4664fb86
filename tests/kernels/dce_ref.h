/* Independent references for the DCE kernel tests: bolus input curves and a direct time-domain
 * convolution of the dual-input model (no FFT, no code shared with kernels/dce). */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/dce/dce.h"

/* Gamma variate A (t - t0)^alpha e^{-(t - t0)/beta}, 0 before t0. */
static inline double ref_gamma(double t, double t0, double a, double alpha, double beta)
{
    return t > t0 ? a * pow(t - t0, alpha) * exp(-(t - t0) / beta) : 0.0;
}

/* Arterial bolus (peak about 5.4 at 14.5 s) with recirculation, on a small baseline. */
static inline double ref_ca(double t)
{
    return 0.02 + ref_gamma(t, 10, 1.2, 3, 1.5) + ref_gamma(t, 22, 0.03, 3, 3);
}

/* Portal venous input: the arterial curve 5 s later, dispersed by a unit-area exponential with an
 * 8 s time constant (splanchnic transit), by a fine trapezoid sum. */
static inline double ref_cp(double t)
{
    const double h = 0.01, tau = 8.0;
    double sum = 0;
    int n = (int)ceil(t / h);
    if (n < 1)
        return 0.02;
    const double step = t / n;
    for (int i = 0; i <= n; i++) {
        double s = i * step, w = (i == 0 || i == n) ? 0.5 : 1.0;
        sum += w * (ref_ca(s - 5) - 0.02) * exp(-(t - s) / tau) / tau;
    }
    return 0.02 + sum * step;
}

/* Piecewise-linear interpolation of frame samples, held constant outside the frames. */
static inline double ref_lin(const double *t, const double *v, int n, double x)
{
    if (x <= t[0])
        return v[0];
    if (x >= t[n - 1])
        return v[n - 1];
    int i = 0;
    while (t[i + 1] < x)
        i++;
    double w = (x - t[i]) / (t[i + 1] - t[i]);
    return (1 - w) * v[i] + w * v[i + 1];
}

/* Cl(t_i) = int_{t0}^{t_i} (ka Ca(s - tau_a) + kp Cp(s - tau_p)) e^{-kl (t_i - s)} ds with
 * linearly interpolated inputs, by the trapezoid rule with about `per_s` steps per second.
 * Rates in ml/100g/min, converted with 1/6000. */
static inline void ref_model(const fm_dce_params *p, const double *theta, double per_s, double *out)
{
    const double ka = theta[0] / 6000, kp = theta[1] / 6000, kl = theta[2] / 6000;
    const double t0 = p->times_s[0];
    for (int i = 0; i < p->n_times; i++) {
        const double span = p->times_s[i] - t0;
        const int n = (int)ceil(span * per_s);
        double sum = 0;
        if (n > 0) {
            const double h = span / n;
            for (int k = 0; k <= n; k++) {
                const double s = t0 + k * h, w = (k == 0 || k == n) ? 0.5 : 1.0;
                const double u = ka * ref_lin(p->times_s, p->ca, p->n_times, s - theta[3]) +
                                 kp * ref_lin(p->times_s, p->cp, p->n_times, s - theta[4]);
                sum += w * u * exp(-kl * (p->times_s[i] - s));
            }
            sum *= h;
        }
        out[i] = sum;
    }
}

/* Uniform frames t_i = i dt with the reference inputs sampled on them; arrays owned by caller. */
static inline void ref_inputs(int n, double dt, double *times, double *ca, double *cp)
{
    for (int i = 0; i < n; i++) {
        times[i] = i * dt;
        ca[i] = ref_ca(times[i]);
        cp[i] = ref_cp(times[i]);
    }
}

static uint64_t ref_rng_state = 0x2545f4914f6cdd1dull;

static inline double ref_uniform(void)
{
    ref_rng_state ^= ref_rng_state << 13;
    ref_rng_state ^= ref_rng_state >> 7;
    ref_rng_state ^= ref_rng_state << 17;
    return ((double)(ref_rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static inline double ref_gauss(void)
{
    return sqrt(-2 * log(ref_uniform())) * cos(2 * M_PI * ref_uniform());
}
