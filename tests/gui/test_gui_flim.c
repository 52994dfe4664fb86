/* GUI test of the FLIM workflow: opens a simulated bars TIFF (known lifetimes), runs flim.phasor
 * and flim.lsm through win.run, checks the catalogue, the lifetime map against the truth, the
 * phasor cloud and the decay fit, runs "compare methods" on two methods, and saves screenshots. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
#include "app/core/flim/flim_sim.h"
#include "app/core/flim/flim_window.h"
#include "app/gui/application.h"
#include "app/gui/flim/compare-methods.h"
#include "app/gui/flim/flim-views.h"
#include "app/gui/window.h"
#include "app/gui/flim/flim-page.h"
#include "gui-test-util.h"

static char *data_dir, *tif_path;
static FmApplication *app;
static FmWindow *win;
static fm_flim_sim_params sim;

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
    FmFlimViews *views = FM_FLIM_VIEWS(fm_window_get_flim_views(win));
    return !fm_window_is_loading(win) &&
           (error_message() != NULL ||
            (fm_window_get_dataset(win) != NULL && fm_flim_views_photons_ready(views)));
}

static gboolean compare_finished(gpointer unused G_GNUC_UNUSED)
{
    GtkWidget *cm = fm_window_get_compare_window(win);
    return cm == NULL || fm_compare_methods_running(FM_COMPARE_METHODS(cm)) == 0;
}

/* Runs method_id through win.run and asserts that its job finished. */
static void run_method(const char *method_id)
{
    g_assert_true(fm_window_select_method(win, method_id));
    fm_gui_test_run_job(win, "run", 60);
}

/* Mean tau of the map per bar against the simulator's truth. 5 %: at ~1500 photons per pixel the
 * single-pixel sd of tau is ~3 % (F ~ 1.1), so a bar mean over hundreds of pixels is far inside;
 * a wrong bin width, time origin or unit would be off by far more. */
static void check_tau_map(const float *tau, int w, int h)
{
    for (int bar = 0; bar < FM_FLIM_SIM_N_BARS; bar++) {
        double sum = 0;
        int n = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                if (fm_flim_sim_bar_of(&sim, x) == bar && isfinite(tau[(gsize)y * w + x])) {
                    sum += tau[(gsize)y * w + x];
                    n++;
                }
        g_assert_cmpint(n, >, 0);
        double want = fm_flim_sim_bar_tau_ns[bar], got = sum / n;
        g_test_message("bar %d: mean tau %.4f ns, truth %.2f ns (n %d)", bar, got, want, n);
        g_assert_cmpfloat(fabs(got - want), <, 0.05 * want);
    }
}

