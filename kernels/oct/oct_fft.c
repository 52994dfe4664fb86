/* Built-in radix-2 FFT for the OCT CPU twin where the build has no FFTW (the GPU machine). */
#include <math.h>

#include "oct_impl.h"
#include "oct_math.h"

void fm_oct_fft_twiddles(int n, float *twiddle)
{
    /* In double, then rounded once: keeps the float FFT within ~1e-6 of FFTW's. */
    for (int k = 0; k < n / 2; k++) {
        twiddle[2 * k] = (float)cos(-2.0 * M_PI * k / n);
        twiddle[2 * k + 1] = (float)sin(-2.0 * M_PI * k / n);
    }
}

void fm_oct_fft_radix2(float *z, int n, int sign, const float *twiddle)
{
    /* Bit-reversal permutation, then iterative Cooley-Tukey butterflies. */
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j |= bit;
        if (i < j) {
            float tr = z[2 * i], ti = z[2 * i + 1];
            z[2 * i] = z[2 * j];
            z[2 * i + 1] = z[2 * j + 1];
            z[2 * j] = tr;
            z[2 * j + 1] = ti;
        }
    }
    for (int len = 2; len <= n; len <<= 1) {
        const int half = len >> 1, step = n / len;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < half; k++) {
                const float wr = twiddle[2 * k * step];
                const float wi = sign < 0 ? twiddle[2 * k * step + 1] : -twiddle[2 * k * step + 1];
                float *a = z + 2 * (i + k), *b = z + 2 * (i + k + half);
                const float br = b[0] * wr - b[1] * wi, bi = b[0] * wi + b[1] * wr;
                b[0] = a[0] - br;
                b[1] = a[1] - bi;
                a[0] += br;
                a[1] += bi;
            }
    }
}
