/* The wheel scrolls panels, not values: unfocused value widgets in scrolled windows pass the
 * wheel on to their scrolled window (the usual GTK 3 fix, done once for the whole process in the
 * GDK event handler, because a combo box takes the wheel in its internal button, before any
 * handler on the combo itself could stop it). */
#include "app/gui/wheel-guard.h"

static gboolean takes_values(GtkWidget *w)
{
    return GTK_IS_SPIN_BUTTON(w) || GTK_IS_COMBO_BOX(w) || GTK_IS_RANGE(w);
}

/* TRUE when the keyboard focus is on w or inside it (a combo's focus is on its button). */
static gboolean holds_focus(GtkWidget *w)
{
    GtkWidget *top = gtk_widget_get_toplevel(w);
    if (!GTK_IS_WINDOW(top))
        return FALSE;
    GtkWidget *focus = gtk_window_get_focus(GTK_WINDOW(top));
    return focus != NULL && (focus == w || gtk_widget_is_ancestor(focus, w));
}

GtkWidget *fm_wheel_guard_redirect_target(GtkWidget *widget)
{
    GtkWidget *value = NULL;
    for (GtkWidget *w = widget; w != NULL; w = gtk_widget_get_parent(w)) {
        if (GTK_IS_SCROLLED_WINDOW(w)) {
            if (value == NULL || holds_focus(value))
                return NULL;
            return w;
        }
        if (value == NULL && takes_values(w))
            value = w;
    }
    return NULL; /* not in a scrolled window: the value widget keeps its wheel */
}

static void handle_event(GdkEvent *event, gpointer data)
{
    (void)data;
    if (event->type == GDK_SCROLL) {
        GtkWidget *target = gtk_get_event_widget(event);
        GtkWidget *scroller = target != NULL ? fm_wheel_guard_redirect_target(target) : NULL;
        if (scroller != NULL) {
            gtk_widget_event(scroller, event);
            return;
        }
    }
    gtk_main_do_event(event);
}

void fm_wheel_guard_install(void)
{
    static gboolean installed;
    if (installed)
        return;
    installed = TRUE;
    gdk_event_handler_set(handle_event, NULL, NULL);
}
