/* Runs made by a batch: their batch id and item, and merging a task's shard into a catalogue. */
#include "catalogue_batch.h"
#include "catalogue_private.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <unistd.h>

#include "error.h"

static gboolean run_sql(fm_catalogue *cat, const char *sql, GError **error)
{
    char *msg = NULL;
    if (sqlite3_exec(cat->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return TRUE;
    g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE, _("%s: %s"), cat->db_path,
                msg ? msg : sqlite3_errmsg(cat->db));
    sqlite3_free(msg);
    return FALSE;
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Runs one bound statement to completion; FALSE with error naming what. */
static gboolean step_done(fm_catalogue *cat, sqlite3_stmt *st, const char *what, GError **error)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || fm_catalogue_sql_fail(cat, what, error);
}

static gboolean insert_batch_row(fm_catalogue *cat, gint64 run_id, const char *batch_id, int item,
                                 const char *input, const char *output, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat, "INSERT INTO batch_items(run_id, batch_id, item, input, output) VALUES(?,?,?,?,?)",
        error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, run_id);
    bind_text_or_null(st, 2, batch_id);
    sqlite3_bind_int(st, 3, item);
    bind_text_or_null(st, 4, input);
    bind_text_or_null(st, 5, output);
    return step_done(cat, st, _("adding the batch item"), error);
}

gboolean fm_catalogue_set_run_batch(fm_catalogue *cat, gint64 run_id, const char *batch_id,
                                    int item, const char *input, const char *output, GError **error)
{
    g_mutex_lock(&cat->lock);
    gboolean ok = insert_batch_row(cat, run_id, batch_id, item, input, output, error);
    g_mutex_unlock(&cat->lock);
    return ok;
}

gboolean fm_catalogue_get_run_batch(fm_catalogue *cat, gint64 run_id, char **batch_id, int *item,
                                    GError **error)
{
    g_mutex_lock(&cat->lock);
    gboolean found = FALSE;
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat, "SELECT batch_id, item FROM batch_items WHERE run_id = ?", error);
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, run_id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            found = TRUE;
            *batch_id = g_strdup((const char *)sqlite3_column_text(st, 0));
            *item = sqlite3_column_int(st, 1);
        }
        sqlite3_finalize(st);
    }
    g_mutex_unlock(&cat->lock);
    return found;
}

static GArray *items_locked(fm_catalogue *cat, const char *schema, const char *batch_id,
                            GError **error)
{
    g_autofree char *sql = g_strdup_printf(
        "SELECT b.item, b.run_id, r.status FROM %s.batch_items b JOIN %s.runs r ON r.id = b.run_id"
        " WHERE b.batch_id = ? ORDER BY b.item",
        schema, schema);
    sqlite3_stmt *st = fm_catalogue_prepare(cat, sql, error);
    if (st == NULL)
        return NULL;
    GArray *items = g_array_new(FALSE, FALSE, sizeof(fm_catalogue_batch_item));
    bind_text_or_null(st, 1, batch_id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        fm_catalogue_batch_item it = {
            sqlite3_column_int(st, 0), sqlite3_column_int64(st, 1),
            fm_catalogue_status_parse((const char *)sqlite3_column_text(st, 2))};
        g_array_append_val(items, it);
    }
    sqlite3_finalize(st);
    return items;
}

GArray *fm_catalogue_batch_items(fm_catalogue *cat, const char *batch_id, GError **error)
{
    g_mutex_lock(&cat->lock);
    GArray *items = items_locked(cat, "main", batch_id, error);
    g_mutex_unlock(&cat->lock);
    return items;
}

/* A map file of the shard into the catalogue: a hard link where both lie on one file system (the
 * shard's files are never written again), else a copy. */
static gboolean copy_map(const char *from, const char *to, GError **error)
{
    if (link(from, to) == 0)
        return TRUE;
    g_autoptr(GFile) src = g_file_new_for_path(from);
    g_autoptr(GFile) dst = g_file_new_for_path(to);
    return g_file_copy(src, dst, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, error);
}

static gint64 single_int(fm_catalogue *cat, sqlite3_stmt *st)
{
    gint64 v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    (void)cat;
    sqlite3_finalize(st);
    return v;
}

