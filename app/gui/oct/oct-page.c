/* FmWindow's SD-OCT wiring: panel and views pages, oct.bscan jobs, "compare resampling". */
#include "oct-page.h"

#include <glib/gi18n.h>

#include "app/core/io/oct_raw.h"
#include "app/core/oct/oct_stages.h"
#include "oct-compare.h"
#include "oct-panel.h"
#include "oct-views.h"
#include "app/gui/live/live-gui.h"
#include "app/gui/window-private.h"

typedef struct {
    FmOctPanel *panel;
    FmOctViews *views;
    GtkWidget *compare; /* weak pointer */
} OctState;

static OctState *state_of(FmWindow *win)
{
    return g_object_get_data(G_OBJECT(win), "fm-oct");
}

static gboolean is_oct(const fm_dataset *ds)
{
    /* raw spectra, or a TIFF with the OCT sidecar "<file>.json" beside it */
    return ds && (fm_oct_dataset_is_spectra(ds) ||
                  g_strcmp0(fm_dataset_get_meta(ds, FM_OCT_META_UNPARSED), "1") == 0 ||
                  (ds->source_path && fm_oct_raw_has_sidecar(ds->source_path)));
}

/* The dataset as spectra under the panel's layout parameters, or NULL (message shown). */
static fm_dataset *current_spectra(FmWindow *win, fm_params **params_out, gboolean quiet)
{
    OctState *st = state_of(win);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_params) params = fm_oct_panel_get_params(st->panel, &error);
    fm_dataset *spectra = params ? fm_oct_spectra_from_dataset(win->dataset, params, &error) : NULL;
    if (!spectra && !quiet)
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
    if (spectra && params_out)
        *params_out = g_steal_pointer(&params);
    return spectra;
}

static double meta_um(const fm_dataset *ds, const char *key)
{
    const char *text = ds ? fm_dataset_get_meta(ds, key) : NULL;
    return text ? g_ascii_strtod(text, NULL) : 0.0;
}

/* What the open file says of itself beyond its spectra: lateral steps, sidecar calibration. */
static void take_file_facts(FmWindow *win)
{
    OctState *st = state_of(win);
    const fm_dataset *ds = is_oct(win->dataset) ? win->dataset : NULL;
    fm_oct_views_set_spacing(st->views, meta_um(ds, FM_OCT_META_ALINE_SPACING),
                             meta_um(ds, FM_OCT_META_BSCAN_SPACING));
    fm_oct_panel_set_sidecar_calibration(
        st->panel, ds ? fm_dataset_get_meta(ds, FM_OCT_META_CALIBRATION) : NULL);
}

static void oct_dataset_changed(FmWindow *win)
{
    OctState *st = state_of(win);
    if (!st)
        return;
    fm_oct_views_set_playing(st->views, FALSE);
    take_file_facts(win);
    if (!is_oct(win->dataset)) {
        fm_oct_views_set_spectra(st->views, NULL, NULL);
        return;
    }
    fm_params *params = NULL;
    g_autoptr(fm_dataset) spectra = current_spectra(win, &params, TRUE);
    fm_oct_panel_set_n_pixels(st->panel, spectra ? fm_dataset_width(spectra) : 0);
    fm_oct_views_set_spectra(st->views, spectra, params);
    if (params)
        fm_params_free(params);
}

static const fm_method *page_get_method(FmWindow *win)
{
    (void)win;
    return fm_method_find("oct.bscan");
}

static fm_params *page_get_params(FmWindow *win)
{
    return fm_oct_panel_get_params(state_of(win)->panel, NULL);
}

static gboolean page_set_param(FmWindow *win, const char *key, const char *text)
{
    return fm_oct_panel_set_value(state_of(win)->panel, key, text);
}

/* A raw file replayed as a camera: its sidecar's calibration when the form names none, as a
 * run on the file takes it. */
static gboolean live_prepare(const char *replay_path, fm_params *params, GError **error)
{
    const char *named = fm_params_get_string(params, "calibration_file");
    if (replay_path == NULL || (named != NULL && *named != '\0') ||
        !fm_oct_raw_has_sidecar(replay_path))
        return TRUE;
    fm_oct_raw_layout layout;
    g_autofree char *calibration = NULL;
    if (!fm_oct_raw_read_sidecar(replay_path, &layout, &calibration, error))
        return FALSE;
    return calibration == NULL ||
           fm_params_set_from_string(params, "calibration_file", calibration, error);
}

