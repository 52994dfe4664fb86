/* NIfTI-1 / NIfTI-2 4-D reading and float32 map writing (nifticlib), affine and frame times kept.
 */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"
#include "app/core/io/frame_times.h"

G_BEGIN_DECLS

/* Reads a .nii / .nii.gz (NIfTI-1 or NIfTI-2; .hdr/.img pairs too) into an x, y, z, t float32
 * dataset (a 3-D image becomes one frame). u8/i8/i16/u16/i32/u32/f32/f64 voxels are converted
 * with scl_slope/scl_inter (slope 0 means unscaled, as the standard says). Frame times: the
 * BIDS-like sidecar "<name>.json" (name without .nii/.nii.gz, else the full file name + ".json")
 * with "FrameTimes" in seconds when present, else toffset + index × pixdim[4] in the header's
 * time unit (s, ms or µs, converted to s). Affine from the sform, else the qform, else the voxel
 * sizes; stored as FM_META_AFFINE. Metadata "nifti_version" = "1" or "2".
 * Errors (FM_ERROR_BAD_INPUT) name the file and the problem ("a.nii: truncated voxel data ..."). */
fm_dataset *fm_nifti_read(const char *path, GError **error);

/* Writes float32 voxels x, y, z[, t] (x fastest; nt <= 1 gives a 3-D file) to path (.nii or
 * .nii.gz) as NIfTI-1 (nifti_version 1 or 0) or NIfTI-2 (2). affine: FM_META_AFFINE text
 * (16 values, row-major, RAS+ mm) written as sform and qform, or NULL for unit voxels.
 * frame_times (nt values in s, may be NULL): their first value and mean step go to toffset and
 * pixdim[4]; when they are not evenly spaced a sidecar "<name>.json" with "FrameTimes" is
 * written too, so fm_nifti_read gives them back exactly. */
gboolean fm_nifti_write(const char *path, const float *voxels, int nx, int ny, int nz, int nt,
                        const char *affine, const double *frame_times, int nifti_version,
                        GError **error);

/* Writes any dataset of up to 4 dims (converted to float32) with its own affine and frame
 * times: the way maps computed from a DCE dataset keep the source geometry (copy the source's
 * FM_META_AFFINE into the map dataset, or pass it to fm_nifti_write). */
gboolean fm_nifti_write_dataset(const char *path, const fm_dataset *ds, int nifti_version,
                                GError **error);

/* The sidecar name used for path: "scan.nii.gz" -> "scan.json". g_free it. */
char *fm_nifti_sidecar_path(const char *path);

G_END_DECLS
