/* Drawing of MCML's fluence map (the paper's Fig. 6): log colour scale with a decade colorbar,
 * r and z axes in cm laid out by plot-layout.c, layer boundaries and iso-fluence contours by
 * marching squares on the log10 values. */
#include "mcml-map.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/gui/cairo-util.h"
#include "app/gui/plot-layout.h"

#define BAR_GAP 12   /* between the map and the colorbar */
#define BAR_WIDTH 12 /* the gradient strip */
#define BAR_TICK 3
#define BAR_PAD 4 /* between the strip, its labels and its title */
#define MAX_DECADES 16

/* ---- colorbar texts ---- */

/* "10⁻³": a decade as people write it. */
static void decade_label(int decade, char *out, gsize size)
{
    static const char *const digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    GString *s = g_string_new("10");
    if (decade < 0)
        g_string_append(s, "⁻");
    char num[16];
    g_snprintf(num, sizeof num, "%d", ABS(decade));
    for (const char *c = num; *c; c++)
        g_string_append(s, digits[*c - '0']);
    g_strlcpy(out, s->str, size);
    g_string_free(s, TRUE);
}

static const char *bar_title(void)
{
    return _("Φ [1/cm²]");
}

/* The decades the colorbar labels for a range of log10 values: every one when they fit, else
 * every second or fifth. */
static int bar_decades(double vmin, double vmax, double bar_h, double text_h, int out[])
{
    int first = (int)ceil(vmin - 1e-9), last = (int)floor(vmax + 1e-9);
    int n_all = MAX(last - first + 1, 0), step = 1;
    while (n_all / step > MAX(1, (int)(bar_h / (1.6 * text_h))) || n_all / step > MAX_DECADES)
        step = step == 1 ? 2 : step == 2 ? 5 : step * 2;
    int n = 0;
    for (int d = last; d >= first && n < MAX_DECADES; d -= step)
        out[n++] = d;
    return n;
}

static double bar_text_width(PangoLayout *pango, double *title_h)
{
    double widest = 0, w, h;
    char label[32];
    for (int d = -9; d <= 9; d += 9) { /* "10⁻⁹" is as wide as labels get */
        decade_label(d, label, sizeof label);
        fm_cairo_plot_measure(pango, FM_PLOT_TEXT_TICK, label, &w, &h);
        widest = MAX(widest, w);
    }
    fm_cairo_plot_measure(pango, FM_PLOT_TEXT_AXIS_LABEL, bar_title(), &w, title_h);
    return widest;
}

/* ---- layout ---- */

static GdkRectangle rect_of(const FmPlotBox *b)
{
    return (GdkRectangle){(int)floor(b->x), (int)floor(b->y), (int)ceil(b->width),
                          (int)ceil(b->height)};
}

static void grow(GdkRectangle *r, const FmPlotBox *b)
{
    if (!(b->width > 0 && b->height > 0))
        return;
    GdkRectangle add = rect_of(b);
    if (r->width <= 0 || r->height <= 0)
        *r = add;
    else
        gdk_rectangle_union(r, &add, r);
}

/* Depth grows downwards: the layout puts lo at the bottom, so its y axis is mirrored inside the
 * data box (tick positions and label boxes alike). */
static void mirror_y(FmPlotLayout *l)
{
    const double sum = 2 * l->data.y + l->data.height;
    FmPlotAxis *a = &l->y;
    double lo = a->px_lo;
    a->px_lo = sum - a->px_hi;
    a->px_hi = sum - lo;
    for (int i = 0; i < a->n_ticks; i++) {
        a->ticks[i].px = sum - a->ticks[i].px;
        if (a->ticks[i].box.height > 0)
            a->ticks[i].box.y = sum - (a->ticks[i].box.y + a->ticks[i].box.height);
    }
}

/* Lays out into pl (in a frame moved by *dx, *dy in the widget: the map and its axes are
 * centred as one) and out (widget coordinates). */
