/* LSI entry points: validation, backend choice, CUDA-to-CPU fallback and the run report. */
#include "lsi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../device.h"
#include "../device_private.h"
#include "fm_config.h"
#include "lsi_impl.h"

fm_status fm_lsi_check(const fm_lsi_params *params, int width, int height, int n_frames,
                       int temporal, char *msg, size_t msg_len)
{
    /* temporal: 0 spatial, 1 temporal (window unused), 2 spatio-temporal. */
    if (!params)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    if (width <= 0 || height <= 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "image size %dx%d is empty", width,
                       height);
    if (n_frames <= 0)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "the stack holds no frames (%d)",
                       n_frames);
    if (!(params->exposure_ms > 0.0) || !isfinite(params->exposure_ms))
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "exposure_ms must be a finite value > 0 (got %g)", params->exposure_ms);
    if (temporal != 1) {
        if (params->window % 2 == 0)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "window must be odd (got %d)",
                           params->window);
        if (params->window < 3 || params->window > 15)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "window must be between 3 and 15 pixels (got %d)", params->window);
        if (width < params->window || height < params->window)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "image %dx%d is smaller than the %dx%d window", width, height,
                           params->window, params->window);
        if (params->border != FM_LSI_BORDER_VALID && params->border != FM_LSI_BORDER_ZERO)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "unknown border policy %d",
                           (int)params->border);
    }
    if (temporal) {
        if (params->frames < 2 || params->frames > 1024)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "frames must be between 2 and 1024 (got %d)", params->frames);
        if (params->frames > n_frames)
            return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                           "frames (%d) exceeds the %d frames of the stack", params->frames,
                           n_frames);
    }
    return FM_OK;
}

fm_status fm_lsi_run_job(fm_lsi_job *job, fm_backend backend, fm_run_info *info, char *msg,
                         size_t msg_len)
{
    fm_run_info local;
    long long invalid = 0;
    double start = fm_now_ms();
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);
    job->info = info;

    fm_status status = fm_lsi_check(&job->params, job->width, job->height, job->n_frames,
                                    (int)job->mode, msg, msg_len);
    if (status != FM_OK)
        return status;
    if (!job->frames)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "input frames are NULL");
    if (!job->contrast && !job->sfi)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                       "both outputs (contrast and sfi) are NULL");
    if (job->type != FM_PIXEL_U8 && job->type != FM_PIXEL_U16 && job->type != FM_PIXEL_F32)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "unsupported pixel type %d",
                       (int)job->type);
    job->n_out = job->mode == FM_LSI_MODE_SPATIAL ? job->n_frames
                                                  : job->n_frames - job->params.frames + 1;

    status = fm_backend_resolve(backend, info, msg, msg_len);
    if (status != FM_OK)
        return status;
#if FM_HAVE_CUDA
    if (info->backend_used == FM_BACKEND_CUDA) {
        char why[FM_MSG_LEN] = "";
        status = fm_lsi_cuda_run(job, &invalid, why, sizeof why);
        if (fm_backend_cuda_settled(status, backend, info, why, msg, msg_len))
            goto done;
        /* The GPU failed at run time under AUTO: the CPU run below overwrites any partial GPU
         * output entirely. */
        invalid = 0;
        info->upload_ms = info->download_ms = 0.0;
        info->resident = 0;
    }
#endif
    status = fm_lsi_cpu_run(job, &invalid, msg, msg_len);
#if FM_HAVE_CUDA
done:
#endif
    info->invalid_values = invalid;
    info->elapsed_ms = fm_now_ms() - start;
    return status;
}

static fm_status run_public(fm_lsi_mode mode, const fm_lsi_params *params, const void *frames,
                            fm_pixel_type type, int width, int height, int n_frames,
                            float *contrast, float *sfi, fm_backend backend, fm_tick_fn tick,
                            void *tick_user, fm_run_info *info, char *msg, size_t msg_len)
{
    if (!params)
        return fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "parameters are missing");
    fm_lsi_job job = {
        .params = *params,
        .mode = mode,
        .frames = frames,
        .type = type,
        .width = width,
        .height = height,
        .n_frames = n_frames,
        .contrast = contrast,
        .sfi = sfi,
        .tick = tick,
        .tick_user = tick_user,
        .host_mode = FM_LSI_HOST_DEFAULT,
    };
    return fm_lsi_run_job(&job, backend, info, msg, msg_len);
}

fm_status fm_lsi_spatial(const fm_lsi_params *params, const void *frames, fm_pixel_type type,
                         int width, int height, int n_frames, float *contrast, float *sfi,
                         fm_backend backend, fm_tick_fn tick, void *tick_user,
                         fm_run_info *info, char *msg, size_t msg_len)
{
    return run_public(FM_LSI_MODE_SPATIAL, params, frames, type, width, height, n_frames,
                      contrast, sfi, backend, tick, tick_user, info, msg, msg_len);
}

fm_status fm_lsi_temporal(const fm_lsi_params *params, const void *frames, fm_pixel_type type,
                          int width, int height, int n_frames, float *contrast, float *sfi,
                          fm_backend backend, fm_tick_fn tick, void *tick_user,
                          fm_run_info *info, char *msg, size_t msg_len)
{
    return run_public(FM_LSI_MODE_TEMPORAL, params, frames, type, width, height, n_frames,
                      contrast, sfi, backend, tick, tick_user, info, msg, msg_len);
}

fm_status fm_lsi_spatiotemporal(const fm_lsi_params *params, const void *frames,
                                fm_pixel_type type, int width, int height, int n_frames,
                                float *contrast, float *sfi, fm_backend backend,
                                fm_tick_fn tick, void *tick_user, fm_run_info *info,
                                char *msg, size_t msg_len)
{
    return run_public(FM_LSI_MODE_SPATIOTEMPORAL, params, frames, type, width, height,
                      n_frames, contrast, sfi, backend, tick, tick_user, info, msg, msg_len);
}
