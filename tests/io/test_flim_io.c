/* FLIM file tests: .sdt and .ptu writer/reader round trips (exact counts, bin width), ZIP
 * blocks, overflow records of every T3 family, rebinning, progress and cancel, the opener's
 * dispatch by content, and FM_ERROR_BAD_INPUT naming the file for every cut or damaged file. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/open.h"
#include "app/core/io/ptu.h"
#include "app/core/io/sdt.h"
#include "app/core/io/sdt_layout.h"
#include "app/core/io/sdt_write.h"
#include "app/core/io/tiff.h"
#include "tests/io/flim-test-util.h"

static char *tmp_dir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

/* A counts cube with a decaying profile and fixed-seed noise, some pixels empty. */
static fm_dataset *make_counts(int w, int h, int bins, int peak, guint32 seed)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    guint16 *c = ds->data;
    for (int t = 0; t < bins; t++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double mean = peak * exp(-t * 4.0 / bins) * (x == 1 && y == 0 ? 0.0 : 1.0);
                c[((gsize)t * h + y) * w + x] = (guint16)(mean * g_rand_double(rand) + 0.5);
            }
    return ds;
}

/* Float32 fields (.sdt) carry ~7 digits, so the bin width is checked to 1e-6 relative; .ptu
 * stores doubles and the reader's rounding keeps 12 digits, so 1e-9 there. */
static void assert_bin_width(const fm_dataset *ds, double bin_ps, double rel)
{
    const char *meta = fm_dataset_get_meta(ds, "bin_width_ps");
    g_assert_nonnull(meta);
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(meta, NULL), bin_ps, bin_ps * rel);
    g_assert_cmpstr(ds->dims[2].unit, ==, "ns");
    g_assert_cmpfloat_with_epsilon(ds->dims[2].spacing, bin_ps * 1e-3, bin_ps * 1e-3 * rel);
}

typedef fm_dataset *(*reader_fn)(const char *path, GError **error);

static fm_dataset *read_sdt(const char *path, GError **error)
{
    return fm_sdt_read(path, -1, error);
}

static fm_dataset *read_ptu(const char *path, GError **error)
{
    return fm_ptu_read(path, 0, NULL, NULL, NULL, error);
}

static fm_dataset *read_any(const char *path, GError **error)
{
    return fm_dataset_open(path, NULL, NULL, NULL, error);
}

static void expect_bad_input(reader_fn read, const char *path, const char *fragment)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = read(path, &error);
    if (ds)
        g_error("%s was read although it is damaged", path);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    if (!strstr(error->message, path))
        g_error("message '%s' does not name the file", error->message);
    if (fragment && !strstr(error->message, fragment))
        g_error("message '%s' does not mention '%s'", error->message, fragment);
}

/* Cuts the file at every `step`-th byte; each cut must fail cleanly through `read`. */
static void expect_every_cut_fails(reader_fn read, const char *path, gsize step)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    /* the cut copy keeps the extension, so the opener's fallback by name is exercised too */
    g_autofree char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
    g_autofree char *cut_name = g_strconcat("cut-", base, NULL);
    g_autofree char *cut_path = g_build_filename(dir, cut_name, NULL);
    for (gsize cut = 0; cut < len; cut += step) {
        flim_test_write_bytes(cut_path, bytes, cut);
        expect_bad_input(read, cut_path, NULL);
    }
    g_unlink(cut_path);
}

/* Rewrites bytes [at, at+n) of a file. */
/* Offset of `needle` in the first len bytes (which may hold NULs), or -1. */
static gssize find_bytes(const char *bytes, gsize len, const char *needle)
{
    gsize n = strlen(needle);
    for (gsize i = 0; i + n <= len; i++)
        if (memcmp(bytes + i, needle, n) == 0)
            return (gssize)i;
    return -1;
}

static void patch_file(const char *path, const char *out, gsize at, const void *data, gsize n)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_assert_cmpuint(at + n, <=, len);
    memcpy(bytes + at, data, n);
    g_assert_true(g_file_set_contents(out, bytes, (gssize)len, NULL));
}

/* --- .sdt -------------------------------------------------------------------------------- */

