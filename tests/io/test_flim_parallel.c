/* FLIM readers' threaded paths against sequential references written here: .ptu histograms
 * (real PicoHarp file, every T3 family of our writer, several frames, rebinning, saturation)
 * and .sdt transposes (a real B&H file's counts, 16 and 32-bit blocks), for 1..16 threads. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/ptu.h"
#include "app/core/io/sdt.h"
#include "tests/io/flim-test-util.h"

static char *tmp_dir;

/* Thread counts each read is repeated with (NULL: as many as the machine has). */
static const char *const thread_counts[] = {"1", "2", "3", "5", "16", NULL};

/* libc's setenv, not g_setenv, which warns once threads have existed: the readers read the
 * variable on the calling thread and join every thread they start before they return. */
static void use_threads(const char *n)
{
    if (n)
        setenv("FLUXMAP_IO_THREADS", n, 1);
    else
        unsetenv("FLUXMAP_IO_THREADS");
}

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

static char *real_file(const char *name)
{
    return g_build_filename(FM_REFDATA_DIR, "flim-real", name, NULL);
}

static guint64 le64(const guint8 *p)
{
    return flim_test_le32(p) | (guint64)flim_test_le32(p + 4) << 32;
}

/* A counts cube with a decay along t and fixed-seed noise. */
static fm_dataset *make_counts(int w, int h, int bins, int peak, guint32 seed)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    guint16 *c = ds->data;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++) {
        gsize t = i / ((gsize)w * h);
        c[i] = (guint16)(peak * g_rand_double(rand) * (1.0 - (double)t / (bins + 1)) + 0.5);
    }
    return ds;
}

static void assert_meta(const fm_dataset *ds, const char *key, guint64 want)
{
    g_autofree char *text = g_strdup_printf("%" G_GUINT64_FORMAT, want);
    g_assert_cmpstr(fm_dataset_get_meta(ds, key), ==, text);
}

/* --- .ptu: the reference -------------------------------------------------------------------- */

typedef struct {
    guint32 rec_type;
    gint64 pix_x, pix_y, line_start, line_stop, frame, n_records;
    gsize records_at;
} ptu_header;

/* The few tags the histogram needs, from the 48-byte tag records of the header. */
static ptu_header read_ptu_header(const guint8 *bytes, gsize len)
{
    ptu_header hd = {.frame = 0};
    gsize at = 16;
    for (;;) {
        g_assert_cmpuint(at + 48, <=, len);
        const char *ident = (const char *)bytes + at;
        guint32 type = flim_test_le32(bytes + at + 36);
        gint64 value = (gint64)le64(bytes + at + 40);
        at += 48;
        if ((type & 0xffff) == 0xffff) /* strings, arrays, blobs: value is their length */
            at += (gsize)value;
        if (strcmp(ident, "TTResultFormat_TTTRRecType") == 0)
            hd.rec_type = (guint32)value;
        else if (strcmp(ident, "ImgHdr_PixX") == 0)
            hd.pix_x = value;
        else if (strcmp(ident, "ImgHdr_PixY") == 0)
            hd.pix_y = value;
        else if (strcmp(ident, "ImgHdr_LineStart") == 0)
            hd.line_start = value;
        else if (strcmp(ident, "ImgHdr_LineStop") == 0)
            hd.line_stop = value;
        else if (strcmp(ident, "ImgHdr_Frame") == 0)
            hd.frame = value;
        else if (strcmp(ident, "TTResult_NumberOfRecords") == 0)
            hd.n_records = value;
        else if (strcmp(ident, "Header_End") == 0)
            break;
    }
    hd.records_at = at;
    return hd;
}

typedef struct {
    guint32 *counts; /* 32-bit: saturation is applied at the end */
    guint64 photons, dropped, frames;
} ptu_reference;

/* The documented meaning of the records, one record after the other: photons wait in their
 * line until its LineStop gives the line's duration; a Frame marker restarts the rows. */
