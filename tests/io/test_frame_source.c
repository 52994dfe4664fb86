/* Frame sources: pixel formats and the GigE Vision Mono12Packed layout; Aravis's in-process fake
 * camera (Fake_1) listed only on request, its settings and ranges, Fluxmap's frames through it
 * bit for bit in Mono8/Mono12/Mono12Packed/Mono16, formats Fluxmap refuses, a slow consumer's
 * drops counted, the camera lost mid-stream (signal and silence); TIFF stacks replayed at a rate
 * and to their end; truncated and foreign files. No network, no GPU. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "app/core/dataset.h"
#include "app/core/error.h"
#include "app/core/io/frame_source.h"
#include "app/core/io/tiff.h"
#include "tests/io/fake_camera_feed.h"
#include "tests/test-tree.h"

/* width*height*n samples from a fixed generator, spanning all 16 bits */
static guint16 *make_frames(int width, int height, int n, guint32 seed)
{
    gsize count = (gsize)width * height * n;
    guint16 *f = g_new(guint16, count);
    guint32 x = seed;
    for (gsize i = 0; i < count; i++) {
        x = x * 1664525u + 1013904223u;
        f[i] = (guint16)(x >> 13);
    }
    return f;
}

/* Aravis's fake camera as *src, sending n frames of make_frames(width, height, n, seed) in a
 * loop (the feed keeps its own copy). */
static fm_fake_camera_feed *open_feed(int width, int height, int n, guint32 seed, fm_pixfmt format,
                                      double frames_per_s, fm_frame_source **src)
{
    g_autofree guint16 *frames = make_frames(width, height, n, seed);
    g_autoptr(GError) error = NULL;
    fm_fake_camera_feed *feed =
        fm_fake_camera_feed_open(frames, n, width, height, format, frames_per_s, src, &error);
    g_assert_no_error(error);
    return feed;
}

static gboolean has_fake(GPtrArray *list)
{
    for (guint i = 0; i < list->len; i++)
        if (g_strcmp0(((fm_camera_info *)list->pdata[i])->id, "Fake_1") == 0)
            return TRUE;
    return FALSE;
}

static void test_pixfmt(void)
{
    g_assert_cmpstr(fm_pixfmt_name(FM_PIXFMT_MONO12_PACKED), ==, "Mono12Packed");
    g_assert_cmpint(fm_pixfmt_from_name("mono12packed"), ==, FM_PIXFMT_MONO12_PACKED);
    g_assert_cmpint(fm_pixfmt_from_name("RGB8"), ==, FM_PIXFMT_UNKNOWN);
    g_assert_cmpint(fm_pixfmt_bits(FM_PIXFMT_MONO12), ==, 12);
    g_assert_cmpuint(fm_pixfmt_frame_bytes(FM_PIXFMT_MONO12_PACKED, 4, 2), ==, 12);
    g_assert_cmpuint(fm_pixfmt_frame_bytes(FM_PIXFMT_MONO12_PACKED, 3, 1), ==, 5);
    g_assert_cmpuint(fm_pixfmt_frame_bytes(FM_PIXFMT_MONO12, 4, 2), ==, 16);
    g_assert_cmpint(fm_pixfmt_kernel_type(FM_PIXFMT_MONO8), ==, FM_PIXEL_U8);
    /* GigE Vision Mono12Packed, written out by hand: pixels 0xABC, 0x123 -> AB 3C 12; a third
     * pixel 0xFED alone -> FE 0D */
    const guint8 packed[] = {0xab, 0x3c, 0x12, 0xfe, 0x0d};
    fm_frame f = {.id = 1,
                  .width = 3,
                  .height = 1,
                  .format = FM_PIXFMT_MONO12_PACKED,
                  .data = packed,
                  .size = sizeof packed};
    guint16 out[3] = {0};
    g_assert_true(fm_frame_unpack_u16(&f, out, NULL));
    g_assert_cmphex(out[0], ==, 0xabc);
    g_assert_cmphex(out[1], ==, 0x123);
    g_assert_cmphex(out[2], ==, 0xfed);
    /* short data is an error, not a read past the end */
    f.size = 4;
    g_autoptr(GError) error = NULL;
    g_assert_false(fm_frame_unpack_u16(&f, out, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
}

/* Must run before anything sets FLUXMAP_FAKE_CAMERA (the fake interface stays enabled). */
static void test_list_without_env(void)
{
    g_unsetenv("FLUXMAP_FAKE_CAMERA");
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) list = fm_cameras_list(&error);
    g_assert_no_error(error);
    g_assert_false(has_fake(list));
}

static void test_list_fake(void)
{
    g_setenv("FLUXMAP_FAKE_CAMERA", "1", TRUE);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) list = fm_cameras_list(&error);
    g_assert_no_error(error);
    g_assert_true(has_fake(list));
    for (guint i = 0; i < list->len; i++) {
        fm_camera_info *c = list->pdata[i];
        if (g_strcmp0(c->id, "Fake_1") == 0) {
            g_assert_cmpstr(c->vendor, ==, "Aravis");
            g_assert_cmpstr(c->protocol, ==, "Fake");
        }
    }
}

