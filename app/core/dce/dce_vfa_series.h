/* Variable-flip-angle images as scanners send them: one DICOM series per flip angle (in one
 * folder, or several series paths), assembled into one VFA acquisition for dce.t1_vfa. */
#pragma once

#include <glib.h>

#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Metadata of an assembled acquisition: how many series it was made of. */
#define FM_META_VFA_SERIES "vfa_series"

/* Opens paths (folders of DICOM series, files of a series, or any other file fm_dataset_open
 * reads). One series in all: that dataset as it is (a VFA series with a FlipAngle per frame, a
 * NIfTI or a TIFF). Several: each must be one volume (x, y, z) whose headers give one FlipAngle
 * and a RepetitionTime; they become one x, y, z, angle dataset sorted by flip angle, with
 * FM_META_FLIP_ANGLES, FM_META_REPETITION_TIME and FM_META_VFA_SERIES set and the lowest
 * angle's geometry and DICOM references. Errors (FM_ERROR_BAD_INPUT) name the file: a series
 * without a flip angle, two series at one angle, another image size, voxel size, position or
 * orientation, or another TR than the first series'. */
fm_dataset *fm_dce_vfa_open(const char *const *paths, int n_paths, GError **error);

G_END_DECLS
