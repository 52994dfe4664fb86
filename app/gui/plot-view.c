/* FmPlotView: a small Cairo line plot (ROI time course, curves) with axes and labels. */
#include "app/gui/plot-view.h"

#include <glib/gi18n.h>
#include <math.h>

#define TICK_LEN 4.0
#define PAD 6.0

struct _FmPlotView {
    GtkDrawingArea parent_instance;
    char *x_label, *y_label;
    GArray *x, *y;    /* of double, same length */
    double cursor_x;  /* NaN: hidden */
    gboolean log_y;   /* y drawn as log10, ticks at decades (fm_plot_view_set_log_y) */
    GPtrArray *extra; /* of PlotSeries*: fm_plot_view_add_series */
};

typedef struct {
    char *label;
    GArray *x, *y;
    double rgb[3];
    FmPlotStyle style;
} PlotSeries;

static void plot_series_free(gpointer data)
{
    PlotSeries *s = data;
    g_free(s->label);
    g_array_unref(s->x);
    g_array_unref(s->y);
    g_free(s);
}

G_DEFINE_FINAL_TYPE(FmPlotView, fm_plot_view, GTK_TYPE_DRAWING_AREA)

typedef struct {
    double lo, hi; /* axis range */
    double step;   /* tick spacing */
    double first;  /* first tick >= lo */
} Axis;

/* Tick spacing of 1, 2 or 5 times a power of ten giving about `target` intervals. */
static double nice_step(double span, int target)
{
    double raw = span / target;
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    double nice = f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0;
    return nice * mag;
}

static Axis make_axis(double lo, double hi, int target, gboolean pad)
{
    Axis a;
    if (!isfinite(lo) || !isfinite(hi)) {
        lo = 0.0;
        hi = 1.0;
    } else if (hi <= lo) { /* one value: centre it in a window of its own magnitude */
        double half = fabs(lo) > 0 ? 0.1 * fabs(lo) : 1.0;
        lo -= half;
        hi += half;
    } else if (pad) {
        double margin = 0.05 * (hi - lo);
        lo -= margin;
        hi += margin;
    }
    a.lo = lo;
    a.hi = hi;
    a.step = nice_step(hi - lo, target);
    a.first = ceil(lo / a.step - 1e-9) * a.step;
    return a;
}

static void format_tick(double v, double step, char *buf, gsize size)
{
    if (fabs(v) < step * 1e-6)
        v = 0.0; /* avoid "-0" and 1e-17 from accumulated rounding */
    g_snprintf(buf, size, "%.4g", v);
}

/* The plotted y: log10 on a log axis, where values <= 0 have no place (NaN, a gap). */
static double plot_y(const FmPlotView *self, double y)
{
    return self->log_y ? (y > 0 ? log10(y) : NAN) : y;
}

static void show_text(cairo_t *cr, PangoLayout *layout, const char *text, double x, double y,
                      double align_x, double align_y)
{
    int w, h;
    pango_layout_set_text(layout, text, -1);
    pango_layout_get_pixel_size(layout, &w, &h);
    cairo_move_to(cr, x - align_x * w, y - align_y * h);
    pango_cairo_show_layout(cr, layout);
}

static void extent_of(FmPlotView *self, GArray *xs, GArray *ys, double *x0, double *x1, double *y0,
                      double *y1)
{
    for (guint i = 0; i < xs->len; i++) {
        double x = g_array_index(xs, double, i);
        double y = plot_y(self, g_array_index(ys, double, i));
        if (!isfinite(x))
            continue;
        *x0 = MIN(*x0, x);
        *x1 = MAX(*x1, x);
        if (isfinite(y)) {
            *y0 = MIN(*y0, y);
            *y1 = MAX(*y1, y);
        }
    }
}

static void data_extent(FmPlotView *self, double *x0, double *x1, double *y0, double *y1)
{
    *x0 = *y0 = INFINITY;
    *x1 = *y1 = -INFINITY;
    extent_of(self, self->x, self->y, x0, x1, y0, y1);
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        extent_of(self, s->x, s->y, x0, x1, y0, y1);
    }
}

