/* fluxmap-bench flim: every FLIM method on the paper's 512x512x256 workload, CPU twin against
 * CUDA host to host, with the PCIe floor and CPU-vs-GPU agreement on fresh random data. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fm_config.h"
#include "kernels/device.h"
#include "kernels/flim/flim.h"

#if FM_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int bench_flim(int quick);

typedef struct {
    const char *label;
    fm_flim_method method;
    int model;
} flim_case;

static const flim_case cases[] = {
    {"iem", FM_FLIM_IEM, 1},       {"cmm", FM_FLIM_CMM, 1},     {"rld", FM_FLIM_RLD, 1},
    {"phasor", FM_FLIM_PHASOR, 1}, {"bcmm1", FM_FLIM_BCMM1, 2}, {"bcmm2", FM_FLIM_BCMM2, 2},
    {"lsm mono", FM_FLIM_LSM, 1},  {"lsm bi", FM_FLIM_LSM, 2},  {"mle bi", FM_FLIM_MLE, 2},
    {"ga-32 bi", FM_FLIM_GA, 2},
};
#define ACC_ROWS 64 /* rows of fresh random data for the CPU~GPU column */
#define N_CASES (int)(sizeof cases / sizeof cases[0])

static void *host_alloc(size_t bytes, int pinned)
{
#if FM_HAVE_CUDA
    void *p = NULL;
    if (pinned)
        return cudaHostAlloc(&p, bytes, cudaHostAllocDefault) == cudaSuccess ? p : NULL;
#endif
    (void)pinned;
    return malloc(bytes);
}

