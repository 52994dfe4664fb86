/* The live ROI time course: each ROI's pixels listed once, then one mean per frame. */
#include "app/core/live_private.h"

#include <glib/gi18n.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app/core/error.h"
#include "app/core/export.h"

struct fm_live_roi_series {
    int n_rois, width, height;
    GArray **pixels; /* per ROI: guint32 pixel indices inside */
    GArray **values; /* per ROI: double means */
    GArray *times;   /* double seconds */
    GArray *ids;     /* guint64 frame ids */
};

fm_live_roi_series *fm_live_roi_series_new(GPtrArray *rois, int width, int height)
{
    fm_live_roi_series *s = g_new0(fm_live_roi_series, 1);
    s->n_rois = rois ? (int)rois->len : 0;
    s->width = width;
    s->height = height;
    s->pixels = g_new0(GArray *, MAX(s->n_rois, 1));
    s->values = g_new0(GArray *, MAX(s->n_rois, 1));
    for (int r = 0; r < s->n_rois; r++) {
        g_autofree guint8 *mask = fm_roi_rasterise(rois->pdata[r], width, height);
        s->pixels[r] = g_array_new(FALSE, FALSE, sizeof(guint32));
        s->values[r] = g_array_new(FALSE, FALSE, sizeof(double));
        for (guint32 i = 0; i < (guint32)width * (guint32)height; i++)
            if (mask[i])
                g_array_append_val(s->pixels[r], i);
    }
    s->times = g_array_new(FALSE, FALSE, sizeof(double));
    s->ids = g_array_new(FALSE, FALSE, sizeof(guint64));
    return s;
}

void fm_live_roi_series_free(fm_live_roi_series *s)
{
    if (!s)
        return;
    for (int r = 0; r < s->n_rois; r++) {
        g_array_unref(s->pixels[r]);
        g_array_unref(s->values[r]);
    }
    g_free(s->pixels);
    g_free(s->values);
    g_array_unref(s->times);
    g_array_unref(s->ids);
    g_free(s);
}

int fm_live_roi_series_n_rois(const fm_live_roi_series *s)
{
    return s->n_rois;
}

int fm_live_roi_series_n_points(const fm_live_roi_series *s)
{
    return (int)s->times->len;
}

void fm_live_roi_series_add(fm_live_roi_series *s, const float *map, double t_s, guint64 frame_id)
{
    for (int r = 0; r < s->n_rois; r++) {
        const guint32 *px = (const guint32 *)(gpointer)s->pixels[r]->data;
        double sum = 0;
        gsize n = 0;
        for (guint i = 0; i < s->pixels[r]->len; i++) {
            float v = map[px[i]];
            if (isfinite(v)) {
                sum += v;
                n++;
            }
        }
        double mean = n ? sum / (double)n : NAN;
        g_array_append_val(s->values[r], mean);
    }
    g_array_append_val(s->times, t_s);
    g_array_append_val(s->ids, frame_id);
}

const double *fm_live_roi_series_values(const fm_live_roi_series *s, int roi)
{
    return (const double *)(gpointer)s->values[roi]->data;
}

const double *fm_live_roi_series_times(const fm_live_roi_series *s)
{
    return (const double *)(gpointer)s->times->data;
}

static void put_number(GString *out, double v)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(out, isfinite(v) ? g_ascii_dtostr(buf, sizeof buf, v) : "nan");
}

gboolean fm_live_roi_series_write_csv(const fm_live_roi_series *s, GPtrArray *rois,
                                      const char *path, GError **error)
{
    GString *out = g_string_new("frame,t_s");
    for (int r = 0; r < s->n_rois; r++) {
        const fm_roi *roi = rois->pdata[r];
        g_string_append_c(out, ',');
        fm_csv_append_field(out, roi->name);
    }
    g_string_append_c(out, '\n');
    for (guint i = 0; i < s->times->len; i++) {
        g_string_append_printf(out, "%" G_GUINT64_FORMAT ",", g_array_index(s->ids, guint64, i));
        put_number(out, g_array_index(s->times, double, i));
        for (int r = 0; r < s->n_rois; r++) {
            g_string_append_c(out, ',');
            put_number(out, g_array_index(s->values[r], double, i));
        }
        g_string_append_c(out, '\n');
    }
    GError *local = NULL;
    gboolean ok = g_file_set_contents(path, out->str, (gssize)out->len, &local);
    g_string_free(out, TRUE);
    if (!ok) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, "%s", local->message);
        g_error_free(local);
    }
    return ok;
}
