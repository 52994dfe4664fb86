/* CUDA LSI: the paper's separable scheme fused per tile (row strip sums in shared memory, then
 * column sums and K/SFI), a multi-stream pipeline for stacks, and temporal / spatio-temporal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "../resident.h"
#include "../cuda_tail.h"
#include "lsi_cuda_launch.h"
#include "lsi_impl.h"
#include "lsi_math.h"

#define TILE_X 32        /* output columns per block: one warp row, one column per lane */
#define THREADS_Y 8      /* warps per block */
#ifndef FM_LSI_ROWS      /* output rows per thread (override with -DFM_LSI_ROWS=n to measure) */
#define FM_LSI_ROWS 8
#endif
/* Resident blocks per SM asked of ptxas (caps registers: 48 with 5). On the H100, 5 beat 6
 * (40 registers) at 2048^2 and 4000^2, and 8 blocks of 4 rows lost (bench/RESULTS.md). */
#ifndef FM_LSI_MINB
#define FM_LSI_MINB 5
#endif
#define N_SLOTS 3        /* frames in flight: upload, compute, download */

/* Exact 64-bit sums for integer pixels, double for float pixels (temporal paths, as the CPU). */
template <typename T> struct fm_acc { typedef long long type; };
template <> struct fm_acc<float> { typedef double type; };

/* Spatial window sums, as narrow as exactness allows (64-bit integer multiplies are emulated
 * on the GPU and 64-bit adds cost two instructions): with at most 15 x 15 samples,
 * sum(u16) < 225 * 2^16 < 2^32 and sum(u8^2) < 225 * 2^16 < 2^32 fit 32 bits; u16^2 < 2^32
 * fits 32 bits but its window sums need 64 (225 * 2^32 < 2^40). Unsigned wrap-around is
 * harmless in the running sums: every final value is below 2^bits, so it comes out exact. */
template <typename T> struct fm_sums {
    typedef unsigned int s1;
    typedef unsigned int s2;
};
template <> struct fm_sums<uint16_t> {
    typedef unsigned int s1;
    typedef unsigned long long s2;
};
template <> struct fm_sums<float> {
    typedef double s1;
    typedef double s2;
};
__device__ __forceinline__ unsigned int fm_sq(uint8_t v)
{
    return (unsigned int)v * (unsigned int)v;
}
__device__ __forceinline__ unsigned long long fm_sq(uint16_t v)
{
    return (unsigned long long)v * v; /* with the add: one widening multiply-add */
}
__device__ __forceinline__ double fm_val(float v) { return (double)v; }
template <typename T> __device__ __forceinline__ unsigned int fm_val(T v) { return v; }
__device__ __forceinline__ double fm_sq(float v) { return (double)v * (double)v; }

/* Loads the block's tile plus halo (outside the image: 0) into shared memory: every load of a
 * thread is issued before the first shared store, so they are all in flight together. */
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ void load_tile(const T *__restrict__ in, int W, int H, int x0, int y0,
                                          T (*pix)[COLS])
{
    constexpr int NT = TILE_X * THREADS_Y, PER = (ROWS * COLS + NT - 1) / NT;
    const int tid = threadIdx.y * TILE_X + threadIdx.x;
    T v[PER];
#pragma unroll
    for (int k = 0; k < PER; k++) {
        const int i = tid + k * NT;
        const int ly = i / COLS, lx = i - ly * COLS; /* constant divisor: a multiply */
        const int gy = y0 + ly, gx = x0 + lx;
        v[k] = (i < ROWS * COLS && gy >= 0 && gy < H && gx >= 0 && gx < W)
                   ? __ldg(in + (size_t)gy * W + gx)
                   : (T)0;
    }
#pragma unroll
    for (int k = 0; k < PER; k++) {
        const int i = tid + k * NT;
        if (i < ROWS * COLS)
            pix[i / COLS][i % COLS] = v[k];
    }
}

/* Statistics of one output pixel and its stores; returns 1 when its SFI is NaN. */
template <int HALF>
__device__ __forceinline__ int put_pixel(double s1, double s2, int gx, int gy, int W, int H,
                                         int valid, double n, double exposure_s,
                                         float *__restrict__ k_out, float *__restrict__ sfi_out)
{
    float k = NAN, s = NAN;
    int bad;
    if (valid && (gx < HALF || gx + HALF >= W || gy < HALF || gy + HALF >= H))
        bad = 1;
    else
        bad = fm_lsi_window_stats(s1, s2, n, exposure_s, &k, &s);
    const size_t o = (size_t)gy * W + gx;
    if (k_out)
        __stcs(k_out + o, k); /* streamed: written once, then only read by the host copy */
    if (sfi_out)
        __stcs(sfi_out + o, s);
    return bad;
}

