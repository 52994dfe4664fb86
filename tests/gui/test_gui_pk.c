/* GUI test of the standard pharmacokinetic models on the Perfusion page: opens a simulated
 * Tofts series (pk_sim.h: SPGR signal from the compartment equations, an artery and four tissue
 * regions of known Ktrans), chooses dce.tofts, checks that the checklist asks for the arterial
 * input only, runs, checks the Ktrans map over the anatomy (pixels drawn, median per region
 * against the truth), the AIC map among the overlays, the arterial input against the phantom's
 * plasma curve, each region's fitted curve beside its measured one (and a voxel's), a run
 * reopened from the catalogue showing the input it ran with whatever the page says now, the
 * results table of four ROIs without sideways scrolling, a Parker population input that needs
 * no ROI, and saves screenshots at 1366x768 and 1920x1080. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/pk_sim.h"
#include "app/core/io/dicom_write.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"
#include "app/core/catalogue.h"
#include "app/core/roi.h"
#include "app/gui/application.h"
#include "app/gui/catalogue-view.h"
#include "app/gui/dce/dce-page.h"
#include "app/gui/dce/dce-panel.h"
#include "app/gui/dce/dce-views.h"
#include "app/gui/map-view.h"
#include "app/gui/plot-layout.h"
#include "app/gui/plot-view.h"
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

/* The shared bottom plot on show (the window's), with its layout as last drawn. */
static FmPlotView *shown_plot(void)
{
    g_autoptr(GPtrArray) plots = fm_gui_test_collect_type(GTK_WIDGET(win), FM_TYPE_PLOT_VIEW);
    for (guint i = 0; i < plots->len; i++)
        if (gtk_widget_get_mapped(plots->pdata[i]) &&
            fm_plot_view_get_n_series(plots->pdata[i]) > 0)
            return plots->pdata[i];
    return NULL;
}

/* Draws the plot and checks what is on it: every text inside it, none over another, and the
 * legend entries placed (not dropped). Returns the legend's texts joined by "|". */
static char *plot_on_screen(void)
{
    FmPlotView *plot = shown_plot();
    g_assert_nonnull(plot);
    cairo_surface_destroy(fm_gui_test_render(GTK_WIDGET(plot)));
    const FmPlotLayout *l = fm_plot_view_get_layout(plot);
    int w = gtk_widget_get_allocated_width(GTK_WIDGET(plot));
    int h = gtk_widget_get_allocated_height(GTK_WIDGET(plot));
    FmPlotBox boxes[96];
    const char *texts[96];
    int n = fm_plot_layout_text_boxes(l, boxes, texts, G_N_ELEMENTS(boxes));
    for (int i = 0; i < n; i++) {
        g_assert_cmpfloat(boxes[i].x, >=, -0.5);
        g_assert_cmpfloat(boxes[i].y, >=, -0.5);
        g_assert_cmpfloat(boxes[i].x + boxes[i].width, <=, w + 0.5);
        g_assert_cmpfloat(boxes[i].y + boxes[i].height, <=, h + 0.5);
        for (int j = i + 1; j < n; j++) {
            gboolean apart = boxes[i].x + boxes[i].width <= boxes[j].x + 0.5 ||
                             boxes[j].x + boxes[j].width <= boxes[i].x + 0.5 ||
                             boxes[i].y + boxes[i].height <= boxes[j].y + 0.5 ||
                             boxes[j].y + boxes[j].height <= boxes[i].y + 0.5;
            if (!apart)
                g_test_message("overlap: '%s' and '%s'", texts[i], texts[j]);
            g_assert_true(apart);
        }
    }
    GString *legend = g_string_new("|");
    for (int i = 0; i < l->n_legend; i++) {
        g_assert_nonnull(l->legend_text[i].text);
        g_string_append_printf(legend, "%s|", l->legend_text[i].text);
    }
    return g_string_free(legend, FALSE);
}

/* RMS of model - measured over the frames, and the measured curve's peak. */
static double rms_misfit(const double *measured, const double *model, double *peak)
{
    double sum = 0;
    *peak = 0;
    for (int t = 0; t < sim.n_times; t++) {
        sum += (model[t] - measured[t]) * (model[t] - measured[t]);
        *peak = MAX(*peak, measured[t]);
    }
    return sqrt(sum / sim.n_times);
}

