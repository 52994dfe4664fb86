/* TIFF reader/writer tests: exact round trips (u8, 12-bit, u16, f32, multi-page, strips of
 * every size, both byte orders, tiles), the float writer's pages through plain libtiff, and
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

/* One page written strip by strip with TIFFWriteEncodedStrip, the way cameras and other
 * programs write: rows_per_strip 1 (many strips) up to beyond the height (one strip). */
static void write_strips_page(TIFF *tif, guint32 w, guint32 h, guint16 bps, guint16 format,
                              guint32 rows_per_strip, guint16 compression, const guint8 *data,
                              int page, int n_pages)
{
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bps);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)1);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, format);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, compression);
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
    TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
    TIFFSetField(tif, TIFFTAG_PAGENUMBER, (guint16)page, (guint16)n_pages);
    gsize row_bytes = ((gsize)w * bps + 7) / 8;
    guint32 rows = MIN(rows_per_strip, h);
    for (guint32 s = 0; s * rows < h; s++) {
        gsize n = (gsize)MIN(rows, h - s * rows) * row_bytes;
        /* libtiff may swap or reverse bytes in place: it gets a copy */
        g_autofree guint8 *copy = g_memdup2(data + (gsize)s * rows * row_bytes, n);
        g_assert_cmpint(TIFFWriteEncodedStrip(tif, s, copy, (tmsize_t)n), ==, (tmsize_t)n);
    }
    g_assert_true(TIFFWriteDirectory(tif));
}

/* Every whole-byte type, odd widths, 1..many strips per page, several pages, both byte orders
 * (the reader swaps uncompressed samples itself) and a compressed file: read back exactly. */
static void test_libtiff_strips(Fixture *fx, gconstpointer d)
{
    static const fm_pixel_type types[] = {FM_PIXEL_U8, FM_PIXEL_U16, FM_PIXEL_F32};
    static const guint32 widths[] = {1, 37, 101};
    static const guint32 rows_per_strip[] = {1, 3, 29, 1000};
    static const char *const modes[] = {"wl", "wb", "w8b"}; /* little, big-endian, BigTIFF */
    g_autofree char *path = g_build_filename(fx->dir, "strips.tif", NULL);
    for (gsize t = 0; t < G_N_ELEMENTS(types); t++)
        for (gsize wi = 0; wi < G_N_ELEMENTS(widths); wi++)
            for (gsize r = 0; r < G_N_ELEMENTS(rows_per_strip); r++)
                for (gsize m = 0; m < G_N_ELEMENTS(modes) + 1; m++) {
                    guint32 w = widths[wi], h = 29;
                    int pages = 3;
                    gboolean deflate = m == G_N_ELEMENTS(modes);
                    g_autoptr(fm_dataset) ds = make_dataset(types[t], (int)w, (int)h, pages);
                    TIFF *tif = TIFFOpen(path, deflate ? "w" : modes[m]);
                    g_assert_nonnull(tif);
                    guint16 bps = (guint16)(fm_pixel_size(types[t]) * 8);
                    guint16 format =
                        types[t] == FM_PIXEL_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT;
                    for (int p = 0; p < pages; p++)
                        write_strips_page(tif, w, h, bps, format, rows_per_strip[r],
                                          deflate ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE,
                                          fm_dataset_frame(ds, p), p, pages);
                    TIFFClose(tif);
                    g_autoptr(GError) error = NULL;
                    g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
                    g_assert_no_error(error);
                    assert_same_data(ds, back);
                }
}

/* 12-bit samples in strips of several rows over several pages, odd width (rows end on half a
 * byte): the strip-buffer path that widens packed samples. */
