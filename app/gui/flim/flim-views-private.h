/* FmFlimViews private: instance struct and drawing callbacks shared with flim-views-draw.c. */
#pragma once

#include "flim-views.h"

#include "app/gui/map-overlays.h"
#include "app/gui/plot-layout.h"

G_BEGIN_DECLS

struct _FmFlimViews {
    GtkBox parent_instance;
    GtkWidget *tau_combo, *auto_toggle, *lo_spin, *hi_spin, *image, *histogram;
    FmPhasorView *phasor;
    FmDecayView *decay;

    fm_dataset *dataset;
    float *photons; /* per pixel, NULL until the worker has summed them */
    GCancellable *photon_cancel;
    int width, height, n_bins;
    double bin_width_ns;
    fm_result *result;
    char *tau_name;
    int fit_start, fit_end; /* of the result on display */
    fm_params *params;      /* the panel's, for the window the next run will use, or NULL */
    double lo, hi, photon_max;
    double omega;             /* phasor angular frequency, rad/ns */
    GPtrArray *rois;          /* fm_roi* copies */
    guint8 *phasor_mask;      /* pixels picked on the phasor, or NULL */
    cairo_surface_t *merged;  /* width x height RGB, NULL when nothing to show */
    FmMapTransform transform; /* of the image as last drawn */
    gboolean updating;
    float *irf;                    /* the IRF the run on display convolved with, or NULL */
    int binning;                   /* of that run: a pixel's decay is its k x k neighbourhood's */
    struct _FmFlimSumFit *sum;     /* the summed decay (image or first ROI) with its fit, or NULL */
    FmPlotLayout histogram_layout; /* of the histogram's last draw */
    /* the handles between image and plots and between the plots and the decay: placed by the
     * views (want_*) until the user drags one */
    GtkWidget *split_h, *split_v;
    int want_h, want_v;
    gboolean h_by_user, v_by_user;
    guint split_idle;
};

static inline const fm_map *tau_map(FmFlimViews *self)
{
    return self->result != NULL && self->tau_name != NULL
               ? fm_result_get_map(self->result, self->tau_name)
               : NULL;
}

/* flim-views-draw.c: the lifetime merge image and the lifetime histogram */
void fm_flim_views_rebuild_merged(FmFlimViews *self);
gboolean fm_flim_views_image_draw(GtkWidget *widget, cairo_t *cr, FmFlimViews *self);
gboolean fm_flim_views_image_motion(GtkWidget *widget, GdkEventMotion *event, FmFlimViews *self);
gboolean fm_flim_views_image_leave(GtkWidget *widget, GdkEventCrossing *event, FmFlimViews *self);
gboolean fm_flim_views_histogram_draw(GtkWidget *widget, cairo_t *cr, FmFlimViews *self);

G_END_DECLS
