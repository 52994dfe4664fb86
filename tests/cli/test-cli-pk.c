/* The standard pharmacokinetic models on the command line: `simulate dce --model=M` writes a
 * phantom whose tissue curves come from the compartment equations integrated on a 0.01 s grid
 * (not from the kernels), and `run dce.M` on it with noise recovers every region's parameters
 * (median over the region) within OSIPI's tolerances; the artery and aorta roles give the same
 * maps; a missing arterial input says what to draw; CSV and population inputs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/dataset.h"
#include "app/core/io/dicom.h"
#include "app/core/io/nifti.h"
#include "app/core/io/tiff.h"
#include "app/core/roi.h"
#include "tests/cli/cli-test-util.h"

/* OSIPI's DCE model tolerances (|x - ref| <= a_tol + r_tol |ref|), by map name. */
static void tolerance_of(const char *name, double *a_tol, double *r_tol)
{
    *r_tol = 0.1;
    if (strcmp(name, "ve") == 0)
        *a_tol = 0.05, *r_tol = 0.0;
    else if (strcmp(name, "vp") == 0)
        *a_tol = 0.025, *r_tol = 0.0;
    else if (strcmp(name, "fp") == 0)
        *a_tol = 5.0;
    else if (strcmp(name, "delay") == 0)
        *a_tol = 1.0, *r_tol = 0.0;
    else /* ktrans, ps, kep */
        *a_tol = 0.005;
}

static int compare_floats(gconstpointer a, gconstpointer b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of map (OUTDIR/name.tif) over the ROI's pixels in every slice. */
static double region_median(const char *dir, const char *name, const fm_roi *roi)
{
    g_autofree char *path = g_strdup_printf("%s/%s/%s.tif", tmp_dir, dir, name);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) map = fm_tiff_read(path, &error);
    g_assert_no_error(error);
    int w = fm_dataset_width(map), h = fm_dataset_height(map);
    gsize planes = fm_dataset_n_elements(map) / ((gsize)w * h);
    g_autofree guint8 *mask = fm_roi_rasterise(roi, w, h);
    g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(float));
    for (gsize z = 0; z < planes; z++)
        for (gsize p = 0; p < (gsize)w * h; p++) {
            float x = (float)fm_dataset_value(map, z * w * h + p);
            if (mask[p] && isfinite(x))
                g_array_append_val(v, x);
        }
    g_assert_cmpuint(v->len, >, 0);
    g_array_sort(v, compare_floats);
    return g_array_index(v, float, v->len / 2);
}

/* Every region's truth against the region medians of the run in OUTDIR dir. */
static void check_recovery(const char *stem, const char *dir, const char *const *maps)
{
    g_autofree char *truth_path = g_strdup_printf("%s/%s.truth.json", tmp_dir, stem);
    g_autofree char *rois_path = g_strdup_printf("%s/%s.rois.json", tmp_dir, stem);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_assert_true(json_parser_load_from_file(parser, truth_path, NULL));
    JsonArray *regions =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "regions");
    g_autoptr(GPtrArray) rois = fm_roi_list_from_file(rois_path, NULL);
    g_assert_nonnull(rois);
    for (guint r = 0; r < json_array_get_length(regions); r++) {
        JsonObject *truth = json_array_get_object_element(regions, r);
        const fm_roi *roi = NULL;
        for (guint i = 0; i < rois->len; i++)
            if (g_strcmp0(((fm_roi *)g_ptr_array_index(rois, i))->name,
                          json_object_get_string_member(truth, "roi")) == 0)
                roi = g_ptr_array_index(rois, i);
        g_assert_nonnull(roi);
        for (int m = 0; maps[m]; m++) {
            double want = json_object_get_double_member(truth, maps[m]);
            double got = region_median(dir, maps[m], roi);
            double a_tol, r_tol;
            tolerance_of(maps[m], &a_tol, &r_tol);
            g_test_message("%s %s %s: median %.5g, truth %.5g", stem, roi->name, maps[m], got,
                           want);
            g_assert_cmpfloat(fabs(got - want), <=, a_tol + r_tol * fabs(want));
        }
    }
}

typedef struct {
    const char *model;
    const char *const *maps;
} model_case;

static const char *const tofts_maps[] = {"ktrans", "ve", "kep", NULL};
static const char *const etofts_maps[] = {"ktrans", "ve", "vp", "kep", NULL};
static const char *const patlak_maps[] = {"ktrans", "vp", NULL};
static const char *const cxm_maps[] = {"fp", "ps", "ve", "vp", NULL};
static const char *const cum_maps[] = {"fp", "ps", "vp", NULL};