static void test_12bit_strips(Fixture *fx, gconstpointer d)
{
    enum { W = 13, H = 11, PAGES = 4 };
    gsize row_bytes = (W * 12 + 7) / 8;
    g_autofree guint16 *truth = g_new(guint16, W * H * PAGES);
    g_autofree guint8 *packed = g_malloc0(row_bytes * H * PAGES);
    for (int i = 0; i < W * H * PAGES; i++)
        truth[i] = (guint16)((i * 2731 + 5) % 4096);
    for (int row = 0; row < H * PAGES; row++)
        for (int x = 0; x < W; x++)
            for (int b = 0; b < 12; b++) {
                int bit = x * 12 + b;
                if (truth[row * W + x] & (1u << (11 - b)))
                    packed[row * row_bytes + bit / 8] |= (guint8)(0x80 >> (bit % 8));
            }
    g_autofree char *path = g_build_filename(fx->dir, "twelve-strips.tif", NULL);
    TIFF *tif = TIFFOpen(path, "w");
    for (int p = 0; p < PAGES; p++)
        write_strips_page(tif, W, H, 12, SAMPLEFORMAT_UINT, 4, COMPRESSION_NONE,
                          packed + (gsize)p * H * row_bytes, p, PAGES);
    TIFFClose(tif);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ds->bits_per_sample, ==, 12);
    g_assert_cmpint(fm_dataset_frames(ds), ==, PAGES);
    g_assert_true(memcmp(ds->data, truth, sizeof(guint16) * W * H * PAGES) == 0);
}

/* The float writer's pages read with plain libtiff calls, page by page and strip by strip:
 * bit for bit the map, with the tags the writer has always set; a page larger than one strip
 * is cut into several strips of whole rows. */
static void check_float_pages(const char *path, const float *map, guint32 w, guint32 h, int frames,
                              const char *description)
{
    TIFF *tif = TIFFOpen(path, "r");
    g_assert_nonnull(tif);
    gsize page_bytes = (gsize)w * h * sizeof(float);
    g_autofree guint8 *page = g_malloc(page_bytes);
    for (int f = 0; f < frames; f++) {
        if (f > 0)
            g_assert_true(TIFFReadDirectory(tif));
        guint32 tw = 0, th = 0, rows_per_strip = 0;
        guint16 bps = 0, spp = 0, format = 0, compression = 0, photometric = 0, planar = 0;
        guint16 page_no = 0, n_pages = 0;
        char *desc = NULL;
        g_assert_true(TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &tw));
        g_assert_true(TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &th));
        g_assert_cmpuint(tw, ==, w);
        g_assert_cmpuint(th, ==, h);
        g_assert_true(TIFFGetField(tif, TIFFTAG_BITSPERSAMPLE, &bps) && bps == 32);
        g_assert_true(TIFFGetField(tif, TIFFTAG_SAMPLESPERPIXEL, &spp) && spp == 1);
        g_assert_true(TIFFGetField(tif, TIFFTAG_SAMPLEFORMAT, &format));
        g_assert_cmpuint(format, ==, SAMPLEFORMAT_IEEEFP);
        g_assert_true(TIFFGetField(tif, TIFFTAG_COMPRESSION, &compression));
        g_assert_cmpuint(compression, ==, COMPRESSION_NONE);
        g_assert_true(TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &photometric));
        g_assert_cmpuint(photometric, ==, PHOTOMETRIC_MINISBLACK);
        g_assert_true(TIFFGetField(tif, TIFFTAG_PLANARCONFIG, &planar));
        g_assert_cmpuint(planar, ==, PLANARCONFIG_CONTIG);
        g_assert_true(TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc));
        g_assert_cmpstr(desc, ==, description);
        if (frames > 1) {
            g_assert_true(TIFFGetField(tif, TIFFTAG_PAGENUMBER, &page_no, &n_pages));
            g_assert_cmpuint(page_no, ==, f);
            g_assert_cmpuint(n_pages, ==, frames);
        }
        /* large strips: at least 1 MiB of rows, or the whole page */
        g_assert_true(TIFFGetField(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip));
        g_assert_cmpuint(MIN(rows_per_strip, h) * (gsize)w * sizeof(float), >=,
                         MIN(page_bytes, (gsize)1 << 20));
        tmsize_t at = 0;
        for (guint32 s = 0; s < TIFFNumberOfStrips(tif); s++) {
            tmsize_t got = TIFFReadEncodedStrip(tif, s, page + at, (tmsize_t)page_bytes - at);
            g_assert_cmpint(got, >, 0);
            at += got;
        }
        g_assert_cmpint(at, ==, (tmsize_t)page_bytes);
        g_assert_true(memcmp(page, map + (gsize)f * w * h, page_bytes) == 0);
    }
    g_assert_false(TIFFReadDirectory(tif)); /* no page more */
    TIFFClose(tif);
}

