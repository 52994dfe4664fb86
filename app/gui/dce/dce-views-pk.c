/* FmDceViews' tissue curves of a standard model (dce.tofts ... dce.2cum): each tissue ROI's (or
 * the picked voxel's) measured concentration and, for the run on show, the model's curve from
 * its fitted maps, computed by the kernel's forward model with the run's arterial input. */
#include "dce-views-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/dce/pk_inputs.h"
#include "kernels/dce/pk.h"

/* The legend holds FM_PLOT_MAX_LEGEND entries: two inputs, these ROIs and one for the fits. */
#define MAX_TISSUE_ROIS 5

static const double voxel_rgb[3] = {0.2, 0.2, 0.2}, voxel_fit_rgb[3] = {0.96, 0.5, 0.05};
static const double ca_rgb[3] = {0.84, 0.15, 0.16}, cp_rgb[3] = {0.12, 0.47, 0.71};

/* The maps holding each parameter slot of the kernel (Patlak's Ktrans is its KTRANS slot). */
static const char *const slot_maps[FM_PK_N_PARAMS] = {"ktrans", "ve", "vp", "fp", "ps", "delay"};

static gboolean pk_model_of(const fm_method *method, fm_pk_model *model)
{
    if (!method || !g_str_has_prefix(method->id, "dce."))
        return FALSE;
    for (int m = 0; m < FM_PK_N_MODELS; m++)
        if (strcmp(method->id + 4, fm_pk_model_name((fm_pk_model)m)) == 0) {
            *model = (fm_pk_model)m;
            return TRUE;
        }
    return FALSE;
}

/* The forward model of the run on show: its model, its delay choice and the plasma input its
 * fit used (the population curve where it chose one, else the measured one). FALSE when the
 * curves on show are not the run's (no run, the page's input previewed, input not ready). */
static gboolean run_model(FmDceViews *self, fm_pk_params *kp)
{
    fm_pk_model model;
    const FmDcePkInput *in = &self->pk_input;
    if (!self->result || !self->run_params || !self->follow_run || !self->have_pk_input ||
        !pk_model_of(self->run_method, &model) || in->n_times != self->g.nt)
        return FALSE;
    const double *cp = in->population ? in->population : in->measured;
    if (!cp)
        return FALSE;
    fm_pk_params_defaults(kp, model);
    kp->n_times = in->n_times;
    kp->times_s = in->times_s;
    kp->cp = cp;
    kp->fit_delay = fm_params_get_bool(self->run_params, "fit_delay");
    return TRUE;
}

/* The fitted parameters of voxel `index` (z ny nx + y nx + x); FALSE where it was not fitted. */
static gboolean voxel_theta(const fm_result *result, const fm_pk_params *kp, gsize index,
                            double theta[FM_PK_N_PARAMS])
{
    for (int s = 0; s < FM_PK_N_PARAMS; s++) {
        theta[s] = 0;
        if (!fm_pk_model_uses(kp, s))
            continue;
        const fm_map *m = fm_result_get_map(result, slot_maps[s]);
        if (!m || index >= fm_map_n_values(m) || !isfinite(theta[s] = m->data[index]))
            return FALSE;
    }
    return TRUE;
}

/* Mean concentration of the voxels of plane_mask on the slice, converted voxel by voxel as the
 * fit converts them, and (kp non-NULL) the mean of their model curves over the fitted voxels:
 * the curve to compare with the measured mean, which the curve of mean parameters is not.
 * FALSE when the mask holds no voxel; *fitted FALSE when none was fitted. */
static gboolean selection_curves(FmDceViews *self, const guint8 *plane_mask, const fm_pk_params *kp,
                                 double *measured, double *model, gboolean *fitted)
{
    const fm_dce_geometry *g = &self->g;
    gsize plane = (gsize)g->nx * g->ny, n = 0;
    g_autofree guint8 *mask = g_new0(guint8, plane * g->nz);
    for (gsize p = 0; p < plane; p++)
        n += (mask[(gsize)self->slice * plane + p] = plane_mask[p] != 0);
    *fitted = FALSE;
    if (n == 0)
        return FALSE;
    g_autofree gsize *index = NULL;
    const float *t10_map = self->have_pk_input ? self->pk_input.t10_map : NULL;
    g_autofree float *curves =
        fm_dce_tissue_curves(self->ds, mask, n, &self->conv, t10_map, &index);
    g_autofree double *count = g_new0(double, g->nt);
    g_autofree double *one = g_new(double, g->nt);
    for (int t = 0; t < g->nt; t++)
        measured[t] = model[t] = 0;
    gsize n_fit = 0;
    for (gsize v = 0; v < n; v++) {
        for (int t = 0; t < g->nt; t++) {
            float c = curves[v * g->nt + t];
            if (isfinite(c)) {
                measured[t] += c;
                count[t] += 1;
            }
        }
        double theta[FM_PK_N_PARAMS];
        char msg[128];
        if (kp && voxel_theta(self->result, kp, index[v], theta) &&
            fm_pk_model_curve(kp, theta, one, msg, sizeof msg) == FM_OK) {
            for (int t = 0; t < g->nt; t++)
                model[t] += one[t];
            n_fit++;
        }
    }
    for (int t = 0; t < g->nt; t++) {
        measured[t] = count[t] > 0 ? measured[t] / count[t] : NAN;
        model[t] = n_fit ? model[t] / (double)n_fit : NAN;
    }
    *fitted = n_fit > 0;
    return TRUE;
}

