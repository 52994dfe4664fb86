/* FmDceResults: the perfusion results of one slice as a compact table beside the map: one
 * column per ROI with fitted voxels (four side by side, further ones in bands below), one row
 * per parameter (unit in its header), mean over sd. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/result.h"

G_BEGIN_DECLS

#define FM_TYPE_DCE_RESULTS (fm_dce_results_get_type())
G_DECLARE_FINAL_TYPE(FmDceResults, fm_dce_results, FM, DCE_RESULTS, GtkBox)

GtkWidget *fm_dce_results_new(void);
/* The index-th ROI's outline colour as drawn on a light background (table, plot): the palette's
 * white, made for the dark anatomy, becomes a dark gray. */
void fm_dce_roi_colour_on_light(guint index, double rgb[3]);
/* Rebuilds the table: rois (fm_roi*, borrowed for the call; NULL none) on `slice` of a result
 * whose maps have nz frames (one per slice). have_dataset FALSE empties it. */
void fm_dce_results_update(FmDceResults *results, const fm_result *result, GPtrArray *rois,
                           int slice, int nz, gboolean have_dataset);
/* One line under the heading on the run on show (model, input, hematocrit, delay); NULL or ""
 * hides it. */
void fm_dce_results_set_run(FmDceResults *results, const char *summary);
/* The table's grid, the scrolled window around it and the run's line (borrowed), for tests. */
GtkWidget *fm_dce_results_get_run_label(FmDceResults *results);
GtkWidget *fm_dce_results_get_grid(FmDceResults *results);
GtkWidget *fm_dce_results_get_scroller(FmDceResults *results);

G_END_DECLS
