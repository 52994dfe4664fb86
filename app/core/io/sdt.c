/* Becker & Hickl .sdt reader: file header, the chain of data blocks, and one FLIM dataset
 * (a block, or one routing channel of it) with its time axis and metadata. */
#include "sdt.h"

#include <gio/gio.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_bytes.h"
#include "app/core/io/map_input.h"
#include "app/core/io/sdt_layout.h"
#include "app/core/io/sdt_private.h"
#include "app/core/io/sdt_zip.h"

gboolean fm_sdt_sniff(const guint8 *head, gsize n)
{
    if (n < SDT_FILE_HEADER_LEN)
        return FALSE;
    guint32 data_offs = fm_le32(head + SDT_HDR_DATA_BLOCK_OFFS);
    guint32 meas_offs = fm_le32(head + SDT_HDR_MEAS_DESC_OFFS);
    return fm_le16(head + SDT_HDR_HEADER_VALID) == SDT_HEADER_VALID &&
           data_offs >= SDT_FILE_HEADER_LEN && meas_offs >= SDT_FILE_HEADER_LEN;
}

/* One data block as its header describes it. */
typedef struct {
    int number; /* 1-based, for messages */
    guint16 type;
    guint64 data_offs, next_offs;
    guint64 length; /* uncompressed bytes */
    guint64 stored; /* bytes in the file */
    int md_index;
} block_info;

static const char *module_name(int type)
{
    static const struct {
        int type;
        const char *name;
    } names[] = {{0x20, "SPC-130"},     {0x21, "SPC-600"},    {0x22, "SPC-630"},
                 {0x23, "SPC-700"},     {0x24, "SPC-730"},    {0x25, "SPC-830"},
                 {0x26, "SPC-140"},     {0x27, "SPC-930"},    {0x28, "SPC-150"},
                 {0x29, "DPC-230"},     {0x2a, "SPC-130EM"},  {0x2b, "SPC-160"},
                 {0x2e, "SPC-150N"},    {0x80, "SPC-150NX"},  {0x81, "SPC-160X"},
                 {0x82, "SPC-160PCIE"}, {0x83, "SPC-130EMN"}, {0x84, "SPC-180N"},
                 {0x85, "SPC-180NX"},   {0x86, "SPC-180NXX"}, {0x87, "SPC-180N-USB"}};
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++)
        if (names[i].type == type)
            return names[i].name;
    return NULL;
}

static gboolean read_file_header(sdt_file *f, guint32 *n_blocks, guint32 *n_md, GError **error)
{
    if (f->len < SDT_FILE_HEADER_LEN) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    f->len ? _("%s: truncated: %" G_GSIZE_FORMAT " bytes, shorter than the "
                               "42-byte .sdt file header")
                           : _("%s: empty file, not an .sdt file (%" G_GSIZE_FORMAT " bytes)"),
                    f->path, f->len);
        return FALSE;
    }
    const guint8 *hd = f->bytes;
    if (fm_le16(hd + SDT_HDR_HEADER_VALID) != SDT_HEADER_VALID) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: not a Becker & Hickl .sdt file (header_valid is 0x%04x, expected "
                      "0x5555)"),
                    f->path, fm_le16(hd + SDT_HDR_HEADER_VALID));
        return FALSE;
    }
    guint16 revision = fm_le16(hd + SDT_HDR_REVISION);
    f->software_revision = revision & 0xf;
    /* the module type is in the word from software revision 12 (bits 4-11), 12 bits wide
     * from revision 14; older files name the module only in the measurement description */
    f->module_type = f->software_revision < 12   ? 0
                     : f->software_revision < 14 ? (revision >> 4) & 0xff
                                                 : (revision >> 4) & 0xfff;
    guint64 setup_at = fm_le32(hd + SDT_HDR_SETUP_OFFS),
            setup_len = fm_le16(hd + SDT_HDR_SETUP_LEN);
    if (setup_len && setup_at + setup_len <= f->len) { /* optional: used only as a fallback */
        f->setup = (const char *)f->bytes + setup_at;
        f->setup_len = (gsize)setup_len;
    }
    *n_blocks = fm_le16(hd + SDT_HDR_N_DATA_BLOCKS);
    if (*n_blocks == 0x7fff) /* the count does not fit 15 bits: it is in reserved1 */
        *n_blocks = fm_le32(hd + SDT_HDR_RESERVED1);
    *n_md = fm_le16(hd + SDT_HDR_N_MEAS_DESC);
    if (*n_blocks == 0 || *n_md == 0 || *n_md > 0x7fff) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: the file holds %u data blocks and %u measurement descriptions; "
                      "nothing to read"),
                    f->path, *n_blocks, *n_md);
        return FALSE;
    }
    return TRUE;
}

