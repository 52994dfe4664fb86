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
};

G_DEFINE_TYPE(FmDecayView, fm_decay_view, GTK_TYPE_DRAWING_AREA)

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
    G_OBJECT_CLASS(klass)->finalize = fm_decay_view_finalize;
    GTK_WIDGET_CLASS(klass)->draw = fm_decay_view_draw;
}

static void fm_decay_view_init(FmDecayView *self)
{
    gtk_widget_set_size_request(GTK_WIDGET(self), 240, 90);
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