static void test_settings(void)
{
    g_setenv("FLUXMAP_FAKE_CAMERA", "1", TRUE);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_frame_source) src = fm_frame_source_open_camera("Fake_1", &error);
    g_assert_no_error(error);
    g_assert_true(fm_frame_source_set_exposure_us(src, 2500, &error));
    g_assert_true(fm_frame_source_set_gain_db(src, 3, &error));
    g_assert_true(fm_frame_source_set_frame_rate(src, 40, &error));
    g_assert_true(fm_frame_source_set_region(src, 16, 8, 320, 240, &error));
    g_assert_true(fm_frame_source_set_format(src, FM_PIXFMT_MONO16, &error));
    g_assert_no_error(error);
    fm_source_settings s = {0};
    g_assert_true(fm_frame_source_get_settings(src, &s, &error));
    g_assert_true(s.is_camera);
    g_assert_nonnull(strstr(s.description, "Fake_1"));
    g_assert_true(s.exposure_us.available);
    g_assert_cmpfloat_with_epsilon(s.exposure_us.value, 2500, 1);
    g_assert_cmpfloat_with_epsilon(s.gain_db.value, 3, 1e-9);
    g_assert_cmpfloat_with_epsilon(s.frame_rate_hz.value, 40, 0.01);
    g_assert_cmpint(s.x_offset, ==, 16);
    g_assert_cmpint(s.y_offset, ==, 8);
    g_assert_cmpint(s.width, ==, 320);
    g_assert_cmpint(s.height, ==, 240);
    g_assert_cmpint(s.sensor_width, ==, 2048);
    g_assert_cmpint(s.format, ==, FM_PIXFMT_MONO16);
    g_assert_cmpuint(s.formats_offered, ==, (1u << FM_PIXFMT_MONO8) | (1u << FM_PIXFMT_MONO16));
    g_assert_nonnull(s.other_formats);
    g_assert_true(g_strv_contains((const char *const *)s.other_formats, "RGB8"));
    g_assert_cmpfloat(s.exposure_us.min, ==, 10);
    g_assert_cmpfloat(s.exposure_us.max, ==, 1e7);
    fm_source_settings_clear(&s);

    /* out of range: refused, the range named, the setting unchanged */
    g_assert_false(fm_frame_source_set_exposure_us(src, 2e7, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "10 to 1e+07 us"));
    g_clear_error(&error);
    g_assert_false(fm_frame_source_set_gain_db(src, 11, &error));
    g_assert_nonnull(strstr(error->message, "0 to 10 dB"));
    g_clear_error(&error);
    g_assert_false(fm_frame_source_set_frame_rate(src, 5000, &error));
    g_assert_nonnull(strstr(error->message, "0.1 to 1000"));
    g_clear_error(&error);
    g_assert_false(fm_frame_source_set_region(src, 2000, 0, 100, 100, &error));
    g_assert_nonnull(strstr(error->message, "2048x2048"));
    g_clear_error(&error);
    g_assert_false(fm_frame_source_set_format(src, FM_PIXFMT_MONO12_PACKED, &error));
    g_assert_nonnull(strstr(error->message, "Mono12Packed"));
    g_assert_nonnull(strstr(error->message, "Mono8, Mono16"));
    g_clear_error(&error);
    g_assert_true(fm_frame_source_get_settings(src, &s, &error));
    g_assert_cmpfloat_with_epsilon(s.exposure_us.value, 2500, 1);
    g_assert_cmpfloat_with_epsilon(s.frame_rate_hz.value, 40, 0.01);
    fm_source_settings_clear(&s);
}

