/* The batch rows of many runs in one statement (the list's runs, not one query each). */
#include "catalogue_batch_rows.h"
#include "catalogue_private.h"

static void row_free(gpointer data)
{
    fm_catalogue_batch_row *row = data;
    g_free(row->batch_id);
    g_free(row->input);
    g_free(row->output);
    g_free(row);
}

GHashTable *fm_catalogue_batch_rows(fm_catalogue *cat, gint64 min_run_id, GError **error)
{
    GHashTable *rows = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, row_free);
    g_mutex_lock(&cat->lock);
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat, "SELECT run_id, batch_id, item, input, output FROM batch_items WHERE run_id >= ?",
        error);
    int rc = SQLITE_DONE;
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, min_run_id);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            gint64 *id = g_new(gint64, 1);
            *id = sqlite3_column_int64(st, 0);
            fm_catalogue_batch_row *row = g_new0(fm_catalogue_batch_row, 1);
            row->batch_id = g_strdup((const char *)sqlite3_column_text(st, 1));
            row->item = sqlite3_column_int(st, 2);
            row->input = g_strdup((const char *)sqlite3_column_text(st, 3));
            row->output = g_strdup((const char *)sqlite3_column_text(st, 4));
            g_hash_table_insert(rows, id, row);
        }
        sqlite3_finalize(st);
    }
    gboolean ok = st != NULL && (rc == SQLITE_DONE ||
                                 fm_catalogue_sql_fail(cat, "reading the batch items", error));
    g_mutex_unlock(&cat->lock);
    if (!ok)
        g_clear_pointer(&rows, g_hash_table_unref);
    return rows;
}
