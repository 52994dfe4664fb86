/* DCE 4-D I/O tests: NIfTI round trips, DICOM series written here with DCMTK, TIFF stacks. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/fm_dce_io_config.h"
#if FM_HAVE_NIFTI
#include <nifti2_io.h>
#endif
#include "app/core/io/dce_stack.h"
#include "app/core/io/dicom.h"
#include "app/core/io/nifti.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "tests/test-tree.h"

static char *make_tmp(void)
{
    char *dir = g_dir_make_tmp("fluxmap-dce-io-XXXXXX", NULL);
    g_assert_nonnull(dir);
    return dir;
}

static float *ramp(int nx, int ny, int nz, int nt)
{
    gsize n = (gsize)nx * ny * nz * nt;
    float *v = g_new(float, n);
    for (gsize i = 0; i < n; i++)
        v[i] = (float)(0.25 * (double)i - 7.0); /* exact in float32: multiples of 1/4 */
    return v;
}

static void assert_dims(const fm_dataset *ds, int nx, int ny, int nz, int nt)
{
    g_assert_cmpint(ds->n_dims, ==, 4);
    g_assert_cmpint(ds->type, ==, FM_PIXEL_F32);
    g_assert_cmpuint(ds->dims[0].size, ==, nx);
    g_assert_cmpuint(ds->dims[1].size, ==, ny);
    g_assert_cmpuint(ds->dims[2].size, ==, nz);
    g_assert_cmpuint(ds->dims[3].size, ==, nt);
    g_assert_cmpstr(ds->dims[3].name, ==, "t");
    g_assert_cmpstr(ds->dims[3].unit, ==, "s");
}

static void assert_times(const fm_dataset *ds, const double *expect, int nt, double tol)
{
    g_autofree double *times = NULL;
    int n = 0;
    g_assert_true(fm_dataset_get_frame_times(ds, &times, &n));
    g_assert_cmpint(n, ==, nt);
    for (int i = 0; i < nt; i++)
        g_assert_cmpfloat_with_epsilon(times[i], expect[i], tol);
}

/* A rotated, scaled, shifted voxel-to-mm map: every entry differs, so a transposition or a
 * dropped row shows. */
static const double test_affine[16] = {0.8, -0.1, 0.05, -40.5, 0.1, 0.9, -0.2, 12.25,
                                       0.0, 0.3,  2.5,  7.0,   0.0, 0.0, 0.0,  1.0};

static gboolean need_nifti(void)
{
    if (FM_HAVE_NIFTI)
        return TRUE;
    g_test_skip("built without nifticlib");
    return FALSE;
}

static void nifti_round_trip(const char *name, int version, const double *times, int nt,
                             double affine_tol, double time_tol, gboolean expect_sidecar)
{
    if (!need_nifti())
        return;
    g_autofree char *dir = make_tmp();
    g_autofree char *path = g_build_filename(dir, name, NULL);
    const int nx = 5, ny = 4, nz = 3;
    g_autofree float *v = ramp(nx, ny, nz, nt);
    g_autofree char *affine = fm_format_number_list(test_affine, 16);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_nifti_write(path, v, nx, ny, nz, nt, affine, times, version, &error));
    g_assert_no_error(error);
    g_autofree char *sidecar = fm_nifti_sidecar_path(path);
    g_assert_cmpint(g_file_test(sidecar, G_FILE_TEST_EXISTS), ==, expect_sidecar);

    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    assert_dims(ds, nx, ny, nz, nt);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "nifti_version"), ==, version == 2 ? "2" : "1");
    /* Voxels are float32 on both sides: exact. */
    g_assert_cmpmem(ds->data, fm_dataset_n_bytes(ds), v, sizeof(float) * nx * ny * nz * nt);
    assert_times(ds, times, nt, time_tol);
    double a[16];
    g_assert_true(fm_dataset_get_affine(ds, a));
    for (int i = 0; i < 16; i++)
        g_assert_cmpfloat_with_epsilon(a[i], test_affine[i], affine_tol);
    /* Voxel sizes are the affine's column lengths. */
    g_assert_cmpfloat_with_epsilon(ds->dims[2].spacing, sqrt(0.05 * 0.05 + 0.2 * 0.2 + 2.5 * 2.5),
                                   1e-5);
    fm_test_remove_tree(dir);
}

