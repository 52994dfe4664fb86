/* --backend=auto for a one-shot run: the expected CPU time from the per-method constants, the
 * CPU chosen (and the device never started) where that is below the device's start, the note
 * saying why; --backend=cuda and a CPU-only build as before. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "fm_config.h"
#include "app/core/backend_choice.h"
#include "app/core/method.h"
#include "tests/cli/cli-test-util.h"

static char *lsi_file;

static void make_input(void)
{
    lsi_file = cli_test_tmp_path("speckle.tif");
    cli_result r = cli_test_run(NULL, NULL, "simulate", "lsi", "--width=96", "--height=64",
                                "--frames=3", "-o", lsi_file, NULL);
    if (r.status != 0)
        g_error("simulate lsi: exit %d: %s", r.status, r.err);
    cli_result_clear(&r);
}

static void test_expected_time(void)
{
    const fm_method *spatial = fm_method_find("lsi.spatial");
    /* 10 ns a sample on one thread: 1e6 samples are 10 ms on 1 thread, 5 ms on 2 */
    g_assert_cmpfloat_with_epsilon(fm_expected_cpu_ms(spatial, 1e6, 1), 10.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(fm_expected_cpu_ms(spatial, 1e6, 2), 5.0, 1e-9);
    g_assert_cmpfloat(fm_expected_cpu_ms(spatial, -1.0, 2), <, 0.0); /* size unknown */
    /* a method without a constant keeps the device */
    g_assert_cmpfloat(fm_expected_cpu_ms(fm_method_find("dce.t1_vfa"), 1e3, 2), <, 0.0);
    g_assert_false(fm_one_shot_prefers_cpu(fm_method_find("dce.t1_vfa"), 1e3, 2, NULL));

    g_autofree char *note = NULL;
    g_assert_true(fm_one_shot_prefers_cpu(spatial, 8e6, 2, &note)); /* 40 ms */
    g_assert_cmpstr(note, ==,
                    "CPU: expected 40 ms of compute, less than the GPU's start (~300 ms)");
    /* 1392 x 1040 x 300 frames on 2 threads: 2.2 s, the device's start is worth it */
    g_assert_false(fm_one_shot_prefers_cpu(spatial, 1392.0 * 1040 * 300, 2, NULL));
    /* ... and more threads bring a size back under it */
    g_assert_false(fm_one_shot_prefers_cpu(spatial, 1e8, 2, NULL));
    g_assert_true(fm_one_shot_prefers_cpu(spatial, 1e8, 16, NULL));
    /* an iterative fit costs more per sample than a direct method */
    g_assert_true(fm_one_shot_prefers_cpu(fm_method_find("flim.iem"), 16.8e6, 2, NULL));
    g_assert_false(fm_one_shot_prefers_cpu(fm_method_find("flim.ga"), 16.8e6, 2, NULL));
}

static void test_work_bound(void)
{
    const fm_method *spatial = fm_method_find("lsi.spatial");
    GStatBuf st;
    g_assert_cmpint(g_stat(lsi_file, &st), ==, 0);
    g_assert_cmpfloat(fm_work_units_bound(spatial, NULL, lsi_file), ==, (double)st.st_size);
    /* photon records, gzip and folders say nothing before the read */
    g_autofree char *ptu = cli_test_tmp_path("photons.ptu");
    g_autofree char *gz = cli_test_tmp_path("volume.nii.gz");
    g_assert_true(g_file_set_contents(ptu, "PQTTTR", -1, NULL));
    g_assert_true(g_file_set_contents(gz, "x", -1, NULL));
    g_assert_cmpfloat(fm_work_units_bound(fm_method_find("flim.iem"), NULL, ptu), <, 0.0);
    g_assert_cmpfloat(fm_work_units_bound(fm_method_find("dce.tofts"), NULL, gz), <, 0.0);
    g_assert_cmpfloat(fm_work_units_bound(spatial, NULL, tmp_dir), <, 0.0);
    /* MCML: the photons asked for; 0 (the .mci file's count) is unknown */
    const fm_method *mcml = fm_method_find("mcml.run");
    g_autoptr(fm_params) params = fm_method_default_params(mcml);
    g_assert_cmpfloat(fm_work_units_bound(mcml, params, NULL), <, 0.0);
    g_assert_true(fm_params_set_from_string(params, "photons", "2000", NULL));
    g_assert_cmpfloat(fm_work_units_bound(mcml, params, NULL), ==, 2000.0);
    g_assert_cmpfloat(fm_work_units(mcml, params, NULL), ==, 2000.0);
}