/* The main catalogue's dataset row for the shard's dataset ds_id (added when new). */
static gint64 merge_dataset(fm_catalogue *cat, gint64 ds_id, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat,
        "INSERT INTO main.datasets(path, sha256, type, dims, added)"
        " SELECT path, sha256, type, dims, added FROM shard.datasets d WHERE d.id = ?1"
        " AND NOT EXISTS (SELECT 1 FROM main.datasets m WHERE m.path = d.path"
        " AND m.sha256 IS d.sha256)",
        error);
    if (st == NULL)
        return 0;
    sqlite3_bind_int64(st, 1, ds_id);
    if (!step_done(cat, st, _("adding the dataset"), error))
        return 0;
    st = fm_catalogue_prepare(cat,
                              "SELECT m.id FROM main.datasets m, shard.datasets d WHERE d.id = ?1"
                              " AND m.path = d.path AND m.sha256 IS d.sha256 ORDER BY m.id",
                              error);
    if (st == NULL)
        return 0;
    sqlite3_bind_int64(st, 1, ds_id);
    return single_int(cat, st);
}

/* Copies the outputs of shard run `from` as outputs of run `to`, their files into runs/<to>/. */
static gboolean merge_outputs(fm_catalogue *cat, const char *shard_dir, gint64 from, gint64 to,
                              GError **error)
{
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT, to);
    g_autofree char *dir = g_build_filename(cat->dir, "runs", id, NULL);
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat, "SELECT id, name, file FROM shard.outputs WHERE run_id = ? ORDER BY id", error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, from);
    gboolean ok = TRUE;
    while (ok && sqlite3_step(st) == SQLITE_ROW) {
        gint64 out_id = sqlite3_column_int64(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *rel = (const char *)sqlite3_column_text(st, 2);
        g_autofree char *src = g_build_filename(shard_dir, rel ? rel : "", NULL);
        g_autofree char *base = g_path_get_basename(rel ? rel : name);
        g_autofree char *dst = g_build_filename(dir, base, NULL);
        g_autofree char *dst_rel = g_build_filename("runs", id, base, NULL);
        if (g_mkdir_with_parents(dir, 0755) != 0) {
            g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create folder: %s"), dir,
                        g_strerror(errno));
            ok = FALSE;
            break;
        }
        if (!copy_map(src, dst, error)) {
            ok = FALSE;
            break;
        }
        sqlite3_stmt *ins = fm_catalogue_prepare(
            cat,
            "INSERT INTO main.outputs(run_id, name, unit, file, min, max, mean, median,"
            " valid_pixels) SELECT ?, name, unit, ?, min, max, mean, median, valid_pixels"
            " FROM shard.outputs WHERE id = ?",
            error);
        ok = ins != NULL;
        if (ok) {
            sqlite3_bind_int64(ins, 1, to);
            bind_text_or_null(ins, 2, dst_rel);
            sqlite3_bind_int64(ins, 3, out_id);
            ok = step_done(cat, ins, _("adding an output"), error);
        }
    }
    sqlite3_finalize(st);
    return ok;
}

/* One shard run (of item `item`) as a new run of cat; its id in *new_id. */
static gboolean merge_run(fm_catalogue *cat, const char *shard_dir, gint64 from, gint64 *new_id,
                          GError **error)
{
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat, "SELECT dataset_id FROM shard.runs WHERE id = ?", error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, from);
    gint64 shard_ds = single_int(cat, st);
    gint64 ds = shard_ds > 0 ? merge_dataset(cat, shard_ds, error) : 0;
    if (shard_ds > 0 && ds == 0)
        return error && *error ? FALSE : fm_catalogue_sql_fail(cat, _("adding the dataset"), error);
    st = fm_catalogue_prepare(cat,
                              "INSERT INTO main.runs(dataset_id, method, params_json, backend,"
                              " device, status, error, elapsed_ms, started, finished)"
                              " SELECT ?, method, params_json, backend, device, status, error,"
                              " elapsed_ms, started, finished FROM shard.runs WHERE id = ?",
                              error);
    if (st == NULL)
        return FALSE;
    if (ds > 0)
        sqlite3_bind_int64(st, 1, ds);
    else
        sqlite3_bind_null(st, 1);
    sqlite3_bind_int64(st, 2, from);
    if (!step_done(cat, st, _("adding the run"), error))
        return FALSE;
    *new_id = sqlite3_last_insert_rowid(cat->db);
    st = fm_catalogue_prepare(cat,
                              "INSERT INTO main.rois(run_id, name, role, kind, json)"
                              " SELECT ?, name, role, kind, json FROM shard.rois WHERE run_id = ?"
                              " ORDER BY id",
                              error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, *new_id);
    sqlite3_bind_int64(st, 2, from);
    return step_done(cat, st, _("adding an ROI"), error) &&
           merge_outputs(cat, shard_dir, from, *new_id, error);
}

