/* FmDceViews' data side: the enhancement peak and input curves on workers, and the curve plot
 * of Ca, Cp and the voxel or ROI under the cursor with its fitted model. */
#include "dce-views-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/dce_model.h"
#include "app/core/dce/dce_volume_map.h"
#include "app/core/dce/pk_inputs.h"
#include "app/core/io/frame_times.h"

void fm_dce_views_conversion_from(const fm_params *p, fm_dce_conversion *c, double *hct, double *dt)
{
    memset(c, 0, sizeof *c);
    c->kind = FM_DCE_CONV_ENHANCEMENT;
    c->baseline_frames = 4;
    *hct = 0;
    *dt = 0;
    if (!p)
        return;
    fm_dce_conversion_parse(fm_params_get_choice(p, "conversion"), &c->kind);
    c->baseline_frames = fm_params_get_int(p, "baseline_frames");
    c->t10_s = fm_params_get_double(p, "t10_s");
    c->r1_per_mm_s = fm_params_get_double(p, "r1_per_mm_s");
    c->tr_ms = fm_params_get_double(p, "tr_ms");
    c->flip_deg = fm_params_get_double(p, "flip_deg");
    *hct = fm_params_get_double(p, "hematocrit");
    *dt = fm_params_has(p, "model_dt_s") ? fm_params_get_double(p, "model_dt_s") : 0;
}

void fm_dce_views_conversion_headers(const fm_dataset *ds, fm_dce_conversion *c)
{
    gboolean tr_header, flip_header;
    if (ds && c->kind == FM_DCE_CONV_SPGR) /* several angles: the method's error to report */
        fm_pk_conversion_headers(ds, c, &tr_header, &flip_header, NULL);
}

const fm_method *fm_dce_views_shown_method(const FmDceViews *self)
{
    return self->follow_run && self->run_params ? self->run_method : self->method;
}

const fm_params *fm_dce_views_shown_params(const FmDceViews *self)
{
    return self->follow_run && self->run_params ? self->run_params : self->params;
}

gboolean fm_dce_views_is_pk(const FmDceViews *self)
{
    const fm_method *m = fm_dce_views_shown_method(self);
    return m && g_strcmp0(m->id, "dce.dual_input") != 0;
}

char *fm_dce_views_input_key(const fm_method *method, const fm_params *params)
{
    /* What the input curves (and the tissue's conversion) are computed from; fit settings such
     * as max_iterations or fit_delay are not among them. */
    static const char *const keys[] = {
        "aif",        "input_csv",       "hematocrit", "t10_blood_s", "fit_threshold",
        "conversion", "t10_map",         "t10_s",      "r1_per_mm_s", "tr_ms",
        "flip_deg",   "baseline_frames", "model_dt_s",
    };
    GString *key = g_string_new(method ? method->id : "");
    for (gsize i = 0; params && i < G_N_ELEMENTS(keys); i++)
        if (fm_params_has(params, keys[i])) {
            g_autofree char *value = fm_params_to_string(params, keys[i]);
            g_string_append_printf(key, "|%s=%s", keys[i], value);
        }
    return g_string_free(key, FALSE);
}

void fm_dce_views_apply_shown(FmDceViews *self)
{
    const fm_params *p = fm_dce_views_shown_params(self);
    fm_dce_conversion old = self->conv;
    double old_hct = self->hematocrit;
    fm_dce_views_conversion_from(p, &self->conv, &self->hematocrit, &self->model_dt_s);
    fm_dce_views_conversion_headers(self->ds, &self->conv);
    g_autofree char *key = fm_dce_views_input_key(fm_dce_views_shown_method(self), p);
    gboolean changed = g_strcmp0(key, self->pk_key) != 0;
    g_free(self->pk_key);
    self->pk_key = g_steal_pointer(&key);
    /* Only what changes the curves restarts the workers. */
    if (old.baseline_frames != self->conv.baseline_frames)
        fm_dce_views_start_peak(self);
    if (changed || memcmp(&old, &self->conv, sizeof old) != 0 || old_hct != self->hematocrit)
        fm_dce_views_start_inputs(self);
    fm_dce_views_refresh_curves(self);
}

