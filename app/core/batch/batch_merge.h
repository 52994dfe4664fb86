/* Merging a batch's complete shards into a catalogue, and which tasks are still missing. */
#pragma once

#include <glib.h>
#include "app/core/catalogue.h"

G_BEGIN_DECLS

typedef struct {
    int shards;                /* complete shards of the batch merged (or found merged already) */
    int added, replaced, kept; /* runs, as fm_catalogue_merge_shard counts them */
    int ntasks;                /* the task count the missing tasks are counted in */
    GArray *missing_tasks;     /* of int: tasks with an item no complete shard holds */
    int missing_items;
    GArray *failed_items; /* of int: the batch's items the catalogue holds as failed */
} fm_batch_merge_report;

void fm_batch_merge_report_clear(fm_batch_merge_report *report);

/* Merges every complete shard of the batch at run_dir into cat, each in one transaction (a second
 * merge changes nothing). ntasks > 0 counts missing tasks in that many tasks, else in the
 * shards' own count (1 when there are none). */
gboolean fm_batch_merge(const char *run_dir, fm_catalogue *cat, int ntasks,
                        fm_batch_merge_report *report, GError **error);

/* Indices as Slurm's --array takes them: "1,4-5" (sorted; g_free it). */
char *fm_batch_array_ranges(GArray *indices);

G_END_DECLS
