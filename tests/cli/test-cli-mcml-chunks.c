/* fluxmap-cli mcml run --chunks / mcml merge ($FLUXMAP_CLI): 4 chunks run as 4 concurrent tasks,
 * as 1 task, on 1 and 2 OpenMP threads give the same raw tallies (memcmp) and the same .mco and
 * maps; the merge equals one unchunked run of the same photons; a chunk left half-written by a
 * killed task, or damaged, is reported missing and redone by a rerun; the merge is recorded in
 * the catalogue; chunks of another run and bad chunk options are refused. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/cli/cli-test-util.h"

#define PHOTONS "20000"
#define CHUNKS "4"

static char **cli_env(int threads)
{
    char **env = g_new0(char *, 3);
    env[0] = g_strdup_printf("FLUXMAP_DATA_DIR=%s/catalogue", tmp_dir);
    env[1] = g_strdup_printf("OMP_NUM_THREADS=%d", threads);
    return env;
}

/* Runs the CLI on `threads` OpenMP threads; exit status, stdout and stderr in *r. */
static int run_cli(cli_result *r, int threads, ...)
{
    g_auto(GStrv) env = cli_env(threads);
    va_list ap;
    va_start(ap, threads);
    const char *first = va_arg(ap, const char *);
    *r = cli_test_runv(NULL, env, first, ap);
    va_end(ap);
    if (r->status != 0)
        g_printerr("exit %d\nstdout: %s\nstderr: %s\n", r->status, r->out, r->err);
    return r->status;
}

/* mcml run of the sample preset's chunks into dir, with extra options (NULL-terminated). */
static int run_chunks(const char *dir, int threads, const char *o1, const char *o2, const char *o3,
                      const char *o4)
{
    cli_result r;
    int status =
        run_cli(&r, threads, "mcml", "run", "--preset", "mcml_sample", "--photons", PHOTONS,
                "--chunks", CHUNKS, "--backend=cpu", "-o", dir, o1, o2, o3, o4, NULL);
    cli_result_clear(&r);
    return status;
}

static char *merge(const char *dir, const char *name)
{
    char *mco = cli_test_tmp_path(name);
    cli_result r;
    g_assert_cmpint(run_cli(&r, 2, "mcml", "merge", dir, "-o", mco, NULL), ==, 0);
    cli_result_clear(&r);
    return mco;
}

/* A file's bytes with the "# User time" line (the simulation's wall time) taken out. */
static char *mco_without_time(const char *path)
{
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GString *s = g_string_new(NULL);
    for (int i = 0; lines[i]; i++)
        if (!g_str_has_prefix(lines[i], "# User time"))
            g_string_append_printf(s, "%s\n", lines[i]);
    return g_string_free(s, FALSE);
}

static void assert_same_file(const char *a, const char *b)
{
    g_autofree char *ta = NULL, *tb = NULL;
    gsize la = 0, lb = 0;
    g_assert_true(g_file_get_contents(a, &ta, &la, NULL));
    g_assert_true(g_file_get_contents(b, &tb, &lb, NULL));
    g_assert_cmpuint(la, ==, lb);
    g_assert_true(memcmp(ta, tb, la) == 0);
}

static void assert_same_outputs(const char *mco_a, const char *mco_b)
{
    g_autofree char *ta = mco_without_time(mco_a), *tb = mco_without_time(mco_b);
    g_assert_cmpstr(ta, ==, tb);
    g_autofree char *stem_a = g_strndup(mco_a, strlen(mco_a) - 4);
    g_autofree char *stem_b = g_strndup(mco_b, strlen(mco_b) - 4);
    const char *maps[] = {"-a_rz.tif", "-fluence_rz.tif"};
    for (int i = 0; i < 2; i++) {
        g_autofree char *a = g_strconcat(stem_a, maps[i], NULL);
        g_autofree char *b = g_strconcat(stem_b, maps[i], NULL);
        assert_same_file(a, b);
    }
}

/* The raw tallies of a chunk file: the bytes after its header (whose size is at offset 12);
 * the header's time and device differ from run to run, the tallies must not. */
static GBytes *chunk_tallies(const char *dir, int chunk)
{
    g_autofree char *name = g_strdup_printf("chunk-%06d.mcchunk", chunk);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(path, &data, &len, NULL));
    uint32_t header = 0;
    g_assert_cmpuint(len, >, 16);
    memcpy(&header, data + 12, sizeof header);
    g_assert_cmpuint(header, <, len);
    GBytes *tallies = g_bytes_new(data + header, len - header);
    g_free(data);
    return tallies;
}

