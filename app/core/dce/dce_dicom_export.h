/* A run's maps and ROIs back to the archive: DICOM Parametric Maps and a Segmentation beside
 * the TIFF maps (io/dicom_write does the DICOM). */
#pragma once

#include <glib.h>

#include "app/core/catalogue.h"
#include "app/core/dataset.h"
#include "app/core/result.h"

G_BEGIN_DECLS

/* The Segmentation's file name in the output folder. */
#define FM_DCE_DICOM_SEG_FILE "rois.seg.dcm"

/* Writes outdir/<map>.dcm, one Parametric Map per map of result (one series), and, when rois
 * (of fm_roi*, may be NULL) holds any, outdir/rois.seg.dcm, over source's geometry. With a
 * catalogue and the result's run_id (> 0) the files are recorded with that run (absolute path,
 * format "dicom", SOP class, SeriesInstanceUID) so that the user finds them from it; a run that
 * cannot record them keeps the files, and the note says why they are not listed. *note (may be
 * NULL; g_free it) gets one sentence for the user: what was written and, for a source that is
 * not a DICOM series, that the objects have a new frame of reference. A failure to write removes
 * what this call wrote; errors name the file. */
gboolean fm_dce_export_dicom(const fm_result *result, const fm_dataset *source, GPtrArray *rois,
                             const char *outdir, fm_catalogue *catalogue, gint64 run_id,
                             char **note, GError **error);

G_END_DECLS
