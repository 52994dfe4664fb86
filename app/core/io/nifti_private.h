/* What the two NIfTI writers share: an FM_META_AFFINE as sform and qform, the output file. */
#pragma once

#include <glib.h>

#include "app/core/fm_dce_io_config.h"

#if FM_HAVE_NIFTI

#include <nifti/nifti2_io.h>

/* Sets nim's sform to affine (FM_META_AFFINE: 16 values, row-major, RAS+ mm), its qform to the
 * affine's rotation part, its voxel sizes (dx, dy, dz and pixdim[1..3]) to the affine's column
 * lengths and its space unit to mm. */
void fm_nifti_set_affine(nifti_image *nim, const double affine[16]);

/* Makes nim a single NIfTI-1 file (.nii or .nii.gz) named path and removes what path holds now;
 * FALSE with FM_ERROR_BAD_PARAM naming path when it has another ending (nim is left to the
 * caller). */
gboolean fm_nifti_set_output_path(nifti_image *nim, const char *path, GError **error);

#endif
