/* Nelder-Mead for the DCE warp kernels with the simplex spread over the warp's lanes, in
 * registers: the same machine as fm_nm_step (dce_nm.h), the same bits; included by
 * dce_cuda_warp.cuh. */
#pragma once

/* Why: with the state in shared memory and one lane running fm_nm_step, the bookkeeping was ~37 %
 * of the warp kernel's samples (Nsight Compute, 2026-11-23): chains of dependent shared loads on
 * one lane (the sort moving whole vertices, the trial points coordinate by coordinate) while the
 * other 31 lanes waited, and unrolled bookkeeping made the kernel large enough to miss the
 * instruction cache (ptxas for sm_90, CUDA 13.0: 7104 instructions in the Nt-48 kernel before,
 * 3984 after). Here the 6 x 5 = 30 simplex values live one per lane: lane L holds coordinate
 * i = L % 5 of vertex j = L / 5 (lanes 30 and 31 hold nothing that is read), with the cost of its
 * vertex; every lane keeps the centroid and the next point at its coordinate i (the worst vertex
 * and the reflection point are fetched or recomputed where needed, which saves registers); the
 * control state (phase, counters, tolerance) is the same on every lane, so every decision is
 * warp-uniform. Each value is computed by the same operations, in the same order, as fm_nm_step
 * computes it (the sum over vertices for the centroid included), and the sort is the same stable
 * permutation, so the path and the bits equal the CPU twin's. */

#ifndef FM_WNM_EMULATE
#define FM_WNM_DEV __device__ __forceinline__
FM_WNM_DEV double fm_wshfl(double x, int src)
{
    return __shfl_sync(0xffffffffu, x, src);
}
FM_WNM_DEV unsigned fm_wballot(int pred)
{
    return __ballot_sync(0xffffffffu, pred);
}
FM_WNM_DEV int fm_wpopc(unsigned m)
{
    return __popc(m);
}
#endif

#define WNM_N 5                      /* the DCE fit's dimension, FM_DCE_N_PARAMS */
#define WNM_VERTEX_LANES 0x01084210u /* lanes 0, 5, 10, 15, 20: coordinate 0 of vertices 0-4 */

typedef struct {
    int j, i;    /* the lane's vertex and coordinate (j = 6 on lanes 30, 31: unused) */
    double v;    /* v[j][i] */
    double f;    /* fv[j] */
    double xbar; /* centroid at coordinate i */
    double x;    /* the next point to evaluate, coordinate i */
    double fxr, f_start, tol;
    int phase, index, iterations, max_iterations, restarts, started, converged;
} fm_wnm;

/* x = vertex j of fminsearch's initial simplex around v[0] (fm_nm_init_vertex). */
FM_WNM_DEV void wnm_init_vertex(fm_wnm *s, int j)
{
    const double v0 = fm_wshfl(s->v, s->i);
    const double val =
        s->i == j - 1 ? (v0 != 0 ? FM_DMUL(1.0 + FM_NM_USUAL_DELTA, v0) : FM_NM_ZERO_DELTA) : v0;
    if (s->j == j)
        s->v = val;
    s->x = val;
}

/* fm_nm_begin, restarts as the caller sets them. x0: the start point (every lane). */
FM_WNM_DEV void wnm_begin(fm_wnm *s, int lane, const double *x0, int max_iterations, double tol,
                          int restarts)
{
    s->j = lane / WNM_N;
    s->i = lane - WNM_N * s->j;
    double x = x0[0];
#pragma unroll
    for (int k = 1; k < WNM_N; k++)
        x = s->i == k ? x0[k] : x;
    s->v = s->x = x;
    s->f = s->xbar = s->fxr = 0;
    s->tol = tol;
    s->f_start = HUGE_VAL;
    s->phase = FM_NM_INIT;
    s->index = 0;
    s->iterations = 0;
    s->max_iterations = max_iterations;
    s->restarts = restarts;
    s->started = 1;
    s->converged = 0;
}

