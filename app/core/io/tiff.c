/* TIFF reading and writing with libtiff: pages of 8..16-bit unsigned or float32 samples. */
#include "tiff.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <tiffio.h>

#include "app/core/error.h"

/* libtiff reports problems through process-wide handlers that print to stderr by default.
 * We route errors into a per-thread buffer (readers run on worker threads) so the message can
 * go into the GError, and drop warnings (unknown private tags are common and harmless). */
static _Thread_local char tiff_message[512];

static void capture_error(const char *module, const char *fmt, va_list ap)
{
    if (tiff_message[0] != '\0')
        return; /* keep the first, it names the cause; later ones are consequences */
    g_vsnprintf(tiff_message, sizeof tiff_message, fmt, ap);
}

static void ignore_warning(const char *module, const char *fmt, va_list ap) {}

static void install_handlers(void)
{
    static gsize done = 0;
    if (g_once_init_enter(&done)) {
        TIFFSetErrorHandler(capture_error);
        TIFFSetWarningHandler(ignore_warning);
        g_once_init_leave(&done, 1);
    }
    tiff_message[0] = '\0';
}

static const char *last_message(void)
{
    return tiff_message[0] ? tiff_message : _("unknown libtiff error");
}

/* Distinguishes "not a TIFF at all" from a damaged TIFF by the 4-byte header magic. */
static gboolean check_header(const char *path, GError **error)
{
    FILE *f = g_fopen(path, "rb");
    if (f == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    g_strerror(errno));
        return FALSE;
    }
    unsigned char m[4] = {0};
    size_t n = fread(m, 1, 4, f);
    fclose(f);
    if (n == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: not a TIFF file (empty)"), path);
        return FALSE;
    }
    gboolean le = n == 4 && m[0] == 'I' && m[1] == 'I' && (m[2] == 42 || m[2] == 43) && m[3] == 0;
    gboolean be = n == 4 && m[0] == 'M' && m[1] == 'M' && m[2] == 0 && (m[3] == 42 || m[3] == 43);
    if (!le && !be) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: not a TIFF file"), path);
        return FALSE;
    }
    return TRUE;
}

typedef struct {
    guint32 width, height;
    guint16 bps, spp, format, planar;
    fm_pixel_type type;
} page_info;

static gboolean read_page_info(TIFF *tif, const char *path, int page, page_info *pi, GError **error)
{
    memset(pi, 0, sizeof *pi);
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &pi->width) ||
        !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &pi->height) || pi->width == 0 || pi->height == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: page %d has no image size"), path,
                    page);
        return FALSE;
    }
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &pi->bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &pi->spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &pi->format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &pi->planar);
    if (pi->spp != 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: page %d has %u samples per pixel (colour?); only single-channel "
                      "images are supported"),
                    path, page, pi->spp);
        return FALSE;
    }
    if (pi->format == SAMPLEFORMAT_IEEEFP && pi->bps == 32) {
        pi->type = FM_PIXEL_F32;
    } else if (pi->format == SAMPLEFORMAT_UINT && pi->bps == 8) {
        pi->type = FM_PIXEL_U8;
    } else if (pi->format == SAMPLEFORMAT_UINT && pi->bps > 8 && pi->bps <= 16) {
        pi->type = FM_PIXEL_U16; /* 10, 12 and 14-bit packed samples are widened */
    } else {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: page %d has %u-bit %s samples; supported are 8..16-bit unsigned and "
                      "32-bit float"),
                    path, page, pi->bps,
                    pi->format == SAMPLEFORMAT_INT      ? "signed"
                    : pi->format == SAMPLEFORMAT_IEEEFP ? "float"
                                                        : "unsigned");
        return FALSE;
    }
    return TRUE;
}

/* Copies n samples of one decoded row into dst (typed), unpacking MSB-first packed samples
 * of odd widths such as 12 bits. libtiff has already byte-swapped 16 and 32-bit samples. */
