/* CUDA kernels of the iterative FLIM fits, included by flim_fit_cuda.cu: the group-per-pixel
 * kernel (the default without an IRF), thread per pixel, the paper's block per pixel, GA with
 * one block per segment, and the widening of uint16 counts. */
#pragma once

#include <stdint.h>

#include "flim_fit_math.h"

#define FULL_MASK 0xffffffffu
/* Launch shapes (here, not in flim_fit_cuda.cu, so that the host emulation of the kernels in
 * tests/kernels builds them with the same values). */
#define BLOCK_BINS 128     /* threads per pixel in the block variant (bins looped beyond) */
#define THREADS_PIXEL 128  /* threads per block in the thread-per-pixel variant */
#define MAX_WARPS 8
#define SHARED_LIMIT 49152 /* default dynamic shared memory without opting in */
#define GROUP_BLOCK 64     /* group kernel: 2 warps per block */
#ifndef GROUP_MIN_BLOCKS
#define GROUP_MIN_BLOCKS 6 /* <= 168 registers: 12 warps per SM */
#endif
#define GROUP_SHARED_MAX (100 << 10) /* group kernel: counts and weights of its pixels */

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
        double a0, b0, a1 = 0, b1 = 0, c0 = 0, c1 = 0;
        if (su->has_irf) {
            a0 = e0[i];
            b0 = d0[i];
            a1 = e1[i];
            b1 = d1[i];
        } else {
            fm_fit_basis_direct(su, i + su->fit_start, tau0, &a0, &b0);
            c0 = fm_fit_basis_dd(su, i + su->fit_start, tau0, b0);
            if (su->model == 2) {
                fm_fit_basis_direct(su, i + su->fit_start, tau1, &a1, &b1);
                c1 = fm_fit_basis_dd(su, i + su->fit_start, tau1, b1);
            }
        }
        const double v = (double)y[(size_t)(i + su->fit_start) * nc + k];
        fm_fit_accumulate(su, p, a0, b0, c0, a1, b1, c1, v, fm_fit_weight(wref ? wref[i] : v), &s);
    }
    block_sum<FM_FIT_NSUM>((double *)&s, red);
    if (threadIdx.x == 0) {
        fm_fit_finish(su, p, &s);
        *out = s;
    }
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

    double ph[2] = {0, 0}; /* photons and sum j y_j (fm_fit_photons; exact, any order) */
    for (int i = threadIdx.x; i < n_fit; i += blockDim.x) {
        const double v = y[(size_t)(i + su.fit_start) * nc + k];
        ph[0] += v;
        ph[1] += FM_FIT_MUL((double)i, v);
    }
    block_sum<2>(ph, red);
    if (threadIdx.x == 0) {
        fm_fit_result_skip(r, ph[0], mask[k]);
        stop = !mask[k] || !(ph[0] > 0) || ph[0] < su.min_photons;
        fm_fit_start(&su, p, role);
        fm_fit_start_data(&su, ph[0], ph[1], p);
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
                fm_lm_update(&st, &s, su.n_params, fm_fit_pass_tol(&su, pass), su.max_iter);
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

/* Entries of h2 that bi LSM adds per bin (fm_fit_accumulate): the second tau derivatives' sums
 * on the tauF and tauD diagonal; fm_fit_finish fills the others after the reduction, so
 * the reductions skip their shuffles (0 on every lane until then). */
__host__ __device__ constexpr bool lsm_h2_entry(int a, int b)
{
    return a == b && (a == 2 || a == 3);
}

/* The sums over groups of L lanes (xor butterfly, offsets L/2 ... 1): with lane l of a group
 * holding segment bitrev(l), exactly the pairwise tree of the CPU twin (fm_fit_eval). */
template <int N, int NEWTON, int L = 32> __device__ __forceinline__ void warp_sum(fm_fit_sums *s)
{
#pragma unroll
    for (int a = 0; a < N; a++) {
#pragma unroll
        for (int b = a; b < N; b++) {
#pragma unroll
            for (int off = L / 2; off > 0; off >>= 1)
                s->h[fm_fit_hidx(a, b)] += __shfl_xor_sync(FULL_MASK, s->h[fm_fit_hidx(a, b)], off);
            if (NEWTON && lsm_h2_entry(a, b))
#pragma unroll
                for (int off = L / 2; off > 0; off >>= 1)
                    s->h2[fm_fit_hidx(a, b)] +=
                        __shfl_xor_sync(FULL_MASK, s->h2[fm_fit_hidx(a, b)], off);
        }
#pragma unroll
        for (int off = L / 2; off > 0; off >>= 1)
            s->g[a] += __shfl_xor_sync(FULL_MASK, s->g[a], off);
    }
#pragma unroll
    for (int off = L / 2; off > 0; off >>= 1) {
        s->cost += __shfl_xor_sync(FULL_MASK, s->cost, off);
        s->msum += __shfl_xor_sync(FULL_MASK, s->msum, off);
    }
}

#include "flim_fit_group.cuh"

/* GA: one block per segment, thread t on pixels t, t + blockDim, ... of it. The basis is filled
 * by all threads (one exp per bin, as fm_fit_basis_fill; with an IRF thread 0 runs the
 * recursion), the pixels' contributions meet in the partition the CPU twin copies
 * (fm_fit_warp_tree, then warps in order), and thread 0 takes the LM decisions on the
 * lifetimes. MODEL and BG as template constants keep the per-pixel sums (fm_ga_sums) in
 * registers: as runtime values they lived in local memory, ~17 read-modify-writes per bin. */
template <int MODEL, int BG>
__global__ void fit_ga_kernel(fm_fit_setup su, const float *__restrict__ y, int nc,
                              const unsigned char *__restrict__ mask, const int *__restrict__ off,
                              const double *__restrict__ irf, fm_fit_result *res)
{
    extern __shared__ double dyn[]; /* e0, d0, e1, d1, ybar: 5 n_fit */
    __shared__ fm_fit_sums red[MAX_WARPS];
    __shared__ fm_lm_state st;
    __shared__ double mean_photons;
    __shared__ int usable;
    fm_fit_setup s = su;
    s.model = MODEL;
    s.fit_bg = BG;
    s.n_lin = MODEL + BG;
    const int n_fit = s.fit_end - s.fit_start, k0 = off[blockIdx.x], k1 = off[blockIdx.x + 1];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
    double *e0 = dyn, *d0 = dyn + n_fit, *e1 = dyn + 2 * n_fit, *d1 = dyn + 3 * n_fit;
    double *ybar = dyn + 4 * n_fit;

    for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        double photons = 0;
        for (int i = s.fit_start; i < s.fit_end; i++)
            photons = photons + y[(size_t)i * nc + k];
        fm_fit_result_skip(&res[k], photons, mask[k]);
        if (mask[k] && photons > 0 && photons >= s.min_photons)
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
        double v = 0;
        for (int k = k0; k < k1; k++)
            if (res[k].fitted == 2)
                v += y[(size_t)(i + s.fit_start) * nc + k] / usable;
        ybar[i] = v;
    }
    if (threadIdx.x == 0) {
        double tau[2];
        unsigned char role[2];
        fm_ga_start(&s, tau, role);
        fm_lm_init(&st, MODEL, role, tau);
    }
    __syncthreads();
    for (int last = 0;;) {
        const double tau0 = last ? st.p[0] : st.trial[0];
        const double tau1 = last ? st.p[MODEL - 1] : st.trial[MODEL - 1];
        if (s.has_irf) {
            if (threadIdx.x == 0)
                fm_fit_basis_fill(&s, irf, tau0, tau1, e0, d0, e1, d1);
        } else {
            for (int i = threadIdx.x; i < n_fit; i += blockDim.x) {
                fm_fit_basis_direct(&s, i + s.fit_start, tau0, &e0[i], &d0[i]);
                if (MODEL == 2)
                    fm_fit_basis_direct(&s, i + s.fit_start, tau1, &e1[i], &d1[i]);
                else
                    e1[i] = d1[i] = 0;
            }
        }
        __syncthreads();
        if (last)
            break;
        fm_fit_sums acc;
        fm_fit_sums_zero(&acc);
        for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
            if (res[k].fitted != 2)
                continue;
            fm_ga_sums gs;
            double a[3];
            int free_set;
            fm_ga_pixel_sums(&s, e0, d0, e1, d1, ybar, res[k].photons / mean_photons, y + k,
                             (size_t)nc, &gs);
            double cost = fm_ga_nnls(s.n_lin, &gs, a, &free_set);
            fm_ga_contrib(&s, &gs, a, free_set, cost, &acc);
        }
        warp_sum<MODEL, 0>(&acc); /* GA: Gauss-Newton on the lifetimes, no h2 */
        if (lane == 0)
            red[warp] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            fm_fit_sums total;
            fm_fit_sums_zero(&total);
            for (int w = 0; w < n_warps; w++)
                fm_fit_sums_add(&total, &red[w]);
            fm_lm_update(&st, &total, MODEL, s.tol, s.max_iter);
        }
        __syncthreads();
        last = st.done;
    }
    for (int k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
        if (res[k].fitted != 2)
            continue;
        if (!st.have) {
            res[k].fitted = 0;
            continue;
        }
        fm_ga_sums gs;
        double a[3];
        int free_set;
        fm_ga_pixel_sums(&s, e0, d0, e1, d1, ybar, res[k].photons / mean_photons, y + k, (size_t)nc,
                         &gs);
        double cost = fm_ga_nnls(s.n_lin, &gs, a, &free_set);
        fm_ga_result(&s, a, st.p, cost, st.iter, st.converged, &res[k]);
    }
}

typedef void (*fit_ga_fn)(fm_fit_setup, const float *, int, const unsigned char *, const int *,
                          const double *, fm_fit_result *);

static fit_ga_fn ga_kernel(const fm_fit_setup *su)
{
    if (su->model == 1)
        return su->fit_bg ? fit_ga_kernel<1, 1> : fit_ga_kernel<1, 0>;
    return su->fit_bg ? fit_ga_kernel<2, 1> : fit_ga_kernel<2, 0>;
}

/* uint16 counts to float on the device (exact), after an upload of half the bytes. */
__global__ void widen_u16_kernel(const uint16_t *__restrict__ src, float *__restrict__ dst,
                                 size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = (float)src[i];
}
