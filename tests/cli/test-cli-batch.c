/* fluxmap-cli batch plan | run | merge on the CPU: bad rows rejected at plan time with the file
 * and the reason; six items as three tasks with one failing item merged once (a second merge
 * changes nothing); --retry-failed runs a mended item again and the merge replaces its failed
 * run; a task killed mid-run leaves only a .partial shard, counted missing, redone; `catalogue
 * list` marks the batch's runs with the batch and item; batch run's idle OpenMP threads sleep;
 * `batch -o RUN/ METHOD FILES` plans, runs and merges in one command. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/cli/cli-test-util.h"

static void must_run(const char *what, cli_result *r)
{
    if (r->status != 0)
        g_error("%s: exit %d\nstdout: %s\nstderr: %s", what, r->status, r->out, r->err);
}

static void simulate(const char *kind, const char *name, const char *size_args)
{
    g_autofree char *path = cli_test_tmp_path(name);
    g_auto(GStrv) extra = g_strsplit(size_args, " ", -1);
    cli_result r =
        cli_test_run(NULL, NULL, "simulate", kind, extra[0], extra[1], extra[2], "-o", path, NULL);
    must_run(path, &r);
    cli_result_clear(&r);
}

/* Keeps the first n bytes: the header still reads, the data does not. */
static void truncate_file(const char *name, gsize n)
{
    g_autofree char *path = cli_test_tmp_path(name);
    g_assert_cmpint(truncate(path, (off_t)n), ==, 0);
}

static void write_text(const char *name, const char *text)
{
    g_autofree char *path = cli_test_tmp_path(name);
    g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static char *run_dir_path(const char *run, const char *rest)
{
    return g_build_filename(tmp_dir, run, rest, NULL);
}

static void test_plan_rejects_bad_rows(void)
{
    write_text("bad.csv", "input,method,params,roi,output\n"
                          "lsi1.tif,lsi.spatial,window=5,,a\n"
                          "missing.tif,lsi.spatial,,,b\n"
                          "lsi2.tif,lsi.nonsense,,,c\n"
                          "lsi3.tif,lsi.spatial,window=99,,d\n"
                          "flim1.sdt,flim.iem,\"{\"\"binning\"\":1}\",no-such-roi.json,e\n"
                          "flim2.sdt,lsi.spatial,,,f\n");
    g_autofree char *manifest = cli_test_tmp_path("bad.csv");
    g_autofree char *run = cli_test_tmp_path("run-bad");
    cli_result r = cli_test_run(NULL, NULL, "batch", "plan", "-o", run, manifest, NULL);
    g_test_message("%s", r.err);
    g_assert_cmpint(r.status, ==, 2);
    /* every bad row, with its line, its file and why */
    const char *expected[][3] = {
        {"bad.csv:3 (", "missing.tif", "cannot open"},
        {"bad.csv:4 (", "lsi2.tif", "unknown method 'lsi.nonsense'"},
        {"bad.csv:5 (", "lsi3.tif", "99"},
        {"bad.csv:6 (", "flim1.sdt", "no-such-roi.json"},
        {"bad.csv:7 (", "flim2.sdt", "lsi.spatial does not read Becker & Hickl .sdt files"},
    };
    g_auto(GStrv) lines = g_strsplit(r.err, "\n", -1);
    for (gsize k = 0; k < G_N_ELEMENTS(expected); k++) {
        gboolean found = FALSE;
        for (int i = 0; lines[i] && !found; i++)
            found = strstr(lines[i], expected[k][0]) && strstr(lines[i], expected[k][1]) &&
                    strstr(lines[i], expected[k][2]);
        if (!found)
            g_error("no line with '%s', '%s' and '%s' in:\n%s", expected[k][0], expected[k][1],
                    expected[k][2], r.err);
    }
    g_assert_null(strstr(r.err, "bad.csv:2 "));           /* the good row is not reported */
    g_assert_false(g_file_test(run, G_FILE_TEST_EXISTS)); /* nothing written */
    cli_result_clear(&r);

    /* --skip-bad plans the one good row */
    r = cli_test_run(NULL, NULL, "batch", "plan", "-o", run, manifest, "--skip-bad", NULL);
    must_run("plan --skip-bad", &r);
    g_autofree char *plan = run_dir_path("run-bad", "plan.tsv");
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(plan, &text, NULL, NULL));
    g_auto(GStrv) rows = g_strsplit(g_strstrip(text), "\n", -1);
    g_assert_cmpuint(g_strv_length(rows), ==, 2); /* header + lsi1.tif */
    g_assert_nonnull(strstr(rows[1], "lsi1.tif\tlsi.spatial\t{\"window\":5"));
    cli_result_clear(&r);
}

