/* FmCatalogueView: reads fm_catalogue_list_runs into a list box; one click selects (Ctrl for
 * a second run to compare), a double click or Enter reopens the run. It polls the catalogue's
 * change stamp, so runs started anywhere (Compare Methods, the MCML page, another process) show
 * up without the page that started them knowing about this view. */
#include "catalogue-view.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/live.h"
#include "app/core/method.h"
#include "app/core/params_text.h"
#include "catalogue-groups.h"

#define POLL_MS 400

struct _FmCatalogueView {
    GtkBox parent_instance;
    fm_catalogue *cat; /* borrowed */
    GtkWidget *listbox, *scroller;
    GtkWidget *compare_button;
    guint poll_id;
    gint64 stamp;
    gboolean have_stamp;
    gboolean rebuilding;   /* rows go and come back: no selection signals meanwhile */
    GHashTable *collapsed; /* batch ids whose group the user closed */
};

G_DEFINE_TYPE(FmCatalogueView, fm_catalogue_view, GTK_TYPE_BOX)

enum { SIGNAL_RUN_ACTIVATED, SIGNAL_COMPARE, SIGNAL_SELECTION, N_SIGNALS };
static guint signals[N_SIGNALS];

static gint64 row_run_id(GtkListBoxRow *row)
{
    gint64 *id = g_object_get_data(G_OBJECT(row), "fm-run-id");
    return id != NULL ? *id : 0;
}

/* A batch's header row opens or closes its group. */
static void toggle_group(FmCatalogueView *self, GtkListBoxRow *header, const char *batch_id)
{
    gboolean expand = g_hash_table_remove(self->collapsed, batch_id);
    if (!expand)
        g_hash_table_add(self->collapsed, g_strdup(batch_id));
    fm_catalogue_group_row_set_expanded(GTK_WIDGET(header), expand);
    GList *rows = gtk_container_get_children(GTK_CONTAINER(self->listbox));
    for (GList *l = rows; l != NULL; l = l->next)
        if (l->data != header &&
            g_strcmp0(g_object_get_data(G_OBJECT(l->data), "fm-member-of"), batch_id) == 0)
            gtk_widget_set_visible(l->data, expand);
    g_list_free(rows);
}

static void row_activated(GtkListBox *box, GtkListBoxRow *row, FmCatalogueView *self)
{
    const char *batch_id = fm_catalogue_group_row_batch(GTK_WIDGET(row));
    if (batch_id != NULL) {
        toggle_group(self, row, batch_id);
        return;
    }
    gint64 id = row_run_id(row);
    if (id > 0)
        g_signal_emit(self, signals[SIGNAL_RUN_ACTIVATED], 0, id);
}

static void selection_changed(GtkListBox *box, FmCatalogueView *self)
{
    if (self->rebuilding)
        return;
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

/* Cheap: one PRAGMA; the list is read again only when the stamp moved. */
static gboolean poll_catalogue(gpointer user)
{
    FmCatalogueView *self = user;
    gint64 stamp = 0;
    if (self->cat == NULL || !fm_catalogue_peek_change_stamp(self->cat, &stamp))
        return G_SOURCE_CONTINUE;
    if (self->have_stamp && stamp == self->stamp)
        return G_SOURCE_CONTINUE;
    g_autoptr(GError) error = NULL;
    if (!fm_catalogue_view_refresh(self, &error))
        g_warning("%s", error->message);
    return G_SOURCE_CONTINUE;
}

static void fm_catalogue_view_dispose(GObject *object)
{
    FmCatalogueView *self = FM_CATALOGUE_VIEW(object);
    if (self->poll_id != 0) {
        g_source_remove(self->poll_id);
        self->poll_id = 0;
    }
    g_clear_pointer(&self->collapsed, g_hash_table_unref);
    G_OBJECT_CLASS(fm_catalogue_view_parent_class)->dispose(object);
}

static void fm_catalogue_view_class_init(FmCatalogueViewClass *klass)
{
    GType type = G_TYPE_FROM_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = fm_catalogue_view_dispose;
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
    self->collapsed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);

    self->scroller = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self->scroller), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_shadow_type(GTK_SCROLLED_WINDOW(self->scroller), GTK_SHADOW_IN);
    gtk_widget_set_vexpand(self->scroller, TRUE);
    self->listbox = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->listbox), GTK_SELECTION_MULTIPLE);
    gtk_list_box_set_activate_on_single_click(GTK_LIST_BOX(self->listbox), FALSE);
    GtkWidget *placeholder = gtk_label_new(_("No runs yet"));
    gtk_style_context_add_class(gtk_widget_get_style_context(placeholder), "dim-label");
    gtk_widget_show(placeholder);
    gtk_list_box_set_placeholder(GTK_LIST_BOX(self->listbox), placeholder);
    gtk_container_add(GTK_CONTAINER(self->scroller), self->listbox);
    gtk_box_pack_start(GTK_BOX(self), self->scroller, TRUE, TRUE, 0);

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
    view->have_stamp = FALSE;
    if (cat != NULL && view->poll_id == 0)
        view->poll_id = g_timeout_add(POLL_MS, poll_catalogue, view);
}

