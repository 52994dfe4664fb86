/* FmDcePanel: the DCE perfusion panel: ROI role assignment, a checklist of what is still
 * missing, input curves from and to CSV, the schema-generated parameters of dce.dual_input,
 * backend, Run with progress and Cancel. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/method.h"

G_BEGIN_DECLS

#define FM_TYPE_DCE_PANEL (fm_dce_panel_get_type())
G_DECLARE_FINAL_TYPE(FmDcePanel, fm_dce_panel, FM, DCE_PANEL, GtkBox)

/* The role choices of the per-ROI combo, NULL-terminated ("" = none). */
extern const char *const fm_dce_panel_roles[];
/* A role as the user reads it ("portal_vein" -> "Portal vein"; NULL or "" -> "No role"). */
const char *fm_dce_panel_role_title(const char *role);

GtkWidget *fm_dce_panel_new(void);
const fm_method *fm_dce_panel_get_method(FmDcePanel *panel);
/* Shows a perfusion model (dce.dual_input, dce.tofts, ...; its form, checklist and roles) as
 * the model combo would; FALSE for a method the page does not offer (dce.t1_vfa). */
gboolean fm_dce_panel_select_method(FmDcePanel *panel, const char *method_id);
fm_params *fm_dce_panel_get_params(FmDcePanel *panel, GError **error);
/* Sets a parameter as the CLI would take it; FALSE when the form lacks key. */
gboolean fm_dce_panel_set_param(FmDcePanel *panel, const char *key, const char *text);
fm_backend fm_dce_panel_get_backend(FmDcePanel *panel);
void fm_dce_panel_set_backend(FmDcePanel *panel, const char *backend);

/* Every ROI of the dataset (fm_roi*, borrowed: the combos write roi->role) and the slice on
 * show; rebuilds the role list and the checklist. */
void fm_dce_panel_set_rois(FmDcePanel *panel, GPtrArray *rois, int slice);
/* Sets the role of the index-th ROI as its combo would ("" or NULL = none). */
void fm_dce_panel_set_role(FmDcePanel *panel, guint index, const char *role);
/* What is still missing before Run, one sentence ("Draw the portal-vein ROI …"), or NULL. */
const char *fm_dce_panel_get_missing(FmDcePanel *panel);

/* The Run fit button (borrowed), for tests of what is on screen. */
GtkWidget *fm_dce_panel_get_run_button(FmDcePanel *panel);

/* Run state: progress in 0..1 with a line of text; running FALSE hides the bar. */
void fm_dce_panel_set_running(FmDcePanel *panel, gboolean running);
void fm_dce_panel_set_progress(FmDcePanel *panel, double fraction, const char *text);

/* Signals: "roles-changed" (): a combo changed an ROI's role; "params-changed" (): a parameter
 * was edited; "backend-changed" (const char *name); "method-changed" (): another model was chosen
 * (followed by "params-changed"). */

G_END_DECLS
