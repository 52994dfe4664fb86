/* Live contexts on CUDA against their CPU twins, frame by frame, with the offline CUDA tests'
 * tolerances (LSI: 1e-6 relative; OCT: the dB allowance of oct_compare_db, en-face 1e-4 dB),
 * from camera buffers registered with the device; then frames/s of spatial LSI at 1392x1040
 * Mono16 window 5 and A-lines/s of OCT (2048 pixels, 1000 A-lines per B-scan, TDI L=21), one
 * B-scan per call and pipelined (submit/collect, B-scan k+1 in flight while k is handed back).
 * TAP; skips without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/device.h"
#include "kernels/live_host.h"
#include "kernels/lsi/lsi_live.h"
#include "kernels/oct/oct_live.h"
#include "lsi_ref.h"
#include "oct_ref.h"
#include "tap.h"

#define LSI_TOL 1e-6

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Page-aligned like a camera pool buffer. */
static void *pool_buffer(size_t bytes)
{
    void *p = NULL;
    return posix_memalign(&p, 4096, (bytes + 4095) / 4096 * 4096) == 0 ? p : NULL;
}

static void compare_lsi(int mode, fm_pixel_type type, fm_lsi_border border, int W, int H, int nf)
{
    static const char *names[] = {"spatial", "temporal", "spatio-temporal"};
    fm_lsi_params p = {.window = 5, .frames = 4, .exposure_ms = 7.5, .border = border};
    const size_t plane = (size_t)W * H, bytes = plane * fm_pixel_size(type) * nf;
    void *random = ref_random_frames(type, plane * nf), *frames = pool_buffer(bytes);
    memcpy(frames, random, bytes);
    free(random);
    fm_lsi_live *cpu = NULL, *gpu = NULL;
    fm_run_info ic, ig;
    char mc[FM_MSG_LEN] = "", mg[FM_MSG_LEN] = "";
    fm_status sc =
        fm_lsi_live_create(&p, mode, W, H, type, FM_BACKEND_CPU, &cpu, &ic, mc, sizeof mc);
    fm_status sg =
        fm_lsi_live_create(&p, mode, W, H, type, FM_BACKEND_CUDA, &gpu, &ig, mg, sizeof mg);
    const int registered = sg == FM_OK && fm_lsi_live_register_host(gpu, frames, bytes) == 0;
    double ek = 0, es = 0;
    int ready_ok = 1, invalid_ok = 1, frames_ok = sc == FM_OK && sg == FM_OK;
    for (int f = 0; frames_ok && f < nf; f++) {
        const void *frame = (const char *)frames + (size_t)f * plane * fm_pixel_size(type);
        fm_lsi_live_result rc, rg;
        frames_ok = fm_lsi_live_process(cpu, frame, &rc, mc, sizeof mc) == FM_OK &&
                    fm_lsi_live_process(gpu, frame, &rg, mg, sizeof mg) == FM_OK;
        if (!frames_ok)
            break;
        ready_ok &= rc.ready == rg.ready && rc.ready == (mode == 0 || f >= p.frames - 1);
        if (!rc.ready || !rg.ready)
            continue;
        ek = fmax(ek, ref_max_rel_f(rg.contrast, rc.contrast, plane));
        es = fmax(es, ref_max_rel_f(rg.sfi, rc.sfi, plane));
        invalid_ok &= rc.invalid == rg.invalid;
    }
    tap_ok(frames_ok && ig.backend_used == FM_BACKEND_CUDA && registered && ready_ok &&
               invalid_ok && ek <= LSI_TOL && es <= LSI_TOL,
           "live %s %s border %s %dx%d, %d frames from a registered buffer: CUDA = CPU twin "
           "per frame, K %.2e SFI %.2e (<= %.0e), ready and invalid counts equal %s%s",
           names[mode], fm_pixel_type_name(type), border == FM_LSI_BORDER_VALID ? "valid" : "zero",
           W, H, nf, ek, es, LSI_TOL, mc, mg);
    fm_live_host_unregister(frames);
    fm_lsi_live_destroy(cpu);
    fm_lsi_live_destroy(gpu);
    free(frames);
}