/* After the fit each tissue ROI's measured curve has the model's curve from its fitted maps
 * beside it, in its outline colour, and a picked voxel its own; the fitted curve follows the
 * measured one (the fits reach R² 0.998 and more: a fit drawn with the wrong input, scale or
 * parameters would miss it by far more). */
static void test_fitted_curves(void)
{
    fm_window_dce_show_page(win, "dce");
    fm_dce_views_show_curve(views(), -1, -1);
    wait_views();
    const char *label;
    const double *measured, *model;
    for (guint r = 0; r < FM_PK_SIM_N_REGIONS; r++) {
        g_assert_true(fm_dce_views_get_tissue_curve(views(), r, &label, &measured, &model));
        g_autofree char *want = g_strdup_printf("region %u", r + 1);
        g_assert_cmpstr(label, ==, want);
        g_assert_nonnull(model);
        double peak, rms = rms_misfit(measured, model, &peak);
        g_test_message("%s: fitted curve %.4f mM RMS from the measured mean, peak %.3f mM", label,
                       rms, peak);
        g_assert_cmpfloat(rms, <, 0.05 * peak);
    }
    g_assert_false(
        fm_dce_views_get_tissue_curve(views(), FM_PK_SIM_N_REGIONS, &label, &measured, &model));
    /* On screen: the input scaled to the tissue, each region, and one entry for the fits. */
    double scale = fm_dce_views_get_input_scale(views());
    g_assert_cmpfloat(scale, >, 1);
    g_autofree char *legend = plot_on_screen();
    g_test_message("legend %s", legend);
    g_autofree char *input = g_strdup_printf("|Cp ÷ %g (artery ROI)|", scale);
    g_assert_nonnull(strstr(legend, input));
    for (int r = 1; r <= FM_PK_SIM_N_REGIONS; r++) {
        g_autofree char *entry = g_strdup_printf("|region %d|", r);
        g_assert_nonnull(strstr(legend, entry));
    }
    g_assert_nonnull(strstr(legend, "|Tofts fit|"));
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-pk.png", "-fits");

    /* A voxel in the middle of region 2: its curve and its own fit. */
    int vx = -1, vy = -1;
    for (int y = 0; y < sim.ny && vx < 0; y++)
        for (int x = 0; x < sim.nx && vx < 0; x++)
            if (x >= 2 && y >= 2 && fm_pk_sim_region_at(&sim, x, y) == 1 &&
                fm_pk_sim_region_at(&sim, x - 2, y) == 1 &&
                fm_pk_sim_region_at(&sim, x, y - 2) == 1)
                vx = x, vy = y;
    g_assert_cmpint(vx, >=, 0);
    fm_dce_views_show_curve(views(), vx, vy);
    g_assert_true(fm_dce_views_get_tissue_curve(views(), 0, &label, &measured, &model));
    g_autofree char *voxel = g_strdup_printf("voxel %d, %d", vx, vy);
    g_assert_cmpstr(label, ==, voxel);
    g_assert_nonnull(model);
    double peak, rms = rms_misfit(measured, model, &peak);
    g_test_message("%s: fitted curve %.4f mM RMS from the measured, peak %.3f mM", label, rms,
                   peak);
    g_assert_cmpfloat(rms, <, 0.15 * peak); /* one voxel: the phantom's noise, unaveraged */
    g_autofree char *voxel_legend = plot_on_screen();
    g_assert_nonnull(strstr(voxel_legend, voxel));
    g_assert_nonnull(strstr(voxel_legend, "|Tofts fit|"));
    fm_dce_views_show_curve(views(), -1, -1);
}

/* The arterial input on show (saved as Export > Input curves does) against the phantom's
 * plasma curve: the artery ROI's with hematocrit 0.45 (the run's) within 5 % of the peak. */
static double input_error(const char *name)
{
    g_autofree char *csv = g_build_filename(data_dir, name, NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_dce_views_save_inputs_csv(views(), csv, &error));
    g_assert_no_error(error);
    fm_dce_inputs in = {0};
    g_assert_true(fm_dce_inputs_load_csv(csv, &in, &error));
    double peak = 0, worst = 0;
    for (int i = 0; i < in.n_times; i++) {
        peak = MAX(peak, fm_pk_sim_plasma(&sim, in.times_s[i]));
        worst = MAX(worst, fabs(in.ca[i] - fm_pk_sim_plasma(&sim, in.times_s[i])));
    }
    fm_dce_inputs_clear(&in);
    return worst / peak;
}

