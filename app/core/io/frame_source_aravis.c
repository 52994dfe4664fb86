/* Frame sources: GenICam cameras through Aravis 0.8. The stream's buffers wrap page-aligned
 * memory of our own pool (registered with the device through the buffer hooks); frames the
 * camera or the link dropped are counted from frame-id gaps, failed buffers and Aravis's
 * underruns; a camera is lost on the device's "control-lost" signal or after a silence well
 * above the frame period. */
#include "app/core/io/frame_source_aravis.h"
#include "app/core/io/frame_source_private.h"

#include <arv.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"

typedef struct {
    fm_frame_source base;
    char *id;
    ArvCamera *camera;
    ArvDevice *device; /* borrowed from camera */
    gulong lost_handler;
    gint control_lost; /* atomic: set from Aravis's heartbeat thread */
    GMutex lock;       /* stream, pool and counters against stats() and stop() */
    ArvStream *stream;
    fm_frame *frames; /* one per pool buffer, the buffer's user data */
    void **memory;
    int n_buffers;
    gsize buffer_size;
    fm_pixfmt format;
    gint running; /* atomic: next() sees a stop() from another thread */
    /* counters */
    guint64 last_raw_id, frames_seen, unwrapped_id;
    guint64 dropped_by_camera, bad_buffers;
    guint64 arv_failures, arv_underruns; /* the stream's own counters at the last look */
    gint64 last_frame_us, lost_after_us;
} arv_source;

#define ARV_SOURCE(s) ((arv_source *)(s))

/* The in-process fake camera is for tests and demos only; looked at on every listing and
 * open, so that a test may set FLUXMAP_FAKE_CAMERA after an earlier listing. */
static void arv_source_init_once(void)
{
    if (g_strcmp0(g_getenv("FLUXMAP_FAKE_CAMERA"), "1") == 0)
        arv_enable_interface("Fake");
}

static fm_pixfmt pixfmt_from_arv(ArvPixelFormat format)
{
    switch (format) {
    case ARV_PIXEL_FORMAT_MONO_8:
        return FM_PIXFMT_MONO8;
    case ARV_PIXEL_FORMAT_MONO_12:
        return FM_PIXFMT_MONO12;
    case ARV_PIXEL_FORMAT_MONO_12_PACKED:
        return FM_PIXFMT_MONO12_PACKED;
    case ARV_PIXEL_FORMAT_MONO_16:
        return FM_PIXFMT_MONO16;
    default:
        return FM_PIXFMT_UNKNOWN;
    }
}

ArvPixelFormat fm_pixfmt_to_arv(fm_pixfmt format)
{
    switch (format) {
    case FM_PIXFMT_MONO8:
        return ARV_PIXEL_FORMAT_MONO_8;
    case FM_PIXFMT_MONO12:
        return ARV_PIXEL_FORMAT_MONO_12;
    case FM_PIXFMT_MONO12_PACKED:
        return ARV_PIXEL_FORMAT_MONO_12_PACKED;
    case FM_PIXFMT_MONO16:
        return ARV_PIXEL_FORMAT_MONO_16;
    default:
        return 0;
    }
}

/* The camera's name for its current format, or the PFNC value in hex where its XML has none
 * (a format written to the register directly). */
static char *current_format_name(arv_source *s)
{
    GError *err = NULL;
    ArvPixelFormat value = arv_camera_get_pixel_format(s->camera, &err);
    g_clear_error(&err);
    fm_pixfmt f = pixfmt_from_arv(value);
    if (f != FM_PIXFMT_UNKNOWN)
        return g_strdup(fm_pixfmt_name(f));
    const char *name = arv_camera_get_pixel_format_as_string(s->camera, &err);
    if (name && !err)
        return g_strdup(name);
    g_clear_error(&err);
    return g_strdup_printf("0x%08x", (unsigned)value);
}

