/* Tick values of one plot axis: the candidate sets the layout tries, densest first (private to
 * plot-layout.c; the labels' format is fm_plot_format_ticks in plot-layout.h). */
#pragma once

#include "app/gui/plot-layout.h"

G_BEGIN_DECLS

typedef struct {
    double values[FM_PLOT_MAX_TICKS];
    int n;
    double step; /* linear spacing, 0 on a log axis */
} FmPlotTickSet;

/* Tick sets for [lo, hi], densest first, at most max_ticks ticks each: 1, 2 or 5 times a power
 * of ten apart on a linear axis (and on a log axis shorter than a decade), 1-2-5 per decade on
 * a log axis up to 2.5 decades, then every 1, 2, 3, 5, 10... decades. Returns how many. */
int fm_plot_tick_candidates(double lo, double hi, gboolean log_scale, int max_ticks,
                            FmPlotTickSet *out, int max_out);

G_END_DECLS
