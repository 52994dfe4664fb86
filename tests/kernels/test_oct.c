/* OCT CPU twin against independent truths: eq. 2 of Li et al. in float64, a mirror's depth,
 * point-spread width and SNR per resampling method, background removal, FFTW = built-in FFT,
 * and rejected parameters (TAP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/oct/oct_impl.h"
#include "kernels/oct/oct_math.h"
#include "oct_ref.h"
#include "tap.h"

#define N_MIRROR 2048
#define MIRROR_BIN 300

static const char *method_name[] = {"tdi", "linear", "cubic", "zeropad"};

/* TDI with L covering every sample is the paper's eq. 2 interpolation itself: compare with
 * y(s) = sum_j x_j C(s - j) evaluated in float64 (the kernel uses float coefficients and sums). */
static void test_tdi_exact(void)
{
    const int n = 256;
    double lambda[256], k_source[256], exact_max = 0, err = 0;
    float x[256], y[256];
    char msg[FM_MSG_LEN] = "";
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    for (int i = 0; i < n; i++)
        x[i] = (float)(2.0 * oct_uniform() - 1.0);
    fm_oct_params p = {.n_pixels = n,
                       .k_source = k_source,
                       .resample = FM_OCT_RESAMPLE_TDI,
                       .taps = n + 1,
                       .background = FM_OCT_BACKGROUND_NONE};
    fm_status st = fm_oct_aline_stages(&p, x, NULL, NULL, y, msg, sizeof msg);
    for (int m = 0; m < n; m++) {
        double sum = 0;
        for (int j = 0; j < n; j++) {
            /* eq. 2 written out independently of oct_math.h */
            double c = 1.0, d = k_source[m] - j;
            for (int q = 1; q <= n / 2; q++)
                c += 2.0 * cos(2.0 * M_PI * q * d / n);
            sum += x[j] * c / (n + 1.0);
        }
        exact_max = fmax(exact_max, fabs(sum));
        err = fmax(err, fabs(sum - y[m]));
    }
    tap_ok(
        st == FM_OK && err / exact_max <= 1e-6,
        "tdi L = n + 1 = %d equals eq. 2 in float64: max error %.2e of max |y| %.3f (<= 1e-6) %s",
        n + 1, err / exact_max, exact_max, msg);
}

/* Mirror at the depth of bin MIRROR_BIN: Gaussian source 840 nm, 45 nm FWHM, sampled linearly
 * in lambda over 2048 pixels; interference term only (background already removed). */
static double source(double lambda_nm)
{
    const double u = (lambda_nm - 840.0) / 45.0;
    return exp(-4.0 * log(2.0) * u * u);
}

static double mirror_depth_nm(const double *lambda, int n)
{
    const double dk = fabs(2 * M_PI / lambda[n - 1] - 2 * M_PI / lambda[0]) / (n - 1);
    return MIRROR_BIN * M_PI / (n * dk); /* cos(2 k z) makes MIRROR_BIN cycles over the n points */
}

/* FWHM in bins of an amplitude peak at bin c (linear interpolation of the half-maximum
 * crossings). */
static double fwhm_bins(const double *amp, int c)
{
    const double h = amp[c] / 2;
    int l = c, r = c;
    while (amp[l] > h)
        l--;
    while (amp[r] > h)
        r++;
    double xl = l + (h - amp[l]) / (amp[l + 1] - amp[l]);
    double xr = r - (h - amp[r]) / (amp[r - 1] - amp[r]);
    return xr - xl;
}

/* Peak over the mean noise power away from the peak and from DC, in dB. */
static double peak_snr_db(const double *amp, int half, int c)
{
    double noise = 0;
    int count = 0;
    for (int z = 20; z < half; z++)
        if (abs(z - c) > 20) {
            noise += amp[z] * amp[z];
            count++;
        }
    return 20 * log10(amp[c]) - 10 * log10(noise / count);
}

