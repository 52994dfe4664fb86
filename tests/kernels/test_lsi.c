/* LSI CPU twin against brute force, analytic patterns, bad input and cancellation (TAP). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/lsi/lsi.h"
#include "lsi_ref.h"
#include "tap.h"

#define TOL 1e-6

static const char *border_name(fm_lsi_border b)
{
    return b == FM_LSI_BORDER_VALID ? "valid" : "zero";
}

/* mode: 0 spatial, 1 temporal, 2 spatio-temporal. */
static fm_status run_mode(int mode, const fm_lsi_params *p, const void *frames,
                          fm_pixel_type type, int W, int H, int nf, float *k, float *s,
                          fm_backend backend, fm_tick_fn tick, void *user, fm_run_info *info,
                          char *msg)
{
    if (mode == 0)
        return fm_lsi_spatial(p, frames, type, W, H, nf, k, s, backend, tick, user, info, msg,
                              FM_MSG_LEN);
    if (mode == 1)
        return fm_lsi_temporal(p, frames, type, W, H, nf, k, s, backend, tick, user, info, msg,
                               FM_MSG_LEN);
    return fm_lsi_spatiotemporal(p, frames, type, W, H, nf, k, s, backend, tick, user, info,
                                 msg, FM_MSG_LEN);
}

/* Kernel (CPU backend) against the float64 brute force on fresh random frames. */
static void check_random(int mode, fm_pixel_type type, int W, int H, int nf, int window,
                         int depth, fm_lsi_border border)
{
    static const char *mode_names[] = {"spatial", "temporal", "spatio-temporal"};
    fm_lsi_params p = {.window = window, .frames = depth, .exposure_ms = 5.0, .border = border};
    int n_out = mode == 0 ? nf : nf - depth + 1;
    size_t plane = (size_t)W * H, total = plane * n_out;
    void *frames = ref_random_frames(type, plane * nf);
    float *k = malloc(total * sizeof(float)), *s = malloc(total * sizeof(float));
    double *rk = malloc(total * sizeof(double)), *rs = malloc(total * sizeof(double));
    char msg[FM_MSG_LEN] = "";
    fm_run_info info;

    for (int t = 0; t < n_out; t++)
        ref_window(frames, type, W, H, mode == 1 ? 1 : window, mode == 0 ? 1 : depth, border,
                   p.exposure_ms, t, rk + t * plane, rs + t * plane);
    fm_status st = run_mode(mode, &p, frames, type, W, H, nf, k, s, FM_BACKEND_CPU, NULL, NULL,
                            &info, msg);
    long long nan_s = 0;
    double ek = ref_max_rel(k, rk, total, NULL), es = ref_max_rel(s, rs, total, &nan_s);
    tap_ok(st == FM_OK && ek <= TOL && es <= TOL && info.invalid_values == nan_s,
           "%s %s %dx%dx%d window %d frames %d border %s: K rel err %.2e, SFI rel err %.2e "
           "(<= %.0e), invalid %lld of %lld", mode_names[mode], fm_pixel_type_name(type), W, H,
           nf, window, depth, border_name(border), ek, es, TOL, info.invalid_values, nan_s);
    if (st != FM_OK)
        printf("# %s\n", msg);
    free(frames);
    free(k);
    free(s);
    free(rk);
    free(rs);
}

static void test_random(void)
{
    const fm_pixel_type types[] = {FM_PIXEL_U8, FM_PIXEL_U16, FM_PIXEL_F32};
    const fm_lsi_border borders[] = {FM_LSI_BORDER_VALID, FM_LSI_BORDER_ZERO};
    for (int ti = 0; ti < 3; ti++) {
        for (int bi = 0; bi < 2; bi++) {
            /* odd and even sizes; 3 frames so the stack path runs too */
            check_random(0, types[ti], 37, 23, 3, 5, 1, borders[bi]);
            check_random(0, types[ti], 64, 48, 1, 3, 1, borders[bi]);
            check_random(0, types[ti], 17, 30, 1, 15, 1, borders[bi]);
            check_random(0, types[ti], 201, 90, 1, 7, 1, borders[bi]);
            check_random(2, types[ti], 29, 18, 6, 3, 3, borders[bi]);
            check_random(2, types[ti], 20, 21, 4, 5, 2, borders[bi]);
        }
        check_random(1, types[ti], 31, 17, 9, 5, 4, FM_LSI_BORDER_VALID);
        check_random(1, types[ti], 16, 10, 40, 5, 40, FM_LSI_BORDER_VALID);
        /* Taller than the CPU twin's band of running sums (64 rows, 256 on 16 threads): bands
         * and their window rows above and below meet correctly, with both borders. */
        check_random(1, types[ti], 19, 290, 6, 5, 3, FM_LSI_BORDER_VALID);
        check_random(2, types[ti], 23, 300, 5, 7, 3, FM_LSI_BORDER_VALID);
        check_random(2, types[ti], 23, 300, 5, 7, 3, FM_LSI_BORDER_ZERO);
    }
}

