/* FmMcmlView: MCML input editor (layers, grid, photons, mode, backend, presets, .mci files),
 * runs mcml.run as a catalogued job, and shows fluence, Rd(r), Tt(r), Rd(a) and the totals. */
#include "mcml-view-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/catalogue.h"
#include "app/core/io/mci.h"
#include "app/core/io/mco.h"
#include "app/core/job.h"
#include "app/core/mcml/mcml_methods.h"
#include "mcml-map.h"
#include "app/gui/plot-view.h"

G_DEFINE_FINAL_TYPE(FmMcmlView, fm_mcml_view, GTK_TYPE_BOX)

enum { JOB_STARTED, JOB_PROGRESS, JOB_FINISHED, MODEL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* The model now on the editor: its file stem and the name shown to the user. */
static void set_model(FmMcmlView *self, const char *name, const char *title)
{
    g_free(self->model_name);
    g_free(self->model_title);
    self->model_name = g_strdup(name);
    self->model_title = g_strdup(title);
    g_signal_emit(self, signals[MODEL_CHANGED], 0);
}

void fm_mcml_view_set_status(FmMcmlView *self, const char *text)
{
    g_free(self->status_text);
    self->status_text = g_strdup(text);
    gtk_label_set_text(GTK_LABEL(self->status), text);
}

/* ---- editor <-> fm_mcml_params ---- */

static void fill_editor(FmMcmlView *self, const fm_mcml_params *p)
{
    gtk_list_store_clear(self->layers);
    for (int k = 0; k < p->n_layers; k++) {
        const fm_mcml_layer *l = &p->layers[k];
        gtk_list_store_insert_with_values(self->layers, NULL, -1, COL_N, l->n, COL_MUA,
                                          l->mua_per_cm, COL_MUS, l->mus_per_cm, COL_G, l->g, COL_D,
                                          l->thickness_cm, -1);
    }
    const double v[N_SPINS] = {p->dz_cm,   p->dr_cm,  p->nz, p->nr, p->na, (double)p->n_photons,
                               p->n_above, p->n_below};
    for (int i = 0; i < N_SPINS; i++)
        gtk_spin_button_set_value(GTK_SPIN_BUTTON(self->spins[i]), v[i]);
}

static double spin(FmMcmlView *self, int i)
{
    return gtk_spin_button_get_value(GTK_SPIN_BUTTON(self->spins[i]));
}

static void read_editor(FmMcmlView *self, fm_mcml_params *p)
{
    memset(p, 0, sizeof *p);
    p->dz_cm = spin(self, SPIN_DZ);
    p->dr_cm = spin(self, SPIN_DR);
    p->nz = (int)spin(self, SPIN_NZ);
    p->nr = (int)spin(self, SPIN_NR);
    p->na = (int)spin(self, SPIN_NA);
    p->n_photons = (long long)spin(self, SPIN_PHOTONS);
    p->n_above = spin(self, SPIN_N_ABOVE);
    p->n_below = spin(self, SPIN_N_BELOW);
    p->record_absorption = 1;
    p->seed = 1;
    GtkTreeIter it;
    gboolean ok = gtk_tree_model_get_iter_first(GTK_TREE_MODEL(self->layers), &it);
    while (ok && p->n_layers < FM_MCML_MAX_LAYERS) {
        fm_mcml_layer *l = &p->layers[p->n_layers++];
        gtk_tree_model_get(GTK_TREE_MODEL(self->layers), &it, COL_N, &l->n, COL_MUA, &l->mua_per_cm,
                           COL_MUS, &l->mus_per_cm, COL_G, &l->g, COL_D, &l->thickness_cm, -1);
        ok = gtk_tree_model_iter_next(GTK_TREE_MODEL(self->layers), &it);
    }
}

gboolean fm_mcml_view_load_preset(FmMcmlView *win, const char *name)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_mci_file) file = fm_mci_preset(name, &error);
    if (file == NULL) {
        fm_mcml_view_set_status(win, error->message);
        return FALSE;
    }
    fill_editor(win, &file->runs[0].params);
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(win->preset), name);
    set_model(win, name, _(fm_mci_preset_title(name)));
    return TRUE;
}

void fm_mcml_view_load_demo(FmMcmlView *view)
{
    fm_mcml_view_load_preset(view, "skin7_600nm");
    /* The preset is GPU-MCML's benchmark: 1e6 photons on a 500 x 200 grid 1 cm deep (air below
     * 0.8 cm), about 20 s on two CPU cores and noisy beyond 1 cm. The demo: 1e5 photons
     * (2-3.5 s on two cores, CPU backend) on bins 2.5 times larger over the skin's 8 mm and
     * 1.5 cm across. */
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(view->spins[SPIN_DZ]), 0.005);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(view->spins[SPIN_NZ]), 160);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(view->spins[SPIN_DR]), 0.01);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(view->spins[SPIN_NR]), 150);
    fm_mcml_view_set_photons(view, 1e5);
}

