/* Colormaps (gray, viridis, magma, jet, lifetime, diverging) and percentile ranges for displaying
 * float maps. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    FM_COLORMAP_GRAY = 0,
    FM_COLORMAP_VIRIDIS,
    FM_COLORMAP_MAGMA,
    FM_COLORMAP_JET,
    FM_COLORMAP_LIFETIME,  /* fm_colormap_lifetime_rgb at full brightness */
    FM_COLORMAP_DIVERGING, /* blue (negative) - white (0 at t = 0.5) - red (positive) */
    FM_COLORMAP_COUNT,
} fm_colormap;

const char *fm_colormap_name(fm_colormap cmap);
gboolean fm_colormap_parse(const char *name, fm_colormap *out);
/* t in [0,1] -> 8-bit RGB. */
void fm_colormap_rgb(fm_colormap cmap, double t, guint8 rgb[3]);
/* The one lifetime scale of every view (lifetime map, its legend and histogram, compare windows):
 * hue from red at t = 0 (short lifetime) through yellow, green and cyan to blue at t = 1 (long),
 * saturation 0.9, value = brightness (photons, 0..1). t and brightness are clamped; rgb in 0..1. */
void fm_colormap_lifetime_rgb(double t, double brightness, double rgb[3]);
/* The colormap a quantity is always shown with, whatever the view: lifetimes (a map named tau...
 * in ns) with the lifetime scale; fallback for every other map. */
fm_colormap fm_colormap_for_map(const char *name, const char *unit, fm_colormap fallback);
/* Low and high percentiles (0..100) of the finite values; FALSE when none are finite. */
gboolean fm_percentile_range(const float *values, gsize n, double low_pct, double high_pct,
                             double *vmin, double *vmax);

G_END_DECLS
