/* The live session: an acquisition thread takes frames from the source and hands each to the
 * recorder (every frame, in order) and to the processing thread (every frame while recording;
 * otherwise only the newest waits, older ones are skipped and counted); the processing thread
 * runs the method's per-frame step, keeps the maps and the ROI time course and passes the
 * newest result to the display thread when the display is free. A frame's buffer goes back to
 * the source's pool when both the recorder and the processing are done with it, so a consumer
 * that cannot keep up holds the pool and the camera drops frames (counted by the source). */
#include "app/core/live.h"
#include "app/core/live_private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/export.h"
#include "app/core/io/tiff_record.h"

/* A frame shared by the recorder and the processing. */
typedef struct {
    fm_frame *frame;
    gint refs;
    double t_s; /* arrival, seconds since start */
} held_frame;

typedef enum { REC_FRAME, REC_OPEN, REC_CLOSE, REC_QUIT } rec_kind;

typedef struct {
    rec_kind kind;
    held_frame *held;
    fm_tiff_record *record; /* REC_OPEN */
    gboolean whole_run;     /* REC_OPEN: opened before the first frame */
} rec_item;

struct fm_live_session {
    fm_frame_source *source;
    const fm_method *method;
    const fm_live_ops *ops;
    fm_params *params;
    GPtrArray *rois; /* copies, or NULL */
    fm_backend backend;
    guint64 max_frames;
    double max_seconds;
    char *maps_dir;
    fm_live_save save_maps;
    gboolean catalogue;
    void (*display)(const fm_live_update *update, gpointer user);
    gpointer display_user;
    double display_max_hz;
    fm_source_settings settings;
    fm_live_step *step;
    /* the catalogue's record of the run, begun at start so that a process that dies mid-run
     * leaves it (interrupted, with its recording) rather than nothing */
    fm_catalogue *cat;
    gint64 run_id;
    gint64 start_us, started_unix;

    GThread *acquisition, *recorder, *processing, *displayer;
    GMutex lock; /* everything below */
    GCond cond;
    gint stop_requested; /* atomic */
    gboolean acquisition_done, finished;
    fm_source_status end_status; /* how the acquisition ended */
    char *end_message;           /* the source's words for a lost camera or a failure */
    gboolean recording;          /* frames go to the recorder */
    GQueue to_process;           /* held_frame* */
    GAsyncQueue *to_record;      /* rec_item* */
    GPtrArray *recordings;       /* fm_live_recording*, closed ones */
    char *record_error, *process_error;
    double last_frame_t_s;
    fm_live_stats counts;
    fm_live_rate camera_rate, processed_rate, displayed_rate;

    /* processing thread only */
    fm_live_maps *maps;
    fm_live_roi_series *series;
    gint64 next_display_us;

    /* the display's copy of the newest result (under lock while handed over) */
    gboolean display_busy, display_pending, display_quit;
    GPtrArray *display_maps; /* fm_map*, reused */
    fm_live_output display_output;
    fm_live_update display_update;
    double **display_series;
    GArray *display_times;
};

static void held_unref(fm_live_session *s, held_frame *held)
{
    if (g_atomic_int_dec_and_test(&held->refs)) {
        fm_frame_source_release(s->source, held->frame);
        g_free(held);
    }
}

static void request_stop(fm_live_session *s)
{
    g_atomic_int_set(&s->stop_requested, 1);
}

static double seconds_since_start(const fm_live_session *s, gint64 now_us)
{
    return (double)(now_us - s->start_us) / G_USEC_PER_SEC;
}

/* ---- acquisition ---- */

/* A file replayed as fast as it is processed has no camera to keep up with: its frames wait
 * for the processing (two in flight) instead of the newest one winning, so every frame is
 * processed and the maps equal the offline run's. */
static gboolean paced_by_processing(const fm_live_session *s)
{
    return !s->settings.is_camera && !s->settings.frame_rate_hz.available;
}

static void wait_for_room(fm_live_session *s)
{
    g_mutex_lock(&s->lock);
    while (s->to_process.length >= 2 && !g_atomic_int_get(&s->stop_requested))
        g_cond_wait_until(&s->cond, &s->lock, g_get_monotonic_time() + 100000);
    g_mutex_unlock(&s->lock);
}

