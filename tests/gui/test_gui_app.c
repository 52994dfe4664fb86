/* GUI test: drives FmApplication through app.open and win.run under a display, then checks the
 * catalogue, the map on display against a brute-force SFI, ROI statistics and playback, and
 * saves a screenshot of the window. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
#include "app/gui/application.h"
#include "app/gui/compare-view.h"
#include "app/gui/window.h"
#include "app/gui/window-private.h"
#include "gui-test-util.h"

static char *data_dir;
static char *tif_path;
static FmApplication *app;
static FmWindow *win;

static void drain_events(void)
{
    fm_gui_test_drain(0.25);
}

static const char *error_message(void)
{
    return fm_gui_test_error_message(win);
}

static gboolean dataset_loaded(gpointer unused G_GNUC_UNUSED)
{
    return !fm_window_is_loading(win) &&
           (fm_window_get_dataset(win) != NULL || error_message() != NULL);
}

static gboolean played_one(gpointer unused G_GNUC_UNUSED)
{
    return fm_window_get_playback_count(win) >= 1 || error_message() != NULL;
}

static gboolean played_three(gpointer unused G_GNUC_UNUSED)
{
    return fm_window_get_playback_count(win) >= 3 || error_message() != NULL;
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

static void test_open_run_catalogue(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
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
    fm_gui_test_run_job(win, "run", 60);

    const char *const methods[] = {"lsi.spatial", NULL};
    g_autoptr(GPtrArray) runs = fm_gui_test_assert_done_runs(data_dir, 0, methods);
    fm_catalogue_run *run = runs->pdata[0];
    gboolean have_contrast = FALSE, have_sfi = FALSE;
    for (guint i = 0; i < run->outputs->len; i++) {
        const fm_catalogue_output *out = run->outputs->pdata[i];
        have_contrast |= g_strcmp0(out->name, "contrast") == 0;
        have_sfi |= g_strcmp0(out->name, "sfi") == 0;
        g_assert_true(g_file_test(out->file, G_FILE_TEST_EXISTS));
    }
    g_assert_true(have_contrast && have_sfi);

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
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", NULL);
}

/* The time course's axis titles are drawn whole (not ellipsized) at 1366x768 and 1920x1080,
 * with the bottom row 150 px high as a 1366x768 screen first makes it (the y title "mean SFI,
 * whole frame (1/s)" was cut to "mean SFI…" there). */
static void assert_time_course_axis_whole(const char *x_title, const char *y_title)
{
    const int sizes[][2] = {{1366, 768}, {1920, 1080}};
    for (gsize k = 0; k < G_N_ELEMENTS(sizes); k++) {
        fm_gui_test_resize_outer(GTK_WIDGET(win), sizes[k][0], sizes[k][1]);
        fm_gui_test_drain(0.5);
        GtkPaned *centre = GTK_PANED(win->centre_paned);
        int handle = 0;
        gtk_widget_style_get(GTK_WIDGET(centre), "handle-size", &handle, NULL);
        gtk_paned_set_position(centre,
                               gtk_widget_get_allocated_height(GTK_WIDGET(centre)) - 150 - handle);
        fm_gui_test_drain(0.5);
        FmPlotView *plot = fm_window_get_plot_view(win);
        g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(plot)));
        const FmPlotLayout *layout = fm_plot_view_get_layout(plot);
        g_test_message("%dx%d: time course %d px high, y title '%s'", sizes[k][0], sizes[k][1],
                       gtk_widget_get_allocated_height(GTK_WIDGET(plot)),
                       layout->y_label.text ? layout->y_label.text : "(none)");
        g_assert_cmpstr(layout->y_label.text, ==, y_title);
        g_assert_cmpstr(layout->x_label.text, ==, x_title);
    }
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
    g_assert_true(fm_gui_test_wait_until(played_one, NULL, 30));
    double lo1, hi1, lo3, hi3; /* the automatic range holds while playing: no flicker */
    fm_map_view_get_range(fm_window_get_map_view(win), &lo1, &hi1);
    g_assert_true(fm_gui_test_wait_until(played_three, NULL, 30));
    g_assert_null(error_message());
    fm_map_view_get_range(fm_window_get_map_view(win), &lo3, &hi3);
    g_assert_cmpfloat(lo3, ==, lo1);
    g_assert_cmpfloat(hi3, ==, hi1);
    assert_time_course_axis_whole("frame · mean over ROI 1", "SFI (1/s)");
    g_action_group_activate_action(G_ACTION_GROUP(win), "play", NULL);
    g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(win), "play");
    g_assert_false(g_variant_get_boolean(state));
    g_assert_true(fm_map_view_has_map(fm_window_get_map_view(win)));
    drain_events();
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-playback");
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
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    const char *msg = error_message();
    g_assert_nonnull(msg);
    g_assert_nonnull(strstr(msg, "not-a-tiff.tif"));
    /* A good file then clears that error... */
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_null(fm_window_get_message(win, NULL));
    /* ...but not other news, such as the catalogue being unusable, shown before it loads. */
    fm_window_show_message(win, GTK_MESSAGE_WARNING, "catalogue unusable");
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_cmpstr(fm_window_get_message(win, NULL), ==, "catalogue unusable");
    fm_window_hide_message(win);
}