static void test_sdt_round_trip(void)
{
    g_autoptr(fm_dataset) counts = make_counts(13, 9, 64, 900, 11);
    g_autofree char *path = tmp_path("round.sdt");
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_sdt_write(path, counts, 97.5, &error));
    g_assert_no_error(error);
    g_autoptr(fm_dataset) back = fm_sdt_read(path, -1, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, back);
    assert_bin_width(back, 97.5, 1e-6);
    g_assert_cmpstr(fm_dataset_get_meta(back, "format"), ==, "sdt");
    /* TAC range = bins × bin width, laser period the same; the reader keeps 6 significant
     * digits of float32 fields, so 5e-6 relative */
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fm_dataset_get_meta(back, "tac_range_ns"), NULL),
                                   6.24, 6.24 * 5e-6);
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fm_dataset_get_meta(back, "rep_rate_mhz"), NULL),
                                   1e3 / 6.24, 1e3 / 6.24 * 5e-6);
    g_assert_true(g_path_is_absolute(back->source_path));
    g_assert_nonnull(back->sha256);
    g_autoptr(fm_dataset) opened = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, opened);
}

static void test_sdt_truncated(void)
{
    g_autoptr(fm_dataset) counts = make_counts(5, 4, 16, 50, 12);
    g_autofree char *path = tmp_path("cut.sdt");
    g_assert_true(fm_sdt_write(path, counts, 50.0, NULL));
    expect_every_cut_fails(read_sdt, path, 1);
    expect_every_cut_fails(read_any, path, 1);
}

static void test_sdt_corrupted(void)
{
    g_autoptr(fm_dataset) counts = make_counts(8, 8, 32, 50, 13);
    g_autofree char *path = tmp_path("good.sdt");
    g_autofree char *bad = tmp_path("bad.sdt");
    g_assert_true(fm_sdt_write(path, counts, 80.0, NULL));
    guint8 zero2[2] = {0, 0}, bins64[2] = {64, 0}, huge[4] = {0xff, 0xff, 0xff, 0x7f};
    patch_file(path, bad, 32, zero2, 2); /* header_valid */
    expect_bad_input(read_sdt, bad, "not a Becker & Hickl");
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    guint32 md_at = (guint8)bytes[24] | (guint8)bytes[25] << 8;
    patch_file(path, bad, md_at + SDT_MD_ADC_RE, bins64, 2); /* 64 bins: 2048 / 64 decays */
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) odd = fm_sdt_read(bad, -1, &error);
    /* 2048 samples of 64 bins = 32 decays, not 8x8 and not square: refused */
    g_assert_null(odd);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "declares 8x8 pixels of 64 bins"));
    patch_file(path, bad, md_at + SDT_MD_ADC_RE, zero2, 2); /* documented as 65536 bins */
    expect_bad_input(read_sdt, bad, "declares 65536 bins");
    guint32 block_at = (guint8)bytes[14] | (guint8)bytes[15] << 8;
    patch_file(path, bad, block_at + 18, huge, 4); /* block length 2 GiB */
    expect_bad_input(read_sdt, bad, "truncated");
    guint8 bins3[2] = {3, 0};
    patch_file(path, bad, md_at + SDT_MD_ADC_RE, bins3, 2); /* 4096 bytes: no 6-byte decays */
    expect_bad_input(read_sdt, bad, "declares 3 bins but holds 4096 bytes");
}

/* The block inflated independently of the reader (GIO's raw inflater over the archive's local
 * header), to check that the writer's ZIP blocks are what B&H writes: one member of raw
 * deflate data holding the plain block. */
static GBytes *inflate_member(const guint8 *zip, gsize len)
{
    g_assert_cmpuint(len, >=, 30);
    g_assert_cmpuint(zip[0] | zip[1] << 8 | zip[2] << 16 | (guint32)zip[3] << 24, ==, 0x04034b50u);
    g_assert_cmpuint(zip[8], ==, 8); /* deflate */
    gsize data_at = 30 + (gsize)(zip[26] | zip[27] << 8) + (gsize)(zip[28] | zip[29] << 8);
    gsize size = zip[22] | zip[23] << 8 | zip[24] << 16 | (gsize)zip[25] << 24;
    g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_RAW);
    guint8 *out = g_malloc(size + 1);
    gsize nr = 0, nw = 0;
    GConverterResult r = g_converter_convert(G_CONVERTER(z), zip + data_at, len - data_at, out,
                                             size + 1, G_CONVERTER_INPUT_AT_END, &nr, &nw, NULL);
    g_assert_cmpint(r, ==, G_CONVERTER_FINISHED);
    g_assert_cmpuint(nw, ==, size);
    return g_bytes_new_take(out, size);
}

