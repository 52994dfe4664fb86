/* FmFlimPanel: lists the registered "flim" methods with a one-line summary of their assumptions
 * and cost (after Wu et al., J. Biomed. Opt. 21(1) 017001, 2016), and builds the parameter form
 * from the selected method's schema. */
#include "flim-panel.h"

#include <glib/gi18n.h>

#include "app/gui/panel-util.h"
#include "app/gui/param-form.h"

struct _FmFlimPanel {
    GtkBox parent_instance;
    GtkWidget *method_list, *description_label, *form, *backend_combo, *whole_radio, *roi_radio;
    const fm_method *method;
};

G_DEFINE_TYPE(FmFlimPanel, fm_flim_panel, GTK_TYPE_BOX)

enum { SIGNAL_BACKEND_CHANGED, SIGNAL_PARAMS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const struct {
    const char *id, *summary;
} summaries[] = {
    {"flim.iem", N_("Mono-exponential, no IRF; one pass over the decay: fastest.")},
    {"flim.cmm", N_("Mono-exponential, no IRF; centre of mass with window correction: fastest.")},
    {"flim.rld", N_("Mono-exponential, no IRF; two gates only: fastest, least precise.")},
    {"flim.phasor", N_("Model-free g, s (calibrate with a reference); one pass: fastest.")},
    {"flim.bcmm1", N_("Bi-exponential with τD known, no IRF; moments only: fast.")},
    {"flim.bcmm2", N_("Bi-exponential, τD unknown, no IRF; higher moments: fast, noisier.")},
    {"flim.lsm", N_("Weighted least squares, mono or bi, IRF and background: iterative.")},
    {"flim.mle", N_("Poisson likelihood, best at low counts, mono or bi, IRF: iterative.")},
    {"flim.ga", N_("Global fit: lifetimes shared per segment, for few photons: iterative.")},
};

const char *fm_flim_method_summary(const fm_method *m)
{
    for (gsize i = 0; m != NULL && i < G_N_ELEMENTS(summaries); i++)
        if (g_strcmp0(m->id, summaries[i].id) == 0)
            return _(summaries[i].summary);
    return m != NULL && m->title != NULL ? _(m->title) : "";
}

static GtkWidget *method_row(const fm_method *m)
{
    GtkWidget *row = gtk_list_box_row_new();
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 1);
    g_object_set(box, "margin-start", 6, "margin-end", 6, "margin-top", 3, "margin-bottom", 3,
                 NULL);
    g_autofree char *markup = g_markup_printf_escaped(
        "<b>%s</b> <span alpha='55%%' size='small'>%s</span>", _(m->title), m->id + 5);
    GtkWidget *title = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(title), markup);
    gtk_label_set_xalign(GTK_LABEL(title), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(title), PANGO_ELLIPSIZE_END);
    GtkWidget *summary = gtk_label_new(fm_flim_method_summary(m));
    gtk_label_set_xalign(GTK_LABEL(summary), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(summary), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(summary), 38);
    gtk_style_context_add_class(gtk_widget_get_style_context(summary), "dim-label");
    gtk_style_context_add_class(gtk_widget_get_style_context(summary), "fm-method-summary");
    gtk_box_pack_start(GTK_BOX(box), title, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(box), summary, FALSE, FALSE, 0);
    gtk_container_add(GTK_CONTAINER(row), box);
    g_object_set_data(G_OBJECT(row), "fm-method", (gpointer)m);
    gtk_widget_set_tooltip_text(row, m->description != NULL ? _(m->description) : NULL);
    return row;
}

static void row_selected(GtkListBox *list, GtkListBoxRow *row, FmFlimPanel *self)
{
    self->method = row != NULL ? g_object_get_data(G_OBJECT(row), "fm-method") : NULL;
    fm_panel_show_method(self->description_label, self->form, self->method);
}

static void backend_changed(GtkComboBox *combo, FmFlimPanel *self)
{
    g_signal_emit(self, signals[SIGNAL_BACKEND_CHANGED], 0,
                  fm_backend_combo_get_id(GTK_WIDGET(combo)));
}

static void form_changed(FmParamForm *form, const char *key, FmFlimPanel *self)
{
    (void)form;
    g_signal_emit(self, signals[SIGNAL_PARAMS_CHANGED], 0, key);
}

