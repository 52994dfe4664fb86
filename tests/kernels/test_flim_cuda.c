/* CPU twin against CUDA for every FLIM method on fresh random Poisson decays (TAP; skips without
 * a device): noniterative 1e-5 relative, iterative 1e-4, NaN positions equal. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fm_config.h"
#include "flim_ref.h"
#include "kernels/device.h"
#include "kernels/flim/flim.h"
#include "tap.h"

#if FM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* Relative to max(|cpu|, 1e-3) so that values near zero (fractions, phasor s) compare in
 * absolute terms instead of dividing by ~0. */
static double max_rel(const float *a, const float *b, int n, int *nan_mismatch)
{
    double e = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            *nan_mismatch += isnan(a[i]) != isnan(b[i]);
            continue;
        }
        double d = fabs((double)a[i] - b[i]) / fmax(fabs((double)a[i]), 1e-3);
        e = d > e ? d : e;
    }
    return e;
}

/* Random mixtures: tauF 0.3..1.5, tauD 1.5..5 ns, fD 0..1, 50..3000 photons, some empty. */
static float *random_decays(int n, int nb, double dt, unsigned long long seed, int pinned)
{
    size_t bytes = sizeof(float) * (size_t)n * nb;
    float *y = NULL;
#if FM_HAVE_CUDA
    if (pinned && cudaHostAlloc((void **)&y, bytes, cudaHostAllocDefault) != cudaSuccess)
        return NULL;
#endif
    if (!pinned)
        y = malloc(bytes);
    memset(y, 0, bytes);
    flim_ref_seed(seed);
    for (int p = 0; p < n; p++) {
        double tf = 0.3 + 1.2 * flim_ref_uniform(), td = 1.5 + 3.5 * flim_ref_uniform();
        int photons = flim_ref_uniform() < 0.02 ? 0 : 50 + (int)(2950 * flim_ref_uniform());
        flim_ref_photons(y, n, p, nb, dt, photons, tf, td, flim_ref_uniform());
    }
    return y;
}

static void free_decays(float *y, int pinned)
{
#if FM_HAVE_CUDA
    if (pinned) {
        cudaFreeHost(y);
        return;
    }
#endif
    free(y);
}

static void compare(fm_flim_method m, int model, int n, int nb, int pinned, int masked)
{
    const double dt = 12.5 / nb, tol = m >= FM_FLIM_LSM ? 1e-4 : 1e-5;
    float *y = random_decays(n, nb, dt, 77 + (unsigned long long)m * 13 + model, pinned);
    unsigned char *mask = masked ? malloc((size_t)n) : NULL;
    int *segment = malloc(sizeof(int) * (size_t)n);
    for (int p = 0; p < n; p++) {
        segment[p] = p / 32; /* GA-32: tiles of 32 pixels */
        if (mask)
            mask[p] = p % 7 != 3;
    }
    fm_flim_params par;
    fm_flim_params_defaults(&par, nb, dt);
    par.model = model;
    par.tau_d_ns = 3.0;
    par.fit_start = nb > 64 ? 2 : 0;
    float *maps[2][FM_FLIM_OUT_COUNT];
    fm_flim_outputs out[2];
    fm_run_info info[2];
    fm_status st[2];
    char msg[2][FM_MSG_LEN] = {"", ""};
    for (int g = 0; g < 2; g++) {
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            out[g].map[j] = maps[g][j] = malloc(sizeof(float) * (size_t)n);
        st[g] = fm_flim_run(m, &par, y, n, mask, segment, (n + 31) / 32, &out[g],
                            g ? FM_BACKEND_CUDA : FM_BACKEND_CPU, NULL, NULL, &info[g], msg[g],
                            FM_MSG_LEN);
    }
    double worst = 0;
    int worst_map = 0, nan_mismatch = 0;
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++) {
        double e = max_rel(maps[0][j], maps[1][j], n, &nan_mismatch);
        if (e > worst) {
            worst = e;
            worst_map = j;
        }
    }
    tap_ok(st[0] == FM_OK && st[1] == FM_OK && info[1].backend_used == FM_BACKEND_CUDA &&
               worst <= tol && nan_mismatch == 0,
           "%s%s %d px x %d bins (%s%s): CUDA = CPU, max rel %.2e in map %d (<= %.0e), "
           "NaN mismatches %d, invalid %lld/%lld",
           fm_flim_method_name(m), m >= FM_FLIM_LSM ? (model == 2 ? " bi" : " mono") : "", n, nb,
           pinned ? "pinned" : "pageable", masked ? ", masked" : "", worst, worst_map, tol,
           nan_mismatch, info[0].invalid_values, info[1].invalid_values);
    for (int g = 0; g < 2; g++)
        if (st[g] != FM_OK)
            printf("# %s: %s\n", g ? "CUDA" : "CPU", msg[g]);
    for (int g = 0; g < 2; g++)
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            free(maps[g][j]);
    free_decays(y, pinned);
    free(mask);
    free(segment);
}

/* uint16 counts, CPU twin against CUDA (the u16 upload and on-device widening), pinned and
 * pageable input, several chunks in flight: same tolerance as float (1e-5; fits 1e-4), NaN
 * positions equal.
 * The CPU twin's u16 path equals its float path bit for bit (test_flim_direct.c). */
