/* TIFF reader/writer tests: exact round trips (u8, 12-bit, u16, f32, multi-page, tiles) and
 * clean FM_ERROR_BAD_INPUT errors naming the file for truncated, empty and foreign files. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <tiffio.h>

#include "app/core/error.h"
#include "app/core/io/tiff.h"

typedef struct {
    char *dir;
} Fixture;

static void fixture_setup(Fixture *fx, gconstpointer data)
{
    fx->dir = g_dir_make_tmp("fluxmap-io-XXXXXX", NULL);
    g_assert_nonnull(fx->dir);
}

static void fixture_teardown(Fixture *fx, gconstpointer data)
{
    GDir *d = g_dir_open(fx->dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(fx->dir, name, NULL);
        g_unlink(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(fx->dir);
    g_free(fx->dir);
}

static fm_dataset *make_dataset(fm_pixel_type type, int w, int h, int frames)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)frames};
    fm_dataset *ds = fm_dataset_new(type, 3, sizes, NULL);
    gsize n = fm_dataset_n_elements(ds);
    for (gsize i = 0; i < n; i++) {
        switch (type) {
        case FM_PIXEL_U8:
            ((guint8 *)ds->data)[i] = (guint8)((i * 7 + 3) % 256);
            break;
        case FM_PIXEL_U16:
            ((guint16 *)ds->data)[i] = (guint16)((i * 2654435761u) % 65536);
            break;
        case FM_PIXEL_F32:
            ((float *)ds->data)[i] = (i % 17 == 5) ? NAN : (float)((double)i * -0.37 + 1e-3);
            break;
        }
    }
    return ds;
}

/* Exact comparison, NaN equal to NaN (bitwise compare handles it for our data). */
static void assert_same_data(const fm_dataset *a, const fm_dataset *b)
{
    g_assert_cmpint(a->type, ==, b->type);
    g_assert_cmpint(fm_dataset_width(a), ==, fm_dataset_width(b));
    g_assert_cmpint(fm_dataset_height(a), ==, fm_dataset_height(b));
    g_assert_cmpint(fm_dataset_frames(a), ==, fm_dataset_frames(b));
    g_assert_true(memcmp(a->data, b->data, fm_dataset_n_bytes(a)) == 0);
}

static void round_trip(Fixture *fx, fm_pixel_type type, int w, int h, int frames)
{
    g_autoptr(fm_dataset) ds = make_dataset(type, w, h, frames);
    g_autofree char *path = g_build_filename(fx->dir, "round.tif", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, "test description", &error));
    g_assert_no_error(error);
    g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    assert_same_data(ds, back);
    g_assert_cmpint(back->n_dims, ==, 3);
    g_assert_cmpstr(back->dims[2].unit, ==, "frame");
    g_assert_cmpint(back->bits_per_sample, ==, (int)fm_pixel_size(type) * 8);
    g_assert_cmpstr(fm_dataset_get_meta(back, "description"), ==, "test description");
    g_assert_true(g_path_is_absolute(back->source_path));
    /* The hash is that of the file's bytes, computed independently here. */
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_autofree char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (guchar *)bytes, len);
    g_assert_cmpstr(back->sha256, ==, sha);
    g_autofree char *desc = fm_tiff_read_description(path, &error);
    g_assert_cmpstr(desc, ==, "test description");
}

static void test_u8(Fixture *fx, gconstpointer d)
{
    round_trip(fx, FM_PIXEL_U8, 37, 23, 1);
}
static void test_u16(Fixture *fx, gconstpointer d)
{
    round_trip(fx, FM_PIXEL_U16, 64, 48, 1);
}
static void test_f32(Fixture *fx, gconstpointer d)
{
    round_trip(fx, FM_PIXEL_F32, 33, 31, 1);
}
static void test_multipage(Fixture *fx, gconstpointer d)
{
    round_trip(fx, FM_PIXEL_U16, 40, 30, 7);
    round_trip(fx, FM_PIXEL_F32, 12, 9, 3);
}

