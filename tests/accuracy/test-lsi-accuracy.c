/* Accuracy of the LSI methods against the project's speckle simulator with known correlation
 * times: K from the maps versus K^2 = (exp(-2x) - 1 + 2x)/(2x^2), x = T/tau. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "app/core/method.h"
#include "app/core/methods.h"
#include "app/core/lsi/lsi_sim.h"

typedef enum { REGION_ALL, REGION_VESSEL, REGION_BACKGROUND } region;

/* Pixel classes with a margin from the band edge: the simulator's field is smoothed over the
 * speckle kernel (radius <= 4 px) and the window (radius 3) mixes both regions near the edge. */
static gboolean in_region(const fm_lsi_sim_params *p, int x, int y, region r)
{
    if (r == REGION_ALL)
        return TRUE;
    double x0, y0, x1, y1, hw;
    fm_lsi_sim_vessel_geometry(p, &x0, &y0, &x1, &y1, &hw);
    double dx = x1 - x0, dy = y1 - y0;
    double d = fabs((x + 0.5 - x0) * dy - (y + 0.5 - y0) * dx) / sqrt(dx * dx + dy * dy);
    return r == REGION_VESSEL ? d <= hw - 7.0 : d >= hw + 8.0;
}

/* Runs a method on the CPU twin and returns its result. */
static fm_result *run_method(const fm_method *method, fm_dataset *ds, int window, int frames,
                             double exposure_ms)
{
    g_autoptr(fm_params) params = fm_method_default_params(method);
    g_autofree char *w = g_strdup_printf("%d", window), *f = g_strdup_printf("%d", frames);
    char t[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(t, sizeof t, exposure_ms);
    g_autoptr(GError) error = NULL;
    if (window)
        g_assert_true(fm_params_set_from_string(params, "window", w, &error));
    if (frames)
        g_assert_true(fm_params_set_from_string(params, "frames", f, &error));
    g_assert_true(fm_params_set_from_string(params, "exposure_ms", t, &error));
    fm_job_context context = {.backend = FM_BACKEND_CPU};
    fm_result *result = fm_method_run(method, ds, params, NULL, &context, &error);
    g_assert_no_error(error);
    g_assert_nonnull(result);
    return result;
}

/* Mean of a map's finite values inside a region, over all frames. */
static double region_mean(const fm_lsi_sim_params *p, const fm_result *result, const char *name,
                          region r)
{
    fm_map *map = fm_result_get_map(result, name);
    g_assert_nonnull(map);
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(float));
    double sum = 0.0;
    for (int f = 0; f < map->n_frames; f++)
        for (int y = 0; y < map->height; y++)
            for (int x = 0; x < map->width; x++) {
                float v = fm_map_frame(map, f)[(gsize)y * map->width + x];
                if (isfinite(v) && in_region(p, x, y, r)) {
                    sum += v;
                    g_array_append_val(values, v);
                }
            }
    g_assert_cmpuint(values->len, >, 500);
    return sum / values->len;
}

static int compare_float(gconstpointer a, gconstpointer b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double region_median(const fm_lsi_sim_params *p, const fm_result *result, const char *name,
                            region r)
{
    fm_map *map = fm_result_get_map(result, name);
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(float));
    for (int f = 0; f < map->n_frames; f++)
        for (int y = 0; y < map->height; y++)
            for (int x = 0; x < map->width; x++) {
                float v = fm_map_frame(map, f)[(gsize)y * map->width + x];
                if (isfinite(v) && in_region(p, x, y, r))
                    g_array_append_val(values, v);
            }
    g_assert_cmpuint(values->len, >, 500);
    g_array_sort(values, compare_float);
    return g_array_index(values, float, values->len / 2);
}

static fm_dataset *simulate(const fm_lsi_sim_params *p)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_lsi_simulate(p, &error);
    g_assert_no_error(error);
    return ds;
}

/* The closed form itself, at points checked by hand: x -> 0 gives 1, x = 1 gives
 * sqrt((e^-2 + 1)/2), large x tends to 1/sqrt(x). */
