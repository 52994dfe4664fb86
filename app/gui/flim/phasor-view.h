/* FmPhasorView: 2-D histogram of per-pixel phasors (g, s) with the universal semicircle; a circle
 * dragged on it selects pixels, and an image mask highlights its cloud. */
#pragma once

#include <gtk/gtk.h>

#include "app/gui/plot-layout.h"

G_BEGIN_DECLS

#define FM_TYPE_PHASOR_VIEW (fm_phasor_view_get_type())
G_DECLARE_FINAL_TYPE(FmPhasorView, fm_phasor_view, FM, PHASOR_VIEW, GtkDrawingArea)

GtkWidget *fm_phasor_view_new(void);
/* Copies g and s (width x height floats, NaN skipped). omega_per_ns (2 pi n / period) labels
 * lifetimes along the semicircle; 0 leaves it unlabelled. Clears the selection. */
void fm_phasor_view_set_data(FmPhasorView *view, const float *g, const float *s, int width,
                             int height, double omega_per_ns);
void fm_phasor_view_clear(FmPhasorView *view);
/* Pixels with a finite phasor. */
gsize fm_phasor_view_count_points(FmPhasorView *view);
/* Pixels (width x height bytes, copied; NULL clears) whose phasors are drawn highlighted. */
void fm_phasor_view_set_highlight(FmPhasorView *view, const guint8 *mask);
gsize fm_phasor_view_count_highlighted(FmPhasorView *view);
/* Circular region on the phasor plane; radius <= 0 clears it. Emits "selection-changed". */
void fm_phasor_view_set_selection(FmPhasorView *view, double g, double s, double radius);
/* Pixels whose phasor lies in the region (width x height bytes, g_free it), or NULL when there
 * is no region; n_selected (may be NULL) counts them. */
guint8 *fm_phasor_view_selection_mask(FmPhasorView *view, gsize *n_selected);

/* The layout of the last draw (data rectangle, ticks, texts): for tests of what is on screen. */
const FmPlotLayout *fm_phasor_view_get_layout(FmPhasorView *view);

/* Signals: "selection-changed" (): the region was drawn, moved or cleared. */

G_END_DECLS
