/* GUI test of Run on Files: four small speckle stacks, one of them truncated, run with the
 * Speckle page's method and parameters. The plan's checks name the bad file on screen before
 * anything runs; "Run the Others" runs three, whose rows say Done in the job list (on screen,
 * not cut); the catalogue lists them as one group of three runs; a batch cancelled while an item
 * runs keeps what is done; the group shows while the batch still runs. At 1920x1080 and 1366x768,
 * with screenshots (screenshot-batch-*.png). */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/core/catalogue.h"
#include "app/core/catalogue_batch.h"
#include "app/gui/batch-view.h"
#include "app/gui/catalogue-view.h"
#include "app/gui/window-batch.h"
#include "gui-test-util.h"

static char *data_dir, *stacks_dir;
static FmApplication *app;
static FmWindow *win;

/* A widget that the user sees: mapped, of some size, and inside the window. */
static void assert_on_screen(GtkWidget *widget, GtkWidget *top)
{
    g_assert_true(gtk_widget_is_visible(widget));
    g_assert_true(gtk_widget_get_mapped(widget));
    GdkRectangle r = fm_gui_test_rect_in(widget, top);
    g_assert_cmpint(r.width, >, 0);
    g_assert_cmpint(r.height, >, 0);
    g_assert_cmpint(r.x, >=, 0);
    g_assert_cmpint(r.y, >=, 0);
    g_assert_cmpint(r.x + r.width, <=, gtk_widget_get_allocated_width(top));
    g_assert_cmpint(r.y + r.height, <=, gtk_widget_get_allocated_height(top));
}

/* widget lies inside the part of the scrolled window that shows (not scrolled away or cut). */
static void assert_in_view(GtkWidget *widget, GtkWidget *scrolled)
{
    GdkRectangle r = fm_gui_test_rect_in(widget, scrolled);
    g_assert_cmpint(r.y, >=, 0);
    g_assert_cmpint(r.y + r.height, <=, gtk_widget_get_allocated_height(scrolled));
}

/* Scrolls the scrolled window (a short job list) until widget shows, as a user would. */
static void scroll_to(GtkWidget *widget, GtkWidget *scrolled)
{
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scrolled));
    GdkRectangle r = fm_gui_test_rect_in(widget, scrolled);
    int h = gtk_widget_get_allocated_height(scrolled);
    double v = gtk_adjustment_get_value(adj);
    if (r.y + r.height > h)
        v += r.y + r.height - h + 2;
    if (r.y < 0)
        v += r.y - 2;
    gtk_adjustment_set_value(adj, v);
    fm_gui_test_drain(0.1);
}

/* A label shows its whole text: not ellipsized, and wide enough. */
static void assert_not_cut(GtkWidget *label)
{
    PangoLayout *layout = gtk_label_get_layout(GTK_LABEL(label));
    g_assert_false(pango_layout_is_ellipsized(layout));
    int w = 0;
    pango_layout_get_pixel_size(layout, &w, NULL);
    g_assert_cmpint(w, <=, gtk_widget_get_allocated_width(label));
}

/* The label's pixels are drawn: the rendered window is not one colour over it. */
static void assert_drawn(GtkWidget *widget, GtkWidget *top)
{
    /* laid out first: a running batch's catalogue may have just rebuilt its rows */
    gtk_container_check_resize(GTK_CONTAINER(top));
    cairo_surface_t *img = fm_gui_test_render(top);
    GdkRectangle r = fm_gui_test_rect_in(widget, top);
    int stride = cairo_image_surface_get_stride(img);
    const guint8 *px = cairo_image_surface_get_data(img);
    guint32 first = *(const guint32 *)(px + (gsize)r.y * stride + (gsize)r.x * 4);
    gboolean varied = FALSE;
    for (int y = r.y; y < r.y + r.height && !varied; y++)
        for (int x = r.x; x < r.x + r.width && !varied; x++)
            varied = *(const guint32 *)(px + (gsize)y * stride + (gsize)x * 4) != first;
    cairo_surface_destroy(img);
    g_assert_true(varied);
}

static char *stack_path(int i)
{
    g_autofree char *name = g_strdup_printf("speckle-%d.tif", i);
    return g_build_filename(stacks_dir, name, NULL);
}

