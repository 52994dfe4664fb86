/* FmMapView input: pointer, scroll and keyboard handling for zoom/pan, read-out and ROI editing. */
#include "app/gui/map-view-private.h"
#include "app/gui/map-overlays.h"

#include <glib/gi18n.h>
#include <math.h>

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
    fm_map_view_emit_cursor_moved(self, x, y, value);
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

gboolean fm_map_view_button_press(GtkWidget *widget, GdkEventButton *event)
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

gboolean fm_map_view_motion(GtkWidget *widget, GdkEventMotion *event)
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

gboolean fm_map_view_button_release(GtkWidget *widget, GdkEventButton *event)
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
            fm_map_view_emit_rois_changed(self);
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

gboolean fm_map_view_scroll(GtkWidget *widget, GdkEventScroll *event)
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
    fm_map_view_zoom_at(self, self->zoom * pow(ZOOM_STEP, steps), event->x, event->y);
    return GDK_EVENT_STOP;
}

gboolean fm_map_view_leave(GtkWidget *widget, GdkEventCrossing *event)
{
    FmMapView *self = FM_MAP_VIEW(widget);
    report_cursor(self, 0, 0, FALSE);
    if (self->hover_valid) {
        self->hover_valid = FALSE;
        gtk_widget_queue_draw(widget);
    }
    return GDK_EVENT_PROPAGATE;
}

gboolean fm_map_view_key_press(GtkWidget *widget, GdkEventKey *event)
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
        fm_map_view_emit_rois_changed(self);
        return GDK_EVENT_STOP;
    default:
        return GDK_EVENT_PROPAGATE;
    }
}