/* Where the first ROI's outline (and its name) is drawn on the perfusion map: the centroid of
 * the pixels in its colour (fm_map_roi_colour(0), red), the overlay hidden so that only the
 * gray anatomy is around it. Returns how many pixels it found. */
static gsize first_outline_at(double *cx, double *cy)
{
    fm_dce_views_set_overlay(views(), "");
    fm_gui_test_drain(0.1);
    cairo_surface_t *s = fm_gui_test_render(fm_dce_views_get_image(views()));
    cairo_surface_flush(s);
    int w = cairo_image_surface_get_width(s), h = cairo_image_surface_get_height(s);
    int stride = cairo_image_surface_get_stride(s);
    const guint8 *d = cairo_image_surface_get_data(s);
    gsize n = 0;
    double sx = 0, sy = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const guint8 *p = d + (gsize)y * stride + 4 * x; /* B, G, R, A */
            if (p[2] > 220 && p[1] > 40 && p[1] < 110 && p[0] > 40 && p[0] < 110) {
                n++;
                sx += x;
                sy += y;
            }
        }
    cairo_surface_destroy(s);
    *cx = n ? sx / n : NAN;
    *cy = n ? sy / n : NAN;
    fm_dce_views_set_overlay(views(), "ktrans");
    return n;
}

/* The region names in the results table. */
static int table_regions(void)
{
    GtkWidget *grid = fm_dce_results_get_grid(fm_dce_views_get_results(views()));
    g_autoptr(GPtrArray) labels = fm_gui_test_collect_type(grid, GTK_TYPE_LABEL);
    int n = 0;
    for (guint i = 0; i < labels->len; i++)
        n += gtk_widget_get_mapped(labels->pdata[i]) &&
             g_str_has_prefix(gtk_label_get_text(labels->pdata[i]), "region ");
    return n;
}

/* The page's ROI of role (on the map view: all the phantom's lie on every slice). */
static fm_roi *page_roi(const char *role, guint *index)
{
    GPtrArray *shown = fm_map_view_get_rois(fm_window_get_map_view(win));
    for (guint i = 0; i < shown->len; i++)
        if (g_strcmp0(((fm_roi *)shown->pdata[i])->role, role) == 0) {
            if (index)
                *index = i;
            return shown->pdata[i];
        }
    return NULL;
}

/* Moves roi by (dx, dy) voxels as a drag on the anatomy does. */
static void move_roi(fm_roi *roi, double dx, double dy)
{
    for (guint i = 0; i < roi->points->len; i++) {
        g_array_index(roi->points, fm_point, i).x += dx;
        g_array_index(roi->points, fm_point, i).y += dy;
    }
    g_signal_emit_by_name(fm_window_get_map_view(win), "rois-changed");
}

static gboolean result_shown(gpointer unused G_GNUC_UNUSED)
{
    return fm_dce_views_get_result(views()) != NULL && !fm_dce_views_busy(views());
}

/* A run reopened from the catalogue shows the input it ran with (artery ROI, hematocrit 0.45),
 * not the page's settings, changed in between to Parker and hematocrit 0.2, and its own ROIs
 * (the artery moved onto region 1 and region 4 deleted in between): its input, outlines and
 * table are the run's while the page keeps its settings and ROIs for editing. Its DICOM export
 * is listed with the run. */
