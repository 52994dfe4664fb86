/* Live runs from Aravis's in-process fake camera fed with Fluxmap's simulated speckle frames
 * (tests/io/fake_camera_feed.c): lsi.spatial's live maps equal the offline run on the
 * recording bit for bit (CPU), the recording equals the frames sent; the camera lost mid-run
 * (message, recording kept and readable, catalogue consistent); a pixel format Fluxmap does
 * not read refused before anything streams. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "app/core/live.h"
#include "app/core/lsi/lsi_sim.h"
#include "tests/core/live-test-util.h"
#include "tests/io/fake_camera_feed.h"

static char *tmp_dir;

/* A small simulated speckle stack (12-bit samples in uint16). */
static fm_dataset *speckle(int n_frames)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 96;
    p.height = 64;
    p.n_frames = n_frames;
    p.bits = 12;
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_lsi_simulate(&p, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ds->type, ==, FM_PIXEL_U16);
    return ds;
}

static void assert_maps_equal(const char *live_path, const fm_map *offline)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) live = fm_tiff_read(live_path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_width(live), ==, offline->width);
    g_assert_cmpint(fm_dataset_height(live), ==, offline->height);
    g_assert_cmpint(fm_dataset_frames(live), ==, offline->n_frames);
    g_assert_cmpmem(live->data, fm_dataset_n_bytes(live), offline->data,
                    fm_map_n_values(offline) * sizeof(float));
}