/* The dataset as a user names it: its file name; an input Fluxmap saved for the run in the
 * catalogue's own folder (an edited simulation model, "input-1732751234.mci") by the method's
 * kind of input instead of a time-stamped name. */
static char *dataset_text(FmCatalogueView *self, const fm_catalogue_run *run)
{
    if (run->dataset_path == NULL || *run->dataset_path == '\0') {
        /* a live run whose recording began after its first frame lists it as an export */
        for (guint i = 0; run->exports != NULL && i < run->exports->len; i++) {
            const fm_catalogue_export *e = run->exports->pdata[i];
            if (g_strcmp0(e->format, "tiff") == 0) {
                g_autofree char *rec = g_path_get_basename(e->file);
                return g_strdup_printf(_("recording %s"), rec);
            }
        }
        /* a method's live path without a recording: the frames came from a camera, named by
         * the run's note ("live from Fake_1 (Aravis Fake)": "live Fake_1") */
        const fm_method *method = fm_method_find(run->method_id);
        g_autofree char *source = fm_live_note_source(run->error_message);
        if (source != NULL && g_str_has_prefix(source, FM_LIVE_NOTE_CAMERA)) {
            char *name = source + strlen(FM_LIVE_NOTE_CAMERA);
            char *paren = strstr(name, " (");
            if (paren != NULL && paren != name)
                *paren = '\0';
            return g_strdup_printf(_("live %s"), name);
        }
        if (method != NULL && method->live != NULL)
            return g_strdup(_("live, not recorded"));
        return g_strdup(_("no input file"));
    }
    g_autofree char *base = g_path_get_basename(run->dataset_path);
    /* a replay without a recording of the whole run: the replayed file is the dataset */
    g_autofree char *source = fm_live_note_source(run->error_message);
    if (source != NULL && g_str_has_prefix(source, FM_LIVE_NOTE_REPLAY) &&
        g_strcmp0(source + strlen(FM_LIVE_NOTE_REPLAY), base) == 0)
        return g_strdup_printf(_("replay of %s"), base);
    const char *dir = self->cat != NULL ? fm_catalogue_dir(self->cat) : NULL;
    gsize dir_len = dir != NULL ? strlen(dir) : 0;
    if (dir == NULL || strncmp(run->dataset_path, dir, dir_len) != 0 ||
        run->dataset_path[dir_len] != G_DIR_SEPARATOR)
        return g_steal_pointer(&base);
    /* "<name>-<digits>.<ext>": the digits only make the file unique; "input" names nothing. */
    g_autofree char *stem = g_strdup(base);
    char *dot = strrchr(stem, '.'), *dash = strrchr(stem, '-');
    if (dot != NULL)
        *dot = '\0';
    gboolean stamped = dash != NULL && dash[1] != '\0';
    for (const char *c = dash != NULL ? dash + 1 : ""; stamped && *c != '\0'; c++)
        stamped = g_ascii_isdigit(*c);
    if (!stamped)
        return g_steal_pointer(&base);
    *dash = '\0';
    if (g_strcmp0(stem, "input") == 0)
        return g_strdup(_("model edited in Fluxmap"));
    return g_strdup_printf(_("%s model"), stem);
}

