/* Parameters in words, from the schema's titles and units: for the catalogue's tooltips, the
 * compare windows' headers and Compare Methods' cards. */
#include "params_text.h"

#include <glib/gi18n.h>
#include <string.h>

#include "error.h"
#include "method.h"

static const fm_param_spec *find_spec(const fm_params *params, const char *key)
{
    int n = 0;
    const fm_param_spec *specs = fm_params_specs(params, &n);
    for (int i = 0; i < n; i++)
        if (g_strcmp0(specs[i].key, key) == 0)
            return &specs[i];
    return NULL;
}

/* The bare value, without unit: "auto" where the schema lets the minimum mean it. */
static char *bare_value(const fm_params *params, const fm_param_spec *s)
{
    switch (s->type) {
    case FM_PARAM_BOOL:
        return g_strdup(fm_params_get_bool(params, s->key) ? _("on") : _("off"));
    case FM_PARAM_STRING: {
        const char *v = fm_params_get_string(params, s->key);
        return v != NULL && *v != '\0' ? g_path_get_basename(v) : g_strdup(_("none"));
    }
    case FM_PARAM_INT:
    case FM_PARAM_DOUBLE:
        if (s->auto_at_min && fm_params_get_double(params, s->key) <= s->min)
            return g_strdup(_("auto"));
        break;
    case FM_PARAM_ENUM:
        break;
    }
    return fm_params_to_string(params, s->key);
}

static gboolean shows_unit(const fm_params *params, const fm_param_spec *s)
{
    if (s->unit == NULL || *s->unit == '\0' || g_strcmp0(s->unit, "1") == 0)
        return FALSE;
    if (s->type != FM_PARAM_INT && s->type != FM_PARAM_DOUBLE)
        return FALSE;
    return !(s->auto_at_min && fm_params_get_double(params, s->key) <= s->min);
}

char *fm_params_value_text(const fm_params *params, const char *key)
{
    const fm_param_spec *s = find_spec(params, key);
    if (s == NULL)
        return NULL;
    g_autofree char *v = bare_value(params, s);
    return shows_unit(params, s) ? g_strdup_printf("%s %s", v, s->unit) : g_strdup(v);
}

static gboolean at_default(const fm_params *params, const fm_param_spec *s)
{
    switch (s->type) {
    case FM_PARAM_ENUM:
    case FM_PARAM_STRING:
        return g_strcmp0(s->type == FM_PARAM_ENUM ? fm_params_get_choice(params, s->key)
                                                  : fm_params_get_string(params, s->key),
                         s->default_choice != NULL ? s->default_choice : "") == 0;
    default:
        return fm_params_get_double(params, s->key) == s->default_value;
    }
}

char *fm_params_describe(const fm_params *params, const char *const *always)
{
    GString *text = g_string_new(NULL);
    int n = 0;
    const fm_param_spec *specs = fm_params_specs(params, &n);
    for (int i = 0; i < n; i++) {
        const fm_param_spec *s = &specs[i];
        if (at_default(params, s) && (always == NULL || !g_strv_contains(always, s->key)))
            continue;
        g_autofree char *v = fm_params_value_text(params, s->key);
        g_string_append_printf(text, "%s%s: %s", text->len > 0 ? " · " : "", _(s->title), v);
    }
    return g_string_free(text, FALSE);
}

static fm_params *params_of_run(const char *method_id, const char *json, GError **error)
{
    const fm_method *m = fm_method_find(method_id);
    if (m == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("unknown method %s"), method_id);
        return NULL;
    }
    g_autoptr(fm_params) params = fm_method_default_params(m);
    if (json != NULL && *json != '\0' && !fm_params_set_from_json(params, json, error))
        return NULL;
    return g_steal_pointer(&params);
}

/* "5 → 7 px" with one unit when both sides have the same one, else each with its own. */
static char *change_text(const fm_params *a, const fm_param_spec *sa, const fm_params *b,
                         const fm_param_spec *sb)
{
    g_autofree char *va = bare_value(a, sa), *vb = bare_value(b, sb);
    gboolean ua = shows_unit(a, sa), ub = shows_unit(b, sb);
    if (ua && ub && g_strcmp0(sa->unit, sb->unit) == 0)
        return g_strdup_printf("%s → %s %s", va, vb, sb->unit);
    g_autofree char *ta = ua ? g_strdup_printf("%s %s", va, sa->unit) : g_strdup(va);
    g_autofree char *tb = ub ? g_strdup_printf("%s %s", vb, sb->unit) : g_strdup(vb);
    return g_strdup_printf("%s → %s", ta, tb);
}

static void add_only(GPtrArray *differ, const fm_params *p, const fm_param_spec *s,
                     const char *side)
{
    g_autofree char *v = fm_params_value_text(p, s->key);
    g_ptr_array_add(differ, g_strdup_printf(_("%s: %s (%s only)"), _(s->title), v, side));
}

gboolean fm_params_compare_runs(const char *method_a, const char *json_a, const char *method_b,
                                const char *json_b, GPtrArray **differ, GPtrArray **same,
                                GError **error)
{
    g_autoptr(fm_params) a = params_of_run(method_a, json_a, error);
    if (a == NULL)
        return FALSE;
    g_autoptr(fm_params) b = params_of_run(method_b, json_b, error);
    if (b == NULL)
        return FALSE;
    *differ = g_ptr_array_new_with_free_func(g_free);
    *same = g_ptr_array_new_with_free_func(g_free);
    int na = 0, nb = 0;
    const fm_param_spec *sa = fm_params_specs(a, &na), *sb = fm_params_specs(b, &nb);
    for (int i = 0; i < na; i++) {
        const fm_param_spec *other = find_spec(b, sa[i].key);
        if (other == NULL) {
            add_only(*differ, a, &sa[i], "A");
            continue;
        }
        g_autofree char *ta = fm_params_value_text(a, sa[i].key);
        g_autofree char *tb = fm_params_value_text(b, sa[i].key);
        g_autofree char *raw_a = fm_params_to_string(a, sa[i].key);
        g_autofree char *raw_b = fm_params_to_string(b, sa[i].key);
        if (g_strcmp0(raw_a, raw_b) == 0) {
            g_ptr_array_add(*same, g_strdup_printf("%s: %s", _(sa[i].title), ta));
        } else {
            g_autofree char *change = change_text(a, &sa[i], b, other);
            g_ptr_array_add(*differ, g_strdup_printf("%s: %s", _(sa[i].title), change));
        }
    }
    for (int j = 0; j < nb; j++)
        if (find_spec(a, sb[j].key) == NULL)
            add_only(*differ, b, &sb[j], "B");
    return TRUE;
}