static void reference_histogram(const char *path, int group, int bins, ptu_reference *ref)
{
    g_autofree char *contents = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
    const guint8 *bytes = (const guint8 *)contents;
    ptu_header hd = read_ptu_header(bytes, len);
    gsize plane = (gsize)hd.pix_x * hd.pix_y;
    ref->counts = g_new0(guint32, plane * bins);
    ref->photons = ref->dropped = ref->frames = 0;
    gboolean pico = hd.rec_type == FM_PTU_PICOHARP_T3;
    guint32 start = 1u << (hd.line_start - 1), stop = 1u << (hd.line_stop - 1);
    guint32 frame = hd.frame ? 1u << (hd.frame - 1) : 0;
    g_autoptr(GArray) line_sync = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_autoptr(GArray) line_bin = g_array_new(FALSE, FALSE, sizeof(guint32));
    gboolean in_line = FALSE;
    guint64 overflow = 0, line_start = 0;
    gint64 y = 0;
    for (gint64 i = 0; i < hd.n_records; i++) {
        guint32 r = flim_test_le32(bytes + hd.records_at + 4 * (gsize)i);
        guint32 nsync, dtime, markers = 0;
        gboolean photon;
        if (pico) {
            nsync = r & 0xffff, dtime = (r >> 16) & 0xfff;
            photon = r >> 28 != 15;
            if (!photon && (dtime & 0xf) == 0)
                overflow += 65536;
            else if (!photon)
                markers = dtime & 0xf;
        } else {
            nsync = r & 0x3ff, dtime = (r >> 10) & 0x7fff;
            guint32 channel = (r >> 25) & 0x3f;
            photon = !(r >> 31);
            if (!photon && channel == 63)
                overflow += hd.rec_type == FM_PTU_HYDRAHARP_T3 || nsync == 0 ? 1024 : 1024 * nsync;
            else if (!photon && channel >= 1 && channel <= 15)
                markers = channel;
        }
        guint64 sync = overflow + nsync;
        if (photon) {
            ref->photons++;
            guint32 bin = dtime / (guint32)group;
            if (!in_line || bin >= (guint32)bins) {
                ref->dropped++;
            } else {
                g_array_append_val(line_sync, sync);
                g_array_append_val(line_bin, bin);
            }
            continue;
        }
        if ((markers & stop) && in_line) {
            guint64 duration = sync - line_start;
            for (guint k = 0; k < line_sync->len; k++) {
                guint64 x = duration && y < hd.pix_y
                                ? (g_array_index(line_sync, guint64, k) - line_start) *
                                      (guint64)hd.pix_x / duration
                                : (guint64)hd.pix_x;
                if (x >= (guint64)hd.pix_x)
                    ref->dropped++;
                else
                    ref->counts[g_array_index(line_bin, guint32, k) * plane + (gsize)y * hd.pix_x +
                                x]++;
            }
            if (duration && y < hd.pix_y)
                y++;
            g_array_set_size(line_sync, 0), g_array_set_size(line_bin, 0);
            in_line = FALSE;
        }
        if (markers & (frame | start)) {
            ref->dropped += line_sync->len;
            g_array_set_size(line_sync, 0), g_array_set_size(line_bin, 0);
            in_line = (markers & start) != 0;
            line_start = sync;
        }
        if (markers & frame) {
            y = 0;
            ref->frames++;
        }
    }
    ref->dropped += line_sync->len;
}

/* fm_ptu_read with every thread count equals the reference: counts, photons, dropped, frames,
 * saturated. */
