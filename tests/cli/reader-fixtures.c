/* Writes one small file of every format Fluxmap reads, with the project's writers and values the
 * test knows, and records what a reader must find in each. */
#include "tests/cli/reader-fixtures.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>

#include "app/core/dataset.h"
#include "app/core/io/dicom.h"
#include "app/core/io/flim_write.h"
#include "app/core/io/sdt_write.h"
#include "app/core/io/mci.h"
#include "app/core/io/nifti.h"
#include "app/core/io/oct_raw.h"
#include "app/core/io/ptu.h"
#include "app/core/io/tiff.h"
#include "app/core/oct/oct_calib.h"

void reader_fixture_free(reader_fixture *f)
{
    g_free(f->path);
    g_free(f->label);
    g_free(f);
}

static reader_fixture *fixture_new(const char *dir, const char *label, const char *file_name)
{
    reader_fixture *f = g_new0(reader_fixture, 1);
    f->label = g_strdup(label);
    g_autofree char *sub = g_build_filename(dir, label, NULL);
    g_assert_cmpint(g_mkdir_with_parents(sub, 0755), ==, 0);
    f->path = g_build_filename(sub, file_name, NULL);
    f->bin_width_ps = f->rep_rate_mhz = NAN;
    f->lambda_nm[0] = f->lambda_nm[1] = NAN;
    return f;
}

static void set_dims(reader_fixture *f, int n, const gsize *sizes, const char *const *units)
{
    f->n_dims = n;
    for (int i = 0; i < n; i++) {
        f->sizes[i] = sizes[i];
        f->units[i] = units[i];
    }
}

/* Photon counts x, y, t with a decay and fixed-seed noise; *sum gets their total. */
static fm_dataset *counts_cube(int w, int h, int bins, int peak, guint32 seed, double *sum)
{
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    guint16 *c = ds->data;
    *sum = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++) {
        int t = (int)(i / ((gsize)w * h));
        c[i] = (guint16)(peak * exp(-t * 4.0 / bins) * g_rand_double(rand) + 0.5);
        *sum += c[i];
    }
    return ds;
}

/* What a reader must find in a file of add_flim's counts: a uint16 x, y, t cube of sizes holding
 * sum counts, bins of bin_ps, and the laser period of add_flim's 64 bins (12.8 ns, 78.125 MHz). */
static void expect_flim_counts(reader_fixture *f, const gsize *sizes, const char *const *units,
                               double sum, double bin_ps)
{
    set_dims(f, 3, sizes, units);
    f->pixel_type = "uint16";
    f->bits_per_sample = 16;
    f->pixel_sum = sum;
    f->bin_width_ps = bin_ps;
    f->rep_rate_mhz = 78.125;
}

