/* FmFlimPanel: the FLIM family panel: method list with what each assumes and costs, the
 * schema-generated parameter form, scope (whole image or drawn ROIs), backend, Run and Compare. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/method.h"

G_BEGIN_DECLS

#define FM_TYPE_FLIM_PANEL (fm_flim_panel_get_type())
G_DECLARE_FINAL_TYPE(FmFlimPanel, fm_flim_panel, FM, FLIM_PANEL, GtkBox)

GtkWidget *fm_flim_panel_new(void);
const fm_method *fm_flim_panel_get_method(FmFlimPanel *panel);
gboolean fm_flim_panel_set_method(FmFlimPanel *panel, const char *method_id);
/* Parameters of method (NULL: the selected one) from the form where keys match. */
fm_params *fm_flim_panel_get_params(FmFlimPanel *panel, const fm_method *method, GError **error);
/* Sets the form's editor of key from text as the CLI takes it; FALSE when the form lacks key. */
gboolean fm_flim_panel_set_param(FmFlimPanel *panel, const char *key, const char *text);
fm_backend fm_flim_panel_get_backend(FmFlimPanel *panel);
void fm_flim_panel_set_backend(FmFlimPanel *panel, const char *backend);
/* TRUE when the user chose to run on the drawn ROIs only. */
gboolean fm_flim_panel_get_use_rois(FmFlimPanel *panel);
void fm_flim_panel_set_use_rois(FmFlimPanel *panel, gboolean use_rois);
/* One line on what the method assumes and what it costs. */
const char *fm_flim_method_summary(const fm_method *method);

/* Signals: "backend-changed" (const char *name); "params-changed" (const char *key, NULL when
 * the form was rebuilt for another method). */

G_END_DECLS
