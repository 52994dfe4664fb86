/* FmDcePanel: the DCE perfusion panel: the model (dce.dual_input or a standard pharmacokinetic
 * model), ROI role assignment, a checklist of what that model still misses, input curves from
 * and to CSV, the schema-generated parameters of the model, backend, Run with progress and
 * Cancel. */
#include "dce-panel.h"

#include <glib/gi18n.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/pk_inputs.h"
#include "app/core/roi.h"
#include "app/gui/map-overlays.h"
#include "app/gui/panel-util.h"
#include "app/gui/param-form.h"

const char *const fm_dce_panel_roles[] = {"",
                                          FM_PK_ROLE_ARTERY,
                                          FM_PK_ROLE_TISSUE,
                                          FM_DCE_ROLE_AORTA,
                                          FM_DCE_ROLE_PORTAL_VEIN,
                                          FM_DCE_ROLE_LIVER,
                                          NULL};

/* The perfusion models the chooser offers, in the order of the issue's list; dce.t1_vfa is a
 * T1 map from other images, not a model of this series, and stays out. A blurb per model says
 * in one line what it fits (the registry's descriptions are paragraphs). */
static const struct {
    const char *id, *blurb;
} models[] = {
    {"dce.dual_input", N_("The dual-input liver model (Wang & Cao 2012) fitted voxel by voxel: "
                          "ka arterial, kp portal, kl outflow.")},
    {"dce.tofts", N_("Ktrans and ve in every voxel from one arterial input (Tofts 1999).")},
    {"dce.extended_tofts", N_("Tofts plus the plasma volume vp.")},
    {"dce.patlak", N_("Uptake without backflux: Ktrans and vp (Patlak 1983).")},
    {"dce.2cxm", N_("Two-compartment exchange: Fp, PS, ve and vp (Sourbron & Buckley 2012).")},
    {"dce.2cum", N_("Two-compartment uptake: Fp, PS and vp (Sourbron & Buckley 2012).")},
};
struct _FmDcePanel {
    GtkBox parent_instance;
    const fm_method *method;
    GtkWidget *model_combo, *blurb;
    GtkWidget *roi_list, *roi_hint, *check_box, *missing_label;
    GtkWidget *form, *expander, *backend_combo, *run_button, *cancel_button, *progress,
        *progress_label;
    GPtrArray *rois; /* its own list of the window's fm_roi* (the ROIs are borrowed) */
    /* One form per model, kept while the panel lives: each model keeps the values typed into
     * it, and one model's defaults (the liver's T10 0.8 s, enhancement) never pass for
     * another's choice, as one form carrying values across methods would make them. */
    GHashTable *forms; /* method id -> FmParamForm (referenced) */
    int slice;
    char *missing;
    guint params_idle;
    gboolean running;
};

G_DEFINE_FINAL_TYPE(FmDcePanel, fm_dce_panel, GTK_TYPE_BOX)

enum {
    SIGNAL_ROLES_CHANGED,
    SIGNAL_PARAMS_CHANGED,
    SIGNAL_BACKEND_CHANGED,
    SIGNAL_METHOD_CHANGED,
    N_SIGNALS
};
static guint signals[N_SIGNALS];

const char *fm_dce_panel_role_title(const char *role)
{
    if (g_strcmp0(role, FM_DCE_ROLE_AORTA) == 0)
        return _("Aorta");
    if (g_strcmp0(role, FM_DCE_ROLE_PORTAL_VEIN) == 0)
        return _("Portal vein");
    if (g_strcmp0(role, FM_DCE_ROLE_LIVER) == 0)
        return _("Liver");
    if (g_strcmp0(role, FM_PK_ROLE_ARTERY) == 0)
        return _("Artery");
    if (g_strcmp0(role, FM_PK_ROLE_TISSUE) == 0)
        return _("Tissue");
    return role && *role ? role : _("No role"); /* a role from elsewhere ("segment") as it is */
}

