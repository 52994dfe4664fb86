/* FmWindow: its size, maximized state and pane widths, kept between sessions (GSettings), and a
 * first size chosen from the screen (maximized on a laptop screen, most of a large one). */
#include "window-private.h"

#include "application.h"

#define LEFT_DEFAULT 250
#define RIGHT_DEFAULT_SMALL 320 /* a 1366-px screen */
#define RIGHT_DEFAULT_LARGE 380
#define BOTTOM_DEFAULT_SMALL 150
#define BOTTOM_DEFAULT_LARGE 230

static GSettings *settings_of(FmWindow *win)
{
    GtkApplication *app = gtk_window_get_application(GTK_WINDOW(win));
    return app != NULL ? fm_application_get_settings(FM_APPLICATION(app)) : NULL;
}

static GdkRectangle work_area(FmWindow *win)
{
    GdkRectangle area = {0, 0, 1366, 768};
    GdkDisplay *display = gtk_widget_get_display(GTK_WIDGET(win));
    GdkMonitor *monitor = display != NULL ? gdk_display_get_primary_monitor(display) : NULL;
    if (monitor == NULL && display != NULL && gdk_display_get_n_monitors(display) > 0)
        monitor = gdk_display_get_monitor(display, 0);
    if (monitor != NULL)
        gdk_monitor_get_workarea(monitor, &area);
    return area;
}

static int setting_int(GSettings *s, const char *key)
{
    return s != NULL ? g_settings_get_int(s, key) : 0;
}

#define WANTED_KEY "fm-second-size-wanted"

static int handle_size(GtkWidget *paned)
{
    int handle = 0;
    gtk_widget_style_get(paned, "handle-size", &handle, NULL);
    return handle;
}

static int paned_length(GtkWidget *paned)
{
    return gtk_orientable_get_orientation(GTK_ORIENTABLE(paned)) == GTK_ORIENTATION_HORIZONTAL
               ? gtk_widget_get_allocated_width(paned)
               : gtk_widget_get_allocated_height(paned);
}

/* The size of a paned's second child (the right pane, the bottom row), which GtkPaned's
 * position (the first child's size) does not keep when the window changes size. */
static int second_size(GtkWidget *paned)
{
    if (g_object_get_data(G_OBJECT(paned), WANTED_KEY) != NULL)
        return GPOINTER_TO_INT(g_object_get_data(G_OBJECT(paned), WANTED_KEY));
    return paned_length(paned) - gtk_paned_get_position(GTK_PANED(paned)) - handle_size(paned);
}

/* Once the paned has its first size, its second child gets the size wanted for it. */
static void paned_allocated(GtkWidget *paned, GdkRectangle *alloc, gpointer data)
{
    (void)alloc;
    (void)data;
    int wanted = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(paned), WANTED_KEY));
    int length = paned_length(paned);
    if (wanted <= 0 || length <= 1)
        return;
    g_object_set_data(G_OBJECT(paned), WANTED_KEY, NULL);
    gtk_paned_set_position(GTK_PANED(paned), MAX(length - wanted - handle_size(paned), 1));
}

static void want_second_size(GtkWidget *paned, int size)
{
    g_object_set_data(G_OBJECT(paned), WANTED_KEY, GINT_TO_POINTER(size));
    g_signal_connect(paned, "size-allocate", G_CALLBACK(paned_allocated), NULL);
}

static gboolean state_changed(GtkWidget *widget, GdkEventWindowState *event, FmWindow *win)
{
    (void)widget;
    win->maximized = (event->new_window_state & GDK_WINDOW_STATE_MAXIMIZED) != 0;
    return FALSE;
}

static void window_allocated(GtkWidget *widget, GdkRectangle *alloc, FmWindow *win)
{
    (void)alloc;
    if (!win->maximized)
        gtk_window_get_size(GTK_WINDOW(widget), &win->saved_width, &win->saved_height);
}

void fm_window_geometry_restore(FmWindow *win)
{
    GSettings *s = settings_of(win);
    GdkRectangle area = work_area(win);
    gboolean small = area.width <= 1440 || area.height <= 800;
    int w = setting_int(s, "window-width"), h = setting_int(s, "window-height");
    gboolean first = w <= 0 || h <= 0;
    if (first) { /* most of a large screen; a laptop screen is all needed */
        w = MIN(area.width * 9 / 10, 1700);
        h = MIN(area.height * 9 / 10, 1050);
    }
    gtk_window_set_default_size(GTK_WINDOW(win), MIN(w, area.width), MIN(h, area.height));
    if ((s != NULL && g_settings_get_boolean(s, "window-maximized")) || (first && small))
        gtk_window_maximize(GTK_WINDOW(win));
    int left = setting_int(s, "left-pane-width");
    gtk_paned_set_position(GTK_PANED(win->outer_paned), left > 0 ? left : LEFT_DEFAULT);
    int right = setting_int(s, "right-pane-width");
    want_second_size(win->right_paned, right > 0 ? right
                                       : small   ? RIGHT_DEFAULT_SMALL
                                                 : RIGHT_DEFAULT_LARGE);
    int bottom = setting_int(s, "bottom-pane-height");
    want_second_size(win->centre_paned, bottom > 0 ? bottom
                                        : small    ? BOTTOM_DEFAULT_SMALL
                                                   : BOTTOM_DEFAULT_LARGE);
    g_signal_connect(win, "window-state-event", G_CALLBACK(state_changed), win);
    g_signal_connect(win, "size-allocate", G_CALLBACK(window_allocated), win);
}

void fm_window_geometry_save(FmWindow *win)
{
    GSettings *s = settings_of(win);
    if (s == NULL || win->saved_width <= 0) /* never shown: nothing to keep */
        return;
    if (win->saved_width > 0 && win->saved_height > 0) {
        g_settings_set_int(s, "window-width", win->saved_width);
        g_settings_set_int(s, "window-height", win->saved_height);
    }
    g_settings_set_boolean(s, "window-maximized", win->maximized);
    g_settings_set_int(s, "left-pane-width", gtk_paned_get_position(GTK_PANED(win->outer_paned)));
    g_settings_set_int(s, "right-pane-width", second_size(win->right_paned));
    g_settings_set_int(s, "bottom-pane-height", second_size(win->centre_paned));
}
