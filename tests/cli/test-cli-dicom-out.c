/* fluxmap-cli run ... --export dicom (path in $FLUXMAP_CLI): Parametric Maps and a Segmentation
 * read back with pydicom (tests/cli/dicom_out_read.py) against the TIFF maps and the ROIs drawn,
 * their references to the source series, and dciodvfy (dicom3tools) on every object. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "app/core/io/dicom.h"
#include "app/core/io/dicom_write.h"
#include "app/core/io/frame_times.h"
#include "app/core/io/open.h"
#include "app/core/io/tiff.h"
#include "tests/cli/cli-test-util.h"

#define NX 20
#define NY 16
#define NZ 3
#define NT 14

/* Rectangles with whole-pixel corners: pixel (i, j) is inside when its centre is, so the mask
 * is exactly x0 <= i < x1, y0 <= j < y1 (the truth the Segmentation's frames must equal). */
typedef struct {
    const char *role;
    int x0, y0, x1, y1, slice; /* slice -1: every slice */
} rect_roi;

static const rect_roi rois[] = {
    {"aorta", 2, 2, 5, 5, -1},   {"portal_vein", 14, 3, 18, 6, 1}, {"portal_vein", 15, 4, 19, 8, 2},
    {"liver", 4, 8, 16, 15, -1}, {"liver", 1, 0, 3, 2, 0},
};
static const char *const roles[] = {"aorta", "portal_vein", "liver"}; /* order of appearance */

static char *script_path(void)
{
    return g_build_filename(FM_TEST_SOURCE_DIR, "dicom_out_read.py", NULL);
}

/* Debian's python3-pydicom lives in the system interpreter, which a pyenv or venv python3
 * earlier in PATH does not see. */
static const char *python3(void)
{
    return g_file_test("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE) ? "/usr/bin/python3"
                                                                      : "python3";
}

/* pydicom's reading of obj (JSON, parsed into *parser) and its frames in raw (g_free). */
static JsonObject *read_back(const char *obj, const char *source_dir, JsonParser **parser,
                             guint8 **raw, gsize *raw_len)
{
    g_autofree char *script = script_path();
    g_autofree char *raw_path = g_strconcat(obj, ".raw", NULL);
    const char *argv[] = {python3(), script, obj, raw_path, source_dir, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                               &err, &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("dicom_out_read.py %s failed: %s", obj, err);
    g_assert_true(g_file_get_contents(raw_path, (char **)raw, raw_len, NULL));
    return cli_test_parse_object(out, parser);
}

/* dciodvfy's verdict on path: asserts that it reports no error; warnings go to the log. */
static void assert_valid(const char *path)
{
    const char *argv[] = {"dciodvfy", path, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                               &err, &status, NULL));
    g_autofree char *all = g_strconcat(out, err, NULL);
    g_auto(GStrv) lines = g_strsplit(all, "\n", -1);
    int errors = 0;
    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, "Error")) {
            g_test_message("dciodvfy %s: %s", path, *l);
            errors++;
        } else if (g_str_has_prefix(*l, "Warning")) {
            g_test_message("dciodvfy %s: %s", path, *l);
        }
    }
    g_assert_cmpint(errors, ==, 0);
}

static gboolean have_dciodvfy(void)
{
    g_autofree char *p = g_find_program_in_path("dciodvfy");
    if (!p)
        g_test_skip("dciodvfy is not installed (Debian package dicom3tools; packaging/dev.sh "
                    "installs it): DICOM export not checked");
    return p != NULL;
}

/* The rectangles as a --roi file ("slice" only where one is set). */
static char *rois_json(void)
{
    GString *s = g_string_new("[");
    for (gsize i = 0; i < G_N_ELEMENTS(rois); i++) {
        g_string_append_printf(s,
                               "%s{\"kind\":\"rectangle\",\"name\":\"r%zu\",\"role\":\"%s\","
                               "\"points\":[[%d,%d],[%d,%d]]",
                               i ? "," : "", i, rois[i].role, rois[i].x0, rois[i].y0, rois[i].x1,
                               rois[i].y1);
        if (rois[i].slice >= 0)
            g_string_append_printf(s, ",\"slice\":%d", rois[i].slice);
        g_string_append_c(s, '}');
    }
    g_string_append_c(s, ']');
    return g_string_free(s, FALSE);
}

