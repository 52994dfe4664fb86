/* GUI test of the MCML window: opened through app.mcml, the sample preset run with few photons
 * as a catalogued job, totals and fluence map checked, .mco saved and read back, screenshot. */
#include <gtk/gtk.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/mco.h"
#include "app/gui/application.h"
#include "app/gui/mcml-window.h"

static char *data_dir;
static FmApplication *app;
static FmMcmlWindow *mcml;

static void drain_events(void)
{
    gint64 end = g_get_monotonic_time() + G_USEC_PER_SEC / 4;
    while (g_get_monotonic_time() < end)
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(2000);
}

static gboolean wait_job(double timeout_s)
{
    gint64 end = g_get_monotonic_time() + (gint64)(timeout_s * G_USEC_PER_SEC);
    while (fm_mcml_window_is_running(mcml)) {
        if (g_get_monotonic_time() > end)
            return FALSE;
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(2000);
    }
    return TRUE;
}

static void save_screenshot(void)
{
    const char *base = g_getenv("FLUXMAP_SCREENSHOT");
    g_autofree char *path = NULL;
    if (base) {
        g_autofree char *dir = g_path_get_dirname(base);
        path = g_build_filename(dir, "screenshot-mcml.png", NULL);
    } else {
        path = g_build_filename(data_dir, "screenshot-mcml.png", NULL);
    }
    GtkWidget *widget = GTK_WIDGET(mcml);
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

static void test_run_sample(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "mcml", NULL);
    drain_events();
    for (GList *l = gtk_application_get_windows(GTK_APPLICATION(app)); l; l = l->next)
        if (FM_IS_MCML_WINDOW(l->data))
            mcml = l->data;
    g_assert_nonnull(mcml);
    g_assert_true(fm_mcml_window_load_preset(mcml, "mcml_sample"));
    fm_mcml_window_set_photons(mcml, 20000);
    g_assert_true(fm_mcml_window_run(mcml));
    g_assert_true(wait_job(60));
    drain_events();

    double t[4];
    if (!fm_mcml_window_get_totals(mcml, t))
        g_error("no totals: %s", fm_mcml_window_get_status(mcml));
    /* Rsp is Fresnel's ((1.37-1)/(2.37))^2 exactly; the four add to 1 (energy conservation,
     * shown with 6 decimals and passed through float32, hence 1e-5). */
    g_assert_cmpfloat(fabs(t[0] - pow(0.37 / 2.37, 2)), <, 1e-6);
    g_assert_cmpfloat(fabs(t[0] + t[1] + t[2] + t[3] - 1.0), <, 1e-5);
    /* MCML's own sample.mco (1e6 photons): Rd 0.237544; 20000 photons give SE ~ 0.003, so
     * 0.02 is over six standard errors. */
    g_assert_cmpfloat(fabs(t[1] - 0.237544), <, 0.02);

    int w = 0, h = 0;
    const float *map = fm_mcml_window_get_map(mcml, &w, &h);
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
    g_assert_true(fm_mcml_window_save_mco(mcml, mco, &error));
    g_assert_no_error(error);
    fm_mco_totals back;
    g_assert_true(fm_mco_read_totals(mco, &back, &error));
    g_assert_cmpint(back.n_photons, ==, 20000);
    g_assert_cmpint(back.nz, ==, 40);
    g_assert_cmpfloat(fabs(back.rd - t[1]), <, 1e-5);

    /* the run is in the catalogue with its outputs */
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(data_dir, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 1, &error);
    g_assert_cmpuint(runs->len, ==, 1);
    fm_catalogue_run *run = runs->pdata[0];
    g_assert_cmpstr(run->method_id, ==, "mcml.run");
    g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    g_assert_true(g_str_has_suffix(run->dataset_path, ".mci"));
    save_screenshot();
}

int main(int argc, char **argv)
{
    if (g_getenv("DISPLAY") == NULL && g_getenv("WAYLAND_DISPLAY") == NULL) {
        printf("1..0 # SKIP no display\n");
        return 0;
    }
    g_test_init(&argc, &argv, NULL);
    data_dir = g_dir_make_tmp("fluxmap-gui-mcml-XXXXXX", NULL);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE);
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
    app = fm_application_new();
    g_application_set_flags(G_APPLICATION(app),
                            g_application_get_flags(G_APPLICATION(app)) | G_APPLICATION_NON_UNIQUE);
    g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
    g_test_add_func("/gui/mcml/run-sample", test_run_sample);
    int status = g_test_run();
    if (mcml)
        gtk_widget_destroy(GTK_WIDGET(mcml));
    drain_events();
    g_object_unref(app);
    g_free(data_dir);
    return status;
}
