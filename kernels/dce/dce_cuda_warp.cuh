/* CUDA DCE fit, one warp per voxel: the block's voxels run side by side, each warp synchronised by
 * __syncwarp and shuffles only; included by dce_cuda.cu. */
#pragma once

#include "dce_impl.h"

/* The fit settings every voxel shares (the kernels' by-value argument). */
typedef struct {
    double initial[FM_DCE_N_PARAMS];
    double tolerance;
    int tolerance_mode;
    int max_iterations;
    int restarts;
} nm_settings;

#define FM_DCE_WARPS_PER_BLOCK 4
#define FM_DCE_FULL_MASK 0xffffffffu
/* Blocks per SM the compiler must fit (__launch_bounds__): 5 gives 96 registers (20 warps per
 * SM, no spills with the Nelder-Mead simplex in registers, dce_cuda_nm.cuh); 6 gives 80 registers
 * (24 warps per SM, 60-76 bytes of spills), selectable as FM_DCE_CUDA_WARP_DENSE to compare
 * (with the earlier shared-memory Nelder-Mead, 2026-11-23: 1212 vs 1286 ms liver). ptxas -v for
 * sm_90, CUDA 13.0. */
#ifndef FM_DCE_WARP_MIN_BLOCKS /* overridable at build time, to compare on a device */
#define FM_DCE_WARP_MIN_BLOCKS 5
#endif
#ifndef FM_DCE_WARP_DENSE_MIN_BLOCKS
#define FM_DCE_WARP_DENSE_MIN_BLOCKS 6
#endif

/* Shared-memory layout of the warp kernel, computed once on the host. The run's tables are
 * copied into the block's shared memory (at N <= 512 they take <= 17 KiB), then each warp owns
 * its Nelder-Mead state, its FFT buffer and its tissue curve. */
typedef struct {
    int table_doubles; /* twiddles, spectrum, Ca, Cp, frame weights, frame indices, then (FFT
                          length 128) the per-lane table R128_LANE_ENTRIES x 32 complex */
    int lane_table;    /* offset of the per-lane table in doubles, 0 without it */
    int fft_doubles;  /* the FFT buffer, 2 N, which first holds the start's dot products */
    int warp_doubles; /* fft_doubles + n_pad (residual tree beyond 64) + n_times (+ N: the split
                         outputs, FFT length 128); the Nelder-Mead state is in registers */
} warp_layout;

/* FFT length 128 (the paper's 48 frames; Table 2's 64) has its own path (warp_cost_128): fill in
 * registers, two radix-2 stages per pass through a bank-conflict-free layout, the last stage's
 * sum half only. 18 complex per lane: spectrum at the lane's four frequencies, the twiddles of
 * its two kernel DFTs, then those of passes A (2), B (3), C (3) and D (2). */
#define R128_LANE_ENTRIES 18

static inline warp_layout warp_layout_of(const fm_dce_plan *p)
{
    warp_layout l;
    const int r128 = p->n_fft == 128;
    l.table_doubles = 4 * p->n_fft + 2 * p->n_grid + p->n_times + (p->n_times + 1) / 2;
    l.table_doubles += l.table_doubles & 1;
    l.lane_table = r128 ? l.table_doubles : 0;
    l.table_doubles += r128 ? R128_LANE_ENTRIES * 32 * 2 : 0;
    l.fft_doubles = fm_dce_fft_doubles(p);
    l.warp_doubles = l.fft_doubles + (p->n_pad > 64 ? p->n_pad : 0) + p->n_times;
    l.warp_doubles += r128 ? p->n_fft : 0;
    l.warp_doubles += l.warp_doubles & 1;
    return l;
}

/* Two radix-2 stages (pairs half and 2 half apart) on the 4 elements of group g, in registers:
 * the same four butterflies, with the same twiddles, as the CPU twin's stage loop runs on them
 * (fm_dce_butterfly), in an order that respects their dependencies. Halves the passes over
 * shared memory and the warp barriers between them. */
__device__ __forceinline__ void warp_fft_pair(double *y, const double *tw, int n, int log2h, int g)
{
    const int h = 1 << log2h, pos = g & (h - 1);
    const int i0 = pos | ((g >> log2h) << (log2h + 2));
    double2 *z = (double2 *)y;
    double2 a0 = z[i0], a1 = z[i0 + h], a2 = z[i0 + 2 * h], a3 = z[i0 + 3 * h];
    const int t1 = pos * (n >> (log2h + 1)), t2 = pos * (n >> (log2h + 2));
    const int t3 = (pos + h) * (n >> (log2h + 2));
    const double w1r = tw[2 * t1], w1i = -tw[2 * t1 + 1]; /* inverse: conjugate twiddles */
    fm_dce_bfly(&a0.x, &a0.y, &a1.x, &a1.y, w1r, w1i);
    fm_dce_bfly(&a2.x, &a2.y, &a3.x, &a3.y, w1r, w1i);
    fm_dce_bfly(&a0.x, &a0.y, &a2.x, &a2.y, tw[2 * t2], -tw[2 * t2 + 1]);
    fm_dce_bfly(&a1.x, &a1.y, &a3.x, &a3.y, tw[2 * t3], -tw[2 * t3 + 1]);
    z[i0] = a0;
    z[i0 + h] = a1;
    z[i0 + 2 * h] = a2;
    z[i0 + 3 * h] = a3;
}

