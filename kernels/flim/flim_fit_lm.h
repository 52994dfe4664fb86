/* Levenberg-Marquardt state machine of the FLIM fits (LSM, MLE, and the lifetimes of GA), with
 * the small dense solves; every rounding as in flim_fit_det.h, so both backends agree bit for bit.
 * Included by flim_fit_math.h, which defines the types it uses. */
#pragma once

/* Solve of a small SPD system (n <= 5, row-major a overwritten) by LDL^T: one reciprocal per
 * pivot and products after it, no square roots or divisions in the loops (each of those costs
 * ~10-20 instructions on the GPU, and this solve runs once per LM step in the serial part of the
 * group kernel). 0 when a pivot is not positive (not SPD). */
FM_FIT_HD static inline int fm_fit_cholesky(int n, double *a, double *x)
{
    double inv[FM_FIT_MAXP];
    FM_FIT_UNROLL
    for (int j = 0; j < n; j++) {
        double d = a[j * n + j];
        FM_FIT_UNROLL
        for (int k = 0; k < j; k++)
            d = d - M_(M_(a[j * n + k], a[j * n + k]), a[k * n + k]);
        if (!(d > 0))
            return 0;
        a[j * n + j] = d;
        inv[j] = 1 / d;
        FM_FIT_UNROLL
        for (int i = j + 1; i < n; i++) {
            double t = a[i * n + j];
            FM_FIT_UNROLL
            for (int k = 0; k < j; k++)
                t = t - M_(M_(a[i * n + k], a[j * n + k]), a[k * n + k]);
            a[i * n + j] = M_(t, inv[j]);
        }
    }
    FM_FIT_UNROLL
    for (int i = 0; i < n; i++) {
        double t = x[i];
        FM_FIT_UNROLL
        for (int k = 0; k < i; k++)
            t = t - M_(a[i * n + k], x[k]);
        x[i] = t;
    }
    FM_FIT_UNROLL
    for (int i = n - 1; i >= 0; i--) {
        double t = M_(x[i], inv[i]);
        FM_FIT_UNROLL
        for (int k = i + 1; k < n; k++)
            t = t - M_(a[k * n + i], x[k]);
        x[i] = t;
    }
    return 1;
}

FM_FIT_HD static inline double fm_fit_clamp(int role, double v)
{
    switch (role) {
    case FM_ROLE_FRAC:
        return v < 0 ? 0 : (v > 1 ? 1 : v);
    case FM_ROLE_TAU:
        return v < FM_FIT_TAU_MIN ? FM_FIT_TAU_MIN : (v > FM_FIT_TAU_MAX ? FM_FIT_TAU_MAX : v);
    default: /* amplitudes and background are photon counts */
        return v < 0 ? 0 : v;
    }
}

FM_FIT_HD static inline void fm_lm_init(fm_lm_state *s, int n, const unsigned char *role,
                                        const double *p0)
{
    int frac = 0;
    s->n = n;
    FM_FIT_UNROLL
    for (int k = 0; k < FM_FIT_MAXP; k++) {
        s->p[k] = s->trial[k] = k < n ? p0[k] : 0;
        s->role[k] = k < n ? role[k] : (unsigned char)FM_ROLE_AMP;
        frac |= s->role[k] == FM_ROLE_FRAC;
        s->g[k] = 0;
    }
    FM_FIT_UNROLL
    for (int k = 0; k < FM_FIT_NH; k++)
        s->h[k] = s->h2[k] = 0;
    s->cost = HUGE_VAL;
    s->newton = 0;
    /* Marquardt's 1e-3, but 1e-2 for bi-exponential pixels (a fraction among the parameters):
     * their first steps overshoot along the flat fD-tauF valley and get rejected; on the bench's
     * 1500-photon decays (CPU twin) LSM bi 23.2 -> 21.2 and MLE bi 9.2 -> 8.6 evaluations per
     * pixel, while mono LSM gets slower with it (8.9 -> 9.0). */
    s->lambda = frac ? 1e-2 : 1e-3;
    s->nu = 2;
    s->pred = 0;
    s->iter = s->done = s->converged = s->have = 0;
}

/* Marquardt's damped step (H + lambda diag J^T W J) delta = g, H = J^T W J, plus Newton's h2
 * when with_h2. A parameter whose Jacobian column vanishes (tau of a component clamped to zero
 * amplitude) is frozen instead of making the system singular. */
FM_FIT_HD static inline int fm_lm_solve(const fm_lm_state *s, int n, int with_h2, double *delta)
{
    double a[FM_FIT_MAXP * FM_FIT_MAXP], maxd = 0;
    FM_FIT_UNROLL
    for (int i = 0; i < n; i++)
        maxd = fmax(maxd, s->h[fm_fit_hidx(i, i)]);
    FM_FIT_UNROLL
    for (int i = 0; i < n; i++) {
        const double d = s->h[fm_fit_hidx(i, i)];
        const int frozen = !(d > 1e-14 * maxd);
        FM_FIT_UNROLL
        for (int j = 0; j < n; j++) {
            const int frozen_j = !(s->h[fm_fit_hidx(j, j)] > 1e-14 * maxd);
            const int k = fm_fit_hidx(i, j);
            a[i * n + j] = (frozen || frozen_j) ? 0.0 : s->h[k] + (with_h2 ? s->h2[k] : 0.0);
        }
        a[i * n + i] = frozen ? 1.0 : a[i * n + i] + FM_FIT_MUL(d, s->lambda);
        delta[i] = frozen ? 0.0 : s->g[i];
    }
    return fm_fit_cholesky(n, a, delta);
}

