/* fluxmap-bench: times each kernels family on its paper's workloads, CPU twin against CUDA. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fm_config.h"
#include "kernels/device.h"
#include "kernels/lsi/lsi_impl.h"

#if FM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int bench_mcml(int quick); /* bench_mcml.c */
int bench_flim(int quick); /* bench_flim.c */
int bench_oct(int quick);  /* bench_oct.c */
int bench_dce(int quick);  /* bench_dce.c */
int bench_pk(int quick);   /* bench_pk.c */
#ifdef FM_BENCH_HAVE_CORE
int bench_e2e(int argc, char **argv); /* bench_e2e.c, built where the core library is */
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

/* Fully developed speckle has exponentially distributed intensity; 12-bit camera, mean 800. */
static uint16_t *speckle_u16(size_t count)
{
    uint16_t *buf = malloc(count * sizeof *buf);
    for (size_t i = 0; buf && i < count; i++) {
        double v = -800.0 * log(uniform());
        buf[i] = (uint16_t)(v > 4095 ? 4095 : v);
    }
    return buf;
}

static void *random_frames(fm_pixel_type type, size_t count)
{
    void *buf = malloc(count * fm_pixel_size(type));
    for (size_t i = 0; buf && i < count; i++) {
        double v = -800.0 * log(uniform());
        switch (type) {
        case FM_PIXEL_U8: ((uint8_t *)buf)[i] = (uint8_t)(v / 16 > 255 ? 255 : v / 16); break;
        case FM_PIXEL_U16: ((uint16_t *)buf)[i] = (uint16_t)(v > 4095 ? 4095 : v); break;
        case FM_PIXEL_F32: ((float *)buf)[i] = (float)v; break;
        }
    }
    return buf;
}

typedef struct {
    int have_gpu;
    char gpu_name[FM_NAME_LEN];
    double h2d_gbs, d2h_gbs, dram_gbs; /* measured ceilings, GB/s (1e9 bytes) */
} bench_env;

#if FM_HAVE_CUDA
/* Ceilings: pinned host<->device with one large cudaMemcpy each way, and device memory with a
 * device-to-device copy (read + write counted). Medians of 5 after one warm-up. */
static int measure_ceilings(bench_env *env)
{
    const size_t host_bytes = (size_t)256 << 20, dev_bytes = (size_t)1 << 30;
    void *h = NULL, *d = NULL, *d2 = NULL;
    double up[5], down[5], dd[5];
    int ok = cudaHostAlloc(&h, host_bytes, cudaHostAllocDefault) == cudaSuccess &&
             cudaMalloc(&d, dev_bytes) == cudaSuccess && cudaMalloc(&d2, dev_bytes) == cudaSuccess;
    if (ok) {
        memset(h, 1, host_bytes);
        for (int r = -1; r < 5; r++) {
            double t0 = fm_bench_now_ms();
            cudaMemcpy(d, h, host_bytes, cudaMemcpyHostToDevice);
            double t1 = fm_bench_now_ms();
            cudaMemcpy(h, d, host_bytes, cudaMemcpyDeviceToHost);
            double t2 = fm_bench_now_ms();
            cudaMemcpy(d2, d, dev_bytes, cudaMemcpyDeviceToDevice);
            cudaDeviceSynchronize();
            double t3 = fm_bench_now_ms();
            if (r >= 0) {
                up[r] = host_bytes / ((t1 - t0) * 1e6);
                down[r] = host_bytes / ((t2 - t1) * 1e6);
                dd[r] = 2.0 * dev_bytes / ((t3 - t2) * 1e6);
            }
        }
        env->h2d_gbs = fm_bench_median(up, 5);
        env->d2h_gbs = fm_bench_median(down, 5);
        env->dram_gbs = fm_bench_median(dd, 5);
        ok = cudaGetLastError() == cudaSuccess;
    }
    cudaFreeHost(h);
    cudaFree(d);
    cudaFree(d2);
    return ok;
}

