/* Drawing of MCML's fluence map: log colour scale, layer boundaries and iso-fluence contours. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Paints log10 values (width = nr across, height = nz down, NaN transparent) scaled into the
 * widget, white lines at the layer boundaries (depths in bins, n_bounds of them) and black
 * iso-lines at each whole decade found by marching squares. */
void fm_mcml_map_draw(cairo_t *cr, int widget_w, int widget_h, const float *log_values, int width,
                      int height, const double *bound_bins, int n_bounds);

G_END_DECLS
