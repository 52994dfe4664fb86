/* FmDceViews: the DCE perfusion views: slice and time controls, anatomy (any frame or the
 * enhancement peak) with a perfusion map overlaid, curves of Ca, Cp and the voxel or ROI under
 * the cursor with its fitted model, and a table of mean ± sd of each parameter per ROI. */
#include "dce-views-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/core/dce/dce_series.h"
#include "app/core/error.h"

/* Maps the overlay offers, in the order a reader reads them: the liver model's, then the
 * standard models'. Only the maps the result on show has are listed; a map not named here
 * (a new output) is listed under its own name. title: the overlay combo's entry; bar: the
 * colorbar's title, short enough to stand beside a small map's bar. */
static const struct {
    const char *name, *title, *bar;
} overlay_maps[] = {
    {"ka", N_("ka (arterial)"), N_("ka")},
    {"kp", N_("kp (portal)"), N_("kp")},
    {"kl", N_("kl (outflow)"), N_("kl")},
    {"arterial_fraction", N_("Arterial fraction"), N_("Art. fraction")},
    {"distribution_volume", N_("Distribution volume"), N_("Distr. volume")},
    {"mtt", N_("Mean transit time"), N_("MTT")},
    {"tau_a", N_("τa (arterial delay)"), N_("τa")},
    {"tau_p", N_("τp (portal delay)"), N_("τp")},
    {"ktrans", N_("Ktrans"), N_("Ktrans")},
    {"fp", N_("Fp (plasma flow)"), N_("Fp")},
    {"ps", N_("PS (permeability)"), N_("PS")},
    {"ve", N_("ve (extravascular)"), N_("ve")},
    {"vp", N_("vp (plasma volume)"), N_("vp")},
    {"kep", N_("kep"), N_("kep")},
    {"delay", N_("Arterial delay"), N_("Delay")},
    {"r2", N_("R²"), N_("R²")},
    {"rmse", N_("RMSE"), N_("RMSE")},
    {"aic", N_("AIC (compare models)"), N_("AIC")},
};

/* Bookkeeping maps: in the catalogue and the exports, not worth an overlay. */
static void rebuild_overlay_combo(FmDceViews *self);
static gboolean select_rois(FmDceViews *self);
static void rois_in_use_changed(FmDceViews *self);

static gboolean overlay_worthy(const char *name)
{
    return g_strcmp0(name, "converged") != 0 && g_strcmp0(name, "iterations") != 0;
}

G_DEFINE_FINAL_TYPE(FmDceViews, fm_dce_views, GTK_TYPE_BOX)

