/* Catalogue tests: fresh create (schema version, WAL), migration from version 0, finished,
 * cancelled and failed runs (rows and files), and two processes adding runs concurrently. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/core/catalogue.h"
#include "app/core/error.h"
#include "app/core/io/tiff.h"
#include "tests/test-tree.h"

typedef struct {
    char *dir;
} Fixture;

static void fixture_setup(Fixture *fx, gconstpointer data)
{
    fx->dir = g_dir_make_tmp("fluxmap-cat-XXXXXX", NULL);
    g_assert_nonnull(fx->dir);
}

static void fixture_teardown(Fixture *fx, gconstpointer data)
{
    fm_test_remove_tree(fx->dir);
    g_free(fx->dir);
}

/* Runs one query on a separate connection and returns the first column of the first row. */
static char *query_text(const char *dir, const char *sql)
{
    g_autofree char *path = g_build_filename(dir, "catalogue.db", NULL);
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt *st = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &st, NULL), ==, SQLITE_OK);
    char *out = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        out = g_strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static gint64 query_int(const char *dir, const char *sql)
{
    g_autofree char *t = query_text(dir, sql);
    return t ? g_ascii_strtoll(t, NULL, 10) : -1;
}

static char *run_dir(const char *dir, gint64 id)
{
    g_autofree char *num = g_strdup_printf("%" G_GINT64_FORMAT, id);
    return g_build_filename(dir, "runs", num, NULL);
}

static fm_dataset *saved_dataset(const char *dir)
{
    gsize sizes[3] = {16, 12, 2};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U16, 3, sizes, NULL);
    for (gsize i = 0; i < fm_dataset_n_elements(ds); i++)
        ((guint16 *)ds->data)[i] = (guint16)(i * 13 % 4096);
    g_autofree char *path = g_build_filename(dir, "input.tif", NULL);
    g_assert_true(fm_tiff_write_dataset(path, ds, NULL, NULL));
    fm_dataset_unref(ds);
    fm_dataset *back = fm_tiff_read(path, NULL);
    g_assert_nonnull(back);
    return back;
}

static fm_result *make_result(int w, int h, int frames, const char *second_name)
{
    fm_result *r = fm_result_new("lsi.spatial");
    r->backend = g_strdup("cpu");
    r->device = g_strdup("CPU, 2 threads");
    r->elapsed_ms = 12.5;
    fm_map *k = fm_map_new("contrast", "1", w, h, frames);
    fm_map *s = fm_map_new(second_name, "1/s", w, h, frames);
    for (gsize i = 0; i < fm_map_n_values(k); i++) {
        k->data[i] = (i % 7 == 0) ? NAN : (float)(0.01 * (double)i);
        s->data[i] = (float)(1000.0 / (1.0 + (double)i));
    }
    fm_result_add_map(r, k);
    fm_result_add_map(r, s);
    return r;
}

static void test_default_dir(void)
{
    g_autofree char *saved = g_strdup(g_getenv("FLUXMAP_DATA_DIR"));
    g_setenv("FLUXMAP_DATA_DIR", "/tmp/somewhere/fluxmap-test", TRUE);
    g_autofree char *a = fm_catalogue_default_dir();
    g_assert_cmpstr(a, ==, "/tmp/somewhere/fluxmap-test");
    g_unsetenv("FLUXMAP_DATA_DIR");
    g_autofree char *b = fm_catalogue_default_dir();
    g_autofree char *expected = g_build_filename(g_get_user_data_dir(), "fluxmap", NULL);
    g_assert_cmpstr(b, ==, expected);
    if (saved)
        g_setenv("FLUXMAP_DATA_DIR", saved, TRUE);
}

static void test_fresh(Fixture *fx, gconstpointer data)
{
    g_autofree char *dir = g_build_filename(fx->dir, "nested", "data", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_catalogue_schema_version(cat), ==, FM_CATALOGUE_SCHEMA_VERSION);
    g_assert_cmpint(query_int(dir, "PRAGMA user_version"), ==, FM_CATALOGUE_SCHEMA_VERSION);
    g_autofree char *mode = query_text(dir, "PRAGMA journal_mode");
    g_assert_cmpstr(mode, ==, "wal");
    g_assert_cmpint(query_int(dir, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                                   " name IN ('datasets', 'rois', 'runs', 'outputs')"),
                    ==, 4);
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 0, &error);
    g_assert_cmpuint(runs->len, ==, 0);
    /* Reopening an up-to-date catalogue changes nothing. */
    fm_catalogue_close(g_steal_pointer(&cat));
    cat = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_catalogue_schema_version(cat), ==, FM_CATALOGUE_SCHEMA_VERSION);
}

