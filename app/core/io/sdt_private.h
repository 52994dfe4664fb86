/* Types shared by the .sdt reader's parts: the file, measurement descriptions, image layouts. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

/* The file as one bounds-checked byte range; `path` is only for messages. */
typedef struct {
    const char *path;
    const guint8 *bytes;
    gsize len;
    int software_revision; /* bits 0-3 of the header's revision word */
    int module_type;       /* 0x24 SPC-730, 0x28 SPC-150, ...; 0 where not given */
    const char *setup;     /* the ASCII setup text (not NUL-terminated), may be NULL */
    gsize setup_len;
} sdt_file;

/* What a measurement description says, where its (version-dependent) length holds it. */
typedef struct {
    int meas_mode;
    int bins; /* ADC resolution */
    double tac_range_s, tac_gain;
    int sync_divider;
    gint64 scan_x, scan_y, scan_rx, scan_ry;     /* scan modes */
    gint64 image_x, image_y, image_rx, image_ry; /* FIFO imaging and camera modes, 0 if absent */
    double sync_rate_hz;                         /* measured (stop info), 0 if absent */
    char module[17];
} sdt_meas_desc;

/* How a block's curves form images: `channels` images of width x height pixels one after
 * another, each line `line` pixels long in the file (line > width where SPCM padded FIFO image
 * lines to a power of two). */
typedef struct {
    gint64 width, height, line, channels;
    const char *kind; /* "image", "fifo_image", "decay", "curves" */
} sdt_image_layout;

gboolean sdt_need(const sdt_file *f, guint64 offset, guint64 length, const char *what,
                  GError **error);

/* Reads measurement description `index` (0-based) of `length` bytes at `offs`. */
gboolean sdt_read_meas_desc(const sdt_file *f, guint64 offs, guint32 length, int index,
                            sdt_meas_desc *md, GError **error);

/* Finds how `curves` decays of block `block_no` (1-based, for messages) with block type
 * `type` form images; FM_ERROR_BAD_INPUT naming the sizes where nothing fits. */
gboolean sdt_image_layout_of(const sdt_file *f, int block_no, guint16 type, const sdt_meas_desc *md,
                             guint64 curves, gsize bytes, sdt_image_layout *layout, GError **error);

/* The counts of one image (w x h decays of `bins` counts, 2 or 4 bytes each, lines `line`
 * decays apart) at `data` as a uint16 x, y, t dataset with source_path and hash. Counts from
 * inside the file's mapping are read through a descriptor (see sdt_transpose.c). */
fm_dataset *sdt_to_dataset(const sdt_file *f, const guint8 *data, int bytes_per_count, gint64 w,
                           gint64 h, gint64 line, int bins, guint64 *saturated, GError **error);
