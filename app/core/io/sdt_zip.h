/* The one-member ZIP archives in which SPCM stores a compressed .sdt data block. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Inflates the archive `zip` (zip_len bytes: a local file header, deflated or stored data, and
 * usually a central directory) into a new buffer of *out_len bytes, checking the member's
 * CRC-32 and size against the archive's own records and against expected_len (the block
 * header's uncompressed length; 0: not known), before anything is allocated. Errors are
 * FM_ERROR_BAD_INPUT: "scan.sdt: block 2: compressed data are damaged (CRC-32 mismatch)". */
guint8 *fm_sdt_unzip(const char *path, int block_no, const guint8 *zip, gsize zip_len,
                     gsize expected_len, gsize *out_len, GError **error);

/* A one-member archive ("data_block", deflated) of `len` bytes of `data`, as SPCM writes it:
 * for the writer of test fixtures. Returns NULL when zlib fails. */
guint8 *fm_sdt_zip(const guint8 *data, gsize len, gsize *zip_len);

G_END_DECLS
