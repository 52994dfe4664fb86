/* CUDA path of OCT: per-step kernels (background, resampling with the paper's shared-memory TDI,
 * log magnitude), cuFFT batched transforms and a stream pipeline over chunks of B-scans. */
#include <cufft.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../cuda_tail.h"
#include "../device_private.h"
#include "../host_memory.h"
#include "../resident.h"
#include "oct_impl.h"
#include "oct_math.h"

#define N_SLOTS 3         /* chunk i+1 uploads while i computes and i-1 downloads */
#define CHUNK_ALINES 4096 /* A-lines per chunk (whole B-scans): ~16 MB each way at 2048 px */
#define TDI_ALINES 8      /* A-lines per TDI block: each staged coefficient serves 8 A-lines */

#define FM_CUFFT_TRY(call)                                                                         \
    do {                                                                                           \
        cufftResult fm_cufft_err_ = (call);                                                        \
        if (fm_cufft_err_ != CUFFT_SUCCESS) {                                                      \
            status = fm_fail(FM_ERR_DEVICE, msg, msg_len, "%s:%d: %s: cuFFT error %d", __FILE__,   \
                             __LINE__, fm_cuda_call_name_(#call), (int)fm_cufft_err_);             \
            goto cleanup;                                                                          \
        }                                                                                          \
    } while (0)

typedef struct {
    cudaStream_t stream;
    cudaEvent_t done;
    void *d_raw, *h_raw; /* h_*: pinned staging, only for pageable caller buffers */
    float *d_bg, *d_x, *d_y, *d_x4, *d_out, *h_out;
    float *d_shown, *d_enface;       /* depth-down images and en-face lines, when asked for */
    size_t h_raw_bytes, h_out_bytes; /* staging from the pool, returned there on close */
    cufftComplex *d_spec, *d_zp;
    cufftHandle r2c, c2c, zp_r2c, zp_c2r;
    int have_r2c, have_c2c, have_zp_r2c, have_zp_c2r;
    int first_bscan, n_bscans; /* what the slot holds in flight */
} slot_t;

struct fm_oct_cuda_stream {
    fm_oct_params params;
    fm_oct_tables tables;
    int own_tables;
    fm_pixel_type type;
    int n, n_alines, chunk_bscans, slots;
    int depth_down, enface; /* the layout the stream was opened for */
    float *d_window, *d_zero, *d_disp_cos, *d_disp_sin, *d_tdi_coef, *d_lin_frac, *d_zp_frac;
    int *d_tdi_start, *d_lin_index, *d_zp_index;
    size_t tdi_shared;
    slot_t slot[N_SLOTS];
};

/* ---- kernels ---------------------------------------------------------------------------- */

template <typename T> __device__ __forceinline__ float load_sample(const T *p, size_t i)
{
    return (float)__ldg(p + i);
}

/* Mean spectrum of each B-scan of the chunk: one thread per pixel, A-lines summed in double in
 * order (coalesced across pixels; the CPU twin sums in the same order). */
template <typename T> __global__ void oct_background(const T *raw, int n, int n_alines, float *bg)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x, b = blockIdx.y;
    if (i >= n)
        return;
    const T *base = raw + (size_t)b * n_alines * n;
    double sum = 0.0;
    for (int a = 0; a < n_alines; a++)
        sum += load_sample(base, (size_t)a * n + i);
    bg[(size_t)b * n + i] = (float)(sum / n_alines);
}

/* Background subtraction and spectral window, one thread per sample. bg_stride: n for a
 * background per B-scan, 0 for one spectrum (given, or zeros). */
template <typename T>
__global__ void oct_prepare(const T *raw, const float *bg, size_t bg_stride, const float *window,
                            int n, int n_alines, size_t total, float *x)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;
    const size_t line = idx / n;
    const int i = (int)(idx - line * n);
    const size_t b = line / n_alines;
    x[idx] = fm_oct_prepare(load_sample(raw, idx), bg[b * bg_stride + i], window[i]);
}

/* The paper's TDI with data and coefficients staged in shared memory: a block takes
 * FM_OCT_TILE consecutive output points of TDI_ALINES A-lines; the tile's L x 128 coefficients
 * are loaded once and serve all its A-lines, and each A-line's source span (the samples the
 * tile's windows touch, <= span_max) is loaded once and read by up to L threads. */
__global__ void oct_tdi_staged(const float *x, int n, int lines, const int *start,
                               const float *coef_t, int taps, int span_max, float *y)
{
    extern __shared__ float shared[];
    float *sh_coef = shared, *sh_x = shared + taps * FM_OCT_TILE;
    const int tid = threadIdx.x, m0 = blockIdx.x * FM_OCT_TILE, a0 = blockIdx.y * TDI_ALINES;
    for (int t = 0; t < taps; t++)
        sh_coef[t * FM_OCT_TILE + tid] = __ldg(coef_t + (size_t)t * n + m0 + tid);
    const int base = __ldg(start + m0);
    const int span = __ldg(start + m0 + FM_OCT_TILE - 1) + taps - base;
    for (int a = 0; a < TDI_ALINES; a++)
        for (int i = tid; i < span; i += FM_OCT_TILE)
            sh_x[a * span_max + i] =
                a0 + a < lines ? __ldg(x + (size_t)(a0 + a) * n + base + i) : 0.0f;
    __syncthreads();
    const int off = __ldg(start + m0 + tid) - base;
    for (int a = 0; a < TDI_ALINES && a0 + a < lines; a++)
        y[(size_t)(a0 + a) * n + m0 + tid] =
            fm_oct_tdi_point(sh_x + a * span_max + off, sh_coef + tid, FM_OCT_TILE, taps);
}

