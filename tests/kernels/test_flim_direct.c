/* Noniterative FLIM estimators on the CPU twin against analytic truths, Poisson decays, bad input
 * and the entry point's validation (TAP). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flim_ref.h"
#include "kernels/device.h"
#include "kernels/flim/flim.h"
#include "tap.h"

#define NB 256
#define DT 0.1

static const double taus[] = {0.5, 1.0, 2.0, 3.0, 4.0, 5.0};
#define NT (int)(sizeof taus / sizeof taus[0])

typedef struct {
    float *m[FM_FLIM_OUT_COUNT];
    fm_flim_outputs out;
} maps;

static void maps_alloc(maps *mp, int n)
{
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++) {
        mp->m[j] = malloc(sizeof(float) * (size_t)n);
        mp->out.map[j] = mp->m[j];
    }
}

static void maps_free(maps *mp)
{
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
        free(mp->m[j]);
}

static fm_status run(fm_flim_method m, const fm_flim_params *p, const float *y, int n,
                     const unsigned char *mask, maps *mp, fm_run_info *info)
{
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_flim_run(m, p, y, n, mask, NULL, 0, &mp->out, FM_BACKEND_CPU, NULL, NULL,
                               info, msg, sizeof msg);
    if (st != FM_OK)
        printf("# %s: %s\n", fm_flim_method_name(m), msg);
    return st;
}

/* Noise-free mono-exponentials, tau = 0.5 ... 5 ns, 256 bins x 0.1 ns. Tolerance 1e-3 relative:
 * CMM and RLD are exact for binned exponentials (float counts leave ~1e-7); IEM carries
 * Simpson's O((dt/tau)^4) error (~1e-5 at tau = 0.5 ns); the phasor inverts the exact binned
 * relation (periodic decays here). Amplitudes the same. */
static void test_noise_free_mono(void)
{
    const fm_flim_method methods[] = {FM_FLIM_IEM, FM_FLIM_CMM, FM_FLIM_RLD, FM_FLIM_PHASOR};
    float *y = malloc(sizeof(float) * NB * NT);
    fm_flim_params p;
    fm_flim_params_defaults(&p, NB, DT);
    for (int i = 0; i < NT; i++)
        flim_ref_fill_bi(y, NT, i, NB, DT, 1000.0, taus[i], taus[i], 1.0);
    for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
        maps mp;
        fm_run_info info;
        maps_alloc(&mp, NT);
        fm_status st = run(methods[mi], &p, y, NT, NULL, &mp, &info);
        double worst = 0, worst_a = 0;
        for (int i = 0; i < NT; i++) {
            double e = fabs(mp.m[FM_FLIM_OUT_TAU][i] - taus[i]) / taus[i];
            worst = isnan(e) || e > worst ? e : worst;
            if (methods[mi] != FM_FLIM_PHASOR) {
                double a = flim_ref_amplitude(1000.0, 1.0, taus[i], DT, NB);
                double ea = fabs(mp.m[FM_FLIM_OUT_AMPLITUDE][i] - a) / a;
                worst_a = isnan(ea) || ea > worst_a ? ea : worst_a;
            }
        }
        tap_ok(st == FM_OK && worst <= 1e-3 && !(worst_a > 1e-3) && info.invalid_values == 0,
               "%s: noise-free tau 0.5..5 ns within 1e-3 (worst %.2e), amplitude (worst %.2e)",
               fm_flim_method_name(methods[mi]), worst, worst_a);
        maps_free(&mp);
    }
    free(y);
}

/* The phasor of a periodic binned exponential, in closed form: with r = e^{-dt/tau} and
 * theta = w dt, sum r^i e^{i theta (i + 1/2)} / sum r^i = e^{i theta/2} (1 - r) / (1 - r e^{i
 * theta}) (geometric series over a whole period). The kernel must match it to 1e-6 (float counts),
 * lie on the semicircle g^2 + s^2 = g up to the sampling error (3e-4 at 256 bins; 1e-6 at 4096 bins
 * of 6.25 ps, where that error is 256 times smaller), tau_phase = tau_mod to 1e-5 (both invert
 * the exact relation; float counts and outputs leave ~1e-7), and calibration must rotate and
 * scale. */