/* The point to evaluate, on every lane (coordinate k lives on lane k). */
FM_WNM_DEV void wnm_point(const fm_wnm *s, double *theta)
{
#pragma unroll
    for (int k = 0; k < WNM_N; k++)
        theta[k] = fm_wshfl(s->x, k);
}

/* Every vertex to slot rank, by the stable order of the costs: slot r takes the vertex with
 * #{costs below} + #{equal costs before it} = r, which is the permutation of fm_nm_sort's
 * insertion sort (stable, strict comparisons; costs are never NaN). After the initial simplex
 * and a shrink, where any vertex may move. */
FM_WNM_DEV void wnm_sort_all(fm_wnm *s)
{
    double f[WNM_N + 1];
#pragma unroll
    for (int k = 0; k <= WNM_N; k++)
        f[k] = fm_wshfl(s->f, WNM_N * k);
    int src = s->j;
    double fs = s->f;
#pragma unroll
    for (int k = 0; k <= WNM_N; k++) {
        int rank = 0;
#pragma unroll
        for (int m = 0; m <= WNM_N; m++)
            rank += m < k ? f[m] <= f[k] : f[m] < f[k];
        if (rank == s->j) {
            src = k;
            fs = f[k];
        }
    }
    s->v = fm_wshfl(s->v, WNM_N * src + s->i);
    s->f = fs;
}

/* After a reflection, expansion or contraction only the worst vertex changed and vertices 0..n-1
 * are still in order: the insertion sort puts it after every cost <= its own. */
FM_WNM_DEV void wnm_sort_new_worst(fm_wnm *s, double fnew)
{
    const int b = fm_wpopc(fm_wballot(s->f <= fnew) & WNM_VERTEX_LANES);
    const int src = s->j < b ? s->j : (s->j == b ? WNM_N : (s->j <= WNM_N ? s->j - 1 : s->j));
    s->v = fm_wshfl(s->v, WNM_N * src + s->i);
    s->f = fm_wshfl(s->f, WNM_N * src + s->i);
}

/* fm_nm_restart: a fresh initial simplex around the best vertex while runs still gain. */
FM_WNM_DEV int wnm_restart(fm_wnm *s, double f0)
{
    if (s->restarts <= 0 ||
        (s->started > 1 &&
         !(s->f_start - f0 > s->tol && s->f_start - f0 > FM_DMUL(FM_NM_RESTART_GAIN, s->f_start))))
        return 0;
    s->restarts--;
    s->started++;
    s->f_start = f0;
    s->phase = FM_NM_INIT;
    s->index = 1;
    wnm_init_vertex(s, 1);
    return 1;
}

/* v[n][i], the worst vertex at the lane's coordinate: unchanged from the centroid to the accept,
 * so it is fetched again where needed instead of held across evaluations. */
FM_WNM_DEV double wnm_worst(const fm_wnm *s)
{
    return fm_wshfl(s->v, WNM_N * WNM_N + s->i);
}

/* The reflection point xr (fm_nm_reflect_coord), recomputed from xbar with the same bits. */
FM_WNM_DEV double wnm_reflection(const fm_wnm *s, double vw)
{
    return FM_DMUL(1.0 + FM_NM_RHO, s->xbar) - FM_DMUL(FM_NM_RHO, vw);
}

/* fm_nm_next_iteration (tol_x off, no evaluation cap) with fm_nm_reflect_coord: the centroid
 * sums the n best vertices in vertex order, then divides, as fminsearch's sum(v,2)/n. */
FM_WNM_DEV int wnm_next_iteration(fm_wnm *s)
{
    if (!(s->iterations < s->max_iterations)) {
        s->converged = 0;
        s->phase = FM_NM_DONE;
        return 0;
    }
    const double f0 = fm_wshfl(s->f, 0), fn = fm_wshfl(s->f, WNM_N * WNM_N);
    if (fn - f0 < s->tol) {
        s->converged = 1;
        if (wnm_restart(s, f0))
            return 1;
        s->phase = FM_NM_DONE;
        return 0;
    }
    double sum = 0;
#pragma unroll
    for (int k = 0; k < WNM_N; k++)
        sum += fm_wshfl(s->v, WNM_N * k + s->i);
    s->xbar = sum / WNM_N;
    s->x = wnm_reflection(s, wnm_worst(s));
    s->phase = FM_NM_REFLECT;
    return 1;
}