/* TDI straight from global memory, for windows too long to stage (L near n). */
__global__ void oct_tdi_direct(const float *x, int n, size_t total, const int *start,
                               const float *coef_t, int taps, float *y)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;
    const size_t line = idx / n;
    const int m = (int)(idx - line * n);
    y[idx] = fm_oct_tdi_point(x + line * n + start[m], coef_t + m, n, taps);
}

/* Linear (method 1), Catmull-Rom (2), or linear on the x4 zero-padded A-line (3). */
__global__ void oct_interp(const float *x, int n, int src_len, size_t total, int method,
                           const int *index, const float *frac, float *y)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;
    const size_t line = idx / n;
    const int m = (int)(idx - line * n);
    const float *src = x + line * src_len;
    y[idx] = method == FM_OCT_RESAMPLE_CUBIC ? fm_oct_cubic(src, n, index[m], frac[m])
                                             : fm_oct_linear(src, index[m], frac[m]);
}

/* Zero-padding x4: bins below n/2 scaled by 1/n, the Nyquist bin halved (c2r mirrors it), the
 * rest zero; same layout as the CPU twin's FFTW path. */
__global__ void oct_zero_pad(const cufftComplex *spec, int n, size_t total, cufftComplex *zp)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; /* over lines x (2n+1) */
    if (idx >= total)
        return;
    const size_t line = idx / (2 * n + 1);
    const int k = (int)(idx - line * (2 * n + 1));
    const float scale = 1.0f / n;
    cufftComplex v = make_cuFloatComplex(0.0f, 0.0f);
    const cufftComplex *s = spec + line * (n / 2 + 1);
    if (k < n / 2)
        v = make_cuFloatComplex(s[k].x * scale, s[k].y * scale);
    else if (k == n / 2)
        v = make_cuFloatComplex(s[k].x * 0.5f * scale, 0.0f);
    zp[idx] = v;
}

__global__ void oct_dispersion(const float *y, int n, size_t total, const float *c, const float *s,
                               cufftComplex *spec)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;
    const int m = (int)(idx % n);
    spec[idx] = make_cuFloatComplex(y[idx] * c[m], y[idx] * s[m]);
}

/* dB of the first n/2 bins; spec_stride: n/2+1 (r2c) or n (c2c) complex per line. */
__global__ void oct_log(const cufftComplex *spec, int n, int spec_stride, size_t total, float *out)
{
    const size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;
    const size_t line = idx / (n / 2);
    const int z = (int)(idx - line * (n / 2));
    const cufftComplex v = spec[line * spec_stride + z];
    __stcs(out + idx, fm_oct_db(v.x, v.y));
}

/* Depth down: each B-scan's dB lines (depth fastest) into an image with depth down and A-lines
 * across, through a 32 x 32 shared tile so that reads and writes both coalesce. Block 32 x 8,
 * grid (A-line tiles, depth tiles, B-scans). */
__global__ void oct_depth_down(const float *in, int n_alines, int depth, float *out)
{
    __shared__ float tile[32][33]; /* +1: the transposed reads hit 32 banks */
    const size_t b = blockIdx.z;
    const int a0 = blockIdx.x * 32, z0 = blockIdx.y * 32;
    const float *src = in + b * n_alines * depth;
    float *dst = out + b * n_alines * depth;
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        const int a = a0 + i, z = z0 + threadIdx.x;
        if (a < n_alines && z < depth)
            tile[i][threadIdx.x] = src[(size_t)a * depth + z];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        const int z = z0 + i, a = a0 + threadIdx.x;
        if (a < n_alines && z < depth)
            __stcs(dst + (size_t)z * n_alines + a, tile[threadIdx.x][i]);
    }
}

/* En-face: one warp per A-line, lane l adding bins first + l + 32 j, then the shuffle fold (the
 * CPU twin adds in the same order, oct_math.h). */