/* Residuals of the inverse-transformed product (yr, yi, stride ys) and the CPU twin's pairwise
 * tree (pairs s apart, s halving), its levels of 32 and above per lane and the rest by shuffles.
 * The full sum ends in lane 0. One call site of the frame model, in a loop that is not unrolled,
 * keeps the kernel small (instruction cache). Up to n_pad 64 a lane sums its frames lane and
 * lane + 32 from 0.0: 0.0 + r is r exactly (a square is never -0.0), so that is the tree's
 * first level, the same bits. */
__device__ __forceinline__ double warp_residuals(const fm_dce_plan *p, const fm_dce_eval *e,
                                                 const double *yr, const double *yi, int ys,
                                                 double *r2, const double *c, int lane)
{
    const int wide = p->n_pad > 64;
    double acc = 0.0;
#pragma unroll 1
    for (int i = lane; i < p->n_pad; i += 32) {
        const double r = fm_dce_residual2(p, e, yr, yi, ys, c, i);
        if (wide)
            r2[i] = r;
        else
            acc += r;
    }
    int st = p->n_pad <= 32 ? p->n_pad / 2 : 16;
    if (wide) {
        __syncwarp();
        for (st = p->n_pad / 2; st > 32; st >>= 1) {
            for (int i = lane; i < st; i += 32)
                r2[i] += r2[i + st];
            __syncwarp();
        }
        acc = r2[lane] + r2[lane + 32];
        st = 16;
    }
    for (; st > 0; st >>= 1)
        acc += __shfl_down_sync(FM_DCE_FULL_MASK, acc, st);
    return acc;
}

/* Cost of the point set up in e, any FFT length up to FM_DCE_WARP_MAX_FFT: fill, inverse FFT,
 * residuals. */
__device__ __forceinline__ double warp_cost(const fm_dce_plan *p, const fm_dce_eval *e, double *y,
                                            double *r2, const double *c, int lane)
{
    const int n = p->n_fft;
    /* k = 0 is cheap (h0 came with the evaluation's scalars), so lane 0 takes it on top and
     * k = 1 .. N/2 fill whole rounds of 32 lanes (two at N = 128, not three). */
    if (lane == 0)
        fm_dce_fill(p, e, 0, y);
    for (int k = 1 + lane; k <= n / 2; k += 32)
        fm_dce_fill(p, e, k, y);
    __syncwarp();
    int log2h = 0;
    for (; log2h + 1 < p->log2_fft; log2h += 2) {
        for (int g = lane; g < n / 4; g += 32)
            warp_fft_pair(y, p->twiddle, n, log2h, g);
        __syncwarp();
    }
    if (log2h < p->log2_fft) { /* an odd stage count leaves the last stage, pairs n/2 apart */
        for (int b = lane; b < n / 2; b += 32)
            fm_dce_butterfly(y, p->twiddle, n, 1 << log2h, b, 1);
        __syncwarp();
    }
    return warp_residuals(p, e, y, y + 1, 2, r2, c, lane);
}

#include "dce_cuda_r128.cuh"

/* The start (dce_start.h) over a warp: the dot products of the voxel's curve c with the basis,
 * one per lane, into dots (shared). */
__device__ __forceinline__ void warp_start_dots(const fm_dce_plan *p, const double *c,
                                                double *dots, int lane)
{
    for (int b = lane; b < FM_DCE_START_BASES; b += 32)
        dots[b] = fm_dce_start_dot(p, c, b);
}

/* Then each lane's grid points and a reduction that keeps the largest gain and, among equal
 * gains, the first point: the CPU twin's loop picks the same one (fm_dce_start). Every lane
 * returns the same x0. */
__device__ __forceinline__ void warp_start_pick(const fm_dce_plan *p, const double *dots, int lane,
                                                double *x0)
{
    int best = FM_DCE_START_POINTS;
    double best_gain = -HUGE_VAL;
    for (int g = lane; g < FM_DCE_START_POINTS; g += 32) {
        double ka, kp;
        const double gain = fm_dce_start_gain(p, dots, g, &ka, &kp);
        if (gain > best_gain) {
            best_gain = gain;
            best = g;
        }
    }
    for (int d = 16; d > 0; d >>= 1) {
        const double other_gain = __shfl_down_sync(FM_DCE_FULL_MASK, best_gain, d);
        const int other = __shfl_down_sync(FM_DCE_FULL_MASK, best, d);
        if (other_gain > best_gain || (other_gain == best_gain && other < best)) {
            best_gain = other_gain;
            best = other;
        }
    }
    best = __shfl_sync(FM_DCE_FULL_MASK, best, 0);
    fm_dce_start_point(p, dots, best < FM_DCE_START_POINTS ? best : 0, x0); /* NaN gains: 0 */
}

