/* Per-voxel maps beside a DCE series, and its label (dce_volume_map.h). */
#include "app/core/dce/dce_volume_map.h"

#include <string.h>

#include "app/core/error.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"

float *fm_dce_read_volume_map(const char *path, const fm_dce_geometry *g, double scale,
                              const char *size_error, GError **error)
{
    g_autoptr(fm_dataset) m = NULL;
    if (g_str_has_suffix(path, ".nii") || g_str_has_suffix(path, ".nii.gz"))
        m = fm_nifti_read(path, error);
    else
        m = fm_tiff_read(path, error);
    if (!m)
        return NULL;
    gsize volume = (gsize)g->nx * g->ny * g->nz;
    if (fm_dataset_width(m) != g->nx || fm_dataset_height(m) != g->ny ||
        fm_dataset_n_elements(m) != volume) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, size_error, path, g->nx, g->ny, g->nz);
        return NULL;
    }
    float *map = g_new(float, volume);
    for (gsize v = 0; v < volume; v++)
        map[v] = (float)(fm_dataset_value(m, v) * scale);
    return map;
}

const char *fm_dce_dataset_label(const fm_dataset *ds)
{
    if (!ds->source_path)
        return "dataset";
    const char *slash = strrchr(ds->source_path, G_DIR_SEPARATOR);
    return slash ? slash + 1 : ds->source_path;
}
