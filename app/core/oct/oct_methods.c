/* Registry entry for SD-OCT: raw spectra to B-scans in dB (oct.bscan) and an en-face projection. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/methods.h"
#include "app/core/oct/oct_live.h"
#include "app/core/oct/oct_stages.h"


static const char *const resample_choices[] = {"tdi", "linear", "cubic", "zeropad", NULL};
static const char *const window_choices[] = {"none", "hann", "gaussian", NULL};
static const char *const background_choices[] = {"bscan", "file", "reference", "none", NULL};
static const char *const raw_format_choices[] = {"u16", "u12packed", "u8", NULL};

static const fm_param_spec oct_params[] = {
    {.key = "resample",
     .type = FM_PARAM_ENUM,
     .title = N_("Resampling"),
     .default_choice = "tdi",
     .choices = resample_choices,
     .help = N_("lambda to k: tdi (time-domain interpolation, Li et al. 2011), linear, cubic "
                "(Catmull-Rom), zeropad (FFT zero-padding x4 then linear).")},
    {.key = "taps",
     .type = FM_PARAM_INT,
     .title = N_("TDI taps L"),
     .default_value = 21,
     .min = 3,
     .max = 63,
     .odd_only = TRUE,
     .help = N_("Cutoff window of the time-domain interpolation: odd, 11, 21 or 31 in the "
                "paper.")},
    {.key = "window",
     .type = FM_PARAM_ENUM,
     .title = N_("Spectral window"),
     .default_choice = "hann",
     .choices = window_choices,
     .help = N_("Window over the spectrum before the FFT: lower side lobes, wider peak.")},
    {.key = "gaussian_width",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Gaussian width"),
     .default_value = 0.25,
     .min = 0.01,
     .max = 10,
     .unit = "1",
     .help = N_("Standard deviation of the Gaussian window as a fraction of the pixels.")},
    {.key = "dispersion_a2",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Dispersion a2"),
     .default_value = 0,
     .min = -1e4,
     .max = 1e4,
     .unit = "rad",
     .help = N_("Second-order phase a2 (k-k0)^2 removed, k normalised to -1..1.")},
    {.key = "dispersion_a3",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Dispersion a3"),
     .default_value = 0,
     .min = -1e4,
     .max = 1e4,
     .unit = "rad",
     .help = N_("Third-order phase a3 (k-k0)^3 removed, k normalised to -1..1.")},
    {.key = "background",
     .type = FM_PARAM_ENUM,
     .title = N_("Background"),
     .default_choice = "bscan",
     .choices = background_choices,
     .help = N_("Spectrum subtracted from every A-line: mean of its B-scan, of the whole file, "
                "of a reference file, or none.")},
    {.key = "calibration_file",
     .type = FM_PARAM_STRING,
     .title = N_("Calibration file"),
     .default_choice = "",
     .help = N_("CSV with one wavelength (nm) per pixel; empty: the polynomial, else the "
                "sidecar's calibration_file.")},
    {.key = "lambda_polynomial_nm",
     .type = FM_PARAM_STRING,
     .title = N_("Wavelength polynomial"),
     .default_choice = "",
     .help = N_("lambda(n) = a0 + a1 n + a2 n^2 + a3 n^3 in nm, given as \"a0,a1,a2,a3\".")},
    {.key = "reference_file",
     .type = FM_PARAM_STRING,
     .title = N_("Reference file"),
     .default_choice = "",
     .help = N_("Spectra with the sample arm blocked, for background 'reference'.")},
    {.key = "pixels_per_aline",
     .type = FM_PARAM_INT,
     .title = N_("Pixels per A-line"),
     .default_value = 0,
     .min = 0,
     .max = 65536,
     .unit = "px",
     .help = N_("Layout of a raw file without sidecar (0: from the sidecar).")},
    {.key = "alines_per_bscan",
     .type = FM_PARAM_INT,
     .title = N_("A-lines per B-scan"),
     .default_value = 0,
     .min = 0,
     .max = 1000000,
     .help = N_("Layout of a raw file without sidecar (0: from the sidecar).")},
    {.key = "raw_format",
     .type = FM_PARAM_ENUM,
     .title = N_("Raw format"),
     .default_choice = "u16",
     .choices = raw_format_choices,
     .help = N_("Samples of a raw file without sidecar: uint16 little-endian, 12-bit packed "
                "(Mono12p), uint8.")},
    {.key = "enface_start_um",
     .type = FM_PARAM_DOUBLE,
     .title = N_("En-face from"),
     .default_value = 0,
     .min = 0,
     .max = 1e6,
     .unit = "um",
     .help = N_("Shallowest depth of the en-face projection.")},
    {.key = "enface_end_um",
     .type = FM_PARAM_DOUBLE,
     .title = N_("En-face to"),
     .default_value = 0,
     .min = 0,
     .max = 1e6,
     .unit = "um",
     .help = N_("Deepest depth of the en-face projection (0: the deepest bin).")},
    {.key = "enface_start_px",
     .type = FM_PARAM_INT,
     .title = N_("En-face from (bins)"),
     .default_value = 0,
     .min = 0,
     .max = 65536,
     .unit = "px",
     .help = N_("En-face range in depth bins instead of um when enface_end_px > 0.")},
    {.key = "enface_end_px",
     .type = FM_PARAM_INT,
     .title = N_("En-face to (bins)"),
     .default_value = 0,
     .min = 0,
     .max = 65536,
     .unit = "px",
     .help = N_("Last depth bin (exclusive) of the en-face projection; 0: use the um range.")},
};

static const fm_output_spec oct_outputs[] = {
    {.name = "bscan_db", .unit = "dB", .title = N_("B-scan (depth x A-lines), one per frame")},
    {.name = "enface", .unit = "dB", .title = N_("En-face mean projection (A-lines x B-scans)")},
};

gboolean fm_oct_enface_range(const fm_params *params, double um_per_bin, int n_depth, int *first,
                             int *last, GError **error)
{
    int px_end = fm_params_get_int(params, "enface_end_px");
    double um_start = fm_params_get_double(params, "enface_start_um");
    double um_end = fm_params_get_double(params, "enface_end_um");
    if (px_end > 0) {
        *first = fm_params_get_int(params, "enface_start_px");
        *last = MIN(px_end, n_depth);
    } else {
        *first = (int)floor(um_start / um_per_bin);
        *last = um_end > 0.0 ? MIN((int)ceil(um_end / um_per_bin), n_depth) : n_depth;
    }
    if (*first < 0 || *first >= *last) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("en-face depth range %d..%d bins (%.1f..%.1f um) is empty; the depth axis "
                      "has %d bins of %.3f um"),
                    *first, *last, *first * um_per_bin, *last * um_per_bin, n_depth, um_per_bin);
        return FALSE;
    }
    return TRUE;
}

static fm_result *oct_run(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                          GPtrArray *rois, fm_job_context *context, GError **error)
{
    g_autoptr(fm_dataset) spectra = fm_oct_spectra_from_dataset(dataset, params, error);
    if (!spectra)
        return NULL;
    g_autoptr(fm_oct_setup) setup = fm_oct_setup_new(spectra, params, error);
    if (!setup)
        return NULL;
    int n_pixels = setup->n_pixels, n_depth = n_pixels / 2;
    int n_alines = fm_dataset_height(spectra), n_bscans = fm_dataset_frames(spectra);
    int first = 0, last = 0;
    if (!fm_oct_enface_range(params, setup->um_per_bin, n_depth, &first, &last, error))
        return NULL;

    /* every value is written below, B-scan by B-scan */
    fm_map *bscan = fm_map_new_uninit("bscan_db", "dB", n_alines, n_depth, n_bscans);
    fm_map *enface = fm_map_new_uninit("enface", "dB", n_alines, n_bscans, 1);
    fm_backend backend = context ? context->backend : FM_BACKEND_AUTO;
    fm_run_info info;
    memset(&info, 0, sizeof info);
    char msg[FM_MSG_LEN] = "";
    /* The kernels write the maps as shown, depth down, with the en-face image: no scratch copy
     * and no pass over the B-scans here (on a GPU it would be most of a re-run's time). */
    fm_status status = fm_oct_bscans_depth_down(
        &setup->kernel, spectra->data, spectra->type, n_alines, n_bscans, bscan->data,
        enface->data, first, last, backend, context ? fm_method_tick : NULL, context, &info,
        msg, sizeof msg);
    if (status != FM_OK) {
        fm_map_free(bscan);
        fm_map_free(enface);
        fm_method_set_kernel_error(error, status, msg);
        return NULL;
    }
    double elapsed_ms = info.elapsed_ms;
    fm_method_kernel_done(context, &info);

    fm_result *result = fm_result_new(method->id);
    result->backend = g_strdup(info.backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
    result->device = g_strdup(info.device_name);
    GString *note = g_string_new(NULL);
    g_string_append_printf(note,
                           _("depth %.3f um per bin over %d bins; en-face bins %d..%d; "
                             "%.0f A-lines/s in the kernels"),
                           setup->um_per_bin, n_depth, first, last,
                           elapsed_ms > 0 ? (double)n_alines * n_bscans / (elapsed_ms * 1e-3)
                                          : 0.0);
    if (info.fell_back)
        g_string_append_printf(note, _("; fell back to the CPU: %s"), info.fallback_reason);
    result->note = g_string_free(note, FALSE);
    fm_result_add_map(result, bscan);
    fm_result_add_map(result, enface);
    (void)rois;
    return result;
}

const fm_method fm_method_oct_bscan = {
    .id = "oct.bscan",
    .family = "oct",
    .title = N_("SD-OCT B-scans"),
    .description = N_("Raw spectrometer spectra to B-scans in dB: background subtraction, "
                      "spectral window, resampling from wavelength to linear wavenumber, "
                      "dispersion compensation, FFT and log magnitude; plus an en-face mean "
                      "projection over a depth range. Time-domain interpolation after Li, Shi, "
                      "Zhang, J. Innov. Opt. Health Sci. 4(1) 89 (2011)."),
    .params = oct_params,
    .n_params = G_N_ELEMENTS(oct_params),
    .outputs = oct_outputs,
    .n_outputs = G_N_ELEMENTS(oct_outputs),
    .device_reads_dataset = TRUE,
    .run = oct_run,
    .live = &fm_oct_live_bscan_ops,
};
