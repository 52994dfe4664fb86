/* One task of a batch: three stages on three threads joined by bounded queues (read item k+1,
 * compute item k, write item k-1), one warm device, a shard made visible by one rename. */
#include "batch_task.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "app/core/catalogue.h"
#include "app/core/catalogue_batch.h"
#include "app/core/device_warmup.h"
#include "app/core/error.h"
#include "app/core/io/open.h"
#include "app/core/method.h"
#include "app/core/roi.h"
#include "app/core/roi_labels.h"
#include "app/core/stages.h"
#include "batch_plan.h"
#include "batch_queue.h"
#include "batch_shard.h"
#include "kernels/device.h"

/* One item on its way through the stages. */
typedef struct {
    const fm_batch_item *item;
    const fm_method *method;
    fm_params *params;
    fm_dataset *dataset;
    GPtrArray *rois;
    fm_result *result;
    gint64 run_id;
    GError *error;       /* the first stage that failed says why; later stages pass it on */
    GError *shard_error; /* the shard's catalogue failed: the task cannot go on */
    double read_ms, compute_ms, write_ms;
    fm_stage_times stages; /* the compute stage's parts */
    double release_ms;
} work;

static void work_free(work *w)
{
    if (w->params)
        fm_params_free(w->params);
    g_clear_pointer(&w->dataset, fm_dataset_unref);
    g_clear_pointer(&w->rois, g_ptr_array_unref);
    g_clear_pointer(&w->result, fm_result_free);
    g_clear_error(&w->error);
    g_clear_error(&w->shard_error);
    g_free(w);
}

typedef struct {
    const fm_batch_task_options *options;
    const fm_batch_plan *plan;
    GPtrArray *share;    /* of const fm_batch_item*: the items this task runs */
    fm_catalogue *shard; /* where the runs go: the task's shard, or the caller's catalogue */
    fm_batch_queue *write_q;
    fm_batch_task_summary *summary;
    GArray *indices;        /* the items written, for shard.json */
    GArray *failed_indices; /* those that failed */
    double t0;
} task;

/* The ROIs of an item: a JSON list, or a label map over its dataset with the roles its label
 * description file gives. */
static GPtrArray *load_rois(const char *path, const fm_dataset *ds, GError **error)
{
    if (!fm_roi_is_label_map_path(path))
        return fm_roi_list_from_file(path, error);
    g_autofree char *sidecar = fm_roi_labels_sidecar_path(path);
    g_autoptr(GPtrArray) labels = NULL;
    if (g_file_test(sidecar, G_FILE_TEST_EXISTS) &&
        !(labels = fm_roi_labels_parse(sidecar, NULL, error)))
        return NULL;
    return fm_roi_list_from_label_map(path, ds, labels, FALSE, error);
}

static void read_item(work *w)
{
    double t = fm_stage_now_ms();
    w->method = fm_method_find(w->item->method);
    if (w->method == NULL) {
        g_set_error(&w->error, FM_ERROR, FM_ERROR_BAD_PARAM, _("unknown method '%s'"),
                    w->item->method);
        return;
    }
    w->params = fm_method_default_params(w->method);
    if (!fm_params_set_from_json(w->params, w->item->params_json, &w->error))
        return;
    w->dataset =
        fm_dataset_open_with_params(w->item->input, w->params, NULL, NULL, NULL, &w->error);
    if (w->dataset && w->item->roi)
        w->rois = load_rois(w->item->roi, w->dataset, &w->error);
    w->read_ms = fm_stage_now_ms() - t;
}

static void compute_item(task *t, work *w)
{
    double t0 = fm_stage_now_ms();
    const fm_batch_task_options *o = t->options;
    if (o->on_compute) {
        fm_batch_event ev = {.index = w->item->index,
                             .input = w->item->input,
                             .ok = TRUE,
                             .total = (int)t->share->len,
                             .elapsed_s = (t0 - t->t0) / 1000.0};
        o->on_compute(&ev, o->user);
    }
    w->run_id = fm_catalogue_begin_run(t->shard, w->dataset, w->item->method, w->item->params_json,
                                       w->rois, &w->shard_error);
    w->stages.ms[FM_STAGE_CATALOGUE] = fm_stage_now_ms() - t0;
    if (w->run_id > 0 &&
        !fm_catalogue_set_run_batch(t->shard, w->run_id, t->plan->batch_id, w->item->index,
                                    w->item->input, w->item->output, &w->shard_error))
        w->run_id = 0;
    if (w->run_id <= 0)
        return;
    if (w->error == NULL) {
        fm_job_context context = {.backend = o->backend, .stages = &w->stages};
        w->result = fm_method_run(w->method, w->dataset, w->params, w->rois, &context, &w->error);
    }
    w->compute_ms = fm_stage_now_ms() - t0;
}

