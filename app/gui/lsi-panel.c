/* FmLsiPanel: method choice, the schema-generated FmParamForm, backend and Run/Cancel for the
 * laser speckle family. */
#include "lsi-panel.h"

#include <glib/gi18n.h>

#include "param-form.h"

struct _FmLsiPanel {
    GtkBox parent_instance;
    char *family;
    GtkWidget *method_combo;
    GtkWidget *description_label;
    GtkWidget *param_grid; /* FmParamForm */
    GtkWidget *backend_combo;
    const fm_method *method;
};

G_DEFINE_TYPE(FmLsiPanel, fm_lsi_panel, GTK_TYPE_BOX)

enum { SIGNAL_BACKEND_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

const char *fm_lsi_panel_backend_name(fm_backend backend)
{
    switch (backend) {
    case FM_BACKEND_CPU:
        return "cpu";
    case FM_BACKEND_CUDA:
        return "cuda";
    default:
        return "auto";
    }
}

static void method_changed(GtkComboBox *combo, FmLsiPanel *self)
{
    const char *id = gtk_combo_box_get_active_id(combo);
    self->method = id != NULL ? fm_method_find(id) : NULL;
    gtk_label_set_text(GTK_LABEL(self->description_label),
                       self->method != NULL && self->method->description != NULL
                           ? _(self->method->description)
                           : "");
    fm_param_form_set_method(FM_PARAM_FORM(self->param_grid), self->method);
}

static void backend_changed(GtkComboBox *combo, FmLsiPanel *self)
{
    const char *id = gtk_combo_box_get_active_id(combo);
    g_signal_emit(self, signals[SIGNAL_BACKEND_CHANGED], 0, id != NULL ? id : "auto");
}

static GtkWidget *heading(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "fm-heading");
    return label;
}

static void fm_lsi_panel_finalize(GObject *object)
{
    FmLsiPanel *self = FM_LSI_PANEL(object);
    g_free(self->family);
    G_OBJECT_CLASS(fm_lsi_panel_parent_class)->finalize(object);
}

static void fm_lsi_panel_class_init(FmLsiPanelClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_lsi_panel_finalize;
    signals[SIGNAL_BACKEND_CHANGED] =
        g_signal_new("backend-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void fm_lsi_panel_init(FmLsiPanel *self)
{
    GtkBox *box = GTK_BOX(self);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(box, 6);
    g_object_set(self, "margin", 10, NULL);

    gtk_box_pack_start(box, heading(_("LASER SPECKLE")), FALSE, FALSE, 0);
    self->method_combo = gtk_combo_box_text_new();
    gtk_widget_set_tooltip_text(self->method_combo, _("Analysis method"));
    gtk_box_pack_start(box, self->method_combo, FALSE, FALSE, 0);
    self->description_label = gtk_label_new("");
    gtk_label_set_line_wrap(GTK_LABEL(self->description_label), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(self->description_label), 36);
    gtk_label_set_xalign(GTK_LABEL(self->description_label), 0.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->description_label), "dim-label");
    gtk_box_pack_start(box, self->description_label, FALSE, FALSE, 0);

    gtk_box_pack_start(box, heading(_("PARAMETERS")), FALSE, FALSE, 0);
    self->param_grid = fm_param_form_new();
    gtk_box_pack_start(box, self->param_grid, FALSE, FALSE, 0);

    gtk_box_pack_start(box, heading(_("COMPUTE")), FALSE, FALSE, 0);
    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
    GtkWidget *label = gtk_label_new(_("Backend"));
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    self->backend_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->backend_combo), "auto",
                              _("Automatic (GPU if present)"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->backend_combo), "cpu", _("CPU"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->backend_combo), "cuda", _("CUDA GPU"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->backend_combo), "auto");
    gtk_widget_set_hexpand(self->backend_combo, TRUE);
    gtk_grid_attach(GTK_GRID(grid), label, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), self->backend_combo, 1, 0, 1, 1);
    gtk_box_pack_start(box, grid, FALSE, FALSE, 0);

    GtkWidget *buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_set_homogeneous(GTK_BOX(buttons), TRUE);
    gtk_widget_set_margin_top(buttons, 6);
    GtkWidget *run = gtk_button_new_with_mnemonic(_("_Run"));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(run), "win.run");
    gtk_style_context_add_class(gtk_widget_get_style_context(run), "suggested-action");
    GtkWidget *cancel = gtk_button_new_with_mnemonic(_("_Cancel"));
    gtk_actionable_set_action_name(GTK_ACTIONABLE(cancel), "win.cancel-all");
    gtk_box_pack_start(GTK_BOX(buttons), run, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(buttons), cancel, TRUE, TRUE, 0);
    gtk_box_pack_start(box, buttons, FALSE, FALSE, 0);

    g_signal_connect(self->method_combo, "changed", G_CALLBACK(method_changed), self);
    g_signal_connect(self->backend_combo, "changed", G_CALLBACK(backend_changed), self);
}

GtkWidget *fm_lsi_panel_new(const char *family)
{
    FmLsiPanel *self = g_object_new(FM_TYPE_LSI_PANEL, NULL);
    self->family = g_strdup(family);
    int n = 0;
    const fm_method *const *all = fm_methods_all(&n);
    for (int i = 0; i < n; i++)
        if (g_strcmp0(all[i]->family, family) == 0)
            gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->method_combo), all[i]->id,
                                      _(all[i]->title));
    gtk_combo_box_set_active(GTK_COMBO_BOX(self->method_combo), 0);
    gtk_widget_show_all(GTK_WIDGET(self));
    return GTK_WIDGET(self);
}

const fm_method *fm_lsi_panel_get_method(FmLsiPanel *panel)
{
    return panel->method;
}

gboolean fm_lsi_panel_set_method(FmLsiPanel *panel, const char *method_id)
{
    return gtk_combo_box_set_active_id(GTK_COMBO_BOX(panel->method_combo), method_id);
}

fm_params *fm_lsi_panel_get_params(FmLsiPanel *panel, const fm_method *method, GError **error)
{
    return fm_param_form_get_params(FM_PARAM_FORM(panel->param_grid), method, error);
}

fm_backend fm_lsi_panel_get_backend(FmLsiPanel *panel)
{
    const char *id = gtk_combo_box_get_active_id(GTK_COMBO_BOX(panel->backend_combo));
    if (g_strcmp0(id, "cpu") == 0)
        return FM_BACKEND_CPU;
    if (g_strcmp0(id, "cuda") == 0)
        return FM_BACKEND_CUDA;
    return FM_BACKEND_AUTO;
}

void fm_lsi_panel_set_backend(FmLsiPanel *panel, const char *backend)
{
    if (!gtk_combo_box_set_active_id(GTK_COMBO_BOX(panel->backend_combo), backend))
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(panel->backend_combo), "auto");
}