/* A source chosen for live B-scans: the panel says which calibration the run will use (a
 * replayed file's sidecar names one), the views leave their file controls and say what to do. */
static void live_source(FmWindow *win, const char *source_name, const char *replay_path)
{
    OctState *st = state_of(win);
    if (source_name == NULL) { /* the source went: the open file's facts again */
        fm_oct_views_set_live(st->views, FALSE, 0, NULL);
        take_file_facts(win);
        return;
    }
    g_autofree char *calibration = NULL;
    fm_oct_raw_layout layout;
    if (replay_path && fm_oct_raw_has_sidecar(replay_path))
        fm_oct_raw_read_sidecar(replay_path, &layout, &calibration, NULL);
    fm_oct_panel_set_sidecar_calibration(st->panel, calibration);
    double aline_um = 0, bscan_um = 0;
    if (replay_path)
        fm_oct_raw_sidecar_steps(replay_path, &aline_um, &bscan_um);
    fm_oct_views_set_spacing(st->views, aline_um, bscan_um);
    g_autofree char *text =
        g_strdup_printf(_("Press Start for live B-scans from %s."), source_name);
    fm_oct_views_set_live(st->views, TRUE, 0, text);
}

/* A live run starts: its depth step from the run's calibration (as the live step computes it,
 * from the frames' shape); the lateral steps are the replayed file's sidecar's (live_source). */
static void live_begin(FmWindow *win, const char *source_name, const fm_params *params, int width,
                       int height)
{
    OctState *st = state_of(win);
    gsize sizes[3] = {(gsize)MAX(width, 1), (gsize)MAX(height, 1), 1};
    g_autoptr(fm_dataset) shape =
        fm_dataset_new(FM_PIXEL_U16, 3, sizes, (const char *const[]){"pixel", "aline", "bscan"});
    g_autoptr(fm_oct_setup) setup = fm_oct_setup_new(shape, params, NULL);
    double um_per_bin = setup ? setup->um_per_bin : 0;
    g_autofree char *text =
        um_per_bin > 0
            ? g_strdup_printf(_("Live B-scans from %s; the centre A-line below; %.3f µm per "
                                "depth bin"),
                              source_name, um_per_bin)
            : g_strdup_printf(_("Live B-scans from %s; the centre A-line below; depth in bins"),
                              source_name);
    fm_oct_views_set_live(st->views, TRUE, um_per_bin, text);
}

static const fm_map *output_map(const fm_map *const *maps, int n_maps, const char *name)
{
    for (int i = 0; i < n_maps; i++)
        if (g_strcmp0(maps[i]->name, name) == 0)
            return maps[i];
    return NULL;
}

static void live_show(FmWindow *win, const fm_map *const *maps, int n_maps, guint64 n)
{
    (void)n;
    OctState *st = state_of(win);
    fm_oct_views_show_live(st->views, output_map(maps, n_maps, "bscan_db"),
                           output_map(maps, n_maps, "enface"));
}

static void live_end(FmWindow *win, const char *source_name)
{
    g_autofree char *text =
        g_strdup_printf(_("The last live B-scan from %s; press Start to go on."), source_name);
    fm_oct_views_set_live_text(state_of(win)->views, text);
}

static int oct_takes(const fm_dataset *ds)
{
    return is_oct(ds) ? FM_PAGE_TAKES_OWN : FM_PAGE_TAKES_NONE;
}

typedef struct {
    FmWindow *win;
    fm_dataset *spectra;
    fm_params *params;
    double um_per_bin;
} RunData;

static void job_progress(fm_job *job, double fraction, gpointer user)
{
    FmWindow *win = ((RunData *)user)->win;
    if (!win->disposed)
        fm_job_list_update(win->job_list, job);
}

/* The B-scan into the OCT views (a copy: the job's own goes with the job) and the outcome. */
static void show_result(RunData *rd, fm_job *job, const fm_result *res)
{
    FmWindow *win = rd->win;
    OctState *st = state_of(win);
    g_autofree char *what = fm_job_describe(job);
    fm_oct_views_set_spectra(st->views, rd->spectra, rd->params);
    fm_oct_views_set_result(st->views, fm_window_copy_result(res), rd->um_per_bin);
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "oct");
    fm_window_show_done(win, res, what);
}

