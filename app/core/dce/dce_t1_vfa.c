/* Registry entry dce.t1_vfa: T1 (s) and M0 maps from variable-flip-angle SPGR images (a 4-D
 * series x, y, z, angle, or an x, y, angle stack), linear (DESPOT1) or nonlinear fit, optional
 * B1 map; the T1 map feeds dce.dual_input's t10_map. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/dce_vfa_series.h"
#include "app/core/dce/dce_volume_map.h"
#include "app/core/error.h"
#include "app/core/io/dce_stack.h"
#include "app/core/io/frame_times.h"
#include "app/core/methods.h"
#include "kernels/dce/t1_vfa.h"

static const char *const fit_choices[] = {"nonlinear", "linear", NULL};
static const char *const b1_unit_choices[] = {"fraction", "percent", NULL};

static const fm_param_spec t1_vfa_params[] = {
    {.key = "flip_angles_deg",
     .type = FM_PARAM_STRING,
     .title = N_("Flip angles"),
     .default_choice = "",
     .help = N_("Nominal flip angles in degrees, comma-separated, one per image in the series' "
                "order (\"2,5,12\"); empty = from the DICOM headers (FlipAngle).")},
    {.key = "tr_ms",
     .type = FM_PARAM_DOUBLE,
     .title = N_("TR"),
     .default_value = 0,
     .min = 0,
     .max = 10000,
     .unit = "ms",
     .help = N_("Repetition time of the SPGR images; 0 = from the DICOM headers "
                "(RepetitionTime).")},
    {.key = "fit",
     .type = FM_PARAM_ENUM,
     .title = N_("Fit"),
     .default_choice = "nonlinear",
     .choices = fit_choices,
     .help = N_("nonlinear: least squares of the SPGR signal equation (the optimum, robust at low "
                "SNR); linear: the DESPOT1 line S/sin(a) against S/tan(a) (Gupta 1977), "
                "quicker, biased by noise.")},
    {.key = "b1_map",
     .type = FM_PARAM_STRING,
     .title = N_("B1 map file"),
     .default_choice = "",
     .help = N_("NIfTI or TIFF (x, y, z like the images) of the actual/nominal flip angle; "
                "empty = no correction.")},
    {.key = "b1_unit",
     .type = FM_PARAM_ENUM,
     .title = N_("B1 map unit"),
     .default_choice = "fraction",
     .choices = b1_unit_choices,
     .help = N_("fraction: 1 is the nominal angle; percent: 100 is.")},
    {.key = "stack_slices",
     .type = FM_PARAM_INT,
     .title = N_("Slices in a TIFF stack"),
     .default_value = 1,
     .min = 1,
     .max = 1024,
     .unit = "slices",
     .help = N_("TIFF stacks (pages z fastest): slices per flip angle.")},
};

static const fm_output_spec t1_vfa_outputs[] = {
    {.name = "t1", .unit = "s", .title = N_("T1 (precontrast T10)")},
    {.name = "m0", .unit = "a.u.", .title = N_("Equilibrium signal M0 (S0)")},
    {.name = "rmse", .unit = "a.u.", .title = N_("RMS residual of the signal fit")},
};

/* The flip angles and TR: parameters, else what the reader found in the headers. */
static double *acquisition(const fm_dataset *ds, const fm_params *params, int n_images,
                           double *tr_ms, GString *said, GError **error)
{
    const char *text = fm_params_get_string(params, "flip_angles_deg");
    gboolean from_headers = !*text;
    if (from_headers)
        text = fm_dataset_get_meta(ds, FM_META_FLIP_ANGLES);
    int n = 0;
    double *angles = text ? fm_parse_number_list(text, &n) : NULL;
    if (!angles) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    from_headers ? _("%s: give the flip angles (flip_angles_deg): the file does "
                                     "not say them")
                                 : _("%s: flip_angles_deg is not a list of numbers"),
                    fm_dce_dataset_label(ds));
        return NULL;
    }
    if (n != n_images) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: %d flip angles for %d images"),
                    fm_dce_dataset_label(ds), n, n_images);
        g_free(angles);
        return NULL;
    }
    g_autofree char *list = fm_format_number_list(angles, n);
    g_string_append_printf(said, _("flip angles %s deg (%s)"), list,
                           from_headers ? _("DICOM headers") : _("parameters"));
    *tr_ms = fm_params_get_double(params, "tr_ms");
    gboolean tr_from_headers = !(*tr_ms > 0);
    if (tr_from_headers) {
        const char *tr = fm_dataset_get_meta(ds, FM_META_REPETITION_TIME);
        *tr_ms = tr ? g_ascii_strtod(tr, NULL) : 0.0;
    }
    if (!(*tr_ms > 0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: give the repetition time (tr_ms): the file does not say it"),
                    fm_dce_dataset_label(ds));
        g_free(angles);
        return NULL;
    }
    g_string_append_printf(said, _(", TR %g ms (%s)"), *tr_ms,
                           tr_from_headers ? _("DICOM headers") : _("parameters"));
    return angles;
}

/* The B1 map as factors actual/nominal, one per voxel of the volume, or NULL with an error. */
static float *load_b1(const char *path, gboolean percent, const fm_dce_geometry *g, GError **error)
{
    return fm_dce_read_volume_map(path, g, percent ? 0.01 : 1.0,
                                  _("%s: the B1 map must be %d x %d x %d voxels"), error);
}

