/* GUI test: drives FmApplication through app.open and win.run under a display, then checks the
 * catalogue, the map on display against a brute-force SFI, ROI statistics and playback, and
 * saves a screenshot of the window. */
#include <gtk/gtk.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
#include "app/gui/application.h"
#include "app/gui/compare-view.h"
#include "app/gui/window.h"

static char *data_dir;
static char *tif_path;
static FmApplication *app;
static FmWindow *win;

/* Runs the main loop until cond holds or timeout_s passes. */
static gboolean wait_for(gboolean (*cond)(void), double timeout_s)
{
    gint64 end = g_get_monotonic_time() + (gint64)(timeout_s * G_USEC_PER_SEC);
    while (!cond()) {
        if (g_get_monotonic_time() > end)
            return FALSE;
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(2000);
    }
    return TRUE;
}

static void drain_events(void)
{
    gint64 end = g_get_monotonic_time() + G_USEC_PER_SEC / 4;
    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(2000);
}

/* The info bar's text when it shows an error, else NULL (warnings such as the reported CUDA
 * fallback are expected on machines without a GPU). */
static const char *error_message(void)
{
    GtkMessageType type;
    const char *msg = fm_window_get_message(win, &type);
    return type == GTK_MESSAGE_ERROR ? msg : NULL;
}

static gboolean dataset_loaded(void)
{
    return !fm_window_is_loading(win) &&
           (fm_window_get_dataset(win) != NULL || error_message() != NULL);
}

static gboolean job_finished(void)
{
    return fm_window_get_last_job_state(win) >= 0 && fm_window_get_running_jobs(win) == 0;
}

static gboolean played_three(void)
{
    return fm_window_get_playback_count(win) >= 3 || error_message() != NULL;
}

/* A 64x48x3 uint16 speckle-like stack (fixed seed) when the build has no demo dataset. */
static char *write_fallback_tif(void)
{
    gsize sizes[3] = {64, 48, 3};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    GRand *rand = g_rand_new_with_seed(20110101);
    guint16 *px = ds->data;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        px[i] = (guint16)(200.0 - 150.0 * log(1.0 - g_rand_double(rand)));
    g_rand_free(rand);
    char *path = g_build_filename(data_dir, "speckle-fallback.tif", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, "gui test speckle", &error));
    return path;
}

/* SFI = 1/(2 T K^2) at (cx, cy) of frame 0 from a float64 5x5 window, sample sd (N-1). */
static double brute_force_sfi(const fm_dataset *ds, int cx, int cy, double exposure_s)
{
    int w = fm_dataset_width(ds);
    double s1 = 0, s2 = 0;
    for (int y = cy - 2; y <= cy + 2; y++)
        for (int x = cx - 2; x <= cx + 2; x++) {
            double v = fm_dataset_value(ds, (gsize)y * w + x);
            s1 += v;
            s2 += v * v;
        }
    double mean = s1 / 25.0, var = (s2 - 25.0 * mean * mean) / 24.0;
    double k = sqrt(var) / mean;
    return 1.0 / (2.0 * exposure_s * k * k);
}

/* Saves the window as FLUXMAP_SCREENSHOT with suffix inserted before ".png". */
static void save_screenshot(const char *suffix)
{
    const char *base = g_getenv("FLUXMAP_SCREENSHOT");
    g_autofree char *fallback = g_build_filename(data_dir, "screenshot.png", NULL);
    if (base == NULL)
        base = fallback;
    g_autofree char *stem =
        g_strndup(base, strlen(base) - (g_str_has_suffix(base, ".png") ? 4 : 0));
    g_autofree char *path = g_strconcat(stem, suffix, ".png", NULL);
    GtkWidget *widget = GTK_WIDGET(win);
    int w = gtk_widget_get_allocated_width(widget), h = gtk_widget_get_allocated_height(widget);
    g_assert_cmpint(w, >, 0);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    cairo_t *cr = cairo_create(surface);
    gtk_widget_draw(widget, cr);
    cairo_destroy(cr);
    g_assert_cmpint(cairo_surface_write_to_png(surface, path), ==, CAIRO_STATUS_SUCCESS);
    cairo_surface_destroy(surface);
    g_test_message("screenshot: %s", path);
}

