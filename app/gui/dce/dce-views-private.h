/* FmDceViews internals shared by dce-views.c (widgets, display) and dce-views-data.c (workers,
 * curves). */
#pragma once

#include "dce-image.h"
#include "dce-results.h"
#include "dce-views.h"

G_BEGIN_DECLS

struct _FmDceViews {
    GtkBox parent_instance;
    GtkWidget *controls, *control_row, *slice_scale, *slice_label, *time_scale, *time_label;
    GtkWidget *anatomy_combo, *overlay_combo, *opacity_scale;
    FmDceImage *image;
    FmDceResults *results;
    FmPlotView *plot; /* weak */

    fm_dataset *ds;
    fm_dce_geometry g;
    double *times; /* nt frame times in s */
    fm_params *params;
    fm_dce_conversion conv;
    double hematocrit, model_dt_s;
    float *peak;    /* nx ny nz, or NULL while computing */
    float *anatomy; /* the current slice */
    GPtrArray *rois;
    fm_result *result;
    fm_dce_inputs inputs;
    gboolean have_inputs;
    int slice, time, busy;
    FmDceAnatomy mode;
    char *overlay;
    guint peak_gen, inputs_gen;
    gboolean updating;
    int cur_x, cur_y; /* voxel whose curve is shown, -1: the ROI's */
};

static inline gboolean fm_dce_roi_on_slice(const fm_roi *roi, int slice)
{
    return roi->slice < 0 || roi->slice == slice;
}

/* dce-views.c */
void fm_dce_views_refresh_anatomy(FmDceViews *self);
void fm_dce_views_emit_position(FmDceViews *self);

/* dce-views-data.c */
void fm_dce_views_conversion_from(const fm_params *p, fm_dce_conversion *c, double *hct,
                                  double *dt);
/* Enhancement peak and input curves on workers; stale answers are dropped by generation. */
void fm_dce_views_start_peak(FmDceViews *self);
void fm_dce_views_start_inputs(FmDceViews *self);

G_END_DECLS
