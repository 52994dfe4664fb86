/* Where each voxel's fit starts, shared by the CPU twin and the CUDA kernel. Tofts, extended Tofts
 * and Patlak: the linear least-squares solution of their integral form (Murase, MRM 51 (2004)
 * 858, eq. 5 and its Patlak and extended forms). The two-compartment models: the linear
 * least-squares solution of theirs (Flouri, Lesnic & Sourbron, MRM 76 (2016) 998: the tissue curve
 * a linear combination of its own first and second integrals and the input's), and where that
 * solution is not physical the best point of a grid of exponential rates with the amplitudes by
 * non-negative least squares. With a fitted delay, every candidate delay of the tables is tried
 * and the lowest model cost wins. */
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

/* The two-compartment models' linear form. With I1, I2 the first and second integrals from the
 * first frame, the 2CXM (vp Cp' = Fp (Ca - Cp) + PS (Ce - Cp), ve Ce' = PS (Cp - Ce),
 * C = vp Cp + ve Ce; Laplace: (vp ve s^2 + (vp PS + ve Fp + ve PS) s + Fp PS) C =
 * Fp (vp ve s + PS (vp + ve)) Ca, divided by vp ve s^2) is exactly
 *   C = g I1 Ca + h I2 Ca - a I1 C - b I2 C,
 *   g = Fp, h = Fp PS (vp + ve) / (vp ve), a = PS / ve + (Fp + PS) / vp, b = Fp PS / (vp ve).
 * Inverted: Fp = g, vp + ve = h / b, vp = g^2 / (a g - h) (a = b (vp + ve) / Fp + Fp / vp),
 * ve = h / b - vp, PS = b vp ve / Fp. The 2CUM (ve Ce' = PS Cp) has no b: a = (Fp + PS) / vp,
 * h = Fp PS / vp, so vp = g^2 / (a g - h) again and PS = vp h / g.
 * Columns 0 I1 Ca, 1 I2 Ca (tabled with their Gram matrix), 2 -I1 C, 3 -I2 C (2CXM); z: <I1 C,
 * I1 Ca>, <I1 C, I2 Ca>, <I2 C, I1 Ca>, <I2 C, I2 Ca>; s: <I1 C, I1 C>, <I1 C, I2 C>,
 * <I2 C, I2 C>, <I1 C, C>, <I2 C, C>. Each column is scaled to unit norm before the Cholesky
 * solve (the integrals differ by orders of magnitude). Writes x (clamped into the bounds) and
 * returns 1 when the solution is physical: Fp > 0, vp > 0 and, 2CXM, ve > 0 and PS > 0 (2CUM: PS
 * below 0 is clamped to its bound). */
FM_HD static inline int fm_pk_two_compartment_linear(const fm_pk_plan *p, int d, const double *y,
                                                     const double *z, const double *s, double *x)
{
    const int nb = p->n_basis, n = p->model == FM_PK_2CXM ? 4 : 3;
    const double *gm = p->gram + (size_t)d * nb * nb;
    const int i1 = FM_PK_BASIS_INT, i2 = FM_PK_BASIS_INT2;
    double m[FM_PK_MAX_FIT * FM_PK_MAX_FIT], b[4], sc[4], sol[4];
    const double full[4][4] = {{gm[i1 * nb + i1], 0, 0, 0},
                               {gm[i2 * nb + i1], gm[i2 * nb + i2], 0, 0},
                               {-z[0], -z[1], s[0], 0},
                               {-z[2], -z[3], s[1], s[2]}};
    const double rhs[4] = {y[i1], y[i2], -s[3], -s[4]};
    FM_PK_UNROLL
    for (int r = 0; r < 4; r++) {
        if (r >= n)
            break;
        if (!(full[r][r] > 0))
            return 0;
        sc[r] = 1 / sqrt(full[r][r]);
    }
    FM_PK_UNROLL
    for (int r = 0; r < 4; r++) {
        if (r >= n)
            break;
        b[r] = rhs[r] * sc[r];
        FM_PK_UNROLL
        for (int k = 0; k < 4; k++) {
            if (k > r)
                break;
            m[r * FM_PK_MAX_FIT + k] = full[r][k] * sc[r] * sc[k];
        }
    }
    if (!fm_pk_solve_spd(m, b, n, sol))
        return 0;
    const double g = sol[0] * sc[0], h = sol[1] * sc[1], a = sol[2] * sc[2];
    const double bb = n == 4 ? sol[3] * sc[3] : 0, den = a * g - h;
    if (!(g > 0 && den > 0))
        return 0;
    const double vp = g * g / den;
    double theta[FM_PK_N_PARAMS];
    for (int i = 0; i < FM_PK_N_PARAMS; i++)
        theta[i] = p->fixed[i];
    theta[FM_PK_DELAY] = p->delays[d];
    theta[FM_PK_FP] = 6000 * g;
    theta[FM_PK_VP] = vp;
    if (n == 4) {
        if (!(bb > 0 && h > 0))
            return 0;
        const double ve = h / bb - vp;
        if (!(ve > 0))
            return 0;
        theta[FM_PK_VE] = ve;
        theta[FM_PK_PS] = 60 * bb * vp * ve / g;
    } else {
        theta[FM_PK_PS] = 60 * vp * h / g;
    }
    if (!(theta[FM_PK_FP] < HUGE_VAL && theta[FM_PK_PS] < HUGE_VAL && vp < HUGE_VAL))
        return 0;
    fm_pk_pack(p, theta, x);
    return 1;
}

