/* FLIM decay model from fitted maps, for drawing a pixel's or ROI's fit and its residuals. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"
#include "app/core/result.h"

G_BEGIN_DECLS

/* One pixel's model, read from a result's maps. NaN fields are absent. The model is
 * I(t) = A * (fD exp(-t/tauD) + (1 - fD) exp(-t/tauF)) + b for bi-exponential results (tau_fast,
 * tau_slow and fraction_d present), else A exp(-t/tau) + b, with bin i of the fit range at its
 * centre t = (i + 0.5) dt (the kernels' convention, kernels/flim/flim_math.h: A is the model at
 * t = 0 in counts per bin). */
typedef struct {
    double amplitude, tau_ns, tau_fast_ns, tau_slow_ns, fraction_d, background;
} fm_flim_pixel_model;

/* Reads pixel index p of the maps "amplitude", "tau", "tau_fast", "tau_slow", "fraction_d",
 * "background"; FALSE when no lifetime is finite there. */
gboolean fm_flim_pixel_model_from_result(const fm_result *result, gsize p,
                                         fm_flim_pixel_model *out);

/* Adds the model of one pixel to model[0..n_bins). Bins outside [fit_start, fit_end) get nothing.
 * When the amplitude is absent (noniterative estimators give only lifetimes) the curve is scaled
 * so that its photons over the fit range equal those of `data` (n_bins counts of that pixel). */
void fm_flim_model_add(const fm_flim_pixel_model *m, int n_bins, double bin_width_ns, int fit_start,
                       int fit_end, const double *data, double *model);

/* Weighted residuals (y - m) / sqrt(max(y, 1)) (Neyman weights, as the kernels' chi-square);
 * NaN outside the fit range. */
void fm_flim_weighted_residuals(const double *data, const double *model, int n_bins, int fit_start,
                                int fit_end, double *residuals);

/* Photon counts per time bin of one pixel (x, y) of an x,y,t dataset into out[n_bins]. */
void fm_flim_pixel_decay(const fm_dataset *ds, int x, int y, double *out);

/* Bin width in ns of an x,y,t dataset as the FLIM methods find it, or 0 when it has none. */
double fm_flim_bin_width_ns(const fm_dataset *ds);
/* TRUE for a dataset that looks like FLIM: a third dim in ns, or bin_width_ps metadata. */
gboolean fm_flim_dataset_is_flim(const fm_dataset *ds);

G_END_DECLS
