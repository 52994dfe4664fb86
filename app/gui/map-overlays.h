/* Drawing helpers for FmMapView: the colorbar and ROI outlines, labels and hit tests. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/roi.h"

G_BEGIN_DECLS

/* Image pixel (x, y) appears at widget (origin_x + x * zoom, origin_y + y * zoom). */
typedef struct {
    double origin_x, origin_y, zoom;
} FmMapTransform;

typedef struct {
    double vmin, vmax;
    const char *title, *unit;  /* may be NULL */
    cairo_surface_t *gradient; /* 1 x 256, top row is vmax */
} FmColorbar;

/* Outline colour of the index-th ROI (cycles through a fixed palette). */
const double *fm_map_roi_colour(guint index);
gboolean fm_map_roi_contains(const fm_roi *roi, fm_point p);
/* Adds the ROI's outline in widget coordinates to the current path; open for a polygon
 * that is still being clicked. */
void fm_map_roi_path(cairo_t *cr, const FmMapTransform *t, const fm_roi *roi, gboolean close);
/* Strokes and clears the current path: colour over a dark halo, dashed if asked. */
void fm_map_stroke_outline(cairo_t *cr, const double rgb[3], double width, gboolean dashed);
void fm_map_roi_label(GtkWidget *widget, cairo_t *cr, const FmMapTransform *t, const fm_roi *roi,
                      const double rgb[3]);

/* Width of the strip at the right edge that holds the colorbar, its labels and title. */
double fm_colorbar_width(GtkWidget *widget, const FmColorbar *bar);
void fm_colorbar_draw(GtkWidget *widget, cairo_t *cr, const FmColorbar *bar, double x,
                      double height);

G_END_DECLS
