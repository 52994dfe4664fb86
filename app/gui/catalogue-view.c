/* FmCatalogueView: reads fm_catalogue_list_runs into a list box; one click selects (Ctrl for
 * a second run to compare), a double click reopens the run's maps. */
#include "catalogue-view.h"

#include <glib/gi18n.h>

struct _FmCatalogueView {
    GtkBox parent_instance;
    fm_catalogue *cat; /* borrowed */
    GtkWidget *listbox;
    GtkWidget *compare_button;
};

G_DEFINE_TYPE(FmCatalogueView, fm_catalogue_view, GTK_TYPE_BOX)

enum { SIGNAL_RUN_ACTIVATED, SIGNAL_COMPARE, SIGNAL_SELECTION, N_SIGNALS };
static guint signals[N_SIGNALS];

static gint64 row_run_id(GtkListBoxRow *row)
{
    gint64 *id = g_object_get_data(G_OBJECT(row), "fm-run-id");
    return id != NULL ? *id : 0;
}

static void row_activated(GtkListBox *box, GtkListBoxRow *row, FmCatalogueView *self)
{
    gint64 id = row_run_id(row);
    if (id > 0)
        g_signal_emit(self, signals[SIGNAL_RUN_ACTIVATED], 0, id);
}

static void selection_changed(GtkListBox *box, FmCatalogueView *self)
{
    gtk_widget_set_sensitive(self->compare_button, fm_catalogue_view_get_pair(self, NULL, NULL));
    g_signal_emit(self, signals[SIGNAL_SELECTION], 0);
}

static void compare_clicked(GtkButton *button, FmCatalogueView *self)
{
    g_signal_emit(self, signals[SIGNAL_COMPARE], 0);
}

static void refresh_clicked(GtkButton *button, FmCatalogueView *self)
{
    g_autoptr(GError) error = NULL;
    /* Reloading is opening again: runs whose process has died since show as interrupted. */
    if (self->cat != NULL && !fm_catalogue_recover_interrupted(self->cat, NULL, &error)) {
        g_warning("%s", error->message);
        g_clear_error(&error);
    }
    if (!fm_catalogue_view_refresh(self, &error))
        g_warning("%s", error->message);
}

static void fm_catalogue_view_class_init(FmCatalogueViewClass *klass)
{
    GType type = G_TYPE_FROM_CLASS(klass);
    signals[SIGNAL_RUN_ACTIVATED] = g_signal_new("run-activated", type, G_SIGNAL_RUN_LAST, 0, NULL,
                                                 NULL, NULL, G_TYPE_NONE, 1, G_TYPE_INT64);
    signals[SIGNAL_COMPARE] = g_signal_new("compare-requested", type, G_SIGNAL_RUN_LAST, 0, NULL,
                                           NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_SELECTION] = g_signal_new("selection-changed", type, G_SIGNAL_RUN_LAST, 0, NULL,
                                             NULL, NULL, G_TYPE_NONE, 0);
}

static void fm_catalogue_view_init(FmCatalogueView *self)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(GTK_BOX(self), 6);

    GtkWidget *scroller = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_shadow_type(GTK_SCROLLED_WINDOW(scroller), GTK_SHADOW_IN);
    gtk_widget_set_vexpand(scroller, TRUE);
    self->listbox = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->listbox), GTK_SELECTION_MULTIPLE);
    gtk_list_box_set_activate_on_single_click(GTK_LIST_BOX(self->listbox), FALSE);
    GtkWidget *placeholder = gtk_label_new(_("No runs yet"));
    gtk_style_context_add_class(gtk_widget_get_style_context(placeholder), "dim-label");
    gtk_widget_show(placeholder);
    gtk_list_box_set_placeholder(GTK_LIST_BOX(self->listbox), placeholder);
    gtk_container_add(GTK_CONTAINER(scroller), self->listbox);
    gtk_box_pack_start(GTK_BOX(self), scroller, TRUE, TRUE, 0);

    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *refresh =
        gtk_button_new_from_icon_name("view-refresh-symbolic", GTK_ICON_SIZE_BUTTON);
    gtk_widget_set_tooltip_text(refresh, _("Reload the catalogue"));
    self->compare_button = gtk_button_new_with_mnemonic(_("Co_mpare"));
    gtk_widget_set_tooltip_text(self->compare_button,
                                _("Show the maps of two selected runs side by side "
                                  "(Ctrl+click selects a second run)"));
    gtk_widget_set_sensitive(self->compare_button, FALSE);
    gtk_widget_set_hexpand(self->compare_button, TRUE);
    gtk_box_pack_start(GTK_BOX(buttons), refresh, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(buttons), self->compare_button, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(self), buttons, FALSE, FALSE, 0);

    g_signal_connect(self->listbox, "row-activated", G_CALLBACK(row_activated), self);
    g_signal_connect(self->listbox, "selected-rows-changed", G_CALLBACK(selection_changed), self);
    g_signal_connect(self->compare_button, "clicked", G_CALLBACK(compare_clicked), self);
    g_signal_connect(refresh, "clicked", G_CALLBACK(refresh_clicked), self);
    gtk_widget_show_all(GTK_WIDGET(self));
}