static void *host_alloc(size_t bytes, int pinned)
{
    void *p = NULL;
    if (!pinned)
        return malloc(bytes);
    return cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess ? p : NULL;
}

static void host_free(void *p, int pinned)
{
    if (pinned)
        cudaFreeHost(p);
    else
        free(p);
}
#else
static void *host_alloc(size_t bytes, int pinned)
{
    (void)pinned;
    return malloc(bytes);
}

static void host_free(void *p, int pinned)
{
    (void)pinned;
    free(p);
}
#endif

static double cpu_frame_ms(const fm_lsi_params *p, const void *frame, int W, int H, float *k,
                           float *s, int reps)
{
    double *t = malloc(sizeof(double) * (size_t)reps);
    char msg[FM_MSG_LEN];
    fm_lsi_spatial(p, frame, FM_PIXEL_U16, W, H, 1, k, s, FM_BACKEND_CPU, NULL, NULL, NULL, msg,
                   sizeof msg); /* warm-up: page in the outputs */
    for (int r = 0; r < reps; r++) {
        double t0 = fm_bench_now_ms();
        fm_lsi_spatial(p, frame, FM_PIXEL_U16, W, H, 1, k, s, FM_BACKEND_CPU, NULL, NULL, NULL,
                       msg, sizeof msg);
        t[r] = fm_bench_now_ms() - t0;
    }
    double m = fm_bench_median(t, reps);
    free(t);
    return m;
}

/* Paper's sizes, one frame each: CPU twin against GPU host->host and kernel alone. */
static void lsi_sizes(const bench_env *env, int quick)
{
    static const int sizes[][2] = {{320, 240},   {640, 480},   {1024, 768},
                                   {1392, 1040}, {2048, 2048}, {4000, 4000}};
    const int n_sizes = quick ? 4 : 6, reps = quick ? 10 : 15;
    fm_lsi_params p = {.window = 5, .frames = 2, .exposure_ms = 10, .border = FM_LSI_BORDER_VALID};
    printf("\nLSI spatial, window 5 (omega = 2), uint16 12-bit speckle, valid border; "
           "median of %d runs after warm-up\n", reps);
    printf("bytes per pixel counted: 2 in + 4 K + 4 SFI = 10; GPU host->host from pinned host "
           "buffers, CUDA events\n");
    printf("%-10s %8s %9s %9s | %9s %9s | %9s %9s %8s %7s\n", "size", "CPU ms", "CPU Mpx/s",
           "CPU GB/s", "h2h ms", "h2h Mpx/s", "kernel ms", "kern Mpx/s", "kern GB/s", "% DRAM");
    for (int i = 0; i < n_sizes; i++) {
        const int W = sizes[i][0], H = sizes[i][1];
        const double mpx = (double)W * H / 1e6, gbytes = (double)W * H * 10 / 1e9;
        uint16_t *frame = speckle_u16((size_t)W * H);
        float *k = malloc(sizeof(float) * W * H), *s = malloc(sizeof(float) * W * H);
        double cpu = cpu_frame_ms(&p, frame, W, H, k, s, W * H > 4000000 ? 10 : reps);
        char label[32];
        snprintf(label, sizeof label, "%dx%d", W, H);
        printf("%-10s %8.3f %9.1f %9.2f |", label, cpu, mpx / cpu * 1e3, gbytes / cpu * 1e3);
        double h2h = 0, kern = 0;
        char msg[FM_MSG_LEN] = "";
        int timed = 0;
#if FM_HAVE_CUDA
        timed = env->have_gpu && fm_lsi_cuda_time_frame(&p, frame, FM_PIXEL_U16, W, H, reps, &h2h,
                                                        &kern, msg, sizeof msg) == FM_OK;
#endif
        if (timed) {
            printf(" %9.4f %9.1f | %9.4f %9.1f %8.1f %6.1f%%\n", h2h, mpx / h2h * 1e3, kern,
                   mpx / kern * 1e3, gbytes / kern * 1e3,
                   100.0 * gbytes / kern * 1e3 / env->dram_gbs);
        } else {
            printf(" %9s %9s | %9s %9s %8s %7s%s%s\n", "-", "-", "-", "-", "-", "-",
                   msg[0] ? "  " : "", msg);
        }
        free(frame);
        free(k);
        free(s);
    }
}

