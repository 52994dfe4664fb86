/* CUDA pharmacokinetic fits: one thread per voxel running the CPU twin's per-voxel functions
 * (pk_fit.h), the block's curves staged frame-major in shared memory; chunks of voxels stream
 * through pinned buffers on four streams; the fit runs in rounds (below); several GPUs split the
 * voxels. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "pk_fit.h"
#include "dce_gpus.cuh"

#define PK_BLOCK 64
/* Each chunk ends in a tail: its last rounds fit its few slowest voxels on a few SMs. Four chunks
 * in flight let the other chunks fill the GPU meanwhile, while the host stages and drains: on the
 * H100 (bench pk) 2CXM host->host went from 1641 to 1037 ms with 4 slots instead of 2, extended
 * Tofts 232 -> 285 ms; bigger chunks (a quarter of the voxels) gave 991 and 495 ms. */
#define N_SLOTS 4            /* chunks in flight, one stream each */
#define CHUNK_VOXELS 65536LL /* 1024 blocks: an H100 (132 SMs) many times over */
#ifndef PK_MIN_BLOCKS        /* bench variants: blocks per SM asked of the register allocator */
#define PK_MIN_BLOCKS 1
#endif
#define SMEM_MAX (200 * 1024) /* staged curves up to 800 frames; longer ones read global memory */

/* A warp runs until its slowest voxel stops, and the Levenberg-Marquardt cost evaluations of
 * voxels vary widely (2CXM on noisy data: a mean of 14, a warp's largest 130 on average). So the
 * fit runs in rounds: the first does the start and up to PK_FIRST_STOP evaluations, each next
 * round resumes the voxels left over (compacted into a list: full warps again) up to twice as
 * many, the last up to max_iterations. fm_pk_lm_steps resumes exactly (its state is x, lambda
 * and the count), so the result is the one uninterrupted fit's. */
#ifndef PK_FIRST_STOP /* bench variants: -DPK_FIRST_STOP=1000000 times one round */
#define PK_FIRST_STOP 8
#endif
#define PK_MAX_ROUNDS 40
#define PK_STATE (FM_PK_MAX_FIT + 2) /* x, lambda, evaluations */

typedef struct {
    double *state; /* PK_STATE x voxels: the state of the voxels left over */
    int *list[2];  /* voxels left over by the last round, ping-pong */
    int *count;    /* PK_MAX_ROUNDS: voxels left over by each round */
} pk_rounds;

/* Writes voxel v's record when its fit is done or out of evaluations, else parks its state and
 * lists it for the next round. */
__device__ static void pk_finish_or_park(const fm_pk_plan &p, const float *c, int stride,
                                         int n_voxels, int v, const double *x, double ss,
                                         double lambda, int it, int done, double *records,
                                         const pk_rounds &r, int *list_out, int *count_out)
{
    if (done || it >= p.max_iterations) {
        double rec[FM_PK_OUT_COUNT];
        fm_pk_record(&p, c, stride, x, ss, it, done, rec);
        for (int o = 0; o < FM_PK_OUT_COUNT; o++)
            records[(size_t)o * n_voxels + v] = rec[o];
        return;
    }
    for (int j = 0; j < p.n_fit; j++)
        r.state[(size_t)j * n_voxels + v] = x[j];
    r.state[(size_t)FM_PK_MAX_FIT * n_voxels + v] = lambda;
    r.state[(size_t)(FM_PK_MAX_FIT + 1) * n_voxels + v] = it;
    list_out[atomicAdd(count_out, 1)] = v;
}

/* First round. Thread t of the block fits voxel blockIdx.x * PK_BLOCK + t. With staging, the
 * block copies its PK_BLOCK consecutive curves (contiguous, voxel-major: coalesced reads) into
 * shared memory frame-major, so that the threads' reads of frame i fall in distinct banks; every
 * cost pass of the fit then reads shared memory instead of global memory. */
