/* CUDA MCML after GPU-MCML (Alerstam et al. 2010): one persistent kernel whose warps take photon
 * indices from a global counter in chunks; each thread carries its photon and multiply-with-carry
 * stream in registers; the high-fluence corner of A[r][z] is cached in shared memory as 32-bit
 * accumulators whose overflow carries into the global 64-bit ones, and a drop outside it is one
 * global atomic (with the cache off, repeated drops into one voxel are merged in registers); one
 * host thread per GPU polls progress and forwards a cancel while the kernel runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "mcml_impl.h"
#include "mcml_mwc_table.h"

/* One block of 1024 threads per SM by default: the register file holds 1024 threads at 64
 * registers, and a single block gets nearly all of the SM's shared memory for the A[r][z] cache
 * (on an H100, 57k voxels: 99 % of the skin model's absorption events). -DFM_MCML_THREADS=n
 * -DFM_MCML_MIN_BLOCKS=k (bench/variant.sh) times k blocks of n threads, each with 1/k of it. */
#ifndef FM_MCML_THREADS
#define FM_MCML_THREADS 1024
#endif
#ifndef FM_MCML_MIN_BLOCKS
#define FM_MCML_MIN_BLOCKS 1
#endif
#define THREADS FM_MCML_THREADS
#define WARPS (THREADS / 32)
/* Photon indices a warp takes from the global counter at a time: one global atomic per 64
 * photons, and at most 64 photons per warp still run after a cancel. */
#define CHUNK 64
/* Steps each lane takes between the warp's votes for dead lanes (-DFM_MCML_STEPS_PER_VOTE=n). */
#ifndef FM_MCML_STEPS_PER_VOTE
#define FM_MCML_STEPS_PER_VOTE 16
#endif
#define STEPS_PER_VOTE FM_MCML_STEPS_PER_VOTE
/* Steps between the crossings of the lanes at a face (a divisor of STEPS_PER_VOTE;
 * -DFM_MCML_FACE_EVERY=n): each crossing pass costs the warp the whole crossing path, and each
 * lane waiting at a face idles until the pass. */
#ifndef FM_MCML_FACE_EVERY
#define FM_MCML_FACE_EVERY 4
#endif
#define FACE_EVERY FM_MCML_FACE_EVERY
/* The FACE_EVERY steps between crossings unrolled (-DFM_MCML_UNROLL=0: a loop): no loop counter,
 * fewer branches to wait on. */
#ifndef FM_MCML_UNROLL
#define FM_MCML_UNROLL 1
#endif
#define FULL 0xFFFFFFFFu

typedef unsigned long long u64;

__device__ const uint32_t d_mwc_a[FM_MCML_MWC_COUNT] = FM_MCML_MWC_MULTIPLIERS;

/* Where the kernel takes photons and the host reads progress and asks it to stop. */
typedef struct {
    u64 next; /* next photon index to hand out (photons below it have started) */
    int stop; /* set by the host: hand out no more chunks */
} control;

/* A drop added to a cached voxel, a 32-bit shared accumulator whose overflow is carried as 2^32
 * into the global 64-bit voxel: the atomic returns the old value, so the carry is exact and needs
 * no barrier. The test waits for the atomic's reply, so it comes after the spin, whose arithmetic
 * hides the wait (q = 0: nothing pending). */
typedef struct {
    uint32_t old, q;
    int voxel; /* ir * nz + iz */
} pending_carry;

__device__ __forceinline__ void settle(const pending_carry &c, u64 *a_rz)
{
    if (c.old + c.q < c.old)
        atomicAdd(a_rz + c.voxel, 1ull << 32);
}

/* What the kernel tallies besides R and T: nothing, A[r][z] through the shared-memory cache, or
 * A[r][z] straight into global memory. */
enum { RECORD_NONE, RECORD_CACHED, RECORD_GLOBAL };

/* Where a lane's drops go: the shared-memory cache of A[r][z]'s corner, the global tallies, and
 * (cache off) the run of drops into one voxel merged in registers. */
typedef struct {
    uint32_t *s_cache;
    int cache_r, cache_z, nr, nz;
    float inv_dr, inv_dz;
    u64 *a_rz;
    uint32_t last, last_q;
} scorer;