typedef struct {
    int allocs, frees;
    gsize bytes;
    gboolean aligned;
} hooks_seen;

static void on_alloc(void *data, gsize size, gpointer user)
{
    hooks_seen *h = user;
    h->allocs++;
    h->bytes += size;
    h->aligned = h->aligned && ((guintptr)data % 4096 == 0) && size % 4096 == 0;
}

static void on_free(void *data, gsize size, gpointer user)
{
    ((hooks_seen *)user)->frees++;
}

/* Frames of each format arrive as the feed packed them, and unpack to the stack's samples
 * masked to the format's bits (the expectation computed here, not by the unpacker). */
static void test_formats(gconstpointer data)
{
    fm_pixfmt format = GPOINTER_TO_INT(data);
    const int w = 64, h = 48, n = 3, want = 7;
    g_autofree guint16 *frames = make_frames(w, h, n, 17 + format);
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = NULL;
    g_autoptr(fm_fake_camera_feed) feed =
        fm_fake_camera_feed_open(frames, n, w, h, format, 200, &src, &error);
    g_assert_no_error(error);
    hooks_seen hooks = {.aligned = TRUE};
    fm_frame_source_set_buffer_hooks(src, on_alloc, on_free, &hooks);
    g_assert_true(fm_frame_source_start(src, 6, &error));
    g_assert_cmpint(hooks.allocs, ==, 6);
    g_assert_true(hooks.aligned);
    guint16 mask = format == FM_PIXFMT_MONO8 ? 0xff : fm_pixfmt_bits(format) == 12 ? 0xfff : 0xffff;
    g_autofree guint16 *out = g_new(guint16, w * h);
    guint64 first_id = 0;
    for (int got = 0; got < want;) {
        fm_frame *f = NULL;
        fm_source_status st = fm_frame_source_next(src, 2 * G_USEC_PER_SEC, &f, &error);
        g_assert_no_error(error);
        g_assert_cmpint(st, ==, FM_SOURCE_FRAME);
        if (got == 0)
            first_id = f->id;
        /* the stream's frame k is the stack's frame k mod n; ids count the camera's frames */
        guint64 k = f->id - first_id;
        g_assert_cmpint(f->width, ==, w);
        g_assert_cmpint(f->height, ==, h);
        g_assert_cmpint(f->format, ==, format);
        g_assert_cmpuint(f->size, ==, fm_pixfmt_frame_bytes(format, w, h));
        const guint16 *expect = frames + (gsize)(k % n) * w * h;
        if (format == FM_PIXFMT_MONO16)
            g_assert_cmpmem(f->data, f->size, expect, (gsize)w * h * 2); /* the bytes as sent */
        g_assert_true(fm_frame_unpack_u16(f, out, &error));
        for (int i = 0; i < w * h; i++)
            if (out[i] != (expect[i] & mask))
                g_error("%s frame %" G_GUINT64_FORMAT " pixel %d: %u, expected %u",
                        fm_pixfmt_name(format), k, i, out[i], expect[i] & mask);
        fm_frame_source_release(src, f);
        got++;
    }
    /* the first frame delivered is the first the camera sent */
    g_assert_cmpuint(fm_fake_camera_feed_sent(feed), >=, (guint64)want);
    fm_frame_source_free(src);
    g_assert_cmpint(hooks.frees, ==, 6);
}

