/* dce.t1_vfa through the registry: T1 and M0 maps of SPGR signals with known T1 (linear and
 * nonlinear, flip angles from parameters or from the reader's metadata, a B1 map in percent),
 * the errors that name what is missing, and the chain T1 map -> dce.dual_input's t10_map: the
 * input curves it saves are the true concentrations only with that map. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/dicom.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "app/core/method.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "app/core/roi.h"

enum { NX = 6, NY = 5, NZ = 2, NA = 4 };
static const double flip_deg[NA] = {3, 8, 15, 25};
static const double tr_ms = 5.0;

static double spgr(double m0, double r1, double flip, double tr_s)
{
    double e = exp(-tr_s * r1), a = flip * G_PI / 180.0;
    return m0 * sin(a) * (1 - e) / (1 - cos(a) * e);
}

/* Voxel v's truth: T1 from 0.4 to 2.2 s, M0 around 1000, B1 from 0.85 to 1.14. */
static double true_t1(int v)
{
    return 0.4 + 0.05 * (v % 37);
}
static double true_m0(int v)
{
    return 1000.0 + 3 * v;
}
static double true_b1(int v)
{
    return 0.85 + 0.01 * (v % 30);
}

static fm_dataset *vfa_series(gboolean with_b1)
{
    gsize sizes[4] = {NX, NY, NZ, NA};
    const char *names[4] = {"x", "y", "z", "t"};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    float *d = ds->data;
    const int volume = NX * NY * NZ;
    for (int a = 0; a < NA; a++)
        for (int v = 0; v < volume; v++)
            d[a * volume + v] =
                (float)spgr(true_m0(v), 1.0 / true_t1(v),
                            (with_b1 ? true_b1(v) : 1.0) * flip_deg[a], tr_ms * 1e-3);
    ds->source_path = g_strdup("/tmp/vfa.nii");
    return ds;
}

static fm_result *run_method(const char *id, fm_dataset *ds, const char *const *kv, GPtrArray *rois,
                             GError **error)
{
    const fm_method *m = fm_method_find(id);
    g_assert_nonnull(m);
    g_autoptr(fm_params) p = fm_method_default_params(m);
    for (int i = 0; kv && kv[i]; i += 2)
        g_assert_true(fm_params_set_from_string(p, kv[i], kv[i + 1], NULL));
    return fm_method_run(m, ds, p, rois, NULL, error);
}

static void assert_maps(const fm_result *r, double tol)
{
    fm_map *t1 = fm_result_get_map(r, "t1"), *m0 = fm_result_get_map(r, "m0");
    g_assert_nonnull(t1);
    g_assert_nonnull(m0);
    g_assert_cmpstr(t1->unit, ==, "s");
    g_assert_cmpint(t1->n_frames, ==, NZ);
    double worst = 0;
    for (int v = 0; v < NX * NY * NZ; v++) {
        worst = MAX(worst, fabs(t1->data[v] / true_t1(v) - 1));
        worst = MAX(worst, fabs(m0->data[v] / true_m0(v) - 1));
    }
    g_test_message("worst relative error %.2g (note: %s)", worst, r->note);
    g_assert_cmpfloat(worst, <, tol);
}

static void test_fits(void)
{
    g_autoptr(fm_dataset) ds = vfa_series(FALSE);
    for (int linear = 0; linear < 2; linear++) {
        const char *kv[] = {"flip_angles_deg",
                            "3, 8, 15, 25",
                            "tr_ms",
                            "5",
                            "fit",
                            linear ? "linear" : "nonlinear",
                            NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_result) r = run_method("dce.t1_vfa", ds, kv, NULL, &error);
        g_assert_no_error(error);
        /* float32 signals: 1e-5 relative covers their rounding amplified by the fit. */
        assert_maps(r, 1e-5);
        g_assert_nonnull(strstr(r->note, "flip angles 3,8,15,25 deg (parameters), TR 5 ms "
                                         "(parameters)"));
        g_assert_nonnull(strstr(r->note, ", 0 without a T1"));
    }
}

