/* The registry of family pages: one line per family in pages.c. */
#pragma once

#include "window.h"

G_BEGIN_DECLS

/* Makes every family's page into win and adds it to pages (FmFamilyPage, owned), in the order
 * the window asks them. */
void fm_pages_attach(FmWindow *win, GPtrArray *pages);

G_END_DECLS
