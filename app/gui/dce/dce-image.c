/* FmDceImage: one slice of the DCE anatomy in gray with a perfusion map blended over it at an
 * adjustable opacity, a colorbar for the map and the outlines of the slice's ROIs. */
#include "dce-image.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/roi.h"
#include "app/gui/map-overlays.h"

struct _FmDceImage {
    GtkDrawingArea parent_instance;
    float *anatomy, *overlay;
    int width, height;
    char *title, *unit;
    double vmin, vmax, opacity;
    fm_colormap cmap;
    GPtrArray *rois; /* borrowed */
    int slice;
    /* Cached: rebuilt when data, range, colormap or opacity change, never per redraw. */
    cairo_surface_t *image, *bar;
    int last_x, last_y;
};

G_DEFINE_FINAL_TYPE(FmDceImage, fm_dce_image, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_CURSOR_MOVED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void invalidate(FmDceImage *self)
{
    g_clear_pointer(&self->image, cairo_surface_destroy);
    g_clear_pointer(&self->bar, cairo_surface_destroy);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void build_lut(fm_colormap cmap, guint8 lut[256][3])
{
    for (int i = 0; i < 256; i++)
        fm_colormap_rgb(cmap, i / 255.0, lut[i]);
}

/* Anatomy as gray, the map alpha-blended over it where it is finite. */
static void ensure_surfaces(FmDceImage *self)
{
    if (self->image || !self->anatomy)
        return;
    gsize n = (gsize)self->width * self->height;
    double lo = 0, hi = 1;
    if (!fm_percentile_range(self->anatomy, n, 1.0, 99.5, &lo, &hi) || !(hi > lo))
        hi = lo + 1;
    guint8 lut[256][3];
    build_lut(self->cmap, lut);
    double span = self->vmax - self->vmin, a = CLAMP(self->opacity, 0.0, 1.0);
    self->image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, self->width, self->height);
    cairo_surface_flush(self->image);
    guint8 *pixels = cairo_image_surface_get_data(self->image);
    int stride = cairo_image_surface_get_stride(self->image);
    for (int y = 0; y < self->height; y++) {
        guint32 *row = (guint32 *)(pixels + (gsize)y * stride);
        for (int x = 0; x < self->width; x++) {
            gsize i = (gsize)y * self->width + x;
            float v = self->anatomy[i];
            double g = isfinite(v) ? CLAMP((v - lo) / (hi - lo), 0.0, 1.0) * 255.0 : 0.0;
            double rgb[3] = {g, g, g};
            float m = self->overlay ? self->overlay[i] : NAN;
            if (isfinite(m)) {
                double level = span > 0 ? (m - self->vmin) / span * 255.0 : 127.5;
                int k = level <= 0 ? 0 : level >= 255 ? 255 : (int)(level + 0.5);
                for (int c = 0; c < 3; c++)
                    rgb[c] = (1 - a) * rgb[c] + a * lut[k][c];
            }
            row[x] = 0xff000000u | ((guint32)lround(rgb[0]) << 16) |
                     ((guint32)lround(rgb[1]) << 8) | (guint32)lround(rgb[2]);
        }
    }
    cairo_surface_mark_dirty(self->image);
    self->bar = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 256);
    cairo_surface_flush(self->bar);
    guint8 *bar_pixels = cairo_image_surface_get_data(self->bar);
    int bar_stride = cairo_image_surface_get_stride(self->bar);
    for (int i = 0; i < 256; i++) { /* top row is the maximum */
        const guint8 *c = lut[255 - i];
        *(guint32 *)(bar_pixels + (gsize)i * bar_stride) =
            0xff000000u | ((guint32)c[0] << 16) | ((guint32)c[1] << 8) | c[2];
    }
    cairo_surface_mark_dirty(self->bar);
}

static FmColorbar colorbar(FmDceImage *self)
{
    FmColorbar bar = {self->vmin, self->vmax, self->title, self->unit, self->bar};
    return bar;
}

/* The image fills the widget left of the colorbar, keeping square voxels; image and colorbar
 * are centred together, so spare width does not open a gap between them. */