char *fm_dce_views_run_summary(const FmDceViews *self)
{
    if (!self->result || !self->run_params)
        return NULL;
    const fm_params *p = self->run_params;
    GString *out = g_string_new(_(self->run_method->title));
    if (fm_params_has(p, "aif")) {
        const char *csv = fm_params_get_string(p, "input_csv");
        fm_pk_aif_kind kind = FM_PK_AIF_ROI;
        fm_pk_aif_parse(fm_params_get_choice(p, "aif"), &kind);
        g_autofree char *base = *csv ? g_path_get_basename(csv) : NULL;
        const char *input = kind == FM_PK_AIF_PARKER     ? _("Parker population")
                            : kind == FM_PK_AIF_GEORGIOU ? _("Georgiou population")
                            : base                       ? base
                                                         : _("artery ROI");
        g_string_append_printf(out, _(" · input %s"), input);
    } else if (fm_params_has(p, "input_csv") && *fm_params_get_string(p, "input_csv")) {
        g_autofree char *base = g_path_get_basename(fm_params_get_string(p, "input_csv"));
        g_string_append_printf(out, _(" · input %s"), base);
    } else {
        g_string_append(out, _(" · input aorta and portal-vein ROIs"));
    }
    double hct = fm_params_has(p, "hematocrit") ? fm_params_get_double(p, "hematocrit") : 0;
    if (hct > 0)
        g_string_append_printf(out, _(" · Hct %.2f"), hct);
    else if (fm_params_has(p, "hematocrit"))
        g_string_append(out, _(" · no hematocrit correction"));
    if (fm_params_has(p, "fit_delay"))
        g_string_append(out, fm_params_get_bool(p, "fit_delay") ? _(" · delay fitted")
                                                                : _(" · no delay"));
    return g_string_free(out, FALSE);
}

void fm_dce_pk_input_clear(FmDcePkInput *in)
{
    g_clear_pointer(&in->times_s, g_free);
    g_clear_pointer(&in->measured, g_free);
    g_clear_pointer(&in->population, g_free);
    g_clear_pointer(&in->measured_name, g_free);
    g_clear_pointer(&in->population_name, g_free);
    g_clear_pointer(&in->t10_map, g_free);
    in->n_times = 0;
}

static const char *concentration_label(fm_dce_conversion_kind kind)
{
    switch (kind) {
    case FM_DCE_CONV_ENHANCEMENT:
        return _("S/S0 − 1");
    case FM_DCE_CONV_SPGR:
        return _("concentration (mM)");
    case FM_DCE_CONV_CT:
        return _("enhancement (HU)");
    default:
        return _("concentration");
    }
}

static double value_at(const FmDceViews *self, int x, int y, int z, int t)
{
    const fm_dce_geometry *g = &self->g;
    return fm_dataset_value(self->ds, (((gsize)t * g->nz + z) * g->ny + y) * g->nx + x);
}

/* ---- workers: enhancement peak, input curves --------------------------------------------- */

typedef struct {
    FmDceViews *views;
    fm_dataset *ds;
    fm_dce_geometry g;
    int baseline;
    GPtrArray *rois;
    fm_dce_conversion conv;
    double hematocrit;
    char *csv;
    guint gen;
    gboolean pk;
    fm_params *params; /* pk: the model's parameters */
} Work;

static void work_free(gpointer data)
{
    Work *w = data;
    g_object_unref(w->views);
    fm_dataset_unref(w->ds);
    if (w->rois)
        g_ptr_array_unref(w->rois);
    g_free(w->csv);
    g_clear_pointer(&w->params, fm_params_free);
    g_free(w);
}

static Work *work_new(FmDceViews *self, guint gen)
{
    Work *w = g_new0(Work, 1);
    w->views = g_object_ref(self);
    w->ds = fm_dataset_ref(self->ds);
    w->g = self->g;
    w->conv = self->conv;
    w->baseline = MAX(self->conv.baseline_frames, 1);
    w->hematocrit = self->hematocrit;
    w->gen = gen;
    return w;
}

/* Max over time minus the mean of the baseline frames, per voxel. */
static void peak_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    Work *w = data;
    const fm_dce_geometry *g = &w->g;
    gsize volume = (gsize)g->nx * g->ny * g->nz;
    int nb = MIN(w->baseline, g->nt);
    float *peak = g_new(float, volume);
    for (gsize v = 0; v < volume; v++) {
        double base = 0, top = -INFINITY;
        for (int t = 0; t < g->nt; t++) {
            double s = fm_dataset_value(w->ds, (gsize)t * volume + v);
            if (t < nb)
                base += s;
            top = MAX(top, s);
        }
        peak[v] = (float)(top - base / nb);
    }
    g_task_return_pointer(task, peak, g_free);
}

static void peak_done(GObject *source, GAsyncResult *res, gpointer user)
{
    Work *w = g_task_get_task_data(G_TASK(res));
    FmDceViews *self = w->views;
    float *peak = g_task_propagate_pointer(G_TASK(res), NULL);
    self->busy--;
    if (w->gen != self->peak_gen || w->ds != self->ds) {
        g_free(peak);
        return;
    }
    g_free(self->peak);
    self->peak = peak;
    if (self->mode == FM_DCE_ANATOMY_PEAK) {
        fm_dce_views_refresh_anatomy(self);
        fm_dce_views_emit_position(self);
    }
}

