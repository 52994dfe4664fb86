/* Pharmacokinetic model kernels (CPU twin): the recursive convolution against a brute-force
 * fine-grid integral on non-uniform frames, each model's curve against an independent closed form
 * for a ramp input (delayed too), recovery of noise-free truth, validation, NaN curves, untouched
 * maps and cancellation. TAP. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/dce/pk_start.h"
#include "tap.h"

#define NT 40

/* Non-uniform frames: 1 s steps for the first pass, then 2.5 s, then 7 s. */
static void frames(double *t)
{
    t[0] = 0;
    for (int i = 1; i < NT; i++)
        t[i] = t[i - 1] + (i < 15 ? 1.0 : (i < 30 ? 2.5 : 7.0));
}

/* A bolus-like input sampled at the frames (the kernel takes it as linear between them). */
static double bolus(double t)
{
    return t < 3 ? 0
                 : 5 * pow((t - 3) / 6, 2) * exp(-(t - 3) / 6 * 2) + 0.4 * (1 - exp(-(t - 3) / 60));
}

/* int_t0^t exp(-k (t - u)) c(u) du for piecewise-linear c, by Simpson's rule on a fine grid of
 * each segment (independent of the recursion). */
static double brute_conv(const double *t, const double *c, int upto, double k)
{
    double s = 0;
    for (int j = 0; j < upto; j++) {
        const double dt = t[j + 1] - t[j];
        const int m = 2 * (int)fmax(200, ceil(k * dt * 100));
        const double h = dt / m;
        double seg = 0;
        for (int q = 0; q <= m; q++) {
            const double u = t[j] + q * h, w = (q == 0 || q == m) ? 1 : (q % 2 ? 4 : 2);
            const double cu = c[j] + (c[j + 1] - c[j]) * (u - t[j]) / dt;
            seg += w * exp(-k * (t[upto] - u)) * cu;
        }
        s += seg * h / 3;
    }
    return s;
}

static void test_convolution(void)
{
    double t[NT], c[NT], curve[NT];
    frames(t);
    for (int i = 0; i < NT; i++)
        c[i] = bolus(t[i]);
    /* k dt from 0 (the integral) through the series branch (< 0.05) to 350 (E underflows). */
    const double ks[] = {0, 1e-5, 1e-3, 0.01, 0.3, 2, 50};
    for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++) {
        fm_pk_coefs co = {0, {1, 0}, {ks[a], 0}, 0};
        fm_pk_curve(&co, t, c, NT, curve);
        double peak = 0, err = 0;
        for (int i = 0; i < NT; i++) {
            const double ref = brute_conv(t, c, i, ks[a]);
            peak = fmax(peak, fabs(ref));
            err = fmax(err, fabs(curve[i] - ref));
        }
        tap_ok(err <= 1e-6 * peak,
               "recursive convolution, k = %g /s, non-uniform frames: max error %.2e of the peak "
               "(<= 1e-6) against Simpson on a fine grid",
               ks[a], err / peak);
    }
}

/* R(s, tau) = int_0^tau exp(-s (tau - u)) u du. */
static double ramp_conv(double s, double tau)
{
    return s == 0 ? tau * tau / 2 : tau / s - (1 - exp(-s * tau)) / (s * s);
}

