/* FmCatalogueView: the list of catalogued runs, newest first, with reopen and compare. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"

G_BEGIN_DECLS

#define FM_TYPE_CATALOGUE_VIEW (fm_catalogue_view_get_type())
G_DECLARE_FINAL_TYPE(FmCatalogueView, fm_catalogue_view, FM, CATALOGUE_VIEW, GtkBox)

GtkWidget *fm_catalogue_view_new(void);
/* The catalogue to list (borrowed; NULL lists nothing). */
void fm_catalogue_view_set_catalogue(FmCatalogueView *view, fm_catalogue *cat);
gboolean fm_catalogue_view_refresh(FmCatalogueView *view, GError **error);
/* Ids of the selected runs when exactly two are selected. */
gboolean fm_catalogue_view_get_pair(FmCatalogueView *view, gint64 *first, gint64 *second);

/* Selects exactly these two runs (as Ctrl+click does); FALSE when the list lacks one. */
gboolean fm_catalogue_view_select_pair(FmCatalogueView *view, gint64 first, gint64 second);

/* Signals:
 *   "run-activated" (gint64 run_id): a run was double-clicked or activated with Enter.
 *   "compare-requested" (): the Compare button was pressed with two runs selected.
 *   "selection-changed" (). */

G_END_DECLS
