/* Private split of the FLIM kernels: flim.c validates and dispatches; the direct (noniterative)
 * and fit (iterative) halves each have a CPU twin and a CUDA file. */
#pragma once

#include "flim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared arguments of one run, built by flim.c. */
typedef struct {
    fm_flim_method method;
    const fm_flim_params *params;
    const float *counts; /* bin-major float32 counts; NULL when counts_type is
                            FM_PIXEL_U16 (the direct half reads counts_data) */
    int n_pixels;
    const unsigned char *mask;
    const int *segment;
    int n_segments;
    fm_flim_outputs *out;
    fm_tick_fn tick;
    void *tick_user;
    /* The caller's counts as given (fm_flim_run_typed): FM_PIXEL_F32 (counts_data == counts) or
     * FM_PIXEL_U16, what TCSPC hardware records. The direct half reads counts_data in either
     * type (u16 halves the PCIe traffic; the values convert to float exactly, so results are
     * identical). */
    const void *counts_data;
    fm_pixel_type counts_type;
} fm_flim_job;

/* The fit half (LSM, MLE, GA) reads counts_data in either type too: the CUDA path uploads u16
 * and widens on the device (half the PCIe bytes), the CPU twin widens on the host. */

/* IEM, CMM, RLD, PHASOR, BCMM1, BCMM2 (flim_direct_cpu.c / flim_direct_cuda.cu). */
fm_status fm_flim_direct_cpu(const fm_flim_job *job, char *msg, size_t msg_len);
fm_status fm_flim_direct_cuda(const fm_flim_job *job, fm_run_info *info, char *msg, size_t msg_len);
/* LSM, MLE, GA (flim_fit_cpu.c / flim_fit_cuda.cu). */
fm_status fm_flim_fit_cpu(const fm_flim_job *job, char *msg, size_t msg_len);
fm_status fm_flim_fit_cuda(const fm_flim_job *job, fm_run_info *info, char *msg, size_t msg_len);

/* Host helpers in flim_direct_cpu.c (OpenMP, so the .cu files need not be built with it). */
/* Sets to NaN every requested map that the direct methods do not define (chi2, iterations...). */
void fm_flim_fill_undefined(const fm_flim_job *job);
/* rows of row_bytes from src (row pitch src_pitch bytes) to dst (dst_pitch bytes), all threads:
 * gathers a chunk of pixels of the bin-major counts into a pinned staging buffer. */
void fm_flim_copy_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                       size_t row_bytes, int rows);

#ifdef __cplusplus
}
#endif
