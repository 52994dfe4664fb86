/* Drawing helpers for FmMapView: the colorbar and ROI outlines, labels and hit tests. */
#include "app/gui/map-overlays.h"

#include <math.h>

#define BAR_GAP 10.0 /* between the map area and the bar */
#define BAR_WIDTH 16.0
#define BAR_MARGIN 24.0 /* above and below the bar, room for the end labels */

/* Outline colours for successive ROIs, chosen to stand out on every colormap. */
static const double roi_colours[][3] = {
    {1.00, 0.27, 0.27}, {0.27, 0.85, 1.00}, {1.00, 0.60, 0.10},
    {0.95, 0.30, 0.95}, {1.00, 1.00, 1.00}, {0.55, 1.00, 0.30},
};

const double *fm_map_roi_colour(guint index)
{
    return roi_colours[index % G_N_ELEMENTS(roi_colours)];
}

static void to_widget(const FmMapTransform *t, fm_point p, double *wx, double *wy)
{
    *wx = t->origin_x + p.x * t->zoom;
    *wy = t->origin_y + p.y * t->zoom;
}

gboolean fm_map_roi_contains(const fm_roi *roi, fm_point p)
{
    if (roi->kind == FM_ROI_MASK) {
        int i = (int)floor(p.x), j = (int)floor(p.y);
        return i >= 0 && j >= 0 && i < roi->mask_width && j < roi->mask_height &&
               roi->mask[(gsize)j * roi->mask_width + i];
    }
    if (roi->points->len < 2)
        return FALSE;
    const fm_point *pts = (const fm_point *)roi->points->data;
    double x0 = MIN(pts[0].x, pts[1].x), x1 = MAX(pts[0].x, pts[1].x);
    double y0 = MIN(pts[0].y, pts[1].y), y1 = MAX(pts[0].y, pts[1].y);
    switch (roi->kind) {
    case FM_ROI_RECTANGLE:
        return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1;
    case FM_ROI_ELLIPSE: {
        double rx = 0.5 * (x1 - x0), ry = 0.5 * (y1 - y0);
        if (rx <= 0 || ry <= 0)
            return FALSE;
        double dx = (p.x - 0.5 * (x0 + x1)) / rx, dy = (p.y - 0.5 * (y0 + y1)) / ry;
        return dx * dx + dy * dy <= 1.0;
    }
    case FM_ROI_MASK:
        break;
    case FM_ROI_POLYGON: {
        gboolean inside = FALSE; /* even-odd ray casting */
        guint n = roi->points->len;
        for (guint i = 0, j = n - 1; i < n; j = i++) {
            if ((pts[i].y > p.y) != (pts[j].y > p.y) &&
                p.x < (pts[j].x - pts[i].x) * (p.y - pts[i].y) / (pts[j].y - pts[i].y) + pts[i].x)
                inside = !inside;
        }
        return inside;
    }
    }
    return FALSE;
}

/* The edges between inside and outside pixels of a mask ROI, one segment per pixel side. */
static void mask_path(cairo_t *cr, const FmMapTransform *t, const fm_roi *roi)
{
    const int w = roi->mask_width, h = roi->mask_height;
#define INSIDE(i, j) ((i) >= 0 && (j) >= 0 && (i) < w && (j) < h && roi->mask[(gsize)(j)*w + (i)])
    for (int j = 0; j < h; j++) {
        for (int i = 0; i < w; i++) {
            if (!INSIDE(i, j))
                continue;
            /* each side (from, to) of the pixel whose neighbour across it is outside */
            const int sides[4][5] = {
                {i, j - 1, 0, 0, 1}, {i, j + 1, 0, 1, 1}, {i - 1, j, 0, 0, 0}, {i + 1, j, 1, 0, 0}};
            for (int s = 0; s < 4; s++) {
                if (INSIDE(sides[s][0], sides[s][1]))
                    continue;
                double ax, ay, bx, by;
                fm_point a = {i + sides[s][2], j + sides[s][3]};
                fm_point b = {a.x + (sides[s][4] ? 1 : 0), a.y + (sides[s][4] ? 0 : 1)};
                to_widget(t, a, &ax, &ay);
                to_widget(t, b, &bx, &by);
                cairo_move_to(cr, ax, ay);
                cairo_line_to(cr, bx, by);
            }
        }
    }
#undef INSIDE
}

