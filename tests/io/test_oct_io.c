/* SD-OCT files: raw u16 / 12-bit packed / u8 round trips with sidecars, the 12-bit bit order,
 * the threaded decoder against a bit-by-bit reference, size errors with numbers, calibration CSV
 * and polynomial errors, backgrounds, the simulator. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "app/core/oct/oct_calib.h"
#include "app/core/oct/oct_sim.h"

static char *tmp_dir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

static void write_file(const char *path, const void *data, gsize n)
{
    g_autoptr(GError) error = NULL;
    g_assert_true(g_file_set_contents(path, data, (gssize)n, &error));
}

static fm_dataset *spectra(int pixels, int alines, int bscans, guint16 max_value)
{
    gsize sizes[3] = {(gsize)pixels, (gsize)alines, (gsize)bscans};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    GRand *rand = g_rand_new_with_seed(6);
    guint16 *v = ds->data;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        v[i] = (guint16)g_rand_int_range(rand, 0, max_value + 1);
    g_rand_free(rand);
    return ds;
}

/* The documented Mono12p order, written out by hand: a = 0x123, b = 0x456. */
static void test_u12_bit_order(void)
{
    const guint8 bytes[] = {0x23, 0x61, 0x45, 0xff, 0xff, 0xff};
    fm_oct_raw_layout layout = {2, 1, 0, FM_OCT_RAW_U12_PACKED};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_oct_raw_decode(bytes, sizeof bytes, "t.raw", &layout, &error);
    g_assert_no_error(error);
    const guint16 *v = ds->data;
    g_assert_cmpuint(v[0], ==, 0x123);
    g_assert_cmpuint(v[1], ==, 0x456);
    g_assert_cmpuint(v[2], ==, 0xfff);
    g_assert_cmpuint(v[3], ==, 0xfff);
    g_assert_cmpint(ds->bits_per_sample, ==, 12);
    g_assert_cmpint(fm_dataset_frames(ds), ==, 2);
}

static void round_trip(fm_oct_raw_format format, guint16 max_value, const char *name)
{
    g_autoptr(fm_dataset) ds = spectra(64, 5, 3, max_value);
    g_autofree char *path = tmp_path(name);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_oct_raw_write(path, ds, format, "cal.csv", &error));
    g_assert_no_error(error);
    struct stat st;
    g_assert_cmpint(g_stat(path, &st), ==, 0);
    fm_oct_raw_layout layout = {64, 5, 3, format};
    g_assert_cmpint(st.st_size, ==, fm_oct_raw_aline_bytes(&layout) * 15);
    g_autoptr(fm_dataset) back = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(back->type, ==, FM_PIXEL_U16);
    g_assert_cmpint(fm_dataset_width(back), ==, 64);
    g_assert_cmpint(fm_dataset_height(back), ==, 5);
    g_assert_cmpint(fm_dataset_frames(back), ==, 3);
    g_assert_cmpstr(back->dims[0].name, ==, "pixel");
    g_assert_true(fm_oct_dataset_is_spectra(back));
    g_assert_cmpmem(back->data, fm_dataset_n_bytes(back), ds->data, fm_dataset_n_bytes(ds));
    /* the sidecar's calibration file is resolved beside the raw file */
    g_autofree char *expected = tmp_path("cal.csv");
    g_assert_cmpstr(fm_dataset_get_meta(back, FM_OCT_META_CALIBRATION), ==, expected);
}

static void test_round_trips(void)
{
    round_trip(FM_OCT_RAW_U16, 65535, "a16.raw");
    round_trip(FM_OCT_RAW_U12_PACKED, 4095, "a12.bin");
    round_trip(FM_OCT_RAW_U8, 255, "a8.oct");
}