static void add_flim(GPtrArray *all, const char *dir)
{
    static const char *const units[] = {"px", "px", "ns"};
    const int w = 8, h = 6, bins = 64;
    const double bin_ps = 200; /* 64 bins = 12.8 ns: 78.125 MHz, exact in .sdt's float32 */
    double sum = 0;
    g_autoptr(fm_dataset) counts = counts_cube(w, h, bins, 9, 11, &sum);
    gsize sizes[3] = {(gsize)w, (gsize)h, (gsize)bins};

    reader_fixture *f = fixture_new(dir, "sdt", "decay.sdt");
    g_assert_true(fm_sdt_write(f->path, counts, bin_ps, NULL));
    f->format = "sdt";
    expect_flim_counts(f, sizes, units, sum, bin_ps);
    g_ptr_array_add(all, f);

    /* SPCM's other shapes: two routing channels in one zip-compressed block (the first opens) */
    double sum2 = 0;
    g_autoptr(fm_dataset) counts2 = counts_cube(w, h, bins, 5, 12, &sum2);
    const fm_dataset *pair[] = {counts, counts2};
    fm_sdt_write_options zipped = {.datasets = pair, .n_datasets = 2, .channels = 2,
                                   .bin_width_ps = bin_ps, .compress = TRUE};
    f = fixture_new(dir, "sdt-zip-channels", "zipped.sdt");
    g_assert_true(fm_sdt_write_ex(f->path, &zipped, NULL));
    f->format = "sdt";
    expect_flim_counts(f, sizes, units, sum, bin_ps);
    g_ptr_array_add(all, f);

    /* every record type, several channels and frames, a bidirectional scan, a point
     * measurement (one decay, float32), and the same records behind a .pt3 header */
    static const struct {
        const char *label, *file, *variant;
        fm_ptu_write_options options;
    } ptu[] = {
        {"ptu-picoharp", "image.ptu", "PicoHarp T3", {.record_type = FM_PTU_PICOHARP_T3}},
        {"ptu-hydraharp1", "image.ptu", "HydraHarp v1 T3", {.record_type = FM_PTU_HYDRAHARP_T3}},
        {"ptu-hydraharp2", "image.ptu", "HydraHarp v2 T3", {.record_type = FM_PTU_HYDRAHARP2_T3}},
        {"ptu-timeharp260p",
         "image.ptu",
         "TimeHarp 260P T3",
         {.record_type = FM_PTU_TIMEHARP260P_T3, .frames = 2}},
        {"ptu-generic-bidirectional",
         "image.ptu",
         "generic T3 (MultiHarp, PicoHarp 330)",
         {.record_type = FM_PTU_GENERIC_T3, .channels = 2, .bidirectional = TRUE}},
        {"ptu-point", "decay.ptu", "HydraHarp v2 T3", {.point = TRUE}},
        {"pt3", "image.pt3", NULL, {.record_type = FM_PTU_PICOHARP_T3}},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(ptu); i++) {
        f = fixture_new(dir, ptu[i].label, ptu[i].file);
        gboolean pt3 = g_str_has_suffix(ptu[i].file, ".pt3");
        g_assert_true(pt3 ? fm_pt3_write(f->path, counts, bin_ps, &ptu[i].options, NULL)
                          : fm_ptu_write(f->path, counts, bin_ps, &ptu[i].options, NULL));
        f->format = pt3 ? "pt3" : "ptu";
        f->variant = ptu[i].variant;
        expect_flim_counts(f, sizes, units, sum, bin_ps);
        if (ptu[i].options.point) {
            f->sizes[0] = f->sizes[1] = 1;
            f->units[0] = f->units[1] = NULL; /* not checked */
            f->pixel_type = "float32";
            f->bits_per_sample = 32;
        }
        g_ptr_array_add(all, f);
    }

    f = fixture_new(dir, "tiff-u16", "stack.tif");
    g_assert_true(fm_tiff_write_dataset(f->path, counts, "fixture", NULL));
    f->format = "tiff";
    static const char *const tiff_units[] = {"px", "px", "frame"};
    set_dims(f, 3, sizes, tiff_units);
    f->pixel_type = "uint16";
    f->bits_per_sample = 16;
    f->pixel_sum = sum;
    g_ptr_array_add(all, f);
}

static void add_tiff_float(GPtrArray *all, const char *dir)
{
    gsize sizes[3] = {7, 5, 3};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_F32, 3, sizes, NULL);
    float *v = ds->data;
    double sum = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++) {
        v[i] = (float)(0.1 * (double)i - 1.7);
        sum += v[i];
    }
    reader_fixture *f = fixture_new(dir, "tiff-f32", "map.tiff");
    g_assert_true(fm_tiff_write_dataset(f->path, ds, NULL, NULL));
    f->format = "tiff";
    static const char *const units[] = {"px", "px", "frame"};
    set_dims(f, 3, sizes, units);
    f->pixel_type = "float32";
    f->bits_per_sample = 32;
    f->pixel_sum = sum;
    f->sum_tolerance = 1e-9 * fabs(sum) + 1e-9;
    g_ptr_array_add(all, f);
}

static void add_nifti(GPtrArray *all, const char *dir, int version)
{
    const int nx = 5, ny = 4, nz = 3, nt = 4;
    /* uneven times go to the JSON sidecar; even ones to toffset and pixdim[4] */
    static const double uneven[] = {0, 1.5, 4, 9}, even[] = {2, 4.5, 7, 9.5};
    const double *times = version == 1 ? uneven : even;
    g_autofree float *v = g_new(float, nx *ny *nz *nt);
    double sum = 0;
    for (int i = 0; i < nx * ny * nz * nt; i++) {
        v[i] = (float)(100.0 + 0.37 * i - (i % 7) * 3.1);
        sum += v[i];
    }
    reader_fixture *f = fixture_new(dir, version == 1 ? "nifti1" : "nifti2",
                                    version == 1 ? "dce.nii" : "dce.nii.gz");
    g_assert_true(fm_nifti_write(f->path, v, nx, ny, nz, nt, NULL, times, version, NULL));
    f->format = "nifti";
    f->variant = version == 1 ? "NIfTI-1" : "NIfTI-2";
    gsize sizes[4] = {nx, ny, nz, nt};
    static const char *const units[] = {"mm", "mm", "mm", "s"};
    set_dims(f, 4, sizes, units);
    f->pixel_type = "float32";
    f->bits_per_sample = 32;
    f->pixel_sum = sum;
    f->sum_tolerance = 1e-9 * fabs(sum);
    f->n_times = nt;
    for (int t = 0; t < nt; t++)
        f->times_s[t] = times[t];
    g_ptr_array_add(all, f);
}

