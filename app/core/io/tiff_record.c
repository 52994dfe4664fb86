/* Frames appended to a BigTIFF as they arrive (live recordings). Each page is written with its
 * directory at once, so the file on disk is a complete stack after every page: a camera lost or
 * a process killed mid-run leaves the frames recorded so far readable. libtiff links a new
 * directory into the chain before it writes it; our own file I/O holds that link back until the
 * directory is on disk, so that no moment (a kill, a reader of the growing file) finds a link
 * to a directory not there yet. */
#include "app/core/io/tiff_record.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <math.h>
#include <string.h>
#include <tiffio.h>
#include <unistd.h>

#include "app/core/error.h"

struct fm_tiff_record {
    TIFF *tif;
    char *path;
    char *description;
    int width, height;
    fm_pixel_type type;
    guint64 pages;
    /* a map stack (fm_tiff_record_open_stack): the offline writer's strips and page numbers */
    gboolean stack;
    guint32 rows_per_strip;
    guint16 page_total;   /* written in PageNumber; set to the pages at close */
    GArray *page_offsets; /* gint64 per page: where its samples start, -1 if split */
    guint16 *scratch;     /* Mono12Packed frames unpacked */
    /* the file, written through our procedures (TIFFClientOpenExt) */
    int fd;
    toff_t pos, end;
    gboolean hold_links; /* small rewrites of written bytes wait in held (a directory link) */
    GByteArray *held;    /* (toff_t at, guint32 n, n bytes) ... */
    char message[512];   /* libtiff's first error on this handle */
};

/* libtiff's errors on this file, kept with the record rather than printed (handled: 1). */
static int record_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    fm_tiff_record *record = user;
    if (record->message[0] == '\0')
        g_vsnprintf(record->message, sizeof record->message, fmt, ap);
    return 1;
}

static int record_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    return 1;
}

static const char *record_message(const fm_tiff_record *record)
{
    return record->message[0] ? record->message : _("unknown libtiff error");
}

fm_pixel_type fm_tiff_record_frame_type(fm_pixfmt format)
{
    return format == FM_PIXFMT_MONO8 ? FM_PIXEL_U8 : FM_PIXEL_U16;
}

static fm_tiff_record *record_open(const char *path, int width, int height, fm_pixel_type type,
                                   const char *description, const char *mode, GError **error);

/* ---- the file's I/O: pread/pwrite at our own position, links held back ---- */

static tmsize_t io_read(thandle_t handle, void *buf, tmsize_t size)
{
    fm_tiff_record *r = handle;
    ssize_t got = pread(r->fd, buf, (size_t)size, (off_t)r->pos);
    if (got > 0)
        r->pos += (toff_t)got;
    return got;
}

static tmsize_t io_write(thandle_t handle, void *buf, tmsize_t size)
{
    fm_tiff_record *r = handle;
    if (r->hold_links && size <= 8 && r->pos + (toff_t)size <= r->end) {
        /* a link into bytes written already: applied once the directory it points to is */
        guint64 at = r->pos;
        guint32 n = (guint32)size;
        g_byte_array_append(r->held, (const guint8 *)&at, sizeof at);
        g_byte_array_append(r->held, (const guint8 *)&n, sizeof n);
        g_byte_array_append(r->held, buf, n);
        r->pos += (toff_t)size;
        return size;
    }
    tmsize_t done = 0;
    while (done < size) {
        ssize_t put = pwrite(r->fd, (const guint8 *)buf + done, (size_t)(size - done),
                             (off_t)(r->pos + (toff_t)done));
        if (put <= 0)
            break;
        done += put;
    }
    r->pos += (toff_t)done;
    r->end = MAX(r->end, r->pos);
    return done;
}

static toff_t io_seek(thandle_t handle, toff_t offset, int whence)
{
    fm_tiff_record *r = handle;
    if (whence == SEEK_SET)
        r->pos = offset;
    else if (whence == SEEK_CUR)
        r->pos += offset;
    else
        r->pos = r->end + offset;
    return r->pos;
}

static int io_close(thandle_t handle)
{
    fm_tiff_record *r = handle;
    int rc = r->fd >= 0 ? close(r->fd) : 0;
    r->fd = -1;
    return rc;
}

static toff_t io_size(thandle_t handle)
{
    return ((fm_tiff_record *)handle)->end;
}

static int io_map(thandle_t handle, void **base, toff_t *size)
{
    return 0;
}

static void io_unmap(thandle_t handle, void *base, toff_t size) {}

