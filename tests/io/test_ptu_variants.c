/* PicoQuant T3 variants: the real SymPhoTime PicoHarp file, every T3 record type, several
 * detector channels, bidirectional scans, frames marked first, last or not at all, point
 * measurements, and .pt3 files; damaged and foreign files give FM_ERROR_BAD_INPUT naming the
 * file and the problem. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/flim/flim_prep.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/open.h"
#include "app/core/io/pt3.h"
#include "app/core/io/ptu.h"
#include "tests/io/flim-test-util.h"

static char *tmp_dir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

/* A counts cube with a decay along t, fixed-seed noise, and no two rows alike. */
static fm_dataset *make_counts(int w, int h, int bins, int peak, guint32 seed)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    guint16 *c = ds->data;
    for (int t = 0; t < bins; t++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double mean = peak * exp(-t * 3.0 / bins) * (1.0 + 0.2 * x);
                c[((gsize)t * h + y) * w + x] = (guint16)(mean * g_rand_double(rand) + 0.5);
            }
    return ds;
}

static guint64 total_counts(const fm_dataset *ds)
{
    guint64 n = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        n += (guint64)llround(fm_dataset_value(ds, i));
    return n;
}

static void assert_meta_count(const fm_dataset *ds, const char *key, guint64 want)
{
    g_autofree char *text = g_strdup_printf("%" G_GUINT64_FORMAT, want);
    g_assert_cmpstr(fm_dataset_get_meta(ds, key), ==, text);
}

/* Bin width and repetition rate as the writer set them: the period is bins × bin width.
 * rel: 1e-9 for .ptu (doubles), 1e-6 for .pt3 (float32 resolution, integer sync rate). */
static void assert_time_axis(const fm_dataset *ds, double bin_ps, gsize bins, double rel)
{
    g_assert_cmpfloat_with_epsilon(flim_test_meta_double(ds, "bin_width_ps"), bin_ps, bin_ps * rel);
    g_assert_cmpstr(ds->dims[2].unit, ==, "ns");
    g_assert_cmpfloat_with_epsilon(ds->dims[2].spacing, bin_ps * 1e-3, bin_ps * 1e-3 * rel);
    double rate = 1e6 / (bin_ps * (double)bins);
    g_assert_cmpfloat_with_epsilon(flim_test_meta_double(ds, "rep_rate_mhz"), rate, rate * rel);
}

static void expect_bad_input(fm_dataset *ds, GError *error, const char *path, const char *what)
{
    if (ds)
        g_error("%s was read although it is damaged or foreign", path);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    if (!strstr(error->message, path))
        g_error("message '%s' does not name the file", error->message);
    if (what && !strstr(error->message, what))
        g_error("message '%s' does not say '%s'", error->message, what);
}

static fm_dataset *open_any(const char *path, GError **error)
{
    return fm_dataset_open(path, NULL, NULL, NULL, error);
}

/* --- the real file --------------------------------------------------------------------------- */

/* PicoHarp T3 records after the tag header: the photon records (channel != 15), and those
 * between a LineStart (marker bit 1) and the next LineStop (marker bit 2) marker, walked from the
 * documented record layout without the reader's code. */
static void count_photons_in_lines(const guint8 *bytes, gsize len, guint64 *photons,
                                   guint64 *in_lines, guint64 *lines)
{
    gsize at = 16;
    for (;;) {
        g_assert_cmpuint(at + 48, <=, len);
        guint32 type = flim_test_le32(bytes + at + 36);
        guint64 value = flim_test_le32(bytes + at + 40) | (guint64)flim_test_le32(bytes + at + 44)
                                                              << 32;
        gboolean end = strcmp((const char *)bytes + at, "Header_End") == 0;
        at += 48 + ((type & 0xffff) == 0xffff ? (gsize)value : 0);
        if (end)
            break;
    }
    gboolean inside = FALSE;
    *photons = *in_lines = *lines = 0;
    for (; at + 4 <= len; at += 4) {
        guint32 r = flim_test_le32(bytes + at), markers = (r >> 16) & 0xf;
        if (r >> 28 != 15) {
            (*photons)++;
            *in_lines += inside;
        } else if (markers & 2 && inside) {
            inside = FALSE;
            (*lines)++;
        } else if (markers & 1) {
            inside = TRUE;
        }
    }
}

