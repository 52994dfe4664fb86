/* fluxmap-cli on Becker & Hickl .sdt files ($FLUXMAP_CLI): phasorpy's real tcspc.sdt runs
 * flim.phasor with exit 0 (it failed with exit 3 before the reader took SPCM's layouts), and
 * --block picks a dataset of a several-block file (exit 3 past the last, 2 on other formats),
 * and a single-decay .sdt serves as irf_file. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/io/sdt_write.h"
#include "tests/cli/cli-test-util.h"

static int run_cli(char **out, char **err, ...)
{
    g_autofree char *envp_data = g_strdup_printf("FLUXMAP_DATA_DIR=%s/catalogue", tmp_dir);
    char *envp[] = {envp_data, NULL};
    va_list ap;
    va_start(ap, err);
    const char *first = va_arg(ap, const char *);
    cli_result r = cli_test_runv(NULL, envp, first, ap);
    va_end(ap);
    *out = r.out;
    *err = r.err;
    return r.status;
}

/* The one member of the refdata ZIP archive, inflated by GIO. */
static gboolean unzip_member(const char *zip_path, const char *out_path)
{
    g_autofree char *zip = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(zip_path, &zip, &len, NULL));
    const guint8 *z = (const guint8 *)zip;
    g_assert_true(len > 30 && memcmp(z, "PK\3\4", 4) == 0);
    gsize data_at = 30 + (gsize)(z[26] | z[27] << 8) + (gsize)(z[28] | z[29] << 8);
    gsize size = z[22] | z[23] << 8 | z[24] << 16 | (gsize)z[25] << 24;
    g_autoptr(GZlibDecompressor) inflater = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_RAW);
    g_autofree guint8 *out = g_malloc(size);
    gsize nr = 0, nw = 0;
    GConverterResult r = g_converter_convert(G_CONVERTER(inflater), z + data_at, len - data_at, out,
                                             size, G_CONVERTER_INPUT_AT_END, &nr, &nw, NULL);
    g_assert_cmpint(r, ==, G_CONVERTER_FINISHED);
    g_assert_cmpuint(nw, ==, size);
    return g_file_set_contents(out_path, (const char *)out, (gssize)size, NULL);
}

static void test_real_tcspc(void)
{
    g_autofree char *zip = g_build_filename(FM_REFDATA_DIR, "flim-real", "tcspc.sdt.zip", NULL);
    if (!g_file_test(zip, G_FILE_TEST_EXISTS)) {
        g_test_skip("no shared/refdata/flim-real/tcspc.sdt.zip beside the repository: the "
                    "real-file run did not happen");
        return;
    }
    g_autofree char *sdt = cli_test_tmp_path("tcspc.sdt"), *out = cli_test_tmp_path("out");
    g_assert_true(unzip_member(zip, sdt));
    g_autofree char *stdout_text = NULL, *stderr_text = NULL;
    int rc = run_cli(&stdout_text, &stderr_text, "run", "flim.phasor", sdt, "-o", out,
                     "--backend=cpu", NULL);
    if (rc != 0)
        g_printerr("exit %d, stderr: %s\n", rc, stderr_text);
    g_assert_cmpint(rc, ==, 0);
    for (const char *const *name = (const char *const[]){"phasor_g.tif", "intensity.tif", NULL};
         *name; name++) {
        g_autofree char *path = g_build_filename(out, *name, NULL);
        g_assert_true(g_file_test(path, G_FILE_TEST_EXISTS));
    }
}

