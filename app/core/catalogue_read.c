/* Reading the run catalogue: listing runs, one run with its outputs, and loading a stored map. */
#include "catalogue.h"
#include "catalogue_private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "error.h"
#include "io/tiff.h"

void fm_catalogue_run_free(fm_catalogue_run *run)
{
    if (run == NULL)
        return;
    g_free(run->method_id);
    g_free(run->params_json);
    g_free(run->backend);
    g_free(run->device);
    g_free(run->error_message);
    g_free(run->dataset_path);
    g_free(run->dataset_sha256);
    if (run->outputs)
        g_ptr_array_unref(run->outputs);
    if (run->exports)
        g_ptr_array_unref(run->exports);
    g_free(run);
}

static void output_free(fm_catalogue_output *o)
{
    g_free(o->name);
    g_free(o->unit);
    g_free(o->file);
    g_free(o);
}

static char *column_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? g_strdup((const char *)t) : NULL;
}

static double column_double(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static gboolean load_outputs(fm_catalogue *cat, fm_catalogue_run *run, GError **error)
{
    run->outputs = g_ptr_array_new_with_free_func((GDestroyNotify)output_free);
    sqlite3_stmt *st = fm_catalogue_prepare(
        cat,
        "SELECT name, unit, file, min, max, mean, median, valid_pixels FROM outputs"
        " WHERE run_id = ? ORDER BY id",
        error);
    if (st == NULL)
        return FALSE;
    sqlite3_bind_int64(st, 1, run->id);
    while (sqlite3_step(st) == SQLITE_ROW) {
        fm_catalogue_output *o = g_new0(fm_catalogue_output, 1);
        o->name = column_text(st, 0);
        o->unit = column_text(st, 1);
        g_autofree char *rel = column_text(st, 2);
        o->file = g_build_filename(cat->dir, rel ? rel : "", NULL);
        o->stats.min = column_double(st, 3);
        o->stats.max = column_double(st, 4);
        o->stats.mean = column_double(st, 5);
        o->stats.median = column_double(st, 6);
        o->stats.valid_pixels = (gsize)sqlite3_column_int64(st, 7);
        g_ptr_array_add(run->outputs, o);
    }
    sqlite3_finalize(st);
    return TRUE;
}

#define RUN_COLUMNS                                                                                \
    "SELECT r.id, r.method, r.params_json, r.backend, r.device, r.error, r.status,"                \
    " r.elapsed_ms, r.started, r.finished, d.path, d.sha256"                                       \
    " FROM runs r LEFT JOIN datasets d ON d.id = r.dataset_id "

static fm_catalogue_run *run_from_row(sqlite3_stmt *st)
{
    fm_catalogue_run *run = g_new0(fm_catalogue_run, 1);
    run->id = sqlite3_column_int64(st, 0);
    run->method_id = column_text(st, 1);
    run->params_json = column_text(st, 2);
    run->backend = column_text(st, 3);
    run->device = column_text(st, 4);
    run->error_message = column_text(st, 5);
    g_autofree char *status = column_text(st, 6);
    run->status = fm_catalogue_status_parse(status);
    run->elapsed_ms = column_double(st, 7);
    run->started_unix = sqlite3_column_int64(st, 8);
    run->finished_unix = sqlite3_column_int64(st, 9);
    run->dataset_path = column_text(st, 10);
    run->dataset_sha256 = column_text(st, 11);
    return run;
}

GPtrArray *fm_catalogue_list_runs(fm_catalogue *cat, int limit, GError **error)
{
    g_mutex_lock(&cat->lock);
    GPtrArray *runs = g_ptr_array_new_with_free_func((GDestroyNotify)fm_catalogue_run_free);
    sqlite3_stmt *st = fm_catalogue_prepare(cat, RUN_COLUMNS "ORDER BY r.id DESC LIMIT ?", error);
    gboolean ok = st != NULL;
    if (ok) {
        sqlite3_bind_int64(st, 1, limit > 0 ? limit : -1);
        int rc;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            g_ptr_array_add(runs, run_from_row(st));
        if (rc != SQLITE_DONE)
            ok = fm_catalogue_sql_fail(cat, _("listing runs"), error);
        sqlite3_finalize(st);
    }
    for (guint i = 0; ok && i < runs->len; i++)
        ok = load_outputs(cat, g_ptr_array_index(runs, i), error) &&
             fm_catalogue_load_exports(cat, g_ptr_array_index(runs, i), error);
    g_mutex_unlock(&cat->lock);
    if (!ok)
        g_clear_pointer(&runs, g_ptr_array_unref);
    return runs;
}

fm_catalogue_run *fm_catalogue_get_run(fm_catalogue *cat, gint64 run_id, GError **error)
{
    g_mutex_lock(&cat->lock);
    fm_catalogue_run *run = NULL;
    sqlite3_stmt *st = fm_catalogue_prepare(cat, RUN_COLUMNS "WHERE r.id = ?", error);
    if (st != NULL) {
        sqlite3_bind_int64(st, 1, run_id);
        if (sqlite3_step(st) == SQLITE_ROW)
            run = run_from_row(st);
        else
            g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                        _("%s: run %" G_GINT64_FORMAT " is not in the catalogue"), cat->db_path,
                        run_id);
        sqlite3_finalize(st);
    }
    if (run && !(load_outputs(cat, run, error) && fm_catalogue_load_exports(cat, run, error)))
        g_clear_pointer(&run, fm_catalogue_run_free);
    g_mutex_unlock(&cat->lock);
    return run;
}

