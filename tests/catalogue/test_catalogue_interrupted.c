/* Interrupted runs: a child process begins a run, writes a partial map and is killed with
 * SIGKILL; the next open of the catalogue finds that run "interrupted" with no files, while the
 * runs of a live child and of this process stay "running"; `fluxmap-cli catalogue list` shows
 * both. Also the owner checks themselves (pid reuse, reboot, another host). */
#include <glib.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/core/catalogue.h"
#include "app/core/process_owner.h"
#include "tests/test-tree.h"

static char *self_path;

static char *run_folder(const char *dir, gint64 id)
{
    g_autofree char *name = g_strdup_printf("%" G_GINT64_FORMAT, id);
    return g_build_filename(dir, "runs", name, NULL);
}

/* The child: begins a run, leaves what a map being written leaves (runs/<id>/ka.tif.part),
 * says its run id on stdout and waits to be killed. */
static int child_main(const char *dir)
{
    g_autoptr(GError) error = NULL;
    fm_catalogue *cat = fm_catalogue_open(dir, &error);
    gint64 id = cat ? fm_catalogue_begin_run(cat, NULL, "lsi.temporal", "{}", NULL, &error) : 0;
    if (id <= 0) {
        g_printerr("child: %s\n", error ? error->message : "?");
        return 1;
    }
    g_autofree char *folder = run_folder(dir, id);
    g_autofree char *part = g_build_filename(folder, "ka.tif.part", NULL);
    if (g_mkdir_with_parents(folder, 0755) != 0 ||
        !g_file_set_contents(part, "II*\0 half a map", 15, NULL))
        return 1;
    printf("%" G_GINT64_FORMAT "\n", id);
    fflush(stdout);
    for (;;)
        pause();
}

typedef struct {
    GPid pid;
    gint64 run_id;
} child;

static child start_child(const char *dir)
{
    char *argv[] = {self_path, "--begin-run", (char *)dir, NULL};
    child c = {0};
    int out = -1;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_async_with_pipes(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                           &c.pid, NULL, &out, NULL, &error));
    g_assert_no_error(error);
    FILE *f = fdopen(out, "r");
    char line[64] = {0};
    g_assert_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    c.run_id = g_ascii_strtoll(line, NULL, 10);
    g_assert_cmpint(c.run_id, >, 0);
    return c;
}

static void kill_child(child *c)
{
    g_assert_cmpint(kill(c->pid, SIGKILL), ==, 0);
    int status = 0;
    g_assert_cmpint(waitpid(c->pid, &status, 0), ==, c->pid);
    g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    g_spawn_close_pid(c->pid);
}

static fm_run_status status_of(fm_catalogue *cat, gint64 id, char **message)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue_run) run = fm_catalogue_get_run(cat, id, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(run->outputs ? run->outputs->len : 0, ==, 0);
    if (message != NULL)
        *message = g_strdup(run->error_message);
    return run->status;
}

/* `fluxmap-cli catalogue list` on dir, when the CLI is there ($FLUXMAP_CLI). */
static char *cli_list(const char *dir)
{
    const char *cli = g_getenv("FLUXMAP_CLI");
    if (cli == NULL)
        return NULL;
    char *argv[] = {(char *)cli, "catalogue", "list", NULL};
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "FLUXMAP_DATA_DIR", dir, TRUE);
    char *out = NULL;
    int status = -1;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, argv, env, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL,
                               &status, &error));
    g_assert_no_error(error);
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    return out;
}

