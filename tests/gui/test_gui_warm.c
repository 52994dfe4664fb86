/* GUI test: the status bar names the device from start-up on (before any job), and a re-run's
 * map goes on show as soon as the method returned it, before the catalogue has recorded it, with
 * the job row naming its stage meanwhile. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/tiff.h"
#include "app/core/stages.h"
#include "app/gui/application.h"
#include "app/gui/job-list.h"
#include "app/gui/lsi/lsi-panel.h"
#include "app/gui/window.h"
#include "gui-test-util.h"

static char *data_dir;
static char *tif_path;
static FmApplication *app;
static FmWindow *win;

/* What the window showed when it emitted "result-shown". */
typedef struct {
    int count;
    gint64 shown_us;
    fm_job *job;          /* ref of the last job shown */
    gboolean job_running; /* its state when its maps went on show */
    int running_jobs;     /* the window's count then (its done handler decrements it) */
    char *row_text;       /* the job list's state line for it then */
    float *data;          /* the map view's data then */
    int width, height;
} Shown;

static Shown shown;

static void result_shown(FmWindow *window, gpointer job, gpointer unused G_GNUC_UNUSED)
{
    shown.count++;
    shown.shown_us = g_get_monotonic_time();
    g_clear_pointer(&shown.job, fm_job_unref);
    shown.job = fm_job_ref(job);
    shown.job_running = fm_job_get_state(job) == FM_JOB_RUNNING;
    shown.running_jobs = fm_window_get_running_jobs(window);
    g_free(shown.row_text);
    shown.row_text =
        g_strdup(fm_job_list_get_state_text(FM_JOB_LIST(fm_window_get_job_list(window)), job));
    const float *data =
        fm_map_view_get_data(fm_window_get_map_view(window), &shown.width, &shown.height);
    g_free(shown.data);
    shown.data = data != NULL ? g_memdup2(data, sizeof(float) * shown.width * shown.height) : NULL;
}

static const char *error_message(void)
{
    return fm_gui_test_error_message(win);
}

static gboolean dataset_loaded(gpointer unused G_GNUC_UNUSED)
{
    return !fm_window_is_loading(win) &&
           (fm_window_get_dataset(win) != NULL || error_message() != NULL);
}

static gboolean device_named(gpointer unused G_GNUC_UNUSED)
{
    return fm_application_get_device(app, NULL, NULL, NULL);
}

/* The backend combo of the LSI panel: the one offering "cuda" (fm_widget_find over the window). */
static gboolean is_backend_combo(GtkWidget *widget, gconstpointer unused G_GNUC_UNUSED)
{
    if (!GTK_IS_COMBO_BOX(widget) || gtk_widget_get_ancestor(widget, FM_TYPE_LSI_PANEL) == NULL)
        return FALSE;
    GtkTreeModel *model = gtk_combo_box_get_model(GTK_COMBO_BOX(widget));
    int id_column = gtk_combo_box_get_id_column(GTK_COMBO_BOX(widget));
    GtkTreeIter it;
    for (gboolean ok = model && id_column >= 0 && gtk_tree_model_get_iter_first(model, &it); ok;
         ok = gtk_tree_model_iter_next(model, &it)) {
        g_autofree char *id = NULL;
        gtk_tree_model_get(model, &it, id_column, &id, -1);
        if (g_strcmp0(id, "cuda") == 0)
            return TRUE;
    }
    return FALSE;
}

/* (a) Without any job, the status bar names the device of the next run shortly after start-up:
 * on a machine without a GPU (CI) the CPU twin with its thread count. The user's choice of
 * backend updates it. */
static void test_device_named_at_start(void)
{
    g_assert_true(fm_gui_test_wait_until(device_named, NULL, 20));
    fm_gui_test_drain(0.05);
    g_assert_cmpint(fm_window_get_last_job_state(win), ==, -1); /* no job has run */
    int n_devices = 0;
    fm_gpu_info gpu = {0};
    g_assert_true(fm_application_get_device(app, &n_devices, &gpu, NULL));
    g_autofree char *text = g_strdup(fm_window_get_device_text(win));
    g_test_message("status bar: %s", text);
    g_autofree char *cpu = g_strdup_printf("CPU, %d thread", fm_cpu_threads());
    if (n_devices > 0)
        g_assert_nonnull(strstr(text, gpu.name));
    else
        g_assert_nonnull(strstr(text, cpu));

    GtkWidget *combo = fm_widget_find(GTK_WIDGET(win), is_backend_combo, NULL);
    g_assert_nonnull(combo);
    g_assert_true(gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), "cpu"));
    g_assert_nonnull(strstr(fm_window_get_device_text(win), cpu));
    g_assert_true(gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), "cuda"));
    if (n_devices > 0)
        g_assert_nonnull(strstr(fm_window_get_device_text(win), gpu.name));
    else
        g_assert_null(strstr(fm_window_get_device_text(win), "CPU"));
    g_assert_true(gtk_combo_box_set_active_id(GTK_COMBO_BOX(combo), "auto"));
    g_assert_cmpstr(fm_window_get_device_text(win), ==, text);
}

/* (c) The row's state line names a stage while the job runs: "<stage title>… NN %". */
static void assert_names_stage(const char *row_text)
{
    g_assert_nonnull(row_text);
    for (int s = 0; s < FM_N_STAGES; s++) {
        g_autofree char *prefix = g_strdup_printf("%s…", fm_stage_title(s));
        if (g_str_has_prefix(row_text, prefix))
            return;
    }
    g_error("job row \"%s\" names no stage", row_text);
}

