/* The live GUI's state on the window: a source picked in the dataset pane opens on the page that
 * can use its frames; Start runs a live session with the page's method and parameters, Stop ends
 * it on a worker (the recording closes, the maps go to the catalogue) and says how it went in
 * the page's note. */
#include "live-private.h"

#include <glib/gi18n.h>
#include <stdlib.h>

#include "app/core/io/oct_raw.h"

static void live_free(gpointer data)
{
    FmLive *live = data;
    g_ptr_array_unref(live->pages);
    g_clear_object(&live->c.box);
    g_clear_pointer(&live->source, fm_frame_source_free);
    fm_source_settings_clear(&live->settings);
    g_free(live->camera_id);
    g_free(live->replay_path);
    g_free(live->source_name);
    g_free(live->record_file);
    g_free(live->last_record);
    g_mutex_clear(&live->lock);
    g_cond_clear(&live->cond);
    g_free(live);
}

static void page_free(gpointer data)
{
    fm_live_page *page = data;
    g_free((char *)page->page_id);
    g_free((char *)page->second_map);
    g_free((char *)page->centre);
    g_free(page);
}

/* The window goes: a running session ends here (its display call is woken first, as the main
 * loop will not draw again), so that the recording is closed and catalogued. */
static void window_destroyed(GtkWidget *widget, FmLive *live)
{
    (void)widget;
    if (live->disposed)
        return;
    live->disposed = TRUE;
    fm_live_display_close(live);
    if (live->stats_timer != 0)
        g_source_remove(live->stats_timer);
    live->stats_timer = 0;
    if (live->session != NULL) {
        g_autoptr(fm_live_summary) summary = fm_live_stop(live->session, NULL);
        live->session = NULL;
    }
}

FmLive *fm_live_of(FmWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "fm-live");
}

static FmLive *live_ensure(FmWindow *win)
{
    FmLive *live = fm_live_of(win);
    if (live != NULL)
        return live;
    live = g_new0(FmLive, 1);
    live->win = win;
    live->pages = g_ptr_array_new_with_free_func(page_free);
    g_mutex_init(&live->lock);
    g_cond_init(&live->cond);
    g_object_set_data_full(G_OBJECT(win), "fm-live", live, live_free);
    g_signal_connect(win, "destroy", G_CALLBACK(window_destroyed), live);
    fm_live_controls_build(live);
    return live;
}

void fm_live_add_page(FmWindow *win, const fm_live_page *page)
{
    FmLive *live = live_ensure(win);
    fm_live_page *copy = g_new0(fm_live_page, 1);
    *copy = *page;
    copy->page_id = g_strdup(page->page_id);
    copy->second_map = g_strdup(page->second_map);
    copy->centre = g_strdup(page->centre);
    g_ptr_array_add(live->pages, copy);
}

static const fm_live_page *page_for(FmLive *live, fm_live_frames frames)
{
    for (guint i = 0; i < live->pages->len; i++) {
        const fm_live_page *page = live->pages->pdata[i];
        if (page->frames == frames)
            return page;
    }
    return live->pages->len > 0 ? live->pages->pdata[0] : NULL;
}

static FmFamilyPage *family_page(FmLive *live, const char *id)
{
    for (guint i = 0; i < live->win->pages->len; i++)
        if (g_strcmp0(fm_family_page_get_id(live->win->pages->pdata[i]), id) == 0)
            return live->win->pages->pdata[i];
    return NULL;
}

/* Run (header bar, Ctrl+R, and the panel's Run: win.run or the page's own win.<page>-run) runs
 * the page's method on a file: with a camera on its page and no file open there is nothing for
 * it to run, so it is off and Start is the way. */
