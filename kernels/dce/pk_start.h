/* Where each voxel's fit starts, shared by the CPU twin and the CUDA kernel. Tofts, extended Tofts
 * and Patlak: the linear least-squares solution of their integral form (Murase, MRM 51 (2004)
 * 858, eq. 5 and its Patlak and extended forms); the two-compartment models: the best point of a
 * grid of exponential rates with the amplitudes by non-negative least squares. With a fitted
 * delay, every candidate delay of the tables is tried and the lowest cost wins. */
#pragma once

#include "pk_eval.h"

/* Typical values (OSIPI's starting point) for a solve that fails. */
FM_HD static inline void fm_pk_typical(const fm_pk_plan *p, double delay_s, double *x)
{
    for (int j = 0; j < p->n_fit; j++) {
        double v = 0;
        switch (p->slot[j]) {
        case FM_PK_KTRANS:
        case FM_PK_PS:
            v = 0.6;
            break;
        case FM_PK_VE:
            v = 0.2;
            break;
        case FM_PK_VP:
            v = 0.01;
            break;
        case FM_PK_FP:
            v = 20;
            break;
        default:
            v = delay_s;
            break;
        }
        x[j] = fm_pk_clamp(v, p->lower[j], p->upper[j]);
    }
}

/* Fitted vector from named values (user units), clamped into the bounds; 1 when none needed
 * clamping. */
FM_HD static inline int fm_pk_pack(const fm_pk_plan *p, const double *theta, double *x)
{
    int inside = 1;
    for (int j = 0; j < p->n_fit; j++) {
        const double v = theta[p->slot[j]];
        inside &= v >= p->lower[j] && v <= p->upper[j];
        x[j] = fm_pk_clamp(v == v ? v : p->lower[j], p->lower[j], p->upper[j]);
    }
    return inside;
}

/* Murase's regression for delay index d: C = vp cp + (Ktrans + kep vp) int cp - kep int C
 * (extended Tofts; Tofts without the cp column, Patlak without the int C column). y: <C, basis>,
 * z: <int C, basis> of cp and int cp; ii = <int C, int C>, ic = <int C, C>. */
FM_HD static inline void fm_pk_murase(const fm_pk_plan *p, int d, const double *y, const double *z,
                                      double ii, double ic, double *x)
{
    const double *gm = p->gram + (size_t)d * p->n_basis * p->n_basis;
    const int nb = p->n_basis;
    /* Columns: 0 cp, 1 int cp, 2 -int C; the model picks its subset. */
    int col[3], n = 0;
    if (p->model != FM_PK_TOFTS)
        col[n++] = 0;
    col[n++] = 1;
    if (p->model != FM_PK_PATLAK)
        col[n++] = 2;
    double m[FM_PK_MAX_FIT * FM_PK_MAX_FIT], b[3], sol[3];
    for (int r = 0; r < n; r++) {
        const int cr = col[r];
        b[r] = cr == 2 ? -ic : y[cr];
        for (int k = 0; k <= r; k++) {
            const int ck = col[k];
            m[r * FM_PK_MAX_FIT + k] = cr == 2 && ck == 2 ? ii
                                       : cr == 2          ? -z[ck]
                                       : ck == 2          ? -z[cr]
                                                          : gm[cr * nb + ck];
        }
    }
    double theta[FM_PK_N_PARAMS];
    for (int i = 0; i < FM_PK_N_PARAMS; i++)
        theta[i] = p->fixed[i];
    theta[FM_PK_DELAY] = p->delays[d];
    if (!fm_pk_solve_spd(m, b, n, sol)) {
        fm_pk_typical(p, p->delays[d], x);
        return;
    }
    double vp = 0, k1, kep = 0;
    if (p->model == FM_PK_TOFTS) {
        k1 = sol[0];
        kep = sol[1];
    } else {
        vp = sol[0];
        k1 = sol[1];
        if (p->model == FM_PK_EXTENDED_TOFTS)
            kep = sol[2];
    }
    const double ktrans = k1 - kep * vp; /* 1/s */
    theta[FM_PK_KTRANS] = 60 * ktrans;
    theta[FM_PK_VP] = vp;
    theta[FM_PK_VE] = kep > 0 && ktrans > 0 ? ktrans / kep : 1.0; /* no washout: a large ve */
    fm_pk_pack(p, theta, x);
}

/* Two-compartment parameters from the amplitudes a (rate sp) and b (rate sn < sp) of the impulse
 * response Fp (Ap exp(-sp t) + An exp(-sn t)): inverts fm_pk_coefs_of. Fp = a + b, s = sp - a (sp
 * - sn)/Fp, vp = Fp / (sp + sn - s), Ke = sp sn vp / Fp, PS = vp (s - Ke), ve = PS / Ke. */
FM_HD static inline void fm_pk_two_compartment_of(double a, double b, double sp, double sn,
                                                  double *theta)
{
    const double fp = a + b, s = sp - a * (sp - sn) / fp, vp = fp / (sp + sn - s);
    const double ke = sp * sn * vp / fp, ps = vp * (s - ke);
    theta[FM_PK_FP] = 6000 * fp;
    theta[FM_PK_PS] = 60 * ps;
    theta[FM_PK_VP] = vp;
    theta[FM_PK_VE] = ke > 0 ? ps / ke : 1.0;
}

