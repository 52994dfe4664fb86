/* Registry entries for fluorescence lifetime imaging: the noniterative estimators and the fits
 * of Wu, Nowotny, Chen, Li, J. Biomed. Opt. 21(1) 017001 (2016), run through kernels/flim. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/flim/flim_auto.h"
#include "app/core/flim/flim_irf.h"
#include "app/core/flim/flim_prep.h"
#include "app/core/flim/flim_window.h"
#include "app/core/methods.h"
#include "kernels/flim/flim.h"

static const char *const model_choices[] = {"mono", "bi", NULL};

/* Parameters every FLIM method has. */
#define COMMON_SPECS                                                                               \
    {.key = "fit_start_ns",                                                                        \
     .type = FM_PARAM_DOUBLE,                                                                      \
     .title = N_("Fit start"),                                                                     \
     .default_value = FM_FLIM_AUTO,                                                                \
     .min = FM_FLIM_AUTO,                                                                          \
     .max = 1e6,                                                                                   \
     .unit = "ns",                                                                                 \
     .auto_at_min = TRUE,                                                                          \
     .help = N_("Start of the time range used; auto (-1): the peak of the summed decay, or the "   \
                "IRF's onset when an IRF file is given; 0 and 0 use every bin.")},                 \
        {.key = "fit_end_ns",                                                                      \
         .type = FM_PARAM_DOUBLE,                                                                  \
         .title = N_("Fit end"),                                                                   \
         .default_value = FM_FLIM_AUTO,                                                            \
         .min = FM_FLIM_AUTO,                                                                      \
         .max = 1e6,                                                                               \
         .unit = "ns",                                                                             \
         .auto_at_min = TRUE,                                                                      \
         .help = N_("End of the time range used; 0 means the last bin; auto (-1): where the "      \
                    "tail sinks into the background, or the end of the laser period.")},           \
        {.key = "binning",                                                                         \
         .type = FM_PARAM_INT,                                                                     \
         .title = N_("Binning"),                                                                   \
         .default_value = 1,                                                                       \
         .min = 1,                                                                                 \
         .max = FM_FLIM_MAX_BINNING,                                                               \
         .unit = "px",                                                                             \
         .help = N_("Sums the decays of k x k neighbours into each pixel (more photons, less "     \
                    "resolution); the map keeps its size.")},                                      \
        {.key = "min_photons",                                                                     \
         .type = FM_PARAM_DOUBLE,                                                                  \
         .title = N_("Minimum photons"),                                                           \
         .default_value = FM_FLIM_AUTO,                                                            \
         .min = FM_FLIM_AUTO,                                                                      \
         .max = 1e9,                                                                               \
         .unit = "photons",                                                                        \
         .auto_at_min = TRUE,                                                                      \
         .help = N_("Pixels with fewer photons in the fit range (after binning) are left out; "    \
                    "auto (-1): 5 % of the brightest pixels' photons, at least 10.")},             \
    {                                                                                              \
        .key = "bin_width_ps", .type = FM_PARAM_DOUBLE, .title = N_("Bin width"),                  \
        .default_value = 0, .min = 0, .max = 1e6, .unit = "ps",                                    \
        .help = N_("Time-bin width; 0 takes it from the file (needed for a TIFF without it).")     \
    }