void fm_map_roi_path(cairo_t *cr, const FmMapTransform *t, const fm_roi *roi, gboolean close)
{
    if (roi->kind == FM_ROI_MASK) {
        mask_path(cr, t, roi);
        return;
    }
    const fm_point *pts = (const fm_point *)roi->points->data;
    guint n = roi->points->len;
    double ax, ay, bx, by;
    if (roi->kind == FM_ROI_POLYGON) {
        for (guint i = 0; i < n; i++) {
            to_widget(t, pts[i], &ax, &ay);
            if (i == 0)
                cairo_move_to(cr, ax, ay);
            else
                cairo_line_to(cr, ax, ay);
        }
        if (close && n > 0)
            cairo_close_path(cr);
        return;
    }
    if (n < 2)
        return;
    to_widget(t, pts[0], &ax, &ay);
    to_widget(t, pts[1], &bx, &by);
    double x = MIN(ax, bx), y = MIN(ay, by), w = fabs(bx - ax), h = fabs(by - ay);
    if (roi->kind == FM_ROI_RECTANGLE) {
        cairo_rectangle(cr, x, y, w, h);
    } else if (w > 0 && h > 0) {
        /* The path is fixed at creation, so the later stroke width stays uniform. */
        cairo_save(cr);
        cairo_translate(cr, x + 0.5 * w, y + 0.5 * h);
        cairo_scale(cr, 0.5 * w, 0.5 * h);
        cairo_new_sub_path(cr);
        cairo_arc(cr, 0, 0, 1, 0, 2 * G_PI);
        cairo_restore(cr);
    }
}

/* A dark halo under the colour keeps the outline readable on bright and dark regions alike. */
void fm_map_stroke_outline(cairo_t *cr, const double rgb[3], double width, gboolean dashed)
{
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_source_rgba(cr, 0, 0, 0, 0.6);
    cairo_set_line_width(cr, width + 2);
    cairo_stroke_preserve(cr);
    if (dashed) {
        double dash[] = {6, 4};
        cairo_set_dash(cr, dash, 2, 0);
    }
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, width);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
}

void fm_map_roi_label(GtkWidget *widget, cairo_t *cr, const FmMapTransform *t, const fm_roi *roi,
                      const double rgb[3])
{
    double x0, y0, x1, y1;
    if (!roi->name || !fm_roi_bounds(roi, &x0, &y0, &x1, &y1))
        return;
    fm_point top_left = {x0, y0};
    double x, y;
    to_widget(t, top_left, &x, &y);
    PangoLayout *layout = gtk_widget_create_pango_layout(widget, roi->name);
    int w, h;
    pango_layout_get_pixel_size(layout, &w, &h);
    y = MAX(y - h - 2, 0);
    /* a tag in the ROI's colour with black or white text: readable over any map colours (red
     * text on a thin backdrop vanished over a red hot spot) */
    cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], 0.92);
    cairo_rectangle(cr, x - 2, y, w + 4, h);
    cairo_fill(cr);
    double luminance = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2];
    double ink = luminance > 0.5 ? 0.0 : 1.0;
    cairo_set_source_rgb(cr, ink, ink, ink);
    cairo_move_to(cr, x, y);
    pango_cairo_show_layout(cr, layout);
    cairo_new_path(cr);
    g_object_unref(layout);
}

static char *colorbar_title(const FmColorbar *bar)
{
    const char *title = bar->title ? bar->title : "";
    if (bar->unit && *bar->unit)
        return g_strdup_printf("%s [%s]", title, bar->unit);
    return g_strdup(title);
}

