/* FmJobList: newest job on top; finished rows keep their state or error text for the record. */
#include "job-list.h"

#include <glib/gi18n.h>

struct _FmJobList {
    GtkScrolledWindow parent_instance;
    GtkWidget *listbox;
    GtkWidget *placeholder;
    GHashTable *rows; /* fm_job* (ref) -> JobRow* */
    gboolean had_jobs, has_dataset;
};

typedef struct {
    fm_job *job;
    GtkWidget *row, *progress, *cancel, *state;
} JobRow;

G_DEFINE_TYPE(FmJobList, fm_job_list, GTK_TYPE_SCROLLED_WINDOW)

static void update_placeholder(FmJobList *self);

static void job_row_free(gpointer data)
{
    JobRow *row = data;
    fm_job_unref(row->job);
    g_free(row);
}

static gboolean job_active(fm_job *job)
{
    fm_job_state s = fm_job_get_state(job);
    return s == FM_JOB_QUEUED || s == FM_JOB_RUNNING;
}

static void cancel_clicked(GtkButton *button, JobRow *row)
{
    fm_job_cancel(row->job);
    gtk_widget_set_sensitive(GTK_WIDGET(button), FALSE);
}

static void fm_job_list_finalize(GObject *object)
{
    g_hash_table_unref(FM_JOB_LIST(object)->rows);
    G_OBJECT_CLASS(fm_job_list_parent_class)->finalize(object);
}

static void fm_job_list_class_init(FmJobListClass *klass)
{
    G_OBJECT_CLASS(klass)->finalize = fm_job_list_finalize;
}

static void fm_job_list_init(FmJobList *self)
{
    self->rows = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, job_row_free);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(self), GTK_POLICY_NEVER,
                                   GTK_POLICY_AUTOMATIC);
    gtk_scrolled_window_set_shadow_type(GTK_SCROLLED_WINDOW(self), GTK_SHADOW_IN);
    self->listbox = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->listbox), GTK_SELECTION_NONE);
    self->placeholder = gtk_label_new(NULL);
    gtk_label_set_line_wrap(GTK_LABEL(self->placeholder), TRUE);
    update_placeholder(self);
    gtk_style_context_add_class(gtk_widget_get_style_context(self->placeholder), "dim-label");
    gtk_widget_show(self->placeholder);
    gtk_list_box_set_placeholder(GTK_LIST_BOX(self->listbox), self->placeholder);
    gtk_container_add(GTK_CONTAINER(self), self->listbox);
    gtk_widget_set_vexpand(GTK_WIDGET(self), TRUE);
}

GtkWidget *fm_job_list_new(void)
{
    return g_object_new(FM_TYPE_JOB_LIST, "hadjustment", NULL, "vadjustment", NULL, NULL);
}

/* The empty list says what is true now: nothing run yet (and what to do), or rows closed. */
static void update_placeholder(FmJobList *self)
{
    const char *text = self->had_jobs ? _("No jobs in the list. Every run stays in the catalogue.")
                       : self->has_dataset
                           ? _("No jobs yet. Press Run (Ctrl+R) to compute the maps.")
                           : _("No jobs yet. Open a dataset or a demo, then Run.");
    gtk_label_set_text(GTK_LABEL(self->placeholder), text);
}

void fm_job_list_set_has_dataset(FmJobList *list, gboolean has_dataset)
{
    list->has_dataset = has_dataset;
    update_placeholder(list);
}

const char *fm_job_list_get_placeholder_text(FmJobList *list)
{
    return gtk_label_get_text(GTK_LABEL(list->placeholder));
}

