/* An input file mapped read-only, for the readers that decode straight from the page cache. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Maps path read-only; NULL with FM_ERROR_BAD_INPUT "path: cannot open: why" when it cannot. */
GMappedFile *fm_map_input(const char *path, GError **error);

G_END_DECLS
