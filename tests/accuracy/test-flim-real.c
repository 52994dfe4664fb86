/* FLIM defaults on a real instrument file: PicoQuant's SymPhoTime example (PicoHarp T3, 256 x 256,
 * at most 84 photons per pixel), where SymPhoTime shows a lifetime of about 2.5 ns. With default
 * parameters, every method judged must give that lifetime on most pixels worth fitting. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/io/open.h"
#include "app/core/method.h"

#define SYMPHOTIME_TAU_NS 2.50
#define TOLERANCE 0.15   /* the bound on the median */
#define WORTH_PHOTONS 20 /* pixels with this many photons should get a lifetime */

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static fm_dataset *open_real(void)
{
    const char *dir = g_getenv("FM_REFDATA_DIR");
    g_autofree char *path =
        dir ? g_build_filename(dir, "flim-real", "Example_PTU_PicoHarp.ptu", NULL) : NULL;
    if (path == NULL || !g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("refdata file flim-real/Example_PTU_PicoHarp.ptu is absent (FM_REFDATA_DIR "
                    "unset or ../shared/refdata not beside the repository)");
        return NULL;
    }
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    return ds;
}

static void test_defaults(gconstpointer data)
{
    const char *id = data;
    g_autoptr(fm_dataset) ds = open_real();
    if (ds == NULL)
        return;
    const int w = fm_dataset_width(ds), h = fm_dataset_height(ds), n_bins = fm_dataset_frames(ds);
    const gsize n_px = (gsize)w * h;
    const fm_method *method = fm_method_find(id);
    g_assert_nonnull(method);
    fm_job_context context = {.backend = FM_BACKEND_CPU};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_result) result = fm_method_run(method, ds, NULL, NULL, &context, &error);
    g_assert_no_error(error);
    g_test_message("%s: %s", id, result->note ? result->note : "(no note)");
    const fm_map *tau = fm_result_get_map(result, "tau");
    const fm_map *intensity = fm_result_get_map(result, "intensity");
    g_assert_nonnull(tau);
    g_assert_nonnull(intensity);

    /* the intensity map is the photon count of each pixel, every bin, exactly (NaN where none
     * came), and all of them are the photons the reader put in the image */
    double total = 0.0;
    for (gsize p = 0; p < n_px; p++) {
        double photons = 0.0;
        for (int b = 0; b < n_bins; b++)
            photons += fm_dataset_value(ds, (gsize)b * n_px + p);
        if (photons == 0.0)
            g_assert_true(isnan(intensity->data[p]));
        else
            g_assert_cmpfloat(intensity->data[p], ==, photons);
        total += photons;
    }
    const char *records = fm_dataset_get_meta(ds, "ptu_photons");
    const char *dropped = fm_dataset_get_meta(ds, "ptu_photons_dropped");
    if (records && dropped)
        g_assert_cmpfloat(total, ==, g_ascii_strtod(records, NULL) - g_ascii_strtod(dropped, NULL));

    g_autofree float *good = g_new(float, n_px);
    gsize worth = 0, n_good = 0;
    for (gsize p = 0; p < n_px; p++) {
        if (!(intensity->data[p] >= WORTH_PHOTONS))
            continue;
        worth++;
        if (isfinite(tau->data[p]))
            good[n_good++] = tau->data[p];
    }
    g_assert_cmpuint(worth, >, 10000); /* the file's bright cells: 17 000 pixels */
    qsort(good, n_good, sizeof *good, compare_float);
    double median = n_good ? good[n_good / 2] : NAN;
    g_test_message("%s: %zu of %zu pixels with >= %d photons have a lifetime; median %.3f ns "
                   "(SymPhoTime %.2f ns, %+.1f %%)",
                   id, n_good, worth, WORTH_PHOTONS, median, SYMPHOTIME_TAU_NS,
                   100.0 * (median / SYMPHOTIME_TAU_NS - 1.0));
    g_assert_cmpuint(2 * n_good, >, worth);
    g_assert_cmpfloat(fabs(median / SYMPHOTIME_TAU_NS - 1.0), <, TOLERANCE);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_data_func("/flim-real/picoharp-defaults/lsm", "flim.lsm", test_defaults);
    g_test_add_data_func("/flim-real/picoharp-defaults/mle", "flim.mle", test_defaults);
    g_test_add_data_func("/flim-real/picoharp-defaults/cmm", "flim.cmm", test_defaults);
    return g_test_run();
}
