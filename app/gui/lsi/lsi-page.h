/* The speckle page: the LSI panel, the map of contrast and flow, and stack playback's live map. */
#pragma once

#include "app/gui/family-page.h"
#include "app/gui/window.h"

G_BEGIN_DECLS

#define FM_TYPE_LSI_PAGE (fm_lsi_page_get_type())
G_DECLARE_FINAL_TYPE(FmLsiPage, fm_lsi_page, FM, LSI_PAGE, GObject)

/* Builds the page into win: first in pages.c, so that it is the page for any stack the other
 * families do not take. */
FmFamilyPage *fm_lsi_page_new(FmWindow *win);

G_END_DECLS
