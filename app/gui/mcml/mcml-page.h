/* The MCML page: light transport in layered tissue, which takes no dataset. */
#pragma once

#include "app/gui/family-page.h"
#include "app/gui/window.h"
#include "mcml-view.h"

G_BEGIN_DECLS

/* Builds the page into win: the editor in the side panel, the fluence map and plots in the
 * centre. It comes on show when chosen (the family switcher, app.mcml, the start page). */
FmFamilyPage *fm_mcml_page_new(FmWindow *win);

/* The page's view (tests, the start page's demo). */
FmMcmlView *fm_window_get_mcml_view(FmWindow *win);

G_END_DECLS
