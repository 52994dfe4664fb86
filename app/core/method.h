/* Method registry: static descriptors of every analysis method (schema, outputs, run()). */
#pragma once

#include <gio/gio.h>
#include "dataset.h"
#include "params.h"
#include "result.h"
#include "stages.h"
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

/* What a method's run() gets besides data and parameters: where to report progress,
 * how to notice cancellation, which backend the user asked for. */
typedef struct {
    GCancellable *cancellable;                       /* may be NULL */
    void (*progress)(double fraction, gpointer user); /* called from the worker thread; may be NULL */
    gpointer progress_user;
    fm_backend backend;                              /* requested backend */
    fm_stage_times *stages;                          /* where the run's stages add up; may be NULL */
    /* Called from the worker thread when a stage starts (may be NULL); user is progress_user. */
    void (*stage_started)(fm_stage stage, gpointer user);
} fm_job_context;

typedef struct {
    const char *name;   /* "contrast" */
    const char *unit;   /* "1", "1/s" */
    const char *title;  /* "Speckle contrast K", marked N_() */
} fm_output_spec;

typedef struct fm_method fm_method;
struct fm_method {
    const char *id;            /* "lsi.spatial" */
    const char *family;        /* "lsi" */
    const char *title;         /* "Spatial speckle contrast", marked N_() */
    const char *description;   /* one paragraph, marked N_() */
    const fm_param_spec *params;
    int n_params;
    const char *const *roi_roles; /* roles the method needs, NULL-terminated, or NULL */
    const fm_output_spec *outputs;
    int n_outputs;
    /* The CUDA path reads the dataset's own samples: its upload may start before run() */
    gboolean device_reads_dataset;
    /* A method whose input may be several files or series (dce.t1_vfa: one DICOM series per
     * flip angle) opens them itself; NULL: one INPUT, opened by fm_dataset_open_part. */
    fm_dataset *(*open_inputs)(const char *const *paths, int n_paths, GError **error);
    /* rois: GPtrArray of fm_roi* or NULL. Returns NULL and sets error
     * (FM_ERROR_BAD_PARAM / BAD_INPUT / COMPUTE / DEVICE / CANCELLED) on failure. */
    fm_result *(*run)(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                      GPtrArray *rois, fm_job_context *context, GError **error);
    /* The method's per-frame path for live frame sources (app/core/live.h), or NULL. */
    const struct fm_live_ops *live;
};

/* All registered methods, in display order. */
const fm_method *const *fm_methods_all(int *n_methods);
const fm_method *fm_method_find(const char *id);
fm_params *fm_method_default_params(const fm_method *method);

/* Runs the method synchronously on the calling thread: validates, calls run(), fills
 * result->method_id, params_json and elapsed_ms. */
fm_result *fm_method_run(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                         GPtrArray *rois, fm_job_context *context, GError **error);

/* Helpers for methods: map kernel status to GError, and a tick adapter over a context. */
void fm_method_set_kernel_error(GError **error, int status, const char *message);
int fm_method_tick(void *context, double fraction); /* context is fm_job_context* */
/* Methods call this after each kernel call: adds its upload, compute and download times. */
void fm_method_kernel_done(fm_job_context *context, const fm_run_info *info);
/* Tells the context's listener that a stage starts (no-op without one). */
void fm_job_context_stage(fm_job_context *context, fm_stage stage);

G_END_DECLS