static void unpack_row(const guint8 *src, const page_info *pi, guint32 n, void *dst)
{
    if (pi->bps == 8 || pi->bps == 16 || pi->bps == 32) {
        memcpy(dst, src, (gsize)n * (pi->bps / 8));
        return;
    }
    guint16 *out = dst;
    guint64 bit = 0;
    for (guint32 i = 0; i < n; i++) {
        guint32 v = 0;
        for (int b = 0; b < pi->bps; b++, bit++)
            v = (v << 1) | ((src[bit >> 3] >> (7 - (bit & 7))) & 1u);
        out[i] = (guint16)v;
    }
}

static gboolean read_strips(TIFF *tif, const char *path, int page, const page_info *pi, guint8 *dst,
                            GError **error)
{
    gsize px = fm_pixel_size(pi->type);
    tmsize_t row_bytes = TIFFScanlineSize(tif);
    tmsize_t strip_size = TIFFStripSize(tif);
    guint32 rows_per_strip = pi->height;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    rows_per_strip = MIN(MAX(rows_per_strip, 1u), pi->height);
    g_autofree guint8 *buf = strip_size > 0 ? g_try_malloc((gsize)strip_size) : NULL;
    if (buf == NULL || row_bytes <= 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: page %d has an unusable strip layout"), path, page);
        return FALSE;
    }
    guint32 n_strips = TIFFNumberOfStrips(tif);
    for (guint32 s = 0; s < n_strips; s++) {
        guint32 row0 = s * rows_per_strip;
        if (row0 >= pi->height)
            break;
        guint32 rows = MIN(rows_per_strip, pi->height - row0);
        tmsize_t got = TIFFReadEncodedStrip(tif, s, buf, strip_size);
        if (got < (tmsize_t)rows * row_bytes) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: truncated: page %d strip %u could not be read (%s)"), path, page,
                        s + 1, last_message());
            return FALSE;
        }
        for (guint32 r = 0; r < rows; r++)
            unpack_row(buf + (gsize)r * row_bytes, pi, pi->width,
                       dst + ((gsize)(row0 + r) * pi->width) * px);
    }
    return TRUE;
}

static gboolean read_tiles(TIFF *tif, const char *path, int page, const page_info *pi, guint8 *dst,
                           GError **error)
{
    gsize px = fm_pixel_size(pi->type);
    guint32 tw = 0, th = 0;
    TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
    TIFFGetField(tif, TIFFTAG_TILELENGTH, &th);
    tmsize_t tile_size = TIFFTileSize(tif);
    tmsize_t row_bytes = TIFFTileRowSize(tif);
    g_autofree guint8 *buf = tile_size > 0 ? g_try_malloc((gsize)tile_size) : NULL;
    g_autofree guint8 *row = g_try_malloc((gsize)MAX(tw, 1u) * px);
    if (tw == 0 || th == 0 || buf == NULL || row == NULL || row_bytes <= 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: page %d has an unusable tile layout"), path, page);
        return FALSE;
    }
    for (guint32 y0 = 0; y0 < pi->height; y0 += th) {
        for (guint32 x0 = 0; x0 < pi->width; x0 += tw) {
            guint32 tile = TIFFComputeTile(tif, x0, y0, 0, 0);
            if (TIFFReadEncodedTile(tif, tile, buf, tile_size) < tile_size) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                            _("%s: truncated: page %d tile %u could not be read (%s)"), path, page,
                            tile + 1, last_message());
                return FALSE;
            }
            guint32 w = MIN(tw, pi->width - x0), h = MIN(th, pi->height - y0);
            for (guint32 r = 0; r < h; r++) {
                unpack_row(buf + (gsize)r * row_bytes, pi, tw, row);
                memcpy(dst + ((gsize)(y0 + r) * pi->width + x0) * px, row, (gsize)w * px);
            }
        }
    }
    return TRUE;
}

