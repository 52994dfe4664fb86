/* The run catalogue: SQLite (WAL, versioned schema, transactions) plus float32 TIFF maps. */
#define _GNU_SOURCE /* copy_file_range */
#include "catalogue.h"
#include "catalogue_private.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "error.h"
#include "export.h"
#include "io/tiff.h"
#include "process_owner.h"

/* Forward migrations: migrations[v] takes a database from user_version v to v + 1.
 * Version 0 is an SQLite file with user_version 0 and none of our tables (a new, empty file,
 * or one some other tool created); version 1 is the first Fluxmap layout. */
static const char *const migrations[] = {
    "CREATE TABLE datasets ("
    "  id INTEGER PRIMARY KEY, path TEXT NOT NULL, sha256 TEXT, type TEXT, dims TEXT,"
    "  added INTEGER NOT NULL);"
    "CREATE INDEX datasets_by_hash ON datasets(sha256, path);"
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY, dataset_id INTEGER REFERENCES datasets(id),"
    "  method TEXT NOT NULL, params_json TEXT NOT NULL, backend TEXT, device TEXT,"
    "  status TEXT NOT NULL, error TEXT, elapsed_ms REAL, started INTEGER NOT NULL,"
    "  finished INTEGER);"
    "CREATE TABLE rois ("
    "  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  name TEXT, role TEXT, kind TEXT, json TEXT NOT NULL);"
    "CREATE TABLE outputs ("
    "  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  name TEXT NOT NULL, unit TEXT, file TEXT NOT NULL, min REAL, max REAL, mean REAL,"
    "  median REAL, valid_pixels INTEGER, UNIQUE(run_id, name));",
    /* 2: the process that owns a run (process_owner.h), so that a run whose process died can be
     * told from one still running in another window */
    "ALTER TABLE runs ADD COLUMN owner_host TEXT;"
    "ALTER TABLE runs ADD COLUMN owner_boot TEXT;"
    "ALTER TABLE runs ADD COLUMN owner_pid_ns TEXT;"
    "ALTER TABLE runs ADD COLUMN owner_pid INTEGER;"
    "ALTER TABLE runs ADD COLUMN owner_start INTEGER;",
    /* 3: files exported from a run (DICOM objects sent back to the archive), found again from
     * the run (catalogue_exports.c) */
    "CREATE TABLE exports ("
    "  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  file TEXT NOT NULL, format TEXT NOT NULL, sop_class_uid TEXT, series_uid TEXT,"
    "  exported INTEGER NOT NULL, UNIQUE(run_id, file));",
    /* 4: runs made by one batch (fluxmap-cli batch), item by item, so that the runs of a study
     * show as one group and a merge adds each item once (catalogue_batch.c) */
    "CREATE TABLE batch_items ("
    "  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,"
    "  batch_id TEXT NOT NULL, item INTEGER NOT NULL, input TEXT, output TEXT,"
    "  UNIQUE(batch_id, item));",
};
G_STATIC_ASSERT(G_N_ELEMENTS(migrations) == FM_CATALOGUE_SCHEMA_VERSION);

static const char *const status_names[] = {"running", "done", "failed", "cancelled", "interrupted"};

const char *fm_run_status_name(fm_run_status status)
{
    return (status >= 0 && status <= FM_RUN_INTERRUPTED) ? status_names[status] : "unknown";
}

fm_run_status fm_catalogue_status_parse(const char *text)
{
    for (int i = 0; i <= FM_RUN_INTERRUPTED; i++)
        if (g_strcmp0(text, status_names[i]) == 0)
            return (fm_run_status)i;
    return FM_RUN_FAILED;
}

gboolean fm_catalogue_sql_fail(fm_catalogue *cat, const char *what, GError **error)
{
    g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE, _("%s: %s: %s"), cat->db_path, what,
                sqlite3_errmsg(cat->db));
    return FALSE;
}

static gboolean exec(fm_catalogue *cat, const char *sql, GError **error)
{
    char *msg = NULL;
    if (sqlite3_exec(cat->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE, _("%s: %s"), cat->db_path,
                    msg ? msg : sqlite3_errmsg(cat->db));
        sqlite3_free(msg);
        return FALSE;
    }
    return TRUE;
}