static void test_reopen_shows_run_input(void)
{
    g_autoptr(GPtrArray) runs = fm_gui_test_list_runs(data_dir, 0);
    g_assert_cmpuint(runs->len, >=, 1);
    const fm_catalogue_run *run = runs->pdata[0];
    g_assert_cmpstr(run->method_id, ==, "dce.tofts");
    fm_window_dce_show_page(win, "dce");
    fm_dce_views_show_curve(views(), -1, -1);
    wait_views();
    double run_x, run_y, moved_x, moved_y, x, y;
    g_assert_cmpuint(first_outline_at(&run_x, &run_y), >, 20);
    g_assert_cmpint(table_regions(), ==, FM_PK_SIM_N_REGIONS);
    /* The user edits the ROIs after the run: the artery moved 9 voxels onto region 1, region 4
     * deleted. The fresh run on show follows the page's ROIs. */
    guint last = 0;
    fm_roi *artery = page_roi("artery", NULL);
    g_assert_nonnull(artery);
    move_roi(artery, 9, 9);
    GPtrArray *shown = fm_map_view_get_rois(fm_window_get_map_view(win));
    for (guint i = 0; i < shown->len; i++)
        if (g_strcmp0(((fm_roi *)shown->pdata[i])->name, "region 4") == 0)
            last = i;
    g_autoptr(fm_roi) region4 = fm_roi_copy(shown->pdata[last]);
    g_assert_cmpstr(region4->name, ==, "region 4");
    g_ptr_array_remove_index(shown, last);
    g_signal_emit_by_name(fm_window_get_map_view(win), "rois-changed");
    wait_views();
    g_assert_cmpuint(first_outline_at(&moved_x, &moved_y), >, 20);
    g_test_message("artery outline at %.1f, %.1f px; moved to %.1f, %.1f", run_x, run_y, moved_x,
                   moved_y);
    g_assert_cmpfloat(hypot(moved_x - run_x, moved_y - run_y), >, 30);
    g_assert_cmpint(table_regions(), ==, FM_PK_SIM_N_REGIONS - 1);
    double moved_error = input_error("moved-input.csv");
    g_test_message("input of the moved artery ROI: %.1f %% of the peak off", 100 * moved_error);
    g_assert_cmpfloat(moved_error, >, 0.15);

    g_assert_true(fm_dce_panel_set_param(panel(), "aif", "parker"));
    g_assert_true(fm_dce_panel_set_param(panel(), "hematocrit", "0.2"));
    wait_views();
    /* The page's input is previewed now, and it is not the run's. */
    double page_error = input_error("page-input.csv");
    g_test_message("page's input (Parker, Hct 0.2): %.1f %% of the peak off the run's",
                   100 * page_error);
    g_assert_cmpfloat(page_error, >, 0.15);

    GtkWidget *browser = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    g_assert_nonnull(browser);
    fm_dce_views_set_result(views(), NULL); /* what follows is the reopened run's */
    g_signal_emit_by_name(browser, "run-activated", (gint64)run->id);
    g_assert_true(fm_gui_test_wait_until(result_shown, NULL, 30));
    wait_views();
    g_assert_null(fm_gui_test_error_message(win));
    double run_error = input_error("reopened-input.csv");
    g_test_message("reopened run's input: %.2f %% of the peak off the phantom's plasma curve",
                   100 * run_error);
    g_assert_cmpfloat(run_error, <, 0.05);
    /* The page's settings stay as the user left them. */
    g_autoptr(fm_params) page = fm_dce_panel_get_params(panel(), NULL);
    g_assert_cmpstr(fm_params_get_choice(page, "aif"), ==, "parker");
    g_assert_cmpfloat(fm_params_get_double(page, "hematocrit"), ==, 0.2);
    /* The run's ROIs on the map and in the table; the page's, moved, wait on the anatomy. */
    g_assert_true(fm_dce_views_shows_run_rois(views()));
    g_assert_cmpuint(first_outline_at(&x, &y), >, 20);
    g_test_message("reopened: artery outline at %.1f, %.1f px", x, y);
    g_assert_cmpfloat(hypot(x - run_x, y - run_y), <, 1.5);
    g_assert_cmpint(table_regions(), ==, FM_PK_SIM_N_REGIONS);
    g_assert_true(page_roi("artery", NULL) == artery);
    g_assert_cmpfloat(g_array_index(artery->points, fm_point, 0).x, >, 9);

    /* On screen: the run's line over the table, the run's input and fits in the plot. */
    GtkWidget *run_label = fm_dce_results_get_run_label(fm_dce_views_get_results(views()));
    g_assert_true(gtk_widget_get_mapped(run_label));
    const char *said = gtk_label_get_text(GTK_LABEL(run_label));
    g_test_message("run line: %s", said);
    g_assert_nonnull(strstr(said, "Tofts"));
    g_assert_nonnull(strstr(said, "input artery ROI"));
    g_assert_nonnull(strstr(said, "Hct 0.45"));
    g_assert_nonnull(strstr(said, "no delay"));
    GdkRectangle r = fm_gui_test_rect_in(run_label, GTK_WIDGET(win));
    g_assert_cmpint(r.width, >, 0);
    g_assert_cmpint(r.x + r.width, <=, gtk_widget_get_allocated_width(GTK_WIDGET(win)));
    g_autofree char *legend = plot_on_screen();
    g_test_message("legend %s", legend);
    g_assert_nonnull(strstr(legend, "(artery ROI)|"));
    g_assert_null(strstr(legend, "Parker"));
    g_assert_nonnull(strstr(legend, "|Tofts fit|"));
    g_autofree char *tip = gtk_widget_get_tooltip_text(run_label);
    g_assert_nonnull(strstr(tip, "ROIs this run was given"));
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-pk.png", "-reopened");

    /* Its DICOM export is listed with the reopened run (the maps and the Segmentation). */
    if (fm_dicom_write_available()) {
        g_autofree char *dicom_dir = g_build_filename(data_dir, "reopened-dicom", NULL);
        g_autofree char *note = NULL;
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_window_dce_export_dicom(win, dicom_dir, &note, &error));
        g_assert_no_error(error);
        g_test_message("export: %s", note);
        g_autofree char *listed = g_strdup_printf("listed with run %" G_GINT64_FORMAT, run->id);
        g_assert_nonnull(strstr(note, listed));
        g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, &error);
        g_assert_no_error(error);
        g_autoptr(fm_catalogue_run) again = fm_catalogue_get_run(cat, run->id, &error);
        g_assert_no_error(error);
        guint n_maps = fm_dce_views_get_result(views())->maps->len;
        g_assert_cmpuint(again->exports->len, ==, n_maps + 1);
        for (guint i = 0; i < again->exports->len; i++) {
            const fm_catalogue_export *e = again->exports->pdata[i];
            g_assert_true(g_str_has_prefix(e->file, dicom_dir));
            g_assert_true(g_file_test(e->file, G_FILE_TEST_IS_REGULAR));
        }
    }

    /* Back to editing: the artery moved back and region 4 drawn again, the page's ROIs (the
     * run's again in place) are those on show. */
    move_roi(artery, -9, -9);
    g_assert_false(fm_dce_views_shows_run_rois(views()));
    fm_window_dce_add_roi(win, g_steal_pointer(&region4));
    wait_views();
    g_assert_cmpint(table_regions(), ==, FM_PK_SIM_N_REGIONS);

    /* Back to the run's settings for what follows: its curves and fits again. */
    g_assert_true(fm_dce_panel_set_param(panel(), "aif", "roi"));
    g_assert_true(fm_dce_panel_set_param(panel(), "hematocrit", "0.45"));
    wait_views();
    g_assert_cmpfloat(input_error("page-again.csv"), <, 0.05);
}