static double stream_run(const fm_lsi_params *p, const uint16_t *in, int W, int H, int nf,
                         float *k, float *s, fm_backend backend, fm_lsi_host_mode host,
                         int runs, char *msg)
{
    double t[9];
    for (int r = -1; r < runs; r++) {
        fm_lsi_job job = {.params = *p, .mode = FM_LSI_MODE_SPATIAL, .frames = in,
                          .type = FM_PIXEL_U16, .width = W, .height = H, .n_frames = nf,
                          .contrast = k, .sfi = s, .host_mode = host};
        double t0 = fm_bench_now_ms();
        if (fm_lsi_run_job(&job, backend, NULL, msg, FM_MSG_LEN) != FM_OK)
            return -1;
        if (r >= 0)
            t[r] = fm_bench_now_ms() - t0;
    }
    return fm_bench_median(t, runs) / nf;
}

/* The paper's real-time case: a 1392x1040 12-bit stream, K and SFI for every frame. */
static void lsi_stream(const bench_env *env, int quick)
{
    const int W = 1392, H = 1040, nf = quick ? 20 : 100;
    const size_t plane = (size_t)W * H;
    fm_lsi_params p = {.window = 5, .frames = 2, .exposure_ms = 10, .border = FM_LSI_BORDER_VALID};
    char msg[FM_MSG_LEN] = "";
    printf("\nLSI stream: %d frames 1392x1040 uint16 12-bit, window 5, K + SFI, host->host "
           "(wall clock per call, all allocations included), median of runs\n", nf);
    printf("%-44s %10s %10s\n", "backend / host buffers", "ms/frame", "frames/s");
    uint16_t *pageable = speckle_u16(plane * nf);
    float *k = malloc(plane * nf * 4), *s = malloc(plane * nf * 4);
    memset(k, 0, plane * nf * 4);
    memset(s, 0, plane * nf * 4);
    double cpu = stream_run(&p, pageable, W, H, nf, k, s, FM_BACKEND_CPU, FM_LSI_HOST_DEFAULT, 3,
                            msg);
    char label[64];
    snprintf(label, sizeof label, "CPU twin (%d threads)", fm_cpu_threads());
    printf("%-44s %10.3f %10.1f\n", label, cpu, 1e3 / cpu);
    if (env->have_gpu) {
        static const struct {
            const char *label;
            int pinned;
            fm_lsi_host_mode mode;
        } cases[] = {
            {"CUDA, caller buffers pinned (cudaHostAlloc)", 1, FM_LSI_HOST_DEFAULT},
            {"CUDA, pageable, staged via pinned buffers", 0, FM_LSI_HOST_STAGE},
            {"CUDA, pageable, cudaHostRegister per call", 0, FM_LSI_HOST_REGISTER},
            {"CUDA, pageable, default (public API)", 0, FM_LSI_HOST_DEFAULT},
        };
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            uint16_t *in = cases[c].pinned ? host_alloc(plane * nf * 2, 1) : pageable;
            float *kk = cases[c].pinned ? host_alloc(plane * nf * 4, 1) : k;
            float *ss = cases[c].pinned ? host_alloc(plane * nf * 4, 1) : s;
            if (!in || !kk || !ss) {
                printf("%-44s pinned allocation failed\n", cases[c].label);
                continue;
            }
            if (cases[c].pinned) {
                memcpy(in, pageable, plane * nf * 2);
                memset(kk, 0, plane * nf * 4);
                memset(ss, 0, plane * nf * 4);
            }
            double ms = stream_run(&p, in, W, H, nf, kk, ss, FM_BACKEND_CUDA, cases[c].mode,
                                   quick ? 3 : 7, msg);
            if (ms > 0)
                printf("%-44s %10.3f %10.1f\n", cases[c].label, ms, 1e3 / ms);
            else
                printf("%-44s failed: %s\n", cases[c].label, msg);
            if (cases[c].pinned) {
                host_free(in, 1);
                host_free(kk, 1);
                host_free(ss, 1);
            }
        }
        double in_mb = plane * 2 / 1e6, out_mb = plane * 8 / 1e6;
        double floor_ms = fmax(in_mb / env->h2d_gbs, out_mb / env->d2h_gbs); /* MB / (GB/s) = ms */
        printf("PCIe floor per frame (%.2f MB up at %.1f GB/s, %.2f MB down at %.1f GB/s, "
               "overlapped): %.3f ms\n", in_mb, env->h2d_gbs, out_mb, env->d2h_gbs, floor_ms);
    }
    free(pageable);
    free(k);
    free(s);
}