static void rollback(fm_catalogue *cat)
{
    sqlite3_exec(cat->db, "ROLLBACK", NULL, NULL, NULL);
}

sqlite3_stmt *fm_catalogue_prepare(fm_catalogue *cat, const char *sql, GError **error)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(cat->db, sql, -1, &st, NULL) != SQLITE_OK) {
        fm_catalogue_sql_fail(cat, "prepare", error);
        return NULL;
    }
    return st;
}

static int user_version(fm_catalogue *cat)
{
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(cat->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

char *fm_catalogue_default_dir(void)
{
    const char *env = g_getenv("FLUXMAP_DATA_DIR");
    if (env && *env)
        return g_strdup(env);
    return g_build_filename(g_get_user_data_dir(), "fluxmap", NULL);
}

static gboolean migrate(fm_catalogue *cat, GError **error)
{
    int v = user_version(cat);
    if (v > FM_CATALOGUE_SCHEMA_VERSION) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                    _("%s: schema version %d is newer than this Fluxmap understands (%d)"),
                    cat->db_path, v, FM_CATALOGUE_SCHEMA_VERSION);
        return FALSE;
    }
    while (v < FM_CATALOGUE_SCHEMA_VERSION) {
        /* IMMEDIATE takes the write lock first, then we re-read: another process may have
         * migrated while we waited. */
        if (!exec(cat, "BEGIN IMMEDIATE", error))
            return FALSE;
        v = user_version(cat);
        if (v >= FM_CATALOGUE_SCHEMA_VERSION) {
            exec(cat, "COMMIT", NULL);
            break;
        }
        g_autofree char *bump = g_strdup_printf("PRAGMA user_version = %d", v + 1);
        if (v < 0 || !exec(cat, migrations[v], error) || !exec(cat, bump, error)) {
            rollback(cat);
            if (error && *error)
                g_prefix_error(error, _("migrating to version %d: "), v + 1);
            return FALSE;
        }
        if (!exec(cat, "COMMIT", error)) {
            rollback(cat);
            return FALSE;
        }
        v++;
    }
    return TRUE;
}

fm_catalogue *fm_catalogue_open(const char *dir, GError **error)
{
    if (g_mkdir_with_parents(dir, 0755) != 0) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE, _("%s: cannot create folder: %s"), dir,
                    g_strerror(errno));
        return NULL;
    }
    fm_catalogue *cat = g_new0(fm_catalogue, 1);
    cat->dir = g_canonicalize_filename(dir, NULL);
    cat->db_path = g_build_filename(cat->dir, "catalogue.db", NULL);
    g_mutex_init(&cat->lock);
    if (sqlite3_open_v2(cat->db_path, &cat->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        fm_catalogue_sql_fail(cat, _("cannot open"), error);
        fm_catalogue_close(cat);
        return NULL;
    }
    sqlite3_busy_timeout(cat->db, 10000);
    if (!exec(cat, "PRAGMA busy_timeout = 10000", error) ||
        !exec(cat, "PRAGMA journal_mode = WAL", error) ||
        !exec(cat, "PRAGMA foreign_keys = ON", error) ||
        !exec(cat, "PRAGMA synchronous = NORMAL", error) || !migrate(cat, error) ||
        !fm_catalogue_recover_interrupted(cat, NULL, error)) {
        fm_catalogue_close(cat);
        return NULL;
    }
    return cat;
}

void fm_catalogue_close(fm_catalogue *cat)
{
    if (cat == NULL)
        return;
    if (cat->db)
        sqlite3_close(cat->db);
    g_mutex_clear(&cat->lock);
    g_free(cat->dir);
    g_free(cat->db_path);
    g_free(cat);
}

const char *fm_catalogue_dir(const fm_catalogue *cat)
{
    return cat->dir;
}

int fm_catalogue_schema_version(fm_catalogue *cat)
{
    g_mutex_lock(&cat->lock);
    int v = user_version(cat);
    g_mutex_unlock(&cat->lock);
    return v;
}