static void test_constant_and_zero(void)
{
    enum { W = 40, H = 30 };
    static uint16_t img[W * H];
    static float imgf[W * H];
    static float k[W * H], s[W * H];
    fm_lsi_params p = {.window = 5, .frames = 2, .exposure_ms = 10, .border = FM_LSI_BORDER_VALID};
    fm_run_info info;
    char msg[FM_MSG_LEN];

    for (int i = 0; i < W * H; i++) {
        img[i] = 3000;
        imgf[i] = 1234.5f;
    }
    for (int f = 0; f < 2; f++) {
        fm_status st = fm_lsi_spatial(&p, f ? (void *)imgf : (void *)img,
                                      f ? FM_PIXEL_F32 : FM_PIXEL_U16, W, H, 1, k, s,
                                      FM_BACKEND_CPU, NULL, NULL, &info, msg, sizeof msg);
        int interior_zero = 1, sfi_nan = 1, border_nan = 1;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int inside = x >= 2 && x < W - 2 && y >= 2 && y < H - 2;
                if (inside && k[y * W + x] != 0.0f)
                    interior_zero = 0;
                if (!inside && !isnan(k[y * W + x]))
                    border_nan = 0;
                if (!isnan(s[y * W + x]))
                    sfi_nan = 0;
            }
        tap_ok(st == FM_OK && interior_zero && border_nan && sfi_nan &&
                   info.invalid_values == W * H,
               "constant %s image: K = 0 exactly inside, NaN on the valid border, SFI NaN, "
               "invalid %lld (want %d)", f ? "float32" : "uint16", info.invalid_values, W * H);
    }

    memset(img, 0, sizeof img);
    p.border = FM_LSI_BORDER_ZERO;
    fm_status st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, W, H, 1, k, s, FM_BACKEND_CPU, NULL,
                                  NULL, &info, msg, sizeof msg);
    int all_nan = 1;
    for (int i = 0; i < W * H; i++)
        if (!isnan(k[i]) || !isnan(s[i]))
            all_nan = 0;
    tap_ok(st == FM_OK && all_nan && info.invalid_values == W * H,
           "all-zero image: K and SFI NaN everywhere, invalid %lld (want %d)",
           info.invalid_values, W * H);
}

/* Alternating columns a, b with a 3x3 window: a centre column a holds 3 a + 6 b, so
 * mean = (a+2b)/3 and the sample sd = sqrt(2(a-b)^2/8) = |a-b|/2, giving K = 3|a-b| / (2(a+2b));
 * swap a, b for a centre b. SFI = 1/(2TK^2). */
static void test_pattern(void)
{
    enum { W = 12, H = 9 };
    static uint8_t img[2 * W * H];
    static float k[2 * W * H], s[2 * W * H];
    const double a = 100, b = 240, T = 0.02;
    fm_lsi_params p = {.window = 3, .frames = 2, .exposure_ms = 20, .border = FM_LSI_BORDER_VALID};
    fm_run_info info;
    char msg[FM_MSG_LEN];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y * W + x] = (uint8_t)(x % 2 ? b : a);
    fm_lsi_spatial(&p, img, FM_PIXEL_U8, W, H, 1, k, s, FM_BACKEND_CPU, NULL, NULL, &info, msg,
                   sizeof msg);
    double worst = 0;
    for (int y = 1; y < H - 1; y++)
        for (int x = 1; x < W - 1; x++) {
            double c = x % 2 ? b : a, o = x % 2 ? a : b;
            double want = 3 * fabs(c - o) / (2 * (c + 2 * o));
            double want_sfi = 1 / (2 * T * want * want);
            worst = fmax(worst, fabs(k[y * W + x] - want) / want);
            worst = fmax(worst, fabs(s[y * W + x] - want_sfi) / want_sfi);
        }
    tap_ok(worst <= TOL, "alternating columns %g,%g: analytic K and SFI, rel err %.2e", a, b,
           worst);

    /* Temporal: frames alternate a, b; over 2 frames sd = |a-b|/sqrt(2), mean = (a+b)/2. */
    for (int i = 0; i < W * H; i++) {
        img[i] = (uint8_t)a;
        img[W * H + i] = (uint8_t)b;
    }
    fm_lsi_temporal(&p, img, FM_PIXEL_U8, W, H, 2, k, s, FM_BACKEND_CPU, NULL, NULL, &info, msg,
                    sizeof msg);
    double want = fabs(a - b) / sqrt(2.0) / ((a + b) / 2);
    worst = 0;
    for (int i = 0; i < W * H; i++)
        worst = fmax(worst, fabs(k[i] - want) / want);
    tap_ok(worst <= TOL, "two frames %g,%g: temporal K = %.6f, rel err %.2e", a, b, want, worst);
}

