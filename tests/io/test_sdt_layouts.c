/* .sdt files as SPCM writes them: phasorpy's real tcspc.sdt (SPC-730, older 203-byte measurement
 * description) against its published figures, and every layout of our writer (several blocks
 * and descriptions, routing channels, ZIP blocks, single decays and 4096-bin IRFs, FIFO images
 * with stale scan fields and padded lines, module generations' description lengths, measured
 * sync rates) read back with the right dims, bin width, rep rate and total counts; damaged,
 * truncated and foreign files give FM_ERROR_BAD_INPUT naming the file and the problem. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/sdt.h"
#include "app/core/io/sdt_layout.h"
#include "app/core/io/sdt_write.h"
#include "tests/io/flim-test-util.h"

static char *tmp_dir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

/* Counts with a decay, fixed-seed noise and a per-dataset offset so datasets differ. */
static fm_dataset *make_counts(gsize w, gsize h, gsize bins, int peak, guint32 seed)
{
    gsize sizes[3] = {w, h, bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    guint16 *c = ds->data;
    for (gsize i = 0; i < w * h * bins; i++) {
        gsize t = i / (w * h);
        c[i] = (guint16)(peak * exp(-(double)t * 5.0 / bins) * g_rand_double(rand) + seed % 3);
    }
    return ds;
}

static guint64 total_counts(const fm_dataset *ds)
{
    const guint16 *c = ds->data;
    guint64 sum = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        sum += c[i];
    return sum;
}

static void assert_rel(double got, double want, double rel)
{
    if (!(fabs(got - want) <= fabs(want) * rel))
        g_error("%.9g differs from %.9g by more than %g relative", got, want, rel);
}

/* What every reading must give back: the dataset's exact counts (so dims and total counts),
 * the bin width (float32 fields: 1e-6 relative) and the rep rate. */
static void check_read(const char *path, int index, const fm_dataset *want, double bin_ps,
                       double rep_mhz, const char *rep_source, const char *layout)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_sdt_read(path, index, &error);
    g_assert_no_error(error);
    for (int d = 0; d < 3; d++)
        g_assert_cmpuint(ds->dims[d].size, ==, want->dims[d].size);
    g_assert_cmpuint(total_counts(ds), ==, total_counts(want));
    g_assert_true(memcmp(ds->data, want->data, fm_dataset_n_bytes(want)) == 0);
    assert_rel(flim_test_meta_double(ds, "bin_width_ps"), bin_ps, 1e-6);
    g_assert_cmpstr(ds->dims[2].unit, ==, "ns");
    assert_rel(ds->dims[2].spacing, bin_ps * 1e-3, 1e-6);
    assert_rel(flim_test_meta_double(ds, "rep_rate_mhz"), rep_mhz, 1e-6);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "rep_rate_source"), ==, rep_source);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "sdt_layout"), ==, layout);
    g_assert_cmpint((int)flim_test_meta_double(ds, "sdt_dataset"), ==, index < 0 ? 1 : index + 1);
}

static void expect_bad_input(const char *path, int index, const char *fragment)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_sdt_read(path, index, &error);
    if (ds)
        g_error("%s (dataset %d) was read although it is damaged", path, index);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    if (!strstr(error->message, path))
        g_error("message '%s' does not name the file", error->message);
    if (fragment && !strstr(error->message, fragment))
        g_error("message '%s' does not mention '%s'", error->message, fragment);
}

static void write_or_die(const char *path, const fm_sdt_write_options *o)
{
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_sdt_write_ex(path, o, &error));
    g_assert_no_error(error);
}

static char *read_all(const char *path, gsize *len)
{
    char *bytes = NULL;
    g_assert_true(g_file_get_contents(path, &bytes, len, NULL));
    return bytes;
}

/* --- the real file ------------------------------------------------------------------------- */

/* phasorpy's figures for tcspc.sdt: 128 x 128 x 256 uint16, 224,606,420 counts, time axis 0 to
 * 12.451172 ns over 256 bins (bin starts, so 255 intervals: 48.828125 ps, TAC 50 ns / gain 4 /
 * 256), 80 MHz (phasorpy's frequency is 1 / TAC window, 12.5 ns). */