static const char *json_str(JsonObject *o, const char *key)
{
    return json_object_get_string_member(o, key);
}

/* The Parametric Map of one map against its TIFF: size, slices in order, every value (NaN as
 * NaN, else equal as float32), identity mapping, the unit's code. */
static void check_map(const char *dir, const char *name, const char *source_dir,
                      const char *ucum_code, JsonObject **info_out, JsonParser **parser)
{
    g_autofree char *dcm_name = g_strconcat(name, ".dcm", NULL);
    g_autofree char *tif_name = g_strconcat(name, ".tif", NULL);
    g_autofree char *dcm = g_build_filename(tmp_dir, dir, dcm_name, NULL);
    g_autofree char *tif = g_build_filename(tmp_dir, dir, tif_name, NULL);
    g_autofree guint8 *raw = NULL;
    gsize raw_len = 0;
    JsonObject *info = read_back(dcm, source_dir, parser, &raw, &raw_len);
    g_assert_cmpstr(json_str(info, "sop_class"), ==, "1.2.840.10008.5.1.4.1.1.30");
    g_autoptr(fm_dataset) truth = fm_tiff_read(tif, NULL);
    g_assert_nonnull(truth);
    int nz = fm_dataset_frames(truth), nx = (int)truth->dims[0].size, ny = (int)truth->dims[1].size;
    g_assert_cmpint(json_object_get_int_member(info, "columns"), ==, nx);
    g_assert_cmpint(json_object_get_int_member(info, "rows"), ==, ny);
    g_assert_cmpint(json_object_get_int_member(info, "frames"), ==, nz);
    g_assert_cmpuint(raw_len, ==, (gsize)nx * ny * nz * sizeof(float));
    const float *values = (const float *)raw, *expect = truth->data;
    gsize finite = 0;
    for (gsize i = 0; i < (gsize)nx * ny * nz; i++) {
        if (isnan(expect[i])) {
            g_assert_true(isnan(values[i]));
            continue;
        }
        finite++;
        g_assert_cmpfloat(values[i], ==, expect[i]);
    }
    g_assert_cmpuint(finite, >, 0);
    JsonArray *frames = json_object_get_array_member(info, "per_frame");
    for (int z = 0; z < nz && source_dir; z++) {
        JsonObject *f = json_array_get_object_element(frames, (guint)z);
        g_assert_cmpint(json_object_get_int_member(f, "slice"), ==, z);
        g_assert_true(json_object_get_boolean_member(f, "source_ok"));
    }
    g_assert_cmpfloat(json_object_get_double_member(info, "slope"), ==, 1.0);
    g_assert_cmpfloat(json_object_get_double_member(info, "intercept"), ==, 0.0);
    JsonArray *units = json_object_get_array_member(info, "units");
    g_assert_cmpstr(json_array_get_string_element(units, 0), ==, ucum_code);
    g_assert_cmpstr(json_array_get_string_element(units, 1), ==, "UCUM");
    g_assert_cmpstr(json_str(info, "lut_label"), ==, name);
    assert_valid(dcm);
    *info_out = info;
}

