/* The simulators under OpenMP: the same bytes for one thread and several, and the speckle
 * simulator's contrast against its closed form. */
#include <glib.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "app/core/dce/dce_sim.h"
#include "app/core/flim/flim_sim.h"
#include "app/core/lsi/lsi_sim.h"
#include "app/core/oct/oct_sim.h"

typedef fm_dataset *(*simulate_fn)(gconstpointer params);

/* Thread counts that split the work differently: one, two, an odd count, more than cores. */
static const int thread_counts[] = {2, 3, 5};

/* Simulates with one thread, then with each of thread_counts, and compares the bytes. */
static void assert_same_for_any_thread_count(simulate_fn simulate, gconstpointer params)
{
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    g_autoptr(fm_dataset) one = simulate(params);
    g_assert_nonnull(one);
    for (gsize i = 0; i < G_N_ELEMENTS(thread_counts); i++) {
        omp_set_num_threads(thread_counts[i]);
        g_autoptr(fm_dataset) many = simulate(params);
        g_assert_nonnull(many);
        g_test_message("%d threads", thread_counts[i]);
        g_assert_cmpmem(one->data, fm_dataset_n_bytes(one), many->data, fm_dataset_n_bytes(many));
    }
    omp_set_num_threads(saved);
#else
    (void)simulate;
    (void)params;
    g_test_skip("built without OpenMP");
#endif
}

static fm_dataset *simulate_lsi(gconstpointer params)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_lsi_simulate(params, &error);
    g_assert_no_error(error);
    return ds;
}

static fm_dataset *simulate_flim(gconstpointer params)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_flim_simulate(params, &error);
    g_assert_no_error(error);
    return ds;
}

static fm_dataset *simulate_dce(gconstpointer params)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_dce_simulate(params, &error);
    g_assert_no_error(error);
    return ds;
}

static fm_dataset *simulate_oct(gconstpointer params)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_oct_simulate(params, &error);
    g_assert_no_error(error);
    return ds;
}

static fm_dataset *simulate_oct_reference(gconstpointer params)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_oct_simulate_reference(params, 37, &error);
    g_assert_no_error(error);
    return ds;
}

/* 80 rows: up to five bands of rows (16 rows at least each), so every thread count above
 * splits the stack differently; shot noise on, so its draws are covered too. */
static void test_lsi_threads(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 45, p.height = 80, p.n_frames = 3, p.seed = 7;
    assert_same_for_any_thread_count(simulate_lsi, &p);
    p.bits = 8, p.mean_counts = 60.0, p.speckle_size_px = 6.0; /* a wider kernel: more overlap */
    assert_same_for_any_thread_count(simulate_lsi, &p);
}

/* 100 columns: four tiles of 32; the bi-exponential with IRF and background takes every path
 * of the bin laws (small and large means, the IRF's CDF). */
static void test_flim_threads(void)
{
    fm_flim_sim_params p;
    fm_flim_sim_defaults(&p);
    p.width = 100, p.height = 12, p.n_bins = 48, p.photons = 900, p.seed = 9;
    assert_same_for_any_thread_count(simulate_flim, &p);
    p.pattern = FM_FLIM_SIM_BIEXP, p.irf_sigma_ns = 0.15, p.background = 0.4;
    assert_same_for_any_thread_count(simulate_flim, &p);
}

static void test_dce_threads(void)
{
    fm_dce_sim_params p;
    fm_dce_sim_defaults(&p);
    p.nx = 17, p.ny = 15, p.nz = 3, p.n_times = 12, p.cnr = 10.0, p.seed = 4;
    assert_same_for_any_thread_count(simulate_dce, &p);
}

static void test_oct_threads(void)
{
    fm_oct_sim_params p;
    fm_oct_sim_defaults(&p);
    p.pixels_per_aline = 256, p.alines_per_bscan = 23, p.n_bscans = 3;
    assert_same_for_any_thread_count(simulate_oct, &p);
    p.sample = FM_OCT_SIM_MIRROR;
    assert_same_for_any_thread_count(simulate_oct, &p);
    assert_same_for_any_thread_count(simulate_oct_reference, &p);
}

