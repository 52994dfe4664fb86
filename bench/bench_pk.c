/* fluxmap-bench pk: the standard pharmacokinetic models (Tofts, extended Tofts, Patlak, 2CXM,
 * 2CUM) on a 256 x 256 x 32 volume of 100-frame curves, each voxel simulated from a population
 * input with its own random parameters and noise; CUDA host->host and kernel alone beside the
 * CPU twin on all cores in the same run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fm_config.h"
#include "kernels/dce/pk.h"
#include "kernels/dce/pk_impl.h"
#include "kernels/device.h"

int bench_pk(int quick);

#define PK_NT 100
#define PK_DT 3.0 /* s: 5 minutes, a usual DCE-MRI protocol */

/* Counter-based random numbers (splitmix64 of the voxel, frame and use): the same volume on any
 * thread count. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform_at(uint64_t key)
{
    return ((double)(mix(key) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss_at(uint64_t key)
{
    return sqrt(-2 * log(uniform_at(2 * key))) * cos(2 * M_PI * uniform_at(2 * key + 1));
}

/* Parker's population blood curve (Parker et al., MRM 56 (2006) 993, eq. 1, Table 1; t in min),
 * arriving 20 s into the series; plasma = blood / (1 - 0.42). */
static double parker_plasma(double t_s)
{
    const double t = (t_s - 20) / 60;
    const double a[2] = {0.809, 0.330}, tc[2] = {0.17046, 0.365}, sg[2] = {0.0563, 0.132};
    double cb = 1.050 * exp(-0.1685 * t) / (1 + exp(-38.078 * (t - 0.483)));
    for (int k = 0; k < 2; k++)
        cb +=
            a[k] / (sg[k] * sqrt(2 * M_PI)) * exp(-(t - tc[k]) * (t - tc[k]) / (2 * sg[k] * sg[k]));
    return cb / (1 - 0.42);
}

/* Random tissue per voxel in ranges seen in tumours and normal tissue: ktrans 0.01-0.6 /min,
 * ve 0.05-0.6, vp 0.005-0.15, Fp 5-150 ml/100ml/min, PS 0.01-0.4 /min; noise sd 0.02 mM
 * (peaks of 0.1-2 mM). */
static void simulate(const fm_pk_params *p, float *tissue, long long nv)
{
    const int nt = p->n_times;
#pragma omp parallel for schedule(static)
    for (long long v = 0; v < nv; v++) {
        const uint64_t key = (uint64_t)v * 1024;
        double th[FM_PK_N_PARAMS] = {0.01 + 0.59 * uniform_at(key + 1),
                                     0.05 + 0.55 * uniform_at(key + 2),
                                     0.005 + 0.145 * uniform_at(key + 3),
                                     5 + 145 * uniform_at(key + 4),
                                     0.01 + 0.39 * uniform_at(key + 5),
                                     0},
               curve[PK_NT];
        char msg[FM_MSG_LEN];
        fm_pk_model_curve(p, th, curve, msg, sizeof msg);
        for (int i = 0; i < nt; i++)
            tissue[v * nt + i] = (float)(curve[i] + 0.02 * gauss_at(key + 8 + (uint64_t)i));
    }
}

static void alloc_maps(fm_pk_outputs *o, long long n)
{
    for (int k = 0; k < FM_PK_OUT_COUNT; k++)
        o->map[k] = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
}

static void free_maps(fm_pk_outputs *o)
{
    for (int k = 0; k < FM_PK_OUT_COUNT; k++)
        free(o->map[k]);
}

/* Median of reps wall times of fm_pk_fit after one warm-up (3 when a run exceeds 3 s). */
static double time_fit(const fm_pk_params *p, const float *tissue, long long nv, fm_pk_outputs *o,
                       fm_backend backend, int reps, int *reps_done, char *msg)
{
    double t[16];
    fm_run_info info;
    for (int r = -1; r < reps; r++) {
        if (fm_pk_fit(p, tissue, nv, o, backend, NULL, NULL, &info, msg, FM_MSG_LEN) != FM_OK)
            return -1;
        if (r >= 0)
            t[r] = info.elapsed_ms;
        if (r == -1 && info.elapsed_ms > 3000 && reps > 3)
            reps = 3;
    }
    *reps_done = reps;
    return fm_bench_median(t, reps);
}

static int wanted(const char *list, const char *name)
{
    if (!list || !*list)
        return 1;
    const size_t n = strlen(name);
    for (const char *s = strstr(list, name); s; s = strstr(s + 1, name))
        if ((s == list || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))
            return 1;
    return 0;
}

