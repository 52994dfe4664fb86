/* fluxmap-bench dce: the paper's Table 2 (10,000 voxels, Nt 32..448) and a whole liver
 * (626,400 voxels, Nt 48), CPU twin on all cores beside the GPU in the same run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "fm_config.h"
#include "kernels/dce/dce.h"
#include "kernels/device.h"

int bench_dce(int quick);

static uint64_t rng = 0x853c49e6748fea9bull;

/* Device-time savers for profiling and quick comparisons (unset: the full bench):
 * FLUXMAP_BENCH_DCE_ROWS=liver skips the Table 2 rows, FLUXMAP_BENCH_DCE_VOXELS=n fits n voxels
 * in the liver rows, FLUXMAP_BENCH_DCE_LAYOUTS=auto times the default layout only, =warp the
 * default and dense layouts (not the block one). */
static int env_layouts(const char *which)
{
    const char *s = getenv("FLUXMAP_BENCH_DCE_LAYOUTS");
    return s && strcmp(s, which) == 0;
}

static int env_auto_only(void)
{
    return env_layouts("auto");
}

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static double gamma_variate(double t, double t0, double a, double alpha, double beta)
{
    return t > t0 ? a * pow(t - t0, alpha) * exp(-(t - t0) / beta) : 0.0;
}

/* Arterial bolus with recirculation; portal = arterial 5 s later dispersed over 8 s. */
static double aif(double t)
{
    return 0.02 + gamma_variate(t, 10, 1.2, 3, 1.5) + gamma_variate(t, 22, 0.03, 3, 3);
}

static double pvif(double t)
{
    const double h = 0.02;
    double sum = 0;
    for (double s = 0; s <= t; s += h)
        sum += (aif(s - 5) - 0.02) * exp(-(t - s) / 8) / 8 * h;
    return 0.02 + sum;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double *times, *ca, *cp;
    fm_dce_params p;
    float *tissue;
    long long n_voxels;
} workload;

/* Nt frames over the paper's 113.76 s acquisition (48 x 2.37 s); 4096 distinct parameter sets
 * around the paper's truth, tiled over the voxels, each voxel with its own noise at CNR 20. */
static int make_workload(workload *w, int nt, long long nv)
{
    const double duration = 48 * 2.37;
    w->times = malloc(sizeof(double) * nt);
    w->ca = malloc(sizeof(double) * nt);
    w->cp = malloc(sizeof(double) * nt);
    w->tissue = malloc(sizeof(float) * nt * nv);
    double *curves = malloc(sizeof(double) * nt * 4096), *peak = malloc(sizeof(double) * 4096);
    if (!w->times || !w->ca || !w->cp || !w->tissue || !curves || !peak)
        return 0;
    for (int i = 0; i < nt; i++) {
        w->times[i] = i * duration / nt;
        w->ca[i] = aif(w->times[i]);
        w->cp[i] = pvif(w->times[i]);
    }
    fm_dce_params_defaults(&w->p);
    w->p.n_times = nt;
    w->p.times_s = w->times;
    w->p.ca = w->ca;
    w->p.cp = w->cp;
    w->n_voxels = nv;
    char msg[FM_MSG_LEN];
    for (int k = 0; k < 4096; k++) {
        double th[FM_DCE_N_PARAMS] = {20 * (0.5 + uniform()), 100 * (0.5 + uniform()),
                                      400 * (0.5 + uniform()), 2 * uniform(), 4 * uniform()};
        fm_dce_model(&w->p, th, curves + (size_t)k * nt, msg, sizeof msg);
        peak[k] = 0;
        for (int i = 0; i < nt; i++)
            peak[k] = fmax(peak[k], curves[(size_t)k * nt + i]);
    }
    for (long long v = 0; v < nv; v++) {
        const int k = (int)(v % 4096);
        for (int i = 0; i < nt; i++)
            w->tissue[v * nt + i] = (float)(curves[(size_t)k * nt + i] + peak[k] / 20 * gauss());
    }
    free(curves);
    free(peak);
    return 1;
}

static void free_workload(workload *w)
{
    free(w->times);
    free(w->ca);
    free(w->cp);
    free(w->tissue);
}

static double **alloc_maps(fm_dce_outputs *o, long long n)
{
    for (int k = 0; k < FM_DCE_OUT_COUNT; k++)
        o->map[k] = malloc(sizeof(double) * (n > 0 ? n : 1));
    return o->map;
}

static void free_maps(fm_dce_outputs *o)
{
    for (int k = 0; k < FM_DCE_OUT_COUNT; k++)
        free(o->map[k]);
}

/* Median wall time of fm_dce_fit on the GPU over reps runs after one warm-up (3 runs when one
 * exceeds 3 s); og receives the maps. Returns < 0 on failure (message in msg). */