/* The B-scan is computed: show it while the worker still writes the catalogue. */
static void job_ready(fm_job *job, gpointer user)
{
    RunData *rd = user;
    const fm_result *res = fm_job_get_ready_result(job);
    if (rd->win->disposed || !res)
        return;
    fm_job_list_update(rd->win->job_list, job);
    show_result(rd, job, res);
    fm_window_mark_ready_shown(rd->win, job);
}

static void job_done(fm_job *job, gpointer user)
{
    RunData *rd = user;
    FmWindow *win = rd->win;
    win->running_jobs--;
    win->last_job_state = fm_job_get_state(job);
    gboolean shown = fm_window_take_ready_shown(win, job);
    if (!win->disposed) {
        fm_job_list_update(win->job_list, job);
        g_autofree char *what = fm_job_describe(job);
        const fm_result *res = fm_job_get_result(job);
        if (win->last_job_state == FM_JOB_DONE && res) {
            if (!shown) {
                show_result(rd, job, res);
                fm_window_result_shown(win, job);
            }
        } else if (win->last_job_state == FM_JOB_FAILED) {
            g_free(fm_window_show_failure(win, job, what));
        }
        fm_window_refresh_after_job(win);
    }
    fm_dataset_unref(rd->spectra);
    fm_params_free(rd->params);
    g_object_unref(win);
    g_free(rd);
}

static void run_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    OctState *st = state_of(win);
    if (!win->dataset) {
        fm_window_show_message(win, GTK_MESSAGE_INFO, _("Open OCT spectra before running."));
        return;
    }
    fm_params *params = NULL;
    fm_dataset *spectra = current_spectra(win, &params, FALSE);
    if (!spectra)
        return;
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_oct_setup) setup = fm_oct_setup_new(spectra, params, &error);
    if (!setup) {
        fm_window_show_message(win, GTK_MESSAGE_ERROR, error->message);
        fm_dataset_unref(spectra);
        fm_params_free(params);
        return;
    }
    RunData *rd = g_new0(RunData, 1);
    rd->win = g_object_ref(win);
    rd->spectra = spectra;
    rd->params = params;
    rd->um_per_bin = setup->um_per_bin;
    fm_oct_views_set_playing(st->views, FALSE);
    win->running_jobs++;
    /* the job gets the spectra, so a raw file without sidecar is decoded once, here */
    fm_job *job = fm_job_start(fm_method_find("oct.bscan"), spectra, params, NULL,
                               fm_oct_panel_get_backend(st->panel), win->catalogue, job_progress,
                               job_done, rd);
    fm_job_set_ready_callback(job, job_ready);
    fm_job_list_add(win->job_list, job);
    g_autofree char *what = fm_job_describe(job);
    fm_job_unref(job);
    g_autofree char *status = g_strdup_printf(_("Running %s…"), what);
    fm_window_set_status(win, status);
}

static void compare_activated(GSimpleAction *action, GVariant *parameter, gpointer user)
{
    FmWindow *win = user;
    OctState *st = state_of(win);
    if (!is_oct(win->dataset)) {
        fm_window_show_message(win, GTK_MESSAGE_INFO,
                               _("Open OCT spectra before comparing resampling methods."));
        return;
    }
    fm_params *params = NULL;
    g_autoptr(fm_dataset) spectra = current_spectra(win, &params, FALSE);
    if (!spectra)
        return;
    if (st->compare)
        gtk_widget_destroy(st->compare);
    FmOctCompare *cmp =
        fm_oct_compare_new(GTK_WINDOW(win), spectra, params, fm_oct_views_get_bscan(st->views),
                           fm_oct_panel_get_backend(st->panel));
    fm_params_free(params);
    st->compare = GTK_WIDGET(cmp);
    g_object_add_weak_pointer(G_OBJECT(cmp), (gpointer *)&st->compare);
    gtk_widget_show_all(st->compare);
}

static void family_changed(GObject *stack, GParamSpec *pspec, FmWindow *win)
{
    if (g_strcmp0(fm_window_get_family(win), "oct") == 0)
        gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "oct");
}

static void state_free(gpointer data)
{
    OctState *st = data;
    if (st->compare)
        g_object_remove_weak_pointer(G_OBJECT(st->compare), (gpointer *)&st->compare);
    g_free(st);
}

