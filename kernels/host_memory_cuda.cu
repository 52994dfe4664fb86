/* CUDA side of the pinned-map pool: page-locking memory that host_memory.c mapped. */
#include <cuda_runtime.h>

#include "host_memory.h"

extern "C" int fm_host_register(void *ptr, size_t bytes)
{
    if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) != cudaSuccess) {
        cudaGetLastError(); /* not pinned is an answer: the caller takes plain memory */
        return -1;
    }
    return 0;
}

extern "C" void fm_host_unregister(void *ptr)
{
    cudaHostUnregister(ptr);
}