static void test_killed_run(void)
{
    g_autofree char *dir = g_dir_make_tmp("fluxmap-interrupted-XXXXXX", NULL);
    child doomed = start_child(dir), living = start_child(dir);
    /* and a run of this very process, still going */
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) mine = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    gint64 my_run = fm_catalogue_begin_run(mine, NULL, "flim.lsm", "{}", NULL, &error);
    g_assert_cmpint(my_run, >, 0);

    kill_child(&doomed);
    g_autofree char *doomed_folder = run_folder(dir, doomed.run_id);
    g_autofree char *living_folder = run_folder(dir, living.run_id);
    g_assert_true(g_file_test(doomed_folder, G_FILE_TEST_IS_DIR)); /* until the catalogue opens */

    int n = -1;
    g_assert_true(fm_catalogue_recover_interrupted(mine, &n, &error)); /* what opening does */
    g_assert_cmpint(n, ==, 1);
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    g_autofree char *message = NULL;
    g_assert_cmpint(status_of(cat, doomed.run_id, &message), ==, FM_RUN_INTERRUPTED);
    g_autofree char *pid_text = g_strdup_printf("pid %d", (int)doomed.pid);
    g_assert_nonnull(strstr(message, pid_text));
    g_assert_false(g_file_test(doomed_folder, G_FILE_TEST_EXISTS));
    g_assert_cmpint(status_of(cat, living.run_id, NULL), ==, FM_RUN_RUNNING);
    g_assert_true(g_file_test(living_folder, G_FILE_TEST_IS_DIR));
    g_assert_cmpint(status_of(cat, my_run, NULL), ==, FM_RUN_RUNNING);
    g_assert_cmpstr(fm_run_status_name(FM_RUN_INTERRUPTED), ==, "interrupted");

    /* The interrupted run can be neither finished nor aborted back into another state. */
    fm_result *result = fm_result_new("lsi.temporal");
    g_assert_false(fm_catalogue_finish_run(cat, doomed.run_id, result, &error));
    g_clear_error(&error);
    fm_result_free(result);
    g_assert_cmpint(status_of(cat, doomed.run_id, NULL), ==, FM_RUN_INTERRUPTED);

    g_autofree char *listed = cli_list(dir);
    if (listed != NULL) {
        g_assert_nonnull(strstr(listed, "interrupted"));
        g_assert_nonnull(strstr(listed, "running"));
    }

    /* The live child dies too: the next open finds it. This process's run stays. */
    kill_child(&living);
    g_autoptr(fm_catalogue) again = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(status_of(again, living.run_id, NULL), ==, FM_RUN_INTERRUPTED);
    g_assert_false(g_file_test(living_folder, G_FILE_TEST_EXISTS));
    g_assert_cmpint(status_of(again, my_run, NULL), ==, FM_RUN_RUNNING);
    fm_test_remove_tree(dir);
}

static gboolean running_run(const char *dir, gint64 *id)
{
    g_autofree char *db_path = g_build_filename(dir, "catalogue.db", NULL);
    if (!g_file_test(db_path, G_FILE_TEST_EXISTS))
        return FALSE;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    gboolean found = FALSE;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT id FROM runs WHERE status = 'running'", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        found = TRUE;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return found;
}

/* The real thing: `fluxmap-cli run` killed while it fits a DCE phantom. */
static void test_killed_cli(void)
{
    const char *cli = g_getenv("FLUXMAP_CLI");
    if (cli == NULL) {
        g_test_skip("FLUXMAP_CLI not set");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("fluxmap-killed-cli-XXXXXX", NULL);
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "FLUXMAP_DATA_DIR", dir, TRUE);
    g_autoptr(GError) error = NULL;
    int status = -1;
    char *simulate[] = {(char *)cli,  "simulate",    "dce", "--width=64", "--height=64",
                        "--slices=4", "--frames=48", "-o",  "liver.nii",  NULL};
    g_assert_true(g_spawn_sync(dir, simulate, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                               NULL, &status, &error));
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    char *run[] = {(char *)cli,
                   "run",
                   "dce.dual_input",
                   "liver.nii",
                   "--roi",
                   "liver.rois.json",
                   "--backend=cpu",
                   "-o",
                   "out",
                   NULL};
    GPid pid = 0;
    g_assert_true(g_spawn_async(dir, run, env,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                                    G_SPAWN_STDERR_TO_DEV_NULL,
                                NULL, NULL, &pid, &error));
    gint64 id = 0;
    gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    while (!running_run(dir, &id) && g_get_monotonic_time() < deadline)
        g_usleep(2000);
    g_assert_cmpint(id, >, 0); /* recorded as running, now fitting */
    g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
    int wait_status = 0;
    g_assert_cmpint(waitpid(pid, &wait_status, 0), ==, pid);
    g_spawn_close_pid(pid);
    if (!WIFSIGNALED(wait_status)) { /* it finished before the kill: nothing to recover */
        g_test_skip("the run ended before it could be killed");
        fm_test_remove_tree(dir);
        return;
    }
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(status_of(cat, id, NULL), ==, FM_RUN_INTERRUPTED);
    g_autofree char *folder = run_folder(dir, id);
    g_assert_false(g_file_test(folder, G_FILE_TEST_EXISTS));
    g_autofree char *listed = cli_list(dir);
    g_assert_nonnull(strstr(listed, "interrupted"));
    fm_test_remove_tree(dir);
}

