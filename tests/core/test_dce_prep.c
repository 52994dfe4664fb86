/* DCE input preparation: conversions against their closed forms, VOIs across slices, missing
 * roles, haematocrit, CSV round trip, the phantom's ROIs and the fit mask. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/error.h"
#include "app/core/io/frame_times.h"
#include "app/core/method.h"
#include "app/core/roi.h"
#include "app/core/dce/dce_sim.h"

static void test_enhancement_and_ct(void)
{
    /* S = S0 (1 + C) with S0 = 250 over 3 baseline frames: S/S0 - 1 gives C back exactly up to
     * double rounding (1e-12). CT: HU - HU0 with HU0 = 40. */
    const double c[8] = {0, 0, 0, 0.5, 2.0, 1.5, 1.0, 0.8};
    double s[8], hu[8];
    for (int i = 0; i < 8; i++) {
        s[i] = 250.0 * (1.0 + c[i]);
        hu[i] = 40.0 + 25.0 * c[i];
    }
    fm_dce_conversion conv = {.kind = FM_DCE_CONV_ENHANCEMENT, .baseline_frames = 3};
    g_assert_cmpfloat_with_epsilon(fm_dce_convert_curve(&conv, 0, s, 8), 250.0, 1e-9);
    for (int i = 0; i < 8; i++)
        g_assert_cmpfloat_with_epsilon(s[i], c[i], 1e-12);
    conv.kind = FM_DCE_CONV_CT;
    fm_dce_convert_curve(&conv, 0, hu, 8);
    for (int i = 0; i < 8; i++)
        g_assert_cmpfloat_with_epsilon(hu[i], 25.0 * c[i], 1e-12);
}

/* Forward SPGR signal (the steady-state equation the inversion undoes). */
static double spgr_signal(double r1, double tr_s, double flip_deg)
{
    double a = flip_deg * G_PI / 180.0, e = exp(-tr_s * r1);
    return 1000.0 * sin(a) * (1.0 - e) / (1.0 - cos(a) * e);
}

static void test_spgr(void)
{
    /* R1 = 1/T10 + r1 C; the signal from the forward equation must invert to C within 1e-9 mM
     * (only rounding in exp/log separates them). A signal above the fully relaxed limit
     * (S/S0 beyond what R1 -> infinity gives) has no concentration: NaN. */
    fm_dce_conversion conv = {.kind = FM_DCE_CONV_SPGR,
                              .baseline_frames = 2,
                              .t10_s = 0.8,
                              .r1_per_mm_s = 4.5,
                              .tr_ms = 5.0,
                              .flip_deg = 15.0};
    const double c[9] = {0, 0, 0.1, 0.5, 1, 2, 5, 0.3, 0};
    double s[9];
    for (int i = 0; i < 9; i++)
        s[i] = spgr_signal(1.0 / 0.8 + 4.5 * c[i], 5e-3, 15.0);
    fm_dce_convert_curve(&conv, conv.t10_s, s, 9);
    for (int i = 0; i < 9; i++)
        g_assert_cmpfloat_with_epsilon(s[i], c[i], 1e-9);
    double big[3] = {1, 1, 1e6};
    fm_dce_convert_curve(&conv, conv.t10_s, big, 3);
    g_assert_true(isnan(big[2]));
    g_autoptr(GError) error = NULL;
    conv.tr_ms = 0;
    g_assert_false(fm_dce_conversion_check(&conv, 9, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "tr_ms"));
}

/* x, y, z, t dataset where voxel (x, y, z) carries curve base + z * 10 + frame. */
static fm_dataset *small_series(int nx, int ny, int nz, int nt)
{
    const gsize sizes[4] = {(gsize)nx, (gsize)ny, (gsize)nz, (gsize)nt};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, NULL);
    float *d = ds->data;
    for (int t = 0; t < nt; t++)
        for (int z = 0; z < nz; z++)
            for (gsize p = 0; p < (gsize)nx * ny; p++)
                d[((gsize)t * nz + z) * nx * ny + p] = (float)(100 + z * 10 + (t >= 2 ? t : 0));
    double times[64];
    for (int t = 0; t < nt; t++)
        times[t] = 1.5 * t;
    fm_dataset_set_frame_times(ds, times, nt);
    return ds;
}