enum { SIGNAL_POSITION_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

void fm_dce_views_emit_position(FmDceViews *self)
{
    g_signal_emit(self, signals[SIGNAL_POSITION_CHANGED], 0);
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

static const char *overlay_bar_title(const char *name)
{
    for (gsize i = 0; i < G_N_ELEMENTS(overlay_maps); i++)
        if (g_strcmp0(overlay_maps[i].name, name) == 0)
            return _(overlay_maps[i].bar);
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
    if (hi - lo <= 1e-6 * MAX(fabs(hi), 1e-12)) { /* a uniform map still gets a readable bar */
        double half = hi != 0 ? 0.1 * fabs(hi) : 1.0;
        lo -= half;
        hi += half;
    }
    gsize plane = (gsize)m->width * m->height;
    fm_dce_image_set_overlay(self->image, m->data + (gsize)self->slice * plane, m->width, m->height,
                             overlay_bar_title(m->name), m->unit, lo, hi);
}

void fm_dce_views_refresh_anatomy(FmDceViews *self)
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

static void refresh_table(FmDceViews *self)
{
    fm_dce_results_update(self->results, self->result, self->rois, self->slice, self->g.nz,
                          self->ds != NULL);
    g_autofree char *run = fm_dce_views_run_summary(self);
    fm_dce_results_set_run(self->results, run);
    /* A reopened run's outlines may differ from the ROIs being edited on the anatomy: said on
     * the run's line (a tooltip: a longer line would push the table's last row out of sight). */
    gtk_widget_set_tooltip_text(fm_dce_results_get_run_label(self->results),
                                self->rois && self->rois == self->run_rois
                                    ? _("Its input, curves, table and outlines come from the ROIs "
                                        "this run was given; the Anatomy page keeps the ROIs you "
                                        "edit, which come back when you edit them or change an "
                                        "input setting.")
                                    : NULL);
}

static void update_labels(FmDceViews *self)
{
    g_autofree char *slice = g_strdup_printf("%d / %d", self->slice + 1, MAX(self->g.nz, 1));
    gtk_label_set_text(GTK_LABEL(self->slice_label), slice);
    g_autofree char *time = self->times
                                ? g_strdup_printf(_("%.1f s (%d / %d)"), self->times[self->time],
                                                  self->time + 1, self->g.nt)
                                : g_strdup("");
    gtk_label_set_text(GTK_LABEL(self->time_label), time);
    gtk_widget_set_sensitive(self->time_scale, self->mode == FM_DCE_ANATOMY_FRAME);
}

static void refresh_all(FmDceViews *self)
{
    update_labels(self);
    fm_dce_views_refresh_anatomy(self);
    refresh_table(self);
    fm_dce_views_refresh_curves(self);
}

/* ---- controls ---------------------------------------------------------------------------- */

static void position_changed(FmDceViews *self)
{
    update_labels(self);
    fm_dce_views_refresh_anatomy(self);
    refresh_table(self);
    fm_dce_views_refresh_curves(self);
    g_signal_emit(self, signals[SIGNAL_POSITION_CHANGED], 0);
}

static void slice_moved(GtkRange *range, FmDceViews *self)
{
    if (!self->updating)
        fm_dce_views_set_slice(self, (int)lround(gtk_range_get_value(range)));
}

static void time_moved(GtkRange *range, FmDceViews *self)
{
    if (!self->updating)
        fm_dce_views_set_time(self, (int)lround(gtk_range_get_value(range)));
}

static void anatomy_changed(GtkComboBox *combo, FmDceViews *self)
{
    if (!self->updating)
        fm_dce_views_set_anatomy(self, g_strcmp0(gtk_combo_box_get_active_id(combo), "peak") == 0
                                           ? FM_DCE_ANATOMY_PEAK
                                           : FM_DCE_ANATOMY_FRAME);
}

static void overlay_changed(GtkComboBox *combo, FmDceViews *self)
{
    if (!self->updating)
        fm_dce_views_set_overlay(self, gtk_combo_box_get_active_id(combo));
}

static void opacity_moved(GtkRange *range, FmDceViews *self)
{
    if (!self->updating)
        fm_dce_views_set_opacity(self, gtk_range_get_value(range) / 100.0);
}

static void image_cursor(FmDceImage *image, int x, int y, FmDceViews *self)
{
    fm_dce_views_show_curve(self, x, y);
}

static GtkWidget *caption(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

static GtkWidget *scale(double max, GCallback moved, FmDceViews *self, int width)
{
    GtkWidget *s = gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, 0, MAX(max, 1), 1);
    gtk_scale_set_draw_value(GTK_SCALE(s), FALSE);
    gtk_widget_set_size_request(s, width, -1);
    g_signal_connect(s, "value-changed", moved, self);
    return s;
}

static void build_controls(FmDceViews *self)
{
    /* Two rows (where and when; what is drawn): on one row they made the window 1860 px wide. */
    GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    self->controls = g_object_ref_sink(bar);
    g_object_set(bar, "margin-start", 6, "margin-end", 6, "margin-top", 2, "margin-bottom", 2,
                 NULL);
    GtkWidget *row[2] = {gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6),
                         gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)};
    self->control_row = row[0];
    gtk_box_pack_start(GTK_BOX(bar), row[0], FALSE, FALSE, 0);
    gtk_box_pack_start(GTK_BOX(bar), row[1], FALSE, FALSE, 0);
    self->slice_scale = scale(1, G_CALLBACK(slice_moved), self, 110);
    self->slice_label = gtk_label_new("1 / 1");
    gtk_label_set_width_chars(GTK_LABEL(self->slice_label), 7);
    self->time_scale = scale(1, G_CALLBACK(time_moved), self, 160);
    self->time_label = gtk_label_new("");
    gtk_label_set_width_chars(GTK_LABEL(self->time_label), 16);
    gtk_widget_set_tooltip_text(self->slice_scale, _("Slice (z) shown and drawn on"));
    gtk_widget_set_tooltip_text(self->time_scale, _("Frame shown as anatomy"));
    self->anatomy_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->anatomy_combo), "frame", _("Frame"));
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->anatomy_combo), "peak",
                              _("Enhancement peak"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->anatomy_combo), "frame");
    gtk_widget_set_tooltip_text(self->anatomy_combo,
                                _("Anatomy: the signal at the chosen time, or the peak "
                                  "enhancement (max over time minus baseline)"));
    g_signal_connect(self->anatomy_combo, "changed", G_CALLBACK(anatomy_changed), self);
    self->overlay_combo = gtk_combo_box_text_new();
    gtk_combo_box_text_append(GTK_COMBO_BOX_TEXT(self->overlay_combo), "", _("No overlay"));
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->overlay_combo), "");
    gtk_widget_set_sensitive(self->overlay_combo, FALSE);
    g_signal_connect(self->overlay_combo, "changed", G_CALLBACK(overlay_changed), self);
    self->opacity_scale = scale(100, G_CALLBACK(opacity_moved), self, 90);
    self->updating = TRUE; /* the image does not exist yet; it starts at 0.6 itself */
    gtk_range_set_value(GTK_RANGE(self->opacity_scale), 60);
    self->updating = FALSE;
    gtk_widget_set_tooltip_text(self->opacity_scale, _("Opacity of the perfusion map"));
    GtkWidget *export = gtk_menu_button_new();
    GMenu *menu = g_menu_new();
    g_menu_append(menu, _("Maps as NIfTI (scanner geometry)…"), "win.dce-export::nifti");
    g_menu_append(menu, _("Maps as float32 TIFF…"), "win.dce-export::tiff");
    g_menu_append(menu, _("Fitted voxels as CSV…"), "win.dce-export::csv");
    g_menu_append(menu, _("Maps and ROIs as DICOM…"), "win.dce-export::dicom");
    g_menu_append(menu, _("Input curves as CSV…"), "win.dce-export::inputs");
    gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(export), G_MENU_MODEL(menu));
    g_object_unref(menu);
    gtk_button_set_label(GTK_BUTTON(export), _("Export"));
    gtk_widget_set_tooltip_text(export, _("Export the perfusion maps"));

    GtkWidget *items[] = {caption(_("Slice")),   self->slice_scale,   self->slice_label,
                          caption(_("Time")),    self->time_scale,    self->time_label,
                          caption(_("Anatomy")), self->anatomy_combo, caption(_("Overlay")),
                          self->overlay_combo,   self->opacity_scale};
    for (gsize i = 0; i < G_N_ELEMENTS(items); i++) /* the first six on the first row */
        gtk_box_pack_start(GTK_BOX(row[i < 6 ? 0 : 1]), items[i], FALSE, FALSE, 0);
    gtk_box_pack_end(GTK_BOX(row[1]), export, FALSE, FALSE, 0);
    gtk_widget_show_all(bar);
}