static void host_free(void *p, int pinned)
{
#if FM_HAVE_CUDA
    if (pinned) {
        cudaFreeHost(p);
        return;
    }
#endif
    (void)pinned;
    free(p);
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unit(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return ((double)(mix(*s) >> 11) + 0.5) / 9007199254740992.0;
}

/* Simulated decays, bin-major: the paper's pattern (mono bars tau = 2, 2.5, 3, 4 ns across x, or
 * bi-exponential tauF 0.8, tauD 2.5 ns with fD 0.8 -> 0.2 across x), about `photons` per pixel;
 * random = 1: tau, fD and photons drawn per pixel instead (fresh data for the agreement check).
 * Poisson noise by its normal approximation (counts rounded, >= 0): only the timings and the
 * CPU/GPU agreement use these data, not accuracy. */
static void simulate(float *y, int W, int H, int nb, double dt, int bi, int random, double photons,
                     uint64_t seed)
{
    const int n = W * H;
    const double T = nb * dt;
#pragma omp parallel for schedule(static)
    for (int p = 0; p < n; p++) {
        uint64_t s = mix(seed ^ (uint64_t)p * 0x632be59bd9b4e019ull);
        const int x = p % W;
        double tf = 0.8, td = 2.5, fd, tau, N = photons;
        static const double bars[4] = {2.0, 2.5, 3.0, 4.0};
        if (random) {
            tau = 0.5 + 4.5 * unit(&s);
            tf = 0.3 + 1.2 * unit(&s);
            td = 1.6 + 3.4 * unit(&s);
            fd = unit(&s);
            N = 100 + 2900 * unit(&s);
        } else {
            tau = bars[x * 4 / W];
            fd = 0.8 - 0.6 * x / (W - 1.0);
        }
        double a_s = bi ? fd * td : 1.0, a_f = bi ? (1 - fd) * tf : 0.0;
        double norm = N / (a_s + a_f);
        for (int b = 0; b < nb; b++) {
            double mu;
            if (bi)
                mu =
                    norm * (fd * td * exp(-b * dt / td) * -expm1(-dt / td) / -expm1(-T / td) +
                            (1 - fd) * tf * exp(-b * dt / tf) * -expm1(-dt / tf) / -expm1(-T / tf));
            else
                mu = N * exp(-b * dt / tau) * -expm1(-dt / tau) / -expm1(-T / tau);
            double u1 = unit(&s), u2 = unit(&s);
            double v = mu + sqrt(mu) * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
            y[(size_t)b * n + p] = (float)(v > 0 ? floor(v + 0.5) : 0);
        }
    }
}

/* Maps a case writes (and the bench requests and moves back). */
static int case_maps(const flim_case *c, int *which)
{
    int k = 0;
    which[k++] = FM_FLIM_OUT_TAU;
    which[k++] = FM_FLIM_OUT_AMPLITUDE;
    which[k++] = FM_FLIM_OUT_INTENSITY;
    if (c->method == FM_FLIM_PHASOR) {
        which[k++] = FM_FLIM_OUT_PHASOR_G;
        which[k++] = FM_FLIM_OUT_PHASOR_S;
    }
    if (c->model == 2) {
        which[k++] = FM_FLIM_OUT_TAU_FAST;
        which[k++] = FM_FLIM_OUT_TAU_SLOW;
        which[k++] = FM_FLIM_OUT_FRACTION;
    }
    if (c->method >= FM_FLIM_LSM)
        which[k++] = FM_FLIM_OUT_CHI2;
    return k;
}

typedef struct {
    int W, H, nb;
    double dt;
    const float *counts;
    const int *segment;
    const uint16_t *counts16; /* when set: these uint16 counts instead of counts */
} workload;

/* One timed call; GPU runs are bracketed by CUDA events (the call returns only when its
 * results are on the host, so the events measure host to host, allocations included). */
static double time_once(const flim_case *c, const workload *w, fm_flim_outputs *out,
                        fm_backend backend, int variant, char *msg)
{
    fm_flim_params p;
    fm_flim_params_defaults(&p, w->nb, w->dt);
    p.model = c->model;
    p.tau_d_ns = 2.5;
    p.tau_init_ns[0] = c->model == 2 ? 0.5 : 2.0;
    p.tau_init_ns[1] = 3.0;
    p.min_photons = 10;
    p.cuda_variant = variant;
    const int n = w->W * w->H, nseg = (n + 31) / 32;
    double ms = -1;
#if FM_HAVE_CUDA
    cudaEvent_t e0 = NULL, e1 = NULL;
    if (backend == FM_BACKEND_CUDA) {
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        cudaEventRecord(e0, 0);
    }
#endif
    double t0 = fm_bench_now_ms();
    const void *counts = w->counts16 ? (const void *)w->counts16 : (const void *)w->counts;
    fm_status st =
        fm_flim_run_typed(c->method, &p, counts, w->counts16 ? FM_PIXEL_U16 : FM_PIXEL_F32, n, NULL,
                          w->segment, nseg, out, backend, NULL, NULL, NULL, msg, FM_MSG_LEN);
    ms = fm_bench_now_ms() - t0;
#if FM_HAVE_CUDA
    if (backend == FM_BACKEND_CUDA) {
        float ev = 0;
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        if (cudaEventElapsedTime(&ev, e0, e1) == cudaSuccess)
            ms = ev;
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
#endif
    return st == FM_OK ? ms : -1;
}

/* Median of reps after one warm-up. A CPU run over 1 s (the iterative fits) is timed once, its
 * warm-up being the measurement, so that the bench stays within minutes; the table says so. */
static double time_median(const flim_case *c, const workload *w, fm_flim_outputs *out,
                          fm_backend backend, int variant, int reps, int *reps_used, char *msg)
{
    double t[32], first = time_once(c, w, out, backend, variant, msg);
    *reps_used = 1;
    if (first < 0 || (backend == FM_BACKEND_CPU && first > 1000))
        return first;
    for (int r = 0; r < reps; r++)
        if ((t[r] = time_once(c, w, out, backend, variant, msg)) < 0)
            return -1;
    *reps_used = reps;
    return fm_bench_median(t, reps);
}

static double max_rel(const float *a, const float *b, size_t n, long *nan_mismatch)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            *nan_mismatch += isnan(a[i]) != isnan(b[i]);
            continue;
        }
        double d = fabs((double)a[i] - b[i]) / fmax(fabs((double)a[i]), 1e-3);
        e = d > e ? d : e;
    }
    return e;
}

