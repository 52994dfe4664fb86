/* Drives the real fluxmap-cli binary (path in $FLUXMAP_CLI): exit codes, messages, JSON schema,
 * output files and catalogue records. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "app/core/dataset.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/tiff.h"
#include "kernels/device.h"
#include "tests/cli/cli-test-util.h"

/* stderr must start "fluxmap-cli: " and mention what went wrong. */
static void assert_message(const cli_result *r, const char *needle)
{
    g_assert_true(g_str_has_prefix(r->err, "fluxmap-cli: "));
    if (needle && !strstr(r->err, needle))
        g_error("stderr '%s' does not mention '%s'", r->err, needle);
}

static void assert_member_type(JsonObject *o, const char *name, GType type, gboolean nullable)
{
    if (!json_object_has_member(o, name))
        g_error("JSON object lacks member '%s'", name);
    JsonNode *n = json_object_get_member(o, name);
    if (nullable && JSON_NODE_HOLDS_NULL(n))
        return;
    if (type == JSON_TYPE_OBJECT)
        g_assert_true(JSON_NODE_HOLDS_OBJECT(n));
    else if (type == JSON_TYPE_ARRAY)
        g_assert_true(JSON_NODE_HOLDS_ARRAY(n));
    else {
        if (!JSON_NODE_HOLDS_VALUE(n))
            g_error("member '%s' is not a value", name);
        GType vt = json_node_get_value_type(n);
        /* JSON numbers: an integer is an acceptable double */
        if (type == G_TYPE_DOUBLE)
            g_assert_true(vt == G_TYPE_DOUBLE || vt == G_TYPE_INT64);
        else if (vt != type)
            g_error("member '%s' has type %s, expected %s", name, g_type_name(vt),
                    g_type_name(type));
    }
}

/* --- fixtures ------------------------------------------------------------------------------ */

static void write_u16(const char *name, int w, int h, int frames, gboolean zero, guint32 seed)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)frames};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    guint16 *d = ds->data;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        d[i] = zero ? 0 : (guint16)g_rand_int_range(rand, 100, 4000);
    g_autofree char *path = cli_test_tmp_path(name);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, "cli test fixture", &error));
    g_assert_no_error(error);
}

static void make_fixtures(void)
{
    write_u16("small.tif", 40, 32, 3, FALSE, 7);
    write_u16("tiny.tif", 4, 4, 1, FALSE, 8);
    write_u16("zero.tif", 24, 20, 1, TRUE, 9);
    g_autofree char *small = cli_test_tmp_path("small.tif");
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(small, &bytes, &len, NULL));
    g_autofree char *trunc = cli_test_tmp_path("truncated.tif");
    g_assert_true(g_file_set_contents(trunc, bytes, len / 3, NULL));
    g_autofree char *empty = cli_test_tmp_path("empty.tif");
    g_assert_true(g_file_set_contents(empty, "", 0, NULL));
    g_autofree char *text = cli_test_tmp_path("notes.tif");
    g_assert_true(g_file_set_contents(text, "this is not a TIFF file\n", -1, NULL));
}

static int count_runs(void)
{
    cli_result r = cli_test_run(NULL, NULL, "catalogue", "list", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(JsonParser) p = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &p);
    int n = (int)json_array_get_length(json_object_get_array_member(o, "runs"));
    cli_result_clear(&r);
    return n;
}

/* --- tests --------------------------------------------------------------------------------- */

