/* Batch groups in the catalogue list. */
#include "catalogue-groups.h"

#include <glib/gi18n.h>

#include "panel-util.h"

#include "app/core/catalogue_batch_rows.h"
#include "app/core/method.h"

static void entry_clear(gpointer data)
{
    fm_catalogue_entry *e = data;
    g_free(e->batch_id);
    g_free(e->input);
    if (e->members != NULL)
        g_ptr_array_unref(e->members);
}

void fm_catalogue_entries_free(GArray *entries)
{
    if (entries != NULL)
        g_array_unref(entries);
}

typedef struct {
    const fm_catalogue_run *run;
    const fm_catalogue_batch_row *row;
} member;

static int by_item(gconstpointer a, gconstpointer b)
{
    return ((const member *)a)->row->item - ((const member *)b)->row->item;
}

GArray *fm_catalogue_group_runs(fm_catalogue *cat, GPtrArray *runs)
{
    GArray *entries = g_array_new(FALSE, TRUE, sizeof(fm_catalogue_entry));
    g_array_set_clear_func(entries, entry_clear);
    gint64 oldest = G_MAXINT64;
    for (guint i = 0; i < runs->len; i++)
        oldest = MIN(oldest, ((const fm_catalogue_run *)runs->pdata[i])->id);
    /* one read for the whole list; without it (no table yet) every run stands alone */
    g_autoptr(GHashTable) rows =
        cat != NULL && runs->len > 0 ? fm_catalogue_batch_rows(cat, oldest, NULL) : NULL;
    /* batch id -> GArray of member, gathered before the list is laid out */
    g_autoptr(GHashTable) groups =
        g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
    for (guint i = 0; rows != NULL && i < runs->len; i++) {
        const fm_catalogue_run *run = runs->pdata[i];
        const fm_catalogue_batch_row *b = g_hash_table_lookup(rows, &run->id);
        if (b == NULL || b->batch_id == NULL)
            continue;
        GArray *list = g_hash_table_lookup(groups, b->batch_id);
        if (list == NULL) {
            list = g_array_new(FALSE, FALSE, sizeof(member));
            g_hash_table_insert(groups, b->batch_id, list);
        }
        g_array_append_val(list, ((member){run, b}));
    }
    for (guint i = 0; i < runs->len; i++) {
        const fm_catalogue_run *run = runs->pdata[i];
        const fm_catalogue_batch_row *b = rows != NULL ? g_hash_table_lookup(rows, &run->id) : NULL;
        if (b == NULL || b->batch_id == NULL) {
            fm_catalogue_entry e = {run, NULL, NULL, NULL};
            g_array_append_val(entries, e);
            continue;
        }
        GArray *list = g_hash_table_lookup(groups, b->batch_id);
        if (list == NULL) /* the group is listed already, where its newest run is */
            continue;
        g_array_sort(list, by_item);
        fm_catalogue_entry header = {NULL, g_strdup(b->batch_id), g_ptr_array_new(), NULL};
        for (guint k = 0; k < list->len; k++)
            g_ptr_array_add(header.members, (gpointer)g_array_index(list, member, k).run);
        g_array_append_val(entries, header);
        for (guint k = 0; k < list->len; k++) {
            const member *m = &g_array_index(list, member, k);
            fm_catalogue_entry e = {m->run, g_strdup(b->batch_id), NULL, g_strdup(m->row->input)};
            g_array_append_val(entries, e);
        }
        g_hash_table_remove(groups, b->batch_id);
    }
    return entries;
}

/* "Speckle contrast on 12 files", or "Batch of 12 runs" where its methods differ. */
static char *group_title(GPtrArray *members)
{
    const fm_catalogue_run *first = members->pdata[0];
    gboolean one_method = TRUE;
    for (guint i = 1; i < members->len; i++)
        one_method =
            one_method && g_strcmp0(((const fm_catalogue_run *)members->pdata[i])->method_id,
                                    first->method_id) == 0;
    if (!one_method)
        return g_strdup_printf(
            g_dngettext(NULL, "Batch of %u run", "Batch of %u runs", members->len), members->len);
    const fm_method *m = first->method_id != NULL ? fm_method_find(first->method_id) : NULL;
    const char *title = m != NULL ? _(m->title) : first->method_id != NULL ? first->method_id : "?";
    /* TRANSLATORS: a batch's group in the catalogue: "Speckle contrast on 12 files" */
    return g_strdup_printf(g_dngettext(NULL, "%s on %u file", "%s on %u files", members->len),
                           title, members->len);
}

/* "3 done · 2 running · 1 failed · 28 Nov 06:29": a batch that still runs shows its runs as
 * they start and land. */
