/* What the two NIfTI writers share: an FM_META_AFFINE turned into a header's sform and qform. */
#pragma once

#include "app/core/fm_dce_io_config.h"

#if FM_HAVE_NIFTI

#include <nifti/nifti2_io.h>

/* Sets nim's sform to affine (FM_META_AFFINE: 16 values, row-major, RAS+ mm), its qform to the
 * affine's rotation part, its voxel sizes (dx, dy, dz and pixdim[1..3]) to the affine's column
 * lengths and its space unit to mm. */
void fm_nifti_set_affine(nifti_image *nim, const double affine[16]);

#endif
