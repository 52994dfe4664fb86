/* The catalogue list's batch groups: the runs of one batch (Run on Files, fluxmap-cli batch)
 * listed together under one collapsible row, "Speckle contrast on 12 files", where the newest of
 * them would stand. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/catalogue.h"

G_BEGIN_DECLS

typedef struct {
    const fm_catalogue_run *run; /* borrowed from runs; NULL for a group's header */
    char *batch_id;              /* the run's or the header's batch, NULL for a run of its own */
    GPtrArray *members;          /* a header's runs (borrowed fm_catalogue_run*), by item */
    char *input;                 /* a batch run's file as planned (a failed read has no dataset) */
} fm_catalogue_entry;

/* runs (newest first) in list order: a run of its own as it comes, a batch's header where its
 * newest run is, followed by every run of the batch by item. Free with
 * fm_catalogue_entries_free. */
GArray *fm_catalogue_group_runs(fm_catalogue *cat, GPtrArray *runs);
void fm_catalogue_entries_free(GArray *entries);

/* A header row for the batch: an arrow, "<method> on N files", then how many are done or
 * failed and when it ran. Activating it (click, Enter) is for the list to toggle. Its title is
 * named fm-catalogue-group-title (for tests); the batch id is its "fm-batch-id" data. */
GtkWidget *fm_catalogue_group_row_new(const fm_catalogue_entry *header, gboolean expanded);
/* Dresses a batch run's row (made for entry's run) as one of its group: indented, titled by its
 * file, shown only while the group is expanded; "fm-member-of" data holds the batch id. */
void fm_catalogue_group_member_dress(GtkWidget *row, const fm_catalogue_entry *entry,
                                     gboolean expanded);
/* Turns the header's arrow to show expanded. */
void fm_catalogue_group_row_set_expanded(GtkWidget *row, gboolean expanded);
/* The batch of a header row, NULL for any other row. */
const char *fm_catalogue_group_row_batch(GtkWidget *row);

G_END_DECLS
