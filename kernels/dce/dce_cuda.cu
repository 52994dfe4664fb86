/* CUDA DCE fit after Wang & Cao (2012): one block per voxel, threads over frequencies and time
 * points, a block-level FFT in shared memory, Nelder-Mead bookkeeping by thread 0 (or one warp per
 * voxel, dce_cuda_warp.cuh); chunks of voxels stream through pinned buffers on two streams;
 * several GPUs split the voxels. */
/* Every Nelder-Mead here is the DCE fit's 5-D one: unrolled bookkeeping (dce_nm.h). */
#define FM_NM_FIXED_N 5
#include <pthread.h>

#include "../cuda_staging.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cuda_check.h"
#include "../device_private.h"
#include "dce_impl.h"
#include "dce_gpus.cuh"

static_assert(FM_NM_FIXED_N == FM_DCE_N_PARAMS, "the fit's dimension is FM_DCE_N_PARAMS");

#define MAX_THREADS 256
/* 2 blocks of 256 per SM: 72 registers, no spills, with the unrolled Nelder-Mead. */
#define FM_DCE_BLOCK_MIN_BLOCKS 2
#define N_SLOTS 2            /* chunks in flight, one stream each */
#define CHUNK_VOXELS 65536LL /* enough blocks (or warps) to fill an H100 many times over */

#include "dce_cuda_warp.cuh"

/* One block fits one voxel. Every thread evaluates the same cost terms (dce_math.h) as the CPU
 * twin, in the same order per element; the block-wide sums follow the twin's pairwise tree, so
 * the costs, and therefore the simplex path, are the same bits on both backends. */
__global__ void __launch_bounds__(MAX_THREADS, FM_DCE_BLOCK_MIN_BLOCKS)
    dce_fit(const fm_dce_plan p, const nm_settings nm, const float *tissue, int n_voxels,
            double *records)
{
    extern __shared__ double smem[];
    __shared__ fm_nm_state s;
    __shared__ int more;
    __shared__ double x0[FM_DCE_N_PARAMS];
    const int n = p.n_fft, tid = threadIdx.x, nthreads = blockDim.x, v = blockIdx.x;
    double *y = smem, *r2 = y + fm_dce_fft_doubles(&p), *c = r2 + p.n_pad;
    const float *tv = tissue + (size_t)v * p.n_times;

    for (int i = tid; i < p.n_times; i += nthreads)
        c[i] = tv[i];
    __syncthreads();
    if (p.start_basis) { /* dot products by the block, the pick by warp 0 (blockDim >= 32) */
        for (int b = tid; b < FM_DCE_START_BASES; b += nthreads)
            y[b] = fm_dce_start_dot(&p, c, b);
        __syncthreads();
        if (tid < 32) {
            double x[FM_DCE_N_PARAMS];
            warp_start_pick(&p, y, tid, x);
            if (tid == 0)
                for (int i = 0; i < FM_DCE_N_PARAMS; i++)
                    x0[i] = x[i];
        }
    } else if (tid == 0) {
        for (int i = 0; i < FM_DCE_N_PARAMS; i++)
            x0[i] = nm.initial[i];
    }
    __syncthreads();
    if (tid == 0) {
        more = fm_dce_curve_finite(c, p.n_times);
        if (more) {
            const double tol =
                fm_dce_voxel_tolerance(nm.tolerance_mode, nm.tolerance, c, p.n_times);
            fm_nm_begin(&s, FM_DCE_N_PARAMS, x0, nm.max_iterations, 0, tol, -1.0);
            s.restarts = nm.restarts;
        }
    }
    __syncthreads();
    if (!more) {
        if (tid == 0) {
            double rec[FM_DCE_OUT_COUNT];
            fm_dce_record_invalid(rec);
            for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
                records[(size_t)o * n_voxels + v] = rec[o];
        }
        return;
    }
    for (;;) {
        fm_dce_eval e;
        fm_dce_eval_setup(&p, s.x, &e); /* one exp and a powering: cheap in every thread */
        for (int k = tid; k <= n / 2; k += nthreads)
            fm_dce_fill(&p, &e, k, y);
        __syncthreads();
        for (int half = 1; half < n; half *= 2) {
            for (int b = tid; b < n / 2; b += nthreads)
                fm_dce_butterfly(y, p.twiddle, n, half, b, 1);
            __syncthreads();
        }
        for (int i = tid; i < p.n_pad; i += nthreads)
            r2[i] = fm_dce_residual2(&p, &e, y, y + 1, 2, c, i);
        __syncthreads();
        for (int st = p.n_pad / 2; st > 0; st >>= 1) {
            for (int i = tid; i < st; i += nthreads)
                r2[i] += r2[i + st];
            __syncthreads();
        }
        if (tid == 0)
            more = fm_nm_feed(&s, FM_DMUL(r2[0], e.penalty));
        __syncthreads();
        if (!more)
            break;
    }
    if (tid == 0) {
        double rec[FM_DCE_OUT_COUNT];
        fm_dce_record(&p, &s, c, rec);
        for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
            records[(size_t)o * n_voxels + v] = rec[o];
    }
}

