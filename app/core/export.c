/* Export of result maps: float32 TIFF, colour-mapped PNG with colorbar, ROI statistics CSV. */
#include "export.h"

#include <cairo.h>
#include <glib/gi18n.h>
#include <math.h>
#include <string.h>

#include "error.h"
#include "io/tiff.h"

gboolean fm_export_tiff(const char *path, const fm_map *map, const char *method_id,
                        const char *extra_description, GError **error)
{
    g_autofree char *desc =
        g_strdup_printf("method=%s; map=%s; unit=%s%s%s", method_id ? method_id : "", map->name,
                        map->unit ? map->unit : "", extra_description ? "; " : "",
                        extra_description ? extra_description : "");
    return fm_tiff_write_float32(path, map->data, map->width, map->height, map->n_frames, desc,
                                 error);
}

/* Layout of the colorbar panel to the right of the map, in device pixels. */
enum { BAR_GAP = 12, BAR_WIDTH = 18, LABEL_WIDTH = 80, MIN_HEIGHT = 120, MARGIN = 8 };

static char *format_tick(double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.4g", v));
}

static void draw_colorbar(cairo_t *cr, int x, int height, fm_colormap cmap, double vmin,
                          double vmax, const char *unit)
{
    int top = MARGIN + 14, bottom = height - MARGIN - 14; /* room for the unit and a label */
    int span = MAX(bottom - top, 1);
    for (int r = 0; r <= span; r++) {
        guint8 rgb[3];
        fm_colormap_rgb(cmap, 1.0 - (double)r / span, rgb); /* high values at the top */
        cairo_set_source_rgb(cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
        cairo_rectangle(cr, x, top + r, BAR_WIDTH, 1);
        cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, x + 0.5, top + 0.5, BAR_WIDTH - 1, span);
    cairo_stroke(cr);

    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11.0);
    double values[3] = {vmax, 0.5 * (vmin + vmax), vmin};
    int ys[3] = {top, top + span / 2, top + span};
    for (int i = 0; i < 3; i++) {
        g_autofree char *label = format_tick(values[i]);
        cairo_move_to(cr, x + BAR_WIDTH, ys[i] + 0.5);
        cairo_line_to(cr, x + BAR_WIDTH + 4, ys[i] + 0.5);
        cairo_stroke(cr);
        cairo_move_to(cr, x + BAR_WIDTH + 6, ys[i] + 4);
        cairo_show_text(cr, label);
    }
    if (unit && *unit) {
        cairo_move_to(cr, x, MARGIN + 8);
        cairo_show_text(cr, unit);
    }
}

gboolean fm_export_png(const char *path, const fm_map *map, int frame, fm_colormap cmap,
                       double vmin, double vmax, GError **error)
{
    if (frame < 0 || frame >= map->n_frames) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("%s: frame %d is outside 0..%d"), path,
                    frame, map->n_frames - 1);
        return FALSE;
    }
    const float *values = map->data + (gsize)frame * map->width * map->height;
    /* A non-finite range means "choose for me": the 1st..99th percentile, as the viewer does. */
    if (!isfinite(vmin) || !isfinite(vmax)) {
        if (!fm_percentile_range(values, (gsize)map->width * map->height, 1.0, 99.0, &vmin, &vmax))
            vmin = 0.0, vmax = 1.0;
    }
    int width = map->width + BAR_GAP + BAR_WIDTH + LABEL_WIDTH;
    int height = MAX(map->height, MIN_HEIGHT);
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    cairo_surface_t *image =
        cairo_image_surface_create(CAIRO_FORMAT_ARGB32, map->width, map->height);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS ||
        cairo_surface_status(image) != CAIRO_STATUS_SUCCESS) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot make a %dx%d image"), path, width,
                    height);
        cairo_surface_destroy(surface);
        cairo_surface_destroy(image);
        return FALSE;
    }
    cairo_surface_flush(image);
    guint8 *pixels = cairo_image_surface_get_data(image);
    int stride = cairo_image_surface_get_stride(image);
    double range = vmax - vmin;
    for (int y = 0; y < map->height; y++) {
        guint32 *row = (guint32 *)(pixels + (gsize)y * stride);
        for (int x = 0; x < map->width; x++) {
            float v = values[(gsize)y * map->width + x];
            if (!isfinite(v)) {
                row[x] = 0; /* NaN: transparent, so "no value" never looks like a value */
                continue;
            }
            double t = range > 0 ? (v - vmin) / range : 0.5;
            guint8 rgb[3];
            fm_colormap_rgb(cmap, t, rgb);
            row[x] = 0xff000000u | ((guint32)rgb[0] << 16) | ((guint32)rgb[1] << 8) | rgb[2];
        }
    }
    cairo_surface_mark_dirty(image);

    cairo_t *cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 1, 1, 1); /* white behind the colorbar keeps labels readable */
    cairo_rectangle(cr, map->width, 0, width - map->width, height);
    cairo_fill(cr);
    cairo_set_source_surface(cr, image, 0, 0);
    cairo_paint(cr);
    draw_colorbar(cr, map->width + BAR_GAP, height, cmap, vmin, vmax, map->unit);
    cairo_destroy(cr);

    cairo_status_t st = cairo_surface_write_to_png(surface, path);
    cairo_surface_destroy(surface);
    cairo_surface_destroy(image);
    if (st != CAIRO_STATUS_SUCCESS) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write PNG: %s"), path,
                    cairo_status_to_string(st));
        return FALSE;
    }
    return TRUE;
}

void fm_csv_append_field(GString *out, const char *text)
{
    if (text == NULL)
        return;
    if (strpbrk(text, ",\"\n\r") == NULL) {
        g_string_append(out, text);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *c = text; *c; c++) {
        if (*c == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *c);
    }
    g_string_append_c(out, '"');
}

static void csv_number(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (isfinite(v)) /* empty cell for "no value", which spreadsheets understand */
        g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.9g", v));
}

gboolean fm_export_roi_csv(const char *path, const fm_result *result, GPtrArray *rois,
                           GError **error)
{
    GString *out = g_string_new("roi,role,map,unit,frame,n,mean,sd,min,max\n");
    for (guint r = 0; rois && r < rois->len; r++) {
        const fm_roi *roi = g_ptr_array_index(rois, r);
        for (guint m = 0; m < result->maps->len; m++) {
            fm_map *map = g_ptr_array_index(result->maps, m);
            for (int f = 0; f < map->n_frames; f++) {
                fm_roi_stats s =
                    fm_roi_statistics(roi, fm_map_frame(map, f), map->width, map->height);
                fm_csv_append_field(out, roi->name);
                g_string_append_c(out, ',');
                fm_csv_append_field(out, roi->role);
                g_string_append_c(out, ',');
                fm_csv_append_field(out, map->name);
                g_string_append_c(out, ',');
                fm_csv_append_field(out, map->unit);
                g_string_append_printf(out, ",%d,%" G_GSIZE_FORMAT ",", f, s.n);
                csv_number(out, s.mean);
                g_string_append_c(out, ',');
                csv_number(out, s.sd);
                g_string_append_c(out, ',');
                csv_number(out, s.min);
                g_string_append_c(out, ',');
                csv_number(out, s.max);
                g_string_append_c(out, '\n');
            }
        }
    }
    GError *local = NULL;
    gboolean ok = g_file_set_contents(path, out->str, (gssize)out->len, &local);
    g_string_free(out, TRUE);
    if (!ok) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot write: %s"), path, local->message);
        g_error_free(local);
    }
    return ok;
}