void fm_dce_views_start_peak(FmDceViews *self)
{
    g_clear_pointer(&self->peak, g_free);
    if (!self->ds)
        return;
    GTask *task = g_task_new(NULL, NULL, peak_done, NULL);
    g_task_set_task_data(task, work_new(self, ++self->peak_gen), work_free);
    self->busy++;
    g_task_run_in_thread(task, peak_thread);
    g_object_unref(task);
}

/* One input of a standard model as pk_inputs.c prepares it for the fit (the population curve
 * placed at the bolus arrival in the voxels it would fit); NULL when it cannot be had. */
static double *pk_curve(Work *w, fm_pk_aif_kind kind, const fm_dce_conversion *conv,
                        const float *t10_map, int *n, double **times)
{
    fm_pk_input_request req = {
        .kind = kind,
        .csv_path = fm_params_get_string(w->params, "input_csv"),
        .hematocrit = fm_params_get_double(w->params, "hematocrit"),
        .t10_blood_s = fm_params_get_double(w->params, "t10_blood_s"),
        .fit_threshold = fm_params_get_double(w->params, "fit_threshold"),
    };
    fm_pk_inputs in = {0};
    if (!fm_pk_inputs_prepare(w->ds, w->rois, conv, t10_map, &req, &in, NULL))
        return NULL;
    double *cp = g_steal_pointer(&in.cp);
    if (times && !*times) {
        *times = g_steal_pointer(&in.times_s);
        *n = in.n_times;
    }
    fm_pk_inputs_clear(&in);
    return cp;
}

static gboolean has_any_role(GPtrArray *rois, const char *a, const char *b)
{
    for (guint i = 0; rois && i < rois->len; i++) {
        const fm_roi *roi = rois->pdata[i];
        if (g_strcmp0(roi->role, a) == 0 || g_strcmp0(roi->role, b) == 0)
            return TRUE;
    }
    return FALSE;
}

static void pk_inputs_thread(Work *w, GTask *task)
{
    FmDcePkInput *in = g_new0(FmDcePkInput, 1);
    fm_dce_conversion conv = w->conv;
    fm_dce_views_conversion_headers(w->ds, &conv);
    fm_pk_aif_kind kind = FM_PK_AIF_ROI;
    fm_pk_aif_parse(fm_params_get_choice(w->params, "aif"), &kind);
    const char *csv = fm_params_get_string(w->params, "input_csv");
    /* A T10 map converts as the run converts: the blood's T10 from it where none is given,
     * the tissue curves voxel by voxel (kept for the plot). Unreadable: the run says why. */
    const char *t10_path = fm_params_get_string(w->params, "t10_map");
    if (conv.kind == FM_DCE_CONV_SPGR && *t10_path)
        in->t10_map = fm_dce_read_volume_map(t10_path, &w->g, 1.0, "%s: %d x %d x %d", NULL);
    /* The measured curve: the CSV where one is given, else the artery (or aorta) ROI. */
    if (*csv) {
        in->measured = pk_curve(w, FM_PK_AIF_CSV, &conv, in->t10_map, &in->n_times, &in->times_s);
        g_autofree char *base = g_path_get_basename(csv);
        in->measured_name = g_strdup(base);
    } else if (has_any_role(w->rois, FM_PK_ROLE_ARTERY, FM_DCE_ROLE_AORTA)) {
        in->measured = pk_curve(w, FM_PK_AIF_ROI, &conv, in->t10_map, &in->n_times, &in->times_s);
        in->measured_name = g_strdup(_("artery ROI"));
    }
    if (kind == FM_PK_AIF_PARKER || kind == FM_PK_AIF_GEORGIOU) {
        in->population = pk_curve(w, kind, &conv, in->t10_map, &in->n_times, &in->times_s);
        in->population_name = g_strdup(kind == FM_PK_AIF_PARKER ? "Parker" : "Georgiou");
    }
    if (!in->measured && !in->population) {
        fm_dce_pk_input_clear(in);
        g_free(in);
        g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no input");
        return;
    }
    g_task_return_pointer(task, in, NULL);
}