/* Parameters of the fits that model the decay (LSM, MLE, GA). */
#define FIT_SPECS(default_model, tau_help)                                                         \
    {.key = "model",                                                                               \
     .type = FM_PARAM_ENUM,                                                                        \
     .title = N_("Model"),                                                                         \
     .default_choice = default_model,                                                              \
     .choices = model_choices,                                                                     \
     .help = N_("mono: one lifetime; bi: tauF and tauD with the fraction fD (FRET).")},            \
        {.key = "irf_file",                                                                        \
         .type = FM_PARAM_STRING,                                                                  \
         .title = N_("IRF file"),                                                                  \
         .default_choice = "",                                                                     \
         .help = N_("Instrument response: CSV (one value or \"t,value\" per line), a "             \
                    "single-pixel decay TIFF with one value per bin, or a .ptu/.pt3 point "        \
                    "measurement; other bins than the data's are resampled onto them; empty = "    \
                    "none.")},                                                                     \
        {.key = "fit_background",                                                                  \
         .type = FM_PARAM_BOOL,                                                                    \
         .title = N_("Fit background"),                                                            \
         .default_value = 0,                                                                       \
         .help = N_("Fits a constant background per bin as well.")},                               \
        {.key = "max_iterations",                                                                  \
         .type = FM_PARAM_INT,                                                                     \
         .title = N_("Maximum iterations"),                                                        \
         .default_value = 100,                                                                     \
         .min = 1,                                                                                 \
         .max = 10000,                                                                             \
         .help = N_("Iterations before a pixel is given up as not converged.")},                   \
        {.key = "tau_init_ns",                                                                     \
         .type = FM_PARAM_DOUBLE,                                                                  \
         .title = N_("Start tau"),                                                                 \
         .default_value = 1.0,                                                                     \
         .min = 0.001,                                                                             \
         .max = 1000,                                                                              \
         .unit = "ns",                                                                             \
         .help = tau_help},                                                                        \
        {.key = "tau2_init_ns",                                                                    \
         .type = FM_PARAM_DOUBLE,                                                                  \
         .title = N_("Start tauD"),                                                                \
         .default_value = 3.0,                                                                     \
         .min = 0.001,                                                                             \
         .max = 1000,                                                                              \
         .unit = "ns",                                                                             \
         .help = N_("Start value of the slow lifetime tauD (bi model).")},                         \
    {                                                                                              \
        .key = "fraction_init", .type = FM_PARAM_DOUBLE, .title = N_("Start fD"),                  \
        .default_value = 0.5, .min = 0, .max = 1, .unit = "1",                                     \
        .help = N_("Start value of the amplitude fraction fD of tauD (bi model).")                 \
    }

#define TAU_INIT_HELP N_("Start value of the lifetime (mono) or of the fast lifetime tauF (bi).")

static const fm_param_spec direct_params[] = {COMMON_SPECS};
static const fm_param_spec phasor_params[] = {
    COMMON_SPECS,
    {.key = "harmonic",
     .type = FM_PARAM_INT,
     .title = N_("Harmonic"),
     .default_value = 1,
     .min = 1,
     .max = 16,
     .help = N_("Harmonic n of the repetition frequency.")},
    {.key = "rep_rate_mhz",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Repetition rate"),
     .default_value = 0,
     .min = 0,
     .max = 1e5,
     .unit = "MHz",
     .help = N_("Laser repetition rate; 0 = the file's, else one period over the whole time "
                "range.")},
    {.key = "cal_tau_ns",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Reference lifetime"),
     .default_value = 0,
     .min = 0,
     .max = 1000,
     .unit = "ns",
     .help = N_("Known lifetime of a reference (an ROI with role 'reference' or cal_file) that "
                "calibrates phase and modulation; 0 = no calibration.")},
    {.key = "cal_file",
     .type = FM_PARAM_STRING,
     .title = N_("Reference decay file"),
     .default_choice = "",
     .help = N_("Decay of the calibration reference (CSV or TIFF, one value per bin).")},
};
static const fm_param_spec bcmm1_params[] = {
    COMMON_SPECS,
    {.key = "tau_d_ns",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Donor lifetime"),
     .default_value = 2.5,
     .min = 0.001,
     .max = 1000,
     .unit = "ns",
     .help = N_("Known unquenched donor lifetime tauD.")},
};
static const fm_param_spec lsm_params[] = {COMMON_SPECS, FIT_SPECS("mono", TAU_INIT_HELP)};
static const fm_param_spec ga_params[] = {
    COMMON_SPECS,
    FIT_SPECS("bi", TAU_INIT_HELP),
    {.key = "tile_pixels",
     .type = FM_PARAM_INT,
     .title = N_("Tile size"),
     .default_value = 32,
     .min = 1,
     .max = 65536,
     .unit = "px",
     .help = N_("Pixels per automatic segment when no ROI has role 'segment' (GA-32).")},
};