/* CPU against GPU on fresh random data for every mode and pixel type. */
static void lsi_accuracy(const bench_env *env)
{
    static const char *modes[] = {"spatial", "temporal", "spatio-temporal"};
    const fm_pixel_type types[] = {FM_PIXEL_U8, FM_PIXEL_U16, FM_PIXEL_F32};
    const int W = 517, H = 389, nf = 6;
    const size_t plane = (size_t)W * H;
    if (!env->have_gpu)
        return;
    printf("\nCPU vs GPU, fresh random data %dx%dx%d, window 5, frames 3 (max relative "
           "difference over all non-NaN values; NaN positions must match)\n", W, H, nf);
    printf("%-16s %-8s %-6s %12s %12s %9s\n", "mode", "type", "border", "K", "SFI", "NaN agree");
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < 3; t++)
            for (int b = 0; b < 2; b++) {
                fm_lsi_params p = {.window = 5, .frames = 3, .exposure_ms = 10,
                                   .border = b ? FM_LSI_BORDER_ZERO : FM_LSI_BORDER_VALID};
                void *in = random_frames(types[t], plane * nf);
                size_t n = plane * nf;
                float *k[2], *s[2];
                int ok = 1;
                char msg[FM_MSG_LEN];
                for (int g = 0; g < 2; g++) {
                    k[g] = malloc(n * 4);
                    s[g] = malloc(n * 4);
                    fm_lsi_job job = {.params = p, .mode = (fm_lsi_mode)m, .frames = in,
                                      .type = types[t], .width = W, .height = H,
                                      .n_frames = nf, .contrast = k[g], .sfi = s[g]};
                    ok &= fm_lsi_run_job(&job, g ? FM_BACKEND_CUDA : FM_BACKEND_CPU, NULL, msg,
                                         sizeof msg) == FM_OK;
                    n = (size_t)job.n_out * plane;
                }
                double ek = 0, es = 0;
                int nan_ok = 1;
                for (size_t i = 0; i < n; i++) {
                    for (int q = 0; q < 2; q++) {
                        float a = q ? s[0][i] : k[0][i], g = q ? s[1][i] : k[1][i];
                        if (isnan(a) || isnan(g)) {
                            nan_ok &= isnan(a) && isnan(g);
                            continue;
                        }
                        double e = fabs((double)a - g) / (fabs((double)a) > 0 ? fabs(a) : 1);
                        if (q)
                            es = fmax(es, e);
                        else
                            ek = fmax(ek, e);
                    }
                }
                if (ok)
                    printf("%-16s %-8s %-6s %12.3e %12.3e %9s\n", modes[m],
                           fm_pixel_type_name(types[t]), b ? "zero" : "valid", ek, es,
                           nan_ok ? "yes" : "NO");
                else
                    printf("%-16s %-8s %-6s failed: %s\n", modes[m], fm_pixel_type_name(types[t]),
                           b ? "zero" : "valid", msg);
                free(in);
                for (int g = 0; g < 2; g++) {
                    free(k[g]);
                    free(s[g]);
                }
            }
}