static fm_dataset *make_counts(gsize w, gsize h, gsize bins, guint16 scale)
{
    gsize sizes[3] = {w, h, bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    guint16 *c = ds->data;
    for (gsize i = 0; i < w * h * bins; i++)
        c[i] = (guint16)(scale * (bins - i / (w * h)));
    return ds;
}

static void test_block_option(void)
{
    g_autoptr(fm_dataset) a = make_counts(4, 3, 64, 10);
    g_autoptr(fm_dataset) b = make_counts(5, 2, 32, 20);
    const fm_dataset *sets[2] = {a, b};
    g_autofree char *sdt = cli_test_tmp_path("two.sdt"), *tif = cli_test_tmp_path("two.tif");
    g_autofree char *out = cli_test_tmp_path("out-block");
    fm_sdt_write_options o = {.datasets = sets, .n_datasets = 2, .bin_width_ps = 100.0};
    g_assert_true(fm_sdt_write_ex(sdt, &o, NULL));
    g_autofree char *o1 = NULL, *e1 = NULL, *o2 = NULL, *e2 = NULL, *o3 = NULL, *e3 = NULL;
    g_assert_cmpint(run_cli(&o1, &e1, "run", "flim.phasor", "--block", "2", "--json", sdt, "-o",
                            out, "--backend=cpu", "--min_photons=1", NULL),
                    ==, 0);
    /* block 2 is 5 x 2 pixels (block 1: 4 x 3): the mask map has 10 valid pixels */
    g_autoptr(JsonParser) parser = NULL;
    JsonObject *root = cli_test_parse_object(o1, &parser);
    JsonArray *outputs = json_object_get_array_member(root, "outputs");
    gint64 mask_pixels = -1;
    for (guint i = 0; i < json_array_get_length(outputs); i++) {
        JsonObject *map = json_array_get_object_element(outputs, i);
        if (g_strcmp0(json_object_get_string_member(map, "name"), "mask") == 0)
            mask_pixels = json_object_get_int_member(map, "valid_pixels");
    }
    g_assert_cmpint(mask_pixels, ==, 10);
    g_assert_cmpint(run_cli(&o2, &e2, "run", "flim.phasor", "--block=3", sdt, "-o", out, NULL), ==,
                    3);
    g_assert_nonnull(strstr(e2, "dataset 3 asked for, the file holds 2"));
    g_assert_true(g_file_set_contents(tif, "II*\0\0\0\0\0", 8, NULL));
    g_assert_cmpint(run_cli(&o3, &e3, "run", "flim.phasor", "--block=1", tif, "-o", out, NULL), ==,
                    2);
    g_assert_nonnull(strstr(e3, "--block applies to Becker & Hickl .sdt files only"));
}

/* An IRF as SPCM saves it (one decay) as irf_file of a fit on a two-block file's second block. */
static void test_irf_sdt(void)
{
    gsize one[3] = {1, 1, 32};
    g_autoptr(fm_dataset) irf = fm_dataset_new(FM_PIXEL_U16, 3, one, NULL);
    guint16 *c = irf->data;
    for (int t = 0; t < 32; t++)
        c[t] = (guint16)(5000.0 * exp(-0.5 * (t - 3) * (t - 3)) + 0.5);
    g_autoptr(fm_dataset) a = make_counts(4, 3, 64, 10);
    g_autoptr(fm_dataset) b = make_counts(5, 2, 32, 20);
    const fm_dataset *sets[2] = {a, b}, *irf_set[1] = {irf};
    g_autofree char *sdt = cli_test_tmp_path("fit.sdt"), *irf_path = cli_test_tmp_path("irf.sdt");
    g_autofree char *out = cli_test_tmp_path("out-irf");
    fm_sdt_write_options o = {.datasets = sets, .n_datasets = 2, .bin_width_ps = 100.0};
    fm_sdt_write_options oi = {.datasets = irf_set, .n_datasets = 1, .bin_width_ps = 100.0};
    g_assert_true(fm_sdt_write_ex(sdt, &o, NULL));
    g_assert_true(fm_sdt_write_ex(irf_path, &oi, NULL));
    g_autofree char *irf_opt = g_strconcat("--irf_file=", irf_path, NULL);
    g_autofree char *o1 = NULL, *e1 = NULL;
    int rc = run_cli(&o1, &e1, "run", "flim.lsm", irf_opt, "--block=2", "--min_photons=1", sdt,
                     "-o", out, "--backend=cpu", NULL);
    if (rc != 0)
        g_printerr("exit %d, stderr: %s\n", rc, e1);
    g_assert_cmpint(rc, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-sdt-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_test_add_func("/cli/sdt/real-tcspc", test_real_tcspc);
    g_test_add_func("/cli/sdt/block-option", test_block_option);
    g_test_add_func("/cli/sdt/irf-sdt", test_irf_sdt);
    return cli_test_finish(g_test_run());
}