static void test_size_errors(void)
{
    g_autofree char *path = tmp_path("odd.raw");
    g_autofree guint8 *bytes = g_malloc0(4097);
    write_file(path, bytes, 4097);
    fm_oct_raw_layout layout = {2048, 1, 0, FM_OCT_RAW_U16};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_oct_raw_read(path, &layout, &error);
    g_assert_null(ds);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message,
                            "4,097 bytes do not hold whole B-scans of 1 A-line of 2048 u16 "
                            "pixels (4,096 bytes each)"));
    g_clear_error(&error);

    /* three A-lines cannot make B-scans of two */
    layout = (fm_oct_raw_layout){4, 2, 0, FM_OCT_RAW_U8};
    g_assert_null(fm_oct_raw_decode(bytes, 12, "x.raw", &layout, &error));
    g_assert_nonnull(strstr(error->message, "x.raw: 12 bytes do not hold whole B-scans of 2 "
                                            "A-lines of 4 u8 pixels (8 bytes each); 4 pixels "
                                            "u12packed would fit 1 B-scan of 2 A-lines"));
    g_clear_error(&error);
    layout = (fm_oct_raw_layout){4, 1, 5, FM_OCT_RAW_U8};
    g_assert_null(fm_oct_raw_decode(bytes, 12, "x.raw", &layout, &error));
    g_assert_nonnull(strstr(error->message, "12 bytes do not hold 5 B-scans of 1 A-line of 4 u8 "
                                            "pixels (20 bytes)"));
    g_clear_error(&error);
    layout = (fm_oct_raw_layout){5, 1, 0, FM_OCT_RAW_U12_PACKED};
    g_assert_null(fm_oct_raw_decode(bytes, 15, "x.raw", &layout, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
}

/* Sample i of a raw file as the documented layouts define it, bit by bit: 12-bit packed
 * samples are bits [12 i, 12 i + 12) of the little-endian bit stream. */
static guint16 reference_sample(const guint8 *bytes, fm_oct_raw_format format, gsize i)
{
    if (format == FM_OCT_RAW_U16)
        return (guint16)(bytes[2 * i] + 256 * bytes[2 * i + 1]);
    if (format == FM_OCT_RAW_U8)
        return bytes[i];
    guint v = 0;
    for (gsize b = 0; b < 12; b++) {
        gsize bit = 12 * i + b;
        v |= ((bytes[bit / 8] >> (bit % 8)) & 1u) << b;
    }
    return (guint16)v;
}

/* The decoders split A-lines between threads: random bytes in every format, with A-line counts
 * that no thread count divides evenly, decoded by 1..16 threads and by as many as the machine
 * has, from memory and from a file, equal the reference sample for sample. */
static void test_parallel_decode(void)
{
    static const fm_oct_raw_format formats[] = {FM_OCT_RAW_U12_PACKED, FM_OCT_RAW_U16,
                                                FM_OCT_RAW_U8};
    static const char *const threads[] = {"1", "2", "3", "4", "7", "16", NULL};
    static const int alines[][2] = {{1001, 3}, {5, 1}, {1, 1}}; /* per B-scan, B-scans */
    g_autoptr(GRand) rand = g_rand_new_with_seed(77);
    g_autofree char *path = tmp_path("parallel.raw");
    for (gsize f = 0; f < G_N_ELEMENTS(formats); f++)
        for (gsize a = 0; a < G_N_ELEMENTS(alines); a++) {
            fm_oct_raw_layout layout = {70, alines[a][0], alines[a][1], formats[f]};
            gsize n_samples = 70 * (gsize)alines[a][0] * (gsize)alines[a][1];
            gsize n_bytes = fm_oct_raw_aline_bytes(&layout) * (n_samples / 70);
            g_autofree guint8 *bytes = g_malloc(n_bytes);
            for (gsize i = 0; i < n_bytes; i++)
                bytes[i] = (guint8)g_rand_int_range(rand, 0, 256);
            write_file(path, bytes, n_bytes);
            for (gsize t = 0; t < G_N_ELEMENTS(threads); t++) {
                /* libc's, not g_setenv, which warns once threads have existed: the decoder reads
                 * the variable before it starts any and joins them all before it returns */
                if (threads[t])
                    setenv("FLUXMAP_IO_THREADS", threads[t], 1);
                else
                    unsetenv("FLUXMAP_IO_THREADS");
                g_autoptr(GError) error = NULL;
                g_autoptr(fm_dataset) mem = fm_oct_raw_decode(bytes, n_bytes, "x", &layout, &error);
                g_assert_no_error(error);
                g_autoptr(fm_dataset) file = fm_oct_raw_read(path, &layout, &error);
                g_assert_no_error(error);
                g_assert_cmpuint(fm_dataset_n_elements(mem), ==, n_samples);
                const guint16 *m = mem->data, *v = file->data;
                for (gsize i = 0; i < n_samples; i++) {
                    guint16 want = reference_sample(bytes, formats[f], i);
                    if (m[i] != want || v[i] != want)
                        g_error("%s, %s threads: sample %" G_GSIZE_FORMAT " is %u/%u, not %u",
                                fm_oct_raw_format_name(formats[f]), threads[t] ? threads[t] : "all",
                                i, m[i], v[i], want);
                }
            }
        }
    unsetenv("FLUXMAP_IO_THREADS");
}

/* A file cut short of its sidecar's layout: an error naming the file and the numbers. */
static void test_truncated_file(void)
{
    g_autoptr(fm_dataset) ds = spectra(64, 30, 2, 4095);
    g_autofree char *path = tmp_path("cut12.raw");
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_oct_raw_write(path, ds, FM_OCT_RAW_U12_PACKED, NULL, &error));
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    write_file(path, bytes, len - 96); /* one A-line short */
    g_autoptr(fm_dataset) cut = fm_oct_raw_read(path, NULL, &error);
    g_assert_null(cut);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "cut12.raw"));
    g_assert_nonnull(strstr(error->message, "5,664 bytes do not hold 2 B-scans of 30 A-lines"));
    g_assert_nonnull(strstr(error->message, "it holds 59 A-lines of 64 pixels u12packed, not a "
                                            "multiple of 30"));
    g_clear_error(&error);
    write_file(path, bytes, len - 1);
    g_assert_null(fm_oct_raw_read(path, NULL, &error));
    g_assert_nonnull(strstr(error->message, "cut12.raw: 5,759 bytes do not hold 2 B-scans"));
}