static gpointer acquisition_main(gpointer data)
{
    fm_live_session *s = data;
    fm_source_status status = FM_SOURCE_END;
    char *message = NULL;
    guint64 n = 0;
    while (!g_atomic_int_get(&s->stop_requested)) {
        gint64 now = g_get_monotonic_time();
        if (s->max_seconds > 0 && seconds_since_start(s, now) >= s->max_seconds)
            break;
        if (paced_by_processing(s))
            wait_for_room(s);
        fm_frame *frame = NULL;
        GError *error = NULL;
        status = fm_frame_source_next(s->source, 100000, &frame, &error);
        if (status == FM_SOURCE_TIMEOUT)
            continue;
        if (status != FM_SOURCE_FRAME) {
            if (error)
                message = g_strdup(error->message);
            g_clear_error(&error);
            break;
        }
        now = g_get_monotonic_time();
        held_frame *held = g_new0(held_frame, 1);
        held->frame = frame;
        held->refs = 1; /* ours, until handed on */
        held->t_s = seconds_since_start(s, now);
        g_mutex_lock(&s->lock);
        s->counts.camera_frames++;
        s->last_frame_t_s = held->t_s;
        fm_live_rate_add(&s->camera_rate, now);
        if (s->recording) {
            rec_item *item = g_new0(rec_item, 1);
            item->kind = REC_FRAME;
            item->held = held;
            g_atomic_int_inc(&held->refs);
            g_async_queue_push(s->to_record, item);
        }
        g_atomic_int_inc(&held->refs);
        g_queue_push_tail(&s->to_process, held);
        /* without a recording the newest frame wins: older ones waiting are skipped */
        while (!s->recording && !paced_by_processing(s) && s->to_process.length > 1) {
            held_unref(s, g_queue_pop_head(&s->to_process));
            s->counts.skipped_processing++;
        }
        g_cond_broadcast(&s->cond);
        g_mutex_unlock(&s->lock);
        held_unref(s, held);
        if (s->max_frames > 0 && ++n >= s->max_frames) {
            status = FM_SOURCE_END;
            break;
        }
    }
    if (g_atomic_int_get(&s->stop_requested) && status == FM_SOURCE_TIMEOUT)
        status = FM_SOURCE_END;
    g_mutex_lock(&s->lock);
    s->end_status =
        status == FM_SOURCE_FRAME || status == FM_SOURCE_TIMEOUT ? FM_SOURCE_END : status;
    s->end_message = message;
    s->acquisition_done = TRUE;
    s->finished = TRUE;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    rec_item *quit = g_new0(rec_item, 1);
    quit->kind = REC_QUIT;
    g_async_queue_push(s->to_record, quit);
    return NULL;
}

/* ---- recorder ---- */

static void close_recording(fm_live_session *s, fm_tiff_record *record, gboolean whole_run)
{
    if (!record)
        return;
    fm_live_recording *done = g_new0(fm_live_recording, 1);
    done->path = g_canonicalize_filename(fm_tiff_record_path(record), NULL);
    done->frames = fm_tiff_record_pages(record);
    done->whole_run = whole_run;
    fm_tiff_record_close(record, NULL);
    g_mutex_lock(&s->lock);
    if (done->frames > 0)
        g_ptr_array_add(s->recordings, done);
    else
        fm_live_recording_free(done);
    g_mutex_unlock(&s->lock);
}

static gpointer recorder_main(gpointer data)
{
    fm_live_session *s = data;
    fm_tiff_record *record = NULL;
    gboolean whole_run = FALSE, failed = FALSE;
    for (;;) {
        rec_item *item = g_async_queue_pop(s->to_record);
        rec_kind kind = item->kind;
        if (kind == REC_FRAME) {
            GError *error = NULL;
            if (record && !failed) {
                if (fm_tiff_record_append_frame(record, item->held->frame, &error)) {
                    g_mutex_lock(&s->lock);
                    s->counts.recorded++;
                    g_mutex_unlock(&s->lock);
                } else {
                    /* a recording must hold every frame: stop rather than leave a gap */
                    g_mutex_lock(&s->lock);
                    if (!s->record_error)
                        s->record_error = g_strdup(error->message);
                    g_mutex_unlock(&s->lock);
                    g_clear_error(&error);
                    failed = TRUE;
                    whole_run = FALSE;
                    request_stop(s);
                }
            }
            held_unref(s, item->held);
        } else if (kind == REC_OPEN) {
            close_recording(s, record, whole_run);
            record = item->record;
            whole_run = item->whole_run;
            failed = FALSE;
        } else {
            close_recording(s, record, whole_run);
            record = NULL;
        }
        g_free(item);
        if (kind == REC_QUIT)
            break;
    }
    return NULL;
}

/* ---- display ---- */

static gpointer display_main(gpointer data)
{
    fm_live_session *s = data;
    g_mutex_lock(&s->lock);
    for (;;) {
        while (!s->display_pending && !s->display_quit)
            g_cond_wait(&s->cond, &s->lock);
        if (!s->display_pending)
            break;
        s->display_pending = FALSE;
        g_mutex_unlock(&s->lock);
        s->display(&s->display_update, s->display_user);
        g_mutex_lock(&s->lock);
        s->display_busy = FALSE;
        s->counts.displayed++;
        fm_live_rate_add(&s->displayed_rate, g_get_monotonic_time());
    }
    g_mutex_unlock(&s->lock);
    return NULL;
}