static gboolean problems_shown(gpointer unused G_GNUC_UNUSED)
{
    GtkWidget *d = fm_window_batch_problems_dialog(win);
    return d != NULL && gtk_widget_get_mapped(d);
}

static gboolean opened(gpointer unused G_GNUC_UNUSED)
{
    return !fm_window_is_loading(win) && fm_window_get_dataset(win) != NULL;
}

static gboolean batch_finished(gpointer unused G_GNUC_UNUSED)
{
    return !fm_window_batch_running(win);
}

static FmCatalogueView *catalogue_view(void)
{
    GtkWidget *v = fm_gui_test_find_type(GTK_WIDGET(win), FM_TYPE_CATALOGUE_VIEW);
    g_assert_nonnull(v);
    return FM_CATALOGUE_VIEW(v);
}

static gboolean match_named(GtkWidget *w, gconstpointer name)
{
    return g_strcmp0(gtk_widget_get_name(w), name) == 0;
}

/* The batch's runs in the catalogue: done ones counted in *done. */
static guint catalogue_items(const char *batch_id, int *done)
{
    g_autoptr(GError) error = NULL;
    fm_catalogue *cat = fm_catalogue_open(data_dir, &error);
    g_assert_no_error(error);
    g_autoptr(GArray) items = fm_catalogue_batch_items(cat, batch_id, &error);
    g_assert_no_error(error);
    *done = 0;
    for (guint i = 0; i < items->len; i++)
        *done += g_array_index(items, fm_catalogue_batch_item, i).status == FM_RUN_DONE;
    guint n = items->len;
    fm_catalogue_close(cat);
    return n;
}

/* The group row of the batch in the catalogue list and its member rows, on screen. */
static void check_group(const char *batch_id, guint n_runs, const char *shot)
{
    FmCatalogueView *view = catalogue_view();
    g_assert_true(fm_catalogue_view_refresh(view, NULL));
    fm_gui_test_drain(0.3);
    GtkWidget *group = fm_catalogue_view_find_group(view, batch_id);
    g_assert_nonnull(group);
    gtk_widget_grab_focus(group);
    fm_gui_test_drain(0.2);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-batch.png", "%s", shot);
    assert_on_screen(group, GTK_WIDGET(win));
    GtkWidget *scroller = gtk_widget_get_ancestor(group, GTK_TYPE_SCROLLED_WINDOW);
    assert_in_view(group, scroller);
    g_autoptr(GPtrArray) titles =
        fm_gui_test_collect(group, match_named, "fm-catalogue-group-title", FALSE);
    g_assert_cmpuint(titles->len, ==, 1);
    const char *title = gtk_label_get_text(titles->pdata[0]);
    g_autofree char *expect = g_strdup_printf(n_runs == 1 ? "on %u file" : "on %u files", n_runs);
    g_assert_nonnull(strstr(title, expect));
    assert_not_cut(titles->pdata[0]);
    assert_drawn(titles->pdata[0], GTK_WIDGET(win));
    /* its runs right under it, each on screen */
    GtkListBox *box = GTK_LIST_BOX(gtk_widget_get_parent(group));
    int at = gtk_list_box_row_get_index(GTK_LIST_BOX_ROW(group));
    for (guint k = 1; k <= n_runs; k++) {
        GtkListBoxRow *row = gtk_list_box_get_row_at_index(box, at + (int)k);
        g_assert_nonnull(row);
        g_assert_cmpstr(g_object_get_data(G_OBJECT(row), "fm-member-of"), ==, batch_id);
        gtk_widget_grab_focus(GTK_WIDGET(row)); /* scrolls it into view, as a user would */
        fm_gui_test_drain(0.1);
        assert_on_screen(GTK_WIDGET(row), GTK_WIDGET(win));
    }
    GtkListBoxRow *after = gtk_list_box_get_row_at_index(box, at + (int)n_runs + 1);
    g_assert_true(after == NULL ||
                  g_strcmp0(g_object_get_data(G_OBJECT(after), "fm-member-of"), batch_id) != 0);
    gtk_widget_grab_focus(group);
    fm_gui_test_drain(0.2);
    /* the group closes and opens again */
    g_signal_emit_by_name(box, "row-activated", group);
    fm_gui_test_drain(0.1);
    g_assert_false(gtk_widget_get_visible(GTK_WIDGET(gtk_list_box_get_row_at_index(box, at + 1))));
    g_signal_emit_by_name(box, "row-activated", group);
    fm_gui_test_drain(0.1);
    g_assert_true(gtk_widget_get_visible(GTK_WIDGET(gtk_list_box_get_row_at_index(box, at + 1))));
}

