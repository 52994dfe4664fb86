/* MCML CUDA against the CPU twin: totals, the A[r][z] relative-difference test of GPU-MCML's
 * Fig. 7, cache and R/T-only modes, cancel; 1e8 photons of the skin model against CPU MCML;
 * the same tallies on any number of GPUs (TAP; skips without a device). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/mcml/mcml.h"
#include "tap.h"

typedef struct {
    fm_mcml_result r;
    fm_run_info info;
    fm_status status;
    char msg[FM_MSG_LEN];
} run_out;

/* Run 1 of MCML's sample.mci with a finer grid for the voxel comparison. */
static fm_mcml_params sample_params(long long photons, unsigned long long seed)
{
    fm_mcml_params p = {.n_photons = photons, .dz_cm = 0.01, .dr_cm = 0.01, .nz = 40, .nr = 50,
                        .na = 5, .n_layers = 3, .n_above = 1.0, .n_below = 1.0,
                        .record_absorption = 1, .seed = seed, .shared_cache = 1};
    p.layers[0] = (fm_mcml_layer){1.37, 1.0, 100.0, 0.9, 0.1};
    p.layers[1] = (fm_mcml_layer){1.37, 1.0, 10.0, 0.0, 0.1};
    p.layers[2] = (fm_mcml_layer){1.37, 2.0, 10.0, 0.7, 0.2};
    return p;
}

static run_out run(const fm_mcml_params *p, fm_backend backend, fm_tick_fn tick, void *user)
{
    run_out o;
    memset(&o, 0, sizeof o);
    o.r.a_rz = calloc((size_t)p->nr * p->nz, sizeof(double));
    o.r.rd_ra = calloc((size_t)p->nr * p->na, sizeof(double));
    o.r.tt_ra = calloc((size_t)p->nr * p->na, sizeof(double));
    o.status = fm_mcml_run(p, &o.r, backend, tick, user, &o.info, o.msg, sizeof o.msg);
    return o;
}

static void run_free(run_out *o)
{
    free(o->r.a_rz);
    free(o->r.rd_ra);
    free(o->r.tt_ra);
}