/* A T10 map converts the input as the run would: with T10 blood 0 the blood's T10 is the map's
 * mean over the artery (1.44 s there, 1 s in tissue); without the map the artery would be
 * converted with T10 tissue and come out far off the phantom's plasma curve. */
static void test_t10_map_input(void)
{
    g_autofree float *t10 = g_new(float, (gsize)sim.nx *sim.ny);
    for (int y = 0; y < sim.ny; y++)
        for (int x = 0; x < sim.nx; x++)
            t10[y * sim.nx + x] =
                (float)(fm_pk_sim_region_at(&sim, x, y) == -2 ? sim.t10_blood_s : sim.t10_tissue_s);
    g_autofree char *path = g_build_filename(data_dir, "t10.nii.gz", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_nifti_write(path, t10, sim.nx, sim.ny, 1, 1, NULL, NULL, 1, &error));
    g_assert_no_error(error);
    g_assert_true(fm_dce_panel_set_param(panel(), "t10_blood_s", "0"));
    wait_views();
    double without = input_error("t10-none.csv");
    g_assert_true(fm_dce_panel_set_param(panel(), "t10_map", path));
    wait_views();
    double with = input_error("t10-map.csv");
    g_test_message("input with T10 blood 0: %.1f %% off without the map, %.2f %% with it",
                   100 * without, 100 * with);
    g_assert_cmpfloat(without, >, 0.15);
    g_assert_cmpfloat(with, <, 0.05);
    /* The run's settings again: its input and fits on show once more. */
    g_assert_true(fm_dce_panel_set_param(panel(), "t10_map", ""));
    g_assert_true(fm_dce_panel_set_param(panel(), "t10_blood_s", "1.44"));
    wait_views();
    const char *label;
    const double *measured, *model;
    g_assert_true(fm_dce_views_get_tissue_curve(views(), 0, &label, &measured, &model));
    g_assert_nonnull(model);
}

/* Four tissue ROIs fit in the results table beside the map without scrolling sideways, at
 * 1920x1080 and 1366x768: the table inside its pane and the window, every value at its full
 * width, every ROI's name whole. */