static void test_phasor(void)
{
    for (int fine = 0; fine < 2; fine++) {
        const int nb = fine ? 4096 : NB;
        const double dt = fine ? 0.00625 : DT, tol_circle = fine ? 1e-6 : 3e-4;
        float *y = malloc(sizeof(float) * nb * NT);
        fm_flim_params p;
        fm_flim_params_defaults(&p, nb, dt);
        for (int i = 0; i < NT; i++)
            flim_ref_fill_bi(y, NT, i, nb, dt, 1000.0, taus[i], taus[i], 1.0);
        maps mp;
        fm_run_info info;
        maps_alloc(&mp, NT);
        fm_status st = run(FM_FLIM_PHASOR, &p, y, NT, NULL, &mp, &info);
        double e_closed = 0, e_circle = 0, e_mod = 0;
        for (int i = 0; i < NT; i++) {
            const double r = exp(-dt / taus[i]), th = 2 * M_PI / nb;
            /* (1 - r) / (1 - r e^{i th}) = (1 - r)(1 - r cos + i r sin) / |1 - r e^{i th}|^2 */
            const double den = 1 - 2 * r * cos(th) + r * r;
            const double re = (1 - r) * (1 - r * cos(th)) / den, im = (1 - r) * r * sin(th) / den;
            const double g = re * cos(th / 2) - im * sin(th / 2);
            const double s = re * sin(th / 2) + im * cos(th / 2);
            const double G = mp.m[FM_FLIM_OUT_PHASOR_G][i], S = mp.m[FM_FLIM_OUT_PHASOR_S][i];
            e_closed = fmax(e_closed, fmax(fabs(G - g), fabs(S - s)));
            e_circle = fmax(e_circle, fabs(G * G + S * S - G));
            e_mod =
                fmax(e_mod,
                     fabs(mp.m[FM_FLIM_OUT_TAU_MOD][i] - mp.m[FM_FLIM_OUT_TAU_PHASE][i]) / taus[i]);
        }
        tap_ok(st == FM_OK && e_closed <= 1e-6,
               "phasor %d bins: g, s equal the closed-form geometric sum (max diff %.2e <= 1e-6)",
               nb, e_closed);
        tap_ok(e_circle <= tol_circle && e_mod <= 1e-5,
               "phasor %d bins: on the semicircle |g^2+s^2-g| %.2e <= %.0e, tau_phase vs tau_mod "
               "%.2e (<= 1e-5)",
               nb, e_circle, tol_circle, e_mod);
        if (!fine) {
            /* Calibration: (g, s) -> M R(phi) (g, s). */
            maps mc;
            maps_alloc(&mc, NT);
            p.cal_phase_rad = 0.3;
            p.cal_modulation = 0.9;
            st = run(FM_FLIM_PHASOR, &p, y, NT, NULL, &mc, &info);
            double e = 0;
            for (int i = 0; i < NT; i++) {
                double g = mp.m[FM_FLIM_OUT_PHASOR_G][i], s = mp.m[FM_FLIM_OUT_PHASOR_S][i];
                double gc = 0.9 * (g * cos(0.3) - s * sin(0.3));
                double sc = 0.9 * (g * sin(0.3) + s * cos(0.3));
                e = fmax(e, fmax(fabs(gc - mc.m[FM_FLIM_OUT_PHASOR_G][i]),
                                 fabs(sc - mc.m[FM_FLIM_OUT_PHASOR_S][i])));
            }
            tap_ok(st == FM_OK && e <= 1e-6,
                   "phasor calibration rotates by 0.3 rad and scales by "
                   "0.9 (max diff %.2e)",
                   e);
            maps_free(&mc);
        }
        maps_free(&mp);
        free(y);
    }
}