template <int RECORD>
__device__ __forceinline__ void score(scorer &t, const fm_mcml_photon &p, uint32_t q,
                                      pending_carry &c)
{
    /* Bins as fm_mcml_rz_bin, the clamp to the last bin left for drops outside the cache (r and
     * z are not negative but for rounding, which truncates to bin 0; the device's float-to-int
     * conversion saturates). */
    int ir = (int)(FM_MCML_SQRT(p.x * p.x + p.y * p.y) * t.inv_dr);
    int iz = (int)(p.z * t.inv_dz);
    if (RECORD == RECORD_CACHED && ir < t.cache_r && iz < t.cache_z) {
        c.old = atomicAdd(t.s_cache + ir * t.cache_z + iz, q);
        c.q = q;
        c.voxel = ir * t.nz + iz;
        return;
    }
    ir = min(ir, t.nr - 1);
    iz = min(iz, t.nz - 1);
    if (RECORD == RECORD_CACHED) {
        /* The few drops below or beside the cache: one global atomic each, no reply awaited. */
        atomicAdd(t.a_rz + (size_t)ir * t.nz + iz, (u64)q);
        return;
    }
    /* No cache: consecutive drops into one voxel are summed in registers (GPU-MCML's merge), one
     * global atomic per run. */
    const uint32_t voxel = (uint32_t)(ir * t.nz + iz);
    if (voxel != t.last || t.last_q >= 0x80000000u) {
        if (t.last_q)
            atomicAdd(t.a_rz + t.last, (u64)t.last_q);
        t.last = voxel;
        t.last_q = 0;
    }
    t.last_q += q;
}

/* One step of a lane with a live photon that is not waiting at a face: the flight and, unless it
 * reached a face, the drop, the spin and roulette. Returns 1 when the flight reached a face or
 * roulette ended the photon. */
template <int RECORD>
__device__ __forceinline__ int step(fm_mcml_photon &p, scorer &t, u64 *roulette_net)
{
    if (fm_mcml_fly(&p))
        return 1;
    const uint32_t q = fm_mcml_absorb(&p);
    pending_carry c = {0, 0, 0};
    if (RECORD)
        score<RECORD>(t, p, q, c);
    fm_mcml_spin(&p, &p.L);
    if (RECORD == RECORD_CACHED)
        settle(c, t.a_rz);
    if (fm_mcml_faint(&p)) {
        atomicAdd(roulette_net, (u64)(long long)fm_mcml_roulette(&p));
        return p.w == 0;
    }
    return 0;
}

