/* CUDA ops of the resident-buffer cache: device 0 memory, uploads from the caller's host memory. */
#include <cuda_runtime.h>

#include "resident.h"

static void *cuda_alloc(size_t bytes, void *user)
{
    (void)user;
    void *p = NULL;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError(); /* out of memory is an answer here, not a sticky error */
        return NULL;
    }
    return p;
}

static void cuda_release(void *device, void *user)
{
    (void)user;
    cudaFree(device);
}

static int cuda_upload(void *device, const void *host, size_t bytes, void *user)
{
    (void)user;
    /* Once per open dataset: a plain copy from pageable memory, so the file's buffer needs no
     * pinning (pinning hundreds of MB costs about as much as the copy it would speed up). */
    if (cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return 0;
}

static size_t cuda_default_budget(void *user)
{
    (void)user;
    size_t free_bytes = 0, total = 0;
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    /* Half of what is free leaves the kernels their scratch and other programs their share. */
    return free_bytes / 2;
}

static const fm_resident_ops cuda_ops = {cuda_alloc, cuda_release, cuda_upload,
                                         cuda_default_budget, NULL};

extern "C" const fm_resident_ops *fm_resident_cuda_ops(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        return NULL; /* no device: nothing is ever resident, every run streams or runs on the CPU */
    }
    return &cuda_ops;
}