static void test_real_tcspc(void)
{
    g_autofree char *zip = g_build_filename(FM_REFDATA_DIR, "flim-real", "tcspc.sdt.zip", NULL);
    if (!g_file_test(zip, G_FILE_TEST_EXISTS)) {
        g_test_skip("no shared/refdata/flim-real/tcspc.sdt.zip beside the repository: "
                    "the real-file checks did not run");
        return;
    }
    g_autoptr(GBytes) sdt = flim_test_unzip_member(zip);
    g_autofree char *path = tmp_path("tcspc.sdt");
    gsize len = 0;
    const char *bytes = g_bytes_get_data(sdt, &len);
    g_assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_sdt_read(path, -1, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(ds->dims[0].size, ==, 128);
    g_assert_cmpuint(ds->dims[1].size, ==, 128);
    g_assert_cmpuint(ds->dims[2].size, ==, 256);
    g_assert_cmpint(ds->type, ==, FM_PIXEL_U16);
    g_assert_cmpuint(total_counts(ds), ==, 224606420);
    assert_rel(ds->dims[2].spacing, 12.451172 / 255, 1e-6);
    assert_rel(ds->dims[2].spacing * 255, 12.451172, 1e-6);
    assert_rel(flim_test_meta_double(ds, "rep_rate_mhz"), 80.0, 1e-6);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "rep_rate_source"), ==, "tac_window");
    g_assert_cmpstr(fm_dataset_get_meta(ds, "sdt_module"), ==, "SPC-730");
    g_assert_cmpstr(fm_dataset_get_meta(ds, "sdt_layout"), ==, "image");
    g_assert_cmpstr(fm_dataset_get_meta(ds, "sdt_datasets"), ==, "1");
    expect_bad_input(path, 1, "dataset 2 asked for, the file holds 1");
}

/* --- writer variants ----------------------------------------------------------------------- */

/* Three blocks with their own descriptions: two images of different sizes and a 4096-bin IRF
 * (single decay), plain and ZIP-compressed, and in the header layouts of module generations. */
static void test_blocks(void)
{
    g_autoptr(fm_dataset) a = make_counts(9, 7, 64, 400, 1);
    g_autoptr(fm_dataset) b = make_counts(5, 4, 32, 900, 2);
    g_autoptr(fm_dataset) irf = make_counts(1, 1, 4096, 3000, 3);
    const fm_dataset *sets[3] = {a, b, irf};
    struct {
        const char *name;
        int md_len, revision;
        gboolean compress;
        const char *module; /* from the revision word, before revision 12 from the text */
    } variants[] = {
        {"blocks.sdt", 0, 0, FALSE, "SPC-150"},
        {"blocks-zip.sdt", 0, 0, TRUE, "SPC-150"},
        {"blocks-730.sdt", 203, 0x24c, FALSE, "SPC-730"},
        {"blocks-830.sdt", 211, 0x25c, FALSE, "SPC-830"},
        {"blocks-140.sdt", 271, 0x26e, TRUE, "SPC-140"},
        {"blocks-150.sdt", 335, 0x28f, FALSE, "SPC-150"},
        {"blocks-rev10.sdt", 211, 0x00a, FALSE, "SPC-150"},
        {"blocks-150nx.sdt", 512, 0x80f, TRUE, "SPC-150NX"},
    };
    for (gsize v = 0; v < G_N_ELEMENTS(variants); v++) {
        g_autofree char *path = tmp_path(variants[v].name);
        fm_sdt_write_options o = {.datasets = sets,
                                  .n_datasets = 3,
                                  .bin_width_ps = 48.828125,
                                  .md_len = variants[v].md_len,
                                  .revision = variants[v].revision,
                                  .compress = variants[v].compress};
        write_or_die(path, &o);
        for (int i = 0; i < 3; i++) {
            double window_mhz = 1e6 / (sets[i]->dims[2].size * 48.828125);
            check_read(path, i, sets[i], 48.828125, window_mhz, "tac_window",
                       i == 2 ? "decay" : "image");
        }
        check_read(path, -1, a, 48.828125, 1e6 / (64 * 48.828125), "tac_window", "image");
        g_autoptr(fm_dataset) irf_back = fm_sdt_read(path, 2, NULL);
        g_assert_cmpstr(fm_dataset_get_meta(irf_back, "sdt_datasets"), ==, "3");
        g_assert_cmpstr(fm_dataset_get_meta(irf_back, "sdt_block"), ==, "3");
        g_assert_cmpstr(fm_dataset_get_meta(irf_back, "sdt_module"), ==, variants[v].module);
        expect_bad_input(path, 3, "dataset 4 asked for, the file holds 3");
    }
}

