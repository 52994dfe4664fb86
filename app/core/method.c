/* Method registry and the synchronous run wrapper shared by jobs, CLI and tests. */
#include "method.h"

#include <glib/gi18n.h>

#include "error.h"
#include "kernels/resident.h"
#include "methods.h"
#include "roi.h"

static const fm_method *const registry[] = {
    &fm_method_lsi_spatial,
    &fm_method_lsi_temporal,
    &fm_method_lsi_spatiotemporal,
    &fm_method_flim_iem,
    &fm_method_flim_cmm,
    &fm_method_flim_rld,
    &fm_method_flim_phasor,
    &fm_method_flim_bcmm1,
    &fm_method_flim_bcmm2,
    &fm_method_flim_lsm,
    &fm_method_flim_mle,
    &fm_method_flim_ga,
    &fm_method_mcml_run,
    &fm_method_dce_dual_input,
    &fm_method_dce_tofts,
    &fm_method_dce_extended_tofts,
    &fm_method_dce_patlak,
    &fm_method_dce_2cxm,
    &fm_method_dce_2cum,
    &fm_method_dce_t1_vfa,
    &fm_method_oct_bscan,
};

const fm_method *const *fm_methods_all(int *n_methods)
{
    if (n_methods)
        *n_methods = (int)G_N_ELEMENTS(registry);
    return registry;
}

const fm_method *fm_method_find(const char *id)
{
    for (gsize i = 0; i < G_N_ELEMENTS(registry); i++)
        if (g_strcmp0(registry[i]->id, id) == 0)
            return registry[i];
    return NULL;
}

fm_params *fm_method_default_params(const fm_method *method)
{
    fm_params *p = fm_params_new(method->params, method->n_params);
    fm_params_set_owner(p, method->id);
    return p;
}

fm_result *fm_method_run(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                         GPtrArray *rois, fm_job_context *context, GError **error)
{
    g_return_val_if_fail(method != NULL && method->run != NULL, NULL);
    /* MCML reads its input (.mci file or preset) from its parameters: a dataset is optional. */
    gboolean needs_dataset = g_strcmp0(method->family, "mcml") != 0;
    if (needs_dataset &&
        (dataset == NULL || dataset->data == NULL || fm_dataset_n_elements(dataset) == 0)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: no data to process"), method->id);
        return NULL;
    }
    int n_specs = 0;
    const fm_param_spec *specs = params ? fm_params_specs(params, &n_specs) : NULL;
    if (params != NULL && specs != method->params) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: parameters belong to another method"), method->id);
        return NULL;
    }
    /* Methods that need ROIs of given roles get them or a clear message. */
    for (int r = 0; method->roi_roles && method->roi_roles[r]; r++) {
        gboolean found = FALSE;
        for (guint i = 0; rois && i < rois->len && !found; i++) {
            const fm_roi *roi = g_ptr_array_index(rois, i);
            found = g_strcmp0(roi->role, method->roi_roles[r]) == 0;
        }
        if (!found) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: needs an ROI with role '%s'"),
                        method->id, method->roi_roles[r]);
            return NULL;
        }
    }
    g_autoptr(fm_params) defaults = params ? NULL : fm_method_default_params(method);
    const fm_params *use = params ? params : defaults;
    fm_job_context fallback = {NULL, NULL, NULL, FM_BACKEND_AUTO, NULL, NULL};
    if (context == NULL)
        context = &fallback;
    if (context->cancellable && g_cancellable_is_cancelled(context->cancellable)) {
        g_set_error(error, FM_ERROR, FM_ERROR_CANCELLED, _("%s: cancelled"), method->id);
        return NULL;
    }

    /* The dataset may stay on the GPU for the next run on it (fm_dataset_unref forgets it); when
     * the kernels read it as it is, its upload starts now, beside run()'s own preparation. */
    if (dataset && dataset->data && context->backend != FM_BACKEND_CPU) {
        if (method->device_reads_dataset)
            fm_resident_prefetch(dataset->data, fm_dataset_n_bytes(dataset));
        else
            fm_resident_offer(dataset->data, fm_dataset_n_bytes(dataset));
    }
    fm_stage_times kernels_before = context->stages ? *context->stages : (fm_stage_times){0};
    fm_job_context_stage(context, FM_STAGE_PREPARE);
    gint64 t0 = g_get_monotonic_time();
    fm_result *result = method->run(method, dataset, use, rois, context, error);
    gint64 t1 = g_get_monotonic_time();
    if (context->stages) {
        /* What run() spent outside the kernels is the method's own preparation. */
        double in_kernels = 0.0;
        for (int s = FM_STAGE_UPLOAD; s <= FM_STAGE_DOWNLOAD; s++)
            in_kernels += context->stages->ms[s] - kernels_before.ms[s];
        context->stages->ms[FM_STAGE_PREPARE] += MAX(0.0, (t1 - t0) / 1000.0 - in_kernels);
    }
    if (result == NULL) {
        if (error && *error == NULL)
            g_set_error(error, FM_ERROR, FM_ERROR_COMPUTE, _("%s: failed without a reason"),
                        method->id);
        return NULL;
    }
    g_free(result->method_id);
    result->method_id = g_strdup(method->id);
    g_free(result->params_json);
    result->params_json = fm_params_to_json(use);
    result->elapsed_ms = (double)(t1 - t0) / 1000.0;
    return result;
}

void fm_method_set_kernel_error(GError **error, int status, const char *message)
{
    FmErrorCode code;
    switch ((fm_status)status) {
    case FM_ERR_INVALID_ARG:
        code = FM_ERROR_BAD_PARAM;
        break;
    case FM_ERR_NO_DEVICE:
    case FM_ERR_DEVICE:
        code = FM_ERROR_DEVICE;
        break;
    case FM_ERR_CANCELLED:
        code = FM_ERROR_CANCELLED;
        break;
    default:
        code = FM_ERROR_COMPUTE;
        break;
    }
    if (message && *message)
        g_set_error_literal(error, FM_ERROR, code, message);
    else
        g_set_error(error, FM_ERROR, code, "%s", fm_status_name((fm_status)status));
}

void fm_method_kernel_done(fm_job_context *context, const fm_run_info *info)
{
    if (context && context->stages && info)
        fm_stage_times_add_kernel(context->stages, info);
}

void fm_job_context_stage(fm_job_context *context, fm_stage stage)
{
    if (context && context->stage_started)
        context->stage_started(stage, context->progress_user);
}

int fm_method_tick(void *context, double fraction)
{
    fm_job_context *ctx = context;
    if (ctx == NULL)
        return 0;
    if (ctx->progress)
        ctx->progress(fraction, ctx->progress_user);
    return ctx->cancellable && g_cancellable_is_cancelled(ctx->cancellable) ? 1 : 0;
}
