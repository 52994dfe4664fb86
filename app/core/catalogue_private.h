/* Private to catalogue.c and catalogue_read.c: the catalogue's fields and shared SQL helpers. */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "catalogue.h"

struct fm_catalogue {
    char *dir;
    char *db_path;
    sqlite3 *db;
    GMutex lock; /* one connection, shared by the jobs' worker threads */
};

/* The status stored as text; unknown text reads as failed. */
fm_run_status fm_catalogue_status_parse(const char *text);
/* Sets error to "<db>: <what>: <SQLite message>" and returns FALSE. */
gboolean fm_catalogue_sql_fail(fm_catalogue *cat, const char *what, GError **error);
/* A prepared statement, or NULL with error set. */
sqlite3_stmt *fm_catalogue_prepare(fm_catalogue *cat, const char *sql, GError **error);
/* Binds text to parameter i, or NULL for no text. */
void fm_catalogue_bind_text(sqlite3_stmt *st, int i, const char *text);
/* Adds the output row of map name (unit) of run_id, stored at file (relative to the catalogue's
 * folder), with its statistics; those stay NULL where no pixel is valid. The caller holds
 * cat->lock. */
gboolean fm_catalogue_insert_output(fm_catalogue *cat, gint64 run_id, const char *name,
                                    const char *unit, const char *file, const fm_map_stats *stats,
                                    GError **error);
/* Fills run->exports (the caller holds cat->lock). */
gboolean fm_catalogue_load_exports(fm_catalogue *cat, fm_catalogue_run *run, GError **error);
/* Deletes runs/<id> and whatever is in it (finished maps or .part leftovers). */
void fm_catalogue_remove_run_files(fm_catalogue *cat, gint64 run_id);
