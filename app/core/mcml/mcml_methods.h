/* Helpers around the mcml.run method shared by the CLI and the GUI: resolving the input and
 * turning a result's maps back into MCML arrays for writing .mco files. */
#pragma once

#include "app/core/dataset.h"
#include "app/core/io/mci.h"
#include "app/core/params.h"
#include "app/core/result.h"

G_BEGIN_DECLS

/* The run mcml.run would simulate for these parameters: mci_file (or the dataset's .mci, or
 * preset), run number, then photons, seed and mode applied. run->output_name is g_strdup'ed:
 * free it with g_free. */
gboolean fm_mcml_resolve_input(const fm_params *params, const fm_dataset *dataset, fm_mci_run *run,
                               GError **error);

/* Arrays of an fm_mcml_result filled from mcml.run's maps (a_l, a_z, a_rz, rd_r, rd_a, rd_ra,
 * tt_r, tt_a, tt_ra, rat) for the grid of params; missing maps leave NULL arrays. Free with
 * fm_mcml_result_clear. Values pass through float32, so totals keep about 7 digits. */
gboolean fm_mcml_result_from_maps(const fm_result *result, const fm_mcml_params *params,
                                  fm_mcml_result *out, GError **error);
void fm_mcml_result_clear(fm_mcml_result *result);
/* Arrays of an fm_mcml_result for params' grid, zeroed (a_rz only when absorption is recorded);
 * free with fm_mcml_result_clear. */
void fm_mcml_result_alloc(fm_mcml_result *result, const fm_mcml_params *params);

/* mcml.run's result for a finished run: its maps (A[r][z] and fluence as images with r across
 * and z down, Rd/Tt arrays and curves, the totals in "rat") and its note, as a single run and a
 * merge of chunks both write them. */
fm_result *fm_mcml_result_to_maps(const fm_mcml_params *params, const fm_mcml_result *result,
                                  const char *backend, const char *device);

G_END_DECLS