__device__ __forceinline__ void count_bad(int bad, unsigned long long *invalid)
{
    /* One atomic per warp keeps the counter off the critical path. */
    for (int off = 16; off > 0; off /= 2)
        bad += __shfl_down_sync(0xffffffffu, bad, off);
    if (threadIdx.x == 0 && bad)
        atomicAdd(invalid, (unsigned long long)bad);
}

/* Spatial K/SFI for one TILE_X x (THREADS_Y RPT) tile, window 2 HALF + 1 known at compile time
 * (fully unrolled sums). The block loads its tile plus halo into shared memory once; then the
 * paper's row pass (horizontal window sums, each computed once, into shared memory) and the
 * column pass as a vertical running sum down RPT rows per thread (one row in, one out) with the
 * statistics. Outside the image counts as 0 (the paper's border); with the VALID border, pixels
 * whose window leaves the image are NaN. Measured on the H100 against a variant that keeps each
 * thread's row sums in registers (halo rows summed twice, no second barrier): this one won. */
template <typename T, int HALF, int RPT>
__global__ void __launch_bounds__(TILE_X *THREADS_Y, FM_LSI_MINB)
    lsi_spatial_tile(const T *__restrict__ in, int W, int H, int valid, double n,
                     double exposure_s, float *__restrict__ k_out, float *__restrict__ sfi_out,
                     unsigned long long *invalid)
{
    typedef typename fm_sums<T>::s1 S1;
    typedef typename fm_sums<T>::s2 S2;
    constexpr int SPAN = 2 * HALF + 1, TY = THREADS_Y * RPT;
    constexpr int COLS = TILE_X + 2 * HALF, ROWS = TY + 2 * HALF;
    __shared__ T pix[ROWS][COLS];
    load_tile<T, ROWS, COLS>(in, W, H, blockIdx.x * TILE_X - HALF, blockIdx.y * TY - HALF, pix);
    __syncthreads();

    const int tx = threadIdx.x, r0 = threadIdx.y * RPT;
    __shared__ S1 h1[ROWS][TILE_X];
    __shared__ S2 h2[ROWS][TILE_X];
    for (int ly = threadIdx.y; ly < ROWS; ly += THREADS_Y) {
        S1 a = 0;
        S2 b = 0;
#pragma unroll
        for (int d = 0; d < SPAN; d++) {
            const T v = pix[ly][tx + d];
            a += fm_val(v);
            b += fm_sq(v);
        }
        h1[ly][tx] = a;
        h2[ly][tx] = b;
    }
    __syncthreads();

    const int gx = blockIdx.x * TILE_X + tx, gy0 = blockIdx.y * TY + r0;
    int bad = 0;
    S1 s1 = 0;
    S2 s2 = 0;
#pragma unroll
    for (int d = 0; d < SPAN; d++) {
        s1 += h1[r0 + d][tx];
        s2 += h2[r0 + d][tx];
    }
    if (gx < W && gy0 < H)
        bad += put_pixel<HALF>((double)s1, (double)s2, gx, gy0, W, H, valid, n, exposure_s,
                               k_out, sfi_out);
#pragma unroll 1 /* rolled: fewer registers, more resident warps */
    for (int r = 1; r < RPT; r++) {
        s1 += h1[r0 + r + SPAN - 1][tx] - h1[r0 + r - 1][tx];
        s2 += h2[r0 + r + SPAN - 1][tx] - h2[r0 + r - 1][tx];
        if (gx < W && gy0 + r < H)
            bad += put_pixel<HALF>((double)s1, (double)s2, gx, gy0 + r, W, H, valid, n,
                                   exposure_s, k_out, sfi_out);
    }
    count_bad(bad, invalid);
}

/* Rows per thread: FM_LSI_ROWS, but 4 for float pixels, whose double row sums would otherwise
 * not fit the 48 KiB of static shared memory at window 15. */
template <typename T> struct fm_rpt { enum { value = FM_LSI_ROWS }; };
template <> struct fm_rpt<float> { enum { value = FM_LSI_ROWS < 4 ? FM_LSI_ROWS : 4 }; };