static void test_open_and_run(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_null(error_message());
    g_assert_cmpstr(fm_window_get_family(win), ==, "flim"); /* chosen from the dataset */
    g_assert_true(fm_window_map_tools_visible(win));        /* map and ROI bars */
    g_assert_false(fm_window_frame_slider_visible(win));    /* frames are time bins: decay view */
    FmFlimViews *views = FM_FLIM_VIEWS(fm_window_get_flim_views(win));

    run_method("flim.phasor");
    /* Without a GPU, "auto" falls back and the info bar says so once per session: closed, it
     * stays closed for the next run that falls back for the same reason (exact behaviour). */
    const char *msg = fm_window_get_message(win, NULL);
    gboolean fell_back = msg != NULL && strstr(msg, "fell back to the CPU") != NULL;
    if (fell_back)
        fm_window_hide_message(win);
    FmPhasorView *phasor = fm_flim_views_get_phasor_view(views);
    /* Every pixel has ~1500 photons, far above the default threshold of 100: all have a phasor. */
    g_assert_cmpuint(fm_phasor_view_count_points(phasor), ==, (gsize)sim.width * sim.height);
    /* A circle around the 4 ns bar's phasor (omega = 2 pi / 25.6 ns) picks that bar's pixels:
     * g = 1/(1+(w tau)^2), s = w tau g. Its radius 0.05 holds the noise cloud (sd ~0.01). */
    double wt = 2 * G_PI / (sim.n_bins * sim.bin_width_ps * 1e-3) * 4.0;
    fm_phasor_view_set_selection(phasor, 1 / (1 + wt * wt), wt / (1 + wt * wt), 0.05);
    gsize picked = 0;
    g_autofree guint8 *mask = fm_phasor_view_selection_mask(phasor, &picked);
    g_assert_nonnull(mask);
    gsize in_bar = 0;
    for (int y = 0; y < sim.height; y++)
        for (int x = 0; x < sim.width; x++)
            in_bar += mask[(gsize)y * sim.width + x] && fm_flim_sim_bar_of(&sim, x) == 3;
    g_test_message("phasor region: %" G_GSIZE_FORMAT " px, %" G_GSIZE_FORMAT " in the 4 ns bar",
                   picked, in_bar);
    g_assert_cmpuint(in_bar, >, 0.9 * picked);
    g_assert_cmpuint(picked, >, 0);
    /* An image ROI over the first bar highlights its phasor cloud. */
    fm_map_view_add_roi(fm_window_get_map_view(win), fm_roi_new_rectangle("bar1", 2, 4, 12, 28));
    drain_events();
    g_assert_cmpuint(fm_phasor_view_count_highlighted(phasor), ==, 10 * 24);

    run_method("flim.lsm");
    if (fell_back) {
        const char *again = fm_window_get_message(win, NULL);
        g_assert_true(again == NULL || strstr(again, "fell back to the CPU") == NULL);
    }
    int w = 0, h = 0;
    const float *tau = fm_flim_views_get_tau(views, &w, &h);
    g_assert_nonnull(tau);
    g_assert_cmpint(w, ==, sim.width);
    check_tau_map(tau, w, h);
    /* The decay of one pixel with the LSM model: reduced chi-square of a correct Poisson fit is
     * ~1; 2 allows for the Neyman weights at low counts in the tail. */
    fm_flim_views_show_decay(views, 40, 16);
    FmDecayView *decay = fm_flim_views_get_decay_view(views);
    g_assert_cmpint(fm_decay_view_get_n_bins(decay), ==, sim.n_bins);
    double chi2 = fm_decay_view_get_chi2(decay);
    g_test_message("pixel 40,16: reduced chi2 %.3f", chi2);
    g_assert_cmpfloat(chi2, <, 2.0);
    g_assert_cmpfloat(chi2, >, 0.3);
    fm_flim_views_show_decay(views, -1, -1);

    const char *const want[] = {"flim.lsm", "flim.phasor", NULL}; /* newest first */
    g_ptr_array_unref(fm_gui_test_assert_done_runs(data_dir, 0, want));
    drain_events();
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "flim.png", NULL);
}

static void test_compare_methods(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "flim-compare", NULL);
    GtkWidget *cm = fm_window_get_compare_window(win);
    g_assert_nonnull(cm);
    g_assert_true(fm_compare_methods_has_truth(FM_COMPARE_METHODS(cm)));
    const char *const ids[] = {"flim.iem", "flim.mle", NULL};
    g_assert_true(fm_compare_methods_run(FM_COMPARE_METHODS(cm), ids));
    g_assert_true(fm_gui_test_wait_until(compare_finished, NULL, 60));
    g_assert_cmpint(fm_compare_methods_n_results(FM_COMPARE_METHODS(cm)), ==, 2);
    for (int i = 0; i < 2; i++) {
        const fm_result *res = fm_compare_methods_get_result(FM_COMPARE_METHODS(cm), i);
        g_assert_nonnull(res);
        g_assert_cmpstr(res->method_id, ==, ids[i]);
        double bias, precision;
        g_assert_true(
            fm_compare_methods_get_accuracy(FM_COMPARE_METHODS(cm), i, &bias, &precision));
        g_test_message("%s: bias %+.3f %%, precision %.3f %%, %.1f ms", ids[i], 100 * bias,
                       100 * precision, res->elapsed_ms);
        g_assert_cmpfloat(fabs(bias), <, 0.05); /* the same 5 % as the map check above */
    }
    gtk_window_resize(GTK_WINDOW(cm), 900, 460);
    drain_events();
    fm_gui_test_screenshot(cm, data_dir, "flim.png", "-compare");
    gtk_widget_destroy(cm);
}

/* The fit window on the decay plot: where the decay starts when the parameters say auto (time
 * zero 2 ns into the range here), dragged by its start edge into the panel's fit_start_ns, used
 * and reported by the next run, and back to auto from the form. */
static char *offset_path;

static gboolean window_shown(gpointer unused G_GNUC_UNUSED)
{
    int start, end;
    FmFlimViews *views = FM_FLIM_VIEWS(fm_window_get_flim_views(win));
    return fm_decay_view_get_window(fm_flim_views_get_decay_view(views), &start, &end);
}

