/* FmWindow's DCE perfusion wiring: the panel and views pages, slice-aware ROIs on the map,
 * jobs of the chosen model (dce.dual_input or a standard one), input-curve CSV and map export
 * actions. */
#include "dce-page.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/dce/dce_dicom_export.h"
#include "app/core/dce/dce_prep.h"
#include "dce-panel.h"
#include "dce-roi-stats.h"
#include "dce-views.h"
#include "app/gui/window-private.h"

typedef struct {
    FmDcePanel *panel;
    FmDceViews *views;
    GtkWidget *controls, *map_toggle, *dce_toggle;
    /* Replaces the window's one-line ROI statistics while DCE is on show: a grid with roles. */
    FmDceRoiStats *roi_stats;
    /* The map view holds the ROIs of the slice on show; those of other slices wait here, so
     * every ROI shows only on its slice while the map view stays one 2-D image. */
    GPtrArray *hidden; /* fm_roi*, owned */
    GHashTable *known; /* fm_roi* already given a slice */
    gboolean active, syncing;
    int counter; /* for unique "ROI n" names across slices */
    fm_job *job; /* running, or NULL */
    /* The catalogue run of the result on show (its DICOM export is listed with it); 0 while it
     * is not known to be recorded (the catalogue is still being written). */
    gint64 run_id;
} DceState;

static DceState *state_of(FmWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "fm-dce");
}

static gboolean is_dce(const fm_dataset *ds)
{
    return ds && ds->n_dims == 4 && ds->dims[2].size >= 1 && ds->dims[3].size >= 8 &&
           g_strcmp0(ds->dims[3].unit, "s") == 0;
}

/* A TIFF stack (x, y, pages) whose description gives its slices (slices=N, as fluxmap-cli
 * simulate and ImageJ-style writers say it) making volumes of 8 frames or more is a DCE series:
 * the views reshape it as the fits do (dce_series.h). A bare stack, a live recording (its
 * frame_interval_s alone) or an exported map (one volume) stays the other pages'. */
static gboolean is_dce_stack(const fm_dataset *ds)
{
    if (!ds || ds->n_dims != 3 || ds->dims[2].size < 8 || g_strcmp0(ds->dims[0].name, "x") != 0 ||
        g_strcmp0(ds->dims[1].name, "y") != 0)
        return FALSE;
    const char *d = fm_dataset_get_meta(ds, "description");
    const char *at = d ? strstr(d, "slices=") : NULL;
    gint64 nz = at ? g_ascii_strtoll(at + strlen("slices="), NULL, 10) : 0;
    gint64 pages = (gint64)ds->dims[2].size;
    return nz > 0 && pages % nz == 0 && pages / nz >= 8;
}

/* The DCE panel is on show. */
static gboolean dce_active(FmWindow *win)
{
    return g_strcmp0(fm_window_get_family(win), "dce") == 0;
}

GPtrArray *fm_window_dce_get_rois(FmWindow *win)
{
    DceState *st = state_of(win);
    GPtrArray *all = g_ptr_array_new();
    GPtrArray *shown = fm_map_view_get_rois(win->map_view);
    for (guint i = 0; shown && i < shown->len; i++)
        g_ptr_array_add(all, shown->pdata[i]);
    for (guint i = 0; st && i < st->hidden->len; i++)
        g_ptr_array_add(all, st->hidden->pdata[i]);
    return all;
}

/* Signal of the anatomy on show under each ROI of the slice. */
static void update_roi_stats(FmWindow *win)
{
    DceState *st = state_of(win);
    g_autoptr(GPtrArray) all = fm_window_dce_get_rois(win);
    int w = 0, h = 0;
    const float *data = st->active ? fm_dce_views_get_anatomy(st->views, &w, &h) : NULL;
    fm_dce_roi_stats_update(st->roi_stats, all, fm_dce_views_get_slice(st->views), data, w, h,
                            NULL);
}

