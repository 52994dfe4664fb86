/* The tour: the real window at 1366x768 and 1920x1080 (GDK_SCALE as the test runs it), every
 * family's demo opened from its start-page card and as a file (app.open), run, and what is then on
 * screen asserted: the centre shows the family's views, not the demo cards; the view has drawn
 * the result; the info bar shows only this page's note; the page's Run button lies wholly inside
 * the window; no side pane scrolls sideways; every side-pane label shows its text or says it is
 * cut (ellipsis, tooltip). A screenshot of every state is saved beside FLUXMAP_SCREENSHOT. */
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/job.h"
#include "app/gui/catalogue-view.h"
#include "app/gui/demos.h"
#include "app/gui/mcml/mcml-page.h"
#include "app/gui/mcml/mcml-view.h"
#include "app/gui/pane-fit.h"
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;

typedef struct {
    const char *family, *centre; /* page id, and the centre view it shows */
} Stop;

static const Stop stops[] = {
    {"lsi", "map"}, {"flim", "lifetime"}, {"dce", "dce"}, {"oct", "oct"}, {"mcml", "mcml"},
};

/* ---- finding widgets (fm_gui_test_collect: in visible subtrees) --------------------------- */

static gboolean is_run_button(GtkWidget *w, gconstpointer unused G_GNUC_UNUSED)
{
    if (!GTK_IS_BUTTON(w))
        return FALSE;
    if (GTK_IS_ACTIONABLE(w) &&
        g_strcmp0(gtk_actionable_get_action_name(GTK_ACTIONABLE(w)), "win.run") == 0)
        return TRUE;
    const char *label = gtk_button_get_label(GTK_BUTTON(w));
    return label != NULL && (g_str_has_prefix(label, "_Run") || g_str_has_prefix(label, "Run"));
}

/* A start-page card: a button named after its family (fm_gui_test_find_card, but on show). */
static gboolean is_card(GtkWidget *w, gconstpointer family)
{
    return GTK_IS_BUTTON(w) && g_strcmp0(gtk_widget_get_name(w), family) == 0;
}

/* ---- what is on screen -------------------------------------------------------------------- */

/* The widget's rectangle in the window's coordinates lies wholly inside the window. */
static void assert_inside_window(GtkWidget *w, const char *what)
{
    int x = 0, y = 0;
    g_assert_true(gtk_widget_translate_coordinates(w, GTK_WIDGET(win), 0, 0, &x, &y));
    int ww = gtk_widget_get_allocated_width(GTK_WIDGET(win));
    int wh = gtk_widget_get_allocated_height(GTK_WIDGET(win));
    int bw = gtk_widget_get_allocated_width(w), bh = gtk_widget_get_allocated_height(w);
    g_test_message("%s at %d,%d %dx%d in a %dx%d window", what, x, y, bw, bh, ww, wh);
    g_assert_cmpint(bw, >, 1);
    g_assert_cmpint(x, >=, 0);
    g_assert_cmpint(y, >=, 0);
    g_assert_cmpint(x + bw, <=, ww);
    g_assert_cmpint(y + bh, <=, wh);
}

/* Inside each scrolled window above w, w is within the part on show (not scrolled away). */
static void assert_not_scrolled_away(GtkWidget *w)
{
    for (GtkWidget *p = gtk_widget_get_parent(w); p != NULL; p = gtk_widget_get_parent(p)) {
        if (!GTK_IS_SCROLLED_WINDOW(p))
            continue;
        int x = 0, y = 0;
        g_assert_true(gtk_widget_translate_coordinates(w, p, 0, 0, &x, &y));
        g_assert_cmpint(y, >=, 0);
        g_assert_cmpint(y + gtk_widget_get_allocated_height(w), <=,
                        gtk_widget_get_allocated_height(p));
    }
}

/* The view has drawn data: its rendered surface differs from its most common colour (the
 * background) over a good part of it, in many colours (a map, not a line of text). */
static void assert_drawn(GtkWidget *view, const char *family)
{
    int w = gtk_widget_get_allocated_width(view), h = gtk_widget_get_allocated_height(view);
    g_assert_cmpint(w, >, 50);
    g_assert_cmpint(h, >, 50);
    cairo_surface_t *surface = fm_gui_test_render(view);
    const guint8 *data = cairo_image_surface_get_data(surface);
    int stride = cairo_image_surface_get_stride(surface);
    g_autoptr(GHashTable) counts = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint32 background = 0;
    int most = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            guint32 px = ((const guint32 *)(data + (gsize)y * stride))[x];
            int n = GPOINTER_TO_INT(g_hash_table_lookup(counts, GUINT_TO_POINTER(px))) + 1;
            g_hash_table_insert(counts, GUINT_TO_POINTER(px), GINT_TO_POINTER(n));
            if (n > most) {
                most = n;
                background = px;
            }
        }
    double covered = 1.0 - (double)most / ((double)w * h);
    guint colours = g_hash_table_size(counts);
    g_test_message("%s: %dx%d view, %.0f %% off the background %08x, %u colours", family, w, h,
                   100 * covered, background, colours);
    g_assert_cmpfloat(covered, >, 0.10);
    g_assert_cmpuint(colours, >, 64);
    cairo_surface_destroy(surface);
}

