/* CUDA half of the LSI live context: buffers made once, the offline kernels launched per frame
 * (lsi_cuda_launch.h). Spatial frames alternate between two slots, each on its own stream, so
 * that frame k+1's upload overlaps frame k's kernel and download when the caller submits ahead;
 * temporal windows keep their last frames on the device as a ring and run in order on one
 * stream. CUDA events time each frame from its upload to the end of its download. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "lsi_cuda_launch.h"
#include "lsi_live_cuda.h"

#define LIVE_SLOTS 2

typedef struct {
    cudaStream_t stream; /* shared by the slots of a temporal context */
    cudaEvent_t start, stop;
    void *d_in;       /* spatial: this slot's frame */
    float *d_k, *d_s; /* this frame's maps on the device */
    float *h_k, *h_s; /* and in page-locked host memory, handed to the caller */
    unsigned long long *d_invalid, *h_invalid;
    int ready;
} live_slot;

struct fm_lsi_live_gpu {
    fm_lsi_params params;
    int mode, width, height;
    fm_pixel_type type;
    size_t plane, in_bytes;
    int slots;
    live_slot slot[LIVE_SLOTS];
    void *d_ring;      /* temporal: the last params.frames frames, slot (seen % frames) */
    void *d_s1, *d_s2; /* temporal: per-pixel sums over the window */
    long long seen;    /* frames submitted so far */
    long long submitted, collected;
};

extern "C" void fm_lsi_live_gpu_destroy(fm_lsi_live_gpu *g)
{
    if (!g)
        return;
    for (int i = 0; i < LIVE_SLOTS; i++)
        if (g->slot[i].stream)
            cudaStreamSynchronize(g->slot[i].stream);
    for (int i = 0; i < LIVE_SLOTS; i++) {
        live_slot *sl = &g->slot[i];
        if (sl->stream && (i == 0 || sl->stream != g->slot[0].stream))
            cudaStreamDestroy(sl->stream);
        if (sl->start)
            cudaEventDestroy(sl->start);
        if (sl->stop)
            cudaEventDestroy(sl->stop);
        cudaFree(sl->d_in);
        cudaFree(sl->d_k);
        cudaFree(sl->d_s);
        cudaFree(sl->d_invalid);
        cudaFreeHost(sl->h_k);
        cudaFreeHost(sl->h_s);
        cudaFreeHost(sl->h_invalid);
    }
    cudaFree(g->d_ring);
    cudaFree(g->d_s1);
    cudaFree(g->d_s2);
    free(g);
}

extern "C" fm_status fm_lsi_live_gpu_create(const fm_lsi_params *params, int mode, int width,
                                            int height, fm_pixel_type type, fm_lsi_live_gpu **out,
                                            char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    fm_lsi_live_gpu *g = (fm_lsi_live_gpu *)calloc(1, sizeof *g);
    *out = NULL;
    if (!g)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the live context");
    g->params = *params;
    g->mode = mode;
    g->width = width;
    g->height = height;
    g->type = type;
    g->plane = (size_t)width * height;
    g->in_bytes = g->plane * fm_pixel_size(type);
    g->slots = LIVE_SLOTS;
    FM_CUDA_TRY(cudaSetDevice(0));
    if (mode != 0) {
        FM_CUDA_TRY(cudaMalloc(&g->d_ring, g->in_bytes * (size_t)params->frames));
        FM_CUDA_TRY(cudaMalloc(&g->d_s1, g->plane * 8));
        FM_CUDA_TRY(cudaMalloc(&g->d_s2, g->plane * 8));
    }
    for (int i = 0; i < g->slots; i++) {
        live_slot *sl = &g->slot[i];
        if (mode == 0 || i == 0)
            FM_CUDA_TRY(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
        else
            sl->stream = g->slot[0].stream; /* the ring and the sums go in frame order */
        FM_CUDA_TRY(cudaEventCreate(&sl->start));
        FM_CUDA_TRY(cudaEventCreate(&sl->stop));
        if (mode == 0)
            FM_CUDA_TRY(cudaMalloc(&sl->d_in, g->in_bytes));
        FM_CUDA_TRY(cudaMalloc((void **)&sl->d_k, g->plane * sizeof(float)));
        FM_CUDA_TRY(cudaMalloc((void **)&sl->d_s, g->plane * sizeof(float)));
        FM_CUDA_TRY(cudaMalloc((void **)&sl->d_invalid, sizeof *sl->d_invalid));
        FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_k, g->plane * sizeof(float), 0));
        FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_s, g->plane * sizeof(float), 0));
        FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_invalid, sizeof *sl->h_invalid, 0));
    }
    *out = g;
    return FM_OK;
