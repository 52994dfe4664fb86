/* Independent FLIM decay generators for the kernel tests: analytic binned exponentials and
 * photon-by-photon Poisson decays from a seeded generator (bin-major layout, as the kernels). */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t flim_ref_state = 0x2545f4914f6cdd1dull;

static inline void flim_ref_seed(uint64_t seed)
{
    flim_ref_state = seed ? seed : 1;
}

/* splitmix64: full-period, good enough for test data. Returns a uniform in (0, 1). */
static inline double flim_ref_uniform(void)
{
    uint64_t z = (flim_ref_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Photons of a periodic excitation (period = n_bins dt) from exp(-t/tau) in bin i:
 * integral over [i dt, (i+1) dt] of the decay summed over all earlier pulses, per unit amplitude
 * at t = 0 (per ns). A pure exponential inside the window, as physical TCSPC data are. */
static inline double flim_ref_bin(double tau, int i, double dt, int n_bins)
{
    const double T = n_bins * dt;
    return tau * exp(-i * dt / tau) * -expm1(-dt / tau) / -expm1(-T / tau);
}

/* Counts of pixel p, bin b: y[b * n_pixels + p] = scale * (f_d bin(tau_d) + (1 - f_d) bin(tau_f)).
 * Mono: f_d = 1. */
static inline void flim_ref_fill_bi(float *y, int n_pixels, int p, int n_bins, double dt,
                                    double scale, double tau_f, double tau_d, double f_d)
{
    for (int b = 0; b < n_bins; b++) {
        double v = f_d * flim_ref_bin(tau_d, b, dt, n_bins);
        if (f_d < 1.0)
            v += (1.0 - f_d) * flim_ref_bin(tau_f, b, dt, n_bins);
        y[(size_t)b * n_pixels + p] = (float)(scale * v);
    }
}

/* The model's A (counts per bin at t = 0, bins represented by their centres) of one component
 * of flim_ref_fill_bi: bin i holds scale * f * tau (1 - e^{-dt/tau}) e^{-i dt/tau} / (1 -
 * e^{-T/tau}) = A e^{-(i + 1/2) dt / tau}. */
static inline double flim_ref_amplitude(double scale, double f, double tau, double dt, int n_bins)
{
    return scale * f * 2.0 * tau * sinh(0.5 * dt / tau) / -expm1(-n_bins * dt / tau);
}

/* n_photons photons of a periodic mono- or bi-exponential decay into pixel p (adds to y). */
static inline void flim_ref_photons(float *y, int n_pixels, int p, int n_bins, double dt,
                                    int n_photons, double tau_f, double tau_d, double f_int_d)
{
    const double T = n_bins * dt;
    for (int k = 0; k < n_photons; k++) {
        const double tau = flim_ref_uniform() < f_int_d ? tau_d : tau_f;
        const double t = fmod(-tau * log(flim_ref_uniform()), T);
        int b = (int)(t / dt);
        if (b >= n_bins)
            b = n_bins - 1;
        y[(size_t)b * n_pixels + p] += 1.0f;
    }
}