void fm_catalogue_bind_text(sqlite3_stmt *st, int i, const char *text)
{
    if (text)
        sqlite3_bind_text(st, i, text, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* Inside a transaction: the dataset's row id, added when its path and hash are new. */
static gint64 dataset_id(fm_catalogue *cat, const fm_dataset *ds, GError **error)
{
    const char *path = ds->source_path ? ds->source_path : "";
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat, "SELECT id FROM datasets WHERE path = ? AND sha256 IS ?", error);
    if (st == NULL)
        return 0;
    fm_catalogue_bind_text(st, 1, path);
    fm_catalogue_bind_text(st, 2, ds->sha256);
    gint64 id = 0;
    if (sqlite3_step(st) == SQLITE_ROW)
        id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (id > 0)
        return id;
    GString *dims = g_string_new(NULL);
    for (int i = 0; i < ds->n_dims; i++)
        g_string_append_printf(dims, "%s%s=%" G_GSIZE_FORMAT, i ? "," : "", ds->dims[i].name,
                               ds->dims[i].size);
    st = fm_catalogue_prepare(
        cat, "INSERT INTO datasets(path, sha256, type, dims, added) VALUES(?,?,?,?,?)", error);
    if (st != NULL) {
        fm_catalogue_bind_text(st, 1, path);
        fm_catalogue_bind_text(st, 2, ds->sha256);
        fm_catalogue_bind_text(st, 3, fm_pixel_type_name(ds->type));
        fm_catalogue_bind_text(st, 4, dims->str);
        sqlite3_bind_int64(st, 5, g_get_real_time() / G_USEC_PER_SEC);
        if (sqlite3_step(st) == SQLITE_DONE)
            id = sqlite3_last_insert_rowid(cat->db);
        else
            fm_catalogue_sql_fail(cat, _("adding the dataset"), error);
        sqlite3_finalize(st);
    }
    g_string_free(dims, TRUE);
    return id;
}

static gboolean insert_rois(fm_catalogue *cat, gint64 run_id, GPtrArray *rois, GError **error)
{
    for (guint i = 0; rois && i < rois->len; i++) {
        const fm_roi *roi = g_ptr_array_index(rois, i);
        sqlite3_stmt *st = fm_catalogue_prepare(
            cat, "INSERT INTO rois(run_id, name, role, kind, json) VALUES(?,?,?,?,?)", error);
        if (st == NULL)
            return FALSE;
        g_autofree char *json = fm_roi_to_json(roi);
        sqlite3_bind_int64(st, 1, run_id);
        fm_catalogue_bind_text(st, 2, roi->name);
        fm_catalogue_bind_text(st, 3, roi->role);
        fm_catalogue_bind_text(st, 4, fm_roi_kind_name(roi->kind));
        fm_catalogue_bind_text(st, 5, json);
        int rc = sqlite3_step(st);
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE)
            return fm_catalogue_sql_fail(cat, _("adding an ROI"), error);
    }
    return TRUE;
}

/* This process as the run's owner, in parameters first.. first + 4 (host, boot, pid namespace,
 * pid, start ticks); left NULL where /proc cannot tell, and such a run is never taken for dead.
 * (A function of its own: the owner's cleanup must not lie in the scope the gotos of
 * fm_catalogue_begin_run jump over.) */
static void bind_owner(sqlite3_stmt *st, int first)
{
    g_auto(fm_process_owner) owner = {0};
    if (!fm_process_owner_self(&owner))
        return;
    fm_catalogue_bind_text(st, first, owner.host);
    fm_catalogue_bind_text(st, first + 1, owner.boot_id);
    fm_catalogue_bind_text(st, first + 2, owner.pid_ns);
    sqlite3_bind_int64(st, first + 3, owner.pid);
    sqlite3_bind_int64(st, first + 4, (sqlite3_int64)owner.start_ticks);
}