static void test_formula(void)
{
    g_assert_cmpfloat_with_epsilon(fm_lsi_sim_expected_contrast(5, 1e12), 1.0, 1e-9);
    g_assert_cmpfloat_with_epsilon(fm_lsi_sim_expected_contrast(2, 2),
                                   sqrt((exp(-2.0) + 1.0) / 2.0), 1e-12);
    g_assert_cmpfloat_with_epsilon(fm_lsi_sim_expected_contrast(1e4, 1) * sqrt(1e4), 1.0, 1e-3);
    /* continuity where the series takes over from the closed form */
    g_assert_cmpfloat_with_epsilon(fm_lsi_sim_expected_contrast(0.999e-3, 1),
                                   fm_lsi_sim_expected_contrast(1.001e-3, 1), 1e-6);
}

/* Same seed, same stack: the demo and every test are reproducible. */
static void test_deterministic(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 40, p.height = 32, p.n_frames = 2, p.seed = 11;
    g_autoptr(fm_dataset) a = simulate(&p);
    g_autoptr(fm_dataset) b = simulate(&p);
    g_assert_cmpmem(a->data, fm_dataset_n_bytes(a), b->data, fm_dataset_n_bytes(b));
    p.seed = 12;
    g_autoptr(fm_dataset) c = simulate(&p);
    g_assert_true(memcmp(a->data, c->data, fm_dataset_n_bytes(a)) != 0);
}

/* Delta-correlated static speckle (grain smaller than a pixel, tau -> infinity) is exponential
 * at every pixel, so spatial K must be 1 up to the estimator's small-sample bias: for 49
 * exponential samples sd/mean is biased low by about 2 %; allow 4 %. */
static void test_static_white_speckle(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 128, p.height = 128, p.n_frames = 2, p.seed = 5, p.shot_noise = FALSE;
    p.tau_vessel_ms = p.tau_background_ms = 1e9;
    p.speckle_size_px = 0.5;
    g_autoptr(fm_dataset) ds = simulate(&p);
    g_autoptr(fm_result) r = run_method(&fm_method_lsi_spatial, ds, 7, 0, p.exposure_ms);
    double k = region_mean(&p, r, "contrast", REGION_ALL);
    g_test_message("static white speckle: spatial K = %.4f (expected 1)", k);
    g_assert_cmpfloat(fabs(k - 1.0), <, 0.04);
}

/* Spatial K in both regions against the formula. A 3 px grain makes neighbouring pixels
 * correlated, which lowers the windowed sd by a factor beta (about 0.8 here) that is the same
 * for every tau, because the time-integrated intensity keeps the static spatial correlation.
 * So beta is calibrated on a static simulation (tau -> infinity) with the same grain and window,
 * and the ratios K/beta are compared with the formula. Tolerance 6 %: sub-step integration
 * (dt <= tau/4, +1 %), 12-bit quantisation (< 0.1 %), and the statistical error of the region
 * means (about 2 % for ~100 independent windows per region). */
static void test_spatial_against_formula(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 256, p.height = 256, p.n_frames = 6, p.seed = 21, p.shot_noise = FALSE;
    const int window = 7;

    fm_lsi_sim_params s = p;
    s.tau_vessel_ms = s.tau_background_ms = 1e9;
    s.n_frames = 3;
    g_autoptr(fm_dataset) static_ds = simulate(&s);
    g_autoptr(fm_result) static_r =
        run_method(&fm_method_lsi_spatial, static_ds, window, 0, p.exposure_ms);
    double beta = region_mean(&s, static_r, "contrast", REGION_ALL);
    g_test_message("static calibration: K_static = %.4f", beta);
    g_assert_cmpfloat(beta, >, 0.6);
    g_assert_cmpfloat(beta, <, 1.0);

    g_autoptr(fm_dataset) ds = simulate(&p);
    g_autoptr(fm_result) r = run_method(&fm_method_lsi_spatial, ds, window, 0, p.exposure_ms);
    double k_v = region_mean(&p, r, "contrast", REGION_VESSEL) / beta;
    double k_b = region_mean(&p, r, "contrast", REGION_BACKGROUND) / beta;
    double e_v = fm_lsi_sim_expected_contrast(p.exposure_ms, p.tau_vessel_ms);
    double e_b = fm_lsi_sim_expected_contrast(p.exposure_ms, p.tau_background_ms);
    g_test_message("spatial K/beta: vessel %.4f (expected %.4f), background %.4f (expected %.4f)",
                   k_v, e_v, k_b, e_b);
    g_assert_cmpfloat(fabs(k_v / e_v - 1.0), <, 0.06);
    g_assert_cmpfloat(fabs(k_b / e_b - 1.0), <, 0.06);

    /* faster flow: lower contrast and higher flow index, by a wide margin */
    g_assert_cmpfloat(k_v, <, 0.6 * k_b);
    double sfi_v = region_median(&p, r, "sfi", REGION_VESSEL);
    double sfi_b = region_median(&p, r, "sfi", REGION_BACKGROUND);
    g_test_message("median SFI: vessel %.1f /s, background %.1f /s", sfi_v, sfi_b);
    g_assert_cmpfloat(sfi_v, >, 3.0 * sfi_b);
}