GPtrArray *fm_catalogue_get_run_rois(fm_catalogue *cat, gint64 run_id, GError **error)
{
    g_mutex_lock(&cat->lock);
    GPtrArray *rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    sqlite3_stmt *st =
        fm_catalogue_prepare(cat, "SELECT json FROM rois WHERE run_id = ? ORDER BY id", error);
    gboolean ok = st != NULL;
    if (ok) {
        sqlite3_bind_int64(st, 1, run_id);
        int rc = SQLITE_DONE;
        while (ok && (rc = sqlite3_step(st)) == SQLITE_ROW) {
            const char *json = (const char *)sqlite3_column_text(st, 0);
            fm_roi *roi = fm_roi_from_json(json ? json : "", error);
            if (roi == NULL) {
                g_prefix_error(error, _("%s: run %" G_GINT64_FORMAT ", an ROI: "), cat->db_path,
                               run_id);
                ok = FALSE;
            } else {
                g_ptr_array_add(rois, roi);
            }
        }
        if (ok && rc != SQLITE_DONE)
            ok = fm_catalogue_sql_fail(cat, _("reading a run's ROIs"), error);
        sqlite3_finalize(st);
    }
    g_mutex_unlock(&cat->lock);
    if (!ok)
        g_clear_pointer(&rois, g_ptr_array_unref);
    return rois;
}

fm_map *fm_catalogue_load_map(fm_catalogue *cat, gint64 run_id, const char *name, GError **error)
{
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(cat, run_id, error);
    if (run == NULL)
        return NULL;
    for (guint i = 0; i < run->outputs->len; i++) {
        fm_catalogue_output *o = g_ptr_array_index(run->outputs, i);
        if (g_strcmp0(o->name, name) != 0)
            continue;
        g_autoptr(fm_dataset) ds = fm_tiff_read(o->file, error);
        if (ds == NULL)
            return NULL;
        if (ds->type != FM_PIXEL_F32) {
            g_set_error(error, FM_ERROR, FM_ERROR_BAD_INPUT, _("%s: not a float32 map"), o->file);
            return NULL;
        }
        fm_map *map = fm_map_new(o->name, o->unit, fm_dataset_width(ds), fm_dataset_height(ds),
                                 fm_dataset_frames(ds));
        memcpy(map->data, ds->data, fm_dataset_n_bytes(ds));
        return map;
    }
    g_set_error(error, FM_ERROR, FM_ERROR_CATALOGUE,
                _("run %" G_GINT64_FORMAT " has no output map '%s'"), run_id, name);
    return NULL;
}

gboolean fm_catalogue_peek_change_stamp(fm_catalogue *cat, gint64 *stamp)
{
    /* A poll from the main loop must never wait behind a worker's write. */
    if (!g_mutex_trylock(&cat->lock))
        return FALSE;
    sqlite3_stmt *st = NULL;
    gint64 other = -1;
    if (sqlite3_prepare_v2(cat->db, "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        other = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    /* data_version moves with commits of other connections (another window, the CLI, a batch
     * merge), total_changes with this connection's own: their sum moves with either. */
    gint64 own = sqlite3_total_changes(cat->db);
    g_mutex_unlock(&cat->lock);
    if (other < 0)
        return FALSE;
    *stamp = other + own;
    return TRUE;
}
