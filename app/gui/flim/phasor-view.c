/* FmPhasorView: phasor plot drawn from a cached 2-D histogram surface (log density, magma) with
 * the universal semicircle g^2 + s^2 = g (single exponentials lie on it) and lifetime ticks, on
 * equal g and s scales as large as the widget allows (plot-layout.c). */
#include "phasor-view.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/gui/cairo-util.h"
#include "app/gui/plot-layout.h"

#define HIST_W 220
#define HIST_H 132
/* Plot window in phasor units: the semicircle with a small margin, equal scale on both axes. */
#define G_MIN (-0.05)
#define G_MAX 1.05
#define S_MIN (-0.03)
#define S_MAX 0.63

struct _FmPhasorView {
    GtkDrawingArea parent_instance;
    float *g, *s;
    int width, height;
    double omega;
    guint8 *highlight;
    gsize n_points, n_highlight;
    cairo_surface_t *surface; /* HIST_W x HIST_H histogram, rebuilt when data or highlight change */
    double sel_g, sel_s, sel_r;
    gboolean dragging;
    double ox, oy, scale; /* g = (x - ox) / scale, s = (oy - y) / scale */
    FmPlotLayout layout;  /* of the last draw */
};

/* Pixel coordinates of a phasor (g, s) as last drawn. */
#define PX(self, g) ((self)->ox + (g) * (self)->scale)
#define PY(self, s) ((self)->oy - (s) * (self)->scale)

G_DEFINE_TYPE(FmPhasorView, fm_phasor_view, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_SELECTION_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void rebuild_surface(FmPhasorView *self)
{
    g_clear_pointer(&self->surface, cairo_surface_destroy);
    self->n_points = self->n_highlight = 0;
    if (self->g == NULL)
        return;
    guint *all = g_new0(guint, HIST_W * HIST_H), *hi = g_new0(guint, HIST_W * HIST_H);
    gsize n = (gsize)self->width * self->height;
    for (gsize i = 0; i < n; i++) {
        double g = self->g[i], s = self->s[i];
        if (!isfinite(g) || !isfinite(s))
            continue;
        self->n_points++;
        int bx = (int)floor((g - G_MIN) / (G_MAX - G_MIN) * HIST_W);
        int by = (int)floor((S_MAX - s) / (S_MAX - S_MIN) * HIST_H);
        if (bx < 0 || by < 0 || bx >= HIST_W || by >= HIST_H)
            continue;
        all[by * HIST_W + bx]++;
        if (self->highlight != NULL && self->highlight[i]) {
            hi[by * HIST_W + bx]++;
            self->n_highlight++;
        }
    }
    guint peak = 1;
    for (int i = 0; i < HIST_W * HIST_H; i++)
        peak = MAX(peak, all[i]);
    self->surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, HIST_W, HIST_H);
    guint8 *px = cairo_image_surface_get_data(self->surface);
    int stride = cairo_image_surface_get_stride(self->surface);
    for (int y = 0; y < HIST_H; y++)
        for (int x = 0; x < HIST_W; x++) {
            guint32 *out = (guint32 *)(px + y * stride) + x;
            guint c = all[y * HIST_W + x];
            if (c == 0) {
                *out = 0;
                continue;
            }
            /* Log density: a cloud of a few pixels stays visible beside a dense one. */
            double t = 0.25 + 0.75 * log1p(c) / log1p(peak);
            guint8 rgb[3];
            if (self->highlight != NULL && hi[y * HIST_W + x] > 0) {
                rgb[0] = 40, rgb[1] = (guint8)(150 + 105 * t), rgb[2] = 255;
            } else {
                fm_colormap_rgb(self->highlight != NULL ? FM_COLORMAP_GRAY : FM_COLORMAP_MAGMA,
                                self->highlight != NULL ? 0.25 + 0.4 * t : t, rgb);
            }
            *out = 0xff000000u | (guint32)rgb[0] << 16 | (guint32)rgb[1] << 8 | rgb[2];
        }
    cairo_surface_mark_dirty(self->surface);
    g_free(all);
    g_free(hi);
}

/* Lifetime labels along the semicircle, outside it, each clear of the ones before it and of
 * the data rectangle's edge. */
