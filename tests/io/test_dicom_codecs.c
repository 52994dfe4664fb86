/* DICOM as archives send it: pydicom's test images in every transfer syntax against their
 * uncompressed twins, lone images as 2-D, damaged and unsupported files, series time tags. */
#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "app/core/error.h"
#include "app/core/io/dicom.h"
#include "app/core/io/open.h"
#include "tests/test-tree.h"

/* Debian's python3-pydicom ships its test images here (FM_PYDICOM_TEST_FILES overrides). */
#define PYDICOM_DEFAULT "/usr/lib/python3/dist-packages/pydicom/data/test_files"

static const char *pydicom_dir(void)
{
    const char *env = g_getenv("FM_PYDICOM_TEST_FILES");
    return env ? env : PYDICOM_DEFAULT;
}

/* TRUE when DICOM is built in and pydicom's files are installed; else the test is skipped. */
static gboolean need_files(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return FALSE;
    }
    g_autofree char *probe = g_build_filename(pydicom_dir(), "MR_small.dcm", NULL);
    if (!g_file_test(probe, G_FILE_TEST_EXISTS)) {
        g_test_skip("pydicom's test files are not installed (apt-get install python3-pydicom)");
        return FALSE;
    }
    return TRUE;
}

/* Copies pydicom's name into dir (its folder holds one image in many encodings, which are
 * copies of one SOP instance: opened in place they would be deduplicated, not compared). */
static char *copy_into(const char *dir, const char *name, gsize keep_bytes)
{
    g_autofree char *src = g_build_filename(pydicom_dir(), name, NULL);
    char *dst = g_build_filename(dir, name, NULL);
    g_autofree char *bytes = NULL;
    gsize n = 0;
    g_assert_true(g_file_get_contents(src, &bytes, &n, NULL));
    g_assert_true(g_file_set_contents(dst, bytes, keep_bytes ? MIN(keep_bytes, n) : n, NULL));
    return dst;
}

/* The same, into dir's new folder (one series per folder, as the reader takes them). */
static char *copy_into_folder(const char *dir, const char *folder, const char *name,
                              gsize keep_bytes)
{
    g_autofree char *sub = g_build_filename(dir, folder, NULL);
    g_mkdir(sub, 0755);
    return copy_into(sub, name, keep_bytes);
}

/* Opens one pydicom file, copied alone into a fresh folder, through fm_dataset_open. */
static fm_dataset *open_alone(const char *name, GError **error)
{
    g_autofree char *dir = g_dir_make_tmp("fm-dicom-XXXXXX", NULL);
    g_autofree char *path = copy_into(dir, name, 0);
    fm_dataset *ds = fm_dataset_open(path, NULL, NULL, NULL, error);
    fm_test_remove_tree(dir);
    return ds;
}

static fm_dataset *must_open(const char *name)
{
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = open_alone(name, &error);
    if (error)
        g_printerr("%s: %s\n", name, error->message);
    g_assert_no_error(error);
    g_assert_nonnull(ds);
    return ds;
}

static double pixel_sum(const fm_dataset *ds)
{
    double sum = 0;
    const float *v = ds->data;
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        sum += v[i];
    return sum;
}

static void assert_same_shape(const fm_dataset *a, const fm_dataset *b)
{
    g_assert_cmpint(a->n_dims, ==, b->n_dims);
    for (int d = 0; d < a->n_dims; d++) {
        g_assert_cmpstr(a->dims[d].name, ==, b->dims[d].name);
        g_assert_cmpuint(a->dims[d].size, ==, b->dims[d].size);
    }
}

/* Every value of got equals scale × want's (relative tolerance rel: 0 for exact). */
static void assert_pixels(const fm_dataset *got, const fm_dataset *want, double scale, double rel,
                          const char *what)
{
    const float *g = got->data, *w = want->data;
    gsize n = MIN(fm_dataset_n_elements(got), fm_dataset_n_elements(want));
    for (gsize i = 0; i < n; i++) {
        double expect = scale * w[i];
        if (fabs(g[i] - expect) > rel * fabs(expect)) {
            g_printerr("%s: sample %zu is %.9g, expected %.9g\n", what, i, g[i], expect);
            g_assert_cmpfloat(g[i], ==, expect);
        }
    }
}

/* Lossless encodings of one image: the decoded pixels must equal the uncompressed twin's. */
typedef struct {
    const char *file, *twin, *why;
} twin_pair;

