/* fluxmap-bench oct: SD-OCT B-scans, the paper's per-step table (Li, Shi, Zhang 2011, Table 1)
 * and sustained A-lines/s over a >= 1 GB recording, CPU twin against CUDA. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fm_config.h"
#include "kernels/device.h"
#include "kernels/oct/oct_impl.h"

#if FM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define N_PIXELS 2048
#define N_ALINES 400

/* 12-bit frame: a mirror-like fringe on a source envelope plus uniform noise, fixed seed. */
static void fill_frame(uint16_t *frame, int lines)
{
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int a = 0; a < lines; a++)
        for (int i = 0; i < N_PIXELS; i++) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            const double u = (i - 1024.0) / 500.0;
            const double v = 1500.0 * exp(-u * u) * (1.0 + 0.3 * cos(0.9 * i + a * 0.01)) + 200.0 +
                             100.0 * (double)(r >> 11) / 9007199254740992.0;
            frame[(size_t)a * N_PIXELS + i] = (uint16_t)(v > 4095 ? 4095 : v);
        }
}

static void *pinned_alloc(size_t bytes)
{
#if FM_HAVE_CUDA
    void *p = NULL;
    return cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess ? p : NULL;
#else
    return malloc(bytes);
#endif
}

static void pinned_free(void *p)
{
#if FM_HAVE_CUDA
    cudaFreeHost(p);
#else
    free(p);
#endif
}

static const char *label_of(fm_oct_resample r)
{
    static const char *names[] = {"tdi", "linear", "cubic", "zeropad"};
    return names[r];
}

