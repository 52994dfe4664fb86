/* Label-map ROIs: the DCE phantom's ROIs written as a label map and read back (voxels against the
 * phantom's own geometry, roles, the source's qform/sform in the header read by nifticlib), mask
 * ROIs in JSON, size mismatches, bad labels and --roi-labels syntax. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_prep.h"
#include "app/core/dce/dce_sim.h"
#include "app/core/error.h"
#include "app/core/fm_dce_io_config.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"
#include "app/core/roi_labels.h"

#if FM_HAVE_NIFTI
#include <nifti/nifti2_io.h>
#endif

static char *tmp_dir;

static char *tmp_path(const char *name)
{
    return g_build_filename(tmp_dir, name, NULL);
}

static void sim_params(fm_dce_sim_params *p)
{
    fm_dce_sim_defaults(p);
    p->nx = 40;
    p->ny = 32;
    p->nz = 3;
    p->n_times = 8;
    p->cnr = 0;
}

/* The phantom written as NIfTI with an oblique affine (30 degrees about z, 1.5 x 1.5 x 4 mm,
 * an offset), then read back as a user's file would be. */
static fm_dataset *phantom_file(const char *name, fm_dce_sim_params *p)
{
    sim_params(p);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_dce_simulate(p, &error);
    g_assert_no_error(error);
    double c = cos(G_PI / 6), s = sin(G_PI / 6);
    const double affine[16] = {1.5 * c, -1.5 * s, 0, -30.25, 1.5 * s, 1.5 * c, 0, 12.5,
                               0,       0,        4, -7.0,   0,       0,       0, 1};
    fm_dataset_set_affine(ds, affine);
    g_autofree char *path = tmp_path(name);
    g_assert_true(fm_nifti_write_dataset(path, ds, 1, &error));
    fm_dataset *back = fm_nifti_read(path, &error);
    g_assert_no_error(error);
    return back;
}

static int expected_label(const fm_dce_sim_params *p, int x, int y, int z)
{
    switch (fm_dce_sim_label_at(p, x, y, z)) {
    case FM_DCE_SIM_AORTA:
        return 1;
    case FM_DCE_SIM_PORTAL_VEIN:
        return 2;
    case FM_DCE_SIM_LIVER:
    case FM_DCE_SIM_LESION_HYPER:
    case FM_DCE_SIM_LESION_HYPO:
        return 3; /* the liver ROI is the liver's outline, lesions included */
    default:
        return 0;
    }
}

