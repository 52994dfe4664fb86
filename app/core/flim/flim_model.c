/* FLIM decay model from fitted maps: evaluates a pixel's mono- or bi-exponential fit so that the
 * GUI can draw it over the measured decay with weighted residuals. */
#include "app/core/flim/flim_model.h"

#include <math.h>
#include <string.h>

#include "app/core/flim/flim_prep.h"

static double map_value(const fm_result *r, const char *name, gsize p)
{
    const fm_map *m = fm_result_get_map(r, name);
    if (m == NULL || p >= (gsize)m->width * m->height)
        return NAN;
    return m->data[p];
}

gboolean fm_flim_pixel_model_from_result(const fm_result *result, gsize p, fm_flim_pixel_model *out)
{
    out->amplitude = map_value(result, "amplitude", p);
    out->tau_ns = map_value(result, "tau", p);
    out->tau_fast_ns = map_value(result, "tau_fast", p);
    out->tau_slow_ns = map_value(result, "tau_slow", p);
    out->fraction_d = map_value(result, "fraction_d", p);
    out->background = map_value(result, "background", p);
    if (!isfinite(out->tau_ns) && !isfinite(out->tau_fast_ns))
        out->tau_ns = map_value(result, "tau_avg_amp", p);
    return isfinite(out->tau_ns) || (isfinite(out->tau_fast_ns) && isfinite(out->tau_slow_ns));
}

/* Shape of the decay at t (ns) with unit amplitude. */
static double shape(const fm_flim_pixel_model *m, double t)
{
    if (isfinite(m->tau_fast_ns) && isfinite(m->tau_slow_ns) && isfinite(m->fraction_d) &&
        m->tau_fast_ns > 0 && m->tau_slow_ns > 0)
        return m->fraction_d * exp(-t / m->tau_slow_ns) +
               (1.0 - m->fraction_d) * exp(-t / m->tau_fast_ns);
    if (isfinite(m->tau_ns) && m->tau_ns > 0)
        return exp(-t / m->tau_ns);
    return NAN;
}

void fm_flim_model_add(const fm_flim_pixel_model *m, int n_bins, double bin_width_ns, int fit_start,
                       int fit_end, const double *data, double *model)
{
    fit_start = CLAMP(fit_start, 0, n_bins);
    fit_end = CLAMP(fit_end, fit_start, n_bins);
    double bg = isfinite(m->background) ? m->background : 0.0;
    double amp = m->amplitude;
    if (!isfinite(amp)) {
        /* Match the photons of the fit range: the estimate every noniterative method implies. */
        double photons = 0, mass = 0;
        for (int b = fit_start; b < fit_end; b++) {
            photons += (data != NULL ? data[b] : 0) - bg;
            mass += shape(m, (b - fit_start + 0.5) * bin_width_ns);
        }
        amp = mass > 0 && isfinite(mass) ? photons / mass : NAN;
    }
    if (!isfinite(amp))
        return;
    for (int b = fit_start; b < fit_end; b++)
        model[b] += amp * shape(m, (b - fit_start + 0.5) * bin_width_ns) + bg;
}

void fm_flim_weighted_residuals(const double *data, const double *model, int n_bins, int fit_start,
                                int fit_end, double *residuals)
{
    for (int b = 0; b < n_bins; b++)
        residuals[b] =
            b >= fit_start && b < fit_end ? (data[b] - model[b]) / sqrt(MAX(data[b], 1.0)) : NAN;
}

void fm_flim_pixel_decay(const fm_dataset *ds, int x, int y, double *out)
{
    int w = fm_dataset_width(ds), h = fm_dataset_height(ds), n = fm_dataset_frames(ds);
    if (x < 0 || y < 0 || x >= w || y >= h) {
        memset(out, 0, sizeof(double) * (gsize)n);
        return;
    }
    gsize plane = (gsize)w * h, p = (gsize)y * w + x;
    for (int b = 0; b < n; b++)
        out[b] = fm_dataset_value(ds, (gsize)b * plane + p);
}

double fm_flim_bin_width_ns(const fm_dataset *ds)
{
    double ns = 0.0;
    /* The methods' own rule (t spacing in ns or ps, metadata, "bin_width_ps=" in a TIFF's
     * description), so the GUI calls FLIM exactly what the methods can run on. */
    return fm_flim_prep_bin_width(ds, 0.0, &ns, NULL) ? ns : 0.0;
}

gboolean fm_flim_dataset_is_flim(const fm_dataset *ds)
{
    return ds != NULL && ds->n_dims >= 3 && fm_flim_bin_width_ns(ds) > 0;
}