static int compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b); /* pointers to the elements */
}

/* Every row of the catalogue's tables and every file under runs/ with its size, as text. */
static char *dump_catalogue(const char *dir)
{
    g_autofree char *db_path = g_build_filename(dir, "catalogue.db", NULL);
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    GString *out = g_string_new(NULL);
    static const char *const tables[] = {"datasets", "runs",        "rois",
                                         "outputs",  "batch_items", "exports"};
    for (gsize t = 0; t < G_N_ELEMENTS(tables); t++) {
        g_autofree char *sql = g_strdup_printf("SELECT * FROM %s ORDER BY 1", tables[t]);
        sqlite3_stmt *st = NULL;
        g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &st, NULL), ==, SQLITE_OK);
        g_string_append_printf(out, "[%s]\n", tables[t]);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const unsigned char *v = sqlite3_column_text(st, c);
                g_string_append_printf(out, "%s|", v ? (const char *)v : "NULL");
            }
            g_string_append_c(out, '\n');
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    g_autofree char *runs = g_build_filename(dir, "runs", NULL);
    GDir *d = g_dir_open(runs, 0, NULL);
    g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
    const char *name;
    while (d && (name = g_dir_read_name(d)) != NULL) {
        g_autofree char *sub = g_build_filename(runs, name, NULL);
        GDir *s = g_dir_open(sub, 0, NULL);
        const char *file;
        while (s && (file = g_dir_read_name(s)) != NULL) {
            g_autofree char *path = g_build_filename(sub, file, NULL);
            GStatBuf st;
            g_assert_cmpint(g_stat(path, &st), ==, 0);
            g_ptr_array_add(files,
                            g_strdup_printf("%s/%s %lld", name, file, (long long)st.st_size));
        }
        if (s)
            g_dir_close(s);
    }
    if (d)
        g_dir_close(d);
    g_ptr_array_sort(files, compare_strings);
    for (guint i = 0; i < files->len; i++)
        g_string_append_printf(out, "%s\n", (const char *)files->pdata[i]);
    return g_string_free(out, FALSE);
}

static int query_int(const char *dir, const char *sql)
{
    g_autofree char *db_path = g_build_filename(dir, "catalogue.db", NULL);
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    sqlite3_stmt *st = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &st, NULL), ==, SQLITE_OK);
    int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static char *query_text(const char *dir, const char *sql)
{
    g_autofree char *db_path = g_build_filename(dir, "catalogue.db", NULL);
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
    sqlite3_stmt *st = NULL;
    g_assert_cmpint(sqlite3_prepare_v2(db, sql, -1, &st, NULL), ==, SQLITE_OK);
    char *v =
        sqlite3_step(st) == SQLITE_ROW ? g_strdup((const char *)sqlite3_column_text(st, 0)) : NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* `catalogue list` marks each of the batch's runs with the batch (its id's first 8 characters)
 * and its item, in the table and in --json; `catalogue show` names the whole id. */
static void check_catalogue_lists_batch(const char *cat)
{
    g_autofree char *batch_id = query_text(cat, "SELECT batch_id FROM batch_items LIMIT 1");
    g_assert_nonnull(batch_id);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "FLUXMAP_DATA_DIR", cat, TRUE);
    cli_result r = cli_test_run(NULL, env, "catalogue", "list", NULL);
    must_run("catalogue list", &r);
    for (int item = 0; item < 6; item++) {
        g_autofree char *mark = g_strdup_printf("  [batch %.8s/item %d]\n", batch_id, item);
        g_assert_nonnull(strstr(r.out, mark));
    }
    cli_result_clear(&r);
    r = cli_test_run(NULL, env, "catalogue", "list", "--json", NULL);
    must_run("catalogue list --json", &r);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, r.out, -1, NULL));
    JsonArray *runs =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "runs");
    guint seen = 0; /* bit i: item i listed with the batch */
    for (guint i = 0; i < json_array_get_length(runs); i++) {
        JsonObject *batch =
            json_object_get_object_member(json_array_get_object_element(runs, i), "batch");
        g_assert_nonnull(batch);
        g_assert_cmpstr(json_object_get_string_member(batch, "id"), ==, batch_id);
        seen |= 1u << json_object_get_int_member(batch, "item");
    }
    g_assert_cmpuint(seen, ==, 0x3f);
    cli_result_clear(&r);
    int run_id = query_int(cat, "SELECT run_id FROM batch_items WHERE item = 5");
    g_autofree char *id_text = g_strdup_printf("%d", run_id);
    r = cli_test_run(NULL, env, "catalogue", "show", id_text, NULL);
    must_run("catalogue show", &r);
    g_autofree char *line = g_strdup_printf("  batch    %s, item 5\n", batch_id);
    g_assert_nonnull(strstr(r.out, line));
    cli_result_clear(&r);
}

