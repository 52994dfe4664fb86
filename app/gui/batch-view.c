/* A batch's rows in the job list. The items are rows of their own inside the batch's frame, so
 * the batch stays one block in the list, newest on top like the jobs beside it. */
#include "batch-view.h"

#include <glib/gi18n.h>
#include <string.h>

typedef struct {
    GtkWidget *row, *name, *progress, *state;
    GtkWidget *reason; /* a failure's message, under the row (hidden until then) */
    char *input;
} item_row;

struct fm_batch_view {
    GtkWidget *box, *title, *progress, *status, *cancel;
    item_row *items;
    int n_items;
    int running; /* the item whose bar pulses, or -1 */
    guint pulse_id;
};

static void view_free(gpointer data)
{
    fm_batch_view *view = data;
    if (view->pulse_id != 0)
        g_source_remove(view->pulse_id);
    for (int i = 0; i < view->n_items; i++)
        g_free(view->items[i].input);
    g_free(view->items);
    g_free(view);
}

/* An item's run has no progress of its own: its bar pulses while it runs. */
static gboolean pulse(gpointer data)
{
    fm_batch_view *view = data;
    if (view->running >= 0)
        gtk_progress_bar_pulse(GTK_PROGRESS_BAR(view->items[view->running].progress));
    return G_SOURCE_CONTINUE;
}

static GtkWidget *dim_label(const char *text)
{
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0.0);
    gtk_style_context_add_class(gtk_widget_get_style_context(label), "dim-label");
    return label;
}

