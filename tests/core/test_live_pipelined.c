/* A pipelined live step (fm_live_ops.flush, as the CUDA steps run) through the session, with no
 * device: a stand-in step keeps frames in flight and returns each frame's output later. Every
 * frame's output arrives once, in frame order, the last ones by flush; the maps and the ROI time
 * course are those of the frames in order; a frame's buffer goes back to the source only after
 * the step has collected it (the source poisons a released buffer and the step checks it); a
 * pause in the frames finishes those in flight; a failing step still gives every buffer back. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/frame_source_private.h"
#include "app/core/io/tiff.h"
#include "app/core/live.h"
#include "app/core/roi.h"
#include "tests/core/live-test-util.h"

enum { W = 40, H = 24, N = 25 };

static char *tmp_dir;

/* The sample frame k has at pixel i: distinct per frame and pixel, never the poison. */
static guint16 sample(int k, gsize i)
{
    return (guint16)(1 + (k * 131 + (int)(i % 977) * 7) % 4000);
}

/* ---- an in-memory source: frame k in a buffer of its own, poisoned when released ---- */

#define POISON 0xEEEEu

typedef struct {
    fm_frame_source base;
    fm_frame frames[N];
    guint16 *buffers[N];
    gint released[N]; /* atomic */
    gint n_released;  /* atomic */
    int next;
    gboolean running;
} mem_source;

/* Frames after the first gate_after wait (as a slow camera's) until gate_open is set. */
static int gate_after = -1;
static gint gate_open; /* atomic */

static mem_source *MEM(fm_frame_source *s)
{
    return (mem_source *)s;
}

static gboolean mem_settings(fm_frame_source *source, fm_source_settings *out, GError **error)
{
    out->description = g_strdup("memory");
    out->width = out->sensor_width = W;
    out->height = out->sensor_height = H;
    out->format = FM_PIXFMT_MONO16;
    out->format_name = g_strdup(fm_pixfmt_name(FM_PIXFMT_MONO16));
    out->formats_offered = 1u << FM_PIXFMT_MONO16;
    out->is_camera = FALSE; /* no rate: paced by the processing, every frame processed */
    out->n_frames = N;
    return TRUE;
}

static gboolean mem_refuse(fm_frame_source *source, double value, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "not here");
    return FALSE;
}

static gboolean mem_region(fm_frame_source *source, int x, int y, int w, int h, GError **error)
{
    return mem_refuse(source, 0, error);
}

static gboolean mem_format(fm_frame_source *source, fm_pixfmt format, GError **error)
{
    return format == FM_PIXFMT_MONO16;
}

static gboolean mem_start(fm_frame_source *source, int n_buffers, GError **error)
{
    mem_source *m = MEM(source);
    for (int k = 0; k < N; k++) {
        m->buffers[k] = g_new(guint16, (gsize)W * H);
        for (gsize i = 0; i < (gsize)W * H; i++)
            m->buffers[k][i] = sample(k, i);
        m->frames[k] = (fm_frame){.id = (guint64)k,
                                  .width = W,
                                  .height = H,
                                  .format = FM_PIXFMT_MONO16,
                                  .data = m->buffers[k],
                                  .size = sizeof(guint16) * W * H,
                                  .opaque = GINT_TO_POINTER(k)};
    }
    m->running = TRUE;
    return TRUE;
}

static fm_source_status mem_next(fm_frame_source *source, gint64 timeout_us, fm_frame **frame,
                                 GError **error)
{
    mem_source *m = MEM(source);
    if (!m->running || m->next >= N)
        return FM_SOURCE_END;
    if (m->next == gate_after && !g_atomic_int_get(&gate_open)) {
        g_usleep((gulong)MIN(timeout_us, 10000));
        return FM_SOURCE_TIMEOUT;
    }
    *frame = &m->frames[m->next++];
    fm_frame_source_count_delivered(source);
    return FM_SOURCE_FRAME;
}

static void mem_release(fm_frame_source *source, fm_frame *frame)
{
    mem_source *m = MEM(source);
    int k = GPOINTER_TO_INT(frame->opaque);
    for (gsize i = 0; i < (gsize)W * H; i++)
        m->buffers[k][i] = POISON; /* as a camera refilling the buffer would */
    g_atomic_int_inc(&m->released[k]);
    g_atomic_int_inc(&m->n_released);
}

static void mem_dropped(fm_frame_source *source, guint64 *by_camera, guint64 *by_link)
{
    *by_camera = *by_link = 0;
}

static void mem_stop(fm_frame_source *source)
{
    MEM(source)->running = FALSE;
}

static int last_released_total = -1;
static gboolean last_released_once;

static void mem_destroy(fm_frame_source *source)
{
    mem_source *m = MEM(source);
    last_released_total = g_atomic_int_get(&m->n_released);
    last_released_once = TRUE;
    for (int k = 0; k < N; k++) {
        if (k < m->next && g_atomic_int_get(&m->released[k]) != 1)
            last_released_once = FALSE;
        g_free(m->buffers[k]);
    }
    g_free(m);
}