/* Stop and start again: a fresh pool (the old one given back through the free hook), frames
 * flowing again, a frame held across the stop released after it. */
static void test_restart(void)
{
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = NULL;
    g_autoptr(fm_fake_camera_feed) feed = open_feed(32, 32, 2, 11, FM_PIXFMT_MONO16, 100, &src);
    hooks_seen hooks = {.aligned = TRUE};
    fm_frame_source_set_buffer_hooks(src, on_alloc, on_free, &hooks);
    for (int run = 0; run < 2; run++) {
        g_assert_true(fm_frame_source_start(src, 4, &error));
        g_assert_cmpint(hooks.allocs, ==, 4 * (run + 1));
        g_assert_cmpint(hooks.frees, ==, 4 * run);
        fm_frame *f = NULL, *held = NULL;
        g_assert_cmpint(fm_frame_source_next(src, G_USEC_PER_SEC, &held, &error), ==,
                        FM_SOURCE_FRAME);
        g_assert_cmpint(fm_frame_source_next(src, G_USEC_PER_SEC, &f, &error), ==, FM_SOURCE_FRAME);
        g_assert_cmpuint(f->id, ==, held->id + 1);
        fm_frame_source_release(src, f);
        fm_source_stats stats;
        fm_frame_source_stats(src, &stats);
        g_assert_cmpuint(stats.delivered, ==, 2);
        fm_frame_source_stop(src);
        fm_frame_source_release(src, held);
    }
    fm_frame_source_free(src);
    g_assert_cmpint(hooks.frees, ==, 8);
}

static gpointer stop_later(gpointer data)
{
    g_usleep(150000);
    fm_frame_source_stop(data);
    return NULL;
}

/* stop() from another thread (a GUI's Stop) ends a consumer waiting in next() with END. */
static void test_stop_from_thread(void)
{
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = NULL;
    g_autoptr(fm_fake_camera_feed) feed = open_feed(32, 32, 1, 13, FM_PIXFMT_MONO8, 20, &src);
    g_assert_true(fm_frame_source_start(src, 4, &error));
    /* a real camera sends nothing once stopped; the fake one would go on: silence it */
    fm_fake_camera_feed_disappear_after(feed, 2, FALSE);
    guint64 delivered = 0;
    GThread *stopper = g_thread_new("stop", stop_later, src);
    gint64 t0 = g_get_monotonic_time();
    fm_source_status st;
    fm_frame *f = NULL;
    while ((st = fm_frame_source_next(src, 5 * G_USEC_PER_SEC, &f, &error)) == FM_SOURCE_FRAME &&
           g_get_monotonic_time() - t0 < 3 * G_USEC_PER_SEC) {
        fm_frame_source_release(src, f);
        delivered++;
    }
    g_thread_join(stopper);
    /* no frame after the stop: the buffer the silent camera gives back then is not one */
    g_assert_cmpuint(delivered, <=, fm_fake_camera_feed_sent(feed));
    g_assert_no_error(error);
    g_assert_cmpint(st, ==, FM_SOURCE_END);
    /* at once, not after the 5 s asked nor the 3 s that make a camera lost */
    g_assert_cmpint(g_get_monotonic_time() - t0, <, G_USEC_PER_SEC);
    g_assert_cmpint(fm_frame_source_next(src, 1000, &f, &error), ==, FM_SOURCE_END);
    fm_frame_source_free(src);
}