static void set_action_enabled(FmLive *live, const char *name, gboolean enabled)
{
    GAction *action = g_action_map_lookup_action(G_ACTION_MAP(live->win), name);
    if (G_IS_SIMPLE_ACTION(action))
        g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

static void sync_run_action(FmLive *live)
{
    gboolean camera_page =
        live->page != NULL && g_strcmp0(fm_window_get_family(live->win), live->page->page_id) == 0;
    gboolean off = camera_page && live->win->dataset == NULL;
    set_action_enabled(live, "run", !off);
    for (guint i = 0; i < live->pages->len; i++) {
        const fm_live_page *page = live->pages->pdata[i];
        g_autofree char *own = g_strdup_printf("%s-run", page->page_id);
        set_action_enabled(live, own, !(off && page == live->page));
    }
}

/* The user switched to another page: the controls follow where that page runs live. */
static void family_changed(GObject *stack, GParamSpec *pspec, FmLive *live)
{
    (void)stack;
    (void)pspec;
    if (live->page == NULL || live->session != NULL || live->stopping) {
        sync_run_action(live);
        return;
    }
    const char *id = fm_window_get_family(live->win);
    for (guint i = 0; i < live->pages->len; i++) {
        const fm_live_page *page = live->pages->pdata[i];
        if (g_strcmp0(page->page_id, id) == 0) {
            if (page != live->page) { /* the page left gives its views back to files */
                if (live->page->source != NULL)
                    live->page->source(live->win, NULL, NULL);
                if (page->source != NULL)
                    page->source(live->win, live->source_name, live->replay_path);
            }
            live->page = page;
            fm_live_controls_place(live, page);
            gtk_stack_set_visible_child_name(GTK_STACK(live->win->centre_stack), page->centre);
        }
    }
    sync_run_action(live);
}

/* A file opened: the source goes (unless it runs: then it keeps running on its page). */
static void dataset_changed(FmWindow *win, FmLive *live)
{
    (void)win;
    if (live->session != NULL || live->stopping)
        return;
    g_clear_pointer(&live->source, fm_frame_source_free);
    if (live->page != NULL && live->page->source != NULL)
        live->page->source(live->win, NULL, NULL);
    live->page = NULL;
    gtk_widget_hide(live->c.box);
    sync_run_action(live);
}

/* win.live-camera(id), win.live-start, win.live-stop: the same as the list and the buttons, for
 * scripting (D-Bus) and menus. */
static void camera_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    (void)action;
    fm_live_gui_open_camera(fm_live_of(user), g_variant_get_string(parameter, NULL));
}

static void start_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    (void)action;
    (void)parameter;
    fm_live_gui_start(fm_live_of(user));
}

static void stop_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    (void)action;
    (void)parameter;
    fm_live_gui_stop(fm_live_of(user));
}

/* The panel's Cancel (win.cancel-all) ends what runs: the live run too, as Stop does. */
static void cancel_all_activated(GSimpleAction *action, GVariant *parameter, FmLive *live)
{
    (void)action;
    (void)parameter;
    fm_live_gui_stop(live);
}

void fm_live_attach(FmWindow *win)
{
    FmLive *live = live_ensure(win);
    static const GActionEntry entries[] = {
        {"live-camera", camera_activated, "s", NULL, NULL, {0}},
        {"live-start", start_activated, NULL, NULL, NULL, {0}},
        {"live-stop", stop_activated, NULL, NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);
    fm_live_sources_build(live);
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), live);
    g_signal_connect(win, "dataset-changed", G_CALLBACK(dataset_changed), live);
}

/* ---- the source ---- */

static void show_error(FmLive *live, const char *what, const GError *error)
{
    g_autofree char *text = g_strdup_printf("%s: %s", what, error->message);
    fm_window_show_message(live->win, GTK_MESSAGE_ERROR, text);
}

/* Opens the chosen source again (after a run, whose session freed it). */
static fm_frame_source *open_source(FmLive *live, GError **error)
{
    if (live->camera_id != NULL)
        return live->opener != NULL ? live->opener(live->camera_id, live->opener_user, error)
                                    : fm_frame_source_open_camera(live->camera_id, error);
    return fm_frame_source_open_replay(live->replay_path, live->replay_fps, error);
}