static void check_ptu(const char *path, int max_bins, int group)
{
    use_threads("1");
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) first = fm_ptu_read(path, max_bins, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    int bins = (int)first->dims[2].size;
    ptu_reference ref;
    reference_histogram(path, group, bins, &ref);
    gsize n = fm_dataset_n_elements(first);
    guint64 saturated = 0;
    g_autofree guint16 *want = g_new(guint16, n);
    for (gsize i = 0; i < n; i++) {
        want[i] = (guint16)MIN(ref.counts[i], G_MAXUINT16);
        saturated += ref.counts[i] - want[i];
    }
    g_free(ref.counts);
    for (gsize t = 0; t < G_N_ELEMENTS(thread_counts); t++) {
        use_threads(thread_counts[t]);
        g_autoptr(fm_dataset) ds = fm_ptu_read(path, max_bins, NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(fm_dataset_n_elements(ds), ==, n);
        if (memcmp(ds->data, want, n * sizeof(guint16)) != 0)
            g_error("%s, %s threads: counts differ from the reference", path,
                    thread_counts[t] ? thread_counts[t] : "all");
        assert_meta(ds, "ptu_photons", ref.photons);
        assert_meta(ds, "ptu_photons_dropped", ref.dropped);
        assert_meta(ds, "ptu_frames", MAX(ref.frames, 1));
        if (saturated)
            assert_meta(ds, "ptu_saturated", saturated);
        else
            g_assert_null(fm_dataset_get_meta(ds, "ptu_saturated"));
    }
    use_threads(NULL);
}

static void test_ptu_real(void)
{
    g_autofree char *path = real_file("Example_PTU_PicoHarp.ptu");
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("no shared/refdata/flim-real/Example_PTU_PicoHarp.ptu beside the repository");
        return;
    }
    check_ptu(path, 0, 1);
    check_ptu(path, 34, 4); /* 133 dtime bins summed in fours */
    /* What the file's origin documents: 256 x 256, 722 402 photon records. */
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_ptu_read(path, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(ds->dims[0].size, ==, 256);
    g_assert_cmpuint(ds->dims[1].size, ==, 256);
    assert_meta(ds, "ptu_photons", 722402);
}

/* Appends the file's records once more (its first record is a Frame marker), so that a second
 * frame sums into the rows of the first. */
static void add_frame(const char *path, const char *out)
{
    g_autofree char *contents = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
    ptu_header hd = read_ptu_header((const guint8 *)contents, len);
    gsize records = 4 * (gsize)hd.n_records;
    g_autoptr(GByteArray) bytes = g_byte_array_new();
    g_byte_array_append(bytes, (const guint8 *)contents, (guint)len);
    g_byte_array_append(bytes, (const guint8 *)contents + hd.records_at, (guint)records);
    const char *tag = "TTResult_NumberOfRecords";
    gsize at = 16;
    while (at < hd.records_at && memcmp(bytes->data + at, tag, strlen(tag) + 1) != 0)
        at++;
    g_assert_cmpuint(at, <, hd.records_at);
    guint64 n = GUINT64_TO_LE((guint64)hd.n_records * 2);
    memcpy(bytes->data + at + 40, &n, 8);
    g_assert_true(g_file_set_contents(out, (const char *)bytes->data, bytes->len, NULL));
}

static void test_ptu_written(void)
{
    static const guint32 types[] = {FM_PTU_HYDRAHARP2_T3, FM_PTU_HYDRAHARP_T3, FM_PTU_PICOHARP_T3};
    /* 23 rows: no thread count splits them evenly */
    g_autoptr(fm_dataset) counts = make_counts(17, 23, 40, 30, 5);
    g_autofree char *path = tmp_path("written.ptu");
    g_autofree char *two = tmp_path("two-frames.ptu");
    for (gsize t = 0; t < G_N_ELEMENTS(types); t++) {
        fm_ptu_write_options opt = {
            .record_type = types[t], .syncs_per_pixel = 6, .line_gap_syncs = 1500};
        g_assert_true(fm_ptu_write(path, counts, 50.0, &opt, NULL));
        check_ptu(path, 0, 1);
        check_ptu(path, 7, 6); /* 40 bins summed in sixes: 7 bins, the last of four */
        add_frame(path, two);
        check_ptu(two, 0, 1);
    }
}

/* Counts past 65535 after rebinning and over two frames: saturated, and counted as such. */
static void test_ptu_saturated(void)
{
    gsize sizes[3] = {3, 2, 2};
    g_autoptr(fm_dataset) counts = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    guint16 *c = counts->data;
    c[1] = 40000, c[6 + 1] = 40000; /* pixel (1, 0), both bins */
    c[4] = 30000, c[6 + 4] = 100;
    g_autofree char *path = tmp_path("bright.ptu");
    g_autofree char *two = tmp_path("bright-two.ptu");
    g_assert_true(fm_ptu_write(path, counts, 100.0, NULL, NULL));
    check_ptu(path, 1, 2);
    add_frame(path, two);
    check_ptu(two, 0, 1);
    g_autoptr(fm_dataset) ds = fm_ptu_read(two, 1, NULL, NULL, NULL, NULL);
    assert_meta(ds, "ptu_saturated", 2 * 80000 - 65535); /* pixel (1, 0); (1, 1) holds 60200 */
}

/* --- .sdt ------------------------------------------------------------------------------------ */

/* Each pixel's decay is contiguous in the block (y, x, t): sample (x, y, t) of the dataset is
 * count t of decay y * w + x; 32-bit counts above 65535 are clipped and counted. */
static void check_sdt(const char *path, const guint8 *block, int bytes_per_count, gsize w, gsize h,
                      gsize bins)
{
    gsize plane = w * h;
    g_autofree guint16 *want = g_new(guint16, plane * bins);
    guint64 saturated = 0;
    for (gsize pix = 0; pix < plane; pix++)
        for (gsize t = 0; t < bins; t++) {
            const guint8 *p = block + (pix * bins + t) * bytes_per_count;
            guint32 v = bytes_per_count == 2 ? (guint32)(p[0] | p[1] << 8) : flim_test_le32(p);
            saturated += v > G_MAXUINT16 ? 1 : 0;
            want[t * plane + pix] = (guint16)MIN(v, G_MAXUINT16);
        }
    for (gsize t = 0; t < G_N_ELEMENTS(thread_counts); t++) {
        use_threads(thread_counts[t]);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = fm_sdt_read(path, -1, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(ds->dims[0].size, ==, w);
        g_assert_cmpuint(ds->dims[1].size, ==, h);
        g_assert_cmpuint(ds->dims[2].size, ==, bins);
        if (memcmp(ds->data, want, plane * bins * sizeof(guint16)) != 0)
            g_error("%s, %s threads: counts differ from the reference", path,
                    thread_counts[t] ? thread_counts[t] : "all");
        if (saturated)
            assert_meta(ds, "sdt_saturated", saturated);
        else
            g_assert_null(fm_dataset_get_meta(ds, "sdt_saturated"));
    }
    use_threads(NULL);
}

/* The real B&H file (phasorpy's tcspc.sdt, an SPC-730 file with the older, 203-byte
 * measurement description) read directly: real photon statistics through the threaded
 * transpose, against its block decoded here. */
static void test_sdt_real(void)
{
    g_autofree char *zip = real_file("tcspc.sdt.zip");
    if (!g_file_test(zip, G_FILE_TEST_EXISTS)) {
        g_test_skip("no shared/refdata/flim-real/tcspc.sdt.zip beside the repository");
        return;
    }
    g_autoptr(GBytes) sdt = flim_test_unzip_member(zip);
    gsize len = 0;
    const guint8 *bytes = g_bytes_get_data(sdt, &len);
    /* What the file's origin documents: 128 x 128 x 256 uint16 from byte 5370, and the total. */
    guint32 block_at = flim_test_le32(bytes + 14), data_at = flim_test_le32(bytes + block_at + 2);
    g_assert_cmpuint(data_at, ==, 5370);
    g_assert_cmpuint(data_at + 128 * 128 * 256 * 2, <=, len);
    guint64 total = 0;
    for (gsize i = 0; i < 128 * 128 * 256; i++)
        total += bytes[data_at + 2 * i] | bytes[data_at + 2 * i + 1] << 8;
    g_assert_cmpuint(total, ==, 224606420);
    g_autofree char *path = tmp_path("tcspc.sdt");
    g_assert_true(g_file_set_contents(path, (const char *)bytes, (gssize)len, NULL));
    check_sdt(path, bytes + data_at, 2, 128, 128, 256);
}

static void test_sdt_written(void)
{
    /* 37 x 23 pixels: neither the transpose's tiles nor the threads divide them evenly */
    g_autoptr(fm_dataset) counts = make_counts(37, 23, 64, 900, 9);
    g_autofree char *path = tmp_path("written.sdt");
    g_assert_true(fm_sdt_write(path, counts, 80.0, NULL));
    g_autofree char *contents = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
    guint8 *b = (guint8 *)contents;
    guint32 block_at = flim_test_le32(b + 14), data_at = flim_test_le32(b + block_at + 2);
    check_sdt(path, b + data_at, 2, 37, 23, 64);

    /* The same block as 32-bit counts, some above 65535 (B&H's type bits 8..11 = 1). */
    gsize n = 37 * 23 * 64, len32 = data_at + 4 * n;
    g_autofree guint8 *wide = g_malloc(len32);
    memcpy(wide, b, data_at);
    for (gsize i = 0; i < n; i++) {
        guint32 v = (guint32)(b[data_at + 2 * i] | b[data_at + 2 * i + 1] << 8);
        v = i % 97 == 3 ? v * 1000 + 70000 : v;
        for (int k = 0; k < 4; k++)
            wide[data_at + 4 * i + k] = (guint8)(v >> (8 * k));
    }
    guint32 fields[][2] = {{20, 4 * n}, {block_at + 6, len32}, {block_at + 18, 4 * n}};
    for (gsize f = 0; f < G_N_ELEMENTS(fields); f++)
        for (int k = 0; k < 4; k++)
            wide[fields[f][0] + k] = (guint8)(fields[f][1] >> (8 * k));
    wide[block_at + 11] = (guint8)((wide[block_at + 11] & 0xf0) | 0x01);
    g_autofree char *path32 = tmp_path("written32.sdt");
    g_assert_true(g_file_set_contents(path32, (const char *)wide, (gssize)len32, NULL));
    check_sdt(path32, wide + data_at, 4, 37, 23, 64);
}

/* Cut files still fail with the file named, whatever the thread count. */
static void test_truncated(void)
{
    g_autoptr(fm_dataset) counts = make_counts(9, 7, 16, 40, 3);
    g_autofree char *sdt = tmp_path("cut.sdt");
    g_autofree char *ptu = tmp_path("cut.ptu");
    g_assert_true(fm_sdt_write(sdt, counts, 100.0, NULL));
    g_assert_true(fm_ptu_write(ptu, counts, 100.0, NULL, NULL));
    use_threads("3");
    for (int k = 0; k < 2; k++) {
        const char *path = k ? ptu : sdt;
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
        g_assert_true(g_file_set_contents(path, bytes, (gssize)(len - 7), NULL));
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds =
            k ? fm_ptu_read(path, 0, NULL, NULL, NULL, &error) : fm_sdt_read(path, -1, &error);
        g_assert_null(ds);
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
        g_assert_nonnull(strstr(error->message, path));
        g_assert_nonnull(strstr(error->message, "truncated"));
    }
    use_threads(NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-flim-par-XXXXXX", NULL);
    g_test_add_func("/io/flim-parallel/ptu-real", test_ptu_real);
    g_test_add_func("/io/flim-parallel/ptu-written", test_ptu_written);
    g_test_add_func("/io/flim-parallel/ptu-saturated", test_ptu_saturated);
    g_test_add_func("/io/flim-parallel/sdt-real", test_sdt_real);
    g_test_add_func("/io/flim-parallel/sdt-written", test_sdt_written);
    g_test_add_func("/io/flim-parallel/truncated", test_truncated);
    int rc = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
    (void)!system(cmd);
    return rc;
}