static void expect_invalid(fm_status st, const char *msg, const char *needle, const char *what)
{
    tap_ok(st == FM_ERR_INVALID_ARG && strstr(msg, needle) != NULL,
           "%s -> FM_ERR_INVALID_ARG, message \"%s\"", what, msg);
}

static void test_bad_input(void)
{
    static uint16_t img[16 * 16 * 4];
    static float k[16 * 16 * 4], s[16 * 16 * 4];
    fm_lsi_params p = {.window = 5, .frames = 3, .exposure_ms = 10, .border = FM_LSI_BORDER_VALID};
    char msg[FM_MSG_LEN];
    fm_status st;

    st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, 3, 3, 1, k, s, FM_BACKEND_CPU, NULL, NULL, NULL,
                        msg, sizeof msg);
    expect_invalid(st, msg, "image 3x3 is smaller than the 5x5 window", "3x3 image, window 5");
    p.window = 4;
    st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, 16, 16, 1, k, s, FM_BACKEND_CPU, NULL, NULL, NULL,
                        msg, sizeof msg);
    expect_invalid(st, msg, "window must be odd (got 4)", "even window");
    p.window = 17;
    st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, 16, 16, 1, k, s, FM_BACKEND_CPU, NULL, NULL, NULL,
                        msg, sizeof msg);
    expect_invalid(st, msg, "between 3 and 15", "window 17");
    p.window = 5;
    const double bad_exposure[] = {0.0, -1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        p.exposure_ms = bad_exposure[i];
        st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, 16, 16, 1, k, s, FM_BACKEND_CPU, NULL, NULL,
                            NULL, msg, sizeof msg);
        char what[64];
        snprintf(what, sizeof what, "exposure_ms %g", bad_exposure[i]);
        expect_invalid(st, msg, "exposure_ms must be", what);
    }
    p.exposure_ms = 10;
    st = fm_lsi_temporal(&p, img, FM_PIXEL_U16, 16, 16, 2, k, s, FM_BACKEND_CPU, NULL, NULL,
                         NULL, msg, sizeof msg);
    expect_invalid(st, msg, "frames (3) exceeds the 2 frames", "temporal window longer than stack");
    p.frames = 1;
    st = fm_lsi_spatiotemporal(&p, img, FM_PIXEL_U16, 16, 16, 4, k, s, FM_BACKEND_CPU, NULL,
                               NULL, NULL, msg, sizeof msg);
    expect_invalid(st, msg, "frames must be between 2 and 1024 (got 1)", "temporal window 1");
    p.frames = 3;
    st = fm_lsi_spatial(&p, NULL, FM_PIXEL_U16, 16, 16, 1, k, s, FM_BACKEND_CPU, NULL, NULL,
                        NULL, msg, sizeof msg);
    expect_invalid(st, msg, "input frames are NULL", "NULL input");
    st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, 16, 16, 1, NULL, NULL, FM_BACKEND_CPU, NULL, NULL,
                        NULL, msg, sizeof msg);
    expect_invalid(st, msg, "both outputs", "both outputs NULL");
    st = fm_lsi_check(&p, 16, 16, 4, 2, msg, sizeof msg);
    tap_ok(st == FM_OK, "fm_lsi_check accepts window 5, frames 3 on a 16x16x4 stack");
    /* Only SFI wanted: contrast may be NULL. */
    for (int i = 0; i < 16 * 16; i++)
        img[i] = (uint16_t)(100 + i % 7);
    st = fm_lsi_spatial(&p, img, FM_PIXEL_U16, 16, 16, 1, NULL, s, FM_BACKEND_CPU, NULL, NULL,
                        NULL, msg, sizeof msg);
    tap_ok(st == FM_OK && !isnan(s[8 * 16 + 8]) && s[8 * 16 + 8] > 0,
           "contrast NULL, sfi only: runs (SFI centre %g)", s[8 * 16 + 8]);
}

