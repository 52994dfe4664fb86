/* Registry entries dce.tofts, dce.extended_tofts, dce.patlak, dce.2cxm and dce.2cum: voxelwise
 * standard pharmacokinetic models (kernels/dce/pk.h) from a 4-D series and an arterial input. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/pk_inputs.h"
#include "app/core/dce/dce_result.h"
#include "app/core/dce/dce_series.h"
#include "app/core/dce/dce_volume_map.h"
#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/methods.h"
#include "kernels/dce/pk.h"

static const char *const conversion_choices[] = FM_DCE_CONVERSION_CHOICES;
static const char *const aif_choices[] = {"roi", "csv", "parker", "georgiou", NULL};

static const fm_param_spec pk_params[] = {
    {.key = "aif",
     .type = FM_PARAM_ENUM,
     .title = N_("Arterial input"),
     .default_choice = "roi",
     .choices = aif_choices,
     .help = N_("roi: mean curve of the ROI with the role artery (or aorta); csv: the ca column "
                "of input_csv; parker, georgiou: the population blood curve placed at the bolus "
                "arrival found in the fitted voxels' mean curve.")},
    {.key = "input_csv",
     .type = FM_PARAM_STRING,
     .title = N_("Input curve file"),
     .default_choice = "",
     .help = N_("CSV t_s,ca,cp (dce.dual_input's format): ca is the plasma input, interpolated "
                "onto the frame times; given with aif roi, it stands in for the ROI.")},
    {.key = "hematocrit",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Haematocrit"),
     .default_value = 0.45,
     .min = 0,
     .max = 0.95,
     .unit = "1",
     .help = N_("ROI and population inputs are blood curves: plasma = blood / (1 - Hct); 0 = no "
                "correction. A CSV input is plasma already.")},
    {.key = "fit_delay",
     .type = FM_PARAM_BOOL,
     .title = N_("Fit arterial delay"),
     .default_value = 0,
     .help = N_("Fit the delay of the input in each voxel (-10..10 s) and write the delay map.")},
    {.key = "conversion",
     .type = FM_PARAM_ENUM,
     .title = N_("Signal to concentration"),
     .default_choice = "spgr",
     .choices = conversion_choices,
     .help = N_("spgr: spoiled gradient echo with T10, r1, TR and flip angle (mM); enhancement: "
                "S/S0 - 1; ct: HU - HU0; none: the data are concentrations in mM already.")},
    FM_DCE_PARAM_BASELINE_FRAMES,
    {.key = "t10_s",
     .type = FM_PARAM_DOUBLE,
     .title = N_("T10 tissue"),
     .default_value = 1.0,
     .min = 0.001,
     .max = 10,
     .unit = "s",
     .help = N_("SPGR: precontrast T1 of tissue where no T10 map is given.")},
    {.key = "t10_blood_s",
     .type = FM_PARAM_DOUBLE,
     .title = N_("T10 blood"),
     .default_value = 1.44,
     .min = 0,
     .max = 10,
     .unit = "s",
     .help = N_("SPGR: precontrast T1 of arterial blood for the ROI input (1.44 s at 1.5 T); 0 = "
                "the T10 map's mean over the ROI, else T10 tissue.")},
    {.key = "t10_map",
     .type = FM_PARAM_STRING,
     .title = N_("T10 map file"),
     .default_choice = "",
     .help = N_("SPGR: NIfTI or TIFF with the precontrast T1 in s of every voxel (x, y, z), e.g. "
                "from dce.t1_vfa; empty = T10 tissue.")},
    FM_DCE_PARAM_R1,
    {.key = "tr_ms",
     .type = FM_PARAM_DOUBLE,
     .title = N_("TR"),
     .default_value = 0,
     .min = 0,
     .max = 10000,
     .unit = "ms",
     .auto_at_min = TRUE,
     .help = N_("SPGR: repetition time; auto = from the DICOM headers (RepetitionTime).")},
    {.key = "flip_deg",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Flip angle"),
     .default_value = 0,
     .min = 0,
     .max = 179.9,
     .unit = "deg",
     .auto_at_min = TRUE,
     .help = N_("SPGR: flip angle; auto = from the DICOM headers (FlipAngle).")},
    {.key = "fit_threshold",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Fit threshold"),
     .default_value = 0.03,
     .min = 0,
     .max = 1,
     .unit = "1",
     .help = N_("Without a tissue ROI: fit voxels whose peak concentration is at least this "
                "fraction of the input's peak (and, for MRI, whose baseline signal is at least "
                "this fraction of the largest).")},
    FM_DCE_PARAM_STACK_SLICES,
    FM_DCE_PARAM_FRAME_INTERVAL,
    {.key = "max_iterations",
     .type = FM_PARAM_INT,
     .title = N_("Max iterations"),
     .default_value = 300,
     .min = 1,
     .max = 100000,
     .help = N_("Levenberg-Marquardt iterations per voxel.")},
    {.key = "tolerance",
     .type = FM_PARAM_DOUBLE,
     .title = N_("Tolerance"),
     .default_value = 1e-8,
     .min = 0,
     .max = 1,
     .help = N_("Relative change of the cost that ends a voxel's fit.")},
};

/* One output list per model; the fit measures close every list. */
#define FIT_MEASURES                                                                               \
    {.name = "rmse", .unit = "mM", .title = N_("RMS residual")},                                   \
        {.name = "r2", .unit = "1", .title = N_("Coefficient of determination R^2")},              \
        {.name = "aic", .unit = "1", .title = N_("Akaike information criterion")},                 \
        {.name = "converged",                                                                      \
         .unit = "1",                                                                              \
         .title = N_("Converged (1) or stopped at the limit (0)")},                                \
    {                                                                                              \
        .name = "iterations", .unit = "1", .title = N_("Iterations")                               \
    }
