/* The dce.dual_input model curve for views: the kernels' fm_dce_model behind a GLib API. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Parameter vector order, as in the dce.dual_input output maps. */
enum {
    FM_DCE_MODEL_KA = 0, /* ml/100g/min */
    FM_DCE_MODEL_KP,     /* ml/100g/min */
    FM_DCE_MODEL_KL,     /* ml/100g/min */
    FM_DCE_MODEL_TAU_A,  /* s */
    FM_DCE_MODEL_TAU_P,  /* s */
    FM_DCE_MODEL_N_PARAMS,
};

/* Cl(t) = (ka Ca(t - tau_a) + kp Cp(t - tau_p)) convolved with exp(-kl t) at the n frame times,
 * computed exactly as the fit computes it (same grid step model_dt_s, 0 = the smallest frame
 * interval), so a fitted curve drawn over its data is the curve the fit minimised.
 * FM_ERROR_BAD_INPUT with the kernel's message on bad input. */
gboolean fm_dce_model_curve(const double *times_s, const double *ca, const double *cp, int n,
                            double model_dt_s, const double theta[FM_DCE_MODEL_N_PARAMS],
                            double *curve, GError **error);

G_END_DECLS
