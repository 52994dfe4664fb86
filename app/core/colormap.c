/* Colormaps (gray, viridis, magma, jet, lifetime, diverging) and percentile display ranges. */
#include "colormap.h"

#include <math.h>
#include <stdlib.h>

static const char *const names[FM_COLORMAP_COUNT] = {"gray", "viridis",  "magma",
                                                     "jet",  "lifetime", "diverging"};

/* Published matplotlib viridis and magma sampled at t = 0, 0.1, ..., 1 (sRGB); the maps are
 * smooth enough that linear interpolation between these anchors stays within a few levels. */
static const guint8 viridis[11][3] = {
    {0x44, 0x01, 0x54}, {0x48, 0x24, 0x75}, {0x41, 0x44, 0x87}, {0x35, 0x5f, 0x8d},
    {0x2a, 0x78, 0x8e}, {0x21, 0x91, 0x8c}, {0x22, 0xa8, 0x84}, {0x44, 0xbf, 0x70},
    {0x7a, 0xd1, 0x51}, {0xbd, 0xdf, 0x26}, {0xfd, 0xe7, 0x25},
};
static const guint8 magma[11][3] = {
    {0x00, 0x00, 0x04}, {0x14, 0x0e, 0x36}, {0x3b, 0x0f, 0x70}, {0x64, 0x1a, 0x80},
    {0x8c, 0x29, 0x81}, {0xb7, 0x37, 0x79}, {0xde, 0x49, 0x68}, {0xf7, 0x70, 0x5c},
    {0xfe, 0x9f, 0x6d}, {0xfe, 0xcf, 0x92}, {0xfc, 0xfd, 0xbf},
};
/* ColorBrewer RdBu (11 classes) from blue to red: a difference map reads negative blue, zero
 * near white, positive red, with equal lightness steps on both sides. */
static const guint8 diverging[11][3] = {
    {0x05, 0x30, 0x61}, {0x21, 0x66, 0xac}, {0x43, 0x93, 0xc3}, {0x92, 0xc5, 0xde},
    {0xd1, 0xe5, 0xf0}, {0xf7, 0xf7, 0xf7}, {0xfd, 0xdb, 0xc7}, {0xf4, 0xa5, 0x82},
    {0xd6, 0x60, 0x4d}, {0xb2, 0x18, 0x2b}, {0x67, 0x00, 0x1f},
};

const char *fm_colormap_name(fm_colormap cmap)
{
    return (cmap >= 0 && cmap < FM_COLORMAP_COUNT) ? names[cmap] : "gray";
}

gboolean fm_colormap_parse(const char *name, fm_colormap *out)
{
    for (int i = 0; i < FM_COLORMAP_COUNT; i++) {
        if (name != NULL && g_ascii_strcasecmp(name, names[i]) == 0) {
            *out = (fm_colormap)i;
            return TRUE;
        }
    }
    if (name != NULL && g_ascii_strcasecmp(name, "grey") == 0) {
        *out = FM_COLORMAP_GRAY;
        return TRUE;
    }
    return FALSE;
}

/* HSV to RGB, the same arithmetic as gtk_hsv_to_rgb, so the lifetime map drawn before this
 * function existed keeps its exact colours. */
static void hsv_to_rgb(double h, double s, double v, double rgb[3])
{
    if (s == 0.0) {
        rgb[0] = rgb[1] = rgb[2] = v;
        return;
    }
    double hue = h * 6.0;
    if (hue == 6.0)
        hue = 0.0;
    int i = (int)hue;
    double f = hue - i, p = v * (1.0 - s), q = v * (1.0 - s * f), u = v * (1.0 - s * (1.0 - f));
    const double table[6][3] = {{v, u, p}, {q, v, p}, {p, v, u}, {p, q, v}, {u, p, v}, {v, p, q}};
    for (int c = 0; c < 3; c++)
        rgb[c] = table[CLAMP(i, 0, 5)][c];
}

void fm_colormap_lifetime_rgb(double t, double brightness, double rgb[3])
{
    if (!isfinite(t))
        t = 0.0;
    if (!isfinite(brightness))
        brightness = 0.0;
    /* Hue 0 (red) to 240 degrees (blue): short lifetimes warm, long ones cold, as FLIM software
     * draws them; stopping at blue keeps the two ends from meeting again in magenta. */
    hsv_to_rgb(CLAMP(t, 0.0, 1.0) * 240.0 / 360.0, 0.9, CLAMP(brightness, 0.0, 1.0), rgb);
}

fm_colormap fm_colormap_for_map(const char *name, const char *unit, fm_colormap fallback)
{
    if (name != NULL && g_str_has_prefix(name, "tau") && g_strcmp0(unit, "ns") == 0)
        return FM_COLORMAP_LIFETIME;
    return fallback;
}

static guint8 to_byte(double v)
{
    v = CLAMP(v, 0.0, 1.0);
    return (guint8)lround(v * 255.0);
}

static void lookup(const guint8 table[][3], int n, double t, guint8 rgb[3])
{
    double pos = t * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1)
        i = n - 2;
    double f = pos - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (guint8)lround(table[i][c] + f * (table[i + 1][c] - table[i][c]));
}

void fm_colormap_rgb(fm_colormap cmap, double t, guint8 rgb[3])
{
    if (!isfinite(t))
        t = 0.0;
    t = CLAMP(t, 0.0, 1.0);
    switch (cmap) {
    case FM_COLORMAP_VIRIDIS:
        lookup(viridis, 11, t, rgb);
        break;
    case FM_COLORMAP_MAGMA:
        lookup(magma, 11, t, rgb);
        break;
    case FM_COLORMAP_LIFETIME: {
        double unit_rgb[3];
        fm_colormap_lifetime_rgb(t, 1.0, unit_rgb);
        for (int c = 0; c < 3; c++)
            rgb[c] = to_byte(unit_rgb[c]);
        break;
    }
    case FM_COLORMAP_DIVERGING:
        lookup(diverging, 11, t, rgb);
        break;
    case FM_COLORMAP_JET:
        /* The classic MATLAB jet: piecewise-linear ramps offset by a quarter each. */
        rgb[0] = to_byte(1.5 - fabs(4.0 * t - 3.0));
        rgb[1] = to_byte(1.5 - fabs(4.0 * t - 2.0));
        rgb[2] = to_byte(1.5 - fabs(4.0 * t - 1.0));
        break;
    default:
        rgb[0] = rgb[1] = rgb[2] = to_byte(t);
        break;
    }
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double at_percentile(const float *sorted, gsize k, double pct)
{
    double pos = CLAMP(pct, 0.0, 100.0) / 100.0 * (double)(k - 1);
    gsize i = (gsize)floor(pos);
    if (i + 1 >= k)
        return sorted[k - 1];
    double f = pos - (double)i;
    return sorted[i] + f * ((double)sorted[i + 1] - sorted[i]);
}

gboolean fm_percentile_range(const float *values, gsize n, double low_pct, double high_pct,
                             double *vmin, double *vmax)
{
    float *finite = g_new(float, MAX(n, 1));
    gsize k = 0;
    for (gsize i = 0; i < n; i++)
        if (isfinite(values[i]))
            finite[k++] = values[i];
    if (k == 0) {
        g_free(finite);
        return FALSE;
    }
    qsort(finite, k, sizeof(float), compare_float);
    *vmin = at_percentile(finite, k, low_pct);
    *vmax = at_percentile(finite, k, high_pct);
    g_free(finite);
    return TRUE;
}