/* Routing channels: two blocks of two detector channels each (scan_rx = 2), four datasets. */
static void test_routing_channels(void)
{
    g_autoptr(fm_dataset) c0 = make_counts(6, 5, 40, 300, 10);
    g_autoptr(fm_dataset) c1 = make_counts(6, 5, 40, 200, 11);
    g_autoptr(fm_dataset) c2 = make_counts(4, 4, 16, 100, 12);
    g_autoptr(fm_dataset) c3 = make_counts(4, 4, 16, 50, 13);
    const fm_dataset *sets[4] = {c0, c1, c2, c3};
    for (int v = 0; v < 3; v++) { /* plain, ZIP, FIFO image (image_rx = 2) */
        const char *names[] = {"routing.sdt", "routing-zip.sdt", "routing-fifo.sdt"};
        g_autofree char *path = tmp_path(names[v]);
        fm_sdt_write_options o = {.datasets = sets,
                                  .n_datasets = 4,
                                  .channels = 2,
                                  .bin_width_ps = 100.0,
                                  .compress = v == 1,
                                  .fifo_image = v == 2};
        write_or_die(path, &o);
        for (int i = 0; i < 4; i++) {
            check_read(path, i, sets[i], 100.0, 1e6 / (sets[i]->dims[2].size * 100.0), "tac_window",
                       v == 2 ? "fifo_image" : "image");
            g_autoptr(fm_dataset) ds = fm_sdt_read(path, i, NULL);
            g_assert_cmpint((int)flim_test_meta_double(ds, "sdt_block"), ==, i / 2 + 1);
            g_assert_cmpint((int)flim_test_meta_double(ds, "sdt_channel"), ==, i % 2 + 1);
            g_assert_cmpstr(fm_dataset_get_meta(ds, "sdt_datasets"), ==, "4");
        }
    }
}

/* FIFO imaging (SPC-1xx): IMG blocks of 32-bit counts, the size in image_x/image_y while
 * scan_x/scan_y hold a stale 128 x 128; older descriptions without image_x/image_y (the setup's
 * SP_IMG_X/Y then); lines padded to a power of two; a measured 80 MHz sync rate that differs
 * from the 10.24 ns TAC window. */
static void test_fifo_image(void)
{
    g_autoptr(fm_dataset) img = make_counts(100, 60, 256, 700, 20);
    const fm_dataset *sets[1] = {img};
    struct {
        const char *name;
        int md_len, padded;
        gboolean compress;
    } variants[] = {
        {"fifo.sdt", 0, 0, FALSE},
        {"fifo-zip.sdt", 512, 0, TRUE},
        {"fifo-old.sdt", 271, 0, FALSE},
        {"fifo-padded.sdt", 0, 128, FALSE},
        {"fifo-padded-zip.sdt", 0, 128, TRUE},
    };
    for (gsize v = 0; v < G_N_ELEMENTS(variants); v++) {
        g_autofree char *path = tmp_path(variants[v].name);
        fm_sdt_write_options o = {.datasets = sets,
                                  .n_datasets = 1,
                                  .bin_width_ps = 40.0,
                                  .sync_rate_hz = 80e6,
                                  .fifo_image = TRUE,
                                  .counts32 = TRUE,
                                  .md_len = variants[v].md_len,
                                  .padded_width = variants[v].padded,
                                  .compress = variants[v].compress};
        write_or_die(path, &o);
        check_read(path, 0, img, 40.0, 80.0, "sync_rate", "fifo_image");
    }
}

