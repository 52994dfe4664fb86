/* CUDA MCML after GPU-MCML (Alerstam et al. 2010): persistent threads, the high-fluence corner
 * of A[r][z] cached in shared memory with 64-bit integer accumulators, the last absorption kept
 * in registers, 64-bit global atomics elsewhere, and one host thread per GPU. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "mcml_impl.h"

#define THREADS 256
/* -DMCML_MIN_BLOCKS=n (for timing) asks ptxas to fit n blocks per SM; by default its own choice
 * (74 registers for sm_90, CUDA 13.0: 3 blocks; a bare minimum of 1 lets it take 106). */
#ifdef MCML_MIN_BLOCKS
#define MCML_BOUNDS __launch_bounds__(THREADS, MCML_MIN_BLOCKS)
#else
#define MCML_BOUNDS __launch_bounds__(THREADS)
#endif
/* Shared memory asked for per block: small enough for several resident blocks per SM (the
 * paper's trade-off between cache size and occupancy). */
#define CACHE_BYTES (40 * 1024)
#define N_LAYER_SLOTS (FM_MCML_MAX_LAYERS + 2)

typedef unsigned long long u64;

/* Adds one merged absorption run to the shared cache (the paper's high-fluence region near the
 * source) or, outside it, to global memory. */
__device__ __forceinline__ void flush_voxel(int ir, int iz, u64 q, u64 *s_cache, int cache_r,
                                            int cache_z, u64 *a_rz, int nz)
{
    if (q == 0)
        return;
    if (ir < cache_r && iz < cache_z)
        atomicAdd(s_cache + ir * cache_z + iz, q);
    else
        atomicAdd(a_rz + (size_t)ir * nz + iz, q);
}

__global__ void MCML_BOUNDS
    mcml_photons(const fm_mcml_medium medium, u64 seed, u64 *next, u64 end, u64 *a_rz, u64 *rd_ra,
                 u64 *tt_ra, u64 *a_layer, u64 *batch, int cache_r, int cache_z)
{
    __shared__ fm_mcml_medium m; /* lanes in different layers read it without serialising */
    extern __shared__ u64 smem[];
    u64 *s_layer = smem, *s_batch = smem + N_LAYER_SLOTS;
    u64 *s_cache = s_batch + FM_MCML_BATCHES * FM_MCML_B_N;
    const int n_cache = a_rz ? cache_r * cache_z : 0;
    if (threadIdx.x == 0)
        m = medium;
    for (int i = threadIdx.x; i < N_LAYER_SLOTS + FM_MCML_BATCHES * FM_MCML_B_N + n_cache;
         i += blockDim.x)
        smem[i] = 0;
    __syncthreads();

    const int nz = m.nz, na = m.na;
    const u64 q0 = FM_MCML_Q(m.w0);
    fm_mcml_photon p;
    fm_mcml_event ev;
    p.dead = 1;
    int have = 0, escape = 0;
    u64 index = 0, escaped = 0;
    int last_ir = 0, last_iz = 0, lay = 0; /* last absorption kept in registers */
    u64 last_q = 0, lay_q = 0;
    for (;;) {
        if (p.dead) {
            if (have) {
                u64 *b = s_batch + (index % FM_MCML_BATCHES) * FM_MCML_B_N;
                atomicAdd(b + FM_MCML_B_COUNT, 1ull);
                if (escaped)
                    atomicAdd(b + (escape == 1 ? FM_MCML_B_RD : FM_MCML_B_TT), escaped);
                atomicAdd(b + FM_MCML_B_A, q0 + (u64)p.roulette_q - escaped);
                if (p.roulette_q)
                    atomicAdd(b + FM_MCML_B_ROUL, (u64)p.roulette_q);
            }
            index = atomicAdd(next, 1ull);
            if (index >= end)
                break;
            fm_mcml_launch(&p, &m, seed, index);
            have = 1;
            escape = 0;
            escaped = 0;
        }
        fm_mcml_step(&p, &m, &ev);
        if (ev.absorb_q) {
            if (ev.absorb_layer != lay) {
                if (lay_q)
                    atomicAdd(s_layer + lay, lay_q);
                lay = ev.absorb_layer;
                lay_q = 0;
            }
            lay_q += ev.absorb_q;
            if (a_rz) {
                if (ev.absorb_ir != last_ir || ev.absorb_iz != last_iz) {
                    flush_voxel(last_ir, last_iz, last_q, s_cache, cache_r, cache_z, a_rz, nz);
                    last_ir = ev.absorb_ir;
                    last_iz = ev.absorb_iz;
                    last_q = 0;
                }
                last_q += ev.absorb_q;
            }
        }
        if (ev.escape) {
            u64 *ra = ev.escape == 1 ? rd_ra : tt_ra;
            atomicAdd(ra + (size_t)ev.escape_ir * na + ev.escape_ia, ev.escape_q);
            escape = ev.escape;
            escaped = ev.escape_q;
        }
    }
    if (a_rz)
        flush_voxel(last_ir, last_iz, last_q, s_cache, cache_r, cache_z, a_rz, nz);
    if (lay_q)
        atomicAdd(s_layer + lay, lay_q);
    __syncthreads();
    for (int i = threadIdx.x; i < n_cache; i += blockDim.x)
        if (s_cache[i])
            atomicAdd(a_rz + (size_t)(i / cache_z) * nz + i % cache_z, s_cache[i]);
    for (int i = threadIdx.x; i < N_LAYER_SLOTS; i += blockDim.x)
        if (s_layer[i])
            atomicAdd(a_layer + i, s_layer[i]);
    for (int i = threadIdx.x; i < FM_MCML_BATCHES * FM_MCML_B_N; i += blockDim.x)
        if (s_batch[i])
            atomicAdd(batch + i, s_batch[i]);
}