/* Takes the sums evaluated at s->trial and decides: accept (cost lower) or reject; stops when an
 * accepted step lowers the cost by less than tol relative, when no step can lower it any more,
 * or after max_iter proposals (not converged). Otherwise sets the next trial.
 * Damping after Nielsen (Madsen, Nielsen & Tingleff, "Methods for non-linear least squares
 * problems", 2004, eq. 2.21 and sec. 3.2): on acceptance lambda *= max(1/3, 1 - (2 rho - 1)^3),
 * rho = actual / predicted decrease, and nu = 2; on rejection lambda *= nu, nu *= 2. Against
 * the classic /10 and x10 it halves the accept-reject ping-pong in flat bi-exponential valleys:
 * 28.5 -> 20.9 evaluations per pixel for LSM bi on the bench's decays, at lower final costs. */
FM_FIT_HD static inline void fm_lm_update(fm_lm_state *s, const fm_fit_sums *sum, int n, double tol,
                                          int max_iter)
{
    const int accept = isfinite(sum->cost) && (!s->have || sum->cost < s->cost);
    if (!s->have && !accept) {
        s->done = 1;
        return;
    }
    if (accept) {
        const double old = s->cost;
        const int had = s->have;
        FM_FIT_UNROLL
        for (int k = 0; k < FM_FIT_MAXP; k++) {
            s->p[k] = s->trial[k];
            s->g[k] = sum->g[k];
        }
        FM_FIT_UNROLL
        for (int k = 0; k < FM_FIT_NH; k++) {
            s->h[k] = sum->h[k];
            s->h2[k] = sum->h2[k];
        }
        s->cost = sum->cost;
        s->have = 1;
        if (had) {
            double factor = 1.0 / 3;
            if (s->pred > 0) {
                const double t = FM_FIT_MUL(2.0, (old - s->cost) / s->pred) - 1;
                factor = fmax(factor, 1 - FM_FIT_MUL(FM_FIT_MUL(t, t), t));
            }
            s->lambda = fmax(FM_FIT_MUL(s->lambda, factor), 1e-12);
            s->nu = 2;
        }
        if (s->cost <= 0 || (had && old - s->cost <= FM_FIT_MUL(tol, s->cost))) {
            s->done = s->converged = 1;
            return;
        }
    } else {
        s->lambda = FM_FIT_MUL(s->lambda, s->nu);
        s->nu = FM_FIT_MUL(s->nu, 2.0);
        if (s->lambda > 1e12) { /* no step lowers the cost at this precision: a minimum */
            s->done = s->converged = 1;
            return;
        }
    }
    if (s->iter >= max_iter) {
        s->done = 1;
        return;
    }
    s->iter++;
    double delta[FM_FIT_MAXP];
    int any_h2 = 0, ok = 0;
    FM_FIT_UNROLL
    for (int k = 0; k < FM_FIT_NH; k++)
        any_h2 |= s->h2[k] != 0.0;
    /* Newton where its damped Hessian is positive definite, else Gauss-Newton (always positive
     * semi-definite): Newton alone, raising lambda until it is, takes 24 % more steps on
     * 1500-photon bi-exponential pixels. */
    for (int tries = 0; tries < 8 && !ok; tries++) {
        s->newton = any_h2 && fm_lm_solve(s, n, 1, delta);
        ok = s->newton || fm_lm_solve(s, n, 0, delta);
        if (!ok)
            s->lambda = FM_FIT_MUL(s->lambda, 10.0);
    }
    int moved = 0;
    FM_FIT_UNROLL
    for (int k = 0; k < n; k++) {
        s->trial[k] = fm_fit_clamp(s->role[k], s->p[k] + (ok ? delta[k] : 0.0));
        moved |= s->trial[k] != s->p[k];
    }
    /* Decrease the quadratic model predicts for the (clamped) step d: 2 d.g - d.H.d, with the
     * H that made the step. */
    double dg = 0, dhd = 0;
    FM_FIT_UNROLL
    for (int a = 0; a < n; a++) {
        const double da = s->trial[a] - s->p[a];
        dg = dg + FM_FIT_MUL(da, s->g[a]);
        FM_FIT_UNROLL
        for (int b = 0; b < n; b++)
            dhd = dhd + FM_FIT_MUL(FM_FIT_MUL(da, s->h[fm_fit_hidx(a, b)] +
                                                      (s->newton ? s->h2[fm_fit_hidx(a, b)] : 0.0)),
                                   s->trial[b] - s->p[b]);
    }
    s->pred = FM_FIT_MUL(2.0, dg) - dhd;
    if (!moved) /* the step is stopped by the bounds (or nothing to solve): done */
        s->done = s->converged = 1;
}