static void test_open_run_catalogue(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(wait_for(dataset_loaded, 30));
    g_assert_null(error_message());
    fm_dataset *ds = fm_window_get_dataset(win);
    g_assert_nonnull(ds);
    g_autoptr(fm_dataset) truth = fm_tiff_read(tif_path, NULL);
    g_assert_cmpint(fm_dataset_width(ds), ==, fm_dataset_width(truth));
    g_assert_cmpint(fm_dataset_frames(ds), ==, fm_dataset_frames(truth));
    g_assert_true(fm_map_view_has_map(fm_window_get_map_view(win))); /* the raw frame */

    g_assert_true(fm_window_select_method(win, "lsi.spatial"));
    g_assert_false(fm_window_select_method(win, "no.such.method"));
    g_assert_true(fm_window_select_method(win, "lsi.spatial"));
    g_action_group_activate_action(G_ACTION_GROUP(win), "run", NULL);
    g_assert_true(wait_for(job_finished, 60));
    if (fm_window_get_message(win, NULL) != NULL)
        g_test_message("info bar: %s", fm_window_get_message(win, NULL));
    g_assert_cmpint(fm_window_get_last_job_state(win), ==, FM_JOB_DONE);

    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 0, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(runs->len, ==, 1);
    fm_catalogue_run *run = runs->pdata[0];
    g_assert_cmpstr(run->method_id, ==, "lsi.spatial");
    g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    gboolean have_contrast = FALSE, have_sfi = FALSE;
    for (guint i = 0; i < run->outputs->len; i++) {
        const fm_catalogue_output *out = run->outputs->pdata[i];
        have_contrast |= g_strcmp0(out->name, "contrast") == 0;
        have_sfi |= g_strcmp0(out->name, "sfi") == 0;
        g_assert_true(g_file_test(out->file, G_FILE_TEST_EXISTS));
    }
    g_assert_true(have_contrast && have_sfi);
    g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);

    /* The view shows frame 0 of the SFI map: compare with an independent float64 window sum
     * (default window 5, exposure 10 ms) at a few interior pixels; 1e-4 relative covers the
     * float32 output. */
    FmMapView *view = fm_window_get_map_view(win);
    g_assert_true(fm_map_view_has_map(view));
    int w = 0, h = 0;
    const float *data = fm_map_view_get_data(view, &w, &h);
    g_assert_cmpint(w, ==, fm_dataset_width(truth));
    g_assert_cmpint(h, ==, fm_dataset_height(truth));
    gsize finite = 0;
    for (gsize i = 0; i < (gsize)w * h; i++)
        finite += isfinite(data[i]);
    g_assert_cmpuint(finite, ==, (gsize)(w - 4) * (h - 4)); /* valid border: 2 px NaN around */
    const int pts[][2] = {{2, 2}, {w / 2, h / 2}, {w - 3, h - 3}, {7, h - 5}};
    for (gsize p = 0; p < G_N_ELEMENTS(pts); p++) {
        double want = brute_force_sfi(truth, pts[p][0], pts[p][1], 0.010);
        double got = data[(gsize)pts[p][1] * w + pts[p][0]];
        g_assert_cmpfloat_with_epsilon(got, want, 1e-4 * fabs(want));
    }

    /* An ROI for the screenshot and for the playback time course. */
    fm_map_view_add_roi(view, fm_roi_new_rectangle("vessel", 10, 10, 30, 30));
    drain_events();
    save_screenshot("");
}

static void test_playback(void)
{
    fm_dataset *ds = fm_window_get_dataset(win);
    g_assert_nonnull(ds);
    if (fm_dataset_frames(ds) < 2) {
        g_test_skip("single-frame dataset");
        return;
    }
    g_action_group_activate_action(G_ACTION_GROUP(win), "play", NULL);
    g_assert_true(wait_for(played_three, 30));
    g_assert_null(error_message());
    g_action_group_activate_action(G_ACTION_GROUP(win), "play", NULL);
    g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(win), "play");
    g_assert_false(g_variant_get_boolean(state));
    g_assert_true(fm_map_view_has_map(fm_window_get_map_view(win)));
    drain_events();
    save_screenshot("-playback");
    /* Playback frames are not catalogued. */
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, NULL);
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 0, NULL);
    g_assert_cmpuint(runs->len, ==, 1);
    g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);
}