template <typename T>
static void launch_tile(int half, const void *d_in, int W, int H, int valid, double n, double t,
                        float *d_k, float *d_s, unsigned long long *d_invalid,
                        cudaStream_t stream)
{
    constexpr int RPT = fm_rpt<T>::value, TY = THREADS_Y * RPT;
    dim3 block(TILE_X, THREADS_Y), grid((W + TILE_X - 1) / TILE_X, (H + TY - 1) / TY);
    const T *in = (const T *)d_in;
    switch (half) { /* fm_lsi_check admits windows 3..15 */
#define FM_HALF_CASE(h)                                                                           \
    case h:                                                                                   \
        lsi_spatial_tile<T, h, RPT><<<grid, block, 0, stream>>>(in, W, H, valid, n, t, d_k,   \
                                                                d_s, d_invalid);              \
        break;
        FM_HALF_CASE(1)
        FM_HALF_CASE(2)
        FM_HALF_CASE(3)
        FM_HALF_CASE(4)
        FM_HALF_CASE(5)
        FM_HALF_CASE(6)
        FM_HALF_CASE(7)
#undef FM_HALF_CASE
    }
}

static cudaError_t launch_spatial(fm_pixel_type type, const void *d_in, int W, int H,
                                  const fm_lsi_params *p, double samples_per_pixel, float *d_k,
                                  float *d_s, unsigned long long *d_invalid, cudaStream_t stream)
{
    int half = (p->window - 1) / 2, valid = p->border == FM_LSI_BORDER_VALID;
    double n = (double)p->window * p->window * samples_per_pixel, t = p->exposure_ms / 1000.0;
    if (half < 1 || half > 7)
        return cudaErrorInvalidValue;
    switch (type) {
    case FM_PIXEL_U8:
        launch_tile<uint8_t>(half, d_in, W, H, valid, n, t, d_k, d_s, d_invalid, stream);
        break;
    case FM_PIXEL_U16:
        launch_tile<uint16_t>(half, d_in, W, H, valid, n, t, d_k, d_s, d_invalid, stream);
        break;
    case FM_PIXEL_F32:
        launch_tile<float>(half, d_in, W, H, valid, n, t, d_k, d_s, d_invalid, stream);
        break;
    }
    return cudaGetLastError();
}

/* Spatial contrast of a stack: frame i+1 uploads while frame i computes and frame i-1
 * downloads, each frame on its own stream slot; the host waits only to reuse a slot. A stack
 * that core keeps resident on the device (fm_resident_offer) is read there, with no upload. */