static void fm_dce_views_dispose(GObject *object)
{
    FmDceViews *self = FM_DCE_VIEWS(object);
    fm_dce_views_set_plot(self, NULL);
    if (self->replot_idle)
        g_source_remove(self->replot_idle);
    self->replot_idle = 0;
    g_clear_object(&self->controls);
    G_OBJECT_CLASS(fm_dce_views_parent_class)->dispose(object);
}

static void fm_dce_views_finalize(GObject *object)
{
    FmDceViews *self = FM_DCE_VIEWS(object);
    g_clear_pointer(&self->ds, fm_dataset_unref);
    g_clear_pointer(&self->source, fm_dataset_unref);
    g_free(self->series_key);
    g_clear_pointer(&self->params, fm_params_free);
    g_clear_pointer(&self->run_params, fm_params_free);
    g_clear_pointer(&self->tissue_curves, g_ptr_array_unref);
    self->rois = NULL;
    g_clear_pointer(&self->page_rois, g_ptr_array_unref);
    g_clear_pointer(&self->run_rois, g_ptr_array_unref);
    g_clear_pointer(&self->result, fm_result_free);
    fm_dce_inputs_clear(&self->inputs);
    fm_dce_pk_input_clear(&self->pk_input);
    g_free(self->times);
    g_free(self->peak);
    g_free(self->anatomy);
    g_free(self->overlay);
    g_free(self->pk_key);
    g_free(self->page_key);
    G_OBJECT_CLASS(fm_dce_views_parent_class)->finalize(object);
}