/* Output names in the user's terms, and the kernel map behind each ("mask" is ours). */
#define OUT_MASK (-1)
typedef struct {
    const char *name;
    int kernel_map;
} out_binding;

static const out_binding bindings[] = {
    {"tau", FM_FLIM_OUT_TAU},
    {"tau_fast", FM_FLIM_OUT_TAU_FAST},
    {"tau_slow", FM_FLIM_OUT_TAU_SLOW},
    {"fraction_d", FM_FLIM_OUT_FRACTION},
    {"amplitude", FM_FLIM_OUT_AMPLITUDE},
    {"intensity", FM_FLIM_OUT_INTENSITY},
    {"tau_avg_amp", FM_FLIM_OUT_TAU_AVG_AMP},
    {"tau_avg_int", FM_FLIM_OUT_TAU_AVG_INT},
    {"chi2", FM_FLIM_OUT_CHI2},
    {"iterations", FM_FLIM_OUT_ITERATIONS},
    {"converged", FM_FLIM_OUT_CONVERGED},
    {"background", FM_FLIM_OUT_BACKGROUND},
    {"phasor_g", FM_FLIM_OUT_PHASOR_G},
    {"phasor_s", FM_FLIM_OUT_PHASOR_S},
    {"tau_phase", FM_FLIM_OUT_TAU_PHASE},
    {"tau_mod", FM_FLIM_OUT_TAU_MOD},
    {"mask", OUT_MASK},
};

#define O_TAU                                                                                      \
    {                                                                                              \
        .name = "tau", .unit = "ns", .title = N_("Lifetime tau")                                   \
    }
#define O_TAU_FAST                                                                                 \
    {                                                                                              \
        .name = "tau_fast", .unit = "ns", .title = N_("Fast lifetime tauF")                        \
    }
#define O_TAU_SLOW                                                                                 \
    {                                                                                              \
        .name = "tau_slow", .unit = "ns", .title = N_("Slow lifetime tauD")                        \
    }
#define O_FRACTION                                                                                 \
    {                                                                                              \
        .name = "fraction_d", .unit = "1", .title = N_("Fraction fD of tauD")                      \
    }
#define O_AMPLITUDE                                                                                \
    {                                                                                              \
        .name = "amplitude", .unit = "counts", .title = N_("Amplitude K")                          \
    }
#define O_INTENSITY                                                                                \
    {                                                                                              \
        .name = "intensity", .unit = "counts", .title = N_("Photons per pixel (every time bin)")   \
    }
#define O_AVG_AMP                                                                                  \
    {                                                                                              \
        .name = "tau_avg_amp", .unit = "ns", .title = N_("Amplitude-weighted mean lifetime")       \
    }
#define O_AVG_INT                                                                                  \
    {                                                                                              \
        .name = "tau_avg_int", .unit = "ns", .title = N_("Intensity-weighted mean lifetime")       \
    }
#define O_CHI2                                                                                     \
    {                                                                                              \
        .name = "chi2", .unit = "1", .title = N_("Reduced chi-square")                             \
    }
#define O_ITER                                                                                     \
    {                                                                                              \
        .name = "iterations", .unit = "1", .title = N_("Iterations")                               \
    }
#define O_CONV                                                                                     \
    {                                                                                              \
        .name = "converged", .unit = "1", .title = N_("Converged (1) or not (0)")                  \
    }
#define O_BACKGROUND                                                                               \
    {                                                                                              \
        .name = "background", .unit = "counts", .title = N_("Background per bin")                  \
    }
#define O_MASK                                                                                     \
    {                                                                                              \
        .name = "mask", .unit = "1", .title = N_("Fitted (1) or left out (0)")                     \
    }

