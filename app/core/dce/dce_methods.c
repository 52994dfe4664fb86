/* Registry entry dce.dual_input: voxelwise dual-input single-compartment liver perfusion maps
 * (Wang & Cao, Phys. Med. Biol. 57 (2012) 5601) from a 4-D series and aorta/portal-vein VOIs. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/dce_result.h"
#include "app/core/dce/dce_series.h"
#include "app/core/dce/dce_volume_map.h"
#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/methods.h"
#include "app/core/roi.h"
#include "kernels/dce/dce.h"

static const char *const conversion_choices[] = FM_DCE_CONVERSION_CHOICES;
static const char *const tolerance_mode_choices[] = {"relative", "absolute", NULL};
static const char *const start_choices[] = {"grid", "initial", NULL};

#define RATE_SPEC(k, t, v)                                                                         \
    {                                                                                              \
        .key = k, .type = FM_PARAM_DOUBLE, .title = t, .default_value = v, .min = 0, .max = 1000,  \
        .unit = "ml/100g/min",                                                                     \
        .help = N_("Start \"initial\": the starting value (the paper: ka 10, kp 80, kl 200).")     \
    }
#define DELAY_SPEC(k, t, v)                                                                        \
    {                                                                                              \
        .key = k, .type = FM_PARAM_DOUBLE, .title = t, .default_value = v, .min = 0, .max = 10,    \
        .unit = "s", .help = N_("Start \"initial\": the starting delay (the paper: 2 s, 3 s).")    \
    }

static const fm_param_spec dce_params[] = {
    {.key = "conversion",
     .type = FM_PARAM_ENUM,
     .title = N_("Signal to concentration"),
     .default_choice = "enhancement",
     .choices = conversion_choices,
     .help = N_("enhancement: S/S0 - 1; spgr: spoiled gradient echo with T10, r1, TR and flip "
                "angle; ct: HU - HU0; none: the data are concentrations already.")},
    FM_DCE_PARAM_BASELINE_FRAMES,
    {.key = "t10_s",
     .type = FM_PARAM_DOUBLE,
     .title = N_("T10"),
     .default_value = 0.8,
     .min = 0.001,
     .max = 10,
     .unit = "s",
     .help = N_("SPGR: precontrast T1 of tissue and blood where no T10 map is given.")},
    {.key = "t10_map",
     .type = FM_PARAM_STRING,
     .title = N_("T10 map file"),
     .default_choice = "",
     .help = N_("SPGR: NIfTI or TIFF with the precontrast T1 in s of every voxel (x, y, z); "
                "empty = the constant T10.")},
    FM_DCE_PARAM_R1,
    {.key = "tr_ms",
     .type = FM_PARAM_DOUBLE,
     .title = N_("TR"),
     .default_value = 5,
     .min = 0.01,
     .max = 10000,
     .unit = "ms",
     .help = N_("SPGR: repetition time.")},
    {.key = "flip_deg",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Flip angle"),
     .default_value = 15,
     .min = 0.1,
     .max = 179.9,
     .unit = "deg",
     .help = N_("SPGR: flip angle.")},
    {.key = "hematocrit",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Haematocrit"),
     .default_value = 0,
     .min = 0,
     .max = 0.95,
     .unit = "1",
     .help = N_("Blood input curves become plasma curves C/(1 - Hct); 0 = no correction.")},
    {.key = "input_csv",
     .type = FM_PARAM_STRING,
     .title = N_("Input curves file"),
     .default_choice = "",
     .help = N_("CSV t_s,ca,cp with the input curves (concentrations); when given, the aorta "
                "and portal-vein ROIs are not needed.")},
    {.key = "save_inputs_csv",
     .type = FM_PARAM_STRING,
     .title = N_("Save input curves to"),
     .default_choice = "",
     .help = N_("Writes the input curves used as CSV t_s,ca,cp.")},
    {.key = "fit_threshold",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Fit threshold"),
     .default_value = 0.03,
     .min = 0,
     .max = 1,
     .unit = "1",
     .help = N_("Without a liver ROI: fit voxels whose peak concentration is at least this "
                "fraction of the arterial peak (and, for MRI, whose baseline signal is at least "
                "this fraction of the largest).")},
    FM_DCE_PARAM_STACK_SLICES,
    FM_DCE_PARAM_FRAME_INTERVAL,
    {.key = "start",
     .type = FM_PARAM_ENUM,
     .title = N_("Start"),
     .default_choice = "grid",
     .choices = start_choices,
     .help = N_("grid: each voxel starts at the best point of a coarse kl x tau_a x tau_p grid, "
                "with ka and kp fitted there by least squares (a third fewer iterations, less "
                "bias); initial: every voxel starts at the initial values below (the paper).")},
    RATE_SPEC("initial_ka", N_("Initial ka"), 10),
    RATE_SPEC("initial_kp", N_("Initial kp"), 80),
    RATE_SPEC("initial_kl", N_("Initial kl"), 200),
    DELAY_SPEC("initial_tau_a", N_("Initial tau_a"), 2),
    DELAY_SPEC("initial_tau_p", N_("Initial tau_p"), 3),
    {.key = "model_dt_s",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Model time step"),
     .default_value = 0,
     .min = 0,
     .max = 60,
     .unit = "s",
     .help = N_("Step of the uniform grid the convolution runs on (inputs interpolated "
                "linearly); 0 = the smallest frame interval. Finer steps resolve sub-frame "
                "delays.")},
    {.key = "max_iterations",
     .type = FM_PARAM_INT,
     .title = N_("Max iterations"),
     .default_value = 2000,
     .min = 1,
     .max = 100000,
     .help = N_("Nelder-Mead iterations per voxel, restarts included (the paper: 600; its "
                "absolute 1e-8 needed fewer).")},
    {.key = "tolerance",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Tolerance"),
     .default_value = 1e-11,
     .min = 0,
     .max = 1,
     .help = N_("Stop when max - min of the simplex costs falls below this; relative mode "
                "multiplies it by the voxel's mean squared concentration (the paper: 1e-8 "
                "absolute, in its own units).")},
    {.key = "tolerance_mode",
     .type = FM_PARAM_ENUM,
     .title = N_("Tolerance mode"),
     .default_choice = "relative",
     .choices = tolerance_mode_choices,
     .help = N_("relative: unit-free, scaled by the voxel's data; absolute: the paper's rule in "
                "concentration^2, which depends on the units (1e-8 stops early for mM).")},
    {.key = "restarts",
     .type = FM_PARAM_INT,
     .title = N_("Restarts"),
     .default_value = 4,
     .min = 0,
     .max = 100,
     .help = N_("Restart Nelder-Mead from its best vertex with a fresh simplex after it stops, "
                "while the cost still improves; 0 = the paper's single run.")},
};

/* Map order: the kernel's outputs first, then the derived ones. */
enum { OUT_ARTERIAL_FRACTION = FM_DCE_OUT_COUNT, OUT_DISTRIBUTION_VOLUME, OUT_MTT, OUT_TOTAL };

