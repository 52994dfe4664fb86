/* Writers of minimal .sdt and .ptu FLIM files: test fixtures and `simulate flim` output. */
#include "flim_write.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
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

static void put_photon(ptu_stream *s, guint64 sync, guint32 dtime)
{
    advance_to(s, sync);
    guint32 nsync = (guint32)(sync - s->base);
    if (s->rec_type == FM_PTU_PICOHARP_T3)
        put_record(s, (1u << 28) | (dtime << 16) | nsync); /* detector channel 1 */
    else
        put_record(s, (dtime << 10) | nsync); /* channel field 0 = detector input 1 */
}

gboolean fm_ptu_write(const char *path, const fm_dataset *counts, double bin_width_ps,
                      const fm_ptu_write_options *options, GError **error)
{
    fm_ptu_write_options opt = options ? *options : (fm_ptu_write_options){0};
    if (opt.record_type == 0)
        opt.record_type = FM_PTU_HYDRAHARP2_T3;
    if (opt.syncs_per_pixel <= 0)
        opt.syncs_per_pixel = 8;
    if (opt.line_gap_syncs <= 0)
        opt.line_gap_syncs = 3000;
    if (opt.record_type != FM_PTU_HYDRAHARP2_T3 && opt.record_type != FM_PTU_HYDRAHARP_T3 &&
        opt.record_type != FM_PTU_PICOHARP_T3) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM,
                    _("%s: record type 0x%08x cannot be written"), path, opt.record_type);
        return FALSE;
    }
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
    put_tag(hdr, "Measurement_Mode", FM_PTU_INT8, 3);    /* T3 */
    put_tag(hdr, "Measurement_SubMode", FM_PTU_INT8, 3); /* image */
    put_tag(hdr, "TTResultFormat_TTTRRecType", FM_PTU_INT8, opt.record_type);
    put_tag(hdr, "TTResultFormat_BitsPerRecord", FM_PTU_INT8, 32);
    put_tag_double(hdr, "MeasDesc_Resolution", resolution_s);
    put_tag_double(hdr, "MeasDesc_GlobalResolution", period_s);
    put_tag(hdr, "TTResult_SyncRate", FM_PTU_INT8, (guint64)llround(1.0 / period_s));
    put_tag(hdr, "ImgHdr_Dimensions", FM_PTU_INT8, 3);
    put_tag(hdr, "ImgHdr_PixX", FM_PTU_INT8, w);
    put_tag(hdr, "ImgHdr_PixY", FM_PTU_INT8, h);
    put_tag(hdr, "ImgHdr_LineStart", FM_PTU_INT8, 1);
    put_tag(hdr, "ImgHdr_LineStop", FM_PTU_INT8, 2);
    put_tag(hdr, "ImgHdr_Frame", FM_PTU_INT8, 3);
    put_tag(hdr, "ImgHdr_BiDirect", FM_PTU_BOOL8, 0);
    gsize n_records_at = hdr->len + 40; /* value field of the next tag, patched at the end */
    put_tag(hdr, "TTResult_NumberOfRecords", FM_PTU_INT8, 0);
    put_tag(hdr, "Header_End", FM_PTU_EMPTY8, 0);

    FILE *file = g_fopen(path, "wb");
    if (!file)
        return io_failed(path, error);
    ptu_stream *s = g_new0(ptu_stream, 1);
    s->file = file;
    s->rec_type = opt.record_type;
    s->failed = fwrite(hdr->data, 1, hdr->len, file) != hdr->len;
    const guint16 *c = counts->data;
    guint64 dwell = (guint64)opt.syncs_per_pixel, sync = 0;
    for (gsize y = 0; y < h && !s->failed; y++) {
        put_marker(s, sync, y == 0 ? (1u | 4u) : 1u); /* Frame (bit 3) with the first line */
        for (gsize x = 0; x < w; x++) {
            guint64 n = 0, k = 0;
            for (gsize t = 0; t < bins; t++)
                n += c[(t * h + y) * w + x];
            /* The k-th of n photons arrives floor(k·dwell/n) periods into the pixel: sync
             * times never decrease and all stay inside the pixel's dwell. */
            for (gsize t = 0; t < bins; t++)
                for (guint v = 0; v < c[(t * h + y) * w + x]; v++, k++)
                    put_photon(s, sync + x * dwell + k * dwell / n, (guint32)t);
        }
        put_marker(s, sync + w * dwell, 2u);
        sync += w * dwell + (guint64)opt.line_gap_syncs;
    }
    if (s->used)
        s->failed |= fwrite(s->buf, 1, s->used, file) != s->used;
    guint8 n_records[8];
    fm_put_le64(n_records, s->records);
    gboolean ok = !s->failed && fseek(file, (long)n_records_at, SEEK_SET) == 0 &&
                  fwrite(n_records, 1, 8, file) == 8;
    ok = (fclose(file) == 0) && ok;
    g_free(s);
    if (!ok) {
        io_failed(path, error);
        g_unlink(path);
        return FALSE;
    }
    return TRUE;
}