static void draw_tau_ticks(FmPhasorView *self, cairo_t *cr, PangoLayout *pango,
                           const FmPlotBox *data)
{
    /* A single exponential of lifetime tau sits at g = 1/(1+(w tau)^2), s = w tau g. */
    static const double taus[] = {0.5, 1, 2, 3, 4, 6, 8, 12};
    FmPlotBox placed[G_N_ELEMENTS(taus)];
    int n_placed = 0;
    for (gsize i = 0; i < G_N_ELEMENTS(taus); i++) {
        double wt = self->omega * taus[i], g = 1 / (1 + wt * wt), s = wt * g;
        double dx = g - 0.5, dy = s, len = hypot(dx, dy);
        cairo_move_to(cr, PX(self, g), PY(self, s));
        cairo_line_to(cr, PX(self, g + 0.025 * dx / len), PY(self, s + 0.025 * dy / len));
        cairo_stroke(cr);
        g_autofree char *t = g_strdup_printf("%g", taus[i]);
        int w, h;
        pango_layout_set_text(pango, t, -1);
        pango_layout_get_pixel_size(pango, &w, &h);
        /* outside the circle by a gap and half the label, in pixels: clear of the line at any
         * size (the normal points up-right, away from the centre, in screen terms) */
        double away = 5 + 0.5 * hypot(w, h);
        double cx = PX(self, g) + away * dx / len, cy = PY(self, s) - away * dy / len;
        FmPlotBox box = {CLAMP(cx - w / 2.0, data->x + 1, data->x + data->width - w - 1),
                         CLAMP(cy - h / 2.0, data->y + 1, data->y + data->height - h - 1), w, h};
        gboolean clear = TRUE;
        for (int k = 0; k < n_placed && clear; k++)
            clear = box.x + box.width <= placed[k].x || placed[k].x + placed[k].width <= box.x ||
                    box.y + box.height <= placed[k].y || placed[k].y + placed[k].height <= box.y;
        if (!clear)
            continue;
        placed[n_placed++] = box;
        cairo_move_to(cr, box.x, box.y);
        pango_cairo_show_layout(cr, pango);
    }
}

/* Words in the middle of the widget, wrapped to its width (ellipsized where even that does not
 * fit its height). */
static void draw_placeholder(GtkWidget *widget, cairo_t *cr, double W, double H, const char *text)
{
    PangoLayout *pango = fm_cairo_plot_pango(widget, cr);
    pango_layout_set_text(pango, text, -1);
    pango_layout_set_width(pango, (int)(MAX(W - 16, 1) * PANGO_SCALE));
    pango_layout_set_height(pango, (int)(MAX(H - 8, 1) * PANGO_SCALE));
    pango_layout_set_wrap(pango, PANGO_WRAP_WORD);
    pango_layout_set_ellipsize(pango, PANGO_ELLIPSIZE_END);
    pango_layout_set_alignment(pango, PANGO_ALIGN_CENTER);
    int w, h;
    pango_layout_get_pixel_size(pango, &w, &h);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.7);
    cairo_move_to(cr, 8, (H - h) / 2);
    pango_cairo_show_layout(cr, pango);
    g_object_unref(pango);
}

