/* The decay plot's fits: a model evaluated on the data's bins as the kernels' fits define it
 * (with the IRF convolution), and a fit of one decay (the sum over an image or ROI) with the fit
 * of a run's method family. */
#pragma once

#include <glib.h>

#include "app/core/flim/flim_model.h"

G_BEGIN_DECLS

/* The model m on bins [fit_start, fit_end) into model[n_bins] (NaN elsewhere): the kernels'
 * bin-integrated convolution with irf (n_bins values summing to 1) when irf is given, else
 * exponentials from the window's start (kernels/flim/flim_fit_math.h). Without an amplitude the
 * curve holds the photons of data in the window. FALSE when m holds no usable lifetime. */
gboolean fm_flim_model_curve(const fm_flim_pixel_model *m, const float *irf, int n_bins,
                             double bin_width_ns, int fit_start, int fit_end, const double *data,
                             double *model);

typedef struct {
    fm_flim_pixel_model model; /* what was fitted: tau_fast_ns etc. NaN for a mono fit */
    const char *method_id;     /* the fit that ran: "flim.lsm" or "flim.mle" */
    int n_exponentials;        /* 1 or 2 */
    int n_params;              /* fitted parameters (for degrees of freedom) */
    int fit_start, fit_end;    /* the bins fitted: the window's, from where the IRF has passed */
    gboolean converged;
} fm_flim_decay_fit;

/* Fits one decay (n_bins counts) in bins [fit_start, fit_end), from where the instrument's
 * response has passed (the IRF's end, else as long after the peak as the rise took; fit->fit_start
 * says where), with the fit of the run's method
 * family: MLE for an MLE run, else weighted least squares (LSM, GA, and the direct estimators,
 * whose tail they fit); with the run's IRF (irf, as the run loaded it; NULL for none) and its
 * background, model and start values (params_json, may be NULL). mixture: the decay sums pixels
 * of different lifetimes, so a mono run's sum is fitted with two exponentials as well and the
 * bi-exponential kept where it fits clearly better. FALSE (error set) when the fit fails. */
gboolean fm_flim_fit_decay(const char *method_id, const char *params_json, const double *decay,
                           int n_bins, double bin_width_ns, int fit_start, int fit_end,
                           const float *irf, gboolean mixture, fm_flim_decay_fit *fit,
                           GError **error);

G_END_DECLS