__global__ void oct_enface(const float *in, int depth, int lines, int first, int last, float *out)
{
    const int line = (int)((blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32);
    const int lane = threadIdx.x % 32;
    if (line >= lines)
        return; /* whole warps: lines are per warp */
    const float *db = in + (size_t)line * depth;
    double v = 0.0;
    for (int z = first + lane; z < last; z += FM_OCT_ENFACE_LANES)
        v += fm_oct_power(db[z]);
    for (int half = FM_OCT_ENFACE_LANES / 2; half > 0; half /= 2)
        v += __shfl_down_sync(0xffffffffu, v, half);
    if (lane == 0)
        out[line] = fm_oct_enface_db(v, last - first);
}

/* ---- host side -------------------------------------------------------------------------- */

static unsigned blocks_for(size_t total, unsigned threads)
{
    return (unsigned)((total + threads - 1) / threads);
}

static fm_status upload(void **dst, const void *src, size_t bytes, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    FM_CUDA_TRY(cudaMalloc(dst, bytes));
    FM_CUDA_TRY(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
cleanup:
    return status;
}

/* One chunk of whole B-scans already on the device in slot->d_raw: every step on the slot's
 * stream. ev (may be NULL): events recorded after background, resampling, FFT and log. */
static fm_status chunk_compute(fm_oct_cuda_stream *st, slot_t *sl, cudaEvent_t *ev, char *msg,
                               size_t msg_len)
{
    fm_status status = FM_OK;
    const fm_oct_params *p = &st->params;
    const fm_oct_tables *t = &st->tables;
    const int n = st->n, lines = st->chunk_bscans * st->n_alines;
    const size_t total = (size_t)lines * n, half = (size_t)lines * (n / 2);
    cudaStream_t s = sl->stream;
    const float *bg = st->d_zero;
    size_t bg_stride = 0;
    int spec_stride = n / 2 + 1; /* complex per line: r2c, or n for the dispersion c2c */

    if (p->background == FM_OCT_BACKGROUND_BSCAN) {
        dim3 grid(blocks_for(n, 256), st->chunk_bscans);
        if (st->type == FM_PIXEL_U8)
            oct_background<<<grid, 256, 0, s>>>((const uint8_t *)sl->d_raw, n, st->n_alines,
                                                sl->d_bg);
        else if (st->type == FM_PIXEL_U16)
            oct_background<<<grid, 256, 0, s>>>((const uint16_t *)sl->d_raw, n, st->n_alines,
                                                sl->d_bg);
        else
            oct_background<<<grid, 256, 0, s>>>((const float *)sl->d_raw, n, st->n_alines,
                                                sl->d_bg);
        FM_CUDA_CHECK_LAUNCH("oct_background");
        bg = sl->d_bg;
        bg_stride = n;
    } else if (p->background == FM_OCT_BACKGROUND_GIVEN) {
        bg = sl->d_bg; /* uploaded once at open into every slot */
    }
    if (st->type == FM_PIXEL_U8)
        oct_prepare<<<blocks_for(total, 256), 256, 0, s>>>((const uint8_t *)sl->d_raw, bg,
                                                           bg_stride, st->d_window, n, st->n_alines,
                                                           total, sl->d_x);
    else if (st->type == FM_PIXEL_U16)
        oct_prepare<<<blocks_for(total, 256), 256, 0, s>>>((const uint16_t *)sl->d_raw, bg,
                                                           bg_stride, st->d_window, n, st->n_alines,
                                                           total, sl->d_x);
    else
        oct_prepare<<<blocks_for(total, 256), 256, 0, s>>>(
            (const float *)sl->d_raw, bg, bg_stride, st->d_window, n, st->n_alines, total, sl->d_x);
    FM_CUDA_CHECK_LAUNCH("oct_prepare");
    if (ev)
        FM_CUDA_TRY(cudaEventRecord(ev[0], s));

    switch (p->resample) {
    case FM_OCT_RESAMPLE_TDI:
        if (st->tdi_shared) {
            dim3 grid(n / FM_OCT_TILE, (lines + TDI_ALINES - 1) / TDI_ALINES);
            oct_tdi_staged<<<grid, FM_OCT_TILE, st->tdi_shared, s>>>(
                sl->d_x, n, lines, st->d_tdi_start, st->d_tdi_coef, t->taps, t->span_max, sl->d_y);
            FM_CUDA_CHECK_LAUNCH("oct_tdi_staged");
        } else {
            oct_tdi_direct<<<blocks_for(total, 256), 256, 0, s>>>(
                sl->d_x, n, total, st->d_tdi_start, st->d_tdi_coef, t->taps, sl->d_y);
            FM_CUDA_CHECK_LAUNCH("oct_tdi_direct");
        }
        break;
    case FM_OCT_RESAMPLE_LINEAR:
    case FM_OCT_RESAMPLE_CUBIC:
        oct_interp<<<blocks_for(total, 256), 256, 0, s>>>(sl->d_x, n, n, total, (int)p->resample,
                                                          st->d_lin_index, st->d_lin_frac, sl->d_y);
        FM_CUDA_CHECK_LAUNCH("oct_interp");
        break;
    case FM_OCT_RESAMPLE_ZEROPAD: {
        const size_t zp_total = (size_t)lines * (2 * n + 1);
        FM_CUFFT_TRY(cufftExecR2C(sl->zp_r2c, sl->d_x, sl->d_spec));
        oct_zero_pad<<<blocks_for(zp_total, 256), 256, 0, s>>>(sl->d_spec, n, zp_total, sl->d_zp);
        FM_CUDA_CHECK_LAUNCH("oct_zero_pad");
        FM_CUFFT_TRY(cufftExecC2R(sl->zp_c2r, sl->d_zp, sl->d_x4));
        oct_interp<<<blocks_for(total, 256), 256, 0, s>>>(sl->d_x4, n, 4 * n, total,
                                                          FM_OCT_RESAMPLE_ZEROPAD, st->d_zp_index,
                                                          st->d_zp_frac, sl->d_y);
        FM_CUDA_CHECK_LAUNCH("oct_interp (zero-padded)");
        break;
    }
    }
    if (ev)
        FM_CUDA_TRY(cudaEventRecord(ev[1], s));

    if (st->d_disp_cos) {
        oct_dispersion<<<blocks_for(total, 256), 256, 0, s>>>(sl->d_y, n, total, st->d_disp_cos,
                                                              st->d_disp_sin, sl->d_spec);
        FM_CUDA_CHECK_LAUNCH("oct_dispersion");
        FM_CUFFT_TRY(cufftExecC2C(sl->c2c, sl->d_spec, sl->d_spec, CUFFT_FORWARD));
        spec_stride = n;
    } else {
        FM_CUFFT_TRY(cufftExecR2C(sl->r2c, sl->d_y, sl->d_spec));
    }
    if (ev)
        FM_CUDA_TRY(cudaEventRecord(ev[2], s));
    oct_log<<<blocks_for(half, 256), 256, 0, s>>>(sl->d_spec, n, spec_stride, half, sl->d_out);
    FM_CUDA_CHECK_LAUNCH("oct_log");
    if (ev)
        FM_CUDA_TRY(cudaEventRecord(ev[3], s));
cleanup:
    return status;
}

void fm_oct_cuda_stream_close(fm_oct_cuda_stream *st)
{
    if (!st)
        return;
    for (int i = 0; i < N_SLOTS; i++) {
        slot_t *sl = &st->slot[i];
        if (sl->stream)
            cudaStreamSynchronize(sl->stream);
        if (sl->have_r2c)
            cufftDestroy(sl->r2c);
        if (sl->have_c2c)
            cufftDestroy(sl->c2c);
        if (sl->have_zp_r2c)
            cufftDestroy(sl->zp_r2c);
        if (sl->have_zp_c2r)
            cufftDestroy(sl->zp_c2r);
        if (sl->stream)
            cudaStreamDestroy(sl->stream);
        if (sl->done)
            cudaEventDestroy(sl->done);
        cudaFree(sl->d_raw);
        cudaFree(sl->d_bg);
        cudaFree(sl->d_x);
        cudaFree(sl->d_y);
        cudaFree(sl->d_x4);
        cudaFree(sl->d_out);
        cudaFree(sl->d_shown);
        cudaFree(sl->d_enface);
        cudaFree(sl->d_spec);
        cudaFree(sl->d_zp);
        fm_host_staging_put(sl->h_raw, sl->h_raw_bytes);
        fm_host_staging_put(sl->h_out, sl->h_out_bytes);
    }
    cudaFree(st->d_window);
    cudaFree(st->d_zero);
    cudaFree(st->d_disp_cos);
    cudaFree(st->d_disp_sin);
    cudaFree(st->d_tdi_coef);
    cudaFree(st->d_tdi_start);
    cudaFree(st->d_lin_index);
    cudaFree(st->d_lin_frac);
    cudaFree(st->d_zp_index);
    cudaFree(st->d_zp_frac);
    if (st->own_tables)
        fm_oct_tables_free(&st->tables);
    free(st);
}

/* Plans for `lines` A-lines of n pixels, bound to the slot's stream. */
static fm_status make_plans(fm_oct_cuda_stream *st, slot_t *sl, int lines, char *msg,
                            size_t msg_len)
{
    fm_status status = FM_OK;
    int n = st->n, n4 = 4 * st->n;
    if (st->d_disp_cos) {
        FM_CUFFT_TRY(cufftPlanMany(&sl->c2c, 1, &n, NULL, 1, n, NULL, 1, n, CUFFT_C2C, lines));
        sl->have_c2c = 1;
        FM_CUFFT_TRY(cufftSetStream(sl->c2c, sl->stream));
    } else {
        FM_CUFFT_TRY(
            cufftPlanMany(&sl->r2c, 1, &n, NULL, 1, n, NULL, 1, n / 2 + 1, CUFFT_R2C, lines));
        sl->have_r2c = 1;
        FM_CUFFT_TRY(cufftSetStream(sl->r2c, sl->stream));
    }
    if (st->params.resample == FM_OCT_RESAMPLE_ZEROPAD) {
        FM_CUFFT_TRY(
            cufftPlanMany(&sl->zp_r2c, 1, &n, NULL, 1, n, NULL, 1, n / 2 + 1, CUFFT_R2C, lines));
        sl->have_zp_r2c = 1;
        FM_CUFFT_TRY(cufftSetStream(sl->zp_r2c, sl->stream));
        FM_CUFFT_TRY(
            cufftPlanMany(&sl->zp_c2r, 1, &n4, NULL, 1, 2 * n + 1, NULL, 1, n4, CUFFT_C2R, lines));
        sl->have_zp_c2r = 1;
        FM_CUFFT_TRY(cufftSetStream(sl->zp_c2r, sl->stream));
    }
cleanup:
    return status;
}

/* The per-calibration tables on the device (made anew for each run: a re-run may change them). */
static fm_status upload_tables(fm_oct_cuda_stream *st, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const fm_oct_tables *t = &st->tables;
    const int n = st->n;
    float **floats[] = {&st->d_window,   &st->d_lin_frac, &st->d_zp_frac,
                        &st->d_tdi_coef, &st->d_disp_cos, &st->d_disp_sin};
    int **ints[] = {&st->d_lin_index, &st->d_zp_index, &st->d_tdi_start};
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
        cudaFree(*floats[i]);
        *floats[i] = NULL;
    }
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        cudaFree(*ints[i]);
        *ints[i] = NULL;
    }
    status = upload((void **)&st->d_window, t->window, sizeof(float) * n, msg, msg_len);
    if (status == FM_OK)
        status = upload((void **)&st->d_lin_index, t->lin_index, sizeof(int) * n, msg, msg_len);
    if (status == FM_OK)
        status = upload((void **)&st->d_lin_frac, t->lin_frac, sizeof(float) * n, msg, msg_len);
    if (status == FM_OK)
        status = upload((void **)&st->d_zp_index, t->zp_index, sizeof(int) * n, msg, msg_len);
    if (status == FM_OK)
        status = upload((void **)&st->d_zp_frac, t->zp_frac, sizeof(float) * n, msg, msg_len);
    if (status == FM_OK && t->tdi_start)
        status = upload((void **)&st->d_tdi_start, t->tdi_start, sizeof(int) * n, msg, msg_len);
    if (status == FM_OK && t->tdi_coef_t)
        status = upload((void **)&st->d_tdi_coef, t->tdi_coef_t, sizeof(float) * n * t->taps, msg,
                        msg_len);
    if (status == FM_OK && t->disp_cos)
        status = upload((void **)&st->d_disp_cos, t->disp_cos, sizeof(float) * n, msg, msg_len);
    if (status == FM_OK && t->disp_cos)
        status = upload((void **)&st->d_disp_sin, t->disp_sin, sizeof(float) * n, msg, msg_len);
    if (status != FM_OK)
        return status;
    st->tdi_shared = 0;
    if (t->tdi_start) {
        /* Stage when the tile fits the default 48 KiB of shared memory (L up to ~90). */
        size_t need =
            sizeof(float) * ((size_t)t->taps * FM_OCT_TILE + (size_t)TDI_ALINES * t->span_max);
        st->tdi_shared = need <= 48 * 1024 ? need : 0;
    }
    for (int i = 0; i < st->slots && st->params.background == FM_OCT_BACKGROUND_GIVEN; i++)
        FM_CUDA_TRY(cudaMemcpy(st->slot[i].d_bg, st->params.background_spectrum, sizeof(float) * n,
                               cudaMemcpyHostToDevice));
cleanup:
    return status;
}