static char *run_tooltip(const fm_catalogue_run *run, const char *title)
{
    GString *tip = g_string_new(NULL);
    g_string_append_printf(tip, "%s (%s)\n", title, run->method_id != NULL ? run->method_id : "?");
    if (run->dataset_path != NULL)
        g_string_append_printf(tip, "%s\n", run->dataset_path);
    g_autofree char *params = NULL;
    const fm_method *m = run->method_id != NULL ? fm_method_find(run->method_id) : NULL;
    if (m != NULL) {
        g_autoptr(fm_params) p = fm_method_default_params(m);
        if (run->params_json == NULL || fm_params_set_from_json(p, run->params_json, NULL))
            params = fm_params_describe(p, NULL);
    }
    if (params != NULL)
        g_string_append_printf(tip, _("Parameters: %s\n"),
                               *params != '\0' ? params : _("the method's defaults"));
    else if (run->params_json != NULL)
        g_string_append_printf(tip, _("Parameters: %s\n"), run->params_json);
    g_string_append_printf(tip, _("Status: %s"), fm_run_status_name(run->status));
    if (run->status == FM_RUN_DONE)
        g_string_append_printf(tip, _(" in %.1f ms on %s (%s)"), run->elapsed_ms,
                               run->backend != NULL ? run->backend : "?",
                               run->device != NULL ? run->device : "?");
    if (run->error_message != NULL)
        g_string_append_printf(tip, "\n%s", run->error_message);
    return g_string_free(tip, FALSE);
}

/* A label that keeps its full text: it never shrinks below its natural width. */
static GtkWidget *fixed_label(const char *text, gboolean dim)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 1.0);
    gtk_label_set_single_line_mode(GTK_LABEL(label), TRUE);
    if (dim)
        gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

/* An ellipsized label that takes the room left over. */
static GtkWidget *shrinking_label(const char *text, gboolean dim)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_label_set_width_chars(GTK_LABEL(label), 4);
    gtk_widget_set_hexpand(label, TRUE);
    if (dim)
        gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

static GtkWidget *make_row(FmCatalogueView *self, const fm_catalogue_run *run)
{
    const fm_method *m = run->method_id != NULL ? fm_method_find(run->method_id) : NULL;
    const char *title = m != NULL ? _(m->title) : run->method_id != NULL ? run->method_id : "?";
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    gtk_style_context_add_class(gtk_widget_get_style_context(box), "fm-catalogue-row");
    GtkWidget *top = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *bottom = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);

    GtkWidget *title_label = shrinking_label(title, FALSE);
    /* "Integral equa…hod (IEM)": the short name in brackets at the end says most. */
    gtk_label_set_ellipsize(GTK_LABEL(title_label), PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_set_name(title_label, "fm-catalogue-title");
    g_autofree char *number =
        run->status == FM_RUN_DONE
            ? g_strdup_printf("#%" G_GINT64_FORMAT, run->id)
            : g_strdup_printf("%s #%" G_GINT64_FORMAT, fm_run_status_name(run->status), run->id);
    GtkWidget *number_label = fixed_label(number, run->status != FM_RUN_DONE);
    gtk_widget_set_name(number_label, "fm-catalogue-number");

    g_autofree char *dataset = dataset_text(self, run);
    GtkWidget *dataset_label = shrinking_label(dataset, TRUE);
    gtk_widget_set_name(dataset_label, "fm-catalogue-dataset");
    g_autoptr(GDateTime) when = g_date_time_new_from_unix_local(run->started_unix);
    g_autofree char *time = when != NULL ? g_date_time_format(when, "%-d %b %H:%M") : NULL;
    GtkWidget *date_label = fixed_label(time != NULL ? time : "", TRUE);
    gtk_widget_set_name(date_label, "fm-catalogue-date");

    /* Each line shares its own width: the title gives way to the run number only, the
     * dataset to the date only, and the fixed labels never shrink. */
    gtk_box_pack_start(GTK_BOX(top), title_label, TRUE, TRUE, 0);
    gtk_box_pack_end(GTK_BOX(top), number_label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(bottom), dataset_label, TRUE, TRUE, 0);
    gtk_box_pack_end(GTK_BOX(bottom), date_label, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), top, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), bottom, FALSE, FALSE, 0);

    g_autofree char *tip = run_tooltip(run, title);
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

/* Ids of the selected rows, to select them again after a rebuild. */
static GArray *selected_ids(FmCatalogueView *self)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(gint64));
    GList *rows = gtk_list_box_get_selected_rows(GTK_LIST_BOX(self->listbox));
    for (GList *l = rows; l != NULL; l = l->next) {
        gint64 id = row_run_id(l->data);
        g_array_append_val(ids, id);
    }
    g_list_free(rows);
    return ids;
}

