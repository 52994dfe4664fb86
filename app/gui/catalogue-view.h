/* FmCatalogueView: the list of catalogued runs, newest first, with reopen and compare; it follows
 * the catalogue by itself (runs from any page or process appear within half a second). */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"

G_BEGIN_DECLS

#define FM_TYPE_CATALOGUE_VIEW (fm_catalogue_view_get_type())
G_DECLARE_FINAL_TYPE(FmCatalogueView, fm_catalogue_view, FM, CATALOGUE_VIEW, GtkBox)

GtkWidget *fm_catalogue_view_new(void);
/* The catalogue to list (borrowed, must outlive the view; NULL lists nothing). From then on the
 * view polls the catalogue's change stamp and refreshes itself when it moves. */
void fm_catalogue_view_set_catalogue(FmCatalogueView *view, fm_catalogue *cat);
/* Reads the list again now, keeping the selection and scroll position. */
gboolean fm_catalogue_view_refresh(FmCatalogueView *view, GError **error);
/* Ids of the selected runs, older first, when exactly two are selected. */
gboolean fm_catalogue_view_get_pair(FmCatalogueView *view, gint64 *first, gint64 *second);

/* Selects exactly these two runs (as Ctrl+click does); FALSE when the list lacks one. */
gboolean fm_catalogue_view_select_pair(FmCatalogueView *view, gint64 first, gint64 second);
/* The row (GtkListBoxRow) of a run, or NULL when the list does not show it. Its labels are named
 * fm-catalogue-title, -number, -dataset and -date (gtk_widget_get_name), for tests. */
GtkWidget *fm_catalogue_view_find_row(FmCatalogueView *view, gint64 run_id);
/* The group row of a batch's runs (its title named fm-catalogue-group-title), or NULL. */
GtkWidget *fm_catalogue_view_find_group(FmCatalogueView *view, const char *batch_id);

/* Signals:
 *   "run-activated" (gint64 run_id): a run was double-clicked or activated with Enter.
 *   "compare-requested" (): the Compare button was pressed with two runs selected.
 *   "selection-changed" (). */

G_END_DECLS
