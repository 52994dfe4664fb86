/* fluxmap-cli live ($FLUXMAP_CLI): Aravis's fake camera (FLUXMAP_FAKE_CAMERA=1) through
 * lsi.spatial with a recording gives the maps 'fluxmap-cli run' gives on the recording, bit for
 * bit on the CPU, both catalogued; a replayed file with an ROI writes the time course; OCT
 * replayed equals 'run' (the en-face kept once); a run killed mid-way is interrupted in the
 * catalogue with its recording readable; a method without a live path, no source and a bad
 * --save-maps are exit 2. */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "app/core/io/tiff.h"
#include "tests/cli/cli-test-util.h"

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(cli_result, cli_result_clear)

static char **env_fake;

static void assert_same_file(const char *a, const char *b)
{
    g_autofree char *ta = NULL, *tb = NULL;
    gsize na = 0, nb = 0;
    g_assert_true(g_file_get_contents(a, &ta, &na, NULL));
    g_assert_true(g_file_get_contents(b, &tb, &nb, NULL));
    g_assert_cmpmem(ta, na, tb, nb);
}

/* 'catalogue show' of the run a 'live' printed ("catalogue run N"). */
static char *show_live_run(const cli_result *live)
{
    const char *at = strstr(live->out, "catalogue run ");
    g_assert_nonnull(at);
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT,
                                          g_ascii_strtoll(at + strlen("catalogue run "), NULL, 10));
    g_auto(cli_result) show = cli_test_run(NULL, env_fake, "catalogue", "show", id, NULL);
    g_assert_cmpint(show.status, ==, 0);
    return g_strdup(show.out);
}

static void test_camera_equals_run(void)
{
    g_autofree char *live_dir = cli_test_tmp_path("live");
    g_autofree char *run_dir = cli_test_tmp_path("run");
    g_auto(cli_result) live =
        cli_test_run(NULL, env_fake, "live", "lsi.spatial", "--camera", "Fake_1", "--frames", "40",
                     "--record", "-o", live_dir, "--backend", "cpu", NULL);
    if (live.status != 0)
        g_printerr("%s%s", live.out, live.err);
    g_assert_cmpint(live.status, ==, 0);
    g_assert_nonnull(strstr(live.out, "frames: camera 40"));
    g_assert_nonnull(strstr(live.out, "recorded 40"));
    g_assert_nonnull(strstr(live.out, "catalogue run "));
    g_autofree char *recording = g_build_filename(live_dir, "recording.tif", NULL);
    g_auto(cli_result) run = cli_test_run(NULL, env_fake, "run", "lsi.spatial", recording, "-o",
                                          run_dir, "--backend", "cpu", NULL);
    g_assert_cmpint(run.status, ==, 0);
    for (const char *const *name = (const char *const[]){"contrast.tif", "sfi.tif", NULL}; *name;
         name++) {
        g_autofree char *a = g_build_filename(live_dir, *name, NULL);
        g_autofree char *b = g_build_filename(run_dir, *name, NULL);
        assert_same_file(a, b);
    }
    /* both runs in the catalogue on the one recording */
    g_auto(cli_result) list = cli_test_run(NULL, env_fake, "catalogue", "list", NULL);
    g_assert_cmpint(list.status, ==, 0);
    const char *first = strstr(list.out, "recording.tif");
    g_assert_nonnull(first);
    g_assert_nonnull(strstr(first + 1, "recording.tif"));
    /* the live run names the camera its frames came from, its recording the dataset */
    g_autofree char *show = show_live_run(&live);
    g_assert_nonnull(strstr(show, "  note     live from Fake_1 ("));
    g_autofree char *canonical = g_canonicalize_filename(recording, NULL);
    g_autofree char *dataset = g_strconcat("  dataset  ", canonical, "\n", NULL);
    g_assert_nonnull(strstr(show, dataset));
}

