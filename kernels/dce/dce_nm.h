/* Nelder-Mead (Lagarias et al. 1998, as fminsearch): a resumable minimiser for CPU and CUDA. */
#pragma once

#include <math.h>

#include "../fm_kernel.h"

/* FM_DMUL (the never-contracted product that keeps both backends bit-identical) comes from
 * dce_math.h, which includes this file where the minimiser's definitions belong. */
#ifndef FM_DMUL
#error "include dce_math.h, not dce_nm.h directly"
#endif

/* ---- Nelder-Mead after Lagarias, Reeds, Wright & Wright (1998), as MATLAB's fminsearch ---- */

#define FM_NM_MAX_DIM 5

/* The dimension inside the per-iteration steps. A translation unit that only ever minimises in
 * one dimension (the DCE fit: 5) defines FM_NM_FIXED_N before including this file, so that every
 * loop over vertices and coordinates unrolls with constant indices: in the GPU block kernel the
 * single bookkeeping thread then issues its shared-memory loads and divisions back to back
 * instead of in a run-time loop. The arithmetic and its order are unchanged. */
#ifdef FM_NM_FIXED_N
#define FM_NM_N(s) FM_NM_FIXED_N
#else
#define FM_NM_N(s) ((s)->n)
#endif

enum {
    FM_NM_INIT = 0,
    FM_NM_REFLECT,
    FM_NM_EXPAND,
    FM_NM_CONTRACT_OUT,
    FM_NM_CONTRACT_IN,
    FM_NM_SHRINK,
    FM_NM_DONE
};

/* A resumable minimiser: the caller evaluates the cost at x and feeds it back, so that on the
 * GPU a whole block evaluates while thread 0 alone keeps this state (the block kernel; the warp
 * kernels keep the same machine in registers, dce_cuda_nm.cuh). */
typedef struct {
    int n, phase, index;
    int iterations, evaluations, max_iterations, max_evaluations; /* max_evaluations 0: none */
    int converged;
    double tol_f;   /* the paper: stop when max - min of the vertex costs < tol_f */
    double tol_x;   /* < 0: off. >= 0: fminsearch's test (costs <= TolFun AND vertices <= TolX) */
    int restarts;   /* restarts left (0 after fm_nm_begin: exactly fminsearch) */
    double f_start; /* best cost when the current run (first or restart) began */
    int started;    /* runs begun: 1 after fm_nm_begin, +1 per restart */
    int pending;    /* 1: fm_nm_step left the centroid and reflection point to fm_nm_reflect_coord */
    double v[FM_NM_MAX_DIM + 1][FM_NM_MAX_DIM];
    double fv[FM_NM_MAX_DIM + 1];
    double xbar[FM_NM_MAX_DIM], xr[FM_NM_MAX_DIM];
    double fxr;
    double x[FM_NM_MAX_DIM]; /* the point to evaluate next */
} fm_nm_state;

/* fminsearch's rho, chi, psi, sigma and initial-simplex steps. */
#define FM_NM_RHO 1.0
#define FM_NM_CHI 2.0
#define FM_NM_PSI 0.5
#define FM_NM_SIGMA 0.5
#define FM_NM_USUAL_DELTA 0.05
#define FM_NM_ZERO_DELTA 0.00025

FM_HD static inline void fm_nm_begin(fm_nm_state *s, int n, const double *x0, int max_iterations,
                                     int max_evaluations, double tol_f, double tol_x)
{
    s->n = n;
    s->phase = FM_NM_INIT;
    s->index = 0;
    s->iterations = 0;
    s->evaluations = 0;
    s->max_iterations = max_iterations;
    s->max_evaluations = max_evaluations;
    s->converged = 0;
    s->tol_f = tol_f;
    s->tol_x = tol_x;
    s->restarts = 0;
    s->f_start = HUGE_VAL;
    s->started = 1;
    s->pending = 0;
    for (int i = 0; i < n; i++)
        s->v[0][i] = s->x[i] = x0[i];
}

/* x = vertex j of fminsearch's initial simplex around v[0] (j >= 1 moves component j - 1). */
FM_HD static inline void fm_nm_init_vertex(fm_nm_state *s, int j)
{
    for (int i = 0; i < FM_NM_N(s); i++)
        s->v[j][i] = s->v[0][i];
    const double y = s->v[0][j - 1];
    s->v[j][j - 1] = y != 0 ? FM_DMUL(1.0 + FM_NM_USUAL_DELTA, y) : FM_NM_ZERO_DELTA;
    for (int i = 0; i < FM_NM_N(s); i++)
        s->x[i] = s->v[j][i];
}

/* Restart after a converged run (s->restarts > 0): Nelder-Mead can stop on a collapsed simplex,
 * e.g. flattened against a bound (tau_a = 0) or degenerate after many shrinks, short of the
 * minimum (Lagarias et al. 1998 give no convergence guarantee in 5-D; restarting is the usual
 * remedy, as in fminsearch's own documentation). A fresh initial simplex around the best vertex
 * keeps its known cost (no re-evaluation) and continues the iteration count. The first run always
 * restarts; a later one only while it lowered the cost by more than tol_f and by more than
 * FM_NM_RESTART_GAIN of the cost: a smaller gain is below the 1e-6 relative cost resolution the
 * accuracy criteria use (issue 4), and on noisy curves a third or fourth run that confirms the
 * minimum costs ~100 iterations. Returns 1 when it restarted (s->x holds vertex 1 to evaluate). */
