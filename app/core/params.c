/* Parameter values for a schema: strict parsing, range checks, text and JSON forms. */
#include "params.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "error.h"
#include "json_text.h"

struct fm_params {
    const fm_param_spec *specs; /* static schema of a method; not owned */
    int n_specs;
    double *values; /* INT, DOUBLE, BOOL */
    char **choices; /* ENUM, STRING: owned copy of the text, else NULL */
    char *owner;    /* method id for messages, or NULL */
};

const char *fm_param_type_name(fm_param_type type)
{
    switch (type) {
    case FM_PARAM_INT:
        return "int";
    case FM_PARAM_DOUBLE:
        return "double";
    case FM_PARAM_ENUM:
        return "enum";
    case FM_PARAM_BOOL:
        return "bool";
    case FM_PARAM_STRING:
        return "string";
    }
    return "unknown";
}

fm_params *fm_params_new(const fm_param_spec *specs, int n_specs)
{
    fm_params *p = g_new0(fm_params, 1);
    p->specs = specs;
    p->n_specs = n_specs;
    p->values = g_new0(double, MAX(n_specs, 1));
    p->choices = g_new0(char *, MAX(n_specs, 1));
    for (int i = 0; i < n_specs; i++) {
        p->values[i] = specs[i].default_value;
        if (specs[i].type == FM_PARAM_ENUM)
            p->choices[i] =
                g_strdup(specs[i].default_choice ? specs[i].default_choice
                                                 : (specs[i].choices ? specs[i].choices[0] : ""));
        else if (specs[i].type == FM_PARAM_STRING)
            p->choices[i] = g_strdup(specs[i].default_choice ? specs[i].default_choice : "");
    }
    return p;
}

fm_params *fm_params_copy(const fm_params *params)
{
    fm_params *p = fm_params_new(params->specs, params->n_specs);
    for (int i = 0; i < params->n_specs; i++) {
        p->values[i] = params->values[i];
        g_free(p->choices[i]);
        p->choices[i] = g_strdup(params->choices[i]);
    }
    p->owner = g_strdup(params->owner);
    return p;
}

void fm_params_free(fm_params *params)
{
    if (params == NULL)
        return;
    for (int i = 0; i < params->n_specs; i++)
        g_free(params->choices[i]);
    g_free(params->choices);
    g_free(params->values);
    g_free(params->owner);
    g_free(params);
}

void fm_params_set_owner(fm_params *params, const char *owner)
{
    g_free(params->owner);
    params->owner = g_strdup(owner);
}

const fm_param_spec *fm_params_specs(const fm_params *params, int *n_specs)
{
    if (n_specs)
        *n_specs = params->n_specs;
    return params->specs;
}

static int find_index(const fm_params *params, const char *key)
{
    for (int i = 0; i < params->n_specs; i++)
        if (g_strcmp0(params->specs[i].key, key) == 0)
            return i;
    return -1;
}

gboolean fm_params_has(const fm_params *params, const char *key)
{
    return find_index(params, key) >= 0;
}

static int find_or_error(const fm_params *params, const char *key, GError **error)
{
    int i = find_index(params, key);
    if (i < 0) {
        if (params->owner)
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("unknown parameter '%s' for %s"),
                        key, params->owner);
        else
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("unknown parameter '%s'"), key);
    }
    return i;
}

static char *format_number(double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.15g", v);
    if (g_ascii_strtod(buf, NULL) != v)
        g_ascii_formatd(buf, sizeof buf, "%.17g", v);
    return g_strdup(buf);
}

/* Range and odd checks shared by every setter; shown is the value as the user wrote it. */
static gboolean check_and_store(fm_params *params, int i, double v, const char *shown,
                                GError **error)
{
    const fm_param_spec *s = &params->specs[i];
    if (!isfinite(v)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: %s is not a finite number"), s->key,
                    shown);
        return FALSE;
    }
    if (s->type == FM_PARAM_INT || s->type == FM_PARAM_DOUBLE) {
        if (s->type == FM_PARAM_INT && v != floor(v)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: %s is not an integer"), s->key,
                        shown);
            return FALSE;
        }
        if (v < s->min || v > s->max) {
            g_autofree char *lo = format_number(s->min);
            g_autofree char *hi = format_number(s->max);
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: %s is outside %s..%s%s%s"),
                        s->key, shown, lo, hi, s->unit ? " " : "", s->unit ? s->unit : "");
            return FALSE;
        }
        if (s->type == FM_PARAM_INT && s->odd_only && fmod(fabs(v), 2.0) != 1.0) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: %s is not odd"), s->key, shown);
            return FALSE;
        }
    } else if (s->type == FM_PARAM_BOOL && v != 0.0 && v != 1.0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: %s is not true or false"), s->key,
                    shown);
        return FALSE;
    }
    params->values[i] = v;
    return TRUE;
}