static char *group_detail(GPtrArray *members)
{
    int done = 0, running = 0, failed = 0;
    gint64 newest = 0;
    for (guint i = 0; i < members->len; i++) {
        const fm_catalogue_run *r = members->pdata[i];
        done += r->status == FM_RUN_DONE;
        running += r->status == FM_RUN_RUNNING;
        failed += r->status != FM_RUN_DONE && r->status != FM_RUN_RUNNING;
        newest = MAX(newest, r->started_unix);
    }
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, _("%d done"), done);
    if (running > 0) {
        g_string_append(text, " · ");
        g_string_append_printf(text, _("%d running"), running);
    }
    if (failed > 0) {
        g_string_append(text, " · ");
        g_string_append_printf(text, _("%d failed"), failed);
    }
    g_autoptr(GDateTime) when = g_date_time_new_from_unix_local(newest);
    g_autofree char *time = when != NULL ? g_date_time_format(when, "%-d %b %H:%M") : NULL;
    if (time != NULL)
        g_string_append_printf(text, " · %s", time);
    return g_string_free(text, FALSE);
}

GtkWidget *fm_catalogue_group_row_new(const fm_catalogue_entry *header, gboolean expanded)
{
    GtkWidget *grid = gtk_grid_new();
    gtk_grid_set_column_spacing(GTK_GRID(grid), 4);
    gtk_style_context_add_class(gtk_widget_get_style_context(grid), "fm-catalogue-row");
    GtkWidget *arrow = gtk_image_new();
    gtk_widget_set_valign(arrow, GTK_ALIGN_START);
    g_autofree char *title = group_title(header->members);
    GtkWidget *title_label = gtk_label_new(title);
    gtk_widget_set_name(title_label, "fm-catalogue-group-title");
    gtk_label_set_xalign(GTK_LABEL(title_label), 0.0);
    /* the whole title, on two lines where the pane is narrow: its end says how many files */
    gtk_label_set_line_wrap(GTK_LABEL(title_label), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(title_label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_width_chars(GTK_LABEL(title_label), 8);
    gtk_widget_set_hexpand(title_label, TRUE);
    PangoAttrList *bold = pango_attr_list_new();
    pango_attr_list_insert(bold, pango_attr_weight_new(PANGO_WEIGHT_BOLD));
    gtk_label_set_attributes(GTK_LABEL(title_label), bold);
    pango_attr_list_unref(bold);
    g_autofree char *detail = group_detail(header->members);
    GtkWidget *detail_label = gtk_label_new(detail);
    gtk_widget_set_name(detail_label, "fm-catalogue-group-detail");
    gtk_label_set_xalign(GTK_LABEL(detail_label), 0.0);
    gtk_label_set_line_wrap(GTK_LABEL(detail_label), TRUE);
    gtk_label_set_width_chars(GTK_LABEL(detail_label), 8);
    gtk_style_context_add_class(gtk_widget_get_style_context(detail_label), "dim-label");
    gtk_grid_attach(GTK_GRID(grid), arrow, 0, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), title_label, 1, 0, 1, 1);
    gtk_grid_attach(GTK_GRID(grid), detail_label, 1, 1, 1, 1);

    GtkWidget *row = gtk_list_box_row_new();
    gtk_container_add(GTK_CONTAINER(row), grid);
    gtk_widget_set_tooltip_text(row, _("A batch's runs: click to show or hide them"));
    gtk_list_box_row_set_selectable(GTK_LIST_BOX_ROW(row), FALSE);
    gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), TRUE);
    g_object_set_data_full(G_OBJECT(row), "fm-batch-id", g_strdup(header->batch_id), g_free);
    g_object_set_data(G_OBJECT(row), "fm-group-arrow", arrow);
    fm_catalogue_group_row_set_expanded(row, expanded);
    gtk_widget_show_all(row);
    return row;
}

void fm_catalogue_group_row_set_expanded(GtkWidget *row, gboolean expanded)
{
    GtkWidget *arrow = g_object_get_data(G_OBJECT(row), "fm-group-arrow");
    gtk_image_set_from_icon_name(GTK_IMAGE(arrow),
                                 expanded ? "pan-down-symbolic" : "pan-end-symbolic",
                                 GTK_ICON_SIZE_BUTTON);
}

const char *fm_catalogue_group_row_batch(GtkWidget *row)
{
    return g_object_get_data(G_OBJECT(row), "fm-batch-id");
}

void fm_catalogue_group_member_dress(GtkWidget *row, const fm_catalogue_entry *entry,
                                     gboolean expanded)
{
    gtk_widget_set_margin_start(gtk_bin_get_child(GTK_BIN(row)), 20);
    g_object_set_data_full(G_OBJECT(row), "fm-member-of", g_strdup(entry->batch_id), g_free);
    /* The group's row says the method: each run's first line names its file (the plan's, as a
     * run whose read failed has no dataset), the second keeps only the date. */
    GtkWidget *title = fm_widget_find_named(row, "fm-catalogue-title");
    GtkWidget *dataset = fm_widget_find_named(row, "fm-catalogue-dataset");
    if (title != NULL && dataset != NULL && entry->input != NULL) {
        g_autofree char *base = g_path_get_basename(entry->input);
        gtk_label_set_text(GTK_LABEL(title), base);
        gtk_label_set_text(GTK_LABEL(dataset), "");
    }
    gtk_widget_set_visible(row, expanded);
}
