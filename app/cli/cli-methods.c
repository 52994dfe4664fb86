/* `fluxmap-cli methods`: every registered method with its parameter schema and outputs. */
#include <glib/gi18n.h>
#include <stdio.h>

#include "app/cli/cli.h"
#include "app/core/method.h"

static const fm_cli_option options[] = {{"json", FALSE}, {"help", FALSE}};

/* A range bound: an integer for int parameters, a number for doubles, null for the rest. */
static void add_bound(JsonBuilder *b, const char *name, const fm_param_spec *spec, double value)
{
    json_builder_set_member_name(b, name);
    if (spec->type == FM_PARAM_INT)
        json_builder_add_int_value(b, (gint64)value);
    else if (spec->type == FM_PARAM_DOUBLE)
        json_builder_add_double_value(b, value);
    else
        json_builder_add_null_value(b);
}

static void add_param_json(JsonBuilder *b, const fm_param_spec *spec)
{
    json_builder_begin_object(b);
    fm_cli_json_member_string(b, "name", spec->key);
    fm_cli_json_member_string(b, "type", fm_param_type_name(spec->type));
    json_builder_set_member_name(b, "default");
    switch (spec->type) {
    case FM_PARAM_INT:
        json_builder_add_int_value(b, (gint64)spec->default_value);
        break;
    case FM_PARAM_DOUBLE:
        json_builder_add_double_value(b, spec->default_value);
        break;
    case FM_PARAM_BOOL:
        json_builder_add_boolean_value(b, spec->default_value != 0.0);
        break;
    case FM_PARAM_ENUM:
    case FM_PARAM_STRING:
        json_builder_add_string_value(b, spec->default_choice ? spec->default_choice : "");
        break;
    }
    add_bound(b, "min", spec, spec->min);
    add_bound(b, "max", spec, spec->max);
    fm_cli_json_member_string(b, "unit", spec->unit);
    fm_cli_json_member_string(b, "help", spec->help ? _(spec->help) : "");
    if (spec->type == FM_PARAM_INT) {
        json_builder_set_member_name(b, "odd_only");
        json_builder_add_boolean_value(b, spec->odd_only);
    }
    if (spec->type == FM_PARAM_ENUM && spec->choices) {
        json_builder_set_member_name(b, "choices");
        json_builder_begin_array(b);
        for (int c = 0; spec->choices[c]; c++)
            json_builder_add_string_value(b, spec->choices[c]);
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
}

static void print_json(const fm_method *const *methods, int n)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "methods");
    json_builder_begin_array(b);
    for (int i = 0; i < n; i++) {
        const fm_method *m = methods[i];
        json_builder_begin_object(b);
        fm_cli_json_member_string(b, "id", m->id);
        fm_cli_json_member_string(b, "family", m->family);
        fm_cli_json_member_string(b, "title", _(m->title));
        fm_cli_json_member_string(b, "description", m->description ? _(m->description) : "");
        json_builder_set_member_name(b, "params");
        json_builder_begin_array(b);
        for (int p = 0; p < m->n_params; p++)
            add_param_json(b, &m->params[p]);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "outputs");
        json_builder_begin_array(b);
        for (int o = 0; o < m->n_outputs; o++) {
            json_builder_begin_object(b);
            fm_cli_json_member_string(b, "name", m->outputs[o].name);
            json_builder_set_member_name(b, "unit");
            json_builder_add_string_value(b, m->outputs[o].unit);
            fm_cli_json_member_string(b, "title", _(m->outputs[o].title));
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    fm_cli_json_print(b);
}

static void print_text(const fm_method *const *methods, int n)
{
    for (int i = 0; i < n; i++) {
        const fm_method *m = methods[i];
        printf("%s  %s\n", m->id, _(m->title));
        for (int p = 0; p < m->n_params; p++) {
            const fm_param_spec *s = &m->params[p];
            g_autofree char *range = NULL;
            if (s->type == FM_PARAM_ENUM && s->choices) {
                g_autofree char *joined = g_strjoinv("|", (char **)s->choices);
                range = g_strdup_printf("%s, default %s", joined, s->default_choice);
            } else if (s->auto_at_min && s->default_value <= s->min) {
                /* the minimum means "chosen from the data" */
                range = g_strdup_printf("auto or %g..%g%s%s, default auto", MAX(s->min, 0.0),
                                        s->max, s->unit ? " " : "", s->unit ? s->unit : "");
            } else if (s->type == FM_PARAM_INT || s->type == FM_PARAM_DOUBLE) {
                range =
                    g_strdup_printf("%g..%g%s%s, default %g", s->min, s->max, s->unit ? " " : "",
                                    s->unit ? s->unit : "", s->default_value);
            } else if (s->type == FM_PARAM_STRING) {
                /* free text (a file path): its default, or none */
                range = g_strdup_printf("default %s", s->default_choice && *s->default_choice
                                                          ? s->default_choice
                                                          : "none");
            } else {
                range = g_strdup_printf("default %s", s->default_value != 0.0 ? "true" : "false");
            }
            printf("    --%-14s %-6s %s\n", s->key, fm_param_type_name(s->type), range);
            if (s->help)
                printf("    %-14s          %s\n", "", _(s->help));
        }
        for (int o = 0; o < m->n_outputs; o++)
            printf("    -> %s [%s]  %s\n", m->outputs[o].name, m->outputs[o].unit,
                   _(m->outputs[o].title));
        printf("\n");
    }
}

static void print_help(void)
{
    printf("%s", _("Usage: fluxmap-cli methods [--json]\n"
                   "Lists every registered method with its parameters (name, type, range, "
                   "unit, default) and output maps.\n"));
}

static int list_methods(const fm_cli_args *args)
{
    int n = 0;
    const fm_method *const *methods = fm_methods_all(&n);
    if (fm_cli_has(args, "json"))
        print_json(methods, n);
    else
        print_text(methods, n);
    return FM_EXIT_OK;
}

int fm_cli_methods(int argc, char **argv)
{
    return fm_cli_parse_and_run_options(argc, argv, "methods", options, G_N_ELEMENTS(options),
                                        print_help, list_methods);
}
