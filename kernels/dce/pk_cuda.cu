/* CUDA pharmacokinetic fits: one thread per voxel running the CPU twin's per-voxel functions
 * (pk_fit.h), the block's curves staged frame-major in shared memory; chunks of voxels stream
 * through pinned buffers on two streams; several GPUs split the voxels. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../cuda_staging.h"
#include "../device_private.h"
#include "pk_fit.h"

#define PK_BLOCK 64
#define N_SLOTS 2             /* chunks in flight, one stream each */
#define CHUNK_VOXELS 65536LL  /* 1024 blocks: an H100 (132 SMs) many times over */
#define SMEM_MAX (200 * 1024) /* staged curves up to 800 frames; longer ones read global memory */

/* Thread t of the block fits voxel blockIdx.x * PK_BLOCK + t. With staging, the block copies its
 * PK_BLOCK consecutive curves (contiguous, voxel-major: coalesced reads) into shared memory
 * frame-major, so that the threads' reads of frame i fall in distinct banks; every cost pass of
 * the fit then reads shared memory instead of global memory. */
__global__ void __launch_bounds__(PK_BLOCK) pk_fit_kernel(const fm_pk_plan p, const float *tissue,
                                                          int n_voxels, int staged, double *records)
{
    extern __shared__ float rows[];
    const int t = threadIdx.x, nt = p.n_times;
    const long long v0 = (long long)blockIdx.x * PK_BLOCK, v = v0 + t;
    const int nb = n_voxels - v0 < PK_BLOCK ? (int)(n_voxels - v0) : PK_BLOCK;
    const float *c = tissue + v * nt;
    int stride = 1;
    if (staged) {
        const float *base = tissue + v0 * nt;
        for (int k = t; k < nb * nt; k += PK_BLOCK) {
            const int r = k / nt, i = k - r * nt;
            rows[i * PK_BLOCK + r] = base[k];
        }
        __syncthreads();
        c = rows + t;
        stride = PK_BLOCK;
    }
    if (v >= n_voxels)
        return;
    double rec[FM_PK_OUT_COUNT];
    fm_pk_fit_voxel(&p, c, stride, rec);
    for (int o = 0; o < FM_PK_OUT_COUNT; o++)
        records[(size_t)o * n_voxels + v] = rec[o];
}

typedef struct {
    const fm_pk_job *job;
    int device;
    long long lo, hi; /* voxels of this GPU */
    long long done;   /* voxels stored, read by the polling thread */
    long long invalid;
    volatile int *cancel;
    int finished;
    fm_status status;
    char msg[FM_MSG_LEN];
} gpu_work;

typedef struct {
    long long v0;
    int n;
} pending_chunk;

/* Copies a finished chunk's records from pinned memory into the caller's maps. */
static void drain(gpu_work *w, const double *h_rec, pending_chunk *pc)
{
    for (int i = 0; i < pc->n; i++) {
        double rec[FM_PK_OUT_COUNT];
        for (int o = 0; o < FM_PK_OUT_COUNT; o++)
            rec[o] = h_rec[(size_t)o * pc->n + i];
        w->invalid += rec[FM_PK_OUT_RMSE] != rec[FM_PK_OUT_RMSE];
        fm_pk_store(w->job->params, w->job->out, pc->v0 + i, rec);
    }
    __atomic_add_fetch(&w->done, (long long)pc->n, __ATOMIC_RELEASE);
    pc->n = 0;
}