/* The source is open: its page on show with the controls set from its settings. */
static gboolean source_opened(FmLive *live, fm_frame_source *source)
{
    g_autoptr(GError) error = NULL;
    fm_source_settings settings = {0};
    if (!fm_frame_source_get_settings(source, &settings, &error)) {
        show_error(live, live->source_name, error);
        fm_frame_source_free(source);
        return FALSE;
    }
    g_clear_pointer(&live->source, fm_frame_source_free);
    live->source = source;
    fm_source_settings_clear(&live->settings);
    live->settings = settings;
    /* a line-scan sensor (one row) or OCT spectra give lines; anything else images */
    gboolean lines = (settings.is_camera && settings.sensor_height == 1) ||
                     (live->replay_path != NULL && fm_oct_raw_has_sidecar(live->replay_path));
    live->page = page_for(live, lines ? FM_LIVE_FRAMES_LINES : FM_LIVE_FRAMES_IMAGES);
    if (live->page == NULL)
        return FALSE;
    fm_window_set_family(live->win, live->page->page_id);
    fm_live_controls_place(live, live->page);
    gtk_stack_set_visible_child_name(GTK_STACK(live->win->centre_stack), live->page->centre);
    fm_live_controls_show_settings(live);
    fm_live_controls_sync(live);
    sync_run_action(live);
    if (live->page->source != NULL)
        live->page->source(live->win, live->source_name, live->replay_path);
    g_autofree char *ready = g_strdup_printf(_("%s is ready: press Start."), live->source_name);
    gtk_label_set_text(GTK_LABEL(live->c.status), ready);
    fm_window_set_status(live->win, ready);
    return TRUE;
}

/* The source again after a run (whose session freed it), with the exposure, gain and rate the
 * controls show: what the user set stays from run to run. */
static gboolean reopen(FmLive *live, GError **error)
{
    GtkWidget *spins[] = {live->c.exposure, live->c.gain, live->c.rate};
    double values[G_N_ELEMENTS(spins)];
    for (gsize i = 0; i < G_N_ELEMENTS(spins); i++)
        values[i] = gtk_spin_button_get_value(GTK_SPIN_BUTTON(spins[i]));
    fm_frame_source *source = open_source(live, error);
    if (source == NULL || !source_opened(live, source))
        return FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(spins); i++) /* applied where they differ */
        if (GPOINTER_TO_INT(g_object_get_data(G_OBJECT(spins[i]), "fm-available")))
            gtk_spin_button_set_value(GTK_SPIN_BUTTON(spins[i]), values[i]);
    return TRUE;
}

void fm_live_gui_open_camera(FmLive *live, const char *id)
{
    if (live->session != NULL || live->stopping) {
        fm_window_show_message(live->win, GTK_MESSAGE_INFO,
                               _("Stop the running camera before choosing another source."));
        return;
    }
    g_free(live->camera_id);
    live->camera_id = g_strdup(id);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = open_source(live, &error);
    if (source == NULL) {
        show_error(live, id, error);
        return;
    }
    g_clear_pointer(&live->replay_path, g_free);
    g_free(live->source_name);
    live->source_name = g_strdup(id);
    live->record_file_chosen = FALSE;
    source_opened(live, source);
}

gboolean fm_live_open_replay(FmWindow *win, const char *path, double frames_per_s)
{
    FmLive *live = fm_live_of(win);
    if (live == NULL)
        return FALSE;
    if (live->session != NULL || live->stopping) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Stop the running camera before choosing another source."));
        return FALSE;
    }
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = fm_frame_source_open_replay(path, frames_per_s, &error);
    g_autofree char *base = g_path_get_basename(path);
    if (source == NULL) {
        show_error(live, base, error);
        return FALSE;
    }
    g_clear_pointer(&live->camera_id, g_free);
    g_free(live->replay_path);
    live->replay_path = g_strdup(path);
    live->replay_fps = frames_per_s;
    g_free(live->source_name);
    /* TRANSLATORS: a file played back as if a camera sent it */
    live->source_name = g_strdup_printf(_("replay of %s"), base);
    live->record_file_chosen = FALSE;
    return source_opened(live, source);
}