/* NIfTI-1 holds the sform and pixdim as float32: 1e-5 absolute covers values up to ~40 (2^-24
 * relative). Evenly spaced times representable in float32 come back exactly. */
static void test_nifti1_pixdim_times(void)
{
    const double times[6] = {0, 2.5, 5, 7.5, 10, 12.5};
    nifti_round_trip("dce.nii", 1, times, 6, 1e-5, 1e-9, FALSE);
}

/* NIfTI-2 keeps doubles; uneven times go through the JSON sidecar written with %.17g. */
static void test_nifti2_sidecar_times(void)
{
    const double times[5] = {0, 1.3, 2.9, 5.0, 8.27};
    nifti_round_trip("dce.nii.gz", 2, times, 5, 1e-12, 1e-12, TRUE);
}

/* An int16 3-D file written with nifticlib directly: scl_slope/scl_inter applied, one frame. A
 * 4-D uint8 file with pixdim[4] in milliseconds gives times in seconds. */
static void test_nifti_types_and_units(void)
{
#if !FM_HAVE_NIFTI
    g_test_skip("built without nifticlib");
#else
    g_autofree char *dir = make_tmp();
    g_autofree char *p16 = g_build_filename(dir, "s16.nii", NULL);
    int64_t dims[8] = {3, 4, 3, 2, 1, 1, 1, 1};
    nifti_image *nim = nifti_make_new_nim(dims, DT_INT16, 1);
    gint16 *s = nim->data;
    for (int i = 0; i < 24; i++)
        s[i] = (gint16)(i * 100 - 1000);
    nim->scl_slope = 0.5;
    nim->scl_inter = -10;
    nifti_set_filenames(nim, p16, 0, 1);
    nifti_image_write(nim);
    nifti_image_free(nim);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_nifti_read(p16, &error);
    g_assert_no_error(error);
    assert_dims(ds, 4, 3, 2, 1);
    for (int i = 0; i < 24; i++)
        g_assert_cmpfloat(((float *)ds->data)[i], ==, (i * 100 - 1000) * 0.5 - 10);

    g_autofree char *p8 = g_build_filename(dir, "u8.nii", NULL);
    int64_t dims4[8] = {4, 2, 2, 1, 4, 1, 1, 1};
    nim = nifti_make_new_nim(dims4, DT_UINT8, 1);
    for (int i = 0; i < 16; i++)
        ((guint8 *)nim->data)[i] = (guint8)(i * 15);
    nim->dt = nim->pixdim[4] = 250; /* ms */
    nim->time_units = NIFTI_UNITS_MSEC;
    nifti_set_filenames(nim, p8, 0, 1);
    nifti_image_write(nim);
    nifti_image_free(nim);
    g_autoptr(fm_dataset) d8 = fm_nifti_read(p8, &error);
    g_assert_no_error(error);
    assert_dims(d8, 2, 2, 1, 4);
    const double expect[4] = {0, 0.25, 0.5, 0.75};
    assert_times(d8, expect, 4, 1e-12);
    g_assert_cmpfloat(((float *)d8->data)[15], ==, 225.0f);

    /* The reader widens narrow voxels in the dataset's own buffer and reads float64 apart:
     * every value of a 4-D int16 volume with a slope, a uint32 and a float64 one. */
    int64_t big[8] = {4, 33, 17, 3, 5, 1, 1, 1};
    const int n_big = 33 * 17 * 3 * 5, types[3] = {DT_INT16, DT_UINT32, DT_FLOAT64};
    for (int k = 0; k < 3; k++) {
        g_autofree char *pk = g_strdup_printf("%s/type%d.nii", dir, types[k]);
        nim = nifti_make_new_nim(big, types[k], 1);
        for (int i = 0; i < n_big; i++) {
            if (types[k] == DT_INT16)
                ((gint16 *)nim->data)[i] = (gint16)(i % 20011 - 10000);
            else if (types[k] == DT_UINT32)
                ((guint32 *)nim->data)[i] = (guint32)i * 977u;
            else
                ((double *)nim->data)[i] = i * 0.25 - 3.0;
        }
        nim->scl_slope = types[k] == DT_INT16 ? 2.0 : 0.0;
        nim->dt = nim->pixdim[4] = 1.5;
        nifti_set_filenames(nim, pk, 0, 1);
        nifti_image_write(nim);
        nifti_image_free(nim);
        g_autoptr(fm_dataset) dk = fm_nifti_read(pk, &error);
        g_assert_no_error(error);
        assert_dims(dk, 33, 17, 3, 5);
        int wrong = 0;
        for (int i = 0; i < n_big; i++) {
            double want = types[k] == DT_INT16    ? (i % 20011 - 10000) * 2.0
                          : types[k] == DT_UINT32 ? (double)((guint32)i * 977u)
                                                  : i * 0.25 - 3.0;
            wrong += ((float *)dk->data)[i] != (float)want;
        }
        g_assert_cmpint(wrong, ==, 0);
    }
    fm_test_remove_tree(dir);
#endif
}