/* B-scans per chunk and slots for a run of bscans_hint B-scans (0: unknown; -S: a live context's
 * S slots of one B-scan each). */
static void chunking(int n_alines, int bscans_hint, int *chunk_bscans, int *slots)
{
    if (bscans_hint < 0) {
        *chunk_bscans = 1;
        *slots = -bscans_hint < N_SLOTS ? -bscans_hint : N_SLOTS;
        return;
    }
    int chunk = CHUNK_ALINES / n_alines;
    chunk = chunk < 1 ? 1 : chunk;
    chunk = bscans_hint > 0 && bscans_hint < chunk ? bscans_hint : chunk;
    const int ceil_chunks = bscans_hint > 0 ? (bscans_hint + chunk - 1) / chunk : N_SLOTS;
    *chunk_bscans = chunk;
    *slots = ceil_chunks < N_SLOTS ? ceil_chunks : N_SLOTS;
}

/* The last run's stream, kept for the next run of the same shape (a re-run in the GUI, a changed
 * parameter): its device buffers and cuFFT plans cost more to make than a run's kernels. */
static pthread_mutex_t parked_lock = PTHREAD_MUTEX_INITIALIZER;
static fm_oct_cuda_stream *parked;

/* The parked stream when its buffers and plans fit this run, else NULL (and it is closed). */
static fm_oct_cuda_stream *take_parked(const fm_oct_params *params, const fm_oct_tables *tables,
                                       fm_pixel_type type, int n_alines, int bscans_hint,
                                       const fm_oct_layout *layout)
{
    int chunk, slots;
    chunking(n_alines, bscans_hint, &chunk, &slots);
    pthread_mutex_lock(&parked_lock);
    fm_oct_cuda_stream *st = parked;
    parked = NULL;
    pthread_mutex_unlock(&parked_lock);
    if (!st)
        return NULL;
    const int zp = params->resample == FM_OCT_RESAMPLE_ZEROPAD;
    if (st->n == params->n_pixels && st->type == type && st->n_alines == n_alines &&
        st->chunk_bscans == chunk && st->slots == slots &&
        (st->params.resample == FM_OCT_RESAMPLE_ZEROPAD) == zp &&
        (st->d_disp_cos != NULL) == (tables->disp_cos != NULL) &&
        st->depth_down == (layout && layout->depth_down) &&
        st->enface == (layout && layout->enface_db))
        return st;
    fm_oct_cuda_stream_close(st);
    return NULL;
}

