/* Independent truth for the LSI tests: brute-force windows in float64 with a two-pass variance,
 * and helpers to compare kernel output against it. Shares no code with kernels/lsi. */
#pragma once

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/lsi/lsi.h"

static uint64_t ref_rng_state = 88172645463325252ull;

static uint64_t ref_rand(void)
{
    ref_rng_state ^= ref_rng_state << 13;
    ref_rng_state ^= ref_rng_state >> 7;
    ref_rng_state ^= ref_rng_state << 17;
    return ref_rng_state;
}

/* Random frames: u8 full range, u16 12-bit (camera data), f32 in (0, 1000). */
static void *ref_random_frames(fm_pixel_type type, size_t count)
{
    void *buf = malloc(count * fm_pixel_size(type));
    for (size_t i = 0; i < count; i++) {
        uint64_t r = ref_rand() >> 11;
        switch (type) {
        case FM_PIXEL_U8: ((uint8_t *)buf)[i] = (uint8_t)(r & 0xff); break;
        case FM_PIXEL_U16: ((uint16_t *)buf)[i] = (uint16_t)(r & 0x0fff); break;
        case FM_PIXEL_F32: ((float *)buf)[i] = (float)((double)r / 9007199254740992.0 * 1000.0); break;
        }
    }
    return buf;
}

static double ref_value(const void *frames, fm_pixel_type type, size_t i)
{
    switch (type) {
    case FM_PIXEL_U8: return ((const uint8_t *)frames)[i];
    case FM_PIXEL_U16: return ((const uint16_t *)frames)[i];
    case FM_PIXEL_F32: return ((const float *)frames)[i];
    }
    return 0;
}

/* K and SFI of one window of samples, two-pass (mean first, then squared deviations). */
static void ref_stats(const double *v, int n, double exposure_ms, double *k, double *sfi)
{
    double sum = 0, dev = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++)
        dev += (v[i] - mean) * (v[i] - mean);
    double sd = sqrt(dev / (n - 1));
    *k = mean > 0 ? sd / mean : NAN;
    *sfi = (*k > 0) ? 1.0 / (2.0 * exposure_ms / 1000.0 * *k * *k) : NAN;
}

/* Output frame t of any mode: window (odd, or 1 for temporal) x window pixels x depth frames
 * starting at frame t. Outside the image: NaN (VALID) or 0 (ZERO). */
__attribute__((unused)) static void ref_window(const void *frames, fm_pixel_type type, int W, int H, int window,
                       int depth, fm_lsi_border border, double exposure_ms, int t, double *k,
                       double *sfi)
{
    int half = (window - 1) / 2, n = window * window * depth;
    double *v = malloc(sizeof(double) * (size_t)n);
    size_t plane = (size_t)W * H;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            size_t o = (size_t)y * W + x;
            int m = 0, outside = 0;
            for (int f = t; f < t + depth; f++)
                for (int yy = y - half; yy <= y + half; yy++)
                    for (int xx = x - half; xx <= x + half; xx++) {
                        int in = xx >= 0 && xx < W && yy >= 0 && yy < H;
                        outside |= !in;
                        v[m++] = in ? ref_value(frames, type, f * plane + (size_t)yy * W + xx) : 0;
                    }
            if (outside && border == FM_LSI_BORDER_VALID) {
                k[o] = sfi[o] = NAN;
                continue;
            }
            ref_stats(v, n, exposure_ms, &k[o], &sfi[o]);
        }
    }
    free(v);
}

/* Largest relative difference between got and want; NaN must meet NaN (else returns +inf). */
__attribute__((unused)) static double ref_max_rel(const float *got, const double *want, size_t n, long long *nan_count)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(want[i]) || isnan(got[i])) {
            if (!(isnan(want[i]) && isnan(got[i])))
                return INFINITY;
            if (nan_count)
                (*nan_count)++;
            continue;
        }
        double d = fabs((double)got[i] - want[i]);
        double scale = fabs(want[i]) > 1e-30 ? fabs(want[i]) : 1.0;
        if (d / scale > worst)
            worst = d / scale;
    }
    return worst;
}

/* Same between two float outputs (CPU against CUDA). */
__attribute__((unused)) static double ref_max_rel_f(const float *a, const float *b, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            if (!(isnan(a[i]) && isnan(b[i])))
                return INFINITY;
            continue;
        }
        double d = fabs((double)a[i] - b[i]), scale = fabs((double)b[i]);
        if (scale < 1e-30)
            scale = 1.0;
        if (d / scale > worst)
            worst = d / scale;
    }
    return worst;
}
