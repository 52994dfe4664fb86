/* FmFlimViews: lays out the lifetime merge image beside the phasor plot, the lifetime histogram
 * and the decay under the cursor, and keeps them in step (ROIs, phasor region, cursor). */
#include "flim-views-private.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/core/flim/flim_decay_fit.h"
#include "app/core/flim/flim_irf.h"
#include "app/core/flim/flim_model.h"
#include "app/core/flim/flim_prep.h"
#include "app/core/flim/flim_window.h"
#include "app/core/roi.h"

G_DEFINE_TYPE(FmFlimViews, fm_flim_views, GTK_TYPE_BOX)

/* What the decay plot shows when the pointer is away from the image: the sum over the image or
 * the first ROI with a fit of that sum, kept until the result, the ROIs or the data change. */
typedef struct _FmFlimSumFit {
    double *counts, *model, *residuals; /* model and residuals NULL without a result */
    int n_params;
    char *title, *info;
} FmFlimSumFit;

static void sum_fit_free(FmFlimSumFit *sum)
{
    if (sum == NULL)
        return;
    g_free(sum->counts);
    g_free(sum->model);
    g_free(sum->residuals);
    g_free(sum->title);
    g_free(sum->info);
    g_free(sum);
}

static void forget_sum(FmFlimViews *self)
{
    g_clear_pointer(&self->sum, sum_fit_free);
}

static void refresh(FmFlimViews *self)
{
    fm_flim_views_rebuild_merged(self);
    gtk_widget_queue_draw(self->image);
    gtk_widget_queue_draw(self->histogram);
}

/* ---- ranges and selectors ---------------------------------------------------------------- */

static void auto_range(FmFlimViews *self)
{
    const fm_map *tau = tau_map(self);
    double lo, hi;
    if (tau != NULL &&
        fm_percentile_range(tau->data, (gsize)tau->width * tau->height, 1, 99, &lo, &hi) &&
        hi > lo) {
        /* Pad a little so the extreme pixels are not all saturated at one hue. */
        double pad = 0.05 * (hi - lo);
        self->lo = MAX(0.0, lo - pad);
        self->hi = hi + pad;
    } else if (tau != NULL && isfinite(lo)) {
        self->lo = MAX(0.0, lo - 0.5);
        self->hi = lo + 0.5;
    }
    self->updating = TRUE;
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(self->lo_spin), self->lo);
    gtk_spin_button_set_value(GTK_SPIN_BUTTON(self->hi_spin), self->hi);
    self->updating = FALSE;
}

static void range_changed(GtkSpinButton *spin, FmFlimViews *self)
{
    if (self->updating)
        return;
    double lo = gtk_spin_button_get_value(GTK_SPIN_BUTTON(self->lo_spin));
    double hi = gtk_spin_button_get_value(GTK_SPIN_BUTTON(self->hi_spin));
    if (hi <= lo)
        return;
    self->lo = lo;
    self->hi = hi;
    self->updating = TRUE;
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(self->auto_toggle), FALSE);
    self->updating = FALSE;
    refresh(self);
}

static void auto_toggled(GtkToggleButton *button, FmFlimViews *self)
{
    if (self->updating || !gtk_toggle_button_get_active(button))
        return;
    auto_range(self);
    refresh(self);
}

static void tau_combo_changed(GtkComboBox *combo, FmFlimViews *self)
{
    if (self->updating)
        return;
    g_free(self->tau_name);
    self->tau_name = g_strdup(gtk_combo_box_get_active_id(combo));
    if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->auto_toggle)))
        auto_range(self);
    refresh(self);
}

static void phasor_selection_changed(FmPhasorView *phasor, FmFlimViews *self)
{
    g_free(self->phasor_mask);
    self->phasor_mask = fm_phasor_view_selection_mask(phasor, NULL);
    refresh(self);
}

/* The fit window the panel's parameters give, once the summed decay is known (photons_thread):
 * the same function the run calls, so what is drawn is what will be fitted. */
static void update_window(FmFlimViews *self)
{
    int start = -1, end = -1;
    double bw = 0;
    fm_flim_window w;
    if (self->dataset != NULL && self->params != NULL && self->photons != NULL &&
        fm_flim_prep_bin_width(self->dataset, fm_params_get_double(self->params, "bin_width_ps"),
                               &bw, NULL) &&
        fm_flim_params_window(self->dataset, self->params, bw, NULL, &w, NULL)) {
        start = w.start;
        end = w.end;
    }
    fm_decay_view_set_window(self->decay, start, end);
}