static void test_help_version(void)
{
    cli_result r = cli_test_run(NULL, NULL, "--version", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_true(g_str_has_prefix(r.out, "fluxmap-cli "));
    cli_result_clear(&r);
    const char *const commands[][2] = {
        {"--help", NULL},       {"methods", "--help"},   {"run", "--help"},
        {"simulate", "--help"}, {"catalogue", "--help"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(commands); i++) {
        r = cli_test_run(NULL, NULL, commands[i][0], commands[i][1], NULL);
        g_assert_cmpint(r.status, ==, 0);
        g_assert_true(strstr(r.out, "Usage:") != NULL);
        cli_result_clear(&r);
    }
}

static void test_usage_errors(void)
{
    g_autofree char *in = cli_test_tmp_path("small.tif");
    g_autofree char *out = cli_test_tmp_path("out-usage");
    struct {
        const char *args[6];
        const char *needle;
    } cases[] = {
        {{"frobnicate", NULL}, "frobnicate"},
        {{"run", "lsi.nope", in, "-o", out, NULL}, "lsi.nope"},
        {{"run", "lsi.spatial", "--window=4", in, "-o", out}, "window"},
        {{"run", "lsi.spatial", "--window=17", in, "-o", out}, "window"},
        {{"run", "lsi.spatial", "--window=five", in, "-o", out}, "window"},
        {{"run", "lsi.spatial", "--exposure_ms=0", in, "-o", out}, "exposure_ms"},
        {{"run", "lsi.spatial", "--exposure_ms=-5", in, "-o", out}, "exposure_ms"},
        {{"run", "lsi.spatial", "--border=mirror", in, "-o", out}, "border"},
        {{"run", "lsi.spatial", "--frames=5", in, "-o", out}, "frames"}, /* not spatial's */
        {{"run", "lsi.spatial", in, NULL}, "-o"},
        {{"run", "lsi.spatial", "-o", out, NULL}, "INPUT"},
        {{"run", "lsi.spatial", "--backend=gpu", in, "-o", out}, "backend"},
        {{"run", "lsi.temporal", "--frames=4", in, "-o", out}, "frames"}, /* stack has 3 */
        {{"simulate", "lsi", "--bits=10", "-o", out, NULL}, "bits"},
        {{"catalogue", "purge", NULL}, "purge"},
        {{"catalogue", "show", "abc", NULL}, "abc"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *const *a = cases[i].args;
        cli_result r = cli_test_run(NULL, NULL, a[0], a[1], a[2], a[3], a[4], a[5], NULL);
        if (r.status != 2)
            g_error("case %u (%s %s %s): exit %d, expected 2; stderr: %s", i, a[0], a[1],
                    a[2] ? a[2] : "", r.status, r.err);
        assert_message(&r, cases[i].needle);
        cli_result_clear(&r);
    }
    g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
}

static void test_image_smaller_than_window(void)
{
    g_autofree char *in = cli_test_tmp_path("tiny.tif");
    g_autofree char *out = cli_test_tmp_path("out-tiny");
    cli_result r =
        cli_test_run(NULL, NULL, "run", "lsi.spatial", "--window=5", in, "-o", out, NULL);
    g_assert_cmpint(r.status, ==, 2);
    assert_message(&r, "tiny.tif");
    cli_result_clear(&r);
}

static void test_input_errors(void)
{
    const char *names[] = {"missing.tif", "empty.tif", "truncated.tif", "notes.tif"};
    g_autofree char *out = cli_test_tmp_path("out-input");
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *in = cli_test_tmp_path(names[i]);
        cli_result r =
            cli_test_run(NULL, NULL, "run", "lsi.spatial", in, "-o", out, "--no-catalogue", NULL);
        if (r.status != 3)
            g_error("%s: exit %d, expected 3; stderr: %s", names[i], r.status, r.err);
        assert_message(&r, names[i]);
        cli_result_clear(&r);
    }
}

static void test_cuda_missing(void)
{
    char msg[256];
    if (fm_device_count(msg, sizeof msg) > 0) {
        g_test_skip("a CUDA device is present, so --backend=cuda succeeds here");
        return;
    }
    g_autofree char *in = cli_test_tmp_path("small.tif");
    g_autofree char *out = cli_test_tmp_path("out-cuda");
    int before = count_runs();
    cli_result r =
        cli_test_run(NULL, NULL, "run", "lsi.spatial", "--backend=cuda", in, "-o", out, NULL);
    g_assert_cmpint(r.status, ==, 4);
    assert_message(&r, "CUDA");
    cli_result_clear(&r);
    /* the failed attempt is recorded as failed, with no outputs */
    r = cli_test_run(NULL, NULL, "catalogue", "list", "--json", NULL);
    g_autoptr(JsonParser) p = NULL;
    JsonArray *runs = json_object_get_array_member(cli_test_parse_object(r.out, &p), "runs");
    g_assert_cmpint(json_array_get_length(runs), ==, before + 1);
    JsonObject *newest = json_array_get_object_element(runs, 0);
    g_assert_cmpstr(json_object_get_string_member(newest, "status"), ==, "failed");
    g_assert_cmpint(json_array_get_length(json_object_get_array_member(newest, "outputs")), ==, 0);
    cli_result_clear(&r);
}

/* A string parameter without a default (a file path) says "default none", not "false". */
static void test_methods_text_string_default(void)
{
    cli_result r = cli_test_run(NULL, NULL, "methods", NULL);
    g_assert_cmpint(r.status, ==, 0);
    const char *line = strstr(r.out, "--calibration_file");
    g_assert_nonnull(line);
    g_autofree char *first = g_strndup(line, strcspn(line, "\n"));
    g_assert_nonnull(strstr(first, "default none"));
    g_assert_null(strstr(first, "false"));
    cli_result_clear(&r);
}

static void test_methods_json(void)
{
    cli_result r = cli_test_run(NULL, NULL, "methods", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(JsonParser) p = NULL;
    JsonObject *root = cli_test_parse_object(r.out, &p);
    JsonArray *methods = json_object_get_array_member(root, "methods");
    gboolean seen[3] = {FALSE, FALSE, FALSE};
    const char *ids[3] = {"lsi.spatial", "lsi.temporal", "lsi.spatiotemporal"};
    for (guint i = 0; i < json_array_get_length(methods); i++) {
        JsonObject *m = json_array_get_object_element(methods, i);
        assert_member_type(m, "id", G_TYPE_STRING, FALSE);
        assert_member_type(m, "family", G_TYPE_STRING, FALSE);
        assert_member_type(m, "title", G_TYPE_STRING, FALSE);
        assert_member_type(m, "description", G_TYPE_STRING, FALSE);
        assert_member_type(m, "params", JSON_TYPE_ARRAY, FALSE);
        assert_member_type(m, "outputs", JSON_TYPE_ARRAY, FALSE);
        const char *id = json_object_get_string_member(m, "id");
        for (int k = 0; k < 3; k++)
            seen[k] |= g_strcmp0(id, ids[k]) == 0;
        JsonArray *params = json_object_get_array_member(m, "params");
        for (guint j = 0; j < json_array_get_length(params); j++) {
            JsonObject *q = json_array_get_object_element(params, j);
            assert_member_type(q, "name", G_TYPE_STRING, FALSE);
            assert_member_type(q, "type", G_TYPE_STRING, FALSE);
            assert_member_type(q, "unit", G_TYPE_STRING, TRUE);
            assert_member_type(q, "help", G_TYPE_STRING, FALSE);
            const char *type = json_object_get_string_member(q, "type");
            gboolean ranged = !strcmp(type, "int") || !strcmp(type, "double");
            assert_member_type(q, "min", G_TYPE_DOUBLE, !ranged);
            assert_member_type(q, "max", G_TYPE_DOUBLE, !ranged);
            g_assert_true(json_object_has_member(q, "default"));
            if (!strcmp(type, "enum"))
                assert_member_type(q, "choices", JSON_TYPE_ARRAY, FALSE);
            if (g_str_has_prefix(id, "lsi.") &&
                !strcmp(json_object_get_string_member(q, "name"), "window")) {
                g_assert_cmpint(json_object_get_int_member(q, "default"), ==, 5);
                g_assert_cmpint(json_object_get_int_member(q, "min"), ==, 3);
                g_assert_cmpint(json_object_get_int_member(q, "max"), ==, 15);
                g_assert_cmpstr(json_object_get_string_member(q, "unit"), ==, "px");
            }
        }
        JsonArray *outputs = json_object_get_array_member(m, "outputs");
        for (guint j = 0; j < json_array_get_length(outputs); j++) {
            JsonObject *o = json_array_get_object_element(outputs, j);
            assert_member_type(o, "name", G_TYPE_STRING, FALSE);
            assert_member_type(o, "unit", G_TYPE_STRING, FALSE);
        }
    }
    for (int k = 0; k < 3; k++)
        g_assert_true(seen[k]);
    cli_result_clear(&r);
}

/* Runs a method with --json and checks the schema; returns the parsed root (owned by *p). */
static JsonObject *run_json(const char *method, const char *input, const char *outdir,
                            const char *extra1, const char *extra2, JsonParser **p, cli_result *r)
{
    *r = cli_test_run(NULL, NULL, "run", method, input, "-o", outdir, "--json", extra1, extra2,
                      NULL);
    if (r->status != 0)
        g_error("run %s: exit %d: %s", method, r->status, r->err);
    JsonObject *o = cli_test_parse_object(r->out, p);
    assert_member_type(o, "method", G_TYPE_STRING, FALSE);
    assert_member_type(o, "params", JSON_TYPE_OBJECT, FALSE);
    assert_member_type(o, "backend", G_TYPE_STRING, FALSE);
    assert_member_type(o, "device", G_TYPE_STRING, FALSE);
    assert_member_type(o, "elapsed_ms", G_TYPE_DOUBLE, FALSE);
    assert_member_type(o, "run_id", G_TYPE_INT64, TRUE);
    assert_member_type(o, "note", G_TYPE_STRING, TRUE);
    assert_member_type(o, "outputs", JSON_TYPE_ARRAY, FALSE);
    g_assert_cmpstr(json_object_get_string_member(o, "method"), ==, method);
    JsonArray *outputs = json_object_get_array_member(o, "outputs");
    g_assert_cmpint(json_array_get_length(outputs), ==, 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *m = json_array_get_object_element(outputs, i);
        assert_member_type(m, "name", G_TYPE_STRING, FALSE);
        assert_member_type(m, "unit", G_TYPE_STRING, FALSE);
        for (int k = 0; k < 4; k++)
            assert_member_type(m, (const char *[]){"min", "max", "mean", "median"}[k],
                               G_TYPE_DOUBLE, TRUE);
        assert_member_type(m, "valid_pixels", G_TYPE_INT64, FALSE);
        assert_member_type(m, "file", G_TYPE_STRING, FALSE);
        g_assert_true(
            g_file_test(json_object_get_string_member(m, "file"), G_FILE_TEST_IS_REGULAR));
    }
    return o;
}

static JsonObject *output_named(JsonObject *root, const char *name)
{
    JsonArray *outputs = json_object_get_array_member(root, "outputs");
    for (guint i = 0; i < json_array_get_length(outputs); i++) {
        JsonObject *m = json_array_get_object_element(outputs, i);
        if (!strcmp(json_object_get_string_member(m, "name"), name))
            return m;
    }
    g_error("no output '%s'", name);
}

static void test_run_and_catalogue(void)
{
    g_autofree char *in = cli_test_tmp_path("small.tif");
    g_autofree char *out = cli_test_tmp_path("out-run");
    int before = count_runs();
    g_autoptr(JsonParser) p = NULL;
    cli_result r;
    /* the "--window 3" form (value as the next argument) */
    JsonObject *o = run_json("lsi.spatial", in, out, "--window", "3", &p, &r);
    JsonObject *params = json_object_get_object_member(o, "params");
    g_assert_cmpint(json_object_get_int_member(params, "window"), ==, 3);
    g_assert_cmpstr(json_object_get_string_member(params, "border"), ==, "valid");
    /* valid border, window 3: every frame keeps (40-2) x (32-2) pixels */
    JsonObject *k = output_named(o, "contrast");
    g_assert_cmpstr(json_object_get_string_member(k, "unit"), ==, "1");
    g_assert_cmpint(json_object_get_int_member(k, "valid_pixels"), ==, 3 * 38 * 30);
    g_assert_cmpstr(json_object_get_string_member(output_named(o, "sfi"), "unit"), ==, "1/s");
    g_autofree char *contrast_file = g_build_filename(out, "contrast.tif", NULL);
    g_autofree char *sfi_file = g_build_filename(out, "sfi.tif", NULL);
    g_assert_true(g_file_test(contrast_file, G_FILE_TEST_IS_REGULAR));
    g_assert_true(g_file_test(sfi_file, G_FILE_TEST_IS_REGULAR));
    g_autoptr(fm_dataset) map = fm_tiff_read(contrast_file, NULL);
    g_assert_nonnull(map);
    g_assert_cmpint(map->type, ==, FM_PIXEL_F32);
    g_assert_cmpint(fm_dataset_frames(map), ==, 3); /* per-frame maps for a stack */

    gint64 run_id = json_object_get_int_member(o, "run_id");
    g_assert_cmpint(run_id, >, 0);
    g_assert_cmpint(count_runs(), ==, before + 1);
    g_autofree char *id_text = g_strdup_printf("%" G_GINT64_FORMAT, run_id);
    cli_result s = cli_test_run(NULL, NULL, "catalogue", "show", id_text, "--json", NULL);
    g_assert_cmpint(s.status, ==, 0);
    g_autoptr(JsonParser) ps = NULL;
    JsonObject *run = cli_test_parse_object(s.out, &ps);
    g_assert_cmpint(json_object_get_int_member(run, "id"), ==, run_id);
    g_assert_cmpstr(json_object_get_string_member(run, "status"), ==, "done");
    g_assert_cmpstr(json_object_get_string_member(run, "method"), ==, "lsi.spatial");
    g_assert_cmpint(json_array_get_length(json_object_get_array_member(run, "outputs")), ==, 2);
    cli_result_clear(&s);
    s = cli_test_run(NULL, NULL, "catalogue", "list", NULL);
    g_assert_cmpint(s.status, ==, 0);
    g_assert_true(strstr(s.out, "lsi.spatial") != NULL);
    cli_result_clear(&s);

    /* The catalogue's map is the exported map's bytes, and stays so when the export is
     * replaced: a second run into the same OUTDIR with another window leaves run 1's record. */
    JsonArray *outputs = json_object_get_array_member(run, "outputs");
    const char *recorded = NULL;
    for (guint i = 0; i < json_array_get_length(outputs); i++) {
        JsonObject *output = json_array_get_object_element(outputs, i);
        if (g_strcmp0(json_object_get_string_member(output, "name"), "contrast") == 0)
            recorded = json_object_get_string_member(output, "file");
    }
    g_assert_nonnull(recorded);
    g_autofree char *exported_bytes = NULL, *recorded_bytes = NULL, *after_bytes = NULL;
    gsize exported_len = 0, recorded_len = 0, after_len = 0;
    g_assert_true(g_file_get_contents(contrast_file, &exported_bytes, &exported_len, NULL));
    g_assert_true(g_file_get_contents(recorded, &recorded_bytes, &recorded_len, NULL));
    g_assert_cmpmem(exported_bytes, exported_len, recorded_bytes, recorded_len);
    g_autoptr(JsonParser) p2 = NULL;
    cli_result r2;
    run_json("lsi.spatial", in, out, "--window", "5", &p2, &r2);
    g_autofree char *new_bytes = NULL;
    gsize new_len = 0;
    g_assert_true(g_file_get_contents(contrast_file, &new_bytes, &new_len, NULL));
    g_assert_true(new_len != exported_len || memcmp(new_bytes, exported_bytes, new_len) != 0);
    g_assert_true(g_file_get_contents(recorded, &after_bytes, &after_len, NULL));
    g_assert_cmpmem(after_bytes, after_len, recorded_bytes, recorded_len);
    cli_result_clear(&r2);
    cli_result_clear(&r);
}

static void test_no_catalogue(void)
{
    g_autofree char *in = cli_test_tmp_path("small.tif");
    g_autofree char *out = cli_test_tmp_path("out-nocat");
    int before = count_runs();
    g_autoptr(JsonParser) p = NULL;
    cli_result r;
    JsonObject *o = run_json("lsi.spatiotemporal", in, out, "--frames=2", "--no-catalogue", &p, &r);
    g_assert_true(JSON_NODE_HOLDS_NULL(json_object_get_member(o, "run_id")));
    /* 3 frames, temporal window 2: 2 maps of (40-4) x (32-4) valid pixels at window 5 */
    g_assert_cmpint(json_object_get_int_member(output_named(o, "contrast"), "valid_pixels"), ==,
                    2 * 36 * 28);
    g_assert_cmpint(count_runs(), ==, before);
    cli_result_clear(&r);
}

/* A catalogue that is not a database: run says so, with the way out, exits 3 and leaves the file
 * as it was (nothing already saved is overwritten); --no-catalogue still runs. */
static void test_corrupt_catalogue(void)
{
    g_autofree char *in = cli_test_tmp_path("small.tif");
    g_autofree char *out = cli_test_tmp_path("out-corrupt");
    g_autofree char *dir = cli_test_tmp_path("corrupt-data");
    g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
    g_autofree char *db = g_build_filename(dir, "catalogue.db", NULL);
    static const char garbage[] = "not an SQLite file, but someone's data all the same";
    g_assert_true(g_file_set_contents(db, garbage, -1, NULL));
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "FLUXMAP_DATA_DIR", dir, TRUE);
    cli_result r = cli_test_run(NULL, env, "run", "lsi.spatial", in, "-o", out, NULL);
    g_assert_cmpint(r.status, ==, 3);
    assert_message(&r, "catalogue.db");
    assert_message(&r, "--no-catalogue");
    cli_result_clear(&r);
    g_autofree char *after = NULL;
    g_assert_true(g_file_get_contents(db, &after, NULL, NULL));
    g_assert_cmpstr(after, ==, garbage);
    r = cli_test_run(NULL, env, "run", "lsi.spatial", in, "-o", out, "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
}

static void test_all_zero(void)
{
    g_autofree char *in = cli_test_tmp_path("zero.tif");
    g_autofree char *out = cli_test_tmp_path("out-zero");
    g_autoptr(JsonParser) p = NULL;
    cli_result r;
    JsonObject *o = run_json("lsi.spatial", in, out, "--no-catalogue", NULL, &p, &r);
    JsonObject *k = output_named(o, "contrast");
    g_assert_cmpint(json_object_get_int_member(k, "valid_pixels"), ==, 0);
    g_assert_true(JSON_NODE_HOLDS_NULL(json_object_get_member(k, "mean")));
    /* every interior window has zero mean: (24-4) x (20-4) of them, reported in the note */
    const char *note = json_object_get_string_member(o, "note");
    g_assert_nonnull(note);
    g_assert_true(strstr(note, "320 pixels had no valid contrast") != NULL);
    cli_result_clear(&r);
}

static void test_simulate(void)
{
    g_autofree char *tif = cli_test_tmp_path("sim.tif");
    g_autofree char *truth = cli_test_tmp_path("sim.truth.json");
    cli_result r = cli_test_run(NULL, NULL, "simulate", "lsi", "--width=64", "--height=48",
                                "--frames=4", "--seed=3", "--exposure_ms=5", "--tau_vessel_ms=1",
                                "--tau_background_ms=20", "-o", tif, NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    g_autoptr(fm_dataset) ds = fm_tiff_read(tif, NULL);
    g_assert_nonnull(ds);
    g_assert_cmpint(fm_dataset_width(ds), ==, 64);
    g_assert_cmpint(fm_dataset_height(ds), ==, 48);
    g_assert_cmpint(fm_dataset_frames(ds), ==, 4);
    g_assert_cmpint(ds->type, ==, FM_PIXEL_U16);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(truth, &text, NULL, NULL));
    g_autoptr(JsonParser) p = NULL;
    JsonObject *o = cli_test_parse_object(text, &p);
    g_assert_cmpfloat(json_object_get_double_member(o, "tau_vessel_ms"), ==, 1.0);
    g_assert_cmpfloat(json_object_get_double_member(o, "tau_background_ms"), ==, 20.0);
    assert_member_type(o, "vessel", JSON_TYPE_OBJECT, FALSE);
    /* x = T/tau = 5: K^2 = (e^-10 - 1 + 10)/50, computed here independently */
    JsonObject *k = json_object_get_object_member(o, "expected_contrast");
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(k, "vessel"),
                                   sqrt((exp(-10.0) + 9.0) / 50.0), 1e-12);
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(k, "background"),
                                   sqrt((exp(-0.5) - 1.0 + 0.5) / (2 * 0.25 * 0.25)), 1e-12);
}

/* FLIM files reach `run` through the opener: a whole .sdt and .ptu run, cut ones exit 3. */
static void test_flim_files(void)
{
    gsize sizes[3] = {16, 12, 32};
    g_autoptr(fm_dataset) counts = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    for (gsize i = 0; i < fm_dataset_n_elements(counts); i++)
        ((guint16 *)counts->data)[i] = (guint16)(i * 7 % 23);
    const char *names[] = {"flim.sdt", "flim.ptu"};
    g_autofree char *out = cli_test_tmp_path("out-flim");
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *good = cli_test_tmp_path(names[i]);
        g_autoptr(GError) error = NULL;
        g_assert_true(i == 0 ? fm_sdt_write(good, counts, 100.0, &error)
                             : fm_ptu_write(good, counts, 100.0, NULL, &error));
        g_assert_no_error(error);
        cli_result r =
            cli_test_run(NULL, NULL, "run", "lsi.spatial", good, "-o", out, "--no-catalogue", NULL);
        if (r.status != 0)
            g_error("%s: exit %d, expected 0; stderr: %s", names[i], r.status, r.err);
        cli_result_clear(&r);
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(good, &bytes, &len, NULL));
        g_autofree char *cut_name = g_strconcat("cut-", names[i], NULL);
        g_autofree char *cut = cli_test_tmp_path(cut_name);
        g_assert_true(g_file_set_contents(cut, bytes, (gssize)(len - len / 3), NULL));
        r = cli_test_run(NULL, NULL, "run", "lsi.spatial", cut, "-o", out, "--no-catalogue", NULL);
        if (r.status != 3)
            g_error("%s: exit %d, expected 3; stderr: %s", cut_name, r.status, r.err);
        assert_message(&r, cut_name);
        assert_message(&r, "truncated");
        cli_result_clear(&r);
    }
}

