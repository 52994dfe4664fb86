/* TIFF reading and writing with libtiff: pages of 8..16-bit unsigned or float32 samples. */
#include "tiff.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <tiffio.h>

#include "app/core/error.h"
#include "app/core/io/io_threads.h"

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
    if (pi->bps == 12) { /* the common camera depth: two samples in three bytes */
        guint32 i = 0;
        for (; i + 1 < n; i += 2, src += 3) {
            out[i] = (guint16)(src[0] << 4 | src[1] >> 4);
            out[i + 1] = (guint16)((src[1] & 0x0f) << 8 | src[2]);
        }
        if (i < n)
            out[i] = (guint16)(src[0] << 4 | src[1] >> 4);
        return;
    }
    guint64 bit = 0;
    for (guint32 i = 0; i < n; i++) {
        guint32 v = 0;
        for (int b = 0; b < pi->bps; b++, bit++)
            v = (v << 1) | ((src[bit >> 3] >> (7 - (bit & 7))) & 1u);
        out[i] = (guint16)v;
    }
}

static gboolean strip_failed(const char *path, int page, guint32 strip, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: truncated: page %d strip %u could not be read (%s)"), path, page, strip + 1,
                last_message());
    return FALSE;
}

/* Whole-byte samples go from the file straight into their rows of dst, a strip at a time:
 * uncompressed strips with one read each (TIFFReadRawStrip, then the byte swap libtiff would
 * have done), others decoded by libtiff in place. Packed samples (10, 12, 14 bits) pass
 * through one strip buffer to be widened. */
static gboolean read_strips(TIFF *tif, const char *path, int page, const page_info *pi, guint8 *dst,
                            GError **error)
{
    gsize dst_row = (gsize)pi->width * fm_pixel_size(pi->type);
    tmsize_t row_bytes = TIFFScanlineSize(tif);
    tmsize_t strip_size = TIFFStripSize(tif);
    guint32 rows_per_strip = pi->height;
    TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rows_per_strip);
    rows_per_strip = MIN(MAX(rows_per_strip, 1u), pi->height);
    gboolean whole_bytes = pi->bps == 8 || pi->bps == 16 || pi->bps == 32;
    guint16 compression = COMPRESSION_NONE, fill_order = FILLORDER_MSB2LSB;
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetFieldDefaulted(tif, TIFFTAG_FILLORDER, &fill_order);
    gboolean raw =
        whole_bytes && compression == COMPRESSION_NONE && fill_order == FILLORDER_MSB2LSB;
    g_autofree guint8 *buf =
        !whole_bytes && strip_size > 0 ? g_try_malloc((gsize)strip_size) : NULL;
    if (row_bytes <= 0 || (whole_bytes ? (gsize)row_bytes != dst_row : buf == NULL)) {
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
        tmsize_t want = (tmsize_t)rows * row_bytes;
        if (whole_bytes) {
            guint8 *out = dst + (gsize)row0 * dst_row;
            tmsize_t got =
                raw ? TIFFReadRawStrip(tif, s, out, want) : TIFFReadEncodedStrip(tif, s, out, want);
            if (got < want)
                return strip_failed(path, page, s, error);
            if (raw && TIFFIsByteSwapped(tif) && pi->bps == 16)
                TIFFSwabArrayOfShort((guint16 *)out, (tmsize_t)rows * pi->width);
            else if (raw && TIFFIsByteSwapped(tif) && pi->bps == 32)
                TIFFSwabArrayOfLong((guint32 *)out, (tmsize_t)rows * pi->width);
            continue;
        }
        if (TIFFReadEncodedStrip(tif, s, buf, strip_size) < want)
            return strip_failed(path, page, s, error);
        for (guint32 r = 0; r < rows; r++)
            unpack_row(buf + (gsize)r * row_bytes, pi, pi->width,
                       dst + (gsize)(row0 + r) * dst_row);
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
    gboolean whole_bytes = pi->bps == 8 || pi->bps == 16 || pi->bps == 32;
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
                const guint8 *src = buf + (gsize)r * row_bytes;
                if (!whole_bytes) {
                    unpack_row(src, pi, tw, row);
                    src = row;
                }
                memcpy(dst + ((gsize)(y0 + r) * pi->width + x0) * px, src, (gsize)w * px);
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

/* Counts the pages by following the chain of page directories in the file itself, which costs
 * two small reads a page. Knowing the count first lets every page be decoded straight into its
 * place in the dataset. And libtiff treats a link to a page beyond the end of the file as "no
 * more pages", which would make a cut multi-page file look complete; here it is an error. A
 * link back to an earlier page ends the chain, as it does for libtiff. */
static gboolean count_pages(const char *path, TIFF *tif, int *n_pages, GError **error)
{
    gboolean big = TIFFIsBigTIFF(tif), swap = TIFFIsByteSwapped(tif);
    int count_bytes = big ? 8 : 2, entry_bytes = big ? 20 : 12, link_bytes = big ? 8 : 4;
    FILE *f = g_fopen(path, "rb");
    if (f == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    g_strerror(errno));
        return FALSE;
    }
    fseeko(f, 0, SEEK_END);
    guint64 size = (guint64)ftello(f), offset = 0, count = 0;
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    int page = 0;
    gboolean ok = read_field(f, big ? 8 : 4, link_bytes, swap, &offset);
    while (ok && offset != 0 && !g_hash_table_contains(seen, &offset)) {
        page++;
        g_hash_table_add(seen, g_memdup2(&offset, sizeof offset));
        ok = read_field(f, offset, count_bytes, swap, &count) &&
             count <= (size - MIN(offset, size)) / (guint64)entry_bytes &&
             offset + count_bytes + count * entry_bytes + link_bytes <= size &&
             read_field(f, offset + count_bytes + count * entry_bytes, link_bytes, swap, &offset);
    }
    fclose(f);
    if (!ok || page == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated: page %d could not be read (%s)"), path, MAX(page, 1),
                    _("it lies beyond the end of the file"));
        return FALSE;
    }
    *n_pages = page;
    return TRUE;
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

