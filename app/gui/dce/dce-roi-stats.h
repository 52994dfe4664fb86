/* FmDceRoiStats: live statistics of the image under the ROIs of the slice on show, as a grid
 * (ROI, role, mean, sd, n) that ellipsizes names instead of wrapping rows over each other. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FM_TYPE_DCE_ROI_STATS (fm_dce_roi_stats_get_type())
G_DECLARE_FINAL_TYPE(FmDceRoiStats, fm_dce_roi_stats, FM, DCE_ROI_STATS, GtkScrolledWindow)

GtkWidget *fm_dce_roi_stats_new(void);
/* rois: fm_roi* (borrowed for the call), those on `slice` (or on every slice) are listed;
 * data: width x height values of the image on show (NULL: none); unit may be "" or NULL. */
void fm_dce_roi_stats_update(FmDceRoiStats *stats, GPtrArray *rois, int slice, const float *data,
                             int width, int height, const char *unit);
GtkWidget *fm_dce_roi_stats_get_grid(FmDceRoiStats *stats); /* borrowed, for tests */

G_END_DECLS