__global__ void __launch_bounds__(PK_BLOCK, PK_MIN_BLOCKS)
    pk_fit_kernel(const fm_pk_plan p, const float *tissue, int n_voxels, int staged,
                  double *records, const pk_rounds r, int it_stop)
{
    extern __shared__ float rows[];
    const int t = threadIdx.x, nt = p.n_times;
    const long long v0 = (long long)blockIdx.x * PK_BLOCK, v = v0 + t;
    const int nb = n_voxels - v0 < PK_BLOCK ? (int)(n_voxels - v0) : PK_BLOCK;
    const float *c = tissue + v * nt;
    int stride = 1;
    if (staged) {
        const float *base = tissue + v0 * nt;
        for (int k = t; k < nb * nt; k += PK_BLOCK) {
            const int q = k / nt, i = k - q * nt;
            rows[i * PK_BLOCK + q] = base[k];
        }
        __syncthreads();
        c = rows + t;
        stride = PK_BLOCK;
    }
    if (v >= n_voxels)
        return;
    if (!fm_pk_curve_finite(c, stride, nt)) {
        for (int o = 0; o < FM_PK_OUT_COUNT; o++)
            records[(size_t)o * n_voxels + v] = NAN;
        return;
    }
    double x[FM_PK_MAX_FIT], lambda = 1e-3;
    int it = 0, done = 0;
    fm_pk_start(&p, c, stride, x);
    const double ss =
        fm_pk_lm_steps(&p, c, stride, x, &lambda, &it,
                       it_stop < p.max_iterations ? it_stop : p.max_iterations, &done);
    pk_finish_or_park(p, c, stride, n_voxels, (int)v, x, ss, lambda, it, done, records, r,
                      r.list[0], r.count);
}

/* Later rounds: thread g resumes the g-th voxel left over by the last round, its curve copied
 * into the thread's own column of shared memory (frame-major, as in the first round). */
__global__ void __launch_bounds__(PK_BLOCK, PK_MIN_BLOCKS)
    pk_resume_kernel(const fm_pk_plan p, const float *tissue, int n_voxels, int staged,
                     double *records, const pk_rounds r, int round, int it_stop)
{
    extern __shared__ float rows[];
    const int t = threadIdx.x, nt = p.n_times;
    const int g = blockIdx.x * PK_BLOCK + t;
    if (g >= r.count[round - 1])
        return;
    const int v = r.list[(round - 1) & 1][g];
    const float *c = tissue + (size_t)v * nt;
    int stride = 1;
    if (staged) {
        for (int i = 0; i < nt; i++)
            rows[i * PK_BLOCK + t] = c[i];
        c = rows + t;
        stride = PK_BLOCK;
    }
    double x[FM_PK_MAX_FIT];
    for (int j = 0; j < p.n_fit; j++)
        x[j] = r.state[(size_t)j * n_voxels + v];
    double lambda = r.state[(size_t)FM_PK_MAX_FIT * n_voxels + v];
    int it = (int)r.state[(size_t)(FM_PK_MAX_FIT + 1) * n_voxels + v], done = 0;
    const double ss =
        fm_pk_lm_steps(&p, c, stride, x, &lambda, &it,
                       it_stop < p.max_iterations ? it_stop : p.max_iterations, &done);
    pk_finish_or_park(p, c, stride, n_voxels, v, x, ss, lambda, it, done, records, r,
                      r.list[round & 1], r.count + round);
}

/* Every round of the fit of nv curves (device memory) on stream s; records: FM_PK_OUT_COUNT x
 * nv. Rounds whose list is shorter than the grid end at once, so no round waits for the host. */
