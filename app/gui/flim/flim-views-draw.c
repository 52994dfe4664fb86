/* FmFlimViews drawing: the lifetime merge image with its 2-D legend, and the lifetime histogram. */
#include "flim-views-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "app/core/colormap.h"
#include "app/gui/cairo-util.h"
#include "app/gui/plot-layout.h"

#define HIST_BINS 64

/* Hue runs red (short) to blue (long), the convention of FLIM software. */

void fm_flim_views_rebuild_merged(FmFlimViews *self)
{
    g_clear_pointer(&self->merged, cairo_surface_destroy);
    const fm_map *tau = tau_map(self);
    if (tau == NULL && self->photons == NULL)
        return;
    int w = tau != NULL ? tau->width : self->width, h = tau != NULL ? tau->height : self->height;
    gboolean photons_match = self->photons != NULL && w == self->width && h == self->height;
    const fm_map *intensity =
        self->result != NULL ? fm_result_get_map(self->result, "intensity") : NULL;
    const float *bright = photons_match ? self->photons : intensity ? intensity->data : NULL;
    double peak = 1;
    if (bright != NULL) {
        double lo_p, hi_p;
        if (fm_percentile_range(bright, (gsize)w * h, 1, 99.5, &lo_p, &hi_p) && hi_p > 0)
            peak = hi_p;
    }
    self->photon_max = peak;
    self->merged = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    guint8 *px = cairo_image_surface_get_data(self->merged);
    int stride = cairo_image_surface_get_stride(self->merged);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            gsize i = (gsize)y * w + x;
            double v = bright != NULL ? bright[i] / peak : 1.0, rgb[3] = {0, 0, 0};
            double t = tau != NULL ? tau->data[i] : NAN;
            if (tau == NULL)
                rgb[0] = rgb[1] = rgb[2] = CLAMP(v, 0.0, 1.0); /* photons only */
            else if (isfinite(t))
                fm_colormap_lifetime_rgb((t - self->lo) / (self->hi - self->lo), v, rgb);
            if (self->phasor_mask != NULL && !self->phasor_mask[i])
                for (int c = 0; c < 3; c++)
                    rgb[c] *= 0.25; /* not picked on the phasor: dimmed */
            ((guint32 *)(px + y * stride))[x] = (guint32)(rgb[0] * 255) << 16 |
                                                (guint32)(rgb[1] * 255) << 8 |
                                                (guint32)(rgb[2] * 255);
        }
    cairo_surface_mark_dirty(self->merged);
}