static void test_lsi_equals_offline(gconstpointer data)
{
    fm_pixfmt format = GPOINTER_TO_INT(data);
    enum { N = 24 };
    g_autoptr(fm_dataset) sim = speckle(N);
    int w = fm_dataset_width(sim), h = fm_dataset_height(sim);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = NULL;
    g_autoptr(fm_fake_camera_feed) feed =
        fm_fake_camera_feed_open(sim->data, N, w, h, format, 60, &source, &error);
    g_assert_no_error(error);
    const fm_method *method = fm_method_find("lsi.spatial");
    g_assert_nonnull(method);
    if (!method->live) {
        g_test_skip("lsi.spatial has no live step yet");
        fm_frame_source_free(source);
        return;
    }
    g_autofree char *dir = g_build_filename(tmp_dir, fm_pixfmt_name(format), NULL);
    g_autofree char *record = g_build_filename(dir, "recording.tif", NULL);
    g_mkdir_with_parents(dir, 0755);
    g_autoptr(fm_params) params = fm_method_default_params(method);
    fm_live_request request = {
        .method = method,
        .params = params,
        .backend = FM_BACKEND_CPU,
        .max_frames = N,
        .record_path = record,
        .maps_dir = dir,
    };
    g_autoptr(fm_live_summary) summary = live_test_run(source, &request, 60);
    g_assert_cmpint(summary->end, ==, FM_LIVE_END_ASKED);
    g_assert_cmpuint(summary->stats.recorded, ==, N);
    g_assert_cmpuint(summary->stats.processed, ==, N);

    /* the recording is what the camera sent: the stack, bit for bit */
    g_autoptr(fm_dataset) rec = fm_dataset_open(record, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(rec), ==, N);
    g_assert_cmpmem(rec->data, fm_dataset_n_bytes(rec), sim->data, fm_dataset_n_bytes(sim));

    /* the offline run on the recording gives the live maps, bit for bit */
    fm_job_context context = {.backend = FM_BACKEND_CPU};
    g_autoptr(fm_result) offline = fm_method_run(method, rec, params, NULL, &context, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(offline->maps->len, >=, 1);
    for (guint i = 0; i < offline->maps->len; i++) {
        const fm_map *map = offline->maps->pdata[i];
        g_autofree char *name = g_strconcat(map->name, ".tif", NULL);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        assert_maps_equal(path, map);
    }
}

static void test_camera_lost(void)
{
    enum { N = 16, LOST_AFTER = 11 };
    g_autoptr(fm_dataset) sim = speckle(N);
    int w = fm_dataset_width(sim), h = fm_dataset_height(sim);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = NULL;
    g_autoptr(fm_fake_camera_feed) feed =
        fm_fake_camera_feed_open(sim->data, N, w, h, FM_PIXFMT_MONO16, 50, &source, &error);
    g_assert_no_error(error);
    fm_fake_camera_feed_disappear_after(feed, LOST_AFTER, TRUE);
    const fm_method *method = fm_method_find("lsi.spatial");
    if (!method->live) {
        g_test_skip("lsi.spatial has no live step yet");
        fm_frame_source_free(source);
        return;
    }
    g_autofree char *dir = g_build_filename(tmp_dir, "lost", NULL);
    g_autofree char *record = g_build_filename(dir, "recording.tif", NULL);
    g_mkdir_with_parents(dir, 0755);
    fm_live_request request = {
        .method = method,
        .backend = FM_BACKEND_CPU,
        .record_path = record,
        .maps_dir = dir,
        .catalogue = TRUE,
    };
    g_autoptr(fm_live_summary) summary = live_test_run(source, &request, 60);
    /* the message names the camera, the loss and the recording kept */
    g_assert_cmpint(summary->end, ==, FM_LIVE_END_SOURCE_LOST);
    g_assert_nonnull(summary->message);
    g_test_message("message: %s", summary->message);
    g_assert_nonnull(strstr(summary->message, "Fake_1"));
    g_autofree char *kept = g_strdup_printf("the recording (%d frames) is kept", LOST_AFTER);
    g_assert_nonnull(strstr(summary->message, kept));
    g_assert_cmpuint(summary->stats.recorded, ==, LOST_AFTER);
    /* the recording: complete, readable, the frames sent before the loss */
    g_autoptr(fm_dataset) rec = fm_dataset_open(summary->record_path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(rec), ==, LOST_AFTER);
    g_assert_cmpmem(rec->data, fm_dataset_n_bytes(rec), sim->data, fm_dataset_n_bytes(rec));
    /* the catalogue: the run done with the message, its maps present, the recording its input */
    g_autoptr(fm_catalogue) cat = NULL;
    g_autoptr(fm_catalogue_run) run = live_test_catalogue_run(summary->maps_run_id, &cat);
    g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    g_assert_nonnull(run->error_message);
    g_assert_nonnull(strstr(run->error_message, kept));
    /* the note's first line names the camera */
    g_autofree char *note_source = fm_live_note_source(run->error_message);
    g_assert_nonnull(note_source);
    g_assert_true(g_str_has_prefix(note_source, "live from Fake_1 ("));
    g_assert_cmpstr(run->dataset_path, ==, summary->record_path);
    g_assert_cmpuint(run->outputs->len, >=, 1);
    for (guint i = 0; i < run->outputs->len; i++) {
        const fm_catalogue_output *o = run->outputs->pdata[i];
        g_assert_true(g_file_test(o->file, G_FILE_TEST_IS_REGULAR));
        fm_map *map = fm_catalogue_load_map(cat, run->id, o->name, &error);
        g_assert_no_error(error);
        g_assert_cmpint(map->n_frames, ==, LOST_AFTER);
        fm_map_free(map);
    }
}

static void test_unreadable_format(void)
{
    g_autoptr(fm_dataset) sim = speckle(2);
    g_autoptr(GError) error = NULL;
    fm_frame_source *source = NULL;
    g_autoptr(fm_fake_camera_feed) feed =
        fm_fake_camera_feed_open(sim->data, 2, fm_dataset_width(sim), fm_dataset_height(sim),
                                 FM_PIXFMT_MONO8, 30, &source, &error);
    g_assert_no_error(error);
    g_assert_true(fm_fake_camera_feed_set_raw_format(feed, 0x02180014u /* RGB8 */, &error));
    fm_live_request request = {.method = fm_method_find("lsi.spatial"), .backend = FM_BACKEND_CPU};
    if (!request.method->live) {
        g_test_skip("lsi.spatial has no live step yet");
        fm_frame_source_free(source);
        return;
    }
    g_assert_null(fm_live_start(source, &request, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_test_message("message: %s", error->message);
    g_assert_nonnull(strstr(error->message, "RGB8"));
    g_assert_nonnull(strstr(error->message, "Mono12Packed"));
    fm_frame_source_free(source); /* still the caller's */
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-live-camera-XXXXXX", NULL);
    g_autofree char *cat_dir = g_build_filename(tmp_dir, "catalogue", NULL);
    g_setenv("FLUXMAP_DATA_DIR", cat_dir, TRUE);
    g_test_add_data_func("/live-camera/lsi-equals-offline/mono12",
                         GINT_TO_POINTER(FM_PIXFMT_MONO12), test_lsi_equals_offline);
    g_test_add_data_func("/live-camera/lsi-equals-offline/mono12packed",
                         GINT_TO_POINTER(FM_PIXFMT_MONO12_PACKED), test_lsi_equals_offline);
    g_test_add_data_func("/live-camera/lsi-equals-offline/mono16",
                         GINT_TO_POINTER(FM_PIXFMT_MONO16), test_lsi_equals_offline);
    g_test_add_func("/live-camera/camera-lost", test_camera_lost);
    g_test_add_func("/live-camera/unreadable-format", test_unreadable_format);
    int status = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
    if (system(cmd) != 0)
        status = status ? status : 1;
    g_free(tmp_dir);
    return status;
}