/* Hands every ROI to the panel, the views and the checklist. */
static void publish_rois(FmWindow *win)
{
    DceState *st = state_of(win);
    g_autoptr(GPtrArray) all = fm_window_dce_get_rois(win);
    int slice = fm_dce_views_get_slice(st->views);
    fm_dce_panel_set_rois(st->panel, all, slice);
    fm_dce_views_set_rois(st->views, all);
    update_roi_stats(win);
}

/* Moves ROIs between the map view and the hidden list so the view holds the slice's own. */
static void distribute_rois(FmWindow *win)
{
    DceState *st = state_of(win);
    int slice = fm_dce_views_get_slice(st->views);
    GPtrArray *shown = fm_map_view_get_rois(win->map_view);
    g_autoptr(GPtrArray) all = fm_window_dce_get_rois(win);
    st->syncing = TRUE;
    /* Take every pointer out of both owners first, then hand each to its new one. */
    g_ptr_array_set_free_func(st->hidden, NULL);
    g_ptr_array_set_size(st->hidden, 0);
    g_ptr_array_set_free_func(st->hidden, (GDestroyNotify)fm_roi_free);
    g_ptr_array_set_free_func(shown, NULL);
    g_ptr_array_set_size(shown, 0);
    g_ptr_array_set_free_func(shown, (GDestroyNotify)fm_roi_free);
    fm_map_view_clear_rois(win->map_view); /* resets its selection and numbering */
    for (guint i = 0; i < all->len; i++) {
        fm_roi *roi = all->pdata[i];
        if (roi->slice < 0 || roi->slice == slice)
            fm_map_view_add_roi(win->map_view, roi);
        else
            g_ptr_array_add(st->hidden, roi);
    }
    st->syncing = FALSE;
}

static void rois_changed(FmMapView *view, FmWindow *win)
{
    DceState *st = state_of(win);
    if (st->syncing || !st->active)
        return;
    GPtrArray *shown = fm_map_view_get_rois(view);
    int slice = fm_dce_views_get_slice(st->views);
    for (guint i = 0; i < shown->len; i++) {
        fm_roi *roi = shown->pdata[i];
        if (g_hash_table_contains(st->known, roi))
            continue;
        /* Drawn by hand on the slice on show: it belongs to that slice. */
        roi->slice = slice;
        g_free(roi->name);
        roi->name = g_strdup_printf(_("ROI %d"), ++st->counter);
        g_hash_table_add(st->known, roi);
    }
    /* The user edits the page's ROIs: the perfusion views show those from now on, not the
     * reopened run's own. */
    fm_dce_views_set_run_rois(st->views, NULL);
    /* Forget ROIs the view has freed (Delete key), lest a new one at the same address pass. */
    g_autoptr(GPtrArray) all = fm_window_dce_get_rois(win);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, st->known);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        gboolean alive = FALSE;
        for (guint i = 0; i < all->len && !alive; i++)
            alive = all->pdata[i] == key;
        if (!alive)
            g_hash_table_iter_remove(&it);
    }
    publish_rois(win);
}

static void clear_rois_clicked(GtkButton *button, FmWindow *win)
{
    DceState *st = state_of(win);
    g_ptr_array_set_size(st->hidden, 0);
    g_hash_table_remove_all(st->known);
    st->counter = 0;
    fm_dce_views_set_run_rois(st->views, NULL);
    if (st->active)
        publish_rois(win);
}

void fm_window_dce_add_roi(FmWindow *win, fm_roi *roi)
{
    DceState *st = state_of(win);
    if (!roi->name)
        roi->name = g_strdup_printf(_("ROI %d"), ++st->counter);
    g_hash_table_add(st->known, roi);
    int slice = fm_dce_views_get_slice(st->views);
    if (roi->slice < 0 || roi->slice == slice) {
        fm_map_view_add_roi(win->map_view, roi); /* rois_changed publishes */
    } else {
        g_ptr_array_add(st->hidden, roi);
        publish_rois(win);
    }
}