/* The links held back while a directory was written, now that it is on disk. */
static gboolean release_links(fm_tiff_record *r)
{
    gboolean ok = TRUE;
    for (guint i = 0; i + 12 <= r->held->len;) {
        guint64 at;
        guint32 n;
        memcpy(&at, r->held->data + i, sizeof at);
        memcpy(&n, r->held->data + i + 8, sizeof n);
        ok = ok && pwrite(r->fd, r->held->data + i + 12, n, (off_t)at) == (ssize_t)n;
        i += 12 + n;
    }
    g_byte_array_set_size(r->held, 0);
    return ok;
}

fm_tiff_record *fm_tiff_record_open(const char *path, int width, int height, fm_pixel_type type,
                                    const char *description, GError **error)
{
    return record_open(path, width, height, type, description, "w8", error);
}

/* As tiff.c's writer: strips of whole rows up to 16 MiB, BigTIFF only past 3 GiB. */
#define FM_STACK_STRIP_BYTES ((gsize)16 << 20)
#define FM_STACK_CLASSIC_BYTES (((gsize)1 << 31) * 3 / 2)

fm_tiff_record *fm_tiff_record_open_stack(const char *path, int width, int height,
                                          const char *description, guint64 expected_pages,
                                          GError **error)
{
    gsize row_bytes = (gsize)MAX(width, 1) * sizeof(float);
    gsize page_bytes = row_bytes * (gsize)MAX(height, 1);
    gboolean classic = expected_pages > 0 && expected_pages <= G_MAXUINT16 &&
                       page_bytes * expected_pages <= FM_STACK_CLASSIC_BYTES;
    fm_tiff_record *record =
        record_open(path, width, height, FM_PIXEL_F32, description, classic ? "w" : "w8", error);
    if (!record)
        return NULL;
    record->stack = TRUE;
    record->rows_per_strip =
        (guint32)CLAMP(FM_STACK_STRIP_BYTES / row_bytes, 1, (gsize)MAX(height, 1));
    record->page_total = (guint16)MIN(expected_pages, G_MAXUINT16);
    record->page_offsets = g_array_new(FALSE, FALSE, sizeof(gint64));
    return record;
}

gint64 fm_tiff_record_page_offset(const fm_tiff_record *record, guint64 page)
{
    if (!record->page_offsets || page >= record->page_offsets->len)
        return -1;
    return g_array_index(record->page_offsets, gint64, page);
}

static fm_tiff_record *record_open(const char *path, int width, int height, fm_pixel_type type,
                                   const char *description, const char *mode, GError **error)
{
    if (width <= 0 || height <= 0 ||
        (type != FM_PIXEL_U8 && type != FM_PIXEL_U16 && type != FM_PIXEL_F32)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot record %dx%d %s pages"), path,
                    width, height, fm_pixel_type_name(type));
        return NULL;
    }
    fm_tiff_record *record = g_new0(fm_tiff_record, 1);
    record->path = g_strdup(path);
    record->description = g_strdup(description);
    record->width = width;
    record->height = height;
    record->type = type;
    record->fd = -1;
    record->held = g_byte_array_new();
    /* a catalogue may hold an earlier recording of this name as a hard link: a new file */
    if (g_unlink(path) != 0 && errno != ENOENT) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot replace: %s"), path,
                    g_strerror(errno));
        fm_tiff_record_close(record, NULL);
        return NULL;
    }
    TIFFOpenOptions *options = TIFFOpenOptionsAlloc();
    TIFFOpenOptionsSetErrorHandlerExtR(options, record_error, record);
    TIFFOpenOptionsSetWarningHandlerExtR(options, record_warning, record);
    record->fd = g_open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    /* recordings: BigTIFF, they pass 4 GiB */
    if (record->fd >= 0)
        record->tif = TIFFClientOpenExt(path, mode, record, io_read, io_write, io_seek, io_close,
                                        io_size, io_map, io_unmap, options);
    TIFFOpenOptionsFree(options);
    if (record->tif == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path,
                    record->message[0] ? record->message : g_strerror(errno));
        fm_tiff_record_close(record, NULL);
        return NULL;
    }
    return record;
}