typedef struct {
    const fm_mcml_job *job;
    int device;
    long long lo, hi;          /* photon indices of this GPU */
    u64 *a_rz, *rd_ra, *tt_ra; /* host copies of this GPU's tallies */
    u64 a_layer[N_LAYER_SLOTS];
    u64 batch[FM_MCML_BATCHES * FM_MCML_B_N];
    long long done; /* photons finished, read by the polling thread */
    volatile int *cancel;
    int finished;
    fm_status status;
    char msg[FM_MSG_LEN];
} gpu_work;

static fm_status run_device(gpu_work *w)
{
    const fm_mcml_params *prm = &w->job->params;
    char *msg = w->msg;
    size_t msg_len = sizeof w->msg;
    fm_status status = FM_OK;
    const size_t n_rz = (size_t)prm->nr * prm->nz, n_ra = (size_t)prm->nr * prm->na;
    const int record = prm->record_absorption != 0;
    u64 *d_a_rz = NULL, *d_rd = NULL, *d_tt = NULL, *d_layer = NULL, *d_batch = NULL,
        *d_next = NULL;
    cudaStream_t stream = NULL;
    cudaDeviceProp prop;
    int per_sm = 0, cache_r = 0, cache_z = 0;

    FM_CUDA_TRY(cudaSetDevice(w->device));
    FM_CUDA_TRY(cudaGetDeviceProperties(&prop, w->device));
    FM_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    if (record) {
        FM_CUDA_TRY(cudaMalloc((void **)&d_a_rz, n_rz * sizeof(u64)));
        FM_CUDA_TRY(cudaMemsetAsync(d_a_rz, 0, n_rz * sizeof(u64), stream));
    }
    FM_CUDA_TRY(cudaMalloc((void **)&d_rd, n_ra * sizeof(u64)));
    FM_CUDA_TRY(cudaMalloc((void **)&d_tt, n_ra * sizeof(u64)));
    FM_CUDA_TRY(cudaMalloc((void **)&d_layer, sizeof w->a_layer));
    FM_CUDA_TRY(cudaMalloc((void **)&d_batch, sizeof w->batch));
    FM_CUDA_TRY(cudaMalloc((void **)&d_next, sizeof(u64)));
    FM_CUDA_TRY(cudaMemsetAsync(d_rd, 0, n_ra * sizeof(u64), stream));
    FM_CUDA_TRY(cudaMemsetAsync(d_tt, 0, n_ra * sizeof(u64), stream));
    FM_CUDA_TRY(cudaMemsetAsync(d_layer, 0, sizeof w->a_layer, stream));
    FM_CUDA_TRY(cudaMemsetAsync(d_batch, 0, sizeof w->batch, stream));

    /* The cached corner: all depths up to 100 bins (the source's neighbourhood) and as many
     * radial bins as fit; R/T-only runs and cache-off runs ask for none. */
    if (record && prm->shared_cache) {
        size_t entries = (CACHE_BYTES - (N_LAYER_SLOTS + FM_MCML_BATCHES * FM_MCML_B_N) * 8) / 8;
        cache_z = prm->nz < 100 ? prm->nz : 100;
        cache_r = (int)(entries / cache_z);
        if (cache_r > prm->nr)
            cache_r = prm->nr;
    }
    {
        size_t smem = (N_LAYER_SLOTS + FM_MCML_BATCHES * FM_MCML_B_N + (size_t)cache_r * cache_z) *
                      sizeof(u64);
        FM_CUDA_TRY(cudaFuncSetAttribute(mcml_photons, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem));
        FM_CUDA_TRY(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, mcml_photons, THREADS, smem));
        if (per_sm < 1)
            per_sm = 1;
        const int blocks = prop.multiProcessorCount * per_sm;
        /* Launch in rounds so that progress and cancel are seen; each round is long enough that
         * the tail (threads finishing their last photon) costs little. */
        const long long n = w->hi - w->lo, min_round = (long long)blocks * THREADS * 32;
        long long round = n / 8 > min_round ? n / 8 : min_round;
        for (long long s = w->lo; s < w->hi; s += round) {
            const long long e = w->hi - s > round ? s + round : w->hi;
            u64 start = (u64)s;
            FM_CUDA_TRY(
                cudaMemcpyAsync(d_next, &start, sizeof start, cudaMemcpyHostToDevice, stream));
            mcml_photons<<<blocks, THREADS, smem, stream>>>(w->job->medium, prm->seed, d_next,
                                                            (u64)e, d_a_rz, d_rd, d_tt, d_layer,
                                                            d_batch, cache_r, cache_z);
            FM_CUDA_CHECK_LAUNCH("mcml_photons");
            FM_CUDA_TRY(cudaStreamSynchronize(stream));
            __atomic_store_n(&w->done, e - w->lo, __ATOMIC_RELEASE);
            if (*w->cancel)
                break;
        }
    }
    if (record)
        FM_CUDA_TRY(cudaMemcpy(w->a_rz, d_a_rz, n_rz * sizeof(u64), cudaMemcpyDeviceToHost));
    FM_CUDA_TRY(cudaMemcpy(w->rd_ra, d_rd, n_ra * sizeof(u64), cudaMemcpyDeviceToHost));
    FM_CUDA_TRY(cudaMemcpy(w->tt_ra, d_tt, n_ra * sizeof(u64), cudaMemcpyDeviceToHost));
    FM_CUDA_TRY(cudaMemcpy(w->a_layer, d_layer, sizeof w->a_layer, cudaMemcpyDeviceToHost));
    FM_CUDA_TRY(cudaMemcpy(w->batch, d_batch, sizeof w->batch, cudaMemcpyDeviceToHost));