static void run_table(const char *title, int W, int H, int nb, int first_case, int last_case,
                      int have_gpu, double h2d, double d2h, int quick)
{
    const int n = W * H, reps = quick ? 10 : 15;
    const double dt = 25.6 / nb;
    const size_t in_bytes = sizeof(float) * (size_t)n * nb;
    float *data[3] = {host_alloc(in_bytes, have_gpu), host_alloc(in_bytes, have_gpu),
                      host_alloc(in_bytes, have_gpu)};
    int *segment = malloc(sizeof(int) * (size_t)n);
    float *maps[2][FM_FLIM_OUT_COUNT] = {{0}};
    float *pageable_in = have_gpu ? malloc(in_bytes) : NULL, *pageable_out[FM_FLIM_OUT_COUNT];
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
        pageable_out[j] = malloc(sizeof(float) * (size_t)n);
    if (!data[0] || !data[1] || !data[2] || !segment) {
        printf("%s: no memory for the workload\n", title);
        goto done;
    }
    for (int p = 0; p < n; p++)
        segment[p] = p / 32;
    simulate(data[0], W, H, nb, dt, 0, 0, 1500, 11);
    simulate(data[1], W, H, nb, dt, 1, 0, 1500, 12);
    for (int g = 0; g < 2; g++)
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            maps[g][j] = host_alloc(sizeof(float) * (size_t)n, have_gpu);

    printf("\n%s: %dx%d pixels x %d bins x %.4f ns, float32 counts (%.1f MB), ~1500 photons/px\n",
           title, W, H, nb, dt, in_bytes / 1e6);
    printf("CPU: all threads; GPU: host->host from pinned buffers via the public entry point, "
           "CUDA events, median of %d after warm-up; pageable: the same from malloc buffers\n",
           reps);
    printf("%-9s %10s %9s %8s %9s %8s %9s %9s %9s %9s\n", "method", "CPU ms", "GPU ms", "speedup",
           "floor ms", "% floor", "pageable", "blk/px ms", "thr/px ms", "CPU~GPU");
    for (int ci = first_case; ci <= last_case; ci++) {
        const flim_case *c = &cases[ci];
        workload w = {W, H, nb, dt, data[c->model == 2 ? 1 : 0], segment, NULL};
        int which[FM_FLIM_OUT_COUNT], nm = case_maps(c, which), cpu_reps = 0, gpu_reps = 0;
        fm_flim_outputs out[2];
        char msg[FM_MSG_LEN] = "";
        for (int g = 0; g < 2; g++) {
            memset(&out[g], 0, sizeof out[g]);
            for (int j = 0; j < nm; j++)
                out[g].map[which[j]] = maps[g][which[j]];
        }
        double cpu = time_median(c, &w, &out[0], FM_BACKEND_CPU, 0, reps, &cpu_reps, msg);
        if (cpu < 0) {
            printf("%-9s CPU failed: %s\n", c->label, msg);
            continue;
        }
        printf("%-9s %10.2f", c->label, cpu);
        if (!have_gpu) {
            printf("%s\n", cpu_reps < reps ? "  (CPU: 1 run)" : "");
            continue;
        }
        double gpu = time_median(c, &w, &out[1], FM_BACKEND_CUDA, 0, reps, &gpu_reps, msg);
        if (gpu < 0) {
            printf("  GPU failed: %s\n", msg);
            continue;
        }
        const double up = sizeof(float) * (double)n * nb, down = sizeof(float) * (double)n * nm;
        const double floor_ms = fmax(up / (h2d * 1e6), down / (d2h * 1e6));
        double var[2] = {-1, -1}, pageable = -1;
        if (c->method < FM_FLIM_LSM && pageable_in) {
            /* The same call from pageable (malloc) buffers: the staged path. */
            workload wp = w;
            fm_flim_outputs op = {{0}};
            memcpy(pageable_in, w.counts, in_bytes);
            wp.counts = pageable_in;
            for (int j = 0; j < nm; j++)
                op.map[which[j]] = pageable_out[j];
            pageable = time_median(c, &wp, &op, FM_BACKEND_CUDA, 0, reps, &gpu_reps, msg);
        }
        if (c->method >= FM_FLIM_LSM)
            for (int v = 1; v <= 2; v++)
                var[v - 1] = time_median(c, &w, &out[1], FM_BACKEND_CUDA, v, reps, &gpu_reps, msg);
        /* Agreement on fresh random data (new seed, random tau, fD and photons per pixel) over
         * the first ACC_ROWS rows, which keeps the CPU fits short. */
        workload wa = w;
        wa.H = H < ACC_ROWS ? H : ACC_ROWS;
        const int na = W * wa.H;
        simulate(data[2], W, wa.H, nb, dt, c->model == 2, 1, 0, 1000 + ci);
        wa.counts = data[2];
        double e = -1;
        long nan_mismatch = 0;
        if (time_once(c, &wa, &out[0], FM_BACKEND_CPU, 0, msg) >= 0 &&
            time_once(c, &wa, &out[1], FM_BACKEND_CUDA, 0, msg) >= 0) {
            e = 0;
            for (int j = 0; j < nm; j++)
                e = fmax(e,
                         max_rel(maps[0][which[j]], maps[1][which[j]], (size_t)na, &nan_mismatch));
        }
        char v1[16] = "-", v2[16] = "-", pg[16] = "-";
        if (pageable > 0)
            snprintf(pg, sizeof pg, "%.3f", pageable);
        if (var[0] > 0)
            snprintf(v1, sizeof v1, "%.2f", var[0]);
        if (var[1] > 0)
            snprintf(v2, sizeof v2, "%.2f", var[1]);
        printf(" %9.3f %8.1f %9.3f %7.0f%% %9s %9s %9s %9.1e", gpu, cpu / gpu, floor_ms,
               100 * floor_ms / gpu, pg, v1, v2, e);
        if (nan_mismatch)
            printf(" NaN mismatches %ld", nan_mismatch);
        printf("%s\n", cpu_reps < reps ? "  (CPU: 1 run)" : "");
    }
    if (have_gpu)
        printf("floor: input up at %.1f GB/s and the maps down at %.1f GB/s, overlapped; "
               "CPU~GPU: max relative difference over every map (|cpu| >= 1e-3, else absolute) on "
               "fresh random data, %dx%d\n",
               h2d, d2h, W, H < ACC_ROWS ? H : ACC_ROWS);
done:
    for (int g = 0; g < 3; g++)
        host_free(data[g], have_gpu);
    for (int g = 0; g < 2; g++) {
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            host_free(maps[g][j], have_gpu);
    }
    free(segment);
    free(pageable_in);
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
        free(pageable_out[j]);
}

