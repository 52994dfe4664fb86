/* fm_job: runs a method on a worker thread, reports progress to the main loop, can be cancelled,
 * and records the run in the catalogue. */
#pragma once

#include <gio/gio.h>
#include "catalogue.h"
#include "method.h"

G_BEGIN_DECLS

typedef enum {
    FM_JOB_QUEUED = 0,
    FM_JOB_RUNNING,
    FM_JOB_DONE,
    FM_JOB_FAILED,
    FM_JOB_CANCELLED,
} fm_job_state;

typedef struct fm_job fm_job;

/* Called on the main context of the thread that started the job. */
typedef void (*fm_job_progress_fn)(fm_job *job, double fraction, gpointer user);
typedef void (*fm_job_done_fn)(fm_job *job, gpointer user);

/* Starts at once on a worker thread. catalogue may be NULL (nothing recorded).
 * rois: GPtrArray of fm_roi* (copied) or NULL. */
fm_job *fm_job_start(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                     GPtrArray *rois, fm_backend backend, fm_catalogue *catalogue,
                     fm_job_progress_fn progress, fm_job_done_fn done, gpointer user);
fm_job *fm_job_ref(fm_job *job);
void fm_job_unref(fm_job *job);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(fm_job, fm_job_unref)

void fm_job_cancel(fm_job *job);
fm_job_state fm_job_get_state(const fm_job *job);
double fm_job_get_progress(const fm_job *job);
const fm_method *fm_job_get_method(const fm_job *job);
/* Valid once done: result (owned by the job) or the error. */
const fm_result *fm_job_get_result(const fm_job *job);
const GError *fm_job_get_error(const fm_job *job);
gint64 fm_job_get_run_id(const fm_job *job); /* catalogue id, or 0 */
/* Call right after fm_job_start, on the same thread: ready runs on the main context as soon as
 * the method has returned its maps, before the catalogue has recorded them (done comes after). */
void fm_job_set_ready_callback(fm_job *job, fm_job_done_fn ready);
/* The maps from the moment ready was called until the job ends (then fm_job_get_result). */
const fm_result *fm_job_get_ready_result(const fm_job *job);
/* The time per stage (complete once the job has ended) and, in current (may be NULL), the stage
 * the worker is in. */
fm_stage_times fm_job_get_stage_times(const fm_job *job, fm_stage *current);
char *fm_job_describe(const fm_job *job);    /* "lsi.spatial on speckle.tif" */

G_END_DECLS