static const twin_pair lossless_pairs[] = {
    {"MR_small_RLE.dcm", "MR_small.dcm", "RLE lossless (dcmdata's decoder), 16-bit signed"},
    {"MR_small_jpeg_ls_lossless.dcm", "MR_small.dcm", "JPEG-LS lossless (dcmjpls/CharLS)"},
    {"MR_small_jp2klossless.dcm", "MR_small.dcm", "JPEG 2000 lossless (OpenJPEG)"},
    {"MR_small_bigendian.dcm", "MR_small.dcm", "explicit VR big endian"},
    {"MR_small_expb.dcm", "MR_small.dcm", "explicit VR big endian, another writer"},
    {"MR_small_implicit.dcm", "MR_small.dcm", "implicit VR little endian"},
    {"MR_small_padded.dcm", "MR_small.dcm", "trailing padding after the pixels"},
    {"rtdose_rle.dcm", "rtdose.dcm", "RLE, 32-bit unsigned, 15 frames"},
    {"rtdose_expb.dcm", "rtdose.dcm", "big endian, 32-bit, 15 frames"},
    {"rtdose_rle_1frame.dcm", "rtdose_1frame.dcm", "RLE, 32-bit, one frame"},
    {"rtdose_expb_1frame.dcm", "rtdose_1frame.dcm", "big endian, 32-bit, one frame"},
    {"SC_rgb_jpeg_gdcm.dcm", "SC_rgb_rle.dcm", "JPEG lossless process 14 SV1 (dcmjpeg), RGB"},
    {"SC_rgb_gdcm_KY.dcm", "SC_rgb_rle.dcm",
     "JPEG 2000 (.91) that GDCM wrote with the reversible wavelet: exact"},
    /* SC_rgb_jpeg_dcmd.dcm is SC_rgb_jpeg.dcm decompressed by DCMTK's dcmdjpeg (its name and
     * its SOP instance say so): DCMTK's decoder must give those very pixels. */
    {"SC_rgb_jpeg.dcm", "SC_rgb_jpeg_dcmd.dcm", "JPEG baseline RGB against dcmdjpeg's output"},
    {"SC_jpeg_no_color_transform.dcm", "SC_rgb_jpeg_dcmd.dcm",
     "JPEG baseline RGB without colour transform, same image"},
};

/* Sums of the stored values computed by pydicom 2.3.1's own numpy decoder (uncompressed and
 * RLE, an implementation independent of DCMTK), times the files' rescale. */
typedef struct {
    const char *file;
    double sum;
} reference_sum;

static const reference_sum pydicom_sums[] = {
    {"MR_small.dcm", 2125338},
    {"CT_small.dcm", 14826310.0 - 1024.0 * 128 * 128}, /* RescaleIntercept -1024 */
    {"rtdose.dcm", 1519910000 * 1e-6},                 /* DoseGridScaling 1e-6 */
    {"SC_rgb_rle.dcm", 3831000},
    {"SC_rgb_rle_16bit.dcm", 984567000},
    {"SC_rgb_jpeg_dcmd.dcm", 47966767},
    {"ExplVR_BigEnd.dcm", 2470716}, /* 8-bit RGB in explicit big endian */
    {"image_dfl.dcm", 33322688},    /* deflated explicit VR little endian */
    /* JPEG 2000 through pydicom 2.3.1 with Pillow 9.4: OpenJPEG underneath too, but pydicom's
     * own fragment handling and its J2K sign/precision corrections. */
    {"JPEG2000.dcm", 3527976},
    {"693_J2KI.dcm", -270617240},              /* RescaleIntercept -1024 */
    {"J2K_pixelrep_mismatch.dcm", -172605258}, /* signed header, unsigned codestream */
};

static void test_lossless_twins(void)
{
    if (!need_files())
        return;
    for (gsize i = 0; i < G_N_ELEMENTS(lossless_pairs); i++) {
        const twin_pair *p = &lossless_pairs[i];
        g_test_message("%s = %s: %s", p->file, p->twin, p->why);
        g_autoptr(fm_dataset) got = must_open(p->file);
        g_autoptr(fm_dataset) want = must_open(p->twin);
        assert_same_shape(got, want);
        g_assert_cmpfloat(pixel_sum(got), ==, pixel_sum(want));
        assert_pixels(got, want, 1.0, 0.0, p->file);
    }
    for (gsize i = 0; i < G_N_ELEMENTS(pydicom_sums); i++) {
        g_autoptr(fm_dataset) ds = must_open(pydicom_sums[i].file);
        g_test_message("%s: pixel_sum %.10g, pydicom %.10g", pydicom_sums[i].file, pixel_sum(ds),
                       pydicom_sums[i].sum);
        g_assert_cmpfloat_with_epsilon(pixel_sum(ds), pydicom_sums[i].sum,
                                       1e-9 * fabs(pydicom_sums[i].sum) + 1e-6);
    }
}

/* pydicom's RLE colour set is built from SC_rgb's 8-bit bands: the 16-bit file is 257 × and the
 * 32-bit one 16843009 × the 8-bit values (0xff → 0xffff, 0xffffffff), and the second frame of
 * each 2-frame file is the first inverted (max − value). Checked with pydicom's numpy decoder. */
