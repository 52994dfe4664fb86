/* Per-pixel math of the iterative FLIM fits (LSM, MLE, GA), written once for the CPU twin and the
 * CUDA kernels: decay model with IRF convolution, Jacobian, weighted normal equations in the
 * canonical summation order, Poisson deviance (Wu et al. 2016, sec. 2.2). */
#pragma once

#include <math.h>
#include <stddef.h>

#include "flim_fit_det.h"
#include "flim_impl.h"

/* nvcc: inline everything, so that the thread kernels' template constants (model order,
 * background, cost, IRF) reach every loop and the per-pixel state stays in registers. */
#ifdef __CUDACC__
#define FM_FIT_HD FM_HD __attribute__((always_inline))
#else
#define FM_FIT_HD FM_HD
#endif

#define FM_FIT_MAXP 5         /* A, fD, tauF, tauD, b */
#define FM_FIT_NH 15          /* packed upper triangle of a 5 x 5 matrix */
#define FM_FIT_TAU_MIN 0.01   /* ns: the brief's lower bound, keeps exp(-t/tau) finite */
#define FM_FIT_TAU_MAX 1000.0 /* ns: far beyond any TCSPC window */
/* Without an IRF the fit range is cut into FM_FIT_SEGS segments of consecutive bins, summed each
 * on its own and then pairwise ((s0 + s1) + (s2 + s3)) + ...: the order of a group of
 * FM_FIT_SEGS lanes whose lane l holds segment bitrev(l) and reduces with __shfl_xor_sync, which
 * the CPU twin reproduces, so both give the same bits. Each segment starts its exp recursion with
 * an exp of its own. The CUDA group kernel fits 32 / FM_FIT_SEGS pixels per warp
 * (flim_fit_kernels.cuh); 8 segments (4 pixels per warp) share each reduction and LM step among
 * 4 pixels, where 32 (the warp per pixel before) paid them per pixel. */
#define FM_FIT_SEGS 8
#define FM_FIT_SEG_LEVELS 3 /* log2(FM_FIT_SEGS) */
typedef char fm_fit_segs_check[(1 << FM_FIT_SEG_LEVELS) == FM_FIT_SEGS ? 1 : -1];

#define M_ FM_FIT_MUL /* every product below that feeds a sum (flim_fit_det.h) */

enum { FM_ROLE_AMP = 0, FM_ROLE_FRAC, FM_ROLE_TAU, FM_ROLE_BG };

/* Everything a pixel fit needs from the job, flattened so that it travels to the device. */
typedef struct {
    int fit_start, fit_end; /* bins [start, end); the IRF recursion runs from bin 0 */
    int model;              /* 1 mono, 2 bi */
    int fit_bg;
    int mle;      /* 0: Neyman-weighted least squares; 1: Poisson deviance (Fisher scoring) */
    int n_params; /* LM parameters per pixel: 2 or 4, + 1 with background */
    int n_lin;    /* GA linear amplitudes per pixel: model (+ 1 with background) */
    int has_irf;
    int max_iter;
    double dt, tol, min_photons;
    double tau0[2]; /* start: mono [0]; bi tauF = [0], tauD = [1] */
    double f0;
} fm_fit_setup;

/* Normal-equation sums of one evaluation: J^T W J (packed), J^T W r, Newton's second-order part
 * of the Hessian (packed; zero unless fm_fit_newton), the cost and sum(model). */
typedef struct {
    double h[FM_FIT_NH], g[FM_FIT_MAXP], h2[FM_FIT_NH], cost, msum;
} fm_fit_sums;
#define FM_FIT_NSUM (2 * FM_FIT_NH + FM_FIT_MAXP + 2)

/* Levenberg-Marquardt state: the accepted point with its sums and the next point to try. */
typedef struct {
    double p[FM_FIT_MAXP], trial[FM_FIT_MAXP], h[FM_FIT_NH], g[FM_FIT_MAXP], h2[FM_FIT_NH];
    double cost, lambda, nu, pred; /* pred: decrease the model predicts for the trial */
    int n, iter, done, converged, have, newton; /* newton: the trial came from h + h2 */
    unsigned char role[FM_FIT_MAXP];
} fm_lm_state;