/* Reads an unsigned 2, 4 or 8-byte field of the file at offset, in the file's byte order. */
static gboolean read_field(FILE *f, guint64 offset, int bytes, gboolean swap, guint64 *out)
{
    guint8 buf[8];
    if (fseeko(f, (off_t)offset, SEEK_SET) != 0 || fread(buf, 1, (size_t)bytes, f) != (size_t)bytes)
        return FALSE;
    if (bytes == 2) {
        guint16 v;
        memcpy(&v, buf, 2);
        if (swap)
            TIFFSwabShort(&v);
        *out = v;
    } else if (bytes == 4) {
        guint32 v;
        memcpy(&v, buf, 4);
        if (swap)
            TIFFSwabLong(&v);
        *out = v;
    } else {
        memcpy(out, buf, 8);
        if (swap)
            TIFFSwabLong8(out);
    }
    return TRUE;
}

/* libtiff treats a link to a next page that lies beyond the end of the file as "no more
 * pages", which would make a cut multi-page file look complete. So we follow the current
 * page's link ourselves: TRUE when it names a page whose directory the file does not hold. */
static gboolean next_page_missing(const char *path, TIFF *tif)
{
    gboolean big = TIFFIsBigTIFF(tif), swap = TIFFIsByteSwapped(tif);
    int count_bytes = big ? 8 : 2, entry_bytes = big ? 20 : 12, link_bytes = big ? 8 : 4;
    FILE *f = g_fopen(path, "rb");
    if (f == NULL)
        return FALSE;
    fseeko(f, 0, SEEK_END);
    guint64 size = (guint64)ftello(f);
    guint64 diroff = TIFFCurrentDirOffset(tif), count = 0, link = 0, next_count = 0;
    gboolean missing =
        !read_field(f, diroff, count_bytes, swap, &count) ||
        !read_field(f, diroff + count_bytes + count * entry_bytes, link_bytes, swap, &link) ||
        (link != 0 && (!read_field(f, link, count_bytes, swap, &next_count) ||
                       link + count_bytes + next_count * entry_bytes + link_bytes > size));
    fclose(f);
    return missing;
}

/* Opens path for reading after the header check, with libtiff's messages captured. */
static TIFF *open_for_reading(const char *path, GError **error)
{
    if (!check_header(path, error))
        return NULL;
    install_handlers();
    TIFF *tif = TIFFOpen(path, "r");
    if (tif == NULL)
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: damaged or truncated TIFF: %s"),
                    path, last_message());
    return tif;
}

fm_dataset *fm_tiff_read(const char *path, GError **error)
{
    TIFF *tif = open_for_reading(path, error);
    if (tif == NULL)
        return NULL;
    page_info first = {0};
    GByteArray *pixels = g_byte_array_new();
    g_autofree char *description = NULL;
    int page = 0;
    gboolean ok = TRUE, more = FALSE;
    do {
        page++;
        page_info pi;
        if (!read_page_info(tif, path, page, &pi, error)) {
            ok = FALSE;
            break;
        }
        if (page == 1) {
            first = pi;
            char *desc = NULL;
            if (TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc)
                description = g_strdup(desc);
        } else if (pi.width != first.width || pi.height != first.height) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: page %d is %ux%u, page 1 is %ux%u"), path, page, pi.width, pi.height,
                        first.width, first.height);
            ok = FALSE;
            break;
        } else if (pi.type != first.type || pi.bps != first.bps) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: page %d has %u-bit samples, page 1 has %u-bit"), path, page, pi.bps,
                        first.bps);
            ok = FALSE;
            break;
        }
        /* PLANARCONFIG_SEPARATE with one sample per pixel is byte-identical to contiguous. */
        gsize page_bytes = (gsize)pi.width * pi.height * fm_pixel_size(pi.type);
        gsize old = pixels->len;
        g_byte_array_set_size(pixels, (guint)(old + page_bytes));
        guint8 *dst = pixels->data + old;
        ok = TIFFIsTiled(tif) ? read_tiles(tif, path, page, &pi, dst, error)
                              : read_strips(tif, path, page, &pi, dst, error);
        if (!ok)
            break;
        tiff_message[0] = '\0';
        more = next_page_missing(path, tif);
    } while (TIFFReadDirectory(tif));
    if (ok && more) {
        /* TIFFReadDirectory returns 0 both at the last page and when the link to the next page
         * points past the end of a cut file; the link, read by us, tells them apart. */
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated: page %d could not be read (%s)"), path, page + 1,
                    tiff_message[0] ? tiff_message : _("it lies beyond the end of the file"));
        ok = FALSE;
    }
    TIFFClose(tif);
    if (!ok) {
        g_byte_array_unref(pixels);
        return NULL;
    }
    gsize sizes[3] = {first.width, first.height, (gsize)page};
    fm_dataset *ds = fm_dataset_new(first.type, 3, sizes, NULL);
    memcpy(ds->data, pixels->data, pixels->len);
    g_byte_array_unref(pixels);
    ds->bits_per_sample = first.bps;
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("px");
    ds->dims[2].unit = g_strdup("frame");
    ds->source_path = g_canonicalize_filename(path, NULL);
    if (description)
        fm_dataset_set_meta(ds, "description", description);
    if (!fm_dataset_hash_file(ds, error)) {
        fm_dataset_unref(ds);
        return NULL;
    }
    return ds;
}

