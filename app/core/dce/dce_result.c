/* The result fields and note clauses the DCE fits share (dce_result.h). */
#include "app/core/dce/dce_result.h"

#include <glib/gi18n.h>

void fm_dce_result_set_run(fm_result *result, const fm_run_info *info)
{
    result->backend = g_strdup(info->backend_used == FM_BACKEND_CUDA ? "cuda" : "cpu");
    result->device = g_strdup(info->device_name);
}

void fm_dce_note_append_fit(GString *note, gsize not_converged, const fm_run_info *info)
{
    if (not_converged)
        g_string_append_printf(note, _("; %" G_GSIZE_FORMAT " stopped at max_iterations"),
                               not_converged);
    if (info->invalid_values)
        g_string_append_printf(note, _("; %lld voxels had non-finite curves"),
                               info->invalid_values);
    if (info->fell_back)
        g_string_append_printf(note, _("; fell back to the CPU: %s"), info->fallback_reason);
}