static void fm_dce_views_class_init(FmDceViewsClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = fm_dce_views_dispose;
    G_OBJECT_CLASS(klass)->finalize = fm_dce_views_finalize;
    signals[SIGNAL_POSITION_CHANGED] =
        g_signal_new("position-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 0);
}

static void fm_dce_views_init(FmDceViews *self)
{
    /* The results sit beside the map, not under it: the slice is square and the centre wide,
     * so a table below took its height and left the map a third of the width. */
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_HORIZONTAL);
    gtk_box_set_spacing(GTK_BOX(self), 6);
    self->cur_x = self->cur_y = -1;
    self->input_scale = 1;
    self->overlay = g_strdup("");
    fm_dce_views_conversion_from(NULL, &self->conv, &self->hematocrit, &self->model_dt_s);
    build_controls(self);
    self->image = FM_DCE_IMAGE(fm_dce_image_new());
    g_signal_connect(self->image, "cursor-moved", G_CALLBACK(image_cursor), self);
    gtk_box_pack_start(GTK_BOX(self), GTK_WIDGET(self->image), TRUE, TRUE, 0);
    self->results = FM_DCE_RESULTS(fm_dce_results_new());
    g_object_set(self->results, "margin-end", 6, "margin-top", 4, "margin-bottom", 4, NULL);
    gtk_box_pack_start(GTK_BOX(self), GTK_WIDGET(self->results), FALSE, FALSE, 0);
    refresh_table(self);
}

/* ---- public API -------------------------------------------------------------------------- */

GtkWidget *fm_dce_views_new(void)
{
    return g_object_new(FM_TYPE_DCE_VIEWS, NULL);
}

GtkWidget *fm_dce_views_get_controls(FmDceViews *self)
{
    return self->controls;
}

GtkWidget *fm_dce_views_get_control_row(FmDceViews *views)
{
    return views->control_row;
}

static gboolean replot(gpointer data)
{
    FmDceViews *self = data;
    self->replot_idle = 0;
    fm_dce_views_refresh_curves(self);
    return G_SOURCE_REMOVE;
}

/* A standard model's markers are thinned for the plot's width: a new width redraws them. */
static void plot_allocated(GtkWidget *plot, GdkRectangle *allocation, FmDceViews *self)
{
    if (allocation->width == self->plot_width)
        return;
    self->plot_width = allocation->width;
    if (fm_dce_views_is_pk(self) && !self->replot_idle)
        self->replot_idle = g_idle_add(replot, self);
}

void fm_dce_views_set_plot(FmDceViews *self, FmPlotView *plot)
{
    if (self->plot) {
        g_signal_handlers_disconnect_by_func(self->plot, plot_allocated, self);
        g_object_remove_weak_pointer(G_OBJECT(self->plot), (gpointer *)&self->plot);
    }
    self->plot = plot;
    self->plot_width = 0;
    if (plot) {
        g_object_add_weak_pointer(G_OBJECT(plot), (gpointer *)&self->plot);
        g_signal_connect(plot, "size-allocate", G_CALLBACK(plot_allocated), self);
    }
}

