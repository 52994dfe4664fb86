/* FmMapView: Cairo view of one float map with colormap, colorbar, zoom/pan, read-out and ROIs. */
#include "app/gui/map-view-private.h"
#include "app/gui/map-overlays.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE(FmMapView, fm_map_view, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_CURSOR_MOVED, SIGNAL_ROIS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

void fm_map_view_emit_rois_changed(FmMapView *self)
{
    g_signal_emit(self, signals[SIGNAL_ROIS_CHANGED], 0);
}

void fm_map_view_emit_cursor_moved(FmMapView *self, int x, int y, double value)
{
    g_signal_emit(self, signals[SIGNAL_CURSOR_MOVED], 0, x, y, value);
}

static void invalidate_image(FmMapView *self)
{
    g_clear_pointer(&self->image, cairo_surface_destroy);
    g_clear_pointer(&self->bar, cairo_surface_destroy);
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void update_auto_range(FmMapView *self)
{
    if (!self->auto_range || !self->data)
        return;
    if (!fm_percentile_range(self->data, (gsize)self->width * self->height, self->low_pct,
                             self->high_pct, &self->vmin, &self->vmax)) {
        self->vmin = 0.0;
        self->vmax = 1.0;
    }
}

/* 256-entry lookup: one colormap evaluation per level instead of per pixel keeps playback fast. */
static void build_lut(fm_colormap cmap, guint32 lut[256])
{
    for (int i = 0; i < 256; i++) {
        guint8 rgb[3];
        fm_colormap_rgb(cmap, i / 255.0, rgb);
        lut[i] = 0xff000000u | ((guint32)rgb[0] << 16) | ((guint32)rgb[1] << 8) | rgb[2];
    }
}

static void ensure_surfaces(FmMapView *self)
{
    if (self->image || !self->data)
        return;
    guint32 lut[256];
    build_lut(self->cmap, lut);
    const guint32 nan_colour = 0xff404040u; /* neutral dark gray, outside every colormap */
    double span = self->vmax - self->vmin;
    double scale = span > 0 ? 255.0 / span : 0.0;

    self->image = cairo_image_surface_create(CAIRO_FORMAT_RGB24, self->width, self->height);
    cairo_surface_flush(self->image);
    guint8 *pixels = cairo_image_surface_get_data(self->image);
    int stride = cairo_image_surface_get_stride(self->image);
    for (int y = 0; y < self->height; y++) {
        guint32 *row = (guint32 *)(pixels + (gsize)y * stride);
        const float *src = self->data + (gsize)y * self->width;
        for (int x = 0; x < self->width; x++) {
            float v = src[x];
            if (!isfinite(v)) {
                row[x] = nan_colour;
                continue;
            }
            /* A flat range maps every finite value to mid-scale rather than dividing by 0. */
            double level = span > 0 ? (v - self->vmin) * scale : 127.5;
            int idx = level <= 0 ? 0 : level >= 255 ? 255 : (int)(level + 0.5);
            row[x] = lut[idx];
        }
    }
    cairo_surface_mark_dirty(self->image);

    self->bar = cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 256);
    cairo_surface_flush(self->bar);
    guint8 *bar_pixels = cairo_image_surface_get_data(self->bar);
    int bar_stride = cairo_image_surface_get_stride(self->bar);
    for (int i = 0; i < 256; i++) /* top row is the maximum */
        *(guint32 *)(bar_pixels + (gsize)i * bar_stride) = lut[255 - i];
    cairo_surface_mark_dirty(self->bar);
}

static FmColorbar colorbar(FmMapView *self)
{
    FmColorbar bar = {self->vmin, self->vmax, self->title, self->unit, self->bar};
    return bar;
}

static void map_area(FmMapView *self, double *w, double *h)
{
    FmColorbar bar = colorbar(self);
    double bar_w = self->data ? fm_colorbar_width(GTK_WIDGET(self), &bar) : 0.0;
    *w = MAX(1.0, gtk_widget_get_allocated_width(GTK_WIDGET(self)) - bar_w);
    *h = MAX(1.0, gtk_widget_get_allocated_height(GTK_WIDGET(self)));
}

