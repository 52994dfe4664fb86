/* Private to the .cu files: pinned-memory test and the one-host-thread-per-GPU fan-out. */
#pragma once

#include <pthread.h>
#include <time.h>

#include <cuda_runtime.h>

#include "device.h"
#include "host_memory.h"

/* 1 when the runtime already knows ptr as page-locked host memory (a camera ring, say); NULL
 * counts as pinned (an output the caller did not ask for needs no staging). */
static inline int fm_cuda_is_pinned(const void *ptr)
{
    cudaPointerAttributes attr;
    if (!ptr)
        return 1;
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return attr.type == cudaMemoryTypeHost;
}

/* GPUs a multi-GPU run uses: every visible one, or `requested` when that is fewer (0 = all),
 * and never more than there are independent work items to share out. */
static inline fm_status fm_cuda_devices_for(int requested, long long items, int *n_dev, char *msg,
                                            size_t msg_len)
{
    char why[FM_MSG_LEN] = "";
    int n = fm_device_count(why, sizeof why);
    if (n <= 0)
        return fm_fail(FM_ERR_NO_DEVICE, msg, msg_len, "no CUDA device: %s", why);
    if (requested > 0 && requested < n)
        n = requested;
    if ((long long)n > items)
        n = (int)items;
    *n_dev = n;
    return FM_OK;
}

/* Host-thread body for fm_cuda_fan_out: runs Run on one GPU's share, then marks it finished
 * (Work needs `fm_status status` and `int finished`). */
template <typename Work, fm_status (*Run)(Work *)> static void *fm_cuda_device_thread(void *arg)
{
    Work *w = (Work *)arg;
    w->status = Run(w);
    __atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Runs body(&work[d]) on one host thread per GPU d < n_dev. The calling thread meanwhile reports
 * progress (the sum of work[d].done over total) through tick every poll_ns, sets *cancel when tick
 * asks to stop, and returns once every started thread has set work[d].finished and been joined.
 * Work needs `int finished` and `long long done`, written with release atomics. Returns FM_OK, or
 * FM_ERR_DEVICE (msg filled, *cancel set) when a host thread could not start; the threads that
 * did start are still waited for. */
template <typename Work>
static fm_status fm_cuda_fan_out(Work *work, pthread_t *threads, int n_dev, void *(*body)(void *),
                                 volatile int *cancel, fm_tick_fn tick, void *tick_user,
                                 double total, long poll_ns, char *msg, size_t msg_len)
{
    fm_status status = FM_OK;
    int started = 0;
    for (; started < n_dev; started++) {
        if (pthread_create(&threads[started], NULL, body, &work[started]) != 0) {
            *cancel = 1;
            status = fm_fail(FM_ERR_DEVICE, msg, msg_len,
                             "could not start a host thread for GPU %d", started);
            break;
        }
    }
    for (;;) {
        int all = 1;
        long long done = 0;
        for (int d = 0; d < started; d++) {
            all &= __atomic_load_n(&work[d].finished, __ATOMIC_ACQUIRE);
            done += __atomic_load_n(&work[d].done, __ATOMIC_ACQUIRE);
        }
        if (all)
            break;
        if (tick && !*cancel && tick(tick_user, (double)done / total))
            *cancel = 1;
        struct timespec ts = {0, poll_ns};
        nanosleep(&ts, NULL);
    }
    for (int d = 0; d < started; d++)
        pthread_join(threads[d], NULL);
    return status;
}

/* Pinned staging from the process's pool (kernels/host_memory.c), in the shape of cudaHostAlloc:
 * a block kept from an earlier call of the same shape (the next chunk, the next run) costs no
 * pinning, where cudaHostAlloc pins anew at about 1 GB/s. */
static inline cudaError_t fm_staging_alloc(void **ptr, size_t bytes)
{
    *ptr = fm_host_staging_get(bytes);
    return *ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

/* Back to the pool (NULL is ignored); the pool knows the block's size. */
static inline void fm_staging_free(void *ptr)
{
    fm_host_staging_put(ptr, 0);
}
