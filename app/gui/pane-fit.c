/* Side panes that fit their width (pane-fit.h): every widget anchored under a marked root is
 * fitted once, through one emission hook on "hierarchy-changed", so panels built or rebuilt later
 * (a parameter form for another method) fit without knowing about it. */
#include "app/gui/pane-fit.h"

#define ROOT_KEY "fm-pane-fit-root"
#define DONE_KEY "fm-pane-fit-done"
#define TOOLTIP_KEY "fm-pane-fit-tooltip"
#define ENTRY_CHARS 5

static gboolean under_root(GtkWidget *w)
{
    for (; w != NULL; w = gtk_widget_get_parent(w))
        if (g_object_get_data(G_OBJECT(w), ROOT_KEY) != NULL)
            return TRUE;
    return FALSE;
}

/* The tooltip says the whole text while the label is cut, and goes when it is not. */
static void label_allocated(GtkWidget *widget, GdkRectangle *alloc, gpointer data)
{
    (void)alloc;
    (void)data;
    GtkLabel *label = GTK_LABEL(widget);
    gboolean cut = pango_layout_is_ellipsized(gtk_label_get_layout(label));
    gboolean ours = g_object_get_data(G_OBJECT(widget), TOOLTIP_KEY) != NULL;
    if (cut && (ours || gtk_widget_get_tooltip_text(widget) == NULL)) {
        const char *text = gtk_label_get_text(label);
        g_autofree char *old = gtk_widget_get_tooltip_text(widget);
        if (g_strcmp0(old, text) != 0)
            gtk_widget_set_tooltip_text(widget, text);
        g_object_set_data(G_OBJECT(widget), TOOLTIP_KEY, GINT_TO_POINTER(1));
    } else if (!cut && ours) {
        gtk_widget_set_tooltip_text(widget, NULL);
        g_object_set_data(G_OBJECT(widget), TOOLTIP_KEY, NULL);
    }
}

static void fit_label(GtkLabel *label)
{
    if (!gtk_label_get_line_wrap(label) && gtk_label_get_ellipsize(label) == PANGO_ELLIPSIZE_NONE)
        gtk_label_set_ellipsize(label, PANGO_ELLIPSIZE_END);
    g_signal_connect_after(label, "size-allocate", G_CALLBACK(label_allocated), NULL);
}

static void fit_combo(GtkComboBox *combo)
{
    if (gtk_combo_box_get_has_entry(combo))
        return;
    GList *cells = gtk_cell_layout_get_cells(GTK_CELL_LAYOUT(combo));
    for (GList *l = cells; l != NULL; l = l->next)
        if (GTK_IS_CELL_RENDERER_TEXT(l->data))
            g_object_set(l->data, "ellipsize", PANGO_ELLIPSIZE_END, NULL);
    g_list_free(cells);
}

static void fit_widget(GtkWidget *w)
{
    if (g_object_get_data(G_OBJECT(w), DONE_KEY) != NULL)
        return;
    g_object_set_data(G_OBJECT(w), DONE_KEY, GINT_TO_POINTER(1));
    if (GTK_IS_LABEL(w))
        fit_label(GTK_LABEL(w));
    else if (GTK_IS_COMBO_BOX(w))
        fit_combo(GTK_COMBO_BOX(w));
    else if (GTK_IS_ENTRY(w) && gtk_entry_get_width_chars(GTK_ENTRY(w)) < 0)
        gtk_entry_set_width_chars(GTK_ENTRY(w), ENTRY_CHARS); /* spin buttons too */
    else if (GTK_IS_SCROLLED_WINDOW(w)) {
        GtkPolicyType v;
        gtk_scrolled_window_get_policy(GTK_SCROLLED_WINDOW(w), NULL, &v);
        gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(w), GTK_POLICY_NEVER, v);
    }
}

static void fit_tree(GtkWidget *w, gpointer data)
{
    (void)data;
    fit_widget(w);
    if (GTK_IS_CONTAINER(w))
        gtk_container_forall(GTK_CONTAINER(w), fit_tree, NULL);
}

static gboolean hierarchy_hook(GSignalInvocationHint *hint, guint n, const GValue *values,
                               gpointer data)
{
    (void)hint;
    (void)n;
    (void)data;
    GtkWidget *w = g_value_get_object(&values[0]);
    if (under_root(w))
        fit_widget(w);
    return TRUE; /* stay installed */
}

void fm_pane_fit_install(GtkWidget *root)
{
    static gsize hooked;
    if (g_once_init_enter(&hooked)) {
        guint id = g_signal_lookup("hierarchy-changed", GTK_TYPE_WIDGET);
        g_signal_add_emission_hook(id, 0, hierarchy_hook, NULL, NULL);
        g_once_init_leave(&hooked, 1);
    }
    g_object_set_data(G_OBJECT(root), ROOT_KEY, GINT_TO_POINTER(1));
    fit_tree(root, NULL);
}

gboolean fm_pane_label_fits(GtkLabel *label)
{
    if (gtk_label_get_line_wrap(label) || gtk_label_get_ellipsize(label) != PANGO_ELLIPSIZE_NONE)
        return TRUE;
    int min = 0;
    gtk_widget_get_preferred_width(GTK_WIDGET(label), &min, NULL);
    return gtk_widget_get_allocated_width(GTK_WIDGET(label)) >= min;
}
