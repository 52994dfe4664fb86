/* FmWindow's DCE perfusion wiring: the panel and views pages, slice-aware ROIs on the map,
 * dce.dual_input jobs, input-curve CSV and map export actions. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/dce/dce_export.h"
#include "app/core/roi.h"
#include "app/gui/family-page.h"
#include "app/gui/window.h"

G_BEGIN_DECLS

/* The DCE page (pages.c): its panel in the family stack, its views in the centre, the win.dce-*
 * actions; it shows itself for 4-D datasets (x, y, z, t with t in s). */
FmFamilyPage *fm_dce_page_new(FmWindow *win);

/* For tests and scripting. */
GtkWidget *fm_window_get_dce_panel(FmWindow *win);
GtkWidget *fm_window_get_dce_views(FmWindow *win);
/* Adds an ROI keeping its slice (-1 = every slice), unlike one drawn by hand, which gets the
 * slice on show. Takes it. */
void fm_window_dce_add_roi(FmWindow *win, fm_roi *roi);
/* Every ROI of the DCE dataset, all slices (borrowed pointers; g_ptr_array_unref the array). */
GPtrArray *fm_window_dce_get_rois(FmWindow *win);
/* Centre page: "map" (the anatomy ROIs are drawn on) or "dce" (perfusion overlay). */
void fm_window_dce_show_page(FmWindow *win, const char *page);
gboolean fm_window_dce_export(FmWindow *win, const char *path, fm_dce_export_format format,
                              GError **error);
/* The maps as DICOM Parametric Maps and the ROIs as a Segmentation in folder
 * (fm_dce_export_dicom); *note (g_free) says what was written. */
gboolean fm_window_dce_export_dicom(FmWindow *win, const char *folder, char **note, GError **error);

G_END_DECLS
