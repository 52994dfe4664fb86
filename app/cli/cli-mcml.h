/* Shared by `mcml run` (cli-mcml.c) and its chunked form and `mcml merge` (cli-mcml-chunks.c). */
#pragma once

#include <glib.h>

#include "app/cli/cli.h"
#include "app/core/io/mci.h"
#include "app/core/result.h"

G_BEGIN_DECLS

/* Writes OUT.mco (from result's maps, as a single run writes it) and OUT-a_rz.tif,
 * OUT-fluence_rz.tif; r receives the arrays written (free with fm_mcml_result_clear), tiffs the
 * TIFF paths. An exit code, printed when not FM_EXIT_OK. */
int fm_cli_mcml_write_outputs(const char *mco, const fm_mci_run *run, const fm_result *result,
                              fm_mcml_result *r, GPtrArray *tiffs);
void fm_cli_mcml_print_json(const fm_result *result, const fm_mcml_result *r, const char *mco,
                            GPtrArray *tiffs, gint64 run_id);

/* `mcml run --chunks N -o DIR` for the resolved run (n_photons already the whole run's). */
int fm_cli_mcml_run_chunks(const fm_cli_args *args, const fm_params *params, const fm_mci_run *run,
                           fm_backend backend);
/* `mcml merge DIR -o OUT.mco [--json]` (argv after "merge"). */
int fm_cli_mcml_merge(int argc, char **argv);

G_END_DECLS
