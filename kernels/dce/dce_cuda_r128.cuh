/* CUDA DCE cost at FFT length 128 (the paper's 48 frames) in one warp: fill in registers, two
 * radix-2 stages per pass through a bank-conflict-free layout; included by dce_cuda_warp.cuh. */
#pragma once

/* The generic warp path (warp_cost) spent most of its time waiting on shared memory (Nsight
 * Compute, 2026-11-23: short-scoreboard stalls 42 %, 868 shared wavefronts per evaluation where
 * 346 were ideal): the fill's bit-reversed stores hit 16-way bank conflicts and the FFT passes'
 * 16-byte accesses 2-4-way ones. Here each lane holds positions p = 4 lane + c of the bit-reversed
 * input, so it computes those four products S H itself (no fill store), and the buffer keeps
 * position p at r128_slot(p). The butterflies, their twiddles and their operand order are the
 * CPU twin's (fm_dce_butterfly), so the bits are the same; only where values live differs. */

/* Home of position p: p XOR a 3-bit function of bits 3 and 4. For passes A (p = 4 g + c),
 * B (p = (g & 3) | c << 2 | (g >> 2) << 4), C (p = (g & 15) | c << 4 | (g >> 4) << 6) and D
 * (p = g + 32 c), every quarter-warp's eight 16-byte accesses fall in eight distinct bank groups
 * (checked exhaustively for all lanes and c). */
__device__ __forceinline__ int r128_slot(int p)
{
    return p ^ (((p >> 3) & 1) | (((p >> 4) & 1) * 6));
}

__device__ __forceinline__ int r128_rev5(int lane)
{
    return (int)(__brev((unsigned)lane) >> 27);
}

/* Per-lane constants, entry j of lane l at lt[32 j + l] (consecutive lanes, no conflicts). With
 * r = bitrev5(l), lane l's positions 4 l + c hold frequencies k = r, r + 64, r + 32, r + 96
 * (bit reversal of 7 bits): entries 0-3 are S there; 4-7 the twiddles w^k, w^{Mk} of the lane's
 * two kernel DFTs, at k1 = r (64 for r = 0, whose H(0) is h0) and k2 = r + 32; 8-17 the stage
 * twiddles of passes A-D, the indices warp_fft_pair and fm_dce_butterfly use at these positions. */
static __device__ void r128_lane_table(const fm_dce_plan *p, double2 *lt, int tid, int nthreads)
{
    for (int idx = tid; idx < R128_LANE_ENTRIES * 32; idx += nthreads) {
        const int lane = idx & 31, j = idx >> 5, r = r128_rev5(lane);
        const int k1 = r == 0 ? 64 : r, k2 = r + 32;
        const int a = lane & 3, b = lane & 15;
        const double *src = j < 4 ? p->spectrum : p->twiddle;
        const int t[R128_LANE_ENTRIES] = {r,       r + 64,           r + 32, r + 96,
                                          k1,      (p->n_grid * k1) & 127,
                                          k2,      (p->n_grid * k2) & 127,
                                          0,       32,               /* A: pos 0 */
                                          a * 16,  a * 8,  (a + 4) * 8,   /* B: pos = g & 3 */
                                          b * 4,   b * 2,  (b + 16) * 2,  /* C: pos = g & 15 */
                                          lane,    lane + 32};            /* D: b = g, g + 32 */
        lt[idx] = make_double2(src[2 * t[j]], src[2 * t[j] + 1]);
    }
}

/* Stages log2h and log2h + 1 on four values in registers, as warp_fft_pair: inverse, so the
 * twiddles are conjugated. */
__device__ __forceinline__ void r128_pair(double2 &a0, double2 &a1, double2 &a2, double2 &a3,
                                          double2 w1, double2 w2, double2 w3)
{
    fm_dce_bfly(&a0.x, &a0.y, &a1.x, &a1.y, w1.x, -w1.y);
    fm_dce_bfly(&a2.x, &a2.y, &a3.x, &a3.y, w1.x, -w1.y);
    fm_dce_bfly(&a0.x, &a0.y, &a2.x, &a2.y, w2.x, -w2.y);
    fm_dce_bfly(&a1.x, &a1.y, &a3.x, &a3.y, w3.x, -w3.y);
}

