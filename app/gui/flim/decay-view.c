/* FmDecayView: measured counts as dots on a log axis, the fitted model as a line, and the
 * weighted residuals in a strip below (they should scatter around 0 within ±2 for a good fit),
 * laid out by plot-layout.c; the fit window's edges drag. */
#include "decay-view.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/gui/cairo-util.h"
#include "app/gui/plot-layout.h"

struct _FmDecayView {
    GtkDrawingArea parent_instance;
    double *counts, *model, *residuals;
    int n_bins;
    double bin_width_ns;
    int n_params; /* of the fit shown, for the degrees of freedom */
    char *title, *info;
    int window_start, window_end; /* fit window in bins, [start, end); start < 0: none */
    int dragging;                 /* 0 none, 1 the start edge, 2 the end edge */
    FmPlotLayout layout;          /* of the last draw, for the mouse and for tests */
};

G_DEFINE_TYPE(FmDecayView, fm_decay_view, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_WINDOW_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Pixels either side of an edge that grab it. */
#define GRAB_PX 6
#define OCC_COLS 16
#define OCC_ROWS 10

static const double photon_rgb[] = {0.55, 0.78, 1.0};
static const double fit_rgb[] = {1.0, 0.55, 0.15};
static const double residual_rgb[] = {0.4, 0.9, 0.5};

static gboolean laid_out(FmDecayView *self)
{
    return self->layout.data.width > 0 && self->layout.data.height > 0;
}

static double edge_x(FmDecayView *self, int bin_edge)
{
    return fm_plot_axis_to_px(&self->layout.x, bin_edge * self->bin_width_ns);
}

static double plot_top(FmDecayView *self)
{
    return self->layout.data.y;
}

static double plot_bottom(FmDecayView *self)
{
    const FmPlotBox *low = self->layout.strip.height > 0 ? &self->layout.strip : &self->layout.data;
    return low->y + low->height;
}

/* The fit window: the bins outside it dimmed, its edges as lines with a grip each. */
static void draw_window(FmDecayView *self, cairo_t *cr)
{
    if (self->window_start < 0 || self->n_bins < 2 || !laid_out(self))
        return;
    const FmPlotLayout *l = &self->layout;
    double x0 = edge_x(self, self->window_start), x1 = edge_x(self, self->window_end);
    double top = plot_top(self), bottom = plot_bottom(self);
    double left = l->data.x, right = l->data.x + l->data.width;
    cairo_save(cr);
    cairo_set_source_rgba(cr, 0, 0, 0, 0.45);
    const FmPlotBox *boxes[] = {&l->data, &l->strip};
    for (int k = 0; k < 2; k++) {
        if (boxes[k]->height <= 0)
            continue;
        cairo_rectangle(cr, left, boxes[k]->y, x0 - left, boxes[k]->height);
        cairo_rectangle(cr, x1, boxes[k]->y, right - x1, boxes[k]->height);
    }
    cairo_fill(cr);
    for (int e = 0; e < 2; e++) {
        double x = e == 0 ? x0 : x1;
        gboolean hot = self->dragging == e + 1;
        cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, hot ? 1.0 : 0.75);
        cairo_set_line_width(cr, hot ? 2.0 : 1.2);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bottom);
        cairo_stroke(cr);
        double mid = l->data.y + l->data.height / 2;
        cairo_rectangle(cr, x - 3, mid - 8, 6, 16);
        cairo_fill(cr);
    }
    cairo_restore(cr);
}

static int edge_near(FmDecayView *self, double x, double y)
{
    if (self->window_start < 0 || !laid_out(self) || y < plot_top(self) || y > plot_bottom(self))
        return 0;
    double d0 = fabs(x - edge_x(self, self->window_start));
    double d1 = fabs(x - edge_x(self, self->window_end));
    if (MIN(d0, d1) > GRAB_PX)
        return 0;
    return d0 <= d1 ? 1 : 2;
}

static gboolean fm_decay_view_press(GtkWidget *widget, GdkEventButton *event)
{
    FmDecayView *self = FM_DECAY_VIEW(widget);
    if (event->button != GDK_BUTTON_PRIMARY || event->type != GDK_BUTTON_PRESS)
        return FALSE;
    self->dragging = edge_near(self, event->x, event->y);
    if (self->dragging)
        gtk_widget_queue_draw(widget);
    return self->dragging != 0;
}