static gboolean take_arv_error(arv_source *s, GError *err, GError **error, const char *what)
{
    if (!err)
        return TRUE;
    g_set_error(error, FM_ERROR, FM_ERROR_DEVICE, _("%s: %s: %s"), s->id, what, err->message);
    g_error_free(err);
    return FALSE;
}

static void read_setting(arv_source *s, const char *what, fm_source_setting *out)
{
    GError *err = NULL;
    memset(out, 0, sizeof *out);
    gboolean available = FALSE;
    if (strcmp(what, "exposure") == 0)
        available = arv_camera_is_exposure_time_available(s->camera, &err);
    else if (strcmp(what, "gain") == 0)
        available = arv_camera_is_gain_available(s->camera, &err);
    else
        available = arv_camera_is_frame_rate_available(s->camera, &err);
    if (err || !available) {
        g_clear_error(&err);
        return;
    }
    if (strcmp(what, "exposure") == 0) {
        out->value = arv_camera_get_exposure_time(s->camera, &err);
        if (!err)
            arv_camera_get_exposure_time_bounds(s->camera, &out->min, &out->max, &err);
    } else if (strcmp(what, "gain") == 0) {
        out->value = arv_camera_get_gain(s->camera, &err);
        if (!err)
            arv_camera_get_gain_bounds(s->camera, &out->min, &out->max, &err);
    } else {
        out->value = arv_camera_get_frame_rate(s->camera, &err);
        if (!err)
            arv_camera_get_frame_rate_bounds(s->camera, &out->min, &out->max, &err);
    }
    out->available = err == NULL;
    g_clear_error(&err);
}

static gboolean arv_get_settings(fm_frame_source *source, fm_source_settings *out, GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    GError *err = NULL;
    const char *vendor = arv_camera_get_vendor_name(s->camera, NULL);
    const char *model = arv_camera_get_model_name(s->camera, NULL);
    out->description =
        g_strdup_printf("%s (%s %s)", s->id, vendor ? vendor : "?", model ? model : "?");
    out->is_camera = TRUE;
    out->n_frames = -1;
    arv_camera_get_region(s->camera, &out->x_offset, &out->y_offset, &out->width, &out->height,
                          &err);
    if (!err)
        arv_camera_get_sensor_size(s->camera, &out->sensor_width, &out->sensor_height, &err);
    if (!take_arv_error(s, err, error, _("reading the region")))
        return FALSE;
    ArvPixelFormat current = arv_camera_get_pixel_format(s->camera, &err);
    g_clear_error(&err);
    out->format = pixfmt_from_arv(current);
    out->format_name = current_format_name(s);
    guint n = 0;
    gint64 *values = arv_camera_dup_available_pixel_formats(s->camera, &n, &err);
    const char **names =
        values ? arv_camera_dup_available_pixel_formats_as_strings(s->camera, &n, NULL) : NULL;
    g_clear_error(&err);
    GPtrArray *other = g_ptr_array_new();
    for (guint i = 0; values && i < n; i++) {
        fm_pixfmt f = pixfmt_from_arv((ArvPixelFormat)values[i]);
        if (f != FM_PIXFMT_UNKNOWN)
            out->formats_offered |= 1u << f;
        else if (names && names[i])
            g_ptr_array_add(other, g_strdup(names[i]));
    }
    /* a format set through the register alone is offered too: the camera sends it */
    if (out->format != FM_PIXFMT_UNKNOWN)
        out->formats_offered |= 1u << out->format;
    g_ptr_array_add(other, NULL);
    out->other_formats = (char **)g_ptr_array_free(other, FALSE);
    g_free(values);
    g_free(names);
    read_setting(s, "exposure", &out->exposure_us);
    read_setting(s, "gain", &out->gain_db);
    read_setting(s, "rate", &out->frame_rate_hz);
    return TRUE;
}

