/* CUDA noniterative FLIM: one thread per pixel over bin-major chunks (coalesced reads, the
 * paper's layout), per-bin tables in constant memory, chunks pipelined over several streams;
 * uint16 counts cross PCIe as they are and widen to float on the device. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "../resident.h"
#include "../cuda_tail.h"
#include "flim_impl.h"
#include "flim_math.h"

#define N_SLOTS 3          /* chunks in flight: upload, compute, download */
#define CHUNK_PIXELS 32768 /* 256 bins x 32768 px x 4 B = 32 MB per upload */
#define THREADS 128
/* Device buffers come from the stream-ordered pool, which keeps up to this much between runs:
 * cudaMalloc/cudaFree per call cost a sizeable part of a ~3 ms run (cudaFree also syncs). */
#define POOL_KEEP_BYTES ((uint64_t)512 << 20)

/* The paper keeps IEM's Simpson coefficients in constant memory; the phasor's per-bin cos/sin
 * go there too. Every thread of a warp reads the same bin's entry at the same time, which is the
 * constant cache's broadcast case. */
__constant__ double c_simpson[9];
__constant__ fm_flim_trig c_trig[FM_FLIM_CONST_BINS];

/* Which device output map (0..n_maps) each per-pixel value goes to, -1 for none. */
typedef struct {
    int slot[FM_FLIM_V_COUNT];
} fm_flim_slots;

/* One thread per pixel; bin b of pixel p at counts[b * pitch + p], so a warp reads 32
 * consecutive floats of one bin per load. CONST_TRIG: the fit range fits c_trig (else the
 * same table from global memory). */
template <bool CONST_TRIG>
__global__ void __launch_bounds__(THREADS)
    flim_direct_kernel(fm_flim_consts k, const float *__restrict__ counts, size_t pitch, int np,
                       const unsigned char *__restrict__ mask, const fm_flim_trig *g_trig,
                       fm_flim_slots slots, float *__restrict__ out)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= np)
        return;
    float v[FM_FLIM_V_COUNT];
    const fm_flim_trig *trig = CONST_TRIG ? c_trig : g_trig;
    fm_flim_direct_pixel(&k, counts + p, pitch, mask ? mask[p] : 1, c_simpson, trig, v);
#pragma unroll
    for (int j = 0; j < FM_FLIM_V_COUNT; j++)
        if (slots.slot[j] >= 0)
            __stcs(out + (size_t)slots.slot[j] * pitch + p, v[j]); /* written once, streamed */
}

/* u16 chunk (rows x np, pitch elements) to float: the link carries half the bytes, and the
 * device widens them at HBM speed (every uint16 is exactly a float, so results do not change). */
__global__ void flim_widen_kernel(const uint16_t *__restrict__ src, float *__restrict__ dst,
                                  size_t pitch, int np)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= np)
        return;
    const size_t at = (size_t)blockIdx.y * pitch + q;
    dst[at] = (float)__ldcs(src + at); /* read once: stream it past L2 */
}