GtkWidget *fm_catalogue_view_new(void)
{
    return g_object_new(FM_TYPE_CATALOGUE_VIEW, NULL);
}

void fm_catalogue_view_set_catalogue(FmCatalogueView *view, fm_catalogue *cat)
{
    view->cat = cat;
}

static GtkWidget *make_row(const fm_catalogue_run *run)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    gtk_style_context_add_class(gtk_widget_get_style_context(box), "fm-catalogue-row");
    g_autofree char *title = g_strdup_printf("#%" G_GINT64_FORMAT "  %s", run->id,
                                             run->method_id != NULL ? run->method_id : "?");
    GtkWidget *title_label = gtk_label_new(title);
    gtk_label_set_xalign(GTK_LABEL(title_label), 0.0);

    g_autofree char *base =
        run->dataset_path != NULL ? g_path_get_basename(run->dataset_path) : g_strdup("?");
    g_autoptr(GDateTime) when = g_date_time_new_from_unix_local(run->started_unix);
    g_autofree char *time = when != NULL ? g_date_time_format(when, "%d %b %H:%M") : NULL;
    g_autofree char *detail = g_strdup_printf("%s · %s · %s", base, fm_run_status_name(run->status),
                                              time != NULL ? time : "");
    GtkWidget *detail_label = gtk_label_new(detail);
    gtk_label_set_xalign(GTK_LABEL(detail_label), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(detail_label), PANGO_ELLIPSIZE_MIDDLE);
    gtk_style_context_add_class(gtk_widget_get_style_context(detail_label), "dim-label");
    gtk_box_pack_start(GTK_BOX(box), title_label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), detail_label, FALSE, FALSE, 0);

    g_autofree char *tip = g_strdup_printf(
        _("%s\nParameters: %s\nBackend: %s (%s)\nElapsed: %.1f ms%s%s"),
        run->dataset_path != NULL ? run->dataset_path : "",
        run->params_json ? run->params_json : "", run->backend ? run->backend : "?",
        run->device ? run->device : "?", run->elapsed_ms, run->error_message != NULL ? "\n" : "",
        run->error_message ? run->error_message : "");
    GtkWidget *row = gtk_list_box_row_new();
    gtk_widget_set_tooltip_text(row, tip);
    gtk_container_add(GTK_CONTAINER(row), box);
    gint64 *id = g_new(gint64, 1);
    *id = run->id;
    g_object_set_data_full(G_OBJECT(row), "fm-run-id", id, g_free);
    /* Only finished runs have maps to reopen or compare. */
    gtk_list_box_row_set_selectable(GTK_LIST_BOX_ROW(row), run->status == FM_RUN_DONE);
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), run->status == FM_RUN_DONE);
    gtk_widget_show_all(row);
    return row;
}

gboolean fm_catalogue_view_refresh(FmCatalogueView *view, GError **error)
{
    GList *children = gtk_container_get_children(GTK_CONTAINER(view->listbox));
    for (GList *l = children; l != NULL; l = l->next)
        gtk_widget_destroy(GTK_WIDGET(l->data));
    g_list_free(children);
    if (view->cat == NULL)
        return TRUE;
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(view->cat, 200, error);
    if (runs == NULL)
        return FALSE;
    g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);
    for (guint i = 0; i < runs->len; i++)
        gtk_container_add(GTK_CONTAINER(view->listbox), make_row(runs->pdata[i]));
    return TRUE;
}

gboolean fm_catalogue_view_select_pair(FmCatalogueView *view, gint64 first, gint64 second)
{
    GtkListBox *box = GTK_LIST_BOX(view->listbox);
    gtk_list_box_unselect_all(box);
    GList *rows = gtk_container_get_children(GTK_CONTAINER(box));
    for (GList *l = rows; l != NULL; l = l->next) {
        gint64 id = row_run_id(l->data);
        if (id == first || id == second)
            gtk_list_box_select_row(box, l->data);
    }
    g_list_free(rows);
    return fm_catalogue_view_get_pair(view, NULL, NULL);
}

gboolean fm_catalogue_view_get_pair(FmCatalogueView *view, gint64 *first, gint64 *second)
{
    GList *rows = gtk_list_box_get_selected_rows(GTK_LIST_BOX(view->listbox));
    gboolean ok = g_list_length(rows) == 2;
    if (ok && first != NULL)
        *first = row_run_id(rows->data);
    if (ok && second != NULL)
        *second = row_run_id(rows->next->data);
    g_list_free(rows);
    return ok;
}