/* Refuses a value outside [min, max] with the range in the message. */
static gboolean check_range(arv_source *s, const char *what, const char *unit,
                            const fm_source_setting *setting, double value, GError **error)
{
    if (!setting->available) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: the camera has no %s setting"),
                    s->id, what);
        return FALSE;
    }
    if (!isfinite(value) || value < setting->min || value > setting->max) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: %s %g %s is outside the camera's range %g to %g %s"), s->id, what, value,
                    unit, setting->min, setting->max, unit);
        return FALSE;
    }
    return TRUE;
}

static gboolean arv_set_exposure(fm_frame_source *source, double value, GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    fm_source_setting setting;
    read_setting(s, "exposure", &setting);
    if (!check_range(s, _("exposure"), "us", &setting, value, error))
        return FALSE;
    GError *err = NULL;
    arv_camera_set_exposure_time(s->camera, value, &err);
    return take_arv_error(s, err, error, _("setting the exposure"));
}

static gboolean arv_set_gain(fm_frame_source *source, double value, GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    fm_source_setting setting;
    read_setting(s, "gain", &setting);
    if (!check_range(s, _("gain"), "dB", &setting, value, error))
        return FALSE;
    GError *err = NULL;
    arv_camera_set_gain(s->camera, value, &err);
    return take_arv_error(s, err, error, _("setting the gain"));
}

static gboolean arv_set_rate(fm_frame_source *source, double value, GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    fm_source_setting setting;
    read_setting(s, "rate", &setting);
    if (!check_range(s, _("frame rate"), _("frames/s"), &setting, value, error))
        return FALSE;
    GError *err = NULL;
    arv_camera_set_frame_rate(s->camera, value, &err);
    return take_arv_error(s, err, error, _("setting the frame rate"));
}

static gboolean not_while_running(arv_source *s, const char *what, GError **error)
{
    if (!g_atomic_int_get(&s->running))
        return TRUE;
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: the %s is set before start"), s->id,
                what);
    return FALSE;
}

static gboolean arv_set_region(fm_frame_source *source, int x, int y, int width, int height,
                               GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    if (!not_while_running(s, _("region"), error))
        return FALSE;
    GError *err = NULL;
    int sw = 0, sh = 0, wmin = 1, wmax = 0, hmin = 1, hmax = 0;
    arv_camera_get_sensor_size(s->camera, &sw, &sh, &err);
    if (!err)
        arv_camera_get_width_bounds(s->camera, &wmin, &wmax, &err);
    if (!err)
        arv_camera_get_height_bounds(s->camera, &hmin, &hmax, &err);
    if (!take_arv_error(s, err, error, _("reading the region's range")))
        return FALSE;
    wmax = MIN(wmax, sw);
    hmax = MIN(hmax, sh);
    if (width < wmin || width > wmax || height < hmin || height > hmax || x < 0 || y < 0 ||
        x + width > sw || y + height > sh) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: region %dx%d at (%d, %d) does not fit the camera: width %d to %d, "
                      "height %d to %d, inside the %dx%d sensor"),
                    s->id, width, height, x, y, wmin, wmax, hmin, hmax, sw, sh);
        return FALSE;
    }
    arv_camera_set_region(s->camera, x, y, width, height, &err);
    if (!take_arv_error(s, err, error, _("setting the region")))
        return FALSE;
    int rx, ry, rw, rh;
    arv_camera_get_region(s->camera, &rx, &ry, &rw, &rh, &err);
    if (!take_arv_error(s, err, error, _("reading the region")))
        return FALSE;
    if (rx != x || ry != y || rw != width || rh != height) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: region %dx%d at (%d, %d) asked, the camera took %dx%d at (%d, %d) "
                      "(its steps: width %d, height %d)"),
                    s->id, width, height, x, y, rw, rh, rx, ry,
                    arv_camera_get_width_increment(s->camera, NULL),
                    arv_camera_get_height_increment(s->camera, NULL));
        return FALSE;
    }
    return TRUE;
}