/* ---- display ----------------------------------------------------------------------------- */

static void show_anatomy(FmWindow *win)
{
    DceState *st = state_of(win);
    int w = 0, h = 0;
    const float *data = fm_dce_views_get_anatomy(st->views, &w, &h);
    if (!data)
        return;
    gboolean first = !fm_map_view_has_map(win->map_view);
    fm_map_view_set_map(win->map_view, data, w, h, _("Signal"), "");
    if (first)
        fm_map_view_zoom_to_fit(win->map_view);
}

static void position_changed(FmDceViews *views, FmWindow *win)
{
    DceState *st = state_of(win);
    if (!st->active)
        return;
    show_anatomy(win);
    distribute_rois(win);
    publish_rois(win);
}

static void set_page(FmWindow *win, const char *page)
{
    DceState *st = state_of(win);
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), page);
    gboolean dce = g_strcmp0(page, "dce") == 0;
    st->syncing = TRUE;
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(dce ? st->dce_toggle : st->map_toggle), TRUE);
    st->syncing = FALSE;
}

void fm_window_dce_show_page(FmWindow *win, const char *page)
{
    set_page(win, page);
}

static void page_toggled(GtkToggleButton *button, FmWindow *win)
{
    DceState *st = state_of(win);
    if (!st->syncing && gtk_toggle_button_get_active(button))
        set_page(win, GTK_WIDGET(button) == st->dce_toggle ? "dce" : "map");
}

/* In DCE mode the playback bar and the LSI map selector give way to the slice/time bar. */
static void family_changed(GObject *stack, GParamSpec *pspec, FmWindow *win)
{
    DceState *st = state_of(win);
    gboolean dce = dce_active(win);
    fm_window_sync_family_bars(win);
    gtk_widget_set_visible(st->controls, dce);
    GtkWidget *window_stats =
        gtk_widget_get_ancestor(win->roi_stats_label, GTK_TYPE_SCROLLED_WINDOW);
    if (window_stats)
        gtk_widget_set_visible(window_stats, !dce);
    gtk_widget_set_visible(GTK_WIDGET(st->roi_stats), dce);
    /* The bottom plot is shared: DCE draws in it only while on show, so its curves and axes
     * never overwrite another family's (e.g. when a new dataset resets the DCE views). */
    fm_dce_views_set_plot(st->views, dce ? win->plot_view : NULL);
    if (dce) {
        set_page(win, fm_dce_views_get_result(st->views) ? "dce" : "map");
        fm_dce_views_refresh_curves(st->views); /* its axes and curves in the shared plot */
    }
}

static void params_changed(FmDcePanel *panel, FmWindow *win)
{
    DceState *st = state_of(win);
    fm_dce_views_set_method(st->views, fm_dce_panel_get_method(panel));
    g_autoptr(fm_params) params = fm_dce_panel_get_params(panel, NULL);
    if (params)
        fm_dce_views_set_params(st->views, params);
}

static void roles_changed(FmDcePanel *panel, FmWindow *win)
{
    DceState *st = state_of(win);
    g_autoptr(GPtrArray) all = fm_window_dce_get_rois(win);
    fm_dce_views_set_run_rois(st->views, NULL); /* an edit: the page's ROIs from now on */
    fm_dce_views_set_rois(st->views, all);
    update_roi_stats(win);
    gtk_widget_queue_draw(GTK_WIDGET(win->map_view));
}

static void map_cursor(FmMapView *view, int x, int y, double value, FmWindow *win)
{
    DceState *st = state_of(win);
    if (st->active)
        fm_dce_views_show_curve(st->views, x, y);
}

