/* FmPhasorView: phasor plot drawn from a cached 2-D histogram surface (log density, magma) with
 * the universal semicircle g^2 + s^2 = g (single exponentials lie on it) and lifetime ticks. */
#include "phasor-view.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/gui/cairo-util.h"

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
};

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

static gboolean fm_phasor_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmPhasorView *self = FM_PHASOR_VIEW(widget);
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
    cairo_paint(cr);
    double ml = 34, mr = 10, mt = 22, mb = 24;
    self->scale = MIN((W - ml - mr) / (G_MAX - G_MIN), (H - mt - mb) / (S_MAX - S_MIN));
    if (self->scale <= 0)
        return FALSE;
    double pw = self->scale * (G_MAX - G_MIN), ph = self->scale * (S_MAX - S_MIN);
    double x0 = ml + (W - ml - mr - pw) / 2, y0 = mt + (H - mt - mb - ph) / 2;
    self->ox = x0 - G_MIN * self->scale;
    self->oy = y0 + S_MAX * self->scale;
#define PX(g) (self->ox + (g)*self->scale)
#define PY(s) (self->oy - (s)*self->scale)
    cairo_set_source_rgb(cr, 0.07, 0.07, 0.08);
    cairo_rectangle(cr, x0, y0, pw, ph);
    cairo_fill(cr);
    /* Grid every 0.25 and the axes. */
    cairo_set_line_width(cr, 1);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.08);
    for (double g = 0; g <= 1.0001; g += 0.25) {
        cairo_move_to(cr, PX(g), y0);
        cairo_line_to(cr, PX(g), y0 + ph);
    }
    for (double s = 0; s <= 0.6001; s += 0.25) {
        cairo_move_to(cr, x0, PY(s));
        cairo_line_to(cr, x0 + pw, PY(s));
    }
    cairo_stroke(cr);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.65);
    for (double g = 0; g <= 1.0001; g += 0.25) {
        g_autofree char *t = g_strdup_printf("%.2g", g);
        fm_cairo_text(widget, cr, PX(g), y0 + ph + 9, t, 0.5, 0.5);
    }
    for (double s = 0; s <= 0.6001; s += 0.25) {
        g_autofree char *t = g_strdup_printf("%.2g", s);
        fm_cairo_text(widget, cr, x0 - 4, PY(s), t, 1.0, 0.5);
    }
    fm_cairo_text(widget, cr, x0 + pw, y0 + ph + 9, "g", 0.0, 0.5);
    fm_cairo_text(widget, cr, x0 - 24, y0 + 4, "s", 0.0, 0.5);

    if (self->surface != NULL) {
        cairo_save(cr);
        cairo_rectangle(cr, x0, y0, pw, ph);
        cairo_clip(cr);
        cairo_translate(cr, x0, y0);
        cairo_scale(cr, pw / HIST_W, ph / HIST_H);
        cairo_set_source_surface(cr, self->surface, 0, 0);
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
        cairo_paint(cr);
        cairo_restore(cr);
    }
    /* Universal semicircle: centre (0.5, 0), radius 0.5. */
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_set_line_width(cr, 1.3);
    cairo_new_path(cr);
    cairo_arc_negative(cr, PX(0.5), PY(0), 0.5 * self->scale, 0, -G_PI);
    cairo_stroke(cr);
    if (self->omega > 0) {
        /* A single exponential of lifetime tau sits at g = 1/(1+(w tau)^2), s = w tau g. */
        static const double taus[] = {0.5, 1, 2, 3, 4, 6, 8, 12};
        for (gsize i = 0; i < G_N_ELEMENTS(taus); i++) {
            double wt = self->omega * taus[i], g = 1 / (1 + wt * wt), s = wt * g;
            double dx = g - 0.5, dy = s, len = hypot(dx, dy);
            cairo_move_to(cr, PX(g), PY(s));
            cairo_line_to(cr, PX(g + 0.025 * dx / len), PY(s + 0.025 * dy / len));
            cairo_stroke(cr);
            g_autofree char *t = g_strdup_printf("%g", taus[i]);
            fm_cairo_text(widget, cr, PX(g + 0.06 * dx / len), PY(s + 0.06 * dy / len), t, 0.5,
                          0.5);
        }
        fm_cairo_text(widget, cr, x0 + pw - 2, y0 + 8, _("τ ticks in ns"), 1.0, 0.5);
    }
    if (self->sel_r > 0) {
        cairo_new_path(cr);
        cairo_arc(cr, PX(self->sel_g), PY(self->sel_s), self->sel_r * self->scale, 0, 2 * G_PI);
        cairo_set_source_rgba(cr, 0.2, 0.9, 1.0, 0.95);
        double dash[] = {4, 3};
        cairo_set_dash(cr, dash, 2, 0);
        cairo_set_line_width(cr, 1.6);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    g_autofree char *title =
        self->g == NULL ? g_strdup(_("Phasor: run flim.phasor to fill"))
        : self->highlight != NULL
            ? g_strdup_printf(_("Phasor · %" G_GSIZE_FORMAT " px · %" G_GSIZE_FORMAT " in ROI"),
                              self->n_points, self->n_highlight)
            : g_strdup_printf(_("Phasor · %" G_GSIZE_FORMAT " px"), self->n_points);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    fm_cairo_text(widget, cr, x0, 10, title, 0.0, 0.5);
#undef PX
#undef PY
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
    gtk_widget_set_size_request(GTK_WIDGET(self), 240, 100);
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
