/* The decay plot's fits: the kernels' own model (IRF convolution included) evaluated for
 * drawing, and one decay fitted by the kernels as a one-pixel image. */
#include "app/core/flim/flim_decay_fit.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/method.h"
#include "app/core/params.h"
#include "kernels/flim/flim.h"
#include "kernels/flim/flim_fit_math.h"

gboolean fm_flim_model_curve(const fm_flim_pixel_model *m, const float *irf, int n_bins,
                             double bin_width_ns, int fit_start, int fit_end, const double *data,
                             double *model)
{
    for (int b = 0; b < n_bins; b++)
        model[b] = NAN;
    fit_start = CLAMP(fit_start, 0, n_bins);
    fit_end = CLAMP(fit_end, fit_start, n_bins);
    gboolean bi = isfinite(m->tau_fast_ns) && isfinite(m->tau_slow_ns) && isfinite(m->fraction_d) &&
                  m->tau_fast_ns > 0 && m->tau_slow_ns > 0;
    if (!bi && !(isfinite(m->tau_ns) && m->tau_ns > 0))
        return FALSE;
    int n_fit = fit_end - fit_start;
    if (n_fit <= 0)
        return FALSE;
    fm_fit_setup su;
    memset(&su, 0, sizeof su);
    su.fit_start = fit_start;
    su.fit_end = fit_end;
    su.model = bi ? 2 : 1;
    su.has_irf = irf != NULL;
    su.dt = bin_width_ns;
    g_autofree double *irf_d = NULL;
    if (irf != NULL) {
        irf_d = g_new(double, n_bins);
        for (int b = 0; b < n_bins; b++)
            irf_d[b] = irf[b];
    }
    g_autofree double *e0 = g_new0(double, n_fit), *d0 = g_new0(double, n_fit);
    g_autofree double *e1 = g_new0(double, n_fit), *d1 = g_new0(double, n_fit);
    /* basis 0 is tauD (or the mono tau), basis 1 tauF: fm_fit_taus */
    double tau0 = bi ? m->tau_slow_ns : m->tau_ns, tau1 = bi ? m->tau_fast_ns : m->tau_ns;
    fm_fit_basis_fill(&su, irf_d, tau0, tau1, e0, d0, e1, d1);
    double bg = isfinite(m->background) ? m->background : 0.0;
    double amp = m->amplitude;
    if (!isfinite(amp)) {
        /* the estimate every noniterative method implies: the window's photons */
        double photons = 0, mass = 0;
        for (int i = 0; i < n_fit; i++) {
            photons += (data != NULL ? data[fit_start + i] : 0) - bg;
            mass += bi ? m->fraction_d * e0[i] + (1 - m->fraction_d) * e1[i] : e0[i];
        }
        amp = mass > 0 ? photons / mass : NAN;
    }
    if (!isfinite(amp))
        return FALSE;
    for (int i = 0; i < n_fit; i++) {
        double shape = bi ? m->fraction_d * e0[i] + (1 - m->fraction_d) * e1[i] : e0[i];
        model[fit_start + i] = amp * shape + bg;
    }
    return TRUE;
}

/* One fit of the decay with n_exp exponentials into fit; chi2 is the kernel's reduced one. */
static gboolean fit_once(fm_flim_method method, const fm_flim_params *base, const float *counts,
                         int n_exp, const double *tau_init, double fraction_init,
                         fm_flim_decay_fit *fit, double *chi2, GError **error)
{
    fm_flim_params kp = *base;
    kp.model = n_exp;
    kp.tau_init_ns[0] = tau_init[0];
    kp.tau_init_ns[1] = tau_init[1];
    kp.fraction_init = fraction_init;
    float v[FM_FLIM_OUT_COUNT];
    fm_flim_outputs out;
    memset(&out, 0, sizeof out);
    static const fm_flim_output wanted[] = {
        FM_FLIM_OUT_TAU,       FM_FLIM_OUT_TAU_FAST,   FM_FLIM_OUT_TAU_SLOW, FM_FLIM_OUT_FRACTION,
        FM_FLIM_OUT_AMPLITUDE, FM_FLIM_OUT_BACKGROUND, FM_FLIM_OUT_CHI2,     FM_FLIM_OUT_CONVERGED};
    for (gsize i = 0; i < G_N_ELEMENTS(wanted); i++) {
        v[wanted[i]] = NAN;
        out.map[wanted[i]] = &v[wanted[i]];
    }
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_flim_run(method, &kp, counts, 1, NULL, NULL, 0, &out, FM_BACKEND_CPU, NULL,
                               NULL, NULL, msg, sizeof msg);
    if (st != FM_OK) {
        fm_method_set_kernel_error(error, st, msg);
        return FALSE;
    }
    fm_flim_pixel_model *m = &fit->model;
    m->amplitude = v[FM_FLIM_OUT_AMPLITUDE];
    m->tau_ns = v[FM_FLIM_OUT_TAU];
    m->tau_fast_ns = n_exp == 2 ? v[FM_FLIM_OUT_TAU_FAST] : NAN;
    m->tau_slow_ns = n_exp == 2 ? v[FM_FLIM_OUT_TAU_SLOW] : NAN;
    m->fraction_d = n_exp == 2 ? v[FM_FLIM_OUT_FRACTION] : NAN;
    m->background = kp.fit_background ? v[FM_FLIM_OUT_BACKGROUND] : NAN;
    fit->method_id = method == FM_FLIM_MLE ? "flim.mle" : "flim.lsm";
    fit->n_exponentials = n_exp;
    fit->n_params = (n_exp == 2 ? 4 : 2) + (kp.fit_background ? 1 : 0);
    fit->converged = v[FM_FLIM_OUT_CONVERGED] > 0.5f;
    fit->fit_start = kp.fit_start;
    fit->fit_end = kp.fit_end;
    *chi2 = v[FM_FLIM_OUT_CHI2];
    if (!isfinite(m->tau_ns) || !isfinite(m->amplitude)) {
        g_set_error(error, FM_ERROR, FM_ERROR_COMPUTE, _("the fit of the decay gave no lifetime"));
        return FALSE;
    }
    return TRUE;
}

