/* FmPlotView: a small Cairo line plot (ROI time course, curves) with axes, labels and a legend
 * laid out by plot-layout.c. */
#pragma once

#include <gtk/gtk.h>

#include "app/gui/plot-layout.h"

G_BEGIN_DECLS

#define FM_TYPE_PLOT_VIEW (fm_plot_view_get_type())
G_DECLARE_FINAL_TYPE(FmPlotView, fm_plot_view, FM, PLOT_VIEW, GtkDrawingArea)

GtkWidget *fm_plot_view_new(void);
void fm_plot_view_set_labels(FmPlotView *view, const char *x_label, const char *y_label);
/* What the plot says while it has no data: what to do to fill it (NULL: "No data"). */
void fm_plot_view_set_placeholder(FmPlotView *view, const char *text);
const char *fm_plot_view_get_placeholder(FmPlotView *view);
/* Replaces the series with n points (copied). NaN y values leave gaps. */
void fm_plot_view_set_series(FmPlotView *view, const double *x, const double *y, int n);
/* Appends one point (stack playback adds one per frame). */
void fm_plot_view_append(FmPlotView *view, double x, double y);
void fm_plot_view_clear(FmPlotView *view);
/* Marks the current x (playback position) with a vertical line; NaN hides it. */
void fm_plot_view_set_cursor(FmPlotView *view, double x);
/* Logarithmic y axis (ticks at decades); values <= 0 leave gaps. (Added for MCML's Rd(r).) */
void fm_plot_view_set_log_y(FmPlotView *view, gboolean log_y);

/* Extra labelled series on the same axes, drawn after the main one with a legend (added for
 * DCE's Ca, Cp, tissue curve and fitted model). fm_plot_view_clear removes them too. */
typedef enum {
    FM_PLOT_STYLE_LINE = 0,
    FM_PLOT_STYLE_DASHED,  /* a model curve */
    FM_PLOT_STYLE_MARKERS, /* measured samples: small discs, no line */
} FmPlotStyle;
/* Copies n points; rgb: 3 values in 0..1; label may be NULL (no legend entry). */
void fm_plot_view_add_series(FmPlotView *view, const char *label, const double *x, const double *y,
                             int n, const double rgb[3], FmPlotStyle style);
/* Removes the extra series only. */
void fm_plot_view_clear_series(FmPlotView *view);
int fm_plot_view_get_n_series(FmPlotView *view); /* extra series */
/* The layout of the last draw (data rectangle, ticks, texts): for tests of what is on screen. */
const FmPlotLayout *fm_plot_view_get_layout(FmPlotView *view);

G_END_DECLS