static const fm_frame_source_ops mem_ops = {
    .get_settings = mem_settings,
    .set_exposure_us = mem_refuse,
    .set_gain_db = mem_refuse,
    .set_frame_rate = mem_refuse,
    .set_region = mem_region,
    .set_format = mem_format,
    .start = mem_start,
    .next = mem_next,
    .release = mem_release,
    .dropped = mem_dropped,
    .stop = mem_stop,
    .destroy = mem_destroy,
};

static fm_frame_source *mem_source_new(void)
{
    mem_source *m = g_new0(mem_source, 1);
    fm_frame_source_init_base(&m->base, &mem_ops, "memory");
    return &m->base;
}

/* ---- a pipelined stand-in step: "value" = the frame as floats, DEPTH frames in flight ---- */

enum { DEPTH = 3 };

static int fail_at = -1; /* frame() fails on this frame (a test sets it) */

struct fm_live_step {
    const fm_frame *in_flight[DEPTH]; /* oldest first */
    int n_in_flight;
    int given, returned;
    gboolean intact, in_order;
    fm_map *value;
    const fm_map *maps[1];
};

static fm_live_step *step_begin(const fm_method *method, const fm_params *params, int width,
                                int height, fm_pixfmt format, fm_backend backend, GError **error)
{
    fm_live_step *step = g_new0(fm_live_step, 1);
    step->intact = step->in_order = TRUE;
    step->value = fm_map_new("value", "1", width, height, 1);
    step->maps[0] = step->value;
    return step;
}

/* The oldest frame's output, read from its buffer only now (a device reads it late): it must
 * still hold the frame the camera sent. */
static void collect(fm_live_step *step, fm_live_output *out)
{
    const fm_frame *frame = step->in_flight[0];
    memmove(step->in_flight, step->in_flight + 1, sizeof step->in_flight[0] * (DEPTH - 1));
    step->n_in_flight--;
    const guint16 *px = frame->data;
    for (gsize i = 0; i < (gsize)W * H; i++) {
        if (px[i] != sample((int)frame->id, i))
            step->intact = FALSE;
        step->value->data[i] = px[i];
    }
    if (frame->id != (guint64)step->returned++)
        step->in_order = FALSE;
    out->ready = TRUE;
    out->maps = step->maps;
    out->n_maps = 1;
    out->of_frame = frame;
}

static gboolean step_frame(fm_live_step *step, const fm_frame *frame, fm_live_output *out,
                           GError **error)
{
    memset(out, 0, sizeof *out);
    if (step->given++ == fail_at) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, "stand-in failure");
        return FALSE;
    }
    step->in_flight[step->n_in_flight++] = frame;
    if (step->n_in_flight == DEPTH)
        collect(step, out); /* the queue is full: the oldest is done */
    return TRUE;
}

static gboolean step_flush(fm_live_step *step, fm_live_output *out, GError **error)
{
    memset(out, 0, sizeof *out);
    if (step->n_in_flight > 0)
        collect(step, out);
    return TRUE;
}

static void step_describe(fm_live_step *step, char **backend, char **device, char **note)
{
    *backend = g_strdup("cpu");
    *device = g_strdup("pipelined test step");
    *note = NULL;
}

static int last_given, last_returned, last_left;
static gboolean last_intact, last_in_order;

static void step_end(fm_live_step *step)
{
    last_given = step->given;
    last_returned = step->returned;
    last_left = step->n_in_flight;
    last_intact = step->intact;
    last_in_order = step->in_order;
    fm_map_free(step->value);
    g_free(step);
}

static const fm_live_ops pipelined_ops = {
    .begin = step_begin,
    .frame = step_frame,
    .describe = step_describe,
    .end = step_end,
    .flush = step_flush,
};

static const fm_output_spec outputs[] = {{.name = "value", .unit = "1"}};
static const fm_method pipelined_method = {
    .id = "test.pipelined",
    .family = "test",
    .title = "pipelined live test",
    .outputs = outputs,
    .n_outputs = 1,
    .live = &pipelined_ops,
};

static fm_live_session *start(const char *maps_dir, GPtrArray *rois)
{
    g_autoptr(GError) error = NULL;
    fm_live_request request = {
        .method = &pipelined_method,
        .rois = rois,
        .backend = FM_BACKEND_CPU,
        .maps_dir = maps_dir,
        .save_maps = FM_LIVE_SAVE_ALL,
    };
    fm_live_session *session = fm_live_start(mem_source_new(), &request, &error);
    g_assert_no_error(error);
    return session;
}

static fm_live_summary *run(const char *maps_dir, GPtrArray *rois)
{
    return live_test_run_to_end(start(maps_dir, rois), 30);
}

