/* Private to the .cu files: the download a run's host still waits on after its last kernel. */
#pragma once

#include <cuda_runtime.h>

/* Record kernel_done after each chunk's kernel and copies_done after its downloads, on the
 * same stream; re-recording moves the marks, so after the loop they bracket the last chunk's
 * downloads, the one part of the transfers that no compute hides. */
typedef struct {
    cudaEvent_t kernel_done, copies_done;
} fm_cuda_tail;

static inline void fm_cuda_tail_mark(fm_cuda_tail *tail, int copies, cudaStream_t stream)
{
    cudaEvent_t *e = copies ? &tail->copies_done : &tail->kernel_done;
    if (!*e && cudaEventCreate(e) != cudaSuccess) {
        cudaGetLastError();
        *e = NULL;
        return;
    }
    if (cudaEventRecord(*e, stream) != cudaSuccess)
        cudaGetLastError();
}

/* Milliseconds between the marks once both happened (0 when either is missing); frees them. */
static inline double fm_cuda_tail_ms(fm_cuda_tail *tail)
{
    float ms = 0.0f;
    if (tail->kernel_done && tail->copies_done &&
        (cudaEventSynchronize(tail->copies_done) != cudaSuccess ||
         cudaEventElapsedTime(&ms, tail->kernel_done, tail->copies_done) != cudaSuccess)) {
        cudaGetLastError();
        ms = 0.0f;
    }
    if (tail->kernel_done)
        cudaEventDestroy(tail->kernel_done);
    if (tail->copies_done)
        cudaEventDestroy(tail->copies_done);
    tail->kernel_done = tail->copies_done = NULL;
    return ms > 0.0f ? (double)ms : 0.0;
}