static void test_rle_colour_family(void)
{
    if (!need_files())
        return;
    g_autoptr(fm_dataset) base = must_open("SC_rgb_rle.dcm");
    g_assert_cmpint(base->n_dims, ==, 3);
    g_assert_cmpstr(base->dims[2].name, ==, "c");
    g_assert_cmpuint(base->dims[2].size, ==, 3);
    /* The bands of SC_rgb (pydicom's docs): row 5 is red, row 25 green, row 45 blue. */
    const float *b = base->data;
    gsize plane = 100 * 100;
    g_assert_cmpfloat(b[5 * 100 + 50], ==, 255);
    g_assert_cmpfloat(b[plane + 5 * 100 + 50], ==, 0);
    g_assert_cmpfloat(b[plane + 25 * 100 + 50], ==, 255);
    g_assert_cmpfloat(b[2 * plane + 45 * 100 + 50], ==, 255);
    const struct {
        const char *file;
        double scale, max, rel;
    } family[] = {{"SC_rgb_rle_16bit.dcm", 257, 65535, 0},
                  {"SC_rgb_rle_32bit.dcm", 16843009, 4294967295.0, 1e-7}, /* float32 */
                  {"SC_rgb_rle_2frame.dcm", 1, 255, 0},
                  {"SC_rgb_rle_16bit_2frame.dcm", 257, 65535, 0},
                  {"SC_rgb_rle_32bit_2frame.dcm", 16843009, 4294967295.0, 1e-7}};
    for (gsize i = 0; i < G_N_ELEMENTS(family); i++) {
        g_autoptr(fm_dataset) ds = must_open(family[i].file);
        g_assert_cmpuint(ds->dims[0].size, ==, 100);
        g_assert_cmpuint(ds->dims[2].size, ==, 3);
        assert_pixels(ds, base, family[i].scale, family[i].rel, family[i].file);
        if (ds->n_dims == 4) {
            g_assert_cmpstr(ds->dims[3].name, ==, "frame");
            g_assert_cmpuint(ds->dims[3].size, ==, 2);
            const float *second = (const float *)ds->data + 3 * plane;
            for (gsize k = 0; k < 3 * plane; k++) {
                double want = family[i].max - family[i].scale * b[k];
                g_assert_cmpfloat(fabs(second[k] - want), <=, family[i].rel * family[i].max);
            }
        }
    }
}

/* Lossy syntaxes against the lossless original, within what the codec's quantisation allows:
 * the centre of each of SC_rgb's ten colour bands within 8 of 255 (JPEG baseline of flat
 * colours: pydicom's tables for these very files differ from the bands by up to 5), and a
 * mean absolute error below 3 levels (edges between bands ring under 4:2:x subsampling). */
static void test_lossy_twins(void)
{
    if (!need_files())
        return;
    static const char *const lossy[] = {
        "SC_rgb_dcmtk_+eb+cr.dcm", "SC_rgb_dcmtk_+eb+cy+n1.dcm", "SC_rgb_dcmtk_+eb+cy+n2.dcm",
        "SC_rgb_dcmtk_+eb+cy+np.dcm", "SC_rgb_dcmtk_+eb+cy+s2.dcm", "SC_rgb_dcmtk_+eb+cy+s4.dcm",
        "SC_rgb_jpeg_dcmtk.dcm",
        /* YBR_FULL_422 stored uncompressed (the +n2 file's samples before colour conversion):
         * converted here, not by a codec */
        "SC_ybr_full_422_uncompressed.dcm"};
    g_autoptr(fm_dataset) ref = must_open("SC_rgb_rle.dcm");
    const float *r = ref->data;
    gsize n = fm_dataset_n_elements(ref);
    for (gsize i = 0; i < G_N_ELEMENTS(lossy); i++) {
        g_autoptr(fm_dataset) ds = must_open(lossy[i]);
        assert_same_shape(ds, ref);
        const float *v = ds->data;
        double mae = 0;
        for (gsize k = 0; k < n; k++)
            mae += fabs(v[k] - r[k]);
        mae /= n;
        g_test_message("%s: mean |error| %.3f levels of 255", lossy[i], mae);
        g_assert_cmpfloat(mae, <, 3.0);
        for (int row = 5; row < 100; row += 10)
            for (int c = 0; c < 3; c++) {
                gsize k = (gsize)c * 10000 + (gsize)row * 100 + 50;
                g_assert_cmpfloat(fabs(v[k] - r[k]), <=, 8.0);
            }
    }
    /* SC_rgb_jpeg_lossy_gdcm.dcm says RGB while its JPEG stream (no JFIF or Adobe marker)
     * holds YCbCr: read as its header says (PS3.5 8.2.1, DCMTK's default, the rule that
     * SC_rgb_jpeg.dcm's dcmdjpeg twin above needs), its colours are not the original's. It
     * still reads, whole. */
    g_autoptr(fm_dataset) mislabelled = must_open("SC_rgb_jpeg_lossy_gdcm.dcm");
    assert_same_shape(mislabelled, ref);
    /* 3x3 with odd sizes: JPEG baseline of a tiny image against its uncompressed original. */
    g_autoptr(fm_dataset) odd = must_open("SC_rgb_small_odd_jpeg.dcm");
    g_autoptr(fm_dataset) odd_ref = must_open("SC_rgb_small_odd.dcm");
    assert_same_shape(odd, odd_ref);
    for (gsize k = 0; k < 27; k++)
        g_assert_cmpfloat(fabs(((float *)odd->data)[k] - ((float *)odd_ref->data)[k]), <=, 8.0);
}

