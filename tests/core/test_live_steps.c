/* Live steps (fm_method.live) against the offline runs: simulated speckle stacks and OCT
 * spectra fed frame by frame as camera frames (Mono8, Mono12, Mono12Packed, Mono16) through
 * begin / frame / end give frame k's maps equal, bit for bit, to frame k of the offline run on
 * the whole stack, on the CPU backend. Also times the spatial step at 1392x1040 Mono16. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "app/core/dataset.h"
#include "app/core/live.h"
#include "app/core/lsi/lsi_sim.h"
#include "app/core/method.h"
#include "app/core/oct/oct_live.h"
#include "app/core/oct/oct_sim.h"
#include "app/core/params.h"
#include "app/core/result.h"

/* Frame k of a uint8/uint16 stack as a camera sends it in `format`, into buf. Mono12Packed:
 * GigE Vision layout, two 12-bit pixels in three bytes (packed here independently of
 * fm_frame_unpack_u16, which the step uses to read it back). */
static void make_frame(const fm_dataset *ds, int k, fm_pixfmt format, guint8 *buf, fm_frame *f)
{
    const int w = fm_dataset_width(ds), h = fm_dataset_height(ds);
    const gsize n = (gsize)w * h;
    memset(f, 0, sizeof *f);
    f->id = (guint64)k;
    f->width = w;
    f->height = h;
    f->format = format;
    f->data = buf;
    f->size = fm_pixfmt_frame_bytes(format, w, h);
    if (format == FM_PIXFMT_MONO8) {
        g_assert_cmpint(ds->type, ==, FM_PIXEL_U8);
        memcpy(buf, (const guint8 *)ds->data + n * k, n);
        return;
    }
    g_assert_cmpint(ds->type, ==, FM_PIXEL_U16);
    const guint16 *px = (const guint16 *)ds->data + n * k;
    if (format != FM_PIXFMT_MONO12_PACKED) {
        memcpy(buf, px, 2 * n);
        return;
    }
    for (gsize i = 0; i < n; i += 2) {
        guint16 a = px[i], b = i + 1 < n ? px[i + 1] : 0;
        g_assert_cmpuint(a, <, 4096);
        g_assert_cmpuint(b, <, 4096);
        guint8 *o = buf + i / 2 * 3;
        o[0] = (guint8)(a >> 4);
        o[1] = (guint8)((a & 0x0f) | ((b & 0x0f) << 4));
        o[2] = (guint8)(b >> 4);
    }
}

static fm_result *run_offline(const fm_method *m, fm_dataset *ds, const fm_params *p)
{
    g_autoptr(GError) error = NULL;
    fm_job_context ctx = {.backend = FM_BACKEND_CPU};
    fm_result *r = fm_method_run(m, ds, p, NULL, &ctx, &error);
    g_assert_no_error(error);
    g_assert_nonnull(r);
    return r;
}

static const fm_map *result_map(const fm_result *r, const char *name)
{
    for (guint i = 0; i < r->maps->len; i++) {
        const fm_map *m = g_ptr_array_index(r->maps, i);
        if (strcmp(m->name, name) == 0)
            return m;
    }
    g_assert_not_reached();
    return NULL;
}

static fm_dataset *lsi_stack(int w, int h, int frames, int bits)
{
    fm_lsi_sim_params sp;
    fm_lsi_sim_defaults(&sp);
    sp.width = w;
    sp.height = h;
    sp.n_frames = frames;
    sp.bits = bits;
    sp.mean_counts = bits == 8 ? 90 : bits == 12 ? 1500 : 20000;
    sp.seed = 25;
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_lsi_simulate(&sp, &error);
    g_assert_no_error(error);
    return ds;
}

/* Every frame of ds through the method's live step; each ready frame's contrast and sfi must
 * equal the offline maps' frame (k - frames + 1 for temporal windows) bit for bit. */
