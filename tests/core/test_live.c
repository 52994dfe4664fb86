/* Live sessions (app/core/live.h) on a replayed stack with a stand-in per-frame step: every
 * frame recorded bit for bit and processed in order while recording, the maps and the ROI time
 * course, the catalogue record, a slow display (skipped, counted, the recording whole), the
 * newest frame first without a recording, summary maps, a method without a live path, and the
 * recorder's BigTIFF (Mono12Packed unpacked, readable after every page). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "app/core/io/tiff_record.h"
#include "app/core/live.h"
#include "tests/core/live-test-util.h"

static char *tmp_dir;

/* ---- a stand-in step: "value" = the frame as floats, "twice" = 2 x the frame ---- */

struct fm_live_step {
    int width, height;
    fm_map *value, *twice;
    const fm_map *maps[2];
    guint64 last_id;
    gboolean in_order;
    int sleep_us;
};

static int step_sleep_us; /* set by a test before start */

static fm_live_step *step_begin(const fm_method *method, const fm_params *params, int width,
                                int height, fm_pixfmt format, fm_backend backend, GError **error)
{
    fm_live_step *step = g_new0(fm_live_step, 1);
    step->width = width;
    step->height = height;
    step->value = fm_map_new("value", "1", width, height, 1);
    step->twice = fm_map_new("twice", "1", width, height, 1);
    step->maps[0] = step->value;
    step->maps[1] = step->twice;
    step->last_id = G_MAXUINT64;
    step->in_order = TRUE;
    step->sleep_us = step_sleep_us;
    return step;
}

static gboolean step_frame(fm_live_step *step, const fm_frame *frame, fm_live_output *out,
                           GError **error)
{
    gsize n = (gsize)step->width * step->height;
    g_autofree guint16 *samples = g_new(guint16, n);
    if (!fm_frame_unpack_u16(frame, samples, error))
        return FALSE;
    for (gsize i = 0; i < n; i++) {
        step->value->data[i] = samples[i];
        step->twice->data[i] = 2.0f * samples[i];
    }
    if (step->last_id != G_MAXUINT64 && frame->id != step->last_id + 1)
        step->in_order = FALSE;
    step->last_id = frame->id;
    if (step->sleep_us)
        g_usleep(step->sleep_us);
    out->ready = TRUE;
    out->maps = step->maps;
    out->n_maps = 2;
    out->primary = 0;
    return TRUE;
}

static void step_describe(fm_live_step *step, char **backend, char **device, char **note)
{
    *backend = g_strdup("cpu");
    *device = g_strdup("test step");
    *note = NULL;
}

static gboolean last_in_order;

static void step_end(fm_live_step *step)
{
    last_in_order = step->in_order;
    fm_map_free(step->value);
    fm_map_free(step->twice);
    g_free(step);
}

static const fm_live_ops test_ops = {
    .begin = step_begin,
    .frame = step_frame,
    .describe = step_describe,
    .end = step_end,
};

static const fm_output_spec test_outputs[] = {{.name = "value", .unit = "1"},
                                              {.name = "twice", .unit = "1"}};
static const fm_method test_method = {
    .id = "test.live",
    .family = "test",
    .title = "live test",
    .outputs = test_outputs,
    .n_outputs = 2,
    .live = &test_ops,
};
static const fm_method no_live_method = {.id = "test.offline", .family = "test"};

/* ---- helpers ---- */

enum { W = 48, H = 32 };

/* A stack of n frames of W x H 12-bit samples, written as a TIFF; frames returned. */
static guint16 *write_stack(const char *path, int n)
{
    gsize sizes[3] = {W, H, (gsize)n};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    guint16 *px = ds->data;
    GRand *rand = g_rand_new_with_seed(7);
    for (gsize i = 0; i < (gsize)W * H * n; i++)
        px[i] = (guint16)g_rand_int_range(rand, 0, 4096);
    g_rand_free(rand);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, NULL, &error));
    return g_memdup2(px, (gsize)W * H * n * sizeof(guint16));
}

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