#include "dce_cuda_nm.cuh"

/* Persistent warps: each takes the next voxel of the chunk from *next until none is left, so a
 * warp whose voxel converged early does not idle while its neighbours iterate. The Nelder-Mead
 * simplex is spread over the lanes (dce_cuda_nm.cuh, the same path as the CPU twin's fm_nm_feed);
 * every lane evaluates. */
template <int MIN_BLOCKS, bool R128>
__global__ void __launch_bounds__(FM_DCE_WARPS_PER_BLOCK * 32, MIN_BLOCKS)
    dce_fit_warp(fm_dce_plan p, const nm_settings nm, const warp_layout lay, const float *tissue,
                 int n_voxels, double *records, int *next)
{
    extern __shared__ double smem[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int n = p.n_fft, m = p.n_grid, nt = p.n_times;
    double *tw = smem, *spec = tw + 2 * n, *cag = spec + 2 * n, *cpg = cag + m, *fw = cpg + m;
    int *fj = (int *)(fw + nt);
    for (int i = threadIdx.x; i < 2 * n; i += blockDim.x) {
        tw[i] = p.twiddle[i];
        spec[i] = p.spectrum[i];
    }
    for (int i = threadIdx.x; i < m; i += blockDim.x) {
        cag[i] = p.ca_grid[i];
        cpg[i] = p.cp_grid[i];
    }
    for (int i = threadIdx.x; i < nt; i += blockDim.x) {
        fw[i] = p.frame_w[i];
        fj[i] = p.frame_j[i];
    }
    double2 *lt = (double2 *)(smem + lay.lane_table);
    if (R128)
        r128_lane_table(&p, lt, threadIdx.x, blockDim.x);
    __syncthreads(); /* the only block barrier: tables ready */
    p.twiddle = tw;
    p.spectrum = spec;
    p.ca_grid = cag;
    p.cp_grid = cpg;
    p.frame_w = fw;
    p.frame_j = fj;
    double *y = smem + lay.table_doubles + (size_t)warp * lay.warp_doubles;
    double *yo = y + lay.fft_doubles, *c = yo + (R128 ? n : 0), *r2 = c + nt;

    for (;;) {
        int v = 0;
        if (lane == 0)
            v = atomicAdd(next, 1);
        v = __shfl_sync(FM_DCE_FULL_MASK, v, 0);
        if (v >= n_voxels)
            break;
        const float *tv = tissue + (size_t)v * nt;
        for (int i = lane; i < nt; i += 32)
            c[i] = tv[i];
        __syncwarp();
        /* Every lane reads the whole curve: the same decision and tolerance everywhere. */
        const int valid = fm_dce_curve_finite(c, nt);
        fm_wnm s;
        if (valid) {
            const double tol = fm_dce_voxel_tolerance(nm.tolerance_mode, nm.tolerance, c, nt);
            double x0[FM_DCE_N_PARAMS];
            if (p.start_basis) {
                warp_start_dots(&p, c, y, lane);
                __syncwarp();
                warp_start_pick(&p, y, lane, x0);
            } else {
#pragma unroll
                for (int i = 0; i < FM_DCE_N_PARAMS; i++)
                    x0[i] = nm.initial[i];
            }
            wnm_begin(&s, lane, x0, nm.max_iterations, tol, nm.restarts);
            int more;
            do {
                double theta[FM_DCE_N_PARAMS];
                wnm_point(&s, theta);
                fm_dce_eval e;
                fm_dce_eval_setup(&p, theta, &e);
                __syncwarp(); /* the last evaluation's buffers are read */
                double cost = R128 ? warp_cost_128(&p, &e, lt, (double2 *)y, yo, r2, c, lane)
                                   : warp_cost(&p, &e, y, r2, c, lane);
                cost = __shfl_sync(FM_DCE_FULL_MASK, FM_DMUL(cost, e.penalty), 0);
                more = wnm_step(&s, cost);
            } while (more);
        }
        /* Lane i < 5 holds coordinate i of the best vertex, lane 0 its cost. */
        double rec = NAN, lo = p.lower[0], hi = p.upper[0];
#pragma unroll
        for (int k = 1; k < FM_DCE_N_PARAMS; k++) { /* constant indices: p stays in registers */
            lo = lane == k ? p.lower[k] : lo;
            hi = lane == k ? p.upper[k] : hi;
        }
        if (valid && lane < FM_DCE_N_PARAMS)
            rec = fm_dce_record_param(s.v, lo, hi);
        if (lane < FM_DCE_N_PARAMS)
            records[(size_t)lane * n_voxels + v] = rec;
        if (lane == 0) {
            double fit[FM_DCE_OUT_COUNT];
            if (valid)
                fm_dce_record_fit(&p, s.f, s.iterations, s.converged, c, fit);
            else
                fm_dce_record_invalid(fit);
            for (int o = FM_DCE_OUT_RMSE; o < FM_DCE_OUT_COUNT; o++)
                records[(size_t)o * n_voxels + v] = fit[o];
        }
        __syncwarp(); /* the curve is free for the next voxel */
    }
}