/* ---- photons on a worker ----------------------------------------------------------------- */

static void photons_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    fm_dataset *ds = data;
    int w = fm_dataset_width(ds), h = fm_dataset_height(ds), n = fm_dataset_frames(ds);
    gsize plane = (gsize)w * h;
    float *out = g_new0(float, plane);
    for (int b = 0; b < n && !g_cancellable_is_cancelled(cancel); b++)
        for (gsize p = 0; p < plane; p++)
            out[p] += (float)fm_dataset_value(ds, (gsize)b * plane + p);
    /* the summed decay the auto fit window is read from, kept on the dataset: so that the
     * window drawn on the main loop costs nothing there */
    if (!g_cancellable_is_cancelled(cancel))
        g_bytes_unref(fm_flim_decay_sum(ds));
    g_task_return_pointer(task, out, g_free);
}

static void photons_done(GObject *source, GAsyncResult *res, gpointer user)
{
    float *photons = g_task_propagate_pointer(G_TASK(res), NULL);
    if (g_cancellable_is_cancelled(g_task_get_cancellable(G_TASK(res)))) {
        g_free(photons);
        return;
    }
    FmFlimViews *self = FM_FLIM_VIEWS(source);
    g_free(self->photons);
    self->photons = photons;
    forget_sum(self);
    update_window(self);
    refresh(self);
    fm_flim_views_show_decay(self, -1, -1);
}

/* ---- public ------------------------------------------------------------------------------ */

void fm_flim_views_set_dataset(FmFlimViews *self, fm_dataset *ds)
{
    if (self->photon_cancel != NULL)
        g_cancellable_cancel(self->photon_cancel);
    g_clear_object(&self->photon_cancel);
    g_clear_pointer(&self->dataset, fm_dataset_unref);
    g_clear_pointer(&self->photons, g_free);
    g_clear_pointer(&self->result, fm_result_free);
    g_clear_pointer(&self->phasor_mask, g_free);
    g_clear_pointer(&self->irf, g_free);
    forget_sum(self);
    fm_phasor_view_clear(self->phasor);
    fm_decay_view_clear(self->decay);
    self->updating = TRUE;
    gtk_combo_box_text_remove_all(GTK_COMBO_BOX_TEXT(self->tau_combo));
    self->updating = FALSE;
    if (ds != NULL && fm_flim_dataset_is_flim(ds)) {
        self->dataset = fm_dataset_ref(ds);
        self->width = fm_dataset_width(ds);
        self->height = fm_dataset_height(ds);
        self->n_bins = fm_dataset_frames(ds);
        self->bin_width_ns = fm_flim_bin_width_ns(ds);
        self->photon_cancel = g_cancellable_new();
        g_autoptr(GTask) task = g_task_new(self, self->photon_cancel, photons_done, NULL);
        g_task_set_task_data(task, fm_dataset_ref(ds), (GDestroyNotify)fm_dataset_unref);
        g_task_run_in_thread(task, photons_thread);
    }
    update_window(self);
    refresh(self);
}

/* Fit range in bins of the run on display (where it was auto, what the run chose), the whole
 * decay when its parameters do not say; the phasor's frequency as the run took it. */