static void test_three_tasks_one_failure(void)
{
    write_text("good.tsv", "input\tmethod\tparams\toutput\n"
                           "lsi1.tif\tlsi.spatial\twindow=5\n"
                           "lsi2.tif\tlsi.spatial\t\n"
                           "lsi3.tif\tlsi.spatial\t{\"window\": 7}\n"
                           "flim1.sdt\tflim.iem\t\n"
                           "flim2.sdt\tflim.iem\tbinning=1\n"
                           "flim-truncated.sdt\tflim.iem\t\n");
    g_autofree char *manifest = cli_test_tmp_path("good.tsv");
    g_autofree char *run = cli_test_tmp_path("run-six");
    g_autofree char *cat = cli_test_tmp_path("cat-six");
    cli_result r = cli_test_run(NULL, NULL, "batch", "plan", "-o", run, manifest, NULL);
    must_run("plan", &r);
    g_assert_nonnull(strstr(r.out, "planned 6 items"));
    cli_result_clear(&r);
    for (int t = 0; t < 3; t++) {
        g_autofree char *task = g_strdup_printf("%d", t);
        r = cli_test_run(NULL, NULL, "batch", "run", run, "--task", task, "--ntasks", "3",
                         "--backend=cpu", NULL);
        must_run("batch run", &r);
        /* not a terminal: one JSON line per item, then the task's */
        g_auto(GStrv) lines = g_strsplit(g_strstrip(r.out), "\n", -1);
        g_assert_cmpuint(g_strv_length(lines), ==, 3);
        g_assert_nonnull(strstr(lines[0], "\"event\":\"item\""));
        g_assert_nonnull(strstr(lines[2], "\"event\":\"task\""));
        if (t == 2) { /* item 5, the truncated file: recorded as failed, the task went on */
            g_assert_nonnull(strstr(lines[1], "\"index\":5"));
            g_assert_nonnull(strstr(lines[1], "\"status\":\"failed\""));
            g_assert_nonnull(strstr(lines[2], "\"done\":1,\"failed\":1"));
        }
        cli_result_clear(&r);
        g_autofree char *name = g_strdup_printf("shards/task-%d-of-3", t);
        g_autofree char *shard = run_dir_path("run-six", name);
        g_autofree char *partial_name = g_strdup_printf("shards/.task-%d-of-3.partial", t);
        g_autofree char *partial = run_dir_path("run-six", partial_name);
        g_assert_true(g_file_test(shard, G_FILE_TEST_IS_DIR));
        g_assert_false(g_file_test(partial, G_FILE_TEST_EXISTS));
    }
    /* a rerun of a complete task runs nothing */
    r = cli_test_run(NULL, NULL, "batch", "run", run, "--task", "1", "--ntasks", "3",
                     "--backend=cpu", NULL);
    must_run("rerun", &r);
    g_assert_nonnull(strstr(r.out, "\"was_complete\":true"));
    cli_result_clear(&r);

    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    must_run("merge", &r);
    g_assert_nonnull(strstr(r.out, "6 runs added"));
    g_assert_nonnull(strstr(r.out, "failed items: 5\n"));
    g_assert_nonnull(strstr(r.out, "missing tasks: none"));
    cli_result_clear(&r);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM batch_items"), ==, 6);
    g_assert_cmpint(query_int(cat, "SELECT count(DISTINCT batch_id) FROM batch_items"), ==, 1);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM runs WHERE status = 'done'"), ==, 5);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM runs r JOIN batch_items b ON"
                                   " b.run_id = r.id WHERE b.item = 5 AND r.status = 'failed'"
                                   " AND r.error LIKE '%truncated%'"),
                    ==, 1);
    /* lsi.spatial: contrast and sfi; flim.iem: its maps; every file in place */
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM outputs o JOIN batch_items b ON"
                                   " b.run_id = o.run_id WHERE b.item = 0"),
                    ==, 2);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM runs r WHERE r.status = 'done' AND"
                                   " NOT EXISTS (SELECT 1 FROM outputs o WHERE o.run_id = r.id)"),
                    ==, 0);
    g_autofree char *before = dump_catalogue(cat);
    g_assert_nonnull(strstr(before, "contrast.tif"));

    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    must_run("second merge", &r);
    g_assert_nonnull(strstr(r.out, "0 runs added, 0 replaced, 6 there already"));
    cli_result_clear(&r);
    g_autofree char *after = dump_catalogue(cat);
    g_assert_cmpstr(after, ==, before);
    check_catalogue_lists_batch(cat);
}