static gboolean has_role(FmDcePanel *self, const char *role)
{
    for (guint i = 0; self->rois && i < self->rois->len; i++)
        if (g_strcmp0(((fm_roi *)self->rois->pdata[i])->role, role) == 0)
            return TRUE;
    return FALSE;
}

static char *input_csv(FmDcePanel *self) /* g_free; "" when none */
{
    g_autoptr(fm_params) p = fm_param_form_get_params(FM_PARAM_FORM(self->form), NULL, NULL);
    return g_strdup(p ? fm_params_get_string(p, "input_csv") : "");
}

static void destroy_child(GtkWidget *child, gpointer user)
{
    gtk_widget_destroy(child);
}

static GtkWidget *check_row(gboolean done, gboolean optional, const char *text)
{
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *icon = gtk_image_new_from_icon_name(done       ? "emblem-ok-symbolic"
                                                   : optional ? "list-remove-symbolic"
                                                              : "dialog-warning-symbolic",
                                                   GTK_ICON_SIZE_MENU);
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_style_context_add_class(gtk_widget_get_style_context(row),
                                done ? "fm-check-done" : "fm-check-missing");
    if (done || optional)
        gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    gtk_box_pack_start(GTK_BOX(row), icon, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(row), label, TRUE, TRUE, 0);
    return row;
}

static gboolean is_liver_model(FmDcePanel *self)
{
    return self->method && g_strcmp0(self->method->id, "dce.dual_input") == 0;
}

static void add_check(FmDcePanel *self, gboolean done, gboolean optional, const char *text)
{
    gtk_box_pack_start(GTK_BOX(self->check_box), check_row(done, optional, text), FALSE, FALSE, 0);
}

/* The liver model's rule: aorta and portal vein unless a CSV gives the input curves; a liver
 * ROI is optional (without one a threshold picks the voxels). */
static void liver_checklist(FmDcePanel *self)
{
    g_autofree char *csv = input_csv(self);
    gboolean from_csv = *csv != '\0';
    gboolean aorta = has_role(self, FM_DCE_ROLE_AORTA);
    gboolean portal = has_role(self, FM_DCE_ROLE_PORTAL_VEIN);
    gboolean liver = has_role(self, FM_DCE_ROLE_LIVER);
    g_autofree char *base = from_csv ? g_path_get_basename(csv) : NULL;
    g_autofree char *csv_text = from_csv ? g_strdup_printf(_("Input curves from %s"), base) : NULL;
    if (from_csv) {
        add_check(self, TRUE, FALSE, csv_text);
    } else {
        add_check(self, aorta, FALSE, _("Aorta ROI: arterial input Ca"));
        add_check(self, portal, FALSE, _("Portal-vein ROI: portal input Cp"));
    }
    add_check(self, liver, TRUE,
              liver ? _("Liver ROI: its voxels are fitted")
                    : _("Liver ROI (optional): else voxels above the threshold"));
    if (!from_csv && !aorta && !portal)
        self->missing = g_strdup(_("Draw the aorta and portal-vein ROIs and set their roles, or "
                                   "load input curves from CSV."));
    else if (!from_csv && !aorta)
        self->missing = g_strdup(_("Draw the aorta ROI and set its role to aorta."));
    else if (!from_csv && !portal)
        self->missing = g_strdup(_("Draw the portal-vein ROI and set its role to portal vein."));
}

/* The standard models' rule (pk_inputs.c): one arterial input, from an ROI with the role
 * artery (aorta accepted), a CSV, or a population curve that needs no ROI; a tissue ROI is
 * optional and limits the fit. */