static void read_fit_range(FmFlimViews *self)
{
    self->fit_start = 0;
    self->fit_end = self->n_bins;
    self->binning = 1;
    g_clear_pointer(&self->irf, g_free);
    self->omega =
        self->n_bins * self->bin_width_ns > 0 ? 2 * G_PI / (self->n_bins * self->bin_width_ns) : 0;
    if (self->result == NULL || self->result->params_json == NULL)
        return;
    int start, end;
    if (fm_flim_run_window(self->dataset, self->result->method_id, self->result->params_json,
                           &start, &end)) {
        self->fit_start = start;
        self->fit_end = end;
    }
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, self->result->params_json, -1, NULL))
        return;
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        return;
    JsonObject *o = json_node_get_object(root);
    double dt = self->bin_width_ns;
    if (json_object_has_member(o, "bin_width_ps") &&
        json_object_get_double_member(o, "bin_width_ps") > 0)
        dt = json_object_get_double_member(o, "bin_width_ps") * 1e-3;
    if (json_object_has_member(o, "binning"))
        self->binning = MAX((int)json_object_get_int_member(o, "binning"), 1);
    /* the fits convolve their model with the IRF: the decay plot draws it the same way */
    const char *irf_file =
        json_object_has_member(o, "irf_file") ? json_object_get_string_member(o, "irf_file") : NULL;
    if (irf_file != NULL && *irf_file != '\0' && dt > 0)
        self->irf = fm_flim_load_decay_resampled(irf_file, self->n_bins, dt, _("IRF"), NULL, NULL);
    self->omega = 0;
    if (dt <= 0)
        return;
    /* Phasor frequency: harmonic n of the repetition rate (the file's when not given), else of
     * one period over the range, as the method takes it. */
    double rate = json_object_has_member(o, "rep_rate_mhz")
                      ? json_object_get_double_member(o, "rep_rate_mhz")
                      : 0.0;
    int harmonic =
        json_object_has_member(o, "harmonic") ? (int)json_object_get_int_member(o, "harmonic") : 1;
    double period = self->dataset != NULL ? fm_flim_period_ns(self->dataset, rate) : 0.0;
    if (!(period > 0))
        period = self->n_bins * dt;
    self->omega = 2 * G_PI * MAX(harmonic, 1) / period;
}

void fm_flim_views_set_params(FmFlimViews *self, const fm_params *params)
{
    g_clear_pointer(&self->params, fm_params_free);
    self->params = params != NULL ? fm_params_copy(params) : NULL;
    update_window(self);
}

void fm_flim_views_set_result(FmFlimViews *self, fm_result *result)
{
    g_clear_pointer(&self->result, fm_result_free);
    g_clear_pointer(&self->phasor_mask, g_free);
    self->result = result;
    forget_sum(self);
    read_fit_range(self);
    static const char *const taus[] = {"tau",      "tau_avg_int", "tau_avg_amp", "tau_fast",
                                       "tau_slow", "tau_phase",   "tau_mod",     NULL};
    self->updating = TRUE;
    gtk_combo_box_text_remove_all(GTK_COMBO_BOX_TEXT(self->tau_combo));
    const char *first = NULL;
    for (int i = 0; result != NULL && taus[i] != NULL; i++)
        if (fm_result_get_map(result, taus[i]) != NULL) {
            gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->tau_combo), taus[i], taus[i]);
            first = first != NULL ? first : taus[i];
        }
    g_free(self->tau_name);
    self->tau_name = g_strdup(first);
    if (first != NULL)
        gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->tau_combo), first);
    self->updating = FALSE;
    if (gtk_toggle_button_get_active(GTK_TOGGLE_BUTTON(self->auto_toggle)))
        auto_range(self);
    const fm_map *g = result != NULL ? fm_result_get_map(result, "phasor_g") : NULL;
    const fm_map *s = result != NULL ? fm_result_get_map(result, "phasor_s") : NULL;
    if (g != NULL && s != NULL) {
        fm_phasor_view_set_data(self->phasor, g->data, s->data, g->width, g->height, self->omega);
        fm_flim_views_set_rois(self, self->rois);
    }
    refresh(self);
    fm_flim_views_show_decay(self, -1, -1);
}

const fm_result *fm_flim_views_get_result(FmFlimViews *self)
{
    return self->result;
}

void fm_flim_views_set_rois(FmFlimViews *self, GPtrArray *rois)
{
    GPtrArray *copy = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    for (guint i = 0; rois != NULL && i < rois->len; i++)
        g_ptr_array_add(copy, fm_roi_copy(rois->pdata[i]));
    if (self->rois != NULL)
        g_ptr_array_unref(self->rois);
    self->rois = copy;
    forget_sum(self);
    if (copy->len > 0 && self->width > 0) {
        gsize n = (gsize)self->width * self->height;
        g_autofree guint8 *all = g_new0(guint8, n);
        for (guint i = 0; i < copy->len; i++) {
            g_autofree guint8 *m = fm_roi_rasterise(copy->pdata[i], self->width, self->height);
            for (gsize p = 0; p < n; p++)
                all[p] |= m[p];
        }
        fm_phasor_view_set_highlight(self->phasor, all);
    } else {
        fm_phasor_view_set_highlight(self->phasor, NULL);
    }
    gtk_widget_queue_draw(self->image);
    fm_flim_views_show_decay(self, -1, -1);
}

