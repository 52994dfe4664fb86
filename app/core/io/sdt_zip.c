/* ZIP-compressed .sdt data blocks: reading (inflate, CRC and size checks) and writing. */
#include "sdt_zip.h"

#include <glib/gi18n.h>
#include <string.h>
#include <zlib.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"

/* Record signatures and offsets of APPNOTE.TXT (sections 4.3.7, 4.3.12, 4.3.16). */
#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_END_SIG 0x06054b50u
#define ZIP_LOCAL_LEN 30
#define ZIP_CENTRAL_LEN 46
#define ZIP_END_LEN 22
#define ZIP_FLAG_DESCRIPTOR 0x0008 /* CRC and sizes follow the data (and are in the directory) */
#define ZIP_STORED 0
#define ZIP_DEFLATED 8

typedef struct {
    guint32 crc, packed, size;
    gboolean known; /* FALSE: neither the local header nor a directory gave them */
} zip_sums;

/* With a data descriptor the local header holds zeros: take the figures from the central
 * directory that the end record points to. B&H archives have been seen with the end record's
 * last byte missing, so the record is looked for without its comment-length field. */
static zip_sums central_sums(const guint8 *zip, gsize len)
{
    zip_sums s = {0};
    if (len < ZIP_END_LEN - 2)
        return s;
    gsize lowest = len > 65557 ? len - 65557 : 0;
    for (gsize at = len - (ZIP_END_LEN - 2) + 1; at-- > lowest;) {
        if (fm_le32(zip + at) != ZIP_END_SIG)
            continue;
        guint64 dir = fm_le32(zip + at + 16);
        if (dir + ZIP_CENTRAL_LEN > at || fm_le32(zip + dir) != ZIP_CENTRAL_SIG)
            return s;
        s.crc = fm_le32(zip + dir + 16);
        s.packed = fm_le32(zip + dir + 20);
        s.size = fm_le32(zip + dir + 24);
        s.known = TRUE;
        return s;
    }
    return s;
}

static guint8 *damaged(const char *path, int block_no, const char *why, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: block %d: compressed data are damaged (%s)"), path, block_no, why);
    return NULL;
}

guint8 *fm_sdt_unzip(const char *path, int block_no, const guint8 *zip, gsize zip_len,
                     gsize expected_len, gsize *out_len, GError **error)
{
    if (zip_len < ZIP_LOCAL_LEN || fm_le32(zip) != ZIP_LOCAL_SIG) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d is marked compressed but holds no ZIP archive"), path,
                    block_no);
        return NULL;
    }
    guint16 flags = fm_le16(zip + 6), method = fm_le16(zip + 8);
    guint64 data_at = ZIP_LOCAL_LEN + (guint64)fm_le16(zip + 26) + fm_le16(zip + 28);
    zip_sums s = {fm_le32(zip + 14), fm_le32(zip + 18), fm_le32(zip + 22), TRUE};
    if (flags & ZIP_FLAG_DESCRIPTOR)
        s = central_sums(zip, zip_len);
    if (!s.known) {
        s.packed = 0;
        s.size = (guint32)MIN(expected_len, G_MAXUINT32);
    }
    if (data_at > zip_len || data_at + s.packed > zip_len) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated: the ZIP archive of block %d is cut short"), path, block_no);
        return NULL;
    }
    gsize avail = s.packed ? s.packed : (gsize)(zip_len - data_at);
    if (expected_len && s.size != expected_len) { /* checked before allocating s.size */
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d declares %" G_GSIZE_FORMAT " bytes but its ZIP archive "
                      "holds %u"),
                    path, block_no, expected_len, s.size);
        return NULL;
    }
    if ((method != ZIP_DEFLATED && method != ZIP_STORED) || s.size == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d: unsupported ZIP data (method %u, %u bytes)"), path, block_no,
                    method, s.size);
        return NULL;
    }
    guint8 *out = g_malloc(s.size);
    gsize done = 0;
    if (method == ZIP_STORED) {
        if (avail < s.size) {
            g_free(out);
            return damaged(path, block_no, _("stored data shorter than declared"), error);
        }
        memcpy(out, zip + data_at, s.size);
        done = s.size;
    } else {
        z_stream z = {0};
        if (inflateInit2(&z, -MAX_WBITS) != Z_OK) {
            g_free(out);
            return damaged(path, block_no, _("zlib could not start"), error);
        }
        z.next_in = (Bytef *)(zip + data_at);
        z.avail_in = (uInt)avail;
        z.next_out = out;
        z.avail_out = s.size;
        int r = inflate(&z, Z_FINISH);
        done = z.total_out;
        const char *why = r == Z_STREAM_END ? NULL
                          : r == Z_BUF_ERROR && z.avail_out == 0
                              ? _("inflates to more than the declared size")
                          : r == Z_BUF_ERROR ? _("the deflate stream is cut short")
                                             : (z.msg ? z.msg : _("invalid deflate stream"));
        g_autofree char *why_copy = g_strdup(why);
        inflateEnd(&z);
        if (why_copy) {
            g_free(out);
            return damaged(path, block_no, why_copy, error);
        }
    }
    if (done != s.size) {
        g_autofree char *why = g_strdup_printf(_("%" G_GSIZE_FORMAT " bytes inflated, %u "
                                                 "declared"),
                                               done, s.size);
        g_free(out);
        return damaged(path, block_no, why, error);
    }
    if (s.known && crc32(0L, out, s.size) != s.crc) {
        g_free(out);
        return damaged(path, block_no, _("CRC-32 mismatch"), error);
    }
    *out_len = done;
    return out;
}

