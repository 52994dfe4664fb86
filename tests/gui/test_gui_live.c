/* Live parameters (issue 23): on the FLIM and speckle demos, after one Run, a parameter change
 * (the form, a drag of the fit window) redraws the map on show without Run, a burst of changes
 * computes only the last one, the map equals the method run with the last value, and no live
 * map goes into the catalogue (screenshot-live-<family>.png). With FLUXMAP_LIVE_BENCH set it also
 * times change-to-redraw and updates per second on the CPU (bench/RESULTS.md, issue 23). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/method.h"
#include "app/gui/demos.h"
#include "app/gui/flim/flim-page.h"
#include "app/gui/flim/flim-views.h"
#include "app/gui/live-params.h"
#include "gui-test-util.h"

static char *data_dir;
static FmApplication *app;
static FmWindow *win;

static gboolean opened(gpointer name)
{
    fm_dataset *ds = fm_window_get_dataset(win);
    return !fm_window_is_loading(win) && ds != NULL && ds->source_path != NULL &&
           g_str_has_suffix(ds->source_path, name);
}

static void open_demo(const char *id, const char *file)
{
    g_assert_true(fm_demo_open(win, id)); /* as its start-page card does */
    g_assert_true(fm_gui_test_wait_until(opened, (gpointer)file, 60));
    fm_gui_test_drain(0.3);
    g_assert_null(fm_gui_test_error_message(win));
    g_assert_cmpstr(fm_window_get_family(win), ==, id);
}

static fm_live_params_stats stats_of(const char *page)
{
    fm_live_params_stats st;
    fm_live_params_get_stats(fm_live_params_of(win, page), &st);
    return st;
}

typedef struct {
    const char *page;
    guint painted;
} paint_query;

static gboolean painted_more(gpointer data)
{
    const paint_query *q = data;
    return stats_of(q->page).painted > q->painted;
}

/* Waits for the redraw of the next live map of page; FALSE after timeout_s. */
static gboolean wait_redraw(const char *page, guint painted_before, double timeout_s)
{
    paint_query q = {page, painted_before};
    return fm_gui_test_wait_until(painted_more, &q, timeout_s);
}

/* The widget as it is drawn on screen, in an image surface. */
static cairo_surface_t *render(GtkWidget *widget)
{
    for (int i = 0; i < 200 && gtk_events_pending(); i++)
        gtk_main_iteration_do(FALSE);
    g_assert_cmpint(gtk_widget_get_allocated_width(widget), >, 10);
    g_assert_cmpint(gtk_widget_get_allocated_height(widget), >, 10);
    return fm_gui_test_render(widget);
}

static guint differing_pixels(cairo_surface_t *a, cairo_surface_t *b)
{
    int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
    g_assert_cmpint(w, ==, cairo_image_surface_get_width(b));
    g_assert_cmpint(h, ==, cairo_image_surface_get_height(b));
    int stride = cairo_image_surface_get_stride(a);
    const guint8 *pa = cairo_image_surface_get_data(a), *pb = cairo_image_surface_get_data(b);
    guint n = 0;
    for (int y = 0; y < h; y++) {
        const guint32 *ra = (const guint32 *)(pa + (gsize)y * stride);
        const guint32 *rb = (const guint32 *)(pb + (gsize)y * stride);
        for (int x = 0; x < w; x++)
            n += ra[x] != rb[x];
    }
    return n;
}

/* Values of a (n of them) unlike those of b by more than tol (NaN equal to NaN). */
static gsize differing_values(const float *a, const float *b, gsize n, double tol)
{
    gsize d = 0;
    for (gsize i = 0; i < n; i++)
        if (isnan(a[i]) != isnan(b[i]) || (!isnan(a[i]) && fabs(a[i] - b[i]) > tol))
            d++;
    return d;
}

/* One live change on show: more than a tenth of the n values (before -> after, beyond tol) and
 * more than 1000 pixels of widget (shot0 was taken before; it is destroyed here) changed. */
static void assert_changed(GtkWidget *widget, cairo_surface_t *shot0, const float *before,
                           const float *after, int n, double tol, const char *what,
                           const fm_live_params_stats *st)
{
    gsize changed = differing_values(before, after, (gsize)n, tol);
    cairo_surface_t *shot1 = render(widget);
    guint pixels = differing_pixels(shot0, shot1);
    g_test_message("%s: %zu of %d and %u pixels on screen changed in %.1f ms (compute %.1f ms)",
                   what, (size_t)changed, n, pixels, st->start_to_paint_ms, st->compute_ms);
    g_assert_cmpuint(changed, >, (gsize)n / 10);
    g_assert_cmpuint(pixels, >, 1000);
    cairo_surface_destroy(shot0);
    cairo_surface_destroy(shot1);
}