static gboolean read_block_header(const sdt_file *f, guint64 at, int number, guint32 n_md,
                                  block_info *b, GError **error)
{
    g_autofree char *what = g_strdup_printf(_("header of block %d"), number);
    if (!sdt_need(f, at, SDT_BLOCK_HEADER_LEN, what, error))
        return FALSE;
    const guint8 *bh = f->bytes + at;
    b->number = number;
    b->type = fm_le16(bh + SDT_BLK_TYPE);
    b->data_offs = fm_le32(bh + SDT_BLK_DATA_OFFS);
    b->next_offs = fm_le32(bh + SDT_BLK_NEXT_OFFS);
    if (f->software_revision >= SDT_REV_40BIT_OFFSETS) {
        b->data_offs |= (guint64)bh[SDT_BLK_DATA_OFFS_EXT] << 32;
        b->next_offs |= (guint64)bh[SDT_BLK_NEXT_OFFS_EXT] << 32;
    }
    b->length = fm_le32(bh + SDT_BLK_LENGTH);
    if (b->length == 0) /* files before v7 kept one length for all blocks in the header */
        b->length = fm_le32(f->bytes + SDT_HDR_DATA_BLOCK_LEN);
    b->md_index = (gint16)fm_le16(bh + SDT_BLK_MEAS_DESC_NO);
    if (b->md_index < 0 || (guint32)b->md_index >= n_md) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d refers to measurement description %d of %u"), f->path, number,
                    b->md_index + 1, n_md);
        return FALSE;
    }
    /* A ZIP archive fills the space up to the next block header, which for the last block is
     * the end of the file; without a usable link, up to the end of the file. */
    b->stored = b->length;
    if (b->type & (SDT_BLOCK_ZIPPED | SDT_BLOCK_LZ4))
        b->stored = b->next_offs > b->data_offs ? b->next_offs - b->data_offs
                    : b->data_offs < f->len     ? f->len - b->data_offs
                                                : 0;
    g_autofree char *data_what = g_strdup_printf(_("data of block %d"), number);
    return sdt_need(f, b->data_offs, b->stored, data_what, error);
}

/* Blocks of decay curves are FLIM data; FCS, FIDA, FILDA, MCS and moment blocks are not. */
static gboolean is_flim_block(guint16 type)
{
    guint16 content = type & SDT_BLOCK_CONTENT_MASK;
    return content == SDT_BLOCK_DECAY || content == SDT_BLOCK_PAGE || content == SDT_BLOCK_IMG;
}

static int bytes_per_count(const sdt_file *f, const block_info *b, GError **error)
{
    int dtype = (b->type & SDT_BLOCK_DTYPE_MASK) >> 8;
    if (dtype > 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d holds %s values; only 16 and 32-bit photon counts are "
                      "supported"),
                    f->path, b->number, dtype == 2 ? "double" : "unknown");
        return 0;
    }
    return dtype == 1 ? 4 : 2;
}

