/* FmWindow's SD-OCT page: the OCT panel in the family stack, the OCT views in the centre, the
 * win.oct-run and win.oct-compare actions. */
#pragma once

#include <gtk/gtk.h>
#include "app/gui/window.h"

G_BEGIN_DECLS

/* Adds the "oct" pages to the right-pane and centre stacks and the actions (window.c calls it
 * after the FLIM pages exist). */
void fm_window_oct_init(FmWindow *win);
/* Picks the OCT page for spectra datasets (raw with sidecar, or OCT TIFFs). */
void fm_window_oct_dataset_changed(FmWindow *win);

/* For tests. */
GtkWidget *fm_window_get_oct_panel(FmWindow *win);
GtkWidget *fm_window_get_oct_views(FmWindow *win);
/* The last "compare resampling" window, or NULL. */
GtkWidget *fm_window_get_oct_compare(FmWindow *win);

G_END_DECLS
