/* FmDecayView: measured counts as dots on a log axis, the fitted model as a line, and the
 * weighted residuals in a strip below (they should scatter around 0 within ±2 for a good fit). */
#include "decay-view.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/gui/cairo-util.h"

struct _FmDecayView {
    GtkDrawingArea parent_instance;
    double *counts, *model, *residuals;
    int n_bins;
    double bin_width_ns;
    char *title, *info;
    int window_start, window_end; /* fit window in bins, [start, end); start < 0: none */
    int dragging;                 /* 0 none, 1 the start edge, 2 the end edge */
    double plot_left, plot_width, plot_top, plot_bottom; /* of the last draw, for the mouse */
};

G_DEFINE_TYPE(FmDecayView, fm_decay_view, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_WINDOW_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Pixels either side of an edge that grab it. */
#define GRAB_PX 6

static double edge_x(FmDecayView *self, int bin_edge)
{
    return self->plot_left + (double)bin_edge / MAX(self->n_bins, 1) * self->plot_width;
}

/* The fit window: the bins outside it dimmed, its edges as lines with a grip each. */
static void draw_window(FmDecayView *self, GtkWidget *widget, cairo_t *cr)
{
    if (self->window_start < 0 || self->n_bins < 2 || self->plot_width <= 0)
        return;
    double x0 = edge_x(self, self->window_start), x1 = edge_x(self, self->window_end);
    double top = self->plot_top, bottom = self->plot_bottom;
    cairo_set_source_rgba(cr, 0, 0, 0, 0.45);
    cairo_rectangle(cr, self->plot_left, top, x0 - self->plot_left, bottom - top);
    cairo_rectangle(cr, x1, top, self->plot_left + self->plot_width - x1, bottom - top);
    cairo_fill(cr);
    for (int e = 0; e < 2; e++) {
        double x = e == 0 ? x0 : x1;
        gboolean hot = self->dragging == e + 1;
        cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, hot ? 1.0 : 0.75);
        cairo_set_line_width(cr, hot ? 2.0 : 1.2);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bottom);
        cairo_stroke(cr);
        cairo_rectangle(cr, x - 3, top + (bottom - top) / 2 - 8, 6, 16);
        cairo_fill(cr);
    }
    g_autofree char *text =
        g_strdup_printf(_("fit %.2f–%.2f ns"), self->window_start * self->bin_width_ns,
                        self->window_end * self->bin_width_ns);
    cairo_set_source_rgba(cr, 1.0, 0.85, 0.3, 0.9);
    fm_cairo_text(widget, cr, x0 + 4, top + 2, text, 0, 0);
}

