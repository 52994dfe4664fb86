/* One task of a batch: its share of the plan's items in one process, the device started once,
 * reading item k+1, computing item k and writing item k-1 at the same time, into its shard. */
#pragma once

#include <gio/gio.h>
#include "app/core/batch/batch_plan.h"
#include "app/core/catalogue.h"
#include "app/core/stages.h"
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

/* One item finished (done or failed), told from the writing thread. */
typedef struct {
    int index;         /* the plan's item */
    const char *input; /* its input */
    gboolean ok;       /* done; else failed with message */
    const char *message;
    int done, failed, total; /* the task's items so far and in all (those it runs now) */
    double elapsed_s;        /* since the task began */
    double read_ms, compute_ms, write_ms; /* this item's stages */
} fm_batch_event;

typedef void (*fm_batch_event_fn)(const fm_batch_event *event, gpointer user);

typedef struct {
    const char *run_dir;
    int task, ntasks; /* 0 <= task < ntasks; item i is task i mod ntasks's */
    /* A batch of one process (the GUI's) may record straight into a catalogue: with plan and
     * catalogue set (both borrowed), every item of the plan runs and shows in the catalogue as
     * soon as it is written; no run_dir, shard or resume. */
    const fm_batch_plan *plan;
    fm_catalogue *catalogue;
    fm_backend backend;
    gboolean sequential;       /* one stage after the other (to time the stages on their own) */
    gboolean retry_failed;     /* a complete task's failed items run again, into a retry shard */
    fm_batch_event_fn on_item; /* may be NULL */
    /* may be NULL: an item's compute begins, told from the computing thread (index, input and
     * total set; an item's rows show it running) */
    fm_batch_event_fn on_compute;
    gpointer user; /* of both */
    /* may be NULL; once cancelled no further item is read or computed: those in progress are
     * written, and the shard is made visible with them alone, so that a rerun runs only the
     * items it does not hold */
    GCancellable *cancellable;
} fm_batch_task_options;

typedef struct {
    gboolean was_complete; /* the shard was complete already (nothing failed, or no retry
                            * asked): nothing ran; done and failed are the shards' */
    int retry;             /* > 0: this run retried failed items into shard task-K-of-N.rR */
    int items, done, failed;
    gboolean cancelled;                   /* stopped by the cancellable: some items did not run */
    double wall_s;                        /* from the start to the shard made visible */
    double device_start_ms;               /* the wait for the device (0 on the CPU) */
    double read_ms, compute_ms, write_ms; /* summed over the items */
    /* where the compute stage's time went, summed over the items: the catalogue (recording the
     * run), the method's preparation, upload, kernels and download; and the writer's freeing of
     * the input after the write */
    fm_stage_times stages;
    double release_ms;
    char *shard_dir; /* the complete shard (g_free it) */
} fm_batch_task_summary;

/* Runs the task: a complete shard of it is left as it is (was_complete) unless retry_failed
 * and some of its items failed: those run again into a shard of their own (task-K-of-N.rR,
 * whose done items the merge puts in place of the failed runs); a .partial one a killed task
 * left is removed and its items run again. An item's failure is recorded in the shard (a
 * failed run with the message) and the task goes on. Items of the task that no shard holds
 * (a cancelled run's) run again, into a retry shard. FALSE with error only when the task
 * itself cannot go on (no plan, the shard cannot be written). */
gboolean fm_batch_task_run(const fm_batch_task_options *options, fm_batch_task_summary *summary,
                           GError **error);

G_END_DECLS
