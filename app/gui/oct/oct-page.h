/* FmWindow's SD-OCT page: the OCT panel in the family stack, the OCT views in the centre, the
 * win.oct-run and win.oct-compare actions. */
#pragma once

#include <gtk/gtk.h>
#include "app/gui/family-page.h"
#include "app/gui/window.h"

G_BEGIN_DECLS

/* The OCT page (pages.c): its panel in the family stack, its views in the centre, its actions;
 * it shows itself for spectra datasets (raw with sidecar, or OCT TIFFs). */
FmFamilyPage *fm_oct_page_new(FmWindow *win);

/* For tests. */
GtkWidget *fm_window_get_oct_panel(FmWindow *win);
GtkWidget *fm_window_get_oct_views(FmWindow *win);
/* The last "compare resampling" window, or NULL. */
GtkWidget *fm_window_get_oct_compare(FmWindow *win);

G_END_DECLS
