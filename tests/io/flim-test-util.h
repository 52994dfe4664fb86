/* Shared by the FLIM file tests (io-flim, io-flim-parallel, io-ptu-variants, io-sdt): damaged
 * copies written fast, count cubes compared, metadata read, the real files' ZIPs unpacked. */
#pragma once

#include <gio/gio.h>
#include <glib.h>

#include "app/core/dataset.h"

/* A little-endian 32-bit field of a file's bytes. */
guint32 flim_test_le32(const guint8 *p);

/* Writes len bytes to path as a new file (what a test of a thousand cuts needs to be quick). */
void flim_test_write_bytes(const char *path, const char *bytes, gsize len);

/* Asserts that got is a uint16 x, y, t cube of want's sizes holding exactly want's counts. */
void flim_test_assert_same_counts(const fm_dataset *want, const fm_dataset *got);

/* The number in ds's metadata key; the test aborts when the key is missing. */
double flim_test_meta_double(const fm_dataset *ds, const char *key);

/* The one member of the ZIP archive at zip_path (the shared/refdata zips, not an .sdt block),
 * inflated by GIO; the test aborts on anything else. */
GBytes *flim_test_unzip_member(const char *zip_path);
