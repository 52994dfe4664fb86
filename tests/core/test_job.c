/* Job tests: a real LSI run through fm_job_start on a GMainLoop (checked against a brute-force
 * contrast), cancellation from the progress callback, progress coalescing, failures, and the
 * catalogue records a job leaves. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/error.h"
#include "app/core/job.h"
#include "kernels/resident.h"

/* A stand-in method whose timing the test controls: ticks until cancelled or done. */
static const fm_param_spec fake_specs[] = {
    {.key = "ticks", .type = FM_PARAM_INT, .default_value = 2000, .min = 1, .max = 1000000},
    {.key = "sleep_us", .type = FM_PARAM_INT, .default_value = 1000, .min = 0, .max = 100000},
};
static const fm_output_spec fake_outputs[] = {{.name = "level", .unit = "1"}};
static gint fake_finished; /* set by the fake run when it returns */

static fm_result *fake_run(const fm_method *method, fm_dataset *ds, const fm_params *params,
                           GPtrArray *rois, fm_job_context *ctx, GError **error)
{
    int ticks = fm_params_get_int(params, "ticks");
    int sleep_us = fm_params_get_int(params, "sleep_us");
    for (int i = 1; i <= ticks; i++) {
        if (fm_method_tick(ctx, (double)i / ticks)) {
            g_set_error(error, FM_ERROR, FM_ERROR_CANCELLED, "fake: cancelled at tick %d", i);
            g_atomic_int_set(&fake_finished, 1);
            return NULL;
        }
        if (sleep_us)
            g_usleep(sleep_us);
    }
    fm_result *r = fm_result_new(method->id);
    fm_map *m = fm_map_new("level", "1", fm_dataset_width(ds), fm_dataset_height(ds), 1);
    for (gsize i = 0; i < fm_map_n_values(m); i++)
        m->data[i] = (float)i;
    fm_result_add_map(r, m);
    r->backend = g_strdup("cpu");
    r->device = g_strdup("test");
    g_atomic_int_set(&fake_finished, 1);
    return r;
}

static const fm_method fake_method = {
    .id = "test.fake",
    .family = "test",
    .title = "Fake",
    .description = "Test method",
    .params = fake_specs,
    .n_params = G_N_ELEMENTS(fake_specs),
    .outputs = fake_outputs,
    .n_outputs = 1,
    .run = fake_run,
};

typedef struct {
    GMainLoop *loop;
    int progress_calls, done_calls;
    double last_fraction;
    gboolean monotonic;
    gboolean cancel_on_progress;
    GThread *main_thread;
} Watch;

static void on_progress(fm_job *job, double fraction, gpointer user)
{
    Watch *w = user;
    g_assert_true(g_thread_self() == w->main_thread); /* delivered on the starting thread */
    g_assert_cmpfloat(fraction, >=, 0.0);
    g_assert_cmpfloat(fraction, <=, 1.0);
    if (fraction < w->last_fraction)
        w->monotonic = FALSE;
    w->last_fraction = fraction;
    w->progress_calls++;
    if (w->cancel_on_progress)
        fm_job_cancel(job);
}

static void on_done(fm_job *job, gpointer user)
{
    Watch *w = user;
    g_assert_true(g_thread_self() == w->main_thread);
    w->done_calls++;
    g_main_loop_quit(w->loop);
}

static gboolean on_timeout(gpointer data)
{
    g_error("job did not finish within 20 s");
    return G_SOURCE_REMOVE;
}

static void watch_init(Watch *w)
{
    memset(w, 0, sizeof *w);
    w->loop = g_main_loop_new(NULL, FALSE);
    w->monotonic = TRUE;
    w->main_thread = g_thread_self();
}

static void wait_for(Watch *w)
{
    guint t = g_timeout_add_seconds(20, on_timeout, NULL);
    g_main_loop_run(w->loop);
    g_source_remove(t);
    g_main_loop_unref(w->loop);
    g_assert_cmpint(w->done_calls, ==, 1);
}

/* Speckle-like u16 frames from a fixed seed. */
static fm_dataset *random_stack(int width, int height, int frames)
{
    gsize sizes[3] = {(gsize)width, (gsize)height, (gsize)frames};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    GRand *rand = g_rand_new_with_seed(1234);
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        ((guint16 *)ds->data)[i] = (guint16)g_rand_int_range(rand, 100, 1100);
    g_rand_free(rand);
    return ds;
}