gboolean fm_mcml_view_open_mci(FmMcmlView *win, const char *path, GError **error)
{
    g_autoptr(fm_mci_file) file = fm_mci_read(path, error);
    if (file == NULL)
        return FALSE;
    fill_editor(win, &file->runs[0].params);
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *stem =
        g_str_has_suffix(base, ".mci") ? g_strndup(base, strlen(base) - 4) : g_strdup(base);
    set_model(win, stem, base);
    return TRUE;
}

gboolean fm_mcml_view_save_mci(FmMcmlView *win, const char *path, GError **error)
{
    fm_mcml_params p;
    read_editor(win, &p);
    g_autofree char *base = g_path_get_basename(path);
    g_autofree char *stem =
        g_str_has_suffix(base, ".mci") ? g_strndup(base, strlen(base) - 4) : g_strdup(base);
    g_autofree char *out = g_strconcat(stem, ".mco", NULL);
    g_autoptr(fm_mci_file) file = fm_mci_file_new_single(&p, out);
    return fm_mci_write(path, file, error);
}

gboolean fm_mcml_view_save_mco(FmMcmlView *win, const char *path, GError **error)
{
    if (win->last_result == NULL) {
        g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, _("no finished run"));
        return FALSE;
    }
    fm_mci_run run = {
        .output_name = win->last_output_name, .format = 'A', .params = win->last_params};
    fm_mcml_result r;
    gboolean ok = fm_mcml_result_from_maps(win->last_result, &win->last_params, &r, error) &&
                  fm_mco_write(path, &run, &r, win->last_result->elapsed_ms / 1000.0, error);
    fm_mcml_result_clear(&r);
    return ok;
}

void fm_mcml_view_set_photons(FmMcmlView *win, double photons)
{
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(win->spins[SPIN_PHOTONS]), photons);
}

/* ---- results ---- */

static void show_curve(GtkWidget *plot, const fm_result *result, const char *name, double step,
                       double scale)
{
    const fm_map *m = fm_result_get_map(result, name);
    if (m == NULL) {
        fm_plot_view_clear(FM_PLOT_VIEW(plot));
        return;
    }
    g_autofree double *x = g_new(double, m->width);
    g_autofree double *y = g_new(double, m->width);
    for (int i = 0; i < m->width; i++) {
        x[i] = (i + 0.5) * step * scale;
        y[i] = m->data[i];
    }
    /* MCML's last bin collects everything beyond the grid: not part of the curve */
    fm_plot_view_set_series(FM_PLOT_VIEW(plot), x, y, MAX(m->width - 1, 1));
}

/* "100,000 photons in 3.2 s on CPU, 2 threads" and the note's remarks (Rd/Tt only, a partial
 * run), without the totals (in the table above) or a CPU fallback (the window's status bar says
 * that once). */
static char *run_summary(const fm_result *result, const fm_map *rat)
{
    GString *s = g_string_new(NULL);
    if (rat != NULL && rat->width >= 8)
        g_string_append_printf(s, _("%'.0f photons in %.1f s on %s"), rat->data[7],
                               result->elapsed_ms / 1000.0,
                               result->device ? result->device : result->backend);
    g_autofree char *fallback = g_strdup(_("fell back to the CPU: %s"));
    char *cut = strstr(fallback, "%s");
    if (cut != NULL)
        *cut = '\0';
    g_auto(GStrv) parts = g_strsplit(result->note ? result->note : "", "; ", -1);
    for (int i = 2; parts[0] && parts[1] && parts[i] != NULL; i++) /* the totals, the photons */
        if (*parts[i] && !(*fallback && g_str_has_prefix(parts[i], fallback)))
            g_string_append_printf(s, "%s%s", s->len ? "; " : "", parts[i]);
    return g_string_free(s, FALSE);
}