static void test_every_frame_in_order(void)
{
    g_autofree char *maps = g_build_filename(tmp_dir, "pipelined", NULL);
    g_mkdir_with_parents(maps, 0755);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, fm_roi_new_rectangle("box", 3, 2, 11, 9));
    fail_at = -1;
    g_autoptr(fm_live_summary) summary = run(maps, rois);
    g_assert_null(summary->message);
    g_assert_cmpint(summary->end, ==, FM_LIVE_END_ASKED);
    g_assert_cmpuint(summary->stats.camera_frames, ==, N);
    g_assert_cmpuint(summary->stats.processed, ==, N); /* the last DEPTH - 1 by flush */
    g_assert_cmpint(last_given, ==, N);
    g_assert_cmpint(last_returned, ==, N);
    g_assert_cmpint(last_left, ==, 0);
    g_assert_true(last_in_order);
    g_assert_true(last_intact); /* no buffer went back before its frame was collected */
    g_assert_cmpint(last_released_total, ==, N);
    g_assert_true(last_released_once);

    /* the maps: frame k's at page k, every frame once */
    g_autofree char *value_path = g_build_filename(maps, "value.tif", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) value = fm_tiff_read(value_path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(value), ==, N);
    const float *v = value->data;
    for (int k = 0; k < N; k++)
        for (gsize i = 0; i < (gsize)W * H; i++)
            g_assert_cmpfloat(v[(gsize)k * W * H + i], ==, (float)sample(k, i));

    /* the ROI time course: a row per frame, in frame order, with that frame's mean */
    g_autofree char *csv_path = g_build_filename(maps, "roi_time_course.csv", NULL);
    g_autofree char *csv = NULL;
    g_assert_true(g_file_get_contents(csv_path, &csv, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, N + 2); /* header, N rows, "" */
    for (int k = 0; k < N; k++) {
        double sum = 0;
        for (int y = 2; y < 9; y++)
            for (int x = 3; x < 11; x++)
                sum += sample(k, (gsize)y * W + x);
        g_auto(GStrv) cells = g_strsplit(lines[k + 1], ",", -1);
        g_assert_cmpint(atoi(cells[0]), ==, k);
        g_assert_cmpfloat_with_epsilon(g_ascii_strtod(cells[2], NULL), sum / 56, 1e-6);
    }
}

/* A step that fails mid-run: the run says so, and every frame it held still goes back. */
static void test_failure_releases(void)
{
    fail_at = 7;
    g_autoptr(fm_live_summary) summary = run(NULL, NULL);
    fail_at = -1;
    g_assert_cmpint(summary->end, ==, FM_LIVE_END_PROCESS_FAILED);
    g_assert_nonnull(strstr(summary->message, "stand-in failure"));
    g_assert_true(last_intact);
    g_assert_true(last_in_order);
    g_assert_cmpint(last_left, ==, 0); /* what was in flight was waited for */
    g_assert_cmpint(last_released_total, ==, (int)summary->stats.camera_frames);
    g_assert_true(last_released_once);
    /* the frames before the failure that came back were taken, none after */
    g_assert_cmpuint(summary->stats.processed, ==, 7 - (DEPTH - 1));
}

/* A camera that pauses: the frames in flight are finished while no frame comes, so the newest
 * frame's maps (and display) do not wait for the next frame. */
static void test_idle_finishes_in_flight(void)
{
    enum { GATE = 3 };
    gate_after = GATE;
    g_atomic_int_set(&gate_open, 0);
    fm_live_session *session = start(NULL, NULL);
    fm_live_stats stats = {0};
    gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    do {
        g_usleep(2000);
        fm_live_get_stats(session, &stats);
    } while (stats.processed < GATE && g_get_monotonic_time() < deadline);
    g_assert_cmpuint(stats.camera_frames, ==, GATE);
    g_assert_cmpuint(stats.processed, ==, GATE); /* not GATE - (DEPTH - 1) */
    g_atomic_int_set(&gate_open, 1);
    g_autoptr(fm_live_summary) summary = live_test_run_to_end(session, 30);
    gate_after = -1;
    g_assert_cmpuint(summary->stats.processed, ==, N);
    g_assert_cmpint(last_returned, ==, N);
    g_assert_true(last_in_order);
    g_assert_true(last_intact);
    g_assert_cmpint(last_released_total, ==, N);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fm-live-pipelined-XXXXXX", NULL);
    g_setenv("FLUXMAP_DATA_DIR", tmp_dir, TRUE);
    g_test_add_func("/live-pipelined/every-frame-in-order", test_every_frame_in_order);
    g_test_add_func("/live-pipelined/failure-releases", test_failure_releases);
    g_test_add_func("/live-pipelined/idle-finishes-in-flight", test_idle_finishes_in_flight);
    int rc = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        g_printerr("could not remove %s\n", tmp_dir);
    g_free(tmp_dir);
    return rc;
}
