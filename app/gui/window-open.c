/* FmWindow: opens datasets on a worker thread and shows a newly opened one's details. */
#include "window-private.h"

#include "family-page.h"

#include <glib/gi18n.h>
#include <string.h>
#include <stdlib.h>

#include "app/core/io/dicom.h"
#include "app/core/io/open.h"
#include "app/core/roi.h"

/* ---- opening ---------------------------------------------------------------------------- */

static void load_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    GError *error = NULL;
    int *last = g_new(int, 1);
    *last = -1;
    g_object_set_data_full(G_OBJECT(task), "fm-last-percent", last, g_free);
    int part = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(task), "fm-part"));
    /* A folder of several DICOM series (a study, one series per flip angle): its first, the
     * others offered in the dataset panel, rather than a refusal to open. */
    if (part == 0 && g_file_test(data, G_FILE_TEST_IS_DIR)) {
        g_auto(GStrv) uids = fm_dicom_list_series(data, NULL);
        if (uids != NULL && g_strv_length(uids) > 1)
            part = 1;
    }
    fm_dataset *ds =
        fm_dataset_open_part(data, part, NULL, fm_window_load_progress, task, cancel, &error);
    if (ds == NULL)
        g_task_return_error(task, error);
    else
        g_task_return_pointer(task, ds, (GDestroyNotify)fm_dataset_unref);
}

/* ---- progress of slow readers (.ptu) ---------------------------------------------------- */

typedef struct {
    FmWindow *win;
    double fraction;
    char *base;
} LoadProgress;

static gboolean load_progress_idle(gpointer user)
{
    LoadProgress *p = user;
    if (!p->win->disposed && p->win->loading) {
        g_autofree char *text =
            g_strdup_printf(_("Reading %s… %.0f %%"), p->base, 100.0 * p->fraction);
        fm_window_set_status(p->win, text);
    }
    return G_SOURCE_REMOVE;
}

static void load_progress_free(gpointer user)
{
    LoadProgress *p = user;
    g_object_unref(p->win);
    g_free(p->base);
    g_free(p);
}

/* Called on the worker by slow readers (.ptu histogramming); posts whole percents only. */
void fm_window_load_progress(double fraction, gpointer user)
{
    GTask *task = user;
    int *last = g_object_get_data(G_OBJECT(task), "fm-last-percent");
    int percent = (int)(fraction * 100);
    if (last == NULL || percent == *last)
        return;
    *last = percent;
    LoadProgress *p = g_new0(LoadProgress, 1);
    p->win = g_object_ref(g_task_get_source_object(task));
    p->fraction = fraction;
    p->base = g_path_get_basename(g_task_get_task_data(task));
    g_main_context_invoke_full(g_task_get_context(task), G_PRIORITY_DEFAULT, load_progress_idle, p,
                               load_progress_free);
}

/* The datasets of the file ds came from, when it holds several: a choice in the dataset panel. */
static void show_parts(FmWindow *win, const fm_dataset *ds)
{
    int current = 0;
    g_autoptr(GArray) parts = fm_dataset_parts(ds, &current);
    win->updating = TRUE;
    gtk_combo_box_text_remove_all(GTK_COMBO_BOX_TEXT(win->part_combo));
    for (guint i = 0; i < parts->len; i++) {
        const fm_dataset_part *p = &g_array_index(parts, fm_dataset_part, i);
        g_autofree char *id = g_strdup_printf("%d", p->part);
        gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(win->part_combo), id, p->label);
    }
    gtk_combo_box_set_active(GTK_COMBO_BOX(win->part_combo), parts->len > 1 ? current : -1);
    win->updating = FALSE;
    gtk_widget_set_visible(win->part_label, parts->len > 1);
    gtk_widget_set_visible(win->part_combo, parts->len > 1);
}

static void part_changed(GtkComboBox *combo, FmWindow *win)
{
    const char *id = gtk_combo_box_get_active_id(combo);
    if (win->updating || id == NULL || win->dataset == NULL || win->dataset->source_path == NULL)
        return;
    fm_window_open_file_part(win, win->dataset->source_path, atoi(id));
}

