/* The Perfusion page as a user sees it at 1366x768 and 1920x1080: the DCE demo opened from its
 * start-page card, then run. Asserts what is on screen: Run fit wholly visible without scrolling,
 * the ROI statistics in a grid whose cells never overlap, every cell of the results table inside
 * its scroller, and the map keeping its size after the fit. Saves screenshot-dce-layout-*.png. */
#include <string.h>

#include "app/gui/dce/dce-page.h"
#include "app/gui/dce/dce-panel.h"
#include "app/gui/dce/dce-roi-stats.h"
#include "app/gui/dce/dce-views.h"
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;
static int map_height_before; /* the anatomy's widget height before the fit */

static FmDceViews *views(void)
{
    return FM_DCE_VIEWS(fm_window_get_dce_views(win));
}

static gboolean demo_ready(gpointer unused G_GNUC_UNUSED)
{
    g_autoptr(GPtrArray) rois = fm_window_get_dataset(win) ? fm_window_dce_get_rois(win) : NULL;
    return rois != NULL && rois->len >= 3 && !fm_window_is_loading(win) &&
           !fm_dce_views_busy(views());
}

static void assert_inside(GdkRectangle r, int width, int height, const char *what)
{
    g_test_message("%s at %d,%d %dx%d in %dx%d", what, r.x, r.y, r.width, r.height, width, height);
    g_assert_cmpint(r.width, >, 0);
    g_assert_cmpint(r.height, >, 0);
    g_assert_cmpint(r.x, >=, 0);
    g_assert_cmpint(r.y, >=, 0);
    g_assert_cmpint(r.x + r.width, <=, width);
    g_assert_cmpint(r.y + r.height, <=, height);
}

/* Run fit lies wholly inside the window and inside the visible part of the side pane's
 * scrolled window as it is, unscrolled. */
static void assert_run_visible(void)
{
    GtkWidget *run = fm_dce_panel_get_run_button(FM_DCE_PANEL(fm_window_get_dce_panel(win)));
    g_assert_true(gtk_widget_is_drawable(run));
    GtkWidget *top = GTK_WIDGET(win);
    assert_inside(fm_gui_test_rect_in(run, top), gtk_widget_get_allocated_width(top),
                  gtk_widget_get_allocated_height(top), "Run fit in the window");
    GtkWidget *scroller = gtk_widget_get_ancestor(run, GTK_TYPE_SCROLLED_WINDOW);
    g_assert_nonnull(scroller);
    GtkAdjustment *v = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroller));
    g_assert_cmpfloat(gtk_adjustment_get_value(v), ==, gtk_adjustment_get_lower(v));
    assert_inside(fm_gui_test_rect_in(run, scroller), gtk_widget_get_allocated_width(scroller),
                  gtk_widget_get_allocated_height(scroller), "Run fit in its pane");
    /* the panel's minimum lets the side pane be narrow, with its parameters open too */
    GtkWidget *panel = fm_window_get_dce_panel(win);
    int min_w = 0;
    gtk_widget_get_preferred_width(panel, &min_w, NULL);
    g_assert_cmpint(min_w, <=, 300);
    GtkWidget *expander = fm_gui_test_find_type(panel, GTK_TYPE_EXPANDER);
    g_assert_nonnull(expander);
    gtk_expander_set_expanded(GTK_EXPANDER(expander), TRUE);
    gtk_widget_get_preferred_width(panel, &min_w, NULL);
    gtk_expander_set_expanded(GTK_EXPANDER(expander), FALSE);
    g_test_message("panel minimum width with its parameters open: %d px", min_w);
    g_assert_cmpint(min_w, <=, 300);
}

static gboolean overlaps(const GdkRectangle *a, const GdkRectangle *b)
{
    return a->x < b->x + b->width && b->x < a->x + a->width && a->y < b->y + b->height &&
           b->y < a->y + a->height;
}

/* Every visible child of grid: allocated, side by side inside `clip` (in clip's coordinates)
 * when given (a column never runs past the scroller's edge; rows may scroll), and none
 * overlapping another. Returns how many. */
