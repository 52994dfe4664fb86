/* fluxmap-cli info ($FLUXMAP_CLI): what the readers found in files our writers made with known
 * content (format, dims, units, pixel type, bin width, repetition rate, frame times, wavelength
 * range, pixel_sum computed here from the values written); SD-OCT raw spectra by content under
 * any name, with a layout or a sidecar; sizes that do not fit a layout; usage and input errors. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/io/flim_write.h"
#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "app/core/io/sdt_write.h"
#include "tests/cli/cli-test-util.h"
#include "tests/cli/reader-fixtures.h"

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(cli_result, cli_result_clear)

static GPtrArray *fixtures;

/* Runs `info` with the fixture's layout options (if any) and extra arguments. */
static cli_result run_info(const reader_fixture *f, gboolean json)
{
    g_autofree char *p =
        f->pixels_per_aline ? g_strdup_printf("--pixels_per_aline=%d", f->pixels_per_aline) : NULL;
    g_autofree char *a =
        f->alines_per_bscan ? g_strdup_printf("--alines_per_bscan=%d", f->alines_per_bscan) : NULL;
    g_autofree char *r = f->raw_format ? g_strdup_printf("--raw_format=%s", f->raw_format) : NULL;
    const char *json_flag = json ? "--json" : NULL;
    if (p)
        return cli_test_run(NULL, NULL, "info", f->path, p, a, r, json_flag, NULL);
    return cli_test_run(NULL, NULL, "info", f->path, json_flag, NULL);
}

static void assert_close(double got, double want, double tolerance, const char *what,
                         const char *label)
{
    if (!(fabs(got - want) <= tolerance))
        g_printerr("%s: %s is %.17g, expected %.17g (tolerance %g)\n", label, what, got, want,
                   tolerance);
    g_assert_cmpfloat(fabs(got - want), <=, tolerance);
}

static void check_json(const reader_fixture *f, JsonObject *o)
{
    g_assert_cmpstr(json_object_get_string_member(o, "format"), ==, f->format);
    if (f->variant)
        g_assert_cmpstr(json_object_get_string_member(o, "format_variant"), ==, f->variant);
    if (!f->pixel_type) { /* .mci: the runs, no samples */
        g_assert_cmpint(json_array_get_length(json_object_get_array_member(o, "runs")), >=, 1);
        return;
    }
    g_assert_cmpstr(json_object_get_string_member(o, "pixel_type"), ==, f->pixel_type);
    g_assert_cmpint(json_object_get_int_member(o, "bits_per_sample"), ==, f->bits_per_sample);
    JsonArray *dims = json_object_get_array_member(o, "dims");
    g_assert_cmpint(json_array_get_length(dims), ==, f->n_dims);
    for (int d = 0; d < f->n_dims; d++) {
        JsonObject *dim = json_array_get_object_element(dims, d);
        g_assert_cmpint(json_object_get_int_member(dim, "size"), ==, (gint64)f->sizes[d]);
        if (f->units[d])
            g_assert_cmpstr(json_object_get_string_member(dim, "unit"), ==, f->units[d]);
    }
    assert_close(json_object_get_double_member(o, "pixel_sum"), f->pixel_sum, f->sum_tolerance,
                 "pixel_sum", f->label);
    /* .sdt keeps the bin width and sync rate in float32 fields: 1e-6 relative */
    if (!isnan(f->bin_width_ps)) {
        assert_close(json_object_get_double_member(o, "bin_width_ps"), f->bin_width_ps,
                     1e-6 * f->bin_width_ps, "bin_width_ps", f->label);
        assert_close(json_object_get_double_member(o, "rep_rate_mhz"), f->rep_rate_mhz,
                     1e-6 * f->rep_rate_mhz, "rep_rate_mhz", f->label);
    } else {
        g_assert_false(json_object_has_member(o, "bin_width_ps"));
    }
    if (f->n_times) {
        JsonArray *times = json_object_get_array_member(o, "times_s");
        g_assert_cmpint(json_array_get_length(times), ==, f->n_times);
        for (int t = 0; t < f->n_times; t++)
            assert_close(json_array_get_double_element(times, t), f->times_s[t], 1e-6, "times_s",
                         f->label);
    } else {
        g_assert_false(json_object_has_member(o, "times_s"));
    }
    if (!isnan(f->lambda_nm[0])) {
        JsonArray *range = json_object_get_array_member(o, "wavelength_range_nm");
        g_assert_cmpint(json_array_get_length(range), ==, 2);
        assert_close(json_array_get_double_element(range, 0), f->lambda_nm[0], 1e-9,
                     "wavelength min", f->label);
        assert_close(json_array_get_double_element(range, 1), f->lambda_nm[1], 1e-9,
                     "wavelength max", f->label);
    } else {
        g_assert_false(json_object_has_member(o, "wavelength_range_nm"));
    }
    /* every metadata key the reader set is shown */
    g_assert_cmpstr(
        json_object_get_string_member(json_object_get_object_member(o, "metadata"), "format"), ==,
        f->format);
}

