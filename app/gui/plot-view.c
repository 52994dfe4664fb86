/* FmPlotView: a small Cairo line plot (ROI time course, curves) with axes, labels and a legend
 * laid out by plot-layout.c. */
#include "app/gui/plot-view.h"

#include <glib/gi18n.h>
#include <math.h>

#include "app/gui/cairo-util.h"
#include "app/gui/plot-layout.h"

struct _FmPlotView {
    GtkDrawingArea parent_instance;
    char *x_label, *y_label;
    char *placeholder;   /* what an empty plot says (what to do to fill it) */
    GArray *x, *y;       /* of double, same length */
    double cursor_x;     /* NaN: hidden */
    gboolean log_y;      /* y drawn as log10, ticks at decades (fm_plot_view_set_log_y) */
    GPtrArray *extra;    /* of PlotSeries*: fm_plot_view_add_series */
    FmPlotLayout layout; /* of the last draw */
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

#define OCC_COLS 16
#define OCC_ROWS 10

/* A value the y axis can show: any finite one, and only positive ones on a log axis. */
static gboolean y_shown(const FmPlotView *self, double y)
{
    return isfinite(y) && (!self->log_y || y > 0);
}

static void extent_of(FmPlotView *self, GArray *xs, GArray *ys, double *x0, double *x1, double *y0,
                      double *y1)
{
    for (guint i = 0; i < xs->len; i++) {
        double x = g_array_index(xs, double, i), y = g_array_index(ys, double, i);
        if (!isfinite(x))
            continue;
        *x0 = MIN(*x0, x);
        *x1 = MAX(*x1, x);
        if (y_shown(self, y)) {
            *y0 = MIN(*y0, y);
            *y1 = MAX(*y1, y);
        }
    }
}

/* The axes' ranges: x as the data span, y with a margin (a twentieth each side, or a fraction
 * of a decade on a log axis) so no curve runs along the frame. */
static void axis_ranges(FmPlotView *self, FmPlotAxisSpec *x, FmPlotAxisSpec *y)
{
    double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    extent_of(self, self->x, self->y, &x0, &x1, &y0, &y1);
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        extent_of(self, s->x, s->y, &x0, &x1, &y0, &y1);
    }
    if (!isfinite(x0))
        x0 = 0, x1 = 1;
    if (!isfinite(y0))
        y0 = self->log_y ? 1 : 0, y1 = self->log_y ? 10 : 1;
    if (self->log_y) {
        y0 /= 1.25;
        y1 *= 1.25;
    } else if (y1 > y0) {
        double margin = 0.05 * (y1 - y0);
        y0 -= margin;
        y1 += margin;
    }
    *x = (FmPlotAxisSpec){x0, x1, FALSE, self->x_label};
    *y = (FmPlotAxisSpec){y0, y1, self->log_y, self->y_label};
}

static void mark_series(FmPlotView *self, GArray *xs, GArray *ys, guint8 *grid,
                        const FmPlotAxisSpec *ax, const FmPlotAxisSpec *ay)
{
    for (guint i = 0; i < xs->len; i++) {
        double x = g_array_index(xs, double, i), y = g_array_index(ys, double, i);
        guint j = i + 1 < xs->len ? i + 1 : i;
        double xn = g_array_index(xs, double, j), yn = g_array_index(ys, double, j);
        if (!y_shown(self, yn))
            xn = x, yn = y;
        if (y_shown(self, y))
            fm_plot_occupancy_mark(grid, OCC_COLS, OCC_ROWS, ax, ay, x, y, xn, yn);
    }
}

/* Strokes one series in the current source colour; a NaN point ends a segment (a gap). */
static void stroke_series(cairo_t *cr, FmPlotView *self, GArray *xs, GArray *ys, FmPlotStyle style,
                          const FmPlotLayout *l)
{
    gboolean pen_down = FALSE;
    for (guint i = 0; i < xs->len; i++) {
        double x = g_array_index(xs, double, i), y = g_array_index(ys, double, i);
        if (!isfinite(x) || !y_shown(self, y)) {
            pen_down = FALSE;
            continue;
        }
        double px = fm_plot_axis_to_px(&l->x, x), py = fm_plot_axis_to_px(&l->y, y);
        gboolean isolated =
            style == FM_PLOT_STYLE_MARKERS ||
            (!pen_down && (i + 1 >= xs->len || !y_shown(self, g_array_index(ys, double, i + 1))));
        if (isolated) {       /* a lone point would be an invisible zero-length line */
            cairo_stroke(cr); /* the line so far: the fill below would fill it as a polygon */
            cairo_new_sub_path(cr);
            cairo_arc(cr, px, py, style == FM_PLOT_STYLE_MARKERS ? 2.25 : 2.0, 0, 2 * G_PI);
            cairo_fill(cr);
            continue;
        }
        fm_cairo_pen_to(cr, &pen_down, px, py);
    }
    cairo_stroke(cr);
}

static void set_dash(cairo_t *cr, FmPlotStyle style)
{
    static const double dash[] = {6.0, 3.0};
    cairo_set_dash(cr, dash, style == FM_PLOT_STYLE_DASHED ? 2 : 0, 0);
}

/* The legend's swatch of labelled extra series number `entry`. */
static void draw_swatch(cairo_t *cr, int entry, const FmPlotBox *box, gpointer user)
{
    FmPlotView *self = user;
    int row = 0;
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        if (s->label == NULL || row++ != entry)
            continue;
        double y = box->y + box->height / 2;
        cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
        if (s->style == FM_PLOT_STYLE_MARKERS) {
            cairo_arc(cr, box->x + box->width / 2, y, 2.5, 0, 2 * G_PI);
            cairo_fill(cr);
        } else {
            set_dash(cr, s->style);
            cairo_set_line_width(cr, 2.0);
            cairo_move_to(cr, box->x, y);
            cairo_line_to(cr, box->x + box->width, y);
            cairo_stroke(cr);
        }
        return;
    }
}