static void check_roundtrip(const char *map_name)
{
    fm_dce_sim_params p;
    g_autoptr(fm_dataset) ds = phantom_file("liver.nii.gz", &p);
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(&p);
    g_autoptr(GError) error = NULL;
    g_autofree char *path = tmp_path(map_name);
    g_autofree char *mapping = NULL;
    g_assert_true(fm_roi_list_to_label_map(path, rois, ds, &mapping, &error));
    g_assert_no_error(error);
    g_assert_cmpstr(mapping, ==, "1=aorta,2=portal_vein,3=liver");

    /* The voxels, read by another reader than the one under test, against the phantom's
     * geometry (fm_dce_sim_label_at, which does not go through fm_roi). */
    g_autoptr(fm_dataset) raw = g_str_has_suffix(map_name, ".tif") ? fm_tiff_read(path, &error)
                                                                   : fm_nifti_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_n_elements(raw), ==, (gsize)p.nx * p.ny * p.nz);
    for (int z = 0; z < p.nz; z++)
        for (int y = 0; y < p.ny; y++)
            for (int x = 0; x < p.nx; x++) {
                gsize i = ((gsize)z * p.ny + y) * p.nx + x;
                g_assert_cmpint((int)fm_dataset_value(raw, i), ==, expected_label(&p, x, y, z));
            }

    /* Back as ROIs: one per label and slice, with the roles; their union per role is exactly
     * the voxels of the phantom's own ROIs. */
    g_autoptr(GPtrArray) labels = fm_roi_labels_parse(mapping, NULL, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) back = fm_roi_list_from_label_map(path, ds, labels, TRUE, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(back->len, ==, 3u * p.nz);
    fm_dce_geometry g = {p.nx, p.ny, p.nz, p.n_times};
    static const char *const roles[] = {"aorta", "portal_vein", "liver"};
    for (gsize r = 0; r < G_N_ELEMENTS(roles); r++) {
        gsize n_want = 0, n_got = 0;
        g_autofree guint8 *want = fm_dce_role_mask(rois, roles[r], &g, &n_want);
        g_autofree guint8 *got = fm_dce_role_mask(back, roles[r], &g, &n_got);
        g_assert_nonnull(got);
        g_assert_cmpuint(n_got, ==, n_want);
        g_assert_cmpuint(n_want, >, 0);
        g_assert_cmpmem(got, (gsize)p.nx * p.ny * p.nz, want, (gsize)p.nx * p.ny * p.nz);
    }
    for (guint i = 0; i < back->len; i++) {
        const fm_roi *roi = back->pdata[i];
        g_assert_cmpint(roi->kind, ==, FM_ROI_MASK);
        g_assert_cmpint(roi->slice, ==, (int)(i % p.nz)); /* label by label, slice by slice */
        g_assert_cmpstr(roi->role, ==, roles[i / p.nz]);
        g_assert_cmpstr(roi->name, ==, roles[i / p.nz]);
    }

    /* Without roles: "label N"; with the description file written beside it: the roles. */
    g_autoptr(GPtrArray) unnamed = fm_roi_list_from_label_map(path, ds, NULL, TRUE, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(((fm_roi *)unnamed->pdata[0])->name, ==, "label 1");
    g_assert_null(((fm_roi *)unnamed->pdata[0])->role);
    g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
    gboolean from_file = FALSE;
    g_autoptr(GPtrArray) described = fm_roi_labels_parse(sidecar, &from_file, &error);
    g_assert_no_error(error);
    g_assert_true(from_file);
    g_assert_cmpuint(described->len, ==, 3);
    g_assert_cmpstr(((fm_roi_label_role *)described->pdata[1])->role, ==, "portal_vein");
}

static void test_roundtrip_nifti(void)
{
    check_roundtrip("mask.nii.gz");
}

static void test_roundtrip_tiff(void)
{
    check_roundtrip("mask.tif");
}

#if FM_HAVE_NIFTI
/* The label map's header carries the source's qform and sform as the source file holds them. */
static void test_geometry_copied(void)
{
    fm_dce_sim_params p;
    g_autoptr(fm_dataset) ds = phantom_file("geom.nii", &p);
    g_autoptr(GPtrArray) rois = fm_dce_sim_rois(&p);
    g_autoptr(GError) error = NULL;
    g_autofree char *path = tmp_path("geom-labels.nii");
    g_assert_true(fm_roi_list_to_label_map(path, rois, ds, NULL, &error));
    nifti_image *src = nifti_image_read(ds->source_path, 0);
    nifti_image *lab = nifti_image_read(path, 0);
    g_assert_nonnull(src);
    g_assert_nonnull(lab);
    g_assert_cmpint(lab->qform_code, ==, src->qform_code);
    g_assert_cmpint(lab->sform_code, ==, src->sform_code);
    g_assert_cmpint(lab->qform_code, >, 0);
    g_assert_cmpfloat(lab->quatern_b, ==, src->quatern_b);
    g_assert_cmpfloat(lab->quatern_c, ==, src->quatern_c);
    g_assert_cmpfloat(lab->quatern_d, ==, src->quatern_d);
    g_assert_cmpfloat(lab->qoffset_x, ==, src->qoffset_x);
    g_assert_cmpfloat(lab->qoffset_y, ==, src->qoffset_y);
    g_assert_cmpfloat(lab->qoffset_z, ==, src->qoffset_z);
    g_assert_cmpfloat(lab->qfac, ==, src->qfac);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 4; c++)
            g_assert_cmpfloat(lab->sto_xyz.m[r][c], ==, src->sto_xyz.m[r][c]);
    /* and the affine we set: 30 degrees about z, 1.5 mm voxels */
    g_assert_cmpfloat_with_epsilon(lab->sto_xyz.m[1][0], 1.5 * 0.5, 1e-6);
    g_assert_cmpfloat_with_epsilon(lab->dz, 4.0, 1e-6);
    g_assert_cmpint(lab->intent_code, ==, NIFTI_INTENT_LABEL);
    g_assert_cmpint(lab->datatype, ==, DT_UINT8);
    g_assert_cmpint(lab->nz, ==, p.nz);
    g_assert_cmpint(lab->nt, <=, 1);
    nifti_image_free(src);
    nifti_image_free(lab);
}
#endif