/* Records the item in the shard; FALSE when the shard itself failed. */
static gboolean write_item(task *t, work *w)
{
    double t0 = fm_stage_now_ms();
    if (w->shard_error)
        return FALSE;
    if (w->error == NULL)
        fm_catalogue_finish_run_with(t->shard, w->run_id, w->result, NULL, NULL, &w->error);
    else
        fm_catalogue_abort_run(t->shard, w->run_id,
                               g_error_matches(w->error, FM_ERROR, FM_ERROR_CANCELLED)
                                   ? FM_RUN_CANCELLED
                                   : FM_RUN_FAILED,
                               w->error->message, &w->shard_error);
    g_clear_pointer(&w->result, fm_result_free);
    w->write_ms = fm_stage_now_ms() - t0;
    /* The samples go here, not after the compute: unmapping 128 MB and dropping its device copy
     * took 11-14 ms of the compute stage's 48 on the H100 machine. */
    double t1 = fm_stage_now_ms();
    g_clear_pointer(&w->dataset, fm_dataset_unref);
    w->release_ms = fm_stage_now_ms() - t1;
    if (w->shard_error)
        return FALSE;
    fm_batch_task_summary *s = t->summary;
    if (w->error)
        s->failed++;
    else
        s->done++;
    s->read_ms += w->read_ms;
    s->compute_ms += w->compute_ms;
    s->write_ms += w->write_ms;
    for (int k = 0; k < FM_N_STAGES; k++)
        s->stages.ms[k] += w->stages.ms[k];
    s->release_ms += w->release_ms;
    g_array_append_val(t->indices, w->item->index);
    if (w->error)
        g_array_append_val(t->failed_indices, w->item->index);
    if (t->options->on_item) {
        fm_batch_event ev = {.index = w->item->index,
                             .input = w->item->input,
                             .ok = w->error == NULL,
                             .message = w->error ? w->error->message : NULL,
                             .done = s->done,
                             .failed = s->failed,
                             .total = (int)t->share->len,
                             .elapsed_s = (fm_stage_now_ms() - t->t0) / 1000.0,
                             .read_ms = w->read_ms,
                             .compute_ms = w->compute_ms,
                             .write_ms = w->write_ms};
        t->options->on_item(&ev, t->options->user);
    }
    return TRUE;
}

static gboolean cancelled(const task *t)
{
    return g_cancellable_is_cancelled(t->options->cancellable);
}

/* Reader r reads items r, r + n_readers, ... into its own queue; the compute stage takes them
 * back in order from the queues in turn. */
typedef struct {
    task *t;
    guint first, step;
    fm_batch_queue *queue;
} reader_args;

static gpointer reader_thread(gpointer data)
{
    reader_args *a = data;
    for (guint i = a->first; i < a->t->share->len && !cancelled(a->t); i += a->step) {
        work *w = g_new0(work, 1);
        w->item = a->t->share->pdata[i];
        read_item(w);
        fm_batch_queue_push(a->queue, w);
    }
    fm_batch_queue_close(a->queue);
    return NULL;
}

/* Readers beside the compute and write stages: reading a file is one thread's parsing (a
 * 128 MB .sdt took 137 ms while the GPU computed it in 46), so machines with cores to spare
 * read several items at once; two cores keep one reader. */
static guint reader_count(guint n_items)
{
    guint n = (guint)CLAMP(g_get_num_processors() / 4, 1, 4);
    const char *forced = g_getenv("FLUXMAP_BATCH_READERS"); /* tests: several readers anywhere */
    if (forced && *forced)
        n = (guint)CLAMP(g_ascii_strtoull(forced, NULL, 10), 1, 4);
    return MAX(MIN(n, n_items), 1);
}

/* The shard's first failure, kept by the writer for the task's error. */
typedef struct {
    task *t;
    GError *error;
} writer_state;

static gpointer writer_thread(gpointer data)
{
    writer_state *ws = data;
    work *w;
    while ((w = fm_batch_queue_pop(ws->t->write_q)) != NULL) {
        if (ws->error == NULL && !write_item(ws->t, w))
            ws->error = g_steal_pointer(&w->shard_error);
        work_free(w);
    }
    return NULL;
}