gint64 fm_catalogue_begin_run(fm_catalogue *cat, const fm_dataset *dataset, const char *method_id,
                              const char *params_json, GPtrArray *rois, GError **error)
{
    g_mutex_lock(&cat->lock);
    gint64 run_id = 0;
    if (!exec(cat, "BEGIN IMMEDIATE", error))
        goto out;
    gint64 ds_id = dataset ? dataset_id(cat, dataset, error) : 0;
    if (dataset && ds_id == 0)
        goto fail;
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat,
        "INSERT INTO runs(dataset_id, method, params_json, status, started, owner_host,"
        " owner_boot, owner_pid_ns, owner_pid, owner_start) VALUES(?,?,?,?,?,?,?,?,?,?)",
        error);
    if (st == NULL)
        goto fail;
    if (ds_id > 0)
        sqlite3_bind_int64(st, 1, ds_id);
    else
        sqlite3_bind_null(st, 1);
    fm_catalogue_bind_text(st, 2, method_id);
    fm_catalogue_bind_text(st, 3, params_json ? params_json : "{}");
    fm_catalogue_bind_text(st, 4, fm_run_status_name(FM_RUN_RUNNING));
    sqlite3_bind_int64(st, 5, g_get_real_time() / G_USEC_PER_SEC);
    bind_owner(st, 6);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        fm_catalogue_sql_fail(cat, _("adding the run"), error);
        goto fail;
    }
    run_id = sqlite3_last_insert_rowid(cat->db);
    if (!insert_rois(cat, run_id, rois, error) || !exec(cat, "COMMIT", error)) {
        run_id = 0;
        goto fail;
    }
    goto out;
fail:
    rollback(cat);
out:
    g_mutex_unlock(&cat->lock);
    return run_id;
}

static char *run_dir(fm_catalogue *cat, gint64 run_id)
{
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT, run_id);
    return g_build_filename(cat->dir, "runs", id, NULL);
}

void fm_catalogue_remove_run_files(fm_catalogue *cat, gint64 run_id)
{
    g_autofree char *dir = run_dir(cat, run_id);
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d == NULL)
        return;
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
        g_autofree char *file = g_build_filename(dir, name, NULL);
        g_unlink(file);
    }
    g_dir_close(d);
    g_rmdir(dir);
}

static gboolean safe_map_name(const char *name)
{
    if (name == NULL || *name == '\0' || *name == '.')
        return FALSE;
    for (const char *c = name; *c; c++)
        if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-' && *c != '.')
            return FALSE;
    return TRUE;
}

static gboolean set_status(fm_catalogue *cat, gint64 run_id, fm_run_status status,
                           const char *message, GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat, "UPDATE runs SET status = ?, error = ?, finished = ? WHERE id = ?", error);
    if (st == NULL)
        return FALSE;
    fm_catalogue_bind_text(st, 1, fm_run_status_name(status));
    fm_catalogue_bind_text(st, 2, message);
    sqlite3_bind_int64(st, 3, g_get_real_time() / G_USEC_PER_SEC);
    sqlite3_bind_int64(st, 4, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fm_catalogue_sql_fail(cat, _("updating the run"), error);
    return TRUE;
}

gboolean fm_catalogue_abort_run(fm_catalogue *cat, gint64 run_id, fm_run_status status,
                                const char *message, GError **error)
{
    fm_catalogue_remove_run_files(cat, run_id);
    g_mutex_lock(&cat->lock);
    gboolean ok = exec(cat, "BEGIN IMMEDIATE", error);
    if (ok) {
        g_autofree char *del =
            g_strdup_printf("DELETE FROM outputs WHERE run_id = %" G_GINT64_FORMAT, run_id);
        ok = exec(cat, del, error) && set_status(cat, run_id, status, message, error) &&
             exec(cat, "COMMIT", error);
        if (!ok)
            rollback(cat);
    }
    g_mutex_unlock(&cat->lock);
    return ok;
}

