/* fm_job: a method run on a GTask worker thread, with progress and completion delivered to the
 * main context of the thread that started it, cancellation, and catalogue bookkeeping. */
#include "job.h"

#include <glib/gi18n.h>

#include "error.h"

struct fm_job {
    gint ref_count;
    const fm_method *method;
    fm_dataset *dataset; /* ref */
    fm_params *params;   /* copy */
    GPtrArray *rois;     /* copies, or NULL */
    fm_backend backend;
    fm_catalogue *catalogue; /* borrowed: must outlive the job */
    fm_job_progress_fn progress_fn;
    fm_job_done_fn done_fn;
    gpointer user;
    GMainContext *main_context;
    GCancellable *cancellable;

    GMutex lock;               /* guards the fields below between worker and main thread */
    gint state;                /* fm_job_state */
    double progress;           /* last value the main thread has seen */
    double pending_fraction;   /* newest value posted by the worker */
    gboolean progress_pending; /* an update is queued on the main context already */
    fm_result *result;
    GError *error;
    gint64 run_id;
    gint stage;              /* fm_stage the worker is in */
    fm_stage_times stages;   /* complete once the job is done */
    fm_job_done_fn ready_fn; /* main thread only: the maps exist, the catalogue is still busy */
    const fm_result *ready;  /* the result as soon as the method returned it */
    fm_result *discarded;    /* maps that were shown but could not be recorded */
};

fm_job *fm_job_ref(fm_job *job)
{
    g_atomic_int_inc(&job->ref_count);
    return job;
}

void fm_job_unref(fm_job *job)
{
    if (job == NULL || !g_atomic_int_dec_and_test(&job->ref_count))
        return;
    fm_dataset_unref(job->dataset);
    fm_params_free(job->params);
    if (job->rois)
        g_ptr_array_unref(job->rois);
    g_main_context_unref(job->main_context);
    g_object_unref(job->cancellable);
    fm_result_free(job->result);
    fm_result_free(job->discarded);
    g_clear_error(&job->error);
    g_mutex_clear(&job->lock);
    g_free(job);
}

/* Main context: deliver the newest fraction; later worker updates queue a fresh invoke. */
static gboolean deliver_progress(gpointer data)
{
    fm_job *job = data;
    g_mutex_lock(&job->lock);
    double fraction = job->pending_fraction;
    job->progress_pending = FALSE;
    gboolean running = job->state == FM_JOB_RUNNING;
    if (running)
        job->progress = fraction;
    g_mutex_unlock(&job->lock);
    if (running && job->progress_fn)
        job->progress_fn(job, fraction, job->user);
    return G_SOURCE_REMOVE;
}

/* Worker thread: coalesce, so a kernel ticking thousands of times never floods the loop. */
static void worker_progress(double fraction, gpointer user)
{
    fm_job *job = user;
    gboolean post;
    g_mutex_lock(&job->lock);
    job->pending_fraction = CLAMP(fraction, 0.0, 1.0);
    post = !job->progress_pending;
    job->progress_pending = TRUE;
    g_mutex_unlock(&job->lock);
    if (post) {
        /* An idle source rather than g_main_context_invoke: invoke runs the callback right here
         * on the worker when nobody is iterating the context at that instant, and progress
         * handlers touch GTK, which belongs to the main thread. */
        GSource *source = g_idle_source_new();
        g_source_set_priority(source, G_PRIORITY_DEFAULT);
        g_source_set_callback(source, deliver_progress, fm_job_ref(job),
                              (GDestroyNotify)fm_job_unref);
        g_source_set_static_name(source, "fluxmap job progress");
        g_source_attach(source, job->main_context);
        g_source_unref(source);
    }
}

/* Worker thread: the stage changed; the progress path carries it to the main loop. */
static void worker_stage(fm_stage stage, gpointer user)
{
    fm_job *job = user;
    g_mutex_lock(&job->lock);
    job->stage = stage;
    double fraction = job->pending_fraction;
    g_mutex_unlock(&job->lock);
    worker_progress(fraction, job);
}

/* Main context: the maps can be shown while the worker still writes the catalogue's copies. */
static gboolean deliver_ready(gpointer data)
{
    fm_job *job = data;
    if (job->ready_fn && fm_job_get_state(job) == FM_JOB_RUNNING)
        job->ready_fn(job, job->user);
    return G_SOURCE_REMOVE;
}

static void post_ready(fm_job *job, const fm_result *result)
{
    g_mutex_lock(&job->lock);
    job->ready = result;
    g_mutex_unlock(&job->lock);
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, deliver_ready, fm_job_ref(job), (GDestroyNotify)fm_job_unref);
    g_source_set_static_name(source, "fluxmap job result ready");
    g_source_attach(source, job->main_context);
    g_source_unref(source);
}

