/* FmMapView: Cairo view of one float map with colormap, colorbar, zoom/pan, read-out and ROIs. */
#include "app/gui/map-view.h"
#include "app/gui/map-overlays.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#define ZOOM_MIN 0.02
#define ZOOM_MAX 64.0
#define ZOOM_STEP 1.25
#define MIN_SHAPE_PX 3.0 /* drags shorter than this (screen pixels) are clicks, not shapes */

typedef enum { DRAG_NONE, DRAG_PAN, DRAG_SHAPE, DRAG_MOVE_ROI } DragKind;

struct _FmMapView {
    GtkDrawingArea parent_instance;

    float *data;
    int width, height;
    char *title, *unit;

    fm_colormap cmap;
    gboolean auto_range;
    double low_pct, high_pct;
    double vmin, vmax;

    /* Rebuilt only when data, colormap or range change; every redraw just paints it. */
    cairo_surface_t *image;
    cairo_surface_t *bar; /* 1 x 256 gradient for the colorbar */

    double zoom;               /* screen pixels per image pixel */
    double origin_x, origin_y; /* widget position of image corner (0,0) */
    gboolean fit;              /* follow the widget size until the user zooms or pans */

    FmMapTool tool;
    GPtrArray *rois; /* of fm_roi*, owned */
    int selected;    /* index into rois or -1 */
    int next_number; /* for "ROI n" names */
    fm_roi *polygon; /* polygon being clicked in, not yet in rois */
    fm_point hover;  /* image point under the pointer, for the polygon's rubber band */
    gboolean hover_valid;

    DragKind drag;
    gboolean drag_moved;
    double press_x, press_y;   /* widget coordinates of the button press */
    double start_ox, start_oy; /* origin at the press, for panning */
    fm_point shape_a, shape_b; /* image corners of the shape being dragged */
    GArray *move_start;        /* points of the ROI being moved, at the press */

    int last_x, last_y; /* last pixel reported by cursor-moved */
};

G_DEFINE_FINAL_TYPE(FmMapView, fm_map_view, GTK_TYPE_DRAWING_AREA)

