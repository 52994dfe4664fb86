/* GUI test of the standard pharmacokinetic models on the Perfusion page: opens a simulated
 * Tofts series (pk_sim.h: SPGR signal from the compartment equations, an artery and four tissue
 * regions of known Ktrans), chooses dce.tofts, checks that the checklist asks for the arterial
 * input only, runs, checks the Ktrans map over the anatomy (pixels drawn, median per region
 * against the truth), the AIC map among the overlays, the arterial input against the phantom's
 * plasma curve, a Parker population input that needs no ROI, and saves screenshots at
 * 1366x768 and 1920x1080. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/pk_sim.h"
#include "app/core/io/nifti.h"
#include "app/core/roi.h"
#include "app/gui/application.h"
#include "app/gui/dce/dce-page.h"
#include "app/gui/dce/dce-panel.h"
#include "app/gui/dce/dce-views.h"
#include "app/gui/window.h"
#include "gui-test-util.h"

static char *data_dir, *nii_path;
static FmApplication *app;
static FmWindow *win;
static fm_pk_sim_params sim;

static FmDceViews *views(void)
{
    return FM_DCE_VIEWS(fm_window_get_dce_views(win));
}

static FmDcePanel *panel(void)
{
    return FM_DCE_PANEL(fm_window_get_dce_panel(win));
}

static gboolean views_idle(gpointer unused G_GNUC_UNUSED)
{
    return !fm_dce_views_busy(views());
}

static void wait_views(void)
{
    fm_gui_test_drain(0.2);
    g_assert_true(fm_gui_test_wait_until(views_idle, NULL, 30));
    fm_gui_test_drain(0.1);
}

static int cmp_float(gconstpointer a, gconstpointer b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of map over the voxels of region r (the phantom's own geometry, not the ROI). */
static double region_median(const fm_map *map, int r, gsize *n)
{
    g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(float));
    for (int y = 0; y < sim.ny; y++)
        for (int x = 0; x < sim.nx; x++)
            if (fm_pk_sim_region_at(&sim, x, y) == r && isfinite(map->data[y * sim.nx + x]))
                g_array_append_val(v, map->data[y * sim.nx + x]);
    *n = v->len;
    if (v->len == 0)
        return NAN;
    g_array_sort(v, cmp_float);
    return g_array_index(v, float, v->len / 2);
}

/* Pixels of the map widget with colour (R, G, B apart): the overlay's colormap, the ROI
 * outlines; the gray anatomy has none. */
static gsize coloured_pixels(void)
{
    GtkWidget *image = fm_dce_views_get_image(views());
    cairo_surface_t *s = fm_gui_test_render(image);
    cairo_surface_flush(s);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const guint8 *d = cairo_image_surface_get_data(s);
    gsize n = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const guint8 *p = d + (gsize)y * stride + 4 * x;
            int hi = MAX(p[0], MAX(p[1], p[2])), lo = MIN(p[0], MIN(p[1], p[2]));
            n += hi - lo > 40;
        }
    cairo_surface_destroy(s);
    return n;
}

static void test_open_and_choose(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(nii_path));
    g_assert_true(fm_gui_test_wait_until(fm_gui_test_dce_loaded, win, 30));
    g_assert_cmpstr(fm_window_get_family(win), ==, "dce");
    /* The liver model first: it asks for aorta and portal vein. */
    g_assert_nonnull(strstr(fm_dce_panel_get_missing(panel()), "portal-vein"));
    /* dce.t1_vfa makes a T1 map, not a perfusion model: the chooser does not offer it. */
    g_assert_false(fm_window_select_method(win, "dce.t1_vfa"));
    g_assert_true(fm_window_select_method(win, "dce.tofts"));
    g_assert_cmpstr(fm_dce_panel_get_method(panel())->id, ==, "dce.tofts");
    /* The checklist asks for the arterial input only. */
    const char *missing = fm_dce_panel_get_missing(panel());
    g_assert_nonnull(missing);
    g_assert_nonnull(strstr(missing, "artery"));
    g_assert_null(strstr(missing, "portal"));
    g_assert_null(strstr(missing, "aorta"));
    /* NIfTI keeps no TR or flip angle: given as the phantom was made. */
    g_assert_true(fm_dce_panel_set_param(panel(), "tr_ms", "5"));
    g_assert_true(fm_dce_panel_set_param(panel(), "flip_deg", "30"));
    wait_views();
}

