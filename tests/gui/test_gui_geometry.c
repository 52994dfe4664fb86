/* The window comes back as the user left it: size and pane widths are kept (GSettings) when the
 * window closes and given to the next one. (Maximized state needs a window manager to honour it:
 * gui-look.sh shows it under openbox; Xvfb alone has none.) */
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;

static int handle_of(GtkWidget *paned)
{
    int handle = 0;
    gtk_widget_style_get(paned, "handle-size", &handle, NULL);
    return handle;
}

static int right_width(FmWindow *win)
{
    GtkWidget *paned = gtk_widget_get_parent(fm_window_get_side_pane(win, TRUE));
    return gtk_widget_get_allocated_width(paned) - gtk_paned_get_position(GTK_PANED(paned)) -
           handle_of(paned);
}

static void test_size_and_panes_kept(void)
{
    FmWindow *win = fm_gui_test_activate(app);
    gtk_window_resize(GTK_WINDOW(win), 1500, 900);
    fm_gui_test_drain(0.5);
    GtkWidget *outer = gtk_widget_get_parent(fm_window_get_side_pane(win, FALSE));
    GtkWidget *right = gtk_widget_get_parent(fm_window_get_side_pane(win, TRUE));
    gtk_paned_set_position(GTK_PANED(outer), 310);
    fm_gui_test_drain(0.3);
    gtk_paned_set_position(GTK_PANED(right),
                           gtk_widget_get_allocated_width(right) - 430 - handle_of(right));
    fm_gui_test_drain(0.3);
    g_assert_cmpint(right_width(win), ==, 430);
    int w = 0, h = 0;
    gtk_window_get_size(GTK_WINDOW(win), &w, &h);
    gtk_widget_destroy(GTK_WIDGET(win)); /* closing keeps what the user left */
    fm_gui_test_drain(0.3);

    FmWindow *again = fm_window_new(app);
    gtk_window_present(GTK_WINDOW(again));
    fm_gui_test_drain(0.8);
    int w2 = 0, h2 = 0;
    gtk_window_get_size(GTK_WINDOW(again), &w2, &h2);
    g_assert_cmpint(w2, ==, w);
    g_assert_cmpint(h2, ==, h);
    GtkWidget *outer2 = gtk_widget_get_parent(fm_window_get_side_pane(again, FALSE));
    g_assert_cmpint(gtk_paned_get_position(GTK_PANED(outer2)), ==, 310);
    g_assert_cmpint(right_width(again), ==, 430);
    /* and the side pane on screen is that wide, wholly inside the window */
    int x = 0, y = 0;
    gtk_widget_translate_coordinates(fm_window_get_side_pane(again, TRUE), GTK_WIDGET(again), 0, 0,
                                     &x, &y);
    g_assert_cmpint(x + gtk_widget_get_allocated_width(fm_window_get_side_pane(again, TRUE)), <=,
                    gtk_widget_get_allocated_width(GTK_WIDGET(again)));
    gtk_widget_destroy(GTK_WIDGET(again));
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-geometry-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    g_test_add_func("/gui-geometry/size-and-panes-kept", test_size_and_panes_kept);
    int status = g_test_run();
    g_object_unref(app);
    g_free(data_dir);
    return status;
}
