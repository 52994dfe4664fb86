/* A live run in the catalogue: begun as running when it starts (the recording's path as its
 * dataset, so that a process killed mid-run leaves an interrupted run with its recording), then
 * completed in one transaction: its recordings as datasets, the maps (runs/<id>/<name>.tif), the
 * recording that covered the whole run as its dataset, the other recordings and the ROI time
 * course listed with it as exports. Either all of the completion is recorded or none. */
#include "app/core/catalogue_private.h"
#include "app/core/live_private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <gio/gio.h>
#include <sqlite3.h>
#include <unistd.h>

#include "app/core/error.h"

/* Runs one prepared statement to completion; FALSE with error naming what. */
static gboolean step_done(fm_catalogue *cat, sqlite3_stmt *st, const char *what, GError **error)
{
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || fm_catalogue_sql_fail(cat, what, error);
}

static gboolean exec(fm_catalogue *cat, const char *sql, GError **error)
{
    return sqlite3_exec(cat->db, sql, NULL, NULL, NULL) == SQLITE_OK ||
           fm_catalogue_sql_fail(cat, sql, error);
}

/* The recording's dataset row (reused when its path and hash are known already). */
static gint64 recording_dataset(fm_catalogue *cat, const fm_live_recording *rec, const char *sha256,
                                GError **error)
{
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat, "SELECT id FROM datasets WHERE path = ? AND sha256 IS ?", error);
    if (!st)
        return 0;
    fm_catalogue_bind_text(st, 1, rec->path);
    fm_catalogue_bind_text(st, 2, sha256);
    gint64 id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (id > 0)
        return id;
    st = fm_catalogue_prepare(
        cat, "INSERT INTO datasets(path, sha256, type, dims, added) VALUES(?,?,?,?,?)", error);
    if (!st)
        return 0;
    g_autofree char *dims =
        g_strdup_printf("x=%d,y=%d,t=%" G_GUINT64_FORMAT, rec->width, rec->height, rec->frames);
    fm_catalogue_bind_text(st, 1, rec->path);
    fm_catalogue_bind_text(st, 2, sha256);
    fm_catalogue_bind_text(st, 3, fm_pixel_type_name(rec->type));
    fm_catalogue_bind_text(st, 4, dims);
    sqlite3_bind_int64(st, 5, g_get_real_time() / G_USEC_PER_SEC);
    if (!step_done(cat, st, _("adding the recording"), error))
        return 0;
    return sqlite3_last_insert_rowid(cat->db);
}

static gboolean update_run(fm_catalogue *cat, gint64 run_id, gint64 dataset_id,
                           const fm_result *result, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(cat,
                                            "UPDATE runs SET dataset_id = ?, backend = ?,"
                                            " device = ?, status = ?, error = ?, elapsed_ms = ?,"
                                            " finished = ? WHERE id = ? AND status = ?",
                                            error);
    if (!st)
        return FALSE;
    if (dataset_id > 0)
        sqlite3_bind_int64(st, 1, dataset_id);
    else
        sqlite3_bind_null(st, 1);
    fm_catalogue_bind_text(st, 2, result->backend);
    fm_catalogue_bind_text(st, 3, result->device);
    fm_catalogue_bind_text(st, 4, fm_run_status_name(FM_RUN_DONE));
    fm_catalogue_bind_text(st, 5, result->note);
    sqlite3_bind_double(st, 6, result->elapsed_ms);
    sqlite3_bind_int64(st, 7, g_get_real_time() / G_USEC_PER_SEC);
    sqlite3_bind_int64(st, 8, run_id);
    fm_catalogue_bind_text(st, 9, fm_run_status_name(FM_RUN_RUNNING));
    if (!step_done(cat, st, _("completing the run"), error))
        return FALSE;
    if (sqlite3_changes(cat->db) != 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                    _("run %" G_GINT64_FORMAT " is no longer running in the catalogue"), run_id);
        return FALSE;
    }
    return TRUE;
}

