/* JPEG 2000 frames of DICOM files (transfer syntaxes 1.2.840.10008.1.2.4.90/.91) via OpenJPEG. */
#pragma once

#include <glib.h>
#include "app/core/io/dicom_pixels.h"

G_BEGIN_DECLS

/* TRUE when this build has OpenJPEG. */
gboolean fm_j2k_available(void);

/* Decodes one frame, a J2K codestream or a JP2 file in bytes[0..n), into frame: the bytes an
 * uncompressed frame of layout holds, colour by plane (layout->by_plane is set), host byte
 * order. The codestream's samples are kept as bit patterns so that layout's sign rule applies
 * (PS3.5 8.2.4: Pixel Representation wins over an unsigned codestream); where the codestream
 * declares more bits than BitsStored, bits_stored is raised to its precision. FALSE with *why
 * (g_free) when OpenJPEG fails or the codestream does not match the DICOM header. */
gboolean fm_j2k_decode_frame(const guint8 *bytes, gsize n, fm_dicom_pixel_layout *layout,
                             guint8 *frame, char **why);

/* Test support: one grey frame of unsigned 16-bit samples as a lossless (reversible 5/3) J2K
 * codestream, or NULL with *why (g_free). */
GBytes *fm_j2k_encode_test_frame(const guint16 *samples, int cols, int rows, char **why);

G_END_DECLS
