/* Becker & Hickl .sdt reader: file header, measurement descriptions and FLIM data blocks. */
#include "sdt.h"

#include <gio/gio.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/io_threads.h"
#include "app/core/io/sdt_layout.h"

gboolean fm_sdt_sniff(const guint8 *head, gsize n)
{
    if (n < SDT_FILE_HEADER_LEN)
        return FALSE;
    guint32 data_offs = fm_le32(head + SDT_HDR_DATA_BLOCK_OFFS);
    guint32 meas_offs = fm_le32(head + SDT_HDR_MEAS_DESC_OFFS);
    return fm_le16(head + SDT_HDR_HEADER_VALID) == SDT_HEADER_VALID &&
           data_offs >= SDT_FILE_HEADER_LEN && meas_offs >= SDT_FILE_HEADER_LEN;
}

/* The file as one bounds-checked byte range; `path` is only for messages. */
typedef struct {
    const char *path;
    const guint8 *bytes;
    gsize len;
} sdt_file;

static gboolean truncated(const sdt_file *f, const char *what, guint64 end, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: truncated: the %s ends at byte %" G_GUINT64_FORMAT
                  " but the file has %" G_GSIZE_FORMAT " bytes"),
                f->path, what, end, f->len);
    return FALSE;
}

static gboolean need(const sdt_file *f, guint64 offset, guint64 length, const char *what,
                     GError **error)
{
    if (offset + length > f->len)
        return truncated(f, what, offset + length, error);
    return TRUE;
}

typedef struct {
    int bins; /* ADC resolution */
    double tac_range_s, tac_gain, sync_hz;
    gint64 scan_x, scan_y;   /* image size from the MeasureInfo part */
    gint64 image_x, image_y; /* image size from the extended part, 0 where absent */
} meas_desc;

static gboolean read_meas_desc(const sdt_file *f, guint32 offs, guint32 length, int index,
                               meas_desc *md, GError **error)
{
    g_autofree char *what = g_strdup_printf(_("measurement description %d"), index);
    if (length < SDT_MD_MIN_LEN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: measurement descriptions are %u bytes long, at least %d expected"),
                    f->path, length, SDT_MD_MIN_LEN);
        return FALSE;
    }
    guint64 at = (guint64)offs + (guint64)index * length;
    if (!need(f, at, length, what, error))
        return FALSE;
    const guint8 *p = f->bytes + at;
    memset(md, 0, sizeof *md);
    md->bins = (gint16)fm_le16(p + SDT_MD_ADC_RE);
    md->tac_range_s = fm_le_float(p + SDT_MD_TAC_R);
    md->tac_gain = (gint16)fm_le16(p + SDT_MD_TAC_G);
    md->sync_hz = fm_le_float(p + SDT_MD_SYN_FQ);
    md->scan_x = (gint32)fm_le32(p + SDT_MD_SCAN_X);
    md->scan_y = (gint32)fm_le32(p + SDT_MD_SCAN_Y);
    if (length >= SDT_MD_IMAGE_Y + 4) {
        md->image_x = (gint32)fm_le32(p + SDT_MD_IMAGE_X);
        md->image_y = (gint32)fm_le32(p + SDT_MD_IMAGE_Y);
    }
    if (md->bins < 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: measurement description %d declares %d time bins (ADC resolution)"),
                    f->path, index, md->bins);
        return FALSE;
    }
    return TRUE;
}

/* Compressed blocks hold a ZIP archive with one member (a local file header, then raw
 * deflate data, APPNOTE.TXT section 4.3.7); GIO's raw-format zlib converter inflates it. */
