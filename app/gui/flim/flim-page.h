/* The FLIM page: the lifetime panel, the lifetime views beside the map, compare methods. */
#pragma once

#include "app/gui/family-page.h"
#include "app/gui/window.h"

G_BEGIN_DECLS

#define FM_TYPE_FLIM_PAGE (fm_flim_page_get_type())
G_DECLARE_FINAL_TYPE(FmFlimPage, fm_flim_page, FM, FLIM_PAGE, GObject)

/* Builds the page into win (its panel in the family stack, its views in the centre). */
FmFamilyPage *fm_flim_page_new(FmWindow *win);

/* For tests: the FLIM views, and the window of the last "compare methods" (NULL when none). */
GtkWidget *fm_window_get_flim_views(FmWindow *win);
GtkWidget *fm_window_get_compare_window(FmWindow *win);

G_END_DECLS