/* The block's layout from its header's (uncompressed) length, before reading its data. */
static gboolean block_layout(const sdt_file *f, const block_info *b, const sdt_meas_desc *md,
                             int bpc, sdt_image_layout *layout, GError **error)
{
    guint64 decay_bytes = (guint64)md->bins * bpc;
    if (b->length < decay_bytes || b->length % decay_bytes != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d declares %d bins but holds %" G_GUINT64_FORMAT
                      " bytes, not a whole number of %" G_GUINT64_FORMAT "-byte decays"),
                    f->path, b->number, md->bins, b->length, decay_bytes);
        return FALSE;
    }
    if (b->length / bpc * 2 > FM_FLIM_MAX_BYTES) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d would need %" G_GUINT64_FORMAT " MiB; more than 4 GiB is "
                      "refused"),
                    f->path, b->number, b->length / bpc * 2 >> 20);
        return FALSE;
    }
    return sdt_image_layout_of(f, b->number, b->type, md, b->length / decay_bytes, (gsize)b->length,
                               layout, error);
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

static void set_meta_int(fm_dataset *ds, const char *key, gint64 v)
{
    g_autofree char *text = g_strdup_printf("%" G_GINT64_FORMAT, v);
    fm_dataset_set_meta(ds, key, text);
}

/* Time axis and repetition rate. SPCM records no laser frequency: the sync rate measured
 * during the measurement where the description has it (v7.9 and later), else the TAC window
 * (range / gain), which SPCM users set to the laser period (phasorpy reads it so as well). */
static void set_time_meta(fm_dataset *ds, const sdt_meas_desc *md)
{
    if (md->tac_range_s > 0 && isfinite(md->tac_range_s) && md->tac_gain >= 1) {
        double bin_ps = round_float_noise(md->tac_range_s / md->tac_gain / md->bins * 1e12);
        ds->dims[2].unit = g_strdup("ns");
        ds->dims[2].spacing = bin_ps * 1e-3;
        set_meta_double(ds, "bin_width_ps", bin_ps);
        set_meta_double(ds, "tac_range_ns", round_float_noise(md->tac_range_s * 1e9));
    }
    if (md->sync_rate_hz > 0) {
        set_meta_double(ds, "rep_rate_mhz", round_float_noise(md->sync_rate_hz * 1e-6));
        fm_dataset_set_meta(ds, "rep_rate_source", "sync_rate");
    } else if (md->tac_range_s > 0 && isfinite(md->tac_range_s) && md->tac_gain >= 1) {
        double window_s = md->tac_range_s / md->tac_gain;
        set_meta_double(ds, "rep_rate_mhz", round_float_noise(1e-6 / window_s));
        fm_dataset_set_meta(ds, "rep_rate_source", "tac_window");
    }
}

static fm_dataset *read_dataset(const sdt_file *f, const block_info *b, const sdt_meas_desc *md,
                                const sdt_image_layout *lay, int bpc, int channel, GError **error)
{
    const guint8 *data = f->bytes + b->data_offs;
    g_autofree guint8 *inflated = NULL;
    if (b->type & SDT_BLOCK_LZ4) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    _("%s: block %d is LZ4-compressed, which Fluxmap cannot read yet; save the "
                      "data uncompressed or ZIP-compressed in SPCM"),
                    f->path, b->number);
        return NULL;
    }
    if (b->type & SDT_BLOCK_ZIPPED) {
        gsize n = 0;
        inflated =
            fm_sdt_unzip(f->path, b->number, data, (gsize)b->stored, (gsize)b->length, &n, error);
        if (!inflated)
            return NULL;
        if (n != b->length) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: block %d declares %" G_GUINT64_FORMAT " bytes but its ZIP "
                          "archive holds %" G_GSIZE_FORMAT),
                        f->path, b->number, b->length, n);
            return NULL;
        }
        data = inflated;
    }
    gsize image_bytes = (gsize)lay->line * (gsize)lay->height * (gsize)md->bins * bpc;
    guint64 saturated = 0;
    fm_dataset *ds = sdt_to_dataset(f, data + (gsize)channel * image_bytes, bpc, lay->width,
                                    lay->height, lay->line, md->bins, &saturated, error);
    if (!ds)
        return NULL;
    ds->dims[0].unit = g_strdup("px");
    ds->dims[1].unit = g_strdup("px");
    fm_dataset_set_meta(ds, "format", "sdt");
    set_time_meta(ds, md);
    fm_dataset_set_meta(ds, "sdt_layout", lay->kind);
    set_meta_int(ds, "sdt_meas_mode", md->meas_mode);
    const char *module = module_name(f->module_type);
    if (!module && md->module[0])
        module = md->module;
    if (module) {
        fm_dataset_set_meta(ds, "sdt_module", module);
        fm_dataset_set_meta(ds, "format_variant", module);
    }
    set_meta_int(ds, "sdt_block", b->number);
    if (lay->channels > 1)
        set_meta_int(ds, "sdt_channel", channel + 1);
    if (saturated)
        set_meta_int(ds, "sdt_saturated", (gint64)saturated);
    return ds;
}