static guint32 le32_at(const char *b, gsize at)
{
    const guint8 *p = (const guint8 *)b + at;
    return p[0] | p[1] << 8 | p[2] << 16 | (guint32)p[3] << 24;
}

static void test_sdt_zipped(void)
{
    g_autoptr(fm_dataset) counts = make_counts(6, 5, 40, 300, 14);
    g_autofree char *path = tmp_path("plain.sdt");
    g_autofree char *zpath = tmp_path("zipped.sdt");
    g_assert_true(fm_sdt_write(path, counts, 120.0, NULL));
    const fm_dataset *one[1] = {counts};
    fm_sdt_write_options o = {
        .datasets = one, .n_datasets = 1, .bin_width_ps = 120.0, .compress = TRUE};
    g_assert_true(fm_sdt_write_ex(zpath, &o, NULL));
    g_autofree char *plain = NULL, *zipped = NULL;
    gsize plain_len = 0, zip_len = 0;
    g_assert_true(g_file_get_contents(path, &plain, &plain_len, NULL));
    g_assert_true(g_file_get_contents(zpath, &zipped, &zip_len, NULL));
    guint32 block_at = le32_at(zipped, SDT_HDR_DATA_BLOCK_OFFS);
    guint32 data_at = le32_at(zipped, block_at + SDT_BLK_DATA_OFFS);
    guint32 plain_data_at = le32_at(plain, le32_at(plain, SDT_HDR_DATA_BLOCK_OFFS) + 2);
    g_assert_true((guint8)zipped[block_at + SDT_BLK_TYPE + 1] & 0x10); /* DATA_ZIPPED */
    /* the block length is the uncompressed length, as B&H documents it */
    g_assert_cmpuint(le32_at(zipped, block_at + SDT_BLK_LENGTH), ==, plain_len - plain_data_at);
    g_autoptr(GBytes) member = inflate_member((const guint8 *)zipped + data_at, zip_len - data_at);
    g_assert_cmpuint(g_bytes_get_size(member), ==, plain_len - plain_data_at);
    g_assert_true(memcmp(g_bytes_get_data(member, NULL), plain + plain_data_at,
                         plain_len - plain_data_at) == 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = fm_sdt_read(zpath, -1, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, back);
    expect_every_cut_fails(read_sdt, zpath, 3);
    /* any damaged byte of the deflate stream is caught (invalid stream, size or CRC-32) */
    g_autofree char *bad = tmp_path("zip-damaged.sdt");
    gsize stream_at = data_at + 30 + strlen("data_block");
    for (gsize at = stream_at; at < stream_at + 40; at += 3) {
        guint8 flipped = (guint8)(zipped[at] ^ 0x5a);
        patch_file(zpath, bad, at, &flipped, 1);
        expect_bad_input(read_sdt, bad, "block 1");
    }
    /* a truncated archive (the stream cut, no directory) */
    flim_test_write_bytes(bad, zipped, zip_len - 30);
    expect_bad_input(read_sdt, bad, NULL);
}

/* --- .ptu -------------------------------------------------------------------------------- */

/* Counts records of each kind in a HydraHarp T3 file, decoded here independently. */
static void count_hydraharp_records(const char *path, guint64 *photons, guint64 *overflow_recs,
                                    guint64 *wraps)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    gssize end = find_bytes(bytes, len, "Header_End");
    g_assert_cmpint(end, >, 0);
    *photons = *overflow_recs = *wraps = 0;
    for (gsize at = (gsize)end + 48; at + 4 <= len; at += 4) {
        guint32 r;
        memcpy(&r, bytes + at, 4);
        r = GUINT32_FROM_LE(r);
        if (!(r >> 31))
            (*photons)++;
        else if (((r >> 25) & 0x3f) == 0x3f) {
            (*overflow_recs)++;
            *wraps += (r & 0x3ff) ? (r & 0x3ff) : 1;
        }
    }
}

static guint64 total_counts(const fm_dataset *ds)
{
    guint64 n = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        n += ((const guint16 *)ds->data)[i];
    return n;
}