static void run_model(fm_pk_model model, long long nv, int have_gpu, int quick)
{
    double times[PK_NT], cp[PK_NT];
    for (int i = 0; i < PK_NT; i++) {
        times[i] = i * PK_DT;
        cp[i] = parker_plasma(times[i]);
    }
    fm_pk_params p;
    fm_pk_params_defaults(&p, model);
    p.n_times = PK_NT;
    p.times_s = times;
    p.cp = cp;
    const char *maxit = getenv("FLUXMAP_BENCH_PK_MAXIT");
    if (maxit && atoi(maxit) > 0)
        p.max_iterations = atoi(maxit);
    float *tissue = malloc(sizeof(float) * PK_NT * (size_t)nv);
    char msg[FM_MSG_LEN] = "";
    if (!tissue) {
        printf("%-15s out of memory\n", fm_pk_model_name(model));
        return;
    }
    simulate(&p, tissue, nv);
    /* CPU twin on the first voxels (4096 per thread), extrapolated to voxels/s. */
    const long long n_cpu = nv < 4096LL * fm_cpu_threads() ? nv : 4096LL * fm_cpu_threads();
    fm_pk_outputs oc, og;
    alloc_maps(&oc, n_cpu);
    int reps_cpu = 0, reps_gpu = 0;
    const double cpu_ms = time_fit(&p, tissue, n_cpu, &oc, FM_BACKEND_CPU, 3, &reps_cpu, msg);
    /* Converged share, mean iterations and the mean of each warp's (32 voxels) largest count
     * on the CPU subset: a warp runs until its slowest voxel stops. */
    double conv_c = 0, iters = 0, warp_max = 0;
    for (long long w0 = 0; w0 < n_cpu; w0 += 32) {
        double m = 0;
        for (long long v = w0; v < w0 + 32 && v < n_cpu; v++) {
            conv_c += oc.map[FM_PK_OUT_CONVERGED][v];
            iters += oc.map[FM_PK_OUT_ITERATIONS][v];
            m = fmax(m, oc.map[FM_PK_OUT_ITERATIONS][v]);
        }
        warp_max += m;
    }
    iters /= n_cpu;
    warp_max /= (n_cpu + 31) / 32;
    printf("%-15s %8lld %10.0f |", fm_pk_model_name(model), nv, n_cpu / cpu_ms * 1e3);
    if (cpu_ms < 0) {
        printf(" CPU failed: %s\n", msg);
        goto done_cpu;
    }
    if (!have_gpu) {
        printf(" %9s %10s %9s %10s %7s | %6s %6.2f%% %6.1f %6.1f | %7s %7s\n", "-", "-", "-", "-",
               "-", "-", 100 * conv_c / n_cpu, iters, warp_max, "-", "-");
        goto done_cpu;
    }
    alloc_maps(&og, nv);
    const double h2h =
        time_fit(&p, tissue, nv, &og, FM_BACKEND_CUDA, quick ? 3 : 10, &reps_gpu, msg);
    double kern = -1;
#if FM_HAVE_CUDA
    if (h2h >= 0) {
        fm_pk_tables tab;
        long long invalid = 0;
        if (fm_pk_tables_build(&p, &tab, msg, sizeof msg) == FM_OK) {
            fm_pk_job job = {.params = &p,
                             .tables = &tab,
                             .tissue = tissue,
                             .n_voxels = nv,
                             .invalid = &invalid};
            if (fm_pk_cuda_time_kernel(&job, h2h > 3000 ? 3 : (quick ? 3 : 10), &kern, msg,
                                       sizeof msg) != FM_OK)
                kern = -1;
            fm_pk_tables_free(&tab);
        }
    }
#endif
    if (h2h < 0) {
        printf(" CUDA failed: %s\n", msg);
        goto done;
    }
    double conv_g = 0;
    for (long long v = 0; v < nv; v++)
        conv_g += og.map[FM_PK_OUT_CONVERGED][v];
    /* The CUDA test's criteria on the CPU subset: rmse within 1e-6 relative, parameters within
     * 1e-4 of their bound range. */
    long long rmse_off = 0, param_off = 0;
    for (long long v = 0; v < n_cpu; v++) {
        const double rc = oc.map[FM_PK_OUT_RMSE][v], rg = og.map[FM_PK_OUT_RMSE][v];
        rmse_off += !(fabs(rg - rc) <= 1e-6 * rc);
        double dp = 0;
        for (int s = 0; s < FM_PK_N_PARAMS; s++)
            if (fm_pk_model_uses(&p, s)) {
                const int o = s == FM_PK_DELAY ? FM_PK_OUT_DELAY : s;
                dp = fmax(dp, fabs(og.map[o][v] - oc.map[o][v]) / (p.upper[s] - p.lower[s]));
            }
        param_off += !(dp <= 1e-4);
    }
    printf(" %9.1f %10.0f %9.1f %10.0f %6.1fx | %6.2f%% %6.2f%% %6.1f %6.1f | %6.3f%% %6.3f%%"
           "%s\n",
           h2h, nv / h2h * 1e3, kern, kern > 0 ? nv / kern * 1e3 : 0, (nv / h2h) / (n_cpu / cpu_ms),
           100 * conv_g / nv, 100 * conv_c / n_cpu, iters, warp_max, 100.0 * rmse_off / n_cpu,
           100.0 * param_off / n_cpu, reps_gpu < 10 ? "  (median of 3)" : "");
done:
    free_maps(&og);
done_cpu:
    free_maps(&oc);
    free(tissue);
}

