/* GUI test of the MCML page: opened through app.mcml, the sample preset run with few photons
 * as a catalogued job, totals and fluence map checked, .mco saved and read back; then what is on
 * screen at 1366x768 and 1920x1080: the run under Jobs and in the catalogue by the preset's name,
 * the window's subtitle, the fluence view's axes and colorbar drawn inside it, the side panel
 * within its width. Screenshots screenshot-mcml-<size>.png. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/mco.h"
#include "app/gui/application.h"
#include "app/gui/catalogue-view.h"
#include "app/gui/mcml/mcml-map.h"
#include "app/gui/mcml/mcml-page.h"
#include "gui-test-util.h"
#include "page-fit-check.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;
static FmMcmlView *mcml;

static void drain_events(void)
{
    fm_gui_test_drain(0.25);
}

static gboolean mcml_idle(gpointer unused G_GNUC_UNUSED)
{
    return !fm_mcml_view_is_running(mcml);
}

static gboolean is_label_showing(GtkWidget *widget, gconstpointer text)
{
    return GTK_IS_LABEL(widget) && strstr(gtk_label_get_text(GTK_LABEL(widget)), text) != NULL &&
           gtk_widget_is_drawable(widget);
}

/* A label under widget that is on screen and whose text contains text. */
static gboolean shows_label(GtkWidget *widget, const char *text)
{
    g_autoptr(GPtrArray) labels = fm_gui_test_collect(widget, is_label_showing, text, FALSE);
    return labels->len > 0;
}

static void test_run_sample(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "mcml", NULL);
    drain_events();
    g_assert_cmpstr(fm_window_get_family(win), ==, "mcml"); /* a page of the window, not a window */
    mcml = fm_window_get_mcml_view(win);
    g_assert_nonnull(mcml);
    g_assert_true(gtk_widget_is_drawable(GTK_WIDGET(mcml)));
    g_assert_true(fm_mcml_view_load_preset(mcml, "mcml_sample"));
    fm_mcml_view_set_photons(mcml, 20000);
    g_assert_true(fm_mcml_view_run(mcml));
    g_assert_cmpint(fm_window_get_running_jobs(win), ==, 1);
    g_assert_true(fm_gui_test_wait_until(mcml_idle, NULL, 60));
    drain_events();
    g_assert_cmpint(fm_window_get_running_jobs(win), ==, 0);

    double t[4];
    if (!fm_mcml_view_get_totals(mcml, t))
        g_error("no totals: %s", fm_mcml_view_get_status(mcml));
    /* Rsp is Fresnel's ((1.37-1)/(2.37))^2 exactly; the four add to 1 (energy conservation,
     * shown with 6 decimals and passed through float32, hence 1e-5). */
    g_assert_cmpfloat(fabs(t[0] - pow(0.37 / 2.37, 2)), <, 1e-6);
    g_assert_cmpfloat(fabs(t[0] + t[1] + t[2] + t[3] - 1.0), <, 1e-5);
    /* MCML's own sample.mco (1e6 photons): Rd 0.237544; 20000 photons give SE ~ 0.003, so
     * 0.02 is over six standard errors. */
    g_assert_cmpfloat(fabs(t[1] - 0.237544), <, 0.02);
    /* the panel's summary names the photons, not the totals again nor a CPU fallback */
    const char *status = fm_mcml_view_get_status(mcml);
    g_test_message("status: %s", status);
    g_assert_nonnull(strstr(status, "photons"));
    g_assert_null(strstr(status, "Rsp"));
    g_assert_null(strstr(status, "fell back"));

    int w = 0, h = 0;
    const float *map = fm_mcml_view_get_map(mcml, &w, &h);
    g_assert_nonnull(map);
    g_assert_cmpint(w, ==, 50);
    g_assert_cmpint(h, ==, 40);
    gsize finite = 0;
    for (int i = 0; i < w * h; i++)
        finite += isfinite(map[i]);
    g_assert_cmpuint(finite, >, (gsize)(w * h) / 2);
    g_assert_true(isfinite(map[0])); /* the entry point always sees light */

    g_autofree char *mco = g_build_filename(data_dir, "gui.mco", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_mcml_view_save_mco(mcml, mco, &error));
    g_assert_no_error(error);
    fm_mco_totals back;
    g_assert_true(fm_mco_read_totals(mco, &back, &error));
    g_assert_cmpint(back.n_photons, ==, 20000);
    g_assert_cmpint(back.nz, ==, 40);
    g_assert_cmpfloat(fabs(back.rd - t[1]), <, 1e-5);

    /* the run is in the catalogue under the preset's name, not a temporary file's */
    const char *const want[] = {"mcml.run", NULL};
    g_autoptr(GPtrArray) runs = fm_gui_test_assert_done_runs(data_dir, 1, want);
    fm_catalogue_run *run = runs->pdata[0];
    g_autofree char *base = g_path_get_basename(run->dataset_path);
    g_assert_cmpstr(base, ==, "mcml_sample.mci");
}

/* The fluence view as drawn: the layout's parts inside the widget and apart, the colorbar's
 * colours running from top to bottom, the map and the axes' texts painted. */
