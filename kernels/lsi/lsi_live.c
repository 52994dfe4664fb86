/* LSI live context: validation, backend choice and the CPU twin. The twin runs the offline CPU
 * code: fm_lsi_cpu_run on a spatial frame; for temporal windows it keeps per-pixel sums running
 * over a ring of the window's last frames (one frame in, one out, as the offline run slides) and
 * hands them to fm_lsi_cpu_from_sums. Integer sums are exact, so the maps are the offline ones
 * bit for bit. */
#include "lsi_live.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../device.h"
#include "../live_host.h"
#include "fm_config.h"
#include "lsi_impl.h"
#if FM_HAVE_CUDA
#include "lsi_live_cuda.h"
#endif

struct fm_lsi_live {
    fm_lsi_params params;
    int mode, width, height;
    fm_pixel_type type;
    size_t plane, in_bytes;
#if FM_HAVE_CUDA
    fm_lsi_live_gpu *gpu; /* NULL: the CPU twin below */
#endif
    /* CPU twin: one frame in flight */
    const void *pending; /* the submitted frame (spatial) or the ring (temporal) */
    int have_pending, pending_ready;
    char *ring;       /* temporal: the last params.frames frames, slot (seen % frames) */
    int64_t *s1, *s2; /* temporal: per-pixel sums of value and square over the ring */
    long long seen;
    float *k, *s;
};

void fm_lsi_live_destroy(fm_lsi_live *live)
{
    if (!live)
        return;
#if FM_HAVE_CUDA
    fm_lsi_live_gpu_destroy(live->gpu);
#endif
    free(live->ring);
    free(live->s1);
    free(live->s2);
    free(live->k);
    free(live->s);
    free(live);
}

fm_status fm_lsi_live_create(const fm_lsi_params *params, int mode, int width, int height,
                             fm_pixel_type type, fm_backend backend, fm_lsi_live **out,
                             fm_run_info *info, char *msg, size_t msg_len)
{
    fm_run_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    *out = NULL;
    if (mode < 0 || mode > 2)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "unknown LSI mode %d", mode);
    /* a window of frames is what the temporal check asks of the stack */
    fm_status status =
        fm_lsi_check(params, width, height, mode ? params->frames : 1, mode, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (type != FM_PIXEL_U8 && type != FM_PIXEL_U16)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "live frames are uint8 or uint16 (got pixel type %d)", (int)type);
    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        return status;

    fm_lsi_live *live = calloc(1, sizeof *live);
    if (!live)
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the live context");
    live->params = *params;
    live->mode = mode;
    live->width = width;
    live->height = height;
    live->type = type;
    live->plane = (size_t)width * height;
    live->in_bytes = live->plane * fm_pixel_size(type);
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status =
            fm_lsi_live_gpu_create(params, mode, width, height, type, &live->gpu, why, sizeof why);
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len)) {
            if (status != FM_OK) {
                fm_lsi_live_destroy(live);
                return status;
            }
            *out = live;
            return FM_OK;
        }
        status = FM_OK; /* AUTO: the CPU twin below, info says why */
    }
#endif
    live->k = malloc(live->plane * sizeof(float));
    live->s = malloc(live->plane * sizeof(float));
    if (mode) {
        live->ring = malloc(live->in_bytes * (size_t)params->frames);
        live->s1 = calloc(live->plane, sizeof(int64_t));
        live->s2 = calloc(live->plane, sizeof(int64_t));
    }
    if (!live->k || !live->s || (mode && (!live->ring || !live->s1 || !live->s2))) {
        fm_lsi_live_destroy(live);
        return fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for %dx%d live maps", width,
                       height);
    }
    *out = live;
    return FM_OK;
}

int fm_lsi_live_register_host(fm_lsi_live *live, void *ptr, size_t bytes)
{
#if FM_HAVE_CUDA
    if (live && live->gpu)
        return fm_live_host_register(ptr, bytes);
#endif
    (void)live;
    (void)ptr;
    (void)bytes;
    return 0;
}

int fm_lsi_live_depth(const fm_lsi_live *live)
{
#if FM_HAVE_CUDA
    if (live->gpu)
        return fm_lsi_live_gpu_depth(live->gpu);
#endif
    (void)live;
    return 1;
}

/* The window's sums: the new frame in, the frame leaving it (NULL while filling) out. */
static void slide_sums(fm_lsi_live *live, const void *in, const void *out)
{
    const long long n = (long long)live->plane;
    int64_t *s1 = live->s1, *s2 = live->s2;
    const int u8 = live->type == FM_PIXEL_U8;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; i++) {
        int64_t v = u8 ? ((const uint8_t *)in)[i] : ((const uint16_t *)in)[i];
        int64_t a = v, b = v * v;
        if (out) {
            int64_t o = u8 ? ((const uint8_t *)out)[i] : ((const uint16_t *)out)[i];
            a -= o;
            b -= o * o;
        }
        s1[i] += a;
        s2[i] += b;
    }
}

fm_status fm_lsi_live_submit(fm_lsi_live *live, const void *frame, char *msg, size_t msg_len)
{
    if (!frame)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "the frame is NULL");
#if FM_HAVE_CUDA
    if (live->gpu)
        return fm_lsi_live_gpu_submit(live->gpu, frame, msg, msg_len);
#endif
    if (live->have_pending)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "a frame is in flight: collect it before submitting");
    if (live->mode == 0) {
        live->pending = frame;
        live->pending_ready = 1;
    } else {
        const int F = live->params.frames;
        char *slot = live->ring + (size_t)(live->seen % F) * live->in_bytes;
        slide_sums(live, frame, live->seen >= F ? slot : NULL);
        memcpy(slot, frame, live->in_bytes);
        live->pending = live->ring;
        live->pending_ready = live->seen + 1 >= F;
    }
    live->seen++;
    live->have_pending = 1;
    return FM_OK;
}

fm_status fm_lsi_live_collect(fm_lsi_live *live, fm_lsi_live_result *out, char *msg, size_t msg_len)
{
    memset(out, 0, sizeof *out);
#if FM_HAVE_CUDA
    if (live->gpu)
        return fm_lsi_live_gpu_collect(live->gpu, out, msg, msg_len);
#endif
    if (!live->have_pending)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "no frame was submitted");
    live->have_pending = 0;
    if (!live->pending_ready)
        return FM_OK;
    fm_lsi_job job = {
        .params = live->params,
        .mode = (fm_lsi_mode)live->mode,
        .frames = live->pending,
        .type = live->type,
        .width = live->width,
        .height = live->height,
        .n_frames = live->mode ? live->params.frames : 1,
        .n_out = 1,
        .contrast = live->k,
        .sfi = live->s,
        .host_mode = FM_LSI_HOST_DEFAULT,
    };
    long long invalid = 0;
    fm_status status = live->mode
                           ? fm_lsi_cpu_from_sums(&job, live->s1, live->s2, &invalid, msg, msg_len)
                           : fm_lsi_cpu_run(&job, &invalid, msg, msg_len);
    if (status != FM_OK)
        return status;
    out->ready = 1;
    out->contrast = live->k;
    out->sfi = live->s;
    out->invalid = invalid;
    return FM_OK;
}

fm_status fm_lsi_live_process(fm_lsi_live *live, const void *frame, fm_lsi_live_result *out,
                              char *msg, size_t msg_len)
{
    fm_status status = fm_lsi_live_submit(live, frame, msg, msg_len);
    if (status != FM_OK)
        return status;
    return fm_lsi_live_collect(live, out, msg, msg_len);
}