static void test_slices_and_roles(void)
{
    /* ROI slice: JSON round trip keeps it; absent means -1 (every slice). */
    g_autoptr(fm_roi) a = fm_roi_new_rectangle("ao", 0, 0, 2, 2);
    a->role = g_strdup("aorta");
    a->slice = 1;
    g_autofree char *json = fm_roi_to_json(a);
    g_autoptr(fm_roi) b = fm_roi_from_json(json, NULL);
    g_assert_cmpint(b->slice, ==, 1);
    g_autoptr(fm_roi) c = fm_roi_from_json(
        "{\"kind\":\"rectangle\",\"name\":\"x\",\"role\":null,\"points\":[[0,0],[1,1]]}", NULL);
    g_assert_cmpint(c->slice, ==, -1);
    g_autoptr(GError) bad = NULL;
    g_assert_null(fm_roi_from_json("{\"kind\":\"rectangle\",\"name\":\"x\",\"points\":[[0,0],[1,"
                                   "1]],\"slice\":1.5}",
                                   &bad));
    g_assert_error(bad, FM_ERROR, FM_ERROR_BAD_INPUT);

    /* Two aorta ROIs on slices 1 and 2 pool 4 + 4 voxels; the mean signal is then
     * 100 + 15 + t (slices 1 and 2 add 10 and 20), enhancement (S - S0)/S0 with S0 = 115. */
    g_autoptr(fm_dataset) ds = small_series(4, 4, 3, 8);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, fm_roi_copy(a));
    fm_roi *a2 = fm_roi_copy(a);
    a2->slice = 2;
    g_ptr_array_add(rois, a2);
    fm_dce_geometry g;
    g_assert_true(fm_dce_geometry_of(ds, &g, NULL));
    gsize n = 0;
    g_autofree guint8 *mask = fm_dce_role_mask(rois, "aorta", &g, &n);
    g_assert_cmpuint(n, ==, 8);
    g_assert_cmpint(mask[0], ==, 0);
    g_assert_cmpint(mask[16], ==, 1);

    fm_dce_conversion conv = {.kind = FM_DCE_CONV_ENHANCEMENT, .baseline_frames = 2};
    fm_dce_inputs in = {0};
    g_autoptr(GError) error = NULL;
    g_assert_false(fm_dce_inputs_from_rois(ds, rois, &conv, NULL, 0.0, &in, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_cmpstr(error->message, ==, "draw the portal-vein ROI (role portal_vein)");
    g_clear_error(&error);

    fm_roi *pv = fm_roi_new_rectangle("pv", 2, 2, 4, 4); /* every slice: 12 voxels, S0 = 110 */
    pv->role = g_strdup("portal_vein");
    g_ptr_array_add(rois, pv);
    g_assert_true(fm_dce_inputs_from_rois(ds, rois, &conv, NULL, 0.45, &in, &error));
    g_assert_no_error(error);
    g_assert_cmpint(in.n_times, ==, 8);
    for (int t = 0; t < 8; t++) {
        double rise = t >= 2 ? t : 0;
        /* haematocrit 0.45: plasma = blood / 0.55; 1e-6 for the float32 signal */
        g_assert_cmpfloat_with_epsilon(in.ca[t], rise / 115.0 / 0.55, 1e-6);
        g_assert_cmpfloat_with_epsilon(in.cp[t], rise / 110.0 / 0.55, 1e-6);
        g_assert_cmpfloat_with_epsilon(in.times_s[t], 1.5 * t, 1e-12);
    }

    /* CSV round trip is exact (%.17g). */
    g_autofree char *dir = g_dir_make_tmp("fm-dce-XXXXXX", NULL);
    g_autofree char *csv = g_build_filename(dir, "inputs.csv", NULL);
    g_assert_true(fm_dce_inputs_save_csv(csv, &in, NULL));
    fm_dce_inputs back = {0};
    g_assert_true(fm_dce_inputs_load_csv(csv, &back, NULL));
    g_assert_cmpint(back.n_times, ==, 8);
    for (int t = 0; t < 8; t++) {
        g_assert_cmpfloat(back.ca[t], ==, in.ca[t]);
        g_assert_cmpfloat(back.cp[t], ==, in.cp[t]);
        g_assert_cmpfloat(back.times_s[t], ==, in.times_s[t]);
    }
    g_assert_true(g_file_set_contents(csv, "t_s,ca,cp\n0,1,2\n0,1,2\n", -1, NULL));
    g_assert_false(fm_dce_inputs_load_csv(csv, &back, &error));
    g_assert_nonnull(strstr(error->message, "line 3"));
    g_unlink(csv);
    g_rmdir(dir);
    fm_dce_inputs_clear(&in);
    fm_dce_inputs_clear(&back);
}

static void test_missing_role_through_method(void)
{
    /* The registry path: no ROIs at all names the aorta first, with FM_ERROR_BAD_PARAM (CLI
     * exit 2). */
    g_autoptr(fm_dataset) ds = small_series(4, 4, 1, 8);
    const fm_method *m = fm_method_find("dce.dual_input");
    g_assert_nonnull(m);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_result) r = fm_method_run(m, ds, NULL, NULL, NULL, &error);
    g_assert_null(r);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_cmpstr(error->message, ==, "draw the aorta ROI (role aorta)");
}

