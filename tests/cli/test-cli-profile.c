/* fluxmap-cli run --profile: the JSON schema of the stage record, stages that add up to the wall
 * time, the text form, and bad input that still exits 3 naming the file. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "app/core/stages.h"
#include "tests/cli/cli-test-util.h"

static char *flim_file;

static void make_input(void)
{
    flim_file = cli_test_tmp_path("decays.sdt");
    cli_result r = cli_test_run(NULL, NULL, "simulate", "flim", "--width=128", "--height=128",
                                "--bins=256", "-o", flim_file, NULL);
    if (r.status != 0)
        g_error("simulate flim: exit %d: %s", r.status, r.err);
    cli_result_clear(&r);
}

static double number(JsonObject *o, const char *name)
{
    if (!json_object_has_member(o, name))
        g_error("profile lacks '%s'", name);
    JsonNode *n = json_object_get_member(o, name);
    g_assert_true(JSON_NODE_HOLDS_VALUE(n));
    return json_node_get_double(n);
}

static void test_json(void)
{
    g_autofree char *out = cli_test_tmp_path("out-json");
    cli_result r = cli_test_run(NULL, NULL, "run", "flim.phasor", flim_file, "-o", out,
                                "--backend=cpu", "--json", "--profile", NULL);
    if (r.status != 0)
        g_error("exit %d: %s", r.status, r.err);
    JsonParser *parser = NULL;
    JsonObject *root = cli_test_parse_object(r.out, &parser);
    g_assert_true(json_object_has_member(root, "profile"));
    JsonObject *profile = json_object_get_object_member(root, "profile");
    JsonObject *stages = json_object_get_object_member(profile, "stages");
    g_assert_nonnull(stages);
    g_assert_cmpuint(json_object_get_size(stages), ==, FM_N_STAGES);
    double sum = 0.0;
    for (int s = 0; s < FM_N_STAGES; s++) {
        double ms = number(stages, fm_stage_key(s));
        g_assert_cmpfloat(ms, >=, 0.0);
        sum += ms;
    }
    double wall = number(profile, "wall_ms");
    /* The named stages are the whole run: what they miss is bookkeeping between them. */
    g_test_message("wall %.1f ms, stages %.1f ms", wall, sum);
    g_assert_cmpfloat(wall, >, 0.0);
    g_assert_cmpfloat(fabs(wall - sum), <=, 0.10 * wall);
    g_assert_cmpfloat(fabs(number(profile, "other_ms") - (wall - sum)), <=, 1e-6 * wall + 1e-9);
    g_assert_cmpfloat(number(stages, "read"), >, 0.0);
    g_assert_cmpfloat(number(stages, "compute"), >, 0.0);
    g_assert_cmpfloat(number(stages, "write"), >, 0.0);
    g_assert_cmpfloat(number(stages, "catalogue"), >, 0.0);
    /* the CPU backend moves nothing to a device and starts none */
    g_assert_cmpfloat(number(stages, "upload"), ==, 0.0);
    g_assert_cmpfloat(number(stages, "download"), ==, 0.0);
    g_assert_cmpfloat(number(stages, "device_start"), ==, 0.0);
    /* 128 x 128 pixels x 256 bins of uint16 */
    g_assert_cmpfloat(number(profile, "input_mb"), ==, 128.0 * 128 * 256 * 2 / (1024.0 * 1024));
    guint n_outputs = json_array_get_length(json_object_get_array_member(root, "outputs"));
    g_assert_cmpfloat(number(profile, "outputs_mb"), ==,
                      n_outputs * 128.0 * 128 * 4 / (1024.0 * 1024));
    g_assert_cmpfloat(number(profile, "peak_rss_mb"), >=, number(profile, "input_mb"));
    g_object_unref(parser);
    cli_result_clear(&r);
}

static void test_without_profile(void)
{
    g_autofree char *out = cli_test_tmp_path("out-plain");
    cli_result r = cli_test_run(NULL, NULL, "run", "flim.phasor", flim_file, "-o", out,
                                "--backend=cpu", "--json", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 0);
    JsonParser *parser = NULL;
    JsonObject *root = cli_test_parse_object(r.out, &parser);
    g_assert_false(json_object_has_member(root, "profile"));
    g_object_unref(parser);
    cli_result_clear(&r);
}

static void test_text(void)
{
    g_autofree char *out = cli_test_tmp_path("out-text");
    cli_result r = cli_test_run(NULL, NULL, "run", "flim.iem", flim_file, "-o", out,
                                "--backend=cpu", "--profile", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "profile: "));
    for (int s = 0; s < FM_N_STAGES; s++) {
        g_autofree char *line = g_strdup_printf("\n  %s ", fm_stage_key(s));
        if (!strstr(r.out, line))
            g_error("text profile lacks stage '%s':\n%s", fm_stage_key(s), r.out);
    }
    g_assert_nonnull(strstr(r.out, "peak resident"));
    cli_result_clear(&r);
}

static void test_bad_input(void)
{
    g_autofree char *cut = cli_test_tmp_path("cut.sdt");
    g_autofree char *contents = NULL;
    gsize length = 0;
    g_assert_true(g_file_get_contents(flim_file, &contents, &length, NULL));
    g_assert_true(g_file_set_contents(cut, contents, (gssize)(length / 3), NULL));
    g_autofree char *out = cli_test_tmp_path("out-cut");
    cli_result r =
        cli_test_run(NULL, NULL, "run", "flim.phasor", cut, "-o", out, "--profile", "--json", NULL);
    g_assert_cmpint(r.status, ==, 3);
    g_assert_nonnull(strstr(r.err, "cut.sdt"));
    g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS)); /* nothing written for a bad input */
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-profile-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_autofree char *data_dir = g_build_filename(tmp_dir, "data", NULL);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE);
    make_input();
    g_test_add_func("/cli/profile/json", test_json);
    g_test_add_func("/cli/profile/absent-without-flag", test_without_profile);
    g_test_add_func("/cli/profile/text", test_text);
    g_test_add_func("/cli/profile/bad-input", test_bad_input);
    int status = g_test_run();
    g_free(flim_file);
    return cli_test_finish(status);
}
