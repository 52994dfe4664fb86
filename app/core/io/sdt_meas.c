/* .sdt measurement descriptions and how a block's curves form images, for every layout SPCM
 * has written: scan modes (scan_x/scan_y, routing channels scan_rx x scan_ry), FIFO imaging
 * (image_x/image_y, lines possibly padded), single decays and sets of curves. */
#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/sdt_layout.h"
#include "app/core/io/sdt_private.h"

gboolean sdt_need(const sdt_file *f, guint64 offset, guint64 length, const char *what,
                  GError **error)
{
    if (offset > f->len || length > f->len - offset) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated: the %s ends at byte %" G_GUINT64_FORMAT
                      " but the file has %" G_GSIZE_FORMAT " bytes"),
                    f->path, what, offset + length, f->len);
        return FALSE;
    }
    return TRUE;
}

static gint64 i32_at(const guint8 *p, int field, guint32 length)
{
    return (guint32)field + 4 <= length ? (gint32)fm_le32(p + field) : 0;
}

gboolean sdt_read_meas_desc(const sdt_file *f, guint64 offs, guint32 length, int index,
                            sdt_meas_desc *md, GError **error)
{
    if (length < SDT_MD_MIN_LEN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: measurement descriptions are %u bytes long, at least %d expected"),
                    f->path, length, SDT_MD_MIN_LEN);
        return FALSE;
    }
    g_autofree char *what = g_strdup_printf(_("measurement description %d"), index + 1);
    guint64 at = offs + (guint64)index * length;
    if (!sdt_need(f, at, length, what, error))
        return FALSE;
    const guint8 *p = f->bytes + at;
    memset(md, 0, sizeof *md);
    md->meas_mode = (gint16)fm_le16(p + SDT_MD_MEAS_MODE);
    md->bins = fm_le16(p + SDT_MD_ADC_RE);
    if (md->bins == 0) /* documented: 0 stands for 65536 */
        md->bins = 65536;
    md->tac_range_s = fm_le_float(p + SDT_MD_TAC_R);
    md->tac_gain = (gint16)fm_le16(p + SDT_MD_TAC_G);
    md->sync_divider = (gint16)fm_le16(p + SDT_MD_SYN_FD);
    if (length >= SDT_MD_MOD_TYPE + 16) /* fields exist only where the length reaches */
        memcpy(md->module, p + SDT_MD_MOD_TYPE, 16);
    for (int i = 0; i < 16; i++) /* messages and metadata take printable ASCII only */
        if (md->module[i] && !g_ascii_isprint(md->module[i]))
            md->module[i] = 0;
    md->scan_x = i32_at(p, SDT_MD_SCAN_X, length);
    md->scan_y = i32_at(p, SDT_MD_SCAN_Y, length);
    md->scan_rx = i32_at(p, SDT_MD_SCAN_RX, length);
    md->scan_ry = i32_at(p, SDT_MD_SCAN_RY, length);
    md->image_x = i32_at(p, SDT_MD_IMAGE_X, length);
    md->image_y = i32_at(p, SDT_MD_IMAGE_Y, length);
    md->image_rx = i32_at(p, SDT_MD_IMAGE_RX, length);
    md->image_ry = i32_at(p, SDT_MD_IMAGE_RY, length);
    if (length >= SDT_MD_STOP_INFO_END) {
        /* rates read during the measurement: -1 when not set; trusted only when the lowest
         * and highest agree, as a free-running laser's do */
        double lo = fm_le_float(p + SDT_MD_MIN_SYNC_RATE);
        double hi = fm_le_float(p + SDT_MD_MAX_SYNC_RATE);
        if (lo > 0 && hi >= lo && isfinite(hi) && hi - lo <= 0.02 * hi)
            md->sync_rate_hz = 0.5 * (lo + hi);
    }
    return TRUE;
}

/* An integer setup parameter ("#SP [SP_IMG_X,I,256]") from the ASCII setup, or 0. */
static gint64 setup_int(const sdt_file *f, const char *key)
{
    if (!f->setup || f->setup_len == 0)
        return 0;
    g_autofree char *text = g_strndup(f->setup, f->setup_len);
    g_autofree char *needle = g_strdup_printf("[%s,", key);
    const char *at = strstr(text, needle);
    if (!at)
        return 0;
    at = strchr(at + strlen(needle), ',');
    return at ? g_ascii_strtoll(at + 1, NULL, 10) : 0;
}