gboolean fm_catalogue_insert_output(fm_catalogue *cat, gint64 run_id, const char *name,
                                    const char *unit, const char *file, const fm_map_stats *stats,
                                    GError **error)
{
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat,
        "INSERT INTO outputs(run_id, name, unit, file, min, max, mean, median, valid_pixels)"
        " VALUES(?,?,?,?,?,?,?,?,?)",
        error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, run_id);
    fm_catalogue_bind_text(st, 2, name);
    fm_catalogue_bind_text(st, 3, unit);
    fm_catalogue_bind_text(st, 4, file);
    /* NaN would be stored as NULL by SQLite anyway; say so explicitly. */
    double v[4] = {stats->min, stats->max, stats->mean, stats->median};
    for (int k = 0; k < 4; k++) {
        if (stats->valid_pixels > 0)
            sqlite3_bind_double(st, 5 + k, v[k]);
        else
            sqlite3_bind_null(st, 5 + k);
    }
    sqlite3_bind_int64(st, 9, (gint64)stats->valid_pixels);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || fm_catalogue_sql_fail(cat, _("adding an output"), error);
}

/* Records outputs and the finished state in one transaction; files are already in place. */
static gboolean commit_outputs(fm_catalogue *cat, gint64 run_id, const fm_result *result,
                               const fm_map_stats *stats, GError **error)
{
    if (!exec(cat, "BEGIN IMMEDIATE", error))
        return FALSE;
    for (guint i = 0; i < result->maps->len; i++) {
        const fm_map *m = g_ptr_array_index(result->maps, i);
        g_autofree char *file =
            g_strdup_printf("runs/%" G_GINT64_FORMAT "/%s.tif", run_id, m->name);
        if (!fm_catalogue_insert_output(cat, run_id, m->name, m->unit, file, &stats[i], error))
            goto fail;
    }
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat,
        "UPDATE runs SET status = 'done', backend = ?, device = ?, elapsed_ms = ?, error = ?,"
        " finished = ? WHERE id = ? AND status = 'running'",
        error);
    if (st == NULL)
        goto fail;
    fm_catalogue_bind_text(st, 1, result->backend);
    fm_catalogue_bind_text(st, 2, result->device);
    sqlite3_bind_double(st, 3, result->elapsed_ms);
    fm_catalogue_bind_text(st, 4, result->note);
    sqlite3_bind_int64(st, 5, g_get_real_time() / G_USEC_PER_SEC);
    sqlite3_bind_int64(st, 6, run_id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        fm_catalogue_sql_fail(cat, _("finishing the run"), error);
        goto fail;
    }
    if (sqlite3_changes(cat->db) != 1) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                    _("%s: run %" G_GINT64_FORMAT " is not a running run"), cat->db_path, run_id);
        goto fail;
    }
    if (exec(cat, "COMMIT", error))
        return TRUE;
fail:
    rollback(cat);
    return FALSE;
}

/* The run's status, or -1 (with error) when it is not in the catalogue. */
static int run_status(fm_catalogue *cat, gint64 run_id, GError **error)
{
    g_mutex_lock(&cat->lock);
    int status = -1;
    sqlite3_stmt *st = fm_catalogue_prepare(cat, "SELECT status FROM runs WHERE id = ?", error);
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, run_id);
        if (sqlite3_step(st) == SQLITE_ROW)
            status = fm_catalogue_status_parse((const char *)sqlite3_column_text(st, 0));
        else
            g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                        _("%s: run %" G_GINT64_FORMAT " is not in the catalogue"), cat->db_path,
                        run_id);
        sqlite3_finalize(st);
    }
    g_mutex_unlock(&cat->lock);
    return status;
}

gboolean fm_catalogue_finish_run(fm_catalogue *cat, gint64 run_id, const fm_result *result,
                                 GError **error)
{
    return fm_catalogue_finish_run_with(cat, run_id, result, NULL, NULL, error);
}

/* A map file the caller wrote already, recorded without encoding the map again or writing its
 * bytes twice: a hard link on the same file system, made read-only, so that neither name can be
 * rewritten in place and change the record (the CLI replaces exports by rename, a new file);
 * across file systems a reflink (btrfs, XFS), else copy_file_range, else read and write. */
