/* FmLiveParams: a page's map recomputed by itself after a parameter change, when the method is fast
 * on the open dataset: the debounce, the fast-method policy, cancellation and the redraw's time. */
#include "live-params.h"

#include <glib/gi18n.h>

#include "app/core/job.h"
#include "window-private.h"

struct _FmLiveParams {
    FmWindow *win; /* not owned: it owns this object */
    char *page_id;
    fm_live_params_request_fn request;
    fm_live_show_fn show;
    gpointer user;
    /* method id -> double *: its last run's time on the open dataset, as for the whole dataset */
    GHashTable *whole_ms;
    guint timer;
    gint64 last_change_us;
    gint64 first_pending_us; /* the first change the pending computation will take */
    fm_job *job;             /* the live computation in flight (a reference), or NULL */
    gint64 job_start_us;
    double job_expected_ms;
    GdkFrameClock *clock; /* watched for the redraw of the last map shown, or NULL */
    gulong paint_handler;
    gint64 shown_start_us, shown_change_us, shown_us;
    gboolean fire_after_paint; /* a computation waits for the last map's paint */
    fm_live_params_stats stats;
};

/* A map not drawn this long after it went on show (a hidden window does not paint) no longer
 * holds the next computation back. */
#define PAINT_WAIT_MS 100

static gboolean fire(gpointer data);

/* One computation, from its start to its end (the job's user data). */
typedef struct {
    FmLiveParams *live;
    double share;
    gint64 start_us, change_us;
} LiveRun;

static char *data_key(const char *page_id)
{
    return g_strdup_printf("fm-live-params-%s", page_id);
}

static void record_ms(FmLiveParams *live, const char *method_id, double whole_ms)
{
    double *ms = g_new(double, 1);
    *ms = whole_ms;
    g_hash_table_replace(live->whole_ms, g_strdup(method_id), ms);
}

double fm_live_params_last_ms(FmLiveParams *live, const char *method_id)
{
    const double *ms = g_hash_table_lookup(live->whole_ms, method_id);
    return ms != NULL ? *ms : -1.0;
}

/* ---- the redraw ------------------------------------------------------------------------- */

static void stop_watching_paint(FmLiveParams *live)
{
    if (live->clock != NULL) {
        g_signal_handler_disconnect(live->clock, live->paint_handler);
        g_clear_object(&live->clock);
        live->paint_handler = 0;
    }
}

static void painted(FmLiveParams *live)
{
    gint64 now = g_get_monotonic_time();
    live->stats.painted++;
    live->stats.start_to_paint_ms = (now - live->shown_start_us) / 1000.0;
    live->stats.change_to_paint_ms = (now - live->shown_change_us) / 1000.0;
}

static void after_paint(GdkFrameClock *clock, FmLiveParams *live)
{
    (void)clock;
    stop_watching_paint(live);
    painted(live);
    if (live->fire_after_paint) {
        live->fire_after_paint = FALSE;
        if (live->timer != 0)
            g_source_remove(live->timer);
        fire(live);
    }
}

/* The frame after the map went on show is the one that draws it. */
static void watch_paint(FmLiveParams *live, const LiveRun *run)
{
    stop_watching_paint(live);
    live->shown_start_us = run->start_us;
    live->shown_change_us = run->change_us;
    live->shown_us = g_get_monotonic_time();
    GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(live->win));
    if (clock == NULL) { /* not on screen: nothing to wait for */
        painted(live);
        return;
    }
    live->clock = g_object_ref(clock);
    live->paint_handler = g_signal_connect(clock, "after-paint", G_CALLBACK(after_paint), live);
    gdk_frame_clock_request_phase(clock, GDK_FRAME_CLOCK_PHASE_PAINT);
}

/* ---- computations ----------------------------------------------------------------------- */

/* The run's note on show says what that run chose (its fit window): the live map's replaces it.
 * A note the user closed stays closed, and other messages stay. */
static void show_note(FmWindow *win, const char *note)
{
    GtkMessageType type;
    if (fm_window_get_message(win, &type) == NULL || type != GTK_MESSAGE_INFO)
        return;
    if (note != NULL)
        fm_window_show_note(win, note);
    else
        fm_window_hide_message(win);
}