/* The page's method run here, on the CPU, with the parameters its form holds now, on dataset. */
static fm_result *truth(const char *page, fm_dataset *dataset, const char *key, double expected)
{
    const char *method_id = NULL;
    g_autofree char *json = fm_window_get_page_params(win, page, &method_id);
    g_assert_nonnull(json);
    const fm_method *m = fm_method_find(method_id);
    g_autoptr(fm_params) params = fm_method_default_params(m);
    g_assert_true(fm_params_set_from_json(params, json, NULL));
    double value = g_strcmp0(key, "window") == 0 ? fm_params_get_int(params, key)
                                                 : fm_params_get_double(params, key);
    g_assert_cmpfloat_with_epsilon(value, expected, 1e-9); /* the form holds the last value */
    fm_job_context ctx = {.backend = FM_BACKEND_CPU};
    g_autoptr(GError) error = NULL;
    fm_result *res = fm_method_run(m, dataset, params, NULL, &ctx, &error);
    g_assert_no_error(error);
    return res;
}

static float *copy_floats(const float *data, int w, int h)
{
    g_assert_nonnull(data);
    g_assert_cmpint(w, >, 0);
    g_assert_cmpint(h, >, 0);
    float *copy = g_new(float, (gsize)w *h);
    memcpy(copy, data, (gsize)w * h * sizeof(float));
    return copy;
}

static float *copy_shown(int *w, int *h)
{
    const float *data = fm_map_view_get_data(fm_window_get_map_view(win), w, h);
    return copy_floats(data, *w, *h);
}

/* Ten changes of key on the page on show, well within the debounce. */
static void burst(const char *key, const char *const values[10])
{
    fm_gui_test_drain(0.1); /* a pause: changes right after a start come as a drag would */
    gint64 t0 = g_get_monotonic_time();
    for (int i = 0; i < 10; i++) {
        g_assert_true(fm_window_set_param(win, key, values[i]));
        g_usleep(200); /* as a burst comes: faster than the debounce, no main loop turn */
    }
    double ms = (g_get_monotonic_time() - t0) / 1000.0;
    g_test_message("burst of 10 changes of %s in %.1f ms", key, ms);
    g_assert_cmpfloat(ms, <, FM_LIVE_DRAG_MS); /* one burst, within the longest wait */
}

static void test_flim(void)
{
    open_demo("flim", "flim-demo.sdt");
    g_assert_true(fm_window_select_method(win, "flim.iem"));
    fm_gui_test_run_job(win, "run", 60);
    fm_gui_test_drain(0.3);
    FmLiveParams *live = fm_live_params_of(win, "flim");
    g_assert_nonnull(live);
    double run_ms = fm_live_params_last_ms(live, "flim.iem");
    g_test_message("the Run of IEM took %.1f ms", run_ms);
    g_assert_cmpfloat(run_ms, >=, 0);
    g_assert_cmpfloat(run_ms, <=, FM_LIVE_MAX_MS);
    guint runs = fm_gui_test_catalogue_runs(data_dir);
    g_assert_cmpuint(runs, >=, 1);
    FmFlimViews *views = FM_FLIM_VIEWS(fm_window_get_flim_views(win));
    g_assert_true(gtk_widget_is_drawable(GTK_WIDGET(views))); /* the lifetime view on show */

    /* One change: the map redraws by itself. */
    int w = 0, h = 0;
    const float *tau0 = fm_flim_views_get_tau(views, &w, &h);
    g_autofree float *before = copy_floats(tau0, w, h);
    cairo_surface_t *shot0 = render(GTK_WIDGET(views));
    fm_live_params_stats st0 = stats_of("flim");
    g_assert_true(fm_window_set_param(win, "fit_start_ns", "2"));
    g_assert_true(wait_redraw("flim", st0.painted, 10));
    fm_live_params_stats st1 = stats_of("flim");
    g_assert_cmpuint(st1.started, ==, st0.started + 1);
    g_assert_cmpuint(st1.shown, ==, st0.shown + 1);
    int w1 = 0, h1 = 0;
    const float *after = fm_flim_views_get_tau(views, &w1, &h1);
    g_assert_cmpint(w1 * h1, ==, w * h);
    assert_changed(GTK_WIDGET(views), shot0, before, after, w * h, 1e-4,
                   "fit_start_ns 2 (lifetimes)", &st1);
    g_assert_cmpuint(fm_gui_test_catalogue_runs(data_dir), ==, runs); /* a live map is not a run */
    g_assert_cmpint(fm_window_get_running_jobs(win), ==, 0);

    /* A burst: only the last value is computed, and it is what is on show. */
    static const char *const values[10] = {"2.1", "2.2", "2.3", "2.4", "2.5",
                                           "2.6", "2.7", "2.8", "2.9", "3"};
    burst("fit_start_ns", values);
    g_assert_true(wait_redraw("flim", st1.painted, 10));
    fm_gui_test_drain(0.3); /* room for a second computation, were there one */
    fm_live_params_stats st2 = stats_of("flim");
    g_assert_cmpuint(st2.changes, ==, st1.changes + 10);
    g_assert_cmpuint(st2.started, ==, st1.started + 1);
    g_assert_cmpuint(st2.shown, ==, st1.shown + 1);
    g_autoptr(fm_result) want = truth("flim", fm_window_get_dataset(win), "fit_start_ns", 3.0);
    const fm_map *tau = fm_result_get_map(want, "tau");
    g_assert_nonnull(tau);
    g_assert_cmpuint(
        differing_values(tau->data, fm_flim_views_get_tau(views, &w, &h), (gsize)w * h, 1e-5), ==,
        0);
    int mw = 0, mh = 0;
    g_autofree float *shown = copy_shown(&mw, &mh); /* the Map view shows the same tau */
    g_assert_cmpint(mw * mh, ==, w * h);
    g_assert_cmpuint(differing_values(tau->data, shown, (gsize)w * h, 1e-5), ==, 0);

    /* Dragging the fit window's start on the decay plot (to bin 15) recomputes too. */
    FmDecayView *decay = fm_flim_views_get_decay_view(views);
    fm_decay_view_drag_window(decay, TRUE, 15);
    g_assert_true(wait_redraw("flim", st2.painted, 10));
    fm_live_params_stats st3 = stats_of("flim");
    g_assert_cmpuint(st3.started, ==, st2.started + 1);
    g_assert_cmpuint(fm_gui_test_catalogue_runs(data_dir), ==, runs);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-live-flim");

    /* The user's Run still records a run. */
    fm_gui_test_run_job(win, "run", 60);
    g_assert_cmpuint(fm_gui_test_catalogue_runs(data_dir), ==, runs + 1);
}

