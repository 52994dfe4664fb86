/* A live run as a row of the Jobs pane, as a file's run is: what runs on which source, its
 * frames and rate while it goes, a Stop button, and how it ended (done, or the camera lost). */
#include "live-private.h"

#include <glib/gi18n.h>

static void stop_clicked(GtkButton *button, FmLive *live)
{
    (void)button;
    fm_live_gui_stop(live);
}

void fm_live_job_begin(FmLive *live, const char *method_title)
{
    FmLiveJob *j = &live->job;
    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
    gtk_grid_set_row_spacing(GTK_GRID(grid), 2);
    gtk_style_context_add_class(gtk_widget_get_style_context(grid), "fm-job-row");
    gtk_widget_set_name(grid, "fm-live-job");
    /* TRANSLATORS: a Jobs row: "Live: Spatial speckle contrast on Fake_1" */
    g_autofree char *text = g_strdup_printf(_("Live: %s on %s"), method_title, live->source_name);
    j->title = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(j->title), 0.0);
    gtk_label_set_ellipsize(GTK_LABEL(j->title), PANGO_ELLIPSIZE_MIDDLE);
    gtk_widget_set_tooltip_text(j->title, text);
    gtk_widget_set_hexpand(j->title, TRUE);
    j->stop = gtk_button_new_from_icon_name("process-stop-symbolic", GTK_ICON_SIZE_BUTTON);
    gtk_widget_set_name(j->stop, "fm-live-job-stop");
    gtk_widget_set_tooltip_text(j->stop, _("Stop the live run"));
    gtk_button_set_relief(GTK_BUTTON(j->stop), GTK_RELIEF_NONE);
    g_signal_connect(j->stop, "clicked", G_CALLBACK(stop_clicked), live);
    j->state = gtk_label_new(_("Starting…"));
    gtk_widget_set_name(j->state, "fm-live-job-state");
    gtk_label_set_xalign(GTK_LABEL(j->state), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(j->state), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(j->state), PANGO_WRAP_WORD_CHAR);
    gtk_style_context_add_class(gtk_widget_get_style_context(j->state), "dim-label");
    gtk_grid_attach(GTK_GRID(grid), j->title, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), j->stop, 1, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), j->state, 0, 1, 2, 1);
    fm_job_list_add_row(live->win->job_list, grid);
}

void fm_live_job_update(FmLive *live, const fm_live_stats *st)
{
    FmLiveJob *j = &live->job;
    if (j->state == NULL)
        return;
    g_autofree char *text =
        g_strdup_printf(_("Running: %" G_GUINT64_FORMAT " frames · %.1f frames/s processed"),
                        st->processed, st->processed_fps);
    gtk_label_set_text(GTK_LABEL(j->state), text);
}

void fm_live_job_stopping(FmLive *live)
{
    FmLiveJob *j = &live->job;
    if (j->state == NULL)
        return;
    gtk_widget_set_sensitive(j->stop, FALSE);
    gtk_label_set_text(GTK_LABEL(j->state), _("Stopping…"));
}

void fm_live_job_end(FmLive *live, const char *text, gboolean bad)
{
    FmLiveJob *j = &live->job;
    if (j->state == NULL)
        return;
    gtk_widget_set_sensitive(j->stop, FALSE);
    gtk_widget_hide(j->stop);
    gtk_label_set_text(GTK_LABEL(j->state),
                       text); /* "Live run of … ended: …", "…: camera lost …" */
    if (bad)
        gtk_style_context_add_class(gtk_widget_get_style_context(j->state), "fm-job-error");
    /* the row stays for the record; the next run gets its own */
    j->title = j->stop = j->state = NULL;
}