static const fm_output_spec dce_outputs[] = {
    {.name = "ka", .unit = "ml/100g/min", .title = N_("Arterial rate constant ka")},
    {.name = "kp", .unit = "ml/100g/min", .title = N_("Portal venous rate constant kp")},
    {.name = "kl", .unit = "ml/100g/min", .title = N_("Outflow rate constant kl")},
    {.name = "tau_a", .unit = "s", .title = N_("Arterial delay tau_a")},
    {.name = "tau_p", .unit = "s", .title = N_("Portal venous delay tau_p")},
    {.name = "rmse", .unit = "conc", .title = N_("RMS residual")},
    {.name = "r2", .unit = "1", .title = N_("Coefficient of determination R^2")},
    {.name = "iterations", .unit = "1", .title = N_("Nelder-Mead iterations")},
    {.name = "converged", .unit = "1", .title = N_("Converged (1) or stopped at the limit (0)")},
    {.name = "arterial_fraction", .unit = "1", .title = N_("Arterial fraction ka/(ka+kp)")},
    {.name = "distribution_volume", .unit = "1", .title = N_("Distribution volume (ka+kp)/kl")},
    {.name = "mtt", .unit = "s", .title = N_("Mean transit time 1/kl")},
};

G_STATIC_ASSERT(G_N_ELEMENTS(dce_outputs) == OUT_TOTAL);

static void conversion_from_params(const fm_params *p, fm_dce_conversion *c)
{
    fm_dce_conversion_parse(fm_params_get_choice(p, "conversion"), &c->kind);
    c->baseline_frames = fm_params_get_int(p, "baseline_frames");
    c->t10_s = fm_params_get_double(p, "t10_s");
    c->r1_per_mm_s = fm_params_get_double(p, "r1_per_mm_s");
    c->tr_ms = fm_params_get_double(p, "tr_ms");
    c->flip_deg = fm_params_get_double(p, "flip_deg");
}

/* The optional T10 map, checked against the volume. */
static float *load_t10_map(const char *path, const fm_dce_geometry *g, GError **error)
{
    return fm_dce_read_volume_map(path, g, 1.0, _("%s: the T10 map must be %d x %d x %d voxels"),
                                  error);
}

