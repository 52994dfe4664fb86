/* fluxmap-cli for SD-OCT ($FLUXMAP_CLI): simulate oct, run oct.bscan, and the exit codes of bad
 * input (2 parameters, 3 files) with messages that name the problem. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/cli/cli-test-util.h"

/* Runs the CLI with NULL-terminated arguments in an environment of FLUXMAP_DATA_DIR alone;
 * returns the exit status, stderr in *err. */
static int run_cli(char **err, ...)
{
    g_autofree char *envp_data = g_strdup_printf("FLUXMAP_DATA_DIR=%s/catalogue", tmp_dir);
    char *envp[] = {envp_data, NULL};
    va_list ap;
    va_start(ap, err);
    const char *first = va_arg(ap, const char *);
    cli_result r = cli_test_runv(NULL, envp, first, ap);
    va_end(ap);
    g_free(r.out);
    *err = r.err;
    return r.status;
}

static void test_simulate_and_run(void)
{
    g_autofree char *raw = cli_test_tmp_path("m.raw"), *out = cli_test_tmp_path("out"),
                    *ref = cli_test_tmp_path("m.reference.raw");
    g_autofree char *err = NULL, *err2 = NULL;
    g_assert_cmpint(
        run_cli(&err, "simulate", "oct", "--sample=mirror", "--alines=8", "-o", raw, NULL), ==, 0);
    g_autofree char *sidecar = cli_test_tmp_path("m.raw.json"),
                    *calib = cli_test_tmp_path("m.calib.csv");
    g_autofree char *truth = cli_test_tmp_path("m.truth.json");
    g_assert_true(g_file_test(sidecar, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(calib, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(truth, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(ref, G_FILE_TEST_EXISTS));
    g_autofree char *ref_opt = g_strconcat("--reference_file=", ref, NULL);
    g_assert_cmpint(run_cli(&err2, "run", "oct.bscan", "--background=reference", ref_opt,
                            "--backend=cpu", raw, "-o", out, NULL),
                    ==, 0);
    g_autofree char *bscan = g_build_filename(out, "bscan_db.tif", NULL);
    g_autofree char *enface = g_build_filename(out, "enface.tif", NULL);
    g_assert_true(g_file_test(bscan, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(enface, G_FILE_TEST_EXISTS));
}

static void expect(int code, const char *needle, const char *a1, const char *a2, const char *a3,
                   const char *a4)
{
    g_autofree char *err = NULL;
    g_autofree char *out = cli_test_tmp_path("bad-out");
    int rc = run_cli(&err, "run", "oct.bscan", "--backend=cpu", a1, a2, a3, a4, "-o", out, NULL);
    if (rc != code || !strstr(err, needle))
        g_printerr("exit %d, stderr: %s\n", rc, err);
    g_assert_cmpint(rc, ==, code);
    g_assert_nonnull(strstr(err, needle));
}

static void test_bad_input(void)
{
    g_autofree char *raw = cli_test_tmp_path("m.raw");
    g_autofree char *odd = cli_test_tmp_path("odd.bin");
    g_autofree guint8 *bytes = g_malloc0(5000);
    g_assert_true(g_file_set_contents(odd, (char *)bytes, 5000, NULL));
    /* file size not a multiple of the A-line: input, exit 3 */
    expect(3, "5,000 bytes do not hold whole B-scans of 1 A-line of 2048 u16 pixels",
           "--pixels_per_aline=2048", "--alines_per_bscan=1", "--lambda_polynomial_nm=800,0.05",
           odd);
    /* calibration length != pixels per A-line, and non-monotonic wavelengths: exit 3 */
    g_autofree char *short_csv = cli_test_tmp_path("short.csv");
    g_assert_true(g_file_set_contents(short_csv, "800\n801\n802\n", -1, NULL));
    g_autofree char *opt = g_strconcat("--calibration_file=", short_csv, NULL);
    expect(3, "holds 3 wavelengths but the spectra have 2048", opt, "--window=none", "--taps=21",
           raw);
    g_autoptr(GString) zigzag = g_string_new(NULL);
    for (int i = 0; i < 2048; i++)
        g_string_append_printf(zigzag, "%d\n", i == 5 ? 800 : 800 + i);
    g_autofree char *zz = cli_test_tmp_path("zigzag.csv");
    g_assert_true(g_file_set_contents(zz, zigzag->str, -1, NULL));
    g_autofree char *zopt = g_strconcat("--calibration_file=", zz, NULL);
    expect(3, "not strictly monotonic", zopt, "--window=none", "--taps=21", raw);
    /* TDI cutoff L even or below 3: parameters, exit 2 */
    expect(2, "taps", "--taps=20", "--window=none", "--resample=tdi", raw);
    expect(2, "taps", "--taps=1", "--window=none", "--resample=tdi", raw);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-oct-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_test_add_func("/cli-oct/simulate-and-run", test_simulate_and_run);
    g_test_add_func("/cli-oct/bad-input", test_bad_input);
    return cli_test_finish(g_test_run());
}