static void test_owner_states(void)
{
    g_auto(fm_process_owner) me = {0};
    g_assert_true(fm_process_owner_self(&me));
    g_assert_cmpint(me.pid, ==, getpid());
    g_assert_cmpuint(me.start_ticks, >, 0);
    g_assert_cmpint(fm_process_owner_state(&me), ==, FM_OWNER_ALIVE);
    /* the same pid started at another time: a newer process took the pid */
    fm_process_owner reused = me;
    reused.start_ticks = me.start_ticks + 1;
    g_assert_cmpint(fm_process_owner_state(&reused), ==, FM_OWNER_GONE);
    /* another boot of this machine */
    fm_process_owner rebooted = me;
    rebooted.boot_id = "00000000-0000-0000-0000-000000000000";
    g_assert_cmpint(fm_process_owner_state(&rebooted), ==, FM_OWNER_GONE);
    /* another machine, another sandbox, nothing recorded: left alone */
    fm_process_owner remote = me;
    remote.host = "some-other-host.invalid";
    g_assert_cmpint(fm_process_owner_state(&remote), ==, FM_OWNER_UNKNOWN);
    fm_process_owner sandboxed = me;
    sandboxed.pid_ns = "pid:[1]";
    g_assert_cmpint(fm_process_owner_state(&sandboxed), ==, FM_OWNER_UNKNOWN);
    fm_process_owner nothing = {0};
    g_assert_cmpint(fm_process_owner_state(&nothing), ==, FM_OWNER_UNKNOWN);
}

/* A run recorded before owners were (schema 1: owner columns NULL) is never taken for dead. */
static void test_legacy_run_left_alone(void)
{
    g_autofree char *dir = g_dir_make_tmp("fluxmap-legacy-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(fm_catalogue) cat = fm_catalogue_open(dir, &error);
    gint64 id = fm_catalogue_begin_run(cat, NULL, "lsi.temporal", "{}", NULL, &error);
    g_assert_cmpint(id, >, 0);
    fm_catalogue_close(g_steal_pointer(&cat));
    g_autofree char *db_path = g_build_filename(dir, "catalogue.db", NULL);
    sqlite3 *db = NULL;
    g_assert_cmpint(sqlite3_open(db_path, &db), ==, SQLITE_OK);
    g_assert_cmpint(
        sqlite3_exec(db, "UPDATE runs SET owner_pid = NULL, owner_host = NULL", NULL, NULL, NULL),
        ==, SQLITE_OK);
    sqlite3_close(db);
    cat = fm_catalogue_open(dir, &error);
    g_assert_no_error(error);
    g_assert_cmpint(status_of(cat, id, NULL), ==, FM_RUN_RUNNING);
    fm_catalogue_close(g_steal_pointer(&cat));
    fm_test_remove_tree(dir);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--begin-run") == 0)
        return child_main(argv[2]);
    g_test_init(&argc, &argv, NULL);
    self_path = g_canonicalize_filename(argv[0], NULL);
    g_test_add_func("/catalogue-interrupted/killed-run", test_killed_run);
    g_test_add_func("/catalogue-interrupted/killed-cli", test_killed_cli);
    g_test_add_func("/catalogue-interrupted/owner-states", test_owner_states);
    g_test_add_func("/catalogue-interrupted/legacy-run-left-alone", test_legacy_run_left_alone);
    return g_test_run();
}
