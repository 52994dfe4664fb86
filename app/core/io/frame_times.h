/* DCE dataset metadata helpers: real frame times ("frame_times_s") and the voxel-to-mm affine. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* DCE datasets (NIfTI, DICOM series, TIFF stacks) are x, y, z, t with dims[3] = t, unit "s",
 * pixel type FM_PIXEL_F32 (rescale slope/intercept already applied). Two metadata keys carry
 * what the dims cannot:
 *   "frame_times_s"  comma-separated frame start times in seconds, one per t index, strictly
 *                    increasing, first usually 0 (frames need not be evenly spaced);
 *   "affine"         16 comma-separated values, row-major 4x4, voxel index (x, y, z, 1) to
 *                    scanner millimetres in NIfTI's RAS+ convention (DICOM's LPS is converted);
 *                    kept so exported maps overlay the source anatomy. */
#define FM_META_FRAME_TIMES "frame_times_s"
/* Where the times came from ("AcquisitionTime", "uniform 2.5 s spacing of AcquisitionTime"),
 * and, only when a reader had to fall back, one sentence saying why ("frame times from
 * TriggerTime: AcquisitionTime malformed in 3 files") for info and the run's note. */
#define FM_META_FRAME_TIMES_SOURCE "frame_times_source"
#define FM_META_FRAME_TIMES_NOTE "frame_times_note"
/* Acquisition parameters a reader found in the headers, for methods that take them when the
 * user gives none: flip angles in degrees, one per t index, comma-separated (variable-flip-
 * angle series), and one repetition time in ms. */
#define FM_META_FLIP_ANGLES "flip_angles_deg"
#define FM_META_REPETITION_TIME "repetition_time_ms"
#define FM_META_AFFINE "affine"

/* Frame times as a newly allocated array (g_free it) of *n values. Falls back to index ×
 * dims[3].spacing when the key is missing; FALSE (times NULL, n 0) when the dataset has no
 * 4th dim or the stored list is malformed or has the wrong count. */
gboolean fm_dataset_get_frame_times(const fm_dataset *ds, double **times, int *n);
/* Stores n times (full precision, "%.17g") and sets dims[3].spacing to their mean step. */
void fm_dataset_set_frame_times(fm_dataset *ds, const double *times, int n);

/* The 4x4 row-major affine; FALSE and the identity scaled by the dims' spacings when absent
 * or malformed. */
gboolean fm_dataset_get_affine(const fm_dataset *ds, double affine[16]);
void fm_dataset_set_affine(fm_dataset *ds, const double affine[16]);

/* Parsing and formatting of comma-separated number lists shared by the readers. Parse returns
 * a new array (g_free) or NULL when any entry is not a finite number. */
double *fm_parse_number_list(const char *text, int *n);
char *fm_format_number_list(const double *values, int n);

G_END_DECLS