static void apply_fit(FmMapView *self)
{
    if (!self->data)
        return;
    double aw, ah;
    map_area(self, &aw, &ah);
    self->zoom = CLAMP(MIN(aw / self->width, ah / self->height), ZOOM_MIN, ZOOM_MAX);
    self->origin_x = 0.5 * (aw - self->zoom * self->width);
    self->origin_y = 0.5 * (ah - self->zoom * self->height);
}

/* Zooms to the given factor keeping the image point under (wx, wy) fixed on screen. */
void fm_map_view_zoom_at(FmMapView *self, double zoom, double wx, double wy)
{
    zoom = CLAMP(zoom, ZOOM_MIN, ZOOM_MAX);
    fm_point p = to_image(self, wx, wy);
    self->zoom = zoom;
    self->origin_x = wx - p.x * zoom;
    self->origin_y = wy - p.y * zoom;
    self->fit = FALSE;
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

static FmMapTransform transform(FmMapView *self)
{
    FmMapTransform t = {self->origin_x, self->origin_y, self->zoom};
    return t;
}

static void draw_rois(FmMapView *self, cairo_t *cr)
{
    FmMapTransform t = transform(self);
    for (guint i = 0; i < self->rois->len; i++) {
        const fm_roi *roi = g_ptr_array_index(self->rois, i);
        const double *rgb = fm_map_roi_colour(i);
        gboolean selected = (int)i == self->selected;
        fm_map_roi_path(cr, &t, roi, TRUE);
        fm_map_stroke_outline(cr, rgb, selected ? 3.0 : 1.5, selected);
        fm_map_roi_label(GTK_WIDGET(self), cr, &t, roi, rgb);
    }
    const double *next_rgb = fm_map_roi_colour(self->rois->len);
    if (self->drag == DRAG_SHAPE) {
        fm_point a = self->shape_a, b = self->shape_b;
        g_autoptr(fm_roi) shape = self->tool == FM_MAP_TOOL_ELLIPSE
                                      ? fm_roi_new_ellipse(NULL, a.x, a.y, b.x, b.y)
                                      : fm_roi_new_rectangle(NULL, a.x, a.y, b.x, b.y);
        fm_map_roi_path(cr, &t, shape, TRUE);
        fm_map_stroke_outline(cr, next_rgb, 1.5, TRUE);
    }
    if (self->polygon && self->polygon->points->len > 0) {
        fm_map_roi_path(cr, &t, self->polygon, FALSE);
        if (self->hover_valid) /* rubber band to the pointer */
            cairo_line_to(cr, t.origin_x + self->hover.x * t.zoom,
                          t.origin_y + self->hover.y * t.zoom);
        fm_map_stroke_outline(cr, next_rgb, 1.5, TRUE);
    }
}

static gboolean fm_map_view_draw(GtkWidget *widget, cairo_t *cr)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    int width = gtk_widget_get_allocated_width(widget);
    int height = gtk_widget_get_allocated_height(widget);
    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    gtk_render_background(style, cr, 0, 0, width, height);

    if (!self->data) {
        PangoLayout *layout = gtk_widget_create_pango_layout(widget, _("No map to show"));
        int w, h;
        pango_layout_get_pixel_size(layout, &w, &h);
        gtk_render_layout(style, cr, 0.5 * (width - w), 0.5 * (height - h), layout);
        g_object_unref(layout);
        return GDK_EVENT_STOP;
    }
    ensure_surfaces(self);
    double aw, ah;
    map_area(self, &aw, &ah);

    cairo_save(cr);
    cairo_rectangle(cr, 0, 0, aw, ah);
    cairo_clip(cr);
    cairo_save(cr);
    cairo_translate(cr, self->origin_x, self->origin_y);
    cairo_scale(cr, self->zoom, self->zoom);
    cairo_set_source_surface(cr, self->image, 0, 0);
    /* Zoomed in, every data pixel must stay a crisp square: interpolation would invent values. */
    cairo_pattern_set_filter(cairo_get_source(cr),
                             self->zoom >= 1.0 ? CAIRO_FILTER_NEAREST : CAIRO_FILTER_GOOD);
    cairo_rectangle(cr, 0, 0, self->width, self->height);
    cairo_fill(cr);
    cairo_restore(cr);
    draw_rois(self, cr);
    cairo_restore(cr);

    FmColorbar bar = colorbar(self);
    fm_colorbar_draw(widget, cr, &bar, aw, height);
    return GDK_EVENT_STOP;
}