/* ITEMS copies of the big .sdt in a fresh folder, planned as flim.iem into run_name. */
static char *plan_copies(const char *folder_name, const char *run_name, int items)
{
    g_autofree char *one = cli_test_tmp_path("flim-big.sdt");
    g_autofree char *folder = cli_test_tmp_path(folder_name);
    g_assert_cmpint(g_mkdir(folder, 0755), ==, 0);
    g_autofree char *bytes = NULL;
    gsize n = 0;
    g_assert_true(g_file_get_contents(one, &bytes, &n, NULL));
    for (int i = 0; i < items; i++) {
        g_autofree char *name = g_strdup_printf("well-%02d.sdt", i);
        g_autofree char *path = g_build_filename(folder, name, NULL);
        g_assert_true(g_file_set_contents(path, bytes, (gssize)n, NULL));
    }
    char *run = cli_test_tmp_path(run_name);
    cli_result r = cli_test_run(NULL, NULL, "batch", "plan", "-o", run, "flim.iem", folder, NULL);
    must_run("plan", &r);
    cli_result_clear(&r);
    return run;
}

/* Starts `batch run RUN --backend=cpu` and returns once its first item's line is out: the task
 * is under way, its shard partial. */
static GPid start_run_past_first_item(const char *run, int *out_fd)
{
    const char *argv[] = {cli_path, "batch", "run", run, "--backend=cpu", NULL};
    GPid pid;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_async_with_pipes(NULL, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           NULL, NULL, &pid, NULL, out_fd, NULL, &error));
    g_assert_no_error(error);
    char c;
    GString *line = g_string_new(NULL);
    while (read(*out_fd, &c, 1) == 1 && c != '\n')
        g_string_append_c(line, c);
    g_assert_nonnull(strstr(line->str, "\"event\":\"item\""));
    g_string_free(line, TRUE);
    return pid;
}

/* A task killed after its first item: its .partial shard is not a shard (the task is missing),
 * and the rerun removes it and runs every item of the task. */
static void test_killed_task_redone(void)
{
    enum { ITEMS = 12 };
    g_autofree char *run = plan_copies("many", "run-killed", ITEMS);
    g_autofree char *cat = cli_test_tmp_path("cat-killed");
    cli_result r;
    int out_fd = -1;
    GPid pid = start_run_past_first_item(run, &out_fd);
    kill(pid, SIGKILL);
    int status = 0;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_spawn_close_pid(pid);
    close(out_fd);
    g_assert_true(WIFSIGNALED(status));
    g_autofree char *partial = run_dir_path("run-killed", "shards/.task-0-of-1.partial");
    g_autofree char *shard = run_dir_path("run-killed", "shards/task-0-of-1");
    g_assert_true(g_file_test(partial, G_FILE_TEST_IS_DIR));
    g_assert_false(g_file_test(shard, G_FILE_TEST_EXISTS));

    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    g_assert_cmpint(r.status, ==, 1);
    g_assert_nonnull(strstr(r.out, "missing tasks: 0 "));
    cli_result_clear(&r);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM batch_items"), ==, 0);

    r = cli_test_run(NULL, NULL, "batch", "run", run, "--backend=cpu", NULL);
    must_run("rerun", &r);
    g_assert_nonnull(strstr(r.out, "\"items\":12,\"done\":12,\"failed\":0"));
    cli_result_clear(&r);
    g_assert_false(g_file_test(partial, G_FILE_TEST_EXISTS));
    g_assert_true(g_file_test(shard, G_FILE_TEST_IS_DIR));

    /* without --catalogue: the user's, FLUXMAP_DATA_DIR here */
    r = cli_test_run(NULL, NULL, "batch", "merge", run, NULL);
    must_run("merge", &r);
    g_assert_nonnull(strstr(r.out, "12 runs added"));
    g_assert_nonnull(strstr(r.out, "missing tasks: none"));
    cli_result_clear(&r);
    const char *user_cat = g_getenv("FLUXMAP_DATA_DIR");
    g_assert_cmpint(query_int(user_cat, "SELECT count(DISTINCT item) FROM batch_items"), ==, ITEMS);
    g_assert_cmpint(query_int(user_cat, "SELECT count(*) FROM runs WHERE status = 'done'"), ==,
                    ITEMS);
}