#define OUT_KTRANS                                                                                 \
    {                                                                                              \
        .name = "ktrans", .unit = "1/min", .title = N_("Transfer constant Ktrans")                 \
    }
#define OUT_VE                                                                                     \
    {                                                                                              \
        .name = "ve", .unit = "1", .title = N_("Extravascular extracellular volume ve")            \
    }
#define OUT_VP                                                                                     \
    {                                                                                              \
        .name = "vp", .unit = "1", .title = N_("Plasma volume vp")                                 \
    }
#define OUT_FP                                                                                     \
    {                                                                                              \
        .name = "fp", .unit = "ml/100ml/min", .title = N_("Plasma flow Fp")                        \
    }
#define OUT_PS                                                                                     \
    {                                                                                              \
        .name = "ps", .unit = "1/min", .title = N_("Permeability-surface product PS")              \
    }
#define OUT_KEP                                                                                    \
    {                                                                                              \
        .name = "kep", .unit = "1/min", .title = N_("Rate constant kep")                           \
    }
#define OUT_DELAY                                                                                  \
    {                                                                                              \
        .name = "delay", .unit = "s", .title = N_("Arterial delay (when fitted)")                  \
    }

static const fm_output_spec tofts_outputs[] = {OUT_KTRANS, OUT_VE, OUT_KEP, OUT_DELAY,
                                               FIT_MEASURES};
static const fm_output_spec etofts_outputs[] = {OUT_KTRANS, OUT_VE,    OUT_VP,
                                                OUT_KEP,    OUT_DELAY, FIT_MEASURES};
static const fm_output_spec patlak_outputs[] = {OUT_KTRANS, OUT_VP, OUT_DELAY, FIT_MEASURES};
static const fm_output_spec cxm_outputs[] = {OUT_FP,  OUT_PS,    OUT_VE,      OUT_VP,
                                             OUT_KEP, OUT_DELAY, FIT_MEASURES};
static const fm_output_spec cum_outputs[] = {OUT_FP, OUT_PS, OUT_VP, OUT_DELAY, FIT_MEASURES};

/* An output map name to its kernel output; Patlak's ktrans is the kernel's PS slot. */
static int kernel_output(fm_pk_model model, const char *name)
{
    static const char *const names[FM_PK_OUT_COUNT] = {"ktrans", "ve",  "vp",        "fp",
                                                       "ps",     "kep", "delay",     "rmse",
                                                       "r2",     "aic", "converged", "iterations"};
    if (model == FM_PK_PATLAK && strcmp(name, "ktrans") == 0)
        return FM_PK_OUT_PS;
    for (int o = 0; o < FM_PK_OUT_COUNT; o++)
        if (strcmp(names[o], name) == 0)
            return o;
    return -1;
}

static fm_pk_model model_of(const fm_method *method)
{
    static const char *const ids[FM_PK_N_MODELS] = {"dce.tofts", "dce.extended_tofts", "dce.patlak",
                                                    "dce.2cxm", "dce.2cum"};
    for (int m = 0; m < FM_PK_N_MODELS; m++)
        if (strcmp(method->id, ids[m]) == 0)
            return (fm_pk_model)m;
    return FM_PK_TOFTS;
}