static void test_mask_json(void)
{
    guint8 m[5 * 4] = {0};
    m[1] = m[2] = m[6] = m[19] = 1;
    g_autoptr(fm_roi) roi = fm_roi_new_mask("vessel", m, 5, 4);
    roi->role = g_strdup("aorta");
    roi->slice = 2;
    g_autofree char *json = fm_roi_to_json(roi);
    g_assert_nonnull(strstr(json, "\"runs\":[1,2,6,1,19,1]"));
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_roi) back = fm_roi_from_json(json, &error);
    g_assert_no_error(error);
    g_assert_cmpint(back->kind, ==, FM_ROI_MASK);
    g_assert_cmpint(back->slice, ==, 2);
    g_assert_cmpstr(back->role, ==, "aorta");
    g_assert_cmpmem(back->mask, 20, m, 20);
    /* rasterised on a larger image: the mask at the origin, nothing else */
    g_autofree guint8 *big = fm_roi_rasterise(back, 7, 5);
    gsize n = 0;
    for (int i = 0; i < 35; i++)
        n += big[i];
    g_assert_cmpuint(n, ==, 4);
    g_assert_true(big[7 * 3 + 4]);
    double x0, y0, x1, y1;
    g_assert_true(fm_roi_bounds(back, &x0, &y0, &x1, &y1));
    g_assert_cmpfloat(x0, ==, 1);
    g_assert_cmpfloat(y1, ==, 4);
    /* runs that overlap or leave the mask are refused */
    g_autoptr(fm_roi) bad = fm_roi_from_json(
        "{\"kind\":\"mask\",\"name\":\"m\",\"size\":[2,2],\"runs\":[0,2,1,1]}", &error);
    g_assert_null(bad);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_clear_error(&error);
    bad = fm_roi_from_json("{\"kind\":\"mask\",\"name\":\"m\",\"size\":[2,2],\"runs\":[3,2]}",
                           &error);
    g_assert_null(bad);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
}

static void test_size_mismatch(void)
{
    fm_dce_sim_params p;
    g_autoptr(fm_dataset) ds = phantom_file("liver.nii", &p);
    gsize sizes[3] = {16, 12, 2};
    static const char *const names[3] = {"x", "y", "z"};
    g_autoptr(fm_dataset) small = fm_dataset_new(FM_PIXEL_F32, 3, sizes, names);
    g_autoptr(GError) error = NULL;
    g_autofree char *path = tmp_path("small-mask.nii.gz");
    g_assert_true(fm_nifti_write(path, small->data, 16, 12, 2, 1, NULL, NULL, 1, &error));
    g_autoptr(GPtrArray) rois = fm_roi_list_from_label_map(path, ds, NULL, TRUE, &error);
    g_assert_null(rois);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_autofree char *want =
        g_strdup_printf("%s: label map is 16x12x2 but liver.nii is 40x32x3", path);
    g_assert_cmpstr(error->message, ==, want);
}