static fm_status spatial_stack(const fm_lsi_job *job, long long *invalid, char *msg,
                               size_t msg_len)
{
    fm_status status = FM_OK;
    const int W = job->width, H = job->height, nf = job->n_frames;
    const size_t plane = (size_t)W * H, in_bytes = plane * fm_pixel_size(job->type);
    const size_t out_bytes = plane * sizeof(float);
    const int slots = nf < N_SLOTS ? nf : N_SLOTS;
    cudaStream_t stream[N_SLOTS] = {0};
    cudaEvent_t done[N_SLOTS] = {0};
    void *d_in[N_SLOTS] = {0}, *h_in[N_SLOTS] = {0};
    float *d_k[N_SLOTS] = {0}, *d_s[N_SLOTS] = {0}, *h_k[N_SLOTS] = {0}, *h_s[N_SLOTS] = {0};
    unsigned long long *d_invalid = NULL, host_invalid = 0;
    int registered_in = 0, registered_k = 0, registered_s = 0, next_done = 0;
    double upload_ms = 0.0;
    fm_cuda_tail tail = {NULL, NULL};
    const char *d_frames =
        (const char *)fm_resident_acquire(job->frames, in_bytes * (size_t)nf, &upload_ms);

    /* Input read on the device or from pinned memory, maps written into pinned memory (core's
     * maps are, once the GPU is started): nothing to stage on that side. */
    const int in_direct = d_frames || fm_cuda_is_pinned(job->frames);
    const int out_pinned = fm_cuda_is_pinned(job->contrast) && fm_cuda_is_pinned(job->sfi);
    const int register_call = !(in_direct && out_pinned) && job->host_mode == FM_LSI_HOST_REGISTER;
    const int stage_in = !in_direct && !register_call, stage_out = !out_pinned && !register_call;

    if (register_call) {
        if (!in_direct) {
            FM_CUDA_TRY(cudaHostRegister((void *)job->frames, in_bytes * nf, cudaHostRegisterDefault));
            registered_in = 1;
        }
        if (job->contrast && !out_pinned) {
            FM_CUDA_TRY(cudaHostRegister(job->contrast, out_bytes * nf, cudaHostRegisterDefault));
            registered_k = 1;
        }
        if (job->sfi && !out_pinned) {
            FM_CUDA_TRY(cudaHostRegister(job->sfi, out_bytes * nf, cudaHostRegisterDefault));
            registered_s = 1;
        }
    }
    FM_CUDA_TRY(cudaMalloc((void **)&d_invalid, sizeof *d_invalid));
    FM_CUDA_TRY(cudaMemset(d_invalid, 0, sizeof *d_invalid));
    for (int s = 0; s < slots; s++) {
        FM_CUDA_TRY(cudaStreamCreateWithFlags(&stream[s], cudaStreamNonBlocking));
        FM_CUDA_TRY(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
        if (!d_frames)
            FM_CUDA_TRY(cudaMalloc(&d_in[s], in_bytes));
        if (job->contrast)
            FM_CUDA_TRY(cudaMalloc((void **)&d_k[s], out_bytes));
        if (job->sfi)
            FM_CUDA_TRY(cudaMalloc((void **)&d_s[s], out_bytes));
        if (stage_in)
            FM_CUDA_TRY(fm_staging_alloc(&h_in[s], in_bytes));
        if (stage_out && job->contrast)
            FM_CUDA_TRY(fm_staging_alloc((void **)&h_k[s], out_bytes));
        if (stage_out && job->sfi)
            FM_CUDA_TRY(fm_staging_alloc((void **)&h_s[s], out_bytes));
    }

    for (int f = 0; f <= nf; f++) {
        /* Retire the oldest frame in flight when its slot is needed, and all at the end. */
        while (next_done < f && (f == nf || f - next_done >= slots)) {
            int s = next_done % slots;
            FM_CUDA_TRY(cudaEventSynchronize(done[s]));
            if (stage_out && job->contrast)
                fm_parallel_memcpy(job->contrast + (size_t)next_done * plane, h_k[s], out_bytes);
            if (stage_out && job->sfi)
                fm_parallel_memcpy(job->sfi + (size_t)next_done * plane, h_s[s], out_bytes);
            next_done++;
            if (job->tick && job->tick(job->tick_user, (double)next_done / nf)) {
                status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                goto cleanup;
            }
        }
        if (f == nf)
            break;
        int s = f % slots;
        const char *src = (const char *)job->frames + (size_t)f * in_bytes;
        float *k_dst = job->contrast ? (stage_out ? h_k[s] : job->contrast + (size_t)f * plane) : NULL;
        float *s_dst = job->sfi ? (stage_out ? h_s[s] : job->sfi + (size_t)f * plane) : NULL;
        const void *d_src = d_frames ? (const void *)(d_frames + (size_t)f * in_bytes) : d_in[s];
        if (!d_frames) {
            if (stage_in) {
                fm_parallel_memcpy(h_in[s], src, in_bytes);
                src = (const char *)h_in[s];
            }
            FM_CUDA_TRY(
                cudaMemcpyAsync(d_in[s], src, in_bytes, cudaMemcpyHostToDevice, stream[s]));
        }
        FM_CUDA_TRY(launch_spatial(job->type, d_src, W, H, &job->params, 1.0, d_k[s], d_s[s],
                                   d_invalid, stream[s]));
        fm_cuda_tail_mark(&tail, 0, stream[s]);
        if (k_dst)
            FM_CUDA_TRY(cudaMemcpyAsync(k_dst, d_k[s], out_bytes, cudaMemcpyDeviceToHost,
                                        stream[s]));
        if (s_dst)
            FM_CUDA_TRY(cudaMemcpyAsync(s_dst, d_s[s], out_bytes, cudaMemcpyDeviceToHost,
                                        stream[s]));
        fm_cuda_tail_mark(&tail, 1, stream[s]);
        FM_CUDA_TRY(cudaEventRecord(done[s], stream[s]));
    }
    FM_CUDA_TRY(cudaMemcpy(&host_invalid, d_invalid, sizeof host_invalid, cudaMemcpyDeviceToHost));
    *invalid += (long long)host_invalid;
    if (job->info) {
        job->info->upload_ms = upload_ms;
        job->info->download_ms = fm_cuda_tail_ms(&tail);
        job->info->resident = d_frames != NULL && upload_ms == 0.0;
    }

cleanup:
    fm_cuda_tail_ms(&tail); /* frees the marks on every path */
    /* Nothing may still write into buffers we free or unregister. */
    for (int s = 0; s < slots; s++)
        if (stream[s])
            cudaStreamSynchronize(stream[s]);
    for (int s = 0; s < slots; s++) {
        if (stream[s])
            cudaStreamDestroy(stream[s]);
        if (done[s])
            cudaEventDestroy(done[s]);
        cudaFree(d_in[s]);
        cudaFree(d_k[s]);
        cudaFree(d_s[s]);
        fm_staging_free(h_in[s]);
        fm_staging_free(h_k[s]);
        fm_staging_free(h_s[s]);
    }
    cudaFree(d_invalid);
    if (d_frames)
        fm_resident_release(job->frames);
    if (registered_in)
        cudaHostUnregister((void *)job->frames);
    if (registered_k)
        cudaHostUnregister(job->contrast);
    if (registered_s)
        cudaHostUnregister(job->sfi);
    return status;
}

/* Per-pixel sums over frames [t, t+F): built for t = 0, then one frame in and one out. */
template <typename T>
__global__ void lsi_temporal_update(const T *__restrict__ stack, size_t plane, int t, int F,
                                    typename fm_acc<T>::type *s1, typename fm_acc<T>::type *s2)
{
    typedef typename fm_acc<T>::type acc;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= plane)
        return;
    acc a = 0, b = 0;
    if (t == 0) {
        for (int f = 0; f < F; f++) {
            acc v = (acc)stack[(size_t)f * plane + i];
            a += v;
            b += v * v;
        }
    } else {
        acc v_in = (acc)stack[(size_t)(t + F - 1) * plane + i];
        acc v_out = (acc)stack[(size_t)(t - 1) * plane + i];
        a = s1[i] + v_in - v_out;
        b = s2[i] + v_in * v_in - v_out * v_out;
    }
    s1[i] = a;
    s2[i] = b;
}

