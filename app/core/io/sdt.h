/* Becker & Hickl .sdt reader: FLIM data blocks with their measurement description. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Reads data block `block` (0-based; the first with -1) of an .sdt file into a uint16 dataset
 * with dims x, y, t: t spacing is the bin width in ns (TAC range / TAC gain / ADC resolution,
 * unit "ns"). Metadata: "format" = "sdt", "bin_width_ps", "tac_range_ns", "rep_rate_mhz"
 * (where the file gives a sync frequency), "sdt_block", "sdt_blocks", "sdt_saturated" (32-bit
 * counts clipped to 65535, when any). Errors are FM_ERROR_BAD_INPUT naming the file:
 * "scan.sdt: block 2 declares 256 bins but holds 128". Compressed (ZIP) blocks are inflated. */
fm_dataset *fm_sdt_read(const char *path, int block, GError **error);

/* TRUE when the first bytes (at least 42) look like an .sdt file header. */
gboolean fm_sdt_sniff(const guint8 *head, gsize n);

G_END_DECLS
