/* Registry entries for laser speckle contrast imaging: spatial, temporal, spatio-temporal. */
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/lsi/lsi_live.h"
#include "app/core/methods.h"
#include "kernels/lsi/lsi.h"

typedef enum {
    LSI_SPATIAL = 0,
    LSI_TEMPORAL,
    LSI_SPATIOTEMPORAL,
} lsi_kind;

static const char *const border_choices[] = {"valid", "zero", NULL};

#define WINDOW_SPEC                                                                                \
    {                                                                                              \
        .key = "window", .type = FM_PARAM_INT, .title = N_("Window"), .default_value = 5,          \
        .min = 3, .max = 15, .unit = "px", .odd_only = TRUE,                                       \
        .help = N_("Side of the square window; the paper's omega = (window-1)/2.")                 \
    }
#define EXPOSURE_SPEC                                                                              \
    {                                                                                              \
        .key = "exposure_ms", .type = FM_PARAM_DOUBLE, .title = N_("Exposure"),                    \
        .default_value = 10, .min = 0.001, .max = 10000, .unit = "ms",                             \
        .help = N_("Camera exposure time T, used for the speckle flow index 1/(2 T K^2).")         \
    }
#define FRAMES_SPEC                                                                                \
    {                                                                                              \
        .key = "frames", .type = FM_PARAM_INT, .title = N_("Frames"), .default_value = 25,         \
        .min = 2, .max = 1024, .unit = "frames",                                                   \
        .help = N_("Number of consecutive frames each contrast value is computed over.")           \
    }
#define BORDER_SPEC                                                                                \
    {                                                                                              \
        .key = "border", .type = FM_PARAM_ENUM, .title = N_("Border"), .default_choice = "valid",  \
        .choices = border_choices,                                                                 \
        .help =                                                                                    \
            N_("valid: pixels whose window leaves the image are NaN; zero: outside counts as 0 "   \
               "(the paper's).")                                                                   \
    }

static const fm_param_spec spatial_params[] = {WINDOW_SPEC, EXPOSURE_SPEC, BORDER_SPEC};
/* Pure temporal contrast uses no window: each pixel is its own sample over time. */
static const fm_param_spec temporal_params[] = {FRAMES_SPEC, EXPOSURE_SPEC};
static const fm_param_spec spatiotemporal_params[] = {WINDOW_SPEC, FRAMES_SPEC, EXPOSURE_SPEC,
                                                      BORDER_SPEC};

static const fm_output_spec lsi_outputs[] = {
    {.name = "contrast", .unit = "1", .title = N_("Speckle contrast K")},
    {.name = "sfi", .unit = "1/s", .title = N_("Speckle flow index")},
};

static const char *dataset_label(const fm_dataset *dataset)
{
    if (dataset->source_path) {
        const char *slash = strrchr(dataset->source_path, G_DIR_SEPARATOR);
        return slash ? slash + 1 : dataset->source_path;
    }
    return "dataset";
}

void fm_lsi_params_read(const fm_params *params, fm_lsi_params *out)
{
    *out = (fm_lsi_params){
        /* temporal contrast ignores the window; 3 is the smallest the kernel accepts */
        .window = fm_params_has(params, "window") ? fm_params_get_int(params, "window") : 3,
        .frames = fm_params_has(params, "frames") ? fm_params_get_int(params, "frames") : 2,
        .exposure_ms = fm_params_get_double(params, "exposure_ms"),
        .border = FM_LSI_BORDER_VALID,
    };
    if (fm_params_has(params, "border") &&
        g_strcmp0(fm_params_get_choice(params, "border"), "zero") == 0)
        out->border = FM_LSI_BORDER_ZERO;
}

