/* FmDecayView: a decay histogram on a log axis with its fitted model, and the weighted residuals
 * beneath it. */
#pragma once

#include <gtk/gtk.h>

#include "app/gui/plot-layout.h"

G_BEGIN_DECLS

#define FM_TYPE_DECAY_VIEW (fm_decay_view_get_type())
G_DECLARE_FINAL_TYPE(FmDecayView, fm_decay_view, FM, DECAY_VIEW, GtkDrawingArea)

GtkWidget *fm_decay_view_new(void);
/* Copies n_bins counts; model and residuals may be NULL (no fit) and hold NaN outside the bins
 * fitted; n_params: the fit's free parameters. title says whose decay it is ("Pixel 12, 30",
 * "Sum over ROI 1"); info what the fit found ("τ 2.51 ns · χ²ᵣ 1.02"). */
void fm_decay_view_set(FmDecayView *view, const double *counts, const double *model,
                       const double *residuals, int n_bins, double bin_width_ns, int n_params,
                       const char *title, const char *info);
void fm_decay_view_clear(FmDecayView *view);
int fm_decay_view_get_n_bins(FmDecayView *view);
/* Reduced chi-square (per degree of freedom) of the shown residuals, NaN without a model. */
double fm_decay_view_get_chi2(FmDecayView *view);
/* The shown weighted residuals: their mean, chi-square per degree of freedom and the degrees of
 * freedom (bins fitted less parameters); FALSE without a fit. For tests. */
gboolean fm_decay_view_get_fit_stats(FmDecayView *view, double *mean, double *chi2_per_dof,
                                     int *dof);
/* The layout of the last draw (data, strip, ticks, texts): for tests of what is on screen. */
const FmPlotLayout *fm_decay_view_get_layout(FmDecayView *view);

/* The fewest bins a dragged window keeps (the methods need 8). */
#define FM_DECAY_VIEW_MIN_BINS 8
/* The fit window [start_bin, end_bin), drawn over the plot with draggable edges; start_bin < 0
 * hides it. Kept when the decay changes. */
void fm_decay_view_set_window(FmDecayView *view, int start_bin, int end_bin);
gboolean fm_decay_view_get_window(FmDecayView *view, int *start_bin, int *end_bin);
/* What dragging an edge to a bin edge does (also for tests): moves it and emits the signal. */
void fm_decay_view_drag_window(FmDecayView *view, gboolean start_edge, int to_bin);
/* Signals: "window-changed" (gboolean start_edge, double start_ns, double end_ns): the user
 * dragged an edge of the fit window and let go. */

G_END_DECLS
