/* Cairo drawing helpers shared by the custom-drawn views (decay, histogram, phasor, plots): text,
 * and the axes, texts and legend of a plot laid out by plot-layout.c. */
#pragma once

#include <gtk/gtk.h>

#include "app/gui/plot-layout.h"

G_BEGIN_DECLS

/* Draws `text` in Sans 8 with the current source so that the point (xalign, yalign) of its box
 * (0 = left/top, 1 = right/bottom) lies at (x, y). */
void fm_cairo_text(GtkWidget *widget, cairo_t *cr, double x, double y, const char *text,
                   double xalign, double yalign);

/* The font every plot draws its texts in (Sans 8), from widget's Pango context, or from cr's
 * when widget is NULL (tests draw on image surfaces). */
PangoLayout *fm_cairo_plot_pango(GtkWidget *widget, cairo_t *cr);
/* FmPlotMeasureFunc over such a PangoLayout (user): the pixel size of text as drawn. */
void fm_cairo_plot_measure(gpointer pango_layout, FmPlotTextRole role, const char *text,
                           double *width, double *height);
/* Clears layout and lays spec out into it, the texts measured in that font (spec's measure is
 * set here); returns the PangoLayout to draw the texts with (unref it). */
PangoLayout *fm_cairo_plot_compute(GtkWidget *widget, cairo_t *cr, FmPlotSpec *spec,
                                   FmPlotLayout *layout);
/* Continues a polyline at (x, y): a line from the last point when *pen_down, else a move (a
 * new segment); the pen is down afterwards. */
void fm_cairo_pen_to(cairo_t *cr, gboolean *pen_down, double x, double y);

typedef struct {
    GdkRGBA text;  /* tick labels, title, statistics, axis labels, legend */
    GdkRGBA axis;  /* frame and tick marks */
    GdkRGBA grid;  /* grid lines at the ticks (alpha 0: none) */
    GdkRGBA panel; /* data area fill (alpha 0: none) */
} FmPlotColours;

/* Colours for a dark view (the FLIM plots) or from a widget's style (light or dark theme). */
void fm_plot_colours_dark(FmPlotColours *colours);
void fm_plot_colours_from_style(GtkWidget *widget, FmPlotColours *colours);

/* Data area fill and grid: before the data. */
void fm_cairo_plot_background(cairo_t *cr, const FmPlotLayout *layout,
                              const FmPlotColours *colours);
/* Frame, tick marks and every text of the layout but the legend: after the data. */
void fm_cairo_plot_axes(cairo_t *cr, PangoLayout *pango, const FmPlotLayout *layout,
                        const FmPlotColours *colours);
/* One text of a layout (rotated when it is vertical); nothing when it was dropped. */
void fm_cairo_plot_text(cairo_t *cr, PangoLayout *pango, const FmPlotText *text);

/* Draws legend entry i's swatch (line, dashes or marker) inside box. */
typedef void (*FmPlotSwatchFunc)(cairo_t *cr, int entry, const FmPlotBox *box, gpointer user);
/* The legend: a translucent frame when it lies inside the data, the swatches, the texts. */
void fm_cairo_plot_legend(cairo_t *cr, PangoLayout *pango, const FmPlotLayout *layout,
                          const FmPlotColours *colours, const GdkRGBA *frame_fill,
                          FmPlotSwatchFunc swatch, gpointer user);

G_END_DECLS