/* The optional T10 map, checked against the volume. */
static float *load_t10_map(const char *path, const fm_dce_geometry *g, GError **error)
{
    return fm_dce_read_volume_map(path, g, 1.0, _("%s: the T10 map must be %d x %d x %d voxels"),
                                  error);
}

/* Conversion from the parameters; SPGR's TR and flip angle from the headers when not given.
 * *acq_note says where they came from. */
static gboolean conversion_from(const fm_dataset *ds, const fm_params *p, fm_dce_conversion *c,
                                char **acq_note, GError **error)
{
    fm_dce_conversion_parse(fm_params_get_choice(p, "conversion"), &c->kind);
    c->baseline_frames = fm_params_get_int(p, "baseline_frames");
    c->t10_s = fm_params_get_double(p, "t10_s");
    c->r1_per_mm_s = fm_params_get_double(p, "r1_per_mm_s");
    c->tr_ms = fm_params_get_double(p, "tr_ms");
    c->flip_deg = fm_params_get_double(p, "flip_deg");
    if (c->kind != FM_DCE_CONV_SPGR)
        return TRUE;
    gboolean tr_header = FALSE, flip_header = FALSE;
    if (!fm_pk_conversion_headers(ds, c, &tr_header, &flip_header, error))
        return FALSE;
    if (!(c->tr_ms > 0) || !(c->flip_deg > 0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: SPGR conversion needs the %s: give --%s (the file does not say it)"),
                    ds->source_path ? ds->source_path : "dataset",
                    !(c->tr_ms > 0) ? _("repetition time") : _("flip angle"),
                    !(c->tr_ms > 0) ? "tr_ms" : "flip_deg");
        return FALSE;
    }
    *acq_note = g_strdup_printf(_("TR %g ms (%s), flip angle %g deg (%s), r1 %g /(mM s)"), c->tr_ms,
                                tr_header ? _("headers") : _("given"), c->flip_deg,
                                flip_header ? _("headers") : _("given"), c->r1_per_mm_s);
    return TRUE;
}

static fm_result *pk_run(const fm_method *method, fm_dataset *source, const fm_params *params,
                         GPtrArray *rois, fm_job_context *context, GError **error)
{
    const fm_pk_model model = model_of(method);
    /* The same series dce.dual_input reads: a TIFF stack by its slices and frame interval. */
    g_autoptr(fm_dataset) dataset = fm_dce_series_of(source, params, error);
    if (!dataset)
        return NULL;
    fm_dce_geometry g;
    if (!fm_dce_geometry_of(dataset, &g, error))
        return NULL;
    fm_dce_conversion conv = {0};
    g_autofree char *acq_note = NULL;
    if (!conversion_from(dataset, params, &conv, &acq_note, error) ||
        !fm_dce_conversion_check(&conv, g.nt, error))
        return NULL;
    g_autofree float *t10 = NULL;
    const char *t10_path = fm_params_get_string(params, "t10_map");
    if (conv.kind == FM_DCE_CONV_SPGR && *t10_path && !(t10 = load_t10_map(t10_path, &g, error)))
        return NULL;

    fm_pk_input_request req = {
        .csv_path = fm_params_get_string(params, "input_csv"),
        .hematocrit = fm_params_get_double(params, "hematocrit"),
        .t10_blood_s = fm_params_get_double(params, "t10_blood_s"),
        .fit_threshold = fm_params_get_double(params, "fit_threshold"),
    };
    fm_pk_aif_parse(fm_params_get_choice(params, "aif"), &req.kind);
    if (req.kind == FM_PK_AIF_ROI && *req.csv_path)
        req.kind = FM_PK_AIF_CSV; /* the file stands in for the ROI, as for dce.dual_input */
    if (!fm_pk_inputs_check_units(dataset, &conv, req.kind, error))
        return NULL;
    fm_pk_inputs in = {0};
    if (!fm_pk_inputs_prepare(dataset, rois, &conv, t10, &req, &in, error))
        return NULL;

    fm_pk_params kp;
    fm_pk_params_defaults(&kp, model);
    kp.n_times = in.n_times;
    kp.times_s = in.times_s;
    kp.cp = in.cp;
    kp.fit_delay = fm_params_get_bool(params, "fit_delay");
    kp.max_iterations = fm_params_get_int(params, "max_iterations");
    kp.tolerance = fm_params_get_double(params, "tolerance");

    fm_pk_outputs out = {0};
    g_autofree double *values = g_new(double, (gsize)FM_PK_OUT_COUNT *in.n_fit);
    for (int o = 0; o < FM_PK_OUT_COUNT; o++)
        out.map[o] = values + (gsize)o * in.n_fit;
    fm_run_info info;
    memset(&info, 0, sizeof info);
    char msg[FM_MSG_LEN] = "";
    fm_status st = fm_pk_fit(&kp, in.tissue, (long long)in.n_fit, &out,
                             context ? context->backend : FM_BACKEND_AUTO,
                             context ? fm_method_tick : NULL, context, &info, msg, sizeof msg);
    fm_method_kernel_done(context, &info);
    if (st != FM_OK) {
        fm_method_set_kernel_error(error, st, msg);
        fm_pk_inputs_clear(&in);
        return NULL;
    }

    /* Maps per slice: width nx, height ny, one frame per z; voxels not fitted stay NaN. The
     * delay map only when the delay was fitted. */
    fm_result *result = fm_result_new(method->id);
    for (int o = 0; o < method->n_outputs; o++) {
        int k = kernel_output(model, method->outputs[o].name);
        if (k == FM_PK_OUT_DELAY && !kp.fit_delay)
            continue;
        fm_map *map =
            fm_map_new(method->outputs[o].name, method->outputs[o].unit, g.nx, g.ny, g.nz);
        for (gsize i = 0; i < fm_map_n_values(map); i++)
            map->data[i] = NAN;
        for (gsize v = 0; v < in.n_fit; v++)
            map->data[in.index[v]] = (float)out.map[k][v];
        fm_result_add_map(result, map);
    }
    gsize not_converged = 0;
    for (gsize v = 0; v < in.n_fit; v++)
        not_converged += out.map[FM_PK_OUT_CONVERGED][v] != 1.0;

    fm_dce_result_set_run(result, &info);
    GString *note = g_string_new(NULL);
    g_string_append_printf(note, _("%s fitted to %s; input: %s; conversion %s"),
                           fm_pk_model_name(model), in.voxel_note, in.input_note,
                           fm_dce_conversion_name(conv.kind));
    if (conv.kind == FM_DCE_CONV_SPGR) {
        g_autofree char *t10_text = t10 ? g_strdup(t10_path) : g_strdup_printf("%g s", conv.t10_s);
        g_string_append_printf(note, _(" (T10 tissue %s, %s)"), t10_text, acq_note);
    }
    if (kp.fit_delay)
        g_string_append(note, _("; arterial delay fitted"));
    fm_dce_note_append_fit(note, not_converged, &info);
    result->note = g_string_free(note, FALSE);
    fm_pk_inputs_clear(&in);
    return result;
}

