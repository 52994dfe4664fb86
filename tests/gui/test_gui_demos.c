/* The start page: every family's demo opened by its card, as a newcomer would, then run with the
 * page's default method through win.run (MCML: its window's run), checked in the catalogue and
 * saved as a screenshot (screenshot-demo-<family>.png beside FLUXMAP_SCREENSHOT). */
#include <math.h>
#include <string.h>

#include <glib/gstdio.h>

#include "app/core/catalogue.h"
#include "app/core/job.h"
#include "app/gui/catalogue-view.h"
#include "app/gui/mcml/mcml-page.h"
#include "app/gui/dce/dce-page.h"
#include "app/gui/dce/dce-views.h"
#include "app/gui/oct/oct-page.h"
#include "app/gui/oct/oct-views.h"
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;
static FmMcmlView *mcml;

static gboolean loaded(gpointer unused G_GNUC_UNUSED)
{
    return fm_window_get_dataset(win) != NULL && !fm_window_is_loading(win);
}

static gboolean three_rois(gpointer unused G_GNUC_UNUSED)
{
    g_autoptr(GPtrArray) rois = fm_window_dce_get_rois(win);
    return rois != NULL && rois->len >= 3;
}

static void save_screenshot(GtkWidget *widget, const char *family)
{
    fm_gui_test_screenshot(widget, data_dir, "screenshot.png", "-demo-%s", family);
}

/* Newest catalogue run: method_id, done. */
static void assert_newest_run(const char *method_id)
{
    const char *const ids[] = {method_id, NULL};
    g_ptr_array_unref(fm_gui_test_assert_done_runs(data_dir, 1, ids));
}

/* The start page on show before any dataset, with a card per family, all built. */
static void test_start_page(void)
{
    static const char *const ids[] = {"lsi", "flim", "dce", "oct", "mcml"};
    for (gsize i = 0; i < G_N_ELEMENTS(ids); i++) {
        GtkWidget *card = fm_gui_test_find_card(GTK_WIDGET(win), ids[i]);
        g_assert_nonnull(card);
        g_assert_true(gtk_widget_is_drawable(card)); /* on show, not behind another page */
        g_assert_true(gtk_widget_get_sensitive(card));
    }
    save_screenshot(GTK_WIDGET(win), "start");
}

typedef struct {
    const char *family, *method; /* the page the demo lands on, and its default run */
} demo_case;

static void test_demo(gconstpointer data)
{
    const demo_case *c = data;
    GtkWidget *card = fm_gui_test_find_card(GTK_WIDGET(win), c->family);
    g_assert_nonnull(card);
    g_assert_true(gtk_widget_get_sensitive(card)); /* the demo files were built */
    gtk_button_clicked(GTK_BUTTON(card));
    g_assert_true(fm_gui_test_wait_until(loaded, NULL, 60));
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_cmpstr(fm_window_get_family(win), ==, c->family);
    if (g_strcmp0(c->family, "dce") == 0) {
        /* the phantom's aorta, portal vein and liver arrive with their roles */
        g_assert_true(fm_gui_test_wait_until(three_rois, NULL, 10));
        g_autoptr(GPtrArray) rois = fm_window_dce_get_rois(win);
        int roles = 0;
        for (guint i = 0; i < rois->len; i++) {
            const char *role = ((const fm_roi *)rois->pdata[i])->role;
            roles += g_strcmp0(role, "aorta") == 0 || g_strcmp0(role, "portal_vein") == 0 ||
                     g_strcmp0(role, "liver") == 0;
        }
        g_assert_cmpint(roles, ==, 3);
    }
    /* twice, so that every family has two runs to compare */
    for (int i = 0; i < 2; i++) {
        fm_gui_test_run_job(win, "run", 110);
        assert_newest_run(c->method);
    }
    fm_gui_test_drain(0.3);
    save_screenshot(GTK_WIDGET(win), c->family);
}