static gboolean copy_map_file(const char *from, const char *to, GError **error)
{
    if (link(from, to) == 0) {
        if (chmod(to, 0444) == 0)
            return TRUE;
        g_unlink(to);
    }
    int in = g_open(from, O_RDONLY | O_CLOEXEC, 0);
    int out = in < 0 ? -1 : g_open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    gboolean ok = in >= 0 && out >= 0;
    if (ok && ioctl(out, FICLONE, in) != 0) {
        ssize_t n;
        while ((n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0)) > 0)
            ;
        if (n < 0 &&
            (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
            g_autofree char *buf = g_malloc((size_t)1 << 20);
            ssize_t r = 0;
            ok = lseek(in, 0, SEEK_SET) == 0 && ftruncate(out, 0) == 0 &&
                 lseek(out, 0, SEEK_SET) == 0;
            while (ok && (r = read(in, buf, (size_t)1 << 20)) > 0)
                ok = write(out, buf, (size_t)r) == r;
            ok = ok && r == 0;
        } else {
            ok = n == 0;
        }
    }
    int saved = errno;
    if (out >= 0 && close(out) != 0)
        ok = FALSE;
    if (in >= 0)
        close(in);
    if (!ok)
        g_set_error(error, FM_ERROR, FM_ERROR_IO, _("%s: cannot copy to the catalogue: %s"), from,
                    g_strerror(saved));
    return ok;
}

gboolean fm_catalogue_finish_run_with(fm_catalogue *cat, gint64 run_id, const fm_result *result,
                                      const char *const *files, const fm_map_stats *given,
                                      GError **error)
{
    /* Only a running run may be finished; anything else is left exactly as it is. */
    int status = run_status(cat, run_id, error);
    if (status < 0)
        return FALSE;
    if (status != FM_RUN_RUNNING) {
        g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                    _("%s: run %" G_GINT64_FORMAT " is %s, not running"), cat->db_path, run_id,
                    fm_run_status_name(status));
        return FALSE;
    }
    g_autofree char *dir = run_dir(cat, run_id);
    g_autofree fm_map_stats *stats = g_new0(fm_map_stats, MAX(result->maps->len, 1));
    GError *local = NULL;
    gboolean ok = g_mkdir_with_parents(dir, 0755) == 0;
    if (!ok)
        g_set_error(&local, FM_ERROR, FM_ERROR_IO, _("%s: cannot create folder: %s"), dir,
                    g_strerror(errno));
    /* Every map goes to "<name>.tif.part" first; only complete files get their final name. */
    for (guint i = 0; ok && i < result->maps->len; i++) {
        const fm_map *m = g_ptr_array_index(result->maps, i);
        if (!safe_map_name(m->name)) {
            g_set_error(&local, FM_ERROR, FM_ERROR_IO, _("map name '%s' is not a file name"),
                        m->name ? m->name : "");
            ok = FALSE;
            break;
        }
        g_autofree char *part = g_strdup_printf("%s/%s.tif.part", dir, m->name);
        ok = files && files[i] ? copy_map_file(files[i], part, &local)
                               : fm_export_tiff(part, m, result->method_id, NULL, &local);
        stats[i] = given ? given[i] : fm_map_statistics(m);
    }
    for (guint i = 0; ok && i < result->maps->len; i++) {
        const fm_map *m = g_ptr_array_index(result->maps, i);
        g_autofree char *part = g_strdup_printf("%s/%s.tif.part", dir, m->name);
        g_autofree char *final = g_strdup_printf("%s/%s.tif", dir, m->name);
        if (g_rename(part, final) != 0) {
            g_set_error(&local, FM_ERROR, FM_ERROR_IO, _("%s: cannot rename: %s"), part,
                        g_strerror(errno));
            ok = FALSE;
        }
    }
    if (ok) {
        g_mutex_lock(&cat->lock);
        ok = commit_outputs(cat, run_id, result, stats, &local);
        g_mutex_unlock(&cat->lock);
    }
    if (!ok) {
        fm_catalogue_abort_run(cat, run_id, FM_RUN_FAILED, local->message, NULL);
        g_propagate_error(error, local);
    }
    return ok;
}
