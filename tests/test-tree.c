/* Removing a test's temporary folder and everything below it. */
#include "test-tree.h"

#include <glib.h>
#include <glib/gstdio.h>

void fm_test_remove_tree(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
        GDir *dir = g_dir_open(path, 0, NULL);
        for (const char *name; dir && (name = g_dir_read_name(dir)) != NULL;) {
            g_autofree char *child = g_build_filename(path, name, NULL);
            fm_test_remove_tree(child);
        }
        if (dir)
            g_dir_close(dir);
        g_rmdir(path);
    } else {
        g_remove(path);
    }
}
