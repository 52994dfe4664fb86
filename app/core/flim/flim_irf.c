/* IRF and reference decays from files onto the data's time bins, resampled where the file was
 * recorded with other bins (area-preserving, so the IRF's weight and centroid stay). */
#include "app/core/flim/flim_irf.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/error.h"
#include "app/core/flim/flim_prep.h"

void fm_flim_resample_decay(const double *src, int n_src, double src_start_ns, double src_bin_ns,
                            int n_bins, double bin_width_ns, double *out)
{
    for (int b = 0; b < n_bins; b++)
        out[b] = 0.0;
    /* each source bin is split over the data bins it overlaps, by the overlap's share of its
     * width; both axes rise, so one sweep visits each pair once */
    for (int j = 0; j < n_src; j++) {
        if (src[j] == 0.0)
            continue;
        const double lo = src_start_ns + j * src_bin_ns, hi = lo + src_bin_ns;
        int b = (int)floor(lo / bin_width_ns);
        for (b = MAX(b, 0); b < n_bins; b++) {
            const double b_lo = b * bin_width_ns, b_hi = b_lo + bin_width_ns;
            if (b_lo >= hi)
                break;
            const double overlap = MIN(hi, b_hi) - MAX(lo, b_lo);
            if (overlap > 0.0)
                out[b] += src[j] * (overlap / src_bin_ns);
        }
    }
}

float *fm_flim_load_decay_resampled(const char *path, int n_bins, double bin_width_ns,
                                    const char *what, GString *note, GError **error)
{
    double file_bin_ns = 0.0, file_start_ns = 0.0;
    g_autoptr(GArray) values =
        fm_flim_prep_read_decay(path, what, &file_bin_ns, &file_start_ns, error);
    if (values == NULL)
        return NULL;
    if (!fm_flim_prep_check_decay(values, path, what, error))
        return NULL;
    const int n_src = (int)values->len;
    const double *src = (const double *)values->data;
    /* the same bins, or a bin width that rounds to the data's (a time column printed to a few
     * digits): taken as they are */
    const gboolean same_width =
        file_bin_ns == 0.0 || fabs(file_bin_ns - bin_width_ns) <= 1e-4 * bin_width_ns;
    const gboolean as_is = n_src == n_bins && same_width && fabs(file_start_ns) < 1e-9;
    g_autofree double *on_bins = g_new(double, n_bins);
    if (as_is) {
        for (int b = 0; b < n_bins; b++)
            on_bins[b] = src[b];
    } else {
        const gboolean assumed = file_bin_ns == 0.0;
        const double src_bin_ns = assumed ? n_bins * bin_width_ns / n_src : file_bin_ns;
        fm_flim_resample_decay(src, n_src, file_start_ns, src_bin_ns, n_bins, bin_width_ns,
                               on_bins);
        if (note) {
            if (note->len)
                g_string_append(note, "; ");
            if (assumed)
                g_string_append_printf(note,
                                       _("%s: %d bins resampled onto the data's %d bins of %.4g "
                                         "ps (the file gives no bin width: taken to span the "
                                         "data's %.4g ns)"),
                                       what, n_src, n_bins, bin_width_ns * 1e3,
                                       n_bins * bin_width_ns);
            else
                g_string_append_printf(note,
                                       _("%s: %d bins of %.4g ps resampled onto the data's %d "
                                         "bins of %.4g ps"),
                                       what, n_src, src_bin_ns * 1e3, n_bins, bin_width_ns * 1e3);
        }
    }
    double sum = 0.0;
    for (int b = 0; b < n_bins; b++)
        sum += on_bins[b];
    if (!(sum > 0.0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s file %s: nothing of it falls in the data's time range (0–%g ns)"), what,
                    path, n_bins * bin_width_ns);
        return NULL;
    }
    float *decay = g_new(float, n_bins);
    for (int b = 0; b < n_bins; b++)
        decay[b] = (float)(on_bins[b] / sum);
    return decay;
}
