/* The work area (screen minus panels) a new window should fit in. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Work area of the monitor that shows near (or of the primary monitor, or 1366 x 768 without
 * one), in application pixels. */
void fm_screen_work_area(GtkWindow *near, GdkRectangle *area);

G_END_DECLS
