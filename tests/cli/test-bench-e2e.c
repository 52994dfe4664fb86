/* fluxmap-bench e2e ($FLUXMAP_BENCH) on tiny inputs: exit codes, a first and a warm row for
 * every method of every family with every stage column, and inputs reused from --dir. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *bench_path;
static char *inputs_dir;

/* The workloads and the stage keys of app/core/stages.h, in --profile's order. */
static const char *const methods[] = {"lsi.spatial", "flim.iem",  "flim.phasor",
                                      "flim.lsm",    "oct.bscan", "dce.dual_input"};
static const char *const columns[] = {"method",       "backend", "run",       "total",   "read",
                                      "device_start", "prepare", "upload",    "compute", "download",
                                      "statistics",   "write",   "catalogue", "other",   "kernel"};
#define N_COLUMNS G_N_ELEMENTS(columns)
#define TOTAL_COLUMN 3
#define READ_COLUMN 4

/* Runs fluxmap-bench e2e with the NULL-terminated options; returns the exit status. */
static int run_e2e(char **out, char **err, ...)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)bench_path);
    g_ptr_array_add(argv, "e2e");
    va_list ap;
    va_start(ap, err);
    for (const char *a; (a = va_arg(ap, const char *));)
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                               err, &status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status)); /* a crash is never acceptable */
    return WEXITSTATUS(status);
}

/* The row of method on the CPU for run ("first", "warm"), split on blanks, or NULL. */
static char **find_row(char **lines, const char *method, const char *run)
{
    for (int i = 0; lines[i]; i++) {
        char **tokens = g_strsplit_set(g_strstrip(lines[i]), " ", -1);
        char **kept = g_new0(char *, g_strv_length(tokens) + 1);
        int n = 0;
        for (int t = 0; tokens[t]; t++)
            if (*tokens[t])
                kept[n++] = g_strdup(tokens[t]);
        g_strfreev(tokens);
        if (n >= 3 && strcmp(kept[0], method) == 0 && strcmp(kept[1], "cpu") == 0 &&
            strcmp(kept[2], run) == 0)
            return kept;
        g_strfreev(kept);
    }
    return NULL;
}

static void test_all_families(void)
{
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *dir_option = g_strconcat("--dir=", inputs_dir, NULL);
    int code = run_e2e(&out, &err, "--small", "--backend=cpu", "--family=all", "--reps=2",
                       dir_option, NULL);
    if (code != 0)
        g_printerr("exit %d\nstdout:\n%s\nstderr:\n%s\n", code, out, err);
    g_assert_cmpint(code, ==, 0);

    /* one table per family, each headed by every column */
    g_autoptr(GString) header = g_string_new(columns[0]);
    for (guint c = 1; c < N_COLUMNS; c++)
        g_string_append_printf(header, " %s", columns[c]);
    g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
    int headers = 0;
    for (int i = 0; lines[i]; i++) {
        g_auto(GStrv) words = g_strsplit_set(lines[i], " ", -1);
        g_autoptr(GString) compact = g_string_new(NULL);
        for (int w = 0; words[w]; w++)
            if (*words[w])
                g_string_append_printf(compact, "%s%s", compact->len ? " " : "", words[w]);
        headers += strcmp(compact->str, header->str) == 0;
    }
    g_assert_cmpint(headers, ==, 4);

    for (guint m = 0; m < G_N_ELEMENTS(methods); m++)
        for (int warm = 0; warm < 2; warm++) {
            g_auto(GStrv) row = find_row(lines, methods[m], warm ? "warm" : "first");
            if (!row)
                g_printerr("no %s row for %s in:\n%s\n", warm ? "warm" : "first", methods[m], out);
            g_assert_nonnull(row);
            g_assert_cmpuint(g_strv_length(row), ==, N_COLUMNS);
            for (guint c = TOTAL_COLUMN; c < N_COLUMNS - 1; c++) {
                char *end = NULL;
                double ms = g_ascii_strtod(row[c], &end);
                g_assert_true(end && *end == '\0' && isfinite(ms));
                if (c != N_COLUMNS - 2) /* other = total - stages may round below 0 */
                    g_assert_cmpfloat(ms, >=, 0.0);
            }
            g_assert_cmpfloat(g_ascii_strtod(row[TOTAL_COLUMN], NULL), >, 0.0);
            /* the first run reads the file; a warm run re-uses the open dataset */
            double read_ms = g_ascii_strtod(row[READ_COLUMN], NULL);
            if (warm)
                g_assert_cmpfloat(read_ms, ==, 0.0);
            else
                g_assert_cmpfloat(read_ms, >, 0.0);
        }
    g_assert_null(strstr(out, "failed"));
}

/* Runs after test_all_families: the inputs it simulated are read again, not rewritten. */
static void test_inputs_reused(void)
{
    g_autofree char *out = NULL, *err = NULL;
    g_autofree char *dir_option = g_strconcat("--dir=", inputs_dir, NULL);
    g_assert_cmpint(run_e2e(&out, &err, "--small", "--backend=cpu", "--family=lsi", "--reps=1",
                            dir_option, NULL),
                    ==, 0);
    g_assert_nonnull(strstr(out, "lsi_96x64x3.tif"));
    g_assert_nonnull(strstr(out, "reused"));
    g_assert_null(strstr(out, "flim.iem"));
}

static void test_usage(void)
{
    static const char *const bad[] = {"--backend=gpu", "--family=mcml", "--reps=0", "extra"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *out = NULL, *err = NULL;
        g_assert_cmpint(run_e2e(&out, &err, "--small", bad[i], NULL), ==, 2);
        g_assert_cmpstr(out, ==, "");
        g_assert_nonnull(strstr(err, "fluxmap-bench e2e:"));
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    bench_path = g_getenv("FLUXMAP_BENCH");
    if (!bench_path) {
        g_test_skip("FLUXMAP_BENCH is not set");
        return g_test_run();
    }
    inputs_dir = g_dir_make_tmp("fluxmap-test-e2e-XXXXXX", NULL);
    g_assert_nonnull(inputs_dir);
    g_test_add_func("/bench/e2e/all-families", test_all_families);
    g_test_add_func("/bench/e2e/inputs-reused", test_inputs_reused);
    g_test_add_func("/bench/e2e/usage", test_usage);
    int status = g_test_run();
    /* the inputs folder holds files only */
    GDir *dir = g_dir_open(inputs_dir, 0, NULL);
    for (const char *name; dir && (name = g_dir_read_name(dir));) {
        g_autofree char *path = g_build_filename(inputs_dir, name, NULL);
        g_remove(path);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(inputs_dir);
    g_free(inputs_dir);
    return status;
}