int bench_oct(int quick)
{
    static double k_source[N_PIXELS], lambda[N_PIXELS];
    char msg[FM_MSG_LEN] = "", why[FM_MSG_LEN] = "";
    int have_gpu = 0;
    for (int i = 0; i < N_PIXELS; i++)
        lambda[i] = 790.0 + 100.0 * i / (N_PIXELS - 1); /* linear in lambda, 790..890 nm */
    fm_oct_k_positions(lambda, N_PIXELS, k_source, msg, sizeof msg);

    printf("fluxmap-bench %s: oct%s\n", FM_VERSION, quick ? " (--quick)" : "");
    printf("CPU twin: %d OpenMP threads, FFT: %s\n", fm_cpu_threads(),
           fm_oct_have_fftw() ? "FFTW (fftw3f)" : "built-in radix-2 (no FFTW in this build)");
    if (fm_device_count(why, sizeof why) > 0) {
        fm_gpu_info gpu;
        if (fm_device_info(0, &gpu, why, sizeof why) == FM_OK) {
            have_gpu = 1;
            printf("GPU: %s, %.1f GiB, %d SMs, sm_%d%d\n", gpu.name,
                   gpu.total_memory_bytes / 1073741824.0, gpu.multiprocessors, gpu.compute_major,
                   gpu.compute_minor);
        }
    }
    if (!have_gpu)
        printf("No CUDA device (%s): CPU figures only\n", why);

    const int taps_list[] = {11, 21, 31};
    uint16_t *frame = malloc(sizeof(uint16_t) * N_PIXELS * N_ALINES);
    fill_frame(frame, N_ALINES);

#if FM_HAVE_CUDA
    if (have_gpu) {
        /* Ceilings: one 256 MiB pinned copy each way, median of 5 after a warm-up. */
        double h2d = 0, d2h = 0;
        fm_bench_pcie_ceilings((size_t)256 << 20, &h2d, &d2h);
        printf("Measured ceilings: pinned H2D %.1f GB/s, D2H %.1f GB/s; per A-line 4096 B up "
               "(uint16) and 4096 B down (1024 float dB): PCIe floor %.2f (serial) to %.2f "
               "(overlapped) million A-lines/s\n",
               h2d, d2h, 1.0 / (4096 / (h2d * 1e9) + 4096 / (d2h * 1e9)) / 1e6,
               fmin(h2d, d2h) * 1e9 / 4096 / 1e6);

        printf("\nPer-step GPU time, one 400x2048 12-bit B-scan (the paper's Table 1; it reports "
               "6.2 ms per frame), CUDA events, median of %d after warm-up, ms\n",
               quick ? 10 : 30);
        printf("| %-12s | %7s | %10s | %10s | %7s | %9s | %8s | %7s | %12s |\n", "method", "upload",
               "background", "resampling", "FFT", "log image", "download", "total", "A-lines/s");
        printf("|---|---|---|---|---|---|---|---|---|\n");
        for (int c = 0; c < 6; c++) {
            fm_oct_params p = {.n_pixels = N_PIXELS,
                               .k_source = k_source,
                               .resample = c < 3 ? FM_OCT_RESAMPLE_TDI : (fm_oct_resample)(c - 2),
                               .taps = c < 3 ? taps_list[c] : 21,
                               .background = FM_OCT_BACKGROUND_BSCAN};
            double ms[6];
            char label[32];
            if (c < 3)
                snprintf(label, sizeof label, "tdi L=%d", taps_list[c]);
            else
                snprintf(label, sizeof label, "%s", label_of(p.resample));
            if (fm_oct_cuda_time_steps(&p, frame, FM_PIXEL_U16, N_ALINES, quick ? 10 : 30, ms, msg,
                                       sizeof msg) != FM_OK) {
                printf("| %-12s | failed: %s |\n", label, msg);
                continue;
            }
            double total = 0;
            for (int i = 0; i < 6; i++)
                total += ms[i];
            printf("| %-12s | %7.4f | %10.4f | %10.4f | %7.4f | %9.4f | %8.4f | %7.4f | %12.3e |\n",
                   label, ms[0], ms[1], ms[2], ms[3], ms[4], ms[5], total, N_ALINES / total * 1e3);
        }
    }
#endif

    /* Sustained: a recording of >= 1 GB (655 B-scans of 400 x 2048 uint16 = 1.07 GB) streamed
     * from pinned host memory into pinned host memory. */
    const int n_bscans = quick ? 64 : 655, cpu_bscans = quick ? 4 : 20, runs = quick ? 3 : 7;
    const size_t in_bytes = (size_t)n_bscans * N_ALINES * N_PIXELS * sizeof(uint16_t);
    const size_t out_bytes = (size_t)n_bscans * N_ALINES * (N_PIXELS / 2) * sizeof(float);
    uint16_t *rec = have_gpu ? pinned_alloc(in_bytes) : malloc(in_bytes);
    float *out = have_gpu ? pinned_alloc(out_bytes) : malloc(out_bytes);
    if (!rec || !out) {
        printf("no memory for the %.2f GB recording\n", in_bytes / 1e9);
        return 1;
    }
    for (int b = 0; b < n_bscans; b++)
        memcpy(rec + (size_t)b * N_ALINES * N_PIXELS, frame,
               sizeof(uint16_t) * N_ALINES * N_PIXELS);
    memset(out, 0, out_bytes);
    printf("\nSustained host->host, %d B-scans of 400x2048 uint16 (%.2f GB in, %.2f GB out), "
           "pinned host buffers, B-scan mean background; median of %d runs after warm-up.\n",
           n_bscans, in_bytes / 1e9, out_bytes / 1e9, runs);
    printf("'per call': fm_oct_bscans wall time (tables, allocations and cuFFT plans included); "
           "'steady': the stream pipeline already open. CPU twin on %d B-scans.\n",
           cpu_bscans);
    printf("| %-12s | %-22s | %9s | %12s |\n", "method", "backend", "ms", "A-lines/s");
    printf("|---|---|---|---|\n");
    for (int c = 0; c < 6; c++) {
        fm_oct_params p = {.n_pixels = N_PIXELS,
                           .k_source = k_source,
                           .resample = c < 3 ? FM_OCT_RESAMPLE_TDI : (fm_oct_resample)(c - 2),
                           .taps = c < 3 ? taps_list[c] : 21,
                           .background = FM_OCT_BACKGROUND_BSCAN};
        char label[32];
        if (c < 3)
            snprintf(label, sizeof label, "tdi L=%d", taps_list[c]);
        else
            snprintf(label, sizeof label, "%s", label_of(p.resample));
        double t[9];
        /* CPU twin, all cores, fewer B-scans. */
        for (int r = -1; r < 3; r++) {
            double t0 = fm_bench_now_ms();
            fm_oct_bscans(&p, rec, FM_PIXEL_U16, N_ALINES, cpu_bscans, out, FM_BACKEND_CPU, NULL,
                          NULL, NULL, msg, sizeof msg);
            if (r >= 0)
                t[r] = fm_bench_now_ms() - t0;
        }
        double ms = fm_bench_median(t, 3);
        char backend[32];
        snprintf(backend, sizeof backend, "CPU twin, %d threads", fm_cpu_threads());
        printf("| %-12s | %-22s | %9.2f | %12.3e |\n", label, backend, ms,
               cpu_bscans * N_ALINES / ms * 1e3);
        if (!have_gpu)
            continue;
        fm_status st = FM_OK;
        for (int r = -1; r < runs && st == FM_OK; r++) {
            double t0 = fm_bench_now_ms();
            st = fm_oct_bscans(&p, rec, FM_PIXEL_U16, N_ALINES, n_bscans, out, FM_BACKEND_CUDA,
                               NULL, NULL, NULL, msg, sizeof msg);
            if (r >= 0)
                t[r] = fm_bench_now_ms() - t0;
        }
        if (st != FM_OK) {
            printf("| %-12s | CUDA failed: %s |\n", label, msg);
            continue;
        }
        ms = fm_bench_median(t, runs);
        printf("| %-12s | %-22s | %9.2f | %12.3e |\n", label, "CUDA, per call", ms,
               (double)n_bscans * N_ALINES / ms * 1e3);
#if FM_HAVE_CUDA /* the stream pipeline exists only in CUDA builds */
        fm_oct_cuda_stream *stream = NULL;
        st =
            fm_oct_cuda_stream_open(&p, FM_PIXEL_U16, N_ALINES, n_bscans, &stream, msg, sizeof msg);
        for (int r = -1; r < runs && st == FM_OK; r++) {
            double t0 = fm_bench_now_ms();
            st = fm_oct_cuda_stream_run(stream, rec, n_bscans, out, msg, sizeof msg);
            if (r >= 0)
                t[r] = fm_bench_now_ms() - t0;
        }
        fm_oct_cuda_stream_close(stream);
        if (st != FM_OK) {
            printf("| %-12s | CUDA stream failed: %s |\n", label, msg);
            continue;
        }
        ms = fm_bench_median(t, runs);
        printf("| %-12s | %-22s | %9.2f | %12.3e |\n", label, "CUDA, steady", ms,
               (double)n_bscans * N_ALINES / ms * 1e3);
#endif
    }
    if (have_gpu)
        printf("\nTarget (issue 6) on the H100: >= 1.0e+07 A-lines/s host->host at L = 21. "
               "Paper: 2.5e5 / 2.0e5 / 1.6e5 A-lines/s at L = 11 / 21 / 31.\n");
    free(frame);
    if (have_gpu) {
        pinned_free(rec);
        pinned_free(out);
    } else {
        free(rec);
        free(out);
    }
    return 0;
}
