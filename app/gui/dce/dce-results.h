/* FmDceResults: the perfusion results of one slice as a compact table beside the map: one
 * column per ROI with fitted voxels, one row per parameter (unit in its header), mean ± sd. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/result.h"

G_BEGIN_DECLS

#define FM_TYPE_DCE_RESULTS (fm_dce_results_get_type())
G_DECLARE_FINAL_TYPE(FmDceResults, fm_dce_results, FM, DCE_RESULTS, GtkBox)

GtkWidget *fm_dce_results_new(void);
/* Rebuilds the table: rois (fm_roi*, borrowed for the call; NULL none) on `slice` of a result
 * whose maps have nz frames (one per slice). have_dataset FALSE empties it. */
void fm_dce_results_update(FmDceResults *results, const fm_result *result, GPtrArray *rois,
                           int slice, int nz, gboolean have_dataset);
/* The table's grid and the scrolled window around it (borrowed), for tests. */
GtkWidget *fm_dce_results_get_grid(FmDceResults *results);
GtkWidget *fm_dce_results_get_scroller(FmDceResults *results);

G_END_DECLS