fm_batch_view *fm_batch_view_new(const char *title, const fm_batch_plan *plan, GCallback cancel,
                                 gpointer cancel_data)
{
    fm_batch_view *view = g_new0(fm_batch_view, 1);
    view->running = -1;
    view->n_items = (int)plan->items->len;
    view->items = g_new0(item_row, MAX(view->n_items, 1));
    view->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_set_name(view->box, "fm-batch");
    gtk_style_context_add_class(gtk_widget_get_style_context(view->box), "fm-job-row");

    GtkWidget *header = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(header), 8);
    gtk_grid_set_row_spacing(GTK_GRID(header), 2);
    view->title = gtk_label_new(title);
    gtk_widget_set_name(view->title, "fm-batch-title");
    gtk_label_set_xalign(GTK_LABEL(view->title), 0.0);
    /* wrapped, not cut: its end says on how many files */
    gtk_label_set_line_wrap(GTK_LABEL(view->title), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(view->title), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_width_chars(GTK_LABEL(view->title), 8);
    gtk_widget_set_hexpand(view->title, TRUE);
    gtk_style_context_add_class(gtk_widget_get_style_context(view->title), "heading");
    PangoAttrList *bold = pango_attr_list_new();
    pango_attr_list_insert(bold, pango_attr_weight_new(PANGO_WEIGHT_BOLD));
    gtk_label_set_attributes(GTK_LABEL(view->title), bold);
    pango_attr_list_unref(bold);
    view->progress = gtk_progress_bar_new();
    gtk_widget_set_valign(view->progress, GTK_ALIGN_CENTER);
    /* the job rows' stop button: the title keeps the width of the list */
    view->cancel = gtk_button_new_from_icon_name("process-stop-symbolic", GTK_ICON_SIZE_BUTTON);
    gtk_button_set_relief(GTK_BUTTON(view->cancel), GTK_RELIEF_NONE);
    gtk_widget_set_tooltip_text(view->cancel,
                                _("Cancel the batch: it stops after the file that runs now, what "
                                  "is done stays in the catalogue"));
    gtk_widget_set_valign(view->cancel, GTK_ALIGN_CENTER);
    g_signal_connect_swapped(view->cancel, "clicked", cancel, cancel_data);
    g_autofree char *waiting = g_strdup_printf(_("0 of %d done"), view->n_items);
    view->status = dim_label(waiting);
    gtk_label_set_line_wrap(GTK_LABEL(view->status), TRUE);
    gtk_grid_attach(GTK_GRID(header), view->title, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(header), view->cancel, 1, 0, 1, 2);
    gtk_grid_attach(GTK_GRID(header), view->progress, 0, 1, 1, 1);
    gtk_grid_attach(GTK_GRID(header), view->status, 0, 2, 2, 1);
    gtk_box_pack_start(GTK_BOX(view->box), header, FALSE, FALSE, 0);

    /* a plain box, not a list: a list's rows would add their own padding to each file */
    GtkWidget *list = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_widget_set_margin_start(list, 12); /* the items sit under their batch */
    for (int i = 0; i < view->n_items; i++) {
        const fm_batch_item *it = plan->items->pdata[i];
        item_row *r = &view->items[i];
        r->input = g_strdup(it->input);
        GtkWidget *grid = gtk_grid_new();
        gtk_grid_set_column_spacing(GTK_GRID(grid), 8);
        g_autofree char *base = g_path_get_basename(it->input);
        r->name = gtk_label_new(base);
        gtk_label_set_xalign(GTK_LABEL(r->name), 0.0);
        gtk_label_set_ellipsize(GTK_LABEL(r->name), PANGO_ELLIPSIZE_MIDDLE);
        gtk_widget_set_hexpand(r->name, TRUE);
        gtk_widget_set_tooltip_text(r->name, it->input);
        r->progress = gtk_progress_bar_new();
        gtk_widget_set_valign(r->progress, GTK_ALIGN_CENTER);
        /* one line a file (name, then its state at the end) over a thin bar: a short job list
         * still shows several files */
        r->state = dim_label(_("Waiting"));
        gtk_label_set_xalign(GTK_LABEL(r->state), 1.0);
        r->reason = gtk_label_new(NULL);
        gtk_label_set_xalign(GTK_LABEL(r->reason), 0.0);
        gtk_label_set_line_wrap(GTK_LABEL(r->reason), TRUE);
        gtk_label_set_line_wrap_mode(GTK_LABEL(r->reason), PANGO_WRAP_WORD_CHAR);
        gtk_label_set_selectable(GTK_LABEL(r->reason), TRUE);
        gtk_style_context_add_class(gtk_widget_get_style_context(r->reason), "fm-job-error");
        gtk_grid_attach(GTK_GRID(grid), r->name, 0, 0, 1, 1);
        gtk_grid_attach(GTK_GRID(grid), r->state, 1, 0, 1, 1);
        gtk_grid_attach(GTK_GRID(grid), r->progress, 0, 1, 2, 1);
        gtk_grid_attach(GTK_GRID(grid), r->reason, 0, 2, 2, 1);
        r->row = grid;
        gtk_container_add(GTK_CONTAINER(list), r->row);
    }
    gtk_box_pack_start(GTK_BOX(view->box), list, FALSE, FALSE, 0);
    gtk_widget_show_all(view->box);
    /* hidden until a failure, whoever shows the batch's widgets all (the job list does) */
    for (int i = 0; i < view->n_items; i++) {
        gtk_widget_hide(view->items[i].reason);
        gtk_widget_set_no_show_all(view->items[i].reason, TRUE);
    }
    g_object_set_data_full(G_OBJECT(view->box), "fm-batch-view", view, view_free);
    return view;
}

GtkWidget *fm_batch_view_widget(fm_batch_view *view)
{
    return view->box;
}

/* "2 of 3 done · 1 failed · 0.8 files/s · about 2 s left" */
static char *status_text(const fm_gui_batch_event *e)
{
    int finished = e->done + e->failed;
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, _("%d of %d done"), e->done, e->total);
    if (e->failed > 0)
        g_string_append_printf(s, g_dngettext(NULL, " · %d failed", " · %d failed", e->failed),
                               e->failed);
    if (e->kind == FM_GUI_BATCH_FINISHED) {
        if (e->message != NULL)
            g_string_append_printf(s, _(" · stopped: %s"), e->message);
        else if (e->cancelled)
            g_string_append(s, _(" · cancelled, the rest not run"));
        if (e->elapsed_s < 1.0)
            g_string_append_printf(s, _(" · %.0f ms"), 1000.0 * e->elapsed_s);
        else
            g_string_append_printf(s, _(" · %.1f s"), e->elapsed_s);
    } else if (finished > 0 && e->elapsed_s > 0) {
        double rate = finished / e->elapsed_s;
        double left = (e->total - finished) / rate;
        g_string_append_printf(s, rate >= 1.0 ? _(" · %.1f files/s") : _(" · %.2f files/s"), rate);
        if (left < 90)
            g_string_append_printf(s, _(" · about %.0f s left"), left);
        else
            g_string_append_printf(s, _(" · about %.0f min left"), left / 60.0);
    }
    return g_string_free(s, FALSE);
}