/* SymPhoTime's PicoHarp T3 image (shared/refdata/flim-real, see its README): the header's
 * figures, and the per-pixel counts sum to the photons inside the scan lines. The reader places
 * a photon only between a LineStart and a LineStop marker (the line's sync times give its
 * column), so that sum, counted here straight from the records, is the total it must keep; this
 * file holds 256 lines of one frame, no photon outside them, and dtimes 0..132. */
static void test_real_picoharp(void)
{
    g_autofree char *path =
        g_build_filename(FM_REFDATA_DIR, "flim-real", "Example_PTU_PicoHarp.ptu", NULL);
    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("shared/refdata/flim-real/Example_PTU_PicoHarp.ptu is absent beside the "
                    "repository: the real-file checks did not run");
        return;
    }
    g_autofree char *contents = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &contents, &len, NULL));
    guint64 photons, in_lines, lines;
    count_photons_in_lines((const guint8 *)contents, len, &photons, &in_lines, &lines);
    g_assert_cmpuint(photons, ==, 722402);
    g_assert_cmpuint(in_lines, ==, 722402);
    g_assert_cmpuint(lines, ==, 256);

    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = open_any(path, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(ds->dims[0].size, ==, 256);
    g_assert_cmpuint(ds->dims[1].size, ==, 256);
    /* 12.817 ns / 96.97 ps = 132.2: 133 bins, the last one partly beyond the period */
    g_assert_cmpuint(ds->dims[2].size, ==, 133);
    g_assert_cmpfloat_with_epsilon(flim_test_meta_double(ds, "bin_width_ps"), 96.97, 0.005);
    g_assert_cmpfloat_with_epsilon(flim_test_meta_double(ds, "rep_rate_mhz"), 78.02, 0.0001);
    assert_meta_count(ds, "ptu_records", 723240);
    assert_meta_count(ds, "ptu_photons", 722402);
    assert_meta_count(ds, "ptu_photons_dropped", 0);
    assert_meta_count(ds, "ptu_frames", 1);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "ptu_measurement"), ==, "image");
    g_assert_cmpstr(fm_dataset_get_meta(ds, "ptu_channels"), ==, "1");
    g_assert_cmpuint(total_counts(ds), ==, in_lines);
    /* the one detector channel alone is the same image; another is refused by name */
    g_autoptr(fm_dataset) one = fm_ptu_read_channel(path, 1, 0, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(ds, one);
    g_autoptr(fm_dataset) two = fm_ptu_read_channel(path, 2, 0, NULL, NULL, NULL, &error);
    expect_bad_input(two, error, path, "channel 2 holds no photons (channels with photons: 1)");
}

/* Rewrites the 8-byte value of the tag `ident` in place. */
static void patch_tag(const char *path, const char *ident, guint64 value)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    gsize n = strlen(ident) + 1, at = 16;
    while (at + 48 <= len && memcmp(bytes + at, ident, n) != 0)
        at++;
    g_assert_cmpuint(at + 48, <=, len);
    guint64 le = GUINT64_TO_LE(value);
    memcpy(bytes + at + 40, &le, 8);
    g_assert_true(g_file_set_contents(path, bytes, (gssize)len, NULL));
}

/* --- record types ---------------------------------------------------------------------------- */

static const struct {
    guint32 type;
    const char *name;
} record_types[] = {
    {FM_PTU_PICOHARP_T3, "picoharp"},         {FM_PTU_HYDRAHARP_T3, "hydraharp-v1"},
    {FM_PTU_HYDRAHARP2_T3, "hydraharp-v2"},   {FM_PTU_TIMEHARP260N_T3, "timeharp260n"},
    {FM_PTU_TIMEHARP260P_T3, "timeharp260p"}, {FM_PTU_GENERIC_T3, "multiharp-picoharp330"},
};

