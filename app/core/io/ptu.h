/* PicoQuant .ptu reader: tagged header and T3 records histogrammed into an x, y, t image. */
#pragma once

#include <gio/gio.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* TTTR record formats (tag TTResultFormat_TTTRRecType) read as T3 images. */
#define FM_PTU_PICOHARP_T3 0x00010303
#define FM_PTU_HYDRAHARP_T3 0x00010304  /* HydraHarp v1: one overflow per overflow record */
#define FM_PTU_HYDRAHARP2_T3 0x01010304 /* v2 and later: overflow records carry a count */
#define FM_PTU_TIMEHARP260N_T3 0x00010305
#define FM_PTU_TIMEHARP260P_T3 0x00010306
#define FM_PTU_GENERIC_T3 0x00010307 /* MultiHarp 150/160 and PicoHarp 330: HydraHarp v2 layout */
#define FM_PTU_MULTIHARP_T3 FM_PTU_GENERIC_T3

/* Tag value types of the header. */
#define FM_PTU_EMPTY8 0xFFFF0008u
#define FM_PTU_BOOL8 0x00000008u
#define FM_PTU_INT8 0x10000008u
#define FM_PTU_BITSET64 0x11000008u
#define FM_PTU_COLOR8 0x12000008u
#define FM_PTU_FLOAT8 0x20000008u
#define FM_PTU_TDATETIME 0x21000008u
#define FM_PTU_FLOAT8ARRAY 0x2001FFFFu
#define FM_PTU_ANSISTRING 0x4001FFFFu
#define FM_PTU_WIDESTRING 0x4002FFFFu
#define FM_PTU_BINARYBLOB 0xFFFFFFFFu

/* Reads a T3 .ptu. An image (header tags ImgHdr_PixX/PixY/LineStart/LineStop): photons between
 * a LineStart and the next LineStop marker are placed on ImgHdr_PixX pixels by their sync time
 * since the line start; where ImgHdr_Frame markers appear in the records they start a new frame
 * (whether written before a frame's first line or after its last) and lines past ImgHdr_PixY
 * are dropped, else a frame is every ImgHdr_PixY lines; frames are summed. ImgHdr_BiDirect:
 * odd rows of each frame (1, 3, ...) were scanned right to left and are mirrored back. The t
 * bin is the dtime. A point measurement (no image tags, ImgHdr_Dimensions 1, or no LineStart
 * marker in the records) gives one decay: 1 x 1 pixel x bins, float32 (an IRF's peak bin
 * often exceeds 65535). max_bins > 0 sums neighbouring dtime bins so that at most max_bins
 * remain; 0 keeps the full dtime range up to the sync period (MeasDesc_GlobalResolution).
 * Result: uint16 x, y, t counts (saturating at 65535), t spacing = bin width in ns. Metadata:
 * "format" = "ptu", "bin_width_ps", "tac_range_ns" (bins x bin width), "rep_rate_mhz",
 * "ptu_measurement" ("image" or "point"), "ptu_records", "ptu_frames", "ptu_bidirectional"
 * ("1" when mirrored), "ptu_channels" (detector channels holding photons, "1,2"),
 * "ptu_channel" ("all" or the one read), "ptu_photons" (of that channel), "ptu_photons_dropped"
 * (outside lines or the bin range), "ptu_saturated", "ptu_sin_correction_percent" (a resonant
 * scanner's ImgHdr_SinCorrection, not applied: columns are even in time). progress (0..1, may be
 * NULL) is called every 2^18 records; cancellable (may be NULL) stops the read with
 * FM_ERROR_CANCELLED. */
fm_dataset *fm_ptu_read(const char *path, int max_bins,
                        void (*progress)(double fraction, gpointer user), gpointer progress_user,
                        GCancellable *cancellable, GError **error);

/* As fm_ptu_read, for one detector channel: 0 sums all of them (fm_ptu_read), >= 1 keeps that
 * one (1-based: PicoHarp's routing channel 1..4, the HydraHarp family's input 1..64). A channel
 * without photons is FM_ERROR_BAD_INPUT naming the channels that have some. */
fm_dataset *fm_ptu_read_channel(const char *path, int channel, int max_bins,
                                void (*progress)(double fraction, gpointer user),
                                gpointer progress_user, GCancellable *cancellable, GError **error);

G_END_DECLS