static void test_refused_format(gconstpointer data)
{
    const char *name = data;
    guint32 value = strcmp(name, "RGB8") == 0 ? 0x02180014u : 0x01080009u; /* BayerRG8 */
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = NULL;
    g_autoptr(fm_fake_camera_feed) feed = open_feed(32, 32, 1, 5, FM_PIXFMT_MONO8, 100, &src);
    g_assert_true(fm_fake_camera_feed_set_raw_format(feed, value, &error));
    fm_source_settings s = {0};
    g_assert_true(fm_frame_source_get_settings(src, &s, &error));
    g_assert_cmpint(s.format, ==, FM_PIXFMT_UNKNOWN);
    g_assert_cmpstr(s.format_name, ==, name);
    fm_source_settings_clear(&s);
    g_assert_false(fm_frame_source_start(src, 4, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "Fake_1"));
    g_assert_nonnull(strstr(error->message, name));
    g_assert_nonnull(strstr(error->message, "Mono12Packed"));
    fm_frame_source_free(src);
}

/* A consumer slower than the camera: the pool runs dry and every frame the camera took but
 * could not hand over is counted. */
static void test_slow_consumer(void)
{
    const double rate = 100;
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = NULL;
    g_autoptr(fm_fake_camera_feed) feed = open_feed(64, 64, 2, 9, FM_PIXFMT_MONO16, rate, &src);
    g_assert_true(fm_frame_source_start(src, 4, &error));
    gint64 t0 = g_get_monotonic_time();
    int delivered = 0;
    while (g_get_monotonic_time() - t0 < 1500000) {
        fm_frame *f = NULL;
        g_assert_cmpint(fm_frame_source_next(src, G_USEC_PER_SEC, &f, &error), ==, FM_SOURCE_FRAME);
        g_usleep(50000); /* 20 frames/s against 100 */
        fm_frame_source_release(src, f);
        delivered++;
    }
    double seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    fm_source_stats stats;
    fm_frame_source_stats(src, &stats);
    g_test_message("%.2f s: delivered %" G_GUINT64_FORMAT ", dropped by link %" G_GUINT64_FORMAT
                   ", by camera %" G_GUINT64_FORMAT,
                   seconds, stats.delivered, stats.dropped_by_link, stats.dropped_by_camera);
    g_assert_cmpuint(stats.delivered, ==, (guint64)delivered);
    g_assert_cmpuint(stats.delivered, <, (guint64)(0.5 * rate * seconds));
    /* every camera frame period is a frame delivered, waiting in the pool, or a drop */
    g_assert_cmpuint(stats.dropped_by_link, >, (guint64)(0.3 * rate * seconds));
    g_assert_cmpuint(stats.delivered + stats.dropped_by_link + 4, >=,
                     (guint64)(0.7 * rate * seconds));
    fm_frame_source_free(src);
}

static void test_lost(gconstpointer data)
{
    gboolean signal = GPOINTER_TO_INT(data);
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = NULL;
    g_autoptr(fm_fake_camera_feed) feed = open_feed(32, 32, 2, 3, FM_PIXFMT_MONO8, 50, &src);
    g_assert_true(fm_frame_source_start(src, 8, &error));
    /* a few frames, then the camera goes */
    fm_frame *held = NULL;
    g_assert_cmpint(fm_frame_source_next(src, G_USEC_PER_SEC, &held, &error), ==, FM_SOURCE_FRAME);
    guint64 sent_before = fm_fake_camera_feed_sent(feed);
    fm_fake_camera_feed_disappear_after(feed, 5, signal);
    guint64 total = sent_before + 5;
    int frames_got = 1;
    gint64 t0 = g_get_monotonic_time();
    fm_source_status st;
    for (;;) {
        fm_frame *f = NULL;
        st = fm_frame_source_next(src, 200000, &f, &error);
        if (st == FM_SOURCE_FRAME) {
            frames_got++;
            fm_frame_source_release(src, f);
            continue;
        }
        if (st != FM_SOURCE_TIMEOUT)
            break;
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 10 * G_USEC_PER_SEC);
    }
    double waited = (double)(g_get_monotonic_time() - t0) / 1e6;
    g_assert_cmpint(st, ==, FM_SOURCE_LOST);
    g_assert_nonnull(error);
    g_test_message("lost after %.2f s: %s", waited, error->message);
    g_assert_cmpuint((guint64)frames_got, ==, total);
    g_autofree char *after = g_strdup_printf("after %" G_GUINT64_FORMAT " frames", total);
    g_assert_nonnull(strstr(error->message, "Fake_1"));
    g_assert_nonnull(strstr(error->message, after));
    if (signal)
        g_assert_cmpfloat(waited, <, 2.5); /* the signal, not the silence */
    else
        g_assert_cmpfloat(waited, >=, 2.5);
    /* a frame held across the loss is still valid and released after stop */
    g_assert_nonnull(held->data);
    fm_frame_source_stop(src);
    fm_frame_source_release(src, held);
    fm_frame_source_free(src);
}