/* Every documented T3 record type round-trips: counts, bin width, repetition rate, photons. */
static void test_record_types(void)
{
    g_autoptr(fm_dataset) counts = make_counts(9, 6, 40, 30, 11);
    for (gsize i = 0; i < G_N_ELEMENTS(record_types); i++) {
        g_autofree char *name = g_strdup_printf("%s.ptu", record_types[i].name);
        g_autofree char *path = tmp_path(name);
        fm_ptu_write_options opt = {.record_type = record_types[i].type, .syncs_per_pixel = 30};
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_ptu_write(path, counts, 48.0, &opt, &error));
        g_autoptr(fm_dataset) back = open_any(path, &error);
        g_assert_no_error(error);
        flim_test_assert_same_counts(counts, back);
        assert_time_axis(back, 48.0, 40, 1e-9);
        assert_meta_count(back, "ptu_photons", total_counts(counts));
        assert_meta_count(back, "ptu_photons_dropped", 0);
        g_assert_cmpstr(fm_dataset_get_meta(back, "format"), ==, "ptu");
    }
    /* an older edition of the record appendix gives the TimeHarp 260 T3 codes a v2 sub-ID */
    g_autofree char *path = tmp_path("timeharp260n.ptu");
    patch_tag(path, "TTResultFormat_TTTRRecType", FM_PTU_TIMEHARP260N_T3 | 0x01000000);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) back = open_any(path, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, back);
}

/* --- channels -------------------------------------------------------------------------------- */

/* What the writer puts on channel c (1-based) of n: photon k of each pixel, in t order, goes
 * to channel 1 + k % n. */
static fm_dataset *channel_share(const fm_dataset *counts, int c, int n)
{
    gsize w = counts->dims[0].size, h = counts->dims[1].size, bins = counts->dims[2].size;
    fm_dataset *part = fm_dataset_new(FM_PIXEL_U16, 3, (gsize[]){w, h, bins}, NULL);
    const guint16 *in = counts->data;
    guint16 *out = part->data;
    for (gsize p = 0; p < w * h; p++) {
        guint64 k = 0;
        for (gsize t = 0; t < bins; t++)
            for (guint v = 0; v < in[t * w * h + p]; v++, k++)
                out[t * w * h + p] += k % (guint64)n == (guint64)(c - 1);
    }
    return part;
}

static void check_channels(const char *path, const fm_dataset *counts, int n,
                           fm_dataset *(*read)(const char *path, int channel, GError **error))
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) all = read(path, 0, &error);
    g_assert_no_error(error);
    flim_test_assert_same_counts(counts, all);
    g_autofree char *present = NULL;
    for (int c = 1; c <= n; c++) {
        char *more = g_strdup_printf("%s%s%d", present ? present : "", present ? "," : "", c);
        g_free(present);
        present = more;
    }
    g_assert_cmpstr(fm_dataset_get_meta(all, "ptu_channels"), ==, present);
    g_assert_cmpstr(fm_dataset_get_meta(all, "ptu_channel"), ==, "all");
    for (int c = 1; c <= n; c++) {
        g_autoptr(fm_dataset) want = channel_share(counts, c, n);
        g_autoptr(fm_dataset) got = read(path, c, &error);
        g_assert_no_error(error);
        flim_test_assert_same_counts(want, got);
        assert_meta_count(got, "ptu_photons", total_counts(want));
        assert_meta_count(got, "ptu_photons_dropped", 0);
    }
    g_autoptr(fm_dataset) none = read(path, n + 1, &error);
    g_autofree char *what = g_strdup_printf("channels with photons: %s", present);
    expect_bad_input(none, error, path, what);
}

static fm_dataset *read_ptu_channel(const char *path, int channel, GError **error)
{
    return fm_ptu_read_channel(path, channel, 0, NULL, NULL, NULL, error);
}

static fm_dataset *read_pt3_channel(const char *path, int channel, GError **error)
{
    return fm_pt3_read(path, channel, 0, NULL, NULL, NULL, error);
}