static void compute(int width, int height, double r_cm, double z_cm, PangoLayout *pango,
                    FmPlotLayout *pl, FmMcmlMapLayout *out, double *dx, double *dy)
{
    memset(out, 0, sizeof *out);
    double title_h = 0;
    double label_w = bar_text_width(pango, &title_h);
    double bar_w = BAR_GAP + BAR_WIDTH + BAR_TICK + BAR_PAD + label_w + BAR_PAD + title_h + 2;
    FmPlotSpec spec = {
        .width = MAX(width - bar_w, 1),
        .height = height,
        .x = {0, r_cm, FALSE, _("r [cm]")},
        .y = {0, z_cm, FALSE, _("depth z [cm]")},
        .aspect = 1.0, /* one cm is as long across as down */
        .min_data_width = 60,
        .min_data_height = 40,
        .measure = fm_cairo_plot_measure,
        .measure_user = pango,
    };
    fm_plot_layout_compute(&spec, pl);
    /* A grid far from square would leave most of the space empty: then fill it, each axis on
     * its own scale (the tick labels stay true). */
    double true_area = pl->data.width * pl->data.height;
    FmPlotLayout free_layout = {0};
    spec.aspect = 0;
    fm_plot_layout_compute(&spec, &free_layout);
    *dx = *dy = 0;
    if (true_area < 0.5 * free_layout.data.width * free_layout.data.height) {
        fm_plot_layout_clear(pl);
        *pl = free_layout;
        out->stretched = TRUE;
    } else {
        /* at its aspect the map leaves room on two sides: lay out again in a frame that much
         * smaller, so that the axis titles stay next to their ticks, and centre that frame */
        double slack_w = floor(free_layout.data.width - pl->data.width);
        double slack_h = floor(free_layout.data.height - pl->data.height);
        fm_plot_layout_clear(&free_layout);
        if (slack_w >= 2 || slack_h >= 2) {
            spec.aspect = 1.0;
            spec.width -= slack_w;
            spec.height -= slack_h;
            fm_plot_layout_clear(pl);
            fm_plot_layout_compute(&spec, pl);
            *dx = floor(slack_w / 2);
            *dy = floor(slack_h / 2);
        }
    }
    mirror_y(pl);

    out->map = rect_of(&pl->data);
    double bx = pl->data.x + pl->data.width + BAR_GAP;
    out->colorbar = (GdkRectangle){(int)round(bx), out->map.y, BAR_WIDTH, out->map.height};
    out->bar_text =
        (GdkRectangle){out->colorbar.x + BAR_WIDTH, out->map.y - (int)ceil(title_h / 2),
                       (int)ceil(bar_w - BAR_GAP - BAR_WIDTH), out->map.height + (int)title_h};
    for (int i = 0; i < pl->x.n_ticks; i++)
        grow(&out->r_axis, &pl->x.ticks[i].box);
    grow(&out->r_axis, &pl->x_label.box);
    for (int i = 0; i < pl->y.n_ticks; i++)
        grow(&out->z_axis, &pl->y.ticks[i].box);
    grow(&out->z_axis, &pl->y_label.box);
    GdkRectangle *rects[] = {&out->map, &out->colorbar, &out->r_axis, &out->z_axis, &out->bar_text};
    for (gsize i = 0; i < G_N_ELEMENTS(rects); i++) {
        rects[i]->x += (int)*dx;
        rects[i]->y += (int)*dy;
    }
}

void fm_mcml_map_layout(GtkWidget *widget, int width, int height, double r_cm, double z_cm,
                        FmMcmlMapLayout *layout)
{
    PangoLayout *pango = fm_cairo_plot_pango(widget, NULL);
    FmPlotLayout pl = {0};
    double dx, dy;
    (void)widget;
    compute(width, height, r_cm > 0 ? r_cm : 1, z_cm > 0 ? z_cm : 1, pango, &pl, layout, &dx, &dy);
    fm_plot_layout_clear(&pl);
    g_object_unref(pango);
}

/* ---- drawing ---- */

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