/* Keeps st for the next run, closing the one kept before (one is enough for a re-run). */
static void park(fm_oct_cuda_stream *st)
{
    pthread_mutex_lock(&parked_lock);
    fm_oct_cuda_stream *old = parked;
    parked = st;
    pthread_mutex_unlock(&parked_lock);
    fm_oct_cuda_stream_close(old);
}

static fm_status stream_open(const fm_oct_params *params, const fm_oct_tables *tables,
                             fm_pixel_type type, int n_alines, int bscans_hint,
                             const fm_oct_layout *layout, fm_oct_cuda_stream **out, char *msg,
                             size_t msg_len)
{
    fm_status status = FM_OK;
    fm_oct_cuda_stream *st = NULL;
    *out = NULL;
    if (tables && (st = take_parked(params, tables, type, n_alines, bscans_hint, layout))) {
        st->params = *params;
        st->tables = *tables; /* borrowed for this run */
        status = upload_tables(st, msg, msg_len);
        if (status != FM_OK)
            goto cleanup;
        *out = st;
        return FM_OK;
    }
    st = (fm_oct_cuda_stream *)calloc(1, sizeof *st);
    if (!st)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the OCT stream");
    st->params = *params;
    st->type = type;
    st->n = params->n_pixels;
    st->n_alines = n_alines;
    st->depth_down = layout && layout->depth_down;
    st->enface = layout && layout->enface_db;
    if (tables) {
        st->tables = *tables; /* borrowed: the caller frees it */
    } else {
        status = fm_oct_tables_build(params, &st->tables, msg, msg_len);
        if (status != FM_OK)
            goto cleanup;
        st->own_tables = 1;
    }
    {
        const fm_oct_tables *t = &st->tables;
        const int n = st->n;
        chunking(n_alines, bscans_hint, &st->chunk_bscans, &st->slots);
        const int chunk = st->chunk_bscans;
        const size_t lines = (size_t)chunk * n_alines, total = lines * n;
        const int zp = params->resample == FM_OCT_RESAMPLE_ZEROPAD;
        const int disp = t->disp_cos != NULL;
        FM_CUDA_TRY(cudaMalloc((void **)&st->d_zero, sizeof(float) * n));
        FM_CUDA_TRY(cudaMemset(st->d_zero, 0, sizeof(float) * n));
        for (int i = 0; i < st->slots; i++) {
            slot_t *sl = &st->slot[i];
            const size_t spec = disp ? total : lines * (n / 2 + 1);
            FM_CUDA_TRY(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
            FM_CUDA_TRY(cudaEventCreateWithFlags(&sl->done, cudaEventDisableTiming));
            FM_CUDA_TRY(cudaMalloc(&sl->d_raw, total * fm_pixel_size(type)));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_bg, sizeof(float) * n * chunk));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_x, sizeof(float) * total));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_y, sizeof(float) * total));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_out, sizeof(float) * lines * (n / 2)));
            if (st->depth_down)
                FM_CUDA_TRY(cudaMalloc((void **)&sl->d_shown, sizeof(float) * lines * (n / 2)));
            if (st->enface)
                FM_CUDA_TRY(cudaMalloc((void **)&sl->d_enface, sizeof(float) * lines));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_spec, sizeof(cufftComplex) * spec));
            if (zp) {
                FM_CUDA_TRY(
                    cudaMalloc((void **)&sl->d_zp, sizeof(cufftComplex) * lines * (2 * n + 1)));
                FM_CUDA_TRY(cudaMalloc((void **)&sl->d_x4, sizeof(float) * total * 4));
            }
        }
        /* the plans follow the dispersion table's presence, so the tables go up first */
        status = upload_tables(st, msg, msg_len);
        for (int i = 0; status == FM_OK && i < st->slots; i++)
            status = make_plans(st, &st->slot[i], (int)lines, msg, msg_len);
        if (status != FM_OK)
            goto cleanup;
    }
    *out = st;
    return FM_OK;