static gboolean fm_phasor_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmPhasorView *self = FM_PHASOR_VIEW(widget);
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
    cairo_paint(cr);
    fm_plot_layout_clear(&self->layout);
    memset(&self->layout, 0, sizeof self->layout);
    self->scale = 0;
    if (self->g == NULL) { /* no axes without phasors: what to do, in words */
        draw_placeholder(widget, cr, W, H, _("Run the Phasor method to see the phasor plot"));
        return FALSE;
    }
    g_autofree char *title =
        self->highlight != NULL
            ? g_strdup_printf(_("Phasor · %" G_GSIZE_FORMAT " px · %" G_GSIZE_FORMAT " in ROI"),
                              self->n_points, self->n_highlight)
            : g_strdup_printf(_("Phasor · %" G_GSIZE_FORMAT " px"), self->n_points);
    /* equal scales on g and s: the semicircle stays round, as large as the widget allows */
    FmPlotSpec spec = {
        .width = W,
        .height = H,
        .x = {G_MIN, G_MAX, FALSE, "g"},
        .y = {S_MIN, S_MAX, FALSE, "s"},
        .title = title,
        .stats = self->omega > 0 ? _("ticks on the semicircle: τ in ns") : NULL,
        .aspect = 1,
        .min_data_width = 60,
        .min_data_height = 36,
    };
    FmPlotLayout *l = &self->layout;
    PangoLayout *pango = fm_cairo_plot_compute(widget, cr, &spec, l);
    self->scale = l->data.width / (G_MAX - G_MIN);
    if (!(self->scale > 0)) {
        g_object_unref(pango);
        return FALSE;
    }
    self->ox = l->data.x - G_MIN * self->scale;
    self->oy = l->data.y + S_MAX * self->scale;
    FmPlotColours colours;
    fm_plot_colours_dark(&colours);
    fm_cairo_plot_background(cr, l, &colours);
    const FmPlotBox *data = &l->data;
    if (self->surface != NULL) {
        cairo_save(cr);
        cairo_rectangle(cr, data->x, data->y, data->width, data->height);
        cairo_clip(cr);
        cairo_translate(cr, data->x, data->y);
        cairo_scale(cr, data->width / HIST_W, data->height / HIST_H);
        cairo_set_source_surface(cr, self->surface, 0, 0);
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
        cairo_paint(cr);
        cairo_restore(cr);
    }
    /* Universal semicircle: centre (0.5, 0), radius 0.5. */
    cairo_save(cr);
    cairo_rectangle(cr, data->x, data->y, data->width, data->height);
    cairo_clip(cr);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_set_line_width(cr, 1.3);
    cairo_new_path(cr);
    cairo_arc_negative(cr, PX(self, 0.5), PY(self, 0), 0.5 * self->scale, 0, -G_PI);
    cairo_stroke(cr);
    if (self->omega > 0)
        draw_tau_ticks(self, cr, pango, data);
    if (self->sel_r > 0) {
        cairo_new_path(cr);
        cairo_arc(cr, PX(self, self->sel_g), PY(self, self->sel_s), self->sel_r * self->scale, 0,
                  2 * G_PI);
        cairo_set_source_rgba(cr, 0.2, 0.9, 1.0, 0.95);
        double dash[] = {4, 3};
        cairo_set_dash(cr, dash, 2, 0);
        cairo_set_line_width(cr, 1.6);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    cairo_restore(cr);
    fm_cairo_plot_axes(cr, pango, l, &colours);
    g_object_unref(pango);
    return FALSE;
}

static void to_phasor(FmPhasorView *self, double x, double y, double *g, double *s)
{
    *g = self->scale > 0 ? (x - self->ox) / self->scale : 0;
    *s = self->scale > 0 ? (self->oy - y) / self->scale : 0;
}

static gboolean button_press(GtkWidget *widget, GdkEventButton *event)
{
    FmPhasorView *self = FM_PHASOR_VIEW(widget);
    if (event->button != 1 || self->g == NULL)
        return FALSE;
    to_phasor(self, event->x, event->y, &self->sel_g, &self->sel_s);
    self->sel_r = 0;
    self->dragging = TRUE;
    gtk_widget_queue_draw(widget);
    return TRUE;
}

static gboolean motion(GtkWidget *widget, GdkEventMotion *event)
{
    FmPhasorView *self = FM_PHASOR_VIEW(widget);
    if (!self->dragging)
        return FALSE;
    double g, s;
    to_phasor(self, event->x, event->y, &g, &s);
    self->sel_r = hypot(g - self->sel_g, s - self->sel_s);
    gtk_widget_queue_draw(widget);
    return TRUE;
}

static gboolean button_release(GtkWidget *widget, GdkEventButton *event)
{
    FmPhasorView *self = FM_PHASOR_VIEW(widget);
    if (!self->dragging)
        return FALSE;
    self->dragging = FALSE;
    /* A click without a drag clears the region. */
    if (self->sel_r * self->scale < 3)
        self->sel_r = 0;
    g_signal_emit(self, signals[SIGNAL_SELECTION_CHANGED], 0);
    gtk_widget_queue_draw(widget);
    return TRUE;
}