/* Several detectors: all of them sum to the counts, each alone gives its share. */
static void test_channels(void)
{
    g_autoptr(fm_dataset) counts = make_counts(7, 5, 32, 25, 12);
    g_autofree char *hh = tmp_path("channels-hh2.ptu");
    g_autofree char *ph = tmp_path("channels-ph.ptu");
    g_autofree char *generic = tmp_path("channels-generic.ptu");
    fm_ptu_write_options o_hh = {.record_type = FM_PTU_HYDRAHARP2_T3, .channels = 3};
    fm_ptu_write_options o_ph = {.record_type = FM_PTU_PICOHARP_T3, .channels = 4};
    fm_ptu_write_options o_gen = {.record_type = FM_PTU_GENERIC_T3, .channels = 63};
    g_assert_true(fm_ptu_write(hh, counts, 100.0, &o_hh, NULL));
    g_assert_true(fm_ptu_write(ph, counts, 100.0, &o_ph, NULL));
    g_assert_true(fm_ptu_write(generic, counts, 100.0, &o_gen, NULL));
    check_channels(hh, counts, 3, read_ptu_channel);
    check_channels(ph, counts, 4, read_ptu_channel);
    check_channels(generic, counts, 63, read_ptu_channel);
    g_autoptr(GError) error = NULL;
    fm_ptu_write_options too_many = {.record_type = FM_PTU_PICOHARP_T3, .channels = 5};
    g_assert_false(fm_ptu_write(ph, counts, 100.0, &too_many, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_clear_error(&error);
    g_autoptr(fm_dataset) bad = fm_ptu_read_channel(hh, -1, 0, NULL, NULL, NULL, &error);
    g_assert_null(bad);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
}

/* --- bidirectional scans and frames ---------------------------------------------------------- */

/* Odd rows are written right to left and come back in the right order; read as if scanned one
 * way (ImgHdr_BiDirect patched to 0), exactly the odd rows come back mirrored, which proves
 * the file really holds them reversed. */
static void test_bidirectional(void)
{
    g_autoptr(fm_dataset) counts = make_counts(8, 5, 16, 20, 13);
    gsize w = 8, h = 5, bins = 16;
    for (guint32 r = 0; r < 2; r++) {
        guint32 type = r ? FM_PTU_PICOHARP_T3 : FM_PTU_HYDRAHARP2_T3;
        g_autofree char *path = tmp_path(r ? "bidi-ph.ptu" : "bidi-hh2.ptu");
        fm_ptu_write_options opt = {.record_type = type, .bidirectional = TRUE};
        g_assert_true(fm_ptu_write(path, counts, 100.0, &opt, NULL));
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) back = open_any(path, &error);
        g_assert_no_error(error);
        flim_test_assert_same_counts(counts, back);
        g_assert_cmpstr(fm_dataset_get_meta(back, "ptu_bidirectional"), ==, "1");
        patch_tag(path, "ImgHdr_BiDirect", 0);
        g_autoptr(fm_dataset) one_way = open_any(path, &error);
        g_assert_no_error(error);
        const guint16 *c = counts->data, *o = one_way->data;
        for (gsize t = 0; t < bins; t++)
            for (gsize y = 0; y < h; y++)
                for (gsize x = 0; x < w; x++) {
                    gsize from = y % 2 ? w - 1 - x : x;
                    g_assert_cmpuint(o[(t * h + y) * w + x], ==, c[(t * h + y) * w + from]);
                }
        g_assert_false(memcmp(counts->data, one_way->data, fm_dataset_n_bytes(counts)) == 0);
    }
}

/* Three frames whose photons sum to the counts, the Frame marker before each frame's first
 * line, after its last (as SymPhoTime writes it), or absent (a frame is then PixY lines). */
static void test_frames(void)
{
    g_autoptr(fm_dataset) counts = make_counts(6, 7, 20, 30, 14);
    static const int where[] = {FM_PTU_FRAME_MARKER_FIRST, FM_PTU_FRAME_MARKER_LAST,
                                FM_PTU_FRAME_MARKER_NONE};
    for (gsize i = 0; i < G_N_ELEMENTS(where); i++) {
        g_autofree char *name = g_strdup_printf("frames-%d.ptu", where[i]);
        g_autofree char *path = tmp_path(name);
        fm_ptu_write_options opt = {.record_type = FM_PTU_HYDRAHARP_T3,
                                    .frames = 3,
                                    .frame_marker = where[i],
                                    .bidirectional = i == 2};
        g_assert_true(fm_ptu_write(path, counts, 80.0, &opt, NULL));
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) back = open_any(path, &error);
        g_assert_no_error(error);
        flim_test_assert_same_counts(counts, back);
        assert_meta_count(back, "ptu_frames", 3);
        assert_meta_count(back, "ptu_photons_dropped", 0);
        /* the same scan as one frame */
        opt.frames = 1;
        g_assert_true(fm_ptu_write(path, counts, 80.0, &opt, NULL));
        g_autoptr(fm_dataset) single = open_any(path, &error);
        assert_meta_count(single, "ptu_frames", 1);
    }
}