/* No scrolled window of the pane can scroll sideways; every label on show shows its text
 * whole, wrapped, or ellipsized (the full text then in its tooltip). */
static void assert_pane_fits(GtkWidget *pane, const char *which)
{
    g_autoptr(GPtrArray) scrollers = fm_gui_test_collect_type(pane, GTK_TYPE_SCROLLED_WINDOW);
    for (guint i = 0; i < scrollers->len; i++) {
        GtkAdjustment *h = gtk_scrolled_window_get_hadjustment(scrollers->pdata[i]);
        if (!gtk_widget_is_drawable(scrollers->pdata[i]))
            continue;
        g_assert_cmpfloat(gtk_adjustment_get_upper(h) - gtk_adjustment_get_lower(h), <=,
                          gtk_adjustment_get_page_size(h) + 1);
    }
    g_autoptr(GPtrArray) labels = fm_gui_test_collect_type(pane, GTK_TYPE_LABEL);
    int shown = 0;
    for (guint i = 0; i < labels->len; i++) {
        GtkLabel *label = labels->pdata[i];
        if (!gtk_widget_is_drawable(GTK_WIDGET(label)))
            continue;
        shown++;
        if (!fm_pane_label_fits(label))
            g_test_message("%s pane: label \"%s\" is cut (%d px for its %d)", which,
                           gtk_label_get_text(label),
                           gtk_widget_get_allocated_width(GTK_WIDGET(label)), 0);
        g_assert_true(fm_pane_label_fits(label));
        /* and it lies within the pane's width */
        int x = 0, y = 0;
        gtk_widget_translate_coordinates(GTK_WIDGET(label), pane, 0, 0, &x, &y);
        g_assert_cmpint(x + gtk_widget_get_allocated_width(GTK_WIDGET(label)), <=,
                        gtk_widget_get_allocated_width(pane) + 1);
    }
    g_assert_cmpint(shown, >, 0);
}

static void check_screen(const Stop *stop, const char *size, const char *how)
{
    fm_gui_test_drain(0.3);
    gtk_container_check_resize(GTK_CONTAINER(win));
    g_assert_cmpstr(fm_window_get_family(win), ==, stop->family);
    g_assert_cmpstr(fm_window_get_centre_name(win), ==, stop->centre); /* not the demo cards */
    assert_drawn(fm_window_get_centre_view(win), stop->family);
    const char *note_page = fm_window_get_message_page(win);
    if (note_page != NULL)
        g_assert_cmpstr(note_page, ==, stop->family);
    GtkWidget *right = fm_window_get_side_pane(win, TRUE);
    g_autoptr(GPtrArray) runs = fm_gui_test_collect(right, is_run_button, NULL, FALSE);
    int drawn = 0;
    for (guint i = 0; i < runs->len; i++) {
        if (!gtk_widget_is_drawable(runs->pdata[i]))
            continue;
        drawn++;
        assert_inside_window(runs->pdata[i], "Run");
        assert_not_scrolled_away(runs->pdata[i]);
    }
    g_assert_cmpint(drawn, >=, 1);
    assert_pane_fits(right, "right");
    assert_pane_fits(fm_window_get_side_pane(win, FALSE), "left");
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "tour.png", "-tour-%s-%s-%s", size,
                           stop->family, how);
}

/* ---- driving the window ------------------------------------------------------------------- */

static gboolean loaded(gpointer path)
{
    fm_dataset *ds = fm_window_get_dataset(win);
    return !fm_window_is_loading(win) && ds != NULL &&
           (path == NULL || g_strcmp0(ds->source_path, path) == 0);
}

static gboolean mcml_done(gpointer view)
{
    double totals[4];
    return !fm_mcml_view_is_running(view) && fm_mcml_view_get_totals(view, totals);
}

static void run_page(const Stop *stop)
{
    if (g_strcmp0(stop->family, "mcml") == 0) {
        FmMcmlView *view = fm_window_get_mcml_view(win);
        g_action_group_activate_action(G_ACTION_GROUP(win), "run", NULL);
        fm_gui_test_drain(0.2);
        g_assert_true(fm_gui_test_wait_until(mcml_done, view, 120));
        return;
    }
    fm_gui_test_run_job(win, "run", 120);
}

