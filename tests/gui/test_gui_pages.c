/* The family pages as the window hosts them: the page chosen from the dataset, the switcher
 * listing exactly the pages that take it (and the user's switch between two that do, whose Run
 * then runs the chosen page's method), and each page's method and parameters kept from one
 * window (session) to the next. */
#include <gtk/gtk.h>
#include <string.h>

#include "app/core/flim/flim_sim.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/tiff.h"
#include "gui-test-util.h"

static char *data_dir, *flim_tif, *flim_sdt, *speckle_tif, *two_channel_ptu;
static FmApplication *app;
static FmWindow *win;

static gboolean loaded(gpointer unused G_GNUC_UNUSED)
{
    return !fm_window_is_loading(win) && fm_window_get_dataset(win) != NULL;
}

static void open_and_wait(const char *path)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(path));
    fm_gui_test_drain(0.1);
    g_assert_true(fm_gui_test_wait_until(loaded, NULL, 30));
    g_assert_cmpstr(fm_window_get_dataset(win)->source_path, ==, path);
    g_assert_null(fm_gui_test_error_message(win));
}

static void assert_listed(const char *const *want)
{
    g_auto(GStrv) ids = fm_window_list_pages(win);
    g_autofree char *got = g_strjoinv(",", ids);
    g_autofree char *expected = g_strjoinv(",", (char **)want);
    g_assert_cmpstr(got, ==, expected);
}

static void test_choice(void)
{
    /* A speckle stack: only the speckle page takes it (MCML, which needs no file, is always
     * listed). */
    open_and_wait(speckle_tif);
    g_assert_cmpstr(fm_window_get_family(win), ==, "lsi");
    assert_listed((const char *const[]){"lsi", "mcml", NULL});

    /* A .sdt decay: the lifetime page alone (a time axis in ns is no speckle stack). */
    open_and_wait(flim_sdt);
    g_assert_cmpstr(fm_window_get_family(win), ==, "flim");
    assert_listed((const char *const[]){"flim", "mcml", NULL});

    /* A TIFF stack with a bin width: the lifetime page is its own, the speckle page can run on
     * it, so both are offered and the lifetime page is chosen. */
    open_and_wait(flim_tif);
    g_assert_cmpstr(fm_window_get_family(win), ==, "flim");
    assert_listed((const char *const[]){"lsi", "flim", "mcml", NULL});
    g_assert_false(fm_window_switch_page(win, "oct")); /* not offered */

    /* The user switches to the speckle page: its map list and Run are the speckle ones. */
    g_assert_true(fm_window_switch_page(win, "lsi"));
    fm_gui_test_drain(0.1);
    g_assert_cmpstr(fm_window_get_family(win), ==, "lsi");
    fm_gui_test_run_job(win, "run", 60);
    const char *const lsi_run[] = {"lsi.spatial", NULL};
    g_autoptr(GPtrArray) runs = fm_gui_test_assert_done_runs(data_dir, 1, lsi_run);
    (void)runs;

    /* and back: Run runs the lifetime page's method */
    g_assert_true(fm_window_switch_page(win, "flim"));
    g_assert_true(fm_window_select_method(win, "flim.phasor"));
    fm_gui_test_run_job(win, "run", 60);
    const char *const flim_run[] = {"flim.phasor", NULL};
    g_autoptr(GPtrArray) runs2 = fm_gui_test_assert_done_runs(data_dir, 1, flim_run);
    (void)runs2;
}

static gboolean channel_two_open(gpointer unused G_GNUC_UNUSED)
{
    fm_dataset *ds = fm_window_get_dataset(win);
    return !fm_window_is_loading(win) && ds != NULL &&
           g_strcmp0(fm_dataset_get_meta(ds, "ptu_channel"), "2") == 0;
}

/* A file that holds several datasets (two detector channels): the dataset panel offers them,
 * and choosing one opens it; a file that holds one hides the choice. */