/* Every method on uint16 counts, as TCSPC hardware records them: half the bytes cross PCIe (the
 * issue's 2.5 ms floor is for these 134 MB; the fits widen them on the device). Pinned and
 * pageable (malloc) input; CPU~GPU compares the two backends' maps on this whole workload. */
static void run_u16_table(int W, int H, int nb, int have_gpu, double h2d, double d2h, int quick)
{
    const int n = W * H, reps = quick ? 10 : 15;
    const double dt = 25.6 / nb;
    const size_t count = (size_t)n * nb, in_bytes = sizeof(uint16_t) * count;
    float *f32[2] = {malloc(sizeof(float) * count), malloc(sizeof(float) * count)};
    uint16_t *pinned[2] = {host_alloc(in_bytes, have_gpu), host_alloc(in_bytes, have_gpu)};
    uint16_t *pageable = have_gpu ? malloc(in_bytes) : NULL;
    float *maps[2][FM_FLIM_OUT_COUNT] = {{0}}, *pageable_out[FM_FLIM_OUT_COUNT] = {0};
    int *segment = malloc(sizeof(int) * (size_t)n);
    if (!f32[0] || !f32[1] || !pinned[0] || !pinned[1] || (have_gpu && !pageable) || !segment) {
        printf("uint16 table: no memory for the workload\n");
        goto done;
    }
    simulate(f32[0], W, H, nb, dt, 0, 0, 1500, 11);
    simulate(f32[1], W, H, nb, dt, 1, 0, 1500, 12);
    for (int p = 0; p < n; p++)
        segment[p] = p / 32;
    for (int g = 0; g < 2; g++)
        for (size_t i = 0; i < count; i++)
            pinned[g][i] = (uint16_t)f32[g][i]; /* rounded counts >= 0, far below 65536 */
    for (int g = 0; g < 2; g++)
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            maps[g][j] = host_alloc(sizeof(float) * (size_t)n, have_gpu);
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
        pageable_out[j] = malloc(sizeof(float) * (size_t)n);

    printf("\nFLIM, uint16 counts: %dx%d pixels x %d bins (%.1f MB), the same "
           "decays as above\n",
           W, H, nb, in_bytes / 1e6);
    printf("GPU: host->host from pinned buffers, CUDA events, median of %d after warm-up; "
           "pageable: input and maps in malloc buffers (staged through pinned memory)\n",
           reps);
    printf("%-9s %10s %9s %8s %9s %8s %9s %8s %9s\n", "method", "CPU ms", "GPU ms", "speedup",
           "floor ms", "% floor", "pageable", "% floor", "CPU~GPU");
    for (int ci = 0; ci < N_CASES; ci++) {
        const flim_case *c = &cases[ci];
        workload w = {W, H, nb, dt, NULL, segment, pinned[c->model == 2 ? 1 : 0]};
        int which[FM_FLIM_OUT_COUNT], nm = case_maps(c, which), used = 0, cpu_used = 0;
        fm_flim_outputs out[2] = {{{0}}, {{0}}}, op = {{0}};
        char msg[FM_MSG_LEN] = "";
        for (int g = 0; g < 2; g++)
            for (int j = 0; j < nm; j++)
                out[g].map[which[j]] = maps[g][which[j]];
        for (int j = 0; j < nm; j++)
            op.map[which[j]] = pageable_out[j];
        double cpu = time_median(c, &w, &out[0], FM_BACKEND_CPU, 0, reps, &cpu_used, msg);
        if (cpu < 0) {
            printf("%-9s CPU failed: %s\n", c->label, msg);
            continue;
        }
        printf("%-9s %10.2f", c->label, cpu);
        if (!have_gpu) {
            printf("%s\n", cpu_used < reps ? "  (CPU: 1 run)" : "");
            continue;
        }
        double gpu = time_median(c, &w, &out[1], FM_BACKEND_CUDA, 0, reps, &used, msg);
        if (gpu < 0) {
            printf("  GPU failed: %s\n", msg);
            continue;
        }
        long nan_mismatch = 0;
        double e = 0;
        for (int j = 0; j < nm; j++)
            e = fmax(e, max_rel(maps[0][which[j]], maps[1][which[j]], (size_t)n, &nan_mismatch));
        workload wp = w;
        memcpy(pageable, w.counts16, in_bytes);
        wp.counts16 = pageable;
        double pg = time_median(c, &wp, &op, FM_BACKEND_CUDA, 0, reps, &used, msg);
        const double up = (double)in_bytes, down = sizeof(float) * (double)n * nm;
        const double floor_ms = fmax(up / (h2d * 1e6), down / (d2h * 1e6));
        printf(" %9.3f %8.1f %9.3f %7.0f%% %9.3f %7.0f%% %9.1e", gpu, cpu / gpu, floor_ms,
               100 * floor_ms / gpu, pg, pg > 0 ? 100 * floor_ms / pg : 0.0, e);
        if (nan_mismatch)
            printf(" NaN mismatches %ld", nan_mismatch);
        printf("%s\n", cpu_used < reps ? "  (CPU: 1 run)" : "");
    }
    if (have_gpu)
        printf("CPU~GPU: max relative difference over every map (|cpu| >= 1e-3, else absolute) on "
               "this workload, %dx%d; iterative rows: median of %d, CPU once when over 1 s\n",
               W, H, reps);
done:
    free(segment);
    for (int g = 0; g < 2; g++) {
        free(f32[g]);
        host_free(pinned[g], have_gpu);
        for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
            host_free(maps[g][j], have_gpu);
    }
    free(pageable);
    for (int j = 0; j < FM_FLIM_OUT_COUNT; j++)
        free(pageable_out[j]);
}