/* One pixel's answer; p is [A, tau, b] (mono) or [A, fD, tauF, tauD, b] (bi) for every method. */
typedef struct {
    double p[FM_FIT_MAXP];
    double cost, chi2, photons;
    int iter, converged, fitted, used;
} fm_fit_result;

FM_FIT_HD static inline int fm_fit_hidx(int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    return a * FM_FIT_MAXP - a * (a - 1) / 2 + (b - a);
}

FM_FIT_HD static inline void fm_fit_sums_zero(fm_fit_sums *s)
{
    for (int k = 0; k < FM_FIT_NH; k++)
        s->h[k] = s->h2[k] = 0;
    for (int k = 0; k < FM_FIT_MAXP; k++)
        s->g[k] = 0;
    s->cost = s->msum = 0;
}

/* Lifetime of basis component 0 (tauD, or the mono tau) and 1 (tauF) from LM parameters. */
FM_FIT_HD static inline void fm_fit_taus(const fm_fit_setup *su, const double *p, double *tau0,
                                         double *tau1)
{
    *tau0 = su->model == 1 ? p[1] : p[3];
    *tau1 = su->model == 1 ? p[1] : p[2];
}

/* No IRF: exp(-t/tau) at the bin centre t from the fit start, and its tau derivative. */
FM_FIT_HD static inline void fm_fit_basis_direct(const fm_fit_setup *su, int bin, double tau,
                                                 double *e, double *d)
{
    const double t = FM_FIT_MUL(bin - su->fit_start + 0.5, su->dt);
    *e = fm_fit_exp(-(t / tau));
    *d = FM_FIT_MUL(*e, t) / FM_FIT_MUL(tau, tau);
}

/* Second tau derivative of exp(-t/tau) from the first, d = e t / tau^2: d (t / tau^2 - 2 / tau). */
FM_FIT_HD static inline double fm_fit_basis_dd(const fm_fit_setup *su, int bin, double tau,
                                               double d)
{
    const double t = FM_FIT_MUL(bin - su->fit_start + 0.5, su->dt);
    return FM_FIT_MUL(d, t / FM_FIT_MUL(tau, tau) - 2 / tau);
}

#include "flim_fit_irf.h"

/* Model value of a bin at parameters p from its basis values (weights of the second LSM pass). */
FM_FIT_HD static inline double fm_fit_model_value(const fm_fit_setup *su, const double *p,
                                                  double e0, double e1)
{
    double m = su->model == 1 ? M_(p[0], e0) : M_(p[0], M_(p[1], e0) + M_(1 - p[1], e1));
    return su->fit_bg ? m + p[su->model == 1 ? 2 : 4] : m;
}

/* LSM weight of a bin: 1/max(ref, 1), where ref is the count (Neyman, first pass) or the first
 * pass's model (second pass): Neyman weights correlate with the noise and bias tau low by ~7 %
 * at 2000 photons, weights from a fitted model do not (the reweighting that Laurence & Chromy
 * 2010 discuss). */
/* Whether a fit adds Newton's second-order terms (fm_fit_accumulate): bi-exponential LSM without
 * an IRF (whose basis comes with its first tau derivative only). Mono LSM converges fast under
 * Gauss-Newton already (9 evaluations per 1500-photon pixel, 12 with the terms); for MLE the
 * terms made the H100 run 30 % slower (mle bi 20.8 -> 26.8 ms, bench/RESULTS.md) and no accuracy
 * test needs them, so MLE keeps Fisher scoring. */
FM_FIT_HD static inline int fm_fit_newton(const fm_fit_setup *su)
{
    return !su->has_irf && su->model == 2 && !su->mle;
}

FM_FIT_HD static inline double fm_fit_weight(double ref)
{
    return 1.0 / (ref > 1 ? ref : 1.0);
}

/* One bin's model, Jacobian row and weighted contributions; e, d, dd are the basis and its first
 * and second tau derivatives, w the LSM weight (fm_fit_weight). MLE: Fisher scoring on the
 * Poisson likelihood (Laurence & Chromy 2010): the score is sum (y - m)/m J and the information
 * sum J J^T / m, i.e. least squares with weights 1/m re-evaluated at each point; the cost is the
 * deviance 2 sum [m - y + y ln(y/m)]. */
