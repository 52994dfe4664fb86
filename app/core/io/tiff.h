/* TIFF reading (libtiff): single and multi-page, 8/12/16-bit and float32, strips and tiles. */
#pragma once

#include <glib.h>
#include "app/core/dataset.h"

G_BEGIN_DECLS

/* Reads every page into an x,y,t dataset (t = page, unit "frame"). 12-bit samples are
 * widened to uint16 with bits_per_sample = 12. All pages must share size and type.
 * Errors (FM_ERROR_BAD_INPUT) name the file and the problem: "a.tif: page 3 is 64x64, page 1 is
 * 128x128". */
fm_dataset *fm_tiff_read(const char *path, GError **error);
/* Writes a dataset (u8, u16 or f32) as a multi-page TIFF, one page per frame, uncompressed, in
 * strips of up to 16 MiB (a typical page is one strip). */
gboolean fm_tiff_write_dataset(const char *path, const fm_dataset *ds, const char *description,
                               GError **error);
/* Writes float32 pages (n_frames of width x height) with an ImageDescription. */
gboolean fm_tiff_write_float32(const char *path, const float *data, int width, int height,
                               int n_frames, const char *description, GError **error);
/* Reads the ImageDescription of page 0 (g_free it), or NULL. */
char *fm_tiff_read_description(const char *path, GError **error);

G_END_DECLS