/* The 3 x 3 mean of the finite values around each bin: the decades' contours follow the map's
 * trend rather than each photon's noise far from the source (the colours show the raw bins). */
static float *smoothed(const float *v, int w, int h)
{
    float *out = g_new(float, (gsize)w *h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            double sum = 0;
            int n = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int xx = x + dx, yy = y + dy;
                    if (xx < 0 || yy < 0 || xx >= w || yy >= h)
                        continue;
                    float f = v[(gsize)yy * w + xx];
                    if (isfinite(f)) {
                        sum += f;
                        n++;
                    }
                }
            out[(gsize)y * w + x] = isfinite(v[(gsize)y * w + x]) && n ? (float)(sum / n) : NAN;
        }
    return out;
}

static cairo_surface_t *colour_image(const float *v, int w, int h, double vmin, double vmax)
{
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    guint8 *px = cairo_image_surface_get_data(img);
    int stride = cairo_image_surface_get_stride(img);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            guint32 *p = (guint32 *)(px + y * stride) + x;
            float f = v[y * w + x];
            if (!isfinite(f)) { /* no photon there: shown as the scale's bottom */
                *p = 0;
                continue;
            }
            guint8 rgb[3];
            fm_colormap_rgb(FM_COLORMAP_MAGMA, CLAMP((f - vmin) / (vmax - vmin), 0, 1), rgb);
            *p = 0xff000000u | (guint32)rgb[0] << 16 | (guint32)rgb[1] << 8 | rgb[2];
        }
    cairo_surface_mark_dirty(img);
    return img;
}

static void draw_colorbar(cairo_t *cr, PangoLayout *pango, const FmMcmlMapLayout *l, double vmin,
                          double vmax, const GdkRGBA *fg)
{
    const GdkRectangle *b = &l->colorbar;
    for (int y = 0; y < b->height; y++) { /* top is vmax */
        guint8 rgb[3];
        fm_colormap_rgb(FM_COLORMAP_MAGMA, 1.0 - (y + 0.5) / b->height, rgb);
        cairo_set_source_rgb(cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
        cairo_rectangle(cr, b->x, b->y + y, b->width, 1);
        cairo_fill(cr);
    }
    gdk_cairo_set_source_rgba(cr, fg);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, b->x + 0.5, b->y + 0.5, b->width - 1, b->height - 1);
    cairo_stroke(cr);
    double tw, th;
    fm_cairo_plot_measure(pango, FM_PLOT_TEXT_TICK, "10", &tw, &th);
    int decades[MAX_DECADES];
    int n = bar_decades(vmin, vmax, b->height, th, decades);
    double label_x = b->x + b->width + BAR_TICK + BAR_PAD, widest = 0;
    for (int i = 0; i < n; i++) {
        double y = b->y + b->height * (vmax - decades[i]) / (vmax - vmin);
        cairo_move_to(cr, b->x + b->width, round(y) + 0.5);
        cairo_line_to(cr, b->x + b->width + BAR_TICK, round(y) + 0.5);
        cairo_stroke(cr);
        char label[32];
        decade_label(decades[i], label, sizeof label);
        fm_cairo_plot_measure(pango, FM_PLOT_TEXT_TICK, label, &tw, &th);
        widest = MAX(widest, tw);
        y = CLAMP(y - th / 2, b->y - th / 2, b->y + b->height - th / 2);
        cairo_move_to(cr, label_x, y);
        pango_layout_set_text(pango, label, -1);
        pango_cairo_show_layout(cr, pango);
    }
    /* the title reads bottom to top beside the labels, centred on the bar */
    fm_cairo_plot_measure(pango, FM_PLOT_TEXT_AXIS_LABEL, bar_title(), &tw, &th);
    double title_x = l->bar_text.x + l->bar_text.width - th;
    cairo_save(cr);
    cairo_translate(cr, title_x, b->y + 0.5 * (b->height + MIN(tw, b->height)));
    cairo_rotate(cr, -G_PI / 2);
    cairo_move_to(cr, 0, 0);
    pango_layout_set_text(pango, bar_title(), -1);
    if (tw > b->height) { /* a short map: the title ellipsizes rather than leaving the widget */
        pango_layout_set_width(pango, b->height * PANGO_SCALE);
        pango_layout_set_ellipsize(pango, PANGO_ELLIPSIZE_END);
    }
    pango_cairo_show_layout(cr, pango);
    pango_layout_set_width(pango, -1);
    pango_layout_set_ellipsize(pango, PANGO_ELLIPSIZE_NONE);
    cairo_restore(cr);
}

