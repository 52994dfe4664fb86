/* Writer of .sdt files in the layouts SPCM writes: several blocks, routing channels, ZIP
 * blocks, single decays, FIFO images, and the header layouts of older module generations. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

typedef struct {
    /* datasets[i]: uint16 x, y, t counts. Block b holds datasets b*channels .. b*channels +
     * channels - 1 as its routing channels (scan_rx = channels), each block with its own
     * measurement description; a block's datasets must share their size. */
    const fm_dataset *const *datasets;
    int n_datasets;
    int channels;        /* routing channels per block; 0 means 1 */
    double bin_width_ps; /* <= 0: from the first dataset, as fm_sdt_write */
    double sync_rate_hz; /* > 0: written as the measured sync rate (stop info) */
    int md_len;          /* bytes per measurement description: 0 means 512 (SPCM 9.x); 203 is
                            the SPC-7xx era, 211 no stop info; >= 335 has image_x/image_y */
    int revision;        /* header revision word; 0 means 0x28f (SPC-150, software rev 15) */
    gboolean fifo_image; /* measurement mode 13 and IMG_BLOCKs: the size in image_x/image_y,
                            scan_x/scan_y left at a stale 128 x 128 as SPCM leaves them */
    int padded_width;    /* > width: FIFO image lines stored this many pixels long */
    gboolean counts32;   /* 32-bit counts (FIFO blocks) */
    gboolean compress;   /* every block as a one-member ZIP archive */
} fm_sdt_write_options;

/* Writes the file; a 1x1 dataset is written as a single decay (measurement mode 0, one curve,
 * stale scan size). Errors: FM_ERROR_BAD_PARAM naming the file for unusable datasets,
 * FM_ERROR_IO when writing fails. */
gboolean fm_sdt_write_ex(const char *path, const fm_sdt_write_options *options, GError **error);

G_END_DECLS
