/* Export of dce.dual_input maps: NIfTI volumes in the source's scanner geometry, float32 TIFF
 * stacks (one page per slice) and a CSV of every fitted voxel. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"
#include "app/core/result.h"

G_BEGIN_DECLS

typedef enum {
    FM_DCE_EXPORT_NIFTI = 0, /* one 3-D .nii(.gz) per map, with the source's FM_META_AFFINE */
    FM_DCE_EXPORT_TIFF,      /* one float32 multi-page TIFF per map, page = slice */
    FM_DCE_EXPORT_CSV,       /* one table: x,y,z then a column per map, fitted voxels only */
} fm_dce_export_format;

const char *fm_dce_export_format_name(fm_dce_export_format format); /* "nifti", "tiff", "csv" */
gboolean fm_dce_export_format_parse(const char *text, fm_dce_export_format *out);

/* The file of one map for a chosen path: "out/liver.nii.gz" + "ka" -> "out/liver_ka.nii.gz"
 * (the extension kept: .nii.gz, .nii, .tif, .tiff). g_free it. */
char *fm_dce_export_map_path(const char *path, const char *map_name);

/* Writes the result's maps (x, y per slice, n_frames = nz) for path: NIFTI and TIFF one file per
 * map named by fm_dce_export_map_path (map_name non-NULL: that map only, to path itself); CSV
 * one file at path. source (may be NULL) gives the affine and its name to the TIFF description.
 * Errors name the file. */
gboolean fm_dce_export_maps(const fm_result *result, const fm_dataset *source, const char *path,
                            fm_dce_export_format format, const char *map_name, GError **error);

G_END_DECLS
