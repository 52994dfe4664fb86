/* A GUI batch ("Run on files…"): one method over several files on this machine, as one batch
 * task (files read, computed and written at once) on a worker thread of its own; its results go
 * into the window's catalogue as one group when it ends, and a cancel keeps what is done. */
#pragma once

#include <glib.h>
#include "app/core/batch/batch_plan.h"
#include "app/core/catalogue.h"
#include "kernels/fm_kernel.h"

G_BEGIN_DECLS

typedef struct fm_gui_batch fm_gui_batch;

/* What the worker tells the main loop (always called there). */
typedef enum {
    FM_GUI_BATCH_ITEM_STARTED,
    FM_GUI_BATCH_ITEM_DONE,
    FM_GUI_BATCH_ITEM_FAILED,
    FM_GUI_BATCH_FINISHED, /* message: why the batch itself stopped early, else NULL */
} fm_gui_batch_event_kind;

typedef struct {
    fm_gui_batch_event_kind kind;
    int item;            /* index in the plan (items events) */
    const char *message; /* a failed item's reason, or the batch's own failure */
    int done, failed, total;
    double elapsed_s;   /* since the first item started */
    gboolean cancelled; /* FINISHED: stopped by fm_gui_batch_cancel */
} fm_gui_batch_event;

typedef void (*fm_gui_batch_fn)(fm_gui_batch *batch, const fm_gui_batch_event *event,
                                gpointer user);

/* Plans method with params over paths (files, or folders whose files are taken): each checked
 * before anything runs; the bad ones go to problems (fm_batch_problem*), *skipped counts a
 * folder's files no reader takes. NULL (with problems filled) when no item can run. */
fm_gui_batch *fm_gui_batch_plan(const fm_method *method, const fm_params *params,
                                const char *const *paths, int n_paths, GPtrArray *problems,
                                int *skipped);
void fm_gui_batch_free(fm_gui_batch *batch); /* only once finished, or never started */

const fm_batch_plan *fm_gui_batch_get_plan(const fm_gui_batch *batch);
/* "Speckle contrast on 3 files": the method's title and the item count. */
char *fm_gui_batch_describe(const fm_gui_batch *batch);

/* Runs the plan on backend into cat (each run there as soon as it is written), calling fn on
 * the main loop; cat must stay open until FINISHED. */
void fm_gui_batch_start(fm_gui_batch *batch, fm_catalogue *cat, fm_backend backend,
                        fm_gui_batch_fn fn, gpointer user);
/* Stops after the items in progress (the one computing, and the one being written); what is
 * done stays in the catalogue. */
void fm_gui_batch_cancel(fm_gui_batch *batch);
gboolean fm_gui_batch_is_running(const fm_gui_batch *batch);

G_END_DECLS