/* The newest result to the display, copied (the step's maps change with its next frame), when
 * it is due and free; a frame the busy display cannot take is counted. */
static void offer_display(fm_live_session *s, const fm_live_output *out, guint64 frame_id,
                          double t_s)
{
    gint64 now = g_get_monotonic_time();
    if (!s->display || now < s->next_display_us)
        return;
    g_mutex_lock(&s->lock);
    gboolean busy = s->display_busy;
    if (busy)
        s->counts.skipped_display++;
    g_mutex_unlock(&s->lock);
    if (busy)
        return;
    /* the display thread is idle: its buffers are ours until display_busy is set */
    for (int i = 0; i < out->n_maps; i++) {
        const fm_map *src = out->maps[i];
        fm_map *copy = i < (int)s->display_maps->len ? s->display_maps->pdata[i] : NULL;
        if (!copy || fm_map_n_values(copy) != fm_map_n_values(src)) {
            copy = fm_map_new_uninit(src->name, src->unit, src->width, src->height, 1);
            if (i < (int)s->display_maps->len) {
                fm_map_free(s->display_maps->pdata[i]);
                s->display_maps->pdata[i] = copy;
            } else {
                g_ptr_array_add(s->display_maps, copy);
            }
        }
        memcpy(copy->data, src->data, fm_map_n_values(src) * sizeof(float));
    }
    s->display_output = *out;
    s->display_output.maps = (const fm_map *const *)s->display_maps->pdata;
    int n_rois = fm_live_roi_series_n_rois(s->series);
    int n_points = fm_live_roi_series_n_points(s->series);
    for (int r = 0; r < n_rois; r++) {
        s->display_series[r] = g_renew(double, s->display_series[r], MAX(n_points, 1));
        memcpy(s->display_series[r], fm_live_roi_series_values(s->series, r),
               (gsize)n_points * sizeof(double));
    }
    g_array_set_size(s->display_times, (guint)n_points);
    if (n_points)
        memcpy(s->display_times->data, fm_live_roi_series_times(s->series),
               (gsize)n_points * sizeof(double));
    fm_live_update *u = &s->display_update;
    u->frame_id = frame_id;
    u->t_s = t_s;
    u->output = &s->display_output;
    u->roi_series = (const double *const *)s->display_series;
    u->t_points = (const double *)(gpointer)s->display_times->data;
    u->n_rois = n_rois;
    u->n_points = n_points;
    g_mutex_lock(&s->lock);
    u->n_processed = s->counts.processed;
    s->display_busy = s->display_pending = TRUE;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    /* on a schedule of 1/display_max_hz rather than that long after this frame, so that frames
     * arriving at the display's own rate with some jitter are all shown */
    gint64 period = (gint64)(G_USEC_PER_SEC / s->display_max_hz);
    s->next_display_us = MAX(s->next_display_us + period, now - period / 2);
}

/* ---- processing ---- */

/* One frame's output into the counts, the maps, the ROI time course and the display (in the
 * order the frames came: a pipelined step returns them so). FALSE: the maps cannot go on. */
static gboolean take_output(fm_live_session *s, const fm_live_output *out, guint64 frame_id,
                            double t_s)
{
    GError *error = NULL;
    g_mutex_lock(&s->lock);
    gint64 done_us = g_get_monotonic_time();
    if (s->counts.processed++ == 0)
        s->counts.first_processed_s = seconds_since_start(s, done_us);
    s->counts.last_processed_s = seconds_since_start(s, done_us);
    fm_live_rate_add(&s->processed_rate, done_us);
    g_mutex_unlock(&s->lock);
    if (!out->ready || out->n_maps < 1)
        return TRUE;
    if (!fm_live_maps_add(s->maps, out, &error)) {
        /* the maps on disk cannot go on (disk full ...): stop as a recording does */
        g_mutex_lock(&s->lock);
        s->process_error = g_strdup_printf(_("writing the maps: %s"), error->message);
        g_mutex_unlock(&s->lock);
        g_clear_error(&error);
        request_stop(s);
        return FALSE;
    }
    const fm_map *primary = out->maps[CLAMP(out->primary, 0, out->n_maps - 1)];
    if (!s->series)
        s->series = fm_live_roi_series_new(s->rois, primary->width, primary->height);
    fm_live_roi_series_add(s->series, primary->data, t_s, frame_id);
    offer_display(s, out, frame_id, t_s);
    return TRUE;
}

static void step_failed(fm_live_session *s, GError *error)
{
    g_mutex_lock(&s->lock);
    if (!s->process_error)
        s->process_error = g_strdup(error ? error->message : _("unknown error"));
    g_mutex_unlock(&s->lock);
    request_stop(s);
}

