/* CUDA kernels of the iterative FLIM fits, included by flim_fit_cuda.cu: the warp-per-pixel
 * kernel (the default without an IRF), thread per pixel, the paper's block per pixel, GA with
 * one block per segment, and the widening of uint16 counts. */
#pragma once

#include <stdint.h>

#include "flim_fit_math.h"

#define FULL_MASK 0xffffffffu

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
        fm_fit_accumulate(su, p, a0, b0, c0, a1, b1, c1, v, fm_fit_weight(wref ? wref[i] : v),
                          &s);
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

/* Warp per pixel, the CPU twin's canonical order (FM_FIT_SEGS = 32 segments): lane l owns the
 * bins of segment bitrev(l), loaded once into registers with their LSM weights; the lanes' sums
 * meet through the xor butterfly, which with the bit-reversed segments is exactly the pairwise
 * tree the CPU twin adds. Every lane then holds the same totals and runs the LM decision
 * redundantly: no barriers, no shared memory, and a warp waits only for its own pixel instead
 * of the slowest of 32 (thread per pixel: 92 evaluations per pixel for LSM bi against a mean
 * of 28). NB: bins per lane held in registers, >= ceil(n_fit / 32). */
/* Entries of Newton's h2 that bi LSM can make non-zero (fm_fit_accumulate): amplitude-fraction,
 * amplitude-lifetime, fraction-lifetime and lifetime-lifetime pairs. The others stay 0 on both
 * backends, so the warp skips their shuffles. */
__host__ __device__ constexpr bool lsm_h2_entry(int a, int b)
{
    return a < 4 && b < 4 && !(a == b && a < 2) && !(a == 2 && b == 3);
}

template <int N, int NEWTON> __device__ __forceinline__ void warp_sum(fm_fit_sums *s)
{
#pragma unroll
    for (int a = 0; a < N; a++) {
#pragma unroll
        for (int b = a; b < N; b++) {
#pragma unroll
            for (int off = 16; off > 0; off >>= 1)
                s->h[fm_fit_hidx(a, b)] += __shfl_xor_sync(FULL_MASK, s->h[fm_fit_hidx(a, b)], off);
            if (NEWTON && lsm_h2_entry(a, b))
#pragma unroll
                for (int off = 16; off > 0; off >>= 1)
                    s->h2[fm_fit_hidx(a, b)] +=
                        __shfl_xor_sync(FULL_MASK, s->h2[fm_fit_hidx(a, b)], off);
        }
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            s->g[a] += __shfl_xor_sync(FULL_MASK, s->g[a], off);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        s->cost += __shfl_xor_sync(FULL_MASK, s->cost, off);
        s->msum += __shfl_xor_sync(FULL_MASK, s->msum, off);
    }
}

/* This lane's segment [j0, j1) at parameters p with weights w, then the warp's totals. */
template <int NB>
__device__ __forceinline__ void warp_eval(const fm_fit_setup *s, int j0, int j1, const float *yv,
                                          const double *w, const double *p, fm_fit_sums *out)
{
    fm_fit_decay c;
    fm_fit_decay_init(s, p, &c);
    fm_fit_sums_zero(out);
    if (j0 < j1) {
        double e0 = fm_fit_seg_exp(s, j0, c.inv0);
        double e1 = s->model == 2 ? fm_fit_seg_exp(s, j0, c.inv1) : 0;
#pragma unroll
        for (int q = 0; q < NB; q++)
            if (j0 + q < j1) {
                fm_fit_bin(s, p, &c, j0 + q, e0, e1, (double)yv[q], w[q], out);
                e0 = FM_FIT_MUL(e0, c.q0);
                e1 = FM_FIT_MUL(e1, c.q1);
            }
    }
}