static const fm_output_spec mono_outputs[] = {O_TAU, O_AMPLITUDE, O_INTENSITY, O_MASK};
static const fm_output_spec phasor_outputs[] = {
    {.name = "phasor_g", .unit = "1", .title = N_("Phasor g")},
    {.name = "phasor_s", .unit = "1", .title = N_("Phasor s")},
    {.name = "tau_phase", .unit = "ns", .title = N_("Phase lifetime")},
    {.name = "tau_mod", .unit = "ns", .title = N_("Modulation lifetime")},
    O_INTENSITY,
    O_MASK,
};
/* tauF first: the mask follows the first map, and every BCMM result has a tauF */
static const fm_output_spec bcmm_outputs[] = {O_TAU_FAST, O_TAU_SLOW, O_FRACTION,  O_TAU,
                                              O_AVG_AMP,  O_AVG_INT,  O_INTENSITY, O_MASK};
static const fm_output_spec fit_outputs[] = {
    O_TAU,     O_TAU_FAST, O_TAU_SLOW, O_FRACTION, O_AMPLITUDE,  O_INTENSITY, O_AVG_AMP,
    O_AVG_INT, O_CHI2,     O_ITER,     O_CONV,     O_BACKGROUND, O_MASK};

static const char *dataset_label(const fm_dataset *dataset)
{
    if (dataset->source_path) {
        const char *slash = strrchr(dataset->source_path, G_DIR_SEPARATOR);
        return slash ? slash + 1 : dataset->source_path;
    }
    return "dataset";
}

static fm_flim_method kernel_method(const fm_method *method)
{
    static const char *const names[FM_FLIM_METHOD_COUNT] = {
        "flim.iem",   "flim.cmm", "flim.rld", "flim.phasor", "flim.bcmm1",
        "flim.bcmm2", "flim.lsm", "flim.mle", "flim.ga"};
    for (int m = 0; m < FM_FLIM_METHOD_COUNT; m++)
        if (strcmp(method->id, names[m]) == 0)
            return (fm_flim_method)m;
    g_return_val_if_reached(FM_FLIM_IEM);
}

static int binding_of(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(bindings); i++)
        if (strcmp(bindings[i].name, name) == 0)
            return bindings[i].kernel_map;
    g_return_val_if_reached(OUT_MASK);
}

/* Phasor calibration (Digman et al. 2008): a reference of known lifetime tau_ref should sit at
 * phase atan(omega tau_ref) and modulation 1/sqrt(1 + (omega tau_ref)^2) on the universal
 * semicircle; the difference to where the instrument puts it corrects every pixel. The
 * reference's g, s come from the same kernel, so both share one convention for t. */