/* Static speckle (tau far above the exposure) from delta-correlated grains: each pixel's
 * intensity is exponential, so sd/mean over the frame is 1 (the complex Gaussian field's
 * E|E|^4 = 2 (E|E|^2)^2) and the mean is mean_counts (E|E|^2 = 1). 4096 pixels: the estimates'
 * sd are about 2 % (K) and 1.6 % (mean); tolerance 3 sd. 16 bits and 2000 counts: clipping at
 * 32 means and rounding shift neither by 1e-6. */
static void test_lsi_static_contrast(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 64, p.height = 64, p.n_frames = 1, p.seed = 3, p.shot_noise = FALSE;
    p.tau_vessel_ms = p.tau_background_ms = 1e9;
    p.speckle_size_px = 0.5, p.bits = 16, p.mean_counts = 2000.0;
    g_autoptr(fm_dataset) ds = simulate_lsi(&p);
    const guint16 *counts = ds->data;
    const gsize n = fm_dataset_n_elements(ds);
    double sum = 0.0, sum2 = 0.0;
    for (gsize i = 0; i < n; i++) {
        sum += counts[i];
        sum2 += (double)counts[i] * counts[i];
    }
    double mean = sum / n, k = sqrt((sum2 - sum * sum / n) / (n - 1)) / mean;
    g_test_message("static white speckle: K = %.4f (expected 1), mean %.1f (expected %.0f)", k,
                   mean, p.mean_counts);
    g_assert_cmpfloat(fabs(k - 1.0), <, 0.06);
    g_assert_cmpfloat(fabs(mean / p.mean_counts - 1.0), <, 0.05);
}

/* Temporal K per pixel over 80 frames against K^2 = (exp(-2x) - 1 + 2x) / (2x^2), x = T/tau
 * = 5: frames almost independent (intensity correlation ~5 %), so the per-pixel estimate is
 * biased by < 1 %, sub-steps add +1 % (dt = tau/4), and the mean over 1024 pixels (about 100
 * independent grains) has a statistical error near 1 %. Tolerance 4 %, as the accuracy suite's
 * /accuracy/lsi/temporal-vs-formula, which checks the same through the lsi.temporal method. */
static void test_lsi_temporal_contrast(void)
{
    fm_lsi_sim_params p;
    fm_lsi_sim_defaults(&p);
    p.width = 32, p.height = 32, p.n_frames = 80, p.seed = 5, p.shot_noise = FALSE;
    p.tau_vessel_ms = p.tau_background_ms = 1.0;
    p.exposure_ms = 5.0, p.bits = 16, p.mean_counts = 2000.0;
    g_autoptr(fm_dataset) ds = simulate_lsi(&p);
    const guint16 *counts = ds->data;
    const gsize n_px = (gsize)p.width * p.height;
    double k_sum = 0.0;
    for (gsize i = 0; i < n_px; i++) {
        double sum = 0.0, sum2 = 0.0;
        for (int f = 0; f < p.n_frames; f++) {
            double v = counts[(gsize)f * n_px + i];
            sum += v;
            sum2 += v * v;
        }
        double mean = sum / p.n_frames;
        k_sum += sqrt((sum2 - sum * mean) / (p.n_frames - 1)) / mean;
    }
    double k = k_sum / n_px, expected = fm_lsi_sim_expected_contrast(p.exposure_ms, 1.0);
    g_test_message("temporal K = %.4f (expected %.4f)", k, expected);
    g_assert_cmpfloat(fabs(k / expected - 1.0), <, 0.04);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/sim-parallel/lsi-threads", test_lsi_threads);
    g_test_add_func("/core/sim-parallel/flim-threads", test_flim_threads);
    g_test_add_func("/core/sim-parallel/dce-threads", test_dce_threads);
    g_test_add_func("/core/sim-parallel/oct-threads", test_oct_threads);
    g_test_add_func("/core/sim-parallel/lsi-static-contrast", test_lsi_static_contrast);
    g_test_add_func("/core/sim-parallel/lsi-temporal-contrast", test_lsi_temporal_contrast);
    return g_test_run();
}