static void check_table(int width, int height)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), width, height);
    fm_gui_test_drain(0.5);
    FmDceResults *results = fm_dce_views_get_results(views());
    GtkWidget *scroller = fm_dce_results_get_scroller(results);
    GtkWidget *grid = fm_dce_results_get_grid(results);
    g_assert_true(gtk_widget_get_mapped(grid));
    GtkWidget *hbar = gtk_scrolled_window_get_hscrollbar(GTK_SCROLLED_WINDOW(scroller));
    g_assert_false(hbar && gtk_widget_get_child_visible(hbar) && gtk_widget_get_mapped(hbar));
    GtkAdjustment *h = gtk_scrolled_window_get_hadjustment(GTK_SCROLLED_WINDOW(scroller));
    g_assert_cmpfloat(gtk_adjustment_get_upper(h) - gtk_adjustment_get_page_size(h), <=, 0.5);
    int grid_w = gtk_widget_get_allocated_width(grid);
    int pane_w = gtk_widget_get_allocated_width(scroller);
    GdkRectangle in_win = fm_gui_test_rect_in(scroller, GTK_WIDGET(win));
    GdkRectangle views_rect = fm_gui_test_rect_in(GTK_WIDGET(views()), GTK_WIDGET(win));
    g_test_message("%dx%d: table %d px wide in a pane of %d px at x %d..%d (views to %d)", width,
                   height, grid_w, pane_w, in_win.x, in_win.x + in_win.width,
                   views_rect.x + views_rect.width);
    g_assert_cmpint(grid_w, <=, pane_w);
    g_assert_cmpint(in_win.x + in_win.width, <=, views_rect.x + views_rect.width);
    g_assert_cmpint(views_rect.x + views_rect.width, <=,
                    gtk_widget_get_allocated_width(GTK_WIDGET(win)));
    /* Every label at its natural width (nothing squeezed) and the four names whole. */
    g_autoptr(GPtrArray) labels = fm_gui_test_collect_type(grid, GTK_TYPE_LABEL);
    int names = 0;
    for (guint i = 0; i < labels->len; i++) {
        GtkWidget *label = labels->pdata[i];
        const char *text = gtk_label_get_text(GTK_LABEL(label));
        PangoLayout *layout = gtk_label_get_layout(GTK_LABEL(label));
        if (g_str_has_prefix(text, "region ")) {
            names++;
            g_assert_false(pango_layout_is_ellipsized(layout));
            continue;
        }
        if (gtk_label_get_ellipsize(GTK_LABEL(label)) != PANGO_ELLIPSIZE_NONE)
            continue;
        int natural = 0;
        gtk_widget_get_preferred_width(label, NULL, &natural);
        g_assert_cmpint(gtk_widget_get_allocated_width(label), >=, natural);
    }
    g_assert_cmpint(names, ==, FM_PK_SIM_N_REGIONS);
    /* The whole table on show without scrolling down: the last row (AIC) and its values lie
     * inside the pane, and the pane inside the views. */
    GtkAdjustment *v = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroller));
    g_test_message("%dx%d: table %.0f px high in a pane of %.0f px", width, height,
                   gtk_adjustment_get_upper(v), gtk_adjustment_get_page_size(v));
    g_assert_cmpfloat(gtk_adjustment_get_upper(v) - gtk_adjustment_get_page_size(v), <=, 0.5);
    GtkWidget *last = NULL;
    for (guint i = 0; i < labels->len; i++)
        if (g_strcmp0(gtk_label_get_text(labels->pdata[i]), "AIC") == 0)
            last = labels->pdata[i];
    g_assert_nonnull(last);
    int last_row = 0;
    gtk_container_child_get(GTK_CONTAINER(grid), last, "top-attach", &last_row, NULL);
    for (guint i = 0; i < labels->len; i++) {
        GtkWidget *label = labels->pdata[i];
        if (gtk_widget_get_parent(label) != grid)
            continue;
        int row = 0;
        gtk_container_child_get(GTK_CONTAINER(grid), label, "top-attach", &row, NULL);
        g_assert_cmpint(row, <=, last_row);
        if (row != last_row)
            continue;
        GdkRectangle r = fm_gui_test_rect_in(label, scroller);
        g_assert_true(gtk_widget_get_mapped(label));
        g_assert_cmpint(r.y, >=, 0);
        g_assert_cmpint(r.y + r.height, <=, gtk_widget_get_allocated_height(scroller));
    }
    GdkRectangle pane = fm_gui_test_rect_in(scroller, GTK_WIDGET(views()));
    g_assert_cmpint(pane.y + pane.height, <=, gtk_widget_get_allocated_height(GTK_WIDGET(views())));
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-pk.png", "-table-%dx%d", width,
                           height);
}