static const model_case cases[] = {{"tofts", tofts_maps},
                                   {"extended_tofts", etofts_maps},
                                   {"patlak", patlak_maps},
                                   {"2cxm", cxm_maps},
                                   {"2cum", cum_maps}};

static void simulate(const char *model, const char *stem)
{
    g_autofree char *opt = g_strdup_printf("--model=%s", model);
    g_autofree char *out = g_strdup_printf("%s.nii", stem);
    cli_result r = cli_test_run(tmp_dir, NULL, "simulate", "dce", opt, "--snr=100", "--seed=7",
                                "-o", out, NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
}

static void test_model(gconstpointer data)
{
    /* SNR 100 (baseline tissue signal over noise sd), 2 s frames over 5 minutes, SPGR signal
     * with T10 blood 1.44 s and tissue 1 s (as the phantom: TR and flip angle given, NIfTI has
     * no header for them), Hct 0.45, the artery ROI's input. */
    const model_case *c = data;
    g_autofree char *stem = g_strdup_printf("pk-%s", c->model);
    g_autofree char *method = g_strdup_printf("dce.%s", c->model);
    g_autofree char *nii = g_strdup_printf("%s.nii", stem);
    g_autofree char *rois = g_strdup_printf("%s.rois.json", stem);
    g_autofree char *dir = g_strdup_printf("maps-%s", c->model);
    simulate(c->model, stem);
    cli_result r =
        cli_test_run(tmp_dir, NULL, "run", method, nii, "--roi", rois, "--tr_ms=5", "--flip_deg=30",
                     "--t10_s=1", "--t10_blood_s=1.44", "--hematocrit=0.45", "-o", dir,
                     "--no-catalogue", "--backend=cpu", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    /* the note names the input, the haematocrit, the T10s, TR and flip angle */
    g_assert_nonnull(strstr(r.out, "artery ROI (16 voxels, T10 blood 1.44 s)"));
    g_assert_nonnull(strstr(r.out, "plasma = blood / (1 - 0.45)"));
    g_assert_nonnull(strstr(r.out, "T10 tissue 1 s, TR 5 ms (given), flip angle 30 deg (given)"));
    g_assert_nonnull(strstr(r.out, "\"aic\""));
    g_assert_nonnull(strstr(r.out, "\"r2\""));
    g_assert_null(strstr(r.out, "\"delay\"")); /* not fitted, no map */
    cli_result_clear(&r);
    check_recovery(stem, dir, c->maps);
}

/* The maps of two runs (OUTDIR a_dir and b_dir) hold the same values, voxel for voxel, and some
 * voxels were fitted. */
static void assert_same_maps(const char *a_dir, const char *b_dir, const char *const *maps)
{
    for (int m = 0; maps[m]; m++) {
        g_autofree char *a = g_strdup_printf("%s/%s/%s.tif", tmp_dir, a_dir, maps[m]);
        g_autofree char *b = g_strdup_printf("%s/%s/%s.tif", tmp_dir, b_dir, maps[m]);
        g_autoptr(fm_dataset) da = fm_tiff_read(a, NULL);
        g_autoptr(fm_dataset) db = fm_tiff_read(b, NULL);
        g_assert_nonnull(da);
        g_assert_nonnull(db);
        g_assert_cmpuint(fm_dataset_n_elements(da), ==, fm_dataset_n_elements(db));
        gsize fitted = 0;
        for (gsize i = 0; i < fm_dataset_n_elements(da); i++) {
            double x = fm_dataset_value(da, i), y = fm_dataset_value(db, i);
            g_assert_true((isnan(x) && isnan(y)) || x == y);
            fitted += !isnan(x);
        }
        g_assert_cmpuint(fitted, >, 0);
    }
}

static void test_artery_aorta_same(void)
{
    /* The liver model's aorta role is the same input: the same maps, value for value. */
    simulate("extended_tofts", "pk-roles");
    g_autofree char *path = cli_test_tmp_path("pk-roles.rois.json");
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_autofree char *aorta_path = cli_test_tmp_path("pk-roles.aorta.json");
    g_auto(GStrv) parts = g_strsplit(text, "\"role\":\"artery\"", -1);
    g_assert_cmpuint(g_strv_length(parts), ==, 2);
    g_autofree char *swapped = g_strjoinv("\"role\":\"aorta\"", parts);
    g_assert_true(g_file_set_contents(aorta_path, swapped, -1, NULL));
    const char *files[2] = {"pk-roles.rois.json", "pk-roles.aorta.json"};
    const char *dirs[2] = {"maps-artery", "maps-aorta"};
    for (int i = 0; i < 2; i++) {
        cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.extended_tofts", "pk-roles.nii",
                                    "--roi", files[i], "--tr_ms=5", "--flip_deg=30", "-o", dirs[i],
                                    "--no-catalogue", "--backend=cpu", NULL);
        g_assert_cmpint(r.status, ==, 0);
        cli_result_clear(&r);
    }
    static const char *const maps[] = {"ktrans", "ve", "vp", "aic", NULL};
    assert_same_maps("maps-artery", "maps-aorta", maps);
}

/* The standard models read what dce.dual_input reads: the phantom as a TIFF stack (pages z
 * fastest, written by Fluxmap's TIFF writer), its slices and frame interval from the file's
 * description or from --stack_slices and --frame_interval_s, gives the NIfTI run's maps, value
 * for value. */
static void test_tiff_stack(void)
{
    cli_result r = cli_test_run(tmp_dir, NULL, "simulate", "dce", "--model=extended_tofts",
                                "--slices=2", "--frames=60", "--frame_interval_s=3", "--snr=100",
                                "--seed=5", "-o", "pk-stack.nii", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    g_autofree char *nii = cli_test_tmp_path("pk-stack.nii");
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_dataset) ds = fm_nifti_read(nii, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ds->n_dims, ==, 4);
    g_autofree char *described = cli_test_tmp_path("pk-stack.tif");
    g_autofree char *bare = cli_test_tmp_path("pk-stack-bare.tif");
    g_assert_true(fm_tiff_write_dataset(described, ds, "slices=2; frame_interval_s=3", &error));
    g_assert_true(fm_tiff_write_dataset(bare, ds, "no structure said", &error));
    struct {
        const char *input, *dir, *slices, *interval;
    } runs[] = {
        {"pk-stack.nii", "maps-stack-nii", NULL, NULL},
        {"pk-stack.tif", "maps-stack-tif", NULL, NULL},
        {"pk-stack-bare.tif", "maps-stack-bare", "--stack_slices=2", "--frame_interval_s=3"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(runs); i++) {
        r = cli_test_run(tmp_dir, NULL, "run", "dce.extended_tofts", runs[i].input, "--roi",
                         "pk-stack.rois.json", "--tr_ms=5", "--flip_deg=30", "-o", runs[i].dir,
                         "--no-catalogue", "--backend=cpu", runs[i].slices, runs[i].interval, NULL);
        g_test_message("%s: %s", runs[i].input, r.err);
        g_assert_cmpint(r.status, ==, 0);
        cli_result_clear(&r);
    }
    static const char *const maps[] = {"ktrans", "ve", "vp", "kep", "aic", NULL};
    assert_same_maps("maps-stack-nii", "maps-stack-tif", maps);
    assert_same_maps("maps-stack-nii", "maps-stack-bare", maps);
    check_recovery("pk-stack", "maps-stack-tif", etofts_maps);
}

/* No tissue ROI: the threshold picks the enhancing voxels, and the artery ROI's, which enhance
 * most, are left out (they are the input, not tissue). Fitted are exactly the voxels the note
 * counts, all inside the phantom's tissue regions, none in the artery. */
static void test_threshold_leaves_artery_out(void)
{
    simulate("tofts", "pk-threshold");
    g_autofree char *path = cli_test_tmp_path("pk-threshold.rois.json");
    g_autoptr(GPtrArray) rois = fm_roi_list_from_file(path, NULL);
    g_assert_nonnull(rois);
    g_autoptr(GPtrArray) artery_only = g_ptr_array_new();
    for (guint i = 0; i < rois->len; i++)
        if (g_strcmp0(((fm_roi *)rois->pdata[i])->role, "artery") == 0)
            g_ptr_array_add(artery_only, rois->pdata[i]);
    g_assert_cmpuint(artery_only->len, ==, 1);
    g_autofree char *artery_path = cli_test_tmp_path("pk-threshold.artery.json");
    g_assert_true(fm_roi_list_to_file(artery_path, artery_only, NULL));
    cli_result r =
        cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-threshold.nii", "--roi",
                     "pk-threshold.artery.json", "--tr_ms=5", "--flip_deg=30", "-o",
                     "maps-threshold", "--no-catalogue", "--backend=cpu", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    const char *counted = strstr(r.out, "tofts fitted to ");
    g_assert_nonnull(counted);
    guint64 n_note = g_ascii_strtoull(counted + strlen("tofts fitted to "), NULL, 10);
    gboolean said =
        strstr(r.out, "(no tissue ROI; 16 voxels of the arterial ROI left out)") != NULL;
    cli_result_clear(&r);

    g_autofree char *ktrans = g_strdup_printf("%s/maps-threshold/ktrans.tif", tmp_dir);
    g_autoptr(fm_dataset) map = fm_tiff_read(ktrans, NULL);
    g_assert_nonnull(map);
    int w = fm_dataset_width(map), h = fm_dataset_height(map);
    gsize plane = (gsize)w * h, planes = fm_dataset_n_elements(map) / plane;
    g_autofree guint8 *artery = fm_roi_rasterise(artery_only->pdata[0], w, h);
    g_autofree guint8 *tissue = g_new0(guint8, plane);
    for (guint i = 0; i < rois->len; i++) {
        const fm_roi *roi = rois->pdata[i];
        if (g_strcmp0(roi->role, "tissue") != 0)
            continue;
        g_autofree guint8 *m = fm_roi_rasterise(roi, w, h);
        for (gsize p = 0; p < plane; p++)
            tissue[p] |= m[p];
    }
    gsize fitted = 0, in_artery = 0, outside_tissue = 0;
    for (gsize z = 0; z < planes; z++)
        for (gsize p = 0; p < plane; p++) {
            if (isnan(fm_dataset_value(map, z * plane + p)))
                continue;
            fitted++;
            in_artery += artery[p];
            outside_tissue += !tissue[p];
        }
    g_test_message("%" G_GSIZE_FORMAT " voxels fitted, the note says %" G_GUINT64_FORMAT, fitted,
                   n_note);
    g_assert_cmpuint(in_artery, ==, 0);
    g_assert_cmpuint(outside_tissue, ==, 0);
    g_assert_cmpuint(fitted, ==, n_note);
    g_assert_cmpuint(fitted, >, 0);
    g_assert_true(said); /* the note says what was left out */
}

/* A population input is in mM: beside tissue curves in relative enhancement or HU the run is
 * refused (exit 2) with what to give instead; an ROI input in the same units as the tissue
 * runs. */
static void test_population_units(void)
{
    simulate("tofts", "pk-units");
    static const char *const refused[][2] = {
        {"--aif=parker", "--conversion=enhancement"},
        {"--aif=georgiou", "--conversion=enhancement"},
        {"--aif=parker", "--conversion=ct"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(refused); i++) {
        cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-units.nii", "--roi",
                                    "pk-units.rois.json", refused[i][0], refused[i][1], "-o",
                                    "maps-units", "--no-catalogue", "--backend=cpu", NULL);
        g_test_message("%s %s: %s", refused[i][0], refused[i][1], r.err);
        g_assert_cmpint(r.status, ==, 2);
        g_assert_nonnull(strstr(r.err, "population input is a concentration in mM"));
        g_assert_nonnull(strstr(r.err, "Give --conversion=spgr"));
        g_assert_nonnull(strstr(r.err, strcmp(refused[i][1], "--conversion=ct") == 0
                                           ? "HU above the baseline"
                                           : "relative enhancement S/S0 - 1"));
        cli_result_clear(&r);
    }
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-units.nii", "--roi",
                                "pk-units.rois.json", "--aif=roi", "--conversion=enhancement", "-o",
                                "maps-units", "--no-catalogue", "--backend=cpu", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
}

/* dce.t1_vfa on the command line with one DICOM series per flip angle given as several INPUTs
 * (the T10 map of the standard models): the series are assembled by their FlipAngle, TR from
 * the headers, and T1 is the phantom's (every series holds the same stored pattern rescaled to
 * SPGR with T1 1.3 s at its angle). */
static void test_t1_vfa_series_inputs(void)
{
    if (!fm_dicom_available()) {
        g_test_skip("built without DCMTK");
        return;
    }
    static const double flips[] = {15, 3, 25, 8}; /* given in this order */
    const double times[1] = {0}, t1 = 1.3, tr_s = 0.005;
    g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
    for (gsize a = 0; a < G_N_ELEMENTS(flips); a++) {
        double e = exp(-tr_s / t1), rad = flips[a] * G_PI / 180.0;
        double slope = sin(rad) * (1 - e) / (1 - cos(rad) * e);
        g_autofree char *uid = g_strdup_printf("1.2.826.0.1.3680043.8.498.4343.%d", (int)a);
        g_autofree char *dir = g_strdup_printf("%s/vfa-fa%d", tmp_dir, (int)a);
        fm_dicom_test_series spec = {.nx = 8,
                                     .ny = 6,
                                     .nz = 2,
                                     .nt = 1,
                                     .frame_times_s = times,
                                     .slope = slope,
                                     .intercept = 100 * slope,
                                     .series_uid = uid,
                                     .time_tag = FM_DICOM_TEST_TIME_ACQUISITION_TIME,
                                     .flip_angles_deg = &flips[a],
                                     .tr_ms = 1000 * tr_s};
        g_autoptr(GError) error = NULL;
        g_assert_true(fm_dicom_write_test_series(dir, &spec, &error));
        g_ptr_array_add(argv, g_strdup_printf("vfa-fa%d", (int)a));
    }
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.t1_vfa", argv->pdata[0], argv->pdata[1],
                                argv->pdata[2], argv->pdata[3], "-o", "maps-vfa", "--no-catalogue",
                                "--json", NULL);
    g_test_message("%s", r.err);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "flip angles 3,8,15,25 deg (DICOM headers), TR 5 ms (DICOM "
                                   "headers); one DICOM series per flip angle (4 series)"));
    cli_result_clear(&r);
    g_autofree char *path = g_strdup_printf("%s/maps-vfa/t1.tif", tmp_dir);
    g_autoptr(fm_dataset) map = fm_tiff_read(path, NULL);
    g_assert_nonnull(map);
    g_assert_cmpuint(fm_dataset_n_elements(map), ==, 8 * 6 * 2);
    for (gsize v = 0; v < fm_dataset_n_elements(map); v++)
        g_assert_cmpfloat(fabs(fm_dataset_value(map, v) / t1 - 1), <, 1e-5);
}