/* A stack page's strips, and where its samples start when the strips lie end to end. */
static gboolean write_stack_strips(fm_tiff_record *record, const void *samples, gsize row_bytes)
{
    TIFF *tif = record->tif;
    guint32 rows = record->rows_per_strip, height = (guint32)record->height;
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rows);
    const guint8 *bytes = samples;
    for (guint32 s = 0, row = 0; row < height; s++, row += rows) {
        tmsize_t n = (tmsize_t)(MIN(rows, height - row) * row_bytes);
        if (TIFFWriteEncodedStrip(tif, s, (void *)(bytes + (gsize)row * row_bytes), n) != n)
            return FALSE;
    }
    guint64 *offsets = NULL;
    gint64 start = -1;
    if (TIFFGetField(tif, TIFFTAG_STRIPOFFSETS, &offsets) && offsets) {
        start = (gint64)offsets[0];
        guint32 n_strips = (height + rows - 1) / rows;
        for (guint32 s = 1; s < n_strips; s++)
            if (offsets[s] != offsets[0] + (guint64)s * rows * row_bytes)
                start = -1;
    }
    g_array_append_val(record->page_offsets, start);
    return TRUE;
}

gboolean fm_tiff_record_append(fm_tiff_record *record, const void *samples, GError **error)
{
    TIFF *tif = record->tif;
    gsize row_bytes = (gsize)record->width * fm_pixel_size(record->type);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, (guint32)record->width);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, (guint32)record->height);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, (guint16)(fm_pixel_size(record->type) * 8));
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, (guint16)1);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT,
                 record->type == FM_PIXEL_F32 ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, COMPRESSION_NONE);
    TIFFSetField(tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
    if (record->description)
        TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, record->description);
    gboolean ok;
    if (record->stack) {
        TIFFSetField(tif, TIFFTAG_PAGENUMBER, (guint16)MIN(record->pages, G_MAXUINT16),
                     record->page_total);
        ok = write_stack_strips(record, samples, row_bytes);
    } else {
        /* one strip per page: a single write here and a single read for any reader */
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (guint32)record->height);
        tmsize_t bytes = (tmsize_t)(row_bytes * (gsize)record->height);
        ok = TIFFWriteEncodedStrip(tif, 0, (void *)samples, bytes) == bytes;
    }
    record->hold_links = TRUE;
    ok = ok && TIFFWriteDirectory(tif);
    record->hold_links = FALSE;
    ok = release_links(record) && ok && record->message[0] == '\0';
    if (!ok) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO,
                    _("%s: writing frame %" G_GUINT64_FORMAT " failed: %s"), record->path,
                    record->pages + 1, record_message(record));
        return FALSE;
    }
    record->pages++;
    return TRUE;
}

gboolean fm_tiff_record_append_frame(fm_tiff_record *record, const fm_frame *frame, GError **error)
{
    if (frame->width != record->width || frame->height != record->height ||
        fm_tiff_record_frame_type(frame->format) != record->type) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO,
                    _("%s: frame %" G_GUINT64_FORMAT " is %dx%d %s, the recording %dx%d %s"),
                    record->path, frame->id, frame->width, frame->height,
                    fm_pixfmt_name(frame->format), record->width, record->height,
                    fm_pixel_type_name(record->type));
        return FALSE;
    }
    gsize need = fm_pixfmt_frame_bytes(frame->format, frame->width, frame->height);
    if (frame->size < need) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO,
                    _("%s: frame %" G_GUINT64_FORMAT " has %" G_GSIZE_FORMAT
                      " bytes, %" G_GSIZE_FORMAT " expected"),
                    record->path, frame->id, frame->size, need);
        return FALSE;
    }
    gboolean widen = frame->format == FM_PIXFMT_MONO12_PACKED;
#if G_BYTE_ORDER == G_BIG_ENDIAN
    widen = widen || frame->format != FM_PIXFMT_MONO8; /* samples arrive little-endian */
#endif
    if (!widen)
        return fm_tiff_record_append(record, frame->data, error);
    if (!record->scratch)
        record->scratch = g_new(guint16, (gsize)record->width * record->height);
    return fm_frame_unpack_u16(frame, record->scratch, error) &&
           fm_tiff_record_append(record, record->scratch, error);
}

guint64 fm_tiff_record_pages(const fm_tiff_record *record)
{
    return record->pages;
}

const char *fm_tiff_record_path(const fm_tiff_record *record)
{
    return record->path;
}

static guint64 read_uint(const guint8 *p, int bytes, gboolean big_endian)
{
    guint64 v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (guint64)p[big_endian ? bytes - 1 - i : i] << (8 * i);
    return v;
}

/* Sets the total of every directory's PageNumber in place (its value lies inside the entry in
 * classic TIFF and BigTIFF alike): the page count a stack writer only knows at the end. */