static void set_range(FmDceViews *self, GtkWidget *s, int n, int value)
{
    self->updating = TRUE;
    gtk_range_set_range(GTK_RANGE(s), 0, MAX(n - 1, 1));
    gtk_range_set_value(GTK_RANGE(s), value);
    gtk_widget_set_sensitive(s, n > 1);
    self->updating = FALSE;
}

/* The page's stack settings (a TIFF stack's slices and frame interval), as one string, and
 * the parameters that hold them (the standard models' defaults before the page gave any). */
static char *stack_key(FmDceViews *self, fm_params **defaults)
{
    const fm_params *p = self->params;
    if (!p || !fm_params_has(p, "stack_slices") || !fm_params_has(p, "frame_interval_s"))
        p = *defaults = fm_method_default_params(fm_method_find("dce.tofts"));
    return g_strdup_printf("%d|%.17g", fm_params_get_int(p, "stack_slices"),
                           fm_params_get_double(p, "frame_interval_s"));
}

/* The series the fits see (a new reference, or NULL when the pages make no whole volumes): a
 * TIFF stack reshaped into volumes as the methods reshape it (fm_dce_series_of). */
static fm_dataset *series_of(FmDceViews *self, fm_dataset *source)
{
    g_clear_pointer(&self->series_key, g_free);
    if (source->n_dims != 3)
        return fm_dataset_ref(source);
    g_autoptr(fm_params) defaults = NULL;
    self->series_key = stack_key(self, &defaults);
    return fm_dce_series_of(source, defaults ? defaults : self->params, NULL);
}

void fm_dce_views_set_dataset(FmDceViews *self, fm_dataset *dataset)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    fm_dataset *source = dataset ? fm_dataset_ref(dataset) : NULL; /* may be self->source */
    g_clear_pointer(&self->source, fm_dataset_unref);
    self->source = source;
    g_autoptr(fm_dataset) series = source ? series_of(self, source) : NULL;
    g_clear_pointer(&self->ds, fm_dataset_unref);
    g_clear_pointer(&self->times, g_free);
    g_clear_pointer(&self->result, fm_result_free);
    g_clear_pointer(&self->run_params, fm_params_free);
    g_clear_pointer(&self->run_rois, g_ptr_array_unref);
    self->run_method = NULL;
    self->follow_run = FALSE;
    select_rois(self);
    fm_dce_views_conversion_from(self->params, &self->conv, &self->hematocrit, &self->model_dt_s);
    memset(&self->g, 0, sizeof self->g);
    if (series && fm_dce_geometry_of(series, &self->g, NULL) &&
        (self->times = fm_dce_frame_times(series, &self->g, NULL)) != NULL)
        self->ds = fm_dataset_ref(series);
    else
        memset(&self->g, 0, sizeof self->g);
    fm_dce_views_conversion_headers(self->ds, &self->conv);
    self->slice = self->g.nz / 2; /* the middle slice usually shows the organ */
    self->time = 0;
    self->cur_x = self->cur_y = -1;
    set_range(self, self->slice_scale, self->g.nz, self->slice);
    set_range(self, self->time_scale, self->g.nt, 0);
    rebuild_overlay_combo(self);
    self->updating = TRUE;
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->overlay_combo), "");
    gtk_widget_set_sensitive(self->overlay_combo, FALSE);
    self->updating = FALSE;
    g_free(self->overlay);
    self->overlay = g_strdup("");
    fm_dce_views_start_peak(self);
    fm_dce_views_start_inputs(self);
    refresh_all(self);
    g_signal_emit(self, signals[SIGNAL_POSITION_CHANGED], 0);
}

