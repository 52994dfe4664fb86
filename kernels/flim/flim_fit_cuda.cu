/* CUDA iterative FLIM fits with the same per-pixel math as the CPU twin (flim_fit_math.h): the
 * paper's block per pixel (one thread per time bin, shared-memory sums of the normal equations),
 * a thread-per-pixel variant, GA with one block per segment; chunked, two streams. */
#include <stdlib.h>
#include <string.h>

#include "../cuda_check.h"
#include "../device_private.h"
#include "flim_fit_math.h"

#define BLOCK_BINS 128     /* threads per pixel in the block variant (bins looped beyond) */
#define THREADS_PIXEL 128  /* threads per block in the thread-per-pixel variant */
#define CHUNK_PIXELS 32768 /* 32 MB of 256-bin decays per chunk: overlap and progress */
#define N_SLOTS 2
#define MAX_WARPS 8
#define SHARED_LIMIT 49152 /* default dynamic shared memory without opting in */
/* cuda_variant 0 takes the one measured faster on the H100 (bench/RESULTS.md, 2026-11-23, 512 x 512
 * x 256, after the template-specialised thread kernels): thread per pixel for every model (LSM
 * mono 15.2 vs 53.3 ms, LSM bi 102.2 vs 178.6 ms, MLE bi 51.4 vs 65.3 ms). */
#define FM_FLIM_DEFAULT_VARIANT(model) ((void)(model), 2)

/* Sums K doubles over the block; the total is valid in thread 0. Warp shuffles, then one slot
 * per warp in shared memory. */
template <int K> __device__ void block_sum(double *v, double *red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int n_warps = (blockDim.x + 31) >> 5;
    for (int k = 0; k < K; k++) {
        double x = v[k];
        for (int off = 16; off > 0; off >>= 1)
            x += __shfl_down_sync(0xffffffffu, x, off);
        if (lane == 0)
            red[k * MAX_WARPS + warp] = x;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < K; k++) {
            double s = 0;
            for (int w = 0; w < n_warps; w++)
                s += red[k * MAX_WARPS + w];
            v[k] = s;
        }
    __syncthreads();
}

/* Thread-per-pixel: the CPU twin's fm_fit_pixel, one pixel per thread; bin-major input makes
 * each bin's read coalesced across the warp. The model order, background, cost and IRF are
 * template constants: with them known, every loop over parameters unrolls and the normal
 * equations and LM state live in registers instead of a ~800-byte local-memory frame. */
template <int MODEL, int BG, int MLE, int IRF>
__global__ void __launch_bounds__(THREADS_PIXEL)
    fit_thread_kernel(fm_fit_setup su, const float *__restrict__ y, int nc,
                      const unsigned char *__restrict__ mask, const double *__restrict__ irf,
                      fm_fit_result *res)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    fm_fit_setup s = su;
    s.model = MODEL;
    s.fit_bg = BG;
    s.mle = MLE;
    s.has_irf = IRF;
    s.n_params = (MODEL == 1 ? 2 : 4) + BG;
    if (k < nc)
        fm_fit_pixel(&s, y + k, (size_t)nc, irf, mask[k], &res[k]);
}

typedef void (*fit_thread_fn)(fm_fit_setup, const float *, int, const unsigned char *,
                              const double *, fm_fit_result *);

template <int MODEL, int BG> static fit_thread_fn thread_kernel_for(int mle, int irf)
{
    if (mle)
        return irf ? fit_thread_kernel<MODEL, BG, 1, 1> : fit_thread_kernel<MODEL, BG, 1, 0>;
    return irf ? fit_thread_kernel<MODEL, BG, 0, 1> : fit_thread_kernel<MODEL, BG, 0, 0>;
}

static fit_thread_fn thread_kernel(const fm_fit_setup *su)
{
    if (su->model == 1)
        return su->fit_bg ? thread_kernel_for<1, 1>(su->mle, su->has_irf)
                          : thread_kernel_for<1, 0>(su->mle, su->has_irf);
    return su->fit_bg ? thread_kernel_for<2, 1>(su->mle, su->has_irf)
                      : thread_kernel_for<2, 0>(su->mle, su->has_irf);
}

/* Block per pixel: every thread owns bins i = tid, tid + blockDim ...; the normal-equation sums
 * are reduced in shared memory and thread 0 takes the LM decision (fm_lm_update), as in the
 * paper. With an IRF, thread 0 runs the recursion into shared memory (fm_fit_basis_fill). */