/* Reads pages 1..n_pages (page 1 is the current directory, described by first) into pixels. */
static gboolean read_pages(TIFF *tif, const char *path, int n_pages, const page_info *first,
                           guint8 *pixels, GError **error)
{
    gsize page_bytes = (gsize)first->width * first->height * fm_pixel_size(first->type);
    for (int page = 1; page <= n_pages; page++) {
        page_info pi = *first;
        if (page > 1) {
            tiff_message[0] = '\0';
            if (!TIFFReadDirectory(tif)) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                            _("%s: truncated: page %d could not be read (%s)"), path, page,
                            last_message());
                return FALSE;
            }
            if (!read_page_info(tif, path, page, &pi, error))
                return FALSE;
            if (pi.width != first->width || pi.height != first->height) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                            _("%s: page %d is %ux%u, page 1 is %ux%u"), path, page, pi.width,
                            pi.height, first->width, first->height);
                return FALSE;
            }
            if (pi.type != first->type || pi.bps != first->bps) {
                g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                            _("%s: page %d has %u-bit samples, page 1 has %u-bit"), path, page,
                            pi.bps, first->bps);
                return FALSE;
            }
        }
        /* PLANARCONFIG_SEPARATE with one sample per pixel is byte-identical to contiguous. */
        guint8 *dst = pixels + page_bytes * (gsize)(page - 1);
        if (!(TIFFIsTiled(tif) ? read_tiles(tif, path, page, &pi, dst, error)
                               : read_strips(tif, path, page, &pi, dst, error)))
            return FALSE;
    }
    return TRUE;
}

fm_dataset *fm_tiff_read(const char *path, GError **error)
{
    TIFF *tif = open_for_reading(path, error);
    if (tif == NULL)
        return NULL;
    page_info first;
    int n_pages = 0;
    if (!read_page_info(tif, path, 1, &first, error) || !count_pages(path, tif, &n_pages, error)) {
        TIFFClose(tif);
        return NULL;
    }
    char *desc = NULL;
    g_autofree char *description =
        TIFFGetField(tif, TIFFTAG_IMAGEDESCRIPTION, &desc) && desc ? g_strdup(desc) : NULL;
    gsize sizes[3] = {first.width, first.height, (gsize)n_pages};
    g_autoptr(fm_dataset) ds = fm_dataset_new(first.type, 3, sizes, NULL);
    ds->source_path = g_canonicalize_filename(path, NULL);
    fm_io_hash *hash = fm_io_hash_begin(ds);
    gboolean ok = read_pages(tif, path, n_pages, &first, ds->data, error);
    TIFFClose(tif);
    ok = fm_io_hash_end(hash, ok ? error : NULL) && ok;
    if (!ok)
        return NULL;
    ds->bits_per_sample = first.bps;
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("px");
    ds->dims[2].unit = g_strdup("frame");
    if (description)
        fm_dataset_set_meta(ds, "description", description);
    fm_dataset_set_meta(ds, "format", "tiff");
    return g_steal_pointer(&ds);
}

/* The largest strip the writer makes; float32 maps of up to about 2000 x 2000 are one strip. */
#define FM_TIFF_STRIP_BYTES ((gsize)16 << 20)

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
    gsize frame_bytes = (gsize)width * height * px, row_bytes = (gsize)width * px;
    /* Strips of whole pages up to FM_TIFF_STRIP_BYTES: one write per strip here and one read
     * per strip for any reader, where libtiff's default 8 KiB strips cost a system call each. */
    guint32 rows_per_strip = (guint32)CLAMP(FM_TIFF_STRIP_BYTES / row_bytes, 1, (gsize)height);
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
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows_per_strip);
        if (n_frames > 1) {
            TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
            TIFFSetField(tif, TIFFTAG_PAGENUMBER, (guint16)f, (guint16)n_frames);
        }
        if (description)
            TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, description);
        /* Uncompressed, libtiff writes each strip from our buffer with one write call. */
        const guint8 *frame = (const guint8 *)data + frame_bytes * (gsize)f;
        for (guint32 s = 0, row = 0; row < (guint32)height && ok; s++, row += rows_per_strip) {
            tmsize_t bytes = (tmsize_t)MIN(rows_per_strip, (guint32)height - row) * row_bytes;
            ok = TIFFWriteEncodedStrip(tif, s, (void *)(frame + (gsize)row * row_bytes), bytes) ==
                 bytes;
        }
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