static void test_speckle(void)
{
    open_demo("lsi", "speckle-demo.tif");
    g_assert_true(fm_window_select_method(win, "lsi.spatial"));
    fm_gui_test_run_job(win, "run", 60);
    fm_gui_test_drain(0.3);
    guint runs = fm_gui_test_catalogue_runs(data_dir);
    GtkWidget *map = GTK_WIDGET(fm_window_get_map_view(win));
    g_assert_true(gtk_widget_is_drawable(map));

    int w = 0, h = 0;
    g_autofree float *before = copy_shown(&w, &h);
    cairo_surface_t *shot0 = render(map);
    fm_live_params_stats st0 = stats_of("lsi");
    g_assert_true(fm_window_set_param(win, "window", "9"));
    g_assert_true(wait_redraw("lsi", st0.painted, 10));
    fm_live_params_stats st1 = stats_of("lsi");
    g_assert_cmpuint(st1.started, ==, st0.started + 1);
    int w1 = 0, h1 = 0;
    g_autofree float *after = copy_shown(&w1, &h1);
    g_assert_cmpint(w1 * h1, ==, w * h);
    assert_changed(map, shot0, before, after, w * h, 1e-6, "window 9 (values)", &st1);

    static const char *const values[10] = {"3", "5", "7", "9", "11", "13", "15", "13", "11", "7"};
    burst("window", values);
    g_assert_true(wait_redraw("lsi", st1.painted, 10));
    fm_gui_test_drain(0.3);
    fm_live_params_stats st2 = stats_of("lsi");
    g_assert_cmpuint(st2.started, ==, st1.started + 1);
    g_assert_cmpuint(st2.shown, ==, st1.shown + 1);
    /* spatial contrast of the frame on show (the first), window 7 */
    fm_dataset *ds = fm_window_get_dataset(win);
    gsize sizes[2] = {(gsize)fm_dataset_width(ds), (gsize)fm_dataset_height(ds)};
    const char *names[] = {"x", "y"};
    g_autoptr(fm_dataset) frame = fm_dataset_new(ds->type, 2, sizes, names);
    memcpy(frame->data, fm_dataset_frame(ds, 0), fm_dataset_n_bytes(frame));
    g_autoptr(fm_result) want = truth("lsi", frame, "window", 7);
    const fm_map *sfi = fm_result_get_map(want, "sfi");
    g_autofree float *shown = copy_shown(&w, &h);
    g_assert_cmpint(sfi->width * sfi->height, ==, w * h);
    g_assert_cmpuint(differing_values(sfi->data, shown, (gsize)w * h, 1e-3), ==, 0);
    g_assert_cmpuint(fm_gui_test_catalogue_runs(data_dir), ==, runs);
    fm_gui_test_screenshot(GTK_WIDGET(win), data_dir, "screenshot.png", "-live-lsi");
}