static void fm_map_view_size_allocate(GtkWidget *widget, GtkAllocation *allocation)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    GTK_WIDGET_CLASS(fm_map_view_parent_class)->size_allocate(widget, allocation);
    if (self->fit)
        apply_fit(self);
}

/* ---- GObject ---- */

static void fm_map_view_finalize(GObject *object)
{
    FmMapView *self = FM_MAP_VIEW(object);
    g_free(self->data);
    g_free(self->title);
    g_free(self->unit);
    g_clear_pointer(&self->image, cairo_surface_destroy);
    g_clear_pointer(&self->bar, cairo_surface_destroy);
    g_clear_pointer(&self->rois, g_ptr_array_unref);
    g_clear_pointer(&self->polygon, fm_roi_free);
    g_clear_pointer(&self->move_start, g_array_unref);
    G_OBJECT_CLASS(fm_map_view_parent_class)->finalize(object);
}

static void fm_map_view_class_init(FmMapViewClass *klass)
{
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
    object_class->finalize = fm_map_view_finalize;
    widget_class->draw = fm_map_view_draw;
    widget_class->size_allocate = fm_map_view_size_allocate;
    widget_class->button_press_event = fm_map_view_button_press;
    widget_class->button_release_event = fm_map_view_button_release;
    widget_class->motion_notify_event = fm_map_view_motion;
    widget_class->scroll_event = fm_map_view_scroll;
    widget_class->leave_notify_event = fm_map_view_leave;
    widget_class->key_press_event = fm_map_view_key_press;
    gtk_widget_class_set_css_name(widget_class, "fm-map-view");

    signals[SIGNAL_CURSOR_MOVED] =
        g_signal_new("cursor-moved", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 3, G_TYPE_INT, G_TYPE_INT, G_TYPE_DOUBLE);
    signals[SIGNAL_ROIS_CHANGED] =
        g_signal_new("rois-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                     NULL, G_TYPE_NONE, 0);
}

static void fm_map_view_init(FmMapView *self)
{
    self->cmap = FM_COLORMAP_VIRIDIS;
    self->auto_range = TRUE;
    self->low_pct = 1.0;
    self->high_pct = 99.0;
    self->vmin = 0.0;
    self->vmax = 1.0;
    self->zoom = 1.0;
    self->fit = TRUE;
    self->tool = FM_MAP_TOOL_PAN;
    self->rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    self->selected = -1;
    self->next_number = 1;
    self->last_x = self->last_y = -2; /* so the first report always goes out */
    gtk_widget_set_can_focus(GTK_WIDGET(self), TRUE);
    gtk_widget_add_events(GTK_WIDGET(self), GDK_BUTTON_PRESS_MASK | GDK_BUTTON_RELEASE_MASK |
                                                GDK_POINTER_MOTION_MASK | GDK_SCROLL_MASK |
                                                GDK_SMOOTH_SCROLL_MASK | GDK_LEAVE_NOTIFY_MASK |
                                                GDK_KEY_PRESS_MASK);
    gtk_widget_set_size_request(GTK_WIDGET(self), 200, 150);
}

/* ---- public API ---- */

GtkWidget *fm_map_view_new(void)
{
    return g_object_new(FM_TYPE_MAP_VIEW, NULL);
}

void fm_map_view_set_map(FmMapView *view, const float *data, int width, int height,
                         const char *title, const char *unit)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    g_return_if_fail(data != NULL && width > 0 && height > 0);
    gboolean same_size = view->data && width == view->width && height == view->height;
    gsize n = (gsize)width * height;
    if (!same_size) {
        g_free(view->data);
        view->data = g_new(float, n);
    }
    memcpy(view->data, data, n * sizeof(float));
    view->width = width;
    view->height = height;
    g_free(view->title);
    view->title = g_strdup(title);
    g_free(view->unit);
    view->unit = g_strdup(unit);
    if (!same_size) {
        view->auto_range = TRUE; /* a manual range belongs to the map it was set for */
        view->fit = TRUE;
        g_clear_pointer(&view->polygon, fm_roi_free);
        if (view->rois->len > 0) {
            fm_map_view_clear_rois(view);
        }
    }
    update_auto_range(view);
    if (view->fit)
        apply_fit(view);
    invalidate_image(view);
}