static JsonObject *run_json(const char *backend, const char *out_name, JsonParser **parser,
                            cli_result *r)
{
    g_autofree char *out = cli_test_tmp_path(out_name);
    *r = cli_test_run(NULL, NULL, "run", "lsi.spatial", lsi_file, "-o", out, backend, "--json",
                      "--profile", "--no-catalogue", NULL);
    return r->status == 0 ? cli_test_parse_object(r->out, parser) : NULL;
}

/* A 96 x 64 x 3 stack: well under a millisecond of CPU. */
static void test_auto_small(void)
{
    JsonParser *parser = NULL;
    cli_result r;
    JsonObject *o = run_json("--backend=auto", "out-auto", &parser, &r);
    if (o == NULL)
        g_error("run --backend=auto: exit %d: %s", r.status, r.err);
    g_assert_cmpstr(json_object_get_string_member(o, "backend"), ==, "cpu");
    const char *note = json_object_get_string_member_with_default(o, "note", "");
    JsonObject *profile = json_object_get_object_member(o, "profile");
    double start_ms = json_object_get_double_member(profile, "device_start_total_ms");
#if FM_HAVE_CUDA
    /* the choice, its reason first, and the device left alone */
    g_assert_true(g_str_has_prefix(note, "CPU: expected "));
    g_assert_nonnull(strstr(note, " ms of compute, less than the GPU's start (~300 ms)"));
    g_assert_cmpfloat(start_ms, ==, 0.0);
#else
    /* nothing to choose: the build's own reason, no claim about a device start */
    g_assert_null(strstr(note, "CPU: expected"));
    g_assert_nonnull(strstr(note, "built without CUDA"));
    g_assert_cmpfloat(start_ms, ==, 0.0);
#endif
    g_object_unref(parser);
    cli_result_clear(&r);
}

/* Asked for by name, the device runs it (or the run fails as before without one). */
static void test_forced_cuda(void)
{
    JsonParser *parser = NULL;
    cli_result r;
    JsonObject *o = run_json("--backend=cuda", "out-cuda", &parser, &r);
    if (o == NULL) {
        g_assert_cmpint(r.status, ==, 4); /* compute: no CUDA device */
        g_assert_nonnull(strstr(r.err, "CUDA"));
        g_assert_null(strstr(r.err, "CPU: expected"));
        g_test_message("no CUDA device: --backend=cuda fails as before (exit 4)");
    } else {
        g_assert_cmpstr(json_object_get_string_member(o, "backend"), ==, "cuda");
        const char *note = json_object_get_string_member_with_default(o, "note", "");
        g_assert_null(strstr(note, "CPU: expected"));
        g_object_unref(parser);
    }
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-backend-choice-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_autofree char *data_dir = g_build_filename(tmp_dir, "data", NULL);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE);
    make_input();
    g_test_add_func("/cli/backend-choice/expected-time", test_expected_time);
    g_test_add_func("/cli/backend-choice/work-bound", test_work_bound);
    g_test_add_func("/cli/backend-choice/auto-small", test_auto_small);
    g_test_add_func("/cli/backend-choice/forced-cuda", test_forced_cuda);
    int status = g_test_run();
    g_free(lsi_file);
    return cli_test_finish(status);
}
