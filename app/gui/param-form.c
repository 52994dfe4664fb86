/* FmParamForm: builds one row per fm_param_spec (label, editor, unit) so adding a parameter to a
 * method needs no GUI change; remembers typed values across methods that share a key. */
#include "param-form.h"

#include <glib/gi18n.h>
#include <math.h>

struct _FmParamForm {
    GtkGrid parent_instance;
    const fm_method *method;
    GHashTable *editors;    /* key -> editor widget of the current form (borrowed) */
    GHashTable *remembered; /* key -> text last seen in an editor (owned strings) */
};

G_DEFINE_TYPE(FmParamForm, fm_param_form, GTK_TYPE_GRID)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Spin buttons of parameters whose minimum means "chosen from the data" show that as "auto"
 * and take "auto" typed in. */
static gboolean auto_output(GtkSpinButton *spin, gpointer user)
{
    (void)user;
    GtkAdjustment *adj = gtk_spin_button_get_adjustment(spin);
    if (gtk_adjustment_get_value(adj) > gtk_adjustment_get_lower(adj))
        return FALSE;
    if (g_strcmp0(gtk_entry_get_text(GTK_ENTRY(spin)), _("auto")) != 0)
        gtk_entry_set_text(GTK_ENTRY(spin), _("auto"));
    return TRUE;
}

static gint auto_input(GtkSpinButton *spin, gdouble *new_value, gpointer user)
{
    (void)user;
    const char *text = gtk_entry_get_text(GTK_ENTRY(spin));
    if (g_ascii_strcasecmp(text, "auto") != 0 && g_strcmp0(text, _("auto")) != 0)
        return FALSE;
    *new_value = gtk_adjustment_get_lower(gtk_spin_button_get_adjustment(spin));
    return TRUE;
}

static void editor_changed(GtkWidget *editor, FmParamForm *self)
{
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0, gtk_widget_get_name(editor));
}

/* Schema ranges may be unbounded; GtkAdjustment needs finite limits. */
static double finite_limit(double v, double fallback)
{
    return isfinite(v) && fabs(v) < 1e9 ? v : fallback;
}

static void choose_file_clicked(GtkButton *button, GtkEntry *entry)
{
    GtkWidget *top = gtk_widget_get_toplevel(GTK_WIDGET(button));
    GtkFileChooserNative *dialog =
        gtk_file_chooser_native_new(_("Choose File"), GTK_IS_WINDOW(top) ? GTK_WINDOW(top) : NULL,
                                    GTK_FILE_CHOOSER_ACTION_OPEN, _("_Choose"), _("_Cancel"));
    const char *current = gtk_entry_get_text(entry);
    if (current[0] != '\0')
        gtk_file_chooser_set_filename(GTK_FILE_CHOOSER(dialog), current);
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(dialog)) == GTK_RESPONSE_ACCEPT) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(dialog));
        if (path != NULL)
            gtk_entry_set_text(entry, path);
    }
    g_object_unref(dialog);
}

