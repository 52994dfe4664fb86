/* OCT CPU twin against CUDA on fresh random spectra, every resampling method (TAP; skips
 * without a device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fm_config.h"
#include "kernels/device.h"
#include "kernels/oct/oct_impl.h"
#include "oct_ref.h"
#include "tap.h"

#if FM_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static int ticks;

/* Maps as core allocates them once the GPU is started (pinned: no staging), or pageable. */
static float *alloc_maps(size_t bytes, int pinned)
{
#if FM_HAVE_CUDA
    if (pinned) {
        float *maps = NULL;
        return cudaHostAlloc((void **)&maps, bytes, cudaHostAllocDefault) == cudaSuccess ? maps
                                                                                         : NULL;
    }
#endif
    (void)pinned;
    return malloc(bytes);
}

static void free_maps(float *maps, int pinned)
{
#if FM_HAVE_CUDA
    if (pinned) {
        cudaFreeHost(maps);
        return;
    }
#endif
    (void)pinned;
    free(maps);
}

static int count_tick(void *user, double fraction)
{
    (void)user;
    (void)fraction;
    ticks++;
    return 0;
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    const int n = 2048, half = n / 2;
    double *lambda = malloc(sizeof(double) * n), *k_source = malloc(sizeof(double) * n);
    float *given = malloc(sizeof(float) * n);
    oct_linear_lambda(n, lambda);
    fm_oct_k_positions(lambda, n, k_source, why, sizeof why);
    for (int i = 0; i < n; i++)
        given[i] = (float)(2048.0 + 100.0 * sin(i * 0.01));
    static const struct {
        const char *label;
        fm_oct_resample method;
        int taps;
        fm_pixel_type type;
        fm_oct_window window;
        fm_oct_background bg;
        double a2, a3;
        int alines, bscans;
    } cases[] = {
        {"tdi L=21", FM_OCT_RESAMPLE_TDI, 21, FM_PIXEL_U16, FM_OCT_WINDOW_NONE,
         FM_OCT_BACKGROUND_BSCAN, 0, 0, 400, 3},
        {"tdi L=11, 1000 A-lines x 10 (3 chunks)", FM_OCT_RESAMPLE_TDI, 11, FM_PIXEL_U16,
         FM_OCT_WINDOW_HANN, FM_OCT_BACKGROUND_BSCAN, 0, 0, 1000, 10},
        {"tdi L=31 float", FM_OCT_RESAMPLE_TDI, 31, FM_PIXEL_F32, FM_OCT_WINDOW_GAUSSIAN,
         FM_OCT_BACKGROUND_GIVEN, 0, 0, 300, 2},
        {"tdi L=255 (unstaged)", FM_OCT_RESAMPLE_TDI, 255, FM_PIXEL_U16, FM_OCT_WINDOW_NONE,
         FM_OCT_BACKGROUND_BSCAN, 0, 0, 200, 2},
        {"linear u8", FM_OCT_RESAMPLE_LINEAR, 21, FM_PIXEL_U8, FM_OCT_WINDOW_NONE,
         FM_OCT_BACKGROUND_BSCAN, 0, 0, 400, 3},
        {"cubic", FM_OCT_RESAMPLE_CUBIC, 21, FM_PIXEL_U16, FM_OCT_WINDOW_HANN,
         FM_OCT_BACKGROUND_NONE, 0, 0, 400, 3},
        {"zeropad", FM_OCT_RESAMPLE_ZEROPAD, 21, FM_PIXEL_U16, FM_OCT_WINDOW_NONE,
         FM_OCT_BACKGROUND_BSCAN, 0, 0, 400, 3},
        {"tdi L=21 + dispersion", FM_OCT_RESAMPLE_TDI, 21, FM_PIXEL_U16, FM_OCT_WINDOW_HANN,
         FM_OCT_BACKGROUND_BSCAN, 5.0, -2.0, 400, 3},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const long lines = (long)cases[c].alines * cases[c].bscans;
        void *spectra = oct_random_spectra(cases[c].type, (size_t)lines * n);
        float *cpu = malloc(sizeof(float) * half * lines),
              *gpu = malloc(sizeof(float) * half * lines);
        fm_oct_params p = {.n_pixels = n,
                           .k_source = k_source,
                           .resample = cases[c].method,
                           .taps = cases[c].taps,
                           .window = cases[c].window,
                           .gaussian_sigma = 0.25,
                           .dispersion_a2 = cases[c].a2,
                           .dispersion_a3 = cases[c].a3,
                           .background = cases[c].bg,
                           .background_spectrum = given};
        char mc[FM_MSG_LEN] = "", mg[FM_MSG_LEN] = "";
        fm_run_info ic, ig;
        ticks = 0;
        fm_status sc = fm_oct_bscans(&p, spectra, cases[c].type, cases[c].alines, cases[c].bscans,
                                     cpu, FM_BACKEND_CPU, NULL, NULL, &ic, mc, sizeof mc);
        fm_status sg = fm_oct_bscans(&p, spectra, cases[c].type, cases[c].alines, cases[c].bscans,
                                     gpu, FM_BACKEND_CUDA, count_tick, NULL, &ig, mg, sizeof mg);
        double max_rel = 0;
        long bad = oct_compare_db(cpu, gpu, lines, half, 1e-5, &max_rel);
        tap_ok(sc == FM_OK && sg == FM_OK && ig.backend_used == FM_BACKEND_CUDA && bad == 0 &&
                   ticks == cases[c].bscans,
               "%s: CUDA = CPU on the dB image, max relative difference %.2e, %ld bins over "
               "1e-5 (+ FFT rounding term); %d ticks; CPU %.1f ms, CUDA %.1f ms %s%s",
               cases[c].label, max_rel, bad, ticks, ic.elapsed_ms, ig.elapsed_ms, mc, mg);
        free(spectra);
        free(cpu);
        free(gpu);
    }
    /* The app's layout on both backends: 1000 A-lines x 10 B-scans run in chunks of 4 with a short
     * last one; the same dB tolerance as above, and for the en-face 1e-4 dB (the same sums in the
     * same order from dB values within that tolerance). Passes 1 and 2 have the shape of pass 0,
     * so they run on the stream pass 0 left parked; pass 2 changes every table (cubic, Gaussian
     * window, a given background), which the re-used stream must take up. */
    for (int pass = 0; pass < 3; pass++) {
        const int pinned = pass == 1;
        const int alines = 1000, bscans = 10, first = 100, last = 700;
        const long lines = (long)alines * bscans;
        void *spectra = oct_random_spectra(FM_PIXEL_U16, (size_t)lines * n);
        float *cpu = malloc(sizeof(float) * half * lines), *en_cpu = malloc(sizeof(float) * lines);
        float *gpu = alloc_maps(sizeof(float) * half * lines, pinned);
        float *en_gpu = alloc_maps(sizeof(float) * lines, pinned);
        fm_oct_params p = {.n_pixels = n, .k_source = k_source, .resample = FM_OCT_RESAMPLE_TDI,
                           .taps = 21, .window = FM_OCT_WINDOW_HANN};
        if (pass == 2) {
            p.resample = FM_OCT_RESAMPLE_CUBIC;
            p.window = FM_OCT_WINDOW_GAUSSIAN;
            p.gaussian_sigma = 0.2;
            p.background = FM_OCT_BACKGROUND_GIVEN;
            p.background_spectrum = given;
        }
        char mc[FM_MSG_LEN] = "", mg[FM_MSG_LEN] = "";
        fm_run_info ig;
        fm_status sc = fm_oct_bscans_depth_down(&p, spectra, FM_PIXEL_U16, alines, bscans, cpu,
                                                en_cpu, first, last, FM_BACKEND_CPU, NULL, NULL,
                                                NULL, mc, sizeof mc);
        fm_status sg = fm_oct_bscans_depth_down(&p, spectra, FM_PIXEL_U16, alines, bscans, gpu,
                                                en_gpu, first, last, FM_BACKEND_CUDA, NULL, NULL,
                                                &ig, mg, sizeof mg);
        double max_rel = 0, worst = 0;
        /* back to A-lines, so that each bin's allowance is set by its own A-line's power */
        float *cpu_lines = malloc(sizeof(float) * half * lines);
        float *gpu_lines = malloc(sizeof(float) * half * lines);
        for (long l = 0; l < lines; l++)
            for (int z = 0; z < half; z++) {
                const size_t down = ((size_t)(l / alines) * half + z) * alines + l % alines;
                cpu_lines[l * half + z] = cpu[down];
                gpu_lines[l * half + z] = gpu[down];
            }
        long bad = oct_compare_db(cpu_lines, gpu_lines, lines, half, 1e-5, &max_rel);
        free(cpu_lines);
        free(gpu_lines);
        for (long i = 0; i < lines; i++)
            worst = fabs(en_cpu[i] - en_gpu[i]) > worst ? fabs(en_cpu[i] - en_gpu[i]) : worst;
        tap_ok(sc == FM_OK && sg == FM_OK && ig.backend_used == FM_BACKEND_CUDA && bad == 0 &&
                   worst < 1e-4,
               "depth down + en-face (pass %d: %s maps%s): CUDA = CPU, max relative difference "
               "%.2e, en-face worst %.2e dB %s%s",
               pass, pinned ? "pinned" : "pageable", pass == 2 ? ", every table changed" : "",
               max_rel, worst, mc, mg);
        free_maps(gpu, pinned);
        free_maps(en_gpu, pinned);
        free(spectra);
        free(cpu);
        free(en_cpu);
    }
    free(lambda);
    free(k_source);
    free(given);
    return tap_done();
}
