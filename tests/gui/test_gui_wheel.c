/* The wheel over a parameter panel scrolls the panel: an unfocused spin button or combo box under
 * the pointer keeps its value (it used to change, and a run then used a model the user never
 * chose); with the keyboard focus, the wheel changes the value as GTK users expect. Events go
 * through GDK's queue, as the X server's do. */
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;

static gboolean is_scrolled_value(GtkWidget *w, gconstpointer type)
{
    return G_TYPE_CHECK_INSTANCE_TYPE(w, GPOINTER_TO_SIZE(type)) && gtk_widget_is_drawable(w) &&
           gtk_widget_get_ancestor(w, GTK_TYPE_SCROLLED_WINDOW) != NULL;
}

/* The value widgets of type on show inside a scrolled part of w (internal children too: a
 * combo's button is one). */
static GPtrArray *collect(GtkWidget *w, GType type)
{
    return fm_gui_test_collect(w, is_scrolled_value, GSIZE_TO_POINTER(type), TRUE);
}

/* The input window of widget (its own GdkWindow, whose events GTK gives to widget). */
static GdkWindow *input_window_of(GtkWidget *widget)
{
    if (GTK_IS_BUTTON(widget))
        return gtk_button_get_event_window(GTK_BUTTON(widget));
    GList *children = gdk_window_get_children(gtk_widget_get_window(widget));
    GdkWindow *found = NULL;
    for (GList *l = children; l != NULL && found == NULL; l = l->next) {
        gpointer user = NULL;
        gdk_window_get_user_data(l->data, &user);
        if (user == widget)
            found = l->data;
    }
    g_list_free(children);
    return found;
}

/* One wheel notch down over widget, queued as the X server's events are. */
static void wheel_down_over(GtkWidget *widget)
{
    GdkWindow *target = input_window_of(widget);
    g_assert_nonnull(target);
    GdkEvent *event = gdk_event_new(GDK_SCROLL);
    event->scroll.window = g_object_ref(target);
    event->scroll.direction = GDK_SCROLL_DOWN;
    event->scroll.time = GDK_CURRENT_TIME;
    event->scroll.x = event->scroll.y = 4;
    GdkSeat *seat = gdk_display_get_default_seat(gtk_widget_get_display(widget));
    gdk_event_set_device(event, gdk_seat_get_pointer(seat));
    gdk_event_put(event);
    gdk_event_free(event);
    fm_gui_test_drain(0.2);
}

static GtkAdjustment *panel_scroll(GtkWidget *widget)
{
    GtkWidget *scroller = gtk_widget_get_ancestor(widget, GTK_TYPE_SCROLLED_WINDOW);
    g_assert_nonnull(scroller);
    return gtk_scrolled_window_get_vadjustment(GTK_SCROLLED_WINDOW(scroller));
}

static gboolean loaded(gpointer unused G_GNUC_UNUSED)
{
    return fm_window_get_dataset(win) != NULL && !fm_window_is_loading(win);
}

/* The OCT panel is longer than a 1366x768 window: the wheel has somewhere to scroll it. */
static GtkWidget *panel_on_show(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "open-demo", g_variant_new_string("oct"));
    g_assert_true(fm_gui_test_wait_until(loaded, NULL, 60));
    gtk_window_resize(GTK_WINDOW(win), 1366, 700);
    fm_gui_test_drain(1.0);
    g_assert_cmpstr(fm_window_get_family(win), ==, "oct");
    g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(win)));
    return fm_window_get_side_pane(win, TRUE);
}

static void test_unfocused_values_keep(void)
{
    GtkWidget *pane = panel_on_show();
    g_autoptr(GPtrArray) spins = collect(pane, GTK_TYPE_SPIN_BUTTON);
    g_assert_cmpuint(spins->len, >, 0);
    GtkSpinButton *spin = spins->pdata[0];
    gtk_widget_grab_focus(GTK_WIDGET(fm_window_get_map_view(win))); /* the map has the keys */
    GtkAdjustment *scroll = panel_scroll(GTK_WIDGET(spin));
    double value = gtk_spin_button_get_value(spin), top = gtk_adjustment_get_value(scroll);
    g_assert_cmpfloat(gtk_adjustment_get_upper(scroll), >,
                      gtk_adjustment_get_page_size(scroll)); /* there is room to scroll */
    wheel_down_over(GTK_WIDGET(spin));
    g_assert_cmpfloat(gtk_spin_button_get_value(spin), ==, value);
    g_assert_cmpfloat(gtk_adjustment_get_value(scroll), >, top);

    g_autoptr(GPtrArray) combos = collect(pane, GTK_TYPE_COMBO_BOX);
    g_assert_cmpuint(combos->len, >, 0);
    GtkComboBox *combo = NULL;
    for (guint i = 0; i < combos->len && combo == NULL; i++) /* one with a next item */
        if (gtk_tree_model_iter_n_children(gtk_combo_box_get_model(combos->pdata[i]), NULL) >
            gtk_combo_box_get_active(combos->pdata[i]) + 1)
            combo = combos->pdata[i];
    g_assert_nonnull(combo);
    g_autoptr(GPtrArray) buttons = collect(GTK_WIDGET(combo), GTK_TYPE_TOGGLE_BUTTON);
    g_assert_cmpuint(buttons->len, ==, 1);
    int active = gtk_combo_box_get_active(combo);
    top = gtk_adjustment_get_value(panel_scroll(GTK_WIDGET(combo)));
    wheel_down_over(buttons->pdata[0]);
    g_assert_cmpint(gtk_combo_box_get_active(combo), ==, active);
    g_assert_cmpfloat(gtk_adjustment_get_value(panel_scroll(GTK_WIDGET(combo))), !=, top);
}

static void test_focused_value_takes_wheel(void)
{
    GtkWidget *pane = fm_window_get_side_pane(win, TRUE);
    g_autoptr(GPtrArray) spins = collect(pane, GTK_TYPE_SPIN_BUTTON);
    GtkSpinButton *spin = spins->pdata[0];
    gtk_widget_grab_focus(GTK_WIDGET(spin));
    double value = gtk_spin_button_get_value(spin);
    double lower = 0;
    gtk_spin_button_get_range(spin, &lower, NULL);
    if (value <= lower) /* room to go down */
        gtk_spin_button_spin(spin, GTK_SPIN_STEP_FORWARD, 0),
            value = gtk_spin_button_get_value(spin);
    wheel_down_over(GTK_WIDGET(spin));
    g_assert_cmpfloat(gtk_spin_button_get_value(spin), <, value);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-wheel-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    g_test_add_func("/gui-wheel/unfocused-values-keep", test_unfocused_values_keep);
    g_test_add_func("/gui-wheel/focused-value-takes-wheel", test_focused_value_takes_wheel);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
