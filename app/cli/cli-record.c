/* fluxmap-cli catalogue records: begin, abort and finish one run the same way for every command. */
#include <glib/gi18n.h>

#include "app/cli/cli.h"
#include "app/core/error.h"

void fm_cli_record_clear(fm_cli_record *record)
{
    g_clear_pointer(&record->catalogue, fm_catalogue_close);
    record->run_id = 0;
}

int fm_cli_record_begin(fm_cli_record *record, const fm_cli_args *args, const fm_dataset *dataset,
                        const char *method_id, const fm_params *params, GPtrArray *rois)
{
    record->catalogue = NULL;
    record->run_id = 0;
    if (fm_cli_has(args, "no_catalogue"))
        return FM_EXIT_OK;
    g_autofree char *dir = fm_catalogue_default_dir();
    g_autofree char *params_json = fm_params_to_json(params);
    g_autoptr(GError) error = NULL;
    record->catalogue = fm_catalogue_open(dir, &error);
    if (!record->catalogue ||
        !(record->run_id = fm_catalogue_begin_run(record->catalogue, dataset, method_id,
                                                  params_json, rois, &error)))
        return fm_cli_fail(FM_EXIT_INPUT,
                           _("catalogue: %s (--no-catalogue runs without recording the run)"),
                           error->message);
    return FM_EXIT_OK;
}

void fm_cli_record_abort(fm_cli_record *record, const GError *error)
{
    if (!record->catalogue)
        return;
    fm_catalogue_abort_run(record->catalogue, record->run_id,
                           g_error_matches(error, FM_ERROR, FM_ERROR_CANCELLED) ? FM_RUN_CANCELLED
                                                                                : FM_RUN_FAILED,
                           error->message, NULL);
}

int fm_cli_record_end(fm_cli_record *record, int code, const fm_result *result,
                      const char *failure_message)
{
    return fm_cli_record_end_with(record, code, result, NULL, NULL, failure_message);
}

int fm_cli_record_end_with(fm_cli_record *record, int code, const fm_result *result,
                           const char *const *files, const fm_map_stats *stats,
                           const char *failure_message)
{
    if (!record->catalogue)
        return code;
    g_autoptr(GError) error = NULL;
    if (code != FM_EXIT_OK)
        fm_catalogue_abort_run(record->catalogue, record->run_id, FM_RUN_FAILED, failure_message,
                               NULL);
    else if (!fm_catalogue_finish_run_with(record->catalogue, record->run_id, result, files, stats,
                                           &error))
        code = fm_cli_fail(FM_EXIT_INPUT, _("catalogue: %s"), error->message);
    return code;
}