static void run_in_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *unused)
{
    fm_job *job = task_data;
    GError *error = NULL;
    gint64 run_id = 0;

    g_mutex_lock(&job->lock);
    job->state = FM_JOB_RUNNING;
    g_mutex_unlock(&job->lock);

    /* A run that cannot be recorded is not started: the user asked for a catalogued run, and
     * results that silently miss the catalogue would be lost on the next start. */
    fm_job_context ctx = {job->cancellable, worker_progress, job,
                          job->backend,     &job->stages,    worker_stage};
    double t0 = fm_stage_now_ms();
    if (job->catalogue) {
        fm_job_context_stage(&ctx, FM_STAGE_CATALOGUE);
        g_autofree char *params_json = fm_params_to_json(job->params);
        run_id = fm_catalogue_begin_run(job->catalogue, job->dataset, job->method->id, params_json,
                                        job->rois, &error);
    }
    fm_result *result = NULL;
    job->stages.ms[FM_STAGE_CATALOGUE] += fm_stage_now_ms() - t0;
    if (error == NULL)
        result = fm_method_run(job->method, job->dataset, job->params, job->rois, &ctx, &error);
    if (result)
        post_ready(job, result);
    if (result && run_id > 0) {
        fm_job_context_stage(&ctx, FM_STAGE_CATALOGUE);
        t0 = fm_stage_now_ms();
        if (!fm_catalogue_finish_run(job->catalogue, run_id, result, &error)) {
            /* finish_run has marked the run failed; the main thread may be showing the maps,
             * so they live on until the job goes. */
            g_mutex_lock(&job->lock);
            job->ready = NULL;
            job->discarded = result;
            g_mutex_unlock(&job->lock);
            result = NULL;
        }
        job->stages.ms[FM_STAGE_CATALOGUE] += fm_stage_now_ms() - t0;
    }
    if (result == NULL && error && run_id > 0) {
        gboolean cancelled = g_error_matches(error, FM_ERROR, FM_ERROR_CANCELLED);
        /* finish_run already recorded its own failure; aborting again is harmless. */
        fm_catalogue_abort_run(job->catalogue, run_id, cancelled ? FM_RUN_CANCELLED : FM_RUN_FAILED,
                               error->message, NULL);
    }

    g_mutex_lock(&job->lock);
    job->result = result;
    job->error = error;
    job->run_id = run_id;
    g_mutex_unlock(&job->lock);
    g_task_return_boolean(task, result != NULL);
}

/* Main context, after the worker returned: settle the state, then tell the caller. */
static void job_finished(GObject *source, GAsyncResult *res, gpointer data)
{
    fm_job *job = data;
    g_mutex_lock(&job->lock);
    if (job->result) {
        job->state = FM_JOB_DONE;
        job->progress = 1.0;
    } else if (g_error_matches(job->error, FM_ERROR, FM_ERROR_CANCELLED)) {
        job->state = FM_JOB_CANCELLED;
    } else {
        job->state = FM_JOB_FAILED;
    }
    g_mutex_unlock(&job->lock);
    if (job->done_fn)
        job->done_fn(job, job->user);
    fm_job_unref(job);
}

fm_job *fm_job_start(const fm_method *method, fm_dataset *dataset, const fm_params *params,
                     GPtrArray *rois, fm_backend backend, fm_catalogue *catalogue,
                     fm_job_progress_fn progress, fm_job_done_fn done, gpointer user)
{
    g_return_val_if_fail(method != NULL && dataset != NULL, NULL);
    fm_job *job = g_new0(fm_job, 1);
    job->ref_count = 1;
    job->method = method;
    job->dataset = fm_dataset_ref(dataset);
    job->params = params ? fm_params_copy(params) : fm_method_default_params(method);
    if (rois) {
        job->rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
        for (guint i = 0; i < rois->len; i++)
            g_ptr_array_add(job->rois, fm_roi_copy(g_ptr_array_index(rois, i)));
    }
    job->backend = backend;
    job->catalogue = catalogue;
    job->progress_fn = progress;
    job->done_fn = done;
    job->user = user;
    job->main_context = g_main_context_ref_thread_default();
    job->cancellable = g_cancellable_new();
    job->state = FM_JOB_QUEUED;
    job->stage = FM_STAGE_PREPARE; /* the dataset is in memory already */
    g_mutex_init(&job->lock);

    /* The task's own cancellable stays NULL: cancellation is the method's business, and the
     * job must still record the outcome in the catalogue after a cancel. */
    GTask *task = g_task_new(NULL, NULL, job_finished, fm_job_ref(job));
    g_task_set_task_data(task, job, NULL);
    g_task_set_name(task, "fluxmap job");
    g_task_run_in_thread(task, run_in_thread);
    g_object_unref(task);
    return job;
}

void fm_job_cancel(fm_job *job)
{
    g_cancellable_cancel(job->cancellable);
}

fm_job_state fm_job_get_state(const fm_job *job)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    fm_job_state s = (fm_job_state)j->state;
    g_mutex_unlock(&j->lock);
    return s;
}

double fm_job_get_progress(const fm_job *job)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    double p = j->progress;
    g_mutex_unlock(&j->lock);
    return p;
}

const fm_method *fm_job_get_method(const fm_job *job)
{
    return job->method;
}

const fm_result *fm_job_get_result(const fm_job *job)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    const fm_result *r = j->result;
    g_mutex_unlock(&j->lock);
    return r;
}

const GError *fm_job_get_error(const fm_job *job)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    const GError *e = j->error;
    g_mutex_unlock(&j->lock);
    return e;
}

void fm_job_set_ready_callback(fm_job *job, fm_job_done_fn ready)
{
    job->ready_fn = ready;
}

const fm_result *fm_job_get_ready_result(const fm_job *job)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    const fm_result *r = j->ready;
    g_mutex_unlock(&j->lock);
    return r;
}

fm_stage_times fm_job_get_stage_times(const fm_job *job, fm_stage *current)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    fm_stage_times t = j->stages;
    if (current)
        *current = (fm_stage)j->stage;
    g_mutex_unlock(&j->lock);
    return t;
}

gint64 fm_job_get_run_id(const fm_job *job)
{
    fm_job *j = (fm_job *)job;
    g_mutex_lock(&j->lock);
    gint64 id = j->run_id;
    g_mutex_unlock(&j->lock);
    return id;
}

char *fm_job_describe(const fm_job *job)
{
    g_autofree char *base = job->dataset->source_path
                                ? g_path_get_basename(job->dataset->source_path)
                                : g_strdup(_("unsaved data"));
    /* TRANSLATORS: "lsi.spatial on speckle.tif" */
    return g_strdup_printf(_("%s on %s"), job->method->id, base);
}