/* ---- tests ---- */

static void test_record_and_maps(void)
{
    enum { N = 30 };
    g_autofree char *stack = tmp_path("stack.tif");
    g_autofree guint16 *frames = write_stack(stack, N);
    g_autofree char *record = tmp_path("rec1/recording.tif");
    g_autofree char *maps = tmp_path("rec1");
    g_mkdir_with_parents(maps, 0755);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = fm_frame_source_open_replay(stack, -1, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, fm_roi_new_rectangle("box", 4, 2, 12, 10));
    step_sleep_us = 0;
    fm_live_request request = {
        .method = &test_method,
        .rois = rois,
        .backend = FM_BACKEND_CPU,
        .record_path = record,
        .maps_dir = maps,
        .save_maps = FM_LIVE_SAVE_ALL,
        .catalogue = TRUE,
    };
    g_autoptr(fm_live_summary) summary = live_test_run(source, &request, 30);
    g_assert_null(summary->message);
    g_assert_cmpint(summary->end, ==, FM_LIVE_END_ASKED);
    g_assert_cmpuint(summary->stats.camera_frames, ==, N);
    g_assert_cmpuint(summary->stats.processed, ==, N);
    g_assert_cmpuint(summary->stats.recorded, ==, N);
    g_assert_cmpuint(summary->stats.skipped_processing, ==, 0);
    g_assert_true(last_in_order); /* while recording every frame, in order */

    /* the recording: every frame, bit for bit, and the description */
    g_assert_nonnull(summary->record_path);
    g_autoptr(fm_dataset) rec = fm_dataset_open(summary->record_path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(rec->type, ==, FM_PIXEL_U16);
    g_assert_cmpint(fm_dataset_frames(rec), ==, N);
    g_assert_cmpmem(rec->data, fm_dataset_n_bytes(rec), frames, (gsize)W * H * N * 2);
    g_assert_nonnull(strstr(fm_dataset_get_meta(rec, "description"), "fluxmap live recording"));

    /* the maps: every frame's, as stacks */
    g_autofree char *value_path = g_build_filename(maps, "value.tif", NULL);
    g_autoptr(fm_dataset) value = fm_tiff_read(value_path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(value), ==, N);
    const float *v = value->data;
    for (gsize i = 0; i < (gsize)W * H * N; i++)
        g_assert_cmpfloat(v[i], ==, (float)frames[i]);

    /* the ROI time course: the mean inside the box per frame */
    g_autofree char *csv_path = g_build_filename(maps, "roi_time_course.csv", NULL);
    g_autofree char *csv = NULL;
    g_assert_true(g_file_get_contents(csv_path, &csv, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
    g_assert_cmpstr(lines[0], ==, "frame,t_s,box");
    g_assert_cmpuint(g_strv_length(lines), ==, N + 2); /* header, N rows, "" */
    for (int k = 0; k < N; k++) {
        double sum = 0;
        for (int y = 2; y < 10; y++)
            for (int x = 4; x < 12; x++)
                sum += frames[(gsize)k * W * H + (gsize)y * W + x];
        g_auto(GStrv) cells = g_strsplit(lines[k + 1], ",", -1);
        g_assert_cmpint(atoi(cells[0]), ==, k);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(cells[2], NULL), sum / 64, 1e-6);
    }

    /* the catalogue: one run, done, the recording its dataset, the maps, the CSV */
    g_autoptr(fm_catalogue) cat = NULL;
    g_autoptr(fm_catalogue_run) run = live_test_catalogue_run(summary->maps_run_id, &cat);
    g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    g_assert_cmpstr(run->method_id, ==, "test.live");
    g_assert_cmpstr(run->dataset_path, ==, summary->record_path);
    g_assert_nonnull(run->dataset_sha256);
    /* recorded from the start: the recording is the dataset, the note names the replayed file */
    g_assert_true(g_str_has_prefix(run->error_message, "replay of "));
    g_assert_cmpuint(run->outputs->len, ==, 2);
    for (guint i = 0; i < run->outputs->len; i++) {
        const fm_catalogue_output *o = run->outputs->pdata[i];
        g_assert_true(g_file_test(o->file, G_FILE_TEST_IS_REGULAR));
    }
    fm_map *twice = fm_catalogue_load_map(cat, run->id, "twice", &error);
    g_assert_no_error(error);
    g_assert_cmpint(twice->n_frames, ==, N);
    g_assert_cmpfloat(twice->data[W * H * 3 + 5], ==, 2.0f * frames[W * H * 3 + 5]);
    /* the statistics, read back from the stack on disk, are those of the stack in memory */
    fm_map_stats expect = fm_map_statistics(twice);
    for (guint i = 0; i < run->outputs->len; i++) {
        const fm_catalogue_output *o = run->outputs->pdata[i];
        if (g_strcmp0(o->name, "twice") != 0)
            continue;
        g_assert_cmpuint(o->stats.valid_pixels, ==, expect.valid_pixels);
        g_assert_cmpfloat(o->stats.min, ==, expect.min);
        g_assert_cmpfloat(o->stats.max, ==, expect.max);
        g_assert_cmpfloat(o->stats.mean, ==, expect.mean);
        g_assert_cmpfloat(o->stats.median, ==, expect.median);
    }
    fm_map_free(twice);
    g_assert_cmpuint(run->exports->len, ==, 1);
    const fm_catalogue_export *e = run->exports->pdata[0];
    g_assert_cmpstr(e->format, ==, "csv");
    g_assert_true(g_str_has_suffix(e->file, "roi_time_course.csv"));
}

typedef struct {
    int calls;
    int sleep_us;
    guint64 last_points;
    gboolean series_ok;
} display_probe;

static void slow_display(const fm_live_update *update, gpointer user)
{
    display_probe *probe = user;
    probe->calls++;
    /* the time course grows and holds a point per frame processed before this one */
    if (update->n_rois != 1 || update->n_points < 1 || update->output->n_maps != 2 ||
        (guint64)update->n_points < probe->last_points)
        probe->series_ok = FALSE;
    probe->last_points = (guint64)update->n_points;
    g_usleep(probe->sleep_us);
}

static void test_slow_display(void)
{
    enum { N = 60 };
    g_autofree char *stack = tmp_path("stack2.tif");
    g_autofree guint16 *frames = write_stack(stack, N);
    g_autofree char *record = tmp_path("slow.tif");
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = fm_frame_source_open_replay(stack, 200, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, fm_roi_new_rectangle("all", 0, 0, W, H));
    display_probe probe = {.sleep_us = 40000, .series_ok = TRUE};
    step_sleep_us = 0;
    fm_live_request request = {
        .method = &test_method,
        .rois = rois,
        .backend = FM_BACKEND_CPU,
        .record_path = record,
        .display = slow_display,
        .display_user = &probe,
        .display_max_hz = 1000,
    };
    g_autoptr(fm_live_summary) summary = live_test_run(source, &request, 30);
    /* the display took a few frames, the rest were skipped and counted; nothing else lost */
    g_assert_cmpuint(summary->stats.processed, ==, N);
    g_assert_cmpuint(summary->stats.recorded, ==, N);
    g_assert_cmpuint(summary->stats.displayed, ==, (guint64)probe.calls);
    g_assert_cmpuint(summary->stats.displayed, >=, 1);
    g_assert_cmpuint(summary->stats.skipped_display, >, N / 2);
    g_assert_cmpuint(summary->stats.displayed + summary->stats.skipped_display, <=, N);
    g_assert_true(probe.series_ok);
    g_autoptr(fm_dataset) rec = fm_dataset_open(record, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(rec), ==, N);
    g_assert_cmpmem(rec->data, fm_dataset_n_bytes(rec), frames, (gsize)W * H * N * 2);
}

static void test_newest_first(void)
{
    enum { N = 40 };
    g_autofree char *stack = tmp_path("stack3.tif");
    g_autofree guint16 *frames = write_stack(stack, N);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = fm_frame_source_open_replay(stack, 400, &error);
    g_assert_no_error(error);
    step_sleep_us = 15000; /* about 66 frames/s against 400 */
    fm_live_request request = {
        .method = &test_method,
        .backend = FM_BACKEND_CPU,
        .save_maps = FM_LIVE_SAVE_SUMMARY,
        .maps_dir = tmp_dir,
    };
    g_autoptr(fm_live_summary) summary = live_test_run(source, &request, 30);
    step_sleep_us = 0;
    g_assert_cmpuint(summary->stats.camera_frames, ==, N);
    g_assert_cmpuint(summary->stats.skipped_processing, >, 0);
    g_assert_cmpuint(summary->stats.processed + summary->stats.skipped_processing, ==, N);
    g_assert_cmpuint(summary->stats.recorded, ==, 0);
    g_assert_false(last_in_order);
    /* summary maps: <name>_mean and <name>_last; the last is the last frame's */
    g_autofree char *last_path = g_build_filename(tmp_dir, "value_last.tif", NULL);
    g_autoptr(fm_dataset) last = fm_tiff_read(last_path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(last), ==, 1);
    const float *l = last->data;
    for (gsize i = 0; i < (gsize)W * H; i++)
        g_assert_cmpfloat(l[i], ==, (float)frames[(gsize)(N - 1) * W * H + i]);
    g_autofree char *mean_path = g_build_filename(tmp_dir, "value_mean.tif", NULL);
    g_assert_true(g_file_test(mean_path, G_FILE_TEST_IS_REGULAR));
}

static void test_no_live_path(void)
{
    g_autofree char *stack = tmp_path("stack4.tif");
    g_autofree guint16 *frames = write_stack(stack, 2);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_frame_source) source = fm_frame_source_open_replay(stack, -1, &error);
    fm_live_request request = {.method = &no_live_method};
    g_assert_null(fm_live_start(source, &request, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "test.offline has no live path"));
}

/* The recorder: Mono12Packed frames unpacked to 16-bit pages, the file complete after every
 * page (read back while still open), an empty recording leaves no file. */
static void test_tiff_record(void)
{
    enum { w = 5, h = 3, n = 4 };
    g_autofree char *path = tmp_path("packed.tif");
    g_autoptr(GError) error = NULL;
    fm_tiff_record *record = fm_tiff_record_open(
        path, w, h, fm_tiff_record_frame_type(FM_PIXFMT_MONO12_PACKED), "test", &error);
    g_assert_no_error(error);
    guint16 expect[n][w * h];
    for (int k = 0; k < n; k++) {
        guint8 packed[(3 * w * h + 1) / 2 + 1];
        memset(packed, 0, sizeof packed);
        for (int i = 0; i < w * h; i++) {
            guint16 v = (guint16)((k * 977 + i * 131) & 0xfff);
            expect[k][i] = v;
            guint8 *p = packed + (i / 2) * 3;
            if (i % 2 == 0) {
                p[0] = (guint8)(v >> 4);
                p[1] = (guint8)((p[1] & 0xf0) | (v & 0x0f));
            } else {
                p[2] = (guint8)(v >> 4);
                p[1] = (guint8)((p[1] & 0x0f) | ((v & 0x0f) << 4));
            }
        }
        fm_frame frame = {.id = (guint64)k,
                          .width = w,
                          .height = h,
                          .format = FM_PIXFMT_MONO12_PACKED,
                          .data = packed,
                          .size = fm_pixfmt_frame_bytes(FM_PIXFMT_MONO12_PACKED, w, h)};
        g_assert_true(fm_tiff_record_append_frame(record, &frame, &error));
        g_assert_no_error(error);
        /* readable as a stack of k + 1 pages before the file is closed */
        g_autoptr(fm_dataset) partial = fm_tiff_read(path, &error);
        g_assert_no_error(error);
        g_assert_cmpint(fm_dataset_frames(partial), ==, k + 1);
        g_assert_cmpmem(partial->data, fm_dataset_n_bytes(partial), expect,
                        (gsize)(k + 1) * w * h * 2);
    }
    g_assert_cmpuint(fm_tiff_record_pages(record), ==, n);
    g_assert_true(fm_tiff_record_close(record, &error));
    g_autofree char *empty = tmp_path("empty.tif");
    record = fm_tiff_record_open(empty, w, h, FM_PIXEL_U16, NULL, &error);
    g_assert_no_error(error);
    g_assert_true(fm_tiff_record_close(record, &error));
    g_assert_false(g_file_test(empty, G_FILE_TEST_EXISTS));
}

/* The maps are written as they come, not kept to the end: while a paced replay runs, its map
 * stack on disk already reads back with the frames processed so far. */
static void test_maps_streamed(void)
{
    enum { N = 40 };
    g_autofree char *stack = tmp_path("stream-in.tif");
    g_autofree guint16 *frames = write_stack(stack, N);
    g_autofree char *maps = tmp_path("stream");
    g_autofree char *record = tmp_path("stream/recording.tif");
    g_mkdir_with_parents(maps, 0755);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = fm_frame_source_open_replay(stack, 100, &error);
    g_assert_no_error(error);
    /* recording: every frame is processed, none skipped for a newer one */
    fm_live_request request = {.method = &test_method,
                               .backend = FM_BACKEND_CPU,
                               .record_path = record,
                               .maps_dir = maps,
                               .save_maps = FM_LIVE_SAVE_ALL};
    fm_live_session *session = fm_live_start(source, &request, &error);
    g_assert_no_error(error);
    g_usleep(200000);
    g_assert_false(fm_live_finished(session));
    g_autofree char *value_path = g_build_filename(maps, "value.tif", NULL);
    /* libtiff maps the file as it is at open: a page linked while it reads lies beyond its
     * map and fails that read; a second look sees it whole */
    g_autoptr(fm_dataset) partial = NULL;
    for (int attempt = 0; attempt < 5 && !partial; attempt++) {
        g_clear_error(&error);
        partial = fm_tiff_read(value_path, &error);
    }
    g_assert_no_error(error);
    int n = fm_dataset_frames(partial);
    g_assert_cmpint(n, >=, 3);
    g_assert_cmpint(n, <, N);
    const float *v = partial->data;
    for (gsize i = 0; i < (gsize)W * H * n; i++)
        g_assert_cmpfloat(v[i], ==, (float)frames[i]);
    g_autoptr(fm_live_summary) summary = live_test_run_to_end(session, 30);
    g_autoptr(fm_dataset) whole = fm_tiff_read(value_path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(whole), ==, N);
    g_assert_cmpmem(whole->data, (gsize)W * H * n * sizeof(float), partial->data,
                    (gsize)W * H * n * sizeof(float));
}

static gsize rss_kib(void)
{
    g_autofree char *status = NULL;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
        return 0;
    const char *line = strstr(status, "VmRSS:");
    return line ? (gsize)g_ascii_strtoull(line + 6, NULL, 10) : 0;
}

/* Memory stays bounded whatever the run's length: 600 frames of two 128 x 128 maps (75 MiB
 * of maps) leave the resident size within 24 MiB of where it started. */
static void test_maps_memory_bounded(void)
{
    enum { N = 600, S = 128 };
    g_autofree char *stack = tmp_path("long-in.tif");
    gsize sizes[3] = {S, S, N};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    guint16 *px = ds->data;
    for (gsize i = 0; i < (gsize)S * S * N; i++)
        px[i] = (guint16)(i * 2654435761u >> 20);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(stack, ds, NULL, &error));
    g_clear_pointer(&ds, fm_dataset_unref);
    g_autofree char *maps = tmp_path("long");
    fm_frame_source *source = fm_frame_source_open_replay(stack, -1, &error);
    g_assert_no_error(error);
    fm_live_request request = {.method = &test_method,
                               .backend = FM_BACKEND_CPU,
                               .maps_dir = maps,
                               .save_maps = FM_LIVE_SAVE_ALL};
    gsize before = rss_kib(), peak = before;
    fm_live_session *session = fm_live_start(source, &request, &error);
    g_assert_no_error(error);
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (!fm_live_finished(session) && g_get_monotonic_time() < deadline) {
        peak = MAX(peak, rss_kib());
        g_usleep(2000);
    }
    g_autoptr(fm_live_summary) summary = fm_live_stop(session, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(summary->stats.processed, ==, N);
    g_assert_cmpuint(peak - before, <, 24 * 1024);
    g_autofree char *twice_path = g_build_filename(maps, "twice.tif", NULL);
    g_autoptr(fm_dataset) twice = fm_tiff_read(twice_path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(twice), ==, N);
}

/* A recording replays at the rate it was recorded at (frame_rate_hz in its description), not
 * at the default 10 frames/s, and the description's key=value list is read in one place. */
static void test_replay_recorded_rate(void)
{
    enum { w = 8, h = 4, n = 12 };
    g_autofree char *path = tmp_path("rate.tif");
    g_autofree char *description =
        fm_tiff_record_describe("Fake_1 (test; a source)", FM_PIXFMT_MONO16, 40, 1000, NAN);
    g_autofree char *rate_text = fm_tiff_description_value(description, "frame_rate_hz");
    g_assert_cmpstr(rate_text, ==, "40");
    g_autofree char *bits = fm_tiff_description_value(description, "bits");
    g_assert_cmpstr(bits, ==, "16");
    g_assert_null(fm_tiff_description_value(description, "frame_rate"));
    g_autoptr(GError) error = NULL;
    fm_tiff_record *record = fm_tiff_record_open(path, w, h, FM_PIXEL_U16, description, &error);
    g_assert_no_error(error);
    guint16 samples[w * h] = {0};
    for (int k = 0; k < n; k++)
        g_assert_true(fm_tiff_record_append(record, samples, &error));
    g_assert_true(fm_tiff_record_close(record, &error));
    fm_frame_source *source = fm_frame_source_open_replay(path, 0, &error);
    g_assert_no_error(error);
    fm_source_settings settings = {0};
    g_assert_true(fm_frame_source_get_settings(source, &settings, &error));
    g_assert_true(settings.frame_rate_hz.available);
    g_assert_cmpfloat(settings.frame_rate_hz.value, ==, 40);
    fm_source_settings_clear(&settings);
    /* and it paces at that rate: 12 frames at 40/s take about 0.3 s, not 1.2 s */
    g_assert_true(fm_frame_source_start(source, 0, &error));
    gint64 t0 = g_get_monotonic_time();
    int got = 0;
    for (;;) {
        fm_frame *frame = NULL;
        fm_source_status st = fm_frame_source_next(source, 1000000, &frame, &error);
        if (st != FM_SOURCE_FRAME)
            break;
        fm_frame_source_release(source, frame);
        got++;
    }
    double seconds = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
    g_assert_cmpint(got, ==, n);
    g_assert_cmpfloat(seconds, <, 0.8);
    fm_frame_source_free(source);
}

/* Recording started and stopped while running: the frames in between, contiguous and bit for
 * bit, listed with the run as an export (the maps' input is the replayed file, its dataset). */
static void test_record_toggle(void)
{
    enum { N = 60 };
    g_autofree char *stack = tmp_path("stack5.tif");
    g_autofree guint16 *frames = write_stack(stack, N);
    g_autofree char *record = tmp_path("toggle.tif");
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = fm_frame_source_open_replay(stack, 100, &error);
    g_assert_no_error(error);
    fm_live_request request = {
        .method = &test_method, .backend = FM_BACKEND_CPU, .catalogue = TRUE};
    fm_live_session *session = fm_live_start(source, &request, &error);
    g_assert_no_error(error);
    g_usleep(150000);
    g_assert_true(fm_live_set_recording(session, record, &error));
    g_assert_no_error(error);
    g_usleep(200000);
    g_assert_true(fm_live_set_recording(session, NULL, &error));
    g_autoptr(fm_live_summary) summary = live_test_run_to_end(session, 30);
    g_assert_cmpuint(summary->stats.recorded, >, 5);
    g_assert_cmpuint(summary->stats.recorded, <, N);
    g_autoptr(fm_dataset) rec = fm_dataset_open(record, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    int n = fm_dataset_frames(rec);
    g_assert_cmpuint((guint64)n, ==, summary->stats.recorded);
    gsize frame_bytes = (gsize)W * H * 2;
    int first = -1;
    for (int k = 0; k < N && first < 0; k++)
        if (memcmp(rec->data, frames + (gsize)k * W * H, frame_bytes) == 0)
            first = k;
    g_assert_cmpint(first, >, 0);
    g_assert_cmpint(first + n, <, N);
    g_assert_cmpmem(rec->data, fm_dataset_n_bytes(rec), frames + (gsize)first * W * H,
                    (gsize)n * frame_bytes);
    g_autoptr(fm_catalogue) cat = NULL;
    g_autoptr(fm_catalogue_run) run = live_test_catalogue_run(summary->maps_run_id, &cat);
    /* the frames came from the replayed file: it is the run's dataset, hashed, named by the note */
    g_autofree char *replayed = g_canonicalize_filename(stack, NULL);
    g_assert_cmpstr(run->dataset_path, ==, replayed);
    g_assert_nonnull(run->dataset_sha256);
    g_autofree char *note_source = fm_live_note_source(run->error_message);
    g_assert_cmpstr(note_source, ==, "replay of stack5.tif");
    /* no folder of its own: the maps went straight into the catalogue's folder for the run */
    g_assert_cmpuint(run->outputs->len, ==, 2);
    g_autofree char *run_dir = g_strdup_printf("runs/%" G_GINT64_FORMAT, run->id);
    for (guint i = 0; i < run->outputs->len; i++) {
        const fm_catalogue_output *o = run->outputs->pdata[i];
        g_assert_nonnull(strstr(o->file, run_dir));
        g_assert_cmpuint(o->stats.valid_pixels, ==, (gsize)W * H * summary->stats.processed);
    }
    fm_map *value = fm_catalogue_load_map(cat, run->id, "value", &error);
    g_assert_no_error(error);
    g_assert_cmpuint((guint64)value->n_frames, ==, summary->stats.processed);
    fm_map_free(value);
    g_assert_cmpuint(run->exports->len, ==, 1);
    const fm_catalogue_export *e = run->exports->pdata[0];
    g_assert_cmpstr(e->format, ==, "tiff");
    g_assert_cmpstr(e->file, ==, summary->record_path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-live-XXXXXX", NULL);
    g_autofree char *cat_dir = g_build_filename(tmp_dir, "catalogue", NULL);
    g_setenv("FLUXMAP_DATA_DIR", cat_dir, TRUE);
    g_test_add_func("/live/record-and-maps", test_record_and_maps);
    g_test_add_func("/live/slow-display", test_slow_display);
    g_test_add_func("/live/newest-first", test_newest_first);
    g_test_add_func("/live/no-live-path", test_no_live_path);
    g_test_add_func("/live/tiff-record", test_tiff_record);
    g_test_add_func("/live/record-toggle", test_record_toggle);
    g_test_add_func("/live/replay-recorded-rate", test_replay_recorded_rate);
    g_test_add_func("/live/maps-streamed", test_maps_streamed);
    g_test_add_func("/live/maps-memory-bounded", test_maps_memory_bounded);
    int status = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        status = status ? status : 1;
    g_free(tmp_dir);
    return status;
}