/* "LSM" from "flim.lsm": how the plot names a method. */
static char *method_short(const char *method_id)
{
    const char *dot = method_id != NULL ? strrchr(method_id, '.') : NULL;
    return g_ascii_strup(dot != NULL ? dot + 1 : method_id != NULL ? method_id : "", -1);
}

/* Reduced chi-square of residuals over the bins where they are finite. */
static double reduced_chi2(const double *res, int n_bins, int n_params)
{
    double sum = 0;
    int k = 0;
    for (int b = 0; b < n_bins; b++)
        if (isfinite(res[b])) {
            sum += res[b] * res[b];
            k++;
        }
    return k > n_params ? sum / (k - n_params) : NAN;
}

/* "τ 2.13 ns", or "τF 0.80 · τD 2.50 ns · fD 0.47" for two exponentials. */
static char *describe_model(const fm_flim_pixel_model *m)
{
    if (isfinite(m->tau_fast_ns) && isfinite(m->tau_slow_ns) && isfinite(m->fraction_d))
        return g_strdup_printf(_("τF %.2f · τD %.2f ns · fD %.2f"), m->tau_fast_ns, m->tau_slow_ns,
                               m->fraction_d);
    return g_strdup_printf(_("τ %.3f ns"), m->tau_ns);
}

static int model_params(const fm_flim_pixel_model *m)
{
    gboolean bi = isfinite(m->tau_fast_ns) && isfinite(m->tau_slow_ns);
    return (bi ? 4 : 2) + (isfinite(m->background) ? 1 : 0);
}

/* The decay of pixel (x, y) as the run fitted it (its k x k neighbourhood when it binned), with
 * that pixel's fit from the result's maps. */
static void show_pixel(FmFlimViews *self, int x, int y)
{
    int n = self->n_bins, k = self->binning;
    g_autofree double *counts = g_new0(double, n), *one = g_new(double, n);
    for (int dy = -(k - 1) / 2; dy <= k / 2; dy++)
        for (int dx = -(k - 1) / 2; dx <= k / 2; dx++) {
            int px = x + dx, py = y + dy;
            if (px < 0 || py < 0 || px >= self->width || py >= self->height)
                continue;
            fm_flim_pixel_decay(self->dataset, px, py, one);
            for (int b = 0; b < n; b++)
                counts[b] += one[b];
        }
    g_autofree char *title = g_strdup_printf(_("Pixel %d, %d"), x, y);
    g_autofree double *model = g_new(double, n), *res = g_new(double, n);
    fm_flim_pixel_model m;
    gboolean fitted =
        self->result != NULL &&
        fm_flim_pixel_model_from_result(self->result, (gsize)y * self->width + x, &m) &&
        fm_flim_model_curve(&m, self->irf, n, self->bin_width_ns, self->fit_start, self->fit_end,
                            counts, model);
    if (!fitted) {
        fm_decay_view_set(self->decay, counts, NULL, NULL, n, self->bin_width_ns, 0, title, NULL);
        return;
    }
    fm_flim_weighted_residuals(counts, model, n, self->fit_start, self->fit_end, res);
    g_autofree char *what = describe_model(&m), *method = method_short(self->result->method_id);
    g_autofree char *info = g_strdup_printf(_("%s fit: %s · χ²ᵣ %.2f"), method, what,
                                            reduced_chi2(res, n, model_params(&m)));
    fm_decay_view_set(self->decay, counts, model, res, n, self->bin_width_ns, model_params(&m),
                      title, info);
}

/* The sum over the first ROI, else over the image, with a fit of that sum by the run's method
 * family: what the plot shows when the pointer is away. NULL while the image's sum is not known
 * yet (it is summed on a worker). */