static void test_replay_roi(void)
{
    g_autofree char *stack = cli_test_tmp_path("speckle.tif");
    g_autofree char *roi = cli_test_tmp_path("roi.json");
    g_autofree char *dir = cli_test_tmp_path("replay");
    g_auto(cli_result) sim =
        cli_test_run(NULL, env_fake, "simulate", "lsi", "--frames", "12", "-o", stack, NULL);
    g_assert_cmpint(sim.status, ==, 0);
    g_assert_true(g_file_set_contents(
        roi, "[{\"kind\":\"rectangle\",\"name\":\"vessel\",\"points\":[[10,10],[40,30]]}]", -1,
        NULL));
    g_auto(cli_result) live = cli_test_run(NULL, env_fake, "live", "lsi.spatial", "--replay", stack,
                                           "--fps", "-1", "--roi", roi, "--save-maps", "summary",
                                           "--record", "-o", dir, "--backend", "cpu", NULL);
    g_assert_cmpint(live.status, ==, 0);
    g_autofree char *csv_path = g_build_filename(dir, "roi_time_course.csv", NULL);
    g_autofree char *csv = NULL;
    g_assert_true(g_file_get_contents(csv_path, &csv, NULL, NULL));
    g_assert_true(g_str_has_prefix(csv, "frame,t_s,vessel\n"));
    g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
    g_assert_cmpuint(g_strv_length(lines), ==, 12 + 2);
    for (const char *const *name =
             (const char *const[]){"sfi_mean.tif", "sfi_last.tif", "recording.tif", NULL};
         *name; name++) {
        g_autofree char *path = g_build_filename(dir, *name, NULL);
        g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));
    }
}

/* OCT: the en-face image is cumulative (a row per B-scan): a live replay keeps it once, as it
 * ended, so that both maps equal the offline run's byte for byte on the CPU (before, every
 * frame's en-face was kept as a page: alines x 1 x bscans). */
static void test_oct_replay_equals_run(void)
{
    g_autofree char *raw = cli_test_tmp_path("scan.raw");
    g_autofree char *calib = cli_test_tmp_path("scan.calib.csv");
    g_autofree char *live_dir = cli_test_tmp_path("oct-live");
    g_autofree char *run_dir = cli_test_tmp_path("oct-run");
    g_auto(cli_result) sim = cli_test_run(NULL, env_fake, "simulate", "oct", "--pixels", "512",
                                          "--alines", "48", "--bscans", "12", "-o", raw, NULL);
    g_assert_cmpint(sim.status, ==, 0);
    g_autofree char *calib_opt = g_strconcat("--calibration_file=", calib, NULL);
    g_auto(cli_result) live =
        cli_test_run(NULL, env_fake, "live", "oct.bscan", "--replay", raw, "--fps", "-1", "-o",
                     live_dir, calib_opt, "--backend", "cpu", NULL);
    if (live.status != 0)
        g_printerr("%s%s", live.out, live.err);
    g_assert_cmpint(live.status, ==, 0);
    g_assert_nonnull(strstr(live.out, "processed 12"));
    g_auto(cli_result) run = cli_test_run(NULL, env_fake, "run", "oct.bscan", raw, "-o", run_dir,
                                          "--backend", "cpu", NULL);
    g_assert_cmpint(run.status, ==, 0);
    for (const char *const *name = (const char *const[]){"bscan_db.tif", "enface.tif", NULL}; *name;
         name++) {
        g_autofree char *a = g_build_filename(live_dir, *name, NULL);
        g_autofree char *b = g_build_filename(run_dir, *name, NULL);
        assert_same_file(a, b);
    }
    /* not recorded: the replayed file is the live run's dataset, hashed, and its note says so */
    g_autofree char *show = show_live_run(&live);
    g_autofree char *canonical = g_canonicalize_filename(raw, NULL);
    g_autofree char *dataset = g_strconcat("  dataset  ", canonical, "\n", NULL);
    g_assert_nonnull(strstr(show, dataset));
    g_assert_null(strstr(show, "  sha256   -\n"));
    g_assert_nonnull(strstr(show, "  note     replay of scan.raw"));
}

/* A live run is in the catalogue from its start: a process killed mid-run leaves it, and the
 * next catalogue open marks it interrupted with its recording (a TIFF stack of the frames
 * recorded before the kill, bit for bit) and its note still naming its source. */
