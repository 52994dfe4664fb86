/* Frame sources, the common part: pixel formats, unpacking to uint16, the pool's page-aligned
 * memory with its registration hooks, counters, and the calls that dispatch to the camera
 * (frame_source_aravis.c) or replay (frame_source_replay.c) implementation. */
#include "app/core/io/frame_source_private.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/core/error.h"

static const struct {
    const char *name;
    int bits;
} pixfmts[] = {
    [FM_PIXFMT_MONO8] = {"Mono8", 8},
    [FM_PIXFMT_MONO12] = {"Mono12", 12},
    [FM_PIXFMT_MONO12_PACKED] = {"Mono12Packed", 12},
    [FM_PIXFMT_MONO16] = {"Mono16", 16},
};

static gboolean pixfmt_known(fm_pixfmt format)
{
    return (int)format >= 0 && format < FM_PIXFMT_UNKNOWN;
}

const char *fm_pixfmt_name(fm_pixfmt format)
{
    return pixfmt_known(format) ? pixfmts[format].name : "unknown";
}

fm_pixfmt fm_pixfmt_from_name(const char *name)
{
    for (int f = 0; name && f < FM_PIXFMT_UNKNOWN; f++)
        if (g_ascii_strcasecmp(name, pixfmts[f].name) == 0)
            return (fm_pixfmt)f;
    return FM_PIXFMT_UNKNOWN;
}

const char *fm_pixfmt_names_read(void)
{
    return "Mono8, Mono12, Mono12Packed, Mono16";
}

int fm_pixfmt_bits(fm_pixfmt format)
{
    return pixfmt_known(format) ? pixfmts[format].bits : 0;
}

gsize fm_pixfmt_frame_bytes(fm_pixfmt format, int width, int height)
{
    gsize n = (gsize)MAX(width, 0) * (gsize)MAX(height, 0);
    switch (format) {
    case FM_PIXFMT_MONO8:
        return n;
    case FM_PIXFMT_MONO12:
    case FM_PIXFMT_MONO16:
        return 2 * n;
    case FM_PIXFMT_MONO12_PACKED:
        /* packing runs across line ends; an odd last pixel takes one and a half bytes */
        return (3 * n + 1) / 2;
    default:
        return 0;
    }
}

fm_pixel_type fm_pixfmt_kernel_type(fm_pixfmt format)
{
    return format == FM_PIXFMT_MONO8 ? FM_PIXEL_U8 : FM_PIXEL_U16;
}

/* GigE Vision Mono12Packed (GVSP 0x010C0006, older than the PFNC's Mono12p): pixel pair
 * (a, b) in bytes B0 B1 B2 as B0 = a[11:4], B1 = b[3:0] << 4 | a[3:0], B2 = b[11:4]. */
static void unpack_mono12_packed(const guint8 *in, gsize n, guint16 *out)
{
    gsize pairs = n / 2;
    for (gsize i = 0; i < pairs; i++, in += 3) {
        out[2 * i] = (guint16)((in[0] << 4) | (in[1] & 0x0f));
        out[2 * i + 1] = (guint16)((in[2] << 4) | (in[1] >> 4));
    }
    if (n % 2)
        out[n - 1] = (guint16)((in[0] << 4) | (in[1] & 0x0f));
}

gboolean fm_frame_unpack_u16(const fm_frame *frame, guint16 *out, GError **error)
{
    gsize n = (gsize)frame->width * (gsize)frame->height;
    gsize need = fm_pixfmt_frame_bytes(frame->format, frame->width, frame->height);
    if (!pixfmt_known(frame->format)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("frame %" G_GUINT64_FORMAT ": pixel format not read (Fluxmap reads %s)"),
                    frame->id, fm_pixfmt_names_read());
        return FALSE;
    }
    if (frame->size < need || !frame->data) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("frame %" G_GUINT64_FORMAT ": %" G_GSIZE_FORMAT
                      " bytes, %dx%d %s needs %" G_GSIZE_FORMAT),
                    frame->id, frame->size, frame->width, frame->height,
                    fm_pixfmt_name(frame->format), need);
        return FALSE;
    }
    const guint8 *in = frame->data;
    switch (frame->format) {
    case FM_PIXFMT_MONO8:
        for (gsize i = 0; i < n; i++)
            out[i] = in[i];
        break;
    case FM_PIXFMT_MONO12:
    case FM_PIXFMT_MONO16:
        /* GenICam sends little-endian samples; memcpy keeps them on little-endian hosts */
        memcpy(out, in, 2 * n);
#if G_BYTE_ORDER == G_BIG_ENDIAN
        for (gsize i = 0; i < n; i++)
            out[i] = GUINT16_FROM_LE(out[i]);
#endif
        break;
    case FM_PIXFMT_MONO12_PACKED:
        unpack_mono12_packed(in, n, out);
        break;
    default:
        break;
    }
    return TRUE;
}

void fm_camera_info_free(fm_camera_info *info)
{
    if (!info)
        return;
    g_free(info->id);
    g_free(info->vendor);
    g_free(info->model);
    g_free(info->serial);
    g_free(info->protocol);
    g_free(info);
}

void fm_source_settings_clear(fm_source_settings *settings)
{
    g_clear_pointer(&settings->description, g_free);
    g_clear_pointer(&settings->other_formats, g_strfreev);
    g_clear_pointer(&settings->format_name, g_free);
    g_clear_pointer(&settings->path, g_free);
}

