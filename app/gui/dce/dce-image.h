/* FmDceImage: one slice of the DCE anatomy in gray with a perfusion map blended over it at an
 * adjustable opacity, a colorbar for the map and the outlines of the slice's ROIs. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/colormap.h"

G_BEGIN_DECLS

#define FM_TYPE_DCE_IMAGE (fm_dce_image_get_type())
G_DECLARE_FINAL_TYPE(FmDceImage, fm_dce_image, FM, DCE_IMAGE, GtkDrawingArea)

GtkWidget *fm_dce_image_new(void);
/* Copies width x height floats, shown in gray over their 1st..99th percentiles; NULL clears. */
void fm_dce_image_set_anatomy(FmDceImage *img, const float *data, int width, int height);
/* Copies the map (same size as the anatomy; NaN = not fitted, transparent) coloured over
 * [vmin, vmax]; NULL hides it. title and unit label the colorbar. */
void fm_dce_image_set_overlay(FmDceImage *img, const float *data, int width, int height,
                              const char *title, const char *unit, double vmin, double vmax);
void fm_dce_image_set_opacity(FmDceImage *img, double opacity); /* 0..1 */
void fm_dce_image_set_colormap(FmDceImage *img, fm_colormap cmap);
/* ROIs to outline (fm_roi*, borrowed until the next call; NULL none): those on `slice` or on
 * every slice (slice -1). */
void fm_dce_image_set_rois(FmDceImage *img, GPtrArray *rois, int slice);

/* Signal "cursor-moved" (gint x, gint y): the voxel under the pointer, x = -1 when it leaves. */

G_END_DECLS
