/* Core unit tests: parameter parsing, ROI rasterisation and statistics, colormaps, percentile
 * ranges, datasets and map statistics, and the TIFF/PNG/CSV exports. */
#include <cairo.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/core/dataset.h"
#include "app/core/error.h"
#include "app/core/export.h"
#include "app/core/io/tiff.h"
#include "app/core/json_text.h"
#include "app/core/method.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "app/core/roi.h"

static const char *const shape_choices[] = {"valid", "zero", NULL};
static const fm_param_spec test_specs[] = {
    {.key = "window",
     .type = FM_PARAM_INT,
     .default_value = 5,
     .min = 3,
     .max = 15,
     .unit = "px",
     .odd_only = TRUE},
    {.key = "exposure_ms",
     .type = FM_PARAM_DOUBLE,
     .default_value = 10,
     .min = 0.001,
     .max = 10000,
     .unit = "ms"},
    {.key = "border", .type = FM_PARAM_ENUM, .default_choice = "valid", .choices = shape_choices},
    {.key = "verbose", .type = FM_PARAM_BOOL, .default_value = 0},
};

static void expect_param_error(fm_params *p, const char *key, const char *text, const char *message)
{
    g_autoptr(GError) error = NULL;
    g_assert_false(fm_params_set_from_string(p, key, text, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    if (message)
        g_assert_cmpstr(error->message, ==, message);
}

static void test_params_parse(void)
{
    g_autoptr(fm_params) p = fm_params_new(test_specs, G_N_ELEMENTS(test_specs));
    g_assert_cmpint(fm_params_get_int(p, "window"), ==, 5);
    g_assert_cmpfloat(fm_params_get_double(p, "exposure_ms"), ==, 10.0);
    g_assert_cmpstr(fm_params_get_choice(p, "border"), ==, "valid");
    g_assert_false(fm_params_get_bool(p, "verbose"));

    g_assert_true(fm_params_set_from_string(p, "window", "7", NULL));
    g_assert_cmpint(fm_params_get_int(p, "window"), ==, 7);
    g_assert_true(fm_params_set_from_string(p, "exposure_ms", "1e-3", NULL));
    g_assert_cmpfloat(fm_params_get_double(p, "exposure_ms"), ==, 0.001);
    g_assert_true(fm_params_set_from_string(p, "border", "zero", NULL));
    g_assert_true(fm_params_set_from_string(p, "verbose", "true", NULL));
    g_assert_true(fm_params_get_bool(p, "verbose"));

    expect_param_error(p, "window", "4", "window: 4 is not odd");
    expect_param_error(p, "window", "17", "window: 17 is outside 3..15 px");
    expect_param_error(p, "window", "1", "window: 1 is outside 3..15 px");
    expect_param_error(p, "window", "5x", NULL);
    expect_param_error(p, "window", "5.0", NULL);
    expect_param_error(p, "window", "", NULL);
    expect_param_error(p, "exposure_ms", "-1", "exposure_ms: -1 is outside 0.001..10000 ms");
    expect_param_error(p, "exposure_ms", "0", NULL);
    expect_param_error(p, "exposure_ms", "nan", NULL);
    expect_param_error(p, "exposure_ms", "inf", NULL);
    expect_param_error(p, "exposure_ms", "10ms", NULL);
    expect_param_error(p, "border", "mirror", "border: 'mirror' is not one of valid, zero");
    expect_param_error(p, "verbose", "maybe", NULL);
    expect_param_error(p, "foo", "1", "unknown parameter 'foo'");
    /* Failed sets leave the earlier values alone. */
    g_assert_cmpint(fm_params_get_int(p, "window"), ==, 7);
    g_assert_cmpfloat(fm_params_get_double(p, "exposure_ms"), ==, 0.001);

    g_autofree char *w = fm_params_to_string(p, "window");
    g_autofree char *e = fm_params_to_string(p, "exposure_ms");
    g_autofree char *b = fm_params_to_string(p, "border");
    g_assert_cmpstr(w, ==, "7");
    g_assert_cmpstr(e, ==, "0.001");
    g_assert_cmpstr(b, ==, "zero");

    g_autoptr(GError) error = NULL;
    g_assert_false(fm_params_set_double(p, "window", 9.5, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);

    /* integers in exponent form, as large counts are written; still whole and in range */
    g_assert_true(fm_params_set_from_string(p, "window", "1.3e1", NULL));
    g_assert_cmpint(fm_params_get_int(p, "window"), ==, 13);
    expect_param_error(p, "window", "1.25e1", "window: '1.25e1' is not an integer");
}

/* An INT beyond int's range (MCML's photons): 1e11 is kept exactly, written back as digits. */
static void test_params_int64(void)
{
    g_autoptr(fm_params) p = fm_method_default_params(fm_method_find("mcml.run"));
    g_assert_true(fm_params_set_from_string(p, "photons", "1e11", NULL));
    g_assert_cmpint(fm_params_get_int64(p, "photons"), ==, G_GINT64_CONSTANT(100000000000));
    g_autofree char *text = fm_params_to_string(p, "photons");
    g_assert_cmpstr(text, ==, "100000000000");
    g_autofree char *json = fm_params_to_json(p);
    g_assert_nonnull(strstr(json, "\"photons\":100000000000"));
    g_assert_true(fm_params_set_from_string(p, "photons", "123456789012345", NULL));
    g_assert_cmpint(fm_params_get_int64(p, "photons"), ==, G_GINT64_CONSTANT(123456789012345));
    expect_param_error(p, "photons", "1e16", "photons: 1e16 is outside 0..9e+15 photons");
}

static void test_params_json(void)
{
    g_autoptr(fm_params) p = fm_params_new(test_specs, G_N_ELEMENTS(test_specs));
    g_autofree char *defaults = fm_params_to_json(p);
    g_assert_cmpstr(defaults, ==,
                    "{\"window\":5,\"exposure_ms\":10,\"border\":\"valid\",\"verbose\":false}");
    g_assert_true(fm_params_set_from_string(p, "window", "11", NULL));
    g_assert_true(fm_params_set_from_string(p, "exposure_ms", "2.5", NULL));
    g_assert_true(fm_params_set_from_string(p, "border", "zero", NULL));
    g_autofree char *json = fm_params_to_json(p);

    g_autoptr(fm_params) q = fm_params_new(test_specs, G_N_ELEMENTS(test_specs));
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_params_set_from_json(q, json, &error));
    g_assert_no_error(error);
    for (gsize i = 0; i < G_N_ELEMENTS(test_specs); i++) {
        g_autofree char *a = fm_params_to_string(p, test_specs[i].key);
        g_autofree char *b = fm_params_to_string(q, test_specs[i].key);
        g_assert_cmpstr(a, ==, b);
    }
    /* A bad member rejects the whole object and changes nothing. */
    g_assert_false(fm_params_set_from_json(q, "{\"window\":3,\"exposure_ms\":-2}", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
    g_clear_error(&error);
    g_assert_cmpint(fm_params_get_int(q, "window"), ==, 11);
    g_assert_false(fm_params_set_from_json(q, "{\"window\":\"big\"}", &error));
    g_clear_error(&error);
    g_assert_false(fm_params_set_from_json(q, "[1,2]", &error));
    g_clear_error(&error);
    g_assert_false(fm_params_set_from_json(q, "{\"nope\":1}", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_PARAM);
}

static void test_method_registry(void)
{
    int n = 0;
    const fm_method *const *all = fm_methods_all(&n);
    /* LSI comes first; every id is unique, "<family>.<name>", and found again by id. */
    g_assert_cmpint(n, >=, 3);
    g_assert_cmpstr(all[0]->id, ==, "lsi.spatial");
    g_assert_cmpstr(all[1]->id, ==, "lsi.temporal");
    g_assert_cmpstr(all[2]->id, ==, "lsi.spatiotemporal");
    for (int i = 0; i < n; i++) {
        g_assert_true(fm_method_find(all[i]->id) == all[i]);
        g_assert_true(g_str_has_prefix(all[i]->id, all[i]->family));
        g_assert_cmpint(all[i]->id[strlen(all[i]->family)], ==, '.');
        g_assert_nonnull(all[i]->run);
        g_assert_cmpint(all[i]->n_outputs, >, 0);
    }
    g_assert_null(fm_method_find("lsi.nope"));

    g_autoptr(fm_params) p = fm_method_default_params(fm_method_find("lsi.spatial"));
    g_assert_cmpint(fm_params_get_int(p, "window"), ==, 5);
    expect_param_error(p, "foo", "1", "unknown parameter 'foo' for lsi.spatial");
    expect_param_error(p, "window", "4", "window: 4 is not odd");
    expect_param_error(p, "exposure_ms", "-1", "exposure_ms: -1 is outside 0.001..10000 ms");

    /* Kernel status codes map to the documented error codes. */
    struct {
        int status;
        FmErrorCode code;
    } map[] = {
        {FM_ERR_INVALID_ARG, FM_ERROR_BAD_PARAM}, {FM_ERR_NO_DEVICE, FM_ERROR_DEVICE},
        {FM_ERR_DEVICE, FM_ERROR_DEVICE},         {FM_ERR_CANCELLED, FM_ERROR_CANCELLED},
        {FM_ERR_NO_MEMORY, FM_ERROR_COMPUTE},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(map); i++) {
        g_autoptr(GError) error = NULL;
        fm_method_set_kernel_error(&error, map[i].status, "why");
        g_assert_error(error, FM_ERROR, (int)map[i].code);
        g_assert_cmpstr(error->message, ==, "why");
    }
}

static void test_roi_rasterise(void)
{
    /* Rectangle: whole-pixel corners cover exactly their area. */
    g_autoptr(fm_roi) rect = fm_roi_new_rectangle("r", 10, 5, 30, 20);
    g_assert_cmpuint(fm_roi_count_pixels(rect, 64, 64), ==, 300);
    /* Fractional corners: centres 10.5..20.5 (11 columns) and 6.5..8.5 (3 rows). */
    g_autoptr(fm_roi) frac = fm_roi_new_rectangle("f", 20.6, 9.4, 10.2, 5.7);
    g_assert_cmpuint(fm_roi_count_pixels(frac, 64, 64), ==, 33);
    /* Clipped by the image edge. */
    g_autoptr(fm_roi) clip = fm_roi_new_rectangle("c", -5, -5, 5, 5);
    g_assert_cmpuint(fm_roi_count_pixels(clip, 64, 64), ==, 25);

    /* Ellipse 40x30: pi*a*b = pi*20*15 = 942.48 within 2 %. */
    g_autoptr(fm_roi) ell = fm_roi_new_ellipse("e", 10, 10, 50, 40);
    double area = G_PI * 20 * 15;
    gsize n = fm_roi_count_pixels(ell, 64, 64);
    g_test_message("ellipse pixels %" G_GSIZE_FORMAT " vs area %.2f", n, area);
    g_assert_cmpfloat(fabs((double)n - area) / area, <, 0.02);

    /* Right triangle with legs 40: area 800; exactly the 780 centres with x + y < 40. */
    g_autoptr(fm_roi) tri = fm_roi_new(FM_ROI_POLYGON, "t");
    fm_roi_add_point(tri, 0, 0);
    fm_roi_add_point(tri, 40, 0);
    fm_roi_add_point(tri, 0, 40);
    g_assert_cmpuint(fm_roi_count_pixels(tri, 64, 64), ==, 780);

    /* Concave L shape, area 300 on whole-pixel vertices. */
    g_autoptr(fm_roi) ell_shape = fm_roi_new(FM_ROI_POLYGON, "L");
    double pts[][2] = {{0, 0}, {20, 0}, {20, 10}, {10, 10}, {10, 20}, {0, 20}};
    for (gsize i = 0; i < G_N_ELEMENTS(pts); i++)
        fm_roi_add_point(ell_shape, pts[i][0] + 3, pts[i][1] + 4);
    g_autofree guint8 *mask = fm_roi_rasterise(ell_shape, 64, 64);
    gsize count = 0;
    for (int i = 0; i < 64 * 64; i++)
        count += mask[i];
    g_assert_cmpuint(count, ==, 300);
    g_assert_cmpint(mask[(4 + 15) * 64 + (3 + 15)], ==, 0); /* the notch is outside */
    g_assert_cmpint(mask[(4 + 5) * 64 + (3 + 15)], ==, 1);

    /* Self-intersecting bow-tie: even-odd keeps both lobes. */
    g_autoptr(fm_roi) bow = fm_roi_new(FM_ROI_POLYGON, "bow");
    fm_roi_add_point(bow, 0, 0);
    fm_roi_add_point(bow, 20, 20);
    fm_roi_add_point(bow, 20, 0);
    fm_roi_add_point(bow, 0, 20);
    gsize nb = fm_roi_count_pixels(bow, 64, 64);
    g_assert_cmpfloat(fabs((double)nb - 200.0), <=, 20.0); /* two triangles of 100 */
}

static void test_roi_statistics(void)
{
    enum { W = 32, H = 16 };
    float map[W * H];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            map[y * W + x] = (float)x;
    g_autoptr(fm_roi) rect = fm_roi_new_rectangle("r", 10, 0, 20, 10);
    fm_roi_stats s = fm_roi_statistics(rect, map, W, H);
    /* Values 10..19, ten rows: mean 14.5, sample variance 82.5 * 10 / 99. */
    g_assert_cmpuint(s.n, ==, 100);
    g_assert_cmpfloat_with_epsilon(s.mean, 14.5, 1e-12);
    g_assert_cmpfloat_with_epsilon(s.sd, sqrt(825.0 / 99.0), 1e-9);
    g_assert_cmpfloat(s.min, ==, 10.0);
    g_assert_cmpfloat(s.max, ==, 19.0);
    map[5 * W + 12] = NAN;
    s = fm_roi_statistics(rect, map, W, H);
    g_assert_cmpuint(s.n, ==, 99);
    g_assert_cmpfloat_with_epsilon(s.mean, (1450.0 - 12.0) / 99.0, 1e-12);
    g_autoptr(fm_roi) outside = fm_roi_new_rectangle("o", 100, 100, 120, 120);
    s = fm_roi_statistics(outside, map, W, H);
    g_assert_cmpuint(s.n, ==, 0);
    g_assert_true(isnan(s.mean));
}

static void test_roi_json(void)
{
    g_autoptr(fm_roi) roi = fm_roi_new_ellipse("vessel", 1.5, 2, 30, 40.25);
    roi->role = g_strdup("aorta");
    g_autofree char *json = fm_roi_to_json(roi);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_roi) back = fm_roi_from_json(json, &error);
    g_assert_no_error(error);
    g_assert_cmpint(back->kind, ==, FM_ROI_ELLIPSE);
    g_assert_cmpstr(back->name, ==, "vessel");
    g_assert_cmpstr(back->role, ==, "aorta");
    g_assert_cmpuint(back->points->len, ==, 2);
    g_assert_cmpfloat(g_array_index(back->points, fm_point, 1).y, ==, 40.25);

    g_autoptr(fm_roi) bad = fm_roi_from_json("{\"kind\":\"star\",\"points\":[]}", &error);
    g_assert_null(bad);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_clear_error(&error);

    g_autofree char *dir = g_dir_make_tmp("fluxmap-roi-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "rois.json", NULL);
    const char *text = "[{\"kind\":\"rectangle\",\"name\":\"a\",\"role\":null,"
                       "\"points\":[[0,0],[4,4]]},"
                       "{\"kind\":\"polygon\",\"name\":\"b\",\"role\":\"segment\","
                       "\"points\":[[0,0],[8,0],[0,8]]}]";
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
    g_autoptr(GPtrArray) list = fm_roi_list_from_file(path, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(list->len, ==, 2);
    fm_roi *b = g_ptr_array_index(list, 1);
    g_assert_cmpint(b->kind, ==, FM_ROI_POLYGON);
    g_assert_cmpstr(b->role, ==, "segment");
    g_assert_null(((fm_roi *)g_ptr_array_index(list, 0))->role);
    g_assert_true(
        g_file_set_contents(path, "[{\"kind\":\"polygon\",\"points\":[[0,0]]}]", -1, NULL));
    g_autoptr(GPtrArray) none = fm_roi_list_from_file(path, &error);
    g_assert_null(none);
    g_assert_error(error, FM_ERROR, FM_ERROR_BAD_INPUT);
    g_assert_nonnull(strstr(error->message, path));
    g_unlink(path);
    g_rmdir(dir);
}

static void assert_rgb(fm_colormap c, double t, int r, int g, int b)
{
    guint8 rgb[3];
    fm_colormap_rgb(c, t, rgb);
    g_assert_cmpint(rgb[0], ==, r);
    g_assert_cmpint(rgb[1], ==, g);
    g_assert_cmpint(rgb[2], ==, b);
}

static void test_colormap(void)
{
    /* Endpoints of the published maps (matplotlib viridis/magma, MATLAB jet). */
    assert_rgb(FM_COLORMAP_GRAY, 0.0, 0, 0, 0);
    assert_rgb(FM_COLORMAP_GRAY, 1.0, 255, 255, 255);
    assert_rgb(FM_COLORMAP_VIRIDIS, 0.0, 68, 1, 84);
    assert_rgb(FM_COLORMAP_VIRIDIS, 1.0, 253, 231, 37);
    assert_rgb(FM_COLORMAP_MAGMA, 0.0, 0, 0, 4);
    assert_rgb(FM_COLORMAP_MAGMA, 1.0, 252, 253, 191);
    assert_rgb(FM_COLORMAP_JET, 0.0, 0, 0, 128);
    assert_rgb(FM_COLORMAP_JET, 0.5, 128, 255, 128);
    assert_rgb(FM_COLORMAP_JET, 1.0, 128, 0, 0);
    assert_rgb(FM_COLORMAP_GRAY, 2.0, 255, 255, 255); /* clamped */
    assert_rgb(FM_COLORMAP_VIRIDIS, -1.0, 68, 1, 84);
    /* Viridis is perceptually ordered: its luminance rises monotonically. */
    double last = -1;
    for (int i = 0; i <= 100; i++) {
        guint8 rgb[3];
        fm_colormap_rgb(FM_COLORMAP_VIRIDIS, i / 100.0, rgb);
        double lum = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
        g_assert_cmpfloat(lum, >=, last - 0.5);
        last = lum;
    }
    for (int c = 0; c < FM_COLORMAP_COUNT; c++) {
        fm_colormap parsed;
        g_assert_true(fm_colormap_parse(fm_colormap_name(c), &parsed));
        g_assert_cmpint(parsed, ==, c);
    }
    fm_colormap parsed;
    g_assert_false(fm_colormap_parse("rainbow", &parsed));
}

static void test_percentile(void)
{
    /* 0..100 in scrambled order, with NaN and infinities that must be ignored. */
    float v[104];
    for (int i = 0; i <= 100; i++)
        v[i] = (float)((i * 37) % 101);
    v[101] = NAN;
    v[102] = INFINITY;
    v[103] = -INFINITY;
    double lo, hi;
    g_assert_true(fm_percentile_range(v, 104, 5, 95, &lo, &hi));
    g_assert_cmpfloat(lo, ==, 5.0);
    g_assert_cmpfloat(hi, ==, 95.0);
    g_assert_true(fm_percentile_range(v, 104, 0, 100, &lo, &hi));
    g_assert_cmpfloat(lo, ==, 0.0);
    g_assert_cmpfloat(hi, ==, 100.0);
    g_assert_true(fm_percentile_range(v, 104, 2.5, 50, &lo, &hi));
    g_assert_cmpfloat_with_epsilon(lo, 2.5, 1e-9); /* interpolated */
    float nan_only[3] = {NAN, NAN, NAN};
    g_assert_false(fm_percentile_range(nan_only, 3, 1, 99, &lo, &hi));
}

static void test_dataset_and_stats(void)
{
    gsize sizes[3] = {4, 3, 2};
    g_autoptr(fm_dataset) ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    g_assert_cmpint(fm_dataset_width(ds), ==, 4);
    g_assert_cmpint(fm_dataset_height(ds), ==, 3);
    g_assert_cmpint(fm_dataset_frames(ds), ==, 2);
    g_assert_cmpuint(fm_dataset_n_bytes(ds), ==, 48);
    ((guint16 *)ds->data)[13] = 4095;
    g_assert_cmpfloat(fm_dataset_value(ds, 13), ==, 4095.0);
    g_assert_true(fm_dataset_frame(ds, 1) == (guint16 *)ds->data + 12);
    fm_dataset_set_meta(ds, "exposure_ms", "5");
    g_assert_cmpstr(fm_dataset_get_meta(ds, "exposure_ms"), ==, "5");
    g_assert_cmpstr(ds->dims[2].name, ==, "t");

    /* Map statistics over all frames, NaN skipped; median of 1..6 is 3.5. */
    fm_map *m = fm_map_new("k", "1", 2, 2, 2);
    float vals[8] = {1, NAN, 2, 3, 4, NAN, 5, 6};
    memcpy(m->data, vals, sizeof vals);
    fm_map_stats s = fm_map_statistics(m);
    g_assert_cmpuint(s.valid_pixels, ==, 6);
    g_assert_cmpfloat(s.min, ==, 1);
    g_assert_cmpfloat(s.max, ==, 6);
    g_assert_cmpfloat(s.mean, ==, 3.5);
    g_assert_cmpfloat(s.median, ==, 3.5);
    g_assert_true(fm_map_frame(m, 1) == m->data + 4);
    g_autoptr(fm_result) r = fm_result_new("x");
    fm_result_add_map(r, m);
    g_assert_true(fm_result_get_map(r, "k") == m);
    g_assert_null(fm_result_get_map(r, "sfi"));
}

static fm_result *gradient_result(int w, int h, int frames)
{
    fm_result *r = fm_result_new("lsi.spatial");
    fm_map *m = fm_map_new("contrast", "1", w, h, frames);
    for (int f = 0; f < frames; f++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                fm_map_frame(m, f)[y * w + x] = (x < 2) ? NAN : (float)(x + 100 * f);
    fm_result_add_map(r, m);
    return r;
}

static void test_export(void)
{
    g_autofree char *dir = g_dir_make_tmp("fluxmap-export-XXXXXX", NULL);
    g_autoptr(fm_result) r = gradient_result(64, 48, 2);
    fm_map *m = fm_result_get_map(r, "contrast");
    g_autoptr(GError) error = NULL;

    g_autofree char *tif = g_build_filename(dir, "contrast.tif", NULL);
    g_assert_true(fm_export_tiff(tif, m, "lsi.spatial", "window=5", &error));
    g_autofree char *desc = fm_tiff_read_description(tif, &error);
    g_assert_cmpstr(desc, ==, "method=lsi.spatial; map=contrast; unit=1; window=5");
    g_autoptr(fm_dataset) back = fm_tiff_read(tif, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_dataset_frames(back), ==, 2);
    g_assert_true(memcmp(back->data, m->data, fm_map_n_values(m) * 4) == 0);

    g_autofree char *png = g_build_filename(dir, "contrast.png", NULL);
    g_assert_true(fm_export_png(png, m, 0, FM_COLORMAP_VIRIDIS, 2, 63, &error));
    g_assert_no_error(error);
    cairo_surface_t *img = cairo_image_surface_create_from_png(png);
    g_assert_cmpint(cairo_surface_status(img), ==, CAIRO_STATUS_SUCCESS);
    int pw = cairo_image_surface_get_width(img), ph = cairo_image_surface_get_height(img);
    g_assert_cmpint(pw, >, 64 + 40); /* map plus a colorbar with labels */
    g_assert_cmpint(ph, >=, 48);
    cairo_surface_flush(img);
    const guint8 *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    guint32 nan_px = *(const guint32 *)(px + 10 * stride + 0 * 4);
    guint32 top_px = *(const guint32 *)(px + 10 * stride + 63 * 4);
    g_assert_cmpuint(nan_px >> 24, ==, 0);     /* NaN is transparent */
    g_assert_cmpuint(top_px, ==, 0xfffde725u); /* vmax is viridis' last colour */
    cairo_surface_destroy(img);
    g_assert_false(fm_export_png(png, m, 5, FM_COLORMAP_GRAY, 0, 1, &error));
    g_clear_error(&error);
    g_autofree char *nodir = g_build_filename(dir, "missing", "x.png", NULL);
    g_assert_false(fm_export_png(nodir, m, 0, FM_COLORMAP_GRAY, 0, 1, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_IO);
    g_clear_error(&error);

    g_autofree char *csv = g_build_filename(dir, "rois.csv", NULL);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    fm_roi *roi = fm_roi_new_rectangle("left, edge", 0, 0, 4, 10); /* 2 NaN columns inside */
    roi->role = g_strdup("segment");
    g_ptr_array_add(rois, roi);
    g_assert_true(fm_export_roi_csv(csv, r, rois, &error));
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    g_assert_cmpstr(lines[0], ==, "roi,role,map,unit,frame,n,mean,sd,min,max");
    /* Columns 2 and 3 over 10 rows: n 20, mean 2.5, sd sqrt(0.25*20/19), min 2, max 3. */
    g_autofree char *sd0 = g_strdup_printf("%.9g", sqrt(5.0 / 19.0));
    g_autofree char *row0 =
        g_strdup_printf("\"left, edge\",segment,contrast,1,0,20,2.5,%s,2,3", sd0);
    g_assert_cmpstr(lines[1], ==, row0);
    g_autofree char *row1 =
        g_strdup_printf("\"left, edge\",segment,contrast,1,1,20,102.5,%s,102,103", sd0);
    g_assert_cmpstr(lines[2], ==, row1);
    g_assert_cmpstr(lines[3], ==, "");

    g_unlink(tif);
    g_unlink(png);
    g_unlink(csv);
    g_rmdir(dir);
}

/* Doubles in exponent form must come out as valid JSON, and strings must stay untouched. */
static void test_json_numbers(void)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "tolerance");
    json_builder_add_double_value(b, 1e-8);
    json_builder_set_member_name(b, "big");
    json_builder_add_double_value(b, 2.5e300);
    json_builder_set_member_name(b, "plain");
    json_builder_add_double_value(b, 10.0);
    json_builder_set_member_name(b, "text");
    json_builder_add_string_value(b, "keep 1e-08.0 and \"quoted 3e5.0\"");
    json_builder_end_object(b);
    g_autofree char *text = fm_json_builder_to_text(b, FALSE);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) error = NULL;
    g_assert_true(json_parser_load_from_data(parser, text, -1, &error));
    g_assert_no_error(error);
    JsonObject *o = json_node_get_object(json_parser_get_root(parser));
    g_assert_cmpfloat(json_object_get_double_member(o, "tolerance"), ==, 1e-8);
    g_assert_cmpfloat(json_object_get_double_member(o, "big"), ==, 2.5e300);
    g_assert_cmpfloat(json_object_get_double_member(o, "plain"), ==, 10.0);
    g_assert_cmpstr(json_object_get_string_member(o, "text"), ==,
                    "keep 1e-08.0 and \"quoted 3e5.0\"");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/params/parse", test_params_parse);
    g_test_add_func("/core/params/int64", test_params_int64);
    g_test_add_func("/core/params/json", test_params_json);
    g_test_add_func("/core/method/registry", test_method_registry);
    g_test_add_func("/core/roi/rasterise", test_roi_rasterise);
    g_test_add_func("/core/roi/statistics", test_roi_statistics);
    g_test_add_func("/core/roi/json", test_roi_json);
    g_test_add_func("/core/colormap/endpoints", test_colormap);
    g_test_add_func("/core/colormap/percentile", test_percentile);
    g_test_add_func("/core/dataset/stats", test_dataset_and_stats);
    g_test_add_func("/core/export/tiff-png-csv", test_export);
    g_test_add_func("/core/json/numbers", test_json_numbers);
    return g_test_run();
}