static FmFlimSumFit *sum_fit_new(FmFlimViews *self)
{
    int n = self->n_bins, w = self->width, h = self->height;
    FmFlimSumFit *sum = g_new0(FmFlimSumFit, 1);
    sum->counts = g_new0(double, n);
    gsize n_pixels = 0;
    if (self->rois != NULL && self->rois->len > 0) {
        const fm_roi *roi = self->rois->pdata[0];
        g_autofree guint8 *mask = fm_roi_rasterise(roi, w, h);
        g_autofree double *one = g_new(double, n);
        for (int py = 0; py < h; py++)
            for (int px = 0; px < w; px++) {
                if (!mask[(gsize)py * w + px])
                    continue;
                fm_flim_pixel_decay(self->dataset, px, py, one);
                for (int b = 0; b < n; b++)
                    sum->counts[b] += one[b];
                n_pixels++;
            }
        sum->title = g_strdup_printf(_("Sum over ROI %s"), roi->name != NULL ? roi->name : "1");
    } else if (self->photons != NULL) {
        g_autoptr(GBytes) bytes = fm_flim_decay_sum(self->dataset);
        gsize size = 0;
        const double *all = g_bytes_get_data(bytes, &size);
        for (int b = 0; b < n && (gsize)b < size / sizeof(double); b++)
            sum->counts[b] = all[b];
        n_pixels = (gsize)w * h;
        sum->title = g_strdup(_("Sum over the image"));
    } else {
        sum_fit_free(sum);
        return NULL;
    }
    if (self->result == NULL)
        return sum;
    fm_flim_decay_fit fit;
    g_autoptr(GError) error = NULL;
    if (!fm_flim_fit_decay(self->result->method_id, self->result->params_json, sum->counts, n,
                           self->bin_width_ns, self->fit_start, self->fit_end, self->irf,
                           n_pixels > 1, &fit, &error)) {
        sum->info = g_strdup_printf(_("no fit: %s"), error->message);
        return sum;
    }
    sum->model = g_new(double, n);
    sum->residuals = g_new(double, n);
    if (!fm_flim_model_curve(&fit.model, self->irf, n, self->bin_width_ns, fit.fit_start,
                             fit.fit_end, sum->counts, sum->model)) {
        g_clear_pointer(&sum->model, g_free);
        g_clear_pointer(&sum->residuals, g_free);
        return sum;
    }
    fm_flim_weighted_residuals(sum->counts, sum->model, n, fit.fit_start, fit.fit_end,
                               sum->residuals);
    sum->n_params = fit.n_params;
    g_autofree char *what = describe_model(&fit.model), *method = method_short(fit.method_id);
    /* the sum fitted after the IRF (fm_flim_fit_decay): said where it differs from the window */
    g_autofree char *from =
        fit.fit_start != self->fit_start
            ? g_strdup_printf(_(" from %.2f ns"), fit.fit_start * self->bin_width_ns)
            : g_strdup("");
    sum->info = g_strdup_printf(_("%s fit%s: %s · χ²ᵣ %.2f"), method, from, what,
                                reduced_chi2(sum->residuals, n, fit.n_params));
    return sum;
}

void fm_flim_views_show_decay(FmFlimViews *self, int x, int y)
{
    if (self->dataset == NULL)
        return;
    if (x >= 0 && y >= 0 && x < self->width && y < self->height) {
        show_pixel(self, x, y);
        return;
    }
    if (self->sum == NULL)
        self->sum = sum_fit_new(self);
    if (self->sum == NULL)
        return;
    fm_decay_view_set(self->decay, self->sum->counts, self->sum->model, self->sum->residuals,
                      self->n_bins, self->bin_width_ns, self->sum->n_params, self->sum->title,
                      self->sum->info);
}

const float *fm_flim_views_get_tau(FmFlimViews *self, int *width, int *height)
{
    const fm_map *tau = tau_map(self);
    if (tau == NULL)
        return NULL;
    *width = tau->width;
    *height = tau->height;
    return tau->data;
}

void fm_flim_views_get_tau_range(FmFlimViews *self, double *lo, double *hi)
{
    *lo = self->lo;
    *hi = self->hi;
}

gboolean fm_flim_views_photons_ready(FmFlimViews *self)
{
    return self->photons != NULL;
}

FmPhasorView *fm_flim_views_get_phasor_view(FmFlimViews *self)
{
    return self->phasor;
}

FmDecayView *fm_flim_views_get_decay_view(FmFlimViews *self)
{
    return self->decay;
}

GtkWidget *fm_flim_views_get_histogram(FmFlimViews *self, const FmPlotLayout **layout)
{
    if (layout != NULL)
        *layout = &self->histogram_layout;
    return self->histogram;
}

/* ---- life cycle -------------------------------------------------------------------------- */