FM_FIT_HD static inline void fm_fit_accumulate(const fm_fit_setup *su, const double *p, double e0,
                                               double d0, double dd0, double e1, double d1,
                                               double dd1, double y, double w, fm_fit_sums *s)
{
    /* F: the Jacobian row without its per-pixel factors c (fm_fit_finish): J[a] = c[a] F[a],
     * mono c = (1, A), bi c = (1, A, A (1 - fD), A fD), so that the bins sum w F[a] F[b] and
     * w r F[a] and fm_fit_finish scales h and g once per evaluation (3 multiplications fewer
     * per bin for bi, 1 for mono). */
    double F[FM_FIT_MAXP], m;
    int nb;
    if (su->model == 1) {
        F[0] = e0;
        F[1] = d0;
        m = M_(p[0], e0);
        nb = 2;
    } else {
        const double f = p[1], shape = M_(f, e0) + M_(1 - f, e1);
        F[0] = shape;
        F[1] = e0 - e1;
        F[2] = d1;
        F[3] = d0;
        m = M_(p[0], shape);
        nb = 4;
    }
    if (su->fit_bg) {
        F[nb] = 1;
        m = m + p[nb];
    }
    s->msum = s->msum + m;
    const double r = y - m;
    if (!su->mle) {
        s->cost = s->cost + M_(M_(w, r), r);
    } else if (m > 0) {
        w = 1.0 / m;
        const double dev = (m - y) + (y > 0 ? M_(y, fm_fit_log(M_(y, w))) : 0.0);
        s->cost = s->cost + M_(2.0, dev);
    } else {
        w = 0; /* an empty bin where the model is zero (before the IRF starts) costs nothing */
        if (y > 0)
            s->cost = HUGE_VAL; /* a zero model under counts: impossible, reject */
    }
    const double wr = M_(w, r);
    const int n = su->n_params;
    FM_FIT_UNROLL
    for (int a = 0; a < n; a++) {
        const double wa = M_(w, F[a]);
        s->g[a] = s->g[a] + M_(F[a], wr);
        FM_FIT_UNROLL
        for (int b = a; b < n; b++)
            s->h[fm_fit_hidx(a, b)] = s->h[fm_fit_hidx(a, b)] + M_(wa, F[b]);
    }
    if (!fm_fit_newton(su))
        return;
    /* Newton's Hessian is h + h2, h2 = -w r d2m/dpa dpb. Gauss-Newton alone converges
     * only linearly on bi-exponential decays, whose fD-tauF direction is nearly flat: on
     * 20000-photon pixels it stops at tolerance 1e-6 up to 3e-3 from the minimum (scipy's
     * curve_fit agrees with the Newton answer to 1e-5); fm_lm_solve falls back to Gauss-Newton
     * where h + h2 is not positive definite. Every entry of h2 is a per-pixel constant times one
     * of five sums over the bins, sum w r (e0 - e1), w r d1, w r d0 (the unscaled gradient) and
     * w r dd1, w r dd0; so the bins add only the last two (in h2's diagonal for tauF, tauD) and
     * fm_fit_finish builds h2 once per evaluation, and 5 fewer sums for the GPU reductions. */
    s->h2[fm_fit_hidx(2, 2)] = s->h2[fm_fit_hidx(2, 2)] + M_(wr, dd1);
    s->h2[fm_fit_hidx(3, 3)] = s->h2[fm_fit_hidx(3, 3)] + M_(wr, dd0);
}

/* Turns the per-bin sums of fm_fit_accumulate into J^T W J, J^T W r and (Newton) h2 at the
 * parameters p of the evaluation: after the reduction over the bins, on every backend. */