/* Strokes one series in the current source colour; a NaN point ends a segment (a gap). */
static void stroke_series(cairo_t *cr, FmPlotView *self, GArray *xs, GArray *ys, FmPlotStyle style,
                          double left, double bottom, double ax_lo, double ay_lo, double sx,
                          double sy)
{
    gboolean pen_down = FALSE;
    for (guint i = 0; i < xs->len; i++) {
        double x = g_array_index(xs, double, i);
        double y = plot_y(self, g_array_index(ys, double, i));
        double px = left + (x - ax_lo) * sx, py = bottom - (y - ay_lo) * sy;
        if (!isfinite(x) || !isfinite(y)) {
            pen_down = FALSE;
            continue;
        }
        gboolean isolated =
            style == FM_PLOT_STYLE_MARKERS ||
            (!pen_down &&
             (i + 1 >= xs->len || !isfinite(plot_y(self, g_array_index(ys, double, i + 1)))));
        if (isolated) { /* a lone point would be an invisible zero-length line */
            cairo_new_sub_path(cr);
            cairo_arc(cr, px, py, style == FM_PLOT_STYLE_MARKERS ? 2.25 : 2.0, 0, 2 * G_PI);
            cairo_fill(cr);
            continue;
        }
        if (pen_down)
            cairo_line_to(cr, px, py);
        else
            cairo_move_to(cr, px, py);
        pen_down = TRUE;
    }
    cairo_stroke(cr);
}

/* Legend of the labelled extra series in the top-right corner of the plot area. */
static void draw_legend(cairo_t *cr, FmPlotView *self, PangoLayout *layout, double right,
                        double top, const GdkRGBA *fg)
{
    int w, h, max_w = 0, rows = 0;
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        if (!s->label)
            continue;
        pango_layout_set_text(layout, s->label, -1);
        pango_layout_get_pixel_size(layout, &w, &h);
        max_w = MAX(max_w, w);
        rows++;
    }
    if (rows == 0)
        return;
    pango_layout_get_pixel_size(layout, &w, &h);
    double swatch = 18, box_w = max_w + swatch + 14, box_h = rows * h + 6;
    double x0 = right - box_w - 6, y0 = top + 6;
    cairo_set_source_rgba(cr, 1 - fg->red, 1 - fg->green, 1 - fg->blue, 0.8);
    cairo_rectangle(cr, x0, y0, box_w, box_h);
    cairo_fill_preserve(cr);
    cairo_set_source_rgba(cr, fg->red, fg->green, fg->blue, 0.25);
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
    int row = 0;
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        if (!s->label)
            continue;
        double y = y0 + 3 + (row + 0.5) * h;
        cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
        if (s->style == FM_PLOT_STYLE_MARKERS) {
            cairo_arc(cr, x0 + 4 + 0.5 * swatch, y, 2.5, 0, 2 * G_PI);
            cairo_fill(cr);
        } else {
            static const double dash[] = {5.0, 3.0};
            cairo_set_dash(cr, dash, s->style == FM_PLOT_STYLE_DASHED ? 2 : 0, 0);
            cairo_set_line_width(cr, 2.0);
            cairo_move_to(cr, x0 + 4, y);
            cairo_line_to(cr, x0 + 4 + swatch, y);
            cairo_stroke(cr);
            cairo_set_dash(cr, NULL, 0, 0);
        }
        gdk_cairo_set_source_rgba(cr, fg);
        show_text(cr, layout, s->label, x0 + swatch + 10, y, 0.0, 0.5);
        row++;
    }
}

static gboolean fm_plot_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmPlotView *self = FM_PLOT_VIEW(widget);
    int width = gtk_widget_get_allocated_width(widget);
    int height = gtk_widget_get_allocated_height(widget);
    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    gtk_render_background(style, cr, 0, 0, width, height);
    GdkRGBA fg;
    gtk_style_context_get_color(style, gtk_style_context_get_state(style), &fg);

    double dx0, dx1, dy0, dy1;
    data_extent(self, &dx0, &dx1, &dy0, &dy1);
    Axis ax = make_axis(dx0, dx1, 5, FALSE);
    Axis ay = make_axis(dy0, dy1, 4, TRUE);
    if (self->log_y && ay.step < 1.0) { /* decades only: 1e-3, 1e-2, ... */
        ay.step = 1.0;
        ay.first = ceil(ay.lo);
    }

    PangoLayout *layout = gtk_widget_create_pango_layout(widget, NULL);
    int text_h, w, h;
    pango_layout_set_text(layout, "0", -1);
    pango_layout_get_pixel_size(layout, &w, &text_h);

    /* Left margin fits the widest y tick label (and the rotated y label). */
    int label_w = 0;
    char buf[32];
    for (double t = ay.first; t <= ay.hi + 1e-9 * ay.step; t += ay.step) {
        if (self->log_y)
            g_snprintf(buf, sizeof buf, "1e%.0f", t);
        else
            format_tick(t, ay.step, buf, sizeof buf);
        pango_layout_set_text(layout, buf, -1);
        pango_layout_get_pixel_size(layout, &w, &h);
        label_w = MAX(label_w, w);
    }
    gboolean has_ylabel = self->y_label && *self->y_label;
    gboolean has_xlabel = self->x_label && *self->x_label;
    double left = PAD + (has_ylabel ? text_h + PAD : 0) + label_w + TICK_LEN + 2;
    double right = width - PAD - 0.5 * label_w; /* room for the last x tick label */
    double top = PAD + 0.5 * text_h;
    double bottom = height - PAD - text_h - TICK_LEN - 2 - (has_xlabel ? text_h + 2 : 0);
    if (right - left < 10 || bottom - top < 10) {
        g_object_unref(layout);
        return GDK_EVENT_STOP;
    }
    double sx = (right - left) / (ax.hi - ax.lo), sy = (bottom - top) / (ay.hi - ay.lo);