static void assert_fluence_drawn(void)
{
    GtkWidget *area = fm_mcml_view_get_map_area(mcml);
    int aw = gtk_widget_get_allocated_width(area), ah = gtk_widget_get_allocated_height(area);
    FmMcmlMapLayout l;
    /* the sample's grid without MCML's overflow row and column */
    const double r_cm = 49 * 0.01, z_cm = 39 * 0.01;
    fm_mcml_map_layout(area, aw, ah, r_cm, z_cm, &l);
    const GdkRectangle *parts[] = {&l.map, &l.colorbar, &l.r_axis, &l.z_axis, &l.bar_text};
    const char *names[] = {"map", "colorbar", "r axis", "z axis", "colorbar labels"};
    GdkRectangle widget = {0, 0, aw, ah};
    for (int i = 0; i < 5; i++) {
        const GdkRectangle *r = parts[i];
        g_test_message("%s at %d,%d %dx%d in %dx%d", names[i], r->x, r->y, r->width, r->height, aw,
                       ah);
        g_assert_cmpint(r->width, >, 0);
        g_assert_cmpint(r->height, >, 0);
        GdkRectangle in;
        g_assert_true(gdk_rectangle_intersect(r, &widget, &in));
        g_assert_true(in.width == r->width && in.height == r->height); /* wholly inside */
    }
    g_assert_false(gdk_rectangle_intersect(&l.map, &l.colorbar, NULL));
    g_assert_false(gdk_rectangle_intersect(&l.map, &l.r_axis, NULL));
    g_assert_false(gdk_rectangle_intersect(&l.map, &l.z_axis, NULL));
    /* at its r:z aspect within 5 %, unless that left most of the view empty */
    double aspect = (double)l.map.width / l.map.height / (r_cm / z_cm);
    g_test_message("map aspect %.3f of r:z%s", aspect, l.stretched ? ", stretched to fill" : "");
    if (!l.stretched)
        g_assert_cmpfloat(fabs(aspect - 1), <, 0.05);
    /* the map takes a fair part of its view (no band of nothing) */
    g_assert_cmpfloat((double)l.map.width * l.map.height, >, 0.3 * aw * ah);

    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, aw, ah);
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    gtk_widget_draw(area, cr);
    cairo_destroy(cr);
    cairo_surface_flush(s);
    const guint8 *px = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
#define PIXEL(x, y) (*(const guint32 *)(px + (gsize)(y)*stride + 4 * (x)) & 0xffffff)
    /* colorbar: bright at the top, dark at the bottom */
    int cx = l.colorbar.x + l.colorbar.width / 2;
    guint32 top = PIXEL(cx, l.colorbar.y + 3),
            bottom = PIXEL(cx, l.colorbar.y + l.colorbar.height - 4);
    int top_sum = (top >> 16) + ((top >> 8) & 255) + (top & 255);
    int bottom_sum = (bottom >> 16) + ((bottom >> 8) & 255) + (bottom & 255);
    g_assert_cmpint(top_sum, >, bottom_sum + 200);
    /* the map's corner at r = 0, z = 0 (most light) is bright and not the background */
    guint32 corner = PIXEL(l.map.x + 3, l.map.y + 3);
    g_assert_cmpuint(corner, !=, PIXEL(0, 0));
    /* each axis' texts put ink in their rectangles */
    const GdkRectangle *texts[] = {&l.r_axis, &l.z_axis, &l.bar_text};
    guint32 bg = PIXEL(0, ah - 1);
    for (int i = 0; i < 3; i++) {
        int ink = 0;
        for (int y = texts[i]->y; y < texts[i]->y + texts[i]->height; y++)
            for (int x = texts[i]->x; x < texts[i]->x + texts[i]->width; x++)
                ink += PIXEL(x, y) != bg;
        g_test_message("text rectangle %d: %d pixels of ink", i, ink);
        g_assert_cmpint(ink, >, 20);
    }
#undef PIXEL
    cairo_surface_destroy(s);
}

static void check_screen(int width, int height)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), width, height);
    fm_gui_test_drain(0.3);
    /* first: to look at what failed, if anything does */
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-mcml-%dx%d", width,
                           height);
    fit_check_panel(fm_mcml_view_get_panel(mcml), GTK_WIDGET(win));
    assert_fluence_drawn();
    /* the run is listed under Jobs and in the catalogue by the model's file name */
    g_assert_true(shows_label(fm_window_get_job_list(win), "mcml.run on mcml_sample.mci"));
    GtkWidget *catalogue = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    g_assert_nonnull(catalogue);
    g_assert_true(shows_label(catalogue, "mcml_sample.mci"));
    g_assert_false(shows_label(catalogue, "input-"));
    /* the header names the model, not a file opened before */
    GtkWidget *bar = gtk_window_get_titlebar(GTK_WINDOW(win));
    if (GTK_IS_HEADER_BAR(bar))
        g_assert_cmpstr(gtk_header_bar_get_subtitle(GTK_HEADER_BAR(bar)), ==,
                        fm_mcml_view_get_model_title(mcml));
}

static void test_screen_small(void)
{
    check_screen(1366, 768);
}

static void test_screen_large(void)
{
    check_screen(1920, 1080);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-mcml-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    g_test_add_func("/gui/mcml/run-sample", test_run_sample);
    g_test_add_func("/gui/mcml/screen-1366x768", test_screen_small);
    g_test_add_func("/gui/mcml/screen-1920x1080", test_screen_large);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