/* Temporal statistics (half < 0) or the spatio-temporal window over the sum images: one
 * thread per pixel, plain loops; the sums are L2-resident, so this stays cheap. */
template <typename A>
__global__ void lsi_sum_stats(const A *__restrict__ s1, const A *__restrict__ s2, int W, int H,
                              int half, int valid, double n, double exposure_s,
                              float *__restrict__ k_out, float *__restrict__ sfi_out,
                              unsigned long long *invalid)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int bad = 0;
    if (x < W && y < H) {
        float k = NAN, s = NAN;
        size_t o = (size_t)y * W + x;
        if (half < 0) {
            bad = fm_lsi_window_stats((double)s1[o], (double)s2[o], n, exposure_s, &k, &s);
        } else if (valid && (x < half || x + half >= W || y < half || y + half >= H)) {
            bad = 1;
        } else {
            A a = 0, b = 0;
            for (int yy = y - half; yy <= y + half; yy++) {
                if (yy < 0 || yy >= H)
                    continue;
                for (int xx = x - half; xx <= x + half; xx++) {
                    if (xx < 0 || xx >= W)
                        continue;
                    a += s1[(size_t)yy * W + xx];
                    b += s2[(size_t)yy * W + xx];
                }
            }
            bad = fm_lsi_window_stats((double)a, (double)b, n, exposure_s, &k, &s);
        }
        if (k_out)
            k_out[o] = k;
        if (sfi_out)
            sfi_out[o] = s;
    }
    int block_bad = __syncthreads_count(bad);
    if (threadIdx.x == 0 && threadIdx.y == 0 && block_bad)
        atomicAdd(invalid, (unsigned long long)block_bad);
}

template <typename T>
static cudaError_t launch_temporal_step(const fm_lsi_job *job, const void *d_stack, int t,
                                        void *d_s1, void *d_s2, float *d_k, float *d_s,
                                        unsigned long long *d_invalid, cudaStream_t stream = 0)
{
    typedef typename fm_acc<T>::type acc;
    const int W = job->width, H = job->height;
    const size_t plane = (size_t)W * H;
    const int st = job->mode == FM_LSI_MODE_SPATIOTEMPORAL;
    const double n = st ? (double)job->params.window * job->params.window * job->params.frames
                        : (double)job->params.frames;
    lsi_temporal_update<T><<<(unsigned)((plane + 255) / 256), 256, 0, stream>>>(
        (const T *)d_stack, plane, t, job->params.frames, (acc *)d_s1, (acc *)d_s2);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess)
        return err;
    dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
    lsi_sum_stats<acc><<<grid, block, 0, stream>>>(
        (const acc *)d_s1, (const acc *)d_s2, W, H, st ? (job->params.window - 1) / 2 : -1,
        job->params.border == FM_LSI_BORDER_VALID, n, job->params.exposure_ms / 1000.0, d_k, d_s,
        d_invalid);
    return cudaGetLastError();
}