static double time_gpu(const fm_dce_params *p, const float *tissue, long long nv,
                       fm_dce_outputs *og, int quick, char *msg, size_t msg_len)
{
    double t[10];
    int reps = quick ? 3 : 10;
    fm_run_info ig;
    for (int r = -1; r < reps; r++) {
        if (fm_dce_fit(p, tissue, nv, og, FM_BACKEND_CUDA, NULL, NULL, &ig, msg, msg_len) != FM_OK)
            return -1;
        if (r >= 0)
            t[r] = ig.elapsed_ms;
        if (r == 0 && ig.elapsed_ms > 3000)
            reps = 3; /* long runs: median of 3 */
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    return t[reps / 2];
}

/* Largest relative difference of ka..rmse between GPU maps g and the CPU maps c on the first n
 * voxels (delays against a 1e-3 s floor), and the voxels whose iteration counts differ. */
static double agreement(const fm_dce_outputs *g, const fm_dce_outputs *c, long long n,
                        long long *iter_diff)
{
    double worst = 0;
    *iter_diff = 0;
    for (long long v = 0; v < n; v++) {
        for (int o = 0; o <= FM_DCE_OUT_RMSE; o++)
            worst = fmax(worst, fabs(g->map[o][v] - c->map[o][v]) /
                                    fmax(fabs(c->map[o][v]), o >= 3 && o <= 4 ? 1e-3 : 1e-12));
        *iter_diff += g->map[FM_DCE_OUT_ITERATIONS][v] != c->map[FM_DCE_OUT_ITERATIONS][v];
    }
    return worst;
}

/* The defaults, or for comparison the paper's fixed start with the default stopping rule, or the
 * paper's start and stopping rule (absolute 1e-8, 600 iterations, one run). */
typedef enum { DEFAULTS, FIXED_START, PAPER } variant;

static void run_case(const char *label, int nt, long long nv, int have_gpu, int quick,
                     variant which)
{
    workload w;
    char msg[FM_MSG_LEN] = "";
    if (!make_workload(&w, nt, nv)) {
        printf("%-12s out of memory\n", label);
        return;
    }
    if (which != DEFAULTS)
        w.p.start = FM_DCE_START_INITIAL;
    if (which == PAPER) {
        w.p.tolerance = 1e-8;
        w.p.tolerance_mode = FM_DCE_TOL_ABSOLUTE;
        w.p.max_iterations = 600;
        w.p.restarts = 0;
    }
    /* CPU twin on a subset: 32 voxels per thread, extrapolated to the whole workload. */
    const long long n_cpu = nv < 32LL * fm_cpu_threads() ? nv : 32LL * fm_cpu_threads();
    fm_dce_outputs oc, og;
    alloc_maps(&oc, n_cpu);
    fm_run_info ic;
    fm_status sc =
        fm_dce_fit(&w.p, w.tissue, n_cpu, &oc, FM_BACKEND_CPU, NULL, NULL, &ic, msg, sizeof msg);
    const double cpu_us = ic.elapsed_ms * 1e3 / n_cpu;
    double iters = 0, conv = 0;
    for (long long v = 0; v < n_cpu; v++) {
        iters += oc.map[FM_DCE_OUT_ITERATIONS][v];
        conv += oc.map[FM_DCE_OUT_CONVERGED][v];
    }
    printf("%-12s %7lld %4d %9.1f %11.1f%s |", label, nv, nt, cpu_us, cpu_us * nv / 1e6,
           n_cpu < nv ? "*" : " ");
    if (sc != FM_OK) {
        printf(" CPU failed: %s\n", msg);
        goto done;
    }
    if (have_gpu) {
        /* AUTO (warp per voxel up to FFT length 512) and the paper's block per voxel. */
        alloc_maps(&og, nv);
        w.p.cuda_kernel = FM_DCE_CUDA_AUTO;
        const double gpu_ms = time_gpu(&w.p, w.tissue, nv, &og, quick, msg, sizeof msg);
        long long iter_diff = 0, iter_diff_b = 0;
        const double worst = gpu_ms < 0 ? 0 : agreement(&og, &oc, n_cpu, &iter_diff);
        w.p.cuda_kernel = FM_DCE_CUDA_BLOCK;
        const int others = gpu_ms >= 0 && !env_auto_only();
        const int block = others && !env_layouts("warp");
        const double block_ms =
            !block ? gpu_ms : time_gpu(&w.p, w.tissue, nv, &og, quick, msg, sizeof msg);
        const double worst_b =
            block_ms < 0 ? 0 : (block ? agreement(&og, &oc, n_cpu, &iter_diff_b) : worst);
        if (!block)
            iter_diff_b = iter_diff;
        w.p.cuda_kernel = FM_DCE_CUDA_WARP_DENSE;
        const double dense_ms = !others || block_ms < 0
                                    ? block_ms
                                    : time_gpu(&w.p, w.tissue, nv, &og, quick, msg, sizeof msg);
        long long iter_diff_d = 0;
        const double worst_d =
            dense_ms < 0 ? 0 : (others ? agreement(&og, &oc, n_cpu, &iter_diff_d) : worst);
        if (!others)
            iter_diff_b = iter_diff_d = iter_diff;
        free_maps(&og);
        if (gpu_ms < 0 || block_ms < 0 || dense_ms < 0) {
            printf(" GPU failed: %s\n", msg);
            goto done;
        }
        printf(" %9.2f %9.3f %8.0f %9.2f %9.2f | %6.0f %5.1f%% | %8.1e %6lld %8.1e %6lld %8.1e "
               "%6lld\n",
               gpu_ms, gpu_ms * 1e3 / nv, cpu_us * nv / 1e3 / gpu_ms, block_ms, dense_ms,
               iters / n_cpu, 100 * conv / n_cpu, worst, iter_diff, worst_b, iter_diff_b, worst_d,
               iter_diff_d);
    } else {
        printf(" %9s %9s %8s %9s %9s | %6.0f %5.1f%% | %8s %6s %8s %6s %8s %6s\n", "-", "-", "-",
               "-", "-", iters / n_cpu, 100 * conv / n_cpu, "-", "-", "-", "-", "-", "-");
    }
done:
    free_maps(&oc);
    free_workload(&w);
}

int bench_dce(int quick)
{
    printf("fluxmap-bench %s: dce%s\n", FM_VERSION, quick ? " (--quick)" : "");
    printf("CPU twin: %d OpenMP threads\n", fm_cpu_threads());
    const int have_gpu = fm_bench_print_gpus();
    fm_dce_params d;
    fm_dce_params_defaults(&d);
    printf("\nDCE dual-input fit (Nelder-Mead from the grid start, relative tolerance %g, %d "
           "restarts, <= %d iterations, double), frames over 113.76 s, CNR 20, random truths "
           "around ka 20, kp "
           "100, kl 400, tau 0-2 / 0-4 s\n",
           d.tolerance, d.restarts, d.max_iterations);
    printf("CPU: one run on %d voxels (32 per thread); * = total extrapolated from that subset. "
           "GPU: wall time host->host (tables, pinned staging, transfers, all GPUs), median of "
           "%d runs after warm-up (3 when a run exceeds 3 s); GPU ms = the default layout (one "
           "warp per voxel up to FFT length %d, 20 warps/SM), block ms = one block per voxel "
           "(the paper's), dense ms = warp per voxel with 24 warps/SM (80 registers)\n",
           32 * fm_cpu_threads(), quick ? 3 : 10, FM_DCE_WARP_MAX_FFT);
    printf("agreement: max relative difference GPU vs CPU over ka..rmse on the CPU subset, and "
           "voxels whose iteration counts differ (default layout, then block, then dense)\n");
    if (env_auto_only())
        printf("FLUXMAP_BENCH_DCE_LAYOUTS=auto: block and dense columns repeat the default\n");
    if (env_layouts("warp"))
        printf("FLUXMAP_BENCH_DCE_LAYOUTS=warp: the block column repeats the default\n");
    printf("%-12s %7s %4s %9s %12s | %9s %9s %8s %9s %9s | %6s %6s | %8s %6s %8s %6s %8s %6s\n",
           "workload", "voxels", "Nt", "CPU us/vx", "CPU total s", "GPU ms", "GPU us/vx",
           "speed-up", "block ms", "dense ms", "iters", "conv", "max rel", "it.diff", "blk rel",
           "it.dif", "dns rel", "it.dif");
    const char *rows = getenv("FLUXMAP_BENCH_DCE_ROWS");
    const char *nv_env = getenv("FLUXMAP_BENCH_DCE_VOXELS");
    long long liver = quick ? 62640 : 626400;
    if (nv_env && atoll(nv_env) > 0)
        liver = atoll(nv_env);
    static const int table2[] = {32, 64, 128, 256, 320, 448};
    for (int i = 0; i < 6 && !(rows && strcmp(rows, "liver") == 0); i++)
        run_case("Table 2", table2[i], quick ? 2000 : 10000, have_gpu, quick, DEFAULTS);
    run_case("whole liver", 48, liver, have_gpu, quick, DEFAULTS);
    printf(
        "fixed start: every voxel from the paper's (10, 80, 200, 2, 3), default stopping rule\n");
    run_case("liver/fixed", 48, liver, have_gpu, quick, FIXED_START);
    printf("paper's start and rule: absolute tolerance 1e-8, <= 600 iterations, no restart\n");
    run_case("liver/paper", 48, liver, have_gpu, quick, PAPER);
    return 0;
}
