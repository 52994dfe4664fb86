/* FmDceViews: the DCE perfusion views: slice and time controls, anatomy (any frame or the
 * enhancement peak) with a perfusion map overlaid, curves of Ca, Cp and the voxel or ROI under
 * the cursor with its fitted model, and a table of mean ± sd of each parameter per ROI. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/dataset.h"
#include "app/core/dce/dce_prep.h"
#include "app/core/method.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "app/core/roi.h"
#include "app/gui/dce/dce-results.h"
#include "app/gui/plot-view.h"

G_BEGIN_DECLS

typedef enum {
    FM_DCE_ANATOMY_FRAME = 0, /* the signal at the chosen time */
    FM_DCE_ANATOMY_PEAK,      /* max over time minus the baseline mean: where contrast went */
} FmDceAnatomy;

#define FM_TYPE_DCE_VIEWS (fm_dce_views_get_type())
G_DECLARE_FINAL_TYPE(FmDceViews, fm_dce_views, FM, DCE_VIEWS, GtkBox)

GtkWidget *fm_dce_views_new(void);
/* The slice/time/anatomy/overlay bar; the window packs it under its centre stack so it serves
 * the ROI-drawing map as well as the overlay. Owned by the views. */
GtkWidget *fm_dce_views_get_controls(FmDceViews *views);
/* The controls' first row (slice and time), where a caller may put its own buttons in front. */
GtkWidget *fm_dce_views_get_control_row(FmDceViews *views);
/* The plot the curves go to (borrowed; the window's bottom plot). */
void fm_dce_views_set_plot(FmDceViews *views, FmPlotView *plot);

/* An x, y, z, t dataset (referenced) or NULL. Clears the result; the enhancement peak is
 * computed on a worker. */
void fm_dce_views_set_dataset(FmDceViews *views, fm_dataset *dataset);
/* dce.dual_input parameters (copied): conversion, baseline, hematocrit, input CSV, model step. */
void fm_dce_views_set_params(FmDceViews *views, const fm_params *params);
/* Every ROI of the dataset, on all slices (copied); the input curves follow on a worker. */
void fm_dce_views_set_rois(FmDceViews *views, GPtrArray *rois);
void fm_dce_views_set_result(FmDceViews *views, fm_result *result); /* takes it; NULL clears */
/* The ROIs the run on show was given (copied; a reopened run's from the catalogue): while its
 * input is on show they make its input, curves, results table and outlines, whatever ROIs the
 * page has now (fm_dce_views_set_rois keeps those for later). NULL (or changing an input
 * setting) goes back to the page's; a new result or dataset drops them. */
void fm_dce_views_set_run_rois(FmDceViews *views, GPtrArray *rois);
gboolean fm_dce_views_shows_run_rois(FmDceViews *views);
/* The ROIs in use (the run's own or the page's; fm_roi*, borrowed), or NULL. */
GPtrArray *fm_dce_views_get_rois(FmDceViews *views);
const fm_result *fm_dce_views_get_result(FmDceViews *views);
/* The map and the results table beside it (borrowed), for tests of what is on screen. */
GtkWidget *fm_dce_views_get_image(FmDceViews *views);
FmDceResults *fm_dce_views_get_results(FmDceViews *views);

int fm_dce_views_get_slice(FmDceViews *views);
void fm_dce_views_set_slice(FmDceViews *views, int slice);
int fm_dce_views_get_time(FmDceViews *views);
void fm_dce_views_set_time(FmDceViews *views, int frame);
void fm_dce_views_set_anatomy(FmDceViews *views, FmDceAnatomy mode);
/* Overlay map by name ("ka", …; NULL or "" hides it) and its opacity 0..1. */
void fm_dce_views_set_overlay(FmDceViews *views, const char *map_name);
void fm_dce_views_set_opacity(FmDceViews *views, double opacity);
/* The anatomy of the current slice (width x height floats, owned by the views), or NULL. */
const float *fm_dce_views_get_anatomy(FmDceViews *views, int *width, int *height);

/* The model chosen on the panel (static descriptor): the curves show its inputs (Ca and Cp of
 * the liver model, or a standard model's arterial input with the population curve). Call
 * before fm_dce_views_set_params with the model's parameters. While a run is on show
 * (fm_dce_views_set_result) its own model and parameters (params_json) draw the curves, until
 * the page's input settings are changed. */
void fm_dce_views_set_method(FmDceViews *views, const fm_method *method);
/* The input curves on show as CSV t_s,ca,cp (a standard model: ca the plasma input its fit
 * uses, cp 0); FM_ERROR_BAD_PARAM says what to do when there are none yet. */
gboolean fm_dce_views_save_inputs_csv(FmDceViews *views, const char *path, GError **error);
/* What is missing before there are input curves to save (one sentence), or NULL. */
const char *fm_dce_views_inputs_missing(FmDceViews *views);
/* The overlay combo lists map_name (the maps of the result on show). */
gboolean fm_dce_views_lists_overlay(FmDceViews *views, const char *map_name);
/* Input curves on show (borrowed), or NULL while they are missing or being computed. */
const fm_dce_inputs *fm_dce_views_get_inputs(FmDceViews *views);
gboolean fm_dce_views_busy(FmDceViews *views); /* a worker (peak, inputs) is running */
/* A standard model's plasma input is drawn divided by this (1, 2, 5, 10, ...: its legend says
 * "Cp ÷ 10 (...)") so that the tissue curves beside it do not lie flat. */
double fm_dce_views_get_input_scale(FmDceViews *views);
/* A standard model's tissue curves on the plot (each tissue ROI's or the picked voxel's):
 * label, measured and fitted values at the frame times (model NULL when not fitted; borrowed
 * until the next redraw). FALSE past the last. For tests of what is drawn. */
gboolean fm_dce_views_get_tissue_curve(FmDceViews *views, guint index, const char **label,
                                       const double **measured, const double **model);
/* Plots Ca, Cp and voxel (x, y) of the current slice with its fitted model; x < 0: the mean of
 * the liver ROI (else the first ROI) on the slice. */
void fm_dce_views_show_curve(FmDceViews *views, int x, int y);
/* Redraws the plot (axes included) at the last cursor position, e.g. when DCE comes on show. */
void fm_dce_views_refresh_curves(FmDceViews *views);
/* Mean ± sd of map_name over the first ROI with this role on the current slice. */
gboolean fm_dce_views_role_stats(FmDceViews *views, const char *role, const char *map_name,
                                 fm_roi_stats *out);

/* Signal "position-changed" (): slice, time or anatomy mode changed (the window redraws the
 * map it draws ROIs on). */

G_END_DECLS
