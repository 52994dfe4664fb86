/* Stack playback, the paper's real-time display: a timer steps through the frames and a worker
 * computes the page's live map (fm_page_live, FmFamilyPage) on one frame at a
 * time. When compute is slower than the timer, frames are skipped rather than queued, so the
 * display never lags behind. */
#include "window-private.h"

#include "app/core/error.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#define PLAY_INTERVAL_MS 50 /* 20 frames/s target, the paper's video rate range */

typedef struct {
    fm_dataset *frame; /* one-frame copy */
    fm_params *params;
    const fm_method *method;
    fm_backend backend;
    const char *map; /* the map shown and plotted */
    int index;
} FrameJob;

static void frame_job_free(gpointer data)
{
    FrameJob *job = data;
    fm_dataset_unref(job->frame);
    fm_params_free(job->params);
    g_free(job);
}

/* A one-frame x,y dataset holding frame f, so the method sees a single image. */
fm_dataset *fm_window_frame_copy(const fm_dataset *ds, int f)
{
    gsize sizes[2] = {(gsize)fm_dataset_width(ds), (gsize)fm_dataset_height(ds)};
    const char *names[] = {"x", "y"};
    fm_dataset *one = fm_dataset_new(ds->type, 2, sizes, names);
    memcpy(one->data, fm_dataset_frame(ds, f), fm_dataset_n_bytes(one));
    one->bits_per_sample = ds->bits_per_sample;
    one->source_path = g_strdup(ds->source_path);
    return one;
}

static void compute_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    FrameJob *job = data;
    fm_job_context ctx = {.cancellable = cancel, .backend = job->backend};
    GError *error = NULL;
    fm_result *res = fm_method_run(job->method, job->frame, job->params, NULL, &ctx, &error);
    if (res == NULL)
        g_task_return_error(task, error);
    else
        g_task_return_pointer(task, res, (GDestroyNotify)fm_result_free);
}

static double plotted_value(FmWindow *win, fm_map *sfi)
{
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    if (rois != NULL && rois->len > 0)
        return fm_roi_statistics(rois->pdata[0], sfi->data, sfi->width, sfi->height).mean;
    fm_map_stats st = fm_map_statistics(sfi);
    return st.mean;
}

static void start_compute(FmWindow *win, int frame);

static void compute_done(GObject *source, GAsyncResult *res, gpointer user)
{
    FmWindow *win = FM_WINDOW(source);
    FrameJob *job = g_task_get_task_data(G_TASK(res));
    const char *map = job->map;
    g_autoptr(GError) error = NULL;
    fm_result *result = g_task_propagate_pointer(G_TASK(res), &error);
    win->play_busy = FALSE;
    if (win->disposed) {
        g_clear_pointer(&result, fm_result_free);
        return;
    }
    if (result == NULL) {
        if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
            !g_error_matches(error, FM_ERROR, FM_ERROR_CANCELLED)) {
            g_autofree char *msg = g_strdup_printf(_("Playback stopped at frame %d: %s"),
                                                   job->index + 1, error->message);
            fm_window_show_message(win, GTK_MESSAGE_ERROR, msg);
            g_action_group_change_action_state(G_ACTION_GROUP(win), "play",
                                               g_variant_new_boolean(FALSE));
        }
        return;
    }
    double ms = result->elapsed_ms;
    g_autofree char *device = g_strdup(result->device);
    fm_window_set_result(win, result, TRUE);
    fm_window_set_frame(win, job->index);
    fm_map *sfi = fm_result_get_map(result, map);
    if (sfi != NULL)
        fm_window_select_map(win, map);
    if (sfi != NULL && fm_window_playback_running(win) && win->play_count == 0 &&
        gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(win->auto_range_toggle))) {
        /* the first frame's automatic range holds while playing: colours that mean the same
         * flow in every frame (a range rescaled per frame flickers and hides changes) */
        double vmin = 0, vmax = 0;
        fm_map_view_get_range(win->map_view, &vmin, &vmax);
        fm_map_view_set_range(win->map_view, vmin, vmax);
    }
    if (sfi != NULL && fm_window_playback_running(win)) {
        /* A wrap to the start begins a new time course. */
        if (job->index <= win->plot_last_frame)
            fm_plot_view_clear(win->plot_view);
        fm_plot_view_append(win->plot_view, job->index, plotted_value(win, sfi));
        fm_plot_view_set_cursor(win->plot_view, job->index);
        win->plot_last_frame = job->index;
        win->play_count++;
        double seconds = (g_get_monotonic_time() - win->play_started_us) / 1e6;
        g_autofree char *status = g_strdup_printf(
            _("Playing frame %d / %d · %.1f ms per frame on %s · %.1f frames/s shown"),
            job->index + 1, fm_dataset_frames(win->dataset), ms, device != NULL ? device : "?",
            seconds > 0 ? win->play_count / seconds : 0.0);
        gtk_label_set_text(GTK_LABEL(win->status_label), status);
    }
    if (device != NULL) {
        g_autofree char *backend = g_strdup_printf(_("Backend: %s"), device);
        gtk_label_set_text(GTK_LABEL(win->backend_label), backend);
    }
    if (win->play_pending >= 0) {
        int next = win->play_pending;
        win->play_pending = -1;
        start_compute(win, next);
    }
}