static void pk_checklist(FmDcePanel *self)
{
    g_autoptr(fm_params) p = fm_param_form_get_params(FM_PARAM_FORM(self->form), NULL, NULL);
    fm_pk_aif_kind kind = FM_PK_AIF_ROI;
    if (p)
        fm_pk_aif_parse(fm_params_get_choice(p, "aif"), &kind);
    g_autofree char *csv = input_csv(self);
    if (kind == FM_PK_AIF_ROI && *csv)
        kind = FM_PK_AIF_CSV; /* the file stands in for the ROI, as the method reads it */
    gboolean artery = has_role(self, FM_PK_ROLE_ARTERY) || has_role(self, FM_DCE_ROLE_AORTA);
    gboolean tissue = has_role(self, FM_PK_ROLE_TISSUE);
    g_autofree char *base = *csv ? g_path_get_basename(csv) : NULL;
    g_autofree char *csv_text = *csv ? g_strdup_printf(_("Arterial input from %s"), base) : NULL;
    switch (kind) {
    case FM_PK_AIF_ROI:
        add_check(self, artery, FALSE, _("Artery ROI: the arterial input"));
        if (!artery)
            self->missing = g_strdup(_("Draw an ROI in an artery and set its role to artery, or "
                                       "choose a population input (Arterial input: parker)."));
        break;
    case FM_PK_AIF_CSV:
        add_check(self, *csv != '\0', FALSE, *csv ? csv_text : _("Input curve file (t_s,ca,cp)"));
        if (!*csv)
            self->missing = g_strdup(_("Load the arterial input from CSV (Load inputs…)."));
        break;
    default:
        add_check(self, TRUE, FALSE,
                  kind == FM_PK_AIF_GEORGIOU
                      ? _("Georgiou population input, placed at the bolus arrival")
                      : _("Parker population input, placed at the bolus arrival"));
        break;
    }
    add_check(self, tissue, TRUE,
              tissue ? _("Tissue ROI: its voxels are fitted")
                     : _("Tissue ROI (optional): else the enhancing voxels"));
}

static void update_checklist(FmDcePanel *self)
{
    gtk_container_foreach(GTK_CONTAINER(self->check_box), destroy_child, NULL);
    g_clear_pointer(&self->missing, g_free);
    if (is_liver_model(self))
        liver_checklist(self);
    else
        pk_checklist(self);
    gtk_widget_show_all(self->check_box);
    g_autofree char *markup = self->missing
                                  ? g_markup_printf_escaped("<b>%s</b>", self->missing)
                                  : g_markup_printf_escaped("<b>%s</b>", _("Ready to fit."));
    gtk_label_set_markup(GTK_LABEL(self->missing_label), markup);
    gtk_widget_set_sensitive(self->run_button, self->missing == NULL && !self->running);
    /* Set here too: the button's action, once the panel is in the window, made it sensitive. */
    gtk_widget_set_sensitive(self->cancel_button, self->running);
}

static void role_combo_changed(GtkComboBox *combo, FmDcePanel *self)
{
    fm_roi *roi = g_object_get_data(G_OBJECT(combo), "fm-roi");
    const char *id = gtk_combo_box_get_active_id(combo);
    g_free(roi->role);
    roi->role = id && *id ? g_strdup(id) : NULL;
    update_checklist(self);
    g_signal_emit(self, signals[SIGNAL_ROLES_CHANGED], 0);
}