static void compare_u16(fm_flim_method m, int n, int nb, int pinned)
{
    const double dt = 12.5 / nb;
    float *y = random_decays(n, nb, dt, 500 + (unsigned long long)m, 0);
    const size_t count = (size_t)n * nb;
    uint16_t *y16 = NULL;
#if FM_HAVE_CUDA
    if (pinned && cudaHostAlloc((void **)&y16, sizeof(uint16_t) * count, 0) != cudaSuccess)
        y16 = NULL;
#endif
    if (!pinned)
        y16 = malloc(sizeof(uint16_t) * count);
    unsigned char *mask = malloc((size_t)n);
    for (size_t i = 0; i < count; i++)
        y16[i] = (uint16_t)y[i];
    for (int p = 0; p < n; p++)
        mask[p] = p % 5 != 2;
    fm_flim_params par;
    fm_flim_params_defaults(&par, nb, dt);
    par.tau_d_ns = 3.0;
    par.fit_start = 1;
    float *maps[2][FM_FLIM_OUT_COUNT];
    fm_flim_outputs out[2];
    fm_run_info info[2];
    fm_status st[2];
    char msg[2][FM_MSG_LEN] = {"", ""};
    for (int g = 0; g < 2; g++) {
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            out[g].map[j] = maps[g][j] = malloc(sizeof(float) * (size_t)n);
        st[g] = fm_flim_run_typed(m, &par, y16, FM_PIXEL_U16, n, mask, NULL, 0, &out[g],
                                  g ? FM_BACKEND_CUDA : FM_BACKEND_CPU, NULL, NULL, &info[g],
                                  msg[g], FM_MSG_LEN);
    }
    double worst = 0, tol = m >= FM_FLIM_LSM ? 1e-4 : 1e-5; /* the bounds */
    int nan_mismatch = 0;
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
        worst = fmax(worst, max_rel(maps[0][j], maps[1][j], n, &nan_mismatch));
    tap_ok(st[0] == FM_OK && st[1] == FM_OK && info[1].backend_used == FM_BACKEND_CUDA &&
               worst <= tol && nan_mismatch == 0,
           "%s uint16 %d px x %d bins (%s): CUDA = CPU, max rel %.2e (<= %.0e), NaN "
           "mismatches %d",
           fm_flim_method_name(m), n, nb, pinned ? "pinned" : "pageable", worst, tol, nan_mismatch);
    for (int g = 0; g < 2; g++)
        if (st[g] != FM_OK)
            printf("# %s: %s\n", g ? "CUDA" : "CPU", msg[g]);
    for (int g = 0; g < 2; g++)
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            free(maps[g][j]);
#if FM_HAVE_CUDA
    if (pinned)
        cudaFreeHost(y16);
    else
#endif
        free(y16);
    free(y);
    free(mask);
}

static int stop_now(void *user, double f)
{
    (void)f;
    (*(int *)user)++;
    return 1;
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    for (int m = 0; m <= FM_FLIM_BCMM2; m++) {
        compare((fm_flim_method)m, 1, 5000, 256, 0, 0);
        compare((fm_flim_method)m, 1, 5000, 256, 1, 1);
    }
    /* Several chunks (32768 pixels each) in flight, and a fit range too long for constant
     * memory (the global-memory table path). */
    compare(FM_FLIM_PHASOR, 1, 70001, 64, 0, 1);
    compare(FM_FLIM_IEM, 1, 70001, 64, 1, 0);
    compare(FM_FLIM_PHASOR, 1, 300, 3000, 0, 0);
    compare(FM_FLIM_IEM, 1, 300, 3000, 0, 0);
    for (int m = 0; m <= FM_FLIM_BCMM2; m++)
        compare_u16((fm_flim_method)m, 70001, 64, m % 2);
    compare_u16(FM_FLIM_IEM, 5000, 256, 1);
    compare_u16(FM_FLIM_PHASOR, 5000, 256, 0);
    /* The fits on uint16 counts: uploaded as u16, widened on the device (CPU twin: on the host). */
    compare_u16(FM_FLIM_LSM, 5000, 256, 1);
    compare_u16(FM_FLIM_MLE, 5000, 256, 0);
    /* Iterative fits (engineer F2's half) through the same entry point. */
    for (int model = 1; model <= 2; model++) {
        compare(FM_FLIM_LSM, model, 3000, 256, 0, 0);
        compare(FM_FLIM_MLE, model, 3000, 256, 0, 0);
        compare(FM_FLIM_GA, model, 3008, 256, 0, 0);
    }

    /* Cancellation on the device path. */
    {
        const int n = 70000;
        float *y = random_decays(n, 32, 0.4, 5, 0), *tau = malloc(sizeof(float) * n);
        fm_flim_outputs out = {{0}};
        fm_flim_params par;
        char msg[FM_MSG_LEN];
        int calls = 0;
        out.map[FM_FLIM_OUT_TAU] = tau;
        fm_flim_params_defaults(&par, 32, 0.4);
        fm_status st = fm_flim_run(FM_FLIM_CMM, &par, y, n, NULL, NULL, 0, &out, FM_BACKEND_CUDA,
                                   stop_now, &calls, NULL, msg, sizeof msg);
        tap_ok(st == FM_ERR_CANCELLED && calls == 1, "CUDA direct run is cancellable");
        free(y);
        free(tau);
    }
    return tap_done();
}