/* The grid's best point for delay index d: rate pairs (fast, slow; 2CUM: slow = 0), amplitudes
 * >= 0 by least squares on the tabled Gram matrix, cost |C|^2 - 2 a.y + a.G.a. Points whose
 * parameters fall inside the bounds win over points that must be clamped. */
FM_HD static inline void fm_pk_grid(const fm_pk_plan *p, int d, const double *y, double cc,
                                    double *x, double *best_cost, int *best_inside)
{
    const int nb = p->n_basis;
    const double *gm = p->gram + (size_t)d * nb * nb;
    for (int bp = 2; bp < nb; bp++) {
        /* Slow rate 0 (the basis int cp) first, then (2CXM) every slower grid rate. */
        const int n_slow = p->model == FM_PK_2CXM ? nb - bp : 1;
        for (int qi = 0; qi < n_slow; qi++) {
            const int q = qi == 0 ? 1 : bp + qi;
            const double gpp = gm[bp * nb + bp], gqq = gm[q * nb + q], gpq = gm[bp * nb + q];
            const double det = gpp * gqq - gpq * gpq;
            double a = det > 0 ? (gqq * y[bp] - gpq * y[q]) / det : -1;
            double b = det > 0 ? (gpp * y[q] - gpq * y[bp]) / det : -1;
            if (!(a >= 0 && b >= 0)) { /* the better one-rate fit on the border */
                const double a1 = gpp > 0 ? fmax(y[bp] / gpp, 0.0) : 0;
                const double b1 = gqq > 0 ? fmax(y[q] / gqq, 0.0) : 0;
                const int first = a1 * y[bp] >= b1 * y[q];
                a = first ? a1 : 0;
                b = first ? 0 : b1;
            }
            if (!(a + b > 0))
                continue;
            const double cost =
                cc - 2 * (a * y[bp] + b * y[q]) + a * a * gpp + 2 * a * b * gpq + b * b * gqq;
            double theta[FM_PK_N_PARAMS], xt[FM_PK_MAX_FIT];
            for (int i = 0; i < FM_PK_N_PARAMS; i++)
                theta[i] = p->fixed[i];
            theta[FM_PK_DELAY] = p->delays[d];
            fm_pk_two_compartment_of(a, b, p->rates[bp - 2], q == 1 ? 0 : p->rates[q - 2], theta);
            const int inside = fm_pk_pack(p, theta, xt);
            if (inside > *best_inside || (inside == *best_inside && cost < *best_cost)) {
                *best_cost = cost;
                *best_inside = inside;
                for (int j = 0; j < p->n_fit; j++)
                    x[j] = xt[j];
            }
        }
    }
}

/* The start of the fit of curve c (c[i * stride]) into x (n_fit values). */
FM_HD static inline void fm_pk_start(const fm_pk_plan *p, const float *c, int stride, double *x)
{
    const int nt = p->n_times, nb = p->n_basis;
    const int murase =
        p->model == FM_PK_TOFTS || p->model == FM_PK_EXTENDED_TOFTS || p->model == FM_PK_PATLAK;
    /* int C by the trapezoid (Murase's eq. 5 discretised), and its products. */
    double cc = 0, ii = 0, ic = 0, integral = 0, prev = 0;
    for (int i = 0; i < nt; i++) {
        const double v = c[(long)i * stride];
        if (i > 0)
            integral += 0.5 * (p->times[i] - p->times[i - 1]) * (v + prev);
        prev = v;
        cc += v * v;
        ii += integral * integral;
        ic += integral * v;
    }
    double best_cost = HUGE_VAL, xd[FM_PK_MAX_FIT];
    int best_inside = -1;
    for (int d = 0; d < p->n_delays; d++) {
        const double *basis = p->basis + (size_t)d * nb * nt;
        double y[FM_PK_MAX_BASIS], z[2] = {0, 0};
        for (int b = 0; b < nb; b++)
            y[b] = 0;
        integral = 0;
        prev = 0;
        for (int i = 0; i < nt; i++) {
            const double v = c[(long)i * stride];
            if (i > 0)
                integral += 0.5 * (p->times[i] - p->times[i - 1]) * (v + prev);
            prev = v;
            for (int b = 0; b < nb; b++)
                y[b] += v * basis[(size_t)b * nt + i];
            if (murase) {
                z[0] += integral * basis[i];
                z[1] += integral * basis[(size_t)nt + i];
            }
        }
        if (!murase) {
            fm_pk_grid(p, d, y, cc, x, &best_cost, &best_inside);
            continue;
        }
        fm_pk_murase(p, d, y, z, ii, ic, xd);
        /* Murase's residual is not the model's: compare candidate delays by the model cost. */
        const double cost = p->n_delays > 1 ? fm_pk_pass(p, xd, c, stride, 0, NULL, NULL) : 0;
        if (cost < best_cost) {
            best_cost = cost;
            for (int j = 0; j < p->n_fit; j++)
                x[j] = xd[j];
        }
    }
    if (best_cost == HUGE_VAL) /* no usable grid point */
        fm_pk_typical(p, p->delays[0], x);
}