typedef struct {
    gint64 w, h, channels;
    const char *kind;
} candidate;

static gint64 next_pow2(gint64 v)
{
    gint64 p = 1;
    while (p < v && p < ((gint64)1 << 40))
        p <<= 1;
    return p;
}

gboolean sdt_image_layout_of(const sdt_file *f, int block_no, guint16 type, const sdt_meas_desc *md,
                             guint64 curves, gsize bytes, sdt_image_layout *layout, GError **error)
{
    guint16 content = type & SDT_BLOCK_CONTENT_MASK;
    gboolean fifo_image = content == SDT_BLOCK_IMG || md->meas_mode == SDT_MEAS_MODE_FIFO_IMAGE;
    candidate scan = {md->scan_x, md->scan_y, MAX(md->scan_rx, 1) * MAX(md->scan_ry, 1), "image"};
    candidate image = {md->image_x, md->image_y, MAX(md->image_rx, 1) * MAX(md->image_ry, 1),
                       "fifo_image"};
    /* Older FIFO-imaging files lack image_x/image_y in the description; the setup has them. */
    candidate setup_image = {setup_int(f, "SP_IMG_X"), setup_int(f, "SP_IMG_Y"), 1, "fifo_image"};
    candidate setup_scan = {setup_int(f, "SP_SCAN_X"), setup_int(f, "SP_SCAN_Y"), 1, "image"};
    /* A FIFO image leaves the scan fields at whatever the last scan setup held, and a scan
     * leaves the image fields: the measurement's own fields are tried first. */
    candidate order[4] = {scan, image, setup_scan, setup_image};
    if (fifo_image) {
        order[0] = image, order[1] = setup_image, order[2] = scan, order[3] = setup_scan;
    }
    if (curves == 1) { /* whatever the (often stale) size fields say */
        *layout = (sdt_image_layout){1, 1, 1, 1, "decay"};
        return TRUE;
    }
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 4; i++) {
            candidate c = order[i];
            if (c.w <= 0 || c.h <= 0 || c.w > G_MAXINT32 || c.h > G_MAXINT32)
                continue;
            guint64 pixels = (guint64)c.w * (guint64)c.h;
            if (pass == 0 &&
                (pixels == curves || (c.channels > 1 && pixels * c.channels == curves))) {
                *layout = (sdt_image_layout){c.w, c.h, c.w, (gint64)(curves / pixels), c.kind};
                return TRUE;
            }
            /* FIFO images whose lines (or line count) SPCM rounded up to a power of two */
            if (pass == 1 && (fifo_image || content == SDT_BLOCK_PAGE)) {
                gint64 pw = next_pow2(c.w), ph = next_pow2(c.h);
                gint64 lines[3][2] = {{c.w, ph}, {pw, c.h}, {pw, ph}};
                for (int k = 0; k < 3; k++)
                    if ((guint64)lines[k][0] * (guint64)lines[k][1] == curves) {
                        *layout = (sdt_image_layout){c.w, c.h, lines[k][0], 1, c.kind};
                        return TRUE;
                    }
            }
        }
    /* Single-point modes (0 and 1) and decay blocks hold a set of curves, one per routing
     * channel or step: each curve becomes a pixel of one line. */
    if ((md->meas_mode == 0 || md->meas_mode == 1 || content == SDT_BLOCK_DECAY) && !fifo_image &&
        curves <= G_MAXINT32) {
        *layout = (sdt_image_layout){(gint64)curves, 1, (gint64)curves, 1, "curves"};
        return TRUE;
    }
    gint64 w = fifo_image ? md->image_x : md->scan_x, h = fifo_image ? md->image_y : md->scan_y;
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: block %d declares %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                  " pixels of %d bins but holds %" G_GSIZE_FORMAT " bytes (%" G_GUINT64_FORMAT
                  " decays)"),
                f->path, block_no, w, h, md->bins, bytes, curves);
    return FALSE;
}
