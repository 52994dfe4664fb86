/* Aravis's fake camera fed with Fluxmap's frames (see fake_camera_feed.h). The fill callback
 * runs on the fake stream's thread, once per frame the camera sends. */
#include "tests/io/fake_camera_feed.h"

#include <arv.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/frame_source_aravis.h"

struct fm_fake_camera_feed {
    ArvDevice *device;
    ArvFakeCamera *camera;
    guint8 *packed; /* n_frames frames in the camera's format */
    gsize frame_bytes;
    int n_frames;
    GMutex lock;
    guint64 sent;
    guint64 disappear_at; /* G_MAXUINT64: never */
    gboolean control_lost, gone;
    gint released; /* atomic: the feed is being freed, a held thread goes on */
};

/* Packs n uint16 samples into the camera's format, as the camera would send them. */
static void pack_frame(const guint16 *in, gsize n, fm_pixfmt format, guint8 *out)
{
    switch (format) {
    case FM_PIXFMT_MONO8:
        for (gsize i = 0; i < n; i++)
            out[i] = (guint8)(in[i] & 0xff);
        break;
    case FM_PIXFMT_MONO12:
    case FM_PIXFMT_MONO16:
        for (gsize i = 0; i < n; i++) {
            guint16 v = format == FM_PIXFMT_MONO12 ? in[i] & 0x0fff : in[i];
            out[2 * i] = (guint8)(v & 0xff); /* little-endian on the wire */
            out[2 * i + 1] = (guint8)(v >> 8);
        }
        break;
    case FM_PIXFMT_MONO12_PACKED:
        /* GigE Vision: a[11:4], b[3:0] << 4 | a[3:0], b[11:4] */
        for (gsize i = 0; i < n; i += 2) {
            guint16 a = in[i] & 0x0fff, b = i + 1 < n ? in[i + 1] & 0x0fff : 0;
            guint8 *o = out + i / 2 * 3;
            o[0] = (guint8)(a >> 4);
            o[1] = (guint8)(((b & 0x0f) << 4) | (a & 0x0f));
            if (i + 1 < n)
                o[2] = (guint8)(b >> 4);
        }
        break;
    default:
        break;
    }
}

/* Holds the stream thread like a camera that no longer sends: while the acquisition runs (the
 * source's stop ends it), until the feed is freed, or for a minute at most. */
static void hold_thread(fm_fake_camera_feed *feed)
{
    for (int i = 0; i < 60000 && !g_atomic_int_get(&feed->released); i++) {
        if (arv_fake_camera_get_acquisition_status(feed->camera) == 0)
            break;
        g_usleep(1000);
    }
}

static void fill(ArvBuffer *buffer, void *user, guint32 exposure_us, guint32 gain,
                 ArvPixelFormat format)
{
    fm_fake_camera_feed *feed = user;
    g_mutex_lock(&feed->lock);
    gboolean gone = feed->gone || feed->sent >= feed->disappear_at;
    gboolean emit = gone && !feed->gone && feed->control_lost;
    guint64 k = feed->sent;
    if (gone)
        feed->gone = TRUE;
    else
        feed->sent++;
    g_mutex_unlock(&feed->lock);
    if (emit)
        g_signal_emit_by_name(feed->device, "control-lost");
    if (gone) {
        hold_thread(feed);
        return;
    }
    size_t payload = arv_fake_camera_get_payload(feed->camera);
    void *data = (void *)arv_buffer_get_data(buffer, NULL);
    memcpy(data, feed->packed + (k % (guint64)feed->n_frames) * feed->frame_bytes,
           MIN(payload, feed->frame_bytes));
}

/* Sends nothing: the fill once the feed is gone and the source still streams. */
static void fill_nothing(ArvBuffer *buffer, void *user, guint32 exposure_us, guint32 gain,
                         ArvPixelFormat format)
{
}

