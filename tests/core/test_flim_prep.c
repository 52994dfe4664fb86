/* Core tests of FLIM preparation (binning, bin width, fit range, masks, segments, decay files),
 * the FLIM simulator's photon statistics and the string parameter type. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/flim/flim_prep.h"
#include "app/core/method.h"
#include "app/core/io/tiff.h"
#include "app/core/params.h"
#include "app/core/roi.h"
#include "app/core/flim/flim_sim.h"

static fm_dataset *cube(int w, int h, int bins, guint64 seed)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    guint16 *d = ds->data;
    GRand *r = g_rand_new_with_seed((guint32)seed);
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        d[i] = (guint16)g_rand_int_range(r, 0, 1000);
    g_rand_free(r);
    return ds;
}

static void test_binning(void)
{
    const int w = 7, h = 5, bins = 9;
    g_autoptr(fm_dataset) ds = cube(w, h, bins, 3);
    const guint16 *d = ds->data;
    for (int k = 1; k <= 4; k++) {
        g_autoptr(GError) error = NULL;
        g_autofree float *c = fm_flim_prep_counts(ds, k, &error);
        g_assert_no_error(error);
        /* brute force: every (dx, dy) in the k x k window, skipping what falls off the image */
        int lo = -(k - 1) / 2;
        for (int b = 0; b < bins; b++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    double s = 0;
                    for (int dy = lo; dy < lo + k; dy++)
                        for (int dx = lo; dx < lo + k; dx++) {
                            int xx = x + dx, yy = y + dy;
                            if (xx >= 0 && xx < w && yy >= 0 && yy < h)
                                s += d[((gsize)b * h + yy) * w + xx];
                        }
                    /* sums of integers below 2^24: exact in float */
                    g_assert_cmpfloat(c[((gsize)b * h + y) * w + x], ==, s);
                }
    }
    g_autoptr(GError) error = NULL;
    g_assert_null(fm_flim_prep_counts(ds, 6, &error)); /* 6 x 6 on a 7 x 5 image */
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "larger than the 7 x 5 image"));
    g_clear_error(&error);
    g_autoptr(fm_dataset) short_ds = cube(4, 4, 7, 1);
    g_assert_null(fm_flim_prep_counts(short_ds, 1, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "at least 8"));
}

static void test_bin_width(void)
{
    g_autoptr(fm_dataset) ds = cube(2, 2, 8, 1);
    double bw = 0;
    g_autoptr(GError) error = NULL;
    /* a TIFF: t in frames, no metadata */
    g_free(ds->dims[2].unit);
    ds->dims[2].unit = g_strdup("frame");
    g_assert_false(fm_flim_prep_bin_width(ds, 0, &bw, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "bin_width_ps"));
    g_clear_error(&error);
    g_assert_true(fm_flim_prep_bin_width(ds, 50, &bw, &error));
    g_assert_cmpfloat(bw, ==, 0.05);
    fm_dataset_set_meta(ds, "description",
                        "fluxmap simulate flim; pattern=bars; "
                        "xbin_width_ps=7; bin_width_ps=12.5; bins=8");
    g_assert_true(fm_flim_prep_bin_width(ds, 0, &bw, &error));
    g_assert_cmpfloat(bw, ==, 0.0125);
    fm_dataset_set_meta(ds, "bin_width_ps", "200");
    g_assert_true(fm_flim_prep_bin_width(ds, 0, &bw, &error));
    g_assert_cmpfloat(bw, ==, 0.2);
    g_free(ds->dims[2].unit);
    ds->dims[2].unit = g_strdup("ns");
    ds->dims[2].spacing = 0.1;
    g_assert_true(fm_flim_prep_bin_width(ds, 0, &bw, &error));
    g_assert_cmpfloat(bw, ==, 0.1);
    g_assert_no_error(error);
}

/* The simulator's TIFF description (as `simulate flim` writes it) survives a TIFF round trip
 * and gives the bin width back without any flag. */