static void test_results_table_fits(void)
{
    fm_window_dce_show_page(win, "dce");
    check_table(1920, 1080);
    check_table(1366, 768);
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

/* A TIFF stack of two slices (pages z fastest, its description saying slices=2) opens on the
 * Perfusion page as the volumes the fits reshape it into (dce_series.h): two slices of the
 * phantom's 90 frames, not one slice of 180 pages, and the input previewed from the artery ROI
 * is the phantom's plasma curve at the stack's frame interval. */
static void test_tiff_stack(void)
{
    fm_pk_sim_params two = sim;
    two.nz = 2;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_pk_simulate(&two, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ds->n_dims, ==, 4);
    g_autofree char *tif = g_build_filename(data_dir, "tofts-stack.tif", NULL);
    g_autofree char *description =
        g_strdup_printf("slices=2; frame_interval_s=%g", ds->dims[3].spacing);
    g_assert_true(fm_tiff_write_dataset(tif, ds, description, &error));
    g_assert_no_error(error);
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif));
    g_assert_true(fm_gui_test_wait_until(fm_gui_test_dce_loaded, win, 30));
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_cmpint(fm_window_get_dataset(win)->n_dims, ==, 3); /* the stack as read */
    g_assert_cmpstr(fm_window_get_family(win), ==, "dce");
    g_assert_true(fm_dce_panel_set_param(panel(), "aif", "roi"));
    /* The phantom's ROIs (every slice), the artery first. */
    g_autoptr(GPtrArray) rois = fm_pk_sim_rois(&two);
    for (guint i = 0; i < rois->len; i++)
        fm_window_dce_add_roi(win, fm_roi_copy(rois->pdata[i]));
    wait_views();
    /* The second slice is there, its anatomy drawn. */
    fm_dce_views_set_slice(views(), 1);
    wait_views();
    g_assert_cmpint(fm_dce_views_get_slice(views()), ==, 1);
    g_autofree char *csv = g_build_filename(data_dir, "stack-input.csv", NULL);
    g_assert_true(fm_dce_views_save_inputs_csv(views(), csv, &error));
    g_assert_no_error(error);
    fm_dce_inputs in = {0};
    g_assert_true(fm_dce_inputs_load_csv(csv, &in, &error));
    g_test_message("stack: input of %d frames, last at %.1f s", in.n_times,
                   in.times_s[in.n_times - 1]);
    g_assert_cmpint(in.n_times, ==, sim.n_times);
    fm_dce_inputs_clear(&in);
    double off = input_error("stack-input.csv");
    g_test_message("stack: input %.2f %% of the peak off the phantom's plasma curve", 100 * off);
    g_assert_cmpfloat(off, <, 0.05);
    /* The panel's "Slices in a TIFF stack" reshapes it again: one slice of 180 frames. */
    g_assert_true(fm_dce_panel_set_param(panel(), "stack_slices", "1"));
    wait_views();
    g_assert_true(fm_dce_views_save_inputs_csv(views(), csv, &error));
    g_assert_no_error(error);
    g_assert_true(fm_dce_inputs_load_csv(csv, &in, &error));
    g_assert_cmpint(in.n_times, ==, 2 * sim.n_times);
    fm_dce_inputs_clear(&in);
    g_assert_true(fm_dce_panel_set_param(panel(), "stack_slices", "0"));
    wait_views();
    g_assert_cmpfloat(input_error("stack-again.csv"), <, 0.05);
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
    g_test_add_func("/gui-pk/fitted-curves", test_fitted_curves);
    g_test_add_func("/gui-pk/reopen-shows-run-input", test_reopen_shows_run_input);
    g_test_add_func("/gui-pk/t10-map-input", test_t10_map_input);
    g_test_add_func("/gui-pk/results-table-fits", test_results_table_fits);
    g_test_add_func("/gui-pk/overlay-drawn", test_overlay_drawn);
    g_test_add_func("/gui-pk/population-input", test_population_input);
    g_test_add_func("/gui-pk/screenshots", test_screenshots);
    g_test_add_func("/gui-pk/tiff-stack", test_tiff_stack);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(nii_path);
    return status;
}
