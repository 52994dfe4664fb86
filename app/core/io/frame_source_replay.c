/* Frame sources: a file replayed at its frame rate (or as fast as the consumer takes frames).
 * The stack is read with fm_dataset_open into one pool buffer, so a CUDA consumer registers it
 * once; frames point into it and are never copied again. */
#include "app/core/io/frame_source_private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff_record.h"

typedef struct {
    fm_frame_source base;
    char *path;
    fm_dataset *ds; /* until start moves its samples into the pool */
    int width, height, n_frames;
    fm_pixfmt format;
    double frames_per_s; /* < 0: as fast as asked */
    void *pool;
    gsize pool_size, frame_bytes;
    fm_frame *frames;
    gint running; /* atomic: stop() may come from another thread */
    int next_index;
    gint64 start_us;
} replay_source;

#define REPLAY(s) ((replay_source *)(s))

static gboolean replay_get_settings(fm_frame_source *source, fm_source_settings *out,
                                    GError **error)
{
    replay_source *r = REPLAY(source);
    g_autofree char *base = g_path_get_basename(r->path);
    out->description = g_strdup_printf(_("replay %s"), base);
    out->path = g_canonicalize_filename(r->path, NULL);
    out->width = out->sensor_width = r->width;
    out->height = out->sensor_height = r->height;
    out->format = r->format;
    out->format_name = g_strdup(fm_pixfmt_name(r->format));
    out->formats_offered = 1u << r->format;
    out->frame_rate_hz.available = r->frames_per_s > 0;
    out->frame_rate_hz.value = r->frames_per_s > 0 ? r->frames_per_s : 0;
    out->frame_rate_hz.min = 0.001;
    out->frame_rate_hz.max = 1e6;
    out->is_camera = FALSE;
    out->n_frames = r->n_frames;
    return TRUE;
}

static gboolean replay_refuse(fm_frame_source *source, const char *what, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: a replay has no %s setting"),
                source->name, what);
    return FALSE;
}

static gboolean replay_set_exposure(fm_frame_source *source, double value, GError **error)
{
    return replay_refuse(source, _("exposure"), error);
}

static gboolean replay_set_gain(fm_frame_source *source, double value, GError **error)
{
    return replay_refuse(source, _("gain"), error);
}

static gboolean replay_set_rate(fm_frame_source *source, double value, GError **error)
{
    replay_source *r = REPLAY(source);
    if (!isfinite(value) || value == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: frame rate %g: give frames/s > 0, or < 0 for as fast as possible"),
                    source->name, value);
        return FALSE;
    }
    /* keep the frames delivered so far on the old schedule, the rest on the new one */
    gint64 now = g_get_monotonic_time();
    r->frames_per_s = value;
    if (value > 0)
        r->start_us = now - (gint64)(r->next_index * 1e6 / value);
    return TRUE;
}

static gboolean replay_set_region(fm_frame_source *source, int x, int y, int width, int height,
                                  GError **error)
{
    return replay_refuse(source, _("region"), error);
}

static gboolean replay_set_format(fm_frame_source *source, fm_pixfmt format, GError **error)
{
    if (format == REPLAY(source)->format)
        return TRUE;
    return replay_refuse(source, _("pixel format"), error);
}

static gboolean replay_start(fm_frame_source *source, int n_buffers, GError **error)
{
    replay_source *r = REPLAY(source);
    if (g_atomic_int_get(&r->running))
        return TRUE;
    if (!r->pool) {
        r->pool_size = r->frame_bytes * (gsize)r->n_frames;
        r->pool = fm_frame_source_pool_alloc(source, r->pool_size, error);
        if (!r->pool)
            return FALSE;
        memcpy(r->pool, r->ds->data, r->pool_size);
        g_clear_pointer(&r->ds, fm_dataset_unref);
        r->frames = g_new0(fm_frame, r->n_frames);
    }
    r->next_index = 0;
    g_atomic_int_set(&r->running, TRUE);
    r->start_us = g_get_monotonic_time();
    return TRUE;
}

static fm_source_status replay_next(fm_frame_source *source, gint64 timeout_us, fm_frame **frame,
                                    GError **error)
{
    replay_source *r = REPLAY(source);
    if (!g_atomic_int_get(&r->running)) {
        if (r->pool)
            return FM_SOURCE_END; /* stopped */
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: not started"), source->name);
        return FM_SOURCE_FAILED;
    }
    if (r->next_index >= r->n_frames)
        return FM_SOURCE_END;
    int k = r->next_index;
    gint64 due = r->frames_per_s > 0 ? r->start_us + (gint64)(k * 1e6 / r->frames_per_s) : 0;
    gint64 now = g_get_monotonic_time();
    if (due > now) {
        if (due - now > timeout_us) {
            if (timeout_us > 0)
                g_usleep((gulong)timeout_us);
            return FM_SOURCE_TIMEOUT;
        }
        g_usleep((gulong)(due - now));
    }
    fm_frame *f = &r->frames[k];
    f->id = (guint64)k;
    f->timestamp_ns = r->frames_per_s > 0 ? (gint64)(k * 1e9 / r->frames_per_s)
                                          : (g_get_monotonic_time() - r->start_us) * 1000;
    f->width = r->width;
    f->height = r->height;
    f->format = r->format;
    f->data = (const guint8 *)r->pool + r->frame_bytes * (gsize)k;
    f->size = r->frame_bytes;
    f->opaque = NULL;
    r->next_index++;
    *frame = f;
    return FM_SOURCE_FRAME;
}

