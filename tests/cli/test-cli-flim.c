/* fluxmap-cli for FLIM defaults ($FLUXMAP_CLI): a simulated file with time zero 2 ns into the
 * range runs with every parameter at its default, the note says what was chosen (window,
 * threshold, background, the IRF's resampling) and suggests binning for a dim image; "auto" is
 * a value on the command line; bad values exit 2. */
#include <glib.h>
#include <string.h>

#include "tests/cli/cli-test-util.h"

static cli_result run(const char *first, ...) G_GNUC_NULL_TERMINATED;
static cli_result run(const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    cli_result r = cli_test_runv(NULL, NULL, first, ap);
    va_end(ap);
    return r;
}

static void expect_in(const char *text, const char *needle)
{
    if (text == NULL || strstr(text, needle) == NULL)
        g_error("'%s' not found in: %s", needle, text ? text : "(nothing)");
}

/* The note of a --json run. */
static char *note_of(const cli_result *r)
{
    JsonParser *parser = NULL;
    JsonObject *o = cli_test_parse_object(r->out, &parser);
    char *note = g_strdup(json_object_has_member(o, "note")
                              ? json_object_get_string_member(o, "note")
                              : NULL);
    g_object_unref(parser);
    return note;
}

static void test_defaults(void)
{
    g_autofree char *tif = cli_test_tmp_path("late.tif"), *out = cli_test_tmp_path("out");
    g_autofree char *irf = cli_test_tmp_path("late.irf.csv");
    cli_result r = run("simulate", "flim", "--width=32", "--height=8", "--photons=2000",
                       "--irf_sigma_ns=0.1", "--irf_offset_ns=2", "--background=0.2", "-o", tif,
                       NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    g_assert_true(g_file_test(irf, G_FILE_TEST_EXISTS));

    r = run("run", "flim.cmm", tif, "-o", out, "--no-catalogue", "--backend=cpu", "--json", NULL);
    if (r.status != 0)
        g_error("flim.cmm: exit %d: %s", r.status, r.err);
    g_autofree char *note = note_of(&r);
    g_test_message("flim.cmm defaults: %s", note);
    expect_in(note, "fit window 2.2–");
    expect_in(note, "from the decay's peak to where the tail meets the background");
    expect_in(note, "background before the rise 0.2");
    expect_in(note, "(auto)");
    cli_result_clear(&r);

    /* the IRF the simulator wrote, given: the window starts at its onset */
    g_autofree char *irf_opt = g_strconcat("--irf_file=", irf, NULL);
    r = run("run", "flim.mle", irf_opt, "--fit_start_ns=auto", "--min_photons=50", tif, "-o", out,
            "--no-catalogue", "--backend=cpu", "--json", NULL);
    if (r.status != 0)
        g_error("flim.mle: exit %d: %s", r.status, r.err);
    g_autofree char *mle_note = note_of(&r);
    g_test_message("flim.mle with the IRF: %s", mle_note);
    expect_in(mle_note, "from the IRF's onset");
    g_assert_null(strstr(mle_note, "min_photons 50")); /* given, so not reported as chosen */
    cli_result_clear(&r);

    /* a dim image: most pixels under the floor of 10, and what to do about it */
    g_autofree char *dim = cli_test_tmp_path("dim.tif");
    r = run("simulate", "flim", "--width=32", "--height=8", "--photons=6", "-o", dim, NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    r = run("run", "flim.cmm", dim, "-o", out, "--no-catalogue", "--backend=cpu", NULL);
    g_assert_cmpint(r.status, ==, 0);
    expect_in(r.out, "note: ");
    expect_in(r.out, "most pixels have fewer than 10 photons: try binning 2");
    cli_result_clear(&r);
}

static void test_bad_values(void)
{
    g_autofree char *tif = cli_test_tmp_path("bad.tif"), *out = cli_test_tmp_path("out-bad");
    cli_result r = run("simulate", "flim", "--width=8", "--height=4", "-o", tif, NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    const char *const bad[][2] = {{"--min_photons=lots", "min_photons"},
                                  {"--fit_start_ns=-5", "fit_start_ns"},
                                  {"--fit_end_ns=40", "fit range"}};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        r = run("run", "flim.cmm", bad[i][0], tif, "-o", out, "--no-catalogue", NULL);
        if (r.status != 2)
            g_error("%s: exit %d, expected 2: %s", bad[i][0], r.status, r.err);
        expect_in(r.err, bad[i][1]);
        cli_result_clear(&r);
    }
    g_autofree char *irf_opt = g_strconcat("--irf_file=", tif, ".missing.csv", NULL);
    r = run("run", "flim.lsm", irf_opt, tif, "-o", out, "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 3);
    expect_in(r.err, "missing.csv");
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-flim-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_test_add_func("/cli-flim/defaults", test_defaults);
    g_test_add_func("/cli-flim/bad-values", test_bad_values);
    return cli_test_finish(g_test_run());
}