/* The grid's best point for delay index d: rate pairs (fast, slow; 2CUM: slow = 0), amplitudes
 * >= 0 by least squares on the tabled Gram matrix, cost |C|^2 - 2 a.y + a.G.a. Points whose
 * parameters fall inside the bounds win over points that must be clamped. */
FM_HD static inline void fm_pk_grid(const fm_pk_plan *p, int d, const double *y, double cc,
                                    double *x, double *best_cost, int *best_inside)
{
    const int nb = p->n_basis;
    const double *gm = p->gram + (size_t)d * nb * nb;
    for (int bp = FM_PK_BASIS_RATE0; bp < nb; bp++) {
        /* Slow rate 0 (the basis int cp) first, then (2CXM) every slower grid rate. */
        const int n_slow = p->model == FM_PK_2CXM ? nb - bp : 1;
        for (int qi = 0; qi < n_slow; qi++) {
            const int q = qi == 0 ? FM_PK_BASIS_INT : bp + qi;
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
            fm_pk_two_compartment_of(a, b, p->rates[bp - FM_PK_BASIS_RATE0],
                                     q == FM_PK_BASIS_INT ? 0 : p->rates[q - FM_PK_BASIS_RATE0],
                                     theta);
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

/* The products of curve c with delay d's first nb basis curves: y[b] = <C, basis b>; z
 * (two-compartment models) <I1 C, I1 Ca>, <I1 C, I2 Ca>, <I2 C, I1 Ca>, <I2 C, I2 Ca>, (the
 * others, Murase) <I1 C, cp>, <I1 C, I1 Ca>. The linear forms read the first FM_PK_BASIS_RATE0
 * only, the grid all. */
FM_HD static inline void fm_pk_products(const fm_pk_plan *p, int d, const float *c, int stride,
                                        int nb, double *y, double *z)
{
    const int nt = p->n_times;
    const int two = p->model == FM_PK_2CXM || p->model == FM_PK_2CUM;
    const double *basis = p->basis + (size_t)d * p->n_basis * nt;
    for (int b = 0; b < nb; b++)
        y[b] = 0;
    for (int k = 0; k < 4; k++)
        z[k] = 0;
    double i1 = 0, i2 = 0, prev = 0;
    for (int i = 0; i < nt; i++) {
        const double v = c[(long)i * stride];
        if (i > 0)
            fm_pk_integrate_step(p->times[i] - p->times[i - 1], prev, v, &i1, &i2);
        prev = v;
        for (int b = 0; b < nb; b++)
            y[b] += v * basis[(size_t)b * nt + i];
        if (two) {
            const double a1 = basis[(size_t)FM_PK_BASIS_INT * nt + i];
            const double a2 = basis[(size_t)FM_PK_BASIS_INT2 * nt + i];
            z[0] += i1 * a1;
            z[1] += i1 * a2;
            z[2] += i2 * a1;
            z[3] += i2 * a2;
        } else {
            z[0] += i1 * basis[i];
            z[1] += i1 * basis[(size_t)nt + i];
        }
    }
}

/* The start of the fit of curve c (c[i * stride]) into x (n_fit values). */
FM_HD static inline void fm_pk_start(const fm_pk_plan *p, const float *c, int stride, double *x)
{
    const int nt = p->n_times;
    const int murase =
        p->model == FM_PK_TOFTS || p->model == FM_PK_EXTENDED_TOFTS || p->model == FM_PK_PATLAK;
    /* The curve's integrals (trapezoid: Murase's eq. 5 discretised; and the second integral) and
     * their products: cc = <C, C>, s as fm_pk_two_compartment_linear reads it. */
    double cc = 0, s[5] = {0, 0, 0, 0, 0}, i1 = 0, i2 = 0, prev = 0;
    for (int i = 0; i < nt; i++) {
        const double v = c[(long)i * stride];
        if (i > 0)
            fm_pk_integrate_step(p->times[i] - p->times[i - 1], prev, v, &i1, &i2);
        prev = v;
        cc += v * v;
        s[0] += i1 * i1;
        s[1] += i1 * i2;
        s[2] += i2 * i2;
        s[3] += i1 * v;
        s[4] += i2 * v;
    }
    /* The linear solution of every candidate delay; the linear forms' residuals are not the
     * model's, so candidates (and, two-compartment models, the grid's point) compete by the model
     * cost. */
    double best_cost = HUGE_VAL, xd[FM_PK_MAX_FIT];
    int best_d = -1;
    for (int d = 0; d < p->n_delays; d++) {
        double y[FM_PK_MAX_BASIS], z[4];
        fm_pk_products(p, d, c, stride, murase ? p->n_basis : FM_PK_BASIS_RATE0, y, z);
        if (murase)
            fm_pk_murase(p, d, y, z, s[0], s[3], xd);
        else if (!fm_pk_two_compartment_linear(p, d, y, z, s, xd))
            continue;
        const double cost =
            p->n_delays > 1 || !murase ? fm_pk_pass(p, xd, c, stride, 0, NULL, NULL) : 0;
        if (cost < best_cost) {
            best_cost = cost;
            best_d = d;
            for (int j = 0; j < p->n_fit; j++)
                x[j] = xd[j];
        }
    }
    if (murase) {
        if (best_cost == HUGE_VAL)
            fm_pk_typical(p, p->delays[0], x);
        return;
    }
    /* Two-compartment models: the linear form resolves rates up to about the frame rate, and
     * noise in the integrals of C biases it, so the grid's best point competes with it at the
     * linear solution's delay. Where the grid wins there (or no delay gave a physical linear
     * solution), the linear solutions cannot be trusted to place the delay either: the grid
     * searches every delay. */
    double grid_cost = HUGE_VAL;
    int grid_inside = -1, grid_won = best_d < 0;
    if (best_d >= 0) {
        double y[FM_PK_MAX_BASIS], z[4];
        fm_pk_products(p, best_d, c, stride, p->n_basis, y, z);
        fm_pk_grid(p, best_d, y, cc, xd, &grid_cost, &grid_inside);
        grid_won = grid_cost < HUGE_VAL && fm_pk_pass(p, xd, c, stride, 0, NULL, NULL) < best_cost;
    }
    if (grid_won && (p->n_delays > 1 || best_d < 0)) {
        grid_cost = HUGE_VAL;
        grid_inside = -1;
        for (int d = 0; d < p->n_delays; d++) {
            double y[FM_PK_MAX_BASIS], z[4];
            fm_pk_products(p, d, c, stride, p->n_basis, y, z);
            fm_pk_grid(p, d, y, cc, xd, &grid_cost, &grid_inside);
        }
        /* The grid over the delays ranks by its own cost: the linear solution may still be
         * better. */
        grid_won = grid_cost < HUGE_VAL &&
                   (best_d < 0 || fm_pk_pass(p, xd, c, stride, 0, NULL, NULL) < best_cost);
    }
    if (grid_won)
        for (int j = 0; j < p->n_fit; j++)
            x[j] = xd[j];
    else if (best_d < 0) /* neither a physical linear solution nor a usable grid point */
        fm_pk_typical(p, p->delays[0], x);
}