enum { SIGNAL_CURSOR_MOVED, SIGNAL_ROIS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void emit_rois_changed(FmMapView *self)
{
    g_signal_emit(self, signals[SIGNAL_ROIS_CHANGED], 0);
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

static fm_point to_image(FmMapView *self, double wx, double wy)
{
    fm_point p = {(wx - self->origin_x) / self->zoom, (wy - self->origin_y) / self->zoom};
    return p;
}

static fm_point clamp_to_image(FmMapView *self, fm_point p)
{
    p.x = CLAMP(p.x, 0.0, (double)self->width);
    p.y = CLAMP(p.y, 0.0, (double)self->height);
    return p;
}

/* Zooms to the given factor keeping the image point under (wx, wy) fixed on screen. */
static void zoom_at(FmMapView *self, double zoom, double wx, double wy)
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

/* ---- input ---- */

static void report_cursor(FmMapView *self, double wx, double wy, gboolean inside_widget)
{
    int x = -1, y = -1;
    double value = NAN;
    if (inside_widget && self->data) {
        fm_point p = to_image(self, wx, wy);
        x = (int)floor(p.x);
        y = (int)floor(p.y);
        if (x >= 0 && y >= 0 && x < self->width && y < self->height)
            value = self->data[(gsize)y * self->width + x];
    }
    if (x == self->last_x && y == self->last_y && x != -1)
        return;
    self->last_x = x;
    self->last_y = y;
    g_signal_emit(self, signals[SIGNAL_CURSOR_MOVED], 0, x, y, value);
}

static void finish_polygon(FmMapView *self)
{
    fm_roi *poly = g_steal_pointer(&self->polygon);
    if (!poly)
        return;
    if (poly->points->len >= 3) {
        fm_map_view_add_roi(self, poly);
    } else {
        fm_roi_free(poly); /* fewer than 3 vertices enclose nothing */
        gtk_widget_queue_draw(GTK_WIDGET(self));
    }
}

static int roi_at(FmMapView *self, fm_point p)
{
    for (int i = (int)self->rois->len - 1; i >= 0; i--) /* topmost (latest) first */
        if (fm_map_roi_contains(g_ptr_array_index(self->rois, i), p))
            return i;
    return -1;
}

static gboolean fm_map_view_button_press(GtkWidget *widget, GdkEventButton *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    gtk_widget_grab_focus(widget);
    if (!self->data || self->drag != DRAG_NONE)
        return GDK_EVENT_PROPAGATE;
    fm_point p = to_image(self, event->x, event->y);
    self->press_x = event->x;
    self->press_y = event->y;
    self->drag_moved = FALSE;

    if (event->button == GDK_BUTTON_MIDDLE ||
        (event->button == GDK_BUTTON_PRIMARY && self->tool == FM_MAP_TOOL_PAN &&
         event->type == GDK_BUTTON_PRESS)) {
        int hit = event->button == GDK_BUTTON_PRIMARY ? roi_at(self, p) : -1;
        if (hit >= 0) {
            fm_roi *roi = g_ptr_array_index(self->rois, hit);
            self->selected = hit;
            self->drag = DRAG_MOVE_ROI;
            g_clear_pointer(&self->move_start, g_array_unref);
            self->move_start = g_array_copy(roi->points);
            self->shape_a = p;
            gtk_widget_queue_draw(widget);
        } else {
            self->drag = DRAG_PAN;
            self->start_ox = self->origin_x;
            self->start_oy = self->origin_y;
        }
        return GDK_EVENT_STOP;
    }
    if (event->button != GDK_BUTTON_PRIMARY)
        return GDK_EVENT_PROPAGATE;

    switch (self->tool) {
    case FM_MAP_TOOL_RECTANGLE:
    case FM_MAP_TOOL_ELLIPSE:
        if (event->type != GDK_BUTTON_PRESS)
            break;
        self->drag = DRAG_SHAPE;
        self->shape_a = self->shape_b = clamp_to_image(self, p);
        break;
    case FM_MAP_TOOL_POLYGON:
        if (event->type == GDK_2BUTTON_PRESS) {
            /* Both presses of the double-click already added this vertex; keep one. */
            if (self->polygon && self->polygon->points->len >= 2)
                g_array_set_size(self->polygon->points, self->polygon->points->len - 1);
            finish_polygon(self);
        } else if (event->type == GDK_BUTTON_PRESS) {
            if (!self->polygon) {
                g_autofree char *name = g_strdup_printf(_("ROI %d"), self->next_number);
                self->polygon = fm_roi_new(FM_ROI_POLYGON, name);
            }
            fm_point q = clamp_to_image(self, p);
            fm_roi_add_point(self->polygon, q.x, q.y);
            gtk_widget_queue_draw(widget);
        }
        break;
    case FM_MAP_TOOL_PAN:
        break;
    }
    return GDK_EVENT_STOP;
}

static gboolean fm_map_view_motion(GtkWidget *widget, GdkEventMotion *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    report_cursor(self, event->x, event->y, TRUE);
    if (!self->data)
        return GDK_EVENT_PROPAGATE;
    fm_point p = to_image(self, event->x, event->y);
    if (hypot(event->x - self->press_x, event->y - self->press_y) >= MIN_SHAPE_PX)
        self->drag_moved = TRUE;

    switch (self->drag) {
    case DRAG_PAN:
        self->origin_x = self->start_ox + event->x - self->press_x;
        self->origin_y = self->start_oy + event->y - self->press_y;
        self->fit = FALSE;
        break;
    case DRAG_SHAPE:
        self->shape_b = clamp_to_image(self, p);
        break;
    case DRAG_MOVE_ROI: {
        fm_roi *roi = g_ptr_array_index(self->rois, self->selected);
        double dx = p.x - self->shape_a.x, dy = p.y - self->shape_a.y;
        for (guint i = 0; i < roi->points->len; i++) {
            fm_point *dst = &g_array_index(roi->points, fm_point, i);
            const fm_point *src = &g_array_index(self->move_start, fm_point, i);
            dst->x = src->x + dx;
            dst->y = src->y + dy;
        }
        break;
    }
    case DRAG_NONE:
        if (!self->polygon)
            return GDK_EVENT_PROPAGATE;
        self->hover = clamp_to_image(self, p);
        self->hover_valid = TRUE;
        break;
    }
    gtk_widget_queue_draw(widget);
    return GDK_EVENT_STOP;
}

static gboolean fm_map_view_button_release(GtkWidget *widget, GdkEventButton *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    DragKind drag = self->drag;
    self->drag = DRAG_NONE;
    switch (drag) {
    case DRAG_SHAPE:
        if (self->drag_moved && fabs(self->shape_b.x - self->shape_a.x) > 0 &&
            fabs(self->shape_b.y - self->shape_a.y) > 0) {
            g_autofree char *name = g_strdup_printf(_("ROI %d"), self->next_number);
            fm_point a = self->shape_a, b = self->shape_b;
            fm_map_view_add_roi(self, self->tool == FM_MAP_TOOL_ELLIPSE
                                          ? fm_roi_new_ellipse(name, a.x, a.y, b.x, b.y)
                                          : fm_roi_new_rectangle(name, a.x, a.y, b.x, b.y));
        }
        break;
    case DRAG_MOVE_ROI:
        if (self->drag_moved)
            emit_rois_changed(self);
        break;
    case DRAG_PAN:
        if (!self->drag_moved && event->button == GDK_BUTTON_PRIMARY)
            self->selected = -1; /* a plain click on empty map clears the selection */
        break;
    case DRAG_NONE:
        return GDK_EVENT_PROPAGATE;
    }
    gtk_widget_queue_draw(widget);
    return GDK_EVENT_STOP;
}

static gboolean fm_map_view_scroll(GtkWidget *widget, GdkEventScroll *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    if (!self->data)
        return GDK_EVENT_PROPAGATE;
    double steps = 0.0;
    if (event->direction == GDK_SCROLL_UP)
        steps = 1.0;
    else if (event->direction == GDK_SCROLL_DOWN)
        steps = -1.0;
    else if (event->direction == GDK_SCROLL_SMOOTH)
        steps = -event->delta_y;
    if (steps == 0.0)
        return GDK_EVENT_PROPAGATE;
    zoom_at(self, self->zoom * pow(ZOOM_STEP, steps), event->x, event->y);
    return GDK_EVENT_STOP;
}

static gboolean fm_map_view_leave(GtkWidget *widget, GdkEventCrossing *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    report_cursor(self, 0, 0, FALSE);
    if (self->hover_valid) {
        self->hover_valid = FALSE;
        gtk_widget_queue_draw(widget);
    }
    return GDK_EVENT_PROPAGATE;
}

static gboolean fm_map_view_key_press(GtkWidget *widget, GdkEventKey *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    switch (event->keyval) {
    case GDK_KEY_Return:
    case GDK_KEY_KP_Enter:
        if (!self->polygon)
            return GDK_EVENT_PROPAGATE;
        finish_polygon(self);
        return GDK_EVENT_STOP;
    case GDK_KEY_Escape:
        if (!self->polygon && self->drag != DRAG_SHAPE)
            return GDK_EVENT_PROPAGATE;
        g_clear_pointer(&self->polygon, fm_roi_free);
        if (self->drag == DRAG_SHAPE)
            self->drag = DRAG_NONE;
        gtk_widget_queue_draw(widget);
        return GDK_EVENT_STOP;
    case GDK_KEY_Delete:
    case GDK_KEY_KP_Delete:
    case GDK_KEY_BackSpace:
        if (self->polygon) { /* while clicking a polygon, take back the last vertex */
            g_array_set_size(self->polygon->points, self->polygon->points->len - 1);
            if (self->polygon->points->len == 0)
                g_clear_pointer(&self->polygon, fm_roi_free);
            gtk_widget_queue_draw(widget);
            return GDK_EVENT_STOP;
        }
        if (self->rois->len == 0 || self->drag != DRAG_NONE)
            return GDK_EVENT_PROPAGATE;
        g_ptr_array_remove_index(self->rois,
                                 self->selected >= 0 ? (guint)self->selected : self->rois->len - 1);
        self->selected = -1;
        gtk_widget_queue_draw(widget);
        emit_rois_changed(self);
        return GDK_EVENT_STOP;
    default:
        return GDK_EVENT_PROPAGATE;
    }
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
    zoom_at(view, zoom, 0.5 * aw, 0.5 * ah);
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
    emit_rois_changed(view);
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
        emit_rois_changed(view);
}