void fm_live_gui_apply_setting(FmLive *live, GtkWidget *control)
{
    fm_frame_source *source = live->running != NULL ? live->running : live->source;
    if (source == NULL)
        return;
    g_autoptr(GError) error = NULL;
    gboolean ok = TRUE;
    FmLiveControls *c = &live->c;
    if (control == c->region) {
        const char *id = gtk_combo_box_get_active_id(GTK_COMBO_BOX(c->region));
        int div = id != NULL ? atoi(id) : 0;
        const fm_source_settings *s = &live->settings;
        if (div > 0) { /* centred, on even offsets as cameras' steps usually are */
            int w = s->sensor_width / div, h = MAX(s->sensor_height / div, 1);
            ok = fm_frame_source_set_region(source, (s->sensor_width - w) / 2 / 2 * 2,
                                            (s->sensor_height - h) / 2 / 2 * 2, w, h, &error);
        }
    } else if (control == c->format) {
        const char *name = gtk_combo_box_get_active_id(GTK_COMBO_BOX(c->format));
        fm_pixfmt format = fm_pixfmt_from_name(name);
        ok = format == FM_PIXFMT_UNKNOWN || fm_frame_source_set_format(source, format, &error);
    } else {
        double value = gtk_spin_button_get_value(GTK_SPIN_BUTTON(control));
        ok = control == c->exposure ? fm_frame_source_set_exposure_us(source, value, &error)
             : control == c->gain   ? fm_frame_source_set_gain_db(source, value, &error)
                                    : fm_frame_source_set_frame_rate(source, value, &error);
    }
    if (!ok)
        show_error(live, live->source_name, error);
    /* what the camera made of it (a rate follows the exposure, values snap to steps) */
    fm_source_settings settings = {0};
    if (fm_frame_source_get_settings(source, &settings, NULL)) {
        fm_source_settings_clear(&live->settings);
        live->settings = settings;
        if (live->session == NULL)
            fm_live_controls_show_settings(live);
    }
}

/* ---- Start, Stop, Record ---- */

static gboolean stats_tick(gpointer data)
{
    FmLive *live = data;
    if (live->session == NULL) {
        live->stats_timer = 0;
        return G_SOURCE_REMOVE;
    }
    fm_live_controls_show_stats(live);
    if (fm_live_finished(live->session)) /* the camera went, or a replay ended */
        fm_live_gui_stop(live);
    return G_SOURCE_CONTINUE;
}

/* The ROIs drawn on the page's view, or the whole frame: the time course always grows. */
static GPtrArray *run_rois(FmLive *live)
{
    GPtrArray *drawn = fm_map_view_get_rois(live->page->view);
    GPtrArray *rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    for (guint i = 0; drawn != NULL && i < drawn->len; i++)
        g_ptr_array_add(rois, fm_roi_copy(drawn->pdata[i]));
    live->whole_frame = rois->len == 0;
    if (live->whole_frame)
        g_ptr_array_add(rois, fm_roi_new_rectangle(_("whole frame"), 0, 0, 1 << 20, 1 << 20));
    return rois;
}

static gboolean ensure_record_dir(FmLive *live, GError **error)
{
    g_autofree char *dir = g_path_get_dirname(live->record_file);
    if (g_mkdir_with_parents(dir, 0755) == 0)
        return TRUE;
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("cannot create %s"), dir);
    return FALSE;
}