#define PX(v) (left + ((v)-ax.lo) * sx)
#define PY(v) (bottom - ((v)-ay.lo) * sy)

    /* Grid and ticks. */
    cairo_set_line_width(cr, 1.0);
    for (double t = ax.first; t <= ax.hi + 1e-9 * ax.step; t += ax.step) {
        double x = round(PX(t)) + 0.5;
        cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.12);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bottom);
        cairo_stroke(cr);
        gdk_cairo_set_source_rgba(cr, &fg);
        cairo_move_to(cr, x, bottom);
        cairo_line_to(cr, x, bottom + TICK_LEN);
        cairo_stroke(cr);
        format_tick(t, ax.step, buf, sizeof buf);
        show_text(cr, layout, buf, x, bottom + TICK_LEN + 1, 0.5, 0.0);
    }
    for (double t = ay.first; t <= ay.hi + 1e-9 * ay.step; t += ay.step) {
        double y = round(PY(t)) + 0.5;
        cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.12);
        cairo_move_to(cr, left, y);
        cairo_line_to(cr, right, y);
        cairo_stroke(cr);
        gdk_cairo_set_source_rgba(cr, &fg);
        cairo_move_to(cr, left - TICK_LEN, y);
        cairo_line_to(cr, left, y);
        cairo_stroke(cr);
        if (self->log_y)
            g_snprintf(buf, sizeof buf, "1e%.0f", t);
        else
            format_tick(t, ay.step, buf, sizeof buf);
        show_text(cr, layout, buf, left - TICK_LEN - 2, y, 1.0, 0.5);
    }
    gdk_cairo_set_source_rgba(cr, &fg);
    cairo_rectangle(cr, round(left) + 0.5, round(top) + 0.5, round(right - left),
                    round(bottom - top));
    cairo_stroke(cr);

    if (has_xlabel)
        show_text(cr, layout, self->x_label, 0.5 * (left + right), height - PAD, 0.5, 1.0);
    if (has_ylabel) {
        cairo_save(cr);
        cairo_translate(cr, PAD, 0.5 * (top + bottom));
        cairo_rotate(cr, -G_PI / 2);
        show_text(cr, layout, self->y_label, 0, 0, 0.5, 0.0);
        cairo_restore(cr);
    }

    /* Series: a NaN (or infinite) point ends a segment, so gaps show as gaps. */
    cairo_save(cr);
    cairo_rectangle(cr, left, top, right - left, bottom - top);
    cairo_clip(cr);
    cairo_set_source_rgb(cr, 0.12, 0.47, 0.71);
    cairo_set_line_width(cr, 1.75);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    gboolean pen_down = FALSE;
    for (guint i = 0; i < self->x->len; i++) {
        double x = g_array_index(self->x, double, i);
        double y = plot_y(self, g_array_index(self->y, double, i));
        if (!isfinite(x) || !isfinite(y)) {
            pen_down = FALSE;
            continue;
        }
        gboolean isolated = !pen_down && (i + 1 >= self->x->len ||
                                          !isfinite(plot_y(self, g_array_index(self->y, double,
                                                                               i + 1))));
        if (isolated) { /* a lone point would be an invisible zero-length line */
            cairo_new_sub_path(cr);
            cairo_arc(cr, PX(x), PY(y), 2.0, 0, 2 * G_PI);
            cairo_fill(cr);
            continue;
        }
        if (pen_down)
            cairo_line_to(cr, PX(x), PY(y));
        else
            cairo_move_to(cr, PX(x), PY(y));
        pen_down = TRUE;
    }
    cairo_stroke(cr);
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        static const double dash[] = {6.0, 3.0};
        cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
        cairo_set_dash(cr, dash, s->style == FM_PLOT_STYLE_DASHED ? 2 : 0, 0);
        stroke_series(cr, self, s->x, s->y, s->style, left, bottom, ax.lo, ay.lo, sx, sy);
        cairo_set_dash(cr, NULL, 0, 0);
    }

    if (isfinite(self->cursor_x) && self->cursor_x >= ax.lo && self->cursor_x <= ax.hi) {
        double x = round(PX(self->cursor_x)) + 0.5;
        cairo_set_source_rgb(cr, 0.85, 0.2, 0.2);
        cairo_set_line_width(cr, 1.0);
        cairo_move_to(cr, x, top);
        cairo_line_to(cr, x, bottom);
        cairo_stroke(cr);
    }
    cairo_restore(cr);
