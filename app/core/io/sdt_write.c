/* .sdt writer: file header, info, setup, measurement descriptions and data blocks in the
 * layouts SPCM writes (see sdt_write.h), for `simulate flim` and the readers' test fixtures. */
#include "sdt_write.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/sdt_layout.h"
#include "app/core/io/sdt_zip.h"

static void put_text(guint8 *p, const char *text, gsize field)
{
    memcpy(p, text, MIN(strlen(text), field - 1)); /* NUL-terminated within the field */
}

static gboolean bad_param(const char *path, const char *why, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, "%s: %s", path, why);
    return FALSE;
}

static double bin_width_of(const fm_dataset *ds, double bin_width_ps)
{
    if (bin_width_ps > 0)
        return bin_width_ps;
    const char *meta = fm_dataset_get_meta(ds, "bin_width_ps");
    if (meta)
        return g_ascii_strtod(meta, NULL);
    if (ds->dims[2].unit && strcmp(ds->dims[2].unit, "ns") == 0)
        return ds->dims[2].spacing * 1e3;
    return 0;
}

static gboolean check(const char *path, const fm_sdt_write_options *o, int channels, double *bin_ps,
                      GError **error)
{
    if (!o->datasets || o->n_datasets < 1 || o->n_datasets % channels != 0)
        return bad_param(path, _("the datasets do not fill whole blocks of routing channels"),
                         error);
    for (int i = 0; i < o->n_datasets; i++) {
        const fm_dataset *ds = o->datasets[i];
        if (!ds || ds->type != FM_PIXEL_U16 || ds->n_dims != 3 || ds->dims[0].size == 0 ||
            ds->dims[1].size == 0 || ds->dims[2].size == 0)
            return bad_param(path, _("FLIM files are written from uint16 x, y, t counts"), error);
        if (ds->dims[2].size > 32767)
            return bad_param(path, _("more than 32767 time bins"), error);
        const fm_dataset *first = o->datasets[i - i % channels];
        for (int d = 0; d < 3; d++)
            if (ds->dims[d].size != first->dims[d].size)
                return bad_param(path, _("the routing channels of a block differ in size"), error);
        guint64 bytes = (guint64)ds->dims[0].size * ds->dims[1].size * ds->dims[2].size *
                        (o->counts32 ? 4 : 2) * channels;
        if (o->padded_width > 0 && (gsize)o->padded_width > ds->dims[0].size)
            bytes = bytes / ds->dims[0].size * (guint64)o->padded_width;
        if (bytes >= G_MAXINT32 - 4096)
            return bad_param(path, _("an .sdt block holds < 2 GiB"), error);
    }
    *bin_ps = bin_width_of(o->datasets[0], o->bin_width_ps);
    if (!(*bin_ps > 0) || !isfinite(*bin_ps))
        return bad_param(path, _("the bin width is unknown; give bin_width_ps > 0"), error);
    return TRUE;
}

/* One measurement description of md_len bytes, truncated where md_len ends as older SPCM
 * versions wrote them. */
static void put_meas_desc(guint8 *out, const fm_sdt_write_options *o, const fm_dataset *ds,
                          int channels, double bin_ps, int md_len)
{
    g_autofree guint8 *md = g_malloc0(SDT_MD_FULL_LEN);
    gsize w = ds->dims[0].size, h = ds->dims[1].size, bins = ds->dims[2].size;
    gboolean single = w == 1 && h == 1 && channels == 1;
    put_text(md + SDT_MD_TIME, "12:00:00", 9);
    put_text(md + SDT_MD_DATE, "01-01-2020", 11);
    put_text(md + SDT_MD_MOD_SER, "fluxmap", 16);
    fm_put_le16(md + SDT_MD_MEAS_MODE, o->fifo_image ? SDT_MEAS_MODE_FIFO_IMAGE : single ? 0 : 9);
    fm_put_le16(md + SDT_MD_SYN_FD, 1);
    double tac_range_s = (double)bins * bin_ps * 1e-12;
    fm_put_le_float(md + SDT_MD_TAC_R, (float)tac_range_s);
    fm_put_le16(md + SDT_MD_TAC_G, 1);
    fm_put_le16(md + SDT_MD_ADC_RE, (guint16)bins);
    put_text(md + SDT_MD_MOD_TYPE,
             (o->revision ? o->revision : 0x28f) >> 4 == 0x24 ? "SPC-730" : "SPC-150", 16);
    /* single decays and FIFO images leave the scan size of the last scan setup (stale) */
    gboolean stale = single || o->fifo_image;
    fm_put_le32(md + SDT_MD_SCAN_X, stale ? 128 : (guint32)w);
    fm_put_le32(md + SDT_MD_SCAN_Y, stale ? 128 : (guint32)h);
    fm_put_le32(md + SDT_MD_SCAN_RX, o->fifo_image ? 1 : (guint32)channels);
    fm_put_le32(md + SDT_MD_SCAN_RY, 1);
    if (o->sync_rate_hz > 0) {
        fm_put_le16(md + SDT_MD_STOP_FLAGS, 0x8000);
        fm_put_le_float(md + SDT_MD_MIN_SYNC_RATE, (float)(o->sync_rate_hz * 0.9999));
        fm_put_le_float(md + SDT_MD_MAX_SYNC_RATE, (float)(o->sync_rate_hz * 1.0001));
    } else {
        fm_put_le_float(md + SDT_MD_MIN_SYNC_RATE, -1.0f);
        fm_put_le_float(md + SDT_MD_MAX_SYNC_RATE, -1.0f);
    }
    if (o->fifo_image) {
        fm_put_le32(md + SDT_MD_IMAGE_X, (guint32)w);
        fm_put_le32(md + SDT_MD_IMAGE_Y, (guint32)h);
        fm_put_le32(md + SDT_MD_IMAGE_RX, (guint32)channels);
        fm_put_le32(md + SDT_MD_IMAGE_RY, 1);
    }
    memcpy(out, md, (gsize)md_len);
}