static char *write_stack(const char *dir, const char *name, int w, int h, int n, int bits,
                         guint16 **samples)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)n};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autofree guint16 *f = make_frames(w, h, n, 77);
    for (gsize i = 0; i < (gsize)w * h * n; i++)
        f[i] &= (guint16)((1u << bits) - 1);
    memcpy(ds->data, f, (gsize)w * h * n * 2);
    ds->bits_per_sample = bits;
    char *path = g_build_filename(dir, name, NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, NULL, &error));
    if (samples)
        *samples = g_steal_pointer(&f);
    return path;
}

static void test_replay(void)
{
    g_autofree char *dir = g_dir_make_tmp("fluxmap-replay-XXXXXX", NULL);
    const int w = 40, h = 30, n = 12;
    g_autofree guint16 *samples = NULL;
    g_autofree char *path = write_stack(dir, "stack.tif", w, h, n, 12, &samples);
    g_autoptr(GError) error = NULL;
    const double rate = 20;
    g_autoptr(fm_frame_source) src = fm_frame_source_open_replay(path, rate, &error);
    g_assert_no_error(error);
    hooks_seen hooks = {.aligned = TRUE};
    fm_frame_source_set_buffer_hooks(src, on_alloc, on_free, &hooks);
    fm_source_settings s = {0};
    g_assert_true(fm_frame_source_get_settings(src, &s, &error));
    g_assert_false(s.is_camera);
    g_assert_cmpint(s.n_frames, ==, n);
    /* 12-bit samples written as 16-bit pages read back as 16-bit words */
    g_assert_cmpint(s.format, ==, FM_PIXFMT_MONO16);
    g_assert_cmpfloat(s.frame_rate_hz.value, ==, rate);
    fm_source_settings_clear(&s);
    g_assert_true(fm_frame_source_start(src, 0, &error));
    g_assert_cmpint(hooks.allocs, ==, 1); /* one buffer: the whole stack */
    g_assert_cmpuint(hooks.bytes, >=, (gsize)w * h * n * 2);
    gint64 t0 = g_get_monotonic_time();
    for (int k = 0; k < n; k++) {
        fm_frame *f = NULL;
        fm_source_status st;
        while ((st = fm_frame_source_next(src, 20000, &f, &error)) == FM_SOURCE_TIMEOUT)
            ;
        g_assert_cmpint(st, ==, FM_SOURCE_FRAME);
        g_assert_cmpuint(f->id, ==, (guint64)k);
        g_assert_cmpmem(f->data, f->size, samples + (gsize)k * w * h, (gsize)w * h * 2);
        fm_frame_source_release(src, f);
    }
    double seconds = (double)(g_get_monotonic_time() - t0) / 1e6;
    g_test_message("replay: %d frames at %.0f/s in %.3f s", n, rate, seconds);
    /* frame 0 at once, frame 11 at 0.55 s; generous above for loaded CI machines */
    g_assert_cmpfloat(seconds, >=, 0.5);
    g_assert_cmpfloat(seconds, <, 1.5);
    fm_frame *f = NULL;
    g_assert_cmpint(fm_frame_source_next(src, 1000, &f, &error), ==, FM_SOURCE_END);
    g_assert_null(f);
    fm_source_stats stats;
    fm_frame_source_stats(src, &stats);
    g_assert_cmpuint(stats.delivered, ==, (guint64)n);
    g_clear_pointer(&src, fm_frame_source_free);
    g_assert_cmpint(hooks.frees, ==, 1);

    /* as fast as asked */
    src = fm_frame_source_open_replay(path, -1, &error);
    g_assert_true(fm_frame_source_start(src, 0, &error));
    t0 = g_get_monotonic_time();
    int got = 0;
    while (fm_frame_source_next(src, 0, &f, &error) == FM_SOURCE_FRAME) {
        fm_frame_source_release(src, f);
        got++;
    }
    g_assert_cmpint(got, ==, n);
    g_assert_cmpint(g_get_monotonic_time() - t0, <, 200000);
    fm_test_remove_tree(dir);
}