static gboolean phasor_calibration(fm_flim_params *kp, const float *reference, double tau_ref_ns,
                                   const char *label, GString *note, GError **error)
{
    fm_flim_params rp = *kp;
    rp.cal_phase_rad = 0.0;
    rp.cal_modulation = 1.0;
    rp.min_photons = 0.0;
    float g = NAN, s = NAN;
    fm_flim_outputs out;
    memset(&out, 0, sizeof out);
    out.map[FM_FLIM_OUT_PHASOR_G] = &g;
    out.map[FM_FLIM_OUT_PHASOR_S] = &s;
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_flim_run(FM_FLIM_PHASOR, &rp, reference, 1, NULL, NULL, 0, &out,
                               FM_BACKEND_CPU, NULL, NULL, NULL, msg, sizeof msg);
    if (st != FM_OK) {
        fm_method_set_kernel_error(error, st, msg);
        return FALSE;
    }
    double m = hypot(g, s);
    if (!isfinite(m) || !(m > 0.0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: the calibration reference has no usable decay in the fit range"), label);
        return FALSE;
    }
    double period = kp->period_ns > 0.0 ? kp->period_ns : kp->n_bins * kp->bin_width_ns;
    double wt = 2.0 * G_PI * kp->harmonic / period * tau_ref_ns;
    kp->cal_phase_rad = atan(wt) - atan2(s, g);
    kp->cal_modulation = (1.0 / sqrt(1.0 + wt * wt)) / m;
    if (note->len)
        g_string_append(note, "; ");
    g_string_append_printf(note,
                           _("phasor calibrated on a %g ns reference: phase %+.4f rad, "
                             "modulation x %.4f"),
                           tau_ref_ns, kp->cal_phase_rad, kp->cal_modulation);
    return TRUE;
}

/* Sum of the decays of the pixels in mask: the reference measurement drawn as an ROI. */
static float *roi_decay(const fm_flim_counts *counts, int n_pixels, int n_bins, const guint8 *mask)
{
    float *decay = g_new0(float, n_bins);
    for (int b = 0; b < n_bins; b++) {
        double sum = 0.0;
        for (int p = 0; p < n_pixels; p++)
            if (mask[p])
                sum += fm_flim_counts_at(counts, (gsize)b * n_pixels + p);
        decay[b] = (float)sum;
    }
    return decay;
}

static gboolean setup_phasor(fm_flim_params *kp, const fm_params *params, GPtrArray *rois,
                             const fm_flim_counts *counts, const fm_dataset *dataset,
                             const char *label, GString *note, GError **error)
{
    const int width = fm_dataset_width(dataset), height = fm_dataset_height(dataset);
    kp->harmonic = fm_params_get_int(params, "harmonic");
    /* the laser's period where the file gives it: the phasor's frequency is the laser's */
    kp->period_ns = fm_flim_period_ns(dataset, fm_params_get_double(params, "rep_rate_mhz"));
    double tau_ref = fm_params_get_double(params, "cal_tau_ns");
    if (!(tau_ref > 0.0))
        return TRUE;
    const char *file = fm_params_get_string(params, "cal_file");
    g_autofree float *reference = NULL;
    if (file && *file) {
        reference = fm_flim_load_decay_resampled(file, kp->n_bins, kp->bin_width_ns,
                                                 _("calibration reference"), note, error);
        if (reference == NULL)
            return FALSE;
    } else {
        g_autofree guint8 *mask = fm_flim_prep_role_mask(rois, "reference", width, height);
        if (mask == NULL) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("%s: cal_tau_ns is set but there is neither an ROI with role "
                          "'reference' nor a cal_file"),
                        label);
            return FALSE;
        }
        reference = roi_decay(counts, width * height, kp->n_bins, mask);
    }
    return phasor_calibration(kp, reference, tau_ref, label, note, error);
}

static gboolean setup_fit(fm_flim_params *kp, const fm_params *params, GString *note,
                          GError **error)
{
    kp->model = g_strcmp0(fm_params_get_choice(params, "model"), "bi") == 0 ? 2 : 1;
    kp->fit_background = fm_params_get_bool(params, "fit_background");
    kp->max_iterations = fm_params_get_int(params, "max_iterations");
    kp->tau_init_ns[0] = fm_params_get_double(params, "tau_init_ns");
    kp->tau_init_ns[1] = fm_params_get_double(params, "tau2_init_ns");
    kp->fraction_init = fm_params_get_double(params, "fraction_init");
    const char *irf_file = fm_params_get_string(params, "irf_file");
    if (irf_file && *irf_file) {
        float *irf = fm_flim_load_decay_resampled(irf_file, kp->n_bins, kp->bin_width_ns, _("IRF"),
                                                  note, error);
        if (irf == NULL)
            return FALSE;
        kp->irf = irf; /* freed by the caller */
    }
    return TRUE;
}

static void append_note(GString *note, const char *text)
{
    if (note->len)
        g_string_append(note, "; ");
    g_string_append(note, text);
}

/* Photons per pixel in the fit window: a pass over every count, so kept on the open dataset for
 * the next run with the same window and binning (a changed parameter, another method). */
static GBytes *photons_of(fm_dataset *dataset, const fm_flim_counts *counts, int binning,
                          int n_pixels, int start, int end)
{
    g_autofree char *key = g_strdup_printf("flim.photons/%d/%d/%d", binning, start, end);
    GBytes *sums = fm_dataset_derived_lookup(dataset, key);
    if (sums)
        return sums;
    double *fresh = fm_flim_prep_photons_typed(counts, n_pixels, start, end);
    sums = g_bytes_new_take(fresh, (gsize)MAX(n_pixels, 1) * sizeof(double));
    fm_dataset_derived_store(dataset, key, sums);
    return sums;
}