/* Sample standard deviation over mean in a window x window box, in double precision. */
static double brute_contrast(const fm_dataset *ds, int f, int cx, int cy, int window)
{
    int w = fm_dataset_width(ds), r = window / 2;
    const guint16 *frame = fm_dataset_frame(ds, f);
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int y = cy - r; y <= cy + r; y++)
        for (int x = cx - r; x <= cx + r; x++) {
            double v = frame[y * w + x];
            sum += v;
            sum2 += v * v;
            n++;
        }
    double mean = sum / n;
    return sqrt((sum2 - n * mean * mean) / (n - 1)) / mean;
}

static void test_lsi_job(void)
{
    g_autoptr(fm_dataset) ds = random_stack(40, 30, 3);
    const fm_method *m = fm_method_find("lsi.spatial");
    g_assert_nonnull(m);
    g_autoptr(fm_params) p = fm_method_default_params(m);
    g_assert_true(fm_params_set_from_string(p, "window", "5", NULL));
    Watch w;
    watch_init(&w);
    g_autoptr(fm_job) job =
        fm_job_start(m, ds, p, NULL, FM_BACKEND_CPU, NULL, on_progress, on_done, &w);
    g_autofree char *what = fm_job_describe(job);
    g_assert_cmpstr(what, ==, "lsi.spatial on unsaved data");
    wait_for(&w);
    g_test_message("progress callbacks: %d", w.progress_calls);
    g_assert_true(w.monotonic);
    g_assert_cmpint(fm_job_get_state(job), ==, FM_JOB_DONE);
    g_assert_cmpfloat(fm_job_get_progress(job), ==, 1.0);
    g_assert_null(fm_job_get_error(job));
    g_assert_cmpint(fm_job_get_run_id(job), ==, 0);
    const fm_result *r = fm_job_get_result(job);
    g_assert_cmpstr(r->method_id, ==, "lsi.spatial");
    g_assert_cmpstr(r->backend, ==, "cpu");
    g_assert_nonnull(strstr(r->params_json, "\"window\":5"));
    g_assert_cmpfloat(r->elapsed_ms, >=, 0.0);
    fm_map *k = fm_result_get_map(r, "contrast");
    fm_map *sfi = fm_result_get_map(r, "sfi");
    g_assert_nonnull(k);
    g_assert_nonnull(sfi);
    g_assert_cmpint(k->n_frames, ==, 3);
    /* Contrast against the brute-force window within 1e-5 relative, at inner pixels. */
    int pts[][3] = {{0, 2, 2}, {1, 20, 15}, {2, 37, 27}, {1, 10, 5}};
    for (gsize i = 0; i < G_N_ELEMENTS(pts); i++) {
        double truth = brute_contrast(ds, pts[i][0], pts[i][1], pts[i][2], 5);
        double got = fm_map_frame(k, pts[i][0])[pts[i][2] * 40 + pts[i][1]];
        g_assert_cmpfloat(fabs(got - truth), <=, 1e-5 * truth);
    }
    /* SFI = 1/(2 T K^2): SFI * K^2 is the same constant everywhere. */
    double c0 = sfi->data[15 * 40 + 20] * (double)k->data[15 * 40 + 20] * k->data[15 * 40 + 20];
    double c1 = sfi->data[5 * 40 + 10] * (double)k->data[5 * 40 + 10] * k->data[5 * 40 + 10];
    g_assert_cmpfloat(fabs(c0 - c1), <=, 1e-4 * c0);
}

static void test_cancel_from_progress(void)
{
    g_autoptr(fm_dataset) ds = random_stack(8, 8, 1);
    Watch w;
    watch_init(&w);
    w.cancel_on_progress = TRUE;
    g_autoptr(fm_job) job =
        fm_job_start(&fake_method, ds, NULL, NULL, FM_BACKEND_CPU, NULL, on_progress, on_done, &w);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(job), ==, FM_JOB_CANCELLED);
    g_assert_error((GError *)fm_job_get_error(job), FM_ERROR, FM_ERROR_CANCELLED);
    g_assert_null(fm_job_get_result(job));
    g_assert_cmpint(w.progress_calls, >=, 1);
    g_assert_cmpfloat(fm_job_get_progress(job), <, 1.0);
}

