/* Becker & Hickl .sdt reader: FLIM data blocks with their measurement description. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Reads FLIM dataset `block` (0-based; -1 for the first) of an .sdt file into a uint16 dataset
 * with dims x, y, t: t spacing is the bin width in ns (TAC range / TAC gain / ADC resolution,
 * unit "ns"). Datasets are the file's blocks of decay curves in order (FCS, FIDA, MCS ...
 * blocks are skipped), a block holding several routing channels giving one per channel; for
 * ordinary files the index is the block index. Image size from the measurement description's
 * fields for the module generation and mode that wrote it (scan_x/scan_y, image_x/image_y for
 * FIFO imaging, padded lines); a block of one curve opens as a 1x1 decay (an IRF), a set of
 * curves without an image as one line of pixels. Compressed (ZIP) blocks are inflated and
 * CRC-checked. Metadata: "format" = "sdt", "bin_width_ps", "tac_range_ns", "rep_rate_mhz"
 * with "rep_rate_source" ("sync_rate" measured, or "tac_window": 1 / (range / gain)),
 * "sdt_layout" (image, fifo_image, decay, curves), "sdt_module", "sdt_meas_mode", "sdt_block"
 * (1-based B&H block), "sdt_channel" (where a block has several), "sdt_blocks",
 * "sdt_datasets", "sdt_dataset" (1-based), "sdt_saturated" (32-bit counts clipped to 65535,
 * when any). Errors are FM_ERROR_BAD_INPUT naming the file:
 * "scan.sdt: block 2 declares 256 bins but holds 128 bytes, not a whole number of ...". */
fm_dataset *fm_sdt_read(const char *path, int block, GError **error);

/* TRUE when the first bytes (at least 42) look like an .sdt file header. */
gboolean fm_sdt_sniff(const guint8 *head, gsize n);

G_END_DECLS
