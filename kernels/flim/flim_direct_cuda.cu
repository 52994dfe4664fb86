/* CUDA noniterative FLIM: one thread per pixel over bin-major chunks (coalesced reads, the
 * paper's layout), per-bin tables in constant memory, chunks pipelined over several streams. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../device_private.h"
#include "flim_impl.h"
#include "flim_math.h"

#define N_SLOTS 3          /* chunks in flight: upload, compute, download */
#define CHUNK_PIXELS 32768 /* 256 bins x 32768 px x 4 B = 32 MB per upload */
#define THREADS 128

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

/* 1 when the runtime knows ptr as page-locked host memory (NULL counts as pinned). */
static int is_pinned(const void *ptr)
{
    cudaPointerAttributes attr;
    if (!ptr)
        return 1;
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return attr.type == cudaMemoryTypeHost;
}

extern "C" fm_status fm_flim_direct_cuda(const fm_flim_job *job, fm_run_info *info, char *msg,
                                         size_t msg_len)
{
    (void)info; /* flim.c fills the report */
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
    const size_t in_bytes = (size_t)k.n * chunk * sizeof(float);
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
    float *d_in[N_SLOTS] = {0}, *d_out[N_SLOTS] = {0}, *h_in[N_SLOTS] = {0}, *h_out[N_SLOTS] = {0};
    unsigned char *d_mask = NULL;
    fm_flim_trig *trig = (fm_flim_trig *)malloc(sizeof(fm_flim_trig) * (size_t)k.n);
    fm_flim_trig *d_trig = NULL;
    const float *src = job->counts + (size_t)p->fit_start * n_pixels;
    int in_pinned = is_pinned(job->counts), out_pinned = 1, next_done = 0;
    for (int j = 0; j < n_maps; j++)
        out_pinned &= is_pinned(dst_map[j]);
    if (!trig) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d bins", k.n);
        goto cleanup;
    }

    fm_flim_fill_undefined(job);

    FM_CUDA_TRY(cudaSetDevice(0));
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
        FM_CUDA_TRY(cudaMalloc((void **)&d_in[s], in_bytes));
        FM_CUDA_TRY(cudaMalloc((void **)&d_out[s], out_bytes));
        if (!in_pinned)
            FM_CUDA_TRY(cudaHostAlloc((void **)&h_in[s], in_bytes, cudaHostAllocDefault));
        if (!out_pinned)
            FM_CUDA_TRY(cudaHostAlloc((void **)&h_out[s], out_bytes, cudaHostAllocDefault));
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
        if (in_pinned) {
            FM_CUDA_TRY(cudaMemcpy2DAsync(d_in[s], sizeof(float) * chunk, src + c0,
                                          sizeof(float) * n_pixels, sizeof(float) * np, k.n,
                                          cudaMemcpyHostToDevice, stream[s]));
        } else {
            /* Staged: gather the chunk's rows into pinned memory with all CPU threads while
             * the other streams transfer and compute. */
            fm_flim_copy_rows(h_in[s], (size_t)np, src + c0, (size_t)n_pixels, np, k.n);
            FM_CUDA_TRY(cudaMemcpy2DAsync(d_in[s], sizeof(float) * chunk, h_in[s],
                                          sizeof(float) * np, sizeof(float) * np, k.n,
                                          cudaMemcpyHostToDevice, stream[s]));
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
        for (int j = 0; j < n_maps; j++) {
            float *dst = out_pinned ? dst_map[j] + c0 : h_out[s] + (size_t)j * chunk;
            FM_CUDA_TRY(cudaMemcpyAsync(dst, d_out[s] + (size_t)j * chunk, sizeof(float) * np,
                                        cudaMemcpyDeviceToHost, stream[s]));
        }
        FM_CUDA_TRY(cudaEventRecord(done[s], stream[s]));
    }

cleanup:
    /* Nothing may still write into buffers we free. */
    for (int s = 0; s < slots_used; s++)
        if (stream[s])
            cudaStreamSynchronize(stream[s]);
    for (int s = 0; s < slots_used; s++) {
        if (stream[s])
            cudaStreamDestroy(stream[s]);
        if (done[s])
            cudaEventDestroy(done[s]);
        cudaFree(d_in[s]);
        cudaFree(d_out[s]);
        cudaFreeHost(h_in[s]);
        cudaFreeHost(h_out[s]);
    }
    cudaFree(d_mask);
    cudaFree(d_trig);
    free(trig);
    return status;
}