static gboolean set_page_totals(const char *path, guint16 total)
{
    int fd = g_open(path, O_RDWR, 0);
    if (fd < 0)
        return FALSE;
    guint8 head[16];
    gboolean ok = pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
                  (head[0] == 'I' || head[0] == 'M') && head[0] == head[1];
    gboolean be = head[0] == 'M';
    gboolean big = ok && read_uint(head + 2, 2, be) == 43;
    int count_bytes = big ? 8 : 2, entry_bytes = big ? 20 : 12, offset_bytes = big ? 8 : 4;
    guint64 ifd = ok ? read_uint(head + (big ? 8 : 4), offset_bytes, be) : 0;
    guint8 total_bytes[2] = {be ? (guint8)(total >> 8) : (guint8)total,
                             be ? (guint8)total : (guint8)(total >> 8)};
    for (guint64 guard = 0; ok && ifd != 0 && guard < ((guint64)1 << 32); guard++) {
        guint8 buf[8];
        ok = pread(fd, buf, count_bytes, (off_t)ifd) == count_bytes;
        guint64 n = ok ? read_uint(buf, count_bytes, be) : 0;
        g_autofree guint8 *entries = ok ? g_malloc(n * entry_bytes + offset_bytes) : NULL;
        gsize want = n * entry_bytes + offset_bytes;
        ok =
            ok && n < 4096 && pread(fd, entries, want, (off_t)(ifd + count_bytes)) == (ssize_t)want;
        for (guint64 e = 0; ok && e < n; e++) {
            const guint8 *entry = entries + e * entry_bytes;
            if (read_uint(entry, 2, be) != TIFFTAG_PAGENUMBER)
                continue;
            /* tag, type, count, then the value: page then total, two SHORTs */
            off_t at = (off_t)(ifd + count_bytes + e * entry_bytes + (big ? 12 : 8) + 2);
            ok = pwrite(fd, total_bytes, 2, at) == 2;
        }
        if (ok)
            ifd = read_uint(entries + n * entry_bytes, offset_bytes, be);
    }
    return close(fd) == 0 && ok;
}

gboolean fm_tiff_record_close(fm_tiff_record *record, GError **error)
{
    if (record == NULL)
        return TRUE;
    gboolean ok = TRUE;
    if (record->tif) {
        /* every page has its directory already; closing writes nothing new */
        TIFFClose(record->tif);
        if (record->pages == 0) {
            /* a TIFF needs one page: an empty recording is no file */
            g_unlink(record->path);
        } else if (record->stack && record->page_total != MIN(record->pages, G_MAXUINT16)) {
            ok = set_page_totals(record->path, (guint16)MIN(record->pages, G_MAXUINT16));
            if (!ok)
                g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot set the page count"),
                            record->path);
        }
    } else if (record->fd >= 0) {
        /* opened, but libtiff could not start it: no file */
        close(record->fd);
        g_unlink(record->path);
    }
    if (record->page_offsets)
        g_array_unref(record->page_offsets);
    g_byte_array_unref(record->held);
    g_free(record->scratch);
    g_free(record->description);
    g_free(record->path);
    g_free(record);
    return ok;
}

char *fm_tiff_record_describe(const char *source, fm_pixfmt format, double frame_rate_hz,
                              double exposure_us, double gain_db)
{
    GString *text = g_string_new("fluxmap live recording");
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (source)
        g_string_append_printf(text, "; source=%s", source);
    g_string_append_printf(text, "; format=%s; bits=%d", fm_pixfmt_name(format),
                           fm_pixfmt_bits(format));
    if (frame_rate_hz > 0) {
        g_string_append_printf(text, "; frame_rate_hz=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", frame_rate_hz));
        g_string_append_printf(text, "; frame_interval_s=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.9g", 1.0 / frame_rate_hz));
    }
    if (exposure_us > 0)
        g_string_append_printf(text, "; exposure_us=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", exposure_us));
    if (!isnan(gain_db))
        g_string_append_printf(text, "; gain_db=%s",
                               g_ascii_formatd(buf, sizeof buf, "%.6g", gain_db));
    return g_string_free(text, FALSE);
}

char *fm_tiff_description_value(const char *description, const char *key)
{
    if (!description || !key || !*key)
        return NULL;
    g_auto(GStrv) parts = g_strsplit(description, ";", -1);
    gsize key_len = strlen(key);
    for (char **part = parts; *part; part++) {
        const char *p = *part;
        while (g_ascii_isspace(*p))
            p++;
        if (strncmp(p, key, key_len) == 0 && p[key_len] == '=')
            return g_strstrip(g_strdup(p + key_len + 1));
    }
    return NULL;
}
