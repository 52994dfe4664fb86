/* What the DCE methods read beside their series: a per-voxel map (the T10 map, a B1 map), and
 * the name their notes give the series. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "app/core/dce/dce_prep.h"

G_BEGIN_DECLS

/* Reads path, NIfTI (.nii, .nii.gz) or else TIFF, which must hold g's nx x ny x nz voxels.
 * Returns each voxel's value times scale as floats (g_free), or NULL with error set; size_error,
 * a translated format taking path, nx, ny and nz, says that the size is wrong. */
float *fm_dce_read_volume_map(const char *path, const fm_dce_geometry *g, double scale,
                              const char *size_error, GError **error);

/* The file name of the series' source, or "dataset". */
const char *fm_dce_dataset_label(const fm_dataset *ds);

G_END_DECLS
