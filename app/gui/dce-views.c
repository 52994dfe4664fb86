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