/* Input curves from the CSV (which must sample the dataset's frames) or from the VOIs. */
static gboolean get_inputs(const fm_dataset *ds, const fm_params *params, GPtrArray *rois,
                           const fm_dce_conversion *conv, const float *t10, fm_dce_inputs *in,
                           GError **error)
{
    const char *csv = fm_params_get_string(params, "input_csv");
    if (!*csv)
        return fm_dce_inputs_from_rois(ds, rois, conv, t10,
                                       fm_params_get_double(params, "hematocrit"), in, error);
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(ds, &g, error) || !fm_dce_inputs_load_csv(csv, in, error))
        return FALSE;
    g_autofree double *times = fm_dce_frame_times(ds, &g, error);
    if (!times)
        return FALSE;
    if (in->n_times != g.nt) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: %d rows of input curves for %d frames"), csv, in->n_times, g.nt);
        return FALSE;
    }
    for (int i = 0; i < g.nt; i++)
        if (fabs(in->times_s[i] - times[i]) > 1e-3) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                        _("%s: row %d is at %g s, frame %d at %g s"), csv, i + 1, in->times_s[i], i,
                        times[i]);
            return FALSE;
        }
    return TRUE;
}

static fm_result *dce_run(const fm_method *method, fm_dataset *source, const fm_params *params,
                          GPtrArray *rois, fm_job_context *context, GError **error)
{
    g_autoptr(fm_dataset) dataset = fm_dce_series_of(source, params, error);
    if (!dataset)
        return NULL;
    const char *label = fm_dce_dataset_label(dataset);
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(dataset, &g, error))
        return NULL;
    fm_dce_conversion conv;
    conversion_from_params(params, &conv);
    if (!fm_dce_conversion_check(&conv, g.nt, error))
        return NULL;
    g_autofree float *t10 = NULL;
    const char *t10_path = fm_params_get_string(params, "t10_map");
    if (conv.kind == FM_DCE_CONV_SPGR && *t10_path && !(t10 = load_t10_map(t10_path, &g, error)))
        return NULL;

    fm_dce_inputs in = {0};
    if (!get_inputs(dataset, params, rois, &conv, t10, &in, error)) {
        fm_dce_inputs_clear(&in);
        return NULL;
    }
    const char *save = fm_params_get_string(params, "save_inputs_csv");
    if (*save && !fm_dce_inputs_save_csv(save, &in, error)) {
        fm_dce_inputs_clear(&in);
        return NULL;
    }

    gsize n_fit = 0;
    g_autofree guint8 *mask =
        fm_dce_fit_mask(dataset, rois, &conv, t10, in.ca,
                        fm_params_get_double(params, "fit_threshold"), &n_fit, error);
    g_autofree guint8 *liver = fm_dce_role_mask(rois, FM_DCE_ROLE_LIVER, &g, NULL);
    gboolean by_liver = liver != NULL;
    if (!mask) {
        fm_dce_inputs_clear(&in);
        return NULL;
    }
    /* Without a liver ROI the threshold picks what enhances, the input vessels most of all; yet
     * they are the inputs, not liver: their voxels are left out (as the standard models leave
     * out the artery's). */
    gsize left_out = 0;
    for (int r = 0; !by_liver && r < 2; r++) {
        g_autofree guint8 *vessel =
            fm_dce_role_mask(rois, r == 0 ? FM_DCE_ROLE_AORTA : FM_DCE_ROLE_PORTAL_VEIN, &g, NULL);
        for (gsize v = 0; vessel && v < (gsize)g.nx * g.ny * g.nz; v++)
            if (vessel[v] && mask[v]) {
                mask[v] = 0;
                left_out++;
            }
    }
    n_fit -= left_out;
    if (n_fit == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    by_liver ? _("%s: the liver ROI holds no voxel")
                             : _("%s: no voxel reaches "
                                 "the fit threshold"),
                    label);
        fm_dce_inputs_clear(&in);
        return NULL;
    }
    g_autofree gsize *index = NULL;
    g_autofree float *tissue = fm_dce_tissue_curves(dataset, mask, n_fit, &conv, t10, &index);

    fm_dce_params kp;
    fm_dce_params_defaults(&kp);
    kp.n_times = g.nt;
    kp.times_s = in.times_s;
    kp.ca = in.ca;
    kp.cp = in.cp;
    static const char *const initial_keys[FM_DCE_N_PARAMS] = {
        "initial_ka", "initial_kp", "initial_kl", "initial_tau_a", "initial_tau_p"};
    for (int i = 0; i < FM_DCE_N_PARAMS; i++)
        kp.initial[i] = fm_params_get_double(params, initial_keys[i]);
    kp.model_dt_s = fm_params_get_double(params, "model_dt_s");
    kp.max_iterations = fm_params_get_int(params, "max_iterations");
    kp.tolerance = fm_params_get_double(params, "tolerance");
    kp.tolerance_mode = g_strcmp0(fm_params_get_choice(params, "tolerance_mode"), "absolute") == 0
                            ? FM_DCE_TOL_ABSOLUTE
                            : FM_DCE_TOL_RELATIVE;
    kp.restarts = fm_params_get_int(params, "restarts");
    kp.start = g_strcmp0(fm_params_get_choice(params, "start"), "initial") == 0
                   ? FM_DCE_START_INITIAL
                   : FM_DCE_START_GRID;

    fm_dce_outputs out;
    g_autofree double *values = g_new(double, (gsize)FM_DCE_OUT_COUNT *n_fit);
    for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
        out.map[o] = values + (gsize)o * n_fit;
    fm_run_info info;
    memset(&info, 0, sizeof info);
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_dce_fit(&kp, tissue, (long long)n_fit, &out,
                              context ? context->backend : FM_BACKEND_AUTO,
                              context ? fm_method_tick : NULL, context, &info, msg, sizeof msg);
    fm_dce_inputs_clear(&in);
    g_clear_pointer(&tissue, g_free); /* the curves are done with before the maps are made */
    fm_method_kernel_done(context, &info);
    if (st != FM_OK) {
        fm_method_set_kernel_error(error, st, msg);
        return NULL;
    }

    /* Maps per slice: width nx, height ny, one frame per z; voxels not fitted stay NaN. */
    fm_result *result = fm_result_new(method->id);
    fm_map *maps[OUT_TOTAL];
    for (int o = 0; o < OUT_TOTAL; o++) {
        maps[o] = fm_map_new(dce_outputs[o].name, dce_outputs[o].unit, g.nx, g.ny, g.nz);
        for (gsize i = 0; i < fm_map_n_values(maps[o]); i++)
            maps[o]->data[i] = NAN;
    }
    gsize not_converged = 0;
    for (gsize k = 0; k < n_fit; k++) {
        gsize v = index[k];
        for (int o = 0; o < FM_DCE_OUT_COUNT; o++)
            maps[o]->data[v] = (float)out.map[o][k];
        double ka = out.map[FM_DCE_OUT_KA][k], kpv = out.map[FM_DCE_OUT_KP][k];
        double kl = out.map[FM_DCE_OUT_KL][k];
        /* kl in ml/100g/min is kl/6000 per second, so the mean transit time is 6000/kl s. */
        maps[OUT_ARTERIAL_FRACTION]->data[v] = ka + kpv > 0 ? (float)(ka / (ka + kpv)) : NAN;
        maps[OUT_DISTRIBUTION_VOLUME]->data[v] = kl > 0 ? (float)((ka + kpv) / kl) : NAN;
        maps[OUT_MTT]->data[v] = kl > 0 ? (float)(6000.0 / kl) : NAN;
        not_converged += out.map[FM_DCE_OUT_CONVERGED][k] != 1.0;
    }
    for (int o = 0; o < OUT_TOTAL; o++)
        fm_result_add_map(result, maps[o]);

    fm_dce_result_set_run(result, &info);
    GString *note = g_string_new(NULL);
    if (left_out)
        g_string_append_printf(note,
                               _("%" G_GSIZE_FORMAT
                                 " voxels fitted (above the fit threshold; %" G_GSIZE_FORMAT
                                 " voxels of the aorta and portal-vein ROIs left out)"),
                               n_fit, left_out);
    else
        g_string_append_printf(note, _("%" G_GSIZE_FORMAT " voxels fitted (%s)"), n_fit,
                               by_liver ? _("liver ROI") : _("above the fit threshold"));
    fm_dce_note_append_fit(note, not_converged, &info);
    /* The reader fell back to another time tag or rule: the maps depend on it, say so. */
    const char *times_note = fm_dataset_get_meta(dataset, FM_META_FRAME_TIMES_NOTE);
    if (times_note)
        g_string_append_printf(note, "; %s", times_note);
    result->note = g_string_free(note, FALSE);
    return result;
}

const fm_method fm_method_dce_dual_input = {
    .id = "dce.dual_input",
    .family = "dce",
    .title = N_("Dual-input liver perfusion"),
    .description = N_("Fits every liver voxel to the dual-input single-compartment model "
                      "dCl/dt = ka Ca(t - tau_a) + kp Cp(t - tau_p) - kl Cl by Nelder-Mead; the "
                      "inputs are the mean curves of the aorta and portal_vein ROIs (or a CSV), "
                      "a liver ROI limits the fit (Wang & Cao, Phys. Med. Biol. 57, 5601, 2012)."),
    .params = dce_params,
    .n_params = G_N_ELEMENTS(dce_params),
    /* Checked by run() itself, not the registry: a CSV can stand in for both ROIs, and the
     * message says what to draw; fm_dce_required_roles() lists them for the GUI. */
    .roi_roles = NULL,
    .outputs = dce_outputs,
    .n_outputs = G_N_ELEMENTS(dce_outputs),
    .run = dce_run,
};