static void fm_flim_views_dispose(GObject *object)
{
    FmFlimViews *self = FM_FLIM_VIEWS(object);
    if (self->split_idle != 0)
        g_source_remove(self->split_idle);
    self->split_idle = 0;
    if (self->photon_cancel != NULL)
        g_cancellable_cancel(self->photon_cancel);
    g_clear_object(&self->photon_cancel);
    G_OBJECT_CLASS(fm_flim_views_parent_class)->dispose(object);
}

static void fm_flim_views_finalize(GObject *object)
{
    FmFlimViews *self = FM_FLIM_VIEWS(object);
    g_clear_pointer(&self->dataset, fm_dataset_unref);
    g_clear_pointer(&self->result, fm_result_free);
    g_clear_pointer(&self->params, fm_params_free);
    g_clear_pointer(&self->merged, cairo_surface_destroy);
    if (self->rois != NULL)
        g_ptr_array_unref(self->rois);
    g_free(self->photons);
    g_free(self->phasor_mask);
    g_free(self->tau_name);
    g_free(self->irf);
    forget_sum(self);
    fm_plot_layout_clear(&self->histogram_layout);
    G_OBJECT_CLASS(fm_flim_views_parent_class)->finalize(object);
}

static void fm_flim_views_class_init(FmFlimViewsClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_flim_views_dispose;
    G_OBJECT_CLASS(klass)->finalize = fm_flim_views_finalize;
}

/* ---- the split between image and plots ----------------------------------------------------- */

static gboolean apply_split(gpointer data)
{
    FmFlimViews *self = data;
    self->split_idle = 0;
    if (!self->h_by_user && self->want_h > 0 &&
        abs(gtk_paned_get_position(GTK_PANED(self->split_h)) - self->want_h) > 1)
        gtk_paned_set_position(GTK_PANED(self->split_h), self->want_h);
    if (!self->v_by_user && self->want_v > 0 &&
        abs(gtk_paned_get_position(GTK_PANED(self->split_v)) - self->want_v) > 1)
        gtk_paned_set_position(GTK_PANED(self->split_v), self->want_v);
    return G_SOURCE_REMOVE;
}

/* The lifetime image as wide as it is tall (with its legend), the plots get the rest; the decay
 * half their height. Set from an idle: a paned moved inside its own allocation would
 * allocate again within it. */
static void split_allocated(GtkWidget *paned, GdkRectangle *area, FmFlimViews *self)
{
    if (paned == self->split_h)
        self->want_h = MAX(260, MIN(area->height + 110, area->width - 340));
    else
        self->want_v = area->height / 2;
    if (self->split_idle == 0)
        self->split_idle = g_idle_add(apply_split, self);
}

/* A press on a handle: the user places it from now on. */
static gboolean split_pressed(GtkWidget *paned, GdkEventButton *event, FmFlimViews *self)
{
    if (event->window != gtk_paned_get_handle_window(GTK_PANED(paned)))
        return FALSE; /* a press in a view that the view left unhandled */
    if (paned == self->split_h)
        self->h_by_user = TRUE;
    else
        self->v_by_user = TRUE;
    return FALSE;
}

static GtkWidget *framed(GtkWidget *child)
{
    GtkWidget *frame = gtk_frame_new(NULL);
    gtk_container_add(GTK_CONTAINER(frame), child);
    gtk_widget_set_hexpand(child, TRUE);
    gtk_widget_set_vexpand(child, TRUE);
    return frame;
}