static gboolean fm_decay_view_motion(GtkWidget *widget, GdkEventMotion *event)
{
    FmDecayView *self = FM_DECAY_VIEW(widget);
    GdkWindow *window = gtk_widget_get_window(widget);
    if (self->dragging == 0) {
        /* a resize cursor over an edge says that it can be dragged */
        gboolean near = edge_near(self, event->x, event->y) != 0;
        g_autoptr(GdkCursor) cursor =
            near ? gdk_cursor_new_from_name(gtk_widget_get_display(widget), "col-resize") : NULL;
        if (window != NULL)
            gdk_window_set_cursor(window, cursor);
        return FALSE;
    }
    /* the nearest bin edge, keeping at least FM_DECAY_VIEW_MIN_BINS bins inside */
    double ns = fm_plot_axis_from_px(&self->layout.x, event->x);
    int e = (int)floor(ns / self->bin_width_ns + 0.5);
    if (self->dragging == 1)
        self->window_start = CLAMP(e, 0, self->window_end - FM_DECAY_VIEW_MIN_BINS);
    else
        self->window_end = CLAMP(e, self->window_start + FM_DECAY_VIEW_MIN_BINS, self->n_bins);
    gtk_widget_queue_draw(widget);
    return TRUE;
}

static gboolean fm_decay_view_release(GtkWidget *widget, GdkEventButton *event)
{
    FmDecayView *self = FM_DECAY_VIEW(widget);
    if (self->dragging == 0 || event->button != GDK_BUTTON_PRIMARY)
        return FALSE;
    int edge = self->dragging;
    self->dragging = 0;
    gtk_widget_queue_draw(widget);
    g_signal_emit(self, signals[SIGNAL_WINDOW_CHANGED], 0, edge == 1,
                  self->window_start * self->bin_width_ns, self->window_end * self->bin_width_ns);
    return TRUE;
}

/* Half the residual strip's height in weighted residuals: 2, 5 or 10 (beyond 10 they clip). */
static double residual_range(FmDecayView *self)
{
    double most = 0;
    for (int b = 0; b < self->n_bins; b++)
        if (isfinite(self->residuals[b]))
            most = MAX(most, fabs(self->residuals[b]));
    return most <= 2 ? 2 : most <= 5 ? 5 : 10;
}

static void swatch(cairo_t *cr, int entry, const FmPlotBox *box, gpointer user)
{
    const double *rgb = entry == 0 ? photon_rgb : entry == 1 ? fit_rgb : residual_rgb;
    double y = box->y + box->height / 2;
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    if (entry == 0) {
        for (int k = 0; k < 3; k++) {
            cairo_arc(cr, box->x + 3 + k * 6, y, 1.6, 0, 2 * G_PI);
            cairo_fill(cr);
        }
        return;
    }
    cairo_set_line_width(cr, entry == 1 ? 1.8 : 1.0);
    cairo_move_to(cr, box->x, y);
    cairo_line_to(cr, box->x + box->width, y);
    cairo_stroke(cr);
}

static void polyline(cairo_t *cr, const FmPlotAxis *ax, const FmPlotAxis *ay, const double *v,
                     int n, double bin_width_ns, double clamp)
{
    gboolean pen = FALSE;
    for (int b = 0; b < n; b++) {
        double y = clamp > 0 ? CLAMP(v[b], -clamp, clamp) : v[b];
        if (!isfinite(v[b]) || (ay->log && !(y > 0))) {
            pen = FALSE;
            continue;
        }
        double px = fm_plot_axis_to_px(ax, (b + 0.5) * bin_width_ns);
        double py = fm_plot_axis_to_px(ay, y);
        fm_cairo_pen_to(cr, &pen, px, py);
    }
    cairo_stroke(cr);
}