static void drop_job(FmLiveParams *live)
{
    if (live->job != NULL) {
        fm_job_cancel(live->job);
        g_clear_pointer(&live->job, fm_job_unref);
    }
}

static void job_done(fm_job *job, gpointer user)
{
    LiveRun *run = user;
    FmLiveParams *live = run->live;
    FmWindow *win = live->win;
    gboolean current = live->job == job;
    if (current)
        g_clear_pointer(&live->job, fm_job_unref);
    fm_job_state state = fm_job_get_state(job);
    const fm_result *res = fm_job_get_result(job);
    if (win->disposed) {
        /* the window is going: nothing to show */
    } else if (state == FM_JOB_DONE && res != NULL) {
        record_ms(live, res->method_id, res->elapsed_ms / run->share);
        if (current) {
            gint64 t_result = g_get_monotonic_time();
            live->show(res, live->user);
            live->stats.start_to_result_ms = (t_result - run->start_us) / 1000.0;
            live->stats.show_ms = (g_get_monotonic_time() - t_result) / 1000.0;
            live->stats.shown++;
            show_note(win, res->note);
            live->stats.compute_ms = res->elapsed_ms;
            const fm_method *m = fm_job_get_method(job);
            g_autofree char *status = g_strdup_printf(
                _("Live: %s in %.1f ms"), m->title != NULL ? _(m->title) : m->id, res->elapsed_ms);
            fm_window_set_status(win, status);
            watch_paint(live, run);
        } else {
            live->stats.cancelled++; /* finished after a newer one started: stale */
        }
    } else if (state == FM_JOB_CANCELLED) {
        live->stats.cancelled++;
    } else if (current) { /* said where live updates are said, not in the info bar */
        const GError *err = fm_job_get_error(job);
        g_autofree char *status =
            g_strdup_printf(_("Live: %s failed: %s"), fm_job_get_method(job)->id,
                            err != NULL ? err->message : _("unknown error"));
        fm_window_set_status(win, status);
    }
    g_free(run);
    g_object_unref(win); /* the reference taken when the computation started */
}

/* Live computations are not recorded in the catalogue, nor listed among the jobs: a slider
 * dragged over the range would leave fifty runs there. The map goes on show as the current one;
 * the user's Run records what they settle on. */
static void start(FmLiveParams *live, fm_live_params_request *req)
{
    drop_job(live); /* the previous computation answers an older change */
    LiveRun *run = g_new0(LiveRun, 1);
    run->live = live;
    run->share = req->share;
    run->start_us = g_get_monotonic_time();
    run->change_us = live->last_change_us;
    live->job_start_us = run->start_us;
    live->job_expected_ms = fm_live_params_last_ms(live, req->method->id) * req->share;
    live->stats.started++;
    fm_job *job = fm_job_start(req->method, req->dataset, req->params, req->rois, req->backend,
                               NULL, NULL, job_done, run);
    g_object_ref(live->win);
    live->job = job; /* the reference fm_job_start returned: dropped when done or superseded */
}

static gboolean fire(gpointer data)
{
    FmLiveParams *live = data;
    live->timer = 0;
    /* The last map is not drawn yet (the main loop is busy; redraws come after timers and
     * results): wait for its paint, so that a drag shows maps rather than computing over them. */
    gint64 waited_ms = (g_get_monotonic_time() - live->shown_us) / 1000;
    if (live->clock != NULL && waited_ms < PAINT_WAIT_MS) {
        live->fire_after_paint = TRUE;
        live->timer = g_timeout_add((guint)(PAINT_WAIT_MS - waited_ms), fire, live);
        return G_SOURCE_REMOVE;
    }
    live->fire_after_paint = FALSE;
    fm_live_params_request req = {.share = 1.0};
    if (!live->request(&req, live->user))
        return G_SOURCE_REMOVE;
    double whole = fm_live_params_last_ms(live, req.method->id);
    if (req.share <= 0 || req.share > 1)
        req.share = 1;
    if (whole >= 0 && whole * req.share <= FM_LIVE_MAX_MS)
        start(live, &req);
    else
        live->stats.skipped++; /* slow, or never run here: the user's Run decides */
    fm_dataset_unref(req.dataset);
    fm_params_free(req.params);
    return G_SOURCE_REMOVE;
}