__device__ void block_eval(const fm_fit_setup *su, const float *y, int nc, int k, const double *irf,
                           const double *p, const double *wref, double *basis, double *red,
                           fm_fit_sums *out)
{
    const int n_fit = su->fit_end - su->fit_start;
    double *e0 = basis, *d0 = basis + n_fit, *e1 = basis + 2 * n_fit, *d1 = basis + 3 * n_fit;
    double tau0, tau1;
    fm_fit_taus(su, p, &tau0, &tau1);
    if (su->has_irf) {
        if (threadIdx.x == 0)
            fm_fit_basis_fill(su, irf, tau0, tau1, e0, d0, e1, d1);
        __syncthreads();
    }
    fm_fit_sums s;
    fm_fit_sums_zero(&s);
    for (int i = threadIdx.x; i < n_fit; i += blockDim.x) {
        double a0, b0, a1 = 0, b1 = 0;
        if (su->has_irf) {
            a0 = e0[i];
            b0 = d0[i];
            a1 = e1[i];
            b1 = d1[i];
        } else {
            fm_fit_basis_direct(su, i + su->fit_start, tau0, &a0, &b0);
            if (su->model == 2)
                fm_fit_basis_direct(su, i + su->fit_start, tau1, &a1, &b1);
        }
        const double v = (double)y[(size_t)(i + su->fit_start) * nc + k];
        fm_fit_accumulate(su, p, a0, b0, a1, b1, v, wref ? wref[i] : v, &s);
    }
    block_sum<FM_FIT_NSUM>((double *)&s, red);
    if (threadIdx.x == 0)
        *out = s;
}

__global__ void fit_block_kernel(fm_fit_setup su, const float *__restrict__ y, int nc,
                                 const unsigned char *__restrict__ mask,
                                 const double *__restrict__ irf, fm_fit_result *res)
{
    extern __shared__ double dyn[]; /* basis 4 n_fit (IRF only), then weights n_fit */
    __shared__ double red[FM_FIT_NSUM * MAX_WARPS];
    __shared__ fm_lm_state st;
    __shared__ double p[FM_FIT_MAXP];
    __shared__ unsigned char role[FM_FIT_MAXP];
    __shared__ int stop, iter;
    const int k = blockIdx.x, n_fit = su.fit_end - su.fit_start;
    double *basis = dyn, *wref = dyn + (su.has_irf ? 4 * n_fit : 0);
    fm_fit_result *r = res + k;
    fm_fit_sums s;

    double ph[1] = {0};
    for (int i = threadIdx.x; i < n_fit; i += blockDim.x)
        ph[0] += y[(size_t)(i + su.fit_start) * nc + k];
    block_sum<1>(ph, red);
    if (threadIdx.x == 0) {
        fm_fit_result_skip(r, ph[0], mask[k]);
        stop = !mask[k] || !(ph[0] > 0) || ph[0] < su.min_photons;
        fm_fit_start(&su, p, role);
        iter = 0;
    }
    __syncthreads();
    if (stop)
        return;
    block_eval(&su, y, nc, k, irf, p, NULL, basis, red, &s);
    if (threadIdx.x == 0) {
        stop = !(s.msum > 0);
        p[0] = ph[0] / s.msum;
    }
    __syncthreads();
    if (stop)
        return;
    for (int pass = 0; pass < (su.mle ? 1 : 2); pass++) {
        if (threadIdx.x == 0)
            fm_lm_init(&st, su.n_params, role, p);
        __syncthreads();
        for (;;) {
            block_eval(&su, y, nc, k, irf, st.trial, pass ? wref : NULL, basis, red, &s);
            if (threadIdx.x == 0)
                fm_lm_update(&st, &s, su.tol, su.max_iter);
            __syncthreads();
            if (st.done)
                break;
        }
        if (threadIdx.x == 0) {
            stop = !st.have;
            iter += st.iter;
            for (int j = 0; j < FM_FIT_MAXP; j++)
                p[j] = st.p[j];
        }
        __syncthreads();
        if (stop)
            return;
        if (pass == 0 && !su.mle) { /* weights of the second pass: the first pass's model */
            double tau0, tau1;
            fm_fit_taus(&su, p, &tau0, &tau1);
            if (su.has_irf && threadIdx.x == 0)
                fm_fit_basis_fill(&su, irf, tau0, tau1, basis, basis + n_fit, basis + 2 * n_fit,
                                  basis + 3 * n_fit);
            __syncthreads();
            for (int i = threadIdx.x; i < n_fit; i += blockDim.x) {
                double a0, b0, a1 = 0, b1;
                if (su.has_irf) {
                    a0 = basis[i];
                    a1 = basis[2 * n_fit + i];
                } else {
                    fm_fit_basis_direct(&su, i + su.fit_start, tau0, &a0, &b0);
                    if (su.model == 2)
                        fm_fit_basis_direct(&su, i + su.fit_start, tau1, &a1, &b1);
                }
                wref[i] = fm_fit_model_value(&su, p, a0, a1);
            }
            __syncthreads();
        }
    }
    if (threadIdx.x == 0) {
        for (int j = 0; j < FM_FIT_MAXP; j++)
            r->p[j] = st.p[j];
        r->cost = st.cost;
        const int dof = n_fit - su.n_params;
        r->chi2 = st.cost / (dof > 0 ? dof : 1);
        r->iter = iter;
        r->converged = st.converged;
        r->fitted = 1;
    }
}