static int bench_lsi(int quick)
{
    bench_env env = {0};
    char why[FM_MSG_LEN] = "";
    printf("fluxmap-bench %s: lsi%s\n", FM_VERSION, quick ? " (--quick)" : "");
    printf("CPU twin: %d OpenMP threads\n", fm_cpu_threads());
    if (fm_device_count(why, sizeof why) > 0) {
        fm_gpu_info gpu;
        if (fm_device_info(0, &gpu, why, sizeof why) == FM_OK) {
            env.have_gpu = 1;
            snprintf(env.gpu_name, sizeof env.gpu_name, "%s", gpu.name);
            printf("GPU: %s, %.1f GiB, %d SMs, sm_%d%d\n", gpu.name,
                   gpu.total_memory_bytes / 1073741824.0, gpu.multiprocessors, gpu.compute_major,
                   gpu.compute_minor);
        }
    }
#if FM_HAVE_CUDA
    if (env.have_gpu && !measure_ceilings(&env)) {
        printf("GPU: measuring ceilings failed; GPU columns omitted\n");
        env.have_gpu = 0;
    }
    if (env.have_gpu)
        printf("Measured ceilings: pinned H2D %.1f GB/s, pinned D2H %.1f GB/s, device memory "
               "(D2D copy, read + write) %.1f GB/s\n", env.h2d_gbs, env.d2h_gbs, env.dram_gbs);
#endif
    if (!env.have_gpu)
        printf("No CUDA device (%s): CPU column only\n", why);
    lsi_sizes(&env, quick);
    lsi_stream(&env, quick);
    lsi_accuracy(&env);
    return 0;
}

/* `e2e` goes through core (readers, methods, catalogue), which the kernels-only build on the GPU
 * machine does not have: there it says how to run it instead. */
static int e2e(int argc, char **argv)
{
#ifdef FM_BENCH_HAVE_CORE
    return bench_e2e(argc, argv);
#else
    (void)argc;
    (void)argv;
    fprintf(stderr,
            "fluxmap-bench e2e: this build has no core library (GLib, readers, methods, "
            "catalogue), so it cannot time the path through core.\n"
            "Build fluxmap-bench where the core is built (beside fluxmap-cli), pack it with\n"
            "  ../shared/tools/device-bundle.sh BUILD_DIR OUT.tar.xz\n"
            "and run the bundle's fluxmap-bench e2e on the GPU machine.\n");
    return 2;
#endif
}

int main(int argc, char **argv)
{
    const char *family = NULL;
    int quick = 0;
    if (argc > 1 && strcmp(argv[1], "e2e") == 0)
        return e2e(argc - 1, argv + 1); /* options of its own: fluxmap-bench e2e --help */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: fluxmap-bench [lsi|mcml|flim|oct|dce|pk] [--quick]\n"
                   "       fluxmap-bench e2e [--backend=cpu|cuda|both] [--family=lsi|flim|oct|"
                   "dce|all]\n"
                   "                         [--dir=DIR] [--reps=N] [--small]\n");
            return 0;
        } else if (!family)
            family = argv[i];
        else {
            fprintf(stderr, "fluxmap-bench: unexpected argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!family || strcmp(family, "lsi") == 0)
        return bench_lsi(quick);
    if (strcmp(family, "mcml") == 0)
        return bench_mcml(quick); /* bench_mcml.c */
    if (strcmp(family, "flim") == 0)
        return bench_flim(quick); /* bench_flim.c */
    if (strcmp(family, "oct") == 0)
        return bench_oct(quick); /* bench_oct.c */
    if (strcmp(family, "dce") == 0)
        return bench_dce(quick); /* bench_dce.c */
    if (strcmp(family, "pk") == 0)
        return bench_pk(quick); /* bench_pk.c */
    fprintf(stderr, "fluxmap-bench: unknown family '%s' (known: lsi, mcml, flim, oct, dce, pk, e2e)\n",
            family);
    return 2;
}