fm_fake_camera_feed *fm_fake_camera_feed_open(const guint16 *frames, int n_frames, int width,
                                              int height, fm_pixfmt format, double frames_per_s,
                                              fm_frame_source **source, GError **error)
{
    *source = NULL;
    if (n_frames < 1 || width < 1 || height < 1 || format == FM_PIXFMT_UNKNOWN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "fake camera feed: bad frames");
        return NULL;
    }
    if (g_strcmp0(g_getenv("FLUXMAP_FAKE_CAMERA"), "1") != 0)
        g_setenv("FLUXMAP_FAKE_CAMERA", "1", TRUE);
    fm_frame_source *src = fm_frame_source_open_camera("Fake_1", error);
    if (!src)
        return NULL;
    ArvDevice *device = fm_frame_source_arv_device(src);
    if (!device || !ARV_IS_FAKE_DEVICE(device)) {
        g_set_error(error, FM_ERROR, FM_ERROR_DEVICE, "Fake_1 is not Aravis's fake device");
        fm_frame_source_free(src);
        return NULL;
    }
    /* the formats the XML offers go through the source, the others to the register */
    fm_pixfmt through_xml = format == FM_PIXFMT_MONO8 ? FM_PIXFMT_MONO8 : FM_PIXFMT_MONO16;
    if (!fm_frame_source_set_region(src, 0, 0, width, height, error) ||
        !fm_frame_source_set_format(src, through_xml, error) ||
        (frames_per_s > 0 && !fm_frame_source_set_frame_rate(src, frames_per_s, error))) {
        fm_frame_source_free(src);
        return NULL;
    }
    fm_fake_camera_feed *feed = g_new0(fm_fake_camera_feed, 1);
    feed->device = g_object_ref(device);
    feed->camera = g_object_ref(arv_fake_device_get_fake_camera(ARV_FAKE_DEVICE(device)));
    if (format != through_xml)
        arv_fake_camera_write_register(feed->camera, ARV_FAKE_CAMERA_REGISTER_PIXEL_FORMAT,
                                       fm_pixfmt_to_arv(format));
    gsize n = (gsize)width * (gsize)height;
    feed->frame_bytes = fm_pixfmt_frame_bytes(format, width, height);
    feed->n_frames = n_frames;
    feed->packed = g_malloc0(feed->frame_bytes * (gsize)n_frames);
    for (int f = 0; f < n_frames; f++)
        pack_frame(frames + n * (gsize)f, n, format, feed->packed + feed->frame_bytes * (gsize)f);
    g_mutex_init(&feed->lock);
    feed->disappear_at = G_MAXUINT64;
    arv_fake_camera_set_fill_pattern(feed->camera, fill, feed);
    *source = src;
    return feed;
}

void fm_fake_camera_feed_disappear_after(fm_fake_camera_feed *feed, guint64 n,
                                         gboolean control_lost)
{
    g_mutex_lock(&feed->lock);
    feed->disappear_at = feed->sent + n;
    feed->control_lost = control_lost;
    g_mutex_unlock(&feed->lock);
}

guint64 fm_fake_camera_feed_sent(fm_fake_camera_feed *feed)
{
    g_mutex_lock(&feed->lock);
    guint64 sent = feed->sent;
    g_mutex_unlock(&feed->lock);
    return sent;
}

gboolean fm_fake_camera_feed_set_raw_format(fm_fake_camera_feed *feed, guint32 pfnc_value,
                                            GError **error)
{
    if (!arv_fake_camera_write_register(feed->camera, ARV_FAKE_CAMERA_REGISTER_PIXEL_FORMAT,
                                        pfnc_value)) {
        g_set_error(error, FM_ERROR, FM_ERROR_DEVICE, "Fake_1: PixelFormat register not written");
        return FALSE;
    }
    return TRUE;
}

void fm_fake_camera_feed_free(fm_fake_camera_feed *feed)
{
    if (!feed)
        return;
    g_atomic_int_set(&feed->released, 1);
    /* waits for a fill in progress (the camera's fill lock), then sends nothing */
    arv_fake_camera_set_fill_pattern(feed->camera, fill_nothing, NULL);
    g_object_unref(feed->camera);
    g_object_unref(feed->device);
    g_mutex_clear(&feed->lock);
    g_free(feed->packed);
    g_free(feed);
}