static void plan_and_run(int width, int height)
{
    GdkRectangle screen;
    gdk_monitor_get_geometry(gdk_display_get_monitor(gdk_display_get_default(), 0), &screen);
    if (screen.width < width || screen.height < height) { /* xvfb-run at the smaller size */
        g_test_skip("the screen is smaller than this size");
        return;
    }
    fm_gui_test_resize_outer(GTK_WIDGET(win), width, height);
    fm_gui_test_drain(0.3);
    g_autofree char *p0 = stack_path(0), *p1 = stack_path(1), *p2 = stack_path(2);
    g_autofree char *p3 = stack_path(3);
    const char *paths[] = {p0, p1, p2, p3, NULL};
    g_action_group_activate_action(G_ACTION_GROUP(win), "run-on-paths",
                                   g_variant_new_strv(paths, -1));
    g_assert_true(fm_gui_test_wait_until(problems_shown, NULL, 10));
    fm_gui_test_drain(0.3);
    /* nothing has run: the dialog names the truncated file and why */
    g_assert_false(fm_window_batch_running(win));
    GtkWidget *dialog = fm_window_batch_problems_dialog(win);
    g_autoptr(GPtrArray) items =
        fm_gui_test_collect(dialog, match_named, "fm-batch-problem", FALSE);
    g_assert_cmpuint(items->len, ==, 1);
    const char *text = gtk_label_get_text(items->pdata[0]);
    g_assert_nonnull(strstr(text, "speckle-3.tif"));
    g_assert_cmpuint(strlen(text), >, strlen("speckle-3.tif\n") + 5); /* and a reason */
    assert_on_screen(items->pdata[0], dialog);
    assert_drawn(items->pdata[0], dialog);
    /* the dialog fits the screen */
    int dw = 0, dh = 0;
    gtk_window_get_size(GTK_WINDOW(dialog), &dw, &dh);
    g_assert_cmpint(dw, <=, width);
    g_assert_cmpint(dh, <=, height);
    GtkWidget *run = gtk_dialog_get_widget_for_response(GTK_DIALOG(dialog), GTK_RESPONSE_ACCEPT);
    g_assert_nonnull(run);
    assert_on_screen(run, dialog);
    g_autofree char *suffix = g_strdup_printf("-problems-%dx%d", width, height);
    fm_gui_test_screenshot(dialog, data_dir, "screenshot-batch.png", "%s", suffix);
    gtk_button_clicked(GTK_BUTTON(run)); /* Run the Other 3 Files */
    g_assert_null(fm_window_batch_problems_dialog(win));
    g_assert_true(fm_gui_test_wait_until(batch_finished, NULL, 120));
    fm_gui_test_drain(0.5);

    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-batch.png", "-jobs-%dx%d", width,
                           height);
    /* the job list: three rows Done, each on screen and inside the list's view */
    fm_batch_view *view = fm_window_batch_view(win);
    g_assert_nonnull(view);
    GtkWidget *list = fm_window_get_job_list(win);
    for (int i = 0; i < 3; i++) {
        GtkWidget *state = fm_batch_view_item_state(view, i);
        g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(state)), ==, "Done");
        GtkWidget *row = fm_batch_view_item_row(view, i);
        scroll_to(row, list);
        assert_on_screen(row, GTK_WIDGET(win));
        assert_in_view(row, list);
        assert_drawn(state, GTK_WIDGET(win));
    }
    g_assert_null(fm_batch_view_item_row(view, 3));
    /* no empty line under a file that did not fail: the next file's row follows at once */
    g_assert_false(gtk_widget_get_visible(fm_batch_view_item_reason(view, 0)));
    GdkRectangle r0 = fm_gui_test_rect_in(fm_batch_view_item_row(view, 0), list);
    GdkRectangle r1 = fm_gui_test_rect_in(fm_batch_view_item_row(view, 1), list);
    g_assert_cmpint(r1.y - (r0.y + r0.height), <=, 8);
    g_autoptr(GPtrArray) heads =
        fm_gui_test_collect(fm_batch_view_widget(view), match_named, "fm-batch-title", FALSE);
    g_assert_cmpuint(heads->len, ==, 1);
    g_assert_nonnull(strstr(gtk_label_get_text(heads->pdata[0]), "on 3 files"));
    assert_on_screen(heads->pdata[0], GTK_WIDGET(win));
    assert_not_cut(heads->pdata[0]);
    GtkWidget *status = fm_batch_view_status_label(view);
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(status)), "3 of 3 done"));
    scroll_to(status, list);
    assert_on_screen(status, GTK_WIDGET(win));
    assert_in_view(status, list);
    g_assert_false(gtk_widget_get_sensitive(fm_batch_view_cancel_button(view)));

    const char *batch_id = fm_window_batch_id(win);
    g_assert_nonnull(batch_id);
    int done = 0;
    g_assert_cmpuint(catalogue_items(batch_id, &done), ==, 3);
    g_assert_cmpint(done, ==, 3);
    g_autofree char *shot = g_strdup_printf("-done-%dx%d", width, height);
    check_group(batch_id, 3, shot);
}

