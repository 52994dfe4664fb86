/* GUI test of the MCML page: opened through app.mcml, the sample preset run with few photons
 * as a catalogued job, totals and fluence map checked, .mco saved and read back, screenshot. */
#include <gtk/gtk.h>
#include <math.h>

#include "app/core/catalogue.h"
#include "app/core/io/mco.h"
#include "app/gui/application.h"
#include "app/gui/mcml/mcml-page.h"
#include "gui-test-util.h"

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

/* Saves the MCML window as screenshot-mcml.png beside FLUXMAP_SCREENSHOT (else in data_dir). */
static void save_screenshot(void)
{
    const char *base = g_getenv("FLUXMAP_SCREENSHOT");
    g_autofree char *dir = base ? g_path_get_dirname(base) : g_strdup(data_dir);
    g_autofree char *path = g_build_filename(dir, "screenshot-mcml.png", NULL);
    fm_gui_test_save_png(GTK_WIDGET(win), path);
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
    g_assert_true(fm_gui_test_wait_until(mcml_idle, NULL, 60));
    drain_events();

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

    /* the run is in the catalogue with its outputs */
    const char *const want[] = {"mcml.run", NULL};
    g_autoptr(GPtrArray) runs = fm_gui_test_assert_done_runs(data_dir, 1, want);
    fm_catalogue_run *run = runs->pdata[0];
    g_assert_true(g_str_has_suffix(run->dataset_path, ".mci"));
    save_screenshot();
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-mcml-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    g_test_add_func("/gui/mcml/run-sample", test_run_sample);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