/* A classic series (one file per slice and time) or one enhanced multi-frame object. */
static void add_dicom(GPtrArray *all, const char *dir, gboolean enhanced)
{
    if (!fm_dicom_available())
        return;
    static const double times[] = {0, 2, 5};
    fm_dicom_test_series spec = {.nx = 6,
                                 .ny = 5,
                                 .nz = 2,
                                 .nt = 3,
                                 .frame_times_s = times,
                                 .slope = 0.5,
                                 .intercept = -10,
                                 .enhanced = enhanced};
    reader_fixture *f = fixture_new(dir, enhanced ? "dicom-enhanced" : "dicom", "IM0000");
    g_autofree char *folder = g_path_get_dirname(f->path);
    g_assert_true(fm_dicom_write_test_series(folder, &spec, NULL));
    double sum = 0;
    for (int t = 0; t < spec.nt; t++)
        for (int z = 0; z < spec.nz; z++)
            for (int y = 0; y < spec.ny; y++)
                for (int x = 0; x < spec.nx; x++)
                    sum += (float)(fm_dicom_test_stored_value(x, y, z, t) * spec.slope +
                                   spec.intercept);
    f->format = "dicom";
    gsize sizes[4] = {6, 5, 2, 3};
    static const char *const units[] = {"mm", "mm", "mm", "s"};
    set_dims(f, 4, sizes, units);
    f->pixel_type = "float32";
    f->bits_per_sample = 32;
    f->pixel_sum = sum;
    f->sum_tolerance = 1e-9 * fabs(sum);
    f->n_times = spec.nt;
    for (int t = 0; t < spec.nt; t++)
        f->times_s[t] = times[t];
    g_ptr_array_add(all, f);
}

/* Spectra (pixel, aline, bscan) with values that fit 8 bits, so that every raw format keeps
 * them; *sum gets their total. */
static fm_dataset *spectra(int pixels, int alines, int bscans, double *sum)
{
    gsize sizes[3] = {(gsize)pixels, (gsize)alines, (gsize)bscans};
    fm_dataset *ds =
        fm_dataset_new(FM_PIXEL_U16, 3, sizes, (const char *const[]){"pixel", "aline", "bscan"});
    guint16 *v = ds->data;
    *sum = 0;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++) {
        v[i] = (guint16)((i * 37 + i / 7) % 251);
        *sum += v[i];
    }
    return ds;
}

/* One OCT raw file: with a sidecar (and a calibration CSV) when with_sidecar, else the test
 * gives the layout. The writer always writes a sidecar; it is removed for the second kind. */
static void add_oct(GPtrArray *all, const char *dir, const char *label, const char *file_name,
                    fm_oct_raw_format format, gboolean with_sidecar, int pixels)
{
    const int alines = 10, bscans = 3;
    double sum = 0;
    g_autoptr(fm_dataset) s = spectra(pixels, alines, bscans, &sum);
    reader_fixture *f = fixture_new(dir, label, file_name);
    const char *calibration = NULL;
    if (with_sidecar) {
        g_autofree char *folder = g_path_get_dirname(f->path);
        g_autofree char *csv = g_build_filename(folder, "lambda.csv", NULL);
        g_autofree double *lambda = g_new(double, pixels);
        for (int i = 0; i < pixels; i++)
            lambda[i] = 880.0 - 1.25 * i; /* decreasing, as many spectrometers are */
        g_assert_true(fm_oct_calib_write_csv(csv, lambda, pixels, NULL));
        calibration = "lambda.csv";
        f->lambda_nm[0] = 880.0 - 1.25 * (pixels - 1);
        f->lambda_nm[1] = 880.0;
    }
    g_assert_true(fm_oct_raw_write(f->path, s, format, calibration, NULL));
    if (!with_sidecar) {
        g_autofree char *sidecar = fm_oct_raw_sidecar_path(f->path);
        g_assert_cmpint(g_unlink(sidecar), ==, 0);
        f->pixels_per_aline = pixels;
        f->alines_per_bscan = alines;
        f->raw_format = fm_oct_raw_format_name(format);
    }
    f->format = "oct_raw";
    f->variant = fm_oct_raw_format_name(format);
    gsize sizes[3] = {pixels, alines, bscans};
    static const char *const units[] = {"px", "aline", "bscan"};
    set_dims(f, 3, sizes, units);
    f->pixel_type = "uint16";
    static const int bits[] = {16, 12, 8};
    f->bits_per_sample = bits[format];
    f->pixel_sum = sum;
    g_ptr_array_add(all, f);
}