static void test_nifti_truncated(void)
{
    if (!need_nifti())
        return;
    g_autofree char *dir = make_tmp();
    g_autofree char *path = g_build_filename(dir, "cut.nii", NULL);
    const double times[3] = {0, 1, 2};
    g_autofree float *v = ramp(4, 4, 2, 3);
    g_assert_true(fm_nifti_write(path, v, 4, 4, 2, 3, NULL, times, 1, NULL));
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
    g_assert_true(g_file_set_contents(path, bytes, (gssize)len - 40, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_null(ds);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "cut.nii: truncated voxel data"));
    fm_test_remove_tree(dir);
}

/* The expected RAS affine of fm_dicom_write_test_series' geometry (LPS rows 0, 1 negated). */
static void expected_dicom_affine(double tilt_deg, double sx, double sy, double dz, double *a)
{
    double c = cos(tilt_deg * G_PI / 180), s = sin(tilt_deg * G_PI / 180);
    double lps[16] = {sx, 0,      0,      -10.5, 0, c * sy, -s * dz, -20.25,
                      0,  s * sy, c * dz, 30.0,  0, 0,      0,       1};
    for (int i = 0; i < 16; i++)
        a[i] = (i < 8 ? -1 : 1) * lps[i];
    a[12] = a[13] = a[14] = 0;
    a[15] = 1;
}

static gboolean need_dcmtk(void)
{
    if (fm_dicom_available())
        return TRUE;
    g_test_skip("built without DCMTK");
    return FALSE;
}

static fm_dicom_test_series default_series(const double *times, int nt)
{
    fm_dicom_test_series spec = {.nx = 6,
                                 .ny = 5,
                                 .nz = 4,
                                 .nt = nt,
                                 .frame_times_s = times,
                                 .slope = 0.5,
                                 .intercept = -100,
                                 .pixel_spacing_mm = {0.75, 0.8},
                                 .slice_spacing_mm = 2.5,
                                 .tilt_deg = 20,
                                 .shuffle_seed = 7};
    return spec;
}

/* A fresh folder holding spec's series (free it), or NULL with the test skipped without DCMTK. */
static char *write_series(const fm_dicom_test_series *spec)
{
    if (!need_dcmtk())
        return NULL;
    char *dir = make_tmp();
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_dicom_write_test_series(dir, spec, &error));
    g_assert_no_error(error);
    return dir;
}