void fm_dce_views_set_params(FmDceViews *self, const fm_params *params)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    g_clear_pointer(&self->params, fm_params_free);
    self->params = params ? fm_params_copy(params) : NULL;
    g_autofree char *key = fm_dce_views_input_key(self->method, self->params);
    g_autofree char *run_key =
        self->run_params ? fm_dce_views_input_key(self->run_method, self->run_params) : NULL;
    /* The user changed an input setting (source, hematocrit, model, conversion): the page's
     * input is previewed from now on, not the run's; the run's again when they are its own.
     * An iteration limit changes no input. */
    if (g_strcmp0(key, self->page_key) != 0)
        self->follow_run = run_key && g_strcmp0(key, run_key) == 0;
    g_free(self->page_key);
    self->page_key = g_steal_pointer(&key);
    if (select_rois(self)) /* the run's ROIs go with its input, the page's with the page's */
        rois_in_use_changed(self);
    fm_dce_views_apply_shown(self);
    /* A TIFF stack whose slices or frame interval the user changed: its volumes again. */
    g_autoptr(fm_params) defaults = NULL;
    g_autofree char *stack = self->series_key ? stack_key(self, &defaults) : NULL;
    if (stack && g_strcmp0(stack, self->series_key) != 0)
        fm_dce_views_set_dataset(self, self->source);
}

static GPtrArray *copy_rois(GPtrArray *rois)
{
    GPtrArray *copy = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    for (guint i = 0; rois && i < rois->len; i++)
        g_ptr_array_add(copy, fm_roi_copy(rois->pdata[i]));
    return copy;
}

/* Points self->rois at the run's ROIs while its input is on show, else at the page's; TRUE
 * when that changed which (the outlines, table and input follow). */
static gboolean select_rois(FmDceViews *self)
{
    GPtrArray *before = self->rois;
    self->rois =
        self->run_rois && self->follow_run && self->run_params ? self->run_rois : self->page_rois;
    return self->rois != before;
}

/* Outlines, table and input curves from the ROIs in use. */
static void rois_in_use_changed(FmDceViews *self)
{
    fm_dce_image_set_rois(self->image, self->rois, self->slice);
    refresh_table(self);
    fm_dce_views_start_inputs(self);
}

void fm_dce_views_set_rois(FmDceViews *self, GPtrArray *rois)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    GPtrArray *old = self->page_rois;
    self->page_rois = copy_rois(rois);
    gboolean moved = select_rois(self) || self->rois == self->page_rois;
    if (old)
        g_ptr_array_unref(old);
    if (moved) /* the run's own ROIs on show stay as they are */
        rois_in_use_changed(self);
}

void fm_dce_views_set_run_rois(FmDceViews *self, GPtrArray *rois)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    if (rois == NULL && self->run_rois == NULL)
        return;
    GPtrArray *old = self->run_rois;
    self->run_rois = rois ? copy_rois(rois) : NULL;
    gboolean in_use = self->rois == old || self->rois == self->run_rois;
    select_rois(self);
    if (old)
        g_ptr_array_unref(old);
    if (in_use || self->rois == self->run_rois)
        rois_in_use_changed(self);
}

gboolean fm_dce_views_shows_run_rois(FmDceViews *self)
{
    return self->rois != NULL && self->rois == self->run_rois;
}

GPtrArray *fm_dce_views_get_rois(FmDceViews *self)
{
    return self->rois;
}

/* The overlay combo lists the maps of the result on show (a Tofts run has no ka, a liver run
 * no Ktrans); the map on show stays where the new result has it, else its model's first. */
static void rebuild_overlay_combo(FmDceViews *self)
{
    GtkComboBoxText *combo = GTK_COMBO_BOX_TEXT(self->overlay_combo);
    self->updating = TRUE;
    gtk_combo_box_text_remove_all(combo);
    gtk_combo_box_text_append(combo, "", _("No overlay"));
    const fm_result *r = self->result;
    for (gsize i = 0; r && i < G_N_ELEMENTS(overlay_maps); i++)
        if (fm_result_get_map(r, overlay_maps[i].name))
            gtk_combo_box_text_append(combo, overlay_maps[i].name, _(overlay_maps[i].title));
    for (guint m = 0; r && r->maps && m < r->maps->len; m++) {
        const fm_map *map = r->maps->pdata[m];
        gboolean known = !overlay_worthy(map->name);
        for (gsize i = 0; i < G_N_ELEMENTS(overlay_maps) && !known; i++)
            known = g_strcmp0(overlay_maps[i].name, map->name) == 0;
        if (!known)
            gtk_combo_box_text_append(combo, map->name, map->name);
    }
    self->updating = FALSE;
}