static void test_replay_bad_files(void)
{
    g_autofree char *dir = g_dir_make_tmp("fluxmap-replay-XXXXXX", NULL);
    g_autofree char *path = write_stack(dir, "cut.tif", 64, 64, 4, 16, NULL);
    /* truncated in the second frame's strip */
    g_autofree char *content = NULL;
    gsize length = 0;
    g_assert_true(g_file_get_contents(path, &content, &length, NULL));
    g_assert_true(g_file_set_contents(path, content, 64 * 64 * 2 + 4000, NULL));
    g_autoptr(GError) error = NULL;
    fm_frame_source *src = fm_frame_source_open_replay(path, 10, &error);
    g_assert_null(src);
    g_assert_nonnull(error);
    g_test_message("truncated: %s", error->message);
    g_assert_nonnull(strstr(error->message, "cut.tif"));
    g_clear_error(&error);

    g_autofree char *foreign = g_build_filename(dir, "notes.tif", NULL);
    g_assert_true(g_file_set_contents(foreign, "these are notes, not an image\n", -1, NULL));
    src = fm_frame_source_open_replay(foreign, 10, &error);
    g_assert_null(src);
    g_assert_nonnull(error);
    g_test_message("foreign: %s", error->message);
    g_assert_nonnull(strstr(error->message, "notes.tif"));
    fm_test_remove_tree(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/frame-source/pixfmt", test_pixfmt);
    g_test_add_func("/frame-source/list-without-env", test_list_without_env);
    g_test_add_func("/frame-source/list-fake", test_list_fake);
    g_test_add_func("/frame-source/settings", test_settings);
    g_test_add_data_func("/frame-source/format/Mono8", GINT_TO_POINTER(FM_PIXFMT_MONO8),
                         test_formats);
    g_test_add_data_func("/frame-source/format/Mono12", GINT_TO_POINTER(FM_PIXFMT_MONO12),
                         test_formats);
    g_test_add_data_func("/frame-source/format/Mono12Packed",
                         GINT_TO_POINTER(FM_PIXFMT_MONO12_PACKED), test_formats);
    g_test_add_data_func("/frame-source/format/Mono16", GINT_TO_POINTER(FM_PIXFMT_MONO16),
                         test_formats);
    g_test_add_data_func("/frame-source/refused/RGB8", "RGB8", test_refused_format);
    g_test_add_data_func("/frame-source/refused/BayerRG8", "BayerRG8", test_refused_format);
    g_test_add_func("/frame-source/restart", test_restart);
    g_test_add_func("/frame-source/stop-from-thread", test_stop_from_thread);
    g_test_add_func("/frame-source/slow-consumer", test_slow_consumer);
    g_test_add_data_func("/frame-source/lost/control-lost", GINT_TO_POINTER(1), test_lost);
    g_test_add_data_func("/frame-source/lost/silence", GINT_TO_POINTER(0), test_lost);
    g_test_add_func("/frame-source/replay", test_replay);
    g_test_add_func("/frame-source/replay-bad-files", test_replay_bad_files);
    return g_test_run();
}