static void test_fixture_json(gconstpointer data)
{
    const reader_fixture *f = data;
    g_auto(cli_result) r = run_info(f, TRUE);
    if (r.status != 0)
        g_printerr("%s: exit %d: %s\n", f->label, r.status, r.err);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &parser);
    check_json(f, o);
}

static const reader_fixture *find_fixture(const char *label)
{
    for (guint i = 0; i < fixtures->len; i++) {
        const reader_fixture *f = fixtures->pdata[i];
        if (strcmp(f->label, label) == 0)
            return f;
    }
    g_assert_not_reached();
}

/* The text form says the same: format with variant, the bin width, the sum to full precision. */
static void test_text(void)
{
    const reader_fixture *f = find_fixture("ptu-picoharp");
    g_auto(cli_result) r = run_info(f, FALSE);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "format: PicoQuant PTU, PicoHarp T3\n"));
    g_assert_nonnull(strstr(r.out, "bin width: 200 ps\n"));
    g_assert_nonnull(strstr(r.out, "repetition rate: 78.125 MHz\n"));
    g_autofree char *sum = g_strdup_printf("pixel sum: %.17g\n", f->pixel_sum);
    g_assert_nonnull(strstr(r.out, sum));
    const reader_fixture *oct = find_fixture("oct-u12-sidecar");
    g_auto(cli_result) o = run_info(oct, FALSE);
    g_assert_cmpint(o.status, ==, 0);
    g_assert_nonnull(strstr(o.out, "format: OCT raw u12packed\n"));
    g_assert_nonnull(strstr(o.out, "wavelengths: 801.25 to 880 nm\n"));
}

/* Raw spectra without a sidecar or layout: a raw-looking name opens undecoded (the method's
 * layout parameters decode it); any other name is an unknown format whose message says how to
 * open it (exit 3). With the layout, `run oct.bscan` takes any name. */
static void test_oct_names(void)
{
    const reader_fixture *u16 = find_fixture("oct-u16-layout");
    g_auto(cli_result) r = cli_test_run(NULL, NULL, "info", "--json", u16->path, NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &parser);
    g_assert_cmpstr(json_object_get_string_member(o, "format"), ==, "oct_raw");
    g_assert_cmpstr(json_object_get_string_member(o, "format_variant"), ==, "layout not given");

    const reader_fixture *odd = find_fixture("oct-u12-odd-name");
    g_auto(cli_result) u = cli_test_run(NULL, NULL, "info", odd->path, NULL);
    g_assert_cmpint(u.status, ==, 3);
    g_assert_nonnull(strstr(u.err, "scan.spectra: unknown file format"));
    g_assert_nonnull(strstr(u.err, "layout given or a <file>.json sidecar"));

    g_autofree char *out = cli_test_tmp_path("oct-out");
    g_autofree char *env = g_strdup_printf("FLUXMAP_DATA_DIR=%s/catalogue", tmp_dir);
    char *envp[] = {env, NULL};
    g_auto(cli_result) run = cli_test_run(
        NULL, envp, "run", "oct.bscan", "--backend=cpu", "--pixels_per_aline=256",
        "--alines_per_bscan=10", "--raw_format=u12packed", "--lambda_polynomial_nm=800,0.5",
        "--no-catalogue", odd->path, "-o", out, NULL);
    if (run.status != 0)
        g_printerr("run: %s\n", run.err);
    g_assert_cmpint(run.status, ==, 0);
    g_autofree char *bscan = g_build_filename(out, "bscan_db.tif", NULL);
    g_assert_true(g_file_test(bscan, G_FILE_TEST_EXISTS));
}

