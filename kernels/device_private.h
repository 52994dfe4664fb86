/* Private bridge between device.c (plain C) and device_cuda.cu; not installed, not for core. */
#pragma once

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Implemented in device_cuda.cu; only linked when FM_HAVE_CUDA is 1. */
int fm_cuda_device_count(char *msg, size_t msg_len);
fm_status fm_cuda_device_info(int index, fm_gpu_info *out, char *msg, size_t msg_len);
/* Creates device 0's primary context; FM_OK or FM_ERR_DEVICE with the runtime's words. */
fm_status fm_cuda_start_context(char *msg, size_t msg_len);

/* Copies n bytes with all OpenMP threads; used to fill and drain pinned staging buffers,
 * where one thread cannot keep up with PCIe. Implemented in device.c. */
void fm_parallel_memcpy(void *dst, const void *src, size_t n);

/* Monotonic wall clock in milliseconds. */
double fm_now_ms(void);

#ifdef __cplusplus
}
#endif