static void test_roles(void)
{
    g_autoptr(GPtrArray) rois = fm_pk_sim_rois(&sim);
    for (guint i = 0; i < rois->len; i++) {
        fm_roi *roi = fm_roi_copy(rois->pdata[i]);
        g_clear_pointer(&roi->role, g_free);
        fm_window_dce_add_roi(win, roi);
    }
    fm_gui_test_drain(0.2);
    g_assert_nonnull(strstr(fm_dce_panel_get_missing(panel()), "artery"));
    fm_dce_panel_set_role(panel(), 0, "artery"); /* fm_pk_sim_rois: the artery first */
    g_assert_null(fm_dce_panel_get_missing(panel()));
    /* A tissue ROI is optional: one region limits the fit to it and the others stay out. */
    for (guint i = 1; i < rois->len; i++)
        fm_dce_panel_set_role(panel(), i, "tissue");
    g_assert_null(fm_dce_panel_get_missing(panel()));
    wait_views();
    /* The arterial input on show is the phantom's plasma curve: the ROI's mean SPGR signal
     * converted with T10 blood 1.44 s and divided by 1 - Hct. SNR 100 per voxel averaged over
     * the artery leaves well under 5 % of the peak. */
    g_autofree char *csv = g_build_filename(data_dir, "artery.csv", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_dce_views_save_inputs_csv(views(), csv, &error));
    g_assert_no_error(error);
    fm_dce_inputs in = {0};
    g_assert_true(fm_dce_inputs_load_csv(csv, &in, &error));
    g_assert_cmpint(in.n_times, ==, sim.n_times);
    double peak = 0, worst = 0;
    for (int i = 0; i < in.n_times; i++)
        peak = MAX(peak, fm_pk_sim_plasma(&sim, in.times_s[i]));
    for (int i = 0; i < in.n_times; i++)
        worst = MAX(worst, fabs(in.ca[i] - fm_pk_sim_plasma(&sim, in.times_s[i])));
    g_test_message("artery input: worst error %.3g mM of a %.3g mM peak", worst, peak);
    g_assert_cmpfloat(worst, <, 0.05 * peak);
    fm_dce_inputs_clear(&in);
}

static void test_run(void)
{
    fm_gui_test_run_job(win, "dce-run", 120);
    const char *const want[] = {"dce.tofts", NULL};
    g_ptr_array_unref(fm_gui_test_assert_done_runs(data_dir, 0, want));
    const fm_result *res = fm_dce_views_get_result(views());
    g_assert_nonnull(res);
    g_assert_cmpstr(res->method_id, ==, "dce.tofts");
    /* Ktrans is on show, and AIC is among the maps offered to compare models by region. */
    g_assert_true(fm_dce_views_lists_overlay(views(), "ktrans"));
    g_assert_true(fm_dce_views_lists_overlay(views(), "aic"));
    g_assert_true(fm_dce_views_lists_overlay(views(), "ve"));
    g_assert_false(fm_dce_views_lists_overlay(views(), "ka")); /* the liver model's */
    g_assert_false(fm_dce_views_lists_overlay(views(), "iterations"));

    /* Every region's median Ktrans within 10 % of the truth (cli-pk holds the fits to OSIPI's
     * tolerances; here the page must show the right map of the right run). */
    const fm_map *ktrans = fm_result_get_map(res, "ktrans");
    g_assert_nonnull(ktrans);
    g_assert_cmpstr(ktrans->unit, ==, "1/min");
    for (int r = 0; r < FM_PK_SIM_N_REGIONS; r++) {
        double theta[FM_PK_N_PARAMS];
        fm_pk_sim_truth(&sim, r, theta);
        gsize n = 0;
        double median = region_median(ktrans, r, &n);
        g_test_message("region %d: Ktrans median %.4f over %" G_GSIZE_FORMAT " voxels, truth %.4f",
                       r + 1, median, n, theta[FM_PK_KTRANS]);
        g_assert_cmpuint(n, >, 10);
        g_assert_cmpfloat(fabs(median - theta[FM_PK_KTRANS]), <, 0.10 * theta[FM_PK_KTRANS]);
    }
    /* The results table has the model's rows with units. */
    GtkWidget *grid = fm_dce_results_get_grid(fm_dce_views_get_results(views()));
    g_autoptr(GPtrArray) labels = fm_gui_test_collect_type(grid, GTK_TYPE_LABEL);
    gboolean ktrans_row = FALSE, aic_row = FALSE;
    for (guint i = 0; i < labels->len; i++) {
        const char *text = gtk_label_get_text(labels->pdata[i]);
        ktrans_row = ktrans_row || (strstr(text, "Ktrans") && strstr(text, "1/min"));
        aic_row = aic_row || g_strcmp0(text, "AIC") == 0;
    }
    g_assert_true(ktrans_row);
    g_assert_true(aic_row);
}