void fm_frame_source_init_base(fm_frame_source *source, const fm_frame_source_ops *ops,
                               const char *name)
{
    source->ops = ops;
    source->name = g_strdup(name);
    g_mutex_init(&source->stats_lock);
}

static gsize page_round(gsize size)
{
    long page = sysconf(_SC_PAGESIZE);
    gsize p = page > 0 ? (gsize)page : 4096;
    return (MAX(size, 1) + p - 1) / p * p;
}

void *fm_frame_source_pool_alloc(fm_frame_source *source, gsize size, GError **error)
{
    void *data = NULL;
    gsize rounded = page_round(size);
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign(&data, page > 0 ? (gsize)page : 4096, rounded) != 0 || !data) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO,
                    _("%s: no memory for a frame buffer of %" G_GSIZE_FORMAT " bytes"),
                    source->name, size);
        return NULL;
    }
    if (source->on_alloc)
        source->on_alloc(data, rounded, source->hook_user);
    return data;
}

void fm_frame_source_pool_free(fm_frame_source *source, void *data, gsize size)
{
    if (!data)
        return;
    if (source->on_free)
        source->on_free(data, page_round(size), source->hook_user);
    free(data);
}

void fm_frame_source_count_delivered(fm_frame_source *source)
{
    gint64 now = g_get_monotonic_time();
    g_mutex_lock(&source->stats_lock);
    source->delivered++;
    if (source->window_start_us == 0)
        source->window_start_us = now;
    source->window_count++;
    gint64 span = now - source->window_start_us;
    if (span >= G_USEC_PER_SEC) {
        source->frames_per_s = (double)source->window_count * G_USEC_PER_SEC / (double)span;
        source->window_start_us = now;
        source->window_count = 0;
    }
    g_mutex_unlock(&source->stats_lock);
}

gboolean fm_frame_source_get_settings(fm_frame_source *source, fm_source_settings *out,
                                      GError **error)
{
    memset(out, 0, sizeof *out);
    return source->ops->get_settings(source, out, error);
}

gboolean fm_frame_source_set_exposure_us(fm_frame_source *source, double exposure_us,
                                         GError **error)
{
    return source->ops->set_exposure_us(source, exposure_us, error);
}

gboolean fm_frame_source_set_gain_db(fm_frame_source *source, double gain_db, GError **error)
{
    return source->ops->set_gain_db(source, gain_db, error);
}

gboolean fm_frame_source_set_frame_rate(fm_frame_source *source, double frames_per_s,
                                        GError **error)
{
    return source->ops->set_frame_rate(source, frames_per_s, error);
}

gboolean fm_frame_source_set_region(fm_frame_source *source, int x, int y, int width, int height,
                                    GError **error)
{
    return source->ops->set_region(source, x, y, width, height, error);
}

gboolean fm_frame_source_set_format(fm_frame_source *source, fm_pixfmt format, GError **error)
{
    return source->ops->set_format(source, format, error);
}

void fm_frame_source_set_buffer_hooks(fm_frame_source *source, fm_buffer_hook on_alloc,
                                      fm_buffer_hook on_free, gpointer user)
{
    source->on_alloc = on_alloc;
    source->on_free = on_free;
    source->hook_user = user;
}

gboolean fm_frame_source_start(fm_frame_source *source, int n_buffers, GError **error)
{
    g_mutex_lock(&source->stats_lock);
    source->delivered = 0;
    source->window_start_us = 0;
    source->window_count = 0;
    source->frames_per_s = 0;
    g_mutex_unlock(&source->stats_lock);
    return source->ops->start(source, n_buffers, error);
}

fm_source_status fm_frame_source_next(fm_frame_source *source, gint64 timeout_us, fm_frame **frame,
                                      GError **error)
{
    *frame = NULL;
    fm_source_status status = source->ops->next(source, timeout_us, frame, error);
    if (status == FM_SOURCE_FRAME)
        fm_frame_source_count_delivered(source);
    return status;
}

void fm_frame_source_release(fm_frame_source *source, fm_frame *frame)
{
    if (frame)
        source->ops->release(source, frame);
}

void fm_frame_source_stats(fm_frame_source *source, fm_source_stats *out)
{
    memset(out, 0, sizeof *out);
    source->ops->dropped(source, &out->dropped_by_camera, &out->dropped_by_link);
    g_mutex_lock(&source->stats_lock);
    out->delivered = source->delivered;
    out->frames_per_s = source->frames_per_s;
    /* a stalled stream reads as slowing down, not as the last full second's rate */
    gint64 span = g_get_monotonic_time() - source->window_start_us;
    if (source->window_start_us && span > 2 * G_USEC_PER_SEC)
        out->frames_per_s = (double)source->window_count * G_USEC_PER_SEC / (double)span;
    g_mutex_unlock(&source->stats_lock);
}

void fm_frame_source_stop(fm_frame_source *source)
{
    source->ops->stop(source);
}

void fm_frame_source_free(fm_frame_source *source)
{
    if (!source)
        return;
    source->ops->stop(source);
    char *name = source->name;
    g_mutex_clear(&source->stats_lock);
    source->ops->destroy(source);
    g_free(name);
}
