/* SD-OCT processing setup from oct.bscan parameters, one A-line's stages, PSF figures. */
#include "app/core/oct/oct_stages.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/oct_raw.h"
#include "app/core/method.h"
#include "app/core/oct/oct_calib.h"

void fm_oct_setup_free(fm_oct_setup *setup)
{
    if (!setup)
        return;
    g_free(setup->lambda_nm);
    g_free(setup->k_source);
    g_free(setup->background);
    g_free(setup->calibration_source);
    g_free(setup);
}

static const char *label_of(const fm_dataset *ds)
{
    if (ds->source_path) {
        const char *slash = strrchr(ds->source_path, G_DIR_SEPARATOR);
        return slash ? slash + 1 : ds->source_path;
    }
    return "dataset";
}

fm_dataset *fm_oct_spectra_from_dataset(fm_dataset *dataset, const fm_params *params,
                                        GError **error)
{
    if (g_strcmp0(fm_dataset_get_meta(dataset, FM_OCT_META_UNPARSED), "1") == 0) {
        fm_oct_raw_layout layout = {
            .pixels_per_aline = fm_params_get_int(params, "pixels_per_aline"),
            .alines_per_bscan = fm_params_get_int(params, "alines_per_bscan"),
            .n_bscans = 0,
        };
        fm_oct_raw_format_parse(fm_params_get_choice(params, "raw_format"), &layout.format);
        if (layout.pixels_per_aline <= 0 || layout.alines_per_bscan <= 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("%s: raw file without a sidecar (%s.json): set pixels_per_aline and "
                          "alines_per_bscan"),
                        label_of(dataset), label_of(dataset));
            return NULL;
        }
        return fm_oct_raw_decode_dataset(dataset, &layout, error);
    }
    if (dataset->n_dims < 2 || dataset->n_dims > 3) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: OCT spectra need pixel x A-line (x B-scan) dimensions, not %d"),
                    label_of(dataset), dataset->n_dims);
        return NULL;
    }
    if (dataset->type != FM_PIXEL_U8)
        return fm_dataset_ref(dataset);
    gsize sizes[3] = {dataset->dims[0].size, dataset->dims[1].size,
                      dataset->n_dims > 2 ? dataset->dims[2].size : 1};
    fm_dataset *wide =
        fm_dataset_new(FM_PIXEL_U16, 3, sizes, (const char *const[]){"pixel", "aline", "bscan"});
    for (gsize i = 0; i < fm_dataset_n_elements(dataset); i++)
        ((guint16 *)wide->data)[i] = ((const guint8 *)dataset->data)[i];
    wide->bits_per_sample = 8;
    wide->source_path = g_strdup(dataset->source_path);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, dataset->metadata);
    while (g_hash_table_iter_next(&it, &k, &v))
        fm_dataset_set_meta(wide, k, v);
    return wide;
}

static double *load_calibration(const fm_dataset *spectra, const fm_params *params, int n,
                                char **source, GError **error)
{
    const char *file = fm_params_get_string(params, "calibration_file");
    const char *poly = fm_params_get_string(params, "lambda_polynomial_nm");
    const char *sidecar = fm_dataset_get_meta(spectra, FM_OCT_META_CALIBRATION);
    /* a TIFF of spectra may have the same "<file>.json" sidecar naming its calibration */
    g_autofree char *from_sidecar = NULL;
    fm_oct_raw_layout unused;
    if (!sidecar && spectra->source_path && fm_oct_raw_has_sidecar(spectra->source_path) &&
        fm_oct_raw_read_sidecar(spectra->source_path, &unused, &from_sidecar, NULL))
        sidecar = from_sidecar;
    if (file && *file) {
        *source = g_strdup(file);
        return fm_oct_calib_read_csv(file, n, error);
    }
    if (poly && *poly) {
        *source = g_strdup_printf("lambda(n) = %s", poly);
        return fm_oct_calib_from_polynomial(poly, n, error);
    }
    if (sidecar) {
        *source = g_strdup(sidecar);
        return fm_oct_calib_read_csv(sidecar, n, error);
    }
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                _("%s: no wavelength calibration: set calibration_file (CSV, one wavelength in "
                  "nm per pixel) or lambda_polynomial_nm (a0,a1,a2,a3)"),
                label_of(spectra));
    return NULL;
}

