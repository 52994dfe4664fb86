/* Shared by the accuracy tests that compare against scipy: runs a Python script under Debian's
 * /usr/bin/python3 (python3-scipy) on a JSON dump and passes when every TAP line it prints is
 * "ok"; skips, saying why, when python3, the script or scipy is missing. */
#pragma once

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

/* script_env names the environment variable that meson sets to the script's path; write_dump
 * writes the dump to the given path and returns FALSE on failure. */
static inline void fm_test_scipy_script(const char *script_env,
                                        gboolean (*write_dump)(const char *path))
{
    const char *script = g_getenv(script_env);
    if (!script || !g_file_test("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE)) {
        g_test_skip("no /usr/bin/python3 or no script path in the environment");
        return;
    }
    g_autofree char *dir = g_dir_make_tmp("fm-scipy-XXXXXX", NULL);
    g_autofree char *dump = g_build_filename(dir, "dump.json", NULL);
    g_assert_true(write_dump(dump));
    const char *argv[] = {"/usr/bin/python3", script, dump, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                               &status, &error));
    g_test_message("%s%s", out, err);
    g_unlink(dump);
    g_rmdir(dir);
    if (strstr(out, "# SKIP")) {
        g_test_skip("scipy is missing (Debian: python3-scipy)");
        return;
    }
    g_assert_true(g_spawn_check_wait_status(status, NULL)); /* the script exits 1 on "not ok" */
}
