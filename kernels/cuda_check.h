/* Private to the .cu files: turns a failed CUDA call into FM_ERR_DEVICE with file, line and text. */
#pragma once

#include <cuda_runtime.h>

#include "device.h"

/* Needs `fm_status status`, `char *msg`, `size_t msg_len` and a `cleanup:` label in scope:
 * one cleanup path per function, as CONVENTIONS.md asks. */
#define FM_CUDA_TRY(call)                                                                    \
    do {                                                                                     \
        cudaError_t fm_cuda_err_ = (call);                                                   \
        if (fm_cuda_err_ != cudaSuccess) {                                                   \
            status = fm_fail(FM_ERR_DEVICE, msg, msg_len, "%s:%d: %s: %s", __FILE__, __LINE__, \
                             fm_cuda_call_name_(#call), cudaGetErrorString(fm_cuda_err_));     \
            goto cleanup;                                                                    \
        }                                                                                    \
    } while (0)

/* Launch errors only surface through cudaGetLastError, so check it after every launch. */
#define FM_CUDA_CHECK_LAUNCH(kernel_name)                                                     \
    do {                                                                                     \
        cudaError_t fm_cuda_err_ = cudaGetLastError();                                       \
        if (fm_cuda_err_ != cudaSuccess) {                                                   \
            status = fm_fail(FM_ERR_DEVICE, msg, msg_len, "%s:%d: launch of %s: %s", __FILE__, \
                             __LINE__, kernel_name, cudaGetErrorString(fm_cuda_err_));         \
            goto cleanup;                                                                    \
        }                                                                                    \
    } while (0)

/* "cudaMemcpyAsync(d, h, n, k, s)" -> "cudaMemcpyAsync" for the message. */
static inline const char *fm_cuda_call_name_(const char *text)
{
    static __thread char name[64];
    int i = 0;
    while (text[i] && text[i] != '(' && i < 63) {
        name[i] = text[i];
        i++;
    }
    name[i] = '\0';
    return name;
}