static void ptu_round_trip(guint32 rec_type, int syncs_per_pixel, int gap, const char *name)
{
    g_autoptr(fm_dataset) counts = make_counts(11, 7, 48, 40, 21);
    g_autofree char *path = tmp_path(name);
    fm_ptu_write_options opt = {
        .record_type = rec_type, .syncs_per_pixel = syncs_per_pixel, .line_gap_syncs = gap};
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_ptu_write(path, counts, 62.5, &opt, &error));
    g_assert_no_error(error);
    g_autoptr(fm_dataset) back = fm_ptu_read(path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, back);
    assert_bin_width(back, 62.5, 1e-9);
    g_assert_cmpstr(fm_dataset_get_meta(back, "format"), ==, "ptu");
    g_assert_cmpstr(fm_dataset_get_meta(back, "ptu_photons_dropped"), ==, "0");
    g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fm_dataset_get_meta(back, "rep_rate_mhz"), NULL),
                                   1e6 / (48 * 62.5), 1e-6);
    guint64 total = total_counts(counts);
    g_autofree char *photons = g_strdup_printf("%" G_GUINT64_FORMAT, total);
    g_assert_cmpstr(fm_dataset_get_meta(back, "ptu_photons"), ==, photons);
    if (rec_type != FM_PTU_PICOHARP_T3) {
        guint64 n_photons, n_overflow, wraps;
        count_hydraharp_records(path, &n_photons, &n_overflow, &wraps);
        g_assert_cmpuint(n_photons, ==, total);
        /* the last sync time lies beyond (wraps - 1) · 1024 periods: the overflows were real */
        guint64 dwell = syncs_per_pixel > 0 ? syncs_per_pixel : 8; /* the writer's defaults */
        guint64 fly = gap > 0 ? gap : 3000;
        guint64 last_stop = 6 * (11 * dwell + fly) + 11 * dwell;
        g_assert_cmpuint(wraps, ==, last_stop / 1024);
        g_assert_cmpuint(n_overflow, >, 0);
        if (rec_type == FM_PTU_HYDRAHARP2_T3)
            g_assert_cmpuint(n_overflow, <, wraps); /* v2 records count several wraps */
        else
            g_assert_cmpuint(n_overflow, ==, wraps); /* v1: one record per wrap */
    }
}

static void test_ptu_hydraharp2(void)
{
    ptu_round_trip(FM_PTU_HYDRAHARP2_T3, 0, 0, "hh2.ptu");
    ptu_round_trip(FM_PTU_HYDRAHARP2_T3, 3, 2000000, "hh2-long-gap.ptu");
}

static void test_ptu_hydraharp1(void)
{
    ptu_round_trip(FM_PTU_HYDRAHARP_T3, 5, 4000, "hh1.ptu");
}

static void test_ptu_picoharp(void)
{
    ptu_round_trip(FM_PTU_PICOHARP_T3, 8, 70000, "ph.ptu");
}

