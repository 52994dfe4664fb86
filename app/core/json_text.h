/* JSON text from json-glib trees, with numbers that every JSON parser accepts. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* json-glib 1.6 writes doubles such as 1e-08 as "1e-08.0", which is not JSON; these wrappers
 * generate the text and drop the ".0" after an exponent (outside strings). g_free the text. */
char *fm_json_to_text(JsonNode *root, gboolean pretty);
char *fm_json_builder_to_text(JsonBuilder *builder, gboolean pretty);
gboolean fm_json_to_file(JsonNode *root, const char *path, GError **error);

G_END_DECLS