/* Temporal K at one pixel over many exposures has no spatial bias (each pixel sees exponential
 * speckle statistics, beta = 1). With tau = 1 ms and T = 5 ms successive frames are nearly
 * independent (intensity correlation ~5 %), so the 50-frame estimate is biased by < 1 %;
 * sub-steps add +1 %. Tolerance 4 %. */
static void test_temporal_against_formula(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 64, p.height = 64, p.n_frames = 60, p.seed = 33, p.shot_noise = FALSE;
    p.tau_vessel_ms = p.tau_background_ms = 1.0;
    p.exposure_ms = 5.0;
    g_autoptr(fm_dataset) ds = simulate(&p);
    g_autoptr(fm_result) r = run_method(&fm_method_lsi_temporal, ds, 0, 50, p.exposure_ms);
    double k = region_mean(&p, r, "contrast", REGION_ALL);
    double e = fm_lsi_sim_expected_contrast(p.exposure_ms, 1.0);
    g_test_message("temporal K = %.4f (expected %.4f)", k, e);
    g_assert_cmpfloat(fabs(k / e - 1.0), <, 0.04);
}

/* On the demo-like stack, temporal and spatio-temporal contrast rank the regions like the
 * spatial one, and temporal K in the vessel (frames independent) meets the formula
 * within 5 % (tau 1 ms against T 10 ms; edge pixels excluded; shot noise at 500 counts adds 1/500
 * to K^2, +1 %). */
static void test_temporal_regions(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 128, p.height = 128, p.n_frames = 30, p.seed = 44;
    g_autoptr(fm_dataset) ds = simulate(&p);
    g_autoptr(fm_result) t = run_method(&fm_method_lsi_temporal, ds, 0, 25, p.exposure_ms);
    double k_v = region_mean(&p, t, "contrast", REGION_VESSEL);
    double k_b = region_mean(&p, t, "contrast", REGION_BACKGROUND);
    double e_v = fm_lsi_sim_expected_contrast(p.exposure_ms, p.tau_vessel_ms);
    g_test_message("temporal K: vessel %.4f (expected %.4f), background %.4f", k_v, e_v, k_b);
    g_assert_cmpfloat(fabs(k_v / e_v - 1.0), <, 0.05);
    g_assert_cmpfloat(k_v, <, 0.6 * k_b);
    g_assert_cmpfloat(region_median(&p, t, "sfi", REGION_VESSEL), >,
                      3.0 * region_median(&p, t, "sfi", REGION_BACKGROUND));

    g_autoptr(fm_result) st = run_method(&fm_method_lsi_spatiotemporal, ds, 5, 10, p.exposure_ms);
    double st_v = region_mean(&p, st, "contrast", REGION_VESSEL);
    double st_b = region_mean(&p, st, "contrast", REGION_BACKGROUND);
    g_test_message("spatio-temporal K: vessel %.4f, background %.4f", st_v, st_b);
    g_assert_cmpfloat(st_v, <, 0.6 * st_b);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/accuracy/lsi/formula", test_formula);
    g_test_add_func("/accuracy/lsi/deterministic", test_deterministic);
    g_test_add_func("/accuracy/lsi/static-white-speckle", test_static_white_speckle);
    g_test_add_func("/accuracy/lsi/spatial-vs-formula", test_spatial_against_formula);
    g_test_add_func("/accuracy/lsi/temporal-vs-formula", test_temporal_against_formula);
    g_test_add_func("/accuracy/lsi/temporal-regions", test_temporal_regions);
    return g_test_run();
}