FM_FIT_HD static inline void fm_fit_finish(const fm_fit_setup *su, const double *p, fm_fit_sums *s)
{
    double c[FM_FIT_MAXP] = {1, 1, 1, 1, 1};
    const double A = p[0], f = su->model == 2 ? p[1] : 0.0, Af = M_(A, f), Ag = M_(A, 1 - f);
    c[1] = A;
    if (su->model == 2) {
        c[2] = Ag;
        c[3] = Af;
    }
    const double u1 = s->g[1], u2 = s->g[2], u3 = s->g[3];
    const int n = su->n_params;
    FM_FIT_UNROLL
    for (int a = 0; a < n; a++) {
        s->g[a] = M_(c[a], s->g[a]);
        FM_FIT_UNROLL
        for (int b = a; b < n; b++)
            s->h[fm_fit_hidx(a, b)] = M_(M_(c[a], c[b]), s->h[fm_fit_hidx(a, b)]);
    }
    if (!fm_fit_newton(su))
        return;
    const double v1 = s->h2[fm_fit_hidx(2, 2)], v0 = s->h2[fm_fit_hidx(3, 3)];
    s->h2[fm_fit_hidx(0, 1)] = -u1;
    s->h2[fm_fit_hidx(0, 2)] = -M_(1 - f, u2);
    s->h2[fm_fit_hidx(0, 3)] = -M_(f, u3);
    s->h2[fm_fit_hidx(1, 2)] = M_(A, u2);
    s->h2[fm_fit_hidx(1, 3)] = -M_(A, u3);
    s->h2[fm_fit_hidx(2, 2)] = -M_(Ag, v1);
    s->h2[fm_fit_hidx(3, 3)] = -M_(Af, v0);
}

/* The sums of two parts of the bins (the pairwise tree of the canonical order). */
FM_FIT_HD static inline void fm_fit_sums_add(fm_fit_sums *a, const fm_fit_sums *b)
{
    for (int k = 0; k < FM_FIT_NH; k++) {
        a->h[k] = a->h[k] + b->h[k];
        a->h2[k] = a->h2[k] + b->h2[k];
    }
    for (int k = 0; k < FM_FIT_MAXP; k++)
        a->g[k] = a->g[k] + b->g[k];
    a->cost = a->cost + b->cost;
    a->msum = a->msum + b->msum;
}

/* Sums of one pixel at parameters p with an IRF, bins in order from bin 0 (the recursion is
 * serial); with reweight set, the model at pw weights the bins (the second LSM pass). */
FM_FIT_HD static inline void fm_fit_eval_irf(const fm_fit_setup *su, const float *y, size_t stride,
                                             const double *irf, const double *p, const double *pw,
                                             int reweight, fm_fit_sums *s)
{
    double tau0, tau1, w0 = 1, w1 = 1;
    fm_fit_taus(su, p, &tau0, &tau1);
    if (reweight)
        fm_fit_taus(su, pw, &w0, &w1);
    fm_fit_sums_zero(s);
    fm_irf_rec r0, r1, q0, q1;
    fm_irf_rec_init(&r0, tau0, su->dt);
    fm_irf_rec_init(&r1, tau1, su->dt);
    fm_irf_rec_init(&q0, w0, su->dt);
    fm_irf_rec_init(&q1, w1, su->dt);
    for (int i = 0; i < su->fit_end; i++) {
        fm_irf_rec_step(&r0, irf[i]);
        if (su->model == 2)
            fm_irf_rec_step(&r1, irf[i]);
        if (reweight) {
            fm_irf_rec_step(&q0, irf[i]);
            if (su->model == 2)
                fm_irf_rec_step(&q1, irf[i]);
        }
        if (i >= su->fit_start) {
            const double v = (double)y[(size_t)i * stride];
            const double w = fm_fit_weight(reweight ? fm_fit_model_value(su, pw, q0.e, q1.e) : v);
            fm_fit_accumulate(su, p, r0.e, r0.de, 0.0, r1.e, r1.de, 0.0, v, w, s);
        }
    }
}

/* Per-evaluation constants of the exp recursion without an IRF (one lifetime pair). */
typedef struct {
    double tau0, tau1, inv0, inv1, q0, q1, it0, it1; /* inv = 1/tau, it = 1/tau^2 */
} fm_fit_decay;

FM_FIT_HD static inline void fm_fit_decay_init(const fm_fit_setup *su, const double *p,
                                               fm_fit_decay *c)
{
    fm_fit_taus(su, p, &c->tau0, &c->tau1);
    c->inv0 = 1 / c->tau0; /* one division per lifetime, products after it */
    c->inv1 = 1 / c->tau1;
    c->q0 = fm_fit_exp(-M_(su->dt, c->inv0));
    c->q1 = su->model == 2 ? fm_fit_exp(-M_(su->dt, c->inv1)) : 0;
    c->it0 = M_(c->inv0, c->inv0);
    c->it1 = M_(c->inv1, c->inv1);
}