cleanup:
    fm_lsi_live_gpu_destroy(g);
    return status;
}

extern "C" int fm_lsi_live_gpu_depth(const fm_lsi_live_gpu *g)
{
    return g->slots;
}

extern "C" fm_status fm_lsi_live_gpu_submit(fm_lsi_live_gpu *g, const void *frame, char *msg,
                                            size_t msg_len)
{
    fm_status status = FM_OK;
    if (g->submitted - g->collected >= g->slots)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "%d frames are in flight: collect one before submitting", g->slots);
    live_slot *sl = &g->slot[g->submitted % g->slots];
    cudaStream_t st = sl->stream;
    const void *d_frame = sl->d_in;
    FM_CUDA_TRY(cudaEventRecord(sl->start, st));
    if (g->mode == 0) {
        sl->ready = 1;
    } else {
        const int F = g->params.frames;
        d_frame = (char *)g->d_ring + (size_t)(g->seen % F) * g->in_bytes;
        sl->ready = g->seen + 1 >= F;
    }
    /* From a registered camera buffer this is a DMA; from pageable memory the runtime stages. */
    FM_CUDA_TRY(cudaMemcpyAsync((void *)d_frame, frame, g->in_bytes, cudaMemcpyHostToDevice, st));
    g->seen++;
    if (sl->ready) {
        FM_CUDA_TRY(cudaMemsetAsync(sl->d_invalid, 0, sizeof *sl->d_invalid, st));
        if (g->mode == 0)
            FM_CUDA_TRY(fm_lsi_cuda_launch_spatial(g->type, d_frame, g->width, g->height,
                                                   &g->params, sl->d_k, sl->d_s, sl->d_invalid,
                                                   st));
        else
            FM_CUDA_TRY(fm_lsi_cuda_launch_window(g->mode, g->type, g->d_ring, g->width, g->height,
                                                  &g->params, g->d_s1, g->d_s2, sl->d_k, sl->d_s,
                                                  sl->d_invalid, st));
        FM_CUDA_TRY(cudaMemcpyAsync(sl->h_k, sl->d_k, g->plane * sizeof(float),
                                    cudaMemcpyDeviceToHost, st));
        FM_CUDA_TRY(cudaMemcpyAsync(sl->h_s, sl->d_s, g->plane * sizeof(float),
                                    cudaMemcpyDeviceToHost, st));
        FM_CUDA_TRY(cudaMemcpyAsync(sl->h_invalid, sl->d_invalid, sizeof *sl->h_invalid,
                                    cudaMemcpyDeviceToHost, st));
    }
    FM_CUDA_TRY(cudaEventRecord(sl->stop, st));
    g->submitted++;
cleanup:
    return status;
}

extern "C" fm_status fm_lsi_live_gpu_collect(fm_lsi_live_gpu *g, fm_lsi_live_result *out, char *msg,
                                             size_t msg_len)
{
    fm_status status = FM_OK;
    float ms = 0.0f;
    if (g->collected == g->submitted)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "no frame was submitted");
    live_slot *sl = &g->slot[g->collected % g->slots];
    FM_CUDA_TRY(cudaEventSynchronize(sl->stop));
    FM_CUDA_TRY(cudaEventElapsedTime(&ms, sl->start, sl->stop));
    g->collected++;
    out->ready = sl->ready;
    out->contrast = sl->ready ? sl->h_k : NULL;
    out->sfi = sl->ready ? sl->h_s : NULL;
    out->invalid = sl->ready ? (long long)*sl->h_invalid : 0;
    out->device_ms = ms;
cleanup:
    return status;
}
