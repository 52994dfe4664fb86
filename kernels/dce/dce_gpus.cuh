/* Private to the DCE .cu files (dce_cuda.cu, pk_cuda.cu): the host side that the Wang-Cao fit and
 * the standard models share: one GPU's share of the voxels streamed through it in chunks, the
 * finished chunks drained into the caller's maps, and the voxels split over the GPUs. */
#pragma once

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"

/* One GPU's share. Job is fm_dce_job or fm_pk_job. */
template <typename Job> struct fm_dce_gpu_work {
    const Job *job;
    int device;
    long long lo, hi; /* voxels of this GPU */
    long long done;   /* voxels stored, read by the polling thread */
    long long invalid;
    volatile int *cancel;
    int finished;
    fm_status status;
    char msg[FM_MSG_LEN];
};

/* A chunk whose records are on their way into a slot's pinned buffer. */
typedef struct {
    long long v0;
    int n;
} fm_dce_pending;

/* Copies a finished chunk's records (n_out maps of pc->n voxels, map-major) from pinned memory
 * into the caller's maps through Store; a voxel whose record has NaN at nan_out counts as
 * invalid. */
template <int n_out, int nan_out, typename Job,
          void (*Store)(const Job *job, long long v, const double *rec)>
static void fm_dce_drain(fm_dce_gpu_work<Job> *w, const double *h_rec, fm_dce_pending *pc)
{
    for (int i = 0; i < pc->n; i++) {
        double rec[n_out];
        for (int o = 0; o < n_out; o++)
            rec[o] = h_rec[(size_t)o * pc->n + i];
        w->invalid += rec[nan_out] != rec[nan_out];
        Store(w->job, pc->v0 + i, rec);
    }
    __atomic_add_fetch(&w->done, (long long)pc->n, __ATOMIC_RELEASE);
    pc->n = 0;
}

/* Splits job's voxels over the GPUs (job->params->n_devices, 0 = all) and runs Run on each share
 * on its own host thread; adds up the invalid voxels into *job->invalid. */
template <typename Job, fm_status (*Run)(fm_dce_gpu_work<Job> *)>
static fm_status fm_dce_cuda_split(const Job *job, char *msg, size_t msg_len)
{
    typedef fm_dce_gpu_work<Job> gpu_work;
    fm_status status = FM_OK;
    volatile int cancel = 0;
    int n_dev = 0;
    gpu_work *work = NULL;
    pthread_t *threads = NULL;

    if (job->n_voxels == 0)
        return FM_OK;
    status = fm_cuda_devices_for(job->params->n_devices, job->n_voxels, &n_dev, msg, msg_len);
    if (status != FM_OK)
        return status;
    work = (gpu_work *)calloc((size_t)n_dev, sizeof *work);
    threads = (pthread_t *)calloc((size_t)n_dev, sizeof *threads);
    if (!work || !threads) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "out of memory for GPU work");
        goto cleanup;
    }
    /* Contiguous equal shares: voxels are independent, and the cost per voxel is similar. */
    for (int d = 0; d < n_dev; d++) {
        work[d].job = job;
        work[d].device = d;
        work[d].lo = job->n_voxels * d / n_dev;
        work[d].hi = job->n_voxels * (d + 1) / n_dev;
        work[d].cancel = &cancel;
    }
    /* The calling thread reports progress (voxels done) every 1 ms and forwards a cancel. */
    status =
        fm_cuda_fan_out(work, threads, n_dev, fm_cuda_device_thread<gpu_work, Run>, &cancel,
                        job->tick, job->tick_user, (double)job->n_voxels, 1000000, msg, msg_len);
    if (status != FM_OK)
        goto cleanup;
    for (int d = 0; d < n_dev; d++) {
        if (work[d].status != FM_OK) {
            status = fm_fail(work[d].status, msg, msg_len, "GPU %d: %s", d, work[d].msg);
            goto cleanup;
        }
        *job->invalid += work[d].invalid;
    }
    if (cancel)
        status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
    else if (job->tick && job->tick(job->tick_user, 1.0))
        status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
cleanup:
    free(work);
    free(threads);
    return status;
}