/* Version 0 = an SQLite file with user_version 0 and none of our tables (here with a table
 * of someone else's, which the migration must keep). */
static void test_migrate_from_0(Fixture *fx, gconstpointer data)
{
    g_autofree char *path = g_build_filename(fx->dir, "catalogue.db", NULL);
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open(path, &db), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(db,
                                 "CREATE TABLE notes(text TEXT);"
                                 "INSERT INTO notes VALUES('keep me');"
                                 "PRAGMA user_version = 0;",
                                 NULL, NULL, NULL),
                    ==, SQLITE_OK);
    sqlite3_close(db);
    g_assert_cmpint(query_int(fx->dir, "PRAGMA user_version"), ==, 0);

    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(fx->dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_catalogue_schema_version(cat), ==, FM_CATALOGUE_SCHEMA_VERSION);
    g_assert_cmpint(query_int(fx->dir, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                       " AND name IN ('datasets','rois','runs','outputs')"),
                    ==, 4);
    g_autofree char *note = query_text(fx->dir, "SELECT text FROM notes");
    g_assert_cmpstr(note, ==, "keep me");
    g_autofree char *mode = query_text(fx->dir, "PRAGMA journal_mode");
    g_assert_cmpstr(mode, ==, "wal");

    /* A zero-byte file is version 0 too. */
    g_autofree char *empty_dir = g_build_filename(fx->dir, "empty", NULL);
    g_mkdir(empty_dir, 0755);
    g_autofree char *empty = g_build_filename(empty_dir, "catalogue.db", NULL);
    g_assert_true(g_file_set_contents(empty, "", 0, NULL));
    g_autoptr(fm_catalogue) cat2 = fm_catalogue_open(empty_dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fm_catalogue_schema_version(cat2), ==, FM_CATALOGUE_SCHEMA_VERSION);

    /* A catalogue from a newer Fluxmap is refused, not damaged. */
    g_autofree char *future_dir = g_build_filename(fx->dir, "future", NULL);
    g_mkdir(future_dir, 0755);
    g_autofree char *future = g_build_filename(future_dir, "catalogue.db", NULL);
    g_assert_cmpint(sqlite3_open(future, &db), ==, SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    g_autoptr(fm_catalogue) cat3 = fm_catalogue_open(future_dir, &error);
    g_assert_null(cat3);
    g_assert_error(error, FM_ERROR, FM_ERROR_CATALOGUE);
    g_assert_nonnull(strstr(error->message, "newer"));
}

/* A run's ROIs read back as given (a reopened run shows the regions it ran with): names,
 * roles, slices and shapes, in order; a run without any has none. */
