/* The series a DCE method fits, from a 4-D series or a TIFF stack (dce_series.h). */
#include "app/core/dce/dce_series.h"

#include <glib/gi18n.h>
#include <string.h>

#include "app/core/dce/dce_volume_map.h"
#include "app/core/error.h"
#include "app/core/io/dce_stack.h"

/* "key=value" from a "; "-separated TIFF description, or 0. */
static double description_value(const fm_dataset *ds, const char *key)
{
    const char *d = fm_dataset_get_meta(ds, "description");
    g_autofree char *needle = g_strconcat(key, "=", NULL);
    const char *at = d ? strstr(d, needle) : NULL;
    return at ? g_ascii_strtod(at + strlen(needle), NULL) : 0.0;
}

fm_dataset *fm_dce_series_of(fm_dataset *ds, const fm_params *params, GError **error)
{
    if (ds->n_dims != 3)
        return fm_dataset_ref(ds);
    int nz = fm_params_get_int(params, "stack_slices");
    double dt = fm_params_get_double(params, "frame_interval_s");
    if (nz <= 0)
        nz = MAX((int)description_value(ds, "slices"), 1);
    if (!(dt > 0))
        dt = description_value(ds, "frame_interval_s");
    if (!(dt > 0))
        dt = 1.0;
    int pages = (int)ds->dims[2].size;
    if (pages % nz != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: %d pages are not a whole number of %d-slice volumes"),
                    fm_dce_dataset_label(ds), pages, nz);
        return NULL;
    }
    fm_dataset *series =
        fm_dce_stack_reshape(ds, nz, pages / nz, FM_DCE_PAGES_Z_FASTEST, dt, NULL, error);
    if (series && !series->source_path)
        series->source_path = g_strdup(ds->source_path);
    return series;
}