static GtkWidget *roi_row(FmDcePanel *self, fm_roi *roi, guint index)
{
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    g_object_set(row, "margin", 2, NULL);
    /* A swatch in the ROI's outline colour ties the row to the shape on the map. */
    const double *rgb = fm_map_roi_colour(index);
    g_autofree char *swatch =
        g_strdup_printf("<span foreground=\"#%02x%02x%02x\">●</span>", (int)(rgb[0] * 255),
                        (int)(rgb[1] * 255), (int)(rgb[2] * 255));
    GtkWidget *dot = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(dot), swatch);
    g_autofree char *where = roi->slice >= 0 ? g_strdup_printf(_("slice %d"), roi->slice + 1)
                                             : g_strdup(_("all slices"));
    g_autofree char *text = g_markup_printf_escaped(
        "%s <span size=\"small\" alpha=\"60%%\">%s</span>", roi->name ? roi->name : "", where);
    GtkWidget *name = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(name), text);
    gtk_label_set_xalign(GTK_LABEL(name), 0);
    gtk_label_set_ellipsize(GTK_LABEL(name), PANGO_ELLIPSIZE_END);
    GtkWidget *combo = gtk_combo_box_text_new();
    /* The model's own roles first; the other model's stay on offer below them. */
    static const char *const liver_order[] = {"",
                                              FM_DCE_ROLE_AORTA,
                                              FM_DCE_ROLE_PORTAL_VEIN,
                                              FM_DCE_ROLE_LIVER,
                                              FM_PK_ROLE_ARTERY,
                                              FM_PK_ROLE_TISSUE,
                                              NULL};
    const char *const *roles = is_liver_model(self) ? liver_order : fm_dce_panel_roles;
    for (int i = 0; roles[i]; i++)
        gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(combo), roles[i],
                                  fm_dce_panel_role_title(roles[i]));
    gboolean known = FALSE;
    for (int i = 0; roles[i]; i++)
        known = known || g_strcmp0(roi->role ? roi->role : "", roles[i]) == 0;
    if (!known) /* a role from elsewhere ("segment") stays visible and selected */
        gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(combo), roi->role, roi->role);
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), roi->role ? roi->role : "");
    g_object_set_data(G_OBJECT(combo), "fm-roi", roi);
    g_signal_connect(combo, "changed", G_CALLBACK(role_combo_changed), self);
    gtk_widget_set_tooltip_text(
        combo, is_liver_model(self) ? _("What this ROI is: the inputs come from the aorta and "
                                        "portal-vein ROIs, the liver ROI limits the fit")
                                    : _("What this ROI is: the arterial input comes from the "
                                        "artery ROI, a tissue ROI limits the fit"));
    gtk_box_pack_start(GTK_BOX(row), dot, FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(row), name, TRUE, TRUE, 0);
    gtk_box_pack_end(GTK_BOX(row), combo, FALSE, FALSE, 0);
    return row;
}

static void rebuild_roi_list(FmDcePanel *self)
{
    gtk_container_foreach(GTK_CONTAINER(self->roi_list), destroy_child, NULL);
    guint on_slice = 0;
    for (guint i = 0; self->rois && i < self->rois->len; i++) {
        fm_roi *roi = self->rois->pdata[i];
        gboolean visible = roi->slice < 0 || roi->slice == self->slice;
        /* Colours follow the map view, which numbers the ROIs of the slice on show. */
        GtkWidget *row = roi_row(self, roi, visible ? on_slice : 7);
        on_slice += visible;
        gtk_widget_set_opacity(row, visible ? 1.0 : 0.6);
        gtk_list_box_insert(GTK_LIST_BOX(self->roi_list), row, -1);
    }
    gtk_widget_set_visible(self->roi_hint, !self->rois || self->rois->len == 0);
    gtk_widget_show_all(self->roi_list);
}

/* ---- parameters -------------------------------------------------------------------------- */

static gboolean params_idle(gpointer user)
{
    FmDcePanel *self = user;
    self->params_idle = 0;
    update_checklist(self);
    g_signal_emit(self, signals[SIGNAL_PARAMS_CHANGED], 0);
    return G_SOURCE_REMOVE;
}

/* Edits arrive per keystroke; one idle coalesces them into a single "params-changed". */
static void editor_changed(GtkWidget *editor, FmDcePanel *self)
{
    if (self->params_idle == 0)
        self->params_idle = g_idle_add(params_idle, self);
}

static void watch_editors(GtkWidget *widget, gpointer user)
{
    if (GTK_IS_COMBO_BOX(widget) || GTK_IS_ENTRY(widget))
        g_signal_connect(widget, "changed", G_CALLBACK(editor_changed), user);
    else if (GTK_IS_TOGGLE_BUTTON(widget))
        g_signal_connect(widget, "toggled", G_CALLBACK(editor_changed), user);
    else if (GTK_IS_CONTAINER(widget))
        gtk_container_foreach(GTK_CONTAINER(widget), watch_editors, user);
}

static void backend_changed(GtkComboBox *combo, FmDcePanel *self)
{
    g_signal_emit(self, signals[SIGNAL_BACKEND_CHANGED], 0, gtk_combo_box_get_active_id(combo));
}

/* ---- model ------------------------------------------------------------------------------- */