/* Writes one page with explicit tags through libtiff, the way other software does. */
static void write_raw_page(TIFF *tif, guint32 w, guint32 h, guint16 bps, guint16 spp,
                           guint16 format, guint32 tile, const void *data, gsize row_bytes)
{
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bps);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, spp);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, format);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, spp == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    if (tile) {
        TIFFSetField(tif, TIFFTAG_TILEWIDTH, tile);
        TIFFSetField(tif, TIFFTAG_TILELENGTH, tile);
        gsize px = bps / 8;
        g_autofree guint8 *buf = g_malloc0((gsize)tile * tile * px);
        for (guint32 y0 = 0; y0 < h; y0 += tile)
            for (guint32 x0 = 0; x0 < w; x0 += tile) {
                memset(buf, 0, (gsize)tile * tile * px);
                for (guint32 r = 0; r < tile && y0 + r < h; r++)
                    memcpy(buf + (gsize)r * tile * px,
                           (const guint8 *)data + ((gsize)(y0 + r) * w + x0) * px,
                           (gsize)MIN(tile, w - x0) * px);
                g_assert_cmpint(TIFFWriteTile(tif, buf, x0, y0, 0, 0), >, 0);
            }
    } else {
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 3); /* several strips per page */
        for (guint32 r = 0; r < h; r++)
            g_assert_cmpint(TIFFWriteScanline(tif, (guint8 *)data + r * row_bytes, r, 0), ==, 1);
    }
    g_assert_true(TIFFWriteDirectory(tif));
}

static void test_12bit(Fixture *fx, gconstpointer d)
{
    enum { W = 5, H = 7 }; /* odd width: rows end on half a byte, padded */
    guint16 truth[W * H];
    for (int i = 0; i < W * H; i++)
        truth[i] = (guint16)((i * 1237 + 11) % 4096);
    gsize row_bytes = (W * 12 + 7) / 8;
    guint8 packed[H][(W * 12 + 7) / 8];
    memset(packed, 0, sizeof packed);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            guint v = truth[y * W + x];
            for (int b = 0; b < 12; b++) { /* MSB first, as TIFF packs samples */
                int bit = x * 12 + b;
                if (v & (1u << (11 - b)))
                    packed[y][bit / 8] |= (guint8)(0x80 >> (bit % 8));
            }
        }
    g_autofree char *path = g_build_filename(fx->dir, "twelve.tif", NULL);
    TIFF *tif = TIFFOpen(path, "w");
    write_raw_page(tif, W, H, 12, 1, SAMPLEFORMAT_UINT, 0, packed, row_bytes);
    TIFFClose(tif);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ds->type, ==, FM_PIXEL_U16);
    g_assert_cmpint(ds->bits_per_sample, ==, 12);
    g_assert_cmpint(fm_dataset_width(ds), ==, W);
    g_assert_cmpint(fm_dataset_height(ds), ==, H);
    for (int i = 0; i < W * H; i++)
        g_assert_cmpuint(((guint16 *)ds->data)[i], ==, truth[i]);
}

static void test_tiled(Fixture *fx, gconstpointer d)
{
    /* 70x50 with 16x16 tiles: partial tiles on the right and bottom edges. */
    g_autoptr(fm_dataset) u16 = make_dataset(FM_PIXEL_U16, 70, 50, 2);
    g_autoptr(fm_dataset) f32 = make_dataset(FM_PIXEL_F32, 70, 50, 1);
    g_autofree char *path = g_build_filename(fx->dir, "tiled.tif", NULL);
    TIFF *tif = TIFFOpen(path, "w");
    for (int f = 0; f < 2; f++)
        write_raw_page(tif, 70, 50, 16, 1, SAMPLEFORMAT_UINT, 16, fm_dataset_frame(u16, f), 0);
    TIFFClose(tif);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    assert_same_data(u16, back);

    g_autofree char *fpath = g_build_filename(fx->dir, "tiled-f32.tif", NULL);
    tif = TIFFOpen(fpath, "w");
    write_raw_page(tif, 70, 50, 32, 1, SAMPLEFORMAT_IEEEFP, 32, f32->data, 0);
    TIFFClose(tif);
    g_autoptr(fm_dataset) fback = fm_tiff_read(fpath, &error);
    g_assert_no_error(error);
    assert_same_data(f32, fback);
}