/* mcml.run needs no image: the generic run path takes a preset (no INPUT) or an .mci INPUT. */
static void test_generic_mcml(void)
{
    g_autofree char *out = cli_test_tmp_path("out-mcml");
    cli_result r = cli_test_run(NULL, NULL, "run", "mcml.run", "--preset=mcml_sample",
                                "--photons=2000", "--no-catalogue", "-o", out, "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(JsonParser) p = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &p);
    g_assert_cmpstr(json_object_get_string_member(o, "method"), ==, "mcml.run");
    g_autofree char *a_rz = g_build_filename(out, "a_rz.tif", NULL);
    g_assert_true(g_file_test(a_rz, G_FILE_TEST_IS_REGULAR));
    cli_result_clear(&r);
    /* an .mci with an error is an input error (exit 3) naming the file and line */
    g_autofree char *bad = cli_test_tmp_path("bad.mci");
    g_assert_true(g_file_set_contents(bad, "1.0\n1\nout.mco A\n", -1, NULL));
    r = cli_test_run(NULL, NULL, "run", "mcml.run", bad, "--no-catalogue", "-o", out, NULL);
    g_assert_cmpint(r.status, ==, 3);
    assert_message(&r, "bad.mci");
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-test-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_autofree char *data_dir = g_build_filename(tmp_dir, "data", NULL);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE); /* children inherit it */
    make_fixtures();

    g_test_add_func("/cli/help-version", test_help_version);
    g_test_add_func("/cli/usage-errors", test_usage_errors);
    g_test_add_func("/cli/image-smaller-than-window", test_image_smaller_than_window);
    g_test_add_func("/cli/input-errors", test_input_errors);
    g_test_add_func("/cli/cuda-missing", test_cuda_missing);
    g_test_add_func("/cli/methods-json", test_methods_json);
    g_test_add_func("/cli/methods-text-string-default", test_methods_text_string_default);
    g_test_add_func("/cli/run-and-catalogue", test_run_and_catalogue);
    g_test_add_func("/cli/no-catalogue", test_no_catalogue);
    g_test_add_func("/cli/corrupt-catalogue", test_corrupt_catalogue);
    g_test_add_func("/cli/all-zero", test_all_zero);
    g_test_add_func("/cli/simulate", test_simulate);
    g_test_add_func("/cli/flim-files", test_flim_files);
    g_test_add_func("/cli/generic-mcml", test_generic_mcml);
    return cli_test_finish(g_test_run());
}
