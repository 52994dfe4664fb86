/* The window's "Run on files…": the method and parameters of the page on show, run over several
 * files or a folder in one batch (batch-run.c), listed in the job list (batch-view.c). */
#pragma once

#include <gtk/gtk.h>
#include "batch-view.h"
#include "window.h"

G_BEGIN_DECLS

/* Adds win.run-on-files (a file chooser: several files, or the folder it shows) and
 * win.run-on-paths (as: the files or folders themselves), and the catalogue pane's button. */
void fm_window_batch_init(FmWindow *win);

/* Plans the page's method over paths on a worker (the checks read each file's header), then
 * shows the bad files in a dialog (each named with its reason; "Run the Others" / "Cancel") or
 * starts the batch. FALSE when planning cannot start (the reason on the info bar). */
gboolean fm_window_run_on_paths(FmWindow *win, const char *const *paths);

/* For tests: the dialog of bad files on show (NULL when none), whether the plan is being
 * checked, the latest batch's rows, whether it still runs, and its id. */
gboolean fm_window_batch_planning(FmWindow *win);
GtkWidget *fm_window_batch_problems_dialog(FmWindow *win);
fm_batch_view *fm_window_batch_view(FmWindow *win);
gboolean fm_window_batch_running(FmWindow *win); /* planning included */
const char *fm_window_batch_id(FmWindow *win);

G_END_DECLS
