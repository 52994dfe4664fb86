/* fluxmap-cli with label-map ROIs ($FLUXMAP_CLI): roi export of the DCE phantom's ROIs, a DCE run
 * with --roi mask --roi-labels giving the JSON ROIs' maps, --export-rois, a size mismatch (exit 3,
 * both sizes named), an unknown label or bad --roi-labels syntax (exit 2). */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/io/tiff.h"
#include "tests/cli/cli-test-util.h"

static const char *const maps[] = {"ka", "kp", "kl", "tau_a", "tau_p", "rmse", "r2", "mtt"};

static void run_ok(const char *first, ...) G_GNUC_NULL_TERMINATED;
static void run_ok(const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    cli_result r = cli_test_runv(tmp_dir, NULL, first, ap);
    va_end(ap);
    if (r.status != 0)
        g_printerr("%s", r.err);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
}

/* Every map of two runs agrees pixel by pixel: both NaN, or within 1e-5 relative. */
static void assert_same_maps(const char *dir_a, const char *dir_b)
{
    for (gsize m = 0; m < G_N_ELEMENTS(maps); m++) {
        g_autofree char *name = g_strconcat(maps[m], ".tif", NULL);
        g_autofree char *pa = g_build_filename(tmp_dir, dir_a, name, NULL);
        g_autofree char *pb = g_build_filename(tmp_dir, dir_b, name, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) a = fm_tiff_read(pa, &error);
        g_assert_no_error(error);
        g_autoptr(fm_dataset) b = fm_tiff_read(pb, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(fm_dataset_n_elements(a), ==, fm_dataset_n_elements(b));
        gsize finite = 0;
        for (gsize i = 0; i < fm_dataset_n_elements(a); i++) {
            double x = fm_dataset_value(a, i), y = fm_dataset_value(b, i);
            g_assert_cmpint(isnan(x), ==, isnan(y));
            if (isnan(x))
                continue;
            finite++;
            g_assert_cmpfloat(fabs(x - y), <=, 1e-5 * MAX(1.0, fabs(x)));
        }
        g_assert_cmpuint(finite, >, 100); /* the liver was fitted, not an empty map twice */
    }
}

static void test_dce_with_label_map(void)
{
    run_ok("simulate", "dce", "--width=32", "--height=28", "--slices=3", "--frames=16", "-o",
           "liver.nii.gz", NULL);
    cli_result r = cli_test_run(tmp_dir, NULL, "roi", "export", "liver.nii.gz", "--roi",
                                "liver.rois.json", "-o", "mask.nii.gz", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "labels 1=aorta,2=portal_vein,3=liver"));
    cli_result_clear(&r);
    g_autofree char *sidecar = g_build_filename(tmp_dir, "mask.labels.txt", NULL);
    g_assert_true(g_file_test(sidecar, G_FILE_TEST_IS_REGULAR));

    run_ok("run", "dce.dual_input", "liver.nii.gz", "--roi", "liver.rois.json", "-o", "json",
           "--backend=cpu", NULL);
    run_ok("run", "dce.dual_input", "liver.nii.gz", "--roi", "mask.nii.gz", "--roi-labels",
           "1=aorta,2=portal_vein,3=liver", "-o", "mask", "--backend=cpu", "--export-rois",
           "again.tif", NULL);
    assert_same_maps("json", "mask");
    /* the run's ROIs exported as a TIFF label map, and read back with the description file */
    run_ok("run", "dce.dual_input", "liver.nii.gz", "--roi", "again.tif", "--roi-labels",
           "again.labels.txt", "-o", "tiff", "--backend=cpu", "--no-catalogue", NULL);
    assert_same_maps("json", "tiff");
    /* the catalogue keeps the mask ROIs of the run */
    r = cli_test_run(tmp_dir, NULL, "catalogue", "list", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "done"));
    cli_result_clear(&r);
}

static void test_size_mismatch(void)
{
    run_ok("simulate", "dce", "--width=24", "--height=20", "--slices=2", "--frames=8", "-o",
           "other.nii", NULL);
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "other.nii", "--roi",
                                "mask.nii.gz", "-o", "bad", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 3);
    g_assert_nonnull(strstr(r.err, "mask.nii.gz: label map is 32x28x3 but other.nii is 24x20x2"));
    cli_result_clear(&r);
    r = cli_test_run(tmp_dir, NULL, "roi", "export", "other.nii", "--roi", "mask.nii.gz", "-o",
                     "x.nii", NULL);
    g_assert_cmpint(r.status, ==, 3);
    g_assert_nonnull(strstr(r.err, "label map is 32x28x3 but other.nii is 24x20x2"));
    cli_result_clear(&r);
}

static void test_bad_labels(void)
{
    static const char *const bad_syntax[] = {"1=aorta,2portal_vein", "one=aorta", "0=aorta",
                                             "1=aorta,1=liver", "1=portal vein"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad_syntax); i++) {
        cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "liver.nii.gz", "--roi",
                                    "mask.nii.gz", "--roi-labels", bad_syntax[i], "-o", "bad",
                                    "--no-catalogue", NULL);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_nonnull(strstr(r.err, "--roi-labels"));
        cli_result_clear(&r);
    }
    /* a label the map does not hold */
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "liver.nii.gz", "--roi",
                                "mask.nii.gz", "--roi-labels", "1=aorta,2=portal_vein,4=liver",
                                "-o", "bad", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "label 4 (liver) is not in mask.nii.gz (its labels: 1, 2, 3)"));
    cli_result_clear(&r);
    /* --roi-labels with JSON ROIs, or with none */
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "liver.nii.gz", "--roi",
                     "liver.rois.json", "--roi-labels", "1=aorta", "-o", "bad", NULL);
    g_assert_cmpint(r.status, ==, 2);
    cli_result_clear(&r);
    /* without roles the ROIs are "label N": the DCE method then asks for the aorta */
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "liver.nii.gz", "--roi", "mask.nii.gz",
                     "-o", "bad", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "aorta"));
    cli_result_clear(&r);
    /* a label map that is not one */
    g_autofree char *junk = g_build_filename(tmp_dir, "junk.nii", NULL);
    g_assert_true(g_file_set_contents(junk, "not a NIfTI file", -1, NULL));
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "liver.nii.gz", "--roi", "junk.nii",
                     "-o", "bad", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 3);
    g_assert_nonnull(strstr(r.err, "junk.nii"));
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fm-cli-roi-XXXXXX")) {
        printf("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    g_setenv("FLUXMAP_DATA_DIR", tmp_dir, TRUE);
    g_test_add_func("/cli-roi/dce-with-label-map", test_dce_with_label_map);
    g_test_add_func("/cli-roi/size-mismatch", test_size_mismatch);
    g_test_add_func("/cli-roi/bad-labels", test_bad_labels);
    return cli_test_finish(g_test_run());
}