/* GA: one block per segment, one thread per pixel of it (looping for large segments). The
 * segment's basis and mean decay live in shared memory; thread 0 takes the LM decisions on the
 * lifetimes. Serial parts (mean decay per bin, mean photons) keep the CPU twin's order. */
__global__ void fit_ga_kernel(fm_fit_setup su, const float *__restrict__ y, int nc,
                              const unsigned char *__restrict__ mask, const int *__restrict__ off,
                              const double *__restrict__ irf, fm_fit_result *res)
{
    extern __shared__ double dyn[]; /* e0, d0, e1, d1, ybar: 5 n_fit */
    __shared__ double red[FM_FIT_NSUM * MAX_WARPS];
    __shared__ fm_lm_state st;
    __shared__ double mean_photons;
    __shared__ int usable;
    const int n_fit = su.fit_end - su.fit_start, k0 = off[blockIdx.x], k1 = off[blockIdx.x + 1];
    double *e0 = dyn, *d0 = dyn + n_fit, *e1 = dyn + 2 * n_fit, *d1 = dyn + 3 * n_fit;
    double *ybar = dyn + 4 * n_fit;

    for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        double photons = 0;
        for (int i = su.fit_start; i < su.fit_end; i++)
            photons += y[(size_t)i * nc + k];
        fm_fit_result_skip(&res[k], photons, mask[k]);
        if (mask[k] && photons > 0 && photons >= su.min_photons)
            res[k].fitted = 2;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        usable = 0;
        mean_photons = 0;
        for (int k = k0; k < k1; k++)
            usable += res[k].fitted == 2;
        for (int k = k0; k < k1; k++)
            if (res[k].fitted == 2)
                mean_photons += res[k].photons / usable;
    }
    __syncthreads();
    if (usable == 0)
        return;
    for (int i = threadIdx.x; i < n_fit; i += blockDim.x) {
        double s = 0;
        for (int k = k0; k < k1; k++)
            if (res[k].fitted == 2)
                s += y[(size_t)(i + su.fit_start) * nc + k] / usable;
        ybar[i] = s;
    }
    if (threadIdx.x == 0) {
        double tau[2];
        unsigned char role[2];
        fm_ga_start(&su, tau, role);
        fm_lm_init(&st, su.model, role, tau);
    }
    __syncthreads();
    for (;;) {
        if (threadIdx.x == 0)
            fm_fit_basis_fill(&su, irf, st.trial[0], st.trial[su.model - 1], e0, d0, e1, d1);
        __syncthreads();
        fm_fit_sums acc;
        fm_fit_sums_zero(&acc);
        for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
            if (res[k].fitted != 2)
                continue;
            fm_ga_sums s;
            double a[3];
            int free_set;
            fm_ga_pixel_sums(&su, e0, d0, e1, d1, ybar, res[k].photons / mean_photons, y + k,
                             (size_t)nc, &s);
            double cost = fm_ga_nnls(su.n_lin, &s, a, &free_set);
            fm_ga_contrib(&su, &s, a, free_set, cost, &acc);
        }
        block_sum<FM_FIT_NSUM>((double *)&acc, red);
        if (threadIdx.x == 0)
            fm_lm_update(&st, &acc, su.tol, su.max_iter);
        __syncthreads();
        if (st.done)
            break;
    }
    if (threadIdx.x == 0)
        fm_fit_basis_fill(&su, irf, st.p[0], st.p[su.model - 1], e0, d0, e1, d1);
    __syncthreads();
    for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        if (res[k].fitted != 2)
            continue;
        if (!st.have) {
            res[k].fitted = 0;
            continue;
        }
        fm_ga_sums s;
        double a[3];
        int free_set;
        fm_ga_pixel_sums(&su, e0, d0, e1, d1, ybar, res[k].photons / mean_photons, y + k,
                         (size_t)nc, &s);
        double cost = fm_ga_nnls(su.n_lin, &s, a, &free_set);
        fm_ga_result(&su, a, st.p, cost, st.iter, st.converged, &res[k]);
    }
}