#define FM_NM_RESTART_GAIN 1e-6
FM_HD static inline int fm_nm_restart(fm_nm_state *s)
{
    if (s->restarts <= 0 ||
        (s->started > 1 && !(s->f_start - s->fv[0] > s->tol_f &&
                             s->f_start - s->fv[0] > FM_DMUL(FM_NM_RESTART_GAIN, s->f_start))))
        return 0;
    s->restarts--;
    s->started++;
    s->f_start = s->fv[0];
    s->phase = FM_NM_INIT;
    s->index = 1;
    fm_nm_init_vertex(s, 1);
    return 1;
}

/* MATLAB's eps(x): the spacing of doubles at |x|. */
FM_HD static inline double fm_nm_eps(double x)
{
    int e;
    x = fabs(x);
    if (x < 2.2250738585072014e-308)
        return 4.9406564584124654e-324;
    frexp(x, &e);
    return ldexp(1.0, e - 53);
}

/* MATLAB's sort is stable: insertion sort keeps equal costs in their order. A vertex already in
 * order (fv[a - 1] <= fv[a]) stays where it is, so it is not copied out and back: after a
 * reflection, expansion or contraction only the new worst vertex moves, and the GPU block kernel's
 * single bookkeeping thread skips 5 of the 6 vertex copies. Same permutation, same bits. */
FM_HD static inline void fm_nm_sort(fm_nm_state *s)
{
    /* The outer loop stays a loop: unrolled six-fold it only adds registers (dce_cuda.cu). */
#ifdef __CUDA_ARCH__
#pragma unroll 1
#endif
    for (int a = 1; a <= FM_NM_N(s); a++) {
        if (!(s->fv[a - 1] > s->fv[a]))
            continue;
        double f = s->fv[a], v[FM_NM_MAX_DIM];
        for (int i = 0; i < FM_NM_N(s); i++)
            v[i] = s->v[a][i];
        int b = a;
        while (b > 0 && s->fv[b - 1] > f) {
            s->fv[b] = s->fv[b - 1];
            for (int i = 0; i < FM_NM_N(s); i++)
                s->v[b][i] = s->v[b - 1][i];
            b--;
        }
        s->fv[b] = f;
        for (int i = 0; i < FM_NM_N(s); i++)
            s->v[b][i] = v[i];
    }
}

/* x = (1 + a) xbar - a v_worst, written as fminsearch writes each trial point. */
FM_HD static inline void fm_nm_line(fm_nm_state *s, double a, double *out)
{
    for (int i = 0; i < FM_NM_N(s); i++)
        out[i] = FM_DMUL(1.0 + a, s->xbar[i]) - FM_DMUL(a, s->v[FM_NM_N(s)][i]);
}

FM_HD static inline void fm_nm_accept(fm_nm_state *s, const double *x, double f)
{
    for (int i = 0; i < FM_NM_N(s); i++)
        s->v[FM_NM_N(s)][i] = x[i];
    s->fv[FM_NM_N(s)] = f;
}

/* Top of fminsearch's while loop: the limits, the stopping test, then the reflection point. */
FM_HD static inline int fm_nm_next_iteration(fm_nm_state *s)
{
    const int n = FM_NM_N(s);
    if (!(s->iterations < s->max_iterations &&
          (s->max_evaluations <= 0 || s->evaluations < s->max_evaluations))) {
        /* Stopped by the cap: whatever an earlier run met, the simplex that produced the
         * result did not meet the tolerance. */
        s->converged = 0;
        s->phase = FM_NM_DONE;
        return 0;
    }
    int stop;
    if (s->tol_x < 0) {
        stop = s->fv[n] - s->fv[0] < s->tol_f;
    } else {
        double df = 0, dx = 0, vmax = s->v[0][0];
        for (int j = 1; j <= n; j++)
            df = fmax(df, fabs(s->fv[0] - s->fv[j]));
        for (int j = 1; j <= n; j++)
            for (int i = 0; i < n; i++)
                dx = fmax(dx, fabs(s->v[j][i] - s->v[0][i]));
        for (int i = 1; i < n; i++)
            vmax = fmax(vmax, s->v[0][i]);
        stop = df <= fmax(s->tol_f, 10 * fm_nm_eps(s->fv[0])) &&
               dx <= fmax(s->tol_x, 10 * fm_nm_eps(vmax));
    }
    if (stop) {
        s->converged = 1;
        if (fm_nm_restart(s))
            return 1;
        s->phase = FM_NM_DONE;
        return 0;
    }
    /* The centroid and the reflection point are per coordinate (fm_nm_reflect_coord): the
     * caller computes them, the GPU warp one coordinate per lane. */
    s->pending = 1;
    s->phase = FM_NM_REFLECT;
    return 1;
}

