/* FmMapView private: the instance struct and helpers shared by map-view.c and map-view-input.c. */
#pragma once

#include "app/gui/map-view.h"

G_BEGIN_DECLS

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

static inline fm_point to_image(FmMapView *self, double wx, double wy)
{
    fm_point p = {(wx - self->origin_x) / self->zoom, (wy - self->origin_y) / self->zoom};
    return p;
}

static inline fm_point clamp_to_image(FmMapView *self, fm_point p)
{
    p.x = CLAMP(p.x, 0.0, (double)self->width);
    p.y = CLAMP(p.y, 0.0, (double)self->height);
    return p;
}

/* map-view.c */
void fm_map_view_emit_rois_changed(FmMapView *self);
void fm_map_view_emit_cursor_moved(FmMapView *self, int x, int y, double value);
void fm_map_view_zoom_at(FmMapView *self, double zoom, double wx, double wy);

/* map-view-input.c: GtkWidget event handlers */
gboolean fm_map_view_button_press(GtkWidget *widget, GdkEventButton *event);
gboolean fm_map_view_motion(GtkWidget *widget, GdkEventMotion *event);
gboolean fm_map_view_button_release(GtkWidget *widget, GdkEventButton *event);
gboolean fm_map_view_scroll(GtkWidget *widget, GdkEventScroll *event);
gboolean fm_map_view_leave(GtkWidget *widget, GdkEventCrossing *event);
gboolean fm_map_view_key_press(GtkWidget *widget, GdkEventKey *event);

G_END_DECLS