static fm_status run_device(gpu_work *w)
{
    const fm_pk_job *job = w->job;
    const fm_pk_tables *tab = job->tables;
    const int nt = tab->plan.n_times;
    char *msg = w->msg;
    size_t msg_len = sizeof w->msg;
    fm_status status = FM_OK;
    double *d_doubles = NULL;
    cudaStream_t stream[N_SLOTS] = {NULL, NULL};
    float *h_in[N_SLOTS] = {NULL, NULL}, *d_in[N_SLOTS] = {NULL, NULL};
    double *h_rec[N_SLOTS] = {NULL, NULL}, *d_rec[N_SLOTS] = {NULL, NULL};
    pending_chunk pend[N_SLOTS] = {{0, 0}, {0, 0}};
    const long long total = w->hi - w->lo;
    const long long chunk = total < CHUNK_VOXELS ? total : CHUNK_VOXELS;
    const size_t smem = sizeof(float) * PK_BLOCK * (size_t)nt;
    const int staged = smem <= SMEM_MAX;
    fm_pk_plan p = tab->plan;

    FM_CUDA_TRY(cudaSetDevice(w->device));
    if (staged && smem > 48 * 1024)
        FM_CUDA_TRY(cudaFuncSetAttribute(pk_fit_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem));
    /* The same table bits as the CPU twin, rebased onto device pointers. */
    FM_CUDA_TRY(cudaMalloc((void **)&d_doubles, tab->n_doubles * sizeof(double)));
    FM_CUDA_TRY(cudaMemcpy(d_doubles, tab->doubles, tab->n_doubles * sizeof(double),
                           cudaMemcpyHostToDevice));
    p.times = d_doubles + (p.times - tab->doubles);
    p.cp = d_doubles + (p.cp - tab->doubles);
    p.delays = d_doubles + (p.delays - tab->doubles);
    p.rates = d_doubles + (p.rates - tab->doubles);
    p.basis = d_doubles + (p.basis - tab->doubles);
    p.gram = d_doubles + (p.gram - tab->doubles);

    for (int k = 0; k < N_SLOTS && chunk > 0; k++) {
        FM_CUDA_TRY(cudaStreamCreateWithFlags(&stream[k], cudaStreamNonBlocking));
        FM_CUDA_TRY(cudaHostAlloc((void **)&h_in[k], (size_t)chunk * nt * sizeof(float),
                                  cudaHostAllocDefault));
        FM_CUDA_TRY(cudaHostAlloc((void **)&h_rec[k],
                                  (size_t)chunk * FM_PK_OUT_COUNT * sizeof(double),
                                  cudaHostAllocDefault));
        FM_CUDA_TRY(cudaMalloc((void **)&d_in[k], (size_t)chunk * nt * sizeof(float)));
        FM_CUDA_TRY(
            cudaMalloc((void **)&d_rec[k], (size_t)chunk * FM_PK_OUT_COUNT * sizeof(double)));
    }
    /* While one slot's chunk computes, the host fills the other slot's pinned buffer and drains
     * its previous results. */
    for (long long v0 = w->lo, c = 0; v0 < w->hi; v0 += chunk, c++) {
        const int k = (int)(c % N_SLOTS);
        const int nv = (int)(w->hi - v0 < chunk ? w->hi - v0 : chunk);
        if (pend[k].n) {
            FM_CUDA_TRY(cudaStreamSynchronize(stream[k]));
            drain(w, h_rec[k], &pend[k]);
        }
        if (*w->cancel)
            break;
        fm_parallel_memcpy(h_in[k], job->tissue + v0 * nt, (size_t)nv * nt * sizeof(float));
        FM_CUDA_TRY(cudaMemcpyAsync(d_in[k], h_in[k], (size_t)nv * nt * sizeof(float),
                                    cudaMemcpyHostToDevice, stream[k]));
        pk_fit_kernel<<<(nv + PK_BLOCK - 1) / PK_BLOCK, PK_BLOCK, staged ? smem : 0, stream[k]>>>(
            p, d_in[k], nv, staged, d_rec[k]);
        FM_CUDA_CHECK_LAUNCH("pk_fit_kernel");
        FM_CUDA_TRY(cudaMemcpyAsync(h_rec[k], d_rec[k],
                                    (size_t)nv * FM_PK_OUT_COUNT * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream[k]));
        pend[k].v0 = v0;
        pend[k].n = nv;
    }
    for (int k = 0; k < N_SLOTS; k++) {
        if (pend[k].n) {
            FM_CUDA_TRY(cudaStreamSynchronize(stream[k]));
            drain(w, h_rec[k], &pend[k]);
        }
    }
cleanup:
    for (int k = 0; k < N_SLOTS; k++) {
        if (stream[k])
            cudaStreamSynchronize(stream[k]);
        cudaFreeHost(h_in[k]);
        cudaFreeHost(h_rec[k]);
        cudaFree(d_in[k]);
        cudaFree(d_rec[k]);
        if (stream[k])
            cudaStreamDestroy(stream[k]);
    }
    cudaFree(d_doubles);
    return status;
}

extern "C" fm_status fm_pk_cuda_run(const fm_pk_job *job, char *msg, size_t msg_len)
{
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
    /* Contiguous equal shares: voxels are independent, and their cost is similar. */
    for (int d = 0; d < n_dev; d++) {
        work[d].job = job;
        work[d].device = d;
        work[d].lo = job->n_voxels * d / n_dev;
        work[d].hi = job->n_voxels * (d + 1) / n_dev;
        work[d].cancel = &cancel;
    }
    /* The calling thread reports progress (voxels done) every 1 ms and forwards a cancel. */
    status =
        fm_cuda_fan_out(work, threads, n_dev, fm_cuda_device_thread<gpu_work, run_device>, &cancel,
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