#ifndef WARP_MIN_BLOCKS
#define WARP_MIN_BLOCKS 3 /* <= 168 registers: 12 warps per SM for the bi-exponential kernels */
#endif
template <int MODEL, int BG, int MLE, int NB>
__global__ void __launch_bounds__(WARP_BLOCK, WARP_MIN_BLOCKS)
    fit_warp_kernel(fm_fit_setup su, const float *__restrict__ y, int nc,
                    const unsigned char *__restrict__ mask, fm_fit_result *res)
{
    constexpr int NP = (MODEL == 1 ? 2 : 4) + BG;
    constexpr int NEWTON = MODEL == 2 && !MLE; /* fm_fit_newton without an IRF */
    const int lane = threadIdx.x & 31;
    const int k = blockIdx.x * (WARP_BLOCK / 32) + (threadIdx.x >> 5);
    if (k >= nc) /* the whole warp */
        return;
    fm_fit_setup s = su;
    s.model = MODEL;
    s.fit_bg = BG;
    s.mle = MLE;
    s.has_irf = 0;
    s.n_params = NP;
    int j0, j1;
    fm_fit_seg_range(&s, (int)(__brev((unsigned)lane) >> 27), &j0, &j1);
    float yv[NB];
    double w[NB], photons = 0;
#pragma unroll
    for (int q = 0; q < NB; q++) {
        yv[q] = j0 + q < j1 ? y[(size_t)(j0 + q + s.fit_start) * nc + k] : 0.0f;
        if (j0 + q < j1)
            photons = photons + yv[q];
        w[q] = fm_fit_weight(yv[q]); /* Neyman weights of the first pass */
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
        photons += __shfl_xor_sync(FULL_MASK, photons, off);

    fm_fit_result r;
    fm_fit_result_skip(&r, photons, mask[k]);
    double p[FM_FIT_MAXP], pw[FM_FIT_MAXP];
    unsigned char role[FM_FIT_MAXP];
    fm_fit_sums sums;
    fm_lm_state st;
    int iter = 0, ok = mask[k] && photons > 0 && photons >= s.min_photons;
    if (ok) {
        fm_fit_start(&s, p, role);
        warp_eval<NB>(&s, j0, j1, yv, w, p, &sums);
        warp_sum<NP, NEWTON>(&sums);
        ok = sums.msum > 0;
        p[0] = photons / sums.msum;
    }
    for (int pass = 0; ok && pass < (MLE ? 1 : 2); pass++) {
        if (pass == 1) { /* weights of the second pass: the first pass's model */
            fm_fit_decay cw;
            fm_fit_decay_init(&s, pw, &cw);
            double f0 = j0 < j1 ? fm_fit_seg_exp(&s, j0, cw.inv0) : 0;
            double f1 = j0 < j1 && MODEL == 2 ? fm_fit_seg_exp(&s, j0, cw.inv1) : 0;
#pragma unroll
            for (int q = 0; q < NB; q++) {
                w[q] = fm_fit_weight(fm_fit_model_value(&s, pw, f0, f1));
                f0 = FM_FIT_MUL(f0, cw.q0);
                f1 = FM_FIT_MUL(f1, cw.q1);
            }
        }
        fm_lm_init(&st, NP, role, p);
        while (!st.done) {
            warp_eval<NB>(&s, j0, j1, yv, w, st.trial, &sums);
            warp_sum<NP, NEWTON>(&sums);
            fm_lm_update(&st, &sums, NP, fm_fit_pass_tol(&s, pass), s.max_iter);
        }
        ok = st.have;
        iter += st.iter;
#pragma unroll
        for (int q = 0; q < FM_FIT_MAXP; q++)
            p[q] = pw[q] = st.p[q];
    }
    if (ok)
        fm_fit_result_set(&s, &st, iter, &r);
    if (lane == 0)
        res[k] = r;
}

typedef void (*fit_warp_fn)(fm_fit_setup, const float *, int, const unsigned char *,
                            fm_fit_result *);

template <int MODEL, int BG, int NB> static fit_warp_fn warp_kernel_nb(int mle)
{
    return mle ? fit_warp_kernel<MODEL, BG, 1, NB> : fit_warp_kernel<MODEL, BG, 0, NB>;
}

template <int MODEL, int BG> static fit_warp_fn warp_kernel_for(int mle, int nb)
{
    if (nb <= 4)
        return warp_kernel_nb<MODEL, BG, 4>(mle);
    if (nb <= 8)
        return warp_kernel_nb<MODEL, BG, 8>(mle);
    return warp_kernel_nb<MODEL, BG, WARP_MAX_NB>(mle);
}

/* The warp kernel for this setup, or NULL when it does not apply (IRF: the recursion runs
 * serially from bin 0; more than 32 x WARP_MAX_NB bins: too many registers). */
static fit_warp_fn warp_kernel(const fm_fit_setup *su)
{
    const int nb = (su->fit_end - su->fit_start + FM_FIT_SEGS - 1) / FM_FIT_SEGS;
    if (su->has_irf || nb > WARP_MAX_NB)
        return NULL;
    if (su->model == 1)
        return su->fit_bg ? warp_kernel_for<1, 1>(su->mle, nb) : warp_kernel_for<1, 0>(su->mle, nb);
    return su->fit_bg ? warp_kernel_for<2, 1>(su->mle, nb) : warp_kernel_for<2, 0>(su->mle, nb);
}

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