/* --- point measurements ---------------------------------------------------------------------- */

/* The decay a point file must give: the counts summed over pixels. */
static void assert_point_decay(const fm_dataset *counts, const fm_dataset *decay)
{
    gsize w = counts->dims[0].size, h = counts->dims[1].size, bins = counts->dims[2].size;
    g_assert_cmpint(decay->type, ==, FM_PIXEL_F32);
    g_assert_cmpuint(decay->dims[0].size, ==, 1);
    g_assert_cmpuint(decay->dims[1].size, ==, 1);
    g_assert_cmpuint(decay->dims[2].size, ==, bins);
    const guint16 *c = counts->data;
    const float *d = decay->data;
    for (gsize t = 0; t < bins; t++) {
        guint64 sum = 0;
        for (gsize p = 0; p < w * h; p++)
            sum += c[t * w * h + p];
        g_assert_cmpfloat(d[t], ==, (float)sum);
    }
    g_assert_cmpstr(fm_dataset_get_meta(decay, "ptu_measurement"), ==, "point");
}

/* A point measurement (no image tags, no markers) is one decay over 1 x 1 pixel, as an IRF is
 * recorded; its peak bin here exceeds 65535, which a uint16 image would clip. */
static void test_point(void)
{
    g_autoptr(fm_dataset) counts = make_counts(12, 10, 32, 1000, 15);
    for (int k = 0; k < 3; k++) {
        guint32 type = k == 0 ? FM_PTU_HYDRAHARP2_T3 : FM_PTU_PICOHARP_T3;
        g_autofree char *path = tmp_path(k == 0 ? "irf-hh2.ptu" : k == 1 ? "irf.ptu" : "irf.pt3");
        fm_ptu_write_options opt = {.record_type = type, .point = TRUE, .channels = 2};
        g_assert_true(k == 2 ? fm_pt3_write(path, counts, 25.0, &opt, NULL)
                             : fm_ptu_write(path, counts, 25.0, &opt, NULL));
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) decay = open_any(path, &error);
        g_assert_no_error(error);
        assert_point_decay(counts, decay);
        assert_time_axis(decay, 25.0, 32, k == 2 ? 1e-6 : 1e-9);
        g_assert_cmpfloat(((const float *)decay->data)[0], >, 65535.0f);
        g_assert_cmpstr(fm_dataset_get_meta(decay, "ptu_channels"), ==, "1,2");
    }
    /* An image header whose records hold no LineStart marker is a point measurement too. */
    g_autofree char *path = tmp_path("no-lines.ptu");
    g_autoptr(fm_dataset) small = make_counts(4, 3, 16, 10, 16);
    g_assert_true(fm_ptu_write(path, small, 100.0, NULL, NULL));
    patch_tag(path, "ImgHdr_LineStart", 9);
    patch_tag(path, "ImgHdr_LineStop", 10);
    patch_tag(path, "ImgHdr_Frame", 11);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) decay = open_any(path, &error);
    g_assert_no_error(error);
    assert_point_decay(small, decay);
}