static void test_missing_input(void)
{
    /* Only tissue ROIs: exit 2, and the message says what to do. */
    simulate("tofts", "pk-missing");
    g_autofree char *rois = cli_test_tmp_path("tissue-only.json");
    g_assert_true(g_file_set_contents(
        rois,
        "[{\"kind\":\"rectangle\",\"name\":\"t\",\"role\":\"tissue\",\"points\":[[8,8],[14,"
        "14]]}]",
        -1, NULL));
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-missing.nii", "--roi",
                                "tissue-only.json", "--tr_ms=5", "--flip_deg=30", "-o", "m",
                                "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "draw an ROI with the role artery, or give --aif=parker"));
    cli_result_clear(&r);
    /* SPGR without TR from the user or the file: exit 2, the parameter named. */
    r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-missing.nii", "--roi",
                     "pk-missing.rois.json", "-o", "m", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "give --tr_ms"));
    cli_result_clear(&r);
}

static void test_csv_and_population(void)
{
    /* The true plasma input as CSV: Tofts recovered as with the ROI. Parker's population curve
     * (the phantom's own input shape) placed at the arrival found in the tissue, the delay
     * fitted: recovered too, and the delay map is written. */
    simulate("tofts", "pk-inputs");
    cli_result r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-inputs.nii", "--roi",
                                "pk-inputs.rois.json", "--aif=csv", "--input_csv",
                                "pk-inputs.inputs.csv", "--tr_ms=5", "--flip_deg=30", "-o",
                                "maps-csv", "--no-catalogue", "--backend=cpu", NULL);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    check_recovery("pk-inputs", "maps-csv", tofts_maps);
    r = cli_test_run(tmp_dir, NULL, "run", "dce.tofts", "pk-inputs.nii", "--roi",
                     "pk-inputs.rois.json", "--aif=parker", "--fit_delay=true", "--tr_ms=5",
                     "--flip_deg=30", "-o", "maps-parker", "--no-catalogue", "--backend=cpu",
                     "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "Parker population curve, its bolus arriving at"));
    g_assert_nonnull(strstr(r.out, "\"delay\""));
    cli_result_clear(&r);
    static const char *const maps[] = {"ktrans", "ve", "delay", NULL};
    check_recovery("pk-inputs", "maps-parker", maps);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fm-cli-pk-XXXXXX")) {
        printf("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    g_setenv("FLUXMAP_DATA_DIR", tmp_dir, TRUE);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *name = g_strdup_printf("/cli-pk/recover/%s", cases[i].model);
        g_test_add_data_func(name, &cases[i], test_model);
    }
    g_test_add_func("/cli-pk/artery-aorta-same", test_artery_aorta_same);
    g_test_add_func("/cli-pk/tiff-stack", test_tiff_stack);
    g_test_add_func("/cli-pk/threshold-leaves-artery-out", test_threshold_leaves_artery_out);
    g_test_add_func("/cli-pk/population-units", test_population_units);
    g_test_add_func("/cli-pk/t1-vfa-series-inputs", test_t1_vfa_series_inputs);
    g_test_add_func("/cli-pk/missing-input", test_missing_input);
    g_test_add_func("/cli-pk/csv-and-population", test_csv_and_population);
    return cli_test_finish(g_test_run());
}
