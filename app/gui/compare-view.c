/* Compare view: both maps share one display range (percentiles over the two together), so
 * equal colours mean equal values. */
#include "compare-view.h"

#include <glib/gi18n.h>
#include <string.h>

#include "map-view.h"

static GtkWidget *side(fm_catalogue *cat, gint64 run_id, const fm_map *map, fm_colormap cmap,
                       GtkWidget **view_out)
{
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(cat, run_id, NULL);
    g_autofree char *base = run != NULL && run->dataset_path != NULL
                                ? g_path_get_basename(run->dataset_path)
                                : g_strdup("?");
    g_autofree char *title = g_markup_printf_escaped(
        "<b>#%" G_GINT64_FORMAT " %s</b>  <span alpha='60%%'>%s · %s</span>", run_id,
        run != NULL ? run->method_id : "?", base,
        run != NULL && run->params_json != NULL ? run->params_json : "");
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), title);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    GtkWidget *view = fm_map_view_new();
    gtk_widget_set_hexpand(view, TRUE);
    gtk_widget_set_vexpand(view, TRUE);
    fm_map_view_set_map(FM_MAP_VIEW(view), map->data, map->width, map->height, map->name,
                        map->unit);
    fm_map_view_set_colormap(FM_MAP_VIEW(view), cmap);
    GtkWidget *frame = gtk_frame_new(NULL);
    gtk_container_add(GTK_CONTAINER(frame), view);
    gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), frame, TRUE, TRUE, 0);
    *view_out = view;
    return box;
}

GtkWidget *fm_compare_view_new(GtkWindow *parent, fm_catalogue *cat, gint64 run_a, gint64 run_b,
                               const char *map_name, fm_colormap cmap, GError **error)
{
    fm_map *a = fm_catalogue_load_map(cat, run_a, map_name, error);
    if (a == NULL)
        return NULL;
    fm_map *b = fm_catalogue_load_map(cat, run_b, map_name, error);
    if (b == NULL) {
        fm_map_free(a);
        return NULL;
    }

    GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    g_autofree char *wtitle =
        g_strdup_printf(_("Compare %s: run %" G_GINT64_FORMAT " and run %" G_GINT64_FORMAT),
                        map_name, run_a, run_b);
    gtk_window_set_title(GTK_WINDOW(win), wtitle);
    gtk_window_set_transient_for(GTK_WINDOW(win), parent);
    gtk_window_set_default_size(GTK_WINDOW(win), 1100, 560);
    gtk_window_set_destroy_with_parent(GTK_WINDOW(win), TRUE);

    GtkWidget *pane = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
    gtk_box_set_homogeneous(GTK_BOX(pane), TRUE);
    g_object_set(pane, "margin", 12, NULL);
    GtkWidget *view_a = NULL, *view_b = NULL;
    gtk_box_pack_start(GTK_BOX(pane), side(cat, run_a, a, cmap, &view_a), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(pane), side(cat, run_b, b, cmap, &view_b), TRUE, TRUE, 0);

    /* One range for both: percentiles of the first frame of each map, pooled. */
    gsize na = (gsize)a->width * a->height, nb = (gsize)b->width * b->height;
    float *pooled = g_new(float, na + nb);
    memcpy(pooled, a->data, na * sizeof(float));
    memcpy(pooled + na, b->data, nb * sizeof(float));
    double vmin, vmax;
    if (fm_percentile_range(pooled, na + nb, 1.0, 99.0, &vmin, &vmax) && vmax > vmin) {
        fm_map_view_set_range(FM_MAP_VIEW(view_a), vmin, vmax);
        fm_map_view_set_range(FM_MAP_VIEW(view_b), vmin, vmax);
    }
    g_free(pooled);
    fm_map_free(a);
    fm_map_free(b);

    gtk_container_add(GTK_CONTAINER(win), pane);
    gtk_widget_show_all(win);
    return win;
}