/* Coordinate i of the centroid xbar (mean of the n best vertices, summed in vertex order then
 * divided, as fminsearch's sum(v,2)/n), of the reflection point xr = (1 + rho) xbar - rho v_worst
 * (fm_nm_line) and of the next point x = xr. The GPU warp kernels run this whole machine with the
 * simplex spread over the lanes (dce_cuda_nm.cuh), the same operations in the same order. */
FM_HD static inline void fm_nm_reflect_coord(fm_nm_state *s, int i)
{
    double sum = 0;
    for (int j = 0; j < FM_NM_N(s); j++)
        sum += s->v[j][i];
    s->xbar[i] = sum / FM_NM_N(s);
    s->xr[i] = FM_DMUL(1.0 + FM_NM_RHO, s->xbar[i]) - FM_DMUL(FM_NM_RHO, s->v[FM_NM_N(s)][i]);
    s->x[i] = s->xr[i];
}

FM_HD static inline int fm_nm_start_shrink(fm_nm_state *s)
{
    s->phase = FM_NM_SHRINK;
    s->index = 1;
    for (int i = 0; i < FM_NM_N(s); i++) {
        s->v[1][i] = s->v[0][i] + FM_DMUL(FM_NM_SIGMA, s->v[1][i] - s->v[0][i]);
        s->x[i] = s->v[1][i];
    }
    return 1;
}

FM_HD static inline int fm_nm_end_iteration(fm_nm_state *s)
{
    fm_nm_sort(s);
    s->iterations++;
    return fm_nm_next_iteration(s);
}

/* One step of the machine on f = cost(s->x); when it sets s->pending, the next point still needs
 * fm_nm_reflect_coord for every coordinate (fm_nm_feed does that). */
FM_HD static inline int fm_nm_step(fm_nm_state *s, double f)
{
    const int n = FM_NM_N(s);
    if (!(f == f))
        f = HUGE_VAL; /* a NaN cost ranks last instead of poisoning the comparisons */
    s->evaluations++;
    switch (s->phase) {
    case FM_NM_INIT:
        s->fv[s->index] = f;
        if (s->index < n) {
            s->index++;
            fm_nm_init_vertex(s, s->index);
            return 1;
        }
        fm_nm_sort(s);
        /* fminsearch counts the initial simplex as iteration 1; a restart's simplex counts one
         * more, so the iterations output and the cap cover all runs. */
        s->iterations++;
        return fm_nm_next_iteration(s);
    case FM_NM_REFLECT:
        s->fxr = f;
        if (f < s->fv[0]) {
            fm_nm_line(s, FM_NM_RHO * FM_NM_CHI, s->x);
            s->phase = FM_NM_EXPAND;
            return 1;
        }
        if (f < s->fv[n - 1]) {
            fm_nm_accept(s, s->xr, f);
            return fm_nm_end_iteration(s);
        }
        if (f < s->fv[n]) {
            fm_nm_line(s, FM_NM_PSI * FM_NM_RHO, s->x);
            s->phase = FM_NM_CONTRACT_OUT;
        } else {
            for (int i = 0; i < n; i++) /* (1 - psi) xbar + psi v_worst */
                s->x[i] = FM_DMUL(1.0 - FM_NM_PSI, s->xbar[i]) + FM_DMUL(FM_NM_PSI, s->v[n][i]);
            s->phase = FM_NM_CONTRACT_IN;
        }
        return 1;
    case FM_NM_EXPAND:
        if (f < s->fxr)
            fm_nm_accept(s, s->x, f);
        else
            fm_nm_accept(s, s->xr, s->fxr);
        return fm_nm_end_iteration(s);
    case FM_NM_CONTRACT_OUT:
        if (f <= s->fxr) {
            fm_nm_accept(s, s->x, f);
            return fm_nm_end_iteration(s);
        }
        return fm_nm_start_shrink(s);
    case FM_NM_CONTRACT_IN:
        if (f < s->fv[n]) {
            fm_nm_accept(s, s->x, f);
            return fm_nm_end_iteration(s);
        }
        return fm_nm_start_shrink(s);
    case FM_NM_SHRINK:
        s->fv[s->index] = f;
        if (s->index < n) {
            s->index++;
            const int j = s->index;
            for (int i = 0; i < n; i++) {
                s->v[j][i] = s->v[0][i] + FM_DMUL(FM_NM_SIGMA, s->v[j][i] - s->v[0][i]);
                s->x[i] = s->v[j][i];
            }
            return 1;
        }
        return fm_nm_end_iteration(s);
    default:
        return 0;
    }
}

/* Feeds f = cost(s->x). Returns 1 when s->x holds the next point to evaluate, 0 when done. */
FM_HD static inline int fm_nm_feed(fm_nm_state *s, double f)
{
    const int more = fm_nm_step(s, f);
    if (s->pending) {
        for (int i = 0; i < FM_NM_N(s); i++)
            fm_nm_reflect_coord(s, i);
        s->pending = 0;
    }
    return more;
}