template <int RECORD>
__global__ void __launch_bounds__(THREADS, FM_MCML_MIN_BLOCKS)
    mcml_photons(const fm_mcml_medium medium, u64 seed, control *ctl, u64 end, u64 *a_rz,
                 u64 *rd_ra, u64 *tt_ra, u64 *batch, int cache_r, int cache_z)
{
    /* The layer table in shared memory, read when a photon enters a layer (lanes in different
     * layers would serialise on constant memory). */
    __shared__ fm_mcml_medium m;
    __shared__ u64 s_batch[FM_MCML_BATCHES * FM_MCML_B_N];
    __shared__ u64 s_pool[WARPS][2]; /* each warp's chunk: next and end */
    extern __shared__ uint32_t s_cache[];
    const int n_cache = RECORD == RECORD_CACHED ? cache_r * cache_z : 0;
    {
        const int *src = (const int *)&medium;
        int *dst = (int *)&m;
        for (int i = threadIdx.x; i < (int)(sizeof m / sizeof(int)); i += blockDim.x)
            dst[i] = src[i];
    }
    for (int i = threadIdx.x; i < n_cache; i += blockDim.x)
        s_cache[i] = 0;
    for (int i = threadIdx.x; i < FM_MCML_BATCHES * FM_MCML_B_N; i += blockDim.x)
        s_batch[i] = 0;
    for (int i = threadIdx.x; i < WARPS * 2; i += blockDim.x)
        s_pool[i / 2][i % 2] = 0;
    __syncthreads();

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, na = m.na;
    const fm_mcml_grid grid = m.grid; /* in registers */
    scorer t = {s_cache, cache_r, cache_z, m.nr, m.nz, grid.inv_dr, grid.inv_dz, a_rz, 0, 0};
    fm_mcml_photon p;
    memset(&p, 0, sizeof p); /* w = 0: no photon yet */
    int bi = 0;              /* the photon's batch row in s_batch */
    int more = 1;            /* warp-uniform: chunks may remain */
    /* The lane takes no step until the next crossing pass or hand-out: its flight reached a face
     * (it crosses next), or roulette ended its photon (w = 0; a drop never takes the last unit).
     * One flag, one test per step. */
    int idle = 1;
    for (;;) {
        /* Dead lanes take the next indices of the warp's chunk, in lane order; the warp leader
         * takes a new chunk when this one runs short. */
        const unsigned dead = __ballot_sync(FULL, p.w == 0);
        if (dead && more) {
            u64 pn = s_pool[warp][0], pe = s_pool[warp][1];
            const unsigned n = __popc(dead), rank = __popc(dead & ((1u << lane) - 1u));
            const u64 avail = pe - pn;
            u64 idx = pn + rank;
            if (n > avail) {
                u64 base = end;
                if (lane == 0 && !*(volatile int *)&ctl->stop)
                    base = atomicAdd(&ctl->next, (u64)CHUNK);
                base = __shfl_sync(FULL, base, 0);
                if (rank >= avail)
                    idx = base + (rank - avail);
                pn = base + (n - avail);
                pe = base + CHUNK;
                more = base < end;
            } else {
                pn += n;
            }
            __syncwarp();
            if (lane == 0) {
                s_pool[warp][0] = pn;
                s_pool[warp][1] = pe;
            }
            __syncwarp();
            if (((dead >> lane) & 1u) && idx < end) {
                fm_mcml_launch(&p, &m, seed, idx, __ldg(&d_mwc_a[idx % FM_MCML_MWC_COUNT]));
                bi = (int)(idx % FM_MCML_BATCHES) * FM_MCML_B_N;
            }
        }
        if (!__any_sync(FULL, p.w != 0))
            break;
        idle = p.w == 0;
        /* A few steps between hand-outs: the vote and hand-out cost less, and a lane whose photon
         * ends waits at most STEPS_PER_VOTE - 1 steps for the next. A lane whose flight reached a
         * face waits too, and the lanes at a face cross together every FACE_EVERY steps. */
#pragma unroll 1
        for (int g = 0; g < STEPS_PER_VOTE / FACE_EVERY; g++) {
#if FM_MCML_UNROLL
#pragma unroll
#else
#pragma unroll 1
#endif
            for (int k = 0; k < FACE_EVERY; k++)
                if (!idle)
                    idle = step<RECORD>(p, t, s_batch + bi + FM_MCML_B_ROUL);
            if (idle && p.w != 0) { /* at a face */
                fm_mcml_escape out;
                if (fm_mcml_cross(&p, &m, &out)) {
                    int ir, ia;
                    fm_mcml_ra_bin(&p, &grid, out.cos_exit, &ir, &ia);
                    atomicAdd((out.escape == 1 ? rd_ra : tt_ra) + (size_t)ir * na + ia, (u64)out.w);
                    atomicAdd(s_batch + bi + (out.escape == 1 ? FM_MCML_B_RD : FM_MCML_B_TT),
                              (u64)out.w);
                }
            }
            idle = p.w == 0;
        }
    }
    if (RECORD == RECORD_GLOBAL && t.last_q)
        atomicAdd(a_rz + t.last, (u64)t.last_q);
    __syncthreads();
    for (int i = threadIdx.x; i < n_cache; i += blockDim.x)
        if (s_cache[i])
            atomicAdd(a_rz + (size_t)(i / cache_z) * t.nz + i % cache_z, (u64)s_cache[i]);
    for (int i = threadIdx.x; i < FM_MCML_BATCHES * FM_MCML_B_N; i += blockDim.x)
        if (s_batch[i])
            atomicAdd(batch + i, s_batch[i]);
}

typedef struct {
    const fm_mcml_job *job;
    const u64 *pilot; /* drop counts of a pilot run, for the cache's shape, or NULL */
    int device;
    long long lo, hi;          /* photon indices of this GPU */
    u64 *a_rz, *rd_ra, *tt_ra; /* host copies of this GPU's tallies */
    u64 batch[FM_MCML_BATCHES * FM_MCML_B_N];
    long long done; /* photons started (all of them finish), read by the polling thread */
    volatile int *cancel;
    int finished;
    fm_status status;
    char msg[FM_MSG_LEN];
} gpu_work;

/* The cached corner of A[r][z], ir < cache_r and iz < cache_z, for `entries` voxels. With a
 * pilot's drop counts (pilot_drops: running sums along each row), the corner that holds the most of
 * them: in the skin model 142 x 401 voxels, which leave 1.0 % of the drops to global memory, where
 * the whole depth (114 x 500) left 3.1 % and cost 3 % of the run's time. Without (small runs), a
 * corner about as deep as it is wide in centimetres, clipped to the grid, the rest of the budget
 * given to the other direction. */