fm_oct_setup *fm_oct_setup_new(const fm_dataset *spectra, const fm_params *params, GError **error)
{
    g_autoptr(fm_oct_setup) s = g_new0(fm_oct_setup, 1);
    s->n_pixels = fm_dataset_width(spectra);
    s->lambda_nm = load_calibration(spectra, params, s->n_pixels, &s->calibration_source, error);
    if (!s->lambda_nm)
        return NULL;
    s->k_source = g_new(double, s->n_pixels);
    char msg[FM_MSG_LEN] = "";
    if (fm_oct_k_positions(s->lambda_nm, s->n_pixels, s->k_source, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, "%s: %s", s->calibration_source, msg);
        return NULL;
    }
    s->um_per_bin = fm_oct_calib_um_per_bin(s->lambda_nm, s->n_pixels);

    fm_oct_params *k = &s->kernel;
    k->n_pixels = s->n_pixels;
    k->k_source = s->k_source;
    static const char *const resamples[] = {"tdi", "linear", "cubic", "zeropad"};
    const char *resample = fm_params_get_choice(params, "resample");
    for (gsize i = 0; i < G_N_ELEMENTS(resamples); i++)
        if (g_strcmp0(resample, resamples[i]) == 0)
            k->resample = (fm_oct_resample)i;
    k->taps = fm_params_get_int(params, "taps");
    const char *window = fm_params_get_choice(params, "window");
    k->window = g_strcmp0(window, "hann") == 0       ? FM_OCT_WINDOW_HANN
                : g_strcmp0(window, "gaussian") == 0 ? FM_OCT_WINDOW_GAUSSIAN
                                                     : FM_OCT_WINDOW_NONE;
    k->gaussian_sigma = fm_params_get_double(params, "gaussian_width");
    k->dispersion_a2 = fm_params_get_double(params, "dispersion_a2");
    k->dispersion_a3 = fm_params_get_double(params, "dispersion_a3");
    k->db_floor = 0.0;
    k->db_ceiling = 120.0;
    const char *background = fm_params_get_choice(params, "background");
    if (g_strcmp0(background, "file") == 0) {
        k->background = FM_OCT_BACKGROUND_GIVEN;
        s->background = fm_oct_background_mean(spectra, -1);
    } else if (g_strcmp0(background, "reference") == 0) {
        const char *ref = fm_params_get_string(params, "reference_file");
        if (!ref || !*ref) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("background 'reference' needs reference_file (spectra recorded with "
                          "the sample arm blocked)"));
            return NULL;
        }
        k->background = FM_OCT_BACKGROUND_GIVEN;
        s->background = fm_oct_background_from_file(ref, s->n_pixels, error);
        if (!s->background)
            return NULL;
    } else if (g_strcmp0(background, "none") == 0) {
        k->background = FM_OCT_BACKGROUND_NONE;
    } else {
        k->background = FM_OCT_BACKGROUND_BSCAN;
    }
    k->background_spectrum = s->background;
    if (fm_oct_check(k, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", label_of(spectra), msg);
        return NULL;
    }
    return g_steal_pointer(&s);
}

gboolean fm_oct_stages_aline(const fm_dataset *spectra, const fm_params *params, int bscan,
                             int aline, float *raw, float *subtracted, float *resampled,
                             GError **error)
{
    int n = fm_dataset_width(spectra);
    if (bscan < 0 || bscan >= fm_dataset_frames(spectra) || aline < 0 ||
        aline >= fm_dataset_height(spectra)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("A-line %d of B-scan %d is outside "
                      "the data"),
                    aline, bscan);
        return FALSE;
    }
    g_autoptr(fm_oct_setup) s = fm_oct_setup_new(spectra, params, error);
    if (!s)
        return FALSE;
    g_autofree float *spectrum = g_new(float, n);
    gsize base = ((gsize)bscan * fm_dataset_height(spectra) + aline) * n;
    for (int i = 0; i < n; i++)
        spectrum[i] = (float)fm_dataset_value(spectra, base + i);
    if (raw)
        memcpy(raw, spectrum, sizeof(float) * n);
    g_autofree float *mean = NULL;
    const float *background = s->background;
    if (s->kernel.background == FM_OCT_BACKGROUND_BSCAN)
        background = mean = fm_oct_background_mean(spectra, bscan);
    char msg[FM_MSG_LEN] = "";
    if (fm_oct_aline_stages(&s->kernel, spectrum, background, subtracted, resampled, msg,
                            sizeof msg) != FM_OK) {
        fm_method_set_kernel_error(error, FM_ERR_INVALID_ARG, msg);
        return FALSE;
    }
    return TRUE;
}