static void assert_same_tallies(const char *dir_a, const char *dir_b)
{
    for (int c = 0; c < 4; c++) {
        g_autoptr(GBytes) a = chunk_tallies(dir_a, c), b = chunk_tallies(dir_b, c);
        g_assert_cmpuint(g_bytes_get_size(a), ==, g_bytes_get_size(b));
        g_assert_true(
            memcmp(g_bytes_get_data(a, NULL), g_bytes_get_data(b, NULL), g_bytes_get_size(a)) == 0);
    }
}

/* Rd, A and their standard errors from a .mco's RAT line... via the merge's --json. */
static void totals(const char *dir, double *rd, double *rd_se, double *a, double *a_se)
{
    g_autofree char *mco = cli_test_tmp_path("totals.mco");
    cli_result r;
    g_assert_cmpint(run_cli(&r, 2, "mcml", "merge", dir, "-o", mco, "--json", NULL), ==, 0);
    JsonParser *parser = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &parser);
    *rd = json_object_get_double_member(o, "rd");
    *rd_se = json_object_get_double_member(o, "rd_se");
    *a = json_object_get_double_member(o, "a");
    *a_se = json_object_get_double_member(o, "a_se");
    g_object_unref(parser);
    cli_result_clear(&r);
}

static char *reference_dir; /* 4 chunks, 1 task, 1 thread */
static char *reference_mco;

static void test_reference(void)
{
    reference_dir = cli_test_tmp_path("one-task-one-thread");
    g_assert_cmpint(run_chunks(reference_dir, 1, NULL, NULL, NULL, NULL), ==, 0);
    reference_mco = merge(reference_dir, "one-task-one-thread.mco");
}

static void test_one_task_two_threads(void)
{
    g_autofree char *dir = cli_test_tmp_path("one-task-two-threads");
    g_assert_cmpint(run_chunks(dir, 2, NULL, NULL, NULL, NULL), ==, 0);
    assert_same_tallies(reference_dir, dir);
    g_autofree char *mco = merge(dir, "one-task-two-threads.mco");
    assert_same_outputs(reference_mco, mco);
}

/* Four processes at once, each with its share (--task I --ntasks 4), on 2 threads each. */
static void test_four_tasks(void)
{
    g_autofree char *dir = cli_test_tmp_path("four-tasks");
    g_auto(GStrv) env = cli_env(2);
    GPid pids[4];
    for (int i = 0; i < 4; i++) {
        g_autofree char *task = g_strdup_printf("%d", i);
        const char *argv[] = {cli_path,    "mcml",  "run",      "--preset", "mcml_sample",
                              "--photons", PHOTONS, "--chunks", CHUNKS,     "--backend=cpu",
                              "--task",    task,    "--ntasks", "4",        "-o",
                              dir,         NULL};
        g_autoptr(GError) error = NULL;
        g_assert_true(g_spawn_async(NULL, (char **)argv, env,
                                    G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                    NULL, &pids[i], &error));
    }
    for (int i = 0; i < 4; i++) {
        int status = 0;
        g_assert_cmpint(waitpid(pids[i], &status, 0), ==, pids[i]);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        g_spawn_close_pid(pids[i]);
    }
    assert_same_tallies(reference_dir, dir);
    g_autofree char *mco = merge(dir, "four-tasks.mco");
    assert_same_outputs(reference_mco, mco);
}

/* Photon i draws from Philox(seed, i) whichever chunk holds it and the tallies are integers, so
 * the merge equals one run of the same photons exactly (tolerance 0, the .mco's user time
 * aside). Against a run of another seed, Rd and A agree within 4 combined standard errors (the
 * chance of a false alarm is 6e-5 per quantity for independent estimates; the seeds are fixed,
 * so the test is deterministic). */