static gboolean arv_set_format(fm_frame_source *source, fm_pixfmt format, GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    if (!not_while_running(s, _("pixel format"), error))
        return FALSE;
    fm_source_settings now = {0};
    if (!arv_get_settings(source, &now, error))
        return FALSE;
    gboolean offered = format != FM_PIXFMT_UNKNOWN && (now.formats_offered & (1u << format));
    if (!offered) {
        GString *list = g_string_new(NULL);
        for (int f = 0; f < FM_PIXFMT_UNKNOWN; f++)
            if (now.formats_offered & (1u << f))
                g_string_append_printf(list, "%s%s", list->len ? ", " : "",
                                       fm_pixfmt_name((fm_pixfmt)f));
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: pixel format %s is not offered by the camera (it offers %s)"), s->id,
                    fm_pixfmt_name(format), list->len ? list->str : _("none Fluxmap reads"));
        g_string_free(list, TRUE);
        fm_source_settings_clear(&now);
        return FALSE;
    }
    fm_source_settings_clear(&now);
    GError *err = NULL;
    arv_camera_set_pixel_format(s->camera, fm_pixfmt_to_arv(format), &err);
    return take_arv_error(s, err, error, _("setting the pixel format"));
}

static void on_control_lost(ArvDevice *device, gpointer user)
{
    g_atomic_int_set(&ARV_SOURCE(user)->control_lost, 1);
}

static void free_pool(arv_source *s)
{
    for (int i = 0; s->memory && i < s->n_buffers; i++)
        fm_frame_source_pool_free(&s->base, s->memory[i], s->buffer_size);
    g_clear_pointer(&s->memory, g_free);
    g_clear_pointer(&s->frames, g_free);
    s->n_buffers = 0;
}

static gboolean arv_start(fm_frame_source *source, int n_buffers, GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    if (g_atomic_int_get(&s->running))
        return TRUE;
    GError *err = NULL;
    int x, y, width, height;
    arv_camera_get_region(s->camera, &x, &y, &width, &height, &err);
    ArvPixelFormat arv_format = err ? 0 : arv_camera_get_pixel_format(s->camera, &err);
    if (!take_arv_error(s, err, error, _("reading the region and format")))
        return FALSE;
    s->format = pixfmt_from_arv(arv_format);
    if (s->format == FM_PIXFMT_UNKNOWN) {
        g_autofree char *name = current_format_name(s);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: pixel format %s is not one Fluxmap reads (it reads %s); choose one "
                      "of those in the camera's settings"),
                    s->id, name, fm_pixfmt_names_read());
        return FALSE;
    }
    fm_source_setting rate, exposure;
    read_setting(s, "rate", &rate);
    read_setting(s, "exposure", &exposure);
    double fps = rate.available && rate.value > 0 ? rate.value : 10.0;
    if (n_buffers <= 0)
        n_buffers = CLAMP((int)ceil(fps), 8, 128);
    guint payload = arv_camera_get_payload(s->camera, &err);
    if (!take_arv_error(s, err, error, _("reading the payload size")))
        return FALSE;
    s->buffer_size = MAX((gsize)payload, fm_pixfmt_frame_bytes(s->format, width, height));
    if (arv_camera_is_gv_device(s->camera)) {
        arv_camera_gv_auto_packet_size(s->camera, &err); /* best effort: jumbo frames */
        g_clear_error(&err);
    }
    free_pool(s); /* a restart: the last run's frames were released */
    ArvStream *stream = arv_camera_create_stream(s->camera, NULL, NULL, &err);
    if (!stream)
        return take_arv_error(s, err ? err : g_error_new_literal(FM_ERROR, 0, "no stream"), error,
                              _("opening the stream"));
    s->frames = g_new0(fm_frame, n_buffers);
    s->memory = g_new0(void *, n_buffers);
    s->n_buffers = n_buffers;
    for (int i = 0; i < n_buffers; i++) {
        s->memory[i] = fm_frame_source_pool_alloc(source, s->buffer_size, error);
        if (!s->memory[i]) {
            g_object_unref(stream);
            free_pool(s);
            return FALSE;
        }
        fm_frame *f = &s->frames[i];
        /* the ArvBuffer wraps our memory and does not free it */
        ArvBuffer *buffer = arv_buffer_new_full(s->buffer_size, s->memory[i], f, NULL);
        f->opaque = buffer;
        arv_stream_push_buffer(stream, buffer);
    }
    s->frames_seen = s->unwrapped_id = s->last_raw_id = 0;
    s->dropped_by_camera = s->bad_buffers = s->arv_failures = s->arv_underruns = 0;
    g_atomic_int_set(&s->control_lost, 0);
    /* a camera that sends nothing for this long is gone (cables, power, USB resets) */
    double period_us = 1e6 / fps;
    double exposure_us = exposure.available ? exposure.value : 0;
    s->lost_after_us = (gint64)MAX(3e6, 10 * period_us + exposure_us);
    arv_camera_set_acquisition_mode(s->camera, ARV_ACQUISITION_MODE_CONTINUOUS, &err);
    g_clear_error(&err); /* some cameras have only continuous */
    arv_camera_start_acquisition(s->camera, &err);
    if (err) {
        g_object_unref(stream);
        free_pool(s);
        return take_arv_error(s, err, error, _("starting the acquisition"));
    }
    g_mutex_lock(&s->lock);
    s->stream = stream;
    g_atomic_int_set(&s->running, TRUE);
    g_mutex_unlock(&s->lock);
    s->last_frame_us = g_get_monotonic_time();
    return TRUE;
}