static cudaError_t pk_launch(const fm_pk_plan &p, const float *d_in, int nv, int staged,
                             size_t smem, double *d_rec, const pk_rounds &r, cudaStream_t s)
{
    const int blocks = (nv + PK_BLOCK - 1) / PK_BLOCK;
    const size_t sh = staged ? smem : 0;
    cudaError_t e = cudaMemsetAsync(r.count, 0, sizeof(int) * PK_MAX_ROUNDS, s);
    if (e != cudaSuccess)
        return e;
    long long stop = PK_FIRST_STOP;
    pk_fit_kernel<<<blocks, PK_BLOCK, sh, s>>>(p, d_in, nv, staged, d_rec, r, (int)stop);
    for (int round = 1; stop < p.max_iterations && round < PK_MAX_ROUNDS; round++) {
        stop = round + 1 == PK_MAX_ROUNDS ? p.max_iterations : 2 * stop;
        pk_resume_kernel<<<blocks, PK_BLOCK, sh, s>>>(
            p, d_in, nv, staged, d_rec, r, round,
            (int)(stop < p.max_iterations ? stop : p.max_iterations));
    }
    return cudaGetLastError();
}

static cudaError_t pk_rounds_alloc(pk_rounds *r, long long nv)
{
    cudaError_t e = cudaMalloc((void **)&r->state, (size_t)nv * PK_STATE * sizeof(double));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&r->list[0], (size_t)nv * sizeof(int));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&r->list[1], (size_t)nv * sizeof(int));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&r->count, PK_MAX_ROUNDS * sizeof(int));
    return e;
}

static void pk_rounds_free(pk_rounds *r)
{
    cudaFree(r->state);
    cudaFree(r->list[0]);
    cudaFree(r->list[1]);
    cudaFree(r->count);
    memset(r, 0, sizeof *r);
}

/* Selects device, lets both kernels stage smem bytes of curves when that is more than the default,
 * and uploads the same table bits as the CPU twin into *d_doubles (freed by the caller), p's
 * pointers rebased onto them. */