/* Closed forms for cp(t) = t (mM/s) from t = 0, the tissue starting at delay d: tau = t - d. */
static double closed_form(fm_pk_model m, const double *th, double t)
{
    const double tau = fmax(t - th[FM_PK_DELAY], 0);
    const double kt = th[FM_PK_KTRANS] / 60, ve = th[FM_PK_VE], vp = th[FM_PK_VP];
    switch (m) {
    case FM_PK_TOFTS:
        return kt * ramp_conv(kt / ve, tau);
    case FM_PK_EXTENDED_TOFTS:
        return vp * tau + kt * ramp_conv(kt / ve, tau);
    case FM_PK_PATLAK:
        return vp * tau + kt * tau * tau / 2;
    case FM_PK_2CUM: { /* OSIPI/MJT's form: Fp exp(-t/Tp) + K (1 - exp(-t/Tp)) */
        const double fp = th[FM_PK_FP] / 6000, ps = th[FM_PK_PS] / 60, tp = vp / (fp + ps);
        const double k = ps / (1 + ps / fp);
        return fp * ramp_conv(1 / tp, tau) + k * (tau * tau / 2 - ramp_conv(1 / tp, tau));
    }
    case FM_PK_2CXM: { /* Sourbron & Buckley's mean transit times T, Tc, Te (MJT's form) */
        const double fp = th[FM_PK_FP] / 6000, ps = th[FM_PK_PS] / 60;
        const double T = (ve + vp) / fp, tc = vp / fp, te = ve / ps;
        const double root = sqrt((T + te) * (T + te) - 4 * tc * te);
        const double sp = (T + te + root) / (2 * tc * te), sn = (T + te - root) / (2 * tc * te);
        const double f = sp * sn / (sp - sn);
        const double an = f * (vp * (1 - te * sn) + ve), ap = f * (vp * (te * sp - 1) - ve);
        return an * ramp_conv(sn, tau) + ap * ramp_conv(sp, tau);
    }
    default:
        return NAN;
    }
}

static void test_closed_forms(void)
{
    double t[NT], cp[NT], curve[NT];
    frames(t);
    for (int i = 0; i < NT; i++)
        cp[i] = t[i];
    /* th: ktrans, ve, vp, fp, ps, delay; delay 7 s falls on frame 7 (the kink of the held input).
     */
    const double th[] = {0.25, 0.3, 0.05, 60, 0.2, 0};
    for (int delayed = 0; delayed <= 1; delayed++)
        for (int m = 0; m < FM_PK_N_MODELS; m++) {
            fm_pk_params p;
            fm_pk_params_defaults(&p, (fm_pk_model)m);
            p.n_times = NT;
            p.times_s = t;
            p.cp = cp;
            p.fit_delay = delayed;
            double theta[FM_PK_N_PARAMS];
            memcpy(theta, th, sizeof theta);
            theta[FM_PK_DELAY] = delayed ? 7 : 0;
            char msg[FM_MSG_LEN] = "";
            const fm_status st = fm_pk_model_curve(&p, theta, curve, msg, sizeof msg);
            double peak = 0, err = 0;
            for (int i = 0; i < NT; i++) {
                const double ref = closed_form((fm_pk_model)m, theta, t[i]);
                peak = fmax(peak, fabs(ref));
                err = fmax(err, fabs(curve[i] - ref));
            }
            tap_ok(st == FM_OK && err <= 1e-9 * peak,
                   "%s curve, ramp input%s: max error %.2e of the peak (<= 1e-9) against the "
                   "closed form",
                   fm_pk_model_name((fm_pk_model)m), delayed ? " delayed 7 s" : "", err / peak);
        }
}

/* Noise-free curves of each model (delay fitted) on the non-uniform frames: the fit returns the
 * truth within 1e-3 relative (delay 0.01 s). */