static gboolean fm_decay_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmDecayView *self = FM_DECAY_VIEW(widget);
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
    cairo_paint(cr);
    fm_plot_layout_clear(&self->layout);
    memset(&self->layout, 0, sizeof self->layout);
    if (self->counts == NULL || self->n_bins < 2) {
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        fm_cairo_text(widget, cr, W / 2, H / 2, _("Decay: move the pointer over the image"), 0.5,
                      0.5);
        return FALSE;
    }
    const double t_max = self->n_bins * self->bin_width_ns;
    double peak = 1;
    for (int b = 0; b < self->n_bins; b++) {
        peak = MAX(peak, self->counts[b]);
        if (self->model != NULL && isfinite(self->model[b]))
            peak = MAX(peak, self->model[b]);
    }
    g_autofree char *x_label = self->window_start >= 0
                                   ? g_strdup_printf(_("time (ns) · fit window %.2f–%.2f ns"),
                                                     self->window_start * self->bin_width_ns,
                                                     self->window_end * self->bin_width_ns)
                                   : g_strdup(_("time (ns)"));
    const gboolean have_res = self->residuals != NULL;
    const double range = have_res ? residual_range(self) : 1;
    const char *legend[] = {_("photons"), _("fit"), _("weighted residuals")};
    /* counts from half a photon, so that single photons show on the log axis */
    FmPlotSpec spec = {
        .width = W,
        .height = H,
        .x = {0, t_max, FALSE, x_label},
        .y = {0.5, peak * 1.5, TRUE, _("photons")},
        .strip = {-range, range, FALSE, _("resid.")},
        .strip_fraction = have_res ? 0.3 : 0,
        .title = self->title,
        .stats = self->info,
        .legend = legend,
        .n_legend = self->model == NULL ? 0
                    : have_res          ? 3
                                        : 2,
    };
    guint8 grid[OCC_COLS * OCC_ROWS] = {0};
    for (int b = 0; b < self->n_bins; b++) {
        double t = (b + 0.5) * self->bin_width_ns;
        fm_plot_occupancy_mark(grid, OCC_COLS, OCC_ROWS, &spec.x, &spec.y, t, self->counts[b], t,
                               self->counts[b]);
        if (self->model != NULL && b + 1 < self->n_bins)
            fm_plot_occupancy_mark(grid, OCC_COLS, OCC_ROWS, &spec.x, &spec.y, t, self->model[b],
                                   t + self->bin_width_ns, self->model[b + 1]);
    }
    spec.occupancy = grid;
    spec.occupancy_cols = OCC_COLS;
    spec.occupancy_rows = OCC_ROWS;
    FmPlotLayout *l = &self->layout;
    PangoLayout *pango = fm_cairo_plot_compute(widget, cr, &spec, l);
    if (!laid_out(self)) {
        g_object_unref(pango);
        return FALSE;
    }
    FmPlotColours colours;
    fm_plot_colours_dark(&colours);
    fm_cairo_plot_background(cr, l, &colours);

    cairo_save(cr);
    cairo_rectangle(cr, l->data.x, l->data.y, l->data.width, l->data.height);
    cairo_clip(cr);
    cairo_set_source_rgba(cr, photon_rgb[0], photon_rgb[1], photon_rgb[2], 0.9);
    for (int b = 0; b < self->n_bins; b++) {
        if (!(self->counts[b] > 0))
            continue;
        cairo_arc(cr, fm_plot_axis_to_px(&l->x, (b + 0.5) * self->bin_width_ns),
                  fm_plot_axis_to_px(&l->y, self->counts[b]), 1.6, 0, 2 * G_PI);
        cairo_fill(cr);
    }
    if (self->model != NULL) {
        cairo_set_source_rgb(cr, fit_rgb[0], fit_rgb[1], fit_rgb[2]);
        cairo_set_line_width(cr, 1.8);
        polyline(cr, &l->x, &l->y, self->model, self->n_bins, self->bin_width_ns, 0);
    }
    cairo_restore(cr);
    if (have_res && l->strip.height > 0) {
        cairo_save(cr);
        cairo_rectangle(cr, l->strip.x, l->strip.y, l->strip.width, l->strip.height);
        cairo_clip(cr);
        double zero = round(fm_plot_axis_to_px(&l->strip_y, 0)) + 0.5;
        cairo_set_source_rgba(cr, 1, 1, 1, 0.3);
        cairo_set_line_width(cr, 1);
        cairo_move_to(cr, l->strip.x, zero);
        cairo_line_to(cr, l->strip.x + l->strip.width, zero);
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, residual_rgb[0], residual_rgb[1], residual_rgb[2]);
        polyline(cr, &l->x, &l->strip_y, self->residuals, self->n_bins, self->bin_width_ns, range);
        cairo_restore(cr);
    }
    draw_window(self, cr);
    fm_cairo_plot_axes(cr, pango, l, &colours);
    GdkRGBA fill = {0.09, 0.09, 0.1, 0.85};
    fm_cairo_plot_legend(cr, pango, l, &colours, &fill, swatch, NULL);
    g_object_unref(pango);
    return FALSE;
}

static void fm_decay_view_finalize(GObject *object)
{
    FmDecayView *self = FM_DECAY_VIEW(object);
    g_free(self->counts);
    g_free(self->model);
    g_free(self->residuals);
    g_free(self->title);
    g_free(self->info);
    fm_plot_layout_clear(&self->layout);
    G_OBJECT_CLASS(fm_decay_view_parent_class)->finalize(object);
}