static void check_series(const char *dir, const fm_dicom_test_series *spec, int skipped)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(dir, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    assert_dims(ds, spec->nx, spec->ny, spec->nz, spec->nt);
    const float *v = ds->data;
    for (int t = 0; t < spec->nt; t++)
        for (int z = 0; z < spec->nz; z++)
            for (int y = 0; y < spec->ny; y++)
                for (int x = 0; x < spec->nx; x++) {
                    gsize i = (((gsize)t * spec->nz + z) * spec->ny + y) * spec->nx + x;
                    double want =
                        fm_dicom_test_stored_value(x, y, z, t) * spec->slope + spec->intercept;
                    /* slope 0.5 and integer intercept: exact in float32. */
                    g_assert_cmpfloat(v[i], ==, (float)want);
                }
    /* TM values carry microseconds: 1e-5 s. */
    assert_times(ds, spec->frame_times_s, spec->nt, 1e-5);
    double a[16], e[16];
    g_assert_true(fm_dataset_get_affine(ds, a));
    expected_dicom_affine(spec->tilt_deg, spec->pixel_spacing_mm[0], spec->pixel_spacing_mm[1],
                          spec->slice_spacing_mm, e);
    for (int i = 0; i < 16; i++) /* DS strings hold 8 significant digits */
        g_assert_cmpfloat_with_epsilon(a[i], e[i], 1e-5);
    g_assert_cmpfloat_with_epsilon(ds->dims[0].spacing, spec->pixel_spacing_mm[0], 1e-9);
    g_assert_cmpfloat_with_epsilon(ds->dims[2].spacing, spec->slice_spacing_mm, 1e-5);
    char buf[16];
    g_snprintf(buf, sizeof buf, "%d", skipped);
    g_assert_cmpstr(fm_dataset_get_meta(ds, "dicom_skipped_files"), ==, buf);
}

/* Shuffled file names, the same position at several times, slope/intercept, a tilted slice
 * plane and a stray text file. */
static void test_dicom_series(void)
{
    const double times[5] = {0, 2, 4.5, 7, 10.25};
    fm_dicom_test_series spec = default_series(times, 5);
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    g_autofree char *notes = g_build_filename(dir, "notes.txt", NULL);
    g_assert_true(g_file_set_contents(notes, "scanner export log\n", -1, NULL));
    check_series(dir, &spec, 1);
    fm_test_remove_tree(dir);
}

static void test_dicom_enhanced(void)
{
    const double times[3] = {0, 3.5, 9};
    fm_dicom_test_series spec = default_series(times, 3);
    spec.enhanced = TRUE;
    spec.shuffle_seed = 11;
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    check_series(dir, &spec, 0);
    fm_test_remove_tree(dir);
}

static void expect_dicom_error(const char *dir, const char *series, const char *fragment)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dicom_read(dir, series, &error);
    g_assert_null(ds);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_test_message("%s", error->message);
    if (strstr(error->message, fragment) == NULL)
        g_error("message \"%s\" lacks \"%s\"", error->message, fragment);
}

static void test_dicom_truncated(void)
{
    const double times[2] = {0, 2};
    fm_dicom_test_series spec = default_series(times, 2);
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    g_autofree char *victim = g_build_filename(dir, "IM0007", NULL);
    g_autofree char *bytes = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(victim, &bytes, &len, NULL));
    g_assert_true(g_file_set_contents(victim, bytes, (gssize)len - 21, NULL));
    g_autofree char *fragment = g_strdup_printf("%s: truncated pixel data", victim);
    expect_dicom_error(dir, NULL, fragment);
    fm_test_remove_tree(dir);
}