static void test_plan_run_1920(void)
{
    plan_and_run(1920, 1080);
}

static void test_plan_run_1366(void)
{
    plan_and_run(1366, 768);
}

static gboolean first_running(gpointer unused G_GNUC_UNUSED)
{
    fm_batch_view *view = fm_window_batch_view(win);
    return view != NULL &&
           g_strcmp0(gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, 0))),
                     "Running…") == 0;
}

/* Cancel while the first item runs: it finishes, the rest never start, the done one stays. */
static void test_cancel_1366(void)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1366, 768);
    fm_gui_test_drain(0.3);
    g_autofree char *p0 = stack_path(0), *p1 = stack_path(1), *p2 = stack_path(2);
    g_autofree char *p4 = stack_path(4), *p5 = stack_path(5);
    const char *paths[] = {p4, p5, p0, p1, p2, NULL};
    g_assert_true(fm_window_run_on_paths(win, paths));
    g_assert_true(fm_gui_test_wait_until(first_running, NULL, 30));
    fm_batch_view *view = fm_window_batch_view(win);
    GtkWidget *cancel = fm_batch_view_cancel_button(view);
    scroll_to(cancel, fm_window_get_job_list(win));
    assert_on_screen(cancel, GTK_WIDGET(win));
    gtk_button_clicked(GTK_BUTTON(cancel));
    g_assert_true(fm_gui_test_wait_until(batch_finished, NULL, 120));
    fm_gui_test_drain(0.5);
    int shown_done = 0;
    for (int i = 0; i < 5; i++) {
        const char *state = gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, i)));
        shown_done += g_strcmp0(state, "Done") == 0;
        if (i >= shown_done)
            g_assert_cmpstr(state, ==, "Not run");
    }
    /* the item running at the cancel finished; the others never started */
    g_assert_cmpint(shown_done, >=, 1);
    g_assert_cmpint(shown_done, <, 5);
    GtkWidget *status = fm_batch_view_status_label(view);
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(status)), "cancelled"));
    scroll_to(status, fm_window_get_job_list(win));
    assert_on_screen(status, GTK_WIDGET(win));
    int done = 0;
    g_assert_cmpuint(catalogue_items(fm_window_batch_id(win), &done), ==, (guint)shown_done);
    g_assert_cmpint(done, ==, shown_done);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-batch.png",
                           "-cancelled-1366x768");
    check_group(fm_window_batch_id(win), (guint)shown_done, "-cancelled-group-1366x768");
}

/* A file whose header reads but whose frames are cut short passes the plan and fails when it
 * runs: its row says why, the batch goes on, the catalogue keeps the failed run in the group. */