static fm_result *flim_run(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                           GPtrArray *rois, fm_job_context *context, GError **error)
{
    const char *label = dataset_label(dataset);
    const fm_flim_method km = kernel_method(method);
    const int binning = fm_params_get_int(params, "binning");
    if (!fm_flim_prep_check(dataset, binning, error))
        return NULL;
    double bin_width_ns;
    if (!fm_flim_prep_bin_width(dataset, fm_params_get_double(params, "bin_width_ps"),
                                &bin_width_ns, error))
        return NULL;
    const int width = fm_dataset_width(dataset), height = fm_dataset_height(dataset);
    const int n_bins = fm_dataset_frames(dataset), n_pixels = width * height;
    /* uint16 data at binning 1 go to the kernels as they are (half the bytes to the GPU) */
    fm_flim_counts counts_buf;
    if (!fm_flim_prep_counts_typed(dataset, binning, &counts_buf, error))
        return NULL;
    g_auto(fm_flim_counts) counts = counts_buf;

    fm_flim_params kp;
    fm_flim_params_defaults(&kp, n_bins, bin_width_ns);
    g_autoptr(GString) note = g_string_new(NULL);
    if (fm_params_has(params, "tau_d_ns"))
        kp.tau_d_ns = fm_params_get_double(params, "tau_d_ns");
    if (fm_params_has(params, "model") && !setup_fit(&kp, params, note, error))
        return NULL;
    g_autofree float *irf = (float *)kp.irf;

    /* The window where it is auto comes from the whole image's decay (time zero is the
     * instrument's, not the ROI's), with the IRF just loaded. */
    fm_flim_window window;
    if (!fm_flim_params_window(dataset, params, bin_width_ns, irf, &window, error)) {
        g_prefix_error(error, "%s: ", label);
        return NULL;
    }
    kp.fit_start = window.start;
    kp.fit_end = window.end;
    const int start = window.start, end = window.end;
    if (window.start_auto || window.end_auto) {
        g_autofree char *t = fm_flim_window_describe(&window, bin_width_ns);
        append_note(note, t);
    }
    if (window.start_auto && isfinite(window.shape.background)) {
        g_autofree char *t =
            g_strdup_printf(_("background before the rise %.3g counts per bin per pixel "
                              "(bins %d–%d)"),
                            window.shape.background, window.shape.background_first,
                            window.shape.background_first + window.shape.background_bins - 1);
        append_note(note, t);
    }
    if (km == FM_FLIM_PHASOR &&
        !setup_phasor(&kp, params, rois, &counts, dataset, label, note, error))
        return NULL;

    /* Pixels to fit: the ROIs', with at least one photon (zero-photon pixels stay NaN whatever
     * min_photons says) and at least min_photons, which auto sets from the image's brightest. */
    g_autofree guint8 *roi_mask = fm_flim_prep_mask(rois, width, height);
    g_autoptr(GBytes) photon_sums = photons_of(dataset, &counts, binning, n_pixels, start, end);
    const double *photons = g_bytes_get_data(photon_sums, NULL);
    const double asked_photons = fm_params_get_double(params, "min_photons");
    const gboolean photons_auto = asked_photons < 0.0;
    kp.min_photons = photons_auto ? fm_flim_auto_min_photons(photons, n_pixels) : asked_photons;
    if (photons_auto) {
        g_autofree char *t = g_strdup_printf(_("min_photons %g (auto)"), kp.min_photons);
        append_note(note, t);
    }
    g_autofree guint8 *fit_mask = g_new0(guint8, n_pixels);
    long long selected = 0, below = 0;
    for (int p = 0; p < n_pixels; p++) {
        if (!roi_mask[p])
            continue;
        selected++;
        if (photons[p] >= MAX(kp.min_photons, 1.0))
            fit_mask[p] = 1;
        else
            below++;
    }
    int n_segments = 0;
    g_autofree int *segment = NULL;
    if (km == FM_FLIM_GA)
        segment = fm_flim_prep_segments(rois, fit_mask, width, height,
                                        fm_params_get_int(params, "tile_pixels"), &n_segments);

    char msg[FM_MSG_LEN] = "";
    if (fm_flim_check(km, &kp, n_pixels, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", label, msg);
        return NULL;
    }

    fm_result *result = fm_result_new(method->id);
    fm_flim_outputs out;
    memset(&out, 0, sizeof out);
    fm_map *mask_map = NULL;
    for (int i = 0; i < method->n_outputs; i++) {
        const fm_output_spec *o = &method->outputs[i];
        /* NaN until written, in one parallel pass (not zeroed first): on a re-run this was
         * most of the method's own preparation beside a ~1 ms kernel */
        fm_map *map = fm_map_new_uninit(o->name, o->unit, width, height, 1);
        int k = binding_of(o->name);
        if (k == OUT_MASK)
            mask_map = map;
        else
            out.map[k] = map->data;
#pragma omp parallel for schedule(static)
        for (int p = 0; p < n_pixels; p++)
            map->data[p] = NAN;
        fm_result_add_map(result, map);
    }

    fm_backend backend = context ? context->backend : FM_BACKEND_AUTO;
    fm_run_info info;
    memset(&info, 0, sizeof info);
    fm_status st = fm_flim_run_typed(km, &kp, counts.data, counts.type, n_pixels, fit_mask, segment,
                                     n_segments, &out, backend, context ? fm_method_tick : NULL,
                                     context, &info, msg, sizeof msg);
    fm_method_kernel_done(context, &info);
    if (st != FM_OK) {
        fm_result_free(result);
        fm_method_set_kernel_error(error, st, msg);
        return NULL;
    }

    /* The mask says where the first (main) map holds a value; everything else is NaN there. */
    const float *main_map = fm_map_frame(g_ptr_array_index(result->maps, 0), 0);
    long long failed = 0;
    for (int p = 0; p < n_pixels; p++) {
        gboolean ok = fit_mask[p] && isfinite(main_map[p]);
        failed += fit_mask[p] && !ok;
        if (mask_map)
            mask_map->data[p] = ok ? 1.0f : 0.0f;
        if (!ok)
            for (int k = 0; k < FM_FLIM_OUT_COUNT; k++)
                if (out.map[k])
                    out.map[k][p] = NAN;
    }

    /* Intensity is every photon of the pixel, not only the fit window's, and shown where
     * the lifetime is not: the image as the instrument counted it (NaN where none came). */
    if (out.map[FM_FLIM_OUT_INTENSITY]) {
        g_autoptr(GBytes) all = photons_of(dataset, &counts, binning, n_pixels, 0, n_bins);
        const double *total = g_bytes_get_data(all, NULL);
        float *intensity = out.map[FM_FLIM_OUT_INTENSITY];
        for (int p = 0; p < n_pixels; p++)
            intensity[p] = total[p] > 0.0 ? (float)total[p] : NAN;
    }

    result->backend = g_strdup(info.backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
    result->device = g_strdup(info.device_name);
    if (info.fell_back) {
        g_autofree char *t = g_strdup_printf(_("fell back to the CPU: %s"), info.fallback_reason);
        append_note(note, t);
    }
    if (below > 0) {
        g_autofree char *t =
            g_strdup_printf(_("%lld of %lld pixels had fewer than %g photons and were left out"),
                            below, selected, MAX(kp.min_photons, 1.0));
        append_note(note, t);
    }
    if (below > 0 && 2 * below > selected) {
        /* k x k binning sums k^2 pixels' photons: what a low-count image needs first */
        int k = fm_flim_suggest_binning(photons, n_pixels, kp.min_photons);
        g_autofree char *t =
            k > binning
                ? g_strdup_printf(_("most pixels have fewer than %g photons: try binning %d"),
                                  MAX(kp.min_photons, 1.0), k)
            : binning < FM_FLIM_MAX_BINNING
                ? g_strdup_printf(_("most pixels have fewer than %g photons: try binning %d or %d"),
                                  MAX(kp.min_photons, 1.0), binning + 1, binning + 2)
                : g_strdup_printf(_("most pixels have fewer than %g photons"),
                                  MAX(kp.min_photons, 1.0));
        /* first: the one thing to do, the note's headline where it is shown in one line */
        g_string_prepend(note, note->len ? "; " : "");
        g_string_prepend(note, t);
    }
    if (failed > 0) {
        g_autofree char *t = g_strdup_printf(_("%lld pixels gave no finite result"), failed);
        append_note(note, t);
    }
    result->note = note->len ? g_strdup(note->str) : NULL;
    return result;
}

#define FLIM_METHOD(name_, title_, description_, params_, outputs_)                                \
    const fm_method fm_method_flim_##name_ = {                                                     \
        .id = "flim." #name_,                                                                      \
        .family = "flim",                                                                          \
        .title = title_,                                                                           \
        .description = description_,                                                               \
        .params = params_,                                                                         \
        .n_params = G_N_ELEMENTS(params_),                                                         \
        .outputs = outputs_,                                                                       \
        .n_outputs = G_N_ELEMENTS(outputs_),                                                       \
        .device_reads_dataset = TRUE,                                                              \
        .run = flim_run,                                                                           \
    }

FLIM_METHOD(iem, N_("Integral equation method (IEM)"),
            N_("Mono-exponential lifetime from Simpson integrals of the decay. Assumes no IRF and "
               "a single exponential; fast, one pass, no start values."),
            direct_params, mono_outputs);
FLIM_METHOD(cmm, N_("Centre of mass (CMM)"),
            N_("Lifetime from the decay's mean arrival time with the finite-window correction. "
               "Assumes no IRF and a single exponential; fastest, one pass."),
            direct_params, mono_outputs);
FLIM_METHOD(rld, N_("Rapid lifetime determination (RLD)"),
            N_("Lifetime from the ratio of two equal gates. Assumes no IRF and a single "
               "exponential; fast, one pass, least precise at low counts."),
            direct_params, mono_outputs);
FLIM_METHOD(phasor, N_("Phasor"),
            N_("g and s at harmonic n of the repetition frequency, phase and modulation "
               "lifetimes; fit-free, fast, one pass. Assumes no IRF unless calibrated with a "
               "reference of known lifetime."),
            phasor_params, phasor_outputs);
FLIM_METHOD(bcmm1, N_("Bi-exponential centre of mass, tauD known (BCMM1)"),
            N_("tauF and fD from the decay moments with the donor lifetime given (Li, Yu, Chen, "
               "Opt. Lett. 40, 336, 2015). Assumes no IRF; fast, one pass."),
            bcmm1_params, bcmm_outputs);
FLIM_METHOD(bcmm2, N_("Bi-exponential centre of mass, tauD unknown (BCMM2)"),
            N_("tauF, tauD and fD from the first decay moments (Li, Yu, Chen, Opt. Lett. 40, "
               "336, 2015). Assumes no IRF; fast, one pass, needs many photons."),
            direct_params, bcmm_outputs);
FLIM_METHOD(lsm, N_("Least squares (LSM)"),
            N_("Levenberg-Marquardt weighted least-squares fit, mono or bi-exponential, with "
               "optional IRF convolution and background. Iterative: slower, needs start values; "
               "biased at low counts."),
            lsm_params, fit_outputs);
FLIM_METHOD(mle, N_("Maximum likelihood (MLE)"),
            N_("Poisson maximum-likelihood fit, mono or bi-exponential, with optional IRF and "
               "background. Iterative; the most precise at low photon counts."),
            lsm_params, fit_outputs);
FLIM_METHOD(ga, N_("Global analysis (GA)"),
            N_("Lifetimes shared by all pixels of a segment (ROIs with role 'segment', or tiles "
               "of tile_pixels), amplitudes per pixel. Iterative; resolves fD over a wider "
               "range at low counts at the cost of spatial detail in the lifetimes."),
            ga_params, fit_outputs);