static void test_equals_unchunked_run(void)
{
    g_autofree char *single = cli_test_tmp_path("single.mco");
    cli_result r;
    g_assert_cmpint(run_cli(&r, 2, "mcml", "run", "--preset", "mcml_sample", "--photons", PHOTONS,
                            "--backend=cpu", "--no-catalogue", "-o", single, NULL),
                    ==, 0);
    cli_result_clear(&r);
    assert_same_outputs(reference_mco, single);

    g_autofree char *other = cli_test_tmp_path("seed-7");
    cli_result r7;
    g_assert_cmpint(run_cli(&r7, 2, "mcml", "run", "--preset", "mcml_sample", "--photons", PHOTONS,
                            "--seed", "7", "--chunks", "3", "--backend=cpu", "-o", other, NULL),
                    ==, 0);
    cli_result_clear(&r7);
    double rd1, se1, a1, ase1, rd2, se2, a2, ase2;
    totals(reference_dir, &rd1, &se1, &a1, &ase1);
    totals(other, &rd2, &se2, &a2, &ase2);
    g_assert_cmpfloat(rd1, !=, rd2); /* another seed: other photons */
    g_assert_cmpfloat(fabs(rd1 - rd2), <, 4.0 * sqrt(se1 * se1 + se2 * se2));
    g_assert_cmpfloat(fabs(a1 - a2), <, 4.0 * sqrt(ase1 * ase1 + ase2 * ase2));
}

/* The merge is recorded in the catalogue as the one run of all the photons that it equals:
 * mcml.run with the chunks' input, photons and seed, done, with its maps; --no-catalogue
 * records nothing. */
static void test_merge_catalogued(void)
{
    g_autofree char *mco = cli_test_tmp_path("catalogued.mco");
    cli_result r;
    g_assert_cmpint(run_cli(&r, 2, "mcml", "merge", reference_dir, "-o", mco, "--json", NULL), ==,
                    0);
    JsonParser *parser = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &parser);
    gint64 run_id = json_object_get_int_member(o, "run_id");
    g_object_unref(parser);
    cli_result_clear(&r);
    g_assert_cmpint(run_id, >, 0);
    g_autofree char *id = g_strdup_printf("%" G_GINT64_FORMAT, run_id);
    g_assert_cmpint(run_cli(&r, 2, "catalogue", "show", id, "--json", NULL), ==, 0);
    o = cli_test_parse_object(r.out, &parser);
    g_assert_cmpstr(json_object_get_string_member(o, "status"), ==, "done");
    g_assert_cmpstr(json_object_get_string_member(o, "method"), ==, "mcml.run");
    JsonObject *params = json_object_get_object_member(o, "params");
    g_assert_cmpint(json_object_get_int_member(params, "photons"), ==, atoi(PHOTONS));
    g_assert_cmpstr(json_object_get_string_member(params, "preset"), ==, "mcml_sample");
    g_assert_cmpint(json_object_get_int_member(params, "seed"), ==, 1);
    JsonArray *outputs = json_object_get_array_member(o, "outputs");
    g_assert_cmpuint(json_array_get_length(outputs), >=, 2); /* A[r][z] and fluence at least */
    g_object_unref(parser);
    cli_result_clear(&r);

    g_autofree char *quiet = cli_test_tmp_path("not-catalogued.mco");
    g_assert_cmpint(run_cli(&r, 2, "mcml", "merge", reference_dir, "-o", quiet, "--json",
                            "--no-catalogue", NULL),
                    ==, 0);
    o = cli_test_parse_object(r.out, &parser);
    g_assert_true(json_object_get_null_member(o, "run_id"));
    g_object_unref(parser);
    cli_result_clear(&r);
}

static void copy_file(const char *from, const char *to, gsize keep)
{
    g_autofree char *data = NULL;
    gsize len = 0;
    g_assert_true(g_file_get_contents(from, &data, &len, NULL));
    g_assert_true(g_file_set_contents(to, data, keep < len ? keep : len, NULL));
}

/* A task killed while writing chunk 1 leaves only its partial file (chunk files appear by rename
 * when complete); chunk 2's file is cut short in place (a damaged copy). The merge leaves both
 * out, names them in Slurm's --array form and fails; a rerun of the task runs just those two and
 * the merge then equals the reference. */
