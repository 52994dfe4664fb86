/* CUDA ops of the resident-buffer cache: device 0 memory, uploads from the caller's host memory. */
#include <cuda_runtime.h>
#include <pthread.h>
#include <string.h>

#include "cuda_staging.h"
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

/* A piece's host copy on COPY_THREADS plain threads. Not OpenMP: uploads run beside the run's own
 * preparation (a prefetch), and a second OpenMP team's spinning workers stalled its parallel
 * loops by tens of ms now and then on the H100 machine; one thread alone made the upload the
 * wait (7-17 ms for 128 MB). */
enum { COPY_THREADS = 4 };
typedef struct {
    char *dst;
    const char *src;
    size_t len;
} copy_part;

static void *copy_thread(void *arg)
{
    const copy_part *c = (const copy_part *)arg;
    memcpy(c->dst, c->src, c->len);
    return NULL;
}

static void copy_on_threads(void *dst, const void *src, size_t len)
{
    pthread_t thread[COPY_THREADS];
    copy_part part[COPY_THREADS];
    int started[COPY_THREADS] = {0};
    for (int i = 0; i < COPY_THREADS; i++) {
        const size_t a = len * i / COPY_THREADS, b = len * (i + 1) / COPY_THREADS;
        part[i] = (copy_part){(char *)dst + a, (const char *)src + a, b - a};
        started[i] = i > 0 && pthread_create(&thread[i], NULL, copy_thread, &part[i]) == 0;
    }
    for (int i = 0; i < COPY_THREADS; i++)
        if (!started[i])
            copy_thread(&part[i]); /* part 0, and any whose thread did not start */
    for (int i = 1; i < COPY_THREADS; i++)
        if (started[i])
            pthread_join(thread[i], NULL);
}

/* Once per open dataset, from the caller's pageable memory through two pinned pieces, the host
 * copy into one while the other crosses PCIe. On the H100 machine 87 MB went up in 3.2-4.5 ms
 * this way (copies on 16 threads) and in 14-19 ms with one cudaMemcpy. */
static int cuda_upload(void *device, const void *host, size_t bytes, void *user)
{
    (void)user;
    enum { SLOTS = 2 };
    const size_t piece = (size_t)8 << 20;
    void *stage[SLOTS] = {NULL, NULL};
    cudaEvent_t sent[SLOTS] = {NULL, NULL};
    cudaStream_t stream = NULL;
    int ok = bytes > piece && !fm_cuda_is_pinned(host) &&
             cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess;
    for (int k = 0; ok && k < SLOTS; k++)
        ok = fm_staging_alloc(&stage[k], piece) == cudaSuccess &&
             cudaEventCreateWithFlags(&sent[k], cudaEventDisableTiming) == cudaSuccess;
    if (ok) {
        for (size_t off = 0, i = 0; ok && off < bytes; off += piece, i++) {
            const int k = (int)(i % SLOTS);
            const size_t len = bytes - off < piece ? bytes - off : piece;
            ok = cudaEventSynchronize(sent[k]) == cudaSuccess; /* its last piece has gone up */
            if (ok)
                copy_on_threads(stage[k], (const char *)host + off, len);
            ok = ok && cudaMemcpyAsync((char *)device + off, stage[k], len,
                                       cudaMemcpyHostToDevice, stream) == cudaSuccess &&
                 cudaEventRecord(sent[k], stream) == cudaSuccess;
        }
        ok = cudaStreamSynchronize(stream) == cudaSuccess && ok;
    } else {
        /* small, pinned already, or no staging to be had: one plain copy */
        ok = cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess;
    }
    if (stream)
        cudaStreamSynchronize(stream); /* nothing may still read the staging given back below */
    for (int k = 0; k < SLOTS; k++) {
        if (sent[k])
            cudaEventDestroy(sent[k]);
        fm_staging_free(stage[k]);
    }
    if (stream)
        cudaStreamDestroy(stream);
    if (!ok)
        cudaGetLastError();
    return ok ? 0 : -1;
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