static void test_tiff_description(void)
{
    g_autoptr(fm_dataset) ds = cube(3, 2, 8, 2);
    g_autofree char *dir = g_dir_make_tmp("flimprep-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "decay.tif", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(
        path, ds, "fluxmap simulate flim; pattern=bars; bin_width_ps=100; bins=8", &error));
    g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    double bw = 0;
    g_assert_true(fm_flim_prep_bin_width(back, 0, &bw, &error));
    g_assert_cmpfloat(fabs(bw - 0.1), <, 1e-15);
    g_remove(path);
    g_rmdir(dir);
}

static void test_fit_range(void)
{
    int s, e;
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_flim_prep_fit_range(0, 0, 256, 0.1, &s, &e, &error));
    g_assert_cmpint(s, ==, 0);
    g_assert_cmpint(e, ==, 256);
    g_assert_true(fm_flim_prep_fit_range(1.0, 2.0, 256, 0.1, &s, &e, &error));
    g_assert_cmpint(s, ==, 10);
    g_assert_cmpint(e, ==, 20);
    g_assert_true(fm_flim_prep_fit_range(2.0, 0, 256, 0.1, &s, &e, &error));
    g_assert_cmpint(s, ==, 20);
    g_assert_cmpint(e, ==, 256);
    g_assert_false(fm_flim_prep_fit_range(0, 40, 256, 0.1, &s, &e, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_cmpstr(error->message, ==, "fit range 0–40 ns lies outside the data (0–25.6 ns)");
    g_clear_error(&error);
    g_assert_false(fm_flim_prep_fit_range(1.0, 1.5, 256, 0.1, &s, &e, &error));
    g_assert_nonnull(strstr(error->message, "at least 8"));
}

static void test_masks_and_segments(void)
{
    const int w = 16, h = 8;
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_autofree guint8 *all = fm_flim_prep_mask(NULL, w, h);
    for (int i = 0; i < w * h; i++)
        g_assert_cmpint(all[i], ==, 1);
    /* segment and reference ROIs do not restrict the fit */
    fm_roi *seg_a = fm_roi_new_rectangle("a", 0, 0, 8, 8),
           *seg_b = fm_roi_new_rectangle("b", 8, 0, 16, 4);
    seg_a->role = g_strdup("segment");
    seg_b->role = g_strdup("segment");
    g_ptr_array_add(rois, seg_a);
    g_ptr_array_add(rois, seg_b);
    g_autofree guint8 *still_all = fm_flim_prep_mask(rois, w, h);
    for (int i = 0; i < w * h; i++)
        g_assert_cmpint(still_all[i], ==, 1);
    g_assert_null(fm_flim_prep_role_mask(rois, "reference", w, h));

    /* segments from ROIs: pixels outside both are -1, and so are pixels the mask leaves out */
    all[3] = 0;
    int n_seg = 0;
    g_autofree int *seg = fm_flim_prep_segments(rois, all, w, h, 32, &n_seg);
    g_assert_cmpint(n_seg, ==, 2);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int want = x < 8 ? 0 : (y < 4 ? 1 : -1);
            if (y == 0 && x == 3)
                want = -1;
            g_assert_cmpint(seg[y * w + x], ==, want);
        }

    /* a fit ROI restricts the mask */
    fm_roi *fit = fm_roi_new_rectangle("cells", 2, 1, 5, 3);
    g_ptr_array_add(rois, fit);
    g_autofree guint8 *m = fm_flim_prep_mask(rois, w, h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            g_assert_cmpint(m[y * w + x], ==, x >= 2 && x < 5 && y >= 1 && y < 3);

    /* automatic tiles: 32 -> 8 x 4, the paper's GA-32; 16 x 8 makes four tiles */
    int tw, th;
    fm_flim_prep_tile_shape(32, &tw, &th);
    g_assert_cmpint(tw, ==, 8);
    g_assert_cmpint(th, ==, 4);
    fm_flim_prep_tile_shape(31, &tw, &th); /* prime: about square instead of 31 x 1 */
    g_assert_cmpint(tw, ==, 6);
    g_assert_cmpint(th, ==, 6);
    g_autofree guint8 *ones = fm_flim_prep_mask(NULL, w, h);
    g_autofree int *tiles = fm_flim_prep_segments(NULL, ones, w, h, 32, &n_seg);
    g_assert_cmpint(n_seg, ==, 4);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            g_assert_cmpint(tiles[y * w + x], ==, (y / 4) * 2 + x / 8);
}

static void test_decay_files(void)
{
    g_autofree char *dir = g_dir_make_tmp("flimirf-XXXXXX", NULL);
    g_autofree char *plain = g_build_filename(dir, "irf.txt", NULL);
    g_autofree char *csv = g_build_filename(dir, "irf.csv", NULL);
    g_autofree char *tif = g_build_filename(dir, "irf.tif", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(g_file_set_contents(plain, "# irf\n0\n1\n3\n0\n0\n0\n0\n0\n", -1, NULL));
    g_autofree float *a = fm_flim_prep_load_decay(plain, 8, "IRF", &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(a[1], ==, 0.25f);
    g_assert_cmpfloat(a[2], ==, 0.75f);
    g_assert_true(g_file_set_contents(csv,
                                      "t_ns,irf\n0,1\n0.1,1\n0.2,2\n0.3,0\n0.4,0\n"
                                      "0.5,0\n0.6,0\n0.7,0\n",
                                      -1, NULL));
    g_autofree float *b = fm_flim_prep_load_decay(csv, 8, "IRF", &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(b[2], ==, 0.5f);
    g_assert_null(fm_flim_prep_load_decay(csv, 16, "IRF", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "8 values, the data has 16 time bins"));
    g_clear_error(&error);
    g_assert_true(g_file_set_contents(csv, "0\n1\nbanana\n", -1, NULL));
    g_assert_null(fm_flim_prep_load_decay(csv, 3, "IRF", &error));
    g_assert_nonnull(strstr(error->message, "line 3"));
    g_clear_error(&error);
    /* single-pixel decay TIFF: one page per bin */
    gsize sizes[3] = {1, 1, 8};
    g_autoptr(fm_dataset) px = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    ((guint16 *)px->data)[4] = 10;
    ((guint16 *)px->data)[5] = 30;
    g_assert_true(fm_tiff_write_dataset(tif, px, NULL, &error));
    g_autofree float *c = fm_flim_prep_load_decay(tif, 8, "IRF", &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(c[4], ==, 0.25f);
    g_assert_cmpfloat(c[5], ==, 0.75f);
    g_remove(plain);
    g_remove(csv);
    g_remove(tif);
    g_rmdir(dir);
}

/* Photon statistics of the simulator against closed forms: the per-pixel total is Poisson
 * (mean = variance = photons less the share cut by the window), the summed histogram of a bar
 * has the mean bin of a truncated geometric law, and a pure background is Poisson per bin. */
static void test_simulator(void)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 64;
    p.height = 16;
    p.photons = 800;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) a = fm_flim_simulate(&p, &error);
    g_autoptr(fm_dataset) b = fm_flim_simulate(&p, &error);
    g_assert_no_error(error);
    g_assert_cmpmem(a->data, fm_dataset_n_bytes(a), b->data, fm_dataset_n_bytes(b));
    g_assert_cmpfloat(a->dims[2].spacing, ==, 0.1);
    g_assert_cmpstr(a->dims[2].unit, ==, "ns");

    const int n_px = p.width * p.height, bins = p.n_bins;
    const double bw = p.bin_width_ps * 1e-3, T = bins * bw;
    const guint16 *c = a->data;
    for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++) {
        double tau = fm_flim_sim_bar_tau_ns[bar], q = exp(-bw / tau);
        double s = 0, s2 = 0, hist_n = 0, hist_b = 0;
        int n = 0;
        for (int i = 0; i < n_px; i++) {
            if (fm_flim_sim_bar_of(&p, i % p.width) != bar)
                continue;
            double tot = 0;
            for (int k = 0; k < bins; k++) {
                tot += c[(gsize)k * n_px + i];
                hist_b += (double)k * c[(gsize)k * n_px + i];
            }
            s += tot;
            s2 += tot * tot;
            hist_n += tot;
            n++;
        }
        double kept = p.photons * (1.0 - exp(-T / tau));
        double mean = s / n, var = (s2 - s * s / n) / (n - 1);
        /* mean of n Poisson totals: sd sqrt(kept / n) ~ 1.8; 5 sd */
        g_assert_cmpfloat(fabs(mean - kept), <, 5.0 * sqrt(kept / n));
        /* sample variance of 256 Poisson values: relative sd sqrt(2 / (n - 1)) ~ 9 %; 5 sd */
        g_assert_cmpfloat(fabs(var / kept - 1.0), <, 5.0 * sqrt(2.0 / (n - 1)));
        /* truncated geometric: P(k) ~ q^k, k < bins; mean bin E[k] */
        double num = 0, den = 0;
        for (int k = 0; k < bins; k++) {
            num += k * pow(q, k);
            den += pow(q, k);
        }
        double expect = num / den, var_k = 0;
        for (int k = 0; k < bins; k++)
            var_k += (k - expect) * (k - expect) * pow(q, k) / den;
        double got = hist_b / hist_n;
        g_assert_cmpfloat(fabs(got - expect), <, 5.0 * sqrt(var_k / hist_n));
    }

    /* background only: Poisson(2) per bin */
    p.photons = 0;
    p.background = 2.0;
    p.width = 16;
    p.height = 16;
    g_autoptr(fm_dataset) bg = fm_flim_simulate(&p, &error);
    g_assert_no_error(error);
    const guint16 *g = bg->data;
    double s = 0, s2 = 0;
    gsize n = fm_dataset_n_elements(bg);
    for (gsize i = 0; i < n; i++) {
        s += g[i];
        s2 += (double)g[i] * g[i];
    }
    double mean = s / n, var = s2 / n - mean * mean;
    g_assert_cmpfloat(fabs(mean - 2.0), <, 5.0 * sqrt(2.0 / n));
    g_assert_cmpfloat(fabs(var - 2.0), <, 0.05); /* sd of the variance ~ sqrt(2 x 4 / n) = 0.01 */

    /* the IRF sums to 1 and peaks at its offset */
    p.irf_sigma_ns = 0.2;
    p.irf_offset_ns = 1.05; /* the centre of bin 10 */
    g_autofree float *irf = fm_flim_sim_irf(&p);
    double sum = 0;
    int peak = 0;
    for (int k = 0; k < bins; k++) {
        sum += irf[k];
        peak = irf[k] > irf[peak] ? k : peak;
    }
    g_assert_cmpfloat(fabs(sum - 1.0), <, 1e-5);
    g_assert_cmpint(peak, ==, 10);
}

/* The photon sums a FLIM run derives are kept on the open dataset for the next run, and dropped
 * when the samples change: a re-run with another threshold uses them, a changed dataset does not.
 */
static void test_derived_photons(void)
{
    g_autoptr(fm_dataset) ds = cube(16, 8, 32, 7);
    fm_dataset_set_meta(ds, "bin_width_ps", "100");
    for (int b = 0; b < 32; b++) /* a 2.5 ns decay of 1000 counts at its peak in every pixel */
        for (int p = 0; p < 16 * 8; p++)
            ((guint16 *)ds->data)[b * 16 * 8 + p] = (guint16)lround(1000.0 * exp(-b * 0.1 / 2.5));
    const fm_method *iem = fm_method_find("flim.iem");
    g_autoptr(fm_params) params = fm_method_default_params(iem);
    g_assert_true(fm_params_set_from_string(params, "min_photons", "1", NULL));
    fm_job_context context = {.backend = FM_BACKEND_CPU};
    GError *error = NULL;
    g_autoptr(fm_result) first = fm_method_run(iem, ds, params, NULL, &context, &error);
    g_assert_no_error(error);
    g_autoptr(GBytes) kept = fm_dataset_derived_lookup(ds, "flim.photons/1/0/32");
    g_assert_nonnull(kept);
    const double *sums = g_bytes_get_data(kept, NULL);
    double by_hand = 0.0;
    for (int b = 0; b < 32; b++)
        by_hand += ((guint16 *)ds->data)[(gsize)b * 16 * 8 + 5];
    g_assert_cmpfloat(sums[5], ==, by_hand);

    /* pixel 5 now has no photons: a stale sum would still fit it */
    for (int b = 0; b < 32; b++)
        ((guint16 *)ds->data)[(gsize)b * 16 * 8 + 5] = 0;
    fm_dataset_changed(ds);
    g_assert_null(fm_dataset_derived_lookup(ds, "flim.photons/1/0/32"));
    g_autoptr(fm_result) second = fm_method_run(iem, ds, params, NULL, &context, &error);
    g_assert_no_error(error);
    /* the intensity map is the photon sum where the pixel was selected, NaN where left out */
    const fm_map *before = fm_result_get_map(first, "intensity");
    const fm_map *after = fm_result_get_map(second, "intensity");
    g_assert_cmpfloat(before->data[5], ==, by_hand);
    g_assert_true(isnan(after->data[5]));
    g_assert_cmpfloat(after->data[6], ==, before->data[6]);
}

static const fm_param_spec string_specs[] = {
    {.key = "irf_file", .type = FM_PARAM_STRING, .default_choice = ""},
    {.key = "label", .type = FM_PARAM_STRING, .default_choice = "decay"},
};

static void test_string_param(void)
{
    g_autoptr(fm_params) p = fm_params_new(string_specs, G_N_ELEMENTS(string_specs));
    g_autoptr(GError) error = NULL;
    g_assert_cmpstr(fm_param_type_name(FM_PARAM_STRING), ==, "string");
    g_assert_cmpstr(fm_params_get_string(p, "irf_file"), ==, "");
    g_assert_cmpstr(fm_params_get_string(p, "label"), ==, "decay");
    g_assert_true(fm_params_set_from_string(p, "irf_file", " /data/irf 1.csv ", &error));
    g_assert_cmpstr(fm_params_get_string(p, "irf_file"), ==, "/data/irf 1.csv");
    g_autofree char *text = fm_params_to_string(p, "irf_file");
    g_assert_cmpstr(text, ==, "/data/irf 1.csv");
    g_autofree char *json = fm_params_to_json(p);
    g_assert_cmpstr(json, ==, "{\"irf_file\":\"/data/irf 1.csv\",\"label\":\"decay\"}");
    g_autoptr(fm_params) q = fm_params_new(string_specs, G_N_ELEMENTS(string_specs));
    g_assert_true(fm_params_set_from_json(q, json, &error));
    g_assert_cmpstr(fm_params_get_string(q, "irf_file"), ==, "/data/irf 1.csv");
    g_autoptr(fm_params) copy = fm_params_copy(q);
    g_assert_cmpstr(fm_params_get_string(copy, "irf_file"), ==, "/data/irf 1.csv");
    g_assert_false(fm_params_set_from_json(q, "{\"label\":3}", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_clear_error(&error);
    g_assert_false(fm_params_set_double(q, "label", 3, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_cmpstr(fm_params_get_string(q, "label"), ==, "decay");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flim-prep/binning", test_binning);
    g_test_add_func("/flim-prep/bin-width", test_bin_width);
    g_test_add_func("/flim-prep/tiff-description", test_tiff_description);
    g_test_add_func("/flim-prep/fit-range", test_fit_range);
    g_test_add_func("/flim-prep/masks-and-segments", test_masks_and_segments);
    g_test_add_func("/flim-prep/decay-files", test_decay_files);
    g_test_add_func("/flim-prep/simulator", test_simulator);
    g_test_add_func("/flim-prep/string-param", test_string_param);
    g_test_add_func("/flim-prep/derived-photons", test_derived_photons);
    return g_test_run();
}