static gboolean fm_plot_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmPlotView *self = FM_PLOT_VIEW(widget);
    int width = gtk_widget_get_allocated_width(widget);
    int height = gtk_widget_get_allocated_height(widget);
    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    gtk_render_background(style, cr, 0, 0, width, height);
    FmPlotColours colours;
    fm_plot_colours_from_style(widget, &colours);

    FmPlotSpec spec = {.width = width, .height = height};
    axis_ranges(self, &spec.x, &spec.y);
    const char *legend[FM_PLOT_MAX_LEGEND];
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        if (s->label != NULL && spec.n_legend < FM_PLOT_MAX_LEGEND)
            legend[spec.n_legend++] = s->label;
    }
    guint8 grid[OCC_COLS * OCC_ROWS] = {0};
    mark_series(self, self->x, self->y, grid, &spec.x, &spec.y);
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        mark_series(self, s->x, s->y, grid, &spec.x, &spec.y);
    }
    spec.legend = legend;
    spec.occupancy = grid;
    spec.occupancy_cols = OCC_COLS;
    spec.occupancy_rows = OCC_ROWS;
    FmPlotLayout *l = &self->layout;
    PangoLayout *pango = fm_cairo_plot_compute(widget, cr, &spec, l);
    if (l->data.width < 1 || l->data.height < 1) {
        g_object_unref(pango);
        return GDK_EVENT_STOP;
    }
    fm_cairo_plot_background(cr, l, &colours);

    /* Series, clipped to the data: a NaN (or infinite) point ends a segment. */
    cairo_save(cr);
    cairo_rectangle(cr, l->data.x, l->data.y, l->data.width, l->data.height);
    cairo_clip(cr);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_width(cr, 1.75);
    cairo_set_source_rgb(cr, 0.12, 0.47, 0.71);
    stroke_series(cr, self, self->x, self->y, FM_PLOT_STYLE_LINE, l);
    for (guint k = 0; k < self->extra->len; k++) {
        PlotSeries *s = self->extra->pdata[k];
        cairo_set_source_rgb(cr, s->rgb[0], s->rgb[1], s->rgb[2]);
        set_dash(cr, s->style);
        stroke_series(cr, self, s->x, s->y, s->style, l);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    if (isfinite(self->cursor_x) && self->cursor_x >= l->x.lo && self->cursor_x <= l->x.hi) {
        double x = round(fm_plot_axis_to_px(&l->x, self->cursor_x)) + 0.5;
        cairo_set_source_rgb(cr, 0.85, 0.2, 0.2);
        cairo_set_line_width(cr, 1.0);
        cairo_move_to(cr, x, l->data.y);
        cairo_line_to(cr, x, l->data.y + l->data.height);
        cairo_stroke(cr);
    }
    cairo_restore(cr);

    fm_cairo_plot_axes(cr, pango, l, &colours);
    /* a legend inside the data: on a backdrop of the theme's light or dark */
    const GdkRGBA *fg = &colours.text;
    gboolean dark_text = 0.3 * fg->red + 0.6 * fg->green + 0.1 * fg->blue < 0.5;
    GdkRGBA fill = dark_text ? (GdkRGBA){1, 1, 1, 0.85} : (GdkRGBA){0.12, 0.12, 0.12, 0.85};
    fm_cairo_plot_legend(cr, pango, l, &colours, &fill, draw_swatch, self);
    if (self->x->len == 0 && self->extra->len == 0) {
        GdkRGBA dim;
        gtk_style_context_get_color(style, GTK_STATE_FLAG_INSENSITIVE, &dim);
        gdk_cairo_set_source_rgba(cr, &dim);
        int w, h;
        pango_layout_set_text(pango, self->placeholder ? self->placeholder : _("No data"), -1);
        pango_layout_set_width(pango, (int)(l->data.width - 8) * PANGO_SCALE);
        pango_layout_set_wrap(pango, PANGO_WRAP_WORD);
        pango_layout_set_alignment(pango, PANGO_ALIGN_CENTER);
        pango_layout_get_pixel_size(pango, &w, &h);
        if (w <= l->data.width && h <= l->data.height) {
            cairo_move_to(cr, l->data.x + 4, /* centred in the layout's width */
                          l->data.y + (l->data.height - h) / 2);
            pango_cairo_show_layout(cr, pango);
        }
    }
    g_object_unref(pango);
    return GDK_EVENT_STOP;
}

static void fm_plot_view_finalize(GObject *object)
{
    FmPlotView *self = FM_PLOT_VIEW(object);
    g_free(self->x_label);
    g_free(self->placeholder);
    g_free(self->y_label);
    g_array_unref(self->x);
    g_array_unref(self->y);
    g_ptr_array_unref(self->extra);
    fm_plot_layout_clear(&self->layout);
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

void fm_plot_view_set_placeholder(FmPlotView *view, const char *text)
{
    g_free(view->placeholder);
    view->placeholder = g_strdup(text);
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

const char *fm_plot_view_get_placeholder(FmPlotView *view)
{
    return view->placeholder != NULL ? view->placeholder : _("No data");
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

const FmPlotLayout *fm_plot_view_get_layout(FmPlotView *view)
{
    g_return_val_if_fail(FM_IS_PLOT_VIEW(view), NULL);
    return &view->layout;
}