void fm_window_parts_init(FmWindow *win)
{
    GtkWidget *grid = gtk_widget_get_parent(win->ds_type_label);
    win->part_label = gtk_label_new(_("Dataset"));
    gtk_label_set_xalign(GTK_LABEL(win->part_label), 1.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(win->part_label), "dim-label");
    win->part_combo = gtk_combo_box_text_new();
    gtk_widget_set_tooltip_text(win->part_combo,
                                _("The file holds several datasets (blocks or detector "
                                  "channels): the one to open"));
    gtk_grid_attach(GTK_GRID(grid), win->part_label, 0, 4, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), win->part_combo, 1, 4, 1, 1);
    gtk_widget_set_no_show_all(win->part_label, TRUE);
    gtk_widget_set_no_show_all(win->part_combo, TRUE);
    g_signal_connect(win->part_combo, "changed", G_CALLBACK(part_changed), win);
}

/* ROIs saved beside the data as NAME.rois.json (fluxmap-cli simulate and the demos write them;
 * a user's own ROIs for a file) come with it, as the CLI's --roi would take them. */
static void add_sidecar_rois(FmWindow *win, const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, G_DIR_SEPARATOR);
    gsize stem = dot != NULL && (slash == NULL || dot > slash) ? (gsize)(dot - path) : strlen(path);
    if (g_str_has_suffix(path, ".nii.gz"))
        stem = strlen(path) - strlen(".nii.gz");
    g_autofree char *base = g_strndup(path, stem);
    g_autofree char *sidecar = g_strconcat(base, ".rois.json", NULL);
    if (!g_file_test(sidecar, G_FILE_TEST_IS_REGULAR))
        return;
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) rois = fm_roi_list_from_file(sidecar, &error);
    if (rois == NULL) {
        g_autofree char *msg =
            g_strdup_printf(_("The ROIs beside the data were not read: %s"), error->message);
        fm_window_show_message(win, GTK_MESSAGE_WARNING, msg);
        return;
    }
    fm_window_add_rois(win, rois, sidecar);
}

static void set_dataset(FmWindow *win, fm_dataset *ds, const char *path)
{
    fm_window_playback_stop(win);
    g_clear_pointer(&win->dataset, fm_dataset_unref);
    win->dataset = ds;
    fm_window_set_result(win, NULL, FALSE);

    int w = fm_dataset_width(ds), h = fm_dataset_height(ds), n = fm_dataset_frames(ds);
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *size = g_strdup_printf("%d × %d px", w, h);
    g_autofree char *frames = g_strdup_printf("%d", n);
    g_autofree char *type =
        ds->bits_per_sample > 0
            ? g_strdup_printf("%s, %d-bit", fm_pixel_type_name(ds->type), ds->bits_per_sample)
            : g_strdup(fm_pixel_type_name(ds->type));
    gtk_label_set_text(GTK_LABEL(win->ds_file_label), base);
    gtk_widget_set_tooltip_text(win->ds_file_label, path);
    gtk_label_set_text(GTK_LABEL(win->ds_size_label), size);
    gtk_label_set_text(GTK_LABEL(win->ds_frames_label), frames);
    gtk_label_set_text(GTK_LABEL(win->ds_type_label), type);
    gtk_header_bar_set_subtitle(GTK_HEADER_BAR(win->header_bar), base);
    show_parts(win, ds);
    fm_job_list_set_has_dataset(win->job_list, TRUE);

    win->updating = TRUE;
    gtk_range_set_range(GTK_RANGE(win->frame_scale), 0, MAX(n - 1, 1));
    gtk_range_set_increments(GTK_RANGE(win->frame_scale), 1, 10);
    win->updating = FALSE;
    gtk_widget_set_sensitive(win->frame_scale, n > 1);
    fm_window_set_frame(win, 0);
    fm_map_view_clear(win->map_view); /* a new dataset starts zoomed to fit */
    fm_plot_view_clear(win->plot_view);
    fm_window_select_map(win, "raw");
    /* The best page goes on show first, then every page prepares its views. When it is the
     * page already on show (the Speckle page on start-up, say) its views still replace what the
     * centre showed (the demo cards): the stack is told its page came on show again. */
    const char *before = fm_window_get_family(win);
    g_autofree char *family_before = g_strdup(before);
    gboolean chosen = fm_window_choose_page(win);
    if (g_strcmp0(family_before, fm_window_get_family(win)) == 0)
        g_object_notify(G_OBJECT(win->panel_stack), "visible-child");
    if (!chosen) {
        g_autofree char *msg = g_strdup_printf(
            _("%s: no analysis family takes a dataset of %d dimensions; it is shown as frames."),
            base, ds->n_dims);
        fm_window_show_message(win, GTK_MESSAGE_WARNING, msg);
    }
    for (guint i = 0; i < win->pages->len; i++)
        fm_family_page_dataset_changed(win->pages->pdata[i]);
    fm_window_update_action_state(win);
    fm_window_dataset_changed(win);
    add_sidecar_rois(win, path);

    g_autofree char *status = g_strdup_printf(_("Opened %s: %d × %d px, %d frames"), base, w, h, n);
    fm_window_set_status(win, status);
    fm_window_recent_add(win, path);
    g_autofree char *folder = g_path_get_dirname(path);
    fm_application_set_setting(FM_APPLICATION(gtk_window_get_application(GTK_WINDOW(win))),
                               "last-folder", folder);
}