static void dce_dataset_changed(FmWindow *win)
{
    DceState *st = state_of(win);
    if (!st)
        return;
    st->active = is_dce(win->dataset) || is_dce_stack(win->dataset);
    fm_dce_views_set_dataset(st->views, st->active ? win->dataset : NULL);
    if (!st->active) {
        family_changed(NULL, NULL, win);
        return;
    }
    /* ROIs already on the view (from a previous dataset) keep their slices. */
    GPtrArray *shown = fm_map_view_get_rois(win->map_view);
    for (guint i = 0; i < shown->len; i++)
        g_hash_table_add(st->known, shown->pdata[i]);
    params_changed(st->panel, win);
    /* Anatomy reads in gray; the user can still pick another colormap. */
    g_action_group_change_action_state(G_ACTION_GROUP(win), "colormap",
                                       g_variant_new_string("gray"));
    family_changed(NULL, NULL, win);
    position_changed(st->views, win);
    fm_map_view_zoom_to_fit(win->map_view);
}

/* ---- jobs -------------------------------------------------------------------------------- */

static void job_progress(fm_job *job, double fraction, gpointer user)
{
    FmWindow *win = user;
    if (win->disposed)
        return;
    fm_job_list_update(win->job_list, job);
    if (fm_job_get_ready_result(job)) /* the maps are out: the panel says "Done in" already */
        return;
    g_autofree char *text = g_strdup_printf(_("Fitting voxels… %.0f %%"), 100.0 * fraction);
    fm_dce_panel_set_progress(state_of(win)->panel, fraction, text);
}

/* The note's remarks without the CPU fallback, which the status bar says once per session
 * (the methods write it as one "; "-separated part from this msgid). */
static char *remarks(const char *note)
{
    g_autofree char *marker = g_strdup(_("fell back to the CPU: %s"));
    char *fmt = strstr(marker, "%s");
    if (fmt)
        *fmt = '\0';
    g_auto(GStrv) parts = g_strsplit_set(note ? note : "", ";\n", -1);
    GString *out = g_string_new(NULL);
    for (int i = 0; parts[i]; i++) {
        char *part = g_strstrip(parts[i]);
        if (*part && !(*marker && g_str_has_prefix(part, marker)))
            g_string_append_printf(out, "%s%s", out->len ? "; " : "", part);
    }
    return g_string_free(out, FALSE);
}

/* The maps into the DCE views (a copy: the job's own go with the job) and the outcome. */
static void show_result(FmWindow *win, fm_job *job, const fm_result *res)
{
    DceState *st = state_of(win);
    g_autofree char *what = fm_job_describe(job);
    st->run_id = 0;
    fm_dce_views_set_result(st->views, fm_window_copy_result(res));
    set_page(win, "dce");
    g_autofree char *said = remarks(res->note);
    g_autofree char *done =
        *said ? g_strdup_printf(_("Done in %.1f s: %s."), res->elapsed_ms / 1000.0, said)
              : g_strdup_printf(_("Done in %.1f s."), res->elapsed_ms / 1000.0);
    fm_dce_panel_set_progress(st->panel, 1.0, done);
    fm_window_show_done(win, res, what);
}

/* The fit returned its maps: show them while the worker still writes the catalogue. */
static void job_ready(fm_job *job, gpointer user)
{
    FmWindow *win = user;
    const fm_result *res = fm_job_get_ready_result(job);
    if (win->disposed || !state_of(win) || !res)
        return;
    fm_job_list_update(win->job_list, job);
    show_result(win, job, res);
    fm_window_mark_ready_shown(win, job);
}

static void job_done(fm_job *job, gpointer user)
{
    FmWindow *win = user;
    win->running_jobs--;
    win->last_job_state = fm_job_get_state(job);
    gboolean shown = fm_window_take_ready_shown(win, job);
    DceState *st = state_of(win);
    if (win->disposed || !st) {
        g_object_unref(win);
        return;
    }
    g_clear_pointer(&st->job, fm_job_unref);
    fm_job_list_update(win->job_list, job);
    fm_dce_panel_set_running(st->panel, FALSE);
    g_autofree char *what = fm_job_describe(job);
    const fm_result *res = fm_job_get_result(job);
    if (win->last_job_state == FM_JOB_DONE && res) {
        if (!shown) {
            show_result(win, job, res);
            fm_window_result_shown(win, job);
        }
        st->run_id = fm_job_get_run_id(job);
    } else if (win->last_job_state == FM_JOB_FAILED) {
        g_autofree char *msg = fm_window_show_failure(win, job, what);
        fm_dce_panel_set_progress(st->panel, 0, msg);
    } else {
        fm_window_show_cancelled(win, what);
        fm_dce_panel_set_progress(st->panel, 0, _("Cancelled: no maps were kept."));
    }
    fm_window_refresh_after_job(win);
    g_object_unref(win);
}

