/* FmDceViews internals shared by dce-views.c (widgets, display) and dce-views-data.c (workers,
 * curves). */
#pragma once

#include "dce-image.h"
#include "dce-results.h"
#include "dce-views.h"

G_BEGIN_DECLS

/* The arterial input of a standard model as its method places it (pk_inputs.c): the plasma
 * curve from the artery ROI (or the CSV) and the population curve when one is chosen. */
typedef struct {
    int n_times;
    double *times_s;
    double *measured;   /* artery (or aorta) ROI, or the CSV; NULL when there is none */
    double *population; /* Parker or Georgiou at the bolus arrival; NULL when not chosen */
    char *measured_name, *population_name;
} FmDcePkInput;

void fm_dce_pk_input_clear(FmDcePkInput *in);

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
    const fm_method *method; /* the panel's model (static); NULL or dce.dual_input: the liver's */
    FmDcePkInput pk_input;
    char *pk_key; /* what the standard model's input was last computed from */
    gboolean have_pk_input;
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
/* A standard model is chosen (not the liver model): one arterial input, no portal one. */
gboolean fm_dce_views_is_pk(const FmDceViews *self);
/* TR and flip angle from the headers where the parameters say auto (0), as the methods do. */
void fm_dce_views_conversion_headers(const fm_dataset *ds, fm_dce_conversion *c);

G_END_DECLS