static FmMapTransform layout_image(FmDceImage *self, double *bar_x)
{
    int w = gtk_widget_get_allocated_width(GTK_WIDGET(self));
    int h = gtk_widget_get_allocated_height(GTK_WIDGET(self));
    FmColorbar bar = colorbar(self);
    double bar_w = self->overlay ? fm_colorbar_width(GTK_WIDGET(self), &bar) : 0;
    double aw = MAX(w - bar_w - 8, 10), ah = MAX(h - 8, 10);
    double zoom = MIN(aw / MAX(self->width, 1), ah / MAX(self->height, 1));
    double group_w = zoom * self->width + (self->overlay ? bar_w : 0);
    FmMapTransform t = {4 + MAX(0.5 * (w - 8 - group_w), 0), 4 + 0.5 * (ah - zoom * self->height),
                        zoom};
    *bar_x = t.origin_x + zoom * self->width + 4;
    return t;
}

static gboolean fm_dce_image_draw(GtkWidget *widget, cairo_t *cr)
{
    FmDceImage *self = FM_DCE_IMAGE(widget);
    int width = gtk_widget_get_allocated_width(widget);
    int height = gtk_widget_get_allocated_height(widget);
    gtk_render_background(gtk_widget_get_style_context(widget), cr, 0, 0, width, height);
    if (!self->anatomy) {
        cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
        cairo_paint(cr);
        PangoLayout *layout =
            gtk_widget_create_pango_layout(widget, _("Open a 4-D DCE series (x, y, z, t)"));
        int w, h;
        pango_layout_get_pixel_size(layout, &w, &h);
        cairo_set_source_rgb(cr, 0.8, 0.8, 0.8);
        cairo_move_to(cr, 0.5 * (width - w), 0.5 * (height - h));
        pango_cairo_show_layout(cr, layout);
        g_object_unref(layout);
        return GDK_EVENT_STOP;
    }
    ensure_surfaces(self);
    double bar_x;
    FmMapTransform t = layout_image(self, &bar_x);
    /* Dark surround behind the image, as radiology viewers use; the colorbar stays on the
     * theme's background so its labels read in the theme's colour. */
    cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
    cairo_rectangle(cr, t.origin_x - 4, t.origin_y - 4, t.zoom * self->width + 8,
                    t.zoom * self->height + 8);
    cairo_fill(cr);
    cairo_save(cr);
    cairo_translate(cr, t.origin_x, t.origin_y);
    cairo_scale(cr, t.zoom, t.zoom);
    cairo_set_source_surface(cr, self->image, 0, 0);
    /* Every voxel a crisp square: interpolation would invent values between fitted voxels. */
    cairo_pattern_set_filter(cairo_get_source(cr),
                             t.zoom >= 1.0 ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD);
    cairo_rectangle(cr, 0, 0, self->width, self->height);
    cairo_fill(cr);
    cairo_restore(cr);
    guint on_slice = 0; /* colours as the map view numbers the ROIs of the slice on show */
    for (guint i = 0; self->rois && i < self->rois->len; i++) {
        const fm_roi *roi = self->rois->pdata[i];
        if (roi->slice >= 0 && roi->slice != self->slice)
            continue;
        const double *rgb = fm_map_roi_colour(on_slice++);
        fm_map_roi_path(cr, &t, roi, TRUE);
        fm_map_stroke_outline(cr, rgb, 1.5, FALSE);
        fm_map_roi_label(widget, cr, &t, roi, rgb);
    }
    if (self->overlay) {
        FmColorbar bar = colorbar(self);
        fm_colorbar_draw(widget, cr, &bar, bar_x, height);
    }
    return GDK_EVENT_STOP;
}

static void report(FmDceImage *self, int x, int y)
{
    if (x == self->last_x && y == self->last_y)
        return;
    self->last_x = x;
    self->last_y = y;
    g_signal_emit(self, signals[SIGNAL_CURSOR_MOVED], 0, x, y);
}

