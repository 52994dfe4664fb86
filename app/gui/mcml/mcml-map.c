/* Drawing of MCML's fluence map (the paper's Fig. 6): log colour scale, layer boundaries and
 * iso-fluence contours by marching squares on the log10 values. */
#include "mcml-map.h"

#include <math.h>

#include "app/core/colormap.h"

/* Where the level crosses the edge between two corner values, as a fraction from the first. */
static double cross(double a, double b, double level)
{
    return (level - a) / (b - a);
}

/* One decade's contour: each 2x2 cell of pixel centres is classified by which corners lie
 * above the level, and the crossing points on its edges are joined (saddles take one of the
 * two pairings; at this resolution the choice is invisible). */
static void contour(cairo_t *cr, const float *v, int w, int h, double level, double sx, double sy)
{
    for (int y = 0; y + 1 < h; y++)
        for (int x = 0; x + 1 < w; x++) {
            double c[4] = {v[y * w + x], v[y * w + x + 1], v[(y + 1) * w + x + 1],
                           v[(y + 1) * w + x]};
            if (!isfinite(c[0]) || !isfinite(c[1]) || !isfinite(c[2]) || !isfinite(c[3]))
                continue;
            /* corner positions (pixel centres) clockwise from top-left */
            const double px[4] = {x + 0.5, x + 1.5, x + 1.5, x + 0.5};
            const double py[4] = {y + 0.5, y + 0.5, y + 1.5, y + 1.5};
            double ex[4], ey[4];
            int n = 0;
            for (int e = 0; e < 4; e++) {
                int a = e, b = (e + 1) % 4;
                if ((c[a] >= level) != (c[b] >= level)) {
                    double t = cross(c[a], c[b], level);
                    ex[n] = px[a] + t * (px[b] - px[a]);
                    ey[n] = py[a] + t * (py[b] - py[a]);
                    n++;
                }
            }
            for (int k = 0; k + 1 < n; k += 2) {
                cairo_move_to(cr, ex[k] * sx, ey[k] * sy);
                cairo_line_to(cr, ex[k + 1] * sx, ey[k + 1] * sy);
            }
        }
    cairo_stroke(cr);
}

void fm_mcml_map_draw(cairo_t *cr, int widget_w, int widget_h, const float *v, int w, int h,
                      const double *bound_bins, int n_bounds)
{
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    cairo_paint(cr);
    if (v == NULL || w <= 0 || h <= 0)
        return;
    double vmin, vmax;
    if (!fm_percentile_range(v, (gsize)w * h, 0.5, 100.0, &vmin, &vmax))
        return;
    if (vmax <= vmin)
        vmax = vmin + 1;
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    guint8 *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            guint32 *p = (guint32 *)(px + y * stride) + x;
            float f = v[y * w + x];
            if (!isfinite(f)) {
                *p = 0;
                continue;
            }
            guint8 rgb[3];
            fm_colormap_rgb(FM_COLORMAP_MAGMA, CLAMP((f - vmin) / (vmax - vmin), 0, 1), rgb);
            *p = 0xff000000u | (guint32)rgb[0] << 16 | (guint32)rgb[1] << 8 | rgb[2];
        }
    cairo_surface_mark_dirty(img);
    double sx = (double)widget_w / w, sy = (double)widget_h / h;
    cairo_save(cr);
    cairo_scale(cr, sx, sy);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);

    cairo_set_line_width(cr, 1.0);
    cairo_set_source_rgba(cr, 1, 1, 1, 0.8);
    for (int i = 0; i < n_bounds; i++) {
        if (bound_bins[i] <= 0 || bound_bins[i] >= h)
            continue;
        cairo_move_to(cr, 0, bound_bins[i] * sy);
        cairo_line_to(cr, widget_w, bound_bins[i] * sy);
    }
    cairo_stroke(cr);
    cairo_set_source_rgba(cr, 0.3, 0.9, 1.0, 0.9);
    for (double level = ceil(vmin); level <= vmax; level += 1.0)
        contour(cr, v, w, h, level, sx, sy);
}