/* An IRF as SPCM saves it: one 4096-bin decay, the scan fields stale (128 x 128). */
static void test_single_decay(void)
{
    g_autoptr(fm_dataset) irf = make_counts(1, 1, 4096, 5000, 30);
    const fm_dataset *sets[1] = {irf};
    for (int md = 0; md < 3; md++) {
        int lens[3] = {0, 203, 271};
        g_autofree char *name = g_strdup_printf("irf-%d.sdt", lens[md]);
        g_autofree char *path = tmp_path(name);
        fm_sdt_write_options o = {.datasets = sets,
                                  .n_datasets = 1,
                                  .bin_width_ps = 3.0517578,
                                  .md_len = lens[md],
                                  .sync_rate_hz = md == 2 ? 40e6 : 0};
        write_or_die(path, &o);
        check_read(path, -1, irf, 3.0517578, md == 2 ? 40.0 : 1e6 / (4096 * 3.0517578),
                   md == 2 ? "sync_rate" : "tac_window", "decay");
    }
}

/* Descriptions from before scan_x/scan_y (120 bytes here): the size from the setup text. */
static void test_setup_size(void)
{
    g_autoptr(fm_dataset) a = make_counts(9, 7, 64, 400, 70);
    const fm_dataset *sets[1] = {a};
    g_autofree char *path = tmp_path("short-md.sdt");
    fm_sdt_write_options o = {
        .datasets = sets, .n_datasets = 1, .bin_width_ps = 25.0, .md_len = 120, .revision = 0x25a};
    write_or_die(path, &o);
    check_read(path, 0, a, 25.0, 1e6 / (64 * 25.0), "tac_window", "image");
}

/* --- damaged files ------------------------------------------------------------------------- */

static void patch(const char *path, const char *out, gsize at, const void *data, gsize n)
{
    gsize len = 0;
    g_autofree char *bytes = read_all(path, &len);
    g_assert_cmpuint(at + n, <=, len);
    memcpy(bytes + at, data, n);
    flim_test_write_bytes(out, bytes, len);
}

static void hide_setup_scan_size(const char *path)
{
    gsize n = 0;
    g_autofree char *bytes = read_all(path, &n);
    const char *key = "[SP_SCAN_X,";
    gssize found = -1;
    for (gsize i = SDT_FILE_HEADER_LEN; i + strlen(key) <= n && found < 0; i++)
        if (memcmp(bytes + i, key, strlen(key)) == 0)
            found = (gssize)i;
    g_assert_cmpint(found, >=, 0);
    memcpy(bytes + found, "[SP_SCAN_Q,", strlen(key));
    flim_test_write_bytes(path, bytes, n);
}

