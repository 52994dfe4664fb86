/* Compare view: two catalogued runs' maps side by side on one shared colour scale, their
 * difference B − A with its statistics, and what differs between the runs in words. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"
#include "app/core/colormap.h"
#include "app/core/map_difference.h"
#include "map-view.h"

G_BEGIN_DECLS

/* Opens a window showing map `map_name` ("sfi") of runs a and b and, where the two maps have
 * one size, B − A. cmap colours the two maps unless the quantity has a colormap of its own
 * (lifetimes: fm_colormap_for_map). NULL with error when a map cannot be loaded. The catalogue
 * is only used during the call. */
GtkWidget *fm_compare_view_new(GtkWindow *parent, fm_catalogue *cat, gint64 run_a, gint64 run_b,
                               const char *map_name, fm_colormap cmap, GError **error);

/* What the window shows, for tests: the header's text (runs, differing and equal parameters),
 * the difference's statistics line, the statistics behind it (FALSE when the maps differ in
 * size) and the map views (0: A, 1: B, 2: B − A, NULL when absent). */
const char *fm_compare_view_get_header_text(GtkWidget *compare);
const char *fm_compare_view_get_stats_text(GtkWidget *compare);
gboolean fm_compare_view_get_difference(GtkWidget *compare, fm_difference_stats *stats);
FmMapView *fm_compare_view_get_map_view(GtkWidget *compare, int which);

G_END_DECLS