static void test_failed_item_1366(void)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1366, 768);
    fm_gui_test_drain(0.3);
    g_autofree char *p0 = stack_path(0), *p6 = stack_path(6), *p1 = stack_path(1);
    const char *paths[] = {p0, p6, p1, NULL};
    g_assert_true(fm_window_run_on_paths(win, paths));
    g_assert_true(fm_gui_test_wait_until(batch_finished, NULL, 120));
    g_assert_null(fm_window_batch_problems_dialog(win)); /* the plan took all three */
    fm_gui_test_drain(0.5);
    fm_batch_view *view = fm_window_batch_view(win);
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, 0))), ==, "Done");
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, 2))), ==, "Done");
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, 1))), ==, "Failed");
    GtkWidget *failed = fm_batch_view_item_reason(view, 1);
    const char *text = gtk_label_get_text(GTK_LABEL(failed));
    g_assert_nonnull(strstr(text, "truncated"));
    g_assert_null(strstr(text, "speckle-6.tif")); /* the row names the file already */
    GtkWidget *list = fm_window_get_job_list(win);
    scroll_to(failed, list);
    assert_on_screen(failed, GTK_WIDGET(win));
    assert_in_view(failed, list);
    assert_not_cut(failed);
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(fm_batch_view_status_label(view))),
                            "2 of 3 done · 1 failed"));
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-batch.png", "-failed-1366x768");
    int done = 0;
    g_assert_cmpuint(catalogue_items(fm_window_batch_id(win), &done), ==, 3);
    g_assert_cmpint(done, ==, 2);
    check_group(fm_window_batch_id(win), 3, "-failed-group-1366x768");
    /* the failed run (no dataset: its read failed) is named by its file in the group */
    GtkWidget *group = fm_catalogue_view_find_group(catalogue_view(), fm_window_batch_id(win));
    GtkListBox *box = GTK_LIST_BOX(gtk_widget_get_parent(group));
    GtkListBoxRow *row =
        gtk_list_box_get_row_at_index(box, gtk_list_box_row_get_index(GTK_LIST_BOX_ROW(group)) + 2);
    GtkWidget *name = fm_widget_find_named(GTK_WIDGET(row), "fm-catalogue-title");
    g_assert_cmpstr(gtk_label_get_text(GTK_LABEL(name)), ==, "speckle-6.tif");
    assert_on_screen(name, GTK_WIDGET(win));
    assert_not_cut(name);
}

static gboolean first_done(gpointer unused G_GNUC_UNUSED)
{
    fm_batch_view *view = fm_window_batch_view(win);
    return view != NULL &&
           g_strcmp0(gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, 0))), "Done") == 0;
}

static gboolean another_batch_runs(gpointer previous_id)
{
    return fm_window_batch_running(win) &&
           g_strcmp0(fm_window_batch_id(win), (const char *)previous_id) != 0;
}

static gboolean group_shown(gpointer unused G_GNUC_UNUSED)
{
    return fm_catalogue_view_find_group(catalogue_view(), fm_window_batch_id(win)) != NULL;
}

/* The catalogue shows the batch's group as soon as its first run is written, while the other
 * items still run (the view finds it by itself: the test does not refresh it). */
