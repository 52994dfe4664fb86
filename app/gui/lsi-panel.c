/* FmLsiPanel: builds its parameter form from the method's fm_param_spec, so adding a parameter
 * to a method needs no GUI change. */
#include "lsi-panel.h"

#include <glib/gi18n.h>
#include <math.h>

struct _FmLsiPanel {
    GtkBox parent_instance;
    char *family;
    GtkWidget *method_combo;
    GtkWidget *description_label;
    GtkWidget *param_grid;
    GtkWidget *backend_combo;
    GHashTable *editors; /* key -> widget of the current form (borrowed) */
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

/* Schema ranges may be unbounded; GtkAdjustment needs finite limits. */
static double finite_limit(double v, double fallback)
{
    return isfinite(v) && fabs(v) < 1e9 ? v : fallback;
}

static GtkWidget *editor_for_spec(const fm_param_spec *spec)
{
    GtkWidget *w = NULL;
    switch (spec->type) {
    case FM_PARAM_INT: {
        double lo = finite_limit(spec->min, -1e9), hi = finite_limit(spec->max, 1e9);
        /* Odd-only windows step by two so the arrows never offer an invalid size. */
        w = gtk_spin_button_new_with_range(lo, hi, spec->odd_only ? 2 : 1);
        gtk_spin_button_set_digits(GTK_SPIN_BUTTON(w), 0);
        gtk_spin_button_set_value(GTK_SPIN_BUTTON(w), spec->default_value);
        break;
    }
    case FM_PARAM_DOUBLE: {
        double lo = finite_limit(spec->min, -1e9), hi = finite_limit(spec->max, 1e9);
        double step = hi - lo > 100 ? 1.0 : hi - lo > 1 ? 0.1 : 0.001;
        w = gtk_spin_button_new_with_range(lo, hi, step);
        gtk_spin_button_set_digits(GTK_SPIN_BUTTON(w), 3);
        gtk_spin_button_set_value(GTK_SPIN_BUTTON(w), spec->default_value);
        break;
    }
    case FM_PARAM_ENUM:
        w = gtk_combo_box_text_new();
        for (int i = 0; spec->choices != NULL && spec->choices[i] != NULL; i++)
            gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(w), spec->choices[i], spec->choices[i]);
        if (spec->default_choice != NULL)
            gtk_combo_box_set_active_id(GTK_COMBO_BOX(w), spec->default_choice);
        break;
    case FM_PARAM_BOOL:
        w = gtk_check_button_new();
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(w), spec->default_value != 0);
        break;
    }
    if (w != NULL && GTK_IS_SPIN_BUTTON(w)) {
        gtk_spin_button_set_numeric(GTK_SPIN_BUTTON(w), TRUE);
        gtk_entry_set_width_chars(GTK_ENTRY(w), 8);
    }
    return w;
}

static void rebuild_form(FmLsiPanel *self)
{
    GList *children = gtk_container_get_children(GTK_CONTAINER(self->param_grid));
    for (GList *l = children; l != NULL; l = l->next)
        gtk_widget_destroy(GTK_WIDGET(l->data));
    g_list_free(children);
    g_hash_table_remove_all(self->editors);

    const fm_method *m = self->method;
    gtk_label_set_text(GTK_LABEL(self->description_label),
                       m != NULL && m->description != NULL ? _(m->description) : "");
    if (m == NULL)
        return;
    for (int i = 0; i < m->n_params; i++) {
        const fm_param_spec *spec = &m->params[i];
        GtkWidget *label = gtk_label_new(spec->title != NULL ? _(spec->title) : spec->key);
        gtk_label_set_xalign(GTK_LABEL(label), 1.0);
        gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
        GtkWidget *editor = editor_for_spec(spec);
        gtk_widget_set_hexpand(editor, TRUE);
        if (spec->type == FM_PARAM_BOOL)
            gtk_widget_set_halign(editor, GTK_ALIGN_START);
        GtkWidget *unit = gtk_label_new(spec->unit != NULL ? spec->unit : "");
        gtk_label_set_xalign(GTK_LABEL(unit), 0.0);
        gtk_style_context_add_class(gtk_widget_get_style_context(unit), "dim-label");
        if (spec->help != NULL) {
            gtk_widget_set_tooltip_text(label, _(spec->help));
            gtk_widget_set_tooltip_text(editor, _(spec->help));
        }
        gtk_widget_set_name(editor, spec->key);
        gtk_grid_attach(GTK_GRID(self->param_grid), label, 0, i, 1, 1);
        gtk_grid_attach(GTK_GRID(self->param_grid), editor, 1, i, 1, 1);
        gtk_grid_attach(GTK_GRID(self->param_grid), unit, 2, i, 1, 1);
        g_hash_table_insert(self->editors, (gpointer)spec->key, editor);
    }
    gtk_widget_show_all(self->param_grid);
}

static void method_changed(GtkComboBox *combo, FmLsiPanel *self)
{
    const char *id = gtk_combo_box_get_active_id(combo);
    self->method = id != NULL ? fm_method_find(id) : NULL;
    rebuild_form(self);
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
    g_hash_table_unref(self->editors);
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
    self->editors = g_hash_table_new(g_str_hash, g_str_equal);

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
    self->param_grid = gtk_grid_new();
    gtk_grid_set_row_spacing(GTK_GRID(self->param_grid), 6);
    gtk_grid_set_column_spacing(GTK_GRID(self->param_grid), 8);
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

static char *editor_text(GtkWidget *w)
{
    if (GTK_IS_SPIN_BUTTON(w)) {
        GtkSpinButton *spin = GTK_SPIN_BUTTON(w);
        gtk_spin_button_update(spin);
        if (gtk_spin_button_get_digits(spin) == 0)
            return g_strdup_printf("%d", gtk_spin_button_get_value_as_int(spin));
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup(g_ascii_dtostr(buf, sizeof buf, gtk_spin_button_get_value(spin)));
    }
    if (GTK_IS_COMBO_BOX(w))
        return g_strdup(gtk_combo_box_get_active_id(GTK_COMBO_BOX(w)));
    return NULL;
}

fm_params *fm_lsi_panel_get_params(FmLsiPanel *panel, const fm_method *method, GError **error)
{
    if (method == NULL)
        method = panel->method;
    if (method == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("No method is selected."));
        return NULL;
    }
    g_autoptr(fm_params) params = fm_method_default_params(method);
    for (int i = 0; i < method->n_params; i++) {
        const char *key = method->params[i].key;
        GtkWidget *w = g_hash_table_lookup(panel->editors, key);
        if (w == NULL)
            continue;
        if (GTK_IS_CHECK_BUTTON(w)) {
            double on = gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(w)) ? 1.0 : 0.0;
            if (!fm_params_set_double(params, key, on, error))
                return NULL;
            continue;
        }
        g_autofree char *text = editor_text(w);
        if (text != NULL && !fm_params_set_from_string(params, key, text, error))
            return NULL;
    }
    return g_steal_pointer(&params);
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