static void add_mci(GPtrArray *all, const char *dir)
{
    g_autoptr(fm_mci_file) mci = fm_mci_preset("mcml_sample", NULL);
    g_assert_nonnull(mci);
    reader_fixture *f = fixture_new(dir, "mci", "sample.mci");
    g_assert_true(fm_mci_write(f->path, mci, NULL));
    f->format = "mci";
    g_ptr_array_add(all, f);
}

static guint32 le32(const guint8 *p)
{
    return (guint32)p[0] | (guint32)p[1] << 8 | (guint32)p[2] << 16 | (guint32)p[3] << 24;
}

/* A ZIP member is a local header (signature, sizes at 18 and 22, name and extra lengths at 26
 * and 28) followed by raw deflate data. */
gboolean reader_fixture_unzip(const char *zip_path, const char *path)
{
    g_autofree char *zip = NULL;
    gsize len = 0;
    if (!g_file_get_contents(zip_path, &zip, &len, NULL) || len < 30)
        return FALSE;
    const guint8 *z = (const guint8 *)zip;
    if (le32(z) != 0x04034b50u)
        return FALSE;
    gsize data_at = 30 + (gsize)(z[26] | z[27] << 8) + (gsize)(z[28] | z[29] << 8);
    gsize packed = le32(z + 18), size = le32(z + 22);
    if (data_at + packed > len)
        return FALSE;
    g_autoptr(GZlibDecompressor) inflater = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_RAW);
    g_autofree guint8 *out = g_malloc(MAX(size, 1));
    gsize in_done = 0, out_done = 0;
    GConverterResult r = G_CONVERTER_CONVERTED;
    while (r != G_CONVERTER_FINISHED && r != G_CONVERTER_ERROR) {
        gsize nr = 0, nw = 0;
        r = g_converter_convert(G_CONVERTER(inflater), z + data_at + in_done, packed - in_done,
                                out + out_done, size - out_done, G_CONVERTER_INPUT_AT_END, &nr, &nw,
                                NULL);
        in_done += nr, out_done += nw;
    }
    return r == G_CONVERTER_FINISHED && out_done == size &&
           g_file_set_contents(path, (char *)out, (gssize)out_done, NULL);
}

GPtrArray *reader_fixtures_write(const char *dir)
{
    GPtrArray *all = g_ptr_array_new_with_free_func((GDestroyNotify)reader_fixture_free);
    add_flim(all, dir);
    add_tiff_float(all, dir);
    add_nifti(all, dir, 1);
    add_nifti(all, dir, 2);
    add_dicom(all, dir, FALSE);
    add_dicom(all, dir, TRUE);
    add_oct(all, dir, "oct-u12-sidecar", "spectra.raw", FM_OCT_RAW_U12_PACKED, TRUE, 64);
    add_oct(all, dir, "oct-u16-dat-sidecar", "spectra.dat", FM_OCT_RAW_U16, TRUE, 64);
    add_oct(all, dir, "oct-u16-layout", "spectra.u16", FM_OCT_RAW_U16, FALSE, 64);
    add_oct(all, dir, "oct-u8-bin-layout", "spectra.bin", FM_OCT_RAW_U8, FALSE, 64);
    /* oct.bscan takes 256 or more pixels: this one is also run */
    add_oct(all, dir, "oct-u12-odd-name", "scan.spectra", FM_OCT_RAW_U12_PACKED, FALSE, 256);
    add_mci(all, dir);
    return all;
}
