/* MCML chunks on the GPU: 1e8 photons of the seven-layer skin model in one run, as 100 chunks in
 * one call and as 100 chunks in two calls ("tasks") give the same tallies bit for bit, and the
 * times of one run against 100 chunks are printed (the target: 100 chunks of 1e10 photons
 * within 5 % of one run). FM_MCML_CHUNK_PHOTONS overrides the photon count (1e10 for the issue's
 * benchmark). A chunk on the CPU twin and on the GPU agree as kernels-mcml-cuda's same-seed runs
 * do. TAP; skips without a device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/device.h"
#include "kernels/mcml/mcml_chunks.h"
#include "tap.h"

static fm_mcml_params skin_params(long long photons, unsigned long long seed)
{
    static const fm_mcml_layer layers[] = {
        {1.53, 0.2, 1000, 0.9, 0.002}, {1.34, 0.15, 400, 0.85, 0.008}, {1.4, 0.7, 300, 0.8, 0.01},
        {1.39, 1, 350, 0.9, 0.008},    {1.4, 0.7, 200, 0.76, 0.162},   {1.39, 1, 350, 0.95, 0.02},
        {1.44, 0.3, 150, 0.8, 0.59}};
    fm_mcml_params p = {.n_photons = photons,
                        .dz_cm = 0.002,
                        .dr_cm = 0.01,
                        .nz = 500,
                        .nr = 200,
                        .na = 30,
                        .n_layers = 7,
                        .n_above = 1.0,
                        .n_below = 1.0,
                        .record_absorption = 1,
                        .seed = seed,
                        .shared_cache = 1};
    memcpy(p.layers, layers, sizeof layers);
    return p;
}

typedef struct {
    fm_mcml_raw sum;
    const fm_mcml_params *p;
    long long calls;
    int all_cuda;
} collect;

static fm_status add_chunk(void *user, long long chunk, const fm_mcml_raw *raw,
                           const fm_run_info *info, char *msg, size_t msg_len)
{
    collect *c = user;
    fm_mcml_raw_add(&c->sum, raw, c->p);
    c->calls++;
    c->all_cuda &= info->backend_used == FM_BACKEND_CUDA;
    return FM_OK;
}

/* Runs chunks lo..hi-1 of n_chunks into c (allocated on first use); the call's wall time. */
static double run_on(const fm_mcml_params *p, fm_backend backend, long long n_chunks, long long lo,
                     long long hi, collect *c, fm_status *status, char *msg, size_t msg_len)
{
    if (!c->p) {
        fm_mcml_raw_alloc(&c->sum, p, 1, msg, msg_len);
        c->p = p;
        c->all_cuda = 1;
    }
    long long *chunks = malloc(sizeof *chunks * (size_t)(hi - lo));
    for (long long k = lo; k < hi; k++)
        chunks[k - lo] = k;
    fm_run_info info;
    *status = fm_mcml_run_chunks(p, n_chunks, chunks, hi - lo, backend, NULL, NULL, add_chunk, c,
                                 &info, msg, msg_len);
    free(chunks);
    return info.elapsed_ms;
}

