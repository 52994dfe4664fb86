/* CUDA iterative FLIM fits with the same per-pixel math as the CPU twin (flim_fit_math.h): chunks
 * of pixels on two streams (gather, upload as float or uint16, fit, results back), the kernel
 * chosen per setup (flim_fit_kernels.cuh). */
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "../resident.h"
#include "../cuda_tail.h"
#include "flim_fit_math.h"

#define CHUNK_PIXELS 32768 /* 32 MB of 256-bin decays per chunk: overlap and progress */
#define N_SLOTS 2
/* cuda_variant 0: the group-per-pixel kernel where it applies (no IRF, counts and weights fit in
 * shared memory; it gives the CPU twin's bits), else thread per pixel, which the H100 ran faster
 * than block per pixel (bench/RESULTS.md, 2026-11-23: LSM mono 15.2 vs 53.3 ms, LSM bi 102.2 vs
 * 178.6 ms). */

#include "flim_fit_kernels.cuh"

typedef struct {
    cudaStream_t stream;
    cudaEvent_t done;
    float *h_in, *d_in; /* h_in holds uint16 counts for u16 jobs */
    uint16_t *d_in16;   /* the uploaded uint16 counts, widened into d_in on the device */
    unsigned char *h_mask, *d_mask; /* d_mask: then the group kernel's pixel counter */
    int *h_off, *d_off;
    fm_fit_result *h_res, *d_res;
    long k0, k1;
    int busy;
} fit_slot;

/* Pinned staging and device buffers for the decays and results, kept between runs: pinning and
 * freeing 2 x 32 MB each call cost more than fitting a 512 x 512 image. One run at a time uses
 * the cache (device 0); a concurrent run allocates and frees its own. */
typedef struct {
    float *h_in, *d_in;
    uint16_t *d_in16;
    fm_fit_result *h_res, *d_res;
    size_t in_bytes, res_bytes;
} fit_cache_entry;
static fit_cache_entry fit_cache[N_SLOTS];
static int fit_cache_busy;

static cudaError_t slot_buffers(fit_slot *sl, fit_cache_entry *ce, size_t in_bytes,
                                size_t res_bytes)
{
    cudaError_t e;
    if (ce && ce->in_bytes >= in_bytes && ce->res_bytes >= res_bytes) {
        sl->h_in = ce->h_in;
        sl->d_in = ce->d_in;
        sl->d_in16 = ce->d_in16;
        sl->h_res = ce->h_res;
        sl->d_res = ce->d_res;
        return cudaSuccess;
    }
    if (ce) { /* too small: replace */
        cudaFreeHost(ce->h_in);
        cudaFree(ce->d_in);
        cudaFree(ce->d_in16);
        cudaFreeHost(ce->h_res);
        cudaFree(ce->d_res);
        memset(ce, 0, sizeof *ce);
    }
    if ((e = cudaHostAlloc((void **)&sl->h_in, in_bytes, cudaHostAllocDefault)) != cudaSuccess ||
        (e = cudaMalloc((void **)&sl->d_in, in_bytes)) != cudaSuccess ||
        (e = cudaMalloc((void **)&sl->d_in16, in_bytes / 2)) != cudaSuccess ||
        (e = cudaHostAlloc((void **)&sl->h_res, res_bytes, cudaHostAllocDefault)) != cudaSuccess ||
        (e = cudaMalloc((void **)&sl->d_res, res_bytes)) != cudaSuccess)
        return e; /* cleanup frees what this slot holds */
    if (ce) {
        ce->h_in = sl->h_in;
        ce->d_in = sl->d_in;
        ce->d_in16 = sl->d_in16;
        ce->h_res = sl->h_res;
        ce->d_res = sl->d_res;
        ce->in_bytes = in_bytes;
        ce->res_bytes = res_bytes;
    }
    return cudaSuccess;
}