/* Temporal and spatio-temporal: the whole stack on the device (kept there between runs when core
 * offered it; a stack larger than GPU memory fails with FM_ERR_DEVICE, and AUTO then runs it on
 * the CPU), one output frame per step. Step t's maps go back on a copy stream through pinned
 * slots while step t+1 computes, and the host drains the slots into the caller's maps. */
static fm_status temporal_stack(const fm_lsi_job *job, long long *invalid, char *msg,
                                size_t msg_len)
{
    fm_status status = FM_OK;
    const size_t plane = (size_t)job->width * job->height, out_bytes = plane * sizeof(float);
    const size_t stack_bytes = plane * fm_pixel_size(job->type) * job->n_frames;
    const int slots = job->n_out < N_SLOTS ? job->n_out : N_SLOTS;
    void *d_own = NULL, *d_s1 = NULL, *d_s2 = NULL;
    float *d_k[N_SLOTS] = {0}, *d_s[N_SLOTS] = {0}, *h_k[N_SLOTS] = {0}, *h_s[N_SLOTS] = {0};
    cudaEvent_t computed[N_SLOTS] = {0}, done[N_SLOTS] = {0};
    cudaStream_t copy = NULL;
    unsigned long long *d_invalid = NULL, host_invalid = 0;
    double upload_ms = 0.0;
    fm_cuda_tail tail = {NULL, NULL};
    int next_done = 0;
    const void *d_stack = fm_resident_acquire(job->frames, stack_bytes, &upload_ms);
    const int resident = d_stack != NULL;
    /* core's maps are pinned once the GPU is started: the copies land in them directly */
    const int out_pinned = fm_cuda_is_pinned(job->contrast) && fm_cuda_is_pinned(job->sfi);

    if (!resident) {
        double t0 = fm_now_ms();
        FM_CUDA_TRY(cudaMalloc(&d_own, stack_bytes));
        FM_CUDA_TRY(cudaMemcpy(d_own, job->frames, stack_bytes, cudaMemcpyHostToDevice));
        d_stack = d_own;
        upload_ms = fm_now_ms() - t0;
    }
    FM_CUDA_TRY(cudaMalloc(&d_s1, plane * 8));
    FM_CUDA_TRY(cudaMalloc(&d_s2, plane * 8));
    FM_CUDA_TRY(cudaMalloc((void **)&d_invalid, sizeof *d_invalid));
    FM_CUDA_TRY(cudaMemset(d_invalid, 0, sizeof *d_invalid));
    FM_CUDA_TRY(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    for (int k = 0; k < slots; k++) {
        FM_CUDA_TRY(cudaEventCreateWithFlags(&computed[k], cudaEventDisableTiming));
        FM_CUDA_TRY(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
        if (job->contrast) {
            FM_CUDA_TRY(cudaMalloc((void **)&d_k[k], out_bytes));
            if (!out_pinned)
                FM_CUDA_TRY(fm_staging_alloc((void **)&h_k[k], out_bytes));
        }
        if (job->sfi) {
            FM_CUDA_TRY(cudaMalloc((void **)&d_s[k], out_bytes));
            if (!out_pinned)
                FM_CUDA_TRY(fm_staging_alloc((void **)&h_s[k], out_bytes));
        }
    }
    for (int t = 0; t <= job->n_out; t++) {
        while (next_done < t && (t == job->n_out || t - next_done >= slots)) {
            int k = next_done % slots;
            FM_CUDA_TRY(cudaEventSynchronize(done[k]));
            if (job->contrast && !out_pinned)
                fm_parallel_memcpy(job->contrast + (size_t)next_done * plane, h_k[k], out_bytes);
            if (job->sfi && !out_pinned)
                fm_parallel_memcpy(job->sfi + (size_t)next_done * plane, h_s[k], out_bytes);
            next_done++;
            if (job->tick && job->tick(job->tick_user, (double)next_done / job->n_out)) {
                status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                goto cleanup;
            }
        }
        if (t == job->n_out)
            break;
        int k = t % slots;
        switch (job->type) {
        case FM_PIXEL_U8:
            FM_CUDA_TRY(launch_temporal_step<uint8_t>(job, d_stack, t, d_s1, d_s2, d_k[k], d_s[k],
                                                      d_invalid));
            break;
        case FM_PIXEL_U16:
            FM_CUDA_TRY(launch_temporal_step<uint16_t>(job, d_stack, t, d_s1, d_s2, d_k[k],
                                                       d_s[k], d_invalid));
            break;
        case FM_PIXEL_F32:
            FM_CUDA_TRY(launch_temporal_step<float>(job, d_stack, t, d_s1, d_s2, d_k[k], d_s[k],
                                                    d_invalid));
            break;
        }
        FM_CUDA_TRY(cudaEventRecord(computed[k], 0));
        FM_CUDA_TRY(cudaStreamWaitEvent(copy, computed[k], 0));
        fm_cuda_tail_mark(&tail, 0, copy); /* after the wait: the kernel has ended there */
        float *k_dst = out_pinned ? job->contrast + (size_t)t * plane : h_k[k];
        float *s_dst = out_pinned ? job->sfi + (size_t)t * plane : h_s[k];
        if (job->contrast)
            FM_CUDA_TRY(cudaMemcpyAsync(k_dst, d_k[k], out_bytes, cudaMemcpyDeviceToHost, copy));
        if (job->sfi)
            FM_CUDA_TRY(cudaMemcpyAsync(s_dst, d_s[k], out_bytes, cudaMemcpyDeviceToHost, copy));
        fm_cuda_tail_mark(&tail, 1, copy);
        FM_CUDA_TRY(cudaEventRecord(done[k], copy));
    }
    FM_CUDA_TRY(cudaMemcpy(&host_invalid, d_invalid, sizeof host_invalid, cudaMemcpyDeviceToHost));
    *invalid += (long long)host_invalid;
    if (job->info) {
        job->info->upload_ms = upload_ms;
        job->info->download_ms = fm_cuda_tail_ms(&tail);
        job->info->resident = resident && upload_ms == 0.0;
    }

cleanup:
    fm_cuda_tail_ms(&tail);
    cudaDeviceSynchronize(); /* nothing may still write into what is freed below */
    for (int k = 0; k < slots; k++) {
        if (computed[k])
            cudaEventDestroy(computed[k]);
        if (done[k])
            cudaEventDestroy(done[k]);
        cudaFree(d_k[k]);
        cudaFree(d_s[k]);
        fm_staging_free(h_k[k]);
        fm_staging_free(h_s[k]);
    }
    if (copy)
        cudaStreamDestroy(copy);
    if (resident)
        fm_resident_release(job->frames);
    cudaFree(d_own);
    cudaFree(d_s1);
    cudaFree(d_s2);
    cudaFree(d_invalid);
    return status;
}

extern "C" fm_status fm_lsi_cuda_run(const fm_lsi_job *job, long long *invalid, char *msg,
                                     size_t msg_len)
{
    fm_status status = FM_OK;
    FM_CUDA_TRY(cudaSetDevice(0));
    if (job->mode == FM_LSI_MODE_SPATIAL)
        return spatial_stack(job, invalid, msg, msg_len);
    return temporal_stack(job, invalid, msg, msg_len);
cleanup:
    return status;
}

/* The live contexts (lsi_live_cuda.cu) launch these same kernels on their own streams. */
cudaError_t fm_lsi_cuda_launch_spatial(fm_pixel_type type, const void *d_in, int W, int H,
                                       const fm_lsi_params *p, float *d_k, float *d_s,
                                       unsigned long long *d_invalid, cudaStream_t stream)
{
    return launch_spatial(type, d_in, W, H, p, 1.0, d_k, d_s, d_invalid, stream);
}

cudaError_t fm_lsi_cuda_launch_window(int mode, fm_pixel_type type, const void *d_stack, int W,
                                      int H, const fm_lsi_params *p, void *d_s1, void *d_s2,
                                      float *d_k, float *d_s, unsigned long long *d_invalid,
                                      cudaStream_t stream)
{
    /* Step 0 of a stack of p->frames frames: the window's sums built afresh from its frames
     * (in any order: integer sums are exact). */
    fm_lsi_job job;
    memset(&job, 0, sizeof job);
    job.params = *p;
    job.mode = (fm_lsi_mode)mode;
    job.type = type;
    job.width = W;
    job.height = H;
    job.n_frames = p->frames;
    switch (type) {
    case FM_PIXEL_U8:
        return launch_temporal_step<uint8_t>(&job, d_stack, 0, d_s1, d_s2, d_k, d_s, d_invalid,
                                             stream);
    case FM_PIXEL_U16:
        return launch_temporal_step<uint16_t>(&job, d_stack, 0, d_s1, d_s2, d_k, d_s, d_invalid,
                                              stream);
    default:
        return launch_temporal_step<float>(&job, d_stack, 0, d_s1, d_s2, d_k, d_s, d_invalid,
                                           stream);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" fm_status fm_lsi_cuda_time_frame(const fm_lsi_params *params, const void *frame,
                                            fm_pixel_type type, int width, int height, int reps,
                                            double *host_to_host_ms, double *kernel_ms,
                                            char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const size_t plane = (size_t)width * height, in_bytes = plane * fm_pixel_size(type);
    const size_t out_bytes = plane * sizeof(float);
    void *d_in = NULL, *h_in = NULL;
    float *d_k = NULL, *d_s = NULL, *h_k = NULL, *h_s = NULL;
    unsigned long long *d_invalid = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    cudaStream_t stream = NULL;
    double *h2h = (double *)calloc((size_t)reps, sizeof(double));
    double *kern = (double *)calloc((size_t)reps, sizeof(double));
    if (!h2h || !kern || reps < 1) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d timings", reps);
        goto cleanup;
    }
    FM_CUDA_TRY(cudaSetDevice(0));
    FM_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    FM_CUDA_TRY(cudaEventCreate(&start));
    FM_CUDA_TRY(cudaEventCreate(&stop));
    FM_CUDA_TRY(cudaMalloc(&d_in, in_bytes));
    FM_CUDA_TRY(cudaMalloc((void **)&d_k, out_bytes));
    FM_CUDA_TRY(cudaMalloc((void **)&d_s, out_bytes));
    FM_CUDA_TRY(cudaMalloc((void **)&d_invalid, sizeof *d_invalid));
    FM_CUDA_TRY(cudaHostAlloc(&h_in, in_bytes, cudaHostAllocDefault));
    FM_CUDA_TRY(cudaHostAlloc((void **)&h_k, out_bytes, cudaHostAllocDefault));
    FM_CUDA_TRY(cudaHostAlloc((void **)&h_s, out_bytes, cudaHostAllocDefault));
    memcpy(h_in, frame, in_bytes);

    for (int pass = 0; pass < 2; pass++) {
        for (int r = -3; r < reps; r++) { /* three warm-up runs */
            float ms = 0;
            FM_CUDA_TRY(cudaEventRecord(start, stream));
            if (pass == 0)
                FM_CUDA_TRY(cudaMemcpyAsync(d_in, h_in, in_bytes, cudaMemcpyHostToDevice, stream));
            FM_CUDA_TRY(launch_spatial(type, d_in, width, height, params, 1.0, d_k, d_s,
                                       d_invalid, stream));
            if (pass == 0) {
                FM_CUDA_TRY(cudaMemcpyAsync(h_k, d_k, out_bytes, cudaMemcpyDeviceToHost, stream));
                FM_CUDA_TRY(cudaMemcpyAsync(h_s, d_s, out_bytes, cudaMemcpyDeviceToHost, stream));
            }
            FM_CUDA_TRY(cudaEventRecord(stop, stream));
            FM_CUDA_TRY(cudaEventSynchronize(stop));
            FM_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
            if (r >= 0)
                (pass == 0 ? h2h : kern)[r] = ms;
        }
    }
    qsort(h2h, (size_t)reps, sizeof(double), cmp_double);
    qsort(kern, (size_t)reps, sizeof(double), cmp_double);
    *host_to_host_ms = h2h[reps / 2];
    *kernel_ms = kern[reps / 2];

cleanup:
    if (stream)
        cudaStreamSynchronize(stream);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    if (stream)
        cudaStreamDestroy(stream);
    cudaFree(d_in);
    cudaFree(d_k);
    cudaFree(d_s);
    cudaFree(d_invalid);
    cudaFreeHost(h_in);
    cudaFreeHost(h_k);
    cudaFreeHost(h_s);
    free(h2h);
    free(kern);
    return status;
}