void fm_live_params_changed(FmLiveParams *live)
{
    gint64 now = g_get_monotonic_time();
    live->stats.changes++;
    live->last_change_us = now;
    if (live->timer != 0 && live->fire_after_paint)
        return; /* due once the last map is painted, with the values as they are then */
    if (live->timer == 0)
        live->first_pending_us = now;
    else
        g_source_remove(live->timer);
    /* FM_LIVE_DEBOUNCE_MS of quiet after the last change, but no later than FM_LIVE_DRAG_MS after
     * the first one still waiting: a burst (a click, a typed value) is one computation soon after
     * it ends, a drag a steady pace of them */
    gint64 due =
        MIN(now + FM_LIVE_DEBOUNCE_MS * 1000, live->first_pending_us + FM_LIVE_DRAG_MS * 1000);
    /* While a computation runs, the next starts no sooner than it should end: a drag then shows
     * a map every max(FM_LIVE_DRAG_MS, compute) rather than cancelling each before it is done. */
    if (live->job != NULL)
        due = MAX(due, live->job_start_us +
                           MAX((gint64)(live->job_expected_ms * 1250), FM_LIVE_DRAG_MS * 1000));
    gint64 wait_ms = MAX((gint64)1, (due - now + 999) / 1000); /* overdue: at once */
    live->timer = g_timeout_add((guint)wait_ms, fire, live);
}

void fm_live_params_cancel(FmLiveParams *live)
{
    live->fire_after_paint = FALSE;
    if (live->timer != 0) {
        g_source_remove(live->timer);
        live->timer = 0;
    }
    drop_job(live);
}

void fm_live_params_get_stats(FmLiveParams *live, fm_live_params_stats *stats)
{
    *stats = live->stats;
}

/* ---- the window's events ---------------------------------------------------------------- */

/* The user's runs: their time says whether the method is fast on this dataset. */
static void result_shown(FmWindow *win, gpointer job_ptr, FmLiveParams *live)
{
    (void)win;
    fm_job *job = job_ptr;
    const fm_result *res = fm_job_get_ready_result(job);
    if (res == NULL)
        res = fm_job_get_result(job);
    if (res != NULL)
        record_ms(live, res->method_id, res->elapsed_ms);
}

static void dataset_changed(FmWindow *win, FmLiveParams *live)
{
    (void)win;
    fm_live_params_cancel(live);
    g_hash_table_remove_all(live->whole_ms); /* times of the last dataset say nothing here */
}

static void window_destroyed(GtkWidget *widget, FmLiveParams *live)
{
    (void)widget;
    fm_live_params_cancel(live);
    stop_watching_paint(live);
}

static void live_free(gpointer data)
{
    FmLiveParams *live = data;
    g_hash_table_unref(live->whole_ms);
    g_free(live->page_id);
    g_free(live);
}

FmLiveParams *fm_live_params_new(FmWindow *win, const char *page_id,
                                 fm_live_params_request_fn request, fm_live_show_fn show,
                                 gpointer user)
{
    FmLiveParams *live = g_new0(FmLiveParams, 1);
    live->win = win;
    live->page_id = g_strdup(page_id);
    live->request = request;
    live->show = show;
    live->user = user;
    live->whole_ms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    g_signal_connect(win, "result-shown", G_CALLBACK(result_shown), live);
    g_signal_connect(win, "dataset-changed", G_CALLBACK(dataset_changed), live);
    g_signal_connect(win, "destroy", G_CALLBACK(window_destroyed), live);
    g_autofree char *key = data_key(page_id);
    g_object_set_data_full(G_OBJECT(win), key, live, live_free);
    return live;
}

FmLiveParams *fm_live_params_of(FmWindow *win, const char *page_id)
{
    g_autofree char *key = data_key(page_id);
    return g_object_get_data(G_OBJECT(win), key);
}