static gboolean one_more_run(gpointer before)
{
    return fm_window_get_running_jobs(win) == 0 &&
           fm_gui_test_catalogue_runs(data_dir) > GPOINTER_TO_UINT(before);
}

typedef struct {
    const char *path;
} open_query;

/* The reopened run's dataset is open (a reopen opens it first). */
static gboolean opened(gpointer data)
{
    const open_query *q = data;
    fm_dataset *ds = fm_window_get_dataset(win);
    return !fm_window_is_loading(win) && ds != NULL && g_strcmp0(ds->source_path, q->path) == 0;
}

/* What a reopened run's page shows that needs the run's own dataset: OCT's depth in µm (the
 * spectra's calibration), DCE's maps over the anatomy. */
static void assert_page_has_dataset(const char *family)
{
    if (g_strcmp0(family, "oct") == 0)
        g_assert_cmpstr(fm_oct_views_get_depth_label(FM_OCT_VIEWS(fm_window_get_oct_views(win))),
                        ==, "depth (µm)");
    if (g_strcmp0(family, "dce") == 0)
        g_assert_nonnull(fm_dce_views_get_result(FM_DCE_VIEWS(fm_window_get_dce_views(win))));
}

/* Every family's run found again in the catalogue browser: activating it opens the dataset it
 * ran on (another one is open) and brings its page back with the maps over it. */
static void test_reopen(void)
{
    g_autoptr(GPtrArray) runs = fm_gui_test_list_runs(data_dir, 0);
    g_assert_cmpuint(runs->len, ==, 8);
    GtkWidget *browser = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    g_assert_nonnull(browser);
    for (guint i = 0; i < runs->len; i++) {
        const fm_catalogue_run *run = runs->pdata[i];
        g_autofree char *family = g_strndup(run->method_id, strcspn(run->method_id, "."));
        g_signal_emit_by_name(browser, "run-activated", (gint64)run->id);
        open_query q = {run->dataset_path};
        g_assert_true(fm_gui_test_wait_until(opened, &q, 60));
        fm_gui_test_drain(0.3);
        g_assert_null(fm_gui_test_error_message(win));
        assert_page_has_dataset(family);
        g_test_message("reopened run %" G_GINT64_FORMAT " (%s): page %s", (gint64)run->id,
                       run->method_id, fm_window_get_family(win));
        g_assert_cmpstr(fm_window_get_family(win), ==, family);
        save_screenshot(GTK_WIDGET(win), run->method_id);
    }
}

static gboolean is_compare_window(GtkWidget *w, gconstpointer unused G_GNUC_UNUSED)
{
    return GTK_IS_WINDOW(w) && g_str_has_prefix(gtk_window_get_title(GTK_WINDOW(w)), "Compare ");
}

/* The open compare window (a toplevel titled "Compare …"), or NULL. */
static GtkWidget *compare_window(void)
{
    GList *tops = gtk_window_list_toplevels();
    GtkWidget *found = NULL;
    for (GList *l = tops; l != NULL && found == NULL; l = l->next)
        if (gtk_widget_get_visible(l->data) && is_compare_window(l->data, NULL))
            found = l->data;
    g_list_free(tops);
    return found;
}

/* Two runs of each family side by side, chosen in the catalogue browser as a user would
 * (Ctrl+click two, Compare): the window opens on a map both runs have. */