/* The map after a run: shown once, by the ready callback while the job still ran (so before
 * the catalogue write and the done handler), and still the one on display afterwards. */
static void assert_shown_before_done(int count_before)
{
    g_assert_cmpint(shown.count, ==, count_before + 1); /* done did not show it a second time */
    g_assert_true(shown.job_running);
    g_assert_cmpint(shown.running_jobs, ==, 1);
    assert_names_stage(shown.row_text);
    g_assert_nonnull(shown.data);
    int w = 0, h = 0;
    const float *now = fm_map_view_get_data(fm_window_get_map_view(win), &w, &h);
    g_assert_cmpint(w, ==, shown.width);
    g_assert_cmpint(h, ==, shown.height);
    g_assert_cmpmem(now, sizeof(float) * w * h, shown.data, sizeof(float) * w * h);
}

/* (b) Open, run lsi.spatial, double the exposure and run again: the second map is the new one
 * (SFI = 1/(2 T K^2) halves, K unchanged) and went on show before the catalogue finished. */
static void test_rerun_shows_before_catalogue(void)
{
    g_action_group_activate_action(G_ACTION_GROUP(app), "open", g_variant_new_string(tif_path));
    g_assert_true(fm_gui_test_wait_until(dataset_loaded, NULL, 30));
    g_assert_null(error_message());
    g_assert_true(fm_window_select_method(win, "lsi.spatial"));
    g_signal_connect(win, "result-shown", G_CALLBACK(result_shown), NULL);

    fm_gui_test_run_job(win, "run", 60);
    assert_shown_before_done(0);
    int w = shown.width, h = shown.height;
    g_autofree float *first = g_memdup2(shown.data, sizeof(float) * w * h);

    g_assert_true(fm_window_set_param(win, "exposure_ms", "20"));
    gint64 started_us = g_get_monotonic_time();
    fm_gui_test_run_job(win, "run", 60);
    gint64 done_seen_us = g_get_monotonic_time();
    assert_shown_before_done(1);
    g_assert_cmpint(shown.width, ==, w);
    g_assert_cmpint(shown.height, ==, h);
    gsize finite = 0;
    for (gsize i = 0; i < (gsize)w * h; i++) {
        g_assert_cmpint(isfinite(first[i]), ==, isfinite(shown.data[i]));
        if (!isfinite(first[i]))
            continue;
        finite++;
        /* float32 SFI from the same K: the halving is exact up to rounding. */
        g_assert_cmpfloat_with_epsilon(shown.data[i], 0.5 * first[i], 1e-5 * fabs(first[i]));
    }
    g_assert_cmpuint(finite, ==, (gsize)(w - 4) * (h - 4)); /* 5x5 window, valid border */

    /* The wait from the end of compute to the map on show is at most what the start, the
     * catalogue's begin and the main loop add to the method's own time: report it, and bound it
     * loosely (a loaded 2-core machine must not fail it). */
    const fm_result *res = fm_job_get_result(shown.job);
    g_assert_nonnull(res);
    fm_stage_times times = fm_job_get_stage_times(shown.job, NULL);
    double to_shown_ms = (shown.shown_us - started_us) / 1000.0;
    double after_compute_ms = to_shown_ms - res->elapsed_ms;
    g_test_message("re-run: method %.1f ms, map on show %.1f ms after Run (<= %.1f ms after "
                   "compute), done seen %.1f ms after Run; catalogue %.1f ms, compute %.1f ms",
                   res->elapsed_ms, to_shown_ms, after_compute_ms,
                   (done_seen_us - started_us) / 1000.0, times.ms[FM_STAGE_CATALOGUE],
                   times.ms[FM_STAGE_COMPUTE]);
    g_assert_cmpfloat(after_compute_ms, <, 5000.0);
    g_assert_cmpint(shown.shown_us, <=, done_seen_us);

    const char *const methods[] = {"lsi.spatial", "lsi.spatial", NULL};
    g_autoptr(GPtrArray) runs = fm_gui_test_assert_done_runs(data_dir, 0, methods);
    const fm_catalogue_run *newest = runs->pdata[0];
    g_assert_nonnull(strstr(newest->params_json, "\"exposure_ms\":20"));
    g_assert_cmpint(fm_job_get_run_id(shown.job), ==, newest->id);

    g_autofree char *path = fm_gui_test_screenshot_path(data_dir, "screenshot-warm.png", "");
    fm_gui_test_save_png(GTK_WIDGET(win), path);
}

int main(int argc, char **argv)
{
    data_dir = fm_gui_test_init(&argc, &argv, "fluxmap-gui-warm-XXXXXX");
    if (data_dir == NULL)
        return 0;
    tif_path = fm_gui_test_write_speckle(data_dir, "speckle-warm.tif", 96, 80, 2, 20240607);
    app = fm_gui_test_new_app();
    win = fm_gui_test_activate(app);

    g_test_add_func("/gui-warm/device-named-at-start", test_device_named_at_start);
    g_test_add_func("/gui-warm/rerun-shows-before-catalogue", test_rerun_shows_before_catalogue);
    int status = g_test_run();
    g_clear_pointer(&shown.job, fm_job_unref);
    g_free(shown.row_text);
    g_free(shown.data);
    fm_gui_test_shutdown(app, GTK_WIDGET(win), data_dir);
    g_free(tif_path);
    return status;
}
