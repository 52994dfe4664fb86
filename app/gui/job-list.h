/* FmJobList: one row per job with description, progress bar, Cancel and the final state. */
#pragma once

#include <gtk/gtk.h>
#include "app/core/job.h"

G_BEGIN_DECLS

#define FM_TYPE_JOB_LIST (fm_job_list_get_type())
G_DECLARE_FINAL_TYPE(FmJobList, fm_job_list, FM, JOB_LIST, GtkScrolledWindow)

GtkWidget *fm_job_list_new(void);
void fm_job_list_add(FmJobList *list, fm_job *job); /* keeps a reference */
/* A row for work that is no fm_job (a live camera run) on top; its owner keeps it up to date. */
void fm_job_list_add_row(FmJobList *list, GtkWidget *child);
/* Refreshes the row of job from its progress and state. */
void fm_job_list_update(FmJobList *list, fm_job *job);
/* Cancels every job still queued or running; returns how many. */
int fm_job_list_cancel_all(FmJobList *list);
int fm_job_list_count_active(FmJobList *list);
/* The empty list's text follows whether a dataset is open and whether any job was listed. */
void fm_job_list_set_has_dataset(FmJobList *list, gboolean has_dataset);
const char *fm_job_list_get_placeholder_text(FmJobList *list);
/* The state line of job's row ("Computing… 40 %", "Done in 12 ms on …"), or NULL. */
const char *fm_job_list_get_state_text(FmJobList *list, fm_job *job);

G_END_DECLS