static void test_run_rois(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(fx->dir, &error);
    g_autoptr(fm_dataset) ds = saved_dataset(fx->dir);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, fm_roi_new_rectangle("a", 0, 0, 4, 4));
    g_ptr_array_add(rois, fm_roi_new_ellipse("b", 2, 2, 10, 8));
    fm_roi *b = rois->pdata[1];
    b->role = g_strdup("artery");
    b->slice = 3;
    gint64 id = fm_catalogue_begin_run(cat, ds, "dce.tofts", "{}", rois, &error);
    g_assert_no_error(error);
    g_autoptr(GPtrArray) back = fm_catalogue_get_run_rois(cat, id, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(back->len, ==, 2);
    for (guint i = 0; i < 2; i++) {
        g_autofree char *want = fm_roi_to_json(rois->pdata[i]);
        g_autofree char *got = fm_roi_to_json(back->pdata[i]);
        g_assert_cmpstr(got, ==, want);
    }
    g_assert_cmpstr(((fm_roi *)back->pdata[1])->role, ==, "artery");
    g_assert_cmpint(((fm_roi *)back->pdata[1])->slice, ==, 3);
    gint64 bare = fm_catalogue_begin_run(cat, ds, "dce.tofts", "{}", NULL, &error);
    g_autoptr(GPtrArray) none = fm_catalogue_get_run_rois(cat, bare, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(none->len, ==, 0);
}

static void test_finish(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(fx->dir, &error);
    g_autoptr(fm_dataset) ds = saved_dataset(fx->dir);
    g_autoptr(GPtrArray) rois = g_ptr_array_new_with_free_func((GDestroyNotify)fm_roi_free);
    g_ptr_array_add(rois, fm_roi_new_rectangle("a", 0, 0, 4, 4));
    g_ptr_array_add(rois, fm_roi_new_ellipse("b", 2, 2, 10, 8));
    gint64 id = fm_catalogue_begin_run(cat, ds, "lsi.spatial", "{\"window\":5}", rois, &error);
    g_assert_no_error(error);
    g_assert_cmpint(id, >, 0);
    g_autoptr(fm_catalogue_run) running = fm_catalogue_get_run(cat, id, &error);
    g_assert_cmpint(running->status, ==, FM_RUN_RUNNING);
    g_assert_cmpstr(running->dataset_path, ==, ds->source_path);
    g_assert_cmpstr(running->dataset_sha256, ==, ds->sha256);
    g_assert_cmpint(query_int(fx->dir, "SELECT count(*) FROM rois"), ==, 2);

    g_autoptr(fm_result) r = make_result(16, 12, 2, "sfi");
    g_assert_true(fm_catalogue_finish_run(cat, id, r, &error));
    g_assert_no_error(error);
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(cat, id, &error);
    g_assert_cmpint(run->status, ==, FM_RUN_DONE);
    g_assert_cmpstr(run->method_id, ==, "lsi.spatial");
    g_assert_cmpstr(run->params_json, ==, "{\"window\":5}");
    g_assert_cmpstr(run->backend, ==, "cpu");
    g_assert_cmpstr(run->device, ==, "CPU, 2 threads");
    g_assert_cmpfloat(run->elapsed_ms, ==, 12.5);
    g_assert_cmpint(run->finished_unix, >=, run->started_unix);
    g_assert_cmpuint(run->outputs->len, ==, 2);
    for (guint i = 0; i < 2; i++) {
        fm_catalogue_output *o = g_ptr_array_index(run->outputs, i);
        fm_map *m = g_ptr_array_index(r->maps, i);
        fm_map_stats s = fm_map_statistics(m);
        g_assert_cmpstr(o->name, ==, m->name);
        g_assert_cmpstr(o->unit, ==, m->unit);
        g_assert_cmpuint(o->stats.valid_pixels, ==, s.valid_pixels);
        g_assert_cmpfloat(o->stats.min, ==, s.min);
        g_assert_cmpfloat(o->stats.max, ==, s.max);
        g_assert_cmpfloat(o->stats.mean, ==, s.mean);
        g_assert_cmpfloat(o->stats.median, ==, s.median);
        g_autofree char *expected = g_strdup_printf("%s/runs/%" G_GINT64_FORMAT "/%s.tif",
                                                    fm_catalogue_dir(cat), id, m->name);
        g_assert_cmpstr(o->file, ==, expected);
        g_assert_true(g_file_test(o->file, G_FILE_TEST_IS_REGULAR));
        g_autofree char *part = g_strconcat(o->file, ".part", NULL);
        g_assert_false(g_file_test(part, G_FILE_TEST_EXISTS));
        g_autofree char *desc = fm_tiff_read_description(o->file, NULL);
        g_assert_nonnull(strstr(desc, "method=lsi.spatial"));
        /* Stored relative to the catalogue folder, so the folder can move. */
        g_autofree char *rel = query_text(fx->dir, "SELECT file FROM outputs ORDER BY id LIMIT 1");
        g_assert_false(g_path_is_absolute(rel));

        g_autoptr(GError) e2 = NULL;
        fm_map *back = fm_catalogue_load_map(cat, id, m->name, &e2);
        g_assert_no_error(e2);
        g_assert_cmpint(back->n_frames, ==, 2);
        g_assert_true(memcmp(back->data, m->data, fm_map_n_values(m) * sizeof(float)) == 0);
        fm_map_free(back);
    }
    g_assert_null(fm_catalogue_load_map(cat, id, "nope", &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_CATALOGUE);
    g_clear_error(&error);

    /* Finishing again is refused and leaves the run intact. */
    g_assert_false(fm_catalogue_finish_run(cat, id, r, &error));
    g_clear_error(&error);
    g_autoptr(fm_catalogue_run) again = fm_catalogue_get_run(cat, id, &error);
    g_assert_cmpint(again->status, ==, FM_RUN_DONE);
    g_assert_true(g_file_test(((fm_catalogue_output *)g_ptr_array_index(again->outputs, 0))->file,
                              G_FILE_TEST_IS_REGULAR));

    /* The same dataset is recorded once; runs list newest first. */
    gint64 id2 = fm_catalogue_begin_run(cat, ds, "lsi.temporal", "{}", NULL, &error);
    g_assert_cmpint(id2, >, id);
    g_assert_cmpint(query_int(fx->dir, "SELECT count(*) FROM datasets"), ==, 1);
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 0, &error);
    g_assert_cmpuint(runs->len, ==, 2);
    g_assert_cmpint(((fm_catalogue_run *)g_ptr_array_index(runs, 0))->id, ==, id2);
    g_autoptr(GPtrArray) one = fm_catalogue_list_runs(cat, 1, &error);
    g_assert_cmpuint(one->len, ==, 1);
    g_assert_null(fm_catalogue_get_run(cat, 9999, &error));
    g_assert_error(error, FM_ERROR, FM_ERROR_CATALOGUE);
}

static void test_cancelled_and_failed(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(fx->dir, &error);
    g_autoptr(fm_dataset) ds = saved_dataset(fx->dir);

    /* Cancelled, with a leftover partial file from an interrupted write. */
    gint64 cid = fm_catalogue_begin_run(cat, ds, "lsi.spatial", "{}", NULL, &error);
    g_autofree char *cdir = run_dir(fm_catalogue_dir(cat), cid);
    g_mkdir_with_parents(cdir, 0755);
    g_autofree char *part = g_build_filename(cdir, "contrast.tif.part", NULL);
    g_assert_true(g_file_set_contents(part, "half", -1, NULL));
    g_assert_true(
        fm_catalogue_abort_run(cat, cid, FM_RUN_CANCELLED, "cancelled by the user", &error));
    g_autoptr(fm_catalogue_run) c = fm_catalogue_get_run(cat, cid, &error);
    g_assert_cmpint(c->status, ==, FM_RUN_CANCELLED);
    g_assert_cmpstr(c->error_message, ==, "cancelled by the user");
    g_assert_cmpuint(c->outputs->len, ==, 0);
    g_assert_false(g_file_test(cdir, G_FILE_TEST_EXISTS));

    /* Failed half-way: the first map is written, the second cannot be; nothing remains. */
    gint64 fid = fm_catalogue_begin_run(cat, ds, "lsi.spatial", "{}", NULL, &error);
    g_autoptr(fm_result) bad = make_result(16, 12, 1, "no/such dir");
    g_assert_false(fm_catalogue_finish_run(cat, fid, bad, &error));
    g_assert_nonnull(error);
    g_test_message("failure: %s", error->message);
    g_autoptr(fm_catalogue_run) f = fm_catalogue_get_run(cat, fid, NULL);
    g_assert_cmpint(f->status, ==, FM_RUN_FAILED);
    g_assert_cmpstr(f->error_message, ==, error->message);
    g_assert_cmpuint(f->outputs->len, ==, 0);
    g_autofree char *fdir = run_dir(fm_catalogue_dir(cat), fid);
    g_assert_false(g_file_test(fdir, G_FILE_TEST_EXISTS));
    g_assert_cmpint(query_int(fx->dir, "SELECT count(*) FROM outputs"), ==, 0);
    g_assert_cmpstr(fm_run_status_name(FM_RUN_FAILED), ==, "failed");
}

/* Child mode: add n finished runs, as a second Fluxmap process would. */
static int writer_main(const char *dir, int n)
{
    GError *error = NULL;
    fm_catalogue *cat = fm_catalogue_open(dir, &error);
    if (cat == NULL) {
        g_printerr("writer: %s\n", error->message);
        return 1;
    }
    gsize sizes[3] = {8, 8, 1};
    fm_dataset *ds = fm_dataset_new(FM_PIXEL_U8, 3, sizes, NULL);
    /* Start together with the other writer so the transactions really interleave. */
    g_autofree char *go = g_build_filename(dir, "go", NULL);
    for (int wait = 0; wait < 10000 && !g_file_test(go, G_FILE_TEST_EXISTS); wait++)
        g_usleep(1000);
    for (int i = 0; i < n; i++) {
        g_autofree char *who = g_strdup_printf("{\"writer\":%d}", (int)getpid());
        gint64 id = fm_catalogue_begin_run(cat, ds, "lsi.spatial", who, NULL, &error);
        fm_result *r = make_result(8, 8, 1, "sfi");
        gboolean ok = id > 0 && fm_catalogue_finish_run(cat, id, r, &error);
        fm_result_free(r);
        if (!ok) {
            g_printerr("writer: run %d: %s\n", i, error ? error->message : "?");
            return 1;
        }
    }
    fm_dataset_unref(ds);
    fm_catalogue_close(cat);
    return 0;
}

static void test_two_writers(Fixture *fx, gconstpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(fx->dir, &error);
    g_assert_no_error(error);
    g_autofree char *self = g_file_read_link("/proc/self/exe", &error);
    g_assert_no_error(error);
    GPid pids[2];
    for (int i = 0; i < 2; i++) {
        char *argv[] = {self, "--writer", fx->dir, "20", NULL};
        g_assert_true(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                    &pids[i], &error));
    }
    g_autofree char *go = g_build_filename(fx->dir, "go", NULL);
    g_assert_true(g_file_set_contents(go, "", 0, NULL));
    for (int i = 0; i < 2; i++) {
        int status = 0;
        g_assert_cmpint(waitpid(pids[i], &status, 0), ==, pids[i]);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_spawn_close_pid(pids[i]);
    }
    g_autoptr(GPtrArray) runs = fm_catalogue_list_runs(cat, 0, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(runs->len, ==, 40);
    for (guint i = 0; i < runs->len; i++) {
        fm_catalogue_run *run = g_ptr_array_index(runs, i);
        g_assert_cmpint(run->status, ==, FM_RUN_DONE);
        g_assert_cmpuint(run->outputs->len, ==, 2);
        for (guint k = 0; k < 2; k++)
            g_assert_true(
                g_file_test(((fm_catalogue_output *)g_ptr_array_index(run->outputs, k))->file,
                            G_FILE_TEST_IS_REGULAR));
    }
    int switches = 0;
    for (guint i = 1; i < runs->len; i++)
        switches +=
            g_strcmp0(((fm_catalogue_run *)g_ptr_array_index(runs, i))->params_json,
                      ((fm_catalogue_run *)g_ptr_array_index(runs, i - 1))->params_json) != 0;
    g_test_message("runs alternated between the writers %d times", switches);
    g_autofree char *check = query_text(fx->dir, "PRAGMA integrity_check");
    g_assert_cmpstr(check, ==, "ok");
    g_assert_cmpint(query_int(fx->dir, "SELECT count(*) FROM outputs"), ==, 80);
    /* Both writers got ids from one sequence: 1..40 with no gaps or duplicates. */
    g_assert_cmpint(query_int(fx->dir, "SELECT count(DISTINCT id) FROM runs"), ==, 40);
    g_assert_cmpint(query_int(fx->dir, "SELECT max(id) FROM runs"), ==, 40);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--writer") == 0)
        return writer_main(argv[2], atoi(argv[3]));
    g_test_init(&argc, &argv, NULL);
#define ADD(name, fn) g_test_add(name, Fixture, NULL, fixture_setup, fn, fixture_teardown)
    g_test_add_func("/catalogue/default-dir", test_default_dir);
    ADD("/catalogue/fresh", test_fresh);
    ADD("/catalogue/migrate-from-0", test_migrate_from_0);
    ADD("/catalogue/finish", test_finish);
    ADD("/catalogue/run-rois", test_run_rois);
    ADD("/catalogue/cancelled-and-failed", test_cancelled_and_failed);
    ADD("/catalogue/two-writers", test_two_writers);
    return g_test_run();
}