static fm_result *lsi_run(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                          fm_job_context *context, lsi_kind kind, GError **error)
{
    const char *label = dataset_label(dataset);
    if (dataset->n_dims < 2 || dataset->n_dims > 3) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: speckle contrast needs a 2-D image or a 3-D stack, not %d dimensions"),
                    label, dataset->n_dims);
        return NULL;
    }
    if (dataset->type != FM_PIXEL_U8 && dataset->type != FM_PIXEL_U16 &&
        dataset->type != FM_PIXEL_F32) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: speckle contrast needs uint8, uint16 or float32 pixels"), label);
        return NULL;
    }

    fm_lsi_params lp;
    fm_lsi_params_read(params, &lp);

    int width = fm_dataset_width(dataset), height = fm_dataset_height(dataset);
    int n_frames = fm_dataset_frames(dataset);
    int temporal = kind != LSI_SPATIAL;
    char msg[FM_MSG_LEN] = "";
    if (fm_lsi_check(&lp, width, height, n_frames, temporal, msg, sizeof msg) != FM_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", label, msg);
        return NULL;
    }

    int out_frames = temporal ? n_frames - lp.frames + 1 : n_frames;
    /* the kernels write every value, NaN borders included */
    fm_map *contrast = fm_map_new_uninit("contrast", "1", width, height, out_frames);
    fm_map *sfi = fm_map_new_uninit("sfi", "1/s", width, height, out_frames);
    fm_backend backend = context ? context->backend : FM_BACKEND_AUTO;
    fm_tick_fn tick = context ? fm_method_tick : NULL;
    fm_run_info info;
    memset(&info, 0, sizeof info);

    fm_status status;
    switch (kind) {
    case LSI_SPATIAL:
        status = fm_lsi_spatial(&lp, dataset->data, dataset->type, width, height, n_frames,
                                contrast->data, sfi->data, backend, tick, context, &info, msg,
                                sizeof msg);
        break;
    case LSI_TEMPORAL:
        status = fm_lsi_temporal(&lp, dataset->data, dataset->type, width, height, n_frames,
                                 contrast->data, sfi->data, backend, tick, context, &info, msg,
                                 sizeof msg);
        break;
    default:
        status = fm_lsi_spatiotemporal(&lp, dataset->data, dataset->type, width, height, n_frames,
                                       contrast->data, sfi->data, backend, tick, context, &info,
                                       msg, sizeof msg);
        break;
    }
    fm_method_kernel_done(context, &info);
    if (status != FM_OK) {
        fm_map_free(contrast);
        fm_map_free(sfi);
        fm_method_set_kernel_error(error, status, msg);
        return NULL;
    }

    fm_result *result = fm_result_new(method->id);
    result->backend = g_strdup(info.backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
    result->device = g_strdup(info.device_name);
    GString *note = g_string_new(NULL);
    if (info.fell_back)
        g_string_append_printf(note, _("fell back to the CPU: %s"), info.fallback_reason);
    /* The valid border is NaN by design; count only the NaNs it does not explain, so the
     * note speaks of real zero-mean windows whatever the kernel counts as invalid. */
    long long nan_values = 0, border_values = 0;
    const long long n_values = (long long)fm_map_n_values(contrast);
    const float *k_values = contrast->data;
#pragma omp parallel for reduction(+ : nan_values) schedule(static)
    for (long long i = 0; i < n_values; i++)
        nan_values += isnan(k_values[i]) ? 1 : 0;
    if (kind != LSI_TEMPORAL && lp.border == FM_LSI_BORDER_VALID) {
        long long r = lp.window / 2;
        long long inner = MAX(0, width - 2 * r) * MAX(0, height - 2 * r);
        border_values = ((long long)width * height - inner) * out_frames;
    }
    long long zero_mean = nan_values - border_values;
    if (info.invalid_values > 0 && zero_mean > 0) {
        if (note->len)
            g_string_append(note, "; ");
        g_string_append_printf(note, _("%lld pixels had no valid contrast (zero mean)"), zero_mean);
    }
    result->note = note->len ? g_string_free(note, FALSE) : (g_string_free(note, TRUE), NULL);
    fm_result_add_map(result, contrast);
    fm_result_add_map(result, sfi);
    return result;
}

static fm_result *run_spatial(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                              GPtrArray *rois, fm_job_context *context, GError **error)
{
    return lsi_run(method, dataset, params, context, LSI_SPATIAL, error);
}

static fm_result *run_temporal(const fm_method *method, fm_dataset *dataset,
                               const fm_params *params, GPtrArray *rois, fm_job_context *context,
                               GError **error)
{
    return lsi_run(method, dataset, params, context, LSI_TEMPORAL, error);
}

static fm_result *run_spatiotemporal(const fm_method *method, fm_dataset *dataset,
                                     const fm_params *params, GPtrArray *rois,
                                     fm_job_context *context, GError **error)
{
    return lsi_run(method, dataset, params, context, LSI_SPATIOTEMPORAL, error);
}

const fm_method fm_method_lsi_spatial = {
    .id = "lsi.spatial",
    .family = "lsi",
    .title = N_("Spatial speckle contrast"),
    .description = N_("Speckle contrast K = sigma/mean over a square window sliding across each "
                      "frame, and the speckle flow index SFI = 1/(2 T K^2). A stack gives one "
                      "map per frame (Yang, Cuccia, Choi, J. Biomed. Opt. 16, 016009, 2011)."),
    .params = spatial_params,
    .n_params = G_N_ELEMENTS(spatial_params),
    .outputs = lsi_outputs,
    .n_outputs = G_N_ELEMENTS(lsi_outputs),
    .device_reads_dataset = TRUE,
    .run = run_spatial,
    .live = &fm_lsi_live_spatial_ops,
};

const fm_method fm_method_lsi_temporal = {
    .id = "lsi.temporal",
    .family = "lsi",
    .title = N_("Temporal speckle contrast"),
    .description = N_("Speckle contrast of each pixel over a number of consecutive frames, "
                      "sliding by one frame, and the speckle flow index SFI = 1/(2 T K^2). "
                      "Keeps full spatial resolution at the cost of time resolution."),
    .params = temporal_params,
    .n_params = G_N_ELEMENTS(temporal_params),
    .outputs = lsi_outputs,
    .n_outputs = G_N_ELEMENTS(lsi_outputs),
    .device_reads_dataset = TRUE,
    .run = run_temporal,
    .live = &fm_lsi_live_temporal_ops,
};

const fm_method fm_method_lsi_spatiotemporal = {
    .id = "lsi.spatiotemporal",
    .family = "lsi",
    .title = N_("Spatio-temporal speckle contrast"),
    .description = N_("Speckle contrast over a square window times a number of consecutive "
                      "frames, sliding by one frame, and the speckle flow index "
                      "SFI = 1/(2 T K^2)."),
    .params = spatiotemporal_params,
    .n_params = G_N_ELEMENTS(spatiotemporal_params),
    .outputs = lsi_outputs,
    .n_outputs = G_N_ELEMENTS(lsi_outputs),
    .device_reads_dataset = TRUE,
    .run = run_spatiotemporal,
    .live = &fm_lsi_live_spatiotemporal_ops,
};
