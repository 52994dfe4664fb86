/* fluxmap-cli simulate dce + run dce.dual_input (path in $FLUXMAP_CLI): files written, maps per
 * slice, missing ROI roles (exit 2, role named), inputs from CSV instead of ROIs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/cli/cli-test-util.h"

static void test_simulate_and_run(void)
{
    cli_result r = cli_test_run(tmp_dir, NULL, "simulate", "dce", "--width=24", "--height=24",
                                "--slices=2", "--frames=24", "-o", "ph.nii", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    static const char *const files[] = {"ph.nii", "ph.truth.json", "ph.rois.json", "ph.inputs.csv"};
    for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *p = g_build_filename(tmp_dir, files[i], NULL);
        g_assert_true(g_file_test(p, G_FILE_TEST_EXISTS));
    }
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "--roi", "ph.rois.json",
                     "-o", "maps", "--no-catalogue", "--backend=cpu", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    /* twelve maps: ka kp kl tau_a tau_p rmse r2 iterations converged + three derived, each with
     * one frame per slice */
    g_assert_nonnull(strstr(r.out, "\"distribution_volume\""));
    g_assert_nonnull(strstr(r.out, "\"mtt\""));
    g_assert_nonnull(strstr(r.out, "\"frames\" : 2"));
    cli_result_clear(&r);
    g_autofree char *mtt = g_build_filename(tmp_dir, "maps", "mtt.tif", NULL);
    g_assert_true(g_file_test(mtt, G_FILE_TEST_EXISTS));
}

static void test_missing_role(void)
{
    /* An ROI file with the aorta only: exit 2 and the message says what to draw. */
    g_autofree char *rois = g_build_filename(tmp_dir, "aorta-only.json", NULL);
    g_assert_true(g_file_set_contents(
        rois,
        "[{\"kind\":\"ellipse\",\"name\":\"ao\",\"role\":\"aorta\",\"points\":[[16,9],[20,"
        "13]]}]",
        -1, NULL));
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "--roi",
                                "aorta-only.json", "-o", "maps2", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "draw the portal-vein ROI (role portal_vein)"));
    cli_result_clear(&r);
    /* No ROI file at all: the aorta is named first. */
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "-o", "maps2",
                     "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "draw the aorta ROI (role aorta)"));
    cli_result_clear(&r);
    /* Input curves from the CSV stand in for both ROIs. */
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "--input_csv",
                     "ph.inputs.csv", "-o", "maps3", "--no-catalogue", "--backend=cpu", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fm-cli-dce-XXXXXX")) {
        printf("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    g_setenv("FLUXMAP_DATA_DIR", tmp_dir, TRUE);
    g_test_add_func("/cli-dce/simulate-and-run", test_simulate_and_run);
    g_test_add_func("/cli-dce/missing-role", test_missing_role);
    return cli_test_finish(g_test_run());
}