/* Pipelined steps (ops->flush): the frame an output is of, taken off the frames in flight
 * (oldest first); NULL when the output is of none (nothing finished yet). */
static held_frame *take_in_flight(GQueue *in_flight, const fm_frame *of_frame)
{
    for (GList *l = in_flight->head; of_frame && l; l = l->next) {
        held_frame *held = l->data;
        if (held->frame == of_frame) {
            g_queue_delete_link(in_flight, l);
            return held;
        }
    }
    return NULL;
}

/* Pipelined steps: the oldest frame in flight finished and taken (*failed: only waited for, so
 * that no device copy reads a buffer given back). FALSE when the step holds none or failed. */
static gboolean flush_one(fm_live_session *s, GQueue *in_flight, gboolean *failed)
{
    fm_live_output out = {0};
    GError *error = NULL;
    if (!s->ops->flush(s->step, &out, &error)) {
        if (!*failed)
            step_failed(s, error);
        g_clear_error(&error);
        *failed = TRUE;
        return FALSE;
    }
    held_frame *held = take_in_flight(in_flight, out.of_frame);
    if (!held) { /* the step holds none of them (a frame it failed on) */
        for (held_frame *h; (h = g_queue_pop_head(in_flight));)
            held_unref(s, h);
        return FALSE;
    }
    guint64 frame_id = held->frame->id;
    double t_s = held->t_s;
    held_unref(s, held);
    if (!*failed && !take_output(s, &out, frame_id, t_s))
        *failed = TRUE;
    return TRUE;
}

/* A pipelined step with frames in flight and no frame coming for this long finishes one
 * instead of waiting: a slow camera's frame is shown without waiting for the next. */
#define IDLE_FLUSH_US 2000

static gpointer processing_main(gpointer data)
{
    fm_live_session *s = data;
    gboolean failed = FALSE;
    /* Pipelined steps: frames given to the step whose outputs have not come back; each keeps its
     * reference, so its buffer goes back to the pool only after the device has read it. */
    GQueue in_flight = G_QUEUE_INIT;
    for (;;) {
        gboolean idle = FALSE;
        g_mutex_lock(&s->lock);
        while (s->to_process.length == 0 && !s->acquisition_done && !idle) {
            if (in_flight.length == 0)
                g_cond_wait(&s->cond, &s->lock);
            else
                idle = !g_cond_wait_until(&s->cond, &s->lock,
                                          g_get_monotonic_time() + IDLE_FLUSH_US) &&
                       s->to_process.length == 0;
        }
        held_frame *held = idle ? NULL : g_queue_pop_head(&s->to_process);
        g_cond_broadcast(&s->cond); /* room for a source paced by us (wait_for_room) */
        g_mutex_unlock(&s->lock);
        if (idle) {
            flush_one(s, &in_flight, &failed);
            continue;
        }
        if (!held)
            break;
        if (failed) {
            held_unref(s, held);
            continue;
        }
        fm_live_output out = {0};
        GError *error = NULL;
        gboolean ok = s->ops->frame(s->step, held->frame, &out, &error);
        if (s->ops->flush) { /* the output, if any, is of an earlier frame */
            g_queue_push_tail(&in_flight, held);
            held = ok ? take_in_flight(&in_flight, out.of_frame) : NULL;
        }
        guint64 frame_id = held ? held->frame->id : 0;
        double t_s = held ? held->t_s : 0;
        if (held)
            held_unref(s, held);
        if (!ok) {
            step_failed(s, error);
            g_clear_error(&error);
            failed = TRUE;
            continue;
        }
        if (held && !take_output(s, &out, frame_id, t_s))
            failed = TRUE;
    }
    /* Pipelined steps: the outputs still in flight, in order, so that no frame's is lost. */
    while (s->ops->flush && in_flight.length > 0 && flush_one(s, &in_flight, &failed))
        ;
    for (held_frame *held; (held = g_queue_pop_head(&in_flight));) /* after a failed flush */
        held_unref(s, held);
    return NULL;
}

/* ---- start ---- */

static void session_free(fm_live_session *s)
{
    if (s->step)
        s->ops->end(s->step);
    fm_source_settings_clear(&s->settings);
    if (s->params)
        fm_params_free(s->params);
    if (s->rois)
        g_ptr_array_unref(s->rois);
    g_free(s->maps_dir);
    if (s->cat)
        fm_catalogue_close(s->cat);
    g_mutex_clear(&s->lock);
    g_cond_clear(&s->cond);
    if (s->to_record)
        g_async_queue_unref(s->to_record);
    if (s->recordings)
        g_ptr_array_unref(s->recordings);
    g_free(s->record_error);
    g_free(s->process_error);
    g_free(s->end_message);
    fm_live_rate_clear(&s->camera_rate);
    fm_live_rate_clear(&s->processed_rate);
    fm_live_rate_clear(&s->displayed_rate);
    fm_live_maps_free(s->maps);
    if (s->display_series)
        for (int r = 0; s->rois && r < (int)s->rois->len; r++)
            g_free(s->display_series[r]);
    g_free(s->display_series);
    if (s->display_maps)
        g_ptr_array_unref(s->display_maps);
    if (s->display_times)
        g_array_unref(s->display_times);
    fm_live_roi_series_free(s->series);
    g_free(s);
}

