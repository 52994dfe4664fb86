/* FmPlotView: a small Cairo line plot (ROI time course, curves) with axes and labels. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define FM_TYPE_PLOT_VIEW (fm_plot_view_get_type())
G_DECLARE_FINAL_TYPE(FmPlotView, fm_plot_view, FM, PLOT_VIEW, GtkDrawingArea)

GtkWidget *fm_plot_view_new(void);
void fm_plot_view_set_labels(FmPlotView *view, const char *x_label, const char *y_label);
/* Replaces the series with n points (copied). NaN y values leave gaps. */
void fm_plot_view_set_series(FmPlotView *view, const double *x, const double *y, int n);
/* Appends one point (stack playback adds one per frame). */
void fm_plot_view_append(FmPlotView *view, double x, double y);
void fm_plot_view_clear(FmPlotView *view);
/* Marks the current x (playback position) with a vertical line; NaN hides it. */
void fm_plot_view_set_cursor(FmPlotView *view, double x);
/* Logarithmic y axis (ticks at decades); values <= 0 leave gaps. (Added for MCML's Rd(r).) */
void fm_plot_view_set_log_y(FmPlotView *view, gboolean log_y);

G_END_DECLS