void fm_map_view_clear(FmMapView *view)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    g_clear_pointer(&view->data, g_free);
    view->width = view->height = 0;
    g_clear_pointer(&view->polygon, fm_roi_free);
    view->drag = DRAG_NONE;
    view->fit = TRUE;
    view->auto_range = TRUE;
    if (view->rois->len > 0)
        fm_map_view_clear_rois(view);
    invalidate_image(view);
}

gboolean fm_map_view_has_map(FmMapView *view)
{
    g_return_val_if_fail(FM_IS_MAP_VIEW(view), FALSE);
    return view->data != NULL;
}

const float *fm_map_view_get_data(FmMapView *view, int *width, int *height)
{
    g_return_val_if_fail(FM_IS_MAP_VIEW(view), NULL);
    if (width)
        *width = view->width;
    if (height)
        *height = view->height;
    return view->data;
}

void fm_map_view_set_colormap(FmMapView *view, fm_colormap cmap)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    g_return_if_fail(cmap >= 0 && cmap < FM_COLORMAP_COUNT);
    if (cmap == view->cmap)
        return;
    view->cmap = cmap;
    invalidate_image(view);
}

fm_colormap fm_map_view_get_colormap(FmMapView *view)
{
    g_return_val_if_fail(FM_IS_MAP_VIEW(view), FM_COLORMAP_VIRIDIS);
    return view->cmap;
}

void fm_map_view_set_auto_range(FmMapView *view, double low_pct, double high_pct)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    view->auto_range = TRUE;
    view->low_pct = CLAMP(MIN(low_pct, high_pct), 0.0, 100.0);
    view->high_pct = CLAMP(MAX(low_pct, high_pct), 0.0, 100.0);
    update_auto_range(view);
    invalidate_image(view);
}

void fm_map_view_set_range(FmMapView *view, double vmin, double vmax)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    g_return_if_fail(isfinite(vmin) && isfinite(vmax));
    view->auto_range = FALSE;
    view->vmin = MIN(vmin, vmax);
    view->vmax = MAX(vmin, vmax);
    invalidate_image(view);
}

void fm_map_view_get_range(FmMapView *view, double *vmin, double *vmax)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    if (vmin)
        *vmin = view->vmin;
    if (vmax)
        *vmax = view->vmax;
}

void fm_map_view_set_tool(FmMapView *view, FmMapTool tool)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    if (tool != FM_MAP_TOOL_POLYGON)
        g_clear_pointer(&view->polygon, fm_roi_free); /* an unfinished polygon is abandoned */
    view->tool = tool;
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_map_view_zoom_to_fit(FmMapView *view)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    view->fit = TRUE;
    apply_fit(view);
    gtk_widget_queue_draw(GTK_WIDGET(view));
}

void fm_map_view_set_zoom(FmMapView *view, double zoom)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    g_return_if_fail(zoom > 0);
    double aw, ah;
    map_area(view, &aw, &ah);
    fm_map_view_zoom_at(view, zoom, 0.5 * aw, 0.5 * ah);
}

double fm_map_view_get_zoom(FmMapView *view)
{
    g_return_val_if_fail(FM_IS_MAP_VIEW(view), 1.0);
    return view->zoom;
}

GPtrArray *fm_map_view_get_rois(FmMapView *view)
{
    g_return_val_if_fail(FM_IS_MAP_VIEW(view), NULL);
    return view->rois;
}

void fm_map_view_add_roi(FmMapView *view, fm_roi *roi)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    g_return_if_fail(roi != NULL);
    if (!roi->name)
        roi->name = g_strdup_printf(_("ROI %d"), view->next_number);
    view->next_number++;
    g_ptr_array_add(view->rois, roi);
    gtk_widget_queue_draw(GTK_WIDGET(view));
    fm_map_view_emit_rois_changed(view);
}

void fm_map_view_clear_rois(FmMapView *view)
{
    g_return_if_fail(FM_IS_MAP_VIEW(view));
    gboolean had_rois = view->rois->len > 0;
    g_ptr_array_set_size(view->rois, 0);
    view->selected = -1;
    view->next_number = 1;
    if (view->drag == DRAG_MOVE_ROI)
        view->drag = DRAG_NONE;
    gtk_widget_queue_draw(GTK_WIDGET(view));
    if (had_rois)
        fm_map_view_emit_rois_changed(view);
}