cleanup:
    cudaFree(d_a_rz);
    cudaFree(d_rd);
    cudaFree(d_tt);
    cudaFree(d_layer);
    cudaFree(d_batch);
    cudaFree(d_next);
    if (stream)
        cudaStreamDestroy(stream);
    return status;
}

extern "C" fm_status fm_mcml_cuda_run(const fm_mcml_job *job, fm_mcml_raw *raw, char *msg,
                                      size_t msg_len)
{
    const fm_mcml_params *prm = &job->params;
    const size_t n_rz = (size_t)prm->nr * prm->nz, n_ra = (size_t)prm->nr * prm->na;
    fm_status status = FM_OK;
    volatile int cancel = 0;
    int n_dev = 0;
    gpu_work *work = NULL;
    pthread_t *threads = NULL;

    status = fm_cuda_devices_for(prm->n_devices, prm->n_photons, &n_dev, msg, msg_len);
    if (status != FM_OK)
        return status;
    work = (gpu_work *)calloc((size_t)n_dev, sizeof *work);
    threads = (pthread_t *)calloc((size_t)n_dev, sizeof *threads);
    if (!work || !threads) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for GPU work");
        goto cleanup;
    }
    /* Each GPU takes a contiguous share of photon indices: its own photon streams. */
    for (int d = 0; d < n_dev; d++) {
        gpu_work *w = &work[d];
        w->job = job;
        w->device = d;
        w->lo = prm->n_photons * d / n_dev;
        w->hi = prm->n_photons * (d + 1) / n_dev;
        w->cancel = &cancel;
        w->rd_ra = (u64 *)calloc(n_ra, sizeof(u64));
        w->tt_ra = (u64 *)calloc(n_ra, sizeof(u64));
        if (prm->record_absorption)
            w->a_rz = (u64 *)calloc(n_rz, sizeof(u64));
        if (!w->rd_ra || !w->tt_ra || (prm->record_absorption && !w->a_rz)) {
            status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for GPU tallies");
            goto cleanup;
        }
    }
    /* The calling thread reports progress (photons done) every 2 ms and forwards a cancel. */
    status =
        fm_cuda_fan_out(work, threads, n_dev, fm_cuda_device_thread<gpu_work, run_device>, &cancel,
                        job->tick, job->tick_user, (double)prm->n_photons, 2000000, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
    for (int d = 0; d < n_dev; d++) {
        if (work[d].status != FM_OK) {
            status = fm_fail(work[d].status, msg, msg_len, "GPU %d: %s", d, work[d].msg);
            goto cleanup;
        }
    }
    /* Integer sums: the order of devices does not matter. */
    for (int d = 0; d < n_dev; d++) {
        gpu_work *w = &work[d];
        if (raw->a_rz)
            for (size_t i = 0; i < n_rz; i++)
                raw->a_rz[i] += w->a_rz[i];
        for (size_t i = 0; i < n_ra; i++) {
            raw->rd_ra[i] += w->rd_ra[i];
            raw->tt_ra[i] += w->tt_ra[i];
        }
        for (int l = 0; l < N_LAYER_SLOTS; l++)
            raw->a_layer[l] += w->a_layer[l];
        for (int b = 0; b < FM_MCML_BATCHES; b++)
            for (int k = 0; k < FM_MCML_B_N; k++)
                raw->batch[b][k] += w->batch[b * FM_MCML_B_N + k];
        raw->photons_done += w->done;
    }
    if (job->tick && !cancel)
        job->tick(job->tick_user, (double)raw->photons_done / prm->n_photons);
    if (raw->photons_done < prm->n_photons)
        status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled after %lld of %lld photons",
                         raw->photons_done, prm->n_photons);
cleanup:
    for (int d = 0; work && d < n_dev; d++) {
        free(work[d].a_rz);
        free(work[d].rd_ra);
        free(work[d].tt_ra);
    }
    free(work);
    free(threads);
    return status;
}