static void test_mirror(void)
{
    const int n = N_MIRROR, half = n / 2, lines = 4;
    double *lambda = malloc(sizeof(double) * n), *k_source = malloc(sizeof(double) * n);
    double *truth = malloc(sizeof(double) * half), *amp = malloc(sizeof(double) * half);
    float *spectra = malloc(sizeof(float) * n * lines), *db = malloc(sizeof(float) * half * lines);
    char msg[FM_MSG_LEN] = "";
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    const double z = mirror_depth_nm(lambda, n);
    for (int a = 0; a < lines; a++)
        for (int i = 0; i < n; i++)
            spectra[a * n + i] =
                (float)(1000.0 * source(lambda[i]) * cos(2.0 * (2 * M_PI / lambda[i]) * z));
    /* Transform limit: the same interferogram sampled directly on the uniform k grid, DFT in
     * float64 (no resampling at all). */
    const double k0 = 2 * M_PI / lambda[0], k1 = 2 * M_PI / lambda[n - 1];
    for (int b = 0; b < half; b++) {
        if (abs(b - MIRROR_BIN) > 12) {
            truth[b] = 0;
            continue;
        }
        double re = 0, im = 0;
        for (int m = 0; m < n; m++) {
            const double k = k0 + (k1 - k0) * m / (n - 1);
            const double v = 1000.0 * source(2 * M_PI / k) * cos(2.0 * k * z);
            re += v * cos(2 * M_PI * b * m / n);
            im -= v * sin(2 * M_PI * b * m / n);
        }
        truth[b] = hypot(re, im);
    }
    const double limit = fwhm_bins(truth, MIRROR_BIN);
    printf("# mirror at bin %d (z = %.1f um): transform-limited FWHM %.3f bins\n", MIRROR_BIN,
           z / 1000, limit);
    double snr[4] = {0}, width[4] = {0};
    for (int method = 0; method < 4; method++) {
        fm_oct_params p = {.n_pixels = n,
                           .k_source = k_source,
                           .resample = method,
                           .taps = 21,
                           .background = FM_OCT_BACKGROUND_NONE};
        fm_status st = fm_oct_bscans(&p, spectra, FM_PIXEL_F32, lines, 1, db, FM_BACKEND_CPU, NULL,
                                     NULL, NULL, msg, sizeof msg);
        int peak = 20;
        for (int b = 0; b < half; b++) {
            amp[b] = pow(10.0, db[b] / 20.0);
            if (b >= 20 && amp[b] > amp[peak])
                peak = b;
        }
        width[method] = fwhm_bins(amp, peak);
        snr[method] = peak_snr_db(amp, half, peak);
        printf("# %-8s peak bin %d, FWHM %.3f bins (%.1f %% of the limit), peak SNR %.1f dB\n",
               method_name[method], peak, width[method], 100 * width[method] / limit, snr[method]);
        tap_ok(st == FM_OK && peak == MIRROR_BIN, "%s: mirror peak in bin %d (expected %d) %s",
               method_name[method], peak, MIRROR_BIN, st == FM_OK ? "" : msg);
    }
    tap_ok(fabs(width[0] / limit - 1) <= 0.10,
           "tdi L = 21: FWHM %.3f bins within 10 %% of the transform limit %.3f", width[0], limit);
    tap_ok(snr[0] >= snr[1], "tdi L = 21 peak SNR %.1f dB >= linear %.1f dB", snr[0], snr[1]);
    free(lambda);
    free(k_source);
    free(truth);
    free(amp);
    free(spectra);
    free(db);
}

/* A fixed pattern (strong ripple + offset) on every A-line: the B-scan mean removes it exactly
 * when the A-lines are identical, and a given reference leaves the mirror's peak unchanged. */
