#include "app/core/io/map_input.h"

#include <glib/gi18n.h>

#include "app/core/error.h"

GMappedFile *fm_map_input(const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    GMappedFile *map = g_mapped_file_new(path, FALSE, &local);
    if (!map)
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    local->message);
    return map;
}
