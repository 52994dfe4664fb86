/* FmDceViews: the DCE perfusion views: slice and time controls, anatomy (any frame or the
 * enhancement peak) with a perfusion map overlaid, curves of Ca, Cp and the voxel or ROI under
 * the cursor with its fitted model, and a table of mean ± sd of each parameter per ROI. */
#include "app/gui/dce-views.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/core/dce_model.h"
#include "app/gui/dce-image.h"

/* Maps the overlay offers and the table shows, in the order a hepatologist reads them. */
static const struct {
    const char *name, *title;
} overlay_maps[] = {
    {"ka", N_("ka (arterial)")},
    {"kp", N_("kp (portal)")},
    {"kl", N_("kl (outflow)")},
    {"arterial_fraction", N_("Arterial fraction")},
    {"distribution_volume", N_("Distribution volume")},
    {"mtt", N_("Mean transit time")},
    {"tau_a", N_("tau_a")},
    {"tau_p", N_("tau_p")},
    {"r2", N_("R²")},
    {"rmse", N_("RMSE")},
};
/* Table columns after ROI, role and n. */
static const char *const table_maps[] = {"ka", "kp", "kl", "tau_a", "tau_p", "arterial_fraction",
                                         "mtt", "r2"};
enum { COL_ROI = 0, COL_ROLE, COL_N, COL_FIRST_MAP };
#define N_COLS (COL_FIRST_MAP + (int)G_N_ELEMENTS(table_maps))

struct _FmDceViews {
    GtkBox parent_instance;
    GtkWidget *controls, *slice_scale, *slice_label, *time_scale, *time_label;
    GtkWidget *anatomy_combo, *overlay_combo, *opacity_scale;
    FmDceImage *image;
    GtkListStore *store;
    GtkWidget *table_label;
    FmPlotView *plot; /* weak */

    fm_dataset *ds;
    fm_dce_geometry g;
    double *times; /* nt frame times in s */
    fm_params *params;
    fm_dce_conversion conv;
    double hematocrit, model_dt_s;
    float *peak;    /* nx ny nz, or NULL while computing */
    float *anatomy; /* the current slice */
    GPtrArray *rois;
    fm_result *result;
    fm_dce_inputs inputs;
    gboolean have_inputs;
    int slice, time, busy;
    FmDceAnatomy mode;
    char *overlay;
    guint peak_gen, inputs_gen;
    gboolean updating;
};

G_DEFINE_FINAL_TYPE(FmDceViews, fm_dce_views, GTK_TYPE_BOX)

enum { SIGNAL_POSITION_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void conversion_from(const fm_params *p, fm_dce_conversion *c, double *hct, double *dt)
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
    *dt = fm_params_get_double(p, "model_dt_s");
}

static const char *concentration_label(fm_dce_conversion_kind kind)
{
    switch (kind) {
    case FM_DCE_CONV_ENHANCEMENT:
        return _("enhancement S/S0 − 1");
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
} Work;

static void work_free(gpointer data)
{
    Work *w = data;
    g_object_unref(w->views);
    fm_dataset_unref(w->ds);
    if (w->rois)
        g_ptr_array_unref(w->rois);
    g_free(w->csv);
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

static void refresh_anatomy(FmDceViews *self);
static void refresh_curves(FmDceViews *self);

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
        refresh_anatomy(self);
        g_signal_emit(self, signals[SIGNAL_POSITION_CHANGED], 0);
    }
}

static void start_peak(FmDceViews *self)
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

static void inputs_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    Work *w = data;
    fm_dce_inputs *in = g_new0(fm_dce_inputs, 1);
    GError *error = NULL;
    gboolean ok = w->csv && *w->csv
                      ? fm_dce_inputs_load_csv(w->csv, in, &error)
                      : fm_dce_inputs_from_rois(w->ds, w->rois, &w->conv, NULL, w->hematocrit, in,
                                                &error);
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
    fm_dce_inputs *in = g_task_propagate_pointer(G_TASK(res), &error);
    self->busy--;
    if (w->gen == self->inputs_gen && w->ds == self->ds && in) {
        fm_dce_inputs_clear(&self->inputs);
        self->inputs = *in;
        self->have_inputs = TRUE;
        g_free(in);
        refresh_curves(self);
        return;
    }
    if (in) {
        fm_dce_inputs_clear(in);
        g_free(in);
    }
}

static void start_inputs(FmDceViews *self)
{
    fm_dce_inputs_clear(&self->inputs);
    self->have_inputs = FALSE;
    ++self->inputs_gen;
    if (!self->ds) {
        refresh_curves(self);
        return;
    }
    Work *w = work_new(self, self->inputs_gen);
    w->rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    for (guint i = 0; self->rois && i < self->rois->len; i++)
        g_ptr_array_add(w->rois, fm_roi_copy(self->rois->pdata[i]));
    w->csv = self->params ? g_strdup(fm_params_get_string(self->params, "input_csv")) : NULL;
    GTask *task = g_task_new(NULL, NULL, inputs_done, NULL);
    g_task_set_task_data(task, w, work_free);
    self->busy++;
    g_task_run_in_thread(task, inputs_thread);
    g_object_unref(task);
    refresh_curves(self); /* the old curves go at once */
}

/* ---- display ----------------------------------------------------------------------------- */

