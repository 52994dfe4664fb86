/* Writers of minimal .sdt, .ptu and .pt3 FLIM files: test fixtures and `simulate flim` output. */
#include "flim_write.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/pt3.h"
#include "app/core/io/ptu.h"
#include "app/core/io/sdt_write.h"

/* Checks the counts cube and settles the bin width; max_bins is the format's limit. */
static gboolean check_counts(const char *path, const fm_dataset *ds, double *bin_width_ps,
                             gsize max_bins, GError **error)
{
    if (ds->type != FM_PIXEL_U16 || ds->n_dims != 3 || ds->dims[0].size == 0 ||
        ds->dims[1].size == 0 || ds->dims[2].size == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: FLIM files are written from uint16 x, y, t counts"), path);
        return FALSE;
    }
    if (ds->dims[2].size > max_bins) {
        g_set_error(
            error, FM_ERROR, FM_ERROR_BAD_PARAM,
            _("%s: %" G_GSIZE_FORMAT " time bins; this format holds at most %" G_GSIZE_FORMAT),
            path, ds->dims[2].size, max_bins);
        return FALSE;
    }
    if (!(*bin_width_ps > 0)) {
        const char *meta = fm_dataset_get_meta(ds, "bin_width_ps");
        if (meta)
            *bin_width_ps = g_ascii_strtod(meta, NULL);
        else if (ds->dims[2].unit && strcmp(ds->dims[2].unit, "ns") == 0)
            *bin_width_ps = ds->dims[2].spacing * 1e3;
    }
    if (!(*bin_width_ps > 0) || !isfinite(*bin_width_ps)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: the bin width is unknown; give bin_width_ps > 0"), path);
        return FALSE;
    }
    return TRUE;
}

static gboolean io_failed(const char *path, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, g_strerror(errno));
    return FALSE;
}

static void put_text(guint8 *p, const char *text, gsize field)
{
    memcpy(p, text, MIN(strlen(text), field - 1)); /* NUL-terminated within the field */
}

gboolean fm_sdt_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      GError **error)
{
    if (!check_counts(path, counts, &bin_width_ps, 32767, error))
        return FALSE;
    const fm_dataset *one[1] = {counts};
    fm_sdt_write_options options = {.datasets = one, .n_datasets = 1, .bin_width_ps = bin_width_ps};
    return fm_sdt_write_ex(path, &options, error);
}

/* --- .ptu ------------------------------------------------------------------------------- */

static void put_tag(GByteArray *hdr, const char *ident, guint32 type, guint64 value)
{
    guint8 tag[48] = {0};
    put_text(tag, ident, 32);
    fm_put_le32(tag + 32, (guint32)-1);
    fm_put_le32(tag + 36, type);
    fm_put_le64(tag + 40, value);
    g_byte_array_append(hdr, tag, sizeof tag);
}

static void put_tag_double(GByteArray *hdr, const char *ident, double value)
{
    guint64 bits;
    memcpy(&bits, &value, sizeof bits);
    put_tag(hdr, ident, FM_PTU_FLOAT8, bits);
}

/* AnsiString data are NUL-terminated and padded to a multiple of 8 bytes. */
static void put_tag_string(GByteArray *hdr, const char *ident, const char *text)
{
    gsize len = (strlen(text) + 1 + 7) / 8 * 8;
    put_tag(hdr, ident, FM_PTU_ANSISTRING, len);
    g_autofree guint8 *padded = g_malloc0(len);
    memcpy(padded, text, strlen(text));
    g_byte_array_append(hdr, padded, (guint)len);
}

/* Record stream: keeps the sync counter base and inserts overflow records when it wraps. */
typedef struct {
    FILE *file;
    guint32 rec_type;
    guint64 base, records;
    guint8 buf[4 * 8192];
    gsize used;
    gboolean failed;
} ptu_stream;

static void put_record(ptu_stream *s, guint32 r)
{
    fm_put_le32(s->buf + s->used, r);
    s->used += 4;
    s->records++;
    if (s->used == sizeof s->buf) {
        s->failed |= fwrite(s->buf, 1, s->used, s->file) != s->used;
        s->used = 0;
    }
}

static void advance_to(ptu_stream *s, guint64 sync)
{
    gboolean picoharp = s->rec_type == FM_PTU_PICOHARP_T3;
    guint64 wrap = picoharp ? 65536 : 1024;
    while (sync - s->base >= wrap) {
        if (picoharp) {
            put_record(s, 0xfu << 28); /* channel 15, dtime 0 */
            s->base += wrap;
        } else if (s->rec_type == FM_PTU_HYDRAHARP_T3) {
            put_record(s, 0x80000000u | (0x3fu << 25));
            s->base += wrap;
        } else { /* one record counts up to 1023 wraps */
            guint64 n = MIN((sync - s->base) / wrap, 1023);
            put_record(s, 0x80000000u | (0x3fu << 25) | (guint32)n);
            s->base += n * wrap;
        }
    }
}