static void check_lsi(const char *id, const char *params_json, fm_dataset *ds, fm_pixfmt format)
{
    const fm_method *m = fm_method_find(id);
    g_assert_nonnull(m);
    g_assert_nonnull(m->live);
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_params_set_from_json(p, params_json, &error));
    g_autoptr(fm_result) ref = run_offline(m, ds, p);
    const fm_map *ref_k = result_map(ref, "contrast"), *ref_s = result_map(ref, "sfi");
    const int w = fm_dataset_width(ds), h = fm_dataset_height(ds), n = fm_dataset_frames(ds);
    const int lag = fm_params_has(p, "frames") ? fm_params_get_int(p, "frames") - 1 : 0;
    const gsize plane = (gsize)w * h;

    fm_live_step *step = m->live->begin(m, p, w, h, format, FM_BACKEND_CPU, &error);
    g_assert_no_error(error);
    g_autofree char *backend = NULL, *device = NULL, *note = NULL;
    m->live->describe(step, &backend, &device, &note);
    g_assert_cmpstr(backend, ==, "cpu");
    g_autofree guint8 *buf = g_malloc(plane * 2);
    int compared = 0;
    for (int k = 0; k < n; k++) {
        fm_frame f;
        fm_live_output out;
        make_frame(ds, k, format, buf, &f);
        g_assert_true(m->live->frame(step, &f, &out, &error));
        g_assert_no_error(error);
        if (k < lag) {
            g_assert_false(out.ready);
            continue;
        }
        g_assert_true(out.ready);
        g_assert_cmpint(out.n_maps, ==, 2);
        g_assert_cmpstr(out.maps[out.primary]->name, ==, "sfi");
        g_assert_cmpstr(out.maps[0]->name, ==, "contrast");
        g_assert_cmpint(out.maps[0]->width, ==, w);
        g_assert_cmpint(out.maps[0]->height, ==, h);
        const gsize t = (gsize)(k - lag);
        g_assert_cmpmem(out.maps[0]->data, plane * 4, ref_k->data + t * plane, plane * 4);
        g_assert_cmpmem(out.maps[1]->data, plane * 4, ref_s->data + t * plane, plane * 4);
        compared++;
    }
    g_assert_cmpint(compared, ==, n - lag);
    g_assert_cmpint(compared, ==, ref_k->n_frames);
    m->live->end(step);
}

static void test_lsi_spatial(void)
{
    g_autoptr(fm_dataset) d16 = lsi_stack(61, 47, 6, 16);
    check_lsi("lsi.spatial", "{\"window\": 5, \"exposure_ms\": 5}", d16, FM_PIXFMT_MONO16);
    check_lsi("lsi.spatial", "{\"window\": 7, \"border\": \"zero\"}", d16, FM_PIXFMT_MONO16);
    g_autoptr(fm_dataset) d12 = lsi_stack(61, 47, 4, 12);
    check_lsi("lsi.spatial", "{\"window\": 5}", d12, FM_PIXFMT_MONO12);
    check_lsi("lsi.spatial", "{\"window\": 5}", d12, FM_PIXFMT_MONO12_PACKED);
    g_autoptr(fm_dataset) d8 = lsi_stack(61, 47, 4, 8);
    check_lsi("lsi.spatial", "{\"window\": 3}", d8, FM_PIXFMT_MONO8);
}

static void test_lsi_temporal(void)
{
    g_autoptr(fm_dataset) d16 = lsi_stack(40, 33, 13, 16);
    check_lsi("lsi.temporal", "{\"frames\": 5}", d16, FM_PIXFMT_MONO16);
    g_autoptr(fm_dataset) d12 = lsi_stack(40, 33, 9, 12);
    check_lsi("lsi.temporal", "{\"frames\": 4}", d12, FM_PIXFMT_MONO12_PACKED);
    g_autoptr(fm_dataset) d8 = lsi_stack(40, 33, 9, 8);
    check_lsi("lsi.temporal", "{\"frames\": 3}", d8, FM_PIXFMT_MONO8);
}

static void test_lsi_spatiotemporal(void)
{
    g_autoptr(fm_dataset) d16 = lsi_stack(40, 33, 11, 16);
    check_lsi("lsi.spatiotemporal", "{\"frames\": 4, \"window\": 5}", d16, FM_PIXFMT_MONO16);
    g_autoptr(fm_dataset) d12 = lsi_stack(40, 33, 8, 12);
    check_lsi("lsi.spatiotemporal", "{\"frames\": 3, \"window\": 3, \"border\": \"zero\"}", d12,
              FM_PIXFMT_MONO12_PACKED);
    g_autoptr(fm_dataset) d8 = lsi_stack(40, 33, 8, 8);
    check_lsi("lsi.spatiotemporal", "{\"frames\": 5, \"window\": 3}", d8, FM_PIXFMT_MONO8);
}