/* The NM image of JPEG2000.dcm (lossy JPEG 2000, 16-bit signed) and JPGExtended.dcm (lossy
 * JPEG extended, 12-bit): two lossy encodings of one image, whose uncompressed original pydicom
 * does not ship. JPEG-lossy.dcm is JPGExtended.dcm with a damaged JPEG header that pydicom's
 * decoders reject and DCMTK's reads to the same pixels. */
static void test_lossy_nm(void)
{
    if (!need_files())
        return;
    g_autoptr(fm_dataset) j2k = must_open("JPEG2000.dcm");
    g_autoptr(fm_dataset) jpg = must_open("JPGExtended.dcm");
    g_autoptr(fm_dataset) bad = must_open("JPEG-lossy.dcm");
    g_assert_cmpint(j2k->n_dims, ==, 2);
    g_assert_cmpuint(j2k->dims[0].size, ==, 256);
    g_assert_cmpuint(j2k->dims[1].size, ==, 1024);
    assert_same_shape(j2k, jpg);
    assert_pixels(bad, jpg, 1.0, 0.0, "JPEG-lossy.dcm");
    g_assert_cmpstr(fm_dataset_get_meta(j2k, "dicom_lossy"), ==, "yes");
    const float *a = j2k->data, *b = jpg->data;
    gsize n = fm_dataset_n_elements(j2k);
    double mae = 0, peak = 0;
    for (gsize k = 0; k < n; k++) {
        mae += fabs(a[k] - b[k]);
        peak = MAX(peak, fabs(b[k]));
    }
    mae /= n;
    g_test_message("JPEG2000.dcm vs JPGExtended.dcm: mean |difference| %.3f, peak %.0f", mae, peak);
    /* Both are lossy (the J2K file is 3 kB for 256 k pixels), so only a loose bound: within
     * 3 % of the peak on average (measured: 1.6 %). JPEG2000.dcm's exact pixels are checked
     * against pydicom + Pillow in lossless-twins. */
    g_assert_cmpfloat(mae, <, 0.03 * peak);
}

/* JPEG 2000 whose codestream is unsigned while PixelRepresentation says signed: PS3.5 8.2.4
 * lets the header win. Expected values from pydicom's own tests for this file (pylibjpeg,
 * Pillow and GDCM agree). */
static void test_j2k_sign_mismatch(void)
{
    if (!need_files())
        return;
    g_autoptr(fm_dataset) ds = must_open("J2K_pixelrep_mismatch.dcm");
    g_assert_cmpint(ds->n_dims, ==, 2);
    g_assert_cmpuint(ds->dims[0].size, ==, 512);
    const float *v = ds->data;
    static const int col279[] = {621, 412, 138, -193, -520, -767, -907, -966, -988, -995};
    static const int col106[] = {-377, -121, 141, 383, 633, 910, 1198, 1455, 1638, 1732};
    g_assert_cmpfloat(v[0], ==, -2000);
    for (int k = 0; k < 10; k++) {
        g_assert_cmpfloat(v[(47 + k) * 512 + 279], ==, col279[k]);
        g_assert_cmpfloat(v[(328 + k) * 512 + 106], ==, col106[k]);
    }
    /* Others without an uncompressed twin in Debian's package: they decode to the right
     * shape (693_J2KI: BitsStored 14 but a 16-bit codestream; GDCMJ2K_TextGBR: a JP2 file
     * with YBR_RCT colour, not the bare codestream PS3.5 asks for). */
    g_autoptr(fm_dataset) ct = must_open("693_J2KI.dcm");
    g_assert_cmpint(ct->n_dims, ==, 2);
    g_assert_cmpuint(ct->dims[1].size, ==, 512);
    g_autoptr(fm_dataset) text = must_open("GDCMJ2K_TextGBR.dcm");
    g_assert_cmpint(text->n_dims, ==, 3);
    g_assert_cmpuint(text->dims[2].size, ==, 3);
}

