/* Shared by the test programs that make temporary folders: removing one with all it holds. */
#pragma once

/* Removes path: a file, or a folder with everything below it (a link is removed, not followed).
 * What cannot be removed is left in place. */
void fm_test_remove_tree(const char *path);