static void start_compute(FmWindow *win, int frame)
{
    if (win->dataset == NULL)
        return;
    FmFamilyPage *page = fm_window_active_page(win);
    fm_page_live live = {0};
    g_autoptr(GError) error = NULL;
    if (page == NULL || !fm_family_page_get_live(page, &live, &error)) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR,
                               error ? error->message : _("Nothing to play on this page."));
        fm_window_playback_stop(win);
        return;
    }
    FrameJob *job = g_new0(FrameJob, 1);
    job->frame = fm_window_frame_copy(win->dataset, frame);
    job->params = live.params;
    job->method = live.method;
    job->backend = live.backend;
    job->map = live.map;
    job->index = frame;
    if (win->play_cancellable == NULL)
        win->play_cancellable = g_cancellable_new();
    win->play_busy = TRUE;
    g_autoptr(GTask) task = g_task_new(win, win->play_cancellable, compute_done, NULL);
    g_task_set_task_data(task, job, frame_job_free);
    g_task_run_in_thread(task, compute_thread);
}

static gboolean play_tick(gpointer user)
{
    FmWindow *win = user;
    if (win->dataset == NULL) {
        win->play_timer = 0;
        return G_SOURCE_REMOVE;
    }
    win->play_pos = (win->play_pos + 1) % fm_dataset_frames(win->dataset);
    if (!win->play_busy) /* never more than one frame in flight: the others are skipped */
        start_compute(win, win->play_pos);
    return G_SOURCE_CONTINUE;
}

void fm_window_playback_set_labels(FmWindow *win)
{
    FmFamilyPage *page = fm_window_active_page(win);
    fm_page_live live = {0};
    if (page == NULL || !fm_family_page_get_live(page, &live, NULL))
        return;
    fm_params_free(live.params);
    GPtrArray *rois = fm_map_view_get_rois(win->map_view);
    /* where the mean is taken goes on the x axis, which has the width for it */
    fm_plot_view_set_labels(win->plot_view,
                            rois != NULL && rois->len > 0 ? _("frame · mean over ROI 1")
                                                          : _("frame · mean over the whole frame"),
                            live.y_label);
    fm_plot_view_set_placeholder(
        win->plot_view,
        _("Press Play (space): the mean over ROI 1, or the frame, follows the frames"));
}

void fm_window_playback_start(FmWindow *win)
{
    if (win->play_timer != 0 || win->dataset == NULL || fm_dataset_frames(win->dataset) < 2)
        return;
    fm_plot_view_clear(win->plot_view);
    fm_window_playback_set_labels(win);
    win->plot_last_frame = G_MAXINT;
    win->play_count = 0;
    win->play_started_us = g_get_monotonic_time();
    win->play_pos = win->frame - 1;
    win->play_timer = g_timeout_add(PLAY_INTERVAL_MS, play_tick, win);
    play_tick(win);
}

void fm_window_playback_stop(FmWindow *win)
{
    if (win->play_timer != 0) {
        g_source_remove(win->play_timer);
        win->play_timer = 0;
        GAction *action = g_action_map_lookup_action(G_ACTION_MAP(win), "play");
        if (action != NULL)
            g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_boolean(FALSE));
        gtk_image_set_from_icon_name(GTK_IMAGE(win->play_image), "media-playback-start-symbolic",
                                     GTK_ICON_SIZE_BUTTON);
    }
    fm_plot_view_set_cursor(win->plot_view, NAN);
    if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(win->auto_range_toggle)))
        fm_map_view_set_auto_range(win->map_view, 1.0, 99.0); /* held while playing */
}

gboolean fm_window_playback_running(FmWindow *win)
{
    return win->play_timer != 0;
}

void fm_window_playback_compute(FmWindow *win, int frame)
{
    if (win->play_busy)
        win->play_pending = frame; /* only the latest request matters */
    else
        start_compute(win, frame);
}

void fm_window_playback_dispose(FmWindow *win)
{
    if (win->play_timer != 0) {
        g_source_remove(win->play_timer);
        win->play_timer = 0;
    }
    if (win->play_cancellable != NULL)
        g_cancellable_cancel(win->play_cancellable);
    g_clear_object(&win->play_cancellable);
}