/* Frame ids grow by one per frame; GigE Vision 1.x ids are 16 bits and skip 0 on wrapping. */
static void account_frame_id(arv_source *s, guint64 raw)
{
    guint64 step = 1;
    if (s->frames_seen > 0) {
        if (raw > s->last_raw_id)
            step = raw - s->last_raw_id;
        else if (s->last_raw_id <= 0xffff && raw < s->last_raw_id)
            step = (0xffff - s->last_raw_id) + raw; /* wrapped past 65535, no 0 */
        else
            step = 1; /* a camera that restarted its count */
        s->dropped_by_camera += step - 1;
    }
    s->unwrapped_id += step;
    s->last_raw_id = raw;
    s->frames_seen++;
}

static void refresh_arv_counters(arv_source *s)
{
    if (!s->stream)
        return;
    guint64 completed = 0, failures = 0, underruns = 0;
    arv_stream_get_statistics(s->stream, &completed, &failures, &underruns);
    s->arv_failures = failures;
    s->arv_underruns = underruns;
}

static fm_source_status arv_next(fm_frame_source *source, gint64 timeout_us, fm_frame **frame,
                                 GError **error)
{
    arv_source *s = ARV_SOURCE(source);
    g_mutex_lock(&s->lock);
    ArvStream *stream = s->stream ? g_object_ref(s->stream) : NULL;
    g_mutex_unlock(&s->lock);
    if (!stream) {
        if (s->n_buffers > 0)
            return FM_SOURCE_END; /* stopped */
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: not started"), s->id);
        return FM_SOURCE_FAILED;
    }
    gint64 deadline = g_get_monotonic_time() + MAX(timeout_us, 0);
    fm_source_status status = FM_SOURCE_TIMEOUT;
    for (;;) {
        if (!g_atomic_int_get(&s->running)) {
            status = FM_SOURCE_END; /* stop() from another thread */
            break;
        }
        gint64 now = g_get_monotonic_time();
        /* short slices: the lost flag and the silence are looked at while waiting */
        gint64 slice = CLAMP(deadline - now, 0, 20000);
        ArvBuffer *buffer = slice > 0 ? arv_stream_timeout_pop_buffer(stream, (guint64)slice)
                                      : arv_stream_try_pop_buffer(stream);
        now = g_get_monotonic_time();
        if (buffer && !g_atomic_int_get(&s->running)) {
            arv_stream_push_buffer(stream, buffer); /* stopped while it came */
            status = FM_SOURCE_END;
            break;
        }
        if (buffer) {
            fm_frame *f = (fm_frame *)arv_buffer_get_user_data(buffer);
            size_t size = 0;
            const void *data = arv_buffer_get_image_data(buffer, &size);
            int width = arv_buffer_get_image_width(buffer);
            int height = arv_buffer_get_image_height(buffer);
            fm_pixfmt format = pixfmt_from_arv(arv_buffer_get_image_pixel_format(buffer));
            gsize need = fm_pixfmt_frame_bytes(format, width, height);
            /* the fake camera's fill callbacks cannot set the received size (0 then) */
            gboolean complete = arv_buffer_get_status(buffer) == ARV_BUFFER_STATUS_SUCCESS &&
                                (size == 0 || size >= need);
            if (complete && format == FM_PIXFMT_UNKNOWN) {
                g_autofree char *name = current_format_name(s);
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                            _("%s: frames arrive as %s, which Fluxmap does not read (it reads "
                              "%s)"),
                            s->id, name, fm_pixfmt_names_read());
                arv_stream_push_buffer(stream, buffer);
                status = FM_SOURCE_FAILED;
                break;
            }
            if (!complete) {
                s->bad_buffers++;
                arv_stream_push_buffer(stream, buffer);
                continue;
            }
            account_frame_id(s, arv_buffer_get_frame_id(buffer));
            f->id = s->unwrapped_id;
            f->timestamp_ns = (gint64)arv_buffer_get_timestamp(buffer);
            f->width = width;
            f->height = height;
            f->format = format;
            f->data = data;
            f->size = need;
            f->opaque = buffer;
            s->last_frame_us = now;
            *frame = f;
            status = FM_SOURCE_FRAME;
            break;
        }
        if (g_atomic_int_get(&s->control_lost)) {
            g_set_error(error, FM_ERROR, FM_ERROR_DEVICE,
                        _("%s: camera disconnected after %" G_GUINT64_FORMAT " frames"), s->id,
                        s->frames_seen);
            status = FM_SOURCE_LOST;
            break;
        }
        if (now - s->last_frame_us > s->lost_after_us) {
            g_set_error(error, FM_ERROR, FM_ERROR_DEVICE,
                        _("%s: camera stopped sending after %" G_GUINT64_FORMAT
                          " frames (nothing for %.1f s); it was unplugged, switched off or "
                          "stopped answering"),
                        s->id, s->frames_seen, (double)(now - s->last_frame_us) / 1e6);
            status = FM_SOURCE_LOST;
            break;
        }
        if (now >= deadline)
            break;
    }
    g_mutex_lock(&s->lock);
    refresh_arv_counters(s);
    g_mutex_unlock(&s->lock);
    g_object_unref(stream);
    return status;
}