static void test_group_grows_1366(void)
{
    fm_gui_test_resize_outer(GTK_WIDGET(win), 1366, 768);
    fm_gui_test_drain(0.3);
    g_autofree char *p0 = stack_path(0), *p4 = stack_path(4), *p5 = stack_path(5);
    /* enough larger files after the first that the batch still runs when its group shows */
    const char *paths[21] = {p0};
    for (int i = 1; i < 20; i++)
        paths[i] = i % 2 ? p4 : p5;
    g_autofree char *previous = g_strdup(fm_window_batch_id(win));
    g_assert_true(fm_window_run_on_paths(win, paths));
    /* the files are checked first: until then the rows and id are the last batch's */
    g_assert_true(fm_gui_test_wait_until(another_batch_runs, previous, 30));
    g_assert_true(fm_gui_test_wait_until(first_done, NULL, 60));
    /* the catalogue view polls its catalogue every 0.4 s */
    g_assert_true(fm_gui_test_wait_until(group_shown, NULL, 5));
    g_assert_true(fm_window_batch_running(win));
    GtkWidget *group = fm_catalogue_view_find_group(catalogue_view(), fm_window_batch_id(win));
    g_assert_nonnull(group);
    GtkWidget *scroller = gtk_widget_get_ancestor(group, GTK_TYPE_SCROLLED_WINDOW);
    GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroller));
    gtk_adjustment_set_value(adj, 0.0); /* the newest runs come first */
    fm_gui_test_drain(0.1);
    /* found again: a refresh while the loop ran rebuilds the rows */
    group = fm_catalogue_view_find_group(catalogue_view(), fm_window_batch_id(win));
    g_assert_nonnull(group);
    assert_on_screen(group, GTK_WIDGET(win));
    assert_in_view(group, scroller);
    g_autoptr(GPtrArray) titles =
        fm_gui_test_collect(group, match_named, "fm-catalogue-group-title", FALSE);
    g_assert_cmpuint(titles->len, ==, 1);
    assert_drawn(titles->pdata[0], GTK_WIDGET(win));
    /* its runs so far: done ones, and those on their way said running, not failed */
    g_autoptr(GPtrArray) details =
        fm_gui_test_collect(group, match_named, "fm-catalogue-group-detail", FALSE);
    g_assert_cmpuint(details->len, ==, 1);
    const char *detail = gtk_label_get_text(details->pdata[0]);
    g_test_message("group while running: %s", detail);
    g_assert_cmpint(atoi(detail), >=, 1);
    g_assert_true(strstr(detail, " done") != NULL);
    g_assert_null(strstr(detail, "failed"));
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot-batch.png", "-growing-1366x768");
    int done = 0;
    g_assert_cmpuint(catalogue_items(fm_window_batch_id(win), &done), >=, 1);
    g_assert_cmpint(done, >=, 1);
    gtk_button_clicked(GTK_BUTTON(fm_batch_view_cancel_button(fm_window_batch_view(win))));
    g_assert_true(fm_gui_test_wait_until(batch_finished, NULL, 120));
    fm_gui_test_drain(0.3);
}

/* The menu's action opens a chooser that takes several files or the folder it shows. */
static void test_chooser(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "run-on-files", NULL);
    fm_gui_test_drain(0.5);
    GtkWidget *chooser = NULL;
    GList *tops = gtk_window_list_toplevels();
    for (GList *l = tops; l != NULL; l = l->next)
        if (GTK_IS_FILE_CHOOSER_DIALOG(l->data) && gtk_widget_get_mapped(l->data))
            chooser = l->data;
    g_list_free(tops);
    g_assert_nonnull(chooser);
    g_assert_true(gtk_file_chooser_get_select_multiple(GTK_FILE_CHOOSER(chooser)));
    int cw = 0, ch = 0;
    gtk_window_get_size(GTK_WINDOW(chooser), &cw, &ch);
    g_assert_cmpint(cw, <=, 1366);
    g_assert_cmpint(ch, <=, 768 - 60); /* with its title bar and a panel, on a laptop's screen */
    GtkWidget *folder = gtk_dialog_get_widget_for_response(GTK_DIALOG(chooser), 1);
    GtkWidget *files = gtk_dialog_get_widget_for_response(GTK_DIALOG(chooser), GTK_RESPONSE_ACCEPT);
    g_assert_nonnull(folder);
    g_assert_nonnull(files);
    assert_on_screen(folder, chooser);
    assert_on_screen(files, chooser);
    fm_gui_test_screenshot(chooser, data_dir, "screenshot-batch.png", "-chooser");
    gtk_dialog_response(GTK_DIALOG(chooser), GTK_RESPONSE_CANCEL);
    fm_gui_test_drain(0.2);
    g_assert_false(fm_window_batch_running(win));
}

/* Cancel All Jobs (the menu) stops a batch as its own Cancel does. */
static void test_cancel_all(void)
{
    g_autofree char *p4 = stack_path(4), *p5 = stack_path(5);
    const char *paths[] = {p4, p5, p4, NULL};
    g_assert_true(fm_window_run_on_paths(win, paths));
    g_assert_true(fm_gui_test_wait_until(first_running, NULL, 30));
    g_action_group_activate_action(G_ACTION_GROUP(win), "cancel-all", NULL);
    g_assert_true(fm_gui_test_wait_until(batch_finished, NULL, 120));
    fm_gui_test_drain(0.2);
    GtkWidget *status = fm_batch_view_status_label(fm_window_batch_view(win));
    g_assert_nonnull(strstr(gtk_label_get_text(GTK_LABEL(status)), "cancelled"));
    g_assert_cmpstr(
        gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(fm_window_batch_view(win), 2))), ==,
        "Not run");
}