/* A point measurement is usable as the IRF of the fits (irf_file): the loader gives its decay,
 * normalised to sum 1, and refuses one whose bin count differs from the data's. */
static void test_point_as_irf(void)
{
    g_autoptr(fm_dataset) counts = make_counts(3, 2, 24, 400, 21);
    g_autofree char *ptu = tmp_path("irf-for-fit.ptu");
    g_autofree char *pt3 = tmp_path("irf-for-fit.pt3");
    fm_ptu_write_options opt = {.point = TRUE};
    g_assert_true(fm_ptu_write(ptu, counts, 50.0, &opt, NULL));
    g_assert_true(fm_pt3_write(pt3, counts, 50.0, &opt, NULL));
    double total = (double)total_counts(counts);
    const guint16 *c = counts->data;
    const char *paths[] = {ptu, pt3};
    for (int k = 0; k < 2; k++) {
        g_autoptr(GError) error = NULL;
        g_autofree float *irf = fm_flim_prep_load_decay(paths[k], 24, "IRF", &error);
        g_assert_no_error(error);
        for (int t = 0; t < 24; t++) {
            double sum = 0;
            for (int p = 0; p < 6; p++)
                sum += c[t * 6 + p];
            g_assert_cmpfloat_with_epsilon(irf[t], sum / total, 1e-6);
        }
        g_autofree float *wrong = fm_flim_prep_load_decay(paths[k], 48, "IRF", &error);
        g_assert_null(wrong);
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
        g_assert_nonnull(strstr(error->message, "24 values, the data has 48 time bins"));
    }
}

/* --- .pt3 ------------------------------------------------------------------------------------- */

/* .pt3 images: by content under any name and by the name, several channels, bidirectional,
 * frames; the bin width is a float32 in ns there, so 1e-6 relative. */