static char *write_zeros(const char *name, gsize n_bytes)
{
    char *path = cli_test_tmp_path(name);
    g_autofree char *zeros = g_malloc0(n_bytes);
    g_assert_true(g_file_set_contents(path, zeros, (gssize)n_bytes, NULL));
    return path;
}

/* A size that does not fit the layout: exit 3, the numbers, and the layouts that would fit. */
static void test_size_mismatch(void)
{
    g_autofree char *dat = write_zeros("spectra.dat", 8192000);
    g_autofree char *sidecar = g_strconcat(dat, ".json", NULL);
    g_assert_true(g_file_set_contents(sidecar,
                                      "{\"pixels_per_aline\": 2048, \"alines_per_bscan\": 400, "
                                      "\"bscans\": 8, \"format\": \"u12packed\"}",
                                      -1, NULL));
    const char *expected = "spectra.dat: 8,192,000 bytes do not hold 8 B-scans of 400 A-lines of "
                           "2048 u12packed pixels (9,830,400 bytes); 2048 pixels u16 would fit 5 "
                           "B-scans of 400 A-lines; 2048 pixels u8 would fit 10 B-scans of 400 "
                           "A-lines\n";
    g_auto(cli_result) r = cli_test_run(NULL, NULL, "info", dat, NULL);
    g_assert_cmpint(r.status, ==, 3);
    if (!strstr(r.err, expected))
        g_printerr("stderr: %s", r.err);
    g_assert_nonnull(strstr(r.err, expected));
    g_assert_cmpint(g_unlink(sidecar), ==, 0);

    /* the same layout given as options */
    g_auto(cli_result) o =
        cli_test_run(NULL, NULL, "info", dat, "--pixels_per_aline=2048", "--alines_per_bscan=400",
                     "--raw_format=u12packed", "--bscans=8", NULL);
    g_assert_cmpint(o.status, ==, 3);
    g_assert_nonnull(strstr(o.err, expected));

    /* as many B-scans as fit, but not a whole number of them: another A-line count fits */
    g_autofree char *u16 = write_zeros("cut.u16", 2048 * 2 * 399);
    g_auto(cli_result) c = cli_test_run(NULL, NULL, "info", u16, "--pixels_per_aline=2048",
                                        "--alines_per_bscan=400", "--raw_format=u16", NULL);
    g_assert_cmpint(c.status, ==, 3);
    g_assert_nonnull(strstr(c.err, "cut.u16: 1,634,304 bytes do not hold whole B-scans of 400 "
                                   "A-lines of 2048 u16 pixels (1,638,400 bytes each); "));
    g_assert_nonnull(strstr(c.err, "it holds 399 A-lines of 2048 pixels u16, not a multiple of "
                                   "400"));

    /* nothing near fits: said so */
    g_autofree char *odd = write_zeros("odd.bin", 1000003);
    g_auto(cli_result) n = cli_test_run(NULL, NULL, "info", odd, "--pixels_per_aline=2048",
                                        "--alines_per_bscan=400", NULL);
    g_assert_cmpint(n.status, ==, 3);
    g_assert_nonnull(strstr(n.err, "odd.bin: 1,000,003 bytes do not hold whole B-scans"));
    g_assert_nonnull(
        strstr(n.err, "no layout of 2048 pixels or 400 A-lines per B-scan in u16, u12packed or "
                      "u8 fits"));

    /* run oct.bscan with its layout parameters says the same */
    g_autofree char *out = cli_test_tmp_path("mismatch-out");
    g_auto(cli_result) run =
        cli_test_run(NULL, NULL, "run", "oct.bscan", "--no-catalogue", "--backend=cpu",
                     "--pixels_per_aline=2048", "--alines_per_bscan=400", "--raw_format=u12packed",
                     dat, "-o", out, NULL);
    g_assert_cmpint(run.status, ==, 3);
    g_assert_nonnull(strstr(run.err, "2048 pixels u16 would fit 5 B-scans of 400 A-lines"));
}

