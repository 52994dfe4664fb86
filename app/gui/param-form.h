/* FmParamForm: a parameter form generated from a method's fm_param_spec schema (shared by the
 * family panels), with a file chooser button for FM_PARAM_STRING parameters such as irf_file. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/method.h"

G_BEGIN_DECLS

#define FM_TYPE_PARAM_FORM (fm_param_form_get_type())
G_DECLARE_FINAL_TYPE(FmParamForm, fm_param_form, FM, PARAM_FORM, GtkGrid)

GtkWidget *fm_param_form_new(void);
/* Rebuilds the form for method (NULL empties it). Values typed for keys the new method shares
 * with the old one are kept, so switching methods does not lose the user's fit range. */
void fm_param_form_set_method(FmParamForm *form, const fm_method *method);
/* Parameters of `method` (NULL: the form's) from the form where keys match; keys the form lacks
 * keep their defaults. NULL with error when a value is out of range. */
fm_params *fm_param_form_get_params(FmParamForm *form, const fm_method *method, GError **error);
/* Sets the editor of key from text as the CLI would take it; FALSE when the form lacks key. */
gboolean fm_param_form_set_value(FmParamForm *form, const char *key, const char *text);

/* Signals: "changed" (const char *key): an editor's value changed, or (key NULL) the form was
 * rebuilt for another method. */

G_END_DECLS