static guint8 *inflate_zip_block(const sdt_file *f, int block, const guint8 *zip, gsize zip_len,
                                 gsize *out_len, GError **error)
{
    if (zip_len < 30 || fm_le32(zip) != 0x04034b50u) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d is marked compressed but holds no ZIP data"), f->path, block);
        return NULL;
    }
    guint16 method = fm_le16(zip + 8);
    guint64 data_at = 30 + (guint64)fm_le16(zip + 26) + fm_le16(zip + 28);
    guint64 packed = fm_le32(zip + 18), size = fm_le32(zip + 22);
    if (data_at > zip_len || (packed && data_at + packed > zip_len)) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: truncated: the ZIP data of block %d is cut short"), f->path, block);
        return NULL;
    }
    if (!packed)
        packed = zip_len - data_at;
    if (method == 0) { /* stored */
        *out_len = (gsize)packed;
        return g_memdup2(zip + data_at, (gsize)packed);
    }
    if (method != 8 || size == 0 || size > FM_FLIM_MAX_BYTES) {
        g_set_error(
            error, FM_ERROR, FM_ERROR_BAD_INPUT,
            _("%s: block %d: unsupported ZIP data (method %u, %" G_GUINT64_FORMAT " bytes)"),
            f->path, block, method, size);
        return NULL;
    }
    g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_RAW);
    guint8 *out = g_malloc((gsize)size);
    gsize in_done = 0, out_done = 0;
    GConverterResult r = G_CONVERTER_CONVERTED;
    while (r != G_CONVERTER_FINISHED) {
        gsize nr = 0, nw = 0;
        g_autoptr(GError) zerr = NULL;
        r = g_converter_convert(G_CONVERTER(z), zip + data_at + in_done, packed - in_done,
                                out + out_done, size - out_done, G_CONVERTER_INPUT_AT_END, &nr, &nw,
                                &zerr);
        in_done += nr;
        out_done += nw;
        if (r == G_CONVERTER_ERROR || (nr == 0 && nw == 0 && r != G_CONVERTER_FINISHED)) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: block %d: compressed data are damaged (%s)"), f->path, block,
                        zerr ? zerr->message : _("inflated size differs from the declared size"));
            g_free(out);
            return NULL;
        }
    }
    if (out_done != size) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d: compressed data inflate to %" G_GSIZE_FORMAT
                      " bytes, the ZIP header declares %" G_GUINT64_FORMAT),
                    f->path, block, out_done, size);
        g_free(out);
        return NULL;
    }
    *out_len = out_done;
    return out;
}

/* Chooses the image size: the scan size when it matches the data, then the extended image
 * size, then a single decay, then a square image; anything else is an inconsistent file. */
static gboolean image_size(const sdt_file *f, int block, const meas_desc *md, guint64 pixels,
                           gsize bytes, gint64 *w, gint64 *h, GError **error)
{
    if (md->scan_x > 0 && md->scan_y > 0 && (guint64)(md->scan_x * md->scan_y) == pixels) {
        *w = md->scan_x;
        *h = md->scan_y;
        return TRUE;
    }
    if (md->image_x > 0 && md->image_y > 0 && (guint64)(md->image_x * md->image_y) == pixels) {
        *w = md->image_x;
        *h = md->image_y;
        return TRUE;
    }
    guint64 side = (guint64)llround(sqrt((double)pixels));
    if (pixels == 1 || side * side == pixels) {
        *w = *h = (gint64)side;
        return TRUE;
    }
    g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                _("%s: block %d declares %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                  " pixels of %d bins but holds %" G_GSIZE_FORMAT " bytes (%" G_GUINT64_FORMAT
                  " decays)"),
                f->path, block + 1, md->scan_x, md->scan_y, md->bins, bytes, pixels);
    return FALSE;
}

/* Block data are y, x, t with t fastest (one decay after another along each line); the dataset
 * is x fastest, then y, then t, so every sample moves. */
typedef struct {
    const guint8 *data; /* the block's counts in memory (an inflated copy), or NULL: read from fd */
    int fd;
    goffset offset;     /* of the counts in the file, when read from fd */
    guint16 *out;
    int bytes_per_count, bins;
    gsize plane;                          /* pixels */
    guint64 saturated[FM_IO_MAX_THREADS]; /* per part: 32-bit counts clipped to 65535 */
    gboolean failed[FM_IO_MAX_THREADS];   /* per part: the file could not be read */
} transpose_job;