void fm_live_gui_start(FmLive *live)
{
    if (live->page == NULL || live->session != NULL || live->stopping)
        return;
    FmWindow *win = live->win;
    FmFamilyPage *page = family_page(live, live->page->page_id);
    const fm_method *method = page != NULL ? fm_family_page_get_method(page) : NULL;
    if (method == NULL || method->live == NULL) {
        g_autofree char *text = g_strdup_printf(
            _("%s does not run live; choose a method that does (spatial, temporal or "
              "spatio-temporal contrast, or the B-scan)."),
            method != NULL ? _(method->title) : _("This page"));
        fm_window_show_message(win, GTK_MESSAGE_INFO, text);
        return;
    }
    g_autoptr(fm_params) params = fm_family_page_get_params(page);
    g_autoptr(GError) error = NULL;
    if (params == NULL) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, _("A parameter is out of its range."));
        return;
    }
    if (live->page->prepare != NULL && !live->page->prepare(live->replay_path, params, &error)) {
        show_error(live, live->source_name, error);
        return;
    }
    if (live->source == NULL && !reopen(live, &error)) {
        if (error != NULL)
            show_error(live, live->source_name, error);
        return;
    }
    gboolean record = gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(live->c.record));
    if (record && !live->record_file_chosen) {
        g_free(live->record_file);
        live->record_file = fm_live_default_record_path(live);
        fm_live_controls_show_record_file(live);
    }
    if (record && !ensure_record_dir(live, &error)) {
        show_error(live, _("Recording"), error);
        return;
    }
    g_autoptr(GPtrArray) rois = run_rois(live);
    fm_live_request req = {
        .method = method,
        .params = params,
        .rois = rois,
        .backend = win->backend_choice, /* the user's setting, as the panels' combos set it */
        .record_path = record ? live->record_file : NULL,
        .save_maps = FM_LIVE_SAVE_SUMMARY,
        .catalogue = TRUE,
        .display = fm_live_display,
        .display_user = live,
        .display_max_hz = 30,
    };
    live->run_page = live->page;
    live->n_drawn = 0;
    live->zoomed = FALSE;
    fm_plot_view_clear(win->plot_view);
    fm_live_session *session = fm_live_start(live->source, &req, &error);
    if (session == NULL) {
        show_error(live, live->source_name, error); /* the source is still ours */
        return;
    }
    live->running = live->source; /* the session's now */
    live->source = NULL;
    live->session = session;
    fm_window_hide_message(win);
    fm_live_controls_sync(live);
    fm_live_controls_show_stats(live);
    live->stats_timer = g_timeout_add(250, stats_tick, live);
    GAction *cancel = g_action_map_lookup_action(G_ACTION_MAP(win), "cancel-all");
    if (cancel != NULL && !live->cancel_hooked) /* beside the jobs' own handler (added later) */
        g_signal_connect(cancel, "activate", G_CALLBACK(cancel_all_activated), live);
    live->cancel_hooked = live->cancel_hooked || cancel != NULL;
    fm_live_job_begin(live, _(method->title));
    if (live->run_page->begin != NULL)
        live->run_page->begin(win, live->source_name, params, live->settings.width,
                              live->settings.height);
    if (live->run_page->view == win->map_view) /* no frames to step through while live */
        gtk_widget_set_visible(gtk_widget_get_parent(win->frame_scale), FALSE);
}

typedef struct {
    FmLive *live;
    fm_live_session *session;
} StopData;

static void stop_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
    (void)source;
    (void)cancellable;
    StopData *sd = data;
    GError *error = NULL;
    fm_live_summary *summary = fm_live_stop(sd->session, &error);
    if (summary != NULL)
        g_task_return_pointer(task, summary, (GDestroyNotify)fm_live_summary_free);
    else
        g_task_return_error(task, error);
}

/* What the run left, for the page's note. */
static char *summary_text(FmLive *live, const fm_live_summary *s)
{
    GString *text = g_string_new(NULL);
    /* the session's message says what happened; else that it ended as asked */
    if (s->message != NULL)
        g_string_append_printf(text, _("%s; %" G_GUINT64_FORMAT " frames processed"), s->message,
                               s->stats.processed);
    else
        g_string_append_printf(text,
                               _("Live run of %s ended: %" G_GUINT64_FORMAT " frames processed"),
                               live->source_name, s->stats.processed);
    if (s->record_path != NULL) {
        g_autofree char *base = g_path_get_basename(s->record_path);
        g_string_append_printf(text, _(", recording %s (%" G_GUINT64_FORMAT " frames)"), base,
                               s->stats.recorded);
    }
    if (s->maps_run_id > 0)
        g_string_append_printf(text, _(", run %" G_GINT64_FORMAT " in the catalogue"),
                               s->maps_run_id);
    return g_string_free(text, FALSE);
}