static void show_method(FmDcePanel *self, const fm_method *method)
{
    self->method = method;
    GtkWidget *form = g_hash_table_lookup(self->forms, method->id);
    if (!form) {
        form = g_object_ref_sink(fm_param_form_new());
        fm_param_form_set_method(FM_PARAM_FORM(form), method);
        watch_editors(form, self);
        gtk_widget_show_all(form);
        g_hash_table_insert(self->forms, (gpointer)method->id, form);
    }
    if (self->form)
        gtk_container_remove(GTK_CONTAINER(self->expander), self->form);
    self->form = form;
    gtk_container_add(GTK_CONTAINER(self->expander), form);
    for (gsize i = 0; i < G_N_ELEMENTS(models); i++)
        if (g_strcmp0(models[i].id, method->id) == 0)
            gtk_label_set_text(GTK_LABEL(self->blurb), _(models[i].blurb));
    gtk_widget_set_tooltip_text(
        self->run_button, is_liver_model(self) ? _("Fit every liver voxel (Ctrl+R runs too)")
                                               : _("Fit every tissue voxel (Ctrl+R runs too)"));
    rebuild_roi_list(self); /* the model's roles first in each combo */
    update_checklist(self);
}

static void model_changed(GtkComboBox *combo, FmDcePanel *self)
{
    const fm_method *m = fm_method_find(gtk_combo_box_get_active_id(combo));
    if (!m || m == self->method)
        return;
    show_method(self, m);
    g_signal_emit(self, signals[SIGNAL_METHOD_CHANGED], 0);
    g_signal_emit(self, signals[SIGNAL_PARAMS_CHANGED], 0);
}

/* ---- construction ------------------------------------------------------------------------ */

static GtkWidget *heading(const char *text)
{
    GtkWidget *label = gtk_label_new(NULL);
    g_autofree char *markup = g_markup_printf_escaped("<b>%s</b>", text);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    g_object_set(label, "margin-top", 6, NULL);
    return label;
}

static GtkWidget *note(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(label), 40);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

static GtkWidget *action_button(const char *label, const char *action, const char *tooltip)
{
    GtkWidget *b = gtk_button_new_with_mnemonic(label);
    gtk_actionable_set_action_name(GTK_ACTIONABLE(b), action);
    gtk_widget_set_tooltip_text(b, tooltip);
    return b;
}

static void fm_dce_panel_dispose(GObject *object)
{
    FmDcePanel *self = FM_DCE_PANEL(object);
    if (self->params_idle) {
        g_source_remove(self->params_idle);
        self->params_idle = 0;
    }
    g_clear_pointer(&self->forms, g_hash_table_unref);
    G_OBJECT_CLASS(fm_dce_panel_parent_class)->dispose(object);
}

static void fm_dce_panel_finalize(GObject *object)
{
    g_free(FM_DCE_PANEL(object)->missing);
    g_ptr_array_unref(FM_DCE_PANEL(object)->rois);
    G_OBJECT_CLASS(fm_dce_panel_parent_class)->finalize(object);
}

