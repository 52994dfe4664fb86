/* Device copies of host buffers that stay on the GPU between runs, within a memory budget. */
#pragma once

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the cache allocates and fills device memory. The CUDA build installs cudaMalloc/cudaMemcpy
 * ops on first use; tests install host-memory stand-ins so that CI exercises the same code. */
typedef struct {
    void *(*alloc)(size_t bytes, void *user); /* NULL when the device is out of memory */
    void (*release)(void *device, void *user);
    int (*upload)(void *device, const void *host, size_t bytes, void *user); /* 0 on success */
    size_t (*default_budget)(void *user); /* bytes the cache may hold when unset */
    void *user;
} fm_resident_ops;

typedef struct {
    int offered;  /* host buffers offered for residency */
    int resident; /* of those, how many have a device copy now */
    int in_use;   /* of those, how many a run holds (acquired, not yet released) */
    size_t resident_bytes;
    size_t budget_bytes;
    long long hits, uploads, evictions, streamed; /* since start (or the last set_ops) */
} fm_resident_stats;

/* Core offers the data of each open dataset: a later acquire of any range inside it uploads the
 * whole buffer once. Offering a buffer already offered does nothing. */
void fm_resident_offer(const void *host, size_t bytes);

/* Offers the buffer and starts its upload on a thread of its own, so that the host work before a
 * run's first kernel (masks, sums, the catalogue) overlaps it; an acquire meanwhile waits for it
 * and counts the wait as its upload. Needs the device started (fm_device_warm_up). */
void fm_resident_prefetch(const void *host, size_t bytes);

/* The buffer is closed or its contents changed: its device copy goes (at once, or when the last
 * user releases it) and a later acquire uploads again only if it is offered again. */
void fm_resident_forget(const void *host);

/* Device address of [host, host + bytes) when the range lies inside an offered buffer, uploading
 * that buffer first if it is not resident yet (least recently used copies are evicted to make
 * room). NULL when the range was never offered, when the buffer is larger than the budget, or
 * when device memory runs out: the caller then streams from the host, as without the cache.
 * *upload_ms (may be NULL) gets the time spent uploading, 0 on a hit. Each non-NULL answer must
 * be paired with fm_resident_release(host); a copy in use is never evicted. */
const void *fm_resident_acquire(const void *host, size_t bytes, double *upload_ms);
void fm_resident_release(const void *host);

/* Bytes the device copies may take together; 0 restores the default (half the device memory
 * free at first use). Shrinking evicts unused copies at once. */
void fm_resident_set_budget(size_t bytes);

/* Replaces the ops (NULL: the build's default) and drops every copy and offer. */
void fm_resident_set_ops(const fm_resident_ops *ops);

fm_resident_stats fm_resident_get_stats(void);

/* Implemented in resident_cuda.cu in CUDA builds: the ops the cache uses by default. */
const fm_resident_ops *fm_resident_cuda_ops(void);

#ifdef __cplusplus
}
#endif