static void test_float_writer(Fixture *fx, gconstpointer d)
{
    g_autofree char *path = g_build_filename(fx->dir, "maps.tif", NULL);
    g_autoptr(fm_dataset) small = make_dataset(FM_PIXEL_F32, 37, 23, 5);
    g_assert_true(fm_tiff_write_float32(path, small->data, 37, 23, 5, "map=a; unit=s", NULL));
    check_float_pages(path, small->data, 37, 23, 5, "map=a; unit=s");
    g_assert_true(fm_tiff_write_float32(path, small->data, 37, 23, 1, "one page", NULL));
    check_float_pages(path, small->data, 37, 23, 1, "one page");
    /* 2049 x 2053 float32 is 16.05 MiB: more than one strip */
    g_autoptr(fm_dataset) big = make_dataset(FM_PIXEL_F32, 2049, 2053, 1);
    g_assert_true(fm_tiff_write_float32(path, big->data, 2049, 2053, 1, "big", NULL));
    check_float_pages(path, big->data, 2049, 2053, 1, "big");
    TIFF *tif = TIFFOpen(path, "r");
    g_assert_cmpuint(TIFFNumberOfStrips(tif), >, 1);
    TIFFClose(tif);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    assert_same_data(big, back);
}

/* A last page whose link points back to the first: the pages up to the loop, no endless read. */
static void test_page_loop(Fixture *fx, gconstpointer d)
{
    g_autoptr(fm_dataset) ds = make_dataset(FM_PIXEL_U16, 8, 6, 3);
    g_autofree char *path = g_build_filename(fx->dir, "loop.tif", NULL);
    g_assert_true(fm_tiff_write_dataset(path, ds, NULL, NULL));
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_assert_true(bytes[0] == 'I'); /* written on a little-endian host */
    guint32 first, at;
    memcpy(&first, bytes + 4, 4);
    at = first;
    for (int page = 0; page < 3; page++) {
        guint16 count;
        memcpy(&count, bytes + at, 2);
        guint32 link_at = at + 2 + 12u * count;
        memcpy(&at, bytes + link_at, 4);
        if (page == 2) {
            g_assert_cmpuint(at, ==, 0);
            memcpy(bytes + link_at, &first, 4);
        }
    }
    g_assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
    g_test_message("a looping page chain: %s", back ? "3 pages read" : error->message);
    if (back) {
        assert_same_data(ds, back);
    } else {
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
        g_assert_nonnull(strstr(error->message, path));
    }
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

/* Moves the second page's one strip to 10 bytes before the end of the file: its directory
 * stays whole, the strip is cut. */
static void expect_strip_cut(const char *path, const char *bytes, gsize len)
{
    g_autofree char *copy = g_memdup2(bytes, len);
    g_assert_true(copy[0] == 'I'); /* written on a little-endian host */
    guint32 at;
    memcpy(&at, copy + 4, 4);
    guint16 count;
    memcpy(&count, copy + at, 2);
    memcpy(&at, copy + at + 2 + 12u * count, 4); /* page 2 */
    memcpy(&count, copy + at, 2);
    gboolean patched = FALSE;
    for (guint16 e = 0; e < count; e++) {
        guint8 *entry = (guint8 *)copy + at + 2 + 12u * e;
        guint16 tag;
        guint32 n;
        memcpy(&tag, entry, 2);
        memcpy(&n, entry + 4, 4);
        if (tag == TIFFTAG_STRIPOFFSETS && n == 1) {
            guint32 offset = (guint32)len - 10;
            memcpy(entry + 8, &offset, 4);
            patched = TRUE;
        }
    }
    g_assert_true(patched);
    g_assert_true(g_file_set_contents(path, copy, (gssize)len, NULL));
    expect_bad_input(path, "page 2 strip 1 could not be read");
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
    /* A page whose strip lies past the end of the file, its directory intact (files that
     * put directories before the data are cut this way). */
    g_assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
    expect_strip_cut(path, bytes, len);
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
    ADD("/io/tiff/libtiff-strips", test_libtiff_strips);
    ADD("/io/tiff/12bit-strips", test_12bit_strips);
    ADD("/io/tiff/float-writer", test_float_writer);
    ADD("/io/tiff/page-loop", test_page_loop);
    ADD("/io/tiff/truncated", test_truncated);
    ADD("/io/tiff/empty", test_empty);
    ADD("/io/tiff/not-tiff", test_not_tiff);
    ADD("/io/tiff/page-sizes", test_page_sizes);
    ADD("/io/tiff/rgb-rejected", test_rgb_rejected);
    return g_test_run();
}