static void test_bad_voxels_and_labels(void)
{
    fm_dce_sim_params p;
    g_autoptr(fm_dataset) ds = phantom_file("liver.nii", &p);
    gsize n = (gsize)p.nx * p.ny * p.nz;
    g_autofree float *v = g_new0(float, n);
    v[5] = 2.0f;
    v[n - 1] = 1.5f; /* not a label */
    g_autoptr(GError) error = NULL;
    g_autofree char *path = tmp_path("half.nii");
    const char *geometry = fm_dataset_get_meta(ds, FM_META_AFFINE); /* drawn on ds's grid */
    g_assert_true(fm_nifti_write(path, v, p.nx, p.ny, p.nz, 1, geometry, NULL, 1, &error));
    g_assert_null(fm_roi_list_from_label_map(path, ds, NULL, TRUE, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "holds 1.5"));
    g_clear_error(&error);

    v[n - 1] = 0;
    g_assert_true(fm_nifti_write(path, v, p.nx, p.ny, p.nz, 1, geometry, NULL, 1, &error));
    g_autoptr(GPtrArray) labels = fm_roi_labels_parse("2=aorta, 7=liver", NULL, &error);
    g_assert_no_error(error);
    /* a label the map does not hold: a parameter error that lists what it holds */
    g_assert_null(fm_roi_list_from_label_map(path, ds, labels, TRUE, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_assert_nonnull(strstr(error->message, "label 7 (liver) is not in"));
    g_assert_nonnull(strstr(error->message, "(its labels: 2)"));
    g_clear_error(&error);
    g_autoptr(GPtrArray) rois = fm_roi_list_from_label_map(path, ds, labels, FALSE, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rois->len, ==, 1);
    g_assert_cmpint(((fm_roi *)rois->pdata[0])->slice, ==, 0);
    g_assert_cmpuint(fm_roi_count_pixels(rois->pdata[0], p.nx, p.ny), ==, 1);
}

/* A label map of the right size but on another grid in space (shifted 5 mm) is refused; one
 * without any orientation of its own is taken by its voxels. */
static void test_orientation_mismatch(void)
{
    fm_dce_sim_params p;
    g_autoptr(fm_dataset) ds = phantom_file("liver.nii", &p);
    double a[16];
    g_assert_true(fm_dataset_get_affine(ds, a));
    a[7] += 5.0;
    g_autofree char *shifted = fm_format_number_list(a, 16);
    gsize n = (gsize)p.nx * p.ny * p.nz;
    g_autofree float *v = g_new0(float, n);
    v[0] = 1;
    g_autoptr(GError) error = NULL;
    g_autofree char *path = tmp_path("shifted.nii");
    g_assert_true(fm_nifti_write(path, v, p.nx, p.ny, p.nz, 1, shifted, NULL, 1, &error));
    g_assert_null(fm_roi_list_from_label_map(path, ds, NULL, TRUE, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, "lies elsewhere in space than liver.nii"));
    g_clear_error(&error);
    /* a TIFF label map has no geometry of its own: taken by its voxels */
    gsize sizes[3] = {(gsize)p.nx, (gsize)p.ny, (gsize)p.nz};
    g_autoptr(fm_dataset) plain = fm_dataset_new(FM_PIXEL_U8, 3, sizes, NULL);
    ((guint8 *)plain->data)[0] = 1;
    g_autofree char *tif = tmp_path("plain.tif");
    g_assert_true(fm_tiff_write_dataset(tif, plain, NULL, &error));
    g_autoptr(GPtrArray) rois = fm_roi_list_from_label_map(tif, ds, NULL, TRUE, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rois->len, ==, 1);
}

static void test_labels_syntax(void)
{
    static const char *const bad[] = {"1=aorta,2portal",
                                      "0=aorta",
                                      "x=aorta",
                                      "1=aorta,1=liver",
                                      "1=",
                                      "1=portal vein",
                                      "70000=aorta",
                                      "1=2liver",
                                      ",",
                                      ""};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GPtrArray) l = fm_roi_labels_parse(bad[i], NULL, &error);
        g_assert_null(l);
        g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
        g_assert_true(g_str_has_prefix(error->message, "--roi-labels"));
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) ok =
        fm_roi_labels_parse(" 1 = aorta ,2=portal_vein,3=liver", NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(ok->len, ==, 3);
    g_assert_cmpint(((fm_roi_label_role *)ok->pdata[0])->label, ==, 1);
    g_assert_cmpstr(((fm_roi_label_role *)ok->pdata[0])->role, ==, "aorta");
    /* An ITK-SNAP description as ITK-SNAP writes it: default names are no roles. */
    g_autofree char *desc = tmp_path("itksnap.txt");
    g_assert_true(g_file_set_contents(desc,
                                      "# ITK-SnAP Label Description File\n"
                                      "    0     0    0    0        0  0  0    \"Clear Label\"\n"
                                      "    1   255    0    0        1  1  1    \"Aorta\"\n"
                                      "    2     0  255    0        1  1  1    \"Portal Vein\"\n"
                                      "    3     0    0  255        1  1  1    \"Label 3\"\n",
                                      -1, NULL));
    g_autoptr(GPtrArray) from = fm_roi_labels_parse(desc, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(from->len, ==, 2);
    g_assert_cmpstr(((fm_roi_label_role *)from->pdata[0])->role, ==, "aorta");
    g_assert_cmpstr(((fm_roi_label_role *)from->pdata[1])->role, ==, "portal_vein");
    g_assert_true(g_file_set_contents(desc, "1 2 3\n", -1, NULL));
    g_assert_null(fm_roi_labels_parse(desc, NULL, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("fm-roi-labels-XXXXXX", NULL);
    g_test_add_func("/roi-labels/mask-json", test_mask_json);
    g_test_add_func("/roi-labels/labels-syntax", test_labels_syntax);
    if (FM_HAVE_NIFTI) {
        g_test_add_func("/roi-labels/roundtrip-nifti", test_roundtrip_nifti);
        g_test_add_func("/roi-labels/size-mismatch", test_size_mismatch);
        g_test_add_func("/roi-labels/bad-voxels-and-labels", test_bad_voxels_and_labels);
        g_test_add_func("/roi-labels/orientation-mismatch", test_orientation_mismatch);
    }
#if FM_HAVE_NIFTI
    g_test_add_func("/roi-labels/geometry-copied", test_geometry_copied);
    g_test_add_func("/roi-labels/roundtrip-tiff", test_roundtrip_tiff);
#endif
    int status = g_test_run();
    GDir *d = g_dir_open(tmp_dir, 0, NULL);
    const char *name;
    while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
        g_autofree char *f = g_build_filename(tmp_dir, name, NULL);
        g_unlink(f);
    }
    if (d != NULL)
        g_dir_close(d);
    g_rmdir(tmp_dir);
    g_free(tmp_dir);
    return status;
}