#define PK_METHOD(ident, name, text, outs)                                                         \
    {                                                                                              \
        .id = ident, .family = "dce", .title = name, .description = text, .params = pk_params,     \
        .n_params = G_N_ELEMENTS(pk_params), .roi_roles = NULL, .outputs = outs,                   \
        .n_outputs = G_N_ELEMENTS(outs), .run = pk_run,                                            \
    }

/* roi_roles stay NULL: a CSV or population curve stands in for the artery ROI, and run() says
 * what to draw or give when nothing does. */
const fm_method fm_method_dce_tofts =
    PK_METHOD("dce.tofts", N_("Tofts"),
              N_("Standard Tofts model Ct = Ktrans Cp * exp(-kep t), kep = Ktrans/ve (Tofts et "
                 "al., JMRI 10, 223, 1999), fitted in every voxel; the input from an artery ROI, "
                 "a CSV or a population curve (Parker, Georgiou)."),
              tofts_outputs);
const fm_method fm_method_dce_extended_tofts = PK_METHOD(
    "dce.extended_tofts", N_("Extended Tofts"),
    N_("Extended Tofts model: the Tofts model plus the plasma volume vp Cp(t)."), etofts_outputs);
const fm_method fm_method_dce_patlak =
    PK_METHOD("dce.patlak", N_("Patlak"),
              N_("Patlak model Ct = Ktrans (= PS) integral of Cp + vp Cp: uptake without "
                 "backflux (Patlak, Blasberg, Fenstermacher 1983)."),
              patlak_outputs);
const fm_method fm_method_dce_2cxm =
    PK_METHOD("dce.2cxm", N_("Two-compartment exchange"),
              N_("Two-compartment exchange model: plasma flow Fp, permeability-surface product "
                 "PS, ve and vp (Sourbron & Buckley, Phys. Med. Biol. 57, R1, 2012)."),
              cxm_outputs);
const fm_method fm_method_dce_2cum =
    PK_METHOD("dce.2cum", N_("Two-compartment uptake"),
              N_("Two-compartment uptake model: Fp, PS and vp, no backflux from the interstitium "
                 "within the acquisition (Sourbron & Buckley 2012)."),
              cum_outputs);