/* Noise-free bi-exponentials (tauF 0.8, tauD 2.5 ns): BCMM1 (tauD given) and BCMM2 recover tauF,
 * tauD, fD within 1 % (the brief's tolerance; the method is exact for sampled exponentials and
 * bin integration moves fD by ~(dt/tauF)^2 / 24 ~ 7e-4). */
static void test_bcmm(void)
{
    const double fds[] = {0.2, 0.5, 0.8}, tf = 0.8, td = 2.5;
    const int n = 3;
    float *y = malloc(sizeof(float) * NB * n);
    fm_flim_params p;
    fm_flim_params_defaults(&p, NB, DT);
    p.tau_d_ns = td;
    for (int i = 0; i < n; i++)
        flim_ref_fill_bi(y, n, i, NB, DT, 500.0, tf, td, fds[i]);
    for (int m = FM_FLIM_BCMM1; m <= FM_FLIM_BCMM2; m++) {
        maps mp;
        fm_run_info info;
        maps_alloc(&mp, n);
        fm_status st = run((fm_flim_method)m, &p, y, n, NULL, &mp, &info);
        double ef = 0, ed = 0, efd = 0, ea = 0;
        for (int i = 0; i < n; i++) {
            ef = fmax(ef, fabs(mp.m[FM_FLIM_OUT_TAU_FAST][i] - tf) / tf);
            ed = fmax(ed, fabs(mp.m[FM_FLIM_OUT_TAU_SLOW][i] - td) / td);
            efd = fmax(efd, fabs(mp.m[FM_FLIM_OUT_FRACTION][i] - fds[i]) / fds[i]);
            double avg = fds[i] * td + (1 - fds[i]) * tf;
            ea = fmax(ea, fabs(mp.m[FM_FLIM_OUT_TAU_AVG_AMP][i] - avg) / avg);
            if (isnan(mp.m[FM_FLIM_OUT_TAU_FAST][i]))
                ef = INFINITY;
        }
        tap_ok(st == FM_OK && ef <= 0.01 && ed <= 0.01 && efd <= 0.01 && ea <= 0.01,
               "%s: tauF %.2e tauD %.2e fD %.2e tau_avg_amp %.2e relative (<= 1 %%)",
               fm_flim_method_name((fm_flim_method)m), ef, ed, efd, ea);
        maps_free(&mp);
    }
    free(y);
}

/* 2000 photons per pixel, 2000 pixels: mean tau within 1 % of truth (the accuracy
 * target; the standard error of the mean is ~F / sqrt(2000 * 2000) ~ 0.03 %), and the F-value
 * sigma_tau / tau * sqrt(N) reported (about 1.1 to 1.5 for these estimators at 2000 photons). */
static void test_poisson(void)
{
    const int n = 2000, photons = 2000;
    const double ptaus[] = {2.5, 4.0};
    const fm_flim_method methods[] = {FM_FLIM_IEM, FM_FLIM_CMM, FM_FLIM_RLD, FM_FLIM_PHASOR};
    for (int t = 0; t < 2; t++) {
        float *y = calloc((size_t)NB * n, sizeof(float));
        flim_ref_seed(1234 + t);
        for (int i = 0; i < n; i++)
            flim_ref_photons(y, n, i, NB, DT, photons, ptaus[t], ptaus[t], 1.0);
        fm_flim_params p;
        fm_flim_params_defaults(&p, NB, DT);
        for (size_t mi = 0; mi < sizeof methods / sizeof methods[0]; mi++) {
            maps mp;
            fm_run_info info;
            maps_alloc(&mp, n);
            fm_status st = run(methods[mi], &p, y, n, NULL, &mp, &info);
            double s1 = 0, s2 = 0;
            int k = 0;
            for (int i = 0; i < n; i++) {
                double v = mp.m[FM_FLIM_OUT_TAU][i];
                if (isfinite(v)) {
                    s1 += v;
                    s2 += v * v;
                    k++;
                }
            }
            double mean = s1 / k, sd = sqrt(fmax(s2 / k - mean * mean, 0));
            double bias = (mean - ptaus[t]) / ptaus[t], F = sd / ptaus[t] * sqrt(photons);
            tap_ok(st == FM_OK && k == n && fabs(bias) <= 0.01,
                   "%s, tau %.1f ns, %d photons: mean bias %+.3f %% (<= 1 %%), F = %.2f",
                   fm_flim_method_name(methods[mi]), ptaus[t], photons, 100 * bias, F);
            maps_free(&mp);
        }
        free(y);
    }
}