static gboolean set_choice(fm_params *params, int i, const char *text, GError **error)
{
    const fm_param_spec *s = &params->specs[i];
    for (int c = 0; s->choices && s->choices[c]; c++) {
        if (strcmp(s->choices[c], text) == 0) {
            g_free(params->choices[i]);
            params->choices[i] = g_strdup(text);
            return TRUE;
        }
    }
    g_autofree char *list = s->choices ? g_strjoinv(", ", (char **)s->choices) : g_strdup("");
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: '%s' is not one of %s"), s->key, text,
                list);
    return FALSE;
}

gboolean fm_params_set_from_string(fm_params *params, const char *key, const char *text,
                                   GError **error)
{
    int i = find_or_error(params, key, error);
    if (i < 0)
        return FALSE;
    const fm_param_spec *s = &params->specs[i];
    if (text == NULL)
        text = "";
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    char *end = NULL;
    if (s->auto_at_min && (s->type == FM_PARAM_INT || s->type == FM_PARAM_DOUBLE) &&
        g_ascii_strcasecmp(trimmed, "auto") == 0)
        return check_and_store(params, i, s->min, trimmed, error);
    switch (s->type) {
    case FM_PARAM_ENUM:
        return set_choice(params, i, trimmed, error);
    case FM_PARAM_STRING:
        /* free text (a path): kept as typed but for surrounding blanks */
        g_free(params->choices[i]);
        params->choices[i] = g_steal_pointer(&trimmed);
        return TRUE;
    case FM_PARAM_BOOL: {
        static const char *const yes[] = {"1", "true", "yes", "on", NULL};
        static const char *const no[] = {"0", "false", "no", "off", NULL};
        for (int k = 0; yes[k]; k++)
            if (g_ascii_strcasecmp(trimmed, yes[k]) == 0)
                return check_and_store(params, i, 1.0, trimmed, error);
        for (int k = 0; no[k]; k++)
            if (g_ascii_strcasecmp(trimmed, no[k]) == 0)
                return check_and_store(params, i, 0.0, trimmed, error);
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: '%s' is not true or false"), s->key,
                    trimmed);
        return FALSE;
    }
    case FM_PARAM_INT: {
        errno = 0;
        gint64 v = g_ascii_strtoll(trimmed, &end, 10);
        if (*trimmed != '\0' && end != NULL && *end != '\0' && errno == 0 &&
            strpbrk(trimmed, "eE") != NULL) {
            /* "1e11": a whole number in exponent form, as large counts are written */
            char *d_end = NULL;
            double d = g_ascii_strtod(trimmed, &d_end);
            if (*d_end == '\0' && isfinite(d) && d == floor(d) && fabs(d) < 9.2e18) {
                v = (gint64)d;
                end = d_end;
            }
        }
        if (*trimmed == '\0' || end == NULL || *end != '\0' || errno == ERANGE) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: '%s' is not an integer"),
                        s->key, trimmed);
            return FALSE;
        }
        return check_and_store(params, i, (double)v, trimmed, error);
    }
    case FM_PARAM_DOUBLE: {
        errno = 0;
        double v = g_ascii_strtod(trimmed, &end);
        if (*trimmed == '\0' || end == NULL || *end != '\0' || errno == ERANGE || !isfinite(v)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: '%s' is not a number"), s->key,
                        trimmed);
            return FALSE;
        }
        return check_and_store(params, i, v, trimmed, error);
    }
    }
    return FALSE;
}

gboolean fm_params_set_double(fm_params *params, const char *key, double value, GError **error)
{
    int i = find_or_error(params, key, error);
    if (i < 0)
        return FALSE;
    if (params->specs[i].type == FM_PARAM_ENUM) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: expects one of its choices"), key);
        return FALSE;
    }
    if (params->specs[i].type == FM_PARAM_STRING) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: expects text, not a number"), key);
        return FALSE;
    }
    g_autofree char *shown = format_number(value);
    return check_and_store(params, i, value, shown, error);
}

int fm_params_get_int(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, 0);
    return (int)params->values[i];
}

gint64 fm_params_get_int64(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, 0);
    return (gint64)params->values[i];
}

double fm_params_get_double(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, NAN);
    return params->values[i];
}

gboolean fm_params_get_bool(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, FALSE);
    return params->values[i] != 0.0;
}

