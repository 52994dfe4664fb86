/* How fast frames come through a camera frame source on this machine: Aravis's fake camera at
 * a given size and rate, fed with 12-bit frames in 16-bit words (Mono12), a consumer that only
 * takes and releases frames. Prints delivered frames/s and the drops.
 *   bench-fake-camera [RATE [SECONDS [WIDTH HEIGHT [BUFFERS]]]]   (30 5 1392 1040 0) */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/io/fake_camera_feed.h"

int main(int argc, char **argv)
{
    double rate = argc > 1 ? atof(argv[1]) : 30;
    double seconds = argc > 2 ? atof(argv[2]) : 5;
    int width = argc > 4 ? atoi(argv[3]) : 1392, height = argc > 4 ? atoi(argv[4]) : 1040;
    int buffers = argc > 5 ? atoi(argv[5]) : 0;
    const int n = 4;
    gsize count = (gsize)width * height * n;
    guint16 *frames = g_new(guint16, count);
    for (gsize i = 0; i < count; i++)
        frames[i] = (guint16)((i * 2654435761u) >> 20) & 0x0fff;
    GError *error = NULL;
    fm_frame_source *src = NULL;
    fm_fake_camera_feed *feed =
        fm_fake_camera_feed_open(frames, n, width, height, FM_PIXFMT_MONO12, rate, &src, &error);
    if (!feed || !fm_frame_source_start(src, buffers, &error)) {
        fprintf(stderr, "bench-fake-camera: %s\n", error->message);
        return 1;
    }
    gint64 t0 = g_get_monotonic_time(), end = t0 + (gint64)(seconds * 1e6);
    guint64 got = 0;
    while (g_get_monotonic_time() < end) {
        fm_frame *f = NULL;
        fm_source_status st = fm_frame_source_next(src, 100000, &f, &error);
        if (st == FM_SOURCE_FRAME) {
            fm_frame_source_release(src, f);
            got++;
        } else if (st != FM_SOURCE_TIMEOUT) {
            fprintf(stderr, "bench-fake-camera: %s\n", error ? error->message : "stopped");
            break;
        }
    }
    double s = (double)(g_get_monotonic_time() - t0) / 1e6;
    fm_source_stats stats;
    fm_frame_source_stats(src, &stats);
    printf("%dx%d Mono12 asked %.0f frames/s for %.1f s: delivered %" G_GUINT64_FORMAT
           " (%.1f frames/s), camera sent %" G_GUINT64_FORMAT
           ", dropped by camera %" G_GUINT64_FORMAT ", by link/pool %" G_GUINT64_FORMAT "\n",
           width, height, rate, s, got, (double)got / s, fm_fake_camera_feed_sent(feed),
           stats.dropped_by_camera, stats.dropped_by_link);
    fm_frame_source_free(src);
    fm_fake_camera_feed_free(feed);
    g_free(frames);
    return 0;
}
