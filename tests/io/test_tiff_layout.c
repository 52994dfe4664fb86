/* The map writer's file layout, which its speed rests on: a page of up to 16 MiB is one
 * uncompressed strip, every page's samples one contiguous run in page order, and the file no
 * larger than the samples plus a small directory per page. */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <tiffio.h>

#include "app/core/export.h"
#include "app/core/io/tiff.h"
#include "app/core/result.h"

static char *make_dir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("fm-tiff-layout-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

/* Each page: one strip, its byte count the whole page, its offset right after the previous
 * page's samples or their directory; returns the file's size. */
static goffset check_layout(const char *path, int width, int height, int frames,
                            guint32 expected_strips_per_page)
{
    gsize page_bytes = (gsize)width * height * sizeof(float);
    TIFF *tif = TIFFOpen(path, "rc"); /* c: the strips as stored, not chopped into rows */
    g_assert_nonnull(tif);
    guint64 previous_end = 0;
    for (int f = 0; f < frames; f++) {
        if (f > 0)
            g_assert_true(TIFFReadDirectory(tif));
        guint16 compression = 0;
        g_assert_true(TIFFGetField(tif, TIFFTAG_COMPRESSION, &compression));
        g_assert_cmpuint(compression, ==, COMPRESSION_NONE);
        g_assert_false(TIFFIsTiled(tif));
        g_assert_cmpuint(TIFFNumberOfStrips(tif), ==, expected_strips_per_page);
        guint64 *offsets = NULL, *counts = NULL;
        g_assert_true(TIFFGetField(tif, TIFFTAG_STRIPOFFSETS, &offsets));
        g_assert_true(TIFFGetField(tif, TIFFTAG_STRIPBYTECOUNTS, &counts));
        guint64 total = 0;
        for (guint32 s = 0; s < expected_strips_per_page; s++) {
            /* strips follow each other with no gap: the page is one read for any reader */
            if (s > 0)
                g_assert_cmpuint(offsets[s], ==, offsets[s - 1] + counts[s - 1]);
            total += counts[s];
        }
        g_assert_cmpuint(total, ==, page_bytes);
        g_assert_cmpuint(offsets[0], >=, previous_end); /* pages in order */
        previous_end = offsets[0] + total;
    }
    g_assert_false(TIFFReadDirectory(tif));
    TIFFClose(tif);
    GStatBuf st;
    g_assert_cmpint(g_stat(path, &st), ==, 0);
    return st.st_size;
}

static fm_map *make_map(int width, int height, int frames)
{
    fm_map *map = fm_map_new("tau", "ns", width, height, frames);
    for (gsize i = 0; i < (gsize)width * height * frames; i++)
        map->data[i] = (float)i * 0.5f - 3.0f;
    return map;
}

/* A 1392 x 1040 page (5.8 MB, the LSI camera's) and a small one: one strip per page. */
static void test_one_strip_per_page(void)
{
    g_autofree char *dir = make_dir();
    const int sizes[][3] = {{1392, 1040, 3}, {37, 23, 4}, {2048, 2048, 1}};
    for (guint k = 0; k < G_N_ELEMENTS(sizes); k++) {
        int w = sizes[k][0], h = sizes[k][1], frames = sizes[k][2];
        fm_map *map = make_map(w, h, frames);
        g_autofree char *path = g_build_filename(dir, "map.tif", NULL);
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_export_tiff(path, map, "flim.iem", NULL, &error));
        g_assert_no_error(error);
        goffset size = check_layout(path, w, h, frames, 1);
        gsize samples = (gsize)w * h * frames * sizeof(float);
        /* header and one directory (with its description) per page: well under 1 KiB each */
        g_assert_cmpint(size, >=, (goffset)samples);
        g_assert_cmpint(size, <=, (goffset)(samples + 8 + 1024 * (gsize)frames));
        /* and every reader of maps still reads it back bit for bit */
        g_autoptr(fm_dataset) back = fm_tiff_read(path, &error);
        g_assert_no_error(error);
        g_assert_cmpint(memcmp(back->data, map->data, samples), ==, 0);
        g_unlink(path);
        fm_map_free(map);
    }
    g_rmdir(dir);
}

/* Past 16 MiB a page is cut into strips of whole rows, each of at most 16 MiB, still one
 * contiguous run: 2100 x 2100 float32 (16.8 MiB) is two strips. */
static void test_large_page_strips(void)
{
    g_autofree char *dir = make_dir();
    fm_map *map = make_map(2100, 2100, 1);
    g_autofree char *path = g_build_filename(dir, "big.tif", NULL);
    g_assert_true(fm_export_tiff(path, map, "lsi.spatial", NULL, NULL));
    check_layout(path, 2100, 2100, 1, 2);
    g_unlink(path);
    g_rmdir(dir);
    fm_map_free(map);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/io/tiff-layout/one-strip-per-page", test_one_strip_per_page);
    g_test_add_func("/io/tiff-layout/large-page-strips", test_large_page_strips);
    return g_test_run();
}