/* A frame of another size or format than the run started with is refused, naming both. */
static void test_lsi_refuses_other_frames(void)
{
    const fm_method *m = fm_method_find("lsi.spatial");
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_autoptr(GError) error = NULL;
    fm_live_step *step = m->live->begin(m, p, 32, 32, FM_PIXFMT_MONO16, FM_BACKEND_CPU, &error);
    g_assert_no_error(error);
    g_autofree guint16 *px = g_new0(guint16, 32 * 33);
    fm_frame f = {.id = 7,
                  .width = 32,
                  .height = 33,
                  .format = FM_PIXFMT_MONO16,
                  .data = px,
                  .size = 2 * 32 * 33};
    fm_live_output out;
    g_assert_false(m->live->frame(step, &f, &out, &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, "32x33"));
    g_assert_nonnull(strstr(error->message, "32x32"));
    m->live->end(step);
    g_clear_error(&error);
    g_assert_null(m->live->begin(m, p, 32, 32, FM_PIXFMT_UNKNOWN, FM_BACKEND_CPU, &error));
    g_assert_nonnull(error);
}

static fm_dataset *oct_stack(int pixels, int alines, int bscans, char **poly)
{
    fm_oct_sim_params sp;
    fm_oct_sim_defaults(&sp);
    sp.pixels_per_aline = pixels;
    sp.alines_per_bscan = alines;
    sp.n_bscans = bscans;
    sp.seed = 25;
    g_autoptr(GError) error = NULL;
    fm_dataset *ds = fm_oct_simulate(&sp, &error);
    g_assert_no_error(error);
    /* the calibration as a user gives it to a live run: a polynomial in the parameters */
    *poly = g_strdup_printf("%.17g,%.17g", sp.lambda_first_nm,
                            (sp.lambda_last_nm - sp.lambda_first_nm) / (pixels - 1));
    return ds;
}

static fm_dataset *to_u8(const fm_dataset *ds)
{
    gsize sizes[3] = {ds->dims[0].size, ds->dims[1].size, ds->dims[2].size};
    fm_dataset *d8 =
        fm_dataset_new(FM_PIXEL_U8, 3, sizes, (const char *const[]){"pixel", "aline", "bscan"});
    const gsize n = sizes[0] * sizes[1] * sizes[2];
    for (gsize i = 0; i < n; i++)
        ((guint8 *)d8->data)[i] = (guint8)(((const guint16 *)ds->data)[i] >> 4);
    return d8;
}

/* Every B-scan through oct.bscan's live step: the B-scan (depth down) equals the offline
 * B-scan k, and the en-face image so far the offline en-face rows 0..k, bit for bit. */
static void check_oct(fm_dataset *ds, const char *poly, const char *extra_json, fm_pixfmt format)
{
    const fm_method *m = fm_method_find("oct.bscan");
    g_assert_nonnull(m->live);
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_autoptr(GError) error = NULL;
    g_autofree char *json = g_strdup_printf("{\"lambda_polynomial_nm\": \"%s\"%s%s}", poly,
                                            *extra_json ? ", " : "", extra_json);
    g_assert_true(fm_params_set_from_json(p, json, &error));
    g_assert_no_error(error);
    g_autoptr(fm_result) ref = run_offline(m, ds, p);
    const fm_map *ref_b = result_map(ref, "bscan_db"), *ref_e = result_map(ref, "enface");
    const int pixels = fm_dataset_width(ds), alines = fm_dataset_height(ds);
    const int n = fm_dataset_frames(ds), depth = pixels / 2;
    const gsize bscan = (gsize)alines * depth;

    fm_live_step *step = m->live->begin(m, p, pixels, alines, format, FM_BACKEND_CPU, &error);
    g_assert_no_error(error);
    g_autofree guint8 *buf = g_malloc((gsize)pixels * alines * 2);
    for (int k = 0; k < n; k++) {
        fm_frame f;
        fm_live_output out;
        make_frame(ds, k, format, buf, &f);
        g_assert_true(m->live->frame(step, &f, &out, &error));
        g_assert_no_error(error);
        g_assert_true(out.ready);
        g_assert_cmpint(out.n_maps, ==, 2);
        const fm_map *b = out.maps[0], *e = out.maps[1];
        g_assert_true(out.maps[out.primary] == b);
        g_assert_cmpstr(b->name, ==, "bscan_db");
        g_assert_cmpint(b->width, ==, alines);
        g_assert_cmpint(b->height, ==, depth);
        g_assert_cmpmem(b->data, bscan * 4, ref_b->data + (gsize)k * bscan, bscan * 4);
        g_assert_cmpstr(e->name, ==, "enface");
        g_assert_cmpint(e->width, ==, alines);
        g_assert_cmpint(e->height, ==, k + 1);
        g_assert_cmpmem(e->data, (gsize)(k + 1) * alines * 4, ref_e->data,
                        (gsize)(k + 1) * alines * 4);
    }
    m->live->end(step);
}