static gboolean run_items(task *t, GError **error)
{
    if (t->options->sequential) {
        for (guint i = 0; i < t->share->len && !cancelled(t); i++) {
            work *w = g_new0(work, 1);
            w->item = t->share->pdata[i];
            read_item(w);
            if (cancelled(t)) {
                work_free(w);
                break;
            }
            compute_item(t, w);
            gboolean ok = write_item(t, w);
            if (!ok)
                g_propagate_error(error, g_steal_pointer(&w->shard_error));
            work_free(w);
            if (!ok)
                return FALSE;
        }
        return TRUE;
    }
    /* One item waits between stages at most: memory stays at about two items more than there
     * are readers. */
    const guint n_readers = reader_count(t->share->len);
    fm_batch_queue *read_q[4];
    GThread *readers[4];
    reader_args args[4];
    t->write_q = fm_batch_queue_new(1);
    writer_state ws = {t, NULL};
    for (guint r = 0; r < n_readers; r++) {
        read_q[r] = fm_batch_queue_new(1);
        args[r] = (reader_args){t, r, n_readers, read_q[r]};
        readers[r] = g_thread_new("batch-read", reader_thread, &args[r]);
    }
    GThread *writer = g_thread_new("batch-write", writer_thread, &ws);
    for (guint i = 0; i < t->share->len; i++) {
        work *w = fm_batch_queue_pop(read_q[i % n_readers]);
        if (w == NULL)
            break;
        if (cancelled(t)) {
            work_free(w);
            break;
        }
        compute_item(t, w);
        fm_batch_queue_push(t->write_q, w);
    }
    fm_batch_queue_close(t->write_q);
    for (guint r = 0; r < n_readers; r++) {
        /* after a cancel: a reader may wait to hand over an item read already; it is dropped
         * (not written, so a rerun runs it) */
        work *w;
        while ((w = fm_batch_queue_pop(read_q[r])) != NULL)
            work_free(w);
        g_thread_join(readers[r]);
        fm_batch_queue_free(read_q[r]);
    }
    g_thread_join(writer);
    fm_batch_queue_free(t->write_q);
    if (ws.error) {
        g_propagate_error(error, ws.error);
        return FALSE;
    }
    return TRUE;
}

/* The items a task ran: written (done or failed), and of those the failed. */
typedef struct {
    GArray *written, *failed;
} ran_items;