static void run_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    DceState *st = state_of(win);
    if (!st->active) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Open a 4-D DCE series (NIfTI, DICOM folder or TIFF stack) "
                                 "before running the perfusion fit."));
        return;
    }
    if (st->job) {
        fm_window_show_message(win, GTK_MESSAGE_INFO, _("A perfusion fit is already running."));
        return;
    }
    if (fm_dce_panel_get_missing(st->panel)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO, fm_dce_panel_get_missing(st->panel));
        return;
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_params) params = fm_dce_panel_get_params(st->panel, &error);
    if (!params) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
        return;
    }
    g_autoptr(GPtrArray) rois = fm_window_dce_get_rois(win);
    win->running_jobs++;
    fm_dce_panel_set_running(st->panel, TRUE);
    fm_dce_panel_set_progress(st->panel, 0, _("Starting…"));
    st->job = fm_job_start(fm_dce_panel_get_method(st->panel), win->dataset, params,
                           rois->len ? rois : NULL, fm_dce_panel_get_backend(st->panel),
                           win->catalogue, job_progress, job_done, g_object_ref(win));
    fm_job_set_ready_callback(st->job, job_ready);
    fm_job_list_add(win->job_list, st->job);
    g_autofree char *what = fm_job_describe(st->job);
    g_autofree char *status = g_strdup_printf(_("Running %s…"), what);
    fm_window_set_status(win, status);
}

static void cancel_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    DceState *st = state_of(FM_WINDOW(user));
    if (st->job)
        fm_job_cancel(st->job);
}

/* ---- files ------------------------------------------------------------------------------- */

/* A modal native chooser: the dialog's own loop keeps the window responsive. */
static char *choose(FmWindow *win, GtkFileChooserAction mode, const char *title,
                    const char *suggested)
{
    GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
        title, GTK_WINDOW(win), mode,
        mode == GTK_FILE_CHOOSER_ACTION_SAVE ? _("_Save") : _("_Open"), _("_Cancel"));
    GtkFileChooser *fc = GTK_FILE_CHOOSER(chooser);
    if (mode == GTK_FILE_CHOOSER_ACTION_SAVE) {
        gtk_file_chooser_set_do_overwrite_confirmation(fc, TRUE);
        gtk_file_chooser_set_current_name(fc, suggested);
    }
    char *path = NULL;
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(chooser)) == GTK_RESPONSE_ACCEPT)
        path = gtk_file_chooser_get_filename(fc);
    g_object_unref(chooser);
    return path;
}

static void load_inputs_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    g_autofree char *path =
        choose(win, GTK_FILE_CHOOSER_ACTION_OPEN, _("Load input curves (t_s,ca,cp)"), NULL);
    if (path) {
        DceState *st = state_of(win);
        fm_dce_panel_set_param(st->panel, "input_csv", path);
        params_changed(st->panel, win);
    }
}

/* The input curves on show (the liver model's Ca and Cp, or a standard model's plasma input)
 * as CSV: the Save inputs button and the Export menu's item. */
static void save_inputs_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    FmDceViews *views = state_of(win)->views;
    if (fm_dce_views_inputs_missing(views)) { /* said before a file name is asked for */
        fm_window_show_message(win, GTK_MESSAGE_INFO, fm_dce_views_inputs_missing(views));
        return;
    }
    g_autoptr(GError) error = NULL;
    g_autofree char *path =
        choose(win, GTK_FILE_CHOOSER_ACTION_SAVE, _("Save input curves"), "inputs.csv");
    if (!path)
        return;
    if (!fm_dce_views_save_inputs_csv(views, path, &error)) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
        return;
    }
    g_autofree char *status = g_strdup_printf(_("Saved the input curves to %s"), path);
    fm_window_set_status(win, status);
}