static void inputs_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    Work *w = data;
    if (w->pk) {
        pk_inputs_thread(w, task);
        return;
    }
    fm_dce_inputs *in = g_new0(fm_dce_inputs, 1);
    GError *error = NULL;
    gboolean ok = w->csv && *w->csv ? fm_dce_inputs_load_csv(w->csv, in, &error)
                                    : fm_dce_inputs_from_rois(w->ds, w->rois, &w->conv, NULL,
                                                              w->hematocrit, in, &error);
    if (!ok) {
        fm_dce_inputs_clear(in);
        g_free(in);
        g_task_return_error(task, error);
        return;
    }
    g_task_return_pointer(task, in, NULL);
}

static void inputs_done(GObject *source, GAsyncResult *res, gpointer user)
{
    Work *w = g_task_get_task_data(G_TASK(res));
    FmDceViews *self = w->views;
    g_autoptr(GError) error = NULL;
    gpointer got = g_task_propagate_pointer(G_TASK(res), &error);
    self->busy--;
    gboolean current = w->gen == self->inputs_gen && w->ds == self->ds;
    if (w->pk) {
        FmDcePkInput *in = got;
        if (current && in) {
            fm_dce_pk_input_clear(&self->pk_input);
            self->pk_input = *in;
            self->have_pk_input = TRUE;
            g_free(in);
            fm_dce_views_refresh_curves(self);
        } else if (in) {
            fm_dce_pk_input_clear(in);
            g_free(in);
        }
        return;
    }
    fm_dce_inputs *in = got;
    if (current && in) {
        fm_dce_inputs_clear(&self->inputs);
        self->inputs = *in;
        self->have_inputs = TRUE;
        g_free(in);
        fm_dce_views_refresh_curves(self);
        return;
    }
    if (in) {
        fm_dce_inputs_clear(in);
        g_free(in);
    }
}

void fm_dce_views_start_inputs(FmDceViews *self)
{
    fm_dce_inputs_clear(&self->inputs);
    self->have_inputs = FALSE;
    fm_dce_pk_input_clear(&self->pk_input);
    self->have_pk_input = FALSE;
    ++self->inputs_gen;
    if (!self->ds) {
        fm_dce_views_refresh_curves(self);
        return;
    }
    Work *w = work_new(self, self->inputs_gen);
    w->rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    for (guint i = 0; self->rois && i < self->rois->len; i++)
        g_ptr_array_add(w->rois, fm_roi_copy(self->rois->pdata[i]));
    const fm_params *shown = fm_dce_views_shown_params(self);
    w->csv = shown ? g_strdup(fm_params_get_string(shown, "input_csv")) : NULL;
    /* A standard model's parameters (aif, t10_blood_s, ...) only with its own params. */
    w->pk = fm_dce_views_is_pk(self) && shown && fm_params_has(shown, "aif");
    w->params = w->pk ? fm_params_copy(shown) : NULL;
    GTask *task = g_task_new(NULL, NULL, inputs_done, NULL);
    g_task_set_task_data(task, w, work_free);
    self->busy++;
    g_task_run_in_thread(task, inputs_thread);
    g_object_unref(task);
    fm_dce_views_refresh_curves(self); /* the old curves go at once */
}

/* ---- curves ------------------------------------------------------------------------------ */

static const double ca_rgb[3] = {0.84, 0.15, 0.16}, cp_rgb[3] = {0.12, 0.47, 0.71};
static const double tissue_rgb[3] = {0.2, 0.2, 0.2}, model_rgb[3] = {0.96, 0.5, 0.05};

/* The ROI whose mean curve stands in when the pointer is away: liver (or tissue) first. */
static const fm_roi *curve_roi(FmDceViews *self)
{
    const fm_roi *first = NULL;
    for (guint i = 0; self->rois && i < self->rois->len; i++) {
        const fm_roi *roi = self->rois->pdata[i];
        if (!fm_dce_roi_on_slice(roi, self->slice))
            continue;
        if (g_strcmp0(roi->role, FM_DCE_ROLE_LIVER) == 0 ||
            g_strcmp0(roi->role, FM_PK_ROLE_TISSUE) == 0)
            return roi;
        if (!first)
            first = roi;
    }
    return first;
}

/* Concentration of voxel (x, y) on the slice, or the ROI's mean (mask non-NULL); FALSE when the
 * mask is empty. theta receives the fitted parameters there (NaN when none). */
