/* Widgets that several method panels build the same way: section heading, backend combo, and the
 * Run/Cancel button row. */
#pragma once

#include <gtk/gtk.h>

#include "app/core/method.h"

G_BEGIN_DECLS

/* A left-aligned section label in the "fm-heading" style (e.g. "COMPUTE"). */
GtkWidget *fm_panel_heading(const char *text);

/* A button bound to the window action `action`, with an optional style class (NULL for none). */
GtkWidget *fm_panel_action_button(const char *label, const char *action, const char *style);

/* A combo offering auto/cpu/cuda (ids as fm_lsi_panel_backend_name() spells them), on "auto". */
GtkWidget *fm_backend_combo_new(void);
/* The backend the combo selects; anything but "cpu" or "cuda" reads as automatic. */
fm_backend fm_backend_combo_get(GtkWidget *combo);
/* Selects `backend` by id, or "auto" when the combo has no such entry. */
void fm_backend_combo_set(GtkWidget *combo, const char *backend);

/* The active id of a combo from fm_backend_combo_new(), "auto" when none is active. */
const char *fm_backend_combo_get_id(GtkWidget *combo);

/* Shows `method` (may be NULL) in a panel: its translated description and its parameter form. */
void fm_panel_show_method(GtkWidget *description_label, GtkWidget *param_form,
                          const fm_method *method);

/* A grid with a dim "Backend" label beside `combo`, which expands horizontally. */
GtkWidget *fm_backend_grid_new(GtkWidget *combo);

/* An equal-width row of _Run (win.run) and _Cancel (win.cancel-all), pinned to the bottom. */
GtkWidget *fm_run_cancel_row_new(void);

/* Marks a row of a panel (its Run button, say) to stay in sight: the window shows it under the
 * panel's scrolled part, not at the end of a long panel. */
void fm_panel_pin_to_bottom(GtkWidget *row);
/* The pinned row inside panel, or NULL. */
GtkWidget *fm_panel_find_pinned(GtkWidget *panel);

/* TRUE for a widget that a search looks for (data: what the search was given). */
typedef gboolean (*FmWidgetMatch)(GtkWidget *widget, gconstpointer data);
/* The first widget at or below root, depth first over the containers' children (not their
 * internal ones), that match accepts; NULL when none does. */
GtkWidget *fm_widget_find(GtkWidget *root, FmWidgetMatch match, gconstpointer data);
/* The first widget at or below root whose name (gtk_widget_set_name) is name, or NULL. */
GtkWidget *fm_widget_find_named(GtkWidget *root, const char *name);

G_END_DECLS
