/* Drawing of MCML's fluence map: log colour scale with its colorbar, r and z axes in cm, layer
 * boundaries and iso-fluence contours. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Where the parts of the fluence view go in a widget of a given size (widget coordinates). */
typedef struct {
    GdkRectangle map;      /* the fluence image, r across and depth z down */
    GdkRectangle colorbar; /* the gradient strip */
    GdkRectangle r_axis;   /* r tick labels and the "r [cm]" title, under the map */
    GdkRectangle z_axis;   /* z tick labels and the "z [cm]" title, left of the map */
    GdkRectangle bar_text; /* the colorbar's decade labels and its title */
    gboolean stretched;    /* the true r:z aspect would have left most of the area empty */
} FmMcmlMapLayout;

/* Lays the view out for a grid of r_cm x z_cm in a widget of width x height pixels: the map at
 * its true r:z aspect (stretched only when that would fill less than half of the space), its
 * axes left of and under it, the colorbar beside it. Texts are measured with widget's font. */
void fm_mcml_map_layout(GtkWidget *widget, int width, int height, double r_cm, double z_cm,
                        FmMcmlMapLayout *layout);

/* Draws log10 values (nr across, nz down, NaN transparent) with dr_cm, dz_cm per bin as
 * fm_mcml_map_layout lays them out for widget's allocation (the last row and column, MCML's
 * collectors of what lies beyond the grid, and the rows below the deepest boundary left out):
 * colour map, white lines at the layer
 * boundaries (depths in bins), cyan iso-lines at every whole decade (marching squares), the axes
 * and the colorbar. Without values, only a hint. */
void fm_mcml_map_draw(GtkWidget *widget, cairo_t *cr, const float *log_values, int nr, int nz,
                      double dr_cm, double dz_cm, const double *bound_bins, int n_bounds);

G_END_DECLS
