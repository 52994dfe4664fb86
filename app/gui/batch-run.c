/* A GUI batch: the plan's items run as one task on a worker thread (the task's stages overlap:
 * one file read while the one before is computed and the one before that written; the device
 * started once), cancelled through its GCancellable after the items in progress; each run goes
 * into the catalogue as it is written. */
#include "batch-run.h"

#include <glib/gi18n.h>

#include "app/core/batch/batch_task.h"
#include "app/core/method.h"
#include "app/core/params.h"

struct fm_gui_batch {
    fm_batch_plan *plan;
    char *title;       /* the method's */
    fm_catalogue *cat; /* borrowed */
    fm_backend backend;
    fm_gui_batch_fn fn;
    gpointer user;
    GThread *thread;
    GCancellable *cancellable;
    gint running; /* atomic */
};

fm_gui_batch *fm_gui_batch_plan(const fm_method *method, const fm_params *params,
                                const char *const *paths, int n_paths, GPtrArray *problems,
                                int *skipped)
{
    g_autofree char *params_json = fm_params_to_json(params);
    fm_batch_plan *plan = fm_batch_plan_new();
    fm_batch_plan_add_files(plan, method, params_json, NULL, paths, n_paths, problems, skipped);
    if (plan->items->len == 0) {
        fm_batch_plan_free(plan);
        return NULL;
    }
    fm_gui_batch *batch = g_new0(fm_gui_batch, 1);
    batch->plan = plan;
    batch->title = g_strdup(_(method->title));
    batch->cancellable = g_cancellable_new();
    return batch;
}

void fm_gui_batch_free(fm_gui_batch *batch)
{
    if (batch == NULL)
        return;
    if (batch->thread != NULL)
        g_thread_join(batch->thread);
    fm_batch_plan_free(batch->plan);
    g_free(batch->title);
    g_clear_object(&batch->cancellable);
    g_free(batch);
}

const fm_batch_plan *fm_gui_batch_get_plan(const fm_gui_batch *batch)
{
    return batch->plan;
}

char *fm_gui_batch_describe(const fm_gui_batch *batch)
{
    guint n = batch->plan->items->len;
    /* TRANSLATORS: "Speckle contrast on 12 files" */
    return g_strdup_printf(g_dngettext(NULL, "%s on %u file", "%s on %u files", n), batch->title,
                           n);
}

/* ---- the worker ------------------------------------------------------------------------- */

typedef struct {
    fm_gui_batch *batch;
    fm_gui_batch_event event;
    char *message;
} posted;

static void posted_free(gpointer data)
{
    posted *p = data;
    g_free(p->message);
    g_free(p);
}

static gboolean deliver(gpointer data)
{
    posted *p = data;
    p->event.message = p->message;
    if (p->event.kind == FM_GUI_BATCH_FINISHED) {
        g_thread_join(p->batch->thread); /* it has returned or is about to */
        p->batch->thread = NULL;
        g_atomic_int_set(&p->batch->running, FALSE);
    }
    p->batch->fn(p->batch, &p->event, p->batch->user);
    return G_SOURCE_REMOVE;
}

static void post(fm_gui_batch *batch, const fm_gui_batch_event *event, const char *message)
{
    posted *p = g_new0(posted, 1);
    p->batch = batch;
    p->event = *event;
    p->message = g_strdup(message);
    /* an idle, not g_main_context_invoke: that runs it here when no thread holds the loop */
    g_idle_add_full(G_PRIORITY_DEFAULT, deliver, p, posted_free);
}

/* The task's events, told from its threads, posted to the main loop as the rows' events. */
typedef struct {
    fm_gui_batch *batch;
    gint64 t0;
    gint done, failed; /* atomic: written by the task's writing thread, read by its computing one */
} worker_state;

static double since(const worker_state *w)
{
    return (double)(g_get_monotonic_time() - w->t0) / G_USEC_PER_SEC;
}

static void on_compute(const fm_batch_event *event, gpointer user)
{
    worker_state *w = user;
    post(w->batch,
         &(fm_gui_batch_event){FM_GUI_BATCH_ITEM_STARTED, event->index, NULL,
                               g_atomic_int_get(&w->done), g_atomic_int_get(&w->failed),
                               event->total, since(w), FALSE},
         NULL);
}

static void on_item(const fm_batch_event *event, gpointer user)
{
    worker_state *w = user;
    g_atomic_int_set(&w->done, event->done);
    g_atomic_int_set(&w->failed, event->failed);
    post(w->batch,
         &(fm_gui_batch_event){event->ok ? FM_GUI_BATCH_ITEM_DONE : FM_GUI_BATCH_ITEM_FAILED,
                               event->index, NULL, event->done, event->failed, event->total,
                               since(w), FALSE},
         event->message);
}

/* All items as one task (the files read, computed and written at once, the device started
 * once), recorded straight into the catalogue; a cancel stops it after the items in progress:
 * what is done stays. */
static gpointer worker(gpointer data)
{
    fm_gui_batch *b = data;
    worker_state w = {.batch = b, .t0 = g_get_monotonic_time()};
    g_autoptr(GError) error = NULL;
    fm_batch_task_options o = {.plan = b->plan,
                               .catalogue = b->cat,
                               .task = 0,
                               .ntasks = 1,
                               .backend = b->backend,
                               .on_item = on_item,
                               .on_compute = on_compute,
                               .user = &w,
                               .cancellable = b->cancellable};
    fm_batch_task_summary summary = {0};
    fm_batch_task_run(&o, &summary, &error);
    post(b,
         &(fm_gui_batch_event){FM_GUI_BATCH_FINISHED, -1, NULL, w.done, w.failed,
                               (int)b->plan->items->len, since(&w), summary.cancelled},
         error != NULL ? error->message : NULL);
    return NULL;
}

void fm_gui_batch_start(fm_gui_batch *batch, fm_catalogue *cat, fm_backend backend,
                        fm_gui_batch_fn fn, gpointer user)
{
    g_return_if_fail(batch->thread == NULL);
    batch->cat = cat;
    batch->backend = backend;
    batch->fn = fn;
    batch->user = user;
    g_atomic_int_set(&batch->running, TRUE);
    batch->thread = g_thread_new("fm-batch", worker, batch);
}

void fm_gui_batch_cancel(fm_gui_batch *batch)
{
    g_cancellable_cancel(batch->cancellable);
}

gboolean fm_gui_batch_is_running(const fm_gui_batch *batch)
{
    return g_atomic_int_get((gint *)&batch->running);
}
