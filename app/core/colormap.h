/* Colormaps (gray, viridis, magma, jet) and percentile ranges for displaying float maps. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
    FM_COLORMAP_GRAY = 0,
    FM_COLORMAP_VIRIDIS,
    FM_COLORMAP_MAGMA,
    FM_COLORMAP_JET,
    FM_COLORMAP_COUNT,
} fm_colormap;

const char *fm_colormap_name(fm_colormap cmap);
gboolean fm_colormap_parse(const char *name, fm_colormap *out);
/* t in [0,1] -> 8-bit RGB. */
void fm_colormap_rgb(fm_colormap cmap, double t, guint8 rgb[3]);
/* Low and high percentiles (0..100) of the finite values; FALSE when none are finite. */
gboolean fm_percentile_range(const float *values, gsize n, double low_pct, double high_pct,
                             double *vmin, double *vmax);

G_END_DECLS