static GtkWidget *card_of(const char *family)
{
    g_autoptr(GPtrArray) cards =
        fm_gui_test_collect(fm_window_get_centre_view(win), is_card, family, FALSE);
    return cards->len > 0 ? cards->pdata[0] : NULL;
}

static void tour_at(int width, int height)
{
    g_autofree char *size = g_strdup_printf("%dx%d", width, height);
    gtk_window_unmaximize(GTK_WINDOW(win));
    gtk_window_resize(GTK_WINDOW(win), width, height);
    fm_gui_test_drain(0.5);
    /* the size asked excludes the title bar (the header bar) and the frame: the whole window,
     * as a maximized one on that screen, gets width x height */
    int dw = gtk_widget_get_allocated_width(GTK_WIDGET(win)) - width;
    int dh = gtk_widget_get_allocated_height(GTK_WIDGET(win)) - height;
    gtk_window_resize(GTK_WINDOW(win), width - dw, height - dh);
    fm_gui_test_drain(0.5);
    g_test_message("window %s: allocated %dx%d", size,
                   gtk_widget_get_allocated_width(GTK_WIDGET(win)),
                   gtk_widget_get_allocated_height(GTK_WIDGET(win)));
    gsize n_demos = 0;
    const fm_demo *demos = fm_demos(&n_demos);
    for (gsize i = 0; i < G_N_ELEMENTS(stops); i++) {
        const Stop *stop = &stops[i];
        /* from its card on the start page (the menu's Demos brings it back) */
        g_action_group_activate_action(G_ACTION_GROUP(win), "show-demos", NULL);
        fm_gui_test_drain(0.1);
        g_assert_cmpstr(fm_window_get_centre_name(win), ==, "start");
        GtkWidget *card = card_of(stop->family);
        g_assert_nonnull(card);
        gtk_button_clicked(GTK_BUTTON(card));
        if (g_strcmp0(stop->family, "mcml") != 0)
            g_assert_true(fm_gui_test_wait_until(loaded, NULL, 60));
        fm_gui_test_drain(0.3);
        run_page(stop);
        check_screen(stop, size, "card");

        /* as a file, as Ctrl+O opens it (MCML runs from a model, not a file) */
        const char *file = NULL;
        for (gsize d = 0; d < n_demos; d++)
            if (g_strcmp0(demos[d].id, stop->family) == 0)
                file = demos[d].file;
        if (file == NULL)
            continue;
        g_autofree char *dir = fm_demo_dir();
        g_autofree char *path = g_build_filename(dir, file, NULL);
        g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(path));
        g_assert_true(fm_gui_test_wait_until(loaded, path, 60));
        fm_gui_test_drain(0.3);
        run_page(stop);
        check_screen(stop, size, "file");
    }
}

/* Reopening a run is one action: activated once in the catalogue while another dataset is open,
 * its dataset opens and its maps are on show (the flow map, not the raw frames). */
static void test_reopen_once(void)
{
    g_autoptr(GPtrArray) runs = fm_gui_test_list_runs(data_dir, 0);
    const fm_catalogue_run *lsi = NULL;
    for (guint i = 0; i < runs->len && lsi == NULL; i++)
        if (g_str_has_prefix(((fm_catalogue_run *)runs->pdata[i])->method_id, "lsi."))
            lsi = runs->pdata[i];
    g_assert_nonnull(lsi);
    g_assert_cmpstr(fm_window_get_dataset(win)->source_path, !=, lsi->dataset_path);
    g_autoptr(GPtrArray) views =
        fm_gui_test_collect_type(fm_window_get_side_pane(win, FALSE), FM_TYPE_CATALOGUE_VIEW);
    g_assert_cmpuint(views->len, ==, 1);
    g_signal_emit_by_name(views->pdata[0], "run-activated", (gint64)lsi->id);
    g_assert_true(fm_gui_test_wait_until(loaded, lsi->dataset_path, 60));
    fm_gui_test_drain(0.5);
    g_assert_cmpstr(fm_window_get_family(win), ==, "lsi");
    g_assert_cmpstr(fm_window_get_centre_name(win), ==, "map");
    g_assert_cmpstr(fm_window_get_map_name(win), !=, "raw");
    assert_drawn(fm_window_get_centre_view(win), "lsi reopened");
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "tour.png", "-tour-reopen");
}

static void test_tour_laptop(void)
{
    tour_at(1366, 768);
}

static void test_tour_desktop(void)
{
    tour_at(1920, 1080);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-tour-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    g_test_add_func("/gui-tour/1366x768", test_tour_laptop);
    g_test_add_func("/gui-tour/1920x1080", test_tour_desktop);
    g_test_add_func("/gui-tour/reopen-once", test_reopen_once);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