/* Ctrl-C (SIGINT) stops a task after the items in progress: exit 130, those items in the shard,
 * and a rerun runs only the rest; the merge then holds every item once. */
static void test_interrupted_task_resumes(void)
{
    enum { ITEMS = 12 };
    g_autofree char *run = plan_copies("many-int", "run-int", ITEMS);
    g_autofree char *cat = cli_test_tmp_path("cat-int");
    cli_result r;
    int out_fd = -1;
    GPid pid = start_run_past_first_item(run, &out_fd);
    kill(pid, SIGINT);
    char c;
    GString *rest = g_string_new(NULL);
    while (read(out_fd, &c, 1) == 1)
        g_string_append_c(rest, c);
    int status = 0;
    g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
    g_spawn_close_pid(pid);
    close(out_fd);
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 130);
    g_string_free(rest, TRUE);
    g_autofree char *shard = run_dir_path("run-int", "shards/task-0-of-1");
    g_assert_true(g_file_test(shard, G_FILE_TEST_IS_DIR));
    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    int first = query_int(cat, "SELECT count(*) FROM batch_items");
    cli_result_clear(&r);
    g_test_message("items done before the interrupt took effect: %d of %d", first, ITEMS);
    g_assert_cmpint(first, >=, 1);
    g_assert_cmpint(first, <, ITEMS);

    r = cli_test_run(NULL, NULL, "batch", "run", run, "--backend=cpu", NULL);
    must_run("rerun", &r);
    cli_result_clear(&r);
    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    must_run("merge", &r);
    g_assert_nonnull(strstr(r.out, "missing tasks: none"));
    cli_result_clear(&r);
    g_assert_cmpint(query_int(cat, "SELECT count(DISTINCT item) FROM batch_items"), ==, ITEMS);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM batch_items"), ==, ITEMS);
}

/* Slurm's --array form of the missing tasks: ranges, and exit 1. */
static void test_missing_tasks_array_form(void)
{
    g_autofree char *run = cli_test_tmp_path("run-six");
    g_autofree char *cat = cli_test_tmp_path("cat-missing");
    cli_result r =
        cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, "--ntasks", "6", NULL);
    /* six tasks of one item each: none was run as such, but shards of 3 tasks hold every item */
    must_run("merge --ntasks 6", &r);
    cli_result_clear(&r);
    g_autofree char *gone = run_dir_path("run-six", "shards/task-1-of-3");
    g_autofree char *moved = run_dir_path("run-six", "shards/.task-1-of-3.partial");
    g_assert_cmpint(g_rename(gone, moved), ==, 0);
    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, "--ntasks", "6", NULL);
    g_assert_cmpint(r.status, ==, 1);
    g_assert_nonnull(strstr(r.out, "missing tasks: 1,4 "));
    cli_result_clear(&r);
    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    g_assert_cmpint(r.status, ==, 1);
    g_assert_nonnull(strstr(r.out, "missing tasks: 1 (of 3; 2 items)"));
    cli_result_clear(&r);
    g_assert_cmpint(g_rename(moved, gone), ==, 0);
}

/* The truncated input mended: --retry-failed runs task 2's failed item again into a retry shard,
 * and the merge puts its done run in place of the failed one. */
