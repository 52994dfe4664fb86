/* Side panes that fit their width: inside a pane root, labels that neither wrap nor ellipsize
 * ellipsize at the end (the full text in a tooltip while cut), combo boxes ellipsize their items,
 * and spin buttons and entries ask for a few characters only, so that a pane's minimum width is
 * small and nothing is ever cut at its edge (its scrolled windows never scroll sideways). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Fits every widget under root now and every widget put under it later. */
void fm_pane_fit_install(GtkWidget *root);

/* TRUE when label shows its whole text: wrapped, or not cut by its allocation (an ellipsized
 * label counts as fitting: its text is in the tooltip). */
gboolean fm_pane_label_fits(GtkLabel *label);

G_END_DECLS