gboolean fm_window_dce_export(FmWindow *win, const char *path, fm_dce_export_format format,
                              GError **error)
{
    DceState *st = state_of(win);
    return fm_dce_export_maps(fm_dce_views_get_result(st->views), win->dataset, path, format, NULL,
                              error);
}

gboolean fm_window_dce_export_dicom(FmWindow *win, const char *folder, char **note, GError **error)
{
    DceState *st = state_of(win);
    /* The ROIs on show with the maps: a reopened run's own while they are. */
    g_autoptr(GPtrArray) page_rois = fm_window_dce_get_rois(win);
    GPtrArray *rois =
        fm_dce_views_shows_run_rois(st->views) ? fm_dce_views_get_rois(st->views) : page_rois;
    return fm_dce_export_dicom(fm_dce_views_get_result(st->views), win->dataset, rois, folder,
                               win->catalogue, st->run_id, note, error);
}

/* Maps and ROIs as DICOM into a folder the user picks; the status bar says what was written. */
static void export_dicom(FmWindow *win)
{
    g_autofree char *folder = choose(win, GTK_FILE_CHOOSER_ACTION_SELECT_FOLDER,
                                     _("Export maps and ROIs as DICOM into a folder"), NULL);
    g_autofree char *note = NULL;
    g_autoptr(GError) error = NULL;
    if (!folder)
        return;
    if (!fm_window_dce_export_dicom(win, folder, &note, &error))
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
    else
        fm_window_set_status(win, note);
}

static void export_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    if (g_strcmp0(g_variant_get_string(parameter, NULL), "inputs") == 0) {
        save_inputs_activated(NULL, NULL, win);
        return;
    }
    fm_dce_export_format format = FM_DCE_EXPORT_NIFTI;
    fm_dce_export_format_parse(g_variant_get_string(parameter, NULL), &format);
    if (!fm_dce_views_get_result(state_of(win)->views)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO, _("Run the fit before exporting maps."));
        return;
    }
    if (g_strcmp0(g_variant_get_string(parameter, NULL), "dicom") == 0) {
        export_dicom(win);
        return;
    }
    static const char *const names[] = {"perfusion.nii.gz", "perfusion.tif", "perfusion.csv"};
    g_autofree char *path = choose(win, GTK_FILE_CHOOSER_ACTION_SAVE,
                                   format == FM_DCE_EXPORT_CSV ? _("Export fitted voxels")
                                                               : _("Export maps (one file each)"),
                                   names[format]);
    g_autoptr(GError) error = NULL;
    if (!path)
        return;
    if (!fm_window_dce_export(win, path, format, &error)) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
        return;
    }
    g_autofree char *status = g_strdup_printf(_("Exported the perfusion maps to %s"), path);
    fm_window_set_status(win, status);
}

/* ---- set-up ------------------------------------------------------------------------------ */

static void state_free(gpointer data)
{
    DceState *st = data;
    if (st->job) {
        fm_job_cancel(st->job);
        fm_job_unref(st->job);
    }
    g_ptr_array_unref(st->hidden);
    g_hash_table_unref(st->known);
    g_free(st);
}

static GtkWidget *page_button(const char *label, const char *tooltip)
{
    GtkWidget *b = gtk_radio_button_new_with_label(NULL, label);
    gtk_toggle_button_set_mode(GTK_TOGGLE_BUTTON(b), FALSE);
    gtk_widget_set_tooltip_text(b, tooltip);
    return b;
}

/* win.run on this page: win.dce-run (the chosen model with the ROI roles). */
static gboolean page_run(FmWindow *win)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "dce-run", NULL);
    return TRUE;
}

