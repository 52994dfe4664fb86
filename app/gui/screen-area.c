/* The work area a new window should fit in: windows size themselves from their content, but
 * never beyond the monitor their parent is on. */
#include "screen-area.h"

void fm_screen_work_area(GtkWindow *near, GdkRectangle *area)
{
    *area = (GdkRectangle){0, 0, 1366, 768};
    GdkDisplay *display = gdk_display_get_default();
    if (display == NULL)
        return;
    GdkWindow *gdk_window = near != NULL ? gtk_widget_get_window(GTK_WIDGET(near)) : NULL;
    GdkMonitor *monitor = gdk_window != NULL
                              ? gdk_display_get_monitor_at_window(display, gdk_window)
                              : gdk_display_get_primary_monitor(display);
    if (monitor == NULL && gdk_display_get_n_monitors(display) > 0)
        monitor = gdk_display_get_monitor(display, 0);
    if (monitor != NULL)
        gdk_monitor_get_workarea(monitor, area);
}
