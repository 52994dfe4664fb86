/* Global-analysis math of the FLIM fits, shared by the CPU twin and CUDA: per-pixel sums against
 * a segment's basis, non-negative amplitudes, variable-projection Gauss-Newton on the lifetimes.
 * Included by flim_fit_math.h, which defines the types it uses. */
#pragma once

/* Weighted sums of one pixel against the segment's basis. Weights 1/max(ybar_i * scale, 1): the
 * segment's mean decay scaled to the pixel's photons, nearly free of the pixel's own noise, so
 * they do not bias the fit as Neyman weights 1/max(y,1) do at 1000 photons (fD off by ~0.4).
 * Basis: phi = (e0, e1, 1) for the linear
 * amplitudes (D or mono, F, background) and psi = (d0, d1) for the lifetimes. */
typedef struct {
    double aa[9], ay[3], ta[6], tt[4], ty[2], yy;
} fm_ga_sums;

FM_FIT_HD static inline void fm_ga_pixel_sums(const fm_fit_setup *su, const double *e0,
                                              const double *d0, const double *e1, const double *d1,
                                              const double *ybar, double scale, const float *y,
                                              size_t stride, fm_ga_sums *s)
{
    const int nl = su->n_lin, nt = su->model;
    for (int k = 0; k < 9; k++)
        s->aa[k] = 0;
    for (int k = 0; k < 6; k++)
        s->ta[k] = 0;
    for (int k = 0; k < 4; k++)
        s->tt[k] = 0;
    s->ay[0] = s->ay[1] = s->ay[2] = s->ty[0] = s->ty[1] = s->yy = 0;
    for (int i = 0; i < su->fit_end - su->fit_start; i++) {
        const double v = y[(size_t)(i + su->fit_start) * stride];
        const double w = fm_fit_weight(M_(ybar[i], scale));
        double phi[3], psi[2];
        phi[0] = e0[i];
        phi[1] = e1[i];
        phi[nl - 1] = su->fit_bg ? 1.0 : phi[nl - 1];
        psi[0] = d0[i];
        psi[1] = d1[i];
        for (int a = 0; a < nl; a++) {
            const double wa = M_(w, phi[a]);
            s->ay[a] = s->ay[a] + M_(wa, v);
            for (int b = 0; b < nl; b++)
                s->aa[a * 3 + b] = s->aa[a * 3 + b] + M_(wa, phi[b]);
        }
        for (int j = 0; j < nt; j++) {
            const double wj = M_(w, psi[j]);
            s->ty[j] = s->ty[j] + M_(wj, v);
            for (int a = 0; a < nl; a++)
                s->ta[j * 3 + a] = s->ta[j * 3 + a] + M_(wj, phi[a]);
            for (int k = 0; k < nt; k++)
                s->tt[j * 2 + k] = s->tt[j * 2 + k] + M_(wj, psi[k]);
        }
        s->yy = s->yy + M_(M_(w, v), v);
    }
}

/* Non-negative least squares for <= 3 amplitudes by trying every free set: the optimum is the
 * feasible subset solution of lowest cost (the problem is convex). Returns the cost. */
FM_FIT_HD static inline double fm_ga_nnls(int nl, const fm_ga_sums *s, double *a, int *free_set)
{
    double best = s->yy;
    *free_set = 0;
    a[0] = a[1] = a[2] = 0;
    for (int mask = (1 << nl) - 1; mask > 0; mask--) {
        int idx[3], n = 0;
        double m[9], x[3];
        for (int k = 0; k < nl; k++)
            if (mask & (1 << k))
                idx[n++] = k;
        for (int i = 0; i < n; i++) {
            x[i] = s->ay[idx[i]];
            for (int j = 0; j < n; j++)
                m[i * n + j] = s->aa[idx[i] * 3 + idx[j]];
        }
        if (!fm_fit_cholesky(n, m, x))
            continue;
        int feasible = 1;
        for (int i = 0; i < n; i++)
            feasible &= x[i] >= 0;
        if (!feasible)
            continue;
        double full[3] = {0, 0, 0}, cost = s->yy;
        for (int i = 0; i < n; i++)
            full[idx[i]] = x[i];
        for (int i = 0; i < nl; i++) {
            cost = cost - M_(M_(2.0, full[i]), s->ay[i]);
            for (int j = 0; j < nl; j++)
                cost = cost + M_(M_(full[i], s->aa[i * 3 + j]), full[j]);
        }
        if (cost < best || *free_set == 0) {
            best = cost;
            *free_set = mask;
            a[0] = full[0];
            a[1] = full[1];
            a[2] = full[2];
        }
        if (mask == (1 << nl) - 1)
            break; /* the unconstrained optimum is feasible, hence optimal */
    }
    return best;
}