static JsonObject *info_json(const char *path, JsonParser **parser, int *status)
{
    g_auto(cli_result) r = cli_test_run(NULL, NULL, "info", "--json", path, NULL);
    *status = r.status;
    if (r.status != 0) {
        g_test_message("%s: exit %d: %s", path, r.status, r.err);
        return NULL;
    }
    return cli_test_parse_object(r.out, parser);
}

/* The real instrument files in shared/refdata, with what their authors' software says of them
 * (../shared/refdata/flim-real/README.md). */
static void test_real_ptu(void)
{
    g_autofree char *ptu =
        g_build_filename(FM_REFDATA_DIR, "flim-real", "Example_PTU_PicoHarp.ptu", NULL);
    if (!g_file_test(ptu, G_FILE_TEST_EXISTS)) {
        g_test_skip("no shared/refdata/flim-real/Example_PTU_PicoHarp.ptu");
        return;
    }
    g_autoptr(JsonParser) parser = NULL;
    int status = 0;
    JsonObject *o = info_json(ptu, &parser, &status);
    g_assert_cmpint(status, ==, 0);
    g_assert_cmpstr(json_object_get_string_member(o, "format_variant"), ==, "PicoHarp T3");
    JsonArray *dims = json_object_get_array_member(o, "dims");
    g_assert_cmpint(json_object_get_int_member(json_array_get_object_element(dims, 0), "size"), ==,
                    256);
    g_assert_cmpint(json_object_get_int_member(json_array_get_object_element(dims, 1), "size"), ==,
                    256);
    /* 722,402 photon records, every one inside the image */
    g_assert_cmpfloat(json_object_get_double_member(o, "pixel_sum"), ==, 722402);
    assert_close(json_object_get_double_member(o, "rep_rate_mhz"), 78.02, 0.005, "rate", "ptu");
    assert_close(json_object_get_double_member(o, "bin_width_ps"), 96.97, 0.005, "bin", "ptu");
}

static void test_real_sdt(void)
{
    g_autofree char *zip = g_build_filename(FM_REFDATA_DIR, "flim-real", "tcspc.sdt.zip", NULL);
    if (!g_file_test(zip, G_FILE_TEST_EXISTS)) {
        g_test_skip("no shared/refdata/flim-real/tcspc.sdt.zip");
        return;
    }
    g_autofree char *sdt = cli_test_tmp_path("tcspc.sdt");
    g_assert_true(reader_fixture_unzip(zip, sdt));
    g_autoptr(JsonParser) parser = NULL;
    int status = 0;
    JsonObject *o = info_json(sdt, &parser, &status);
    g_assert_cmpint(status, ==, 0);
    JsonArray *dims = json_object_get_array_member(o, "dims");
    static const gint64 sizes[] = {128, 128, 256};
    for (int d = 0; d < 3; d++)
        g_assert_cmpint(json_object_get_int_member(json_array_get_object_element(dims, d), "size"),
                        ==, sizes[d]);
    g_assert_cmpfloat(json_object_get_double_member(o, "pixel_sum"), ==, 224606420);
    assert_close(json_object_get_double_member(o, "rep_rate_mhz"), 80, 1e-3, "rate", "tcspc");
    /* 0 to 12.451172 ns over 256 bins */
    assert_close(json_object_get_double_member(o, "bin_width_ps"), 12451.172 / 255, 0.01, "bin",
                 "tcspc");
}

/* A name that says another format keeps it even with a "<file>.json" beside it (NIfTI's sidecar
 * may be named so): the reader of that format says what is wrong. */
static void test_name_wins_over_sidecar(void)
{
    g_autofree char *nii = write_zeros("damaged.nii", 400);
    g_autofree char *sidecar = g_strconcat(nii, ".json", NULL);
    g_assert_true(g_file_set_contents(sidecar, "{\"FrameTimes\": [0]}", -1, NULL));
    g_auto(cli_result) r = cli_test_run(NULL, NULL, "info", nii, NULL);
    g_assert_cmpint(r.status, ==, 3);
    if (!strstr(r.err, "damaged.nii: not a NIfTI"))
        g_printerr("stderr: %s", r.err);
    g_assert_nonnull(strstr(r.err, "damaged.nii: not a NIfTI"));
}