static double run_range(const fm_mcml_params *p, long long n_chunks, long long lo, long long hi,
                        collect *c, fm_status *status, char *msg, size_t msg_len)
{
    return run_on(p, FM_BACKEND_CUDA, n_chunks, lo, hi, c, status, msg, msg_len);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median |relative difference| of A[r][z] over voxels holding at least 1e-3 of the maximum. */
static double median_rel_diff(const double *x, const double *y, size_t n)
{
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        mx = y[i] > mx ? y[i] : mx;
    double *d = malloc(sizeof(double) * n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (y[i] > 1e-3 * mx && x[i] > 0)
            d[k++] = fabs(x[i] - y[i]) / y[i];
    qsort(d, k, sizeof *d, cmp_double);
    double m = k ? d[k / 2] : NAN;
    free(d);
    return m;
}

static int same_sum(const collect *a, const collect *b, const fm_mcml_params *p)
{
    const size_t n_rz = (size_t)p->nr * p->nz, n_ra = (size_t)p->nr * p->na;
    return memcmp(a->sum.a_rz, b->sum.a_rz, n_rz * 8) == 0 &&
           memcmp(a->sum.a_rz_hi, b->sum.a_rz_hi, n_rz * 8) == 0 &&
           memcmp(a->sum.rd_ra, b->sum.rd_ra, n_ra * 8) == 0 &&
           memcmp(a->sum.tt_ra, b->sum.tt_ra, n_ra * 8) == 0 &&
           memcmp(a->sum.batch, b->sum.batch, sizeof a->sum.batch) == 0 &&
           memcmp(a->sum.batch_hi, b->sum.batch_hi, sizeof a->sum.batch_hi) == 0 &&
           a->sum.photons_done == b->sum.photons_done;
}

/* A result with the arrays the comparisons read. */
static void result_alloc(fm_mcml_result *r, const fm_mcml_params *p)
{
    memset(r, 0, sizeof *r);
    r->a_rz = calloc((size_t)p->nr * p->nz, sizeof(double));
    r->rd_ra = calloc((size_t)p->nr * p->na, sizeof(double));
    r->tt_ra = calloc((size_t)p->nr * p->na, sizeof(double));
}

static void result_free(fm_mcml_result *r)
{
    free(r->a_rz);
    free(r->rd_ra);
    free(r->tt_ra);
}

int main(void)
{
    char why[FM_MSG_LEN] = "";
    if (fm_device_count(why, sizeof why) == 0) {
        printf("1..0 # SKIP no CUDA device (%s)\n", why);
        return 0;
    }
    const char *env = getenv("FM_MCML_CHUNK_PHOTONS");
    const long long n = env ? (long long)strtod(env, NULL) : 100000000LL;
    const fm_mcml_params p = skin_params(n, 11);
    const size_t n_rz = (size_t)p.nr * p.nz, n_ra = (size_t)p.nr * p.na;
    char msg[FM_MSG_LEN] = "";
    fm_status s;

    /* the device's start outside the timings */
    fm_mcml_params warm = skin_params(100000, 1);
    collect w = {0};
    run_range(&warm, 1, 0, 1, &w, &s, msg, sizeof msg);
    tap_ok(s == FM_OK && w.all_cuda, "warm-up on the GPU (%s)", msg);

    /* one run, unchunked: the baseline time and the bits the chunks must add up to */
    fm_mcml_result one, merged;
    result_alloc(&one, &p);
    result_alloc(&merged, &p);
    fm_run_info info;
    s = fm_mcml_run(&p, &one, FM_BACKEND_CUDA, NULL, NULL, &info, msg, sizeof msg);
    const double t1 = info.elapsed_ms;
    tap_ok(s == FM_OK && info.backend_used == FM_BACKEND_CUDA && one.photons_done == n,
           "%lld photons in one run on %s (%s)", n, info.device_name, msg);

    collect hundred = {0}, tasks = {0};
    const double t100 = run_range(&p, 100, 0, 100, &hundred, &s, msg, sizeof msg);
    tap_ok(s == FM_OK && hundred.calls == 100 && hundred.all_cuda,
           "%lld photons as 100 chunks in one call (%s)", n, msg);
    fm_mcml_normalise(&p, &hundred.sum, &merged, msg, sizeof msg);
    tap_ok(merged.photons_done == n && merged.rd == one.rd && merged.a == one.a &&
               merged.tt == one.tt && merged.rd_se == one.rd_se &&
               memcmp(merged.a_rz, one.a_rz, n_rz * sizeof(double)) == 0 &&
               memcmp(merged.rd_ra, one.rd_ra, n_ra * sizeof(double)) == 0 &&
               memcmp(merged.tt_ra, one.tt_ra, n_ra * sizeof(double)) == 0,
           "100 chunks merged: Rd %.7f A %.7f, A[r][z], Rd[r][a], Tt[r][a] bit for bit those of "
           "the unchunked run (Rd %.7f A %.7f)",
           merged.rd, merged.a, one.rd, one.a);

    run_range(&p, 100, 50, 100, &tasks, &s, msg, sizeof msg);
    fm_status s2 = s;
    run_range(&p, 100, 0, 50, &tasks, &s, msg, sizeof msg);
    tap_ok(s == FM_OK && s2 == FM_OK && tasks.calls == 100 && same_sum(&hundred, &tasks, &p),
           "100 chunks as two tasks (50-99, then 0-49): the same tallies bit for bit (%s)", msg);
    /* One chunk on each backend: the same photon streams and arithmetic but for the GPU's fast
     * functions (kernels-mcml-cuda's same-seed test, for a chunk in the middle of a run). */
    const fm_mcml_params small = skin_params(20000000, 5);
    collect on_cpu = {0}, on_gpu = {0};
    fm_status sc, sg;
    run_on(&small, FM_BACKEND_CPU, 100, 7, 8, &on_cpu, &sc, msg, sizeof msg);
    run_on(&small, FM_BACKEND_CUDA, 100, 7, 8, &on_gpu, &sg, msg, sizeof msg);
    fm_mcml_result rc, rg;
    result_alloc(&rc, &small);
    result_alloc(&rg, &small);
    fm_mcml_normalise(&small, &on_cpu.sum, &rc, msg, sizeof msg);
    fm_mcml_normalise(&small, &on_gpu.sum, &rg, msg, sizeof msg);
    const double same = median_rel_diff(rg.a_rz, rc.a_rz, n_rz);
    tap_ok(sc == FM_OK && sg == FM_OK && on_gpu.all_cuda && rg.photons_done == 200000 &&
               same < 1e-3 && fabs(rg.rd - rc.rd) < 0.2 * rc.rd_se,
           "chunk 7 of 100 (photons 1.4e6..1.6e6): Rd CUDA %.6f CPU %.6f, A[r][z] median "
           "relative difference %.2e (< 1e-3)",
           rg.rd, rc.rd, same);
    result_free(&rc);
    result_free(&rg);
    fm_mcml_raw_free(&on_cpu.sum);
    fm_mcml_raw_free(&on_gpu.sum);

    printf("# %lld photons of the skin model (A[r][z] 500 x 200) on %s: one run %.1f ms, "
           "100 chunks %.1f ms in one call (%+.1f %%; the issue's target, for 1e10 photons: "
           "within 5 %%)\n",
           n, info.device_name, t1, t100, 100.0 * (t100 - t1) / t1);
    result_free(&one);
    result_free(&merged);
    fm_mcml_raw_free(&w.sum);
    fm_mcml_raw_free(&hundred.sum);
    fm_mcml_raw_free(&tasks.sum);
    return tap_done();
}