cleanup:
    fm_oct_cuda_stream_close(st);
    return status;
}

fm_status fm_oct_cuda_stream_open(const fm_oct_params *params, fm_pixel_type type, int n_alines,
                                  int bscans_hint, fm_oct_cuda_stream **out, char *msg,
                                  size_t msg_len)
{
    fm_status status = fm_oct_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    return stream_open(params, NULL, type, n_alines, bscans_hint, NULL, out, msg, msg_len);
}

/* The chunk's own B-scans as the app shows them: depth down, and the en-face lines. */
static fm_status chunk_layout(fm_oct_cuda_stream *st, slot_t *sl, const fm_oct_layout *layout,
                              char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const int depth = st->n / 2, lines = sl->n_bscans * st->n_alines;
    if (st->depth_down) {
        dim3 grid((st->n_alines + 31) / 32, (depth + 31) / 32, sl->n_bscans);
        oct_depth_down<<<grid, dim3(32, 8), 0, sl->stream>>>(sl->d_out, st->n_alines, depth,
                                                             sl->d_shown);
        FM_CUDA_CHECK_LAUNCH("oct_depth_down");
    }
    if (st->enface) {
        oct_enface<<<blocks_for((size_t)lines * 32, 256), 256, 0, sl->stream>>>(
            sl->d_out, depth, lines, layout->enface_first, layout->enface_last, sl->d_enface);
        FM_CUDA_CHECK_LAUNCH("oct_enface");
    }
cleanup:
    return status;
}

/* The pipeline: chunk c uploads on its slot's stream while earlier chunks compute and download
 * on theirs; the host waits only to reuse a slot, then reports each B-scan it retires. */
