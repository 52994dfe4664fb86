/* FmFlimViews: the FLIM result views: lifetime map in the intensity-weighted colour merge
 * (hue = tau, brightness = photons), lifetime histogram, phasor plot and the decay under the
 * cursor with its fitted model and weighted residuals. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/dataset.h"
#include "app/core/params.h"
#include "app/core/result.h"
#include "decay-view.h"
#include "phasor-view.h"

G_BEGIN_DECLS

#define FM_TYPE_FLIM_VIEWS (fm_flim_views_get_type())
G_DECLARE_FINAL_TYPE(FmFlimViews, fm_flim_views, FM, FLIM_VIEWS, GtkBox)

GtkWidget *fm_flim_views_new(void);
/* An x,y,t FLIM dataset (referenced) or NULL; clears the result. Photon counts per pixel are
 * summed on a worker thread. */
void fm_flim_views_set_dataset(FmFlimViews *views, fm_dataset *dataset);
/* The parameters the next run will use (copied; NULL clears): the decay plot shows the fit
 * window they give on this dataset, as the method will choose it where it is auto. */
void fm_flim_views_set_params(FmFlimViews *views, const fm_params *params);
/* Takes the result; its fit range is the one its run used (fm_flim_run_window). */
void fm_flim_views_set_result(FmFlimViews *views, fm_result *result);
const fm_result *fm_flim_views_get_result(FmFlimViews *views);
/* ROIs drawn on the image (copied; NULL clears): outlined on the lifetime map, their union
 * highlights the phasor cloud, and the first one gives the decay when the cursor is away. */
void fm_flim_views_set_rois(FmFlimViews *views, GPtrArray *rois);
/* The lifetime map on display (width x height, NaN where not fitted), or NULL. */
const float *fm_flim_views_get_tau(FmFlimViews *views, int *width, int *height);
void fm_flim_views_get_tau_range(FmFlimViews *views, double *lo_ns, double *hi_ns);
/* Shows the decay of pixel (x, y), or of the first ROI (else the whole image) when x < 0. */
void fm_flim_views_show_decay(FmFlimViews *views, int x, int y);
gboolean fm_flim_views_photons_ready(FmFlimViews *views);
FmPhasorView *fm_flim_views_get_phasor_view(FmFlimViews *views);
FmDecayView *fm_flim_views_get_decay_view(FmFlimViews *views);
/* The lifetime histogram's widget, and (layout may be NULL) the layout of its last draw. */
GtkWidget *fm_flim_views_get_histogram(FmFlimViews *views, const FmPlotLayout **layout);

G_END_DECLS