const char *fm_params_get_choice(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, NULL);
    return params->choices[i];
}

const char *fm_params_get_string(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, "");
    g_return_val_if_fail(params->specs[i].type == FM_PARAM_STRING, "");
    return params->choices[i] ? params->choices[i] : "";
}

char *fm_params_to_string(const fm_params *params, const char *key)
{
    int i = find_index(params, key);
    g_return_val_if_fail(i >= 0, NULL);
    switch (params->specs[i].type) {
    case FM_PARAM_INT:
        return g_strdup_printf("%" G_GINT64_FORMAT, (gint64)params->values[i]);
    case FM_PARAM_DOUBLE:
        return format_number(params->values[i]);
    case FM_PARAM_BOOL:
        return g_strdup(params->values[i] != 0.0 ? "true" : "false");
    case FM_PARAM_ENUM:
    case FM_PARAM_STRING:
        return g_strdup(params->choices[i] ? params->choices[i] : "");
    }
    return NULL;
}

char *fm_params_to_json(const fm_params *params)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    for (int i = 0; i < params->n_specs; i++) {
        const fm_param_spec *s = &params->specs[i];
        double v = params->values[i];
        json_builder_set_member_name(b, s->key);
        switch (s->type) {
        case FM_PARAM_INT:
            json_builder_add_int_value(b, (gint64)v);
            break;
        case FM_PARAM_DOUBLE:
            /* Whole numbers as integers ("exposure_ms":10), the way a person writes them. */
            if (v == floor(v) && fabs(v) < 1e15)
                json_builder_add_int_value(b, (gint64)v);
            else
                json_builder_add_double_value(b, v);
            break;
        case FM_PARAM_BOOL:
            json_builder_add_boolean_value(b, v != 0.0);
            break;
        case FM_PARAM_ENUM:
        case FM_PARAM_STRING:
            json_builder_add_string_value(b, params->choices[i] ? params->choices[i] : "");
            break;
        }
    }
    json_builder_end_object(b);
    return fm_json_builder_to_text(b, FALSE);
}

/* Applies one JSON member to params; values are checked exactly as typed ones are. */
static gboolean set_from_node(fm_params *params, const char *key, JsonNode *node, GError **error)
{
    int i = find_or_error(params, key, error);
    if (i < 0)
        return FALSE;
    const fm_param_spec *s = &params->specs[i];
    GType vt = JSON_NODE_HOLDS_VALUE(node) ? json_node_get_value_type(node) : G_TYPE_INVALID;
    if (s->type == FM_PARAM_ENUM && vt == G_TYPE_STRING)
        return set_choice(params, i, json_node_get_string(node), error);
    if (s->type == FM_PARAM_STRING) {
        if (vt != G_TYPE_STRING) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: expected a JSON string value"),
                        key);
            return FALSE;
        }
        g_free(params->choices[i]);
        params->choices[i] = g_strdup(json_node_get_string(node));
        return TRUE;
    }
    double v;
    if (s->type != FM_PARAM_ENUM && vt == G_TYPE_INT64) {
        v = (double)json_node_get_int(node);
    } else if (s->type != FM_PARAM_ENUM && vt == G_TYPE_DOUBLE) {
        v = json_node_get_double(node);
    } else if (s->type == FM_PARAM_BOOL && vt == G_TYPE_BOOLEAN) {
        v = json_node_get_boolean(node) ? 1.0 : 0.0;
    } else {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: expected a JSON %s value"), key,
                    fm_param_type_name(s->type));
        return FALSE;
    }
    g_autofree char *shown = format_number(v);
    return check_and_store(params, i, v, shown, error);
}

gboolean fm_params_set_from_json(fm_params *params, const char *json, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    GError *local = NULL;
    if (!json_parser_load_from_data(parser, json, -1, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("parameters: invalid JSON: %s"),
                    local->message);
        g_error_free(local);
        return FALSE;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("parameters: expected a JSON object"));
        return FALSE;
    }
    /* Work on a copy so a bad member leaves params untouched. */
    g_autoptr(fm_params) work = fm_params_copy(params);
    JsonObject *obj = json_node_get_object(root);
    g_autoptr(GList) members = json_object_get_members(obj);
    for (GList *l = members; l; l = l->next) {
        const char *key = l->data;
        if (!set_from_node(work, key, json_object_get_member(obj, key), error))
            return FALSE;
    }
    for (int i = 0; i < params->n_specs; i++) {
        params->values[i] = work->values[i];
        g_free(params->choices[i]);
        params->choices[i] = g_strdup(work->choices[i]);
    }
    return TRUE;
}
