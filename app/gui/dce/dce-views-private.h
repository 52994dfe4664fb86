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
    float *t10_map; /* SPGR: the T10 map the parameters name (nx ny nz, s), or NULL */
} FmDcePkInput;

void fm_dce_pk_input_clear(FmDcePkInput *in);

/* One tissue curve of a standard model on the plot: measured, and fitted where a run is on
 * show (model NULL when not fitted), at the frame times. */
typedef struct {
    char *label;
    double rgb[3];
    double *measured, *model;
} FmDceTissueCurve;

void fm_dce_tissue_curve_free(gpointer curve);

struct _FmDceViews {
    GtkBox parent_instance;
    GtkWidget *controls, *control_row, *slice_scale, *slice_label, *time_scale, *time_label;
    GtkWidget *anatomy_combo, *overlay_combo, *opacity_scale;
    FmDceImage *image;
    FmDceResults *results;
    FmPlotView *plot; /* weak */

    fm_dataset *source; /* as opened: ds, or the TIFF stack ds was reshaped from */
    char *series_key;   /* the stack settings source was reshaped by (NULL: not a stack) */
    fm_dataset *ds;
    fm_dce_geometry g;
    double *times;     /* nt frame times in s */
    fm_params *params; /* the page's (panel's) */
    /* The parameters and model of the run on show (its params_json), or NULL: its curves are
     * drawn with the input it used, whatever the page says now, until the user changes an
     * input setting on the page (follow_run FALSE: the page's input is previewed). */
    fm_params *run_params;
    const fm_method *run_method;
    gboolean follow_run;
    char *page_key;         /* input_key of the page's model and parameters */
    fm_dce_conversion conv; /* of the shown parameters, headers applied */
    double hematocrit, model_dt_s;
    float *peak;    /* nx ny nz, or NULL while computing */
    float *anatomy; /* the current slice */
    /* The ROIs in use (borrowed: page_rois or run_rois): the run's own while its input is on
     * show (follow_run) and the page's have not been edited since it was reopened. */
    GPtrArray *rois;
    GPtrArray *page_rois, *run_rois; /* fm_roi*, owned; run_rois NULL: none of its own */
    fm_result *result;
    fm_dce_inputs inputs;
    gboolean have_inputs;
    const fm_method *method; /* the panel's model (static); NULL or dce.dual_input: the liver's */
    FmDcePkInput pk_input;
    char *pk_key; /* what the input on show was last computed from (input_key) */
    gboolean have_pk_input;
    int slice, time, busy;
    FmDceAnatomy mode;
    char *overlay;
    guint peak_gen, inputs_gen;
    gboolean updating;
    int cur_x, cur_y;         /* voxel whose curve is shown, -1: the ROI's */
    double input_scale;       /* the standard model's input is drawn divided by this */
    GPtrArray *tissue_curves; /* FmDceTissueCurve*: a standard model's, as last plotted */
    int plot_width;           /* the plot's width when its markers were thinned for it */
    guint replot_idle;
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
/* A standard model is on show (not the liver model): one arterial input, no portal one. */
gboolean fm_dce_views_is_pk(const FmDceViews *self);
/* The model and parameters the curves follow: the run on show's, else the page's. */
const fm_method *fm_dce_views_shown_method(const FmDceViews *self);
const fm_params *fm_dce_views_shown_params(const FmDceViews *self);
/* Everything an input curve depends on (model, input source, conversion), as one string. */
char *fm_dce_views_input_key(const fm_method *method, const fm_params *params);
/* Conversion from the shown parameters; restarts the workers whose inputs changed. */
void fm_dce_views_apply_shown(FmDceViews *self);
/* One line on the run on show: model, input, hematocrit, delay (NULL without a run). */
char *fm_dce_views_run_summary(const FmDceViews *self);
/* TR and flip angle from the headers where the parameters say auto (0), as the methods do. */
void fm_dce_views_conversion_headers(const fm_dataset *ds, fm_dce_conversion *c);

/* dce-views-pk.c */
/* A standard model's curves into the plot: its plasma input, and voxel (x, y) of the slice or
 * (x < 0) each tissue ROI's mean, measured, with the run's fitted model where one is on show. */
void fm_dce_views_plot_pk(FmDceViews *self, int x, int y);

G_END_DECLS
