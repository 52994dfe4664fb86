/* The catalogue's recovery at open: runs whose process died while running become "interrupted". */
#include "catalogue.h"
#include "catalogue_private.h"

#include <glib/gi18n.h>
#include <sqlite3.h>

#include "error.h"
#include "live.h"
#include "process_owner.h"

static char *column_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? g_strdup((const char *)t) : NULL;
}

/* The ids of running runs whose owner has ended, and their pids (pairs in one array). */
static GArray *dead_runs(fm_catalogue *cat, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat,
        "SELECT id, owner_host, owner_boot, owner_pid_ns, owner_pid, owner_start FROM runs"
        " WHERE status = 'running' AND owner_pid IS NOT NULL",
        error);
    if (st == NULL)
        return NULL;
    GArray *dead = g_array_new(FALSE, FALSE, sizeof(gint64));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        g_auto(fm_process_owner) owner = {
            .host = column_text(st, 1),
            .boot_id = column_text(st, 2),
            .pid_ns = column_text(st, 3),
            .pid = sqlite3_column_int64(st, 4),
            .start_ticks = (guint64)sqlite3_column_int64(st, 5),
        };
        if (fm_process_owner_state(&owner) == FM_OWNER_GONE) {
            gint64 id = sqlite3_column_int64(st, 0);
            g_array_append_val(dead, id);
            g_array_append_val(dead, owner.pid);
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        g_array_unref(dead);
        fm_catalogue_sql_fail(cat, _("reading the running runs"), error);
        return NULL;
    }
    return dead;
}

/* The source line of run_id's note (a live run's), or NULL. */
static char *live_source(fm_catalogue *cat, gint64 run_id)
{
    sqlite3_stmt *st = fm_catalogue_prepare(cat, "SELECT error FROM runs WHERE id = ?", NULL);
    if (st == NULL)
        return NULL;
    sqlite3_bind_int64(st, 1, run_id);
    char *source = sqlite3_step(st) == SQLITE_ROW
                       ? fm_live_note_source((const char *)sqlite3_column_text(st, 0))
                       : NULL;
    sqlite3_finalize(st);
    return source;
}

/* One transaction: no outputs, status interrupted, only if the run is still running (another
 * process opening the catalogue at the same moment may have done it already). */
static gboolean mark_interrupted(fm_catalogue *cat, gint64 run_id, gint64 pid, gboolean *changed,
                                 GError **error)
{
    *changed = FALSE;
    if (sqlite3_exec(cat->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return fm_catalogue_sql_fail(cat, _("marking an interrupted run"), error);
    sqlite3_stmt *del = fm_catalogue_prepare(cat, "DELETE FROM outputs WHERE run_id = ?", error);
    sqlite3_stmt *up = del ? fm_catalogue_prepare(cat,
                                                  "UPDATE runs SET status = ?, error = ?,"
                                                  " finished = ? WHERE id = ? AND status = ?",
                                                  error)
                           : NULL;
    gboolean ok = up != NULL;
    if (ok) {
        sqlite3_bind_int64(del, 1, run_id);
        ok = sqlite3_step(del) == SQLITE_DONE;
    }
    if (ok) {
        /* a live run's note names its source from the start: kept above the message */
        g_autofree char *source = live_source(cat, run_id);
        g_autofree char *reason = g_strdup_printf(
            _("interrupted: its process (pid %" G_GINT64_FORMAT ") ended before the run did"), pid);
        g_autofree char *message =
            source ? g_strdup_printf("%s\n%s", source, reason) : g_steal_pointer(&reason);
        sqlite3_bind_text(up, 1, fm_run_status_name(FM_RUN_INTERRUPTED), -1, SQLITE_STATIC);
        sqlite3_bind_text(up, 2, message, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(up, 3, g_get_real_time() / G_USEC_PER_SEC);
        sqlite3_bind_int64(up, 4, run_id);
        sqlite3_bind_text(up, 5, fm_run_status_name(FM_RUN_RUNNING), -1, SQLITE_STATIC);
        ok = sqlite3_step(up) == SQLITE_DONE;
        *changed = ok && sqlite3_changes(cat->db) == 1;
    }
    sqlite3_finalize(del);
    sqlite3_finalize(up);
    if (ok && sqlite3_exec(cat->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
        return TRUE;
    if (error == NULL || *error == NULL)
        fm_catalogue_sql_fail(cat, _("marking an interrupted run"), error);
    sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
    return FALSE;
}

gboolean fm_catalogue_recover_interrupted(fm_catalogue *cat, int *n_interrupted, GError **error)
{
    if (n_interrupted != NULL)
        *n_interrupted = 0;
    g_mutex_lock(&cat->lock);
    GArray *dead = dead_runs(cat, error);
    gboolean ok = dead != NULL;
    for (guint i = 0; ok && i + 1 < dead->len; i += 2) {
        gint64 run_id = g_array_index(dead, gint64, i), pid = g_array_index(dead, gint64, i + 1);
        /* Files first: a crash between the two leaves a running row that the next open
         * interrupts again, never an interrupted run with files. */
        fm_catalogue_remove_run_files(cat, run_id);
        gboolean changed = FALSE;
        ok = mark_interrupted(cat, run_id, pid, &changed, error);
        if (changed && n_interrupted != NULL)
            (*n_interrupted)++;
    }
    if (dead != NULL)
        g_array_unref(dead);
    g_mutex_unlock(&cat->lock);
    return ok;
}
