/* fluxmap-cli helpers: error to exit-code mapping, the option parser and JSON output. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/cli.h"
#include "app/core/error.h"
#include "app/core/json_text.h"

int fm_cli_fail(int code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_autofree char *text = g_strdup_vprintf(format, ap);
    va_end(ap);
    fprintf(stderr, "fluxmap-cli: %s\n", text);
    return code;
}

int fm_cli_exit_code(const GError *error)
{
    if (!error || error->domain != FM_ERROR)
        return FM_EXIT_INPUT; /* GLib/GIO file errors come from reading or writing files */
    switch ((FmErrorCode)error->code) {
    case FM_ERROR_BAD_PARAM:
        return FM_EXIT_USAGE;
    case FM_ERROR_BAD_INPUT:
    case FM_ERROR_IO:
    case FM_ERROR_CATALOGUE:
        return FM_EXIT_INPUT;
    case FM_ERROR_COMPUTE:
    case FM_ERROR_DEVICE:
    case FM_ERROR_CANCELLED:
    default:
        return FM_EXIT_COMPUTE;
    }
}

int fm_cli_fail_error(const GError *error)
{
    return fm_cli_fail(fm_cli_exit_code(error), "%s", error ? error->message : _("unknown error"));
}

void fm_cli_args_clear(fm_cli_args *args)
{
    g_clear_pointer(&args->options, g_hash_table_unref);
    g_clear_pointer(&args->positional, g_ptr_array_unref);
}

/* Looks a normalised name up; returns FALSE when unknown. */
static gboolean lookup(const char *name, const fm_cli_option *table, int n, GHashTable *extra,
                       gboolean *has_value)
{
    for (int i = 0; i < n; i++)
        if (strcmp(table[i].name, name) == 0) {
            *has_value = table[i].has_value;
            return TRUE;
        }
    gpointer value;
    if (extra && g_hash_table_lookup_extended(extra, name, NULL, &value)) {
        *has_value = GPOINTER_TO_INT(value);
        return TRUE;
    }
    return FALSE;
}

gboolean fm_cli_parse(int argc, char **argv, const fm_cli_option *table, int n, GHashTable *extra,
                      fm_cli_args *args, char **message)
{
    args->options = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    args->positional = g_ptr_array_new();
    gboolean only_positional = FALSE;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            g_ptr_array_add(args->positional, (gpointer)arg);
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = TRUE;
            continue;
        }
        g_autofree char *name = NULL;
        const char *value = NULL;
        if (arg[1] != '-') { /* short options: -o FILE, -oFILE, -h */
            if (arg[1] == 'o')
                name = g_strdup("output");
            else if (arg[1] == 'h' && arg[2] == '\0')
                name = g_strdup("help");
            else {
                *message = g_strdup_printf(_("unknown option '%s'"), arg);
                return FALSE;
            }
            if (arg[1] == 'o' && arg[2] != '\0')
                value = arg + 2;
        } else {
            const char *eq = strchr(arg + 2, '=');
            name = eq ? g_strndup(arg + 2, eq - (arg + 2)) : g_strdup(arg + 2);
            value = eq ? eq + 1 : NULL;
            g_strdelimit(name, "-", '_');
        }
        gboolean has_value = FALSE;
        if (!lookup(name, table, n, extra, &has_value)) {
            *message = g_strdup_printf(_("unknown option '%s'"), arg);
            return FALSE;
        }
        if (has_value && !value) {
            if (i + 1 >= argc) {
                *message = g_strdup_printf(_("option '%s' needs a value"), arg);
                return FALSE;
            }
            value = argv[++i];
        } else if (!has_value && value) {
            *message = g_strdup_printf(_("option '--%s' takes no value"), name);
            return FALSE;
        }
        g_hash_table_replace(args->options, g_steal_pointer(&name), g_strdup(value ? value : ""));
    }
    return TRUE;
}

const char *fm_cli_get(const fm_cli_args *args, const char *name)
{
    return g_hash_table_lookup(args->options, name);
}

gboolean fm_cli_has(const fm_cli_args *args, const char *name)
{
    return g_hash_table_contains(args->options, name);
}

void fm_cli_json_add_number(JsonBuilder *builder, double value)
{
    if (isfinite(value))
        json_builder_add_double_value(builder, value);
    else
        json_builder_add_null_value(builder);
}

void fm_cli_json_add_stats(JsonBuilder *builder, const fm_map_stats *stats)
{
    /* with no finite value, min/max/mean/median are meaningless whatever they hold */
    gboolean any = stats->valid_pixels > 0;
    json_builder_set_member_name(builder, "min");
    fm_cli_json_add_number(builder, any ? stats->min : NAN);
    json_builder_set_member_name(builder, "max");
    fm_cli_json_add_number(builder, any ? stats->max : NAN);
    json_builder_set_member_name(builder, "mean");
    fm_cli_json_add_number(builder, any ? stats->mean : NAN);
    json_builder_set_member_name(builder, "median");
    fm_cli_json_add_number(builder, any ? stats->median : NAN);
    json_builder_set_member_name(builder, "valid_pixels");
    json_builder_add_int_value(builder, (gint64)stats->valid_pixels);
}

void fm_cli_json_add_parsed(JsonBuilder *builder, const char *json)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (json && json_parser_load_from_data(parser, json, -1, NULL) && json_parser_get_root(parser))
        json_builder_add_value(builder, json_node_copy(json_parser_get_root(parser)));
    else
        json_builder_add_null_value(builder);
}

void fm_cli_json_print(JsonBuilder *builder)
{
    g_autofree char *text = fm_json_builder_to_text(builder, TRUE);
    printf("%s\n", text);
    fflush(stdout);
}

void fm_cli_json_member_number(JsonBuilder *builder, const char *name, double value)
{
    json_builder_set_member_name(builder, name);
    fm_cli_json_add_number(builder, value);
}

void fm_cli_json_member_int(JsonBuilder *builder, const char *name, gint64 value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_int_value(builder, value);
}

void fm_cli_json_member_string(JsonBuilder *builder, const char *name, const char *value)
{
    json_builder_set_member_name(builder, name);
    if (value)
        json_builder_add_string_value(builder, value);
    else
        json_builder_add_null_value(builder);
}

void fm_cli_json_member_run_id(JsonBuilder *builder, gint64 run_id)
{
    json_builder_set_member_name(builder, "run_id");
    if (run_id > 0)
        json_builder_add_int_value(builder, run_id);
    else
        json_builder_add_null_value(builder);
}

char *fm_cli_output_stem(const char *output, const char *const *exts, int *which)
{
    for (int i = 0; exts[i] != NULL; i++)
        if (g_str_has_suffix(output, exts[i])) {
            if (which != NULL)
                *which = i;
            return g_strndup(output, strlen(output) - strlen(exts[i]));
        }
    if (which != NULL)
        *which = -1;
    return g_strdup(output);
}

gboolean fm_cli_json_write_file(JsonBuilder *builder, const char *path, GError **error)
{
    /* fm_json_to_text repairs the numbers; the file error stays GLib's own (callers prefix the
     * path), where fm_json_to_file's would name the path twice */
    g_autofree char *text = fm_json_builder_to_text(builder, TRUE);
    return g_file_set_contents(path, text, -1, error);
}