static void test_unparsed(void)
{
    g_autofree char *path = tmp_path("plain.raw");
    guint8 bytes[12] = {1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0};
    write_file(path, bytes, sizeof bytes);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(fm_dataset_get_meta(ds, FM_OCT_META_UNPARSED), ==, "1");
    g_assert_cmpint(fm_dataset_n_bytes(ds), ==, 12);
    fm_oct_raw_layout layout = {3, 2, 0, FM_OCT_RAW_U16};
    g_autoptr(fm_dataset) decoded = fm_oct_raw_decode_dataset(ds, &layout, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(decoded), ==, 1);
    g_assert_cmpuint(((guint16 *)decoded->data)[5], ==, 6);
}

static void test_bad_sidecar(void)
{
    g_autofree char *path = tmp_path("side.raw");
    g_autofree char *sidecar = tmp_path("side.raw.json");
    write_file(path, "abcd", 4);
    const char *json = "{\"pixels_per_aline\": 2, \"alines_per_bscan\": 1, \"format\": \"u10\"}";
    write_file(sidecar, json, strlen(json));
    g_autoptr(GError) error = NULL;
    g_assert_null(fm_dataset_open(path, NULL, NULL, NULL, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "u10"));
}

static void test_calibration(void)
{
    g_autofree char *path = tmp_path("cal.csv");
    const char *good = "lambda_nm\n800\n810.5\n# comment\n\n821\n830\n";
    write_file(path, good, strlen(good));
    g_autoptr(GError) error = NULL;
    g_autofree double *lambda = fm_oct_calib_read_csv(path, 4, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(lambda[1], ==, 810.5);
    g_assert_cmpfloat(lambda[3], ==, 830.0);

    g_assert_null(fm_oct_calib_read_csv(path, 5, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "holds 4 wavelengths but the spectra have 5 pixels"));
    g_clear_error(&error);

    const char *zigzag = "800\n810\n805\n820\n";
    write_file(path, zigzag, strlen(zigzag));
    g_assert_null(fm_oct_calib_read_csv(path, 4, &error));
    g_assert_nonnull(strstr(error->message, "not strictly monotonic: pixel 2 is 805 nm"));
    g_clear_error(&error);

    const char *text = "800\nabc\n";
    write_file(path, text, strlen(text));
    g_assert_null(fm_oct_calib_read_csv(path, 2, &error));
    g_assert_nonnull(strstr(error->message, "line 2"));
    g_clear_error(&error);

    /* lambda(n) = 900 - 0.1 n + 1e-5 n^2: decreasing is fine */
    g_autofree double *poly = fm_oct_calib_from_polynomial("900, -0.1, 1e-5", 2048, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(poly[1000], 900.0 - 100.0 + 10.0, 1e-9);
    g_assert_null(fm_oct_calib_from_polynomial("800,1,-0.01", 2048, &error)); /* turns back */
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_clear_error(&error);
    g_assert_null(fm_oct_calib_from_polynomial("800,x", 16, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_clear_error(&error);

    /* dz = pi / (N dk): 770..910 nm over 2048 pixels gives 2.5013 um, worked out by hand:
     * dk = (2 pi/0.770 - 2 pi/0.910) / 2047 = 6.1330e-4 rad/um. */
    fm_oct_sim_params p;
    fm_oct_sim_defaults(&p);
    g_autofree double *sim_lambda = g_new(double, 2048);
    fm_oct_sim_wavelengths(&p, sim_lambda);
    double dk = (2 * G_PI / 0.770 - 2 * G_PI / 0.910) / 2047.0;
    g_assert_cmpfloat_with_epsilon(fm_oct_calib_um_per_bin(sim_lambda, 2048), G_PI / (2048 * dk),
                                   1e-9);
    g_assert_cmpfloat_with_epsilon(G_PI / (2048 * dk), 2.5013, 1e-3);
}

static void test_background(void)
{
    g_autoptr(fm_dataset) ds = spectra(8, 3, 2, 1000);
    g_autofree float *b1 = fm_oct_background_mean(ds, 1);
    g_autofree float *all = fm_oct_background_mean(ds, -1);
    const guint16 *v = ds->data;
    for (int p = 0; p < 8; p++) {
        double s1 = 0, sa = 0;
        for (int a = 0; a < 3; a++) {
            s1 += v[(3 + a) * 8 + p];
            sa += v[a * 8 + p] + v[(3 + a) * 8 + p];
        }
        g_assert_cmpfloat_with_epsilon(b1[p], s1 / 3, 1e-3);
        g_assert_cmpfloat_with_epsilon(all[p], sa / 6, 1e-3);
    }
    /* a reference file with its sidecar, and one of the wrong width */
    g_autofree char *path = tmp_path("ref.raw");
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_oct_raw_write(path, ds, FM_OCT_RAW_U16, NULL, &error));
    g_autofree float *ref = fm_oct_background_from_file(path, 8, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat_with_epsilon(ref[3], all[3], 1e-3);
    g_assert_null(fm_oct_background_from_file(path, 16, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
}

static void test_tiff(void)
{
    g_autoptr(fm_dataset) ds = spectra(32, 4, 3, 4095);
    g_autofree char *path = tmp_path("spectra.tif");
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_tiff_write_dataset(path, ds, "oct", &error));
    g_autoptr(fm_dataset) back = fm_oct_tiff_read(path, &error);
    g_assert_no_error(error);
    g_assert_true(fm_oct_dataset_is_spectra(back));
    g_assert_cmpint(fm_dataset_frames(back), ==, 3);
    g_assert_cmpmem(back->data, fm_dataset_n_bytes(back), ds->data, fm_dataset_n_bytes(ds));
}

/* Noise-free reference arm: counts = round(P S(lambda) + pattern), with S the Gaussian at the
 * centre pixel nearest 840 nm equal to 1; the pattern averages 100 counts (ripple and frozen
 * offsets have zero mean), so the mean over pixels far from the source is about 100. */
static void test_simulator(void)
{
    fm_oct_sim_params p;
    fm_oct_sim_defaults(&p);
    p.shot_noise = FALSE;
    p.alines_per_bscan = 4;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ref = fm_oct_simulate_reference(&p, 2, &error);
    g_assert_no_error(error);
    const guint16 *v = ref->data;
    /* pixel of 840 nm: (840 - 770) / 140 * 2047 = 1023.5; the pattern there is within 100 +- 45 */
    g_assert_cmpfloat(fabs(v[1023] - (p.peak_counts + 100.0)), <, 45.0);
    double edge = 0;
    for (int i = 0; i < 64; i++)
        edge += v[i];
    g_assert_cmpfloat(fabs(edge / 64 - 100.0 - p.peak_counts * 1.2e-3), <, 5.0);
    /* same seed, same spectra; another seed, others */
    p.sample = FM_OCT_SIM_MIRROR;
    p.shot_noise = TRUE;
    g_autoptr(fm_dataset) a = fm_oct_simulate(&p, &error);
    g_autoptr(fm_dataset) b = fm_oct_simulate(&p, &error);
    g_assert_cmpmem(a->data, fm_dataset_n_bytes(a), b->data, fm_dataset_n_bytes(b));
    p.seed++;
    g_autoptr(fm_dataset) c = fm_oct_simulate(&p, &error);
    g_assert_true(memcmp(a->data, c->data, fm_dataset_n_bytes(a)) != 0);
    /* 12-bit camera: nothing above 4095 */
    for (gsize i = 0; i < fm_dataset_n_elements(a); i++)
        g_assert_cmpuint(((guint16 *)a->data)[i], <=, 4095);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fluxmap-oct-io-XXXXXX", NULL);
    g_test_add_func("/oct-io/u12-bit-order", test_u12_bit_order);
    g_test_add_func("/oct-io/round-trips", test_round_trips);
    g_test_add_func("/oct-io/size-errors", test_size_errors);
    g_test_add_func("/oct-io/parallel-decode", test_parallel_decode);
    g_test_add_func("/oct-io/truncated-file", test_truncated_file);
    g_test_add_func("/oct-io/unparsed", test_unparsed);
    g_test_add_func("/oct-io/bad-sidecar", test_bad_sidecar);
    g_test_add_func("/oct-io/calibration", test_calibration);
    g_test_add_func("/oct-io/background", test_background);
    g_test_add_func("/oct-io/tiff", test_tiff);
    g_test_add_func("/oct-io/simulator", test_simulator);
    int rc = g_test_run();
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp_dir);
    (void)!system(cmd);
    return rc;
}