/* The dataset row the run began with (the recording's path, no hash yet) goes once the run
 * points at the hashed one, unless something else uses it. */
static gboolean drop_placeholder(fm_catalogue *cat, gint64 placeholder, GError **error)
{
    if (placeholder <= 0)
        return TRUE;
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat,
                             "DELETE FROM datasets WHERE id = ? AND sha256 IS NULL"
                             " AND NOT EXISTS (SELECT 1 FROM runs WHERE dataset_id = ?)",
                             error);
    if (!st)
        return FALSE;
    sqlite3_bind_int64(st, 1, placeholder);
    sqlite3_bind_int64(st, 2, placeholder);
    return step_done(cat, st, _("completing the run"), error);
}

static gint64 run_dataset(fm_catalogue *cat, gint64 run_id, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(cat, "SELECT dataset_id FROM runs WHERE id = ?", error);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, run_id);
    gint64 id = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    if (id < 0)
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                    _("run %" G_GINT64_FORMAT " is not in the catalogue"), run_id);
    return id;
}

static gboolean insert_export(fm_catalogue *cat, gint64 run_id, const char *file,
                              const char *format, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat, "INSERT OR REPLACE INTO exports(run_id, file, format, exported) VALUES(?,?,?,?)",
        error);
    if (!st)
        return FALSE;
    sqlite3_bind_int64(st, 1, run_id);
    fm_catalogue_bind_text(st, 2, file);
    fm_catalogue_bind_text(st, 3, format);
    sqlite3_bind_int64(st, 4, g_get_real_time() / G_USEC_PER_SEC);
    return step_done(cat, st, _("listing a file with the run"), error);
}

char *fm_catalogue_live_run_dir(fm_catalogue *cat, gint64 run_id)
{
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT, run_id);
    return g_build_filename(fm_catalogue_dir(cat), "runs", id, NULL);
}

/* A map file in the run's folder: taken where it is when written there already (a run with no
 * folder of its own streams its maps there), else a read-only hard link to it, else a copy. */
static gboolean place_map(const char *written, const char *path, GError **error)
{
    if (g_strcmp0(written, path) == 0 || link(written, path) == 0) {
        g_chmod(path, 0444);
        return TRUE;
    }
    g_autoptr(GFile) from = g_file_new_for_path(written);
    g_autoptr(GFile) to = g_file_new_for_path(path);
    GError *local = NULL;
    if (g_file_copy(from, to, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, &local))
        return TRUE;
    g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot copy to the catalogue: %s"), written,
                local->message);
    g_error_free(local);
    return FALSE;
}

static gboolean insert_outputs(fm_catalogue *cat, gint64 run_id, GPtrArray *files, GError **error)
{
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT, run_id);
    g_autofree char *dir = fm_catalogue_live_run_dir(cat, run_id);
    if (files->len && g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot create folder: %s"), dir,
                    g_strerror(errno));
        return FALSE;
    }
    for (guint i = 0; i < files->len; i++) {
        const fm_live_map_file *m = files->pdata[i];
        g_autofree char *name = g_strconcat(m->name, ".tif", NULL);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *canonical = g_canonicalize_filename(path, NULL);
        if (!place_map(m->path, canonical, error))
            return FALSE;
        g_autofree char *file = g_strdup_printf("runs/%s/%s", id, name);
        if (!fm_catalogue_insert_output(cat, run_id, m->name, m->unit, file, &m->stats, error))
            return FALSE;
    }
    return TRUE;
}