/* Bins [j0, j1) of the fit range in segment g of n_seg (the canonical order has FM_FIT_SEGS). */
FM_FIT_HD static inline void fm_fit_seg_range_n(const fm_fit_setup *su, int g, int n_seg, int *j0,
                                                int *j1)
{
    const int n_fit = su->fit_end - su->fit_start;
    const int len = (n_fit + n_seg - 1) / n_seg;
    *j0 = g * len < n_fit ? g * len : n_fit;
    *j1 = *j0 + len < n_fit ? *j0 + len : n_fit;
}

FM_FIT_HD static inline void fm_fit_seg_range(const fm_fit_setup *su, int g, int *j0, int *j1)
{
    fm_fit_seg_range_n(su, g, FM_FIT_SEGS, j0, j1);
}

FM_FIT_HD static inline double fm_fit_bin_time(const fm_fit_setup *su, int j)
{
    return M_(j + 0.5, su->dt); /* bin centre from the fit start */
}

/* exp(-t/tau) at the first bin of a segment (inv = 1/tau): each segment restarts the recursion
 * e *= q there. */
FM_FIT_HD static inline double fm_fit_seg_exp(const fm_fit_setup *su, int j0, double inv)
{
    return fm_fit_exp(-M_(fm_fit_bin_time(su, j0), inv));
}

/* One bin j of the fit range without an IRF: basis e0, e1 (advanced by the caller), count v,
 * LSM weight w. */
FM_FIT_HD static inline void fm_fit_bin(const fm_fit_setup *su, const double *p,
                                        const fm_fit_decay *c, int j, double e0, double e1,
                                        double v, double w, fm_fit_sums *s)
{
    const double t = fm_fit_bin_time(su, j);
    const double d0 = M_(M_(e0, t), c->it0), d1 = M_(M_(e1, t), c->it1);
    double dd0 = 0, dd1 = 0; /* d2/dtau2 exp(-t/tau) = d (t / tau^2 - 2 / tau) */
    if (fm_fit_newton(su)) {
        dd0 = M_(d0, M_(t, c->it0) - M_(2.0, c->inv0));
        dd1 = M_(d1, M_(t, c->it1) - M_(2.0, c->inv1));
    }
    fm_fit_accumulate(su, p, e0, d0, dd0, e1, d1, dd1, v, w, s);
}

/* Sums of one segment g read from memory (the CPU twin and the thread-per-pixel kernel; the group
 * kernel runs the same steps from shared memory). reweight: second-pass LSM weights from the model
 * at pw (decay constants cw). */
FM_FIT_HD static inline void fm_fit_eval_seg(const fm_fit_setup *su, int g, const float *y,
                                             size_t stride, const double *p, const fm_fit_decay *c,
                                             const double *pw, const fm_fit_decay *cw, int reweight,
                                             fm_fit_sums *s)
{
    int j0, j1;
    fm_fit_seg_range(su, g, &j0, &j1);
    fm_fit_sums_zero(s);
    if (j0 >= j1)
        return;
    double e0 = fm_fit_seg_exp(su, j0, c->inv0);
    double e1 = su->model == 2 ? fm_fit_seg_exp(su, j0, c->inv1) : 0;
    double f0 = 0, f1 = 0;
    if (reweight) {
        f0 = fm_fit_seg_exp(su, j0, cw->inv0);
        f1 = su->model == 2 ? fm_fit_seg_exp(su, j0, cw->inv1) : 0;
    }
    for (int j = j0; j < j1; j++) {
        const double v = (double)y[(size_t)(j + su->fit_start) * stride];
        const double w = fm_fit_weight(reweight ? fm_fit_model_value(su, pw, f0, f1) : v);
        fm_fit_bin(su, p, c, j, e0, e1, v, w, s);
        e0 = M_(e0, c->q0);
        e1 = M_(e1, c->q1);
        if (reweight) {
            f0 = M_(f0, cw->q0);
            f1 = M_(f1, cw->q1);
        }
    }
}

/* The pairwise tree over segments in order, streamed: stack[l] holds a finished subtree of 2^l
 * segments waiting for its right neighbour. push returns the level it stored. */
FM_FIT_HD static inline void fm_fit_tree_push(fm_fit_sums *stack, int g, fm_fit_sums *part)
{
    int lvl = 0;
    for (int idx = g; idx & 1; idx >>= 1, lvl++)
        fm_fit_sums_add(part, &stack[lvl]);
    stack[lvl] = *part;
}