static fm_tiff_record *open_recording(fm_live_session *s, const char *path, GError **error)
{
    const fm_source_settings *st = &s->settings;
    g_autofree char *description = fm_tiff_record_describe(
        st->description, st->format, st->frame_rate_hz.available ? st->frame_rate_hz.value : 0,
        st->exposure_us.available ? st->exposure_us.value : 0,
        st->gain_db.available ? st->gain_db.value : NAN);
    return fm_tiff_record_open(path, st->width, st->height, fm_tiff_record_frame_type(st->format),
                               description, error);
}

static void push_open(fm_live_session *s, fm_tiff_record *record, gboolean whole_run)
{
    rec_item *item = g_new0(rec_item, 1);
    item->kind = REC_OPEN;
    item->record = record;
    item->whole_run = whole_run;
    g_async_queue_push(s->to_record, item);
}

/* "live from Fake_1 (Aravis Fake)" or "replay of scan.raw": the first line of the run's note. */
static char *source_line(const fm_live_session *s)
{
    g_autofree char *base = s->settings.path ? g_path_get_basename(s->settings.path) : NULL;
    return base ? g_strconcat(FM_LIVE_NOTE_REPLAY, base, NULL)
                : g_strconcat(FM_LIVE_NOTE_CAMERA,
                              s->settings.description ? s->settings.description : "?", NULL);
}

/* The run in the catalogue as running, before any frame: the recording's path as its dataset,
 * else the replayed file's (the frames are that file's); its source in the note already. */
static gboolean begin_catalogue_run(fm_live_session *s, const char *record_path, GError **error)
{
    g_autofree char *dir = fm_catalogue_default_dir();
    s->cat = fm_catalogue_open(dir, error);
    if (!s->cat)
        return FALSE;
    g_autofree char *params_json = fm_params_to_json(s->params);
    g_autofree char *recording = record_path        ? g_canonicalize_filename(record_path, NULL)
                                 : s->settings.path ? g_strdup(s->settings.path)
                                                    : NULL;
    g_autofree char *source = source_line(s);
    s->run_id =
        fm_catalogue_begin_live_run(s->cat, s->method->id, params_json, s->rois, recording,
                                    fm_tiff_record_frame_type(s->settings.format), source, error);
    return s->run_id > 0;
}

/* Where the maps go as they come: the run's folder, else the catalogue's folder for the run
 * (so that a GUI run's maps never sit in memory and need no copy at the end), else nowhere. */
static gboolean start_maps(fm_live_session *s, GError **error)
{
    g_autofree char *dir = s->maps_dir     ? g_strdup(s->maps_dir)
                           : s->run_id > 0 ? fm_catalogue_live_run_dir(s->cat, s->run_id)
                                           : NULL;
    /* the most frames the maps will have: classic TIFF or BigTIFF as the offline run chooses */
    guint64 expected = s->max_frames;
    if (s->settings.n_frames > 0 && (expected == 0 || (guint64)s->settings.n_frames < expected))
        expected = (guint64)s->settings.n_frames;
    s->maps = fm_live_maps_new(s->save_maps, dir, s->method->id, expected);
    (void)error;
    return TRUE;
}