/* ---- the benchmark (FLUXMAP_LIVE_BENCH) ---------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* On the page on show with method run once: n changes one after the other, each waited for to
 * its redraw (times as the live object measured them), then a drag: a change every 10 ms for
 * 2 s, counting the redraws. */
static void bench_one(const char *workload, const char *page, const char *method, const char *key,
                      const char *reset, const char *const *values, int n_values)
{
    g_assert_true(fm_window_select_method(win, method));
    g_assert_true(fm_window_set_param(win, key, reset)); /* none of values: each one a change */
    fm_gui_test_drain(0.3);
    fm_gui_test_run_job(win, "run", 60);
    fm_gui_test_drain(0.3);
    enum { N = 20 };
    /* per change: compute, start->maps on the main loop, show, start->redraw, redraw - compute,
     * change->redraw */
    double col[6][N];
    for (int i = 0; i < N; i++) {
        fm_live_params_stats st = stats_of(page);
        g_assert_true(fm_window_set_param(win, key, values[i % n_values]));
        g_assert_true(wait_redraw(page, st.painted, 10));
        st = stats_of(page);
        col[0][i] = st.compute_ms;
        col[1][i] = st.start_to_result_ms;
        col[2][i] = st.show_ms;
        col[3][i] = st.start_to_paint_ms;
        col[4][i] = st.start_to_paint_ms - st.compute_ms;
        col[5][i] = st.change_to_paint_ms;
        fm_gui_test_drain(0.05); /* a user's next change, not a drag */
    }
    for (int c = 0; c < 6; c++)
        qsort(col[c], N, sizeof(double), cmp_double);
    fm_live_params_stats st = stats_of(page);
    gint64 t0 = g_get_monotonic_time(), end = t0 + 2 * G_USEC_PER_SEC;
    for (int i = 0; g_get_monotonic_time() < end; i++) {
        g_assert_true(fm_window_set_param(win, key, values[i % n_values]));
        gint64 next = t0 + (gint64)(i + 1) * 10000;
        while (g_get_monotonic_time() < next)
            if (!g_main_context_iteration(NULL, FALSE))
                g_usleep(500);
    }
    double seconds = (g_get_monotonic_time() - t0) / 1e6;
    fm_live_params_stats st_end = stats_of(page);
    double rate = (st_end.painted - st.painted) / seconds;
    printf("# %-24s %-11s %7.1f %7.1f %6.1f %7.1f %7.1f %6.1f %7.1f %6.1f\n", workload, method,
           col[0][N / 2], col[1][N / 2], col[2][N / 2], col[3][N / 2], col[3][N - 1], col[4][N / 2],
           col[5][N / 2], rate);
    fm_gui_test_drain(0.3);
}

static void test_bench(void)
{
    if (g_getenv("FLUXMAP_LIVE_BENCH") == NULL) {
        g_test_skip("set FLUXMAP_LIVE_BENCH=1 to time live parameters");
        return;
    }
    printf("# live parameters, CPU backend; medians of 20 changes, each waited for to its\n"
           "# redraw (ms): compute (the method), ->maps (start to maps on the main loop), show\n"
           "# (views updated), start->redraw (start to the window's paint: the debounce of %d ms\n"
           "# not counted) with its max, over (redraw - compute), change->redraw (debounce in);\n"
           "# drag/s: redraws per second while the value changes every 10 ms for 2 s.\n",
           FM_LIVE_DEBOUNCE_MS);
    printf("# %-24s %-11s %7s %7s %6s %7s %7s %6s %7s %6s\n", "workload", "method", "compute",
           "->maps", "show", "->redraw", "(max)", "over", "change->", "drag/s");
    open_demo("flim", "flim-demo.sdt");
    static const char *const starts[] = {"1.5", "2", "2.5", "3", "1.2", "1.8"};
    static const char *const flim[] = {"flim.iem", "flim.cmm", "flim.rld", "flim.phasor"};
    for (gsize i = 0; i < G_N_ELEMENTS(flim); i++)
        bench_one("FLIM demo 128x128x256", "flim", flim[i], "fit_start_ns", "1", starts,
                  G_N_ELEMENTS(starts));
    open_demo("lsi", "speckle-demo.tif");
    static const char *const windows[] = {"7", "9", "11", "5", "3", "13"};
    bench_one("speckle 256x192, 1 frame", "lsi", "lsi.spatial", "window", "15", windows,
              G_N_ELEMENTS(windows));
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-live-XXXXXX");
    if (data_dir == NULL)
        return 0;
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);
    gtk_window_resize(GTK_WINDOW(win), 1366, 768);
    fm_gui_test_drain(0.5);
    g_test_add_func("/gui-live/flim", test_flim);
    g_test_add_func("/gui-live/speckle", test_speckle);
    g_test_add_func("/gui-live/bench", test_bench);
    int status = g_test_run();
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    return status;
}