static void fm_flim_panel_class_init(FmFlimPanelClass *klass)
{
    signals[SIGNAL_PARAMS_CHANGED] =
        g_signal_new("params-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
    signals[SIGNAL_BACKEND_CHANGED] =
        g_signal_new("backend-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void fm_flim_panel_init(FmFlimPanel *self)
{
    GtkBox *box = GTK_BOX(self);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(box, 6);
    g_object_set(self, "margin", 10, NULL);

    gtk_box_pack_start(box, fm_panel_heading(_("FLUORESCENCE LIFETIME")), FALSE, FALSE, 0);
    self->method_list = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->method_list), GTK_SELECTION_BROWSE);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->method_list), "frame");
    int n = 0;
    const fm_method *const *all = fm_methods_all(&n);
    for (int i = 0; i < n; i++)
        if (g_strcmp0(all[i]->family, "flim") == 0)
            gtk_container_add(GTK_CONTAINER(self->method_list), method_row(all[i]));
    if (n == 0 || gtk_list_box_get_row_at_index(GTK_LIST_BOX(self->method_list), 0) == NULL) {
        GtkWidget *none = gtk_label_new(_("No FLIM methods are registered in this build."));
        gtk_list_box_set_placeholder(GTK_LIST_BOX(self->method_list), none);
        gtk_widget_show(none);
    }
    gtk_box_pack_start(box, self->method_list, FALSE, FALSE, 0);
    self->description_label = gtk_label_new("");
    gtk_label_set_line_wrap(GTK_LABEL(self->description_label), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(self->description_label), 36);
    gtk_label_set_xalign(GTK_LABEL(self->description_label), 0.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->description_label), "dim-label");
    gtk_box_pack_start(box, self->description_label, FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_panel_heading(_("PARAMETERS")), FALSE, FALSE, 0);
    self->form = fm_param_form_new();
    gtk_box_pack_start(box, self->form, FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_panel_heading(_("RUN ON")), FALSE, FALSE, 0);
    GtkWidget *scope = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
    gtk_style_context_add_class(gtk_widget_get_style_context(scope), "linked");
    self->whole_radio = gtk_radio_button_new_with_label(NULL, _("Whole image"));
    self->roi_radio = gtk_radio_button_new_with_label_from_widget(
        GTK_RADIO_BUTTON(self->whole_radio), _("Drawn ROIs"));
    gtk_widget_set_tooltip_text(self->roi_radio,
                                _("Fit only the pixels inside the ROIs drawn on the map"));
    for (int i = 0; i < 2; i++) {
        GtkWidget *r = i == 0 ? self->whole_radio : self->roi_radio;
        gtk_toggle_button_set_mode(GTK_TOGGLE_BUTTON(r), FALSE);
        gtk_box_pack_start(GTK_BOX(scope), r, TRUE, TRUE, 0);
    }
    gtk_box_pack_start(box, scope, FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_panel_heading(_("COMPUTE")), FALSE, FALSE, 0);
    self->backend_combo = fm_backend_combo_new();
    gtk_box_pack_start(box, fm_backend_grid_new(self->backend_combo), FALSE, FALSE, 0);

    gtk_box_pack_start(box, fm_run_cancel_row_new(), FALSE, FALSE, 0);
    GtkWidget *compare = fm_panel_action_button(_("Compare _Methods…"), "win.flim-compare", NULL);
    gtk_widget_set_tooltip_text(compare, _("Run several methods on the same data and show their "
                                           "maps side by side with run times and accuracy"));
    gtk_box_pack_start(box, compare, FALSE, FALSE, 0);

    g_signal_connect(self->form, "changed", G_CALLBACK(form_changed), self);
    g_signal_connect(self->method_list, "row-selected", G_CALLBACK(row_selected), self);
    g_signal_connect(self->backend_combo, "changed", G_CALLBACK(backend_changed), self);
}

GtkWidget *fm_flim_panel_new(void)
{
    FmFlimPanel *self = g_object_new(FM_TYPE_FLIM_PANEL, NULL);
    GtkListBoxRow *first = gtk_list_box_get_row_at_index(GTK_LIST_BOX(self->method_list), 0);
    if (first != NULL)
        gtk_list_box_select_row(GTK_LIST_BOX(self->method_list), first);
    gtk_widget_show_all(GTK_WIDGET(self));
    return GTK_WIDGET(self);
}

const fm_method *fm_flim_panel_get_method(FmFlimPanel *panel)
{
    return panel->method;
}

gboolean fm_flim_panel_set_method(FmFlimPanel *panel, const char *method_id)
{
    for (int i = 0;; i++) {
        GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(panel->method_list), i);
        if (row == NULL)
            return FALSE;
        const fm_method *m = g_object_get_data(G_OBJECT(row), "fm-method");
        if (g_strcmp0(m->id, method_id) == 0) {
            gtk_list_box_select_row(GTK_LIST_BOX(panel->method_list), row);
            return TRUE;
        }
    }
}

fm_params *fm_flim_panel_get_params(FmFlimPanel *panel, const fm_method *method, GError **error)
{
    return fm_param_form_get_params(FM_PARAM_FORM(panel->form), method, error);
}

gboolean fm_flim_panel_set_param(FmFlimPanel *panel, const char *key, const char *text)
{
    return fm_param_form_set_value(FM_PARAM_FORM(panel->form), key, text);
}

fm_backend fm_flim_panel_get_backend(FmFlimPanel *panel)
{
    return fm_backend_combo_get(panel->backend_combo);
}

void fm_flim_panel_set_backend(FmFlimPanel *panel, const char *backend)
{
    fm_backend_combo_set(panel->backend_combo, backend);
}

gboolean fm_flim_panel_get_use_rois(FmFlimPanel *panel)
{
    return gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(panel->roi_radio));
}

void fm_flim_panel_set_use_rois(FmFlimPanel *panel, gboolean use_rois)
{
    gtk_toggle_button_set_active(
        GTK_TOGGLE_BUTTON(use_rois ? panel->roi_radio : panel->whole_radio), TRUE);
}