static gboolean tissue_curve(FmDceViews *self, int x, int y, const guint8 *mask, double *curve,
                             double theta[FM_DCE_MODEL_N_PARAMS])
{
    static const char *const names[FM_DCE_MODEL_N_PARAMS] = {"ka", "kp", "kl", "tau_a", "tau_p"};
    const fm_dce_geometry *g = &self->g;
    gsize plane = (gsize)g->nx * g->ny, n = 0;
    for (int t = 0; t < g->nt; t++)
        curve[t] = 0;
    double sum[FM_DCE_MODEL_N_PARAMS] = {0};
    gsize n_fit = 0;
    for (gsize p = 0; p < plane; p++) {
        if (mask ? !mask[p] : p != (gsize)y * g->nx + x)
            continue;
        n++;
        for (int t = 0; t < g->nt; t++)
            curve[t] += value_at(self, (int)(p % g->nx), (int)(p / g->nx), self->slice, t);
        double v[FM_DCE_MODEL_N_PARAMS];
        gboolean ok = self->result != NULL;
        for (int k = 0; k < FM_DCE_MODEL_N_PARAMS && ok; k++) {
            const fm_map *m = fm_result_get_map(self->result, names[k]);
            ok = m && m->n_frames == g->nz && isfinite(v[k] = m->data[self->slice * plane + p]);
        }
        for (int k = 0; k < FM_DCE_MODEL_N_PARAMS && ok; k++)
            sum[k] += v[k];
        n_fit += ok;
    }
    if (n == 0)
        return FALSE;
    for (int t = 0; t < g->nt; t++)
        curve[t] /= (double)n;
    fm_dce_convert_curve(&self->conv, self->conv.t10_s, curve, g->nt);
    for (int k = 0; k < FM_DCE_MODEL_N_PARAMS; k++)
        theta[k] = n_fit ? sum[k] / (double)n_fit : NAN;
    return TRUE;
}

void fm_dce_views_show_curve(FmDceViews *self, int x, int y)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    self->cur_x = x;
    self->cur_y = y;
    g_clear_pointer(&self->tissue_curves, g_ptr_array_unref);
    if (!self->plot)
        return;
    FmPlotView *plot = self->plot;
    fm_plot_view_clear(plot);
    fm_plot_view_set_labels(plot, _("time (s)"), concentration_label(self->conv.kind));
    if (!self->ds)
        return;
    double cursor =
        self->mode == FM_DCE_ANATOMY_FRAME && self->times ? self->times[self->time] : NAN;
    if (fm_dce_views_is_pk(self)) {
        fm_dce_views_plot_pk(self, x, y);
        fm_plot_view_set_cursor(plot, cursor);
        return;
    }
    const fm_dce_geometry *g = &self->g;
    gboolean inputs_match = self->have_inputs && self->inputs.n_times == g->nt;
    if (self->have_inputs) {
        fm_plot_view_add_series(plot, _("Ca (aorta)"), self->inputs.times_s, self->inputs.ca,
                                self->inputs.n_times, ca_rgb, FM_PLOT_STYLE_LINE);
        fm_plot_view_add_series(plot, _("Cp (portal)"), self->inputs.times_s, self->inputs.cp,
                                self->inputs.n_times, cp_rgb, FM_PLOT_STYLE_LINE);
    }
    g_autofree double *curve = g_new(double, g->nt);
    double theta[FM_DCE_MODEL_N_PARAMS];
    g_autofree char *label = NULL;
    gboolean have = FALSE;
    if (x >= 0 && x < g->nx && y >= 0 && y < g->ny) {
        have = tissue_curve(self, x, y, NULL, curve, theta);
        label = g_strdup_printf(_("voxel %d, %d"), x, y);
    } else {
        const fm_roi *roi = curve_roi(self);
        g_autofree guint8 *mask = roi ? fm_roi_rasterise(roi, g->nx, g->ny) : NULL;
        have = mask && tissue_curve(self, 0, 0, mask, curve, theta);
        label = g_strdup_printf(_("%s mean"), roi && roi->name ? roi->name : _("ROI"));
    }
    if (have) {
        fm_plot_view_add_series(plot, label, self->times, curve, g->nt, tissue_rgb,
                                FM_PLOT_STYLE_MARKERS);
        gboolean fitted = inputs_match;
        for (int k = 0; k < FM_DCE_MODEL_N_PARAMS; k++)
            fitted = fitted && isfinite(theta[k]);
        g_autofree double *model = g_new(double, g->nt);
        if (fitted && fm_dce_model_curve(self->inputs.times_s, self->inputs.ca, self->inputs.cp,
                                         g->nt, self->model_dt_s, theta, model, NULL)) {
            /* the fitted values are in the results table: a short legend leaves the curves room */
            fm_plot_view_add_series(plot, _("model fit"), self->inputs.times_s, model, g->nt,
                                    model_rgb, FM_PLOT_STYLE_DASHED);
        }
    }
    fm_plot_view_set_cursor(plot, cursor);
}

void fm_dce_views_refresh_curves(FmDceViews *self)
{
    fm_dce_views_show_curve(self, self->cur_x, self->cur_y);
}
