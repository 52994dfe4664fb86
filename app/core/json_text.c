/* JSON text from json-glib trees, with numbers that every JSON parser accepts. */
#include "app/core/json_text.h"

#include <glib/gi18n.h>

#include "app/core/error.h"

/* Removes ".0" that follows an exponent ("1e-08.0" -> "1e-08"); string contents are untouched. */
static void repair_exponents(char *text)
{
    gboolean in_string = FALSE, escaped = FALSE, in_exponent = FALSE;
    char *out = text;
    for (const char *p = text; *p; p++) {
        char c = *p;
        if (in_string) {
            if (escaped)
                escaped = FALSE;
            else if (c == '\\')
                escaped = TRUE;
            else if (c == '"')
                in_string = FALSE;
        } else if (c == '"') {
            in_string = TRUE;
            in_exponent = FALSE;
        } else if (c == 'e' || c == 'E') {
            in_exponent = out > text && g_ascii_isdigit(out[-1]);
        } else if (in_exponent && c == '.' && p[1] == '0' && !g_ascii_isdigit(p[2])) {
            p++; /* skip ".0" */
            in_exponent = FALSE;
            continue;
        } else if (!g_ascii_isdigit(c) && c != '+' && c != '-') {
            in_exponent = FALSE;
        }
        *out++ = c;
    }
    *out = '\0';
}

char *fm_json_to_text(JsonNode *root, gboolean pretty)
{
    g_autoptr(JsonGenerator) gen = json_generator_new();
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, pretty);
    char *text = json_generator_to_data(gen, NULL);
    repair_exponents(text);
    return text;
}

char *fm_json_builder_to_text(JsonBuilder *builder, gboolean pretty)
{
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    return fm_json_to_text(root, pretty);
}

gboolean fm_json_to_file(JsonNode *root, const char *path, GError **error)
{
    g_autofree char *text = fm_json_to_text(root, TRUE);
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, text, -1, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: %s"), path, local->message);
        return FALSE;
    }
    return TRUE;
}
