/* FmLsiPanel: method choice, parameter form generated from the schema, backend, Run/Cancel. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/method.h"

G_BEGIN_DECLS

#define FM_TYPE_LSI_PANEL (fm_lsi_panel_get_type())
G_DECLARE_FINAL_TYPE(FmLsiPanel, fm_lsi_panel, FM, LSI_PANEL, GtkBox)

/* Lists the registered methods of family (e.g. "lsi"). */
GtkWidget *fm_lsi_panel_new(const char *family);
const fm_method *fm_lsi_panel_get_method(FmLsiPanel *panel);
gboolean fm_lsi_panel_set_method(FmLsiPanel *panel, const char *method_id);
/* Parameters of `method` (NULL: the selected one) from the form, where keys match; keys the
 * form lacks keep their defaults. NULL with error when a value is out of range. */
fm_params *fm_lsi_panel_get_params(FmLsiPanel *panel, const fm_method *method, GError **error);
/* Sets the form's editor of key from text as the CLI takes it; FALSE when the form lacks key. */
gboolean fm_lsi_panel_set_param(FmLsiPanel *panel, const char *key, const char *text);
fm_backend fm_lsi_panel_get_backend(FmLsiPanel *panel);
/* "auto", "cpu" or "cuda". */
void fm_lsi_panel_set_backend(FmLsiPanel *panel, const char *backend);
const char *fm_lsi_panel_backend_name(fm_backend backend);

/* Signals: "backend-changed" (const char *name); "params-changed" (const char *key, NULL when
 * the form was rebuilt for another method). */

G_END_DECLS