static void arv_release(fm_frame_source *source, fm_frame *frame)
{
    arv_source *s = ARV_SOURCE(source);
    ArvBuffer *buffer = frame->opaque;
    g_mutex_lock(&s->lock);
    if (s->stream && g_atomic_int_get(&s->running))
        arv_stream_push_buffer(s->stream, buffer); /* the stream owns it again */
    else
        g_object_unref(buffer); /* stopped: the stream is gone */
    g_mutex_unlock(&s->lock);
}

static void arv_dropped(fm_frame_source *source, guint64 *by_camera, guint64 *by_link)
{
    arv_source *s = ARV_SOURCE(source);
    g_mutex_lock(&s->lock);
    refresh_arv_counters(s);
    *by_camera = s->dropped_by_camera;
    /* Aravis counts a failed buffer itself; ours only adds short buffers it called complete */
    *by_link = MAX(s->arv_failures, s->bad_buffers) + s->arv_underruns;
    g_mutex_unlock(&s->lock);
}

static void arv_stop(fm_frame_source *source)
{
    arv_source *s = ARV_SOURCE(source);
    /* first, so that a consumer in next() takes no frame that comes while stopping */
    if (!g_atomic_int_compare_and_exchange(&s->running, TRUE, FALSE))
        return;
    GError *err = NULL;
    arv_camera_stop_acquisition(s->camera, &err); /* fails when the camera is gone: fine */
    g_clear_error(&err);
    g_mutex_lock(&s->lock);
    refresh_arv_counters(s);
    ArvStream *stream = s->stream;
    s->stream = NULL;
    g_mutex_unlock(&s->lock);
    /* frames still held by the consumer keep their ArvBuffer; release() unrefs them */
    g_clear_object(&stream);
}