/* win.run on this page: win.oct-run. */
static gboolean page_run(FmWindow *win)
{
    g_action_group_activate_action(G_ACTION_GROUP(win), "oct-run", NULL);
    return TRUE;
}

/* A result from the catalogue: the B-scans in the OCT views, with the depth scale of the open
 * spectra when they are OCT (else in bins). */
static gboolean page_show_result(FmWindow *win, const fm_result *res)
{
    OctState *st = state_of(win);
    if (!st || !g_str_has_prefix(res->method_id, "oct."))
        return FALSE;
    double um_per_bin = 0.0; /* unknown without the spectra */
    fm_params *params = NULL;
    take_file_facts(win);
    fm_dataset *spectra = is_oct(win->dataset) ? current_spectra(win, &params, TRUE) : NULL;
    if (spectra) {
        g_autoptr(fm_oct_setup) setup = fm_oct_setup_new(spectra, params, NULL);
        if (setup)
            um_per_bin = setup->um_per_bin;
        fm_oct_views_set_spectra(st->views, spectra, params);
        fm_dataset_unref(spectra);
        fm_params_free(params);
    }
    fm_oct_views_set_result(st->views, fm_window_copy_result(res), um_per_bin);
    fm_window_set_family(win, "oct");
    gtk_stack_set_visible_child_name(GTK_STACK(win->centre_stack), "oct");
    return TRUE;
}

FmFamilyPage *fm_oct_page_new(FmWindow *win)
{
    static const GActionEntry entries[] = {
        {"oct-run", run_activated, NULL, NULL, NULL, {0}},
        {"oct-compare", compare_activated, NULL, NULL, NULL, {0}},
    };
    g_action_map_add_action_entries(G_ACTION_MAP(win), entries, G_N_ELEMENTS(entries), win);
    OctState *st = g_new0(OctState, 1);
    g_object_set_data_full(G_OBJECT(win), "fm-oct", st, state_free);
    st->panel = FM_OCT_PANEL(fm_oct_panel_new());
    fm_window_add_panel(win, "oct", _("SD-OCT"), GTK_WIDGET(st->panel));
    st->views = FM_OCT_VIEWS(fm_oct_views_new());
    fm_oct_panel_add_display(st->panel, fm_oct_views_get_display_controls(st->views));
    /* untitled: the map toolbar's Map | Lifetime switcher lists FLIM's views only */
    gtk_stack_add_named(GTK_STACK(win->centre_stack), GTK_WIDGET(st->views), "oct");
    gtk_widget_show_all(GTK_WIDGET(st->views));
    /* after the window's handler, which shows the map for every page without views */
    g_signal_connect(win->panel_stack, "notify::visible-child", G_CALLBACK(family_changed), win);
    /* a line-scan camera's frames: B-scans live, the en-face image growing beside them */
    fm_live_add_page(win, &(fm_live_page){.page_id = "oct",
                                          .frames = FM_LIVE_FRAMES_LINES,
                                          .panel = GTK_BOX(st->panel),
                                          .view = fm_oct_views_get_bscan_view(st->views),
                                          .second_view = fm_oct_views_get_enface_view(st->views),
                                          .second_map = "enface",
                                          .centre = "oct",
                                          .prepare = live_prepare,
                                          .source = live_source,
                                          .begin = live_begin,
                                          .show = live_show,
                                          .end = live_end});
    /* the B-scan views bring their own playback, dB range and A-line plot */
    static const fm_page_funcs funcs = {
        .id = "oct",
        .takes = oct_takes,
        .dataset_changed = oct_dataset_changed,
        .run = page_run,
        .show_result = page_show_result,
        .set_param = page_set_param,
        .get_method = page_get_method,
        .get_params = page_get_params,
    };
    return fm_family_page_from_funcs(win, &funcs);
}

GtkWidget *fm_window_get_oct_panel(FmWindow *win)
{
    OctState *st = state_of(win);
    return st ? GTK_WIDGET(st->panel) : NULL;
}

GtkWidget *fm_window_get_oct_views(FmWindow *win)
{
    OctState *st = state_of(win);
    return st ? GTK_WIDGET(st->views) : NULL;
}

GtkWidget *fm_window_get_oct_compare(FmWindow *win)
{
    OctState *st = state_of(win);
    return st ? st->compare : NULL;
}