/* Spatial 1392x1040 Mono16, window 5: frames from a pool of registered buffers, two in flight
 * (frame k+1 uploads while frame k computes and downloads). */
static void time_lsi(void)
{
    const int W = 1392, H = 1040, pool = 8, n = 2000;
    const size_t plane = (size_t)W * H, bytes = plane * 2;
    fm_lsi_params p = {.window = 5, .frames = 2, .exposure_ms = 5.0};
    void *buf[8];
    void *random = ref_random_frames(FM_PIXEL_U16, plane);
    fm_lsi_live *gpu = NULL;
    char msg[FM_MSG_LEN] = "";
    fm_status s =
        fm_lsi_live_create(&p, 0, W, H, FM_PIXEL_U16, FM_BACKEND_CUDA, &gpu, NULL, msg, sizeof msg);
    int registered = 0;
    for (int i = 0; i < pool; i++) {
        buf[i] = pool_buffer(bytes);
        memcpy(buf[i], random, bytes);
        registered += s == FM_OK && fm_lsi_live_register_host(gpu, buf[i], bytes) == 0;
    }
    free(random);
    double *device_ms = calloc((size_t)n, sizeof(double));
    int done = 0, submitted = 0;
    const int depth = s == FM_OK ? fm_lsi_live_depth(gpu) : 1;
    for (int f = 0; s == FM_OK && f < 20; f++) { /* warm-up */
        fm_lsi_live_result r;
        s = fm_lsi_live_process(gpu, buf[f % pool], &r, msg, sizeof msg);
    }
    const double t0 = now_s();
    while (s == FM_OK && done < n) {
        while (s == FM_OK && submitted - done < depth && submitted < n) {
            s = fm_lsi_live_submit(gpu, buf[submitted % pool], msg, sizeof msg);
            submitted++;
        }
        fm_lsi_live_result r;
        if (s == FM_OK)
            s = fm_lsi_live_collect(gpu, &r, msg, sizeof msg);
        if (s == FM_OK)
            device_ms[done++] = r.device_ms;
    }
    double wall = now_s() - t0;
    qsort(device_ms, (size_t)(done > 0 ? done : 1), sizeof(double), cmp_double);
    printf("live lsi.spatial: %.0f frames/s (1392x1040 Mono16, window 5, %d in flight, "
           "registered camera buffers; per frame upload+kernel+download %.3f ms median by CUDA "
           "events)\n",
           done / wall, depth, device_ms[done / 2]);
    tap_ok(s == FM_OK && done == n && registered == pool,
           "live lsi.spatial timed over %d frames from %d registered buffers %s", n, pool, msg);
    fm_lsi_live_destroy(gpu);
    for (int i = 0; i < pool; i++) {
        fm_live_host_unregister(buf[i]);
        free(buf[i]);
    }
    tap_ok(fm_live_host_registered() == 0, "every registered buffer unregistered");
    free(device_ms);
}

/* depth-down (half x alines) to depth-fastest (alines x half), as oct_compare_db takes it */
static void to_lines(const float *down, int alines, int half, float *lines)
{
    for (int z = 0; z < half; z++)
        for (int a = 0; a < alines; a++)
            lines[(size_t)a * half + z] = down[(size_t)z * alines + a];
}