static fm_result *t1_vfa_run(const fm_method *method, fm_dataset *source, const fm_params *params,
                             GPtrArray *rois, fm_job_context *context, GError **error)
{
    g_autoptr(fm_dataset) dataset = NULL;
    int nz = fm_params_get_int(params, "stack_slices");
    if (source->n_dims == 3 && nz > 1) {
        int pages = (int)source->dims[2].size;
        if (pages % nz != 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("%s: %d pages are not a whole number of %d-slice volumes"),
                        fm_dce_dataset_label(source), pages, nz);
            return NULL;
        }
        dataset =
            fm_dce_stack_reshape(source, nz, pages / nz, FM_DCE_PAGES_Z_FASTEST, 1.0, NULL, error);
        if (!dataset)
            return NULL;
        const char *from_headers = fm_dataset_get_meta(source, FM_META_FLIP_ANGLES);
        if (from_headers)
            fm_dataset_set_meta(dataset, FM_META_FLIP_ANGLES, from_headers);
    } else {
        dataset = fm_dataset_ref(source);
    }
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(dataset, &g, error))
        return NULL;
    g_autoptr(GString) said = g_string_new(NULL);
    double tr_ms = 0;
    g_autofree double *angles = acquisition(dataset, params, g.nt, &tr_ms, said, error);
    if (!angles)
        return NULL;
    g_autofree float *b1 = NULL;
    const char *b1_path = fm_params_get_string(params, "b1_map");
    if (*b1_path) {
        gboolean percent = g_strcmp0(fm_params_get_choice(params, "b1_unit"), "percent") == 0;
        if (!(b1 = load_b1(b1_path, percent, &g, error)))
            return NULL;
    }

    /* Voxel-major signals: the kernel reads each voxel's angles together. */
    const gsize volume = (gsize)g.nx * g.ny * g.nz;
    g_autofree float *signals = g_new(float, volume *(gsize)g.nt);
    for (int t = 0; t < g.nt; t++)
        for (gsize v = 0; v < volume; v++)
            signals[v * g.nt + t] = (float)fm_dataset_value(dataset, (gsize)t * volume + v);
    fm_result *result = fm_result_new(method->id);
    fm_map *maps[3];
    for (int o = 0; o < 3; o++)
        maps[o] = fm_map_new(t1_vfa_outputs[o].name, t1_vfa_outputs[o].unit, g.nx, g.ny, g.nz);
    g_autofree double *values = g_new(double, 3 * volume);
    fm_t1_vfa_params kp = {
        .n_angles = g.nt,
        .flip_deg = angles,
        .tr_s = tr_ms * 1e-3,
        .kind = g_strcmp0(fm_params_get_choice(params, "fit"), "linear") == 0 ? FM_T1_VFA_LINEAR
                                                                              : FM_T1_VFA_NONLINEAR,
    };
    fm_t1_vfa_outputs out = {values, values + volume, values + 2 * volume};
    fm_run_info info;
    memset(&info, 0, sizeof info);
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_t1_vfa_fit(&kp, signals, b1, (long long)volume, &out,
                                 context ? fm_method_tick : NULL, context, &info, msg, sizeof msg);
    fm_method_kernel_done(context, &info);
    if (st != FM_OK) {
        for (int o = 0; o < 3; o++)
            fm_map_free(maps[o]);
        fm_result_free(result);
        fm_method_set_kernel_error(error, st, msg);
        return NULL;
    }
    for (int o = 0; o < 3; o++) {
        for (gsize v = 0; v < volume; v++)
            maps[o]->data[v] = (float)values[(gsize)o * volume + v];
        fm_result_add_map(result, maps[o]);
    }
    result->backend = g_strdup("cpu");
    result->device = g_strdup(info.device_name);
    const char *n_series = fm_dataset_get_meta(dataset, FM_META_VFA_SERIES);
    g_autofree char *series_note =
        n_series ? g_strdup_printf(_("; one DICOM series per flip angle (%s series)"), n_series)
                 : g_strdup("");
    result->note = g_strdup_printf(
        _("%s fit of %" G_GSIZE_FORMAT " voxels, %lld without a T1 (NaN); %s%s%s"),
        kp.kind == FM_T1_VFA_LINEAR ? _("linear") : _("nonlinear"), volume, info.invalid_values,
        said->str, series_note, b1 ? _("; flip angles scaled by the B1 map") : "");
    return result;
}

const fm_method fm_method_dce_t1_vfa = {
    .id = "dce.t1_vfa",
    .family = "dce",
    .title = N_("T1 map from variable flip angles"),
    .description = N_("Fits the spoiled gradient-echo signal S = M0 sin(a) (1 - E) / (1 - cos(a) "
                      "E), E = exp(-TR/T1), to images at several flip angles, voxel by voxel: "
                      "linear (DESPOT1) or nonlinear, flip angles optionally scaled by a B1 map. "
                      "The T1 map (s) is the T10 map dce.dual_input takes (t10_map). Images as "
                      "one DICOM series per flip angle (a folder of them, or several series "
                      "given) are sorted by their FlipAngle. Runs on the CPU (all cores); it has "
                      "no GPU path, being bound by reading the images."),
    .params = t1_vfa_params,
    .n_params = G_N_ELEMENTS(t1_vfa_params),
    .roi_roles = NULL,
    .outputs = t1_vfa_outputs,
    .n_outputs = G_N_ELEMENTS(t1_vfa_outputs),
    .open_inputs = fm_dce_vfa_open,
    .run = t1_vfa_run,
};
