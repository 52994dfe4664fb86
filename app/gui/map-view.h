/* FmMapView: Cairo view of one float map with colormap, colorbar, zoom/pan, read-out and ROIs. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/colormap.h"
#include "app/core/roi.h"

G_BEGIN_DECLS

typedef enum {
    FM_MAP_TOOL_PAN = 0, /* drag pans, scroll zooms */
    FM_MAP_TOOL_RECTANGLE,
    FM_MAP_TOOL_ELLIPSE,
    FM_MAP_TOOL_POLYGON, /* click adds vertices, double-click or Enter closes */
} FmMapTool;

#define FM_TYPE_MAP_VIEW (fm_map_view_get_type())
G_DECLARE_FINAL_TYPE(FmMapView, fm_map_view, FM, MAP_VIEW, GtkDrawingArea)

GtkWidget *fm_map_view_new(void);
/* Copies data (width x height floats). title and unit label the colorbar ("SFI", "1/s").
 * Keeps zoom, ROIs and a manual range if the size is unchanged. */
void fm_map_view_set_map(FmMapView *view, const float *data, int width, int height,
                         const char *title, const char *unit);
void fm_map_view_clear(FmMapView *view);
gboolean fm_map_view_has_map(FmMapView *view);
const float *fm_map_view_get_data(FmMapView *view, int *width, int *height);

void fm_map_view_set_colormap(FmMapView *view, fm_colormap cmap);
fm_colormap fm_map_view_get_colormap(FmMapView *view);
/* Auto range from percentiles of the finite values (default 1 and 99). */
void fm_map_view_set_auto_range(FmMapView *view, double low_pct, double high_pct);
/* Manual range; stays until set_auto_range is called. */
void fm_map_view_set_range(FmMapView *view, double vmin, double vmax);
void fm_map_view_get_range(FmMapView *view, double *vmin, double *vmax);

void fm_map_view_set_tool(FmMapView *view, FmMapTool tool);
void fm_map_view_zoom_to_fit(FmMapView *view);
void fm_map_view_set_zoom(FmMapView *view, double zoom); /* screen pixels per image pixel */
double fm_map_view_get_zoom(FmMapView *view);

/* ROIs drawn on the view (owned by the view; fm_roi*). */
GPtrArray *fm_map_view_get_rois(FmMapView *view);
void fm_map_view_add_roi(FmMapView *view, fm_roi *roi); /* takes ownership */
void fm_map_view_clear_rois(FmMapView *view);

/* Signals:
 *   "cursor-moved" (gint x, gint y, gdouble value): image pixel under the pointer, value NaN
 *                   outside the image; x = -1 when the pointer leaves.
 *   "rois-changed" (): an ROI was added, moved or removed. */

G_END_DECLS