#undef PX
#undef PY

    draw_legend(cr, self, layout, right, top, &fg);
    if (self->x->len == 0 && self->extra->len == 0) {
        gtk_style_context_get_color(style, GTK_STATE_FLAG_INSENSITIVE, &fg);
        gdk_cairo_set_source_rgba(cr, &fg);
        show_text(cr, layout, _("No data"), 0.5 * (left + right), 0.5 * (top + bottom), 0.5, 0.5);
    }
    g_object_unref(layout);
    return GDK_EVENT_STOP;
}

static void fm_plot_view_finalize(GObject *object)
{
    FmPlotView *self = FM_PLOT_VIEW(object);
    g_free(self->x_label);
    g_free(self->y_label);
    g_array_unref(self->x);
    g_array_unref(self->y);
    g_ptr_array_unref(self->extra);
    G_OBJECT_CLASS(fm_plot_view_parent_class)->finalize(object);
}

static void fm_plot_view_class_init(FmPlotViewClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_plot_view_finalize;
    GTK_WIDGET_CLASS(klass)->draw = fm_plot_view_draw;
    gtk_widget_class_set_css_name(GTK_WIDGET_CLASS(klass), "fm-plot-view");
}

static void fm_plot_view_init(FmPlotView *self)
{
    self->x = g_array_new(FALSE, FALSE, sizeof(double));
    self->y = g_array_new(FALSE, FALSE, sizeof(double));
    self->cursor_x = NAN;
    self->extra = g_ptr_array_new_with_free_func(plot_series_free);
    gtk_widget_set_size_request(GTK_WIDGET(self), 200, 120);
}

GtkWidget *fm_plot_view_new(void)
{
    return g_object_new(FM_TYPE_PLOT_VIEW, NULL);
}

void fm_plot_view_set_labels(FmPlotView *view, const char *x_label, const char *y_label)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    g_free(view->x_label);
    view->x_label = g_strdup(x_label);
    g_free(view->y_label);
    view->y_label = g_strdup(y_label);
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_set_series(FmPlotView *view, const double *x, const double *y, int n)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    g_return_if_fail(n == 0 || (x != NULL && y != NULL));
    g_array_set_size(view->x, 0);
    g_array_set_size(view->y, 0);
    if (n > 0) {
        g_array_append_vals(view->x, x, n);
        g_array_append_vals(view->y, y, n);
    }
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_append(FmPlotView *view, double x, double y)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    g_array_append_val(view->x, x);
    g_array_append_val(view->y, y);
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_clear(FmPlotView *view)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    g_array_set_size(view->x, 0);
    g_array_set_size(view->y, 0);
    g_ptr_array_set_size(view->extra, 0);
    view->cursor_x = NAN;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_set_cursor(FmPlotView *view, double x)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    view->cursor_x = x;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_set_log_y(FmPlotView *view, gboolean log_y)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    view->log_y = log_y;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_add_series(FmPlotView *view, const char *label, const double *x, const double *y,
                             int n, const double rgb[3], FmPlotStyle style)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    g_return_if_fail(n == 0 || (x != NULL && y != NULL));
    PlotSeries *s = g_new0(PlotSeries, 1);
    s->label = g_strdup(label);
    s->x = g_array_new(FALSE, FALSE, sizeof(double));
    s->y = g_array_new(FALSE, FALSE, sizeof(double));
    if (n > 0) {
        g_array_append_vals(s->x, x, n);
        g_array_append_vals(s->y, y, n);
    }
    for (int i = 0; i < 3; i++)
        s->rgb[i] = rgb[i];
    s->style = style;
    g_ptr_array_add(view->extra, s);
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_plot_view_clear_series(FmPlotView *view)
{
    g_return_if_fail(FM_IS_PLOT_VIEW(view));
    g_ptr_array_set_size(view->extra, 0);
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

int fm_plot_view_get_n_series(FmPlotView *view)
{
    g_return_val_if_fail(FM_IS_PLOT_VIEW(view), 0);
    return (int)view->extra->len;
}