fm_dataset *fm_oct_spectra_bscan(const fm_dataset *spectra, int bscan)
{
    gsize sizes[3] = {spectra->dims[0].size, spectra->dims[1].size, 1};
    fm_dataset *one =
        fm_dataset_new(spectra->type, 3, sizes, (const char *const[]){"pixel", "aline", "bscan"});
    gsize bytes = fm_dataset_n_bytes(one);
    memcpy(one->data, (const guint8 *)spectra->data + bytes * (gsize)bscan, bytes);
    one->bits_per_sample = spectra->bits_per_sample;
    one->source_path = g_strdup(spectra->source_path);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, spectra->metadata);
    while (g_hash_table_iter_next(&it, &k, &v))
        fm_dataset_set_meta(one, k, v);
    return one;
}

void fm_oct_psf_measure(const float *aline_db, int n_depth, double um_per_bin, int min_bin,
                        int guard_bins, fm_oct_psf *psf)
{
    memset(psf, 0, sizeof *psf);
    min_bin = CLAMP(min_bin, 0, n_depth - 1);
    int peak = min_bin;
    for (int z = min_bin; z < n_depth; z++)
        if (aline_db[z] > aline_db[peak])
            peak = z;
    psf->peak_bin = peak;
    psf->peak_db = aline_db[peak];
    /* half maximum of the amplitude |A|: the dB values are 20 log10 |A| */
    double half = pow(10.0, psf->peak_db / 20.0) * 0.5;
    double edges[2] = {peak, peak};
    for (int side = 0; side < 2; side++) {
        int step = side == 0 ? -1 : 1;
        for (int z = peak; z + step >= 0 && z + step < n_depth; z += step) {
            double a0 = pow(10.0, aline_db[z] / 20.0), a1 = pow(10.0, aline_db[z + step] / 20.0);
            if (a1 < half) {
                edges[side] = z + step * (a0 - half) / (a0 - a1);
                break;
            }
            edges[side] = z + step;
        }
    }
    psf->fwhm_bins = edges[1] - edges[0];
    psf->fwhm_um = psf->fwhm_bins * um_per_bin;
    double power = 0.0;
    int count = 0;
    for (int z = min_bin; z < n_depth; z++)
        if (abs(z - peak) > guard_bins) {
            power += pow(10.0, aline_db[z] / 10.0);
            count++;
        }
    psf->noise_db = count ? 10.0 * log10(power / count) : -INFINITY;
    psf->snr_db = psf->peak_db - psf->noise_db;
}

void fm_oct_psf_measure_bscan(const float *bscan_db, int n_alines, int n_depth, double um_per_bin,
                              int min_bin, int guard_bins, fm_oct_psf *psf)
{
    /* power averaged over A-lines: the noise floor then is a mean noise power, and a random
     * per-A-line phase (as in a real mirror measurement) does not matter */
    g_autofree double *power = g_new0(double, n_depth);
    for (int a = 0; a < n_alines; a++)
        for (int z = 0; z < n_depth; z++)
            power[z] += pow(10.0, bscan_db[(gsize)a * n_depth + z] / 10.0);
    g_autofree float *mean_db = g_new(float, n_depth);
    for (int z = 0; z < n_depth; z++)
        mean_db[z] = (float)(10.0 * log10(power[z] / n_alines + 1e-30));
    fm_oct_psf_measure(mean_db, n_depth, um_per_bin, min_bin, guard_bins, psf);
}
