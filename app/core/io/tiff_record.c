/* Frames appended to a BigTIFF as they arrive (live recordings). Each page is written with its
 * directory at once (TIFFWriteDirectory links it into the chain), so the file on disk is a
 * complete stack after every page: a camera lost or a process killed mid-run leaves the frames
 * recorded so far readable. */
#include "app/core/io/tiff_record.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <tiffio.h>

#include "app/core/error.h"

struct fm_tiff_record {
    TIFF *tif;
    char *path;
    char *description;
    int width, height;
    fm_pixel_type type;
    guint64 pages;
    guint16 *scratch;  /* Mono12Packed frames unpacked */
    char message[512]; /* libtiff's first error on this handle */
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

fm_tiff_record *fm_tiff_record_open(const char *path, int width, int height, fm_pixel_type type,
                                    const char *description, GError **error)
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
    record->tif = TIFFOpenExt(path, "w8", options); /* BigTIFF: recordings pass 4 GiB */
    TIFFOpenOptionsFree(options);
    if (record->tif == NULL) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path,
                    record->message[0] ? record->message : g_strerror(errno));
        fm_tiff_record_close(record, NULL);
        return NULL;
    }
    return record;
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
    /* one strip per page: a single write here and a single read for any reader */
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, (guint32)record->height);
    if (record->description)
        TIFFSetField(tif, TIFFTAG_IMAGEDESCRIPTION, record->description);
    tmsize_t bytes = (tmsize_t)(row_bytes * (gsize)record->height);
    gboolean ok = TIFFWriteEncodedStrip(tif, 0, (void *)samples, bytes) == bytes &&
                  TIFFWriteDirectory(tif) && record->message[0] == '\0';
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
        }
    }
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