/* Labels top to bottom: max, mid, min. */
static void tick_labels(const FmColorbar *bar, char labels[3][32])
{
    double values[3] = {bar->vmax, 0.5 * (bar->vmin + bar->vmax), bar->vmin};
    for (int i = 0; i < 3; i++)
        g_snprintf(labels[i], sizeof labels[i], "%.4g", values[i]);
}

static int widest_label(PangoLayout *layout, char labels[3][32])
{
    int label_w = 0, w, h;
    for (int i = 0; i < 3; i++) {
        pango_layout_set_text(layout, labels[i], -1);
        pango_layout_get_pixel_size(layout, &w, &h);
        label_w = MAX(label_w, w);
    }
    return label_w;
}

/* Measured rather than fixed, so long labels and titles never clip. */
double fm_colorbar_width(GtkWidget *widget, const FmColorbar *bar)
{
    PangoLayout *layout = gtk_widget_create_pango_layout(widget, NULL);
    char labels[3][32];
    tick_labels(bar, labels);
    int label_w = widest_label(layout, labels), w, h;
    g_autofree char *title = colorbar_title(bar);
    pango_layout_set_text(layout, title, -1);
    pango_layout_get_pixel_size(layout, &w, &h);
    g_object_unref(layout);
    return BAR_GAP + BAR_WIDTH + 4 + label_w + 8 + (*title ? h + 6 : 0);
}

void fm_colorbar_draw(GtkWidget *widget, cairo_t *cr, const FmColorbar *bar, double x,
                      double height)
{
    x += BAR_GAP;
    double top = BAR_MARGIN, bar_h = MAX(10.0, height - 2 * BAR_MARGIN);
    cairo_save(cr);
    cairo_rectangle(cr, x, top, BAR_WIDTH, bar_h);
    cairo_clip(cr);
    cairo_translate(cr, x, top);
    cairo_scale(cr, BAR_WIDTH, bar_h / 256.0);
    cairo_set_source_surface(cr, bar->gradient, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_GOOD);
    cairo_pattern_set_extend(cairo_get_source(cr), CAIRO_EXTEND_PAD);
    cairo_paint(cr);
    cairo_restore(cr);

    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    GdkRGBA fg;
    gtk_style_context_get_color(style, gtk_style_context_get_state(style), &fg);
    gdk_cairo_set_source_rgba(cr, &fg);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, x + 0.5, top + 0.5, BAR_WIDTH - 1, bar_h - 1);
    cairo_stroke(cr);

    PangoLayout *layout = gtk_widget_create_pango_layout(widget, NULL);
    char labels[3][32];
    tick_labels(bar, labels);
    double label_x = x + BAR_WIDTH + 4;
    int label_w = widest_label(layout, labels), w, h;
    for (int i = 0; i < 3; i++) {
        double y = top + bar_h * i / 2.0;
        cairo_move_to(cr, x + BAR_WIDTH, y);
        cairo_line_to(cr, x + BAR_WIDTH + 3, y);
        cairo_stroke(cr);
        pango_layout_set_text(layout, labels[i], -1);
        pango_layout_get_pixel_size(layout, &w, &h);
        cairo_move_to(cr, label_x, y - 0.5 * h);
        pango_cairo_show_layout(cr, layout);
        cairo_new_path(cr);
    }
    g_autofree char *title = colorbar_title(bar);
    if (*title) { /* rotated, reading bottom to top, centred on the bar */
        pango_layout_set_text(layout, title, -1);
        pango_layout_get_pixel_size(layout, &w, &h);
        cairo_save(cr);
        cairo_translate(cr, label_x + label_w + 8, top + 0.5 * bar_h + 0.5 * w);
        cairo_rotate(cr, -G_PI / 2);
        cairo_move_to(cr, 0, 0);
        pango_cairo_show_layout(cr, layout);
        cairo_restore(cr);
        cairo_new_path(cr);
    }
    g_object_unref(layout);
}