extern "C" fm_status fm_flim_fit_cuda(const fm_flim_job *job, fm_run_info *info, char *msg,
                                      size_t msg_len)
{
    fm_status status = FM_OK;
    fm_fit_setup su;
    fit_slot slot[N_SLOTS];
    double *irf = NULL, *d_irf = NULL;
    int *seg_off = NULL, *seg_pix = NULL;
    const int ga = job->method == FM_FLIM_GA;
    const int n_fit = job->params->fit_end - job->params->fit_start;
    const int n_copy = job->params->fit_end; /* the IRF recursion starts at bin 0 */
    int variant = job->params->cuda_variant;
    const int u16 = job->counts_type == FM_PIXEL_U16;
    const size_t in_size = u16 ? sizeof(uint16_t) : sizeof(float);
    group_launch group = {NULL, 0, 0};
    int group_grid = 0;
    const size_t mask_bytes = ((size_t)CHUNK_PIXELS + 15) / 16 * 16; /* counter after it */
    /* Pinned caller counts go up straight from the caller's rows (one 2-D copy per chunk): the
     * host gather into staging cost more than the whole LSM mono fit. GA reorders pixels by
     * segment, so it always gathers. */
    double upload_ms = 0.0;
    fm_cuda_tail tail = {NULL, NULL};
    /* Counts core keeps resident on the device go the same way, device to device. */
    const char *d_counts =
        ga ? NULL
           : (const char *)fm_resident_acquire(
                 job->counts_data, (size_t)n_copy * job->n_pixels * in_size, &upload_ms);
    const int direct_up = !ga && (d_counts || fm_cuda_is_pinned(job->counts_data));
    long total = job->n_pixels, max_chunk = CHUNK_PIXELS, done_pixels = 0;
    int ga_threads = 32, s_next = 0, next_slot = 0;
    size_t shared = 0;
    const int cached = __atomic_exchange_n(&fit_cache_busy, 1, __ATOMIC_ACQUIRE) == 0;
    memset(slot, 0, sizeof slot);

    if (job->method != FM_FLIM_LSM && job->method != FM_FLIM_MLE && !ga) {
        status = fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "method %d is not an iterative fit",
                         (int)job->method);
        goto cleanup;
    }
    fm_fit_setup_from(job, &su);
    if (job->params->irf && !(irf = fm_fit_irf_double(job))) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the IRF");
        goto cleanup;
    }
    if (ga) {
        if (fm_fit_segments(job, &seg_off, &seg_pix) != 0) {
            status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for segments");
            goto cleanup;
        }
        total = seg_off[job->n_segments];
        for (int s = 0; s < job->n_segments; s++) {
            const long size = seg_off[s + 1] - seg_off[s];
            max_chunk = size > max_chunk ? size : max_chunk;
        }
        ga_threads = fm_fit_ga_threads((int)max_chunk); /* the CPU twin sums in this partition */
        shared = 5 * (size_t)n_fit * sizeof(double);
        fm_fit_mark_unsegmented(job, &su);
    } else {
        shared = (su.has_irf ? 5 : 1) * (size_t)n_fit * sizeof(double);
        if (variant == 1 && shared > SHARED_LIMIT)
            variant = 2; /* too many bins for shared memory: the thread variant needs none */
        if (variant == 0) {
            group = group_kernel(&su);
            if (!group.fn)
                variant = 2;
        }
    }
    if (ga && shared > SHARED_LIMIT) {
        status = fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                         "GA on CUDA holds the basis of %d bins in shared memory; at most %d",
                         n_fit, (int)(SHARED_LIMIT / (5 * sizeof(double))));
        goto cleanup;
    }
    FM_CUDA_TRY(cudaSetDevice(0));
    if (group.fn) { /* a persistent grid: as many blocks as the device holds at once */
        int per_sm = 0, sms = 0, optin = 0;
        FM_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
        if (group.shared > SHARED_LIMIT && group.shared <= (size_t)optin)
            FM_CUDA_TRY(cudaFuncSetAttribute((const void *)group.fn,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)group.shared));
        if (group.shared <= (size_t)optin)
            FM_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &per_sm, (const void *)group.fn, GROUP_BLOCK, group.shared));
        FM_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        group_grid = per_sm * sms;
        if (group_grid < 1) { /* this device holds no block of it: thread per pixel */
            group.fn = NULL;
            variant = 2;
        }
    }
    if (irf) {
        FM_CUDA_TRY(cudaMalloc((void **)&d_irf, job->params->n_bins * sizeof(double)));
        FM_CUDA_TRY(
            cudaMemcpy(d_irf, irf, job->params->n_bins * sizeof(double), cudaMemcpyHostToDevice));
    }
    for (int i = 0; i < N_SLOTS; i++) {
        fit_slot *sl = &slot[i];
        FM_CUDA_TRY(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
        FM_CUDA_TRY(cudaEventCreateWithFlags(&sl->done, cudaEventDisableTiming));
        FM_CUDA_TRY(slot_buffers(sl, cached ? &fit_cache[i] : NULL,
                                 max_chunk * n_copy * sizeof(float),
                                 max_chunk * sizeof(fm_fit_result)));
        FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_mask, max_chunk, cudaHostAllocDefault));
        FM_CUDA_TRY(
            cudaMalloc((void **)&sl->d_mask, (ga ? (size_t)max_chunk : mask_bytes) + sizeof(int)));
        if (ga) {
            FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_off, (max_chunk + 1) * sizeof(int),
                                      cudaHostAllocDefault));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_off, (max_chunk + 1) * sizeof(int)));
        }
    }

    /* Chunk c uses slot c % N_SLOTS: while the device fits chunk c, the host gathers c + 1 and
     * writes out c - 1; the host waits only to reuse a slot. */
    for (int c = 0;; c++) {
        fit_slot *sl = &slot[c % N_SLOTS];
        next_slot = c % N_SLOTS;
        if (sl->busy) {
            FM_CUDA_TRY(cudaEventSynchronize(sl->done));
            fm_fit_scatter(job, &su, ga ? seg_pix : NULL, sl->k0, sl->k1, sl->h_res);
            done_pixels += sl->k1 - sl->k0;
            sl->busy = 0;
            if (job->tick && job->tick(job->tick_user, total ? (double)done_pixels / total : 1)) {
                status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                goto cleanup;
            }
        }
        long k0, k1;
        int n_seg = 0;
        if (ga) {
            if (s_next >= job->n_segments)
                break;
            int s1 = s_next + 1;
            while (s1 < job->n_segments && seg_off[s1 + 1] - seg_off[s_next] <= max_chunk)
                s1++;
            k0 = seg_off[s_next];
            k1 = seg_off[s1];
            n_seg = s1 - s_next;
            for (int s = 0; s <= n_seg; s++)
                sl->h_off[s] = seg_off[s_next + s] - (int)k0;
            s_next = s1;
        } else {
            k0 = (long)c * CHUNK_PIXELS;
            if (k0 >= total)
                break;
            k1 = k0 + CHUNK_PIXELS < total ? k0 + CHUNK_PIXELS : total;
        }
        const int nc = (int)(k1 - k0);
        sl->k0 = k0;
        sl->k1 = k1;
        if (nc == 0)
            continue;
        fm_fit_gather(job, ga ? seg_pix : NULL, k0, k1, direct_up ? 0 : n_copy, sl->h_in,
                      sl->h_mask);
        if (direct_up) {
            FM_CUDA_TRY(cudaMemcpy2DAsync(
                u16 ? (void *)sl->d_in16 : (void *)sl->d_in, in_size * nc,
                (d_counts ? d_counts : (const char *)job->counts_data) + in_size * k0,
                in_size * job->n_pixels, in_size * nc, n_copy,
                d_counts ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, sl->stream));
            if (u16) {
                widen_u16_kernel<<<528, 256, 0, sl->stream>>>(sl->d_in16, sl->d_in,
                                                              (size_t)nc * n_copy);
                FM_CUDA_CHECK_LAUNCH("widen_u16_kernel");
            }
        } else if (u16) { /* half the bytes over PCIe; widened on the device, exactly */
            const size_t count = (size_t)nc * n_copy;
            FM_CUDA_TRY(cudaMemcpyAsync(sl->d_in16, sl->h_in, count * in_size,
                                        cudaMemcpyHostToDevice, sl->stream));
            widen_u16_kernel<<<528, 256, 0, sl->stream>>>(sl->d_in16, sl->d_in, count);
            FM_CUDA_CHECK_LAUNCH("widen_u16_kernel");
        } else {
            FM_CUDA_TRY(cudaMemcpyAsync(sl->d_in, sl->h_in, (size_t)nc * n_copy * in_size,
                                        cudaMemcpyHostToDevice, sl->stream));
        }
        FM_CUDA_TRY(
            cudaMemcpyAsync(sl->d_mask, sl->h_mask, nc, cudaMemcpyHostToDevice, sl->stream));
        if (ga) {
            FM_CUDA_TRY(cudaMemcpyAsync(sl->d_off, sl->h_off, (n_seg + 1) * sizeof(int),
                                        cudaMemcpyHostToDevice, sl->stream));
            ga_kernel(&su)<<<n_seg, ga_threads, shared, sl->stream>>>(su, sl->d_in, nc, sl->d_mask,
                                                                      sl->d_off, d_irf, sl->d_res);
            FM_CUDA_CHECK_LAUNCH("fit_ga_kernel");
        } else if (group.fn) {
            int *next = (int *)(sl->d_mask + mask_bytes);
            const int per_block = GROUP_BLOCK / 32 * (32 / group.lanes);
            const int need = (nc + per_block - 1) / per_block;
            const int grid = group_grid > need ? need : group_grid;
            FM_CUDA_TRY(cudaMemsetAsync(next, 0, sizeof(int), sl->stream));
            group.fn<<<grid, GROUP_BLOCK, group.shared, sl->stream>>>(su, sl->d_in, nc, sl->d_mask,
                                                                      sl->d_res, next);
            FM_CUDA_CHECK_LAUNCH("fit_group_kernel");
        } else if (variant == 1) {
            fit_block_kernel<<<nc, BLOCK_BINS, shared, sl->stream>>>(su, sl->d_in, nc, sl->d_mask,
                                                                     d_irf, sl->d_res);
            FM_CUDA_CHECK_LAUNCH("fit_block_kernel");
        } else {
            thread_kernel(&su)<<<(nc + THREADS_PIXEL - 1) / THREADS_PIXEL, THREADS_PIXEL, 0,
                                 sl->stream>>>(su, sl->d_in, nc, sl->d_mask, d_irf, sl->d_res);
            FM_CUDA_CHECK_LAUNCH("fit_thread_kernel");
        }
        fm_cuda_tail_mark(&tail, 0, sl->stream);
        FM_CUDA_TRY(cudaMemcpyAsync(sl->h_res, sl->d_res, (size_t)nc * sizeof(fm_fit_result),
                                    cudaMemcpyDeviceToHost, sl->stream));
        fm_cuda_tail_mark(&tail, 1, sl->stream);
        FM_CUDA_TRY(cudaEventRecord(sl->done, sl->stream));
        sl->busy = 1;
    }
    for (int j = 0; j < N_SLOTS; j++) { /* the rest, oldest first */
        fit_slot *old = &slot[(next_slot + j) % N_SLOTS];
        if (!old->busy)
            continue;
        FM_CUDA_TRY(cudaEventSynchronize(old->done));
        fm_fit_scatter(job, &su, ga ? seg_pix : NULL, old->k0, old->k1, old->h_res);
        done_pixels += old->k1 - old->k0;
        old->busy = 0;
        if (job->tick && job->tick(job->tick_user, total ? (double)done_pixels / total : 1)) {
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
            goto cleanup;
        }
    }
    if (info) {
        info->upload_ms = upload_ms;
        info->download_ms = fm_cuda_tail_ms(&tail);
        info->resident = d_counts && upload_ms == 0.0;
    }

cleanup:
    fm_cuda_tail_ms(&tail);
    for (int i = 0; i < N_SLOTS; i++) /* nothing may still write into what we free */
        if (slot[i].stream)
            cudaStreamSynchronize(slot[i].stream);
    for (int i = 0; i < N_SLOTS; i++) {
        fit_slot *sl = &slot[i];
        if (sl->stream)
            cudaStreamDestroy(sl->stream);
        if (sl->done)
            cudaEventDestroy(sl->done);
        if (!cached || sl->h_in != fit_cache[i].h_in) { /* the cache's stay for the next run */
            cudaFreeHost(sl->h_in);
            cudaFree(sl->d_in);
            cudaFree(sl->d_in16);
            cudaFreeHost(sl->h_res);
            cudaFree(sl->d_res);
        }
        cudaFreeHost(sl->h_mask);
        cudaFreeHost(sl->h_off);
        cudaFree(sl->d_mask);
        cudaFree(sl->d_off);
    }
    if (cached)
        __atomic_store_n(&fit_cache_busy, 0, __ATOMIC_RELEASE);
    if (d_counts)
        fm_resident_release(job->counts_data);
    cudaFree(d_irf);
    free(irf);
    free(seg_off);
    free(seg_pix);
    return status;
}
