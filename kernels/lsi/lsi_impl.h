/* Private to kernels/lsi and bench: one LSI job as the CPU twin and the CUDA path receive it. */
#pragma once

#include <stdint.h>

#include "lsi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FM_LSI_MODE_SPATIAL = 0,
    FM_LSI_MODE_TEMPORAL = 1,
    FM_LSI_MODE_SPATIOTEMPORAL = 2,
} fm_lsi_mode;

/* How the CUDA path reaches pageable caller buffers (already pinned ones are used directly). */
typedef enum {
    FM_LSI_HOST_DEFAULT = 0, /* the one measured fastest (see bench/RESULTS.md) */
    FM_LSI_HOST_STAGE,       /* copy through pinned staging buffers (cudaHostAlloc) */
    FM_LSI_HOST_REGISTER,    /* cudaHostRegister the caller's buffers for the call */
} fm_lsi_host_mode;

typedef struct {
    fm_lsi_params params;
    fm_lsi_mode mode;
    const void *frames;
    fm_pixel_type type;
    int width, height, n_frames;
    int n_out; /* output frames: n_frames, or n_frames - frames + 1 */
    float *contrast, *sfi;
    fm_tick_fn tick;
    void *tick_user;
    fm_lsi_host_mode host_mode;
    fm_run_info *info; /* the CUDA path adds its upload/download waits and residency here */
} fm_lsi_job;

/* Both return FM_OK, FM_ERR_NO_MEMORY, FM_ERR_CANCELLED (or FM_ERR_DEVICE) and add the number of
 * pixels whose SFI is NaN to *invalid. */
fm_status fm_lsi_cpu_run(const fm_lsi_job *job, long long *invalid, char *msg, size_t msg_len);
fm_status fm_lsi_cuda_run(const fm_lsi_job *job, long long *invalid, char *msg, size_t msg_len);
/* Temporal or spatio-temporal K and SFI of one output frame (job->contrast, job->sfi) from
 * per-pixel sums over the window's frames of integer pixels (the live CPU twin keeps them
 * running): the statistics, or the spatial roll over the sum images, of fm_lsi_cpu_run. */
fm_status fm_lsi_cpu_from_sums(const fm_lsi_job *job, const int64_t *s1, const int64_t *s2,
                               long long *invalid, char *msg, size_t msg_len);

/* Runs a job with an explicit host-buffer strategy (bench only; the public API uses DEFAULT). */
fm_status fm_lsi_run_job(fm_lsi_job *job, fm_backend backend, fm_run_info *info, char *msg,
                         size_t msg_len);

/* Bench only: times one spatial frame on the device with CUDA events, buffers allocated once.
 * host_to_host_ms: upload + kernel + download from pinned host memory; kernel_ms: kernel alone.
 * Medians of reps runs after warm-up. */
fm_status fm_lsi_cuda_time_frame(const fm_lsi_params *params, const void *frame,
                                 fm_pixel_type type, int width, int height, int reps,
                                 double *host_to_host_ms, double *kernel_ms, char *msg,
                                 size_t msg_len);

#ifdef __cplusplus
}
#endif