static void test_fit_window(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(offset_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_null(error_message());
    g_assert_true(fm_window_select_method(win, "flim.cmm"));
    g_assert_true(fm_gui_test_wait_until(window_shown, NULL, 10));
    FmFlimViews *views = FM_FLIM_VIEWS(fm_window_get_flim_views(win));
    FmDecayView *decay = fm_flim_views_get_decay_view(views);
    int start = -1, end = -1;
    g_assert_true(fm_decay_view_get_window(decay, &start, &end));
    /* what the method will choose, from the core's own function */
    const char *method_id = NULL;
    g_autofree char *json = fm_window_get_page_params(win, "flim", &method_id);
    int run_start, run_end;
    g_assert_true(
        fm_flim_run_window(fm_window_get_dataset(win), method_id, json, &run_start, &run_end));
    g_test_message("auto window on the plot [%d, %d), the run's [%d, %d)", start, end, run_start,
                   run_end);
    g_assert_cmpint(start, ==, run_start);
    g_assert_cmpint(end, ==, run_end);
    g_assert_cmpint(start, >=, 20); /* the peak, not bin 0 */

    /* drag the start edge to bin 25 (2.5 ns): the form says so */
    fm_decay_view_drag_window(decay, TRUE, 25);
    drain_events();
    g_free(json);
    json = fm_window_get_page_params(win, "flim", &method_id);
    g_test_message("after the drag: %s", json);
    g_assert_nonnull(strstr(json, "\"fit_start_ns\":2.5"));
    g_assert_true(fm_decay_view_get_window(decay, &start, &end));
    g_assert_cmpint(start, ==, 25);

    fm_gui_test_run_job(win, "run", 60);
    const char *note = fm_window_get_message(win, NULL);
    g_test_message("info bar: %s", note ? note : "(none)");
    g_assert_nonnull(note);
    g_assert_nonnull(strstr(note, "fit window 2.5–"));
    g_assert_nonnull(strstr(note, "bins 25–"));
    g_assert_nonnull(strstr(note, "min_photons"));
    fm_flim_views_show_decay(views, -1, -1);
    drain_events();
    fm_gui_test_screenshot(GTK_WIDGET(decay), data_dir, "flim.png", "-window");

    /* "auto" typed back: the window returns to the peak */
    g_assert_true(fm_window_set_param(win, "fit_start_ns", "auto"));
    drain_events();
    g_assert_true(fm_decay_view_get_window(decay, &start, &end));
    g_assert_cmpint(start, ==, run_start);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-flim-XXXXXX");
    if (data_dir == NULL)
        return 0;
    /* A small bars dataset (64 x 32 px, 256 bins x 100 ps, fixed seed) saved as a TIFF with the
     * bin width in its description, and the truth file the compare window looks for. */
    tif_path = fm_gui_test_write_flim_bars(data_dir, 64, 32, 20161, &sim, NULL);
    GString *truth =
        g_string_new("{\"simulator\": \"fluxmap flim_sim\", \"columns\": {\"tau_ns\": [");
    for (int x = 0; x < sim.width; x++)
        g_string_append_printf(truth, "%s%.3f", x ? ", " : "",
                               fm_flim_sim_truth_at(&sim, x).tau_ns);
    g_string_append(truth, "]}}\n");
    g_autofree char *truth_path = g_build_filename(data_dir, "bars.truth.json", NULL);
    g_assert_true(g_file_set_contents(truth_path, truth->str, -1, NULL));
    g_string_free(truth, TRUE);

    /* Time zero 2 ns into the range (IRF 2 ns, sigma 100 ps): the auto window's case. */
    fm_flim_sim_params offset = sim;
    offset.irf_sigma_ns = 0.1;
    offset.irf_offset_ns = 2.0;
    offset.photons = 300;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) late = fm_flim_simulate(&offset, &error);
    g_assert_no_error(error);
    offset_path = g_build_filename(data_dir, "offset.tif", NULL);
    g_assert_true(fm_tiff_write_dataset(offset_path, late, "bin_width_ps=100", &error));

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    drain_events();

    g_test_add_func("/gui-flim/open-run", test_open_and_run);
    g_test_add_func("/gui-flim/compare-methods", test_compare_methods);
    g_test_add_func("/gui-flim/fit-window", test_fit_window);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(tif_path);
    g_free(offset_path);
    return status;
}