static void show_result(FmMcmlView *self, const fm_result *result)
{
    g_clear_pointer(&self->last_result, fm_result_free);
    self->last_result = fm_result_new(result->method_id);
    self->last_result->elapsed_ms = result->elapsed_ms;
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *m = result->maps->pdata[i];
        fm_map *copy = fm_map_new(m->name, m->unit, m->width, m->height, m->n_frames);
        memcpy(copy->data, m->data, fm_map_n_values(m) * sizeof(float));
        fm_result_add_map(self->last_result, copy);
    }
    const fm_mcml_params *p = &self->last_params;
    g_clear_pointer(&self->log_fluence, g_free);
    const fm_map *fluence = fm_result_get_map(result, "fluence_rz");
    if (fluence) {
        gsize n = fm_map_n_values(fluence);
        self->log_fluence = g_new(float, n);
        for (gsize i = 0; i < n; i++)
            self->log_fluence[i] = fluence->data[i] > 0 ? log10f(fluence->data[i]) : NAN;
    }
    double top = 0;
    for (int k = 0; k < p->n_layers; k++) {
        top += p->layers[k].thickness_cm;
        self->bounds[k] = top / p->dz_cm;
    }
    gtk_widget_queue_draw(self->area);
    show_curve(self->rd_plot, result, "rd_r", p->dr_cm, 1.0);
    show_curve(self->tt_plot, result, "tt_r", p->dr_cm, 1.0);
    show_curve(self->rda_plot, result, "rd_a", 90.0 / p->na, 1.0);

    const fm_map *rat = fm_result_get_map(result, "rat");
    for (int i = 0; i < 4 && rat; i++) {
        self->shown_totals[i] = rat->data[i];
        /* SE of Rd, A, Tt are rat[4..6]; Rsp is exact */
        g_autofree char *text =
            i == 0 ? g_strdup_printf("%.6f", rat->data[0])
                   : g_strdup_printf("%.6f ± %.6f", rat->data[i], rat->data[3 + i]);
        gtk_label_set_text(GTK_LABEL(self->totals[i]), text);
    }
    g_autofree char *summary = run_summary(result, rat);
    fm_mcml_view_set_status(self, summary);
}

static void job_progress(fm_job *job, double fraction, gpointer user)
{
    FmMcmlView *self = user;
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), fraction);
    g_signal_emit(self, signals[JOB_PROGRESS], 0, job);
}

static void job_done(fm_job *job, gpointer user)
{
    FmMcmlView *self = user;
    const fm_result *result = fm_job_get_result(job);
    if (result)
        show_result(self, result);
    else if (fm_job_get_error(job))
        fm_mcml_view_set_status(self, fm_job_get_error(job)->message);
    else
        fm_mcml_view_set_status(self, _("Cancelled."));
    g_signal_emit(self, signals[JOB_FINISHED], 0, job);
    g_clear_pointer(&self->job, fm_job_unref);
    gtk_widget_set_sensitive(self->run, TRUE);
    gtk_widget_set_sensitive(self->cancel, FALSE);
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), result ? 1.0 : 0.0);
    g_object_unref(self); /* held while the job ran */
}

gboolean fm_mcml_view_run(FmMcmlView *self)
{
    if (self->job)
        return FALSE;
    fm_mcml_params p;
    read_editor(self, &p);
    p.record_absorption =
        g_strcmp0(gtk_combo_box_get_active_id(GTK_COMBO_BOX(self->mode)), "rt_only") != 0;
    char msg[FM_MSG_LEN] = "";
    if (fm_mcml_check(&p, msg, sizeof msg) != FM_OK) {
        fm_mcml_view_set_status(self, msg);
        return FALSE;
    }
    g_autoptr(GError) error = NULL;
    if (self->catalogue == NULL) {
        g_autofree char *dir = fm_catalogue_default_dir();
        self->catalogue = fm_catalogue_open(dir, &error);
        if (self->catalogue == NULL) {
            fm_mcml_view_set_status(self, error->message);
            return FALSE;
        }
        self->owns_catalogue = TRUE;
        g_clear_error(&error);
    }
    /* The edited model is saved as an .mci beside the catalogue: the run records the file it
     * simulated (path and sha256) like any other input, under the model's own name (the
     * catalogue and the job list show it) in a folder of its own per run. */
    g_autofree char *stamp = g_strdup_printf("%" G_GINT64_FORMAT, g_get_real_time());
    g_autofree char *inputs =
        g_build_filename(fm_catalogue_dir(self->catalogue), "mcml-inputs", stamp, NULL);
    g_mkdir_with_parents(inputs, 0755);
    g_autofree char *name = fm_mcml_view_get_input_name(self);
    g_autofree char *path = g_build_filename(inputs, name, NULL);
    if (!fm_mcml_view_save_mci(self, path, &error)) {
        fm_mcml_view_set_status(self, error->message);
        return FALSE;
    }
    g_autoptr(fm_dataset) input = fm_mci_dataset_new(path, &error);
    if (input == NULL) {
        fm_mcml_view_set_status(self, error->message);
        return FALSE;
    }
    const fm_method *method = fm_method_find("mcml.run");
    g_autoptr(fm_params) params = fm_method_default_params(method);
    fm_params_set_from_string(params, "mode", p.record_absorption ? "full" : "rt_only", NULL);
    fm_backend backend = FM_BACKEND_AUTO;
    const char *b = gtk_combo_box_get_active_id(GTK_COMBO_BOX(self->backend));
    if (g_strcmp0(b, "cpu") == 0)
        backend = FM_BACKEND_CPU;
    else if (g_strcmp0(b, "cuda") == 0)
        backend = FM_BACKEND_CUDA;
    self->last_params = p;
    g_free(self->last_output_name);
    self->last_output_name = g_strdup("fluxmap.mco");
    g_object_ref(self);
    self->job = fm_job_start(method, input, params, NULL, backend, self->catalogue, job_progress,
                             job_done, self);
    gtk_widget_set_sensitive(self->run, FALSE);
    gtk_widget_set_sensitive(self->cancel, TRUE);
    fm_mcml_view_set_status(self, _("Running…"));
    g_signal_emit(self, signals[JOB_STARTED], 0, self->job);
    return TRUE;
}