/* Pixels per tile of the transpose: the tile's decays (64 x bins counts) are read in order and
 * each time bin's plane gets 64 neighbouring values, where one pixel at a time would write to
 * `bins` distant pages per pixel. */
#define TRANSPOSE_TILE 64
/* Below this many pixels per thread a thread costs more than it saves. */
#define TRANSPOSE_MIN_PIXELS 4096

/* Reads len bytes at offset, retrying short reads; FALSE on an error or the end of the file. */
static gboolean read_at(int fd, guint8 *buf, gsize len, goffset offset)
{
    while (len > 0) {
        ssize_t n = pread(fd, buf, len, offset);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return FALSE;
        }
        buf += n;
        len -= (gsize)n;
        offset += n;
    }
    return TRUE;
}

/* Counts from the file come in through a tile-sized buffer per part rather than the file's
 * mapping: on the H100 machine a mapping touched by 16 threads held 26 MB more at the peak than
 * one thread's, whatever was released behind them (large page-cache folios are mapped whole). */
static void transpose_pixels(int part, gsize first, gsize end, gpointer user)
{
    transpose_job *job = user;
    int bins = job->bins, bpc = job->bytes_per_count;
    const gsize decay_bytes = (gsize)bins * bpc;
    g_autofree guint8 *buf = job->data ? NULL : g_malloc(TRANSPOSE_TILE * decay_bytes);
    guint64 saturated = 0;
    for (gsize tile = first; tile < end; tile += TRANSPOSE_TILE) {
        gsize n = MIN((gsize)TRANSPOSE_TILE, end - tile);
        const guint8 *decays = job->data ? job->data + tile * decay_bytes : buf;
        if (!job->data &&
            !read_at(job->fd, buf, n * decay_bytes, job->offset + (goffset)(tile * decay_bytes))) {
            job->failed[part] = TRUE;
            return;
        }
        for (int t = 0; t < bins; t++) {
            guint16 *out = job->out + (gsize)t * job->plane + tile;
            const guint8 *in = decays + (gsize)t * bpc;
            if (bpc == 2) {
                for (gsize p = 0; p < n; p++)
                    out[p] = fm_le16(in + p * decay_bytes);
                continue;
            }
            for (gsize p = 0; p < n; p++) {
                guint32 v = fm_le32(in + p * decay_bytes);
                if (v > G_MAXUINT16) {
                    v = G_MAXUINT16;
                    saturated++;
                }
                out[p] = (guint16)v;
            }
        }
    }
    job->saturated[part] = saturated;
}

/* The dataset of the file's counts, with source_path and the file's hash, which is taken while
 * the counts are transposed. */
static fm_dataset *to_dataset(const sdt_file *f, const guint8 *data, int bytes_per_count, gint64 w,
                              gint64 h, int bins, guint64 *saturated, GError **error)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    ds->source_path = g_canonicalize_filename(f->path, NULL);
    const gboolean in_file = data >= f->bytes && data < f->bytes + f->len;
    transpose_job job = {in_file ? NULL : data, -1, in_file ? data - f->bytes : 0, ds->data,
                         bytes_per_count, bins, (gsize)w * (gsize)h, {0}, {0}};
    if (in_file && (job.fd = open(f->path, O_RDONLY | O_CLOEXEC)) < 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), f->path,
                    g_strerror(errno));
        return NULL;
    }
    fm_io_hash *hash = fm_io_hash_begin(ds);
    /* Parts own disjoint pixel ranges, so they write disjoint samples. */
    fm_io_parallel_ranges(job.plane, fm_io_threads_for(job.plane, TRANSPOSE_MIN_PIXELS),
                          transpose_pixels, &job);
    if (job.fd >= 0)
        close(job.fd);
    *saturated = 0;
    gboolean failed = FALSE;
    for (int p = 0; p < FM_IO_MAX_THREADS; p++) {
        *saturated += job.saturated[p];
        failed |= job.failed[p];
    }
    if (!fm_io_hash_end(hash, error))
        return NULL;
    if (failed) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: read error in the FLIM data (the file changed while it was read?)"),
                    f->path);
        return NULL;
    }
    return g_steal_pointer(&ds);
}

