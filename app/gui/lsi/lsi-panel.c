/* FmLsiPanel: method choice, the schema-generated FmParamForm, backend and Run/Cancel for the
 * laser speckle family. */
#include "lsi-panel.h"

#include <glib/gi18n.h>

#include "app/gui/panel-util.h"
#include "app/gui/param-form.h"

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

enum { SIGNAL_BACKEND_CHANGED, SIGNAL_PARAMS_CHANGED, N_SIGNALS };
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
    fm_panel_show_method(self->description_label, self->param_grid, self->method);
}

static void backend_changed(GtkComboBox *combo, FmLsiPanel *self)
{
    g_signal_emit(self, signals[SIGNAL_BACKEND_CHANGED], 0,
                  fm_backend_combo_get_id(GTK_WIDGET(combo)));
}

static void form_changed(FmParamForm *form, const char *key, FmLsiPanel *self)
{
    (void)form;
    g_signal_emit(self, signals[SIGNAL_PARAMS_CHANGED], 0, key);
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
    signals[SIGNAL_PARAMS_CHANGED] =
        g_signal_new("params-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void fm_lsi_panel_init(FmLsiPanel *self)
{
    GtkBox *box = GTK_BOX(self);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(box, 6);
    g_object_set(self, "margin", 10, NULL);

    gtk_box_pack_start(box, fm_panel_heading(_("LASER SPECKLE")), FALSE, FALSE, 0);
    self->method_combo = gtk_combo_box_text_new();
    gtk_widget_set_tooltip_text(self->method_combo, _("Analysis method"));
    gtk_box_pack_start(box, self->method_combo, FALSE, FALSE, 0);
    self->description_label = gtk_label_new("");
    gtk_label_set_line_wrap(GTK_LABEL(self->description_label), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(self->description_label), 36);
    gtk_label_set_xalign(GTK_LABEL(self->description_label), 0.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->description_label), "dim-label");
    gtk_box_pack_start(box, self->description_label, FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_panel_heading(_("PARAMETERS")), FALSE, FALSE, 0);
    self->param_grid = fm_param_form_new();
    gtk_box_pack_start(box, self->param_grid, FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_panel_heading(_("COMPUTE")), FALSE, FALSE, 0);
    self->backend_combo = fm_backend_combo_new();
    gtk_box_pack_start(box, fm_backend_grid_new(self->backend_combo), FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_run_cancel_row_new(), FALSE, FALSE, 0);

    g_signal_connect(self->method_combo, "changed", G_CALLBACK(method_changed), self);
    g_signal_connect(self->backend_combo, "changed", G_CALLBACK(backend_changed), self);
    g_signal_connect(self->param_grid, "changed", G_CALLBACK(form_changed), self);
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

gboolean fm_lsi_panel_set_param(FmLsiPanel *panel, const char *key, const char *text)
{
    return fm_param_form_set_value(FM_PARAM_FORM(panel->param_grid), key, text);
}

fm_backend fm_lsi_panel_get_backend(FmLsiPanel *panel)
{
    return fm_backend_combo_get(panel->backend_combo);
}

void fm_lsi_panel_set_backend(FmLsiPanel *panel, const char *backend)
{
    fm_backend_combo_set(panel->backend_combo, backend);
}