gboolean fm_dce_views_lists_overlay(FmDceViews *self, const char *map_name)
{
    GtkTreeModel *model = gtk_combo_box_get_model(GTK_COMBO_BOX(self->overlay_combo));
    GtkTreeIter it;
    int id_column = gtk_combo_box_get_id_column(GTK_COMBO_BOX(self->overlay_combo));
    for (gboolean ok = gtk_tree_model_get_iter_first(model, &it); ok;
         ok = gtk_tree_model_iter_next(model, &it)) {
        g_autofree char *id = NULL;
        gtk_tree_model_get(model, &it, id_column, &id, -1);
        if (g_strcmp0(id, map_name) == 0 && *map_name)
            return TRUE;
    }
    return FALSE;
}

void fm_dce_views_set_result(FmDceViews *self, fm_result *result)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    g_clear_pointer(&self->result, fm_result_free);
    self->result = result;
    /* The run's own parameters, as the catalogue (or the job) recorded them. */
    g_clear_pointer(&self->run_params, fm_params_free);
    self->run_method = result && result->params_json ? fm_method_find(result->method_id) : NULL;
    if (self->run_method) {
        self->run_params = fm_method_default_params(self->run_method);
        if (!fm_params_set_from_json(self->run_params, result->params_json, NULL))
            g_clear_pointer(&self->run_params, fm_params_free);
    }
    self->follow_run = self->run_params != NULL;
    /* Another run's ROIs go with it (fm_dce_views_set_run_rois gives this one's). */
    g_clear_pointer(&self->run_rois, g_ptr_array_unref);
    if (select_rois(self))
        rois_in_use_changed(self);
    rebuild_overlay_combo(self);
    gtk_widget_set_sensitive(self->overlay_combo, result != NULL);
    if (result && !(self->overlay && *self->overlay && fm_result_get_map(result, self->overlay))) {
        static const char *const first[] = {"ka", "ktrans", "fp"};
        const char *pick = NULL;
        for (gsize i = 0; i < G_N_ELEMENTS(first) && !pick; i++)
            pick = fm_result_get_map(result, first[i]) ? first[i] : NULL;
        if (!pick && result->maps && result->maps->len)
            pick = ((const fm_map *)result->maps->pdata[0])->name;
        fm_dce_views_set_overlay(self, pick);
    } else {
        g_autofree char *keep = g_strdup(result ? self->overlay : "");
        fm_dce_views_set_overlay(self, keep);
    }
    refresh_overlay(self);
    refresh_table(self);
    fm_dce_views_apply_shown(self); /* the run's input, and its curves */
}

GtkWidget *fm_dce_views_get_image(FmDceViews *self)
{
    return GTK_WIDGET(self->image);
}

FmDceResults *fm_dce_views_get_results(FmDceViews *self)
{
    return self->results;
}

const fm_result *fm_dce_views_get_result(FmDceViews *self)
{
    return self->result;
}

int fm_dce_views_get_slice(FmDceViews *self)
{
    return self->slice;
}

void fm_dce_views_set_slice(FmDceViews *self, int slice)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    if (!self->ds || slice < 0 || slice >= self->g.nz)
        return;
    self->slice = slice;
    set_range(self, self->slice_scale, self->g.nz, slice);
    position_changed(self);
}

int fm_dce_views_get_time(FmDceViews *self)
{
    return self->time;
}

void fm_dce_views_set_time(FmDceViews *self, int frame)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    if (!self->ds || frame < 0 || frame >= self->g.nt)
        return;
    self->time = frame;
    set_range(self, self->time_scale, self->g.nt, frame);
    position_changed(self);
}

void fm_dce_views_set_anatomy(FmDceViews *self, FmDceAnatomy mode)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    self->mode = mode;
    self->updating = TRUE;
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->anatomy_combo),
                                mode == FM_DCE_ANATOMY_PEAK ? "peak" : "frame");
    self->updating = FALSE;
    position_changed(self);
}