static void test_dicom_series(void)
{
    if (!fm_dicom_available() || !fm_dicom_write_available()) {
        g_test_skip("this build has no DICOM reader or writer (DCMTK)");
        return;
    }
    if (!have_dciodvfy())
        return;
    double times[NT];
    for (int t = 0; t < NT; t++)
        times[t] = 2.5 * t;
    fm_dicom_test_series spec = {.nx = NX,
                                 .ny = NY,
                                 .nz = NZ,
                                 .nt = NT,
                                 .frame_times_s = times,
                                 .slope = 0.5,
                                 .intercept = 10,
                                 .pixel_spacing_mm = {0.8, 0.9},
                                 .slice_spacing_mm = 2.5,
                                 .tilt_deg = 12,
                                 .shuffle_seed = 7};
    g_autofree char *series = cli_test_tmp_path("series");
    g_assert_true(fm_dicom_write_test_series(series, &spec, NULL));
    g_autofree char *roi_text = rois_json();
    g_autofree char *roi_file = cli_test_tmp_path("rois.json");
    g_assert_true(g_file_set_contents(roi_file, roi_text, -1, NULL));

    cli_result r =
        cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "series", "--roi", "rois.json", "-o",
                     "maps", "--no-catalogue", "--backend=cpu", "--export", "dicom", NULL);
    if (r.status != 0)
        g_test_message("stderr: %s", r.err);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "Parametric Maps"));
    g_assert_null(strstr(r.out, "new frame of reference"));
    cli_result_clear(&r);

    /* Maps: values, units, and the source's study, frame of reference and series. */
    static const struct {
        const char *name, *ucum;
    } maps[] = {{"ka", "ml/(100.g)/min"}, {"tau_a", "s"}, {"r2", "1"}, {"mtt", "s"}};
    g_autofree char *map_series = NULL;
    for (gsize m = 0; m < G_N_ELEMENTS(maps); m++) {
        JsonParser *parser = NULL;
        JsonObject *info = NULL;
        check_map("maps", maps[m].name, series, maps[m].ucum, &info, &parser);
        JsonObject *source = json_object_get_object_member(info, "source");
        g_assert_cmpint(json_object_get_int_member(source, "slices"), ==, NZ);
        g_assert_cmpstr(json_str(info, "study_uid"), ==, json_str(source, "study_uid"));
        g_assert_cmpstr(json_str(info, "frame_of_reference_uid"), ==,
                        json_str(source, "frame_of_reference_uid"));
        JsonArray *referenced = json_object_get_array_member(info, "referenced_series");
        g_assert_cmpuint(json_array_get_length(referenced), ==, 1);
        g_assert_cmpstr(json_array_get_string_element(referenced, 0), ==,
                        json_str(source, "series_uid"));
        g_assert_cmpstr(json_str(info, "series_uid"), !=, json_str(source, "series_uid"));
        /* the source's pixel spacing (row, column) and orientation (tilted 12 degrees) */
        JsonArray *spacing = json_object_get_array_member(info, "pixel_spacing");
        g_assert_cmpfloat_with_epsilon(json_array_get_double_element(spacing, 0), 0.9, 1e-9);
        g_assert_cmpfloat_with_epsilon(json_array_get_double_element(spacing, 1), 0.8, 1e-9);
        JsonArray *iop = json_object_get_array_member(info, "orientation");
        const double tilt = 12 * G_PI / 180, expect_iop[6] = {1, 0, 0, 0, cos(tilt), sin(tilt)};
        for (guint i = 0; i < 6; i++)
            g_assert_cmpfloat_with_epsilon(json_array_get_double_element(iop, i), expect_iop[i],
                                           1e-6);
        if (!map_series) /* every map of the run in one series */
            map_series = g_strdup(json_str(info, "series_uid"));
        g_assert_cmpstr(json_str(info, "series_uid"), ==, map_series);
        g_object_unref(parser);
    }

    /* The Segmentation: one segment per role, a frame per (segment, slice) equal to the
     * rectangles of that role drawn on that slice or on every slice. */
    g_autofree char *seg = g_build_filename(tmp_dir, "maps", "rois.seg.dcm", NULL);
    JsonParser *parser = NULL;
    g_autofree guint8 *raw = NULL;
    gsize raw_len = 0;
    JsonObject *info = read_back(seg, series, &parser, &raw, &raw_len);
    g_assert_cmpstr(json_str(info, "sop_class"), ==, "1.2.840.10008.5.1.4.1.1.66.4");
    g_assert_cmpstr(json_str(info, "frame_of_reference_uid"), ==, "1.2.826.0.1.3680043.10.1234.3");
    JsonArray *segments = json_object_get_array_member(info, "segments");
    g_assert_cmpuint(json_array_get_length(segments), ==, G_N_ELEMENTS(roles));
    for (guint s = 0; s < G_N_ELEMENTS(roles); s++)
        g_assert_cmpstr(json_str(json_array_get_object_element(segments, s), "label"), ==,
                        roles[s]);
    JsonArray *frames = json_object_get_array_member(info, "per_frame");
    guint n_frames = json_array_get_length(frames);
    g_assert_cmpuint(n_frames, ==, G_N_ELEMENTS(roles) * NZ);
    g_assert_cmpuint(raw_len, ==, (gsize)n_frames * NX * NY);
    gboolean seen[G_N_ELEMENTS(roles)][NZ] = {{FALSE}};
    for (guint f = 0; f < n_frames; f++) {
        JsonObject *fo = json_array_get_object_element(frames, f);
        int segment = (int)json_object_get_int_member(fo, "segment");
        int z = (int)json_object_get_int_member(fo, "slice");
        g_assert_cmpint(segment, >=, 1);
        g_assert_cmpint(segment, <=, (int)G_N_ELEMENTS(roles));
        g_assert_cmpint(z, >=, 0);
        g_assert_cmpint(z, <, NZ);
        g_assert_true(json_object_get_boolean_member(fo, "source_ok"));
        g_assert_false(seen[segment - 1][z]);
        seen[segment - 1][z] = TRUE;
        const char *role = roles[segment - 1];
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                gboolean inside = FALSE;
                for (gsize k = 0; k < G_N_ELEMENTS(rois); k++)
                    inside =
                        inside || (strcmp(rois[k].role, role) == 0 &&
                                   (rois[k].slice < 0 || rois[k].slice == z) && i >= rois[k].x0 &&
                                   i < rois[k].x1 && j >= rois[k].y0 && j < rois[k].y1);
                g_assert_cmpint(raw[(gsize)f * NX * NY + (gsize)j * NX + i], ==, inside ? 1 : 0);
            }
    }
    g_object_unref(parser);
    assert_valid(seg);
}

