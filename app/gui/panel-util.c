/* Widgets that several method panels build the same way: section heading, backend combo, and the
 * Run/Cancel button row. */
#include "app/gui/panel-util.h"

#include <glib/gi18n.h>

#include "app/gui/param-form.h"

GtkWidget *fm_panel_heading(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "fm-heading");
    return label;
}

GtkWidget *fm_panel_action_button(const char *label, const char *action, const char *style)
{
    GtkWidget *b = gtk_button_new_with_mnemonic(label);
    gtk_actionable_set_action_name(GTK_ACTIONABLE(b), action);
    if (style != NULL)
        gtk_style_context_add_class(gtk_widget_get_style_context(b), style);
    return b;
}

GtkWidget *fm_backend_combo_new(void)
{
    GtkWidget *combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(combo), "auto", _("Automatic (GPU if present)"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(combo), "cpu", _("CPU"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(combo), "cuda", _("CUDA GPU"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), "auto");
    return combo;
}

fm_backend fm_backend_combo_get(GtkWidget *combo)
{
    const char *id = gtk_combo_box_get_active_id(GTK_COMBO_BOX(combo));
    if (g_strcmp0(id, "cpu") == 0)
        return FM_BACKEND_CPU;
    if (g_strcmp0(id, "cuda") == 0)
        return FM_BACKEND_CUDA;
    return FM_BACKEND_AUTO;
}

void fm_backend_combo_set(GtkWidget *combo, const char *backend)
{
    if (!gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), backend))
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), "auto");
}

const char *fm_backend_combo_get_id(GtkWidget *combo)
{
    const char *id = gtk_combo_box_get_active_id(GTK_COMBO_BOX(combo));
    return id != NULL ? id : "auto";
}

void fm_panel_show_method(GtkWidget *description_label, GtkWidget *param_form,
                          const fm_method *method)
{
    gtk_label_set_text(GTK_LABEL(description_label),
                       method != NULL && method->description != NULL ? _(method->description) : "");
    fm_param_form_set_method(FM_PARAM_FORM(param_form), method);
}

GtkWidget *fm_backend_grid_new(GtkWidget *combo)
{
    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
    GtkWidget *label = gtk_label_new(_("Backend"));
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    gtk_widget_set_hexpand(combo, TRUE);
    gtk_grid_attach(GTK_GRID(grid), label, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), combo, 1, 0, 1, 1);
    return grid;
}

GtkWidget *fm_run_cancel_row_new(void)
{
    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_set_homogeneous(GTK_BOX(buttons), TRUE);
    gtk_widget_set_margin_top(buttons, 6);
    gtk_box_pack_start(GTK_BOX(buttons),
                       fm_panel_action_button(_("_Run"), "win.run", "suggested-action"), TRUE, TRUE,
                       0);
    gtk_box_pack_start(GTK_BOX(buttons),
                       fm_panel_action_button(_("_Cancel"), "win.cancel-all", NULL), TRUE, TRUE, 0);
    fm_panel_pin_to_bottom(buttons);
    return buttons;
}

#define PIN_KEY "fm-panel-pinned"

void fm_panel_pin_to_bottom(GtkWidget *row)
{
    g_object_set_data(G_OBJECT(row), PIN_KEY, GINT_TO_POINTER(1));
}

static gboolean is_pinned(GtkWidget *widget, gconstpointer unused G_GNUC_UNUSED)
{
    return g_object_get_data(G_OBJECT(widget), PIN_KEY) != NULL;
}

GtkWidget *fm_panel_find_pinned(GtkWidget *panel)
{
    return fm_widget_find(panel, is_pinned, NULL);
}

GtkWidget *fm_widget_find(GtkWidget *root, FmWidgetMatch match, gconstpointer data)
{
    if (match(root, data))
        return root;
    if (!GTK_IS_CONTAINER(root))
        return NULL;
    GList *children = gtk_container_get_children(GTK_CONTAINER(root));
    GtkWidget *found = NULL;
    for (GList *l = children; l != NULL && found == NULL; l = l->next)
        found = fm_widget_find(l->data, match, data);
    g_list_free(children);
    return found;
}

static gboolean is_named(GtkWidget *widget, gconstpointer name)
{
    return g_strcmp0(gtk_widget_get_name(widget), name) == 0;
}

GtkWidget *fm_widget_find_named(GtkWidget *root, const char *name)
{
    return fm_widget_find(root, is_named, name);
}