/* Zero-photon pixels, masked pixels and pixels below min_photons: NaN in every map, counted. */
static void test_empty_and_masked(void)
{
    const int n = 8;
    float *y = calloc((size_t)NB * n, sizeof(float));
    unsigned char mask[8] = {1, 1, 1, 1, 0, 1, 1, 1};
    for (int i = 2; i < n; i++)
        flim_ref_fill_bi(y, n, i, NB, DT, i == 7 ? 0.05 : 100.0, 0.8, 2.5, i == 7 ? 1.0 : 0.6);
    /* pixels 0, 1: no photons; 4: masked; 7: ~25 photons, below min_photons = 50 */
    fm_flim_params p;
    fm_flim_params_defaults(&p, NB, DT);
    p.min_photons = 50;
    for (int m = 0; m <= FM_FLIM_BCMM2; m++) {
        maps mp;
        fm_run_info info;
        maps_alloc(&mp, n);
        fm_status st = run((fm_flim_method)m, &p, y, n, mask, &mp, &info);
        int nan_ok = 1, finite_ok = 1;
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++) {
            nan_ok &=
                isnan(mp.m[j][0]) && isnan(mp.m[j][1]) && isnan(mp.m[j][4]) && isnan(mp.m[j][7]);
        }
        finite_ok = isfinite(mp.m[FM_FLIM_OUT_TAU][3]) && isfinite(mp.m[FM_FLIM_OUT_INTENSITY][3]);
        tap_ok(st == FM_OK && nan_ok && finite_ok && info.invalid_values >= 4,
               "%s: empty, masked and dim pixels are NaN in all maps (invalid %lld)",
               fm_flim_method_name((fm_flim_method)m), info.invalid_values);
        maps_free(&mp);
    }
    free(y);
}

static int stop_now(void *user, double f)
{
    (void)f;
    (*(int *)user)++;
    return 1;
}