/* The block's counts as B&H stores them: channel, line, pixel (padded lines), then time. */
static guint8 *block_data(const fm_sdt_write_options *o, const fm_dataset *const *ds, int channels,
                          gsize *len)
{
    gsize w = ds[0]->dims[0].size, h = ds[0]->dims[1].size, bins = ds[0]->dims[2].size;
    gsize line = o->padded_width > 0 && (gsize)o->padded_width > w ? (gsize)o->padded_width : w;
    int bpc = o->counts32 ? 4 : 2;
    *len = (gsize)channels * h * line * bins * bpc;
    guint8 *out = g_malloc0(*len);
    for (int c = 0; c < channels; c++) {
        const guint16 *v = ds[c]->data;
        for (gsize y = 0; y < h; y++)
            for (gsize x = 0; x < w; x++) {
                guint8 *p = out + ((((gsize)c * h + y) * line + x) * bins) * bpc;
                for (gsize t = 0; t < bins; t++, p += bpc) {
                    guint16 count = v[(t * h + y) * w + x];
                    if (bpc == 2)
                        fm_put_le16(p, count);
                    else
                        fm_put_le32(p, count);
                }
            }
    }
    return out;
}

gboolean fm_sdt_write_ex(const char *path, const fm_sdt_write_options *options, GError **error)
{
    fm_sdt_write_options o = *options;
    int channels = o.channels > 0 ? o.channels : 1;
    double bin_ps = 0;
    if (!check(path, &o, channels, &bin_ps, error))
        return FALSE;
    int revision = o.revision ? o.revision : 0x28f;
    int md_len = o.md_len > 0 ? MIN(o.md_len, SDT_MD_FULL_LEN) : SDT_MD_FULL_LEN;
    md_len = MAX(md_len, SDT_MD_MIN_LEN);
    int n_blocks = o.n_datasets / channels;
    const fm_dataset *first = o.datasets[0];
    /* the setup as SPCM writes it: FIFO imaging keeps its size in SP_IMG_X/Y, the scan size
     * of the last scan setup stays in SP_SCAN_X/Y */
    gsize w = first->dims[0].size, h = first->dims[1].size;
    g_autofree char *setup = g_strdup_printf(
        "*SETUP\r\n  SYS_PARA_BEGIN:\r\n  #SP [SP_MODE,I,%d]\r\n  #SP [SP_ADC_RE,I,%zu]\r\n"
        "  #SP [SP_SCAN_X,I,%zu]\r\n  #SP [SP_SCAN_Y,I,%zu]\r\n  #SP [SP_IMG_X,I,%zu]\r\n"
        "  #SP [SP_IMG_Y,I,%zu]\r\n  SYS_PARA_END:\r\n*END\r\n\r\n",
        o.fifo_image ? SDT_MEAS_MODE_FIFO_IMAGE : 9, first->dims[2].size,
        o.fifo_image || w * h == 1 ? 128 : w, o.fifo_image || w * h == 1 ? 128 : h,
        o.fifo_image ? w : 128, o.fifo_image ? h : 128);
    const char *info = "*IDENTIFICATION\r\n  ID        : SPC Setup & Data File\r\n"
                       "  Title     : Fluxmap\r\n  Version   : 1  781 M\r\n"
                       "  Revision  : 15 bits ADC\r\n  Author    : fluxmap\r\n*END\r\n\r\n";
    gsize info_at = SDT_FILE_HEADER_LEN, setup_at = info_at + strlen(info);
    gsize md_at = setup_at + strlen(setup);
    g_autoptr(GByteArray) file = g_byte_array_new();
    g_byte_array_set_size(file, (guint)(md_at + (gsize)n_blocks * md_len));
    memset(file->data, 0, file->len);
    memcpy(file->data + info_at, info, strlen(info));
    memcpy(file->data + setup_at, setup, strlen(setup));
    for (int b = 0; b < n_blocks; b++)
        put_meas_desc(file->data + md_at + (gsize)b * md_len, &o, o.datasets[b * channels],
                      channels, bin_ps, md_len);
    guint32 longest = 0;
    gsize first_block_at = file->len;
    for (int b = 0; b < n_blocks; b++) {
        const fm_dataset *const *ds = o.datasets + b * channels;
        gsize raw_len = 0, stored_len = 0;
        g_autofree guint8 *raw = block_data(&o, ds, channels, &raw_len);
        g_autofree guint8 *zipped = o.compress ? fm_sdt_zip(raw, raw_len, &stored_len) : NULL;
        if (o.compress && !zipped) {
            g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: compression failed"), path);
            return FALSE;
        }
        if (!o.compress)
            stored_len = raw_len;
        gsize header_at = file->len, data_at = header_at + SDT_BLOCK_HEADER_LEN;
        gsize next = data_at + stored_len;
        guint8 bh[SDT_BLOCK_HEADER_LEN] = {0};
        if ((revision & 0xf) < SDT_REV_40BIT_OFFSETS)
            fm_put_le16(bh + SDT_BLK_NO, (guint16)(b + 1));
        fm_put_le32(bh + SDT_BLK_DATA_OFFS, (guint32)data_at);
        fm_put_le32(bh + SDT_BLK_NEXT_OFFS, (guint32)next);
        gboolean single = ds[0]->dims[0].size == 1 && ds[0]->dims[1].size == 1 && channels == 1;
        guint16 type = o.fifo_image ? SDT_BLOCK_FIFO_DATA | SDT_BLOCK_IMG
                       : single     ? SDT_BLOCK_MEAS_DATA | SDT_BLOCK_DECAY
                                    : SDT_BLOCK_MEAS_DATA | SDT_BLOCK_PAGE;
        if (o.counts32)
            type |= 0x0100;
        if (o.compress)
            type |= SDT_BLOCK_ZIPPED;
        fm_put_le16(bh + SDT_BLK_TYPE, type);
        fm_put_le16(bh + SDT_BLK_MEAS_DESC_NO, (guint16)b);
        fm_put_le32(bh + SDT_BLK_LONG_NO, (guint32)(b + 1));
        fm_put_le32(bh + SDT_BLK_LENGTH, (guint32)raw_len);
        longest = MAX(longest, (guint32)raw_len);
        g_byte_array_append(file, bh, sizeof bh);
        g_byte_array_append(file, o.compress ? zipped : raw, (guint)stored_len);
    }
    guint8 *hd = file->data;
    fm_put_le16(hd + SDT_HDR_REVISION, (guint16)revision);
    fm_put_le32(hd + SDT_HDR_INFO_OFFS, (guint32)info_at);
    fm_put_le16(hd + SDT_HDR_INFO_LEN, (guint16)strlen(info));
    fm_put_le32(hd + SDT_HDR_SETUP_OFFS, (guint32)setup_at);
    fm_put_le16(hd + SDT_HDR_SETUP_LEN, (guint16)strlen(setup));
    fm_put_le32(hd + SDT_HDR_DATA_BLOCK_OFFS, (guint32)first_block_at);
    fm_put_le16(hd + SDT_HDR_N_DATA_BLOCKS, (guint16)n_blocks);
    fm_put_le32(hd + SDT_HDR_DATA_BLOCK_LEN, longest);
    fm_put_le32(hd + SDT_HDR_MEAS_DESC_OFFS, (guint32)md_at);
    fm_put_le16(hd + SDT_HDR_N_MEAS_DESC, (guint16)n_blocks);
    fm_put_le16(hd + SDT_HDR_MEAS_DESC_LEN, (guint16)md_len);
    fm_put_le16(hd + SDT_HDR_HEADER_VALID, SDT_HEADER_VALID);
    fm_put_le32(hd + SDT_HDR_RESERVED1, (guint32)n_blocks);
    guint16 sum = 0;
    for (int i = 0; i < SDT_HDR_CHKSUM; i += 2)
        sum = (guint16)(sum + fm_le16(hd + i));
    fm_put_le16(hd + SDT_HDR_CHKSUM, (guint16)(SDT_HEADER_CHKSUM_SUM - sum));
    g_autoptr(GError) local = NULL;
    if (!g_file_set_contents(path, (const char *)file->data, file->len, &local)) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, local->message);
        return FALSE;
    }
    return TRUE;
}