static void test_background(void)
{
    const int n = 1024, half = n / 2, lines = 16;
    double lambda[1024], k_source[1024];
    float *pattern = malloc(sizeof(float) * n), *mirror = malloc(sizeof(float) * n * lines);
    float *both = malloc(sizeof(float) * n * lines), *db = malloc(sizeof(float) * half * lines);
    float *db_ref = malloc(sizeof(float) * half * lines);
    char msg[FM_MSG_LEN] = "";
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    for (int i = 0; i < n; i++)
        pattern[i] = (float)(2000.0 + 800.0 * cos(2 * M_PI * 40.0 * i / n));
    for (int a = 0; a < lines; a++)
        for (int i = 0; i < n; i++) {
            mirror[a * n + i] = (float)(50.0 * source(lambda[i]) * cos(2 * M_PI * 150.0 * i / n));
            both[a * n + i] = pattern[i] + mirror[a * n + i];
        }
    fm_oct_params p = {.n_pixels = n,
                       .k_source = k_source,
                       .resample = FM_OCT_RESAMPLE_TDI,
                       .taps = 21,
                       .background = FM_OCT_BACKGROUND_BSCAN};
    /* Identical A-lines: the B-scan mean is each A-line itself, so nothing is left (the dB of an
     * exact zero is the -300 dB floor of fm_oct_db). */
    fm_status st = fm_oct_bscans(&p, both, FM_PIXEL_F32, lines, 1, db, FM_BACKEND_CPU, NULL, NULL,
                                 NULL, msg, sizeof msg);
    float worst = -1000;
    for (int i = 0; i < half * lines; i++)
        worst = fmaxf(worst, db[i]);
    tap_ok(st == FM_OK && worst <= -250,
           "B-scan mean removes identical A-lines: max %.1f dB "
           "(<= -250)",
           worst);
    /* Given reference = the pattern: the image equals the mirror alone to float rounding. */
    p.background = FM_OCT_BACKGROUND_GIVEN;
    p.background_spectrum = pattern;
    st = fm_oct_bscans(&p, both, FM_PIXEL_F32, lines, 1, db, FM_BACKEND_CPU, NULL, NULL, NULL, msg,
                       sizeof msg);
    p.background = FM_OCT_BACKGROUND_NONE;
    fm_status st2 = fm_oct_bscans(&p, mirror, FM_PIXEL_F32, lines, 1, db_ref, FM_BACKEND_CPU, NULL,
                                  NULL, NULL, msg, sizeof msg);
    int peak = 1;
    for (int z = 1; z < half; z++)
        if (db_ref[z] > db_ref[peak])
            peak = z;
    /* The pattern's ripple would sit near bin 40 (resampling moves it a little): compare the
     * strongest bin of 20..80 with and without the reference subtracted. */
    float ripple = -1000, ripple_ref = -1000;
    for (int z = 20; z < 80; z++) {
        ripple = fmaxf(ripple, db[z]);
        ripple_ref = fmaxf(ripple_ref, db_ref[z]);
    }
    tap_ok(st == FM_OK && st2 == FM_OK && fabsf(db[peak] - db_ref[peak]) < 0.01f &&
               ripple < ripple_ref + 1.0f,
           "given background: mirror peak %.3f dB vs %.3f dB without the pattern (< 0.01 dB); "
           "bins 20..80 max %.1f dB vs %.1f dB",
           db[peak], db_ref[peak], ripple, ripple_ref);
    free(pattern);
    free(mirror);
    free(both);
    free(db);
    free(db_ref);
}

/* FFTW (where the build has it) and the built-in radix-2 FFT give the same dB image. */
static void test_fft_paths(void)
{
    if (!fm_oct_have_fftw()) {
        printf("ok %d # SKIP this build has no FFTW: the built-in FFT is the only path\n",
               ++tap_count);
        return;
    }
    const int n = 2048, half = n / 2, lines = 32;
    double *lambda = malloc(sizeof(double) * n), *k_source = malloc(sizeof(double) * n);
    void *spectra = oct_random_spectra(FM_PIXEL_U16, (size_t)n * lines);
    float *a = malloc(sizeof(float) * half * lines), *b = malloc(sizeof(float) * half * lines);
    char msg[FM_MSG_LEN] = "";
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    for (int method = 0; method < 5; method++) {
        fm_oct_params p = {.n_pixels = n,
                           .k_source = k_source,
                           .resample = method < 4 ? method : FM_OCT_RESAMPLE_TDI,
                           .taps = 21,
                           .window = FM_OCT_WINDOW_HANN,
                           .background = FM_OCT_BACKGROUND_BSCAN,
                           .dispersion_a2 = method == 4 ? 3.0 : 0.0,
                           .dispersion_a3 = method == 4 ? -1.0 : 0.0};
        fm_oct_job job = {.params = p,
                          .spectra = spectra,
                          .type = FM_PIXEL_U16,
                          .n_alines = lines,
                          .n_bscans = 1,
                          .bscan_db = a,
                          .fft = FM_OCT_FFT_DEFAULT};
        fm_status s1 = fm_oct_run_job(&job, FM_BACKEND_CPU, NULL, msg, sizeof msg);
        job.bscan_db = b;
        job.fft = FM_OCT_FFT_BUILTIN;
        fm_status s2 = fm_oct_run_job(&job, FM_BACKEND_CPU, NULL, msg, sizeof msg);
        double max_rel;
        long bad = oct_compare_db(a, b, lines, half, 1e-5, &max_rel);
        tap_ok(s1 == FM_OK && s2 == FM_OK && bad == 0,
               "%s%s: FFTW = built-in FFT, max relative dB difference %.2e, %ld bins over "
               "1e-5 (+ FFT rounding term)",
               method < 4 ? method_name[method] : "tdi", method == 4 ? " + dispersion" : "",
               max_rel, bad);
    }
    free(lambda);
    free(k_source);
    free(spectra);
    free(a);
    free(b);
}