static void test_damaged(void)
{
    g_autoptr(fm_dataset) a = make_counts(7, 5, 32, 300, 40);
    g_autoptr(fm_dataset) b = make_counts(3, 3, 16, 300, 41);
    const fm_dataset *sets[2] = {a, b};
    g_autofree char *path = tmp_path("two-zip.sdt");
    g_autofree char *bad = tmp_path("bad.sdt");
    fm_sdt_write_options o = {
        .datasets = sets, .n_datasets = 2, .bin_width_ps = 50.0, .compress = TRUE};
    write_or_die(path, &o);
    gsize len = 0;
    g_autofree char *bytes = read_all(path, &len);
    const guint8 *u = (const guint8 *)bytes;
    guint32 block1 = flim_test_le32(u + SDT_HDR_DATA_BLOCK_OFFS),
            data1 = flim_test_le32(u + block1 + 2);
    guint32 block2 = flim_test_le32(u + block1 + SDT_BLK_NEXT_OFFS);

    /* every cut, through both blocks' archives */
    for (gsize cut = 0; cut < len; cut += 5) {
        flim_test_write_bytes(bad, bytes, cut);
        expect_bad_input(bad, 0, NULL);
    }
    /* CRC-32 of the first archive's local header */
    guint8 crc_flip = (guint8)(bytes[data1 + 14] ^ 0x01);
    patch(path, bad, data1 + 14, &crc_flip, 1);
    expect_bad_input(bad, 0, "CRC-32 mismatch");
    /* not a ZIP archive */
    patch(path, bad, data1, "XXXX", 4);
    expect_bad_input(bad, 0, "holds no ZIP archive");
    /* the block header's length disagrees with the archive's */
    guint8 small[4] = {16, 0, 0, 0};
    patch(path, bad, block1 + SDT_BLK_LENGTH, small, 4);
    expect_bad_input(bad, 0, "block 1 declares");
    /* LZ4 blocks (SPCM 9.9) are refused with a message, not misread */
    guint8 lz4_type[2] = {0x11, 0x50};
    patch(path, bad, block1 + SDT_BLK_TYPE, lz4_type, 2);
    expect_bad_input(bad, 0, "LZ4");
    /* a block chain looping back */
    guint8 back[4];
    for (int i = 0; i < 4; i++)
        back[i] = (guint8)(block1 >> (8 * i));
    patch(path, bad, block1 + SDT_BLK_NEXT_OFFS, back, 4);
    expect_bad_input(bad, 0, "not after itself");
    /* a block referring to a description the file lacks */
    guint8 md9[2] = {9, 0};
    patch(path, bad, block2 + SDT_BLK_MEAS_DESC_NO, md9, 2);
    expect_bad_input(bad, 0, "refers to measurement description 10 of 2");
    /* double-valued (FCS-style) data in a decay block */
    guint8 dbl_type[2] = {0x11, 0x12};
    patch(path, bad, block1 + SDT_BLK_TYPE, dbl_type, 2);
    expect_bad_input(bad, 0, "double");
    /* an image description that fits none of the block's curves */
    guint32 md_at = flim_test_le32(u + SDT_HDR_MEAS_DESC_OFFS);
    guint8 odd_x[4] = {6, 0, 0, 0};
    patch(path, bad, md_at + SDT_MD_SCAN_X, odd_x, 4);
    hide_setup_scan_size(bad); /* the setup's fallback size (SP_SCAN_X 7) gone too */
    expect_bad_input(bad, 0, "block 1 declares 6x5 pixels of 32 bins");
    /* revision 15 headers extend offsets by a byte (files > 4 GiB); older ones do not */
    guint8 ext = 1;
    patch(path, bad, block1 + SDT_BLK_DATA_OFFS_EXT, &ext, 1);
    expect_bad_input(bad, 0, "ends at byte 42949");
    g_autoptr(fm_dataset) c = make_counts(4, 4, 16, 100, 42);
    const fm_dataset *one[1] = {c};
    g_autofree char *old = tmp_path("rev12.sdt");
    fm_sdt_write_options o12 = {
        .datasets = one, .n_datasets = 1, .bin_width_ps = 50.0, .revision = 0x28c};
    write_or_die(old, &o12);
    gsize old_len = 0;
    g_autofree char *old_bytes = read_all(old, &old_len);
    guint32 old_block = flim_test_le32((const guint8 *)old_bytes + SDT_HDR_DATA_BLOCK_OFFS);
    guint8 block_no[2] = {0x7f, 0x7f}; /* block_no there, not offset extensions */
    patch(old, bad, old_block + SDT_BLK_NO, block_no, 2);
    g_autoptr(GError) no_error = NULL;
    g_autoptr(fm_dataset) c_back = fm_sdt_read(bad, 0, &no_error);
    g_assert_no_error(no_error);
    g_assert_true(memcmp(c_back->data, c->data, fm_dataset_n_bytes(c)) == 0);
    /* foreign files */
    char tiff[64] = "II*\0\x08\0\0\0 a TIFF header, not an .sdt file";
    flim_test_write_bytes(bad, tiff, sizeof tiff);
    expect_bad_input(bad, 0, "not a Becker & Hickl");
    flim_test_write_bytes(bad, "", 0);
    expect_bad_input(bad, 0, "empty file");
    g_autofree char *missing = tmp_path("missing.sdt");
    expect_bad_input(missing, 0, "cannot open");
}

/* Mutations of every layout (fixed seed), aimed at the structures as often as at the counts:
 * each read either succeeds or says FM_ERROR_BAD_INPUT naming the file; nothing crashes. */