/* The first bin after 99 % of the IRF. The kernels take each IRF bin as flat over its width
 * (flim_fit_irf.h): fine for one pixel's thousand photons, but on the rise of a summed decay of
 * millions it shows (weighted residuals of 20 to 60 on the demo's one-bin-wide IRF). Once the
 * IRF has passed, the convolved model is exact but for its amplitude, which is fitted. */
static int irf_end(const float *irf, int n_bins)
{
    double total = 0, sum = 0;
    for (int b = 0; b < n_bins; b++)
        total += irf[b];
    for (int b = 0; b < n_bins; b++) {
        sum += irf[b];
        if (sum >= 0.99 * total)
            return b + 1;
    }
    return 0;
}

/* Without an IRF in the model, a tail fit starts where the instrument's response has passed:
 * as many bins after the peak as the rise before it took (from a tenth of the peak). */
static int tail_start(const double *decay, int fit_start, int fit_end)
{
    int peak = fit_start;
    for (int b = fit_start; b < fit_end; b++)
        if (decay[b] > decay[peak])
            peak = b;
    int rise = peak;
    while (rise > 0 && decay[rise - 1] >= 0.1 * decay[peak])
        rise--;
    return peak + (peak - rise);
}

gboolean fm_flim_fit_decay(const char *method_id, const char *params_json, const double *decay,
                           int n_bins, double bin_width_ns, int fit_start, int fit_end,
                           const float *irf, gboolean mixture, fm_flim_decay_fit *fit,
                           GError **error)
{
    memset(fit, 0, sizeof *fit);
    const fm_method *method = method_id != NULL ? fm_method_find(method_id) : NULL;
    g_autoptr(fm_params) params = method != NULL ? fm_method_default_params(method) : NULL;
    if (params != NULL && params_json != NULL &&
        !fm_params_set_from_json(params, params_json, error))
        return FALSE;
    const gboolean fits = params != NULL && fm_params_has(params, "model");
    int after = fits && irf != NULL ? irf_end(irf, n_bins) : tail_start(decay, fit_start, fit_end);
    if (fit_end - after >= 16)
        fit_start = MAX(fit_start, after);
    fm_flim_params kp;
    fm_flim_params_defaults(&kp, n_bins, bin_width_ns);
    kp.fit_start = fit_start;
    kp.fit_end = fit_end;
    kp.min_photons = 0;
    if (fits) { /* the run's own settings; the direct estimators assume no IRF */
        kp.fit_background = fm_params_get_bool(params, "fit_background");
        kp.max_iterations = MAX(fm_params_get_int(params, "max_iterations"), 200);
        kp.irf = irf;
    }
    int run_exp = fits && g_strcmp0(fm_params_get_choice(params, "model"), "bi") == 0 ? 2 : 1;
    fm_flim_method kmethod = g_strcmp0(method_id, "flim.mle") == 0 ? FM_FLIM_MLE : FM_FLIM_LSM;
    g_autofree float *counts = g_new(float, n_bins);
    for (int b = 0; b < n_bins; b++)
        counts[b] = (float)decay[b];

    double tau_init[2] = {fits ? fm_params_get_double(params, "tau_init_ns") : 1.0,
                          fits ? fm_params_get_double(params, "tau2_init_ns") : 3.0};
    double f_init = fits ? fm_params_get_double(params, "fraction_init") : 0.5;
    double chi2_mono = INFINITY, chi2_bi = INFINITY;
    fm_flim_decay_fit mono, bi;
    memset(&mono, 0, sizeof mono);
    memset(&bi, 0, sizeof bi);
    g_autoptr(GError) mono_error = NULL;
    gboolean have_mono = run_exp == 1 && fit_once(kmethod, &kp, counts, 1, tau_init, f_init, &mono,
                                                  &chi2_mono, &mono_error);
    if (run_exp == 1 && !mixture) {
        if (!have_mono) {
            g_propagate_error(error, g_steal_pointer(&mono_error));
            return FALSE;
        }
        *fit = mono;
        return TRUE;
    }
    /* bi-exponential: from the run's start values, or around the mono lifetime */
    if (have_mono && run_exp == 1) {
        tau_init[0] = 0.5 * mono.model.tau_ns;
        tau_init[1] = 1.5 * mono.model.tau_ns;
        f_init = 0.5;
    }
    g_autoptr(GError) bi_error = NULL;
    gboolean have_bi =
        fit_once(kmethod, &kp, counts, 2, tau_init, f_init, &bi, &chi2_bi, &bi_error);
    /* a bi-exponential only where it explains clearly more than one lifetime does */
    if (have_bi && (!have_mono || !(chi2_mono <= 1.1 * chi2_bi))) {
        *fit = bi;
        return TRUE;
    }
    if (have_mono) {
        *fit = mono;
        return TRUE;
    }
    g_propagate_error(error, g_steal_pointer(&bi_error));
    return FALSE;
}