/* Sums of one pixel at parameters p in the canonical order (no IRF), or serially with an IRF. */
FM_FIT_HD static inline void fm_fit_eval(const fm_fit_setup *su, const float *y, size_t stride,
                                         const double *irf, const double *p, const double *pw,
                                         int reweight, fm_fit_sums *s)
{
    if (su->has_irf) {
        fm_fit_eval_irf(su, y, stride, irf, p, pw, reweight, s);
        fm_fit_finish(su, p, s);
        return;
    }
    fm_fit_decay c, cw;
    fm_fit_sums stack[FM_FIT_SEG_LEVELS + 1], part;
    fm_fit_decay_init(su, p, &c);
    fm_fit_decay_init(su, pw, &cw);
    for (int g = 0; g < FM_FIT_SEGS; g++) {
        fm_fit_eval_seg(su, g, y, stride, p, &c, pw, &cw, reweight, &part);
        fm_fit_tree_push(stack, g, &part);
    }
    *s = stack[FM_FIT_SEG_LEVELS];
    fm_fit_finish(su, p, s);
}

/* Photons in the fit range and s1, the sum of j y_j over its bins j = 0, 1, ... (the first moment
 * that fm_fit_start_data needs), in the order of fm_fit_eval; exact for integer counts anyway,
 * which lets the block kernel sum them in its own order. */
FM_FIT_HD static inline double fm_fit_photons(const fm_fit_setup *su, const float *y, size_t stride,
                                              double *s1)
{
    double stack[FM_FIT_SEG_LEVELS + 1][2];
    if (su->has_irf) {
        double photons = 0, m1 = 0;
        for (int i = su->fit_start; i < su->fit_end; i++) {
            photons = photons + y[(size_t)i * stride];
            m1 = m1 + M_((double)(i - su->fit_start), (double)y[(size_t)i * stride]);
        }
        *s1 = m1;
        return photons;
    }
    for (int g = 0; g < FM_FIT_SEGS; g++) {
        int j0, j1, lvl = 0;
        double part = 0, m1 = 0;
        fm_fit_seg_range(su, g, &j0, &j1);
        for (int j = j0; j < j1; j++) {
            const double v = y[(size_t)(j + su->fit_start) * stride];
            part = part + v;
            m1 = m1 + M_((double)j, v);
        }
        for (int idx = g; idx & 1; idx >>= 1, lvl++) {
            part = part + stack[lvl][0];
            m1 = m1 + stack[lvl][1];
        }
        stack[lvl][0] = part;
        stack[lvl][1] = m1;
    }
    *s1 = stack[FM_FIT_SEG_LEVELS][1];
    return stack[FM_FIT_SEG_LEVELS][0];
}

#include "flim_fit_lm.h"

#include "flim_fit_start.h"

FM_FIT_HD static inline void fm_fit_result_skip(fm_fit_result *res, double photons, int used)
{
    for (int k = 0; k < FM_FIT_MAXP; k++)
        res->p[k] = NAN;
    res->cost = res->chi2 = NAN;
    res->photons = photons;
    res->iter = res->converged = res->fitted = 0;
    res->used = used;
}

/* A fitted pixel's answer from the final LM state. */
FM_FIT_HD static inline void fm_fit_result_set(const fm_fit_setup *su, const fm_lm_state *st,
                                               int iter, fm_fit_result *res)
{
    for (int k = 0; k < FM_FIT_MAXP; k++)
        res->p[k] = st->p[k];
    res->cost = st->cost;
    const int dof = su->fit_end - su->fit_start - su->n_params;
    res->chi2 = st->cost / (dof > 0 ? dof : 1);
    res->iter = iter;
    res->converged = st->converged;
    res->fitted = 1;
}

/* Stopping tolerance of LSM pass `pass` (0 or 1): the first pass only supplies the weights of the
 * second, so it stops at 1e-4 (or the fit's tolerance if looser). Weights from a model that far
 * from the first optimum move the final answer by ~1e-5 relative (flim-scipy test, whose
 * reference runs both passes to 1e-12), and it saves 3.6 of 23 evaluations per 1500-photon
 * bi-exponential pixel. */
FM_FIT_HD static inline double fm_fit_pass_tol(const fm_fit_setup *su, int pass)
{
    return pass == 0 && !su->mle && su->tol < 1e-4 ? 1e-4 : su->tol;
}

