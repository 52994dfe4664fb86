/* Writers of minimal Becker & Hickl .sdt and PicoQuant .ptu FLIM files from a counts cube. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Both writers take `counts`: FM_PIXEL_U16, 3 dims x, y, t (dims[0] fastest, as every
 * fm_dataset), photon counts per pixel and time bin; and bin_width_ps > 0, the width of one
 * t bin. When bin_width_ps <= 0 they use counts' "bin_width_ps" metadata, else dims[2].spacing
 * when its unit is "ns"; with neither, FM_ERROR_BAD_PARAM. Errors: FM_ERROR_BAD_PARAM for an
 * unusable dataset (type, dims, more bins than the format holds), FM_ERROR_IO for write
 * failures, both naming the file. The laser period is taken as bins × bin width. */

/* One measurement description (SPCM 9.x layout, 512 bytes: TAC range = bins x bin width, TAC
 * gain 1, ADC resolution = bins, scan_x/scan_y = x/y) and one uncompressed uint16 FLIM data
 * block (y, x, t, t fastest, as B&H stores it); fm_sdt_write_ex (sdt_write.h) writes the other
 * layouts. At most 32767 bins, < 2 GiB. */
gboolean fm_sdt_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      GError **error);

/* How the .ptu writer lays out time; a zeroed struct or NULL gives the defaults. */
typedef struct {
    guint32 record_type; /* FM_PTU_HYDRAHARP2_T3 (default), FM_PTU_HYDRAHARP_T3,
                            FM_PTU_PICOHARP_T3 (at most 4096 bins; others 32768) */
    int syncs_per_pixel; /* pixel dwell in laser periods; default 8 */
    int line_gap_syncs;  /* fly-back between a LineStop and the next LineStart in laser
                            periods; default 3000 (> 1024, so overflow records appear) */
} fm_ptu_write_options;

/* A T3 image: header tags (MeasDesc_Resolution = bin width, MeasDesc_GlobalResolution =
 * bins × bin width, ImgHdr_PixX/PixY, LineStart marker 1, LineStop 2, Frame 3,
 * TTResult_NumberOfRecords, …), then one frame: a Frame+LineStart marker, each pixel's photons
 * (one record per count, dtime = t, spread over the pixel's dwell), a LineStop marker, and
 * overflow records wherever the sync counter wraps. fm_ptu_read(path, 0, …) gives back the
 * same counts exactly. */
gboolean fm_ptu_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      const fm_ptu_write_options *options, GError **error);

G_END_DECLS
