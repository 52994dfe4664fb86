/* PicoQuant T3 records (.ptu and .pt3 alike) histogrammed into an x, y, t image or one decay. */
#pragma once

#include <gio/gio.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* What a file's header says about its records; filled by the .ptu and .pt3 header readers. */
typedef struct {
    const char *path;      /* for messages */
    const guint8 *records; /* n_records little-endian 32-bit T3 records */
    gint64 n_records;
    guint32 rec_type;                 /* FM_PTU_*_T3 (.pt3 files hold FM_PTU_PICOHARP_T3 records) */
    gboolean image;                   /* FALSE: a point measurement, every photon in one decay */
    gint64 pix_x, pix_y;              /* image only */
    int line_start, line_stop, frame; /* marker numbers 1..15 (frame 0: none declared) */
    gboolean bidirectional;           /* every other line of a frame scanned right to left */
    double resolution_s;              /* dtime bin width */
    double sync_period_s;             /* laser period; 0 when unknown */
} fm_tttr_layout;

/* Histograms the records: channel 0 sums every detector channel, channel >= 1 keeps that one
 * (1-based: PicoHarp's channel field 1..4, HydraHarp-family field + 1); a channel that holds
 * no photon is FM_ERROR_BAD_INPUT naming the channels present. See fm_ptu_read for the image
 * rules and the metadata; "format" is left to the caller. */
fm_dataset *fm_tttr_histogram(const fm_tttr_layout *layout, int channel, int max_bins,
                              void (*progress)(double fraction, gpointer user),
                              gpointer progress_user, GCancellable *cancellable, GError **error);

G_END_DECLS