/* The widget that holds the value (for STRING the entry inside the row box). */
static GtkWidget *editor_for_spec(const fm_param_spec *spec, GtkWidget **row_out)
{
    GtkWidget *w = NULL;
    *row_out = NULL;
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
        if (spec->default_value != 0 && fabs(spec->default_value) < 1e-3) {
            /* Tolerances like 1e-11: a spin button shows 3 decimals, reads "0.000" back and
             * ignores changes under 1e-10, so the value is typed as text ("1e-11"). */
            w = gtk_entry_new();
            gtk_entry_set_width_chars(GTK_ENTRY(w), 8);
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            gtk_entry_set_text(GTK_ENTRY(w),
                               g_ascii_formatd(buf, sizeof buf, "%g", spec->default_value));
            break;
        }
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
    case FM_PARAM_STRING: {
        w = gtk_entry_new();
        gtk_entry_set_width_chars(GTK_ENTRY(w), 8);
        gtk_entry_set_placeholder_text(GTK_ENTRY(w), _("none"));
        if (spec->default_choice != NULL)
            gtk_entry_set_text(GTK_ENTRY(w), spec->default_choice);
        GtkWidget *button =
            gtk_button_new_from_icon_name("document-open-symbolic", GTK_ICON_SIZE_BUTTON);
        gtk_widget_set_tooltip_text(button, _("Choose a file"));
        g_signal_connect(button, "clicked", G_CALLBACK(choose_file_clicked), w);
        GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
        gtk_style_context_add_class(gtk_widget_get_style_context(row), "linked");
        gtk_box_pack_start(GTK_BOX(row), w, TRUE, TRUE, 0);
        gtk_box_pack_start(GTK_BOX(row), button, FALSE, FALSE, 0);
        *row_out = row;
        break;
    }
    }
    if (w != NULL && GTK_IS_SPIN_BUTTON(w)) {
        /* numeric spins refuse letters, so "auto" could not be typed */
        gtk_spin_button_set_numeric(GTK_SPIN_BUTTON(w), !spec->auto_at_min);
        gtk_entry_set_width_chars(GTK_ENTRY(w), 8);
        if (spec->auto_at_min) {
            g_signal_connect(w, "output", G_CALLBACK(auto_output), NULL);
            g_signal_connect(w, "input", G_CALLBACK(auto_input), NULL);
            gtk_spin_button_update(GTK_SPIN_BUTTON(w));
            auto_output(GTK_SPIN_BUTTON(w), NULL);
        }
    }
    if (*row_out == NULL)
        *row_out = w;
    return w;
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
    if (GTK_IS_CHECK_BUTTON(w))
        return g_strdup(gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(w)) ? "1" : "0");
    if (GTK_IS_COMBO_BOX(w))
        return g_strdup(gtk_combo_box_get_active_id(GTK_COMBO_BOX(w)));
    if (GTK_IS_ENTRY(w))
        return g_strdup(gtk_entry_get_text(GTK_ENTRY(w)));
    return NULL;
}

static void set_editor_text(GtkWidget *w, const char *text)
{
    if (GTK_IS_SPIN_BUTTON(w) && g_ascii_strcasecmp(text, "auto") == 0)
        gtk_spin_button_set_value(
            GTK_SPIN_BUTTON(w),
            gtk_adjustment_get_lower(gtk_spin_button_get_adjustment(GTK_SPIN_BUTTON(w))));
    else if (GTK_IS_SPIN_BUTTON(w))
        gtk_spin_button_set_value(GTK_SPIN_BUTTON(w), g_ascii_strtod(text, NULL));
    else if (GTK_IS_CHECK_BUTTON(w))
        gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(w),
                                     g_strcmp0(text, "1") == 0 || g_strcmp0(text, "true") == 0);
    else if (GTK_IS_COMBO_BOX(w))
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(w), text);
    else if (GTK_IS_ENTRY(w))
        gtk_entry_set_text(GTK_ENTRY(w), text);
}

static void remember_values(FmParamForm *self)
{
    GHashTableIter it;
    gpointer key, editor;
    g_hash_table_iter_init(&it, self->editors);
    while (g_hash_table_iter_next(&it, &key, &editor)) {
        char *text = editor_text(editor);
        if (text != NULL)
            g_hash_table_replace(self->remembered, g_strdup(key), text);
    }
}