static void put_marker(ptu_stream *s, guint64 sync, guint32 markers)
{
    advance_to(s, sync);
    guint32 nsync = (guint32)(sync - s->base);
    if (s->rec_type == FM_PTU_PICOHARP_T3)
        put_record(s, (0xfu << 28) | (markers << 16) | nsync);
    else
        put_record(s, 0x80000000u | (markers << 25) | nsync);
}

/* channel is 1-based: PicoHarp's routing channel field, the HydraHarp family's field + 1. */
static void put_photon(ptu_stream *s, guint64 sync, guint32 dtime, guint32 channel)
{
    advance_to(s, sync);
    guint32 nsync = (guint32)(sync - s->base);
    if (s->rec_type == FM_PTU_PICOHARP_T3)
        put_record(s, (channel << 28) | (dtime << 16) | nsync);
    else
        put_record(s, ((channel - 1) << 25) | (dtime << 10) | nsync);
}

#define MARK_LINE_START 1u /* marker bits: LineStart 1, LineStop 2, Frame 3 */
#define MARK_LINE_STOP 2u
#define MARK_FRAME 4u

/* The photons of pixel (x, y) that belong to frame f (photon k of the pixel, in t order, is in
 * frame k % frames and on channel 1 + k % channels), spread evenly over the dwell that starts
 * at `start`: the j-th of m arrives floor(j·dwell/m) periods in, so sync times never decrease. */
static void put_pixel(ptu_stream *s, const fm_dataset *counts, gsize x, gsize y, int f,
                      const fm_ptu_write_options *opt, guint64 start, guint64 dwell)
{
    const guint16 *c = counts->data;
    gsize w = counts->dims[0].size, h = counts->dims[1].size, bins = counts->dims[2].size;
    guint64 n = 0, k = 0, j = 0;
    for (gsize t = 0; t < bins; t++)
        n += c[(t * h + y) * w + x];
    guint64 m = n / (guint64)opt->frames + ((guint64)f < n % (guint64)opt->frames ? 1 : 0);
    for (gsize t = 0; t < bins; t++)
        for (guint v = 0; v < c[(t * h + y) * w + x]; v++, k++)
            if (k % (guint64)opt->frames == (guint64)f)
                put_photon(s, start + j++ * dwell / m, (guint32)t,
                           (guint32)(1 + k % (guint64)opt->channels));
}

/* The records of fm_ptu_write / fm_pt3_write. */
static void put_records(ptu_stream *s, const fm_dataset *counts, const fm_ptu_write_options *opt)
{
    gsize w = counts->dims[0].size, h = counts->dims[1].size;
    guint64 dwell = (guint64)opt->syncs_per_pixel, sync = 0;
    if (opt->point) { /* every pixel's photons in turn, with no marker */
        for (gsize y = 0; y < h; y++)
            for (gsize x = 0; x < w; x++, sync += dwell)
                put_pixel(s, counts, x, y, 0, opt, sync, dwell);
        return;
    }
    for (int f = 0; f < opt->frames && !s->failed; f++) {
        for (gsize y = 0; y < h && !s->failed; y++) {
            gboolean first = y == 0 && opt->frame_marker == FM_PTU_FRAME_MARKER_FIRST;
            put_marker(s, sync, first ? MARK_LINE_START | MARK_FRAME : MARK_LINE_START);
            gboolean reversed = opt->bidirectional && y % 2 == 1;
            for (gsize p = 0; p < w; p++)
                put_pixel(s, counts, reversed ? w - 1 - p : p, y, f, opt, sync + p * dwell, dwell);
            gboolean last = y == h - 1 && opt->frame_marker == FM_PTU_FRAME_MARKER_LAST;
            put_marker(s, sync + w * dwell, last ? MARK_LINE_STOP | MARK_FRAME : MARK_LINE_STOP);
            sync += w * dwell + (guint64)opt->line_gap_syncs;
        }
    }
}