int bench_flim(int quick)
{
    char why[FM_MSG_LEN] = "";
    int have_gpu = 0;
    double h2d = 0, d2h = 0;
    printf("fluxmap-bench %s: flim%s\n", FM_VERSION, quick ? " (--quick)" : "");
    printf("CPU twin: %d OpenMP threads\n", fm_cpu_threads());
    if (fm_device_count(why, sizeof why) > 0) {
        fm_gpu_info gpu;
        if (fm_device_info(0, &gpu, why, sizeof why) == FM_OK) {
            have_gpu = 1;
            printf("GPU: %s, %.1f GiB, %d SMs, sm_%d%d\n", gpu.name,
                   gpu.total_memory_bytes / 1073741824.0, gpu.multiprocessors, gpu.compute_major,
                   gpu.compute_minor);
        }
    }
#if FM_HAVE_CUDA
    if (have_gpu) {
        /* PCIe ceilings: one 256 MB pinned copy each way, median of 5 after a warm-up. */
        fm_bench_pcie_ceilings((size_t)256 << 20, &h2d, &d2h);
        if (!(h2d > 0)) {
            printf("GPU: measuring PCIe failed; GPU columns omitted\n");
            have_gpu = 0;
        } else {
            printf("Measured ceilings: pinned H2D %.1f GB/s, pinned D2H %.1f GB/s\n", h2d, d2h);
        }
    }
#endif
    if (!have_gpu)
        printf("No CUDA device (%s): CPU column only\n", why);
    const int side = quick ? 256 : 512;
    run_table("FLIM, the paper's workload", side, side, 256, 0, N_CASES - 1, have_gpu, h2d, d2h,
              quick);
    run_u16_table(side, side, 256, have_gpu, h2d, d2h, quick);
    run_table("FLIM LSM, the paper's 128x128x128", 128, 128, 128, 6, 7, have_gpu, h2d, d2h, quick);
    return 0;
}