static void test_bad_params(void)
{
    const int n = 256;
    double lambda[256], k_source[256];
    char msg[FM_MSG_LEN] = "";
    float spectrum[256] = {0}, out[256];
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    fm_oct_params p = {.n_pixels = n,
                       .k_source = k_source,
                       .resample = FM_OCT_RESAMPLE_TDI,
                       .taps = 20,
                       .background = FM_OCT_BACKGROUND_NONE};
    fm_status st = fm_oct_check(&p, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "taps"), "L = 20 (even) rejected: %s", msg);
    p.taps = 1;
    st = fm_oct_aline_stages(&p, spectrum, NULL, NULL, out, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "taps"), "L = 1 (< 3) rejected: %s", msg);
    p.taps = 21;
    p.n_pixels = 1000;
    st = fm_oct_bscans(&p, spectrum, FM_PIXEL_F32, 1, 1, out, FM_BACKEND_CPU, NULL, NULL, NULL, msg,
                       sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "n_pixels"),
           "n_pixels = 1000 (not a power of two) rejected: %s", msg);
    p.n_pixels = n;
    lambda[100] = lambda[98];
    st = fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "lambda_nm"),
           "non-monotonic wavelengths rejected: %s", msg);
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    k_source[50] = k_source[49];
    st = fm_oct_check(&p, msg, sizeof msg);
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "k_source"),
           "non-monotonic k positions rejected: %s", msg);
}

/* The app's layout: depth down equals the kernels' depth-fastest image transposed, bit for bit
 * (the same lines, only placed elsewhere), and the en-face equals a plain reference:
 * 10 log10 of the mean of 10^(dB/10) over the range, summed in order in double. The tolerance,
 * 1e-4 dB, covers the float rounding of the result and the other order of additions. */
static void test_depth_down(void)
{
    const int n = 1024, half = n / 2, alines = 37, bscans = 3, first = 40, last = 301;
    double *lambda = malloc(sizeof(double) * n), *k_source = malloc(sizeof(double) * n);
    char msg[FM_MSG_LEN] = "";
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, msg, sizeof msg);
    fm_oct_params p = {.n_pixels = n, .k_source = k_source, .resample = FM_OCT_RESAMPLE_TDI,
                       .taps = 21, .window = FM_OCT_WINDOW_HANN};
    const size_t values = (size_t)bscans * alines * half;
    void *spectra = oct_random_spectra(FM_PIXEL_U16, (size_t)bscans * alines * n);
    float *fast = malloc(sizeof(float) * values), *down = malloc(sizeof(float) * values);
    float *enface = malloc(sizeof(float) * bscans * alines);
    fm_status a = fm_oct_bscans(&p, spectra, FM_PIXEL_U16, alines, bscans, fast, FM_BACKEND_CPU,
                                NULL, NULL, NULL, msg, sizeof msg);
    fm_status b = fm_oct_bscans_depth_down(&p, spectra, FM_PIXEL_U16, alines, bscans, down,
                                           enface, first, last, FM_BACKEND_CPU, NULL, NULL, NULL,
                                           msg, sizeof msg);
    long moved = 0;
    double worst = 0.0;
    for (int bs = 0; bs < bscans; bs++)
        for (int al = 0; al < alines; al++) {
            const float *line = fast + ((size_t)bs * alines + al) * half;
            for (int z = 0; z < half; z++)
                moved += down[((size_t)bs * half + z) * alines + al] != line[z];
            double power = 0.0;
            for (int z = first; z < last; z++)
                power += pow(10.0, line[z] / 10.0);
            double ref = 10.0 * log10(power / (last - first) + 1e-30);
            double d = fabs(enface[(size_t)bs * alines + al] - ref);
            worst = d > worst ? d : worst;
        }
    tap_ok(a == FM_OK && b == FM_OK && moved == 0,
           "depth down = the depth-fastest image transposed (%ld values differ) %s", moved, msg);
    tap_ok(b == FM_OK && worst < 1e-4, "en-face = mean power over bins %d..%d, worst %.2e dB",
           first, last, worst);
    fm_status c = fm_oct_bscans_depth_down(&p, spectra, FM_PIXEL_U16, alines, bscans, down,
                                           enface, 300, 300, FM_BACKEND_CPU, NULL, NULL, NULL,
                                           msg, sizeof msg);
    fm_status d = fm_oct_bscans_depth_down(&p, spectra, FM_PIXEL_U16, alines, bscans, down,
                                           enface, 0, half + 1, FM_BACKEND_CPU, NULL, NULL, NULL,
                                           msg, sizeof msg);
    tap_ok(c == FM_ERR_INVALID_ARG && d == FM_ERR_INVALID_ARG && strstr(msg, "en-face"),
           "an empty or too deep en-face range is refused: %s", msg);
    free(lambda);
    free(k_source);
    free(spectra);
    free(fast);
    free(down);
    free(enface);
}

int main(void)
{
    test_tdi_exact();
    test_mirror();
    test_background();
    test_fft_paths();
    test_bad_params();
    test_depth_down();
    return tap_done();
}