/* The image, then a 2-D legend: tau along the height, photons along the width. */
gboolean fm_flim_views_image_draw(GtkWidget *widget, cairo_t *cr, FmFlimViews *self)
{
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    cairo_set_source_rgb(cr, 0.117, 0.117, 0.117);
    cairo_paint(cr);
    if (self->merged == NULL) {
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        fm_cairo_text(widget, cr, W / 2, H / 2,
                      self->dataset == NULL ? _("Open a FLIM dataset (.sdt, .ptu, .tif)")
                                            : _("Summing photons…"),
                      0.5, 0.5);
        return FALSE;
    }
    int w = cairo_image_surface_get_width(self->merged);
    int h = cairo_image_surface_get_height(self->merged);
    double legend = tau_map(self) != NULL ? 86 : 0, margin = 8;
    double zoom = MIN((W - legend - 2 * margin) / w, (H - 2 * margin) / h);
    if (zoom <= 0)
        return FALSE;
    self->transform.zoom = zoom;
    self->transform.origin_x = margin + (W - legend - 2 * margin - w * zoom) / 2;
    self->transform.origin_y = (H - h * zoom) / 2;
    cairo_save(cr);
    cairo_translate(cr, self->transform.origin_x, self->transform.origin_y);
    cairo_scale(cr, zoom, zoom);
    cairo_set_source_surface(cr, self->merged, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    for (guint i = 0; self->rois != NULL && i < self->rois->len; i++) {
        fm_map_roi_path(cr, &self->transform, self->rois->pdata[i], TRUE);
        fm_map_stroke_outline(cr, fm_map_roi_colour(i), 1.5, FALSE);
    }
    if (legend > 0) {
        double lx = W - legend + 6, ly = 24, lw = 26, lh = MIN(H - 48, 220);
        for (int j = 0; j < (int)lh; j++)
            for (int k = 0; k < (int)lw; k += 2) {
                double rgb[3];
                fm_colormap_lifetime_rgb(1.0 - j / lh, (k + 1) / lw, rgb);
                cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
                cairo_rectangle(cr, lx + k, ly + j, 2, 1);
                cairo_fill(cr);
            }
        cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
        for (int q = 0; q <= 4; q++) {
            double v = self->hi - q * (self->hi - self->lo) / 4;
            g_autofree char *t = g_strdup_printf("%.2f", v);
            fm_cairo_text(widget, cr, lx + lw + 4, ly + q * lh / 4, t, 0, 0.5);
        }
        fm_cairo_text(widget, cr, lx, ly - 6, _("τ (ns)"), 0, 1);
        g_autofree char *ph = g_strdup_printf(_("photons →\n0 … %.0f"), self->photon_max);
        fm_cairo_text(widget, cr, lx, ly + lh + 4, ph, 0, 0);
    }
    return FALSE;
}

gboolean fm_flim_views_image_motion(GtkWidget *widget, GdkEventMotion *event, FmFlimViews *self)
{
    if (self->merged == NULL || self->transform.zoom <= 0)
        return FALSE;
    int x = (int)floor((event->x - self->transform.origin_x) / self->transform.zoom);
    int y = (int)floor((event->y - self->transform.origin_y) / self->transform.zoom);
    gboolean inside = x >= 0 && y >= 0 && x < self->width && y < self->height;
    fm_flim_views_show_decay(self, inside ? x : -1, inside ? y : -1);
    return FALSE;
}

gboolean fm_flim_views_image_leave(GtkWidget *widget, GdkEventCrossing *event, FmFlimViews *self)
{
    fm_flim_views_show_decay(self, -1, -1);
    return FALSE;
}

gboolean fm_flim_views_histogram_draw(GtkWidget *widget, cairo_t *cr, FmFlimViews *self)
{
    double W = gtk_widget_get_allocated_width(widget), H = gtk_widget_get_allocated_height(widget);
    cairo_set_source_rgb(cr, 0.11, 0.11, 0.12);
    cairo_paint(cr);
    const fm_map *tau = tau_map(self);
    fm_plot_layout_clear(&self->histogram_layout);
    memset(&self->histogram_layout, 0, sizeof self->histogram_layout);
    if (tau == NULL) {
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
        fm_cairo_text(widget, cr, W / 2, H / 2, _("Lifetime histogram: run a method"), 0.5, 0.5);
        return FALSE;
    }
    double counts[HIST_BINS] = {0}, peak = 1, sum = 0;
    gsize n = 0;
    for (gsize i = 0; i < (gsize)tau->width * tau->height; i++) {
        double t = tau->data[i];
        if (!isfinite(t))
            continue;
        sum += t;
        n++;
        int b = (int)floor((t - self->lo) / (self->hi - self->lo) * HIST_BINS);
        if (b >= 0 && b < HIST_BINS)
            peak = MAX(peak, ++counts[b]);
    }
    /* the title names the axis: no axis labels to take the height of a short widget */
    g_autofree char *title = g_strdup_printf(_("Lifetime histogram · %s (ns)"), self->tau_name);
    g_autofree char *stats =
        g_strdup_printf(_("mean %.3f ns · n %" G_GSIZE_FORMAT), n > 0 ? sum / n : NAN, n);
    FmPlotSpec spec = {
        .width = W,
        .height = H,
        .x = {self->lo, self->hi, FALSE, NULL},
        .y = {0, peak * 1.05, FALSE, NULL},
        .title = title,
        .stats = stats,
        .min_data_height = 20,
    };
    FmPlotLayout *l = &self->histogram_layout;
    PangoLayout *pango = fm_cairo_plot_compute(widget, cr, &spec, l);
    if (l->data.width > 0 && l->data.height > 0) {
        FmPlotColours colours;
        fm_plot_colours_dark(&colours);
        fm_cairo_plot_background(cr, l, &colours);
        double bottom = fm_plot_axis_to_px(&l->y, 0), bin_w = l->data.width / HIST_BINS;
        for (int b = 0; b < HIST_BINS; b++) {
            double rgb[3];
            fm_colormap_lifetime_rgb((b + 0.5) / HIST_BINS, 1.0, rgb);
            cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
            double top = fm_plot_axis_to_px(&l->y, counts[b]);
            cairo_rectangle(cr, l->data.x + b * bin_w, top, MAX(bin_w - 0.5, 0.5), bottom - top);
            cairo_fill(cr);
        }
        fm_cairo_plot_axes(cr, pango, l, &colours);
    }
    g_object_unref(pango);
    return FALSE;
}