static void test_killed_run_interrupted(void)
{
    g_autofree char *stack = cli_test_tmp_path("kill-src.tif");
    g_autofree char *dir = cli_test_tmp_path("killed");
    g_auto(cli_result) sim = cli_test_run(NULL, env_fake, "simulate", "lsi", "--frames", "200",
                                          "--width", "64", "--height", "48", "-o", stack, NULL);
    g_assert_cmpint(sim.status, ==, 0);
    const char *argv[] = {cli_path,   "live", "lsi.spatial", "--replay",  stack, "--fps", "20",
                          "--record", "-o",   dir,           "--backend", "cpu", NULL};
    GPid pid = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_async(NULL, (char **)argv, env_fake,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                                    G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &pid, &error));
    g_autofree char *recording = g_build_filename(dir, "recording.tif", NULL);
    gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    int seen = 0;
    while (seen < 5 && g_get_monotonic_time() < deadline) {
        g_usleep(20000);
        g_autoptr(fm_dataset) partial = fm_tiff_read(recording, NULL);
        seen = partial ? fm_dataset_frames(partial) : 0;
    }
    g_assert_cmpint(seen, >=, 5);
    g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
    int wait_status = 0;
    g_assert_cmpint(waitpid(pid, &wait_status, 0), ==, pid);
    g_spawn_close_pid(pid);
    g_assert_true(WIFSIGNALED(wait_status));

    /* the recording: a readable stack, the replayed frames so far bit for bit */
    g_autoptr(fm_dataset) rec = fm_tiff_read(recording, &error);
    g_assert_no_error(error);
    int n = fm_dataset_frames(rec);
    g_assert_cmpint(n, >=, seen);
    g_assert_cmpint(n, <, 200);
    g_autoptr(fm_dataset) src = fm_tiff_read(stack, &error);
    g_assert_no_error(error);
    g_assert_cmpmem(rec->data, fm_dataset_n_bytes(rec), src->data, fm_dataset_n_bytes(rec));

    /* the catalogue: the run listed, interrupted, with its recording */
    g_auto(cli_result) list = cli_test_run(NULL, env_fake, "catalogue", "list", "--json", NULL);
    g_assert_cmpint(list.status, ==, 0);
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *root = cli_test_parse_object(list.out, &parser);
    JsonArray *runs = json_object_get_array_member(root, "runs");
    g_autofree char *canonical = g_canonicalize_filename(recording, NULL);
    gboolean found = FALSE;
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        JsonObject *run = json_array_get_object_element(runs, i);
        JsonNode *ds = json_object_get_member(run, "dataset");
        if (!ds || JSON_NODE_HOLDS_NULL(ds) || g_strcmp0(json_node_get_string(ds), canonical))
            continue;
        g_assert_cmpstr(json_object_get_string_member(run, "status"), ==, "interrupted");
        g_assert_cmpstr(json_object_get_string_member(run, "method"), ==, "lsi.spatial");
        /* its note still names where the frames came from, above why it ended */
        const char *note = json_object_get_string_member(run, "error");
        g_assert_true(g_str_has_prefix(note, "replay of kill-src.tif\ninterrupted: "));
        found = TRUE;
    }
    g_assert_true(found);
}

static void test_refusals(void)
{
    g_autofree char *dir = cli_test_tmp_path("refused");
    g_auto(cli_result) no_live = cli_test_run(NULL, env_fake, "live", "dce.tofts", "--camera",
                                              "Fake_1", "--frames", "2", "-o", dir, NULL);
    g_assert_cmpint(no_live.status, ==, 2);
    g_assert_nonnull(strstr(no_live.err, "dce.tofts has no live path"));
    g_auto(cli_result) no_source =
        cli_test_run(NULL, env_fake, "live", "lsi.spatial", "-o", dir, NULL);
    g_assert_cmpint(no_source.status, ==, 2);
    g_assert_nonnull(strstr(no_source.err, "--camera ID or --replay FILE"));
    g_auto(cli_result) bad_save = cli_test_run(NULL, env_fake, "live", "lsi.spatial", "--camera",
                                               "Fake_1", "--save-maps", "some", "-o", dir, NULL);
    g_assert_cmpint(bad_save.status, ==, 2);
    g_auto(cli_result) no_camera = cli_test_run(NULL, env_fake, "live", "lsi.spatial", "--camera",
                                                "NoSuchCam", "--frames", "2", "-o", dir, NULL);
    g_assert_cmpint(no_camera.status, ==, 3);
    g_assert_nonnull(strstr(no_camera.err, "NoSuchCam"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-live-XXXXXX")) {
        g_print("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    g_autofree char *cat = cli_test_tmp_path("catalogue");
    env_fake = g_get_environ();
    env_fake = g_environ_setenv(env_fake, "FLUXMAP_FAKE_CAMERA", "1", TRUE);
    env_fake = g_environ_setenv(env_fake, "FLUXMAP_DATA_DIR", cat, TRUE);
    g_test_add_func("/cli-live/camera-equals-run", test_camera_equals_run);
    g_test_add_func("/cli-live/replay-roi", test_replay_roi);
    g_test_add_func("/cli-live/oct-replay-equals-run", test_oct_replay_equals_run);
    g_test_add_func("/cli-live/killed-run-interrupted", test_killed_run_interrupted);
    g_test_add_func("/cli-live/refusals", test_refusals);
    int status = g_test_run();
    g_strfreev(env_fake);
    return cli_test_finish(status);
}