/* The reopened run waiting for path (NULL when none), taken before the dataset goes on show:
 * showing a new dataset clears the window's result, a pending reopen's included. */
static fm_result *take_pending_reopen(FmWindow *win, const char *path, gint64 *run_id)
{
    *run_id = win->reopen_run_id;
    if (win->reopen_result == NULL || g_strcmp0(path, win->reopen_path) != 0)
        return NULL;
    g_clear_pointer(&win->reopen_path, g_free);
    return g_steal_pointer(&win->reopen_result);
}

static void load_done(GObject *source, GAsyncResult *res, gpointer user)
{
    FmWindow *win = FM_WINDOW(source);
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = g_task_propagate_pointer(G_TASK(res), &error);
    const char *path = g_task_get_task_data(G_TASK(res));
    if (g_task_get_cancellable(G_TASK(res)) == win->load_cancellable)
        win->loading = FALSE;
    if (win->disposed || g_cancellable_is_cancelled(g_task_get_cancellable(G_TASK(res)))) {
        if (ds != NULL)
            fm_dataset_unref(ds);
        return;
    }
    if (ds == NULL) {
        g_autofree char *msg = g_strdup_printf(_("Could not open %s: %s"), path, error->message);
        fm_window_show_message(win, GTK_MESSAGE_ERROR, msg);
        win->message_from_open = TRUE;
        fm_window_set_status(win, _("Open failed"));
        gint64 run_id = 0;
        fm_result *pending = take_pending_reopen(win, path, &run_id); /* its maps alone */
        if (pending != NULL)
            fm_window_show_reopened(win, pending, run_id);
        return;
    }
    /* A good open clears an earlier open's error, not other news (an unusable catalogue, a
     * job's remark), which would otherwise vanish when a file named on the command line loads. */
    if (win->message_from_open)
        fm_window_hide_message(win);
    gint64 run_id = 0;
    fm_result *pending = take_pending_reopen(win, path, &run_id);
    gboolean asked_part = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(res), "fm-part")) != 0;
    const char *n_series = fm_dataset_get_meta(ds, "dicom_folder_series");
    set_dataset(win, ds, path);
    if (n_series != NULL && !asked_part) { /* the folder's first series of several: say so */
        g_autofree char *msg = g_strdup_printf(
            _("The folder holds %s DICOM series: the first is open; choose another under "
              "Dataset. Series of one variable-flip-angle acquisition make a T1 map from the "
              "command line: 'fluxmap-cli run' with the T1 method on the folder."),
            n_series);
        fm_window_show_message(win, GTK_MESSAGE_INFO, msg);
        win->message_from_open = TRUE;
    }
    if (pending != NULL) /* a reopened run: its maps over the dataset, in one action */
        fm_window_show_reopened(win, pending, run_id);
}

void fm_window_open_for_result(FmWindow *win, const char *path, fm_result *result, gint64 run_id)
{
    fm_window_open_file(win, path);
    win->reopen_result = result;
    win->reopen_path = g_strdup(path);
    win->reopen_run_id = run_id;
}

void fm_window_open_file(FmWindow *win, const char *path)
{
    fm_window_open_file_part(win, path, 0);
}

void fm_window_open_file_part(FmWindow *win, const char *path, int part)
{
    /* another open replaces a reopened run's */
    g_clear_pointer(&win->reopen_result, fm_result_free);
    g_clear_pointer(&win->reopen_path, g_free);
    if (win->load_cancellable != NULL)
        g_cancellable_cancel(win->load_cancellable);
    g_clear_object(&win->load_cancellable);
    win->load_cancellable = g_cancellable_new();
    win->loading = TRUE;
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *status = g_strdup_printf(_("Opening %s…"), base);
    fm_window_set_status(win, status);
    g_autoptr(GTask) task = g_task_new(win, win->load_cancellable, load_done, NULL);
    g_task_set_task_data(task, g_strdup(path), g_free);
    g_object_set_data(G_OBJECT(task), "fm-part", GINT_TO_POINTER(part));
    g_task_run_in_thread(task, load_thread);
}