/* The ROIs whose curves are drawn: the tissue ROIs of the slice (at most MAX_TISSUE_ROIS),
 * else its first ROI that is not an input vessel. Each with its outline colour's index. */
static int tissue_rois(FmDceViews *self, const fm_roi **out, guint *colour)
{
    int n = 0, fallback = -1;
    guint on_slice = 0, fallback_colour = 0;
    for (guint i = 0; self->rois && i < self->rois->len; i++) {
        const fm_roi *roi = self->rois->pdata[i];
        if (!fm_dce_roi_on_slice(roi, self->slice))
            continue;
        guint c = on_slice++; /* the map view numbers the ROIs of the slice on show */
        if (g_strcmp0(roi->role, FM_PK_ROLE_TISSUE) == 0 && n < MAX_TISSUE_ROIS) {
            out[n] = roi;
            colour[n++] = c;
        } else if (fallback < 0 && g_strcmp0(roi->role, FM_PK_ROLE_ARTERY) != 0 &&
                   g_strcmp0(roi->role, FM_DCE_ROLE_AORTA) != 0) {
            fallback = (int)i;
            fallback_colour = c;
        }
    }
    if (n == 0 && fallback >= 0) {
        out[0] = self->rois->pdata[fallback];
        colour[0] = fallback_colour;
        n = 1;
    }
    return n;
}

void fm_dce_tissue_curve_free(gpointer data)
{
    FmDceTissueCurve *t = data;
    g_free(t->label);
    g_free(t->measured);
    g_free(t->model);
    g_free(t);
}

static void add_tissue(GPtrArray *out, const char *label, const double rgb[3], double *measured,
                       double *model, gboolean fitted)
{
    FmDceTissueCurve *t = g_new0(FmDceTissueCurve, 1);
    t->label = g_strdup(label);
    memcpy(t->rgb, rgb, sizeof t->rgb);
    t->measured = measured;
    if (fitted)
        t->model = model;
    else
        g_free(model);
    g_ptr_array_add(out, t);
}

static double peak_of(const double *v, int n)
{
    double top = 0;
    for (int i = 0; v && i < n; i++)
        if (isfinite(v[i]))
            top = MAX(top, v[i]);
    return top;
}

/* The divisor that brings the input's peak near the tissue's (1, 2, 5, 10, 20, ...): a plasma
 * input peaks ten to fifty times higher than tissue, which then lies flat along the axis. */
static double input_scale(double input_peak, double tissue_peak)
{
    if (!(tissue_peak > 0) || !(input_peak > 4 * tissue_peak))
        return 1;
    static const double steps[] = {2, 5, 10};
    for (double decade = 1; decade < 1e6; decade *= 10)
        for (gsize i = 0; i < G_N_ELEMENTS(steps); i++)
            if (input_peak / (steps[i] * decade) <= 1.5 * tissue_peak)
                return steps[i] * decade;
    return 1;
}

static void add_input(FmPlotView *plot, const char *what, const double *times, const double *cp,
                      int n, double scale, const double rgb[3], FmPlotStyle style)
{
    g_autofree char *name = scale > 1 ? g_strdup_printf(_("Cp ÷ %g (%s)"), scale, what)
                                      : g_strdup_printf(_("Cp (%s)"), what);
    g_autofree double *shown = g_new(double, n);
    for (int i = 0; i < n; i++)
        shown[i] = cp[i] / scale;
    fm_plot_view_add_series(plot, name, times, shown, n, rgb, style);
}

