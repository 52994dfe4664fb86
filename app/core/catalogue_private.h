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
/* Fills run->exports (the caller holds cat->lock). */
gboolean fm_catalogue_load_exports(fm_catalogue *cat, fm_catalogue_run *run, GError **error);
/* Deletes runs/<id> and whatever is in it (finished maps or .part leftovers). */
void fm_catalogue_remove_run_files(fm_catalogue *cat, gint64 run_id);