static void replay_release(fm_frame_source *source, fm_frame *frame)
{
    /* frames live in the one pool buffer until the source is freed */
}

static void replay_dropped(fm_frame_source *source, guint64 *by_camera, guint64 *by_link)
{
    *by_camera = *by_link = 0;
}

static void replay_stop(fm_frame_source *source)
{
    g_atomic_int_set(&REPLAY(source)->running, FALSE);
}

static void replay_destroy(fm_frame_source *source)
{
    replay_source *r = REPLAY(source);
    fm_frame_source_pool_free(source, r->pool, r->pool_size);
    g_clear_pointer(&r->ds, fm_dataset_unref);
    g_free(r->frames);
    g_free(r->path);
    g_free(r);
}

static const fm_frame_source_ops replay_ops = {
    .get_settings = replay_get_settings,
    .set_exposure_us = replay_set_exposure,
    .set_gain_db = replay_set_gain,
    .set_frame_rate = replay_set_rate,
    .set_region = replay_set_region,
    .set_format = replay_set_format,
    .start = replay_start,
    .next = replay_next,
    .release = replay_release,
    .dropped = replay_dropped,
    .stop = replay_stop,
    .destroy = replay_destroy,
};

/* The file's own rate: a frame axis in seconds or milliseconds, or a rate in the metadata. */
static double file_rate(const fm_dataset *ds)
{
    static const char *const keys[] = {"frame_rate_hz", "frame_rate", "fps"};
    for (gsize i = 0; i < G_N_ELEMENTS(keys); i++) {
        const char *v = fm_dataset_get_meta(ds, keys[i]);
        double rate = v ? g_ascii_strtod(v, NULL) : 0;
        if (rate > 0 && isfinite(rate))
            return rate;
    }
    /* a live recording keeps its rate in the TIFF description (fm_tiff_record_describe) */
    g_autofree char *recorded =
        fm_tiff_description_value(fm_dataset_get_meta(ds, "description"), "frame_rate_hz");
    double rate = recorded ? g_ascii_strtod(recorded, NULL) : 0;
    if (rate > 0 && isfinite(rate))
        return rate;
    if (ds->n_dims >= 3 && ds->dims[2].unit && ds->dims[2].spacing > 0) {
        if (strcmp(ds->dims[2].unit, "s") == 0)
            return 1.0 / ds->dims[2].spacing;
        if (strcmp(ds->dims[2].unit, "ms") == 0)
            return 1e3 / ds->dims[2].spacing;
    }
    return 10.0;
}

fm_frame_source *fm_frame_source_open_replay(const char *path, double frames_per_s, GError **error)
{
    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, error);
    if (!ds)
        return NULL;
    fm_pixfmt format = FM_PIXFMT_UNKNOWN;
    if (ds->type == FM_PIXEL_U8)
        format = FM_PIXFMT_MONO8;
    else if (ds->type == FM_PIXEL_U16)
        format = ds->bits_per_sample > 0 && ds->bits_per_sample <= 12 ? FM_PIXFMT_MONO12
                                                                      : FM_PIXFMT_MONO16;
    if (format == FM_PIXFMT_UNKNOWN || ds->n_dims < 2) {
        fm_error_bad_input(error, path,
                           _("%s samples cannot be replayed as camera frames (8- or 16-bit "
                             "image stacks can)"),
                           fm_pixel_type_name(ds->type));
        return NULL;
    }
    if (fm_dataset_frames(ds) < 1 || fm_dataset_width(ds) < 1 || fm_dataset_height(ds) < 1) {
        fm_error_bad_input(error, path, _("no frames to replay"));
        return NULL;
    }
    replay_source *r = g_new0(replay_source, 1);
    g_autofree char *base = g_path_get_basename(path);
    fm_frame_source_init_base(&r->base, &replay_ops, base);
    r->path = g_strdup(path);
    r->width = fm_dataset_width(ds);
    r->height = fm_dataset_height(ds);
    r->n_frames = fm_dataset_frames(ds);
    r->format = format;
    r->frame_bytes = fm_pixfmt_frame_bytes(format, r->width, r->height);
    r->frames_per_s = frames_per_s == 0 ? file_rate(ds) : frames_per_s;
    r->ds = g_steal_pointer(&ds);
    return &r->base;
}