static const fm_map *overlay_map(FmDceViews *self)
{
    if (!self->result || !self->overlay || !*self->overlay)
        return NULL;
    const fm_map *m = fm_result_get_map(self->result, self->overlay);
    return m && m->width == self->g.nx && m->height == self->g.ny && m->n_frames == self->g.nz
               ? m
               : NULL;
}

static const char *overlay_title(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(overlay_maps); i++)
        if (g_strcmp0(overlay_maps[i].name, name) == 0)
            return _(overlay_maps[i].title);
    return name;
}

static void refresh_overlay(FmDceViews *self)
{
    const fm_map *m = overlay_map(self);
    if (!m) {
        fm_dce_image_set_overlay(self->image, NULL, 0, 0, NULL, NULL, 0, 1);
        return;
    }
    /* One range over every slice, so colours compare between slices. */
    double lo = 0, hi = 1;
    if (!fm_percentile_range(m->data, fm_map_n_values(m), 1.0, 99.0, &lo, &hi))
        lo = 0, hi = 1;
    gsize plane = (gsize)m->width * m->height;
    fm_dce_image_set_overlay(self->image, m->data + (gsize)self->slice * plane, m->width,
                             m->height, overlay_title(m->name), m->unit, lo, hi);
}

static void refresh_anatomy(FmDceViews *self)
{
    g_clear_pointer(&self->anatomy, g_free);
    if (!self->ds) {
        fm_dce_image_set_anatomy(self->image, NULL, 0, 0);
        return;
    }
    const fm_dce_geometry *g = &self->g;
    gsize plane = (gsize)g->nx * g->ny;
    self->anatomy = g_new(float, plane);
    if (self->mode == FM_DCE_ANATOMY_PEAK && self->peak)
        memcpy(self->anatomy, self->peak + (gsize)self->slice * plane, plane * sizeof(float));
    else
        for (gsize p = 0; p < plane; p++)
            self->anatomy[p] = (float)fm_dataset_value(
                self->ds, ((gsize)self->time * g->nz + self->slice) * plane + p);
    fm_dce_image_set_anatomy(self->image, self->anatomy, g->nx, g->ny);
    fm_dce_image_set_rois(self->image, self->rois, self->slice);
    refresh_overlay(self);
}

static gboolean roi_on_slice(const fm_roi *roi, int slice)
{
    return roi->slice < 0 || roi->slice == slice;
}

static void refresh_table(FmDceViews *self)
{
    gtk_list_store_clear(self->store);
    int shown = 0;
    for (guint i = 0; self->rois && i < self->rois->len; i++) {
        const fm_roi *roi = self->rois->pdata[i];
        if (!roi_on_slice(roi, self->slice))
            continue;
        GtkTreeIter it;
        gtk_list_store_append(self->store, &it);
        gtk_list_store_set(self->store, &it, COL_ROI, roi->name ? roi->name : "",
                           COL_ROLE, roi->role ? roi->role : "—", -1);
        shown++;
        for (gsize k = 0; k < G_N_ELEMENTS(table_maps); k++) {
            const fm_map *m = self->result ? fm_result_get_map(self->result, table_maps[k]) : NULL;
            if (!m || m->n_frames != self->g.nz)
                continue;
            const float *plane = m->data + (gsize)self->slice * m->width * m->height;
            fm_roi_stats st = fm_roi_statistics(roi, plane, m->width, m->height);
            g_autofree char *text = st.n ? g_strdup_printf("%.3g ± %.2g", st.mean, st.sd)
                                         : g_strdup("—");
            gtk_list_store_set(self->store, &it, COL_FIRST_MAP + (int)k, text, -1);
            if (k == 0) {
                g_autofree char *n = g_strdup_printf("%" G_GSIZE_FORMAT, st.n);
                gtk_list_store_set(self->store, &it, COL_N, n, -1);
            }
        }
    }
    g_autofree char *text =
        !self->ds       ? g_strdup("")
        : !self->result ? g_strdup_printf(_("ROIs on slice %d. Run the fit for their perfusion "
                                            "statistics."),
                                          self->slice + 1)
                        : g_strdup_printf(_("Mean ± sd over the fitted voxels of each ROI on slice "
                                            "%d (rates in ml/100g/min, delays and MTT in s)."),
                                          self->slice + 1);
    gtk_label_set_text(GTK_LABEL(self->table_label), shown || !self->ds ? text : _("No ROI on "
                                                                                   "this slice."));
}

static void update_labels(FmDceViews *self)
{
    g_autofree char *slice = g_strdup_printf("%d / %d", self->slice + 1, MAX(self->g.nz, 1));
    gtk_label_set_text(GTK_LABEL(self->slice_label), slice);
    g_autofree char *time =
        self->times ? g_strdup_printf(_("%.1f s (%d / %d)"), self->times[self->time],
                                      self->time + 1, self->g.nt)
                    : g_strdup("");
    gtk_label_set_text(GTK_LABEL(self->time_label), time);
    gtk_widget_set_sensitive(self->time_scale, self->mode == FM_DCE_ANATOMY_FRAME);
}

static void refresh_all(FmDceViews *self)
{
    update_labels(self);
    refresh_anatomy(self);
    refresh_table(self);
    refresh_curves(self);
}