static void fm_dce_panel_class_init(FmDcePanelClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_dce_panel_dispose;
    G_OBJECT_CLASS(klass)->finalize = fm_dce_panel_finalize;
    GType type = G_TYPE_FROM_CLASS(klass);
    signals[SIGNAL_ROLES_CHANGED] =
        g_signal_new("roles-changed", type, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_PARAMS_CHANGED] = g_signal_new("params-changed", type, G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_METHOD_CHANGED] = g_signal_new("method-changed", type, G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIGNAL_BACKEND_CHANGED] = g_signal_new("backend-changed", type, G_SIGNAL_RUN_LAST, 0,
                                                   NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void fm_dce_panel_init(FmDcePanel *self)
{
    GtkBox *box = GTK_BOX(self);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(box, 6);
    g_object_set(self, "margin", 10, NULL);
    self->rois = g_ptr_array_new();
    self->forms = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_object_unref);

    GtkWidget *title = gtk_label_new(NULL);
    g_autofree char *markup = g_markup_printf_escaped("<big><b>%s</b></big>", _("Perfusion model"));
    gtk_label_set_markup(GTK_LABEL(title), markup);
    gtk_label_set_xalign(GTK_LABEL(title), 0);
    gtk_box_pack_start(box, title, FALSE, FALSE, 0);
    self->model_combo = gtk_combo_box_text_new();
    for (gsize i = 0; i < G_N_ELEMENTS(models); i++) {
        const fm_method *m = fm_method_find(models[i].id);
        if (m)
            gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->model_combo), m->id, _(m->title));
    }
    gtk_widget_set_tooltip_text(self->model_combo,
                                _("The model fitted in every voxel; the checklist below says "
                                  "what it needs"));
    gtk_box_pack_start(box, self->model_combo, FALSE, FALSE, 0);
    self->blurb = note("");
    gtk_box_pack_start(box, self->blurb, FALSE, FALSE, 0);

    gtk_box_pack_start(box, heading(_("1  Input ROIs")), FALSE, FALSE, 0);
    self->roi_hint = note(_("Draw ROIs on the anatomy (tools below the map), then set each "
                            "one's role here."));
    gtk_box_pack_start(box, self->roi_hint, FALSE, FALSE, 0);
    self->roi_list = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->roi_list), GTK_SELECTION_NONE);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->roi_list), "frame");
    gtk_box_pack_start(box, self->roi_list, FALSE, FALSE, 0);

    gtk_box_pack_start(box, heading(_("2  Checklist")), FALSE, FALSE, 0);
    self->check_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 1);
    gtk_box_pack_start(box, self->check_box, FALSE, FALSE, 0);
    self->missing_label = gtk_label_new(NULL);
    gtk_label_set_xalign(GTK_LABEL(self->missing_label), 0);
    gtk_label_set_line_wrap(GTK_LABEL(self->missing_label), TRUE);
    gtk_label_set_max_width_chars(GTK_LABEL(self->missing_label), 40);
    gtk_box_pack_start(box, self->missing_label, FALSE, FALSE, 0);

    /* Run right under the checklist that says when it may be pressed: at 1366 x 768 the
     * options below would push it out of sight. */
    GtkWidget *run_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_set_homogeneous(GTK_BOX(run_row), TRUE);
    self->run_button =
        action_button(_("_Run fit"), "win.dce-run", _("Fit every liver voxel (Ctrl+R runs too)"));
    gtk_style_context_add_class(gtk_widget_get_style_context(self->run_button), "suggested-action");
    self->cancel_button = action_button(_("_Cancel"), "win.dce-cancel", _("Stop the fit"));
    gtk_box_pack_start(GTK_BOX(run_row), self->run_button, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(run_row), self->cancel_button, TRUE, TRUE, 0);
    gtk_box_pack_start(box, run_row, FALSE, FALSE, 0);
    self->progress = gtk_progress_bar_new();
    self->progress_label = note("");
    gtk_box_pack_start(box, self->progress, FALSE, FALSE, 0);
    gtk_box_pack_start(box, self->progress_label, FALSE, FALSE, 0);

    gtk_box_pack_start(box, heading(_("Options")), FALSE, FALSE, 0);
    GtkWidget *csv_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_set_homogeneous(GTK_BOX(csv_row), TRUE);
    gtk_box_pack_start(GTK_BOX(csv_row),
                       action_button(_("_Load inputs…"), "win.dce-load-inputs",
                                     _("Use input curves t_s,ca,cp from a CSV file instead of "
                                       "the aorta and portal-vein ROIs")),
                       TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(csv_row),
                       action_button(_("_Save inputs…"), "win.dce-save-inputs",
                                     _("Save the input curves on show as CSV t_s,ca,cp")),
                       TRUE, TRUE, 0);
    gtk_box_pack_start(box, csv_row, FALSE, FALSE, 0);
    GtkWidget *expander = gtk_expander_new(_("Fit parameters"));
    self->expander = expander;
    gtk_widget_set_tooltip_text(expander, _("Input, signal conversion, stopping rule"));
    gtk_box_pack_start(box, expander, FALSE, FALSE, 0);
    self->backend_combo = fm_backend_combo_new();
    g_signal_connect(self->backend_combo, "changed", G_CALLBACK(backend_changed), self);
    gtk_box_pack_start(box, fm_backend_grid_new(self->backend_combo), FALSE, FALSE, 0);
    gtk_widget_show_all(GTK_WIDGET(self));
    gtk_widget_set_no_show_all(self->progress, TRUE);
    gtk_widget_hide(self->progress);
    gtk_widget_set_sensitive(self->cancel_button, FALSE);
    g_signal_connect(self->model_combo, "changed", G_CALLBACK(model_changed), self);
    fm_dce_panel_select_method(self, "dce.dual_input");
}