void fm_param_form_set_method(FmParamForm *self, const fm_method *m)
{
    remember_values(self);
    GList *children = gtk_container_get_children(GTK_CONTAINER(self));
    for (GList *l = children; l != NULL; l = l->next)
        gtk_widget_destroy(GTK_WIDGET(l->data));
    g_list_free(children);
    g_hash_table_remove_all(self->editors);
    self->method = m;
    if (m == NULL)
        return;
    for (int i = 0; i < m->n_params; i++) {
        const fm_param_spec *spec = &m->params[i];
        GtkWidget *label = gtk_label_new(spec->title != NULL ? _(spec->title) : spec->key);
        gtk_label_set_xalign(GTK_LABEL(label), 1.0);
        /* a long name ("Wavelength polynomial") takes two lines in a narrow pane, not "Wavel…" */
        gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
        gtk_label_set_line_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
        gtk_label_set_justify(GTK_LABEL(label), GTK_JUSTIFY_RIGHT);
        gtk_label_set_max_width_chars(GTK_LABEL(label), 14);
        gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
        GtkWidget *row = NULL;
        GtkWidget *editor = editor_for_spec(spec, &row);
        gtk_widget_set_hexpand(row, TRUE);
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
        const char *kept = g_hash_table_lookup(self->remembered, spec->key);
        if (kept != NULL)
            set_editor_text(editor, kept);
        if (GTK_IS_SPIN_BUTTON(editor))
            g_signal_connect(editor, "value-changed", G_CALLBACK(editor_changed), self);
        else if (GTK_IS_TOGGLE_BUTTON(editor))
            g_signal_connect(editor, "toggled", G_CALLBACK(editor_changed), self);
        else if (GTK_IS_COMBO_BOX(editor) || GTK_IS_ENTRY(editor))
            g_signal_connect(editor, "changed", G_CALLBACK(editor_changed), self);
        gtk_grid_attach(GTK_GRID(self), label, 0, i, 1, 1);
        gtk_grid_attach(GTK_GRID(self), row, 1, i, 1, 1);
        gtk_grid_attach(GTK_GRID(self), unit, 2, i, 1, 1);
        g_hash_table_insert(self->editors, (gpointer)spec->key, editor);
    }
    gtk_widget_show_all(GTK_WIDGET(self));
    g_signal_emit(self, signals[SIGNAL_CHANGED], 0, NULL);
}

fm_params *fm_param_form_get_params(FmParamForm *self, const fm_method *method, GError **error)
{
    if (method == NULL)
        method = self->method;
    if (method == NULL) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("No method is selected."));
        return NULL;
    }
    g_autoptr(fm_params) params = fm_method_default_params(method);
    for (int i = 0; i < method->n_params; i++) {
        const fm_param_spec *spec = &method->params[i];
        GtkWidget *w = g_hash_table_lookup(self->editors, spec->key);
        g_autofree char *text = w != NULL ? editor_text(w) : NULL;
        /* Another method's form may hold the key under a different type: skip it then. */
        const fm_param_spec *shown = NULL;
        for (int j = 0; self->method != NULL && j < self->method->n_params; j++)
            if (g_strcmp0(self->method->params[j].key, spec->key) == 0)
                shown = &self->method->params[j];
        if (text == NULL || shown == NULL || shown->type != spec->type)
            continue;
        if (spec->type == FM_PARAM_BOOL) {
            if (!fm_params_set_double(params, spec->key, g_strcmp0(text, "1") == 0, error))
                return NULL;
        } else if (!fm_params_set_from_string(params, spec->key, text, error)) {
            return NULL;
        }
    }
    return g_steal_pointer(&params);
}

gboolean fm_param_form_set_value(FmParamForm *self, const char *key, const char *text)
{
    GtkWidget *w = g_hash_table_lookup(self->editors, key);
    if (w == NULL)
        return FALSE;
    set_editor_text(w, text);
    return TRUE;
}

static void fm_param_form_finalize(GObject *object)
{
    FmParamForm *self = FM_PARAM_FORM(object);
    g_hash_table_unref(self->editors);
    g_hash_table_unref(self->remembered);
    G_OBJECT_CLASS(fm_param_form_parent_class)->finalize(object);
}

static void fm_param_form_class_init(FmParamFormClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_param_form_finalize;
    signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                           0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void fm_param_form_init(FmParamForm *self)
{
    self->editors = g_hash_table_new(g_str_hash, g_str_equal);
    self->remembered = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    gtk_grid_set_row_spacing(GTK_GRID(self), 6);
    gtk_grid_set_column_spacing(GTK_GRID(self), 8);
}

GtkWidget *fm_param_form_new(void)
{
    return g_object_new(FM_TYPE_PARAM_FORM, NULL);
}
