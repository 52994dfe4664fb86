/* ROIs from label maps (NIfTI or TIFF, as ITK-SNAP and 3D Slicer save segmentations) and back. */
#pragma once

#include <glib.h>
#include "dataset.h"
#include "roi.h"

G_BEGIN_DECLS

/* The highest label value a label map may hold (uint16 voxels). */
#define FM_ROI_LABEL_MAX 65535

/* One label value and the role its ROIs take. */
typedef struct {
    int label; /* 1 .. FM_ROI_LABEL_MAX */
    char *role;
} fm_roi_label_role;

void fm_roi_label_role_free(fm_roi_label_role *entry);

/* TRUE when path names a label map rather than a JSON ROI file, by its extension: .nii, .nii.gz,
 * .tif, .tiff (any case). */
gboolean fm_roi_is_label_map_path(const char *path);

/* The roles of label values, of fm_roi_label_role*, from text:
 * - "1=aorta,2=portal_vein,3=liver" (labels 1..65535, each once; roles of letters, digits and
 *   '_', not starting with a digit); a bad entry is FM_ERROR_BAD_PARAM "--roi-labels: ...";
 * - or the path of an ITK-SNAP label description file (what Fluxmap's label map export writes
 *   beside the map, and ITK-SNAP's "Export label descriptions"): each line
 *   `IDX R G B A VIS MSH "Label name"`; names become roles in lower case with '_' for anything
 *   but letters and digits ("Portal Vein" -> portal_vein); label 0 and ITK-SNAP's default names
 *   ("Clear Label", "Label 7") are skipped. *from_file tells which it was (may be NULL). */
GPtrArray *fm_roi_labels_parse(const char *text, gboolean *from_file, GError **error);

/* Reads the label map at path as ROIs for dataset ds: one mask ROI (FM_ROI_MASK) per label value
 * present and, when ds has a "z" dim, per slice z where that label is present (roi->slice = z;
 * else slice -1). An ROI takes the role that labels gives its value and is named after it, else
 * it is named "label N" with no role. The map must have ds's size: x, y and z (1 without a z
 * dim), else FM_ERROR_BAD_INPUT "mask.nii.gz: label map is 64x64x3 but liver.nii is 96x96x12".
 * Voxels must be whole numbers 0..65535 (0 is outside every ROI). When strict, a label in labels
 * that the map does not hold is FM_ERROR_BAD_PARAM (a typo in --roi-labels). labels may be NULL.
 * Returns a GPtrArray of fm_roi* (owning them). */
GPtrArray *fm_roi_list_from_label_map(const char *path, const fm_dataset *ds, GPtrArray *labels,
                                      gboolean strict, GError **error);

/* Writes rois as a label map over ds's grid: the k-th distinct role (or name, for an ROI without
 * role) in order of first appearance gets label k; each ROI is rasterised on its slice (every
 * slice for slice -1); a later ROI overwrites an earlier one where they overlap. .nii/.nii.gz
 * carry ds's NIfTI geometry (fm_nifti_write_labels); .tif/.tiff hold one uint8 or uint16 page per
 * slice. The ITK-SNAP label description file fm_roi_labels_sidecar_path names is written beside
 * it. *mapping (may be NULL; g_free it) is "1=aorta,2=portal_vein" for the labels that carry a
 * role, as --roi-labels takes it. */
gboolean fm_roi_list_to_label_map(const char *path, GPtrArray *rois, const fm_dataset *ds,
                                  char **mapping, GError **error);

/* The label description file beside a label map: "mask.nii.gz" -> "mask.labels.txt". */
char *fm_roi_labels_sidecar_path(const char *label_map_path);

/* ds's ROI grid: width, height, and slices (the "z" dim's size, 1 when it has none). */
void fm_roi_grid(const fm_dataset *ds, int *nx, int *ny, int *nz, gboolean *has_z);

G_END_DECLS