/* LSM or MLE of one pixel; y[i * stride] is bin i. LSM runs twice: Neyman weights, then weights
 * from that fit's model (fixed during the pass, so the cost is consistent); the second pass
 * starts at the optimum and takes a few iterations. */
FM_FIT_HD static inline void fm_fit_pixel(const fm_fit_setup *su, const float *y, size_t stride,
                                          const double *irf, int used, fm_fit_result *res)
{
    double p[FM_FIT_MAXP] = {0}, pw[FM_FIT_MAXP] = {0};
    unsigned char role[FM_FIT_MAXP];
    fm_fit_sums s;
    fm_lm_state st;
    int iter = 0;
    double s1;
    const double photons = fm_fit_photons(su, y, stride, &s1);
    fm_fit_result_skip(res, photons, used);
    if (!used || !(photons > 0) || photons < su->min_photons)
        return;
    fm_fit_start(su, p, role);
    fm_fit_start_data(su, photons, s1, p);
    for (int k = 0; k < FM_FIT_MAXP; k++)
        pw[k] = p[k];
    fm_fit_eval(su, y, stride, irf, p, pw, 0, &s);
    if (!(s.msum > 0))
        return;
    p[0] = photons / s.msum;
    for (int pass = 0; pass < (su->mle ? 1 : 2); pass++) {
        fm_lm_init(&st, su->n_params, role, p);
        while (!st.done) {
            fm_fit_eval(su, y, stride, irf, st.trial, pw, pass, &s);
            fm_lm_update(&st, &s, su->n_params, fm_fit_pass_tol(su, pass), su->max_iter);
        }
        if (!st.have)
            return;
        iter += st.iter;
        for (int k = 0; k < FM_FIT_MAXP; k++)
            p[k] = pw[k] = st.p[k];
    }
    fm_fit_result_set(su, &st, iter, res);
}

#include "flim_ga_math.h"

/* The value that lane 0 of a warp holds after the xor butterfly of __shfl_xor_sync over v[0..31]
 * (offsets 16, 8, 4, 2, 1), in v[0]: the CPU twin's copy of the CUDA block reductions. */
FM_FIT_HD static inline void fm_fit_warp_tree(fm_fit_sums *v)
{
    for (int off = 16; off > 0; off >>= 1)
        for (int l = 0; l < off; l++)
            fm_fit_sums_add(&v[l], &v[l + off]);
}

/* GA threads per segment on CUDA (a power of two, 32 to 256, one thread per pixel up to that):
 * the CPU twin sums the pixels' contributions in the same partition. */
static inline int fm_fit_ga_threads(int max_segment_pixels)
{
    int t = 32;
    while (t < max_segment_pixels && t < 256)
        t *= 2;
    return t;
}

#ifdef __cplusplus
extern "C" {
#endif

/* Host helpers shared by the CPU twin and the CUDA path (flim_fit_cpu.c). */
void fm_fit_setup_from(const fm_flim_job *job, fm_fit_setup *su);
/* The IRF as doubles (n_bins values), or NULL without one; caller frees. */
double *fm_fit_irf_double(const fm_flim_job *job);
/* GA: pixels of each segment, CSR (offsets has n_segments + 1 entries); caller frees both. */
int fm_fit_segments(const fm_flim_job *job, int **offsets, int **pixels);
/* Copies bins [0, n_bins_copy) of pixels order[k0..k1) (or k0..k1 when order is NULL) into dst,
 * bin-major with k1 - k0 columns, in the caller's type (counts_data: float32 or uint16), and
 * their mask bytes (1 without a mask). OpenMP. */
void fm_fit_gather(const fm_flim_job *job, const int *order, long k0, long k1, int n_bins_copy,
                   void *dst, unsigned char *mask_dst);
/* Writes results of pixels order[k0..k1) to the output maps. */
void fm_fit_scatter(const fm_flim_job *job, const fm_fit_setup *su, const int *order, long k0,
                    long k1, const fm_fit_result *res);
/* GA: NaN maps, 0 iterations, not converged for pixels outside every segment. */
void fm_fit_mark_unsegmented(const fm_flim_job *job, const fm_fit_setup *su);

#ifdef __cplusplus
}
#endif