/* Every broken file gives FM_ERROR_BAD_INPUT, a message naming the file, and no crash. */
static void expect_bad_input(const char *path, const char *fragment)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_tiff_read(path, &error);
    g_assert_null(ds);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_test_message("%s", error->message);
    g_assert_nonnull(strstr(error->message, path));
    if (fragment)
        g_assert_nonnull(strstr(error->message, fragment));
}

static void test_truncated(Fixture *fx, gconstpointer d)
{
    g_autoptr(fm_dataset) ds = make_dataset(FM_PIXEL_U16, 64, 64, 4);
    g_autofree char *path = g_build_filename(fx->dir, "cut.tif", NULL);
    g_assert_true(fm_tiff_write_dataset(path, ds, NULL, NULL));
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_assert_true(g_file_set_contents(path, bytes, (gssize)(len / 2), NULL));
    expect_bad_input(path, "truncated");
    /* Every other cut point, through strips, tags and page links, fails cleanly as well. */
    for (gsize cut = 0; cut < len; cut += 61) {
        g_assert_true(g_file_set_contents(path, bytes, (gssize)cut, NULL));
        expect_bad_input(path, NULL);
    }
}

static void test_empty(Fixture *fx, gconstpointer d)
{
    g_autofree char *path = g_build_filename(fx->dir, "empty.tif", NULL);
    g_assert_true(g_file_set_contents(path, "", 0, NULL));
    expect_bad_input(path, "not a TIFF file");
}

static void test_not_tiff(Fixture *fx, gconstpointer d)
{
    g_autofree char *path = g_build_filename(fx->dir, "notes.tif", NULL);
    g_assert_true(g_file_set_contents(path, "x,y\n1,2\n", -1, NULL));
    expect_bad_input(path, "not a TIFF file");
    g_autofree char *missing = g_build_filename(fx->dir, "missing.tif", NULL);
    expect_bad_input(missing, NULL);
    g_autofree char *desc = fm_tiff_read_description(path, NULL);
    g_assert_null(desc);
}

static void test_page_sizes(Fixture *fx, gconstpointer d)
{
    guint16 big[32 * 32] = {0}, small[16 * 16] = {0};
    g_autofree char *path = g_build_filename(fx->dir, "mixed.tif", NULL);
    TIFF *tif = TIFFOpen(path, "w");
    write_raw_page(tif, 32, 32, 16, 1, SAMPLEFORMAT_UINT, 0, big, 64);
    write_raw_page(tif, 16, 16, 16, 1, SAMPLEFORMAT_UINT, 0, small, 32);
    TIFFClose(tif);
    expect_bad_input(path, "page 2 is 16x16, page 1 is 32x32");
}

static void test_rgb_rejected(Fixture *fx, gconstpointer d)
{
    guint8 rgb[8 * 8 * 3] = {0};
    g_autofree char *path = g_build_filename(fx->dir, "colour.tif", NULL);
    TIFF *tif = TIFFOpen(path, "w");
    write_raw_page(tif, 8, 8, 8, 3, SAMPLEFORMAT_UINT, 0, rgb, 24);
    TIFFClose(tif);
    expect_bad_input(path, "samples per pixel");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
#define ADD(name, fn) g_test_add(name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
    ADD("/io/tiff/u8", test_u8);
    ADD("/io/tiff/12bit", test_12bit);
    ADD("/io/tiff/u16", test_u16);
    ADD("/io/tiff/f32", test_f32);
    ADD("/io/tiff/multipage", test_multipage);
    ADD("/io/tiff/tiled", test_tiled);
    ADD("/io/tiff/truncated", test_truncated);
    ADD("/io/tiff/empty", test_empty);
    ADD("/io/tiff/not-tiff", test_not_tiff);
    ADD("/io/tiff/page-sizes", test_page_sizes);
    ADD("/io/tiff/rgb-rejected", test_rgb_rejected);
    return g_test_run();
}