static void compare_and_time_oct(void)
{
    const int n = 2048, half = n / 2, alines = 1000, nb = 4, timed = 300;
    double *lambda = malloc(sizeof(double) * n), *k_source = malloc(sizeof(double) * n);
    char why[FM_MSG_LEN] = "";
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, why, sizeof why);
    fm_oct_params p = {.n_pixels = n,
                       .k_source = k_source,
                       .resample = FM_OCT_RESAMPLE_TDI,
                       .taps = 21,
                       .window = FM_OCT_WINDOW_HANN,
                       .background = FM_OCT_BACKGROUND_BSCAN,
                       .db_ceiling = 120};
    const size_t bscan_bytes = (size_t)alines * n * 2;
    void *random = oct_random_spectra(FM_PIXEL_U16, (size_t)alines * n * nb),
         *spectra = pool_buffer(bscan_bytes * nb);
    memcpy(spectra, random, bscan_bytes * nb);
    free(random);
    fm_oct_live *cpu = NULL, *gpu = NULL;
    fm_run_info ig;
    char mc[FM_MSG_LEN] = "", mg[FM_MSG_LEN] = "";
    fm_status sc = fm_oct_live_create(&p, alines, FM_PIXEL_U16, 10, 200, FM_BACKEND_CPU, &cpu, NULL,
                                      mc, sizeof mc);
    fm_status sg = fm_oct_live_create(&p, alines, FM_PIXEL_U16, 10, 200, FM_BACKEND_CUDA, &gpu, &ig,
                                      mg, sizeof mg);
    const int registered =
        sg == FM_OK && fm_oct_live_register_host(gpu, spectra, bscan_bytes * nb) == 0;
    float *lc = malloc(sizeof(float) * half * alines), *lg = malloc(sizeof(float) * half * alines);
    long bad = 0;
    double max_rel = 0, enface_diff = 0;
    int ok = sc == FM_OK && sg == FM_OK;
    for (int b = 0; ok && b < nb; b++) {
        const void *frame = (const char *)spectra + (size_t)b * bscan_bytes;
        const float *bc, *ec, *bg, *eg;
        ok = fm_oct_live_process(cpu, frame, &bc, &ec, mc, sizeof mc) == FM_OK &&
             fm_oct_live_process(gpu, frame, &bg, &eg, mg, sizeof mg) == FM_OK;
        if (!ok)
            break;
        double rel = 0;
        to_lines(bc, alines, half, lc);
        to_lines(bg, alines, half, lg);
        bad += oct_compare_db(lc, lg, alines, half, 1e-5, &rel);
        max_rel = fmax(max_rel, rel);
        for (int a = 0; a < alines; a++)
            enface_diff = fmax(enface_diff, fabs((double)ec[a] - eg[a]));
    }
    tap_ok(ok && registered && ig.backend_used == FM_BACKEND_CUDA && bad == 0 &&
               enface_diff <= 1e-4,
           "live oct 2048 px x %d A-lines, TDI L=21, %d B-scans from a registered buffer: CUDA = "
           "CPU twin, max relative %.2e, %ld bins over the allowance, en-face %.2e dB (<= 1e-4) "
           "%s%s",
           alines, nb, max_rel, bad, enface_diff, mc, mg);
    double t0 = now_s();
    int done = 0;
    for (int b = 0; ok && b < timed; b++) {
        const float *bg, *eg;
        ok = fm_oct_live_process(gpu, (const char *)spectra + (size_t)(b % nb) * bscan_bytes, &bg,
                                 &eg, mg, sizeof mg) == FM_OK;
        done += ok;
    }
    double wall = now_s() - t0;
    printf("live oct synchronous: %.0f A-lines/s (2048 pixels, %d A-lines per B-scan, TDI L=21, "
           "one B-scan per call, registered camera buffer, wall clock)\n",
           done * (double)alines / wall, alines);
    tap_ok(ok && done == timed, "live oct timed over %d B-scans %s", timed, mg);

    /* Pipelined: depth B-scans in flight, each collected one against the CPU twin's B-scan,
     * then timed as a camera stream would run it. */
    const int depth = ok ? fm_oct_live_depth(gpu) : 0, rounds = 3 * nb;
    float *twin = malloc(sizeof(float) * half * alines * nb),
          *twin_enface = malloc(sizeof(float) * alines * nb);
    for (int b = 0; ok && b < nb; b++) {
        const float *bc, *ec;
        ok = fm_oct_live_process(cpu, (const char *)spectra + (size_t)b * bscan_bytes, &bc, &ec, mc,
                                 sizeof mc) == FM_OK;
        if (ok) {
            memcpy(twin + (size_t)b * half * alines, bc, sizeof(float) * half * alines);
            memcpy(twin_enface + (size_t)b * alines, ec, sizeof(float) * alines);
        }
    }
    bad = 0;
    max_rel = enface_diff = 0;
    int submitted = 0, collected = 0, over = 0;
    while (ok && collected < rounds) {
        while (ok && submitted - collected < depth && submitted < rounds) {
            ok = fm_oct_live_submit(gpu,
                                    (const char *)spectra + (size_t)(submitted % nb) * bscan_bytes,
                                    mg, sizeof mg) == FM_OK;
            submitted++;
        }
        /* one more than the depth is refused */
        if (ok && submitted < rounds && submitted - collected == depth)
            over += fm_oct_live_submit(gpu, spectra, mg, sizeof mg) == FM_OK;
        const float *bg, *eg;
        ok = ok && fm_oct_live_collect(gpu, &bg, &eg, mg, sizeof mg) == FM_OK;
        if (!ok)
            break;
        const int b = collected++ % nb;
        double rel = 0;
        to_lines(twin + (size_t)b * half * alines, alines, half, lc);
        to_lines(bg, alines, half, lg);
        bad += oct_compare_db(lc, lg, alines, half, 1e-5, &rel);
        max_rel = fmax(max_rel, rel);
        for (int a = 0; a < alines; a++)
            enface_diff =
                fmax(enface_diff, fabs((double)twin_enface[(size_t)b * alines + a] - eg[a]));
    }
    mg[0] = ok ? '\0' : mg[0];
    tap_ok(ok && depth >= 2 && over == 0 && collected == rounds && bad == 0 && enface_diff <= 1e-4,
           "live oct pipelined, %d in flight, %d B-scans: each collected B-scan = the CPU twin's, "
           "max relative %.2e, %ld bins over the allowance, en-face %.2e dB; a submit beyond the "
           "depth refused %s",
           depth, rounds, max_rel, bad, enface_diff, mg);
    submitted = collected = 0;
    t0 = now_s();
    while (ok && collected < timed) {
        while (ok && submitted - collected < depth && submitted < timed) {
            ok = fm_oct_live_submit(gpu,
                                    (const char *)spectra + (size_t)(submitted % nb) * bscan_bytes,
                                    mg, sizeof mg) == FM_OK;
            submitted++;
        }
        const float *bg, *eg;
        ok = ok && fm_oct_live_collect(gpu, &bg, &eg, mg, sizeof mg) == FM_OK;
        collected += ok;
    }
    wall = now_s() - t0;
    printf("live oct: %.0f A-lines/s (%d in flight; 2048 pixels, %d A-lines per B-scan, TDI L=21, "
           "registered camera buffer, wall clock)\n",
           collected * (double)alines / wall, depth, alines);
    tap_ok(ok && collected == timed, "live oct pipelined timed over %d B-scans %s", timed, mg);
    free(twin);
    free(twin_enface);
    fm_live_host_unregister(spectra);
    fm_oct_live_destroy(cpu);
    fm_oct_live_destroy(gpu);
    free(spectra);
    free(lc);
    free(lg);
    free(lambda);
    free(k_source);
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    const fm_pixel_type types[] = {FM_PIXEL_U8, FM_PIXEL_U16};
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < 2; t++)
            compare_lsi(m, types[t], m == 1 ? FM_LSI_BORDER_VALID : (fm_lsi_border)t, 333, 217, 9);
    compare_lsi(0, FM_PIXEL_U16, FM_LSI_BORDER_VALID, 1392, 1040, 5);
    time_lsi();
    compare_and_time_oct();
    return tap_done();
}