static fm_dataset *read_file(sdt_file *f, int wanted, GError **error)
{
    guint32 n_blocks = 0, n_md = 0;
    if (!read_file_header(f, &n_blocks, &n_md, error))
        return NULL;
    guint64 md_offs = fm_le32(f->bytes + SDT_HDR_MEAS_DESC_OFFS);
    guint32 md_len = fm_le16(f->bytes + SDT_HDR_MEAS_DESC_LEN);
    if (wanted < 0)
        wanted = 0;
    /* Walk the whole chain: every block header is checked, and the datasets (blocks of curves,
     * one per routing channel) are counted for the metadata. */
    block_info chosen = {0};
    sdt_meas_desc chosen_md = {0};
    sdt_image_layout chosen_layout = {0};
    int chosen_bpc = 0, chosen_channel = -1;
    gint64 n_datasets = 0;
    guint64 at = fm_le32(f->bytes + SDT_HDR_DATA_BLOCK_OFFS);
    for (guint32 i = 0; i < n_blocks; i++) {
        block_info b;
        if (!read_block_header(f, at, (int)i + 1, n_md, &b, error))
            return NULL;
        if (is_flim_block(b.type)) {
            sdt_meas_desc md;
            sdt_image_layout lay;
            int bpc = bytes_per_count(f, &b, error);
            if (!bpc || !sdt_read_meas_desc(f, md_offs, md_len, b.md_index, &md, error) ||
                !block_layout(f, &b, &md, bpc, &lay, error))
                return NULL;
            if (chosen_channel < 0 && wanted < n_datasets + lay.channels) {
                chosen = b, chosen_md = md, chosen_layout = lay, chosen_bpc = bpc;
                chosen_channel = (int)(wanted - n_datasets);
            }
            n_datasets += lay.channels;
        }
        if (i + 1 == n_blocks)
            break;
        if (b.next_offs <= at) { /* also refuses loops */
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                        _("%s: block %u links to block %u at offset %" G_GUINT64_FORMAT
                          ", not after itself"),
                        f->path, i + 1, i + 2, b.next_offs);
            return NULL;
        }
        at = b.next_offs;
    }
    if (chosen_channel < 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT,
                    n_datasets ? _("%s: dataset %d asked for, the file holds %" G_GINT64_FORMAT
                                   " (blocks of decays and their routing channels)")
                               : _("%s: no block of decay curves among the file's blocks "
                                   "(dataset %d asked for, %" G_GINT64_FORMAT " found)"),
                    f->path, wanted + 1, n_datasets);
        return NULL;
    }
    fm_dataset *ds =
        read_dataset(f, &chosen, &chosen_md, &chosen_layout, chosen_bpc, chosen_channel, error);
    if (ds) {
        set_meta_int(ds, "sdt_blocks", n_blocks);
        set_meta_int(ds, "sdt_datasets", n_datasets);
        set_meta_int(ds, "sdt_dataset", wanted + 1);
    }
    return ds;
}

fm_dataset *fm_sdt_read(const char *path, int block, GError **error)
{
    g_autoptr(GMappedFile) map = fm_map_input(path, error);
    if (!map)
        return NULL;
    sdt_file f = {path,
                  (const guint8 *)g_mapped_file_get_contents(map),
                  g_mapped_file_get_length(map),
                  0,
                  0,
                  NULL,
                  0};
    return read_file(&f, block, error);
}