static int edge_near(FmDecayView *self, double x, double y)
{
    if (self->window_start < 0 || y < self->plot_top || y > self->plot_bottom)
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
    int e = (int)floor((event->x - self->plot_left) / self->plot_width * self->n_bins + 0.5);
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

static gboolean fm_decay_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmDecayView *self = FM_DECAY_VIEW(widget);
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
    cairo_paint(cr);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    fm_cairo_text(widget, cr, 8, 4,
                  self->title != NULL ? self->title : _("Decay: hover over the map"), 0, 0);
    if (self->info != NULL)
        fm_cairo_text(widget, cr, W - 8, 4, self->info, 1, 0);
    if (self->counts == NULL || self->n_bins < 2)
        return FALSE;
    double ml = 44, mr = 10, mt = 22, mb = 20, gap = 6;
    gboolean have_res = self->residuals != NULL;
    double plot_h = H - mt - mb, res_h = have_res ? MAX(plot_h * 0.28, 30) : 0;
    double top_h = plot_h - res_h - (have_res ? gap : 0), pw = W - ml - mr;
    if (pw < 20 || top_h < 20)
        return FALSE;
    self->plot_left = ml;
    self->plot_width = pw;
    self->plot_top = mt;
    self->plot_bottom = mt + plot_h;
    double peak = 1;
    for (int b = 0; b < self->n_bins; b++)
        peak = MAX(peak, self->counts[b]);
    /* Log axis from 0.5 counts (so single photons show) to a decade boundary above the peak. */
    double lo = log10(0.5), hi = ceil(log10(peak * 1.2));
    double t_max = self->n_bins * self->bin_width_ns;
#define X(b) (ml + ((b) + 0.5) / self->n_bins * pw)
#define Y(v) (mt + top_h - (log10(MAX(v, 0.5)) - lo) / (hi - lo) * top_h)
    cairo_set_source_rgb(cr, 0.07, 0.07, 0.08);
    cairo_rectangle(cr, ml, mt, pw, top_h);
    cairo_fill(cr);
    cairo_set_line_width(cr, 1);
    for (int d = 0; d <= (int)hi; d++) {
        double y = mt + top_h - (d - lo) / (hi - lo) * top_h;
        cairo_set_source_rgba(cr, 1, 1, 1, 0.08);
        cairo_move_to(cr, ml, y);
        cairo_line_to(cr, ml + pw, y);
        cairo_stroke(cr);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        g_autofree char *t = g_strdup_printf("%.0f", pow(10, d));
        fm_cairo_text(widget, cr, ml - 4, y, t, 1, 0.5);
    }
    /* Time ticks every 1, 2 or 5 ns so there are about six. */
    double step = t_max > 30 ? 5 : t_max > 12 ? 2 : 1;
    double base_y = mt + plot_h;
    for (double t = 0; t <= t_max + 1e-9; t += step) {
        double x = ml + t / t_max * pw;
        cairo_set_source_rgba(cr, 1, 1, 1, 0.08);
        cairo_move_to(cr, x, mt);
        cairo_line_to(cr, x, base_y);
        cairo_stroke(cr);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        g_autofree char *s = g_strdup_printf("%g", t);
        fm_cairo_text(widget, cr, x, base_y + 3, s, 0.5, 0);
    }
    fm_cairo_text(widget, cr, ml + pw, base_y + 3, _("ns"), 1, 0);
    cairo_set_source_rgba(cr, 0.55, 0.78, 1.0, 0.9);
    for (int b = 0; b < self->n_bins; b++) {
        if (self->counts[b] <= 0)
            continue;
        cairo_arc(cr, X(b), Y(self->counts[b]), 1.6, 0, 2 * G_PI);
        cairo_fill(cr);
    }
    if (self->model != NULL) {
        cairo_set_source_rgb(cr, 1.0, 0.55, 0.15);
        cairo_set_line_width(cr, 1.8);
        gboolean pen = FALSE;
        for (int b = 0; b < self->n_bins; b++) {
            double m = self->model[b];
            if (!isfinite(m) || m <= 0) {
                pen = FALSE;
                continue;
            }
            if (pen)
                cairo_line_to(cr, X(b), Y(m));
            else
                cairo_move_to(cr, X(b), Y(m));
            pen = TRUE;
        }
        cairo_stroke(cr);
    }
    if (have_res) {
        double ry = mt + top_h + gap, range = 4;
        for (int b = 0; b < self->n_bins; b++)
            if (isfinite(self->residuals[b]))
                range = MAX(range, fabs(self->residuals[b]));
        range = MIN(range, 10);
        cairo_set_source_rgb(cr, 0.07, 0.07, 0.08);
        cairo_rectangle(cr, ml, ry, pw, res_h);
        cairo_fill(cr);
#define RY(r) (ry + res_h / 2 - CLAMP(r, -range, range) / range * (res_h / 2))
        cairo_set_source_rgba(cr, 1, 1, 1, 0.3);
        cairo_move_to(cr, ml, RY(0));
        cairo_line_to(cr, ml + pw, RY(0));
        cairo_stroke(cr);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        fm_cairo_text(widget, cr, ml - 4, RY(0), "0", 1, 0.5);
        g_autofree char *r_text = g_strdup_printf("±%.0f", range);
        fm_cairo_text(widget, cr, ml - 4, ry, r_text, 1, 0);
        cairo_set_source_rgb(cr, 0.4, 0.9, 0.5);
        cairo_set_line_width(cr, 1);
        gboolean pen = FALSE;
        for (int b = 0; b < self->n_bins; b++) {
            double r = self->residuals[b];
            if (!isfinite(r)) {
                pen = FALSE;
                continue;
            }
            if (pen)
                cairo_line_to(cr, X(b), RY(r));
            else
                cairo_move_to(cr, X(b), RY(r));
            pen = TRUE;
        }
        cairo_stroke(cr);
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        fm_cairo_text(widget, cr, ml + 4, ry + 1, _("weighted residuals"), 0, 0);
#undef RY
    }
    draw_window(self, widget, cr);
#undef X
#undef Y
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
                       const double *residuals, int n_bins, double bin_width_ns, const char *title,
                       const char *info)
{
    fm_decay_view_clear(self);
    gsize size = sizeof(double) * (gsize)n_bins;
    self->counts = g_memdup2(counts, size);
    self->model = model != NULL ? g_memdup2(model, size) : NULL;
    self->residuals = residuals != NULL ? g_memdup2(residuals, size) : NULL;
    self->n_bins = n_bins;
    self->bin_width_ns = bin_width_ns > 0 ? bin_width_ns : 1.0;
    self->title = g_strdup(title);
    self->info = g_strdup(info);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

int fm_decay_view_get_n_bins(FmDecayView *self)
{
    return self->n_bins;
}

double fm_decay_view_get_chi2(FmDecayView *self)
{
    if (self->residuals == NULL)
        return NAN;
    double sum = 0;
    int n = 0;
    for (int b = 0; b < self->n_bins; b++)
        if (isfinite(self->residuals[b])) {
            sum += self->residuals[b] * self->residuals[b];
            n++;
        }
    return n > 0 ? sum / n : NAN;
}