/* While the main loop is busy, thousands of ticks queue at most one update. */
static void test_progress_coalesced(void)
{
    g_autoptr(fm_dataset) ds = random_stack(8, 8, 1);
    g_autoptr(fm_params) p = fm_method_default_params(&fake_method);
    g_assert_true(fm_params_set_from_string(p, "ticks", "20000", NULL));
    g_assert_true(fm_params_set_from_string(p, "sleep_us", "0", NULL));
    Watch w;
    watch_init(&w);
    g_atomic_int_set(&fake_finished, 0);
    g_autoptr(fm_job) job =
        fm_job_start(&fake_method, ds, p, NULL, FM_BACKEND_CPU, NULL, on_progress, on_done, &w);
    while (!g_atomic_int_get(&fake_finished))
        g_usleep(1000);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(job), ==, FM_JOB_DONE);
    g_assert_cmpint(w.progress_calls, ==, 1);
    g_assert_cmpfloat(w.last_fraction, ==, 1.0);
}

static void test_cancel_lsi_before_start(void)
{
    g_autoptr(fm_dataset) ds = random_stack(64, 64, 4);
    Watch w;
    watch_init(&w);
    g_autoptr(fm_job) job = fm_job_start(fm_method_find("lsi.spatial"), ds, NULL, NULL,
                                         FM_BACKEND_CPU, NULL, on_progress, on_done, &w);
    fm_job_cancel(job);
    wait_for(&w);
    /* Cancelled at once; a job whose kernel already finished may legitimately be DONE. */
    fm_job_state s = fm_job_get_state(job);
    g_assert_true(s == FM_JOB_CANCELLED || s == FM_JOB_DONE);
    if (s == FM_JOB_CANCELLED)
        g_assert_error((GError *)fm_job_get_error(job), FM_ERROR, FM_ERROR_CANCELLED);
}

static char *run_dir(fm_catalogue *cat, gint64 id)
{
    g_autofree char *num = g_strdup_printf("%" G_GINT64_FORMAT, id);
    return g_build_filename(fm_catalogue_dir(cat), "runs", num, NULL);
}

static void test_jobs_in_catalogue(void)
{
    g_autofree char *tmp = g_dir_make_tmp("fluxmap-job-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(tmp, &error);
    g_assert_no_error(error);
    g_autoptr(fm_dataset) ds = random_stack(32, 24, 2);

    /* Done: run row with two outputs whose files exist. */
    Watch w;
    watch_init(&w);
    g_autoptr(fm_job) ok = fm_job_start(fm_method_find("lsi.spatial"), ds, NULL, NULL,
                                        FM_BACKEND_CPU, cat, NULL, on_done, &w);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(ok), ==, FM_JOB_DONE);
    gint64 id = fm_job_get_run_id(ok);
    g_assert_cmpint(id, >, 0);
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(cat, id, &error);
    g_assert_no_error(error);
    g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    g_assert_cmpstr(run->backend, ==, "cpu");
    g_assert_cmpuint(run->outputs->len, ==, 2);
    for (guint i = 0; i < run->outputs->len; i++) {
        fm_catalogue_output *o = g_ptr_array_index(run->outputs, i);
        g_assert_true(g_file_test(o->file, G_FILE_TEST_IS_REGULAR));
    }

    /* Cancelled: recorded as such, nothing on disk. */
    watch_init(&w);
    w.cancel_on_progress = TRUE;
    g_autoptr(fm_job) cancelled =
        fm_job_start(&fake_method, ds, NULL, NULL, FM_BACKEND_CPU, cat, on_progress, on_done, &w);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(cancelled), ==, FM_JOB_CANCELLED);
    gint64 cid = fm_job_get_run_id(cancelled);
    g_autoptr(fm_catalogue_run) crun = fm_catalogue_get_run(cat, cid, &error);
    g_assert_cmpint(crun->status, ==, FM_RUN_CANCELLED);
    g_assert_cmpuint(crun->outputs->len, ==, 0);
    g_autofree char *cdir = run_dir(cat, cid);
    g_assert_false(g_file_test(cdir, G_FILE_TEST_EXISTS));

    /* Failed: an image smaller than the window. */
    g_autoptr(fm_dataset) tiny = random_stack(3, 3, 1);
    watch_init(&w);
    g_autoptr(fm_job) failed = fm_job_start(fm_method_find("lsi.spatial"), tiny, NULL, NULL,
                                            FM_BACKEND_CPU, cat, NULL, on_done, &w);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(failed), ==, FM_JOB_FAILED);
    g_assert_error((GError *)fm_job_get_error(failed), FM_ERROR, FM_ERROR_BAD_PARAM);
    g_autoptr(fm_catalogue_run) frun = fm_catalogue_get_run(cat, fm_job_get_run_id(failed), &error);
    g_assert_cmpint(frun->status, ==, FM_RUN_FAILED);
    g_assert_cmpstr(frun->error_message, ==, fm_job_get_error(failed)->message);
    g_test_message("failure recorded: %s", frun->error_message);
}

