/* DCE dataset metadata helpers: frame times and the affine stored as comma-separated lists. */
#include "frame_times.h"

#include <math.h>
#include <stdlib.h>

double *fm_parse_number_list(const char *text, int *n)
{
    *n = 0;
    if (text == NULL)
        return NULL;
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    guint count = g_strv_length(parts);
    if (count == 0)
        return NULL;
    g_autofree double *values = g_new(double, count);
    for (guint i = 0; i < count; i++) {
        const char *s = parts[i];
        while (g_ascii_isspace(*s))
            s++;
        char *end = NULL;
        values[i] = g_ascii_strtod(s, &end);
        while (end && g_ascii_isspace(*end))
            end++;
        if (end == s || end == NULL || *end != '\0' || !isfinite(values[i]))
            return NULL;
    }
    *n = (int)count;
    return g_steal_pointer(&values);
}

char *fm_format_number_list(const double *values, int n)
{
    GString *s = g_string_new(NULL);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (int i = 0; i < n; i++) {
        /* %.17g keeps every bit of a double, so a write-read round trip is exact. */
        g_ascii_formatd(buf, sizeof buf, "%.17g", values[i]);
        if (i > 0)
            g_string_append_c(s, ',');
        g_string_append(s, buf);
    }
    return g_string_free(s, FALSE);
}

gboolean fm_dataset_get_frame_times(const fm_dataset *ds, double **times, int *n)
{
    *times = NULL;
    *n = 0;
    if (ds->n_dims < 4)
        return FALSE;
    int nt = (int)ds->dims[3].size;
    const char *text = fm_dataset_get_meta(ds, FM_META_FRAME_TIMES);
    if (text == NULL) {
        double *t = g_new(double, MAX(nt, 1));
        for (int i = 0; i < nt; i++)
            t[i] = i * ds->dims[3].spacing;
        *times = t;
        *n = nt;
        return TRUE;
    }
    int count = 0;
    double *t = fm_parse_number_list(text, &count);
    if (t == NULL || count != nt) {
        g_free(t);
        return FALSE;
    }
    *times = t;
    *n = count;
    return TRUE;
}

void fm_dataset_set_frame_times(fm_dataset *ds, const double *times, int n)
{
    g_autofree char *text = fm_format_number_list(times, n);
    fm_dataset_set_meta(ds, FM_META_FRAME_TIMES, text);
    if (ds->n_dims >= 4 && n >= 2)
        ds->dims[3].spacing = (times[n - 1] - times[0]) / (n - 1);
}

gboolean fm_dataset_get_affine(const fm_dataset *ds, double affine[16])
{
    for (int i = 0; i < 16; i++)
        affine[i] = (i % 5 == 0) ? 1.0 : 0.0;
    for (int i = 0; i < 3 && i < ds->n_dims; i++)
        affine[i * 5] = ds->dims[i].spacing;
    int count = 0;
    g_autofree double *a = fm_parse_number_list(fm_dataset_get_meta(ds, FM_META_AFFINE), &count);
    if (a == NULL || count != 16)
        return FALSE;
    for (int i = 0; i < 16; i++)
        affine[i] = a[i];
    return TRUE;
}

void fm_dataset_set_affine(fm_dataset *ds, const double affine[16])
{
    g_autofree char *text = fm_format_number_list(affine, 16);
    fm_dataset_set_meta(ds, FM_META_AFFINE, text);
}
