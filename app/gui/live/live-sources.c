/* The cameras in the dataset pane: what Aravis finds (refreshed on demand), and a file replayed
 * as a camera. Picking one opens it on the page that can use its frames. */
#include "live-private.h"

#include <glib/gi18n.h>

#include "app/gui/panel-util.h"

static void row_activated(GtkListBox *list, GtkListBoxRow *row, FmLive *live)
{
    (void)list;
    const char *id = g_object_get_data(G_OBJECT(row), "fm-camera-id");
    if (id != NULL)
        fm_live_gui_open_camera(live, id);
}

static GtkWidget *camera_row(const fm_camera_info *info)
{
    GtkWidget *row = gtk_list_box_row_new();
    g_object_set_data_full(G_OBJECT(row), "fm-camera-id", g_strdup(info->id), g_free);
    g_autofree char *model = g_strjoin(" ", info->vendor != NULL ? info->vendor : "",
                                       info->model ? info->model : "", NULL);
    g_autofree char *text = g_strdup_printf("%s  %s", info->id, g_strstrip(model));
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    g_object_set(label, "margin", 3, NULL);
    g_autofree char *tip =
        g_strdup_printf(_("%s %s, serial %s, %s: click to use it"),
                        info->vendor ? info->vendor : "", info->model ? info->model : "",
                        info->serial ? info->serial : "?", info->protocol ? info->protocol : "");
    gtk_widget_set_tooltip_text(row, tip);
    gtk_container_add(GTK_CONTAINER(row), label);
    gtk_widget_show_all(row);
    return row;
}

static void list_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    (void)source;
    (void)data;
    (void)cancellable;
    GError *error = NULL;
    GPtrArray *cameras = fm_cameras_list(&error);
    if (cameras != NULL)
        g_task_return_pointer(task, cameras, (GDestroyNotify)g_ptr_array_unref);
    else
        g_task_return_error(task, error);
}

static void list_done(GObject *object, GAsyncResult *result, gpointer user)
{
    (void)object;
    FmLive *live = user;
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) cameras = g_task_propagate_pointer(G_TASK(result), &error);
    live->listing = FALSE;
    if (live->disposed)
        return;
    GtkContainer *list = GTK_CONTAINER(live->camera_list);
    g_autoptr(GList) rows = gtk_container_get_children(list);
    for (GList *l = rows; l != NULL; l = l->next)
        gtk_widget_destroy(l->data);
    for (guint i = 0; cameras != NULL && i < cameras->len; i++)
        gtk_container_add(list, camera_row(cameras->pdata[i]));
    gboolean none = cameras == NULL || cameras->len == 0;
    gtk_widget_set_visible(live->camera_list, !none);
    gtk_label_set_text(GTK_LABEL(live->camera_hint),
                       error != NULL ? error->message : _("No camera found."));
    gtk_widget_set_visible(live->camera_hint, none);
    live->n_listed++;
}

/* Discovery waits for GigE cameras to answer: on a worker, the list follows when it is done. */
void fm_live_sources_refresh(FmLive *live)
{
    if (live->listing)
        return;
    live->listing = TRUE;
    gtk_label_set_text(GTK_LABEL(live->camera_hint), _("Looking for cameras…"));
    gtk_widget_set_visible(live->camera_hint, TRUE);
    GTask *task = g_task_new(live->win, NULL, list_done, live); /* holds the window */
    g_task_run_in_thread(task, list_thread);
    g_object_unref(task);
}

static void refresh_clicked(GtkButton *button, FmLive *live)
{
    (void)button;
    fm_live_sources_refresh(live);
}

static void replay_clicked(GtkButton *button, FmLive *live)
{
    (void)button;
    GtkFileChooserNative *chooser =
        gtk_file_chooser_native_new(_("Replay a file as a camera"), GTK_WINDOW(live->win),
                                    GTK_FILE_CHOOSER_ACTION_OPEN, _("_Replay"), _("_Cancel"));
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(chooser)) == GTK_RESPONSE_ACCEPT) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(chooser));
        fm_live_open_replay(live->win, path, 0); /* at the file's own rate */
    }
    g_object_unref(chooser);
}

void fm_live_sources_build(FmLive *live)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    live->sources = box;
    GtkWidget *head = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    GtkWidget *heading = fm_panel_heading(_("CAMERAS"));
    gtk_widget_set_valign(heading, GTK_ALIGN_CENTER);
    gtk_box_pack_start(GTK_BOX(head), heading, TRUE, TRUE, 0);
    GtkWidget *refresh = gtk_button_new_from_icon_name("view-refresh-symbolic", GTK_ICON_SIZE_MENU);
    gtk_widget_set_name(refresh, "fm-live-refresh");
    gtk_button_set_relief(GTK_BUTTON(refresh), GTK_RELIEF_NONE);
    gtk_widget_set_tooltip_text(refresh, _("Look for cameras again"));
    gtk_box_pack_start(GTK_BOX(head), refresh, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), head, FALSE, FALSE, 0);

    live->camera_list = gtk_list_box_new();
    gtk_widget_set_name(live->camera_list, "fm-live-cameras");
    gtk_list_box_set_activate_on_single_click(GTK_LIST_BOX(live->camera_list), TRUE);
    gtk_box_pack_start(GTK_BOX(box), live->camera_list, FALSE, FALSE, 0);
    live->camera_hint = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(live->camera_hint), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(live->camera_hint), TRUE);
    gtk_style_context_add_class(gtk_widget_get_style_context(live->camera_hint), "dim-label");
    gtk_box_pack_start(GTK_BOX(box), live->camera_hint, FALSE, FALSE, 0);
    GtkWidget *replay = gtk_button_new_with_label(_("Replay a file as a camera…"));
    gtk_widget_set_name(replay, "fm-live-replay");
    gtk_widget_set_tooltip_text(replay, _("Play a recorded stack at its frame rate through the "
                                          "live path, as a camera would send it"));
    GtkWidget *replay_label = gtk_bin_get_child(GTK_BIN(replay));
    gtk_label_set_ellipsize(GTK_LABEL(replay_label), PANGO_ELLIPSIZE_END);
    gtk_box_pack_start(GTK_BOX(box), replay, FALSE, FALSE, 0);

    g_signal_connect(live->camera_list, "row-activated", G_CALLBACK(row_activated), live);
    g_signal_connect(refresh, "clicked", G_CALLBACK(refresh_clicked), live);
    g_signal_connect(replay, "clicked", G_CALLBACK(replay_clicked), live);

    /* in the dataset pane, above the catalogue */
    FmWindow *win = live->win;
    GtkWidget *left = fm_window_get_side_pane(win, FALSE);
    GtkWidget *catalogue_heading = NULL;
    g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(left));
    for (GList *l = children; l != NULL; l = l->next)
        if (l->next != NULL && l->next->data == win->catalogue_box)
            catalogue_heading = l->data;
    gtk_box_pack_start(GTK_BOX(left), box, FALSE, FALSE, 0);
    if (catalogue_heading != NULL) {
        int position = 0;
        gtk_container_child_get(GTK_CONTAINER(left), catalogue_heading, "position", &position,
                                NULL);
        gtk_box_reorder_child(GTK_BOX(left), box, position);
    }
    gtk_widget_show_all(box);
    fm_live_sources_refresh(live);
}