static void test_compare(void)
{
    g_autoptr(GPtrArray) runs = fm_gui_test_list_runs(data_dir, 0);
    GtkWidget *browser = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    static const char *const families[] = {"lsi.", "flim.", "oct.", "dce."};
    for (gsize f = 0; f < G_N_ELEMENTS(families); f++) {
        gint64 pair[2] = {0, 0};
        int n = 0;
        for (guint i = 0; i < runs->len && n < 2; i++) {
            const fm_catalogue_run *run = runs->pdata[i];
            if (g_str_has_prefix(run->method_id, families[f]))
                pair[n++] = run->id;
        }
        g_assert_cmpint(n, ==, 2);
        g_assert_true(fm_catalogue_view_select_pair(FM_CATALOGUE_VIEW(browser), pair[0], pair[1]));
        g_action_group_activate_action(G_ACTION_GROUP(win), "compare", NULL);
        fm_gui_test_drain(0.3);
        g_assert_null(fm_gui_test_error_message(win));
        GtkWidget *cmp = compare_window();
        g_assert_nonnull(cmp);
        g_test_message("%s: %s", families[f], gtk_window_get_title(GTK_WINDOW(cmp)));
        g_autofree char *suffix =
            g_strdup_printf("compare-%.*s", (int)strlen(families[f]) - 1, families[f]);
        save_screenshot(cmp, suffix);
        gtk_widget_destroy(cmp);
    }
}

/* A run whose dataset has gone (moved, deleted) still reopens: its maps alone, with a note
 * that says so, and OCT's depth in bins, labelled as bins, not µm. */
static void test_reopen_without_dataset(void)
{
    const char *demo = g_getenv("FLUXMAP_DEMO_DIR");
    g_assert_nonnull(demo);
    static const char *const files[] = {"oct-demo.raw", "oct-demo.raw.json", "oct-demo.calib.csv"};
    g_autofree char *copy_dir = g_build_filename(data_dir, "gone", NULL);
    g_assert_cmpint(g_mkdir_with_parents(copy_dir, 0700), ==, 0);
    for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *from = g_build_filename(demo, files[i], NULL),
                        *to = g_build_filename(copy_dir, files[i], NULL);
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(from, &bytes, &len, NULL));
        g_assert_true(g_file_set_contents(to, bytes, len, NULL));
    }
    g_autofree char *raw = g_build_filename(copy_dir, files[0], NULL);
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(raw));
    open_query q = {raw};
    g_assert_true(fm_gui_test_wait_until(opened, &q, 60));
    fm_gui_test_run_job(win, "run", 110);
    assert_newest_run("oct.bscan");
    g_autoptr(GPtrArray) runs = fm_gui_test_list_runs(data_dir, 1);
    gint64 id = ((const fm_catalogue_run *)runs->pdata[0])->id;

    /* another dataset open, the run's own gone */
    gtk_button_clicked(GTK_BUTTON(fm_gui_test_find_card(GTK_WIDGET(win), "lsi")));
    g_assert_true(fm_gui_test_wait_until(loaded, NULL, 60));
    for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *path = g_build_filename(copy_dir, files[i], NULL);
        g_assert_cmpint(g_remove(path), ==, 0);
    }
    GtkWidget *browser = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    g_signal_emit_by_name(browser, "run-activated", id);
    fm_gui_test_drain(0.3);
    g_assert_cmpstr(fm_window_get_family(win), ==, "oct");
    const char *note = fm_window_get_message(win, NULL);
    g_assert_nonnull(note);
    g_assert_nonnull(strstr(note, "is no longer there"));
    g_assert_cmpstr(fm_oct_views_get_depth_label(FM_OCT_VIEWS(fm_window_get_oct_views(win))), ==,
                    "depth (bin)");
    fm_window_hide_message(win);
}

/* Keyboard only: from the window's first focus, Tab reaches a Run of the page on show (win.run,
 * or the page's own run action) within a bounded number of steps, on every page; Enter on it
 * (what gtk_widget_activate does for the focused button) starts a job. */
static gboolean is_run(GtkWidget *w, const char *family)
{
    if (!GTK_IS_ACTIONABLE(w) || !gtk_widget_is_sensitive(w) || !gtk_widget_is_drawable(w))
        return FALSE;
    const char *action = gtk_actionable_get_action_name(GTK_ACTIONABLE(w));
    g_autofree char *own = g_strdup_printf("win.%s-run", family);
    return g_strcmp0(action, "win.run") == 0 || g_strcmp0(action, own) == 0;
}