void fm_dce_views_plot_pk(FmDceViews *self, int x, int y)
{
    FmPlotView *plot = self->plot;
    const fm_dce_geometry *g = &self->g;
    fm_pk_params kp;
    gboolean have_model = run_model(self, &kp);
    g_autofree char *fit_name =
        have_model ? g_strdup_printf(_("%s fit"), _(self->run_method->title)) : NULL;
    /* Tissue curves first: the input's scale depends on how high they reach. */
    GPtrArray *tissue = g_ptr_array_new_with_free_func(fm_dce_tissue_curve_free);
    if (x >= 0 && x < g->nx && y >= 0 && y < g->ny) {
        g_autofree guint8 *mask = g_new0(guint8, (gsize)g->nx * g->ny);
        mask[(gsize)y * g->nx + x] = 1;
        double *measured = g_new(double, g->nt), *model = g_new(double, g->nt);
        gboolean fitted = FALSE;
        selection_curves(self, mask, have_model ? &kp : NULL, measured, model, &fitted);
        g_autofree char *label = g_strdup_printf(_("voxel %d, %d"), x, y);
        add_tissue(tissue, label, voxel_rgb, measured, model, fitted);
    } else {
        const fm_roi *rois[MAX_TISSUE_ROIS];
        guint colours[MAX_TISSUE_ROIS];
        int n = tissue_rois(self, rois, colours);
        for (int i = 0; i < n; i++) {
            g_autofree guint8 *mask = fm_roi_rasterise(rois[i], g->nx, g->ny);
            double *measured = g_new(double, g->nt), *model = g_new(double, g->nt);
            gboolean fitted = FALSE;
            if (!mask ||
                !selection_curves(self, mask, have_model ? &kp : NULL, measured, model, &fitted)) {
                g_free(measured);
                g_free(model);
                continue;
            }
            double rgb[3];
            fm_dce_roi_colour_on_light(colours[i], rgb);
            add_tissue(tissue, rois[i]->name ? rois[i]->name : _("ROI"), rgb, measured, model,
                       fitted);
        }
    }

    /* The plasma input, measured and the population curve over it where one is chosen, both
     * as the fit uses them; divided by one round number where tissue would lie flat. */
    const FmDcePkInput *in = self->have_pk_input ? &self->pk_input : NULL;
    double tissue_peak = 0;
    for (guint i = 0; i < tissue->len; i++) {
        const FmDceTissueCurve *t = tissue->pdata[i];
        tissue_peak = MAX(tissue_peak, MAX(peak_of(t->measured, g->nt), peak_of(t->model, g->nt)));
    }
    double scale = in ? input_scale(MAX(peak_of(in->measured, in->n_times),
                                        peak_of(in->population, in->n_times)),
                                    tissue_peak)
                      : 1;
    self->input_scale = scale;
    if (in && in->measured)
        add_input(plot, in->measured_name, in->times_s, in->measured, in->n_times, scale, ca_rgb,
                  FM_PLOT_STYLE_LINE);
    if (in && in->population)
        add_input(plot, in->population_name, in->times_s, in->population, in->n_times, scale,
                  cp_rgb, FM_PLOT_STYLE_DASHED);

    /* Each measured curve as markers in its ROI's outline colour, its fit dashed in the same;
     * a voxel's fit has its own legend entry, the ROIs' share one. Markers at every frame of a
     * long series touch and hide the fit: at most one per marker_px along the axis. */
    gboolean voxel = x >= 0, any_fit = FALSE;
    const int marker_px = 8;
    int width = gtk_widget_get_allocated_width(GTK_WIDGET(plot));
    int every = width > 1 ? (int)ceil((double)marker_px * g->nt / width) : (g->nt + 39) / 40;
    every = MAX(every, 1);
    int n_marks = (g->nt + every - 1) / every;
    g_autofree double *mark_t = g_new(double, n_marks), *mark_c = g_new(double, n_marks);
    for (guint i = 0; i < tissue->len; i++) {
        const FmDceTissueCurve *t = tissue->pdata[i];
        for (int k = 0; k < n_marks; k++) {
            mark_t[k] = self->times[k * every];
            mark_c[k] = t->measured[k * every];
        }
        fm_plot_view_add_series(plot, t->label, mark_t, mark_c, n_marks, t->rgb,
                                FM_PLOT_STYLE_MARKERS);
        if (t->model)
            fm_plot_view_add_series(plot, voxel ? fit_name : NULL, self->times, t->model, g->nt,
                                    voxel ? voxel_fit_rgb : t->rgb, FM_PLOT_STYLE_DASHED);
        any_fit = any_fit || t->model;
    }
    if (any_fit && !voxel) { /* what the dashed curves are: a swatch with no data */
        double nan = NAN;
        fm_plot_view_add_series(plot, fit_name, self->times, &nan, 1, voxel_rgb,
                                FM_PLOT_STYLE_DASHED);
    }
    if (self->tissue_curves)
        g_ptr_array_unref(self->tissue_curves);
    self->tissue_curves = tissue;
}