static fm_status pk_device_setup(int device, const fm_pk_tables *tab, int staged, size_t smem,
                                 double **d_doubles, fm_pk_plan *p, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    double *d = NULL;
    FM_CUDA_TRY(cudaSetDevice(device));
    if (staged && smem > 48 * 1024) {
        FM_CUDA_TRY(cudaFuncSetAttribute(pk_fit_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem));
        FM_CUDA_TRY(cudaFuncSetAttribute(pk_resume_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    }
    FM_CUDA_TRY(cudaMalloc((void **)d_doubles, tab->n_doubles * sizeof(double)));
    d = *d_doubles;
    FM_CUDA_TRY(
        cudaMemcpy(d, tab->doubles, tab->n_doubles * sizeof(double), cudaMemcpyHostToDevice));
    p->times = d + (p->times - tab->doubles);
    p->cp = d + (p->cp - tab->doubles);
    p->delays = d + (p->delays - tab->doubles);
    p->rates = d + (p->rates - tab->doubles);
    p->basis = d + (p->basis - tab->doubles);
    p->gram = d + (p->gram - tab->doubles);
cleanup:
    return status;
}

typedef fm_dce_gpu_work<fm_pk_job> gpu_work;

static void store_record(const fm_pk_job *job, long long v, const double *rec)
{
    fm_pk_store(job->params, job->out, v, rec);
}

/* Copies a finished chunk's records from pinned memory into the caller's maps. */
static void drain(gpu_work *w, const double *h_rec, fm_dce_pending *pc)
{
    fm_dce_drain<FM_PK_OUT_COUNT, FM_PK_OUT_RMSE, fm_pk_job, store_record>(w, h_rec, pc);
}

static fm_status run_device(gpu_work *w)
{
    const fm_pk_job *job = w->job;
    const fm_pk_tables *tab = job->tables;
    const int nt = tab->plan.n_times;
    char *msg = w->msg;
    size_t msg_len = sizeof w->msg;
    fm_status status = FM_OK;
    double *d_doubles = NULL;
    fm_dce_slot slot[N_SLOTS];
    pk_rounds rounds[N_SLOTS];
    memset(slot, 0, sizeof slot);
    memset(rounds, 0, sizeof rounds);
    const long long total = w->hi - w->lo;
    const long long chunk = total < CHUNK_VOXELS ? total : CHUNK_VOXELS;
    const size_t smem = sizeof(float) * PK_BLOCK * (size_t)nt;
    const int staged = smem <= SMEM_MAX;
    fm_pk_plan p = tab->plan;

    status = pk_device_setup(w->device, tab, staged, smem, &d_doubles, &p, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
    for (int k = 0; k < N_SLOTS && chunk > 0; k++)
        FM_CUDA_TRY(pk_rounds_alloc(&rounds[k], chunk));
    status = fm_dce_stream<N_SLOTS, FM_PK_OUT_COUNT, fm_pk_job, drain>(
        w, slot, chunk, nt, 1, [&](int k, int nv) {
            fm_status launched = FM_OK;
            const cudaError_t e = pk_launch(p, slot[k].d_in, nv, staged, smem, slot[k].d_rec,
                                            rounds[k], slot[k].stream);
            if (e != cudaSuccess)
                launched = fm_fail(FM_ERR_DEVICE, msg, msg_len, "%s:%d: pk_launch: %s", __FILE__,
                                   __LINE__, cudaGetErrorString(e));
            return launched;
        });
cleanup:
    fm_dce_slots_free(slot, N_SLOTS);
    for (int k = 0; k < N_SLOTS; k++)
        pk_rounds_free(&rounds[k]);
    cudaFree(d_doubles);
    return status;
}

extern "C" fm_status fm_pk_cuda_run(const fm_pk_job *job, char *msg, size_t msg_len)
{
    return fm_dce_cuda_split<fm_pk_job, run_device>(job, msg, msg_len);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" fm_status fm_pk_cuda_time_kernel(const fm_pk_job *job, int reps, double *median_ms,
                                            char *msg, size_t msg_len)
{
    const fm_pk_tables *tab = job->tables;
    const int nt = tab->plan.n_times, n = (int)job->n_voxels;
    const size_t smem = sizeof(float) * PK_BLOCK * (size_t)nt;
    const int staged = smem <= SMEM_MAX;
    fm_status status = FM_OK;
    double *d_doubles = NULL, *d_rec = NULL, t[32];
    float *d_in = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    fm_pk_plan p = tab->plan;
    pk_rounds rounds;
    memset(&rounds, 0, sizeof rounds);
    if (reps < 1 || reps > 32 || n < 1)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "reps 1..32 and voxels >= 1");
    status = pk_device_setup(0, tab, staged, smem, &d_doubles, &p, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
    FM_CUDA_TRY(cudaMalloc((void **)&d_in, (size_t)n * nt * sizeof(float)));
    FM_CUDA_TRY(cudaMalloc((void **)&d_rec, (size_t)n * FM_PK_OUT_COUNT * sizeof(double)));
    FM_CUDA_TRY(pk_rounds_alloc(&rounds, n));
    FM_CUDA_TRY(
        cudaMemcpy(d_in, job->tissue, (size_t)n * nt * sizeof(float), cudaMemcpyHostToDevice));
    FM_CUDA_TRY(cudaEventCreate(&e0));
    FM_CUDA_TRY(cudaEventCreate(&e1));
    for (int r = -1; r < reps; r++) {
        FM_CUDA_TRY(cudaEventRecord(e0));
        FM_CUDA_TRY(pk_launch(p, d_in, n, staged, smem, d_rec, rounds, 0));
        FM_CUDA_TRY(cudaEventRecord(e1));
        FM_CUDA_TRY(cudaEventSynchronize(e1));
        float ms = 0;
        FM_CUDA_TRY(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0)
            t[r] = ms;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *median_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
cleanup:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(d_in);
    cudaFree(d_rec);
    pk_rounds_free(&rounds);
    cudaFree(d_doubles);
    return status;
}