static void test_keyboard(void)
{
    /* the speckle demo again, so that Enter on the speckle page's Run has its stack to run on */
    gtk_button_clicked(GTK_BUTTON(fm_gui_test_find_card(GTK_WIDGET(win), "lsi")));
    g_assert_true(fm_gui_test_wait_until(loaded, NULL, 60));
    fm_gui_test_drain(0.3);
    static const char *const families[] = {"lsi", "flim", "oct", "dce", "mcml"};
    for (gsize f = 0; f < G_N_ELEMENTS(families); f++) {
        fm_window_set_family(win, families[f]);
        fm_gui_test_drain(0.2);
        gtk_window_set_focus(GTK_WINDOW(win), NULL);
        GtkWidget *focus = NULL;
        int steps = 0;
        for (; steps < 400 && !is_run(focus, families[f]); steps++) {
            gtk_widget_child_focus(GTK_WIDGET(win), GTK_DIR_TAB_FORWARD);
            focus = gtk_window_get_focus(GTK_WINDOW(win));
            if (focus == NULL)
                break;
        }
        g_test_message("%s page: Run reached in %d Tab presses", families[f], steps);
        g_assert_true(is_run(focus, families[f]));
        if (f == 0) { /* Enter on it runs the speckle page's method: one more run recorded */
            guint before = fm_gui_test_catalogue_runs(data_dir);
            gtk_widget_activate(focus); /* a button clicks when its pressed look has shown */
            g_assert_true(fm_gui_test_wait_until(one_more_run, GUINT_TO_POINTER(before), 60));
            assert_newest_run("lsi.spatial");
        }
    }
}

static gboolean mcml_idle(gpointer unused G_GNUC_UNUSED)
{
    return mcml != NULL && !fm_mcml_view_is_running(mcml);
}

static void test_mcml_demo(void)
{
    GtkWidget *card = fm_gui_test_find_card(GTK_WIDGET(win), "mcml");
    g_assert_nonnull(card);
    gtk_button_clicked(GTK_BUTTON(card));
    fm_gui_test_drain(0.3);
    g_assert_cmpstr(fm_window_get_family(win), ==, "mcml"); /* a page, with the skin preset */
    mcml = fm_window_get_mcml_view(win);
    g_assert_nonnull(mcml);
    fm_mcml_view_set_photons(mcml, 5000); /* the skin preset as loaded, fewer photons for CI */
    g_action_group_activate_action(G_ACTION_GROUP(win), "run", NULL); /* win.run on this page */
    g_assert_true(fm_gui_test_wait_until(mcml_idle, NULL, 60));
    double t[4];
    g_assert_true(fm_mcml_view_get_totals(mcml, t));
    g_assert_cmpfloat(fabs(t[0] + t[1] + t[2] + t[3] - 1.0), <, 1e-5); /* energy conserved */
    assert_newest_run("mcml.run");
    save_screenshot(GTK_WIDGET(win), "mcml");
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-demos-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.5);
    g_test_add_func("/gui-demos/start-page", test_start_page);
    static const demo_case cases[] = {{"lsi", "lsi.spatial"},
                                      {"flim", "flim.lsm"},
                                      {"oct", "oct.bscan"},
                                      {"dce", "dce.dual_input"}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *path = g_strdup_printf("/gui-demos/%s", cases[i].family);
        g_test_add_data_func(path, &cases[i], test_demo);
    }
    g_test_add_func("/gui-demos/reopen", test_reopen);
    g_test_add_func("/gui-demos/compare", test_compare);
    g_test_add_func("/gui-demos/reopen-without-dataset", test_reopen_without_dataset);
    g_test_add_func("/gui-demos/keyboard", test_keyboard);
    g_test_add_func("/gui-demos/mcml", test_mcml_demo);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