static void stop_done(GObject *object, GAsyncResult *result, gpointer user)
{
    (void)object;
    FmLive *live = user;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_live_summary) summary = g_task_propagate_pointer(G_TASK(result), &error);
    live->stopping = FALSE;
    if (live->disposed)
        return;
    FmWindow *win = live->win;
    fm_catalogue_view_refresh(win->catalogue_view, NULL);
    fm_window_sync_family_bars(win);
    /* a recording goes on with a new file next time */
    live->record_file_chosen = FALSE;
    live->updating = TRUE;
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(live->c.record), FALSE);
    live->updating = FALSE;
    if (summary != NULL && summary->end == FM_LIVE_END_SOURCE_LOST) {
        fm_live_sources_refresh(live); /* an unplugged camera leaves the list */
    } else if (live->source == NULL) {
        reopen(live, NULL); /* idle: its settings can change before the next Start */
    }
    fm_live_controls_sync(live);
    sync_run_action(live);
    if (summary == NULL) {
        fm_live_job_end(live, error->message, TRUE);
        show_error(live, live->source_name, error);
        return;
    }
    live->last_run_id = summary->maps_run_id;
    g_free(live->last_record);
    live->last_record = g_strdup(summary->record_path);
    g_autofree char *text = summary_text(live, summary);
    gboolean bad = summary->end != FM_LIVE_END_ASKED;
    if (live->run_page->end != NULL)
        live->run_page->end(win, live->source_name);
    fm_live_job_end(live, text, bad);
    /* the note belongs to the page the run drew on */
    fm_window_set_family(win, live->run_page->page_id);
    fm_window_show_message(win, bad ? GTK_MESSAGE_WARNING : GTK_MESSAGE_INFO, text);
    fm_window_set_status(win, text);
    gtk_label_set_text(GTK_LABEL(live->c.status), text);
}

void fm_live_gui_stop(FmLive *live)
{
    if (live->session == NULL || live->stopping)
        return;
    StopData *sd = g_new0(StopData, 1);
    sd->live = live;
    sd->session = live->session;
    live->session = NULL;
    live->running = NULL;
    live->stopping = TRUE;
    fm_live_job_stopping(live);
    fm_live_controls_sync(live);
    fm_live_controls_show_stats(live);
    /* the window stays until the task ends (its data holds it) */
    GTask *task = g_task_new(live->win, NULL, stop_done, live);
    g_task_set_task_data(task, sd, g_free);
    g_task_run_in_thread(task, stop_thread);
    g_object_unref(task);
}

void fm_live_gui_record(FmLive *live, gboolean on)
{
    fm_live_controls_sync(live);
    if (live->session == NULL)
        return; /* Start records from the first frame */
    g_autoptr(GError) error = NULL;
    if (on && !live->record_file_chosen) {
        g_free(live->record_file);
        live->record_file = fm_live_default_record_path(live);
        fm_live_controls_show_record_file(live);
    }
    if (on && !ensure_record_dir(live, &error)) {
        show_error(live, _("Recording"), error);
        return;
    }
    if (!fm_live_set_recording(live->session, on ? live->record_file : NULL, &error)) {
        show_error(live, _("Recording"), error);
        live->updating = TRUE;
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(live->c.record), FALSE);
        live->updating = FALSE;
        fm_live_controls_sync(live);
    }
    fm_live_controls_show_stats(live);
}

/* ---- tests ---- */

GtkWidget *fm_live_get_sources(FmWindow *win)
{
    FmLive *live = fm_live_of(win);
    return live != NULL ? live->sources : NULL;
}

GtkWidget *fm_live_get_controls(FmWindow *win)
{
    FmLive *live = fm_live_of(win);
    return live != NULL ? live->c.box : NULL;
}

gboolean fm_live_is_running(FmWindow *win)
{
    FmLive *live = fm_live_of(win);
    return live != NULL && (live->session != NULL || live->stopping);
}

void fm_live_set_camera_opener(FmWindow *win, fm_live_camera_opener open, gpointer user)
{
    FmLive *live = fm_live_of(win);
    live->opener = open;
    live->opener_user = user;
}

int fm_live_get_lists_done(FmWindow *win)
{
    FmLive *live = fm_live_of(win);
    return live != NULL ? live->n_listed : 0;
}

guint64 fm_live_get_drawn(FmWindow *win)
{
    FmLive *live = fm_live_of(win);
    return live != NULL ? live->n_drawn : 0;
}

gint64 fm_live_get_last_run(FmWindow *win, const char **record_path)
{
    FmLive *live = fm_live_of(win);
    if (record_path != NULL)
        *record_path = live != NULL ? live->last_record : NULL;
    return live != NULL ? live->last_run_id : 0;
}
