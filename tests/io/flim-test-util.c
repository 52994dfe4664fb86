/* Helpers shared by the FLIM file tests: fast damaged copies, count cubes, metadata, ZIPs. */
#include "flim-test-util.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

guint32 flim_test_le32(const guint8 *p)
{
    return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

/* g_file_set_contents syncs to disk, far too slow for a thousand cuts; plain stdio into a
 * new file (truncating an existing one makes ext4 flush it on close, as slow). */
void flim_test_write_bytes(const char *path, const char *bytes, gsize len)
{
    g_unlink(path);
    FILE *f = g_fopen(path, "wb");
    g_assert_nonnull(f);
    g_assert_cmpuint(fwrite(bytes, 1, len, f), ==, len);
    g_assert_cmpint(fclose(f), ==, 0);
}

void flim_test_assert_same_counts(const fm_dataset *want, const fm_dataset *got)
{
    g_assert_cmpint(got->type, ==, FM_PIXEL_U16);
    g_assert_cmpint(got->n_dims, ==, 3);
    for (int i = 0; i < 3; i++)
        g_assert_cmpuint(want->dims[i].size, ==, got->dims[i].size);
    g_assert_true(memcmp(want->data, got->data, fm_dataset_n_bytes(want)) == 0);
}

double flim_test_meta_double(const fm_dataset *ds, const char *key)
{
    const char *text = fm_dataset_get_meta(ds, key);
    if (!text)
        g_error("no metadata %s", key);
    return g_ascii_strtod(text, NULL);
}

GBytes *flim_test_unzip_member(const char *zip_path)
{
    g_autofree char *zip = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(zip_path, &zip, &len, NULL));
    const guint8 *z = (const guint8 *)zip;
    g_assert_cmpuint(flim_test_le32(z), ==, 0x04034b50u);
    gsize data_at = 30 + (gsize)(z[26] | z[27] << 8) + (gsize)(z[28] | z[29] << 8);
    gsize packed = flim_test_le32(z + 18), size = flim_test_le32(z + 22);
    g_assert_cmpuint(data_at + packed, <=, len);
    g_autoptr(GZlibDecompressor) inflater = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_RAW);
    guint8 *out = g_malloc(size);
    gsize in_done = 0, out_done = 0;
    GConverterResult r = G_CONVERTER_CONVERTED;
    while (r != G_CONVERTER_FINISHED) {
        gsize nr = 0, nw = 0;
        r = g_converter_convert(G_CONVERTER(inflater), z + data_at + in_done, packed - in_done,
                                out + out_done, size - out_done, G_CONVERTER_INPUT_AT_END, &nr, &nw,
                                NULL);
        g_assert_cmpint(r, !=, G_CONVERTER_ERROR);
        in_done += nr, out_done += nw;
    }
    g_assert_cmpuint(out_done, ==, size);
    return g_bytes_new_take(out, size);
}