/* A reader that found FlipAngle and RepetitionTime: no parameters needed, the note says so. */
static void test_angles_from_headers(void)
{
    g_autoptr(fm_dataset) ds = vfa_series(FALSE);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_result) none = run_method("dce.t1_vfa", ds, NULL, NULL, &error);
    g_assert_null(none);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_cmpstr(error->message, ==,
                    "vfa.nii: give the flip angles (flip_angles_deg): the file does not say them");
    g_clear_error(&error);
    const char *few[] = {"flip_angles_deg", "3,8,15", "tr_ms", "5", NULL};
    g_assert_null(run_method("dce.t1_vfa", ds, few, NULL, &error));
    g_assert_cmpstr(error->message, ==, "vfa.nii: 3 flip angles for 4 images");
    g_clear_error(&error);
    fm_dataset_set_meta(ds, FM_META_FLIP_ANGLES, "3,8,15,25");
    fm_dataset_set_meta(ds, FM_META_REPETITION_TIME, "5");
    g_autoptr(fm_result) r = run_method("dce.t1_vfa", ds, NULL, NULL, &error);
    g_assert_no_error(error);
    assert_maps(r, 1e-5);
    g_assert_nonnull(strstr(r->note, "(DICOM headers), TR 5 ms (DICOM headers)"));
}

/* A DICOM series at four flip angles: the reader says FlipAngle and RepetitionTime, and
 * dce.t1_vfa takes them when the user gives none. */