static int assert_cells(GtkWidget *grid, GtkWidget *clip, const char *what)
{
    g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(grid));
    GArray *rects = g_array_new(FALSE, FALSE, sizeof(GdkRectangle));
    for (GList *l = children; l; l = l->next) {
        if (!gtk_widget_get_visible(l->data))
            continue;
        GdkRectangle r = fm_gui_test_rect_in(l->data, grid);
        g_assert_cmpint(r.width, >, 0);
        for (guint i = 0; i < rects->len; i++)
            g_assert_false(overlaps(&r, &g_array_index(rects, GdkRectangle, i)));
        g_array_append_val(rects, r);
        if (clip) {
            GdkRectangle c = fm_gui_test_rect_in(l->data, clip);
            c.y = 0; /* columns only */
            assert_inside(c, gtk_widget_get_allocated_width(clip), c.height, what);
        }
        /* a number is never cut: a label without ellipsis gets at least its natural width */
        if (GTK_IS_LABEL(l->data) &&
            gtk_label_get_ellipsize(GTK_LABEL(l->data)) == PANGO_ELLIPSIZE_NONE) {
            int natural = 0;
            gtk_widget_get_preferred_width(l->data, NULL, &natural);
            g_assert_cmpint(r.width, >=, natural);
        }
    }
    int n = (int)rects->len;
    g_array_free(rects, TRUE);
    return n;
}

/* The ROI statistics: one row per ROI of the slice plus a header, cells side by side. */
static void assert_roi_stats(void)
{
    FmDceRoiStats *stats =
        FM_DCE_ROI_STATS(fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_DCE_ROI_STATS));
    g_assert_nonnull(stats);
    g_assert_true(gtk_widget_is_drawable(GTK_WIDGET(stats)));
    GtkWidget *top = GTK_WIDGET(win);
    assert_inside(fm_gui_test_rect_in(GTK_WIDGET(stats), top), gtk_widget_get_allocated_width(top),
                  gtk_widget_get_allocated_height(top), "ROI statistics");
    /* 3 ROIs x (ROI, role, mean, sd, n) + the header */
    g_assert_cmpint(assert_cells(fm_dce_roi_stats_get_grid(stats), NULL, "ROI stats cell"), ==,
                    4 * 5);
}

static void test_opened(void)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1366, 768);
    g_action_group_activate_action(G_ACTION_GROUP(win), "open-demo", g_variant_new_string("dce"));
    g_assert_true(fm_gui_test_wait_until(demo_ready, NULL, 60));
    fm_gui_test_drain(0.5);
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_cmpstr(fm_window_get_family(win), ==, "dce");
    assert_run_visible();
    assert_roi_stats();
    map_height_before = gtk_widget_get_allocated_height(GTK_WIDGET(fm_window_get_map_view(win)));
    g_test_message("map view before the fit: %d px high", map_height_before);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "dce-layout.png", "-1366-opened");
}

static void assert_results(void)
{
    FmDceResults *results = fm_dce_views_get_results(views());
    GtkWidget *scroller = fm_dce_results_get_scroller(results);
    g_assert_true(gtk_widget_is_drawable(scroller));
    GtkWidget *top = GTK_WIDGET(win);
    assert_inside(fm_gui_test_rect_in(scroller, top), gtk_widget_get_allocated_width(top),
                  gtk_widget_get_allocated_height(top), "results table");
    /* the liver column: its header, n and 8 parameters, beside 10 row headers */
    int cells = assert_cells(fm_dce_results_get_grid(results), scroller, "results cell");
    g_assert_cmpint(cells, >=, 2 * 10);

    /* The map keeps the size it had before the fit: the results sit beside it. */
    GtkWidget *image = fm_dce_views_get_image(views());
    GtkWidget *centre = GTK_WIDGET(views());
    int iw = gtk_widget_get_allocated_width(image), ih = gtk_widget_get_allocated_height(image);
    int cw = gtk_widget_get_allocated_width(centre), ch = gtk_widget_get_allocated_height(centre);
    g_test_message("map %d x %d in a centre of %d x %d", iw, ih, cw, ch);
    g_assert_true(iw >= cw / 2 || ih >= ch / 2);
    g_assert_cmpint(ih, >=, ch * 9 / 10);
}

static void test_run(void)
{
    fm_gui_test_run_job(win, "run", 110);
    fm_gui_test_drain(0.5);
    g_assert_cmpstr(fm_window_get_family(win), ==, "dce");
    g_assert_nonnull(fm_dce_views_get_result(views()));
    assert_results();
    int ih = gtk_widget_get_allocated_height(fm_dce_views_get_image(views()));
    g_assert_cmpint(ih, >=, map_height_before * 9 / 10);
    assert_run_visible();
    assert_roi_stats();
    /* a liver voxel's curve with its fit beside Ca and Cp */
    fm_dce_views_show_curve(views(), 22, 30);
    fm_gui_test_drain(0.3);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "dce-layout.png", "-1366-run");
}

static void test_large(void)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1920, 1080);
    assert_run_visible();
    assert_roi_stats();
    assert_results();
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "dce-layout.png", "-1920-run");
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-dce-layout-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    g_test_add_func("/gui-dce-layout/opened-1366", test_opened);
    g_test_add_func("/gui-dce-layout/run-1366", test_run);
    g_test_add_func("/gui-dce-layout/run-1920", test_large);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
