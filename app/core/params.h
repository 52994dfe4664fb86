/* Parameter schema and values: one schema drives GUI forms, CLI flags and catalogue JSON. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    FM_PARAM_INT = 0,
    FM_PARAM_DOUBLE,
    FM_PARAM_ENUM,  /* one of choices[], stored as the choice string */
    FM_PARAM_BOOL,
    FM_PARAM_STRING, /* free text such as a file path (IRF file); default in default_choice */
} fm_param_type;

typedef struct {
    const char *key;           /* "window", "exposure_ms" */
    fm_param_type type;
    const char *title;         /* short label for the GUI, marked N_() */
    double default_value;      /* INT, DOUBLE, BOOL (0/1) */
    const char *default_choice;/* ENUM */
    double min, max;           /* inclusive range for INT and DOUBLE */
    const char *unit;          /* "px", "ms", "frames" or NULL */
    const char *help;          /* one sentence, marked N_() */
    const char *const *choices;/* ENUM: NULL-terminated */
    gboolean odd_only;         /* INT that must be odd (window sizes) */
    gboolean auto_at_min;      /* INT, DOUBLE: min means "chosen from the data"; the text "auto"
                                  sets it and forms show it as "auto" */
} fm_param_spec;

const char *fm_param_type_name(fm_param_type type); /* "int", "double", "enum", "bool" */

/* Values for one schema. */
typedef struct fm_params fm_params;

fm_params *fm_params_new(const fm_param_spec *specs, int n_specs); /* all defaults */
fm_params *fm_params_copy(const fm_params *params);
void fm_params_free(fm_params *params);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_params, fm_params_free)

/* Parses and range-checks text for key; error FM_ERROR_BAD_PARAM names key, value and range. */
gboolean fm_params_set_from_string(fm_params *params, const char *key, const char *text,
                                   GError **error);
gboolean fm_params_set_double(fm_params *params, const char *key, double value, GError **error);
int fm_params_get_int(const fm_params *params, const char *key);
/* An INT whose range passes int's (exact to 2^53: photon counts). */
gint64 fm_params_get_int64(const fm_params *params, const char *key);
double fm_params_get_double(const fm_params *params, const char *key);
gboolean fm_params_get_bool(const fm_params *params, const char *key);
const char *fm_params_get_choice(const fm_params *params, const char *key);
/* FM_PARAM_STRING value ("" when unset). */
const char *fm_params_get_string(const fm_params *params, const char *key);
/* Value as the text a user would type ("5", "10", "valid"). g_free it. */
char *fm_params_to_string(const fm_params *params, const char *key);
const fm_param_spec *fm_params_specs(const fm_params *params, int *n_specs);
/* TRUE when key is in the schema the values belong to. */
gboolean fm_params_has(const fm_params *params, const char *key);
/* Names the method the values belong to, so "unknown parameter 'foo' for lsi.spatial" can say
 * whose; fm_method_default_params sets it. (Addition to the original interface.) */
void fm_params_set_owner(fm_params *params, const char *owner);

/* {"window":5,"exposure_ms":10,"border":"valid"} in schema order; g_free it. */
char *fm_params_to_json(const fm_params *params);
gboolean fm_params_set_from_json(fm_params *params, const char *json, GError **error);

G_END_DECLS