static gboolean contains_id(GArray *ids, gint64 id)
{
    for (guint i = 0; i < ids->len; i++)
        if (g_array_index(ids, gint64, i) == id)
            return TRUE;
    return FALSE;
}

gboolean fm_catalogue_view_refresh(FmCatalogueView *view, GError **error)
{
    if (view->cat != NULL) /* read before listing: a change during the read shows next poll */
        view->have_stamp = fm_catalogue_peek_change_stamp(view->cat, &view->stamp);
    g_autoptr(GPtrArray) runs = NULL;
    if (view->cat != NULL) {
        runs = fm_catalogue_list_runs(view->cat, 200, error);
        if (runs == NULL)
            return FALSE;
        g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);
    }
    /* A refresh may come from the poll at any time: keep the user's selection and scroll
     * position, and tell listeners only if the selection really changed. */
    g_autoptr(GArray) before = selected_ids(view);
    GtkAdjustment *vadj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(view->scroller));
    double scroll = gtk_adjustment_get_value(vadj);
    view->rebuilding = TRUE;
    GList *children = gtk_container_get_children(GTK_CONTAINER(view->listbox));
    for (GList *l = children; l != NULL; l = l->next)
        gtk_widget_destroy(GTK_WIDGET(l->data));
    g_list_free(children);
    /* a batch's runs together under their group's row */
    GArray *entries = runs != NULL ? fm_catalogue_group_runs(view->cat, runs) : NULL;
    for (guint i = 0; entries != NULL && i < entries->len; i++) {
        const fm_catalogue_entry *e = &g_array_index(entries, fm_catalogue_entry, i);
        gboolean open = e->batch_id == NULL || !g_hash_table_contains(view->collapsed, e->batch_id);
        if (e->run == NULL) {
            gtk_container_add(GTK_CONTAINER(view->listbox), fm_catalogue_group_row_new(e, open));
            continue;
        }
        GtkWidget *row = make_row(view, e->run);
        gtk_container_add(GTK_CONTAINER(view->listbox), row);
        if (e->batch_id != NULL)
            fm_catalogue_group_member_dress(row, e, open);
        if (contains_id(before, row_run_id(GTK_LIST_BOX_ROW(row))) &&
            gtk_list_box_row_get_selectable(GTK_LIST_BOX_ROW(row)))
            gtk_list_box_select_row(GTK_LIST_BOX(view->listbox), GTK_LIST_BOX_ROW(row));
    }
    fm_catalogue_entries_free(entries);
    view->rebuilding = FALSE;
    gtk_adjustment_set_value(vadj, scroll);
    g_autoptr(GArray) after = selected_ids(view);
    gboolean same = after->len == before->len;
    for (guint i = 0; same && i < after->len; i++)
        same = contains_id(before, g_array_index(after, gint64, i));
    if (!same)
        selection_changed(GTK_LIST_BOX(view->listbox), view);
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
    /* Oldest first: "B − A" then reads as what changed since the earlier run. */
    gint64 a = ok ? row_run_id(rows->data) : 0, b = ok ? row_run_id(rows->next->data) : 0;
    if (ok && first != NULL)
        *first = MIN(a, b);
    if (ok && second != NULL)
        *second = MAX(a, b);
    g_list_free(rows);
    return ok;
}

GtkWidget *fm_catalogue_view_find_row(FmCatalogueView *view, gint64 run_id)
{
    GtkWidget *found = NULL;
    GList *rows = gtk_container_get_children(GTK_CONTAINER(view->listbox));
    for (GList *l = rows; l != NULL && found == NULL; l = l->next)
        if (row_run_id(l->data) == run_id)
            found = l->data;
    g_list_free(rows);
    return found;
}

GtkWidget *fm_catalogue_view_find_group(FmCatalogueView *view, const char *batch_id)
{
    GtkWidget *found = NULL;
    GList *rows = gtk_container_get_children(GTK_CONTAINER(view->listbox));
    for (GList *l = rows; l != NULL && found == NULL; l = l->next)
        if (g_strcmp0(fm_catalogue_group_row_batch(l->data), batch_id) == 0)
            found = l->data;
    g_list_free(rows);
    return found;
}