static void test_nifti_source(void)
{
    if (!fm_dicom_write_available()) {
        g_test_skip("this build has no DICOM writer (DCMTK's dcmpmap and dcmseg)");
        return;
    }
    if (!have_dciodvfy())
        return;
    cli_result r = cli_test_run(tmp_dir, NULL, "simulate", "dce", "--width=20", "--height=16",
                                "--slices=2", "--frames=20", "-o", "ph.nii", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "--roi", "ph.rois.json",
                     "-o", "nii-maps", "--no-catalogue", "--backend=cpu", "--export", "dicom",
                     "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    /* the note says the objects have their own frame of reference */
    g_assert_nonnull(strstr(r.out, "new study and frame of reference"));
    cli_result_clear(&r);
    JsonParser *parser = NULL;
    JsonObject *info = NULL;
    check_map("nii-maps", "kp", NULL, "ml/(100.g)/min", &info, &parser);
    g_assert_cmpuint(strlen(json_str(info, "frame_of_reference_uid")), >, 0);
    /* slice z sits where the NIfTI affine puts voxel (0, 0, z), RAS+ turned into DICOM's LPS */
    g_autofree char *nii = cli_test_tmp_path("ph.nii");
    g_autoptr(fm_dataset) source = fm_dataset_open(nii, NULL, NULL, NULL, NULL);
    g_assert_nonnull(source);
    double a[16];
    g_assert_true(fm_dataset_get_affine(source, a));
    JsonArray *frames = json_object_get_array_member(info, "per_frame");
    g_assert_cmpuint(json_array_get_length(frames), ==, 2);
    for (guint z = 0; z < 2; z++) {
        JsonArray *pos =
            json_object_get_array_member(json_array_get_object_element(frames, z), "position");
        for (guint i = 0; i < 3; i++) {
            double ras = a[i * 4 + 3] + z * a[i * 4 + 2];
            g_assert_cmpfloat_with_epsilon(json_array_get_double_element(pos, i),
                                           i < 2 ? -ras : ras, 1e-4);
        }
    }
    g_assert_cmpuint(json_array_get_length(json_object_get_array_member(info, "referenced_series")),
                     ==, 0);
    /* the Segmentation shares the maps' new frame of reference */
    g_autofree char *seg = g_build_filename(tmp_dir, "nii-maps", "rois.seg.dcm", NULL);
    JsonParser *seg_parser = NULL;
    g_autofree guint8 *raw = NULL;
    gsize raw_len = 0;
    JsonObject *seg_info = read_back(seg, NULL, &seg_parser, &raw, &raw_len);
    g_assert_cmpstr(json_str(seg_info, "frame_of_reference_uid"), ==,
                    json_str(info, "frame_of_reference_uid"));
    g_assert_cmpstr(json_str(seg_info, "study_uid"), ==, json_str(info, "study_uid"));
    assert_valid(seg);
    g_object_unref(seg_parser);
    g_object_unref(parser);
}

/* dicom_overlay.py with args (in tmp_dir): exits 0, or the test fails with its message; its
 * JSON (NULL when it printed none) is parsed into *parser. */
static JsonObject *overlay(JsonParser **parser, const char *const *args)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(argv, g_strdup(python3()));
    g_ptr_array_add(argv, g_build_filename(FM_TEST_SOURCE_DIR, "dicom_overlay.py", NULL));
    for (const char *const *a = args; *a; a++)
        g_ptr_array_add(argv, g_strdup(*a));
    g_ptr_array_add(argv, NULL);
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_assert_true(g_spawn_sync(tmp_dir, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                               &out, &err, &status, NULL));
    if (!g_spawn_check_wait_status(status, NULL))
        g_error("dicom_overlay.py %s: %s", args[0], err);
    return *out ? cli_test_parse_object(out, parser) : NULL;
}