static void test_dicom_headers(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    const double times[NA] = {0, 40, 80, 120}; /* one acquisition after another */
    fm_dicom_test_series spec = {.nx = NX,
                                 .ny = NY,
                                 .nz = NZ,
                                 .nt = NA,
                                 .frame_times_s = times,
                                 .slope = 1,
                                 .shuffle_seed = 9,
                                 .time_tag = FM_DICOM_TEST_TIME_ACQUISITION_TIME,
                                 .flip_angles_deg = flip_deg,
                                 .tr_ms = tr_ms};
    g_autofree char *dir = g_dir_make_tmp("fm-t1-vfa-dicom-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_dicom_write_test_series(dir, &spec, &error));
    g_autoptr(fm_dataset) ds = fm_dataset_open(dir, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(fm_dataset_get_meta(ds, FM_META_FLIP_ANGLES), ==, "3,8,15,25");
    g_assert_cmpstr(fm_dataset_get_meta(ds, FM_META_REPETITION_TIME), ==, "5");
    g_autoptr(fm_result) r = run_method("dce.t1_vfa", ds, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(
        strstr(r->note, "flip angles 3,8,15,25 deg (DICOM headers), TR 5 ms (DICOM headers)"));
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *name; (name = g_dir_read_name(d));) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_unlink(path);
    }
    g_dir_close(d);
    g_rmdir(dir);
}

/* A B1 map in percent (TIFF, one page per slice) scales the nominal angles per voxel. */
static void test_b1_map(void)
{
    g_autoptr(fm_dataset) ds = vfa_series(TRUE);
    g_autofree char *dir = g_dir_make_tmp("fm-t1-vfa-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "b1.tif", NULL);
    float b1[NX * NY * NZ];
    for (int v = 0; v < NX * NY * NZ; v++)
        b1[v] = (float)(100.0 * true_b1(v));
    g_assert_true(fm_tiff_write_float32(path, b1, NX, NY, NZ, "B1 percent", NULL));
    const char *kv[] = {"flip_angles_deg", "3,8,15,25", "tr_ms", "5", "b1_map", path,
                        "b1_unit",         "percent",   NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_result) r = run_method("dce.t1_vfa", ds, kv, NULL, &error);
    g_assert_no_error(error);
    assert_maps(r, 1e-5);
    g_assert_nonnull(strstr(r->note, "flip angles scaled by the B1 map"));
    /* Without the map the same images give other T1s: the map is what made them right. */
    const char *plain[] = {"flip_angles_deg", "3,8,15,25", "tr_ms", "5", NULL};
    g_autoptr(fm_result) wrong = run_method("dce.t1_vfa", ds, plain, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(fabs(fm_result_get_map(wrong, "t1")->data[0] / true_t1(0) - 1), >, 0.1);
    g_unlink(path);
    g_rmdir(dir);
}

/* The chain: VFA images -> dce.t1_vfa -> t1 map file -> dce.dual_input t10_map. The aorta and
 * portal vein have their own T10; the input curves dual_input saves must be the true
 * concentrations, which only the right T10 gives. */
static void test_t10_map_chain(void)
{
    enum { NT = 20 };
    const double r1 = 4.5, flip = 15;
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    fm_roi *aorta = fm_roi_new_rectangle("aorta", 0, 0, 2, 2);
    aorta->role = g_strdup("aorta");
    fm_roi *portal = fm_roi_new_rectangle("portal", 3, 0, 5, 2);
    portal->role = g_strdup("portal_vein");
    g_ptr_array_add(rois, aorta);
    g_ptr_array_add(rois, portal);
    g_autofree guint8 *in_aorta = fm_roi_rasterise(aorta, NX, NY);
    g_autofree guint8 *in_portal = fm_roi_rasterise(portal, NX, NY);
    double t10[NX * NY * NZ];
    for (int v = 0; v < NX * NY * NZ; v++) {
        int pixel = v % (NX * NY);
        t10[v] = in_aorta[pixel] ? 1.6 : in_portal[pixel] ? 1.2 : true_t1(v);
    }
    /* VFA images of that T10, then its map as the CLI writes maps (float32 TIFF, z pages). */
    gsize vsizes[4] = {NX, NY, NZ, NA};
    const char *names[4] = {"x", "y", "z", "t"};
    g_autoptr(fm_dataset) vfa = fm_dataset_new(FM_PIXEL_F32, 4, vsizes, names);
    for (int a = 0; a < NA; a++)
        for (int v = 0; v < NX * NY * NZ; v++)
            ((float *)vfa->data)[a * NX * NY * NZ + v] =
                (float)spgr(true_m0(v), 1.0 / t10[v], flip_deg[a], tr_ms * 1e-3);
    const char *kv[] = {"flip_angles_deg", "3,8,15,25", "tr_ms", "5", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_result) map = run_method("dce.t1_vfa", vfa, kv, NULL, &error);
    g_assert_no_error(error);
    g_autofree char *dir = g_dir_make_tmp("fm-t1-vfa-XXXXXX", NULL);
    g_autofree char *t1_path = g_build_filename(dir, "t1.tif", NULL);
    fm_map *t1 = fm_result_get_map(map, "t1");
    g_assert_true(
        fm_tiff_write_float32(t1_path, t1->data, t1->width, t1->height, t1->n_frames, "", NULL));

    /* The DCE series: blood curves in the VOIs, a slower one elsewhere; SPGR at 15 deg. */
    gsize sizes[4] = {NX, NY, NZ, NT};
    g_autoptr(fm_dataset) dce = fm_dataset_new(FM_PIXEL_F32, 4, sizes, names);
    dce->dims[3].spacing = 2.0;
    double ca[NT], cp[NT];
    for (int t = 0; t < NT; t++) {
        double s = 2.0 * t, late = s > 8 ? s - 8 : 0;
        ca[t] = 6.0 * late / 6.0 * exp(1 - late / 6.0) * (late > 0);
        cp[t] = 0.5 * ca[t] + 0.02 * late;
    }
    for (int t = 0; t < NT; t++)
        for (int v = 0; v < NX * NY * NZ; v++) {
            int pixel = v % (NX * NY);
            double c = in_aorta[pixel] ? ca[t] : in_portal[pixel] ? cp[t] : 0.3 * cp[t];
            ((float *)dce->data)[t * NX * NY * NZ + v] =
                (float)spgr(true_m0(v), 1.0 / t10[v] + r1 * c, flip, tr_ms * 1e-3);
        }
    g_autofree char *csv = g_build_filename(dir, "inputs.csv", NULL);
    for (int with_map = 1; with_map >= 0; with_map--) {
        const char *dual[] = {"conversion",
                              "spgr",
                              "t10_s",
                              "0.8",
                              "t10_map",
                              with_map ? t1_path : "",
                              "tr_ms",
                              "5",
                              "flip_deg",
                              "15",
                              "r1_per_mm_s",
                              "4.5",
                              "baseline_frames",
                              "4",
                              "save_inputs_csv",
                              csv,
                              "max_iterations",
                              "30",
                              "restarts",
                              "0",
                              NULL};
        g_autoptr(fm_result) r = run_method("dce.dual_input", dce, dual, rois, &error);
        if (!with_map && r == NULL) {
            /* The constant T10 puts the blood's peak signal beyond the SPGR limit. */
            g_test_message("without t10_map: %s", error->message);
            g_assert_nonnull(strstr(error->message, "has no concentration"));
            g_clear_error(&error);
            continue;
        }
        g_assert_no_error(error);
        g_autofree char *text = NULL;
        g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        double worst = 0;
        for (int t = 0; t < NT; t++) {
            double got_ca = 0, got_cp = 0;
            g_auto(GStrv) cells = g_strsplit(lines[t + 1], ",", -1);
            got_ca = g_ascii_strtod(cells[1], NULL);
            got_cp = g_ascii_strtod(cells[2], NULL);
            worst = MAX(worst, MAX(fabs(got_ca - ca[t]), fabs(got_cp - cp[t])));
        }
        g_test_message("%s t10_map: input curves within %.2g mM of the truth",
                       with_map ? "with" : "without", worst);
        if (with_map)
            g_assert_cmpfloat(worst, <, 1e-3); /* float32 signals and a float32 T10 map */
        else
            g_assert_cmpfloat(worst, >, 0.1); /* the constant T10 is wrong for blood */
    }
    g_unlink(csv);
    g_unlink(t1_path);
    g_rmdir(dir);
}

/* Removes dir and what it holds (files and one level of folders). */
static void remove_tree(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR))
            remove_tree(path);
        else
            g_unlink(path);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(dir);
}

/* One DICOM series per flip angle, written by the project's test writer: every series holds the
 * stored pattern P(x, y, z) (fm_dicom_test_stored_value), rescaled by its own slope and
 * intercept so that its signal is SPGR(M0 = P + 100, T1 = SERIES_T1) at its angle. The series
 * UIDs sort in another order than the angles. tr and spacing of series `odd` (-1: none) are
 * spoiled to odd_tr_ms and odd_spacing_mm. */
#define SERIES_T1 1.3
static void write_angle_series(const char *root, gboolean one_folder, int nz, int odd,
                               double odd_tr_ms, double odd_spacing_mm)
{
    static const int uid_order[NA] = {2, 0, 3, 1};
    const double times[1] = {0};
    for (int a = 0; a < NA; a++) {
        g_autofree char *uid = g_strdup_printf("1.2.826.0.1.3680043.8.498.4242.%d", uid_order[a]);
        g_autofree char *prefix = g_strdup_printf("FA%d_", a);
        g_autofree char *dir = one_folder ? g_strdup(root) : g_strdup_printf("%s/fa%d", root, a);
        double slope = spgr(1.0, 1.0 / SERIES_T1, flip_deg[a], tr_ms * 1e-3);
        fm_dicom_test_series spec = {.nx = NX,
                                     .ny = NY,
                                     .nz = nz,
                                     .nt = 1,
                                     .frame_times_s = times,
                                     .slope = slope,
                                     .intercept = 100 * slope,
                                     .series_uid = uid,
                                     .shuffle_seed = 3 + a,
                                     .file_prefix = prefix,
                                     .time_tag = FM_DICOM_TEST_TIME_ACQUISITION_TIME,
                                     .flip_angles_deg = &flip_deg[a],
                                     .tr_ms = a == odd ? odd_tr_ms : tr_ms};
        if (a == odd)
            spec.pixel_spacing_mm[0] = spec.pixel_spacing_mm[1] = odd_spacing_mm;
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_dicom_write_test_series(dir, &spec, &error));
        g_assert_no_error(error);
    }
}

