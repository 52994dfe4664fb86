/* Shared by the OCT kernel tests: calibrations, random spectra and the dB-image comparison. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/oct/oct.h"

static uint64_t oct_rng = 0x243f6a8885a308d3ull; /* fixed seed */

static double oct_uniform(void)
{
    oct_rng ^= oct_rng << 13;
    oct_rng ^= oct_rng >> 7;
    oct_rng ^= oct_rng << 17;
    return ((double)(oct_rng >> 11) + 0.5) / 9007199254740992.0;
}

/* The spectrometer: linear in wavelength, 790..890 nm across n pixels. */
static void oct_linear_lambda(int n, double *lambda_nm)
{
    for (int i = 0; i < n; i++)
        lambda_nm[i] = 790.0 + 100.0 * i / (n - 1);
}

/* 12-bit camera counts (uint16) or the same values as float. */
static void *oct_random_spectra(fm_pixel_type type, size_t count)
{
    void *buf = malloc(count * (type == FM_PIXEL_U8 ? 1 : type == FM_PIXEL_U16 ? 2 : 4));
    for (size_t i = 0; buf && i < count; i++) {
        double v = 4095.0 * oct_uniform();
        if (type == FM_PIXEL_U8)
            ((uint8_t *)buf)[i] = (uint8_t)(v / 16);
        else if (type == FM_PIXEL_U16)
            ((uint16_t *)buf)[i] = (uint16_t)v;
        else
            ((float *)buf)[i] = (float)v;
    }
    return buf;
}

/* Compares two dB images of `lines` A-lines x half bins. A float FFT's error is about 1e-6 of an
 * A-line's RMS amplitude in every bin, whatever the bin's own size; so a bin far below the RMS
 * carries a larger dB error, 20 log10(1 + eps sqrt(P_rms / P)). Allowed per bin:
 * rel |a| + that term with eps = 1e-5 (10x the float FFT's rounding). Returns the largest plain
 * relative difference in *max_rel and the number of bins over the allowance. */
static long oct_compare_db(const float *a, const float *b, long lines, int half, double rel,
                           double *max_rel)
{
    long bad = 0;
    *max_rel = 0;
    for (long l = 0; l < lines; l++) {
        const float *x = a + l * half, *y = b + l * half;
        double p_rms = 0;
        for (int z = 0; z < half; z++)
            p_rms += pow(10.0, x[z] / 10.0);
        p_rms /= half;
        for (int z = 0; z < half; z++) {
            const double d = fabs((double)x[z] - y[z]);
            const double r = d / fmax(fabs((double)x[z]), 1.0);
            *max_rel = fmax(*max_rel, r);
            const double p = pow(10.0, x[z] / 10.0);
            const double allow =
                rel * fabs((double)x[z]) + 20.0 * log10(1.0 + 1e-5 * sqrt(p_rms / fmax(p, 1e-30)));
            if (!(d <= allow))
                bad++;
        }
    }
    return bad;
}