static void test_retry_failed(void)
{
    g_autofree char *run = cli_test_tmp_path("run-six");
    g_autofree char *cat = cli_test_tmp_path("cat-six");
    g_autofree char *good = cli_test_tmp_path("flim2.sdt");
    g_autofree char *mended = cli_test_tmp_path("flim-truncated.sdt");
    g_autofree char *bytes = NULL;
    gsize n = 0;
    g_assert_true(g_file_get_contents(good, &bytes, &n, NULL));
    g_assert_true(g_file_set_contents(mended, bytes, (gssize)n, NULL));

    cli_result r = cli_test_run(NULL, NULL, "batch", "run", run, "--task", "2", "--ntasks", "3",
                                "--backend=cpu", NULL);
    must_run("rerun without --retry-failed", &r);
    g_assert_nonnull(strstr(r.out, "\"was_complete\":true,\"retry\":0,\"items\":2,\"done\":1,"
                                   "\"failed\":1"));
    cli_result_clear(&r);
    r = cli_test_run(NULL, NULL, "batch", "run", run, "--task", "2", "--ntasks", "3",
                     "--backend=cpu", "--retry-failed", NULL);
    must_run("--retry-failed", &r);
    g_assert_nonnull(strstr(r.out, "\"index\":5,"));
    g_assert_nonnull(strstr(r.out, "\"retry\":1,\"items\":1,\"done\":1,\"failed\":0"));
    cli_result_clear(&r);
    g_autofree char *retry_shard = run_dir_path("run-six", "shards/task-2-of-3.r1");
    g_assert_true(g_file_test(retry_shard, G_FILE_TEST_IS_DIR));
    /* nothing failed now: a second retry runs nothing */
    r = cli_test_run(NULL, NULL, "batch", "run", run, "--task", "2", "--ntasks", "3",
                     "--backend=cpu", "--retry-failed", NULL);
    must_run("second --retry-failed", &r);
    g_assert_nonnull(strstr(r.out, "\"was_complete\":true"));
    cli_result_clear(&r);

    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    must_run("merge", &r);
    g_assert_nonnull(strstr(r.out, "0 runs added, 1 replaced, 6 there already"));
    g_assert_null(strstr(r.out, "failed items"));
    cli_result_clear(&r);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM batch_items"), ==, 6);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM runs"), ==, 6);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM runs WHERE status = 'done'"), ==, 6);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM outputs o JOIN batch_items b ON"
                                   " b.run_id = o.run_id WHERE b.item = 5"),
                    ==, 4);
    g_autofree char *before = dump_catalogue(cat);
    r = cli_test_run(NULL, NULL, "batch", "merge", run, "--catalogue", cat, NULL);
    must_run("merge again", &r);
    cli_result_clear(&r);
    g_autofree char *after = dump_catalogue(cat);
    g_assert_cmpstr(after, ==, before);
}

/* One command turns files into catalogued maps: plan, run and merge. Options of a Slurm
 * submission without --slurm are refused before anything is written; with --slurm --dry-run it
 * plans and prints the job scripts. */
static void test_one_command(void)
{
    g_autofree char *cat = cli_test_tmp_path("one-command-catalogue");
    g_autofree char *run = cli_test_tmp_path("run-one");
    g_autofree char *a = cli_test_tmp_path("lsi1.tif"), *b = cli_test_tmp_path("lsi2.tif");
    cli_result r = cli_test_run(NULL, NULL, "batch", "-o", run, "lsi.spatial", "--window=7", a, b,
                                "--catalogue", cat, "--backend=cpu", NULL);
    must_run("batch -o RUN lsi.spatial", &r);
    g_assert_nonnull(strstr(r.out, "planned 2 items"));
    g_assert_nonnull(strstr(r.out, "2 runs added"));
    g_assert_null(strstr(r.out, "run: fluxmap-cli batch run")); /* no next step to suggest */
    cli_result_clear(&r);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM batch_items b JOIN runs r ON"
                                   " r.id = b.run_id WHERE r.status = 'done'"
                                   " AND r.params_json LIKE '%\"window\":7%'"),
                    ==, 2);
    g_assert_cmpint(query_int(cat, "SELECT count(*) FROM outputs"), ==, 4); /* K and SFI each */

    g_autofree char *refused = cli_test_tmp_path("run-refused");
    r = cli_test_run(NULL, NULL, "batch", "-o", refused, "lsi.spatial", a, "--gpus-per-task", "1",
                     NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "--gpus-per-task is for a Slurm submission"));
    g_assert_false(g_file_test(refused, G_FILE_TEST_EXISTS));
    cli_result_clear(&r);

    g_autofree char *slurm = cli_test_tmp_path("run-slurm");
    r = cli_test_run(NULL, NULL, "batch", "-o", slurm, "lsi.spatial", a, b, "--slurm", "--dry-run",
                     "--array-limit", "1", NULL);
    must_run("batch --slurm --dry-run", &r);
    g_assert_nonnull(strstr(r.out, "#SBATCH --array=0-1%1"));
    g_assert_nonnull(strstr(r.out, "batch merge"));
    cli_result_clear(&r);

    r = cli_test_run(NULL, NULL, "batch", "frobnicate", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "unknown command 'frobnicate'"));
    cli_result_clear(&r);
}