typedef struct {
    cudaStream_t stream;
    cudaEvent_t done;
    float *h_in, *d_in;
    unsigned char *h_mask, *d_mask;
    int *h_off, *d_off;
    fm_fit_result *h_res, *d_res;
    long k0, k1;
    int busy;
} fit_slot;

/* Pinned staging and device buffers for the decays and results, kept between runs: pinning and
 * freeing 2 x 32 MB each call cost more than fitting a 512 x 512 image. One run at a time uses
 * the cache (device 0); a concurrent run allocates and frees its own. */
typedef struct {
    float *h_in, *d_in;
    fm_fit_result *h_res, *d_res;
    size_t in_bytes, res_bytes;
} fit_cache_entry;
static fit_cache_entry fit_cache[N_SLOTS];
static int fit_cache_busy;

static cudaError_t slot_buffers(fit_slot *sl, fit_cache_entry *ce, size_t in_bytes,
                                size_t res_bytes)
{
    cudaError_t e;
    if (ce && ce->in_bytes >= in_bytes && ce->res_bytes >= res_bytes) {
        sl->h_in = ce->h_in;
        sl->d_in = ce->d_in;
        sl->h_res = ce->h_res;
        sl->d_res = ce->d_res;
        return cudaSuccess;
    }
    if (ce) { /* too small: replace */
        cudaFreeHost(ce->h_in);
        cudaFree(ce->d_in);
        cudaFreeHost(ce->h_res);
        cudaFree(ce->d_res);
        memset(ce, 0, sizeof *ce);
    }
    if ((e = cudaHostAlloc((void **)&sl->h_in, in_bytes, cudaHostAllocDefault)) != cudaSuccess ||
        (e = cudaMalloc((void **)&sl->d_in, in_bytes)) != cudaSuccess ||
        (e = cudaHostAlloc((void **)&sl->h_res, res_bytes, cudaHostAllocDefault)) != cudaSuccess ||
        (e = cudaMalloc((void **)&sl->d_res, res_bytes)) != cudaSuccess)
        return e; /* cleanup frees what this slot holds */
    if (ce) {
        ce->h_in = sl->h_in;
        ce->d_in = sl->d_in;
        ce->h_res = sl->h_res;
        ce->d_res = sl->d_res;
        ce->in_bytes = in_bytes;
        ce->res_bytes = res_bytes;
    }
    return cudaSuccess;
}