void fm_mcml_view_cancel(FmMcmlView *win)
{
    if (win->job)
        fm_job_cancel(win->job);
}

gboolean fm_mcml_view_is_running(FmMcmlView *win)
{
    return win->job != NULL;
}

gboolean fm_mcml_view_get_totals(FmMcmlView *win, double totals[4])
{
    if (win->last_result == NULL)
        return FALSE;
    memcpy(totals, win->shown_totals, sizeof win->shown_totals);
    return TRUE;
}

const float *fm_mcml_view_get_map(FmMcmlView *win, int *width, int *height)
{
    *width = win->last_params.nr;
    *height = win->last_params.nz;
    return win->log_fluence;
}

const char *fm_mcml_view_get_status(FmMcmlView *win)
{
    return win->status_text;
}

static void fm_mcml_view_dispose(GObject *object)
{
    FmMcmlView *self = FM_MCML_VIEW(object);
    if (self->job)
        fm_job_cancel(self->job);
    G_OBJECT_CLASS(fm_mcml_view_parent_class)->dispose(object);
}

static void fm_mcml_view_finalize(GObject *object)
{
    FmMcmlView *self = FM_MCML_VIEW(object);
    g_clear_object(&self->layers);
    g_clear_object(&self->panel);
    if (self->owns_catalogue)
        g_clear_pointer(&self->catalogue, fm_catalogue_close);
    g_clear_pointer(&self->last_result, fm_result_free);
    g_free(self->log_fluence);
    g_free(self->last_output_name);
    g_free(self->status_text);
    g_free(self->model_name);
    g_free(self->model_title);
    G_OBJECT_CLASS(fm_mcml_view_parent_class)->finalize(object);
}

static void fm_mcml_view_class_init(FmMcmlViewClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_mcml_view_dispose;
    G_OBJECT_CLASS(klass)->finalize = fm_mcml_view_finalize;
    const char *names[N_SIGNALS] = {"job-started", "job-progress", "job-finished", "model-changed"};
    for (int i = 0; i < N_SIGNALS; i++)
        signals[i] = i == MODEL_CHANGED
                         ? g_signal_new(names[i], G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 0)
                         : g_signal_new(names[i], G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);
}

static void fm_mcml_view_init(FmMcmlView *self)
{
    fm_mcml_view_build(self);
    fm_mcml_view_load_preset(self, "mcml_sample");
}

FmMcmlView *fm_mcml_view_new(void)
{
    return g_object_new(FM_TYPE_MCML_VIEW, "orientation", GTK_ORIENTATION_VERTICAL, NULL);
}

GtkWidget *fm_mcml_view_get_panel(FmMcmlView *view)
{
    return view->panel;
}

void fm_mcml_view_set_catalogue(FmMcmlView *view, gpointer catalogue)
{
    if (view->owns_catalogue)
        g_clear_pointer(&view->catalogue, fm_catalogue_close);
    view->catalogue = catalogue;
    view->owns_catalogue = FALSE;
}

const char *fm_mcml_view_get_model_title(FmMcmlView *view)
{
    return view->model_title;
}

char *fm_mcml_view_get_input_name(FmMcmlView *view)
{
    const char *name = view->model_name && *view->model_name ? view->model_name : "model";
    return g_strconcat(name, ".mci", NULL);
}

GtkWidget *fm_mcml_view_get_map_area(FmMcmlView *view)
{
    return view->area;
}
