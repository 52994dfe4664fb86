/* A GUI batch: the plan's items run one task each (task i of N holds item i), one after the other
 * on one worker thread, so that a cancel takes effect between items and each item's shard is
 * merged into the catalogue as soon as it is complete. The device is started by the first item
 * and stays warm in this process for the others. */
#include "batch-run.h"

#include <glib/gi18n.h>

#include "app/core/batch/batch_shard.h"
#include "app/core/batch/batch_task.h"
#include "app/core/catalogue_batch.h"
#include "app/core/error.h"
#include "app/core/method.h"
#include "app/core/params.h"

struct fm_gui_batch {
    fm_batch_plan *plan;
    char *title; /* the method's */
    char *run_dir;
    fm_catalogue *cat; /* borrowed */
    fm_backend backend;
    fm_gui_batch_fn fn;
    gpointer user;
    GThread *thread;
    gint cancel;  /* atomic */
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
    g_free(batch->run_dir);
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

/* The item's outcome as the task tells it (from its writing thread). */
typedef struct {
    gboolean seen, ok;
    char *message;
} item_outcome;

static void on_item(const fm_batch_event *event, gpointer user)
{
    item_outcome *out = user;
    out->seen = TRUE;
    out->ok = event->ok;
    g_free(out->message);
    out->message = g_strdup(event->message);
}

/* Runs item i as task i of N and merges its shard; FALSE with error when the batch cannot go on
 * (its shard or the catalogue failed), else the item's own outcome in *out. */
static gboolean run_one(fm_gui_batch *b, int i, item_outcome *out, GError **error)
{
    int n = (int)b->plan->items->len;
    fm_batch_task_options o = {.run_dir = b->run_dir,
                               .task = i,
                               .ntasks = n,
                               .backend = b->backend,
                               .on_item = on_item,
                               .user = out};
    fm_batch_task_summary summary = {0};
    gboolean ok = fm_batch_task_run(&o, &summary, error);
    if (ok) {
        fm_catalogue_merge_counts counts = {0};
        ok = fm_catalogue_merge_shard(b->cat, summary.shard_dir, b->plan->batch_id, &counts, error);
        /* the catalogue holds the maps now: the shard's copy would only take room */
        if (ok)
            fm_batch_remove_tree(summary.shard_dir, NULL);
    }
    if (ok && !out->seen) { /* the task ran nothing: say so rather than nothing */
        out->ok = FALSE;
        out->message = g_strdup(_("the item did not run"));
    }
    g_free(summary.shard_dir);
    return ok;
}

static gpointer worker(gpointer data)
{
    fm_gui_batch *b = data;
    int total = (int)b->plan->items->len, done = 0, failed = 0;
    gint64 t0 = g_get_monotonic_time();
    g_autoptr(GError) error = NULL;
    gboolean cancelled = FALSE;
    for (int i = 0; i < total; i++) {
        if (g_atomic_int_get(&b->cancel)) {
            cancelled = TRUE;
            break;
        }
        double elapsed = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
        post(b,
             &(fm_gui_batch_event){FM_GUI_BATCH_ITEM_STARTED, i, NULL, done, failed, total, elapsed,
                                   FALSE},
             NULL);
        item_outcome out = {0};
        gboolean ok = run_one(b, i, &out, &error);
        if (ok) {
            done += out.ok;
            failed += !out.ok;
            elapsed = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
            post(b,
                 &(fm_gui_batch_event){out.ok ? FM_GUI_BATCH_ITEM_DONE : FM_GUI_BATCH_ITEM_FAILED,
                                       i, NULL, done, failed, total, elapsed, FALSE},
                 out.message);
        }
        g_free(out.message);
        if (!ok)
            break;
    }
    double elapsed = (double)(g_get_monotonic_time() - t0) / G_USEC_PER_SEC;
    post(b,
         &(fm_gui_batch_event){FM_GUI_BATCH_FINISHED, -1, NULL, done, failed, total, elapsed,
                               cancelled},
         error != NULL ? error->message : NULL);
    return NULL;
}

gboolean fm_gui_batch_start(fm_gui_batch *batch, fm_catalogue *cat, fm_backend backend,
                            fm_gui_batch_fn fn, gpointer user, GError **error)
{
    g_return_val_if_fail(batch->thread == NULL, FALSE);
    batch->run_dir =
        g_build_filename(fm_catalogue_dir(cat), "batches", batch->plan->batch_id, NULL);
    if (!fm_batch_plan_save(batch->plan, batch->run_dir, error))
        return FALSE;
    batch->cat = cat;
    batch->backend = backend;
    batch->fn = fn;
    batch->user = user;
    g_atomic_int_set(&batch->running, TRUE);
    batch->thread = g_thread_new("fm-batch", worker, batch);
    return TRUE;
}

void fm_gui_batch_cancel(fm_gui_batch *batch)
{
    g_atomic_int_set(&batch->cancel, TRUE);
}

gboolean fm_gui_batch_is_running(const fm_gui_batch *batch)
{
    return g_atomic_int_get((gint *)&batch->running);
}