static void put_local_or_central(GByteArray *a, gboolean central, guint32 crc, guint32 packed,
                                 guint32 size, const char *name, guint32 local_at)
{
    guint8 rec[ZIP_CENTRAL_LEN] = {0};
    guint8 *p = rec;
    fm_put_le32(p, central ? ZIP_CENTRAL_SIG : ZIP_LOCAL_SIG);
    p += 4;
    if (central) {
        fm_put_le16(p, 20); /* made by: version 2.0 */
        p += 2;
    }
    fm_put_le16(p, 20); /* needed to extract: 2.0 (deflate) */
    fm_put_le16(p + 2, 0);
    fm_put_le16(p + 4, ZIP_DEFLATED);
    fm_put_le16(p + 6, 0);    /* time */
    fm_put_le16(p + 8, 0x21); /* date: 1980-01-01 */
    fm_put_le32(p + 10, crc);
    fm_put_le32(p + 14, packed);
    fm_put_le32(p + 18, size);
    fm_put_le16(p + 22, (guint16)strlen(name));
    if (central)
        fm_put_le32(p + 36, local_at); /* after extra, comment, disk, attributes */
    g_byte_array_append(a, rec, central ? ZIP_CENTRAL_LEN : ZIP_LOCAL_LEN);
    g_byte_array_append(a, (const guint8 *)name, (guint)strlen(name));
}

guint8 *fm_sdt_zip(const guint8 *data, gsize len, gsize *zip_len)
{
    const char *name = "data_block";
    z_stream z = {0};
    if (len > G_MAXUINT32 / 2 ||
        deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NULL;
    gsize bound = deflateBound(&z, (uLong)len);
    g_autofree guint8 *packed = g_malloc(bound);
    z.next_in = (Bytef *)data;
    z.avail_in = (uInt)len;
    z.next_out = packed;
    z.avail_out = (uInt)bound;
    int r = deflate(&z, Z_FINISH);
    gsize n = z.total_out;
    deflateEnd(&z);
    if (r != Z_STREAM_END)
        return NULL;
    guint32 crc = (guint32)crc32(0L, data, (uInt)len);
    GByteArray *a = g_byte_array_new();
    put_local_or_central(a, FALSE, crc, (guint32)n, (guint32)len, name, 0);
    g_byte_array_append(a, packed, (guint)n);
    guint32 dir_at = a->len;
    put_local_or_central(a, TRUE, crc, (guint32)n, (guint32)len, name, 0);
    guint8 end[ZIP_END_LEN] = {0};
    fm_put_le32(end, ZIP_END_SIG);
    fm_put_le16(end + 8, 1);
    fm_put_le16(end + 10, 1);
    fm_put_le32(end + 12, a->len - dir_at);
    fm_put_le32(end + 16, dir_at);
    g_byte_array_append(a, end, sizeof end);
    *zip_len = a->len;
    return g_byte_array_free(a, FALSE);
}