static gboolean other_finished(gpointer other)
{
    return !fm_window_batch_running(other);
}

static gboolean other_running(gpointer other)
{
    fm_batch_view *view = fm_window_batch_view(other);
    return view != NULL &&
           g_strcmp0(gtk_label_get_text(GTK_LABEL(fm_batch_view_item_state(view, 0))),
                     "Running…") == 0;
}

/* A window closed while its batch runs: the batch stops after its item and what is done stays
 * in the catalogue. */
static void test_close_while_running(void)
{
    FmWindow *other = fm_window_new(app);
    gtk_window_present(GTK_WINDOW(other));
    fm_gui_test_drain(0.3);
    g_assert_true(fm_window_select_method(other, "lsi.spatial"));
    g_autofree char *p4 = stack_path(4), *p5 = stack_path(5);
    const char *paths[] = {p4, p5, p4, p5, NULL};
    g_assert_true(fm_window_run_on_paths(other, paths));
    g_assert_true(fm_gui_test_wait_until(other_running, other, 30));
    g_autofree char *batch_id = g_strdup(fm_window_batch_id(other));
    g_object_ref(other); /* to ask it after it is destroyed */
    gtk_widget_destroy(GTK_WIDGET(other));
    g_assert_true(fm_gui_test_wait_until(other_finished, other, 60));
    g_object_unref(other);
    int done = 0;
    guint n = catalogue_items(batch_id, &done);
    g_assert_cmpuint(n, >=, 1);
    g_assert_cmpuint(n, <, 4);
    g_assert_cmpint(done, ==, (int)n);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-batch-XXXXXX");
    if (data_dir == NULL)
        return 0;
    /* the user's files, outside Fluxmap's own folder */
    stacks_dir = g_dir_make_tmp("fluxmap-gui-batch-stacks-XXXXXX", NULL);
    g_assert_nonnull(stacks_dir);
    /* 0-3 small; 4-5 larger, so an item runs long enough to be cancelled while it runs */
    for (int i = 0; i < 6; i++) {
        g_autofree char *name = g_strdup_printf("speckle-%d.tif", i);
        int size = i < 4 ? 64 : 384;
        g_free(fm_gui_test_write_speckle(stacks_dir, name, size, size, i < 4 ? 8 : 60,
                                         (guint32)(7 + i)));
    }
    /* speckle-3.tif cut short: its header points past its end */
    g_autofree char *bad = stack_path(3);
    g_assert_cmpint(truncate(bad, 200), ==, 0);
    /* speckle-6.tif: its first frames and directory whole, the rest cut off */
    g_free(fm_gui_test_write_speckle(stacks_dir, "speckle-6.tif", 64, 64, 8, 99));
    g_autofree char *cut = stack_path(6);
    g_assert_cmpint(truncate(cut, 64 * 64 * 2 * 4), ==, 0);

    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    fm_gui_test_drain(0.25);
    /* the Speckle page with its method and a parameter the batch must take */
    g_autofree char *first = stack_path(0);
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(first));
    g_assert_true(fm_gui_test_wait_until(opened, NULL, 30));
    g_assert_true(fm_window_select_method(win, "lsi.spatial"));
    g_assert_true(fm_window_set_param(win, "window", "7"));

    g_test_add_func("/gui-batch/plan-run-1920x1080", test_plan_run_1920);
    g_test_add_func("/gui-batch/plan-run-1366x768", test_plan_run_1366);
    g_test_add_func("/gui-batch/cancel-1366x768", test_cancel_1366);
    g_test_add_func("/gui-batch/failed-item-1366x768", test_failed_item_1366);
    g_test_add_func("/gui-batch/group-grows-1366x768", test_group_grows_1366);
    g_test_add_func("/gui-batch/chooser", test_chooser);
    g_test_add_func("/gui-batch/cancel-all", test_cancel_all);
    g_test_add_func("/gui-batch/close-while-running", test_close_while_running);
    int rc = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    for (int i = 0; i < 7; i++) {
        g_autofree char *path = stack_path(i);
        g_unlink(path);
    }
    g_rmdir(stacks_dir);
    g_free(stacks_dir);
    return rc;
}
