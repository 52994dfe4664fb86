/* VFA T1 mapping on the CPU (OpenMP over voxels): DESPOT1 linear fit and the exact nonlinear
 * least-squares fit of the SPGR signal equation. */
#include "t1_vfa.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define T1_VFA_MAX_ANGLES 64
/* The nonlinear fit's search range for T1 (s): beyond it a fit is no T1 but noise. */
#define T1_MIN_S 1e-5
#define T1_MAX_S 1e4
#define T1_GRID 97
#define T1_GOLDEN_STEPS 90

/* The SPGR signal per unit M0 at one angle (Ernst's equation). */
static double spgr_unit(double flip_rad, double e)
{
    return sin(flip_rad) * (1.0 - e) / (1.0 - cos(flip_rad) * e);
}

/* DESPOT1: y = S/sin(a) against x = S/tan(a) is a line of slope E and intercept M0 (1 - E);
 * an ordinary least-squares line through the centred points. */
static int fit_linear(int n, const double *s, const double *a, double tr_s, double *t1_s,
                      double *m0)
{
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += s[i] / tan(a[i]);
        my += s[i] / sin(a[i]);
    }
    mx /= n;
    my /= n;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double dx = s[i] / tan(a[i]) - mx, dy = s[i] / sin(a[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
    }
    if (!(sxx > 0))
        return 0;
    double slope = sxy / sxx, intercept = my - slope * mx;
    /* E = exp(-TR/T1) lies in (0, 1) and M0 > 0: anything else has no T1. */
    if (!(slope > 0 && slope < 1) || !(intercept >= 0))
        return 0;
    *t1_s = -tr_s / log(slope);
    *m0 = intercept / (1.0 - slope);
    return 1;
}

/* For a given T1, M0 enters linearly: its least-squares value is sum(s f) / sum(f f), and the
 * cost is the sum of squared residuals computed directly (no cancellation near a perfect
 * fit). */
static double cost_at(int n, const double *s, const double *a, double tr_s, double t1_s,
                      double *m0_out)
{
    double e = exp(-tr_s / t1_s), sf = 0, ff = 0, f[T1_VFA_MAX_ANGLES];
    for (int i = 0; i < n; i++) {
        f[i] = spgr_unit(a[i], e);
        sf += s[i] * f[i];
        ff += f[i] * f[i];
    }
    double m0 = ff > 0 ? sf / ff : 0.0, cost = 0;
    for (int i = 0; i < n; i++) {
        double r = s[i] - m0 * f[i];
        cost += r * r;
    }
    if (m0_out)
        *m0_out = m0;
    return cost;
}

/* The nonlinear least-squares optimum over (M0, T1) by variable projection: a log-spaced scan
 * of T1 finds the basin, golden-section search in ln T1 refines it to double precision. */
static int fit_nonlinear(int n, const double *s, const double *a, double tr_s, double *t1_s,
                         double *m0)
{
    const double lo = log(T1_MIN_S), hi = log(T1_MAX_S), step = (hi - lo) / (T1_GRID - 1);
    int best = 0;
    double best_cost = INFINITY;
    for (int k = 0; k < T1_GRID; k++) {
        double c = cost_at(n, s, a, tr_s, exp(lo + k * step), NULL);
        if (c < best_cost) {
            best_cost = c;
            best = k;
        }
    }
    if (!isfinite(best_cost) || best == 0 || best == T1_GRID - 1)
        return 0; /* the optimum lies at a bound of the range: no T1 */
    const double g = 0.5 * (sqrt(5.0) - 1.0);
    double x0 = lo + (best - 1) * step, x3 = lo + (best + 1) * step;
    double x1 = x3 - g * (x3 - x0), x2 = x0 + g * (x3 - x0);
    double c1 = cost_at(n, s, a, tr_s, exp(x1), NULL), c2 = cost_at(n, s, a, tr_s, exp(x2), NULL);
    for (int it = 0; it < T1_GOLDEN_STEPS; it++) {
        if (c1 < c2) {
            x3 = x2;
            x2 = x1;
            c2 = c1;
            x1 = x3 - g * (x3 - x0);
            c1 = cost_at(n, s, a, tr_s, exp(x1), NULL);
        } else {
            x0 = x1;
            x1 = x2;
            c1 = c2;
            x2 = x0 + g * (x3 - x0);
            c2 = cost_at(n, s, a, tr_s, exp(x2), NULL);
        }
    }
    *t1_s = exp(0.5 * (x0 + x3));
    cost_at(n, s, a, tr_s, *t1_s, m0);
    return *m0 > 0;
}