static void test_oct_bscan(void)
{
    g_autofree char *poly = NULL;
    g_autoptr(fm_dataset) ds = oct_stack(512, 24, 4, &poly);
    check_oct(ds, poly, "", FM_PIXFMT_MONO16);
    check_oct(ds, poly, "\"resample\": \"linear\", \"window\": \"gaussian\"", FM_PIXFMT_MONO12);
    check_oct(ds, poly,
              "\"dispersion_a2\": 3, \"dispersion_a3\": -1, \"background\": \"none\", "
              "\"enface_start_px\": 20, \"enface_end_px\": 90",
              FM_PIXFMT_MONO12_PACKED);
    check_oct(ds, poly, "\"resample\": \"zeropad\", \"taps\": 11", FM_PIXFMT_MONO16);
    g_autoptr(fm_dataset) d8 = to_u8(ds);
    check_oct(d8, poly, "\"resample\": \"cubic\"", FM_PIXFMT_MONO8);
}

/* A live camera carries no calibration: without one in the parameters, or with background
 * 'file' (the mean of a whole file), begin says what to set. */
static void test_oct_needs_parameters(void)
{
    const fm_method *m = fm_method_find("oct.bscan");
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_autoptr(GError) error = NULL;
    g_assert_null(m->live->begin(m, p, 512, 16, FM_PIXFMT_MONO16, FM_BACKEND_CPU, &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, "lambda_polynomial_nm"));
    g_clear_error(&error);
    g_assert_true(fm_params_set_from_json(
        p, "{\"lambda_polynomial_nm\": \"800,0.05\", \"background\": \"file\"}", &error));
    g_assert_null(m->live->begin(m, p, 512, 16, FM_PIXFMT_MONO16, FM_BACKEND_CPU, &error));
    g_assert_nonnull(error);
    g_assert_nonnull(strstr(error->message, "background 'file'"));
}

/* Benchmark figures, not timed tests: K and SFI of 1392x1040 Mono16 frames. */
static void lsi_rate(const char *id, const char *params_json)
{
    const int w = 1392, h = 1040, n = 100;
    const fm_method *m = fm_method_find(id);
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_autoptr(GError) error = NULL;
    g_assert_true(fm_params_set_from_json(p, params_json, &error));
    fm_live_step *step = m->live->begin(m, p, w, h, FM_PIXFMT_MONO16, FM_BACKEND_CPU, &error);
    g_assert_no_error(error);
    g_autofree guint16 *px = g_new(guint16, (gsize)w * h);
    GRand *rand = g_rand_new_with_seed(25);
    for (gsize i = 0; i < (gsize)w * h; i++)
        px[i] = (guint16)g_rand_int_range(rand, 0, 4096);
    g_rand_free(rand);
    fm_frame f = {
        .width = w, .height = h, .format = FM_PIXFMT_MONO16, .data = px, .size = 2 * (gsize)w * h};
    fm_live_output out;
    g_assert_true(m->live->frame(step, &f, &out, &error)); /* warm-up */
    gint64 t0 = g_get_monotonic_time();
    for (int k = 0; k < n; k++) {
        f.id = (guint64)k;
        g_assert_true(m->live->frame(step, &f, &out, &error));
    }
    double s = (g_get_monotonic_time() - t0) * 1e-6;
    g_printerr("live %s cpu: %.1f frames/s (1392x1040 Mono16, %s)\n", id, n / s, params_json);
    m->live->end(step);
}

static void test_lsi_spatial_rate(void)
{
    lsi_rate("lsi.spatial", "{\"window\": 5}");
}

static void test_lsi_temporal_rate(void)
{
    lsi_rate("lsi.temporal", "{\"frames\": 25}");
    lsi_rate("lsi.spatiotemporal", "{\"frames\": 5, \"window\": 5}");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/live-steps/lsi-spatial", test_lsi_spatial);
    g_test_add_func("/live-steps/lsi-temporal", test_lsi_temporal);
    g_test_add_func("/live-steps/lsi-spatiotemporal", test_lsi_spatiotemporal);
    g_test_add_func("/live-steps/lsi-refuses-other-frames", test_lsi_refuses_other_frames);
    g_test_add_func("/live-steps/oct-bscan", test_oct_bscan);
    g_test_add_func("/live-steps/oct-needs-parameters", test_oct_needs_parameters);
    if (g_test_perf()) {
        g_test_add_func("/live-steps/lsi-spatial-rate", test_lsi_spatial_rate);
        g_test_add_func("/live-steps/lsi-temporal-rate", test_lsi_temporal_rate);
    }
    return g_test_run();
}
