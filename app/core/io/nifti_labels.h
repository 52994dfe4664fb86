/* NIfTI label maps (integer voxels, intent "label") written in a source dataset's geometry. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Writes labels (nx * ny * nz values, x fastest) to path (.nii or .nii.gz) as NIfTI-1 with
 * NIFTI_INTENT_LABEL, uint8 voxels when every label fits, else uint16. The geometry is the
 * source's: when source was read from a NIfTI file, that file's qform and sform (codes,
 * quaternion, offsets, qfac, matrix), voxel sizes and space unit are copied as they are, so the
 * label map lies exactly over the source in ITK-SNAP or 3D Slicer; otherwise its FM_META_AFFINE
 * (RAS+ mm, e.g. from a DICOM series) becomes the sform and qform; source may be NULL (unit
 * voxels). Errors: FM_ERROR_IO naming the file. */
gboolean fm_nifti_write_labels(const char *path, const guint16 *labels, int nx, int ny, int nz,
                               const fm_dataset *source, GError **error);

/* TRUE when the NIfTI file at path places its voxels in space (qform_code or sform_code > 0),
 * FALSE when it has no orientation of its own (or cannot be read). */
gboolean fm_nifti_has_orientation(const char *path);

G_END_DECLS