static void test_recovery(void)
{
    double t[NT], cp[NT], curve[NT];
    float tissue[NT];
    frames(t);
    for (int i = 0; i < NT; i++)
        cp[i] = bolus(t[i]);
    const double th[] = {0.25, 0.3, 0.05, 60, 0.2, 2.5};
    for (int m = 0; m < FM_PK_N_MODELS; m++) {
        fm_pk_params p;
        fm_pk_params_defaults(&p, (fm_pk_model)m);
        p.n_times = NT;
        p.times_s = t;
        p.cp = cp;
        p.fit_delay = 1;
        char msg[FM_MSG_LEN] = "";
        fm_pk_model_curve(&p, th, curve, msg, sizeof msg);
        for (int i = 0; i < NT; i++)
            tissue[i] = (float)curve[i];
        double maps[FM_PK_OUT_COUNT];
        fm_pk_outputs out;
        for (int o = 0; o < FM_PK_OUT_COUNT; o++) {
            maps[o] = NAN;
            out.map[o] = &maps[o];
        }
        const fm_status st =
            fm_pk_fit(&p, tissue, 1, &out, FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
        double worst = 0;
        for (int s = 0; s < FM_PK_N_PARAMS; s++)
            if (fm_pk_model_uses(&p, s)) {
                const int o = s == FM_PK_DELAY ? FM_PK_OUT_DELAY : s; /* slots 0..4 = outputs */
                const double e = s == FM_PK_DELAY ? fabs(maps[o] - th[s]) / 0.01
                                                  : fabs(maps[o] - th[s]) / (1e-3 * th[s]);
                worst = fmax(worst, isnan(e) ? INFINITY : e);
            }
        tap_ok(st == FM_OK && worst <= 1 && maps[FM_PK_OUT_R2] > 0.999999,
               "%s: noise-free truth recovered, delay fitted (worst error / tolerance %.3f, R2 "
               "%.8f, %g iterations)",
               fm_pk_model_name((fm_pk_model)m), worst, maps[FM_PK_OUT_R2],
               maps[FM_PK_OUT_ITERATIONS]);
    }
}

/* The two-compartment models' linear least-squares start alone (Flouri, Lesnic & Sourbron's
 * integral form, pk_start.h) on noise-free curves sampled every 0.5 s for 5 minutes: Fp, PS, ve
 * (2CXM) and vp within 1 % of the truth. Then the whole start with a fitted delay (3 s, a
 * candidate of the table): it picks that delay and the same parameters. */
static void test_linear_start(void)
{
    enum { N = 601 };
    static double t[N], cp[N], curve[N];
    static float tissue[N];
    for (int i = 0; i < N; i++) {
        t[i] = 0.5 * i;
        cp[i] = bolus(t[i]);
    }
    /* ktrans (unused), ve, vp, fp, ps, delay: a fast and a slow exchange, a large vp. */
    const double cases[][FM_PK_N_PARAMS] = {
        {0, 0.3, 0.05, 60, 0.2, 0}, {0, 0.2, 0.02, 20, 0.1, 0}, {0, 0.5, 0.1, 120, 0.4, 0}};
    for (int m = FM_PK_2CXM; m <= FM_PK_2CUM; m++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            for (int delayed = 0; delayed <= 1; delayed++) {
                fm_pk_params p;
                fm_pk_params_defaults(&p, (fm_pk_model)m);
                p.n_times = N;
                p.times_s = t;
                p.cp = cp;
                p.fit_delay = delayed;
                double th[FM_PK_N_PARAMS];
                memcpy(th, cases[k], sizeof th);
                th[FM_PK_DELAY] = delayed ? 3 : 0;
                char msg[FM_MSG_LEN] = "";
                fm_pk_model_curve(&p, th, curve, msg, sizeof msg);
                for (int i = 0; i < N; i++)
                    tissue[i] = (float)curve[i];
                fm_pk_tables tab;
                if (fm_pk_tables_build(&p, &tab, msg, sizeof msg) != FM_OK) {
                    tap_ok(0, "tables: %s", msg);
                    continue;
                }
                const fm_pk_plan *pl = &tab.plan;
                double x[FM_PK_MAX_FIT] = {0}, theta[FM_PK_N_PARAMS];
                int physical = 1;
                if (delayed) {
                    fm_pk_start(pl, tissue, 1, x);
                } else { /* the linear solution itself, at delay 0 */
                    double s[5] = {0, 0, 0, 0, 0}, i1 = 0, i2 = 0, y[FM_PK_MAX_BASIS], z[4];
                    for (int i = 1; i < N; i++) {
                        fm_pk_integrate_step(t[i] - t[i - 1], tissue[i - 1], tissue[i], &i1, &i2);
                        s[0] += i1 * i1;
                        s[1] += i1 * i2;
                        s[2] += i2 * i2;
                        s[3] += i1 * tissue[i];
                        s[4] += i2 * tissue[i];
                    }
                    fm_pk_products(pl, 0, tissue, 1, FM_PK_BASIS_RATE0, y, z);
                    physical = fm_pk_two_compartment_linear(pl, 0, y, z, s, x);
                }
                fm_pk_theta_of(pl, x, theta);
                double worst = 0;
                char detail[256] = "";
                size_t len = 0;
                for (int s = FM_PK_VE; s <= FM_PK_DELAY; s++)
                    if (fm_pk_model_uses(&p, s)) {
                        const double e = s == FM_PK_DELAY ? fabs(theta[s] - th[s]) / 0.01
                                                          : fabs(theta[s] - th[s]) / (0.01 * th[s]);
                        worst = fmax(worst, isnan(e) ? INFINITY : e);
                        len += snprintf(detail + len, sizeof detail - len, " %.5g (%.5g)", theta[s],
                                        th[s]);
                    }
                tap_ok(physical && worst <= 1,
                       "%s %s, case %zu, 0.5 s frames, noise-free: parameters (truth)%s within 1 "
                       "%% (delay 0.01 s); worst error / tolerance %.3f",
                       fm_pk_model_name((fm_pk_model)m),
                       delayed ? "start, delay fitted" : "linear solution", k, detail, worst);
                fm_pk_tables_free(&tab);
            }
}

static int cancel_now(void *user, double fraction)
{
    (void)user;
    (void)fraction;
    return 1;
}

static void test_checks(void)
{
    double t[NT], cp[NT];
    frames(t);
    for (int i = 0; i < NT; i++)
        cp[i] = bolus(t[i]);
    fm_pk_params p;
    char msg[FM_MSG_LEN];
    fm_pk_params_defaults(&p, FM_PK_2CXM);
    p.n_times = NT;
    p.times_s = t;
    p.cp = cp;
    tap_ok(fm_pk_check(&p, msg, sizeof msg) == FM_OK && fm_pk_n_fitted(&p) == 4 &&
               !fm_pk_model_uses(&p, FM_PK_KTRANS) && !fm_pk_model_uses(&p, FM_PK_DELAY),
           "2CXM fits fp, ps, ve, vp (4 parameters, no ktrans, no delay)");
    p.fit_delay = 1;
    tap_ok(fm_pk_n_fitted(&p) == 5, "2CXM with delay: 5 parameters");
    t[5] = t[4];
    tap_ok(fm_pk_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG && strstr(msg, "times_s[5]"),
           "repeated frame time rejected: %s", msg);
    frames(t);
    p.lower[FM_PK_VE] = 1;
    tap_ok(fm_pk_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG && strstr(msg, "ve"),
           "ve bounds with lower = upper rejected: %s", msg);
    fm_pk_params_defaults(&p, FM_PK_TOFTS);
    p.n_times = 3;
    p.times_s = t;
    p.cp = cp;
    tap_ok(fm_pk_check(&p, msg, sizeof msg) == FM_ERR_INVALID_ARG, "3 frames rejected: %s", msg);

    /* A NaN curve: NaN in the model's maps, counted; a map the model lacks stays untouched. */
    fm_pk_params_defaults(&p, FM_PK_TOFTS);
    p.n_times = NT;
    p.times_s = t;
    p.cp = cp;
    float tissue[2 * NT];
    for (int i = 0; i < NT; i++) {
        tissue[i] = (float)(0.1 * cp[i]);
        tissue[NT + i] = i == 9 ? NAN : (float)(0.1 * cp[i]);
    }
    double ktrans[2] = {-1, -1}, fp[2] = {-7, -7}, aic[2] = {0, 0};
    fm_pk_outputs out = {{0}};
    out.map[FM_PK_OUT_KTRANS] = ktrans;
    out.map[FM_PK_OUT_FP] = fp;
    out.map[FM_PK_OUT_AIC] = aic;
    fm_run_info info;
    fm_status st =
        fm_pk_fit(&p, tissue, 2, &out, FM_BACKEND_CPU, NULL, NULL, &info, msg, sizeof msg);
    tap_ok(st == FM_OK && isfinite(ktrans[0]) && isfinite(aic[0]) && isnan(ktrans[1]) &&
               isnan(aic[1]) && fp[0] == -7 && fp[1] == -7 && info.invalid_values == 1,
           "NaN curve -> NaN maps (1 invalid), Tofts leaves the fp map untouched");
    st = fm_pk_fit(&p, tissue, 2, &out, FM_BACKEND_CPU, cancel_now, NULL, &info, msg, sizeof msg);
    tap_ok(st == FM_ERR_CANCELLED, "a tick returning 1 cancels (%s)", fm_status_name(st));
}

int main(void)
{
    test_convolution();
    test_closed_forms();
    test_recovery();
    test_linear_start();
    test_checks();
    return tap_done();
}