static void cache_shape(const fm_mcml_params *p, const u64 *counts, size_t entries, int *cache_r,
                        int *cache_z)
{
    if ((size_t)p->nr * p->nz <= entries) {
        *cache_r = p->nr;
        *cache_z = p->nz;
        return;
    }
    if (counts) {
        /* counts holds each row's running sum over iz (pilot_drops), so a corner's drops are a
         * sum over its rows: nr^2 / 2 additions for all corners */
        u64 best = 0;
        for (int cr = 1; cr <= p->nr; cr++) {
            const size_t cz = entries / cr < (size_t)p->nz ? entries / cr : (size_t)p->nz;
            u64 held = 0;
            for (int ir = 0; ir < cr; ir++)
                held += counts[(size_t)ir * p->nz + cz - 1];
            if (held > best) {
                best = held;
                *cache_r = cr;
                *cache_z = (int)cz;
            }
        }
        if (best)
            return;
    }
    double side_cm = sqrt((double)entries * p->dz_cm * p->dr_cm);
    long long cz = (long long)(side_cm / p->dz_cm), cr;
    cz = cz < 1 ? 1 : cz > p->nz ? p->nz : cz;
    cr = (long long)entries / cz;
    if (cr >= p->nr) {
        cr = p->nr;
        cz = (long long)entries / cr;
        cz = cz > p->nz ? p->nz : cz;
    }
    *cache_r = (int)cr;
    *cache_z = (int)cz;
}

/* Where the drops of a run fall, from a pilot of PILOT_PHOTONS photons of the CPU photon code
 * on all cores (each photon's drops cluster, so it takes about 256 photons for the corner to land
 * within a few voxels of the best; 64 chose anywhere from 116 to 150 in the skin model). About
 * 7 ms of CPU time, 1 ms on 16 cores; a grid that fits the cache needs none, and runs under
 * PILOT_MIN photons, where it would cost more than it saves, skip it. */
#define PILOT_PHOTONS 256
#define PILOT_MIN 10000000
#define PILOT_FITS 32768 /* voxels that fit any sm_80+ GPU's shared memory (128 KB) */
static u64 *pilot_drops(const fm_mcml_job *job)
{
    const fm_mcml_params *p = &job->params;
    /* a chunk decides as its whole run does: the same cache for every chunk */
    const long long n_run = job->run_photons > 0 ? job->run_photons : p->n_photons;
    if (!p->record_absorption || !p->shared_cache || n_run < PILOT_MIN ||
        (size_t)p->nr * p->nz <= PILOT_FITS)
        return NULL;
    u64 *counts = (u64 *)calloc((size_t)p->nr * p->nz, sizeof *counts);
    if (!counts)
        return NULL;
    fm_mcml_count_drops(job, PILOT_PHOTONS, counts);
    for (int ir = 0; ir < p->nr; ir++) /* each row's running sum over iz */
        for (int iz = 1; iz < p->nz; iz++)
            counts[(size_t)ir * p->nz + iz] += counts[(size_t)ir * p->nz + iz - 1];
    return counts;
}

/* Stream-ordered allocation where the device has memory pools: cudaFree waits for the whole
 * device, so a chunk's cleanup would wait for the next chunk's kernel, which runs beside it
 * (fm_mcml_run_chunks keeps two in flight); cudaFreeAsync waits for nothing but its stream. */
static cudaError_t dev_alloc(void **ptr, size_t bytes, cudaStream_t stream, int pools)
{
    return pools ? cudaMallocAsync(ptr, bytes, stream) : cudaMalloc(ptr, bytes);
}

static void dev_free(void *ptr, cudaStream_t stream, int pools)
{
    if (ptr && pools)
        cudaFreeAsync(ptr, stream);
    else if (ptr)
        cudaFree(ptr);
}

extern "C" unsigned long long *fm_mcml_cuda_pilot(const fm_mcml_job *job)
{
    return pilot_drops(job);
}