static fm_status stream_process(fm_oct_cuda_stream *st, const void *spectra, int n_bscans,
                                float *bscan_db, const fm_oct_layout *layout, fm_tick_fn tick,
                                void *tick_user, fm_run_info *info, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    const int n = st->n, chunk = st->chunk_bscans;
    const size_t in_per_bscan = (size_t)st->n_alines * n * fm_pixel_size(st->type);
    const size_t out_per_bscan = (size_t)st->n_alines * (n / 2) * sizeof(float);
    const int n_chunks = (n_bscans + chunk - 1) / chunk;
    int retired = 0;
    double upload_ms = 0.0;
    fm_cuda_tail tail = {NULL, NULL};
    /* Spectra core keeps resident on the device are copied there, device to device. */
    const char *d_spectra =
        (const char *)fm_resident_acquire(spectra, in_per_bscan * n_bscans, &upload_ms);
    float *enface_db = st->enface ? layout->enface_db : NULL;
    const size_t enface_per_bscan = enface_db ? (size_t)st->n_alines * sizeof(float) : 0;
    /* Pinned maps (core's are, once the GPU is started) take the download directly. */
    const int stage_in = !d_spectra && !fm_cuda_is_pinned(spectra);
    const int stage_out =
        !fm_cuda_is_pinned(bscan_db) || (enface_db && !fm_cuda_is_pinned(enface_db));

    for (int i = 0; (stage_in || stage_out) && i < st->slots; i++) {
        slot_t *sl = &st->slot[i];
        /* from the pinned pool: the method's next chunk of B-scans reuses them */
        if (!sl->h_raw && stage_in) {
            sl->h_raw_bytes = in_per_bscan * chunk;
            if (!(sl->h_raw = fm_host_staging_get(sl->h_raw_bytes))) {
                status = fm_fail(FM_ERR_DEVICE, msg, msg_len, "no pinned staging memory");
                goto cleanup;
            }
        }
        if (!sl->h_out && stage_out) {
            sl->h_out_bytes = (out_per_bscan + enface_per_bscan) * chunk;
            if (!(sl->h_out = (float *)fm_host_staging_get(sl->h_out_bytes))) {
                status = fm_fail(FM_ERR_DEVICE, msg, msg_len, "no pinned staging memory");
                goto cleanup;
            }
        }
    }
    for (int c = 0; c <= n_chunks; c++) {
        while (retired < c && (c == n_chunks || c - retired >= st->slots)) {
            slot_t *sl = &st->slot[retired % st->slots];
            FM_CUDA_TRY(cudaEventSynchronize(sl->done));
            if (stage_out)
                fm_parallel_memcpy((char *)bscan_db + (size_t)sl->first_bscan * out_per_bscan,
                                   sl->h_out, out_per_bscan * sl->n_bscans);
            if (stage_out && enface_db)
                memcpy((char *)enface_db + (size_t)sl->first_bscan * enface_per_bscan,
                       (char *)sl->h_out + out_per_bscan * chunk, enface_per_bscan * sl->n_bscans);
            retired++;
            for (int b = 0; tick && b < sl->n_bscans; b++)
                if (tick(tick_user, (double)(sl->first_bscan + b + 1) / n_bscans)) {
                    status =
                        fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled after B-scan %d of %d",
                                sl->first_bscan + b + 1, n_bscans);
                    goto cleanup;
                }
        }
        if (c == n_chunks)
            break;
        slot_t *sl = &st->slot[c % st->slots];
        sl->first_bscan = c * chunk;
        sl->n_bscans = n_bscans - sl->first_bscan < chunk ? n_bscans - sl->first_bscan : chunk;
        const size_t in_offset = (size_t)sl->first_bscan * in_per_bscan;
        const char *src = d_spectra ? d_spectra + in_offset : (const char *)spectra + in_offset;
        char *dst = (char *)bscan_db + (size_t)sl->first_bscan * out_per_bscan;
        char *enface_dst =
            enface_db ? (char *)enface_db + (size_t)sl->first_bscan * enface_per_bscan : NULL;
        if (stage_in) {
            fm_parallel_memcpy(sl->h_raw, src, in_per_bscan * sl->n_bscans);
            src = (const char *)sl->h_raw;
        }
        if (stage_out) {
            dst = (char *)sl->h_out;
            enface_dst = enface_db ? (char *)sl->h_out + out_per_bscan * chunk : NULL;
        }
        /* A short last chunk computes the whole batch (stale rows included) and downloads only
         * its own B-scans: the cuFFT plans keep one batch size. */
        FM_CUDA_TRY(cudaMemcpyAsync(sl->d_raw, src, in_per_bscan * sl->n_bscans,
                                    d_spectra ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice,
                                    sl->stream));
        status = chunk_compute(st, sl, NULL, msg, msg_len);
        if (status != FM_OK)
            goto cleanup;
        status = chunk_layout(st, sl, layout, msg, msg_len);
        if (status != FM_OK)
            goto cleanup;
        fm_cuda_tail_mark(&tail, 0, sl->stream);
        FM_CUDA_TRY(cudaMemcpyAsync(dst, st->depth_down ? sl->d_shown : sl->d_out,
                                    out_per_bscan * sl->n_bscans, cudaMemcpyDeviceToHost,
                                    sl->stream));
        if (enface_dst)
            FM_CUDA_TRY(cudaMemcpyAsync(enface_dst, sl->d_enface, enface_per_bscan * sl->n_bscans,
                                        cudaMemcpyDeviceToHost, sl->stream));
        fm_cuda_tail_mark(&tail, 1, sl->stream);
        FM_CUDA_TRY(cudaEventRecord(sl->done, sl->stream));
    }
    if (info) {
        info->upload_ms = upload_ms;
        info->download_ms = fm_cuda_tail_ms(&tail);
        info->resident = d_spectra && upload_ms == 0.0;
    }
cleanup:
    fm_cuda_tail_ms(&tail);
    if (d_spectra)
        fm_resident_release(spectra);
    for (int i = 0; i < st->slots; i++)
        cudaStreamSynchronize(st->slot[i].stream);
    return status;
}

fm_status fm_oct_cuda_stream_run(fm_oct_cuda_stream *st, const void *spectra, int n_bscans,
                                 float *bscan_db, char *msg, size_t msg_len)
{
    return stream_process(st, spectra, n_bscans, bscan_db, NULL, NULL, NULL, NULL, msg, msg_len);
}

fm_status fm_oct_cuda_stream_open_shown(const fm_oct_params *params, fm_pixel_type type,
                                        int n_alines, int bscans_hint, const fm_oct_layout *layout,
                                        fm_oct_cuda_stream **out, char *msg, size_t msg_len)
{
    fm_status status = fm_oct_check(params, msg, msg_len);
    if (status != FM_OK)
        return status;
    return stream_open(params, NULL, type, n_alines, bscans_hint, layout, out, msg, msg_len);
}

int fm_oct_cuda_stream_slots(const fm_oct_cuda_stream *st)
{
    return st->slots;
}