static void test_phantom_rois_and_mask(void)
{
    /* The ROIs fm_dce_sim_rois returns select exactly the phantom's labelled voxels, so the
     * input VOIs carry Ca and Cp without partial volume. */
    fm_dce_sim_params p;
    fm_dce_sim_defaults(&p);
    p.nx = 40;
    p.ny = 36;
    p.nz = 2;
    p.n_times = 16;
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(&p);
    static const fm_dce_sim_label labels[3] = {FM_DCE_SIM_AORTA, FM_DCE_SIM_PORTAL_VEIN,
                                               FM_DCE_SIM_LIVER};
    for (int r = 0; r < 3; r++) {
        g_autofree guint8 *m = fm_roi_rasterise(rois->pdata[r], p.nx, p.ny);
        for (int y = 0; y < p.ny; y++)
            for (int x = 0; x < p.nx; x++) {
                fm_dce_sim_label l = fm_dce_sim_label_at(&p, x, y, 0);
                gboolean in = r < 2 ? l == labels[r]
                                    : (l == FM_DCE_SIM_LIVER || l == FM_DCE_SIM_LESION_HYPER ||
                                       l == FM_DCE_SIM_LESION_HYPO);
                g_assert_cmpint(m[y * p.nx + x], ==, in);
            }
    }
    /* Inputs from the phantom's VOIs equal the simulator's curves (noise-free; float32). */
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dce_simulate(&p, &error);
    g_assert_no_error(error);
    fm_dce_conversion conv = {.kind = FM_DCE_CONV_ENHANCEMENT, .baseline_frames = 3};
    fm_dce_inputs in = {0};
    g_assert_true(fm_dce_inputs_from_rois(ds, rois, &conv, NULL, 0, &in, &error));
    double t[16], ca[16], cp[16];
    fm_dce_sim_inputs(&p, t, ca, cp);
    for (int i = 0; i < 16; i++) {
        g_assert_cmpfloat_with_epsilon(in.ca[i], ca[i], 1e-5);
        g_assert_cmpfloat_with_epsilon(in.cp[i], cp[i], 1e-5);
    }
    /* Without a liver ROI the threshold rule fits enhancing tissue and vessels, never air or
     * non-enhancing body. */
    g_ptr_array_remove_index(rois, 2);
    gsize n = 0;
    g_autofree guint8 *mask = fm_dce_fit_mask(ds, rois, &conv, NULL, in.ca, 0.03, &n, &error);
    g_assert_nonnull(mask);
    gsize expect = 0;
    for (int z = 0; z < p.nz; z++)
        for (int y = 0; y < p.ny; y++)
            for (int x = 0; x < p.nx; x++) {
                fm_dce_sim_label l = fm_dce_sim_label_at(&p, x, y, z);
                gsize v = ((gsize)z * p.ny + y) * p.nx + x;
                if (l == FM_DCE_SIM_AIR || l == FM_DCE_SIM_BODY)
                    g_assert_cmpint(mask[v], ==, 0);
                if (l == FM_DCE_SIM_LIVER)
                    g_assert_cmpint(mask[v], ==, 1);
                expect += mask[v];
            }
    g_assert_cmpuint(n, ==, expect);
    fm_dce_inputs_clear(&in);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/dce-prep/enhancement-ct", test_enhancement_and_ct);
    g_test_add_func("/dce-prep/spgr", test_spgr);
    g_test_add_func("/dce-prep/slices-roles-csv", test_slices_and_roles);
    g_test_add_func("/dce-prep/missing-role-method", test_missing_role_through_method);
    g_test_add_func("/dce-prep/phantom-rois-mask", test_phantom_rois_and_mask);
    return g_test_run();
}