/* One shared-memory pass: positions i0 + h c (c = 0..3) through registers. */
__device__ __forceinline__ void r128_pass(double2 *z, const double2 *mine, int i0, int h, int w)
{
    const int s0 = r128_slot(i0), s1 = r128_slot(i0 + h), s2 = r128_slot(i0 + 2 * h);
    const int s3 = r128_slot(i0 + 3 * h);
    double2 a0 = z[s0], a1 = z[s1], a2 = z[s2], a3 = z[s3];
    r128_pair(a0, a1, a2, a3, mine[32 * w], mine[32 * (w + 1)], mine[32 * (w + 2)]);
    z[s0] = a0;
    z[s1] = a1;
    z[s2] = a2;
    z[s3] = a3;
}

/* Cost of the point set up in e at FFT length 128: the CPU twin's fill (fm_dce_fill), inverse FFT
 * and residuals, the model on the grid ending in yo (re[64], then im[64]). */
__device__ __forceinline__ double warp_cost_128(const fm_dce_plan *p, const fm_dce_eval *e,
                                                const double2 *lt, double2 *z, double *yo,
                                                double *r2, const double *c, int lane)
{
    const double2 *mine = lt + lane;
    const int r = r128_rev5(lane);
    /* The lane's two kernel DFTs; its partner r' = 32 - r holds H(32 - r) and H(64 - r), which
     * the Hermitian halves at k = r + 96 and r + 64 need (fm_dce_fill's N - k writes). */
    double2 h1, h2, q1, q2;
    {
        const double2 c1 = mine[32 * 4], m1 = mine[32 * 5], c2 = mine[32 * 6], m2 = mine[32 * 7];
        fm_dce_kernel_dft(e, c1.x, c1.y, m1.x, m1.y, &h1.x, &h1.y);
        fm_dce_kernel_dft(e, c2.x, c2.y, m2.x, m2.y, &h2.x, &h2.y);
    }
    const int partner = r128_rev5((32 - r) & 31);
    q1.x = __shfl_sync(FM_DCE_FULL_MASK, h1.x, partner);
    q1.y = __shfl_sync(FM_DCE_FULL_MASK, h1.y, partner);
    q2.x = __shfl_sync(FM_DCE_FULL_MASK, h2.x, partner);
    q2.y = __shfl_sync(FM_DCE_FULL_MASK, h2.y, partner);
    double2 a0, a1, a2, a3;
    const double2 s0 = mine[0], s1 = mine[32], s2 = mine[64], s3 = mine[96];
    if (r == 0) { /* k = 0 (h0), k = 64 = N/2 (no partner), k = 96 from its own H(32) */
        fm_dce_zmul(s0.x, s0.y, e->h0, 0.0, &a0.x, &a0.y);
        fm_dce_zmul(s1.x, s1.y, h1.x, h1.y, &a1.x, &a1.y);
        q1 = h2;
    } else {
        fm_dce_zmul(s0.x, s0.y, h1.x, h1.y, &a0.x, &a0.y);
        fm_dce_zmul_conj(s1.x, s1.y, q2.x, q2.y, &a1.x, &a1.y);
    }
    fm_dce_zmul(s2.x, s2.y, h2.x, h2.y, &a2.x, &a2.y);
    fm_dce_zmul_conj(s3.x, s3.y, q1.x, q1.y, &a3.x, &a3.y);
    /* Pass A (stages 0, 1) straight from the fill, in registers. */
    r128_pair(a0, a1, a2, a3, mine[32 * 8], mine[32 * 8], mine[32 * 9]);
    z[r128_slot(4 * lane)] = a0;
    z[r128_slot(4 * lane + 1)] = a1;
    z[r128_slot(4 * lane + 2)] = a2;
    z[r128_slot(4 * lane + 3)] = a3;
    __syncwarp();
    r128_pass(z, mine, (lane & 3) | ((lane >> 2) << 4), 4, 10); /* B: stages 2, 3 */
    __syncwarp();
    r128_pass(z, mine, (lane & 15) | ((lane >> 4) << 6), 16, 13); /* C: stages 4, 5 */
    __syncwarp();
    /* D: stage 6, pairs b and b + 64; only the sum half u + w x (outputs b < 64) is needed. */
    for (int h = 0; h < 2; h++) {
        const int b = lane + 32 * h;
        const double2 u = z[r128_slot(b)], x = z[r128_slot(b + 64)], w = mine[32 * (16 + h)];
        fm_dce_bfly_sum(u.x, u.y, x.x, x.y, w.x, -w.y, &yo[b], &yo[64 + b]);
    }
    __syncwarp();
    return warp_residuals(p, e, yo, yo + 64, 1, r2, c, lane);
}
