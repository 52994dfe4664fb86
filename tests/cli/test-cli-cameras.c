/* fluxmap-cli cameras ($FLUXMAP_CLI): no camera is not an error and hints at the demo camera;
 * FLUXMAP_FAKE_CAMERA=1 lists Aravis's Fake_1 with vendor, model, serial and protocol;
 * --details shows its settings with ranges and its formats; an unknown id is exit 3. */
#include <glib.h>
#include <string.h>

#include "tests/cli/cli-test-util.h"

static int run_cli(gboolean fake, char **out, char **err, ...)
{
    char *envp[] = {fake ? "FLUXMAP_FAKE_CAMERA=1" : "FLUXMAP_FAKE_CAMERA=0", NULL};
    va_list ap;
    va_start(ap, err);
    const char *first = va_arg(ap, const char *);
    cli_result r = cli_test_runv(NULL, envp, first, ap);
    va_end(ap);
    *out = r.out;
    *err = r.err;
    return r.status;
}

static void test_none(void)
{
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint(run_cli(FALSE, &out, &err, "cameras", NULL), ==, 0);
    /* a machine on a network with GigE cameras lists them instead; CI has none */
    if (strstr(out, "No camera found") == NULL) {
        g_test_skip("cameras found on this machine");
        return;
    }
    g_assert_nonnull(strstr(out, "FLUXMAP_FAKE_CAMERA=1"));
    g_assert_false(g_str_has_prefix(out, "Fake_1 ") || strstr(out, "\nFake_1 ")); /* not listed */
}

static void test_fake_listed(void)
{
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint(run_cli(TRUE, &out, &err, "cameras", NULL), ==, 0);
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    gboolean found = FALSE;
    for (int i = 0; lines[i]; i++) {
        g_auto(GStrv) cols = g_strsplit_set(lines[i], " ", -1);
        GPtrArray *words = g_ptr_array_new();
        for (int j = 0; cols[j]; j++)
            if (*cols[j])
                g_ptr_array_add(words, cols[j]);
        if (words->len == 5 && strcmp(words->pdata[0], "Fake_1") == 0) {
            g_assert_cmpstr(words->pdata[1], ==, "Aravis");
            g_assert_cmpstr(words->pdata[2], ==, "Fake");
            g_assert_cmpstr(words->pdata[3], ==, "1");
            g_assert_cmpstr(words->pdata[4], ==, "Fake");
            found = TRUE;
        }
        g_ptr_array_free(words, TRUE);
    }
    if (!found)
        g_printerr("stdout: %s\n", out);
    g_assert_true(found);
}

static void test_details(void)
{
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint(run_cli(TRUE, &out, &err, "cameras", "--details", "Fake_1", NULL), ==, 0);
    g_test_message("%s", out);
    g_assert_nonnull(strstr(out, "Fake_1 (Aravis Fake)"));
    g_assert_nonnull(strstr(out, "512x512 at (0, 0), sensor 2048x2048"));
    g_assert_nonnull(strstr(out, "exposure       10000 us (10 to 1e+07)"));
    g_assert_nonnull(strstr(out, "frame rate     25 frames/s (0.1 to 1000)"));
    g_assert_nonnull(strstr(out, "formats read   Mono8, Mono16"));
    g_assert_nonnull(strstr(out, "RGB8"));

    g_autofree char *out2 = NULL, *err2 = NULL;
    g_assert_cmpint(run_cli(TRUE, &out2, &err2, "cameras", "--details", "NoSuchCam", NULL), ==, 3);
    g_assert_nonnull(strstr(err2, "NoSuchCam"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-cameras-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_test_add_func("/cli-cameras/none", test_none);
    g_test_add_func("/cli-cameras/fake-listed", test_fake_listed);
    g_test_add_func("/cli-cameras/details", test_details);
    return cli_test_finish(g_test_run());
}