void fm_mcml_map_draw(GtkWidget *widget, cairo_t *cr, const float *v, int w, int h, double dr_cm,
                      double dz_cm, const double *bound_bins, int n_bounds)
{
    int width = gtk_widget_get_allocated_width(widget);
    int height = gtk_widget_get_allocated_height(widget);
    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    GdkRGBA fg;
    gtk_style_context_get_color(style, gtk_style_context_get_state(style), &fg);
    PangoLayout *pango = fm_cairo_plot_pango(widget, cr);
    /* MCML's last row and column collect everything beyond the grid: not part of the map; nor
     * are the rows below the deepest layer (the medium below is not simulated) */
    int stride = w;
    if (w > 1)
        w--;
    if (h > 1)
        h--;
    if (n_bounds > 0 && bound_bins[n_bounds - 1] > 1)
        h = MIN(h, (int)ceil(bound_bins[n_bounds - 1] - 1e-6));
    g_autofree float *inside = v && w > 0 && h > 0 ? g_new(float, (gsize)w *h) : NULL;
    for (int y = 0; inside && y < h; y++)
        memcpy(inside + (gsize)y * w, v + (gsize)y * stride, w * sizeof(float));
    v = inside;
    double vmin = 0, vmax = 1;
    gboolean have = v != NULL && fm_percentile_range(v, (gsize)w * h, 0.5, 100.0, &vmin, &vmax);
    if (!have) {
        gdk_cairo_set_source_rgba(cr, &fg);
        fm_cairo_text(widget, cr, width / 2.0, height / 2.0,
                      _("Run the simulation to see the fluence Φ(r, z)."), 0.5, 0.5);
        g_object_unref(pango);
        return;
    }
    if (vmax <= vmin)
        vmax = vmin + 1;
    FmPlotLayout pl = {0};
    FmMcmlMapLayout l;
    double dx, dy;
    compute(width, height, w * dr_cm, h * dz_cm, pango, &pl, &l, &dx, &dy);

    cairo_save(cr);
    cairo_translate(cr, dx, dy);
    cairo_save(cr);
    cairo_rectangle(cr, pl.data.x, pl.data.y, pl.data.width, pl.data.height);
    cairo_clip(cr);
    guint8 bottom[3];
    fm_colormap_rgb(FM_COLORMAP_MAGMA, 0, bottom);
    cairo_set_source_rgb(cr, bottom[0] / 255.0, bottom[1] / 255.0, bottom[2] / 255.0);
    cairo_paint(cr);
    cairo_translate(cr, pl.data.x, pl.data.y);
    double sx = pl.data.width / w, sy = pl.data.height / h;
    cairo_surface_t *img = colour_image(v, w, h, vmin, vmax);
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
        cairo_line_to(cr, pl.data.width, bound_bins[i] * sy);
    }
    cairo_stroke(cr);
    cairo_set_source_rgba(cr, 0.3, 0.9, 1.0, 0.9);
    g_autofree float *smooth = smoothed(v, w, h);
    for (double level = ceil(vmin); level <= vmax; level += 1.0)
        contour(cr, smooth, w, h, level, sx, sy);
    cairo_restore(cr);

    FmPlotColours colours;
    fm_plot_colours_from_style(widget, &colours);
    fm_cairo_plot_axes(cr, pango, &pl, &colours);
    cairo_restore(cr);
    draw_colorbar(cr, pango, &l, vmin, vmax, &fg);
    fm_plot_layout_clear(&pl);
    g_object_unref(pango);
}
