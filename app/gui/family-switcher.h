/* The one family switcher: a combo box over the window's stack of family panels, listing each
 * titled child. A combo keeps the side panel narrow however many families there are (a row of
 * tabs for five took 326 px and pushed the window past a laptop screen). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* A combo bound both ways to stack's visible child. */
GtkWidget *fm_family_switcher_new(GtkStack *stack);

/* Lists the stack's titled children again (after pages were added). */
void fm_family_switcher_refresh(GtkWidget *switcher);

/* Lists only the stack's children named in ids (NULL: all of them), e.g. the pages that take
 * the open dataset; the one on show is listed whatever ids says. */
void fm_family_switcher_set_listed(GtkWidget *switcher, const char *const *ids);
/* Whether the switcher lists the child named id. */
gboolean fm_family_switcher_lists(GtkWidget *switcher, const char *id);

/* A scroller for a side panel: vertical scrolling only; the panel fits the pane's width. */
GtkWidget *fm_panel_scroller_new(GtkWidget *panel);

G_END_DECLS