extern "C" fm_status fm_flim_fit_cuda(const fm_flim_job *job, fm_run_info *info, char *msg,
                                      size_t msg_len)
{
    fm_status status = FM_OK;
    fm_fit_setup su;
    fit_slot slot[N_SLOTS];
    double *irf = NULL, *d_irf = NULL;
    int *seg_off = NULL, *seg_pix = NULL;
    const int ga = job->method == FM_FLIM_GA;
    const int n_fit = job->params->fit_end - job->params->fit_start;
    const int n_copy = job->params->fit_end; /* the IRF recursion starts at bin 0 */
    int variant = job->params->cuda_variant ? job->params->cuda_variant
                                            : FM_FLIM_DEFAULT_VARIANT(job->params->model);
    long total = job->n_pixels, max_chunk = CHUNK_PIXELS, done_pixels = 0;
    int ga_threads = 32, s_next = 0, next_slot = 0;
    size_t shared = 0;
    const int cached = __atomic_exchange_n(&fit_cache_busy, 1, __ATOMIC_ACQUIRE) == 0;
    (void)info;
    memset(slot, 0, sizeof slot);

    if (job->method != FM_FLIM_LSM && job->method != FM_FLIM_MLE && !ga) {
        status = fm_fail(FM_ERR_INVALID_ARG, msg, msg_len, "method %d is not an iterative fit",
                         (int)job->method);
        goto cleanup;
    }
    fm_fit_setup_from(job, &su);
    if (job->params->irf && !(irf = fm_fit_irf_double(job))) {
        status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for the IRF");
        goto cleanup;
    }
    if (ga) {
        if (fm_fit_segments(job, &seg_off, &seg_pix) != 0) {
            status = fm_fail(FM_ERR_NO_MEMORY, msg, msg_len, "no memory for segments");
            goto cleanup;
        }
        total = seg_off[job->n_segments];
        for (int s = 0; s < job->n_segments; s++) {
            const long size = seg_off[s + 1] - seg_off[s];
            max_chunk = size > max_chunk ? size : max_chunk;
            while (ga_threads < size && ga_threads < 32 * MAX_WARPS)
                ga_threads *= 2;
        }
        shared = 5 * (size_t)n_fit * sizeof(double);
        fm_fit_mark_unsegmented(job, &su);
    } else {
        shared = (su.has_irf ? 5 : 1) * (size_t)n_fit * sizeof(double);
        if (variant == 1 && shared > SHARED_LIMIT)
            variant = 2; /* too many bins for shared memory: the thread variant needs none */
    }
    if (ga && shared > SHARED_LIMIT) {
        status = fm_fail(FM_ERR_INVALID_ARG, msg, msg_len,
                         "GA on CUDA holds the basis of %d bins in shared memory; at most %d",
                         n_fit, (int)(SHARED_LIMIT / (5 * sizeof(double))));
        goto cleanup;
    }
    FM_CUDA_TRY(cudaSetDevice(0));
    if (irf) {
        FM_CUDA_TRY(cudaMalloc((void **)&d_irf, job->params->n_bins * sizeof(double)));
        FM_CUDA_TRY(
            cudaMemcpy(d_irf, irf, job->params->n_bins * sizeof(double), cudaMemcpyHostToDevice));
    }
    for (int i = 0; i < N_SLOTS; i++) {
        fit_slot *sl = &slot[i];
        FM_CUDA_TRY(cudaStreamCreateWithFlags(&sl->stream, cudaStreamNonBlocking));
        FM_CUDA_TRY(cudaEventCreateWithFlags(&sl->done, cudaEventDisableTiming));
        FM_CUDA_TRY(slot_buffers(sl, cached ? &fit_cache[i] : NULL,
                                 max_chunk * n_copy * sizeof(float),
                                 max_chunk * sizeof(fm_fit_result)));
        FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_mask, max_chunk, cudaHostAllocDefault));
        FM_CUDA_TRY(cudaMalloc((void **)&sl->d_mask, max_chunk));
        if (ga) {
            FM_CUDA_TRY(cudaHostAlloc((void **)&sl->h_off, (max_chunk + 1) * sizeof(int),
                                      cudaHostAllocDefault));
            FM_CUDA_TRY(cudaMalloc((void **)&sl->d_off, (max_chunk + 1) * sizeof(int)));
        }
    }

    /* Chunk c uses slot c % N_SLOTS: while the device fits chunk c, the host gathers c + 1 and
     * writes out c - 1; the host waits only to reuse a slot. */
    for (int c = 0;; c++) {
        fit_slot *sl = &slot[c % N_SLOTS];
        next_slot = c % N_SLOTS;
        if (sl->busy) {
            FM_CUDA_TRY(cudaEventSynchronize(sl->done));
            fm_fit_scatter(job, &su, ga ? seg_pix : NULL, sl->k0, sl->k1, sl->h_res);
            done_pixels += sl->k1 - sl->k0;
            sl->busy = 0;
            if (job->tick && job->tick(job->tick_user, total ? (double)done_pixels / total : 1)) {
                status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
                goto cleanup;
            }
        }
        long k0, k1;
        int n_seg = 0;
        if (ga) {
            if (s_next >= job->n_segments)
                break;
            int s1 = s_next + 1;
            while (s1 < job->n_segments && seg_off[s1 + 1] - seg_off[s_next] <= max_chunk)
                s1++;
            k0 = seg_off[s_next];
            k1 = seg_off[s1];
            n_seg = s1 - s_next;
            for (int s = 0; s <= n_seg; s++)
                sl->h_off[s] = seg_off[s_next + s] - (int)k0;
            s_next = s1;
        } else {
            k0 = (long)c * CHUNK_PIXELS;
            if (k0 >= total)
                break;
            k1 = k0 + CHUNK_PIXELS < total ? k0 + CHUNK_PIXELS : total;
        }
        const int nc = (int)(k1 - k0);
        sl->k0 = k0;
        sl->k1 = k1;
        if (nc == 0)
            continue;
        fm_fit_gather(job, ga ? seg_pix : NULL, k0, k1, n_copy, sl->h_in, sl->h_mask);
        FM_CUDA_TRY(cudaMemcpyAsync(sl->d_in, sl->h_in, (size_t)nc * n_copy * sizeof(float),
                                    cudaMemcpyHostToDevice, sl->stream));
        FM_CUDA_TRY(
            cudaMemcpyAsync(sl->d_mask, sl->h_mask, nc, cudaMemcpyHostToDevice, sl->stream));
        if (ga) {
            FM_CUDA_TRY(cudaMemcpyAsync(sl->d_off, sl->h_off, (n_seg + 1) * sizeof(int),
                                        cudaMemcpyHostToDevice, sl->stream));
            fit_ga_kernel<<<n_seg, ga_threads, shared, sl->stream>>>(su, sl->d_in, nc, sl->d_mask,
                                                                     sl->d_off, d_irf, sl->d_res);
            FM_CUDA_CHECK_LAUNCH("fit_ga_kernel");
        } else if (variant == 1) {
            fit_block_kernel<<<nc, BLOCK_BINS, shared, sl->stream>>>(su, sl->d_in, nc, sl->d_mask,
                                                                     d_irf, sl->d_res);
            FM_CUDA_CHECK_LAUNCH("fit_block_kernel");
        } else {
            thread_kernel(&su)<<<(nc + THREADS_PIXEL - 1) / THREADS_PIXEL, THREADS_PIXEL, 0,
                                 sl->stream>>>(su, sl->d_in, nc, sl->d_mask, d_irf, sl->d_res);
            FM_CUDA_CHECK_LAUNCH("fit_thread_kernel");
        }
        FM_CUDA_TRY(cudaMemcpyAsync(sl->h_res, sl->d_res, (size_t)nc * sizeof(fm_fit_result),
                                    cudaMemcpyDeviceToHost, sl->stream));
        FM_CUDA_TRY(cudaEventRecord(sl->done, sl->stream));
        sl->busy = 1;
    }
    for (int j = 0; j < N_SLOTS; j++) { /* the rest, oldest first */
        fit_slot *old = &slot[(next_slot + j) % N_SLOTS];
        if (!old->busy)
            continue;
        FM_CUDA_TRY(cudaEventSynchronize(old->done));
        fm_fit_scatter(job, &su, ga ? seg_pix : NULL, old->k0, old->k1, old->h_res);
        done_pixels += old->k1 - old->k0;
        old->busy = 0;
        if (job->tick && job->tick(job->tick_user, total ? (double)done_pixels / total : 1)) {
            status = fm_fail(FM_ERR_CANCELLED, msg, msg_len, "cancelled");
            goto cleanup;
        }
    }

cleanup:
    for (int i = 0; i < N_SLOTS; i++) /* nothing may still write into what we free */
        if (slot[i].stream)
            cudaStreamSynchronize(slot[i].stream);
    for (int i = 0; i < N_SLOTS; i++) {
        fit_slot *sl = &slot[i];
        if (sl->stream)
            cudaStreamDestroy(sl->stream);
        if (sl->done)
            cudaEventDestroy(sl->done);
        if (!cached || sl->h_in != fit_cache[i].h_in) { /* the cache's stay for the next run */
            cudaFreeHost(sl->h_in);
            cudaFree(sl->d_in);
            cudaFreeHost(sl->h_res);
            cudaFree(sl->d_res);
        }
        cudaFreeHost(sl->h_mask);
        cudaFreeHost(sl->h_off);
        cudaFree(sl->d_mask);
        cudaFree(sl->d_off);
    }
    if (cached)
        __atomic_store_n(&fit_cache_busy, 0, __ATOMIC_RELEASE);
    cudaFree(d_irf);
    free(irf);
    free(seg_off);
    free(seg_pix);
    return status;
}