static void test_check(void)
{
    fm_flim_params p;
    char msg[FM_MSG_LEN] = "";
    fm_flim_params_defaults(&p, NB, DT);
    tap_ok(fm_flim_check(FM_FLIM_IEM, &p, 10, msg, sizeof msg) == FM_OK, "defaults are valid");
    p.n_bins = 7;
    p.fit_end = 7;
    tap_ok(fm_flim_check(FM_FLIM_CMM, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG &&
               strstr(msg, "n_bins"),
           "7 bins rejected: %s", msg);
    fm_flim_params_defaults(&p, NB, DT);
    p.fit_end = NB + 1;
    tap_ok(fm_flim_check(FM_FLIM_RLD, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG &&
               strstr(msg, "fit range"),
           "fit range past the data rejected: %s", msg);
    p.fit_end = 20;
    p.fit_start = 20;
    tap_ok(fm_flim_check(FM_FLIM_RLD, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG,
           "empty fit range rejected: %s", msg);
    p.fit_start = -1;
    tap_ok(fm_flim_check(FM_FLIM_RLD, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG,
           "negative fit_start rejected");
    fm_flim_params_defaults(&p, NB, DT);
    p.model = 3;
    tap_ok(fm_flim_check(FM_FLIM_LSM, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG &&
               strstr(msg, "model"),
           "model 3 rejected for lsm: %s", msg);
    fm_flim_params_defaults(&p, NB, DT);
    p.tau_d_ns = 0;
    tap_ok(fm_flim_check(FM_FLIM_BCMM1, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG &&
               strstr(msg, "tau_d_ns"),
           "bcmm1 without tau_d rejected: %s", msg);
    tap_ok(fm_flim_check(FM_FLIM_BCMM2, &p, 10, msg, sizeof msg) == FM_OK, "bcmm2 needs no tau_d");
    fm_flim_params_defaults(&p, NB, 0);
    tap_ok(fm_flim_check(FM_FLIM_IEM, &p, 10, msg, sizeof msg) == FM_ERR_INVALID_ARG,
           "zero bin width rejected: %s", msg);
    tap_ok(strcmp(fm_flim_method_name(FM_FLIM_PHASOR), "phasor") == 0 &&
               strcmp(fm_flim_method_name(FM_FLIM_GA), "ga") == 0 &&
               strcmp(fm_flim_method_name(FM_FLIM_METHOD_COUNT), "unknown") == 0,
           "method names");

    /* The entry point: no outputs, cancellation, backends. */
    fm_flim_params_defaults(&p, NB, DT);
    float *y = calloc((size_t)NB * 40000, sizeof(float));
    float *tau = malloc(sizeof(float) * 40000);
    fm_flim_outputs none = {{0}}, out = {{0}};
    out.map[FM_FLIM_OUT_TAU] = tau;
    fm_run_info info;
    tap_ok(fm_flim_run(FM_FLIM_IEM, &p, y, 40000, NULL, NULL, 0, &none, FM_BACKEND_CPU, NULL, NULL,
                       &info, msg, sizeof msg) == FM_ERR_INVALID_ARG,
           "no output map rejected: %s", msg);
    int calls = 0;
    tap_ok(fm_flim_run(FM_FLIM_CMM, &p, y, 40000, NULL, NULL, 0, &out, FM_BACKEND_CPU, stop_now,
                       &calls, &info, msg, sizeof msg) == FM_ERR_CANCELLED &&
               calls == 1,
           "CPU run is cancellable between chunks");
    char why[FM_MSG_LEN];
    if (fm_device_count(why, sizeof why) == 0) {
        tap_ok(fm_flim_run(FM_FLIM_IEM, &p, y, 100, NULL, NULL, 0, &out, FM_BACKEND_CUDA, NULL,
                           NULL, &info, msg, sizeof msg) == FM_ERR_NO_DEVICE,
               "CUDA without a device: %s", msg);
        fm_status st = fm_flim_run(FM_FLIM_IEM, &p, y, 100, NULL, NULL, 0, &out, FM_BACKEND_AUTO,
                                   NULL, NULL, &info, msg, sizeof msg);
        tap_ok(st == FM_OK && info.fell_back && info.backend_used == FM_BACKEND_CPU &&
                   info.invalid_values == 100,
               "AUTO falls back to the CPU and says so (%s)", info.fallback_reason);
    }
    free(y);
    free(tau);
}

/* uint16 counts (what TCSPC hardware records) give the same maps as the same values in float32,
 * bit for bit: the kernels widen u16 exactly, so any difference is a bug, not rounding. Random
 * Poisson mixtures, some empty pixels, a mask, a fit range not starting at 0, and one pixel with
 * bins above 32767 (a sign-extension trap). The iterative LSM runs through the same entry
 * point (flim.c converts u16 for it). A pixel type other than u16/f32 is refused. */
static void test_u16_matches_f32(void)
{
    const int n = 3000;
    float *y = calloc((size_t)NB * n, sizeof(float));
    uint16_t *y16 = malloc(sizeof(uint16_t) * (size_t)NB * n);
    unsigned char *mask = malloc((size_t)n);
    flim_ref_seed(4242);
    for (int i = 0; i < n; i++) {
        int photons = flim_ref_uniform() < 0.03 ? 0 : 20 + (int)(4000 * flim_ref_uniform());
        flim_ref_photons(y, n, i, NB, DT, photons, 0.3 + 1.2 * flim_ref_uniform(),
                         1.5 + 3.5 * flim_ref_uniform(), flim_ref_uniform());
        mask[i] = i % 11 != 5;
    }
    /* pixel 7: a bright mono decay, 65000 counts in its first bin (mono methods must see it;
     * the bi-exponential BCMM rightly finds no second component there) */
    for (int b = 0; b < NB; b++)
        y[(size_t)b * n + 7] = (float)floor(65000.0 * exp(-b * DT / 2.0));
    for (size_t i = 0; i < (size_t)NB * n; i++)
        y16[i] = (uint16_t)y[i];
    fm_flim_params p;
    fm_flim_params_defaults(&p, NB, DT);
    p.fit_start = 3;
    p.min_photons = 30;
    for (int m = 0; m <= FM_FLIM_LSM; m++) {
        const int nm = m == FM_FLIM_LSM ? 200 : n; /* LSM: a few pixels keep the test short */
        /* n_pixels is also the bin stride of the bin-major layout: fewer pixels need their own
         * bin-major copies, not a prefix of the big buffers. */
        float *ya = malloc(sizeof(float) * (size_t)NB * nm);
        uint16_t *yb = malloc(sizeof(uint16_t) * (size_t)NB * nm);
        for (int bin = 0; bin < NB; bin++)
            for (int i = 0; i < nm; i++) {
                ya[(size_t)bin * nm + i] = y[(size_t)bin * n + i];
                yb[(size_t)bin * nm + i] = y16[(size_t)bin * n + i];
            }
        maps a, b;
        fm_run_info ia, ib;
        char msg[FM_MSG_LEN] = "";
        maps_alloc(&a, n);
        maps_alloc(&b, n);
        fm_status sa = run((fm_flim_method)m, &p, ya, nm, mask, &a, &ia);
        fm_status sb = fm_flim_run_typed((fm_flim_method)m, &p, yb, FM_PIXEL_U16, nm, mask, NULL,
                                         0, &b.out, FM_BACKEND_CPU, NULL, NULL, &ib, msg,
                                         sizeof msg);
        free(ya);
        free(yb);
        long diff = 0;
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            for (int i = 0; i < nm; i++) {
                const float u = a.m[j][i], v = b.m[j][i];
                diff += !(u == v || (isnan(u) && isnan(v)));
            }
        tap_ok(sa == FM_OK && sb == FM_OK && diff == 0 && ia.invalid_values == ib.invalid_values &&
                   (m > FM_FLIM_PHASOR || isfinite(b.m[FM_FLIM_OUT_TAU][7])) &&
                   /* floor() bends the tail slightly: LSM lands within 5e-3 of 2 ns */
                   (m != FM_FLIM_LSM || fabs(b.m[FM_FLIM_OUT_TAU][7] - 2.0) < 5e-3),
               "%s: uint16 counts = float32 counts in every map, %d px (%ld differ, tau of the "
               "65000-count pixel %.4f ns) %s",
               fm_flim_method_name((fm_flim_method)m), nm, diff, b.m[FM_FLIM_OUT_TAU][7], msg);
        maps_free(&a);
        maps_free(&b);
    }
    {
        maps a;
        char msg[FM_MSG_LEN] = "";
        maps_alloc(&a, n);
        fm_status st = fm_flim_run_typed(FM_FLIM_IEM, &p, y16, FM_PIXEL_U8, n, NULL, NULL, 0,
                                         &a.out, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
        tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, "uint16"),
               "uint8 counts are refused with a message: %s", msg);
        maps_free(&a);
    }
    free(y);
    free(y16);
    free(mask);
}

int main(void)
{
    test_noise_free_mono();
    test_phasor();
    test_bcmm();
    test_poisson();
    test_empty_and_masked();
    test_check();
    test_u16_matches_f32();
    return tap_done();
}
