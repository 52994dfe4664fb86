/* FmDceRoiStats: live statistics of the image under the ROIs of the slice on show, as a grid
 * (ROI, role, mean, sd, n) that ellipsizes names instead of wrapping rows over each other. */
#include "dce-roi-stats.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/core/roi.h"
#include "dce-panel.h"
#include "app/gui/map-overlays.h"

struct _FmDceRoiStats {
    GtkScrolledWindow parent_instance;
    GtkWidget *grid;
};

G_DEFINE_FINAL_TYPE(FmDceRoiStats, fm_dce_roi_stats, GTK_TYPE_SCROLLED_WINDOW)

static void destroy_child(GtkWidget *child, gpointer user)
{
    gtk_widget_destroy(child);
}

static GtkWidget *cell(const char *text, float xalign, gboolean head)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), xalign);
    PangoAttrList *attrs = pango_attr_list_new();
    pango_attr_list_insert(attrs, pango_attr_font_features_new("tnum")); /* digits line up */
    gtk_label_set_attributes(GTK_LABEL(label), attrs);
    pango_attr_list_unref(attrs);
    if (head)
        gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

static GtkWidget *name_cell(const fm_roi *roi, guint colour_index)
{
    const double *rgb = fm_map_roi_colour(colour_index);
    const char *name = roi->name ? roi->name : _("ROI");
    g_autofree char *markup = g_markup_printf_escaped(
        "<span foreground=\"#%02x%02x%02x\">●</span> %s", (int)(rgb[0] * 255), (int)(rgb[1] * 255),
        (int)(rgb[2] * 255), name);
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_width_chars(GTK_LABEL(label), 6);
    gtk_label_set_max_width_chars(GTK_LABEL(label), 16);
    gtk_widget_set_tooltip_text(label, name);
    return label;
}

void fm_dce_roi_stats_update(FmDceRoiStats *self, GPtrArray *rois, int slice, const float *data,
                             int width, int height, const char *unit)
{
    g_return_if_fail(FM_IS_DCE_ROI_STATS(self));
    GtkGrid *grid = GTK_GRID(self->grid);
    gtk_container_foreach(GTK_CONTAINER(grid), destroy_child, NULL);
    g_autoptr(GPtrArray) shown = g_ptr_array_new();
    g_autoptr(GArray) stats = g_array_new(FALSE, TRUE, sizeof(fm_roi_stats));
    double largest = 0;
    for (guint i = 0; rois && data && i < rois->len; i++) {
        const fm_roi *roi = rois->pdata[i];
        if (roi->slice >= 0 && roi->slice != slice)
            continue;
        fm_roi_stats st = fm_roi_statistics(roi, data, width, height);
        g_ptr_array_add(shown, (gpointer)roi);
        g_array_append_val(stats, st);
        if (st.n && isfinite(st.mean))
            largest = MAX(largest, fabs(st.mean));
    }
    if (shown->len == 0) {
        GtkWidget *hint = gtk_label_new(data ? _("Draw an ROI for its mean, sd and n.") : "");
        gtk_label_set_xalign(GTK_LABEL(hint), 0);
        gtk_label_set_ellipsize(GTK_LABEL(hint), PANGO_ELLIPSIZE_END);
        gtk_widget_set_hexpand(hint, TRUE);
        gtk_style_context_add_class(gtk_widget_get_style_context(hint), "dim-label");
        gtk_grid_attach(grid, hint, 0, 0, 1, 1);
        gtk_widget_show_all(self->grid);
        return;
    }
    /* One precision for every row, three significant digits on the largest mean. */
    int decimals = largest > 0 ? CLAMP(2 - (int)floor(log10(largest)), 0, 4) : 2;
    g_autofree char *mean_head =
        unit && *unit ? g_strdup_printf(_("Mean (%s)"), unit) : g_strdup(_("Mean"));
    const char *heads[] = {_("ROI"), _("Role"), mean_head, _("SD"), _("n")};
    for (int c = 0; c < 5; c++)
        gtk_grid_attach(grid, cell(heads[c], c < 2 ? 0.0f : 1.0f, TRUE), c, 0, 1, 1);
    for (guint i = 0; i < shown->len; i++) {
        const fm_roi *roi = shown->pdata[i];
        const fm_roi_stats *st = &g_array_index(stats, fm_roi_stats, i);
        int row = (int)i + 1;
        gtk_grid_attach(grid, name_cell(roi, i), 0, row, 1, 1);
        GtkWidget *role = cell(roi->role ? fm_dce_panel_role_title(roi->role) : "—", 0, FALSE);
        gtk_label_set_ellipsize(GTK_LABEL(role), PANGO_ELLIPSIZE_END);
        gtk_label_set_width_chars(GTK_LABEL(role), 5);

        gtk_grid_attach(grid, role, 1, row, 1, 1);
        g_autofree char *mean = st->n ? g_strdup_printf("%.*f", decimals, st->mean) : g_strdup("—");
        g_autofree char *sd = st->n ? g_strdup_printf("%.*f", decimals, st->sd) : g_strdup("—");
        g_autofree char *n = g_strdup_printf("%" G_GSIZE_FORMAT, st->n);
        gtk_grid_attach(grid, cell(mean, 1, FALSE), 2, row, 1, 1);
        gtk_grid_attach(grid, cell(sd, 1, FALSE), 3, row, 1, 1);
        gtk_grid_attach(grid, cell(n, 1, FALSE), 4, row, 1, 1);
    }
    gtk_widget_show_all(self->grid);
}

GtkWidget *fm_dce_roi_stats_get_grid(FmDceRoiStats *self)
{
    return self->grid;
}

static void fm_dce_roi_stats_class_init(FmDceRoiStatsClass *klass) {}

static void fm_dce_roi_stats_init(FmDceRoiStats *self)
{
    GtkScrolledWindow *sw = GTK_SCROLLED_WINDOW(self);
    /* Never sideways (names ellipsize); past four lines it scrolls instead of growing the bar. */
    gtk_scrolled_window_set_policy(sw, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_propagate_natural_height(sw, TRUE);
    gtk_scrolled_window_set_max_content_height(sw, 80);
    gtk_widget_set_hexpand(GTK_WIDGET(self), TRUE);
    self->grid = gtk_grid_new();
    gtk_widget_set_halign(self->grid, GTK_ALIGN_START); /* values stay next to their names */
    gtk_grid_set_column_spacing(GTK_GRID(self->grid), 12);
    gtk_grid_set_row_spacing(GTK_GRID(self->grid), 0);
    gtk_container_add(GTK_CONTAINER(self), self->grid);
    gtk_widget_show_all(GTK_WIDGET(self));
}

GtkWidget *fm_dce_roi_stats_new(void)
{
    return g_object_new(FM_TYPE_DCE_ROI_STATS, "hadjustment", NULL, "vadjustment", NULL, NULL);
}