/* win.colormap drives the view; the compare window loads a catalogued run's map twice. */
static void test_colormap_and_compare(void)
{
    FmMapView *view = fm_window_get_map_view(win);
    g_action_group_change_action_state(G_ACTION_GROUP(win), "colormap",
                                       g_variant_new_string("magma"));
    g_assert_cmpint(fm_map_view_get_colormap(view), ==, FM_COLORMAP_MAGMA);
    g_action_group_change_action_state(G_ACTION_GROUP(win), "colormap",
                                       g_variant_new_string("no-such-map"));
    g_assert_cmpint(fm_map_view_get_colormap(view), ==, FM_COLORMAP_MAGMA);

    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, NULL);
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 0, NULL);
    g_ptr_array_set_free_func(runs, (GDestroyNotify)fm_catalogue_run_free);
    g_assert_cmpuint(runs->len, >=, 1);
    gint64 id = ((fm_catalogue_run *)runs->pdata[0])->id;
    g_autoptr(GError) error = NULL;
    GtkWidget *compare =
        fm_compare_view_new(GTK_WINDOW(win), cat, id, id, "sfi", FM_COLORMAP_VIRIDIS, &error);
    g_assert_no_error(error);
    g_assert_nonnull(compare);
    drain_events();
    gtk_widget_destroy(compare);
    g_assert_null(fm_compare_view_new(GTK_WINDOW(win), cat, id, id, "no-such-output",
                                      FM_COLORMAP_VIRIDIS, &error));
    g_assert_nonnull(error);
}

static void test_bad_file_message(void)
{
    g_autofree char *bad = g_build_filename(data_dir, "not-a-tiff.tif", NULL);
    g_assert_true(g_file_set_contents(bad, "hello", -1, NULL));
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(bad));
    g_assert_true(wait_for(dataset_loaded, 30));
    const char *msg = error_message();
    g_assert_nonnull(msg);
    g_assert_nonnull(strstr(msg, "not-a-tiff.tif"));
}

int main(int argc, char **argv)
{
    if (g_getenv("DISPLAY") == NULL && g_getenv("WAYLAND_DISPLAY") == NULL) {
        printf("1..0 # SKIP no display\n");
        return 0;
    }
    g_test_init(&argc, &argv, NULL);
    data_dir = g_dir_make_tmp("fluxmap-gui-XXXXXX", NULL);
    g_assert_nonnull(data_dir);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE);
    /* Recent files and any other user state go to the temporary directory, not the user's. */
    const char *xdg[] = {"XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"};
    for (gsize i = 0; i < G_N_ELEMENTS(xdg); i++) {
        g_autofree char *dir = g_build_filename(data_dir, xdg[i], NULL);
        g_mkdir_with_parents(dir, 0700);
        g_setenv(xdg[i], dir, TRUE);
    }
    if (!gtk_init_check(&argc, &argv)) {
        printf("1..0 # SKIP display cannot be opened\n");
        return 0;
    }
    const char *demo = g_getenv("FLUXMAP_DEMO_TIF");
    tif_path = demo != NULL && g_file_test(demo, G_FILE_TEST_EXISTS) ? g_strdup(demo)
                                                                     : write_fallback_tif();

    app = fm_application_new();
    g_application_set_flags(G_APPLICATION(app),
                            g_application_get_flags(G_APPLICATION(app)) | G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    g_application_activate(G_APPLICATION(app));
    win = FM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
    g_assert_nonnull(win);
    drain_events();

    g_test_add_func("/gui/open-run-catalogue", test_open_run_catalogue);
    g_test_add_func("/gui/playback", test_playback);
    g_test_add_func("/gui/colormap-and-compare", test_colormap_and_compare);
    g_test_add_func("/gui/bad-file-message", test_bad_file_message);
    int status = g_test_run();

    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(app);
    g_free(tif_path);
    g_free(data_dir);
    return status;
}