typedef struct {
    int calls, stop_at;
    double last;
    int monotonic;
} tick_state;

static int tick_cb(void *user, double fraction)
{
    tick_state *t = user;
    t->calls++;
    if (fraction < t->last || fraction > 1.0)
        t->monotonic = 0;
    t->last = fraction;
    return t->stop_at > 0 && t->calls >= t->stop_at;
}

static void test_progress_cancel(void)
{
    enum { W = 50, H = 40, NF = 6 };
    void *frames = ref_random_frames(FM_PIXEL_U16, (size_t)W * H * NF);
    float *k = malloc(sizeof(float) * W * H * NF), *s = malloc(sizeof(float) * W * H * NF);
    fm_lsi_params p = {.window = 5, .frames = 3, .exposure_ms = 10, .border = FM_LSI_BORDER_VALID};
    char msg[FM_MSG_LEN];
    for (int mode = 0; mode < 3; mode++) {
        tick_state t = {0, 0, 0.0, 1};
        fm_status st = run_mode(mode, &p, frames, FM_PIXEL_U16, W, H, NF, k, s, FM_BACKEND_CPU,
                                tick_cb, &t, NULL, msg);
        tap_ok(st == FM_OK && t.monotonic && t.last == 1.0 && t.calls >= 4,
               "mode %d: progress rises to 1 over %d ticks", mode, t.calls);
        tick_state c = {0, 2, 0.0, 1};
        st = run_mode(mode, &p, frames, FM_PIXEL_U16, W, H, NF, k, s, FM_BACKEND_CPU, tick_cb,
                      &c, NULL, msg);
        tap_ok(st == FM_ERR_CANCELLED && c.calls == 2,
               "mode %d: tick returning 1 stops with FM_ERR_CANCELLED after %d ticks", mode,
               c.calls);
    }
    tick_state one = {0, 1, 0.0, 1};
    fm_status st = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, 1, k, s, FM_BACKEND_CPU,
                                  tick_cb, &one, NULL, msg, sizeof msg);
    tap_ok(st == FM_ERR_CANCELLED, "single frame is cancellable between row chunks");
    free(frames);
    free(k);
    free(s);
}

/* Backends: AUTO reports what ran and why; CUDA without a device refuses. */
static void test_backends(void)
{
    enum { W = 30, H = 20 };
    void *frames = ref_random_frames(FM_PIXEL_U16, W * H);
    float k1[W * H], k2[W * H];
    fm_lsi_params p = {.window = 5, .frames = 2, .exposure_ms = 10, .border = FM_LSI_BORDER_ZERO};
    fm_run_info info;
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, 1, k1, NULL, FM_BACKEND_CPU,
                                  NULL, NULL, &info, msg, sizeof msg);
    tap_ok(st == FM_OK && info.backend_used == FM_BACKEND_CPU && !info.fell_back &&
               strncmp(info.device_name, "CPU, ", 5) == 0 && info.elapsed_ms >= 0,
           "CPU backend reports \"%s\", %.3f ms", info.device_name, info.elapsed_ms);
    int devices = fm_device_count(NULL, 0);
    st = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, 1, k2, NULL, FM_BACKEND_AUTO, NULL, NULL,
                        &info, msg, sizeof msg);
    if (devices == 0) {
        tap_ok(st == FM_OK && info.backend_used == FM_BACKEND_CPU && info.fell_back &&
                   strstr(info.fallback_reason, "no CUDA device") != NULL &&
                   memcmp(k1, k2, sizeof k1) == 0,
               "AUTO without a device runs the CPU and says why: \"%s\"", info.fallback_reason);
        st = fm_lsi_spatial(&p, frames, FM_PIXEL_U16, W, H, 1, k2, NULL, FM_BACKEND_CUDA, NULL,
                            NULL, &info, msg, sizeof msg);
        tap_ok(st == FM_ERR_NO_DEVICE && strstr(msg, "no CUDA device") != NULL,
               "CUDA without a device -> FM_ERR_NO_DEVICE: \"%s\"", msg);
    } else {
        tap_ok(st == FM_OK && info.backend_used == FM_BACKEND_CUDA && !info.fell_back,
               "AUTO with %d device(s) runs CUDA on \"%s\"", devices, info.device_name);
        tap_ok(ref_max_rel_f(k2, k1, W * H) <= TOL, "AUTO (CUDA) equals the CPU twin");
    }
    free(frames);
}

int main(void)
{
    test_random();
    test_constant_and_zero();
    test_pattern();
    test_bad_input();
    test_progress_cancel();
    test_backends();
    return tap_done();
}
