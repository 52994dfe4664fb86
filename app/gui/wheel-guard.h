/* The wheel scrolls panels, not values: a spin button, combo box or scale inside a scrolled
 * window takes the wheel only while it has the keyboard focus; otherwise the event goes to the
 * scrolled window, so scrolling a parameter panel never changes a parameter under the pointer. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* Installs the guard for the whole process (once; later calls do nothing). */
void fm_wheel_guard_install(void);

/* The scrolled window that should take a wheel event aimed at widget, or NULL when widget
 * (or the value widget it belongs to) may take it itself. */
GtkWidget *fm_wheel_guard_redirect_target(GtkWidget *widget);

G_END_DECLS