static void expect_exit(int code, const char *needle, ...)
{
    va_list ap;
    va_start(ap, needle);
    const char *first = va_arg(ap, const char *);
    g_auto(cli_result) r = cli_test_runv(NULL, NULL, first, ap);
    va_end(ap);
    if (r.status != code || !strstr(r.err, needle))
        g_printerr("exit %d, stderr: %s\n", r.status, r.err);
    g_assert_cmpint(r.status, ==, code);
    g_assert_nonnull(strstr(r.err, needle));
}

/* pixel_sum of `info --json [option value] path` (exit 0 asserted). */
static double part_sum(const char *path, const char *option, const char *value)
{
    g_auto(cli_result) r = option ? cli_test_run(NULL, NULL, "info", "--json", option, value, path,
                                                 NULL)
                                  : cli_test_run(NULL, NULL, "info", "--json", path, NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &parser);
    return json_object_get_double_member(o, "pixel_sum");
}

/* A small x, y, t count cube: (x + 2 y + t) % 5 * scale. */
static fm_dataset *cube(int scale, double *pixel_counts)
{
    gsize sizes[3] = {4, 3, 16};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, (const char *const[]){"x", "y", "t"});
    guint16 *c = ds->data;
    for (int t = 0; t < 16; t++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) {
                c[(t * 3 + y) * 4 + x] = (guint16)((x + 2 * y + t) % 5 * scale);
                if (pixel_counts)
                    pixel_counts[y * 4 + x] += c[(t * 3 + y) * 4 + x];
            }
    return ds;
}

/* Files that hold several datasets: --block picks an .sdt dataset, --channel a .ptu detector
 * channel (the writer sends photon k of a pixel to channel 1 + k % 2, so channel 1 holds
 * ceil(n / 2) of a pixel's n photons), each only on its own format; fm_dataset_parts lists
 * them for the GUI's choice. */