static void fm_flim_views_init(FmFlimViews *self)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    gtk_box_set_spacing(GTK_BOX(self), 4);
    self->lo = 0.5;
    self->hi = 5.0;
    GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    g_object_set(bar, "margin-start", 6, "margin-end", 6, "margin-top", 2, NULL);
    GtkWidget *label = gtk_label_new(_("Lifetime"));
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    self->tau_combo = gtk_combo_box_text_new();
    gtk_widget_set_tooltip_text(self->tau_combo, _("Lifetime map shown as hue"));
    self->auto_toggle = gtk_toggle_button_new_with_label(_("Auto"));
    gtk_toggle_button_set_active(GTK_TOGGLE_BUTTON(self->auto_toggle), TRUE);
    gtk_widget_set_tooltip_text(self->auto_toggle, _("Lifetime range from the 1st and 99th "
                                                     "percentiles"));
    self->lo_spin = gtk_spin_button_new_with_range(0, 100, 0.05);
    self->hi_spin = gtk_spin_button_new_with_range(0, 100, 0.05);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(self->lo_spin), 2);
    gtk_spin_button_set_digits(GTK_SPIN_BUTTON(self->hi_spin), 2);
    GtkWidget *dash = gtk_label_new("–"), *unit = gtk_label_new(_("ns"));
    GtkWidget *hint = gtk_label_new(_("hue = τ, brightness = photons"));
    gtk_style_context_add_class(gtk_widget_get_style_context(hint), "dim-label");
    gtk_widget_set_hexpand(hint, TRUE);
    gtk_label_set_xalign(GTK_LABEL(hint), 1.0);
    gtk_label_set_ellipsize(GTK_LABEL(hint), PANGO_ELLIPSIZE_END); /* gives way on small screens */
    GtkWidget *row[] = {
        label, self->tau_combo, self->auto_toggle, self->lo_spin, dash, self->hi_spin, unit, hint};
    for (gsize i = 0; i < G_N_ELEMENTS(row); i++)
        gtk_box_pack_start(GTK_BOX(bar), row[i], i == G_N_ELEMENTS(row) - 1, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(self), bar, FALSE, FALSE, 0);

    GtkWidget *paned = self->split_h = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    self->image = gtk_drawing_area_new();
    gtk_widget_add_events(self->image, GDK_POINTER_MOTION_MASK | GDK_LEAVE_NOTIFY_MASK);
    gtk_widget_set_size_request(self->image, 260, 160);
    gtk_paned_pack1(GTK_PANED(paned), framed(self->image), TRUE, FALSE);
    /* the plots: phasor and histogram side by side above, the decay (the widest reading) below */
    GtkWidget *side = self->split_v = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
    GtkWidget *upper = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 4);
    gtk_box_set_homogeneous(GTK_BOX(upper), TRUE);
    self->phasor = FM_PHASOR_VIEW(fm_phasor_view_new());
    gtk_widget_set_size_request(GTK_WIDGET(self->phasor), 150, 100);
    self->histogram = gtk_drawing_area_new();
    gtk_widget_set_size_request(self->histogram, 150, 100);
    self->decay = FM_DECAY_VIEW(fm_decay_view_new());
    gtk_box_pack_start(GTK_BOX(upper), framed(GTK_WIDGET(self->phasor)), TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(upper), framed(self->histogram), TRUE, TRUE, 0);
    gtk_paned_pack1(GTK_PANED(side), upper, TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(side), framed(GTK_WIDGET(self->decay)), TRUE, FALSE);
    gtk_widget_set_size_request(side, 300, -1);
    gtk_paned_pack2(GTK_PANED(paned), side, TRUE, FALSE);
    gtk_widget_set_vexpand(paned, TRUE);
    gtk_box_pack_start(GTK_BOX(self), paned, TRUE, TRUE, 0);
    g_signal_connect(self->split_h, "size-allocate", G_CALLBACK(split_allocated), self);
    g_signal_connect(self->split_v, "size-allocate", G_CALLBACK(split_allocated), self);
    g_signal_connect(self->split_h, "button-press-event", G_CALLBACK(split_pressed), self);
    g_signal_connect(self->split_v, "button-press-event", G_CALLBACK(split_pressed), self);

    g_signal_connect(self->image, "draw", G_CALLBACK(fm_flim_views_image_draw), self);
    g_signal_connect(self->image, "motion-notify-event", G_CALLBACK(fm_flim_views_image_motion),
                     self);
    g_signal_connect(self->image, "leave-notify-event", G_CALLBACK(fm_flim_views_image_leave),
                     self);
    g_signal_connect(self->histogram, "draw", G_CALLBACK(fm_flim_views_histogram_draw), self);
    g_signal_connect(self->tau_combo, "changed", G_CALLBACK(tau_combo_changed), self);
    g_signal_connect(self->auto_toggle, "toggled", G_CALLBACK(auto_toggled), self);
    g_signal_connect(self->lo_spin, "value-changed", G_CALLBACK(range_changed), self);
    g_signal_connect(self->hi_spin, "value-changed", G_CALLBACK(range_changed), self);
    g_signal_connect(self->phasor, "selection-changed", G_CALLBACK(phasor_selection_changed), self);
}

GtkWidget *fm_flim_views_new(void)
{
    return g_object_new(FM_TYPE_FLIM_VIEWS, NULL);
}
