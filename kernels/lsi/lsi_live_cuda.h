/* Private to kernels/lsi: the CUDA half of the live context (lsi_live_cuda.cu), called by
 * lsi_live.c in CUDA builds. */
#pragma once

#include "lsi_live.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fm_lsi_live_gpu fm_lsi_live_gpu;

fm_status fm_lsi_live_gpu_create(const fm_lsi_params *params, int mode, int width, int height,
                                 fm_pixel_type type, fm_lsi_live_gpu **out, char *msg,
                                 size_t msg_len);
void fm_lsi_live_gpu_destroy(fm_lsi_live_gpu *gpu);
int fm_lsi_live_gpu_depth(const fm_lsi_live_gpu *gpu);
fm_status fm_lsi_live_gpu_submit(fm_lsi_live_gpu *gpu, const void *frame, char *msg,
                                 size_t msg_len);
fm_status fm_lsi_live_gpu_collect(fm_lsi_live_gpu *gpu, fm_lsi_live_result *out, char *msg,
                                  size_t msg_len);

#ifdef __cplusplus
}
#endif