static gint64 member_int(JsonObject *o, const char *key)
{
    g_assert_true(json_object_has_member(o, key));
    return json_object_get_int_member(o, key);
}

/* What a viewer shows: the Tofts phantom as an oblique DICOM series (dicom_overlay.py source)
 * with one L-shaped lesion of Ktrans 0.6/min on the last slice shown (the series is stacked
 * against its normal, so that is the first slice written), fitted and exported; every pixel of
 * the Parametric Map and of the Segmentation is followed through its own plane position,
 * orientation and pixel spacing to patient coordinates and from there into the source files'
 * own geometry. The map's pixels above 0.45/min are exactly the lesion's 16 voxels, the
 * segments exactly the ROIs' voxels; values, units and references as everywhere else. */
static void test_overlay(void)
{
    if (!fm_dicom_available() || !fm_dicom_write_available()) {
        g_test_skip("this build has no DICOM reader or writer (DCMTK)");
        return;
    }
    if (!have_dciodvfy())
        return;
    cli_result r =
        cli_test_run(tmp_dir, NULL, "simulate", "dce", "--model=tofts", "--width=24", "--height=20",
                     "--slices=4", "--frames=30", "--snr=0", "-o", "ov.nii", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    const char *source_args[] = {"source",        "ov.nii",       "ov-series",
                                 "ov-truth.json", "ov-rois.json", NULL};
    g_assert_null(overlay(NULL, source_args));
    r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "ov-series", "--roi", "ov-rois.json",
                     "--tr_ms=5", "--flip_deg=30", "--t10_s=1", "--t10_blood_s=1.44",
                     "--hematocrit=0.45", "-o", "ov-maps", "--backend=cpu", "--export", "dicom",
                     NULL);
    if (r.status != 0)
        g_test_message("stderr: %s", r.err);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);

    JsonParser *parser = NULL;
    const char *map_args[] = {"check", "ov-maps/ktrans.dcm", "ov-series", "ov-truth.json", "0.45",
                              NULL};
    JsonObject *map = overlay(&parser, map_args);
    g_assert_cmpint(member_int(map, "frames"), ==, 4);
    g_assert_cmpint(member_int(map, "slices"), ==, 4);
    g_assert_cmpint(member_int(map, "lesion_voxels"), ==, 16);
    /* noise-free, the 16-bit series' rounding only: the lesion's Ktrans within 2 % of 0.6/min */
    JsonArray *ktrans = json_object_get_array_member(map, "lesion_ktrans");
    g_assert_cmpfloat_with_epsilon(json_array_get_double_element(ktrans, 0), 0.6, 0.012);
    g_assert_cmpfloat_with_epsilon(json_array_get_double_element(ktrans, 1), 0.6, 0.012);
    g_object_unref(parser);

    const char *seg_args[] = {"check", "ov-maps/rois.seg.dcm", "ov-series", "ov-truth.json", NULL};
    JsonObject *seg = overlay(&parser, seg_args);
    g_assert_cmpint(member_int(seg, "tumour"), ==, 10);
    g_assert_cmpint(member_int(seg, "artery"), ==, 3 * 2 * 4);
    g_object_unref(parser);

    /* the stored floats are the TIFF maps' and the units UCUM's */
    g_autofree char *series = cli_test_tmp_path("ov-series");
    JsonObject *info = NULL;
    check_map("ov-maps", "ktrans", series, "/min", &info, &parser);
    g_autofree char *map_series = g_strdup(json_str(info, "series_uid"));
    g_object_unref(parser);
    check_map("ov-maps", "ve", series, "1", &info, &parser);
    g_object_unref(parser);
    g_autofree char *seg_path = cli_test_tmp_path("ov-maps/rois.seg.dcm");
    g_autofree guint8 *raw = NULL;
    gsize raw_len = 0;
    g_autofree char *seg_series =
        g_strdup(json_str(read_back(seg_path, NULL, &parser, &raw, &raw_len), "series_uid"));
    g_object_unref(parser);

    /* The run's catalogue entry lists every object: path, SOP class, series. */
    g_autofree char *dir = cli_test_tmp_path("ov-maps");
    g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
    g_autoptr(GHashTable) written = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (const char *name; (name = g_dir_read_name(listing));)
        if (g_str_has_suffix(name, ".dcm"))
            g_hash_table_add(written, g_build_filename(dir, name, NULL));
    g_assert_cmpuint(g_hash_table_size(written), >=, 3);
    r = cli_test_run(tmp_dir, NULL, "catalogue", "list", "--limit=1", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    JsonObject *list = cli_test_parse_object(r.out, &parser);
    JsonObject *run = json_array_get_object_element(json_object_get_array_member(list, "runs"), 0);
    g_assert_cmpstr(json_str(run, "method"), ==, "dce.tofts");
    JsonArray *exports = json_object_get_array_member(run, "exports");
    g_assert_cmpuint(json_array_get_length(exports), ==, g_hash_table_size(written));
    for (guint i = 0; i < json_array_get_length(exports); i++) {
        JsonObject *e = json_array_get_object_element(exports, i);
        const char *file = json_str(e, "file");
        gboolean is_seg = g_str_has_suffix(file, "/rois.seg.dcm");
        g_assert_true(g_hash_table_remove(written, file));
        g_assert_cmpstr(json_str(e, "format"), ==, "dicom");
        g_assert_cmpstr(json_str(e, "sop_class_uid"), ==,
                        is_seg ? FM_DICOM_SEGMENTATION_SOP_CLASS
                               : FM_DICOM_PARAMETRIC_MAP_SOP_CLASS);
        g_assert_cmpstr(json_str(e, "series_uid"), ==, is_seg ? seg_series : map_series);
    }
    g_assert_cmpuint(g_hash_table_size(written), ==, 0);
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT, member_int(run, "id"));
    g_object_unref(parser);
    cli_result_clear(&r);
    /* and `catalogue show` says so in words */
    r = cli_test_run(tmp_dir, NULL, "catalogue", "show", id, NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_autofree char *seg_line =
        g_strdup_printf("exported dicom Segmentation, series %s  %s", seg_series, seg_path);
    g_assert_nonnull(strstr(r.out, seg_line));
    g_assert_nonnull(strstr(r.out, "exported dicom Parametric Map"));
    cli_result_clear(&r);
}

static void test_bad_format(void)
{
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.dual_input", "ph.nii", "-o", "x",
                                "--export", "png", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "--export: 'png' is not 'dicom'"));
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fm-cli-dicom-out-XXXXXX")) {
        printf("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    g_setenv("FLUXMAP_DATA_DIR", tmp_dir, TRUE);
    g_test_add_func("/cli-dicom-out/dicom-series", test_dicom_series);
    g_test_add_func("/cli-dicom-out/nifti-source", test_nifti_source);
    g_test_add_func("/cli-dicom-out/overlay", test_overlay);
    g_test_add_func("/cli-dicom-out/bad-format", test_bad_format);
    return cli_test_finish(g_test_run());
}