fm_status fm_oct_cuda_stream_enqueue(fm_oct_cuda_stream *st, int slot, const void *spectra,
                                     float *bscan_db, float *enface_db, const fm_oct_layout *layout,
                                     char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    if (slot < 0 || slot >= st->slots || st->chunk_bscans != 1)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "slot %d of %d (one B-scan each) does not exist", slot, st->slots);
    slot_t *sl = &st->slot[slot];
    const size_t in_bytes = (size_t)st->n_alines * st->n * fm_pixel_size(st->type);
    const size_t out_bytes = (size_t)st->n_alines * (st->n / 2) * sizeof(float);
    sl->first_bscan = 0;
    sl->n_bscans = 1;
    /* From a registered camera buffer this is a DMA; from pageable memory the runtime stages. */
    FM_CUDA_TRY(cudaMemcpyAsync(sl->d_raw, spectra, in_bytes, cudaMemcpyHostToDevice, sl->stream));
    status = chunk_compute(st, sl, NULL, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
    status = chunk_layout(st, sl, layout, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
    FM_CUDA_TRY(cudaMemcpyAsync(bscan_db, st->depth_down ? sl->d_shown : sl->d_out, out_bytes,
                                cudaMemcpyDeviceToHost, sl->stream));
    if (st->enface && enface_db)
        FM_CUDA_TRY(cudaMemcpyAsync(enface_db, sl->d_enface, sizeof(float) * st->n_alines,
                                    cudaMemcpyDeviceToHost, sl->stream));
    FM_CUDA_TRY(cudaEventRecord(sl->done, sl->stream));
cleanup:
    return status;
}

fm_status fm_oct_cuda_stream_wait(fm_oct_cuda_stream *st, int slot, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    FM_CUDA_TRY(cudaEventSynchronize(st->slot[slot].done));
cleanup:
    return status;
}

fm_status fm_oct_cuda_run(const fm_oct_job *job, const fm_oct_tables *tables, fm_run_info *info,
                          char *msg, size_t msg_len)
{
    fm_oct_cuda_stream *st = NULL;
    fm_status status = stream_open(&job->params, tables, job->type, job->n_alines, job->n_bscans,
                                   &job->layout, &st, msg, msg_len);
    if (status != FM_OK)
        return status;
    status = stream_process(st, job->spectra, job->n_bscans, job->bscan_db, &job->layout, job->tick,
                            job->tick_user, info, msg, msg_len);
    if (status == FM_OK)
        park(st); /* the next run of this shape starts from it */
    else
        fm_oct_cuda_stream_close(st);
    return status;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

fm_status fm_oct_cuda_time_steps(const fm_oct_params *params, const void *spectra,
                                 fm_pixel_type type, int n_alines, int reps, double step_ms[6],
                                 char *msg, size_t msg_len)
{
    fm_oct_cuda_stream *st = NULL;
    cudaEvent_t ev[6] = {0};
    double *times = NULL;
    void *h_in = NULL;
    float *h_out = NULL;
    fm_status status = fm_oct_cuda_stream_open(params, type, n_alines, 1, &st, msg, msg_len);
    if (status != FM_OK)
        return status;
    const size_t in_bytes = (size_t)n_alines * st->n * fm_pixel_size(type);
    const size_t out_bytes = (size_t)n_alines * (st->n / 2) * sizeof(float);
    slot_t *sl = &st->slot[0];
    times = (double *)calloc((size_t)reps * 6, sizeof(double));
    if (!times) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %d timings", reps);
        goto cleanup;
    }
    for (int i = 0; i < 6; i++)
        FM_CUDA_TRY(cudaEventCreate(&ev[i]));
    FM_CUDA_TRY(cudaHostAlloc(&h_in, in_bytes, cudaHostAllocDefault));
    FM_CUDA_TRY(cudaHostAlloc((void **)&h_out, out_bytes, cudaHostAllocDefault));
    memcpy(h_in, spectra, in_bytes);
    for (int r = -2; r < reps; r++) { /* two warm-up runs */
        FM_CUDA_TRY(cudaEventRecord(ev[0], sl->stream));
        FM_CUDA_TRY(cudaMemcpyAsync(sl->d_raw, h_in, in_bytes, cudaMemcpyHostToDevice, sl->stream));
        FM_CUDA_TRY(cudaEventRecord(ev[1], sl->stream));
        /* chunk_compute records after background, resampling, FFT and log. */
        cudaEvent_t steps[4] = {ev[2], ev[3], ev[4], ev[5]};
        status = chunk_compute(st, sl, steps, msg, msg_len);
        if (status != FM_OK)
            goto cleanup;
        FM_CUDA_TRY(
            cudaMemcpyAsync(h_out, sl->d_out, out_bytes, cudaMemcpyDeviceToHost, sl->stream));
        FM_CUDA_TRY(cudaEventRecord(sl->done, sl->stream));
        FM_CUDA_TRY(cudaStreamSynchronize(sl->stream));
        if (r < 0)
            continue;
        /* Each step: the time between its bounding events; the download is timed apart below
         * since ev[] is reused. */
        float ms;
        for (int i = 0; i < 5; i++) {
            FM_CUDA_TRY(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            times[i * reps + r] = ms;
        }
        FM_CUDA_TRY(cudaEventRecord(ev[0], sl->stream));
        FM_CUDA_TRY(
            cudaMemcpyAsync(h_out, sl->d_out, out_bytes, cudaMemcpyDeviceToHost, sl->stream));
        FM_CUDA_TRY(cudaEventRecord(ev[1], sl->stream));
        FM_CUDA_TRY(cudaEventSynchronize(ev[1]));
        FM_CUDA_TRY(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        times[5 * reps + r] = ms;
    }
    for (int i = 0; i < 6; i++) {
        qsort(times + i * reps, (size_t)reps, sizeof(double), cmp_double);
        step_ms[i] = times[i * reps + reps / 2];
    }
cleanup:
    if (st)
        cudaStreamSynchronize(sl->stream);
    for (int i = 0; i < 6; i++)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    cudaFreeHost(h_in);
    cudaFreeHost(h_out);
    free(times);
    fm_oct_cuda_stream_close(st);
    return status;
}