static void fm_decay_view_class_init(FmDecayViewClass *klass)
{
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->finalize = fm_decay_view_finalize;
    widget_class->draw = fm_decay_view_draw;
    widget_class->button_press_event = fm_decay_view_press;
    widget_class->motion_notify_event = fm_decay_view_motion;
    widget_class->button_release_event = fm_decay_view_release;
    signals[SIGNAL_WINDOW_CHANGED] =
        g_signal_new("window-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 3, G_TYPE_BOOLEAN, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
}

static void fm_decay_view_init(FmDecayView *self)
{
    gtk_widget_set_size_request(GTK_WIDGET(self), 240, 90);
    self->window_start = self->window_end = -1;
    gtk_widget_add_events(GTK_WIDGET(self), GDK_BUTTON_PRESS_MASK | GDK_BUTTON_RELEASE_MASK |
                                                GDK_POINTER_MOTION_MASK);
}

void fm_decay_view_set_window(FmDecayView *self, int start_bin, int end_bin)
{
    if (self->dragging)
        return; /* the user's hand wins over a recomputation while dragging */
    self->window_start = start_bin;
    self->window_end = start_bin >= 0 ? MAX(end_bin, start_bin + 1) : -1;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

gboolean fm_decay_view_get_window(FmDecayView *self, int *start_bin, int *end_bin)
{
    *start_bin = self->window_start;
    *end_bin = self->window_end;
    return self->window_start >= 0;
}

void fm_decay_view_drag_window(FmDecayView *self, gboolean start_edge, int to_bin)
{
    if (self->window_start < 0)
        return;
    if (start_edge)
        self->window_start = CLAMP(to_bin, 0, self->window_end - FM_DECAY_VIEW_MIN_BINS);
    else
        self->window_end =
            CLAMP(to_bin, self->window_start + FM_DECAY_VIEW_MIN_BINS, MAX(self->n_bins, 1));
    gtk_widget_queue_draw(GTK_WIDGET(self));
    g_signal_emit(self, signals[SIGNAL_WINDOW_CHANGED], 0, start_edge,
                  self->window_start * self->bin_width_ns, self->window_end * self->bin_width_ns);
}

GtkWidget *fm_decay_view_new(void)
{
    return g_object_new(FM_TYPE_DECAY_VIEW, NULL);
}

void fm_decay_view_clear(FmDecayView *self)
{
    g_clear_pointer(&self->counts, g_free);
    g_clear_pointer(&self->model, g_free);
    g_clear_pointer(&self->residuals, g_free);
    g_clear_pointer(&self->title, g_free);
    g_clear_pointer(&self->info, g_free);
    self->n_bins = 0;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void fm_decay_view_set(FmDecayView *self, const double *counts, const double *model,
                       const double *residuals, int n_bins, double bin_width_ns, int n_params,
                       const char *title, const char *info)
{
    fm_decay_view_clear(self);
    gsize size = sizeof(double) * (gsize)n_bins;
    self->counts = g_memdup2(counts, size);
    self->model = model != NULL ? g_memdup2(model, size) : NULL;
    self->residuals = residuals != NULL ? g_memdup2(residuals, size) : NULL;
    self->n_bins = n_bins;
    self->bin_width_ns = bin_width_ns > 0 ? bin_width_ns : 1.0;
    self->n_params = n_params;
    self->title = g_strdup(title);
    self->info = g_strdup(info);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

int fm_decay_view_get_n_bins(FmDecayView *self)
{
    return self->n_bins;
}

gboolean fm_decay_view_get_fit_stats(FmDecayView *self, double *mean, double *chi2_per_dof,
                                     int *dof)
{
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int b = 0; self->residuals != NULL && b < self->n_bins; b++)
        if (isfinite(self->residuals[b])) {
            sum += self->residuals[b];
            sum2 += self->residuals[b] * self->residuals[b];
            n++;
        }
    int free_bins = n - self->n_params;
    if (mean != NULL)
        *mean = n > 0 ? sum / n : NAN;
    if (chi2_per_dof != NULL)
        *chi2_per_dof = free_bins > 0 ? sum2 / free_bins : NAN;
    if (dof != NULL)
        *dof = MAX(free_bins, 0);
    return free_bins > 0;
}

double fm_decay_view_get_chi2(FmDecayView *self)
{
    double chi2 = NAN;
    fm_decay_view_get_fit_stats(self, NULL, &chi2, NULL);
    return chi2;
}

const FmPlotLayout *fm_decay_view_get_layout(FmDecayView *self)
{
    return &self->layout;
}