static void test_parts(void)
{
    g_autofree char *dir = cli_test_tmp_path("parts");
    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    double counts[12] = {0}, sum_a = 0, sum_b = 0, ch1 = 0, ch2 = 0;
    g_autoptr(fm_dataset) a = cube(1, counts);
    g_autoptr(fm_dataset) b = cube(3, NULL);
    for (int p = 0; p < 12; p++) {
        sum_a += counts[p];
        sum_b += 3 * counts[p];
        ch1 += ceil(counts[p] / 2);
        ch2 += floor(counts[p] / 2);
    }
    g_autofree char *sdt = g_build_filename(dir, "two.sdt", NULL);
    const fm_dataset *pair[] = {a, b};
    fm_sdt_write_options so = {.datasets = pair, .n_datasets = 2, .channels = 2,
                               .bin_width_ps = 100, .compress = TRUE};
    g_assert_true(fm_sdt_write_ex(sdt, &so, NULL));
    g_autofree char *ptu = g_build_filename(dir, "two.ptu", NULL);
    fm_ptu_write_options po = {.channels = 2};
    g_assert_true(fm_ptu_write(ptu, a, 100, &po, NULL));

    g_assert_cmpfloat(part_sum(sdt, NULL, NULL), ==, sum_a);
    g_assert_cmpfloat(part_sum(sdt, "--block", "1"), ==, sum_a);
    g_assert_cmpfloat(part_sum(sdt, "--block", "2"), ==, sum_b);
    g_assert_cmpfloat(part_sum(ptu, NULL, NULL), ==, sum_a);
    g_assert_cmpfloat(part_sum(ptu, "--channel", "1"), ==, ch1);
    g_assert_cmpfloat(part_sum(ptu, "--channel", "2"), ==, ch2);
    struct {
        const char *path, *option, *value;
        int status;
    } bad[] = {{sdt, "--channel", "1", 2}, {ptu, "--block", "1", 2}, {sdt, "--block", "0", 2},
               {sdt, "--block", "3", 3},   {ptu, "--channel", "3", 3}};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_auto(cli_result) r =
            cli_test_run(NULL, NULL, "info", bad[i].option, bad[i].value, bad[i].path, NULL);
        g_test_message("%s %s %s: exit %d: %s", bad[i].option, bad[i].value, bad[i].path, r.status,
                       r.err);
        g_assert_cmpint(r.status, ==, bad[i].status);
    }

    /* the GUI's choice */
    int current = -1;
    g_autoptr(fm_dataset) second = fm_dataset_open_part(sdt, 2, NULL, NULL, NULL, NULL, NULL);
    g_assert_nonnull(second);
    g_autoptr(GArray) sdt_parts = fm_dataset_parts(second, &current);
    g_assert_cmpuint(sdt_parts->len, ==, 2);
    g_assert_cmpint(current, ==, 1);
    g_assert_cmpint(g_array_index(sdt_parts, fm_dataset_part, 1).part, ==, 2);
    g_autoptr(fm_dataset) all = fm_dataset_open_part(ptu, 0, NULL, NULL, NULL, NULL, NULL);
    g_autoptr(GArray) ptu_parts = fm_dataset_parts(all, &current);
    g_assert_cmpuint(ptu_parts->len, ==, 3); /* all, 1, 2 */
    g_assert_cmpint(current, ==, 0);
    g_assert_cmpint(g_array_index(ptu_parts, fm_dataset_part, 2).part, ==, 2);
    g_autoptr(fm_dataset) one = fm_dataset_open_part(ptu, 1, NULL, NULL, NULL, NULL, NULL);
    g_autoptr(GArray) one_parts = fm_dataset_parts(one, &current);
    g_assert_cmpint(current, ==, 1);
    g_autoptr(GError) error = NULL;
    g_autofree char *tif = g_build_filename(dir, "one.tif", NULL);
    g_assert_true(fm_tiff_write_dataset(tif, a, NULL, NULL));
    g_assert_null(fm_dataset_open_part(tif, 1, NULL, NULL, NULL, NULL, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
}

static void test_errors(void)
{
    expect_exit(2, "info: missing FILE", "info", NULL);
    expect_exit(2, "info: expected one FILE", "info", "a", "b", NULL);
    expect_exit(2, "info: unknown option", "info", "--frobnicate", "a", NULL);
    const reader_fixture *f = find_fixture("oct-u16-layout");
    expect_exit(2, "--raw_format: 'u10' is not u16, u12packed or u8", "info", f->path,
                "--pixels_per_aline=64", "--alines_per_bscan=10", "--raw_format=u10", NULL);
    expect_exit(2, "needs --pixels_per_aline", "info", f->path, "--alines_per_bscan=10", NULL);
    g_autofree char *missing = cli_test_tmp_path("no-such.sdt");
    expect_exit(3, "no-such.sdt: cannot open", "info", missing, NULL);
    g_autofree char *empty = write_zeros("empty.tif", 0);
    expect_exit(3, "empty.tif", "info", empty, NULL);
    g_autofree char *text = cli_test_tmp_path("notes.txt");
    g_assert_true(g_file_set_contents(text, "not an image\n", -1, NULL));
    expect_exit(3, "notes.txt: unknown file format", "info", text, NULL);
    g_auto(cli_result) h = cli_test_run(NULL, NULL, "info", "--help", NULL);
    g_assert_cmpint(h.status, ==, 0);
    g_assert_nonnull(strstr(h.out, "Usage: fluxmap-cli info FILE"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-info-XXXXXX")) {
        g_print("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    fixtures = reader_fixtures_write(tmp_dir);
    for (guint i = 0; i < fixtures->len; i++) {
        const reader_fixture *f = fixtures->pdata[i];
        g_autofree char *name = g_strdup_printf("/info/json/%s", f->label);
        g_test_add_data_func(name, f, test_fixture_json);
    }
    g_test_add_func("/info/text", test_text);
    g_test_add_func("/info/oct-names", test_oct_names);
    g_test_add_func("/info/size-mismatch", test_size_mismatch);
    g_test_add_func("/info/errors", test_errors);
    g_test_add_func("/info/parts", test_parts);
    g_test_add_func("/info/name-wins-over-sidecar", test_name_wins_over_sidecar);
    g_test_add_func("/info/real/ptu", test_real_ptu);
    g_test_add_func("/info/real/sdt", test_real_sdt);
    int status = g_test_run();
    g_ptr_array_unref(fixtures);
    return cli_test_finish(status);
}