static void test_dicom_several_series(void)
{
    if (!need_dcmtk())
        return;
    g_autofree char *dir = make_tmp();
    const double times[2] = {0, 2};
    const char *uids[3] = {"1.2.3.1", "1.2.3.2", "1.2.3.3"};
    const char *prefixes[3] = {"A", "B", "C"};
    fm_dicom_test_series spec = default_series(times, 2);
    for (int i = 0; i < 3; i++) {
        spec.series_uid = uids[i];
        spec.file_prefix = prefixes[i];
        spec.nz = 2 + i;
        g_assert_true(fm_dicom_write_test_series(dir, &spec, NULL));
    }
    expect_dicom_error(dir, NULL, "folder holds 3 series; choose one");
    g_auto(GStrv) listed = fm_dicom_list_series(dir, NULL);
    g_assert_cmpuint(g_strv_length(listed), ==, 3);
    g_assert_cmpstr(listed[1], ==, "1.2.3.2");
    g_autoptr(fm_dataset) ds = fm_dicom_read(dir, "1.2.3.2", NULL);
    g_assert_nonnull(ds);
    g_assert_cmpuint(ds->dims[2].size, ==, 3);
    expect_dicom_error(dir, "9.9", "no series 9.9");
    /* Any file of a series picked in a file dialog opens that series from its folder: the
     * content (Part-10 preamble), not a name, says DICOM (these files have no extension). */
    for (int i = 0; i < 3; i++) {
        g_autofree char *name = g_strdup_printf("%s0001", prefixes[i]);
        g_autofree char *file = g_build_filename(dir, name, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(fm_dataset) picked = fm_dataset_open(file, NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(picked->dims[2].size, ==, 2 + i);
        g_assert_cmpstr(fm_dataset_get_meta(picked, "dicom_series_uid"), ==, uids[i]);
    }
    fm_test_remove_tree(dir);
}

static void count_ticks(double fraction, gpointer user)
{
    double *last = user;
    g_assert_cmpfloat(fraction, >=, last[0]); /* progress only moves forward */
    g_assert_cmpfloat(fraction, <=, 1.0);
    last[0] = fraction;
    last[1] += 1;
}

/* A folder opens with progress through both passes, and a cancelled load stops with
 * G_IO_ERROR_CANCELLED instead of a dataset. */
static void test_dicom_progress_cancel(void)
{
    const double times[3] = {0, 2, 4};
    fm_dicom_test_series spec = default_series(times, 3);
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    double ticks[2] = {0, 0};
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(dir, count_ticks, ticks, NULL, &error);
    g_assert_no_error(error);
    g_assert_nonnull(ds);
    g_assert_cmpfloat(ticks[1], >=, 2);  /* the header pass and the pixel pass */
    g_assert_cmpfloat(ticks[0], >, 0.3); /* the pixel pass reported */
    g_autoptr(GCancellable) cancel = g_cancellable_new();
    g_cancellable_cancel(cancel);
    g_autoptr(fm_dataset) none = fm_dataset_open(dir, NULL, NULL, cancel, &error);
    g_assert_null(none);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
    fm_test_remove_tree(dir);
}

static void test_dicom_unequal_frames(void)
{
    const double times[3] = {0, 2, 4};
    fm_dicom_test_series spec = default_series(times, 3);
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    g_autofree char *victim = g_build_filename(dir, "IM0005", NULL);
    g_assert_cmpint(g_remove(victim), ==, 0);
    expect_dicom_error(dir, NULL, "unequal frame counts per slice position");
    fm_test_remove_tree(dir);
}

/* With TemporalPositionIdentifier the order is the index; times that go back contradict it. */
static void test_dicom_non_monotonic(void)
{
    const double back[3] = {0, 4, 2};
    fm_dicom_test_series spec = default_series(back, 3);
    spec.temporal_index = TRUE;
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    expect_dicom_error(dir, NULL, "non-monotonic times");
    fm_test_remove_tree(dir);
    /* Without an index, two frames of one slice at the same time cannot be ordered. */
    g_autofree char *dir2 = make_tmp();
    const double dup[3] = {0, 2, 2};
    spec = default_series(dup, 3);
    g_assert_true(fm_dicom_write_test_series(dir2, &spec, NULL));
    expect_dicom_error(dir2, NULL, "non-monotonic times");
    fm_test_remove_tree(dir2);
}

static void test_dicom_mixed_sizes(void)
{
    const double times[2] = {0, 2};
    fm_dicom_test_series spec = default_series(times, 2);
    g_autofree char *dir = write_series(&spec);
    if (dir == NULL)
        return;
    spec.nx = 8;
    spec.nz = 1;
    spec.nt = 1;
    spec.file_prefix = "XX";
    g_assert_true(fm_dicom_write_test_series(dir, &spec, NULL));
    expect_dicom_error(dir, NULL, "mixed image sizes");
    fm_test_remove_tree(dir);
}

/* 2 slices x 3 frames of u16 pages, in both page orders; wrong counts and times refused. */
static void test_tiff_stack(void)
{
    g_autofree char *dir = make_tmp();
    g_autofree char *path = g_build_filename(dir, "stack.tif", NULL);
    const int nx = 3, ny = 2, nz = 2, nt = 3;
    gsize sizes[3] = {nx, ny, (gsize)nz * nt};
    g_autoptr(fm_dataset) pages = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    guint16 *p = pages->data;
    for (gsize i = 0; i < fm_dataset_n_elements(pages); i++)
        p[i] = (guint16)(i * 3 + 1);
    g_assert_true(fm_tiff_write_dataset(path, pages, NULL, NULL));
    g_autoptr(GError) error = NULL;
    for (int order = 0; order < 2; order++) {
        g_autoptr(fm_dataset) ds = fm_dce_stack_read(path, nz, nt, order, 1.5, NULL, &error);
        g_assert_no_error(error);
        assert_dims(ds, nx, ny, nz, nt);
        for (int t = 0; t < nt; t++)
            for (int z = 0; z < nz; z++) {
                int page = order == FM_DCE_PAGES_Z_FASTEST ? t * nz + z : z * nt + t;
                for (int i = 0; i < nx * ny; i++)
                    g_assert_cmpfloat(((float *)ds->data)[(t * nz + z) * nx * ny + i], ==,
                                      p[page * nx * ny + i]);
            }
        const double expect[3] = {0, 1.5, 3};
        assert_times(ds, expect, 3, 1e-12);
    }
    const double uneven[3] = {0, 1, 4};
    g_autoptr(fm_dataset) ds = fm_dce_stack_read(path, nz, nt, 0, 0, uneven, &error);
    g_assert_no_error(error);
    assert_times(ds, uneven, 3, 1e-15);
    g_assert_null(fm_dce_stack_read(path, 4, 2, 0, 1, NULL, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "6 pages are not nz 4 x nt 2"));
    g_clear_error(&error);
    const double back[3] = {0, 2, 1};
    g_assert_null(fm_dce_stack_read(path, nz, nt, 0, 0, back, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "non-monotonic"));
    fm_test_remove_tree(dir);
}

static void test_frame_time_helpers(void)
{
    gsize sizes[4] = {1, 1, 1, 3};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_F32, 4, sizes, NULL);
    ds->dims[3].spacing = 2;
    g_autofree double *t = NULL;
    int n = 0;
    g_assert_true(fm_dataset_get_frame_times(ds, &t, &n)); /* fallback: index x spacing */
    g_assert_cmpint(n, ==, 3);
    g_assert_cmpfloat(t[2], ==, 4);
    const double set[3] = {0.1, 0.35, 1.0 / 3};
    fm_dataset_set_frame_times(ds, set, 3);
    g_clear_pointer(&t, g_free);
    g_assert_true(fm_dataset_get_frame_times(ds, &t, &n));
    g_assert_cmpfloat(t[2], ==, 1.0 / 3); /* %.17g: bit-exact */
    fm_dataset_set_meta(ds, FM_META_FRAME_TIMES, "0,1,x");
    g_clear_pointer(&t, g_free);
    g_assert_false(fm_dataset_get_frame_times(ds, &t, &n));
    double a[16];
    g_assert_false(fm_dataset_get_affine(ds, a));
    g_assert_cmpfloat(a[0], ==, 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/io/dce/nifti1-pixdim-times", test_nifti1_pixdim_times);
    g_test_add_func("/io/dce/nifti2-sidecar-times", test_nifti2_sidecar_times);
    g_test_add_func("/io/dce/nifti-types-units", test_nifti_types_and_units);
    g_test_add_func("/io/dce/nifti-truncated", test_nifti_truncated);
    g_test_add_func("/io/dce/dicom-series", test_dicom_series);
    g_test_add_func("/io/dce/dicom-enhanced", test_dicom_enhanced);
    g_test_add_func("/io/dce/dicom-truncated", test_dicom_truncated);
    g_test_add_func("/io/dce/dicom-several-series", test_dicom_several_series);
    g_test_add_func("/io/dce/dicom-progress-cancel", test_dicom_progress_cancel);
    g_test_add_func("/io/dce/dicom-unequal-frames", test_dicom_unequal_frames);
    g_test_add_func("/io/dce/dicom-non-monotonic", test_dicom_non_monotonic);
    g_test_add_func("/io/dce/dicom-mixed-sizes", test_dicom_mixed_sizes);
    g_test_add_func("/io/dce/tiff-stack", test_tiff_stack);
    g_test_add_func("/io/dce/frame-time-helpers", test_frame_time_helpers);
    return g_test_run();
}