/* Adds one pixel to the segment's reduced Gauss-Newton system for the lifetimes. With the
 * amplitudes at their optimum, the gradient is the lifetime part alone, and the Hessian is the
 * Schur complement H_tt - H_ta H_aa^-1 H_at over the free amplitudes (variable projection,
 * Golub & Pereyra). The lifetime Jacobian of component j is a_j psi_j. */
FM_FIT_HD static inline void fm_ga_contrib(const fm_fit_setup *su, const fm_ga_sums *s,
                                           const double *a, int free_set, double cost,
                                           fm_fit_sums *acc)
{
    const int nl = su->n_lin, nt = su->model;
    int idx[3], n = 0;
    double hat[3 * 2], x[3 * 2];
    for (int k = 0; k < nl; k++)
        if (free_set & (1 << k))
            idx[n++] = k;
    for (int j = 0; j < nt; j++) {
        double r = s->ty[j];
        for (int l = 0; l < nl; l++)
            r = r - M_(s->ta[j * 3 + l], a[l]);
        acc->g[j] = acc->g[j] + M_(a[j], r);
        for (int k = j; k < nt; k++)
            acc->h[fm_fit_hidx(j, k)] =
                acc->h[fm_fit_hidx(j, k)] + M_(M_(a[j], a[k]), s->tt[j * 2 + k]);
    }
    acc->cost = acc->cost + cost;
    if (n == 0)
        return;
    for (int c = 0; c < nt; c++) {
        double m[9], col[3];
        for (int i = 0; i < n; i++) {
            hat[i * 2 + c] = M_(a[c], s->ta[c * 3 + idx[i]]);
            col[i] = hat[i * 2 + c];
            for (int j = 0; j < n; j++)
                m[i * n + j] = s->aa[idx[i] * 3 + idx[j]];
        }
        if (!fm_fit_cholesky(n, m, col))
            return;
        for (int i = 0; i < n; i++)
            x[i * 2 + c] = col[i];
    }
    for (int j = 0; j < nt; j++)
        for (int k = j; k < nt; k++) {
            double t = 0;
            for (int i = 0; i < n; i++)
                t = t + M_(hat[i * 2 + j], x[i * 2 + k]);
            acc->h[fm_fit_hidx(j, k)] = acc->h[fm_fit_hidx(j, k)] - t;
        }
}

/* A pixel's GA answer in the common layout: A = sum of the decay amplitudes, fD = aD / A. */
FM_FIT_HD static inline void fm_ga_result(const fm_fit_setup *su, const double *a,
                                          const double *tau, double cost, int iter, int converged,
                                          fm_fit_result *res)
{
    const int n_fit = su->fit_end - su->fit_start;
    if (su->model == 1) {
        res->p[0] = a[0];
        res->p[1] = tau[0];
        res->p[2] = su->fit_bg ? a[1] : NAN;
    } else {
        const double A = a[0] + a[1];
        res->p[0] = A;
        res->p[1] = A > 0 ? a[0] / A : NAN;
        res->p[2] = tau[1];
        res->p[3] = tau[0];
        res->p[4] = su->fit_bg ? a[2] : NAN;
    }
    res->cost = cost;
    res->chi2 = cost / (n_fit - su->n_lin > 0 ? n_fit - su->n_lin : 1);
    res->iter = iter;
    res->converged = converged;
    res->fitted = 1;
}

/* GA start: [tau0, tau1] = [tauD, tauF] (bi) or [tau] (mono). */
FM_FIT_HD static inline void fm_ga_start(const fm_fit_setup *su, double *tau, unsigned char *role)
{
    tau[0] = su->model == 1 ? su->tau0[0] : su->tau0[1];
    tau[1] = su->tau0[0];
    role[0] = role[1] = FM_ROLE_TAU;
}