/* The spin count libgomp took from its environment in the last process of a run, as
 * OMP_DISPLAY_ENV=verbose prints it ("GOMP_SPINCOUNT = '0'"), or -1. */
static long last_spin_count(const char *err)
{
    long count = -1;
    for (const char *at = err; (at = strstr(at, "GOMP_SPINCOUNT = '")) != NULL; at++)
        count = strtol(at + strlen("GOMP_SPINCOUNT = '"), NULL, 10);
    return count;
}

/* batch run's OpenMP threads sleep when idle (spin count 0) unless the user set a policy;
 * other commands keep libgomp's default (300000 spins). */
static void test_idle_threads_sleep(void)
{
    g_autofree char *run = cli_test_tmp_path("run-omp");
    g_autofree char *flim = cli_test_tmp_path("flim1.sdt");
    cli_result r = cli_test_run(NULL, NULL, "batch", "plan", "-o", run, "flim.iem", flim, NULL);
    must_run("plan", &r);
    cli_result_clear(&r);
    g_auto(GStrv) env = g_environ_unsetenv(g_get_environ(), "OMP_WAIT_POLICY");
    env = g_environ_setenv(env, "OMP_DISPLAY_ENV", "verbose", TRUE);
    r = cli_test_run(NULL, env, "batch", "run", run, "--backend=cpu", "--json", NULL);
    must_run("batch run", &r);
    g_assert_cmpint(last_spin_count(r.err), ==, 0);
    g_assert_nonnull(strstr(r.out, "\"done\":1"));
    cli_result_clear(&r);

    r = cli_test_run(NULL, env, "info", flim, NULL);
    must_run("info", &r);
    g_assert_cmpint(last_spin_count(r.err), ==, 300000);
    cli_result_clear(&r);

    /* the user's own policy stays */
    g_auto(GStrv) active = g_environ_setenv(g_strdupv(env), "OMP_WAIT_POLICY", "active", TRUE);
    r = cli_test_run(NULL, active, "batch", "run", run, "--backend=cpu", NULL);
    must_run("batch run, active", &r);
    g_assert_cmpint(last_spin_count(r.err), >, 300000); /* active: more than the default */
    cli_result_clear(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-batch-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_autofree char *data_dir = g_build_filename(tmp_dir, "data", NULL);
    g_setenv("FLUXMAP_DATA_DIR", data_dir, TRUE); /* never the user's catalogue */
    for (int i = 1; i <= 3; i++) {
        g_autofree char *name = g_strdup_printf("lsi%d.tif", i);
        simulate("lsi", name, "--width=64 --height=48 --frames=8");
    }
    simulate("flim", "flim1.sdt", "--width=32 --height=32 --bins=64");
    simulate("flim", "flim2.sdt", "--width=32 --height=32 --bins=64");
    simulate("flim", "flim-truncated.sdt", "--width=32 --height=32 --bins=64");
    truncate_file("flim-truncated.sdt", 2048);
    simulate("flim", "flim-big.sdt", "--width=128 --height=128 --bins=128");
    g_test_add_func("/cli/batch/plan-rejects-bad-rows", test_plan_rejects_bad_rows);
    g_test_add_func("/cli/batch/three-tasks-one-failure", test_three_tasks_one_failure);
    g_test_add_func("/cli/batch/missing-tasks-array-form", test_missing_tasks_array_form);
    g_test_add_func("/cli/batch/retry-failed", test_retry_failed);
    g_test_add_func("/cli/batch/killed-task-redone", test_killed_task_redone);
    g_test_add_func("/cli/batch/interrupted-task-resumes", test_interrupted_task_resumes);
    g_test_add_func("/cli/batch/idle-threads-sleep", test_idle_threads_sleep);
    g_test_add_func("/cli/batch/one-command", test_one_command);
    return cli_test_finish(g_test_run());
}