/* One of the chunks in flight: its stream, pinned and device buffers, and the chunk it holds. */
typedef struct {
    cudaStream_t stream;
    float *h_in, *d_in;    /* curves of up to a chunk's voxels */
    double *h_rec, *d_rec; /* their records, map-major */
    fm_dce_pending pend;
} fm_dce_slot;

/* Streams w's share through n_slots slots (zeroed by the caller, freed with fm_dce_slots_free
 * also after an error) in chunks of up to `chunk` voxels of nt frames and n_out records: while
 * one slot's chunk computes, the host fills the next slot's pinned buffer and drains its previous
 * results. launch(k, nv) queues the fit of slot k's nv voxels on its stream and returns FM_OK or
 * an error with w->msg filled. parallel_copy: fill the pinned buffers on all cores. */
template <int n_slots, int n_out, typename Job,
          void (*Drain)(fm_dce_gpu_work<Job> *w, const double *h_rec, fm_dce_pending *pc),
          typename Launch>
static fm_status fm_dce_stream(fm_dce_gpu_work<Job> *w, fm_dce_slot *slot, long long chunk, int nt,
                               int parallel_copy, Launch launch)
{
    const Job *job = w->job;
    char *msg = w->msg;
    size_t msg_len = sizeof w->msg;
    fm_status status = FM_OK;
    for (int k = 0; k < n_slots && chunk > 0; k++) {
        fm_dce_slot *s = &slot[k];
        FM_CUDA_TRY(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
        FM_CUDA_TRY(cudaHostAlloc((void **)&s->h_in, (size_t)chunk * nt * sizeof(float),
                                  cudaHostAllocDefault));
        FM_CUDA_TRY(cudaHostAlloc((void **)&s->h_rec, (size_t)chunk * n_out * sizeof(double),
                                  cudaHostAllocDefault));
        FM_CUDA_TRY(cudaMalloc((void **)&s->d_in, (size_t)chunk * nt * sizeof(float)));
        FM_CUDA_TRY(cudaMalloc((void **)&s->d_rec, (size_t)chunk * n_out * sizeof(double)));
    }
    for (long long v0 = w->lo, c = 0; v0 < w->hi; v0 += chunk, c++) {
        fm_dce_slot *s = &slot[c % n_slots];
        const int nv = (int)(w->hi - v0 < chunk ? w->hi - v0 : chunk);
        if (s->pend.n) {
            FM_CUDA_TRY(cudaStreamSynchronize(s->stream));
            Drain(w, s->h_rec, &s->pend);
        }
        if (*w->cancel)
            break;
        if (parallel_copy)
            fm_parallel_memcpy(s->h_in, job->tissue + v0 * nt, (size_t)nv * nt * sizeof(float));
        else
            memcpy(s->h_in, job->tissue + v0 * nt, (size_t)nv * nt * sizeof(float));
        FM_CUDA_TRY(cudaMemcpyAsync(s->d_in, s->h_in, (size_t)nv * nt * sizeof(float),
                                    cudaMemcpyHostToDevice, s->stream));
        status = launch((int)(c % n_slots), nv);
        if (status != FM_OK)
            goto cleanup;
        FM_CUDA_TRY(cudaMemcpyAsync(s->h_rec, s->d_rec, (size_t)nv * n_out * sizeof(double),
                                    cudaMemcpyDeviceToHost, s->stream));
        s->pend.v0 = v0;
        s->pend.n = nv;
    }
    for (int k = 0; k < n_slots; k++) {
        if (slot[k].pend.n) {
            FM_CUDA_TRY(cudaStreamSynchronize(slot[k].stream));
            Drain(w, slot[k].h_rec, &slot[k].pend);
        }
    }
cleanup:
    return status;
}

/* Waits for the slots' streams and frees what fm_dce_stream allocated. */
static inline void fm_dce_slots_free(fm_dce_slot *slot, int n_slots)
{
    for (int k = 0; k < n_slots; k++) {
        if (slot[k].stream)
            cudaStreamSynchronize(slot[k].stream);
        cudaFreeHost(slot[k].h_in);
        cudaFreeHost(slot[k].h_rec);
        cudaFree(slot[k].d_in);
        cudaFree(slot[k].d_rec);
        if (slot[k].stream)
            cudaStreamDestroy(slot[k].stream);
    }
}