static gboolean write_pages(const char *path, const void *data, fm_pixel_type type, int width,
                            int height, int n_frames, const char *description, GError **error)
{
    if (width <= 0 || height <= 0 || n_frames <= 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: nothing to write (%dx%d, %d frames)"),
                    path, width, height, n_frames);
        return FALSE;
    }
    install_handlers();
    gsize px = fm_pixel_size(type);
    gsize frame_bytes = (gsize)width * height * px;
    /* BigTIFF only when the classic 4 GiB offsets would overflow. */
    const char *mode = (frame_bytes * (gsize)n_frames > ((gsize)1 << 31) * 3 / 2) ? "w8" : "w";
    TIFF *tif = TIFFOpen(path, mode);
    if (tif == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, last_message());
        return FALSE;
    }
    gboolean ok = TRUE;
    for (int f = 0; f < n_frames && ok; f++) {
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (guint32)width);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (guint32)height);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (guint16)(px * 8));
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)1);
        TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
                     type == FM_PIXEL_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tif, 0));
        if (n_frames > 1) {
            TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
            TIFFSetField(tif, TIFFTAG_PAGENUMBER, (guint16)f, (guint16)n_frames);
        }
        if (description)
            TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description);
        const guint8 *frame = (const guint8 *)data + frame_bytes * (gsize)f;
        for (int r = 0; r < height && ok; r++)
            ok =
                TIFFWriteScanline(tif, (void *)(frame + (gsize)r * width * px), (guint32)r, 0) == 1;
        ok = ok && TIFFWriteDirectory(tif);
    }
    TIFFClose(tif);
    if (ok && tiff_message[0] != '\0')
        ok = FALSE;
    if (!ok) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: write failed: %s"), path, last_message());
        g_unlink(path);
    }
    return ok;
}

gboolean fm_tiff_write_dataset(const char *path, const fm_dataset *ds, const char *description,
                               GError **error)
{
    return write_pages(path, ds->data, ds->type, fm_dataset_width(ds), fm_dataset_height(ds),
                       fm_dataset_frames(ds), description, error);
}

gboolean fm_tiff_write_float32(const char *path, const float *data, int width, int height,
                               int n_frames, const char *description, GError **error)
{
    return write_pages(path, data, FM_PIXEL_F32, width, height, n_frames, description, error);
}

char *fm_tiff_read_description(const char *path, GError **error)
{
    TIFF *tif = open_for_reading(path, error);
    if (tif == NULL)
        return NULL;
    char *desc = NULL;
    char *copy = TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc ? g_strdup(desc) : NULL;
    TIFFClose(tif);
    return copy;
}