fm_live_session *fm_live_start(fm_frame_source *source, const fm_live_request *request,
                               GError **error)
{
    const fm_method *method = request->method;
    if (!method || !method->live) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s has no live path (methods that run live: those 'fluxmap-cli methods' "
                      "marks live)"),
                    method ? method->id : "(none)");
        return NULL;
    }
    fm_live_session *s = g_new0(fm_live_session, 1);
    g_mutex_init(&s->lock);
    g_cond_init(&s->cond);
    s->method = method;
    s->ops = method->live;
    s->params =
        request->params ? fm_params_copy(request->params) : fm_method_default_params(method);
    if (request->rois) {
        s->rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
        for (guint i = 0; i < request->rois->len; i++)
            g_ptr_array_add(s->rois, fm_roi_copy(request->rois->pdata[i]));
    }
    s->backend = request->backend;
    s->max_frames = request->max_frames;
    s->max_seconds = request->max_seconds;
    s->maps_dir = g_strdup(request->maps_dir);
    s->save_maps = request->save_maps;
    s->catalogue = request->catalogue;
    s->display = request->display;
    s->display_user = request->display_user;
    s->display_max_hz = request->display_max_hz > 0 ? request->display_max_hz : 30;
    s->to_record = g_async_queue_new();
    s->recordings = g_ptr_array_new_with_free_func((GDestroyNotify)fm_live_recording_free);
    fm_live_rate_init(&s->camera_rate);
    fm_live_rate_init(&s->processed_rate);
    fm_live_rate_init(&s->displayed_rate);
    s->display_maps = g_ptr_array_new_with_free_func((GDestroyNotify)fm_map_free);
    s->display_series = g_new0(double *, s->rois ? MAX(s->rois->len, 1) : 1);
    s->display_times = g_array_new(FALSE, FALSE, sizeof(double));

    if (!fm_frame_source_get_settings(source, &s->settings, error))
        goto fail;
    if (s->settings.format == FM_PIXFMT_UNKNOWN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: pixel format %s is not one Fluxmap reads (%s); choose another"),
                    s->settings.description,
                    s->settings.format_name ? s->settings.format_name : _("unknown"),
                    "Mono8, Mono12, Mono12Packed, Mono16");
        goto fail;
    }
    s->step = s->ops->begin(method, s->params, s->settings.width, s->settings.height,
                            s->settings.format, s->backend, error);
    if (!s->step)
        goto fail;
    if (s->ops->register_buffer)
        fm_frame_source_set_buffer_hooks(source, s->ops->register_buffer, s->ops->unregister_buffer,
                                         s->step);
    if (s->catalogue && !begin_catalogue_run(s, request->record_path, error))
        goto fail;
    if (!start_maps(s, error))
        goto fail;
    if (request->record_path) {
        fm_tiff_record *record = open_recording(s, request->record_path, error);
        if (!record)
            goto fail;
        push_open(s, record, TRUE);
        s->recording = TRUE;
    }
    if (!fm_frame_source_start(source, 0, error)) {
        rec_item *quit = g_new0(rec_item, 1);
        quit->kind = REC_QUIT;
        g_async_queue_push(s->to_record, quit);
        recorder_main(s); /* closes (and removes) the empty recording */
        goto fail;
    }
    s->source = source;
    s->start_us = g_get_monotonic_time();
    s->started_unix = g_get_real_time() / G_USEC_PER_SEC;
    s->recorder = g_thread_new("fm-live-record", recorder_main, s);
    s->processing = g_thread_new("fm-live-process", processing_main, s);
    if (s->display)
        s->displayer = g_thread_new("fm-live-display", display_main, s);
    s->acquisition = g_thread_new("fm-live-acquire", acquisition_main, s);
    return s;
fail:
    if (request->record_path && s->recording)
        g_unlink(request->record_path);
    if (s->run_id > 0) /* a run that never started is not one */
        fm_catalogue_forget_live_run(s->cat, s->run_id, NULL);
    if (s->step && s->ops->register_buffer) /* the source stays the caller's, the step goes */
        fm_frame_source_set_buffer_hooks(source, NULL, NULL, NULL);
    session_free(s);
    return NULL;
}

/* ---- while running ---- */

char *fm_live_note_source(const char *note)
{
    if (!note || !(g_str_has_prefix(note, FM_LIVE_NOTE_CAMERA) ||
                   g_str_has_prefix(note, FM_LIVE_NOTE_REPLAY)))
        return NULL;
    const char *end = strchr(note, '\n');
    return end ? g_strndup(note, end - note) : g_strdup(note);
}

void fm_live_get_stats(fm_live_session *s, fm_live_stats *out)
{
    fm_source_stats source;
    fm_frame_source_stats(s->source, &source);
    gint64 now = g_get_monotonic_time();
    g_mutex_lock(&s->lock);
    *out = s->counts;
    out->camera_fps = fm_live_rate_per_s(&s->camera_rate, now);
    out->processed_fps = fm_live_rate_per_s(&s->processed_rate, now);
    out->displayed_fps = fm_live_rate_per_s(&s->displayed_rate, now);
    g_mutex_unlock(&s->lock);
    out->dropped_by_camera = source.dropped_by_camera;
    out->dropped_by_link = source.dropped_by_link;
}

gboolean fm_live_set_recording(fm_live_session *s, const char *path, GError **error)
{
    fm_tiff_record *record = NULL;
    if (path && !(record = open_recording(s, path, error)))
        return FALSE;
    g_mutex_lock(&s->lock);
    if (s->acquisition_done) {
        g_mutex_unlock(&s->lock);
        fm_tiff_record_close(record, NULL);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("the live run has ended"));
        return FALSE;
    }
    /* under the lock the acquisition takes to route a frame: no frame falls between */
    if (record) {
        push_open(s, record, FALSE);
    } else if (s->recording) {
        rec_item *close = g_new0(rec_item, 1);
        close->kind = REC_CLOSE;
        g_async_queue_push(s->to_record, close);
    }
    s->recording = record != NULL;
    g_mutex_unlock(&s->lock);
    return TRUE;
}