/* Rounds a value derived from float32 fields to 6 significant digits: a float carries ~7, so
 * this removes representation noise (100.0000012 ps -> 100 ps) without losing information. */
static double round_float_noise(double v)
{
    if (!(v > 0) || !isfinite(v))
        return v;
    double scale = pow(10.0, 5 - floor(log10(v)));
    return round(v * scale) / scale;
}

static void set_meta_double(fm_dataset *ds, const char *key, double v)
{
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    fm_dataset_set_meta(ds, key, g_ascii_dtostr(text, sizeof text, v));
}

static fm_dataset *read_block(const sdt_file *f, int block, GError **error)
{
    if (f->len < SDT_FILE_HEADER_LEN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    f->len ? _("%s: truncated: %" G_GSIZE_FORMAT " bytes, shorter than the "
                               "42-byte .sdt file header")
                           : _("%s: empty file, not an .sdt file (%" G_GSIZE_FORMAT " bytes)"),
                    f->path, f->len);
        return NULL;
    }
    const guint8 *hd = f->bytes;
    if (fm_le16(hd + SDT_HDR_HEADER_VALID) != SDT_HEADER_VALID) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: not a Becker & Hickl .sdt file (header_valid is 0x%04x, expected "
                      "0x5555)"),
                    f->path, fm_le16(hd + SDT_HDR_HEADER_VALID));
        return NULL;
    }
    guint32 n_blocks = fm_le16(hd + SDT_HDR_N_DATA_BLOCKS);
    if (n_blocks == 0x7fff) /* the count does not fit 15 bits: it is in reserved1 */
        n_blocks = fm_le32(hd + SDT_HDR_RESERVED1);
    guint32 n_md = fm_le16(hd + SDT_HDR_N_MEAS_DESC);
    if (n_blocks == 0 || n_md == 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: the file holds %u data blocks and %u measurement descriptions; "
                      "nothing to read"),
                    f->path, n_blocks, n_md);
        return NULL;
    }
    if (block < 0)
        block = 0;
    if ((guint32)block >= n_blocks) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d asked for, the file has %u"), f->path, block + 1, n_blocks);
        return NULL;
    }
    /* Block headers form a chain from data_block_offs; follow it to the requested block. */
    guint64 at = fm_le32(hd + SDT_HDR_DATA_BLOCK_OFFS);
    for (int i = 0;; i++) {
        g_autofree char *what = g_strdup_printf(_("header of block %d"), i + 1);
        if (!need(f, at, SDT_BLOCK_HEADER_LEN, what, error))
            return NULL;
        if (i == block)
            break;
        guint64 next = fm_le32(f->bytes + at + SDT_BLK_NEXT_OFFS);
        if (next <= at) { /* also refuses loops */
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: block %d links to block %d at offset %" G_GUINT64_FORMAT
                          ", not after itself"),
                        f->path, i + 1, i + 2, next);
            return NULL;
        }
        at = next;
    }
    const guint8 *bh = f->bytes + at;
    guint16 type = fm_le16(bh + SDT_BLK_TYPE);
    guint64 data_offs = fm_le32(bh + SDT_BLK_DATA_OFFS);
    guint64 data_len = fm_le32(bh + SDT_BLK_LENGTH);
    if (data_len == 0)
        data_len = fm_le32(hd + SDT_HDR_DATA_BLOCK_LEN);
    int md_index = (gint16)fm_le16(bh + SDT_BLK_MEAS_DESC_NO);
    if (md_index < 0 || (guint32)md_index >= n_md) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d refers to measurement description %d of %u"), f->path,
                    block + 1, md_index, n_md);
        return NULL;
    }
    meas_desc md;
    if (!read_meas_desc(f, fm_le32(hd + SDT_HDR_MEAS_DESC_OFFS),
                        fm_le16(hd + SDT_HDR_MEAS_DESC_LEN), md_index, &md, error))
        return NULL;
    g_autofree char *what = g_strdup_printf(_("data of block %d"), block + 1);
    if (!need(f, data_offs, data_len, what, error))
        return NULL;
    int dtype = (type & SDT_BLOCK_DTYPE_MASK) >> 8;
    if (dtype > 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d holds %s values; only 16 and 32-bit photon counts are "
                      "supported"),
                    f->path, block + 1, dtype == 2 ? "double" : "unknown");
        return NULL;
    }
    int bytes_per_count = dtype == 1 ? 4 : 2;
    const guint8 *data = f->bytes + data_offs;
    g_autofree guint8 *inflated = NULL;
    gsize n_bytes = (gsize)data_len;
    if (type & SDT_BLOCK_ZIPPED) {
        inflated = inflate_zip_block(f, block + 1, data, n_bytes, &n_bytes, error);
        if (!inflated)
            return NULL;
        data = inflated;
    }
    guint64 decay_bytes = (guint64)md.bins * bytes_per_count;
    if (n_bytes < decay_bytes || n_bytes % decay_bytes != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d declares %d bins but holds %" G_GSIZE_FORMAT
                      " bytes, not a whole number of %" G_GUINT64_FORMAT "-byte decays"),
                    f->path, block + 1, md.bins, n_bytes, decay_bytes);
        return NULL;
    }
    if ((guint64)n_bytes / bytes_per_count * 2 > FM_FLIM_MAX_BYTES) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d would need %" G_GSIZE_FORMAT " MiB; more than 4 GiB is "
                      "refused"),
                    f->path, block + 1, n_bytes / bytes_per_count * 2 >> 20);
        return NULL;
    }
    gint64 w = 0, h = 0;
    if (!image_size(f, block, &md, n_bytes / decay_bytes, n_bytes, &w, &h, error))
        return NULL;
    guint64 saturated = 0;
    fm_dataset *ds = to_dataset(f, data, bytes_per_count, w, h, md.bins, &saturated, error);
    if (!ds)
        return NULL;
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("px");
    fm_dataset_set_meta(ds, "format", "sdt");
    if (md.tac_range_s > 0 && isfinite(md.tac_range_s) && md.tac_gain >= 1) {
        double bin_ps = round_float_noise(md.tac_range_s / md.tac_gain / md.bins * 1e12);
        ds->dims[2].unit = g_strdup("ns");
        ds->dims[2].spacing = bin_ps * 1e-3;
        set_meta_double(ds, "bin_width_ps", bin_ps);
        set_meta_double(ds, "tac_range_ns", round_float_noise(md.tac_range_s * 1e9));
    }
    if (md.sync_hz > 0 && isfinite(md.sync_hz))
        set_meta_double(ds, "rep_rate_mhz", round_float_noise(md.sync_hz * 1e-6));
    g_autofree char *text = g_strdup_printf("%d", block + 1);
    fm_dataset_set_meta(ds, "sdt_block", text);
    g_free(text);
    text = g_strdup_printf("%u", n_blocks);
    fm_dataset_set_meta(ds, "sdt_blocks", text);
    if (saturated) {
        g_free(text);
        text = g_strdup_printf("%" G_GUINT64_FORMAT, saturated);
        fm_dataset_set_meta(ds, "sdt_saturated", text);
    }
    return ds;
}

fm_dataset *fm_sdt_read(const char *path, int block, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GMappedFile) map = g_mapped_file_new(path, FALSE, &local);
    if (!map) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: cannot open: %s"), path,
                    local->message);
        return NULL;
    }
    sdt_file f = {path, (const guint8 *)g_mapped_file_get_contents(map),
                  g_mapped_file_get_length(map)};
    return read_block(&f, block, error);
}