/* A result from the catalogue, over the open DCE dataset (its anatomy and slices); over another
 * dataset it is left to the window's map view. */
static const fm_method *page_get_method(FmWindow *win)
{
    return fm_dce_panel_get_method(state_of(win)->panel);
}

static gboolean page_select_method(FmWindow *win, const char *method_id)
{
    return fm_dce_panel_select_method(state_of(win)->panel, method_id);
}

static fm_params *page_get_params(FmWindow *win)
{
    return fm_dce_panel_get_params(state_of(win)->panel, NULL);
}

static gboolean page_set_param(FmWindow *win, const char *key, const char *text)
{
    return fm_dce_panel_set_param(state_of(win)->panel, key, text);
}

/* ROIs from a label map: each on its slice, as drawn ones are. */
static gboolean page_add_rois(FmWindow *win, GPtrArray *rois)
{
    DceState *st = state_of(win);
    if (st == NULL || !st->active)
        return FALSE;
    for (guint i = 0; i < rois->len; i++)
        fm_window_dce_add_roi(win, fm_roi_copy(rois->pdata[i]));
    return TRUE;
}

static GPtrArray *page_get_rois(FmWindow *win)
{
    DceState *st = state_of(win);
    return st != NULL && st->active ? fm_window_dce_get_rois(win) : NULL;
}

static int dce_takes(const fm_dataset *ds)
{
    return is_dce(ds) || is_dce_stack(ds) ? FM_PAGE_TAKES_OWN : FM_PAGE_TAKES_NONE;
}

static gboolean page_show_result(FmWindow *win, const fm_result *res)
{
    DceState *st = state_of(win);
    if (!st || !st->active || !g_str_has_prefix(res->method_id, "dce."))
        return FALSE;
    fm_window_set_family(win, "dce");
    /* A run reopened from the catalogue: its id (an export is listed with it) and the ROIs it
     * was given, which its input, curves and outlines come from whatever the page has now. */
    st->run_id = win->showing_run_id;
    fm_dce_views_set_result(st->views, fm_window_copy_result(res));
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) rois = st->run_id > 0 && win->catalogue
                                    ? fm_catalogue_get_run_rois(win->catalogue, st->run_id, &error)
                                    : NULL;
    if (error != NULL)
        fm_window_show_message(win, GTK_MESSAGE_WARNING, error->message);
    if (rois != NULL && rois->len > 0)
        fm_dce_views_set_run_rois(st->views, rois);
    set_page(win, "dce");
    return TRUE;
}

