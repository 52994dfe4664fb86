/* CUDA side of the pinned-map pool: page-locked allocations through the runtime. */
#include <cuda_runtime.h>

#include "host_memory.h"

extern "C" void *fm_host_pinned_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) {
        cudaGetLastError(); /* not pinned is an answer: the caller takes plain memory */
        return NULL;
    }
    return p;
}

extern "C" void fm_host_pinned_free(void *ptr)
{
    cudaFreeHost(ptr);
}