static void test_overlay_drawn(void)
{
    fm_window_dce_show_page(win, "dce");
    fm_dce_views_set_opacity(views(), 0.8);
    fm_dce_views_set_overlay(views(), "");
    fm_gui_test_drain(0.2);
    gsize without = coloured_pixels();
    fm_dce_views_set_overlay(views(), "ktrans");
    fm_gui_test_drain(0.2);
    gsize with = coloured_pixels();
    g_test_message("coloured pixels: %" G_GSIZE_FORMAT " with Ktrans, %" G_GSIZE_FORMAT
                   " without (ROI outlines)",
                   with, without);
    /* The four regions cover about a quarter of the slice; their colours far outnumber the
     * outlines. */
    g_assert_cmpuint(with, >, without + 2000);
}

static void test_population_input(void)
{
    /* Without the artery role the ROI input is missing again... */
    fm_dce_panel_set_role(panel(), 0, "");
    g_assert_nonnull(strstr(fm_dce_panel_get_missing(panel()), "artery"));
    /* ... and a population input needs no ROI at all. */
    g_assert_true(fm_dce_panel_set_param(panel(), "aif", "parker"));
    fm_gui_test_drain(0.1);
    g_assert_null(fm_dce_panel_get_missing(panel()));
    g_assert_true(gtk_widget_get_sensitive(fm_dce_panel_get_run_button(panel())));
    wait_views();
    /* The Parker curve placed at the bolus arrival found in the data: the phantom's own plasma
     * curve is Parker's at 20 s, so the curve on show peaks within two frames of it. */
    g_autofree char *csv = g_build_filename(data_dir, "parker.csv", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_dce_views_save_inputs_csv(views(), csv, &error));
    g_assert_no_error(error);
    fm_dce_inputs in = {0};
    g_assert_true(fm_dce_inputs_load_csv(csv, &in, &error));
    int peak = 0, true_peak = 0;
    for (int i = 1; i < in.n_times; i++) {
        peak = in.ca[i] > in.ca[peak] ? i : peak;
        true_peak =
            fm_pk_sim_plasma(&sim, in.times_s[i]) > fm_pk_sim_plasma(&sim, in.times_s[true_peak])
                ? i
                : true_peak;
    }
    g_test_message("Parker input peaks at %.1f s, the phantom's at %.1f s", in.times_s[peak],
                   in.times_s[true_peak]);
    g_assert_cmpint(ABS(peak - true_peak), <=, 2);
    fm_dce_inputs_clear(&in);
    /* Both curves in the plot for the screenshots: the measured one and Parker's over it. */
    fm_dce_panel_set_role(panel(), 0, "artery");
    wait_views();
}

static void screenshot(int width, int height)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), width, height);
    fm_gui_test_drain(0.5);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-pk.png", "-%dx%d", width, height);
    /* The panel's model chooser and Run button lie inside the window at this size. */
    GdkRectangle run = fm_gui_test_rect_in(fm_dce_panel_get_run_button(panel()), GTK_WIDGET(win));
    int ww = gtk_widget_get_allocated_width(GTK_WIDGET(win));
    int wh = gtk_widget_get_allocated_height(GTK_WIDGET(win));
    g_assert_cmpint(run.x + run.width, <=, ww);
    g_assert_cmpint(run.y + run.height, <=, wh);
}

static void test_screenshots(void)
{
    fm_dce_views_set_overlay(views(), "ktrans");
    fm_dce_views_show_curve(views(), -1, -1);
    screenshot(1366, 768);
    screenshot(1920, 1080);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-pk-XXXXXX");
    if (data_dir == NULL)
        return 0;
    /* The phantom's defaults (32 x 32, one slice, 150 frames of 2 s, SNR 100) but 90 frames:
     * three minutes still show each region's washout and the run stays short. */
    fm_pk_sim_defaults(&sim, FM_PK_TOFTS);
    sim.n_times = 90;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_pk_simulate(&sim, &error);
    g_assert_no_error(error);
    nii_path = g_build_filename(data_dir, "tofts.nii.gz", NULL);
    g_assert_true(fm_nifti_write_dataset(nii_path, ds, 1, &error));
    g_assert_no_error(error);

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    gtk_window_resize(GTK_WINDOW(win), 1400, 900);
    fm_gui_test_drain(0.25);

    g_test_add_func("/gui-pk/open-choose", test_open_and_choose);
    g_test_add_func("/gui-pk/roles", test_roles);
    g_test_add_func("/gui-pk/run", test_run);
    g_test_add_func("/gui-pk/overlay-drawn", test_overlay_drawn);
    g_test_add_func("/gui-pk/population-input", test_population_input);
    g_test_add_func("/gui-pk/screenshots", test_screenshots);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(nii_path);
    return status;
}
