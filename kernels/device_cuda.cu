/* CUDA side of device discovery: device count and properties through the CUDA runtime. */
#include <stdio.h>
#include <string.h>

#include "cuda_check.h"
#include "device_private.h"

extern "C" int fm_cuda_device_count(char *msg, size_t msg_len)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        /* No driver or no device: the runtime keeps the error sticky for this call only. */
        cudaGetLastError();
        /* The runtime's words for a machine without the NVIDIA driver ("driver version is
         * insufficient") read like an upgrade problem; say what it means first. */
        const char *what = err == cudaErrorInsufficientDriver
                               ? "no NVIDIA driver, or one older than this build's CUDA runtime"
                           : err == cudaErrorNoDevice ? "no NVIDIA GPU found"
                                                      : "the CUDA runtime cannot start";
        fm_fail(FM_ERR_NO_DEVICE, msg, msg_len, "%s (%s)", what, cudaGetErrorString(err));
        return 0;
    }
    if (count == 0)
        fm_fail(FM_ERR_NO_DEVICE, msg, msg_len, "the CUDA runtime reports 0 devices");
    return count;
}

extern "C" fm_status fm_cuda_device_info(int index, fm_gpu_info *out, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    cudaDeviceProp prop;
    FM_CUDA_TRY(cudaGetDeviceProperties(&prop, index));
    memset(out, 0, sizeof *out);
    out->index = index;
    /* prop.name is 256 bytes; GPU names are far shorter, so cut rather than warn. */
    memcpy(out->name, prop.name, sizeof out->name - 1);
    out->name[sizeof out->name - 1] = '\0';
    out->total_memory_bytes = prop.totalGlobalMem;
    out->multiprocessors = prop.multiProcessorCount;
    out->compute_major = prop.major;
    out->compute_minor = prop.minor;
cleanup:
    return status;
}

extern "C" fm_status fm_cuda_start_context(char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    FM_CUDA_TRY(cudaSetDevice(0));
    /* cudaFree(NULL) is the documented way to force the lazy context creation now. */
    FM_CUDA_TRY(cudaFree(0));
cleanup:
    return status;
}