gint64 fm_catalogue_begin_live_run(fm_catalogue *cat, const char *method_id,
                                   const char *params_json, GPtrArray *rois,
                                   const char *record_path, fm_pixel_type record_type,
                                   const char *note, GError **error)
{
    /* the recording is being written: its path now, its hash and size at completion */
    fm_dataset recording = {.type = record_type, .source_path = (char *)record_path};
    gint64 run_id = fm_catalogue_begin_run(cat, record_path ? &recording : NULL, method_id,
                                           params_json, rois, error);
    if (run_id <= 0 || note == NULL)
        return run_id;
    g_mutex_lock(&cat->lock);
    sqlite3_stmt *st = fm_catalogue_prepare(cat, "UPDATE runs SET error = ? WHERE id = ?", error);
    gboolean ok = st != NULL;
    if (ok) {
        fm_catalogue_bind_text(st, 1, note);
        sqlite3_bind_int64(st, 2, run_id);
        ok = step_done(cat, st, _("adding the run"), error);
    }
    g_mutex_unlock(&cat->lock);
    return ok ? run_id : 0;
}

gboolean fm_catalogue_complete_live_run(fm_catalogue *cat, gint64 run_id, GPtrArray *recordings,
                                        const fm_result *result, GPtrArray *files,
                                        const char *csv_path, GError **error)
{
    /* hashed before the transaction: a long recording takes a while to read */
    guint n_rec = recordings ? recordings->len : 0;
    g_auto(GStrv) hashes = g_new0(char *, n_rec + 1);
    for (guint i = 0; i < n_rec; i++) {
        fm_dataset probe = {0};
        probe.source_path = ((fm_live_recording *)recordings->pdata[i])->path;
        if (!fm_dataset_hash_file(&probe, error))
            return FALSE;
        hashes[i] = probe.sha256;
    }
    g_mutex_lock(&cat->lock);
    gboolean ok = exec(cat, "BEGIN IMMEDIATE", error);
    gboolean began = ok;
    gint64 placeholder = ok ? run_dataset(cat, run_id, error) : -1;
    ok = ok && placeholder >= 0;
    gint64 input = 0;
    for (guint i = 0; ok && i < n_rec; i++) {
        const fm_live_recording *rec = recordings->pdata[i];
        gint64 id = recording_dataset(cat, rec, hashes[i], error);
        ok = id > 0;
        if (rec->whole_run && input == 0)
            input = id;
    }
    ok = ok && update_run(cat, run_id, input, result, error) &&
         drop_placeholder(cat, placeholder, error) && insert_outputs(cat, run_id, files, error);
    for (guint i = 0; ok && i < n_rec; i++) {
        const fm_live_recording *rec = recordings->pdata[i];
        if (!rec->whole_run)
            ok = insert_export(cat, run_id, rec->path, "tiff", error);
    }
    if (ok && csv_path)
        ok = insert_export(cat, run_id, csv_path, "csv", error);
    ok = ok && exec(cat, "COMMIT", error);
    if (!ok && began)
        sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
    g_mutex_unlock(&cat->lock);
    return ok;
}

gboolean fm_catalogue_forget_live_run(fm_catalogue *cat, gint64 run_id, GError **error)
{
    g_mutex_lock(&cat->lock);
    gboolean ok = exec(cat, "BEGIN IMMEDIATE", error);
    gboolean began = ok;
    gint64 placeholder = ok ? run_dataset(cat, run_id, error) : -1;
    ok = ok && placeholder >= 0;
    static const char *const sql[] = {"DELETE FROM rois WHERE run_id = ?",
                                      "DELETE FROM runs WHERE id = ? AND status = 'running'"};
    for (gsize i = 0; ok && i < G_N_ELEMENTS(sql); i++) {
        sqlite3_stmt *st = fm_catalogue_prepare(cat, sql[i], error);
        ok = st != NULL;
        if (ok) {
            sqlite3_bind_int64(st, 1, run_id);
            ok = step_done(cat, st, _("removing the run"), error);
        }
    }
    ok = ok && drop_placeholder(cat, placeholder, error) && exec(cat, "COMMIT", error);
    if (!ok && began)
        sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
    g_mutex_unlock(&cat->lock);
    if (ok)
        fm_catalogue_remove_run_files(cat, run_id);
    return ok;
}