static gboolean fm_dce_image_motion(GtkWidget *widget, GdkEventMotion *event)
{
    FmDceImage *self = FM_DCE_IMAGE(widget);
    if (!self->anatomy)
        return GDK_EVENT_PROPAGATE;
    double bar_x;
    FmMapTransform t = layout_image(self, &bar_x);
    int x = (int)floor((event->x - t.origin_x) / t.zoom);
    int y = (int)floor((event->y - t.origin_y) / t.zoom);
    if (x < 0 || y < 0 || x >= self->width || y >= self->height)
        x = y = -1;
    report(self, x, y);
    return GDK_EVENT_PROPAGATE;
}

static gboolean fm_dce_image_leave(GtkWidget *widget, GdkEventCrossing *event)
{
    report(FM_DCE_IMAGE(widget), -1, -1);
    return GDK_EVENT_PROPAGATE;
}

static void fm_dce_image_finalize(GObject *object)
{
    FmDceImage *self = FM_DCE_IMAGE(object);
    g_free(self->anatomy);
    g_free(self->overlay);
    g_free(self->title);
    g_free(self->unit);
    g_clear_pointer(&self->image, cairo_surface_destroy);
    g_clear_pointer(&self->bar, cairo_surface_destroy);
    G_OBJECT_CLASS(fm_dce_image_parent_class)->finalize(object);
}

static void fm_dce_image_class_init(FmDceImageClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_dce_image_finalize;
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    widget_class->draw = fm_dce_image_draw;
    widget_class->motion_notify_event = fm_dce_image_motion;
    widget_class->leave_notify_event = fm_dce_image_leave;
    gtk_widget_class_set_css_name(widget_class, "fm-dce-image");
    signals[SIGNAL_CURSOR_MOVED] =
        g_signal_new("cursor-moved", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
}

static void fm_dce_image_init(FmDceImage *self)
{
    self->opacity = 0.6;
    self->cmap = FM_COLORMAP_JET;
    self->slice = 0;
    self->last_x = self->last_y = -1;
    gtk_widget_add_events(GTK_WIDGET(self), GDK_POINTER_MOTION_MASK | GDK_LEAVE_NOTIFY_MASK);
    gtk_widget_set_size_request(GTK_WIDGET(self), 240, 160);
}

GtkWidget *fm_dce_image_new(void)
{
    return g_object_new(FM_TYPE_DCE_IMAGE, NULL);
}

void fm_dce_image_set_anatomy(FmDceImage *img, const float *data, int width, int height)
{
    g_return_if_fail(FM_IS_DCE_IMAGE(img));
    g_clear_pointer(&img->anatomy, g_free);
    if (data) {
        img->anatomy = g_memdup2(data, (gsize)width * height * sizeof(float));
        img->width = width;
        img->height = height;
    }
    invalidate(img);
}

void fm_dce_image_set_overlay(FmDceImage *img, const float *data, int width, int height,
                              const char *title, const char *unit, double vmin, double vmax)
{
    g_return_if_fail(FM_IS_DCE_IMAGE(img));
    g_clear_pointer(&img->overlay, g_free);
    if (data && width == img->width && height == img->height)
        img->overlay = g_memdup2(data, (gsize)width * height * sizeof(float));
    g_free(img->title);
    img->title = g_strdup(title);
    g_free(img->unit);
    img->unit = g_strdup(unit);
    img->vmin = vmin;
    img->vmax = vmax;
    invalidate(img);
}

void fm_dce_image_set_opacity(FmDceImage *img, double opacity)
{
    g_return_if_fail(FM_IS_DCE_IMAGE(img));
    img->opacity = opacity;
    invalidate(img);
}

void fm_dce_image_set_colormap(FmDceImage *img, fm_colormap cmap)
{
    g_return_if_fail(FM_IS_DCE_IMAGE(img));
    img->cmap = cmap;
    invalidate(img);
}

void fm_dce_image_set_rois(FmDceImage *img, GPtrArray *rois, int slice)
{
    g_return_if_fail(FM_IS_DCE_IMAGE(img));
    img->rois = rois;
    img->slice = slice;
    gtk_widget_queue_draw(GTK_WIDGET(img));
}