/* Fills in the defaults and checks the options against the record type. */
static gboolean settle_options(const char *path, const fm_ptu_write_options *options,
                               fm_ptu_write_options *opt, GError **error)
{
    *opt = options ? *options : (fm_ptu_write_options){0};
    if (opt->record_type == 0)
        opt->record_type = FM_PTU_HYDRAHARP2_T3;
    if (opt->syncs_per_pixel <= 0)
        opt->syncs_per_pixel = 8;
    if (opt->line_gap_syncs <= 0)
        opt->line_gap_syncs = 3000;
    opt->channels = MAX(opt->channels, 1);
    opt->frames = opt->point ? 1 : MAX(opt->frames, 1);
    switch (opt->record_type) {
    case FM_PTU_PICOHARP_T3:
    case FM_PTU_HYDRAHARP_T3:
    case FM_PTU_HYDRAHARP2_T3:
    case FM_PTU_TIMEHARP260N_T3:
    case FM_PTU_TIMEHARP260P_T3:
    case FM_PTU_GENERIC_T3:
        break;
    default:
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: record type 0x%08x cannot be written"), path, opt->record_type);
        return FALSE;
    }
    int max_channels = opt->record_type == FM_PTU_PICOHARP_T3 ? 4 : 64;
    if (opt->channels > max_channels) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: %d detector channels; this record type holds at most %d"), path,
                    opt->channels, max_channels);
        return FALSE;
    }
    return TRUE;
}

/* Writes header, records and the record count patched in at n_records_at (n_records_bytes
 * wide) once known. */
static gboolean write_tttr(const char *path, const GByteArray *hdr, gsize n_records_at,
                           int n_records_bytes, const fm_dataset *counts,
                           const fm_ptu_write_options *opt, GError **error)
{
    FILE *file = g_fopen(path, "wb");
    if (!file)
        return io_failed(path, error);
    ptu_stream *s = g_new0(ptu_stream, 1);
    s->file = file;
    s->rec_type = opt->record_type;
    s->failed = fwrite(hdr->data, 1, hdr->len, file) != hdr->len;
    put_records(s, counts, opt);
    if (s->used)
        s->failed |= fwrite(s->buf, 1, s->used, file) != s->used;
    guint8 n_records[8];
    fm_put_le64(n_records, s->records);
    gboolean ok = !s->failed && fseek(file, (long)n_records_at, SEEK_SET) == 0 &&
                  fwrite(n_records, 1, (gsize)n_records_bytes, file) == (gsize)n_records_bytes;
    ok = (fclose(file) == 0) && ok;
    g_free(s);
    if (!ok) {
        io_failed(path, error);
        g_unlink(path);
        return FALSE;
    }
    return TRUE;
}

gboolean fm_ptu_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      const fm_ptu_write_options *options, GError **error)
{
    fm_ptu_write_options opt;
    if (!settle_options(path, options, &opt, error))
        return FALSE;
    gsize max_bins = opt.record_type == FM_PTU_PICOHARP_T3 ? 4096 : 32768;
    if (!check_counts(path, counts, &bin_width_ps, max_bins, error))
        return FALSE;
    gsize w = counts->dims[0].size, h = counts->dims[1].size, bins = counts->dims[2].size;
    double resolution_s = bin_width_ps * 1e-12, period_s = resolution_s * (double)bins;

    g_autoptr(GByteArray) hdr = g_byte_array_new();
    static const guint8 preamble[16] = "PQTTTR\0\0"
                                       "1.0.00\0\0"; /* magic and version, no trailing NUL */
    g_byte_array_append(hdr, preamble, sizeof preamble);
    put_tag_string(hdr, "CreatorSW_Name", "Fluxmap");
    put_tag(hdr, "Measurement_Mode", FM_PTU_INT8, 3);                    /* T3 */
    put_tag(hdr, "Measurement_SubMode", FM_PTU_INT8, opt.point ? 1 : 3); /* integrating, image */
    put_tag(hdr, "TTResultFormat_TTTRRecType", FM_PTU_INT8, opt.record_type);
    put_tag(hdr, "TTResultFormat_BitsPerRecord", FM_PTU_INT8, 32);
    put_tag_double(hdr, "MeasDesc_Resolution", resolution_s);
    put_tag_double(hdr, "MeasDesc_GlobalResolution", period_s);
    put_tag(hdr, "TTResult_SyncRate", FM_PTU_INT8, (guint64)llround(1.0 / period_s));
    put_tag(hdr, "ImgHdr_Dimensions", FM_PTU_INT8, opt.point ? 1 : 3);
    if (!opt.point) {
        put_tag(hdr, "ImgHdr_PixX", FM_PTU_INT8, w);
        put_tag(hdr, "ImgHdr_PixY", FM_PTU_INT8, h);
        put_tag(hdr, "ImgHdr_LineStart", FM_PTU_INT8, 1);
        put_tag(hdr, "ImgHdr_LineStop", FM_PTU_INT8, 2);
        if (opt.frame_marker != FM_PTU_FRAME_MARKER_NONE)
            put_tag(hdr, "ImgHdr_Frame", FM_PTU_INT8, 3);
        put_tag(hdr, "ImgHdr_BiDirect", FM_PTU_BOOL8, opt.bidirectional ? 1 : 0);
    }
    gsize n_records_at = hdr->len + 40; /* value field of the next tag, patched at the end */
    put_tag(hdr, "TTResult_NumberOfRecords", FM_PTU_INT8, 0);
    put_tag(hdr, "Header_End", FM_PTU_EMPTY8, 0);
    return write_tttr(path, hdr, n_records_at, 8, counts, &opt, error);
}