void fm_dce_views_set_overlay(FmDceViews *self, const char *map_name)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    g_free(self->overlay);
    self->overlay = g_strdup(map_name ? map_name : "");
    self->updating = TRUE;
    gtk_combo_box_set_active_id(GTK_COMBO_BOX(self->overlay_combo), self->overlay);
    self->updating = FALSE;
    refresh_overlay(self);
}

void fm_dce_views_set_opacity(FmDceViews *self, double opacity)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    self->updating = TRUE;
    gtk_range_set_value(GTK_RANGE(self->opacity_scale), 100.0 * opacity);
    self->updating = FALSE;
    fm_dce_image_set_opacity(self->image, opacity);
}

const float *fm_dce_views_get_anatomy(FmDceViews *self, int *width, int *height)
{
    *width = self->g.nx;
    *height = self->g.ny;
    return self->anatomy;
}

void fm_dce_views_set_method(FmDceViews *self, const fm_method *method)
{
    g_return_if_fail(FM_IS_DCE_VIEWS(self));
    self->method = method; /* set_params, which follows, restarts the input curves */
}

const char *fm_dce_views_inputs_missing(FmDceViews *self)
{
    if (!fm_dce_views_is_pk(self))
        return self->have_inputs ? NULL
                                 : _("No input curves yet: give an ROI the aorta role and "
                                     "another the portal-vein role.");
    return self->have_pk_input ? NULL
                               : _("No arterial input yet: give an ROI the artery role, or "
                                   "choose a population input.");
}

gboolean fm_dce_views_save_inputs_csv(FmDceViews *self, const char *path, GError **error)
{
    const char *missing = fm_dce_views_inputs_missing(self);
    if (missing) {
        g_set_error_literal(error, FM_ERROR, FM_ERROR_BAD_PARAM, missing);
        return FALSE;
    }
    if (!fm_dce_views_is_pk(self))
        return fm_dce_inputs_save_csv(path, &self->inputs, error);
    /* t_s,ca,cp as dce.dual_input and --input_csv read it: ca is the plasma input the fit
     * uses (the population curve where one is chosen), cp unused by these models. */
    const FmDcePkInput *in = &self->pk_input;
    fm_dce_inputs out = {.n_times = in->n_times,
                         .times_s = in->times_s,
                         .ca = in->population ? in->population : in->measured,
                         .cp = g_new0(double, in->n_times)};
    gboolean ok = fm_dce_inputs_save_csv(path, &out, error);
    g_free(out.cp);
    return ok;
}

const fm_dce_inputs *fm_dce_views_get_inputs(FmDceViews *self)
{
    return self->have_inputs ? &self->inputs : NULL;
}

double fm_dce_views_get_input_scale(FmDceViews *self)
{
    return self->input_scale;
}

gboolean fm_dce_views_get_tissue_curve(FmDceViews *self, guint index, const char **label,
                                       const double **measured, const double **model)
{
    if (!self->tissue_curves || index >= self->tissue_curves->len)
        return FALSE;
    const FmDceTissueCurve *t = self->tissue_curves->pdata[index];
    *label = t->label;
    *measured = t->measured;
    *model = t->model;
    return TRUE;
}

gboolean fm_dce_views_busy(FmDceViews *self)
{
    return self->busy > 0;
}

gboolean fm_dce_views_role_stats(FmDceViews *self, const char *role, const char *map_name,
                                 fm_roi_stats *out)
{
    const fm_map *m = self->result ? fm_result_get_map(self->result, map_name) : NULL;
    if (!m || m->n_frames != self->g.nz)
        return FALSE;
    for (guint i = 0; self->rois && i < self->rois->len; i++) {
        const fm_roi *roi = self->rois->pdata[i];
        if (g_strcmp0(roi->role, role) != 0 || !fm_dce_roi_on_slice(roi, self->slice))
            continue;
        const float *plane = m->data + (gsize)self->slice * m->width * m->height;
        *out = fm_roi_statistics(roi, plane, m->width, m->height);
        return TRUE;
    }
    return FALSE;
}
