/* SD-OCT spectrometer calibration files and polynomials, and background spectra. */
#include "app/core/oct/oct_calib.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/open.h"

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, G_DIR_SEPARATOR);
    return slash ? slash + 1 : path;
}

gboolean fm_oct_calib_check(const double *lambda_nm, int n_pixels, const char *label,
                            GError **error)
{
    for (int i = 0; i < n_pixels; i++)
        if (!isfinite(lambda_nm[i]) || lambda_nm[i] <= 0.0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: wavelength of pixel %d is %g nm; expected a positive number"), label,
                        i, lambda_nm[i]);
            return FALSE;
        }
    if (n_pixels < 2)
        return TRUE;
    /* lambda -> k resampling needs a one-to-one map; a single reversal makes s(n) ambiguous */
    double direction = lambda_nm[1] - lambda_nm[0];
    for (int i = 1; i < n_pixels; i++) {
        double step = lambda_nm[i] - lambda_nm[i - 1];
        if (step == 0.0 || (step > 0.0) != (direction > 0.0)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: wavelengths are not strictly monotonic: pixel %d is %g nm after "
                          "%g nm at pixel %d"),
                        label, i, lambda_nm[i], lambda_nm[i - 1], i - 1);
            return FALSE;
        }
    }
    return TRUE;
}

double *fm_oct_calib_read_csv(const char *path, int n_pixels, GError **error)
{
    const char *label = base_name(path);
    g_autofree char *text = NULL;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(path, &text, NULL, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot read: %s"), label,
                    local->message);
        return NULL;
    }
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(double));
    for (int i = 0; lines[i]; i++) {
        char *line = g_strstrip(lines[i]);
        if (!*line || line[0] == '#')
            continue;
        /* "740.5," or "740.5;..." from spreadsheets: the first field is the value */
        char *comma = strpbrk(line, ",;\t");
        if (comma)
            *comma = '\0';
        char *end = NULL;
        double v = g_ascii_strtod(line, &end);
        if (end == line || *g_strstrip(end)) {
            if (values->len == 0 && i == 0)
                continue; /* a header line */
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: line %d: '%s' is not a wavelength in nm"), label, i + 1, line);
            return NULL;
        }
        g_array_append_val(values, v);
    }
    if ((int)values->len != n_pixels) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: holds %u wavelengths but the spectra have %d pixels per A-line"), label,
                    values->len, n_pixels);
        return NULL;
    }
    if (!fm_oct_calib_check((const double *)values->data, n_pixels, label, error))
        return NULL;
    return (double *)g_array_free(g_steal_pointer(&values), FALSE);
}

double *fm_oct_calib_from_polynomial(const char *coefficients, int n_pixels, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(coefficients ? coefficients : "", ",", -1);
    double a[4] = {0, 0, 0, 0};
    int n = 0;
    for (; parts[n]; n++) {
        char *part = g_strstrip(parts[n]);
        char *end = NULL;
        double v = g_ascii_strtod(part, &end);
        if (n >= 4 || end == part || *end || !isfinite(v)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("wavelength polynomial '%s': expected up to four numbers a0,a1,a2,a3 "
                          "(nm)"),
                        coefficients);
            return NULL;
        }
        a[n] = v;
    }
    if (n == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("wavelength polynomial is empty; expected a0,a1,a2,a3 (nm)"));
        return NULL;
    }
    double *lambda = g_new(double, MAX(n_pixels, 1));
    for (int i = 0; i < n_pixels; i++)
        lambda[i] = a[0] + i * (a[1] + i * (a[2] + i * a[3]));
    g_autofree char *label = g_strdup_printf(_("wavelength polynomial '%s'"), coefficients);
    g_autoptr(GError) local = NULL;
    if (!fm_oct_calib_check(lambda, n_pixels, label, &local)) {
        g_set_error_literal(error, FM_ERROR, FM_ERROR_BAD_PARAM, local->message);
        g_free(lambda);
        return NULL;
    }
    return lambda;
}

gboolean fm_oct_calib_write_csv(const char *path, const double *lambda_nm, int n_pixels,
                                GError **error)
{
    g_autoptr(GString) text = g_string_new(NULL);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int i = 0; i < n_pixels; i++)
        g_string_append_printf(text, "%s\n",
                               g_ascii_formatd(buf, sizeof buf, "%.9f", lambda_nm[i]));
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text->str, (gssize)text->len, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: %s"), path, local->message);
        return FALSE;
    }
    return TRUE;
}

double fm_oct_calib_um_per_bin(const double *lambda_nm, int n_pixels)
{
    /* k in rad/um from lambda in nm */
    double k_first = 2.0 * G_PI / (lambda_nm[0] * 1e-3);
    double k_last = 2.0 * G_PI / (lambda_nm[n_pixels - 1] * 1e-3);
    double dk = fabs(k_last - k_first) / (n_pixels - 1);
    return G_PI / (n_pixels * dk);
}

float *fm_oct_background_mean(const fm_dataset *spectra, int bscan)
{
    int n_pixels = fm_dataset_width(spectra), n_alines = fm_dataset_height(spectra);
    int n_bscans = fm_dataset_frames(spectra);
    int first = bscan < 0 ? 0 : bscan, last = bscan < 0 ? n_bscans : bscan + 1;
    g_autofree double *sum = g_new0(double, n_pixels);
    for (int b = first; b < last; b++)
        for (int a = 0; a < n_alines; a++) {
            gsize base = ((gsize)b * n_alines + a) * n_pixels;
            for (int p = 0; p < n_pixels; p++)
                sum[p] += fm_dataset_value(spectra, base + p);
        }
    double count = (double)(last - first) * n_alines;
    float *mean = g_new(float, n_pixels);
    for (int p = 0; p < n_pixels; p++)
        mean[p] = (float)(sum[p] / count);
    return mean;
}

float *fm_oct_background_from_file(const char *path, int n_pixels, GError **error)
{
    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, error);
    if (!ds)
        return NULL;
    if (g_strcmp0(fm_dataset_get_meta(ds, FM_OCT_META_UNPARSED), "1") == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: reference file has no sidecar (%s.json) giving its layout"),
                    base_name(path), base_name(path));
        return NULL;
    }
    if (fm_dataset_width(ds) != n_pixels) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: reference spectra have %d pixels per A-line, the data %d"),
                    base_name(path), fm_dataset_width(ds), n_pixels);
        return NULL;
    }
    return fm_oct_background_mean(ds, -1);
}