/* Copies the batch row of shard run `from` as the row of run `to`. */
static gboolean merge_batch_row(fm_catalogue *cat, gint64 from, gint64 to, GError **error)
{
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat,
                             "INSERT INTO main.batch_items(run_id, batch_id, item, input, output)"
                             " SELECT ?, batch_id, item, input, output FROM shard.batch_items"
                             " WHERE run_id = ?",
                             error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, to);
    sqlite3_bind_int64(st, 2, from);
    return step_done(cat, st, _("adding the batch item"), error);
}

static gboolean delete_run(fm_catalogue *cat, gint64 run_id, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(cat, "DELETE FROM main.runs WHERE id = ?", error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, run_id);
    return step_done(cat, st, _("replacing a failed run"), error);
}

static const fm_catalogue_batch_item *find_item(GArray *items, int item)
{
    for (guint i = 0; i < items->len; i++)
        if (g_array_index(items, fm_catalogue_batch_item, i).item == item)
            return &g_array_index(items, fm_catalogue_batch_item, i);
    return NULL;
}

/* Inside the transaction: every shard run of the batch that cat lacks (or holds as failed where
 * the shard's is done). added: runs/<id> folders made; replaced: runs whose folder goes after
 * the commit. */
static gboolean merge_items(fm_catalogue *cat, const char *shard_dir, const char *batch_id,
                            GArray *added, GArray *replaced, fm_catalogue_merge_counts *counts,
                            GError **error)
{
    g_autoptr(GArray) ours = items_locked(cat, "main", batch_id, error);
    g_autoptr(GArray) theirs = ours ? items_locked(cat, "shard", batch_id, error) : NULL;
    if (theirs == NULL)
        return FALSE;
    for (guint i = 0; i < theirs->len; i++) {
        const fm_catalogue_batch_item *t = &g_array_index(theirs, fm_catalogue_batch_item, i);
        const fm_catalogue_batch_item *o = find_item(ours, t->item);
        if (o && (o->status == FM_RUN_DONE || t->status != FM_RUN_DONE)) {
            counts->kept++;
            continue;
        }
        if (o) {
            if (!delete_run(cat, o->run_id, error))
                return FALSE;
            g_array_append_val(replaced, o->run_id);
            counts->replaced++;
        } else {
            counts->added++;
        }
        gint64 new_id = 0;
        gboolean ok = merge_run(cat, shard_dir, t->run_id, &new_id, error);
        if (new_id > 0)
            g_array_append_val(added, new_id);
        if (!ok || !merge_batch_row(cat, t->run_id, new_id, error))
            return FALSE;
    }
    return TRUE;
}

gboolean fm_catalogue_merge_shard(fm_catalogue *cat, const char *shard_dir, const char *batch_id,
                                  fm_catalogue_merge_counts *counts, GError **error)
{
    fm_catalogue_merge_counts local_counts = {0};
    g_autofree char *db = g_build_filename(shard_dir, "catalogue.db", NULL);
    if (!g_file_test(db, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE, _("%s: no shard catalogue"), db);
        return FALSE;
    }
    g_autoptr(GArray) added = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_autoptr(GArray) replaced = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_mutex_lock(&cat->lock);
    gboolean ok = FALSE;
    sqlite3_stmt *st = fm_catalogue_prepare(cat, "ATTACH DATABASE ? AS shard", error);
    if (st != NULL) {
        bind_text_or_null(st, 1, db);
        ok = step_done(cat, st, _("opening the shard"), error);
    }
    if (ok && (ok = run_sql(cat, "BEGIN IMMEDIATE", error))) {
        ok = merge_items(cat, shard_dir, batch_id, added, replaced, &local_counts, error) &&
             run_sql(cat, "COMMIT", error);
        if (!ok)
            sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
    }
    sqlite3_exec(cat->db, "DETACH DATABASE shard", NULL, NULL, NULL);
    g_mutex_unlock(&cat->lock);
    /* The files of rows that are gone: the new ones after a rollback, the replaced after a
     * commit. */
    GArray *gone = ok ? replaced : added;
    for (guint i = 0; i < gone->len; i++)
        fm_catalogue_remove_run_files(cat, g_array_index(gone, gint64, i));
    if (ok && counts)
        *counts = local_counts;
    return ok;
}
