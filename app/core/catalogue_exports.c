/* Files exported from a run (DICOM objects sent back to the archive), recorded with the run so
 * that the user finds them again from it. */
#include "catalogue.h"
#include "catalogue_private.h"

#include <glib/gi18n.h>
#include <sqlite3.h>

#include "error.h"

void fm_catalogue_export_free(fm_catalogue_export *export)
{
    if (export == NULL)
        return;
    g_free(export->file);
    g_free(export->format);
    g_free(export->sop_class_uid);
    g_free(export->series_uid);
    g_free(export);
}

static char *column_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? g_strdup((const char *)t) : NULL;
}

static void bind_text(sqlite3_stmt *st, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

gboolean fm_catalogue_add_exports(fm_catalogue *cat, gint64 run_id, GPtrArray *exports,
                                  GError **error)
{
    g_mutex_lock(&cat->lock);
    gboolean ok = sqlite3_exec(cat->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK;
    if (!ok)
        fm_catalogue_sql_fail(cat, _("recording exported files"), error);
    sqlite3_stmt *st =
        ok ? fm_catalogue_prepare(cat,
                                  "INSERT OR REPLACE INTO exports (run_id, file, format,"
                                  " sop_class_uid, series_uid, exported)"
                                  " VALUES (?, ?, ?, ?, ?, ?)",
                                  error)
           : NULL;
    ok = ok && st != NULL;
    gint64 now = g_get_real_time() / G_USEC_PER_SEC;
    for (guint i = 0; ok && exports && i < exports->len; i++) {
        const fm_catalogue_export *e = exports->pdata[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, run_id);
        bind_text(st, 2, e->file);
        bind_text(st, 3, e->format ? e->format : "");
        bind_text(st, 4, e->sop_class_uid);
        bind_text(st, 5, e->series_uid);
        sqlite3_bind_int64(st, 6, e->exported_unix > 0 ? e->exported_unix : now);
        /* a run that is not there fails on its foreign key: the files are not recorded */
        if (sqlite3_step(st) != SQLITE_DONE)
            ok = fm_catalogue_sql_fail(cat, _("recording exported files"), error);
    }
    sqlite3_finalize(st);
    if (ok && sqlite3_exec(cat->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        ok = fm_catalogue_sql_fail(cat, _("recording exported files"), error);
    if (!ok)
        sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
    g_mutex_unlock(&cat->lock);
    return ok;
}

gboolean fm_catalogue_load_exports(fm_catalogue *cat, fm_catalogue_run *run, GError **error)
{
    run->exports = g_ptr_array_new_with_free_func((GDestroyNotify)fm_catalogue_export_free);
    sqlite3_stmt *st = fm_catalogue_prepare(cat,
                                            "SELECT file, format, sop_class_uid, series_uid,"
                                            " exported FROM exports WHERE run_id = ? ORDER BY id",
                                            error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, run->id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fm_catalogue_export *e = g_new0(fm_catalogue_export, 1);
        e->file = column_text(st, 0);
        e->format = column_text(st, 1);
        e->sop_class_uid = column_text(st, 2);
        e->series_uid = column_text(st, 3);
        e->exported_unix = sqlite3_column_int64(st, 4);
        g_ptr_array_add(run->exports, e);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || fm_catalogue_sql_fail(cat, _("reading exported files"), error);
}
