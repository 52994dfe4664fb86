/* SD-OCT raw spectra: headerless binary (uint16, 12-bit packed, uint8) with a JSON sidecar, and
 * multi-page TIFF with one B-scan of spectra per page. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

typedef enum {
    FM_OCT_RAW_U16 = 0,    /* uint16 little-endian, one sample per 2 bytes */
    FM_OCT_RAW_U12_PACKED, /* two 12-bit samples in 3 bytes (bit order below) */
    FM_OCT_RAW_U8,
} fm_oct_raw_format;

/* 12-bit packing (the GenICam "Mono12p" order): samples a, b of a pair go to bytes
 *   b0 = a[7:0],  b1 = a[11:8] | b[3:0] << 4,  b2 = b[11:4]
 * so the bit stream is little-endian throughout; pixels per A-line must be even. */

typedef struct {
    int pixels_per_aline;
    int alines_per_bscan;
    int n_bscans; /* 0: as many as the file holds */
    fm_oct_raw_format format;
} fm_oct_raw_layout;

/* Metadata keys set on OCT datasets. */
#define FM_OCT_META_FORMAT "oct.format"                /* "u16", "u12packed", "u8", "tiff" */
#define FM_OCT_META_CALIBRATION "oct.calibration_file" /* absolute path, from the sidecar */
#define FM_OCT_META_UNPARSED "oct.unparsed" /* "1": bytes of a raw file without sidecar */
/* Lateral steps in µm between A-lines and between B-scans: the sidecar's optional
 * "aline_spacing_um" and "bscan_spacing_um" (views draw B-scans at their true aspect); the raw
 * writer puts them in the sidecar when the spectra carry them. */
#define FM_OCT_META_ALINE_SPACING "oct.aline_spacing_um"
#define FM_OCT_META_BSCAN_SPACING "oct.bscan_spacing_um"

const char *fm_oct_raw_format_name(fm_oct_raw_format format); /* "u16", "u12packed", "u8" */
gboolean fm_oct_raw_format_parse(const char *text, fm_oct_raw_format *format);
/* Bytes one A-line takes in the file. */
gsize fm_oct_raw_aline_bytes(const fm_oct_raw_layout *layout);

/* "<file>.json" (g_free it). */
char *fm_oct_raw_sidecar_path(const char *path);
gboolean fm_oct_raw_has_sidecar(const char *path);
/* The sidecar's lateral steps between A-lines and B-scans in um (0 where it gives none). */
void fm_oct_raw_sidecar_steps(const char *path, double *aline_um, double *bscan_um);
/* Reads {"pixels_per_aline", "alines_per_bscan", "bscans", "format", "calibration_file"}; the
 * calibration file (relative to the raw file's folder, or absolute) comes back in
 * *calibration_path (g_free it; NULL when absent). */
gboolean fm_oct_raw_read_sidecar(const char *path, fm_oct_raw_layout *layout,
                                 char **calibration_path, GError **error);
gboolean fm_oct_raw_write_sidecar(const char *path, const fm_oct_raw_layout *layout,
                                  const char *calibration_file, GError **error);

/* The number of B-scans (*n_bscans, may be NULL) n_bytes hold with layout (n_bscans 0: as many
 * as fit), or FM_ERROR_BAD_INPUT saying which layouts near it would fit: "spectra.dat: 8,192,000
 * bytes do not hold 8 B-scans of 400 A-lines of 2048 u12packed pixels (9,830,400 bytes); 2048
 * pixels u16 would fit 5 B-scans of 400 A-lines". label names the file. */
gboolean fm_oct_raw_check_size(const char *label, guint64 n_bytes, const fm_oct_raw_layout *layout,
                               gsize *n_bscans, GError **error);
/* Decodes raw bytes into a uint16 dataset with dims pixel, aline, bscan (pixel fastest).
 * A size that does not fit the layout is fm_oct_raw_check_size's error. label names the file in
 * messages. */
fm_dataset *fm_oct_raw_decode(const guint8 *bytes, gsize n_bytes, const char *label,
                              const fm_oct_raw_layout *layout, GError **error);
/* Reads a raw file with the given layout, or the sidecar's when layout is NULL. Without
 * either, a raw file comes back undecoded: a 1-D uint8 dataset of its bytes with metadata
 * FM_OCT_META_UNPARSED, which the oct.bscan method decodes with its layout parameters. */
fm_dataset *fm_oct_raw_read(const char *path, const fm_oct_raw_layout *layout, GError **error);
/* Re-decodes an unparsed dataset (see above) with a layout. */
fm_dataset *fm_oct_raw_decode_dataset(const fm_dataset *unparsed, const fm_oct_raw_layout *layout,
                                      GError **error);
/* Multi-page TIFF, one B-scan per page: width = pixels per A-line, rows = A-lines. */
fm_dataset *fm_oct_tiff_read(const char *path, GError **error);
/* Writes a uint16 dataset (pixel, aline, bscan) in the given format plus its sidecar. 12-bit
 * and 8-bit formats keep the low 12 or 8 bits (values are clamped first). */
gboolean fm_oct_raw_write(const char *path, const fm_dataset *spectra, fm_oct_raw_format format,
                          const char *calibration_file, GError **error);
/* TRUE for datasets these readers made (dims pixel, aline, bscan). */
gboolean fm_oct_dataset_is_spectra(const fm_dataset *ds);

G_END_DECLS
