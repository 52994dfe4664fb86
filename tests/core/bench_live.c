/* How a live run keeps up on this machine (a benchmark, not a test): Aravis's fake camera at a
 * size and rate sending 12-bit frames in 16-bit words (Mono16), a method's live step (default
 * lsi.spatial, window 5), recording every frame to a BigTIFF, a display that takes each frame
 * it is given. Prints the camera's, processed, recorded and displayed frames/s and the drops.
 *   bench-live [RATE [SECONDS [WIDTH HEIGHT [METHOD [RECORDING|- [MAPS_DIR|-]]]]]]
 *   (30 20 1392 1040 lsi.spatial /tmp/bench-live.tif -; '-': no recording; MAPS_DIR: every
 *   frame's maps streamed there, as --save-maps all, and removed at the end; '-': summary maps,
 *   kept nowhere) */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "app/core/live.h"
#include "tests/io/fake_camera_feed.h"

static void show(const fm_live_update *update, gpointer user)
{
    /* a display that looks at the primary map: its mean, as a GUI's colour mapping reads it */
    const fm_map *map = update->output->maps[update->output->primary];
    double sum = 0;
    for (gsize i = 0; i < (gsize)map->width * map->height; i++)
        sum += map->data[i];
    *(double *)user = sum;
}

int main(int argc, char **argv)
{
    double rate = argc > 1 ? atof(argv[1]) : 30, seconds = argc > 2 ? atof(argv[2]) : 20;
    int width = argc > 4 ? atoi(argv[3]) : 1392, height = argc > 4 ? atoi(argv[4]) : 1040;
    const char *method_id = argc > 5 ? argv[5] : "lsi.spatial";
    const char *record = argc > 6 ? argv[6] : "/tmp/bench-live.tif";
    if (g_strcmp0(record, "-") == 0)
        record = NULL;
    const char *maps_dir = argc > 7 && g_strcmp0(argv[7], "-") != 0 ? argv[7] : NULL;
    const int n = 4;
    gsize count = (gsize)width * height * n;
    guint16 *frames = g_new(guint16, count);
    for (gsize i = 0; i < count; i++)
        frames[i] = (guint16)(((i * 2654435761u) >> 20) & 0x0fff);
    GError *error = NULL;
    fm_frame_source *source = NULL;
    fm_fake_camera_feed *feed =
        fm_fake_camera_feed_open(frames, n, width, height, FM_PIXFMT_MONO16, rate, &source, &error);
    const fm_method *method = fm_method_find(method_id);
    if (!feed || !method) {
        fprintf(stderr, "bench-live: %s\n", error ? error->message : "no such method");
        return 1;
    }
    double sink = 0;
    fm_live_request request = {
        .method = method,
        .backend = FM_BACKEND_CPU,
        .max_seconds = seconds,
        .record_path = record,
        .maps_dir = maps_dir,
        .save_maps = maps_dir ? FM_LIVE_SAVE_ALL : FM_LIVE_SAVE_SUMMARY,
        .display = show,
        .display_user = &sink,
        .display_max_hz = 30,
    };
    fm_live_session *session = fm_live_start(source, &request, &error);
    if (!session) {
        fprintf(stderr, "bench-live: %s\n", error->message);
        return 1;
    }
    gint64 t0 = g_get_monotonic_time();
    while (!fm_live_finished(session)) {
        g_usleep(1000000);
        fm_live_stats st;
        fm_live_get_stats(session, &st);
        printf(
            "%5.1f s  camera %5.1f  processed %5.1f  displayed %5.1f  recorded %" G_GUINT64_FORMAT
            "  dropped %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT "\n",
            (g_get_monotonic_time() - t0) / 1e6, st.camera_fps, st.processed_fps, st.displayed_fps,
            st.recorded, st.dropped_by_camera, st.dropped_by_link);
        fflush(stdout);
    }
    fm_live_summary *summary = fm_live_stop(session, &error);
    double s = seconds; /* the acquisition's window: frames are taken for exactly this long */
    const fm_live_stats *st = &summary->stats;
    printf(
        "%dx%d Mono16 (12-bit) at %.0f frames/s, %s, %.1f s: camera %" G_GUINT64_FORMAT
        " (%.1f/s), processed %" G_GUINT64_FORMAT " (%.1f/s), recorded %" G_GUINT64_FORMAT
        " (%.1f/s), displayed %" G_GUINT64_FORMAT " (%.1f/s); dropped by camera %" G_GUINT64_FORMAT
        ", by link %" G_GUINT64_FORMAT ", sent %" G_GUINT64_FORMAT "\n",
        width, height, rate, method_id, s, st->camera_frames, st->camera_frames / s, st->processed,
        st->processed / s, st->recorded, st->recorded / s, st->displayed, st->displayed / s,
        st->dropped_by_camera, st->dropped_by_link, fm_fake_camera_feed_sent(feed));
    if (summary->message)
        printf("message: %s\n", summary->message);
    char **summary_paths = g_steal_pointer(&summary->map_paths);
    fm_live_summary_free(summary);
    fm_fake_camera_feed_free(feed);
    if (record)
        g_unlink(record);
    for (int i = 0; maps_dir && summary_paths && summary_paths[i]; i++)
        g_unlink(summary_paths[i]);
    g_strfreev(summary_paths);
    g_free(frames);
    return 0;
}