int bench_pk(int quick)
{
    printf("fluxmap-bench %s: pk%s\n", FM_VERSION, quick ? " (--quick)" : "");
    printf("CPU twin: %d OpenMP threads\n", fm_cpu_threads());
    const int have_gpu = fm_bench_print_gpus();
    /* Device-time savers: FLUXMAP_BENCH_PK_VOXELS=n fits n voxels, FLUXMAP_BENCH_PK_MODELS=a,b
     * times those models only (names as fm_pk_model_name); for profiling,
     * FLUXMAP_BENCH_PK_MAXIT=n stops every fit after n cost evaluations (1: about the start
     * alone). */
    long long nv = quick ? 256LL * 256 * 4 : 256LL * 256 * 32;
    const char *nv_env = getenv("FLUXMAP_BENCH_PK_VOXELS"),
               *models = getenv("FLUXMAP_BENCH_PK_MODELS");
    if (nv_env && atoll(nv_env) > 0)
        nv = atoll(nv_env);
    fm_pk_params d;
    fm_pk_params_defaults(&d, FM_PK_TOFTS);
    const char *maxit = getenv("FLUXMAP_BENCH_PK_MAXIT");
    if (maxit && atoi(maxit) > 0)
        d.max_iterations = atoi(maxit);
    printf("\nPharmacokinetic fits, %lld voxels x %d frames every %.0f s, Parker's population "
           "input, random tissue per voxel (ktrans 0.01-0.6 /min, ve 0.05-0.6, vp 0.005-0.15, Fp "
           "5-150 ml/100ml/min, PS 0.01-0.4 /min), noise sd 0.02 mM; defaults (OSIPI bounds, no "
           "delay, <= %d iterations, tolerance %g)\n",
           nv, PK_NT, PK_DT, d.max_iterations, d.tolerance);
    printf("CPU: median of 3 runs after warm-up on the first %d voxels (4096 per thread), as "
           "voxels/s. CUDA h2h: fm_pk_fit wall time host->host (tables, pinned staging, "
           "transfers, maps), median of %d runs after warm-up (3 when a run exceeds 3 s); "
           "kernel: the fit kernel alone over all voxels resident on GPU 0, CUDA events, same "
           "medians\n",
           4096 * fm_cpu_threads(), quick ? 3 : 10);
    printf("conv: voxels converged (GPU all, CPU subset); iters: mean LM iterations, warpmx: "
           "mean over warps of 32 voxels of the largest (CPU subset); off: CPU-subset voxels where "
           "the GPU's "
           "rmse differs > 1e-6 relative / a parameter > 1e-4 of its range (the CUDA test "
           "allows 0.5 %% / 3 %%)\n");
    printf("%-15s %8s %10s | %9s %10s %9s %10s %7s | %7s %7s %6s %6s | %7s %7s\n", "model",
           "voxels", "CPU vox/s", "h2h ms", "h2h vox/s", "kernel ms", "kern vox/s", "vs CPU",
           "conv G", "conv C", "iters", "warpmx", "rmse of", "par off");
    for (int m = 0; m < FM_PK_N_MODELS; m++)
        if (wanted(models, fm_pk_model_name((fm_pk_model)m)))
            run_model((fm_pk_model)m, nv, have_gpu, quick);
    return 0;
}
