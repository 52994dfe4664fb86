/* Runs made by a batch (fluxmap-cli batch): each run's batch id and item, and the merge of a
 * task's shard (a catalogue of its own) into a catalogue. */
#pragma once

#include <glib.h>
#include "catalogue.h"

G_BEGIN_DECLS

/* Tags run_id as item `item` of batch batch_id (input and output as the plan names them). */
gboolean fm_catalogue_set_run_batch(fm_catalogue *cat, gint64 run_id, const char *batch_id,
                                    int item, const char *input, const char *output,
                                    GError **error);
/* The batch a run belongs to: TRUE and *batch_id (g_free it) and *item when it is a batch's,
 * FALSE without error when it is not. */
gboolean fm_catalogue_get_run_batch(fm_catalogue *cat, gint64 run_id, char **batch_id, int *item,
                                    GError **error);

typedef struct {
    int item;
    gint64 run_id;
    fm_run_status status;
} fm_catalogue_batch_item;

/* The items of batch_id the catalogue holds (GArray of fm_catalogue_batch_item, by item). */
GArray *fm_catalogue_batch_items(fm_catalogue *cat, const char *batch_id, GError **error);

typedef struct {
    int added;    /* runs copied in */
    int replaced; /* failed runs replaced by a done run of the same item */
    int kept;     /* items the catalogue held already (left as they are) */
} fm_catalogue_merge_counts;

/* Copies the runs of batch_id in the catalogue at shard_dir (its datasets, ROIs, outputs and map
 * files) into cat in one transaction: an item cat holds already is left alone, unless cat's run
 * failed and the shard's is done (then the shard's replaces it). On failure nothing changes. */
gboolean fm_catalogue_merge_shard(fm_catalogue *cat, const char *shard_dir, const char *batch_id,
                                  fm_catalogue_merge_counts *counts, GError **error);

G_END_DECLS