/* max_bins sums neighbouring dtime bins: 48 bins, at most 12 -> 12 bins of 4, width × 4. */
static void test_ptu_rebin(void)
{
    g_autoptr(fm_dataset) counts = make_counts(4, 3, 48, 30, 22);
    g_autofree char *path = tmp_path("rebin.ptu");
    g_assert_true(fm_ptu_write(path, counts, 100.0, NULL, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = fm_ptu_read(path, 12, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(back->dims[2].size, ==, 12);
    assert_bin_width(back, 400.0, 1e-9);
    const guint16 *c = counts->data, *b = back->data;
    for (int t = 0; t < 12; t++)
        for (int p = 0; p < 12; p++) {
            int sum = 0;
            for (int k = 0; k < 4; k++)
                sum += c[(4 * t + k) * 12 + p];
            g_assert_cmpint(b[t * 12 + p], ==, sum);
        }
}

typedef struct {
    int calls;
    double last;
    gboolean monotonic;
} progress_log;

static void log_progress(double fraction, gpointer user)
{
    progress_log *log = user;
    log->monotonic &= fraction >= log->last;
    log->last = fraction;
    log->calls++;
}

static void test_ptu_progress_cancel(void)
{
    /* 64 x 64 pixels of ~120 photons: ~500 000 records, progress every 2^18 and at the end */
    g_autoptr(fm_dataset) counts = make_counts(64, 64, 16, 60, 23);
    g_autofree char *path = tmp_path("progress.ptu");
    g_assert_true(fm_ptu_write(path, counts, 200.0, NULL, NULL));
    progress_log log = {0, 0.0, TRUE};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = fm_dataset_open(path, log_progress, &log, NULL, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, back);
    g_assert_cmpint(log.calls, >=, 3);
    g_assert_true(log.monotonic);
    g_assert_cmpfloat(log.last, ==, 1.0);
    g_autoptr(GCancellable) cancel = g_cancellable_new();
    g_cancellable_cancel(cancel);
    g_autoptr(fm_dataset) none = fm_dataset_open(path, NULL, NULL, cancel, &error);
    g_assert_null(none);
    g_assert_error(error, FM_ERROR, FM_ERROR_CANCELLED);
}

static void test_ptu_truncated(void)
{
    g_autoptr(fm_dataset) counts = make_counts(6, 4, 20, 12, 24);
    g_autofree char *path = tmp_path("cut.ptu");
    g_assert_true(fm_ptu_write(path, counts, 100.0, NULL, NULL));
    expect_every_cut_fails(read_ptu, path, 1);
    expect_every_cut_fails(read_any, path, 5);
}

/* Rewrites the 8-byte value of the tag `ident` in a copy of the file. */
static void patch_tag(const char *path, const char *out, const char *ident, guint64 value)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    gssize tag = find_bytes(bytes, len, ident);
    g_assert_cmpint(tag, >, 0);
    guint64 le = GUINT64_TO_LE(value);
    patch_file(path, out, (gsize)tag + 40, &le, 8);
}

static void test_ptu_corrupted(void)
{
    g_autoptr(fm_dataset) counts = make_counts(6, 4, 20, 12, 25);
    g_autofree char *path = tmp_path("good.ptu");
    g_autofree char *bad = tmp_path("bad.ptu");
    g_assert_true(fm_ptu_write(path, counts, 100.0, NULL, NULL));
    patch_file(path, bad, 0, "PQXXXX", 6);
    expect_bad_input(read_ptu, bad, "not a PicoQuant");
    patch_tag(path, bad, "TTResult_NumberOfRecords", 1ull << 40);
    expect_bad_input(read_ptu, bad, "truncated");
    patch_tag(path, bad, "ImgHdr_PixX", 0);
    expect_bad_input(read_ptu, bad, "ImgHdr_PixX is 0");
    patch_tag(path, bad, "ImgHdr_PixX", 65536);
    patch_tag(bad, bad, "ImgHdr_PixY", 65536);
    expect_bad_input(read_ptu, bad, "4 GiB");
    patch_tag(path, bad, "TTResultFormat_TTTRRecType", 0x00010203); /* PicoHarp T2 */
    expect_bad_input(read_ptu, bad, "not a T3 format");
    patch_tag(path, bad, "CreatorSW_Name", 1ull << 50); /* string length beyond the file */
    expect_bad_input(read_ptu, bad, "truncated");
    patch_tag(path, bad, "ImgHdr_LineStop", 9); /* LineStarts, but no marker 9 to end them */
    expect_bad_input(read_ptu, bad, "no complete scan line");
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    gssize tag = find_bytes(bytes, len, "ImgHdr_PixY");
    g_assert_cmpint(tag, >, 0);
    guint32 junk = GUINT32_TO_LE(0x77777777u);
    patch_file(path, bad, (gsize)tag + 36, &junk, 4);
    expect_bad_input(read_ptu, bad, "unknown type 0x77777777");
}

/* Random damage (fixed seed): 1..4 bytes overwritten anywhere. Each read either succeeds (the
 * byte was a count or an unused field) or fails with FM_ERROR_BAD_INPUT; never a crash. */
static void fuzz_file(const char *path, guint32 seed, int rounds)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_autofree char *copy = g_malloc(len);
    g_autofree char *dir = g_path_get_dirname(path), *base = g_path_get_basename(path);
    g_autofree char *name = g_strconcat("fuzz-", base, NULL);
    g_autofree char *fuzz = g_build_filename(dir, name, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    int failed = 0;
    for (int i = 0; i < rounds; i++) {
        memcpy(copy, bytes, len);
        int n = g_rand_int_range(rand, 1, 5);
        for (int k = 0; k < n; k++)
            copy[g_rand_int_range(rand, 0, (gint32)len)] = (char)g_rand_int_range(rand, 0, 256);
        flim_test_write_bytes(fuzz, copy, len);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = fm_dataset_open(fuzz, NULL, NULL, NULL, &error);
        if (!ds) {
            g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
            failed++;
        }
    }
    g_test_message("%s: %d of %d damaged copies refused", base, failed, rounds);
}

static void test_fuzz(void)
{
    g_autoptr(fm_dataset) counts = make_counts(6, 5, 24, 15, 26);
    g_autofree char *sdt = tmp_path("fuzz.sdt");
    g_autofree char *ptu = tmp_path("fuzz.ptu");
    g_autofree char *pico = tmp_path("fuzz-pico.ptu");
    fm_ptu_write_options ph = {
        .record_type = FM_PTU_PICOHARP_T3, .syncs_per_pixel = 4, .line_gap_syncs = 70000};
    g_assert_true(fm_sdt_write(sdt, counts, 100.0, NULL));
    g_assert_true(fm_ptu_write(ptu, counts, 100.0, NULL, NULL));
    g_assert_true(fm_ptu_write(pico, counts, 100.0, &ph, NULL));
    fuzz_file(sdt, 41, 400);
    fuzz_file(ptu, 42, 400);
    fuzz_file(pico, 43, 400);
}

/* --- dispatch ----------------------------------------------------------------------------- */

static void test_open_by_content(void)
{
    g_autoptr(fm_dataset) counts = make_counts(5, 5, 12, 20, 31);
    g_autofree char *sdt = tmp_path("sdt-data.bin");
    g_autofree char *ptu = tmp_path("ptu-data.dat");
    g_autofree char *tif = tmp_path("tiff-data.img");
    g_assert_true(fm_sdt_write(sdt, counts, 250.0, NULL));
    g_assert_true(fm_ptu_write(ptu, counts, 250.0, NULL, NULL));
    g_assert_true(fm_tiff_write_dataset(tif, counts, NULL, NULL));
    const char *paths[] = {sdt, ptu, tif};
    const char *formats[] = {"sdt", "ptu", "tiff"};
    for (int i = 0; i < 3; i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = fm_dataset_open(paths[i], NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        flim_test_assert_same_counts(counts, ds);
        g_assert_cmpstr(fm_dataset_get_meta(ds, "format"), ==, formats[i]);
    }
    g_autofree char *text = tmp_path("notes.txt");
    g_assert_true(g_file_set_contents(text, "time,counts\n0,1\n", -1, NULL));
    expect_bad_input(read_any, text, "unknown file format");
    g_autofree char *empty = tmp_path("empty.sdt");
    g_assert_true(g_file_set_contents(empty, "", 0, NULL));
    expect_bad_input(read_any, empty, "empty");
    g_autofree char *missing = tmp_path("missing.ptu");
    expect_bad_input(read_any, missing, "cannot open");
    /* a damaged .ptu without its magic is still read as .ptu, for a useful message */
    g_autofree char *damaged = tmp_path("damaged.ptu");
    patch_file(ptu, damaged, 0, "XXXXXXXX", 8);
    expect_bad_input(read_any, damaged, "not a PicoQuant");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-flim-io-XXXXXX", NULL);
    g_assert_nonnull(tmp_dir);
    g_test_add_func("/io/flim/sdt-round-trip", test_sdt_round_trip);
    g_test_add_func("/io/flim/sdt-truncated", test_sdt_truncated);
    g_test_add_func("/io/flim/sdt-corrupted", test_sdt_corrupted);
    g_test_add_func("/io/flim/sdt-zipped", test_sdt_zipped);
    g_test_add_func("/io/flim/ptu-hydraharp2", test_ptu_hydraharp2);
    g_test_add_func("/io/flim/ptu-hydraharp1", test_ptu_hydraharp1);
    g_test_add_func("/io/flim/ptu-picoharp", test_ptu_picoharp);
    g_test_add_func("/io/flim/ptu-rebin", test_ptu_rebin);
    g_test_add_func("/io/flim/ptu-progress-cancel", test_ptu_progress_cancel);
    g_test_add_func("/io/flim/ptu-truncated", test_ptu_truncated);
    g_test_add_func("/io/flim/ptu-corrupted", test_ptu_corrupted);
    g_test_add_func("/io/flim/fuzz", test_fuzz);
    g_test_add_func("/io/flim/open-by-content", test_open_by_content);
    int status = g_test_run();
    GDir *d = g_dir_open(tmp_dir, 0, NULL);
    const char *name;
    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(tmp_dir, name, NULL);
        g_unlink(p);
    }
    if (d)
        g_dir_close(d);
    g_rmdir(tmp_dir);
    return status;
}