void fm_batch_view_update(fm_batch_view *view, const fm_gui_batch_event *e)
{
    item_row *r = e->item >= 0 && e->item < view->n_items ? &view->items[e->item] : NULL;
    GtkStyleContext *ctx = r != NULL ? gtk_widget_get_style_context(r->state) : NULL;
    switch (e->kind) {
    case FM_GUI_BATCH_ITEM_STARTED:
        view->running = e->item;
        if (r != NULL)
            gtk_label_set_text(GTK_LABEL(r->state), _("Running…"));
        if (view->pulse_id == 0)
            view->pulse_id = g_timeout_add(150, pulse, view);
        break;
    case FM_GUI_BATCH_ITEM_DONE:
    case FM_GUI_BATCH_ITEM_FAILED:
        if (view->running == e->item) /* the next item may have started before this one ended */
            view->running = -1;
        if (r == NULL)
            break;
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(r->progress), 1.0);
        if (e->kind == FM_GUI_BATCH_ITEM_DONE) {
            gtk_label_set_text(GTK_LABEL(r->state), _("Done"));
        } else {
            /* the row names the file: a reason that begins with its path says it once */
            const char *why = e->message != NULL ? e->message : _("unknown error");
            gsize n = strlen(r->input);
            if (strncmp(why, r->input, n) == 0 && strncmp(why + n, ": ", 2) == 0)
                why += n + 2;
            gtk_label_set_text(GTK_LABEL(r->state), _("Failed"));
            gtk_label_set_text(GTK_LABEL(r->reason), why);
            gtk_widget_show(r->reason);
            gtk_style_context_add_class(ctx, "fm-job-error");
        }
        break;
    case FM_GUI_BATCH_FINISHED:
        view->running = -1;
        if (view->pulse_id != 0) {
            g_source_remove(view->pulse_id);
            view->pulse_id = 0;
        }
        gtk_widget_set_sensitive(view->cancel, FALSE);
        /* what never ran says so, rather than waiting for ever */
        for (int i = 0; i < view->n_items; i++) {
            const char *now = gtk_label_get_text(GTK_LABEL(view->items[i].state));
            if (g_strcmp0(now, _("Waiting")) == 0 || g_strcmp0(now, _("Running…")) == 0)
                gtk_label_set_text(GTK_LABEL(view->items[i].state), _("Not run"));
        }
        break;
    }
    if (e->total > 0)
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(view->progress),
                                      (double)(e->done + e->failed) / e->total);
    g_autofree char *status = status_text(e);
    gtk_label_set_text(GTK_LABEL(view->status), status);
}

GtkWidget *fm_batch_view_status_label(fm_batch_view *view)
{
    return view->status;
}

GtkWidget *fm_batch_view_cancel_button(fm_batch_view *view)
{
    return view->cancel;
}

GtkWidget *fm_batch_view_item_row(fm_batch_view *view, int item)
{
    return item >= 0 && item < view->n_items ? view->items[item].row : NULL;
}

GtkWidget *fm_batch_view_item_state(fm_batch_view *view, int item)
{
    return item >= 0 && item < view->n_items ? view->items[item].state : NULL;
}

GtkWidget *fm_batch_view_item_reason(fm_batch_view *view, int item)
{
    return item >= 0 && item < view->n_items ? view->items[item].reason : NULL;
}