/* Lets the device's default pool keep POOL_KEEP_BYTES of freed memory (never lowers it). */
static void keep_pool_memory(int device)
{
    cudaMemPool_t pool;
    uint64_t keep = 0;
    if (cudaDeviceGetDefaultMemPool(&pool, device) != cudaSuccess ||
        cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    if (keep < POOL_KEEP_BYTES) {
        keep = POOL_KEEP_BYTES;
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaGetLastError();
    }
}

extern "C" fm_status fm_flim_direct_cuda(const fm_flim_job *job, fm_run_info *info, char *msg,
                                         size_t msg_len)
{

    fm_status status = FM_OK;
    static const double simpson[9] = FM_FLIM_SIMPSON_INIT;
    static const int v_to_out[FM_FLIM_V_COUNT] = FM_FLIM_V_TO_OUT_INIT;
    const fm_flim_params *p = job->params;
    const int n_pixels = job->n_pixels;
    fm_flim_consts k;
    fm_flim_consts_init(&k, job->method, p);
    const int chunk = n_pixels < CHUNK_PIXELS ? n_pixels : CHUNK_PIXELS;
    const int n_chunks = (n_pixels + chunk - 1) / chunk;
    const int slots_used = n_chunks < N_SLOTS ? n_chunks : N_SLOTS;
    const int is_u16 = job->counts_type == FM_PIXEL_U16;
    const size_t es = is_u16 ? sizeof(uint16_t) : sizeof(float); /* bytes per count as given */
    const size_t in_bytes = (size_t)k.n * chunk * sizeof(float), raw_bytes = (size_t)k.n * chunk * es;
    fm_flim_slots slots;
    float *dst_map[FM_FLIM_V_COUNT] = {0};
    int n_maps = 0;
    for (int j = 0; j < FM_FLIM_V_COUNT; j++) {
        dst_map[n_maps] = job->out->map[v_to_out[j]];
        slots.slot[j] = dst_map[n_maps] ? n_maps++ : -1;
    }
    const size_t out_bytes = (size_t)n_maps * chunk * sizeof(float);

    cudaStream_t stream[N_SLOTS] = {0};
    cudaEvent_t done[N_SLOTS] = {0};
    float *d_in[N_SLOTS] = {0}, *d_out[N_SLOTS] = {0}, *h_out[N_SLOTS] = {0};
    uint16_t *d_raw[N_SLOTS] = {0}; /* u16 input lands here, then widens into d_in */
    char *h_in[N_SLOTS] = {0};      /* staging for pageable input, counts as given */
    unsigned char *d_mask = NULL;
    fm_flim_trig *trig = (fm_flim_trig *)malloc(sizeof(fm_flim_trig) * (size_t)k.n);
    fm_flim_trig *d_trig = NULL;
    const char *src = (const char *)job->counts_data + (size_t)p->fit_start * n_pixels * es;
    int in_pinned = fm_cuda_is_pinned(job->counts_data), out_pinned = 1, next_done = 0;
    /* The fit window's rows, read on the device when core keeps the dataset resident there. */
    double upload_ms = 0.0;
    fm_cuda_tail tail = {NULL, NULL};
    const char *d_src = (const char *)fm_resident_acquire(src, (size_t)k.n * n_pixels * es, &upload_ms);
    for (int j = 0; j < n_maps; j++)
        out_pinned &= fm_cuda_is_pinned(dst_map[j]);
    if (!trig) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d bins", k.n);
        goto cleanup;
    }

    fm_flim_fill_undefined(job);

    FM_CUDA_TRY(cudaSetDevice(0));
    keep_pool_memory(0);
    fm_flim_trig_init(&k, trig);
    FM_CUDA_TRY(cudaMemcpyToSymbol(c_simpson, simpson, sizeof simpson));
    if (k.n <= FM_FLIM_CONST_BINS) {
        FM_CUDA_TRY(cudaMemcpyToSymbol(c_trig, trig, sizeof(fm_flim_trig) * k.n));
    } else {
        FM_CUDA_TRY(cudaMalloc((void **)&d_trig, sizeof(fm_flim_trig) * k.n));
        FM_CUDA_TRY(cudaMemcpy(d_trig, trig, sizeof(fm_flim_trig) * k.n, cudaMemcpyHostToDevice));
    }
    if (job->mask) {
        FM_CUDA_TRY(cudaMalloc((void **)&d_mask, (size_t)n_pixels));
        FM_CUDA_TRY(cudaMemcpy(d_mask, job->mask, (size_t)n_pixels, cudaMemcpyHostToDevice));
    }
    for (int s = 0; s < slots_used; s++) {
        FM_CUDA_TRY(cudaStreamCreateWithFlags(&stream[s], cudaStreamNonBlocking));
        FM_CUDA_TRY(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
        FM_CUDA_TRY(cudaMallocAsync((void **)&d_in[s], in_bytes, stream[s]));
        FM_CUDA_TRY(cudaMallocAsync((void **)&d_out[s], out_bytes, stream[s]));
        if (is_u16)
            FM_CUDA_TRY(cudaMallocAsync((void **)&d_raw[s], raw_bytes, stream[s]));
        if (!in_pinned && !d_src)
            FM_CUDA_TRY(fm_staging_alloc((void **)&h_in[s], raw_bytes));
        if (!out_pinned)
            FM_CUDA_TRY(fm_staging_alloc((void **)&h_out[s], out_bytes));
    }

    for (int c = 0; c <= n_chunks; c++) {
        /* Retire the oldest chunk when its slot is needed, and all of them at the end. */
        while (next_done < c && (c == n_chunks || c - next_done >= slots_used)) {
            const int s = next_done % slots_used, c0 = next_done * chunk;
            const int np = c0 + chunk < n_pixels ? chunk : n_pixels - c0;
            FM_CUDA_TRY(cudaEventSynchronize(done[s]));
            if (!out_pinned)
                for (int j = 0; j < n_maps; j++)
                    fm_parallel_memcpy(dst_map[j] + c0, h_out[s] + (size_t)j * chunk,
                                       sizeof(float) * np);
            next_done++;
            if (job->tick && job->tick(job->tick_user, (double)(c0 + np) / n_pixels)) {
                status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                goto cleanup;
            }
        }
        if (c == n_chunks)
            break;
        const int s = c % slots_used, c0 = c * chunk;
        const int np = c0 + chunk < n_pixels ? chunk : n_pixels - c0;
        void *land = is_u16 ? (void *)d_raw[s] : (void *)d_in[s];
        if (d_src) {
            FM_CUDA_TRY(cudaMemcpy2DAsync(land, es * chunk, d_src + c0 * es, es * n_pixels,
                                          es * np, k.n, cudaMemcpyDeviceToDevice, stream[s]));
        } else if (in_pinned) {
            FM_CUDA_TRY(cudaMemcpy2DAsync(land, es * chunk, src + c0 * es, es * n_pixels, es * np,
                                          k.n, cudaMemcpyHostToDevice, stream[s]));
        } else {
            /* Staged: gather the chunk's rows into pinned memory with all CPU threads while
             * the other streams transfer and compute. */
            fm_flim_copy_rows(h_in[s], es * np, src + c0 * es, es * n_pixels, es * np, k.n);
            FM_CUDA_TRY(cudaMemcpy2DAsync(land, es * chunk, h_in[s], es * np, es * np, k.n,
                                          cudaMemcpyHostToDevice, stream[s]));
        }
        if (is_u16) {
            const dim3 grid((unsigned)((np + 255) / 256), (unsigned)k.n);
            flim_widen_kernel<<<grid, 256, 0, stream[s]>>>(d_raw[s], d_in[s], (size_t)chunk, np);
            FM_CUDA_CHECK_LAUNCH("flim_widen_kernel");
        }
        const unsigned blocks = (unsigned)((np + THREADS - 1) / THREADS);
        if (d_trig)
            flim_direct_kernel<false><<<blocks, THREADS, 0, stream[s]>>>(
                k, d_in[s], (size_t)chunk, np, d_mask ? d_mask + c0 : NULL, d_trig, slots,
                d_out[s]);
        else
            flim_direct_kernel<true><<<blocks, THREADS, 0, stream[s]>>>(
                k, d_in[s], (size_t)chunk, np, d_mask ? d_mask + c0 : NULL, NULL, slots, d_out[s]);
        FM_CUDA_CHECK_LAUNCH("flim_direct_kernel");
        fm_cuda_tail_mark(&tail, 0, stream[s]);
        for (int j = 0; j < n_maps; j++) {
            float *dst = out_pinned ? dst_map[j] + c0 : h_out[s] + (size_t)j * chunk;
            FM_CUDA_TRY(cudaMemcpyAsync(dst, d_out[s] + (size_t)j * chunk, sizeof(float) * np,
                                        cudaMemcpyDeviceToHost, stream[s]));
        }
        fm_cuda_tail_mark(&tail, 1, stream[s]);
        FM_CUDA_TRY(cudaEventRecord(done[s], stream[s]));
    }
    if (info) {
        info->upload_ms = upload_ms;
        info->download_ms = fm_cuda_tail_ms(&tail);
        info->resident = d_src && upload_ms == 0.0;
    }

cleanup:
    fm_cuda_tail_ms(&tail);
    /* Nothing may still write into buffers we free. */
    for (int s = 0; s < slots_used; s++)
        if (stream[s])
            cudaStreamSynchronize(stream[s]);
    for (int s = 0; s < slots_used; s++) {
        /* Back to the pool (stream-ordered; the stream is idle, so it is reusable at once). */
        if (stream[s]) {
            if (d_in[s])
                cudaFreeAsync(d_in[s], stream[s]);
            if (d_out[s])
                cudaFreeAsync(d_out[s], stream[s]);
            if (d_raw[s])
                cudaFreeAsync(d_raw[s], stream[s]);
            cudaStreamSynchronize(stream[s]);
            cudaStreamDestroy(stream[s]);
        }
        if (done[s])
            cudaEventDestroy(done[s]);
        fm_staging_free(h_in[s]);
        fm_staging_free(h_out[s]);
    }
    if (d_src)
        fm_resident_release(src);
    cudaFree(d_mask);
    cudaFree(d_trig);
    free(trig);
    return status;
}
