/* fluxmap-cli simulate dce + run dce.dual_input (path in $FLUXMAP_CLI): files written, maps per
 * slice, missing ROI roles (exit 2, role named), inputs from CSV instead of ROIs. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static char *tmp_dir;
static const char *cli_path;

typedef struct {
    int status;
    char *out, *err;
} cli_result;

static cli_result run_cli(const char *first, ...)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli_path);
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    cli_result r = {0};
    int wait_status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(tmp_dir, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &r.out, &r.err, &wait_status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(wait_status)); /* a crash is never an acceptable answer */
    r.status = WEXITSTATUS(wait_status);
    return r;
}

static void clear(cli_result *r)
{
    g_free(r->out);
    g_free(r->err);
}

static void test_simulate_and_run(void)
{
    cli_result r = run_cli("simulate", "dce", "--width=24", "--height=24", "--slices=2",
                           "--frames=24", "-o", "ph.nii", NULL);
    g_assert_cmpint(r.status, ==, 0);
    clear(&r);
    static const char *const files[] = {"ph.nii", "ph.truth.json", "ph.rois.json", "ph.inputs.csv"};
    for (gsize i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *p = g_build_filename(tmp_dir, files[i], NULL);
        g_assert_true(g_file_test(p, G_FILE_TEST_EXISTS));
    }
    r = run_cli("run", "dce.dual_input", "ph.nii", "--roi", "ph.rois.json", "-o", "maps",
                "--no-catalogue", "--backend=cpu", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    /* twelve maps: ka kp kl tau_a tau_p rmse r2 iterations converged + three derived, each with
     * one frame per slice */
    g_assert_nonnull(strstr(r.out, "\"distribution_volume\""));
    g_assert_nonnull(strstr(r.out, "\"mtt\""));
    g_assert_nonnull(strstr(r.out, "\"frames\" : 2"));
    clear(&r);
    g_autofree char *mtt = g_build_filename(tmp_dir, "maps", "mtt.tif", NULL);
    g_assert_true(g_file_test(mtt, G_FILE_TEST_EXISTS));
}

static void test_missing_role(void)
{
    /* An ROI file with the aorta only: exit 2 and the message says what to draw. */
    g_autofree char *rois = g_build_filename(tmp_dir, "aorta-only.json", NULL);
    g_assert_true(g_file_set_contents(
        rois,
        "[{\"kind\":\"ellipse\",\"name\":\"ao\",\"role\":\"aorta\",\"points\":[[16,9],[20,"
        "13]]}]",
        -1, NULL));
    cli_result r = run_cli("run", "dce.dual_input", "ph.nii", "--roi", "aorta-only.json", "-o",
                           "maps2", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "draw the portal-vein ROI (role portal_vein)"));
    clear(&r);
    /* No ROI file at all: the aorta is named first. */
    r = run_cli("run", "dce.dual_input", "ph.nii", "-o", "maps2", "--no-catalogue", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "draw the aorta ROI (role aorta)"));
    clear(&r);
    /* Input curves from the CSV stand in for both ROIs. */
    r = run_cli("run", "dce.dual_input", "ph.nii", "--input_csv", "ph.inputs.csv", "-o", "maps3",
                "--no-catalogue", "--backend=cpu", NULL);
    g_assert_cmpint(r.status, ==, 0);
    clear(&r);
}

static void rm_tree(const char *path)
{
    GDir *dir = g_dir_open(path, 0, NULL);
    for (const char *name; dir && (name = g_dir_read_name(dir));) {
        g_autofree char *child = g_build_filename(path, name, NULL);
        if (g_file_test(child, G_FILE_TEST_IS_DIR) && !g_file_test(child, G_FILE_TEST_IS_SYMLINK))
            rm_tree(child);
        else
            g_unlink(child);
    }
    if (dir)
        g_dir_close(dir);
    g_rmdir(path);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    cli_path = g_getenv("FLUXMAP_CLI");
    if (!cli_path) {
        printf("1..0 # SKIP FLUXMAP_CLI not set\n");
        return 0;
    }
    tmp_dir = g_dir_make_tmp("fm-cli-dce-XXXXXX", NULL);
    g_setenv("FLUXMAP_DATA_DIR", tmp_dir, TRUE);
    g_test_add_func("/cli-dce/simulate-and-run", test_simulate_and_run);
    g_test_add_func("/cli-dce/missing-role", test_missing_role);
    int rc = g_test_run();
    rm_tree(tmp_dir);
    return rc;
}
