/* Compare view: two catalogued runs' maps side by side on one shared colour scale. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"
#include "app/core/colormap.h"

G_BEGIN_DECLS

/* Opens a window showing map `map_name` ("sfi") of runs a and b. NULL with error when a map
 * cannot be loaded. The catalogue is only used during the call. */
GtkWidget *fm_compare_view_new(GtkWindow *parent, fm_catalogue *cat, gint64 run_a, gint64 run_b,
                               const char *map_name, fm_colormap cmap, GError **error);

G_END_DECLS