static void arv_destroy(fm_frame_source *source)
{
    arv_source *s = ARV_SOURCE(source);
    free_pool(s);
    if (s->lost_handler)
        g_signal_handler_disconnect(s->device, s->lost_handler);
    g_clear_object(&s->camera);
    g_mutex_clear(&s->lock);
    g_free(s->id);
    g_free(s);
}

static const fm_frame_source_ops arv_ops = {
    .get_settings = arv_get_settings,
    .set_exposure_us = arv_set_exposure,
    .set_gain_db = arv_set_gain,
    .set_frame_rate = arv_set_rate,
    .set_region = arv_set_region,
    .set_format = arv_set_format,
    .start = arv_start,
    .next = arv_next,
    .release = arv_release,
    .dropped = arv_dropped,
    .stop = arv_stop,
    .destroy = arv_destroy,
};

GPtrArray *fm_cameras_list(GError **error)
{
    arv_source_init_once();
    arv_update_device_list();
    GPtrArray *list = g_ptr_array_new_with_free_func((GDestroyNotify)fm_camera_info_free);
    for (unsigned i = 0; i < arv_get_n_devices(); i++) {
        fm_camera_info *info = g_new0(fm_camera_info, 1);
        info->id = g_strdup(arv_get_device_id(i));
        info->vendor = g_strdup(arv_get_device_vendor(i));
        info->model = g_strdup(arv_get_device_model(i));
        info->serial = g_strdup(arv_get_device_serial_nbr(i));
        info->protocol = g_strdup(arv_get_device_protocol(i));
        g_ptr_array_add(list, info);
    }
    return list;
}

fm_frame_source *fm_frame_source_open_camera(const char *id, GError **error)
{
    arv_source_init_once();
    g_autofree char *chosen = g_strdup(id);
    if (!chosen) {
        arv_update_device_list();
        if (arv_get_n_devices() == 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_DEVICE,
                        _("no camera found (GenICam cameras through Aravis; "
                          "FLUXMAP_FAKE_CAMERA=1 adds Aravis's demo camera Fake_1)"));
            return NULL;
        }
        chosen = g_strdup(arv_get_device_id(0));
    }
    GError *err = NULL;
    ArvCamera *camera = arv_camera_new(chosen, &err);
    if (!camera) {
        g_set_error(error, FM_ERROR, FM_ERROR_DEVICE, _("camera %s: %s"), chosen,
                    err ? err->message : _("cannot be opened"));
        g_clear_error(&err);
        return NULL;
    }
    arv_source *s = g_new0(arv_source, 1);
    fm_frame_source_init_base(&s->base, &arv_ops, chosen);
    g_mutex_init(&s->lock);
    s->id = g_strdup(chosen);
    s->camera = camera;
    s->device = arv_camera_get_device(camera);
    s->lost_handler = g_signal_connect(s->device, "control-lost", G_CALLBACK(on_control_lost), s);
    return &s->base;
}

gpointer fm_frame_source_arv_device(fm_frame_source *source)
{
    return source && source->ops == &arv_ops ? ARV_SOURCE(source)->device : NULL;
}
