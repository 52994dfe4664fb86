/* Private to kernels/lsi's .cu files: the offline CUDA kernels' launches on a caller's stream,
 * so that the live contexts (lsi_live_cuda.cu) run the very same kernels. */
#pragma once

#include <cuda_runtime.h>

#include "lsi_impl.h"

/* Spatial K and SFI of one frame already on the device. */
cudaError_t fm_lsi_cuda_launch_spatial(fm_pixel_type type, const void *d_in, int W, int H,
                                       const fm_lsi_params *p, float *d_k, float *d_s,
                                       unsigned long long *d_invalid, cudaStream_t stream);
/* Temporal (mode 1) or spatio-temporal (mode 2) K and SFI of the p->frames frames at d_stack
 * (contiguous, any order), through the per-pixel sums d_s1, d_s2 (8 bytes per pixel each). */
cudaError_t fm_lsi_cuda_launch_window(int mode, fm_pixel_type type, const void *d_stack, int W,
                                      int H, const fm_lsi_params *p, void *d_s1, void *d_s2,
                                      float *d_k, float *d_s, unsigned long long *d_invalid,
                                      cudaStream_t stream);