static fm_status run_device(gpu_work *w)
{
    const fm_mcml_params *prm = &w->job->params;
    char *msg = w->msg;
    size_t msg_len = sizeof w->msg;
    fm_status status = FM_OK;
    const size_t n_rz = (size_t)prm->nr * prm->nz, n_ra = (size_t)prm->nr * prm->na;
    const int record = prm->record_absorption != 0;
    u64 *d_a_rz = NULL, *d_rd = NULL, *d_tt = NULL, *d_batch = NULL;
    control *d_ctl = NULL, *h_ctl = NULL;
    cudaStream_t stream = NULL, side = NULL;
    cudaEvent_t ready = NULL;
    int n_sm = 0, smem_sm = 0, smem_optin = 0;
    cudaFuncAttributes attr;
    int per_sm = 0, cache_r = 0, cache_z = 0, stopped = 0, pools = 0;
    void (*kernel)(const fm_mcml_medium, u64, control *, u64, u64 *, u64 *, u64 *, u64 *, int,
                   int) = !record             ? mcml_photons<RECORD_NONE>
                          : prm->shared_cache ? mcml_photons<RECORD_CACHED>
                                              : mcml_photons<RECORD_GLOBAL>;

    FM_CUDA_TRY(cudaSetDevice(w->device));
    /* three attributes rather than cudaGetDeviceProperties, which reads them all */
    FM_CUDA_TRY(cudaDeviceGetAttribute(&n_sm, cudaDevAttrMultiProcessorCount, w->device));
    FM_CUDA_TRY(
        cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, w->device));
    FM_CUDA_TRY(
        cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, w->device));
    FM_CUDA_TRY(cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, w->device));
    FM_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    FM_CUDA_TRY(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    if (record) {
        FM_CUDA_TRY(dev_alloc((void **)&d_a_rz, n_rz * sizeof(u64), stream, pools));
        FM_CUDA_TRY(cudaMemsetAsync(d_a_rz, 0, n_rz * sizeof(u64), stream));
    }
    FM_CUDA_TRY(dev_alloc((void **)&d_rd, n_ra * sizeof(u64), stream, pools));
    FM_CUDA_TRY(dev_alloc((void **)&d_tt, n_ra * sizeof(u64), stream, pools));
    FM_CUDA_TRY(dev_alloc((void **)&d_batch, sizeof w->batch, stream, pools));
    FM_CUDA_TRY(dev_alloc((void **)&d_ctl, sizeof *d_ctl, stream, pools));
    FM_CUDA_TRY(fm_staging_alloc((void **)&h_ctl, sizeof *h_ctl));
    FM_CUDA_TRY(cudaMemsetAsync(d_rd, 0, n_ra * sizeof(u64), stream));
    FM_CUDA_TRY(cudaMemsetAsync(d_tt, 0, n_ra * sizeof(u64), stream));
    FM_CUDA_TRY(cudaMemsetAsync(d_batch, 0, sizeof w->batch, stream));
    h_ctl->next = (u64)w->lo;
    h_ctl->stop = 0;
    FM_CUDA_TRY(cudaMemcpyAsync(d_ctl, h_ctl, sizeof *h_ctl, cudaMemcpyHostToDevice, stream));
    /* The side stream reads the control block, allocated in `stream`'s order: it waits for the
     * allocations and this copy, not for the kernel launched after them. */
    FM_CUDA_TRY(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    FM_CUDA_TRY(cudaEventRecord(ready, stream));
    FM_CUDA_TRY(cudaStreamWaitEvent(side, ready, 0));

    /* The cache takes the shared memory a block may have beyond the kernel's own; R/T-only and
     * cache-off runs ask for none. */
    FM_CUDA_TRY(cudaFuncGetAttributes(&attr, kernel));
    if (record && prm->shared_cache) {
        /* per block: its share of the SM (less the 1 KB the runtime keeps per block) */
        size_t budget = (size_t)smem_sm / FM_MCML_MIN_BLOCKS - 1024;
        budget = budget < (size_t)smem_optin ? budget : (size_t)smem_optin;
        budget -= attr.sharedSizeBytes;
        cache_shape(prm, w->pilot, budget / sizeof(uint32_t), &cache_r, &cache_z);
    }
    {
        const size_t smem = (size_t)cache_r * cache_z * sizeof(uint32_t);
        FM_CUDA_TRY(
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        FM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
        if (per_sm < 1) {
            cudaDeviceProp prop;
            FM_CUDA_TRY(cudaGetDeviceProperties(&prop, w->device));
            status = fm_fail(FM_ERR_DEVICE, msg, msg_len,
                             "mcml_photons: a block of %d threads with %zu bytes of shared "
                             "memory does not fit on %s",
                             THREADS, smem, prop.name);
            goto cleanup;
        }
        kernel<<<n_sm * per_sm, THREADS, smem, stream>>>(w->job->medium, prm->seed, d_ctl,
                                                         (u64)w->hi, d_a_rz, d_rd, d_tt, d_batch,
                                                         cache_r, cache_z);
        FM_CUDA_CHECK_LAUNCH("mcml_photons");
    }
    /* While it runs: photons handed out so far, read through a second stream every millisecond;
     * a cancel stops the hand-out, and the photons already started finish. */
    for (;;) {
        cudaError_t q = cudaStreamQuery(stream);
        if (q == cudaSuccess)
            break;
        if (q != cudaErrorNotReady)
            FM_CUDA_TRY(q);
        FM_CUDA_TRY(cudaMemcpyAsync(&h_ctl->next, &d_ctl->next, sizeof h_ctl->next,
                                    cudaMemcpyDeviceToHost, side));
        FM_CUDA_TRY(cudaStreamSynchronize(side));
        const long long started = (long long)h_ctl->next < w->hi ? (long long)h_ctl->next : w->hi;
        __atomic_store_n(&w->done, started - w->lo, __ATOMIC_RELEASE);
        if (started == w->hi)
            break; /* all handed out: nothing left to cancel; the copies below wait for the end
                    * without the up to 1 ms that polling adds */
        if (*w->cancel && !stopped) {
            h_ctl->stop = 1;
            FM_CUDA_TRY(cudaMemcpyAsync(&d_ctl->stop, &h_ctl->stop, sizeof h_ctl->stop,
                                        cudaMemcpyHostToDevice, side));
            stopped = 1;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    FM_CUDA_TRY(cudaMemcpyAsync(h_ctl, d_ctl, sizeof *h_ctl, cudaMemcpyDeviceToHost, stream));
    if (record)
        FM_CUDA_TRY(
            cudaMemcpyAsync(w->a_rz, d_a_rz, n_rz * sizeof(u64), cudaMemcpyDeviceToHost, stream));
    FM_CUDA_TRY(
        cudaMemcpyAsync(w->rd_ra, d_rd, n_ra * sizeof(u64), cudaMemcpyDeviceToHost, stream));
    FM_CUDA_TRY(
        cudaMemcpyAsync(w->tt_ra, d_tt, n_ra * sizeof(u64), cudaMemcpyDeviceToHost, stream));
    FM_CUDA_TRY(
        cudaMemcpyAsync(w->batch, d_batch, sizeof w->batch, cudaMemcpyDeviceToHost, stream));
    FM_CUDA_TRY(cudaStreamSynchronize(stream));
    {
        const long long started = (long long)h_ctl->next < w->hi ? (long long)h_ctl->next : w->hi;
        __atomic_store_n(&w->done, started - w->lo, __ATOMIC_RELEASE);
    }
cleanup:
    dev_free(d_a_rz, stream, pools);
    dev_free(d_rd, stream, pools);
    dev_free(d_tt, stream, pools);
    dev_free(d_batch, stream, pools);
    dev_free(d_ctl, stream, pools);
    fm_staging_free(h_ctl);
    if (stream)
        cudaStreamDestroy(stream);
    if (side)
        cudaStreamDestroy(side);
    if (ready)
        cudaEventDestroy(ready);
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
    u64 *pilot = NULL;
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
    if (!job->pilot) /* a task's chunks share the one pilot of fm_mcml_cuda_pilot */
        pilot = pilot_drops(job);
    /* Each GPU takes a contiguous share of photon indices: its own photon streams. */
    for (int d = 0; d < n_dev; d++) {
        gpu_work *w = &work[d];
        w->job = job;
        w->device = d;
        w->lo = job->first_photon + prm->n_photons * d / n_dev;
        w->hi = job->first_photon + prm->n_photons * (d + 1) / n_dev;
        w->cancel = &cancel;
        w->pilot = job->pilot ? job->pilot : pilot;
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
        for (int b = 0; b < FM_MCML_BATCHES; b++)
            for (int k = 0; k < FM_MCML_B_N; k++)
                raw->batch[b][k] += w->batch[b * FM_MCML_B_N + k];
        raw->photons_done += w->done;
        fm_mcml_count_batches(raw, w->lo, w->lo + w->done);
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
    free(pilot);
    return status;
}