/* dce.t1_vfa opens its inputs as the CLI does (several series paths, or a folder of series):
 * one acquisition sorted by FlipAngle, TR from the headers, T1 and M0 recovered within the
 * float32 rounding the other fits here are held to. */
static void test_series_per_angle(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    const fm_method *m = fm_method_find("dce.t1_vfa");
    g_assert_nonnull(m->open_inputs);
    /* one folder of series, four paths, and four one-image series (one slice each: a 2-D file) */
    static const struct {
        gboolean one_folder;
        int nz;
    } cases[] = {{TRUE, NZ}, {FALSE, NZ}, {FALSE, 1}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        const gboolean one_folder = cases[c].one_folder;
        const int nz = cases[c].nz;
        g_autofree char *root = g_dir_make_tmp("fm-vfa-series-XXXXXX", NULL);
        write_angle_series(root, one_folder, nz, -1, 0, 0);
        /* several paths given in an order that is not the angles' */
        g_autofree char *p0 = g_strdup_printf("%s/fa0", root),
                        *p1 = g_strdup_printf("%s/fa1", root);
        g_autofree char *p2 = g_strdup_printf("%s/fa2", root),
                        *p3 = g_strdup_printf("%s/fa3", root);
        const char *several[NA] = {p3, p0, p2, p1};
        const char *folder[1] = {root};
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds =
            one_folder ? m->open_inputs(folder, 1, &error) : m->open_inputs(several, NA, &error);
        g_assert_no_error(error);
        g_assert_cmpint(ds->n_dims, ==, 4);
        g_assert_cmpuint(ds->dims[3].size, ==, NA);
        g_assert_cmpstr(fm_dataset_get_meta(ds, FM_META_FLIP_ANGLES), ==, "3,8,15,25");
        g_assert_cmpstr(fm_dataset_get_meta(ds, FM_META_REPETITION_TIME), ==, "5");
        g_autoptr(fm_result) r = run_method("dce.t1_vfa", ds, NULL, NULL, &error);
        g_assert_no_error(error);
        g_assert_nonnull(strstr(r->note, "flip angles 3,8,15,25 deg (DICOM headers), TR 5 ms "
                                         "(DICOM headers); one DICOM series per flip angle (4 "
                                         "series)"));
        fm_map *t1 = fm_result_get_map(r, "t1"), *m0 = fm_result_get_map(r, "m0");
        double worst = 0;
        g_assert_cmpuint(ds->dims[2].size, ==, (gsize)nz);
        for (int z = 0; z < nz; z++)
            for (int y = 0; y < NY; y++)
                for (int x = 0; x < NX; x++) {
                    int v = (z * NY + y) * NX + x;
                    double p = fm_dicom_test_stored_value(x, y, z, 0) + 100.0;
                    worst = MAX(worst, fabs(t1->data[v] / SERIES_T1 - 1));
                    worst = MAX(worst, fabs(m0->data[v] / p - 1));
                }
        g_test_message("%s, %d slices: worst relative error %.2g",
                       one_folder ? "one folder" : "4 paths", nz, worst);
        g_assert_cmpfloat(worst, <, 1e-5);
        remove_tree(root);
    }
}

