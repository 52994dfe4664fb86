/* The family switcher and the side panels' scroller. */
#include "family-switcher.h"

#include <glib/gi18n.h>


static GtkStack *stack_of(GtkWidget *switcher)
{
    return g_object_get_data(G_OBJECT(switcher), "fm-stack");
}

static void combo_changed(GtkComboBox *combo, gpointer user)
{
    (void)user;
    const char *id = gtk_combo_box_get_active_id(combo);
    GtkStack *stack = stack_of(GTK_WIDGET(combo));
    if (id != NULL && stack != NULL &&
        g_strcmp0(gtk_stack_get_visible_child_name(stack), id) != 0)
        gtk_stack_set_visible_child_name(stack, id);
}

static void stack_changed(GtkStack *stack, GParamSpec *pspec, GtkWidget *switcher)
{
    (void)pspec;
    const char *name = gtk_stack_get_visible_child_name(stack);
    if (name != NULL && g_strcmp0(gtk_combo_box_get_active_id(GTK_COMBO_BOX(switcher)), name) != 0 &&
        !gtk_combo_box_set_active_id(GTK_COMBO_BOX(switcher), name))
        fm_family_switcher_refresh(switcher); /* a page the list left out (a reopened run's) */
}

GtkWidget *fm_family_switcher_new(GtkStack *stack)
{
    GtkWidget *combo = gtk_combo_box_text_new();
    g_object_set_data(G_OBJECT(combo), "fm-stack", stack);
    gtk_widget_set_tooltip_text(combo, _("Analysis family (chosen from the dataset)"));
    g_signal_connect(combo, "changed", G_CALLBACK(combo_changed), NULL);
    g_signal_connect_object(stack, "notify::visible-child", G_CALLBACK(stack_changed), combo, 0);
    fm_family_switcher_refresh(combo);
    return combo;
}

void fm_family_switcher_refresh(GtkWidget *switcher)
{
    GtkStack *stack = stack_of(switcher);
    GtkComboBoxText *combo = GTK_COMBO_BOX_TEXT(switcher);
    g_signal_handlers_block_by_func(switcher, combo_changed, NULL);
    gtk_combo_box_text_remove_all(combo);
    const char *const *listed = g_object_get_data(G_OBJECT(switcher), "fm-listed");
    const char *visible = gtk_stack_get_visible_child_name(stack);
    GList *children = gtk_container_get_children(GTK_CONTAINER(stack));
    for (GList *l = children; l != NULL; l = l->next) {
        char *name = NULL, *title = NULL;
        gtk_container_child_get(GTK_CONTAINER(stack), l->data, "name", &name, "title", &title, NULL);
        if (name != NULL && title != NULL &&
            (listed == NULL || g_strv_contains(listed, name) || g_strcmp0(name, visible) == 0))
            gtk_combo_box_text_append(combo, name, title);
        g_free(name);
        g_free(title);
    }
    g_list_free(children);
    if (visible != NULL)
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(switcher), visible);
    g_signal_handlers_unblock_by_func(switcher, combo_changed, NULL);
}

void fm_family_switcher_set_listed(GtkWidget *switcher, const char *const *ids)
{
    g_object_set_data_full(G_OBJECT(switcher), "fm-listed", g_strdupv((char **)ids),
                           (GDestroyNotify)g_strfreev);
    fm_family_switcher_refresh(switcher);
}

gboolean fm_family_switcher_lists(GtkWidget *switcher, const char *id)
{
    const char *const *listed = g_object_get_data(G_OBJECT(switcher), "fm-listed");
    return listed == NULL || g_strv_contains(listed, id);
}

GtkWidget *fm_panel_scroller_new(GtkWidget *panel)
{
    GtkWidget *scroller = gtk_scrolled_window_new(NULL, NULL);
    /* never sideways: the pane is as wide as the user drags it, and its panel fits that width
     * (pane-fit.c), so nothing is cut at its edge */
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroller), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_container_add(GTK_CONTAINER(scroller), panel);
    return scroller;
}
