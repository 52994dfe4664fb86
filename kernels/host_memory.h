/* Host memory for the maps a GPU writes: page-locked once a CUDA device is started, so that
 * downloads land in the maps directly, and kept for the next run's maps instead of freed. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Zeroed memory for n bytes, or NULL. Page-locked (from the pool when a kept block fits) once
 * fm_host_memory_enable_pinned was called, plain calloc before that and without CUDA. */
void *fm_host_alloc(size_t bytes);
/* The same for a buffer the caller overwrites entirely: a reused pooled block keeps old values
 * (zeroing hundreds of MB would cost more than the kernel that fills them). */
void *fm_host_alloc_uninit(size_t bytes);
/* Frees memory from fm_host_alloc (bytes as asked); page-locked blocks go back to the pool,
 * which keeps at most its budget and frees the oldest beyond it. */
void fm_host_free(void *ptr, size_t bytes);

/* Page-locked staging for a kernel's transfers, whatever the map policy: a kept block of that
 * size when there is one (a later chunk or run of the same shape pays no pinning), else a new
 * one; NULL when none can be had. Give it back with fm_host_staging_put. */
void *fm_host_staging_get(size_t bytes);
void fm_host_staging_put(void *ptr, size_t bytes);

/* Pool size limit in bytes (default 2 GiB); 0 frees every kept block and keeps none. */
void fm_host_pool_set_budget(size_t bytes);
/* Bytes kept for reuse now, and how many allocations were served from the pool. */
size_t fm_host_pool_kept_bytes(void);
long long fm_host_pool_reuses(void);

/* From now on new blocks are page-locked, so that downloads land in the maps directly. A process
 * asks for it once a device is started and it means to run on it (the GUI, a CUDA CLI run). */
void fm_host_memory_enable_pinned(void);

/* Implemented in host_memory_cuda.cu in CUDA builds: page-lock (0 on success) and release a
 * range of host memory. */
int fm_host_register(void *ptr, size_t bytes);
void fm_host_unregister(void *ptr);

#ifdef __cplusplus
}
#endif