/* A drop opens the first local URI of the list (drag-and-drop hands the window such a list);
 * one with no local file opens nothing. The opened stack then shows under Open Recent. */
static void test_drop_uris(void)
{
    const char *remote[] = {"https://example.org/stack.tif", NULL};
    g_assert_false(fm_window_open_uris(win, remote));
    g_autofree char *uri = g_filename_to_uri(tif_path, NULL, NULL);
    const char *drop[] = {"https://example.org/stack.tif", uri, NULL};
    fm_window_hide_message(win);
    g_assert_true(fm_window_open_uris(win, drop));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_null(error_message());
    g_assert_nonnull(fm_window_get_dataset(win));
    g_autofree char *base = g_path_get_basename(tif_path);
    g_assert_true(fm_gui_test_wait_recent(win, base, 10));
}

/* The main window must fit a 1280 x 768 laptop screen with a desktop bar (~48 px): its minimum
 * height, which the tallest page of every stack sets (OCT, FLIM and DCE views, side panels),
 * stays within 720 px even with the error bar of the test before shown, so the playback and ROI
 * rows are never pushed off screen (the jobs/plot row below them may be shrunk by its pane). */
static void test_fits_laptop_screen(void)
{
    int min_h = 0, nat_h = 0, min_w = 0, nat_w = 0;
    gtk_widget_get_preferred_height(GTK_WIDGET(win), &min_h, &nat_h);
    gtk_widget_get_preferred_width(GTK_WIDGET(win), &min_w, &nat_w);
    g_test_message("main window minimum %d x %d px", min_w, min_h);
    g_assert_cmpint(min_h, <=, 720);
    g_assert_cmpint(min_w, <=, 1280);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-XXXXXX");
    if (data_dir == NULL)
        return 0;
    const char *demo = g_getenv("FLUXMAP_DEMO_TIF");
    tif_path =
        demo != NULL && g_file_test(demo, G_FILE_TEST_EXISTS)
            ? g_strdup(demo)
            : fm_gui_test_write_speckle(data_dir, "speckle-fallback.tif", 64, 48, 3, 20110101);

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    drain_events();

    g_test_add_func("/gui/open-run-catalogue", test_open_run_catalogue);
    g_test_add_func("/gui/playback", test_playback);
    g_test_add_func("/gui/colormap-and-compare", test_colormap_and_compare);
    g_test_add_func("/gui/bad-file-message", test_bad_file_message);
    g_test_add_func("/gui/drop-uris", test_drop_uris);
    g_test_add_func("/gui/fits-laptop-screen", test_fits_laptop_screen);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(tif_path);
    return status;
}