FmFamilyPage *fm_dce_page_new(FmWindow *win)
{
    static const GActionEntry entries[] = {
        {"dce-run", run_activated, NULL, NULL, NULL, {0}},
        {"dce-cancel", cancel_activated, NULL, NULL, NULL, {0}},
        {"dce-load-inputs", load_inputs_activated, NULL, NULL, NULL, {0}},
        {"dce-save-inputs", save_inputs_activated, NULL, NULL, NULL, {0}},
        {"dce-export", export_activated, "s", NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);
    DceState *st = g_new0(DceState, 1);
    st->hidden = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    st->known = g_hash_table_new(NULL, NULL);
    g_object_set_data_full(G_OBJECT(win), "fm-dce", st, state_free);

    st->panel = FM_DCE_PANEL(fm_dce_panel_new());
    fm_window_add_panel(win, "dce", _("Perfusion (DCE)"), GTK_WIDGET(st->panel));
    st->views = FM_DCE_VIEWS(fm_dce_views_new());
    gtk_stack_add_named(GTK_STACK(win->centre_stack), GTK_WIDGET(st->views), "dce");
    /* The shared plot is attached in family_changed, only while DCE is on show. */

    /* The slice/time bar sits where the playback bar is, with Anatomy | Perfusion in front. */
    st->controls = fm_dce_views_get_controls(st->views);
    st->map_toggle = page_button(_("Anatomy"), _("Draw and edit ROIs on the anatomy"));
    st->dce_toggle = page_button(_("Perfusion"), _("Perfusion maps over the anatomy"));
    gtk_radio_button_join_group(GTK_RADIO_BUTTON(st->dce_toggle), GTK_RADIO_BUTTON(st->map_toggle));
    GtkWidget *pages = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
    gtk_style_context_add_class(gtk_widget_get_style_context(pages), "linked");
    gtk_box_pack_start(GTK_BOX(pages), st->map_toggle, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(pages), st->dce_toggle, FALSE, FALSE, 0);
    GtkWidget *row = fm_dce_views_get_control_row(st->views);
    gtk_box_pack_start(GTK_BOX(row), pages, FALSE, FALSE, 0);
    gtk_box_reorder_child(GTK_BOX(row), pages, 0);
    g_signal_connect(st->map_toggle, "toggled", G_CALLBACK(page_toggled), win);
    g_signal_connect(st->dce_toggle, "toggled", G_CALLBACK(page_toggled), win);
    GtkWidget *playback = gtk_widget_get_parent(win->frame_scale);
    GtkWidget *centre = gtk_widget_get_parent(playback);
    gtk_box_pack_start(GTK_BOX(centre), st->controls, FALSE, FALSE, 0);
    int position = 0; /* right after the playback bar, whatever its index */
    gtk_container_child_get(GTK_CONTAINER(centre), playback, "position", &position, NULL);
    gtk_box_reorder_child(GTK_BOX(centre), st->controls, position + 1);
    gtk_widget_show_all(st->controls);
    gtk_widget_set_visible(st->controls, FALSE);
    gtk_widget_show_all(GTK_WIDGET(st->views));

    g_signal_connect(st->views, "position-changed", G_CALLBACK(position_changed), win);
    g_signal_connect(st->panel, "params-changed", G_CALLBACK(params_changed), win);
    g_signal_connect(st->panel, "roles-changed", G_CALLBACK(roles_changed), win);
    g_signal_connect(win->map_view, "rois-changed", G_CALLBACK(rois_changed), win);
    g_signal_connect(win->map_view, "cursor-moved", G_CALLBACK(map_cursor), win);
    g_signal_connect(win->clear_rois_button, "clicked", G_CALLBACK(clear_rois_clicked), win);
    /* after the window's handler, which shows the map for every page without views */
    st->roi_stats = FM_DCE_ROI_STATS(fm_dce_roi_stats_new());
    gtk_box_pack_start(GTK_BOX(win->roi_bar), GTK_WIDGET(st->roi_stats), TRUE, TRUE, 0);
    gtk_widget_set_no_show_all(GTK_WIDGET(st->roi_stats), TRUE);
    gtk_widget_set_visible(GTK_WIDGET(st->roi_stats), FALSE);
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), win);
    /* ROIs are drawn on the anatomy and the curves go to the shared plot; the slice/time bar
     * replaces the frame slider, and the overlay combo the map list */
    static const fm_page_funcs funcs = {
        .id = "dce",
        .bars = FM_PAGE_BAR_ROIS | FM_PAGE_BAR_MAP_TOOLBAR | FM_PAGE_BAR_PLOT,
        .takes = dce_takes,
        .dataset_changed = dce_dataset_changed,
        .run = page_run,
        .show_result = page_show_result,
        .set_param = page_set_param,
        .get_method = page_get_method,
        .select_method = page_select_method,
        .get_params = page_get_params,
        .add_rois = page_add_rois,
        .get_rois = page_get_rois,
    };
    return fm_family_page_from_funcs(win, &funcs);
}

GtkWidget *fm_window_get_dce_panel(FmWindow *win)
{
    DceState *st = state_of(win);
    return st ? GTK_WIDGET(st->panel) : NULL;
}

GtkWidget *fm_window_get_dce_views(FmWindow *win)
{
    DceState *st = state_of(win);
    return st ? GTK_WIDGET(st->views) : NULL;
}