/* Makes the partial shard complete: its description, then one rename. */
static gboolean publish(const fm_batch_plan *plan, const fm_batch_task_options *o,
                        const fm_batch_task_summary *summary, const ran_items *ran,
                        const char *partial, const char *final, GError **error)
{
    fm_batch_shard info = {.batch_id = plan->batch_id,
                           .task = o->task,
                           .ntasks = o->ntasks,
                           .retry = summary->retry,
                           .done = summary->done,
                           .failed = summary->failed,
                           .items = ran->written,
                           .failed_items = ran->failed};
    if (!fm_batch_shard_write_info(&info, partial, error))
        return FALSE;
    if (g_rename(partial, final) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot rename to %s: %s"), partial, final,
                    g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* Runs share into the catalogue `into` (a shard, or the caller's) with the device started once;
 * ran gets the items written. */
static gboolean run_share(const fm_batch_task_options *o, const fm_batch_plan *plan,
                          GPtrArray *share, fm_catalogue *into, fm_batch_task_summary *summary,
                          ran_items *ran, double t0, GError **error)
{
    summary->items = (int)share->len;
    g_autoptr(fm_device_warmup) warmup =
        o->backend != FM_BACKEND_CPU && fm_device_cuda_built() && share->len > 0
            ? fm_device_warmup_start(NULL, NULL, TRUE)
            : NULL;
    if (warmup)
        summary->device_start_ms = fm_device_warmup_wait(warmup, NULL, NULL, NULL, NULL);
    ran->written = g_array_new(FALSE, FALSE, sizeof(int));
    ran->failed = g_array_new(FALSE, FALSE, sizeof(int));
    task t = {.options = o,
              .plan = plan,
              .share = share,
              .shard = into,
              .summary = summary,
              .indices = ran->written,
              .failed_indices = ran->failed,
              .t0 = t0};
    gboolean ok = run_items(&t, error);
    summary->cancelled = cancelled(&t) && (int)ran->written->len < summary->items;
    return ok;
}

static void ran_items_clear(ran_items *ran)
{
    g_clear_pointer(&ran->written, g_array_unref);
    g_clear_pointer(&ran->failed, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(ran_items, ran_items_clear)

/* Every item of the plan straight into the caller's catalogue. */
static gboolean run_into_catalogue(const fm_batch_task_options *o, fm_batch_task_summary *summary,
                                   double t0, GError **error)
{
    g_autoptr(GPtrArray) share = g_ptr_array_new();
    for (guint i = 0; i < o->plan->items->len; i++)
        g_ptr_array_add(share, o->plan->items->pdata[i]);
    g_auto(ran_items) ran = {0};
    gboolean ok = run_share(o, o->plan, share, o->catalogue, summary, &ran, t0, error);
    summary->wall_s = (fm_stage_now_ms() - t0) / 1000.0;
    return ok;
}

gboolean fm_batch_task_run(const fm_batch_task_options *o, fm_batch_task_summary *summary,
                           GError **error)
{
    *summary = (fm_batch_task_summary){0};
    double t0 = fm_stage_now_ms();
    if (o->plan && o->catalogue)
        return run_into_catalogue(o, summary, t0, error);
    if (o->ntasks < 1 || o->task < 0 || o->task >= o->ntasks) {
        g_set_error(error, FM_ERROR, FM_ERROR_BAD_PARAM, _("task %d of %d does not exist"), o->task,
                    o->ntasks);
        return FALSE;
    }
    g_autoptr(fm_batch_plan) plan = fm_batch_plan_load(o->run_dir, error);
    if (plan == NULL)
        return FALSE;
    /* The task's complete shards: what is done, what failed (a retry's done wins) */
    g_autoptr(GPtrArray) shards = fm_batch_shards_list(o->run_dir, error);
    if (shards == NULL)
        return FALSE;
    g_autofree signed char *state = g_new0(signed char, MAX(plan->items->len, 1));
    int retry = 0, n_shards = 0;
    for (guint i = 0; i < shards->len; i++) {
        const fm_batch_shard *s = shards->pdata[i];
        if (s->task != o->task || s->ntasks != o->ntasks ||
            g_strcmp0(s->batch_id, plan->batch_id) != 0)
            continue;
        n_shards++;
        retry = MAX(retry, s->retry + 1);
        /* shards come by retry: a later one's word on an item wins */
        for (int pass = 0; pass < 2; pass++) {
            GArray *list = pass ? s->failed_items : s->items;
            for (guint k = 0; k < list->len; k++) {
                int index = g_array_index(list, int, k);
                if (index >= 0 && (guint)index < plan->items->len)
                    state[index] = pass ? -1 : 1;
            }
        }
    }
    g_autoptr(GPtrArray) share = g_ptr_array_new();
    for (guint i = 0; i < plan->items->len; i++) {
        gboolean mine = (int)(i % (guint)o->ntasks) == o->task;
        summary->done += mine && state[i] == 1;
        summary->failed += mine && state[i] == -1;
        /* an item no shard holds (a cancelled run's) runs again; a failed one only on request */
        if (mine && (state[i] == 0 || (o->retry_failed && state[i] == -1)))
            g_ptr_array_add(share, plan->items->pdata[i]);
    }
    g_autofree char *final =
        fm_batch_shard_retry_path(o->run_dir, o->task, o->ntasks, n_shards ? retry : 0, FALSE);
    g_autofree char *partial =
        fm_batch_shard_retry_path(o->run_dir, o->task, o->ntasks, n_shards ? retry : 0, TRUE);
    summary->shard_dir = g_strdup(final);
    if (n_shards > 0 && share->len == 0) { /* complete, and nothing to retry */
        summary->was_complete = TRUE;
        summary->items = summary->done + summary->failed;
        g_free(summary->shard_dir);
        summary->shard_dir = fm_batch_shard_path(o->run_dir, o->task, o->ntasks, FALSE);
        return TRUE;
    }
    summary->done = summary->failed = 0;
    summary->retry = n_shards ? retry : 0;
    /* A .partial folder is a killed task's: nothing in it counts */
    if (!fm_batch_remove_tree(partial, error))
        return FALSE;
    g_autoptr(fm_catalogue) shard = fm_catalogue_open(partial, error);
    if (shard == NULL)
        return FALSE;
    g_auto(ran_items) ran = {0};
    gboolean ok = run_share(o, plan, share, shard, summary, &ran, t0, error);
    g_clear_pointer(&shard, fm_catalogue_close); /* the WAL folded into catalogue.db */
    ok = ok && publish(plan, o, summary, &ran, partial, final, error);
    summary->wall_s = (fm_stage_now_ms() - t0) / 1000.0;
    return ok;
}