/* Host memory standing in for the device, so that the dataset's offer and release show in CI. */
static void *standin_alloc(size_t bytes, void *user)
{
    return g_malloc(bytes);
}

static void standin_release(void *device, void *user)
{
    g_free(device);
}

static int standin_upload(void *device, const void *host, size_t bytes, void *user)
{
    memcpy(device, host, bytes);
    return 0;
}

static size_t standin_budget(void *user)
{
    return 64 << 20;
}

/* A run that may use the GPU offers its dataset for residency; a cancelled run holds no copy
 * afterwards, closing the dataset forgets it, and the job's stage times are recorded. */
static void test_resident_lifecycle(void)
{
    static const fm_resident_ops standin = {standin_alloc, standin_release, standin_upload,
                                            standin_budget, NULL};
    fm_resident_set_ops(&standin);
    fm_dataset *ds = random_stack(32, 24, 4);
    Watch w;
    watch_init(&w);
    fm_job *ok = fm_job_start(fm_method_find("lsi.spatial"), ds, NULL, NULL, FM_BACKEND_AUTO,
                              NULL, NULL, on_done, &w);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(ok), ==, FM_JOB_DONE);
    fm_resident_stats s = fm_resident_get_stats();
    g_assert_cmpint(s.offered, ==, 1);
    g_assert_cmpint(s.in_use, ==, 0);
    fm_stage_times t = fm_job_get_stage_times(ok, NULL);
    g_assert_cmpfloat(t.ms[FM_STAGE_COMPUTE], >, 0.0);
    g_assert_cmpfloat(fm_stage_times_total(&t), >=, t.ms[FM_STAGE_COMPUTE]);

    /* With a device copy present, a cancelled run leaves nothing held. */
    g_assert_nonnull(fm_resident_acquire(ds->data, fm_dataset_n_bytes(ds), NULL));
    fm_resident_release(ds->data);
    watch_init(&w);
    w.cancel_on_progress = TRUE;
    fm_job *cancelled =
        fm_job_start(&fake_method, ds, NULL, NULL, FM_BACKEND_AUTO, NULL, on_progress, on_done, &w);
    wait_for(&w);
    g_assert_cmpint(fm_job_get_state(cancelled), ==, FM_JOB_CANCELLED);
    s = fm_resident_get_stats();
    g_assert_cmpint(s.in_use, ==, 0);
    g_assert_cmpint(s.resident, ==, 1);

    /* Closing the dataset (the jobs hold references until they go) drops its copy. */
    fm_job_unref(ok);
    fm_job_unref(cancelled);
    fm_dataset_unref(ds);
    s = fm_resident_get_stats();
    g_assert_cmpint(s.offered, ==, 0);
    g_assert_cmpint(s.resident, ==, 0);
    g_assert_cmpuint(s.resident_bytes, ==, 0);
    fm_resident_set_ops(NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/core/job/lsi-spatial", test_lsi_job);
    g_test_add_func("/core/job/cancel-from-progress", test_cancel_from_progress);
    g_test_add_func("/core/job/resident-lifecycle", test_resident_lifecycle);
    g_test_add_func("/core/job/progress-coalesced", test_progress_coalesced);
    g_test_add_func("/core/job/cancel-lsi", test_cancel_lsi_before_start);
    g_test_add_func("/core/job/catalogue", test_jobs_in_catalogue);
    return g_test_run();
}