/* --- .pt3 ------------------------------------------------------------------------------- */

gboolean fm_pt3_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      const fm_ptu_write_options *options, GError **error)
{
    fm_ptu_write_options opt;
    if (!settle_options(path, options, &opt, error))
        return FALSE;
    if (options && options->record_type && options->record_type != FM_PTU_PICOHARP_T3) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: .pt3 files hold PicoHarp T3 records only"), path);
        return FALSE;
    }
    opt.record_type = FM_PTU_PICOHARP_T3;
    if (!settle_options(path, &opt, &opt, error) ||
        !check_counts(path, counts, &bin_width_ps, 4096, error))
        return FALSE;
    gsize bins = counts->dims[2].size;
    double period_s = bin_width_ps * 1e-12 * (double)bins;
    int img_words = opt.point ? 0 : FM_PT3_IMG_PIX_Y + 1;
    g_autoptr(GByteArray) hdr = g_byte_array_new();
    g_byte_array_set_size(hdr, FM_PT3_IMG_HDR + 4 * (guint)img_words);
    guint8 *b = hdr->data;
    memset(b, 0, hdr->len);
    put_text(b, FM_PT3_IDENT, 16);
    put_text(b + FM_PT3_FORMAT_VERSION, "2.0", 6);
    put_text(b + FM_PT3_CREATOR_NAME, "Fluxmap", 18);
    put_text(b + FM_PT3_CREATOR_VERSION, "1.0", 12);
    b[FM_PT3_COMMENT - 2] = '\r';
    b[FM_PT3_COMMENT - 1] = '\n';
    fm_put_le32(b + FM_PT3_CURVES, 0);
    fm_put_le32(b + FM_PT3_BITS_PER_RECORD, 32);
    fm_put_le32(b + FM_PT3_ROUTING_CHANNELS, 4);
    fm_put_le32(b + FM_PT3_NUMBER_OF_BOARDS, 1);
    fm_put_le32(b + FM_PT3_MEAS_MODE, 3);
    fm_put_le32(b + FM_PT3_SUB_MODE, opt.point ? 1 : 3);
    put_text(b + FM_PT3_BOARD, "PicoHarp 300", 16);
    fm_put_le32(b + FM_PT3_SYNC_DIVIDER, 1);
    fm_put_le_float(b + FM_PT3_RESOLUTION_NS, (float)(bin_width_ps * 1e-3));
    fm_put_le32(b + FM_PT3_ROUTER_ENABLED, opt.channels > 1);
    fm_put_le32(b + FM_PT3_SYNC_RATE_HZ, (guint32)llround(1.0 / period_s));
    fm_put_le32(b + FM_PT3_IMG_HDR_SIZE, (guint32)img_words);
    guint8 *img = b + FM_PT3_IMG_HDR;
    if (!opt.point) {
        fm_put_le32(img + 4 * FM_PT3_IMG_DIMENSIONS, 3);
        fm_put_le32(img + 4 * FM_PT3_IMG_IDENT, FM_PT3_IMG_LSM);
        fm_put_le32(img + 4 * FM_PT3_IMG_FRAME,
                    opt.frame_marker == FM_PTU_FRAME_MARKER_NONE ? 0 : 3);
        fm_put_le32(img + 4 * FM_PT3_IMG_LINE_START, 1);
        fm_put_le32(img + 4 * FM_PT3_IMG_LINE_STOP, 2);
        fm_put_le32(img + 4 * FM_PT3_IMG_PATTERN, opt.bidirectional ? 1 : 0);
        fm_put_le32(img + 4 * FM_PT3_IMG_PIX_X, (guint32)counts->dims[0].size);
        fm_put_le32(img + 4 * FM_PT3_IMG_PIX_Y, (guint32)counts->dims[1].size);
    }
    return write_tttr(path, hdr, FM_PT3_RECORDS, 4, counts, &opt, error);
}