static void test_killed_chunk_redone(void)
{
    g_autofree char *dir = cli_test_tmp_path("killed");
    g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
    for (int c = 0; c < 4; c++) {
        g_autofree char *name = g_strdup_printf("chunk-%06d.mcchunk", c);
        g_autofree char *from = g_build_filename(reference_dir, name, NULL);
        g_autofree char *to = g_build_filename(dir, name, NULL);
        g_autofree char *partial_name = g_strdup_printf(".%s.partial-99999", name);
        g_autofree char *partial = g_build_filename(dir, partial_name, NULL);
        if (c == 1)
            copy_file(from, partial, 9000);
        else
            copy_file(from, to, c == 2 ? 9000 : G_MAXSIZE);
    }
    g_autofree char *mco = cli_test_tmp_path("killed.mco");
    cli_result r;
    g_assert_cmpint(run_cli(&r, 2, "mcml", "merge", dir, "-o", mco, NULL), ==, 3);
    g_assert_nonnull(strstr(r.out, "missing: 1-2"));
    g_assert_nonnull(strstr(r.err, "chunk-000002.mcchunk: 9000 bytes where a complete chunk"));
    g_assert_false(g_file_test(mco, G_FILE_TEST_EXISTS));
    cli_result_clear(&r);

    g_assert_cmpint(run_cli(&r, 1, "mcml", "run", "--preset", "mcml_sample", "--photons", PHOTONS,
                            "--chunks", CHUNKS, "--backend=cpu", "--json", "-o", dir, NULL),
                    ==, 0);
    JsonParser *parser = NULL;
    JsonObject *o = cli_test_parse_object(r.out, &parser);
    g_assert_cmpstr(json_object_get_string_member(o, "ran"), ==, "1-2");
    g_assert_cmpstr(json_object_get_string_member(o, "done_before"), ==, "0,3");
    g_object_unref(parser);
    cli_result_clear(&r);
    g_autofree char *redone = merge(dir, "redone.mco");
    assert_same_outputs(reference_mco, redone);
    assert_same_tallies(reference_dir, dir);
}

static void expect_fail(int code, const char *needle, const char *dir, const char *o1,
                        const char *o2, const char *o3, const char *o4)
{
    cli_result r;
    g_auto(GStrv) env = cli_env(1);
    r = cli_test_run(NULL, env, "mcml", "run", "--preset", "mcml_sample", "--backend=cpu", "-o",
                     dir, o1, o2, o3, o4, NULL);
    if (r.status != code || !strstr(r.err, needle))
        g_printerr("exit %d, stderr: %s\n", r.status, r.err);
    g_assert_cmpint(r.status, ==, code);
    g_assert_nonnull(strstr(r.err, needle));
    cli_result_clear(&r);
}

static void test_refused(void)
{
    /* the reference folder holds seed 1's chunks: seed 2 must not mix with them */
    expect_fail(3, "belongs to another run", reference_dir, "--photons=" PHOTONS, "--chunks=4",
                "--seed=2", NULL);
    g_autofree char *dir = cli_test_tmp_path("bad");
    expect_fail(2, "not both", dir, "--chunks=4", "--chunk-range=0-1", "--task=0", "--ntasks=2");
    expect_fail(2, "--chunk-range", dir, "--chunks=4", "--chunk-range=2-4", NULL, NULL);
    expect_fail(2, "--task I --ntasks T", dir, "--chunks=4", "--task=4", "--ntasks=4", NULL);
    expect_fail(2, "at least 24 chunks", dir, "--photons=1e11", "--chunks=10", NULL, NULL);
    expect_fail(2, "photons: '12.5' is not an integer", dir, "--photons=12.5", "--chunks=10", NULL,
                NULL);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    if (!cli_test_init("fluxmap-cli-mcml-chunks-XXXXXX")) {
        g_printerr("FLUXMAP_CLI must name the fluxmap-cli binary\n");
        return 1;
    }
    g_test_add_func("/cli-mcml-chunks/reference", test_reference);
    g_test_add_func("/cli-mcml-chunks/one-task-two-threads", test_one_task_two_threads);
    g_test_add_func("/cli-mcml-chunks/four-tasks", test_four_tasks);
    g_test_add_func("/cli-mcml-chunks/equals-unchunked-run", test_equals_unchunked_run);
    g_test_add_func("/cli-mcml-chunks/merge-catalogued", test_merge_catalogued);
    g_test_add_func("/cli-mcml-chunks/killed-chunk-redone", test_killed_chunk_redone);
    g_test_add_func("/cli-mcml-chunks/refused", test_refused);
    int status = g_test_run();
    g_free(reference_dir);
    g_free(reference_mco);
    return cli_test_finish(status);
}