typedef fm_dce_gpu_work<fm_dce_job> gpu_work;

static void store_record(const fm_dce_job *job, long long v, const double *rec)
{
    fm_dce_store(job->out, v, rec);
}

/* Copies a finished chunk's records from pinned memory into the caller's maps. */
static void drain(gpu_work *w, const double *h_rec, fm_dce_pending *pc)
{
    fm_dce_drain<FM_DCE_OUT_COUNT, FM_DCE_OUT_KA, fm_dce_job, store_record>(w, h_rec, pc);
}

static fm_status run_device(gpu_work *w)
{
    const fm_dce_job *job = w->job;
    const fm_dce_tables *tab = job->tables;
    const int nt = job->plan->n_times;
    char *msg = w->msg;
    size_t msg_len = sizeof w->msg;
    fm_status status = FM_OK;
    double *d_doubles = NULL;
    int *d_ints = NULL;
    fm_dce_slot slot[N_SLOTS];
    int *d_next[N_SLOTS] = {NULL, NULL}; /* warp kernel: next voxel of the chunk to take */
    memset(slot, 0, sizeof slot);
    const long long total = w->hi - w->lo;
    const long long chunk = total < CHUNK_VOXELS ? total : CHUNK_VOXELS;
    fm_dce_plan p = *job->plan;
    nm_settings nm;
    int threads = p.n_fft / 2;
    threads = threads < 32 ? 32 : (threads > MAX_THREADS ? MAX_THREADS : threads);
    const size_t smem = sizeof(double) * fm_dce_work_doubles(&p);
    /* Both layouts compute the same bits; the warp one wins while its buffers stay small. */
    const int use_warp =
        job->params->cuda_kernel != FM_DCE_CUDA_BLOCK && p.n_fft <= FM_DCE_WARP_MAX_FFT;
    const warp_layout lay = warp_layout_of(&p);
    const size_t warp_smem = sizeof(double) * ((size_t)lay.table_doubles +
                                               (size_t)FM_DCE_WARPS_PER_BLOCK * lay.warp_doubles);
    int warp_blocks = 0; /* resident blocks of the warp kernel on this GPU: a persistent grid */
    const int dense = job->params->cuda_kernel == FM_DCE_CUDA_WARP_DENSE;
    const bool r128 = p.n_fft == 128; /* its own cost path: dce_cuda_r128.cuh */
    void (*warp_kernel)(fm_dce_plan, const nm_settings, const warp_layout, const float *, int,
                        double *, int *) =
        dense ? (r128 ? dce_fit_warp<FM_DCE_WARP_DENSE_MIN_BLOCKS, true>
                      : dce_fit_warp<FM_DCE_WARP_DENSE_MIN_BLOCKS, false>)
              : (r128 ? dce_fit_warp<FM_DCE_WARP_MIN_BLOCKS, true>
                      : dce_fit_warp<FM_DCE_WARP_MIN_BLOCKS, false>);

    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        nm.initial[i] = job->params->initial[i];
    nm.tolerance = job->params->tolerance;
    nm.max_iterations = job->params->max_iterations;
    nm.tolerance_mode = (int)job->params->tolerance_mode;
    nm.restarts = job->params->restarts;

    FM_CUDA_TRY(cudaSetDevice(w->device));
    if (smem > 48 * 1024)
        FM_CUDA_TRY(
            cudaFuncSetAttribute(dce_fit, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    if (use_warp) {
        int per_sm = 0, n_sm = 0;
        if (warp_smem > 48 * 1024)
            FM_CUDA_TRY(cudaFuncSetAttribute(
                warp_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)warp_smem));
        FM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, warp_kernel, FM_DCE_WARPS_PER_BLOCK * 32, warp_smem));
        FM_CUDA_TRY(cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, w->device));
        warp_blocks = (per_sm > 0 ? per_sm : 1) * n_sm;
    }
    /* The same table bits as the CPU twin, rebased onto device pointers. */
    FM_CUDA_TRY(cudaMalloc((void **)&d_doubles, tab->n_doubles * sizeof(double)));
    FM_CUDA_TRY(cudaMalloc((void **)&d_ints, tab->n_ints * sizeof(int)));
    FM_CUDA_TRY(cudaMemcpy(d_doubles, tab->doubles, tab->n_doubles * sizeof(double),
                           cudaMemcpyHostToDevice));
    FM_CUDA_TRY(cudaMemcpy(d_ints, tab->ints, tab->n_ints * sizeof(int), cudaMemcpyHostToDevice));
    p.twiddle = d_doubles + (p.twiddle - tab->doubles);
    p.spectrum = d_doubles + (p.spectrum - tab->doubles);
    p.ca_grid = d_doubles + (p.ca_grid - tab->doubles);
    p.cp_grid = d_doubles + (p.cp_grid - tab->doubles);
    p.frame_w = d_doubles + (p.frame_w - tab->doubles);
    p.frame_j = d_ints + (p.frame_j - tab->ints);
    if (p.start_basis) { /* read from global memory: once per voxel, too large to share */
        p.start_basis = d_doubles + (p.start_basis - tab->doubles);
        p.start_gram = d_doubles + (p.start_gram - tab->doubles);
        p.start_grid = d_doubles + (p.start_grid - tab->doubles);
    }

    for (int k = 0; k < N_SLOTS && chunk > 0; k++)
        FM_CUDA_TRY(cudaMalloc((void **)&d_next[k], sizeof(int)));
    status = fm_dce_stream<N_SLOTS, FM_DCE_OUT_COUNT, fm_dce_job, drain>(
        w, slot, chunk, nt, 0, [&](int k, int nv) {
            fm_status status = FM_OK;
            const cudaStream_t stream = slot[k].stream;
            if (use_warp) {
                const int blocks =
                    (int)((nv + FM_DCE_WARPS_PER_BLOCK - 1) / FM_DCE_WARPS_PER_BLOCK);
                FM_CUDA_TRY(cudaMemsetAsync(d_next[k], 0, sizeof(int), stream));
                const int grid = blocks < warp_blocks ? blocks : warp_blocks;
                warp_kernel<<<grid, FM_DCE_WARPS_PER_BLOCK * 32, warp_smem, stream>>>(
                    p, nm, lay, slot[k].d_in, nv, slot[k].d_rec, d_next[k]);
                FM_CUDA_CHECK_LAUNCH("dce_fit_warp");
            } else {
                dce_fit<<<nv, threads, smem, stream>>>(p, nm, slot[k].d_in, nv, slot[k].d_rec);
                FM_CUDA_CHECK_LAUNCH("dce_fit");
            }
        cleanup:
            return status;
        });
cleanup:
    fm_dce_slots_free(slot, N_SLOTS);
    for (int k = 0; k < N_SLOTS; k++)
        cudaFree(d_next[k]);
    cudaFree(d_doubles);
    cudaFree(d_ints);
    return status;
}

extern "C" fm_status fm_dce_cuda_run(const fm_dce_job *job, char *msg, size_t msg_len)
{
    return fm_dce_cuda_split<fm_dce_job, run_device>(job, msg, msg_len);
}