static void test_pt3(void)
{
    g_autoptr(fm_dataset) counts = make_counts(10, 6, 50, 25, 17);
    g_autofree char *path = tmp_path("image.pt3");
    g_autofree char *odd = tmp_path("image-pt3.dat");
    fm_ptu_write_options opt = {.syncs_per_pixel = 40,
                                .line_gap_syncs = 70000,
                                .channels = 2,
                                .frames = 2,
                                .frame_marker = FM_PTU_FRAME_MARKER_LAST,
                                .bidirectional = TRUE};
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_pt3_write(path, counts, 100.0, &opt, &error));
    g_assert_true(fm_pt3_write(odd, counts, 100.0, &opt, &error));
    g_assert_no_error(error);
    for (int k = 0; k < 2; k++) {
        g_autoptr(fm_dataset) back = open_any(k ? odd : path, &error);
        g_assert_no_error(error);
        flim_test_assert_same_counts(counts, back);
        assert_time_axis(back, 100.0, 50, 1e-6);
        g_assert_cmpstr(fm_dataset_get_meta(back, "format"), ==, "pt3");
        g_assert_cmpstr(fm_dataset_get_meta(back, "ptu_bidirectional"), ==, "1");
        assert_meta_count(back, "ptu_frames", 2);
        assert_meta_count(back, "ptu_photons", total_counts(counts));
    }
    check_channels(path, counts, 2, read_pt3_channel);
    fm_ptu_write_options hydra = {.record_type = FM_PTU_HYDRAHARP2_T3};
    g_assert_false(fm_pt3_write(path, counts, 100.0, &hydra, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
}

/* --- damaged and foreign files ---------------------------------------------------------------- */

/* Every cut of each file fails with the file named, through its reader and the opener: a .pt3
 * image (every 7th byte of the header, then every byte), a point .ptu and a bidirectional
 * multi-channel .ptu of several frames (every 3rd byte). */
static void test_truncated(void)
{
    g_autoptr(fm_dataset) counts = make_counts(5, 4, 12, 8, 18);
    fm_ptu_write_options point = {.point = TRUE, .record_type = FM_PTU_TIMEHARP260N_T3};
    fm_ptu_write_options multi = {.channels = 3, .bidirectional = TRUE, .frames = 2};
    const char *names[] = {"cut-source.pt3", "cut-source-point.ptu", "cut-source-multi.ptu"};
    for (int f = 0; f < 3; f++) {
        g_autofree char *path = tmp_path(names[f]);
        g_autofree char *cut = tmp_path(f == 0 ? "cut.pt3" : "cut.ptu");
        g_assert_true(f == 0   ? fm_pt3_write(path, counts, 100.0, NULL, NULL)
                      : f == 1 ? fm_ptu_write(path, counts, 100.0, &point, NULL)
                               : fm_ptu_write(path, counts, 100.0, &multi, NULL));
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
        for (gsize n = 0; n < len; n += f ? 3 : n < FM_PT3_IMG_HDR + 64 ? 7 : 1) {
            flim_test_write_bytes(cut, bytes, n);
            g_autoptr(GError) error = NULL;
            g_autoptr(fm_dataset) ds = f == 0 ? fm_pt3_read(cut, 0, 0, NULL, NULL, NULL, &error)
                                              : fm_ptu_read(cut, 0, NULL, NULL, NULL, &error);
            expect_bad_input(ds, error, cut, n == 0 ? "empty" : NULL);
            g_clear_error(&error);
            g_autoptr(fm_dataset) any = open_any(cut, &error);
            expect_bad_input(any, error, cut, NULL);
        }
        flim_test_write_bytes(cut, bytes, len - 3);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = open_any(cut, &error);
        expect_bad_input(ds, error, cut, "truncated: the header declares");
    }
}

/* Rewrites an int32 of a copy of `path`. */
static void patch_word(const char *path, const char *out, gsize at, guint32 value)
{
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    guint32 le = GUINT32_TO_LE(value);
    memcpy(bytes + at, &le, 4);
    flim_test_write_bytes(out, bytes, len);
}

static void test_pt3_foreign(void)
{
    g_autoptr(fm_dataset) counts = make_counts(5, 4, 12, 8, 19);
    g_autofree char *path = tmp_path("good.pt3");
    g_autofree char *bad = tmp_path("bad.pt3");
    g_assert_true(fm_pt3_write(path, counts, 100.0, NULL, NULL));
    static const struct {
        gsize at;
        guint32 value;
        const char *what;
    } cases[] = {
        {FM_PT3_MEAS_MODE, 0, "measurement mode 0 is not T3"}, /* a .phd histogram */
        {FM_PT3_MEAS_MODE, 2, "measurement mode 2 is not T3"}, /* a .pt2 */
        {FM_PT3_FORMAT_VERSION, 0x302e31, "format version \"1.0\""},
        {FM_PT3_RESOLUTION_NS, 0, "resolution"},
        {FM_PT3_IMG_HDR_SIZE, 1u << 30, "imaging header declares"},
        {FM_PT3_IMG_HDR_SIZE, 5, "imaging header holds 5 words"},
        {FM_PT3_IMG_HDR + 4 * FM_PT3_IMG_IDENT, 1, "scanner ident 1"},
        {FM_PT3_IMG_HDR + 4 * FM_PT3_IMG_PIX_X, 0, "PixX is 0"},
        {FM_PT3_IMG_HDR + 4 * FM_PT3_IMG_LINE_START, 16, "LineStart is 16"},
        {FM_PT3_RECORDS, 0xffffffffu, "truncated"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        patch_word(path, bad, cases[i].at, cases[i].value);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) ds = open_any(bad, &error);
        expect_bad_input(ds, error, bad, cases[i].what);
    }
    /* a text file named .pt3, and a .ptu header under the .pt3 reader */
    g_assert_true(g_file_set_contents(bad, "PicoHarp 3000 notes\n", -1, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) text = open_any(bad, &error);
    expect_bad_input(text, error, bad, "not a PicoHarp .pt3 file");
    g_autofree char *ptu = tmp_path("really.ptu");
    g_assert_true(fm_ptu_write(ptu, counts, 100.0, NULL, NULL));
    g_clear_error(&error);
    g_autoptr(fm_dataset) wrong = fm_pt3_read(ptu, 0, 0, NULL, NULL, NULL, &error);
    expect_bad_input(wrong, error, ptu, "not a PicoHarp .pt3 file");
}

/* Random damage (fixed seeds) to the new variants: each read succeeds or fails with
 * FM_ERROR_BAD_INPUT; never a crash or a hang. */
static void test_fuzz(void)
{
    g_autoptr(fm_dataset) counts = make_counts(6, 5, 24, 12, 20);
    g_autofree char *pt3 = tmp_path("fuzz.pt3");
    g_autofree char *multi = tmp_path("fuzz-multi.ptu");
    g_autofree char *point = tmp_path("fuzz-point.ptu");
    g_autofree char *copy_path = tmp_path("fuzzed");
    fm_ptu_write_options o3 = {.channels = 2, .bidirectional = TRUE, .frames = 2};
    fm_ptu_write_options om = {.record_type = FM_PTU_GENERIC_T3,
                               .channels = 3,
                               .bidirectional = TRUE,
                               .frames = 2,
                               .frame_marker = FM_PTU_FRAME_MARKER_LAST};
    fm_ptu_write_options op = {.record_type = FM_PTU_TIMEHARP260P_T3, .point = TRUE};
    g_assert_true(fm_pt3_write(pt3, counts, 100.0, &o3, NULL));
    g_assert_true(fm_ptu_write(multi, counts, 100.0, &om, NULL));
    g_assert_true(fm_ptu_write(point, counts, 100.0, &op, NULL));
    const char *paths[] = {pt3, multi, point};
    for (int f = 0; f < 3; f++) {
        g_autofree char *bytes = NULL;
        gsize len = 0;
        g_assert_true(g_file_get_contents(paths[f], &bytes, &len, NULL));
        g_autofree char *copy = g_malloc(len);
        g_autoptr(GRand) rand = g_rand_new_with_seed(70 + f);
        int refused = 0;
        for (int i = 0; i < 300; i++) {
            memcpy(copy, bytes, len);
            for (int k = g_rand_int_range(rand, 1, 5); k > 0; k--)
                copy[g_rand_int_range(rand, 0, (gint32)len)] = (char)g_rand_int_range(rand, 0, 256);
            flim_test_write_bytes(copy_path, copy, len);
            g_autoptr(GError) error = NULL;
            g_autoptr(fm_dataset) ds = f == 0
                                           ? fm_pt3_read(copy_path, 0, 0, NULL, NULL, NULL, &error)
                                           : open_any(copy_path, &error);
            if (!ds) {
                g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
                refused++;
            }
        }
        g_test_message("%s: %d of 300 damaged copies refused", paths[f], refused);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-ptu-XXXXXX", NULL);
    g_test_add_func("/ptu/real-picoharp", test_real_picoharp);
    g_test_add_func("/ptu/record-types", test_record_types);
    g_test_add_func("/ptu/channels", test_channels);
    g_test_add_func("/ptu/bidirectional", test_bidirectional);
    g_test_add_func("/ptu/frames", test_frames);
    g_test_add_func("/ptu/point", test_point);
    g_test_add_func("/ptu/point-as-irf", test_point_as_irf);
    g_test_add_func("/pt3/image", test_pt3);
    g_test_add_func("/ptu/truncated", test_truncated);
    g_test_add_func("/pt3/foreign", test_pt3_foreign);
    g_test_add_func("/ptu/fuzz", test_fuzz);
    int status = g_test_run();
    g_autoptr(GFile) dir = g_file_new_for_path(tmp_dir);
    g_autoptr(GFileEnumerator) files =
        g_file_enumerate_children(dir, G_FILE_ATTRIBUTE_STANDARD_NAME, 0, NULL, NULL);
    for (GFileInfo *info; files && (info = g_file_enumerator_next_file(files, NULL, NULL));) {
        g_autofree char *file = g_build_filename(tmp_dir, g_file_info_get_name(info), NULL);
        g_unlink(file);
        g_object_unref(info);
    }
    g_rmdir(tmp_dir);
    g_free(tmp_dir);
    return status;
}
