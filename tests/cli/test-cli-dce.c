/* fluxmap-cli simulate dce + run dce.dual_input (path in $FLUXMAP_CLI): files written, maps per
 * slice, missing ROI roles (exit 2, role named), inputs from CSV instead of ROIs, the input
 * vessels left out of the voxels the threshold picks without a liver ROI. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "app/core/dataset.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
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

/* Without a liver ROI the fit threshold picks the enhancing voxels, the aorta's and the portal
 * vein's among them; they are the inputs, not liver: none of their voxels is fitted, the note
 * counts the fitted voxels as the maps hold them and says how many were left out. */
static void test_threshold_leaves_inputs_out(void)
{
    g_autofree char *path = g_build_filename(tmp_dir, "ph.rois.json", NULL);
    g_autoptr(GPtrArray) rois = fm_roi_list_from_file(path, NULL);
    g_assert_nonnull(rois);
    g_autoptr(GPtrArray) vessels = g_ptr_array_new();
    for (guint i = 0; i < rois->len; i++)
        if (g_strcmp0(((fm_roi *)rois->pdata[i])->role, "liver") != 0)
            g_ptr_array_add(vessels, rois->pdata[i]);
    g_assert_cmpuint(vessels->len, ==, 2);
    g_autofree char *vessels_path = g_build_filename(tmp_dir, "ph.vessels.json", NULL);
    g_assert_true(fm_roi_list_to_file(vessels_path, vessels, NULL));
    cli_result r =
        cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "--roi", "ph.vessels.json",
                     "-o", "maps-threshold", "--no-catalogue", "--backend=cpu", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_test_message("%s", r.out);
    /* "N voxels fitted (above the fit threshold; M voxels of the aorta and portal-vein ROIs
     * left out)" */
    const char *fitted_at = strstr(r.out, " voxels fitted (");
    g_assert_nonnull(fitted_at);
    const char *start = fitted_at;
    while (start > r.out && g_ascii_isdigit(start[-1]))
        start--;
    guint64 n_note = g_ascii_strtoull(start, NULL, 10);
    const char *said = strstr(r.out, " voxels fitted (above the fit threshold; ");
    guint64 n_left =
        said
            ? g_ascii_strtoull(said + strlen(" voxels fitted (above the fit threshold; "), NULL, 10)
            : 0;
    gboolean named = strstr(r.out, " voxels of the aorta and portal-vein ROIs left out)") != NULL;
    cli_result_clear(&r);

    g_autofree char *ka = g_build_filename(tmp_dir, "maps-threshold", "ka.tif", NULL);
    g_autoptr(fm_dataset) map = fm_tiff_read(ka, NULL);
    g_assert_nonnull(map);
    int w = fm_dataset_width(map), h = fm_dataset_height(map);
    gsize plane = (gsize)w * h, planes = fm_dataset_n_elements(map) / plane;
    g_autofree guint8 *inside = g_new0(guint8, plane);
    for (guint i = 0; i < vessels->len; i++) {
        g_autofree guint8 *m = fm_roi_rasterise(vessels->pdata[i], w, h);
        for (gsize p = 0; p < plane; p++)
            inside[p] |= m[p];
    }
    gsize fitted = 0, in_vessels = 0, vessel_voxels = 0;
    for (gsize z = 0; z < planes; z++)
        for (gsize p = 0; p < plane; p++) {
            vessel_voxels += inside[p];
            if (isnan(fm_dataset_value(map, z * plane + p)))
                continue;
            fitted++;
            in_vessels += inside[p];
        }
    g_test_message("%" G_GSIZE_FORMAT " voxels fitted (the note: %" G_GUINT64_FORMAT
                   "), %" G_GUINT64_FORMAT " of the %" G_GSIZE_FORMAT " vessel voxels left out",
                   fitted, n_note, n_left, vessel_voxels);
    g_assert_cmpuint(in_vessels, ==, 0);
    g_assert_cmpuint(fitted, ==, n_note);
    g_assert_cmpuint(fitted, >, 0);
    /* the vessels enhance most of all: the threshold took every voxel of theirs */
    g_assert_true(named);
    g_assert_cmpuint(n_left, ==, vessel_voxels);
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
    g_test_add_func("/cli-dce/threshold-leaves-inputs-out", test_threshold_leaves_inputs_out);
    return cli_test_finish(g_test_run());
}