/* fm_nm_start_shrink: every vertex but the best moves halfway towards it at once (each depends
 * only on itself and v[0], which the shrink leaves alone); they are evaluated in order. */
FM_WNM_DEV int wnm_start_shrink(fm_wnm *s)
{
    const double v0 = fm_wshfl(s->v, s->i);
    if (s->j >= 1 && s->j <= WNM_N)
        s->v = v0 + FM_DMUL(FM_NM_SIGMA, s->v - v0);
    s->phase = FM_NM_SHRINK;
    s->index = 1;
    s->x = fm_wshfl(s->v, WNM_N + s->i);
    return 1;
}

/* fm_nm_step on f = cost(x), the same value on every lane. Returns 1 while points remain. Written
 * with one tail (sort, count, next iteration) so that the hot loop's code stays small. */
FM_WNM_DEV int wnm_step(fm_wnm *s, double f)
{
    if (!(f == f))
        f = HUGE_VAL; /* a NaN cost ranks last instead of poisoning the comparisons */
    const int ph = s->phase;
    if (ph == FM_NM_INIT || ph == FM_NM_SHRINK) {
        if (s->j == s->index)
            s->f = f;
        if (s->index < WNM_N) {
            s->index++;
            if (ph == FM_NM_INIT)
                wnm_init_vertex(s, s->index);
            else
                s->x = fm_wshfl(s->v, WNM_N * s->index + s->i);
            return 1;
        }
        /* fminsearch counts the initial simplex as iteration 1 (a restart's as one more). */
        wnm_sort_all(s);
    } else {
        int accept;
        double xa = s->x, fa = f;
        /* Fetched together (independent shuffles overlap), used as the branches need them. */
        const double vw = wnm_worst(s), f0 = fm_wshfl(s->f, 0);
        const double fl = fm_wshfl(s->f, WNM_N * (WNM_N - 1)), fn = fm_wshfl(s->f, WNM_N * WNM_N);
        if (ph == FM_NM_REFLECT) {
            s->fxr = f;
            if (f < f0) {
                s->x = FM_DMUL(1.0 + FM_NM_RHO * FM_NM_CHI, s->xbar) -
                       FM_DMUL(FM_NM_RHO * FM_NM_CHI, vw);
                s->phase = FM_NM_EXPAND;
                return 1;
            }
            if (!(f < fl)) {
                if (f < fn) {
                    s->x = FM_DMUL(1.0 + FM_NM_PSI * FM_NM_RHO, s->xbar) -
                           FM_DMUL(FM_NM_PSI * FM_NM_RHO, vw);
                    s->phase = FM_NM_CONTRACT_OUT;
                } else { /* (1 - psi) xbar + psi v_worst */
                    s->x = FM_DMUL(1.0 - FM_NM_PSI, s->xbar) + FM_DMUL(FM_NM_PSI, vw);
                    s->phase = FM_NM_CONTRACT_IN;
                }
                return 1;
            }
            accept = 1; /* between the best and the second worst: take the reflection */
        } else if (ph == FM_NM_EXPAND) {
            accept = 1;
            if (!(f < s->fxr)) {
                xa = wnm_reflection(s, vw);
                fa = s->fxr;
            }
        } else if (ph == FM_NM_CONTRACT_OUT) {
            accept = f <= s->fxr;
        } else if (ph == FM_NM_CONTRACT_IN) {
            accept = f < fn;
        } else {
            return 0;
        }
        if (!accept)
            return wnm_start_shrink(s);
        if (s->j == WNM_N) {
            s->v = xa;
            s->f = fa;
        }
        wnm_sort_new_worst(s, fa);
    }
    s->iterations++;
    return wnm_next_iteration(s);
}
