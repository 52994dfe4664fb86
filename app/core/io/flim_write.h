/* Writers of minimal Becker & Hickl .sdt and PicoQuant .ptu/.pt3 FLIM files from a counts cube. */
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

/* Where the .ptu/.pt3 writers put the Frame marker (marker 3). */
enum {
    FM_PTU_FRAME_MARKER_FIRST = 0, /* with the LineStart of each frame's first line */
    FM_PTU_FRAME_MARKER_LAST,      /* with the LineStop of each frame's last line (SymPhoTime) */
    FM_PTU_FRAME_MARKER_NONE,      /* none, and no ImgHdr_Frame tag: frames of PixY lines */
};

/* How the .ptu/.pt3 writers lay out time; a zeroed struct or NULL gives the defaults. */
typedef struct {
    guint32 record_type;    /* FM_PTU_HYDRAHARP2_T3 (default), FM_PTU_HYDRAHARP_T3,
                               FM_PTU_PICOHARP_T3 (at most 4096 bins; others 32768),
                               FM_PTU_TIMEHARP260N_T3, FM_PTU_TIMEHARP260P_T3, FM_PTU_GENERIC_T3 */
    int syncs_per_pixel;    /* pixel dwell in laser periods; default 8 */
    int line_gap_syncs;     /* fly-back between a LineStop and the next LineStart in laser
                               periods; default 3000 (> 1024, so overflow records appear) */
    int channels;           /* detector channels 1..channels (default 1; PicoHarp at most 4):
                               photon k of a pixel, in t order, goes to channel 1 + k % channels */
    int frames;             /* frames (default 1): photon k of a pixel is in frame k % frames, so
                               that the frames sum to the counts */
    int frame_marker;       /* FM_PTU_FRAME_MARKER_* */
    gboolean bidirectional; /* odd rows scanned right to left (ImgHdr_BiDirect 1) */
    gboolean point;         /* a point measurement: no image tags and no markers, every pixel's
                               photons in turn, so that the file reads as their summed decay */
} fm_ptu_write_options;

/* A T3 image: header tags (MeasDesc_Resolution = bin width, MeasDesc_GlobalResolution =
 * bins × bin width, ImgHdr_PixX/PixY, LineStart marker 1, LineStop 2, Frame 3,
 * TTResult_NumberOfRecords, …), then each frame: per line a LineStart marker, each pixel's
 * photons (one record per count, dtime = t, spread over the pixel's dwell), a LineStop marker,
 * and overflow records wherever the sync counter wraps. fm_ptu_read(path, 0, …) gives back the
 * same counts exactly (summed over frames and channels; a point file: summed over pixels). */
gboolean fm_ptu_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      const fm_ptu_write_options *options, GError **error);

/* The same records (PicoHarp T3 only: record_type 0 or FM_PTU_PICOHARP_T3, at most 4096 bins)
 * behind a .pt3 header, format 2.0: CntRate0 = 1 / (bins × bin width), Resolution = bin width
 * in ns (float32), and an LSM imaging header (ident 3, Frame 3, LineStart 1, LineStop 2,
 * Pattern 1 when bidirectional, PixX, PixY), none for a point measurement. */
gboolean fm_pt3_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      const fm_ptu_write_options *options, GError **error);

G_END_DECLS