gboolean fm_live_finished(fm_live_session *s)
{
    g_mutex_lock(&s->lock);
    gboolean finished = s->finished;
    g_mutex_unlock(&s->lock);
    return finished;
}

/* ---- stop ---- */

void fm_live_recording_free(fm_live_recording *recording)
{
    if (!recording)
        return;
    g_free(recording->path);
    g_free(recording);
}

void fm_live_summary_free(fm_live_summary *summary)
{
    if (!summary)
        return;
    g_free(summary->message);
    g_free(summary->record_path);
    g_strfreev(summary->map_paths);
    g_free(summary);
}

/* What the user is told about how the run ended; NULL when it ended as asked. */
static char *end_message(fm_live_session *s, const fm_live_stats *st, double seconds)
{
    GPtrArray *parts = g_ptr_array_new_with_free_func(g_free);
    guint64 recorded_frames = 0;
    for (guint i = 0; i < s->recordings->len; i++)
        recorded_frames += ((fm_live_recording *)s->recordings->pdata[i])->frames;
    if (s->end_status == FM_SOURCE_LOST || s->end_status == FM_SOURCE_FAILED) {
        const char *what = s->end_message ? s->end_message : _("the camera stopped");
        if (s->recordings->len)
            g_ptr_array_add(parts, g_strdup_printf(_("%s; the recording (%" G_GUINT64_FORMAT
                                                     " frames) is kept"),
                                                   what, recorded_frames));
        else
            g_ptr_array_add(parts, g_strdup(what));
    }
    if (s->record_error)
        g_ptr_array_add(parts, g_strdup_printf(_("recording stopped: %s; the %" G_GUINT64_FORMAT
                                                 " frames before are kept"),
                                               s->record_error, st->recorded));
    if (s->process_error)
        g_ptr_array_add(parts, g_strdup_printf(_("processing stopped: %s"), s->process_error));
    guint64 dropped = st->dropped_by_camera + st->dropped_by_link;
    if (dropped > 0 && seconds > 0) {
        double camera = s->settings.frame_rate_hz.available && s->settings.frame_rate_hz.value > 0
                            ? s->settings.frame_rate_hz.value
                            : (double)(st->camera_frames + dropped) / seconds;
        double processed = (double)st->processed / seconds;
        /* frames the camera took that never reached Fluxmap: missing ids, or buffers the link
         * lost or had no free pool buffer for (the consumers held them all) */
        g_autofree char *lost =
            st->dropped_by_link == 0
                ? g_strdup_printf(_("%" G_GUINT64_FORMAT " frames dropped by the camera"), dropped)
                : g_strdup_printf(_("%" G_GUINT64_FORMAT " frames dropped (%" G_GUINT64_FORMAT
                                    " by the camera, %" G_GUINT64_FORMAT
                                    " by the link or for want of a free buffer)"),
                                  dropped, st->dropped_by_camera, st->dropped_by_link);
        if (processed < 0.95 * camera)
            g_ptr_array_add(parts, g_strdup_printf(_("processing %.0f frames/s could not follow "
                                                     "the camera's %.0f frames/s: %s"),
                                                   processed, camera, lost));
        else if (st->recorded > 0)
            g_ptr_array_add(parts, g_strdup_printf(_("recording to disk could not follow the "
                                                     "camera's %.0f frames/s: %s"),
                                                   camera, lost));
        else
            g_ptr_array_add(parts, g_strdup(lost));
    }
    if (parts->len == 0) {
        g_ptr_array_unref(parts);
        return NULL;
    }
    g_ptr_array_add(parts, NULL);
    char *text = g_strjoinv("\n", (char **)parts->pdata);
    g_ptr_array_unref(parts);
    return text;
}

/* The run's note names where the frames came from (fm_live_note_source). A replay without a
 * recording of the whole run has the replayed file as its dataset, hashed at completion as a
 * recording is: it joins the recordings as the one covering the run (after the summary took
 * its recording path, so it is no recording of this run's). */
static void note_source(fm_live_session *s, fm_result *result)
{
    g_autofree char *line = source_line(s);
    char *note = result->note ? g_strdup_printf("%s\n%s", line, result->note) : g_strdup(line);
    g_free(result->note);
    result->note = note;
    if (!s->settings.path)
        return;
    for (guint i = 0; i < s->recordings->len; i++)
        if (((fm_live_recording *)s->recordings->pdata[i])->whole_run)
            return;
    fm_live_recording *replayed = g_new0(fm_live_recording, 1);
    replayed->path = g_strdup(s->settings.path);
    replayed->frames = s->settings.n_frames > 0 ? (guint64)s->settings.n_frames : 0;
    replayed->width = s->settings.width;
    replayed->height = s->settings.height;
    replayed->type = fm_tiff_record_frame_type(s->settings.format);
    replayed->whole_run = TRUE;
    g_ptr_array_add(s->recordings, replayed);
}