/* Series that do not make one acquisition: the error names the file and what differs. */
static void test_series_mismatch(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    const fm_method *m = fm_method_find("dce.t1_vfa");
    for (int kind = 0; kind < 2; kind++) {
        g_autofree char *root = g_dir_make_tmp("fm-vfa-odd-XXXXXX", NULL);
        /* series 2 (15 deg): TR 6 ms, or 2 mm pixels */
        write_angle_series(root, FALSE, NZ, 2, kind == 0 ? 6.0 : tr_ms, kind == 0 ? 0.0 : 2.0);
        g_autofree char *p0 = g_strdup_printf("%s/fa0", root),
                        *p1 = g_strdup_printf("%s/fa1", root);
        g_autofree char *p2 = g_strdup_printf("%s/fa2", root),
                        *p3 = g_strdup_printf("%s/fa3", root);
        const char *several[NA] = {p0, p1, p2, p3};
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = m->open_inputs(several, NA, &error);
        g_assert_null(ds);
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
        g_test_message("%s", error->message);
        g_autofree char *odd_dir = g_canonicalize_filename(p2, NULL);
        g_assert_true(g_str_has_prefix(error->message, odd_dir)); /* a file of the odd series */
        g_assert_nonnull(strstr(error->message, kind == 0 ? "TR 6 ms, but" : "x 2 x 1 mm"));
        g_assert_nonnull(
            strstr(error->message, kind == 0 ? "must share one TR" : "must share one geometry"));
        remove_tree(root);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/dce/t1-vfa/fits", test_fits);
    g_test_add_func("/core/dce/t1-vfa/angles-from-headers", test_angles_from_headers);
    g_test_add_func("/core/dce/t1-vfa/dicom-headers", test_dicom_headers);
    g_test_add_func("/core/dce/t1-vfa/b1-map", test_b1_map);
    g_test_add_func("/core/dce/t1-vfa/t10-map-chain", test_t10_map_chain);
    g_test_add_func("/core/dce/t1-vfa/series-per-angle", test_series_per_angle);
    g_test_add_func("/core/dce/t1-vfa/series-mismatch", test_series_mismatch);
    return g_test_run();
}