static void test_parts(void)
{
    open_and_wait(two_channel_ptu);
    GtkWidget *combo = fm_window_get_part_combo(win);
    g_assert_true(gtk_widget_get_visible(combo));
    GtkTreeModel *model = gtk_combo_box_get_model(GTK_COMBO_BOX(combo));
    g_assert_cmpint(gtk_tree_model_iter_n_children(model, NULL), ==, 3); /* all, 1, 2 */
    g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(combo)), ==, "0");
    g_assert_true(gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), "2"));
    g_assert_true(fm_gui_test_wait_until(channel_two_open, NULL, 30));
    g_assert_cmpstr(gtk_combo_box_get_active_id(GTK_COMBO_BOX(combo)), ==, "2");
    g_assert_cmpstr(fm_window_get_family(win), ==, "flim");
    open_and_wait(speckle_tif);
    g_assert_false(gtk_widget_get_visible(combo));
}

/* The parameter key's value in a params JSON object, as text ("7", "\"mono\"") (g_free). */
static char *json_value(const char *json, const char *key)
{
    g_autofree char *needle = g_strdup_printf("\"%s\":", key);
    const char *at = strstr(json, needle);
    if (at == NULL)
        return NULL;
    at += strlen(needle);
    return g_strndup(at, strcspn(at, ",}"));
}

static void test_state_kept(void)
{
    fm_window_set_family(win, "flim"); /* as a reopened FLIM run would */
    g_assert_true(fm_window_select_method(win, "flim.lsm"));
    g_assert_true(fm_window_set_param(win, "min_photons", "7"));
    g_assert_true(fm_window_switch_page(win, "lsi"));
    g_assert_true(fm_window_select_method(win, "lsi.temporal"));
    g_assert_true(fm_window_set_param(win, "exposure_ms", "4.5"));

    /* A new session: the window is closed, a new one made. */
    gtk_widget_destroy(GTK_WIDGET(win));
    fm_gui_test_drain(0.2);
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.2);

    const char *method = NULL;
    g_autofree char *flim = fm_window_get_page_params(win, "flim", &method);
    g_assert_nonnull(flim);
    g_assert_cmpstr(method, ==, "flim.lsm");
    g_autofree char *photons = json_value(flim, "min_photons");
    g_assert_cmpstr(photons, ==, "7");
    g_autofree char *lsi = fm_window_get_page_params(win, "lsi", &method);
    g_assert_nonnull(lsi);
    g_assert_cmpstr(method, ==, "lsi.temporal");
    g_autofree char *exposure = json_value(lsi, "exposure_ms");
    g_assert_cmpstr(exposure, ==, "4.5");

    /* A damaged state file is ignored: the defaults, and no crash. */
    g_autofree char *ini = g_build_filename(g_get_user_config_dir(), "fluxmap", "pages.ini", NULL);
    g_assert_true(g_file_test(ini, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_set_contents(ini, "[flim]\nmethod=flim.nope\nparams={\n[lsi\n", -1, NULL));
    gtk_widget_destroy(GTK_WIDGET(win));
    g_assert_true(g_file_set_contents(ini, "[flim]\nmethod=flim.nope\nparams={\n[lsi\n", -1, NULL));
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.2);
    g_autofree char *fresh = fm_window_get_page_params(win, "lsi", &method);
    g_assert_cmpstr(method, ==, "lsi.spatial");
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-pages-XXXXXX");
    if (data_dir == NULL)
        return 0;
    fm_flim_sim_params sim;
    g_autoptr(fm_dataset) ds = NULL;
    flim_tif = fm_gui_test_write_flim_bars(data_dir, 32, 16, 141, &sim, &ds);
    g_autoptr(GError) error = NULL;
    flim_sdt = g_build_filename(data_dir, "bars.sdt", NULL);
    g_assert_true(fm_sdt_write(flim_sdt, ds, 100.0, &error));
    speckle_tif = fm_gui_test_write_speckle(data_dir, "speckle.tif", 32, 24, 3, 7);
    two_channel_ptu = g_build_filename(data_dir, "two-channels.ptu", NULL);
    fm_ptu_write_options two = {.channels = 2};
    g_assert_true(fm_ptu_write(two_channel_ptu, ds, 100.0, &two, &error));

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.2);
    g_test_add_func("/gui-pages/choice", test_choice);
    g_test_add_func("/gui-pages/parts", test_parts);
    g_test_add_func("/gui-pages/state-kept", test_state_kept);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(flim_tif);
    g_free(flim_sdt);
    g_free(speckle_tif);
    g_free(two_channel_ptu);
    return status;
}