static void fuzz_file(const char *path, guint32 seed, int rounds)
{
    gsize len = 0;
    g_autofree char *bytes = read_all(path, &len);
    g_autofree char *copy = g_malloc(len);
    g_autofree char *fuzz = tmp_path("fuzz.sdt");
    const guint8 *u = (const guint8 *)bytes;
    /* structure: file header, setup, descriptions, first block header and its ZIP header */
    gsize structure =
        MIN(len, (gsize)flim_test_le32(u + SDT_HDR_DATA_BLOCK_OFFS) + SDT_BLOCK_HEADER_LEN + 64);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    int refused = 0;
    for (int i = 0; i < rounds; i++) {
        memcpy(copy, bytes, len);
        int n = g_rand_int_range(rand, 1, 5);
        for (int k = 0; k < n; k++) {
            gsize end = g_rand_boolean(rand) ? structure : len;
            copy[g_rand_int_range(rand, 0, (gint32)end)] = (char)g_rand_int_range(rand, 0, 256);
        }
        flim_test_write_bytes(fuzz, copy, len);
        for (int index = 0; index < 3; index++) {
            g_autoptr(GError) error = NULL;
            g_autoptr(fm_dataset) ds = fm_sdt_read(fuzz, index, &error);
            if (!ds) {
                g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
                g_assert_nonnull(strstr(error->message, fuzz));
                refused++;
            }
        }
    }
    g_test_message("%s: %d of %d reads of damaged copies refused", path, refused, 3 * rounds);
}

static void test_fuzz(void)
{
    g_autoptr(fm_dataset) a = make_counts(7, 5, 32, 300, 50);
    g_autoptr(fm_dataset) b = make_counts(7, 5, 32, 200, 51);
    g_autoptr(fm_dataset) irf = make_counts(1, 1, 256, 900, 52);
    const fm_dataset *sets[3] = {a, b, irf};
    g_autofree char *blocks = tmp_path("fuzz-blocks.sdt"), *routing = tmp_path("fuzz-rout.sdt");
    g_autofree char *fifo = tmp_path("fuzz-fifo.sdt"), *old = tmp_path("fuzz-730.sdt");
    fm_sdt_write_options ob = {
        .datasets = sets, .n_datasets = 3, .bin_width_ps = 50.0, .compress = TRUE};
    fm_sdt_write_options orout = {
        .datasets = sets, .n_datasets = 2, .channels = 2, .bin_width_ps = 50.0};
    fm_sdt_write_options ofifo = {.datasets = sets,
                                  .n_datasets = 1,
                                  .bin_width_ps = 50.0,
                                  .fifo_image = TRUE,
                                  .counts32 = TRUE,
                                  .padded_width = 8,
                                  .sync_rate_hz = 80e6};
    fm_sdt_write_options oold = {
        .datasets = sets, .n_datasets = 3, .bin_width_ps = 50.0, .md_len = 203, .revision = 0x24c};
    write_or_die(blocks, &ob);
    write_or_die(routing, &orout);
    write_or_die(fifo, &ofifo);
    write_or_die(old, &oold);
    fuzz_file(blocks, 61, 300);
    fuzz_file(routing, 62, 300);
    fuzz_file(fifo, 63, 300);
    fuzz_file(old, 64, 300);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-sdt-XXXXXX", NULL);
    g_test_add_func("/io/sdt/real-tcspc", test_real_tcspc);
    g_test_add_func("/io/sdt/blocks", test_blocks);
    g_test_add_func("/io/sdt/routing-channels", test_routing_channels);
    g_test_add_func("/io/sdt/fifo-image", test_fifo_image);
    g_test_add_func("/io/sdt/single-decay", test_single_decay);
    g_test_add_func("/io/sdt/setup-size", test_setup_size);
    g_test_add_func("/io/sdt/damaged", test_damaged);
    g_test_add_func("/io/sdt/fuzz", test_fuzz);
    int status = g_test_run();
    g_autoptr(GFile) dir = g_file_new_for_path(tmp_dir);
    g_autoptr(GFileEnumerator) e =
        g_file_enumerate_children(dir, G_FILE_ATTRIBUTE_STANDARD_NAME, 0, NULL, NULL);
    GFileInfo *info;
    while (e && (info = g_file_enumerator_next_file(e, NULL, NULL))) {
        g_autofree char *p = g_build_filename(tmp_dir, g_file_info_get_name(info), NULL);
        g_unlink(p);
        g_object_unref(info);
    }
    g_rmdir(tmp_dir);
    g_free(tmp_dir);
    return status;
}