/* A lone image is 2-D (LSI takes it); a multi-frame file a stack; a folder of one image too. */
static void test_single_images(void)
{
    if (!need_files())
        return;
    g_autoptr(fm_dataset) mr = must_open("MR_small_jpeg_ls_lossless.dcm");
    g_assert_cmpint(mr->n_dims, ==, 2);
    g_assert_cmpstr(mr->dims[0].name, ==, "x");
    g_assert_cmpuint(mr->dims[0].size, ==, 64);
    g_assert_cmpstr(mr->dims[0].unit, ==, "mm");
    g_assert_cmpfloat_with_epsilon(mr->dims[0].spacing, 0.3125, 1e-9);
    g_assert_nonnull(
        strstr(fm_dataset_get_meta(mr, "dicom_transfer_syntax"), "1.2.840.10008.1.2.4.80"));
    g_assert_cmpstr(fm_dataset_get_meta(mr, "dicom_lossy"), ==, "no");
    g_autoptr(fm_dataset) dose = must_open("rtdose.dcm");
    g_assert_cmpint(dose->n_dims, ==, 3);
    g_assert_cmpstr(dose->dims[2].name, ==, "z");
    g_assert_cmpuint(dose->dims[2].size, ==, 15);
    g_assert_cmpfloat_with_epsilon(dose->dims[2].spacing, 5.0, 1e-9);
    g_assert_cmpstr(fm_dataset_get_meta(dose, "dicom_frames"), ==, "15");

    g_autofree char *dir = g_dir_make_tmp("fm-dicom-XXXXXX", NULL);
    g_autofree char *one = copy_into(dir, "MR_small_RLE.dcm", 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) folder = fm_dataset_open(dir, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(folder->n_dims, ==, 2);
    /* Copies of one SOP instance in one folder are one image; the file the user picked wins. */
    g_autofree char *two = copy_into(dir, "MR_small_jp2klossless.dcm", 0);
    g_autoptr(fm_dataset) picked = fm_dataset_open(two, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(picked->n_dims, ==, 2);
    g_assert_cmpstr(fm_dataset_get_meta(picked, "dicom_duplicate_files"), ==, "1");
    g_assert_nonnull(strstr(fm_dataset_get_meta(picked, "dicom_transfer_syntax"), "4.90"));
    fm_test_remove_tree(dir);

    /* In place, among pydicom's other files (other series, no-image files, MR_truncated.dcm
     * as a copy of the same instance): the one image. */
    g_autofree char *in_place = g_build_filename(pydicom_dir(), "MR_small.dcm", NULL);
    g_autoptr(fm_dataset) mr2 = fm_dataset_open(in_place, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(mr2->n_dims, ==, 2);
    g_assert_cmpfloat(pixel_sum(mr2), ==, 2125338);
    g_assert_cmpstr(fm_dataset_get_meta(mr2, "dicom_files"), ==, "1");
    g_test_message("in place: %s copies of MR_small's instance dropped",
                   fm_dataset_get_meta(mr2, "dicom_duplicate_files"));
    g_assert_cmpint(atoi(fm_dataset_get_meta(mr2, "dicom_duplicate_files")), >=, 7);
}

static void expect_error(const char *path, const char *fragment)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(path, NULL, NULL, NULL, &error);
    g_assert_null(ds);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_test_message("%s", error->message);
    g_autofree char *base = g_path_get_basename(path);
    if (!strstr(error->message, base) || !strstr(error->message, fragment))
        g_printerr("message: %s\n", error->message);
    g_assert_nonnull(strstr(error->message, base));
    g_assert_nonnull(strstr(error->message, fragment));
}

/* Same-length substitution of the transfer syntax UID in the file meta header. */
static void patch_syntax(const char *path, const char *from, const char *to)
{
    g_autofree char *bytes = NULL;
    gsize n = 0;
    g_assert_true(g_file_get_contents(path, &bytes, &n, NULL));
    g_assert_cmpuint(strlen(from), ==, strlen(to));
    char *at = NULL;
    for (gsize i = 0; at == NULL && i + strlen(from) <= MIN(n, 1024); i++)
        if (memcmp(bytes + i, from, strlen(from)) == 0)
            at = bytes + i;
    g_assert_nonnull(at);
    memcpy(at, to, strlen(to));
    g_assert_true(g_file_set_contents(path, bytes, n, NULL));
}

static void test_bad_files(void)
{
    if (!need_files())
        return;
    g_autofree char *dir = g_dir_make_tmp("fm-dicom-XXXXXX", NULL);
    /* pydicom's truncated file; our cuts of compressed files inside their pixel data. */
    g_autofree char *trunc = copy_into(dir, "MR_truncated.dcm", 0);
    expect_error(trunc, "truncated pixel data");
    g_autofree char *jls = copy_into_folder(dir, "a", "MR_small_jpeg_ls_lossless.dcm", 5000);
    expect_error(jls, "MR_small_jpeg_ls_lossless.dcm");
    g_autofree char *j2k = copy_into_folder(dir, "b", "MR_small_jp2klossless.dcm", 4000);
    expect_error(j2k, "MR_small_jp2klossless.dcm");
    g_autofree char *rle = copy_into_folder(dir, "c", "rtdose_rle.dcm", 4000);
    expect_error(rle, "rtdose_rle.dcm");
    /* A codestream whose SIZ marker holds a sequence delimiter tag: OpenJPEG's reason. */
    g_autofree char *delim =
        copy_into_folder(dir, "d", "JPEG2000-embedded-sequence-delimiter.dcm", 0);
    expect_error(delim, "OpenJPEG cannot decode");
    /* JPEG-LS whose entropy-coded data is overwritten (length kept): the decoder's reason. */
    g_autofree char *smashed = copy_into_folder(dir, "g", "MR_small_jpeg_ls_lossless.dcm", 0);
    {
        g_autofree char *bytes = NULL;
        gsize n = 0;
        g_assert_true(g_file_get_contents(smashed, &bytes, &n, NULL));
        memset(bytes + n - 3000, 0xff, 2000);
        g_assert_true(g_file_set_contents(smashed, bytes, n, NULL));
    }
    expect_error(smashed, "DCMTK cannot decode");
    /* A syntax no codec here reads (a retired JPEG process, 3 and 5): named with its UID. */
    g_autofree char *retired = copy_into_folder(dir, "e", "MR_small_jpeg_ls_lossless.dcm", 0);
    patch_syntax(retired, "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.52");
    expect_error(retired, "no decoder for transfer syntax");
    expect_error(retired, "1.2.840.10008.1.2.4.52");
    /* Two series in one folder. */
    g_autofree char *sub6 = g_build_filename(dir, "f", NULL);
    g_mkdir(sub6, 0755);
    g_free(copy_into(sub6, "MR_small.dcm", 0));
    g_free(copy_into(sub6, "CT_small.dcm", 0));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dataset_open(sub6, NULL, NULL, NULL, &error);
    g_assert_null(ds);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "folder holds 2 series"));
    fm_test_remove_tree(dir);
}

