/* Results back to the archive (DCMTK's dcmpmap and dcmseg, through the C++ file
 * dicom_write.cc): maps as DICOM Parametric Maps and ROIs as a DICOM Segmentation, over the
 * source series' frame of reference so that a viewer shows them over the source images. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"
#include "app/core/result.h"

G_BEGIN_DECLS

typedef struct fm_dicom_out fm_dicom_out;

/* The SOP classes of what is written (PS3.4 B.5). */
#define FM_DICOM_PARAMETRIC_MAP_SOP_CLASS "1.2.840.10008.5.1.4.1.1.30"
#define FM_DICOM_SEGMENTATION_SOP_CLASS "1.2.840.10008.5.1.4.1.1.66.4"

/* What every object written for one run shares, from source (x, y[, z, t] as its reader made
 * it): for a DICOM series (fm_dicom_read's "dicom_*" metadata) its study, frame of reference,
 * per-slice SOP instances (referenced as the derivation source) and ImagePositionPatient, and
 * the patient and study modules of its first file; for any other source (NIfTI, TIFF) a new
 * study and frame of reference with the geometry of its FM_META_AFFINE (RAS+ turned back into
 * DICOM's LPS), which fm_dicom_out_note says. New series: one for the maps, one for the
 * segmentation, described as series_description. Fails (FM_ERROR_BAD_INPUT) when the build has
 * no DICOM writer or the source's slices are beyond a DICOM image (65535 rows or columns). */
fm_dicom_out *fm_dicom_out_new(const fm_dataset *source, const char *series_description,
                               GError **error);
void fm_dicom_out_free(fm_dicom_out *out);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_dicom_out, fm_dicom_out_free)

/* One sentence for the user when the objects do not sit on the source series' frame of
 * reference ("the source is not DICOM: ... a new frame of reference"), else NULL. */
const char *fm_dicom_out_note(const fm_dicom_out *out);

/* The SeriesInstanceUID of the maps' series, or of the segmentation's; NULL without a writer. */
const char *fm_dicom_out_series_uid(const fm_dicom_out *out, gboolean segmentation);

/* map (width x height x n_frames = the source's x, y and slices) as one Parametric Map of 32-bit
 * floats at path: frame z at slice z's position, the real world value mapping (identity) with
 * map->unit as a UCUM code (a unit UCUM has no code for keeps its text under the local scheme
 * 99FLUXMAP) and the map's name as its label; NaN stays NaN. instance_number orders the maps of
 * the series. Errors (FM_ERROR_BAD_INPUT, FM_ERROR_IO) name the file. */
gboolean fm_dicom_out_write_map(fm_dicom_out *out, const char *path, const fm_map *map,
                                int instance_number, GError **error);

/* rois (of fm_roi*) as one binary Segmentation at path: a segment per role (or name, for an ROI
 * without a role) in order of first appearance; each segment has one frame per slice, the union
 * of its ROIs drawn on that slice or on every slice (fm_roi_rasterise). */
gboolean fm_dicom_out_write_segmentation(fm_dicom_out *out, const char *path, GPtrArray *rois,
                                         GError **error);

/* TRUE when this build writes DICOM Parametric Maps and Segmentations. */
gboolean fm_dicom_write_available(void);

G_END_DECLS