static int close3(const char *what, double x, double sx, double y, double sy)
{
    double se = hypot(sx, sy), z = se > 0 ? fabs(x - y) / se : INFINITY;
    return tap_ok(z <= 3.0, "%s: CUDA %.5f vs CPU %.5f, %.2f combined standard errors (<= 3)",
                  what, x, y, z);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median |relative difference| of A[r][z] over voxels holding at least 1e-3 of the maximum
 * (where the counts are large enough for the difference to be statistical, not empty). */
static double median_rel_diff(const double *x, const double *y, int n)
{
    double mx = 0;
    for (int i = 0; i < n; i++)
        mx = fmax(mx, y[i]);
    double *d = malloc(sizeof(double) * n);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (y[i] > 1e-3 * mx && x[i] > 0)
            d[k++] = fabs(x[i] - y[i]) / y[i];
    qsort(d, (size_t)k, sizeof *d, cmp_double);
    double m = k ? d[k / 2] : NAN;
    free(d);
    return m;
}

/* GPU-MCML's seven-layer skin at 600 nm (7layerskin_600nm.mci, also the skin7_600nm preset): n,
 * mua, mus /cm, g, thickness cm per layer, in air, grid 500 x 200 x 30 of 20 um x 100 um. */
static fm_mcml_params skin_params(long long photons, unsigned long long seed)
{
    static const fm_mcml_layer layers[] = {
        {1.53, 0.2, 1000, 0.9, 0.002}, {1.34, 0.15, 400, 0.85, 0.008}, {1.4, 0.7, 300, 0.8, 0.01},
        {1.39, 1, 350, 0.9, 0.008},    {1.4, 0.7, 200, 0.76, 0.162},   {1.39, 1, 350, 0.95, 0.02},
        {1.44, 0.3, 150, 0.8, 0.59}};
    fm_mcml_params p = {.n_photons = photons, .dz_cm = 0.002, .dr_cm = 0.01, .nz = 500, .nr = 200,
                        .na = 30, .n_layers = 7, .n_above = 1.0, .n_below = 1.0,
                        .record_absorption = 1, .seed = seed, .shared_cache = 1};
    memcpy(p.layers, layers, sizeof layers);
    return p;
}

/* From 1e7 photons on, a grid larger than the cache gets the corner a CPU pilot run chose
 * (142 x 401 voxels for the skin model rather than the whole depth): the tallies stay those of the
 * cache-off run, bit for bit, carries and drops outside the corner included. */
static void check_skin_pilot_cache(void)
{
    fm_mcml_params p = skin_params(10000000, 5);
    run_out cached = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    p.shared_cache = 0;
    run_out plain = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    tap_ok(cached.status == FM_OK && plain.status == FM_OK && cached.r.a == plain.r.a &&
               memcmp(cached.r.a_rz, plain.r.a_rz, sizeof(double) * p.nr * p.nz) == 0,
           "skin 1e7, cache corner from the pilot: A[r][z] identical to the cache-off run "
           "(%.0f ms vs %.0f ms)",
           cached.info.elapsed_ms, plain.info.elapsed_ms);
    run_free(&cached);
    run_free(&plain);
}

/* 1e8 photons of the skin model against CPU MCML with a Mersenne Twister: the mean of the twelve
 * independent 1e8-photon runs in GPU-MCML's validation data (github.com/ominux/gpumcml, commit
 * 3e4ca77, validation/sim_output/cpumcml/MT_RNG; sources in tests/accuracy/test-mcml-accuracy.c),
 * totals and Rd(r) in rings. Our standard error is the runs' own spread (one run's standard
 * deviation, e.g. 4.0e-5 for Rd: an estimate from twelve runs, steadier than our sixteen
 * batches), combined with the standard error of their mean; 3 of them. */
static void check_skin_1e8(void)
{
    static const struct {
        int ir0, ir1;
        double rd, sd, se;
    } rings[] = {{0, 1, 0.077059, 1.72e-5, 5.0e-6},   {1, 2, 0.074424, 2.03e-5, 5.9e-6},
                 {2, 5, 0.162400, 4.18e-5, 1.21e-5},  {5, 10, 0.134105, 3.80e-5, 1.10e-5},
                 {10, 20, 0.086154, 2.53e-5, 7.3e-6}, {20, 50, 0.027305, 9.1e-6, 2.6e-6},
                 {50, 200, 0.001119, 1.5e-6, 4.3e-7}};
    fm_mcml_params p = skin_params(100000000, 16);
    run_out o;
    memset(&o, 0, sizeof o);
    double *rd_r = calloc((size_t)p.nr, sizeof(double));
    o.r.rd_r = rd_r;
    o.status = fm_mcml_run(&p, &o.r, FM_BACKEND_CUDA, NULL, NULL, &o.info, o.msg, sizeof o.msg);
    printf("# skin, 1e8 photons on %s: %.0f ms\n", o.info.device_name, o.info.elapsed_ms);
    tap_ok(o.status == FM_OK && o.r.photons_done == p.n_photons, "skin 1e8 run (%s)", o.msg);
    const struct {
        const char *what;
        double x, ref, sd, se;
    } totals[] = {{"Rd", o.r.rd, 0.5625664, 4.0e-5, 1.16e-5},
                  {"A", o.r.a, 0.3903000, 4.16e-5, 1.47e-5},
                  {"Tt", o.r.tt, 0.0032638, 1.92e-6, 5.6e-7}};
    for (size_t k = 0; k < sizeof totals / sizeof totals[0]; k++) {
        const double se = hypot(totals[k].sd, totals[k].se);
        tap_ok(fabs(totals[k].x - totals[k].ref) <= 3 * se,
               "skin 1e8 %s: CUDA %.7f vs CPU MCML (MT) %.7f, %.2f combined standard errors "
               "(<= 3)",
               totals[k].what, totals[k].x, totals[k].ref, fabs(totals[k].x - totals[k].ref) / se);
    }
    for (size_t k = 0; k < sizeof rings / sizeof rings[0]; k++) {
        double ring = 0;
        for (int ir = rings[k].ir0; ir < rings[k].ir1; ir++)
            ring += rd_r[ir] * 2 * 3.14159265358979323846 * (ir + 0.5) * p.dr_cm * p.dr_cm;
        const double se = hypot(rings[k].sd, rings[k].se);
        tap_ok(fabs(ring - rings[k].rd) <= 3 * se,
               "skin 1e8 Rd over %.2f..%.2f cm: CUDA %.6f vs CPU MCML (MT) %.6f, %.2f combined "
               "standard errors (<= 3)",
               rings[k].ir0 * p.dr_cm, rings[k].ir1 * p.dr_cm, ring, rings[k].rd,
               fabs(ring - rings[k].rd) / se);
    }
    free(rd_r);
}

/* Every GPU count gives the same tallies: each GPU runs a contiguous share of photon indices,
 * each photon its own stream, and the tallies are integers summed in any order. */
static void check_multi_gpu(int n_gpus)
{
    fm_mcml_params p = sample_params(2000000, 7);
    p.n_devices = 1;
    run_out one = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    for (int k = 2; k <= n_gpus; k++) {
        p.n_devices = k;
        run_out many = run(&p, FM_BACKEND_CUDA, NULL, NULL);
        tap_ok(one.status == FM_OK && many.status == FM_OK && many.r.rd == one.r.rd &&
                   many.r.a == one.r.a && many.r.tt == one.r.tt &&
                   many.r.photons_done == one.r.photons_done &&
                   memcmp(many.r.a_rz, one.r.a_rz, sizeof(double) * p.nr * p.nz) == 0 &&
                   memcmp(many.r.rd_ra, one.r.rd_ra, sizeof(double) * p.nr * p.na) == 0 &&
                   memcmp(many.r.tt_ra, one.r.tt_ra, sizeof(double) * p.nr * p.na) == 0,
               "%d GPUs: the same Rd, A, Tt, A[r][z], Rd[r][a] and Tt[r][a] as 1 GPU (%.0f vs "
               "%.0f ms) (%s)",
               k, many.info.elapsed_ms, one.info.elapsed_ms, many.msg);
        run_free(&many);
    }
    run_free(&one);
}

static int tick_cancel(void *user, double fraction)
{
    (void)user;
    return fraction > 0.0;
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    const long long n = 200000;
    fm_mcml_params p = sample_params(n, 1);
    run_out cpu1 = run(&p, FM_BACKEND_CPU, NULL, NULL);
    p.seed = 2;
    run_out cpu2 = run(&p, FM_BACKEND_CPU, NULL, NULL);
    p.seed = 3;
    run_out gpu = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    printf("# %lld photons: CPU %.0f ms (%s), CUDA %.0f ms (%s)\n", n, cpu1.info.elapsed_ms,
           cpu1.info.device_name, gpu.info.elapsed_ms, gpu.info.device_name);
    tap_ok(gpu.status == FM_OK && gpu.info.backend_used == FM_BACKEND_CUDA &&
               gpu.r.photons_done == n,
           "CUDA run (%s)", gpu.msg);
    close3("Rd", gpu.r.rd, gpu.r.rd_se, cpu1.r.rd, cpu1.r.rd_se);
    close3("A", gpu.r.a, gpu.r.a_se, cpu1.r.a, cpu1.r.a_se);
    close3("Tt", gpu.r.tt, gpu.r.tt_se, cpu1.r.tt, cpu1.r.tt_se);
    double sum = gpu.r.rsp + gpu.r.rd + gpu.r.a + gpu.r.tt;
    tap_ok(fabs(sum - 1.0) <= 1e-6, "CUDA: Rsp + Rd + A + Tt - 1 = %.2e (<= 1e-6)", sum - 1.0);

    /* GPU-MCML's Fig. 7: relative differences CPU-GPU spread like CPU-CPU with other seeds.
     * Both medians estimate the same quantity; 25 % covers their own noise at 2e5 photons. */
    int nv = p.nr * p.nz;
    double cc = median_rel_diff(cpu2.r.a_rz, cpu1.r.a_rz, nv);
    double gc = median_rel_diff(gpu.r.a_rz, cpu1.r.a_rz, nv);
    tap_ok(gc / cc > 0.8 && gc / cc < 1.25,
           "A[r][z] median relative difference CUDA-CPU %.4f vs CPU-CPU %.4f (ratio %.3f in "
           "0.8..1.25)", gc, cc, gc / cc);

    /* Same seed: the same per-photon streams and the same arithmetic but for the device's fast
     * functions, so nearly every photon follows the same path on both (a rounding difference
     * that flips a decision sends one photon elsewhere): most voxels agree to rounding, where
     * different streams differ by about 2 % (CPU-CPU above). A device generator that drifts
     * from the CPU's fails here. */
    p.seed = 1;
    run_out gpu1 = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    const double same = median_rel_diff(gpu1.r.a_rz, cpu1.r.a_rz, nv);
    tap_ok(same < 1e-3 && fabs(gpu1.r.rd - cpu1.r.rd) < 0.2 * cpu1.r.rd_se,
           "same seed: Rd CUDA %.6f CPU %.6f, A[r][z] median relative difference %.2e (< 1e-3; "
           "%.4f between seeds)",
           gpu1.r.rd, cpu1.r.rd, same, cc);

    /* Cache off and R/T-only change where tallies go, never the photons: integer sums make the
     * results identical. */
    p.shared_cache = 0;
    run_out nocache = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    tap_ok(nocache.status == FM_OK && nocache.r.rd == gpu1.r.rd &&
               memcmp(nocache.r.a_rz, gpu1.r.a_rz, sizeof(double) * nv) == 0,
           "shared-memory cache off: identical A[r][z] and totals");
    p.shared_cache = 1;
    p.record_absorption = 0;
    run_out rt = run(&p, FM_BACKEND_CUDA, NULL, NULL);
    tap_ok(rt.status == FM_OK && rt.r.rd == gpu1.r.rd && rt.r.tt == gpu1.r.tt &&
               rt.r.a == gpu1.r.a &&
               memcmp(rt.r.rd_ra, gpu1.r.rd_ra, sizeof(double) * p.nr * p.na) == 0,
           "R/T-only mode: identical Rd, Tt, A and Rd_ra");
    p.record_absorption = 1;

    /* One voxel for the whole grid: every block's cached 32-bit accumulator overflows many times
     * (about 900 unit weights per block at 2^31 per unit), so A_rz matches A only if every
     * overflow was carried into the 64-bit global voxel. */
    fm_mcml_params one = p;
    one.nz = 1;
    one.nr = 1;
    one.dz_cm = 1.0;
    one.dr_cm = 10.0;
    run_out o1 = run(&one, FM_BACKEND_CUDA, NULL, NULL);
    const double vol = 3.14159265358979323846 * one.dr_cm * one.dr_cm * one.dz_cm;
    tap_ok(o1.status == FM_OK && fabs(o1.r.a_rz[0] * vol - o1.r.a) < 1e-9 * o1.r.a,
           "one cached voxel: A_rz integrates to A (%.12f vs %.12f): 32-bit overflows carried",
           o1.r.a_rz[0] * vol, o1.r.a);

    /* Cancel: a tick that stops at the first progress keeps a partial run (the photons handed
     * out so far, all finished). */
    p.n_photons = 50000000;
    run_out cancelled = run(&p, FM_BACKEND_CUDA, tick_cancel, NULL);
    double s2 = cancelled.r.rsp + cancelled.r.rd + cancelled.r.a + cancelled.r.tt;
    tap_ok(cancelled.status == FM_ERR_CANCELLED && cancelled.r.photons_done > 0 &&
               cancelled.r.photons_done < p.n_photons && fabs(s2 - 1.0) < 1e-6,
           "CUDA cancel: %lld of %lld photons kept, sum - 1 = %.1e (%s)",
           cancelled.r.photons_done, p.n_photons, s2 - 1.0, cancelled.msg);

    check_skin_1e8();
    check_skin_pilot_cache();
    const int n_gpus = fm_device_count(NULL, 0);
    if (n_gpus >= 2)
        check_multi_gpu(n_gpus);
    else
        printf("# one GPU visible: the multi-GPU check needs two or more\n");

    run_free(&cpu1);
    run_free(&cpu2);
    run_free(&gpu);
    run_free(&gpu1);
    run_free(&nocache);
    run_free(&rt);
    run_free(&cancelled);
    run_free(&o1);
    return tap_done();
}