/* fluxmap-cli run maps these errors to exit 3 with the file and the reason on stderr, and
 * runs LSI on a lone 2-D DICOM image (which it refused as "not 4 dimensions" before). */
static int run_cli(const char *const *args, char **err)
{
    const char *cli = g_getenv("FLUXMAP_CLI");
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli);
    for (int i = 0; args[i]; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    int status = -1;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                               NULL, NULL, err, &status, NULL));
    g_ptr_array_unref(argv);
    g_assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void test_cli_exit_codes(void)
{
    if (!need_files())
        return;
    if (g_getenv("FLUXMAP_CLI") == NULL) {
        g_test_skip("FLUXMAP_CLI not set");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("fm-dicom-cli-XXXXXX", NULL);
    g_autofree char *out = g_build_filename(dir, "maps", NULL);
    g_autofree char *image = copy_into_folder(dir, "one", "MR_small_RLE.dcm", 0);
    g_autofree char *err = NULL;
    const char *lsi[] = {"run", "lsi.spatial", image, "-o", out, NULL};
    int status = run_cli(lsi, &err);
    if (status != 0)
        g_printerr("%s\n", err);
    g_assert_cmpint(status, ==, 0);
    g_free(g_steal_pointer(&err));

    g_autofree char *trunc = copy_into(dir, "MR_truncated.dcm", 0);
    const char *bad[] = {"run", "lsi.spatial", trunc, "-o", out, NULL};
    g_assert_cmpint(run_cli(bad, &err), ==, 3);
    g_assert_nonnull(strstr(err, "MR_truncated.dcm: truncated pixel data"));
    g_free(g_steal_pointer(&err));

    g_autofree char *mixed = g_build_filename(dir, "mixed", NULL);
    g_mkdir(mixed, 0755);
    g_free(copy_into(mixed, "MR_small.dcm", 0));
    g_free(copy_into(mixed, "CT_small.dcm", 0));
    const char *two[] = {"run", "dce.dual_input", mixed, "-o", out, NULL};
    g_assert_cmpint(run_cli(two, &err), ==, 3);
    g_assert_nonnull(strstr(err, "mixed"));
    g_assert_nonnull(strstr(err, "holds 2 series"));
    g_free(g_steal_pointer(&err));

    /* One series whose files differ in size (8x5 among 6x5). */
    g_autofree char *sizes = g_build_filename(dir, "sizes", NULL);
    const double times[2] = {0, 2};
    fm_dicom_test_series spec = {
        .nx = 6, .ny = 5, .nz = 2, .nt = 2, .frame_times_s = times, .slope = 1};
    g_assert_true(fm_dicom_write_test_series(sizes, &spec, NULL));
    spec.nx = 8;
    spec.nz = spec.nt = 1;
    spec.file_prefix = "XX";
    g_assert_true(fm_dicom_write_test_series(sizes, &spec, NULL));
    const char *mixed_sizes[] = {"run", "dce.dual_input", sizes, "-o", out, NULL};
    g_assert_cmpint(run_cli(mixed_sizes, &err), ==, 3);
    g_assert_nonnull(strstr(err, "mixed image sizes"));
    g_assert_nonnull(strstr(err, "XX0000 is 8x5"));
    g_free(g_steal_pointer(&err));

    g_autofree char *retired_dir = g_build_filename(dir, "retired", NULL);
    g_mkdir(retired_dir, 0755);
    g_autofree char *retired = copy_into(retired_dir, "MR_small_jpeg_ls_lossless.dcm", 0);
    patch_syntax(retired, "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.52");
    const char *unsupported[] = {"run", "lsi.spatial", retired, "-o", out, NULL};
    g_assert_cmpint(run_cli(unsupported, &err), ==, 3);
    g_assert_nonnull(strstr(err, "MR_small_jpeg_ls_lossless.dcm: no decoder for transfer"));
    fm_test_remove_tree(dir);
}

/* A DCE series as an archive sends it, compressed file by file (and as one enhanced multi-frame
 * object) with DCMTK's encoders: the 4-D reader returns stored × slope + intercept exactly for
 * lossless syntaxes and within NEAR stored units for JPEG-LS near-lossless (ISO 14495-1's
 * bound). Covers what no pydicom file above has: JPEG lossless process 14 with predictor 6
 * (.57), SV1 (.70), JPEG-LS near-lossless (.81), multi-frame and multi-fragment JPEG 2000. */
static void test_compressed_series(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    const struct {
        const char *uid;
        int near;
        gboolean enhanced;
        int j2k_fragments;
    } cases[] = {
        {"1.2.840.10008.1.2.5", 0, FALSE, 0},    /* RLE lossless */
        {"1.2.840.10008.1.2.4.80", 0, FALSE, 0}, /* JPEG-LS lossless */
        {"1.2.840.10008.1.2.4.81", 2, FALSE, 0}, /* JPEG-LS near-lossless, NEAR 2 */
        {"1.2.840.10008.1.2.4.57", 0, FALSE, 0}, /* JPEG lossless, process 14 */
        {"1.2.840.10008.1.2.4.70", 0, FALSE, 0}, /* JPEG lossless, SV1 */
        {"1.2.840.10008.1.2.2", 0, FALSE, 0},    /* explicit VR big endian */
        {"1.2.840.10008.1.2", 0, FALSE, 0},      /* implicit VR little endian */
        {"1.2.840.10008.1.2.4.80", 0, TRUE, 0},  /* one enhanced object, 12 frames, JPEG-LS */
        {"1.2.840.10008.1.2.5", 0, TRUE, 0},     /* one enhanced object, RLE */
        /* JPEG 2000 lossless through OpenJPEG, as one fragment per frame and as codestreams
         * split over 3 fragments each (found by their SOC markers) */
        {"1.2.840.10008.1.2.4.90", 0, FALSE, 3},
        {"1.2.840.10008.1.2.4.90", 0, TRUE, 1},
        {"1.2.840.10008.1.2.4.90", 0, TRUE, 3},
    };
    const double times[4] = {0, 3.5, 7, 12.25};
    for (gsize c = 0; c < G_N_ELEMENTS(cases); c++) {
        fm_dicom_test_series spec = {.nx = 6,
                                     .ny = 5,
                                     .nz = 3,
                                     .nt = 4,
                                     .frame_times_s = times,
                                     .slope = 0.5,
                                     .intercept = -100,
                                     .pixel_spacing_mm = {0.75, 0.8},
                                     .slice_spacing_mm = 2.5,
                                     .tilt_deg = 20,
                                     .shuffle_seed = 5 + (guint32)c,
                                     .enhanced = cases[c].enhanced,
                                     .transfer_syntax_uid = cases[c].uid,
                                     .near_lossless = cases[c].near,
                                     .j2k_fragments = cases[c].j2k_fragments};
        g_autofree char *dir = g_dir_make_tmp("fm-dicom-cseries-XXXXXX", NULL);
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_dicom_write_test_series(dir, &spec, &error));
        g_assert_no_error(error);
        g_autoptr(fm_dataset) ds = fm_dataset_open(dir, NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpint(ds->n_dims, ==, 4);
        g_assert_cmpuint(ds->dims[2].size, ==, 3);
        g_assert_cmpuint(ds->dims[3].size, ==, 4);
        /* The files were written (and read) in that syntax, not silently left uncompressed. */
        g_autofree char *uid = g_strdup_printf("(%s)", cases[c].uid);
        g_assert_nonnull(strstr(fm_dataset_get_meta(ds, "dicom_transfer_syntax"), uid));
        const float *v = ds->data;
        double worst = 0;
        for (int t = 0; t < 4; t++)
            for (int z = 0; z < 3; z++)
                for (int y = 0; y < 5; y++)
                    for (int x = 0; x < 6; x++) {
                        gsize i = (((gsize)t * 3 + z) * 5 + y) * 6 + x;
                        double want = fm_dicom_test_stored_value(x, y, z, t) * 0.5 - 100;
                        worst = MAX(worst, fabs(v[i] - want));
                    }
        g_test_message("%s%s: largest error %g", cases[c].uid,
                       cases[c].enhanced ? " (enhanced)" : "", worst);
        g_assert_cmpfloat(worst, <=, cases[c].near * spec.slope);
        g_assert_cmpstr(fm_dataset_get_meta(ds, "dicom_lossy"), ==, cases[c].near ? "yes" : "no");
        double *got = NULL;
        int n = 0;
        g_assert_true(fm_dataset_get_frame_times(ds, &got, &n));
        for (int t = 0; t < 4; t++)
            g_assert_cmpfloat_with_epsilon(got[t], times[t], 1e-5);
        g_free(got);
        fm_test_remove_tree(dir);
    }
}

/* An enhanced multi-frame object of one frame is one 2-D image; of several frames at several
 * positions and times, a 4-D series (as before). */
static void test_enhanced_single_frame(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    const double times[1] = {0};
    fm_dicom_test_series spec = {.nx = 5,
                                 .ny = 4,
                                 .nz = 1,
                                 .nt = 1,
                                 .frame_times_s = times,
                                 .slope = 2,
                                 .intercept = 1,
                                 .enhanced = TRUE};
    g_autofree char *dir = g_dir_make_tmp("fm-dicom-enh-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_dicom_write_test_series(dir, &spec, &error));
    g_autoptr(fm_dataset) ds = fm_dataset_open(dir, NULL, NULL, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ds->n_dims, ==, 2);
    g_assert_cmpuint(ds->dims[0].size, ==, 5);
    const float *v = ds->data;
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 5; x++)
            g_assert_cmpfloat(v[y * 5 + x], ==, 2.0 * fm_dicom_test_stored_value(x, y, 0, 0) + 1);
    fm_test_remove_tree(dir);
}

/* Series of one slice and many frames (as QIBA's DCE reference objects are: one slice, times
 * in one tag) with the time in each tag scanners use. */
static void test_time_tags(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    enum { NT = 40 };
    double times[NT];
    for (int t = 0; t < NT; t++)
        times[t] = t < 10 ? 2.5 * t : 25.0 + 4.25 * (t - 10); /* two rates, as DCE protocols */
    const struct {
        fm_dicom_test_time_tag tag;
        const char *source;
    } cases[] = {{FM_DICOM_TEST_TIME_ACQUISITION_DATETIME, "AcquisitionDateTime"},
                 {FM_DICOM_TEST_TIME_ACQUISITION_TIME, "AcquisitionTime"},
                 {FM_DICOM_TEST_TIME_TRIGGER, "TriggerTime"},
                 {FM_DICOM_TEST_TIME_CONTENT, "ContentTime"}};
    for (gsize c = 0; c < G_N_ELEMENTS(cases); c++) {
        fm_dicom_test_series spec = {.nx = 3,
                                     .ny = 2,
                                     .nz = 1,
                                     .nt = NT,
                                     .frame_times_s = times,
                                     .slope = 1,
                                     .shuffle_seed = 11 + (guint32)c,
                                     .time_tag = cases[c].tag};
        g_autofree char *dir = g_dir_make_tmp("fm-dicom-times-XXXXXX", NULL);
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_dicom_write_test_series(dir, &spec, &error));
        g_autoptr(fm_dataset) ds = fm_dataset_open(dir, NULL, NULL, NULL, &error);
        g_assert_no_error(error);
        g_assert_cmpint(ds->n_dims, ==, 4);
        g_assert_cmpuint(ds->dims[2].size, ==, 1);
        g_assert_cmpuint(ds->dims[3].size, ==, NT);
        g_assert_cmpstr(fm_dataset_get_meta(ds, "dicom_time_source"), ==, cases[c].source);
        double *got = NULL;
        int n = 0;
        g_assert_true(fm_dataset_get_frame_times(ds, &got, &n));
        g_assert_cmpint(n, ==, NT);
        for (int t = 0; t < NT; t++)
            g_assert_cmpfloat_with_epsilon(got[t], times[t], 1e-5); /* TM: microseconds */
        const float *v = ds->data;
        for (int t = 0; t < NT; t++)
            g_assert_cmpfloat(v[(gsize)t * 6 + 5], ==, fm_dicom_test_stored_value(2, 1, 0, t));
        g_free(got);
        fm_test_remove_tree(dir);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/io/dicom/lossless-twins", test_lossless_twins);
    g_test_add_func("/io/dicom/rle-colour-family", test_rle_colour_family);
    g_test_add_func("/io/dicom/lossy-twins", test_lossy_twins);
    g_test_add_func("/io/dicom/lossy-nm", test_lossy_nm);
    g_test_add_func("/io/dicom/j2k-sign-mismatch", test_j2k_sign_mismatch);
    g_test_add_func("/io/dicom/single-images", test_single_images);
    g_test_add_func("/io/dicom/bad-files", test_bad_files);
    g_test_add_func("/io/dicom/cli-exit-codes", test_cli_exit_codes);
    g_test_add_func("/io/dicom/time-tags", test_time_tags);
    g_test_add_func("/io/dicom/enhanced-single-frame", test_enhanced_single_frame);
    g_test_add_func("/io/dicom/compressed-series", test_compressed_series);
    return g_test_run();
}
