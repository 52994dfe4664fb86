/* The start page: what the window shows before a dataset is open, one card per family demo. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Cards activate "win.open-demo" with the demo's id; a demo whose files are missing is shown
 * greyed out with the reason. */
GtkWidget *fm_start_page_new(void);

G_END_DECLS