static void fm_phasor_view_finalize(GObject *object)
{
    FmPhasorView *self = FM_PHASOR_VIEW(object);
    g_free(self->g);
    g_free(self->s);
    g_free(self->highlight);
    g_clear_pointer(&self->surface, cairo_surface_destroy);
    fm_plot_layout_clear(&self->layout);
    G_OBJECT_CLASS(fm_phasor_view_parent_class)->finalize(object);
}

static void fm_phasor_view_class_init(FmPhasorViewClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_phasor_view_finalize;
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    wc->draw = fm_phasor_view_draw;
    wc->button_press_event = button_press;
    wc->motion_notify_event = motion;
    wc->button_release_event = button_release;
    signals[SIGNAL_SELECTION_CHANGED] =
        g_signal_new("selection-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                     NULL, NULL, G_TYPE_NONE, 0);
}

static void fm_phasor_view_init(FmPhasorView *self)
{
    gtk_widget_add_events(GTK_WIDGET(self), GDK_BUTTON_PRESS_MASK | GDK_BUTTON_RELEASE_MASK |
                                                GDK_POINTER_MOTION_MASK);
    gtk_widget_set_size_request(GTK_WIDGET(self), 240, 90);
    gtk_widget_set_tooltip_text(
        GTK_WIDGET(self), _("Drag a circle to select pixels by their phasor; click to clear"));
}

GtkWidget *fm_phasor_view_new(void)
{
    return g_object_new(FM_TYPE_PHASOR_VIEW, NULL);
}

void fm_phasor_view_set_data(FmPhasorView *self, const float *g, const float *s, int width,
                             int height, double omega_per_ns)
{
    gsize n = (gsize)width * height;
    g_free(self->g);
    g_free(self->s);
    self->g = g_memdup2(g, n * sizeof(float));
    self->s = g_memdup2(s, n * sizeof(float));
    if (self->width != width || self->height != height)
        g_clear_pointer(&self->highlight, g_free);
    self->width = width;
    self->height = height;
    self->omega = omega_per_ns;
    self->sel_r = 0;
    rebuild_surface(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void fm_phasor_view_clear(FmPhasorView *self)
{
    g_clear_pointer(&self->g, g_free);
    g_clear_pointer(&self->s, g_free);
    g_clear_pointer(&self->highlight, g_free);
    self->sel_r = 0;
    rebuild_surface(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

gsize fm_phasor_view_count_points(FmPhasorView *self)
{
    return self->n_points;
}

gsize fm_phasor_view_count_highlighted(FmPhasorView *self)
{
    return self->n_highlight;
}

void fm_phasor_view_set_highlight(FmPhasorView *self, const guint8 *mask)
{
    g_clear_pointer(&self->highlight, g_free);
    if (mask != NULL && self->g != NULL)
        self->highlight = g_memdup2(mask, (gsize)self->width * self->height);
    rebuild_surface(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void fm_phasor_view_set_selection(FmPhasorView *self, double g, double s, double radius)
{
    self->sel_g = g;
    self->sel_s = s;
    self->sel_r = MAX(radius, 0.0);
    g_signal_emit(self, signals[SIGNAL_SELECTION_CHANGED], 0);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

guint8 *fm_phasor_view_selection_mask(FmPhasorView *self, gsize *n_selected)
{
    if (n_selected != NULL)
        *n_selected = 0;
    if (self->g == NULL || self->sel_r <= 0)
        return NULL;
    gsize n = (gsize)self->width * self->height, count = 0;
    guint8 *mask = g_new0(guint8, n);
    for (gsize i = 0; i < n; i++) {
        double dg = self->g[i] - self->sel_g, ds = self->s[i] - self->sel_s;
        mask[i] = isfinite(dg) && isfinite(ds) && dg * dg + ds * ds <= self->sel_r * self->sel_r;
        count += mask[i];
    }
    if (n_selected != NULL)
        *n_selected = count;
    return mask;
}

const FmPlotLayout *fm_phasor_view_get_layout(FmPhasorView *self)
{
    return &self->layout;
}