fm_live_summary *fm_live_stop(fm_live_session *s, GError **error)
{
    request_stop(s);
    g_thread_join(s->acquisition);
    g_thread_join(s->processing);
    g_thread_join(s->recorder);
    if (s->displayer) {
        g_mutex_lock(&s->lock);
        s->display_quit = TRUE;
        g_cond_broadcast(&s->cond);
        g_mutex_unlock(&s->lock);
        g_thread_join(s->displayer);
    }
    double seconds = MAX(s->last_frame_t_s, 1e-9);
    fm_live_summary *summary = g_new0(fm_live_summary, 1);
    fm_live_get_stats(s, &summary->stats);
    /* every buffer is back: the pool (and the step's registrations) can go */
    fm_frame_source_free(g_steal_pointer(&s->source));

    g_autoptr(fm_result) result = fm_result_new(s->method->id);
    result->params_json = fm_params_to_json(s->params);
    result->elapsed_ms = seconds * 1e3;
    s->ops->describe(s->step, &result->backend, &result->device, &result->note);
    /* the maps on disk completed while the step (which owns the last frame's maps) lives */
    GError *local = NULL;
    g_autoptr(GPtrArray) files =
        g_ptr_array_new_with_free_func((GDestroyNotify)fm_live_map_file_free);
    gboolean ok = fm_live_maps_finish(s->maps, files, &local);
    summary->end = s->end_status == FM_SOURCE_LOST     ? FM_LIVE_END_SOURCE_LOST
                   : s->end_status == FM_SOURCE_FAILED ? FM_LIVE_END_SOURCE_FAILED
                   : s->record_error                   ? FM_LIVE_END_RECORD_FAILED
                   : s->process_error                  ? FM_LIVE_END_PROCESS_FAILED
                                                       : FM_LIVE_END_ASKED;
    summary->message = end_message(s, &summary->stats, seconds);
    if (summary->message) {
        char *note = result->note ? g_strdup_printf("%s\n%s", summary->message, result->note)
                                  : g_strdup(summary->message);
        g_free(result->note);
        result->note = note;
    }
    for (guint i = 0; i < s->recordings->len; i++) {
        fm_live_recording *rec = s->recordings->pdata[i];
        rec->width = s->settings.width;
        rec->height = s->settings.height;
        rec->type = fm_tiff_record_frame_type(s->settings.format);
    }
    if (s->recordings->len)
        summary->record_path =
            g_strdup(((fm_live_recording *)s->recordings->pdata[s->recordings->len - 1])->path);

    g_autofree char *csv = NULL;
    if (ok && s->maps_dir && s->series && fm_live_roi_series_n_rois(s->series) > 0) {
        g_autofree char *path = g_build_filename(s->maps_dir, "roi_time_course.csv", NULL);
        csv = g_canonicalize_filename(path, NULL);
        ok = fm_live_roi_series_write_csv(s->series, s->rois, csv, &local);
    }
    if (s->run_id > 0) {
        gboolean any = files->len || s->recordings->len;
        note_source(s, result);
        if (ok && any)
            ok = fm_catalogue_complete_live_run(s->cat, s->run_id, s->recordings, result, files,
                                                csv, &local);
        if (ok && any)
            summary->maps_run_id = summary->recording_run_id = s->run_id;
        else if (ok) /* nothing came: nothing to list */
            fm_catalogue_forget_live_run(s->cat, s->run_id, NULL);
        else /* what there is could not be recorded: the run says why, its recording listed */
            fm_catalogue_abort_run(s->cat, s->run_id, FM_RUN_FAILED, local->message, NULL);
    }
    GPtrArray *paths = g_ptr_array_new();
    for (guint i = 0; s->maps_dir && i < files->len; i++)
        g_ptr_array_add(paths, g_strdup(((fm_live_map_file *)files->pdata[i])->path));
    g_ptr_array_add(paths, NULL);
    summary->map_paths = (char **)g_ptr_array_free(paths, FALSE);
    session_free(s);
    if (!ok) {
        /* the recording is complete on disk whatever failed after it */
        if (!summary->record_path && summary->map_paths[0] == NULL) {
            g_propagate_error(error, local);
            fm_live_summary_free(summary);
            return NULL;
        }
        char *message = summary->message
                            ? g_strdup_printf("%s\n%s", summary->message, local->message)
                            : g_strdup(local->message);
        g_free(summary->message);
        summary->message = message;
        g_error_free(local);
    }
    return summary;
}
