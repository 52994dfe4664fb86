/* The batch rows of many runs in one read: what the GUI's catalogue list needs to group a
 * batch's runs and name each run's file, even a run that failed before its file was read. */
#pragma once

#include <glib.h>
#include "catalogue.h"

G_BEGIN_DECLS

typedef struct {
    char *batch_id;
    int item;
    char *input;  /* the file as the plan named it */
    char *output; /* the item's name among the batch's results */
} fm_catalogue_batch_row;

/* Every batch row of runs with id >= min_run_id: a table of gint64 run id (g_int64_hash) to
 * fm_catalogue_batch_row* (both freed with it), or NULL with error. */
GHashTable *fm_catalogue_batch_rows(fm_catalogue *cat, gint64 min_run_id, GError **error);

G_END_DECLS