int fm_t1_vfa_voxel(fm_t1_vfa_fit_kind kind, int n_angles, const double *signals,
                    const double *flip_rad, double tr_s, double *t1_s, double *m0, double *rmse)
{
    if (n_angles < 2 || n_angles > T1_VFA_MAX_ANGLES || !(tr_s > 0))
        return 0;
    for (int i = 0; i < n_angles; i++)
        if (!isfinite(signals[i]) || !(flip_rad[i] > 0 && flip_rad[i] < M_PI))
            return 0;
    int ok = kind == FM_T1_VFA_LINEAR ? fit_linear(n_angles, signals, flip_rad, tr_s, t1_s, m0)
                                      : fit_nonlinear(n_angles, signals, flip_rad, tr_s, t1_s, m0);
    if (!ok || !isfinite(*t1_s) || !(*m0 > 0) || !isfinite(*m0))
        return 0;
    if (rmse) {
        double e = exp(-tr_s / *t1_s), ss = 0;
        for (int i = 0; i < n_angles; i++) {
            double r = signals[i] - *m0 * spgr_unit(flip_rad[i], e);
            ss += r * r;
        }
        *rmse = sqrt(ss / n_angles);
    }
    return 1;
}

fm_status fm_t1_vfa_fit(const fm_t1_vfa_params *p, const float *signals, const float *b1,
                        long long n_voxels, fm_t1_vfa_outputs *out, fm_tick_fn tick,
                        void *tick_user, fm_run_info *info, char *msg, size_t msg_len)
{
    if (!p || !signals || !out || !out->t1_s || !out->m0 || n_voxels < 0 || p->n_angles < 2 ||
        p->n_angles > T1_VFA_MAX_ANGLES || !p->flip_deg || !(p->tr_s > 0)) {
        snprintf(msg, msg_len, "t1_vfa: needs 2 to %d flip angles, TR > 0 and output maps",
                 T1_VFA_MAX_ANGLES);
        return FM_ERR_INVALID_ARG;
    }
    for (int i = 0; i < p->n_angles; i++)
        if (!(p->flip_deg[i] > 0 && p->flip_deg[i] < 180)) {
            snprintf(msg, msg_len, "t1_vfa: flip angle %d is %g deg, not in (0, 180)", i + 1,
                     p->flip_deg[i]);
            return FM_ERR_INVALID_ARG;
        }
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    if (info) {
        memset(info, 0, sizeof *info);
        info->backend_used = FM_BACKEND_CPU;
        snprintf(info->device_name, sizeof info->device_name, "CPU, %d threads", threads);
    }
    const int n = p->n_angles;
    const long long chunk = 1 << 16;
    long long invalid = 0;
    for (long long start = 0; start < n_voxels; start += chunk) {
        long long end = start + chunk < n_voxels ? start + chunk : n_voxels;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : invalid)
        for (long long v = start; v < end; v++) {
            double s[T1_VFA_MAX_ANGLES], a[T1_VFA_MAX_ANGLES];
            double k = b1 ? (double)b1[v] : 1.0, t1 = NAN, m0 = NAN, rmse = NAN;
            for (int i = 0; i < n; i++) {
                s[i] = signals[v * n + i];
                a[i] = k * p->flip_deg[i] * (M_PI / 180.0);
            }
            if (!(k > 0) || !fm_t1_vfa_voxel(p->kind, n, s, a, p->tr_s, &t1, &m0, &rmse)) {
                t1 = m0 = rmse = NAN;
                invalid++;
            }
            out->t1_s[v] = t1;
            out->m0[v] = m0;
            if (out->rmse)
                out->rmse[v] = rmse;
        }
        if (tick && tick(tick_user, (double)end / (double)n_voxels)) {
            snprintf(msg, msg_len, "t1_vfa: cancelled");
            return FM_ERR_CANCELLED;
        }
    }
    if (info)
        info->invalid_values = invalid;
    return FM_OK;
}