void fm_job_list_add(FmJobList *list, fm_job *job)
{
    list->had_jobs = TRUE;
    update_placeholder(list);
    JobRow *row = g_new0(JobRow, 1);
    row->job = fm_job_ref(job);

    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
    gtk_grid_set_row_spacing(GTK_GRID(grid), 2);
    gtk_style_context_add_class(gtk_widget_get_style_context(grid), "fm-job-row");
    g_autofree char *text = fm_job_describe(job);
    GtkWidget *title = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(title), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(title), PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_set_hexpand(title, TRUE);
    row->progress = gtk_progress_bar_new();
    gtk_widget_set_valign(row->progress, GTK_ALIGN_CENTER);
    row->cancel = gtk_button_new_from_icon_name("process-stop-symbolic", GTK_ICON_SIZE_BUTTON);
    gtk_widget_set_tooltip_text(row->cancel, _("Cancel this job"));
    gtk_button_set_relief(GTK_BUTTON(row->cancel), GTK_RELIEF_NONE);
    row->state = gtk_label_new(_("queued"));
    gtk_label_set_xalign(GTK_LABEL(row->state), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(row->state), TRUE);
    gtk_label_set_selectable(GTK_LABEL(row->state), TRUE);
    gtk_style_context_add_class(gtk_widget_get_style_context(row->state), "dim-label");
    gtk_grid_attach(GTK_GRID(grid), title, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), row->cancel, 1, 0, 1, 2);
    gtk_grid_attach(GTK_GRID(grid), row->progress, 0, 1, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), row->state, 0, 2, 2, 1);
    g_signal_connect(row->cancel, "clicked", G_CALLBACK(cancel_clicked), row);

    row->row = gtk_list_box_row_new();
    gtk_container_add(GTK_CONTAINER(row->row), grid);
    gtk_widget_show_all(row->row);
    gtk_list_box_insert(GTK_LIST_BOX(list->listbox), row->row, 0);
    g_hash_table_insert(list->rows, job, row);
    fm_job_list_update(list, job);
}

void fm_job_list_add_row(FmJobList *list, GtkWidget *child)
{
    list->had_jobs = TRUE;
    update_placeholder(list);
    GtkWidget *row = gtk_list_box_row_new();
    gtk_container_add(GTK_CONTAINER(row), child);
    gtk_widget_show_all(row);
    gtk_list_box_insert(GTK_LIST_BOX(list->listbox), row, 0);
}

void fm_job_list_update(FmJobList *list, fm_job *job)
{
    JobRow *row = g_hash_table_lookup(list->rows, job);
    if (row == NULL)
        return;
    double fraction = fm_job_get_progress(job);
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(row->progress), CLAMP(fraction, 0.0, 1.0));
    GtkStyleContext *ctx = gtk_widget_get_style_context(row->state);
    g_autofree char *text = NULL;
    switch (fm_job_get_state(job)) {
    case FM_JOB_QUEUED:
        text = g_strdup(_("Queued"));
        break;
    case FM_JOB_RUNNING: {
        fm_stage stage;
        fm_job_get_stage_times(job, &stage);
        /* TRANSLATORS: "Computing… 40 %": the stage the job is in, then its progress */
        text = g_strdup_printf(_("%s… %.0f %%"), fm_stage_title(stage), 100.0 * fraction);
        break;
    }
    case FM_JOB_DONE: {
        const fm_result *res = fm_job_get_result(job);
        text = res != NULL ? g_strdup_printf(_("Done in %.0f ms on %s"), res->elapsed_ms,
                                             res->device != NULL ? res->device : "?")
                           : g_strdup(_("Done"));
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(row->progress), 1.0);
        break;
    }
    case FM_JOB_FAILED: {
        const GError *err = fm_job_get_error(job);
        text = g_strdup_printf(_("Failed: %s"), err != NULL ? err->message : _("unknown error"));
        gtk_style_context_add_class(ctx, "fm-job-error");
        break;
    }
    case FM_JOB_CANCELLED:
        text = g_strdup(_("Cancelled"));
        break;
    }
    gtk_label_set_text(GTK_LABEL(row->state), text);
    gtk_widget_set_sensitive(row->cancel, job_active(job));
}

int fm_job_list_cancel_all(FmJobList *list)
{
    int n = 0;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, list->rows);
    while (g_hash_table_iter_next(&it, &key, &value))
        if (job_active(key)) {
            fm_job_cancel(key);
            n++;
        }
    return n;
}

int fm_job_list_count_active(FmJobList *list)
{
    int n = 0;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, list->rows);
    while (g_hash_table_iter_next(&it, &key, NULL))
        n += job_active(key);
    return n;
}

const char *fm_job_list_get_state_text(FmJobList *list, fm_job *job)
{
    JobRow *row = g_hash_table_lookup(list->rows, job);
    return row != NULL ? gtk_label_get_text(GTK_LABEL(row->state)) : NULL;
}