/* ---- public API -------------------------------------------------------------------------- */

GtkWidget *fm_dce_panel_new(void)
{
    return g_object_new(FM_TYPE_DCE_PANEL, NULL);
}

const fm_method *fm_dce_panel_get_method(FmDcePanel *panel)
{
    return panel->method;
}

gboolean fm_dce_panel_select_method(FmDcePanel *panel, const char *method_id)
{
    const fm_method *m = fm_method_find(method_id);
    gboolean offered = FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(models); i++)
        offered = offered || (m && g_strcmp0(models[i].id, m->id) == 0);
    if (!offered)
        return FALSE;
    if (m == panel->method)
        return TRUE;
    /* the combo's handler shows the model's form and tells the page */
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(panel->model_combo), m->id);
    return TRUE;
}

fm_params *fm_dce_panel_get_params(FmDcePanel *panel, GError **error)
{
    return fm_param_form_get_params(FM_PARAM_FORM(panel->form), NULL, error);
}

gboolean fm_dce_panel_set_param(FmDcePanel *panel, const char *key, const char *text)
{
    gboolean ok = fm_param_form_set_value(FM_PARAM_FORM(panel->form), key, text);
    update_checklist(panel);
    return ok;
}

fm_backend fm_dce_panel_get_backend(FmDcePanel *panel)
{
    return fm_backend_combo_get(panel->backend_combo);
}

void fm_dce_panel_set_backend(FmDcePanel *panel, const char *backend)
{
    fm_backend_combo_set(panel->backend_combo, backend);
}

void fm_dce_panel_set_rois(FmDcePanel *panel, GPtrArray *rois, int slice)
{
    g_ptr_array_set_size(panel->rois, 0);
    for (guint i = 0; rois && i < rois->len; i++)
        g_ptr_array_add(panel->rois, rois->pdata[i]);
    panel->slice = slice;
    rebuild_roi_list(panel);
    update_checklist(panel);
}

void fm_dce_panel_set_role(FmDcePanel *panel, guint index, const char *role)
{
    GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(panel->roi_list), (int)index);
    g_return_if_fail(row != NULL);
    GtkWidget *box = gtk_bin_get_child(GTK_BIN(row));
    g_autoptr(GList) children = gtk_container_get_children(GTK_CONTAINER(box));
    for (GList *l = children; l; l = l->next)
        if (GTK_IS_COMBO_BOX(l->data))
            gtk_combo_box_set_active_id(GTK_COMBO_BOX(l->data), role ? role : "");
}

GtkWidget *fm_dce_panel_get_run_button(FmDcePanel *panel)
{
    return panel->run_button;
}

const char *fm_dce_panel_get_missing(FmDcePanel *panel)
{
    return panel->missing;
}

void fm_dce_panel_set_running(FmDcePanel *panel, gboolean running)
{
    panel->running = running;
    gtk_widget_set_visible(panel->progress, running);
    gtk_widget_set_sensitive(panel->cancel_button, running);
    if (running)
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(panel->progress), 0);
    update_checklist(panel);
}

void fm_dce_panel_set_progress(FmDcePanel *panel, double fraction, const char *text)
{
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(panel->progress), CLAMP(fraction, 0, 1));
    gtk_label_set_text(GTK_LABEL(panel->progress_label), text ? text : "");
}
