/* A batch in the job list: a header row (what runs on how many files, a progress bar, items
 * done of all, rate and time left, Cancel) above one row per file (waiting, running, done, or
 * failed with its reason). */
#pragma once

#include <gtk/gtk.h>
#include "app/core/batch/batch_plan.h"
#include "batch-run.h"

G_BEGIN_DECLS

typedef struct fm_batch_view fm_batch_view;

/* The view of plan's items under title; cancel is called when its Cancel button is pressed.
 * The widget (fm_batch_view_widget) owns the view: it goes with the widget. */
fm_batch_view *fm_batch_view_new(const char *title, const fm_batch_plan *plan, GCallback cancel,
                                 gpointer cancel_data);
GtkWidget *fm_batch_view_widget(fm_batch_view *view);
void fm_batch_view_update(fm_batch_view *view, const fm_gui_batch_event *event);

/* For tests: the header's line ("2 of 3 done · …"), an item's row and its state ("Waiting",
 * "Running…", "Done", "Failed", "Not run"). */
GtkWidget *fm_batch_view_status_label(fm_batch_view *view);
GtkWidget *fm_batch_view_cancel_button(fm_batch_view *view);
GtkWidget *fm_batch_view_item_row(fm_batch_view *view, int item);
GtkWidget *fm_batch_view_item_state(fm_batch_view *view, int item);
/* A failed item's reason (shown under its row once it failed). */
GtkWidget *fm_batch_view_item_reason(fm_batch_view *view, int item);

G_END_DECLS
